//! Maven projects: the reactor's modules read from the poms, their class paths asked of Maven.
//!
//! One Maven run answers for the whole reactor: `compile` (with compiling and resources skipped:
//! the phase is what lets a module's dependency on another module of the reactor resolve) and
//! the dependency plugin's `list` goal, which writes each module's resolved artifacts with their
//! scopes and absolute paths. It runs offline (`-o`: never the network) with the user's own `mvn`,
//! settings and local repository, on a copy of the pom tree inside the cache directory, so that
//! nothing (not even a generator plugin bound before `compile`) writes into the workspace. The
//! answer is cached under a digest of every pom and of `.mvn/`: a changed pom asks Maven again.

use super::{Build, Discovery, Module, Project, ProjectError};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// A module as its pom describes it.
#[derive(Debug, Clone, PartialEq)]
struct Pom {
    id: String,
    /// Relative to the reactor's root ("" for the root itself).
    rel: PathBuf,
    source_dir: Option<String>,
    test_source_dir: Option<String>,
    /// `<build><resources>`' directories (empty: Maven's default).
    resource_dirs: Vec<String>,
    test_resource_dirs: Vec<String>,
}

/// The project at `root` (which has a `pom.xml`), from the cache when no pom changed.
pub fn open(root: &Path, cache: &Path, mvn: &str) -> Result<(Project, Discovery), ProjectError> {
    let started = Instant::now();
    let (poms, broken) = reactor(root)?;
    if let Some((pom, reason)) = broken {
        // Maven's own words for what is wrong with it (it names the line); ours if it has none.
        let mut rels: Vec<PathBuf> = poms.iter().map(|p| p.rel.clone()).collect();
        rels.push(pom.strip_prefix(root).unwrap_or(&pom).parent().map(Path::to_path_buf).unwrap_or_default());
        return Err(match ask_maven(root, cache, mvn, &rels).map(|_| ()) {
            Err(e @ (ProjectError::Maven { .. } | ProjectError::NoMaven(_))) => e,
            _ => ProjectError::BadPom { pom, reason },
        });
    }
    let key = digest(root, &poms, mvn);
    let cached_file = cache.join("maven-project.json");
    if let Some(project) = std::fs::read_to_string(&cached_file)
        .ok()
        .and_then(|text| serde_json::from_str::<Cached>(&text).ok())
        .filter(|c| c.key == key && c.project.root == root)
        .map(|c| c.project)
    {
        return Ok((project, Discovery { took: started.elapsed(), cached: true }));
    }
    let rels: Vec<PathBuf> = poms.iter().map(|p| p.rel.clone()).collect();
    let work = ask_maven(root, cache, mvn, &rels)?;
    let lists = work.path().join("lists");
    let ids: Vec<&str> = poms.iter().map(|p| p.id.as_str()).collect();
    let mut modules = Vec::new();
    for pom in &poms {
        let dir = root.join(&pom.rel);
        let existing = |configured: &Option<String>, default: &str| -> Vec<PathBuf> {
            let d = dir.join(configured.as_deref().unwrap_or(default));
            if d.is_dir() {
                vec![d]
            } else {
                Vec::new()
            }
        };
        let resources = |configured: &[String], default: &str| -> Vec<PathBuf> {
            let dirs: Vec<PathBuf> = match configured {
                [] => vec![dir.join(default)],
                some => some.iter().map(|d| dir.join(d)).collect(),
            };
            dirs.into_iter().filter(|d| d.is_dir()).collect()
        };
        let list = std::fs::read_to_string(lists.join(list_name(&pom.id))).unwrap_or_default();
        let resolved = parse_list(&list);
        let mut module = Module {
            id: pom.id.clone(),
            main_sources: existing(&pom.source_dir, "src/main/java"),
            test_sources: existing(&pom.test_source_dir, "src/test/java"),
            main_resources: resources(&pom.resource_dirs, "src/main/resources"),
            test_resources: resources(&pom.test_resource_dirs, "src/test/resources"),
            dir,
            compile_class_path: Vec::new(),
            test_class_path: Vec::new(),
            reactor_dependencies: Vec::new(),
        };
        for r in resolved {
            if ids.contains(&r.id.as_str()) {
                module.reactor_dependencies.push(r.id);
                continue;
            }
            if matches!(r.scope.as_str(), "compile" | "provided" | "system") {
                module.compile_class_path.push(r.path.clone());
            }
            module.test_class_path.push(r.path);
        }
        modules.push(module);
    }
    let project = Project { root: root.to_path_buf(), build: Build::Maven, modules, libraries: Vec::new() };
    let cached = Cached { key, project };
    // Written whole or not at all (another run may read it meanwhile); a cache that cannot be
    // written only costs the next open a Maven run.
    let _ = tempfile::NamedTempFile::new_in(cache).and_then(|mut f| {
        std::io::Write::write_all(&mut f, serde_json::to_string(&cached).unwrap_or_default().as_bytes())?;
        f.persist(&cached_file).map_err(|e| e.error)
    });
    Ok((cached.project, Discovery { took: started.elapsed(), cached: false }))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Cached {
    key: String,
    project: Project,
}

/// The root of the reactor `dir` belongs to: the outermost directory above it whose pom names the
/// directory below as a module (`dir` itself when none does). A module's own pom is not enough for
/// Maven: its parent and sibling modules are resolved from the reactor.
pub fn reactor_root(dir: &Path) -> PathBuf {
    let mut root = dir.to_path_buf();
    while let Some(parent) = root.parent() {
        let Ok(text) = std::fs::read_to_string(parent.join("pom.xml")) else { break };
        let Ok((_, modules)) = read_pom(&text, PathBuf::new()) else { break };
        let name = root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        if !modules.iter().any(|m| m.trim_end_matches("/pom.xml").trim_end_matches('/') == name) {
            break;
        }
        root = parent.to_path_buf();
    }
    root
}

/// A pom that cannot be read (malformed XML), and why.
type Broken = Option<(PathBuf, String)>;

/// The reactor's poms, the root's first, each module's after the pom that names it; the first
/// pom that cannot be parsed stops the walk.
fn reactor(root: &Path) -> Result<(Vec<Pom>, Broken), ProjectError> {
    let mut out = Vec::new();
    let mut queue = vec![PathBuf::new()];
    while let Some(rel) = queue.pop() {
        let path = root.join(&rel).join("pom.xml");
        if out.iter().any(|p: &Pom| p.rel == rel) {
            continue; // a module named twice (or a cycle)
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| ProjectError::BadPom { pom: path.clone(), reason: e.to_string() })?;
        let (pom, modules) = match read_pom(&text, rel.clone()) {
            Ok(read) => read,
            Err(reason) => return Ok((out, Some((path, reason)))),
        };
        out.push(pom);
        // Reversed onto the stack: modules are visited in the order the pom names them.
        for m in modules.into_iter().rev() {
            let m = m.strip_suffix("/pom.xml").unwrap_or(&m).to_string();
            queue.push(normalise(&rel.join(m)));
        }
    }
    Ok((out, None))
}

/// `a/../b` → `b`, so that a module is known by one path.
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn child<'a, 'i>(node: roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
    node.children().find(|c| c.has_tag_name(name))
}

/// A pom's id, source directories and modules. Malformed XML is Maven's to explain (its message
/// names the line); here only what is needed is read.
fn read_pom(text: &str, rel: PathBuf) -> Result<(Pom, Vec<String>), String> {
    let doc = roxmltree::Document::parse(text).map_err(|e| e.to_string())?;
    let project = doc.root_element();
    let text_of = |node: Option<roxmltree::Node>| node.and_then(|n| n.text()).map(|t| t.trim().to_string());
    let parent = child(project, "parent");
    let artifact = text_of(child(project, "artifactId")).ok_or("it has no artifactId")?;
    let group = text_of(child(project, "groupId"))
        .or_else(|| text_of(parent.and_then(|p| child(p, "groupId"))))
        .ok_or("it has no groupId (nor a parent's)")?;
    let build = child(project, "build");
    let dir = |name: &str| text_of(build.and_then(|b| child(b, name))).filter(|d| !d.contains("${"));
    let modules = child(project, "modules")
        .map(|m| m.children().filter(|c| c.has_tag_name("module")).filter_map(|c| text_of(Some(c))).collect())
        .unwrap_or_default();
    // `<resources><resource><directory>`: the ones named without a property Maven would expand.
    let resource_dirs = |list: &str, item: &str| -> Vec<String> {
        let Some(list) = build.and_then(|b| child(b, list)) else { return Vec::new() };
        list.children()
            .filter(|c| c.has_tag_name(item))
            .filter_map(|r| text_of(child(r, "directory")))
            .filter(|d| !d.contains("${"))
            .collect()
    };
    let pom = Pom {
        id: format!("{group}:{artifact}"),
        rel,
        source_dir: dir("sourceDirectory"),
        test_source_dir: dir("testSourceDirectory"),
        resource_dirs: resource_dirs("resources", "resource"),
        test_resource_dirs: resource_dirs("testResources", "testResource"),
    };
    Ok((pom, modules))
}

/// What decides Maven's answer: the poms, the project's Maven configuration, the `mvn` used (and
/// the cache's format).
fn digest(root: &Path, poms: &[Pom], mvn: &str) -> String {
    // What the cache holds changes with Bloatlens: another version asks Maven again.
    const FORMAT: &str = concat!("project-cache/2 ", env!("CARGO_PKG_VERSION"));
    let mut h = Sha256::new();
    h.update(FORMAT.as_bytes());
    h.update(mvn.as_bytes());
    let extra = [".mvn/maven.config", ".mvn/jvm.config", ".mvn/extensions.xml"];
    let files = poms.iter().map(|p| p.rel.join("pom.xml")).chain(extra.iter().map(PathBuf::from));
    for rel in files {
        h.update(rel.to_string_lossy().as_bytes());
        h.update(std::fs::read(root.join(&rel)).unwrap_or_default());
        h.update([0]);
    }
    if let Some(home) = std::env::var_os("HOME") {
        h.update(std::fs::read(Path::new(&home).join(".m2/settings.xml")).unwrap_or_default());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn list_name(id: &str) -> String {
    format!("{}.list", id.replace(':', "__"))
}

/// Runs Maven once for the reactor on a copy of its pom tree, in a directory of its own (runs at
/// the same time do not share one); returns that directory, the per-module lists in `lists/`.
fn ask_maven(root: &Path, cache: &Path, mvn: &str, modules: &[PathBuf]) -> Result<tempfile::TempDir, ProjectError> {
    let plugin = dependency_plugin(root);
    let (work, _) = maven_on_copy(root, cache, mvn, modules, |command, work| {
        command
            .args(["-q", "compile", "-Dmaven.main.skip=true", "-Dmaven.resources.skip=true"])
            .arg(format!("{plugin}:list"))
            .args(["-DoutputAbsoluteArtifactFilename=true", "-DoutputScope=true", "-DappendOutput=false"])
            .arg(format!("-DoutputFile={}/lists/${{project.groupId}}__${{project.artifactId}}.list", work.display()));
    })?;
    Ok(work)
}

/// Runs `mvn -o -B` with `goals` on a copy of the reactor's pom tree (and `.mvn/`) in a fresh
/// directory of the cache: the directory (the copy is its `poms/`) and Maven's output.
fn maven_on_copy(
    root: &Path,
    cache: &Path,
    mvn: &str,
    modules: &[PathBuf],
    goals: impl FnOnce(&mut Command, &Path),
) -> Result<(tempfile::TempDir, String), ProjectError> {
    let io = |what: &str| {
        let what = what.to_string();
        move |source| ProjectError::Io { what, source }
    };
    std::fs::create_dir_all(cache).map_err(io("creating the cache"))?;
    let work = tempfile::Builder::new().prefix("maven-").tempdir_in(cache).map_err(io("creating the cache"))?;
    let tree = work.path().join("poms");
    for rel in modules {
        let to = tree.join(rel);
        std::fs::create_dir_all(&to).map_err(io("copying the poms"))?;
        std::fs::copy(root.join(rel).join("pom.xml"), to.join("pom.xml")).map_err(io("copying the poms"))?;
    }
    if root.join(".mvn").is_dir() {
        copy_dir(&root.join(".mvn"), &tree.join(".mvn")).map_err(io("copying .mvn"))?;
    }
    let mut command = Command::new(mvn);
    // Maven's own JVM runs for seconds: C1 alone starts it faster (2.2 s against 3.6 s measured), unless
    // the user set its options.
    if std::env::var_os("MAVEN_OPTS").is_none_or(|o| o.is_empty()) {
        command.env("MAVEN_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    }
    command.current_dir(&tree).args(["-o", "-B", "-Dstyle.color=never", "-f"]).arg(tree.join("pom.xml"));
    goals(&mut command, work.path());
    let output = match command.output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ProjectError::NoMaven(mvn.to_string())),
        Err(e) => return Err(ProjectError::Io { what: format!("running {mvn}"), source: e }),
    };
    let text = String::from_utf8_lossy(&output.stdout).to_string() + &String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(ProjectError::Maven { root: root.to_path_buf(), lines: error_lines(&text, &tree, root) });
    }
    Ok((work, text))
}

/// Surefire's configuration of every module, and a note when it could not be read (the tests then
/// run with Surefire's defaults); nothing for a plain tree.
pub fn surefire_or_defaults(
    project: &Project,
    cache: &Path,
    mvn: &str,
) -> (std::collections::BTreeMap<String, super::surefire::Surefire>, Vec<String>) {
    if project.build != Build::Maven {
        return Default::default();
    }
    match surefire(project, cache, mvn) {
        Ok(configs) => (configs, Vec::new()),
        Err(e) => {
            let why = match &e {
                ProjectError::Maven { lines, .. } => {
                    let first = lines.first().map(String::as_str).unwrap_or_default();
                    first.strip_prefix("[ERROR] ").unwrap_or(first).to_string()
                }
                other => other.to_string(),
            };
            let note = format!("Surefire's configuration could not be read, so the tests ran with its defaults: {why}");
            (Default::default(), vec![note])
        }
    }
}

/// Surefire's configuration of every module (by `groupId:artifactId`), as Maven evaluated it
/// ([`super::surefire`]); cached beside the class paths, under the same digest of the poms.
pub fn surefire(
    project: &Project,
    cache: &Path,
    mvn: &str,
) -> Result<std::collections::BTreeMap<String, super::surefire::Surefire>, ProjectError> {
    type Configs = std::collections::BTreeMap<String, super::surefire::Surefire>;
    let root = &project.root;
    let (poms, _) = reactor(root)?;
    let key = digest(root, &poms, mvn);
    let cached_file = cache.join("surefire.json");
    if let Some(configs) = std::fs::read_to_string(&cached_file)
        .ok()
        .and_then(|text| serde_json::from_str::<(String, Configs)>(&text).ok())
        .filter(|(k, _)| *k == key)
        .map(|(_, c)| c)
    {
        return Ok(configs);
    }
    let rels: Vec<PathBuf> = poms.iter().map(|p| p.rel.clone()).collect();
    // The `test` phase with the tests, compiling and resources skipped: Surefire's mojo is
    // configured (the debug log says each parameter) and skips.
    let (work, log) = maven_on_copy(root, cache, mvn, &rels, |command, _| {
        command.args([
            "-X",
            "test",
            "-Dmaven.main.skip=true",
            "-Dmaven.test.skip=true",
            "-Dmaven.resources.skip=true",
            "-Djacoco.skip=true",
        ]);
    })?;
    let configs = super::surefire::parse_debug_log(&log, &work.path().join("poms"), root);
    let _ = tempfile::NamedTempFile::new_in(cache).and_then(|mut f| {
        std::io::Write::write_all(&mut f, serde_json::to_string(&(key, &configs)).unwrap_or_default().as_bytes())?;
        f.persist(&cached_file).map_err(|e| e.error)
    });
    Ok(configs)
}

/// The dependency plugin as `groupId:artifactId:version`, the newest version the project's local
/// repository holds (offline, Maven cannot look a version up), else unversioned.
fn dependency_plugin(root: &Path) -> String {
    const PLUGIN: &str = "org.apache.maven.plugins:maven-dependency-plugin";
    let Some(repo) = local_repository(root) else { return PLUGIN.to_string() };
    let dir = repo.join("org/apache/maven/plugins/maven-dependency-plugin");
    let mut versions: Vec<Vec<u32>> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_string_lossy().to_string();
            let jar = e.path().join(format!("maven-dependency-plugin-{v}.jar"));
            let numbers: Option<Vec<u32>> = v.split('.').map(|n| n.parse().ok()).collect();
            numbers.filter(|_| jar.is_file())
        })
        .collect();
    versions.sort();
    match versions.last() {
        Some(v) => format!("{PLUGIN}:{}", v.iter().map(u32::to_string).collect::<Vec<_>>().join(".")),
        None => PLUGIN.to_string(),
    }
}

