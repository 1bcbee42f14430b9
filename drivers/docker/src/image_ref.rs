//! Docker image references (`[registry[:port]/]path[:tag][@digest]`), as
//! the distribution project's reference grammar defines them.
//!
//! The registry file's `agent_image` becomes part of a request to the
//! daemon (`GET /images/<image>/json`) and the image every node runs with
//! its docker socket: a value outside the grammar (`../../containers/x`)
//! would reach another endpoint, or run something nobody named. So it is
//! checked against the grammar when the file is loaded.

use thiserror::Error;

/// The longest name (registry and path) the grammar allows.
pub const MAX_NAME: usize = 255;
/// The longest tag the grammar allows.
pub const MAX_TAG: usize = 128;
/// The fewest and most hex digits of a digest (128 bits; SHA-512).
const DIGEST_HEX: std::ops::RangeInclusive<usize> = 32..=128;

/// Why a text is not an image reference; each variant names the part.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ImageRefError {
    /// Empty, or nothing before the tag or digest.
    #[error("is empty")]
    Empty,
    /// The registry and path together are longer than [`MAX_NAME`].
    #[error("the name is longer than {MAX_NAME} characters")]
    NameTooLong,
    /// A registry host that is not a host name, IP address or
    /// `[IPv6]`, or a port that is not a number.
    #[error("registry {0:?} is not a host[:port]")]
    Registry(String),
    /// A path component that is not lowercase letters and digits joined
    /// by `.`, `_`, `__` or dashes (`..` and empty components among them).
    #[error(
        "path component {0:?} is not lowercase letters and digits joined by '.', '_', '__' or '-'"
    )]
    PathComponent(String),
    /// A tag that is not a word character followed by up to 127 word
    /// characters, dots or dashes.
    #[error("tag {0:?} is not [A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}}")]
    Tag(String),
    /// A digest that is not `algorithm:hex` with 32 to 128 hex digits.
    #[error("digest {0:?} is not algorithm:hex (32 to 128 hex digits)")]
    Digest(String),
}

/// Checks `text` against the image reference grammar.
pub fn check_image_reference(text: &str) -> Result<(), ImageRefError> {
    let (rest, digest) = match text.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (text, None),
    };
    if let Some(digest) = digest {
        check_digest(digest)?;
    }
    // A colon after the last slash starts the tag; one before it is the
    // registry's port.
    let name_start = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[name_start..].rfind(':') {
        Some(colon) => (
            &rest[..name_start + colon],
            Some(&rest[name_start + colon + 1..]),
        ),
        None => (rest, None),
    };
    if let Some(tag) = tag {
        check_tag(tag)?;
    }
    check_name(name)
}

/// `[registry/]path`: the first component is a registry when it could not
/// be a path component (it has a `.` or `:`, is `localhost`, or has
/// capitals), as the docker CLI reads it.
fn check_name(name: &str) -> Result<(), ImageRefError> {
    if name.is_empty() {
        return Err(ImageRefError::Empty);
    }
    if name.len() > MAX_NAME {
        return Err(ImageRefError::NameTooLong);
    }
    let path = match name.split_once('/') {
        Some((first, rest)) if is_registry_like(first) => {
            check_registry(first)?;
            rest
        }
        _ => name,
    };
    path.split('/').try_for_each(check_path_component)
}

fn is_registry_like(first: &str) -> bool {
    first.contains(['.', ':', '['])
        || first == "localhost"
        || first.bytes().any(|b| b.is_ascii_uppercase())
}

/// `host[:port]`, the host a domain name, IPv4 address or `[IPv6]`.
fn check_registry(registry: &str) -> Result<(), ImageRefError> {
    let bad = || ImageRefError::Registry(registry.to_owned());
    let (host, port) = if let Some(v6) = registry.strip_prefix('[') {
        let (inside, after) = v6.split_once(']').ok_or_else(bad)?;
        let ok = !inside.is_empty() && inside.bytes().all(|b| b.is_ascii_hexdigit() || b == b':');
        if !ok {
            return Err(bad());
        }
        match after {
            "" => (None, None),
            _ => (None, Some(after.strip_prefix(':').ok_or_else(bad)?)),
        }
    } else {
        match registry.split_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(registry), None),
        }
    };
    if let Some(host) = host {
        if !host.split('.').all(is_domain_component) {
            return Err(bad());
        }
    }
    if let Some(port) = port {
        if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
    }
    Ok(())
}

/// `[a-zA-Z0-9]` or `[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]`.
fn is_domain_component(part: &str) -> bool {
    let bytes = part.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        }
        _ => false,
    }
}

/// `[a-z0-9]+` runs joined by one separator each: `.`, `_`, `__` or one or
/// more `-`.
fn check_path_component(part: &str) -> Result<(), ImageRefError> {
    let bad = || ImageRefError::PathComponent(part.to_owned());
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = part.as_bytes();
    if !bytes.first().is_some_and(|b| alnum(*b)) || !bytes.last().is_some_and(|b| alnum(*b)) {
        return Err(bad());
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let separator = &part[start..i];
        let ok = matches!(separator, "." | "_" | "__") || separator.bytes().all(|b| b == b'-');
        if !ok {
            return Err(bad());
        }
    }
    Ok(())
}

