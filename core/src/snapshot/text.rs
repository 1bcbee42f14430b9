//! The string type of a snapshot's names.
//!
//! The snapshot types are written once, generic over how they hold their
//! names: owned ([`String`], the default and the only one outside this
//! crate), or borrowed from the JSON text being planned ([`Text`]), so that
//! `plan --snapshot` on a million releases does not copy a million names
//! it only looks at. Both are read by the same derived code, so they accept
//! and refuse exactly the same texts.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use crate::refs::SwarmName;

mod sealed {
    pub trait Sealed {}
    impl Sealed for String {}
    impl Sealed for super::Text<'_> {}
}

/// How the snapshot types hold a name: [`String`] for the public types
/// (`Snapshot` is `Snapshot<String>`). Sealed: the crate's in-place reader
/// is the only other.
pub trait SnapshotStr: sealed::Sealed {
    /// How a swarm name is held: [`SwarmName`] when owned.
    type Swarm: fmt::Debug + Clone + Eq;

    /// The name.
    fn as_str(&self) -> &str;

    /// A swarm name as text; `""` is the controller's own swarm.
    fn swarm_str(swarm: &Self::Swarm) -> &str;

    /// The controller id a policy without one has.
    fn default_controller() -> Self;
}

/// A [`SnapshotStr`] whose names, swarm names included, can be read from
/// input that lives for `'de`: what the derived readers require.
/// `Send`, so that a snapshot's swarms can be read on two threads.
pub trait ReadStr<'de>:
    SnapshotStr<Swarm: Deserialize<'de> + Send> + Deserialize<'de> + Send
{
}

impl<'de, S: SnapshotStr<Swarm: Deserialize<'de> + Send> + Deserialize<'de> + Send> ReadStr<'de>
    for S
{
}

/// A [`SnapshotStr`] whose names, swarm names included, can be written:
/// what the derived writers (and the JSON Schema's defaults) require.
pub trait WriteStr: SnapshotStr<Swarm: Serialize> + Serialize {}

impl<S: SnapshotStr<Swarm: Serialize> + Serialize> WriteStr for S {}

/// A [`WriteStr`] with a JSON Schema, swarm names included.
#[cfg(feature = "schema")]
pub trait SchemaStr: WriteStr<Swarm: schemars::JsonSchema> + schemars::JsonSchema {}

#[cfg(feature = "schema")]
impl<S: WriteStr<Swarm: schemars::JsonSchema> + schemars::JsonSchema> SchemaStr for S {}

impl SnapshotStr for String {
    type Swarm = SwarmName;

    fn as_str(&self) -> &str {
        self
    }

    fn swarm_str(swarm: &SwarmName) -> &str {
        swarm.as_str()
    }

    fn default_controller() -> Self {
        "default".to_owned()
    }
}

impl<'a> SnapshotStr for Text<'a> {
    type Swarm = Text<'a>;

    fn as_str(&self) -> &str {
        &self.0
    }

    fn swarm_str(swarm: &Self::Swarm) -> &str {
        &swarm.0
    }

    fn default_controller() -> Self {
        Text(Cow::Borrowed("default"))
    }
}

/// A JSON string, borrowed from the text unless escapes made it differ
/// from it. Reads exactly what a `String` field reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
        }
        deserializer.deserialize_string(TextVisitor).map(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{one_json_document, Snapshot};

    #[test]
    fn names_are_borrowed_from_the_text_unless_escaped() {
        let text = r#"{"app_set":{"loaded":true,"applications":[{"name":"shop","swarm":"a","releases":["web"]}]},
            "swarms":[{"swarm":"a","releases":[{"name":"web","owner":"x\u0041"}]}]}"#;
        let snapshot: Snapshot<Text<'_>> = one_json_document(text).unwrap();
        let release = &snapshot.swarms[0].releases[0];
        assert!(matches!(release.name.0, Cow::Borrowed("web")));
        assert!(matches!(snapshot.swarms[0].swarm.0, Cow::Borrowed("a")));
        let app = &snapshot.app_set.applications[0];
        assert!(matches!(app.name.0, Cow::Borrowed("shop")));
        assert!(matches!(app.swarm.0, Cow::Borrowed("a")));
        // An escape makes the name differ from the text: it is copied.
        let owner = release.owner.as_ref().unwrap();
        assert!(matches!(owner.0, Cow::Owned(_)));
        assert_eq!(owner.as_str(), "xA");
        // The policy left out holds the default controller, as owned.
        assert_eq!(snapshot.policy.controller.as_str(), "default");
    }
}
