//! What uses what, as a daemon lists it: each service's spec references
//! and each container's named volumes, read raw for the core's rule
//! (`sweep_core::usage`), which alone decides from them.
//!
//! A user left out is one whose data may go: an entry that cannot be
//! attributed (no id, no name) is an error, never skipped.

use std::collections::HashMap;

use bollard::models::{
    ContainerSummary, MountType, NetworkAttachmentConfig, ObjectVersion, Service, ServiceSpec,
};
use sweep_core::usage::{ContainerUse, PreviousSpec, ServiceUse, SERVICE_ID_LABEL};
use sweep_swarms::BackendError;

use crate::labels::STACK_NAMESPACE;

/// The mount type of a named volume, as a container listing spells it.
const VOLUME_MOUNT: &str = "volume";

/// The networks every daemon has of its own, which no stack creates: a
/// container attached only to these uses nothing a sweep removes.
const DAEMON_NETWORKS: [&str; 3] = ["bridge", "host", "none"];

/// One service as the daemon lists it, with the previous spec bollard's
/// model leaves out: what a rollback returns the service to names objects
/// too. The rest of a listed service is not read. The specs are boxed, so
/// that a listing's `{`, each possibly one of these, costs no more than
/// the largest model the transport bounds replies by.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct ListedService {
    #[serde(rename = "ID")]
    pub id: Option<String>,
    #[serde(rename = "Version")]
    pub version: Option<ObjectVersion>,
    #[serde(rename = "Spec")]
    pub spec: Option<Box<ServiceSpec>>,
    #[serde(rename = "PreviousSpec")]
    pub previous_spec: Option<Box<ServiceSpec>>,
}

impl ListedService {
    /// Its id, version and spec as bollard's model holds them, for the
    /// readers of a stack's services.
    pub(crate) fn service(&self) -> Service {
        Service {
            id: self.id.clone(),
            version: self.version.clone(),
            spec: self.spec.as_deref().cloned(),
            ..Service::default()
        }
    }
}

/// Every listed service with what its spec and its previous spec name,
/// sorted by id.
pub(crate) fn service_uses(services: Vec<ListedService>) -> Result<Vec<ServiceUse>, BackendError> {
    let mut uses = services
        .into_iter()
        .map(service_use)
        .collect::<Result<Vec<_>, _>>()?;
    uses.sort();
    Ok(uses)
}

/// One service's references: its volume mount sources (templates as
/// written), networks (the task template's and the deprecated service
/// level's), and secrets and configs by id and by name; and those of its
/// previous spec, which a rollback returns to.
fn service_use(service: ListedService) -> Result<ServiceUse, BackendError> {
    let spec = service.spec.map(|s| *s).unwrap_or_default();
    let id = service.id.filter(|id| !id.is_empty());
    let name = spec.name.clone().filter(|n| !n.is_empty());
    let (Some(id), Some(name)) = (id.clone(), name.clone()) else {
        return Err(BackendError::Invalid {
            what: "the service list".into(),
            message: format!("a service ({name:?}, id {id:?}) is listed without an id or a name"),
        });
    };
    let mut found = ServiceUse::new(id, name);
    if let Some(stack) = non_empty_label(spec.labels.as_ref(), STACK_NAMESPACE) {
        found = found.in_stack(stack);
    }
    let [volumes, networks, secrets, configs] = spec_refs(spec);
    found = found
        .with_volumes(volumes)
        .with_networks(networks)
        .with_secrets(secrets)
        .with_configs(configs);
    if let Some(previous) = service.previous_spec {
        let [volumes, networks, secrets, configs] = spec_refs(*previous);
        let previous = PreviousSpec::new(volumes, networks, secrets, configs);
        if !previous.is_empty() {
            found = found.with_previous(previous);
        }
    }
    Ok(found)
}

/// What one spec names: its volume mount sources, networks, secrets and
/// configs, each list sorted, each reference once.
fn spec_refs(spec: ServiceSpec) -> [Vec<String>; 4] {
    let task = spec.task_template.unwrap_or_default();
    let container = task.container_spec.unwrap_or_default();
    let volumes = container
        .mounts
        .unwrap_or_default()
        .into_iter()
        // A mount without a type is taken as a volume: read as one, it can
        // only spare a volume, never remove one.
        .filter(|m| matches!(m.typ, Some(MountType::VOLUME) | None))
        .filter_map(|m| m.source);
    let networks = targets(task.networks).chain(targets(spec.networks));
    let secrets = container
        .secrets
        .unwrap_or_default()
        .into_iter()
        .flat_map(|s| [s.secret_id, s.secret_name]);
    let configs = container
        .configs
        .unwrap_or_default()
        .into_iter()
        .flat_map(|c| [c.config_id, c.config_name]);
    [
        present(volumes),
        present(networks),
        present(secrets.flatten()),
        present(configs.flatten()),
    ]
}

