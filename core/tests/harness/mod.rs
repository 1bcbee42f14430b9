//! Test harness for the sweep: a model world and a virtual-time driver.
//! Each test crate uses part of it.
#![allow(dead_code)]

pub mod driver;
pub mod world;

#[allow(unused_imports)]
pub use driver::{sweep, DriveError, Event, Rng, Run};
#[allow(unused_imports)]
pub use world::{ListingBy, NewStamp, Reach, World, CONTROLLER};
