//! What a release consists of on its swarm, as observed: the objects its
//! deletion would remove, and the versions of what its deletion relies on.
//!
//! These are facts a driver reads and passes through unjudged (a label's
//! raw value, an id, a version index); every rule about them lives in the
//! planner. They are optional in a snapshot, so a snapshot an embedder
//! builds without them stays valid: the plan then lists no objects, and a
//! saved plan cannot prove the release unchanged, so it is never applied
//! from one (see [`crate::saved`]). Each struct states its JSON on its
//! own fields; it is read only from an object, as every struct of a
//! snapshot is (see `snapshot::read`).

use serde::{Deserialize, Serialize};

/// The service label an operator sets (`docker service update --label-add
/// swarm-sweep.keep=true`) to keep a release whatever its stamp says.
pub const KEEP_LABEL: &str = "swarm-sweep.keep";

/// The label Docker gives every object of a stack (services, networks,
/// secrets, configs, volumes, task containers), its value the stack
/// namespace: the release name. `<label>=<release>` finds what is left of a
/// release on a node the sweep did not reach.
pub const STACK_LABEL: &str = "com.docker.stack.namespace";

/// One Swarm object at one moment: its id and its version index, which
/// the engine raises on every change. Two observations with the same id and
/// version are of the same, unchanged object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ObjectVersion {
    /// The object's id.
    pub id: String,
    /// Its version index.
    pub version: u64,
}

impl ObjectVersion {
    /// Object `id` at version `version`.
    pub fn new(id: impl Into<String>, version: u64) -> Self {
        ObjectVersion {
            id: id.into(),
            version,
        }
    }
}

/// One service of a release's stack.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ServiceEntry {
    /// The service's id.
    pub id: String,
    /// The service's name (`<stack>_<service>`).
    pub name: String,
    /// Its version index: a redeploy raises it.
    pub version: u64,
    /// The raw value of its [`KEEP_LABEL`] label, if it carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<String>,
}

impl ServiceEntry {
    /// A service without the keep label.
    pub fn new(id: impl Into<String>, name: impl Into<String>, version: u64) -> Self {
        ServiceEntry {
            id: id.into(),
            name: name.into(),
            version,
            keep: None,
        }
    }

    /// The service carrying [`KEEP_LABEL`] with the raw value `value`.
    pub fn with_keep(mut self, value: impl Into<String>) -> Self {
        self.keep = Some(value.into());
        self
    }

    /// Whether it carries the [`KEEP_LABEL`] with any value but `false`:
    /// an operator's word that nothing of it is deleted.
    pub fn is_kept(&self) -> bool {
        self.keep.as_deref().is_some_and(|v| v.trim() != "false")
    }
}

/// A network, secret or config: its id and its name. A service's spec
/// names such an object by id (the engine resolves names at creation), an
/// operator by name, so both are kept: the object is removed by its id,
/// and matched against what other services name by either.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct ObjectRef {
    /// The object's name.
    pub name: String,
    /// The object's id; `None` when the snapshot gave only the name (an
    /// older snapshot lists names alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Its version index (configs and secrets have one; networks do not):
    /// what a saved plan proves unchanged before it removes the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// The value of its `com.swarmcli.cd.created` label, which the
    /// controller puts on the configs and secrets it created itself (never
    /// on those it adopted); `None` without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cd_created: Option<String>,
    /// For a network: whether it is attachable, so that a container of no
    /// service (`docker run --network`) may be attached to it. Such a
    /// container, stopped, on a node whose containers were not read, is a
    /// user nobody saw (see [`crate::usage::unseen_users`]). Absent: no.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attachable: bool,
}