/// The targets of network attachments.
fn targets(networks: Option<Vec<NetworkAttachmentConfig>>) -> impl Iterator<Item = String> {
    networks.into_iter().flatten().filter_map(|n| n.target)
}

/// The non-empty references, sorted, each once: an empty one names
/// nothing.
fn present(refs: impl Iterator<Item = String>) -> Vec<String> {
    let mut refs: Vec<String> = refs.filter(|r| !r.is_empty()).collect();
    refs.sort();
    refs.dedup();
    refs
}

/// A label's value, when there and not empty.
fn non_empty_label(labels: Option<&HashMap<String, String>>, key: &str) -> Option<String> {
    labels
        .and_then(|l| l.get(key))
        .filter(|v| !v.is_empty())
        .cloned()
}

/// The listed containers (running or stopped) whose use can keep an object
/// of a release ([`ContainerUse::matters`]: a named volume, or, of no
/// service, a network other than the daemon's own), sorted; the others use
/// nothing a sweep judges.
pub(crate) fn container_uses(
    containers: Vec<ContainerSummary>,
) -> Result<Vec<ContainerUse>, BackendError> {
    let mut uses = Vec::new();
    for container in containers {
        if let Some(found) = container_use(container)? {
            uses.push(found);
        }
    }
    uses.sort();
    Ok(uses)
}

