//! Node reach through the swarm itself (`node_reach = "job"`) on the real
//! engines of swarm alpha: with only the manager's socket in the registry,
//! a volume job lists and removes volumes on every node; a node that is
//! down is named and keeps the release's records until it returns; a job
//! a killed run left behind is removed by the next run; a node's backend
//! works in a process that never listed the nodes (a saved plan carried
//! out on its own).

use std::path::PathBuf;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use serde_json::{json, Value};
use sweep_docker::FileRegistry;
use sweep_e2e::image::built_image;
use sweep_e2e::{
    app, assert_gone, create_stack_record, docker, docker_ok, endpoint, lines, one, wait_deployed,
    wait_node_status, Cleanup, Remains, Scenario, Stack, StoppedNode, ALPHA, IMAGE, QUICK,
    STACK_LABEL,
};
use sweep_swarms::{Node, Registry, Target};

const JOB_LABEL: &str = "swarm-sweep.job";

/// The tests here run side by side, each telling its own jobs by an image
/// tag of its own; the one whose run removes a job another run left
/// behind runs alone, so that no other test's run removes it first.
static JOBS: RwLock<()> = RwLock::new(());

/// A test's hold on this file's tests: shared, or alone.
enum Hold {
    Shared {
        _guard: RwLockReadGuard<'static, ()>,
    },
    Alone {
        _guard: RwLockWriteGuard<'static, ()>,
    },
}

fn shared() -> Hold {
    Hold::Shared {
        _guard: JOBS.read().unwrap_or_else(|e| e.into_inner()),
    }
}

fn alone() -> Hold {
    Hold::Alone {
        _guard: JOBS.write().unwrap_or_else(|e| e.into_inner()),
    }
}

/// The image built on the bed under a tag of this test's own, on every
/// node of alpha: the jobs of this test's runs are the ones that name it.
/// The tag goes when the test ends (the image stays, under its own name).
struct OwnImage(String);

impl OwnImage {
    fn tag(token: &str) -> OwnImage {
        let tagged = format!("{}-{token}", built_image());
        for node in ALPHA.nodes {
            docker_ok(node, &["tag", built_image(), &tagged]);
        }
        OwnImage(tagged)
    }

    /// This test's volume jobs on alpha, by service name.
    fn jobs_left(&self) -> Vec<String> {
        jobs_of_image(&self.0)
    }
}

impl Drop for OwnImage {
    fn drop(&mut self) {
        for node in ALPHA.nodes {
            let _ = docker(node, &["rmi", &self.0]);
        }
    }
}

/// A registry naming alpha by its manager alone, its nodes reached by
/// volume jobs of the image built on the bed. On the bed every node's
/// daemon listens on its own socket of the host: the job's mount source is
/// a template naming each task's node.
fn job_registry(s: &Scenario, image: &str) -> PathBuf {
    let socket = "/run/swarm-sweep-bed/{{.Node.Hostname}}/docker.sock";
    s.write(
        "registry.toml",
        &format!(
            "timeout = \"20s\"\n\n[[swarm]]\nname = \"alpha\"\nmanager = \"{}\"\nnode_reach = \"job\"\nagent_image = \"{image}\"\nagent_socket = \"{socket}\"\njob_timeout = \"90s\"\n",
            endpoint(ALPHA.manager)
        ),
    )
}

/// The volume jobs on alpha that run `image`, by service name.
fn jobs_of_image(image: &str) -> Vec<String> {
    lines(&docker_ok(
        ALPHA.manager,
        &[
            "service",
            "ls",
            "--filter",
            &format!("label={JOB_LABEL}"),
            "--format",
            "{{.Name}} {{.Image}}",
        ],
    ))
    .into_iter()
    .filter_map(|line| {
        let (name, runs) = line.split_once(' ')?;
        // A spec may carry the image's digest after its tag.
        let runs = runs.split('@').next().unwrap_or(runs);
        (runs == image).then(|| name.to_owned())
    })
    .collect()
}

