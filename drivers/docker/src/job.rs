//! Volume work on every node through the swarm itself: a one-off
//! `global-job` service whose task on each node runs `swarm-sweep agent`
//! against that node's own daemon and prints one result line.
//!
//! This module only does the IO: it creates the job, waits for its tasks,
//! reads each completed task's output and removes the job, always. When
//! the job has ended, which nodes it reached, what the agent may do on
//! each, and which jobs a killed run left behind are decided in
//! `sweep_core::agent`.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant, SystemTime};

use bollard::models::{
    Mount, MountType, ServiceSpec, ServiceSpecMode, TaskSpec, TaskSpecContainerSpec,
    TaskSpecLogDriver, TaskSpecRestartPolicy, TaskSpecRestartPolicyConditionEnum, TaskState,
};
use bollard::query_parameters::{
    ListServicesOptionsBuilder, ListTasksOptionsBuilder, LogsOptionsBuilder,
};
use futures::StreamExt;
use sweep_core::agent::{
    job_started_label, leftover_job, reach, task_lines, AgentRequest, JobProgress, JobTask,
    LeftoverJob, NodeReached, TaskPhase, MAX_TASK_OUTPUT,
};
pub use sweep_core::agent::{JOB_LABEL, JOB_STARTED_LABEL};
use sweep_core::escape::escape;
use sweep_core::UnixTime;
use sweep_swarms::BackendError;

use crate::client::{label_filter, CallFailure, Client};

/// Where the node's docker socket is mounted in the agent's container.
const SOCKET_IN_TASK: &str = "/var/run/docker.sock";
/// How often the job's tasks are looked at while it runs.
const POLL: Duration = Duration::from_millis(500);

/// How volume jobs are run on one swarm (`node_reach = "job"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct JobSettings {
    /// The agent's image: this project's image, by tag or by digest.
    pub image: String,
    /// The node's docker socket as the source of a bind mount: a path, or
    /// a Swarm template such as `/run/docker-{{.Node.Hostname}}.sock`.
    pub socket: String,
    /// How long one job may take, from its creation to its last task's end.
    pub limit: Duration,
}

impl JobSettings {
    pub fn new(image: impl Into<String>, socket: impl Into<String>, limit: Duration) -> Self {
        JobSettings {
            image: image.into(),
            socket: socket.into(),
            limit,
        }
    }
}

/// The default agent socket: where a node's daemon listens.
pub const DEFAULT_AGENT_SOCKET: &str = "/var/run/docker.sock";

/// `image` pinned to its registry digest when the manager knows one for it
/// (an image pulled from a registry), since the agent holds every node's
/// docker socket; otherwise why not (an image built on each node has no
/// digest, or the manager could not be asked), for the caller to run
/// `image` by its tag and say so.
pub(crate) async fn pinned_image(client: &Client, image: &str) -> Result<String, String> {
    if image.contains('@') {
        return Ok(image.to_owned());
    }
    let repo = familiar(repository(image));
    let what = format!("image {image:?}");
    match client
        .call_plain(
            &what,
            client
                .docker()
                .inspect_image(&crate::url_path::image(image)),
        )
        .await
    {
        Ok(inspect) => {
            // The engine names digests in the short form (`org/app`,
            // `busybox`), whatever form the configuration used.
            inspect
                .repo_digests
                .unwrap_or_default()
                .into_iter()
                .find(|d| {
                    d.split_once('@')
                        .is_some_and(|(name, _)| familiar(name) == repo)
                })
                .ok_or_else(|| "it has no registry digest (built on the nodes?)".to_owned())
        }
        Err(error) => Err(format!("the manager cannot inspect it: {error}")),
    }
}

/// A repository as the engine shows it: without the default registry
/// (`docker.io/`, `index.docker.io/`) and, there, without `library/`.
fn familiar(repository: &str) -> &str {
    let short = ["docker.io/", "index.docker.io/"]
        .iter()
        .find_map(|r| repository.strip_prefix(r));
    match short {
        Some(name) => name.strip_prefix("library/").unwrap_or(name),
        None => repository,
    }
}

/// `image` without its tag (`host:5000/a/b:1.0` is `host:5000/a/b`).
fn repository(image: &str) -> &str {
    let name_start = image.rfind('/').map_or(0, |i| i + 1);
    match image[name_start..].rfind(':') {
        Some(colon) => &image[..name_start + colon],
        None => image,
    }
}

