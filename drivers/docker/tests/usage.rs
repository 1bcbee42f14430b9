//! Against the real engines of the test bed (swarm alpha): what uses what.
//! Every service of the swarm names its volumes, networks, secrets and
//! configs whatever its stack, mode or replica count, and those its
//! previous spec names once it is updated off them; a node lists its
//! containers that use named volumes, stopped ones and tasks alike, and
//! those of no service attached to a network, and so does the volume
//! job's agent in its result; and a stack part is removed
//! object by object, only those handed over.
//!
//! Each test uses names of its own and removes what it created, also when
//! it fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use crate::bed;

use bed::{docker, docker_in, registry, sock, unique, wait_running, Cleanup, IMAGE};
use sweep_core::agent::{AgentRequest, Removal};
use sweep_core::objects::ObjectRef;
use sweep_core::usage::{ContainerUse, ServiceUse};
use sweep_docker::agent::run_agent;
use sweep_docker::labels::STACK_NAMESPACE;
use sweep_docker::Endpoint;
use sweep_swarms::{Registry, StackPart, Target};

const MANAGER: &str = "alpha-1";
const NODES: [&str; 3] = ["alpha-1", "alpha-2", "alpha-3"];

/// The id of the `kind` object `name` on alpha.
fn id_of(kind: &str, name: &str) -> String {
    let field = if kind == "network" {
        "{{.Id}}"
    } else {
        "{{.ID}}"
    };
    docker(MANAGER, &[kind, "inspect", "--format", field, name])
}

/// Creates a service on alpha from `args` (after `service create`), removed
/// when the test ends.
fn service(cleanup: &mut Cleanup, name: &str, args: &[&str]) {
    let mut all = vec!["service", "create", "--detach", "--name", name];
    all.extend_from_slice(args);
    cleanup.add(MANAGER, &["service", "rm", name]);
    docker(MANAGER, &all);
}

/// Removes the volumes `names` from every node of alpha when the test ends
/// (after the services that made them, added earlier, are gone).
fn volumes_everywhere(cleanup: &mut Cleanup, names: &[String]) {
    for node in NODES {
        for name in names {
            cleanup.add(node, &["volume", "rm", name]);
        }
    }
}

/// The id and the name of the `kind` object `name` on alpha, sorted: how
/// a service's spec names a secret or a config.
fn id_and_name(kind: &str, name: &str) -> Vec<String> {
    let mut refs = vec![id_of(kind, name), name.to_owned()];
    refs.sort();
    refs
}

/// The service named `name` among `uses`.
fn named<'a>(uses: &'a [ServiceUse], name: &str) -> &'a ServiceUse {
    uses.iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} not among {uses:#?}"))
}

/// Deploys a stack `release` whose one service, scaled to 0, mounts the
/// volume `volume` as an external one.
fn deploy_external_user(cleanup: &mut Cleanup, dir: &Path, release: &str, volume: &str) {
    let compose = dir.join(format!("{release}.yml"));
    std::fs::write(
        &compose,
        format!(
            r#"version: "3.8"
services:
  app:
    image: {IMAGE}
    command: ["sleep", "3600"]
    deploy:
      replicas: 0
    volumes: ["data:/data"]
volumes:
  data:
    external: true
    name: {volume}
"#
        ),
    )
    .expect("write compose file");
    cleanup.add(MANAGER, &["stack", "rm", release]);
    docker(
        MANAGER,
        &[
            "stack",
            "deploy",
            "--resolve-image",
            "never",
            "-c",
            &compose.display().to_string(),
            release,
        ],
    );
}

