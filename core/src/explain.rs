//! `explain SWARM/RELEASE`: every rule that applied to one release, in
//! plain sentences.
//!
//! The verdict is the plan's own ([`plan()`]): this module only reads the
//! snapshot and the plan and says what they show, so an explanation can
//! never give another answer than the plan gives.

use std::fmt::Write;

use serde::Serialize;
use thiserror::Error;

use crate::escape::Escaped;
use crate::format::FormatVersion;
use crate::objects::KEEP_LABEL;
use crate::owner::Ownership;
use crate::plan::{plan, Coverage, SweepPlan, UnclaimedReason};
use crate::record::labels::CD_CREATED;
use crate::record::Kind;
use crate::refs::{ReleaseRef, SwarmName};
use crate::snapshot::{Snapshot, SnapshotError};

/// Why there is nothing to explain.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ExplainError {
    /// The snapshot is invalid, so nothing is planned from it.
    #[error("{0}")]
    Snapshot(#[from] SnapshotError),
    /// No swarm of the snapshot has this name.
    #[error("no swarm named {} in the registry", Escaped(.swarm))]
    UnknownSwarm {
        /// The name asked about.
        swarm: SwarmName,
    },
    /// The swarm has no release records of this name.
    #[error("swarm {} has no release records of {}", Escaped(&.release.swarm), Escaped(&.release.release))]
    UnknownRelease {
        /// The release asked about.
        release: ReleaseRef,
    },
}

/// What the plan decided about one release, and every rule behind it
/// (`explain --format json` prints it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Explanation {
    /// The document's format version (see [`crate::format`]).
    pub format_version: FormatVersion,
    /// The swarm as asked about (not necessarily its cluster's name).
    pub swarm: SwarmName,
    /// The release as asked about.
    pub release: String,
    /// True when the plan deletes it.
    pub deleted: bool,
    /// The plan's reason: a deletion or spare reason.
    pub reason: String,
    /// One sentence per rule that applied, in the order the planner
    /// checks them, the verdict last. Names in them are raw: print them
    /// through [`Escaped`].
    pub sentences: Vec<String>,
}

impl Explanation {
    /// The sentences, one per line, every name escaped.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for s in &self.sentences {
            // Writing to a String cannot fail.
            let _ = writeln!(out, "{}", Escaped(s));
        }
        out
    }
}

