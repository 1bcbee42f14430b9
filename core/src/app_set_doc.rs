//! Reading an app-set document: the file an operator hands `swarm-sweep`
//! with `--app-set`, in YAML or JSON. A document that parses as JSON is
//! read as JSON; anything else as YAML (whose flow syntax also covers
//! JSON, except for a few strings such as a raw U+0080).
//!
//! The schema is a snapshot's `app_set`: `loaded` is required,
//! `applications` is a list of `{name, swarm, releases, state}`, `swarm` is
//! required (`""` is the controller's own swarm), and `releases` omitted or
//! `null` means the application has not reconciled yet. The document is
//! typed: a null where a string is required is an error, never the string
//! `"null"`, and `releases: [null]` is not a release named `null`.
//!
//! The file comes from outside, so parsing is bounded: alias expansion,
//! nesting depth and the number of nodes have budgets ([`Limits`]), and a
//! document over one is refused with [`AppSetError::Limit`] instead of
//! costing gigabytes and minutes. A document that parses is validated like
//! a snapshot's app set (duplicate, empty or ungrammatical application
//! names are refused).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use thiserror::Error;

use crate::snapshot::{AppSet, Policy, Snapshot, SnapshotError};
use crate::yaml::{self, message, one_line, original, saturate};

/// Why an app-set document was refused: data, one line when displayed.
///
/// [`AppSetError::place`] says where (a field path such as
/// `applications[1].swarm (application "shop")`, or `line L, column C`
/// where there is no field), [`AppSetError::message`] what is wrong there;
/// the [`Display`](fmt::Display) is `<place>: <message>`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AppSetError {
    /// Not YAML (or JSON): a syntax error, a second document, trailing data.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// The line, from 1.
        line: u32,
        /// The column, from 1.
        column: u32,
        /// The parser's words.
        message: String,
    },
    /// Over a parsing budget ([`Limits`]: alias expansion, nesting depth,
    /// size), refused before it could cost much.
    #[error("line {line}, column {column}: {message}")]
    Limit {
        /// The line, from 1.
        line: u32,
        /// The column, from 1.
        column: u32,
        /// Which budget, in the parser's words.
        message: String,
    },
    /// A value does not fit the schema.
    ///
    /// `path` is the whole field path (`applications[1].swarm`, `loaded`;
    /// empty for the document itself). `application` is the index of the
    /// application the field is in, if any, and `name` that application's
    /// name where the document gives one. `field` is the path inside that
    /// application (`swarm`, `releases[0]`), or `path` outside of one.
    /// `line` and `column` are where the parser was (0 when unknown).
    #[error(
        "{}: {message}{}",
        place(path, *application, name.as_deref()),
        location(*line, *column)
    )]
    Field {
        /// The whole field path.
        path: String,
        /// The index of the application the field is in.
        application: Option<usize>,
        /// That application's name, where the document gives one.
        name: Option<String>,
        /// The path inside that application, or `path`.
        field: String,
        /// The line, from 1; 0 when unknown.
        line: u32,
        /// The column, from 1; 0 when unknown.
        column: u32,
        /// What is wrong with the value.
        message: String,
    },
    /// It parses, but is not a usable app set: the checks of
    /// [`Snapshot::validate`] for a snapshot's `app_set` (duplicate, empty
    /// or ungrammatical application names). `path` is the part of the
    /// document it names (`applications`, `applications[0].name`).
    #[error("{path}: {message}")]
    Invalid {
        /// The part of the document the check names.
        path: String,
        /// What is wrong there.
        message: String,
        /// The snapshot check's own error.
        source: SnapshotError,
    },
}

impl AppSetError {
    /// Where in the document: a field path, or `line L, column C`.
    pub fn place(&self) -> String {
        match self {
            AppSetError::Syntax { line, column, .. } | AppSetError::Limit { line, column, .. } => {
                format!("line {line}, column {column}")
            }
            AppSetError::Field {
                path,
                application,
                name,
                ..
            } => place(path, *application, name.as_deref()),
            AppSetError::Invalid { path, .. } => path.clone(),
        }
    }

    /// What is wrong there: the [`Display`](fmt::Display) without the
    /// place in front.
    pub fn message(&self) -> String {
        match self {
            AppSetError::Field {
                message,
                line,
                column,
                ..
            } => format!("{message}{}", location(*line, *column)),
            AppSetError::Syntax { message, .. }
            | AppSetError::Limit { message, .. }
            | AppSetError::Invalid { message, .. } => message.clone(),
        }
    }
}