#[tokio::test]
async fn every_service_names_what_it_uses_whatever_its_stack_mode_or_replicas() {
    let dir = tempfile::tempdir().unwrap();
    let mut cleanup = Cleanup::new();
    let g = unique("use");
    let data = format!("{g}_data");
    let template = format!("{g}_t-{{{{.Node.Hostname}}}}");
    volumes_everywhere(&mut cleanup, std::slice::from_ref(&data));

    // Made by hand, scaled to 0: nothing on any node uses the volume.
    let byhand = format!("{g}_byhand");
    let mount = format!("type=volume,source={data},target=/data");
    service(
        &mut cleanup,
        &byhand,
        &["--replicas", "0", "--mount", &mount, IMAGE, "sleep", "3600"],
    );
    // Another stack's, scaled to 0, mounting it as an external volume.
    let other = unique("other");
    deploy_external_user(&mut cleanup, dir.path(), &other, &data);
    // Global, with a templated source, placed on no node: a task started
    // after the test would make a volume its cleanup has already passed.
    let global = format!("{g}_global");
    let tmount = format!("type=volume,source={template},target=/t");
    let nowhere = format!("node.labels.{g}==none");
    service(
        &mut cleanup,
        &global,
        &[
            "--mode",
            "global",
            "--constraint",
            &nowhere,
            "--mount",
            &tmount,
            IMAGE,
            "sleep",
            "3600",
        ],
    );
    // A job with no completion asked for: no task ever runs it (a job's
    // finished task containers would outlive the service on 20.10).
    let job = format!("{g}_job");
    service(
        &mut cleanup,
        &job,
        &[
            "--mode",
            "replicated-job",
            "--replicas",
            "0",
            "--mount",
            &mount,
            IMAGE,
            "true",
        ],
    );
    // On a network, with a secret and a config.
    let net = format!("{g}_net");
    let key = format!("{g}_key");
    let conf = format!("{g}_conf");
    docker(MANAGER, &["network", "create", "-d", "overlay", &net]);
    cleanup.add(MANAGER, &["network", "rm", &net]);
    docker_in(MANAGER, &["secret", "create", &key, "-"], Some("key"));
    cleanup.add(MANAGER, &["secret", "rm", &key]);
    docker_in(MANAGER, &["config", "create", &conf, "-"], Some("conf"));
    cleanup.add(MANAGER, &["config", "rm", &conf]);
    let attached = format!("{g}_attached");
    service(
        &mut cleanup,
        &attached,
        &[
            "--replicas",
            "0",
            "--network",
            &net,
            "--secret",
            &key,
            "--config",
            &conf,
            IMAGE,
            "sleep",
            "3600",
        ],
    );
    // Updated off all four: its previous spec, which a rollback returns
    // it to, still names them.
    let updated = format!("{g}_updated");
    service(
        &mut cleanup,
        &updated,
        &[
            "--replicas",
            "0",
            "--mount",
            &mount,
            "--network",
            &net,
            "--secret",
            &key,
            "--config",
            &conf,
            IMAGE,
            "sleep",
            "3600",
        ],
    );
    docker(
        MANAGER,
        &[
            "service",
            "update",
            "--detach",
            "--mount-rm",
            "/data",
            "--network-rm",
            &net,
            "--secret-rm",
            &key,
            "--config-rm",
            &conf,
            &updated,
        ],
    );

    let reg = registry();
    let alpha = reg.backend(&Target::new("alpha")).await.unwrap();
    let uses = alpha
        .service_uses()
        .await
        .unwrap()
        .expect("the docker backend reads the services");

    let found = named(&uses, &updated);
    assert!(
        found.volumes.is_empty()
            && found.networks.is_empty()
            && found.secrets.is_empty()
            && found.configs.is_empty(),
        "{found:#?}"
    );
    let previous = found.previous.as_ref().expect("a previous spec");
    assert_eq!(previous.volumes, [data.as_str()]);
    assert_eq!(previous.networks, [id_of("network", &net)]);
    assert_eq!(previous.secrets, id_and_name("secret", &key));
    assert_eq!(previous.configs, id_and_name("config", &conf));
    // One never updated has none.
    assert_eq!(named(&uses, &attached).previous, None);

    let found = named(&uses, &byhand);
    assert_eq!(found.id, id_of("service", &byhand));
    assert_eq!(
        (found.stack.as_deref(), &found.volumes),
        (None, &vec![data.clone()])
    );
    let external = named(&uses, &format!("{other}_app"));
    assert_eq!(external.stack.as_deref(), Some(other.as_str()));
    assert_eq!(external.volumes, [data.as_str()]);
    assert_eq!(named(&uses, &global).volumes, [template.as_str()]);
    assert_eq!(named(&uses, &job).volumes, [data.as_str()]);
    let found = named(&uses, &attached);
    assert_eq!(found.id, id_of("service", &attached));
    assert!(found.volumes.is_empty());
    assert!(
        found.networks.contains(&id_of("network", &net)),
        "{:?}",
        found.networks
    );
    assert_eq!(found.secrets, id_and_name("secret", &key));
    assert_eq!(found.configs, id_and_name("config", &conf));
    // Every service of the swarm, each once.
    let names: BTreeSet<&str> = uses.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), uses.len());
}

