//! A registry file whose `agent_image` is not an image reference: exit 2
//! naming the file and the field, before any swarm is read.

use crate::support;

use support::{run_without_daemon, stderr};

#[test]
fn an_agent_image_that_climbs_the_request_path_is_exit_2_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("registry.toml");
    std::fs::write(
        &config,
        "[[swarm]]\nname = \"a\"\nmanager = \"unix:///nonexistent/a.sock\"\nnode_reach = \"job\"\nagent_image = \"../../containers/x\"\n",
    )
    .unwrap();
    let apps = dir.path().join("apps.json");
    std::fs::write(&apps, r#"{"loaded": true, "applications": []}"#).unwrap();
    let out = run_without_daemon(&[
        "plan",
        "--config",
        config.to_str().unwrap(),
        "--app-set",
        apps.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(config.to_str().unwrap()), "{err}");
    assert!(err.contains("swarm \"a\": agent_image"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