fn place(path: &str, application: Option<usize>, name: Option<&str>) -> String {
    let path = if path.is_empty() { "(root)" } else { path };
    match (application, name) {
        (Some(_), Some(name)) => format!("{path} (application {name:?})"),
        _ => path.to_owned(),
    }
}

fn location(line: u32, column: u32) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(" (line {line}, column {column})")
    }
}

/// The parsing budgets: [`yaml::Limits`], whose defaults are an app set's.
pub use crate::yaml::Limits;

impl AppSet {
    /// Parses and validates an app-set document, YAML or JSON, under the
    /// default [`Limits`]: [`parse`].
    pub fn from_document(text: &str) -> Result<AppSet, AppSetError> {
        parse(text)
    }
}

/// Parses and validates an app-set document, YAML or JSON, under the
/// default [`Limits`].
pub fn parse(text: &str) -> Result<AppSet, AppSetError> {
    parse_with_limits(text, Limits::DEFAULT)
}

/// [`parse`] with explicit budgets.
pub fn parse_with_limits(text: &str, limits: Limits) -> Result<AppSet, AppSetError> {
    let app_set = deserialize(text, limits)?;
    // The same checks as for a snapshot's app set: duplicate or empty
    // application names make stamps ambiguous.
    let snapshot = Snapshot::new(Policy::default(), app_set, Vec::new());
    snapshot.validate().map_err(invalid)?;
    Ok(snapshot.app_set)
}

/// The document is read as the snapshot's own [`AppSet`], by the same
/// derived reader: the same fields, defaults and refusals (unknown fields,
/// a struct written as a sequence), whichever of YAML or JSON it is in.
type Doc = AppSet;

/// JSON is read as JSON when it parses as JSON (a few strings valid in
/// JSON are not in YAML, such as a raw U+0080; JSON has no aliases, and
/// serde_json stops at 128 levels of nesting), and as YAML otherwise
/// (`{loaded: true}` is a YAML flow mapping, not JSON).
fn deserialize(text: &str, limits: Limits) -> Result<Doc, AppSetError> {
    let mut trailing = None;
    if text.trim_start().starts_with('{') {
        match deserialize_json(text, limits) {
            Ok(doc) => return Ok(doc),
            Err(JsonFailure::Data(error)) => return Err(error),
            Err(JsonFailure::Trailing(error)) => trailing = Some(error),
            Err(JsonFailure::NotJson) => {}
        }
    }
    deserialize_yaml(text, limits).map_err(|error| match (error, trailing) {
        // A JSON document and then more: JSON's message says so plainly,
        // YAML's would be about a missing document start.
        (AppSetError::Syntax { .. }, Some(trailing)) => trailing,
        (error, _) => error,
    })
}

enum JsonFailure {
    /// Not JSON: the YAML parser has the say.
    NotJson,
    /// A JSON document that does not fit the schema.
    Data(AppSetError),
    /// A JSON document fitting the schema, followed by more; YAML may still
    /// read the whole (a comment after it).
    Trailing(AppSetError),
}

fn deserialize_json(text: &str, limits: Limits) -> Result<Doc, JsonFailure> {
    let mut de = serde_json::Deserializer::from_str(text);
    let doc: Doc = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        if inner.classify() != serde_json::error::Category::Data {
            return JsonFailure::NotJson;
        }
        let message = inner.to_string();
        // serde_json puts " at line L column C" after its message.
        let message = match message.rfind(" at line ") {
            Some(at) => message[..at].to_owned(),
            None => message,
        };
        // serde reports a missing or repeated field on the mapping it
        // belongs in; the path names the field itself.
        let leaf = ["missing field `", "duplicate field `"]
            .iter()
            .find_map(|p| message.strip_prefix(p)?.strip_suffix('`'))
            .map(str::to_owned);
        let message = if message == "invalid type: null, expected a string" {
            NULL_STRING.to_owned()
        } else {
            one_line(&message)
        };
        let segments = segments(e.path(), leaf);
        JsonFailure::Data(field(
            text,
            limits,
            segments,
            (saturate(inner.line()), saturate(inner.column())),
            message,
        ))
    })?;
    de.end().map_err(|e| {
        JsonFailure::Trailing(AppSetError::Syntax {
            line: saturate(e.line()),
            column: saturate(e.column()),
            message: "trailing characters after the JSON document".to_owned(),
        })
    })?;
    Ok(doc)
}

