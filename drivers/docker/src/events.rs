//! One daemon's container events, for the sweep to try again what a stack's
//! container held (a volume, a network) the moment that container goes.
//!
//! The subscription is `GET /events`, filtered by the daemon to containers
//! carrying a stack namespace label that `die` (a task stopped: the
//! stack's networks may let go) or are `destroy`ed (removed: only now are
//! the volumes it mounted free). Everything in an event is as hostile as
//! any other reply, the label value most of all (anyone may set it), so:
//!
//! - the reply is read as raw lines, each bounded ([`MAX_EVENT`]): a longer
//!   line is dropped as it comes in, never buffered, and a line that does
//!   not parse is skipped; neither ends the subscription. (bollard's own
//!   `events()` buffers a line without bound, parses the whole buffer again
//!   on every read, and ends at the first event it cannot decode.)
//! - the reply goes through the daemon's bounded transport like any other:
//!   past [`crate::REPLY_LIMIT`] bytes in all, the subscription is opened
//!   again, a few times at most ([`MAX_RENEWALS`]); an event lost in between
//!   only costs the sweep its retry interval;
//! - the per-call timeout is not applied: it bounds ordinary calls, and a
//!   subscription that waits minutes between events is working. Only the
//!   reply's headers are bounded in time (by the client's backstop);
//! - an event without a usable namespace (missing, empty, absurdly long)
//!   is skipped. Whatever is skipped is logged at debug level.

use std::collections::{HashMap, VecDeque};

use bollard::errors::Error as DockerError;
use bollard::{BollardRequest, Docker};
use futures::stream::{self, BoxStream, StreamExt};
use hyper::body::Bytes;
use serde::Deserialize;
use sweep_swarms::{BackendError, ContainerEvents, ContainerGone};

use crate::labels::STACK_NAMESPACE;
use crate::transport::reply_limit_of;

/// The container actions that may free what a stack held: a task's
/// container dies when it stops (its networks may let go) and is destroyed
/// when the swarm agent removes it (the volumes it mounted are free only
/// then). `stop` and `kill` come before `die` and add nothing.
pub(crate) const ACTIONS: [&str; 2] = ["die", "destroy"];

/// The longest event line read: 64 KiB. A task container's event carries
/// its labels and a few attributes, a few KiB at most.
pub(crate) const MAX_EVENT: usize = 64 * 1024;

/// The longest namespace passed on. A stack's services are named
/// `<namespace>_<service>` within the engine's 63 characters, so no stack
/// that has containers comes near this; a longer value is not a stack's.
const MAX_NAMESPACE: usize = 255;

/// How often one subscription is opened again after its reply ran into the
/// transport's bound. Bounded, so that a daemon streaming garbage costs a
/// few requests, not a loop.
const MAX_RENEWALS: u32 = 8;

/// The daemon-side filters of the subscription (see the module docs), as
/// the `filters` query parameter's JSON.
pub(crate) fn filters() -> String {
    let filters = HashMap::from([
        ("type", vec!["container"]),
        ("event", ACTIONS.to_vec()),
        ("label", vec![STACK_NAMESPACE]),
    ]);
    // A map of string lists: serializing cannot fail.
    serde_json::to_string(&filters).unwrap_or_default()
}

