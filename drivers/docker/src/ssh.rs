//! A daemon reached over `ssh://`, as `docker -H ssh://...` reaches it: the
//! system `ssh` client logs in and runs `docker system dial-stdio`, and the
//! daemon's HTTP goes through its stdin and stdout.
//!
//! The user's ssh configuration decides keys, host-key checking, proxies
//! and aliases, as for the docker CLI. Two options are always given:
//! `BatchMode=yes`, so that ssh never asks a question on the terminal (a
//! password, an unknown host key) and a sweep never waits on an answer that
//! will not come; and `ConnectTimeout`, so that an unanswering host fails
//! like an unanswering daemon. Each connection is one ssh process, killed
//! when the connection is dropped; what ssh says on its stderr becomes the
//! error when it ends before the daemon answered (a refused host key, a
//! failed login, no docker on the host).

use std::ffi::OsString;
use std::fmt;
use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::process::Stdio;
use std::task::{Context, Poll};
use std::time::Duration;

use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::time::Sleep;

use crate::endpoint::SshTarget;

/// The most of ssh's stderr kept for the error message: its complaints are
/// a line or two; a remote shell's noise is cut.
pub(crate) const MESSAGE_LIMIT: usize = 2048;

/// How long, after ssh closed its stdout without a reply, its stderr is
/// waited for. ssh has exited by then and its message is written, but a
/// master connection (`ControlPersist`) it started may hold the pipe open.
const MESSAGE_WAIT: Duration = Duration::from_secs(2);

/// The command run on the far side: it connects its stdio to the daemon
/// the remote docker CLI is configured for.
const REMOTE_COMMAND: [&str; 3] = ["docker", "system", "dial-stdio"];

/// A program and its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Program {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
}

/// The `ssh` command that reaches `target`'s daemon, giving up connecting
/// after `connect_timeout` (whole seconds, at least one).
pub(crate) fn command(target: &SshTarget, connect_timeout: Duration) -> Program {
    let secs = connect_timeout.as_secs().max(1);
    let mut args: Vec<OsString> = vec![
        "-T".into(),
        "-o".into(),
        "BatchMode=yes".into(),
        "-o".into(),
        format!("ConnectTimeout={secs}").into(),
    ];
    if let Some(user) = &target.user {
        args.push("-l".into());
        args.push(user.into());
    }
    if let Some(port) = target.port {
        args.push("-p".into());
        args.push(port.to_string().into());
    }
    // `--`: the host is never read as an option, whatever it is.
    args.push("--".into());
    args.push(target.host.clone().into());
    args.extend(REMOTE_COMMAND.iter().map(OsString::from));
    Program {
        program: "ssh".into(),
        args,
    }
}

/// ssh ended before the daemon said anything.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub(crate) struct SshEnded {
    /// The host, as given to ssh.
    pub(crate) host: String,
    /// What ssh (or the remote command) said on stderr, cut at
    /// [`MESSAGE_LIMIT`] and trimmed; empty when it said nothing.
    pub(crate) message: String,
}

impl fmt::Display for SshEnded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(
                f,
                "ssh to {} ended before the daemon answered, saying nothing",
                self.host
            )
        } else {
            write!(
                f,
                "ssh to {} ended before the daemon answered: {}",
                self.host, self.message
            )
        }
    }
}

/// One connection: a running ssh process.
pub(crate) struct SshStream {
    host: String,
    /// Killed when dropped (`kill_on_drop`): a connection given up on ends
    /// its process.
    _child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    /// `None` once it is closed.
    stderr: Option<ChildStderr>,
    said: Vec<u8>,
    /// Whether the daemon has sent anything on this connection.
    answered: bool,
    /// Set once ssh closed its stdout (or stdin) before the daemon
    /// answered: the bound on waiting for its message.
    ending: Option<Pin<Box<Sleep>>>,
}

