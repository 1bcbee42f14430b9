//! The plan: which releases may go, which stay and why, what holds the
//! sweep, and which nodes a volume purge cannot reach.
//!
//! [`plan`] is a pure function of the [`Snapshot`]: the same snapshot, with
//! its lists in any order, gives a byte-identical plan, and carrying a plan
//! out and planning again gives no deletions. The steps live in submodules:
//! [`swarms`] groups names that are one cluster, [`holds`] finds what stops
//! the sweep, [`classify`] decides each release, [`coverage`] says what a
//! volume purge can reach.

pub mod classify;
pub mod coverage;
pub mod holds;
pub mod swarms;

use serde::{Deserialize, Serialize};

use crate::format::FormatVersion;
use crate::grace::Departed;
use crate::names::named_enum;
use crate::objects::{ObjectVersion, StackObjects};
use crate::owner::ControllerId;
use crate::refs::{ReleaseRef, SwarmName};
use crate::snapshot::{Facts, NodeEntry, Snapshot, SnapshotDoc, SnapshotError, View};

pub use classify::{Decision, Grace};
pub use coverage::Coverage;

/// The plan for one sweep. Every list is sorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SweepPlan {
    #[serde(default)]
    pub format_version: FormatVersion,
    /// The controller whose releases the plan deletes, checked when the
    /// plan was made (and again when one is read back from JSON), so that
    /// no driver has to.
    pub controller: ControllerId,
    pub purge_volumes: bool,
    pub holds: Vec<Hold>,
    pub deletions: Vec<Deletion>,
    pub spared: Vec<Spared>,
    pub uncovered: Vec<Uncovered>,
    /// Every swarm the plan knows of, one entry per cluster.
    pub swarms: Vec<SwarmPlan>,
    /// Every release the rules call departed and deletable (deleted, in
    /// its grace period, or held), with when it was first seen so: the
    /// next sweep's `departed_since`. Empty (and left out) when the
    /// snapshot has no `now`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub departed: Vec<Departed>,
}

impl SweepPlan {
    /// True when a hold stops the whole sweep, not only some swarms.
    pub fn is_held(&self) -> bool {
        self.holds.iter().any(|h| h.swarm.is_none())
    }

    /// The swarm entry a deletion's `swarm` field names.
    pub fn swarm(&self, name: &SwarmName) -> Option<&SwarmPlan> {
        // `plan` sorts `swarms` by name, so this is a search, not a scan per
        // deletion; a plan read back from elsewhere may not be sorted.
        match self.swarms.binary_search_by(|s| s.swarm.cmp(name)) {
            Ok(i) => Some(&self.swarms[i]),
            Err(_) => self.swarms.iter().find(|s| &s.swarm == name),
        }
    }

    pub fn to_json_pretty(&self) -> String {
        // Plain data of strings, numbers and enums: serializing cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Why nothing is deleted somewhere.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Hold {
    /// `"sweep"` for the whole sweep, else the swarm's name.
    pub scope: String,
    /// `None` for the whole sweep; the swarm otherwise. Kept beside `scope`
    /// so that a swarm that happens to be named `sweep` is not misread.
    pub swarm: Option<SwarmName>,
    pub reason: HoldReason,
    /// The applications behind the hold, sorted.
    pub applications: Vec<String>,
    pub message: Option<String>,
}

impl Hold {
    pub fn sweep(reason: HoldReason, message: impl Into<String>) -> Self {
        Hold {
            scope: "sweep".to_owned(),
            swarm: None,
            reason,
            applications: Vec::new(),
            message: Some(message.into()),
        }
    }

    pub fn swarm(
        swarm: &SwarmName,
        reason: HoldReason,
        applications: Vec<String>,
        message: Option<String>,
    ) -> Self {
        Hold {
            scope: swarm.as_str().to_owned(),
            swarm: Some(swarm.clone()),
            reason,
            applications,
            message,
        }
    }
}

named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum HoldReason {
        AppSetNotLoaded = "app_set_not_loaded",
        EmptyAppSet = "empty_app_set",
        Unreconciled = "unreconciled",
        Draining = "draining",
        SwarmUnreadable = "swarm_unreadable",
        NoReachableNode = "no_reachable_node",
        BlastRadius = "blast_radius",
        /// Applications name a destination no swarm of the snapshot has; their
        /// releases are spared everywhere. Holds no swarm of its own.
        UnknownDestination = "unknown_destination",
    }
}

