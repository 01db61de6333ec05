//! Launch configurations: the Java ones of the workspace's `.vscode/launch.json` (`"type":
//! "java"`, `"request": "launch"`), read as VS Code's Java debugger reads them — main class,
//! arguments, `-D` properties among the VM arguments, working directory, environment, extra class
//! path — so that a profile runs the program as the developer already launches it. The picker
//! offers them beside the workspace's mains; `launch:<name>` names one (the picker's choice, the
//! `mainClass` setting, the remembered `entryPoint`).

use crate::config::Config;
use crate::job::Plan;
use bloatlens_profiler::vm::assertions::AssertionStatus;
use std::path::{Path, PathBuf};

/// How an entry point names a launch configuration: `launch:<name>`.
pub const PREFIX: &str = "launch:";

/// Where VS Code keeps a workspace folder's launch configurations.
pub const FILE: &str = ".vscode/launch.json";

/// One Java launch configuration, its variables resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchConfig {
    pub name: String,
    pub main_class: String,
    pub args: Vec<String>,
    /// The `-Dkey=value` entries of `vmArgs`.
    pub properties: Vec<(String, String)>,
    /// `cwd`, absolute; the workspace folder by default, as the Java debugger has it.
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// Real entries of `classPaths` (absolute); the debugger's `$Auto`-style markers and `!`
    /// exclusions are left out: the server builds the workspace's classes itself.
    pub class_paths: Vec<String>,
    /// The assertion options of `vmArgs` (`-ea`, `-da:com.acme...`), in order.
    pub assertions: Vec<String>,
    /// VM arguments other than `-D` and assertion options (heap sizes, agents…): the VM has no use
    /// for them; said in the log.
    pub ignored_vm_args: Vec<String>,
}

/// A Java launch configuration the server cannot run, and why (for the log).
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// What a launch.json holds for the server.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Launches {
    pub configs: Vec<LaunchConfig>,
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not valid JSON (comments and trailing commas allowed): {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path} has no \"configurations\" list")]
    NoConfigurations { path: PathBuf },
}

/// The name a `launch:<name>` entry point names.
pub fn named(entry: &str) -> Option<&str> {
    entry.strip_prefix(PREFIX)
}

/// The launch configuration this run uses, if any: the first of the class asked for (a lens,
/// the picker), the `mainClass` setting, the remembered entry point and the `entryPoint` setting
/// that names one — that is, a launch configuration wins where a class named there would.
pub fn selected<'a>(asked: Option<&'a str>, config: &'a Config, remembered: Option<&'a str>) -> Option<&'a str> {
    let setting = (!config.main_class.is_empty()).then_some(config.main_class.as_str());
    let entry = named(&config.entry_point).map(|_| config.entry_point.as_str());
    asked.or(setting).or(remembered).or(entry).and_then(named)
}

/// Reads `<workspace>/.vscode/launch.json`; no file: no configurations.
pub fn read(workspace: &Path) -> Result<Launches, LaunchError> {
    let path = workspace.join(FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&text, &path, workspace),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Launches::default()),
        Err(source) => Err(LaunchError::Read { path, source }),
    }
}

/// Parses launch.json's text (`path` only names it in errors).
pub fn parse(text: &str, path: &Path, workspace: &Path) -> Result<Launches, LaunchError> {
    // VS Code's own reading: comments and trailing commas, nothing looser.
    let options = jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let value: serde_json::Value = jsonc_parser::parse_to_serde_value(text, &options)
        .map_err(|e| LaunchError::Parse { path: path.into(), message: e.to_string() })?;
    let list = value
        .get("configurations")
        .and_then(|c| c.as_array())
        .ok_or_else(|| LaunchError::NoConfigurations { path: path.into() })?;
    let vars = Variables::of(workspace);
    let mut out = Launches::default();
    for c in list {
        let is = |key: &str, want: &str| c.get(key).and_then(|v| v.as_str()) == Some(want);
        if !is("type", "java") || !is("request", "launch") {
            continue;
        }
        let name = c.get("name").and_then(|v| v.as_str()).unwrap_or("").to_string();
        match config(c, &vars, workspace) {
            Ok(mut l) if !name.is_empty() => {
                l.name = name;
                out.configs.push(l);
            }
            Ok(_) => out.skipped.push(Skipped { name, reason: "it has no name".into() }),
            Err(reason) => out.skipped.push(Skipped { name, reason }),
        }
    }
    Ok(out)
}

