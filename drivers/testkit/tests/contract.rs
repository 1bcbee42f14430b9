//! The seam's contract (`sweep_testkit::contract`) against the in-memory
//! registry; `sweep-docker`'s `tests/contract.rs` runs the same checks
//! against real engines.

use async_trait::async_trait;
use sweep_swarms::{Registry, StackPart, Target};
use sweep_testkit::contract::{Capabilities, Fixture};
use sweep_testkit::{
    MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm, MemoryVolume,
};

const SWARM: &str = "ct";
const MANAGER: &str = "ct-m";
const WORKER: &str = "ct-w";

/// One swarm of two nodes, the manager first.
struct Memory {
    registry: MemoryRegistry,
    names: u32,
}

impl Memory {
    fn new() -> Self {
        Memory {
            registry: MemoryRegistry::new().with_swarm(
                MemorySwarm::new(SWARM, "cluster-ct")
                    .node(MemoryNode::new(MANAGER, "ct-manager"))
                    .node(MemoryNode::new(WORKER, "ct-worker")),
            ),
            names: 0,
        }
    }
}

#[async_trait]
impl Fixture for Memory {
    fn registry(&self) -> &dyn Registry {
        &self.registry
    }

    fn target(&self) -> Target {
        Target::new(SWARM)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            mounted_secret_refused: false,
        }
    }

    fn name(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    async fn record(&mut self, config: &str, release: &str, revision: u64, owner: Option<&str>) {
        self.registry
            .add_record(
                SWARM,
                MemoryRecord::new(release, revision, owner).with_id(config),
            )
            .unwrap();
    }

    async fn record_with_data(
        &mut self,
        config: &str,
        release: &str,
        revision: u64,
        owner: Option<&str>,
        data: &[u8],
    ) {
        self.registry
            .add_record(
                SWARM,
                MemoryRecord::new(release, revision, owner)
                    .with_id(config)
                    .with_data(data),
            )
            .unwrap();
    }

    async fn stack_object(
        &mut self,
        release: &str,
        part: StackPart,
        name: &str,
        marker: Option<&str>,
    ) {
        let stack = self.registry.stack(SWARM, release).unwrap_or_default();
        let stack = match (part, marker) {
            (StackPart::Configs, Some(m)) => stack.marked_config(name, m),
            (StackPart::Configs, None) => stack.config(name),
            (StackPart::Secrets, Some(m)) => stack.marked_secret(name, m),
            (StackPart::Secrets, None) => stack.secret(name),
            (other, _) => panic!("{other} is no secret or config"),
        };
        self.registry.set_stack(SWARM, release, stack).unwrap();
    }

    async fn deploy(&mut self, release: &str) {
        let stack = MemoryStack::new()
            .service(format!("{release}_web"))
            .network(format!("{release}_front"))
            .secret(format!("{release}_tok"))
            .config(format!("{release}_conf"));
        self.registry.set_stack(SWARM, release, stack).unwrap();
    }

    async fn volume(&mut self, name: &str, release: &str) {
        self.registry
            .add_volume(SWARM, MANAGER, MemoryVolume::new(name, Some(release)))
            .unwrap();
    }

    async fn container_using(&mut self, volume: &str) {
        self.registry
            .volume_in_use(SWARM, MANAGER, volume, u32::MAX)
            .unwrap();
    }

    async fn container_goes(&mut self, release: &str) {
        self.registry.emit_container_gone(SWARM, None, release);
    }

    async fn unreachable_node(&mut self) -> String {
        self.registry
            .set_node_reachable(SWARM, WORKER, false)
            .unwrap();
        WORKER.to_owned()
    }

    async fn removed_configs(&self, names: &[String]) -> Vec<String> {
        self.registry
            .removed_records(SWARM)
            .into_iter()
            .map(|r| r.id)
            .filter(|id| names.contains(id))
            .collect()
    }
}

sweep_testkit::contract_suite!(Memory::new());
