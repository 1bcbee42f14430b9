//! Input that must not hurt, against the real swarms: an app set naming a
//! swarm the registry does not know, a release name made to fake lines of
//! the plan, record data that is not the engine's, and the docker CLI's
//! contexts choosing the swarm.

use std::path::Path;
use std::process::Command;

use serde_json::json;
use sweep_core::record::{decode_payload, PayloadLimits};
use sweep_e2e::{
    app, assert_gone, assert_intact, binary, create_record, create_record_data,
    create_stack_record, docker, docker_ok, endpoint, engine_record, list, one, wait_deployed,
    Cleanup, Scenario, Stack, SwarmEntry, ALPHA, BETA, QUICK,
};
use sweep_testkit::engine_record::{gzip, EngineRecord};

#[test]
fn unknown_destination_spares_the_live_release_holds_and_exits_1() {
    let s = Scenario::new();
    let web = s.release("web");
    let kept = s.release("kept");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    cleanup.add(&kept);

    let stack = Stack::new(&web).global().with_volume();
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &web)));
    create_record(&ALPHA, &kept, 1, Some(&s.stamp("keep", &kept)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, ALPHA.nodes);

    // `alpah`: a typo. Nothing proves `shop` left alpha.
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set(
        "apps.json",
        json!([
            app("shop", "alpah", &[&web]),
            app("keep", "alpha", &[&kept])
        ]),
    );
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(1);
    let out = run.json();
    let plan = &out["plan"];
    assert!(list(plan, "deletions").is_empty(), "{plan:#}");
    let spared = one(plan, "spared", &web);
    assert_eq!(spared["reason"], "current_application");
    assert!(
        spared["detail"].as_str().unwrap_or("").contains("alpah"),
        "{spared:#}"
    );
    let hold = list(plan, "holds")
        .iter()
        .find(|h| h["reason"] == "unknown_destination")
        .unwrap_or_else(|| panic!("no unknown_destination hold: {plan:#}"));
    assert_eq!(hold["scope"], "alpah");
    assert_eq!(hold["applications"], json!(["shop"]));
    assert!(list(&out["report"], "releases").is_empty());

    assert_intact(&ALPHA, &web, ALPHA.nodes);
}

#[test]
fn a_release_label_made_to_fake_plan_lines_is_escaped_in_text_and_exact_in_json() {
    let s = Scenario::new();
    let hostile = format!("g{}\nto delete (0):\n  nothing\u{1b}[1A\u{1b}[2K", s.token);
    let config_name = format!("hostile-{}.v1", s.token);
    let labels = [
        "com.swarmcli.type=release".to_owned(),
        format!("com.swarmcli.release={hostile}"),
        "com.swarmcli.revision=1".to_owned(),
        format!("com.swarmcli.owner={}", s.stamp("gone", &hostile)),
    ];
    let mut args: Vec<String> = vec!["config".into(), "create".into()];
    for label in labels {
        args.push("--label".into());
        args.push(label);
    }
    args.push(config_name.clone());
    args.push(s.write("record.json", "{}").to_string_lossy().into_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    docker_ok(BETA.manager, &args);
    let _remove = RemoveConfig(config_name);

    let config = s.registry("registry.toml", &[SwarmEntry::of(&BETA)]);
    let apps = s.app_set("apps.json", json!([app("live", "beta", &[])]));
    let text = s
        .sweep("plan", Some(&config), &apps)
        .args(&["--format", "text"])
        .run();
    text.expect_code(0);
    assert!(!text.stdout.contains('\u{1b}'), "{:?}", text.stdout);
    let headers = text
        .stdout
        .lines()
        .filter(|l| l.starts_with("to delete") || l.trim() == "nothing")
        .count();
    assert_eq!(headers, 0, "a name added a line:\n{}", text.stdout);
    assert!(
        text.stdout
            .contains("\\u{a}to delete (0):\\u{a}  nothing\\u{1b}[1A"),
        "{}",
        text.stdout
    );

    let json = s.sweep("plan", Some(&config), &apps).run();
    json.expect_code(0);
    let plan = json.json();
    let deletion = one(&plan, "deletions", &hostile);
    assert_eq!(deletion["release"], hostile.as_str());
}

/// The departed-release rule reads a record's labels only: a release
/// whose record data is not gzip (`{}`, bytes of no format), or gzip of
/// text that is not YAML, goes as one whose record is the engine's does.
#[test]
fn a_departed_release_goes_by_its_record_labels_whatever_its_record_data() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&BETA);
    let cases: [(&str, DataOf); 4] = [
        ("json", |_| b"{}".to_vec()),
        ("noise", |_| noise()),
        ("notyaml", |_| gzip(b"release: [unclosed\n\t- : :\n")),
        ("valid", EngineRecord::payload),
    ];
    let mut stacks = Vec::new();
    for (base, data) in cases {
        let release = s.release(base);
        cleanup.add(&release);
        let stack = Stack::new(&release).on("beta-2");
        let record = engine_record(&release, 1, Some(&s.stamp("shop", &release)))
            .with_manifest(stack.manifest());
        let data = data(&record);
        // The data is what the case says, as the core reads it.
        let read = decode_payload(&data, PayloadLimits::DEFAULT);
        assert_eq!(read.is_ok(), base == "valid", "{base}: {read:?}");
        create_record_data(&BETA, &record, &data);
        s.deploy(&BETA, &stack);
        stacks.push(stack);
    }
    for stack in &stacks {
        wait_deployed(&BETA, stack, &["beta-2"]);
    }

    let config = s.registry("registry.toml", &[SwarmEntry::of(&BETA)]);
    let apps = s.app_set("apps.json", json!([app("live", "beta", &[])]));
    let run = s.sweep("apply", Some(&config), &apps).args(QUICK).run();
    run.expect_code(0);
    let plan = &run.json()["plan"];
    for stack in &stacks {
        one(plan, "deletions", &stack.release);
        assert_gone(&BETA, &stack.release);
    }
}