/// `[\w][\w.-]{0,127}`.
fn check_tag(tag: &str) -> Result<(), ImageRefError> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let ok = tag.len() <= MAX_TAG
        && tag.as_bytes().first().is_some_and(|b| word(*b))
        && tag.bytes().all(|b| word(b) || b == b'.' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(ImageRefError::Tag(tag.to_owned()))
    }
}

/// `algorithm:hex`, the algorithm `[A-Za-z][A-Za-z0-9]*` components joined
/// by `+`, `.`, `_` or `-`.
fn check_digest(digest: &str) -> Result<(), ImageRefError> {
    let bad = || ImageRefError::Digest(digest.to_owned());
    let (algorithm, hex) = digest.split_once(':').ok_or_else(bad)?;
    let component_ok = |c: &str| {
        c.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
            && c.bytes().all(|b| b.is_ascii_alphanumeric())
    };
    let algorithm_ok = algorithm.split(['+', '.', '_', '-']).all(component_ok);
    let hex_ok = DIGEST_HEX.contains(&hex.len()) && hex.bytes().all(|b| b.is_ascii_hexdigit());
    if algorithm_ok && hex_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn references_of_the_grammar_are_accepted() {
        let with_digest = format!("swarm-sweep@{DIGEST}");
        let everything = format!("registry.example.com:5000/team/swarm-sweep:0.1.0@{DIGEST}");
        for good in [
            "swarm-sweep",
            "swarm-sweep:0.1.0",
            "library/ubuntu:22.04",
            "registry.example.com/swarm-sweep:0.1.0",
            "localhost/a",
            "localhost:5000/a/b/c:latest",
            "127.0.0.1:5000/a",
            "[::1]:5000/a",
            "Registry/a",
            "a__b/c_d/e.f/g--h---i:_Tag-1.x",
            "0/1",
            with_digest.as_str(),
            everything.as_str(),
        ] {
            assert_eq!(check_image_reference(good), Ok(()), "{good}");
        }
        let longest_tag = format!("a:{}", "t".repeat(MAX_TAG));
        assert_eq!(check_image_reference(&longest_tag), Ok(()));
        let longest_name = "a".repeat(MAX_NAME);
        assert_eq!(check_image_reference(&longest_name), Ok(()));
    }

    #[test]
    fn a_path_that_climbs_or_leaves_the_grammar_is_refused() {
        // A first component with a dot reads as a registry, as the docker
        // CLI reads it, and is no host name either.
        for (bad, registry) in [("../../containers/x", ".."), ("./a", ".")] {
            assert_eq!(
                check_image_reference(bad),
                Err(ImageRefError::Registry(registry.into())),
                "{bad:?}"
            );
        }
        for (bad, part) in [
            ("a/../b", ".."),
            ("a/./b", "."),
            ("a//b", ""),
            ("a/", ""),
            ("/a", ""),
            ("UPPER", "UPPER"),
            ("a/Upper", "Upper"),
            ("a..b", "a..b"),
            ("a___b", "a___b"),
            ("a-", "a-"),
            ("-a", "-a"),
            ("a.-b", "a.-b"),
            ("a%2fb", "a%2fb"),
            ("a?x=1", "a?x=1"),
            ("a#b", "a#b"),
            ("a b", "a b"),
            ("a\nb", "a\nb"),
        ] {
            assert_eq!(
                check_image_reference(bad),
                Err(ImageRefError::PathComponent(part.into())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn registries_tags_and_digests_outside_the_grammar_are_refused() {
        assert_eq!(check_image_reference(""), Err(ImageRefError::Empty));
        assert_eq!(check_image_reference(":1"), Err(ImageRefError::Empty));
        assert_eq!(
            check_image_reference(&"a".repeat(MAX_NAME + 1)),
            Err(ImageRefError::NameTooLong)
        );
        for (bad, registry) in [
            ("host:port/a", "host:port"),
            ("host:123456/a", "host:123456"),
            ("-host.io/a", "-host.io"),
            ("host..io/a", "host..io"),
            ("[zz]/a", "[zz]"),
            ("[::1/a", "[::1"),
            ("ho_st.io/a", "ho_st.io"),
        ] {
            assert_eq!(
                check_image_reference(bad),
                Err(ImageRefError::Registry(registry.into())),
                "{bad}"
            );
        }
        for (bad, tag) in [("a:", ""), ("a:-x", "-x"), ("a:.x", ".x"), ("a:x?y", "x?y")] {
            assert_eq!(
                check_image_reference(bad),
                Err(ImageRefError::Tag(tag.into())),
                "{bad}"
            );
        }
        let long_tag = format!("a:{}", "t".repeat(MAX_TAG + 1));
        assert!(matches!(
            check_image_reference(&long_tag),
            Err(ImageRefError::Tag(_))
        ));
        for bad in [
            "a@sha256:abc",
            "a@sha256",
            "a@:0123456789abcdef0123456789abcdef",
            "a@1sha:0123456789abcdef0123456789abcdef",
            "a@sha256:0123456789abcdef0123456789abcdeg",
            "a@sha256:0123456789abcdef0123456789abcdef@x",
        ] {
            assert!(
                matches!(check_image_reference(bad), Err(ImageRefError::Digest(_))),
                "{bad}"
            );
        }
    }
}
