//! The report: what a profiled run found, as one JSON-serialisable value. Its schema is
//! documented in `docs/report-schema.md`; `SCHEMA` changes whenever a field changes meaning.
//!
//! Locations name bytecode (class, method, descriptor, bci) and source (file as javac recorded it,
//! relative to the source root, and line). A finding's `location` is always the first frame in
//! user code; where the event itself happened inside the JDK, that JDK frame is a related location.

use crate::evidence::Evidence;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "bloatlens-report/4";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub schema: String,
    pub run: RunInfo,
    pub findings: Vec<Finding>,
    /// Copies per method (flat: stores the method itself did; cumulative: with its callees),
    /// hottest first. Empty when copy profiling was off.
    pub copy_profile: Vec<MethodCopies>,
    /// The calling-context tree with base costs per context (bottleneck analysis on), for
    /// comparing this run with a later one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_tree: Option<crate::analysis::calltree::CallTree>,
    /// The call sequences whose cost changed since the run given to `--compare`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// Cost-benefit's whole-program figures (cost-benefit on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_benefit: Option<CostSummary>,
    /// How each test ended, when the entry point was a JUnit test (class or method).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<crate::junit::TestOutcome>,
    /// How the tests ran, when it matters to their outcomes: the engine added, timeouts scaled or
    /// disabled, a timeout that failed because the VM is slower than `java`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_notes: Vec<String>,
}

/// Cost-benefit's whole-program figures.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CostSummary {
    /// Nodes and edges of G_cost.
    pub nodes: u64,
    pub edges: u64,
    pub instructions: u64,
    /// Share of executed instructions that produce only dead values.
    pub ipd: f64,
    /// Share of executed instructions that only feed branches.
    pub ipp: f64,
    /// Share of graph nodes that produce only dead values.
    pub nld: f64,
    /// The benefit given to fields whose values reach a branch or a native (the largest RAC).
    pub large_benefit: f64,
}

/// This run against an earlier one (`bloatlens profile --compare previous.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    /// The earlier report's program and wall time.
    pub previous: String,
    pub metric: String,
    pub total_before: i64,
    pub total_after: i64,
    /// Largest changes first.
    pub changes: Vec<SequenceChange>,
    /// The program's own work since the earlier report, in words: "−23% instructions, −1.2 MB
    /// allocated" (what a fix made between the two saved).
    #[serde(default)]
    pub work: String,
    /// The earlier report's shown findings that this one no longer shows (the same pattern in the
    /// same method, naming the same expression), as `pattern at File.java:line`.
    #[serde(default)]
    pub gone: Vec<String>,
}

/// A call sequence (outermost first) whose cum cost changed between two runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SequenceChange {
    pub calls: Vec<String>,
    pub before: i64,
    pub after: i64,
    /// `after - before` of the cum; `base_change` of the cost along the sequence itself.
    pub change: i64,
    pub base_change: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    pub main_class: String,
    pub args: Vec<String>,
    pub class_path: String,
    pub jdk: String,
    /// `exited`, `exception` (an uncaught exception ended `main`) or `stopped` (a budget or an
    /// error of the VM ended the run early; the report covers what ran).
    pub outcome: String,
    pub exit_status: i32,
    /// Why the run stopped early, or the uncaught exception.
    pub outcome_detail: Option<String>,
    /// True when the program did not run to its end: the findings cover part of it. When a budget
    /// or a cancel stopped it, only copies and costs counted so far are reported (each finding's
    /// evidence says `partial`): what objects came to needs the end of the run.
    pub partial: bool,
    /// Where a stopped run spent its last seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<crate::vm::whereabouts::StopPlace>,
    pub analyses: Vec<String>,
    pub settings: Settings,
    pub wall_ms: u64,
    pub instructions: u64,
    pub allocated_bytes: u64,
    /// Of `instructions` and `allocated_bytes`, what booting the JDK took before `main`: shares are
    /// of the rest, the program's own work.
    #[serde(default)]
    pub boot_instructions: u64,
    #[serde(default)]
    pub boot_allocated_bytes: u64,
    pub collections: u64,
}

