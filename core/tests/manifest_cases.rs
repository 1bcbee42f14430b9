//! The objects a release's Compose manifest declares
//! (`sweep_core::record::declared`), case by case: each case checks what
//! matters to it, and the whole answer is kept as a snapshot
//! (`snapshots/manifest_cases__<name>.snap`), so that any change to what a
//! manifest declares shows in review.

use sweep_core::record::{declared, Declared, Kind, ManifestError, YAML_LIMITS};

/// Every case deploys as stack `s`.
const STACK: &str = "s";

struct Case {
    name: &'static str,
    manifest: &'static str,
    check: fn(&Result<Declared, ManifestError>),
}

fn ok(result: &Result<Declared, ManifestError>) -> &Declared {
    result.as_ref().unwrap_or_else(|e| panic!("refused: {e}"))
}

fn names(d: &Declared, kind: Kind) -> Vec<&str> {
    d.of(kind).iter().map(String::as_str).collect()
}

const CASES: &[Case] = &[
    Case {
        name: "a_service_without_networks_uses_the_default_network",
        manifest: r#"
version: "3.8"
services:
  web:
    image: nginx
  worker:
    image: worker
    networks: []
  idle:
"#,
        check: |r| {
            let d = ok(r);
            assert_eq!(names(d, Kind::Service), ["s_idle", "s_web", "s_worker"]);
            assert!(d.networks.contains("s_default"));
            assert_eq!(d.networks.len(), 1);
            assert!(d.configs.is_empty() && d.secrets.is_empty());
        },
    },
    Case {
        name: "only_networks_a_service_uses_are_declared",
        manifest: r#"
services:
  web:
    networks: [front, back]
networks:
  front: {}
  back:
  unused:
    driver: overlay
"#,
        check: |r| {
            let d = ok(r);
            assert_eq!(names(d, Kind::Network), ["s_back", "s_front"]);
            assert!(!d.contains(Kind::Network, "s_unused"));
            assert!(
                !d.contains(Kind::Network, "s_default"),
                "web lists its networks"
            );
        },
    },
    Case {
        name: "service_networks_as_a_mapping",
        manifest: r#"
services:
  web:
    networks:
      front:
        aliases: [www]
      back: ~
  db:
    networks:
      default:
networks:
  front:
  back:
"#,
        check: |r| {
            let d = ok(r);
            assert_eq!(names(d, Kind::Network), ["s_back", "s_default", "s_front"]);
        },
    },
    Case {
        name: "explicit_names_on_networks_configs_and_secrets",
        manifest: r#"
services:
  web:
    networks: [front, default]
networks:
  front:
    name: shared-front
  default:
    name: shop-net
configs:
  nginx:
    name: nginx-v3
    file: ./nginx.conf
  plain:
    file: ./plain.conf
  unnamed:
    name: ""
    file: ./x
secrets:
  key:
    name: tls-key-2026
    file: ./key.pem
  token:
    file: ./token
"#,
        check: |r| {
            let d = ok(r);
            assert_eq!(names(d, Kind::Network), ["shared-front", "shop-net"]);
            assert!(d.contains(Kind::Config, "nginx-v3"));
            assert!(d.contains(Kind::Config, "s_plain"));
            assert!(
                d.contains(Kind::Config, "s_unnamed"),
                "an empty name is none"
            );
            assert!(!d.contains(Kind::Config, "s_nginx"));
            assert_eq!(names(d, Kind::Secret), ["s_token", "tls-key-2026"]);
        },
    },
    Case {
        name: "external_objects_of_every_kind_are_never_declared",
        manifest: r#"
services:
  web:
    networks: [ingress, legacy, default, own]
networks:
  ingress:
    external: true
  legacy:
    external:
      name: old-ingress
  default:
    external: true
    name: host-wide
  own:
    external: false
configs:
  shared:
    external: true
  old:
    external: {name: old-config}
  named:
    external: true
    name: global-config
  mine:
    file: ./mine
secrets:
  cert:
    external: true
  legacy:
    external:
      name: legacy-cert
  local:
    file: ./local
"#,
        check: |r| {
            let d = ok(r);
            assert_eq!(names(d, Kind::Network), ["s_own"]);
            for name in [
                "s_ingress",
                "s_legacy",
                "old-ingress",
                "s_default",
                "host-wide",
            ] {
                assert!(!d.contains(Kind::Network, name), "{name}");
            }
            assert_eq!(names(d, Kind::Config), ["s_mine"]);
            assert_eq!(names(d, Kind::Secret), ["s_local"]);
        },
    },
    Case {
        name: "a_network_used_but_not_defined_is_declared_under_the_stack",
        manifest: r#"
services:
  web:
    networks: [missing]
  db: {}
"#,
        check: |r| {
            let d = ok(r);
            assert_eq!(names(d, Kind::Network), ["s_default", "s_missing"]);
        },
    },
    Case {
        name: "anchors_aliases_and_merge_keys",
        manifest: r#"
x-base: &base
  image: shop
  networks: &nets
    front:
    back:
x-more: &more
  deploy: {replicas: 2}
services:
  web:
    <<: *base
  api:
    <<: [*more, *base]
    networks: [api]
  worker:
    <<: *base
    networks:
      <<: *nets
      jobs:
networks:
  front: &ext
    external: true
  back:
    name: the-back
  api:
    <<: *ext
  jobs:
configs:
  a: &cfg
    name: shared-a
    file: ./a
  b:
    <<: *cfg
    name: own-b
"#,
        check: |r| {
            let d = ok(r);
            assert_eq!(names(d, Kind::Service), ["s_api", "s_web", "s_worker"]);
            // front and api are external (api by a merged `external`).
            assert_eq!(names(d, Kind::Network), ["s_jobs", "the-back"]);
            assert_eq!(names(d, Kind::Config), ["own-b", "shared-a"]);
        },
    },
    Case {
        name: "dollar_dollar_is_a_literal_dollar",
        manifest: r#"
services:
  web:
    networks: [front]
networks:
  front:
    name: "front$$1"
configs:
  c:
    name: "cost$$"
  k$$:
    file: ./k
"#,
        check: |r| {
            let d = ok(r);
            assert!(d.networks.contains("front$1"));
            assert!(d.configs.contains("cost$"));
            assert!(d.configs.contains("s_k$"));
        },
    },
    Case {
        name: "an_unresolved_variable_in_a_name_refuses_the_manifest",
        manifest: r#"
services:
  web:
    image: shop:${TAG}
configs:
  c:
    name: app-${VERSION}
"#,
        check: |r| {
            assert_eq!(
                r.as_ref().unwrap_err(),
                &ManifestError::Unresolved {
                    kind: Kind::Config,
                    name: "app-${VERSION}".into()
                }
            );
        },
    },
    Case {
        name: "an_unbraced_variable_in_a_network_name",
        manifest: r#"
services:
  web:
    networks: [front]
networks:
  front:
    name: $NET
"#,
        check: |r| {
            assert!(matches!(
                r,
                Err(ManifestError::Unresolved { kind: Kind::Network, name }) if name == "$NET"
            ));
        },
    },
    Case {
        name: "a_variable_in_an_external_objects_name_does_not_matter",
        manifest: r#"
services:
  web:
    networks: [front]
networks:
  front:
    external: true
    name: ${FRONT}
secrets:
  s:
    external: true
    name: ${SECRET}
"#,
        check: |r| {
            let d = ok(r);
            assert!(d.networks.is_empty() && d.secrets.is_empty());
            assert!(d.contains(Kind::Service, "s_web"));
        },
    },
    Case {
        name: "volumes_and_other_keys_are_ignored",
        manifest: r#"
services:
  db:
    volumes: [data:/var/lib/db]
volumes:
  data:
    name: db-data
x-extra: {anything: [1, 2]}
"#,
        check: |r| {
            let d = ok(r);
            assert_eq!(names(d, Kind::Service), ["s_db"]);
            assert_eq!(names(d, Kind::Network), ["s_default"]);
            assert!(d.configs.is_empty() && d.secrets.is_empty());
        },
    },
    Case {
        name: "a_second_document_refuses_the_manifest",
        manifest: "services: {a: {}}\n---\nservices: {b: {}}\n",
        check: |r| {
            assert!(matches!(r, Err(ManifestError::Syntax { .. })));
        },
    },
];

/// The answer as reviewable text: one object a line, or the refusal.
fn render(result: &Result<Declared, ManifestError>) -> String {
    match result {
        Err(e) => format!("refused: {e}\n"),
        Ok(d) => {
            let mut out = String::new();
            for kind in Kind::ALL {
                for name in d.of(*kind) {
                    out.push_str(&format!("{kind} {name}\n"));
                }
            }
            out
        }
    }
}

#[test]
fn manifest_cases() {
    let mut seen = std::collections::BTreeSet::new();
    for case in CASES {
        assert!(seen.insert(case.name), "duplicate case {}", case.name);
        let result = declared(case.manifest, STACK, YAML_LIMITS);
        (case.check)(&result);
        insta::assert_snapshot!(
            case.name,
            format!(
                "{}\n--- declares ---\n{}",
                case.manifest.trim(),
                render(&result)
            )
        );
    }
}
