//! The state machine of one release: stack (services first, then its
//! networks, secrets and configs), then volumes node by node, then records.
//!
//! The order is the safety property. Records carry the owner stamp, the
//! only thing that lets a later sweep find the release: deleting them while
//! a stack or a volume remains strands that remainder forever. So records
//! go last, and only when everything before them succeeded.
//!
//! Each destructive phase (stack, purge, records) starts with a re-read of
//! the release's records under every name of its cluster, judged by the
//! planner's own ownership rule: the plan was made from a snapshot, and a
//! release restamped, redeployed or removed since must not be deleted on
//! the old snapshot's word. One that is no longer this controller's for the
//! planned application is left alone, with a typed [`StampChange`].
//!
//! What another workload uses is never removed: before the services go,
//! before the networks, secrets and configs go, and before the volumes go,
//! the stack and what uses what on the swarm are read again
//! ([`ActionKind::ReadUsage`]) and judged by the planner's own rule
//! ([`usage::users_of`]). Before networks or volumes go, that read lists
//! the containers where the plan read them: the engine lets a network go
//! under a stopped container attached to it, and a volume go on one node
//! while a container on another mounts the same name. Each removal names its objects explicitly: what
//! the plan listed (less what it found shared), as still labelled now, less
//! what is used now. An object left for another workload keeps the
//! release's records too (outcome `in_use`), so a later sweep finishes it
//! once nobody uses it.
//!
//! Whatever is still in use (a network attached to a stopping task, a
//! volume mounted by a container not yet removed) is tried again by one
//! policy, [`Removal`]: after the retry interval or at once when an engine
//! event says a container of the stack went, and given up at its settle
//! deadline. Drivers keep no waits of their own. A network, secret, config
//! or volume is judged again before each retry, as before its first
//! attempt: one [`ActionKind::ReadUsage`] stands before every retry due
//! when it is handed out, and what it shows another workload using now is
//! spared as the first check spares it (a service created meanwhile at 0
//! replicas holds no container, and the engine would let a volume go).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::action::{label_filter, ActionKind, StackPart, Step, Target, Where};
use super::ledger::{self, Ledger};
use super::nodes::{NodeWatch, NodesSince, PlannedNodes};
use super::outcome::{Failure, Outcome, StampRead, UsageRead};
use super::removal::{self, InUse as Busy, Removal};
use super::report::{
    ErrorEntry, ErrorKind, ObjectKind as ReportKind, ObjectOutcome, ObjectReason, ObjectReport,
    ReleaseOutcome, ReleaseReport, StampChange,
};
use super::Settings;
use crate::objects::{ObjectRef, ObjectVersion, StackObjects};
use crate::owner::{ControllerId, Ownership};
use crate::plan::classify::ownership;
use crate::plan::swarms::GroupRelease;
use crate::plan::{Coverage, DeletionReason};
use crate::time::Timestamp;
use crate::usage::{self, InUse, ObjectKind, Usage};

/// Where a purge runs, with the name reports give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub at: Where,
    pub label: String,
}

/// Which of a release's actions an outcome answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    Check,
    Usage,
    /// The read of who uses what before retries of removals found in use.
    Recheck,
    Part(StackPart),
    List(usize),
    Volume(usize, String),
    Records,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Ready,
    Outstanding,
}

/// The step a failure happened at, when a re-listing can overturn it: a
/// stack removal or a records deletion can report an error for work that
/// succeeded (a swarm-scoped network delete does). A volume failure cannot
/// be overturned: a release listing says nothing about volumes, so a swarm
/// whose failures are all volume failures is not re-listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overturnable {
    Stack,
    Records,
}

/// The destructive step a re-read of the records stands before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    Stack,
    Purge,
    Records,
}

impl Gate {
    fn step(self) -> Step {
        match self {
            Gate::Stack => Step::RemoveStack,
            Gate::Purge => Step::ListVolumes,
            Gate::Records => Step::DeleteRecords,
        }
    }
}

/// What the rule makes of one object of the release that another workload
/// may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Nobody else uses it: it may go.
    Free,
    /// Another workload uses it: it stays, and the records with it.
    Kept,
}

/// The removal a re-read of the stack and its users stands before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UsageGate {
    /// The services: which are labelled with the stack now.
    Services,
    /// The networks, secrets and configs, once the tasks have stopped.
    Parts,
    /// The volumes, with the containers at every place of the purge: made
    /// once every place is listed.
    Purge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Re-reading the records before the gate's step.
    Check(Gate, Slot),
    /// Re-reading the stack and what uses it before the gate's removal.
    Usage(UsageGate, Slot),
    /// Removing the stack, part by part (see [`ReleaseRun::parts`]).
    Stack,
    /// Purging volumes, place by place (see [`ReleaseRun::purges`]).
    Purge,
    Records(Slot),
    /// Failed at a step a re-listing of its swarm may overturn, and
    /// waiting for that re-listing. Settled (nothing outstanding), and
    /// reported failed if the sweep ends here.
    AwaitingRelist(Overturnable),
    Finished(ReleaseOutcome),
}

/// The purge of one place: where, whether its volumes are listed, and each
/// listed volume's removal. Kept together so that a place and its purge
/// can never be paired up wrongly.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PlacePurge {
    place: Place,
    listing: Listing,
    /// The volumes listed here that wait for the purge's read of who uses
    /// what, the one made after every place is listed.
    unjudged: Vec<String>,
    volumes: BTreeMap<String, Removal>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listing {
    Ready,
    Outstanding,
    Listed,
    Failed,
}

/// One planned release being swept.
#[derive(Debug, Clone)]
pub(crate) struct ReleaseRun {
    target: Target,
    coverage: Coverage,
    purge: bool,
    /// The stack's parts being removed: the services alone, then the
    /// others once the services are gone. Set on entering [`Phase::Stack`].
    parts: BTreeMap<StackPart, Removal>,
    /// The objects each part removes, decided at its usage gate.
    part_objects: BTreeMap<StackPart, Vec<ObjectRef>>,
    /// The plan's objects (shared ones left out), when it listed them:
    /// an object labelled since the plan is not removed on its word.
    planned: Option<StackObjects>,
    /// Every use of the release's objects by another workload, as the
    /// plan found them and as each re-read found since.
    in_use: BTreeSet<InUse>,
    /// The objects left in place because another workload uses them.
    kept: BTreeSet<(ObjectKind, String)>,
    /// Objects labelled with the stack since the plan was made: left in
    /// place, and the release fails, so that the next plan decides them.
    unplanned: bool,
    /// The ids of the release's services, as planned and as read before
    /// they were removed: their tasks' containers are the release's own.
    own: BTreeSet<String>,
    /// The ids of services labelled with the stack since the plan: left
    /// standing, never reviewed, so never the release's own. What they
    /// and their tasks use stays.
    foreign: BTreeSet<String>,
    /// What uses what, as read before the purge.
    usage: Option<Usage>,
    /// What the plan read of the swarm's nodes, and the re-reads since:
    /// unless every node, a container of no service may use any attachable
    /// network unseen (see [`super::nodes`]).
    nodes: NodeWatch,
    /// A part was refused as the controller's own stack.
    own_stack: bool,
    /// Every place a purge runs, each with its purge; reset on entering
    /// [`Phase::Purge`].
    purges: Vec<PlacePurge>,
    /// The purge's read of who uses what is taken: made once every place
    /// is listed, so that no listing is newer than the read that judges
    /// its volumes.
    volumes_judged: bool,
    phase: Phase,
    errors: Vec<ErrorEntry>,
    /// Its swarm was re-listed for it; a later failure is final.
    relisted: bool,
    /// The records step is tried again because the re-listing no longer
    /// lists the release: records found gone then are its own first
    /// attempt's work, not someone else's.
    records_retry: bool,
    deleted: BTreeMap<String, BTreeSet<String>>,
    /// Why the release goes, for its objects' entries.
    reason: ObjectReason,
    /// What became of each object touched.
    ledger: Ledger,
    /// The release records as planned (ids and versions, sorted), when the
    /// plan observed them: a re-read that shows others (a revision
    /// deployed since, under the same stamp too) proves the release is
    /// not the one planned.
    records: Option<Vec<ObjectVersion>>,
}

