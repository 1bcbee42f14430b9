//! `swarm-sweep` on a pseudo-terminal, against swarm alpha of the bed: it
//! asks before `apply` deletes and only "yes" deletes, it never asks where
//! nobody can answer, text is the default on a terminal and JSON through
//! a pipe, colour only on a terminal without `NO_COLOR` or `TERM=dumb`,
//! and a progress line while `apply` runs. Every answer is checked on the
//! engine, not only in the output.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use expectrl::session::OsSession;
use expectrl::{Expect, Session};
use serde_json::json;
use sweep_e2e::{
    app, assert_gone, assert_intact, binary, create_record, create_record_data, docker, docker_ok,
    engine_record, lines, workspace_root, Cleanup, Scenario, Stack, SwarmEntry, ALPHA, IMAGE,
    QUICK, STACK_LABEL,
};

/// The prompt `apply` ends its question with.
const PROMPT: &str = "Only 'yes' proceeds: ";

/// Longest wait for any one thing the binary prints; the bed answers in
/// seconds, but a loaded machine may be slow.
const EXPECT_LIMIT: Duration = Duration::from_secs(180);

/// A run of the binary whose stdin, stdout and stderr are one terminal
/// (stdin may be `/dev/null` instead).
struct Tty {
    session: OsSession,
    seen: Vec<u8>,
    watchdog: Arc<AtomicBool>,
}

/// The binary's own variables cleared, so that the machine's settings
/// cannot decide a test, and a terminal that takes colour.
fn command(program: &Path, args: &[OsString], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args);
    for var in [
        "NO_COLOR",
        "SWARM_SWEEP_CONFIG",
        "SWARM_SWEEP_APP_SET",
        "SWARM_SWEEP_LOG",
        "RUST_LOG",
        "DOCKER_HOST",
        "DOCKER_CONTEXT",
        "COLUMNS",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("TERM", "xterm-256color");
    for (key, value) in env {
        cmd.env(key, value);
    }
    cmd
}

impl Tty {
    fn spawn(cmd: Command) -> Tty {
        let mut session = Session::spawn(cmd).expect("spawn on a pseudo-terminal");
        session.set_expect_timeout(Some(EXPECT_LIMIT));
        // A run that hangs is killed, so the test fails instead of hanging.
        let pid = session.get_process().pid();
        let watchdog = Arc::new(AtomicBool::new(false));
        let done = Arc::clone(&watchdog);
        std::thread::spawn(move || {
            let until = std::time::Instant::now() + EXPECT_LIMIT * 2;
            while std::time::Instant::now() < until {
                if done.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        });
        Tty {
            session,
            seen: Vec::new(),
            watchdog,
        }
    }

    /// Waits for `text`, failing with everything seen so far.
    fn expect(&mut self, text: &str) {
        match self.session.expect(text) {
            Ok(found) => self.seen.extend_from_slice(found.as_bytes()),
            Err(e) => panic!(
                "waiting for {text:?}: {e}\nseen so far:\n{}",
                String::from_utf8_lossy(&self.seen)
            ),
        }
    }

    fn answer(&mut self, line: &str) {
        self.session.send_line(line).expect("type an answer");
    }

    /// Reads the rest of the output and waits for the exit.
    fn finish(mut self) -> (i32, String) {
        let mut buf = [0u8; 4096];
        loop {
            match self.session.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.seen.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // Linux answers EIO on the terminal's side once the
                // program has exited and closed its end.
                Err(_) => break,
            }
        }
        let status = self.session.get_process().wait().expect("wait for the run");
        self.watchdog.store(true, Ordering::Relaxed);
        let code = match status {
            expectrl::process::unix::WaitStatus::Exited(_, code) => code,
            other => panic!(
                "the run did not exit: {other:?}\n{}",
                String::from_utf8_lossy(&self.seen)
            ),
        };
        (code, String::from_utf8_lossy(&self.seen).into_owned())
    }
}

/// Whether `text` holds a colour (SGR) escape sequence.
fn has_colour(text: &str) -> bool {
    text.split("\x1b[").skip(1).any(|rest| {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(rest.len());
        rest[end..].starts_with('m')
    })
}