impl HoldReason {
    /// Whether a person has to act. Waiting for an application to
    /// reconcile or drain is the normal course of a deploy and resolves
    /// itself; every other hold means part of the sweep cannot be done
    /// until someone fixes its cause.
    pub fn needs_attention(self) -> bool {
        !matches!(self, HoldReason::Unreconciled | HoldReason::Draining)
    }
}

/// A release that may be deleted.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Deletion {
    pub swarm: SwarmName,
    pub release: String,
    pub application: String,
    pub reason: DeletionReason,
    /// What a volume purge of this release can reach.
    pub volumes: Coverage,
    /// The objects its deletion removes, as listed when the snapshot was
    /// gathered (the release records go last); `None` when the snapshot
    /// did not list them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<StackObjects>,
    /// What the deletion relies on being unchanged (see [`Observed`]);
    /// `None` when the snapshot did not carry it, or its names of one
    /// cluster disagreed about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
}

/// The fingerprint of a release as planned: its release records' ids and
/// versions and its stack's services' ids and versions. A restamp raises a
/// record's version, a redeploy a service's, a re-creation changes ids: a
/// saved plan whose deletion's fingerprint is not what is observed again is
/// stale for that release.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Observed {
    /// Sorted.
    pub records: Vec<ObjectVersion>,
    /// Sorted.
    pub services: Vec<ObjectVersion>,
}

impl Observed {
    /// The fingerprint of what was observed, when both the records and the
    /// stack's services were.
    pub(crate) fn of(facts: Facts<'_>) -> Option<Self> {
        let mut records = facts.records?.to_vec();
        let mut services: Vec<ObjectVersion> = facts
            .objects?
            .services
            .iter()
            .map(|s| ObjectVersion::new(s.id.clone(), s.version))
            .collect();
        records.sort();
        services.sort();
        Some(Observed { records, services })
    }
}

impl Deletion {
    pub fn release_ref(&self) -> ReleaseRef {
        ReleaseRef::new(self.swarm.clone(), self.release.clone())
    }
}

named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum DeletionReason {
        /// The owning application has left the app set.
        Departed = "departed",
        /// The owning application now deploys to another swarm.
        DestinationMoved = "destination_moved",
    }
}

/// A release that stays, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Spared {
    pub swarm: SwarmName,
    pub release: String,
    pub reason: SpareReason,
    /// The owning application, when the release is this controller's.
    pub application: Option<String>,
    /// More about the reason, for people.
    pub detail: Option<String>,
    /// For `grace_period`: whole seconds until it may be deleted, when
    /// the snapshot gives the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub time_left: Option<u64>,
}

named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum SpareReason {
        Unmanaged = "unmanaged",
        ForeignOwner = "foreign_owner",
        OwnStack = "own_stack",
        CurrentApplication = "current_application",
        Declared = "declared",
        Held = "held",
        /// A service of its stack carries the keep label
        /// ([`crate::objects::KEEP_LABEL`]): an operator kept it by hand.
        Kept = "kept",
        /// It would be deleted, but has not been seen departed for
        /// `policy.min_departed_for` yet.
        GracePeriod = "grace_period",
    }
}

/// A swarm whose volume purge cannot reach every node it counts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Uncovered {
    pub swarm: SwarmName,
    /// The swarm's own count; `None` when it could not be read.
    pub node_count: Option<u64>,
    /// Names of the nodes the registry reached, sorted.
    pub reached: Vec<String>,
    /// How many counted nodes were not reached; `None` when unknown.
    pub missing: Option<u64>,
    /// The nodes of the swarm's own node list that were not reached, by
    /// name; `None` when the node list or the reach is unknown.
    pub unreached: Option<Vec<String>>,
    pub coverage: Coverage,
}

