//! One verdict for every command: what an exit status means.
//!
//! A scheduler or a CI job reads only the exit status, so it must mean the
//! same whichever command ran; each command's status is decided here, from
//! the data that command printed, and [`Status::ALL`] with
//! [`Status::code`] and [`Status::meaning`] is the table below as data, so
//! that a caller maps a verdict to a process status in one place.
//!
//! | status | meaning | decided by |
//! |---|---|---|
//! | `0` | success: nothing a person has to look at | every command ([`Status::Success`]) |
//! | `1` | it ran, and a person has to act | every command, see below ([`Status::NeedsAttention`]) |
//! | `2` | bad input: a flag, file, snapshot, app set, registry file or docker context that cannot be used; nothing was read from a swarm and nothing was deleted | callers, since the core never sees the command line ([`Status::BadInput`], [`BAD_INPUT`]) |
//! | `3` | the saved plan is stale (something it relied on changed); nothing was deleted | `apply --plan` ([`Status::Stale`]) |
//! | `4` | the plan deletes something and nothing else needs a person | `plan --detailed-exitcode` ([`plan_detailed_status`]); with `--diff-against`, the change deletes something the base does not ([`diff_detailed_status`]) |
//!
//! What makes `1`, per command:
//!
//! - `snapshot` ([`snapshot_status`]): a swarm could not be read (its
//!   entry carries an `error`).
//! - `plan` ([`plan_status`]): a hold that needs attention (every hold but
//!   `unreconciled` and `draining`, which resolve themselves as a deploy
//!   goes on: [`HoldReason::needs_attention`]), a swarm that could not be
//!   read, a planned deletion whose volume coverage is `partial` or
//!   `node_local` (carrying it out would leave data on nodes it cannot
//!   reach), or one of which another workload uses something (`in_use_by`:
//!   that object and the release's records stay).
//! - `apply` ([`apply_status`]): its plan's `1`, or a report that is not
//!   [`SweepReport::all_done`]: anything planned that is not gone (failed,
//!   `pending_coverage`, `in_use`), or volumes left on nodes the purge did
//!   not reach. A release left because it is the controller's own stack is
//!   not a `1`: it is reported with its remedy every run, and failing every
//!   run for it would hide real failures behind a permanent one.
//!
//! This module reads plans and reports and nothing reads it back: what
//! the sweep reports is a fact of the sweep, what status it makes is
//! decided here.
//!
//! [`HoldReason::needs_attention`]: crate::plan::HoldReason::needs_attention

use crate::plan::{Coverage, SweepPlan};
use crate::plan_diff::PlanDiff;
use crate::snapshot::Snapshot;
use crate::sweep::SweepReport;

/// The exit status of bad input, decided by callers: nothing was planned
/// or deleted ([`Status::BadInput`]).
pub const BAD_INPUT: u8 = Status::BadInput.code();

/// The verdict of a command, ordered as its exit status is: of two
/// verdicts the greater is the worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Status {
    /// Nothing a person has to look at. Exit status 0.
    Success,
    /// It ran, and a person has to act. Exit status 1.
    NeedsAttention,
    /// The input could not be used (a flag, a file, a snapshot, an app
    /// set); nothing was planned or deleted. Exit status 2. Only callers
    /// decide it: the core never sees their command line.
    BadInput,
    /// A saved plan relied on something that changed since it was made;
    /// nothing was deleted. Exit status 3.
    Stale,
    /// `plan --detailed-exitcode`: the plan deletes something, and nothing
    /// else needs a person. Exit status 4.
    Deletes,
}

impl Status {
    /// Every status, in the order of their codes: the exit status table.
    pub const ALL: [Status; 5] = [
        Status::Success,
        Status::NeedsAttention,
        Status::BadInput,
        Status::Stale,
        Status::Deletes,
    ];

    /// The process exit status.
    pub const fn code(self) -> u8 {
        match self {
            Status::Success => 0,
            Status::NeedsAttention => 1,
            Status::BadInput => 2,
            Status::Stale => 3,
            Status::Deletes => 4,
        }
    }

    /// What the status tells whoever reads it: the table of this module
    /// says exactly this, and the reference's (`docs/reference.md`) says
    /// it in each row, with the command it concerns where only one does.
    pub const fn meaning(self) -> &'static str {
        match self {
            Status::Success => "success: nothing a person has to look at",
            Status::NeedsAttention => "it ran, and a person has to act",
            Status::BadInput => {
                "bad input: a flag, file, snapshot, app set, registry file or docker context that cannot be used; nothing was read from a swarm and nothing was deleted"
            }
            Status::Stale => {
                "the saved plan is stale (something it relied on changed); nothing was deleted"
            }
            Status::Deletes => "the plan deletes something and nothing else needs a person",
        }
    }

    /// The status whose [`code`](Status::code) is `code`, if any.
    pub fn from_code(code: u8) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.code() == code)
    }

    fn from_needs_attention(needs: bool) -> Self {
        if needs {
            Status::NeedsAttention
        } else {
            Status::Success
        }
    }
}

