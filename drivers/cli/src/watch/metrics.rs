//! The metrics of `watch`, written in the Prometheus text exposition
//! format 0.0.4.
//!
//! Every label value comes from a closed list (sweep outcomes, deletion
//! and hold reasons), and every value of each list is written from the
//! start, at zero: a series that appears only after its first event makes
//! `rate()` and alerts on absence misread the first one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sweep_core::plan::{DeletionReason, HoldReason};
use sweep_core::record::Kind;
use sweep_core::sweep::{ReleaseOutcome, SweepReport};
use sweep_core::SweepPlan;

/// The `Content-Type` of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How a sweep ended, the `outcome` label of `swarm_sweep_sweeps_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SweepOutcome {
    /// Everything planned went, and nothing needs a person.
    Success,
    /// It ran, and a person has to act (as `apply`'s exit status 1).
    NeedsAttention,
    /// A hold stopped the whole sweep: nothing was attempted.
    Held,
    /// The app set could not be read or parsed: nothing was gathered.
    AppSetUnreadable,
    /// A signal stopped it; the next sweep finds what is left.
    Interrupted,
}

impl SweepOutcome {
    pub const ALL: &'static [SweepOutcome] = &[
        SweepOutcome::Success,
        SweepOutcome::NeedsAttention,
        SweepOutcome::Held,
        SweepOutcome::AppSetUnreadable,
        SweepOutcome::Interrupted,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            SweepOutcome::Success => "success",
            SweepOutcome::NeedsAttention => "needs_attention",
            SweepOutcome::Held => "held",
            SweepOutcome::AppSetUnreadable => "app_set_unreadable",
            SweepOutcome::Interrupted => "interrupted",
        }
    }
}

impl std::fmt::Display for SweepOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Upper bounds of the duration histograms, in seconds: from a sweep of
/// one idle swarm to one that waits out long settle timeouts.
const BUCKETS: &[f64] = &[
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
];

#[derive(Debug, Clone, Default)]
struct Histogram {
    /// Observations per bucket of [`BUCKETS`], not cumulative; the last
    /// slot is above every bound.
    counts: [u64; BUCKETS.len() + 1],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, value: Duration) {
        let secs = value.as_secs_f64();
        let slot = BUCKETS
            .iter()
            .position(|&bound| secs <= bound)
            .unwrap_or(BUCKETS.len());
        self.counts[slot] += 1;
        self.sum += secs;
        self.count += 1;
    }

    fn write(&self, out: &mut String, name: &str, help: &str) {
        header(out, name, help, "histogram");
        let mut cumulative = 0;
        for (bound, count) in BUCKETS.iter().zip(self.counts) {
            cumulative += count;
            let _ = writeln!(
                out,
                "{name}_bucket{{le=\"{}\"}} {cumulative}",
                number(*bound)
            );
        }
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum {}", number(self.sum));
        let _ = writeln!(out, "{name}_count {}", self.count);
    }
}

