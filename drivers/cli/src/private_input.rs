//! Inputs whose content decides what is deleted, and when: the
//! grace-period state (its first-seen times end grace periods) and a saved
//! plan (its policy and deletions are what `apply --plan` carries out).
//! Whoever can write one can have a release deleted before its time, or
//! more deleted than was reviewed; so each must belong to the user running
//! the command, and no one but its owner and group may write to it (a
//! group that may write is the owner's choice: a umask of 002). Judged by
//! the descriptor the file is read from, so no other file can be swapped
//! in between the check and the read. The same judgement, stricter, keeps
//! the audit log its owner's alone, and the state's lock file this user's.

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

/// Who besides its owner may write a file this tool trusts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writers {
    /// Its owner and its group: a group that may write is the owner's
    /// choice (a umask of 002).
    OwnerAndGroup,
    /// Its owner alone: the record of deletions, which no one else may
    /// rewrite.
    OwnerOnly,
}

impl Writers {
    /// The permission bits no one beyond these writers may hold.
    fn forbidden(self) -> u32 {
        match self {
            Writers::OwnerAndGroup => 0o002,
            Writers::OwnerOnly => 0o022,
        }
    }
}

/// Why a file was not trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untrusted {
    /// Another user owns it.
    Owner { owner: u32, user: u32 },
    /// Someone beyond `allowed` may write to it.
    Writable { mode: u32, allowed: Writers },
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Untrusted::Owner { owner, user } => write!(
                f,
                "it is owned by uid {owner}, not by this user (uid {user})"
            ),
            Untrusted::Writable {
                mode,
                allowed: Writers::OwnerAndGroup,
            } => write!(
                f,
                "its mode is {mode:04o}, so anyone may write to it; make it writable by its owner only (chmod o-w)"
            ),
            Untrusted::Writable {
                mode,
                allowed: Writers::OwnerOnly,
            } => write!(
                f,
                "its mode is {mode:04o}, so others may write to it; make it writable by its owner only (chmod go-w)"
            ),
        }
    }
}

/// Whether a file owned by `uid` is this process's user's: another user's
/// file could be rewritten, or held, by them.
pub fn owned_by_user(uid: u32) -> Result<(), Untrusted> {
    let user = rustix::process::geteuid().as_raw();
    if uid == user {
        Ok(())
    } else {
        Err(Untrusted::Owner { owner: uid, user })
    }
}

/// Whether a file owned by `uid` with permission bits `mode`, as its
/// descriptor says, may be trusted: this user's, and writable by no one
/// beyond `allowed`.
pub fn judge(uid: u32, mode: u32, allowed: Writers) -> Result<(), Untrusted> {
    owned_by_user(uid)?;
    let mode = mode & 0o7777;
    if mode & allowed.forbidden() != 0 {
        return Err(Untrusted::Writable { mode, allowed });
    }
    Ok(())
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
    match judge(uid, mode, Writers::OwnerAndGroup) {
        Ok(()) => Ok(Some(text)),
        Err(why) => Err(InputError::Untrusted {
            file: file.to_owned(),
            role,
            why,
        }),
    }
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
                    assert_eq!(
                        refusal(e),
                        (
                            Role::SavedPlan,
                            Untrusted::Writable {
                                mode,
                                allowed: Writers::OwnerAndGroup
                            }
                        )
                    );
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
    fn the_owner_alone_or_with_the_group_may_write() {
        let user = rustix::process::geteuid().as_raw();
        for (mode, allowed, ok) in [
            (0o600, Writers::OwnerOnly, true),
            (0o644, Writers::OwnerOnly, true),
            (0o620, Writers::OwnerOnly, false),
            (0o602, Writers::OwnerOnly, false),
            (0o620, Writers::OwnerAndGroup, true),
            (0o602, Writers::OwnerAndGroup, false),
        ] {
            let judged = judge(user, 0o100000 | mode, allowed);
            assert_eq!(judged.is_ok(), ok, "{mode:o} {allowed:?}");
            if !ok {
                assert_eq!(judged, Err(Untrusted::Writable { mode, allowed }));
            }
        }
        let other = user.wrapping_add(1);
        assert_eq!(
            judge(other, 0o600, Writers::OwnerOnly),
            Err(Untrusted::Owner { owner: other, user })
        );
        assert_eq!(
            owned_by_user(other),
            Err(Untrusted::Owner { owner: other, user })
        );
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
