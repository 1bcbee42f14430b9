//! Durations as an operator writes them: `30s`, `2m`, `1h`, `500ms`,
//! `1m 30s`, or a bare number of seconds (`15`, `2.5`).
//!
//! One parser for every flag and every field that takes a duration, so
//! `--timeout 30s` and `timeout = "30s"` in the registry file cannot mean
//! different things. Zero, negative and unparsable values are refused, never
//! turned into a default: a zero timeout would fail every call, and a
//! guessed value would hide the operator's mistake.

use std::time::Duration;

use thiserror::Error;

/// Why a duration was refused. The caller names the flag or field; the
/// message says what is wrong with the value. `text` is the value as
/// written, trimmed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DurationError {
    /// Nothing but whitespace.
    #[error("empty; write a duration such as 30s, 2m, 1h or 500ms (a bare number is seconds)")]
    Empty,
    /// Not a duration, or one too large to hold.
    #[error("{text:?} is not a duration ({reason}); write one such as 30s, 2m, 1h or 500ms (a bare number is seconds)")]
    Invalid {
        /// The value.
        text: String,
        /// What the parser found wrong.
        reason: String,
    },
    /// Negative.
    #[error("{text:?} is negative; a duration must be more than zero")]
    Negative {
        /// The value.
        text: String,
    },
    /// Zero: a zero timeout would fail every call.
    #[error("{text:?} is zero; a duration must be more than zero")]
    Zero {
        /// The value.
        text: String,
    },
    /// Below the minimum of [`parse_within`].
    #[error("{text:?} is less than the minimum of {}", show(*.min))]
    TooShort {
        /// The value.
        text: String,
        /// The minimum.
        min: Duration,
    },
    /// Above the maximum of [`parse_within`].
    #[error("{text:?} is more than the maximum of {}", show(*.max))]
    TooLong {
        /// The value.
        text: String,
        /// The maximum.
        max: Duration,
    },
}

/// Parses a positive duration: a number with units (`30s`, `2m`, `1h`,
/// `500ms`, `1h 30m`), or a bare number, taken as seconds.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(DurationError::Empty);
    }
    if trimmed.starts_with('-') {
        return Err(DurationError::Negative {
            text: trimmed.to_owned(),
        });
    }
    let parsed = if is_bare_number(trimmed) {
        // Bare seconds, as the flags took them before units: `2.5` is
        // 2.5 s. Only digits and one point, so `inf`, `nan` and `1e9`
        // never get here.
        trimmed
            .parse::<f64>()
            .ok()
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
            .ok_or_else(|| DurationError::Invalid {
                text: trimmed.to_owned(),
                reason: "too large".into(),
            })?
    } else {
        humantime::parse_duration(trimmed).map_err(|e| DurationError::Invalid {
            text: trimmed.to_owned(),
            reason: e.to_string(),
        })?
    };
    if parsed.is_zero() {
        return Err(DurationError::Zero {
            text: trimmed.to_owned(),
        });
    }
    Ok(parsed)
}

/// [`parse`], then checks `min <= value <= max`. Out of range is refused,
/// never clamped: the operator would otherwise run with a limit nobody
/// wrote down.
pub fn parse_within(text: &str, min: Duration, max: Duration) -> Result<Duration, DurationError> {
    let value = parse(text)?;
    if value < min {
        return Err(DurationError::TooShort {
            text: text.trim().to_owned(),
            min,
        });
    }
    if value > max {
        return Err(DurationError::TooLong {
            text: text.trim().to_owned(),
            max,
        });
    }
    Ok(value)
}

/// A duration as this module parses it back (`30s`, `2m 30s`, `500ms`).
pub fn show(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

fn is_bare_number(text: &str) -> bool {
    let mut points = 0;
    let mut digits = 0;
    for c in text.chars() {
        match c {
            '0'..='9' => digits += 1,
            '.' => points += 1,
            _ => return false,
        }
    }
    digits > 0 && points <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_bare_seconds() {
        assert_eq!(parse("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("1m 30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("15"), Ok(Duration::from_secs(15)));
        assert_eq!(parse(" 2.5 "), Ok(Duration::from_millis(2500)));
        assert_eq!(parse("0.5"), Ok(Duration::from_millis(500)));
    }

    #[test]
    fn zero_negative_and_garbage_are_refused() {
        for zero in ["0", "0s", "0.0", "0ms"] {
            assert!(
                matches!(parse(zero), Err(DurationError::Zero { .. })),
                "{zero}"
            );
        }
        for negative in ["-1", "-5s", "-0.5"] {
            assert!(
                matches!(parse(negative), Err(DurationError::Negative { .. })),
                "{negative}"
            );
        }
        for garbage in [
            "abc",
            "1x",
            "inf",
            "nan",
            "1e3",
            "1..2",
            ".",
            "s",
            "30 seconds ago",
        ] {
            assert!(
                matches!(parse(garbage), Err(DurationError::Invalid { .. })),
                "{garbage}: {:?}",
                parse(garbage)
            );
        }
        assert_eq!(parse("  "), Err(DurationError::Empty));
        assert!(parse("99999999999999999999999").is_err());
        assert!(parse("99999999999999999999999h").is_err());
    }

    #[test]
    fn bounds_are_refused_not_clamped() {
        let (min, max) = (Duration::from_secs(1), Duration::from_secs(3600));
        assert_eq!(parse_within("1s", min, max), Ok(min));
        assert_eq!(parse_within("1h", min, max), Ok(max));
        let short = parse_within("500ms", min, max).unwrap_err();
        assert_eq!(
            short.to_string(),
            "\"500ms\" is less than the minimum of 1s"
        );
        let long = parse_within("61m", min, max).unwrap_err();
        assert_eq!(long.to_string(), "\"61m\" is more than the maximum of 1h");
    }
}
