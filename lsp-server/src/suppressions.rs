//! `.bloatlens/suppressions.json`: the keys of the findings the user suppressed, a sorted JSON
//! array the user may edit by hand and commit. It lives in a workspace the server does not own,
//! so it is read and written defensively: only a plain file (never through a symbolic link,
//! never a device or a pipe that could block or never end), at most [`MAX_BYTES`], written
//! atomically (a new file renamed over the old), merged with what is on disk at that moment (a
//! second server on the same workspace keeps its suppressions), and never overwritten when it is
//! not valid JSON (a hand edit is the user's to fix).

use std::collections::HashSet;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Far more than any workspace's suppressions (a key is under 200 bytes).
pub const MAX_BYTES: u64 = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum SuppressionsError {
    #[error("{0} is not a plain file (a symbolic link, a directory or a device): Bloatlens leaves it alone")]
    NotAPlainFile(PathBuf),
    #[error("{0} is larger than {max} KB: Bloatlens leaves it alone", max = MAX_BYTES >> 10)]
    TooLarge(PathBuf),
    #[error("{path} is not a JSON array of finding keys ({why}): Bloatlens leaves it as it is; fix or delete it to keep suppressions")]
    Corrupt { path: PathBuf, why: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// The file's place in a workspace.
pub fn path_in(root: &Path) -> PathBuf {
    root.join(".bloatlens").join("suppressions.json")
}

/// The keys in the file; none when it does not exist.
pub fn load(path: &Path) -> Result<HashSet<String>, SuppressionsError> {
    let io = |source| SuppressionsError::Io { path: path.to_path_buf(), source };
    // Not through a link, and without blocking on a FIFO: opened as it is, then checked.
    let file = match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(SuppressionsError::NotAPlainFile(path.to_path_buf()))
        }
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(SuppressionsError::NotAPlainFile(path.to_path_buf()));
    }
    if meta.len() > MAX_BYTES {
        return Err(SuppressionsError::TooLarge(path.to_path_buf()));
    }
    let mut text = String::new();
    file.take(MAX_BYTES + 1).read_to_string(&mut text).map_err(io)?;
    if text.trim().is_empty() {
        return Ok(HashSet::new());
    }
    serde_json::from_str::<Vec<String>>(&text)
        .map(|keys| keys.into_iter().collect())
        .map_err(|e| SuppressionsError::Corrupt { path: path.to_path_buf(), why: e.to_string() })
}

/// Writes `keys` together with those on disk now; returns every key the file holds.
pub fn save(path: &Path, keys: &HashSet<String>) -> Result<HashSet<String>, SuppressionsError> {
    let io = |source| SuppressionsError::Io { path: path.to_path_buf(), source };
    let dir = path.parent().unwrap_or(Path::new("."));
    match std::fs::symlink_metadata(dir) {
        Ok(m) if !m.is_dir() => return Err(SuppressionsError::NotAPlainFile(dir.to_path_buf())),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir(dir).map_err(io)?,
        Err(e) => return Err(io(e)),
    }
    let mut all = load(path)?;
    all.extend(keys.iter().cloned());
    let mut sorted: Vec<&String> = all.iter().collect();
    sorted.sort();
    let text = serde_json::to_string_pretty(&sorted).unwrap_or_default() + "\n";
    // A new file beside it, renamed over it: a reader sees the old file or the new, never half
    // of one, and the rename replaces a link planted since instead of writing through it.
    let mut new = tempfile::Builder::new().prefix(".suppressions-").tempfile_in(dir).map_err(io)?;
    std::io::Write::write_all(&mut new, text.as_bytes()).map_err(io)?;
    new.persist(path).map_err(|e| io(e.error))?;
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(ks: &[&str]) -> HashSet<String> {
        ks.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn saves_merge_with_the_file_on_disk_and_leave_no_temporary_file() {
        let root = tempfile::tempdir().unwrap();
        let path = path_in(root.path());
        assert_eq!(load(&path).unwrap(), keys(&[]));
        save(&path, &keys(&["a"])).unwrap();
        // Another server saved "b" meanwhile: both stay.
        let all = save(&path, &keys(&["b"])).unwrap();
        assert_eq!(all, keys(&["a", "b"]));
        assert_eq!(load(&path).unwrap(), keys(&["a", "b"]));
        let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(names, ["suppressions.json"]);
    }

    #[test]
    fn a_corrupt_file_is_kept_as_it_is() {
        let root = tempfile::tempdir().unwrap();
        let path = path_in(root.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "[\"a\", oops").unwrap();
        let err = load(&path).unwrap_err();
        assert!(matches!(err, SuppressionsError::Corrupt { .. }), "{err}");
        assert!(err.to_string().contains("fix or delete it"), "{err}");
        assert!(save(&path, &keys(&["b"])).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[\"a\", oops", "the hand edit survives");
    }

    #[test]
    fn links_devices_and_huge_files_are_refused_without_reading_them() {
        let root = tempfile::tempdir().unwrap();
        let path = path_in(root.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        for target in ["/dev/zero", "/dev/stdin"] {
            let _ = std::fs::remove_file(&path);
            std::os::unix::fs::symlink(target, &path).unwrap();
            assert!(matches!(load(&path), Err(SuppressionsError::NotAPlainFile(_))), "{target}");
            assert!(save(&path, &keys(&["a"])).is_err(), "{target}");
        }
        // A link to a file elsewhere: never written through.
        let elsewhere = root.path().join("elsewhere.json");
        std::fs::write(&elsewhere, "[]").unwrap();
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert!(save(&path, &keys(&["a"])).is_err());
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "[]");
        // A FIFO would block a plain open: refused at once.
        let _ = std::fs::remove_file(&path);
        let fifo = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path that lives until the call returns.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(matches!(load(&path), Err(SuppressionsError::NotAPlainFile(_))));
        let _ = std::fs::remove_file(&path);
        std::fs::write(&path, vec![b' '; (MAX_BYTES + 1) as usize]).unwrap();
        assert!(matches!(load(&path), Err(SuppressionsError::TooLarge(_))));
        // The directory itself a link: not written through either.
        let other = tempfile::tempdir().unwrap();
        let root2 = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(other.path(), root2.path().join(".bloatlens")).unwrap();
        assert!(save(&path_in(root2.path()), &keys(&["a"])).is_err());
        assert_eq!(std::fs::read_dir(other.path()).unwrap().count(), 0);
    }
}