/// The status of `swarm-sweep snapshot`: a person has to act when a swarm
/// could not be read, since nothing can be planned for it.
pub fn snapshot_status(snapshot: &Snapshot) -> Status {
    Status::from_needs_attention(snapshot.swarms.iter().any(|s| s.why_unreadable().is_some()))
}

/// The status of `swarm-sweep plan`.
pub fn plan_status(plan: &SweepPlan) -> Status {
    let held = plan.holds.iter().any(|h| h.reason.needs_attention());
    let unreadable = plan.swarms.iter().any(|s| !s.readable);
    let leaves_data = plan
        .deletions
        .iter()
        .any(|d| matches!(d.volumes, Coverage::Partial | Coverage::NodeLocal));
    // The release cannot go whole: what another workload uses stays, and
    // its records with it, until somebody decides about the sharing. A
    // dropped object in use stays for the same reason, and `apply` says so
    // for both: the plan must not call fine what its sweep will not.
    let shared = plan.deletions.iter().any(|d| !d.in_use_by.is_empty())
        || plan.dropped.iter().any(|d| !d.in_use_by.is_empty());
    Status::from_needs_attention(held || unreadable || leaves_data || shared)
}

/// The status of `swarm-sweep plan --detailed-exitcode`, so that CI can
/// gate on a plan that deletes: [`plan_status`], except that a plan that
/// needs nobody's attention and deletes something is [`Status::Deletes`].
/// A plan that needs attention stays `1` whatever it deletes: the gate must
/// not read a broken sweep as an ordinary change.
pub fn plan_detailed_status(plan: &SweepPlan) -> Status {
    match plan_status(plan) {
        Status::Success if plan.deletes_anything() => Status::Deletes,
        status => status,
    }
}

/// The status of `swarm-sweep plan --diff-against BASE
/// --detailed-exitcode`: the change's plan's [`plan_status`], except that
/// a change's plan that needs nobody's attention is [`Status::Deletes`]
/// when the change deletes something the base does not (a release or a
/// dropped object: [`PlanDiff::adds_deletions`]), at the next sweep or
/// once a deletion window opens or a grace period ends. A change that only
/// spares more, or changes nothing, is [`Status::Success`] however much
/// the swarms' backlog deletes: the gate is about the change. Without
/// `--detailed-exitcode` the status is the change's plan's
/// [`plan_status`].
///
/// [`PlanDiff::adds_deletions`]: crate::plan_diff::PlanDiff::adds_deletions
pub fn diff_detailed_status(change: &SweepPlan, diff: &PlanDiff) -> Status {
    match plan_status(change) {
        Status::Success if diff.adds_deletions() => Status::Deletes,
        status => status,
    }
}

/// The status of `swarm-sweep apply`: its plan's, or worse when anything
/// planned is not gone.
pub fn apply_status(plan: &SweepPlan, report: &SweepReport) -> Status {
    plan_status(plan).max(report_status(report))
}

