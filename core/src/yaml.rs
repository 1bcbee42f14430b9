//! YAML of outside input, read under budgets: the one place that turns
//! [`Limits`] into the parser's options, and that says which of the
//! parser's errors is a breached budget.
//!
//! App sets, release records and the Compose manifests inside those records
//! all come from outside. Each kind of document chooses its own [`Limits`]
//! (a release's values nest deeper than an app set); how a budget reaches
//! the parser, and how its breach is told from a syntax error, is decided
//! here once, so that no reader can set a budget and leave its twin (the
//! anchors beside the aliases, the flow nesting beside the block nesting)
//! unbounded.

/// The parsing budgets. The defaults ([`Limits::DEFAULT`]) hold any
/// plausible app set (about a hundred thousand applications, aliases for
/// shared release lists) and refuse amplification in well under a second.
///
/// Other budgets start from the defaults and change fields:
///
/// ```
/// use sweep_core::app_set_doc::{parse_with_limits, AppSetError, Limits};
///
/// let mut limits = Limits::DEFAULT;
/// limits.max_depth = 3;
/// let deep = "{loaded: true, applications: [{name: a, swarm: '', releases: [x]}]}";
/// assert!(matches!(parse_with_limits(deep, limits), Err(AppSetError::Limit { .. })));
/// assert!(parse_with_limits(deep, Limits::DEFAULT).is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Nesting depth of mappings and sequences (an app set needs 4, a
    /// release's values may need many more), block and flow (`[[[...`)
    /// alike. JSON parsed as JSON nests at most 128.
    pub max_depth: usize,
    /// Parser events in the document as written (before aliases expand).
    pub max_events: usize,
    /// Mappings, sequences and scalars in the document as written.
    pub max_nodes: usize,
    /// Alias uses (`*name`), and separately anchors (`&name`).
    pub max_aliases: usize,
    /// Events that all alias uses together may replay, and that anchors
    /// may record: what stops an alias bomb, where a small document
    /// expands to a huge one.
    pub max_alias_replay: usize,
}

impl Limits {
    /// The default budgets, also [`Limits::default`].
    pub const DEFAULT: Limits = Limits {
        max_depth: 16,
        max_events: 2_000_000,
        max_nodes: 1_000_000,
        max_aliases: 10_000,
        max_alias_replay: 100_000,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// The parser's options for one document under `limits`: every budget set,
/// one document only, and errors without a source snippet (a message is
/// one line). Each reader adds its own reading rules (booleans, tags) on
/// top.
pub(crate) fn options(limits: Limits) -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: limits.max_depth,
            flow_nesting_limit: limits.max_depth,
            max_events: limits.max_events,
            max_nodes: limits.max_nodes,
            max_aliases: limits.max_aliases,
            max_anchors: limits.max_aliases,
            max_recorded_anchor_events: limits.max_alias_replay,
            max_documents: 1,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: limits.max_alias_replay,
            max_replay_stack_depth: limits.max_depth,
        },
        with_snippet: false,
    }
}

/// What budget of `limits` `error` breached, in words, or `None` when it
/// is not about a budget. A second document is not a budget here, though
/// the parser counts it as one: a reader calls it a syntax error.
pub(crate) fn breach(error: &serde_saphyr::Error, limits: Limits) -> Option<String> {
    use serde_saphyr::budget::BudgetBreach;
    use serde_saphyr::Error as E;

    match original(error) {
        E::Budget { breach, .. } => match breach {
            BudgetBreach::Documents { .. } => None,
            BudgetBreach::Depth { .. } => Some(nested(limits)),
            BudgetBreach::Aliases { .. } => {
                Some(format!("more than {} aliases", limits.max_aliases))
            }
            BudgetBreach::Anchors { .. } => {
                Some(format!("more than {} anchors", limits.max_aliases))
            }
            BudgetBreach::RecordedAnchorEvents { .. }
            | BudgetBreach::RecordedAnchorBytes { .. } => Some(amplified(limits)),
            BudgetBreach::Events { .. } => Some(format!(
                "too large: more than {} parser events",
                limits.max_events
            )),
            BudgetBreach::Nodes { .. } => {
                Some(format!("too large: more than {} nodes", limits.max_nodes))
            }
            other => Some(format!("over a parsing limit: {other:?}")),
        },
        E::AliasReplayLimitExceeded { .. }
        | E::AliasExpansionLimitExceeded { .. }
        | E::AliasReplayCounterOverflow { .. } => Some(amplified(limits)),
        E::AliasReplayStackDepthExceeded { .. } => Some(nested(limits)),
        E::ExternalMessage { source, .. } => match &**source {
            serde_saphyr::ExternalMessageSource::Parser(scan)
                if matches!(
                    scan.kind(),
                    serde_saphyr::granit_parser::ErrorKind::RecursionLimitExceeded
                ) =>
            {
                Some(nested(limits))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether `error` says the input holds more than one document.
pub(crate) fn is_second_document(error: &serde_saphyr::Error) -> bool {
    use serde_saphyr::budget::BudgetBreach;
    use serde_saphyr::Error as E;
    matches!(
        original(error),
        E::MultipleDocuments { .. }
            | E::Budget {
                breach: BudgetBreach::Documents { .. },
                ..
            }
    )
}

/// Errors about the document's shape rather than its syntax.
pub(crate) fn is_schema_error(error: &serde_saphyr::Error) -> bool {
    use serde_saphyr::Error as E;
    matches!(
        error,
        E::SerdeMissingField { .. }
            | E::SerdeUnknownField { .. }
            | E::SerdeInvalidType { .. }
            | E::SerdeInvalidValue { .. }
            | E::SerdeInvalidLength { .. }
            | E::SerdeUnknownVariant { .. }
            | E::NullIntoString { .. }
            | E::DuplicateMappingKey { .. }
            | E::InvalidScalar { .. }
            | E::InvalidBooleanStrict { .. }
            | E::Unexpected { .. }
            | E::Message { .. }
            | E::Eof { .. }
    )
}

fn nested(limits: Limits) -> String {
    format!("nested deeper than {} levels", limits.max_depth)
}

fn amplified(limits: Limits) -> String {
    format!(
        "aliases expand to more than {} events: alias amplification refused",
        limits.max_alias_replay
    )
}

/// Where the parser was: line and column from 1, `(0, 0)` when unknown.
pub(crate) fn line_column(error: &serde_saphyr::Error) -> (u32, u32) {
    error
        .location()
        .map(|l| (saturate(l.line()), saturate(l.column())))
        .unwrap_or((0, 0))
}

pub(crate) fn saturate<N: TryInto<u32>>(n: N) -> u32 {
    n.try_into().unwrap_or(u32::MAX)
}

/// The error itself, unwrapped from the snippet and alias wrappers.
pub(crate) fn original(mut error: &serde_saphyr::Error) -> &serde_saphyr::Error {
    loop {
        match error {
            serde_saphyr::Error::WithSnippet { error: inner, .. }
            | serde_saphyr::Error::AliasError { error: inner, .. } => error = inner,
            other => return other,
        }
    }
}

/// The error's text without its location, on one line.
pub(crate) fn message(error: &serde_saphyr::Error) -> String {
    use serde_saphyr::MessageFormatter;
    one_line(&serde_saphyr::DefaultMessageFormatter.format_message(error))
}

/// `text` with line breaks and other control characters escaped, so that
/// a key or value quoted in a message cannot split it into lines.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}
