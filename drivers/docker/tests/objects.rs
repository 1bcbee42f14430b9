//! Against real Docker 20.10 engines (the test bed): what the docker
//! backends read about a release for the snapshot. A deployed stack's
//! services, networks, secrets, configs and volumes under its namespace;
//! the versions a saved plan relies on (a record's changes when it is
//! restamped, a service's when it is updated); the keep label as the
//! operator sets it; and the volumes of a worker through its own daemon.
//!
//! Each test uses names of its own and removes what it created, also when
//! it fails.

use std::collections::BTreeSet;
use std::process::Command;

use crate::bed;

use bed::{create_config, deploy_stack, docker, registry, sock, unique, Cleanup};
use sweep_core::objects::ObjectRef;
use sweep_core::record::record_name;
use sweep_docker::labels::{OWNER, RECORD_TYPE, RELEASE, REVISION, STACK_NAMESPACE, TYPE};
use sweep_swarms::{ObjectVersion, Registry, ServiceEntry, Target, KEEP_LABEL};

/// Revision `revision` of `release`'s record, stamped `owner`, as the
/// engine writes it.
fn create_record(node: &str, cleanup: &mut Cleanup, release: &str, revision: u64, owner: &str) {
    let name = record_name(release, revision);
    bed::create_record(node, cleanup, &name, release, revision, Some(owner), &[]);
}

/// Creates volume `name` labelled with stack `namespace` (or with no
/// stack) on `node`'s own daemon.
fn create_volume(node: &str, cleanup: &mut Cleanup, name: &str, namespace: Option<&str>) {
    let mut args = vec!["volume", "create"];
    let label = namespace.map(|ns| format!("{STACK_NAMESPACE}={ns}"));
    if let Some(label) = &label {
        args.extend(["--label", label]);
    }
    args.push(name);
    docker(node, &args);
    cleanup.add(node, &["volume", "rm", name]);
}

/// The swarm node id the daemon of bed node `node` reports.
fn node_id(node: &str) -> String {
    docker(node, &["info", "--format", "{{.Swarm.NodeID}}"])
}

fn inspect(node: &str, kind: &str, name: &str, format: &str) -> String {
    docker(node, &[kind, "inspect", "--format", format, name])
}

fn version_of(node: &str, kind: &str, name: &str) -> u64 {
    inspect(node, kind, name, "{{.Version.Index}}")
        .parse()
        .expect("a version index")
}