/// `text` percent-encoded for a query value: everything but the unreserved
/// characters.
fn query_value(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One event as the daemon sends it; only what is checked is read.
#[derive(Debug, Deserialize)]
struct WireEvent {
    #[serde(rename = "Type")]
    typ: Option<String>,
    #[serde(rename = "Action")]
    action: Option<String>,
    #[serde(rename = "Actor")]
    actor: Option<WireActor>,
}

#[derive(Debug, Deserialize)]
struct WireActor {
    #[serde(rename = "Attributes")]
    attributes: Option<HashMap<String, String>>,
}

/// The stack namespace of a container that went, if `line` is an event the
/// subscription asked for and names a usable namespace; else why not.
/// Checked again although the daemon filtered: a filter the daemon does not
/// know is ignored, not refused, and must not turn every event into a wake.
pub(crate) fn namespace_of(line: &[u8]) -> Result<String, String> {
    let event: WireEvent =
        serde_json::from_slice(line).map_err(|e| format!("not an event: {e}"))?;
    if event.typ.as_deref() != Some("container") {
        return Err("not a container event".into());
    }
    let action = event.action.as_deref().unwrap_or("");
    if !ACTIONS.contains(&action) {
        return Err("not an action that frees anything".into());
    }
    let namespace = event
        .actor
        .and_then(|a| a.attributes)
        .and_then(|mut a| a.remove(STACK_NAMESPACE))
        .ok_or("no stack namespace")?;
    if namespace.is_empty() {
        return Err("an empty stack namespace".into());
    }
    if namespace.len() > MAX_NAMESPACE {
        return Err("a stack namespace too long to be one".into());
    }
    Ok(namespace)
}

/// Splits a byte stream into lines of at most [`MAX_EVENT`] bytes; a
/// longer line is dropped while it comes in, so memory stays bounded
/// whatever the daemon sends, and every byte is looked at once.
#[derive(Default)]
struct Lines {
    line: Vec<u8>,
    /// Inside a line already too long: dropped up to its newline.
    overlong: bool,
}

impl Lines {
    /// The complete lines `chunk` ends, in order; `Err` stands for a line
    /// dropped as too long.
    fn push(&mut self, chunk: &[u8]) -> Vec<Result<Vec<u8>, ()>> {
        let mut done = Vec::new();
        for piece in chunk.split_inclusive(|&b| b == b'\n') {
            let (body, ends) = match piece.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (piece, false),
            };
            if !self.overlong {
                if self.line.len() + body.len() > MAX_EVENT {
                    self.overlong = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(body);
                }
            }
            if ends {
                if self.overlong {
                    done.push(Err(()));
                } else {
                    done.push(Ok(std::mem::take(&mut self.line)));
                }
                self.overlong = false;
            }
        }
        done
    }
}

/// What ends a subscription's reply.
enum Broke {
    /// It ran into the transport's bound: may be opened again.
    Bound(String),
    /// Anything else: the subscription is over.
    Failed(BackendError),
}

fn broke(endpoint: &str, e: DockerError) -> Broke {
    if let Some(limit) = reply_limit_of(&e) {
        return Broke::Bound(format!("the event stream {limit}"));
    }
    Broke::Failed(match e {
        DockerError::DockerResponseServerError {
            status_code,
            message,
        } => BackendError::Refused {
            object: "container events".into(),
            status: status_code,
            message,
        },
        other => BackendError::Unreachable {
            endpoint: endpoint.to_owned(),
            message: format!("container events: {other}"),
        },
    })
}

/// The request for the subscription, through `docker`'s own transport.
///
/// bollard 0.21 hands a reply's raw bytes back only from its few streaming
/// calls, none of them `/events`, and offers no request of one's own. So
/// the request is made as one of those (a container export: a plain `GET`
/// whose reply comes back as it arrives) and its URI replaced before it is
/// sent, by a request modifier, as the client already does to pin the API
/// version. The path is complete (version, filters), so nothing of the
/// export is left in it.
fn request(docker: &Docker) -> BoxStream<'static, Result<Bytes, DockerError>> {
    let path = format!(
        "/v{}/events?filters={}",
        docker.client_version(),
        query_value(&filters())
    );
    let docker = docker
        .clone()
        .with_request_modifier(move |mut request: BollardRequest| {
            let mut parts = request.uri().clone().into_parts();
            // The path is built above from known parts and always parses;
            // were it not to, the request would go out unchanged and its
            // reply, an export of no container, fail.
            if let Ok(path) = path.parse() {
                parts.path_and_query = Some(path);
                if let Ok(uri) = http::Uri::from_parts(parts) {
                    *request.uri_mut() = uri;
                }
            }
            request
        });
    docker.export_container("events").boxed()
}

/// The subscription's state between two items.
struct Subscription {
    docker: Docker,
    endpoint: String,
    body: Option<BoxStream<'static, Result<Bytes, DockerError>>>,
    lines: Lines,
    ready: VecDeque<ContainerGone>,
    renewals: u32,
}

