//! Test doubles for code built on the swarms seam (`sweep-swarms`).
//!
//! - [`MemoryRegistry`]: an in-memory registry of swarms, whose knobs model
//!   the world (nodes down, volumes in use, a record removal cut off
//!   half-way), with a log of every backend call.
//! - [`Faulty`]: a decorator over any [`Registry`](sweep_swarms::Registry)
//!   that injects faults (a call that fails, times out, never answers or is
//!   slow) into it and into every backend it hands out. It wraps the memory
//!   registry and the docker registries alike, so one fault schedule can
//!   run against the model and against real engines.
//! - [`contract`]: the seam's contract as checks run against any registry
//!   (the in-memory one in this crate's tests, the docker one on real
//!   engines in `sweep-docker`'s).
//! - [`engine_record`]: release records as the chart engine writes them
//!   (name, labels, gzip-of-YAML data with a rendered manifest), for every
//!   test that creates one.
//! - `fake_daemon` (feature `fake-daemon`): one fake Docker daemon, for
//!   the unit tests of what a client does with replies an engine gives
//!   rarely or never.

pub mod contract;
pub mod engine_record;
#[cfg(feature = "fake-daemon")]
pub mod fake_daemon;
mod faulty;
mod memory;

pub use faulty::{Call, Effect, Fault, Faulty, Injected};
pub use memory::{
    MemoryEvent, MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm, MemoryVolume,
};

use sweep_swarms::{BackendError, ObjectRef, StackPart, SwarmBackend};

/// Removes every object of `part` of `release`'s stack that `backend`
/// lists now, naming each as the sweep does (id and name): for tests that
/// take a stack down outside a sweep.
pub async fn remove_whole_part(
    backend: &dyn SwarmBackend,
    release: &str,
    part: StackPart,
) -> Result<(), BackendError> {
    let stack = backend
        .stack_objects()
        .await?
        .and_then(|mut stacks| stacks.remove(release))
        .unwrap_or_default();
    let objects: Vec<ObjectRef> = match part {
        StackPart::Services => stack
            .services
            .iter()
            .map(|s| ObjectRef::new(&s.id, &s.name))
            .collect(),
        StackPart::Tasks => Vec::new(),
        StackPart::Networks => stack.networks,
        StackPart::Secrets => stack.secrets,
        StackPart::Configs => stack.configs,
    };
    backend.remove_stack_part(release, part, &objects).await
}
