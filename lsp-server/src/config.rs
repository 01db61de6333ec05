//! The server's settings, as the client sends them (`initializationOptions`, and the `bloatlens`
//! section of `workspace/didChangeConfiguration`). Every field has a default, so an empty or
//! partial object is valid; unknown fields are ignored.

use bloatlens_profiler::profile::Analyses;
use bloatlens_profiler::report::Settings as Thresholds;
use bloatlens_profiler::vm::sandbox::WorkspaceWrites;
use bloatlens_profiler::vm::Limits;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Config {
    /// The main class to profile; empty: the entry point chosen last, else the saved file's `main`,
    /// else the workspace's only one.
    pub main_class: String,
    /// The entry point chosen in an earlier session, which the client remembers per workspace
    /// (not a setting: the VS Code extension fills it in).
    pub entry_point: String,
    pub args: Vec<String>,
    /// Extra class path entries (directories and jars) the program needs.
    pub class_path: Vec<String>,
    /// The JDK whose javac compiles and whose class library runs (default: JAVA_HOME, else PATH).
    pub jdk_path: Option<PathBuf>,
    /// The Maven command for workspaces with a `pom.xml` (run offline, with the user's settings
    /// and local repository, to learn each module's class paths).
    pub maven_path: String,
    /// JUnit 5 timeouts in a test's profile, which runs 10–90× slower than `java`: scaled (50×),
    /// disabled, or kept as written.
    pub test_timeouts: bloatlens_profiler::junit::TestTimeouts,
    /// A file the profiled program reads as its `System.in` (relative to the workspace); without
    /// one, `System.in` is empty (the server's own stdin is the editor's protocol stream).
    pub stdin_file: Option<PathBuf>,
    pub profile_on_save: bool,
    /// Keep a VM with the JDK booted between runs (tens of megabytes while idle), so that a save
    /// does not wait for the JDK's start-up.
    pub boot_ahead: bool,
    /// Offer quick fixes for findings: after each run, the largest findings' fixes are compiled and
    /// the program run once more each to check them.
    pub quick_fixes: bool,
    /// What a profiled program may change on disk.
    pub sandbox: SandboxSettings,
    pub analyses: AnalysesConfig,
    pub budgets: Budgets,
    /// The analyses' thresholds (`report::Settings`, camelCase names).
    pub thresholds: Thresholds,
    /// Code lenses on the top findings of a file (the "Profile" lenses on mains are extra).
    pub max_lenses_per_file: usize,
    /// Show a short note at the end of lines with findings.
    pub inlay_hints: bool,
    /// Whether the user trusts the workspace (not a setting: an initialization option the client
    /// sends, VS Code from its Workspace Trust). Untrusted, the server compiles and runs nothing:
    /// no javac, no Maven, no program. A client that says nothing is trusted.
    pub trusted: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            main_class: String::new(),
            entry_point: String::new(),
            args: Vec::new(),
            class_path: Vec::new(),
            jdk_path: None,
            maven_path: "mvn".into(),
            test_timeouts: Default::default(),
            stdin_file: None,
            profile_on_save: true,
            boot_ahead: true,
            quick_fixes: true,
            sandbox: SandboxSettings::default(),
            analyses: AnalysesConfig::default(),
            budgets: Budgets::default(),
            thresholds: Thresholds::default(),
            max_lenses_per_file: 3,
            inlay_hints: false,
            trusted: true,
        }
    }
}

/// A profiled program changes files only in the workspace (and a temporary directory of its own);
/// `workspaceWrites` says where those changes go: a scratch overlay the run alone sees
/// (`overlay`: the workspace never changes), or the workspace (`allow`: the watcher ignores them).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxSettings {
    pub workspace_writes: WorkspaceWrites,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct AnalysesConfig {
    pub copy: bool,
    pub refprop: bool,
    pub costben: bool,
    pub lifetime: bool,
    pub bottleneck: bool,
}

