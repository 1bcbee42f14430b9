//! The configs listing (`GET /configs`), read as a stream.
//!
//! Swarm answers a configs listing with every config's data in it
//! (`Spec.Data`, base64; a secrets listing leaves it out). The listing of
//! a swarm's release records therefore grows with every release, every
//! revision it keeps (ten by default) and every record's size (up to 500
//! KiB of data, 683 KiB as base64): read whole, as every other reply is, a
//! swarm with many releases would pass any bound on one reply
//! ([`REPLY_LIMIT`](crate::REPLY_LIMIT)) and become unreadable, or cost its
//! whole listing in memory at once. So this listing is read as it arrives,
//! one config at a time, and bounded per config rather than as a whole:
//!
//! - of each config only its id, version index, name and labels are kept,
//!   and its data only when the caller asks for it (the records of the
//!   releases in scope); any other config's data streams past unread and
//!   is never held;
//! - one config's JSON besides its data is at most [`CONFIG_LIMIT`]: past
//!   that its labels cannot be read, and a config whose labels cannot be
//!   read might be the newest record of a release, so the listing is
//!   refused (an older stamp must never stand for the newest);
//! - data kept is at most [`DATA_LIMIT`] of base64: past that the config
//!   is read by its labels alone and its data is [`DataError::TooLarge`],
//!   so one oversized record never makes the swarm unreadable;
//! - at most [`MAX_CONFIGS`] configs, nesting at most [`MAX_DEPTH`] deep,
//!   and at most [`CONFIG_LIMIT`] bytes in a row outside any config, so
//!   that what is kept stays bounded and an endless padding fails at once.
//!
//! The reader only finds where each config and its data are; the config
//! without its data is then parsed by `serde_json`, which refuses whatever
//! is not JSON. A listing that ends early or holds anything but an array of
//! objects is an error, never a shorter answer.

use std::collections::HashMap;

use base64::Engine as _;
use serde::Deserialize;
use thiserror::Error;

/// The most bytes of one listed config besides its data: 2 MiB. Swarm
/// refuses to store any object over 1.5 MiB, so no config it lists comes
/// near; what does is refused as a whole listing (see the module's text).
pub const CONFIG_LIMIT: usize = 2 * 1024 * 1024;

/// The most base64 of one config's data that is kept: 1 MiB (768 KiB
/// decoded). Swarm holds at most 500 KiB of data in a config, 683 KiB as
/// base64; a config whose data is larger is read by its labels alone.
pub const DATA_LIMIT: usize = 1024 * 1024;

/// The most configs one listing may hold: 200,000, each kept as its id,
/// version, name and labels (about 1 KiB), so that what a listing keeps
/// stays within some 200 MiB, as the bound on decoded replies holds every
/// other listing ([`OBJECT_BUDGET`](crate::OBJECT_BUDGET)).
pub const MAX_CONFIGS: usize = 200_000;

/// The deepest a config's JSON may nest: 128 levels, `serde_json`'s own
/// bound on what it parses.
pub const MAX_DEPTH: usize = 128;

/// The longest key the reader looks at: the keys it looks for (`Spec`,
/// `Data`, `Labels`) are shorter even written with `\u` escapes.
const KEY_CAPTURE: usize = 64;

/// A config's labels.
pub(crate) type Labels = HashMap<String, String>;

/// Whether the caller wants the data of a config with these labels.
pub(crate) type Wants<'a> = &'a (dyn Fn(&Labels) -> bool + Sync);

/// One config as listed, reduced to what is kept of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedConfig {
    /// Its id.
    pub(crate) id: Option<String>,
    /// Its version index.
    pub(crate) version: Option<u64>,
    /// Its name.
    pub(crate) name: Option<String>,
    /// Its labels; `None` when listed without any.
    pub(crate) labels: Option<Labels>,
    /// Its data, when asked for.
    pub(crate) data: Data,
}

/// A listed config's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Data {
    /// Not asked for: it streamed past unread.
    Skipped,
    /// Asked for and decoded from base64 (empty when listed without data).
    Read(Vec<u8>),
    /// Asked for, but it cannot be read.
    Unreadable(DataError),
}

