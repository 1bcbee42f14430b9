//! Which objects a release's Compose manifest declares: the names `docker
//! stack deploy` gives what it creates for a stack, read from the manifest
//! a release record holds.
//!
//! The rules, as `docker stack deploy` has them:
//!
//! - every key of `services` is a service `<stack>_<key>`;
//! - a network is created only when a service uses it; a service that
//!   lists no `networks` (or an empty list or mapping) uses `default`. A
//!   service's `networks` is a list of keys or a mapping of key to options
//!   (which may be null). The network's name is the top-level entry's
//!   `name:`, else `<stack>_<key>`; `default` need not be defined at the
//!   top level. Neither need any other key here: `docker stack deploy`
//!   refuses such a service, but it creates the stack's networks before it
//!   reads the services, so `<stack>_<key>` may exist all the same, and
//!   declaring it is the safe side: a declared object is protected, never
//!   deleted for being declared;
//! - every top-level entry of `configs` and `secrets` is created, named by
//!   its `name:`, else `<stack>_<key>`;
//! - whatever is `external` (`external: true`, its string spellings
//!   `yes`/`on`/..., or the legacy `external: {name: ...}`) is never
//!   created, so never declared, under any kind;
//! - volumes are not part of this; top-level keys other than these four
//!   are ignored.
//!
//! Every name becomes an object's name only after Compose's variable
//! substitution, which ran (if at all) where and when the stack was
//! deployed, with an environment this reader does not have: `$$` is a
//! literal `$`, and a name that still holds a variable (`${VAR}`, `$VAR`)
//! or a lone `$` cannot be known, so the whole manifest is refused
//! ([`ManifestError::Unresolved`]). The same goes for keys that become
//! names: Compose does not substitute in keys, but a `$` there makes a
//! name no swarm object can have, so one rule for every name is safe.
//!
//! YAML anchors, aliases and merge keys (`<<: *base`) read as Docker's
//! loader reads them. The document is parsed under the record's budgets
//! ([`YAML_LIMITS`](super::YAML_LIMITS)); booleans are YAML 1.2 (`yes` is a
//! string, which `external` then reads as Docker does), a duplicate key or
//! an unknown tag is refused: each could make this reader see another
//! manifest than Docker saw.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::names::named_enum;
use crate::usage::ObjectKind;
use crate::yaml::{self, Limits};

named_enum! {
    /// The kinds of object a manifest declares. Its own enum rather than
    /// [`ObjectKind`]: that one lists what a release may share with other
    /// workloads (volumes, not services), and a service there would ripple
    /// through every user of usage reports; [`Kind::of`] maps between them.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Kind {
        /// `service`: a swarm service.
        Service = "service",
        /// `network`: a swarm network.
        Network = "network",
        /// `config`: a swarm config.
        Config = "config",
        /// `secret`: a swarm secret.
        Secret = "secret",
    }
}

impl Kind {
    /// The usage report's kind of an object of this kind; `None` for a
    /// service, which no other workload names.
    pub fn usage_kind(self) -> Option<ObjectKind> {
        match self {
            Kind::Service => None,
            Kind::Network => Some(ObjectKind::Network),
            Kind::Secret => Some(ObjectKind::Secret),
            Kind::Config => Some(ObjectKind::Config),
        }
    }

    /// The kind of a usage report's object; `None` for a volume, which a
    /// manifest's declarations do not cover.
    pub fn of(kind: ObjectKind) -> Option<Kind> {
        match kind {
            ObjectKind::Network => Some(Kind::Network),
            ObjectKind::Config => Some(Kind::Config),
            ObjectKind::Secret => Some(Kind::Secret),
            ObjectKind::Volume => None,
        }
    }
}

/// The names of the objects a manifest declares, by kind. In a snapshot
/// (a revision's [`RevisionDocument`](super::RevisionDocument)), each kind
/// is a list of names; a kind left out declares nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Declared {
    /// Services, `<stack>_<key>`.
    #[serde(default)]
    pub services: BTreeSet<String>,
    /// Networks some service uses.
    #[serde(default)]
    pub networks: BTreeSet<String>,
    /// Configs.
    #[serde(default)]
    pub configs: BTreeSet<String>,
    /// Secrets.
    #[serde(default)]
    pub secrets: BTreeSet<String>,
}

