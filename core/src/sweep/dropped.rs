//! The state machine of one live release's dropped objects (the plan's
//! `dropped`): a re-read of its records, its dropped services, their
//! tasks, then its dropped configs, secrets and networks.
//!
//! The release stays: its records are never touched here, and nothing of
//! it but the objects the plan proved dropped is removed. The re-read
//! stands before the first removal, and again before the configs, secrets
//! and networks once the dropped services' tasks stopped: a release
//! redeployed since the plan (a new record, whatever its stamp) may declare
//! those objects again, and one restamped is no longer the plan's to touch. The networks, secrets
//! and configs go only once the dropped services' tasks have stopped (a
//! node keeps its copy of a network until its task there has), and only
//! those no remaining service names, the release's own current services
//! included: those are left in place (`in_use_by`), never retried into a
//! failure. Each retry of one the engine found in use is judged again the
//! same way, after a fresh read of who uses what: a service that started
//! to name it meanwhile leaves it in place too, and so does a container of
//! no service attached to a dropped network (the reads before a network
//! is judged list the containers where the plan read them).

use std::collections::{BTreeMap, BTreeSet};

use super::action::{ActionKind, StackPart, Step, Target, Where};
use super::ledger::{self, Ledger};
use super::nodes::{NodeWatch, PlannedNodes};
use super::outcome::{Outcome, StampRead, UsageRead};
use super::release::{answer_part, judge, next_part, note_part, PartAnswer};
use super::removal::{self, Removal};
use super::report::{
    DroppedReport, ErrorEntry, ErrorKind, ObjectKind as ReportKind, ObjectOutcome, ObjectReason,
    ObjectReport, ReleaseOutcome, StampChange,
};
use super::Settings;
use crate::objects::{ObjectRef, ObjectVersion};
use crate::owner::ControllerId;
use crate::plan::{Dropped, DroppedObject};
use crate::record::Kind;
use crate::time::Timestamp;
use crate::usage::{self, InUse, ObjectKind, Usage};

/// Which of a dropped run's actions an outcome answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DropKey {
    Check,
    Usage,
    /// The read of who uses what before retries of removals found in use.
    Recheck,
    Part(StackPart),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Ready,
    Outstanding,
}

/// Which removals a re-read of the records stands before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    /// The first: the dropped services (or, without any, the others).
    First,
    /// The configs, secrets and networks, once the dropped services' tasks
    /// stopped: that wait can be long, and a revision deployed meanwhile
    /// (a rollback) may declare them again.
    Others,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Re-reading the records before removals.
    Check(Gate, Slot),
    /// Removing the dropped services, then waiting for their tasks.
    Services,
    /// Re-reading the stack and what uses what before the other removals.
    Usage(Slot),
    /// Removing the dropped configs, secrets and networks.
    Others,
    Finished(ReleaseOutcome),
}

/// One release's dropped objects being removed.
#[derive(Debug, Clone)]
pub(crate) struct DropRun {
    target: Target,
    /// The release's records as planned, id and version.
    records: BTreeSet<ObjectVersion>,
    planned: Vec<DroppedObject>,
    /// Uses found by the plan and by the re-read.
    in_use: BTreeSet<InUse>,
    parts: BTreeMap<StackPart, Removal>,
    part_objects: BTreeMap<StackPart, Vec<ObjectRef>>,
    phase: Phase,
    errors: Vec<ErrorEntry>,
    /// The dropped objects gone, by id.
    gone: BTreeSet<String>,
    /// The objects left because a service still names them.
    kept: BTreeSet<(ObjectKind, String)>,
    own_stack: bool,
    /// What became of each object touched.
    ledger: Ledger,
    /// Where the plan read the swarm's containers: read there again before
    /// a dropped network is judged.
    places: Vec<Where>,
    /// What the plan read of the swarm's nodes, and the re-reads since: a
    /// dropped attachable network, which the plan let go only because
    /// every node's containers were read, stays once a node joined.
    nodes: NodeWatch,
}

