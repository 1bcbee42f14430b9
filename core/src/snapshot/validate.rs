//! What the schema alone cannot check: unique and well-formed names.

use std::collections::HashSet;

use super::text::SnapshotStr;
use super::types::Snapshot;
use super::SnapshotError;
use crate::owner::{is_application_name, ControllerId};

impl<S: SnapshotStr> Snapshot<S> {
    /// Checks what the schema alone cannot: uniqueness and non-empty names.
    /// [`Snapshot::from_json`] and [`plan()`](crate::plan()) run it; call
    /// it on a snapshot built in code to see the error before planning.
    /// Each list is checked in order and the first fault found is the one
    /// reported.
    pub fn validate(&self) -> Result<(), SnapshotError> {
        ControllerId::new(self.policy.controller.as_str())?;
        let applications = &self.app_set.applications;
        let mut apps = HashSet::with_capacity(applications.len());
        for (i, app) in applications.iter().enumerate() {
            let name = app.name.as_str();
            if name.is_empty() {
                return Err(SnapshotError::EmptyName {
                    field: format!("app_set.applications[{i}].name"),
                });
            }
            if !is_application_name(name) {
                return Err(SnapshotError::InvalidApplicationName {
                    field: format!("app_set.applications[{i}].name"),
                    name: name.to_owned(),
                });
            }
            if !apps.insert(name) {
                return Err(SnapshotError::DuplicateApplication {
                    name: name.to_owned(),
                });
            }
            for (j, release) in app.releases.iter().flatten().enumerate() {
                if release.as_str().is_empty() {
                    return Err(SnapshotError::EmptyName {
                        field: format!("app_set.applications[{i}].releases[{j}]"),
                    });
                }
            }
        }
        let mut swarms = HashSet::with_capacity(self.swarms.len());
        for (i, swarm) in self.swarms.iter().enumerate() {
            let name = S::swarm_str(&swarm.swarm);
            if !swarms.insert(name) {
                return Err(SnapshotError::DuplicateSwarm { swarm: name.into() });
            }
            unique_names(
                swarm.releases.iter().map(|r| r.name.as_str()),
                swarm.releases.len(),
                |j| SnapshotError::EmptyName {
                    field: format!("swarms[{i}].releases[{j}].name"),
                },
                |release| SnapshotError::DuplicateRelease {
                    swarm: name.into(),
                    release: release.to_owned(),
                },
            )?;
            for (field, list) in [("nodes", &swarm.nodes), ("members", &swarm.members)] {
                let list = list.as_deref().unwrap_or_default();
                unique_names(
                    list.iter().map(|n| n.id.as_str()),
                    list.len(),
                    |j| SnapshotError::EmptyName {
                        field: format!("swarms[{i}].{field}[{j}].id"),
                    },
                    |id| SnapshotError::DuplicateNode {
                        swarm: name.into(),
                        node: id.to_owned(),
                    },
                )?;
            }
        }
        Ok(())
    }
}

/// Checks that `names` holds no empty name and no name twice; the error
/// is about the first offending entry in list order.
fn unique_names<'a, I>(
    names: I,
    len: usize,
    empty: impl FnOnce(usize) -> SnapshotError,
    twice: impl FnOnce(&str) -> SnapshotError,
) -> Result<(), SnapshotError>
where
    I: Iterator<Item = &'a str> + Clone,
{
    // A gathered snapshot lists each swarm's releases sorted by name, and a
    // strictly ascending list of non-empty names holds neither fault: one
    // pass then instead of a set of every name.
    let mut previous: Option<&str> = None;
    let ascending = names.clone().all(|name| {
        let ok = !name.is_empty() && previous.is_none_or(|p| p < name);
        previous = Some(name);
        ok
    });
    if ascending {
        return Ok(());
    }
    let mut seen = HashSet::with_capacity(len);
    for (j, name) in names.enumerate() {
        if name.is_empty() {
            return Err(empty(j));
        }
        if !seen.insert(name) {
            return Err(twice(name));
        }
    }
    Ok(())
}
