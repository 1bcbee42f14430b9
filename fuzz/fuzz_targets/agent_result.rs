//! Arbitrary bytes as the output of a volume job's tasks (their log entries,
//! `sweep_core::agent::task_lines` and `parse_result_line`) and as an
//! agent's request (`AgentRequest::from_json`).
//!
//! Invariants: nothing panics; a result that reads writes back as itself;
//! a request that reads writes back as itself, and the work it gives a
//! node removes only volumes that carry the stack label it asked them
//! under; a node counts as reached only with a completed task there whose
//! one result line names it and reports no error.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sweep_core::agent::{
    parse_result_line, reach, task_lines, AgentRequest, JobTask, NodeReached, MAX_TASK_OUTPUT,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The request: the first line.
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    if let Ok(request) = AgentRequest::from_json(first) {
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
    // The logs: every other line; tasks: one per task the lines name,
    // complete.
    // Log entries: each further line is `TASK NODE FRAGMENT`, `\n` written
    // as `|` (a fragment may end a line or not), gathered per task.
    let mut entries: Vec<((&str, &str), Vec<String>)> = Vec::new();
    for record in rest.lines() {
        let mut parts = record.splitn(3, ' ');
        let (Some(task), Some(node)) = (parts.next(), parts.next()) else {
            continue;
        };
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
            assert_eq!(
                parse_result_line(&result.to_line()),
                Some(Ok(result.clone())),
                "a result reads back differently"
            );
        }
    }
    let mut tasks: Vec<JobTask> = lines
        .iter()
        .map(|l| JobTask {
            id: l.task.clone(),
            node: l.node.clone(),
            state: "complete".into(),
            error: None,
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
            assert_eq!(&result.node, node);
            assert!(result.error.is_none());
            let own = lines
                .iter()
                .filter(|l| &l.node == node && parse_result_line(&l.text).is_some())
                .count();
            assert_eq!(own, 1, "{node} reached without exactly one result line");
        }
    }
});