impl DropRun {
    /// `places`: where the plan read the containers of the release's swarm
    /// (each reached node, or the manager).
    pub(crate) fn new(
        target: Target,
        dropped: &Dropped,
        places: Vec<Where>,
        nodes: PlannedNodes,
    ) -> Self {
        let mut ledger = Ledger::default();
        for u in &dropped.in_use_by {
            ledger.in_use(u.kind, &u.object, None);
        }
        DropRun {
            target,
            records: dropped.records.iter().cloned().collect(),
            planned: dropped.objects.clone(),
            in_use: dropped.in_use_by.iter().cloned().collect(),
            parts: BTreeMap::new(),
            part_objects: BTreeMap::new(),
            phase: Phase::Check(Gate::First, Slot::Ready),
            errors: Vec::new(),
            gone: BTreeSet::new(),
            // What the plan found in use is not among the objects to
            // remove: it stays, and the report says so.
            kept: dropped
                .in_use_by
                .iter()
                .map(|u| (u.kind, u.object.clone()))
                .collect(),
            own_stack: false,
            ledger,
            places,
            nodes: NodeWatch::new(nodes, false),
        }
    }

    /// Where a read of who uses what lists containers: at the places when
    /// `networks` (a dropped network is judged by it), else nowhere. A
    /// container of no service keeps a network it is attached to, even
    /// stopped, and the engine refuses the removal only while it runs.
    fn container_places(&self, networks: bool) -> Vec<Where> {
        if networks {
            self.places.clone()
        } else {
            Vec::new()
        }
    }

    /// What became of each object the run touched.
    pub(crate) fn objects(&self) -> Vec<ObjectReport> {
        self.ledger.reports(&self.target, ObjectReason::Dropped)
    }

    pub(crate) fn target(&self) -> &Target {
        &self.target
    }

    /// Nothing outstanding and nothing to hand out.
    pub(crate) fn is_settled(&self) -> bool {
        matches!(self.phase, Phase::Finished(_))
    }

    fn planned_of(&self, kind: Kind) -> impl Iterator<Item = &DroppedObject> {
        self.planned.iter().filter(move |o| o.kind == kind)
    }

    /// The dropped services, by id, each at the version it was judged at:
    /// the backend removes none that changed since (a redeploy that
    /// declares it again updates it in place before its record is
    /// written, which the re-read of the records cannot see yet).
    fn services(&self) -> Vec<ObjectRef> {
        self.planned_of(Kind::Service)
            .map(|o| at_planned(ObjectRef::new(&o.id, &o.name), o))
            .collect()
    }

    /// The next action that may run at `now`, marked outstanding.
    pub(crate) fn next_action(
        &mut self,
        now: Timestamp,
        settings: &Settings,
    ) -> Option<(DropKey, ActionKind)> {
        let target = self.target.clone();
        match &mut self.phase {
            Phase::Check(_, slot @ Slot::Ready) => {
                *slot = Slot::Outstanding;
                let kind = ActionKind::ReadStamps {
                    target,
                    before: Step::RemoveStack,
                };
                Some((DropKey::Check, kind))
            }
            Phase::Usage(slot @ Slot::Ready) => {
                *slot = Slot::Outstanding;
                let networks = self.planned_of(Kind::Network).next().is_some();
                let at = self.container_places(networks);
                Some((DropKey::Usage, ActionKind::ReadUsage { target, at }))
            }
            Phase::Services | Phase::Others => {
                if removal::start_reread(self.parts.values_mut(), now) {
                    let networks = self.parts.get(&StackPart::Networks);
                    let at = self.container_places(networks.is_some_and(Removal::is_reading));
                    return Some((DropKey::Recheck, ActionKind::ReadUsage { target, at }));
                }
                let (part, kind) =
                    next_part(&mut self.parts, &self.part_objects, target, now, settings)?;
                Some((DropKey::Part(part), kind))
            }
            Phase::Check(_, Slot::Outstanding)
            | Phase::Usage(Slot::Outstanding)
            | Phase::Finished(_) => None,
        }
    }

