//! What became of each object a run removed or tried to remove: the
//! report's `objects`, which the audit log and the notifications read.
//!
//! Kept where the outcomes are taken, by the runs themselves, so that an
//! object is said removed only on the engine's word for the step that
//! removed it. The engine answers per step: a failed step marks every one
//! of its objects failed, since some may remain and the log must never
//! claim otherwise.

use std::collections::BTreeMap;

use super::action::{StackPart, Target};
use super::outcome::{Failure, Outcome};
use super::report::{ObjectKind, ObjectOutcome, ObjectReason, ObjectReport};
use crate::objects::ObjectRef;
use crate::usage;

/// One object: kind, name, node (volumes), id.
type Entry = (ObjectKind, String, Option<String>, Option<String>);

/// The last word on each object a run touched.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ledger {
    entries: BTreeMap<Entry, (ObjectOutcome, Option<String>)>,
}

impl Ledger {
    /// Notes what became of one object; a later word replaces an earlier
    /// one (a step tried again after a re-listing finds its first attempt's
    /// work gone).
    pub fn note(
        &mut self,
        kind: ObjectKind,
        name: &str,
        id: Option<&str>,
        node: Option<&str>,
        outcome: ObjectOutcome,
        error: Option<&str>,
    ) {
        let key = (
            kind,
            name.to_owned(),
            node.map(str::to_owned),
            id.map(str::to_owned),
        );
        self.entries
            .insert(key, (outcome, error.map(str::to_owned)));
    }

    /// Notes the objects of a stack part's removal, all with one outcome;
    /// nothing for the tasks, which are not removed.
    pub fn part(
        &mut self,
        part: StackPart,
        objects: &[ObjectRef],
        outcome: ObjectOutcome,
        error: Option<&str>,
    ) {
        let Some(kind) = kind_of_part(part) else {
            return;
        };
        for o in objects {
            self.note(kind, &o.name, o.id.as_deref(), None, outcome, error);
        }
    }

    /// The objects of `kind` (not volumes) whose removal failed, as the
    /// stack part removed them.
    pub fn failed(&self, kind: ObjectKind) -> Vec<ObjectRef> {
        self.entries
            .iter()
            .filter(|((k, _, node, _), (outcome, _))| {
                *k == kind && node.is_none() && *outcome == ObjectOutcome::Failed
            })
            .map(|((_, name, _, id), _)| match id {
                Some(id) => ObjectRef::new(id, name),
                None => ObjectRef::named(name),
            })
            .collect()
    }

    /// Notes an object left because another workload uses it.
    pub fn in_use(&mut self, kind: usage::ObjectKind, name: &str, node: Option<&str>) {
        self.note(
            kind_of_usage(kind),
            name,
            None,
            node,
            ObjectOutcome::InUse,
            None,
        );
    }

    /// The entries, as the report gives them, of `target`'s objects.
    pub fn reports(&self, target: &Target, reason: ObjectReason) -> Vec<ObjectReport> {
        self.entries
            .iter()
            .map(|((kind, name, node, id), (outcome, error))| ObjectReport {
                swarm: target.release.swarm.clone(),
                release: target.release.release.clone(),
                application: target.application.clone(),
                reason,
                kind: *kind,
                id: id.clone(),
                name: name.clone(),
                node: node.clone(),
                outcome: *outcome,
                error: error.clone(),
            })
            .collect()
    }
}

/// What an answer to a removal says of its objects, before the answer is
/// taken: `None` for "in use", which is tried again and not yet a word.
pub(crate) fn word(outcome: &Outcome) -> Option<ObjectOutcome> {
    match outcome {
        Outcome::Done => Some(ObjectOutcome::Removed),
        Outcome::Failed(Failure::Gone) => Some(ObjectOutcome::AlreadyGone),
        Outcome::Failed(Failure::InUse) => None,
        _ => Some(ObjectOutcome::Failed),
    }
}

/// The kind of object a stack part removes; `None` for the tasks.
fn kind_of_part(part: StackPart) -> Option<ObjectKind> {
    match part {
        StackPart::Services => Some(ObjectKind::Service),
        StackPart::Tasks => None,
        StackPart::Networks => Some(ObjectKind::Network),
        StackPart::Secrets => Some(ObjectKind::Secret),
        StackPart::Configs => Some(ObjectKind::Config),
    }
}

/// The report's kind of an object another workload may share.
pub(crate) fn kind_of_usage(kind: usage::ObjectKind) -> ObjectKind {
    match kind {
        usage::ObjectKind::Volume => ObjectKind::Volume,
        usage::ObjectKind::Network => ObjectKind::Network,
        usage::ObjectKind::Secret => ObjectKind::Secret,
        usage::ObjectKind::Config => ObjectKind::Config,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::refs::ReleaseRef;

    #[test]
    fn a_later_word_replaces_an_earlier_one() {
        let mut ledger = Ledger::default();
        let net = [ObjectRef::new("n1", "web_default")];
        ledger.part(
            StackPart::Networks,
            &net,
            ObjectOutcome::Failed,
            Some("boom"),
        );
        ledger.part(StackPart::Networks, &net, ObjectOutcome::AlreadyGone, None);
        let target = Target::new(ReleaseRef::new("a", "web"), "shop");
        let reports = ledger.reports(&target, ObjectReason::Departed);
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].outcome, ObjectOutcome::AlreadyGone);
        assert_eq!(reports[0].error, None);
        assert_eq!(reports[0].id.as_deref(), Some("n1"));
    }

    #[test]
    fn the_tasks_step_notes_nothing() {
        let mut ledger = Ledger::default();
        let svc = [ObjectRef::new("s1", "web_app")];
        ledger.part(StackPart::Tasks, &svc, ObjectOutcome::Removed, None);
        let target = Target::new(ReleaseRef::new("a", "web"), "shop");
        assert!(ledger.reports(&target, ObjectReason::Departed).is_empty());
    }

    #[test]
    fn words() {
        assert_eq!(word(&Outcome::Done), Some(ObjectOutcome::Removed));
        assert_eq!(word(&Outcome::gone()), Some(ObjectOutcome::AlreadyGone));
        assert_eq!(word(&Outcome::in_use()), None);
        assert_eq!(word(&Outcome::own_stack()), Some(ObjectOutcome::Failed));
        assert_eq!(
            word(&Outcome::unreachable("x")),
            Some(ObjectOutcome::Failed)
        );
    }
}
