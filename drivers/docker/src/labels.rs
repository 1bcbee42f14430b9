//! The labels release records and stack objects carry, and how release
//! records are read from them: the one place that says what a record is
//! (`is_release_record`), what belongs to a stack (`in_stack`), and how
//! a record's revision is read and ordered (`Record`, `oldest_first`).
//!
//! A release record is a swarm config labelled `com.swarmcli.type=release`
//! and *not* carrying a stack namespace. Whatever carries a stack's
//! namespace is part of that stack and goes with it, the record labels
//! notwithstanding: were it neither a record nor a stack object, nothing
//! would ever remove it, and once the release's records were gone nothing
//! would even find it. Records are grouped by `com.swarmcli.release`; each
//! revision is one config, and the owner stamp that counts is the one on
//! the highest `com.swarmcli.revision`.

use std::collections::{BTreeMap, HashMap};

use sweep_swarms::{BackendError, ReleaseRecord};

/// The record labels, from their one home in the core
/// ([`sweep_core::record::labels`]).
pub use sweep_core::record::labels::{OWNER, RECORD_TYPE, RELEASE, REVISION, STATUS, TYPE};
/// The label `docker stack deploy` puts on every object of a stack: the
/// core's [`STACK_LABEL`](sweep_swarms::STACK_LABEL), under the name the
/// daemon's API gives it.
pub use sweep_swarms::STACK_LABEL as STACK_NAMESPACE;

/// Whether a config with `labels` is a release record: the core's one
/// definition ([`sweep_core::stacks::is_release_record`]); stack removal
/// and record removal both go by it (through [`in_stack`] for the former),
/// so that every config is exactly one of a stack's object, a record, or
/// neither's business.
pub(crate) fn is_release_record(labels: &HashMap<String, String>) -> bool {
    sweep_core::stacks::is_release_record(|k| labels.get(k).map(String::as_str))
}

/// Whether an object with `labels` belongs to `release`'s stack: it carries
/// exactly that namespace. Exactly: the daemon's label filter already
/// selected it, but a filter quirk must never hand over another stack's
/// object. Such an object is never a release record ([`is_release_record`]
/// requires no namespace), so removing the stack never removes a record —
/// records go last, separately, or a stamp would be lost with the stack.
pub(crate) fn in_stack(labels: &HashMap<String, String>, release: &str) -> bool {
    labels.get(STACK_NAMESPACE).map(String::as_str) == Some(release)
}

/// One config as listed: its name (for messages) and labels.
pub(crate) struct ConfigLabels<'a> {
    pub(crate) name: &'a str,
    pub(crate) labels: &'a HashMap<String, String>,
}

/// One release record, read from its config's labels.
struct Record<'a> {
    release: &'a str,
    revision: u64,
    owner: Option<&'a str>,
    config: &'a str,
}