    /// The earliest time a removal waiting to be retried becomes ready.
    pub(crate) fn next_retry(&self) -> Option<Timestamp> {
        match self.phase {
            Phase::Services | Phase::Others => removal::next_retry(self.parts.values()),
            _ => None,
        }
    }

    /// A container of the release's stack went: what waits on one is
    /// tried again at once. Whether anything woke.
    pub(crate) fn wake(&mut self) -> bool {
        let mut woke = false;
        if matches!(self.phase, Phase::Services | Phase::Others) {
            for removal in self.parts.values_mut() {
                woke |= removal.wake();
            }
        }
        woke
    }

    /// Takes the outcome of the action `key` names.
    pub(crate) fn handle(
        &mut self,
        key: DropKey,
        outcome: Outcome,
        now: Timestamp,
        settings: &Settings,
        controller: &ControllerId,
    ) {
        match key {
            DropKey::Check => self.checked(outcome, controller),
            DropKey::Usage => self.usage_read(outcome),
            DropKey::Recheck => {
                self.rechecked(outcome);
                self.settle();
            }
            DropKey::Part(part) => {
                self.part_done(part, outcome, now, settings);
                self.settle();
            }
        }
    }

    fn checked(&mut self, outcome: Outcome, controller: &ControllerId) {
        let Phase::Check(gate, Slot::Outstanding) = self.phase else {
            debug_assert!(false, "a re-read answered outside its check");
            return;
        };
        let verdict = match outcome {
            Outcome::Stamps(reads) => {
                judge(&self.target, &reads, controller).and_then(|()| self.unchanged(&reads))
            }
            Outcome::Failed(f) => Err((
                StampChange::Unreadable,
                format!("its records could not be re-read, so nothing proves its revision unchanged; nothing removed: {f}"),
            )),
            other => Err((
                StampChange::Unreadable,
                format!("unexpected {} outcome to a re-read; nothing removed", other.kind_str()),
            )),
        };
        match (verdict, gate) {
            (Ok(()), Gate::First) => self.start_services(),
            (Ok(()), Gate::Others) => self.phase = Phase::Usage(Slot::Ready),
            (Err((change, message)), _) => {
                self.errors.push(ErrorEntry::stamp_changed(change, message));
                self.phase = Phase::Finished(ReleaseOutcome::Failed);
            }
        }
    }