/// The data a case stores for a record.
type DataOf = fn(&EngineRecord) -> Vec<u8>;

/// Bytes of no format (not gzip, not text), the same every run.
fn noise() -> Vec<u8> {
    (0u32..512)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// Removes a config by name from beta's manager when the test ends.
struct RemoveConfig(String);

impl Drop for RemoveConfig {
    fn drop(&mut self) {
        let _ = docker(BETA.manager, &["config", "rm", &self.0]);
    }
}

fn cluster_id(manager: &str) -> String {
    docker_ok(manager, &["info", "--format", "{{.Swarm.Cluster.ID}}"])
        .trim()
        .to_owned()
}

/// Writes a docker CLI context named `name` whose endpoint is `host`, as
/// `docker context create` lays it out.
fn write_context(config_dir: &Path, name: &str, host: &str) {
    let out = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(name.as_bytes())?;
            child.wait_with_output()
        })
        .expect("sha256sum runs");
    let digest = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("a digest")
        .to_owned();
    let dir = config_dir.join("contexts/meta").join(digest);
    std::fs::create_dir_all(&dir).unwrap();
    let meta = json!({
        "Name": name,
        "Metadata": {},
        "Endpoints": {"docker": {"Host": host, "SkipTLSVerify": false}}
    });
    std::fs::write(dir.join("meta.json"), meta.to_string()).unwrap();
}

#[test]
fn docker_contexts_choose_the_swarm_as_the_docker_cli_does() {
    let s = Scenario::new();
    let config_dir = s.dir().join("docker-config");
    write_context(&config_dir, "bed-beta", &endpoint("beta-1"));
    write_context(&config_dir, "bed-alpha", &endpoint("alpha-1"));
    std::fs::write(
        config_dir.join("config.json"),
        r#"{"currentContext": "bed-beta"}"#,
    )
    .unwrap();
    let apps = s.app_set("apps.json", json!([app("live", "", &[])]));
    let (alpha, beta) = (cluster_id(ALPHA.manager), cluster_id(BETA.manager));
    let config_dir = config_dir.to_string_lossy().into_owned();

    let seen = |extra: &[&str], env: &[(&str, &str)]| -> String {
        let mut sweep = s
            .sweep("snapshot", None, &apps)
            .args(extra)
            .env("DOCKER_CONFIG", &config_dir);
        for (k, v) in env {
            sweep = sweep.env(k, v);
        }
        let run = sweep.run();
        run.expect_code(0);
        run.json()["swarms"][0]["cluster_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    // The docker config's current context.
    assert_eq!(seen(&[], &[]), beta);
    // DOCKER_CONTEXT over the current context.
    assert_eq!(seen(&[], &[("DOCKER_CONTEXT", "bed-alpha")]), alpha);
    // --context over both.
    assert_eq!(
        seen(
            &["--context", "bed-beta"],
            &[("DOCKER_CONTEXT", "bed-alpha")]
        ),
        beta
    );
    // DOCKER_HOST over DOCKER_CONTEXT and the current context.
    assert_eq!(
        seen(
            &[],
            &[
                ("DOCKER_HOST", &endpoint("alpha-1")),
                ("DOCKER_CONTEXT", "bed-beta")
            ]
        ),
        alpha
    );
}

#[test]
fn apply_whose_stdout_fails_after_deleting_puts_a_short_report_on_stderr() {
    let s = Scenario::new();
    let gone = s.release("gone");
    let mut cleanup = Cleanup::new(&BETA);
    cleanup.add(&gone);
    let stack = Stack::new(&gone).on("beta-1");
    create_stack_record(&BETA, &stack, 1, Some(&s.stamp("shop", &gone)));
    s.deploy(&BETA, &stack);
    wait_deployed(&BETA, &stack, &["beta-1"]);

    let config = s.registry("registry.toml", &[SwarmEntry::of(&BETA)]);
    let apps = s.app_set("apps.json", json!([app("live", "beta", &[])]));
    // A full disk: the report cannot go to stdout once the release is gone.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = Command::new(binary())
        .arg("apply")
        .arg("--config")
        .arg(&config)
        .arg("--app-set")
        .arg(&apps)
        .args(["--controller", &s.controller])
        .env_remove("DOCKER_HOST")
        .env_remove("DOCKER_CONTEXT")
        .env_remove("SWARM_SWEEP_LOG")
        .stdin(std::process::Stdio::null())
        .stdout(full)
        .output()
        .expect("swarm-sweep runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(&format!("beta/{gone}: deleted")),
        "the short report names what went: {stderr}"
    );
    assert!(stderr.contains("1 planned: 1 deleted"), "{stderr}");
    assert_gone(&BETA, &gone);
}
