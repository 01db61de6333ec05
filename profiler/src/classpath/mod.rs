//! Where class bytes come from: directories, jar files and the JDK's own `lib/modules` image,
//! all behind one [`ClassSource`] trait and searched in order by a [`ClassPath`].

mod jar;
pub mod jdk;
pub mod jimage;

pub use jar::JarSource;
pub use jdk::Jdk;
pub use jimage::JImage;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum ClassPathError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a valid jar: {reason}")]
    BadJar { path: PathBuf, reason: String },
    #[error("{path} is not a jimage file: {reason}")]
    BadImage { path: PathBuf, reason: String },
    #[error("class path entry {0} does not exist")]
    Missing(PathBuf),
    #[error("no JDK found: set JAVA_HOME or put `java` on PATH")]
    NoJdk,
    #[error("the JDK at {0} has no lib/modules (a JDK 9 or newer is required)")]
    NoModules(PathBuf),
}

/// Where a class came from: the JDK's module (for stack traces) or the user's class path entry
/// (a directory or jar: its code source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A module of the JDK's runtime image.
    Module(String),
    /// A directory or jar of the class path.
    ClassPath(Arc<Path>),
    /// Defined at run time from bytes with no file behind them (generated classes).
    Generated,
}

/// A place that may hold classes and resources, keyed by path (`java/lang/String.class`,
/// `org/example/config.properties`).
pub trait ClassSource: Send + Sync {
    fn resource(&self, path: &str) -> Result<Option<(Vec<u8>, Origin)>, ClassPathError>;
    fn describe(&self) -> String;
}

pub struct DirSource {
    root: Arc<Path>,
}

impl DirSource {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root: PathBuf = root.into();
        DirSource { root: root.into() }
    }
}

impl ClassSource for DirSource {
    fn resource(&self, name: &str) -> Result<Option<(Vec<u8>, Origin)>, ClassPathError> {
        let path = self.root.join(name);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some((bytes, Origin::ClassPath(self.root.clone())))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ClassPathError::Io { path, source }),
        }
    }
    fn describe(&self) -> String {
        self.root.display().to_string()
    }
}

/// The boot image first, then the user's entries in order.
#[derive(Default)]
pub struct ClassPath {
    sources: Vec<Box<dyn ClassSource>>,
}

impl ClassPath {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, source: Box<dyn ClassSource>) {
        self.sources.push(source);
    }

    /// Adds the entries of a `-cp` string (`:`-separated directories and jars).
    pub fn push_user_path(&mut self, cp: &str) -> Result<(), ClassPathError> {
        for entry in std::env::split_paths(cp) {
            if entry.as_os_str().is_empty() {
                continue;
            }
            self.push(open_entry(&entry)?);
        }
        Ok(())
    }

    /// The class file of a class, by internal name (`java/lang/String`).
    pub fn find(&self, internal_name: &str) -> Result<Option<(Vec<u8>, Origin)>, ClassPathError> {
        self.resource(&format!("{internal_name}.class"))
    }

    /// A resource by path, from the first source that has it.
    pub fn resource(&self, path: &str) -> Result<Option<(Vec<u8>, Origin)>, ClassPathError> {
        for s in &self.sources {
            if let Some(found) = s.resource(path)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }
}

pub fn open_entry(path: &Path) -> Result<Box<dyn ClassSource>, ClassPathError> {
    if path.is_dir() {
        Ok(Box::new(DirSource::new(path)))
    } else if path.is_file() {
        Ok(Box::new(JarSource::open(path)?))
    } else {
        Err(ClassPathError::Missing(path.to_path_buf()))
    }
}