impl ReleaseRun {
    /// Checks the re-read records against `records` (the plan's observed
    /// ones) before each destructive step, besides their stamps.
    pub fn with_records(mut self, records: Option<Vec<ObjectVersion>>) -> Self {
        self.records = records;
        self
    }

    /// Takes what the plan read of the swarm's nodes: unless every node
    /// (`SwarmPlan::every_node_read`), every attachable network stays; and
    /// from the first re-read that lists a node the plan did not read, so
    /// does every attachable network, and a purge is no longer complete.
    pub(crate) fn with_planned_nodes(mut self, nodes: PlannedNodes) -> Self {
        let complete_purge = self.purge && self.coverage == Coverage::Complete;
        self.nodes = NodeWatch::new(nodes, complete_purge);
        self
    }

    /// Takes the node list of a re-read: a node joined since the plan
    /// unproves every node read, and a complete purge, whose records then
    /// wait ([`ReleaseOutcome::PendingCoverage`]).
    fn nodes_now(&mut self, now: Option<&[String]>) {
        let entry = self.nodes.read(now);
        if self.purge && self.coverage == Coverage::Complete && self.nodes.changed().is_some() {
            self.coverage = Coverage::Partial;
        }
        self.errors.extend(entry);
    }

    /// What the re-reads found of the swarm's nodes since a plan that
    /// read every one, if they found it changed: nodes joined, or a read
    /// without a node list.
    pub(crate) fn nodes_since(&self) -> Option<&NodesSince> {
        self.nodes.changed()
    }

    /// The most nodes a re-read listed.
    pub(crate) fn nodes_listed(&self) -> Option<u64> {
        self.nodes.listed()
    }