impl Default for AnalysesConfig {
    fn default() -> Self {
        AnalysesConfig { copy: true, refprop: true, costben: true, lifetime: true, bottleneck: true }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Budgets {
    pub max_instructions: u64,
    pub max_seconds: u64,
    pub max_heap_mb: u64,
    pub max_stack_depth: usize,
}

impl Default for Budgets {
    fn default() -> Self {
        // Tighter than the CLI's: a profile on save must come back while the developer looks.
        Budgets {
            max_instructions: 2_000_000_000,
            max_seconds: 60,
            max_heap_mb: 1024,
            max_stack_depth: Limits::default().max_stack_depth,
        }
    }
}

impl Config {
    /// Reads settings from a JSON value: either the settings object itself or one with a
    /// `bloatlens` member (how clients wrap a section). Invalid values are an error naming them.
    pub fn from_json(value: &serde_json::Value) -> Result<Config, String> {
        let v = value.get("bloatlens").unwrap_or(value);
        if v.is_null() {
            return Ok(Config::default());
        }
        serde_json::from_value(v.clone()).map_err(|e| format!("invalid Bloatlens settings: {e}"))
    }

    pub fn limits(&self) -> Limits {
        Limits {
            max_instructions: self.budgets.max_instructions,
            max_wall: Duration::from_secs(self.budgets.max_seconds),
            max_heap_bytes: self.budgets.max_heap_mb << 20,
            max_stack_depth: self.budgets.max_stack_depth,
            cancel: None,
        }
    }

    pub fn analyses(&self) -> Analyses {
        let a = &self.analyses;
        Analyses {
            copy: a.copy,
            refprop: a.refprop,
            costben: a.costben,
            lifetime: a.lifetime,
            bottleneck: a.bottleneck,
        }
    }

    pub fn thresholds(&self) -> Thresholds {
        self.thresholds.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The VS Code extension contributes every setting with the server's default: the two lists
    /// are one contract, checked here from both sides.
    #[test]
    fn the_vs_code_extension_contributes_every_setting_with_its_default() {
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../vscode-extension/package.json")).unwrap(),
        )
        .unwrap();
        let props = manifest["contributes"]["configuration"]["properties"].as_object().unwrap();
        let mut expected = std::collections::BTreeMap::new();
        flatten("bloatlens", &serde_json::to_value(Config::default()).unwrap(), &mut expected);
        // Remembered by the extension itself, not a setting.
        expected.remove("bloatlens.entryPoint");
        // The client's trust in the workspace, not a setting a workspace could set.
        expected.remove("bloatlens.trusted");
        let contributed: std::collections::BTreeMap<String, serde_json::Value> = props
            .iter()
            .filter(|(k, _)| !k.starts_with("bloatlens.server.") && !k.starts_with("bloatlens.trace."))
            .map(|(k, v)| (k.clone(), v["default"].clone()))
            .collect();
        // JSON's 2 and Rust's 2.0 are the same setting.
        let numbers_as_f64 = |m: std::collections::BTreeMap<String, serde_json::Value>| {
            m.into_iter().map(|(k, v)| (k, v.as_f64().map(|f| serde_json::json!(f)).unwrap_or(v))).collect::<Vec<_>>()
        };
        assert_eq!(numbers_as_f64(contributed), numbers_as_f64(expected));
    }

    /// Dotted camelCase names to values (`None` as the extension's empty string).
    fn flatten(prefix: &str, v: &serde_json::Value, out: &mut std::collections::BTreeMap<String, serde_json::Value>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    let camel: String = k
                        .split('_')
                        .enumerate()
                        .map(|(i, w)| if i == 0 { w.to_string() } else { w[..1].to_uppercase() + &w[1..] })
                        .collect();
                    flatten(&format!("{prefix}.{camel}"), v, out);
                }
            }
            serde_json::Value::Null => drop(out.insert(prefix.to_string(), serde_json::json!(""))),
            v => drop(out.insert(prefix.to_string(), v.clone())),
        }
    }

    #[test]
    fn partial_settings_keep_defaults_and_bad_ones_are_named() {
        let c =
            Config::from_json(&serde_json::json!({"bloatlens": {"mainClass": "a.B", "budgets": {"maxSeconds": 5}}}))
                .unwrap();
        assert_eq!(c.main_class, "a.B");
        assert_eq!(c.budgets.max_seconds, 5);
        assert_eq!(c.budgets.max_heap_mb, 1024);
        assert!(c.profile_on_save && c.analyses.copy);
        let err = Config::from_json(&serde_json::json!({"profileOnSave": "yes"})).unwrap_err();
        assert!(err.contains("invalid Bloatlens settings"), "{err}");
        assert_eq!(Config::from_json(&serde_json::Value::Null).unwrap(), Config::default());
        let t = Config::from_json(&serde_json::json!({"thresholds": {"contextSlots": 0, "min_instances": 3}})).unwrap();
        assert_eq!((t.thresholds.context_slots, t.thresholds.min_instances), (0, 3), "camelCase and snake_case");
        assert_eq!(t.thresholds.mostly_nath, Thresholds::default().mostly_nath);
        let allow = Config::from_json(&serde_json::json!({"sandbox": {"workspaceWrites": "allow"}})).unwrap();
        assert_eq!(allow.sandbox.workspace_writes, WorkspaceWrites::Allow);
        assert_eq!(Config::default().sandbox.workspace_writes, WorkspaceWrites::Overlay);
        let err = Config::from_json(&serde_json::json!({"sandbox": {"workspaceWrites": "anywhere"}})).unwrap_err();
        assert!(err.contains("anywhere") || err.contains("variant"), "{err}");
    }
}
