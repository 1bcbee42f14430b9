//! Webhook URLs: parsed from what an operator gives (`--notify URL`,
//! `SWARM_SWEEP_NOTIFY`, a file of them), and shown only masked.
//!
//! A webhook URL is a credential (Slack's carries its token in the path,
//! others a `?token=`): whoever reads it can post as the controller. So a
//! parsed [`Webhook`] shows its scheme, host and port and nothing of the
//! rest, in `Display` and `Debug` alike, and every [`WebhookError`] says
//! where the URL came from rather than what it is.
//!
//! Only what a request can carry as it is, is taken: `http` or `https`, a
//! host name or an IP address (IPv6 in brackets), a numeric port, and a
//! path and query of the characters RFC 3986 allows (anything else
//! percent-encoded). No `user:password@`: a credential there would be sent
//! as nothing at all. A `#fragment` is never sent, so it is dropped.

use std::fmt;

use thiserror::Error;

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WebhookScheme {
    /// Plain HTTP.
    Http,
    /// HTTP over TLS.
    Https,
}

impl WebhookScheme {
    /// `http` or `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookScheme::Http => "http",
            WebhookScheme::Https => "https",
        }
    }

    /// The port a URL without one means.
    pub fn default_port(self) -> u16 {
        match self {
            WebhookScheme::Http => 80,
            WebhookScheme::Https => 443,
        }
    }
}

/// A webhook to post to.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Webhook {
    scheme: WebhookScheme,
    /// Without the brackets of an IPv6 address.
    host: String,
    port: u16,
    /// Path and query, starting with `/`: the secret part.
    path_and_query: String,
}

/// Why a URL cannot be a webhook; `from` says where it was given, and
/// nothing of the URL is shown.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// Not a URL this tool can post to.
    #[error("{from}: not a URL (expected http://HOST[:PORT]/PATH or https://...)")]
    NotAUrl {
        /// Where it was given.
        from: String,
    },
    /// Another scheme than `http` or `https`.
    #[error("{from}: only http:// and https:// URLs can be posted to")]
    Scheme {
        /// Where it was given.
        from: String,
    },
    /// No host after the scheme.
    #[error("{from}: the URL has no host")]
    NoHost {
        /// Where it was given.
        from: String,
    },
    /// A `user:password@` before the host.
    #[error("{from}: a user name or password in the URL is not supported; put the credential in the path or the query")]
    UserInfo {
        /// Where it was given.
        from: String,
    },
}

/// How the URLs of one text are separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOf {
    /// Whitespace (spaces, tabs, line breaks): an environment variable.
    Words,
    /// One per line; blank lines and lines starting with `#` skipped: a
    /// file.
    Lines,
}

