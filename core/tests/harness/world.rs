//! A model world: swarms with nodes, release stacks, records and volumes,
//! that carries out sweep actions, with fault knobs, and records every
//! breach of the sweep's safety rules it sees as a violation.

use std::collections::{BTreeMap, BTreeSet};

use sweep_core::objects::ObjectRef;
use sweep_core::reads::UnreadNode;
use sweep_core::sweep::{Action, ActionKind, Outcome, StackPart, StampRead, UsageRead, Where};
use sweep_core::usage::{ContainerUse, NodeContainers, ServiceUse, Usage};
use sweep_core::{
    plan, AppSet, AppState, Application, Coverage, NodeEntry, Policy, ReleaseEntry, ReleaseRef,
    ServiceEntry, Snapshot, StackObjects, SwarmName, SwarmSnapshot, SweepPlan,
};

pub const CONTROLLER: &str = "cd1";

/// How the registry reaches a swarm's nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Node by node; only nodes with `listed` set are reached.
    Nodes,
    /// Not at all: only the manager (the first node) is seen.
    ManagerOnly,
}

/// What a re-listing lists releases by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListingBy {
    /// Release records, like `SwarmBackend::releases`.
    #[default]
    Records,
    /// Stacks: a driver that lists `docker stack ls`.
    Stacks,
}

#[derive(Debug, Clone)]
pub struct ModelNode {
    pub id: String,
    pub hostname: String,
    /// The registry lists (reaches) it.
    pub listed: bool,
    /// Listed, but its daemon did not answer for its volumes or
    /// containers when the snapshot was gathered: the snapshot records it
    /// in `unread_nodes`, and the planner's rule counts it as not reached.
    pub unread: bool,
    /// Another swarm's daemon, configured as a node of this one: the
    /// registry reaches it and it answers with its own node id, which is
    /// not on this swarm's node list. Its volumes are never this swarm's,
    /// whatever their labels say.
    pub stranger: bool,
    /// Volume name -> the release whose stack label it carries.
    pub volumes: BTreeMap<String, String>,
}

#[derive(Debug, Clone)]
pub struct ModelSwarm {
    /// The first node is the manager.
    pub nodes: Vec<ModelNode>,
    pub reach: Reach,
    /// The swarm reports its node count.
    pub count_known: bool,
    /// Release -> the parts of its stack still standing.
    pub stacks: BTreeMap<String, BTreeSet<StackPart>>,
    /// Release -> owner stamp.
    pub records: BTreeMap<String, String>,
    /// The stack the controller runs as, unknown to the snapshot: the
    /// backend refuses to remove it.
    pub own_stack: Option<String>,
    /// Swarms with the same cluster id are one cluster under several
    /// names; each name keeps its own copy of the records, so the names
    /// can disagree like reads of one cluster at different moments.
    pub cluster_id: Option<String>,
}

/// What a scheduled restamp does to a release's records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewStamp {
    /// The newest record now carries this raw stamp (`""`: none).
    Stamp(String),
    /// Redeployed by `application` of this controller: restamped for it,
    /// and its stack stands again.
    Redeploy(String),
    /// Its records are removed.
    Remove,
}

/// A change to a release's records between the plan and a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restamp {
    /// The name the change shows under; `None`: the release's own swarm.
    pub under: Option<SwarmName>,
    pub to: NewStamp,
}

