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
    fn scratch_directories_are_private_and_unpredictable() {
        let (a, b) = (scratch("bloatlens-test-").unwrap(), scratch("bloatlens-test-").unwrap());
        assert_ne!(a.path(), b.path());
        assert_eq!(mode(a.path()), 0o700);
        assert!(a.path().file_name().unwrap().to_string_lossy().len() > "bloatlens-test-".len() + 4);
    }
}
