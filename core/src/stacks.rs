//! A swarm's objects as one listing per kind gives them, split into its
//! stacks by their namespace label.
//!
//! A driver lists every service, network, secret and config once (every
//! service, since the shared-object rule needs those of no stack too) and
//! hands the listings over raw ([`Listed`]): which stack an object is of,
//! which configs are release records rather than stack objects, and what
//! a listing must hold to be trusted is decided here, once, for every
//! driver.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::objects::{ObjectRef, ServiceEntry, StackObjects, KEEP_LABEL, STACK_LABEL};
use crate::record::labels::{CD_CREATED, RECORD_TYPE, TYPE};
use crate::record::Kind;

/// One object as a listing gives it, unjudged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed {
    /// Its id, if listed with one.
    pub id: Option<String>,
    /// Its name, if listed with one.
    pub name: Option<String>,
    /// Its version index, if listed with one.
    pub version: Option<u64>,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// A network: whether it is attachable.
    pub attachable: bool,
}

impl Listed {
    /// An object listed with `id` and `name`, no version and no labels.
    pub fn new(id: Option<String>, name: Option<String>) -> Self {
        Listed {
            id,
            name,
            ..Listed::default()
        }
    }

    /// With its version index.
    pub fn with_version(mut self, version: Option<u64>) -> Self {
        self.version = version;
        self
    }

    /// A network listed attachable, or not.
    pub fn with_attachable(mut self, attachable: bool) -> Self {
        self.attachable = attachable;
        self
    }

    /// With its labels.
    pub fn with_labels(mut self, labels: impl IntoIterator<Item = (String, String)>) -> Self {
        self.labels = labels.into_iter().collect();
        self
    }

    /// The stack it is of: its namespace label, unless empty.
    fn namespace(&self) -> Option<&str> {
        self.labels
            .get(STACK_LABEL)
            .map(String::as_str)
            .filter(|n| !n.is_empty())
    }
}

/// Every object of each kind a stack can hold, as listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct KindListings {
    /// Every service of the swarm.
    pub services: Vec<Listed>,
    /// The networks (those with a namespace label, or every one).
    pub networks: Vec<Listed>,
    /// The secrets (those with a namespace label, or every one).
    pub secrets: Vec<Listed>,
    /// The configs (those with a namespace label, or every one).
    pub configs: Vec<Listed>,
}

impl KindListings {
    /// The four listings.
    pub fn new(
        services: Vec<Listed>,
        networks: Vec<Listed>,
        secrets: Vec<Listed>,
        configs: Vec<Listed>,
    ) -> Self {
        KindListings {
            services,
            networks,
            secrets,
            configs,
        }
    }
}

/// Why listings cannot be split into stacks: an object a stack's removal
/// would act on cannot be told apart or proven unchanged. Never a shorter
/// answer: an object left out is a keep label not seen, or an object
/// removed by a later listing's surprise.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SplitError {
    /// An object listed without an id or a name.
    #[error("a {kind} ({name:?}) is listed without an id or a name")]
    Unnamed {
        /// Its kind.
        kind: Kind,
        /// Its name, if it had one.
        name: Option<String>,
    },
    /// A stack's service listed without a version index: its keep label
    /// could change unseen between the plan and its execution.
    #[error("service {name:?} is listed without a version")]
    Unversioned {
        /// The service's name.
        name: String,
    },
}

/// Whether a config with `labels` is a release record: the record type
/// label and no stack namespace. A config with a namespace is its stack's,
/// whatever else it carries, so every config is exactly one of a stack's
/// object, a record, or neither's business: a record listed as a stack
/// object would be removed with the stack, its stamp lost before the
/// stack is gone.
///
/// `label` gives a label's value by key, whatever map the labels are in.
pub fn is_release_record<'a>(label: impl Fn(&str) -> Option<&'a str>) -> bool {
    label(TYPE) == Some(RECORD_TYPE) && label(STACK_LABEL).is_none()
}

