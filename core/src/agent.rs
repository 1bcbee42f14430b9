//! Node reach through the swarm itself: a one-off `global-job` service
//! whose task on each node does that node's volume work through the node's
//! own daemon, and prints one result line.
//!
//! The driver creates the job, waits for it and reads its tasks and logs;
//! every decision about it is here, where the tests and fuzzers reach it:
//!
//! - what the agent may do on its node ([`AgentRequest::work_on`]): list
//!   the volumes of the stacks it was given, remove only volumes that carry
//!   the stack label it was given for them, and count one already gone as
//!   removed;
//! - what its result line says ([`AgentResult`], [`parse_result_line`]),
//!   the node's containers that use named volumes among it
//!   ([`AgentContainer`]): another workload's container, stopped or on a
//!   node the manager does not see, is what spares a shared volume;
//! - which nodes the job reached ([`reach`]). Coverage is proven, never
//!   assumed: a node counts only if its task completed and its one result
//!   line names that node. A node that ran no task (down, drained, paused)
//!   is not reached, and the sweep says so.
//! - when the job has ended ([`JobProgress::observe`], with the task
//!   states read by [`TaskPhase::of`]), and which jobs found on the swarm
//!   a killed run left behind ([`leftover_job`]). The driver reads the
//!   clock and passes the time in.
//!
//! The agent is not a second gate: it is only ever sent volumes of
//! releases the plan proved deletable. It refuses anything else all the
//! same, so that a driver bug cannot turn it into a general volume remover.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::escape::escape;
use crate::time::UnixTime;
use crate::usage::ContainerUse;

/// The version of the request and of the result line. A result line says
/// it with its marker field, [`RESULT_MARKER`]. Version 2 added the node's
/// containers ([`AgentResult::containers`]): an agent of version 1 would
/// report none, and its node's volumes would look unused, so its result
/// is refused and the node is not reached. Version 3 added the networks
/// each container is attached to ([`AgentContainer::networks`]), for the
/// same reason.
pub const AGENT_FORMAT: u32 = 3;

/// The field that marks a log line as the agent's result, holding
/// [`AGENT_FORMAT`]: any other output of the task is not a result.
pub const RESULT_MARKER: &str = "swarm_sweep_agent";

pub use crate::objects::STACK_LABEL;

/// The longest result line read: a node's volume list runs to a few
/// hundred KiB at most, and a task's output is anyone's who can run one.
pub const MAX_RESULT_LINE: usize = 1024 * 1024;

/// The longest request: it travels as the job's command line.
pub const MAX_REQUEST: usize = 64 * 1024;

/// Why a request or a result line was refused. `what` names the document
/// in every variant: `the request` or `the result line`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AgentError {
    /// Longer than its bound ([`MAX_REQUEST`], [`MAX_RESULT_LINE`]): not
    /// read at all.
    #[error("{what} of {len} bytes is longer than {max}")]
    TooLong {
        /// The document.
        what: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// Not JSON of the expected shape (an unknown field, a wrong type).
    #[error("{what} is not valid: {message}")]
    Invalid {
        /// The document.
        what: &'static str,
        /// The parser's words.
        message: String,
    },
    /// Of another format version than [`AGENT_FORMAT`]: written by
    /// another version of swarm-sweep, whose fields may mean other things.
    #[error("{what} is of format {found}, not {AGENT_FORMAT}")]
    Format {
        /// The document.
        what: &'static str,
        /// The version it says it is.
        found: u64,
    },
    /// Names an empty node, stack, volume or container, which would match
    /// nothing or, worse, anything.
    #[error("{what} names an empty {field}")]
    Empty {
        /// The document.
        what: &'static str,
        /// What is empty: `node`, `stack`, `volume` or `container`.
        field: &'static str,
    },
}

/// What the job asks of every node's agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct AgentRequest {
    /// [`AGENT_FORMAT`].
    pub format: u32,
    /// The stacks whose volumes to list; `None` lists the volumes of every
    /// stack (reading only, for the snapshot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<BTreeSet<String>>,
    /// By node id: by stack, the volumes to remove there.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub remove: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

impl AgentRequest {
    /// A request that lists the volumes of every stack and removes none.
    pub fn list_all() -> Self {
        AgentRequest {
            format: AGENT_FORMAT,
            list: None,
            remove: BTreeMap::new(),
        }
    }

