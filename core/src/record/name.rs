//! A release record's config name: `swarmcli.release.<release>.v<revision>`.
//!
//! The release part may itself hold dots (and even `.v`): the revision is
//! what follows the *last* `.v`, since a revision's digits never hold one.
//! The revision is canonical decimal: ASCII digits, no sign, no leading
//! zero (`0` alone is revision 0). Were `v01` read as 1, the configs
//! `...v01` and `...v1` could both claim revision 1 and one of them would
//! silently stand for the other; read canonically, every revision has one
//! name and every name one revision.

use thiserror::Error;

/// What every record name starts with.
pub const NAME_PREFIX: &str = "swarmcli.release.";

/// What separates the release from its revision.
const REVISION_MARK: &str = ".v";

/// Why a config name is not a release record's name. Each variant carries
/// the whole name it is about.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum NameError {
    /// It does not start with [`NAME_PREFIX`].
    #[error("config name {name:?} does not start with {NAME_PREFIX:?}")]
    NotARecord {
        /// The name.
        name: String,
    },
    /// No `.v<revision>` after the release.
    #[error("record name {name:?} has no \".v<revision>\" at its end")]
    NoRevision {
        /// The name.
        name: String,
    },
    /// Nothing between the prefix and the revision.
    #[error("record name {name:?} names no release")]
    EmptyRelease {
        /// The name.
        name: String,
    },
    /// The revision is not canonical decimal: empty, a character other
    /// than a digit (a sign, a space), or a leading zero.
    #[error(
        "record name {name:?}: revision {revision:?} is not a decimal number without leading zeros"
    )]
    BadRevision {
        /// The name.
        name: String,
        /// The revision as written.
        revision: String,
    },
    /// The revision does not fit in 64 bits.
    #[error("record name {name:?}: revision {revision} is too large")]
    RevisionTooLarge {
        /// The name.
        name: String,
        /// The revision as written (digits only).
        revision: String,
    },
}

/// The release and revision a record's config `name` stands for.
///
/// ```
/// use sweep_core::record::parse_record_name;
///
/// assert_eq!(parse_record_name("swarmcli.release.web.v3"), Ok(("web".to_owned(), 3)));
/// assert_eq!(parse_record_name("swarmcli.release.a.v2.b.v10"), Ok(("a.v2.b".to_owned(), 10)));
/// assert!(parse_record_name("swarmcli.release.web.v03").is_err());
/// ```
pub fn parse_record_name(name: &str) -> Result<(String, u64), NameError> {
    let Some(rest) = name.strip_prefix(NAME_PREFIX) else {
        return Err(NameError::NotARecord { name: name.into() });
    };
    let Some(at) = rest.rfind(REVISION_MARK) else {
        return Err(NameError::NoRevision { name: name.into() });
    };
    let (release, revision) = (&rest[..at], &rest[at + REVISION_MARK.len()..]);
    if release.is_empty() {
        return Err(NameError::EmptyRelease { name: name.into() });
    }
    let canonical = match revision.as_bytes() {
        [] => false,
        [b'0'] => true,
        [first, ..] => *first != b'0' && revision.bytes().all(|b| b.is_ascii_digit()),
    };
    if !canonical {
        return Err(NameError::BadRevision {
            name: name.into(),
            revision: revision.into(),
        });
    }
    // Digits only, so the one way parsing can fail is overflow.
    let revision_number = revision
        .parse::<u64>()
        .map_err(|_| NameError::RevisionTooLarge {
            name: name.into(),
            revision: revision.into(),
        })?;
    Ok((release.to_owned(), revision_number))
}