impl<'a> Record<'a> {
    /// The record `c` is, `None` when it is not a release record at all.
    ///
    /// A record whose release or revision cannot be read is an error rather
    /// than skipped: it might be the newest one, and skipping it would let
    /// an older stamp — possibly ours — stand for the release.
    fn read(c: &ConfigLabels<'a>) -> Result<Option<Record<'a>>, BackendError> {
        if !is_release_record(c.labels) {
            return Ok(None);
        }
        let release = match c.labels.get(RELEASE) {
            Some(r) if !r.is_empty() => r.as_str(),
            _ => return Err(invalid(c.name, RELEASE, "missing or empty".into())),
        };
        Ok(Some(Record {
            release,
            revision: parse_revision(c.name, c.labels.get(REVISION))?,
            owner: c.labels.get(OWNER).map(String::as_str),
            config: c.name,
        }))
    }
}

/// Sorts one release's records into the one order both the newest-record
/// rule and removal go by: oldest revision first (numerically: 10 after 9),
/// the newest last; records of one revision by config name, so that
/// neither answer depends on how the daemon happens to list them.
fn oldest_first<T>(records: &mut [(Record<'_>, T)]) {
    records.sort_by(|(a, _), (b, _)| (a.revision, a.config).cmp(&(b.revision, b.config)));
}

fn invalid(config: &str, label: &str, message: String) -> BackendError {
    BackendError::Invalid {
        what: format!("config {config:?} label {label}"),
        message,
    }
}

/// A revision label's value as a number; only plain decimal digits count,
/// so that `+3`, ` 3` or `3a` are not read as some number they might not be.
fn parse_revision(config: &str, value: Option<&String>) -> Result<u64, BackendError> {
    let Some(value) = value else {
        return Err(invalid(config, REVISION, "missing".into()));
    };
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid(
            config,
            REVISION,
            format!("{value:?} is not a decimal number"),
        ));
    }
    value
        .parse()
        .map_err(|e| invalid(config, REVISION, format!("{value:?}: {e}")))
}

/// The releases among `configs`, each with the owner stamp of its highest
/// revision, sorted by name. Configs that are not release records are
/// ignored.
///
/// Every doubt is an error rather than a skipped record (see
/// `Record::read`). Likewise two records of the same highest revision with
/// different owners: neither may stand for the release.
pub(crate) fn newest_records<'a>(
    configs: impl IntoIterator<Item = ConfigLabels<'a>>,
) -> Result<Vec<ReleaseRecord>, BackendError> {
    let mut by_release: BTreeMap<&'a str, Vec<(Record<'a>, ())>> = BTreeMap::new();
    for c in configs {
        if let Some(record) = Record::read(&c)? {
            by_release
                .entry(record.release)
                .or_default()
                .push((record, ()));
        }
    }
    let mut releases = Vec::with_capacity(by_release.len());
    for (release, mut records) in by_release {
        oldest_first(&mut records);
        let Some((last, ())) = records.last() else {
            continue;
        };
        let top = last.revision;
        let newest = &records[records.partition_point(|(r, ())| r.revision < top)..];
        let Some(((first, ()), rest)) = newest.split_first() else {
            continue;
        };
        if let Some((other, ())) = rest.iter().find(|(r, ())| r.owner != first.owner) {
            return Err(BackendError::Invalid {
                what: format!("release records of {release:?}"),
                message: format!(
                    "configs {:?} and {:?} are both revision {top} but carry different owners",
                    first.config, other.config
                ),
            });
        }
        releases.push(ReleaseRecord::new(release, first.owner.map(str::to_owned)));
    }
    Ok(releases)
}

