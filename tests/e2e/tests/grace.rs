//! The grace period (`--min-departed-for`, `--state FILE`) against the real
//! engine of swarm alpha: the first apply deletes nothing and says how long
//! is left, a release declared again inside the window survives and loses
//! its entry, and once the window has passed the still-departed release is
//! deleted.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sweep_e2e::{
    app, assert_gone, assert_intact, create_stack_record, one, release_names, wait_deployed,
    Cleanup, Run, Scenario, Stack, SwarmEntry, ALPHA, QUICK,
};

const WINDOW: Duration = Duration::from_secs(3);

fn apply(s: &Scenario, config: &Path, apps: &Path, state: &Path) -> Run {
    s.sweep("apply", Some(config), apps)
        .args(&["--min-departed-for", "3s", "--prune-volumes"])
        .arg("--state")
        .arg(state)
        .args(QUICK)
        .run()
}

fn state_entries(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let state: Value = serde_json::from_str(&text).expect("the state file is JSON");
    assert_eq!(state["format_version"], 2, "{state:#}");
    // Dated by the run that wrote it: a later run refuses a state too old.
    assert!(state["written_at"].is_string(), "{state:#}");
    state["departed"]
        .as_array()
        .expect("a departed list")
        .iter()
        .map(|d| d["release"].as_str().unwrap().to_owned())
        .collect()
}

fn grace_left(out: &Value, release: &str) -> Option<u64> {
    let spared = one(&out["plan"], "spared", release);
    (spared["reason"] == "grace_period").then(|| spared["time_left"].as_u64().expect("time_left"))
}

#[test]
fn a_release_goes_only_after_its_window_and_one_declared_again_survives() {
    let s = Scenario::new();
    let web = s.release("web");
    let db = s.release("db");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    cleanup.add(&db);
    // Two applications, so that one can come back without the other.
    for (application, release) in [("shop", &web), ("blog", &db)] {
        let stack = Stack::new(release).with_volume().on("alpha-2");
        create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp(application, release)));
        s.deploy(&ALPHA, &stack);
        wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    }
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let gone = s.app_set("gone.json", json!([app("edge", "alpha", &[])]));
    let back = s.app_set(
        "back.json",
        json!([app("edge", "alpha", &[]), app("shop", "alpha", &[&web])]),
    );
    let state = s.dir().join("state.json");

    // First sweep: no state yet, so both clocks start now and nothing goes.
    let started = Instant::now();
    let first = apply(&s, &config, &gone, &state);
    // The clocks start at the first sweep's own time, read after it
    // gathered: somewhere between `started` and now. On a busy bed that is
    // seconds after `started`, so the window is counted from here.
    let first_done = Instant::now();
    first.expect_code(0);
    let out = first.json();
    let deleted = release_names(&out["plan"], "deletions");
    assert!(
        !deleted.contains(&web) && !deleted.contains(&db),
        "{deleted:?}"
    );
    for release in [&web, &db] {
        let left = grace_left(&out, release).expect("spared grace_period");
        assert!((1..=3).contains(&left), "{release}: {left} s left");
    }
    let mut entries = state_entries(&state);
    entries.retain(|r| r.ends_with(&s.token));
    assert_eq!(entries, [db.clone(), web.clone()]);
    assert_intact(&ALPHA, &web, &["alpha-2"]);
    assert_intact(&ALPHA, &db, &["alpha-2"]);

    // `shop` comes back declaring `web` inside the window: `web` stays and
    // its entry is cleared; `db` keeps its clock.
    let second = apply(&s, &config, &back, &state);
    second.expect_code(0);
    let out = second.json();
    assert_eq!(
        one(&out["plan"], "spared", &web)["reason"],
        "current_application"
    );
    let db_went_early = release_names(&out["plan"], "deletions").contains(&db);
    if db_went_early {
        // Only once its window, counted from the first sweep, had passed.
        assert!(started.elapsed() >= WINDOW, "db deleted inside its window");
    } else {
        assert!(grace_left(&out, &db).is_some());
        assert!(state_entries(&state).contains(&db));
    }
    assert!(!state_entries(&state).contains(&web), "web's entry stayed");
    assert_intact(&ALPHA, &web, &["alpha-2"]);

    // After the window: `db`, departed all along, goes. `web` left the app
    // set again, and its clock starts over: it stays.
    std::thread::sleep(WINDOW.saturating_sub(first_done.elapsed()) + Duration::from_secs(1));
    let third = apply(&s, &config, &gone, &state);
    third.expect_code(0);
    let out = third.json();
    if !db_went_early {
        let deleted = release_names(&out["plan"], "deletions");
        assert!(
            deleted.contains(&db),
            "{db} not planned {:?} after the first sweep ended: {:#}",
            first_done.elapsed(),
            out["plan"]
        );
        assert_eq!(one(&out["report"], "releases", &db)["outcome"], "deleted");
    }
    assert!(
        grace_left(&out, &web).is_some(),
        "web's clock did not restart"
    );
    assert_gone(&ALPHA, &db);
    assert_intact(&ALPHA, &web, &["alpha-2"]);
    let entries = state_entries(&state);
    assert!(
        entries.contains(&web) && !entries.contains(&db),
        "{entries:?}"
    );
}