    /// A request that removes, on each node, the volumes given for it, by
    /// stack, and lists what is left of those stacks.
    pub fn remove(remove: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Self {
        let stacks = remove.values().flat_map(|s| s.keys().cloned()).collect();
        AgentRequest {
            format: AGENT_FORMAT,
            list: Some(stacks),
            remove,
        }
    }

    /// Reads a request (the agent's argument): bounded, one JSON object,
    /// no unknown field, this format, no empty name.
    pub fn from_json(text: &str) -> Result<Self, AgentError> {
        const WHAT: &str = "the request";
        if text.len() > MAX_REQUEST {
            return Err(AgentError::TooLong {
                what: WHAT,
                len: text.len(),
                max: MAX_REQUEST,
            });
        }
        let request: AgentRequest =
            serde_json::from_str(text).map_err(|e| AgentError::Invalid {
                what: WHAT,
                message: e.to_string(),
            })?;
        if request.format != AGENT_FORMAT {
            return Err(AgentError::Format {
                what: WHAT,
                found: request.format.into(),
            });
        }
        let listed = request.list.iter().flatten();
        let removed = request.remove.iter().flat_map(|(node, stacks)| {
            std::iter::once(("node", node)).chain(stacks.iter().flat_map(|(stack, volumes)| {
                std::iter::once(("stack", stack)).chain(volumes.iter().map(|v| ("volume", v)))
            }))
        });
        for (field, name) in listed.map(|s| ("stack", s)).chain(removed) {
            if name.is_empty() {
                return Err(AgentError::Empty { what: WHAT, field });
            }
        }
        Ok(request)
    }

    /// The request as the agent's argument.
    pub fn to_json(&self) -> String {
        // Strings and maps of strings: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// What the agent on node `node` does, given the volumes its daemon
    /// holds (name, and the stack label when there is one).
    pub fn work_on(&self, node: &str, volumes: &[(String, Option<String>)]) -> AgentWork {
        // Every label the listing gives each name: a daemon that lists one
        // name twice under two labels contradicts itself, and its volume
        // is nobody's to remove on that word.
        let mut stack_of: BTreeMap<&str, BTreeSet<Option<&str>>> = BTreeMap::new();
        for (name, stack) in volumes {
            stack_of
                .entry(name.as_str())
                .or_default()
                .insert(stack.as_deref());
        }
        let mut work = AgentWork::default();
        for (name, stack) in volumes {
            let Some(stack) = stack else { continue };
            let listed = match &self.list {
                None => true,
                Some(stacks) => stacks.contains(stack),
            };
            if listed {
                work.listed
                    .entry(stack.clone())
                    .or_default()
                    .insert(name.clone());
            }
        }
        for (stack, wanted) in self.remove.get(node).into_iter().flatten() {
            for volume in wanted {
                let Some(labels) = stack_of.get(volume.as_str()) else {
                    // Gone already: what a retried sweep must converge on.
                    work.gone.insert(volume.clone());
                    continue;
                };
                let labels: Vec<Option<&str>> = labels.iter().copied().collect();
                let reason = match labels[..] {
                    [Some(label)] if label == stack => {
                        work.remove.insert(volume.clone());
                        continue;
                    }
                    [Some(other)] => format!(
                        "it belongs to stack {:?}, not {:?}",
                        escape(other),
                        escape(stack)
                    ),
                    [None] => format!("it has no stack label (asked as {:?})", escape(stack)),
                    _ => format!(
                        "its node lists it under {} different stack labels (asked as {:?})",
                        labels.len(),
                        escape(stack)
                    ),
                };
                work.refused.push(Refused {
                    volume: volume.clone(),
                    reason,
                });
            }
        }
        // Listed as left: a volume about to be removed is still there now.
        work
    }
}

/// What one agent does on its node ([`AgentRequest::work_on`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentWork {
    /// By stack, the volumes to report.
    pub listed: BTreeMap<String, BTreeSet<String>>,
    /// Volumes to remove.
    pub remove: BTreeSet<String>,
    /// Asked for and already gone: removed.
    pub gone: BTreeSet<String>,
    /// Asked for and not of the stack they were asked as: left alone.
    pub refused: Vec<Refused>,
}

/// A volume the agent would not remove, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Refused {
    /// The volume's name.
    pub volume: String,
    /// Why it was left alone: the stack it belongs to instead, or that it
    /// has no stack label.
    pub reason: String,
}

impl Refused {
    /// `volume`, left alone for `reason`.
    pub fn new(volume: impl Into<String>, reason: impl Into<String>) -> Self {
        Refused {
            volume: volume.into(),
            reason: reason.into(),
        }
    }
}

/// A volume whose removal failed, and the daemon's words.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Failed {
    /// The volume's name.
    pub volume: String,
    /// What the daemon answered.
    pub message: String,
}

impl Failed {
    /// The removal of `volume` failed with `message`.
    pub fn new(volume: impl Into<String>, message: impl Into<String>) -> Self {
        Failed {
            volume: volume.into(),
            message: message.into(),
        }
    }
}

/// A container on the agent's node, running or stopped, that mounts a
/// named volume or is attached to a network: [`ContainerUse`] as the
/// result line carries it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct AgentContainer {
    /// The container's id.
    pub id: String,
    /// The container's name. Raw: escape it before printing.
    pub name: String,
    /// Its service id label, when it is a task of a service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Its stack namespace label, when it is a task of a stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// The names of the volumes it mounts.
    #[serde(default)]
    pub volumes: BTreeSet<String>,
    /// The networks it is attached to, by name and by id.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub networks: BTreeSet<String>,
}

impl From<&ContainerUse> for AgentContainer {
    fn from(used: &ContainerUse) -> Self {
        AgentContainer {
            id: used.id.clone(),
            name: used.name.clone(),
            service: used.service.clone(),
            stack: used.stack.clone(),
            volumes: used.volumes.iter().cloned().collect(),
            networks: used.networks.iter().cloned().collect(),
        }
    }
}

impl AgentContainer {
    /// The container as the core's usage facts hold it.
    pub fn to_use(&self) -> ContainerUse {
        let mut used =
            ContainerUse::new(&self.id, &self.name, &self.volumes).with_networks(&self.networks);
        if let Some(service) = &self.service {
            used = used.of_service(service);
        }
        if let Some(stack) = &self.stack {
            used = used.in_stack(stack);
        }
        used
    }
}

/// The agent's one result line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct AgentResult {
    /// [`AGENT_FORMAT`], under the name [`RESULT_MARKER`].
    #[serde(rename = "swarm_sweep_agent")]
    pub format: u32,
    /// The node id the agent's daemon reported: the node it worked on.
    pub node: String,
    /// By stack, the volumes of the listed stacks on the node (after the
    /// removals).
    #[serde(default)]
    pub volumes: BTreeMap<String, BTreeSet<String>>,
    /// Removed, or already gone.
    #[serde(default)]
    pub removed: BTreeSet<String>,
    /// Still in use by a container: to retry.
    #[serde(default)]
    pub in_use: BTreeSet<String>,
    /// Asked for and not of the stack they were asked as: left alone.
    #[serde(default)]
    pub refused: Vec<Refused>,
    /// Asked for, and the daemon refused to remove them.
    #[serde(default)]
    pub failed: Vec<Failed>,
    /// The node's containers, running or stopped, that mount a named
    /// volume, as its daemon listed them when the agent ran.
    #[serde(default)]
    pub containers: Vec<AgentContainer>,
    /// Set when the agent could do nothing (its daemon did not answer, or
    /// is not the node it was placed on): the node is not reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl AgentResult {
    /// The line the agent prints.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The result of an agent on `node` that has done nothing yet.
    pub fn new(node: impl Into<String>) -> Self {
        AgentResult {
            format: AGENT_FORMAT,
            node: node.into(),
            ..AgentResult::default()
        }
    }

    /// The result of an agent that could do nothing on `node` (empty when
    /// it could not even learn which node it is on).
    pub fn error(node: impl Into<String>, error: impl Into<String>) -> Self {
        AgentResult {
            format: AGENT_FORMAT,
            node: node.into(),
            error: Some(error.into()),
            ..AgentResult::default()
        }
    }
}

impl AgentResult {
    /// The node's containers that use named volumes, as the core's usage
    /// facts hold them.
    pub fn container_uses(&self) -> Vec<ContainerUse> {
        self.containers.iter().map(AgentContainer::to_use).collect()
    }
}