/// Why a config's data, asked for, cannot be read. The config itself
/// still is, by its labels.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum DataError {
    /// Over [`DATA_LIMIT`] of base64: more than any config holds.
    #[error(
        "its data is more than {limit} bytes of base64, more than a config holds, and was not read"
    )]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// Not base64.
    #[error("its data is not base64: {message}")]
    NotBase64 {
        /// Why.
        message: String,
    },
    /// Listed as something other than a string.
    #[error("its data is listed as something other than a string")]
    NotAString,
    /// Listed twice: neither can be taken for the other.
    #[error("its data is listed twice")]
    Twice,
}

/// Why a configs listing was refused as a whole. Displayed on one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum ListingError {
    /// It does not open as a JSON array.
    #[error("the listing is not a JSON array: it starts with {0}")]
    NotAnArray(String),
    /// Something other than a JSON object where a config was due.
    #[error("the listing holds {found} where config #{index} was due")]
    NotAConfig {
        /// The config's position, from 1.
        index: usize,
        /// What came instead.
        found: String,
    },
    /// Something other than `,` or `]` after a config.
    #[error("the listing holds {found} after config #{index}")]
    AfterConfig {
        /// The config's position, from 1.
        index: usize,
        /// What came.
        found: String,
    },
    /// Something after the array's end.
    #[error("the listing is followed by {0}")]
    Trailing(String),
    /// It ended before the array did.
    #[error("the listing ends after {complete} whole configs, before the array does")]
    Truncated {
        /// The configs read whole.
        complete: usize,
    },
    /// More than [`MAX_CONFIGS`] configs.
    #[error("the listing holds more than {limit} configs")]
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// More than [`CONFIG_LIMIT`] bytes outside any config in a row.
    #[error("the listing holds more than {limit} bytes in a row outside any config")]
    Padding {
        /// The limit.
        limit: usize,
    },
    /// One config over [`CONFIG_LIMIT`] besides its data.
    #[error("config #{index} takes more than {limit} bytes besides its data")]
    ConfigTooLarge {
        /// The config's position, from 1.
        index: usize,
        /// The limit.
        limit: usize,
    },
    /// One config nested deeper than [`MAX_DEPTH`].
    #[error("config #{index} nests deeper than {limit} levels")]
    TooDeep {
        /// The config's position, from 1.
        index: usize,
        /// The limit.
        limit: usize,
    },
    /// One config is not a config's JSON.
    #[error("config #{index} cannot be read: {message}")]
    Config {
        /// The config's position, from 1.
        index: usize,
        /// Why.
        message: String,
    },
}

/// The byte `b`, named for an error message.
fn byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("{:?}", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Where the reader is in the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Top {
    /// Before the `[`.
    Start,
    /// After the `[`: a config or `]`.
    First,
    /// After a `,`: a config.
    Next,
    /// Inside a config.
    Config,
    /// After a config: `,` or `]`.
    After,
    /// After the `]`.
    End,
}

/// What an object or array of a config is to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The config itself.
    Config,
    /// Its `Spec`.
    Spec,
    /// The spec's `Labels`.
    Labels,
    /// Anything else.
    Other,
}

/// A key the reader looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Spec,
    Data,
    Labels,
    Other,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    object: bool,
    role: Role,
    /// In an object: the next string is a key.
    expect_key: bool,
    /// The key whose value comes next, once read.
    pending: Option<Key>,
}

/// The string being read, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Str {
    None,
    /// A string kept in the config's JSON.
    Kept {
        escape: bool,
        key: bool,
    },
    /// The data string.
    Data {
        escape: bool,
    },
}

/// What is done with the data of the config being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DataState {
    /// No `Data` so far.
    Absent,
    /// Listed as `null`.
    Null,
    /// Listed as something other than a string.
    NotAString,
    /// Not wanted: skipped.
    Skip,
    /// Wanted: kept.
    Keep,
    /// Kept until the labels say whether it is wanted.
    Undecided,
    /// Over [`DATA_LIMIT`]: no longer kept.
    TooLarge,
    /// Listed twice.
    Twice,
}

/// The parts of a config's JSON kept.
#[derive(Deserialize)]
struct RawConfig {
    #[serde(rename = "ID", default)]
    id: Option<String>,
    #[serde(rename = "Version", default)]
    version: Option<RawVersion>,
    #[serde(rename = "Spec", default)]
    spec: Option<RawSpec>,
}

