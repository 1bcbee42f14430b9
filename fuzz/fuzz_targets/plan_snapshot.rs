//! Arbitrary bytes as a snapshot: parsing and planning never panic, the
//! in-place reader (`plan_json`) gives the same plan or error, and a
//! snapshot that parses plans the same with every list reversed and reads
//! back from its own JSON. An application whose destination the snapshot
//! does not list never loses a release, and the plan's text carries no
//! control character but its own line breaks, nor does its Markdown or
//! its diff against the plan of an app set that did not load. The plan is
//! then swept with every action succeeding, which must finish.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sweep_core::escape::is_unsafe;
use sweep_core::sweep::{ActionKind, Outcome, Settings, Sweep};
use sweep_core::{plan, Snapshot};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The in-place reader `plan --snapshot` uses must give what reading the
    // snapshot and planning it gives: the same plan, or the same error.
    let in_place = sweep_core::plan::plan_json(text);
    let Ok(snapshot) = Snapshot::from_json(text) else {
        assert!(
            in_place.is_err(),
            "the in-place reader accepts what the owned one refuses"
        );
        return;
    };
    let first = plan(&snapshot);
    assert_eq!(in_place, first, "the in-place reader plans differently");
    assert_eq!(
        Snapshot::from_json(&snapshot.to_json_pretty()).as_ref(),
        Ok(&snapshot),
        "a snapshot does not read back from its own JSON"
    );

    let mut reversed = snapshot.clone();
    reversed.app_set.applications.reverse();
    for app in &mut reversed.app_set.applications {
        if let Some(releases) = &mut app.releases {
            releases.reverse();
        }
    }
    reversed.swarms.reverse();
    for swarm in &mut reversed.swarms {
        swarm.releases.reverse();
        if let Some(nodes) = &mut swarm.nodes {
            nodes.reverse();
        }
        if let Some(usage) = &mut swarm.usage {
            usage.services.reverse();
            usage.containers.reverse();
        }
    }
    let second = plan(&reversed);
    assert_eq!(
        first, second,
        "the plan depends on the order of the snapshot's lists"
    );

    let Ok(plan) = first else {
        return;
    };
    assert_eq!(plan.to_json_pretty(), plan_json(&second));

    for app in &snapshot.app_set.applications {
        if !snapshot.swarms.iter().any(|s| s.swarm == app.swarm) {
            assert!(
                !plan.deletions.iter().any(|d| d.application == app.name),
                "an application with an unknown destination lost a release"
            );
        }
    }
    let text = sweep_core::render::plan_text(&plan);
    assert!(
        !text.chars().any(|c| c != '\n' && is_unsafe(c)),
        "the plan's text carries a control character"
    );
    let safe = |text: &str| !text.chars().any(|c| c != '\n' && is_unsafe(c));
    assert!(
        safe(&sweep_core::markdown::plan_markdown(&plan)),
        "the plan's Markdown carries a control character"
    );
    assert!(sweep_core::PlanDiff::between(&plan, &plan).is_empty());
    let mut unloaded = snapshot.clone();
    unloaded.app_set.loaded = false;
    if let Ok(held) = sweep_core::plan(&unloaded) {
        // Nothing goes without an app set: the diff adds every deletion.
        let diff = sweep_core::PlanDiff::between(&held, &plan);
        assert_eq!(diff.added.len(), plan.deletions.len());
        assert!(safe(&sweep_core::markdown::diff_markdown(&diff)));
        assert!(safe(&sweep_core::render::diff_text(&diff)));
    }

    // Sweeping it with every action succeeding finishes, deletes every
    // planned release and hands out nothing for anything else.
    let mut sweep = Sweep::new(&plan, Settings::default());
    let now = sweep_core::Timestamp::ZERO;
    let mut steps = 0;
    while let Some(action) = sweep.poll_action(now) {
        steps += 1;
        assert!(steps < 100_000, "the sweep does not finish");
        if let Some(t) = action.kind.target() {
            assert!(
                plan.deletions.iter().any(|d| d.release_ref() == t.release),
                "action on a release not planned"
            );
        }
        let outcome = match action.kind {
            // The volumes the plan listed of it (any name when it listed
            // none: nothing to hold the sweep to); one it never listed
            // would be labelled since, and stay, failing the release.
            ActionKind::ListVolumes { ref target, .. } => {
                Outcome::Volumes(planned_volumes(&plan, &target.release))
            }
            ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
            // Still stamped, and its records, as planned.
            ActionKind::ReadStamps { target, .. } => Outcome::as_planned(&plan, &target),
            // Nothing labelled with the stack now, nobody using anything.
            ActionKind::ReadUsage { at, .. } => Outcome::unused(&at),
            _ => Outcome::Done,
        };
        assert_eq!(sweep.handle_outcome(action.id, outcome, now), Ok(()));
    }
    assert!(sweep.is_done());
    let report = sweep.report();
    assert!(!report.failed());
    let _ = report.to_json_pretty();
    let text = sweep_core::report_text(&report);
    assert!(
        !text.chars().any(|c| c != '\n' && is_unsafe(c)),
        "the report's text carries a control character"
    );
});

fn plan_json(plan: &Result<sweep_core::SweepPlan, sweep_core::SnapshotError>) -> String {
    plan.as_ref()
        .map(|p| p.to_json_pretty())
        .unwrap_or_default()
}

/// The volume names the plan listed of `release` on any node, or `v` when
/// it listed none at all.
fn planned_volumes(plan: &sweep_core::SweepPlan, release: &sweep_core::ReleaseRef) -> Vec<String> {
    let listed = plan
        .deletions
        .iter()
        .find(|d| &d.release_ref() == release)
        .and_then(|d| d.objects.as_ref())
        .and_then(|o| o.volumes.as_ref());
    match listed {
        Some(nodes) => {
            let mut names: Vec<String> = nodes.iter().flat_map(|n| n.volumes.clone()).collect();
            names.sort();
            names.dedup();
            names
        }
        None => vec!["v".into()],
    }
}