/// The records of `release` among `configs`, in the order they are removed:
/// `oldest_first`, the newest last. Configs that are not records of exactly
/// this release are left out (a stack's config carrying the record labels
/// goes with its stack, not here).
///
/// A sweep interrupted between two removals then leaves the newest record,
/// and with it the same stamp, to judge the release next time. Removed the
/// other way round, an older revision (say one stamped before a rename
/// handed the release to another application) would decide instead.
///
/// A record whose revision cannot be read is refused, and nothing is
/// ordered: it might be the newest, and removing the others first would
/// leave it alone to judge the release. (Listing the releases refuses such
/// a record as well, so the plan never saw it.)
pub(crate) fn removal_order<'a, T>(
    release: &str,
    configs: impl IntoIterator<Item = (ConfigLabels<'a>, T)>,
) -> Result<Vec<T>, BackendError> {
    let mut records = Vec::new();
    for (c, item) in configs {
        // Another release's record is not read at all: its doubts are its
        // own, and must not stop this release's removal.
        if c.labels.get(RELEASE).map(String::as_str) != Some(release) {
            continue;
        }
        if let Some(record) = Record::read(&c)? {
            records.push((record, item));
        }
    }
    oldest_first(&mut records);
    Ok(records.into_iter().map(|(_, item)| item).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn record(release: &str, revision: &str, owner: Option<&str>) -> HashMap<String, String> {
        let mut l = labels(&[
            (TYPE, RECORD_TYPE),
            (RELEASE, release),
            (REVISION, revision),
            (STATUS, "deployed"),
        ]);
        if let Some(o) = owner {
            l.insert(OWNER.into(), o.into());
        }
        l
    }

    fn run(
        configs: &[(&str, HashMap<String, String>)],
    ) -> Result<Vec<ReleaseRecord>, BackendError> {
        newest_records(
            configs
                .iter()
                .map(|(name, labels)| ConfigLabels { name, labels }),
        )
    }

    #[test]
    fn highest_revision_numerically_wins() {
        let got = run(&[
            ("swarmcli.release.app.v1", record("app", "1", Some("a"))),
            ("swarmcli.release.app.v10", record("app", "10", Some("c"))),
            ("swarmcli.release.app.v2", record("app", "2", Some("b"))),
            ("swarmcli.release.db.v1", record("db", "1", None)),
        ])
        .unwrap();
        assert_eq!(
            got,
            vec![
                ReleaseRecord::new("app", Some("c".into())),
                ReleaseRecord::new("db", None),
            ]
        );
    }

    #[test]
    fn newest_revision_without_owner_means_no_owner() {
        let got = run(&[
            ("swarmcli.release.app.v1", record("app", "1", Some("us"))),
            ("swarmcli.release.app.v2", record("app", "2", None)),
        ])
        .unwrap();
        assert_eq!(got, vec![ReleaseRecord::new("app", None)]);
    }

    #[test]
    fn stack_configs_and_other_configs_are_not_records() {
        let mut stack_config = record("app", "99", Some("them"));
        stack_config.insert(STACK_NAMESPACE.into(), "app".into());
        let got = run(&[
            ("swarmcli.release.app.v1", record("app", "1", Some("us"))),
            ("app_conf", stack_config),
            ("plain", labels(&[("x", "y")])),
            ("other-type", labels(&[(TYPE, "chart"), (RELEASE, "app")])),
        ])
        .unwrap();
        assert_eq!(got, vec![ReleaseRecord::new("app", Some("us".into()))]);
    }

    #[test]
    fn unparsable_revision_is_an_error_naming_config_and_label() {
        for bad in ["x", "", "+3", " 3", "3a", "-1", "99999999999999999999999"] {
            let err = run(&[
                ("swarmcli.release.app.v1", record("app", "1", Some("us"))),
                ("app.bad", record("app", bad, Some("them"))),
            ])
            .unwrap_err();
            match err {
                BackendError::Invalid { what, .. } => {
                    assert!(what.contains("\"app.bad\""), "{what}");
                    assert!(what.contains(REVISION), "{what}");
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn missing_revision_or_release_is_an_error() {
        let mut no_rev = record("app", "1", None);
        no_rev.remove(REVISION);
        assert!(matches!(
            run(&[("c", no_rev)]),
            Err(BackendError::Invalid { .. })
        ));
        let mut no_release = record("app", "1", None);
        no_release.remove(RELEASE);
        assert!(matches!(
            run(&[("c", no_release)]),
            Err(BackendError::Invalid { .. })
        ));
        assert!(matches!(
            run(&[("c", record("", "1", None))]),
            Err(BackendError::Invalid { .. })
        ));
    }

    #[test]
    fn tie_on_highest_revision() {
        let same = run(&[
            ("a", record("app", "3", Some("us"))),
            ("b", record("app", "3", Some("us"))),
        ])
        .unwrap();
        assert_eq!(same, vec![ReleaseRecord::new("app", Some("us".into()))]);
        assert!(matches!(
            run(&[
                ("a", record("app", "3", Some("us"))),
                ("b", record("app", "3", Some("them"))),
            ]),
            Err(BackendError::Invalid { .. })
        ));
        // A tie below the highest revision does not matter, in any order.
        let mut configs = vec![
            ("a", record("app", "3", Some("us"))),
            ("b", record("app", "3", Some("them"))),
            ("c", record("app", "4", Some("us"))),
        ];
        for _ in 0..3 {
            configs.rotate_left(1);
            assert_eq!(
                run(&configs).unwrap(),
                vec![ReleaseRecord::new("app", Some("us".into()))]
            );
        }
    }

    #[test]
    fn order_of_listing_does_not_change_the_answer() {
        let configs = [
            ("a", record("app", "2", Some("x"))),
            ("b", record("app", "7", Some("y"))),
            ("c", record("app", "5", Some("z"))),
        ];
        let forward = run(&configs).unwrap();
        let mut reversed = configs.to_vec();
        reversed.reverse();
        assert_eq!(forward, run(&reversed).unwrap());
    }

    #[test]
    fn records_are_removed_oldest_revision_first_and_the_newest_last() {
        // Listed in an order that is neither by revision nor by name, and
        // with revisions whose text order is not their numeric order.
        let configs = [
            (
                "swarmcli.release.web.v10",
                record("web", "10", Some("cd/default/store:release/web")),
            ),
            (
                "swarmcli.release.web.v2",
                record("web", "2", Some("cd/default/shop:release/web")),
            ),
            (
                "swarmcli.release.web.v9",
                record("web", "9", Some("cd/default/shop:release/web")),
            ),
            ("web.b1", record("web", "1", None)),
            ("web.a1", record("web", "1", None)),
        ];
        let order = removal_order(
            "web",
            configs
                .iter()
                .map(|(name, labels)| (ConfigLabels { name, labels }, *name)),
        )
        .unwrap();
        assert_eq!(
            order,
            [
                "web.a1",
                "web.b1",
                "swarmcli.release.web.v2",
                "swarmcli.release.web.v9",
                "swarmcli.release.web.v10"
            ]
        );
        // Whatever the listing order.
        let mut reversed = configs.to_vec();
        reversed.reverse();
        let again = removal_order(
            "web",
            reversed
                .iter()
                .map(|(name, labels)| (ConfigLabels { name, labels }, *name)),
        )
        .unwrap();
        assert_eq!(again, order);
    }

    #[test]
    fn an_unreadable_revision_refuses_the_whole_removal() {
        for bad in ["x", "", "+3", "3a", "-1", "99999999999999999999999"] {
            let configs = [
                ("swarmcli.release.web.v1", record("web", "1", Some("us"))),
                ("web.bad", record("web", bad, Some("them"))),
            ];
            let err = removal_order(
                "web",
                configs
                    .iter()
                    .map(|(name, labels)| (ConfigLabels { name, labels }, *name)),
            )
            .unwrap_err();
            match err {
                BackendError::Invalid { what, .. } => {
                    assert!(what.contains("\"web.bad\""), "{what}");
                    assert!(what.contains(REVISION), "{what}");
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        let mut missing = record("web", "1", None);
        missing.remove(REVISION);
        assert!(removal_order(
            "web",
            [(
                ConfigLabels {
                    name: "web.x",
                    labels: &missing
                },
                ()
            )]
        )
        .is_err());
    }

    #[test]
    fn a_config_is_a_record_or_a_stack_object_never_both() {
        let mut in_app = record("app", "1", Some("us"));
        in_app.insert(STACK_NAMESPACE.into(), "app".into());
        assert!(in_stack(&in_app, "app"));
        assert!(!is_release_record(&in_app));
        let plain = record("app", "1", Some("us"));
        assert!(is_release_record(&plain));
        assert!(!in_stack(&plain, "app"));
        // Exactly the namespace: not a prefix, not another stack's.
        assert!(!in_stack(&in_app, "ap"));
        assert!(!in_stack(&in_app, "app2"));
        assert!(!in_stack(&in_app, ""));
    }

    #[test]
    fn removal_takes_only_records_of_exactly_this_release() {
        let mut stack_config = record("web", "99", Some("them"));
        stack_config.insert(STACK_NAMESPACE.into(), "web".into());
        // Another release's record is not even read: its bad revision does
        // not stop this one's removal.
        let other = record("web2", "x", None);
        let configs = [
            ("swarmcli.release.web.v2", record("web", "2", Some("us"))),
            ("web_conf", stack_config),
            ("web2.bad", other),
            ("swarmcli.release.web.v1", record("web", "1", Some("us"))),
            ("plain", labels(&[(RELEASE, "web")])),
        ];
        let order = removal_order(
            "web",
            configs
                .iter()
                .map(|(name, labels)| (ConfigLabels { name, labels }, *name)),
        )
        .unwrap();
        assert_eq!(
            order,
            ["swarmcli.release.web.v1", "swarmcli.release.web.v2"]
        );
    }
}
