//! Finding the user's JDK: `JAVA_HOME`, else the `java` on `PATH` (following symlinks).

use super::ClassPathError;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Jdk {
    pub home: PathBuf,
}

impl Jdk {
    pub fn at(home: &Path) -> Result<Jdk, ClassPathError> {
        if !home.join("lib/modules").is_file() {
            return Err(ClassPathError::NoModules(home.into()));
        }
        Ok(Jdk { home: home.into() })
    }

    pub fn locate() -> Result<Jdk, ClassPathError> {
        if let Some(home) = std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
            return Jdk::at(Path::new(&home));
        }
        let path = std::env::var_os("PATH").ok_or(ClassPathError::NoJdk)?;
        for dir in std::env::split_paths(&path) {
            let java = dir.join("java");
            if java.is_file() {
                let real = std::fs::canonicalize(&java).unwrap_or(java);
                if let Some(home) = real.parent().and_then(Path::parent) {
                    return Jdk::at(home);
                }
            }
        }
        Err(ClassPathError::NoJdk)
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