fn deserialize_yaml(text: &str, limits: Limits) -> Result<Doc, AppSetError> {
    let mut track = serde_path_to_error::Track::new();
    serde_saphyr::with_deserializer_from_str_with_options(text, options(limits), |de| {
        <Doc as Deserialize>::deserialize(serde_path_to_error::Deserializer::new(de, &mut track))
    })
    .map_err(|e| yaml_error(text, limits, &e, track.path()))
}

fn options(limits: Limits) -> serde_saphyr::Options {
    let mut options = yaml::options(limits);
    // YAML 1.2 booleans only: `loaded: yes` is not read as true.
    options.strict_booleans = true;
    // An application tag (`swarm: !secret x`) would be dropped silently.
    options.reject_unsupported_tags = true;
    options
}

fn yaml_error(
    text: &str,
    limits: Limits,
    error: &serde_saphyr::Error,
    path: serde_path_to_error::Path,
) -> AppSetError {
    use serde_saphyr::Error as E;

    let inner = original(error);
    let (line, column) = yaml::line_column(error);
    if yaml::is_second_document(error) {
        return AppSetError::Syntax {
            line,
            column,
            message: "a second document: an app set is one YAML document".into(),
        };
    }
    if let Some(message) = yaml::breach(error, limits) {
        return AppSetError::Limit {
            line,
            column,
            message,
        };
    }
    let syntax = |message: String| AppSetError::Syntax {
        line,
        column,
        message,
    };
    let (leaf, message) = match inner {
        E::ExternalMessage { .. } => return syntax(message(inner)),
        E::NullIntoString { .. } => (None, NULL_STRING.to_owned()),
        E::SerdeMissingField { field, .. } => (Some((*field).to_owned()), message(inner)),
        E::DuplicateMappingKey { key, .. } => (
            key.clone(),
            match key {
                Some(_) => "given twice".to_owned(),
                None => "a key is given twice".to_owned(),
            },
        ),
        E::Eof { .. } if path.iter().next().is_none() => (
            None,
            "the document is empty (`loaded` is required)".to_owned(),
        ),
        other if yaml::is_schema_error(other) => (None, message(other)),
        other => return syntax(message(other)),
    };
    field(text, limits, segments(&path, leaf), (line, column), message)
}

const NULL_STRING: &str = "null where a string is required";

/// The path's segments, `[i]` for an index; `leaf` is appended (the name of
/// a missing or repeated field, which serde reports on the enclosing
/// mapping). Unknown segments (a key being read) are dropped.
fn segments(path: &serde_path_to_error::Path, leaf: Option<String>) -> Vec<String> {
    use serde_path_to_error::Segment;
    let mut out: Vec<String> = path
        .iter()
        .filter_map(|segment| match segment {
            Segment::Seq { index } => Some(format!("[{index}]")),
            Segment::Map { key } => Some(one_line(key)),
            Segment::Enum { variant } => Some(one_line(variant)),
            Segment::Unknown => None,
        })
        .collect();
    out.extend(leaf.map(|leaf| one_line(&leaf)));
    out
}

fn join(parts: &[String]) -> String {
    let mut out = String::new();
    for part in parts {
        if !out.is_empty() && !part.starts_with('[') {
            out.push('.');
        }
        out.push_str(part);
    }
    out
}

fn field(
    text: &str,
    limits: Limits,
    segments: Vec<String>,
    (line, column): (u32, u32),
    message: String,
) -> AppSetError {
    let application = match segments.as_slice() {
        [list, index, ..] if list == "applications" => index
            .strip_prefix('[')
            .and_then(|i| i.strip_suffix(']'))
            .and_then(|i| i.parse::<usize>().ok()),
        _ => None,
    };
    let inside = if application.is_some() {
        &segments[2..]
    } else {
        &segments[..]
    };
    let field = join(inside);
    let message = if message == NULL_STRING && field == "swarm" {
        format!("{message} (\"\" is the controller's own swarm)")
    } else {
        message
    };
    AppSetError::Field {
        path: join(&segments),
        application,
        name: application.and_then(|i| application_name(text, limits, i)),
        field,
        line,
        column,
        message,
    }
}