#[derive(Deserialize)]
struct RawVersion {
    #[serde(rename = "Index", default)]
    index: Option<u64>,
}

#[derive(Deserialize)]
struct RawSpec {
    #[serde(rename = "Name", default)]
    name: Option<String>,
    #[serde(rename = "Labels", default)]
    labels: Option<Labels>,
}

/// Reads a configs listing chunk by chunk ([`Scanner::feed`]), handing out
/// each config once it has been read whole, then checks that the listing
/// ended ([`Scanner::finish`]).
pub(crate) struct Scanner<'w> {
    wants: Option<Wants<'w>>,
    top: Top,
    /// Bytes read outside any config since the last one.
    outside: usize,
    /// Configs started.
    count: usize,
    /// The config being read without its data.
    config: Vec<u8>,
    /// Its data, while it is kept.
    data: Vec<u8>,
    data_escaped: bool,
    data_state: DataState,
    frames: Vec<Frame>,
    string: Str,
    key: Vec<u8>,
    /// Where the spec's labels object starts and ends in `config`.
    labels: Option<(usize, Option<usize>)>,
}

impl<'w> Scanner<'w> {
    /// A reader that keeps the data of the configs whose labels `wants`
    /// accepts; without it, no data at all.
    pub(crate) fn new(wants: Option<Wants<'w>>) -> Self {
        Scanner {
            wants,
            top: Top::Start,
            outside: 0,
            count: 0,
            config: Vec::new(),
            data: Vec::new(),
            data_escaped: false,
            data_state: DataState::Absent,
            frames: Vec::new(),
            string: Str::None,
            key: Vec::new(),
            labels: None,
        }
    }

    /// Reads `chunk`, calling `each` with every config it completes.
    pub(crate) fn feed(
        &mut self,
        chunk: &[u8],
        each: &mut dyn FnMut(ListedConfig),
    ) -> Result<(), ListingError> {
        let mut at = 0;
        while at < chunk.len() {
            if self.top == Top::Config {
                at += self.in_config(&chunk[at..], each)?;
                continue;
            }
            let b = chunk[at];
            at += 1;
            self.outside += 1;
            if self.outside > CONFIG_LIMIT {
                return Err(ListingError::Padding {
                    limit: CONFIG_LIMIT,
                });
            }
            if is_space(b) {
                continue;
            }
            match (self.top, b) {
                (Top::Start, b'[') => self.top = Top::First,
                (Top::Start, b) => return Err(ListingError::NotAnArray(byte(b))),
                (Top::First | Top::Next, b'{') => self.start_config()?,
                (Top::First, b']') => self.top = Top::End,
                (Top::First | Top::Next, b) => {
                    return Err(ListingError::NotAConfig {
                        index: self.count + 1,
                        found: byte(b),
                    })
                }
                (Top::After, b',') => self.top = Top::Next,
                (Top::After, b']') => self.top = Top::End,
                (Top::After, b) => {
                    return Err(ListingError::AfterConfig {
                        index: self.count,
                        found: byte(b),
                    })
                }
                (Top::End, b) => return Err(ListingError::Trailing(byte(b))),
                // Read by `in_config` above.
                (Top::Config, _) => {}
            }
        }
        Ok(())
    }

    /// Checks that the listing ended where an array does.
    pub(crate) fn finish(&self) -> Result<(), ListingError> {
        match self.top {
            Top::End => Ok(()),
            Top::Start => Err(ListingError::NotAnArray("nothing".into())),
            Top::Config => Err(ListingError::Truncated {
                complete: self.count - 1,
            }),
            _ => Err(ListingError::Truncated {
                complete: self.count,
            }),
        }
    }

    fn start_config(&mut self) -> Result<(), ListingError> {
        self.count += 1;
        if self.count > MAX_CONFIGS {
            return Err(ListingError::TooMany { limit: MAX_CONFIGS });
        }
        self.top = Top::Config;
        self.outside = 0;
        self.config.clear();
        self.config.push(b'{');
        self.data.clear();
        self.data_escaped = false;
        self.data_state = DataState::Absent;
        self.frames.clear();
        self.frames.push(Frame {
            object: true,
            role: Role::Config,
            expect_key: true,
            pending: None,
        });
        self.string = Str::None;
        self.labels = None;
        Ok(())
    }