impl Webhook {
    /// Parses `text`, given at `from` (`--notify #1`, a file's line),
    /// which every error names instead of the URL.
    pub fn parse(text: &str, from: &str) -> Result<Webhook, WebhookError> {
        let not_a_url = || WebhookError::NotAUrl {
            from: from.to_owned(),
        };
        let text = text.trim();
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(not_a_url());
        };
        let scheme = if scheme.eq_ignore_ascii_case("http") {
            WebhookScheme::Http
        } else if scheme.eq_ignore_ascii_case("https") {
            WebhookScheme::Https
        } else if !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Err(WebhookError::Scheme {
                from: from.to_owned(),
            });
        } else {
            return Err(not_a_url());
        };
        // A fragment stays with whoever reads the URL: it is never sent.
        let rest = rest.split('#').next().unwrap_or_default();
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(split);
        if authority.contains('@') {
            return Err(WebhookError::UserInfo {
                from: from.to_owned(),
            });
        }
        let (host, port) = host_and_port(authority).ok_or_else(not_a_url)?;
        if host.is_empty() {
            return Err(WebhookError::NoHost {
                from: from.to_owned(),
            });
        }
        let port = match port {
            None => scheme.default_port(),
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(not_a_url)?,
        };
        if !path.chars().all(is_uri_char) {
            return Err(not_a_url());
        }
        let path_and_query = match path.chars().next() {
            None => "/".to_owned(),
            Some('?') => format!("/{path}"),
            Some(_) => path.to_owned(),
        };
        Ok(Webhook {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
            path_and_query,
        })
    }

    /// Every webhook of `text`, each once, in the order given; `from`
    /// names the text (`SWARM_SWEEP_NOTIFY`, a file), and each error adds
    /// which URL (`#2`) or line (`line 3`) of it.
    pub fn parse_list(text: &str, from: &str, of: ListOf) -> Result<Vec<Webhook>, WebhookError> {
        let mut hooks: Vec<Webhook> = Vec::new();
        let mut add = |hook: Webhook| {
            if !hooks.contains(&hook) {
                hooks.push(hook);
            }
        };
        match of {
            ListOf::Words => {
                for (i, word) in text.split_whitespace().enumerate() {
                    add(Webhook::parse(word, &format!("{from} #{}", i + 1))?);
                }
            }
            ListOf::Lines => {
                for (i, line) in text.lines().enumerate() {
                    let line = line.trim();
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    add(Webhook::parse(line, &format!("{from} line {}", i + 1))?);
                }
            }
        }
        Ok(hooks)
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> WebhookScheme {
        self.scheme
    }

    /// The host, lowercase, without the brackets of an IPv6 address.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, the scheme's default where the URL names none.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// What the request line asks for: the secret part.
    pub fn path_and_query(&self) -> &str {
        &self.path_and_query
    }

    /// The `Host` header: the host (bracketed if IPv6), and the port when
    /// it is not the scheme's.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == self.scheme.default_port() {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// The host and the text of the port, if any, of an authority; `None`
/// when it is not one.
fn host_and_port(authority: &str) -> Option<(&str, Option<&str>)> {
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let (host, after) = inner.split_once(']')?;
        if host.is_empty()
            || !host
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return None;
        }
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        let (host, port) = match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
        {
            return None;
        }
        (host, port)
    };
    Some((host, port))
}

/// A character a request target carries as it is (RFC 3986: unreserved,
/// sub-delims, `:`, `@`, `/`, `?`, and `%` of a percent-encoding).
fn is_uri_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/?%".contains(c)
}

/// `text` with the path and query of every `http://` or `https://` URL in
/// it masked as a webhook is shown (`https://hooks.example.com/***`), for
/// text that may quote one where no webhook was expected: a URL given to
/// the wrong flag, or a second one after `--notify`.
pub fn mask_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_scheme(rest) {
        let (before, url) = rest.split_at(at);
        out.push_str(before);
        let scheme_end = url.find("://").map_or(url.len(), |i| i + 3);
        let tail = &url[scheme_end..];
        let authority = tail.find(|c: char| c == '/' || c == '?' || c == '#' || !is_uri_char(c));
        let (host, after) = tail.split_at(authority.unwrap_or(tail.len()));
        out.push_str(&url[..scheme_end]);
        out.push_str(host);
        // The path and query run to the first character no URL holds, or
        // a quote, which quotes the URL far more often than it is in one.
        let end = after
            .find(|c: char| !(is_uri_char(c) || c == '#') || c == '\'')
            .unwrap_or(after.len());
        if end > 0 {
            out.push_str("/***");
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Where the next `http://` or `https://` starts in `text`, any case.
fn find_scheme(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    ["http://", "https://"]
        .iter()
        .filter_map(|s| lower.find(s))
        .min()
}

impl fmt::Display for Webhook {
    /// `https://hooks.example.com/***`: the scheme, the host (and a port
    /// that is not the scheme's), and nothing of the path or query.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let masked = if self.path_and_query == "/" {
            ""
        } else {
            "***"
        };
        write!(
            f,
            "{}://{}/{masked}",
            self.scheme.as_str(),
            self.host_header()
        )
    }
}