fn invalid(source: SnapshotError) -> AppSetError {
    let text = source.to_string();
    let text = text.strip_prefix("app_set.").unwrap_or(&text);
    let (path, message) = text.split_once(": ").unwrap_or(("(root)", text));
    AppSetError::Invalid {
        path: one_line(path),
        message: one_line(message),
        source,
    }
}

/// The name of application `index`, read leniently from the document that
/// failed to parse (the name may come after the field that failed).
fn application_name(text: &str, limits: Limits, index: usize) -> Option<String> {
    let probe: NameProbe = match serde_json::from_str(text) {
        Ok(probe) => probe,
        Err(_) => serde_saphyr::from_str_with_options(text, options(limits)).ok()?,
    };
    probe.0.into_iter().nth(index).flatten()
}

/// The `name` of each entry of `applications`, where it is a string.
struct NameProbe(Vec<Option<String>>);

impl<'de> Deserialize<'de> for NameProbe {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Root;
        impl<'de> Visitor<'de> for Root {
            type Value = NameProbe;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NameProbe, A::Error> {
                let mut names = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "applications" {
                        names = map.next_value::<Entries>()?.0;
                    } else {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
                Ok(NameProbe(names))
            }
        }
        deserializer.deserialize_map(Root)
    }
}

struct Entries(Vec<Option<String>>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct List;
        impl<'de> Visitor<'de> for List {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Entries, A::Error> {
                let mut names = Vec::new();
                while let Some(Entry(name)) = seq.next_element()? {
                    names.push(name);
                }
                Ok(Entries(names))
            }
        }
        deserializer.deserialize_seq(List)
    }
}

