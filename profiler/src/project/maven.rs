//! Maven projects: the reactor's modules read from the poms, their class paths asked of Maven.
//!
//! One Maven run answers for the whole reactor: `test-compile` (with compiling, test compiling
//! and resources skipped: the phase is what lets a module's dependency on another module of the
//! reactor resolve, and runs the plugins that add or generate sources) and the dependency plugin's
//! `list` goal, which writes each module's resolved artifacts with their scopes and absolute paths.
//! Its debug log (`-X`) says each compiler execution's source roots as Maven evaluated them: a
//! build helper's extra roots, a multi-release overlay's apart, profiles included ([`super::mojo_log`]).
//! It runs offline (`-o`: never the network) with the user's own `mvn`,
//! settings and local repository, on a copy of the project inside the cache directory (its files
//! but build outputs, version control and test data: what plugins bound before `compile` read,
//! such as checkstyle's configuration or a template), so that nothing (not even a generator plugin)
//! writes into the workspace. Sources a generator made in the copy (`target/generated-sources`,
//! `target/generated-test-sources`, a template expanded into the source tree) are kept in the cache
//! and compiled with their module.
//! The answer is cached under a digest of every pom and of `.mvn/`: a changed pom asks Maven again.

use super::{Build, Discovery, Module, Overlay, Project, ProjectError};
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
    source_filter: super::SourceFilter,
}