/// The stacks of `listed`, by namespace: each object with a namespace label
/// in its stack's entry (release records never), every list sorted and
/// each object once. Objects of no stack are left out, but must still be
/// named: a listing with an object that cannot be told apart is not
/// trusted at all.
pub fn split_by_namespace(
    listed: KindListings,
) -> Result<BTreeMap<String, StackObjects>, SplitError> {
    let mut stacks: BTreeMap<String, StackObjects> = BTreeMap::new();
    for service in listed.services {
        let (id, name) = named(Kind::Service, &service)?;
        let Some(namespace) = service.namespace() else {
            continue;
        };
        let Some(version) = service.version else {
            return Err(SplitError::Unversioned { name });
        };
        let mut entry = ServiceEntry::new(id, name, version);
        if let Some(keep) = service.labels.get(KEEP_LABEL) {
            entry = entry.with_keep(keep.clone());
        }
        stacks
            .entry(namespace.to_owned())
            .or_default()
            .services
            .push(entry);
    }
    for network in listed.networks {
        let (id, name) = named(Kind::Network, &network)?;
        if let Some(namespace) = network.namespace() {
            let object = ObjectRef::new(id, name).with_attachable(network.attachable);
            stacks
                .entry(namespace.to_owned())
                .or_default()
                .networks
                .push(object);
        }
    }
    for secret in listed.secrets {
        let (id, name) = named(Kind::Secret, &secret)?;
        if let Some(namespace) = secret.namespace() {
            let object = observed(ObjectRef::new(id, name), &secret);
            stacks
                .entry(namespace.to_owned())
                .or_default()
                .secrets
                .push(object);
        }
    }
    for config in listed.configs {
        let (id, name) = named(Kind::Config, &config)?;
        if is_release_record(|k| config.labels.get(k).map(String::as_str)) {
            continue;
        }
        if let Some(namespace) = config.namespace() {
            let object = observed(ObjectRef::new(id, name), &config);
            stacks
                .entry(namespace.to_owned())
                .or_default()
                .configs
                .push(object);
        }
    }
    Ok(stacks
        .into_iter()
        .map(|(namespace, objects)| {
            let mut objects = objects.sorted();
            // A manager may list its own copy of a swarm network (same id)
            // beside the swarm's: one network, listed once.
            objects.services.dedup();
            objects.networks.dedup();
            objects.secrets.dedup();
            objects.configs.dedup();
            (namespace, objects)
        })
        .collect())
}

/// `object`'s id and name, both there and not empty.
fn named(kind: Kind, object: &Listed) -> Result<(String, String), SplitError> {
    let id = object.id.clone().filter(|id| !id.is_empty());
    let name = object.name.clone().filter(|n| !n.is_empty());
    match (id, name) {
        (Some(id), Some(name)) => Ok((id, name)),
        (_, name) => Err(SplitError::Unnamed { kind, name }),
    }
}

