//! Release records as the chart engine writes them: the config's name, its
//! labels and its data (gzip of one YAML document holding the rendered
//! Compose manifest), for every test that puts a record on a swarm.
//!
//! One home for the format, so that the bed's helpers, the end-to-end
//! suite and the contract suite all create what the engine creates, and a
//! change of the format is made once. The names, label keys and readers
//! are the core's ([`sweep_core::record`]); this module only writes.
//!
//! The YAML is written by hand: every string is JSON-quoted, which YAML
//! reads as the same string, so no YAML serializer is needed and no value
//! can change the document's shape.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;

use flate2::write::GzEncoder;
use flate2::Compression;
use sweep_core::record::{labels, record_name};

/// The image of the manifest [`EngineRecord::new`] starts with.
const DEFAULT_IMAGE: &str = "registry.example/app:1.0";

/// One revision of a release, as the engine records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineRecord {
    /// The release (and the stack it was deployed as).
    pub release: String,
    /// The revision.
    pub revision: u64,
    /// The owner stamp; no owner label nor field when `None`.
    pub owner: Option<String>,
    /// The revision's status (`deployed`, `superseded`, ...).
    pub status: String,
    /// The chart's name.
    pub chart: String,
    /// The chart's version.
    pub chart_version: String,
    /// The version of the application the chart packages.
    pub app_version: String,
    /// When the revision was written (RFC 3339).
    pub created: String,
    /// The release's values, flat.
    pub values: BTreeMap<String, String>,
    /// The rendered Compose document.
    pub manifest: String,
    /// Networks the engine manages outside the stack; written only when
    /// there are some, as the engine leaves the field out otherwise.
    pub managed_networks: Vec<String>,
}

impl EngineRecord {
    /// Revision `revision` of `release`, deployed, without owner, its
    /// manifest one service `app`.
    pub fn new(release: impl Into<String>, revision: u64) -> Self {
        EngineRecord {
            release: release.into(),
            revision,
            owner: None,
            status: "deployed".to_owned(),
            chart: "app".to_owned(),
            chart_version: "1.4.2".to_owned(),
            app_version: "1.0".to_owned(),
            created: "2025-03-01T12:00:00Z".to_owned(),
            values: BTreeMap::new(),
            manifest: Manifest::new(DEFAULT_IMAGE).service("app").render(),
            managed_networks: Vec::new(),
        }
    }

    /// Stamped `owner` (none when `None`).
    pub fn with_owner(mut self, owner: Option<&str>) -> Self {
        self.owner = owner.map(str::to_owned);
        self
    }

    /// With the rendered manifest `manifest`.
    pub fn with_manifest(mut self, manifest: impl Into<String>) -> Self {
        self.manifest = manifest.into();
        self
    }

    /// With status `status`.
    pub fn with_status(mut self, status: impl Into<String>) -> Self {
        self.status = status.into();
        self
    }

    /// The config's name: `swarmcli.release.<release>.v<revision>`.
    pub fn name(&self) -> String {
        record_name(&self.release, self.revision)
    }

    /// The config's labels, the owner's only when it has one. Never the
    /// stack namespace: a record is no stack's object.
    pub fn labels(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = [
            (labels::TYPE, labels::RECORD_TYPE),
            (labels::RELEASE, &self.release),
            (labels::REVISION, &self.revision.to_string()),
            (labels::STATUS, &self.status),
            (labels::CHART, &self.chart),
            (labels::CHART_VERSION, &self.chart_version),
            (labels::CREATED, &self.created),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        if let Some(owner) = &self.owner {
            out.push((labels::OWNER.to_owned(), owner.clone()));
        }
        out
    }

    /// The YAML document the data holds.
    pub fn document(&self) -> String {
        let mut y = String::new();
        let _ = writeln!(y, "release: {}", quoted(&self.release));
        let _ = writeln!(y, "revision: {}", self.revision);
        let _ = writeln!(y, "status: {}", quoted(&self.status));
        let _ = writeln!(y, "chart:");
        let _ = writeln!(y, "  name: {}", quoted(&self.chart));
        let _ = writeln!(y, "  version: {}", quoted(&self.chart_version));
        let _ = writeln!(y, "  appVersion: {}", quoted(&self.app_version));
        if self.values.is_empty() {
            let _ = writeln!(y, "values: {{}}");
        } else {
            let _ = writeln!(y, "values:");
            for (key, value) in &self.values {
                let _ = writeln!(y, "  {}: {}", quoted(key), quoted(value));
            }
        }
        let _ = writeln!(y, "manifest: {}", quoted(&self.manifest));
        let _ = writeln!(y, "created: {}", quoted(&self.created));
        let _ = writeln!(y, "namespace: {}", quoted(&self.release));
        if !self.managed_networks.is_empty() {
            let _ = writeln!(y, "managedNetworks: {}", list(&self.managed_networks));
        }
        if let Some(owner) = &self.owner {
            let _ = writeln!(y, "owner: {}", quoted(owner));
        }
        y
    }

    /// The config's data: gzip of [`EngineRecord::document`], one member.
    pub fn payload(&self) -> Vec<u8> {
        gzip(self.document().as_bytes())
    }
}

/// `data` gzipped as the engine gzips a record's document: one member.
/// For tests that need gzip of something else (text that is not YAML).
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    // Writing to a Vec cannot fail.
    gz.write_all(data).expect("gzip into memory");
    gz.finish().expect("gzip into memory")
}

