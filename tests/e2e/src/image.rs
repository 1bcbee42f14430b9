//! The swarm-sweep image on the bed: the static binary, built once per
//! test process, and the image `deploy/build-image` makes of it on every
//! node of alpha.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::{endpoint, without_test_env, workspace_root, ALPHA, DOCKER};

/// The target of the static binary.
pub const TARGET: &str = "x86_64-unknown-linux-musl";

/// This build's version, the image's tag.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// `swarm-sweep:<version>`, the tag `deploy/build-image` gives.
pub fn image_name() -> String {
    format!("swarm-sweep:{}", version())
}

/// The static binary, built once per test process in this build's target
/// directory with the tests' own profile: under `cargo test` that is the
/// dev profile, whose build reuses the proc-macros and build scripts the
/// tests were built with and skips optimisation, so a cold build of it
/// takes a fraction of a release build's time. What the image tests prove
/// (the image `deploy/build-image` makes of a static binary, and the
/// binary's behaviour in it) does not depend on the optimisation level.
pub fn static_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test executable's path");
        // .../target/<profile>/deps/<test> -> .../target/<profile>
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("the test executable lives in <target>/<profile>/deps");
        let target_dir = profile_dir
            .parent()
            .expect("the test executable lives in <target>/<profile>/deps");
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .current_dir(workspace_root())
            .args(["build", "--quiet", "--target", TARGET])
            .args(["-p", "swarm-sweep", "--target-dir"])
            .arg(target_dir);
        if release {
            build.arg("--release");
        }
        if std::env::var_os("CC_x86_64_unknown_linux_musl").is_none() {
            build.env("CC_x86_64_unknown_linux_musl", "musl-gcc");
        }
        without_test_env(&mut build);
        let out = build.output().expect("run cargo build --target");
        assert!(
            out.status.success(),
            "cargo build --target {TARGET} -p swarm-sweep failed (it needs musl-tools and `rustup target add {TARGET}`: .ci/install-deps):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let profile = if release { "release" } else { "debug" };
        let binary = target_dir.join(TARGET).join(profile).join("swarm-sweep");
        assert!(binary.is_file(), "{} missing after the build", binary.display());
        binary
    })
}

/// Runs `deploy/build-image` with `args` against the daemon `docker_host`.
pub fn build_image(docker_host: &str, docker: &str, args: &[&str]) -> Output {
    Command::new("timeout")
        .arg("300")
        .arg("bash")
        .arg(workspace_root().join("deploy/build-image"))
        .args(args)
        .env("DOCKER_HOST", docker_host)
        .env("DOCKER", docker)
        .env_remove("DOCKER_CONTEXT")
        .env_remove("SWARM_SWEEP_BINARY")
        .stdin(Stdio::null())
        .output()
        .expect("run deploy/build-image")
}

/// The image, built by `deploy/build-image` on every node of alpha (once
/// per test process): a task may be placed on any of them.
pub fn built_image() -> &'static str {
    static BUILT: OnceLock<String> = OnceLock::new();
    BUILT.get_or_init(|| {
        let binary = static_binary().to_string_lossy().into_owned();
        for node in ALPHA.nodes {
            let out = build_image(&endpoint(node), DOCKER, &["--binary", &binary]);
            assert!(
                out.status.success(),
                "deploy/build-image on {node} failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                String::from_utf8_lossy(&out.stdout).trim(),
                image_name(),
                "deploy/build-image on {node} printed another name"
            );
        }
        image_name()
    })
}
