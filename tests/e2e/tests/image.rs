//! The image and the stack file (`Dockerfile`, `deploy/`) on the real
//! engines of swarm alpha: `deploy/build-image` builds the image offline on
//! every node, the image runs unprivileged with the binary as entrypoint,
//! and `deploy/stack.yml` deployed as stack `swarm-sweep` sweeps a departed
//! release within one interval while never touching its own stack.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sweep_core::record::record_name;
use sweep_e2e::image::{build_image, built_image, image_name, version};
use sweep_e2e::{
    app, binary, create_record, create_stack_record, docker, docker_ok, endpoint, running_on,
    socket_path, workspace_root, Cleanup, Remains, Scenario, Stack, ALPHA, DOCKER, IMAGE,
};

/// The stack name docs/guide.md deploys the controller as, and the
/// `self_stack` of `deploy/registry.toml`.
const STACK: &str = "swarm-sweep";
const SERVICE: &str = "swarm-sweep_swarm-sweep";
/// The stack's attachable network, where its metrics are scraped.
const METRICS_NETWORK: &str = "swarm-sweep_metrics";
/// The stack's state volume, on the node the controller runs on.
const STATE_VOLUME: &str = "swarm-sweep_state";
/// The image's own user (`USER` in the Dockerfile).
const IMAGE_USER: &str = "65532:65532";
/// The controller's interval in the deploy test: short, so that "within
/// one interval" is a short wait.
const INTERVAL: Duration = Duration::from_secs(10);
/// What a sweep itself may take on top of the interval: removing a stack
/// waits for its task to stop.
const SWEEP_SLACK: Duration = Duration::from_secs(45);

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
    // Runs containers on every node of alpha: none may be down meanwhile.
    let _alpha = Scenario::new();
    let image = built_image();
    for node in ALPHA.nodes {
        let inspect: Value =
            serde_json::from_str(&docker_ok(node, &["image", "inspect", image])).expect("JSON");
        let config = &inspect[0]["Config"];
        assert_eq!(config["User"], IMAGE_USER, "{node}: {config:#}");
        assert_eq!(config["Entrypoint"], json!(["/swarm-sweep"]), "{node}");
        // FROM scratch: the binary's layer and the state directory's,
        // nothing else.
        assert_eq!(
            inspect[0]["RootFS"]["Layers"].as_array().map(Vec::len),
            Some(2),
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

/// The settings of one deployment of the controller.
struct Deployment<'a> {
    apps: &'a Path,
    /// `SWARM_SWEEP_CONFIG_REV`: a new app set needs a new one.
    rev: String,
    /// `SWARM_SWEEP_MIN_DEPARTED_FOR`, when set.
    min_departed_for: Option<&'a str>,
}

impl<'a> Deployment<'a> {
    fn new(s: &Scenario, apps: &'a Path) -> Deployment<'a> {
        Deployment {
            apps,
            rev: s.token.clone(),
            min_departed_for: None,
        }
    }
}

/// `docker stack deploy` of `deploy/stack.yml` as stack `swarm-sweep` on
/// alpha, as docs/guide.md says, with the settings of this scenario: its
/// controller id, its app set, a short interval, alpha-1's socket, and the
/// socket's group as the task's group so that it runs unprivileged.
fn deploy_controller(s: &Scenario, image: &str, d: &Deployment<'_>) -> u32 {
    let socket = socket_path(ALPHA.manager);
    let gid = std::fs::metadata(&socket)
        .unwrap_or_else(|e| panic!("{}: {e}", socket.display()))
        .gid();
    let mut deploy = Command::new("timeout");
    deploy
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
        .env_remove("SWARM_SWEEP_MIN_DEPARTED_FOR")
        .env("SWARM_SWEEP_IMAGE", image)
        .env("SWARM_SWEEP_CONTROLLER", &s.controller)
        .env("SWARM_SWEEP_INTERVAL", format!("{}s", INTERVAL.as_secs()))
        .env("SWARM_SWEEP_APP_SET", d.apps)
        .env("SWARM_SWEEP_CONFIG_REV", &d.rev)
        .env("SWARM_SWEEP_USER", format!("65532:{gid}"))
        .env("DOCKER_SOCKET", &socket)
        .stdin(Stdio::null());
    if let Some(window) = d.min_departed_for {
        deploy.env("SWARM_SWEEP_MIN_DEPARTED_FOR", window);
    }
    let out = deploy.output().expect("run docker stack deploy");
    assert!(
        out.status.success(),
        "docker stack deploy -c deploy/stack.yml {STACK} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    gid
}

/// One deployed controller at a time: they all are stack `swarm-sweep`.
fn one_controller() -> MutexGuard<'static, ()> {
    static CONTROLLER: Mutex<()> = Mutex::new(());
    // A test that failed while holding it leaves nothing the next needs.
    CONTROLLER.lock().unwrap_or_else(|e| e.into_inner())
}

/// The controller's stack, removed when dropped (before the releases of
/// the test, so that it deletes nothing while they are removed), and first
/// the one an interrupted run may have left.
fn controller_cleanup() -> Cleanup {
    drop({
        let mut stale = Cleanup::new(&ALPHA);
        stale.add(STACK);
        stale
    });
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(STACK);
    cleanup
}

/// GETs `path` from the deployed controller, inside its container, with
/// the binary's own client (`healthcheck --print`: a scratch image has no
/// curl, and the bed's daemons run without iptables, so no name on the
/// stack's network resolves from another container). `None` while there
/// is no controller or it does not answer.
fn scrape(path: &str) -> Option<String> {
    let container = controller_container()?;
    let url = format!("http://127.0.0.1:9090{path}");
    let out = docker(
        ALPHA.manager,
        &[
            "exec",
            &container,
            "/swarm-sweep",
            "healthcheck",
            "--url",
            &url,
            "--timeout",
            "5s",
            "--print",
        ],
    );
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The value of the sample `name` (with its labels, as exposed) in a
/// Prometheus text exposition.
fn sample(metrics: &str, name: &str) -> Option<f64> {
    metrics
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// The deployed controller's last plan, once it has one.
fn served_plan() -> Option<Value> {
    scrape("/plan").and_then(|text| serde_json::from_str(&text).ok())
}

/// The reason the plan gives `release`, and its entry.
fn planned_entry<'p>(plan: &'p Value, release: &str) -> Option<(&'p str, &'p Value)> {
    for (list, reason) in [("deletions", None), ("spared", Some("reason"))] {
        for entry in plan[list].as_array().into_iter().flatten() {
            if entry["release"] == release {
                let reason = match reason {
                    None => "delete",
                    Some(field) => entry[field].as_str().unwrap_or("?"),
                };
                return Some((reason, entry));
            }
        }
    }
    None
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
    let _one = one_controller();
    let s = Scenario::new();
    let image = built_image();
    let web = s.release("web");
    let mut cleanup = controller_cleanup();
    cleanup.add(&web);

    let stack = Stack::new(&web);
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &web)));
    s.deploy(&ALPHA, &stack);
    // The controller's own stack, stamped for an application that departed.
    create_record(&ALPHA, STACK, 1, Some(&s.stamp("gone", STACK)));
    let apps = s.app_set("apps.json", json!([app("edge", "", &[])]));

    let gid = deploy_controller(&s, image, &Deployment::new(&s, &apps));
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

    // The deletion, as Prometheus scrapes it from the stack's network.
    let deleted = "swarm_sweep_deletions_total{reason=\"departed\"}";
    wait_on_controller("/metrics counting the deletion", SWEEP_SLACK, || {
        scrape("/metrics").is_some_and(|m| sample(&m, deleted) == Some(1.0))
    });
    let metrics = scrape("/metrics").expect("/metrics");
    assert_eq!(sample(&metrics, "swarm_sweep_failures_total"), Some(0.0));
    assert!(
        sample(&metrics, "swarm_sweep_sweeps_total{outcome=\"success\"}") >= Some(1.0),
        "{metrics}"
    );
    assert!(
        sample(&metrics, "swarm_sweep_last_success_timestamp_seconds") > Some(0.0),
        "{metrics}"
    );

    // A further interval: every sweep since the start has seen the stamped
    // stack of the controller itself, and spared it.
    std::thread::sleep(INTERVAL + Duration::from_secs(2));
    let plan = served_plan().expect("/plan");
    let (reason, _) = planned_entry(&plan, STACK).expect("the own stack in /plan");
    assert_eq!(reason, "own_stack", "{plan:#}");
    let own = Remains::read(&ALPHA, STACK);
    assert_eq!(own.services, [SERVICE], "{own:#?}\n{}", controller_logs());
    assert_eq!(own.records, [record_name(STACK, 1)], "{own:#?}");
    assert_eq!(own.configs.len(), 2, "{own:#?}");
    assert_eq!(own.networks, [METRICS_NETWORK], "{own:#?}");
    assert_eq!(own.volume_nodes(), ["alpha-1"], "{own:#?}");
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

/// The state file on the controller's volume, read through a container
/// (the volume is the daemon's, on alpha-1).
fn state_file() -> Value {
    let text = docker_ok(
        ALPHA.manager,
        &[
            "run",
            "--rm",
            "--network",
            "none",
            "-v",
            &format!("{STATE_VOLUME}:/state:ro"),
            IMAGE,
            "cat",
            "/state/state.json",
        ],
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("state.json: {e}: {text}"))
}

/// When `release` was first seen departed, as `departed` (of a plan or
/// the state file) lists it.
fn departed_since(doc: &Value, release: &str) -> Option<String> {
    doc["departed"]
        .as_array()?
        .iter()
        .find(|d| d["release"] == release)
        .and_then(|d| d["since"].as_str())
        .map(str::to_owned)
}

/// Seconds since the Unix epoch of an RFC 3339 UTC time as the state
/// writes it (`2026-12-01T08:00:00Z`).
fn unix_seconds(rfc3339: &str) -> u64 {
    sweep_core::UnixTime::parse_rfc3339(rfc3339)
        .unwrap_or_else(|e| panic!("{rfc3339}: {e}"))
        .as_secs()
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_secs()
}

/// The controller's running task, by its container on alpha-1.
fn wait_for_new_container(old: &str) -> String {
    let mut new = None;
    wait_on_controller(
        "a new controller task running",
        Duration::from_secs(120),
        || {
            new = controller_container().filter(|c| c != old);
            new.is_some()
        },
    );
    new.unwrap_or_default()
}

#[test]
#[ignore = "soak: waits out a grace window and a controller restart; grace::a_release_goes_only_after_its_window_and_one_declared_again_survives keeps grace in the fast set"]
fn the_deployed_grace_period_delays_deletion_and_a_release_declared_again_survives() {
    const WINDOW: Duration = Duration::from_secs(90);
    let _one = one_controller();
    let s = Scenario::new();
    let image = built_image();
    let web = s.release("web");
    let api = s.release("api");
    let mut cleanup = controller_cleanup();
    cleanup.add(&web);
    cleanup.add(&api);
    for (release, application) in [(&web, "shop"), (&api, "orders")] {
        create_record(&ALPHA, release, 1, Some(&s.stamp(application, release)));
        s.deploy(&ALPHA, &Stack::new(release));
    }
    // Both applications have left the set.
    let apps = s.app_set("apps.json", json!([app("edge", "", &[])]));
    let mut deployment = Deployment::new(&s, &apps);
    let window = format!("{}s", WINDOW.as_secs());
    deployment.min_departed_for = Some(&window);
    deploy_controller(&s, image, &deployment);

    // The first plan spares both for their grace period.
    let mut plan = Value::Null;
    wait_on_controller(
        "a plan sparing both for the grace period",
        SWEEP_SLACK * 2,
        || {
            plan = served_plan().unwrap_or(Value::Null);
            [&web, &api]
                .iter()
                .all(|r| planned_entry(&plan, r).is_some_and(|(why, _)| why == "grace_period"))
        },
    );
    let (_, entry) = planned_entry(&plan, &web).expect("web planned");
    assert!(
        entry["time_left"]
            .as_u64()
            .is_some_and(|t| t <= WINDOW.as_secs()),
        "{entry:#}"
    );
    let web_since = departed_since(&plan, &web).expect("web in departed");
    let seen = unix_seconds(&web_since);

    // More than an interval later, after sweeps that would have deleted
    // both without a window, both are whole.
    let sweeps = |m: &str| sample(m, "swarm_sweep_sweeps_total{outcome=\"success\"}");
    let first = sweeps(&scrape("/metrics").expect("/metrics")).unwrap_or(0.0);
    wait_on_controller("two more sweeps", INTERVAL * 3, || {
        scrape("/metrics").is_some_and(|m| sweeps(&m) >= Some(first + 2.0))
    });
    assert!(
        unix_now() < seen + WINDOW.as_secs(),
        "the test ran too slow to check the delay"
    );
    for release in [&web, &api] {
        let r = Remains::read(&ALPHA, release);
        assert!(
            !r.services.is_empty() && !r.records.is_empty(),
            "{release} touched inside its window: {r:#?}\n{}",
            controller_logs()
        );
    }
    // The first-seen time is on the volume.
    assert_eq!(
        departed_since(&state_file(), &web).as_deref(),
        Some(&*web_since)
    );

    // `orders` comes back inside the window: a new app set, so a new
    // config, so the controller restarts, reading its state from the
    // volume.
    let old = controller_container().expect("the controller's container");
    let apps = s.app_set(
        "apps-2.json",
        json!([app("edge", "", &[]), app("orders", "", &[&api])]),
    );
    let mut again = Deployment::new(&s, &apps);
    again.rev = format!("{}b", s.token);
    again.min_departed_for = Some(&window);
    deploy_controller(&s, image, &again);
    wait_for_new_container(&old);
    wait_on_controller(
        "a plan from the restarted controller",
        SWEEP_SLACK * 2,
        || {
            plan = served_plan().unwrap_or(Value::Null);
            planned_entry(&plan, &api)
                .is_some_and(|(why, _)| why == "current_application" || why == "declared")
        },
    );
    // Its clock kept running across the restart; api's was cleared.
    assert_eq!(
        departed_since(&plan, &web).as_deref(),
        Some(&*web_since),
        "{plan:#}"
    );
    assert_eq!(departed_since(&plan, &api), None, "{plan:#}");

    wait_on_controller(
        &format!("{web} gone once its window is over"),
        WINDOW + SWEEP_SLACK * 2,
        || Remains::read(&ALPHA, &web).is_gone(),
    );
    assert!(
        unix_now() >= seen + WINDOW.as_secs(),
        "{web} deleted before its window was over"
    );
    // Two more intervals: the release declared again stays whole, and the
    // state holds neither (deleted; declared again).
    std::thread::sleep(INTERVAL * 2);
    let r = Remains::read(&ALPHA, &api);
    assert!(
        !r.services.is_empty() && r.records == [record_name(&api, 1)] && r.unanswered.is_empty(),
        "{api} declared again was touched: {r:#?}\n{}",
        controller_logs()
    );
    let state = state_file();
    assert_eq!(departed_since(&state, &web), None, "{state:#}");
    assert_eq!(departed_since(&state, &api), None, "{state:#}");
}

#[test]
#[ignore = "soak: minutes of waiting on Swarm to restart the controller; the fast set deploys the image with the_stack_sweeps_a_departed_release_within_an_interval_and_never_itself"]
fn a_controller_killed_mid_sweep_is_restarted_by_swarm_and_converges_with_nothing_lost() {
    let _one = one_controller();
    let s = Scenario::new();
    let image = built_image();
    let slow = s.release("slow");
    let kept = s.release("kept");
    let mut cleanup = controller_cleanup();
    cleanup.add(&slow);
    cleanup.add(&kept);
    // A departed release whose task ignores SIGTERM for 25 s: its network
    // stays in use that long after its service is removed, so the sweep is
    // caught between its first steps and its records. Not attachable: the
    // controller reads the manager's containers only, so an attachable
    // network would stay (maybe in use on a node not read).
    let stubborn = Stack::new(&slow)
        .with_network_secret_config()
        .not_attachable()
        .stubborn(25);
    create_stack_record(&ALPHA, &stubborn, 1, Some(&s.stamp("shop", &slow)));
    s.deploy(&ALPHA, &stubborn);
    let kept_stack = Stack::new(&kept).with_network_secret_config();
    create_stack_record(&ALPHA, &kept_stack, 1, Some(&s.stamp("edge", &kept)));
    s.deploy(&ALPHA, &kept_stack);
    wait_on_controller("the stubborn task running", Duration::from_secs(90), || {
        !running_on(&ALPHA, &stubborn.service()).is_empty()
    });
    let apps = s.app_set("apps.json", json!([app("edge", "", &[&kept])]));
    deploy_controller(&s, image, &Deployment::new(&s, &apps));

    // Mid-sweep: the service is gone, the network still in use, the
    // records still there.
    wait_on_controller(
        &format!("{slow}'s service removed"),
        INTERVAL + SWEEP_SLACK,
        || {
            let r = Remains::read(&ALPHA, &slow);
            r.services.is_empty() && !r.records.is_empty()
        },
    );
    let killed = controller_container().expect("the controller's container");
    docker_ok(ALPHA.manager, &["kill", "--signal", "KILL", &killed]);
    let r = Remains::read(&ALPHA, &slow);
    assert!(
        !r.records.is_empty() && !r.networks.is_empty(),
        "the kill came after the sweep finished: {r:#?}"
    );

    // Swarm starts another task; its sweeps finish the job.
    wait_for_new_container(&killed);
    wait_on_controller(
        &format!("{slow} gone after the restart"),
        INTERVAL + SWEEP_SLACK * 2,
        || Remains::read(&ALPHA, &slow).is_gone(),
    );
    // Nothing lost: the declared release and the controller's own stack
    // are whole.
    let r = Remains::read(&ALPHA, &kept);
    assert!(
        r.services == [format!("{kept}_app")]
            && r.networks.len() == 1
            && r.secrets.len() == 1
            && r.configs.len() == 1
            && r.records == [record_name(&kept, 1)],
        "{kept} was touched: {r:#?}\n{}",
        controller_logs()
    );
    let own = Remains::read(&ALPHA, STACK);
    assert_eq!(own.services, [SERVICE], "{own:#?}");
    assert_eq!(own.configs.len(), 2, "{own:#?}");
    let metrics = scrape("/metrics").expect("/metrics of the new task");
    assert_eq!(
        sample(&metrics, "swarm_sweep_failures_total"),
        Some(0.0),
        "{metrics}"
    );
}
