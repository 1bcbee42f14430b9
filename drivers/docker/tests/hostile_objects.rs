//! Stack objects, volume listings, and the service and container listings
//! that say what uses what, of somebody else's swarm are hostile
//! input: against fake daemons on unix sockets (no Docker engine needed),
//! every malformed, partial or oversized answer is an error naming what
//! was read, never a panic and never a shorter list.

use std::path::Path;
use std::time::Duration;

use sweep_core::usage::{ContainerUse, ServiceUse};
use sweep_docker::{DockerNode, DockerSwarm, Endpoint, REPLY_LIMIT};
use sweep_swarms::{BackendError, NodeBackend, ReplyLimit, ServiceEntry, SwarmBackend};
use sweep_testkit::fake_daemon::{FakeDaemon, Reply, Routes};

/// A daemon answering `replies` per path (without version or query); any
/// other path is an empty list.
fn spawn_daemon(dir: &Path, name: &str, replies: &[(&'static str, Reply)]) -> Endpoint {
    let routes = replies.iter().cloned().fold(
        Routes::new().otherwise(Reply::json("[]")),
        |routes, (path, reply)| routes.on(path, reply),
    );
    let endpoint = FakeDaemon::new(routes).listen_unix(&dir.join(format!("{name}.sock")));
    Endpoint::parse(&endpoint, None).unwrap()
}

fn json(value: serde_json::Value) -> Reply {
    Reply::json(value.to_string())
}

/// A body that goes on until the client hangs up (at most four times the
/// limit).
fn endless() -> Reply {
    Reply::endless("[", 4 * REPLY_LIMIT)
}

const NS: &str = "com.docker.stack.namespace";

async fn swarm(dir: &Path, name: &str, replies: &[(&'static str, Reply)]) -> DockerSwarm {
    DockerSwarm::connect(&spawn_daemon(dir, name, replies), Duration::from_secs(30))
        .await
        .unwrap()
}

fn assert_invalid<T: std::fmt::Debug>(case: &str, result: Result<T, BackendError>) {
    assert!(
        matches!(result, Err(BackendError::Invalid { .. })),
        "{case}: {result:?}"
    );
}

fn assert_too_large<T: std::fmt::Debug>(case: &str, result: Result<T, BackendError>) {
    assert!(
        matches!(result, Err(BackendError::TooLarge { .. })),
        "{case}: {result:?}"
    );
}

#[tokio::test]
async fn well_formed_listings_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let s = swarm(
        dir.path(),
        "ok",
        &[
            (
                "/services",
                json(serde_json::json!([{"ID": "s1", "Version": {"Index": 5},
                    "Spec": {"Name": "app_web", "Labels": {NS: "app", "swarm-sweep.keep": "true"}}}])),
            ),
            (
                "/networks",
                json(serde_json::json!([{"Id": "n1", "Name": "app_default", "Scope": "swarm",
                    "Attachable": false, "Labels": {NS: "app"}}])),
            ),
            (
                "/volumes",
                json(serde_json::json!({"Volumes": [{"Name": "app_data", "Driver": "local",
                    "Mountpoint": "/m", "Labels": {NS: "app"}, "Scope": "local", "Options": {}}],
                    "Warnings": null})),
            ),
            ("/info", json(serde_json::json!({"Swarm": {"NodeID": "node-1"}}))),
        ],
    )
    .await;
    let stacks = s.stack_objects().await.unwrap().unwrap();
    assert_eq!(
        stacks["app"].services,
        vec![ServiceEntry::new("s1", "app_web", 5).with_keep("true")]
    );
    assert_eq!(
        stacks["app"].networks,
        [sweep_core::objects::ObjectRef::new("n1", "app_default")]
    );
    assert_eq!(s.own_node_id().await.unwrap().as_deref(), Some("node-1"));
    let volumes = s.volumes_by_stack().await.unwrap().unwrap();
    assert_eq!(volumes["app"], ["app_data"]);
}

#[tokio::test]
async fn malformed_stack_objects_are_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, &'static str, serde_json::Value)> = vec![
        (
            "a service without an id",
            "/services",
            serde_json::json!([{"Version": {"Index": 1}, "Spec": {"Name": "a", "Labels": {NS: "app"}}}]),
        ),
        (
            "a service without a name",
            "/services",
            serde_json::json!([{"ID": "s1", "Version": {"Index": 1}, "Spec": {"Labels": {NS: "app"}}}]),
        ),
        (
            "a service without a version",
            "/services",
            serde_json::json!([{"ID": "s1", "Spec": {"Name": "a", "Labels": {NS: "app"}}}]),
        ),
        (
            "a negative version",
            "/services",
            serde_json::json!([{"ID": "s1", "Version": {"Index": -1}, "Spec": {"Name": "a"}}]),
        ),
        (
            "a spec that is no object",
            "/services",
            serde_json::json!([{"ID": "s1", "Version": {"Index": 1}, "Spec": "x"}]),
        ),
        ("not a list", "/services", serde_json::json!({"ID": "s1"})),
        (
            "a network without a name",
            "/networks",
            serde_json::json!([{"Id": "n1", "Labels": {NS: "app"}}]),
        ),
        (
            "a secret without an id",
            "/secrets",
            serde_json::json!([{"Spec": {"Name": "t", "Labels": {NS: "app"}}}]),
        ),
        (
            "a config that is empty",
            "/configs",
            serde_json::json!([{}]),
        ),
        (
            "labels that are no map",
            "/configs",
            serde_json::json!([{"ID": "c1", "Spec": {"Name": "c", "Labels": ["x"]}}]),
        ),
    ];
    for (i, (case, path, body)) in cases.into_iter().enumerate() {
        let s = swarm(dir.path(), &format!("bad{i}"), &[(path, json(body))]).await;
        assert_invalid(case, s.stack_objects().await);
    }
}

#[tokio::test]
async fn malformed_or_incomplete_volume_listings_are_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let volume = |name: serde_json::Value| {
        serde_json::json!({"Name": name, "Driver": "local", "Mountpoint": "/m",
            "Labels": {NS: "app"}, "Scope": "local", "Options": {}})
    };
    let cases: Vec<(&str, serde_json::Value)> = vec![
        (
            "a volume with an empty name",
            serde_json::json!({"Volumes": [volume(serde_json::json!(""))]}),
        ),
        (
            "a volume without a name",
            serde_json::json!({"Volumes": [{"Driver": "local", "Labels": {NS: "app"}}]}),
        ),
        (
            "a listing the daemon says is incomplete",
            serde_json::json!({"Volumes": [volume(serde_json::json!("app_data"))],
                "Warnings": ["plugin \"nfs\" did not answer"]}),
        ),
        ("not an object", serde_json::json!(["app_data"])),
    ];
    for (i, (case, body)) in cases.into_iter().enumerate() {
        let endpoint = spawn_daemon(dir.path(), &format!("vol{i}"), &[("/volumes", json(body))]);
        let node = DockerNode::connect(&endpoint, Duration::from_secs(30))
            .await
            .unwrap();
        assert_invalid(case, node.volumes_by_stack().await);
        let manager = DockerSwarm::connect(&endpoint, Duration::from_secs(30))
            .await
            .unwrap();
        assert_invalid(case, manager.volumes_by_stack().await);
    }
}