/// What an agent's result says of one volume it was asked to remove.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Removal<'a> {
    /// Removed, or already gone.
    Removed,
    /// A container still uses it: to retry.
    InUse,
    /// Not of the stack it was asked under: left alone.
    Refused(&'a str),
    /// The daemon refused to remove it.
    Failed(&'a str),
    /// The result does not mention it: nothing is known.
    NotMentioned,
}

impl AgentResult {
    /// What this result says of `volume`. A volume the result lists in two
    /// places counts as the less done: in use or failed before removed.
    pub fn removal(&self, volume: &str) -> Removal<'_> {
        if let Some(refused) = self.refused.iter().find(|r| r.volume == volume) {
            return Removal::Refused(&refused.reason);
        }
        if let Some(failed) = self.failed.iter().find(|f| f.volume == volume) {
            return Removal::Failed(&failed.message);
        }
        if self.in_use.contains(volume) {
            return Removal::InUse;
        }
        if self.removed.contains(volume) {
            return Removal::Removed;
        }
        Removal::NotMentioned
    }
}

/// Reads a result line: `None` for a line that is not one (no marker),
/// an error for one that claims to be and is not valid.
pub fn parse_result_line(line: &str) -> Option<Result<AgentResult, AgentError>> {
    const WHAT: &str = "the result line";
    let line = line.trim();
    if !line.starts_with('{') || !line.contains(RESULT_MARKER) {
        return None;
    }
    if line.len() > MAX_RESULT_LINE {
        return Some(Err(AgentError::TooLong {
            what: WHAT,
            len: line.len(),
            max: MAX_RESULT_LINE,
        }));
    }
    let value: serde_json::Value = match serde_json::from_str(line) {
        Ok(value) => value,
        // Any other JSON a task prints is not a result.
        Err(_) => return None,
    };
    let found = value.get(RESULT_MARKER)?;
    match found.as_u64() {
        Some(v) if v == u64::from(AGENT_FORMAT) => {}
        Some(v) => {
            return Some(Err(AgentError::Format {
                what: WHAT,
                found: v,
            }))
        }
        None => {
            return Some(Err(AgentError::Invalid {
                what: WHAT,
                message: format!("{RESULT_MARKER} is not a number"),
            }))
        }
    }
    Some(
        serde_json::from_value::<AgentResult>(value)
            .map_err(|e| AgentError::Invalid {
                what: WHAT,
                message: e.to_string(),
            })
            .and_then(|r| {
                // Only a failure may leave the node out: it proves nothing.
                if r.node.is_empty() && r.error.is_none() {
                    Err(AgentError::Empty {
                        what: WHAT,
                        field: "node",
                    })
                } else if r.containers.iter().any(|c| c.id.is_empty()) {
                    // A user that cannot be told apart from another.
                    Err(AgentError::Empty {
                        what: WHAT,
                        field: "container",
                    })
                } else {
                    Ok(r)
                }
            }),
    )
}

/// One task of the job, as the manager lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JobTask {
    /// The task's id, by which its logs are read.
    pub id: String,
    /// The node it was placed on.
    pub node: String,
    /// Docker's task state: `complete`, `failed`, `running`... Read it
    /// with [`TaskPhase::of`].
    pub state: String,
    /// The task's error, when it has one.
    pub error: Option<String>,
    /// Why its output could not be read, when it could not: the node is
    /// then not reached, and the others still are.
    pub unread_output: Option<String>,
}

impl JobTask {
    /// A task `id` on node `node` (empty when not yet placed) in Docker's
    /// task state `state`.
    pub fn new(
        id: impl Into<String>,
        node: impl Into<String>,
        state: impl Into<String>,
        error: Option<String>,
    ) -> Self {
        JobTask {
            id: id.into(),
            node: node.into(),
            state: state.into(),
            error,
            unread_output: None,
        }
    }

    /// The same task, whose output could not be read, for `why`: its
    /// node is not reached.
    pub fn with_unread_output(mut self, why: impl Into<String>) -> Self {
        self.unread_output = Some(why.into());
        self
    }

    /// Where the task is in its life, from its state.
    pub fn phase(&self) -> TaskPhase {
        TaskPhase::of(&self.state)
    }
}

/// Where a task of the job is in its life, read from Docker's task state
/// ([`TaskPhase::of`]).
///
/// Not `#[non_exhaustive]`: a driver matches it exhaustively, so that a
/// phase added here cannot fall into a wildcard arm unnoticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskPhase {
    /// Not ended yet: `new`, `allocated`, `pending`, `assigned`,
    /// `accepted`, `preparing`, `ready`, `starting`, `running`.
    Live,
    /// Ended by running to its end (`complete`): the only end after which
    /// its output may hold a result.
    Complete,
    /// Ended without completing: `failed`, `rejected`, `shutdown`,
    /// `orphaned`, `remove`.
    Ended,
    /// A state this version does not know. Not terminal: counting it as
    /// ended would remove the job under an agent that may still be at
    /// work on its node, and lose its result.
    Unknown,
}

impl TaskPhase {
    /// The phase of Docker's task state `state`, as the Engine API spells
    /// it (lower case); any other spelling is [`TaskPhase::Unknown`].
    pub fn of(state: &str) -> Self {
        match state {
            "new" | "allocated" | "pending" | "assigned" | "accepted" | "preparing" | "ready"
            | "starting" | "running" => TaskPhase::Live,
            "complete" => TaskPhase::Complete,
            "failed" | "rejected" | "shutdown" | "orphaned" | "remove" => TaskPhase::Ended,
            _ => TaskPhase::Unknown,
        }
    }

    /// Whether nothing more happens to the task: it completed or ended
    /// otherwise. A live or unknown task may still be at work.
    pub fn is_terminal(self) -> bool {
        match self {
            TaskPhase::Complete | TaskPhase::Ended => true,
            TaskPhase::Live | TaskPhase::Unknown => false,
        }
    }
}

/// One line a task of the job wrote, with the task and the node it ran on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogLine {
    /// The task's id.
    pub task: String,
    /// The node id the task ran on, by the daemon's word.
    pub node: String,
    /// The line, without its line break.
    pub text: String,
}

