//! Inputs whose content decides what is deleted, and when: the
//! grace-period state (its first-seen times end grace periods) and a saved
//! plan (its policy and deletions are what `apply --plan` carries out).
//! Whoever can write one can have a release deleted before its time, or
//! more deleted than was reviewed; so each must belong to the user running
//! the command, and no one but its owner and group may write to it (a
//! group that may write is the owner's choice: a umask of 002). Judged by
//! the descriptor the file is read from, so no other file can be swapped
//! in between the check and the read.

use std::fmt;
use std::path::Path;

use sweep_docker::files::{read_owned_text, Links, OwnedText};

use crate::input::InputError;

/// What a private input is for, as its refusal names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `--state FILE`.
    StateFile,
    /// `apply --plan FILE`.
    SavedPlan,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::StateFile => "the state file",
            Role::SavedPlan => "the saved plan",
        })
    }
}

/// Why a private input was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untrusted {
    /// Another user owns it.
    Owner { owner: u32, user: u32 },
    /// Anyone may write to it.
    Writable { mode: u32 },
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Untrusted::Owner { owner, user } => write!(
                f,
                "it is owned by uid {owner}, not by this user (uid {user})"
            ),
            Untrusted::Writable { mode } => write!(
                f,
                "its mode is {mode:04o}, so anyone may write to it; make it writable by its owner only (chmod o-w)"
            ),
        }
    }
}

/// The text of the private input `file`, read within `limit` bytes;
/// `None` when nothing is there.
pub fn read(
    file: &Path,
    role: Role,
    limit: u64,
    links: Links,
) -> Result<Option<String>, InputError> {
    let Some(OwnedText { text, uid, mode }) = read_owned_text(file, limit, links)? else {
        return Ok(None);
    };
    let user = rustix::process::geteuid().as_raw();
    let why = if uid != user {
        Untrusted::Owner { owner: uid, user }
    } else if mode & 0o002 != 0 {
        Untrusted::Writable { mode }
    } else {
        return Ok(Some(text));
    };
    Err(InputError::Untrusted {
        file: file.to_owned(),
        role,
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn refusal(e: InputError) -> (Role, Untrusted) {
        match e {
            InputError::Untrusted { role, why, .. } => (role, why),
            other => panic!("not a refusal of trust: {other:?}"),
        }
    }

    #[test]
    fn only_a_file_of_this_user_that_no_one_else_may_write_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.json");
        let read = || read(&file, Role::SavedPlan, 1024, Links::Follow);
        assert_eq!(read().unwrap(), None, "nothing there");
        std::fs::write(&file, "{}").unwrap();
        for (mode, ok) in [(0o600, true), (0o664, true), (0o666, false), (0o602, false)] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            match read() {
                Ok(text) => assert!(ok && text.as_deref() == Some("{}"), "{mode:o}"),
                Err(e) => {
                    assert!(!ok, "{mode:o}: {e}");
                    assert_eq!(refusal(e), (Role::SavedPlan, Untrusted::Writable { mode }));
                }
            }
        }
        if rustix::process::geteuid().is_root() {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
            std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
            let (_, why) = refusal(read().unwrap_err());
            assert_eq!(
                why,
                Untrusted::Owner {
                    owner: 65534,
                    user: 0
                }
            );
        }
    }

    #[test]
    fn a_link_at_its_name_is_followed_or_refused_as_asked() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.json");
        std::fs::write(&target, "{}").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("state.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let followed = read(&link, Role::SavedPlan, 1024, Links::Follow).unwrap();
        assert_eq!(followed.as_deref(), Some("{}"));
        match read(&link, Role::StateFile, 1024, Links::Refuse) {
            Err(InputError::Read(e)) => assert!(e.to_string().contains("symbolic link"), "{e}"),
            other => panic!("{other:?}"),
        }
        // A dangling one is no file either.
        std::fs::remove_file(&target).unwrap();
        assert!(read(&link, Role::StateFile, 1024, Links::Refuse).is_err());
    }
}