/// Faults. Counts are "the next N attempts"; they are used up.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Removing the stack's services fails and the stack stays.
    pub stack_fails: BTreeMap<ReleaseRef, u32>,
    /// Removing the stack's networks works but reports an error (as a
    /// swarm-scoped network delete can).
    pub stack_lies: BTreeMap<ReleaseRef, u32>,
    /// (release, part) -> attempts answered "in use" (a network still
    /// attached to tasks stopping).
    pub part_in_use: BTreeMap<(ReleaseRef, StackPart), u32>,
    pub records_fail: BTreeMap<ReleaseRef, u32>,
    pub records_lie: BTreeMap<ReleaseRef, u32>,
    /// (swarm, node id, volume) -> attempts answered "in use".
    pub in_use: BTreeMap<(SwarmName, String, String), u32>,
    /// Nodes that cannot be reached at all.
    pub unreachable: BTreeSet<(SwarmName, String)>,
    /// Nodes that answer the listing, then vanish before any removal.
    pub vanish_after_listing: BTreeSet<(SwarmName, String)>,
    /// Nodes whose volume listing fails.
    pub list_fails: BTreeSet<(SwarmName, String)>,
    pub relist_fails: BTreeSet<SwarmName>,
    pub listing_by: ListingBy,
    /// (release, n) -> the change made to its records just before its
    /// n-th re-read (`ReadStamps`, counted from 0), so that the read sees
    /// it: a restamp, redeploy or removal between the plan and a step.
    pub restamp: BTreeMap<(ReleaseRef, u32), Restamp>,
    /// Re-reads of these releases fail (unreachable).
    pub read_fails: BTreeSet<ReleaseRef>,
    /// (release) -> the parts of its stack (networks, secrets, configs)
    /// that a service of another workload names: never to be removed.
    pub shared: BTreeMap<ReleaseRef, BTreeSet<StackPart>>,
    /// Volumes a container of another workload uses, by swarm and name
    /// (on the swarm's first node): never to be removed, on any node.
    pub shared_volumes: BTreeSet<(SwarmName, String)>,
    /// Usage reads of these releases fail (unreachable).
    pub usage_fails: BTreeSet<ReleaseRef>,
    /// (release) -> parts of its stack that a service of another workload
    /// starts to name at the moment their removal is answered "in use"
    /// (a `part_in_use` fault firing): shared from then on.
    pub shared_on_in_use: BTreeMap<ReleaseRef, BTreeSet<StackPart>>,
    /// (release, volume) -> a service of another stack, at 0 replicas (no
    /// container), starts to mount the volume at the moment its removal is
    /// answered "in use" (an `in_use` fault firing): the engine would let
    /// it go at the next try, and it must never be removed from then on.
    pub named_on_in_use: BTreeSet<(ReleaseRef, String)>,
    /// The volumes such a service mounts now.
    pub named_volumes: BTreeSet<(ReleaseRef, String)>,
    /// The releases one of those faults fired for.
    pub named_since: BTreeSet<ReleaseRef>,
    /// Releases whose network a stopped container of no service is
    /// attached to, on the last node the plan reached (the manager without
    /// node reach; nowhere when it reached none), since the plan: the
    /// engine lets the network go, and only a read of that node's
    /// containers finds the container.
    pub attached: BTreeSet<ReleaseRef>,
    /// Releases whose network such a container is attached to at the
    /// moment its removal is answered "in use" (a `part_in_use` fault of
    /// the networks firing): the container that held it stopped, and stays
    /// attached from then on.
    pub attached_on_in_use: BTreeSet<ReleaseRef>,
    /// Swarms a node joins right after the plan, unknown to it, with the
    /// releases a task of which lands there at once, with a volume of the
    /// release (out of every purge's reach). Only the swarm's node list,
    /// read again, tells.
    pub joined: BTreeMap<SwarmName, BTreeSet<String>>,
}

/// One action as the world saw it.
#[derive(Debug, Clone)]
pub struct Executed {
    pub at: sweep_core::Timestamp,
    pub kind: ActionKind,
    pub outcome: Outcome,
}

#[derive(Debug, Clone)]
pub struct World {
    pub purge: bool,
    pub swarms: BTreeMap<SwarmName, ModelSwarm>,
    /// The applications still in the app set.
    pub live: Vec<Application>,
    pub app_set_loaded: bool,
    pub faults: Faults,
    pub log: Vec<Executed>,
    pub violations: Vec<String>,
    /// The plan being carried out, to check actions against.
    pub plan: Option<SweepPlan>,
    /// Re-reads so far, by release.
    pub reads: BTreeMap<ReleaseRef, u32>,
    /// Releases whose records a scheduled restamp changed: nothing may be
    /// removed from them afterwards.
    pub changed: BTreeSet<ReleaseRef>,
}

impl World {
    pub fn new(purge: bool) -> Self {
        World {
            purge,
            swarms: BTreeMap::new(),
            // An application that stays, so the app set is never empty.
            live: vec![Application::reconciled("keeper", "", &[])],
            app_set_loaded: true,
            faults: Faults::default(),
            log: Vec::new(),
            violations: Vec::new(),
            plan: None,
            reads: BTreeMap::new(),
            changed: BTreeSet::new(),
        }
    }

    /// Schedules `to` for `swarm/release`, just before its `nth` re-read.
    pub fn restamp(&mut self, swarm: &str, release: &str, nth: u32, to: NewStamp) -> &mut Self {
        let key = (ReleaseRef::new(swarm, release), nth);
        self.faults.restamp.insert(key, Restamp { under: None, to });
        self
    }

    /// Like [`restamp`](Self::restamp), shown under another name of the
    /// cluster only.
    pub fn restamp_under(
        &mut self,
        swarm: &str,
        release: &str,
        nth: u32,
        under: &str,
        to: NewStamp,
    ) -> &mut Self {
        let key = (ReleaseRef::new(swarm, release), nth);
        let under = Some(SwarmName::new(under));
        self.faults.restamp.insert(key, Restamp { under, to });
        self
    }

