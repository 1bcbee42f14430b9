//! The image and the stack file (`Dockerfile`, `deploy/`) on the real
//! engines of swarm alpha: `deploy/build-image` builds the image offline on
//! every node, the image runs unprivileged with the binary as entrypoint,
//! and `deploy/stack.yml` deployed as stack `swarm-sweep` sweeps a departed
//! release within one interval while never touching its own stack.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sweep_e2e::{
    app, bed_up, binary, create_record, docker, docker_ok, endpoint, running_on, socket_path,
    without_test_env, workspace_root, Cleanup, Remains, Scenario, Stack, ALPHA, DOCKER,
};

const TARGET: &str = "x86_64-unknown-linux-musl";
/// The stack name the README deploys the controller as, and the
/// `self_stack` of `deploy/registry.toml`.
const STACK: &str = "swarm-sweep";
const SERVICE: &str = "swarm-sweep_swarm-sweep";
/// The image's own user (`USER` in the Dockerfile).
const IMAGE_USER: &str = "65532:65532";
/// The controller's interval in the deploy test: short, so that "within
/// one interval" is a short wait.
const INTERVAL: Duration = Duration::from_secs(10);
/// What a sweep itself may take on top of the interval: removing a stack
/// waits for its task to stop.
const SWEEP_SLACK: Duration = Duration::from_secs(45);

fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// `swarm-sweep:<version>`, the tag `deploy/build-image` gives.
fn image_name() -> String {
    format!("swarm-sweep:{}", version())
}

/// The static release binary, built once per test process in this build's
/// target directory (a release build takes minutes; later runs reuse it).
fn static_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test executable's path");
        // .../target/<profile>/deps/<test> -> .../target
        let target_dir = exe
            .parent()
            .and_then(Path::parent)
            .and_then(Path::parent)
            .expect("the test executable lives in <target>/<profile>/deps");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .current_dir(workspace_root())
            .args(["build", "--quiet", "--release", "--target", TARGET])
            .args(["-p", "swarm-sweep", "--target-dir"])
            .arg(target_dir);
        if std::env::var_os("CC_x86_64_unknown_linux_musl").is_none() {
            build.env("CC_x86_64_unknown_linux_musl", "musl-gcc");
        }
        without_test_env(&mut build);
        let out = build.output().expect("run cargo build --release --target");
        assert!(
            out.status.success(),
            "cargo build --release --target {TARGET} -p swarm-sweep failed (it needs musl-tools and `rustup target add {TARGET}`: .ci/install-deps):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let binary = target_dir.join(TARGET).join("release").join("swarm-sweep");
        assert!(binary.is_file(), "{} missing after the build", binary.display());
        binary
    })
}