/// The local repository Maven uses for the project: `.mvn/maven.config`'s `-Dmaven.repo.local`,
/// else `~/.m2/repository`.
pub fn local_repository(root: &Path) -> Option<PathBuf> {
    let config = std::fs::read_to_string(root.join(".mvn/maven.config")).unwrap_or_default();
    config
        .split_whitespace()
        .find_map(|a| a.strip_prefix("-Dmaven.repo.local=").map(PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".m2/repository")))
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Maven's own error lines (`[ERROR]`, `[FATAL]`), colours stripped and the copy's paths shown
/// as the workspace's, each once; all of its last lines when none is marked.
fn error_lines(text: &str, copy: &Path, root: &Path) -> Vec<String> {
    let (copy, root) = (copy.display().to_string(), root.display().to_string());
    let clean: Vec<String> = text.lines().map(|l| strip_ansi(l).replace(&copy, &root)).collect();
    // Maven's advice on re-running it and its help links say nothing about this project.
    let boilerplate = ["-e switch", "-X switch", "For more information about the errors", "[Help "];
    let mut seen = std::collections::HashSet::new();
    let marked: Vec<String> = clean
        .iter()
        .filter(|l| level_of(l).is_some())
        .map(|l| undoubled(l.split(" -> [Help").next().unwrap_or(l)).trim_end().to_string())
        .filter(|l| l != "[ERROR]" && !boilerplate.iter().any(|b| l.contains(b)))
        // Maven says a broken pom's error twice: as it reads the pom, and in its summary.
        .filter(|l| seen.insert(l[level_of(l).map_or(0, str::len)..].trim().to_string()))
        .take(20)
        .collect();
    if !marked.is_empty() {
        return marked;
    }
    let start = clean.len().saturating_sub(20);
    clean[start..].iter().filter(|l| !l.trim().is_empty()).cloned().collect()
}