impl Declared {
    /// The names of one kind.
    pub fn of(&self, kind: Kind) -> &BTreeSet<String> {
        match kind {
            Kind::Service => &self.services,
            Kind::Network => &self.networks,
            Kind::Config => &self.configs,
            Kind::Secret => &self.secrets,
        }
    }

    /// Whether the manifest declares an object of `kind` named `name`.
    pub fn contains(&self, kind: Kind, name: &str) -> bool {
        self.of(kind).contains(name)
    }
}

/// Why a manifest's declarations cannot be known. Displayed on one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// Not one YAML document.
    #[error("manifest, line {line}, column {column}: {message}")]
    Syntax {
        /// The line, from 1; 0 when unknown.
        line: u32,
        /// The column, from 1; 0 when unknown.
        column: u32,
        /// The parser's words.
        message: String,
    },
    /// Over a YAML budget (nesting, size, aliases).
    #[error("manifest, line {line}, column {column}: {message}")]
    OverBudget {
        /// The line, from 1; 0 when unknown.
        line: u32,
        /// The column, from 1; 0 when unknown.
        column: u32,
        /// Which budget.
        message: String,
    },
    /// A part this reader needs does not have the shape Compose gives it
    /// (`services` a list, a service's `networks` a string).
    #[error("manifest `{path}`: {message}")]
    Field {
        /// The part's path (`services.web.networks`).
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// A name that would become an object's name still holds a variable,
    /// or a `$` that is not `$$`: the name depends on an environment this
    /// reader does not have.
    #[error("manifest: the {kind} name {name:?} holds an unresolved variable")]
    Unresolved {
        /// The kind of object it would name.
        kind: Kind,
        /// The name as written.
        name: String,
    },
    /// An `external` that is neither a boolean, one of its string
    /// spellings, nor a mapping.
    #[error("manifest: {kind} {key:?} has `external: {value}`, not a boolean")]
    External {
        /// The kind of the entry.
        kind: Kind,
        /// Its key.
        key: String,
        /// The value, as read.
        value: String,
    },
}

/// The objects `docker stack deploy` creates for `manifest` as stack
/// `stack`, read under `limits` (a record's: [`YAML_LIMITS`](super::YAML_LIMITS)).
///
/// ```
/// use sweep_core::record::{declared, Kind, YAML_LIMITS};
///
/// let manifest = "services: {web: {networks: [front]}, db: {}}\nnetworks: {front: {name: shared}}\n";
/// let d = declared(manifest, "shop", YAML_LIMITS)?;
/// assert!(d.contains(Kind::Service, "shop_web"));
/// assert!(d.contains(Kind::Network, "shared"));
/// assert!(d.contains(Kind::Network, "shop_default"));
/// # Ok::<(), sweep_core::record::ManifestError>(())
/// ```
pub fn declared(manifest: &str, stack: &str, limits: Limits) -> Result<Declared, ManifestError> {
    let compose = parse(manifest, limits)?;
    let mut out = Declared::default();

    let mut used = BTreeSet::new();
    for (key, service) in compose.services.iter().flatten() {
        out.services.insert(scoped(stack, Kind::Service, key)?);
        match service.as_ref().map(|s| &s.networks.0) {
            Some(networks) if !networks.is_empty() => used.extend(networks.iter().cloned()),
            _ => {
                used.insert(DEFAULT_NETWORK.to_owned());
            }
        }
    }
    let networks = compose.networks.unwrap_or_default();
    for key in &used {
        let entry = networks.get(key).and_then(Option::as_ref);
        out.networks
            .extend(declares(stack, Kind::Network, key, entry)?);
    }
    for (kind, entries, names) in [
        (Kind::Config, compose.configs, &mut out.configs),
        (Kind::Secret, compose.secrets, &mut out.secrets),
    ] {
        for (key, entry) in entries.iter().flatten() {
            names.extend(declares(stack, kind, key, entry.as_ref())?);
        }
    }
    Ok(out)
}

/// The network a service uses when it lists none.
const DEFAULT_NETWORK: &str = "default";

