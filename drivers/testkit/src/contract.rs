//! The contract of the swarms seam, as functions run against any
//! [`Registry`]: the in-memory one (this crate's tests) and the docker one
//! on real engines (`sweep-docker`'s `tests/contract.rs`). What passes here
//! against both is what the core may rely on from every backend; where the
//! two cannot agree, a [`Capabilities`] flag says so and the suite checks
//! each side of it.
//!
//! A [`Fixture`] sets up state on one swarm the way that backend can
//! (records, a stack, volumes, containers); the checks then go through the
//! seam only. Every name a check creates comes from [`Fixture::name`], so
//! the suite can run beside other users of a shared swarm.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::StreamExt;
use sweep_core::record::{record_name, Kind, Payload};
use sweep_swarms::{
    BackendError, ContainerGone, Node, ObjectRef, PayloadScope, Registry, RegistryError, StackPart,
    SwarmBackend, Target,
};

use crate::engine_record::{EngineRecord, Manifest};
use crate::remove_whole_part;

/// Where two backends answer differently, and the suite says which way
/// each goes rather than leave one of them unchecked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Removing a secret or config that a service still mounts is
    /// [`BackendError::Refused`] (Docker 20.10: 400, invalid argument,
    /// which never lifts by waiting) rather than [`BackendError::InUse`]
    /// (the model). Either way the object stays, and it goes once the
    /// service is gone.
    pub mounted_secret_refused: bool,
}

/// State set up on one swarm of a registry, the way its backend can.
#[async_trait]
pub trait Fixture: Send {
    /// The registry under test.
    fn registry(&self) -> &dyn Registry;

    /// The swarm the fixture sets state up on.
    fn target(&self) -> Target;

    /// Where this backend answers differently from others.
    fn capabilities(&self) -> Capabilities;

    /// A name no other check, run or user of the swarm uses, starting with
    /// `prefix`.
    fn name(&mut self, prefix: &str) -> String;

    /// A release record of `release`: revision `revision`, stamped
    /// `owner`, as the chart engine writes it (see
    /// [`crate::engine_record`]), under config name `config`, the engine's
    /// ([`record_name`]) unless a check needs configs the engine would not
    /// write (two of one revision).
    async fn record(&mut self, config: &str, release: &str, revision: u64, owner: Option<&str>);

    /// A release record as [`Fixture::record`] makes one, but holding
    /// `data` (the engine's, [`EngineRecord::payload`], or anything else).
    async fn record_with_data(
        &mut self,
        config: &str,
        release: &str,
        revision: u64,
        owner: Option<&str>,
        data: &[u8],
    );

    /// A secret or config (`part` is [`StackPart::Secrets`] or
    /// [`StackPart::Configs`]) named `name` in `release`'s stack, created
    /// by hand rather than deployed, carrying the controller's created
    /// marker (`com.swarmcli.cd.created`) with value `marker` when given.
    async fn stack_object(
        &mut self,
        release: &str,
        part: StackPart,
        name: &str,
        marker: Option<&str>,
    );

    /// `release`'s stack: service `<release>_web`, which mounts secret
    /// `<release>_tok` and config `<release>_conf` and is attached to
    /// network `<release>_front`; returns once its task runs.
    async fn deploy(&mut self, release: &str);

    /// Volume `name` of `release`'s stack on the manager's own daemon.
    async fn volume(&mut self, name: &str, release: &str);

    /// A stopped container on the manager's own daemon that uses volume
    /// `name`.
    async fn container_using(&mut self, volume: &str);

    /// A container of `release`'s stack on the manager's own daemon goes
    /// (stops and is removed).
    async fn container_goes(&mut self, release: &str);

    /// A node of the manager's node list that the registry cannot reach.
    async fn unreachable_node(&mut self) -> String;

    /// Which of the configs `names` were removed so far, in the order they
    /// were removed (waiting a little for the backend to say so).
    async fn removed_configs(&self, names: &[String]) -> Vec<String>;
}

async fn manager(f: &dyn Fixture) -> std::sync::Arc<dyn SwarmBackend> {
    f.registry()
        .backend(&f.target())
        .await
        .unwrap_or_else(|e| panic!("the manager of {:?}: {e}", f.target()))
}

/// How long the engine may take to let go of what a removed service held.
const LET_GO: Duration = Duration::from_secs(60);