impl LogLine {
    /// Line `text` written by task `task` on node `node`.
    pub fn new(task: impl Into<String>, node: impl Into<String>, text: impl Into<String>) -> Self {
        LogLine {
            task: task.into(),
            node: node.into(),
            text: text.into(),
        }
    }
}

/// The most of one task's output read: its result line and a little
/// more. What is past it is dropped, and a result line cut short proves
/// nothing.
pub const MAX_TASK_OUTPUT: usize = 2 * MAX_RESULT_LINE;

/// The lines task `task` on node `node` wrote, from the entries of its
/// logs in the order the daemon gave them. The entries are asked for by
/// the task's id, so each line is that task's by the daemon's word. A log
/// driver splits a long line into several entries (the json-file driver
/// at 16 KiB): the text is joined again and cut at its line breaks. The
/// output read is bounded by [`MAX_TASK_OUTPUT`]; what is past it is
/// dropped.
pub fn task_lines<'a>(
    task: &str,
    node: &str,
    entries: impl IntoIterator<Item = &'a str>,
) -> Vec<LogLine> {
    let mut text = String::new();
    for entry in entries {
        let room = MAX_TASK_OUTPUT.saturating_sub(text.len());
        if room == 0 {
            break;
        }
        let mut end = entry.len().min(room);
        while !entry.is_char_boundary(end) {
            end -= 1;
        }
        text.push_str(&entry[..end]);
    }
    text.lines()
        .map(|line| LogLine {
            task: task.to_owned(),
            node: node.to_owned(),
            text: line.trim_end_matches('\r').to_owned(),
        })
        .collect()
}

/// Whether the job reached one node, and what its agent said there.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeReached {
    /// Its task completed and printed one result for this node.
    Reached(AgentResult),
    /// No task was placed on it (down, drained, paused, or not eligible).
    NoTask,
    /// More than one task ran on it: a job left over, or a restart.
    SeveralTasks {
        /// How many.
        tasks: usize,
    },
    /// Its task did not complete.
    NotComplete {
        /// Docker's task state.
        state: String,
        /// The task's error, when it has one.
        error: Option<String>,
    },
    /// Its task completed, but its output could not be read (the node's
    /// daemon went away meanwhile, or the manager could not fetch it).
    OutputUnread(String),
    /// Its task completed without a result line.
    NoResult,
    /// Its task printed more than one result line.
    SeveralResults {
        /// How many.
        results: usize,
    },
    /// Its result line does not read.
    BadResult(AgentError),
    /// Its result names another node: its socket is not its node's daemon.
    WrongNode {
        /// The node id the result names.
        named: String,
    },
    /// The agent ran and could do nothing.
    AgentFailed(String),
}

impl NodeReached {
    /// The agent's result, when the node was reached.
    pub fn result(&self) -> Option<&AgentResult> {
        match self {
            NodeReached::Reached(result) => Some(result),
            _ => None,
        }
    }
}

/// Which of `nodes` (the swarm's node ids) the job reached, from its
/// tasks and its log lines. A node counts as reached only if exactly one
/// task ran there, that task completed, and it printed exactly one result
/// line, which names that node (the daemon's attribution and the agent's
/// own word must agree). Tasks on nodes not in `nodes` are ignored.
pub fn reach(
    nodes: &[String],
    tasks: &[JobTask],
    lines: &[LogLine],
) -> BTreeMap<String, NodeReached> {
    let mut by_node: BTreeMap<&str, Vec<&JobTask>> = BTreeMap::new();
    for task in tasks {
        by_node.entry(task.node.as_str()).or_default().push(task);
    }
    let mut results: BTreeMap<(&str, &str), Vec<Result<AgentResult, AgentError>>> = BTreeMap::new();
    for line in lines {
        if let Some(result) = parse_result_line(&line.text) {
            results
                .entry((line.task.as_str(), line.node.as_str()))
                .or_default()
                .push(result);
        }
    }
    nodes
        .iter()
        .map(|node| {
            let decided = match by_node.get(node.as_str()).map(Vec::as_slice) {
                None | Some([]) => NodeReached::NoTask,
                Some([task]) => from_task(node, task, &mut results),
                Some(several) => NodeReached::SeveralTasks {
                    tasks: several.len(),
                },
            };
            (node.clone(), decided)
        })
        .collect()
}

fn from_task<'a>(
    node: &'a str,
    task: &'a JobTask,
    results: &mut BTreeMap<(&'a str, &'a str), Vec<Result<AgentResult, AgentError>>>,
) -> NodeReached {
    if task.phase() != TaskPhase::Complete {
        return NodeReached::NotComplete {
            state: task.state.clone(),
            error: task.error.clone(),
        };
    }
    if let Some(why) = &task.unread_output {
        return NodeReached::OutputUnread(why.clone());
    }
    let mut found = results
        .remove(&(task.id.as_str(), node))
        .unwrap_or_default();
    match found.len() {
        0 => NodeReached::NoResult,
        1 => match found.remove(0) {
            Err(e) => NodeReached::BadResult(e),
            Ok(AgentResult {
                error: Some(error), ..
            }) => NodeReached::AgentFailed(error),
            Ok(result) if result.node != node => NodeReached::WrongNode { named: result.node },
            Ok(result) => NodeReached::Reached(result),
        },
        n => NodeReached::SeveralResults { results: n },
    }
}

/// The label that marks a service as a volume job of swarm-sweep, with the
/// value `volumes`, so that one a killed run left behind is found and
/// removed by the next ([`leftover_job`]).
pub const JOB_LABEL: &str = "swarm-sweep.job";

/// The label that says when a volume job was created, in Unix seconds
/// ([`job_started_label`]).
pub const JOB_STARTED_LABEL: &str = "swarm-sweep.job.started";

/// How long a job whose desired task count is still zero is given before
/// it counts as placed on no node: the orchestrator sets the count a
/// moment after the service is created, and a job read as ended before
/// that would reach no node.
pub const PLACEMENT_SETTLE: Duration = Duration::from_secs(5);