/// Thresholds and abstraction sizes; every one is a CLI flag and an editor setting.
/// Read from editor settings too, where names are camelCase (`contextSlots`): both spellings are
/// accepted, and a missing field takes its default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Settings {
    /// Context slots `c` of 1-object sensitivity (0: context-insensitive).
    #[serde(alias = "contextSlots")]
    pub context_slots: u32,
    /// Longest copy chain, in hops (heap-to-heap copies).
    #[serde(alias = "maxChainHops")]
    pub max_chain_hops: usize,
    /// An allocation site needs this many instances to be reported by reference propagation.
    #[serde(alias = "minInstances")]
    pub min_instances: u64,
    /// Mostly-NATH: at least this fraction of a site's objects never reach the heap.
    #[serde(alias = "mostlyNath")]
    pub mostly_nath: f64,
    /// Rarely-used: fewer than this fraction of a site's objects are used.
    #[serde(alias = "rarelyUsed")]
    pub rarely_used: f64,
    /// Write-read imbalance: heap writes over heap reads of a site's references at least this.
    #[serde(alias = "imbalanceRatio")]
    pub imbalance_ratio: f64,
    /// A copy chain needs this many copies (its path frequency) to be reported.
    #[serde(alias = "minCopies")]
    pub min_copies: u64,
    /// At most this many findings of each kind.
    #[serde(alias = "maxFindingsPerKind")]
    pub max_findings_per_kind: usize,
    /// Young generation of the lifetime analysis: the run collects after this many bytes of
    /// allocation (the interval grows with the live heap, as the collector's does).
    #[serde(alias = "youngGenBytes")]
    pub young_gen_bytes: u64,
    /// The young generation lifetimes are judged against: HotSpot's, tens of MB (its size varies
    /// with the heap and the collector). Objects that die before this much allocation die young
    /// there, however many of the VM's small collections they lived through.
    #[serde(alias = "hotspotYoungBytes")]
    pub hotspot_young_bytes: u64,
    /// What bottlenecks measure: `instructions`, `bytes` (allocated) or `copies` (heap to heap).
    #[serde(alias = "bottleneckMetric")]
    pub bottleneck_metric: String,
    /// A bottleneck carries at least this share of the run that no other bottleneck covers.
    #[serde(alias = "bottleneckMinShare")]
    pub bottleneck_min_share: f64,
    /// Zooming's cutoff: an extension carrying this share of a sequence's cost is zoomed through.
    #[serde(alias = "zoomCutoff")]
    pub zoom_cutoff: f64,
    /// Context slots `s` of cost-benefit's receiver chains (`g' = 3·g + allocId(this)`, slot `g mod s`).
    #[serde(alias = "costSlots")]
    pub cost_slots: u32,
    /// Height of the object reference trees n-RAC and n-RAB sum over.
    #[serde(alias = "treeHeight")]
    pub tree_height: usize,
    /// A low-utility structure costs at least this many instructions to build (its n-RAC).
    #[serde(alias = "lowUtilityMinCost")]
    pub low_utility_min_cost: u64,
    /// A low-utility structure's cost is at least this many times its benefit, n-RAC / (n-RAB + 1).
    #[serde(alias = "lowUtilityRate")]
    pub low_utility_rate: f64,
    /// A finding whose fix would save less than this share of the program's estimated time on
    /// HotSpot is hidden from the editor and summarised in the CLI.
    #[serde(alias = "minShare")]
    pub min_share: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            context_slots: 8,
            max_chain_hops: 5,
            min_instances: 10,
            mostly_nath: 0.9,
            rarely_used: 0.1,
            imbalance_ratio: 2.0,
            min_copies: 10,
            max_findings_per_kind: 20,
            young_gen_bytes: 1 << 20,
            hotspot_young_bytes: 32 << 20,
            bottleneck_metric: "instructions".into(),
            bottleneck_min_share: 0.05,
            zoom_cutoff: 0.95,
            cost_slots: 8,
            tree_height: 4,
            low_utility_min_cost: 1000,
            low_utility_rate: 4.0,
            min_share: 0.005,
        }
    }
}

