//! A webhook URL: parsed once, and shown only masked.
//!
//! A webhook URL is a credential (Slack's carries its token in the path,
//! others a `?token=`): anyone who reads it can post as the controller. So
//! the parsed URL never shows more than its scheme, host and port, with
//! the rest masked, in `Display` and `Debug` alike, and every error about
//! one says where it came from rather than what it is.

use std::fmt;

use hyper::Uri;
use thiserror::Error;

/// http or https.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

/// A webhook to post to.
#[derive(Clone, PartialEq, Eq)]
pub struct Target {
    pub scheme: Scheme,
    /// The host, as the URL names it (no brackets around an IPv6 address).
    pub host: String,
    pub port: u16,
    /// Path and query: the secret part.
    path_and_query: String,
    /// The URL as given, for the `Host` header and the request line.
    uri: Uri,
}

/// Why a URL cannot be a webhook; `from` says where it was given.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TargetError {
    #[error("{from}: not a URL")]
    NotAUrl { from: String },
    #[error("{from}: only http:// and https:// URLs can be posted to")]
    Scheme { from: String },
    #[error("{from}: the URL has no host")]
    NoHost { from: String },
    #[error("{from}: a user name or password in the URL is not supported; put the credential in the path or the query")]
    UserInfo { from: String },
}

impl Target {
    /// Parses `text`, from `from` (`--notify`, `SWARM_SWEEP_NOTIFY`, a
    /// file's line), which every error names instead of the URL.
    pub fn parse(text: &str, from: &str) -> Result<Target, TargetError> {
        let from = from.to_owned();
        let text = text.trim();
        let uri: Uri = text
            .parse()
            .map_err(|_| TargetError::NotAUrl { from: from.clone() })?;
        let scheme = match uri.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("http") => Scheme::Http,
            Some(s) if s.eq_ignore_ascii_case("https") => Scheme::Https,
            Some(_) => return Err(TargetError::Scheme { from }),
            None => return Err(TargetError::NotAUrl { from }),
        };
        let Some(authority) = uri.authority() else {
            return Err(TargetError::NoHost { from });
        };
        if authority.as_str().contains('@') {
            return Err(TargetError::UserInfo { from });
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        if host.is_empty() {
            return Err(TargetError::NoHost { from });
        }
        // After the host, only `:PORT`, a number.
        let rest = authority
            .as_str()
            .strip_prefix(authority.host())
            .unwrap_or("?");
        let port_ok = match rest.strip_prefix(':') {
            None => rest.is_empty(),
            Some(p) => p.parse::<u16>().is_ok(),
        };
        if !port_ok {
            return Err(TargetError::NotAUrl { from });
        }
        let port = authority.port_u16().unwrap_or(match scheme {
            Scheme::Http => 80,
            Scheme::Https => 443,
        });
        let path_and_query = uri
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
        Ok(Target {
            scheme,
            host,
            port,
            path_and_query,
            uri,
        })
    }

    /// What the request line asks for (the secret part).
    pub fn path_and_query(&self) -> &str {
        &self.path_and_query
    }

    /// The `Host` header: the authority as the URL gives it.
    pub fn host_header(&self) -> String {
        self.uri
            .authority()
            .map_or_else(|| self.host.clone(), |a| a.as_str().to_owned())
    }
}

impl fmt::Display for Target {
    /// `https://hooks.example.com/***`: the scheme, the host (and a port
    /// that is not the scheme's), and nothing of the path or query.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (scheme, default) = match self.scheme {
            Scheme::Http => ("http", 80),
            Scheme::Https => ("https", 443),
        };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let host = sweep_core::escape::escape(&host);
        let masked = if self.path_and_query == "/" {
            ""
        } else {
            "***"
        };
        if self.port == default {
            write!(f, "{scheme}://{host}/{masked}")
        } else {
            write!(f, "{scheme}://{host}:{}/{masked}", self.port)
        }
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Target({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "T000/B000/XXXXsecretXXXX";

    #[test]
    fn a_target_shows_scheme_and_host_and_masks_the_rest() {
        let url = format!("https://hooks.example.com/services/{SECRET}?token=abc");
        let t = Target::parse(&url, "--notify").unwrap();
        assert_eq!(t.scheme, Scheme::Https);
        assert_eq!((t.host.as_str(), t.port), ("hooks.example.com", 443));
        assert_eq!(t.to_string(), "https://hooks.example.com/***");
        assert!(!format!("{t:?}").contains("secret"));
        assert!(!format!("{t:?}").contains("token"));
        assert_eq!(t.path_and_query(), format!("/services/{SECRET}?token=abc"));
        let t = Target::parse("http://127.0.0.1:8080/hook", "x").unwrap();
        assert_eq!(t.to_string(), "http://127.0.0.1:8080/***");
        assert_eq!(t.host_header(), "127.0.0.1:8080");
        let t = Target::parse("http://[::1]:81", "x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 81));
        assert_eq!(t.to_string(), "http://[::1]:81/");
    }

    #[test]
    fn errors_name_where_the_url_came_from_never_the_url() {
        for (bad, want) in [
            (format!("ftp://h/{SECRET}"), "Scheme"),
            (format!("/{SECRET}"), "NotAUrl"),
            (format!("not a url {SECRET}"), "NotAUrl"),
            ("https://user:pass-secret@h/x".to_owned(), "UserInfo"),
            (format!("https://user:{SECRET}@h/x"), "NotAUrl"),
        ] {
            let e = Target::parse(&bad, "--notify-file hooks line 2").unwrap_err();
            let shown = format!("{e} {e:?}");
            assert!(!shown.contains("secret"), "{shown}");
            assert!(shown.contains("hooks line 2"), "{shown}");
            assert!(format!("{e:?}").starts_with(want), "{e:?}");
        }
    }
}
