//! Delivery against receivers on 127.0.0.1: one that answers, one that
//! fails, one that hangs, one that is slow. Nothing leaves the machine.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use std::path::Path;

use super::*;
use crate::cli::Secret;

/// How a test receiver answers.
#[derive(Clone, Copy)]
pub(crate) enum Answer {
    Ok,
    Fail,
    Hang,
    Slow(Duration),
}

/// What a receiver was sent: each request's line and body.
#[derive(Default)]
pub(crate) struct Received {
    pub(crate) requests: Mutex<Vec<(String, String)>>,
}

impl Received {
    fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

const SECRET_PATH: &str = "/hooks/T000/B000/secret-token";

pub(crate) async fn receiver(answer: Answer) -> (Webhook, Arc<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(Received::default());
    let seen = received.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut conn, _)) = listener.accept().await else {
                return;
            };
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                // Headers, then as many body bytes as Content-Length says.
                let (head, length) = loop {
                    let Ok(n) = conn.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    data.extend_from_slice(&buf[..n]);
                    if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&data[..end]).to_string();
                        let length = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap())
                            })
                            .unwrap_or(0);
                        data.drain(..end + 4);
                        break (head, length);
                    }
                };
                while data.len() < length {
                    let Ok(n) = conn.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    data.extend_from_slice(&buf[..n]);
                }
                let line = head.lines().next().unwrap_or_default().to_owned();
                seen.requests
                    .lock()
                    .unwrap()
                    .push((line, String::from_utf8_lossy(&data).to_string()));
                let status = match answer {
                    Answer::Ok => "200 OK",
                    Answer::Fail => "500 Internal Server Error",
                    Answer::Hang => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        return;
                    }
                    Answer::Slow(wait) => {
                        tokio::time::sleep(wait).await;
                        "204 No Content"
                    }
                };
                let reply =
                    format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = conn.write_all(reply.as_bytes()).await;
            });
        }
    });
    let target = Webhook::parse(&format!("http://127.0.0.1:{port}{SECRET_PATH}"), "test").unwrap();
    (target, received)
}

fn limits(request_timeout_ms: u64, retry_for_ms: u64) -> Limits {
    Limits {
        queue: 8,
        request_timeout: Duration::from_millis(request_timeout_ms),
        first_backoff: Duration::from_millis(20),
        retry_for: Duration::from_millis(retry_for_ms),
    }
}

fn counted() -> (Arc<AtomicU64>, OnDrop) {
    let n = Arc::new(AtomicU64::new(0));
    let m = n.clone();
    (
        n,
        Box::new(move |_| {
            m.fetch_add(1, Ordering::SeqCst);
        }),
    )
}

#[tokio::test]
async fn a_receiver_that_answers_gets_each_body_once() {
    let (target, received) = receiver(Answer::Ok).await;
    let (dropped, on_drop) = counted();
    let d = Delivery::start(
        vec![target],
        "application/json",
        limits(1000, 5000),
        on_drop,
    );
    d.send(Bytes::from_static(b"{\"n\":1}"), None);
    d.send(Bytes::from_static(b"{\"n\":2}"), None);
    assert_eq!(d.settle(Duration::from_secs(5)).await, 0);
    let requests = received.requests.lock().unwrap().clone();
    assert_eq!(
        requests,
        [
            (
                format!("POST {SECRET_PATH} HTTP/1.1"),
                "{\"n\":1}".to_owned()
            ),
            (
                format!("POST {SECRET_PATH} HTTP/1.1"),
                "{\"n\":2}".to_owned()
            ),
        ]
    );
    assert_eq!((d.dropped(), dropped.load(Ordering::SeqCst)), (0, 0));
}

#[tokio::test]
async fn a_failing_receiver_is_retried_within_the_bound_then_dropped() {
    let (target, received) = receiver(Answer::Fail).await;
    let (dropped, on_drop) = counted();
    let d = Delivery::start(vec![target], "application/json", limits(1000, 300), on_drop);
    let started = Instant::now();
    d.send(Bytes::from_static(b"{}"), None);
    assert_eq!(d.settle(Duration::from_secs(5)).await, 0);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(received.count() >= 2, "retried: {}", received.count());
    assert_eq!((d.dropped(), dropped.load(Ordering::SeqCst)), (1, 1));
}