    /// Makes `swarm` a name of cluster `id`.
    pub fn cluster(&mut self, swarm: &str, id: &str) -> &mut Self {
        if let Some(s) = self.swarms.get_mut(&SwarmName::new(swarm)) {
            s.cluster_id = Some(id.to_owned());
        }
        self
    }

    /// The release's current raw stamp (`Some("")`: none), `None` without
    /// records.
    pub fn stamp(&self, swarm: &str, release: &str) -> Option<String> {
        self.swarms
            .get(&SwarmName::new(swarm))
            .and_then(|s| s.records.get(release).cloned())
    }

    /// A swarm with `nodes` as (id, hostname, listed by the registry).
    pub fn swarm(
        &mut self,
        name: &str,
        nodes: &[(&str, &str, bool)],
        reach: Reach,
        count_known: bool,
    ) -> &mut Self {
        let nodes = nodes
            .iter()
            .map(|(id, host, listed)| ModelNode {
                id: (*id).to_owned(),
                hostname: (*host).to_owned(),
                listed: *listed,
                unread: false,
                stranger: false,
                volumes: BTreeMap::new(),
            })
            .collect();
        self.swarms.insert(
            SwarmName::new(name),
            ModelSwarm {
                nodes,
                reach,
                count_known,
                stacks: BTreeMap::new(),
                records: BTreeMap::new(),
                own_stack: None,
                cluster_id: None,
            },
        );
        self
    }

    /// A release of `app` (this controller's), with its stack, its records
    /// and volumes `(node id, short name)`, named `<release>_<short>`.
    pub fn release(
        &mut self,
        swarm: &str,
        release: &str,
        app: &str,
        volumes: &[(&str, &str)],
    ) -> &mut Self {
        let stamp = format!("cd/{CONTROLLER}/{app}:release/{release}");
        self.release_stamped(swarm, release, Some(stamp), volumes)
    }

    /// A release with any stamp (`None`: unmanaged).
    pub fn release_stamped(
        &mut self,
        swarm: &str,
        release: &str,
        stamp: Option<String>,
        volumes: &[(&str, &str)],
    ) -> &mut Self {
        let Some(s) = self.swarms.get_mut(&SwarmName::new(swarm)) else {
            panic!("no swarm {swarm:?} in the model");
        };
        s.stacks.insert(release.to_owned(), full_stack());
        s.records
            .insert(release.to_owned(), stamp.unwrap_or_default());
        for (node, short) in volumes {
            let Some(n) = s.nodes.iter_mut().find(|n| n.id == *node) else {
                panic!("no node {node:?} on swarm {swarm:?}");
            };
            n.volumes
                .insert(format!("{release}_{short}"), release.to_owned());
        }
        self
    }

    /// An application that stays in the app set and declares `releases`.
    pub fn live_app(&mut self, name: &str, swarm: &str, releases: &[&str]) -> &mut Self {
        self.live
            .push(Application::reconciled(name, swarm, releases));
        self
    }

    pub fn snapshot(&self) -> Snapshot {
        let swarms = self
            .swarms
            .iter()
            .map(|(name, s)| {
                let mut snap = SwarmSnapshot::new(name.clone());
                snap.releases = s
                    .records
                    .iter()
                    .map(|(r, stamp)| {
                        ReleaseEntry::new(r.clone(), (!stamp.is_empty()).then(|| stamp.clone()))
                    })
                    .collect();
                snap.nodes = match s.reach {
                    Reach::Nodes => Some(
                        s.nodes
                            .iter()
                            .filter(|n| n.listed)
                            .map(|n| NodeEntry::new(n.id.clone(), n.hostname.clone()))
                            .collect(),
                    ),
                    Reach::ManagerOnly => None,
                };
                snap.unread_nodes = s
                    .nodes
                    .iter()
                    .filter(|n| n.listed && n.unread && s.reach == Reach::Nodes)
                    .map(|n| UnreadNode::new(n.id.clone(), "no answer when gathered"))
                    .collect();
                // The manager lists its own nodes, down ones included, and
                // counts them; a stranger is on neither.
                let own: Vec<&ModelNode> = s.nodes.iter().filter(|n| !n.stranger).collect();
                if s.reach == Reach::Nodes {
                    snap.members = Some(
                        own.iter()
                            .map(|n| NodeEntry::new(n.id.clone(), n.hostname.clone()))
                            .collect(),
                    );
                }
                snap.node_count = s.count_known.then_some(own.len() as u64);
                snap.cluster_id = s.cluster_id.clone();
                snap
            })
            .collect();
        let apps = AppSet::new(self.app_set_loaded, self.live.clone());
        Snapshot::new(Policy::new(CONTROLLER, self.purge, None), apps, swarms)
    }