impl Uncovered {
    /// A swarm whose purge coverage is `coverage` and whose node count,
    /// reach and missing nodes are unknown.
    pub fn unknown(swarm: SwarmName, coverage: Coverage) -> Self {
        Uncovered {
            swarm,
            node_count: None,
            reached: Vec::new(),
            missing: None,
            unreached: None,
            coverage,
        }
    }
}

/// One swarm (cluster) as the plan sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SwarmPlan {
    /// The name deletions use: the smallest of the cluster's names.
    pub swarm: SwarmName,
    /// Every name the snapshot listed this cluster under, sorted.
    pub names: Vec<SwarmName>,
    pub cluster_id: Option<String>,
    pub readable: bool,
    pub node_count: Option<u64>,
    /// The nodes the registry reached, sorted by id; `None` when it cannot
    /// reach nodes individually (a purge then covers the manager only).
    pub nodes: Option<Vec<NodeEntry>>,
    /// Coverage of a volume purge on this swarm (`off` without purge).
    pub coverage: Coverage,
    /// Nodes on the swarm's own node list the registry did not reach.
    pub unreached: Option<Vec<String>>,
}

/// Plans a sweep. Errors only on an invalid snapshot.
pub fn plan(snapshot: &Snapshot) -> Result<SweepPlan, SnapshotError> {
    let view = View::of(snapshot);
    view.validate()?;
    plan_valid(&view)
}

/// Parses a snapshot from JSON text and plans it: the plan, and the error,
/// [`Snapshot::from_json`] followed by [`plan()`] give, without an owned
/// copy of the snapshot. Names are read in place from `text`, so a large
/// snapshot costs its text and the plan, not its text, a copy of every
/// name and the plan.
pub fn plan_json(text: &str) -> Result<SweepPlan, SnapshotError> {
    match SnapshotDoc::parse(text) {
        Some(doc) => {
            let view = View::of_doc(&doc);
            view.validate()?;
            plan_valid(&view)
        }
        // Read again the one way, for the error and the path to it; should
        // that way read it after all, its snapshot is what is planned.
        None => plan(&Snapshot::from_json(text)?),
    }
}