    pub fn new(
        target: Target,
        reason: DeletionReason,
        coverage: Coverage,
        purge: bool,
        places: Vec<Place>,
        planned: Option<StackObjects>,
        in_use: Vec<InUse>,
    ) -> Self {
        let own = planned
            .iter()
            .flat_map(|o| o.services.iter().map(|s| s.id.clone()))
            .collect();
        ReleaseRun {
            target,
            coverage,
            purge,
            parts: BTreeMap::new(),
            part_objects: BTreeMap::new(),
            planned,
            in_use: in_use.into_iter().collect(),
            kept: BTreeSet::new(),
            unplanned: false,
            own,
            foreign: BTreeSet::new(),
            usage: None,
            nodes: NodeWatch::new(PlannedNodes::default(), false),
            own_stack: false,
            purges: places
                .into_iter()
                .map(|place| PlacePurge {
                    place,
                    listing: Listing::Ready,
                    unjudged: Vec::new(),
                    volumes: BTreeMap::new(),
                })
                .collect(),
            volumes_judged: false,
            phase: Phase::Check(Gate::Stack, Slot::Ready),
            errors: Vec::new(),
            relisted: false,
            records_retry: false,
            deleted: BTreeMap::new(),
            reason: match reason {
                DeletionReason::Departed => ObjectReason::Departed,
                DeletionReason::DestinationMoved => ObjectReason::DestinationMoved,
            },
            ledger: Ledger::default(),
            records: None,
        }
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Nothing outstanding and nothing to hand out: finished, or waiting
    /// for a re-listing (which may revive it).
    pub fn is_settled(&self) -> bool {
        matches!(self.phase, Phase::Finished(_) | Phase::AwaitingRelist(_))
    }

    /// Failed at a step a re-listing of its swarm can overturn.
    pub fn awaits_relisting(&self) -> bool {
        matches!(self.phase, Phase::AwaitingRelist(_))
    }

    /// The next action of this release that may run at `now`, marked
    /// outstanding.
    pub fn next_action(
        &mut self,
        now: Timestamp,
        settings: &Settings,
    ) -> Option<(Key, ActionKind)> {
        let target = self.target.clone();
        match &mut self.phase {
            Phase::Check(gate, slot @ Slot::Ready) => {
                *slot = Slot::Outstanding;
                let kind = ActionKind::ReadStamps {
                    target,
                    before: gate.step(),
                };
                Some((Key::Check, kind))
            }
            Phase::Usage(gate, slot @ Slot::Ready) => {
                let gate = *gate;
                *slot = Slot::Outstanding;
                let at = match gate {
                    UsageGate::Purge => places_of(&self.purges),
                    UsageGate::Parts if self.networks_may_go() => places_of(&self.purges),
                    UsageGate::Services | UsageGate::Parts => Vec::new(),
                };
                Some((Key::Usage, ActionKind::ReadUsage { target, at }))
            }
            Phase::Stack => {
                if removal::start_reread(self.parts.values_mut(), now) {
                    let networks = self.parts.get(&StackPart::Networks);
                    let at = if networks.is_some_and(Removal::is_reading) {
                        places_of(&self.purges)
                    } else {
                        Vec::new()
                    };
                    return Some((Key::Recheck, ActionKind::ReadUsage { target, at }));
                }
                let (part, kind) =
                    next_part(&mut self.parts, &self.part_objects, target, now, settings)?;
                Some((Key::Part(part), kind))
            }
            Phase::Records(slot @ Slot::Ready) => {
                *slot = Slot::Outstanding;
                Some((Key::Records, ActionKind::DeleteRecords { target }))
            }
            Phase::Purge => {
                let volumes = self.purges.iter_mut().flat_map(|p| p.volumes.values_mut());
                if removal::start_reread(volumes, now) {
                    // The containers at every place: one anywhere spares
                    // the volume on every node.
                    let at = places_of(&self.purges);
                    return Some((Key::Recheck, ActionKind::ReadUsage { target, at }));
                }
                for (i, purge) in self.purges.iter_mut().enumerate() {
                    if purge.listing == Listing::Ready {
                        purge.listing = Listing::Outstanding;
                        let at = purge.place.at.clone();
                        return Some((Key::List(i), ActionKind::ListVolumes { target, at }));
                    }
                    let due = purge.volumes.iter_mut().find(|(_, v)| v.is_due(now));
                    if let Some((name, volume)) = due {
                        volume.start(now, settings);
                        let kind = ActionKind::RemoveVolume {
                            target,
                            at: purge.place.at.clone(),
                            volume: name.clone(),
                        };
                        return Some((Key::Volume(i, name.clone()), kind));
                    }
                }
                None
            }
            Phase::Check(_, Slot::Outstanding)
            | Phase::Usage(_, Slot::Outstanding)
            | Phase::Records(Slot::Outstanding)
            | Phase::AwaitingRelist(_)
            | Phase::Finished(_) => None,
        }
    }

    /// The earliest time a removal waiting to be retried becomes ready.
    pub fn next_retry(&self) -> Option<Timestamp> {
        match self.phase {
            Phase::Stack => removal::next_retry(self.parts.values()),
            Phase::Purge => {
                removal::next_retry(self.purges.iter().flat_map(|p| p.volumes.values()))
            }
            _ => None,
        }
    }

    /// A container of this release's stack went, on the node with id
    /// `node` (`None`: unknown, or the manager's own daemon): whatever of
    /// the stack it may have held is tried again at once. The stack's
    /// networks span the swarm, so any node's event wakes them; a volume
    /// is local, so only its own node's event (or one from an unknown
    /// node) wakes it. Whether anything woke.
    pub fn wake(&mut self, node: Option<&str>) -> bool {
        let mut woke = false;
        match self.phase {
            Phase::Stack => {
                for removal in self.parts.values_mut() {
                    woke |= removal.wake();
                }
            }
            Phase::Purge => {
                for purge in &mut self.purges {
                    let here = match (node, purge.place.at.node_id()) {
                        (Some(event), Some(place)) => event == place,
                        // Unknown node, or a purge through the manager:
                        // an extra attempt costs less than a missed one.
                        _ => true,
                    };
                    if here {
                        for volume in purge.volumes.values_mut() {
                            woke |= volume.wake();
                        }
                    }
                }
            }
            _ => {}
        }
        woke
    }

    /// Takes the outcome of the action `key` names. The caller has checked
    /// that the action is outstanding and that the outcome fits its kind.
    /// `controller` judges a re-read.
    pub fn handle(
        &mut self,
        key: Key,
        outcome: Outcome,
        now: Timestamp,
        settings: &Settings,
        controller: &ControllerId,
    ) {
        match key {
            Key::Check => self.checked(outcome, controller),
            Key::Usage => self.usage_read(outcome),
            Key::Recheck => {
                self.rechecked(outcome);
                self.settle_stack();
                self.settle_purge();
            }
            Key::Part(part) => {
                self.part_done(part, outcome, now, settings);
                self.settle_stack();
            }
            Key::Records => self.records_done(outcome),
            Key::List(i) => {
                self.listed(i, outcome);
                self.settle_purge();
            }
            Key::Volume(i, name) => {
                self.volume_done(i, name, outcome, now, settings);
                self.settle_purge();
            }
        }
    }

    fn part_done(
        &mut self,
        part: StackPart,
        outcome: Outcome,
        now: Timestamp,
        settings: &Settings,
    ) {
        let in_stack = self.phase == Phase::Stack;
        let Some(removal) = self.parts.get_mut(&part).filter(|r| r.is_outstanding()) else {
            debug_assert!(
                false,
                "outcome for stack part {part} that is not outstanding"
            );
            return;
        };
        debug_assert!(
            in_stack,
            "a stack part is outstanding outside the stack phase"
        );
        let word = ledger::word(&outcome);
        let answer = answer_part(removal, part, outcome, now, settings, &mut self.errors);
        note_part(
            &mut self.ledger,
            part,
            &self.part_objects,
            answer,
            word,
            &self.errors,
        );
        match answer {
            // Only now: until this part is gone, the next ones are in
            // use by it. The parts after the tasks are decided by a
            // fresh read of who uses them, made now that the stack's
            // own services are gone.
            PartAnswer::Removed if part == StackPart::Tasks => {
                self.phase = Phase::Usage(UsageGate::Parts, Slot::Ready);
            }
            PartAnswer::Removed => {
                for &later in part.next() {
                    self.parts.insert(later, Removal::ready());
                }
            }
            // Nothing further: its volumes are in use by the running
            // controller and its records are what keeps it found.
            PartAnswer::OwnStack => self.own_stack = true,
            PartAnswer::Waiting | PartAnswer::Failed => {}
        }
    }

    /// Ends the stack phase once no part is left to try or answer.
    fn settle_stack(&mut self) {
        if self.phase != Phase::Stack || self.parts.values().any(Removal::is_open) {
            return;
        }
        if self.own_stack {
            self.phase = Phase::Finished(ReleaseOutcome::LeftOwnStack);
        } else if self.parts.values().any(Removal::is_failed) {
            self.fail(Some(Overturnable::Stack));
        } else {
            self.after_stack();
        }
    }

    /// The stack is gone (but for what another workload uses): purge its
    /// volumes, or go on to the records; either way after a re-read, since
    /// the release may have been redeployed while its stack went (a new
    /// stack's volumes would carry the same label).
    fn after_stack(&mut self) {
        self.phase = if self.purge {
            Phase::Check(Gate::Purge, Slot::Ready)
        } else {
            self.before_records()
        };
    }

    /// Where a release goes once nothing is left to remove: its records go
    /// only when nothing of it stays; what another workload uses, or what
    /// was labelled since the plan, keeps them (and it is found again).
    fn before_records(&self) -> Phase {
        if self.unplanned {
            Phase::Finished(ReleaseOutcome::Failed)
        } else if !self.kept.is_empty() {
            Phase::Finished(ReleaseOutcome::InUse)
        } else if self.purge && self.coverage == Coverage::Partial {
            // Nodes the registry could not reach may hold volumes: the
            // records stay so that a sweep reaching them can finish.
            Phase::Finished(ReleaseOutcome::PendingCoverage)
        } else {
            Phase::Check(Gate::Records, Slot::Ready)
        }
    }

    /// Takes a re-read of the stack and its users, and decides the
    /// removals of the gate it stands before.
    fn usage_read(&mut self, outcome: Outcome) {
        let Phase::Usage(gate, Slot::Outstanding) = self.phase else {
            debug_assert!(false, "a usage read answered outside its gate");
            return;
        };
        let read = match outcome {
            Outcome::Usage(read) => read,
            // Without it nothing proves the objects unused by anyone else:
            // nothing more is removed, and the records stay.
            other => {
                self.fail_step(Step::ReadUsage, None, None, &other);
                self.phase = Phase::Finished(ReleaseOutcome::Failed);
                return;
            }
        };
        self.nodes_now(read.nodes.as_deref());
        match gate {
            UsageGate::Services => {
                // The operator's keep label, put on a service of the stack
                // since the plan: the planner would spare the release now,
                // so nothing of it is removed, and its records stay.
                if let Some(kept) = read.stack.services.iter().find(|s| s.is_kept()) {
                    self.errors.push(ErrorEntry::new(
                        Step::ReadUsage,
                        ErrorKind::Other,
                        None,
                        None,
                        format!(
                            "service {:?} carries {}={:?} since the plan was made; nothing of \
                             the release is removed",
                            kept.name,
                            crate::KEEP_LABEL,
                            kept.keep.as_deref().unwrap_or_default()
                        ),
                    ));
                    self.phase = Phase::Finished(ReleaseOutcome::Failed);
                    return;
                }
                // Only the services the plan listed are the release's to
                // remove: one labelled since was never reviewed, and stays,
                // with the records. What it uses is another workload's.
                let planned: Vec<ObjectRef> = self
                    .planned
                    .iter()
                    .flat_map(|p| &p.services)
                    .map(|s| ObjectRef::new(&s.id, &s.name))
                    .collect();
                let now: Vec<ObjectRef> = read
                    .stack
                    .services
                    .iter()
                    .map(|s| ObjectRef::new(&s.id, &s.name))
                    .collect();
                note_gone(&mut self.ledger, ReportKind::Service, &planned, &now);
                let mut services = Vec::new();
                for service in now {
                    let reviewed =
                        self.planned.is_none() || planned.iter().any(|p| p.is_same(&service));
                    if reviewed {
                        if let Some(id) = &service.id {
                            self.own.insert(id.clone());
                        }
                        services.push(service);
                    } else {
                        if let Some(id) = &service.id {
                            self.foreign.insert(id.clone());
                        }
                        self.unplanned("service", &service.name);
                    }
                }
                self.newcomers(&read);
                self.parts.clear();
                self.part_objects.clear();
                self.start_parts(vec![(StackPart::Services, services)]);
            }
            UsageGate::Parts => {
                self.newcomers(&read);
                let left = self.shared_parts(&read);
                self.start_parts(vec![
                    (StackPart::Networks, left.networks),
                    (StackPart::Secrets, left.secrets),
                    (StackPart::Configs, left.configs),
                ]);
            }
            UsageGate::Purge => {
                self.newcomers(&read);
                self.usage = Some(read.usage);
                self.volumes_judged = true;
                for i in 0..self.purges.len() {
                    let Some(purge) = self.purges.get_mut(i) else {
                        continue;
                    };
                    let label = purge.place.label.clone();
                    let names = std::mem::take(&mut purge.unjudged);
                    let mut volumes = BTreeMap::new();
                    for name in names {
                        match self.judge_volume(&name, &label) {
                            Verdict::Free => {
                                volumes.insert(name, Removal::guarded());
                            }
                            Verdict::Kept => {}
                        }
                    }
                    if let Some(purge) = self.purges.get_mut(i) {
                        purge.volumes = volumes;
                    }
                }
                self.phase = Phase::Purge;
                self.settle_purge();
            }
        }
    }

    /// Notes as another workload's every service `read` shows labelled
    /// with the stack that is not the release's own: one labelled since
    /// the services' gate (a `docker stack deploy` of the departed stack
    /// by hand writes no records) was never reviewed and stands, and the
    /// usage rule would otherwise count it among the release's services
    /// and let what it mounts go. So is one the swarm's service list
    /// shows under the stack and the stack's listing lacks: the two views
    /// disagree. Each such service fails the release, once.
    fn newcomers(&mut self, read: &UsageRead) {
        let release = &self.target.release.release;
        let listed = read.stack.services.iter().map(|s| (&s.id, &s.name));
        let labelled = read
            .usage
            .services
            .iter()
            .filter(|s| s.stack.as_deref() == Some(release.as_str()))
            .map(|s| (&s.id, &s.name));
        let new: BTreeSet<(String, String)> = listed
            .chain(labelled)
            .filter(|(id, _)| !self.own.contains(*id) && !self.foreign.contains(*id))
            .map(|(id, name)| (id.clone(), name.clone()))
            .collect();
        for (id, name) in new {
            self.foreign.insert(id);
            self.unplanned("service", &name);
        }
    }

    /// The networks, secrets and configs labelled with the stack now that
    /// may go: those the plan listed (an object labelled since is left,
    /// and fails the release), less those another workload uses now or
    /// used when planned.
    fn shared_parts(&mut self, read: &UsageRead) -> StackObjects {
        let mut candidates = StackObjects::default();
        let lists = [
            (
                &read.stack.networks,
                &mut candidates.networks,
                ObjectKind::Network,
            ),
            (
                &read.stack.secrets,
                &mut candidates.secrets,
                ObjectKind::Secret,
            ),
            (
                &read.stack.configs,
                &mut candidates.configs,
                ObjectKind::Config,
            ),
        ];
        for (now, into, kind) in lists {
            let planned = self.planned.as_ref().map(|p| planned_list(p, kind));
            note_gone(
                &mut self.ledger,
                ledger::kind_of_usage(kind),
                planned.unwrap_or_default(),
                now,
            );
            for object in now {
                let planned = match &self.planned {
                    None => true,
                    Some(p) => planned_list(p, kind).iter().any(|q| q.is_same(object)),
                };
                if planned
                    || self
                        .in_use
                        .iter()
                        .any(|u| u.kind == kind && u.object == object.name)
                {
                    into.push(object.clone());
                } else {
                    self.unplanned(&kind.to_string(), &object.name);
                }
            }
        }
        self.keep_shared(&candidates, &read.usage)
    }

    /// Notes `kind` `name`, labelled with the stack but not in the plan
    /// (labelled since it was made): never reviewed, so it stays, and the
    /// release fails with its records kept for the next plan to decide.
    fn unplanned(&mut self, kind: &str, name: &str) {
        self.unplanned = true;
        self.errors.push(ErrorEntry::new(
            Step::ReadUsage,
            ErrorKind::Other,
            None,
            None,
            format!(
                "{kind} {name:?} carries the stack's label but is not in the plan (labelled \
                 since it was made); left in place"
            ),
        ));
    }

    /// Whether the parts' gate may find networks to remove: the plan
    /// listed one (shared ones are left out of it), or listed none of its
    /// objects at all.
    fn networks_may_go(&self) -> bool {
        self.planned.as_ref().is_none_or(|p| !p.networks.is_empty())
    }

    /// `candidates` (networks, secrets, configs) less what another
    /// workload uses, by the planner's rule on `usage` and on every use
    /// found before: what stays is noted kept, and keeps the records. The
    /// one judgement of these objects, before their first attempt and
    /// before each retry.
    fn keep_shared(&mut self, candidates: &StackObjects, usage: &Usage) -> StackObjects {
        let release = &self.target.release.release;
        self.in_use.extend(usage::users_of_but(
            release,
            candidates,
            false,
            &self.own,
            &self.foreign,
            usage,
        ));
        // As the planner does: a plan that listed no objects (its names
        // saw the release differently) found no unseen user of a network
        // labelled now.
        self.in_use.extend(usage::unseen_users(
            &candidates.networks,
            self.nodes.every_node_read(),
        ));
        let shared: Vec<InUse> = self.in_use.iter().cloned().collect();
        let left = usage::without_shared(candidates, &shared);
        for (kind, all, left) in [
            (ObjectKind::Network, &candidates.networks, &left.networks),
            (ObjectKind::Secret, &candidates.secrets, &left.secrets),
            (ObjectKind::Config, &candidates.configs, &left.configs),
        ] {
            for o in all.iter().filter(|o| !left.contains(o)) {
                self.kept.insert((kind, o.name.clone()));
                self.ledger.in_use(kind, &o.name, None);
            }
        }
        left
    }

    /// Whether the volume `name` may be judged for removal: the plan
    /// listed a volume of that name on some node (a task of the release
    /// placed on another node since leaves the same volume there), or found
    /// it in use (and left it out), or listed no volumes at all (nothing to
    /// hold it to). A name the plan never listed was labelled since, never
    /// reviewed: a `plan --out` reviewed hours ago removes no data under a
    /// name that appeared since.
    fn volume_reviewed(&self, name: &str) -> bool {
        let Some(nodes) = self.planned.as_ref().and_then(|p| p.volumes.as_ref()) else {
            return true;
        };
        nodes.iter().any(|n| n.volumes.iter().any(|v| v == name))
            || self
                .in_use
                .iter()
                .any(|u| u.kind == ObjectKind::Volume && u.object == name)
    }

    /// Whether the volume `name`, listed at the place labelled `label`,
    /// stays because another workload uses it, by the planner's rule on
    /// the latest usage read and on every use found before: one that stays
    /// is noted kept, and keeps the records. The one judgement of a
    /// volume, when it is listed and before each retry.
    fn judge_volume(&mut self, name: &str, label: &str) -> Verdict {
        if let Some(usage) = &self.usage {
            let release = &self.target.release.release;
            self.in_use.extend(usage::volume_users_of_but(
                release,
                name,
                &self.own,
                &self.foreign,
                usage,
            ));
        }
        let shared = self
            .in_use
            .iter()
            .any(|u| u.kind == ObjectKind::Volume && u.object == name);
        if shared {
            self.ledger.in_use(ObjectKind::Volume, name, Some(label));
            self.kept.insert((ObjectKind::Volume, name.to_owned()));
            Verdict::Kept
        } else {
            Verdict::Free
        }
    }

    /// Takes the read of who uses what handed out before retries of
    /// removals found in use.
    fn rechecked(&mut self, outcome: Outcome) {
        let read = match outcome {
            Outcome::Usage(read) => {
                self.nodes_now(read.nodes.as_deref());
                self.newcomers(&read);
                Ok(read)
            }
            other => {
                self.fail_step(Step::ReadUsage, None, None, &other);
                let message = self.errors.last().map(|e| e.message.clone());
                Err(format!(
                    "not tried again: who uses it could not be read again ({})",
                    message.unwrap_or_default()
                ))
            }
        };
        match self.phase {
            Phase::Stack => self.recheck_parts(read),
            Phase::Purge => self.recheck_volumes(read),
            Phase::Check(..)
            | Phase::Usage(..)
            | Phase::Records(_)
            | Phase::AwaitingRelist(_)
            | Phase::Finished(_) => {
                debug_assert!(false, "a usage re-read answered outside its removals");
            }
        }
    }

    /// Judges again, by `read`, the networks, secrets and configs waiting
    /// to be tried: what another workload uses now stays, as at the gate
    /// before them; the retries the read stood before may go. Without the
    /// read nothing proves those unused: they fail (the records stay).
    fn recheck_parts(&mut self, read: Result<UsageRead, String>) {
        let read = match read {
            Ok(read) => read,
            Err(message) => {
                removal::fail_reading(
                    &mut self.parts,
                    &self.part_objects,
                    &mut self.ledger,
                    &message,
                );
                return;
            }
        };
        let waiting: Vec<StackPart> = self
            .parts
            .iter()
            .filter(|(part, r)| usage_kind(**part).is_some() && r.is_waiting())
            .map(|(part, _)| *part)
            .collect();
        let mut candidates = StackObjects::default();
        for part in &waiting {
            if let Some(list) = part_list(&mut candidates, *part) {
                *list = self.part_objects.get(part).cloned().unwrap_or_default();
            }
        }
        let mut left = self.keep_shared(&candidates, &read.usage);
        for part in waiting {
            let objects = part_list(&mut left, part).map(std::mem::take);
            let objects = objects.unwrap_or_default();
            removal::rejudged(&mut self.parts, &mut self.part_objects, part, objects);
        }
    }

    /// Judges again, by `read`, every volume waiting to be tried: what
    /// another workload uses now stays, exactly as at its listing; the
    /// retries the read stood before may go. Without the read nothing
    /// proves those unused: they fail (the records stay).
    fn recheck_volumes(&mut self, read: Result<UsageRead, String>) {
        let read = match read {
            Ok(read) => read,
            Err(message) => {
                for purge in &mut self.purges {
                    for (name, volume) in &mut purge.volumes {
                        if volume.is_reading() {
                            volume.failed();
                            self.ledger.note(
                                ReportKind::Volume,
                                name,
                                None,
                                Some(&purge.place.label),
                                ObjectOutcome::Failed,
                                Some(&message),
                            );
                        }
                    }
                }
                return;
            }
        };
        // Later listings are judged by it too.
        self.usage = Some(read.usage);
        let waiting: Vec<(usize, String)> = self
            .purges
            .iter()
            .enumerate()
            .flat_map(|(i, p)| {
                p.volumes
                    .iter()
                    .filter(|(_, v)| v.is_waiting())
                    .map(move |(name, _)| (i, name.clone()))
            })
            .collect();
        for (i, name) in waiting {
            let Some(label) = self.purges.get(i).map(|p| p.place.label.clone()) else {
                continue;
            };
            let verdict = self.judge_volume(&name, &label);
            let Some(volumes) = self.purges.get_mut(i).map(|p| &mut p.volumes) else {
                continue;
            };
            match verdict {
                // Spared as at its listing: no longer among those to go.
                Verdict::Kept => {
                    volumes.remove(&name);
                }
                Verdict::Free => {
                    if let Some(volume) = volumes.get_mut(&name) {
                        volume.cleared();
                    }
                }
            }
        }
    }

    /// Enters the stack phase with these parts to remove; a part with
    /// nothing to remove is done at once, but for the services: their
    /// removal is always asked for, since it is where a backend refuses
    /// the controller's own stack, and a stack read as empty must not let
    /// that stack's records go unasked.
    fn start_parts(&mut self, parts: Vec<(StackPart, Vec<ObjectRef>)>) {
        for (part, mut objects) in parts {
            objects.sort();
            objects.dedup();
            // What another workload may use is judged again before each
            // retry; the services are the stack's own.
            let mut removal = match usage_kind(part) {
                Some(_) => Removal::guarded(),
                None => Removal::ready(),
            };
            if objects.is_empty() && part != StackPart::Services {
                removal.removed();
            }
            self.parts.insert(part, removal);
            self.part_objects.insert(part, objects);
        }
        self.phase = Phase::Stack;
        self.settle_stack();
    }

    /// Fails the release: to wait for a re-listing when `step` may be
    /// overturned by one and none was made for it yet, for good otherwise.
    fn fail(&mut self, step: Option<Overturnable>) {
        self.phase = match step {
            Some(step) if !self.relisted => Phase::AwaitingRelist(step),
            _ => Phase::Finished(ReleaseOutcome::Failed),
        };
    }

    fn checked(&mut self, outcome: Outcome, controller: &ControllerId) {
        let Phase::Check(gate, Slot::Outstanding) = self.phase else {
            debug_assert!(false, "a re-read answered outside its check");
            return;
        };
        let verdict = match outcome {
            Outcome::Stamps(reads) => self.judge(&reads, controller),
            // A failed read proves nothing, whatever the failure: "not
            // found" from a read is no answer about the records.
            Outcome::Failed(f) => Err((
                StampChange::Unreadable,
                format!("its records could not be re-read, so nothing proves it still ours; left alone: {f}"),
            )),
            other => Err((
                StampChange::Unreadable,
                format!("unexpected {} outcome to a re-read; left alone", other.kind_str()),
            )),
        };
        self.phase = match verdict {
            Ok(()) => match gate {
                Gate::Stack => Phase::Usage(UsageGate::Services, Slot::Ready),
                Gate::Purge => self.start_purge(),
                Gate::Records => Phase::Records(Slot::Ready),
            },
            // Tried again after the re-listing stopped listing it: the
            // first attempt took the records, as a `Gone` answer would say.
            Err((StampChange::RecordsGone, _)) if gate == Gate::Records && self.records_retry => {
                self.ledger.note(
                    ReportKind::Record,
                    &self.target.release.release,
                    None,
                    None,
                    ObjectOutcome::Removed,
                    None,
                );
                Phase::Finished(ReleaseOutcome::Deleted)
            }
            Err((change, message)) => {
                self.errors.push(ErrorEntry::stamp_changed(change, message));
                Phase::Finished(ReleaseOutcome::Failed)
            }
        };
        // A purge with nowhere to run is over as soon as it starts.
        self.settle_purge();
    }

    /// Whether the records read now still show the release as this
    /// controller's, for the planned application, on every name of its
    /// cluster: the planner's own rule ([`ownership`]) on today's stamps.
    fn judge(
        &self,
        reads: &[StampRead],
        controller: &ControllerId,
    ) -> Result<(), (StampChange, String)> {
        judge(&self.target, reads, controller)?;
        match &self.records {
            Some(planned) => same_records(reads, planned),
            None => Ok(()),
        }
    }

    fn records_done(&mut self, outcome: Outcome) {
        if self.phase != Phase::Records(Slot::Outstanding) {
            debug_assert!(false, "a records deletion answered outside its step");
            return;
        }
        let release = self.target.release.release.clone();
        match outcome {
            Outcome::Done | Outcome::Failed(Failure::Gone) => {
                // Gone on the try after a re-listing is the first try's work.
                let word = if outcome == Outcome::Done || self.records_retry {
                    ObjectOutcome::Removed
                } else {
                    ObjectOutcome::AlreadyGone
                };
                self.ledger
                    .note(ReportKind::Record, &release, None, None, word, None);
                self.phase = Phase::Finished(ReleaseOutcome::Deleted);
            }
            other => {
                self.fail_step(Step::DeleteRecords, None, None, &other);
                let error = self.errors.last().map(|e| e.message.as_str());
                self.ledger.note(
                    ReportKind::Record,
                    &release,
                    None,
                    None,
                    ObjectOutcome::Failed,
                    error,
                );
                self.fail(Some(Overturnable::Records));
            }
        }
    }

    fn listed(&mut self, i: usize, outcome: Outcome) {
        let in_purge = self.phase == Phase::Purge;
        let Some(purge) = self
            .purges
            .get_mut(i)
            .filter(|p| p.listing == Listing::Outstanding)
        else {
            debug_assert!(false, "a volume listing answered that is not outstanding");
            return;
        };
        debug_assert!(
            in_purge,
            "a volume listing is outstanding outside the purge"
        );
        match outcome {
            Outcome::Volumes(names) => {
                purge.listing = Listing::Listed;
                let label = purge.place.label.clone();
                let mut unjudged = Vec::new();
                for name in names {
                    if !self.volume_reviewed(&name) {
                        self.unplanned = true;
                        self.errors.push(ErrorEntry::new(
                            Step::ListVolumes,
                            ErrorKind::Other,
                            Some(label.clone()),
                            Some(name.clone()),
                            format!(
                                "volume {name:?} on {label} carries the stack's label but the \
                                 plan listed no volume of that name (labelled since it was \
                                 made); left in place"
                            ),
                        ));
                        continue;
                    }
                    unjudged.push(name);
                }
                if let Some(purge) = self.purges.get_mut(i) {
                    purge.unjudged = unjudged;
                }
            }
            // Nothing to list there: nothing to remove.
            Outcome::Failed(Failure::Gone) => purge.listing = Listing::Listed,
            other => {
                purge.listing = Listing::Failed;
                let label = purge.place.label.clone();
                self.fail_step(Step::ListVolumes, Some(label), None, &other);
            }
        }
    }

    fn volume_done(
        &mut self,
        i: usize,
        name: String,
        outcome: Outcome,
        now: Timestamp,
        settings: &Settings,
    ) {
        let Some(purge) = self.purges.get_mut(i) else {
            debug_assert!(
                false,
                "a volume removal answered for a place that does not exist"
            );
            return;
        };
        let label = purge.place.label.clone();
        let Some(volume) = purge.volumes.get_mut(&name).filter(|v| v.is_outstanding()) else {
            debug_assert!(false, "a volume removal answered that is not outstanding");
            return;
        };
        let word = ledger::word(&outcome);
        match outcome {
            Outcome::Done | Outcome::Failed(Failure::Gone) => {
                volume.removed();
                if let Some(word) = word {
                    self.ledger
                        .note(ReportKind::Volume, &name, None, Some(&label), word, None);
                }
                self.deleted.entry(label).or_default().insert(name);
            }
            Outcome::Failed(Failure::InUse) => {
                if volume.in_use(now, settings) == Busy::GaveUp {
                    let message = settle_message(settings);
                    self.ledger.note(
                        ReportKind::Volume,
                        &name,
                        None,
                        Some(&label),
                        ObjectOutcome::Failed,
                        Some(&message),
                    );
                    self.errors.push(ErrorEntry::new(
                        Step::RemoveVolume,
                        ErrorKind::InUse,
                        Some(label),
                        Some(name),
                        message,
                    ));
                }
            }
            other => {
                volume.failed();
                self.fail_step(
                    Step::RemoveVolume,
                    Some(label.clone()),
                    Some(name.clone()),
                    &other,
                );
                let error = self.errors.last().map(|e| e.message.as_str());
                self.ledger.note(
                    ReportKind::Volume,
                    &name,
                    None,
                    Some(&label),
                    ObjectOutcome::Failed,
                    error,
                );
            }
        }
    }

    /// Starts the purge: every place to be listed afresh, and the read of
    /// who uses what to be made once they are.
    fn start_purge(&mut self) -> Phase {
        for purge in &mut self.purges {
            purge.listing = Listing::Ready;
            purge.unjudged.clear();
            purge.volumes.clear();
        }
        self.volumes_judged = false;
        Phase::Purge
    }

    /// Once every place is listed (or failed), reads who uses what to
    /// judge the volumes listed; ends the purge once every volume is
    /// removed (or failed).
    fn settle_purge(&mut self) {
        if self.phase != Phase::Purge {
            return;
        }
        let mut failed = false;
        for purge in &self.purges {
            match purge.listing {
                Listing::Ready | Listing::Outstanding => return,
                Listing::Failed => failed = true,
                Listing::Listed => {}
            }
        }
        // The read comes after the listings: a service created while a
        // node was listed (a whole job's round trip through node reach)
        // would be unseen by a read made before, and a volume nobody
        // mounts yet is one the engine lets go.
        if !self.volumes_judged {
            self.phase = Phase::Usage(UsageGate::Purge, Slot::Ready);
            return;
        }
        for purge in &self.purges {
            for v in purge.volumes.values() {
                if v.is_open() {
                    return;
                }
                failed |= v.is_failed();
            }
        }
        self.phase = if failed {
            // A listing says nothing about volumes: nothing to overturn.
            Phase::Finished(ReleaseOutcome::Failed)
        } else {
            self.before_records()
        };
    }

    fn fail_step(
        &mut self,
        step: Step,
        node: Option<String>,
        volume: Option<String>,
        outcome: &Outcome,
    ) {
        let (kind, message) = match outcome {
            Outcome::Failed(f) => (f.kind(), f.to_string()),
            // Only failures reach here; the caller checked that successes
            // fit their action.
            other => (
                ErrorKind::Other,
                format!("unexpected {} outcome", other.kind_str()),
            ),
        };
        self.errors
            .push(ErrorEntry::new(step, kind, node, volume, message));
    }

    /// Takes the verdict of the swarm's re-listing: `Ok(names)` on the
    /// swarm now, or `Err(message)` when the re-listing failed.
    pub fn relisted(&mut self, listing: Result<&BTreeSet<String>, &str>) {
        let Phase::AwaitingRelist(step) = self.phase else {
            debug_assert!(
                false,
                "a re-listing verdict for a release not waiting for one"
            );
            return;
        };
        // One re-listing per release: whatever it says is final.
        self.relisted = true;
        self.phase = match listing {
            Err(message) => {
                self.errors.push(ErrorEntry::new(
                    Step::ListReleases,
                    ErrorKind::RelistingFailed,
                    None,
                    None,
                    format!("re-listing failed, so the failure stands: {message}"),
                ));
                Phase::Finished(ReleaseOutcome::Failed)
            }
            Ok(names) if names.contains(&self.target.release.release) => {
                Phase::Finished(ReleaseOutcome::Failed)
            }
            Ok(_) => {
                for e in &mut self.errors {
                    e.message.push_str(
                        " (the re-listing no longer lists the release, so the step was tried again)",
                    );
                }
                // Not listed: the step most likely worked. Trying it once
                // more proves it whatever the listing lists by (records or
                // stacks): `Gone` is success, and the release carries on
                // from there. A second failure is final.
                // Through the re-read again: the release may have been
                // redeployed since, and a listing by stacks says nothing
                // about its records.
                match step {
                    Overturnable::Stack => Phase::Check(Gate::Stack, Slot::Ready),
                    Overturnable::Records => {
                        self.records_retry = true;
                        Phase::Check(Gate::Records, Slot::Ready)
                    }
                }
            }
        };
    }

    /// What became of each object the run touched.
    pub fn objects(&self) -> Vec<ObjectReport> {
        self.ledger.reports(&self.target, self.reason)
    }

    /// Its swarm's deletion window closed: nothing more of it is removed,
    /// and it is reported failed, its records kept for the next window.
    /// The caller has checked that none of its actions is outstanding.
    pub(crate) fn close_window(&mut self) {
        let step = match self.phase {
            Phase::Finished(_) => return,
            // Failed already; the re-listing that could have overturned it
            // is not made.
            Phase::AwaitingRelist(_) => {
                self.errors.push(ErrorEntry::new(
                    Step::ListReleases,
                    ErrorKind::WindowClosed,
                    None,
                    None,
                    "the swarm's deletion window closed before its re-listing, which could \
                     have shown the failed step done after all",
                ));
                self.phase = Phase::Finished(ReleaseOutcome::Failed);
                return;
            }
            Phase::Check(..) => Step::ReadStamps,
            Phase::Usage(..) => Step::ReadUsage,
            Phase::Stack => Step::RemoveStack,
            Phase::Records(_) => Step::DeleteRecords,
            Phase::Purge => Step::RemoveVolume,
        };
        self.errors.push(ErrorEntry::new(
            step,
            ErrorKind::WindowClosed,
            None,
            None,
            "the swarm's deletion window closed before this release finished: nothing more \
             of it is removed until a window opens again",
        ));
        self.phase = Phase::Finished(ReleaseOutcome::Failed);
    }

    /// This release's entry in the report; an unfinished one is reported
    /// failed, which is what it is if the driver stops here.
    pub fn report(&self) -> ReleaseReport {
        let mut errors = self.errors.clone();
        let outcome = match self.phase {
            Phase::Finished(outcome) => outcome,
            Phase::AwaitingRelist(_) => ReleaseOutcome::Failed,
            unfinished => {
                let step = match unfinished {
                    Phase::Check(..) => Step::ReadStamps,
                    Phase::Usage(..) => Step::ReadUsage,
                    Phase::Stack => Step::RemoveStack,
                    Phase::Records(_) => Step::DeleteRecords,
                    _ => Step::RemoveVolume,
                };
                errors.push(ErrorEntry::new(
                    step,
                    ErrorKind::Unfinished,
                    None,
                    None,
                    "the sweep ended before this release finished",
                ));
                ReleaseOutcome::Failed
            }
        };
        let release = &self.target.release.release;
        let changed = errors.iter().any(|e| e.stamp.is_some());
        let remedy = match outcome {
            ReleaseOutcome::Deleted => None,
            ReleaseOutcome::Failed if errors.iter().any(|e| e.kind == ErrorKind::WindowClosed) => {
                Some(
                    "the deletion window closed during the sweep: nothing more of it was \
                     removed after that (see errors), and a sweep in the next window finishes it"
                        .to_owned(),
                )
            }
            ReleaseOutcome::Failed if changed => Some(
                "left alone: its records changed since the plan (see errors); the next plan \
                 decides it anew"
                    .to_owned(),
            ),
            ReleaseOutcome::Failed => Some(
                "its records are kept, so the next sweep retries it; see errors for what failed"
                    .to_owned(),
            ),
            ReleaseOutcome::LeftOwnStack => Some(
                "the controller runs as this stack; remove it by hand or move the controller"
                    .to_owned(),
            ),
            ReleaseOutcome::InUse => Some(
                "left in place what another workload uses (see in_use_by), and the release's \
                 records with it; a later sweep removes both once nobody uses it (stop or \
                 change the user, or keep the object and remove the records by hand)"
                    .to_owned(),
            ),
            ReleaseOutcome::PendingCoverage => Some(format!(
                "stack and reachable volumes removed; its records are kept until a sweep \
                 reaches every node of the swarm (bring the missing nodes back, or remove a \
                 node gone for good with `docker node rm`); find what is left with the label \
                 filter {}",
                label_filter(release)
            )),
        };
        ReleaseReport {
            swarm: self.target.release.swarm.clone(),
            release: release.clone(),
            application: self.target.application.clone(),
            outcome,
            coverage: self.coverage,
            volumes_deleted: self
                .deleted
                .iter()
                .map(|(node, volumes)| (node.clone(), volumes.iter().cloned().collect()))
                .collect(),
            in_use_by: self
                .in_use
                .iter()
                .filter(|u| self.kept.contains(&(u.kind, u.object.clone())))
                .cloned()
                .collect(),
            errors,
            remedy,
        }
    }
}

/// Notes as gone the objects of `kind` that the plan listed or whose
/// removal failed, and that the stack as read `now` no longer lists:
/// removed since, by someone else or by an earlier attempt that a
/// re-listing overturned (the log must not keep saying "failed" for it).
fn note_gone(ledger: &mut Ledger, kind: ReportKind, planned: &[ObjectRef], now: &[ObjectRef]) {
    let mut gone: Vec<ObjectRef> = planned.to_vec();
    gone.extend(ledger.failed(kind));
    gone.retain(|p| !now.iter().any(|o| p.is_same(o)));
    for p in gone {
        ledger.note(
            kind,
            &p.name,
            p.id.as_deref(),
            None,
            ObjectOutcome::AlreadyGone,
            None,
        );
    }
}

/// Every place of the purge, which are the places the plan read the
/// containers at: they are read there again for a volume's users and for
/// a network's. A container of no service keeps a network it is attached
/// to even stopped, and the engine refuses a network's removal only while
/// such a container runs, so a stopped one attached since the plan is
/// found only by reading the places again.
fn places_of(purges: &[PlacePurge]) -> Vec<Where> {
    purges.iter().map(|p| p.place.at.clone()).collect()
}

/// The kind of object another workload may use that `part` removes;
/// `None` for the stack's own services and their tasks.
fn usage_kind(part: StackPart) -> Option<ObjectKind> {
    match part {
        StackPart::Networks => Some(ObjectKind::Network),
        StackPart::Secrets => Some(ObjectKind::Secret),
        StackPart::Configs => Some(ObjectKind::Config),
        StackPart::Services | StackPart::Tasks => None,
    }
}

/// The list of `objects` that `part` removes; `None` for the services
/// (entries of their own) and their tasks (nothing removed).
fn part_list(objects: &mut StackObjects, part: StackPart) -> Option<&mut Vec<ObjectRef>> {
    match part {
        StackPart::Networks => Some(&mut objects.networks),
        StackPart::Secrets => Some(&mut objects.secrets),
        StackPart::Configs => Some(&mut objects.configs),
        StackPart::Services | StackPart::Tasks => None,
    }
}

/// The plan's list of the objects of `kind` (not volumes).
fn planned_list(objects: &StackObjects, kind: ObjectKind) -> &[ObjectRef] {
    match kind {
        ObjectKind::Network => &objects.networks,
        ObjectKind::Secret => &objects.secrets,
        ObjectKind::Config => &objects.configs,
        ObjectKind::Volume => &[],
    }
}

/// The removal of the first part of `parts` due at `now`, marked started,
/// with the objects `objects` lists for it: the one way a stack part is
/// handed out, for a release's stack and a live release's dropped objects.
pub(super) fn next_part(
    parts: &mut BTreeMap<StackPart, Removal>,
    objects: &BTreeMap<StackPart, Vec<ObjectRef>>,
    target: Target,
    now: Timestamp,
    settings: &Settings,
) -> Option<(StackPart, ActionKind)> {
    let (part, removal) = parts.iter_mut().find(|(_, r)| r.is_due(now))?;
    removal.start(now, settings);
    let part = *part;
    let kind = ActionKind::RemoveStack {
        target,
        part,
        objects: objects.get(&part).cloned().unwrap_or_default(),
    };
    Some((part, kind))
}

/// Notes in `ledger` what `answer` (the answer `word` gave) made of the
/// objects of `part`: the one reading for a release's stack and a live
/// release's dropped objects alike. A failure's error is the last one
/// recorded, the one the answer added.
pub(super) fn note_part(
    ledger: &mut Ledger,
    part: StackPart,
    objects: &BTreeMap<StackPart, Vec<ObjectRef>>,
    answer: PartAnswer,
    word: Option<ObjectOutcome>,
    errors: &[ErrorEntry],
) {
    let objects = objects.get(&part).map(Vec::as_slice).unwrap_or_default();
    match answer {
        PartAnswer::Removed => {
            if let Some(word) = word {
                ledger.part(part, objects, word, None);
            }
        }
        PartAnswer::Failed => {
            let error = errors.last().map(|e| e.message.as_str());
            ledger.part(part, objects, ObjectOutcome::Failed, error);
        }
        // Refused whole, nothing attempted: the release is left as it is.
        PartAnswer::OwnStack | PartAnswer::Waiting => {}
    }
}

/// What an answer to a stack part's removal made of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PartAnswer {
    /// Gone ("not found" counts: it is gone either way).
    Removed,
    /// In use: tried again later.
    Waiting,
    /// Refused as the controller's own stack; nothing further is tried.
    OwnStack,
    /// Failed for good (given up in use, or any other failure), recorded
    /// in `errors`.
    Failed,
}

