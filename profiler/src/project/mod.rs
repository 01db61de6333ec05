//! A workspace's build: where its sources are, and the class path they compile and run against.
//!
//! A workspace with a `pom.xml` at its root is a Maven project: its reactor's modules are read
//! from the poms, and Maven itself (the user's `mvn`, settings and local repository, offline)
//! says each module's compile and test class paths ([`maven`]). Any other workspace is a plain
//! source tree whose libraries are the jars in `lib/`. Either way the libraries are library code:
//! findings are about the workspace's sources.

pub mod build_cache;
pub mod maven;
pub mod mojo_log;
pub mod suite;
pub mod surefire;

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a workspace is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Build {
    Maven,
    Plain,
}

/// A workspace's sources and libraries.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Project {
    pub root: PathBuf,
    pub build: Build,
    /// Maven's modules, in the reactor's order; empty for a plain tree.
    pub modules: Vec<Module>,
    /// A plain tree's libraries (`lib/*.jar`).
    pub libraries: Vec<PathBuf>,
    /// What the user should know about how the project was read (a module left out).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Artifact ids of the reactor's modules Maven could not resolve offline: left out.
    #[serde(default)]
    pub left_out: Vec<String>,
}

/// One module of a Maven reactor.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Module {
    /// `groupId:artifactId`.
    pub id: String,
    pub dir: PathBuf,
    /// `src/main/java` (or the pom's `sourceDirectory`), when it exists, then the other roots the
    /// compiler's executions name (a build helper's, a profile's) and generated ones.
    pub main_sources: Vec<PathBuf>,
    /// `src/test/java` (or the pom's `testSourceDirectory`), when it exists, and the same.
    pub test_sources: Vec<PathBuf>,
    /// `src/main/resources` (or the pom's resource directories), when they exist: on the class path
    /// as they are (Maven's filtering of `${…}` in them is not done).
    #[serde(default)]
    pub main_resources: Vec<PathBuf>,
    /// `src/test/resources` (or the pom's test resource directories), when they exist.
    #[serde(default)]
    pub test_resources: Vec<PathBuf>,
    /// Libraries of the compile class path (compile, provided and system scopes), as Maven resolved them.
    pub compile_class_path: Vec<PathBuf>,
    /// Libraries of the test class path (every scope).
    pub test_class_path: Vec<PathBuf>,
    /// The reactor's modules this one depends on (`groupId:artifactId`): their classes are ours.
    pub reactor_dependencies: Vec<String>,
    /// The compiler plugin's `includes`/`excludes` and `testIncludes`/`testExcludes`: which sources
    /// of the roots Maven compiles.
    #[serde(default)]
    pub source_filter: SourceFilter,
    /// The compiler plugin's `parameters` (as the pom or a parent sets it, Spring Boot's does):
    /// javac keeps parameter names for reflection.
    #[serde(default)]
    pub parameters: bool,
    /// Multi-release overlays (jsoup's `src/main/java11`): compiled after the main code, against it,
    /// into `META-INF/versions/N` of its output, as the compiler plugin's `multiReleaseOutput` does.
    #[serde(default)]
    pub overlays: Vec<Overlay>,
}

/// A multi-release overlay: the roots compiled for one release into `META-INF/versions/<release>`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Overlay {
    pub release: String,
    pub roots: Vec<PathBuf>,
}

/// Which files of its source roots a module compiles: patterns (`**/*Benchmark*`) matched as the
/// compiler plugin matches them, against a file's path relative to its root. Empty includes: all.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SourceFilter {
    pub includes: Vec<String>,
    pub excludes: Vec<String>,
    pub test_includes: Vec<String>,
    pub test_excludes: Vec<String>,
}

impl Module {
    /// A module of these roots and nothing else (tests build their projects with it).
    #[cfg(test)]
    pub(crate) fn with_roots(id: &str, dir: PathBuf, main_sources: Vec<PathBuf>, test_sources: Vec<PathBuf>) -> Module {
        Module {
            id: id.to_string(),
            dir,
            main_sources,
            test_sources,
            main_resources: Vec::new(),
            test_resources: Vec::new(),
            compile_class_path: Vec::new(),
            test_class_path: Vec::new(),
            reactor_dependencies: Vec::new(),
            source_filter: SourceFilter::default(),
            parameters: false,
            overlays: Vec::new(),
        }
    }