/// Plans a snapshot that [`View::validate`] accepted.
fn plan_valid(snapshot: &View<'_>) -> Result<SweepPlan, SnapshotError> {
    let controller = ControllerId::new(snapshot.controller)?;
    let purge = snapshot.purge_volumes;
    let groups = swarms::group_view(snapshot);
    let mut holds = holds::find_in(snapshot, &groups);
    let apps = classify::AppIndex::of(snapshot, &groups);
    let reach: Vec<coverage::GroupReach> = groups.iter().map(coverage::GroupReach::new).collect();

    // Every release lands in one of the two: room for all of them in each
    // is address space only, and no list of a million entries is copied
    // to grow.
    let releases: usize = groups.iter().map(|g| g.releases.len()).sum();
    let mut deletions = Vec::with_capacity(releases);
    let mut spared = Vec::with_capacity(releases);
    let held_by = holds::HoldIndex::new(&holds);
    let grace = Grace {
        window: snapshot.min_departed_for,
        now: snapshot.now,
    };
    let mut departed = Vec::new();
    for (at, (group, reach)) in groups.iter().zip(&reach).enumerate() {
        let held = held_by.get(&group.swarm);
        let mut declared = classify::Declared::new(&apps, at);
        for release in &group.releases {
            let declared = declared.of(release.name);
            let decision =
                classify::decide_at(&controller, &apps, &groups, at, group, release, declared);
            if let (Decision::Delete { .. }, Some(since)) =
                (&decision, grace.since(release.departed_since))
            {
                // Every release the rules would delete is departed, whatever
                // then keeps it (a hold, its grace period): its clock runs on.
                departed.push(Departed::new(group.swarm.clone(), release.name, since));
            }
            match decision {
                Decision::Spare {
                    reason,
                    application,
                    detail,
                } => spared.push(Spared {
                    swarm: group.swarm.clone(),
                    release: release.name.to_owned(),
                    reason,
                    application,
                    detail,
                    time_left: None,
                }),
                Decision::Delete {
                    application,
                    reason,
                } if held.is_some() => spared.push(Spared {
                    swarm: group.swarm.clone(),
                    release: release.name.to_owned(),
                    reason: SpareReason::Held,
                    application: Some(application),
                    detail: held.map(|r| {
                        format!(
                            "would be deleted ({}) but the sweep is held: {}",
                            reason.as_str(),
                            r.as_str()
                        )
                    }),
                    time_left: None,
                }),
                Decision::Delete {
                    application,
                    reason,
                } => match grace.waiting(release.departed_since, reason) {
                    // After every other rule: the grace period only ever
                    // turns a deletion into a wait.
                    Some(waiting) => spared.push(Spared {
                        swarm: group.swarm.clone(),
                        release: release.name.to_owned(),
                        reason: SpareReason::GracePeriod,
                        application: Some(application),
                        detail: Some(waiting.detail),
                        time_left: waiting.time_left,
                    }),
                    None => {
                        let facts = release.facts();
                        deletions.push(Deletion {
                            swarm: group.swarm.clone(),
                            release: release.name.to_owned(),
                            application,
                            reason,
                            volumes: reach.coverage(purge),
                            objects: facts
                                .and_then(|f| f.objects)
                                .cloned()
                                .map(StackObjects::sorted),
                            observed: facts.and_then(Observed::of),
                        })
                    }
                },
            }
        }
    }

    // The blast-radius guard looks at the plan as a whole: a truncated
    // registry listing or a mangled app set shows up as "too many".
    if let Some(max) = snapshot.max_deletions {
        if deletions.len() as u64 > max {
            holds.push(Hold::sweep(
                HoldReason::BlastRadius,
                format!(
                    "the plan would delete {} releases, more than max_deletions = {max}",
                    deletions.len()
                ),
            ));
            for d in deletions.drain(..) {
                spared.push(Spared {
                    swarm: d.swarm,
                    release: d.release,
                    reason: SpareReason::Held,
                    application: Some(d.application),
                    detail: Some(format!(
                        "would be deleted ({}) but the sweep is held: blast_radius",
                        d.reason.as_str()
                    )),
                    time_left: None,
                });
            }
        }
    }

    let uncovered = if purge {
        groups
            .iter()
            .zip(&reach)
            .filter_map(|(g, r)| r.uncovered(g))
            .collect()
    } else {
        Vec::new()
    };
    let swarm_plans = groups
        .iter()
        .zip(reach)
        .map(|(g, reach)| SwarmPlan {
            swarm: g.swarm.clone(),
            names: g.names.clone(),
            cluster_id: g.cluster_id.clone(),
            readable: g.error.is_none(),
            node_count: g.node_count,
            nodes: g.nodes.clone(),
            coverage: reach.coverage(purge),
            unreached: reach.unreached().map(<[String]>::to_vec),
        })
        .collect();

    let mut plan = SweepPlan {
        format_version: FormatVersion,
        controller: controller.clone(),
        purge_volumes: purge,
        holds,
        deletions,
        spared,
        uncovered,
        swarms: swarm_plans,
        departed,
    };
    sort(&mut plan);
    Ok(plan)
}

