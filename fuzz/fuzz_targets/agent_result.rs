//! Arbitrary bytes as the output of a volume job's tasks (their log entries,
//! `sweep_core::agent::task_lines` and `parse_result_line`), as an agent's
//! request (`AgentRequest::from_json`), as the tasks' states
//! (`TaskPhase::of`, `JobProgress::observe`) and as a job's start label
//! (`leftover_job`).
//!
//! Input: the first line is the request, and a start label; each further
//! line is a record: `TASK NODE FRAGMENT` a log entry (`\n` written as `|`),
//! `@ TASK STATE` the state of a task (`complete` when none is given), and
//! `! DESIRED ELAPSED_MS LIMIT_MS NOW_SECS LABEL` one look at the job (the
//! desired task count, the time since it started, its time limit, the
//! clock) and one start label (the rest of the line).
//!
//! Invariants: nothing panics; no object of a request or result is read
//! from an array; a result that reads writes back as itself; a request
//! that reads writes back as itself, and the work it gives a
//! node removes only volumes that carry the stack label it asked them
//! under; a node counts as reached only with a completed task there whose
//! one result line, of this format, names it and reports no error, and
//! every container that line reports has an id; only a state Docker
//! documents as an end is terminal; a job is ended only when every task is
//! terminal, none fewer than desired, and (none desired) the placement has
//! settled, and times out only when the next look would pass its limit; a
//! job is removed as left behind only with a start label of Unix seconds
//! more than twice its limit before now, and one whose label does not
//! read is kept.

#![no_main]

use std::collections::BTreeMap;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use sweep_core::agent::{
    leftover_job, parse_result_line, reach, task_lines, AgentRequest, JobProgress, JobTask,
    LeftoverJob, NodeReached, TaskPhase, MAX_TASK_OUTPUT, PLACEMENT_SETTLE,
};
use sweep_core::UnixTime;
use sweep_fuzz::no_object_read_from_an_array;

/// The states Docker documents as a task's end.
const END_STATES: [&str; 6] = [
    "complete", "failed", "rejected", "shutdown", "orphaned", "remove",
];

/// How often the driver looks at a job.
const POLL: Duration = Duration::from_millis(500);

/// One look at a job: `JobProgress::observe` against its rules.
fn look(tasks: &[JobTask], desired: u64, elapsed: Duration, limit: Duration) {
    let progress = JobProgress::observe(tasks, desired, elapsed, limit, POLL);
    let all_ended = tasks.iter().all(|t| t.phase().is_terminal());
    match progress {
        JobProgress::Ended => {
            assert!(all_ended, "ended with a task still at work");
            assert!(tasks.len() as u64 >= desired, "ended with tasks to come");
            assert!(desired > 0 || elapsed >= PLACEMENT_SETTLE, "ended unplaced");
        }
        JobProgress::TimedOut => {
            assert!(elapsed.saturating_add(POLL) > limit, "timed out early");
        }
        JobProgress::Placing => assert!(desired == 0 && elapsed < PLACEMENT_SETTLE),
        JobProgress::Running { ended, desired: d } => {
            assert_eq!(d, desired);
            assert!(ended <= tasks.len());
        }
    }
}

/// One start label: `leftover_job` against its rules.
fn leftover(label: Option<&str>, now: u64, limit: Duration) {
    let decided = leftover_job(label, UnixTime::from_secs(now), limit);
    let started = label.and_then(|l| l.parse::<u64>().ok());
    match (decided, started) {
        (LeftoverJob::Unreadable, None) => {}
        (LeftoverJob::Remove { age_secs }, Some(started)) => {
            assert!(decided.is_removed());
            assert_eq!(started.checked_add(age_secs), Some(now));
            assert!(Duration::from_secs(age_secs) > limit.saturating_mul(2));
        }
        (LeftoverJob::Young { age_secs }, Some(started)) => {
            assert!(!decided.is_removed());
            assert_eq!(started.checked_add(age_secs), Some(now));
        }
        (LeftoverJob::Ahead { ahead_secs }, Some(started)) => {
            assert!(!decided.is_removed());
            assert!(ahead_secs > 0 && now.checked_add(ahead_secs) == Some(started));
        }
        (decided, started) => panic!("{label:?} read as {started:?} decided {decided:?}"),
    }
}