/// Explains what the plan of `snapshot` decides about `release`.
pub fn explain(snapshot: &Snapshot, release: &ReleaseRef) -> Result<Explanation, ExplainError> {
    let plan = plan(snapshot)?;
    let swarm = plan
        .cluster_of(&release.swarm)
        .ok_or_else(|| ExplainError::UnknownSwarm {
            swarm: release.swarm.clone(),
        })?;
    // Deletions and spares use the cluster's smallest name.
    let key = ReleaseRef::new(swarm.swarm.clone(), release.release.clone());
    let entries: Vec<_> = snapshot
        .swarms
        .iter()
        .filter(|s| swarm.names.contains(&s.swarm))
        .filter_map(|s| {
            s.releases
                .iter()
                .find(|r| r.name == release.release)
                .map(|r| (s, r))
        })
        .collect();
    if entries.is_empty() {
        return Err(ExplainError::UnknownRelease {
            release: release.clone(),
        });
    }
    let controller = plan.controller.clone();
    let mut say = Vec::new();

    if swarm.names.len() > 1 {
        say.push(format!(
            "Swarm {} is one cluster with {}; it is judged under the name {}.",
            release.swarm,
            list(swarm.names.iter().filter(|n| **n != release.swarm)),
            swarm.swarm
        ));
    }
    // Whose stamp.
    let mut application = None;
    for (s, r) in &entries {
        let whose = match controller.classify(r.owner.as_deref(), &r.name) {
            Ownership::Unmanaged => {
                "no owner stamp of any controller, so nobody's: it is never deleted".to_owned()
            }
            Ownership::Foreign => format!(
                "the stamp {:?}, which is another controller's, not {}'s",
                r.owner.as_deref().unwrap_or_default(),
                controller
            ),
            Ownership::Malformed { reason } => format!(
                "the stamp {:?}, which starts like {}'s but is not one it writes ({reason})",
                r.owner.as_deref().unwrap_or_default(),
                controller
            ),
            Ownership::Ours { application: app } => {
                let said = format!(
                    "the stamp {:?}: controller {}, application {app}",
                    r.owner.as_deref().unwrap_or_default(),
                    controller
                );
                application = Some(app);
                said
            }
        };
        say.push(format!(
            "Its release records on swarm {} carry {whose}.",
            s.swarm
        ));
    }

    // Whether its application is in the set, and where.
    if !snapshot.app_set.loaded {
        say.push("The app set was not loaded, so no application is known to have left.".to_owned());
    } else if let Some(app) = &application {
        match snapshot
            .app_set
            .applications
            .iter()
            .find(|a| &a.name == app)
        {
            Some(a) => say.push(format!(
                "Application {app} is in the app set, deploying to swarm {} ({}).",
                a.swarm,
                if a.is_live() {
                    if a.has_reconciled() {
                        "reconciled"
                    } else {
                        "not reconciled yet"
                    }
                } else {
                    "draining"
                }
            )),
            None => say.push(format!(
                "Application {app} is not in the app set: it departed."
            )),
        }
    }

    // Who declares it on which swarm.
    let declarers: Vec<String> = snapshot
        .app_set
        .applications
        .iter()
        .filter(|a| {
            a.releases
                .as_deref()
                .unwrap_or_default()
                .contains(&release.release)
        })
        .map(|a| format!("{} on swarm {}", a.name, a.swarm))
        .collect();
    if declarers.is_empty() {
        say.push(format!(
            "No application of the app set declares a release named {}.",
            release.release
        ));
    } else {
        say.push(format!(
            "A release named {} is declared by {}.",
            release.release,
            declarers.join(", ")
        ));
    }

    // The keep label.
    for (_, r) in &entries {
        let services = r.objects.iter().flat_map(|o| &o.services);
        for s in services.filter(|s| s.keep.is_some()) {
            say.push(format!(
                "Its service {} carries {KEEP_LABEL}={:?}.",
                s.name,
                s.keep.as_deref().unwrap_or_default()
            ));
        }
    }

    // Holds.
    for hold in plan
        .holds
        .iter()
        .filter(|h| h.swarm.is_none() || h.swarm.as_ref() == Some(&swarm.swarm))
    {
        let scope = match &hold.swarm {
            None => "The whole sweep".to_owned(),
            Some(s) => format!("Swarm {s}"),
        };
        let mut sentence = format!("{scope} is held: {}", hold.reason.as_str());
        if !hold.applications.is_empty() {
            let _ = write!(sentence, " (applications {})", hold.applications.join(", "));
        }
        if let Some(m) = &hold.message {
            let _ = write!(sentence, ": {m}");
        }
        sentence.push('.');
        say.push(sentence);
    }

    // Volume coverage.
    say.push(coverage_sentence(&plan, &swarm.swarm));

    // The verdict.
    let (deleted, reason) = if let Some(d) = plan.deletions.iter().find(|d| d.release_ref() == key)
    {
        say.push(format!(
            "Therefore it is deleted ({}): application {} {}.",
            d.reason.as_str(),
            d.application,
            match d.reason {
                crate::plan::DeletionReason::Departed => "left the app set",
                crate::plan::DeletionReason::DestinationMoved =>
                    "now deploys to another swarm and has reconciled there",
            }
        ));
        if !d.in_use_by.is_empty() {
            // Raw, like every sentence: escaped when printed.
            let uses: Vec<String> = d
                .in_use_by
                .iter()
                .map(|u| {
                    let raw = crate::render::in_use_with(u, |name| name);
                    format!("{} {raw}", u.kind.as_str())
                })
                .collect();
            say.push(format!(
                "But another workload uses part of it, which stays, and so do its release \
                 records until nobody uses it: {}.",
                uses.join("; ")
            ));
        }
        (true, d.reason.as_str().to_owned())
    } else if let Some(s) = plan
        .spared
        .iter()
        .find(|s| s.swarm == key.swarm && s.release == key.release)
    {
        let mut sentence = format!("Therefore it is spared ({})", s.reason.as_str());
        if let Some(d) = &s.detail {
            let _ = write!(sentence, ": {d}");
        }
        sentence.push('.');
        say.push(sentence);
        (false, s.reason.as_str().to_owned())
    } else {
        // Every listed release of a planned swarm is either deleted or
        // spared; should that ever not hold, nothing is claimed.
        say.push("The plan neither deletes nor spares it, so it is not deleted.".to_owned());
        (false, "unplanned".to_owned())
    };
    resource_sentences(&plan, &key, &entries, &mut say);
    Ok(Explanation {
        format_version: FormatVersion,
        swarm: release.swarm.clone(),
        release: release.release.clone(),
        deleted,
        reason,
        sentences: say,
    })
}

