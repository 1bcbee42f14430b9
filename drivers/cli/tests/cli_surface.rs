//! The command-line surface: completions and the man page, help on every
//! flag, refused combinations, durations, the log filter and the
//! environment defaults. Every refusal is exit status 2 with one line on
//! stderr that names the flag or variable at fault.

use std::process::{Command, Output};

// The very definitions the binary parses with.
#[allow(dead_code)]
#[path = "../src/cli.rs"]
mod cli;
use crate::support;

use support::{root, run, stderr, stdout, sweep};

fn example(name: &str) -> String {
    root().join("examples").join(name).display().to_string()
}

fn assert_refused(out: &Output, words: &[&str], what: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    for word in words {
        assert!(err.contains(word), "{what}: {word:?} not named: {err}");
    }
    assert!(stdout(out).is_empty(), "{what}: {}", stdout(out));
}

const SUBCOMMANDS: &[&str] = &[
    "snapshot",
    "plan",
    "apply",
    "explain",
    "watch",
    "completions",
    "man",
];

#[test]
fn completions_name_every_subcommand_and_flag() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell}: no {sub}");
        }
        for flag in [
            "snapshot",
            "app-set",
            "detailed-exitcode",
            "settle-timeout",
            "yes",
        ] {
            assert!(script.contains(flag), "{shell}: no --{flag}");
        }
    }
    assert!(stdout(&run(&["completions", "bash"])).contains("complete -F"));
    assert!(stdout(&run(&["completions", "zsh"])).starts_with("#compdef swarm-sweep"));
    assert!(stdout(&run(&["completions", "fish"])).contains("complete -c swarm-sweep"));
    assert_refused(&run(&["completions", "tcsh"]), &["tcsh"], "unknown shell");
}

#[test]
fn man_is_a_roff_page_with_every_subcommand_and_the_exit_status() {
    let out = run(&["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(
        page.lines().any(|l| l.starts_with(".TH swarm-sweep 1")),
        "{page}"
    );
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION"] {
        assert!(page.contains(&format!(".SH {section}")), "no {section}");
    }
    for sub in SUBCOMMANDS {
        assert!(
            page.contains(&format!(".SH \"SWARM-SWEEP {}\"", sub.to_uppercase())),
            "no section for {sub}"
        );
    }
    // roff escapes the dashes of flags.
    for flag in [
        "snapshot",
        "detailed\\-exitcode",
        "retry\\-interval",
        "plan",
    ] {
        assert!(page.contains(&format!("\\-\\-{flag}")), "no --{flag}");
    }
    assert!(page.contains("detailed\\-exitcode: the plan deletes something"));
    assert!(page.contains("SWARM_SWEEP_APP_SET"));
    if let Ok(man) = Command::new("man").arg("--version").output() {
        if man.status.success() {
            // A page man itself can format, when man is installed.
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("swarm-sweep.1");
            std::fs::write(&file, &page).unwrap();
            let shown = Command::new("man")
                .arg("-l")
                .arg(&file)
                .env("MANPAGER", "cat")
                .env("MANWIDTH", "100")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&shown.stdout);
            assert!(
                shown.status.success() && text.contains("--settle-timeout"),
                "{text}"
            );
        }
    }
}

