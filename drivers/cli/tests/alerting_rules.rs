//! `deploy/alerts.yml` against the binary it alerts on: every series a rule
//! selects is one `watch --listen` serves at `/metrics` (a renamed metric or
//! a misspelt reason would leave an alert that can never fire), every rule
//! tells the operator what to do, and promtool accepts the rules and passes
//! their unit tests (`deploy/alerts_test.yml`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

use crate::support;

use support::{free_port, get, sweep_without_daemon as sweep, wait_for, Killed};

#[derive(Debug, Deserialize)]
struct RuleFile {
    groups: Vec<Group>,
}

#[derive(Debug, Deserialize)]
struct Group {
    name: String,
    rules: Vec<Rule>,
}

#[derive(Debug, Deserialize)]
struct Rule {
    alert: String,
    expr: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

fn deploy(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(file)
}

fn rules() -> Vec<Rule> {
    let text = std::fs::read_to_string(deploy("alerts.yml")).unwrap();
    let file: RuleFile = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(file.groups.len(), 1);
    assert_eq!(file.groups[0].name, "swarm-sweep");
    file.groups.into_iter().flat_map(|g| g.rules).collect()
}

/// One selector of an expression: the metric, and its label matchers as
/// (label, operator, value).
#[derive(Debug)]
struct Selector {
    metric: String,
    matchers: Vec<(String, String, String)>,
}

/// The selectors of the project's metrics in `expr`. PromQL's grammar is
/// larger than this, but the rules use plain selectors only, which is what
/// this reads: `name` or `name{label="v",label!~"a|b"}`.
fn selectors(expr: &str) -> Vec<Selector> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("swarm_sweep_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let metric = tail[..end].to_owned();
        let mut matchers = Vec::new();
        let after = &tail[end..];
        let consumed = if let Some(body) = after.strip_prefix('{') {
            let close = body.find('}').expect("an unclosed selector");
            for m in body[..close].split(',').filter(|m| !m.trim().is_empty()) {
                let op_at = m.find(['=', '!']).expect("a matcher without operator");
                let op_len = if m[op_at..].starts_with("!~")
                    || m[op_at..].starts_with("=~")
                    || m[op_at..].starts_with("!=")
                {
                    2
                } else {
                    1
                };
                let label = m[..op_at].trim().to_owned();
                let op = m[op_at..op_at + op_len].to_owned();
                let value = m[op_at + op_len..].trim().trim_matches('"').to_owned();
                matchers.push((label, op, value));
            }
            end + 1 + close + 1
        } else {
            end
        };
        out.push(Selector { metric, matchers });
        rest = &tail[consumed..];
    }
    out
}

#[test]
fn every_rule_says_what_to_do() {
    let rules = rules();
    assert!(rules.len() >= 7, "{rules:#?}");
    for rule in &rules {
        assert!(rule.alert.starts_with("SwarmSweep"), "{}", rule.alert);
        let severity = rule.labels.get("severity").map(String::as_str);
        assert!(
            matches!(severity, Some("warning" | "critical")),
            "{}: severity {severity:?}",
            rule.alert
        );
        let summary = rule.annotations.get("summary").map(String::as_str);
        assert!(
            summary.is_some_and(|s| !s.trim().is_empty()),
            "{}",
            rule.alert
        );
        let description = rule
            .annotations
            .get("description")
            .map(String::as_str)
            .unwrap_or_default();
        // What to do, not only what happened: long enough to name a step.
        assert!(description.len() > 120, "{}: {description}", rule.alert);
        assert!(!selectors(&rule.expr).is_empty(), "{}", rule.alert);
    }
    // The states the rules must cover, by the series they watch.
    let watched: Vec<String> = rules.iter().map(|r| r.expr.clone()).collect();
    for needle in [
        "reason=\"swarm_unreadable\"",
        "swarm_sweep_nodes_not_covered",
        "outside_window",
        "swarm_sweep_failures_total",
        "outcome=\"app_set_unreadable\"",
        "swarm_sweep_audit_write_failures_total",
        "swarm_sweep_notify_dropped_total",
    ] {
        assert!(
            watched.iter().any(|e| e.contains(needle)),
            "no rule watches {needle}"
        );
    }
}

#[test]
fn every_series_the_rules_select_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let apps = dir.path().join("apps.yaml");
    std::fs::write(
        &apps,
        "loaded: true\napplications:\n  - name: shop\n    swarm: \"\"\n    releases: [web]\n",
    )
    .unwrap();
    let addr = free_port();
    let _child = Killed(
        sweep()
            .args(["watch", "--interval", "1h", "--listen", &addr.to_string()])
            .arg("--app-set")
            .arg(&apps)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut body = String::new();
    wait_for("/metrics after the first sweep", || {
        match get(addr, "/metrics") {
            Some((200, b))
                if b.contains("swarm_sweep_sweeps_total{outcome=\"needs_attention\"} 1") =>
            {
                body = b;
                true
            }
            _ => false,
        }
    });
    let series: Vec<&str> = body
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' ').map(|(s, _)| s))
        .collect();
    for rule in rules() {
        for sel in selectors(&rule.expr) {
            let of_metric: Vec<&&str> = series
                .iter()
                .filter(|s| s.split('{').next() == Some(sel.metric.as_str()))
                .collect();
            assert!(
                !of_metric.is_empty(),
                "{}: {} is not served:\n{body}",
                rule.alert,
                sel.metric
            );
            for (label, op, value) in &sel.matchers {
                // Every value named, exact or among alternatives, must be
                // one the metric has: every label value is served from the
                // start, at 0.
                let values: Vec<&str> = match op.as_str() {
                    "=" | "!=" => vec![value.as_str()],
                    _ => value.split('|').collect(),
                };
                for v in values {
                    let wanted = format!("{label}=\"{v}\"");
                    assert!(
                        of_metric.iter().any(|s| s.contains(&wanted)),
                        "{}: {}{{{wanted}}} is not served:\n{body}",
                        rule.alert,
                        sel.metric
                    );
                }
            }
        }
    }
}

/// promtool: from `PROMTOOL`, else on the path. CI installs it
/// (`.ci/install-deps`); elsewhere a missing one skips only this check, and
/// says so.
fn promtool() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PROMTOOL") {
        return Some(PathBuf::from(path));
    }
    let found = Command::new("promtool")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if found {
        return Some(PathBuf::from("promtool"));
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "promtool is missing; .ci/install-deps installs it"
    );
    eprintln!("promtool not found: the rules were not checked by it");
    None
}

#[test]
fn promtool_accepts_the_rules_and_passes_their_unit_tests() {
    let Some(promtool) = promtool() else {
        return;
    };
    for args in [
        ["check", "rules", "alerts.yml"],
        ["test", "rules", "alerts_test.yml"],
    ] {
        let out = Command::new(&promtool)
            .args(args)
            .current_dir(deploy(""))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn selectors_are_read_as_written() {
    let s = selectors(
        "sum(swarm_sweep_holds{reason!~\"a|b\", x=\"y\"}) > 0 or increase(swarm_sweep_failures_total[1h])",
    );
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].metric, "swarm_sweep_holds");
    assert_eq!(
        s[0].matchers,
        [
            ("reason".to_owned(), "!~".to_owned(), "a|b".to_owned()),
            ("x".to_owned(), "=".to_owned(), "y".to_owned())
        ]
    );
    assert_eq!(s[1].metric, "swarm_sweep_failures_total");
    assert!(s[1].matchers.is_empty());
}
