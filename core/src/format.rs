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

/// The one format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// The `format_version` field: always [`FORMAT_VERSION`], and only that
/// is read.
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
            "description": "The format version of the document; only this one is read.",
            "type": "integer",
            "const": FORMAT_VERSION,
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
                write!(f, "format version {FORMAT_VERSION}")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<FormatVersion, E> {
                if v == u64::from(FORMAT_VERSION) {
                    Ok(FormatVersion)
                } else {
                    Err(E::custom(format_args!(
                        "format version {v} is not one this build reads (it reads {FORMAT_VERSION})"
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
    fn only_the_known_version_reads() {
        assert_eq!(serde_json::to_string(&FormatVersion).unwrap(), "1");
        assert_eq!(
            serde_json::from_str::<FormatVersion>("1").unwrap(),
            FormatVersion
        );
        for bad in ["2", "0", "-1", "1.0", "\"1\"", "null"] {
            assert!(serde_json::from_str::<FormatVersion>(bad).is_err(), "{bad}");
        }
    }
}