/// Runs one volume job with `request` on the swarm `client` manages, and
/// says which of `nodes` (the swarm's node ids) it reached and what each
/// agent did there. The job's service is removed whatever happens: when
/// this returns, and, when the future is dropped first (a stop), by a task
/// spawned to do it.
pub(crate) async fn run(
    client: &Client,
    swarm: &str,
    settings: &JobSettings,
    image: &str,
    request: &AgentRequest,
    nodes: &[String],
) -> Result<BTreeMap<String, NodeReached>, BackendError> {
    let started = Instant::now();
    let spec = job_spec(settings, image, request);
    let created = client
        .call_plain("the volume job", client.docker().create_service(spec, None))
        .await?;
    let mut job = Job {
        client: client.clone(),
        id: created.id.unwrap_or_default(),
        removed: false,
    };
    if job.id.is_empty() {
        return Err(BackendError::Invalid {
            what: "the volume job".into(),
            message: "the manager created it without an id".into(),
        });
    }
    let outcome = watch(client, swarm, settings, &job.id, started, nodes).await;
    job.remove().await;
    outcome
}

/// Waits for the job's tasks and reads what the completed ones said.
async fn watch(
    client: &Client,
    swarm: &str,
    settings: &JobSettings,
    id: &str,
    started: Instant,
    nodes: &[String],
) -> Result<BTreeMap<String, NodeReached>, BackendError> {
    let mut tasks = loop {
        let tasks = tasks_of(client, id).await?;
        let desired = desired_tasks(client, id).await?;
        match JobProgress::observe(&tasks, desired, started.elapsed(), settings.limit, POLL) {
            JobProgress::Ended => break tasks,
            JobProgress::TimedOut => {
                tracing::warn!(swarm, after = ?settings.limit, "the volume job did not end in time; nodes whose task did not complete are not reached");
                break tasks;
            }
            JobProgress::Placing | JobProgress::Running { .. } => {
                tokio::time::sleep(POLL).await;
            }
        }
    };
    let mut lines = Vec::new();
    for task in &mut tasks {
        match task.phase() {
            // One node's output that cannot be read (its daemon went away
            // after its task completed) leaves that node unreached, not
            // the nodes whose output was read.
            TaskPhase::Complete => match output_of(client, task).await {
                Ok(output) => lines.extend(output),
                Err(e) => *task = task.clone().with_unread_output(e.to_string()),
            },
            // Only a completed task's output may hold a result.
            TaskPhase::Live | TaskPhase::Ended | TaskPhase::Unknown => {}
        }
    }
    Ok(reach(nodes, &tasks, &lines))
}

async fn tasks_of(client: &Client, id: &str) -> Result<Vec<JobTask>, BackendError> {
    let filters = HashMap::from([("service".to_owned(), vec![id.to_owned()])]);
    let options = ListTasksOptionsBuilder::default().filters(&filters).build();
    let tasks = client
        .call_plain(
            "the volume job's tasks",
            client.docker().list_tasks(Some(options)),
        )
        .await?;
    Ok(tasks
        .into_iter()
        .filter_map(|t| {
            let status = t.status.unwrap_or_default();
            Some(JobTask::new(
                t.id.filter(|id| !id.is_empty())?,
                // A task not yet placed is on no node, and reaches none.
                t.node_id.unwrap_or_default(),
                status
                    .state
                    .map_or_else(|| TaskState::NEW.to_string(), |s| s.to_string()),
                status.err.filter(|e| !e.is_empty()),
            ))
        })
        .collect())
}

/// How many tasks the orchestrator means the job to run: one per node it
/// can place one on.
async fn desired_tasks(client: &Client, id: &str) -> Result<u64, BackendError> {
    let filters = HashMap::from([("id".to_owned(), vec![id.to_owned()])]);
    let options = ListServicesOptionsBuilder::default()
        .filters(&filters)
        .status(true)
        .build();
    let services = client
        .call_plain(
            "the volume job's status",
            client.docker().list_services(Some(options)),
        )
        .await?;
    Ok(services
        .into_iter()
        .find(|s| s.id.as_deref() == Some(id))
        .and_then(|s| s.service_status)
        .and_then(|s| s.desired_tasks)
        .unwrap_or(0))
}

/// The lines a completed task wrote on stdout, bounded.
async fn output_of(
    client: &Client,
    task: &JobTask,
) -> Result<Vec<sweep_core::agent::LogLine>, BackendError> {
    let what = format!("the output of volume job task {}", task.id);
    let options = LogsOptionsBuilder::default().stdout(true).build();
    let read = async {
        let mut entries: Vec<String> = Vec::new();
        let mut total = 0usize;
        let mut stream = client
            .docker()
            .task_logs(&crate::url_path::segment(&task.id), Some(options));
        while let Some(entry) = stream.next().await {
            let text = String::from_utf8_lossy(&entry?.into_bytes()).into_owned();
            total = total.saturating_add(text.len());
            entries.push(text);
            if total > MAX_TASK_OUTPUT {
                break;
            }
        }
        Ok(entries)
    };
    let entries = client.call_plain(&what, read).await?;
    Ok(task_lines(
        &task.id,
        &task.node,
        entries.iter().map(String::as_str),
    ))
}