impl SshStream {
    /// Starts `program` (an ssh command) for the daemon on `host`. Fails
    /// only when the program cannot be run at all.
    pub(crate) fn spawn(program: &Program, host: &str) -> io::Result<SshStream> {
        let mut cmd = Command::new(&program.program);
        cmd.args(&program.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own process group: a Ctrl-C at the terminal is the sweep's to
        // handle (finishing the step in flight), and must not cut the
        // connection that step runs over.
        cmd.process_group(0);
        let mut child = cmd.spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot run {:?}: {e}", program.program.to_string_lossy()),
            )
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(io::Error::other("ssh was started without its pipes"));
        };
        Ok(SshStream {
            host: host.to_owned(),
            _child: child,
            stdin,
            stdout,
            stderr: Some(stderr),
            said: Vec::new(),
            answered: false,
            ending: None,
        })
    }

    /// Reads what ssh has written on stderr so far, keeping the first
    /// [`MESSAGE_LIMIT`] bytes. Never blocks; registers for more.
    fn collect_stderr(&mut self, cx: &mut Context<'_>) {
        let mut chunk = [0u8; 1024];
        while let Some(stderr) = self.stderr.as_mut() {
            let mut buf = ReadBuf::new(&mut chunk);
            match Pin::new(stderr).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if !buf.filled().is_empty() => {
                    let room = MESSAGE_LIMIT.saturating_sub(self.said.len());
                    let take = buf.filled().len().min(room);
                    self.said.extend_from_slice(&buf.filled()[..take]);
                }
                Poll::Ready(_) => self.stderr = None,
                Poll::Pending => break,
            }
        }
    }

    /// Once ssh has ended before the daemon answered: the error saying
    /// why, when its stderr is closed or [`MESSAGE_WAIT`] has passed.
    fn poll_ended(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        self.collect_stderr(cx);
        let waited = self
            .ending
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(MESSAGE_WAIT)))
            .as_mut()
            .poll(cx)
            .is_ready();
        if self.stderr.is_some() && !waited {
            return Poll::Pending;
        }
        Poll::Ready(io::Error::other(SshEnded {
            host: self.host.clone(),
            message: one_line(&String::from_utf8_lossy(&self.said)),
        }))
    }
}