/// `attempt` again every 200 ms while it is [`BackendError::InUse`], for
/// up to [`LET_GO`]: the sweep's retry, which the core owns; a check that
/// is not about it just needs the object gone.
async fn until_free<F, Fut>(mut attempt: F) -> Result<(), BackendError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), BackendError>>,
{
    let deadline = Instant::now() + LET_GO;
    loop {
        match attempt().await {
            Err(BackendError::InUse { .. }) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            other => return other,
        }
    }
}

/// Removes `release`'s stack in the sweep's order: its services, then
/// (once their tasks have stopped) every other part, each part as the
/// stack holds it when tried.
async fn remove_stack(backend: &dyn SwarmBackend, release: &str) {
    remove_whole_part(backend, release, StackPart::Services)
        .await
        .unwrap();
    until_free(|| backend.remove_stack_part(release, StackPart::Tasks, &[]))
        .await
        .unwrap();
    for part in [StackPart::Networks, StackPart::Secrets, StackPart::Configs] {
        until_free(|| remove_whole_part(backend, release, part))
            .await
            .unwrap_or_else(|e| panic!("{part} of {release}: {e}"));
    }
}

/// One test per check of the suite, each on a fixture of its own made by
/// `$fixture` (an expression, evaluated once per test): every backend
/// runs every check, and a check added here runs on all of them.
#[macro_export]
macro_rules! contract_suite {
    ($fixture:expr) => {
        $crate::contract_suite!(@tests $fixture;
            listing, revisions, revision_ties, removal, changed, in_use, node_reach, events);
    };
    (@tests $fixture:expr; $($check:ident),*) => {
        $(
            #[tokio::test]
            async fn $check() {
                let mut fixture = $fixture;
                $crate::contract::$check(&mut fixture).await;
            }
        )*
    };
}

/// Releases are listed once each, with the stamp of the highest revision
/// (numerically: 10 above 2) and every revision's record; a stack without
/// records is no release, and a release's records are no stack objects. A
/// stack's objects are listed by namespace, its volumes with their stack;
/// the node list agrees with itself.
pub async fn listing(f: &mut dyn Fixture) {
    let app = f.name("ct-list");
    let bare = f.name("ct-bare");
    let stack = f.name("ct-stack");
    f.record(&record_name(&app, 1), &app, 1, Some("owner-a"))
        .await;
    f.record(&record_name(&app, 10), &app, 10, Some("owner-c"))
        .await;
    f.record(&record_name(&app, 2), &app, 2, Some("owner-b"))
        .await;
    f.record(&record_name(&bare, 1), &bare, 1, None).await;
    f.deploy(&stack).await;
    let data = format!("{stack}_data");
    f.volume(&data, &stack).await;
    let backend = manager(f).await;

    let releases = backend.releases().await.unwrap();
    let mine: Vec<(&str, Option<&str>, usize)> = releases
        .iter()
        .filter(|r| [&app, &bare, &stack].contains(&&r.name))
        .map(|r| {
            let records = r.records.as_ref().expect("a backend reads record versions");
            (r.name.as_str(), r.owner.as_deref(), records.len())
        })
        .collect();
    let mut expected = vec![(app.as_str(), Some("owner-c"), 3), (bare.as_str(), None, 1)];
    expected.sort();
    let mut mine_sorted = mine.clone();
    mine_sorted.sort();
    assert_eq!(mine_sorted, expected, "{releases:?}");
    let names: Vec<&str> = releases.iter().map(|r| r.name.as_str()).collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "a release listed twice: {names:?}"
    );

    let stacks = backend
        .stack_objects()
        .await
        .unwrap()
        .expect("stack objects are read");
    assert!(!stacks.contains_key(&app), "records listed as a stack");
    let objects = &stacks[&stack];
    let named = |list: &[ObjectRef]| list.iter().map(|o| o.name.clone()).collect::<Vec<_>>();
    assert_eq!(
        objects
            .services
            .iter()
            .map(|s| s.name.clone())
            .collect::<Vec<_>>(),
        [format!("{stack}_web")]
    );
    assert!(objects.services.iter().all(|s| !s.id.is_empty()));
    assert_eq!(named(&objects.networks), [format!("{stack}_front")]);
    assert_eq!(named(&objects.secrets), [format!("{stack}_tok")]);
    assert_eq!(named(&objects.configs), [format!("{stack}_conf")]);

    assert_eq!(
        backend.stack_volumes(&stack).await.unwrap(),
        vec![data.clone()]
    );
    let volumes = backend
        .volumes_by_stack()
        .await
        .unwrap()
        .expect("volumes by stack are read");
    assert_eq!(volumes.get(&stack), Some(&vec![data.clone()]));

    let ids = backend.node_ids().await.unwrap();
    assert_eq!(backend.node_count().await.unwrap(), ids.len());
    let members: Vec<String> = backend
        .members()
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.id)
        .collect();
    assert_eq!(members, ids);
    let own = backend.own_node_id().await.unwrap().expect("own node id");
    assert!(ids.contains(&own), "{own} not in {ids:?}");
    assert!(!backend.cluster_id().await.unwrap().is_empty());
}