    /// Whether Maven compiles `file`, a source under one of this module's roots (a file outside
    /// them: yes, it is not this module's to filter).
    pub fn compiles(&self, file: &Path) -> bool {
        let f = &self.source_filter;
        let (roots, includes, excludes) = match self.test_sources.iter().any(|r| file.starts_with(r)) {
            true => (&self.test_sources, &f.test_includes, &f.test_excludes),
            false => (&self.main_sources, &f.includes, &f.excludes),
        };
        let Some(rel) = roots.iter().find_map(|r| file.strip_prefix(r).ok()) else { return true };
        let matches = |patterns: &[String]| patterns.iter().any(|p| ant_match(p, rel));
        (includes.is_empty() || matches(includes)) && !matches(excludes)
    }
}

/// An Ant-style pattern as Maven's source scanners match it: `**` any directories, `*` and `?`
/// within one name; a pattern ending in `/` means everything below.
fn ant_match(pattern: &str, rel: &Path) -> bool {
    let mut pattern = pattern.trim().replace('\\', "/");
    if pattern.ends_with('/') {
        pattern.push_str("**");
    }
    globset::GlobBuilder::new(&pattern).literal_separator(true).build().is_ok_and(|g| g.compile_matcher().is_match(rel))
}

/// How the project was found: for the log, and the closing measurements.
#[derive(Debug, Clone, Copy)]
pub struct Discovery {
    pub took: Duration,
    /// The class paths came from the cache (no pom changed since Maven was last asked).
    pub cached: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error("Maven was not found (`{0}`): install Maven or set the path of `mvn` in the settings")]
    NoMaven(String),
    #[error("{pom} is not a readable Maven pom: {reason}")]
    BadPom { pom: PathBuf, reason: String },
    /// Maven ran and failed: its own error lines.
    #[error("Maven could not resolve the class paths of {root}:\n{}{}", lines.join("\n"), offline_hint(lines))]
    Maven {
        root: PathBuf,
        lines: Vec<String>,
        /// The artifact id of the module Maven was building when it failed, when it said.
        failed_in: Option<String>,
    },
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
}

/// Bloatlens asks Maven offline: when what failed is something never downloaded, say how to get it.
fn offline_hint(lines: &[String]) -> &'static str {
    if lines.iter().any(|l| l.contains("offline mode") || l.contains("has not been downloaded")) {
        "\n(Bloatlens runs Maven offline, never fetching anything itself: run `mvn dependency:build-classpath` once, online, in this project to download what it needs)"
    } else {
        ""
    }
}

impl Project {
    /// The workspace at `root`: Maven when `root/pom.xml` exists, else a plain tree.
    /// `cache` is where Maven's answers are kept (outside the workspace).
    pub fn open(root: &Path, cache: &Path, mvn: &str) -> Result<(Project, Discovery), ProjectError> {
        if root.join("pom.xml").is_file() {
            maven::open(root, cache, mvn)
        } else {
            let started = std::time::Instant::now();
            Ok((Project::plain(root), Discovery { took: started.elapsed(), cached: false }))
        }
    }

