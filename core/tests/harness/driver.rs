//! The virtual-time driver: runs a [`Sweep`] against a [`World`] until it
//! is done, holding several actions outstanding and completing them in an
//! order a seed picks, with the clock jumping to `poll_timeout` whenever
//! nothing is ready.

use std::time::Duration;

use sweep_core::sweep::{
    Action, ActionKind, Event as SweepEvent, Settings, Sweep, SweepError, SweepReport, Timestamp,
};

use super::world::World;

/// SplitMix64: small, seedable, the same on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriveError {
    /// More steps than the bound: the sweep does not converge.
    Livelock {
        steps: usize,
    },
    /// Not done, nothing outstanding, nothing ready and no deadline.
    Stuck {
        now: Timestamp,
    },
    Protocol(SweepError),
}

/// An event in the order the driver saw it.
#[derive(Debug, Clone)]
pub enum Event {
    Handed(Timestamp, ActionKind),
    Answered(Timestamp, ActionKind),
}

pub struct Run {
    pub sweep: Sweep,
    pub world: World,
    pub now: Timestamp,
    pub rng: Rng,
    /// How many actions may be outstanding at once.
    pub limit: usize,
    /// Each completion takes `0..=max_latency` of virtual time.
    pub max_latency: Duration,
    pub max_steps: usize,
    pub steps: usize,
    pub events: Vec<Event>,
    /// Hand the sweep a random engine event (a container of a planned
    /// release gone on a random node, or on none named) after about one
    /// outcome in three.
    pub wake_events: bool,
    outstanding: Vec<Action>,
}

impl Run {
    /// Plans from `world` and sets up a sweep of that plan.
    pub fn new(mut world: World, settings: Settings, seed: u64, limit: usize) -> Self {
        let plan = world.plan();
        let sweep = Sweep::new(&plan, settings);
        world.plan = Some(plan);
        Run {
            sweep,
            world,
            now: Timestamp::ZERO,
            rng: Rng::new(seed),
            limit: limit.max(1),
            max_latency: Duration::ZERO,
            max_steps: 100_000,
            steps: 0,
            events: Vec::new(),
            wake_events: false,
            outstanding: Vec::new(),
        }
    }

    pub fn with_wake_events(mut self, on: bool) -> Self {
        self.wake_events = on;
        self
    }

    /// A random event about a planned release: an extra wake, which the
    /// sweep must take without breaking a rule or a deadline.
    fn random_event(&mut self) {
        let Some(plan) = &self.world.plan else {
            return;
        };
        let n = plan.deletions.len() as u64;
        let Some(d) = plan.deletions.get(self.rng.below(n + 1) as usize) else {
            return;
        };
        let (swarm, release) = (d.swarm.clone(), d.release.clone());
        let nodes: Vec<String> = self
            .world
            .swarms
            .get(&swarm)
            .map(|s| s.nodes.iter().map(|n| n.id.clone()).collect())
            .unwrap_or_default();
        let node = nodes
            .get(self.rng.below(nodes.len() as u64 + 1) as usize)
            .cloned();
        self.sweep
            .handle_event(SweepEvent::container_gone(swarm, node, release), self.now);
    }

    pub fn with_latency(mut self, max_latency: Duration) -> Self {
        self.max_latency = max_latency;
        self
    }

    pub fn with_max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps;
        self
    }

    /// Drives the sweep until it is done.
    pub fn drive(&mut self) -> Result<SweepReport, DriveError> {
        loop {
            self.steps += 1;
            if self.steps > self.max_steps {
                return Err(DriveError::Livelock { steps: self.steps });
            }
            while self.outstanding.len() < self.limit {
                match self.sweep.poll_action(self.now) {
                    Some(a) => {
                        self.events.push(Event::Handed(self.now, a.kind.clone()));
                        self.outstanding.push(a);
                    }
                    None => break,
                }
            }
            if self.outstanding.is_empty() {
                if self.sweep.is_done() {
                    return Ok(self.sweep.report());
                }
                match self.sweep.poll_timeout() {
                    Some(t) if t > self.now => self.now = t,
                    _ => return Err(DriveError::Stuck { now: self.now }),
                }
                continue;
            }
            let i = self.rng.below(self.outstanding.len() as u64) as usize;
            let action = self.outstanding.swap_remove(i);
            let max = self.max_latency.as_millis() as u64;
            self.now += Duration::from_millis(self.rng.below(max + 1));
            let outcome = self.world.execute(&action, self.now);
            self.events
                .push(Event::Answered(self.now, action.kind.clone()));
            self.sweep
                .handle_outcome(action.id, outcome, self.now)
                .map_err(DriveError::Protocol)?;
            if self.wake_events && self.rng.below(3) == 0 {
                self.random_event();
            }
        }
    }

    /// Drives and panics on livelock or a protocol error, with the world's
    /// violations checked.
    pub fn finish(&mut self) -> SweepReport {
        let report = match self.drive() {
            Ok(r) => r,
            Err(e) => panic!("the sweep did not finish: {e:?}"),
        };
        assert!(
            self.world.violations.is_empty(),
            "safety violations: {:#?}",
            self.world.violations
        );
        report
    }

    /// The kinds of the actions handed out, in order.
    pub fn handed(&self) -> Vec<&ActionKind> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Handed(_, k) => Some(k),
                Event::Answered(..) => None,
            })
            .collect()
    }
}

/// Shorthand: a sweep of `world` with default settings, one seed, up to
/// `limit` outstanding.
pub fn sweep(world: World, seed: u64, limit: usize) -> (SweepReport, Run) {
    let mut run = Run::new(world, Settings::default(), seed, limit);
    let report = run.finish();
    (report, run)
}