/// The job's service: a `global-job` of the agent, one task per node, run
/// once (a failed task is not restarted: its result line says why),
/// attached to no network of the swarm (Swarm refuses `none` for a
/// service), with a read-only root file system and the node's socket its
/// only mount.
fn job_spec(settings: &JobSettings, image: &str, request: &AgentRequest) -> ServiceSpec {
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let name = format!(
        "swarm-sweep-job-{}-{}",
        started.as_secs(),
        started.subsec_nanos() % 1_000_000
    );
    ServiceSpec {
        name: Some(name),
        labels: Some(HashMap::from([
            (JOB_LABEL.to_owned(), "volumes".to_owned()),
            (
                JOB_STARTED_LABEL.to_owned(),
                job_started_label(UnixTime::from_secs(started.as_secs())),
            ),
        ])),
        mode: Some(ServiceSpecMode {
            global_job: Some(HashMap::new()),
            ..ServiceSpecMode::default()
        }),
        task_template: Some(TaskSpec {
            container_spec: Some(TaskSpecContainerSpec {
                image: Some(image.to_owned()),
                args: Some(vec![
                    "agent".into(),
                    "--request".into(),
                    request.to_json(),
                    "--socket".into(),
                    format!("unix://{SOCKET_IN_TASK}"),
                ]),
                // The socket is root's on most hosts; the container holds
                // nothing else and writes nowhere.
                user: Some("0:0".into()),
                read_only: Some(true),
                mounts: Some(vec![Mount {
                    typ: Some(MountType::BIND),
                    source: Some(settings.socket.clone()),
                    target: Some(SOCKET_IN_TASK.into()),
                    ..Mount::default()
                }]),
                ..TaskSpecContainerSpec::default()
            }),
            restart_policy: Some(TaskSpecRestartPolicy {
                condition: Some(TaskSpecRestartPolicyConditionEnum::NONE),
                ..TaskSpecRestartPolicy::default()
            }),
            // Read back through the manager: a driver that cannot be read
            // would lose every result line.
            log_driver: Some(TaskSpecLogDriver {
                name: Some("json-file".into()),
                options: None,
            }),
            ..TaskSpec::default()
        }),
        ..ServiceSpec::default()
    }
}

/// The job's service, removed once: by [`Job::remove`], or when dropped
/// before that, by a task spawned on the runtime.
struct Job {
    client: Client,
    id: String,
    removed: bool,
}

impl Job {
    async fn remove(&mut self) {
        self.removed = true;
        remove_job(&self.client, &self.id).await;
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if self.removed {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (client, id) = (self.client.clone(), self.id.clone());
            let removal = runtime.spawn(async move { remove_job(&client, &id).await });
            REMOVALS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(removal);
        }
    }
}

/// Removals of jobs whose run was dropped (a stop), still under way: a
/// process that ends with them would leave a service holding every node's
/// docker socket until a later run finds it.
static REMOVALS: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>> =
    std::sync::Mutex::new(Vec::new());