/// One container's named volumes, the networks it is attached to (by name
/// and by id), its name (the first of its names, without the leading `/`;
/// its id when it has none), its service id label and its stack namespace
/// label; `None` when nothing it uses can keep an object of a release.
fn container_use(container: ContainerSummary) -> Result<Option<ContainerUse>, BackendError> {
    let mut volumes: Vec<String> = container
        .mounts
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.typ.as_deref() == Some(VOLUME_MOUNT))
        .filter_map(|m| m.name)
        .filter(|n| !n.is_empty())
        .collect();
    let mut networks: Vec<String> = container
        .network_settings
        .and_then(|settings| settings.networks)
        .unwrap_or_default()
        .into_iter()
        .filter(|(name, _)| !DAEMON_NETWORKS.contains(&name.as_str()))
        .flat_map(|(name, endpoint)| [Some(name), endpoint.network_id])
        .flatten()
        .filter(|r| !r.is_empty())
        .collect();
    volumes.sort();
    volumes.dedup();
    networks.sort();
    networks.dedup();
    let names = container.names.unwrap_or_default();
    let name = names
        .first()
        .map(|n| n.strip_prefix('/').unwrap_or(n).to_owned());
    let id = container.id.filter(|id| !id.is_empty());
    let shown = name.clone().filter(|n| !n.is_empty());
    let mut found = ContainerUse::new(
        id.clone().unwrap_or_default(),
        shown.or_else(|| id.clone()).unwrap_or_default(),
        volumes,
    )
    .with_networks(networks);
    if let Some(service) = non_empty_label(container.labels.as_ref(), SERVICE_ID_LABEL) {
        found = found.of_service(service);
    }
    if !found.matters() {
        return Ok(None);
    }
    if id.is_none() {
        return Err(BackendError::Invalid {
            what: "the container list".into(),
            message: format!(
                "a container ({name:?}) using volumes {:?} and networks {:?} is listed without \
                 an id",
                found.volumes, found.networks
            ),
        });
    }
    if let Some(stack) = non_empty_label(container.labels.as_ref(), STACK_NAMESPACE) {
        found = found.in_stack(stack);
    }
    Ok(Some(found))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_json<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn every_service_names_its_mounts_networks_secrets_and_configs_whatever_its_mode() {
        let services: Vec<ListedService> = from_json(serde_json::json!([
            // Made by hand, scaled to 0, with a templated source beside a
            // named one, a bind mount and an anonymous volume.
            {"ID": "s1", "Spec": {"Name": "byhand",
                "Mode": {"Replicated": {"Replicas": 0}},
                "TaskTemplate": {"ContainerSpec": {"Image": "x", "Mounts": [
                    {"Type": "volume", "Source": "gone_data", "Target": "/data"},
                    {"Type": "volume", "Source": "data-{{.Task.Slot}}", "Target": "/slot"},
                    {"Type": "bind", "Source": "/srv", "Target": "/srv"},
                    {"Type": "volume", "Target": "/anon"},
                    {"Type": "tmpfs", "Target": "/tmp"}]}}}},
            // Another stack's, global: a network by id in the task template
            // and by name at the deprecated service level, a secret and a
            // config by id and name.
            {"ID": "s2", "Spec": {"Name": "user_app",
                "Labels": {STACK_NAMESPACE: "user"},
                "Mode": {"Global": {}},
                "TaskTemplate": {
                    "ContainerSpec": {"Image": "x",
                        "Secrets": [{"SecretID": "sec1", "SecretName": "gone_key",
                            "File": {"Name": "k", "UID": "0", "GID": "0", "Mode": 292}}],
                        "Configs": [{"ConfigID": "cfg1", "ConfigName": "gone_conf"}]},
                    "Networks": [{"Target": "n1", "Aliases": ["app"]}]},
                "Networks": [{"Target": "gone_default"}]}},
            // A job, global, with an empty namespace label (no stack's).
            {"ID": "s3", "Spec": {"Name": "once",
                "Labels": {STACK_NAMESPACE: ""},
                "Mode": {"GlobalJob": {}},
                "TaskTemplate": {"ContainerSpec": {"Image": "x", "Mounts": [
                    {"Type": "volume", "Source": "gone_data", "Target": "/d"}]}}}},
            // A replicated job without any reference.
            {"ID": "s4", "Spec": {"Name": "batch",
                "Mode": {"ReplicatedJob": {"MaxConcurrent": 1, "TotalCompletions": 1}}}},
        ]));
        let uses = service_uses(services).unwrap();
        assert_eq!(
            uses,
            vec![
                ServiceUse::new("s1", "byhand").with_volumes(["data-{{.Task.Slot}}", "gone_data"]),
                ServiceUse::new("s2", "user_app")
                    .in_stack("user")
                    .with_networks(["gone_default", "n1"])
                    .with_secrets(["gone_key", "sec1"])
                    .with_configs(["cfg1", "gone_conf"]),
                ServiceUse::new("s3", "once").with_volumes(["gone_data"]),
                ServiceUse::new("s4", "batch"),
            ]
        );
    }

    /// A service updated off a volume, a network, a secret and a config
    /// returns to them on a rollback: its previous spec names them, as the
    /// daemon lists it (bollard's own model drops the field).
    #[test]
    fn a_previous_spec_names_what_a_rollback_returns_to() {
        let services: Vec<ListedService> = from_json(serde_json::json!([
            {"ID": "s1", "Version": {"Index": 12},
                "Spec": {"Name": "byhand",
                    "TaskTemplate": {"ContainerSpec": {"Image": "x"}}},
                "PreviousSpec": {"Name": "byhand",
                    "TaskTemplate": {
                        "ContainerSpec": {"Image": "x",
                            "Mounts": [{"Type": "volume", "Source": "gone_data", "Target": "/d"},
                                {"Type": "bind", "Source": "/srv", "Target": "/srv"}],
                            "Secrets": [{"SecretID": "sec1", "SecretName": "gone_key"}],
                            "Configs": [{"ConfigID": "cfg1", "ConfigName": "gone_conf"}]},
                        "Networks": [{"Target": "n1"}]}}},
            // A previous spec naming nothing is none.
            {"ID": "s2", "Spec": {"Name": "plain"},
                "PreviousSpec": {"Name": "plain"}},
        ]));
        assert_eq!(
            services[0].service().version.and_then(|v| v.index),
            Some(12)
        );
        let uses = service_uses(services).unwrap();
        assert_eq!(
            uses,
            vec![
                ServiceUse::new("s1", "byhand").with_previous(PreviousSpec::new(
                    ["gone_data"],
                    ["n1"],
                    ["gone_key", "sec1"],
                    ["cfg1", "gone_conf"],
                )),
                ServiceUse::new("s2", "plain"),
            ]
        );
    }

    #[test]
    fn a_service_without_an_id_or_a_name_is_invalid_never_skipped() {
        for bad in [
            serde_json::json!([{"Spec": {"Name": "a"}}]),
            serde_json::json!([{"ID": "", "Spec": {"Name": "a"}}]),
            serde_json::json!([{"ID": "s1", "Spec": {}}]),
            serde_json::json!([{"ID": "s1"}]),
            serde_json::json!([{"ID": "s1", "Spec": {"Name": ""}}]),
        ] {
            let e = service_uses(from_json(bad.clone()));
            assert!(
                matches!(e, Err(BackendError::Invalid { .. })),
                "{bad}: {e:?}"
            );
        }
    }

    #[test]
    fn containers_running_or_stopped_with_a_named_volume_are_listed_with_their_service() {
        let containers: Vec<ContainerSummary> = from_json(serde_json::json!([
            // Stopped, made by hand: no service label.
            {"Id": "c1", "Names": ["/manual"], "State": "exited",
                "Mounts": [{"Type": "volume", "Name": "gone_data", "Destination": "/data"}]},
            // A task of a service, running, two volumes and a bind.
            {"Id": "c2", "Names": ["/web.1.abc", "/alias"], "State": "running",
                "Labels": {SERVICE_ID_LABEL: "s9", STACK_NAMESPACE: "web"},
                "Mounts": [
                    {"Type": "volume", "Name": "web_data", "Destination": "/d"},
                    {"Type": "volume", "Name": "gone_data", "Destination": "/g"},
                    {"Type": "bind", "Source": "/srv", "Destination": "/srv"}]},
            // No volume: not listed.
            {"Id": "c3", "Names": ["/plain"], "Mounts": [
                {"Type": "bind", "Source": "/srv", "Destination": "/srv"}]},
            {"Id": "c4", "Names": ["/bare"]},
            // No name: its id stands for it; an empty service label is none.
            {"Id": "c5", "Labels": {SERVICE_ID_LABEL: ""},
                "Mounts": [{"Type": "volume", "Name": "x", "Destination": "/x"}]},
        ]));
        let uses = container_uses(containers).unwrap();
        assert_eq!(
            uses,
            vec![
                ContainerUse::new("c1", "manual", ["gone_data"]),
                ContainerUse::new("c2", "web.1.abc", ["gone_data", "web_data"])
                    .of_service("s9")
                    .in_stack("web"),
                ContainerUse::new("c5", "c5", ["x"]),
            ]
        );
        let idless: Vec<ContainerSummary> = from_json(serde_json::json!([
            {"Names": ["/ghost"], "Mounts": [{"Type": "volume", "Name": "gone_data"}]},
        ]));
        assert!(matches!(
            container_uses(idless),
            Err(BackendError::Invalid { .. })
        ));
    }

    #[test]
    fn containers_attached_to_a_network_are_listed_with_its_name_and_id() {
        let containers: Vec<ContainerSummary> = from_json(serde_json::json!([
            // Stopped, made by hand on a stack's attachable network.
            {"Id": "c1", "Names": ["/debug"], "State": "exited",
                "NetworkSettings": {"Networks": {
                    "gone_default": {"NetworkID": "n1"},
                    "bridge": {"NetworkID": "b0"}}}},
            // The daemon's own networks only: not listed.
            {"Id": "c2", "Names": ["/plain"],
                "NetworkSettings": {"Networks": {"bridge": {"NetworkID": "b0"}, "host": {}}}},
            // A network without an id given: its name stands.
            {"Id": "c3", "Names": ["/probe"],
                "NetworkSettings": {"Networks": {"web_default": {"NetworkID": ""}}}},
            // A service's task attached to its network: its service's spec
            // says what it uses, so it is not listed.
            {"Id": "c4", "Names": ["/web.1.x"], "Labels": {SERVICE_ID_LABEL: "s9"},
                "NetworkSettings": {"Networks": {"web_default": {"NetworkID": "n2"}}}},
            // Listed for its volume, with its networks.
            {"Id": "c5", "Names": ["/db.1.y"], "Labels": {SERVICE_ID_LABEL: "s8"},
                "Mounts": [{"Type": "volume", "Name": "db_data"}],
                "NetworkSettings": {"Networks": {"db_default": {"NetworkID": "n3"}}}},
            // A task with neither, and without an id: not listed, no error.
            {"Names": ["/web.2.z"], "Labels": {SERVICE_ID_LABEL: "s9"},
                "NetworkSettings": {"Networks": {"web_default": {"NetworkID": "n2"}}}},
        ]));
        assert_eq!(
            container_uses(containers).unwrap(),
            vec![
                ContainerUse::new("c1", "debug", None::<String>)
                    .with_networks(["gone_default", "n1"]),
                ContainerUse::new("c3", "probe", None::<String>).with_networks(["web_default"]),
                ContainerUse::new("c5", "db.1.y", ["db_data"])
                    .with_networks(["db_default", "n3"])
                    .of_service("s8"),
            ]
        );
    }
}
