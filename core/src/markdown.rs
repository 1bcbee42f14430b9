//! The plan, or what a change does to it, as Markdown for a pull-request
//! comment (`swarm-sweep plan --format markdown`). For people; JSON is the
//! contract, and this text may change.
//!
//! Every name in it (swarm, release, application, node, object, hold
//! message) comes from whoever can create a Swarm object or edit the app
//! set, and a comment is rendered by the forge: a raw name could add a
//! link or an image, HTML, a mention that pages a team, a heading, a table
//! or a code fence that swallows the rest of the comment. Each goes out
//! through [`code`] only: an inline code span, inside which Markdown makes
//! no links, HTML, mentions or emphasis, with its delimiters longer than
//! any run of backticks in the name and no line break left to end it.

use std::fmt::Write;

use crate::escape::is_unsafe;
use crate::plan::{Coverage, Deletion, Hold, SpareReason, SwarmPlan, SweepPlan};
use crate::plan_diff::{deletion_volumes, ChangedDeletion, ChangedDropped, PlanDiff};
use crate::refs::SwarmName;

/// Lists longer than this are collapsed under `<details>`, so the comment
/// stays readable when a change removes many releases.
pub const COLLAPSE_AFTER: usize = 10;

/// At most this many entries of one list are written: a forge refuses a
/// comment past a size (GitHub's is 65,536 characters), and a list of
/// thousands of releases says no more than its count and the JSON plan.
pub const LIST_LIMIT: usize = 100;

/// The most bytes a comment takes: lists are bounded one by one, but many
/// swarms' lists (and long names) together are not, and a forge refuses
/// the whole comment past its size (GitHub's is 65,536 characters). Past
/// this, the comment is cut at a line and says so.
pub const COMMENT_LIMIT: usize = 60_000;

/// `text` as an inline code span that shows every character of it: C0,
/// C1 and bidi controls as `\u{..}` and a backslash as `\\` (so that the
/// shown text reads back to exactly one name), between backtick runs
/// longer than any inside it. A name that starts or ends with a backtick
/// or a space is padded with one space each side, which the parser takes
/// off again. The empty name is `""` in italics, which no code span is.
pub fn code(text: &str) -> String {
    if text.is_empty() {
        return "*(empty)*".to_owned();
    }
    let mut shown = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        if c == '\\' {
            shown.push_str("\\\\");
        } else if is_unsafe(c) {
            // Writing to a String cannot fail.
            let _ = write!(shown, "{}", c.escape_unicode());
        } else {
            shown.push(c);
        }
    }
    let longest = longest_backtick_run(&shown);
    let fence = "`".repeat(longest + 1);
    let all_spaces = shown.chars().all(|c| c == ' ');
    let pad = !all_spaces && (shown.starts_with(['`', ' ']) || shown.ends_with(['`', ' ']));
    let space = if pad { " " } else { "" };
    format!("{fence}{space}{shown}{space}{fence}")
}