// Written as an object; read as one, or as a bare name (what snapshots
// listed before ids were read): the schema says both, as the reader does.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for ObjectRef {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ObjectRef".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A network, secret or config: an object with its name and id, or (read only) its bare name.",
            "anyOf": [
                {"type": "string"},
                {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "The object's name."},
                        "id": {"type": "string", "description": "The object's id, when known."},
                        "version": {"type": "integer", "minimum": 0, "description": "Its version index, when it has one."},
                        "cd_created": {"type": "string", "description": "Its com.swarmcli.cd.created label: the controller created it."},
                        "attachable": {"type": "boolean", "description": "A network only: attachable, so that a container of no service may be attached to it (absent: false)."}
                    },
                    "required": ["name"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

impl ObjectRef {
    /// The object `name` with the id `id`.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectRef {
            name: name.into(),
            id: Some(id.into()),
            version: None,
            cd_created: None,
            attachable: false,
        }
    }

    /// At version index `version`.
    pub fn with_version(mut self, version: u64) -> Self {
        self.version = Some(version);
        self
    }

    /// Carrying the controller's `com.swarmcli.cd.created` label.
    pub fn with_cd_created(mut self, value: impl Into<String>) -> Self {
        self.cd_created = Some(value.into());
        self
    }

    /// A network that is attachable (`attachable`), or not.
    pub fn with_attachable(mut self, attachable: bool) -> Self {
        self.attachable = attachable;
        self
    }

    /// The object `name`, its id unknown.
    pub fn named(name: impl Into<String>) -> Self {
        ObjectRef {
            name: name.into(),
            id: None,
            version: None,
            cd_created: None,
            attachable: false,
        }
    }

    /// Whether `reference` (an id or a name, as a service spec or an
    /// operator gives it) names this object.
    pub fn is_named_by(&self, reference: &str) -> bool {
        self.name == reference || self.id.as_deref() == Some(reference)
    }

    /// Whether `other` is the same object: the same id where both are
    /// known (a name may be reused by an object re-created since), else
    /// the same name.
    pub fn is_same(&self, other: &ObjectRef) -> bool {
        match (&self.id, &other.id) {
            (Some(a), Some(b)) => a == b,
            _ => self.name == other.name,
        }
    }

    /// The id when known, else the name: what a removal addresses.
    pub fn handle(&self) -> &str {
        self.id.as_deref().unwrap_or(&self.name)
    }
}

/// The named volumes of a release's stack on one node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct NodeVolumes {
    /// The node's id (as in the swarm's node list).
    pub node: String,
    /// The names of the stack's volumes on that node.
    #[serde(default)]
    pub volumes: Vec<String>,
}

impl NodeVolumes {
    /// The volumes listed on `node`.
    pub fn new(node: impl Into<String>, volumes: Vec<String>) -> Self {
        NodeVolumes {
            node: node.into(),
            volumes,
        }
    }
}

/// The objects labelled with a release's stack namespace, as listed when
/// the snapshot was gathered.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct StackObjects {
    /// The stack's services.
    #[serde(default)]
    pub services: Vec<ServiceEntry>,
    /// The stack's networks.
    #[serde(default)]
    pub networks: Vec<ObjectRef>,
    /// The stack's secrets.
    #[serde(default)]
    pub secrets: Vec<ObjectRef>,
    /// The stack's configs (its release records are configs too, but are
    /// never listed here: they are deleted last, separately).
    #[serde(default)]
    pub configs: Vec<ObjectRef>,
    /// The stack's named volumes on each node the registry could list,
    /// one entry per node listed (an empty list where it holds none);
    /// `None` when no node's volumes were listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volumes: Option<Vec<NodeVolumes>>,
}

impl StackObjects {
    /// The objects of a stack, with no volumes listed.
    pub fn new(
        services: Vec<ServiceEntry>,
        networks: Vec<ObjectRef>,
        secrets: Vec<ObjectRef>,
        configs: Vec<ObjectRef>,
    ) -> Self {
        StackObjects {
            services,
            networks,
            secrets,
            configs,
            volumes: None,
        }
    }

    /// With the volumes listed on each node.
    pub fn with_volumes(mut self, volumes: Vec<NodeVolumes>) -> Self {
        self.volumes = Some(volumes);
        self
    }

    /// Every list sorted, so that equal observations compare and print
    /// alike whatever order the engine listed them in.
    pub fn sorted(mut self) -> Self {
        self.services.sort();
        self.networks.sort();
        self.secrets.sort();
        self.configs.sort();
        if let Some(volumes) = &mut self.volumes {
            for node in volumes.iter_mut() {
                node.volumes.sort();
            }
            volumes.sort();
        }
        self
    }
}