impl Subscription {
    /// The next container gone, the error that ends the subscription, or
    /// `None` once it has ended.
    async fn next(&mut self) -> Option<Result<ContainerGone, BackendError>> {
        loop {
            if let Some(gone) = self.ready.pop_front() {
                return Some(Ok(gone));
            }
            let body = match &mut self.body {
                Some(body) => body,
                None => self.body.insert(request(&self.docker)),
            };
            let chunk = match body.next().await {
                Some(Ok(chunk)) => chunk,
                Some(Err(e)) => match broke(&self.endpoint, e) {
                    Broke::Bound(why) if self.renewals < MAX_RENEWALS => {
                        tracing::debug!(endpoint = %self.endpoint, why, "container events opened again");
                        self.renewals += 1;
                        self.body = None;
                        self.lines = Lines::default();
                        continue;
                    }
                    Broke::Bound(why) => {
                        return Some(Err(BackendError::Invalid {
                            what: "container events".into(),
                            message: format!("{why}; given up after {MAX_RENEWALS} renewals"),
                        }))
                    }
                    Broke::Failed(e) => return Some(Err(e)),
                },
                None => {
                    tracing::debug!(endpoint = %self.endpoint, "the daemon ended the container events");
                    return None;
                }
            };
            for line in self.lines.push(&chunk) {
                let namespace = match line {
                    Ok(line) if line.iter().all(u8::is_ascii_whitespace) => continue,
                    Ok(line) => namespace_of(&line),
                    Err(()) => Err(format!("an event line longer than {MAX_EVENT} bytes")),
                };
                match namespace {
                    Ok(namespace) => self.ready.push_back(ContainerGone::new(namespace)),
                    Err(why) => {
                        tracing::debug!(endpoint = %self.endpoint, why, "container event skipped")
                    }
                }
            }
        }
    }
}

