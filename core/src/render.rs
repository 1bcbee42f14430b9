//! Human-readable renderings. JSON is the contract; this text is for the
//! operator reading a terminal and may change.
//!
//! Names, stamps, hold messages and error texts come from whoever can create
//! a Swarm object or write a registry file. Each goes through [`Escaped`],
//! so that no release name can add a line that reads as a section of the
//! plan ("to delete (0): nothing") or move the cursor over what is shown.

use std::fmt::{Display, Write};

use crate::escape::Escaped;
use crate::objects::ObjectRef;
use crate::plan::{Coverage, Deletion, SweepPlan};
use crate::refs::SwarmName;
use crate::usage::InUse;

/// The plan for a person: holds, then per swarm one line per release
/// with its reason and, below a deletion, the objects it removes; what a
/// volume purge cannot reach; totals last.
pub fn plan_text(plan: &SweepPlan) -> String {
    plan_text_styled(plan, Style::plain())
}

/// [`plan_text`] in `style`.
pub fn plan_text_styled(plan: &SweepPlan, style: Style) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_plan(&mut out, plan, style);
    out
}

/// How text is marked up: plain, or with ANSI colours for a terminal. The
/// caller decides (a terminal, `NO_COLOR`); the colour codes are ours,
/// never from a name, so escaping names still leaves no control character
/// of outside origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Style {
    /// Whether to mark text up with ANSI colours.
    pub colour: bool,
}

impl Style {
    /// No markup: for files, pipes and `NO_COLOR`.
    pub const fn plain() -> Self {
        Style { colour: false }
    }

    /// ANSI colours when `colour` is true, else [`Style::plain`].
    pub const fn coloured(colour: bool) -> Self {
        Style { colour }
    }

