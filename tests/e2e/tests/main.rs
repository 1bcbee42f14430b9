//! The end-to-end suite as one test binary: each file of this directory is
//! a module. One binary links once instead of once per file, and its
//! scenarios run side by side on the bed (see `Scenario` for how alpha is
//! shared) and share the static image, built once per run.

mod gamma;
mod grace;
mod hostile;
mod image;
mod in_use;
mod input;
mod job;
mod preview;
mod record;
mod resources;
mod review;
mod safety;
mod schemas;
mod ssh;
mod sweep;
mod terminal;
mod trace;
mod watch;
mod windows;
