//! Human-readable renderings. JSON is the contract; this text is for the
//! operator reading a terminal and may change.

use std::fmt::Write;

use crate::plan::{hold_str, reason_str, spare_str, Coverage, SweepPlan};

/// A short summary of a plan: holds, what will be deleted, what is spared
/// and why, what a volume purge cannot reach.
pub fn plan_text(plan: &SweepPlan) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_plan(&mut out, plan);
    out
}

fn write_plan(out: &mut String, plan: &SweepPlan) -> std::fmt::Result {
    writeln!(
        out,
        "controller {}, volume purge {}",
        plan.controller,
        if plan.purge_volumes { "on" } else { "off" }
    )?;
    if !plan.swarms.is_empty() {
        writeln!(out, "\nswarms ({}):", plan.swarms.len())?;
        for sw in &plan.swarms {
            write!(out, "  {}", sw.swarm)?;
            if sw.names.len() > 1 {
                let names: Vec<String> = sw.names.iter().map(ToString::to_string).collect();
                write!(out, " (one cluster under {})", names.join(", "))?;
            }
            if !sw.readable {
                writeln!(out, ": could not be read")?;
                continue;
            }
            match (&sw.nodes, sw.node_count) {
                (Some(nodes), Some(count)) => {
                    writeln!(out, ": {} of {count} nodes reached", nodes.len())?
                }
                (Some(nodes), None) => {
                    writeln!(out, ": {} nodes reached, node count unknown", nodes.len())?
                }
                (None, Some(count)) => {
                    writeln!(out, ": {count} nodes, reached through the manager only")?
                }
                (None, None) => writeln!(
                    out,
                    ": node count unknown, reached through the manager only"
                )?,
            }
        }
    }
    if !plan.holds.is_empty() {
        writeln!(out, "\nheld ({}):", plan.holds.len())?;
        for h in &plan.holds {
            let scope = match &h.swarm {
                None => "whole sweep".to_owned(),
                Some(s) => format!("swarm {s}"),
            };
            write!(out, "  {scope}: {}", hold_str(h.reason))?;
            if !h.applications.is_empty() {
                write!(out, " [{}]", h.applications.join(", "))?;
            }
            if let Some(m) = &h.message {
                write!(out, " - {m}")?;
            }
            writeln!(out)?;
        }
    }
    writeln!(out, "\nto delete ({}):", plan.deletions.len())?;
    if plan.deletions.is_empty() {
        writeln!(out, "  nothing")?;
    }
    for d in &plan.deletions {
        writeln!(
            out,
            "  {}/{}  application {}, {}, volumes {}",
            d.swarm,
            d.release,
            d.application,
            reason_str(d.reason),
            d.volumes.as_str()
        )?;
    }
    writeln!(out, "\nspared ({}):", plan.spared.len())?;
    if plan.spared.is_empty() {
        writeln!(out, "  nothing")?;
    }
    for s in &plan.spared {
        write!(out, "  {}/{}  {}", s.swarm, s.release, spare_str(s.reason))?;
        if let Some(a) = &s.application {
            write!(out, ", application {a}")?;
        }
        if let Some(d) = &s.detail {
            write!(out, " - {d}")?;
        }
        writeln!(out)?;
    }
    if !plan.uncovered.is_empty() {
        writeln!(out, "\nnot covered by the volume purge:")?;
        for u in &plan.uncovered {
            let count = u.node_count.map_or("unknown".to_owned(), |c| c.to_string());
            let missing = u.missing.map_or("unknown".to_owned(), |c| c.to_string());
            let reached = match (u.coverage, u.reached.is_empty()) {
                (Coverage::NodeLocal, _) => "the manager only".to_owned(),
                (_, true) => "none".to_owned(),
                (_, false) => u.reached.join(", "),
            };
            write!(
                out,
                "  {}: {} ({} counted, {} missing; reached: {}",
                u.swarm,
                u.coverage.as_str(),
                count,
                missing,
                reached
            )?;
            match &u.unreached {
                Some(names) if !names.is_empty() => {
                    writeln!(out, "; not reached: {})", names.join(", "))?
                }
                _ => writeln!(out, ")")?,
            }
        }
    }
    Ok(())
}
