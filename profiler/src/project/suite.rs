//! Which test classes a run of a whole suite takes, as Maven's Surefire selects them: every
//! module's (the project's root), one module's (its directory), or those in a folder of a test
//! source root (a package's directory). The command line's `--tests` and the editor's "Profile
//! Tests" on a folder both come here.

use super::surefire::{self, Surefire};
use super::{Build, Module, Project};
use crate::junit::Selection;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("{} is not in a test source root and holds none{}: choose a folder of the tests, a module's directory or the project's", shown(.dir, .root), roots_said(.roots, .root))]
    NotTests { dir: PathBuf, root: PathBuf, roots: Vec<PathBuf> },
    #[error("no test classes in {place}: none of the test sources' classes matches Surefire's includes ({})", includes_said(.includes))]
    NoClasses { place: String, includes: Vec<String> },
    #[error("{place}: {reason}")]
    Surefire { place: String, reason: String },
}

/// A path as the user knows it: relative to the project's root when it is inside it.
fn shown(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => root.display().to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

fn roots_said(roots: &[PathBuf], root: &Path) -> String {
    match roots {
        [] => " (the project has no test source root)".to_string(),
        some => {
            let names: Vec<String> = some.iter().map(|r| shown(r, root)).collect();
            format!(" (the test sources are in {})", names.join(", "))
        }
    }
}

fn includes_said(includes: &[String]) -> String {
    match includes {
        [] => "by default **/Test*.java, **/*Test.java, **/*Tests.java, **/*TestCase.java".to_string(),
        some => some.join(", "),
    }
}

/// Where a suite's test classes are: test source roots, and, for a folder inside one, that folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    /// The test source roots whose classes run (all of them, or the one holding `under`).
    pub test_roots: Vec<PathBuf>,
    /// Only the classes whose source is below this folder of a test root; `None`: every class of
    /// the roots.
    pub under: Option<PathBuf>,
    /// The project's root (what paths are said relative to).
    pub root: PathBuf,
}

impl Scope {
    /// The tests `dir` holds, among `test_roots` (every test source root of the project rooted at
    /// `root`): the project's root takes them all; a directory inside a test root (or the root
    /// itself) the classes below it; any other directory the test roots inside it (a module's
    /// directory, its `src`). A directory that is neither in a test root nor holds one is an error.
    pub fn of_dir(test_roots: &[PathBuf], root: &Path, dir: &Path) -> Result<Scope, SuiteError> {
        let scope = |test_roots: Vec<PathBuf>, under: Option<PathBuf>| Scope { test_roots, under, root: root.into() };
        if dir == root && !test_roots.is_empty() {
            return Ok(scope(test_roots.to_vec(), None));
        }
        // The deepest test root that holds it (a test root nested in another is its own).
        let holding = test_roots.iter().filter(|r| dir.starts_with(r)).max_by_key(|r| r.components().count());
        if let Some(r) = holding {
            let under = (dir != r.as_path()).then(|| dir.to_path_buf());
            return Ok(scope(vec![r.clone()], under));
        }
        let inside: Vec<PathBuf> = test_roots.iter().filter(|r| r.starts_with(dir)).cloned().collect();
        if inside.is_empty() {
            return Err(SuiteError::NotTests { dir: dir.into(), root: root.into(), roots: test_roots.to_vec() });
        }
        Ok(scope(inside, None))
    }

    /// Every test source root of `project` (a plain tree's are given: its layout says them).
    pub fn project_test_roots(project: &Project, plain_test_roots: &[PathBuf]) -> Vec<PathBuf> {
        match project.build {
            Build::Maven => project.modules.iter().flat_map(|m| m.test_sources.iter().cloned()).collect(),
            Build::Plain => plain_test_roots.to_vec(),
        }
    }