#[tokio::test]
async fn a_daemon_without_a_node_id_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    for (i, info) in [
        serde_json::json!({"Swarm": {"NodeID": ""}}),
        serde_json::json!({"Swarm": {}}),
        serde_json::json!({}),
    ]
    .into_iter()
    .enumerate()
    {
        let s = swarm(
            dir.path(),
            &format!("info{i}"),
            &[("/info", json(info.clone()))],
        )
        .await;
        assert_invalid(&info.to_string(), s.own_node_id().await);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_listings_are_refused_at_the_byte_limit() {
    let dir = tempfile::tempdir().unwrap();
    let s = swarm(dir.path(), "endless", &[("/networks", endless())]).await;
    let e = s.stack_objects().await.unwrap_err();
    assert!(
        matches!(&e, BackendError::TooLarge { what, limit: ReplyLimit::Bytes(_), .. }
            if what == "the stack networks"),
        "{e:?}"
    );
    let s = swarm(dir.path(), "endless-volumes", &[("/volumes", endless())]).await;
    assert_too_large("endless volumes", s.volumes_by_stack().await);
}

#[tokio::test]
async fn what_uses_what_is_read_and_a_user_that_cannot_be_told_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let s = swarm(
        dir.path(),
        "uses",
        &[
            (
                "/services",
                json(serde_json::json!([{"ID": "s1", "Version": {"Index": 5},
                    "Spec": {"Name": "byhand", "Mode": {"Replicated": {"Replicas": 0}},
                        "TaskTemplate": {"ContainerSpec": {"Image": "x",
                            "Mounts": [{"Type": "volume", "Source": "gone_data", "Target": "/d"}]}}}}])),
            ),
            (
                "/containers/json",
                json(serde_json::json!([{"Id": "c1", "Names": ["/manual"], "State": "exited",
                    "Mounts": [{"Type": "volume", "Name": "gone_data", "Destination": "/d"}]}])),
            ),
        ],
    )
    .await;
    assert_eq!(
        s.service_uses().await.unwrap(),
        Some(vec![
            ServiceUse::new("s1", "byhand").with_volumes(["gone_data"])
        ])
    );
    let manual = ContainerUse::new("c1", "manual", ["gone_data"]);
    assert_eq!(s.containers().await.unwrap(), Some(vec![manual]));

    let cases: Vec<(&str, &'static str, serde_json::Value)> = vec![
        (
            "a service without an id",
            "/services",
            serde_json::json!([{"Spec": {"Name": "a"}}]),
        ),
        (
            "a service without a name",
            "/services",
            serde_json::json!([{"ID": "s1", "Spec": {}}]),
        ),
        ("services not a list", "/services", serde_json::json!({})),
        (
            "a container with a volume and no id",
            "/containers/json",
            serde_json::json!([{"Names": ["/x"], "Mounts": [{"Type": "volume", "Name": "v"}]}]),
        ),
        (
            "containers not a list",
            "/containers/json",
            serde_json::json!({"Id": "c1"}),
        ),
    ];
    for (i, (case, path, body)) in cases.into_iter().enumerate() {
        let endpoint = spawn_daemon(dir.path(), &format!("use{i}"), &[(path, json(body))]);
        let s = DockerSwarm::connect(&endpoint, Duration::from_secs(30))
            .await
            .unwrap();
        let node = DockerNode::connect(&endpoint, Duration::from_secs(30))
            .await
            .unwrap();
        if path == "/services" {
            assert_invalid(case, s.service_uses().await);
        } else {
            assert_invalid(case, s.containers().await);
            assert_invalid(case, node.containers().await);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_service_and_container_listings_are_refused_at_the_byte_limit() {
    let dir = tempfile::tempdir().unwrap();
    let s = swarm(
        dir.path(),
        "endless-uses",
        &[("/services", endless()), ("/containers/json", endless())],
    )
    .await;
    assert_too_large("endless services", s.service_uses().await);
    assert_too_large("endless containers", s.containers().await);
}