/// The node names a snapshot's swarm lists as reached.
fn reached(snapshot: &Value) -> Vec<String> {
    let mut names: Vec<String> = snapshot["swarms"][0]["nodes"]
        .as_array()
        .expect("the swarm's reached nodes")
        .iter()
        .map(|n| n["hostname"].as_str().unwrap_or_default().to_owned())
        .collect();
    names.sort();
    names
}

/// One test's setting: its scenario, what to clean up, its image tag, a
/// registry whose nodes are reached by jobs of it, and an app set that
/// declares nothing of it. Dropped in this order: the cleanup runs before
/// the hold is let go.
struct JobScene {
    s: Scenario,
    cleanup: Cleanup,
    image: OwnImage,
    config: PathBuf,
    apps: PathBuf,
    _hold: Hold,
}

impl JobScene {
    fn jobs_left(&self) -> Vec<String> {
        self.image.jobs_left()
    }
}

fn scene() -> JobScene {
    scene_of(shared(), Scenario::new)
}

/// A scene held by `hold`, whose scenario comes from `make`, taken after
/// it.
fn scene_of(hold: Hold, make: fn() -> Scenario) -> JobScene {
    let s = make();
    let image = OwnImage::tag(&s.token);
    let config = job_registry(&s, &image.0);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    JobScene {
        s,
        cleanup: Cleanup::new(&ALPHA),
        image,
        config,
        apps,
        _hold: hold,
    }
}

/// A departed release with a task and a volume on every node of alpha.
fn departed_everywhere(s: &Scenario, cleanup: &mut Cleanup) -> String {
    let web = s.release("web");
    cleanup.add(&web);
    let stack = Stack::new(&web).global().with_volume();
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &web)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, ALPHA.nodes);
    web
}

#[test]
fn the_manager_socket_and_a_job_purge_a_release_s_volumes_on_every_node() {
    let mut t = scene();
    let web = departed_everywhere(&t.s, &mut t.cleanup);

    // The listing job reaches every node and finds the volume on each.
    let snapshot = t.s.sweep("snapshot", Some(&t.config), &t.apps).run();
    snapshot.expect_code(0);
    let snapshot = snapshot.json();
    assert_eq!(reached(&snapshot), ["alpha-1", "alpha-2", "alpha-3"]);
    let release = snapshot["swarms"][0]["releases"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == web.as_str()))
        .expect("the release in the snapshot");
    let volumes = release["objects"]["volumes"]
        .as_array()
        .expect("volumes by node");
    assert_eq!(volumes.len(), 3, "{release:#}");
    let data = format!("{web}_data");
    assert!(
        volumes.iter().all(|v| v["volumes"] == json!([data])),
        "{release:#}"
    );
    assert!(t.jobs_left().is_empty(), "{:?}", t.jobs_left());

    let run = t.s.purge(&t.config, &t.apps);
    run.expect_code(0);
    let out = run.json();
    assert_eq!(one(&out["plan"], "deletions", &web)["volumes"], "complete");
    assert_eq!(one(&out["report"], "releases", &web)["outcome"], "deleted");
    // Every node's own daemon holds nothing of it any more.
    assert_gone(&ALPHA, &web);
    assert!(t.jobs_left().is_empty(), "{:?}", t.jobs_left());
}

#[test]
#[ignore = "soak: stops a node of alpha, so every other scenario waits for it; job reach stays in the fast set with the_manager_socket_and_a_job_purge_a_release_s_volumes_on_every_node"]
fn with_a_node_down_the_job_sweep_is_partial_keeps_the_records_and_converges_after() {
    // alpha-3 goes down: no other scenario may run on alpha meanwhile.
    let mut t = scene_of(shared(), Scenario::alone_on_alpha);
    let web = departed_everywhere(&t.s, &mut t.cleanup);

    let down = StoppedNode::stop("alpha-3");
    wait_node_status(&ALPHA, "alpha-3", "Down", Duration::from_secs(90));
    let run = t.s.purge(&t.config, &t.apps);
    run.expect_code(1);
    let out = run.json();
    let uncovered = &out["plan"]["uncovered"][0];
    assert_eq!(uncovered["unreached"], json!(["alpha-3"]), "{uncovered:#}");
    assert_eq!(
        one(&out["report"], "releases", &web)["outcome"],
        "pending_coverage"
    );
    let left = Remains::read(&ALPHA, &web);
    assert!(!left.records.is_empty(), "{left:#?}");

    down.start();
    wait_node_status(&ALPHA, "alpha-3", "Ready", Duration::from_secs(90));
    let run = t.s.purge(&t.config, &t.apps);
    run.expect_code(0);
    assert_gone(&ALPHA, &web);
}