    /// Reads as much of `chunk` as belongs to the config being read;
    /// returns how much that was.
    fn in_config(
        &mut self,
        chunk: &[u8],
        each: &mut dyn FnMut(ListedConfig),
    ) -> Result<usize, ListingError> {
        let mut at = 0;
        while at < chunk.len() {
            match self.string {
                Str::Data { escape } => {
                    at += self.data_run(&chunk[at..], escape);
                    continue;
                }
                Str::Kept { escape, key } => {
                    at += self.kept_run(&chunk[at..], escape, key)?;
                    continue;
                }
                Str::None => {}
            }
            let b = chunk[at];
            at += 1;
            if self.structural(b)? {
                self.end_config(each)?;
                return Ok(at);
            }
        }
        Ok(at)
    }

    /// Reads one byte outside any string; whether it ended the config.
    fn structural(&mut self, b: u8) -> Result<bool, ListingError> {
        let index = self.count;
        let Some(frame) = self.frames.last_mut() else {
            return Ok(true);
        };
        if is_space(b) || b == b':' {
            self.push_config(&[b])?;
            return Ok(false);
        }
        if b == b',' {
            frame.expect_key = frame.object;
            frame.pending = None;
            self.push_config(&[b])?;
            return Ok(false);
        }
        if b == b'}' || b == b']' {
            let closed = self.frames.pop();
            self.push_config(&[b])?;
            if closed.is_some_and(|f| f.role == Role::Labels) {
                if let Some((_, end)) = &mut self.labels {
                    end.get_or_insert(self.config.len());
                }
            }
            return Ok(self.frames.is_empty());
        }
        if b == b'"' && frame.object && frame.expect_key {
            frame.expect_key = false;
            let capture = matches!(frame.role, Role::Config | Role::Spec);
            self.key.clear();
            self.string = Str::Kept {
                escape: false,
                key: capture,
            };
            self.push_config(&[b])?;
            return Ok(false);
        }
        // The first byte of a value.
        let pending = frame.pending.take();
        let role = frame.role;
        match (role, pending, b) {
            (Role::Spec, Some(Key::Data), b'"') => {
                self.push_config(&[b])?;
                self.start_data();
                return Ok(false);
            }
            (Role::Spec, Some(Key::Data), other) => {
                self.data_state = match self.data_state {
                    DataState::Absent if other == b'n' => DataState::Null,
                    DataState::Absent => DataState::NotAString,
                    _ => DataState::Twice,
                };
            }
            _ => {}
        }
        if b == b'{' || b == b'[' {
            if self.frames.len() >= MAX_DEPTH {
                return Err(ListingError::TooDeep {
                    index,
                    limit: MAX_DEPTH,
                });
            }
            let child = match (role, pending, b) {
                (Role::Config, Some(Key::Spec), b'{') => Role::Spec,
                (Role::Spec, Some(Key::Labels), b'{') => {
                    self.labels = Some((self.config.len(), None));
                    Role::Labels
                }
                _ => Role::Other,
            };
            self.frames.push(Frame {
                object: b == b'{',
                role: child,
                expect_key: b == b'{',
                pending: None,
            });
        } else if b == b'"' {
            self.string = Str::Kept {
                escape: false,
                key: false,
            };
        }
        self.push_config(&[b])?;
        Ok(false)
    }

    fn push_config(&mut self, bytes: &[u8]) -> Result<(), ListingError> {
        if self.config.len() + bytes.len() > CONFIG_LIMIT {
            return Err(ListingError::ConfigTooLarge {
                index: self.count,
                limit: CONFIG_LIMIT,
            });
        }
        self.config.extend_from_slice(bytes);
        Ok(())
    }

    /// Reads a kept string's bytes up to and including its closing quote,
    /// or the whole chunk; returns how many.
    fn kept_run(&mut self, chunk: &[u8], escape: bool, key: bool) -> Result<usize, ListingError> {
        let (len, closed, escape) = string_run(chunk, escape);
        let run = &chunk[..len];
        self.push_config(run)?;
        if key {
            let body = if closed { &run[..len - 1] } else { run };
            if self.key.len() <= KEY_CAPTURE {
                let room = KEY_CAPTURE + 1 - self.key.len();
                self.key.extend_from_slice(&body[..body.len().min(room)]);
            }
        }
        if closed {
            self.string = Str::None;
            if key {
                let name = key_name(&self.key);
                if let Some(frame) = self.frames.last_mut() {
                    frame.pending = Some(name);
                }
            }
        } else {
            self.string = Str::Kept { escape, key };
        }
        Ok(len)
    }

