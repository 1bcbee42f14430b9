//! The state machine of one release: stack, then volumes node by node,
//! then records.
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

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::action::{label_filter, ActionKind, Step, Target, Where};
use super::outcome::{Failure, Outcome, StampRead};
use super::report::{ErrorEntry, ReleaseOutcome, ReleaseReport, StampChange};
use super::time::Timestamp;
use super::Settings;
use crate::owner::{ControllerId, Ownership};
use crate::plan::classify::ownership;
use crate::plan::swarms::GroupRelease;
use crate::plan::Coverage;
use crate::refs::SwarmName;

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
    Stack,
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

#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// Re-reading the records before the gate's step.
    Check(Gate, Slot),
    Stack(Slot),
    Purge(Vec<NodePurge>),
    Records(Slot),
    Finished(ReleaseOutcome),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct NodePurge {
    listing: Listing,
    volumes: BTreeMap<String, Volume>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listing {
    Ready,
    Outstanding,
    Listed,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Volume {
    state: VolumeState,
    /// Set at the first attempt: each volume gets the whole settle timeout
    /// from its own first attempt, so a slow first volume does not eat the
    /// time of the others.
    deadline: Option<Timestamp>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VolumeState {
    /// May be handed out at `not_before` (or at once when `None`).
    Ready {
        not_before: Option<Timestamp>,
    },
    Outstanding,
    Removed,
    Failed,
}

/// One planned release being swept.
#[derive(Debug, Clone)]
pub(crate) struct ReleaseRun {
    target: Target,
    /// Every name of the release's cluster: the re-read asks each.
    names: Vec<SwarmName>,
    coverage: Coverage,
    purge: bool,
    places: Vec<Place>,
    phase: Phase,
    errors: Vec<ErrorEntry>,
    overturnable: Option<Overturnable>,
    /// Its swarm was re-listed for it; a later failure is final.
    relisted: bool,
    /// The records step is tried again because the re-listing no longer
    /// lists the release: records found gone then are its own first
    /// attempt's work, not someone else's.
    records_retry: bool,
    deleted: BTreeMap<String, BTreeSet<String>>,
}

impl ReleaseRun {
    pub fn new(
        target: Target,
        names: Vec<SwarmName>,
        coverage: Coverage,
        purge: bool,
        places: Vec<Place>,
    ) -> Self {
        ReleaseRun {
            target,
            names,
            coverage,
            purge,
            places,
            phase: Phase::Check(Gate::Stack, Slot::Ready),
            errors: Vec::new(),
            overturnable: None,
            relisted: false,
            records_retry: false,
            deleted: BTreeMap::new(),
        }
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Finished, one way or another (a re-listing may still revive it).
    pub fn is_settled(&self) -> bool {
        matches!(self.phase, Phase::Finished(_))
    }

    /// Failed at a step a re-listing of its swarm can overturn.
    pub fn awaits_relisting(&self) -> bool {
        self.phase == Phase::Finished(ReleaseOutcome::Failed) && self.overturnable.is_some()
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
                    names: self.names.clone(),
                    before: gate.step(),
                };
                Some((Key::Check, kind))
            }
            Phase::Stack(slot @ Slot::Ready) => {
                *slot = Slot::Outstanding;
                Some((Key::Stack, ActionKind::RemoveStack { target }))
            }
            Phase::Records(slot @ Slot::Ready) => {
                *slot = Slot::Outstanding;
                Some((Key::Records, ActionKind::DeleteRecords { target }))
            }
            Phase::Purge(nodes) => {
                for (i, node) in nodes.iter_mut().enumerate() {
                    let Some(place) = self.places.get(i) else {
                        continue;
                    };
                    if node.listing == Listing::Ready {
                        node.listing = Listing::Outstanding;
                        let at = place.at.clone();
                        return Some((Key::List(i), ActionKind::ListVolumes { target, at }));
                    }
                    for (name, volume) in node.volumes.iter_mut() {
                        let VolumeState::Ready { not_before } = volume.state else {
                            continue;
                        };
                        if not_before.is_some_and(|t| t > now) {
                            continue;
                        }
                        volume.state = VolumeState::Outstanding;
                        if volume.deadline.is_none() {
                            volume.deadline = Some(now + settings.settle_timeout);
                        }
                        let kind = ActionKind::RemoveVolume {
                            target,
                            at: place.at.clone(),
                            volume: name.clone(),
                        };
                        return Some((Key::Volume(i, name.clone()), kind));
                    }
                }
                None
            }
            Phase::Check(_, Slot::Outstanding)
            | Phase::Stack(Slot::Outstanding)
            | Phase::Records(Slot::Outstanding)
            | Phase::Finished(_) => None,
        }
    }

    /// The earliest time a volume waiting to be retried becomes ready.
    pub fn next_retry(&self) -> Option<Timestamp> {
        let Phase::Purge(nodes) = &self.phase else {
            return None;
        };
        nodes
            .iter()
            .flat_map(|n| n.volumes.values())
            .filter_map(|v| match v.state {
                VolumeState::Ready { not_before } => not_before,
                _ => None,
            })
            .min()
    }

    /// Takes the outcome of the action `key` names. The caller has checked
    /// that the action is outstanding and that the outcome fits its kind.
    /// `controller` judges a re-read; `None` (an invalid id in the plan)
    /// proves nothing ours.
    pub fn handle(
        &mut self,
        key: Key,
        outcome: Outcome,
        now: Timestamp,
        settings: &Settings,
        controller: Option<&ControllerId>,
    ) {
        match key {
            Key::Check => self.checked(outcome, controller),
            Key::Stack => self.stack_done(outcome),
            Key::Records => self.records_done(outcome),
            Key::List(i) => self.listed(i, outcome),
            Key::Volume(i, name) => self.volume_done(i, name, outcome, now, settings),
        }
        self.settle_purge();
    }

    fn stack_done(&mut self, outcome: Outcome) {
        if self.phase != Phase::Stack(Slot::Outstanding) {
            return;
        }
        match outcome {
            Outcome::Done | Outcome::Failed(Failure::Gone) => self.after_stack(),
            Outcome::Failed(Failure::OwnStack) => {
                // Nothing further: its volumes are in use by the running
                // controller and its records are what keeps it found.
                self.phase = Phase::Finished(ReleaseOutcome::LeftOwnStack);
            }
            other => {
                self.fail_step(Step::RemoveStack, None, None, &other);
                self.may_overturn(Overturnable::Stack);
                self.phase = Phase::Finished(ReleaseOutcome::Failed);
            }
        }
    }

    /// The stack is gone: purge its volumes, or go straight to records;
    /// either way after a re-read, since the release may have been
    /// redeployed while its stack went (a new stack's volumes would carry
    /// the same label).
    fn after_stack(&mut self) {
        let gate = if self.purge {
            Gate::Purge
        } else {
            Gate::Records
        };
        self.phase = Phase::Check(gate, Slot::Ready);
    }

    fn checked(&mut self, outcome: Outcome, controller: Option<&ControllerId>) {
        let Phase::Check(gate, Slot::Outstanding) = self.phase else {
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
                Gate::Stack => Phase::Stack(Slot::Ready),
                Gate::Purge => Phase::Purge(
                    self.places
                        .iter()
                        .map(|_| NodePurge {
                            listing: Listing::Ready,
                            volumes: BTreeMap::new(),
                        })
                        .collect(),
                ),
                Gate::Records => Phase::Records(Slot::Ready),
            },
            // Tried again after the re-listing stopped listing it: the
            // first attempt took the records, as a `Gone` answer would say.
            Err((StampChange::RecordsGone, _)) if gate == Gate::Records && self.records_retry => {
                Phase::Finished(ReleaseOutcome::Deleted)
            }
            Err((change, message)) => {
                self.errors.push(ErrorEntry::stamp_changed(change, message));
                Phase::Finished(ReleaseOutcome::Failed)
            }
        };
    }

    /// Whether the records read now still show the release as this
    /// controller's, for the planned application, on every name of its
    /// cluster: the planner's own rule ([`ownership`]) on today's stamps.
    fn judge(
        &self,
        reads: &[StampRead],
        controller: Option<&ControllerId>,
    ) -> Result<(), (StampChange, String)> {
        let release = &self.target.release.release;
        let application = &self.target.application;
        let Some(controller) = controller else {
            return Err((
                StampChange::Unreadable,
                "the plan names an invalid controller id, so nothing proves it ours; left alone"
                    .to_owned(),
            ));
        };
        let mut owners: BTreeSet<Option<String>> = BTreeSet::new();
        for name in &self.names {
            let mut answers = reads.iter().filter(|r| &r.swarm == name).peekable();
            if answers.peek().is_none() {
                return Err((
                    StampChange::Unreadable,
                    format!("the re-read has no answer for {name}, so nothing proves it ours; left alone"),
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

    fn records_done(&mut self, outcome: Outcome) {
        if self.phase != Phase::Records(Slot::Outstanding) {
            return;
        }
        match outcome {
            Outcome::Done | Outcome::Failed(Failure::Gone) => {
                self.phase = Phase::Finished(ReleaseOutcome::Deleted);
            }
            other => {
                self.fail_step(Step::DeleteRecords, None, None, &other);
                self.may_overturn(Overturnable::Records);
                self.phase = Phase::Finished(ReleaseOutcome::Failed);
            }
        }
    }

    fn listed(&mut self, i: usize, outcome: Outcome) {
        let label = self.places.get(i).map(|p| p.label.clone());
        let Phase::Purge(nodes) = &mut self.phase else {
            return;
        };
        let Some(node) = nodes.get_mut(i) else {
            return;
        };
        if node.listing != Listing::Outstanding {
            return;
        }
        match outcome {
            Outcome::Volumes(names) => {
                node.listing = Listing::Listed;
                node.volumes = names
                    .into_iter()
                    .map(|n| {
                        let v = Volume {
                            state: VolumeState::Ready { not_before: None },
                            deadline: None,
                        };
                        (n, v)
                    })
                    .collect();
            }
            // Nothing to list there: nothing to remove.
            Outcome::Failed(Failure::Gone) => node.listing = Listing::Listed,
            other => {
                node.listing = Listing::Failed;
                self.fail_step(Step::ListVolumes, label, None, &other);
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
        let label = self.places.get(i).map(|p| p.label.clone());
        let Phase::Purge(nodes) = &mut self.phase else {
            return;
        };
        let Some(volume) = nodes.get_mut(i).and_then(|n| n.volumes.get_mut(&name)) else {
            return;
        };
        if volume.state != VolumeState::Outstanding {
            return;
        }
        match outcome {
            Outcome::Done | Outcome::Failed(Failure::Gone) => {
                volume.state = VolumeState::Removed;
                if let Some(label) = label {
                    self.deleted.entry(label).or_default().insert(name);
                }
            }
            Outcome::Failed(Failure::InUse) => {
                let deadline = volume.deadline.unwrap_or(now);
                if now < deadline {
                    // The last try lands on the deadline itself, so a task
                    // that lets go just in time is not given up on early.
                    let next = (now + settings.retry_interval).min(deadline);
                    volume.state = VolumeState::Ready {
                        not_before: Some(next),
                    };
                } else {
                    volume.state = VolumeState::Failed;
                    let message = format!(
                        "still in use after the settle timeout ({})",
                        seconds(settings.settle_timeout)
                    );
                    self.errors.push(ErrorEntry::new(
                        Step::RemoveVolume,
                        label,
                        Some(name),
                        message,
                    ));
                }
            }
            other => {
                volume.state = VolumeState::Failed;
                self.fail_step(Step::RemoveVolume, label, Some(name), &other);
            }
        }
    }

    /// Ends the purge once every place is listed (or failed) and every
    /// volume is removed (or failed).
    fn settle_purge(&mut self) {
        let Phase::Purge(nodes) = &self.phase else {
            return;
        };
        let mut failed = false;
        for node in nodes {
            match node.listing {
                Listing::Ready | Listing::Outstanding => return,
                Listing::Failed => failed = true,
                Listing::Listed => {}
            }
            for v in node.volumes.values() {
                match v.state {
                    VolumeState::Ready { .. } | VolumeState::Outstanding => return,
                    VolumeState::Failed => failed = true,
                    VolumeState::Removed => {}
                }
            }
        }
        self.phase = if failed {
            Phase::Finished(ReleaseOutcome::Failed)
        } else if self.coverage == Coverage::Partial {
            // Nodes the registry could not reach may hold volumes: the
            // records stay so that a sweep reaching them can finish.
            Phase::Finished(ReleaseOutcome::PendingCoverage)
        } else {
            Phase::Check(Gate::Records, Slot::Ready)
        };
    }

    fn may_overturn(&mut self, step: Overturnable) {
        if !self.relisted {
            self.overturnable = Some(step);
        }
    }

    fn fail_step(
        &mut self,
        step: Step,
        node: Option<String>,
        volume: Option<String>,
        outcome: &Outcome,
    ) {
        let message = match outcome {
            Outcome::Failed(f) => f.to_string(),
            // Only failures reach here; the caller checked that successes
            // fit their action.
            other => format!("unexpected {} outcome", other.kind_str()),
        };
        self.errors
            .push(ErrorEntry::new(step, node, volume, message));
    }

    /// Takes the verdict of the swarm's re-listing: `Ok(names)` on the
    /// swarm now, or `Err(message)` when the re-listing failed.
    pub fn relisted(&mut self, listing: Result<&BTreeSet<String>, &str>) {
        if !self.awaits_relisting() {
            return;
        }
        // One re-listing per release: whatever it says is final.
        let step = self.overturnable.take();
        self.relisted = true;
        match listing {
            Err(message) => {
                self.errors.push(ErrorEntry::new(
                    Step::ListReleases,
                    None,
                    None,
                    format!("re-listing failed, so the failure stands: {message}"),
                ));
            }
            Ok(names) if names.contains(&self.target.release.release) => {}
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
                self.phase = match step {
                    Some(Overturnable::Stack) => Phase::Check(Gate::Stack, Slot::Ready),
                    Some(Overturnable::Records) => {
                        self.records_retry = true;
                        Phase::Check(Gate::Records, Slot::Ready)
                    }
                    None => Phase::Finished(ReleaseOutcome::Failed),
                };
            }
        }
    }

    /// This release's entry in the report; an unfinished one is reported
    /// failed, which is what it is if the driver stops here.
    pub fn report(&self) -> ReleaseReport {
        let mut errors = self.errors.clone();
        let outcome = match &self.phase {
            Phase::Finished(outcome) => *outcome,
            unfinished => {
                let step = match unfinished {
                    Phase::Check(..) => Step::ReadStamps,
                    Phase::Stack(_) => Step::RemoveStack,
                    Phase::Records(_) => Step::DeleteRecords,
                    _ => Step::RemoveVolume,
                };
                errors.push(ErrorEntry::new(
                    step,
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
            errors,
            remedy,
        }
    }
}

/// `30s`, `1.5s`: whole seconds without a fraction.
fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}s", d.as_secs_f64())
    }
}