/// Every flag and positional of every command, with its command's path.
fn arguments(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Arg)>) {
    for arg in cmd.get_arguments() {
        out.push((path.to_owned(), arg.clone()));
    }
    for sub in cmd.get_subcommands() {
        arguments(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[test]
fn every_flag_of_every_command_has_help_with_an_example() {
    let mut cmd = cli::command();
    cmd.build();
    let mut all = Vec::new();
    arguments(&cmd, "swarm-sweep", &mut all);
    assert!(all.len() > 40, "{}", all.len());
    for (path, arg) in &all {
        let id = arg.get_id().as_str();
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(!help.trim().is_empty(), "{path}: {id} has no help");
        // clap's own --help and --version explain themselves.
        if matches!(id, "help" | "version") {
            continue;
        }
        let example = match arg.get_long() {
            Some(long) => format!("E.g. `--{long}"),
            None => "E.g. `".to_owned(),
        };
        assert!(
            help.contains(&example),
            "{path}: {id} has no example ({example}...): {help}"
        );
    }
    for sub in cmd.get_subcommands() {
        assert!(sub.get_about().is_some(), "{} has no about", sub.get_name());
    }
}

#[test]
fn refused_combinations_are_one_line_and_exit_2() {
    let snap = example("one-swarm.json");
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["plan", "--snapshot", &snap, "--config", "r.toml"],
            &["--config", "--snapshot"],
        ),
        (
            &["plan", "--snapshot", &snap, "--timeout", "5s"],
            &["--timeout", "--snapshot"],
        ),
        (
            &["plan", "--snapshot", &snap, "--context", "prod"],
            &["--context", "--snapshot"],
        ),
        (
            &["plan", "--snapshot", &snap, "--self-stack", "s"],
            &["--self-stack", "--snapshot"],
        ),
        (
            &["plan", "--snapshot", &snap, "--controller", "c"],
            &["--controller", "--snapshot"],
        ),
        (
            &["plan", "--snapshot", &snap, "--prune-volumes"],
            &["--prune-volumes", "--snapshot"],
        ),
        (
            &["plan", "--snapshot", &snap, "--max-deletions", "3"],
            &["--max-deletions", "--snapshot"],
        ),
        (
            &[
                "explain",
                "a/web",
                "--snapshot",
                &snap,
                "--config",
                "r.toml",
            ],
            &["--config", "--snapshot"],
        ),
        (
            &["explain", "a/web", "--snapshot", &snap, "--timeout", "1s"],
            &["--timeout", "--snapshot"],
        ),
        (
            &[
                "apply",
                "--app-set",
                "a",
                "--config",
                "r.toml",
                "--context",
                "x",
            ],
            &["--context", "--config"],
        ),
        (
            &[
                "snapshot",
                "--app-set",
                "a",
                "--config",
                "r.toml",
                "--self-stack",
                "x",
            ],
            &["--self-stack", "--config"],
        ),
        (&["plan"], &["--snapshot", "--app-set"]),
        (&["explain", "a/web"], &["--snapshot", "--app-set"]),
        (&["explain", "web", "--snapshot", &snap], &["SWARM/RELEASE"]),
        (&["apply"], &["--app-set"]),
        (
            &["plan", "--snapshot", &snap, "--format", "yaml"],
            &["--format", "yaml"],
        ),
        (
            &["plan", "--snapshot", &snap, "--confg", "x"],
            &["--confg", "--config"],
        ),
        (
            &["apply", "--app-set", "a", "--concurrency", "0"],
            &["--concurrency"],
        ),
    ];
    for (args, words) in cases {
        assert_refused(&run(args), words, &args.join(" "));
    }
}

#[test]
fn durations_take_units_or_bare_seconds_and_bad_ones_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let apps = dir.path().join("missing-apps.yaml");
    let apps = apps.to_str().unwrap();
    // Accepted: the run gets as far as reading the app set.
    for (flag, value) in [
        ("--timeout", "30s"),
        ("--timeout", "2m"),
        ("--timeout", "1h"),
        ("--timeout", "1500ms"),
        ("--timeout", "15"),
        ("--retry-interval", "500ms"),
        ("--retry-interval", "0.5"),
        ("--settle-timeout", "2m"),
        ("--settle-timeout", "45"),
    ] {
        let out = run(&["apply", "--app-set", apps, flag, value]);
        assert_refused(&out, &["missing-apps.yaml"], &format!("{flag} {value}"));
        assert!(
            !stderr(&out).contains(flag),
            "{flag} {value}: {}",
            stderr(&out)
        );
    }
    // Refused, naming the flag and the value.
    for (flag, value) in [
        ("--timeout", "0"),
        ("--timeout", "0s"),
        ("--timeout", "-5s"),
        ("--timeout", "soon"),
        ("--timeout", "500ms"),
        ("--timeout", "2h"),
        ("--retry-interval", "0"),
        ("--retry-interval", "-1"),
        ("--retry-interval", "abc"),
        ("--retry-interval", "1e3"),
        ("--settle-timeout", "0ms"),
        ("--settle-timeout", "3d"),
        ("--settle-timeout", ""),
    ] {
        let out = run(&["apply", "--app-set", apps, &format!("{flag}={value}")]);
        assert_refused(&out, &[flag], &format!("{flag} {value}"));
        assert!(!stderr(&out).contains("missing-apps"), "{}", stderr(&out));
    }
}