/// The container events of the daemon `docker` talks to (at `endpoint`,
/// for messages). The request goes out when the stream is first polled;
/// the stream ends after its first error, and dropping it closes the
/// connection.
pub(crate) fn container_events(docker: &Docker, endpoint: &str) -> ContainerEvents {
    let subscription = Subscription {
        docker: docker.clone(),
        endpoint: endpoint.to_owned(),
        body: None,
        lines: Lines::default(),
        ready: VecDeque::new(),
        renewals: 0,
    };
    let items = stream::unfold(Some(subscription), |state| async move {
        let mut subscription = state?;
        let item = subscription.next().await?;
        // After an error the subscription is over: nothing is asked again.
        let next = item.is_ok().then_some(subscription);
        Some((item, next))
    });
    Box::pin(items)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sweep_testkit::fake_daemon::{FakeDaemon, Reply, Routes};

    use super::*;
    use crate::client::Client;
    use crate::Endpoint;

    fn event(typ: &str, action: &str, labels: &[(&str, &str)]) -> String {
        let attributes: HashMap<&str, &str> = labels.iter().copied().collect();
        serde_json::json!({
            "Type": typ,
            "Action": action,
            "Actor": {"ID": "c0ffee", "Attributes": attributes},
            "scope": "local",
            "time": 1,
        })
        .to_string()
    }

    #[test]
    fn only_a_usable_namespace_of_a_container_gone_passes() {
        let ns = |typ, action, labels: &[(&str, &str)]| {
            namespace_of(event(typ, action, labels).as_bytes()).map_err(|_| ())
        };
        let web = [(STACK_NAMESPACE, "web")];
        assert_eq!(ns("container", "destroy", &web), Ok("web".into()));
        assert_eq!(ns("container", "die", &web), Ok("web".into()));
        assert!(ns("container", "start", &web).is_err());
        assert!(ns("network", "destroy", &web).is_err());
        assert!(ns("container", "destroy", &[("other", "web")]).is_err());
        assert!(ns("container", "destroy", &[(STACK_NAMESPACE, "")]).is_err());
        let long = "x".repeat(MAX_NAMESPACE + 1);
        assert!(ns("container", "destroy", &[(STACK_NAMESPACE, &long)]).is_err());
        // Whatever else the value holds is passed on as data, unjudged.
        assert_eq!(
            ns("container", "destroy", &[(STACK_NAMESPACE, "a\nb\u{202e}")]),
            Ok("a\nb\u{202e}".into())
        );
        for junk in [
            &b"{\"Type\":\"container\",\"Action\":7}"[..],
            b"{\"Type\":\"container\",\"Action\":\"die\",\"Actor\":{\"Attributes\":{\"com.docker.stack.namespace\":1}}}",
            b"[]",
            b"\xff\xfe",
            b"{\"Type\":\"container\",\"Action\":\"die\"}",
        ] {
            assert!(namespace_of(junk).is_err(), "{junk:?}");
        }
    }

    #[test]
    fn lines_are_bounded_and_split_anywhere() {
        let mut lines = Lines::default();
        assert!(lines.push(b"{\"a\":").is_empty());
        assert_eq!(lines.push(b"1}\n{\"b\""), vec![Ok(b"{\"a\":1}".to_vec())]);
        assert_eq!(lines.push(b":2}\n"), vec![Ok(b"{\"b\":2}".to_vec())]);
        // A line too long is dropped as it comes, never held whole.
        let big = vec![b'x'; MAX_EVENT];
        assert!(lines.push(&big).is_empty());
        assert!(lines.push(&big).is_empty());
        assert!(lines.line.len() <= MAX_EVENT);
        assert_eq!(lines.push(b"xx\n{}\n"), vec![Err(()), Ok(b"{}".to_vec())]);
        // Exactly at the bound is kept.
        let mut at = vec![b'y'; MAX_EVENT];
        at.push(b'\n');
        assert_eq!(lines.push(&at), vec![Ok(vec![b'y'; MAX_EVENT])]);
    }

    #[test]
    fn the_filters_ask_for_stack_containers_that_went() {
        let f: HashMap<String, Vec<String>> = serde_json::from_str(&filters()).unwrap();
        assert_eq!(f["type"], vec!["container"]);
        assert_eq!(f["event"], vec!["die", "destroy"]);
        assert_eq!(f["label"], vec![STACK_NAMESPACE]);
        assert_eq!(f.len(), 3);
        assert_eq!(
            query_value("{\"a\":[\"b.c\"]} ~"),
            "%7B%22a%22%3A%5B%22b.c%22%5D%7D%20~"
        );
    }

    /// A client of a fake daemon answering `/events` with `replies` in
    /// turn (then with empty replies), its replies bounded by `limit`.
    async fn fake_daemon(
        dir: &tempfile::TempDir,
        replies: Vec<Reply>,
        limit: u64,
    ) -> (Client, FakeDaemon) {
        let socket = dir.path().join("events.sock");
        let fake = FakeDaemon::new(Routes::new().in_turn("/events", replies, Reply::json("")));
        let endpoint = Endpoint::parse(&fake.listen_unix(&socket), None).unwrap();
        let client = Client::connect_limited(&endpoint, Duration::from_secs(10), limit)
            .await
            .unwrap();
        (client, fake)
    }

    /// The paths the fake daemon was asked for, but its version.
    fn asked(fake: &FakeDaemon) -> Vec<String> {
        fake.requests()
            .into_iter()
            .filter(|r| r.bare != "/version" && r.bare != "/_ping")
            .map(|r| r.path)
            .collect()
    }

    async fn next(events: &mut ContainerEvents) -> Option<Result<ContainerGone, BackendError>> {
        tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("the fake daemon answers at once")
    }

    #[tokio::test]
    async fn bad_lines_are_skipped_and_the_stream_ends_with_the_daemons() {
        let ok = |ns| event("container", "destroy", &[(STACK_NAMESPACE, ns)]);
        let body = [
            "{\"Type\":\"container\",\"Action\":7}".to_owned(),
            "x".repeat(MAX_EVENT + 10),
            event("container", "die", &[]),
            ok("web"),
            String::new(),
            ok("db"),
        ]
        .join("\n")
            + "\n";
        let dir = tempfile::tempdir().unwrap();
        let (client, fake) = fake_daemon(&dir, vec![Reply::json(body)], crate::REPLY_LIMIT).await;
        let mut events = container_events(client.docker(), client.endpoint());
        assert_eq!(next(&mut events).await, Some(Ok(ContainerGone::new("web"))));
        assert_eq!(next(&mut events).await, Some(Ok(ContainerGone::new("db"))));
        // The daemon ended the reply: the subscription is over.
        assert_eq!(next(&mut events).await, None);
        let asked = asked(&fake);
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(
            asked[0].starts_with("/v1.41/events?filters=%7B"),
            "{asked:?}"
        );
    }

    #[tokio::test]
    async fn a_reply_past_the_bound_is_opened_again_a_few_times() {
        let ok = |ns: &str| event("container", "destroy", &[(STACK_NAMESPACE, ns)]) + "\n";
        // Each reply: one event, then more bytes than a reply may have.
        let padding = format!("{}\n", " ".repeat(8 * 1024));
        let replies: Vec<Reply> = (0..=MAX_RENEWALS)
            .map(|i| Reply::held(ok(&format!("r{i}")), padding.clone()))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let (client, fake) = fake_daemon(&dir, replies, 4 * 1024).await;
        let mut events = container_events(client.docker(), client.endpoint());
        for i in 0..=MAX_RENEWALS {
            assert_eq!(
                next(&mut events).await,
                Some(Ok(ContainerGone::new(format!("r{i}"))))
            );
            fake.go();
        }
        assert!(matches!(
            next(&mut events).await,
            Some(Err(BackendError::Invalid { .. }))
        ));
        assert_eq!(next(&mut events).await, None);
        assert_eq!(asked(&fake).len() as u32, MAX_RENEWALS + 1);
    }
}