/// The name the entry `key` of `kind` gives its object, `None` when it is
/// external. An entry that is not there, or null, is `<stack>_<key>`, as
/// is one whose `name:` is empty (Compose's reading of an empty name).
fn declares(
    stack: &str,
    kind: Kind,
    key: &str,
    entry: Option<&Entry>,
) -> Result<Option<String>, ManifestError> {
    if let Some(entry) = entry {
        if entry.is_external(kind, key)? {
            return Ok(None);
        }
        if let Some(name) = entry.name.as_deref().filter(|name| !name.is_empty()) {
            return resolve(kind, name).map(Some);
        }
    }
    scoped(stack, kind, key).map(Some)
}

/// `<stack>_<key>`: the name `docker stack deploy` gives an object named by
/// its key alone.
fn scoped(stack: &str, kind: Kind, key: &str) -> Result<String, ManifestError> {
    Ok(format!("{stack}_{}", resolve(kind, key)?))
}

/// `text` after Compose's substitution, which must need no variable: `$$`
/// is `$`; any other `$` starts a variable (or is invalid to Compose).
fn resolve(kind: Kind, text: &str) -> Result<String, ManifestError> {
    let unresolved = || ManifestError::Unresolved {
        kind,
        name: text.to_owned(),
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        rest = rest[at + 1..].strip_prefix('$').ok_or_else(unresolved)?;
        out.push('$');
    }
    out.push_str(rest);
    Ok(out)
}

/// The parts of a Compose document this reader needs; everything else is
/// skipped (within the budgets).
#[derive(Deserialize)]
struct Compose {
    #[serde(default)]
    services: Option<BTreeMap<String, Option<Service>>>,
    #[serde(default)]
    networks: Option<BTreeMap<String, Option<Entry>>>,
    #[serde(default)]
    configs: Option<BTreeMap<String, Option<Entry>>>,
    #[serde(default)]
    secrets: Option<BTreeMap<String, Option<Entry>>>,
}

#[derive(Deserialize)]
struct Service {
    #[serde(default)]
    networks: ServiceNetworks,
}

/// The network keys a service lists, from a list or a mapping's keys.
#[derive(Default)]
struct ServiceNetworks(Vec<String>);

impl<'de> Deserialize<'de> for ServiceNetworks {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = ServiceNetworks;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of network keys or a mapping of them")
            }
            fn visit_unit<E: de::Error>(self) -> Result<ServiceNetworks, E> {
                Ok(ServiceNetworks::default())
            }
            fn visit_none<E: de::Error>(self) -> Result<ServiceNetworks, E> {
                Ok(ServiceNetworks::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ServiceNetworks, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = seq.next_element::<String>()? {
                    keys.push(key);
                }
                Ok(ServiceNetworks(keys))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ServiceNetworks, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    // The options (aliases, addresses) may be null or a
                    // mapping; none of them changes the name.
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(ServiceNetworks(keys))
            }
        }
        deserializer.deserialize_any(Keys)
    }
}

/// A top-level network, config or secret.
#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    external: Option<External>,
}

impl Entry {
    fn is_external(&self, kind: Kind, key: &str) -> Result<bool, ManifestError> {
        match &self.external {
            None | Some(External::Bool(false)) => Ok(false),
            Some(External::Bool(true) | External::Legacy) => Ok(true),
            Some(External::Text(text)) => {
                let bad = || ManifestError::External {
                    kind,
                    key: key.to_owned(),
                    value: yaml::one_line(text),
                };
                // Compose substitutes, then reads the text as a boolean.
                let value = resolve(kind, text).map_err(|_| bad())?;
                match value.to_ascii_lowercase().as_str() {
                    "y" | "yes" | "true" | "on" => Ok(true),
                    "n" | "no" | "false" | "off" => Ok(false),
                    _ => Err(bad()),
                }
            }
        }
    }
}

/// `external:` as written: a boolean, a string Compose reads as one, or
/// the legacy mapping (`external: {name: x}`), which is external whatever
/// it holds.
enum External {
    Bool(bool),
    Text(String),
    Legacy,
}