    pub fn plan(&self) -> SweepPlan {
        match plan(&self.snapshot()) {
            Ok(p) => p,
            Err(e) => panic!("the model's snapshot does not plan: {e}"),
        }
    }

    // ----- queries -------------------------------------------------------

    pub fn has_stack(&self, swarm: &str, release: &str) -> bool {
        self.swarms
            .get(&SwarmName::new(swarm))
            .is_some_and(|s| s.stacks.get(release).is_some_and(|p| !p.is_empty()))
    }

    /// The part `part` of the release's stack is still there.
    pub fn has_part(&self, swarm: &str, release: &str, part: StackPart) -> bool {
        self.swarms
            .get(&SwarmName::new(swarm))
            .is_some_and(|s| s.stacks.get(release).is_some_and(|p| p.contains(&part)))
    }

    /// The stack stands but for what another workload uses.
    pub fn has_own_stack(&self, swarm: &str, release: &str) -> bool {
        let shared = self.shared_parts(&ReleaseRef::new(swarm, release));
        self.swarms.get(&SwarmName::new(swarm)).is_some_and(|s| {
            s.stacks
                .get(release)
                .is_some_and(|p| p.iter().any(|part| !shared.contains(part)))
        })
    }

    /// The parts of `release`'s stack another workload uses now: named by
    /// a service, or (the networks) attached to a container.
    pub fn shared_parts(&self, release: &ReleaseRef) -> BTreeSet<StackPart> {
        let mut parts = self.faults.shared.get(release).cloned().unwrap_or_default();
        // A container where nothing reaches is beyond any read: the limit
        // the guide states, not this rule's to model.
        let reached = self
            .swarms
            .get(&release.swarm)
            .and_then(attached_node)
            .is_some();
        if reached && self.faults.attached.contains(release) {
            parts.insert(StackPart::Networks);
        }
        parts
    }

    /// Whether another workload uses something of `release` (a part of
    /// its stack, or one started to use something during the sweep).
    pub fn shares(&self, release: &ReleaseRef) -> bool {
        !self.shared_parts(release).is_empty() || self.named_since(release)
    }

    /// Whether another workload started to use an object of `release`
    /// during the sweep (a `*_on_in_use` fault fired).
    pub fn named_since(&self, release: &ReleaseRef) -> bool {
        self.faults.named_since.contains(release)
    }

    /// Whether another workload uses the volume `name` on `swarm`.
    pub fn volume_shared(&self, swarm: &SwarmName, name: &str) -> bool {
        self.faults
            .shared_volumes
            .contains(&(swarm.clone(), name.to_owned()))
    }

    pub fn has_records(&self, swarm: &str, release: &str) -> bool {
        self.swarms
            .get(&SwarmName::new(swarm))
            .is_some_and(|s| s.records.contains_key(release))
    }

    /// The release's volumes still held, by node id.
    pub fn volumes(&self, swarm: &str, release: &str) -> BTreeMap<String, Vec<String>> {
        let mut out = BTreeMap::new();
        if let Some(s) = self.swarms.get(&SwarmName::new(swarm)) {
            for n in &s.nodes {
                let vols: Vec<String> = n
                    .volumes
                    .iter()
                    .filter(|(_, r)| r.as_str() == release)
                    .map(|(v, _)| v.clone())
                    .collect();
                if !vols.is_empty() {
                    out.insert(n.id.clone(), vols);
                }
            }
        }
        out
    }

    /// Marks node `id` of `swarm` as one whose daemon did not answer when
    /// the snapshot was gathered.
    pub fn unread_node(&mut self, swarm: &SwarmName, id: &str) -> &mut Self {
        if let Some(n) = self
            .swarms
            .get_mut(swarm)
            .and_then(|s| s.nodes.iter_mut().find(|n| n.id == id))
        {
            n.unread = true;
        }
        self
    }

    /// Marks node `id` of `swarm` (not its manager) as another swarm's
    /// daemon that the registry reaches as if it were this swarm's.
    pub fn stranger_node(&mut self, swarm: &SwarmName, id: &str) -> &mut Self {
        if let Some(n) = self
            .swarms
            .get_mut(swarm)
            .and_then(|s| s.nodes.iter_mut().skip(1).find(|n| n.id == id))
        {
            n.stranger = true;
        }
        self
    }

