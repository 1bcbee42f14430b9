//! `swarm-sweep agent`: one node's part of a volume job, the command of
//! the job's tasks. What it may do is `sweep_core::agent`'s to say; the
//! calls to the node's daemon are `sweep_docker::agent`'s.

use std::io::Write;
use std::time::Duration;

use sweep_core::agent::{AgentRequest, AgentResult};
use sweep_core::escape::escape;
use sweep_docker::agent::run_agent;
use sweep_docker::Endpoint;

use sweep_core::verdict::Status;

use crate::input::InputError;

/// Runs the agent and prints its one result line on stdout: 0 when it
/// ran (what it could not do is in the line, which is what the job reads),
/// 2 for a request or socket it cannot use (said in the line and on
/// stderr), 1 when the line cannot be written.
pub fn run(request: &str, socket: &str, timeout: Duration) -> Result<Status, InputError> {
    let input = AgentRequest::from_json(request)
        .map_err(|e| format!("--request: {e}"))
        .and_then(|request| {
            Endpoint::parse(socket, None)
                .map(|endpoint| (request, endpoint))
                .map_err(|e| format!("--socket: {e}"))
        });
    let (result, status) = match input {
        Ok((request, endpoint)) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| InputError::Runtime(format!("cannot start the async runtime: {e}")))?;
            (
                runtime.block_on(run_agent(&endpoint, timeout, &request)),
                Status::Success,
            )
        }
        Err(bad) => {
            eprintln!("swarm-sweep agent: {}", escape(&bad));
            (AgentResult::error("", bad), Status::BadInput)
        }
    };
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{}", result.to_line()).and_then(|()| out.flush()) {
        Ok(()) => Ok(status),
        Err(e) => {
            eprintln!("swarm-sweep agent: cannot write the result line: {e}");
            Ok(status.max(Status::NeedsAttention))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sweep_core::agent::AgentRequest;
    use sweep_core::verdict::Status;

    /// A request of this version that lists and removes nothing.
    fn request() -> String {
        AgentRequest::list_all().to_json()
    }

    #[test]
    fn a_request_or_socket_it_cannot_use_is_bad_input() {
        let limit = Duration::from_secs(1);
        assert_eq!(
            super::run("{}", "unix:///nonexistent.sock", limit).ok(),
            Some(Status::BadInput)
        );
        assert_eq!(
            super::run(&request(), "ftp://x", limit).ok(),
            Some(Status::BadInput)
        );
    }

    #[test]
    fn a_daemon_that_cannot_be_reached_is_said_in_the_line_not_the_status() {
        let limit = Duration::from_secs(1);
        assert_eq!(
            super::run(&request(), "unix:///nonexistent.sock", limit).ok(),
            Some(Status::Success)
        );
    }

    #[test]
    fn the_command_is_hidden_from_help_and_the_man_page() {
        let cmd = crate::cli::command();
        let sub = cmd.find_subcommand("agent").expect("agent");
        assert!(sub.is_hide_set());
    }
}