/// What an analysis found. In the JSON its kind comes first and its evidence last, as
/// `{"kind": "copy-chain", …, "evidence": {…}}`; here the kind is the evidence's variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The bloat pattern the finding is an instance of (see `docs/patterns.md`); `None` for a raw
    /// analysis result that fits none, which the editor does not show.
    pub pattern: Option<crate::patterns::Pattern>,
    pub severity: Severity,
    /// Ranking figure within the kind (see each kind's `evidence` for how it is made).
    pub score: f64,
    /// What a fix would save, as a share of the run: of its heap copies (copy chains, clones),
    /// allocated bytes (NATH, usage, lifetime findings) or instructions (low-utility structures,
    /// bottlenecks). Findings are listed by it, largest first, across kinds.
    pub share: f64,
    pub message: String,
    /// What to change first, in one sentence.
    pub advice: String,
    /// Why the editor does not show this finding (work done once, a share under `min_share`);
    /// `None` for the findings shown.
    pub hidden: Option<String>,
    pub location: Location,
    pub related: Vec<Related>,
    /// What the analysis saw and the figures behind it; its variant is the finding's kind.
    pub evidence: Evidence,
    /// When the entry point was JUnit tests: the tests whose calls reached the finding's method,
    /// with their part of its cost, largest first ([`crate::junit::attribution`]).
    pub tests: Vec<TestShare>,
}

/// A test's part in a finding: the cost (as the cost model prices instructions and bytes) of the
/// finding's method in calling contexts below the test.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TestShare {
    /// `com.acme.FooTest#bar` for a test method (and the code it calls), `com.acme.FooTest` for the
    /// class's own set-up (`@BeforeAll`, `@BeforeEach`, constructors), as JUnit ran them.
    pub test: String,
    pub share: f64,
}

/// A [`Finding`] as the JSON has it.
#[derive(Serialize)]
struct FindingOut<'a> {
    kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pattern: Option<crate::patterns::Pattern>,
    severity: Severity,
    score: f64,
    share: f64,
    message: &'a str,
    advice: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    hidden: Option<&'a str>,
    location: &'a Location,
    related: &'a [Related],
    evidence: &'a Evidence,
    #[serde(skip_serializing_if = "<[TestShare]>::is_empty")]
    tests: &'a [TestShare],
}

#[derive(Deserialize)]
struct FindingIn {
    kind: Kind,
    #[serde(default)]
    pattern: Option<crate::patterns::Pattern>,
    severity: Severity,
    score: f64,
    #[serde(default)]
    share: f64,
    message: String,
    #[serde(default)]
    advice: String,
    #[serde(default)]
    hidden: Option<String>,
    location: Location,
    related: Vec<Related>,
    /// Read by `kind` once the whole finding is read: the kind says which evidence it is.
    evidence: serde_json::Value,
    #[serde(default)]
    tests: Vec<TestShare>,
}