/// Everything `/metrics` shows.
#[derive(Debug, Clone)]
pub struct Metrics {
    sweeps: BTreeMap<SweepOutcome, u64>,
    deletions: BTreeMap<String, u64>,
    /// Dropped objects of live releases removed, by kind.
    objects: BTreeMap<String, u64>,
    failures: u64,
    holds: BTreeMap<String, u64>,
    nodes_not_covered: u64,
    last_success: Option<SystemTime>,
    sweep_duration: Histogram,
    gather_duration: Histogram,
    /// Sweeps whose lines could not be appended to the audit log.
    audit_write_failures: u64,
    /// Notifications given up on (`--notify`).
    notify_dropped: u64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        Metrics {
            sweeps: SweepOutcome::ALL.iter().map(|o| (*o, 0)).collect(),
            deletions: DeletionReason::ALL
                .iter()
                .map(|r| (r.as_str().to_owned(), 0))
                .collect(),
            objects: Kind::ALL
                .iter()
                .map(|k| (k.as_str().to_owned(), 0))
                .collect(),
            failures: 0,
            holds: zero_holds(),
            nodes_not_covered: 0,
            last_success: None,
            sweep_duration: Histogram::default(),
            gather_duration: Histogram::default(),
            audit_write_failures: 0,
            notify_dropped: 0,
        }
    }

    /// A sweep whose lines could not be appended to the audit log.
    pub fn audit_write_failed(&mut self) {
        self.audit_write_failures += 1;
    }

    /// A notification given up on: not delivered in time, refused by its
    /// receiver, or no room in its queue.
    pub fn notify_dropped(&mut self) {
        self.notify_dropped += 1;
    }

    /// A gather that took `took`.
    pub fn gathered(&mut self, took: Duration) {
        self.gather_duration.observe(took);
    }

    /// The gauges of the last plan: its holds by reason and the nodes its
    /// volume purge cannot reach.
    pub fn planned(&mut self, plan: &SweepPlan) {
        self.holds = zero_holds();
        for hold in &plan.holds {
            *self
                .holds
                .entry(hold.reason.as_str().to_owned())
                .or_default() += 1;
        }
        self.nodes_not_covered = plan.uncovered.iter().filter_map(|u| u.missing).sum();
    }

    /// What a sweep of `plan` did: each release deleted, by the reason it
    /// was planned for, and each release that failed.
    pub fn executed(&mut self, plan: &SweepPlan, report: &SweepReport) {
        for release in &report.releases {
            match release.outcome {
                ReleaseOutcome::Deleted => {
                    let reason = plan
                        .deletions
                        .iter()
                        .find(|d| d.swarm == release.swarm && d.release == release.release)
                        .map(|d| d.reason.as_str())
                        // The report lists only what the plan deleted; said
                        // rather than dropped if that ever changes.
                        .unwrap_or("unknown");
                    *self.deletions.entry(reason.to_owned()).or_default() += 1;
                }
                // A release a stop or its window's closing cut short did
                // not fail: the next sweep takes it up, and a restart must
                // not page anyone.
                ReleaseOutcome::Failed if release.errors.iter().any(|e| !e.kind.is_cut_short()) => {
                    self.failures += 1
                }
                ReleaseOutcome::Failed => {}
                // Left for the next sweep on purpose; the sweep outcome
                // (`needs_attention`) says a person has to look.
                ReleaseOutcome::LeftOwnStack
                | ReleaseOutcome::PendingCoverage
                | ReleaseOutcome::InUse => {}
            }
        }
        self.executed_drops(report);
    }

    /// The dropped objects of live releases a sweep removed, by kind, and
    /// each release whose dropped objects failed.
    fn executed_drops(&mut self, report: &SweepReport) {
        for dropped in &report.dropped {
            for object in &dropped.removed {
                *self
                    .objects
                    .entry(object.kind.as_str().to_owned())
                    .or_default() += 1;
            }
            // As for a release: cut short, it is left for the next sweep.
            if dropped.outcome == ReleaseOutcome::Failed
                && dropped.errors.iter().any(|e| !e.kind.is_cut_short())
            {
                self.failures += 1;
            }
        }
    }

    /// A sweep that ended `at` with `outcome` after `took`.
    pub fn finished(&mut self, outcome: SweepOutcome, took: Duration, at: SystemTime) {
        *self.sweeps.entry(outcome).or_default() += 1;
        self.sweep_duration.observe(took);
        if outcome == SweepOutcome::Success {
            self.last_success = Some(at);
        }
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        let name = "swarm_sweep_sweeps_total";
        header(&mut out, name, "Sweeps run, by how they ended.", "counter");
        for (outcome, count) in &self.sweeps {
            sample(&mut out, name, Some(("outcome", outcome.as_str())), *count);
        }
        let name = "swarm_sweep_deletions_total";
        header(
            &mut out,
            name,
            "Releases deleted, by the reason they were planned for.",
            "counter",
        );
        for (reason, count) in &self.deletions {
            sample(&mut out, name, Some(("reason", reason)), *count);
        }
        let name = "swarm_sweep_objects_deleted_total";
        header(
            &mut out,
            name,
            "Objects live releases dropped from their charts that were removed, by kind.",
            "counter",
        );
        for (kind, count) in &self.objects {
            sample(&mut out, name, Some(("kind", kind)), *count);
        }
        let name = "swarm_sweep_failures_total";
        header(
            &mut out,
            name,
            "Planned releases (or live releases' dropped objects) that failed; what failed stays.",
            "counter",
        );
        sample(&mut out, name, None, self.failures);
        let name = "swarm_sweep_holds";
        header(
            &mut out,
            name,
            "Holds in the last plan, by reason.",
            "gauge",
        );
        for (reason, count) in &self.holds {
            sample(&mut out, name, Some(("reason", reason)), *count);
        }
        let name = "swarm_sweep_nodes_not_covered";
        header(
            &mut out,
            name,
            "Nodes the last plan's volume purge cannot reach, summed over its uncovered swarms.",
            "gauge",
        );
        sample(&mut out, name, None, self.nodes_not_covered);
        let name = "swarm_sweep_last_success_timestamp_seconds";
        header(
            &mut out,
            name,
            "When the last sweep with outcome success ended, in seconds since the Unix epoch; 0 before the first.",
            "gauge",
        );
        let at = self
            .last_success
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0.0, |d| d.as_secs_f64());
        let _ = writeln!(out, "{name} {}", number(at));
        self.sweep_duration.write(
            &mut out,
            "swarm_sweep_sweep_duration_seconds",
            "Time each sweep took, from reading the app set to the report.",
        );
        self.gather_duration.write(
            &mut out,
            "swarm_sweep_gather_duration_seconds",
            "Time each gather of the swarms took.",
        );
        let name = "swarm_sweep_audit_write_failures_total";
        header(
            &mut out,
            name,
            "Sweeps whose lines could not be appended to the audit log (--audit-log); their deletions are not in it.",
            "counter",
        );
        sample(&mut out, name, None, self.audit_write_failures);
        let name = "swarm_sweep_notify_dropped_total";
        header(
            &mut out,
            name,
            "Notifications (--notify) not delivered: out of time, refused by the receiver, or no room in its queue.",
            "counter",
        );
        sample(&mut out, name, None, self.notify_dropped);
        out
    }
}