impl fmt::Debug for Webhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Webhook({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The secret part of a webhook URL as Slack writes it, with "secret"
    // in its token so that the checks below can look for that word.
    const SECRET: &str = "T04PQ7KJD/B05RZ2M8N/secret8vTn3Wd1LsY6hKe9Zb";

    #[test]
    fn urls_in_any_text_are_masked_as_webhooks_are() {
        assert_eq!(
            mask_urls(&format!(
                "unexpected argument 'https://hooks.slack.com/services/{SECRET}' found"
            )),
            "unexpected argument 'https://hooks.slack.com/***' found"
        );
        assert_eq!(
            mask_urls("cannot read HTTP://h.example:8443/a?token=secret: no such file"),
            "cannot read HTTP://h.example:8443/*** no such file"
        );
        assert_eq!(
            mask_urls("http://h.example and more"),
            "http://h.example and more"
        );
        assert_eq!(mask_urls("no url here"), "no url here");
        let two = mask_urls("https://a.example/secret1 https://b.example/secret2");
        assert!(!two.contains("secret"), "{two}");
        // Never panics on what it cannot read as a URL.
        for text in [
            "https://",
            "http:///",
            "https://\u{e9}/x",
            "xhttps://y/z\u{1f600}",
        ] {
            let _ = mask_urls(text);
        }
    }

    #[test]
    fn a_webhook_shows_scheme_and_host_and_masks_the_rest() {
        let url = format!("HTTPS://Hooks.Example.com/services/{SECRET}?token=abc#frag");
        let w = Webhook::parse(&url, "--notify").unwrap();
        assert_eq!(w.scheme(), WebhookScheme::Https);
        assert_eq!((w.host(), w.port()), ("hooks.example.com", 443));
        assert_eq!(w.to_string(), "https://hooks.example.com/***");
        assert!(!format!("{w:?}").contains("secret"));
        assert!(!format!("{w:?}").contains("token"));
        assert_eq!(w.path_and_query(), format!("/services/{SECRET}?token=abc"));
        let w = Webhook::parse("http://127.0.0.1:8080/hook", "x").unwrap();
        assert_eq!(w.to_string(), "http://127.0.0.1:8080/***");
        assert_eq!(w.host_header(), "127.0.0.1:8080");
        let w = Webhook::parse("http://[::1]:81", "x").unwrap();
        assert_eq!((w.host(), w.port()), ("::1", 81));
        assert_eq!(w.to_string(), "http://[::1]:81/");
        let w = Webhook::parse("http://h?k=v", "x").unwrap();
        assert_eq!(w.path_and_query(), "/?k=v");
    }

    #[test]
    fn errors_name_where_the_url_came_from_never_the_url() {
        for (bad, want) in [
            (format!("ftp://h/{SECRET}"), "Scheme"),
            (format!("/{SECRET}"), "NotAUrl"),
            (format!("not a url {SECRET}"), "NotAUrl"),
            ("https://user:pass-secret@h/x".to_owned(), "UserInfo"),
            (format!("https://user:{SECRET}@h/x"), "NotAUrl"),
            ("https://h:99999/secret".to_owned(), "NotAUrl"),
            ("https://h:0/secret".to_owned(), "NotAUrl"),
            ("https://h/secret path".to_owned(), "NotAUrl"),
            ("https://h/secret\u{e9}".to_owned(), "NotAUrl"),
            ("https://h\u{1b}x/secret".to_owned(), "NotAUrl"),
            ("https:///secret".to_owned(), "NoHost"),
            ("https://[zz]/secret".to_owned(), "NotAUrl"),
        ] {
            let e = Webhook::parse(&bad, "--notify-file hooks line 2").unwrap_err();
            let shown = format!("{e} {e:?}");
            assert!(!shown.contains("secret"), "{shown}");
            assert!(shown.contains("hooks line 2"), "{shown}");
            assert!(format!("{e:?}").starts_with(want), "{bad}: {e:?}");
        }
    }

    #[test]
    fn lists_are_read_by_words_or_by_lines_each_url_once() {
        let words = "https://a.example/1  http://b.example/2\nhttps://a.example/1";
        let hooks = Webhook::parse_list(words, "SWARM_SWEEP_NOTIFY", ListOf::Words).unwrap();
        assert_eq!(hooks.len(), 2);
        let lines = "# ours\n\n  https://a.example/1\nftp://c/secret\n";
        let e = Webhook::parse_list(lines, "hooks", ListOf::Lines).unwrap_err();
        assert_eq!(
            e.to_string(),
            "hooks line 4: only http:// and https:// URLs can be posted to"
        );
        let e = Webhook::parse_list("https://a.example/1 nope-secret", "ENV", ListOf::Words)
            .unwrap_err();
        assert!(e.to_string().starts_with("ENV #2: "), "{e}");
    }
}