    /// Ids of the nodes a purge of `swarm` reaches: the listed ones of its
    /// own that answered when gathered, or the manager without node reach.
    pub fn reached(&self, swarm: &SwarmName) -> Vec<String> {
        let Some(s) = self.swarms.get(swarm) else {
            return Vec::new();
        };
        match s.reach {
            Reach::Nodes => s
                .nodes
                .iter()
                .filter(|n| n.listed && !n.unread && !n.stranger)
                .map(|n| n.id.clone())
                .collect(),
            Reach::ManagerOnly => s.nodes.first().map(|n| n.id.clone()).into_iter().collect(),
        }
    }

    /// Whether any node whose daemon did not answer when gathered holds
    /// a volume of `release` on `swarm`.
    pub fn has_unread_volumes(&self, swarm: &SwarmName, release: &str) -> bool {
        self.swarms.get(swarm).is_some_and(|s| {
            let has_volumes = |n: &ModelNode| n.volumes.values().any(|r| r == release);
            s.reach == Reach::Nodes
                && (s
                    .nodes
                    .iter()
                    .any(|n| n.listed && n.unread && !n.stranger && has_volumes(n))
                    || self
                        .faults
                        .joined
                        .get(swarm)
                        .is_some_and(|releases| releases.contains(release)))
        })
    }