/// The level a Maven line starts with: `[ERROR]` or `[FATAL]`.
fn level_of(line: &str) -> Option<&'static str> {
    ["[ERROR]", "[FATAL]"].into_iter().find(|level| line.starts_with(level))
}

/// A line without the level Maven prints twice when it logs a message that already has one
/// (`[ERROR] [ERROR] Some problems were encountered…`): the inner level is kept.
fn undoubled(line: &str) -> &str {
    let mut line = line;
    while let Some(level) = level_of(line) {
        let rest = line[level.len()..].trim_start_matches(' ');
        if level_of(rest).is_none() {
            break;
        }
        line = rest;
    }
    line
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// One artifact of a `dependency:list` output.
#[derive(Debug, PartialEq)]
struct Resolved {
    id: String,
    scope: String,
    path: PathBuf,
}

/// Lines like `   g:a:jar[:classifier]:v:scope:/abs/path.jar[ -- module m [auto]]`.
fn parse_list(text: &str) -> Vec<Resolved> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let at = line.find(":/")?;
            let (coords, path) = (&line[..at], &line[at + 1..]);
            // Newer plugins mark an optional dependency after its path: `….jar (optional)`.
            let path = path.split(" -- ").next()?.trim();
            let path = path.strip_suffix("(optional)").map_or(path, str::trim_end);
            let parts: Vec<&str> = coords.split(':').collect();
            if parts.len() < 5 {
                return None;
            }
            Some(Resolved {
                id: format!("{}:{}", parts[0], parts[1]),
                scope: parts[parts.len() - 1].to_string(),
                path: PathBuf::from(path),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_lines_give_coordinates_scope_and_path() {
        let text = "\nThe following files have been resolved:\n   org.apache.commons:commons-lang3:jar:3.12.0:compile:/repo/commons-lang3-3.12.0.jar -- module org.apache.commons.lang3\n   com.acme:core:jar:1.0:compile:/x/core/target/classes\n   org.junit.jupiter:junit-jupiter-api:jar:5.9.2:test:/repo/junit-jupiter-api.jar -- module org.junit.jupiter.api [auto]\n   g:a:jar:tests:1.0:test:/repo/a-tests.jar\n\n";
        let r = parse_list(text);
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].id, "org.apache.commons:commons-lang3");
        assert_eq!(r[0].scope, "compile");
        assert_eq!(r[0].path, PathBuf::from("/repo/commons-lang3-3.12.0.jar"));
        assert_eq!(r[1].path, PathBuf::from("/x/core/target/classes"));
        assert_eq!(r[2].scope, "test");
        assert_eq!(r[3].path, PathBuf::from("/repo/a-tests.jar"));
        assert!(parse_list("none\n").is_empty());
        let optional = parse_list("   com.google.re2j:re2j:jar:1.8:compile:/repo/re2j-1.8.jar (optional) -- module re2j\n   com.google.re2j:re2j:jar:1.8:compile:/repo/re2j-1.8.jar (optional)\n");
        assert!(optional.iter().all(|r| r.path == Path::new("/repo/re2j-1.8.jar")), "{optional:?}");
    }

    #[test]
    fn poms_give_ids_modules_and_source_directories() {
        let parent = r#"<project xmlns="http://maven.apache.org/POM/4.0.0"><groupId>g</groupId><artifactId>root</artifactId>
            <modules><module>core</module><module>app/pom.xml</module></modules></project>"#;
        let (pom, modules) = read_pom(parent, PathBuf::new()).unwrap();
        assert_eq!(pom.id, "g:root");
        assert_eq!(modules, vec!["core", "app/pom.xml"]);
        let child = r#"<project><parent><groupId>g</groupId><artifactId>root</artifactId></parent><artifactId>core</artifactId>
            <build><sourceDirectory>src/java</sourceDirectory><testSourceDirectory>${basedir}/t</testSourceDirectory></build></project>"#;
        let (pom, modules) = read_pom(child, PathBuf::from("core")).unwrap();
        assert_eq!(pom.id, "g:core", "the groupId is the parent's");
        assert_eq!(pom.source_dir.as_deref(), Some("src/java"));
        assert_eq!(pom.test_source_dir, None, "a property is Maven's to expand: the default is used");
        assert!(pom.resource_dirs.is_empty());
        let with_resources = r#"<project><groupId>g</groupId><artifactId>r</artifactId><build>
            <resources><resource><directory>conf</directory></resource><resource><directory>${x}/y</directory></resource></resources>
            <testResources><testResource><directory>src/test/data</directory></testResource></testResources></build></project>"#;
        let (pom, _) = read_pom(with_resources, PathBuf::new()).unwrap();
        assert_eq!(pom.resource_dirs, vec!["conf"]);
        assert_eq!(pom.test_resource_dirs, vec!["src/test/data"]);
        assert!(modules.is_empty());
        assert!(read_pom("<project><artifactId>x</artifactI></project>", PathBuf::new()).is_err());
    }

    #[test]
    fn a_module_directory_belongs_to_its_reactor() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let pom = |modules: &str| {
            format!("<project><groupId>g</groupId><artifactId>a</artifactId><modules>{modules}</modules></project>")
        };
        std::fs::create_dir_all(root.join("app/web")).unwrap();
        std::fs::write(root.join("pom.xml"), pom("<module>app</module>")).unwrap();
        std::fs::write(root.join("app/pom.xml"), pom("<module>web/pom.xml</module>")).unwrap();
        std::fs::write(root.join("app/web/pom.xml"), pom("")).unwrap();
        assert_eq!(reactor_root(&root.join("app/web")), root);
        std::fs::write(root.join("pom.xml"), pom("<module>other</module>")).unwrap();
        assert_eq!(
            reactor_root(&root.join("app/web")),
            root.join("app"),
            "a pom that does not name it is not its reactor"
        );
    }

    #[test]
    fn maven_errors_keep_their_lines_without_colours_and_with_the_workspace_paths() {
        let text = "\x1b[1;31m[ERROR]\x1b[m Non-parseable POM /cache/poms/app/pom.xml: end tag -> [Help 2]\n[ERROR] \nother\n[ERROR] Re-run Maven using the -X switch to enable full debug logging.\n";
        let lines = error_lines(text, Path::new("/cache/poms"), Path::new("/ws"));
        assert_eq!(lines, vec!["[ERROR] Non-parseable POM /ws/app/pom.xml: end tag"]);
        assert_eq!(error_lines("a\n\nb\n", Path::new("/c"), Path::new("/w")), vec!["a", "b"]);
    }

    /// What `mvn -o -B` printed (Maven 3.8) for a pom whose tags do not match: the level doubled
    /// on its first line, the parse error said twice.
    #[test]
    fn maven_errors_on_a_broken_pom_appear_once_each_with_one_level() {
        let text = "\x1b[0m\x1b[0m[INFO] Scanning for projects...
[ERROR] [ERROR] Some problems were encountered while processing the POMs:
[FATAL] Non-parseable POM /cache/poms/pom.xml: end tag name </property> must match start tag name <properties> from line 11 (position: TEXT seen ...</project.build.sourceEncoding>\\n  </property>... @15:14)  @ line 15, column 14
 @ \n[ERROR] The build could not read 1 project -> [Help 1]
[ERROR]   \n[ERROR]   The project  (/cache/poms/pom.xml) has 1 error
[ERROR]     Non-parseable POM /cache/poms/pom.xml: end tag name </property> must match start tag name <properties> from line 11 (position: TEXT seen ...</project.build.sourceEncoding>\\n  </property>... @15:14)  @ line 15, column 14 -> [Help 2]
[ERROR] \n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.
[ERROR] Re-run Maven using the -X switch to enable full debug logging.
[ERROR] \n[ERROR] For more information about the errors and possible solutions, please read the following articles:
[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/ProjectBuildingException
[ERROR] [Help 2] http://cwiki.apache.org/confluence/display/MAVEN/ModelParseException
\x1b[0m\x1b[0m";
        let lines = error_lines(text, Path::new("/cache/poms"), Path::new("/ws"));
        assert_eq!(
            lines,
            vec![
                "[ERROR] Some problems were encountered while processing the POMs:".to_string(),
                "[FATAL] Non-parseable POM /ws/pom.xml: end tag name </property> must match start tag name <properties> from line 11 (position: TEXT seen ...</project.build.sourceEncoding>\\n  </property>... @15:14)  @ line 15, column 14".to_string(),
                "[ERROR] The build could not read 1 project".to_string(),
                "[ERROR]   The project  (/ws/pom.xml) has 1 error".to_string(),
            ]
        );
        assert_eq!(undoubled("[ERROR] [FATAL] x"), "[FATAL] x");
        assert_eq!(undoubled("[ERROR]   indented"), "[ERROR]   indented");
    }
}
