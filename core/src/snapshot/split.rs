//! Reading a snapshot's swarms on two cores, each swarm as soon as the
//! pass over the list has found its text.
//!
//! The pass over the list (on the thread reading the snapshot) takes each
//! swarm as its text alone, checked as JSON but not read into anything,
//! and hands it to a second thread, which reads the swarms from the front
//! of the list as they come; once the pass is done, the first thread
//! reads them from the back, until the two meet. Each swarm is read by the
//! same code whichever thread reads it, and the list is put back in order,
//! so who read which changes nothing but the time.

use std::fmt;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, PoisonError};

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::text::ReadStr;
use super::types::SwarmSnapshot;

/// A swarm read from its text, at its position in the list.
type Read<S> = (usize, Result<SwarmSnapshot<S>, serde_json::Error>);

/// Which swarms are taken: the second thread takes them from the front,
/// the first from the back once the list's length (`back`) is known.
struct Claims {
    front: usize,
    back: Option<usize>,
}

/// Reads the list of swarms `deserializer` holds, on two threads. Any
/// error is only a sign to read the snapshot again the one way.
pub(super) fn swarms<'de, D, S>(deserializer: D) -> Result<Vec<SwarmSnapshot<S>>, D::Error>
where
    D: Deserializer<'de>,
    S: ReadStr<'de>,
{
    let claims = Mutex::new(Claims {
        front: 0,
        back: None,
    });
    let (found, arrived) = mpsc::channel();
    std::thread::scope(|scope| {
        let claims = &claims;
        // Without a second thread this one takes every swarm, the same way.
        let second = std::thread::Builder::new()
            .spawn_scoped(scope, move || from_front::<S>(claims, arrived))
            .ok();
        let texts = deserializer.deserialize_seq(Found { found });
        let mut read = Vec::new();
        let n = texts.as_ref().map_or(0, Vec::len);
        lock(claims).back = Some(n);
        if let Ok(texts) = &texts {
            while let Some(at) = from_back(claims) {
                read.push((at, serde_json::from_str(texts[at].get())));
            }
        }
        if let Some(second) = second {
            match second.join() {
                Ok(theirs) => read.extend(theirs),
                // A panic of the reading, carried on as one here would be.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        texts?;
        read.sort_unstable_by_key(|(at, _)| *at);
        if read.len() != n || read.iter().enumerate().any(|(i, (at, _))| i != *at) {
            return Err(de::Error::custom("a swarm was not read"));
        }
        read.into_iter()
            .map(|(_, swarm)| swarm.map_err(de::Error::custom))
            .collect()
    })
}

/// The second thread's part: the swarms from the front, each read as
/// soon as its text has arrived, until the first thread has the rest.
fn from_front<'de, S: ReadStr<'de>>(
    claims: &Mutex<Claims>,
    arrived: Receiver<&'de RawValue>,
) -> Vec<Read<S>> {
    let mut texts = Vec::new();
    let mut read = Vec::new();
    loop {
        let at = {
            let mut c = lock(claims);
            if c.back.is_some_and(|back| c.front >= back) {
                return read;
            }
            c.front += 1;
            c.front - 1
        };
        while texts.len() <= at {
            match arrived.recv() {
                Ok(text) => texts.push(text),
                // The pass ended before this position: nothing left here.
                Err(_) => return read,
            }
        }
        read.push((at, serde_json::from_str(texts[at].get())));
    }
}

/// The first thread's next swarm, from the back, while the second has
/// not taken it.
fn from_back(claims: &Mutex<Claims>) -> Option<usize> {
    let mut c = lock(claims);
    let back = c.back.filter(|&back| back > c.front)? - 1;
    c.back = Some(back);
    Some(back)
}

/// The claims, even if the other thread panicked holding them (its panic
/// is carried on when it is joined).
fn lock(claims: &Mutex<Claims>) -> std::sync::MutexGuard<'_, Claims> {
    claims.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The pass over the list: each swarm's text, handed on as it is found.
struct Found<'de> {
    found: Sender<&'de RawValue>,
}

impl<'de> Visitor<'de> for Found<'de> {
    type Value = Vec<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of swarms")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut texts = Vec::new();
        while let Some(text) = seq.next_element::<&'de RawValue>()? {
            // No second thread to take it: this one reads it later.
            let _ = self.found.send(text);
            texts.push(text);
        }
        Ok(texts)
    }
}