    /// Starts the data string: decides whether it is kept.
    fn start_data(&mut self) {
        self.data.clear();
        self.data_escaped = false;
        self.data_state = match self.data_state {
            DataState::Absent => match self.wants {
                None => DataState::Skip,
                Some(wants) => match self.labels_so_far() {
                    Some(labels) if wants(&labels) => DataState::Keep,
                    Some(_) => DataState::Skip,
                    None => DataState::Undecided,
                },
            },
            _ => DataState::Twice,
        };
        self.string = Str::Data { escape: false };
    }

    /// The spec's labels, when they have been read whole already.
    fn labels_so_far(&self) -> Option<Labels> {
        let (start, end) = self.labels?;
        serde_json::from_slice(self.config.get(start..end?)?).ok()
    }

    /// Reads the data string's bytes up to and including its closing
    /// quote, or the whole chunk; returns how many.
    fn data_run(&mut self, chunk: &[u8], escape: bool) -> usize {
        let (len, closed, escape) = string_run(chunk, escape);
        let body = if closed {
            &chunk[..len - 1]
        } else {
            &chunk[..len]
        };
        if matches!(self.data_state, DataState::Keep | DataState::Undecided) {
            if self.data.len() + body.len() > DATA_LIMIT {
                self.data_state = DataState::TooLarge;
                // Given back at once: it is not read.
                self.data = Vec::new();
            } else {
                self.data_escaped |= body.contains(&b'\\');
                self.data.extend_from_slice(body);
            }
        }
        if closed {
            self.string = Str::None;
            // The data's place in the config's JSON, emptied.
            self.config.push(b'"');
        } else {
            self.string = Str::Data { escape };
        }
        len
    }

    /// Hands out the config just read.
    fn end_config(&mut self, each: &mut dyn FnMut(ListedConfig)) -> Result<(), ListingError> {
        let index = self.count;
        self.top = Top::After;
        let raw: RawConfig =
            serde_json::from_slice(&self.config).map_err(|e| ListingError::Config {
                index,
                message: without_position(&e),
            })?;
        let spec = raw.spec.unwrap_or(RawSpec {
            name: None,
            labels: None,
        });
        let wanted = self.wants.is_some_and(|wants| match &spec.labels {
            Some(labels) => wants(labels),
            None => wants(&Labels::new()),
        });
        let data = match self.data_state {
            DataState::Skip => Data::Skipped,
            DataState::Keep => self.decoded(),
            _ if !wanted => Data::Skipped,
            DataState::Undecided => self.decoded(),
            DataState::Absent | DataState::Null => Data::Read(Vec::new()),
            DataState::NotAString => Data::Unreadable(DataError::NotAString),
            DataState::TooLarge => Data::Unreadable(DataError::TooLarge { limit: DATA_LIMIT }),
            DataState::Twice => Data::Unreadable(DataError::Twice),
        };
        if self.data.capacity() > DATA_LIMIT {
            self.data = Vec::new();
        }
        each(ListedConfig {
            id: raw.id,
            version: raw.version.and_then(|v| v.index),
            name: spec.name,
            labels: spec.labels,
            data,
        });
        Ok(())
    }

    /// The kept data, decoded.
    fn decoded(&mut self) -> Data {
        let text = std::mem::take(&mut self.data);
        let text = if self.data_escaped {
            // Escapes are legal JSON, if no encoder writes them in base64.
            let mut quoted = Vec::with_capacity(text.len() + 2);
            quoted.push(b'"');
            quoted.extend_from_slice(&text);
            quoted.push(b'"');
            match serde_json::from_slice::<String>(&quoted) {
                Ok(s) => s.into_bytes(),
                Err(e) => {
                    return Data::Unreadable(DataError::NotBase64 {
                        message: e.to_string(),
                    })
                }
            }
        } else {
            text
        };
        let decoded = base64::engine::general_purpose::STANDARD.decode(&text);
        // The buffer is used again for the next config.
        self.data = text;
        self.data.clear();
        match decoded {
            Ok(bytes) => Data::Read(bytes),
            Err(e) => Data::Unreadable(DataError::NotBase64 {
                message: e.to_string(),
            }),
        }
    }
}