impl Serialize for Finding {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        FindingOut {
            kind: self.kind(),
            pattern: self.pattern,
            severity: self.severity,
            score: self.score,
            share: self.share,
            message: &self.message,
            advice: &self.advice,
            hidden: self.hidden.as_deref(),
            location: &self.location,
            related: &self.related,
            evidence: &self.evidence,
            tests: &self.tests,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Finding {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = FindingIn::deserialize(d)?;
        let evidence = Evidence::from_json(f.kind, f.evidence).map_err(serde::de::Error::custom)?;
        Ok(Finding {
            pattern: f.pattern,
            severity: f.severity,
            score: f.score,
            share: f.share,
            message: f.message,
            advice: f.advice,
            hidden: f.hidden,
            location: f.location,
            related: f.related,
            evidence,
            tests: f.tests,
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// Source file as javac recorded it, with the package's directories (`com/acme/Main.java`).
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Binary name with dots (`com.acme.Main$Inner`).
    pub class: String,
    pub method: String,
    pub descriptor: String,
    pub bci: u32,
    /// The expression the method ran at `bci`, in the source's words (`new Order(…)`, `the
    /// string concatenation`, `String.format(…)`), where the bytecode there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
}

impl Report {
    /// The findings the editor shows and the text report numbers `1.`, `2.`…, in the report's order.
    pub fn shown(&self) -> Vec<&Finding> {
        self.findings.iter().filter(|f| f.hidden.is_none()).collect()
    }
}

impl Location {
    /// `Main.java:12` or, without line information, `com.acme.Main.run`.
    pub fn short(&self) -> String {
        match (&self.file, self.line) {
            (Some(f), Some(l)) => format!("{}:{l}", f.rsplit('/').next().unwrap_or(f)),
            _ => format!("{}.{}", self.class, self.method),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Related {
    pub location: Location,
    /// What this place is to the finding: `hop 2 of 4: loaded`, `stored to the heap`, `used`, …
    pub role: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MethodCopies {
    pub class: String,
    pub method: String,
    pub descriptor: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub flat: u64,
    pub cumulative: u64,
}

impl Finding {
    pub fn new(evidence: Evidence, score: f64, message: String, location: Location) -> Self {
        Finding {
            pattern: None,
            severity: Severity::Info,
            score,
            share: 0.0,
            message,
            advice: String::new(),
            hidden: None,
            location,
            related: Vec::new(),
            evidence,
            tests: Vec::new(),
        }
    }

    /// What the analysis saw: the evidence's variant.
    pub fn kind(&self) -> Kind {
        self.evidence.kind()
    }

    pub fn related(mut self, location: Location, role: impl Into<String>) -> Self {
        self.related.push(Related { location, role: role.into() });
        self
    }
}

/// What an analysis saw: the analyses' own kinds, finer than the product's five [`Family`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    CopyChain,
    Clone,
    Nath,
    MostlyNath,
    NeverUsed,
    RarelyUsed,
    WriteReadImbalance,
    LowUtility,
    Lifetime,
    Bottleneck,
}

/// The product's five kinds, which the analyses' finer kinds belong to: a clone is a copy chain
/// between two structures; mostly-NATH is NATH; never-used, rarely-used and write-read imbalance
/// say a structure is built but little used, as low-utility does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    CopyChain,
    Nath,
    LowUtility,
    Lifetime,
    Bottleneck,
}

impl Family {
    pub const ALL: [Family; 5] =
        [Family::CopyChain, Family::Nath, Family::LowUtility, Family::Lifetime, Family::Bottleneck];

    /// The name the JSON, the CLI's `--fail-on` and the corpus's `// expect:` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::CopyChain => "copy-chain",
            Family::Nath => "nath",
            Family::LowUtility => "low-utility",
            Family::Lifetime => "lifetime",
            Family::Bottleneck => "bottleneck",
        }
    }

    pub fn parse(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.as_str() == name)
    }
}

impl Kind {
    /// Every finding kind a report may hold, in the order the SARIF rules list them.
    pub const ALL: [Kind; 10] = [
        Kind::CopyChain,
        Kind::Clone,
        Kind::Nath,
        Kind::MostlyNath,
        Kind::NeverUsed,
        Kind::RarelyUsed,
        Kind::WriteReadImbalance,
        Kind::LowUtility,
        Kind::Lifetime,
        Kind::Bottleneck,
    ];

    /// The name the JSON uses (`copy-chain`, `write-read-imbalance`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::CopyChain => "copy-chain",
            Kind::Clone => "clone",
            Kind::Nath => "nath",
            Kind::MostlyNath => "mostly-nath",
            Kind::NeverUsed => "never-used",
            Kind::RarelyUsed => "rarely-used",
            Kind::WriteReadImbalance => "write-read-imbalance",
            Kind::LowUtility => "low-utility",
            Kind::Lifetime => "lifetime",
            Kind::Bottleneck => "bottleneck",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    pub fn family(self) -> Family {
        match self {
            Kind::CopyChain | Kind::Clone => Family::CopyChain,
            Kind::Nath | Kind::MostlyNath => Family::Nath,
            Kind::NeverUsed | Kind::RarelyUsed | Kind::WriteReadImbalance | Kind::LowUtility => Family::LowUtility,
            Kind::Lifetime => Family::Lifetime,
            Kind::Bottleneck => Family::Bottleneck,
        }
    }

    /// The kind as the reader knows it: `copy chain`, `NATH`, `low utility`.
    pub fn label(self) -> &'static str {
        match self {
            Kind::CopyChain => "copy chain",
            Kind::Clone => "clone",
            Kind::Nath => "NATH",
            Kind::MostlyNath => "mostly NATH",
            Kind::NeverUsed => "never used",
            Kind::RarelyUsed => "rarely used",
            Kind::WriteReadImbalance => "written, not read",
            Kind::LowUtility => "low utility",
            Kind::Lifetime => "lifetime",
            Kind::Bottleneck => "bottleneck",
        }
    }

    /// The kind's name in plain words, for a developer who has not met it (hovers, SARIF rules' help).
    pub fn glossary(self) -> &'static str {
        match self.family() {
            Family::CopyChain if self == Kind::Clone => "A clone: one structure's data copied field by field into another of the same shape.",
            Family::CopyChain => "A copy chain: the same values moved from object to object (heap to stack to heap) with no computation in between.",
            Family::Nath => "NATH (never assigned to the heap): objects that are made, used on the stack, and dropped without ever being stored in a field, array or collection.",
            Family::LowUtility => "Low utility: work spent building data that is (almost) never read.",
            Family::Lifetime => "Lifetime: how long this line's objects live, measured in bytes allocated while they are alive.",
            Family::Bottleneck => "Bottleneck: a call path that carries a large share of the run's cost.",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How prominently a finding is shown: `warning` (the report's top findings), `info` (shown) or
/// `hint` (hidden).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Info,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }
}

/// A lifetime finding's histogram as text rows (`≥ 4 KB  ████ 120`), for terminals and hovers.
pub fn histogram_rows(f: &Finding) -> Vec<String> {
    let Some(lifetime) = f.evidence.lifetime() else { return Vec::new() };
    let buckets = &lifetime.histogram;
    let max = buckets.iter().map(|b| b.objects).max().unwrap_or(1).max(1);
    buckets
        .iter()
        .map(|b| {
            let bar = "█".repeat(((b.objects * 20).div_ceil(max)) as usize);
            format!("≥ {:>8} {bar} {}", human_bytes(b.from_bytes), b.objects)
        })
        .collect()
}

/// A duration as people read it: `850 ms`, `2.0 s`, `1 min 5 s`.
pub fn human_duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    match ms {
        0..=999 => format!("{ms} ms"),
        1000..=59_999 => format!("{:.1} s", d.as_secs_f64()),
        _ => match d.as_secs() % 60 {
            0 => format!("{} min", d.as_secs() / 60),
            s => format!("{} min {s} s", d.as_secs() / 60),
        },
    }
}

/// A size as people read it, the one format of the CLI and the editor: `512 B`, `1.5 KB`, `4 KB`,
/// `347 KB`, `8.6 MB` — powers of 1024 (as the JVM's `-Xmx512m` and the lifetimes' log2 buckets
/// count), one decimal below 10, none above.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut value = b as f64 / 1024.0;
    let mut unit = 0;
    loop {
        // Rounded as it will be printed, so that 1023.96 KB reads as 1 MB, not 1024 KB.
        let shown = if value < 9.95 { (value * 10.0).round() / 10.0 } else { value.round() };
        if shown < 1024.0 || unit == UNITS.len() - 1 {
            return if shown < 10.0 && shown.fract() != 0.0 {
                format!("{shown:.1} {}", UNITS[unit])
            } else {
                format!("{shown:.0} {}", UNITS[unit])
            };
        }
        value /= 1024.0;
        unit += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn sizes_read_in_one_format() {
        let cases = [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1 KB"),
            (1536, "1.5 KB"),
            (2000, "2 KB"),
            (8000, "7.8 KB"),
            (10_188, "9.9 KB"),
            (10_200, "10 KB"),
            (40_000, "39 KB"),
            (355_162, "347 KB"),
            (1_048_575, "1 MB"),
            (1 << 20, "1 MB"),
            (9_000_000, "8.6 MB"),
            (28_800_000, "27 MB"),
            (5 << 30, "5 GB"),
        ];
        for (b, s) in cases {
            assert_eq!(human_bytes(b), s, "{b} bytes");
        }
    }
}
