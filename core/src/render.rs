//! Human-readable renderings. JSON is the contract; this text is for the
//! operator reading a terminal and may change.
//!
//! Names, stamps, hold messages and error texts come from whoever can create
//! a Swarm object or write a registry file. Each goes through [`Escaped`],
//! so that no release name can add a line that reads as a section of the
//! plan ("to delete (0): nothing") or move the cursor over what is shown.

use std::fmt::{Display, Write};

use crate::escape::Escaped;
use crate::plan::{Coverage, SweepPlan};

/// A short summary of a plan: holds, what will be deleted, what is spared
/// and why, what a volume purge cannot reach.
pub fn plan_text(plan: &SweepPlan) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_plan(&mut out, plan);
    out
}

/// `items`, each escaped, separated by `, `.
pub(crate) fn escaped_list<T: Display>(items: impl IntoIterator<Item = T>) -> String {
    let mut out = String::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        // Writing to a String cannot fail.
        let _ = write!(out, "{}", Escaped(item));
    }
    out
}

fn write_plan(out: &mut String, plan: &SweepPlan) -> std::fmt::Result {
    writeln!(
        out,
        "controller {}, volume purge {}",
        Escaped(&plan.controller),
        if plan.purge_volumes { "on" } else { "off" }
    )?;
    if !plan.swarms.is_empty() {
        writeln!(out, "\nswarms ({}):", plan.swarms.len())?;
        for sw in &plan.swarms {
            write!(out, "  {}", Escaped(&sw.swarm))?;
            if sw.names.len() > 1 {
                write!(out, " (one cluster under {})", escaped_list(&sw.names))?;
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
            match &h.swarm {
                None => write!(out, "  whole sweep")?,
                Some(s) => write!(out, "  swarm {}", Escaped(s))?,
            }
            write!(out, ": {}", h.reason.as_str())?;
            if !h.applications.is_empty() {
                write!(out, " [{}]", escaped_list(&h.applications))?;
            }
            if let Some(m) = &h.message {
                write!(out, " - {}", Escaped(m))?;
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
            Escaped(&d.swarm),
            Escaped(&d.release),
            Escaped(&d.application),
            d.reason.as_str(),
            d.volumes.as_str()
        )?;
    }
    writeln!(out, "\nspared ({}):", plan.spared.len())?;
    if plan.spared.is_empty() {
        writeln!(out, "  nothing")?;
    }
    for s in &plan.spared {
        write!(
            out,
            "  {}/{}  {}",
            Escaped(&s.swarm),
            Escaped(&s.release),
            s.reason.as_str()
        )?;
        if let Some(a) = &s.application {
            write!(out, ", application {}", Escaped(a))?;
        }
        if let Some(d) = &s.detail {
            write!(out, " - {}", Escaped(d))?;
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
                (_, false) => escaped_list(&u.reached),
            };
            write!(
                out,
                "  {}: {} ({} counted, {} missing; reached: {}",
                Escaped(&u.swarm),
                u.coverage.as_str(),
                count,
                missing,
                reached
            )?;
            match &u.unreached {
                Some(names) if !names.is_empty() => {
                    writeln!(out, "; not reached: {})", escaped_list(names))?
                }
                _ => writeln!(out, ")")?,
            }
        }
    }
    Ok(())
}