/// The config name of `release`'s record of `revision`, the inverse of
/// [`parse_record_name`] for every non-empty `release`.
pub fn record_name(release: &str, revision: u64) -> String {
    format!("{NAME_PREFIX}{release}{REVISION_MARK}{revision}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ok(name: &str) -> (String, u64) {
        parse_record_name(name).unwrap_or_else(|e| panic!("{name:?}: {e}"))
    }

    #[test]
    fn reads_release_and_revision() {
        assert_eq!(ok("swarmcli.release.web.v1"), ("web".into(), 1));
        assert_eq!(ok("swarmcli.release.web.v0"), ("web".into(), 0));
        assert_eq!(ok("swarmcli.release.my.app.v12"), ("my.app".into(), 12));
        // The last `.v` separates, whatever the release holds.
        assert_eq!(ok("swarmcli.release.a.v1.v2"), ("a.v1".into(), 2));
        assert_eq!(ok("swarmcli.release.a.v.v2"), ("a.v".into(), 2));
        assert_eq!(ok("swarmcli.release.a..v2"), ("a.".into(), 2));
        assert_eq!(ok("swarmcli.release...v2"), (".".into(), 2));
        assert_eq!(
            ok("swarmcli.release.x.v18446744073709551615"),
            ("x".into(), u64::MAX)
        );
    }

    #[test]
    fn other_names_are_refused_with_their_reason() {
        let not_record = |n: &str| matches!(parse_record_name(n), Err(NameError::NotARecord { name }) if name == n);
        for name in [
            "",
            "web.v1",
            "swarmcli.release",
            "swarmcli.releaseweb.v1",
            "Swarmcli.release.web.v1",
            " swarmcli.release.web.v1",
        ] {
            assert!(not_record(name), "{name:?}");
        }
        for name in [
            "swarmcli.release.",
            "swarmcli.release.web",
            "swarmcli.release.webv1",
            "swarmcli.release.web.V1",
        ] {
            assert!(
                matches!(parse_record_name(name), Err(NameError::NoRevision { .. })),
                "{name:?}"
            );
        }
        for name in ["swarmcli.release..v1", "swarmcli.release..v"] {
            assert!(
                matches!(parse_record_name(name), Err(NameError::EmptyRelease { .. })),
                "{name:?}"
            );
        }
        for (name, revision) in [
            ("swarmcli.release.web.v", ""),
            ("swarmcli.release.web.v01", "01"),
            ("swarmcli.release.web.v00", "00"),
            ("swarmcli.release.web.v+1", "+1"),
            ("swarmcli.release.web.v-1", "-1"),
            ("swarmcli.release.web.v 1", " 1"),
            ("swarmcli.release.web.v1 ", "1 "),
            ("swarmcli.release.web.v1a", "1a"),
            ("swarmcli.release.web.v1.5", "1.5"),
            ("swarmcli.release.web.v١", "١"),
            ("swarmcli.release.web.v1.vx", "x"),
        ] {
            assert_eq!(
                parse_record_name(name),
                Err(NameError::BadRevision {
                    name: name.into(),
                    revision: revision.into()
                }),
                "{name:?}"
            );
        }
        for name in [
            "swarmcli.release.web.v18446744073709551616",
            "swarmcli.release.web.v99999999999999999999999999999999",
        ] {
            assert!(
                matches!(
                    parse_record_name(name),
                    Err(NameError::RevisionTooLarge { .. })
                ),
                "{name:?}"
            );
        }
    }

    #[test]
    fn one_revision_one_name() {
        // `v01` can never claim revision 1 beside `v1`.
        assert_eq!(ok("swarmcli.release.web.v1").1, 1);
        assert!(parse_record_name("swarmcli.release.web.v01").is_err());
        assert_eq!(record_name("web", 1), "swarmcli.release.web.v1");
    }

    proptest! {
        #[test]
        fn names_round_trip(release in "[a-zA-Z0-9_.v-]{1,24}", revision in any::<u64>()) {
            let name = record_name(&release, revision);
            prop_assert_eq!(parse_record_name(&name), Ok((release, revision)));
        }

        #[test]
        fn a_parsed_name_formats_back_to_itself(name in "swarmcli\\.release\\.[a-z.v0-9]{0,12}") {
            if let Ok((release, revision)) = parse_record_name(&name) {
                prop_assert_eq!(record_name(&release, revision), name);
            }
        }

        #[test]
        fn never_panics(name in any::<String>()) {
            let _ = parse_record_name(&name);
        }
    }
}