/// `object` with what else was observed of it: its version index, and the
/// controller's created marker among its labels, each as read.
fn observed(object: ObjectRef, listed: &Listed) -> ObjectRef {
    let object = match listed.version {
        Some(version) => object.with_version(version),
        None => object,
    };
    match listed.labels.get(CD_CREATED) {
        Some(marker) => object.with_cd_created(marker.clone()),
        None => object,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(id: &str, name: &str, labels: &[(&str, &str)]) -> Listed {
        Listed::new(Some(id.into()), Some(name.into())).with_labels(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        )
    }

    #[test]
    fn objects_go_to_the_stack_their_namespace_names_and_nowhere_else() {
        let listed = KindListings::new(
            vec![
                object(
                    "s2",
                    "web_app",
                    &[(STACK_LABEL, "web"), (KEEP_LABEL, "yes")],
                )
                .with_version(Some(7)),
                object("s1", "loose", &[]),
                object("s3", "blank", &[(STACK_LABEL, "")]),
            ],
            vec![
                object("n1", "web_net", &[(STACK_LABEL, "web")]),
                object("n1", "web_net", &[(STACK_LABEL, "web")]),
            ],
            vec![
                object("x1", "db_pw", &[(STACK_LABEL, "db"), (CD_CREATED, "1")])
                    .with_version(Some(3)),
            ],
            vec![
                object("c1", "web_conf", &[(STACK_LABEL, "web")]).with_version(Some(4)),
                object("c2", "swarmcli.release.web.v1", &[(TYPE, RECORD_TYPE)]),
                object("c3", "both", &[(TYPE, RECORD_TYPE), (STACK_LABEL, "web")]),
            ],
        );
        let stacks = split_by_namespace(listed).unwrap();
        assert_eq!(stacks.keys().collect::<Vec<_>>(), ["db", "web"]);
        let web = &stacks["web"];
        assert_eq!(
            web.services,
            [ServiceEntry::new("s2", "web_app", 7).with_keep("yes")]
        );
        assert_eq!(web.networks, [ObjectRef::new("n1", "web_net")]);
        assert_eq!(
            web.configs,
            [
                ObjectRef::new("c3", "both"),
                ObjectRef::new("c1", "web_conf").with_version(4),
            ]
        );
        assert_eq!(
            stacks["db"].secrets,
            [ObjectRef::new("x1", "db_pw")
                .with_version(3)
                .with_cd_created("1")]
        );
    }

    #[test]
    fn an_object_that_cannot_be_told_apart_makes_the_listing_untrusted() {
        let nameless = KindListings::new(
            vec![Listed::new(Some("s1".into()), None)],
            vec![],
            vec![],
            vec![],
        );
        assert_eq!(
            split_by_namespace(nameless),
            Err(SplitError::Unnamed {
                kind: Kind::Service,
                name: None
            })
        );
        let idless = KindListings::new(
            vec![],
            vec![Listed::new(None, Some("n".into()))],
            vec![],
            vec![],
        );
        assert!(matches!(
            split_by_namespace(idless),
            Err(SplitError::Unnamed {
                kind: Kind::Network,
                ..
            })
        ));
        let unversioned = KindListings::new(
            vec![object("s1", "web_app", &[(STACK_LABEL, "web")])],
            vec![],
            vec![],
            vec![],
        );
        assert_eq!(
            split_by_namespace(unversioned),
            Err(SplitError::Unversioned {
                name: "web_app".into()
            })
        );
        // A service of no stack needs no version: no removal acts on it.
        let loose = KindListings::new(vec![object("s1", "loose", &[])], vec![], vec![], vec![]);
        assert_eq!(split_by_namespace(loose), Ok(BTreeMap::new()));
    }

    #[test]
    fn records_are_configs_with_the_record_type_and_no_namespace() {
        let record = |pairs: &[(&str, &str)]| {
            let labels: BTreeMap<String, String> = pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            is_release_record(|k| labels.get(k).map(String::as_str))
        };
        assert!(record(&[(TYPE, RECORD_TYPE)]));
        assert!(!record(&[(TYPE, RECORD_TYPE), (STACK_LABEL, "web")]));
        assert!(!record(&[(TYPE, "other")]));
        assert!(!record(&[]));
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;

        fn label_set() -> impl Strategy<Value = Vec<(String, String)>> {
            let namespace = prop::option::of(prop::sample::select(vec!["", "web", "db"]));
            let record = any::<bool>();
            let keep = prop::option::of(prop::sample::select(vec!["", "true"]));
            (namespace, record, keep).prop_map(|(namespace, record, keep)| {
                let mut labels = Vec::new();
                if let Some(n) = namespace {
                    labels.push((STACK_LABEL.to_owned(), n.to_owned()));
                }
                if record {
                    labels.push((TYPE.to_owned(), RECORD_TYPE.to_owned()));
                }
                if let Some(k) = keep {
                    labels.push((KEEP_LABEL.to_owned(), k.to_owned()));
                }
                labels
            })
        }

        fn listed() -> impl Strategy<Value = Listed> {
            (0..6u8, label_set()).prop_map(|(n, labels)| {
                Listed::new(Some(format!("id{n}")), Some(format!("name{n}")))
                    .with_version(Some(u64::from(n)))
                    .with_labels(labels)
            })
        }

        fn listings() -> impl Strategy<Value = KindListings> {
            let kind = || prop::collection::vec(listed(), 0..6);
            (kind(), kind(), kind(), kind())
                .prop_map(|(sv, nw, sc, cf)| KindListings::new(sv, nw, sc, cf))
        }

        /// `listed` with every object's id its own.
        fn distinct(mut listed: KindListings) -> KindListings {
            for (k, list) in [
                &mut listed.services,
                &mut listed.networks,
                &mut listed.secrets,
                &mut listed.configs,
            ]
            .into_iter()
            .enumerate()
            {
                for (i, object) in list.iter_mut().enumerate() {
                    object.id = Some(format!("k{k}-{i}"));
                }
            }
            listed
        }

        proptest! {
            /// The order a daemon lists objects in changes nothing.
            #[test]
            fn the_split_does_not_depend_on_the_listing_order(listed in listings(), seed: u64) {
                let mut shuffled = listed.clone();
                for list in [
                    &mut shuffled.services,
                    &mut shuffled.networks,
                    &mut shuffled.secrets,
                    &mut shuffled.configs,
                ] {
                    let len = list.len();
                    if len > 1 {
                        list.rotate_left((seed as usize) % len);
                        list.reverse();
                    }
                }
                prop_assert_eq!(split_by_namespace(listed), split_by_namespace(shuffled));
            }

            /// Every object lands in the stack its namespace names and no
            /// other; objects of no stack, and release records, nowhere.
            #[test]
            fn each_object_is_in_its_own_stack_only(listed in listings().prop_map(distinct)) {
                let stacks = split_by_namespace(listed.clone()).unwrap();
                let kinds = [
                    (&listed.services, Kind::Service),
                    (&listed.networks, Kind::Network),
                    (&listed.secrets, Kind::Secret),
                    (&listed.configs, Kind::Config),
                ];
                for (list, kind) in kinds {
                    for object in list {
                        let id = object.id.clone().unwrap_or_default();
                        // The rule, stated again on the labels themselves.
                        let labels = &object.labels;
                        let namespace = labels.get(STACK_LABEL).filter(|n| !n.is_empty());
                        let record = kind == Kind::Config
                            && labels.get(TYPE).map(String::as_str) == Some(RECORD_TYPE)
                            && !labels.contains_key(STACK_LABEL);
                        let home = namespace.map(String::as_str).filter(|_| !record);
                        for (namespace, objects) in &stacks {
                            let ids: Vec<String> = match kind {
                                Kind::Service => objects.services.iter().map(|s| s.id.clone()).collect(),
                                Kind::Network => objects.networks.iter().filter_map(|o| o.id.clone()).collect(),
                                Kind::Secret => objects.secrets.iter().filter_map(|o| o.id.clone()).collect(),
                                Kind::Config => objects.configs.iter().filter_map(|o| o.id.clone()).collect(),
                            };
                            prop_assert_eq!(
                                ids.contains(&id),
                                home == Some(namespace.as_str()),
                                "{:?} {} in {}", kind, id, namespace
                            );
                        }
                        if let Some(home) = home {
                            prop_assert!(stacks.contains_key(home));
                        }
                    }
                }
            }
        }
    }
}
