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

mod faulty;
mod memory;

pub use faulty::{Call, Effect, Fault, Faulty, Injected};
pub use memory::{
    MemoryEvent, MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm, MemoryVolume,
};