    /// The modules whose tests these are (none for a plain tree).
    pub fn modules<'p>(&self, project: &'p Project) -> Vec<&'p Module> {
        project.modules.iter().filter(|m| m.test_sources.iter().any(|r| self.test_roots.contains(r))).collect()
    }

    /// What the run's class path and resources are chosen by: the folder, the one test root,
    /// else the project's root (every module's).
    pub fn anchor(&self) -> PathBuf {
        match (&self.under, self.test_roots.as_slice()) {
            (Some(dir), _) => dir.clone(),
            (None, [one]) => one.clone(),
            _ => self.root.clone(),
        }
    }

    /// The test classes Surefire would run here, with the modules' tag filters: each module's
    /// configuration in `configs` (by `groupId:artifactId`; a plain tree's and a module without
    /// one: Surefire's defaults).
    pub fn selection(&self, project: &Project, configs: &BTreeMap<String, Surefire>) -> Result<Selection, SuiteError> {
        let mut selection = Selection::default();
        let mut places = Vec::new();
        let mut includes = Vec::new();
        let mut classes_of = |roots: &[PathBuf], config: &Surefire, place: String| -> Result<Vec<String>, SuiteError> {
            for i in &config.includes {
                if !includes.contains(i) {
                    includes.push(i.clone());
                }
            }
            surefire::test_classes_in(roots, config, self.under.as_deref())
                .map_err(|reason| SuiteError::Surefire { place, reason })
        };
        match project.build {
            Build::Plain => {
                selection.selectors =
                    classes_of(&self.test_roots, &Surefire::default(), shown(&self.root, &self.root))?;
                places.push(self.root.display().to_string());
            }
            Build::Maven => {
                for m in self.modules(project) {
                    let config = configs.get(&m.id).cloned().unwrap_or_default();
                    let roots: Vec<PathBuf> =
                        m.test_sources.iter().filter(|r| self.test_roots.contains(r)).cloned().collect();
                    selection.selectors.extend(classes_of(&roots, &config, m.id.clone())?);
                    selection.include_tags = selection.include_tags.or(config.groups.clone());
                    selection.exclude_tags = selection.exclude_tags.or(config.excluded_groups.clone());
                    places.push(m.id.clone());
                }
            }
        }
        let place = match &self.under {
            Some(dir) => shown(dir, &self.root),
            None => places.join(", "),
        };
        if selection.selectors.is_empty() {
            return Err(SuiteError::NoClasses { place, includes });
        }
        let n = selection.selectors.len();
        let classes = if n == 1 { "class" } else { "classes" };
        selection.label = match &self.under {
            Some(_) => format!("the tests in {place} ({n} {classes})"),
            None => format!("the tests of {place} ({n} {classes})"),
        };
        Ok(selection)
    }

    /// The source file of each of `selection`'s classes (the first test root that has it).
    pub fn source_files(&self, selection: &Selection) -> Vec<PathBuf> {
        let file = |class: &String| {
            let rel = format!("{}.java", class.replace('.', "/"));
            self.test_roots.iter().map(|r| r.join(&rel)).find(|f| f.is_file())
        };
        selection.selectors.iter().filter_map(file).collect()
    }
}

