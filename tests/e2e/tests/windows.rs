//! Deletion windows on the real engines of swarm alpha: outside its windows
//! (a deny window given on the command line, or an allow window of the
//! swarm in the registry file) a departed release is held with
//! `outside_window`, the run exits 0 and every node keeps all of it; once
//! both the flag's and the swarm's windows allow it, it goes. A window that
//! closes while a sweep runs stops it there.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use sweep_core::UnixTime;
use sweep_e2e::{
    app, assert_gone, assert_intact, create_stack_record, registry_toml, wait_deployed, Cleanup,
    Scenario, Stack, SwarmEntry, ALPHA,
};

/// An RFC 3339 time `offset` from now, `ahead` or not.
fn from_now(offset: Duration, ahead: bool) -> String {
    let now = SystemTime::now();
    let at = if ahead { now + offset } else { now - offset };
    UnixTime::from_system_time(at)
        .expect("a time after 1970")
        .to_string()
}

/// The registry file of alpha with the swarm's own `windows`.
fn registry_with_windows(s: &Scenario, file: &str, windows: &[&str]) -> PathBuf {
    let text = registry_toml(&[SwarmEntry::of(&ALPHA)]);
    let list = Value::from(windows.to_vec()).to_string();
    let manager_line = text
        .lines()
        .find(|l| l.starts_with("manager = "))
        .expect("the manager line")
        .to_owned();
    let text = text.replacen(
        &manager_line,
        &format!("{manager_line}\nwindows = {list}"),
        1,
    );
    s.write(file, &text)
}

/// The plan's holds of reason `outside_window`.
fn window_holds(out: &Value) -> Vec<Value> {
    out["plan"]["holds"]
        .as_array()
        .expect("the plan's holds")
        .iter()
        .filter(|h| h["reason"] == "outside_window")
        .cloned()
        .collect()
}

#[test]
fn outside_its_windows_nothing_goes_and_inside_them_the_release_does() {
    let s = Scenario::new();
    let web = s.release("web");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    let stack = Stack::new(&web).with_volume().on("alpha-2");
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &web)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let hour = Duration::from_secs(3600);

    // A freeze over now, given on the command line: held, exit 0 (it
    // resolves itself), and it says when deleting may start again.
    let end = from_now(hour, true);
    let freeze = format!("deny {}/{end}", from_now(hour, false));
    let open = s.registry("open.toml", &[SwarmEntry::of(&ALPHA)]);
    let run = s
        .sweep("apply", Some(&open), &apps)
        .args(&["--prune-volumes", "--window", &freeze])
        .run();
    run.expect_code(0);
    let out = run.json();
    let holds = window_holds(&out);
    assert_eq!(holds.len(), 1, "{out:#}");
    assert_eq!(holds[0]["opens_at"], end.as_str(), "{out:#}");
    assert_eq!(out["plan"]["deletions"], json!([]), "{out:#}");
    assert_intact(&ALPHA, &web, &["alpha-2"]);

    // The swarm's own window in the registry file, which does not hold
    // now: held again, whatever the flag allows.
    let closed = registry_with_windows(
        &s,
        "closed.toml",
        &[&format!(
            "allow {}/{}",
            from_now(hour, true),
            from_now(2 * hour, true)
        )],
    );
    let run = s
        .sweep("apply", Some(&closed), &apps)
        .args(&[
            "--prune-volumes",
            "--window",
            "allow Mon-Sun 00:00-24:00 UTC",
        ])
        .run();
    run.expect_code(0);
    assert_eq!(window_holds(&run.json()).len(), 1, "{}", run.stdout);
    assert_intact(&ALPHA, &web, &["alpha-2"]);

    // Both allow now: it goes, volume and all.
    let both = registry_with_windows(
        &s,
        "both.toml",
        &[&format!(
            "allow {}/{}",
            from_now(hour, false),
            from_now(hour, true)
        )],
    );
    let run = s
        .sweep("apply", Some(&both), &apps)
        .args(&[
            "--prune-volumes",
            "--window",
            "allow Mon-Sun 00:00-24:00 UTC",
        ])
        .args(sweep_e2e::QUICK)
        .run();
    run.expect_code(0);
    assert!(window_holds(&run.json()).is_empty(), "{}", run.stdout);
    assert_gone(&ALPHA, &web);
}

#[test]
fn a_window_that_closes_during_the_sweep_stops_it_there_and_the_next_window_finishes() {
    let s = Scenario::new();
    let db = s.release("db");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&db);
    // Its task ignores SIGTERM: its volume is held well past the window's
    // end.
    let grace = 30;
    let stack = Stack::new(&db)
        .with_volume()
        .with_network_secret_config()
        .on("alpha-2")
        .stubborn(grace);
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &db)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let open = s.registry("open.toml", &[SwarmEntry::of(&ALPHA)]);

    // A freeze that starts 10 s from now: the sweep starts inside the
    // window, removes the service, and waits for its task. The binary is
    // built first: its build must not eat into the 10 s.
    sweep_e2e::binary();
    let freeze = format!(
        "deny {}/{}",
        from_now(Duration::from_secs(10), true),
        from_now(Duration::from_secs(3600), true)
    );
    let run = s
        .sweep("apply", Some(&open), &apps)
        .args(&["--prune-volumes", "--window", &freeze])
        .args(sweep_e2e::QUICK)
        .run();
    run.expect_code(1);
    assert!(
        run.elapsed < Duration::from_secs(grace.into()),
        "the sweep went on past the window's end: {:?}",
        run.elapsed
    );
    let out = run.json();
    assert!(
        window_holds(&out).is_empty(),
        "planned inside the window: {out:#}"
    );
    let report = &out["report"]["releases"][0];
    assert_eq!(report["release"], db.as_str(), "{report:#}");
    assert_eq!(report["outcome"], "failed", "{report:#}");
    let kinds: Vec<&Value> = report["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| &e["kind"])
        .collect();
    assert_eq!(kinds, [&json!("window_closed")], "{report:#}");
    let r = sweep_e2e::Remains::read(&ALPHA, &db);
    assert!(
        r.services.is_empty(),
        "the service went before the close: {r:#?}"
    );
    assert_eq!(r.records.len(), 1, "the records stay: {r:#?}");
    assert_eq!(r.volume_nodes(), ["alpha-2"], "{r:#?}");
    assert_eq!(r.networks.len(), 1, "{r:#?}");
    assert_eq!((r.secrets.len(), r.configs.len()), (1, 1), "{r:#?}");

    // The next window (no freeze): the rest goes once the task lets go.
    let run = s
        .sweep("apply", Some(&open), &apps)
        .args(&["--prune-volumes"])
        .args(&["--retry-interval", "1", "--settle-timeout", "90"])
        .run();
    run.expect_code(0);
    assert_eq!(run.json()["report"]["releases"][0]["outcome"], "deleted");
    assert_gone(&ALPHA, &db);
}