#[tokio::test]
async fn a_hanging_receiver_never_holds_up_the_sender_and_is_dropped_in_time() {
    let (target, received) = receiver(Answer::Hang).await;
    let (dropped, on_drop) = counted();
    let d = Delivery::start(vec![target], "application/json", limits(100, 350), on_drop);
    let started = Instant::now();
    d.send(Bytes::from_static(b"{}"), None);
    assert!(started.elapsed() < Duration::from_millis(50), "send waited");
    assert_eq!(d.settle(Duration::from_secs(5)).await, 0);
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "{took:?}"
    );
    assert!(
        received.count() >= 2,
        "each attempt timed out: {}",
        received.count()
    );
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_slow_receiver_within_the_timeout_is_delivered_to() {
    let (target, received) = receiver(Answer::Slow(Duration::from_millis(200))).await;
    let (dropped, on_drop) = counted();
    let d = Delivery::start(
        vec![target],
        "application/json",
        limits(1000, 5000),
        on_drop,
    );
    d.send(Bytes::from_static(b"{}"), None);
    assert_eq!(d.settle(Duration::from_secs(5)).await, 0);
    assert_eq!(received.count(), 1);
    assert_eq!(dropped.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn waiting_for_delivery_is_bounded_and_a_full_queue_drops_at_once() {
    let (target, _received) = receiver(Answer::Hang).await;
    let (dropped, on_drop) = counted();
    let mut l = limits(60_000, 60_000);
    l.queue = 1;
    let d = Delivery::start(vec![target], "application/json", l, on_drop);
    // One in flight, one queued, the third has no room.
    for _ in 0..3 {
        d.send(Bytes::from_static(b"{}"), None);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    let started = Instant::now();
    assert_eq!(d.settle(Duration::from_millis(200)).await, 2);
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn one_hanging_receiver_does_not_delay_another() {
    let (hanging, _) = receiver(Answer::Hang).await;
    let (answering, received) = receiver(Answer::Ok).await;
    let (_, on_drop) = counted();
    let d = Delivery::start(
        vec![hanging, answering],
        "application/json",
        limits(60_000, 60_000),
        on_drop,
    );
    d.send(Bytes::from_static(b"{}"), None);
    let started = Instant::now();
    while received.count() == 0 && started.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(received.count(), 1);
}

/// A plan whose swarm `a` is held (`shop` has not said which releases it
/// declares): with `held_after` zero, news at its first sweep.
fn held_plan() -> SweepPlan {
    let snapshot = sweep_core::snapshot::Snapshot::from_json(
        r#"{"app_set":{"loaded":true,"applications":[{"name":"shop","swarm":"a"}]},
          "swarms":[{"swarm":"a","releases":[{"name":"blog","owner":"cd/default/blog:release/blog"}]}]}"#,
    )
    .unwrap();
    sweep_core::plan::plan(&snapshot).unwrap()
}

fn notifier(target: Webhook, memory: NotifyMemory, limits: Limits) -> Notifier {
    let settings = Settings {
        targets: vec![target],
        format: NotifyFormat::Json,
        held_after: Duration::ZERO,
    };
    Notifier::start(settings, "cd".into(), None, memory, limits, Box::new(|| {}))
}

/// What the memory says was sent, by cause.
fn sent(n: &Notifier) -> Vec<String> {
    n.memory().sent.iter().map(|s| s.cause.clone()).collect()
}

const HELD: &str = r#"["held","a","unreconciled"]"#;

/// Delivered: remembered, and the same hold is not sent again.
#[tokio::test]
async fn a_delivered_event_is_remembered_and_not_sent_again() {
    let (target, received) = receiver(Answer::Ok).await;
    let n = notifier(target, NotifyMemory::default(), limits(1000, 5000));
    let plan = held_plan();
    assert!(n.swept(Some(&plan), None));
    assert!(!n.settle(Duration::from_secs(5)).await, "nothing forgotten");
    assert_eq!(received.count(), 1);
    assert_eq!(sent(&n), [HELD]);
    assert!(!n.swept(Some(&plan), None));
    assert!(!n.settle(Duration::from_secs(5)).await);
    assert_eq!(received.count(), 1);
}

/// Dropped after its retries: forgotten as sent, so `watch`'s next sweep
/// sends it again instead of staying silent about a hold nobody heard of.
#[tokio::test]
async fn an_event_dropped_after_its_retries_is_sent_again_by_the_next_sweep() {
    let (target, received) = receiver(Answer::Fail).await;
    let n = notifier(target, NotifyMemory::default(), limits(1000, 100));
    let plan = held_plan();
    assert!(n.swept(Some(&plan), None));
    assert!(n.settle(Duration::from_secs(5)).await, "the memory forgot");
    let tried = received.count();
    assert!(tried >= 1);
    assert_eq!(sent(&n), Vec::<String>::new());
    assert!(
        n.memory().held_since(HELD).is_some(),
        "the hold's clock runs on"
    );

    assert!(n.swept(Some(&plan), None), "sent again: remembered again");
    n.settle(Duration::from_secs(5)).await;
    assert!(received.count() > tried, "the second sweep tried again");
    let body = &received.requests.lock().unwrap()[tried].1;
    assert!(body.contains(r#""event":"held""#), "{body}");
}

/// Abandoned at exit: forgotten as sent, so the next run (the memory
/// comes from the state file) sends it.
#[tokio::test]
async fn an_event_abandoned_at_exit_is_sent_by_the_next_run() {
    let (hanging, _) = receiver(Answer::Hang).await;
    let n = notifier(hanging, NotifyMemory::default(), limits(60_000, 60_000));
    assert!(n.swept(Some(&held_plan()), None));
    assert_eq!(sent(&n), [HELD]);
    assert!(
        n.settle(Duration::from_millis(200)).await,
        "the memory forgot"
    );
    let kept = n.memory();
    assert!(kept.sent.is_empty(), "{kept:?}");

    let (target, received) = receiver(Answer::Ok).await;
    let next = notifier(target, kept, limits(1000, 5000));
    assert!(next.swept(Some(&held_plan()), None));
    assert!(!next.settle(Duration::from_secs(5)).await);
    assert_eq!(received.count(), 1);
}

/// Stopped at once (a second signal): nothing is waited for, and what is
/// under way is forgotten as sent all the same.
#[tokio::test]
async fn an_event_under_way_when_the_run_is_cut_short_is_forgotten_without_waiting() {
    let (hanging, _) = receiver(Answer::Hang).await;
    let n = notifier(hanging, NotifyMemory::default(), limits(60_000, 60_000));
    assert!(n.swept(Some(&held_plan()), None));
    assert_eq!(sent(&n), [HELD]);
    let started = Instant::now();
    assert!(n.forget_abandoned());
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(n.memory().sent.is_empty());
    assert!(!n.forget_abandoned(), "said once");
}

fn args(notify: &[&str], file: Option<&Path>) -> NotifyArgs {
    NotifyArgs {
        notify: notify.iter().map(|u| Secret((*u).to_owned())).collect(),
        notify_file: file.map(Path::to_owned),
        notify_format: NotifyFormat::Json,
        notify_held_after: Duration::from_secs(3600),
    }
}

#[test]
fn webhooks_come_from_flags_the_environment_and_a_file_each_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hooks");
    std::fs::write(
        &file,
        "# the team's channels\n\nhttps://hooks.example.com/a/secret-1\nhttp://127.0.0.1:9/b\n",
    )
    .unwrap();
    let settings = Settings::read(
        &args(&["http://127.0.0.1:9/b"], Some(&file)),
        Some("https://chat.example.org/hooks/secret-2  http://127.0.0.1:9/b\n".into()),
    )
    .unwrap();
    let shown: Vec<String> = settings.targets.iter().map(Webhook::to_string).collect();
    assert_eq!(
        shown,
        [
            "http://127.0.0.1:9/***",
            "https://chat.example.org/***",
            "https://hooks.example.com/***"
        ]
    );
    assert!(!format!("{settings:?}").contains("secret"));
}

#[test]
fn a_bad_webhook_is_refused_without_showing_it() {
    let e = Settings::read(&args(&["gopher://h/secret-path"], None), None).unwrap_err();
    assert!(matches!(
        e,
        NotifyError::Webhook(WebhookError::Scheme { .. })
    ));
    assert!(!e.to_string().contains("secret"), "{e}");
    assert!(e.to_string().contains("--notify #1"), "{e}");
    let e = Settings::read(&args(&[], None), Some("notaurl-secret".into())).unwrap_err();
    assert!(matches!(
        e,
        NotifyError::Webhook(WebhookError::NotAUrl { .. })
    ));
    assert!(!e.to_string().contains("secret"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hooks");
    std::fs::write(&file, "https://ok.example.com/x\nftp://h/secret\n").unwrap();
    let e = Settings::read(&args(&[], Some(&file)), None).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("hooks line 2: only http:// and https:// URLs can be posted to"),
        "{e}"
    );
    // Not a regular file: refused unread.
    let e = Settings::read(&args(&[], Some(dir.path())), None).unwrap_err();
    assert!(matches!(e, NotifyError::File(_)), "{e:?}");
}

#[test]
fn the_report_link_names_the_listening_address() {
    assert_eq!(
        report_url("127.0.0.1:9090".parse().unwrap()),
        "http://127.0.0.1:9090/report"
    );
    assert_eq!(
        report_url("[::1]:9090".parse().unwrap()),
        "http://[::1]:9090/report"
    );
    let any = report_url("0.0.0.0:9090".parse().unwrap());
    assert!(
        any.starts_with("http://") && any.ends_with(":9090/report"),
        "{any}"
    );
}