impl<'de> Deserialize<'de> for External {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Value;
        impl<'de> Visitor<'de> for Value {
            type Value = External;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a boolean or a mapping")
            }
            fn visit_bool<E: de::Error>(self, value: bool) -> Result<External, E> {
                Ok(External::Bool(value))
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<External, E> {
                Ok(External::Text(value.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<External, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(External::Legacy)
            }
        }
        deserializer.deserialize_any(Value)
    }
}

fn parse(text: &str, limits: Limits) -> Result<Compose, ManifestError> {
    let mut options = yaml::options(limits);
    // `external: yes` is the string `yes` to Docker's loader (YAML 1.2),
    // which it then reads as a boolean; see `Entry::is_external`.
    options.strict_booleans = true;
    // A tag could make this reader see a value Docker did not.
    options.reject_unsupported_tags = true;
    let mut track = serde_path_to_error::Track::new();
    let compose = serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        Option::<Compose>::deserialize(serde_path_to_error::Deserializer::new(de, &mut track))
    })
    .map_err(|e| yaml_error(&e, limits, &track.path()))?;
    // No document, or a null one: not a Compose file Docker would deploy,
    // and reading it as declaring nothing would leave every object of the
    // stack undeclared.
    compose.ok_or_else(|| ManifestError::Syntax {
        line: 0,
        column: 0,
        message: "the document is empty".into(),
    })
}

