//! The sweep report as text for the operator. JSON is the contract; this
//! text may change.

use std::fmt::Write;

use super::report::{ReleaseOutcome, SweepReport};

/// A summary of a sweep: one block per release, what is left on nodes the
/// purge did not reach, and the totals.
pub fn report_text(report: &SweepReport) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_report(&mut out, report);
    out
}

fn write_report(out: &mut String, report: &SweepReport) -> std::fmt::Result {
    writeln!(
        out,
        "sweep by controller {}, volume purge {}",
        report.controller,
        if report.purge_volumes { "on" } else { "off" }
    )?;
    if report.held {
        writeln!(
            out,
            "\nthe plan holds the whole sweep: nothing was attempted"
        )?;
    }
    if !report.releases.is_empty() {
        writeln!(out)?;
    }
    for r in &report.releases {
        writeln!(
            out,
            "{}/{}  application {}: {} (volumes {})",
            r.swarm,
            r.release,
            r.application,
            r.outcome.as_str(),
            r.coverage.as_str()
        )?;
        for (node, volumes) in &r.volumes_deleted {
            writeln!(out, "  volumes removed on {node}: {}", volumes.join(", "))?;
        }
        // A deleted release's errors were overcome: the step was retried.
        let label = if r.outcome == ReleaseOutcome::Deleted {
            "overcome error"
        } else {
            "error"
        };
        for e in &r.errors {
            write!(out, "  {label} in {}", e.action)?;
            if let Some(node) = &e.node {
                write!(out, " on {node}")?;
            }
            if let Some(volume) = &e.volume {
                write!(out, " (volume {volume})")?;
            }
            writeln!(out, ": {}", e.message)?;
        }
        if let Some(remedy) = &r.remedy {
            writeln!(out, "  remedy: {remedy}")?;
        }
    }
    for u in &report.uncovered {
        let count = u.node_count.map_or("unknown".to_owned(), |c| c.to_string());
        let missing = u.missing.map_or("unknown".to_owned(), |c| c.to_string());
        writeln!(
            out,
            "\nswarm {}: purge {} - {} nodes counted, {} not covered; covered: {}",
            u.swarm,
            u.coverage.as_str(),
            count,
            missing,
            if u.covered.is_empty() {
                "none".to_owned()
            } else {
                u.covered.join(", ")
            }
        )?;
        match &u.unreached {
            Some(names) if !names.is_empty() => {
                writeln!(out, "  not covered: {}", names.join(", "))?;
                writeln!(out, "  on those nodes, look for:")?;
            }
            _ => writeln!(out, "  on the nodes not covered, look for:")?,
        }
        for l in &u.releases {
            writeln!(
                out,
                "    {} (application {}): label {}",
                l.release, l.application, l.label_filter
            )?;
        }
    }
    let t = &report.totals;
    writeln!(
        out,
        "\n{} planned: {} deleted, {} failed, {} left as own stack, {} pending coverage; {} volumes removed; {} swarms not fully covered",
        t.planned, t.deleted, t.failed, t.left_own_stack, t.pending_coverage, t.volumes_deleted, t.uncovered_swarms
    )?;
    let verdict = if report.held {
        "the sweep was held; nothing was deleted"
    } else if report.releases.is_empty() {
        "nothing to delete"
    } else if report.all_done() && t.left_own_stack > 0 {
        "everything planned is gone, except the controller's own stack"
    } else if report.all_done() {
        "everything planned is gone"
    } else if report
        .releases
        .iter()
        .any(|r| r.outcome == ReleaseOutcome::Failed)
    {
        "some releases failed; their records are kept for the next sweep"
    } else {
        "something is left; see above"
    };
    writeln!(out, "{verdict}")
}
