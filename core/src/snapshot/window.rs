//! `policy.min_departed_for` as JSON: a duration with units, or a whole
//! number of seconds, read by the one duration parser; zero, negative and
//! fractional numbers are refused, never read as "off".

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::Serializer;

use crate::duration;

pub(crate) fn serialize<S: Serializer>(
    value: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(d) => serializer.serialize_str(&duration::show(*d)),
        None => serializer.serialize_none(),
    }
}

struct Window;

impl Visitor<'_> for Window {
    type Value = Duration;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a duration such as \"10m\", or a whole number of seconds")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
        duration::parse(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
        if v == 0 {
            return Err(E::custom(
                "0 is zero; a duration must be more than zero (leave the field out for no grace period)",
            ));
        }
        Ok(Duration::from_secs(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(E::custom(format_args!(
                "{v} is negative; a duration must be more than zero"
            ))),
        }
    }
}

/// Reads one present value.
pub(crate) struct Given(pub(crate) Duration);

impl<'de> de::Deserialize<'de> for Given {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Window).map(Given)
    }
}

/// For `#[serde(default, deserialize_with = ...)]`: the field present;
/// `null` is off, as for every other optional field.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Duration>, D::Error> {
    <Option<Given> as de::Deserialize>::deserialize(deserializer).map(|g| g.map(|g| g.0))
}

/// The schema of what is read: a duration string or whole seconds.
#[cfg(feature = "schema")]
pub(crate) struct WindowSchema;

#[cfg(feature = "schema")]
impl schemars::JsonSchema for WindowSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "GracePeriod".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A duration with units (\"10m\", \"1h 30m\"), or a whole number of seconds; more than zero.",
            "anyOf": [
                {"type": "string", "minLength": 1},
                {"type": "integer", "minimum": 1},
            ],
        })
    }
}