/// Runs a container named `name` on `node` that mounts `volume` and exits
/// at once: a stopped container that still holds the volume.
fn stopped_container(cleanup: &mut Cleanup, node: &str, name: &str, volume: &str) -> String {
    cleanup.add(node, &["volume", "rm", volume]);
    cleanup.add(node, &["rm", "-f", name]);
    let v = format!("{volume}:/data");
    docker(
        node,
        &[
            "run",
            "--name",
            name,
            "--network",
            "none",
            "-v",
            &v,
            IMAGE,
            "true",
        ],
    );
    docker(node, &["inspect", "--format", "{{.Id}}", name])
}

#[tokio::test]
async fn a_node_lists_its_stopped_and_task_containers_with_their_volumes() {
    let mut cleanup = Cleanup::new();
    let g = unique("ctr");
    let data = format!("{g}_data");
    let stopped = format!("{g}_stopped");
    let worker = "alpha-2";
    let stopped_id = stopped_container(&mut cleanup, worker, &stopped, &data);
    let on_manager = format!("{g}_here");
    let here_id = stopped_container(&mut cleanup, MANAGER, &on_manager, &data);
    let task = format!("{g}_task");
    let tdata = format!("{g}_tdata");
    let mount = format!("type=volume,source={tdata},target=/d");
    let constraint = format!("node.hostname=={worker}");
    volumes_everywhere(&mut cleanup, std::slice::from_ref(&tdata));
    service(
        &mut cleanup,
        &task,
        &[
            "--constraint",
            &constraint,
            "--mount",
            &mount,
            IMAGE,
            "sleep",
            "3600",
        ],
    );
    wait_running(MANAGER, &task);
    let task_service = id_of("service", &task);
    // On an attachable network, a container of no service, created and
    // never started. (A task attached to networks only is left out by the
    // listing's unit test: every task carries its service's id label, as
    // the task above shows.)
    let net = format!("{g}_net");
    docker(
        MANAGER,
        &["network", "create", "-d", "overlay", "--attachable", &net],
    );
    let debug = format!("{g}_debug");
    cleanup.add(worker, &["rm", "-f", &debug]);
    cleanup.add(MANAGER, &["network", "rm", &net]);
    docker(
        worker,
        &["create", "--name", &debug, "--network", &net, IMAGE, "true"],
    );
    let debug_id = docker(worker, &["inspect", "--format", "{{.Id}}", &debug]);

    let reg = registry();
    let target = Target::new("alpha");
    let reach = reg.as_node_reach().expect("a file registry reaches nodes");
    let nodes = reach.nodes(&target).await.unwrap().expect("node endpoints");
    let node = nodes
        .iter()
        .find(|n| n.hostname == worker)
        .unwrap_or_else(|| panic!("{worker} not in {nodes:?}"));
    let on_worker = reach.node_backend(&target, node).await.unwrap();
    let containers = on_worker
        .containers()
        .await
        .unwrap()
        .expect("the docker node reads its containers");
    assert!(
        containers.contains(&ContainerUse::new(&stopped_id, &stopped, [&data])),
        "{stopped} not among {containers:#?}"
    );
    let tasks: Vec<&ContainerUse> = containers
        .iter()
        .filter(|c| c.service.as_deref() == Some(task_service.as_str()))
        .collect();
    assert_eq!(tasks.len(), 1, "{containers:#?}");
    assert_eq!(tasks[0].volumes, [tdata.as_str()]);
    assert!(
        tasks[0].name.starts_with(&format!("{task}.1.")),
        "{tasks:?}"
    );
    // Only the worker's own: the manager's stopped container is not there.
    assert!(containers.iter().all(|c| c.id != here_id));
    // The container of no service is listed with the network, by name
    // (one never started has no network id yet).
    let debug_use = containers
        .iter()
        .find(|c| c.id == debug_id)
        .unwrap_or_else(|| panic!("{debug} not among {containers:#?}"));
    assert!(debug_use.networks.contains(&net), "{debug_use:?}");
    assert!(debug_use.service.is_none() && debug_use.volumes.is_empty());

    // The manager's own daemon, through the swarm's backend.
    let alpha = reg.backend(&target).await.unwrap();
    let on_manager_listed = alpha.containers().await.unwrap().expect("read");
    assert!(
        on_manager_listed.contains(&ContainerUse::new(&here_id, &on_manager, [&data])),
        "{on_manager} not among {on_manager_listed:#?}"
    );
    assert!(on_manager_listed.iter().all(|c| c.id != stopped_id));
}