/// A Compose manifest as the engine renders one for a stack: services
/// from one image, each attached to every network, mounting every volume,
/// config and secret. Keys only: `docker stack deploy` names each object
/// `<stack>_<key>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    image: String,
    services: Vec<String>,
    networks: Vec<String>,
    volumes: Vec<String>,
    configs: Vec<String>,
    secrets: Vec<String>,
}

impl Manifest {
    /// No services yet; each one added runs `image`.
    pub fn new(image: impl Into<String>) -> Self {
        Manifest {
            image: image.into(),
            services: Vec::new(),
            networks: Vec::new(),
            volumes: Vec::new(),
            configs: Vec::new(),
            secrets: Vec::new(),
        }
    }

    /// With service `key`.
    pub fn service(mut self, key: impl Into<String>) -> Self {
        self.services.push(key.into());
        self
    }

    /// With overlay network `key`, which every service joins instead of
    /// the stack's default network.
    pub fn network(mut self, key: impl Into<String>) -> Self {
        self.networks.push(key.into());
        self
    }

    /// With named volume `key`, mounted by every service at `/<key>`.
    pub fn volume(mut self, key: impl Into<String>) -> Self {
        self.volumes.push(key.into());
        self
    }

    /// With config `key`, mounted by every service.
    pub fn config(mut self, key: impl Into<String>) -> Self {
        self.configs.push(key.into());
        self
    }

    /// With secret `key`, mounted by every service.
    pub fn secret(mut self, key: impl Into<String>) -> Self {
        self.secrets.push(key.into());
        self
    }

    /// The Compose document.
    pub fn render(&self) -> String {
        let mut y = String::from("version: \"3.8\"\nservices:\n");
        for service in &self.services {
            self.render_service(&mut y, service);
        }
        let sections = [
            ("networks", &self.networks, "driver: overlay"),
            ("volumes", &self.volumes, "driver: local"),
        ];
        for (section, keys, body) in sections {
            if !keys.is_empty() {
                let _ = writeln!(y, "{section}:");
                for key in keys {
                    let _ = writeln!(y, "  {}:\n    {body}", quoted(key));
                }
            }
        }
        for (section, keys) in [("configs", &self.configs), ("secrets", &self.secrets)] {
            if !keys.is_empty() {
                let _ = writeln!(y, "{section}:");
                for key in keys {
                    let file = quoted(&format!("./files/{key}"));
                    let _ = writeln!(y, "  {}:\n    file: {file}", quoted(key));
                }
            }
        }
        y
    }

    fn render_service(&self, y: &mut String, key: &str) {
        let _ = writeln!(y, "  {}:", quoted(key));
        let _ = writeln!(y, "    image: {}", quoted(&self.image));
        let _ = writeln!(
            y,
            "    deploy:\n      mode: replicated\n      replicas: 1\n      endpoint_mode: dnsrr"
        );
        if !self.networks.is_empty() {
            let _ = writeln!(y, "    networks: {}", list(&self.networks));
        }
        if !self.volumes.is_empty() {
            let mounts: Vec<String> = self.volumes.iter().map(|v| format!("{v}:/{v}")).collect();
            let _ = writeln!(y, "    volumes: {}", list(&mounts));
        }
        for (section, keys) in [("configs", &self.configs), ("secrets", &self.secrets)] {
            if !keys.is_empty() {
                let _ = writeln!(y, "    {section}: {}", list(keys));
            }
        }
    }
}