#[test]
fn a_job_left_behind_by_a_killed_run_is_removed_by_the_next() {
    let t = scene_of(alone(), Scenario::new);
    let left = format!("swarm-sweep-job-left-{}", t.s.token);
    // A job as a killed run leaves it: labelled, and started long ago.
    docker_ok(
        ALPHA.manager,
        &[
            "service",
            "create",
            "--detach",
            "--quiet",
            "--name",
            &left,
            "--label",
            &format!("{JOB_LABEL}=volumes"),
            "--label",
            "swarm-sweep.job.started=1",
            "--restart-condition",
            "none",
            "--mode",
            "global-job",
            IMAGE,
            "true",
        ],
    );
    let snapshot = t.s.sweep("snapshot", Some(&t.config), &t.apps).run();
    snapshot.expect_code(0);
    let services = docker(ALPHA.manager, &["service", "inspect", &left]);
    assert!(!services.status.success(), "{left} is still there");
    assert!(t.jobs_left().is_empty(), "{:?}", t.jobs_left());
}

/// A stop while the listing job runs ends `apply` without deleting
/// anything, and the job's service is gone when the process is.
#[test]
#[ignore = "soak: one more job's wait; job reach stays in the fast set with the_manager_socket_and_a_job_purge_a_release_s_volumes_on_every_node"]
fn an_interrupt_while_a_job_runs_leaves_no_job_behind() {
    let mut t = scene();
    let web = departed_everywhere(&t.s, &mut t.cleanup);
    let running =
        t.s.sweep("apply", Some(&t.config), &t.apps)
            .arg("--prune-volumes")
            .args(QUICK)
            .spawn();
    let since = std::time::Instant::now();
    while t.jobs_left().is_empty() {
        assert!(
            since.elapsed() < Duration::from_secs(120),
            "no job started: {}",
            running.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let run = running.interrupt();
    assert_ne!(run.code(), Some(0), "{}", run.stderr);
    assert!(t.jobs_left().is_empty(), "{:?}", t.jobs_left());
    // Interrupted while gathering: nothing of the release went.
    let left = Remains::read(&ALPHA, &web);
    assert!(
        !left.services.is_empty() && !left.records.is_empty(),
        "{left:#?}"
    );
}

#[test]
fn a_volume_still_in_use_on_a_worker_is_retried_and_removed_once_free() {
    let mut t = scene();
    let slow = t.s.release("slow");
    t.cleanup.add(&slow);
    // Its task ignores SIGTERM and holds the volume on alpha-2 for 20 s
    // after its service is removed.
    let stack = Stack::new(&slow).with_volume().on("alpha-2").stubborn(20);
    create_stack_record(&ALPHA, &stack, 1, Some(&t.s.stamp("shop", &slow)));
    t.s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    let started = std::time::Instant::now();
    let run = t.s.purge(&t.config, &t.apps);
    run.expect_code(0);
    let out = run.json();
    assert_eq!(one(&out["report"], "releases", &slow)["outcome"], "deleted");
    // It went only once its task had let go of it.
    assert!(
        started.elapsed() >= Duration::from_secs(15),
        "deleted after {:?}, while its task still held it",
        started.elapsed()
    );
    assert_gone(&ALPHA, &slow);
    assert!(t.jobs_left().is_empty(), "{:?}", t.jobs_left());
}

/// The containers are read again right before the volumes go, by a job
/// of its own: a container another workload started on alpha-3 after the
/// listing, naming the release's volume, keeps the volume on alpha-2 (and
/// every node) and the release's records.
#[test]
#[ignore = "soak: waits out a stubborn task; job reach stays in the fast set with the_manager_socket_and_a_job_purge_a_release_s_volumes_on_every_node"]
fn a_container_started_after_the_listing_keeps_the_volume() {
    let mut t = scene();
    let late = t.s.release("late");
    t.cleanup.add(&late);
    let volume = format!("{late}_data");
    // Its task holds the volume on alpha-2 for 20 s after its service
    // goes: time for another workload to start after the listing.
    let stack = Stack::new(&late).with_volume().on("alpha-2").stubborn(20);
    create_stack_record(&ALPHA, &stack, 1, Some(&t.s.stamp("shop", &late)));
    t.s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    let user = format!("{late}-user");
    struct Gone<'a>(&'a str, &'a str);
    impl Drop for Gone<'_> {
        fn drop(&mut self) {
            let _ = docker("alpha-3", &["rm", "-f", self.0]);
            let _ = docker("alpha-3", &["volume", "rm", self.1]);
        }
    }
    let _gone = Gone(&user, &volume);

    let running =
        t.s.sweep("apply", Some(&t.config), &t.apps)
            .arg("--prune-volumes")
            .args(QUICK)
            .spawn();
    // The service goes after the listing job: from then on the listing is
    // behind what the nodes hold.
    let service = stack.service();
    let since = std::time::Instant::now();
    while docker(ALPHA.manager, &["service", "inspect", &service])
        .status
        .success()
    {
        assert!(
            since.elapsed() < Duration::from_secs(120),
            "the service never went: {}",
            running.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    docker_ok(
        "alpha-3",
        &[
            "run",
            "-d",
            "--name",
            &user,
            "-v",
            &format!("{volume}:/data"),
            IMAGE,
            "sleep",
            "3600",
        ],
    );
    let run = running.wait();
    run.expect_code(1);
    let out = run.json();
    let release = one(&out["report"], "releases", &late);
    assert_eq!(release["outcome"], "in_use", "{release:#}");
    assert!(
        docker("alpha-2", &["volume", "inspect", &volume])
            .status
            .success(),
        "the volume went from alpha-2 while a container on alpha-3 names it"
    );
    let left = Remains::read(&ALPHA, &late);
    assert_eq!(left.records.len(), 1, "the release's records went");
    assert!(t.jobs_left().is_empty(), "{:?}", t.jobs_left());
}

/// A saved plan carried out by a process of its own asks for a node's
/// backend with no listing before it: the volume job still runs on that
/// node alone, lists the stack's volumes there and removes one.
#[test]
fn a_node_backend_lists_and_removes_volumes_with_no_listing_before_it() {
    let t = scene();
    let release = t.s.release("unlisted");
    let volume = format!("{release}_data");
    let worker = "alpha-2";
    docker_ok(
        worker,
        &[
            "volume",
            "create",
            "--label",
            &format!("{STACK_LABEL}={release}"),
            &volume,
        ],
    );
    let id = docker_ok(worker, &["info", "--format", "{{.Swarm.NodeID}}"]);
    let node = Node::new(id.trim(), worker);

    let registry = FileRegistry::load(&t.config).unwrap_or_else(|e| panic!("{e}"));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listed = runtime.block_on(async {
        let reach = registry.as_node_reach().expect("node reach by job");
        let backend = reach
            .node_backend(&Target::new("alpha"), &node)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let listed = backend.stack_volumes(&release).await.unwrap();
        backend.remove_volume(&volume).await.unwrap();
        listed
    });
    let left = docker(worker, &["volume", "inspect", &volume])
        .status
        .success();
    if left {
        docker(worker, &["volume", "rm", "-f", &volume]);
    }
    assert_eq!(listed, [volume.as_str()]);
    assert!(!left, "{volume} is still on {worker}");
    assert!(t.jobs_left().is_empty(), "{:?}", t.jobs_left());
}