/// Takes the answer to `removal` of `part`: the one reading of a stack
/// part's outcome, for a release's stack and a live release's dropped
/// objects alike.
pub(super) fn answer_part(
    removal: &mut Removal,
    part: StackPart,
    outcome: Outcome,
    now: Timestamp,
    settings: &Settings,
    errors: &mut Vec<ErrorEntry>,
) -> PartAnswer {
    match outcome {
        Outcome::Done | Outcome::Failed(Failure::Gone) => {
            removal.removed();
            PartAnswer::Removed
        }
        Outcome::Failed(Failure::InUse) => match removal.in_use(now, settings) {
            Busy::Retrying => PartAnswer::Waiting,
            Busy::GaveUp => {
                errors.push(ErrorEntry::stack(
                    part,
                    ErrorKind::InUse,
                    settle_message(settings),
                ));
                PartAnswer::Failed
            }
        },
        Outcome::Failed(Failure::OwnStack) => {
            removal.failed();
            PartAnswer::OwnStack
        }
        Outcome::Failed(f) => {
            removal.failed();
            errors.push(ErrorEntry::stack(part, f.kind(), f.to_string()));
            PartAnswer::Failed
        }
        other => {
            removal.failed();
            errors.push(ErrorEntry::stack(
                part,
                ErrorKind::Other,
                format!("unexpected {} outcome", other.kind_str()),
            ));
            PartAnswer::Failed
        }
    }
}

