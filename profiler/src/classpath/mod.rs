//! Where the boot loader's class bytes come from: the JDK's own `lib/modules` image. The class
//! path is the JDK's application loader's (Java code); [`check_entry`] only diagnoses it.

pub mod jdk;
pub mod jimage;

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
    #[error("the JDK at {} (from {origin}) has no lib/modules (a JDK 9 or newer is required)", home.display())]
    NoModules { home: PathBuf, origin: &'static str },
}

/// Where a class came from: the JDK's module (for stack traces) or the user's class path entry
/// (a directory or jar: its code source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A module of the JDK's runtime image.
    Module(String),
    /// A directory of the class path: the program's own compiled code.
    ClassPath(Arc<Path>),
    /// A jar of the class path: a library, whatever the program does with it.
    Jar(Arc<Path>),
    /// Defined at run time from bytes with no file behind them (generated classes).
    Generated,
}

/// Whether a class is the user's code: the code whose source is in the workspace. The JDK, every
/// jar and classes made at run time are libraries; a class path directory is the user's when no
/// source roots are given (a program compiled by hand), else only the classes whose source file
/// (`package/SourceFile`) lies under one of `source_roots`.
pub fn is_user_code(origin: &Origin, class_name: &str, source_file: Option<&str>, source_roots: &[PathBuf]) -> bool {
    if !matches!(origin, Origin::ClassPath(_)) {
        return false;
    }
    if source_roots.is_empty() {
        return true;
    }
    let Some(file) = source_file else { return false };
    let package = class_name.rsplit_once('/').map_or("", |(p, _)| p);
    source_roots.iter().any(|root| root.join(package).join(file).is_file())
}

/// Where a user class's source file is: `package/SourceFile` under one of `source_roots`, or with
/// no source roots, next to the class in its class path directory (a program compiled in place).
/// `None` for libraries and where the file is not found.
pub fn source_path(
    origin: &Origin,
    class_name: &str,
    source_file: Option<&str>,
    source_roots: &[PathBuf],
) -> Option<PathBuf> {
    let Origin::ClassPath(dir) = origin else { return None };
    let file = source_file?;
    let package = class_name.rsplit_once('/').map_or("", |(p, _)| p);
    let at = |root: &Path| Some(root.join(package).join(file)).filter(|p| p.is_file());
    if source_roots.is_empty() {
        return at(dir);
    }
    source_roots.iter().find_map(|r| at(r))
}

/// Why a class path entry cannot hold classes (it does not exist, or is a file that is not a jar),
/// for the message when the main class is not found: the JDK's loader skips such entries silently.
pub fn check_entry(path: &Path) -> Result<(), ClassPathError> {
    if path.is_dir() {
        return Ok(());
    }
    if !path.is_file() {
        return Err(ClassPathError::Missing(path.to_path_buf()));
    }
    let file = std::fs::File::open(path).map_err(|source| ClassPathError::Io { path: path.into(), source })?;
    zip::ZipArchive::new(file).map_err(|e| ClassPathError::BadJar { path: path.into(), reason: e.to_string() })?;
    Ok(())
}
