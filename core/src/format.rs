//! The version of the JSON documents' format (snapshot, plan, saved plan,
//! report).
//!
//! Every document carries `format_version`; a reader refuses a version it
//! does not know rather than guessing what its fields mean. A snapshot
//! without one is of version 1, so snapshots written before the field
//! existed, and embedders' snapshots, stay valid.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The format version this build writes: 2 added the resource rule
/// (`prune_resources`, a release's `revisions`, an object's `version` and
/// `cd_created`, and the plan's `dropped`, `unclaimed`, `resource_holds`
/// and `skipped_revisions`).
pub const FORMAT_VERSION: u32 = 2;

/// The oldest format version this build reads. Every change since it
/// only added fields, each absent meaning what version 1 meant (the rule
/// off, nothing read for it), so an older document reads as it always did.
pub const OLDEST_FORMAT_VERSION: u32 = 1;

/// The `format_version` field: written as [`FORMAT_VERSION`]; read from
/// any version from [`OLDEST_FORMAT_VERSION`] on, and no newer one, whose
/// fields this build would not know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FormatVersion;

impl FormatVersion {
    /// The version as a number: [`FORMAT_VERSION`].
    pub const fn get(self) -> u32 {
        FORMAT_VERSION
    }
}

impl fmt::Display for FormatVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{FORMAT_VERSION}")
    }
}

// The number itself, as serialized, and only the one version, as read.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for FormatVersion {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FormatVersion".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The format version of the document: written as the newest; every version from the oldest on is read.",
            "type": "integer",
            "minimum": OLDEST_FORMAT_VERSION,
            "maximum": FORMAT_VERSION,
        })
    }
}

impl Serialize for FormatVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(FORMAT_VERSION)
    }
}

impl<'de> Deserialize<'de> for FormatVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Version;
        impl Visitor<'_> for Version {
            type Value = FormatVersion;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "format version {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION}"
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<FormatVersion, E> {
                if (u64::from(OLDEST_FORMAT_VERSION)..=u64::from(FORMAT_VERSION)).contains(&v) {
                    Ok(FormatVersion)
                } else {
                    Err(E::custom(format_args!(
                        "format version {v} is not one this build reads (it reads {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION})"
                    )))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<FormatVersion, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Signed(v), &self)),
                }
            }
        }
        deserializer.deserialize_u64(Version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_known_versions_read() {
        assert_eq!(serde_json::to_string(&FormatVersion).unwrap(), "2");
        for good in ["1", "2"] {
            assert_eq!(
                serde_json::from_str::<FormatVersion>(good).unwrap(),
                FormatVersion
            );
        }
        for bad in ["3", "0", "-1", "1.0", "\"1\"", "null"] {
            assert!(serde_json::from_str::<FormatVersion>(bad).is_err(), "{bad}");
        }
    }
}
