//! Finding the user's JDK: the one named, else `JAVA_HOME`, else the `java` on `PATH` (following
//! symlinks). Errors say where the path came from.

use super::ClassPathError;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Jdk {
    pub home: PathBuf,
    /// Where it was found: named by the user, `JAVA_HOME` or `PATH`.
    pub origin: &'static str,
    /// Set when `JAVA_HOME` named no JDK and the one on `PATH` is used instead: why.
    pub warning: Option<String>,
}

impl Jdk {
    /// The JDK at `home`, named by the user (a flag or a setting).
    pub fn at(home: &Path) -> Result<Jdk, ClassPathError> {
        Jdk::from(home, "the --jdk flag or the bloatlens.jdkPath setting")
    }

    fn from(home: &Path, origin: &'static str) -> Result<Jdk, ClassPathError> {
        if !home.join("lib/modules").is_file() {
            return Err(ClassPathError::NoModules { home: home.into(), origin });
        }
        Ok(Jdk { home: home.into(), origin, warning: None })
    }

    /// `JAVA_HOME`'s JDK, else the one whose `java` is on `PATH` (with a warning when `JAVA_HOME`
    /// was set but is no JDK).
    pub fn locate() -> Result<Jdk, ClassPathError> {
        let from_java_home = std::env::var_os("JAVA_HOME")
            .filter(|h| !h.is_empty())
            .map(|home| Jdk::from(Path::new(&home), "JAVA_HOME"));
        let bad_java_home = match from_java_home {
            Some(Ok(jdk)) => return Ok(jdk),
            Some(Err(e)) => Some(e),
            None => None,
        };
        match (Jdk::on_path(), bad_java_home) {
            (Some(mut jdk), Some(e)) => {
                jdk.warning = Some(format!("{e}; using the JDK of the `java` on PATH ({})", jdk.home.display()));
                Ok(jdk)
            }
            (Some(jdk), None) => Ok(jdk),
            (None, Some(e)) => Err(e),
            (None, None) => Err(ClassPathError::NoJdk),
        }
    }

    fn on_path() -> Option<Jdk> {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).map(|dir| dir.join("java")).filter(|java| java.is_file()).find_map(|java| {
            let real = std::fs::canonicalize(&java).unwrap_or(java);
            Jdk::from(real.parent()?.parent()?, "PATH").ok()
        })
    }

    pub fn modules(&self) -> PathBuf {
        self.home.join("lib/modules")
    }

    /// `JAVA_VERSION` from the JDK's `release` file, e.g. "17.0.15".
    pub fn version(&self) -> Option<String> {
        let release = std::fs::read_to_string(self.home.join("release")).ok()?;
        release.lines().find_map(|l| l.strip_prefix("JAVA_VERSION=")).map(|v| v.trim_matches('"').to_string())
    }
}
