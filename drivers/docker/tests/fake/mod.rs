//! Fake docker daemons (no Docker engine needed): the parts of their
//! request handling shared by the test binaries that run them.

use sweep_docker::REPLY_LIMIT;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// What a fake daemon answers to `/version`.
pub const VERSION_REPLY: &str =
    r#"{"Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12","Os":"linux"}"#;

/// The head of the next request on `stream`, up to and with its blank
/// line; `None` once the client hangs up (or reading fails).
#[allow(dead_code)]
pub async fn read_head<S: AsyncRead + Unpin>(stream: &mut S) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// The head of a 200 reply whose JSON body is `len` bytes long.
pub fn json_head(len: usize) -> String {
    format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n")
}

/// A chunked 200 reply that opens with `first_chunk` (already framed) and
/// then goes on with 64 KiB chunks of spaces until the client hangs up or,
/// so that a client without a bound is not taken down with the machine,
/// until four times the limit.
#[allow(dead_code)]
pub async fn write_endless<S: AsyncWrite + Unpin>(stream: &mut S, first_chunk: &str) {
    let start = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{first_chunk}"
    );
    if stream.write_all(start.as_bytes()).await.is_err() {
        return;
    }
    let chunk = format!("10000\r\n{}\r\n", " ".repeat(0x10000));
    let mut sent = 0u64;
    while sent < 4 * REPLY_LIMIT && stream.write_all(chunk.as_bytes()).await.is_ok() {
        sent += 0x10000;
    }
}