/// `text` without its colour sequences.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 2..];
        let end = tail
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(tail.len());
        if tail[end..].starts_with('m') {
            rest = &tail[end + 1..];
        } else {
            out.push_str("\x1b[");
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// A departed release deployed on alpha, and the arguments of an `apply`
/// that sweeps it.
struct Departed {
    /// Kept for its scratch directory, which holds the files in `args`.
    _scenario: Scenario,
    release: String,
    args: Vec<OsString>,
    _cleanup: Cleanup,
}

impl Departed {
    fn deploy(base: &str) -> Departed {
        let s = Scenario::new();
        let release = s.release(base);
        let mut cleanup = Cleanup::new(&ALPHA);
        cleanup.add(&release);
        create_record(&ALPHA, &release, 1, Some(&s.stamp("shop", &release)));
        s.deploy(&ALPHA, &Stack::new(&release));
        let args = apply_args(&s);
        Departed {
            _scenario: s,
            release,
            args,
            _cleanup: cleanup,
        }
    }
}

/// `apply` on alpha as `s`'s controller, with an app set where only
/// `edge` (no releases) is live.
fn apply_args(s: &Scenario) -> Vec<OsString> {
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let mut args: Vec<OsString> = vec!["apply".into(), "--config".into(), config.into()];
    args.extend(["--app-set".into(), apps.into_os_string()]);
    args.extend(["--controller".into(), s.controller.clone().into()]);
    args.extend(QUICK.iter().map(OsString::from));
    args
}

#[test]
fn apply_on_a_terminal_asks_and_only_yes_deletes() {
    let d = Departed::deploy("ask");

    // Colour on a terminal; "no" deletes nothing.
    let mut tty = Tty::spawn(command(binary(), &d.args, &[]));
    tty.expect(PROMPT);
    tty.answer("no");
    let (code, out) = tty.finish();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("nothing was deleted"), "{out}");
    assert!(has_colour(&out), "no colour on a terminal: {out:?}");
    assert!(
        plain(&out).contains("Delete 1 release as planned above?"),
        "{out}"
    );
    // Text on a terminal: the plan, not JSON.
    assert!(
        out.contains(&d.release) && !out.trim_start().starts_with('{'),
        "{out}"
    );
    assert_intact(&ALPHA, &d.release, &[]);

    // Anything but yes is no; and no colour under NO_COLOR or TERM=dumb.
    for (env, answer) in [
        (&[("NO_COLOR", "1")][..], ""),
        (&[("TERM", "dumb")][..], "nope"),
    ] {
        let mut tty = Tty::spawn(command(binary(), &d.args, env));
        tty.expect(PROMPT);
        tty.answer(answer);
        let (code, out) = tty.finish();
        assert_eq!(code, 1, "{env:?}: {out}");
        assert!(out.contains("Delete 1 release"), "{env:?}: {out:?}");
        assert!(!has_colour(&out), "{env:?}: colour: {out:?}");
        assert_intact(&ALPHA, &d.release, &[]);
    }

    // "yes" deletes, with a progress line drawn in place.
    let mut tty = Tty::spawn(command(binary(), &d.args, &[]));
    tty.expect(PROMPT);
    tty.answer("yes");
    let (code, out) = tty.finish();
    assert_eq!(code, 0, "{out}");
    assert_gone(&ALPHA, &d.release);
    assert!(plain(&out).contains("releases 1/1, finished"), "{out:?}");
    assert!(
        out.contains("\r\x1b[2K"),
        "the line is not redrawn in place: {out:?}"
    );
    assert!(
        out.contains("releases \x1b[1m"),
        "no colour in the progress line: {out:?}"
    );
    assert!(!out.contains("nothing was deleted"), "{out}");
}

/// A dropped object is a deletion like a release: a plan whose only
/// removal is a config a live release dropped asks first, names what it
/// removes, and only "yes" removes it.
#[test]
fn apply_asks_before_removing_what_a_live_release_dropped() {
    let s = Scenario::new();
    let release = s.release("dropask");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&release);
    // Revision 1 declared config `conf2`, created by the controller;
    // revision 2 does not. The config is on the engine with the stack's
    // label and the controller's marker.
    let config = format!("{release}_conf2");
    let file = s.write("conf2.txt", "conf2\n");
    docker_ok(
        ALPHA.manager,
        &[
            "config",
            "create",
            "--label",
            &format!("{STACK_LABEL}={release}"),
            "--label",
            "com.swarmcli.cd.created=2026-12-01T08:00:00Z",
            &config,
            &file.to_string_lossy(),
        ],
    );
    let owner = s.stamp("shop", &release);
    let app = format!("version: \"3.8\"\nservices:\n  app:\n    image: {IMAGE}\n");
    let one = format!("{app}    configs: [conf2]\nconfigs:\n  conf2:\n    file: ./conf2.txt\n");
    for (revision, manifest) in [(1, one), (2, app)] {
        let record = engine_record(&release, revision, Some(&owner)).with_manifest(manifest);
        create_record_data(&ALPHA, &record, &record.payload());
    }
    let registry = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set(
        "apps.json",
        json!([{"name": "shop", "swarm": "alpha", "releases": [release],
                "state": "reconciled", "prune_resources": true}]),
    );
    let mut args: Vec<OsString> = vec!["apply".into(), "--config".into(), registry.into()];
    args.extend(["--app-set".into(), apps.into_os_string()]);
    args.extend(["--controller".into(), s.controller.clone().into()]);
    args.push("--prune-resources".into());
    args.extend(QUICK.iter().map(OsString::from));
    let present = || {
        docker(ALPHA.manager, &["config", "inspect", &config])
            .status
            .success()
    };

    let mut tty = Tty::spawn(command(binary(), &args, &[]));
    tty.expect(PROMPT);
    tty.answer("no");
    let (code, out) = tty.finish();
    assert_eq!(code, 1, "{out}");
    assert!(
        plain(&out).contains("Delete 1 dropped object as planned above?"),
        "{out}"
    );
    assert!(out.contains(&config), "the plan shown names it: {out}");
    assert!(present(), "declined, yet the config is gone");

    let mut tty = Tty::spawn(command(binary(), &args, &[]));
    tty.expect(PROMPT);
    tty.answer("yes");
    let (code, out) = tty.finish();
    assert_eq!(code, 0, "{out}");
    assert!(!present(), "approved, yet the config stays: {out}");
    let records = lines(&docker_ok(
        ALPHA.manager,
        &[
            "config",
            "ls",
            "--filter",
            &format!("label=com.swarmcli.release={release}"),
            "--format",
            "{{.Name}}",
        ],
    ));
    assert_eq!(records.len(), 2, "the live release's records stay");
}