/// One configuration; Err: why it cannot run here.
fn config(c: &serde_json::Value, vars: &Variables, workspace: &Path) -> Result<LaunchConfig, String> {
    let text = |key: &str| -> Result<Option<String>, String> {
        match c.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => vars.resolve(s).map(Some).map_err(|v| format!("{key} uses {v}")),
            Some(_) => Err(format!("{key} is not a string")),
        }
    };
    // A string is split as a shell would; a list is taken as it is.
    let words = |key: &str| -> Result<Vec<String>, String> {
        let raw: Vec<String> = match c.get(key) {
            None | Some(serde_json::Value::Null) => return Ok(Vec::new()),
            Some(serde_json::Value::String(s)) => split_words(&vars.resolve(s).map_err(|v| format!("{key} uses {v}"))?)
                .map_err(|e| format!("{key}: {e}"))?,
            Some(serde_json::Value::Array(items)) => {
                let mut out = Vec::new();
                for item in items {
                    let s = item.as_str().ok_or_else(|| format!("{key} holds a value that is not a string"))?;
                    out.push(vars.resolve(s).map_err(|v| format!("{key} uses {v}"))?);
                }
                out
            }
            Some(_) => return Err(format!("{key} is neither a string nor a list")),
        };
        Ok(raw)
    };
    let main = text("mainClass")?.filter(|m| !m.trim().is_empty()).ok_or("it has no mainClass")?;
    // `module/class` names the class in a module.
    let main_class = main.rsplit('/').next().unwrap_or(&main).trim().to_string();
    if main_class.ends_with(".java") || main_class.contains(char::is_whitespace) {
        return Err(format!("mainClass {main} is not a class name"));
    }
    let mut properties = Vec::new();
    let (mut assertions, mut ignored_vm_args) = (Vec::new(), Vec::new());
    for arg in words("vmArgs")? {
        match arg.strip_prefix("-D").filter(|d| !d.is_empty()) {
            Some(def) => {
                let (k, v) = def.split_once('=').unwrap_or((def, ""));
                properties.push((k.to_string(), v.to_string()));
            }
            None if AssertionStatus::is_option(&arg) => assertions.push(arg),
            None => ignored_vm_args.push(arg),
        }
    }
    let absolute = |p: &str| workspace.join(p);
    let cwd = text("cwd")?.map(|d| absolute(&d)).unwrap_or_else(|| workspace.to_path_buf());
    let mut env = Vec::new();
    match c.get("env") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Object(vars_map)) => {
            for (k, v) in vars_map {
                let value = match v {
                    serde_json::Value::String(s) => vars.resolve(s).map_err(|u| format!("env {k} uses {u}"))?,
                    serde_json::Value::Number(_) | serde_json::Value::Bool(_) => v.to_string(),
                    _ => return Err(format!("env {k} is not a string")),
                };
                env.push((k.clone(), value));
            }
        }
        Some(_) => return Err("env is not an object".into()),
    }
    let class_paths = words("classPaths")?
        .into_iter()
        .filter(|p| !p.starts_with('$') && !p.starts_with('!') && !p.is_empty())
        .map(|p| absolute(&p).display().to_string())
        .collect();
    Ok(LaunchConfig {
        name: String::new(),
        main_class,
        args: words("args")?,
        properties,
        cwd,
        env,
        class_paths,
        assertions,
        ignored_vm_args,
    })
}

/// The variables VS Code would substitute that mean the same outside the editor.
struct Variables {
    folder: String,
    basename: String,
}

impl Variables {
    fn of(workspace: &Path) -> Variables {
        Variables {
            folder: workspace.display().to_string(),
            basename: workspace.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        }
    }

