//! Snapshots of live releases with stored revisions, for the resource
//! rule's tests: a release's revisions each declare some objects, its
//! stack holds some, and the builder fills in records, payloads and ids as
//! a gather of the engine's own records would.

#![allow(dead_code)]

use sweep_core::objects::{ObjectRef, ObjectVersion, ServiceEntry, StackObjects};
use sweep_core::record::{record_name, Declared, Payload, RevisionDocument, RevisionRead};
use sweep_core::usage::{ServiceUse, Usage};
use sweep_core::{AppSet, Application, Policy, ReleaseEntry, Snapshot, SwarmSnapshot};

pub const CONTROLLER: &str = "default";

/// The stamp this controller writes for `application`'s `release`.
pub fn stamp(application: &str, release: &str) -> String {
    format!("cd/{CONTROLLER}/{application}:release/{release}")
}

/// One stored revision.
#[derive(Debug, Clone)]
pub struct Rev {
    pub number: u64,
    /// The owner label; `None`: none.
    pub label_owner: Option<String>,
    /// The owner in the data.
    pub data_owner: Option<String>,
    /// Names without the stack prefix: `("service", "worker")`.
    pub declares: Vec<(&'static str, String)>,
    /// The data cannot be read: why.
    pub unreadable: Option<String>,
    /// The revision label as written, when not the number.
    pub label: Option<String>,
    /// The status in the data; `None`: none.
    pub status: Option<&'static str>,
    /// The status label; `None`: none.
    pub label_status: Option<&'static str>,
}

impl Rev {
    /// Revision `number`, stamped for `application` on its label and in
    /// its data, declaring `declares` (kind, key).
    pub fn owned(
        application: &str,
        release: &str,
        number: u64,
        declares: &[(&'static str, &str)],
    ) -> Self {
        let s = stamp(application, release);
        Rev {
            number,
            label_owner: Some(s.clone()),
            data_owner: Some(s),
            declares: declares
                .iter()
                .map(|(k, n)| (*k, (*n).to_owned()))
                .collect(),
            unreadable: None,
            label: None,
            status: None,
            label_status: None,
        }
    }

    /// With `status` in its data.
    pub fn with_status(mut self, status: &'static str) -> Self {
        self.status = Some(status);
        self
    }

    /// With `status` on its label only (its data says `deployed`): an
    /// engine that rolls back by relabelling.
    pub fn with_label_status(mut self, status: &'static str) -> Self {
        self.status = Some("deployed");
        self.label_status = Some(status);
        self
    }
}

/// One object of the stack: (kind, key without the prefix, marker).
#[derive(Debug, Clone)]
pub struct Obj {
    pub kind: &'static str,
    pub key: String,
    pub marker: bool,
    /// A network: listed attachable.
    pub attachable: bool,
}

impl Obj {
    pub fn new(kind: &'static str, key: &str) -> Self {
        Obj {
            kind,
            key: key.to_owned(),
            marker: true,
            attachable: false,
        }
    }

    /// The network `key`, listed attachable.
    pub fn attachable(key: &str) -> Self {
        Obj {
            attachable: true,
            ..Obj::new("network", key)
        }
    }

    pub fn unmarked(kind: &'static str, key: &str) -> Self {
        Obj {
            marker: false,
            ..Obj::new(kind, key)
        }
    }
}

/// A live release as gathered: its revisions and its stack.
pub fn release(name: &str, revisions: &[Rev], objects: &[Obj]) -> ReleaseEntry {
    let newest = revisions.iter().max_by_key(|r| r.number);
    let owner = newest.and_then(|r| r.label_owner.clone());
    let read: Vec<RevisionRead> = revisions
        .iter()
        .map(|r| {
            let payload = match &r.unreadable {
                Some(why) => Payload::Unreadable(why.clone()),
                None => {
                    let mut declared = Declared::default();
                    for (kind, key) in &r.declares {
                        let full = format!("{name}_{key}");
                        let list = match *kind {
                            "service" => &mut declared.services,
                            "network" => &mut declared.networks,
                            "config" => &mut declared.configs,
                            "secret" => &mut declared.secrets,
                            other => panic!("kind {other}"),
                        };
                        list.insert(full);
                    }
                    let document =
                        RevisionDocument::new(name, r.number, r.data_owner.clone(), declared);
                    Payload::Read(match r.status {
                        Some(status) => document.with_status(status),
                        None => document,
                    })
                }
            };
            let read = RevisionRead::new(
                record_name(name, r.number),
                Some(r.label.clone().unwrap_or_else(|| r.number.to_string())),
                r.label_owner.clone(),
            )
            .with_payload(payload);
            match r.label_status {
                Some(status) => read.with_status(status),
                None => read,
            }
        })
        .collect();
    let records = revisions
        .iter()
        .map(|r| ObjectVersion::new(format!("rec-{name}-{}", r.number), 1))
        .collect();
    ReleaseEntry::new(name, owner)
        .with_records(records)
        .with_revisions(read)
        .with_objects(stack(name, objects))
}

/// The stack objects of `release`, each with an id of its own.
pub fn stack(release: &str, objects: &[Obj]) -> StackObjects {
    let mut stack = StackObjects::default();
    for o in objects {
        let name = format!("{release}_{}", o.key);
        let id = format!("id-{}-{name}", o.kind);
        match o.kind {
            "service" => stack.services.push(ServiceEntry::new(id, name, 1)),
            // Networks have no version index, nor the marker.
            "network" => stack
                .networks
                .push(ObjectRef::new(id, name).with_attachable(o.attachable)),
            kind => {
                let mut r = ObjectRef::new(id, name).with_version(1);
                if o.marker {
                    r = r.with_cd_created("2026-12-01T08:00:00Z");
                }
                match kind {
                    "config" => stack.configs.push(r),
                    "secret" => stack.secrets.push(r),
                    other => panic!("kind {other}"),
                }
            }
        }
    }
    stack
}

/// A service of another stack (or none) that names a network, secret or
/// config of a release.
pub fn user(id: &str, name: &str, networks: &[&str]) -> ServiceUse {
    ServiceUse::new(id, name).with_networks(networks.iter().copied())
}

/// A snapshot with the rule on (or off) and `applications` opted in.
pub fn snapshot(
    prune: bool,
    applications: Vec<Application>,
    swarms: Vec<SwarmSnapshot>,
) -> Snapshot {
    Snapshot::new(
        Policy::new(CONTROLLER, false, None).with_prune_resources(prune),
        AppSet::new(true, applications),
        swarms,
    )
}

/// An opted-in, reconciled application declaring `releases` on `swarm`.
pub fn app(name: &str, swarm: &str, releases: &[&str]) -> Application {
    Application::reconciled(name, swarm, releases).with_prune_resources(true)
}

/// A swarm holding `releases`, its usage read (so in-use checks run).
pub fn swarm(name: &str, releases: Vec<ReleaseEntry>, users: Vec<ServiceUse>) -> SwarmSnapshot {
    let mut s = SwarmSnapshot::new(name);
    s.cluster_id = Some(format!("cluster-{name}"));
    s.releases = releases;
    s.usage = Some(Usage::new(users, Vec::new()));
    s
}
