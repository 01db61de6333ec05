//! Directories only the user can enter: where Bloatlens writes the sources it compiles and the
//! class paths it caches before running them. A directory another user could create first, swap
//! for a symlink or write into would let them plant code that Bloatlens then runs, so each is
//! created with mode 0700 and, when it exists already, must be a real directory (not a symlink)
//! owned by the user; a looser mode is tightened.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Creates `dir` (and missing parents) private to the user, or checks that it is.
pub fn ensure(dir: &Path) -> io::Result<()> {
    match std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    let refuse = |why: &str| Err(io::Error::new(io::ErrorKind::PermissionDenied, format!("{}: {why}", dir.display())));
    if meta.file_type().is_symlink() {
        return refuse("is a symbolic link; Bloatlens keeps its files only in a directory of its own");
    }
    if !meta.is_dir() {
        return refuse("is not a directory");
    }
    if meta.uid() != user_id() {
        return refuse("belongs to another user; Bloatlens keeps its files only in a directory of its own");
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The user this process runs as (its effective user id).
pub fn user_id() -> u32 {
    // SAFETY: geteuid takes no arguments, touches no memory and cannot fail (POSIX).
    unsafe { libc::geteuid() }
}

/// The file in an [`owned_scratch`] directory that names the process it belongs to.
const OWNER_FILE: &str = "owner.pid";

/// How old a directory of the prefix without an owner file must be before it counts as abandoned
/// (one of a version that wrote none, or one a late writer made again after its owner removed it).
const UNOWNED_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// A [`scratch`] directory that names its process (a file holding its pid), for a long-lived
/// process such as the language server. Making one first removes the user's directories of the
/// same prefix whose process is gone — a server killed by its editor (a signal it cannot catch)
/// or one that crashed leaves its directory behind, and nothing else would ever remove it.
pub fn owned_scratch(prefix: &str) -> io::Result<tempfile::TempDir> {
    let dir = scratch(prefix)?;
    std::fs::write(dir.path().join(OWNER_FILE), std::process::id().to_string())?;
    if let Some(parent) = dir.path().parent() {
        remove_abandoned(parent, prefix, dir.path());
    }
    Ok(dir)
}

/// Removes the directories `prefix*` in `parent` (other than `mine`) that the user owns and whose
/// process is gone: the pid in their owner file names no live process, or they have no owner
/// file and are older than [`UNOWNED_AGE`]. A pid reused by another process keeps its directory.
fn remove_abandoned(parent: &Path, prefix: &str, mine: &Path) {
    for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let path = entry.path();
        // Only names `scratch` makes: the prefix and tempfile's six random characters.
        let name = entry.file_name().to_string_lossy().into_owned();
        let made_here = name
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.len() == 6 && rest.chars().all(|c| c.is_ascii_alphanumeric()));
        if path == mine || !made_here {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if !meta.is_dir() || meta.uid() != user_id() {
            continue;
        }
        let abandoned = match std::fs::read_to_string(path.join(OWNER_FILE)) {
            Ok(pid) => pid.trim().parse::<i32>().is_ok_and(|pid| !alive(pid)),
            Err(_) => meta.modified().ok().and_then(|m| m.elapsed().ok()).is_some_and(|age| age > UNOWNED_AGE),
        };
        if abandoned {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Whether a process `pid` exists (one of another user's counts: it cannot be signalled, but it is there).
fn alive(pid: i32) -> bool {
    use nix::errno::Errno;
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        Err(e) => e != Errno::ESRCH,
    }
}

/// A new private directory with an unpredictable name under the system's temp dir, removed when
/// dropped: `tempfile` creates it fresh (mode 0700, never an existing path or a symlink's target).
pub fn scratch(prefix: &str) -> io::Result<tempfile::TempDir> {
    tempfile::Builder::new().prefix(prefix).permissions(std::fs::Permissions::from_mode(0o700)).tempdir()
}

/// `dir` made private ([`ensure`]), returned for chaining.
pub fn ensured(dir: PathBuf) -> io::Result<PathBuf> {
    ensure(&dir).map(|()| dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().mode() & 0o777
    }

    #[test]
    fn new_directories_are_private_and_loose_ones_are_tightened() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("a/b");
        ensure(&dir).unwrap();
        assert_eq!((mode(&base.path().join("a")), mode(&dir)), (0o700, 0o700));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        ensure(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
    }

    #[test]
    fn a_symlink_or_a_file_in_its_place_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let target = base.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = ensure(&link).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let file = base.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(ensure(&file).unwrap_err().to_string().contains("not a directory"));
    }

    #[test]
    fn a_scratch_directory_whose_process_is_gone_is_removed_by_the_next_one() {
        let parent = tempfile::tempdir().unwrap();
        let make = |name: &str, owner: Option<&str>| {
            let d = parent.path().join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("Main.class"), b"x").unwrap();
            if let Some(pid) = owner {
                std::fs::write(d.join(OWNER_FILE), pid).unwrap();
            }
            d
        };
        // A pid far above any pid_max (2^22) names no process.
        let dead = make("bloatlens-t-dead01", Some("2147483000"));
        let live = make("bloatlens-t-live01", Some(&std::process::id().to_string()));
        let unowned = make("bloatlens-t-new001", None);
        let stale = make("bloatlens-t-old001", None);
        let two_days_ago = std::time::SystemTime::now() - 2 * UNOWNED_AGE;
        std::fs::File::open(&stale).unwrap().set_modified(two_days_ago).unwrap();
        let other = make("another-tool-dead", Some("2147483000"));
        let longer = make("bloatlens-t-latency", Some("2147483000"));
        let mine = make("bloatlens-t-mine01", Some("2147483000"));
        remove_abandoned(parent.path(), "bloatlens-t-", &mine);
        assert!(!dead.exists(), "its process is gone");
        assert!(!stale.exists(), "no owner file, and older than a day");
        assert!(live.exists() && unowned.exists() && other.exists() && longer.exists() && mine.exists());
        assert!(!alive(2147483000) && alive(std::process::id() as i32));
    }

    #[test]
    fn scratch_directories_are_private_and_unpredictable() {
        let (a, b) = (scratch("bloatlens-test-").unwrap(), scratch("bloatlens-test-").unwrap());
        assert_ne!(a.path(), b.path());
        assert_eq!(mode(a.path()), 0o700);
        assert!(a.path().file_name().unwrap().to_string_lossy().len() > "bloatlens-test-".len() + 4);
    }
}