/// `text` as a JSON string, which YAML reads as the same string.
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// `items` as a JSON list of strings, a YAML flow sequence.
fn list(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweep_core::record::{
        declared, decode_payload, parse_record_name, PayloadLimits, YAML_LIMITS,
    };

    fn set(names: &[&str]) -> std::collections::BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    fn full() -> EngineRecord {
        let mut record = EngineRecord::new("shop", 7)
            .with_owner(Some("cd/main/shop:release/shop"))
            .with_status("superseded")
            .with_manifest(
                Manifest::new("registry.example/shop:2")
                    .service("web")
                    .service("worker")
                    .network("front")
                    .volume("data")
                    .config("conf")
                    .secret("tok")
                    .render(),
            );
        record.values.insert("replicas".into(), "2".into());
        // Characters YAML would read otherwise, were they not quoted.
        record
            .values
            .insert("note: #1".into(), "a \"b\"\n- c".into());
        record.managed_networks = vec!["shop_edge".into()];
        record
    }

    #[test]
    fn the_core_reads_the_payload_back_with_the_same_fields() {
        let record = full();
        let doc = decode_payload(&record.payload(), PayloadLimits::DEFAULT).unwrap();
        assert_eq!(doc.release, "shop");
        assert_eq!(doc.revision, 7);
        assert_eq!(doc.status.as_deref(), Some("superseded"));
        let chart = doc.chart.as_ref().unwrap();
        assert_eq!(chart.name, "app");
        assert_eq!(chart.version.as_deref(), Some("1.4.2"));
        assert_eq!(chart.app_version.as_deref(), Some("1.0"));
        assert_eq!(doc.manifest, record.manifest);
        assert_eq!(doc.created.as_deref(), Some("2025-03-01T12:00:00Z"));
        assert_eq!(doc.namespace.as_deref(), Some("shop"));
        assert_eq!(doc.managed_networks, ["shop_edge"]);
        assert_eq!(doc.owner.as_deref(), Some("cd/main/shop:release/shop"));
    }

    #[test]
    fn optional_fields_are_left_out() {
        let doc = decode_payload(
            &EngineRecord::new("web", 1).payload(),
            PayloadLimits::DEFAULT,
        )
        .unwrap();
        assert_eq!(doc.owner, None);
        assert!(doc.managed_networks.is_empty());
    }

    #[test]
    fn the_manifest_declares_the_stack_s_objects() {
        let d = declared(&full().manifest, "shop", YAML_LIMITS).unwrap();
        assert_eq!(d.services, set(&["shop_web", "shop_worker"]));
        assert_eq!(d.networks, set(&["shop_front"]));
        assert_eq!(d.configs, set(&["shop_conf"]));
        assert_eq!(d.secrets, set(&["shop_tok"]));
    }

    #[test]
    fn a_service_without_networks_declares_the_default_one() {
        let d = declared(&EngineRecord::new("web", 1).manifest, "web", YAML_LIMITS).unwrap();
        assert_eq!(d.services, set(&["web_app"]));
        assert_eq!(d.networks, set(&["web_default"]));
        assert!(d.configs.is_empty() && d.secrets.is_empty());
    }

    #[test]
    fn name_and_labels_are_the_engine_s() {
        let record = full();
        assert_eq!(record.name(), "swarmcli.release.shop.v7");
        assert_eq!(parse_record_name(&record.name()), Ok(("shop".into(), 7)));
        let labels: BTreeMap<String, String> = record.labels().into_iter().collect();
        let expected: BTreeMap<String, String> = [
            ("com.swarmcli.type", "release"),
            ("com.swarmcli.release", "shop"),
            ("com.swarmcli.revision", "7"),
            ("com.swarmcli.status", "superseded"),
            ("com.swarmcli.chart", "app"),
            ("com.swarmcli.chart.version", "1.4.2"),
            ("com.swarmcli.created", "2025-03-01T12:00:00Z"),
            ("com.swarmcli.owner", "cd/main/shop:release/shop"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(labels, expected);
        let unowned = EngineRecord::new("web", 1).labels();
        assert!(!unowned.iter().any(|(k, _)| k == labels::OWNER));
    }
}
