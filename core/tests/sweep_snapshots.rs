//! Reports of named scenarios, as JSON (the contract) and as text, pinned
//! with insta. Review changes with `INSTA_UPDATE=always cargo test` and a
//! look at the `.snap` files under `tests/snapshots/`.

mod harness;

use harness::{sweep, ListingBy, NewStamp, Reach, World, CONTROLLER};
use sweep_core::sweep::{report_text, Settings, Sweep};
use sweep_core::{ReleaseRef, SwarmName};

fn alpha3(w: &mut World, listed3: bool) {
    w.swarm(
        "alpha",
        &[
            ("n1", "node-1", true),
            ("n2", "node-2", true),
            ("n3", "node-3", listed3),
        ],
        Reach::Nodes,
        true,
    );
}

fn beta(w: &mut World) {
    w.swarm(
        "beta",
        &[("b1", "beta-1", true), ("b2", "beta-2", true)],
        Reach::Nodes,
        true,
    );
}

fn all_deleted() -> World {
    let mut w = World::new(true);
    alpha3(&mut w, true);
    beta(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data"), ("n2", "cache")]);
    w.release("beta", "web", "shop", &[("b2", "data")]);
    w.release("beta", "db", "crm", &[]);
    w
}

fn purge_gives_up() -> World {
    let mut w = World::new(true);
    alpha3(&mut w, true);
    w.release(
        "alpha",
        "web",
        "shop",
        &[
            ("n1", "data"),
            ("n1", "held"),
            ("n2", "logs"),
            ("n3", "cache"),
        ],
    );
    w.faults.in_use.insert(
        (SwarmName::new("alpha"), "n1".into(), "web_held".into()),
        u32::MAX,
    );
    // n3 answers who uses what (the networks go) but not its volume
    // listing: the purge gives up there too.
    w.faults
        .list_fails
        .insert((SwarmName::new("alpha"), "n3".into()));
    w
}

fn own_stack() -> World {
    let mut w = World::new(true);
    alpha3(&mut w, true);
    w.release("alpha", "ctl", "controller", &[("n1", "state")]);
    w.release("alpha", "web", "shop", &[("n2", "data")]);
    if let Some(s) = w.swarms.get_mut(&SwarmName::new("alpha")) {
        s.own_stack = Some("ctl".into());
    }
    w
}

fn pending_coverage() -> World {
    let mut w = World::new(true);
    alpha3(&mut w, false);
    w.release("alpha", "web", "shop", &[("n1", "data"), ("n3", "logs")]);
    w.release("alpha", "api", "shop", &[]);
    w
}

fn node_local() -> World {
    let mut w = World::new(true);
    w.swarm(
        "alpha",
        &[("m1", "mgr", true), ("w1", "worker-1", true)],
        Reach::ManagerOnly,
        true,
    );
    w.release("alpha", "web", "shop", &[("m1", "data"), ("w1", "logs")]);
    w
}

fn relisting_overturns() -> World {
    let mut w = World::new(true);
    alpha3(&mut w, true);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    w.release("alpha", "api", "shop", &[]);
    w.faults
        .records_lie
        .insert(ReleaseRef::new("alpha", "web"), 1);
    w.faults
        .stack_lies
        .insert(ReleaseRef::new("alpha", "api"), 1);
    w.faults.listing_by = ListingBy::Stacks;
    w
}

fn relisting_fails() -> World {
    let mut w = World::new(false);
    alpha3(&mut w, true);
    w.release("alpha", "web", "shop", &[]);
    w.faults
        .stack_fails
        .insert(ReleaseRef::new("alpha", "web"), u32::MAX);
    w.faults.relist_fails.insert(SwarmName::new("alpha"));
    w
}

fn purge_off() -> World {
    let mut w = World::new(false);
    alpha3(&mut w, false);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    w
}

/// Records changed between the plan and a step: `web` restamped for
/// another application before its stack, `api` redeployed by another
/// controller before its purge, `db` unstamped before its records, `old`'s
/// records removed before its stack; `ok` goes. All but `ok` are left
/// alone with a typed reason.
fn restamped() -> World {
    let mut w = World::new(true);
    alpha3(&mut w, true);
    for release in ["web", "api", "db", "old", "ok"] {
        w.release("alpha", release, "shop", &[("n1", "data")]);
    }
    w.restamp(
        "alpha",
        "web",
        0,
        NewStamp::Stamp(format!("cd/{CONTROLLER}/blog:release/web")),
    );
    w.restamp(
        "alpha",
        "api",
        1,
        NewStamp::Stamp("cd/cd2/shop:release/api".into()),
    );
    w.restamp("alpha", "db", 2, NewStamp::Stamp(String::new()));
    w.restamp("alpha", "old", 0, NewStamp::Remove);
    w
}

/// Names made to fake lines of the report or move the cursor: a swarm,
/// releases, node names, and so the volume names, error messages, remedies
/// and label filters built from them.
const HOSTILE_SWARM: &str = "x\u{1b}[2K";
const HOSTILE_RELEASE: &str = "g\nto delete (0):\n  nothing";
const HOSTILE_FAILING: &str = "f\u{1b}[1A\u{1b}[2K\r";

fn hostile_names() -> World {
    let mut w = World::new(true);
    w.swarm(
        HOSTILE_SWARM,
        &[
            ("n1", "node\n1 deleted", true),
            ("n2", "\u{1b}]0;title\u{7}", true),
            ("n3", "down\r\n3 planned: 3 deleted", false),
        ],
        Reach::Nodes,
        true,
    );
    w.release(HOSTILE_SWARM, HOSTILE_RELEASE, "gone", &[("n1", "data\n")]);
    w.release(HOSTILE_SWARM, HOSTILE_FAILING, "gone", &[("n2", "db")]);
    w.faults
        .stack_fails
        .insert(ReleaseRef::new(HOSTILE_SWARM, HOSTILE_FAILING), u32::MAX);
    w
}

/// A named scenario: builds the model world to sweep.
type Case = (&'static str, fn() -> World);

const CASES: &[Case] = &[
    ("all_deleted", all_deleted),
    ("purge_gives_up", purge_gives_up),
    ("own_stack", own_stack),
    ("pending_coverage", pending_coverage),
    ("node_local", node_local),
    ("relisting_overturns", relisting_overturns),
    ("relisting_fails", relisting_fails),
    ("purge_off", purge_off),
    ("hostile_names", hostile_names),
    ("restamped", restamped),
];

#[test]
fn sweep_reports_of_named_scenarios() {
    for (name, world) in CASES {
        // Several interleavings, one report: pin the first, compare the rest.
        let (report, _) = sweep(world(), 1, 3);
        for seed in 2..6 {
            let (again, _) = sweep(world(), seed, 1 + seed as usize % 4);
            assert_eq!(again, report, "{name}: report depends on the interleaving");
        }
        insta::assert_json_snapshot!(format!("sweep_{name}"), report);
        insta::assert_snapshot!(format!("sweep_{name}_text"), report_text(&report));
    }
}

#[test]
fn sweep_report_of_a_held_plan() {
    let mut w = all_deleted();
    w.app_set_loaded = false;
    let report = Sweep::new(&w.plan(), Settings::default()).report();
    insta::assert_json_snapshot!("sweep_held", report);
    insta::assert_snapshot!("sweep_held_text", report_text(&report));
}

/// Every outside name in the text report is escaped, so no line of it can
/// be faked or overwritten; JSON keeps them exact.
#[test]
fn hostile_names_cannot_fake_lines_of_the_report() {
    let (report, _) = sweep(hostile_names(), 1, 3);
    assert!(report
        .releases
        .iter()
        .any(|r| r.release == HOSTILE_RELEASE && r.swarm.as_str() == HOSTILE_SWARM));
    let text = report_text(&report);
    for line in text.lines() {
        assert!(
            !line.chars().any(sweep_core::escape::is_unsafe),
            "unescaped: {line:?}"
        );
    }
    // A totals line is `N planned: ...` from its first character; a
    // hostile name may hold the words, never the start of a line.
    let totals: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.split_once(" planned: ").is_some_and(|(head, _)| {
                !head.is_empty() && head.bytes().all(|b| b.is_ascii_digit())
            })
        })
        .collect();
    assert_eq!(totals.len(), 1, "{text}");
    assert!(
        text.contains("x\\u{1b}[2K/g\\u{a}to delete (0):\\u{a}  nothing"),
        "{text}"
    );
}
