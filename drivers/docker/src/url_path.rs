//! Names and ids as parts of a daemon request's path.
//!
//! bollard puts the name or id it is given into the request's path as it
//! is, so a `/`, `?`, `#`, `%` or a `..` segment in one would reach another
//! endpoint (`../../containers/x` turns `GET /images/<name>/json` into
//! `GET /containers/x/json`) or add a query. Every name and id from data is
//! therefore passed through [`segment`] (or [`image`]) on its way there.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` as exactly one path segment: every byte but letters, digits and
/// `-._~:@` (which the docker CLI sends as they are) percent-encoded, and
/// a segment of `.` or `..` written as `%2E`s, so that it cannot climb.
pub(crate) fn segment(text: &str) -> Cow<'_, str> {
    let plain =
        |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b':' | b'@');
    let dots = matches!(text, "." | "..");
    if !dots && text.bytes().all(plain) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if plain(byte) && !dots {
            out.push(char::from(byte));
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "%{byte:02X}");
        }
    }
    Cow::Owned(out)
}

/// An image reference as the path part of `/images/<name>/json`: its
/// `/`-separated components each a [`segment`], since the daemon reads a
/// name with slashes there as the docker CLI sends it.
pub(crate) fn image(reference: &str) -> String {
    reference
        .split('/')
        .map(segment)
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path segments of `/images/<part>/json` once a client's URI
    /// parser has read it.
    fn segments_of(part: &str) -> Vec<String> {
        let uri: http::Uri = format!("/images/{part}/json").parse().unwrap();
        assert_eq!(uri.query(), None, "{part:?} added a query");
        uri.path().split('/').skip(1).map(str::to_owned).collect()
    }

    #[test]
    fn names_of_the_grammar_pass_as_they_are() {
        for name in [
            "abc123",
            "app_data",
            "v-1.2",
            "swarm-sweep:0.1.0",
            "a@sha256:ff",
        ] {
            assert_eq!(segment(name), name);
        }
        assert_eq!(
            image("registry.example.com:5000/team/app:1.0"),
            "registry.example.com:5000/team/app:1.0"
        );
    }

    #[test]
    fn an_encoded_segment_cannot_change_the_path() {
        for hostile in [
            "../../containers/x",
            "..",
            ".",
            "a/b",
            "x?force=1",
            "x#y",
            "%2e%2e",
            "a b",
            "\u{e9}\n",
        ] {
            let encoded = segment(hostile);
            assert_eq!(
                segments_of(&encoded),
                ["images", encoded.as_ref(), "json"],
                "{hostile:?}"
            );
            assert!(!matches!(encoded.as_ref(), "." | ".."));
        }
        assert_eq!(segment("../../containers/x"), "..%2F..%2Fcontainers%2Fx");
        assert_eq!(segment(".."), "%2E%2E");
        assert_eq!(segment("x?force=1"), "x%3Fforce%3D1");
        assert_eq!(segment("%2e"), "%252e");
    }

    #[test]
    fn an_image_keeps_its_slashes_and_encodes_the_rest() {
        assert_eq!(image("../../containers/x"), "%2E%2E/%2E%2E/containers/x");
        assert_eq!(image("a/b?x=1#f"), "a/b%3Fx%3D1%23f");
    }
}