fn longest_backtick_run(text: &str) -> usize {
    let (mut longest, mut run) = (0, 0);
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// A swarm's name as [`code`], the local swarm (the empty name) as
/// `(local)` in italics, as no code span shows.
fn swarm(name: &SwarmName) -> String {
    if name.as_str().is_empty() {
        "*(local)*".to_owned()
    } else {
        code(name.as_str())
    }
}

/// `n thing` or `n things`.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `a`, `a and b`, `a, b and c`.
fn joined(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `2 releases, 3 volumes and 1 dropped object`: the parts that are not
/// zero (`nothing` when all are).
fn quantities(releases: u64, volumes: u64, dropped: u64) -> String {
    let mut parts = Vec::new();
    if releases > 0 {
        parts.push(count(releases, "release", "releases"));
    }
    if volumes > 0 {
        parts.push(count(volumes, "volume", "volumes"));
    }
    if dropped > 0 {
        parts.push(count(dropped, "dropped object", "dropped objects"));
    }
    if parts.is_empty() {
        return "nothing".to_owned();
    }
    joined(&parts)
}

/// The swarms of `names`, counted once each.
fn swarms_of<'a>(names: impl IntoIterator<Item = &'a SwarmName>) -> u64 {
    let mut names: Vec<&SwarmName> = names.into_iter().collect();
    names.sort();
    names.dedup();
    names.len() as u64
}

/// The plan's one-line headline: `2 releases and 3 volumes on 2 swarms
/// would be deleted`, or `Nothing would be deleted`.
pub fn headline(plan: &SweepPlan) -> String {
    let releases = plan.deletions.len() as u64;
    let volumes: u64 = plan
        .deletions
        .iter()
        .map(|d| deletion_volumes(plan.purge_volumes, d))
        .sum();
    let dropped = plan.dropped_objects() as u64;
    if releases == 0 && dropped == 0 {
        return "Nothing would be deleted".to_owned();
    }
    let swarms = swarms_of(
        plan.deletions
            .iter()
            .map(|d| &d.swarm)
            .chain(plan.dropped.iter().map(|d| &d.swarm)),
    );
    let what = quantities(releases, volumes, dropped);
    format!(
        "{what} on {} would be deleted",
        count(swarms, "swarm", "swarms")
    )
}

/// The diff's one-line headline: what the change adds to the deletions
/// and what it takes out of them.
pub fn diff_headline(diff: &PlanDiff) -> String {
    let c = &diff.counts;
    let adds = c.releases_added + c.dropped_added > 0;
    let removes = c.releases_removed + c.dropped_removed > 0;
    let on = |names: Vec<&SwarmName>| count(swarms_of(names), "swarm", "swarms");
    let total = c.releases_added + c.dropped_added;
    let pending = c.releases_pending_added + c.dropped_pending_added;
    let them = if total == 1 { "it" } else { "them" };
    let later = match pending {
        0 => String::new(),
        n if n == total => format!(" (later, once what delays {them} has cleared)"),
        n => format!(" ({n} of them later, once what delays them has cleared)"),
    };
    let added = format!(
        "would also delete {} on {}{later}",
        quantities(c.releases_added, c.volumes_added, c.dropped_added),
        on(diff
            .added
            .iter()
            .map(|a| &a.deletion.swarm)
            .chain(diff.dropped_added.iter().map(|d| &d.swarm))
            .collect())
    );
    let removed = format!(
        "would no longer delete {}",
        quantities(c.releases_removed, c.volumes_removed, c.dropped_removed)
    );
    match (adds, removes) {
        (false, false) if diff.is_empty() => {
            "Merging this change does not change what would be deleted".to_owned()
        }
        (false, false) => {
            "Merging this change deletes nothing more or less; it changes holds".to_owned()
        }
        (true, false) => format!("Merging this change {added}"),
        (false, true) => format!("Merging this change {removed}"),
        (true, true) => format!("Merging this change {added}, and {removed}"),
    }
}

/// The plan as a comment: its headline, the holds, and per swarm what
/// goes (objects, volumes, coverage), what is held and why, and what is
/// spared because it is still declared.
pub fn plan_markdown(plan: &SweepPlan) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_plan(&mut out, plan);
    within_limit(out)
}

/// The diff as a comment: its headline, the holds that differ, and per
/// swarm the releases and dropped objects only one side deletes.
pub fn diff_markdown(diff: &PlanDiff) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_diff(&mut out, diff);
    within_limit(out)
}

/// `comment` if it is within [`COMMENT_LIMIT`]; otherwise cut at the last
/// whole line that leaves room for the note, every `<details>` left open
/// closed, and a note that says what was cut and where the rest is.
fn within_limit(comment: String) -> String {
    if comment.len() <= COMMENT_LIMIT {
        return comment;
    }
    const NOTE: &str = "\n**The comment stops here: the whole of it would be longer than a \
                        forge accepts. The JSON plan (`--format json`) has every entry.**\n";
    // Room for the note and a closing tag per `<details>` left open.
    let budget = COMMENT_LIMIT - NOTE.len() - 64 * 12;
    let mut end = 0;
    for (at, _) in comment.match_indices('\n') {
        if at + 1 > budget {
            break;
        }
        end = at + 1;
    }
    let mut out = comment[..end].to_owned();
    // The renderer's own tags, each on a line of its own: a name may hold
    // `</details>` too (in a code span), and counting it would leave a
    // section open, the note hidden inside it.
    let open = out
        .lines()
        .filter(|l| l.starts_with("<details><summary>"))
        .count();
    let closed = out.lines().filter(|l| *l == "</details>").count();
    for _ in closed..open.min(closed + 64) {
        out.push_str("\n</details>\n");
    }
    out.push_str(NOTE);
    out
}