/// Where a running volume job is, from one look at it
/// ([`JobProgress::observe`]).
///
/// Not `#[non_exhaustive]`: the driver matches it exhaustively, so that a
/// new outcome cannot fall into a wildcard arm unnoticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobProgress {
    /// Every task has ended, and there are at least as many as the
    /// orchestrator means to run (or it means none, and
    /// [`PLACEMENT_SETTLE`] has passed): read the completed ones.
    Ended,
    /// The orchestrator has not said yet how many tasks it means to run
    /// (it says zero) and [`PLACEMENT_SETTLE`] has not passed: look again.
    Placing,
    /// Tasks are still at work, or still to be placed: look again.
    Running {
        /// Tasks that have ended.
        ended: usize,
        /// Tasks the orchestrator means to run.
        desired: u64,
    },
    /// The job has not ended and the next look would come past its time
    /// limit: stop waiting; a node whose task did not complete is not
    /// reached.
    TimedOut,
}

impl JobProgress {
    /// Where the job is, from its `tasks`, the number of tasks the
    /// orchestrator means to run (`desired`, one per node it can place one
    /// on), the time since the job was created (`elapsed`), the time it is
    /// given (`limit`), and the time until the driver would look again
    /// (`poll`).
    ///
    /// More tasks than desired is an end all the same (a node that joined
    /// while the job ran gets one too); fewer is not, since a task not yet
    /// listed has not ended. A task in a state this version does not know
    /// has not ended ([`TaskPhase::Unknown`]).
    pub fn observe(
        tasks: &[JobTask],
        desired: u64,
        elapsed: Duration,
        limit: Duration,
        poll: Duration,
    ) -> Self {
        let ended = tasks.iter().filter(|t| t.phase().is_terminal()).count();
        let all_ended = ended == tasks.len();
        let placed = desired > 0 || elapsed >= PLACEMENT_SETTLE;
        let enough = u64::try_from(tasks.len()).unwrap_or(u64::MAX) >= desired;
        if all_ended && placed && enough {
            JobProgress::Ended
        } else if elapsed.saturating_add(poll) > limit {
            // A look that late would keep the job past the time it is
            // given, and the sweep's own time bound counts on that.
            JobProgress::TimedOut
        } else if !placed {
            JobProgress::Placing
        } else {
            JobProgress::Running { ended, desired }
        }
    }
}

/// The value of [`JOB_STARTED_LABEL`] for a job created at `started`.
pub fn job_started_label(started: UnixTime) -> String {
    started.as_secs().to_string()
}

/// What to do with a volume job found on the swarm by its [`JOB_LABEL`]
/// before a new one is created ([`leftover_job`]).
///
/// Not `#[non_exhaustive]`: the driver matches it exhaustively, so that a
/// new case cannot fall into a wildcard arm that removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeftoverJob {
    /// Started more than twice the job time limit ago: no run still
    /// waits for it (a run gives up on its job at the limit and removes
    /// it), so a killed run left it behind. Remove it.
    Remove {
        /// Seconds since it started.
        age_secs: u64,
    },
    /// Started within twice the time limit: it may be the job of a run
    /// still going. Keep it.
    Young {
        /// Seconds since it started.
        age_secs: u64,
    },
    /// Started after `now`: made by a run whose clock is ahead of this
    /// one's, which may still be going. Keep it.
    Ahead {
        /// Seconds it started after `now`.
        ahead_secs: u64,
    },
    /// Its start label is missing or does not read as Unix seconds. Keep
    /// it: every run writes the label, so the job is not one of this
    /// version's, and it may be another version's run still going, whose
    /// agents would be killed mid-work if it were removed. A leftover kept
    /// this way holds no running task (a job runs once), and is for an
    /// operator to remove.
    Unreadable,
}

impl LeftoverJob {
    /// Whether the job is to be removed.
    pub fn is_removed(self) -> bool {
        match self {
            LeftoverJob::Remove { .. } => true,
            LeftoverJob::Young { .. } | LeftoverJob::Ahead { .. } | LeftoverJob::Unreadable => {
                false
            }
        }
    }
}

/// What to do with a volume job found on the swarm, from its
/// [`JOB_STARTED_LABEL`] (`None` when it has none), the time `now`, and the
/// time one job is given (`job_limit`, the registry's `job_timeout`).
/// Only a job that provably started more than twice `job_limit` ago is
/// removed: one of a run still going is younger than its limit, and the
/// margin covers the clocks of two controllers disagreeing.
pub fn leftover_job(
    started_label: Option<&str>,
    now: UnixTime,
    job_limit: Duration,
) -> LeftoverJob {
    let Some(started) = started_label.and_then(|s| s.parse::<u64>().ok()) else {
        return LeftoverJob::Unreadable;
    };
    let now = now.as_secs();
    if started > now {
        return LeftoverJob::Ahead {
            ahead_secs: started - now,
        };
    }
    let age_secs = now - started;
    if Duration::from_secs(age_secs) > job_limit.saturating_mul(2) {
        LeftoverJob::Remove { age_secs }
    } else {
        LeftoverJob::Young { age_secs }
    }
}

