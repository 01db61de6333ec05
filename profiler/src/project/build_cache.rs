//! A project's compiled classes kept between command-line runs. The command line used to compile a
//! project's main and test sources into a fresh directory on every run, which was most of a test
//! class's profile on a real project (javac 90% of the CPU on jsoup). A build is now kept in the
//! project's cache directory under a key: a digest of everything the compile read (the compiler
//! and its class library, every source's content, the source roots, every library's path, size and time, the options).
//! The same key finds the same classes, so nothing stale is ever run: any change is a new key and a
//! full compile. Builds are made in a private directory beside the kept ones and renamed into place
//! whole, so two runs at once never see half a build.

use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How many builds a project keeps (the newest); older ones go once they are this old, so a run
/// still using one is not pulled from under it.
const KEPT: usize = 4;
const GRACE: Duration = Duration::from_secs(600);

/// What a build's key is made of, added in order.
#[derive(Default)]
pub struct Key(Sha256);

impl Key {
    pub fn text(&mut self, s: &str) {
        self.0.update((s.len() as u64).to_le_bytes());
        self.0.update(s.as_bytes());
    }

    pub fn path(&mut self, p: &Path) {
        self.text(&p.to_string_lossy());
    }

    /// A source: its path and content.
    pub fn source(&mut self, p: &Path) -> io::Result<()> {
        self.path(p);
        let bytes = std::fs::read(p)?;
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(&bytes);
        Ok(())
    }

    /// A file read whole by the compiler (a jar, the compiler itself): its path, size and time.
    /// `None` when it cannot be keyed so: a directory (its classes could change unseen).
    pub fn file(&mut self, p: &Path) -> Option<()> {
        self.path(p);
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => None,
            Ok(m) => {
                let modified = m.modified().ok()?.duration_since(SystemTime::UNIX_EPOCH).ok()?;
                self.0.update(m.len().to_le_bytes());
                self.0.update(modified.as_nanos().to_le_bytes());
                Some(())
            }
            // A library that is not there is read as nothing: keyed as absent.
            Err(_) => {
                self.text("absent");
                Some(())
            }
        }
    }

    fn finish(self) -> String {
        format!("{:x}", self.0.finalize())[..24].to_string()
    }
}

/// Where a project's classes are, kept or about to be made.
pub enum Build {
    /// Made before with the same key: nothing to compile.
    Kept(PathBuf),
    /// To be compiled into `partial`, then [`Build::keep`] renames it to `path`.
    New { partial: tempfile::TempDir, path: PathBuf },
}

impl Build {
    /// The build for `key` among the kept ones in `dir` (created private if needed).
    pub fn open(dir: &Path, key: Key) -> io::Result<Build> {
        crate::private_dir::ensure(dir)?;
        let path = dir.join(key.finish());
        if path.is_dir() {
            return Ok(Build::Kept(path));
        }
        let partial = tempfile::Builder::new().prefix(".partial-").tempdir_in(dir)?;
        Ok(Build::New { partial, path })
    }

    /// Where the classes are read from once the build is kept.
    pub fn path(&self) -> &Path {
        match self {
            Build::Kept(p) | Build::New { path: p, .. } => p,
        }
    }

    /// Where to compile: the kept build's directory is never written.
    pub fn compile_into(&self) -> Option<&Path> {
        match self {
            Build::Kept(_) => None,
            Build::New { partial, .. } => Some(partial.path()),
        }
    }

    /// A compiled build is kept: renamed into place whole (another run that kept the same key
    /// first wins; the two are the same classes). Builds past the newest few are removed.
    pub fn keep(self) -> io::Result<PathBuf> {
        let Build::New { partial, path } = self else { return Ok(self.path().to_path_buf()) };
        let made = partial.keep();
        if std::fs::rename(&made, &path).is_err() {
            let _ = std::fs::remove_dir_all(&made);
            if !path.is_dir() {
                return Err(io::Error::other(format!("cannot keep the build in {}", path.display())));
            }
        }
        if let Some(dir) = path.parent() {
            prune(dir, &path);
        }
        Ok(path)
    }
}

/// Removes kept builds past the newest [`KEPT`] that are older than [`GRACE`], and partial ones
/// left by a run that was killed, as old.
fn prune(dir: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut builds: Vec<(SystemTime, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path() != keep && e.path().is_dir())
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    builds.sort_by_key(|b| std::cmp::Reverse(b.0));
    let now = SystemTime::now();
    for (i, (modified, path)) in builds.iter().enumerate() {
        let partial = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with(".partial-"));
        let old = now.duration_since(*modified).is_ok_and(|age| age > GRACE);
        if old && (partial || i + 1 >= KEPT) {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(sources: &[&Path]) -> Key {
        let mut k = Key::default();
        for s in sources {
            k.source(s).unwrap();
        }
        k
    }

    #[test]
    fn the_same_sources_find_the_kept_build_and_a_change_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("A.java");
        std::fs::write(&src, "class A {}").unwrap();
        let builds = dir.path().join("builds");
        let first = Build::open(&builds, key_of(&[&src])).unwrap();
        let into = first.compile_into().expect("a new build is compiled").to_path_buf();
        std::fs::write(into.join("A.class"), "classes").unwrap();
        let kept = first.keep().unwrap();
        assert!(kept.join("A.class").is_file());
        let again = Build::open(&builds, key_of(&[&src])).unwrap();
        assert!(again.compile_into().is_none(), "the same sources: nothing to compile");
        assert_eq!(again.path(), kept);
        std::fs::write(&src, "class A { int x; }").unwrap();
        let changed = Build::open(&builds, key_of(&[&src])).unwrap();
        assert!(changed.compile_into().is_some(), "a changed source compiles again");
        assert_ne!(changed.path(), kept);
    }

    #[test]
    fn a_class_directory_on_the_class_path_is_not_keyed() {
        let dir = tempfile::tempdir().unwrap();
        let mut k = Key::default();
        assert!(k.file(dir.path()).is_none());
        let jar = dir.path().join("lib.jar");
        std::fs::write(&jar, "jar").unwrap();
        assert!(k.file(&jar).is_some());
    }
}
