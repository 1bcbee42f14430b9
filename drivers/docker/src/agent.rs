//! The node agent's IO: what `swarm-sweep agent` does on one node, through
//! that node's own daemon, for a volume job (see `sweep_core::agent`, where
//! every rule of it lives).

use std::time::Duration;

use sweep_core::agent::{AgentContainer, AgentRequest, AgentResult, Failed};
use sweep_core::escape::escape;
use sweep_swarms::BackendError;

use crate::client::Client;
use crate::endpoint::Endpoint;

/// Does `request`'s work on the node whose daemon is at `endpoint`, each
/// call bounded by `timeout`, and says how it went: always a result, since
/// the result line, not the exit status, is what proves a node reached.
pub async fn run_agent(
    endpoint: &Endpoint,
    timeout: Duration,
    request: &AgentRequest,
) -> AgentResult {
    let client = match Client::connect(endpoint, timeout).await {
        Ok(client) => client,
        Err(e) => return AgentResult::error("", failed_to("reach the node's daemon", &e)),
    };
    // The node is the daemon's own word: the job's task says where it was
    // placed, and the two must agree for the node to count as reached.
    let node = match client.own_node_id().await {
        Ok(node) => node,
        Err(e) => return AgentResult::error("", failed_to("read the daemon's node id", &e)),
    };
    let volumes = match client.all_volumes().await {
        Ok(volumes) => volumes,
        Err(e) => return AgentResult::error(node, failed_to("list the volumes", &e)),
    };
    // Read before any removal, so that a listing that fails leaves the
    // node's volumes as they were: the containers are what tells the
    // sweep that another workload uses a volume here.
    let containers = match client.containers().await {
        Ok(containers) => containers,
        Err(e) => return AgentResult::error(node, failed_to("list the containers", &e)),
    };
    let work = request.work_on(&node, &volumes);
    let mut result = AgentResult::new(node);
    result.containers = containers.iter().map(AgentContainer::from).collect();
    result.refused = work.refused;
    result.removed = work.gone;
    for volume in work.remove {
        match client.remove_volume(&volume).await {
            Ok(()) => {
                result.removed.insert(volume);
            }
            Err(BackendError::InUse { .. }) => {
                result.in_use.insert(volume);
            }
            Err(e) => result
                .failed
                .push(Failed::new(volume, escape(&e.to_string()))),
        }
    }
    result.volumes = work.listed;
    for names in result.volumes.values_mut() {
        names.retain(|name| !result.removed.contains(name));
    }
    result.volumes.retain(|_, names| !names.is_empty());
    result
}

fn failed_to(what: &str, e: &BackendError) -> String {
    format!("cannot {what}: {}", escape(&e.to_string()))
}
