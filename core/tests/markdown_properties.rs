//! Hostile names in the Markdown output, read back with a CommonMark
//! parser (tables and strikethrough on, as forges have them): a name never
//! makes a link, an image, HTML, a heading, a table, a code block or a
//! mention, and the code span it becomes reads back to exactly that name.

use proptest::prelude::*;
use pulldown_cmark::{Event, Options, Parser, Tag};
use sweep_core::markdown::{code, diff_markdown, plan_markdown};
use sweep_core::{plan, PlanDiff, Snapshot};

/// Characters Markdown, HTML and forges give meaning to, and line breaks.
const HOSTILE: &[char] = &[
    '`', '[', ']', '(', ')', '<', '>', '!', '@', '#', '|', '*', '_', '~', '\\', '&', ';', ':', '/',
    '.', '-', '=', '+', ' ', '\n', '\r', '\t', '\u{2028}', '\u{202e}', 'a', 'w', 'h',
];

fn hostile_name() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![4 => prop::sample::select(HOSTILE), 1 => any::<char>()],
        0..24,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// The shown text of a code span back to the name: `\\` is a backslash,
/// `\u{..}` the character.
fn decode(shown: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = shown;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('\\') {
            out.push('\\');
            rest = after;
        } else {
            let body = rest.strip_prefix("u{")?;
            let end = body.find('}')?;
            out.push(char::from_u32(u32::from_str_radix(&body[..end], 16).ok()?)?);
            rest = &body[end + 1..];
        }
    }
    out.push_str(rest);
    Some(out)
}

/// What a document has that a name must not make.
#[derive(Debug, Default, PartialEq)]
struct Constructs {
    links: usize,
    headings: usize,
    html: usize,
    tables: usize,
    code_blocks: usize,
    code: Vec<String>,
    text: String,
}