/// Why a removal in use was given up.
fn settle_message(settings: &Settings) -> String {
    format!(
        "still in use after the settle timeout ({})",
        seconds(settings.settle_timeout)
    )
}

/// `30s`, `1.5s`: whole seconds without a fraction.
fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// Whether the records read now still show `target`'s release as this
/// controller's, for the planned application, on every name of its
/// cluster: the planner's own rule ([`ownership`]) on today's stamps.
/// Whether every name of the cluster still shows exactly the records the
/// plan observed (`planned`, sorted): a stamp alone does not tell a release
/// from one redeployed since under the same stamp, whose new revision is a
/// new record (or a record changed in place, a new version).
fn same_records(
    reads: &[StampRead],
    planned: &[ObjectVersion],
) -> Result<(), (StampChange, String)> {
    for read in reads {
        let Some(entry) = &read.entry else { continue };
        let Some(now) = &entry.records else {
            return Err((
                StampChange::Unreadable,
                format!(
                    "the re-read on {} did not list its records' versions, so nothing proves it \
                     is the release planned; left alone",
                    read.swarm
                ),
            ));
        };
        let mut now = now.clone();
        now.sort();
        if now != planned {
            return Err((
                StampChange::RevisionChanged,
                format!(
                    "its records on {} changed since the plan (redeployed, restamped or \
                     re-created, whatever the stamp says); left alone",
                    read.swarm
                ),
            ));
        }
    }
    Ok(())
}

