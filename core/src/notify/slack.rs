//! The body of a Slack incoming webhook (`--notify-format slack`), which
//! Mattermost and Rocket.Chat accept too: `text` for the notification and
//! for receivers that ignore blocks, `blocks` for Slack's layout.
//!
//! Every name comes from whoever can create a Swarm object, and Slack's
//! markup turns `<...>` into links and mentions (`<!channel>`, `<@U1>`),
//! while Mattermost and Rocket.Chat also ping on a bare `@channel`,
//! `@here` or `@all`, and render Markdown (`[Approve](https://...)` is a
//! link, `![](https://...)` an image every reader's client loads); Slack
//! links bare addresses too. So each name goes through [`escape`]: `&`,
//! `<` and `>` as entities, every `@` followed by a word joiner (no mention
//! parses), control and invisible characters shown as `\u{..}` (no name
//! adds a line or hides in another); and each name is shown in a code span
//! ([`code`]), which all three render as it is, no link, image or emphasis.

use serde_json::{json, Value};

use super::{summary, Event, EventKind};
use crate::time::UnixTime;

/// The most objects listed one per line; the rest are counted, and a
/// Slack section holds at most 3000 characters.
pub const MAX_LINES: usize = 20;

/// The longest name shown, in characters; longer ones are cut with `…`.
const MAX_NAME_CHARS: usize = 100;

/// U+2060 WORD JOINER: invisible, and no mention syntax reads past it.
const WORD_JOINER: char = '\u{2060}';

/// `text` made inert for Slack's mrkdwn (and Mattermost's markdown).
pub fn escape(text: &str) -> String {
    let shown = crate::escape::escape(text);
    let mut out = String::with_capacity(shown.len() + 8);
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '@' => {
                out.push('@');
                out.push(WORD_JOINER);
            }
            c => out.push(c),
        }
    }
    out
}

/// A name as shown: escaped, cut to [`MAX_NAME_CHARS`], in a code span.
fn name(text: &str) -> String {
    if text.chars().count() > MAX_NAME_CHARS {
        let cut: String = text.chars().take(MAX_NAME_CHARS).collect();
        format!("{}…", code(&cut))
    } else {
        code(text)
    }
}

/// `text` escaped, in a code span: Slack's spans cannot hold a backtick,
/// so one inside is shown as `ˋ` (U+02CB), and the span never ends early.
pub fn code(text: &str) -> String {
    format!("`{}`", escape(text).replace('`', "\u{2cb}"))
}

/// The most characters of the list's section: Slack refuses a section
/// over 3000 (and the whole notification with it), and escaping can make a
/// name of 100 characters ten times as long.
const MAX_LIST_CHARS: usize = 2800;

/// The webhook body for `event`, sent by `controller` at `time`, linking
/// to `report_url` when the controller serves one.
pub fn body(event: &Event, controller: &str, time: UnixTime, report_url: Option<&str>) -> Value {
    let headline = format!(
        "swarm-sweep {}: {}",
        name(controller),
        escape(&summary(event))
    );
    let all: Vec<String> = event
        .objects
        .iter()
        .take(MAX_LINES)
        .map(|o| {
            let mut line = format!("• {} {}", o.kind, name(&o.name));
            if let Some(release) = &o.release {
                if *release != o.name {
                    line.push_str(&format!(" (release {})", name(release)));
                }
            }
            if let Some(node) = &o.node {
                line.push_str(&format!(" on node {}", name(node)));
            }
            if let Some(outcome) = &o.outcome {
                line.push_str(&format!(": {}", escape(outcome)));
            }
            line
        })
        .collect();
    // Whole lines while they fit, with room for the count of the rest.
    let mut lines = Vec::new();
    let mut chars = 0;
    for line in all {
        let len = line.chars().count() + 1;
        if chars + len > MAX_LIST_CHARS - 40 {
            break;
        }
        chars += len;
        lines.push(line);
    }
    let more = (event.objects.len().saturating_sub(lines.len()) as u64) + event.objects_omitted;
    if more > 0 {
        lines.push(format!("…and {more} more"));
    }
    let list = lines.join("\n");
    let mut blocks = vec![json!({
        "type": "section",
        "text": {"type": "mrkdwn", "text": format!("*{}* {}", title(event.event), headline)},
    })];
    if !list.is_empty() {
        blocks.push(json!({
            "type": "section",
            "text": {"type": "mrkdwn", "text": list},
        }));
    }
    let mut context = format!("{time}");
    if let Some(url) = report_url {
        context.push_str(&format!(" · <{}|the last report>", escape(url)));
    }
    blocks.push(json!({
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": context}],
    }));
    let text = if list.is_empty() {
        headline
    } else {
        format!("{headline}\n{list}")
    };
    json!({"text": text, "blocks": blocks})
}

/// The event's kind, for people.
fn title(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Deleted => "Deleted",
        EventKind::DeletionFailed => "Deletion failed",
        EventKind::Held => "Held",
        EventKind::NodesUncovered => "Nodes uncovered",
        EventKind::StalePlan => "Stale plan",
    }
}