#[test]
fn apply_with_yes_or_without_a_terminal_on_stdin_never_asks() {
    // --yes on a terminal.
    let d = Departed::deploy("yes");
    let mut args = d.args.clone();
    args.push("--yes".into());
    let (code, out) = Tty::spawn(command(binary(), &args, &[])).finish();
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains(PROMPT), "asked despite --yes: {out}");
    assert!(plain(&out).contains("releases 1/1, finished"), "{out:?}");
    assert_gone(&ALPHA, &d.release);
    drop(d);

    // stdin is not a terminal, stdout and stderr are: nobody can answer,
    // so it proceeds as a script would.
    let d = Departed::deploy("nostdin");
    let mut cmd = command(binary(), &d.args, &[]);
    cmd.stdin(Stdio::null());
    let (code, out) = Tty::spawn(cmd).finish();
    assert_eq!(code, 0, "{out}");
    assert!(
        !out.contains(PROMPT),
        "asked with stdin not a terminal: {out}"
    );
    assert!(plain(&out).contains("releases 1/1, finished"), "{out:?}");
    assert_gone(&ALPHA, &d.release);
}

/// A shell on the terminal running the binary through a pipe: `tail`
/// is what the shell appends (`| cat`, `2>&1 | cat`).
fn through_pipe(args: &[OsString], tail: &str, env: &[(&str, &str)]) -> Command {
    let mut shell_args: Vec<OsString> = vec![
        "-c".into(),
        format!("\"$0\" \"$@\" {tail}").into(),
        binary().into(),
    ];
    shell_args.extend(args.iter().cloned());
    command(Path::new("/bin/sh"), &shell_args, env)
}

#[test]
fn text_and_colour_on_a_terminal_json_and_none_through_a_pipe() {
    let snapshot = workspace_root().join("examples/one-swarm.json");
    let plan: Vec<OsString> = vec!["plan".into(), "--snapshot".into(), snapshot.into()];

    let (code, out) = Tty::spawn(command(binary(), &plan, &[])).finish();
    assert_eq!(code, 0, "{out}");
    assert!(
        !out.trim_start().starts_with('{') && out.contains("shop"),
        "{out}"
    );
    let (code, out) = Tty::spawn(through_pipe(&plan, "| cat", &[])).finish();
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    assert_eq!(json["deletions"].as_array().map(Vec::len), Some(2));

    // An apply with nothing to delete: a terminal shows the (coloured)
    // progress line and never asks; a pipe shows neither.
    let s = Scenario::new();
    let args = apply_args(&s);
    let (code, out) = Tty::spawn(command(binary(), &args, &[])).finish();
    assert_eq!(code, 0, "{out}");
    assert!(plain(&out).contains("releases 0/0, finished"), "{out:?}");
    assert!(has_colour(&out), "{out:?}");
    assert!(!out.contains(PROMPT), "{out}");
    let (code, out) = Tty::spawn(command(binary(), &args, &[("NO_COLOR", "1")])).finish();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("releases 0/0, finished"), "{out:?}");
    assert!(!has_colour(&out), "NO_COLOR: {out:?}");

    let (code, out) = Tty::spawn(through_pipe(&args, "2>&1 | cat", &[])).finish();
    assert_eq!(code, 0, "{out}");
    assert!(!has_colour(&out), "colour through a pipe: {out:?}");
    assert!(
        !out.contains("releases 0/0"),
        "progress through a pipe: {out:?}"
    );
    assert!(!out.contains(PROMPT), "{out}");
    let json: serde_json::Value =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    assert!(
        json["plan"].is_object() && json["report"].is_object(),
        "{json}"
    );
}
