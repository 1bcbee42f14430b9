use proptest::prelude::*;

use super::*;

fn w(text: &str) -> DeletionWindow {
    DeletionWindow::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn at(text: &str) -> UnixTime {
    UnixTime::parse_rfc3339(text).unwrap()
}

fn open(windows: &[DeletionWindow], now: &str) -> bool {
    gate(&[windows], Some(at(now))) == Gate::Open
}

fn opens(windows: &[DeletionWindow], now: &str) -> Option<String> {
    match gate(&[windows], Some(at(now))) {
        Gate::Open => panic!("open at {now}"),
        Gate::Closed(c) => c.opens_at.map(|t| t.to_string()),
    }
}

#[test]
fn the_grammar_reads_days_times_zones_and_intervals() {
    let cases = [
        (
            "allow Mon-Fri 02:00-05:00 Europe/Berlin",
            "allow Mon-Fri 02:00-05:00 Europe/Berlin",
        ),
        (
            "  ALLOW  mon,wed\t22:00-02:00  utc ",
            "allow Mon,Wed 22:00-02:00 UTC",
        ),
        (
            "deny Sat-Sun 00:00-24:00 UTC",
            "deny Sat-Sun 00:00-24:00 UTC",
        ),
        (
            "allow Fri-Mon 23:00-00:00 UTC",
            "allow Fri-Mon 23:00-24:00 UTC",
        ),
        (
            "deny 2026-12-24T00:00:00Z/2026-12-27T00:00:00Z",
            "deny 2026-12-24T00:00:00Z/2026-12-27T00:00:00Z",
        ),
        (
            "allow 2026-12-24T00:00:00+01:00/2026-12-24T06:00:00+01:00",
            "allow 2026-12-24T00:00:00+01:00/2026-12-24T06:00:00+01:00",
        ),
    ];
    for (text, canonical) in cases {
        let window = w(text);
        assert_eq!(window.to_string(), canonical);
        // The canonical text reads back as the same window.
        assert_eq!(w(canonical), window);
    }
    let Span::Weekly(fri_mon) = w("allow Fri-Mon 01:00-02:00 UTC").span else {
        panic!()
    };
    assert_eq!(fri_mon.days, 0b111_0001, "Fri, Sat, Sun and Mon");
    let Span::Weekly(list) = w("allow Mon,Wed-Thu,Sun 01:00-02:00 UTC").span else {
        panic!()
    };
    assert_eq!(list.days, 0b100_1101);
}

#[test]
fn every_wrong_part_is_named() {
    use WindowError as E;
    let long = format!("allow Mon 01:00-02:00 {}", "x".repeat(MAX_WINDOW_LEN));
    type Expected = fn(&WindowError) -> bool;
    let cases: Vec<(&str, Expected)> = vec![
        (&long, |e| matches!(e, E::TooLong { .. })),
        ("", |e| matches!(e, E::Verb { found } if found.is_empty())),
        (
            "permit Mon 01:00-02:00 UTC",
            |e| matches!(e, E::Verb { found } if found == "permit"),
        ),
        ("allow Mon 01:00-02:00", |e| matches!(e, E::Shape { .. })),
        ("allow Mon 01:00-02:00 UTC extra", |e| {
            matches!(e, E::Shape { .. })
        }),
        ("allow", |e| matches!(e, E::Shape { .. })),
        (
            "allow Mon-Fri-Sun 01:00-02:00 UTC",
            |e| matches!(e, E::DayRange { found } if found == "Mon-Fri-Sun"),
        ),
        (
            "allow Monday 01:00-02:00 UTC",
            |e| matches!(e, E::Day { found } if found == "Monday"),
        ),
        (
            "allow Mon, 01:00-02:00 UTC",
            |e| matches!(e, E::Day { found } if found.is_empty()),
        ),
        (
            "allow Mon 1:00-02:00 UTC",
            |e| matches!(e, E::Time { found } if found == "1:00"),
        ),
        ("allow Mon 01:60-02:00 UTC", |e| matches!(e, E::Time { .. })),
        (
            "allow Mon 24:00-02:00 UTC",
            |e| matches!(e, E::Time { found } if found == "24:00"),
        ),
        ("allow Mon 25:00-02:00 UTC", |e| matches!(e, E::Time { .. })),
        ("allow Mon 01:00 UTC", |e| matches!(e, E::TimeRange { .. })),
        ("allow Mon 02:00-02:00 UTC", |e| {
            matches!(e, E::TimeRange { .. })
        }),
        ("allow Mon 00:00-00:00 UTC", |e| {
            matches!(e, E::TimeRange { .. })
        }),
        (
            "allow Mon 01:00-02:00 Mars/Olympus",
            |e| matches!(e, E::Zone { found } if found == "Mars/Olympus"),
        ),
        ("allow Mon 01:00-02:00 /etc/localtime", |e| {
            matches!(e, E::Zone { .. })
        }),
        ("allow Mon 01:00-02:00 EST5EDT,M3.2.0,M11.1.0", |e| {
            matches!(e, E::Zone { .. })
        }),
        (
            "deny 2026-12-24/2026-12-27",
            |e| matches!(e, E::Instant { found } if found == "2026-12-24"),
        ),
        ("deny 2026-12-24T00:00:00/2026-12-27T00:00:00Z", |e| {
            matches!(e, E::Instant { .. })
        }),
        ("deny 2026-12-24T00:00:00Z[UTC]/2026-12-27T00:00:00Z", |e| {
            matches!(e, E::Instant { .. })
        }),
        ("deny 1969-12-24T00:00:00Z/2026-12-27T00:00:00Z", |e| {
            matches!(e, E::Instant { .. })
        }),
        ("deny 2026-12-27T00:00:00Z/2026-12-24T00:00:00Z", |e| {
            matches!(e, E::Interval { .. })
        }),
        ("deny 2026-12-24T01:00:00+01:00/2026-12-24T00:00:00Z", |e| {
            matches!(e, E::Interval { .. })
        }),
        ("deny 2026-12-24T00:00:00Z", |e| {
            matches!(e, E::Shape { .. })
        }),
    ];
    for (text, expected) in cases {
        let err = DeletionWindow::parse(text).expect_err(text);
        assert!(expected(&err), "{text}: {err:?}");
    }
}

#[test]
fn windows_read_and_write_as_json_strings() {
    let window = w("allow Mon-Fri 02:00-05:00 Europe/Berlin");
    let json = serde_json::to_string(&window).unwrap();
    assert_eq!(json, r#""allow Mon-Fri 02:00-05:00 Europe/Berlin""#);
    assert_eq!(
        serde_json::from_str::<DeletionWindow>(&json).unwrap(),
        window
    );
    assert!(serde_json::from_str::<DeletionWindow>(r#""allow Mon""#).is_err());
    assert!(serde_json::from_str::<DeletionWindow>("7").is_err());
}

#[test]
fn no_windows_is_open_even_without_a_time_and_windows_without_one_are_closed() {
    assert_eq!(gate(&[], None), Gate::Open);
    assert_eq!(gate(&[&[], &[]], None), Gate::Open);
    let nights = [w("allow Mon-Fri 02:00-05:00 UTC")];
    let Gate::Closed(closed) = gate(&[&nights], None) else {
        panic!()
    };
    assert_eq!((closed.cause, closed.opens_at), (ClosedCause::NoTime, None));
}

#[test]
fn an_allow_window_holds_on_its_days_between_its_times() {
    // 2026-12-04 is a Friday.
    let nights = [w("allow Mon-Fri 02:00-05:00 Europe/Berlin")];
    assert!(open(&nights, "2026-12-04T01:00:00Z"), "03:00 in Berlin");
    assert!(!open(&nights, "2026-12-04T00:59:59Z"));
    assert!(
        !open(&nights, "2026-12-04T04:00:00Z"),
        "the end is not in it"
    );
    // Saturday night: the next opening is Monday 02:00 Berlin.
    assert_eq!(
        opens(&nights, "2026-12-05T01:30:00Z").as_deref(),
        Some("2026-12-07T01:00:00Z")
    );
    let Gate::Closed(closed) = gate(&[&nights], Some(at("2026-12-05T01:30:00Z"))) else {
        panic!()
    };
    assert_eq!(closed.cause, ClosedCause::OutsideAllow(nights.to_vec()));
}

#[test]
fn a_range_across_midnight_belongs_to_the_day_it_starts_on() {
    let friday_night = [w("allow Fri 22:00-02:00 UTC")];
    assert!(open(&friday_night, "2026-12-04T23:00:00Z"), "Friday 23:00");
    assert!(
        open(&friday_night, "2026-12-05T01:59:59Z"),
        "Saturday 01:59"
    );
    assert!(
        !open(&friday_night, "2026-12-04T01:00:00Z"),
        "Friday 01:00 is Thursday's night"
    );
    assert!(
        !open(&friday_night, "2026-12-05T22:30:00Z"),
        "Saturday 22:30"
    );
    let wrap = [w("allow Sat-Mon 12:00-13:00 UTC")];
    assert!(open(&wrap, "2026-12-06T12:30:00Z"), "Sunday");
    assert!(open(&wrap, "2026-12-07T12:30:00Z"), "Monday");
    assert!(!open(&wrap, "2026-12-08T12:30:00Z"), "Tuesday");
}

#[test]
fn deny_wins_and_its_end_is_the_opening() {
    let windows = [
        w("allow Mon-Sun 00:00-24:00 UTC"),
        w("deny 2026-12-24T00:00:00Z/2026-12-27T00:00:00Z"),
    ];
    assert!(open(&windows, "2026-12-23T23:59:59Z"));
    assert_eq!(
        opens(&windows, "2026-12-25T12:00:00Z").as_deref(),
        Some("2026-12-27T00:00:00Z")
    );
    let Gate::Closed(closed) = gate(&[&windows], Some(at("2026-12-25T12:00:00Z"))) else {
        panic!()
    };
    assert_eq!(closed.cause, ClosedCause::Denied(windows[1].clone()));
    // A freeze that ends inside no allow window opens at the next one.
    let nights = [
        w("allow Mon-Fri 02:00-05:00 UTC"),
        w("deny 2026-12-24T00:00:00Z/2026-12-28T03:00:00Z"),
    ];
    assert_eq!(
        opens(&nights, "2026-12-25T12:00:00Z").as_deref(),
        Some("2026-12-28T03:00:00Z")
    );
    let weekends_off = [w("deny Sat-Sun 00:00-24:00 UTC")];
    assert_eq!(
        opens(&weekends_off, "2026-12-05T12:00:00Z").as_deref(),
        Some("2026-12-07T00:00:00Z")
    );
}

#[test]
fn every_list_must_pass() {
    let global = [w("allow Mon-Fri 00:00-24:00 UTC")];
    let swarm = [w("allow Mon-Sun 02:00-04:00 UTC")];
    // Saturday 03:00: the swarm allows it, the global list does not.
    let now = Some(at("2026-12-05T03:00:00Z"));
    let Gate::Closed(closed) = gate(&[&global, &swarm], now) else {
        panic!()
    };
    assert_eq!(closed.opens_at, Some(at("2026-12-07T02:00:00Z")));
    assert_eq!(
        gate(&[&global, &swarm], Some(at("2026-12-07T02:00:00Z"))),
        Gate::Open
    );
}

#[test]
fn windows_that_never_open_say_so() {
    let never = [w("deny Mon-Sun 00:00-24:00 UTC")];
    assert_eq!(opens(&never, "2026-12-05T12:00:00Z"), None);
    let past = [w("allow 2025-12-24T00:00:00Z/2025-12-27T00:00:00Z")];
    assert_eq!(opens(&past, "2026-12-05T12:00:00Z"), None);
    let contradiction = [
        w("allow Mon 02:00-03:00 UTC"),
        w("deny Mon 00:00-24:00 UTC"),
    ];
    assert_eq!(opens(&contradiction, "2026-12-05T12:00:00Z"), None);
}

/// Europe/Berlin, Sunday 2026-03-29: at 02:00 CET (01:00 UTC) the clocks
/// go to 03:00 CEST; local times from 02:00 to 03:00 do not happen.
#[test]
fn berlin_spring_forward_narrows_allow_and_widens_deny() {
    // The window the change shortens: it starts when the clock passes 02:00.
    let nights = [w("allow Sun 02:00-05:00 Europe/Berlin")];
    assert!(!open(&nights, "2026-03-29T00:59:59Z"));
    assert!(open(&nights, "2026-03-29T01:00:00Z"), "03:00 CEST");
    assert!(open(&nights, "2026-03-29T02:59:59Z"));
    assert!(!open(&nights, "2026-03-29T03:00:00Z"), "05:00 CEST");
    // An end inside the gap: 02:30 read at the later offset (CEST) is
    // 00:30 UTC, at the earlier (CET) 01:30 UTC. Allow takes the first.
    let allow = [w("allow Sun 01:00-02:30 Europe/Berlin")];
    assert!(open(&allow, "2026-03-29T00:29:59Z"));
    assert!(!open(&allow, "2026-03-29T00:30:00Z"));
    // Deny takes the second.
    let deny = [w("deny Sun 01:00-02:30 Europe/Berlin")];
    assert!(!open(&deny, "2026-03-29T01:29:59Z"));
    assert!(open(&deny, "2026-03-29T01:30:00Z"));
    assert_eq!(
        opens(&deny, "2026-03-29T00:10:00Z").as_deref(),
        Some("2026-03-29T01:30:00Z")
    );
}

fn closes(lists: &[&[DeletionWindow]], now: &str) -> Option<String> {
    closes_at(lists, at(now)).map(|t| t.to_string())
}

#[test]
fn an_open_window_closes_at_its_end_or_where_a_deny_starts() {
    let nights = [w("allow Mon-Fri 02:00-05:00 UTC")];
    // Tuesday 2026-12-01.
    assert_eq!(
        closes(&[&nights], "2026-12-01T03:00:00Z").as_deref(),
        Some("2026-12-01T05:00:00Z")
    );
    // Closed already: now.
    assert_eq!(
        closes(&[&nights], "2026-12-01T06:00:00Z").as_deref(),
        Some("2026-12-01T06:00:00Z")
    );
    // Allow windows that touch hold one after another.
    let chained = [
        w("allow Tue 02:00-05:00 UTC"),
        w("allow Tue 05:00-07:00 UTC"),
        w("allow 2026-12-01T06:30:00Z/2026-12-01T08:00:00Z"),
    ];
    assert_eq!(
        closes(&[&chained], "2026-12-01T03:00:00Z").as_deref(),
        Some("2026-12-01T08:00:00Z")
    );
    // A deny window that starts inside the allow one.
    let mut denied = nights.to_vec();
    denied.push(w("deny 2026-12-01T04:00:00Z/2026-12-02T00:00:00Z"));
    assert_eq!(
        closes(&[&denied], "2026-12-01T03:00:00Z").as_deref(),
        Some("2026-12-01T04:00:00Z")
    );
    // Deny windows alone: the next one's start; the policy's list and the
    // swarm's are both counted.
    let deny = [w("deny Sat,Sun 00:00-24:00 Europe/Berlin")];
    assert_eq!(
        closes(&[&deny], "2026-12-01T03:00:00Z").as_deref(),
        Some("2026-12-04T23:00:00Z")
    );
    assert_eq!(
        closes(&[&deny, &nights], "2026-12-01T03:00:00Z").as_deref(),
        Some("2026-12-01T05:00:00Z")
    );
    // No windows, or none that ever closes: no end.
    assert_eq!(closes(&[], "2026-12-01T03:00:00Z"), None);
    let always = [w("allow Mon-Sun 00:00-24:00 UTC")];
    assert_eq!(closes(&[&always], "2026-12-01T03:00:00Z"), None);
    // A deny window in the past never closes anything.
    let past = [w("deny 2020-01-01T00:00:00Z/2020-01-02T00:00:00Z")];
    assert_eq!(closes(&[&past], "2026-12-01T03:00:00Z"), None);
}

#[test]
fn a_window_a_clock_change_shortens_closes_at_its_narrower_end() {
    // Berlin, Sunday 2026-03-29: 02:00-05:00 local is 01:00-03:00 UTC.
    let nights = [w("allow Sun 02:00-05:00 Europe/Berlin")];
    assert_eq!(
        closes(&[&nights], "2026-03-29T01:30:00Z").as_deref(),
        Some("2026-03-29T03:00:00Z")
    );
    // A deny window starting in the doubled hour of the fall back starts
    // at its first reading.
    let deny = [w("deny Sun 02:30-04:00 Europe/Berlin")];
    assert_eq!(
        closes(&[&deny], "2026-10-25T00:00:00Z").as_deref(),
        Some("2026-10-25T00:30:00Z")
    );
}

/// Europe/Berlin, Sunday 2026-10-25: at 03:00 CEST (01:00 UTC) the clocks
/// go back to 02:00 CET; local times from 02:00 to 03:00 happen twice.
#[test]
fn berlin_fall_back_narrows_allow_and_widens_deny() {
    // 02:30 is 00:30 UTC (CEST) and 01:30 UTC (CET).
    let allow = [w("allow Sun 02:30-05:00 Europe/Berlin")];
    assert!(!open(&allow, "2026-10-25T00:45:00Z"), "the first 02:45");
    assert!(open(&allow, "2026-10-25T01:30:00Z"), "the second 02:30");
    assert!(open(&allow, "2026-10-25T03:59:59Z"));
    assert!(!open(&allow, "2026-10-25T04:00:00Z"), "05:00 CET");
    let deny = [w("deny Sun 02:30-05:00 Europe/Berlin")];
    assert!(!open(&deny, "2026-10-25T00:30:00Z"), "the first 02:30");
    assert!(open(&deny, "2026-10-25T00:29:59Z"));
    // An end in the fold: 02:30 again, allow until the first, deny until
    // the second.
    let allow = [w("allow Sun 01:00-02:30 Europe/Berlin")];
    assert!(open(&allow, "2026-10-25T00:29:59Z"));
    assert!(!open(&allow, "2026-10-25T00:30:00Z"));
    assert!(!open(&allow, "2026-10-25T01:15:00Z"), "the second 02:15");
    let deny = [w("deny Sun 01:00-02:30 Europe/Berlin")];
    assert!(!open(&deny, "2026-10-25T01:15:00Z"), "the second 02:15");
    assert!(open(&deny, "2026-10-25T01:30:00Z"));
}

/// America/Havana changes at local midnight (2026-03-08, 00:00 CST to
/// 01:00 CDT): a day's end and the next day's start fall in the gap.
#[test]
fn a_change_at_midnight_leaves_no_hole_in_touching_days() {
    let zone = jiff::tz::db().get("America/Havana").unwrap();
    let before = jiff::Timestamp::from_second(at("2026-03-08T04:59:59Z").as_secs() as i64).unwrap();
    let after = jiff::Timestamp::from_second(at("2026-03-08T05:00:00Z").as_secs() as i64).unwrap();
    assert_ne!(
        zone.to_offset(before),
        zone.to_offset(after),
        "the change is where this test says"
    );
    let days = [w("allow Sat-Sun 00:00-24:00 America/Havana")];
    for now in [
        "2026-03-08T04:30:00Z",
        "2026-03-08T04:59:59Z",
        "2026-03-08T05:00:00Z",
    ] {
        assert!(open(&days, now), "{now}");
    }
    // Split across two windows of one list, the days still touch.
    let split = [
        w("allow Sun 00:00-24:00 America/Havana"),
        w("allow Sat 00:00-24:00 America/Havana"),
    ];
    assert!(open(&split, "2026-03-08T04:30:00Z"));
    // A window that starts at that midnight starts when the clock passes it.
    let sunday = [w("allow Sun 00:00-02:00 America/Havana")];
    assert!(!open(&sunday, "2026-03-08T04:30:00Z"), "Saturday 23:30 CST");
    assert!(open(&sunday, "2026-03-08T05:00:00Z"), "Sunday 01:00 CDT");
}

/// Europe/London changes at 01:00 local (2026-03-29, 01:00 GMT to 02:00
/// BST), an hour before Berlin's wall clock does.
#[test]
fn london_spring_forward_at_one() {
    let allow = [w("allow Sun 00:30-01:30 Europe/London")];
    // 00:30 GMT is 00:30 UTC; 01:30 falls in the gap: allow ends at its
    // earlier reading, 01:30 BST = 00:30 UTC: the window is empty.
    assert!(!open(&allow, "2026-03-29T00:30:00Z"));
    let deny = [w("deny Sun 00:30-01:30 Europe/London")];
    assert!(!open(&deny, "2026-03-29T00:30:00Z"));
    assert!(
        !open(&deny, "2026-03-29T01:29:59Z"),
        "01:30 GMT is 01:30 UTC"
    );
    assert!(open(&deny, "2026-03-29T01:30:00Z"));
}

const ZONES: [&str; 6] = [
    "UTC",
    "Europe/Berlin",
    "Europe/London",
    "America/New_York",
    "America/Havana",
    "Australia/Lord_Howe",
];

/// 2026-01-01T00:00:00Z and the year after it.
const YEAR: std::ops::Range<u64> = 1_767_225_600..1_767_225_600 + 366 * 24 * 3600;

fn weekly_text() -> impl Strategy<Value = String> {
    (
        prop::bool::ANY,
        prop::collection::btree_set(0usize..7, 1..4),
        0u16..1440,
        1u16..1441,
        prop::sample::select(&ZONES[..]),
    )
        .prop_filter("equal times", |(_, _, a, b, _)| a != b)
        .prop_map(|(allow, days, start, end, zone)| {
            let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
            let days: Vec<&str> = days.into_iter().map(|d| names[d]).collect();
            format!(
                "{} {} {}-{} {zone}",
                if allow { "allow" } else { "deny" },
                days.join(","),
                parse::clock(start),
                parse::clock(end)
            )
        })
}

fn interval_text() -> impl Strategy<Value = String> {
    (prop::bool::ANY, YEAR, 1u64..10 * 24 * 3600).prop_map(|(allow, start, len)| {
        format!(
            "{} {}/{}",
            if allow { "allow" } else { "deny" },
            UnixTime::from_secs(start),
            UnixTime::from_secs(start + len)
        )
    })
}

fn windows() -> impl Strategy<Value = Vec<DeletionWindow>> {
    prop::collection::vec(prop_oneof![weekly_text(), interval_text()], 0..5)
        .prop_map(|texts| texts.iter().map(|t| w(t)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn deny_always_wins(mut list in windows(), now in YEAR, before in 0u64..3600, len in 1u64..7200) {
        let deny = format!(
            "deny {}/{}",
            UnixTime::from_secs(now - before),
            UnixTime::from_secs(now + len)
        );
        list.push(w(&deny));
        let Gate::Closed(closed) = gate(&[&list], Some(UnixTime::from_secs(now))) else {
            panic!("open inside {deny}")
        };
        prop_assert!(closed.opens_at.is_none_or(|t| t.as_secs() >= now + len));
    }

    #[test]
    fn a_whole_week_of_allow_allows_everything(
        zone in prop::sample::select(&ZONES[..]),
        split in 1usize..7,
        now in YEAR,
    ) {
        let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
        let list = [
            w(&format!("allow {} 00:00-24:00 {zone}", names[..split].join(","))),
            w(&format!("allow {}-Sun 00:00-24:00 {zone}", names[split])),
        ];
        prop_assert_eq!(gate(&[&list], Some(UnixTime::from_secs(now))), Gate::Open);
    }

    #[test]
    fn the_answer_never_depends_on_order(
        list in windows(),
        other in windows(),
        now in YEAR,
        seed in any::<u64>(),
    ) {
        let now = Some(UnixTime::from_secs(now));
        let mut shuffled = list.clone();
        let n = shuffled.len().max(1);
        shuffled.rotate_left((seed as usize) % n);
        shuffled.reverse();
        prop_assert_eq!(gate(&[&list, &other], now), gate(&[&shuffled, &other], now));
    }

    #[test]
    fn the_closing_is_closed_and_nothing_before_it_is(list in windows(), other in windows(), now in YEAR, probe in 0u64..1000) {
        let lists = [&list[..], &other[..]];
        let start = UnixTime::from_secs(now);
        match closes_at(&lists, start) {
            Some(t) if gate(&lists, Some(start)) == Gate::Open => {
                prop_assert!(t.as_secs() > now);
                prop_assert_ne!(gate(&lists, Some(t)), Gate::Open);
                let before = now + (t.as_secs() - 1 - now) * probe / 1000;
                prop_assert_eq!(gate(&lists, Some(UnixTime::from_secs(before))), Gate::Open);
            }
            Some(t) => prop_assert_eq!(t, start),
            None => prop_assert_eq!(gate(&lists, Some(start)), Gate::Open),
        }
    }

    #[test]
    fn the_opening_is_open_and_nothing_before_it_is(list in windows(), now in YEAR, probe in 0u64..1000) {
        if let Gate::Closed(Closed { opens_at: Some(t), .. }) = gate(&[&list], Some(UnixTime::from_secs(now))) {
            prop_assert!(t.as_secs() > now);
            prop_assert_eq!(gate(&[&list], Some(t)), Gate::Open);
            let before = now + (t.as_secs() - now) * probe / 1000;
            prop_assert_ne!(gate(&[&list], Some(UnixTime::from_secs(before))), Gate::Open);
        }
    }
}