/// The names of the networks on alpha labelled as `release`'s stack's.
fn stack_networks(release: &str) -> BTreeSet<String> {
    docker(
        MANAGER,
        &[
            "network",
            "ls",
            "--filter",
            &format!("label={STACK_NAMESPACE}={release}"),
            "--format",
            "{{.Name}}",
        ],
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

#[tokio::test]
async fn a_stack_part_is_removed_object_by_object_only_those_handed_over() {
    let mut cleanup = Cleanup::new();
    let app = unique("parts");
    let other = unique("theirs");
    let [one, two, theirs] = [
        format!("{app}_one"),
        format!("{app}_two"),
        format!("{other}_x"),
    ];
    for (name, stack) in [(&one, &app), (&two, &app), (&theirs, &other)] {
        let label = format!("{STACK_NAMESPACE}={stack}");
        docker(
            MANAGER,
            &[
                "network", "create", "-d", "overlay", "--label", &label, name,
            ],
        );
        cleanup.add(MANAGER, &["network", "rm", name]);
    }
    let reg = registry();
    let alpha = reg.backend(&Target::new("alpha")).await.unwrap();
    let stacks = alpha.stack_objects().await.unwrap().expect("read");
    let listed = &stacks[&app].networks;
    assert_eq!(
        listed,
        &[
            ObjectRef::new(id_of("network", &one), &one),
            ObjectRef::new(id_of("network", &two), &two),
        ]
    );
    let first = listed[0].clone();

    // Both carry the stack's label; only the one handed over goes, and
    // another stack's network handed over with it stays.
    let their = ObjectRef::new(id_of("network", &theirs), &theirs);
    alpha
        .remove_stack_part(&app, StackPart::Networks, &[first.clone(), their])
        .await
        .unwrap();
    assert_eq!(stack_networks(&app), BTreeSet::from([two.clone()]));
    assert_eq!(stack_networks(&other), BTreeSet::from([theirs.clone()]));
    // Gone already is success.
    alpha
        .remove_stack_part(&app, StackPart::Networks, &[first])
        .await
        .unwrap();
    // Handed over with an id it no longer has (its name re-created since):
    // not the same network, it stays.
    let stale = ObjectRef::new("0123456789abcdef0123456789", &two);
    alpha
        .remove_stack_part(&app, StackPart::Networks, &[stale])
        .await
        .unwrap();
    assert_eq!(stack_networks(&app), BTreeSet::from([two.clone()]));
    // Known by its name alone (an older snapshot): removed by name.
    alpha
        .remove_stack_part(&app, StackPart::Networks, &[ObjectRef::named(&two)])
        .await
        .unwrap();
    assert!(stack_networks(&app).is_empty());
}

#[tokio::test]
async fn the_agent_reports_its_node_s_containers_and_a_volume_one_holds_stays() {
    let mut cleanup = Cleanup::new();
    let g = unique("agent");
    let data = format!("{g}_data");
    let worker = "alpha-3";
    let label = format!("{STACK_NAMESPACE}={g}");
    docker(worker, &["volume", "create", "--label", &label, &data]);
    let stopped = format!("{g}_stopped");
    let id = stopped_container(&mut cleanup, worker, &stopped, &data);
    let holder = ContainerUse::new(&id, &stopped, [&data]);
    let endpoint = Endpoint::parse(&sock(worker), None).unwrap();
    let node = docker(worker, &["info", "--format", "{{.Swarm.NodeID}}"]);
    let limit = Duration::from_secs(20);

    // The listing a job makes first: the node's volumes and containers.
    let listed = run_agent(&endpoint, limit, &AgentRequest::list_all()).await;
    assert_eq!(
        (listed.error.as_deref(), listed.node.as_str()),
        (None, node.as_str())
    );
    assert!(listed.volumes[&g].contains(&data), "{listed:?}");
    assert!(listed.container_uses().contains(&holder), "{listed:?}");

    // A removal: the stopped container still holds the volume, so the
    // engine keeps it, and the result says who holds it.
    let request = AgentRequest::remove(BTreeMap::from([(
        node.clone(),
        BTreeMap::from([(g.clone(), BTreeSet::from([data.clone()]))]),
    )]));
    let result = run_agent(&endpoint, limit, &request).await;
    assert_eq!(result.error, None);
    assert_eq!(result.removal(&data), Removal::InUse);
    assert!(result.container_uses().contains(&holder), "{result:?}");
    assert_eq!(
        docker(
            worker,
            &["volume", "ls", "-q", "--filter", &format!("name={data}")]
        ),
        data
    );
}
