//! Against real Docker 20.10 engines: the project's test bed
//! (`tests/testbed/bed`), swarms alpha (3 nodes), beta (2) and gamma (2).
//!
//! Every test brings the bed up first (idempotent) and fails if it cannot.
//! Each test uses release names of its own, so tests run in parallel, next
//! to other users of the bed, and again after a failed run; each removes
//! what it created, also when it fails.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bed;

use bed::{
    bed, bed_script, create_config, create_record, deploy_stack, docker, docker_in, docker_raw,
    node_id, registry, sock, unique, wait_running, Cleanup, IMAGE,
};
use sweep_core::record::record_name;
use sweep_core::{AppSet, Policy, SwarmName};
use sweep_docker::labels::{RELEASE, STACK_NAMESPACE};
use sweep_docker::{DockerNode, DockerSwarm, Endpoint, FileRegistry, LocalRegistry, TlsFiles};
use sweep_runner::{gather, GatherSettings};
use sweep_swarms::{
    BackendError, Node, Registry, RegistryError, ReleaseRecord, StackPart, SwarmBackend, Target,
};

fn lines(s: String) -> BTreeSet<String> {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Each release's name and owner stamp, as listed.
fn stamps(releases: &[ReleaseRecord]) -> Vec<(String, Option<String>)> {
    releases
        .iter()
        .map(|r| (r.name.clone(), r.owner.clone()))
        .collect()
}

fn write_registry(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("registry.toml");
    std::fs::write(&path, text).expect("write registry");
    path
}

/// A real engine refuses a version newer than its own with 400, and the
/// request comes back answered under the engine's version: what a client
/// pinned to 1.41 does with Docker 29, which speaks 1.44 at least, shown
/// the other way round on the bed's 20.10 engines (1.41 at most).
#[tokio::test]
async fn a_version_the_engine_refuses_is_settled_on_its_own() {
    let endpoint = Endpoint::parse(&sock("alpha-1"), None).unwrap();
    let engine = docker(
        "alpha-1",
        &["version", "--format", "{{.Server.APIVersion}}"],
    );
    let newer = DockerSwarm::connect(&endpoint, Duration::from_secs(10))
        .await
        .unwrap()
        .sending_under("1.44")
        .unwrap();
    assert_eq!(newer.api_version(), "1.44");
    assert_eq!(
        newer.cluster_id().await.unwrap(),
        docker("alpha-1", &["info", "--format", "{{.Swarm.Cluster.ID}}"])
    );
    assert_eq!(newer.api_version(), engine);
    // Settled: the next requests go out under it at once.
    assert!(newer.node_count().await.unwrap() >= 3);
    assert_eq!(newer.api_version(), engine);
}

#[tokio::test]
async fn reads_the_swarm_through_a_pinned_version() {
    let reg = registry();
    let names: BTreeSet<String> = reg
        .as_lister()
        .expect("a file registry lists its swarms")
        .swarms()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.as_str().to_owned())
        .collect();
    for s in ["alpha", "beta", "gamma"] {
        assert!(names.contains(s), "{s} not in {names:?}");
    }

    let alpha = reg.backend(&Target::new("alpha")).await.unwrap();
    let again = reg.backend(&Target::new("alpha")).await.unwrap();
    assert!(Arc::ptr_eq(&alpha, &again), "one connection per swarm");

    // Debian's 20.10 engine speaks API 1.41 at most: the pinned version.
    let direct = DockerSwarm::connect(
        &Endpoint::parse(&sock("alpha-1"), None).unwrap(),
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    assert_eq!(
        direct.api_version(),
        docker(
            "alpha-1",
            &["version", "--format", "{{.Server.APIVersion}}"]
        )
    );

    assert_eq!(
        alpha.cluster_id().await.unwrap(),
        docker("alpha-1", &["info", "--format", "{{.Swarm.Cluster.ID}}"])
    );
    let beta = reg.backend(&Target::new("beta")).await.unwrap();
    assert_ne!(
        beta.cluster_id().await.unwrap(),
        alpha.cluster_id().await.unwrap()
    );

    let listed = lines(docker("alpha-1", &["node", "ls", "-q"]));
    let ids = alpha.node_ids().await.unwrap();
    assert_eq!(alpha.node_count().await.unwrap(), ids.len());
    assert_eq!(ids.len(), listed.len());
    let ids: BTreeSet<String> = ids.into_iter().collect();
    for node in ["alpha-1", "alpha-2", "alpha-3"] {
        if let Some(id) = node_id(node) {
            assert!(ids.contains(&id), "{node} ({id}) not in {ids:?}");
        }
    }
    assert!(ids.len() >= 3, "{ids:?}");
}

#[tokio::test]
async fn releases_carry_the_stamp_of_the_highest_revision() {
    let node = "beta-1";
    let mut cleanup = Cleanup::new();
    let app = unique("rel");
    let bare = unique("bare");
    create_record(
        node,
        &mut cleanup,
        &record_name(&app, 1),
        &app,
        1,
        Some("owner-a"),
        &[],
    );
    create_record(
        node,
        &mut cleanup,
        &record_name(&app, 10),
        &app,
        10,
        Some("owner-c"),
        &[],
    );
    create_record(
        node,
        &mut cleanup,
        &record_name(&app, 2),
        &app,
        2,
        Some("owner-b"),
        &[],
    );
    create_record(
        node,
        &mut cleanup,
        &record_name(&bare, 1),
        &bare,
        1,
        None,
        &[],
    );
    // A stack's config carrying the record labels is not a record: it
    // neither stands for the release nor goes with the records, but with
    // its stack.
    create_record(
        node,
        &mut cleanup,
        &format!("{app}_conf"),
        &app,
        99,
        Some("thief"),
        &[(STACK_NAMESPACE, &app)],
    );

    let reg = registry();
    let beta = reg.backend(&Target::new("beta")).await.unwrap();
    let releases = beta.releases().await.unwrap();
    let mut mine: Vec<(String, Option<String>)> = stamps(&releases)
        .into_iter()
        .filter(|(name, _)| *name == app || *name == bare)
        .collect();
    mine.sort();
    let mut expected = vec![
        (app.clone(), Some("owner-c".to_owned())),
        (bare.clone(), None),
    ];
    expected.sort();
    assert_eq!(mine, expected);
    // Every revision is there with its id, the stack's config none of them.
    let app_records = releases
        .iter()
        .find(|r| r.name == app)
        .map(|r| r.records.as_ref().map_or(0, Vec::len));
    assert_eq!(app_records, Some(3));

    beta.remove_release_records(&app).await.unwrap();
    beta.remove_release_records(&app).await.unwrap();
    let left = lines(docker(
        node,
        &[
            "config",
            "ls",
            "--filter",
            &format!("label={RELEASE}={app}"),
            "--format",
            "{{.Name}}",
        ],
    ));
    assert_eq!(left, BTreeSet::from([format!("{app}_conf")]));
    let releases = beta.releases().await.unwrap();
    assert!(!releases.iter().any(|r| r.name == app), "{releases:?}");
    assert!(releases.iter().any(|r| r.name == bare), "{releases:?}");

    // It is the stack's, so removing the stack takes it: once the records
    // are gone nothing else would ever find it.
    bed::remove_stack(&*beta, &app).await.unwrap();
    let left = lines(docker(
        node,
        &[
            "config",
            "ls",
            "--filter",
            &format!("label={RELEASE}={app}"),
            "--format",
            "{{.Name}}",
        ],
    ));
    assert!(left.is_empty(), "{left:?}");
    assert!(
        beta.releases()
            .await
            .unwrap()
            .iter()
            .any(|r| r.name == bare),
        "another release's record stays"
    );
}

#[test]
fn the_bed_s_records_are_read_by_the_core_as_the_engine_s() {
    use sweep_core::record::{declared, decode_payload, PayloadLimits, YAML_LIMITS};
    let node = "beta-1";
    let mut cleanup = Cleanup::new();
    let app = unique("fmt");
    let name = record_name(&app, 3);
    create_record(node, &mut cleanup, &name, &app, 3, Some("owner-f"), &[]);

    // The data as stored: the CLI prints the raw bytes and one newline.
    let args = [
        "config",
        "inspect",
        "--format",
        "{{printf \"%s\" .Spec.Data}}",
        &name,
    ];
    let out = docker_raw(node, &args, None);
    assert!(out.status.success(), "{out:?}");
    let data = out.stdout.strip_suffix(b"\n").expect("the CLI's newline");
    let doc = decode_payload(data, PayloadLimits::DEFAULT).unwrap();
    assert_eq!((doc.release.as_str(), doc.revision), (app.as_str(), 3));
    assert_eq!(doc.owner.as_deref(), Some("owner-f"));
    assert_eq!(doc.namespace.as_deref(), Some(app.as_str()));
    // What `deploy_stack` creates for the release.
    let d = declared(&doc.manifest, &app, YAML_LIMITS).unwrap();
    let set = |names: &[&str]| -> BTreeSet<String> {
        names.iter().map(|n| format!("{app}_{n}")).collect()
    };
    assert_eq!(d.services, set(&["web"]));
    assert_eq!(d.networks, set(&["front"]));
    assert_eq!(d.secrets, set(&["tok"]));
    assert_eq!(d.configs, set(&["conf"]));
}

fn stack_objects(node: &str, kind: &str, release: &str) -> BTreeSet<String> {
    lines(docker(
        node,
        &[
            kind,
            "ls",
            "--filter",
            &format!("label={STACK_NAMESPACE}={release}"),
            "--format",
            "{{.Name}}",
        ],
    ))
}

#[tokio::test]
async fn remove_stack_removes_the_stack_and_nothing_else() {
    let node = "alpha-1";
    let dir = tempfile::tempdir().unwrap();
    let mut cleanup = Cleanup::new();
    let app = unique("stk");
    let other = unique("keep");
    create_record(
        node,
        &mut cleanup,
        &record_name(&app, 1),
        &app,
        1,
        Some("us"),
        &[],
    );
    // Labelled as the stack's and as a record: what carries the stack's
    // namespace is the stack's (and no record), so it goes with the stack;
    // the record without a namespace stays for the records step.
    let odd = format!("{app}_record");
    create_record(
        node,
        &mut cleanup,
        &odd,
        &app,
        2,
        Some("us"),
        &[(STACK_NAMESPACE, &app)],
    );
    deploy_stack(node, &mut cleanup, dir.path(), &app);
    deploy_stack(node, &mut cleanup, dir.path(), &other);
    wait_running(node, &format!("{app}_web"));

    let reg = registry();
    let alpha = reg.backend(&Target::new("alpha")).await.unwrap();
    assert_eq!(stack_objects(node, "network", &app).len(), 1);
    bed::remove_stack(&*alpha, &app).await.unwrap();

    assert!(stack_objects(node, "service", &app).is_empty());
    // The services are gone, so their tasks stop: no container is left
    // after their grace period.
    let deadline = Instant::now() + Duration::from_secs(30);
    for n in ["alpha-1", "alpha-2", "alpha-3"] {
        loop {
            let running = docker(
                n,
                &[
                    "ps",
                    "-aq",
                    "--filter",
                    &format!("label={STACK_NAMESPACE}={app}"),
                ],
            );
            if running.is_empty() {
                break;
            }
            assert!(Instant::now() < deadline, "{n} still runs {running}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    // A node drops its copy of the network once its task is gone; the
    // manager has already deleted the swarm's network object.
    let deadline = Instant::now() + Duration::from_secs(15);
    while !stack_objects(node, "network", &app).is_empty() {
        assert!(Instant::now() < deadline, "network of {app} still listed");
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(stack_objects(node, "secret", &app).is_empty());
    assert!(stack_objects(node, "config", &app).is_empty());
    let gone = docker_raw(node, &["config", "inspect", &odd], None);
    assert!(!gone.status.success(), "{odd} survived the stack");
    let records = lines(docker(
        node,
        &[
            "config",
            "ls",
            "--filter",
            &format!("name={}", record_name(&app, 1)),
            "--format",
            "{{.Name}}",
        ],
    ));
    assert_eq!(records, BTreeSet::from([record_name(&app, 1)]));
    assert_eq!(
        stack_objects(node, "service", &other),
        BTreeSet::from([format!("{other}_web")])
    );
    assert_eq!(stack_objects(node, "network", &other).len(), 1);
    assert_eq!(stack_objects(node, "secret", &other).len(), 1);
    assert_eq!(stack_objects(node, "config", &other).len(), 1);

    // Gone already is success.
    bed::remove_stack(&*alpha, &app).await.unwrap();
}

/// Names of `kind` objects on `node` carrying label `key=value`.
fn labelled(node: &str, kind: &str, key: &str, value: &str) -> BTreeSet<String> {
    lines(docker(
        node,
        &[
            kind,
            "ls",
            "--filter",
            &format!("label={key}={value}"),
            "--format",
            "{{.Name}}",
        ],
    ))
}

#[tokio::test]
async fn nothing_labelled_with_a_deleted_release_s_namespace_survives() {
    // The whole removal of one release, in the sweep's order (stack, its
    // volumes on every node, records last), leaves nothing carrying its
    // namespace: a config carrying the record labels as well as the
    // namespace is the stack's and goes with it, not with the records,
    // where nothing would find it once the records are gone.
    let node = "gamma-1";
    let nodes = ["gamma-1", "gamma-2"];
    let dir = tempfile::tempdir().unwrap();
    let mut cleanup = Cleanup::new();
    let app = unique("gone");
    let other = unique("near");
    let ns = format!("{STACK_NAMESPACE}={app}");
    for rev in [1, 2] {
        let name = record_name(&app, rev);
        create_record(node, &mut cleanup, &name, &app, rev, Some("shop"), &[]);
    }
    let in_stack = format!("{app}_record");
    create_record(
        node,
        &mut cleanup,
        &in_stack,
        &app,
        99,
        Some("thief"),
        &[(STACK_NAMESPACE, &app)],
    );
    // The record labels of `app` on another stack's config: that stack's,
    // so it stays.
    let neighbour = format!("{other}_conf");
    create_record(
        node,
        &mut cleanup,
        &neighbour,
        &app,
        100,
        Some("thief"),
        &[(STACK_NAMESPACE, &other)],
    );
    let extra = format!("{app}_extra");
    cleanup.add(node, &["secret", "rm", &extra]);
    docker_in(
        node,
        &["secret", "create", "--label", &ns, &extra, "-"],
        Some("extra"),
    );
    for n in nodes {
        let volume = format!("{app}_data");
        docker(n, &["volume", "create", "--label", &ns, &volume]);
        cleanup.add(n, &["volume", "rm", &volume]);
    }
    deploy_stack(node, &mut cleanup, dir.path(), &app);
    wait_running(node, &format!("{app}_web"));

    let reg = registry();
    let target = Target::new("gamma");
    let gamma = reg.backend(&target).await.unwrap();
    assert!(
        stamps(&gamma.releases().await.unwrap()).contains(&(app.clone(), Some("shop".into()))),
        "the config in the stack does not stand for the release"
    );

    bed::remove_stack(&*gamma, &app).await.unwrap();
    // Records never go with the stack: they are removed last, separately.
    assert_eq!(
        labelled(node, "config", RELEASE, &app),
        BTreeSet::from([
            record_name(&app, 1),
            record_name(&app, 2),
            neighbour.clone()
        ])
    );
    let reach = reg.as_node_reach().expect("a file registry reaches nodes");
    let members = reach
        .nodes(&target)
        .await
        .unwrap()
        .expect("the bed configures node endpoints");
    assert_eq!(members.len(), nodes.len(), "{members:?}");
    for member in &members {
        let on_node = reach.node_backend(&target, member).await.unwrap();
        for volume in on_node.stack_volumes(&app).await.unwrap() {
            bed::remove_volume(&*on_node, &volume).await.unwrap();
        }
    }
    gamma.remove_release_records(&app).await.unwrap();

    for kind in ["service", "secret", "config"] {
        let left = labelled(node, kind, STACK_NAMESPACE, &app);
        assert!(left.is_empty(), "{kind}s of {app} left: {left:?}");
    }
    // The manager drops the network once the last task lets go of it.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left = labelled(node, "network", STACK_NAMESPACE, &app);
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "networks of {app} left: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    for n in nodes {
        let left = labelled(n, "volume", STACK_NAMESPACE, &app);
        assert!(left.is_empty(), "volumes of {app} left on {n}: {left:?}");
        // The tasks stop on their own once their service is gone.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let running = docker(n, &["ps", "-aq", "--filter", &format!("label={ns}")]);
            if running.is_empty() {
                break;
            }
            assert!(Instant::now() < deadline, "{n} still runs {running}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    assert_eq!(
        labelled(node, "config", RELEASE, &app),
        BTreeSet::from([neighbour])
    );
    let releases = gamma.releases().await.unwrap();
    assert!(!releases.iter().any(|r| r.name == app), "{releases:?}");
}

#[tokio::test]
async fn own_stack_is_refused_before_anything_is_touched() {
    let node = "gamma-1";
    let dir = tempfile::tempdir().unwrap();
    let mut cleanup = Cleanup::new();
    let me = unique("self");
    let conf = format!("{me}_conf");
    create_config(node, &mut cleanup, &conf, &[(STACK_NAMESPACE, &me)]);
    let file = write_registry(
        dir.path(),
        &format!(
            "[[swarm]]\nname = \"gamma\"\nmanager = \"{}\"\nself_stack = \"{me}\"\n",
            sock(node)
        ),
    );
    let reg = FileRegistry::load(&file).unwrap();
    let gamma = reg.backend(&Target::new("gamma")).await.unwrap();
    assert_eq!(gamma.self_stack(), Some(me.as_str()));
    for &part in StackPart::ALL {
        let objects = bed::part_objects(&*gamma, &me, part).await.unwrap();
        assert_eq!(
            gamma.remove_stack_part(&me, part, &objects).await,
            Err(BackendError::OwnStack {
                release: me.clone()
            })
        );
    }
    assert_eq!(stack_objects(node, "config", &me), BTreeSet::from([conf]));
}

#[tokio::test]
async fn volumes_on_the_manager_and_on_nodes() {
    let mut cleanup = Cleanup::new();
    let app = unique("vol");
    let data = format!("{app}_data");
    let cache = format!("{app}_cache");
    let foreign = format!("{app}_foreign");
    let ns = format!("{STACK_NAMESPACE}={app}");
    let other_ns = format!("{STACK_NAMESPACE}={app}x");
    for (node, name, label) in [
        ("alpha-1", &data, &ns),
        ("alpha-2", &cache, &ns),
        ("alpha-1", &foreign, &other_ns),
    ] {
        docker(node, &["volume", "create", "--label", label, name]);
        cleanup.add(node, &["volume", "rm", name]);
    }

    let reg = registry();
    let target = Target::new("alpha");
    let alpha = reg.backend(&target).await.unwrap();
    assert_eq!(alpha.stack_volumes(&app).await.unwrap(), vec![data.clone()]);

    let reach = reg.as_node_reach().expect("a file registry reaches nodes");
    let nodes = reach
        .nodes(&target)
        .await
        .unwrap()
        .expect("the bed configures node endpoints");
    let alpha2_id = node_id("alpha-2").expect("alpha-2 answers");
    let alpha2 = nodes
        .iter()
        .find(|n| n.id == alpha2_id)
        .unwrap_or_else(|| panic!("alpha-2 not in {nodes:?}"));
    let on_alpha2 = reach.node_backend(&target, alpha2).await.unwrap();
    assert_eq!(
        on_alpha2.stack_volumes(&app).await.unwrap(),
        vec![cache.clone()]
    );

    // A volume a container mounts is in use and stays.
    let user = format!("{app}_user");
    cleanup.add("alpha-1", &["rm", "-f", &user]);
    docker(
        "alpha-1",
        &[
            "run",
            "-d",
            "--name",
            &user,
            "--network",
            "none",
            "-v",
            &format!("{data}:/data"),
            IMAGE,
            "sleep",
            "3600",
        ],
    );
    match alpha.remove_volume(&data).await {
        Err(BackendError::InUse { object, .. }) => assert!(object.contains(&data), "{object}"),
        other => panic!("expected InUse, got {other:?}"),
    }
    assert_eq!(
        docker(
            "alpha-1",
            &["volume", "ls", "-q", "--filter", &format!("name={data}")]
        ),
        data
    );
    docker("alpha-1", &["rm", "-f", &user]);
    alpha.remove_volume(&data).await.unwrap();
    alpha.remove_volume(&data).await.unwrap();
    assert!(alpha.stack_volumes(&app).await.unwrap().is_empty());

    on_alpha2.remove_volume(&cache).await.unwrap();
    assert!(on_alpha2.stack_volumes(&app).await.unwrap().is_empty());
    assert_eq!(
        docker(
            "alpha-1",
            &["volume", "ls", "-q", "--filter", &format!("name={foreign}")]
        ),
        foreign,
        "another release's volume stays"
    );
}

#[tokio::test]
async fn node_reach_counts_only_members_that_answer() {
    let dir = tempfile::tempdir().unwrap();
    let missing = "unix:///run/swarm-sweep-bed/no-such-node/docker.sock";
    let file = write_registry(
        dir.path(),
        &format!(
            r#"timeout_secs = 5
[[swarm]]
name = "alpha"
manager = "{a1}"
[[swarm.node]]
endpoint = "{a2}"
[[swarm.node]]
endpoint = "{a3}"
[[swarm.node]]
endpoint = "{b1}"
[[swarm.node]]
endpoint = "{missing}"

[[swarm]]
name = "beta"
manager = "{b1}"
"#,
            a1 = sock("alpha-1"),
            a2 = sock("alpha-2"),
            a3 = sock("alpha-3"),
            b1 = sock("beta-1"),
        ),
    );
    let reg = FileRegistry::load(&file).unwrap();
    let reach = reg.as_node_reach().unwrap();
    let alpha = Target::new("alpha");

    let nodes = reach
        .nodes(&alpha)
        .await
        .unwrap()
        .expect("nodes configured");
    let got: BTreeSet<String> = nodes.iter().map(|n| n.id.clone()).collect();
    // Every daemon that answers as a swarm node is listed by the node id it
    // holds, the manager's among them; beta-1 is another swarm's daemon,
    // listed as what it is; the missing socket answers nothing.
    let alpha_ids: BTreeSet<String> = ["alpha-1", "alpha-2", "alpha-3"]
        .into_iter()
        .filter_map(node_id)
        .collect();
    let beta1 = node_id("beta-1").expect("beta-1 answers");
    let mut expected = alpha_ids.clone();
    expected.insert(beta1.clone());
    assert_eq!(got, expected);
    assert_eq!(nodes.len(), got.len(), "each node once");
    for n in &nodes {
        assert!(!n.hostname.is_empty(), "{n:?}");
    }

    // Gathered and planned, only alpha's own nodes count: the purge is
    // complete without beta-1, and never names it.
    let snapshot = gather(
        &FileRegistry::load(&file).unwrap(),
        Policy::new("node-reach", true, None),
        AppSet::new(true, Vec::new()),
        GatherSettings::default(),
    )
    .await;
    let alpha_read = snapshot
        .swarms
        .iter()
        .find(|s| s.swarm.as_str() == "alpha")
        .expect("alpha is gathered");
    let counted: BTreeSet<String> = alpha_read
        .reached_nodes()
        .expect("alpha has node reach")
        .iter()
        .map(|n| n.id.clone())
        .collect();
    assert_eq!(counted, alpha_ids, "{alpha_read:#?}");
    let plan = sweep_core::plan(&snapshot).unwrap();
    let swarm_plan = plan
        .swarm(&SwarmName::from("alpha"))
        .expect("alpha in the plan");
    assert_eq!(
        swarm_plan
            .nodes
            .iter()
            .flatten()
            .map(|n| n.id.clone())
            .collect::<BTreeSet<_>>(),
        alpha_ids
    );
    assert!(
        plan.uncovered.iter().all(|u| u.swarm.as_str() != "alpha"),
        "{:#?}",
        plan.uncovered
    );

    let first = reach.node_backend(&alpha, &nodes[0]).await.unwrap();
    let again = reach.node_backend(&alpha, &nodes[0]).await.unwrap();
    assert!(Arc::ptr_eq(&first, &again), "one connection per node");

    assert!(matches!(
        reach
            .node_backend(&alpha, &Node::new(beta1.clone(), "beta-1"))
            .await,
        Err(RegistryError::UnknownNode { .. })
    ));
    assert_eq!(reach.nodes(&Target::new("beta")).await.unwrap(), None);

    // A registry that never listed the nodes (a saved plan carried out by
    // a process of its own) reaches each by its own daemon's word, and
    // still no daemon of another swarm.
    let release = unique("fresh");
    let volume = format!("{release}_data");
    let mut cleanup = Cleanup::new();
    docker(
        "alpha-2",
        &[
            "volume",
            "create",
            "--label",
            &format!("{STACK_NAMESPACE}={release}"),
            &volume,
        ],
    );
    cleanup.add("alpha-2", &["volume", "rm", "-f", &volume]);
    let alpha2 = node_id("alpha-2").expect("alpha-2 answers");
    let fresh = FileRegistry::load(&file).unwrap();
    let fresh_reach = fresh.as_node_reach().unwrap();
    for node in nodes.iter().filter(|n| n.id != beta1) {
        let backend = fresh_reach.node_backend(&alpha, node).await.unwrap();
        let listed = backend.stack_volumes(&release).await.unwrap();
        let expected = if node.id == alpha2 {
            vec![volume.clone()]
        } else {
            Vec::new()
        };
        assert_eq!(listed, expected, "{node:?}");
    }
    assert!(matches!(
        FileRegistry::load(&file)
            .unwrap()
            .as_node_reach()
            .unwrap()
            .node_backend(&alpha, &Node::new(beta1, "beta-1"))
            .await,
        Err(RegistryError::UnknownNode { .. })
    ));
}

#[tokio::test]
async fn local_registry_is_the_one_swarm_it_points_at() {
    let reg = LocalRegistry::new(Endpoint::parse(&sock("beta-1"), None).unwrap())
        .with_self_stack("swarm-sweep");
    assert!(reg.as_lister().is_none());
    assert!(reg.as_node_reach().is_none());
    let local = reg.backend(&Target::local()).await.unwrap();
    assert_eq!(local.self_stack(), Some("swarm-sweep"));
    assert_eq!(
        local.cluster_id().await.unwrap(),
        docker("beta-1", &["info", "--format", "{{.Swarm.Cluster.ID}}"])
    );
    assert!(Arc::ptr_eq(
        &local,
        &reg.backend(&Target::local()).await.unwrap()
    ));
    assert!(matches!(
        reg.backend(&Target::new("beta")).await,
        Err(RegistryError::UnknownSwarm { .. })
    ));
}

/// beta-1's TLS endpoint and the directory of the bed's certificates
/// (`ca.pem`, `cert.pem`, `key.pem`, and `other-ca.pem`, a CA that signed
/// nothing the daemon uses), as `bed tls` prints them.
fn tls_bed() -> (String, PathBuf) {
    bed();
    let out = Command::new("bash")
        .arg(bed_script())
        .arg("tls")
        .output()
        .expect("bed tls");
    assert!(out.status.success(), "bed tls");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines().map(str::trim);
    match (lines.next(), lines.next()) {
        (Some(url), Some(dir)) => (url.to_owned(), PathBuf::from(dir)),
        _ => panic!("`bed tls` printed {text:?}"),
    }
}

#[tokio::test]
async fn manager_over_tls_is_the_same_swarm_as_over_the_unix_socket() {
    let (url, certs) = tls_bed();
    let node = "beta-1";
    let mut cleanup = Cleanup::new();
    let app = unique("tls");
    create_record(
        node,
        &mut cleanup,
        &record_name(&app, 1),
        &app,
        1,
        Some("owner-t"),
        &[],
    );

    // Relative TLS paths are read next to the registry file.
    let dir = tempfile::tempdir().unwrap();
    for f in ["ca.pem", "cert.pem", "key.pem"] {
        std::fs::copy(certs.join(f), dir.path().join(f)).unwrap();
    }
    let file = write_registry(
        dir.path(),
        &format!(
            "timeout_secs = 10\n[[swarm]]\nname = \"beta\"\nmanager = \"{url}\"\n\
             [swarm.tls]\nca = \"ca.pem\"\ncert = \"cert.pem\"\nkey = \"key.pem\"\n"
        ),
    );
    let reg = FileRegistry::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let beta = reg.backend(&Target::new("beta")).await.unwrap();
    assert_eq!(
        beta.cluster_id().await.unwrap(),
        docker(node, &["info", "--format", "{{.Swarm.Cluster.ID}}"])
    );
    let releases = beta.releases().await.unwrap();
    assert!(
        stamps(&releases).contains(&(app.clone(), Some("owner-t".into()))),
        "{app} not in {releases:?}"
    );

    let direct = DockerSwarm::connect(
        &Endpoint::parse(&url, Some(TlsFiles::in_dir(&certs))).unwrap(),
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    assert_eq!(direct.endpoint(), url);
    assert_eq!(direct.api_version(), "1.41");
}

#[tokio::test]
async fn tls_with_an_unrelated_ca_is_refused_naming_the_endpoint() {
    let (url, certs) = tls_bed();
    let dir = tempfile::tempdir().unwrap();
    let timeout = Duration::from_secs(5);
    let file = write_registry(
        dir.path(),
        &format!(
            "timeout_secs = {}\n[[swarm]]\nname = \"beta\"\nmanager = \"{url}\"\n\
             [swarm.tls]\nca = \"{}\"\ncert = \"{}\"\nkey = \"{}\"\n",
            timeout.as_secs(),
            certs.join("other-ca.pem").display(),
            certs.join("cert.pem").display(),
            certs.join("key.pem").display(),
        ),
    );
    let reg = FileRegistry::load(&file).unwrap_or_else(|e| panic!("{e}"));
    // Connecting sends nothing; the first request meets the refusal.
    let backend = reg.backend(&Target::new("beta")).await.unwrap();
    let started = Instant::now();
    let refused = backend.cluster_id().await.err();
    // A refused handshake fails at once; waiting out the timeout would mean
    // the refusal went unnoticed.
    assert!(started.elapsed() < timeout, "took {:?}", started.elapsed());
    let Some(e) = refused else {
        panic!("a daemon certificate from another CA was accepted")
    };
    let BackendError::Unreachable { endpoint, message } = &e else {
        panic!("expected the daemon to be unreachable, got {e:?}")
    };
    assert_eq!(endpoint, &url);
    assert!(
        message.to_lowercase().contains("certificate"),
        "the message should say what was wrong: {message}"
    );
    assert!(e.to_string().contains(&url), "{e}");

    let direct = DockerSwarm::connect(
        &Endpoint::parse(
            &url,
            Some(TlsFiles::new(
                certs.join("other-ca.pem"),
                certs.join("cert.pem"),
                certs.join("key.pem"),
            )),
        )
        .unwrap(),
        timeout,
    )
    .await
    .unwrap();
    match direct.node_count().await {
        Err(BackendError::Unreachable { endpoint, .. }) => assert_eq!(endpoint, url),
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

#[tokio::test]
async fn node_reach_counts_a_node_reached_over_tls() {
    let (url, certs) = tls_bed();
    let tls = format!(
        "{{ ca = \"{}\", cert = \"{}\", key = \"{}\" }}",
        certs.join("ca.pem").display(),
        certs.join("cert.pem").display(),
        certs.join("key.pem").display(),
    );
    let beta1 = node_id("beta-1").expect("beta-1 answers");
    let beta2 = node_id("beta-2").expect("beta-2 answers");

    // The node entry's own TLS files are used: its daemon answers as beta-1.
    let over_tls = DockerNode::connect(
        &Endpoint::parse(&url, Some(TlsFiles::in_dir(&certs))).unwrap(),
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    assert_eq!(
        over_tls.swarm_node().await.unwrap().map(|n| n.id),
        Some(beta1.clone())
    );

    let dir = tempfile::tempdir().unwrap();
    let file = write_registry(
        dir.path(),
        &format!(
            r#"timeout_secs = 10
[[swarm]]
name = "beta"
manager = "{mgr}"
[[swarm.node]]
endpoint = "{url}"
tls = {tls}
[[swarm.node]]
endpoint = "{b2}"
"#,
            mgr = sock("beta-1"),
            b2 = sock("beta-2"),
        ),
    );
    let reg = FileRegistry::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let reach = reg.as_node_reach().unwrap();
    let beta = Target::new("beta");
    let nodes = reach.nodes(&beta).await.unwrap().expect("nodes configured");
    let got: BTreeSet<String> = nodes.iter().map(|n| n.id.clone()).collect();
    assert_eq!(got, BTreeSet::from([beta1.clone(), beta2.clone()]));
    assert_eq!(nodes.len(), 2, "beta-1 once, however many ways it answers");

    // With the manager itself reached over TLS, beta-1 is found only
    // through the TLS connection.
    let file = write_registry(
        dir.path(),
        &format!(
            r#"timeout_secs = 10
[[swarm]]
name = "beta"
manager = "{url}"
tls = {tls}
[[swarm.node]]
endpoint = "{b2}"
"#,
            b2 = sock("beta-2"),
        ),
    );
    let reg = FileRegistry::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let reach = reg.as_node_reach().unwrap();
    let nodes = reach.nodes(&beta).await.unwrap().expect("nodes configured");
    let got: BTreeSet<String> = nodes.iter().map(|n| n.id.clone()).collect();
    assert_eq!(got, BTreeSet::from([beta1.clone(), beta2]));
    let on_beta1 = nodes.iter().find(|n| n.id == beta1).expect("beta-1 listed");
    let backend = reach.node_backend(&beta, on_beta1).await.unwrap();
    let none = unique("none");
    assert!(backend.stack_volumes(&none).await.unwrap().is_empty());
}

/// "In use" is what the engine answers for something that goes once what
/// holds it goes: a network a service or task still uses is the manager's
/// failed precondition (400). A secret or config a service mounts is
/// refused otherwise (400, invalid argument): a refusal, never waited on.
/// The sweep removes the services first, so the rest then goes.
#[tokio::test]
async fn parts_a_service_still_uses_are_in_use_or_refused_and_go_once_it_is_gone() {
    let node = "alpha-1";
    let dir = tempfile::tempdir().unwrap();
    let mut cleanup = Cleanup::new();
    let app = unique("part");
    deploy_stack(node, &mut cleanup, dir.path(), &app);
    wait_running(node, &format!("{app}_web"));
    let reg = registry();
    let alpha = reg.backend(&Target::new("alpha")).await.unwrap();

    match bed::remove_part(&*alpha, &app, StackPart::Networks).await {
        Err(BackendError::InUse { .. }) => {}
        other => panic!("network while the service stands: {other:?}"),
    }
    for (part, kind) in [
        (StackPart::Secrets, "secret"),
        (StackPart::Configs, "config"),
    ] {
        match bed::remove_part(&*alpha, &app, part).await {
            Err(BackendError::Refused { status, .. }) => {
                assert_eq!(status, 400, "{part}");
            }
            other => panic!("{part} while the service stands: {other:?}"),
        }
        assert_eq!(stack_objects(node, kind, &app).len(), 1, "{kind} went");
    }
    assert_eq!(
        stack_objects(node, "network", &app).len(),
        1,
        "network went"
    );

    bed::remove_part(&*alpha, &app, StackPart::Services)
        .await
        .unwrap();
    // The network stays in use until the service's task has stopped.
    bed::remove_stack(&*alpha, &app).await.unwrap();
    for kind in ["service", "secret", "config"] {
        assert!(stack_objects(node, kind, &app).is_empty(), "{kind} left");
    }
    // The manager lists its own copy of the swarm network until its task
    // there stops (a delete of that copy is a 500 "not found"); once it is
    // gone, removing the parts again is success: gone already.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !stack_objects(node, "network", &app).is_empty() {
        assert!(Instant::now() < deadline, "network of {app} still listed");
        std::thread::sleep(Duration::from_millis(200));
    }
    for part in [StackPart::Networks, StackPart::Secrets, StackPart::Configs] {
        bed::remove_part(&*alpha, &app, part).await.unwrap();
    }
}