/// A number of a `!` record; anything else is zero.
fn number(field: Option<&str>) -> u64 {
    field.and_then(|f| f.parse().ok()).unwrap_or(0)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The request: the first line.
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    if let Ok(request) = AgentRequest::from_json(first) {
        no_object_read_from_an_array(first, &request.to_json());
        assert_eq!(
            AgentRequest::from_json(&request.to_json()),
            Ok(request.clone())
        );
        // Every node's volumes, as the log lines' texts name them: half
        // labelled with the first stack asked for, half with none.
        let stack = request
            .remove
            .values()
            .flat_map(|s| s.keys())
            .next()
            .cloned();
        for (node, stacks) in &request.remove {
            let volumes: Vec<(String, Option<String>)> = stacks
                .values()
                .flatten()
                .enumerate()
                .map(|(i, v)| (v.clone(), (i % 2 == 0).then(|| stack.clone()).flatten()))
                .collect();
            let work = request.work_on(node, &volumes);
            for removed in &work.remove {
                let label = volumes
                    .iter()
                    .find(|(n, _)| n == removed)
                    .and_then(|(_, l)| l.as_ref());
                assert!(
                    stacks
                        .iter()
                        .any(|(s, vs)| vs.contains(removed) && Some(s) == label),
                    "{removed} removed without its stack's label"
                );
            }
        }
    }
    // The logs: every other line; tasks: one per task the lines name, in
    // the state an `@` record gives it, `complete` otherwise.
    // Log entries: each further line is `TASK NODE FRAGMENT`, `\n` written
    // as `|` (a fragment may end a line or not), gathered per task.
    // States: `@ TASK STATE`; looks: `! DESIRED ELAPSED_MS LIMIT_MS NOW LABEL`.
    let mut entries: Vec<((&str, &str), Vec<String>)> = Vec::new();
    let mut states: BTreeMap<&str, &str> = BTreeMap::new();
    let mut looks: Vec<(u64, Duration, Duration, u64, &str)> = Vec::new();
    for record in rest.lines() {
        if let Some(look) = record.strip_prefix("! ") {
            let mut fields = look.splitn(5, ' ');
            looks.push((
                number(fields.next()),
                Duration::from_millis(number(fields.next())),
                Duration::from_millis(number(fields.next())),
                number(fields.next()),
                fields.next().unwrap_or(""),
            ));
            continue;
        }
        let mut parts = record.splitn(3, ' ');
        let (Some(task), Some(node)) = (parts.next(), parts.next()) else {
            continue;
        };
        if task == "@" {
            let state = parts.next().unwrap_or("");
            let phase = TaskPhase::of(state);
            assert_eq!(
                phase.is_terminal(),
                END_STATES.contains(&state),
                "{state:?} is {phase:?}"
            );
            states.insert(node, state);
            continue;
        }
        let fragment = parts.next().unwrap_or("").replace('|', "\n");
        match entries.iter_mut().find(|(key, _)| *key == (task, node)) {
            Some((_, list)) => list.push(fragment),
            None => entries.push(((task, node), vec![fragment])),
        }
    }
    let mut lines = Vec::new();
    for ((task, node), list) in &entries {
        let own = task_lines(task, node, list.iter().map(String::as_str));
        for line in &own {
            assert!(line.text.len() <= MAX_TASK_OUTPUT && !line.text.contains('\n'));
            assert!(line.task == *task && line.node == *node);
        }
        lines.extend(own);
    }
    for line in &lines {
        if let Some(Ok(result)) = parse_result_line(&line.text) {
            no_object_read_from_an_array(&line.text, &result.to_line());
            assert_eq!(
                parse_result_line(&result.to_line()),
                Some(Ok(result.clone())),
                "a result reads back differently"
            );
        }
    }
    let mut tasks: Vec<JobTask> = lines
        .iter()
        .map(|l| {
            let state = states.get(l.task.as_str()).copied().unwrap_or("complete");
            JobTask::new(l.task.clone(), l.node.clone(), state, None)
        })
        .collect();
    tasks.sort_by(|a, b| (&a.node, &a.id).cmp(&(&b.node, &b.id)));
    tasks.dedup();
    let mut nodes: Vec<String> = lines.iter().map(|l| l.node.clone()).collect();
    // A node no record can name: its field would end at the space.
    nodes.push("no task here".into());
    nodes.sort();
    nodes.dedup();
    let reached = reach(&nodes, &tasks, &lines);
    assert_eq!(reached.len(), nodes.len());
    assert_eq!(reached["no task here"], NodeReached::NoTask);
    for (node, outcome) in &reached {
        if let Some(result) = outcome.result() {
            assert!(
                tasks
                    .iter()
                    .any(|t| &t.node == node && t.phase() == TaskPhase::Complete),
                "{node} reached without a completed task"
            );
            assert_eq!(&result.node, node);
            assert!(result.error.is_none());
            // Every container it reports can be told apart, and reaches
            // the core's usage facts whole.
            assert!(result.containers.iter().all(|c| !c.id.is_empty()));
            let uses = result.container_uses();
            assert_eq!(uses.len(), result.containers.len());
            for (used, listed) in uses.iter().zip(&result.containers) {
                assert_eq!(used.id, listed.id);
                assert_eq!(used.volumes.len(), listed.volumes.len());
            }
            let own = lines
                .iter()
                .filter(|l| &l.node == node && parse_result_line(&l.text).is_some())
                .count();
            assert_eq!(own, 1, "{node} reached without exactly one result line");
        }
    }
    // The job: one look with no task desired, then each `!` record's.
    look(&tasks, 0, Duration::ZERO, Duration::from_secs(60));
    leftover(Some(first), 1_800_000_000, Duration::from_secs(60));
    leftover(None, 1_800_000_000, Duration::from_secs(60));
    for (desired, elapsed, limit, now, label) in looks {
        look(&tasks, desired, elapsed, limit);
        look(&[], desired, elapsed, limit);
        leftover(Some(label), now, limit);
    }
});