    /// A plain tree: its libraries are the jars in `lib/` (sorted, so runs are repeatable).
    pub fn plain(root: &Path) -> Project {
        let mut libraries: Vec<PathBuf> = std::fs::read_dir(root.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jar"))
            .collect();
        libraries.sort();
        Project {
            root: root.to_path_buf(),
            build: Build::Plain,
            modules: Vec::new(),
            libraries,
            notes: Vec::new(),
            left_out: Vec::new(),
        }
    }

    /// The Maven repositories where a test launcher's missing parts are looked for.
    pub fn repositories(&self) -> Vec<PathBuf> {
        maven::local_repository(&self.root).filter(|r| r.is_dir()).into_iter().collect()
    }

    /// Every source root of every module, main before test (empty for a plain tree: its roots
    /// follow from each file's package).
    pub fn source_roots(&self) -> Vec<PathBuf> {
        let mains = self.modules.iter().flat_map(|m| m.main_sources.iter());
        let tests = self.modules.iter().flat_map(|m| m.test_sources.iter());
        mains.chain(tests).cloned().collect()
    }

    /// The module whose sources hold `file`.
    pub fn module_of(&self, file: &Path) -> Option<&Module> {
        self.modules.iter().find(|m| m.main_sources.iter().chain(&m.test_sources).any(|r| file.starts_with(r)))
    }

    /// Whether `file` is test code (under a module's test sources).
    pub fn is_test_source(&self, file: &Path) -> bool {
        self.modules.iter().any(|m| m.test_sources.iter().any(|r| file.starts_with(r)))
    }

    /// The resource directories a run from `file` sees: its module's test and main resources and
    /// those of the modules it depends on; for a file outside every module, every module's.
    pub fn resources_for(&self, file: &Path) -> Vec<PathBuf> {
        match self.module_of(file) {
            Some(m) => {
                let deps = self.modules.iter().filter(|d| m.reactor_dependencies.contains(&d.id));
                let theirs = deps.flat_map(|d| d.main_resources.iter());
                m.test_resources.iter().chain(&m.main_resources).chain(theirs).cloned().collect()
            }
            None => {
                self.modules.iter().flat_map(|m| m.test_resources.iter().chain(&m.main_resources)).cloned().collect()
            }
        }
    }

    /// The libraries `file` compiles and runs against: its module's test class path (a superset
    /// of the compile one), with the modules' it depends on; for a file outside every module
    /// (or a plain tree) every module's, then `lib/`. The modules' own classes are compiled from
    /// source, so they are never here.
    pub fn libraries_for(&self, file: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        let mut add = |p: &PathBuf| {
            if !out.contains(p) {
                out.push(p.clone());
            }
        };
        match self.module_of(file) {
            Some(m) => {
                m.test_class_path.iter().for_each(&mut add);
                for dep in self.modules.iter().filter(|d| m.reactor_dependencies.contains(&d.id)) {
                    dep.compile_class_path.iter().for_each(&mut add);
                }
            }
            None => self.modules.iter().flat_map(|m| &m.test_class_path).for_each(&mut add),
        }
        self.libraries.iter().for_each(&mut add);
        out
    }
}

/// Where what Bloatlens learns about the project at `root` is kept between runs (Maven's class
/// paths, the test runner): `$XDG_CACHE_HOME/bloatlens/…`, else `~/.cache/bloatlens/…`, else
/// `bloatlens-<uid>` in the temp dir; never inside the workspace. Created private to the user
/// ([`crate::private_dir`]): what Bloatlens compiles and runs from there is only its own.
pub fn cache_dir(root: &Path) -> std::io::Result<PathBuf> {
    use sha2::{Digest, Sha256};
    let base = cache_base()?;
    let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
    let name = root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    crate::private_dir::ensured(base.join(format!("{name}-{}", &format!("{digest:x}")[..16])))
}

/// Where Bloatlens keeps what it learns between runs, private to the user (see [`cache_dir`]):
/// one directory per project below it, and what is the machine's rather than a project's (the
/// warm compiler's class archive).
pub fn cache_base() -> std::io::Result<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(|c| PathBuf::from(c).join("bloatlens"))
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache").join("bloatlens")))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("bloatlens-{}", crate::private_dir::user_id())));
    crate::private_dir::ensure(&base)?;
    Ok(base)
}

/// [`cache_dir`], its failure said as a [`ProjectError`].
pub fn open_cache_dir(root: &Path) -> Result<PathBuf, ProjectError> {
    cache_dir(root).map_err(|source| ProjectError::Io { what: "the cache directory".into(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_tree_takes_its_jars_from_lib() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("lib")).unwrap();
        for name in ["b.jar", "a.jar", "notes.txt"] {
            std::fs::write(dir.path().join("lib").join(name), "").unwrap();
        }
        let p = Project::plain(dir.path());
        assert_eq!(p.build, Build::Plain);
        assert_eq!(p.libraries, vec![dir.path().join("lib/a.jar"), dir.path().join("lib/b.jar")]);
        assert_eq!(p.libraries_for(&dir.path().join("src/Main.java")), p.libraries);
        assert!(p.source_roots().is_empty());
    }
}
