//! The seam's contract (`sweep_testkit::contract`) against real Docker
//! 20.10 engines: swarm gamma of the test bed (`tests/testbed/bed`), read
//! through a registry file that reaches its manager `gamma-1` and leaves
//! `gamma-2` unreachable. The in-memory registry runs the same checks
//! (`sweep-testkit`'s `tests/contract.rs`).
//!
//! Every name starts with `ct-` and is unique to its run, so the checks
//! run beside other users of the bed; each removes what it created, also
//! when it fails.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::bed;

use async_trait::async_trait;
use bed::{
    configs_removed_since, create_record, deploy_stack, docker, node_id, sock, unique,
    wait_running, Cleanup, IMAGE,
};
use sweep_core::record::labels::CD_CREATED;
use sweep_docker::labels::STACK_NAMESPACE;
use sweep_docker::FileRegistry;
use sweep_swarms::{Registry, StackPart, Target};
use sweep_testkit::contract::{Capabilities, Fixture};

const MANAGER: &str = "gamma-1";
const AWAY: &str = "gamma-2";

struct Bed {
    registry: FileRegistry,
    dir: tempfile::TempDir,
    since: u64,
    cleanup: Cleanup,
}

impl Bed {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let file: PathBuf = dir.path().join("registry.toml");
        let manager = sock(MANAGER);
        std::fs::write(
            &file,
            format!(
                "[[swarm]]\nname = \"gamma\"\nmanager = \"{manager}\"\n\n\
                 [[swarm.node]]\nendpoint = \"{manager}\"\n"
            ),
        )
        .unwrap();
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Bed {
            registry: FileRegistry::load(&file).unwrap_or_else(|e| panic!("{e}")),
            dir,
            since,
            cleanup: Cleanup::new(),
        }
    }
}

#[async_trait]
impl Fixture for Bed {
    fn registry(&self) -> &dyn Registry {
        &self.registry
    }

    fn target(&self) -> Target {
        Target::new("gamma")
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            mounted_secret_refused: true,
        }
    }

    fn name(&mut self, prefix: &str) -> String {
        unique(prefix)
    }

    async fn record(&mut self, config: &str, release: &str, revision: u64, owner: Option<&str>) {
        create_record(
            MANAGER,
            &mut self.cleanup,
            config,
            release,
            revision,
            owner,
            &[],
        );
    }

    async fn record_with_data(
        &mut self,
        config: &str,
        release: &str,
        revision: u64,
        owner: Option<&str>,
        data: &[u8],
    ) {
        use sweep_docker::labels::{OWNER, RECORD_TYPE, RELEASE, REVISION, STATUS, TYPE};
        // The data through a file: it is gzip, not text.
        let file = self.dir.path().join(format!("{config}.data"));
        std::fs::write(&file, data).unwrap();
        let revision = revision.to_string();
        let mut labels = vec![
            (TYPE, RECORD_TYPE),
            (RELEASE, release),
            (REVISION, revision.as_str()),
            (STATUS, "deployed"),
        ];
        labels.extend(owner.map(|o| (OWNER, o)));
        let mut args = vec!["config".to_owned(), "create".to_owned()];
        for (k, v) in labels {
            args.extend(["--label".to_owned(), format!("{k}={v}")]);
        }
        args.extend([config.to_owned(), file.display().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        docker(MANAGER, &args);
        self.cleanup.add(MANAGER, &["config", "rm", config]);
    }

    async fn stack_object(
        &mut self,
        release: &str,
        part: StackPart,
        name: &str,
        marker: Option<&str>,
    ) {
        let kind = match part {
            StackPart::Configs => "config",
            StackPart::Secrets => "secret",
            other => panic!("{other} is no secret or config"),
        };
        let file = self.dir.path().join(format!("{name}.txt"));
        std::fs::write(&file, "made by hand").unwrap();
        let namespace = format!("{STACK_NAMESPACE}={release}");
        let marker = marker.map(|m| format!("{CD_CREATED}={m}"));
        let mut args = vec![kind, "create", "--label", &namespace];
        if let Some(marker) = &marker {
            args.extend(["--label", marker]);
        }
        let path = file.display().to_string();
        args.extend([name, &path]);
        docker(MANAGER, &args);
        self.cleanup.add(MANAGER, &[kind, "rm", name]);
    }

    async fn deploy(&mut self, release: &str) {
        deploy_stack(MANAGER, &mut self.cleanup, self.dir.path(), release);
        wait_running(MANAGER, &format!("{release}_web"));
    }

    async fn volume(&mut self, name: &str, release: &str) {
        let label = format!("{STACK_NAMESPACE}={release}");
        docker(MANAGER, &["volume", "create", "--label", &label, name]);
        self.cleanup.add(MANAGER, &["volume", "rm", name]);
    }

    async fn container_using(&mut self, volume: &str) {
        let name = format!("{volume}-user");
        let mount = format!("{volume}:/d");
        docker(
            MANAGER,
            &["create", "--name", &name, "-v", &mount, IMAGE, "true"],
        );
        self.cleanup.add(MANAGER, &["rm", "-f", &name]);
    }

    async fn container_goes(&mut self, release: &str) {
        // Removed once it exits.
        let label = format!("{STACK_NAMESPACE}={release}");
        docker(
            MANAGER,
            &[
                "run",
                "--rm",
                "--pull",
                "never",
                "--network",
                "none",
                "--label",
                &label,
                IMAGE,
                "true",
            ],
        );
    }

    async fn unreachable_node(&mut self) -> String {
        node_id(AWAY).unwrap_or_else(|| panic!("{AWAY} reports no node id"))
    }

    async fn removed_configs(&self, names: &[String]) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let removed = configs_removed_since(MANAGER, self.since, names);
            if removed.len() >= names.len() || Instant::now() > deadline {
                return removed;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

sweep_testkit::contract_suite!(Bed::new());