/// Every record of every release is listed as a revision with its name
/// and its revision and owner labels as written; what a record's data says
/// is read for the releases in scope and for those alone (a record whose
/// data is no engine document reads as unreadable, alone), and never
/// without a scope. A stack's secrets and configs carry their version and
/// the controller's created marker as labelled.
pub async fn revisions(f: &mut dyn Fixture) {
    let app = f.name("ct-rev");
    let other = f.name("ct-out");
    let owner = format!("cd/default/shop:release/{app}");
    let manifest = Manifest::new("busybox")
        .service("web")
        .config("conf")
        .render();
    for revision in [1, 2] {
        let record = EngineRecord::new(&app, revision)
            .with_owner(Some(&owner))
            .with_manifest(manifest.clone());
        f.record_with_data(
            &record.name(),
            &app,
            revision,
            Some(&owner),
            &record.payload(),
        )
        .await;
    }
    // Not the engine's data.
    f.record_with_data(
        &record_name(&app, 3),
        &app,
        3,
        Some(&owner),
        b"not a record",
    )
    .await;
    let record = EngineRecord::new(&other, 1).with_owner(Some("o"));
    f.record_with_data(&record.name(), &other, 1, Some("o"), &record.payload())
        .await;
    let old = format!("{app}_old");
    let key = format!("{app}_key");
    f.stack_object(&app, StackPart::Configs, &old, Some("true"))
        .await;
    f.stack_object(&app, StackPart::Secrets, &key, None).await;
    let backend = manager(f).await;

    let releases = backend
        .releases_with_payloads(&PayloadScope::of([app.clone()]))
        .await
        .unwrap();
    let find = |name: &str| {
        releases
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("{name} not listed: {releases:?}"))
            .revisions
            .clone()
            .unwrap_or_else(|| panic!("{name}: no revisions"))
    };
    let mine = find(&app);
    let labels: Vec<(String, Option<String>, Option<String>)> = mine
        .iter()
        .map(|r| (r.name.clone(), r.revision.clone(), r.owner.clone()))
        .collect();
    let expected: Vec<(String, Option<String>, Option<String>)> = (1..=3)
        .map(|n| {
            (
                record_name(&app, n),
                Some(n.to_string()),
                Some(owner.clone()),
            )
        })
        .collect();
    assert_eq!(labels, expected);
    for (revision, number) in mine.iter().zip(1..) {
        match (&revision.payload, number) {
            (Some(Payload::Read(document)), 1 | 2) => {
                assert_eq!(document.release, app);
                assert_eq!(document.revision, number);
                assert_eq!(document.owner.as_deref(), Some(owner.as_str()));
                assert!(document
                    .declares
                    .contains(Kind::Service, &format!("{app}_web")));
                assert!(document
                    .declares
                    .contains(Kind::Config, &format!("{app}_conf")));
            }
            (Some(Payload::Unreadable(why)), 3) => {
                assert_eq!(why, "the record data is not gzip");
            }
            (other, _) => panic!("revision {number}: {other:?}"),
        }
    }
    let theirs = find(&other);
    assert_eq!(theirs.len(), 1);
    assert_eq!(
        (theirs[0].revision.as_deref(), theirs[0].owner.as_deref()),
        (Some("1"), Some("o"))
    );
    assert_eq!(theirs[0].payload, None, "out of scope, its data is read");

    let unscoped = backend.releases().await.unwrap();
    for release in unscoped
        .iter()
        .filter(|r| [&app, &other].contains(&&r.name))
    {
        let revisions = release.revisions.as_deref().unwrap_or_default();
        assert!(!revisions.is_empty(), "{}: no revisions", release.name);
        assert!(
            revisions.iter().all(|r| r.payload.is_none()),
            "{}: data read without a scope",
            release.name
        );
    }

    let stacks = backend
        .stack_objects()
        .await
        .unwrap()
        .expect("stack objects are read");
    let objects = &stacks[&app];
    let config = objects
        .configs
        .iter()
        .find(|c| c.name == old)
        .unwrap_or_else(|| panic!("{old} not listed: {objects:?}"));
    assert_eq!(config.cd_created.as_deref(), Some("true"));
    assert!(config.version.is_some(), "{config:?}");
    let secret = objects
        .secrets
        .iter()
        .find(|s| s.name == key)
        .unwrap_or_else(|| panic!("{key} not listed: {objects:?}"));
    assert_eq!(secret.cd_created, None);
    assert!(secret.version.is_some(), "{secret:?}");
}