struct Entry(Option<String>);

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = Entry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
                let mut name = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "name" {
                        name = map.next_value::<Option<String>>()?;
                    } else {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
                Ok(Entry(name))
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::refs::SwarmName;
    use crate::snapshot::{AppState, Application};

    fn err(text: &str) -> AppSetError {
        match parse(text) {
            Ok(app_set) => panic!("accepted {text:?} as {app_set:?}"),
            Err(e) => {
                let shown = e.to_string();
                assert!(!shown.contains('\n'), "two lines: {shown:?}");
                assert_eq!(shown, format!("{}: {}", e.place(), e.message()));
                e
            }
        }
    }

    /// The field error's (path, application index, name).
    fn field_of(e: &AppSetError) -> (&str, Option<usize>, Option<&str>, &str) {
        match e {
            AppSetError::Field {
                path,
                application,
                name,
                field,
                ..
            } => (path, *application, name.as_deref(), field),
            other => panic!("not a field error: {other:?}"),
        }
    }

    const YAML: &str = r#"
# The app set, as a controller writes it.
loaded: true
applications:
  - name: shop
    swarm: eu
    releases: &shop [web, web-db]
  - name: shop-copy
    swarm: ""
    releases: *shop
    state: draining
  - name: new
    swarm: ''
  - name: pending
    swarm: us
    releases: ~
    state: unreconciled
  - {name: "007", swarm: ops, releases: []}
"#;

    fn expected() -> AppSet {
        AppSet::new(
            true,
            vec![
                Application::reconciled("shop", "eu", &["web", "web-db"]),
                Application::new(
                    "shop-copy",
                    SwarmName::local(),
                    Some(vec!["web".into(), "web-db".into()]),
                    AppState::Draining,
                ),
                Application::new("new", "", None, AppState::Reconciled),
                Application::new("pending", "us", None, AppState::Unreconciled),
                Application::reconciled("007", "ops", &[]),
            ],
        )
    }

    #[test]
    fn reads_a_yaml_app_set() {
        assert_eq!(parse(YAML), Ok(expected()));
        assert_eq!(AppSet::from_document(YAML), Ok(expected()));
    }

    #[test]
    fn reads_a_json_app_set_and_its_own_json() {
        let json = serde_json::to_string_pretty(&expected()).unwrap();
        assert_eq!(parse(&json), Ok(expected()));
        let text = r#"{"loaded": true, "applications": [
            {"name": "edge", "swarm": "", "releases": ["edge", "edge-db"], "state": "reconciled"},
            {"name": "later", "swarm": "alpha", "releases": null}
        ]}"#;
        let app_set = parse(text).unwrap();
        assert_eq!(
            app_set.applications,
            vec![
                Application::reconciled("edge", "", &["edge", "edge-db"]),
                Application::new("later", "alpha", None, AppState::Reconciled),
            ]
        );
        // JSON strings that YAML would refuse raw (U+0080) or escaped
        // (surrogate pairs) read as JSON.
        let text = "{\"loaded\": true, \"applications\": [{\"name\": \"a\", \"swarm\": \"\u{80}\\ud83d\\ude00\"}]}";
        assert_eq!(
            parse(text).unwrap().applications[0].swarm.as_str(),
            "\u{80}\u{1F600}"
        );
        // A YAML flow mapping that is not JSON is YAML.
        assert_eq!(parse("{loaded: false}"), Ok(AppSet::new(false, Vec::new())));
    }

    #[test]
    fn releases_null_or_omitted_means_not_reconciled_yet() {
        for releases in [
            "",
            "    releases:\n",
            "    releases: ~\n",
            "    releases: null\n",
        ] {
            let text =
                format!("loaded: true\napplications:\n  - name: a\n    swarm: x\n{releases}");
            assert_eq!(
                parse(&text).unwrap().applications[0].releases,
                None,
                "{text}"
            );
        }
        let text = "loaded: true\napplications:\n  - name: a\n    swarm: x\n    releases: []\n";
        assert_eq!(parse(text).unwrap().applications[0].releases, Some(vec![]));
    }

    #[test]
    fn a_null_swarm_is_an_error_naming_the_application_not_the_string_null() {
        for swarm in ["~", "null", "Null", ""] {
            let text = format!("loaded: true\napplications:\n  - name: a\n    swarm: ''\n  - name: shop\n    swarm: {swarm}\n");
            let e = err(&text);
            assert_eq!(
                field_of(&e),
                ("applications[1].swarm", Some(1), Some("shop"), "swarm"),
                "{swarm}"
            );
            assert!(
                e.to_string().starts_with(
                    "applications[1].swarm (application \"shop\"): null where a string is required"
                ),
                "{e}"
            );
        }
        let e = err(r#"{"loaded": null}"#);
        assert_eq!(
            e.to_string(),
            "loaded: invalid type: null, expected a boolean (line 1, column 15)"
        );
        let e = err(r#"{"loaded": true, "applications": [{"name": "shop", "swarm": null}]}"#);
        assert_eq!(
            field_of(&e),
            ("applications[0].swarm", Some(0), Some("shop"), "swarm")
        );
        assert!(
            e.message().contains("null where a string is required"),
            "{e}"
        );
    }

    #[test]
    fn a_null_release_is_an_error_not_a_release_named_null() {
        let e = err("loaded: true\napplications:\n  - name: shop\n    swarm: ''\n    releases: [web, null]\n");
        assert_eq!(
            field_of(&e),
            (
                "applications[0].releases[1]",
                Some(0),
                Some("shop"),
                "releases[1]"
            )
        );
        let e = err("loaded: true\napplications:\n  - name: shop\n    swarm: ''\n    releases:\n      - ~\n");
        assert_eq!(field_of(&e).0, "applications[0].releases[0]");
        let e = err(
            r#"{"loaded": true, "applications": [{"name": "shop", "swarm": "", "releases": [null]}]}"#,
        );
        assert_eq!(field_of(&e).0, "applications[0].releases[0]");
        // A quoted "null" is a string.
        let text = "loaded: true\napplications:\n  - name: shop\n    swarm: 'null'\n    releases: [\"null\"]\n";
        let app = &parse(text).unwrap().applications[0];
        assert_eq!(app.swarm.as_str(), "null");
        assert_eq!(app.releases, Some(vec!["null".to_owned()]));
    }

    #[test]
    fn a_missing_swarm_is_an_error_naming_the_application() {
        let e = err("loaded: true\napplications:\n  - name: a\n    swarm: ''\n  - name: shop\n    releases: [web]\n");
        assert_eq!(
            field_of(&e),
            ("applications[1].swarm", Some(1), Some("shop"), "swarm")
        );
        assert!(e.message().contains("missing field `swarm`"), "{e}");
        let e = err(r#"{"loaded": true, "applications": [{"name": "shop"}]}"#);
        assert_eq!(
            field_of(&e),
            ("applications[0].swarm", Some(0), Some("shop"), "swarm")
        );
        // Named where the name only comes after the field that failed; by
        // index where there is no name.
        let e = err("loaded: true\napplications:\n  - {swarm: null, name: late}\n");
        assert_eq!(field_of(&e).2, Some("late"));
        let e = err("loaded: true\napplications:\n  - {swarm: x}\n");
        assert_eq!(
            field_of(&e),
            ("applications[0].name", Some(0), None, "name")
        );
        assert_eq!(e.place(), "applications[0].name");
        let e = err("applications: []\n");
        assert_eq!(field_of(&e), ("loaded", None, None, "loaded"));
        let e = err(r#"{"applications": []}"#);
        assert_eq!(field_of(&e), ("loaded", None, None, "loaded"));
    }

    #[test]
    fn schema_errors_name_the_field() {
        let e = err("loaded: true\napplications:\n  - name: shop\n    swarm: x\n    state: done\n");
        assert_eq!(field_of(&e).0, "applications[0].state");
        assert!(e.message().contains("done"), "{e}");
        let e =
            err("loaded: true\napplications:\n  - name: shop\n    swarm: x\n    releses: [web]\n");
        assert_eq!(field_of(&e).0, "applications[0].releses");
        assert!(e.message().contains("unknown field `releses`"), "{e}");
        let e = err(
            r#"{"loaded": true, "applications": [{"name": "shop", "swarm": "", "replicas": 3}]}"#,
        );
        assert_eq!(field_of(&e).0, "applications[0].replicas");
        // YAML 1.2 booleans only.
        assert_eq!(field_of(&err("loaded: yes\n")).0, "loaded");
        // A key given twice.
        let e = err("loaded: true\napplications:\n  - name: x\n    name: y\n    swarm: ''\n");
        assert_eq!(field_of(&e).0, "applications[0].name");
        let e = err(r#"{"loaded": true, "loaded": false}"#);
        assert_eq!(field_of(&e).0, "loaded");
        // Structs written as sequences of their fields are refused.
        err("[true, []]\n");
        err(r#"[true, [["a", "", null, "reconciled"]]]"#);
        let e = err(r#"{"loaded": true, "applications": [["a", "", null, "reconciled"]]}"#);
        assert_eq!(field_of(&e).0, "applications[0]");
        err("loaded: true\napplications:\n  - [a, '', [web], reconciled]\n");
        // An empty document.
        let e = err("");
        assert!(e.message().contains("empty"), "{e}");
        err("# nothing\n");
    }

    #[test]
    fn not_one_document_is_a_syntax_error() {
        for text in [
            "loaded: true\n---\nloaded: true\n",
            "{\"loaded\": true} {\"loaded\": true}",
            "{\"loaded\": true} x",
            "loaded: [\n",
            "loaded: true\n  applications: []\n",
        ] {
            let e = err(text);
            assert!(
                matches!(e, AppSetError::Syntax { .. } | AppSetError::Field { .. }),
                "{text:?}: {e:?}"
            );
        }
        assert!(matches!(
            err("loaded: true\n---\nloaded: true\n"),
            AppSetError::Syntax { line: 2, .. }
        ));
        assert_eq!(
            err("{\"loaded\": true} {\"loaded\": false}").to_string(),
            "line 1, column 18: trailing characters after the JSON document"
        );
        // What YAML reads after a JSON document is fine.
        assert!(parse("{\"loaded\": true}\n# the end\n").is_ok());
        // Tags: the standard ones are fine, an application's is refused.
        assert!(parse("loaded: !!bool true\napplications: [{name: !!str 1, swarm: ''}]\n").is_ok());
        err("loaded: true\napplications: [{name: a, swarm: !secret x}]\n");
    }

    #[test]
    fn validates_like_a_snapshot() {
        let e =
            err("loaded: true\napplications:\n  - {name: a, swarm: ''}\n  - {name: a, swarm: x}\n");
        assert!(
            matches!(&e, AppSetError::Invalid { source: SnapshotError::DuplicateApplication { name }, .. } if name == "a"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "applications: application \"a\" is listed twice"
        );
        let e = err("loaded: true\napplications:\n  - {name: '', swarm: ''}\n");
        assert_eq!(e.to_string(), "applications[0].name: must not be empty");
        let e = err("loaded: true\napplications:\n  - {name: a, swarm: '', releases: ['']}\n");
        assert_eq!(e.place(), "applications[0].releases[0]");
        for name in ["Shop", "a b", "-a", "a/b", "a:b"] {
            let text = format!("loaded: true\napplications:\n  - {{name: ok, swarm: ''}}\n  - {{name: '{name}', swarm: ''}}\n");
            let e = err(&text);
            assert!(
                matches!(
                    e,
                    AppSetError::Invalid {
                        source: SnapshotError::InvalidApplicationName { .. },
                        ..
                    }
                ),
                "{name}: {e:?}"
            );
            assert_eq!(e.place(), "applications[1].name", "{name}");
        }
    }

    #[test]
    fn errors_stay_on_one_line() {
        for text in [
            "loaded: true\n\"a\\nb\": 1\n",
            "loaded: true\napplications:\n  - name: \"x\\ny\"\n    swarm: ~\n",
            "{\"loaded\": true, \"a\\nb\": 1}",
            "{\"loaded\": true, \"applications\": [{\"name\": \"x\\ny\", \"swarm\": \"\", \"state\": \"a\\nb\"}]}",
            "loaded: true\napplications:\n  - {name: \"a\\nb\", swarm: ''}\n  - {name: \"a\\nb\", swarm: ''}\n",
        ] {
            err(text);
        }
    }

    /// One anchored list of 10 000 names, referenced 3 000 times: 164 KB
    /// that serde_yaml expanded to 30 million strings (3.2 GB, 93 s).
    #[test]
    fn an_alias_bomb_is_refused() {
        let names: Vec<String> = (0..10_000).map(|i| format!("r{i}")).collect();
        let mut text = format!(
            "loaded: true\napplications:\n  - name: a\n    swarm: ''\n    releases: &names [{}]\n",
            names.join(", ")
        );
        for i in 0..3_000 {
            text.push_str(&format!(
                "  - {{name: b{i}, swarm: '', releases: *names}}\n"
            ));
        }
        assert!(matches!(err(&text), AppSetError::Limit { .. }));

        // Billion laughs: each level doubles the one below.
        let mut text = String::from("a0: &a0 [x, x]\n");
        for i in 1..40 {
            text.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}]\n", p = i - 1));
        }
        let text = format!("loaded: true\napplications:\n  - name: a\n    swarm: ''\n    releases: &l [x]\nbomb:\n  {}", text.replace('\n', "\n  "));
        err(&text);
        let mut text = String::from(
            "loaded: true\napplications:\n  - {name: a, swarm: '', releases: &a0 [x, x]}\n",
        );
        for i in 1..40 {
            text.push_str(&format!(
                "  - {{name: a{i}, swarm: '', releases: &a{i} [*a{p}, *a{p}]}}\n",
                p = i - 1
            ));
        }
        // Refused as soon as a list stands where a release name should.
        err(&text);
    }

    /// 200 000 `[`: serde_yaml took 46 s to refuse it.
    #[test]
    fn deep_nesting_is_refused() {
        let deep = "[".repeat(200_000);
        assert!(matches!(err(&deep), AppSetError::Limit { .. }));
        for prefix in [
            "loaded: true\napplications: ",
            "loaded: true\napplications:\n  - name: a\n    swarm: ''\n    releases: ",
            "{\"loaded\": true, \"applications\": ",
            "{\"loaded\": true, \"applications\": [{\"name\": \"a\", \"swarm\": \"\", \"releases\": ",
            "{\"loaded\": true, \"x\": ",
        ] {
            err(&format!("{prefix}{deep}"));
            err(&format!("{prefix}{}", "{a: ".repeat(200_000)));
            err(&format!("{prefix}{}", "{\"a\": ".repeat(200_000)));
        }
        // Block nesting.
        let mut text =
            String::from("loaded: true\napplications:\n  - name: a\n    swarm: ''\n    x:\n");
        for depth in 0..1_000 {
            text.push_str(&" ".repeat(6 + 2 * depth));
            text.push_str("- \n");
        }
        err(&text);
        let mut text = String::from("loaded: true\nx:\n");
        for depth in 0..1_000 {
            text.push_str(&" ".repeat(2 + depth));
            text.push_str("y:\n");
        }
        err(&text);
    }

    #[test]
    fn budgets_can_be_tightened() {
        let mut limits = Limits::DEFAULT;
        limits.max_depth = 3;
        let e = parse_with_limits(YAML, limits).unwrap_err();
        assert!(matches!(e, AppSetError::Limit { .. }), "{e:?}");
        assert!(e.message().contains("nested deeper than 3"), "{e}");
        assert_eq!(parse_with_limits(YAML, Limits::default()), Ok(expected()));
    }
}