#[test]
fn a_bad_log_filter_is_refused_naming_its_variable() {
    let snap = example("one-swarm.json");
    for (var, value) in [
        ("SWARM_SWEEP_LOG", "info,=[oops"),
        ("SWARM_SWEEP_LOG", "sweep=loud"),
        ("RUST_LOG", "x=nolevel"),
    ] {
        let out = sweep()
            .args(["plan", "--snapshot", &snap])
            .env(var, value)
            .output()
            .unwrap();
        assert_refused(&out, &[var, "log filter"], &format!("{var}={value}"));
    }
    // SWARM_SWEEP_LOG wins over RUST_LOG: a good one hides a bad RUST_LOG.
    let out = sweep()
        .args(["plan", "--snapshot", &snap])
        .env("SWARM_SWEEP_LOG", "info")
        .env("RUST_LOG", "x=nolevel")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = sweep()
        .args(["plan", "--snapshot", &snap])
        .env("RUST_LOG", "debug")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn the_environment_names_the_default_config_and_app_set() {
    let dir = tempfile::tempdir().unwrap();
    let apps = dir.path().join("apps.json");
    std::fs::write(&apps, r#"{"loaded": true, "applications": []}"#).unwrap();
    let missing_apps = dir.path().join("env-apps.yaml");
    let missing_config = dir.path().join("env-registry.toml");
    let snap = example("one-swarm.json");

    // The app set from the environment is read.
    let out = sweep()
        .arg("plan")
        .env("SWARM_SWEEP_APP_SET", &missing_apps)
        .output()
        .unwrap();
    assert_refused(&out, &["env-apps.yaml"], "app set from the environment");
    // So is the registry file.
    let out = sweep()
        .arg("snapshot")
        .env("SWARM_SWEEP_APP_SET", &apps)
        .env("SWARM_SWEEP_CONFIG", &missing_config)
        .output()
        .unwrap();
    assert_refused(&out, &["env-registry.toml"], "config from the environment");
    // A flag wins over the environment.
    let out = sweep()
        .args(["plan", "--app-set", "flag-apps.yaml"])
        .env("SWARM_SWEEP_APP_SET", &missing_apps)
        .output()
        .unwrap();
    assert_refused(&out, &["flag-apps.yaml"], "flag over environment");
    assert!(!stderr(&out).contains("env-apps"), "{}", stderr(&out));

    // Defaults from the environment do not conflict with --snapshot: they
    // are defaults, not requests.
    let with_env = |args: &[&str]| {
        sweep()
            .args(args)
            .env("SWARM_SWEEP_APP_SET", &missing_apps)
            .env("SWARM_SWEEP_CONFIG", &missing_config)
            .output()
            .unwrap()
    };
    let out = with_env(&["plan", "--snapshot", &snap]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(plan["deletions"].as_array().unwrap().len(), 2);
    let out = with_env(&["explain", "/shop", "--snapshot", &snap]);
    let err = stderr(&out);
    assert!(
        !err.contains("cannot be used") && !err.contains("env-"),
        "explain --snapshot refused over an environment default: {err}"
    );
    // ...while --app-set given on the command line is the app set
    // planned on the snapshot: read, and a missing one is bad input
    // named as given, not the environment's.
    let out = sweep()
        .args(["plan", "--snapshot", &snap, "--app-set", "a.yaml"])
        .env("SWARM_SWEEP_APP_SET", &missing_apps)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("a.yaml") && !err.contains(missing_apps.to_str().unwrap()),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn help_shows_the_exit_status_table_and_the_environment() {
    let out = run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    for line in [
        "  3  apply --plan: the saved plan is stale",
        "  4  plan --detailed-exitcode: the plan deletes something and nothing else is wrong",
        "SWARM_SWEEP_LOG",
        "NO_COLOR",
    ] {
        assert!(help.contains(line), "{line:?} missing:\n{help}");
    }
    let out = run(&["plan", "--help"]);
    assert!(
        stdout(&out).contains("[env: SWARM_SWEEP_APP_SET"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn json_is_the_default_format_through_a_pipe() {
    let out = run(&["plan", "--snapshot", &example("one-swarm.json")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with('{'), "{}", stdout(&out));
    assert!(!stdout(&out).contains('\u{1b}'));
}