/// A plain tree's conventional source roots (no build file names them): `src/main/java` and, when
/// it has one beside it, `src/test/java`; else the tree itself, with no test root.
pub fn plain_roots(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    if dir.join("src/main/java").is_dir() {
        let tests = Some(dir.join("src/test/java")).filter(|d| d.is_dir()).into_iter().collect();
        (vec![dir.join("src/main/java")], tests)
    } else {
        (vec![dir.to_path_buf()], Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "class X {}").unwrap();
    }

    /// A reactor of two modules: `core` (tests in two packages, a helper that matches no
    /// pattern) and `app`.
    fn reactor() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        for f in [
            "core/src/test/java/com/acme/core/LedgerTest.java",
            "core/src/test/java/com/acme/core/OrderTest.java",
            "core/src/test/java/com/acme/core/Fixtures.java",
            "core/src/test/java/com/acme/core/io/ReaderTest.java",
            "core/src/main/java/com/acme/core/Ledger.java",
            "app/src/test/java/com/acme/app/ReportTest.java",
        ] {
            touch(&root, f);
        }
        let module = |name: &str| {
            let dir = root.join(name);
            let (main, test) = (vec![dir.join("src/main/java")], vec![dir.join("src/test/java")]);
            Module::with_roots(&format!("com.acme:{name}"), dir, main, test)
        };
        let project = Project {
            root: root.clone(),
            build: Build::Maven,
            modules: vec![module("core"), module("app")],
            libraries: Vec::new(),
            notes: Vec::new(),
            left_out: Vec::new(),
        };
        (dir, project)
    }

    fn scope_of(project: &Project, rel: &str) -> Result<Scope, SuiteError> {
        let roots = Scope::project_test_roots(project, &[]);
        Scope::of_dir(&roots, &project.root, &project.root.join(rel))
    }

    #[test]
    fn a_package_folder_runs_the_test_classes_below_it() {
        let (_dir, project) = reactor();
        let scope = scope_of(&project, "core/src/test/java/com/acme/core").unwrap();
        assert_eq!(scope.test_roots, vec![project.root.join("core/src/test/java")]);
        assert_eq!(scope.modules(&project).iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["com.acme:core"]);
        let selection = scope.selection(&project, &BTreeMap::new()).unwrap();
        assert_eq!(
            selection.selectors,
            ["com.acme.core.LedgerTest", "com.acme.core.OrderTest", "com.acme.core.io.ReaderTest"],
            "the subpackage's class too, never the helper nor another module's"
        );
        assert_eq!(selection.label, "the tests in core/src/test/java/com/acme/core (3 classes)");
        assert_eq!(scope.anchor(), project.root.join("core/src/test/java/com/acme/core"));
        let files = scope.source_files(&selection);
        assert_eq!(files[0], project.root.join("core/src/test/java/com/acme/core/LedgerTest.java"));
        assert_eq!(files.len(), 3);

        let deeper = scope_of(&project, "core/src/test/java/com/acme/core/io").unwrap();
        let selection = deeper.selection(&project, &BTreeMap::new()).unwrap();
        assert_eq!(selection.selectors, ["com.acme.core.io.ReaderTest"]);
        assert_eq!(selection.label, "the tests in core/src/test/java/com/acme/core/io (1 class)");
    }

    #[test]
    fn a_module_or_the_project_runs_all_their_tests() {
        let (_dir, project) = reactor();
        for rel in ["core", "core/src", "core/src/test/java"] {
            let scope = scope_of(&project, rel).unwrap();
            assert_eq!(scope.under, None, "{rel}");
            let selection = scope.selection(&project, &BTreeMap::new()).unwrap();
            assert_eq!(selection.label, "the tests of com.acme:core (3 classes)", "{rel}");
        }
        let all = scope_of(&project, "").unwrap();
        assert_eq!(all.anchor(), project.root);
        let selection = all.selection(&project, &BTreeMap::new()).unwrap();
        assert_eq!(selection.selectors.len(), 4);
        assert_eq!(selection.label, "the tests of com.acme:core, com.acme:app (4 classes)");
    }

    #[test]
    fn surefire_configuration_decides_in_a_folder_too() {
        let (_dir, project) = reactor();
        let config = Surefire {
            includes: vec!["**/*Test.java".into()],
            excludes: vec!["**/Order*".into()],
            excluded_groups: Some("slow".into()),
            ..Surefire::default()
        };
        let configs = BTreeMap::from([("com.acme:core".to_string(), config)]);
        let scope = scope_of(&project, "core/src/test/java/com").unwrap();
        let selection = scope.selection(&project, &configs).unwrap();
        assert_eq!(selection.selectors, ["com.acme.core.LedgerTest", "com.acme.core.io.ReaderTest"]);
        assert_eq!(selection.exclude_tags.as_deref(), Some("slow"));
    }

    #[test]
    fn a_folder_outside_the_test_sources_is_refused_with_where_they_are() {
        let (_dir, project) = reactor();
        for rel in ["core/src/main/java/com/acme", "docs"] {
            let e = scope_of(&project, rel).unwrap_err();
            assert!(matches!(e, SuiteError::NotTests { .. }), "{rel}: {e:?}");
            assert_eq!(
                e.to_string(),
                format!(
                    "{rel} is not in a test source root and holds none (the test sources are in core/src/test/java, \
                     app/src/test/java): choose a folder of the tests, a module's directory or the project's"
                )
            );
        }
        let empty = Project { modules: Vec::new(), ..project.clone() };
        let e = scope_of(&empty, "").unwrap_err();
        assert!(e.to_string().contains("(the project has no test source root)"), "{e}");
    }

    #[test]
    fn a_folder_without_test_classes_says_the_patterns() {
        let (_dir, project) = reactor();
        std::fs::create_dir_all(project.root.join("core/src/test/java/com/acme/empty")).unwrap();
        touch(&project.root, "core/src/test/java/com/acme/empty/Helper.java");
        let scope = scope_of(&project, "core/src/test/java/com/acme/empty").unwrap();
        let e = scope.selection(&project, &BTreeMap::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no test classes in core/src/test/java/com/acme/empty: none of the test sources' classes matches \
             Surefire's includes (by default **/Test*.java, **/*Test.java, **/*Tests.java, **/*TestCase.java)"
        );
    }

    #[test]
    fn a_plain_tree_takes_its_conventional_test_root() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "src/main/java/a/Main.java");
        touch(dir.path(), "src/test/java/a/MainTest.java");
        touch(dir.path(), "src/test/java/b/OtherTest.java");
        let (mains, tests) = plain_roots(dir.path());
        assert_eq!(mains, vec![dir.path().join("src/main/java")]);
        assert_eq!(tests, vec![dir.path().join("src/test/java")]);
        let project = Project::plain(dir.path());
        let roots = Scope::project_test_roots(&project, &tests);
        let scope = Scope::of_dir(&roots, dir.path(), &dir.path().join("src/test/java/a")).unwrap();
        assert!(scope.modules(&project).is_empty());
        let selection = scope.selection(&project, &BTreeMap::new()).unwrap();
        assert_eq!(selection.selectors, ["a.MainTest"]);
        let flat = tempfile::tempdir().unwrap();
        assert_eq!(plain_roots(flat.path()), (vec![flat.path().to_path_buf()], Vec::new()));
    }
}