/// Two records claiming the newest revision: with one owner they stand
/// together for the release, and removal goes oldest revision first
/// (numerically: 2 before 10) and, within a revision, by config name
/// (never by the order the backend happens to list them in), so an
/// interrupted removal leaves the same records behind on every backend.
pub async fn revision_ties(f: &mut dyn Fixture) {
    let app = f.name("ct-tie");
    // Created out of both orders.
    let configs = [
        (format!("{app}.b"), 10, "us"),
        (format!("{app}.a"), 10, "us"),
        (format!("{app}.d"), 2, "old"),
        (format!("{app}.c"), 1, "old"),
    ];
    for (config, revision, owner) in &configs {
        f.record(config, &app, *revision, Some(owner)).await;
    }
    let backend = manager(f).await;
    let releases = backend.releases().await.unwrap();
    let mine = releases
        .iter()
        .find(|r| r.name == app)
        .unwrap_or_else(|| panic!("{app} not listed: {releases:?}"));
    assert_eq!(mine.owner.as_deref(), Some("us"));
    assert_eq!(mine.records.as_ref().map(Vec::len), Some(4));

    backend.remove_release_records(&app).await.unwrap();
    let names: Vec<String> = configs.iter().map(|(c, _, _)| c.clone()).collect();
    let order = ["c", "d", "a", "b"].map(|c| format!("{app}.{c}"));
    assert_eq!(f.removed_configs(&names).await, order);
    assert!(!backend
        .releases()
        .await
        .unwrap()
        .iter()
        .any(|r| r.name == app));
}

