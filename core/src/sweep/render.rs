//! The sweep report as text for the operator. JSON is the contract; this
//! text may change.
//!
//! Names, node names, volume names, error messages from daemons and
//! remedies all carry outside text: each goes through [`Escaped`] so none
//! can fake a line of the report or move the cursor.

use std::fmt::Write;

use super::report::{ErrorEntry, ReleaseOutcome, SweepReport};
use crate::escape::Escaped;
use crate::render::{escaped_list, in_use_text};

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
        Escaped(&report.controller),
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
            Escaped(&r.swarm),
            Escaped(&r.release),
            Escaped(&r.application),
            r.outcome.as_str(),
            r.coverage.as_str()
        )?;
        for (node, volumes) in &r.volumes_deleted {
            writeln!(
                out,
                "  volumes removed on {}: {}",
                Escaped(node),
                escaped_list(volumes)
            )?;
        }
        for u in &r.in_use_by {
            writeln!(out, "  kept {}: {}", u.kind.as_str(), in_use_text(u))?;
        }
        // A deleted release's errors were overcome: the step was retried.
        let label = if r.outcome == ReleaseOutcome::Deleted {
            "overcome error"
        } else {
            "error"
        };
        write_errors(out, label, &r.errors)?;
        if let Some(remedy) = &r.remedy {
            writeln!(out, "  remedy: {}", Escaped(remedy))?;
        }
    }
    if !report.dropped.is_empty() {
        writeln!(out, "\ndropped objects of live releases:")?;
    }
    for d in &report.dropped {
        writeln!(
            out,
            "{}/{}  application {}: {}",
            Escaped(&d.swarm),
            Escaped(&d.release),
            Escaped(&d.application),
            d.outcome.as_str()
        )?;
        for o in &d.removed {
            writeln!(out, "  removed {} {}", o.kind.as_str(), Escaped(&o.name))?;
        }
        for u in &d.in_use_by {
            writeln!(out, "  kept {}: {}", u.kind.as_str(), in_use_text(u))?;
        }
        write_errors(out, "error", &d.errors)?;
        if let Some(remedy) = &d.remedy {
            writeln!(out, "  remedy: {}", Escaped(remedy))?;
        }
    }
    for u in &report.uncovered {
        let count = u.node_count.map_or("unknown".to_owned(), |c| c.to_string());
        let missing = u.missing.map_or("unknown".to_owned(), |c| c.to_string());
        writeln!(
            out,
            "\nswarm {}: purge {} - {} nodes counted, {} not covered; covered: {}",
            Escaped(&u.swarm),
            u.coverage.as_str(),
            count,
            missing,
            if u.covered.is_empty() {
                "none".to_owned()
            } else {
                escaped_list(&u.covered)
            }
        )?;
        match &u.unreached {
            Some(names) if !names.is_empty() => {
                writeln!(out, "  not covered: {}", escaped_list(names))?;
                writeln!(out, "  on those nodes, look for:")?;
            }
            _ => writeln!(out, "  on the nodes not covered, look for:")?,
        }
        for l in &u.releases {
            writeln!(
                out,
                "    {} (application {}): label {}",
                Escaped(&l.release),
                Escaped(&l.application),
                Escaped(&l.label_filter)
            )?;
        }
    }
    let t = &report.totals;
    writeln!(out, "\n{t}")?;
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

/// One line per error, under the entry it belongs to.
fn write_errors(out: &mut String, label: &str, errors: &[ErrorEntry]) -> std::fmt::Result {
    for e in errors {
        write!(out, "  {label} in {}", e.action)?;
        if let Some(part) = e.part {
            write!(out, " ({part})")?;
        }
        if let Some(node) = &e.node {
            write!(out, " on {}", Escaped(node))?;
        }
        if let Some(volume) = &e.volume {
            write!(out, " (volume {})", Escaped(volume))?;
        }
        match e.stamp {
            Some(change) => write!(out, " [stamp {}]", change.as_str())?,
            None => write!(out, " [{}]", e.kind.as_str())?,
        }
        writeln!(out, ": {}", Escaped(&e.message))?;
    }
    Ok(())
}