/// Waits, at most `limit`, for the removals of volume jobs that a stop
/// left under way. A process that may have run volume jobs calls it before
/// its runtime ends; what is not removed by then is logged, and removed by
/// the next run's listing job.
pub async fn finish_job_removals(limit: std::time::Duration) {
    let pending: Vec<_> = std::mem::take(
        &mut *REMOVALS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    if pending.is_empty() {
        return;
    }
    if tokio::time::timeout(limit, futures::future::join_all(pending))
        .await
        .is_err()
    {
        tracing::warn!(
            ?limit,
            "a volume job's removal did not finish in time; the next run removes it"
        );
    }
}

/// Removes a job's service; one already gone is removed. A failure is
/// logged: the next run's [`remove_leftovers`] finds the job by its label.
async fn remove_job(client: &Client, id: &str) {
    let what = format!("volume job {id}");
    let docker = client.docker();
    match client
        .call(&what, docker.delete_service(&crate::url_path::segment(id)))
        .await
    {
        Ok(()) | Err(CallFailure::Status { code: 404, .. }) => {}
        Err(f) => {
            let error = f.into_backend(&what);
            tracing::warn!(job = id, %error, "cannot remove the volume job; the next run removes it");
        }
    }
}

/// Removes the volume jobs a killed run left on the swarm: those that
/// `sweep_core::agent::leftover_job` finds started long enough before now
/// for no run to wait for them any more, given the time one job is given
/// (`job_limit`).
pub(crate) async fn remove_leftovers(client: &Client, swarm: &str, job_limit: Duration) {
    let filters = label_filter(&[(JOB_LABEL, "volumes")]);
    let options = ListServicesOptionsBuilder::default()
        .filters(&filters)
        .build();
    let services = match client
        .call_plain(
            "the volume jobs left behind",
            client.docker().list_services(Some(options)),
        )
        .await
    {
        Ok(services) => services,
        Err(error) => {
            tracing::warn!(swarm, %error, "cannot list volume jobs left behind");
            return;
        }
    };
    // Before 1970 (a clock gone wrong) every job looks started after now,
    // and is kept.
    let now = UnixTime::from_system_time(SystemTime::now()).unwrap_or(UnixTime::from_secs(0));
    for service in services {
        let Some(id) = service.id else { continue };
        let labels = service.spec.and_then(|s| s.labels).unwrap_or_default();
        let started = labels.get(JOB_STARTED_LABEL).map(String::as_str);
        match leftover_job(started, now, job_limit) {
            LeftoverJob::Remove { age_secs } => {
                tracing::warn!(swarm, job = %escape(&id), age_secs, "removing a volume job a killed run left behind");
                remove_job(client, &id).await;
            }
            LeftoverJob::Young { .. } => {}
            LeftoverJob::Ahead { ahead_secs } => {
                tracing::warn!(swarm, job = %escape(&id), ahead_secs, "a volume job started after now (another controller's clock ahead?) is left alone");
            }
            LeftoverJob::Unreadable => {
                tracing::warn!(swarm, job = %escape(&id), label = JOB_STARTED_LABEL, "a volume job without a readable start time is left alone (it may be another run's, still going); remove it by hand once no sweep runs");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_s_repository_is_its_name_without_the_tag() {
        assert_eq!(repository("swarm-sweep:0.1.0"), "swarm-sweep");
        assert_eq!(repository("swarm-sweep"), "swarm-sweep");
        assert_eq!(
            repository("registry:5000/ops/swarm-sweep:0.1.0"),
            "registry:5000/ops/swarm-sweep"
        );
        assert_eq!(
            repository("registry:5000/swarm-sweep"),
            "registry:5000/swarm-sweep"
        );
    }

    /// The engine gives digests in the short form whatever form the
    /// configuration names the image in: both are compared so.
    #[test]
    fn a_fully_qualified_name_matches_the_engine_s_short_one() {
        for (configured, engine) in [
            ("docker.io/org/swarm-sweep:1", "org/swarm-sweep"),
            ("index.docker.io/org/swarm-sweep", "org/swarm-sweep"),
            ("docker.io/library/busybox:1.36", "busybox"),
            ("docker.io/busybox", "busybox"),
            ("org/swarm-sweep:1", "org/swarm-sweep"),
        ] {
            assert_eq!(
                familiar(repository(configured)),
                familiar(engine),
                "{configured}"
            );
        }
        // Another registry is another repository.
        assert_ne!(
            familiar(repository("ghcr.io/org/swarm-sweep:1")),
            familiar("org/swarm-sweep")
        );
        assert_eq!(
            familiar("registry:5000/library/x"),
            "registry:5000/library/x"
        );
    }

    #[test]
    fn the_job_runs_the_agent_once_on_every_node_with_only_the_socket() {
        let settings = JobSettings::new(
            "swarm-sweep:0.1.0",
            "/run/bed/{{.Node.Hostname}}/docker.sock",
            Duration::from_secs(60),
        );
        let spec = job_spec(
            &settings,
            "swarm-sweep@sha256:abc",
            &AgentRequest::list_all(),
        );
        let labels = spec.labels.unwrap();
        assert_eq!(labels[JOB_LABEL], "volumes");
        assert!(labels[JOB_STARTED_LABEL].parse::<u64>().is_ok());
        assert!(spec.mode.unwrap().global_job.is_some());
        assert!(spec.networks.is_none());
        let task = spec.task_template.unwrap();
        assert_eq!(
            task.restart_policy.unwrap().condition,
            Some(TaskSpecRestartPolicyConditionEnum::NONE)
        );
        assert!(task.networks.is_none());
        let container = task.container_spec.unwrap();
        assert_eq!(container.image.as_deref(), Some("swarm-sweep@sha256:abc"));
        assert_eq!(container.read_only, Some(true));
        let args = container.args.unwrap();
        assert_eq!(args[0], "agent");
        assert_eq!(
            AgentRequest::from_json(&args[2]),
            Ok(AgentRequest::list_all())
        );
        let mounts = container.mounts.unwrap();
        assert_eq!(mounts.len(), 1);
        assert_eq!(
            mounts[0].source.as_deref(),
            Some("/run/bed/{{.Node.Hostname}}/docker.sock")
        );
    }
}