fn zero_holds() -> BTreeMap<String, u64> {
    HoldReason::ALL
        .iter()
        .map(|r| (r.as_str().to_owned(), 0))
        .collect()
}

fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {}", escape_help(help));
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn sample(out: &mut String, name: &str, label: Option<(&str, &str)>, value: u64) {
    match label {
        Some((key, v)) => {
            let _ = writeln!(out, "{name}{{{key}=\"{}\"}} {value}", escape_label(v));
        }
        None => {
            let _ = writeln!(out, "{name} {value}");
        }
    }
}

/// A label value as the format requires: backslash, double quote and
/// line feed escaped, so no value can end its label or its line.
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Help text as the format requires: backslash and line feed escaped.
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A float as the format reads it: Rust's shortest form, which never
/// uses an exponent, and the format's own names for the infinities.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value == f64::INFINITY {
        "+Inf".to_owned()
    } else if value == f64::NEG_INFINITY {
        "-Inf".to_owned()
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample lines of `text`: name with labels, and value.
    fn samples(text: &str) -> BTreeMap<String, String> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let (series, value) = l.rsplit_once(' ').expect("a sample line");
                (series.to_owned(), value.to_owned())
            })
            .collect()
    }

    #[test]
    fn every_series_is_there_from_the_start_at_zero() {
        let text = Metrics::new().render();
        let s = samples(&text);
        for outcome in [
            "success",
            "needs_attention",
            "held",
            "app_set_unreadable",
            "interrupted",
        ] {
            assert_eq!(
                s[&format!("swarm_sweep_sweeps_total{{outcome=\"{outcome}\"}}")],
                "0"
            );
        }
        for reason in ["departed", "destination_moved"] {
            assert_eq!(
                s[&format!("swarm_sweep_deletions_total{{reason=\"{reason}\"}}")],
                "0"
            );
        }
        for reason in HoldReason::ALL {
            assert_eq!(s[&format!("swarm_sweep_holds{{reason=\"{reason}\"}}")], "0");
        }
        for kind in Kind::ALL {
            assert_eq!(
                s[&format!("swarm_sweep_objects_deleted_total{{kind=\"{kind}\"}}")],
                "0"
            );
        }
        for name in [
            "swarm_sweep_failures_total",
            "swarm_sweep_nodes_not_covered",
            "swarm_sweep_last_success_timestamp_seconds",
            "swarm_sweep_sweep_duration_seconds_count",
            "swarm_sweep_gather_duration_seconds_count",
            "swarm_sweep_sweep_duration_seconds_bucket{le=\"+Inf\"}",
            "swarm_sweep_audit_write_failures_total",
        ] {
            assert_eq!(s[name], "0", "{name}");
        }
    }

    #[test]
    fn audit_write_failures_are_counted() {
        let mut metrics = Metrics::new();
        metrics.audit_write_failed();
        metrics.audit_write_failed();
        let text = metrics.render();
        assert!(
            text.lines()
                .any(|l| l == "swarm_sweep_audit_write_failures_total 2"),
            "{text}"
        );
    }

    #[test]
    fn every_metric_has_help_and_type_before_its_samples() {
        let text = Metrics::new().render();
        let mut typed = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap();
                assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
                typed.push(name.to_owned());
            } else if !line.starts_with('#') {
                let series = line.split(['{', ' ']).next().unwrap();
                let family = typed.last().expect("a TYPE line first");
                assert!(series.starts_with(family.as_str()), "{line} under {family}");
            }
        }
        assert_eq!(
            typed,
            [
                "swarm_sweep_sweeps_total",
                "swarm_sweep_deletions_total",
                "swarm_sweep_objects_deleted_total",
                "swarm_sweep_failures_total",
                "swarm_sweep_holds",
                "swarm_sweep_nodes_not_covered",
                "swarm_sweep_last_success_timestamp_seconds",
                "swarm_sweep_sweep_duration_seconds",
                "swarm_sweep_gather_duration_seconds",
                "swarm_sweep_audit_write_failures_total",
                "swarm_sweep_notify_dropped_total",
            ]
        );
        assert!(text.ends_with('\n'));
        assert_eq!(
            text.lines().filter(|l| l.starts_with("# HELP ")).count(),
            typed.len()
        );
    }

    #[test]
    fn label_values_and_help_are_escaped() {
        assert_eq!(escape_label("plain_value"), "plain_value");
        assert_eq!(escape_label("a\"b"), "a\\\"b");
        assert_eq!(escape_label("a\\b"), "a\\\\b");
        assert_eq!(escape_label("a\nb"), "a\\nb");
        assert_eq!(escape_label("\\\"\n"), "\\\\\\\"\\n");
        assert_eq!(escape_help("x\\y\nz"), "x\\\\y\\nz");
        let mut out = String::new();
        sample(&mut out, "m", Some(("reason", "x\"} 1\nfake 2")), 3);
        assert_eq!(out, "m{reason=\"x\\\"} 1\\nfake 2\"} 3\n");
        assert_eq!(out.lines().count(), 1);
    }

    #[test]
    fn numbers_are_in_the_format() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(1764576000.5), "1764576000.5");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(f64::NAN), "NaN");
    }

    #[test]
    fn histograms_are_cumulative() {
        let mut m = Metrics::new();
        for ms in [10, 300, 300, 7_000, 5_000_000] {
            m.finished(
                SweepOutcome::Success,
                Duration::from_millis(ms),
                UNIX_EPOCH + Duration::from_secs(1_000),
            );
        }
        let s = samples(&m.render());
        let bucket = |le: &str| {
            s[&format!("swarm_sweep_sweep_duration_seconds_bucket{{le=\"{le}\"}}")].clone()
        };
        assert_eq!(bucket("0.05"), "1");
        assert_eq!(bucket("0.25"), "1");
        assert_eq!(bucket("0.5"), "3");
        assert_eq!(bucket("10"), "4");
        assert_eq!(bucket("3600"), "4");
        assert_eq!(bucket("+Inf"), "5");
        assert_eq!(s["swarm_sweep_sweep_duration_seconds_count"], "5");
        assert_eq!(s["swarm_sweep_sweep_duration_seconds_sum"], "5007.61");
        assert_eq!(s["swarm_sweep_sweeps_total{outcome=\"success\"}"], "5");
        assert_eq!(s["swarm_sweep_last_success_timestamp_seconds"], "1000");
    }

    #[test]
    fn dropped_notifications_are_counted_from_zero() {
        let mut m = Metrics::new();
        assert_eq!(
            samples(&m.render())["swarm_sweep_notify_dropped_total"],
            "0"
        );
        m.notify_dropped();
        m.notify_dropped();
        assert_eq!(
            samples(&m.render())["swarm_sweep_notify_dropped_total"],
            "2"
        );
    }

    #[test]
    fn the_last_success_is_only_a_success() {
        let mut m = Metrics::new();
        let at = |s| UNIX_EPOCH + Duration::from_secs(s);
        m.finished(SweepOutcome::Success, Duration::ZERO, at(10));
        for outcome in [
            SweepOutcome::NeedsAttention,
            SweepOutcome::Held,
            SweepOutcome::AppSetUnreadable,
            SweepOutcome::Interrupted,
        ] {
            m.finished(outcome, Duration::ZERO, at(20));
        }
        let s = samples(&m.render());
        assert_eq!(s["swarm_sweep_last_success_timestamp_seconds"], "10");
        for outcome in SweepOutcome::ALL {
            assert_eq!(
                s[&format!("swarm_sweep_sweeps_total{{outcome=\"{outcome}\"}}")],
                "1"
            );
        }
    }

    #[test]
    fn dropped_objects_removed_are_counted_by_kind() {
        let plan: SweepPlan = serde_json::from_str(
            r#"{"controller": "default", "purge_volumes": false, "holds": [], "deletions": [],
                "spared": [], "uncovered": [], "swarms": []}"#,
        )
        .unwrap();
        let report: SweepReport = serde_json::from_str(
            r#"{"controller": "default", "held": false, "purge_volumes": false, "releases": [],
                "uncovered": [],
                "dropped": [{"swarm": "alpha", "release": "web", "application": "shop",
                  "outcome": "failed", "errors": [{"action": "remove_stack", "part": "networks",
                  "node": null, "volume": null, "kind": "refused", "message": "no"}],
                  "remedy": null,
                  "removed": [
                    {"kind": "service", "name": "web_worker", "id": "s1", "claimed_by": 1, "dropped_by": 2},
                    {"kind": "config", "name": "web_c1", "id": "c1", "version": 1, "claimed_by": 1, "dropped_by": 2},
                    {"kind": "config", "name": "web_c2", "id": "c2", "version": 1, "claimed_by": 1, "dropped_by": 2}]}],
                "totals": {"planned": 0, "deleted": 0, "failed": 0, "left_own_stack": 0,
                  "pending_coverage": 0, "volumes_deleted": 0, "uncovered_swarms": 0}}"#,
        )
        .unwrap();
        let mut m = Metrics::new();
        m.executed(&plan, &report);
        let s = samples(&m.render());
        let kind =
            |k: &str| s[&format!("swarm_sweep_objects_deleted_total{{kind=\"{k}\"}}")].clone();
        assert_eq!(kind("service"), "1");
        assert_eq!(kind("config"), "2");
        assert_eq!(kind("network"), "0");
        assert_eq!(s["swarm_sweep_failures_total"], "1");
    }

    /// A release cut short (a stop, its window closing) did not fail; one
    /// with any other error did, cut short or not.
    #[test]
    fn a_release_cut_short_is_no_failure() {
        let plan: SweepPlan = serde_json::from_str(
            r#"{"controller": "default", "purge_volumes": false, "holds": [], "deletions": [],
                "spared": [], "uncovered": [], "swarms": []}"#,
        )
        .unwrap();
        let release = |name: &str, kinds: &[&str]| {
            let errors: Vec<String> = kinds
                .iter()
                .map(|k| {
                    format!(
                        r#"{{"action": "remove_stack", "node": null, "volume": null, "kind": "{k}", "message": "m"}}"#
                    )
                })
                .collect();
            format!(
                r#"{{"swarm": "alpha", "release": "{name}", "application": "shop", "outcome": "failed",
                    "coverage": "off", "volumes_deleted": {{}}, "errors": [{}], "remedy": null}}"#,
                errors.join(",")
            )
        };
        let releases = [
            release("a", &["unfinished"]),
            release("b", &["window_closed"]),
            release("c", &["window_closed", "refused"]),
        ];
        let report: SweepReport = serde_json::from_str(&format!(
            r#"{{"controller": "default", "held": false, "purge_volumes": false,
                "releases": [{}], "uncovered": [], "dropped": [],
                "totals": {{"planned": 3, "deleted": 0, "failed": 3, "left_own_stack": 0,
                  "pending_coverage": 0, "volumes_deleted": 0, "uncovered_swarms": 0}}}}"#,
            releases.join(",")
        ))
        .unwrap();
        let mut m = Metrics::new();
        m.executed(&plan, &report);
        assert_eq!(samples(&m.render())["swarm_sweep_failures_total"], "1");
    }
}