/// ssh's message on one line: it writes some with `\r\n`, several lines
/// for one refusal, and an error is shown on one line.
fn one_line(said: &str) -> String {
    said.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl AsyncRead for SshStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        // Kept drained, so that ssh never blocks on a full stderr pipe.
        this.collect_stderr(cx);
        let before = buf.filled().len();
        match Pin::new(&mut this.stdout).poll_read(cx, buf) {
            Poll::Ready(Ok(())) if buf.filled().len() == before && !this.answered => {
                this.poll_ended(cx).map(Err)
            }
            Poll::Ready(Ok(())) => {
                this.answered |= buf.filled().len() > before;
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl AsyncWrite for SshStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        match Pin::new(&mut this.stdin).poll_write(cx, buf) {
            // A closed stdin before any answer: ssh has exited, and its
            // message says more than "broken pipe".
            Poll::Ready(Err(e)) if !this.answered && e.kind() == io::ErrorKind::BrokenPipe => {
                this.poll_ended(cx).map(Err)
            }
            other => other,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stdin).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stdin).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{Endpoint, Transport};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn target(url: &str) -> SshTarget {
        match Endpoint::parse(url, None).unwrap().transport() {
            Transport::Ssh(t) => t.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn args(p: &Program) -> Vec<String> {
        p.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn the_command_is_the_docker_clis_with_no_questions_asked() {
        let p = command(
            &target("ssh://deploy@mgr.example.com:2222"),
            Duration::from_millis(7500),
        );
        assert_eq!(p.program, "ssh");
        assert_eq!(
            args(&p),
            [
                "-T",
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=7",
                "-l",
                "deploy",
                "-p",
                "2222",
                "--",
                "mgr.example.com",
                "docker",
                "system",
                "dial-stdio"
            ]
        );
        let p = command(&target("ssh://[::1]"), Duration::from_millis(10));
        assert_eq!(
            args(&p),
            [
                "-T",
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=1",
                "--",
                "::1",
                "docker",
                "system",
                "dial-stdio"
            ]
        );
    }

    fn shell(script: &str) -> Program {
        Program {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
        }
    }

    #[tokio::test]
    async fn what_ssh_says_when_it_fails_is_the_error() {
        let p = shell("echo 'Host key verification failed.' >&2; exit 255");
        let mut s = SshStream::spawn(&p, "mgr").unwrap();
        let _ = s.write_all(b"GET /_ping HTTP/1.1\r\n\r\n").await;
        let mut out = Vec::new();
        let e = s.read_to_end(&mut out).await.unwrap_err();
        let ended = e.get_ref().and_then(|i| i.downcast_ref::<SshEnded>());
        assert_eq!(
            ended,
            Some(&SshEnded {
                host: "mgr".into(),
                message: "Host key verification failed.".into()
            })
        );
        assert_eq!(
            e.to_string(),
            "ssh to mgr ended before the daemon answered: Host key verification failed."
        );
    }

    #[test]
    fn the_message_is_one_line() {
        assert_eq!(
            one_line("No ED25519 host key is known for h.\r\nHost key verification failed.\r\n"),
            "No ED25519 host key is known for h. Host key verification failed."
        );
        assert_eq!(one_line("\n  \r\n"), "");
    }

    #[tokio::test]
    async fn a_write_to_an_ssh_that_already_left_says_why_it_left() {
        let p = shell("echo 'Permission denied (publickey).' >&2; exec 0<&-; exit 255");
        let mut s = SshStream::spawn(&p, "mgr").unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let big = vec![b'x'; 1 << 20];
        let e = s.write_all(&big).await.unwrap_err();
        assert!(
            e.to_string().ends_with("Permission denied (publickey)."),
            "{e}"
        );
    }

    #[tokio::test]
    async fn the_message_is_bounded_and_silence_is_said() {
        let p = shell("head -c 100000 /dev/zero | tr '\\0' 'a' >&2; exit 1");
        let mut s = SshStream::spawn(&p, "h").unwrap();
        let e = s.read_to_end(&mut Vec::new()).await.unwrap_err();
        let ended = e
            .get_ref()
            .and_then(|i| i.downcast_ref::<SshEnded>())
            .unwrap();
        assert_eq!(ended.message.len(), MESSAGE_LIMIT);
        let mut s = SshStream::spawn(&shell("exit 255"), "h").unwrap();
        let e = s.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "ssh to h ended before the daemon answered, saying nothing"
        );
    }

    #[tokio::test]
    async fn a_master_holding_stderr_open_delays_the_error_only_briefly() {
        // The background `sleep` keeps stderr open, as a ControlPersist
        // master started by ssh does.
        let p = shell("echo 'mux: refused' >&2; sleep 8 </dev/null >/dev/null & exit 255");
        let mut s = SshStream::spawn(&p, "h").unwrap();
        let started = tokio::time::Instant::now();
        let e = s.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(6));
        assert!(e.to_string().ends_with("mux: refused"), "{e}");
    }

    #[tokio::test]
    async fn after_an_answer_the_end_of_output_is_the_end_of_the_connection() {
        let mut s = SshStream::spawn(&shell("echo hello; echo noise >&2"), "h").unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"hello\n");
    }

    #[test]
    fn a_missing_program_is_named() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _guard = rt.enter();
        let p = Program {
            program: "/nonexistent/ssh".into(),
            args: vec![],
        };
        let e = SshStream::spawn(&p, "h").err().unwrap();
        assert!(
            e.to_string().starts_with("cannot run \"/nonexistent/ssh\""),
            "{e}"
        );
    }
}