crate::map_only::map_only! {
    AgentRequest => "an agent request object";
    AgentResult => "an agent result object";
    Refused => "a refused volume object";
    Failed => "a failed volume object";
    AgentContainer => "a container object";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    fn on_node(volumes: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        volumes
            .iter()
            .map(|(n, s)| ((*n).to_owned(), s.map(str::to_owned)))
            .collect()
    }

    #[test]
    fn the_agent_removes_only_volumes_of_the_stack_it_was_given_them_for() {
        let request = AgentRequest::remove(BTreeMap::from([(
            "N1".to_owned(),
            BTreeMap::from([(
                "web".to_owned(),
                set(&["web_data", "web_gone", "db_data", "loose"]),
            )]),
        )]));
        let volumes = on_node(&[
            ("web_data", Some("web")),
            ("db_data", Some("db")),
            ("loose", None),
            ("web_cache", Some("web")),
        ]);
        let work = request.work_on("N1", &volumes);
        assert_eq!(work.remove, set(&["web_data"]));
        assert_eq!(work.gone, set(&["web_gone"]));
        let refused: Vec<&str> = work.refused.iter().map(|r| r.volume.as_str()).collect();
        assert_eq!(refused, ["db_data", "loose"]);
        assert!(work.refused[0].reason.contains("\"db\""));
        assert_eq!(
            work.listed,
            BTreeMap::from([("web".to_owned(), set(&["web_cache", "web_data"]))])
        );
        // Another node is asked for nothing.
        let elsewhere = request.work_on("N2", &volumes);
        assert!(elsewhere.remove.is_empty() && elsewhere.refused.is_empty());
        // Listing everything reports every stack's volumes, never one
        // without a stack label.
        let all = AgentRequest::list_all().work_on("N1", &volumes);
        assert_eq!(all.listed.len(), 2);
        assert!(all.remove.is_empty());
    }

    /// A daemon that lists one name twice, under two labels, contradicts
    /// itself: the volume is not removed on either word, in either order.
    #[test]
    fn a_volume_listed_twice_under_two_labels_is_refused() {
        let request = AgentRequest::remove(BTreeMap::from([(
            "N1".to_owned(),
            BTreeMap::from([("web".to_owned(), set(&["web_data", "web_cache"]))]),
        )]));
        for volumes in [
            on_node(&[
                ("web_data", None),
                ("web_data", Some("web")),
                ("web_cache", Some("web")),
            ]),
            on_node(&[
                ("web_data", Some("web")),
                ("web_data", Some("db")),
                ("web_cache", Some("web")),
            ]),
            on_node(&[
                ("web_data", Some("db")),
                ("web_data", Some("web")),
                ("web_cache", Some("web")),
            ]),
        ] {
            let work = request.work_on("N1", &volumes);
            assert_eq!(work.remove, set(&["web_cache"]), "{volumes:?}");
            assert_eq!(work.refused.len(), 1, "{volumes:?}");
            assert_eq!(work.refused[0].volume, "web_data");
            assert!(work.refused[0].reason.contains("2 different stack labels"));
        }
        // Listed twice the same way, it is one volume.
        let twice = on_node(&[("web_data", Some("web")), ("web_data", Some("web"))]);
        assert_eq!(request.work_on("N1", &twice).remove, set(&["web_data"]));
    }

    #[test]
    fn a_request_reads_back_and_refuses_what_it_cannot_trust() {
        let request = AgentRequest::remove(BTreeMap::from([(
            "N1".to_owned(),
            BTreeMap::from([("web".to_owned(), set(&["web_data"]))]),
        )]));
        assert_eq!(AgentRequest::from_json(&request.to_json()), Ok(request));
        assert_eq!(
            AgentRequest::from_json(&AgentRequest::list_all().to_json()),
            Ok(AgentRequest::list_all())
        );
        for bad in [
            "",
            "{}",
            r#"{"format":1}"#,
            r#"{"format":2}"#,
            r#"{"format":4}"#,
            r#"{"format":3,"extra":1}"#,
            r#"{"format":3,"list":[""]}"#,
            r#"{"format":3,"remove":{"N1":{"web":[""]}}}"#,
            r#"{"format":3,"remove":{"":{}}}"#,
        ] {
            assert!(AgentRequest::from_json(bad).is_err(), "{bad}");
        }
        let long = format!(r#"{{"format":3,"list":["{}"]}}"#, "x".repeat(MAX_REQUEST));
        assert!(matches!(
            AgentRequest::from_json(&long),
            Err(AgentError::TooLong { .. })
        ));
    }

    #[test]
    fn a_result_says_of_each_volume_what_became_of_it_and_the_least_done_wins() {
        let mut result = AgentResult::new("N1");
        result.removed = set(&["gone", "both"]);
        result.in_use = set(&["busy", "both"]);
        result.refused.push(Refused {
            volume: "other".into(),
            reason: "it belongs to stack \"db\"".into(),
        });
        result.failed.push(Failed {
            volume: "broken".into(),
            message: "driver error".into(),
        });
        assert_eq!(result.removal("gone"), Removal::Removed);
        assert_eq!(result.removal("busy"), Removal::InUse);
        assert_eq!(result.removal("both"), Removal::InUse);
        assert!(matches!(result.removal("other"), Removal::Refused(r) if r.contains("db")));
        assert_eq!(result.removal("broken"), Removal::Failed("driver error"));
        assert_eq!(result.removal("unknown"), Removal::NotMentioned);
    }

    #[test]
    fn result_lines_are_told_from_other_output() {
        let result = AgentResult {
            format: AGENT_FORMAT,
            node: "N1".into(),
            removed: set(&["web_data"]),
            ..AgentResult::default()
        };
        assert_eq!(parse_result_line(&result.to_line()), Some(Ok(result)));
        assert_eq!(parse_result_line("starting"), None);
        assert_eq!(parse_result_line(r#"{"level":"info"}"#), None);
        assert_eq!(parse_result_line(r#"{"swarm_sweep_agent": 1"#), None);
        assert!(matches!(
            parse_result_line(r#"{"swarm_sweep_agent":4,"node":"N1"}"#),
            Some(Err(AgentError::Format { found: 4, .. }))
        ));
        assert!(matches!(
            parse_result_line(r#"{"swarm_sweep_agent":3,"node":""}"#),
            Some(Err(AgentError::Empty { .. }))
        ));
        let failed = AgentResult::error("", "cannot reach the node's daemon");
        assert_eq!(parse_result_line(&failed.to_line()), Some(Ok(failed)));
        assert!(matches!(
            parse_result_line(r#"{"swarm_sweep_agent":3,"node":"N1","more":1}"#),
            Some(Err(AgentError::Invalid { .. }))
        ));
    }

    #[test]
    fn a_result_carries_the_node_s_containers_and_refuses_one_without_an_id() {
        let stopped =
            ContainerUse::new("c1", "manual", ["gone_data"]).with_networks(["gone_default", "n1"]);
        let task = ContainerUse::new("c2", "web.1.x", ["web_data", "gone_data"]).of_service("s9");
        let mut result = AgentResult::new("N1");
        result.containers = vec![AgentContainer::from(&stopped), AgentContainer::from(&task)];
        let read = parse_result_line(&result.to_line()).unwrap().unwrap();
        assert_eq!(read, result);
        let mut sorted_task = task.clone();
        sorted_task.volumes.sort();
        assert_eq!(read.container_uses(), vec![stopped, sorted_task]);
        for bad in [
            r#"{"swarm_sweep_agent":3,"node":"N1","containers":[{"id":"","name":"x"}]}"#,
            r#"{"swarm_sweep_agent":3,"node":"N1","containers":[{"name":"x"}]}"#,
            r#"{"swarm_sweep_agent":3,"node":"N1","containers":[{"id":"c","name":"x","ports":1}]}"#,
        ] {
            assert!(matches!(parse_result_line(bad), Some(Err(_))), "{bad}");
        }
        assert!(matches!(
            parse_result_line(bad_container_line()),
            Some(Err(AgentError::Empty {
                field: "container",
                ..
            }))
        ));
    }

    fn bad_container_line() -> &'static str {
        r#"{"swarm_sweep_agent":3,"node":"N1","containers":[{"id":"","name":"x"}]}"#
    }

    #[test]
    fn a_node_whose_agent_is_of_the_version_before_containers_is_not_reached() {
        // What an agent of format 1 printed: no containers, which would
        // read as "no container uses a volume here".
        let old = r#"{"swarm_sweep_agent":1,"node":"N1","volumes":{"web":["web_data"]},"removed":[],"in_use":[],"refused":[],"failed":[]}"#;
        let nodes = ["N1".to_owned()];
        let lines = [LogLine::new("T1", "N1", old)];
        let reached = reach(&nodes, &[task("T1", "N1", "complete")], &lines);
        assert_eq!(
            reached["N1"],
            NodeReached::BadResult(AgentError::Format {
                what: "the result line",
                found: 1
            })
        );
        assert!(reached["N1"].result().is_none());
    }

    #[test]
    fn a_line_split_over_entries_is_joined_and_the_output_bounded() {
        let entries = [
            "{\"swarm_sweep_",
            "agent\":3,\"node\":\"N1\"}\n",
            "done\r\n",
            "last",
        ];
        let lines = task_lines("T1", "N1", entries);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            ["{\"swarm_sweep_agent\":3,\"node\":\"N1\"}", "done", "last"]
        );
        assert!(lines.iter().all(|l| l.task == "T1" && l.node == "N1"));
        assert!(matches!(parse_result_line(&lines[0].text), Some(Ok(_))));
        let long = "é".repeat(MAX_TASK_OUTPUT);
        let lines = task_lines("T1", "N1", [long.as_str(), "more"]);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].text.len() <= MAX_TASK_OUTPUT);
    }

    fn task(id: &str, node: &str, state: &str) -> JobTask {
        JobTask::new(id, node, state, None)
    }

    fn said(task: &str, node: &str, result: &AgentResult) -> LogLine {
        LogLine {
            task: task.into(),
            node: node.into(),
            text: result.to_line(),
        }
    }

    fn ok(node: &str) -> AgentResult {
        AgentResult {
            format: AGENT_FORMAT,
            node: node.into(),
            ..AgentResult::default()
        }
    }

    #[test]
    fn a_node_is_reached_only_by_its_completed_task_naming_it_once() {
        let nodes: Vec<String> = ["N1", "N2", "N3", "N4", "N5", "N6", "N7", "N8"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let tasks = [
            task("T1", "N1", "complete"),
            task("T2", "N2", "failed"),
            // N3: no task (down).
            task("T4", "N4", "complete"),
            task("T5", "N5", "complete"),
            task("T6", "N6", "complete"),
            task("T7", "N7", "complete"),
            task("T8a", "N8", "complete"),
            task("T8b", "N8", "complete"),
            task("T9", "N9", "complete"),
        ];
        let lines = [
            said("T1", "N1", &ok("N1")),
            LogLine {
                task: "T1".into(),
                node: "N1".into(),
                text: "removing web_data".into(),
            },
            said("T2", "N2", &ok("N2")),
            // N4: completed, said nothing.
            said("T5", "N5", &ok("N1")),
            said("T6", "N6", &ok("N6")),
            said("T6", "N6", &ok("N6")),
            said(
                "T7",
                "N7",
                &AgentResult::error("N7", "the daemon did not answer"),
            ),
            said("T9", "N9", &ok("N9")),
        ];
        let reached = reach(&nodes, &tasks, &lines);
        assert_eq!(reached["N1"], NodeReached::Reached(ok("N1")));
        assert!(matches!(reached["N2"], NodeReached::NotComplete { .. }));
        assert_eq!(reached["N3"], NodeReached::NoTask);
        assert_eq!(reached["N4"], NodeReached::NoResult);
        assert_eq!(reached["N5"], NodeReached::WrongNode { named: "N1".into() });
        assert_eq!(reached["N6"], NodeReached::SeveralResults { results: 2 });
        assert!(matches!(reached["N7"], NodeReached::AgentFailed(_)));
        assert_eq!(reached["N8"], NodeReached::SeveralTasks { tasks: 2 });
        assert_eq!(reached.len(), nodes.len(), "N9 is not of the swarm");
        // A line another task printed for N1 proves nothing for it.
        let reached = reach(
            &nodes[..1],
            &[task("T1", "N1", "complete")],
            &[said("T2", "N1", &ok("N1"))],
        );
        assert_eq!(reached["N1"], NodeReached::NoResult);
    }

    #[test]
    fn a_node_whose_output_could_not_be_read_alone_is_not_reached() {
        let nodes = ["N1".to_owned(), "N2".to_owned()];
        let tasks = [
            task("T1", "N1", "complete"),
            task("T2", "N2", "complete").with_unread_output("connection reset"),
        ];
        // A line read for N2 all the same (from an earlier try) proves
        // nothing once its output is known unread.
        let lines = [said("T1", "N1", &ok("N1")), said("T2", "N2", &ok("N2"))];
        let reached = reach(&nodes, &tasks, &lines);
        assert_eq!(reached["N1"], NodeReached::Reached(ok("N1")));
        assert_eq!(
            reached["N2"],
            NodeReached::OutputUnread("connection reset".into())
        );
    }

    #[test]
    fn only_known_end_states_are_terminal_and_an_unknown_state_is_not() {
        assert_eq!(TaskPhase::of("complete"), TaskPhase::Complete);
        assert!(TaskPhase::of("complete").is_terminal());
        for state in ["failed", "rejected", "shutdown", "orphaned", "remove"] {
            assert_eq!(TaskPhase::of(state), TaskPhase::Ended, "{state}");
            assert!(TaskPhase::of(state).is_terminal());
        }
        for state in [
            "new",
            "allocated",
            "pending",
            "assigned",
            "accepted",
            "preparing",
            "ready",
            "starting",
            "running",
        ] {
            assert_eq!(TaskPhase::of(state), TaskPhase::Live, "{state}");
            assert!(!TaskPhase::of(state).is_terminal());
        }
        // Another spelling, a future state, or nothing: still at work.
        for state in [
            "",
            "Complete",
            "COMPLETE",
            "completed",
            " complete",
            "paused",
        ] {
            assert_eq!(TaskPhase::of(state), TaskPhase::Unknown, "{state:?}");
            assert!(!TaskPhase::of(state).is_terminal());
        }
        assert_eq!(task("T1", "N1", "complete").phase(), TaskPhase::Complete);
    }

    const LIMIT: Duration = Duration::from_secs(60);
    const POLL: Duration = Duration::from_millis(500);

    fn progress(tasks: &[JobTask], desired: u64, elapsed_secs: u64) -> JobProgress {
        JobProgress::observe(
            tasks,
            desired,
            Duration::from_secs(elapsed_secs),
            LIMIT,
            POLL,
        )
    }

    #[test]
    fn a_job_with_no_task_ends_only_once_the_placement_has_settled() {
        assert_eq!(progress(&[], 0, 0), JobProgress::Placing);
        assert_eq!(progress(&[], 0, 4), JobProgress::Placing);
        assert_eq!(progress(&[], 0, 5), JobProgress::Ended);
        // Tasks listed before the count is: still placing.
        let done = [task("T1", "N1", "complete")];
        assert_eq!(progress(&done, 0, 1), JobProgress::Placing);
        assert_eq!(progress(&done, 0, 5), JobProgress::Ended);
        // A count without tasks yet: running, whatever the time.
        assert_eq!(
            progress(&[], 2, 30),
            JobProgress::Running {
                ended: 0,
                desired: 2
            }
        );
    }

    #[test]
    fn a_job_ends_when_every_task_it_means_to_run_has_ended() {
        let tasks = [
            task("T1", "N1", "complete"),
            task("T2", "N2", "failed"),
            task("T3", "N3", "running"),
        ];
        assert_eq!(
            progress(&tasks, 3, 1),
            JobProgress::Running {
                ended: 2,
                desired: 3
            }
        );
        // Two of three tasks listed, both ended: the third is to come.
        assert_eq!(
            progress(&tasks[..2], 3, 1),
            JobProgress::Running {
                ended: 2,
                desired: 3
            }
        );
        let ended = [
            task("T1", "N1", "complete"),
            task("T2", "N2", "failed"),
            task("T3", "N3", "rejected"),
        ];
        assert_eq!(progress(&ended, 3, 1), JobProgress::Ended);
        // More tasks than desired (a node joined meanwhile): ended too.
        assert_eq!(progress(&ended, 2, 1), JobProgress::Ended);
        // A state this version does not know keeps the job waited on.
        let odd = [task("T1", "N1", "complete"), task("T2", "N2", "paused")];
        assert_eq!(
            progress(&odd, 2, 1),
            JobProgress::Running {
                ended: 1,
                desired: 2
            }
        );
    }

    #[test]
    fn a_job_times_out_before_a_look_past_its_limit_and_an_end_wins() {
        let running = [task("T1", "N1", "running")];
        let at = |elapsed: Duration| JobProgress::observe(&running, 1, elapsed, LIMIT, POLL);
        assert_eq!(
            at(LIMIT - POLL),
            JobProgress::Running {
                ended: 0,
                desired: 1
            }
        );
        assert_eq!(
            at(LIMIT - POLL + Duration::from_millis(1)),
            JobProgress::TimedOut
        );
        assert_eq!(at(Duration::MAX), JobProgress::TimedOut);
        assert_eq!(
            JobProgress::observe(&[], 0, Duration::from_secs(2), Duration::ZERO, POLL),
            JobProgress::TimedOut
        );
        let done = [task("T1", "N1", "complete")];
        assert_eq!(
            JobProgress::observe(&done, 1, Duration::MAX, LIMIT, Duration::MAX),
            JobProgress::Ended
        );
    }

    #[test]
    fn the_start_label_reads_back() {
        let now = UnixTime::from_secs(1_800_000_000);
        let label = job_started_label(now);
        assert_eq!(label, "1800000000");
        assert_eq!(
            leftover_job(Some(&label), now, LIMIT),
            LeftoverJob::Young { age_secs: 0 }
        );
    }

    #[test]
    fn a_job_is_removed_as_left_behind_only_past_twice_its_limit() {
        let now = UnixTime::from_secs(10_000);
        let at = |started: u64| leftover_job(Some(&started.to_string()), now, LIMIT);
        assert_eq!(at(10_000 - 121), LeftoverJob::Remove { age_secs: 121 });
        assert!(at(10_000 - 121).is_removed());
        assert_eq!(at(10_000 - 120), LeftoverJob::Young { age_secs: 120 });
        assert_eq!(at(1), LeftoverJob::Remove { age_secs: 9_999 });
        assert_eq!(at(0), LeftoverJob::Remove { age_secs: 10_000 });
        // A fraction of a second counts: 2 x 1.5 s is 3 s.
        let short = Duration::from_millis(1_500);
        let started = |age: u64| (10_000 - age).to_string();
        assert!(!leftover_job(Some(&started(3)), now, short).is_removed());
        assert!(leftover_job(Some(&started(4)), now, short).is_removed());
        // No limit is so long that doubling it overflows.
        assert_eq!(
            leftover_job(Some("0"), now, Duration::MAX),
            LeftoverJob::Young { age_secs: 10_000 }
        );
    }

    #[test]
    fn a_job_started_in_the_future_or_without_a_readable_start_is_kept() {
        let now = UnixTime::from_secs(10_000);
        assert_eq!(
            leftover_job(Some("10001"), now, LIMIT),
            LeftoverJob::Ahead { ahead_secs: 1 }
        );
        assert_eq!(
            leftover_job(Some(&u64::MAX.to_string()), now, Duration::ZERO),
            LeftoverJob::Ahead {
                ahead_secs: u64::MAX - 10_000
            }
        );
        for label in [
            "",
            "abc",
            "-1",
            "1.5",
            " 1",
            "1 ",
            "0x10",
            "2026-12-01T08:00:00Z",
            "18446744073709551616",
        ] {
            let decided = leftover_job(Some(label), now, Duration::ZERO);
            assert_eq!(decided, LeftoverJob::Unreadable, "{label:?}");
            assert!(!decided.is_removed());
        }
        assert_eq!(
            leftover_job(None, now, Duration::ZERO),
            LeftoverJob::Unreadable
        );
        for kept in [
            LeftoverJob::Young { age_secs: 0 },
            LeftoverJob::Ahead { ahead_secs: 1 },
        ] {
            assert!(!kept.is_removed());
        }
    }
}