fn sort(plan: &mut SweepPlan) {
    // Sweep-wide holds first, then by swarm; `Option` orders `None` first.
    plan.holds.sort_by(|a, b| {
        (&a.swarm, a.reason, &a.applications, &a.message).cmp(&(
            &b.swarm,
            b.reason,
            &b.applications,
            &b.message,
        ))
    });
    plan.holds.dedup();
    plan.deletions.sort();
    plan.spared.sort();
    plan.uncovered.sort();
    plan.swarms.sort();
    plan.departed.sort();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Planning JSON text in place must accept exactly the texts the owned
    /// reader accepts, refuse the rest with the same error, and plan the
    /// same: one schema read two ways.
    fn same_both_ways(text: &str) {
        let owned = Snapshot::from_json(text).and_then(|s| plan(&s));
        assert_eq!(plan_json(text), owned, "{text}");
        assert_eq!(
            SnapshotDoc::parse(text).is_some(),
            serde_json::from_str::<Snapshot>(text).is_ok(),
            "{text}"
        );
    }

    #[test]
    fn hostile_texts_are_refused_or_planned_the_same_either_way() {
        let swarm = r#"{"swarm":"a","cluster_id":"C","releases":[{"name":"web","owner":"cd/default/gone:release/web"}]}"#;
        let app = r#"{"name":"keep","swarm":"a","releases":["db"]}"#;
        let doc = |policy: &str, apps: &str, swarms: &str| {
            format!(
                r#"{{{policy}"app_set":{{"loaded":true,"applications":[{apps}]}},"swarms":[{swarms}]}}"#
            )
        };
        let mut texts = vec![
            doc("", app, swarm),
            doc(
                r#""policy":{"purge_volumes":true,"max_deletions":0},"#,
                app,
                swarm,
            ),
            doc(r#""policy":null,"#, app, swarm),
            doc(r#""policy":{"controller":null},"#, app, swarm),
            doc(r#""policy":{"controller":"a/b"},"#, app, swarm),
            doc(r#""policy":{"max_deletions":-1},"#, app, swarm),
            doc(r#""policy":{"max_deletions":1.5},"#, app, swarm),
            doc(
                r#""policy":{"purge_volumes":true,"purge_volumes":false},"#,
                app,
                swarm,
            ),
            doc(r#""policy":{"purge_volume":true},"#, app, swarm),
            doc(r#""policy":["default",true,0],"#, app, swarm),
            doc(
                "",
                r#"{"name":"keep","swarm":"a","releases":["db"],"state":"draining"}"#,
                swarm,
            ),
            doc(
                "",
                r#"{"name":"keep","swarm":"a","state":"unreconciled"}"#,
                swarm,
            ),
            doc("", r#"{"name":"keep","swarm":"a","state":"bogus"}"#, swarm),
            doc(
                "",
                r#"{"name":"keep","swarm":"nowhere","releases":["web"]}"#,
                swarm,
            ),
            doc("", r#"{"name":"keep","swarm":"a","releases":null}"#, swarm),
            doc(
                "",
                r#"{"name":"keep","swarm":"a","releases":[null]}"#,
                swarm,
            ),
            doc("", r#"{"name":"keep","swarm":"a","releases":[""]}"#, swarm),
            doc("", r#"{"name":"Keep","swarm":"a"}"#, swarm),
            doc("", r#"{"name":"keep","swarm":null}"#, swarm),
            doc("", r#"{"name":"keep"}"#, swarm),
            doc("", r#"["keep","a",["db"],"reconciled"]"#, swarm),
            doc("", &format!("{app},{app}"), swarm),
            doc(
                "",
                r#"{"name":"k\u0065ep","swarm":"\u0061","releases":["w\u0065b"]}"#,
                swarm,
            ),
            doc(
                "",
                r#"{"name":"gone","swarm":"a","releases":["web"]}"#,
                swarm,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"w\u0065b","owner":"cd/default/gone:release/w\u0065b"}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web","owner":"cd/default/gone:release/web\n"}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web","owner":""}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web","owner":null}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web"},{"name":"web"}]}"#,
            ),
            doc("", app, r#"{"swarm":"a","releases":[{"name":""}]}"#),
            doc("", app, r#"{"swarm":"a","releases":[{"name":null}]}"#),
            doc("", app, r#"{"swarm":"a","releases":[{"owner":"x"}]}"#),
            doc("", app, r#"{"swarm":"a","releases":[["web","x"]]}"#),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web","owner":"x","owner":"y"}]}"#,
            ),
            doc("", app, r#"{"swarm":"a","releases":null}"#),
            doc(
                "",
                app,
                r#"{"swarm":"a","nodes":[{"id":"n1"},{"id":"n1"}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","nodes":[{"id":"n1","hostname":null}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","members":[{"id":""}],"node_count":2}"#,
            ),
            doc("", app, r#"{"swarm":"a","node_count":-2}"#),
            doc(
                "",
                app,
                r#"{"swarm":"a","error":"refused","self_stack":"web"}"#,
            ),
            doc("", app, r#"{"swarm":"a","nodez":[]}"#),
            doc("", app, &format!("{swarm},{swarm}")),
            doc("", app, r#"{"swarm":"a"},{"swarm":""}"#),
            doc(
                r#""policy":{"min_departed_for":"10m"},"now":"2026-12-01T08:00:00Z","#,
                app,
                r#"{"swarm":"a","releases":[{"name":"web","owner":"cd/default/gone:release/web","departed_since":"2026-12-01T07:00:00Z"},{"name":"db","owner":"cd/default/gone:release/db","departed_since":"2026-12-01T07:59:00Z"}]}"#,
            ),
            doc(r#""policy":{"min_departed_for":600},"#, app, swarm),
            doc(r#""policy":{"min_departed_for":0},"#, app, swarm),
            doc(r#""policy":{"min_departed_for":null},"#, app, swarm),
            doc(r#""policy":{"min_departed_for":"x"},"#, app, swarm),
            doc(r#""now":"2026-12-01T08:00:00Z","#, app, swarm),
            doc(r#""now":null,"#, app, swarm),
            doc(r#""now":"2026-12-01","#, app, swarm),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web","departed_since":7}]}"#,
            ),
            doc(
                r#""now":"2026-12-01T08:00:00Z","#,
                app,
                r#"{"swarm":"a","cluster_id":"C","releases":[{"name":"web","owner":"cd/default/gone:release/web","departed_since":"2026-12-01T07:00:00Z"}]},{"swarm":"b","cluster_id":"C","releases":[{"name":"web","owner":"cd/default/gone:release/web"}]}"#,
            ),
            r#"{"app_set":{"loaded":true}}"#.to_owned(),
            r#"{"app_set":{"loaded":true}} {}"#.to_owned(),
            r#"{"app_set":{"loaded":true}} x"#.to_owned(),
            r#"{"app_set":{"applications":[]}}"#.to_owned(),
            r#"{"app_set":{"loaded":"yes"}}"#.to_owned(),
            r#"{"app_set":{"loaded":true},"swarms":null}"#.to_owned(),
            r#"[{"loaded":true}]"#.to_owned(),
            r#"{"app_set":{"loaded":true},"app_set":{"loaded":true}}"#.to_owned(),
            String::new(),
            "null".to_owned(),
            "{".to_owned(),
            "[".repeat(10_000),
        ];
        // One cluster under three names, releases out of order and seen
        // under several names with stamps that agree or not.
        texts.push(doc(
            r#""policy":{"purge_volumes":true},"#,
            r#"{"name":"keep","swarm":"z","releases":["db"]},{"name":"moved","swarm":"other","releases":[]}"#,
            r#"{"swarm":"z","cluster_id":"C","node_count":3,"nodes":[{"id":"n2"},{"id":"n1","hostname":"h1"}],"releases":[{"name":"web","owner":"cd/default/gone:release/web"},{"name":"db","owner":"cd/default/gone:release/db"},{"name":"api","owner":"cd/default/moved:release/api"}]},
               {"swarm":"a","cluster_id":"C","nodes":[{"id":"n1","hostname":"other"}],"members":[{"id":"n3"}],"releases":[{"name":"web","owner":"cd/default/other:release/web"},{"name":"api","owner":"cd/default/moved:release/api"},{"name":"cache","owner":"cd/default/gone:release/cache"}]},
               {"swarm":"m","cluster_id":"C","releases":[{"name":"web"},{"name":"cache","owner":"cd/default/gone:release/cache"}]},
               {"swarm":"other","cluster_id":"D","releases":[]}"#,
        ));
        for text in &texts {
            same_both_ways(text);
        }
    }
}