/// The project at `root` (which has a `pom.xml`), from the cache when no pom changed.
pub fn open(root: &Path, cache: &Path, mvn: &str) -> Result<(Project, Discovery), ProjectError> {
    let started = Instant::now();
    let (poms, broken) = reactor(root)?;
    if let Some((pom, reason)) = broken {
        // Maven's own words for what is wrong with it (it names the line); ours if it has none.
        let mut rels: Vec<PathBuf> = poms.iter().map(|p| p.rel.clone()).collect();
        rels.push(pom.strip_prefix(root).unwrap_or(&pom).parent().map(Path::to_path_buf).unwrap_or_default());
        return Err(match ask_maven(root, cache, mvn, &rels, &[]).map(|_| ()) {
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
    // A module Maven cannot resolve offline is left out (said in the project's notes), and the
    // reactor asked again without it: the other modules' tests need not wait for it.
    let ((work, log), left_out) =
        leaving_out_failures(Vec::new(), |excluded| ask_maven(root, cache, mvn, &rels, excluded))?;
    let listed =
        super::mojo_log::compile_source_roots(&super::mojo_log::mojo_runs(&log, &work.path().join("poms"), root));
    let notes = left_out
        .iter()
        .map(|(artifact, line)| {
            let why = line.trim_start_matches("[ERROR]").trim();
            format!("module {artifact} left out (its sources are not compiled, its tests not run): {why}")
        })
        .collect();
    let lists = work.path().join("lists");
    let kept: Vec<&Pom> =
        poms.iter().filter(|p| !left_out.iter().any(|(a, _)| p.id.ends_with(&format!(":{a}")))).collect();
    let ids: Vec<&str> = kept.iter().map(|p| p.id.as_str()).collect();
    let mut modules = Vec::new();
    for pom in kept {
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
        // The pom's roots, then those the compiler's executions name (a build helper's, a profile's)
        // that are in the workspace; build outputs come from Maven's copy.
        let roots = listed.get(&pom.id).cloned().unwrap_or_default();
        let with_listed = |mut found: Vec<PathBuf>, listed: &[String]| {
            for extra in listed.iter().map(PathBuf::from) {
                if extra.is_dir() && !extra.starts_with(dir.join("target")) && !found.contains(&extra) {
                    found.push(extra);
                }
            }
            found
        };
        let mut main_sources = with_listed(existing(&pom.source_dir, "src/main/java"), &roots.main);
        let mut test_sources = with_listed(existing(&pom.test_source_dir, "src/test/java"), &roots.test);
        let copy = work.path().join("poms").join(&pom.rel);
        let generated = cache.join("generated").join(list_name(&pom.id).trim_end_matches(".list"));
        let _ = std::fs::remove_dir_all(&generated);
        main_sources.extend(keep_generated_sources(&copy, &dir, &main_sources, &generated, Scope::Main));
        test_sources.extend(keep_generated_sources(&copy, &dir, &test_sources, &generated, Scope::Test));
        let overlays = roots
            .overlays
            .iter()
            .map(|(release, listed)| Overlay { release: release.clone(), roots: with_listed(Vec::new(), listed) })
            .filter(|o| !o.roots.is_empty())
            .collect();
        let mut module = Module {
            id: pom.id.clone(),
            overlays,
            main_sources,
            test_sources,
            main_resources: resources(&pom.resource_dirs, "src/main/resources"),
            test_resources: resources(&pom.test_resource_dirs, "src/test/resources"),
            dir,
            compile_class_path: Vec::new(),
            test_class_path: Vec::new(),
            reactor_dependencies: Vec::new(),
            source_filter: pom.source_filter.clone(),
            parameters: compiler_parameters(&root.join(&pom.rel).join("pom.xml"), local_repository(root).as_deref()),
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
    let left_out = left_out.into_iter().map(|(a, _)| a).collect();
    let project =
        Project { root: root.to_path_buf(), build: Build::Maven, modules, libraries: Vec::new(), notes, left_out };
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

/// The module whose sources hold `dir` (a folder of its tests, `src/test/java/com/acme`): the
/// nearest directory above it with a `pom.xml` whose `src` holds it; `dir` itself when it has a
/// pom or no such module holds it.
pub fn module_dir(dir: &Path) -> PathBuf {
    let holding = dir.ancestors().skip(1).find(|a| a.join("pom.xml").is_file() && dir.starts_with(a.join("src")));
    holding.unwrap_or(dir).to_path_buf()
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

/// Runs `attempt` with modules left out of the reactor (artifact ids: `left_out`'s first, then
/// each module a failed attempt names, a few at most): what it gave, and the modules left out
/// with the Maven line that said why.
fn leaving_out_failures<T>(
    mut left_out: Vec<(String, String)>,
    mut attempt: impl FnMut(&[&str]) -> Result<T, ProjectError>,
) -> Result<(T, Vec<(String, String)>), ProjectError> {
    loop {
        let excluded: Vec<&str> = left_out.iter().map(|(a, _)| a.as_str()).collect();
        match attempt(&excluded) {
            Ok(done) => return Ok((done, left_out)),
            Err(ProjectError::Maven { root, lines, failed_in }) => {
                let named = lines.iter().find_map(|l| failed_project(l).map(|a| (a, l.clone())));
                // An error that names no project (a plugin not resolved): the module being built.
                let first = lines.first().cloned().unwrap_or_default();
                let failing = named.or_else(|| failed_in.clone().map(|a| (a, first)));
                match failing {
                    // A module of the reactor (a profile's too), each once, a few at most.
                    Some((artifact, line)) if left_out.len() < 8 && !excluded.contains(&artifact.as_str()) => {
                        left_out.push((artifact, line));
                    }
                    _ => return Err(ProjectError::Maven { root, lines, failed_in }),
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// The artifact id of the module a line of Maven's says it starts building:
/// `[INFO] ------< com.acme:core >------`.
fn building(line: &str) -> Option<String> {
    let line = strip_ansi(line);
    let inner = line.strip_prefix("[INFO] ")?.trim_matches('-').trim();
    let ga = inner.strip_prefix('<')?.strip_suffix('>')?.trim();
    let (_, artifact) = ga.split_once(':')?;
    Some(artifact.to_string()).filter(|a| !a.contains(char::is_whitespace))
}

/// Leaves the modules of these artifact ids out of Maven's reactor.
fn exclude(command: &mut Command, artifacts: &[impl AsRef<str>]) {
    if !artifacts.is_empty() {
        let selectors: Vec<String> = artifacts.iter().map(|a| format!("!:{}", a.as_ref())).collect();
        command.args(["-pl", &selectors.join(",")]);
    }
}

/// The artifact id of the project a Maven error line says failed: `… on project zxingorg: …`.
fn failed_project(line: &str) -> Option<String> {
    let after = line.split_once(" on project ")?.1;
    let name = after.split(|c: char| c == ':' || c.is_whitespace()).next()?;
    Some(name.to_string()).filter(|n| !n.is_empty())
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

/// The `<configuration>`s of a pom's `maven-compiler-plugin`, in its plugins, then in its
/// pluginManagement.
fn compiler_configurations<'a, 'i>(project: roxmltree::Node<'a, 'i>) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> {
    let build = child(project, "build");
    let plugins = [
        build.and_then(|b| child(b, "plugins")),
        build.and_then(|b| child(b, "pluginManagement")).and_then(|m| child(m, "plugins")),
    ];
    plugins
        .into_iter()
        .flatten()
        .flat_map(|p| p.children().filter(|c| c.has_tag_name("plugin")))
        .filter(|p| child(*p, "artifactId").and_then(|a| a.text()).map(str::trim) == Some("maven-compiler-plugin"))
        .filter_map(|p| child(p, "configuration"))
}

/// Whether the compiler plugin runs javac with `-parameters` for the module of `pom`: its
/// `<parameters>` (or `maven.compiler.parameters`), from the pom or the nearest parent that says,
/// parents found in the reactor or in the local repository (Spring Boot's starter parent sets it).
fn compiler_parameters(pom: &Path, repo: Option<&Path>) -> bool {
    let mut file = pom.to_path_buf();
    for _ in 0..16 {
        let Ok(text) = std::fs::read_to_string(&file) else { return false };
        let Ok(doc) = roxmltree::Document::parse(&text) else { return false };
        let project = doc.root_element();
        let text_of = |node: Option<roxmltree::Node>| node.and_then(|n| n.text()).map(|t| t.trim().to_string());
        let configured = compiler_configurations(project)
            .find_map(|c| text_of(child(c, "parameters")))
            .filter(|v| !v.contains("${"));
        let property = text_of(child(project, "properties").and_then(|p| child(p, "maven.compiler.parameters")));
        if let Some(v) = configured.or(property) {
            return v == "true";
        }
        let Some(parent) = child(project, "parent") else { return false };
        let coordinate = |name: &str| text_of(child(parent, name)).unwrap_or_default();
        let (group, artifact, version) = (coordinate("groupId"), coordinate("artifactId"), coordinate("version"));
        // An empty `<relativePath/>`: the parent is never looked for beside the module.
        let relative = match child(parent, "relativePath") {
            Some(r) => r.text().map(str::trim).unwrap_or_default().to_string(),
            None => "../pom.xml".into(),
        };
        let near = file.parent().filter(|_| !relative.is_empty()).map(|d| d.join(&relative)).map(|p| {
            if p.is_dir() {
                p.join("pom.xml")
            } else {
                p
            }
        });
        let in_reactor = near.filter(|p| {
            std::fs::read_to_string(p).is_ok_and(|t| t.contains(&format!("<artifactId>{artifact}</artifactId>")))
        });
        file = match (in_reactor, repo) {
            (Some(p), _) => p,
            (None, Some(repo)) => repo
                .join(group.replace('.', "/"))
                .join(&artifact)
                .join(&version)
                .join(format!("{artifact}-{version}.pom")),
            (None, None) => return false,
        };
    }
    false
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
    // The compiler plugin's source patterns, from the pom's plugins or its pluginManagement.
    let patterns = |list: &str, item: &str| -> Vec<String> {
        let Some(list) = compiler_configurations(project).find_map(|c| child(c, list)) else { return Vec::new() };
        list.children()
            .filter(|c| c.has_tag_name(item))
            .filter_map(|c| text_of(Some(c)))
            .filter(|p| !p.is_empty() && !p.contains("${"))
            .collect()
    };
    let source_filter = super::SourceFilter {
        includes: patterns("includes", "include"),
        excludes: patterns("excludes", "exclude"),
        test_includes: patterns("testIncludes", "testInclude"),
        test_excludes: patterns("testExcludes", "testExclude"),
    };
    let pom = Pom {
        id: format!("{group}:{artifact}"),
        rel,
        source_dir: dir("sourceDirectory"),
        test_source_dir: dir("testSourceDirectory"),
        resource_dirs: resource_dirs("resources", "resource"),
        test_resource_dirs: resource_dirs("testResources", "testResource"),
        source_filter,
    };
    Ok((pom, modules))
}

/// What decides Maven's answer: the poms, the project's Maven configuration, the `mvn` used (and
/// the cache's format).
fn digest(root: &Path, poms: &[Pom], mvn: &str) -> String {
    // What the cache holds changes with Bloatlens: another version asks Maven again.
    const FORMAT: &str = concat!("project-cache/7 ", env!("CARGO_PKG_VERSION"));
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
/// the same time do not share one); returns that directory, the per-module lists in `lists/`, and
/// Maven's debug log (each compiler execution's source roots).
/// `excluded`: artifact ids of modules left out of the reactor.
fn ask_maven(
    root: &Path,
    cache: &Path,
    mvn: &str,
    modules: &[PathBuf],
    excluded: &[&str],
) -> Result<(tempfile::TempDir, String), ProjectError> {
    let plugin = dependency_plugin(root);
    let (work, log) = maven_on_copy(root, cache, mvn, modules, |command, work| {
        exclude(command, excluded);
        command
            .args(["-X", "test-compile", "-Dmaven.main.skip=true", "-Dmaven.test.skip=true"])
            .arg("-Dmaven.resources.skip=true")
            .arg(format!("{plugin}:list"))
            .args(["-DoutputAbsoluteArtifactFilename=true", "-DoutputScope=true", "-DappendOutput=false"])
            .arg(format!("-DoutputFile={}/lists/${{project.groupId}}__${{project.artifactId}}.list", work.display()));
    })?;
    Ok((work, log))
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
    copy_project(root, &tree).map_err(io("copying the project"))?;
    // The poms Maven must read, whatever their size.
    for rel in modules {
        let to = tree.join(rel);
        std::fs::create_dir_all(&to).map_err(io("copying the poms"))?;
        std::fs::copy(root.join(rel).join("pom.xml"), to.join("pom.xml")).map_err(io("copying the poms"))?;
    }
    let mut command = Command::new(mvn);
    // Maven's own JVM runs for seconds: C1 alone starts it faster (2.2 s against 3.6 s measured), unless
    // the user set its options.
    if std::env::var_os("MAVEN_OPTS").is_none_or(|o| o.is_empty()) {
        command.env("MAVEN_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    }
    command.current_dir(&tree).args(["-o", "-B", "-Dstyle.color=never", "-f"]).arg(tree.join("pom.xml"));
    // Checks and reports bound before `compile` say nothing of class paths or tests: skipped
    // (a check would fail the run on the copy for what the developer's build tolerates).
    command.args(SKIPPED_CHECKS.iter().map(|p| format!("-D{p}=true")));
    goals(&mut command, work.path());
    let output = match command.output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ProjectError::NoMaven(mvn.to_string())),
        Err(e) => return Err(ProjectError::Io { what: format!("running {mvn}"), source: e }),
    };
    let text = String::from_utf8_lossy(&output.stdout).to_string() + &String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        let failed_in = text.lines().rev().find_map(building);
        return Err(ProjectError::Maven {
            root: root.to_path_buf(),
            lines: error_lines(&text, &tree, root),
            failed_in,
        });
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
    let known = project.left_out.iter().map(|a| (a.clone(), String::new())).collect();
    let ((work, log), _) = leaving_out_failures(known, |excluded| {
        maven_on_copy(root, cache, mvn, &rels, |command, _| {
            exclude(command, excluded);
            command.args([
                "-X",
                "test",
                "-Dmaven.main.skip=true",
                "-Dmaven.test.skip=true",
                "-Dmaven.resources.skip=true",
                "-Djacoco.skip=true",
            ]);
        })
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

/// The skip properties of plugins that check or report (style, licences, coverage, API
/// compatibility, signatures), for Maven's runs on the copy.
const SKIPPED_CHECKS: &[&str] = &[
    "checkstyle.skip",
    "enforcer.skip",
    "rat.skip",
    "spotless.check.skip",
    "spotless.apply.skip",
    "license.skip",
    "mycila.license.skip",
    "animal.sniffer.skip",
    "pmd.skip",
    "cpd.skip",
    "spotbugs.skip",
    "maven.gitcommitid.skip",
    "formatter.skip",
    "impsort.skip",
    "sortpom.skip",
    "japicmp.skip",
    "revapi.skip",
    "maven.javadoc.skip",
    "gpg.skip",
    "buildnumber.skip",
    "forbiddenapis.skip",
    "modernizer.skip",
];

/// Files larger than this are data, not build configuration: left out of Maven's copy.
const LARGEST_COPIED: u64 = 1 << 20;

/// Copies the project at `root` to `to` for Maven: every file but build outputs (`target/`),
/// version control, `node_modules`, test resources and files over [`LARGEST_COPIED`]; symbolic
/// links are left out.
fn copy_project(root: &Path, to: &Path) -> std::io::Result<()> {
    const SKIPPED: &[&str] = &[".git", ".hg", ".svn", "target", "node_modules", ".idea", ".gradle"];
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        std::fs::create_dir_all(to.join(&rel))?;
        for entry in std::fs::read_dir(root.join(&rel))? {
            let entry = entry?;
            let name = entry.file_name();
            let child = rel.join(&name);
            let kind = entry.file_type()?;
            if kind.is_dir() {
                let test_data = child.ends_with("src/test/resources");
                if !test_data && !SKIPPED.iter().any(|s| name == *s) {
                    stack.push(child);
                }
            } else if kind.is_file() && entry.metadata()?.len() <= LARGEST_COPIED {
                std::fs::copy(entry.path(), to.join(&child))?;
            }
        }
    }
    Ok(())
}

/// Main or test sources.
#[derive(Clone, Copy)]
enum Scope {
    Main,
    Test,
}

/// The sources Maven's run made in a module's copy at `copy`: its `target/generated-sources/*`
/// (`target/generated-test-sources/*` for tests; but javac's `annotations`, empty when nothing was
/// compiled) and `.java` files a generator wrote into a source root that the module at `dir` does
/// not have. They are copied below `generated` and their roots are returned.
fn keep_generated_sources(copy: &Path, dir: &Path, roots: &[PathBuf], generated: &Path, scope: Scope) -> Vec<PathBuf> {
    let (outputs, annotations, generated) = match scope {
        Scope::Main => ("target/generated-sources", "annotations", generated.join("main")),
        Scope::Test => ("target/generated-test-sources", "test-annotations", generated.join("test")),
    };
    let mut kept = Vec::new();
    let mut keep = |name: &str, files: Vec<(PathBuf, PathBuf)>| {
        if files.is_empty() {
            return;
        }
        let root = generated.join(name);
        for (file, rel) in files {
            let to = root.join(rel);
            let copied = to.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|_| std::fs::copy(&file, &to));
            if copied.is_err() {
                return;
            }
        }
        kept.push(root);
    };
    let java_below = |root: &Path| -> Vec<(PathBuf, PathBuf)> {
        let files = crate::javac::java_files(root).unwrap_or_default();
        files.into_iter().filter_map(|f| Some((f.clone(), f.strip_prefix(root).ok()?.to_path_buf()))).collect()
    };
    let mut made: Vec<PathBuf> = std::fs::read_dir(copy.join(outputs))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n != annotations))
        .collect();
    made.sort();
    for root in made {
        let name = root.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let files = java_below(&root);
        keep(&name, files);
    }
    for (i, root) in roots.iter().enumerate() {
        let Ok(rel) = root.strip_prefix(dir) else { continue };
        let in_copy = copy.join(rel);
        let new: Vec<(PathBuf, PathBuf)> =
            java_below(&in_copy).into_iter().filter(|(_, r)| !root.join(r).exists()).collect();
        keep(&format!("written-into-sources-{i}"), new);
    }
    kept
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
    fn the_failing_module_is_read_from_mavens_lines() {
        let line = "[ERROR] Failed to execute goal on project zxingorg: Could not resolve dependencies for project";
        assert_eq!(failed_project(line).as_deref(), Some("zxingorg"));
        assert_eq!(failed_project("[ERROR] Plugin x could not be resolved"), None);
        let started = "[INFO] ----< com.eclipsesource.minimal-json:minimal-json-performancetest >-----";
        assert_eq!(building(started).as_deref(), Some("minimal-json-performancetest"));
        assert_eq!(building("[INFO] Building minimal-json 0.9.6-SNAPSHOT  [1/3]"), None);
    }

    #[test]
    fn a_failing_module_is_left_out_and_the_reactor_asked_again() {
        let mut asked = Vec::new();
        let failure = |lines: &[&str], failed_in: Option<&str>| ProjectError::Maven {
            root: PathBuf::from("/p"),
            lines: lines.iter().map(|l| l.to_string()).collect(),
            failed_in: failed_in.map(str::to_string),
        };
        let (done, left_out) = leaving_out_failures(Vec::new(), |excluded| {
            asked.push(excluded.join(","));
            match excluded {
                [] => Err(failure(&["[ERROR] Failed to execute goal on project web: no"], Some("web"))),
                ["web"] => Err(failure(&["[ERROR] Plugin p:2.9 could not be resolved"], Some("perf"))),
                _ => Ok("resolved"),
            }
        })
        .unwrap();
        assert_eq!(done, "resolved");
        assert_eq!(asked, ["", "web", "web,perf"]);
        let names: Vec<&str> = left_out.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(names, ["web", "perf"]);
        assert_eq!(left_out[1].1, "[ERROR] Plugin p:2.9 could not be resolved");
        // A failure that names no module is Maven's answer.
        let unnamed = leaving_out_failures(Vec::new(), |_| -> Result<(), _> { Err(failure(&["[ERROR] bad"], None)) });
        assert!(matches!(unnamed, Err(ProjectError::Maven { .. })));
    }

    #[test]
    fn mavens_copy_holds_the_projects_files_but_outputs_and_test_data() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        for f in [
            "pom.xml",
            "src/checkstyle/rules.xml",
            "core/pom.xml",
            "core/src/main/java/a/A.java.template",
            "core/target/classes/a/A.class",
            ".git/HEAD",
            "core/src/test/resources/big/image.png",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        std::fs::write(root.join("data.bin"), vec![0u8; (LARGEST_COPIED + 1) as usize]).unwrap();
        let copy = dir.path().join("copy");
        copy_project(&root, &copy).unwrap();
        for kept in ["pom.xml", "src/checkstyle/rules.xml", "core/pom.xml", "core/src/main/java/a/A.java.template"] {
            assert!(copy.join(kept).is_file(), "{kept} copied");
        }
        for left in ["core/target", ".git", "core/src/test/resources", "data.bin"] {
            assert!(!copy.join(left).exists(), "{left} left out");
        }
    }

    #[test]
    fn sources_a_generator_made_in_the_copy_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (module, copy, generated) = (dir.path().join("m"), dir.path().join("copy"), dir.path().join("gen"));
        let files = [
            (module.join("src/main/java/a/A.java"), "class A {}"),
            (copy.join("src/main/java/a/A.java"), "class A {}"),
            (copy.join("src/main/java/a/Version.java"), "class Version {}"),
            (copy.join("target/generated-sources/java-templates/a/Config.java"), "class Config {}"),
            (copy.join("target/generated-sources/annotations/a/Ignored.java"), "class Ignored {}"),
            (copy.join("target/generated-test-sources/protobuf/a/Proto.java"), "class Proto {}"),
            (copy.join("target/generated-test-sources/test-annotations/a/Ignored.java"), "class Ignored {}"),
        ];
        for (path, text) in &files {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let roots = [module.join("src/main/java")];
        let kept = keep_generated_sources(&copy, &module, &roots, &generated, Scope::Main);
        let main = generated.join("main");
        assert_eq!(kept, [main.join("java-templates"), main.join("written-into-sources-0")]);
        assert!(main.join("java-templates/a/Config.java").is_file());
        assert!(main.join("written-into-sources-0/a/Version.java").is_file());
        assert!(!main.join("written-into-sources-0/a/A.java").exists(), "the module's own source is not");
        let tests = keep_generated_sources(&copy, &module, &[], &generated, Scope::Test);
        assert_eq!(tests, [generated.join("test/protobuf")]);
        assert!(generated.join("test/protobuf/a/Proto.java").is_file());
    }

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
    fn the_compiler_plugins_source_patterns_decide_what_compiles() {
        // commons-csv's: its benchmarks need dependencies only a profile brings.
        let pom = r#"<project><groupId>g</groupId><artifactId>csv</artifactId><build><plugins>
            <plugin><artifactId>maven-surefire-plugin</artifactId><configuration><excludes><exclude>x</exclude></excludes></configuration></plugin>
            <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><configuration>
              <testExcludes><testExclude>**/*Benchmark*</testExclude><testExclude>${skipped}</testExclude></testExcludes>
              <excludes><exclude>org/acme/legacy/</exclude></excludes>
            </configuration></plugin></plugins></build></project>"#;
        let (pom, _) = read_pom(pom, PathBuf::new()).unwrap();
        assert_eq!(pom.source_filter.test_excludes, ["**/*Benchmark*"], "a property is Maven's to expand");
        assert_eq!(pom.source_filter.excludes, ["org/acme/legacy/"], "not the surefire plugin's");
        let roots = |r: &str| vec![PathBuf::from("/p").join(r)];
        let module = Module {
            source_filter: pom.source_filter,
            ..Module::with_roots(&pom.id, PathBuf::from("/p"), roots("src/main/java"), roots("src/test/java"))
        };
        let compiles = |f: &str| module.compiles(Path::new(f));
        assert!(!compiles("/p/src/test/java/org/apache/commons/csv/CSVBenchmark.java"));
        assert!(compiles("/p/src/test/java/org/apache/commons/csv/CSVParserTest.java"));
        assert!(compiles("/p/src/main/java/org/apache/commons/csv/Benchmarks.java"), "test patterns are the tests'");
        assert!(!compiles("/p/src/main/java/org/acme/legacy/Old.java"), "a directory pattern: all below it");
        assert!(compiles("/p/src/main/java/org/acme/Legacy.java"));
        // Includes: only what they match.
        let mut only = module.clone();
        only.source_filter.test_includes = vec!["**/*Test.java".into()];
        assert!(!only.compiles(Path::new("/p/src/test/java/a/Helper.java")));
        assert!(only.compiles(Path::new("/p/src/test/java/a/ATest.java")));
    }

    #[test]
    fn parameter_names_are_kept_as_the_pom_or_a_parent_asks() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let boot = repo.join("org/springframework/boot/spring-boot-starter-parent/3.5.7");
        std::fs::create_dir_all(&boot).unwrap();
        std::fs::write(
            boot.join("spring-boot-starter-parent-3.5.7.pom"),
            "<project><artifactId>spring-boot-starter-parent</artifactId><build><pluginManagement><plugins><plugin>\
             <artifactId>maven-compiler-plugin</artifactId><configuration><parameters>true</parameters></configuration>\
             </plugin></plugins></pluginManagement></build></project>",
        )
        .unwrap();
        let app = dir.path().join("app");
        std::fs::create_dir_all(app.join("web")).unwrap();
        let parent =
            "<parent><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-parent</artifactId>\
                      <version>3.5.7</version><relativePath/></parent>";
        std::fs::write(app.join("pom.xml"), format!("<project>{parent}<artifactId>app</artifactId></project>"))
            .unwrap();
        std::fs::write(
            app.join("web/pom.xml"),
            "<project><parent><groupId>g</groupId><artifactId>app</artifactId><version>1</version></parent><artifactId>web</artifactId></project>",
        )
        .unwrap();
        assert!(compiler_parameters(&app.join("web/pom.xml"), Some(&repo)), "the reactor's parent, then Boot's");
        assert!(!compiler_parameters(&app.join("web/pom.xml"), None), "a parent not found says nothing");
        std::fs::write(
            app.join("pom.xml"),
            format!("<project>{parent}<artifactId>app</artifactId><properties><maven.compiler.parameters>false</maven.compiler.parameters></properties></project>"),
        )
        .unwrap();
        assert!(!compiler_parameters(&app.join("web/pom.xml"), Some(&repo)), "the nearest that says wins");
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
        // A folder of a module's tests belongs to the module; a folder beside its sources does not.
        std::fs::create_dir_all(root.join("app/web/src/test/java/com/acme")).unwrap();
        std::fs::create_dir_all(root.join("app/web/docs")).unwrap();
        assert_eq!(module_dir(&root.join("app/web/src/test/java/com/acme")), root.join("app/web"));
        assert_eq!(module_dir(&root.join("app/web")), root.join("app/web"));
        assert_eq!(module_dir(&root.join("app/web/docs")), root.join("app/web/docs"));
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
