//! Turning backend errors into the core's failure classes.
//!
//! The class decides the reaction (wait, give up, count as done, leave
//! alone), so it is made in one place: two call sites classifying a
//! timeout differently would make retries depend on which step failed.

use sweep_core::sweep::Failure;
use sweep_swarms::{BackendError, RegistryError};

/// The failure class of a backend error. "Already gone" never reaches
/// here: backends report it as success.
pub fn classify_backend(error: &BackendError) -> Failure {
    match error {
        BackendError::InUse { .. } => Failure::InUse,
        BackendError::OwnStack { .. } => Failure::OwnStack,
        // A timeout may or may not have taken effect: like an unreachable
        // daemon, the step failed and the records stay for the next sweep.
        BackendError::Unreachable { .. } | BackendError::Timeout { .. } => {
            Failure::Unreachable(error.to_string())
        }
        BackendError::Refused { .. } => Failure::Refused(error.to_string()),
        BackendError::Invalid { .. } | BackendError::TooLarge { .. } => {
            Failure::Invalid(error.to_string())
        }
        BackendError::Other { .. } => Failure::Other(error.to_string()),
        // A kind this build does not know: the step failed, and nothing
        // is assumed about why.
        _ => Failure::Other(error.to_string()),
    }
}

/// The failure class of a registry that could not hand out a backend.
pub fn classify_registry(error: &RegistryError) -> Failure {
    match error {
        RegistryError::Manager { source, .. } => classify_backend(source),
        RegistryError::Connect { .. } | RegistryError::UnknownNode { .. } => {
            Failure::Unreachable(error.to_string())
        }
        _ => Failure::Other(error.to_string()),
    }
}