/// Runs `deploy/build-image` with `args` against the daemon `docker_host`.
fn build_image(docker_host: &str, docker: &str, args: &[&str]) -> Output {
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
fn built_image() -> &'static str {
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

#[test]
fn the_stack_file_deploys_the_image_of_this_version() {
    let stack = std::fs::read_to_string(workspace_root().join("deploy/stack.yml"))
        .expect("read deploy/stack.yml");
    let wanted = format!("${{SWARM_SWEEP_IMAGE:-{}}}", image_name());
    assert!(
        stack.contains(&wanted),
        "deploy/stack.yml does not default to the image {} ({wanted})",
        image_name()
    );
}

#[test]
fn build_image_refuses_a_dynamically_linked_binary_before_calling_docker() {
    // The test build's binary links against glibc's loader; `false` as the
    // docker CLI fails the test if the script got as far as calling it.
    let binary = binary().to_string_lossy().into_owned();
    let out = build_image("unix:///nonexistent.sock", "false", &["--binary", &binary]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("dynamically linked"), "{stderr}");
}

#[test]
fn the_image_builds_offline_on_every_node_and_runs_unprivileged() {
    bed_up();
    let image = built_image();
    for node in ALPHA.nodes {
        let inspect: Value =
            serde_json::from_str(&docker_ok(node, &["image", "inspect", image])).expect("JSON");
        let config = &inspect[0]["Config"];
        assert_eq!(config["User"], IMAGE_USER, "{node}: {config:#}");
        assert_eq!(config["Entrypoint"], json!(["/swarm-sweep"]), "{node}");
        // FROM scratch: the binary's layer and nothing else.
        assert_eq!(
            inspect[0]["RootFS"]["Layers"].as_array().map(Vec::len),
            Some(1),
            "{node}: {:#}",
            inspect[0]["RootFS"]
        );
        let run = |args: &[&str]| {
            let mut all = vec!["run", "--rm", "--network", "none", image];
            all.extend_from_slice(args);
            docker(node, &all)
        };
        let out = run(&["--version"]);
        assert!(out.status.success(), "{node}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            format!("swarm-sweep {}", version())
        );
        // The healthcheck is the binary itself; nothing listens here.
        let out = run(&[
            "healthcheck",
            "--url",
            "http://127.0.0.1:9090/healthz",
            "--timeout",
            "2s",
        ]);
        assert_eq!(out.status.code(), Some(1), "{node}: {out:?}");
    }
}

/// `docker stack deploy` of `deploy/stack.yml` as stack `swarm-sweep` on
/// alpha, as the README says, with the settings of this scenario: its
/// controller id, its app set, a short interval, alpha-1's socket, and the
/// socket's group as the task's group so that it runs unprivileged.
fn deploy_controller(s: &Scenario, image: &str, apps: &Path) -> u32 {
    let socket = socket_path(ALPHA.manager);
    let gid = std::fs::metadata(&socket)
        .unwrap_or_else(|e| panic!("{}: {e}", socket.display()))
        .gid();
    let out = Command::new("timeout")
        .arg("120")
        .arg(DOCKER)
        .arg("-H")
        .arg(endpoint(ALPHA.manager))
        .args(["stack", "deploy", "--resolve-image", "never", "-c"])
        .arg(workspace_root().join("deploy/stack.yml"))
        .arg(STACK)
        .env_remove("DOCKER_HOST")
        .env_remove("DOCKER_CONTEXT")
        .env_remove("SWARM_SWEEP_REGISTRY")
        .env("SWARM_SWEEP_IMAGE", image)
        .env("SWARM_SWEEP_CONTROLLER", &s.controller)
        .env("SWARM_SWEEP_INTERVAL", format!("{}s", INTERVAL.as_secs()))
        .env("SWARM_SWEEP_APP_SET", apps)
        .env("SWARM_SWEEP_CONFIG_REV", &s.token)
        .env("SWARM_SWEEP_USER", format!("65532:{gid}"))
        .env("DOCKER_SOCKET", &socket)
        .stdin(Stdio::null())
        .output()
        .expect("run docker stack deploy");
    assert!(
        out.status.success(),
        "docker stack deploy -c deploy/stack.yml {STACK} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    gid
}

/// What the controller has logged, for a failure message.
fn controller_logs() -> String {
    let out = docker(
        ALPHA.manager,
        &["service", "logs", "--raw", "--tail", "60", SERVICE],
    );
    let tasks = docker(
        ALPHA.manager,
        &[
            "service",
            "ps",
            "--no-trunc",
            "--format",
            "{{.Name}} {{.CurrentState}} {{.Error}}",
            SERVICE,
        ],
    );
    format!(
        "tasks:\n{}\nlogs:\n{}{}",
        String::from_utf8_lossy(&tasks.stdout),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Polls `ok` until it holds; fails the test with the controller's logs
/// after `limit`.
fn wait_on_controller(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for: {what}\n{}",
            controller_logs()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The controller's container on alpha-1, when there is one.
fn controller_container() -> Option<String> {
    let out = docker(
        ALPHA.manager,
        &[
            "ps",
            "-q",
            "--filter",
            &format!("label=com.docker.swarm.service.name={SERVICE}"),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next().map(str::to_owned)
}

#[test]
fn the_stack_sweeps_a_departed_release_within_an_interval_and_never_itself() {
    let s = Scenario::new();
    let image = built_image();
    // A controller left behind by an interrupted run goes first.
    drop({
        let mut stale = Cleanup::new(&ALPHA);
        stale.add(STACK);
        stale
    });
    let web = s.release("web");
    // The controller is listed first, so it is removed before the rest.
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(STACK);
    cleanup.add(&web);

    let stack = Stack::new(&web);
    create_record(&ALPHA, &web, 1, Some(&s.stamp("shop", &web)));
    s.deploy(&ALPHA, &stack);
    // The controller's own stack, stamped for an application that departed.
    create_record(&ALPHA, STACK, 1, Some(&s.stamp("gone", STACK)));
    let apps = s.app_set("apps.json", json!([app("edge", "", &[])]));

    let gid = deploy_controller(&s, image, &apps);
    wait_on_controller(
        "the controller running on alpha-1",
        Duration::from_secs(90),
        || running_on(&ALPHA, SERVICE).contains("alpha-1"),
    );
    wait_on_controller(
        &format!("{web} gone within one interval"),
        INTERVAL + SWEEP_SLACK,
        || Remains::read(&ALPHA, &web).is_gone(),
    );

    // A further interval: every sweep since the start has seen the stamped
    // stack of the controller itself, and spared it.
    std::thread::sleep(INTERVAL + Duration::from_secs(2));
    let own = Remains::read(&ALPHA, STACK);
    assert_eq!(own.services, [SERVICE], "{own:#?}\n{}", controller_logs());
    assert_eq!(own.records, [format!("{STACK}.v1")], "{own:#?}");
    assert_eq!(own.configs.len(), 2, "{own:#?}");
    // One task: it never crashed and restarted.
    let tasks = docker_ok(ALPHA.manager, &["service", "ps", "-q", SERVICE]);
    assert_eq!(tasks.lines().count(), 1, "{}", controller_logs());

    // Unprivileged, with the socket's group; Docker's own healthcheck, the
    // binary probing its /healthz, reports it healthy.
    let container = controller_container().expect("the controller's container");
    let user = docker_ok(
        ALPHA.manager,
        &["inspect", "--format", "{{.Config.User}}", &container],
    );
    assert_eq!(user, format!("65532:{gid}"));
    wait_on_controller("the controller healthy", Duration::from_secs(120), || {
        let out = docker(
            ALPHA.manager,
            &[
                "inspect",
                "--format",
                "{{.State.Health.Status}}",
                &container,
            ],
        );
        String::from_utf8_lossy(&out.stdout).trim() == "healthy"
    });
}