pub(crate) fn judge(
    target: &Target,
    reads: &[StampRead],
    controller: &ControllerId,
) -> Result<(), (StampChange, String)> {
    let release = &target.release.release;
    let application = &target.application;
    let mut owners: BTreeSet<Option<String>> = BTreeSet::new();
    for name in &target.names {
        let mut answers = reads.iter().filter(|r| &r.swarm == name).peekable();
        if answers.peek().is_none() {
            return Err((
                StampChange::Unreadable,
                format!(
                    "the re-read has no answer for {name}, so nothing proves it ours; left alone"
                ),
            ));
        }
        for read in answers {
            // An entry for another release answers nothing about this
            // one: as good as none.
            match read.entry.as_ref().filter(|e| &e.name == release) {
                Some(entry) => {
                    owners.insert(entry.owner.clone().filter(|s| !s.is_empty()));
                }
                None => {
                    return Err((
                        StampChange::RecordsGone,
                        format!(
                            "its records on {name} are gone since the plan was made; without them \
                             nothing proves it ours; left alone"
                        ),
                    ))
                }
            }
        }
    }
    let now = GroupRelease {
        name: release.clone(),
        owners: owners.into_iter().collect(),
    };
    let found = ownership(controller, &now);
    if matches!(&found, Ownership::Ours { application: a } if a == application) {
        return Ok(());
    }
    let stamps: Vec<&str> = now
        .owners
        .iter()
        .map(|o| o.as_deref().unwrap_or(""))
        .collect();
    let change = if now.owners.len() > 1 {
        StampChange::NamesDisagree
    } else {
        match found {
            Ownership::Ours { .. } => StampChange::OtherApplication,
            Ownership::Foreign => StampChange::OtherController,
            Ownership::Malformed { .. } => StampChange::Malformed,
            Ownership::Unmanaged => StampChange::Unmanaged,
        }
    };
    Err((
        change,
        format!(
            "release {release:?} is now stamped {stamps:?}, no longer by application \
             {application:?}; left alone"
        ),
    ))
}