    /// Whether every name of the cluster still shows exactly the records
    /// the plan saw, at the versions it saw: a record added since is a new
    /// revision, which may declare again what the plan found dropped, and
    /// one relabelled since (a rollback marks the current one superseded)
    /// may no longer be the deployed revision the plan judged.
    fn unchanged(&self, reads: &[StampRead]) -> Result<(), (StampChange, String)> {
        let release = &self.target.release.release;
        for read in reads {
            let Some(entry) = read.entry.as_ref().filter(|e| &e.name == release) else {
                continue;
            };
            let Some(records) = &entry.records else {
                return Err((
                    StampChange::Unreadable,
                    format!(
                        "the re-read on {} did not list its records, so nothing proves its \
                         revision unchanged; nothing removed",
                        read.swarm
                    ),
                ));
            };
            let now: BTreeSet<ObjectVersion> = records.iter().cloned().collect();
            if now != self.records {
                return Err((
                    StampChange::RevisionChanged,
                    format!(
                        "its records on {} changed since the plan (a new revision may declare \
                         these objects again); nothing removed",
                        read.swarm
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Removes the dropped services (then waits for their tasks), or goes
    /// straight to the others when none was dropped.
    fn start_services(&mut self) {
        let services = self.services();
        if services.is_empty() {
            self.phase = Phase::Usage(Slot::Ready);
            return;
        }
        self.parts.clear();
        self.part_objects.clear();
        self.parts.insert(StackPart::Services, Removal::ready());
        self.part_objects.insert(StackPart::Services, services);
        self.phase = Phase::Services;
    }

    fn usage_read(&mut self, outcome: Outcome) {
        if self.phase != Phase::Usage(Slot::Outstanding) {
            debug_assert!(false, "a usage read answered outside its gate");
            return;
        }
        let read = match outcome {
            Outcome::Usage(read) => read,
            // Without it nothing proves the objects unused: nothing more
            // is removed.
            other => {
                self.read_failed(&other);
                self.phase = Phase::Finished(ReleaseOutcome::Failed);
                return;
            }
        };
        self.nodes_now(read.nodes.as_deref());
        let parts = self.others(&read);
        self.parts.clear();
        self.part_objects.clear();
        for (part, objects) in parts {
            // Judged again before each retry.
            let mut removal = Removal::guarded();
            if objects.is_empty() {
                removal.removed();
            }
            self.parts.insert(part, removal);
            self.part_objects.insert(part, objects);
        }
        self.phase = Phase::Others;
        self.settle();
    }

    /// The dropped configs, secrets and networks to remove now: those
    /// still labelled with the stack (one gone already is gone), less
    /// those a service other than the dropped ones names now.
    fn others(&mut self, read: &UsageRead) -> Vec<(StackPart, Vec<ObjectRef>)> {
        let labelled = |kind: Kind| -> &[ObjectRef] {
            match kind {
                Kind::Network => &read.stack.networks,
                Kind::Secret => &read.stack.secrets,
                Kind::Config => &read.stack.configs,
                Kind::Service => &[],
            }
        };
        let mut candidates: Vec<(Kind, ObjectRef)> = Vec::new();
        for o in self.planned.iter().filter(|o| o.kind != Kind::Service) {
            match labelled(o.kind)
                .iter()
                .find(|l| l.id.as_deref() == Some(o.id.as_str()))
            {
                Some(now) => candidates.push((o.kind, at_planned(now.clone(), o))),
                None => {
                    self.ledger.note(
                        report_kind(o.kind),
                        &o.name,
                        Some(&o.id),
                        None,
                        ObjectOutcome::AlreadyGone,
                        None,
                    );
                    self.gone.insert(o.id.clone());
                }
            }
        }
        self.keep_named(candidates, &read.usage)
    }

    /// `candidates` by the part that removes them, less what a service
    /// other than the dropped ones names, by the resource rule on `usage`
    /// and on every use found before: what stays is noted kept. The one
    /// judgement of these objects, before their first attempt and before
    /// each retry.
    fn keep_named(
        &mut self,
        candidates: Vec<(Kind, ObjectRef)>,
        usage: &Usage,
    ) -> Vec<(StackPart, Vec<ObjectRef>)> {
        let leaving: BTreeSet<&str> = self
            .planned_of(Kind::Service)
            .map(|o| o.id.as_str())
            .collect();
        let refs = candidates
            .iter()
            .filter_map(|(kind, o)| Some((kind.usage_kind()?, o)));
        let release = &self.target.release.release;
        let users = usage::service_users(release, refs, &leaving, usage);
        self.in_use.extend(users);
        // As the planner does, for a node joined since it read every one.
        let networks: Vec<ObjectRef> = candidates
            .iter()
            .filter(|(kind, _)| *kind == Kind::Network)
            .map(|(_, o)| o.clone())
            .collect();
        self.in_use
            .extend(usage::unseen_users(&networks, self.nodes.every_node_read()));
        let mut parts: BTreeMap<StackPart, Vec<ObjectRef>> = [
            (StackPart::Configs, Vec::new()),
            (StackPart::Secrets, Vec::new()),
            (StackPart::Networks, Vec::new()),
        ]
        .into_iter()
        .collect();
        for (kind, object) in candidates {
            let Some(usage_kind) = kind.usage_kind() else {
                continue;
            };
            let used = self
                .in_use
                .iter()
                .any(|u| u.kind == usage_kind && u.object == object.name);
            if used {
                self.ledger.in_use(usage_kind, &object.name, None);
                self.kept.insert((usage_kind, object.name.clone()));
            } else if let Some(list) = part_of(kind).and_then(|p| parts.get_mut(&p)) {
                list.push(object);
            }
        }
        for list in parts.values_mut() {
            list.sort();
            list.dedup();
        }
        parts.into_iter().collect()
    }

    /// Takes a re-read's node list: the dropped networks the plan let go
    /// lean on every node having been read.
    fn nodes_now(&mut self, now: Option<&[String]>) {
        self.errors.extend(self.nodes.read(now));
    }

    /// Pushes the error of a usage read answered `outcome` instead of a
    /// usage; its message.
    fn read_failed(&mut self, outcome: &Outcome) -> String {
        let (kind, message) = match outcome {
            Outcome::Failed(f) => (f.kind(), f.to_string()),
            other => (
                ErrorKind::Other,
                format!("unexpected {} outcome", other.kind_str()),
            ),
        };
        self.errors.push(ErrorEntry::new(
            Step::ReadUsage,
            kind,
            None,
            None,
            message.clone(),
        ));
        message
    }

    /// Takes the read of who uses what handed out before retries: the
    /// configs, secrets and networks waiting to be tried are judged again,
    /// as before their first attempt, and what a service names now stays;
    /// the retries the read stood before may go. Without the read nothing
    /// proves those unused: they fail.
    fn rechecked(&mut self, outcome: Outcome) {
        if self.phase != Phase::Others {
            debug_assert!(
                false,
                "a usage re-read answered outside the removals it guards"
            );
            return;
        }
        let read = match outcome {
            Outcome::Usage(read) => {
                self.nodes_now(read.nodes.as_deref());
                read
            }
            other => {
                let message = format!(
                    "not tried again: who uses it could not be read again ({})",
                    self.read_failed(&other)
                );
                removal::fail_reading(
                    &mut self.parts,
                    &self.part_objects,
                    &mut self.ledger,
                    &message,
                );
                return;
            }
        };
        let waiting: Vec<(StackPart, Kind)> = self
            .parts
            .iter()
            .filter(|(_, r)| r.is_waiting())
            .filter_map(|(part, _)| Some((*part, kind_of_part(*part)?)))
            .collect();
        let candidates: Vec<(Kind, ObjectRef)> = waiting
            .iter()
            .flat_map(|(part, kind)| {
                let objects = self.part_objects.get(part).into_iter().flatten();
                objects.map(|o| (*kind, o.clone()))
            })
            .collect();
        let mut left: BTreeMap<StackPart, Vec<ObjectRef>> = self
            .keep_named(candidates, &read.usage)
            .into_iter()
            .collect();
        for (part, _) in waiting {
            let objects = left.remove(&part).unwrap_or_default();
            removal::rejudged(&mut self.parts, &mut self.part_objects, part, objects);
        }
    }

    fn part_done(
        &mut self,
        part: StackPart,
        outcome: Outcome,
        now: Timestamp,
        settings: &Settings,
    ) {
        let Some(removal) = self.parts.get_mut(&part).filter(|r| r.is_outstanding()) else {
            debug_assert!(false, "outcome for part {part} that is not outstanding");
            return;
        };
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
            PartAnswer::Removed => {
                if part != StackPart::Tasks {
                    let ids = self
                        .part_objects
                        .get(&part)
                        .into_iter()
                        .flatten()
                        .filter_map(|o| o.id.clone());
                    self.gone.extend(ids);
                }
                if part == StackPart::Services {
                    // Their tasks next: until those stop, a node keeps its
                    // copy of the networks they attach to.
                    let services = self.services();
                    self.parts.insert(StackPart::Tasks, Removal::ready());
                    self.part_objects.insert(StackPart::Tasks, services);
                }
            }
            PartAnswer::OwnStack => self.own_stack = true,
            PartAnswer::Waiting | PartAnswer::Failed => {}
        }
    }

    /// Moves on once no part is left to try or answer.
    fn settle(&mut self) {
        if !matches!(self.phase, Phase::Services | Phase::Others)
            || self.parts.values().any(Removal::is_open)
        {
            return;
        }
        self.phase = if self.own_stack {
            Phase::Finished(ReleaseOutcome::LeftOwnStack)
        } else if self.parts.values().any(Removal::is_failed) {
            Phase::Finished(ReleaseOutcome::Failed)
        } else if self.phase == Phase::Services {
            Phase::Check(Gate::Others, Slot::Ready)
        } else if !self.kept.is_empty() {
            Phase::Finished(ReleaseOutcome::InUse)
        } else {
            Phase::Finished(ReleaseOutcome::Deleted)
        };
    }

    /// Its swarm's deletion window closed: nothing more is removed, and
    /// what is left stays for the next window. The caller has checked that
    /// none of its actions is outstanding.
    pub(crate) fn close_window(&mut self) {
        let step = match self.phase {
            Phase::Finished(_) => return,
            Phase::Check(..) => Step::ReadStamps,
            Phase::Usage(_) => Step::ReadUsage,
            _ => Step::RemoveStack,
        };
        self.errors.push(ErrorEntry::new(
            step,
            ErrorKind::WindowClosed,
            None,
            None,
            "the swarm's deletion window closed before these objects were removed",
        ));
        self.phase = Phase::Finished(ReleaseOutcome::Failed);
    }

    /// This release's entry in the report's `dropped`; an unfinished one
    /// is reported failed.
    pub(crate) fn report(&self) -> DroppedReport {
        let mut errors = self.errors.clone();
        let outcome = match self.phase {
            Phase::Finished(outcome) => outcome,
            unfinished => {
                let step = match unfinished {
                    Phase::Check(..) => Step::ReadStamps,
                    Phase::Usage(_) => Step::ReadUsage,
                    _ => Step::RemoveStack,
                };
                errors.push(ErrorEntry::new(
                    step,
                    ErrorKind::Unfinished,
                    None,
                    None,
                    "the sweep ended before these objects were removed",
                ));
                ReleaseOutcome::Failed
            }
        };
        errors.sort();
        let remedy = match outcome {
            ReleaseOutcome::Deleted => None,
            ReleaseOutcome::InUse => Some(
                "left in place what a service still names (see in_use_by); a later sweep \
                 removes it once nothing does"
                    .to_owned(),
            ),
            ReleaseOutcome::LeftOwnStack => {
                Some("the controller runs as this stack; nothing of it is removed".to_owned())
            }
            ReleaseOutcome::Failed | ReleaseOutcome::PendingCoverage => Some(
                "what was not removed stays; the next sweep plans it anew (see errors)".to_owned(),
            ),
        };
        DroppedReport {
            swarm: self.target.release.swarm.clone(),
            release: self.target.release.release.clone(),
            application: self.target.application.clone(),
            outcome,
            removed: self
                .planned
                .iter()
                .filter(|o| self.gone.contains(&o.id))
                .cloned()
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

/// The report's kind of a dropped object.
fn report_kind(kind: Kind) -> ReportKind {
    match kind {
        Kind::Service => ReportKind::Service,
        Kind::Network => ReportKind::Network,
        Kind::Secret => ReportKind::Secret,
        Kind::Config => ReportKind::Config,
    }
}

/// The kind of object `part` removes when another workload may name it;
/// `None` for the services and their tasks.
fn kind_of_part(part: StackPart) -> Option<Kind> {
    match part {
        StackPart::Networks => Some(Kind::Network),
        StackPart::Secrets => Some(Kind::Secret),
        StackPart::Configs => Some(Kind::Config),
        StackPart::Services | StackPart::Tasks => None,
    }
}

/// The stack part that removes objects of `kind`.
fn part_of(kind: Kind) -> Option<StackPart> {
    match kind {
        Kind::Service => Some(StackPart::Services),
        Kind::Network => Some(StackPart::Networks),
        Kind::Secret => Some(StackPart::Secrets),
        Kind::Config => Some(StackPart::Configs),
    }
}

/// `object` to be removed only at the version the plan judged `planned`
/// at, when it has one; else as it is.
fn at_planned(object: ObjectRef, planned: &DroppedObject) -> ObjectRef {
    match planned.version {
        Some(version) => object.with_version(version),
        None => object,
    }
}