fn constructs(markdown: &str) -> Constructs {
    let mut found = Constructs::default();
    for event in Parser::new_ext(markdown, options()) {
        match event {
            Event::Start(Tag::Link { .. } | Tag::Image { .. }) => found.links += 1,
            Event::Start(Tag::Heading { .. }) => found.headings += 1,
            Event::Start(Tag::HtmlBlock) | Event::Html(_) | Event::InlineHtml(_) => found.html += 1,
            Event::Start(Tag::Table(_)) => found.tables += 1,
            Event::Start(Tag::CodeBlock(_)) => found.code_blocks += 1,
            Event::Code(text) => found.code.push(text.into_string()),
            Event::Text(text) => found.text.push_str(&text),
            _ => {}
        }
    }
    found
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_name_is_one_code_span_that_reads_back_to_it(name in hostile_name()) {
        // Where names stand in the output: after text in a list item, and
        // before more text, with a line of ours after.
        let doc = format!("- release {} goes\n- next\n", code(&name));
        let found = constructs(&doc);
        prop_assert_eq!(found.links, 0, "{}", doc);
        prop_assert_eq!(found.headings, 0, "{}", doc);
        prop_assert_eq!(found.html, 0, "{}", doc);
        prop_assert_eq!(found.tables, 0, "{}", doc);
        prop_assert_eq!(found.code_blocks, 0, "{}", doc);
        prop_assert!(!found.text.contains('@'), "a mention outside code: {}", doc);
        if name.is_empty() {
            prop_assert!(found.code.is_empty());
        } else {
            prop_assert_eq!(found.code.len(), 1, "{}", doc);
            // Reversible, hence injective: the span shows one name only.
            prop_assert_eq!(decode(&found.code[0]), Some(name.clone()), "{}", doc);
        }
        prop_assert_eq!(found.text, "release  goesnext".replace("  ", if name.is_empty() { " (empty) " } else { "  " }));
    }

    #[test]
    fn distinct_names_give_distinct_spans(a in hostile_name(), b in hostile_name()) {
        prop_assume!(a != b);
        prop_assert_ne!(code(&a), code(&b));
    }

    #[test]
    fn a_plan_of_hostile_names_has_only_its_own_headings(
        swarm in hostile_name(),
        release in hostile_name(),
        application in hostile_name(),
        node in hostile_name(),
    ) {
        let snapshot = serde_json::json!({
            "policy": {"purge_volumes": true},
            "app_set": {"loaded": true, "applications": [
                {"name": "keep", "swarm": swarm, "releases": ["kept"]}]},
            "swarms": [{"swarm": swarm, "node_count": 2,
                "nodes": [{"id": "n1", "hostname": node}],
                "releases": [
                    {"name": "kept", "owner": "cd/default/keep:release/kept"},
                    {"name": release, "owner": format!("cd/default/{application}:release/{release}"),
                     "objects": {"services": [{"id": "s1", "name": release, "version": 1}],
                                 "volumes": [{"node": "n1", "volumes": [node]}]}}]}]
        });
        // An empty release name is refused, and is not a case (nearly
        // every other one plans).
        prop_assume!(!release.is_empty());
        let snapshot = Snapshot::from_json(&snapshot.to_string()).expect("a snapshot");
        let p = plan(&snapshot).expect("a plan");
        let doc = plan_markdown(&p);
        let found = constructs(&doc);
        let swarms = p.swarms.len();
        // `### swarm-sweep plan` and one `####` per swarm.
        prop_assert_eq!(found.headings, 1 + swarms, "{}", doc);
        prop_assert_eq!(found.links, 0, "{}", doc);
        prop_assert_eq!(found.html, 0, "{}", doc);
        prop_assert_eq!(found.tables, 0, "{}", doc);
        prop_assert_eq!(found.code_blocks, 0, "{}", doc);
        prop_assert!(!found.text.contains('@'), "{}", doc);
        for d in &p.deletions {
            prop_assert!(found.code.iter().any(|c| decode(c).as_deref() == Some(d.release.as_str())), "{}", doc);
        }
    }

    #[test]
    fn a_diff_of_hostile_names_a_window_delays_has_only_its_own_headings(
        swarm in hostile_name(),
        release in hostile_name(),
    ) {
        prop_assume!(!release.is_empty());
        // Closed at `now`: the change's deletion comes only later.
        let snapshot = |apps: serde_json::Value| {
            let doc = serde_json::json!({
                "policy": {"windows": ["allow Mon 02:00-03:00 UTC"]},
                "now": "2026-12-05T12:00:00Z",
                "app_set": {"loaded": true, "applications": apps},
                "swarms": [{"swarm": swarm, "releases": [
                    {"name": release, "owner": format!("cd/default/gone:release/{release}")}]}]
            });
            Snapshot::from_json(&doc.to_string())
        };
        let keep = serde_json::json!({"name": "keep", "swarm": swarm, "releases": []});
        let gone = serde_json::json!({"name": "gone", "swarm": swarm, "releases": [release]});
        let (Ok(base), Ok(change)) = (
            snapshot(serde_json::json!([keep, gone])),
            snapshot(serde_json::json!([keep])),
        ) else {
            return Err(TestCaseError::reject("not a snapshot"));
        };
        let diff = PlanDiff::of_snapshots(&base, &change).expect("both plan");
        let doc = diff_markdown(&diff);
        let found = constructs(&doc);
        // `### swarm-sweep plan: this change` and one `####` per swarm.
        prop_assert_eq!(found.headings, 1 + diff.swarms.len(), "{}", doc);
        prop_assert_eq!(found.links, 0, "{}", doc);
        prop_assert_eq!(found.html, 0, "{}", doc);
        prop_assert_eq!(found.tables, 0, "{}", doc);
        prop_assert_eq!(found.code_blocks, 0, "{}", doc);
        prop_assert!(!found.text.contains('@'), "{}", doc);
        for c in &diff.added {
            prop_assert!(c.pending.is_some(), "{:?}", c);
            prop_assert!(found.code.iter().any(|s| decode(s).as_deref() == Some(c.deletion.release.as_str())), "{}", doc);
        }
    }
}