    /// Volumes of `release` on nodes a purge reaches.
    pub fn reached_volumes(&self, swarm: &SwarmName, release: &str) -> Vec<String> {
        let reached = self.reached(swarm);
        self.swarms
            .get(swarm)
            .map(|s| {
                s.nodes
                    .iter()
                    .filter(|n| reached.contains(&n.id))
                    .flat_map(|n| n.volumes.iter())
                    .filter(|(_, r)| r.as_str() == release)
                    .map(|(v, _)| v.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Actions the world carried out, of one kind name.
    pub fn count(&self, pred: impl Fn(&ActionKind) -> bool) -> usize {
        self.log.iter().filter(|e| pred(&e.kind)).count()
    }

    // ----- execution -----------------------------------------------------

    /// Carries out `action` at `now`, checking the safety rules first.
    pub fn execute(&mut self, action: &Action, now: sweep_core::Timestamp) -> Outcome {
        self.check(&action.kind);
        let outcome = self.run(&action.kind);
        self.log.push(Executed {
            at: now,
            kind: action.kind.clone(),
            outcome: outcome.clone(),
        });
        outcome
    }

    fn check(&mut self, kind: &ActionKind) {
        let Some(plan) = &self.plan else {
            return;
        };
        if plan.is_held() {
            self.violations
                .push(format!("action on a held plan: {kind:?}"));
        }
        let targets: Vec<_> = match kind {
            ActionKind::ListReleases { checking, .. } => checking.iter().collect(),
            other => other.target().into_iter().collect(),
        };
        for t in targets {
            let planned = plan.deletions.iter().find(|d| d.release_ref() == t.release);
            match planned {
                None => self
                    .violations
                    .push(format!("action on a release not planned: {kind:?}")),
                Some(d) if d.application != t.application => self
                    .violations
                    .push(format!("action names the wrong application: {kind:?}")),
                Some(_) => {}
            }
        }
        let Some(t) = kind.target() else {
            return;
        };
        let removal = matches!(
            kind,
            ActionKind::RemoveStack { .. }
                | ActionKind::RemoveVolume { .. }
                | ActionKind::DeleteRecords { .. }
        );
        if removal && self.changed.contains(&t.release) {
            self.violations.push(format!(
                "removal after the release's records changed since the plan: {kind:?}"
            ));
        }
        // A node whose daemon did not answer when gathered is not reached:
        // nothing proved what uses its volumes, so the plan must not send
        // the sweep there.
        if let ActionKind::RemoveVolume {
            at: Where::Node(node),
            ..
        } = kind
        {
            let unread = self
                .swarms
                .get(&t.release.swarm)
                .is_some_and(|s| s.nodes.iter().any(|n| n.id == node.id && n.unread));
            if unread {
                self.violations.push(format!(
                    "a volume removed on a node that did not answer when gathered: {kind:?}"
                ));
            }
        }
        // Another swarm's daemon holds nothing of this swarm's releases,
        // whatever a volume's stack label says: no volume action goes
        // there.
        if let ActionKind::ListVolumes {
            at: Where::Node(node),
            ..
        }
        | ActionKind::RemoveVolume {
            at: Where::Node(node),
            ..
        } = kind
        {
            let stranger = self
                .swarms
                .get(&t.release.swarm)
                .is_some_and(|s| s.nodes.iter().any(|n| n.id == node.id && n.stranger));
            if stranger {
                self.violations.push(format!(
                    "a volume action on another swarm's daemon: {kind:?}"
                ));
            }
        }
        let swarm = &t.release.swarm;
        let release = t.release.release.as_str();
        match kind {
            ActionKind::RemoveStack { part, .. }
                if *part != StackPart::Services
                    && self
                        .swarms
                        .get(swarm)
                        .and_then(|s| s.stacks.get(release))
                        .is_some_and(|p| p.contains(&StackPart::Services)) =>
            {
                self.violations
                    .push(format!("stack part removed before its services: {kind:?}"));
            }
            ActionKind::RemoveStack { part, objects, .. }
                if !objects.is_empty() && self.shared_parts(&t.release).contains(part) =>
            {
                self.violations
                    .push(format!("removal of what another workload uses: {kind:?}"));
            }
            ActionKind::RemoveVolume { volume, .. } if self.volume_shared(swarm, volume) => {
                self.violations.push(format!(
                    "removal of a volume another workload uses: {kind:?}"
                ));
            }
            ActionKind::RemoveVolume { volume, .. }
                if self
                    .faults
                    .named_volumes
                    .contains(&(t.release.clone(), volume.clone())) =>
            {
                self.violations.push(format!(
                    "removal of a volume a service named since it was found in use: {kind:?}"
                ));
            }
            ActionKind::ListVolumes { .. } | ActionKind::RemoveVolume { .. }
                if self.has_own_stack(swarm.as_str(), release) =>
            {
                self.violations
                    .push(format!("volume action while the stack stands: {kind:?}"));
            }
            ActionKind::DeleteRecords { .. } => {
                if self.has_stack(swarm.as_str(), release) {
                    self.violations.push(format!(
                        "records deleted while the stack stands: {}",
                        t.release
                    ));
                }
                let left = self.reached_volumes(swarm, release);
                if self.purge && !left.is_empty() {
                    self.violations.push(format!(
                        "records deleted while reached volumes remain: {} {left:?}",
                        t.release
                    ));
                }
                let partial = plan
                    .deletions
                    .iter()
                    .any(|d| d.release_ref() == t.release && d.volumes == Coverage::Partial);
                if self.purge && partial {
                    self.violations.push(format!(
                        "records deleted though coverage is partial: {}",
                        t.release
                    ));
                }
            }
            _ => {}
        }
    }

    /// A re-read: applies the restamp scheduled for it, then reads the
    /// records under every asked name.
    fn read_stamps(&mut self, target: &sweep_core::sweep::Target, names: &[SwarmName]) -> Outcome {
        let release = &target.release.release;
        let count = self.reads.entry(target.release.clone()).or_default();
        let nth = *count;
        *count += 1;
        if let Some(change) = self.faults.restamp.remove(&(target.release.clone(), nth)) {
            let under = change.under.unwrap_or_else(|| target.release.swarm.clone());
            if let Some(s) = self.swarms.get_mut(&under) {
                match change.to {
                    NewStamp::Stamp(stamp) => {
                        s.records.insert(release.clone(), stamp);
                    }
                    NewStamp::Redeploy(app) => {
                        let stamp = format!("cd/{CONTROLLER}/{app}:release/{release}");
                        s.records.insert(release.clone(), stamp);
                        s.stacks.insert(release.clone(), full_stack());
                    }
                    NewStamp::Remove => {
                        s.records.remove(release);
                    }
                }
                self.changed.insert(target.release.clone());
            }
        }
        if self.faults.read_fails.contains(&target.release) {
            return Outcome::unreachable("manager: connection reset");
        }
        let reads = names
            .iter()
            .map(|name| {
                let entry = self
                    .swarms
                    .get(name)
                    .and_then(|s| s.records.get(release))
                    .map(|stamp| {
                        ReleaseEntry::new(
                            release.clone(),
                            (!stamp.is_empty()).then(|| stamp.clone()),
                        )
                    });
                StampRead::new(name.clone(), entry)
            })
            .collect();
        Outcome::Stamps(reads)
    }

    /// A usage read: the stack's objects standing, one per part, and the
    /// other workloads' uses the faults set up.
    fn read_usage(&mut self, target: &sweep_core::sweep::Target, at: &[Where]) -> Outcome {
        if self.faults.usage_fails.contains(&target.release) {
            return Outcome::unreachable("manager: connection reset");
        }
        let release = &target.release.release;
        let Some(swarm) = self.swarms.get(&target.release.swarm) else {
            return Outcome::unreachable("no such swarm");
        };
        let parts = swarm.stacks.get(release).cloned().unwrap_or_default();
        let mut stack = StackObjects::default();
        let mut services = Vec::new();
        for part in &parts {
            match part {
                StackPart::Services => {
                    stack.services.push(ServiceEntry::new(
                        format!("svc-{release}"),
                        format!("{release}_web"),
                        1,
                    ));
                    services.push(
                        ServiceUse::new(format!("svc-{release}"), format!("{release}_web"))
                            .in_stack(release),
                    );
                }
                StackPart::Networks => stack.networks.push(part_object(*part, release)),
                StackPart::Secrets => stack.secrets.push(part_object(*part, release)),
                StackPart::Configs => stack.configs.push(part_object(*part, release)),
                StackPart::Tasks => {}
            }
        }
        for part in self
            .faults
            .shared
            .get(&target.release)
            .into_iter()
            .flatten()
        {
            let id = part_object(*part, release).id.unwrap_or_default();
            let user = ServiceUse::new("svc-other", "other_app").in_stack("other");
            services.push(match part {
                StackPart::Networks => user.with_networks([id]),
                StackPart::Secrets => user.with_secrets([id]),
                StackPart::Configs => user.with_configs([id]),
                StackPart::Services | StackPart::Tasks => user,
            });
        }
        for (of, volume) in &self.faults.named_volumes {
            if of == &target.release {
                let user = ServiceUse::new("svc-byhand", "byhand_db").in_stack("byhand");
                services.push(user.with_volumes([volume.clone()]));
            }
        }
        let mut containers = Vec::new();
        for (i, place) in at.iter().enumerate() {
            let Some(node) = node_id(swarm, place) else {
                return Outcome::unreachable("no such node");
            };
            if self
                .faults
                .unreachable
                .contains(&(target.release.swarm.clone(), node.clone()))
            {
                return Outcome::unreachable(format!("node {node}: connection refused"));
            }
            let mut list = Vec::new();
            if i == 0 {
                for (s, volume) in &self.faults.shared_volumes {
                    if s == &target.release.swarm {
                        list.push(ContainerUse::new("c-other", "other", [volume.clone()]));
                    }
                }
            }
            if attached_node(swarm).as_ref() == Some(&node) {
                for of in &self.faults.attached {
                    if of.swarm == target.release.swarm {
                        let network = part_object(StackPart::Networks, &of.release);
                        let container = ContainerUse::new("c-byhand", "byhand", [""; 0]);
                        list.push(container.with_networks(network.id));
                    }
                }
            }
            containers.push(NodeContainers::new(node, list));
        }
        // The manager's node list: its own nodes, down ones included, and
        // one joined since the plan.
        let mut nodes: Vec<String> = swarm
            .nodes
            .iter()
            .filter(|n| !n.stranger)
            .map(|n| n.id.clone())
            .collect();
        if self.faults.joined.contains_key(&target.release.swarm) {
            nodes.push(format!("{}-joined", target.release.swarm));
        }
        Outcome::Usage(UsageRead::new(stack, Usage::new(services, containers)).with_nodes(nodes))
    }

    fn run(&mut self, kind: &ActionKind) -> Outcome {
        if let ActionKind::ReadStamps { target, .. } = kind {
            return self.read_stamps(target, &target.names);
        }
        if let ActionKind::ReadUsage { target, at } = kind {
            return self.read_usage(target, at);
        }
        let swarm_name = kind.swarm().clone();
        let Some(swarm) = self.swarms.get_mut(&swarm_name) else {
            return Outcome::unreachable(format!("no swarm {swarm_name}"));
        };
        let faults = &mut self.faults;
        match kind {
            ActionKind::RemoveStack { target, part, .. } => {
                let release = &target.release.release;
                if swarm.own_stack.as_ref() == Some(release) {
                    return Outcome::own_stack();
                }
                let parts = swarm.stacks.entry(release.clone()).or_default();
                if *part != StackPart::Services && parts.contains(&StackPart::Services) {
                    // The engine's answer: the services still use it.
                    return Outcome::in_use();
                }
                if *part == StackPart::Services && take(&mut faults.stack_fails, &target.release) {
                    return Outcome::other(format!("service {release}_web: rpc error"));
                }
                if take(&mut faults.part_in_use, &(target.release.clone(), *part)) {
                    if *part == StackPart::Networks
                        && attached_node(swarm).is_some()
                        && faults.attached_on_in_use.remove(&target.release)
                    {
                        faults.attached.insert(target.release.clone());
                        faults.named_since.insert(target.release.clone());
                    }
                    let named = faults
                        .shared_on_in_use
                        .get_mut(&target.release)
                        .is_some_and(|parts| parts.remove(part));
                    if named {
                        faults
                            .shared
                            .entry(target.release.clone())
                            .or_default()
                            .insert(*part);
                        faults.named_since.insert(target.release.clone());
                    }
                    return Outcome::in_use();
                }
                let was = parts.remove(part);
                if parts.is_empty() {
                    swarm.stacks.remove(release);
                }
                if *part == StackPart::Networks && take(&mut faults.stack_lies, &target.release) {
                    return Outcome::other(format!("network {release}_default not found"));
                }
                if was {
                    Outcome::Done
                } else {
                    Outcome::gone()
                }
            }
            ActionKind::ListVolumes { target, at } => {
                let Some(node) = node_id(swarm, at) else {
                    return Outcome::unreachable("no such node");
                };
                let key = (swarm_name.clone(), node.clone());
                if faults.unreachable.contains(&key) {
                    return Outcome::unreachable(format!("node {node}: connection refused"));
                }
                if faults.list_fails.contains(&key) {
                    return Outcome::other(format!("node {node}: listing volumes failed"));
                }
                let release = &target.release.release;
                let names = swarm
                    .nodes
                    .iter()
                    .find(|n| n.id == node)
                    .map(|n| {
                        n.volumes
                            .iter()
                            .filter(|(_, r)| *r == release)
                            .map(|(v, _)| v.clone())
                            .collect()
                    })
                    .unwrap_or_default();
                Outcome::Volumes(names)
            }
            ActionKind::RemoveVolume {
                target, at, volume, ..
            } => {
                let Some(node) = node_id(swarm, at) else {
                    return Outcome::unreachable("no such node");
                };
                let key = (swarm_name.clone(), node.clone());
                if faults.unreachable.contains(&key) || faults.vanish_after_listing.contains(&key) {
                    return Outcome::unreachable(format!("node {node}: connection refused"));
                }
                let vkey = (swarm_name.clone(), node.clone(), volume.clone());
                if take(&mut faults.in_use, &vkey) {
                    let named = (target.release.clone(), volume.clone());
                    if faults.named_on_in_use.remove(&named) {
                        faults.named_volumes.insert(named);
                        faults.named_since.insert(target.release.clone());
                    }
                    return Outcome::in_use();
                }
                let removed = swarm
                    .nodes
                    .iter_mut()
                    .find(|n| n.id == node)
                    .and_then(|n| n.volumes.remove(volume))
                    .is_some();
                if removed {
                    Outcome::Done
                } else {
                    Outcome::gone()
                }
            }
            ActionKind::DeleteRecords { target } => {
                let release = &target.release.release;
                if take(&mut faults.records_fail, &target.release) {
                    return Outcome::other("removing config: rpc error");
                }
                let was = swarm.records.remove(release).is_some();
                if take(&mut faults.records_lie, &target.release) {
                    return Outcome::other("removing config: context deadline exceeded");
                }
                if was {
                    Outcome::Done
                } else {
                    Outcome::gone()
                }
            }
            ActionKind::ListReleases { .. } => {
                if faults.relist_fails.contains(&swarm_name) {
                    return Outcome::unreachable("manager: connection reset");
                }
                let names = match faults.listing_by {
                    ListingBy::Records => swarm.records.keys().cloned().collect(),
                    ListingBy::Stacks => swarm.stacks.keys().cloned().collect(),
                };
                Outcome::Releases(names)
            }
            // Answered before the swarm was looked up.
            ActionKind::ReadStamps { .. } | ActionKind::ReadUsage { .. } => {
                Outcome::unreachable("read out of turn")
            }
        }
    }
}

/// The one object the model's stack has of `part` (not services).
fn part_object(part: StackPart, release: &str) -> ObjectRef {
    ObjectRef::new(format!("{part}-{release}"), format!("{release}_{part}"))
}

/// Every part of a stack: what a deployed stack has.
fn full_stack() -> BTreeSet<StackPart> {
    StackPart::ALL.iter().copied().collect()
}

/// Uses up one count of a fault; true if the fault fired.
fn take<K: Ord>(counts: &mut BTreeMap<K, u32>, key: &K) -> bool {
    match counts.get_mut(key) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

/// The node the `attached` faults' container is on: the last node the
/// plan reached, or the manager's (the first) without node reach.
fn attached_node(swarm: &ModelSwarm) -> Option<String> {
    match swarm.reach {
        Reach::Nodes => swarm
            .nodes
            .iter()
            .rfind(|n| n.listed && !n.unread && !n.stranger)
            .map(|n| n.id.clone()),
        Reach::ManagerOnly => swarm.nodes.first().map(|n| n.id.clone()),
    }
}

fn node_id(swarm: &ModelSwarm, at: &Where) -> Option<String> {
    match at {
        Where::Node(n) => swarm
            .nodes
            .iter()
            .find(|m| m.id == n.id)
            .map(|m| m.id.clone()),
        Where::Manager => swarm.nodes.first().map(|n| n.id.clone()),
    }
}

/// An application that has left the set but is still syncing out.
pub fn draining(name: &str, swarm: &str) -> Application {
    Application::new(name, swarm, Some(Vec::new()), AppState::Draining)
}