    /// `text` with its `${…}` variables replaced; Err: the first that only the editor knows
    /// (`${file}`, `${input:…}`, `${command:…}`…).
    fn resolve(&self, text: &str) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find("${") {
            out.push_str(&rest[..at]);
            let Some(len) = rest[at..].find('}') else {
                out.push_str(&rest[at..]);
                return Ok(out);
            };
            let var = &rest[at + 2..at + len];
            match var {
                "workspaceFolder" | "workspaceRoot" => out.push_str(&self.folder),
                "workspaceFolderBasename" => out.push_str(&self.basename),
                "userHome" => out.push_str(&std::env::var("HOME").unwrap_or_default()),
                "pathSeparator" | "/" => out.push('/'),
                _ => match var.strip_prefix("env:") {
                    Some(name) => out.push_str(&std::env::var(name).unwrap_or_default()),
                    None => return Err(format!("${{{var}}}, which only the editor can resolve")),
                },
            }
            rest = &rest[at + len + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// Splits a command line into words as a POSIX shell does with quotes and backslashes (no
/// expansions): `a "b c" 'd e' f\ g` is four words.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(ch) = chars.next() {
        match ch {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("a single quote is not closed".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        // Inside double quotes a backslash escapes only these, as in sh.
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("a double quote is not closed".into()),
                        },
                        Some(c) => w.push(c),
                        None => return Err("a double quote is not closed".into()),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert_with(String::new);
                if let Some(c) = chars.next() {
                    w.push(c);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// The plan for launch configuration `name`: its main (which must be in the workspace: the server
/// compiles it), arguments and extra class path over the settings', and the rest for the VM.
/// `remembered`: the entry point before this run (a new one is said in the log). Err: a message
/// for the user.
pub fn plan(
    root: Option<&Path>,
    name: &str,
    mut config: Config,
    mains: &[(String, PathBuf)],
    remembered: Option<&str>,
) -> Result<Plan, String> {
    let root = root.ok_or_else(|| format!("Bloatlens: launch configuration {name}: no workspace folder is open"))?;
    let launches = read(root).map_err(|e| format!("Bloatlens: {e}"))?;
    let Some(launch) = launches.configs.into_iter().find(|l| l.name == name) else {
        return Err(match launches.skipped.iter().find(|s| s.name == name) {
            Some(s) => format!("Bloatlens: launch configuration {name} cannot be profiled: {}", s.reason),
            None => format!("Bloatlens: no Java launch configuration named {name} in {FILE}"),
        });
    };
    let Some((class, main_file)) = mains.iter().find(|(c, _)| *c == launch.main_class).cloned() else {
        return Err(format!(
            "Bloatlens: launch configuration {name}: no main method found for {} in the workspace",
            launch.main_class
        ));
    };
    config.args = launch.args.clone();
    config.class_path.extend(launch.class_paths.iter().cloned());
    let entry = format!("{PREFIX}{name}");
    let mut chosen = (remembered != Some(entry.as_str())).then(|| format!("entry point {FILE}: {name} ({class})"));
    if let (Some(c), false) = (chosen.as_mut(), launch.ignored_vm_args.is_empty()) {
        c.push_str(&format!("; vmArgs other than -D ignored: {}", launch.ignored_vm_args.join(" ")));
    }
    Ok(Plan {
        main_class: class,
        test: None,
        tests_in: None,
        main_file,
        root: root.to_path_buf(),
        config,
        chosen,
        launch: Some(launch),
        compile_only: None,
        previous_entry: remembered.map(String::from),
    })
}

/// The launch configurations as the `bloatlens.entryPoints` command lists them (after the
/// workspace's mains): `{"class", "uri", "launch", "label"}`; and lines for the log about those
/// that cannot run and why.
pub fn entry_points(root: Option<&Path>, mains: &[(String, PathBuf)]) -> (Vec<serde_json::Value>, Vec<String>) {
    let Some(root) = root else { return (Vec::new(), Vec::new()) };
    let launches = match read(root) {
        Ok(l) => l,
        Err(e) => return (Vec::new(), vec![format!("Bloatlens: {e}")]),
    };
    let items = launches
        .configs
        .iter()
        .map(|l| {
            let uri = mains.iter().find(|(c, _)| *c == l.main_class).and_then(|(_, p)| crate::to_proto::uri_of(p));
            serde_json::json!({
                "class": l.main_class,
                "uri": uri,
                "launch": l.name,
                "label": format!("launch.json: {}", l.name),
            })
        })
        .collect();
    let log = launches
        .skipped
        .iter()
        .map(|s| format!("{FILE}: launch configuration {:?} is not offered: {}", s.name, s.reason))
        .collect();
    (items, log)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAUNCH_JSON: &str = r#"{
    // Use IntelliSense to learn about possible attributes.
    "version": "0.2.0",
    "configurations": [
        {
            "type": "java",
            "name": "Run Shop",
            "request": "launch",
            "mainClass": "com.acme.Main",
            "projectName": "shop",
            "args": "--orders 3 \"two words\" '${workspaceFolderBasename}'",
            "vmArgs": "-Xmx2g -ea -Dshop.mode=fast -Ddata=${workspaceFolder}/data -da:com.acme.gen... -Dflag",
            "cwd": "${workspaceFolder}/run",
            "env": { "SHOP_HOME": "${workspaceFolder}", "LEVEL": 3, },
            "classPaths": ["$Auto", "!${workspaceFolder}/test-classes", "lib/extra.jar", "${workspaceFolder}/more"],
        },
        /* the debugger's default for the open file */
        {
            "type": "java",
            "name": "Current File",
            "request": "launch",
            "mainClass": "${file}"
        },
        {
            "type": "java",
            "name": "Tool",
            "request": "launch",
            "mainClass": "mod.tool/com.acme.Tool",
            "args": ["a b", "${env:BLOATLENS_LAUNCH_TEST_UNSET}c"],
            "vmArgs": ["-Dx=1=2"],
        },
        { "type": "java", "name": "Attach", "request": "attach", "hostName": "localhost", "port": 5005 },
        { "type": "node", "name": "Web", "request": "launch", "program": "${workspaceFolder}/web.js" },
    ],
}"#;

    fn parsed() -> Launches {
        parse(LAUNCH_JSON, Path::new("/ws/shop/.vscode/launch.json"), Path::new("/ws/shop")).unwrap()
    }

    #[test]
    fn java_launch_configurations_are_read_with_their_variables_resolved() {
        let l = parsed();
        assert_eq!(l.configs.len(), 2, "{l:#?}");
        let shop = &l.configs[0];
        assert_eq!(shop.name, "Run Shop");
        assert_eq!(shop.main_class, "com.acme.Main");
        assert_eq!(shop.args, ["--orders", "3", "two words", "shop"]);
        let props: Vec<(&str, &str)> = shop.properties.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(props, [("shop.mode", "fast"), ("data", "/ws/shop/data"), ("flag", "")]);
        assert_eq!(shop.ignored_vm_args, ["-Xmx2g"]);
        assert_eq!(shop.assertions, ["-ea", "-da:com.acme.gen..."]);
        assert_eq!(shop.cwd, Path::new("/ws/shop/run"));
        let mut env = shop.env.clone();
        env.sort();
        assert_eq!(env, [("LEVEL".to_string(), "3".to_string()), ("SHOP_HOME".into(), "/ws/shop".into())]);
        assert_eq!(shop.class_paths, ["/ws/shop/lib/extra.jar", "/ws/shop/more"]);

        let tool = &l.configs[1];
        assert_eq!(tool.main_class, "com.acme.Tool", "module/class names the class");
        assert_eq!(tool.args, ["a b", "c"], "a list is taken as is; an unset variable is empty");
        assert_eq!(tool.properties, [("x".to_string(), "1=2".to_string())]);
        assert_eq!(tool.cwd, Path::new("/ws/shop"), "the workspace folder by default");
    }

    #[test]
    fn a_configuration_only_the_editor_can_resolve_is_skipped_with_its_reason() {
        let l = parsed();
        assert_eq!(l.skipped.len(), 1, "attach and node configurations are not Java launches: {l:#?}");
        assert_eq!(l.skipped[0].name, "Current File");
        assert!(l.skipped[0].reason.contains("${file}"), "{}", l.skipped[0].reason);
        let no_main = parse(
            r#"{"configurations": [{"type": "java", "request": "launch", "name": "X"}]}"#,
            Path::new("launch.json"),
            Path::new("/ws"),
        )
        .unwrap();
        assert_eq!(no_main.skipped, [Skipped { name: "X".into(), reason: "it has no mainClass".into() }]);
    }

    #[test]
    fn malformed_or_missing_files() {
        let err = parse("{ \"configurations\": [ }", Path::new("l.json"), Path::new("/ws")).unwrap_err();
        assert!(matches!(err, LaunchError::Parse { .. }), "{err}");
        let err = parse("{}", Path::new("l.json"), Path::new("/ws")).unwrap_err();
        assert!(err.to_string().contains("no \"configurations\""), "{err}");
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(read(empty.path()).unwrap(), Launches::default());
    }

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(
            split_words(r#"  a "b c" 'd "e"' f\ g "h\"i" j\\k "" "#).unwrap(),
            ["a", "b c", "d \"e\"", "f g", "h\"i", "j\\k", ""]
        );
        assert!(split_words("a 'b").is_err());
        assert!(split_words("a \"b").is_err());
        assert!(split_words("").unwrap().is_empty());
    }

    #[test]
    fn a_launch_name_is_selected_where_a_class_would_be() {
        let mut config = Config::default();
        assert_eq!(selected(Some("launch:A"), &config, None), Some("A"));
        assert_eq!(selected(Some("com.X"), &config, Some("launch:B")), None, "a class asked for wins");
        assert_eq!(selected(None, &config, Some("launch:B")), Some("B"));
        config.entry_point = "launch:C".into();
        assert_eq!(selected(None, &config, None), Some("C"));
        assert_eq!(selected(None, &config, Some("com.X")), None, "the entry point chosen since wins");
        config.main_class = "launch:D".into();
        assert_eq!(selected(None, &config, Some("launch:B")), Some("D"));
    }
}