/// Removal takes exactly what it is asked to, in the sweep's order, and
/// removing what is already gone is success: records (every revision,
/// another release's staying, the stack staying), the stack part by part
/// (tasks `Ok` once stopped), volumes.
pub async fn removal(f: &mut dyn Fixture) {
    let app = f.name("ct-rm");
    let other = f.name("ct-keep");
    f.record(&record_name(&app, 1), &app, 1, Some("o")).await;
    f.record(&record_name(&app, 2), &app, 2, Some("o")).await;
    f.record(&record_name(&other, 1), &other, 1, Some("o"))
        .await;
    f.deploy(&app).await;
    let data = format!("{app}_data");
    f.volume(&data, &app).await;
    let backend = manager(f).await;

    backend.remove_release_records(&app).await.unwrap();
    backend.remove_release_records(&app).await.unwrap();
    let releases = backend.releases().await.unwrap();
    assert!(!releases.iter().any(|r| r.name == app), "{releases:?}");
    assert!(releases.iter().any(|r| r.name == other), "{releases:?}");
    let stacks = backend.stack_objects().await.unwrap().unwrap_or_default();
    assert!(stacks.contains_key(&app), "records took the stack along");

    let before = stacks[&app].clone();
    remove_stack(&*backend, &app).await;
    // The manager may list its own copy of a swarm network a moment
    // longer; once the stack is gone from the listing, every part of it,
    // named as it was, is gone already: success.
    let deadline = Instant::now() + LET_GO;
    while backend
        .stack_objects()
        .await
        .unwrap()
        .unwrap_or_default()
        .contains_key(&app)
    {
        assert!(Instant::now() < deadline, "stack {app} still listed");
        until_free(|| remove_whole_part(&*backend, &app, StackPart::Networks))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let services: Vec<ObjectRef> = before
        .services
        .iter()
        .map(|s| ObjectRef::new(&s.id, &s.name))
        .collect();
    for (part, objects) in [
        (StackPart::Services, &services),
        (StackPart::Networks, &before.networks),
        (StackPart::Secrets, &before.secrets),
        (StackPart::Configs, &before.configs),
    ] {
        backend
            .remove_stack_part(&app, part, objects)
            .await
            .unwrap_or_else(|e| panic!("{part} again: {e}"));
    }

    until_free(|| backend.remove_volume(&data)).await.unwrap();
    backend.remove_volume(&data).await.unwrap();
    assert!(backend.stack_volumes(&app).await.unwrap().is_empty());
    let releases = backend.releases().await.unwrap();
    assert!(releases.iter().any(|r| r.name == other), "{releases:?}");
}

/// An object given at a version it is no longer at (changed since it was
/// judged: a redeploy that declares it again updates it in place) is left
/// in place and reported as [`BackendError::Other`], never removed; the
/// others given with it still go. Given at the version it is at, it goes.
pub async fn changed(f: &mut dyn Fixture) {
    let app = f.name("ct-changed");
    f.record(&record_name(&app, 1), &app, 1, Some("o")).await;
    f.deploy(&app).await;
    let backend = manager(f).await;
    let listed = || async {
        let stacks = backend.stack_objects().await.unwrap().unwrap_or_default();
        stacks.get(&app).cloned().unwrap_or_default()
    };
    let before = listed().await;
    assert_eq!(before.services.len(), 1, "{before:?}");
    assert_eq!(before.configs.len(), 1, "{before:?}");
    let service = &before.services[0];
    let stale = [ObjectRef::new(&service.id, &service.name).with_version(service.version + 1)];
    let refused = backend
        .remove_stack_part(&app, StackPart::Services, &stale)
        .await;
    assert!(
        matches!(refused, Err(BackendError::Other { .. })),
        "{refused:?}"
    );
    assert_eq!(
        listed().await.services,
        before.services,
        "removed though changed"
    );

    let config = &before.configs[0];
    let version = config.version.expect("a config is listed with its version");
    let stale = [config.clone().with_version(version + 1)];
    let refused = backend
        .remove_stack_part(&app, StackPart::Configs, &stale)
        .await;
    assert!(
        matches!(refused, Err(BackendError::Other { .. })),
        "{refused:?}"
    );
    assert_eq!(
        listed().await.configs,
        before.configs,
        "removed though changed"
    );

    // At the versions they are at, they go.
    let current = [ObjectRef::new(&service.id, &service.name).with_version(service.version)];
    backend
        .remove_stack_part(&app, StackPart::Services, &current)
        .await
        .unwrap();
    assert!(listed().await.services.is_empty());

    // A network is listed without a version: given at one, nothing proves
    // it is still at it, and it stays.
    let network = before.networks.first().expect("the stack has a network");
    assert_eq!(network.version, None, "{network:?}");
    let unproven = [network.clone().with_version(1)];
    let refused = backend
        .remove_stack_part(&app, StackPart::Networks, &unproven)
        .await;
    assert!(
        matches!(refused, Err(BackendError::Other { .. })),
        "{refused:?}"
    );
    assert_eq!(
        listed().await.networks,
        before.networks,
        "removed though no version proved it"
    );
    remove_stack(&*backend, &app).await;
    backend.remove_release_records(&app).await.unwrap();
}

/// What is in use stays: a volume a stopped container uses is
/// [`BackendError::InUse`]; a network a standing service is attached to is
/// `InUse`; a secret or config it mounts is `InUse` or `Refused` as
/// [`Capabilities::mounted_secret_refused`] says. Each is still listed
/// after, and goes once its user is gone.
pub async fn in_use(f: &mut dyn Fixture) {
    let app = f.name("ct-use");
    f.deploy(&app).await;
    let data = format!("{app}_data");
    f.volume(&data, &app).await;
    f.container_using(&data).await;
    let refused = f.capabilities().mounted_secret_refused;
    let backend = manager(f).await;

    match backend.remove_volume(&data).await {
        Err(BackendError::InUse { object, .. }) => assert!(object.contains(&data), "{object}"),
        other => panic!("a volume a container uses: {other:?}"),
    }
    assert_eq!(
        backend.stack_volumes(&app).await.unwrap(),
        vec![data.clone()]
    );

    match remove_whole_part(&*backend, &app, StackPart::Networks).await {
        Err(BackendError::InUse { .. }) => {}
        other => panic!("a network a service uses: {other:?}"),
    }
    for part in [StackPart::Secrets, StackPart::Configs] {
        match remove_whole_part(&*backend, &app, part).await {
            Err(BackendError::Refused { .. }) if refused => {}
            Err(BackendError::InUse { .. }) if !refused => {}
            other => panic!("{part} a service mounts (refused: {refused}): {other:?}"),
        }
    }
    let stacks = backend.stack_objects().await.unwrap().unwrap_or_default();
    let objects = &stacks[&app];
    assert_eq!(
        (
            objects.networks.len(),
            objects.secrets.len(),
            objects.configs.len()
        ),
        (1, 1, 1),
        "something in use went"
    );

    // Each goes once the service is gone.
    remove_stack(&*backend, &app).await;
}

/// Nodes are listed by the id their daemon answers with, once each (which
/// of them count is the planner's rule: those on the manager's node list);
/// a node that cannot be reached is not listed and has no backend; a
/// reached node's backend lists and removes its own volumes.
pub async fn node_reach(f: &mut dyn Fixture) {
    let app = f.name("ct-node");
    let data = format!("{app}_data");
    f.volume(&data, &app).await;
    let away = f.unreachable_node().await;
    let target = f.target();
    let backend = manager(f).await;
    let ids = backend.node_ids().await.unwrap();
    assert!(ids.contains(&away), "{away} not in {ids:?}");
    let own = backend.own_node_id().await.unwrap().expect("own node id");

    let reach = f.registry().as_node_reach().expect("node reach");
    let nodes = reach.nodes(&target).await.unwrap().expect("nodes listed");
    let reached: Vec<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    let unique: BTreeSet<&str> = reached.iter().copied().collect();
    assert_eq!(unique.len(), reached.len(), "{reached:?}");
    assert!(!reached.contains(&away.as_str()), "{away} reached");
    assert!(reached.contains(&own.as_str()), "{own} not reached");

    let manager_node = nodes.iter().find(|n| n.id == own).expect("own node");
    let node = reach.node_backend(&target, manager_node).await.unwrap();
    assert_eq!(node.stack_volumes(&app).await.unwrap(), vec![data.clone()]);
    assert_eq!(
        node.volumes_by_stack()
            .await
            .unwrap()
            .and_then(|mut v| v.remove(&app)),
        Some(vec![data.clone()])
    );
    node.remove_volume(&data).await.unwrap();
    node.remove_volume(&data).await.unwrap();
    assert!(node.stack_volumes(&app).await.unwrap().is_empty());

    match reach
        .node_backend(&target, &Node::new(away.clone(), ""))
        .await
    {
        Err(RegistryError::Connect { swarm, .. } | RegistryError::UnknownNode { swarm, .. }) => {
            assert_eq!(swarm, target.as_str());
        }
        Err(other) => panic!("an unreachable node: {other:?}"),
        Ok(_) => panic!("a backend for unreachable node {away}"),
    }
}

/// A container of a stack that goes on the manager's own daemon is told
/// to a subscriber of its events, with its stack namespace. A daemon tells
/// only what happens once the subscription reached it, and a stream may
/// send its request when first polled: the container goes again until the
/// subscription is live, within a bound.
pub async fn events(f: &mut dyn Fixture) {
    let app = f.name("ct-event");
    let backend = manager(f).await;
    let mut events = backend.container_events().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "no event for {app}");
        // Polled first, so that the request is out before the container
        // goes.
        let _ = tokio::time::timeout(Duration::from_millis(50), events.next()).await;
        f.container_goes(&app).await;
        let wait = Instant::now() + Duration::from_secs(5);
        loop {
            let left = wait.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, events.next()).await {
                Ok(Some(Ok(gone))) if gone == ContainerGone::new(app.clone()) => return,
                // Another user's container on a shared daemon.
                Ok(Some(Ok(_))) => {}
                Err(_) => break,
                Ok(other) => panic!("the subscription broke: {other:?}"),
            }
        }
    }
}