fn write_plan(out: &mut String, plan: &SweepPlan) -> std::fmt::Result {
    writeln!(out, "### swarm-sweep plan\n\n**{}**\n", headline(plan))?;
    writeln!(
        out,
        "Controller {}; volume purge {}; resource rule {}.",
        code(plan.controller.as_str()),
        on_off(plan.purge_volumes),
        on_off(plan.prune_resources)
    )?;
    write_holds(out, "Holds", &plan.holds)?;
    for swarm in swarm_names(plan) {
        write_swarm(out, plan, swarm)?;
    }
    Ok(())
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// Every swarm the plan names, once each, sorted.
fn swarm_names(plan: &SweepPlan) -> Vec<&SwarmName> {
    let mut names: Vec<&SwarmName> = plan.swarms.iter().map(|s| &s.swarm).collect();
    names.extend(plan.deletions.iter().map(|d| &d.swarm));
    names.extend(plan.spared.iter().map(|s| &s.swarm));
    names.extend(plan.dropped.iter().map(|d| &d.swarm));
    names.sort();
    names.dedup();
    names
}

fn write_holds(out: &mut String, title: &str, holds: &[Hold]) -> std::fmt::Result {
    if holds.is_empty() {
        return Ok(());
    }
    let items: Vec<String> = holds.iter().map(hold_item).collect();
    write_list(out, &format!("{title} ({})", holds.len()), &items)
}

fn hold_item(h: &Hold) -> String {
    let mut item = match &h.swarm {
        None => "whole sweep".to_owned(),
        Some(s) => format!("swarm {}", swarm(s)),
    };
    let _ = write!(item, ": {}", code(h.reason.as_str()));
    if !h.applications.is_empty() {
        let apps: Vec<String> = h.applications.iter().map(|a| code(a)).collect();
        let _ = write!(item, " (applications {})", apps.join(", "));
    }
    if let Some(m) = &h.message {
        let _ = write!(item, ": {}", code(m));
    }
    item
}

/// A bold title and a bullet list; past [`COLLAPSE_AFTER`] items the list
/// is collapsed under `<details>`, and past [`LIST_LIMIT`] the rest is
/// counted, not listed. Items are single lines or lines indented under
/// their first.
fn write_list(out: &mut String, title: &str, items: &[String]) -> std::fmt::Result {
    writeln!(out, "\n**{title}**\n")?;
    let collapsed = items.len() > COLLAPSE_AFTER;
    if collapsed {
        // The blank line after the summary lets Markdown inside.
        writeln!(out, "<details><summary>{} entries</summary>\n", items.len())?;
    }
    for item in items.iter().take(LIST_LIMIT) {
        writeln!(out, "- {item}")?;
    }
    if items.len() > LIST_LIMIT {
        writeln!(
            out,
            "- and {} more, not shown: see the JSON plan",
            items.len() - LIST_LIMIT
        )?;
    }
    if collapsed {
        writeln!(out, "\n</details>")?;
    }
    Ok(())
}

fn write_swarm(out: &mut String, plan: &SweepPlan, name: &SwarmName) -> std::fmt::Result {
    writeln!(out, "\n#### Swarm {}\n", swarm(name))?;
    writeln!(out, "{}", swarm_line(plan.swarm(name)))?;
    let deleted: Vec<String> = plan
        .deletions
        .iter()
        .filter(|d| &d.swarm == name)
        .map(|d| deletion_item(plan.purge_volumes, plan.swarm(&d.swarm), d))
        .collect();
    if !deleted.is_empty() {
        write_list(out, &format!("Deleted ({})", deleted.len()), &deleted)?;
    }
    let dropped: Vec<String> = plan
        .dropped
        .iter()
        .filter(|d| &d.swarm == name)
        .flat_map(|d| {
            d.objects.iter().map(move |o| ChangedDropped {
                swarm: d.swarm.clone(),
                release: d.release.clone(),
                application: d.application.clone(),
                object: o.clone(),
                pending: None,
                spared_until: None,
            })
        })
        .map(|c| dropped_item(&c))
        .collect();
    if !dropped.is_empty() {
        write_list(
            out,
            &format!("Dropped objects removed ({})", dropped.len()),
            &dropped,
        )?;
    }
    let spared = |wanted: fn(SpareReason) -> bool| -> Vec<String> {
        plan.spared
            .iter()
            .filter(|s| &s.swarm == name && wanted(s.reason))
            .map(|s| {
                let mut item = format!("{} {}", code(&s.release), code(s.reason.as_str()));
                if let Some(a) = &s.application {
                    let _ = write!(item, ", application {}", code(a));
                }
                if let Some(d) = &s.detail {
                    let _ = write!(item, ": {}", code(d));
                }
                item
            })
            .collect()
    };
    let held = spared(is_held);
    if !held.is_empty() {
        write_list(out, &format!("Held ({})", held.len()), &held)?;
    }
    let declared = spared(is_declared);
    if !declared.is_empty() {
        write_list(
            out,
            &format!("Spared, still declared ({})", declared.len()),
            &declared,
        )?;
    }
    let others = plan
        .spared
        .iter()
        .filter(|s| &s.swarm == name && !is_held(s.reason) && !is_declared(s.reason))
        .count() as u64;
    if others > 0 {
        writeln!(
            out,
            "\n{} not this controller's to delete.",
            count(others, "other release is", "other releases are")
        )?;
    }
    Ok(())
}

/// Spared for now: it would go but for a hold, its grace period, a keep
/// label, or being the controller's own stack.
fn is_held(reason: SpareReason) -> bool {
    matches!(
        reason,
        SpareReason::Held | SpareReason::GracePeriod | SpareReason::Kept | SpareReason::OwnStack
    )
}

/// Spared because an application of the app set still wants it.
fn is_declared(reason: SpareReason) -> bool {
    matches!(
        reason,
        SpareReason::CurrentApplication | SpareReason::Declared
    )
}

/// What the plan knows of a swarm's reach, and its purge coverage.
fn swarm_line(sw: Option<&SwarmPlan>) -> String {
    let Some(sw) = sw else {
        return "Not in the plan's list of swarms.".to_owned();
    };
    let mut line = String::new();
    if sw.names.len() > 1 {
        let names: Vec<String> = sw.names.iter().map(swarm).collect();
        let _ = write!(line, "One cluster under {}. ", names.join(", "));
    }
    if !sw.readable {
        line.push_str("Could not be read: nothing is deleted on it.");
        return line;
    }
    let _ = match (&sw.nodes, sw.node_count) {
        (Some(nodes), Some(n)) => write!(line, "{} of {n} nodes reached", nodes.len()),
        (Some(nodes), None) => write!(line, "{} nodes reached, node count unknown", nodes.len()),
        (None, Some(n)) => write!(line, "{n} nodes, reached through the manager only"),
        (None, None) => write!(line, "Node count unknown, reached through the manager only"),
    };
    if sw.coverage != Coverage::Off {
        let _ = write!(
            line,
            "; volume purge coverage {}",
            code(sw.coverage.as_str())
        );
    }
    if let Some(unreached) = sw.unreached.as_ref().filter(|u| !u.is_empty()) {
        let names: Vec<String> = unreached.iter().map(|n| code(n)).collect();
        let _ = write!(line, "; not reached: {}", names.join(", "));
    }
    line.push('.');
    line
}

/// A deletion's item: the release, why it goes and its coverage, then,
/// indented, the objects and volumes it removes; `sw` is its swarm's
/// entry, which names the nodes.
fn deletion_item(purge: bool, sw: Option<&SwarmPlan>, d: &Deletion) -> String {
    let mut item = format!(
        "{} {}, application {}",
        code(&d.release),
        code(d.reason.as_str()),
        code(&d.application)
    );
    if purge {
        let _ = write!(item, ", volumes {}", code(d.volumes.as_str()));
        if matches!(d.volumes, Coverage::Partial | Coverage::NodeLocal) {
            item.push_str(" (volumes may stay on nodes not reached)");
        }
    }
    let Some(objects) = &d.objects else {
        item.push_str("\n  - objects: not listed in the snapshot");
        return item;
    };
    let names = |list: Vec<&String>| -> String {
        if list.is_empty() {
            "none".to_owned()
        } else {
            list.into_iter()
                .map(|n| code(n))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let _ = write!(
        item,
        "\n  - services: {}\n  - networks: {}\n  - secrets: {}\n  - configs: {}",
        names(objects.services.iter().map(|s| &s.name).collect()),
        names(objects.networks.iter().map(|o| &o.name).collect()),
        names(objects.secrets.iter().map(|o| &o.name).collect()),
        names(objects.configs.iter().map(|o| &o.name).collect()),
    );
    if purge {
        match &objects.volumes {
            None => item.push_str("\n  - volumes: not listed"),
            Some(nodes) => {
                let host = |id: &str| -> String {
                    sw.and_then(|sw| sw.nodes.as_ref())
                        .and_then(|n| n.iter().find(|n| n.id == id))
                        .map_or(id, |n| n.display_name())
                        .to_owned()
                };
                let held: Vec<String> = nodes
                    .iter()
                    .filter(|n| !n.volumes.is_empty())
                    .map(|n| {
                        let vols: Vec<&String> = n.volumes.iter().collect();
                        format!("on {}: {}", code(&host(&n.node)), names(vols))
                    })
                    .collect();
                if held.is_empty() {
                    let _ = write!(
                        item,
                        "\n  - volumes: none on the {} nodes listed",
                        nodes.len()
                    );
                } else {
                    let _ = write!(item, "\n  - volumes {}", held.join("; "));
                }
            }
        }
    }
    for u in &d.in_use_by {
        if u.user.kind == crate::usage::UserKind::Unseen {
            let _ = write!(
                item,
                "\n  - kept, maybe in use: attachable {} {} by {}",
                u.kind.as_str(),
                code(&u.object),
                crate::render::UNSEEN,
            );
            continue;
        }
        let _ = write!(
            item,
            "\n  - kept, in use: {} {} by {} {}",
            u.kind.as_str(),
            code(&u.object),
            u.user.kind.as_str(),
            code(&u.user.name)
        );
    }
    if !d.in_use_by.is_empty() {
        item.push_str("\n  - release records: kept while another workload uses what is kept");
    }
    item
}

fn dropped_item(c: &ChangedDropped) -> String {
    format!(
        "{} {} of release {} (application {}), dropped by revision {}",
        c.object.kind.as_str(),
        code(&c.object.name),
        code(&c.release),
        code(&c.application),
        c.object.dropped_by
    )
}

/// What the other side of a diff does with a release one side deletes:
/// spares it, and maybe deletes it too once what delays it has cleared.
fn other_side(c: &ChangedDeletion, other: &str) -> String {
    let mut text = match c.spared_as {
        Some(reason) => format!("; {other} spared as {}", code(reason.as_str())),
        None => format!("; not listed {other}"),
    };
    if let Some(until) = &c.spared_until {
        let _ = write!(text, ", but deleted too {}", until.text(&code_of));
    }
    text
}

/// [`code`], for [`Pending::text`](crate::plan_diff::Pending::text).
fn code_of(name: &str) -> String {
    code(name)
}

/// A release the change adds to the deletions: all it removes, as the
/// plan lists it, when (if not at the next sweep), and what the base does
/// with it.
fn added_item(diff: &PlanDiff, c: &ChangedDeletion) -> String {
    let d = &c.deletion;
    let sw = diff.swarms.iter().find(|s| s.swarm == d.swarm);
    let mut item = deletion_item(diff.purge_volumes, sw, d);
    let end = item.find('\n').unwrap_or(item.len());
    let mut line = String::new();
    if let Some(pending) = &c.pending {
        let _ = write!(line, "; **later**, {}", pending.text(&code_of));
    }
    line.push_str(&other_side(c, "without this change"));
    item.insert_str(end, &line);
    item
}

/// A release the change takes out of the deletions, and why it stays.
fn removed_item(c: &ChangedDeletion) -> String {
    let d = &c.deletion;
    let later = match &c.pending {
        Some(pending) => format!(
            "; without this change deleted later, {}",
            pending.text(&code_of)
        ),
        None => String::new(),
    };
    format!(
        "{} {}, application {}{later}{}",
        code(&d.release),
        code(d.reason.as_str()),
        code(&d.application),
        other_side(c, "with this change")
    )
}

/// A dropped object one side of a diff removes: when, if not at the next
/// sweep, and whether the other side removes it too, later. `this` and
/// `other` name the two sides, as `other_side` does.
fn changed_dropped_item(c: &ChangedDropped, added: bool) -> String {
    let (this, other) = if added {
        ("", "without this change")
    } else {
        ("without this change ", "with this change")
    };
    let mut item = dropped_item(c);
    if let Some(pending) = &c.pending {
        let later = if added { "**later**" } else { "removed later" };
        let _ = write!(item, "; {this}{later}, {}", pending.text(&code_of));
    }
    if let Some(until) = &c.spared_until {
        let _ = write!(
            item,
            "; {other} kept, but removed too {}",
            until.text(&code_of)
        );
    }
    item
}

fn write_diff(out: &mut String, diff: &PlanDiff) -> std::fmt::Result {
    writeln!(
        out,
        "### swarm-sweep plan: this change\n\n**{}**\n",
        diff_headline(diff)
    )?;
    writeln!(
        out,
        "Compared with the base app set on the same snapshot; controller {}; volume purge {}.",
        code(diff.controller.as_str()),
        on_off(diff.purge_volumes)
    )?;
    write_holds(out, "Holds only with this change", &diff.holds_added)?;
    write_holds(out, "Holds only without this change", &diff.holds_removed)?;
    let mut names: Vec<&SwarmName> = diff
        .added
        .iter()
        .chain(&diff.removed)
        .map(|c| &c.deletion.swarm)
        .chain(
            diff.dropped_added
                .iter()
                .chain(&diff.dropped_removed)
                .map(|d| &d.swarm),
        )
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        writeln!(out, "\n#### Swarm {}\n", swarm(name))?;
        let sw = diff.swarms.iter().find(|s| &s.swarm == name);
        writeln!(out, "{}", swarm_line(sw))?;
        let added: Vec<String> = diff
            .added
            .iter()
            .filter(|c| &c.deletion.swarm == name)
            .map(|c| added_item(diff, c))
            .collect();
        if !added.is_empty() {
            write_list(out, &format!("Newly deleted ({})", added.len()), &added)?;
        }
        let removed: Vec<String> = diff
            .removed
            .iter()
            .filter(|c| &c.deletion.swarm == name)
            .map(removed_item)
            .collect();
        if !removed.is_empty() {
            write_list(
                out,
                &format!("No longer deleted ({})", removed.len()),
                &removed,
            )?;
        }
        for (title, list, added) in [
            ("Dropped objects newly removed", &diff.dropped_added, true),
            (
                "Dropped objects no longer removed",
                &diff.dropped_removed,
                false,
            ),
        ] {
            let items: Vec<String> = list
                .iter()
                .filter(|d| &d.swarm == name)
                .map(|d| changed_dropped_item(d, added))
                .collect();
            if !items.is_empty() {
                write_list(out, &format!("{title} ({})", items.len()), &items)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_singulars_and_plurals() {
        assert_eq!(quantities(1, 0, 0), "1 release");
        assert_eq!(quantities(2, 3, 0), "2 releases and 3 volumes");
        assert_eq!(
            quantities(1, 1, 1),
            "1 release, 1 volume and 1 dropped object"
        );
        assert_eq!(quantities(0, 0, 2), "2 dropped objects");
        assert_eq!(quantities(0, 0, 0), "nothing");
    }

    /// Twenty swarms of a hundred departed releases each, with long
    /// names: every list is bounded, and the whole comment too.
    #[test]
    fn a_comment_never_passes_what_a_forge_accepts() {
        let swarms: Vec<String> = (0..20)
            .map(|s| {
                let releases: Vec<String> = (0..100)
                    .map(|r| {
                        // A name may hold the tag that closes a section.
                        let name = format!("release-{r:03}-</details>-{}", "x".repeat(50));
                        format!(
                            r#"{{"name": "{name}", "owner": "cd/default/gone:release/{name}"}}"#
                        )
                    })
                    .collect();
                format!(
                    r#"{{"swarm": "swarm-{s:02}", "cluster_id": "c{s}", "releases": [{}]}}"#,
                    releases.join(",")
                )
            })
            .collect();
        let snapshot = crate::Snapshot::from_json(&format!(
            r#"{{"app_set": {{"loaded": true, "applications": [{{"name": "keep", "swarm": "swarm-00", "releases": []}}]}}, "swarms": [{}]}}"#,
            swarms.join(",")
        ))
        .unwrap();
        let plan = crate::plan(&snapshot).unwrap();
        assert_eq!(plan.deletions.len(), 2000);
        let comment = plan_markdown(&plan);
        assert!(comment.len() <= COMMENT_LIMIT, "{}", comment.len());
        assert!(comment.contains("The comment stops here"), "{comment}");
        assert_eq!(
            comment
                .lines()
                .filter(|l| l.starts_with("<details><summary>"))
                .count(),
            comment.lines().filter(|l| *l == "</details>").count()
        );
        // A small one is whole.
        let small = crate::Snapshot::from_json(
            r#"{"app_set": {"loaded": true, "applications": [{"name": "keep", "swarm": "a", "releases": []}]}, "swarms": [{"swarm": "a", "releases": [{"name": "web", "owner": "cd/default/gone:release/web"}]}]}"#,
        )
        .unwrap();
        assert!(!plan_markdown(&crate::plan(&small).unwrap()).contains("stops here"));
    }

    #[test]
    fn long_lists_are_collapsed_and_bounded() {
        let items: Vec<String> = (0..LIST_LIMIT + 5)
            .map(|i| code(&format!("r{i}")))
            .collect();
        let mut out = String::new();
        write_list(&mut out, "Deleted", &items[..COLLAPSE_AFTER]).unwrap();
        assert!(!out.contains("<details>"), "{out}");
        assert_eq!(
            out.lines().filter(|l| l.starts_with("- ")).count(),
            COLLAPSE_AFTER
        );
        let mut out = String::new();
        write_list(&mut out, "Deleted", &items).unwrap();
        assert!(
            out.contains(&format!(
                "<details><summary>{} entries</summary>\n\n",
                items.len()
            )),
            "{out}"
        );
        assert!(out.trim_end().ends_with("</details>"), "{out}");
        assert_eq!(
            out.lines().filter(|l| l.starts_with("- `")).count(),
            LIST_LIMIT
        );
        assert!(
            out.contains("- and 5 more, not shown: see the JSON plan"),
            "{out}"
        );
    }

    #[test]
    fn code_spans_outlast_the_backticks_inside() {
        assert_eq!(code("web"), "`web`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x``"), "``` `x`` ```");
        assert_eq!(code(" a"), "`  a `");
        assert_eq!(code("  "), "`  `");
        assert_eq!(code(""), "*(empty)*");
        assert_eq!(code("a\nb\\c"), "`a\\u{a}b\\\\c`");
    }
}