    /// `text` in ANSI graphic rendition `code` (`31` red, `32` green, `33`
    /// yellow, `1` bold, `1;31` bold red) when colour is on; `text` must be
    /// escaped already.
    pub fn paint(self, code: &str, text: &str) -> String {
        if self.colour {
            format!("\u{1b}[{code}m{text}\u{1b}[0m")
        } else {
            text.to_owned()
        }
    }
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

fn write_plan(out: &mut String, plan: &SweepPlan, style: Style) -> std::fmt::Result {
    writeln!(
        out,
        "controller {}, volume purge {}",
        Escaped(&plan.controller),
        if plan.purge_volumes { "on" } else { "off" }
    )?;
    if !plan.holds.is_empty() {
        writeln!(
            out,
            "\n{} ({}):",
            style.paint("33", "held"),
            plan.holds.len()
        )?;
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
    // Releases by swarm: both lists are sorted by swarm, then release.
    let mut deletions = plan.deletions.iter().peekable();
    let mut spared = plan.spared.iter().peekable();
    let mut named: Vec<&SwarmName> = plan.swarms.iter().map(|s| &s.swarm).collect();
    named.extend(plan.deletions.iter().map(|d| &d.swarm));
    named.extend(plan.spared.iter().map(|s| &s.swarm));
    named.sort();
    named.dedup();
    for name in named {
        writeln!(out)?;
        write_swarm_header(out, plan, name)?;
        let mut any = false;
        loop {
            let d = deletions.peek().filter(|d| &d.swarm == name);
            let s = spared.peek().filter(|s| &s.swarm == name);
            let delete_next = match (d, s) {
                (Some(d), Some(s)) => d.release <= s.release,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            any = true;
            if delete_next {
                if let Some(d) = deletions.next() {
                    write_deletion(out, plan, d, style)?;
                }
            } else if let Some(s) = spared.next() {
                write!(
                    out,
                    "  {}  {}  {}",
                    style.paint("32", "spare "),
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
        }
        if !any {
            writeln!(out, "  no releases")?;
        }
    }
    let mut not_covered = 0u64;
    // A swarm whose node count is unknown has at least one node not
    // covered, and maybe more: the total never claims to be exact then.
    let mut at_least = false;
    if !plan.uncovered.is_empty() {
        writeln!(out, "\nnot covered by the volume purge:")?;
        for u in &plan.uncovered {
            let known = u.missing.or(u.unreached.as_ref().map(|n| n.len() as u64));
            at_least |= u.missing.is_none();
            not_covered += known.unwrap_or(1).max(1);
            let count = u.node_count.map_or("unknown".to_owned(), |c| c.to_string());
            let missing = u.missing.map_or("unknown".to_owned(), |c| c.to_string());
            let reached = match (u.coverage, u.reached.is_empty()) {
                // Its volumes unread: the manager counts as missing too.
                (Coverage::NodeLocal, _) if u.node_count.is_some() && u.missing == u.node_count => {
                    "none".to_owned()
                }
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
    if plan.prune_resources {
        write_resources(out, plan, style)?;
    }
    writeln!(
        out,
        "\n{} to delete, {} spared, {} not covered",
        plan.deletions.len(),
        plan.spared.len(),
        match (not_covered, at_least) {
            (1, false) => "1 node".to_owned(),
            (1, true) => "at least 1 node".to_owned(),
            (n, false) => format!("{n} nodes"),
            (n, true) => format!("at least {n} nodes"),
        }
    )?;
    if plan.prune_resources {
        let objects = plan.dropped_objects();
        writeln!(
            out,
            "{objects} dropped objects to remove, {} unclaimed, {} releases left whole by the resource rule",
            plan.unclaimed.len(),
            plan.resource_holds.len()
        )?;
    }
    Ok(())
}

/// What the resource rule found: the objects live releases dropped (to
/// remove, and those kept in use), the releases it leaves whole, the
/// revisions it skipped, and what it does not claim.
fn write_resources(out: &mut String, plan: &SweepPlan, style: Style) -> std::fmt::Result {
    let count = plan.dropped_objects();
    writeln!(out, "\ndropped objects to remove ({count}):")?;
    if plan.dropped.is_empty() {
        writeln!(out, "  none")?;
    }
    for d in &plan.dropped {
        writeln!(
            out,
            "  {}/{}  application {}, current revision {}",
            Escaped(&d.swarm),
            Escaped(&d.release),
            Escaped(&d.application),
            d.revision
        )?;
        for o in &d.objects {
            writeln!(
                out,
                "    {}  {} {}, declared by revision {}, dropped by revision {}",
                style.paint("31", "remove"),
                o.kind.as_str(),
                Escaped(&o.name),
                o.claimed_by,
                o.dropped_by
            )?;
        }
        write_kept(out, style, &d.in_use_by, "    ", "    ")?;
    }
    for h in &plan.resource_holds {
        writeln!(
            out,
            "  {}  {}/{}  {} - {}",
            style.paint("33", "held  "),
            Escaped(&h.swarm),
            Escaped(&h.release),
            h.reason.as_str(),
            Escaped(&h.detail)
        )?;
    }
    for r in &plan.skipped_revisions {
        writeln!(
            out,
            "  skipped  {}/{} revision {}: {}",
            Escaped(&r.swarm),
            Escaped(&r.release),
            r.revision,
            Escaped(&r.error)
        )?;
    }
    if !plan.unclaimed.is_empty() {
        writeln!(
            out,
            "\nunclaimed (not declared now, not proven ours; never removed):"
        )?;
        for u in &plan.unclaimed {
            writeln!(
                out,
                "  {}/{}  {} {}  {}",
                Escaped(&u.swarm),
                Escaped(&u.release),
                u.kind.as_str(),
                Escaped(&u.name),
                u.reason.as_str()
            )?;
        }
    }
    Ok(())
}

/// `swarm NAME: ...` with what the plan knows of its reach.
fn write_swarm_header(out: &mut String, plan: &SweepPlan, name: &SwarmName) -> std::fmt::Result {
    write!(out, "swarm {}", Escaped(name))?;
    let Some(sw) = plan.swarm(name) else {
        return writeln!(out);
    };
    if sw.names.len() > 1 {
        write!(out, " (one cluster under {})", escaped_list(&sw.names))?;
    }
    if !sw.readable {
        return writeln!(out, ": could not be read");
    }
    match (&sw.nodes, sw.node_count) {
        (Some(nodes), Some(count)) => writeln!(out, ": {} of {count} nodes reached", nodes.len()),
        (Some(nodes), None) => writeln!(out, ": {} nodes reached, node count unknown", nodes.len()),
        (None, Some(count)) => writeln!(out, ": {count} nodes, reached through the manager only"),
        (None, None) => writeln!(
            out,
            ": node count unknown, reached through the manager only"
        ),
    }
}

/// One deletion and, indented below, what it removes in the order it
/// goes: services, networks, secrets, configs, volumes, records last.
fn write_deletion(
    out: &mut String,
    plan: &SweepPlan,
    d: &Deletion,
    style: Style,
) -> std::fmt::Result {
    writeln!(
        out,
        "  {}  {}  {}, application {}, volumes {}",
        style.paint("31", "delete"),
        Escaped(&d.release),
        d.reason.as_str(),
        Escaped(&d.application),
        d.volumes.as_str()
    )?;
    let Some(objects) = &d.objects else {
        return writeln!(out, "      objects: not listed in the snapshot");
    };
    let names = |list: &[ObjectRef]| {
        if list.is_empty() {
            "none".to_owned()
        } else {
            escaped_list(list.iter().map(|o| &o.name))
        }
    };
    let services: Vec<&String> = objects.services.iter().map(|s| &s.name).collect();
    writeln!(
        out,
        "      services: {}",
        if services.is_empty() {
            "none".to_owned()
        } else {
            escaped_list(services)
        }
    )?;
    writeln!(out, "      networks: {}", names(&objects.networks))?;
    writeln!(out, "      secrets: {}", names(&objects.secrets))?;
    writeln!(out, "      configs: {}", names(&objects.configs))?;
    if plan.purge_volumes {
        match &objects.volumes {
            None => writeln!(out, "      volumes: not listed")?,
            Some(nodes) => {
                let host = |id: &str| -> String {
                    plan.swarm(&d.swarm)
                        .and_then(|sw| sw.nodes.as_ref())
                        .and_then(|n| n.iter().find(|n| n.id == id))
                        .map_or(id, |n| n.display_name())
                        .to_owned()
                };
                let held: Vec<String> = nodes
                    .iter()
                    .filter(|n| !n.volumes.is_empty())
                    .map(|n| format!("{}: {}", Escaped(host(&n.node)), escaped_list(&n.volumes)))
                    .collect();
                if held.is_empty() {
                    writeln!(
                        out,
                        "      volumes: none on the {} nodes listed",
                        nodes.len()
                    )?;
                } else {
                    writeln!(out, "      volumes: {}", held.join("; "))?;
                }
            }
        }
    }
    if !d.in_use_by.is_empty() {
        write_kept(out, style, &d.in_use_by, "      ", " ")?;
        return writeln!(
            out,
            "      release records: kept while another workload uses what is kept"
        );
    }
    match &d.observed {
        Some(o) => writeln!(out, "      release records: {} (last)", o.records.len()),
        None => writeln!(out, "      release records (last)"),
    }
}

/// One `kept` line per use, indented by `indent`, `gap` after the word.
fn write_kept(
    out: &mut String,
    style: Style,
    uses: &[InUse],
    indent: &str,
    gap: &str,
) -> std::fmt::Result {
    for u in uses {
        writeln!(
            out,
            "{indent}{}{gap}{}: {}",
            style.paint("33", "kept"),
            u.kind.as_str(),
            in_use_text(u)
        )?;
    }
    Ok(())
}

/// `"shop_data" in use by service "user_app" (id abc)`, escaped: one use
/// of a shared object, as the plan and the report name it.
pub fn in_use_text(u: &InUse) -> String {
    in_use_with(u, Escaped)
}

/// Who an `unseen` user is ([`crate::usage::unseen_users`]), in every
/// rendering.
pub(crate) const UNSEEN: &str = "a container on a node whose containers were not read";

/// One use of a shared object in words, each name from the other
/// workload shown by `show` (escaped for a terminal, or raw for a
/// sentence escaped whole when printed): the one wording of a use, for
/// the plan, the report and `explain`.
pub(crate) fn in_use_with<'u, N: std::fmt::Display>(
    u: &'u InUse,
    show: impl Fn(&'u str) -> N,
) -> String {
    let user = &u.user;
    if user.kind == crate::usage::UserKind::Unseen {
        return format!("{} (attachable) may be in use by {UNSEEN}", show(&u.object));
    }
    let place = match &user.node {
        Some(node) => format!(" on node {}", show(node)),
        None => String::new(),
    };
    format!(
        "{} in use by {} {} (id {}){place}",
        show(&u.object),
        user.kind.as_str(),
        show(&user.name),
        show(&user.id)
    )
}

/// What a change of the app set changes in the plan
/// ([`crate::PlanDiff`]), for a person: the holds that differ, then per
/// line a release or dropped object one side deletes and the other does
/// not, `+` for what the change adds to the deletions, `-` for what it
/// takes out (`delete later`, with when, for what that side deletes only
/// once what delays it has cleared); totals last.
pub fn diff_text(diff: &crate::PlanDiff) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_diff(&mut out, diff);
    out
}

fn write_diff(out: &mut String, diff: &crate::PlanDiff) -> std::fmt::Result {
    writeln!(
        out,
        "controller {}, volume purge {}; the change against the base app set:",
        Escaped(&diff.controller),
        if diff.purge_volumes { "on" } else { "off" }
    )?;
    for (sign, holds) in [("+", &diff.holds_added), ("-", &diff.holds_removed)] {
        for h in holds {
            match &h.swarm {
                None => write!(out, "{sign} held  whole sweep")?,
                Some(s) => write!(out, "{sign} held  swarm {}", Escaped(s))?,
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
    let escaped = |name: &str| Escaped(name).to_string();
    // `delete later`: the side that deletes it does so only once what
    // delays it (a window, a grace period) has cleared, and says when.
    let later = |pending: Option<&crate::plan_diff::Pending>| match pending {
        Some(p) => (" later", format!("; {}", p.text(&escaped))),
        None => ("", String::new()),
    };
    for (sign, list, other) in [
        ("+", &diff.added, "without the change"),
        ("-", &diff.removed, "with the change"),
    ] {
        for c in list {
            let d = &c.deletion;
            let (verb, when) = later(c.pending.as_ref());
            write!(
                out,
                "{sign} delete{verb}  {}  {}, application {}, volumes {}",
                Escaped(d.release_ref()),
                d.reason.as_str(),
                Escaped(&d.application),
                d.volumes.as_str()
            )?;
            let volumes = crate::plan_diff::deletion_volumes(diff.purge_volumes, d);
            if volumes > 0 {
                write!(out, " ({volumes} listed)")?;
            }
            write!(out, "{when}")?;
            match c.spared_as {
                Some(reason) => write!(out, "; {other}: spared, {}", reason.as_str())?,
                None => write!(out, "; {other}: not listed")?,
            }
            if let Some(until) = &c.spared_until {
                write!(out, ", deleted too {}", until.text(&escaped))?;
            }
            writeln!(out)?;
        }
    }
    for (sign, list, other) in [
        ("+", &diff.dropped_added, "without the change"),
        ("-", &diff.dropped_removed, "with the change"),
    ] {
        for d in list {
            let (verb, when) = later(d.pending.as_ref());
            write!(
                out,
                "{sign} remove{verb}  {}/{}  {} {}, dropped by revision {}{when}",
                Escaped(&d.swarm),
                Escaped(&d.release),
                d.object.kind.as_str(),
                Escaped(&d.object.name),
                d.object.dropped_by
            )?;
            if let Some(until) = &d.spared_until {
                write!(out, "; {other}: kept, removed too {}", until.text(&escaped))?;
            }
            writeln!(out)?;
        }
    }
    let c = &diff.counts;
    write!(
        out,
        "\n+{} -{} releases, +{} -{} volumes, +{} -{} dropped objects, +{} -{} holds",
        c.releases_added,
        c.releases_removed,
        c.volumes_added,
        c.volumes_removed,
        c.dropped_added,
        c.dropped_removed,
        diff.holds_added.len(),
        diff.holds_removed.len()
    )?;
    let pending = [
        c.releases_pending_added,
        c.releases_pending_removed,
        c.dropped_pending_added,
        c.dropped_pending_removed,
    ];
    if pending.iter().any(|n| *n > 0) {
        write!(
            out,
            "; of them later: +{} -{} releases, +{} -{} dropped objects",
            pending[0], pending[1], pending[2], pending[3]
        )?;
    }
    writeln!(out)
}