fn yaml_error(
    error: &serde_saphyr::Error,
    limits: Limits,
    path: &serde_path_to_error::Path,
) -> ManifestError {
    let (line, column) = yaml::line_column(error);
    let syntax = |message: String| ManifestError::Syntax {
        line,
        column,
        message,
    };
    if yaml::is_second_document(error) {
        return syntax("a second document: a manifest is one YAML document".into());
    }
    if let Some(message) = yaml::breach(error, limits) {
        return ManifestError::OverBudget {
            line,
            column,
            message,
        };
    }
    let inner = yaml::original(error);
    let path = match path.to_string() {
        root if root == "." => String::new(),
        path => yaml::one_line(&path),
    };
    match inner {
        serde_saphyr::Error::Eof { .. } if path.is_empty() => {
            syntax("the document is empty".into())
        }
        other if yaml::is_schema_error(other) => ManifestError::Field {
            path: if path.is_empty() {
                "(root)".into()
            } else {
                path
            },
            message: yaml::message(other),
        },
        other => syntax(yaml::message(other)),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::record::YAML_LIMITS;

    fn ok(manifest: &str) -> Declared {
        declared(manifest, "s", YAML_LIMITS).unwrap_or_else(|e| panic!("{manifest:?}: {e}"))
    }

    fn err(manifest: &str) -> ManifestError {
        match declared(manifest, "s", YAML_LIMITS) {
            Ok(d) => panic!("accepted {manifest:?} as {d:?}"),
            Err(e) => {
                assert!(!e.to_string().contains('\n'), "{e}");
                e
            }
        }
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn an_empty_services_mapping_declares_nothing() {
        for manifest in ["services: {}", "services:", "version: '3.8'", "{}"] {
            assert_eq!(ok(manifest), Declared::default(), "{manifest:?}");
        }
    }

    #[test]
    fn external_string_spellings_read_as_compose_reads_them() {
        for yes in ["yes", "Y", "on", "'true'", "TRUE", "True"] {
            let d = ok(&format!(
                "services: {{a: {{}}}}\nnetworks: {{default: {{external: {yes}, name: x}}}}\nconfigs: {{c: {{external: {yes}}}}}"
            ));
            assert!(d.networks.is_empty(), "{yes}");
            assert!(d.configs.is_empty(), "{yes}");
        }
        for no in ["no", "off", "'false'", "false", "N", "~"] {
            let d = ok(&format!(
                "services: {{a: {{}}}}\nnetworks: {{default: {{external: {no}}}}}\nconfigs: {{c: {{external: {no}}}}}"
            ));
            assert_eq!(d.networks, set(&["s_default"]), "{no}");
            assert_eq!(d.configs, set(&["s_c"]), "{no}");
        }
        for bad in ["maybe", "'${EXT}'", "''"] {
            assert_eq!(
                err(&format!("secrets: {{p: {{external: {bad}}}}}")),
                ManifestError::External {
                    kind: Kind::Secret,
                    key: "p".into(),
                    value: bad.trim_matches('\'').into()
                },
                "{bad}"
            );
        }
        for bad in ["1", "[true]"] {
            let e = err(&format!("secrets: {{p: {{external: {bad}}}}}"));
            assert!(matches!(e, ManifestError::Field { .. }), "{bad}: {e:?}");
        }
    }

    #[test]
    fn substitution_is_escapes_only() {
        assert_eq!(resolve(Kind::Config, "a$$b$$").unwrap(), "a$b$");
        assert_eq!(resolve(Kind::Config, "$$$$").unwrap(), "$$");
        for name in ["$A", "${A}", "a$", "$", "$$$", "a${A:-x}", "$1", "$-"] {
            assert_eq!(
                resolve(Kind::Config, name),
                Err(ManifestError::Unresolved {
                    kind: Kind::Config,
                    name: name.into()
                }),
                "{name:?}"
            );
        }
    }

    #[test]
    fn shapes_compose_does_not_have_are_refused() {
        for manifest in [
            "services: [a, b]",
            "services: {a: 5}",
            "services: {a: {networks: front}}",
            "services: {a: {networks: [[front]]}}",
            "networks: [a]",
            "configs: {c: [x]}",
            "secrets: {p: {name: [x]}}",
        ] {
            assert!(
                matches!(err(manifest), ManifestError::Field { .. }),
                "{manifest:?}: {:?}",
                err(manifest)
            );
        }
        for manifest in [
            "services: {a: {}}\n---\nservices: {b: {}}\n",
            "services: [",
            "",
            "# nothing\n",
            "~",
            "services: {a: {}, a: {}}",
            "services: {a: !custom {}}",
        ] {
            let e = err(manifest);
            assert!(
                matches!(
                    e,
                    ManifestError::Syntax { .. } | ManifestError::Field { .. }
                ),
                "{manifest:?}: {e:?}"
            );
        }
    }

    #[test]
    fn budgets_hold() {
        let deep = format!("services: {{a: {{x: {}}}}}", "[".repeat(10_000));
        assert!(matches!(err(&deep), ManifestError::OverBudget { .. }));
        let mut bomb = String::from("x-a0: &a0 [x, x]\n");
        for i in 1..40 {
            bomb.push_str(&format!("x-a{i}: &a{i} [*a{p}, *a{p}]\n", p = i - 1));
        }
        assert!(matches!(err(&bomb), ManifestError::OverBudget { .. }));
    }

    #[test]
    fn kinds_map_from_usage_kinds() {
        assert_eq!(Kind::of(ObjectKind::Network), Some(Kind::Network));
        assert_eq!(Kind::of(ObjectKind::Config), Some(Kind::Config));
        assert_eq!(Kind::of(ObjectKind::Secret), Some(Kind::Secret));
        assert_eq!(Kind::of(ObjectKind::Volume), None);
        let d = ok("services: {a: {}}\nconfigs: {c: {}}");
        assert!(d.contains(Kind::Service, "s_a"));
        assert!(d.contains(Kind::Network, "s_default"));
        assert!(d.contains(Kind::Config, "s_c"));
        assert!(!d.contains(Kind::Secret, "s_c"));
    }

    proptest! {
        #[test]
        fn never_panics(text in "[a-z:{}\\[\\]&*<$, \n-]{0,160}", stack in "[a-z]{0,4}") {
            let _ = declared(&text, &stack, YAML_LIMITS);
        }

        /// Whatever else a manifest holds, each service key is a service.
        #[test]
        fn every_service_is_declared(keys in proptest::collection::btree_set("[a-z][a-z0-9]{0,6}", 0..6)) {
            let manifest = format!(
                "services:\n{}",
                keys.iter().map(|k| format!("  {k}: {{image: x}}\n")).collect::<String>()
            );
            let d = declared(&manifest, "st", YAML_LIMITS).unwrap();
            let want: BTreeSet<String> = keys.iter().map(|k| format!("st_{k}")).collect();
            prop_assert_eq!(&d.services, &want);
            let networks = if keys.is_empty() { set(&[]) } else { set(&["st_default"]) };
            prop_assert_eq!(d.networks, networks);
        }
    }
}
