//! An audit entry for people: one line, every name escaped.

use std::fmt::Write;

use super::AuditEntry;
use crate::escape::Escaped;

impl AuditEntry {
    /// One line (with its line break), e.g.
    /// `2026-12-01T08:00:00Z removed service alpha/web web_app (id 3f9c)
    /// departed, application shop, by apply of controller default`.
    /// Every name and error is escaped ([`crate::escape`]): a name cannot
    /// add a line or move the cursor.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(160);
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            "{} {} {} {}/{} {}",
            self.time,
            self.outcome,
            self.kind,
            Escaped(&self.swarm),
            Escaped(&self.release),
            Escaped(&self.name),
        );
        if let Some(node) = &self.node {
            let _ = write!(out, " on {}", Escaped(node));
        }
        if let Some(id) = &self.id {
            let _ = write!(out, " (id {})", Escaped(id));
        }
        let _ = write!(
            out,
            " {}, application {}, by {} of controller {}",
            self.reason,
            Escaped(&self.application),
            self.trigger,
            Escaped(&self.controller),
        );
        if let Some(digest) = &self.saved_plan_digest {
            let _ = write!(out, " (saved plan {})", Escaped(digest));
        }
        if let Some(error) = &self.error {
            let _ = write!(out, ": {}", Escaped(error));
        }
        out.push('\n');
        out
    }
}