/// Restamps config `name` on `node`'s swarm with owner `owner`, as a
/// controller relabels a record: the engine's config update, which may
/// change the labels only (the docker CLI has no command for it).
fn restamp(node: &str, name: &str, owner: &str) {
    let raw = docker(node, &["config", "inspect", name]);
    let mut inspected: serde_json::Value = serde_json::from_str(&raw).expect("config inspect");
    let config = inspected.get_mut(0).expect("one config inspected").take();
    let id = config["ID"].as_str().expect("an id").to_owned();
    let version = config["Version"]["Index"].as_u64().expect("a version");
    let mut spec = config["Spec"].clone();
    spec["Labels"][OWNER] = serde_json::Value::String(owner.to_owned());
    let socket = sock(node);
    let path = socket.strip_prefix("unix://").expect("a unix socket");
    let out = Command::new("curl")
        .args([
            "-sS",
            "--fail-with-body",
            "--unix-socket",
            path,
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            &spec.to_string(),
            &format!("http://localhost/v1.41/configs/{id}/update?version={version}"),
        ])
        .output()
        .expect("run curl");
    assert!(
        out.status.success(),
        "updating config {name}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The owner stamp of the records these tests create.
const SHOP: &str = "cd/default/shop:release/app";

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn a_deployed_stack_is_listed_under_its_namespace_without_its_records() {
    let manager = "alpha-1";
    let worker = "alpha-2";
    let dir = tempfile::tempdir().unwrap();
    let mut cleanup = Cleanup::new();
    let app = unique("obj");
    let other = unique("objother");
    create_record(manager, &mut cleanup, &app, 1, SHOP);
    create_record(manager, &mut cleanup, &app, 2, SHOP);
    // Carrying the record labels and the stack's namespace: the stack's
    // by the one definition (removing the stack's configs takes it), so
    // listed with the stack and never as a record.
    let in_stack = format!("{app}_record");
    create_config(
        manager,
        &mut cleanup,
        &in_stack,
        &[
            (TYPE, RECORD_TYPE),
            (RELEASE, &app),
            (REVISION, "99"),
            (OWNER, "thief"),
            (STACK_NAMESPACE, &app),
        ],
    );
    deploy_stack(manager, &mut cleanup, dir.path(), &app);
    deploy_stack(manager, &mut cleanup, dir.path(), &other);
    create_volume(manager, &mut cleanup, &format!("{app}_mgr"), Some(&app));
    create_volume(worker, &mut cleanup, &format!("{app}_wrk"), Some(&app));
    create_volume(worker, &mut cleanup, &format!("{app}_loose"), None);
    create_volume(worker, &mut cleanup, &format!("{other}_wrk"), Some(&other));

    let reg = registry();
    let target = Target::new("alpha");
    let alpha = reg.backend(&target).await.unwrap();

    let stacks = alpha
        .stack_objects()
        .await
        .unwrap()
        .expect("the docker backend reads stack objects");
    let objects = stacks
        .get(&app)
        .unwrap_or_else(|| panic!("{app} not in {stacks:?}"));
    let web = format!("{app}_web");
    assert_eq!(
        objects.services,
        vec![ServiceEntry::new(
            inspect(manager, "service", &web, "{{.ID}}"),
            web.clone(),
            version_of(manager, "service", &web),
        )]
    );
    let [front, tok] = [format!("{app}_front"), format!("{app}_tok")];
    assert_eq!(
        objects.networks,
        [ObjectRef::new(
            inspect(manager, "network", &front, "{{.Id}}"),
            &front
        )]
    );
    assert_eq!(
        objects.secrets,
        [
            ObjectRef::new(inspect(manager, "secret", &tok, "{{.ID}}"), &tok)
                .with_version(version_of(manager, "secret", &tok))
        ]
    );
    let configs: BTreeSet<&str> = objects.configs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        configs,
        BTreeSet::from([format!("{app}_conf").as_str(), in_stack.as_str()])
    );
    assert!(
        !objects
            .configs
            .iter()
            .any(|c| c.name.starts_with(&format!("{app}.v"))),
        "records are not the stack's: {:?}",
        objects.configs
    );
    assert_eq!(objects.volumes, None, "volumes are per node");
    let theirs = stacks.get(&other).expect("the other stack is listed");
    assert_eq!(theirs.services.len(), 1);
    assert_eq!(theirs.services[0].name, format!("{other}_web"));

    // Every record revision with its id and version; the config in the
    // stack is none of them.
    let release = alpha
        .releases()
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.name == app)
        .expect("the release is listed");
    let mut records = release.records.clone().unwrap_or_default();
    records.sort();
    let mut expected: Vec<ObjectVersion> = [1, 2]
        .into_iter()
        .map(|rev| {
            let name = record_name(&app, rev);
            ObjectVersion::new(
                inspect(manager, "config", &name, "{{.ID}}"),
                version_of(manager, "config", &name),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(records, expected);

    // The manager's own volumes, under its own node id.
    assert_eq!(alpha.own_node_id().await.unwrap(), Some(node_id(manager)));
    let on_manager = alpha.volumes_by_stack().await.unwrap().unwrap();
    assert_eq!(on_manager.get(&app), Some(&names(&[&format!("{app}_mgr")])));

    // The worker's, through its own daemon only.
    let reach = reg.as_node_reach().expect("a file registry reaches nodes");
    let members = reach.nodes(&target).await.unwrap().expect("node endpoints");
    let worker_id = node_id(worker);
    let member = members
        .iter()
        .find(|n| n.id == worker_id)
        .unwrap_or_else(|| panic!("{worker} ({worker_id}) not reached: {members:?}"));
    let on_worker = reach
        .node_backend(&target, member)
        .await
        .unwrap()
        .volumes_by_stack()
        .await
        .unwrap()
        .expect("the docker node backend lists volumes");
    assert_eq!(on_worker.get(&app), Some(&names(&[&format!("{app}_wrk")])));
    assert_eq!(
        on_worker.get(&other),
        Some(&names(&[&format!("{other}_wrk")]))
    );
    assert!(
        !on_worker
            .values()
            .flatten()
            .any(|v| v == &format!("{app}_loose")),
        "a volume of no stack is nobody's: {on_worker:?}"
    );
}

#[tokio::test]
async fn versions_change_with_a_restamp_and_an_update_and_the_keep_label_is_read() {
    let manager = "beta-1";
    let dir = tempfile::tempdir().unwrap();
    let mut cleanup = Cleanup::new();
    let app = unique("ver");
    create_record(manager, &mut cleanup, &app, 1, SHOP);
    deploy_stack(manager, &mut cleanup, dir.path(), &app);
    let web = format!("{app}_web");
    let record = record_name(&app, 1);

    let reg = registry();
    let beta = reg.backend(&Target::new("beta")).await.unwrap();
    let read = || async {
        let release = beta
            .releases()
            .await
            .unwrap()
            .into_iter()
            .find(|r| r.name == app)
            .expect("the release is listed");
        let stacks = beta.stack_objects().await.unwrap().unwrap();
        let service = stacks[&app].services[0].clone();
        (release, service)
    };

    let (release, service) = read().await;
    let records = release.records.clone().unwrap_or_default();
    assert_eq!(records.len(), 1);
    let before = records[0].clone();
    assert_eq!(service.keep, None);

    // Restamped: the same config, a new version, the new owner.
    restamp(manager, &record, "cd/default/store:release/app");
    let (release, _) = read().await;
    let records = release.records.clone().unwrap_or_default();
    assert_eq!(
        release.owner.as_deref(),
        Some("cd/default/store:release/app")
    );
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].id, before.id);
    assert!(
        records[0].version > before.version,
        "{:?} after {before:?}",
        records[0]
    );
    assert_eq!(records[0].version, version_of(manager, "config", &record));

    // The operator's keep label, as the CLI sets it: read raw, with the
    // service's new version.
    docker(
        manager,
        &[
            "service",
            "update",
            "--detach",
            "--label-add",
            &format!("{KEEP_LABEL}=true"),
            &web,
        ],
    );
    let (_, kept) = read().await;
    assert_eq!(kept.id, service.id);
    assert_eq!(kept.keep.as_deref(), Some("true"));
    assert!(kept.version > service.version, "{kept:?} after {service:?}");
    assert_eq!(kept.version, version_of(manager, "service", &web));

    // Any update raises it again.
    docker(
        manager,
        &[
            "service",
            "update",
            "--detach",
            "--label-add",
            "other=1",
            &web,
        ],
    );
    let (_, updated) = read().await;
    assert!(updated.version > kept.version, "{updated:?} after {kept:?}");
    assert_eq!(updated.keep.as_deref(), Some("true"));
}

/// The whole read, as gathering does it over the bed's registry: the
/// release carries its record versions and its stack's objects, with its
/// volumes on every node of the swarm, an empty list where a node holds
/// none.
#[tokio::test]
async fn gathering_files_a_release_s_objects_and_volumes_per_node() {
    use sweep_core::{AppSet, NodeVolumes, Policy};
    use sweep_runner::{gather, GatherSettings};

    let manager = "gamma-1";
    let worker = "gamma-2";
    let dir = tempfile::tempdir().unwrap();
    let mut cleanup = Cleanup::new();
    let app = unique("gat");
    create_record(manager, &mut cleanup, &app, 1, SHOP);
    deploy_stack(manager, &mut cleanup, dir.path(), &app);
    create_volume(worker, &mut cleanup, &format!("{app}_wrk"), Some(&app));

    let snapshot = gather(
        &registry(),
        Policy::new("objects", true, None),
        AppSet::new(true, Vec::new()),
        GatherSettings::default(),
    )
    .await;
    let gamma = snapshot
        .swarms
        .iter()
        .find(|s| s.swarm.as_str() == "gamma")
        .expect("gamma is gathered");
    assert_eq!(gamma.error, None);
    let release = gamma
        .releases
        .iter()
        .find(|r| r.name == app)
        .unwrap_or_else(|| panic!("{app} not in {:?}", gamma.releases));
    let record = record_name(&app, 1);
    assert_eq!(
        release.records,
        Some(vec![ObjectVersion::new(
            inspect(manager, "config", &record, "{{.ID}}"),
            version_of(manager, "config", &record),
        )])
    );
    let objects = release.objects.as_ref().expect("stack objects are read");
    assert_eq!(objects.services.len(), 1);
    assert_eq!(objects.services[0].name, format!("{app}_web"));
    let conf = format!("{app}_conf");
    assert_eq!(
        objects.configs,
        [
            ObjectRef::new(inspect(manager, "config", &conf, "{{.ID}}"), &conf)
                .with_version(version_of(manager, "config", &conf))
        ]
    );
    let mut expected = vec![
        NodeVolumes::new(node_id(manager), Vec::new()),
        NodeVolumes::new(node_id(worker), names(&[&format!("{app}_wrk")])),
    ];
    expected.sort();
    assert_eq!(objects.volumes, Some(expected));
}