/// What the resource rule found on a live release: each dropped object
/// with the revision that declared it and the one that dropped it (and a
/// config's or secret's marker), what stays in use, what it does not claim,
/// what it leaves whole and why, and the revisions it skipped.
fn resource_sentences(
    plan: &SweepPlan,
    key: &ReleaseRef,
    entries: &[(&crate::SwarmSnapshot, &crate::ReleaseEntry)],
    say: &mut Vec<String>,
) {
    if !plan.prune_resources {
        return;
    }
    let is_key = |swarm: &SwarmName, release: &str| swarm == &key.swarm && release == key.release;
    let marker = |kind: Kind, name: &str| -> Option<String> {
        let objects = entries.iter().find_map(|(_, r)| r.objects.as_ref())?;
        let list = match kind {
            Kind::Config => &objects.configs,
            Kind::Secret => &objects.secrets,
            Kind::Service | Kind::Network => return None,
        };
        let object = list.iter().find(|o| o.name == name)?;
        object
            .cd_created
            .as_ref()
            .map(|at| format!(" It carries {CD_CREATED}={at:?}."))
    };
    for d in plan.dropped.iter().filter(|d| is_key(&d.swarm, &d.release)) {
        for o in &d.objects {
            say.push(format!(
                "Its {} {} was declared by revision {}, dropped by revision {}, and is not declared by its current revision {}: it is removed.{}",
                o.kind.as_str(),
                o.name,
                o.claimed_by,
                o.dropped_by,
                d.revision,
                marker(o.kind, &o.name).unwrap_or_default()
            ));
        }
        for u in &d.in_use_by {
            if u.user.kind == crate::usage::UserKind::Unseen {
                say.push(format!(
                    "Its dropped {} {} stays: it is attachable, and the containers of a node were not read, so one of no service may be attached to it there.",
                    u.kind.as_str(),
                    u.object,
                ));
                continue;
            }
            say.push(format!(
                "Its dropped {} {} stays: {} {} (id {}) still uses it.",
                u.kind.as_str(),
                u.object,
                u.user.kind.as_str(),
                u.user.name,
                u.user.id
            ));
        }
    }
    for u in plan
        .unclaimed
        .iter()
        .filter(|u| is_key(&u.swarm, &u.release))
    {
        let why = match u.reason {
            UnclaimedReason::NotClaimed => {
                "no stored revision stamped for this controller and its application declared it"
            }
            UnclaimedReason::NoMarker => {
                "it does not carry the controller's created marker (adopted, not created)"
            }
            UnclaimedReason::Kept => "it carries the keep label",
            UnclaimedReason::NoId => "the snapshot gives no id to remove it by",
        };
        say.push(format!(
            "Its {} {} is not declared by its current revision but stays: {why}.",
            u.kind.as_str(),
            u.name
        ));
    }
    for h in plan
        .resource_holds
        .iter()
        .filter(|h| is_key(&h.swarm, &h.release))
    {
        say.push(format!(
            "The resource rule leaves it whole ({}): {}.",
            h.reason.as_str(),
            h.detail
        ));
    }
    for r in plan
        .skipped_revisions
        .iter()
        .filter(|r| is_key(&r.swarm, &r.release))
    {
        say.push(format!(
            "Its revision {} was skipped: its data cannot be read ({}).",
            r.revision, r.error
        ));
    }
}

fn coverage_sentence(plan: &SweepPlan, swarm: &SwarmName) -> String {
    let Some(sw) = plan.swarm(swarm) else {
        return "Its swarm's node reach is unknown.".to_owned();
    };
    let count = sw
        .node_count
        .map_or("an unknown number of".to_owned(), |c| c.to_string());
    match sw.coverage {
        Coverage::Off => "Volume purge is off: its named volumes would stay.".to_owned(),
        Coverage::Complete => format!(
            "A volume purge would reach all {count} nodes of swarm {swarm} (complete)."
        ),
        Coverage::Partial => {
            let missing = match &sw.unreached {
                Some(names) if !names.is_empty() => format!(": not {}", names.join(", ")),
                _ => String::new(),
            };
            format!(
                "A volume purge would reach only some of the {count} nodes of swarm {swarm} (partial{missing}); its records would be kept until every node is covered."
            )
        }
        Coverage::NodeLocal => format!(
            "A volume purge would reach only the manager's own volumes on swarm {swarm} (node_local); its records would be kept."
        ),
    }
}