/// What `serde_json` says of a config, without where: it read the config
/// without its data, whose positions are not the listing's.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// How many bytes of `chunk` belong to the string being read (its closing
/// quote included), whether it closed, and whether the last byte read
/// escapes the next.
fn string_run(chunk: &[u8], mut escape: bool) -> (usize, bool, bool) {
    let mut at = 0;
    while at < chunk.len() {
        if escape {
            escape = false;
            at += 1;
            continue;
        }
        match chunk[at..].iter().position(|&b| b == b'"' || b == b'\\') {
            None => return (chunk.len(), false, false),
            Some(i) => {
                at += i;
                if chunk[at] == b'"' {
                    return (at + 1, true, false);
                }
                escape = true;
                at += 1;
            }
        }
    }
    (chunk.len(), false, escape)
}

/// Which of the keys looked for `raw` (a key as written, without quotes)
/// is.
fn key_name(raw: &[u8]) -> Key {
    if raw.len() > KEY_CAPTURE {
        return Key::Other;
    }
    let unescaped;
    let text: &[u8] = if raw.contains(&b'\\') {
        let mut quoted = Vec::with_capacity(raw.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(raw);
        quoted.push(b'"');
        match serde_json::from_slice::<String>(&quoted) {
            Ok(s) => {
                unescaped = s;
                unescaped.as_bytes()
            }
            Err(_) => return Key::Other,
        }
    } else {
        raw
    };
    match text {
        b"Spec" => Key::Spec,
        b"Data" => Key::Data,
        b"Labels" => Key::Labels,
        _ => Key::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` read in chunks of `chunk` bytes, with the data of configs
    /// `wants` accepts.
    fn read_in(
        text: &[u8],
        chunk: usize,
        wants: Option<Wants<'_>>,
    ) -> Result<Vec<ListedConfig>, ListingError> {
        let mut listed = Vec::new();
        let mut scanner = Scanner::new(wants);
        for piece in text.chunks(chunk.max(1)) {
            scanner.feed(piece, &mut |c| listed.push(c))?;
        }
        scanner.finish()?;
        Ok(listed)
    }

    fn read(text: &str, wants: Option<Wants<'_>>) -> Result<Vec<ListedConfig>, ListingError> {
        read_in(text.as_bytes(), text.len(), wants)
    }

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn wanted(labels: &Labels) -> bool {
        labels.get("want").is_some()
    }

    /// Three configs as Docker lists them: the data after the labels, and
    /// before them, and none.
    const LISTING: &str = r#"[
        {"ID":"c1","Version":{"Index":3},"CreatedAt":"2024-01-01T00:00:00Z",
         "Spec":{"Name":"one","Labels":{"want":"1","a":"b"},"Data":"aGVsbG8="}},
        {"ID":"c2","Version":{"Index":4},
         "Spec":{"Data":"d29ybGQ=","Name":"two","Labels":{"want":"2"}}},
        {"ID":"c3","Version":{"Index":5},"Spec":{"Name":"three","Labels":null},"Extra":[1,{"Data":"x"}]}
    ]"#;

    #[test]
    fn configs_are_read_with_the_data_asked_for_only() {
        let all = read(LISTING, Some(&wanted)).unwrap();
        assert_eq!(
            all,
            [
                ListedConfig {
                    id: Some("c1".into()),
                    version: Some(3),
                    name: Some("one".into()),
                    labels: Some(labels(&[("want", "1"), ("a", "b")])),
                    data: Data::Read(b"hello".to_vec()),
                },
                ListedConfig {
                    id: Some("c2".into()),
                    version: Some(4),
                    name: Some("two".into()),
                    labels: Some(labels(&[("want", "2")])),
                    data: Data::Read(b"world".to_vec()),
                },
                ListedConfig {
                    id: Some("c3".into()),
                    version: Some(5),
                    name: Some("three".into()),
                    labels: None,
                    data: Data::Skipped,
                },
            ]
        );
        // Without a wish, nothing is read; the rest is the same.
        let none = read(LISTING, None).unwrap();
        assert!(none.iter().all(|c| c.data == Data::Skipped));
        let only_two = read(
            LISTING,
            Some(&|l: &Labels| l.contains_key("want") && l["want"] == "2"),
        )
        .unwrap();
        let data: Vec<&Data> = only_two.iter().map(|c| &c.data).collect();
        assert_eq!(
            data,
            [
                &Data::Skipped,
                &Data::Read(b"world".to_vec()),
                &Data::Skipped
            ]
        );
    }

    #[test]
    fn any_split_of_the_listing_reads_the_same() {
        let whole = read(LISTING, Some(&wanted)).unwrap();
        for chunk in 1..40 {
            assert_eq!(
                read_in(LISTING.as_bytes(), chunk, Some(&wanted)).unwrap(),
                whole,
                "chunks of {chunk}"
            );
        }
    }

    #[test]
    fn escaped_keys_and_data_read_as_json_says() {
        let text = r#"[{"ID":"c\"1","Spec":{"N\u0061me":"n","L\u0061bels":{"want":"\u0031"},"D\u0061ta":"aGVs\u0062G8\u003d"}}]"#;
        let listed = read(text, Some(&wanted)).unwrap();
        assert_eq!(listed[0].id.as_deref(), Some("c\"1"));
        assert_eq!(listed[0].name.as_deref(), Some("n"));
        assert_eq!(listed[0].labels, Some(labels(&[("want", "1")])));
        assert_eq!(listed[0].data, Data::Read(b"hello".to_vec()));
        // A `Data` anywhere but in the spec is no config's data.
        let text = r#"[{"Data":"aGVsbG8=","Spec":{"Labels":{"want":""},"X":{"Data":"eA=="}}}]"#;
        assert_eq!(
            read(text, Some(&wanted)).unwrap()[0].data,
            Data::Read(Vec::new())
        );
    }

    #[test]
    fn data_that_cannot_be_read_leaves_the_config_read() {
        let listing = |data: &str| {
            format!(
                r#"[{{"ID":"c1","Spec":{{"Name":"n","Labels":{{"want":""}},"Data":{data}}}}},{{"ID":"c2"}}]"#
            )
        };
        let cases = [
            ("\"not base64!\"", "its data is not base64"),
            ("17", "its data is listed as something other than a string"),
            (
                "\"aGVsbG8=\",\"Data\":\"aGVsbG8=\"",
                "its data is listed twice",
            ),
        ];
        for (data, why) in cases {
            let listed = read(&listing(data), Some(&wanted)).unwrap();
            assert_eq!(listed.len(), 2);
            match &listed[0].data {
                Data::Unreadable(e) => assert!(e.to_string().starts_with(why), "{data}: {e}"),
                other => panic!("{data}: {other:?}"),
            }
            assert_eq!(listed[0].labels, Some(labels(&[("want", "")])));
            // Not asked for, it is not looked at.
            assert_eq!(read(&listing(data), None).unwrap()[0].data, Data::Skipped);
        }
        let listed = read(&listing("null"), Some(&wanted)).unwrap();
        assert_eq!(listed[0].data, Data::Read(Vec::new()));
    }

    #[test]
    fn data_over_its_bound_is_unreadable_and_the_config_still_read() {
        let big = "A".repeat(DATA_LIMIT + 4);
        for (before, after) in [
            (r#"{"want":"x"}"#, ""),
            // The labels after the data: the data is kept until they are
            // read, up to its bound.
            ("", r#"{"want":"x"}"#),
        ] {
            let text = if before.is_empty() {
                format!(
                    r#"[{{"Spec":{{"Name":"big","Data":"{big}","Labels":{after}}}}},{{"ID":"c2"}}]"#
                )
            } else {
                format!(
                    r#"[{{"Spec":{{"Name":"big","Labels":{before},"Data":"{big}"}}}},{{"ID":"c2"}}]"#
                )
            };
            let listed = read_in(text.as_bytes(), 64 * 1024, Some(&wanted)).unwrap();
            assert_eq!(listed[0].name.as_deref(), Some("big"));
            assert_eq!(listed[0].labels, Some(labels(&[("want", "x")])));
            assert_eq!(
                listed[0].data,
                Data::Unreadable(DataError::TooLarge { limit: DATA_LIMIT })
            );
            assert_eq!(listed[1].id.as_deref(), Some("c2"));
            // Not asked for: skipped, never counted.
            let skipped = read_in(text.as_bytes(), 64 * 1024, Some(&|_: &Labels| false)).unwrap();
            assert_eq!(skipped[0].data, Data::Skipped);
        }
    }

    #[test]
    fn a_config_too_large_besides_its_data_refuses_the_listing() {
        let text = format!(
            r#"[{{"ID":"c1","Spec":{{"Labels":{{"x":"{}"}}}}}}]"#,
            "y".repeat(CONFIG_LIMIT)
        );
        assert_eq!(
            read_in(text.as_bytes(), 4096, None).unwrap_err(),
            ListingError::ConfigTooLarge {
                index: 1,
                limit: CONFIG_LIMIT
            }
        );
    }

    #[test]
    fn listings_past_their_bounds_are_refused() {
        let mut many = String::from("[");
        for i in 0..=MAX_CONFIGS {
            many.push_str(if i == 0 { "{}" } else { ",{}" });
        }
        many.push(']');
        assert_eq!(
            read(&many, None).unwrap_err(),
            ListingError::TooMany { limit: MAX_CONFIGS }
        );
        let padded = format!("[{}", " ".repeat(CONFIG_LIMIT + 1));
        assert_eq!(
            read_in(padded.as_bytes(), 4096, None).unwrap_err(),
            ListingError::Padding {
                limit: CONFIG_LIMIT
            }
        );
        let deep = format!("[{{\"x\":{}", "[".repeat(MAX_DEPTH));
        assert_eq!(
            read(&deep, None).unwrap_err(),
            ListingError::TooDeep {
                index: 1,
                limit: MAX_DEPTH
            }
        );
    }

    #[test]
    fn what_is_not_a_whole_array_of_configs_is_an_error() {
        let cases = [
            (
                "",
                "the listing is not a JSON array: it starts with nothing",
            ),
            ("{}", "the listing is not a JSON array: it starts with '{'"),
            (
                "[",
                "the listing ends after 0 whole configs, before the array does",
            ),
            (
                "[{}",
                "the listing ends after 1 whole configs, before the array does",
            ),
            (
                "[{},",
                "the listing ends after 1 whole configs, before the array does",
            ),
            (
                "[{\"ID\":\"c1\"",
                "the listing ends after 0 whole configs, before the array does",
            ),
            ("[1]", "the listing holds '1' where config #1 was due"),
            ("[{},]", "the listing holds ']' where config #2 was due"),
            ("[{}{}]", "the listing holds '{' after config #1"),
            ("[] x", "the listing is followed by 'x'"),
            (
                "[{\"ID\":1}]",
                "config #1 cannot be read: invalid type: integer `1`, expected a string",
            ),
            (
                "[{\"Spec\":{\"Labels\":{\"a\":1}}}]",
                "config #1 cannot be read: invalid type: integer `1`, expected a string",
            ),
            (
                "[{\"ID\" \"c1\"}]",
                "config #1 cannot be read: expected `:`",
            ),
        ];
        for (text, error) in cases {
            assert_eq!(
                read(text, None).map_err(|e| e.to_string()),
                Err(error.to_owned()),
                "{text:?}"
            );
        }
        assert_eq!(read("  [ ]\n", None).unwrap(), []);
    }

    /// Every prefix of a listing, and bytes of every kind, are an error or
    /// a listing, never a panic.
    #[test]
    fn cut_off_or_garbled_listings_never_panic() {
        let text = LISTING.as_bytes();
        for end in 0..text.len() {
            let cut = read_in(&text[..end], 7, Some(&wanted));
            assert!(cut.is_err(), "{:?}", String::from_utf8_lossy(&text[..end]));
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = b"[]{}\",:\\ aDSLpecbl0u\x00\xff";
        for _ in 0..2000 {
            let mut garbled = text.to_vec();
            for _ in 0..(next() % 6 + 1) {
                let at = (next() as usize) % garbled.len();
                garbled[at] = alphabet[(next() as usize) % alphabet.len()];
            }
            let _ = read_in(&garbled, (next() % 17 + 1) as usize, Some(&wanted));
        }
    }
}