/// The report's share of [`apply_status`]: a person has to act unless
/// the report is [`all_done`](SweepReport::all_done) (nothing held,
/// everything planned gone but the controller's own stack, no volumes
/// left on nodes the purge did not reach).
pub(crate) fn report_status(report: &SweepReport) -> Status {
    Status::from_needs_attention(!report.all_done())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, HoldReason};
    use crate::snapshot::{AppSet, Application, NodeEntry, Policy, ReleaseEntry, SwarmSnapshot};
    use crate::sweep::{ActionKind, Outcome, ReleaseOutcome, Settings, Sweep, Timestamp};

    fn swarm(name: &str, releases: &[(&str, &str)]) -> SwarmSnapshot {
        let mut s = SwarmSnapshot::new(name);
        s.releases = releases
            .iter()
            .map(|(r, app)| ReleaseEntry::new(*r, Some(format!("cd/default/{app}:release/{r}"))))
            .collect();
        s.nodes = Some(vec![NodeEntry::new("n1", "node-1")]);
        s.node_count = Some(1);
        s
    }

    fn snapshot(apps: Vec<Application>, swarms: Vec<SwarmSnapshot>, purge: bool) -> Snapshot {
        Snapshot::new(
            Policy::new("default", purge, None),
            AppSet::new(true, apps),
            swarms,
        )
    }

    fn keep() -> Application {
        Application::reconciled("keep", "alpha", &[])
    }

    /// A re-read that finds the release still stamped as planned.
    fn unchanged(
        plan: &SweepPlan,
        target: &crate::sweep::Target,
        names: &[crate::SwarmName],
    ) -> Outcome {
        let stamp = crate::ControllerId::new(plan.controller.clone())
            .unwrap()
            .stamp(&target.application, &target.release.release);
        Outcome::same_stamps(names, &target.release.release, Some(&stamp))
    }

    /// Carries `plan` out with every action succeeding, or every stack
    /// removal failing.
    fn apply(plan: &SweepPlan, fail: bool) -> SweepReport {
        let mut sweep = Sweep::new(plan, Settings::default());
        while let Some(action) = sweep.poll_action(Timestamp::ZERO) {
            let outcome = match action.kind {
                ActionKind::ListVolumes { .. } => Outcome::Volumes(Vec::new()),
                ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
                ActionKind::ReadStamps { target, .. } => unchanged(plan, &target, &target.names),
                ActionKind::RemoveStack { .. } if fail => {
                    Outcome::Failed(crate::sweep::Failure::Other("the daemon said no".into()))
                }
                ActionKind::ReadUsage { at, .. } => Outcome::unused(&at),
                _ => Outcome::Done,
            };
            let _ = sweep.handle_outcome(action.id, outcome, Timestamp::ZERO);
        }
        sweep.report()
    }

    #[test]
    fn codes_are_0_and_1_and_bad_input_is_2() {
        assert_eq!(Status::Success.code(), 0);
        assert_eq!(Status::NeedsAttention.code(), 1);
        assert_eq!(BAD_INPUT, 2);
        assert_eq!(
            Status::Success.max(Status::NeedsAttention),
            Status::NeedsAttention
        );
    }

    #[test]
    fn only_waiting_for_an_application_needs_no_person() {
        for reason in [
            HoldReason::AppSetNotLoaded,
            HoldReason::EmptyAppSet,
            HoldReason::Unreconciled,
            HoldReason::Draining,
            HoldReason::SwarmUnreadable,
            HoldReason::NoReachableNode,
            HoldReason::BlastRadius,
            HoldReason::UnknownDestination,
            HoldReason::OutsideWindow,
        ] {
            let waits = matches!(
                reason,
                HoldReason::Unreconciled | HoldReason::Draining | HoldReason::OutsideWindow
            );
            assert_eq!(reason.needs_attention(), !waits, "{reason:?}");
        }
    }

    #[test]
    fn snapshot_status_is_1_only_with_an_unreadable_swarm() {
        let fine = snapshot(vec![keep()], vec![swarm("alpha", &[])], false);
        assert_eq!(snapshot_status(&fine), Status::Success);
        let mut broken = fine.clone();
        broken
            .swarms
            .push(SwarmSnapshot::unreadable("beta", "connection refused"));
        assert_eq!(snapshot_status(&broken), Status::NeedsAttention);
    }

    #[test]
    fn plan_status_follows_holds_readability_and_coverage() {
        let clean = snapshot(vec![keep()], vec![swarm("alpha", &[("old", "gone")])], true);
        let p = plan(&clean).unwrap();
        assert_eq!(p.deletions.len(), 1);
        assert_eq!(plan_status(&p), Status::Success);

        // Waiting for an application to reconcile is not a failure.
        let mut waiting = clean.clone();
        waiting.app_set.applications.push(Application::new(
            "new",
            "alpha",
            None,
            Default::default(),
        ));
        let p = plan(&waiting).unwrap();
        assert!(p.holds.iter().any(|h| h.reason == HoldReason::Unreconciled));
        assert_eq!(plan_status(&p), Status::Success);

        // A typo in a destination needs a person.
        let mut typo = clean.clone();
        typo.app_set
            .applications
            .push(Application::reconciled("shop", "alpah", &[]));
        assert_eq!(plan_status(&plan(&typo).unwrap()), Status::NeedsAttention);

        let mut unreadable = clean.clone();
        unreadable
            .swarms
            .push(SwarmSnapshot::unreadable("beta", "timed out"));
        assert_eq!(
            plan_status(&plan(&unreadable).unwrap()),
            Status::NeedsAttention
        );

        // Deleting with partial or node-local coverage leaves data behind.
        let mut partial = clean.clone();
        partial.swarms[0].node_count = Some(2);
        let p = plan(&partial).unwrap();
        assert_eq!(p.deletions[0].volumes, Coverage::Partial);
        assert_eq!(plan_status(&p), Status::NeedsAttention);
        let mut node_local = clean.clone();
        node_local.swarms[0].nodes = None;
        node_local.swarms[0].node_count = Some(3);
        let p = plan(&node_local).unwrap();
        assert_eq!(p.deletions[0].volumes, Coverage::NodeLocal);
        assert_eq!(plan_status(&p), Status::NeedsAttention);
        // Without purge the same swarm leaves no volume behind.
        node_local.policy.purge_volumes = false;
        assert_eq!(plan_status(&plan(&node_local).unwrap()), Status::Success);
    }

    #[test]
    fn apply_status_is_the_plans_or_worse() {
        let clean = snapshot(vec![keep()], vec![swarm("alpha", &[("old", "gone")])], true);
        let p = plan(&clean).unwrap();
        let done = apply(&p, false);
        assert_eq!(apply_status(&p, &done), Status::Success);
        assert_eq!(report_status(&done), Status::Success);

        let failed = apply(&p, true);
        assert_eq!(apply_status(&p, &failed), Status::NeedsAttention);
        assert_eq!(report_status(&failed), Status::NeedsAttention);

        // A hold that needs a person fails the run even when all planned
        // deletions went.
        let mut typo = clean.clone();
        typo.app_set
            .applications
            .push(Application::reconciled("shop", "alpah", &[]));
        let p = plan(&typo).unwrap();
        let report = apply(&p, false);
        assert_eq!(
            report_status(&report),
            Status::Success,
            "the report alone is complete"
        );
        assert_eq!(apply_status(&p, &report), Status::NeedsAttention);

        // A held sweep attempted nothing: a person has to act.
        let mut held = clean.clone();
        held.app_set.loaded = false;
        let p = plan(&held).unwrap();
        assert_eq!(apply_status(&p, &apply(&p, false)), Status::NeedsAttention);

        // Left on nodes the purge did not reach.
        let mut partial = clean.clone();
        partial.swarms[0].node_count = Some(2);
        let p = plan(&partial).unwrap();
        let report = apply(&p, false);
        assert!(!report.uncovered.is_empty());
        assert_eq!(apply_status(&p, &report), Status::NeedsAttention);
    }

    #[test]
    fn a_diff_is_4_only_when_the_change_adds_deletions_and_needs_nobody() {
        let deletes = snapshot(vec![keep()], vec![swarm("alpha", &[("old", "gone")])], true);
        let mut spares = deletes.clone();
        spares
            .app_set
            .applications
            .push(Application::reconciled("gone", "alpha", &["old"]));
        let (with, without) = (plan(&deletes).unwrap(), plan(&spares).unwrap());
        // The change removes `gone`: it adds a deletion.
        let adds = PlanDiff::between(&without, &with);
        assert_eq!(diff_detailed_status(&with, &adds), Status::Deletes);
        // The change brings `gone` back: it only spares.
        let spares_more = PlanDiff::between(&with, &without);
        assert_eq!(
            diff_detailed_status(&without, &spares_more),
            Status::Success
        );
        // No change, though the plan deletes: nothing the change did.
        let same = PlanDiff::between(&with, &with);
        assert_eq!(diff_detailed_status(&with, &same), Status::Success);
        assert_eq!(plan_detailed_status(&with), Status::Deletes);
        // A change's plan that needs a person stays 1 whatever it adds.
        let mut partial = deletes.clone();
        partial.swarms[0].node_count = Some(2);
        let broken = plan(&partial).unwrap();
        let adds = PlanDiff::between(&plan(&spares).unwrap(), &broken);
        assert!(adds.adds_deletions());
        assert_eq!(diff_detailed_status(&broken, &adds), Status::NeedsAttention);
    }

    #[test]
    fn the_controllers_own_stack_left_in_place_is_not_a_failure() {
        let p = plan(&snapshot(
            vec![keep()],
            vec![swarm("alpha", &[("ctl", "gone")])],
            false,
        ))
        .unwrap();
        let mut sweep = Sweep::new(&p, Settings::default());
        while let Some(action) = sweep.poll_action(Timestamp::ZERO) {
            let outcome = match action.kind {
                ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
                ActionKind::ReadStamps { target, .. } => unchanged(&p, &target, &target.names),
                ActionKind::RemoveStack { .. } => Outcome::Failed(crate::sweep::Failure::OwnStack),
                ActionKind::ReadUsage { at, .. } => Outcome::unused(&at),
                _ => Outcome::Done,
            };
            let _ = sweep.handle_outcome(action.id, outcome, Timestamp::ZERO);
        }
        let report = sweep.report();
        assert_eq!(report.releases[0].outcome, ReleaseOutcome::LeftOwnStack);
        assert_eq!(apply_status(&p, &report), Status::Success);
    }
}