fn list<'a>(names: impl Iterator<Item = &'a SwarmName>) -> String {
    names
        .map(SwarmName::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{ServiceEntry, StackObjects};
    use crate::snapshot::{AppSet, Application, Policy, ReleaseEntry, SwarmSnapshot};

    fn stamped(name: &str, app: &str) -> ReleaseEntry {
        ReleaseEntry::new(name, Some(format!("cd/default/{app}:release/{name}")))
    }

    fn snapshot(releases: Vec<ReleaseEntry>) -> Snapshot {
        let mut alpha = SwarmSnapshot::new("alpha");
        alpha.cluster_id = Some("c1".into());
        alpha.releases = releases;
        Snapshot::new(
            Policy::new("default", false, None),
            AppSet::new(
                true,
                vec![Application::reconciled("web", "alpha", &["web"])],
            ),
            vec![alpha],
        )
    }

    #[test]
    fn a_departed_release_is_explained_as_deleted() {
        let s = snapshot(vec![stamped("old", "old"), stamped("web", "web")]);
        let e = explain(&s, &ReleaseRef::new("alpha", "old")).unwrap();
        assert!(e.deleted);
        assert_eq!(e.reason, "departed");
        let text = e.text();
        assert!(text.contains("application old"), "{text}");
        assert!(text.contains("not in the app set"), "{text}");
        assert!(text.contains("Volume purge is off"), "{text}");
        assert!(
            text.lines()
                .last()
                .unwrap()
                .starts_with("Therefore it is deleted"),
            "{text}"
        );
    }

    #[test]
    fn a_declared_release_is_explained_as_spared_with_its_declarer() {
        let s = snapshot(vec![stamped("web", "web")]);
        let e = explain(&s, &ReleaseRef::new("alpha", "web")).unwrap();
        assert!(!e.deleted);
        assert_eq!(e.reason, "current_application");
        assert!(
            e.text().contains("declared by web on swarm alpha"),
            "{}",
            e.text()
        );
    }

    #[test]
    fn a_kept_release_names_its_label() {
        let kept = stamped("old", "old").with_objects(StackObjects::new(
            vec![ServiceEntry::new("s1", "old_app", 3).with_keep("true")],
            vec![],
            vec![],
            vec![],
        ));
        let e = explain(&snapshot(vec![kept]), &ReleaseRef::new("alpha", "old")).unwrap();
        assert!(!e.deleted);
        assert_eq!(e.reason, "kept");
        assert!(
            e.text().contains("swarm-sweep.keep=\"true\""),
            "{}",
            e.text()
        );
    }

    #[test]
    fn a_shared_object_names_its_user() {
        let old = stamped("old", "old").with_objects(StackObjects::new(
            vec![ServiceEntry::new("s1", "old_web", 1)],
            vec![crate::objects::ObjectRef::new("n1", "old_default")],
            vec![],
            vec![],
        ));
        let mut s = snapshot(vec![old]);
        s.swarms[0].usage = Some(crate::usage::Usage::new(
            vec![crate::usage::ServiceUse::new("u9", "user_app").with_networks(["old_default"])],
            vec![],
        ));
        let e = explain(&s, &ReleaseRef::new("alpha", "old")).unwrap();
        assert!(e.deleted);
        let last = e.sentences.last().unwrap();
        assert!(
            last.contains("network old_default in use by service user_app (id u9)"),
            "{last}"
        );
    }

    #[test]
    fn unknown_names_are_errors_naming_them() {
        let s = snapshot(vec![stamped("old", "old")]);
        assert!(matches!(
            explain(&s, &ReleaseRef::new("beta", "old")),
            Err(ExplainError::UnknownSwarm { swarm }) if swarm.as_str() == "beta"
        ));
        assert!(matches!(
            explain(&s, &ReleaseRef::new("alpha", "nope")),
            Err(ExplainError::UnknownRelease { release }) if release.release == "nope"
        ));
    }

    #[test]
    fn hostile_names_stay_on_one_line_each() {
        let s = snapshot(vec![stamped("old\nThen it is spared.", "old")]);
        let e = explain(&s, &ReleaseRef::new("alpha", "old\nThen it is spared.")).unwrap();
        assert_eq!(e.text().lines().count(), e.sentences.len());
    }
}
