//! The figures behind a finding, typed per analysis: one struct per kind of evidence, under the
//! names the JSON report gives them (`docs/report-schema.md`, "Scores and evidence by kind").
//!
//! A finding holds its evidence as an [`Evidence`], whose variant is the finding's kind: the two
//! cannot disagree. In the JSON, the kind is the finding's `kind` and the variant's struct is its
//! `evidence` object.
//!
//! Each struct declares its fields in alphabetical order, the order of the keys reports have
//! always had. Fields an earlier report of the same schema lacks read as their defaults (figures
//! are only added within a schema version), except the two that tell a filled collection from a
//! low-utility structure.

use crate::analysis::calltree::Metric;
use crate::patterns::Pattern;
use crate::report::{Kind, Location};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a finding's analysis saw and the figures behind it; the variant is the finding's kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Evidence {
    CopyChain(CopyChainEvidence),
    Clone(CloneEvidence),
    /// NATH, mostly NATH, never used, rarely used and write-read imbalance: reference
    /// propagation's figures of one allocation site, and which of its verdicts this is.
    Usage(UsageKind, UsageEvidence),
    /// A structure that costs far more to build than it is used for (cost-benefit).
    LowUtility(LowUtilityEvidence),
    /// A collection the program fills and never reads, or only asks for its size (reference
    /// propagation); its kind is low-utility too.
    FilledCollection(FilledCollectionEvidence),
    Lifetime(LifetimeEvidence),
    Bottleneck(BottleneckEvidence),
}

/// Which of reference propagation's verdicts about an allocation site a usage finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UsageKind {
    Nath,
    MostlyNath,
    NeverUsed,
    RarelyUsed,
    WriteReadImbalance,
}

impl UsageKind {
    pub fn kind(self) -> Kind {
        match self {
            UsageKind::Nath => Kind::Nath,
            UsageKind::MostlyNath => Kind::MostlyNath,
            UsageKind::NeverUsed => Kind::NeverUsed,
            UsageKind::RarelyUsed => Kind::RarelyUsed,
            UsageKind::WriteReadImbalance => Kind::WriteReadImbalance,
        }
    }
}

/// A value moved heap → stack → heap, hop after hop, with no computation in between.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CopyChainEvidence {
    /// Findings merged into this one (see [`AlsoEntry`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<AlsoEntry>,
    /// Size of the copied value.
    pub bytes: u64,
    /// Whether the copies ever reach a computation or a native (false: the strong symptom).
    pub consumed: bool,
    /// The field whose value goes into the container, or the first hop's (`Customer.email`).
    pub field: String,
    /// The fields of the chains merged into this one, when there are several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields_copied: Option<Vec<String>>,
    /// The smallest edge frequency of the path: how many values went all the way.
    pub frequency: u64,
    /// The first hop reads a table's elements (a lookup, which is the computation).
    pub from_a_table: bool,
    /// The copy graph's nodes of the path, source first.
    pub graph_nodes: Vec<u64>,
    pub hops: u64,
    /// How often the finding's call site ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_ran: Option<u64>,
    /// Chains with one key are one problem: the method, and whether it copies into a container.
    pub merge_key: String,
    /// Counted until a budget or a cancel stopped the run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// The nodes' names, source first.
    pub path: Vec<String>,
    /// The allocation whose reference or data starts the chain, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer: Option<String>,
    /// Library containers or boxes the value passes through on its way (put in, taken out again):
    /// work a fix saves on top of the copies.
    pub through_containers: u64,
    /// The chain moves the program's data (false: only a library's bookkeeping, such as a cursor).
    pub user_data: bool,
    /// The chain copies into an intermediate container (a map's entry, an array, a box).
    pub via_container: bool,
    /// frequency × bytes.
    pub volume: u64,
    /// hops × frequency × bytes: the finding's score.
    pub waste_factor: u64,
}

/// A structure rebuilt copy by copy from another of the same type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CloneEvidence {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<AlsoEntry>,
    /// The copy graph's nodes of the clone's heaviest copies.
    pub graph_nodes: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_ran: Option<u64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// The original's allocation, as the copy analysis names it.
    pub source: String,
    /// The clone's allocation.
    pub target: String,
    /// Bytes copied from the original's object graph into the clone's.
    pub volume: u64,
}

/// What became of one allocation site's objects (reference propagation), per calling context or,
/// with `contexts`, for all the contexts of a line that agree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UsageEvidence {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<AlsoEntry>,
    /// Bytes the objects take.
    pub bytes: u64,
    /// Distinct call and return sites the references pass through (an ease-of-fix figure).
    pub call_return_nodes: u64,
    /// Calling contexts summed, for a finding that speaks for its whole line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contexts: Option<u64>,
    /// A collection never filled: only its constructor and size or emptiness were called.
    pub empty_collection: bool,
    /// Where a small factory made the objects (file, line), when the finding is at its caller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub factory_at: Option<(Option<String>, Option<u32>)>,
    /// Strings a library made from a value (a number's digits), not from other text.
    pub from_value: bool,
    /// The reference graph's node of the site.
    pub graph_nodes: Vec<u64>,
    /// The user's code makes, uses, stores or passes the objects (false: a library's insides).
    pub handled_by_user: bool,
    /// Distinct heap read and write sites of the references (an ease-of-fix figure).
    pub heap_nodes: u64,
    pub heap_reads: u64,
    pub heap_writes: u64,
    /// Never stored and reaching only code HotSpot inlines (its escape analysis removes them).
    pub inlined: bool,
    pub instances: u64,
    /// Bytes the library allocated inside these objects on the same line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub internal_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_ran: Option<u64>,
    /// Temporaries whose only uses are hashing and comparing inside the JDK (a lookup's key).
    pub lookup_key: bool,
    /// A library method made the objects, on behalf of the user's line.
    pub made_by_library: bool,
    /// Objects never stored into a field, an array element or a static.
    pub nath_objects: u64,
    /// Heap writes per read, for a write-read imbalance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<WritesPerRead>,
    /// The largest method the objects reach, in bytecode bytes.
    pub reach_code: u64,
    #[serde(rename = "type")]
    pub type_name: String,
    /// Objects used: a field read or written, a call on them, a comparison or a cast.
    pub used_objects: u64,
    /// Objects handed whole to a text output (a `Writer`, a builder, a concatenation).
    pub written_objects: u64,
}

/// Heap writes per heap read of a site's references; `"inf"` in the JSON when none is read back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WritesPerRead(pub f64);

impl Serialize for WritesPerRead {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            s.serialize_f64(self.0)
        } else {
            s.serialize_str("inf")
        }
    }
}

impl<'de> Deserialize<'de> for WritesPerRead {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Ratio(f64),
            Words(String),
        }
        match Written::deserialize(d)? {
            Written::Ratio(x) => Ok(WritesPerRead(x)),
            Written::Words(w) if w == "inf" => Ok(WritesPerRead(f64::INFINITY)),
            Written::Words(w) => Err(serde::de::Error::custom(format!("a ratio is a number or \"inf\", not {w:?}"))),
        }
    }
}

/// A structure whose fields cost far more to compute than their values are used for
/// (cost-benefit), or whose fields nobody reads cost much.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LowUtilityEvidence {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<AlsoEntry>,
    /// What a fix saves: `n_rac`, or the unread fields' cost when the rest of the structure is used.
    pub avoidable_cost: f64,
    /// Context slots of the site seen.
    pub contexts: u64,
    /// The site's own fields, costliest first.
    pub fields: Vec<FieldCost>,
    pub instances: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub internal_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_ran: Option<u64>,
    pub made_by_library: bool,
    /// What is read from the structure is used for, in instructions (its n-RAB).
    pub n_rab: f64,
    /// What building the structure costs, in instructions (its n-RAC).
    pub n_rac: f64,
    /// n_rac / (n_rab + 1).
    pub rate: f64,
    /// Height of the reference trees the sums are over.
    pub tree_height: u64,
    #[serde(rename = "type")]
    pub type_name: String,
    /// What computing the fields nobody reads costs.
    pub unread_cost: f64,
    /// No calling context reads the unread fields (false: some callers' objects do).
    pub unread_everywhere: bool,
    /// Fields written and never read, costliest first.
    pub unread_fields: Vec<String>,
}

/// One field of a low-utility structure: what computing its values cost and what using them brought.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FieldCost {
    pub field: String,
    pub rab: f64,
    pub rac: f64,
}

/// A `java.util` collection the user's line makes and fills, then never reads (or only asks for
/// its size).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FilledCollectionEvidence {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<AlsoEntry>,
    /// The calls that make and fill it: what it costs.
    pub cost_sites: Vec<CallSite>,
    #[serde(default)]
    pub instances: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_ran: Option<u64>,
    /// Its size or emptiness is asked for (false: nothing at all is read).
    pub only_size: bool,
    #[serde(default, rename = "type")]
    pub type_name: String,
}

/// A call site as call counts are keyed; `[class, method, descriptor, bci]` in the JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "(String, String, String, u32)", into = "(String, String, String, u32)")]
pub struct CallSite {
    pub class: String,
    pub method: String,
    pub descriptor: String,
    pub bci: u32,
}

impl From<(String, String, String, u32)> for CallSite {
    fn from((class, method, descriptor, bci): (String, String, String, u32)) -> Self {
        CallSite { class, method, descriptor, bci }
    }
}

impl From<CallSite> for (String, String, String, u32) {
    fn from(s: CallSite) -> Self {
        (s.class, s.method, s.descriptor, s.bci)
    }
}

/// How long one allocation site's objects live, in bytes allocated while they are alive.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LifetimeEvidence {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<AlsoEntry>,
    pub bytes: u64,
    pub class: LifetimeClass,
    /// Young collections in the run.
    pub collections: u64,
    /// Immortal objects allocated all through the run: a possible leak.
    pub growing: bool,
    /// The heap the run ends with (immortal objects of every site), that `retained_bytes` is a share of.
    pub heap_at_end: u64,
    /// Log2 buckets of the bytes allocated while each dead object lived.
    pub histogram: Vec<HistogramBucket>,
    /// The HotSpot-sized young generation lifetimes are judged against.
    pub hotspot_young_bytes: u64,
    /// Objects that lived to the end of the run.
    pub immortal: u64,
    pub instances: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub internal_bytes: Option<u64>,
    /// Objects that pile up to the end while nothing reads them back (triage's verdict).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub leak: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_ran: Option<u64>,
    /// Objects that survived more than 15 young collections, then died.
    pub long: u64,
    pub made_by_library: bool,
    /// Objects that survived 1 to 15 young collections.
    pub medium: u64,
    /// Objects that died before the end having lived through `hotspot_young_bytes` of allocation.
    pub outlived_hotspot_young: u64,
    /// The bytes of the site's immortal objects.
    pub retained_bytes: u64,
    /// Objects that died before their first collection.
    pub short: u64,
    /// Of a mixed site, the objects of its short-lived calling contexts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_context_objects: Option<u64>,
    /// Of those, the bytes of the objects never stored in a field, an array or a static.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temporary_bytes: Option<u64>,
    /// Of those, the objects never stored in a field, an array or a static.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temporary_objects: Option<u64>,
    #[serde(rename = "type")]
    pub type_name: String,
    /// Objects whose death no collection saw classified.
    pub unclassified: u64,
    /// The profiler's own young generation.
    pub young_gen_bytes: u64,
}

impl LifetimeEvidence {
    /// The objects whose lifetime is known: short, medium, long and immortal ones.
    pub fn classified(&self) -> u64 {
        self.short + self.medium + self.long + self.immortal
    }
}

/// How long a site's objects live, by the class most of them are in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LifetimeClass {
    /// Dead before their first collection: the normal case.
    #[default]
    Short,
    Medium,
    Long,
    Immortal,
    /// Calling contexts disagree.
    Mixed,
}

impl LifetimeClass {
    /// The four classes an object can be in, in `by_class` order (a site may also be mixed).
    pub const OF_OBJECTS: [LifetimeClass; 4] =
        [LifetimeClass::Short, LifetimeClass::Medium, LifetimeClass::Long, LifetimeClass::Immortal];

    pub fn as_str(self) -> &'static str {
        match self {
            LifetimeClass::Short => "short",
            LifetimeClass::Medium => "medium",
            LifetimeClass::Long => "long",
            LifetimeClass::Immortal => "immortal",
            LifetimeClass::Mixed => "mixed",
        }
    }
}

/// Dead objects that lived through at least `from_bytes` (and less than twice that) of allocation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramBucket {
    pub from_bytes: u64,
    pub objects: u64,
}

/// A call sequence that carries a large share of the run's cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BottleneckEvidence {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<AlsoEntry>,
    /// Cost of the frames on the sequence's paths alone.
    pub base: i64,
    pub base_share: f64,
    /// Method labels, outermost first.
    pub calls: Vec<String>,
    /// Share of the run all the bottlenecks cover together.
    pub covered_by_all: f64,
    /// Cost of the sequence's paths and everything below them: the finding's score.
    pub cum: i64,
    /// This sequence's cum in the run given to `--compare`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cum_before: Option<i64>,
    /// The bytes the same calls allocate, whatever the metric: a fix saves them too.
    pub cum_bytes: u64,
    /// The change of its cum since that run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cum_change: Option<i64>,
    /// The calling-context tree's nodes of the sequence.
    pub graph_nodes: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_ran: Option<u64>,
    pub metric: Metric,
    /// Of `cum`, what the other bottlenecks also cover.
    pub overlap: i64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// Why a call on the sequence looks redundant (null: nothing repeats).
    pub repeated: Option<RepeatedWork>,
    /// cum / total.
    pub share: f64,
    /// What to look at, in a sentence.
    pub suggestion: String,
    /// The cost of the whole run (the JVM's start-up and shutdown left out).
    pub total: i64,
    /// Where the repeated work itself is done, when the finding is where it is repeated (null otherwise).
    pub work_location: Option<Location>,
}

/// Why a call on a bottleneck's sequence looks redundant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RepeatedWork {
    /// A call that goes over work as large as its caller's loop, once per iteration.
    #[serde(rename = "scan per iteration")]
    ScanPerIteration,
    /// Many calls with only a few distinct argument lists.
    #[serde(rename = "same arguments")]
    SameArguments,
    /// A regular expression compiled again on each call.
    #[serde(rename = "regex compiled per call")]
    RegexCompiledPerCall,
}

/// A finding merged into another: one of a kind on the same line (a chain per field copied into
/// one map), or part of the same problem (the never-used objects of a leak's line).
#[derive(Debug, Clone, PartialEq)]
pub struct AlsoEntry {
    pub evidence: Evidence,
    pub message: String,
    /// Its own pattern, when it was merged as part of another pattern's problem.
    pub pattern: Option<Pattern>,
    pub share: f64,
}

impl AlsoEntry {
    pub fn kind(&self) -> Kind {
        self.evidence.kind()
    }
}

/// An [`AlsoEntry`] as the JSON has it (keys in alphabetical order, as they always were).
#[derive(Serialize)]
struct AlsoOut<'a> {
    evidence: &'a Evidence,
    kind: Kind,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pattern: Option<Pattern>,
    share: f64,
}

#[derive(Deserialize)]
struct AlsoIn {
    #[serde(default)]
    evidence: serde_json::Value,
    kind: Kind,
    #[serde(default)]
    message: String,
    #[serde(default)]
    pattern: Option<Pattern>,
    #[serde(default)]
    share: f64,
}

impl Serialize for AlsoEntry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        AlsoOut {
            evidence: &self.evidence,
            kind: self.kind(),
            message: &self.message,
            pattern: self.pattern,
            share: self.share,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for AlsoEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let a = AlsoIn::deserialize(d)?;
        let evidence = Evidence::from_json(a.kind, a.evidence).map_err(serde::de::Error::custom)?;
        Ok(AlsoEntry { evidence, message: a.message, pattern: a.pattern, share: a.share })
    }
}

/// Low-utility evidence, told apart by the figures only a filled collection has.
#[derive(Deserialize)]
#[serde(untagged)]
enum LowUtilityIn {
    FilledCollection(FilledCollectionEvidence),
    Structure(LowUtilityEvidence),
}

impl Evidence {
    pub fn kind(&self) -> Kind {
        match self {
            Evidence::CopyChain(_) => Kind::CopyChain,
            Evidence::Clone(_) => Kind::Clone,
            Evidence::Usage(kind, _) => kind.kind(),
            Evidence::LowUtility(_) | Evidence::FilledCollection(_) => Kind::LowUtility,
            Evidence::Lifetime(_) => Kind::Lifetime,
            Evidence::Bottleneck(_) => Kind::Bottleneck,
        }
    }

    /// The evidence of a finding of `kind`, read from its JSON object. An empty object (or null)
    /// reads as the kind's evidence with every figure at its default.
    pub fn from_json(kind: Kind, json: serde_json::Value) -> Result<Evidence, serde_json::Error> {
        let json = if json.is_null() { serde_json::Value::Object(serde_json::Map::new()) } else { json };
        let usage = |k: UsageKind, json| Ok(Evidence::Usage(k, serde_json::from_value(json)?));
        match kind {
            Kind::CopyChain => Ok(Evidence::CopyChain(serde_json::from_value(json)?)),
            Kind::Clone => Ok(Evidence::Clone(serde_json::from_value(json)?)),
            Kind::Nath => usage(UsageKind::Nath, json),
            Kind::MostlyNath => usage(UsageKind::MostlyNath, json),
            Kind::NeverUsed => usage(UsageKind::NeverUsed, json),
            Kind::RarelyUsed => usage(UsageKind::RarelyUsed, json),
            Kind::WriteReadImbalance => usage(UsageKind::WriteReadImbalance, json),
            Kind::LowUtility => Ok(match serde_json::from_value(json)? {
                LowUtilityIn::FilledCollection(e) => Evidence::FilledCollection(e),
                LowUtilityIn::Structure(e) => Evidence::LowUtility(e),
            }),
            Kind::Lifetime => Ok(Evidence::Lifetime(serde_json::from_value(json)?)),
            Kind::Bottleneck => Ok(Evidence::Bottleneck(serde_json::from_value(json)?)),
        }
    }

    /// The findings merged into this one.
    pub fn also(&self) -> &[AlsoEntry] {
        match self {
            Evidence::CopyChain(e) => &e.also,
            Evidence::Clone(e) => &e.also,
            Evidence::Usage(_, e) => &e.also,
            Evidence::LowUtility(e) => &e.also,
            Evidence::FilledCollection(e) => &e.also,
            Evidence::Lifetime(e) => &e.also,
            Evidence::Bottleneck(e) => &e.also,
        }
    }

    pub fn also_mut(&mut self) -> &mut Vec<AlsoEntry> {
        match self {
            Evidence::CopyChain(e) => &mut e.also,
            Evidence::Clone(e) => &mut e.also,
            Evidence::Usage(_, e) => &mut e.also,
            Evidence::LowUtility(e) => &mut e.also,
            Evidence::FilledCollection(e) => &mut e.also,
            Evidence::Lifetime(e) => &mut e.also,
            Evidence::Bottleneck(e) => &mut e.also,
        }
    }

    /// How often the finding's call site ran.
    pub fn line_ran(&self) -> Option<u64> {
        match self {
            Evidence::CopyChain(e) => e.line_ran,
            Evidence::Clone(e) => e.line_ran,
            Evidence::Usage(_, e) => e.line_ran,
            Evidence::LowUtility(e) => e.line_ran,
            Evidence::FilledCollection(e) => e.line_ran,
            Evidence::Lifetime(e) => e.line_ran,
            Evidence::Bottleneck(e) => e.line_ran,
        }
    }

    pub fn set_line_ran(&mut self, runs: u64) {
        let line_ran = match self {
            Evidence::CopyChain(e) => &mut e.line_ran,
            Evidence::Clone(e) => &mut e.line_ran,
            Evidence::Usage(_, e) => &mut e.line_ran,
            Evidence::LowUtility(e) => &mut e.line_ran,
            Evidence::FilledCollection(e) => &mut e.line_ran,
            Evidence::Lifetime(e) => &mut e.line_ran,
            Evidence::Bottleneck(e) => &mut e.line_ran,
        };
        *line_ran = Some(runs);
    }

    /// Bytes the library allocated for the objects of the finding's line. Only findings about
    /// allocations have them: copies and call paths allocate nothing of their own.
    pub fn internal_bytes(&self) -> Option<u64> {
        match self {
            Evidence::Usage(_, e) => e.internal_bytes,
            Evidence::LowUtility(e) => e.internal_bytes,
            Evidence::FilledCollection(e) => e.internal_bytes,
            Evidence::Lifetime(e) => e.internal_bytes,
            Evidence::CopyChain(_) | Evidence::Clone(_) | Evidence::Bottleneck(_) => None,
        }
    }

    /// Records the library's bytes on the finding's line; see [`Evidence::internal_bytes`].
    pub fn set_internal_bytes(&mut self, bytes: u64) {
        match self {
            Evidence::Usage(_, e) => e.internal_bytes = Some(bytes),
            Evidence::LowUtility(e) => e.internal_bytes = Some(bytes),
            Evidence::FilledCollection(e) => e.internal_bytes = Some(bytes),
            Evidence::Lifetime(e) => e.internal_bytes = Some(bytes),
            Evidence::CopyChain(_) | Evidence::Clone(_) | Evidence::Bottleneck(_) => {}
        }
    }

    /// Marks figures counted until a budget or a cancel stopped the run. Only copies and costs
    /// have such figures: what objects came to needs the end of the run.
    pub fn mark_partial(&mut self) {
        match self {
            Evidence::CopyChain(e) => e.partial = true,
            Evidence::Clone(e) => e.partial = true,
            Evidence::Bottleneck(e) => e.partial = true,
            Evidence::Usage(..) | Evidence::LowUtility(_) | Evidence::FilledCollection(_) | Evidence::Lifetime(_) => {}
        }
    }

    /// The nodes of its analysis's graph the finding is about (none for the kinds without a graph).
    pub fn graph_nodes(&self) -> &[u64] {
        match self {
            Evidence::CopyChain(e) => &e.graph_nodes,
            Evidence::Clone(e) => &e.graph_nodes,
            Evidence::Usage(_, e) => &e.graph_nodes,
            Evidence::Bottleneck(e) => &e.graph_nodes,
            Evidence::LowUtility(_) | Evidence::FilledCollection(_) | Evidence::Lifetime(_) => &[],
        }
    }

    /// The type of the objects an allocation finding is about (`java.util.ArrayList`).
    pub fn type_name(&self) -> Option<&str> {
        match self {
            Evidence::Usage(_, e) => Some(&e.type_name),
            Evidence::LowUtility(e) => Some(&e.type_name),
            Evidence::FilledCollection(e) => Some(&e.type_name),
            Evidence::Lifetime(e) => Some(&e.type_name),
            Evidence::CopyChain(_) | Evidence::Clone(_) | Evidence::Bottleneck(_) => None,
        }
    }

    /// The usage figures of an allocation site (NATH, never used, …).
    pub fn usage(&self) -> Option<&UsageEvidence> {
        match self {
            Evidence::Usage(_, e) => Some(e),
            _ => None,
        }
    }

    pub fn lifetime(&self) -> Option<&LifetimeEvidence> {
        match self {
            Evidence::Lifetime(e) => Some(e),
            _ => None,
        }
    }

    pub fn bottleneck(&self) -> Option<&BottleneckEvidence> {
        match self {
            Evidence::Bottleneck(e) => Some(e),
            _ => None,
        }
    }
}

/// The JSON's `evidence` object: the variant's struct (the kind is written beside it).
impl Serialize for Evidence {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Evidence::CopyChain(e) => e.serialize(s),
            Evidence::Clone(e) => e.serialize(s),
            Evidence::Usage(_, e) => e.serialize(s),
            Evidence::LowUtility(e) => e.serialize(s),
            Evidence::FilledCollection(e) => e.serialize(s),
            Evidence::Lifetime(e) => e.serialize(s),
            Evidence::Bottleneck(e) => e.serialize(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the JSON says reads back as the same typed value, and writes out as the same JSON.
    fn round_trip(kind: Kind, json: serde_json::Value) -> Evidence {
        let e = Evidence::from_json(kind, json.clone()).expect("evidence");
        assert_eq!(e.kind(), kind);
        assert_eq!(serde_json::to_value(&e).unwrap(), json);
        e
    }

    #[test]
    fn low_utility_reads_as_a_structure_or_a_filled_collection() {
        let filled = json!({"cost_sites": [["Main", "run", "()V", 4]], "instances": 50, "only_size": true,
            "type": "java.util.ArrayList"});
        let Evidence::FilledCollection(c) = round_trip(Kind::LowUtility, filled) else { panic!("a collection") };
        assert_eq!(
            c.cost_sites[0],
            CallSite { class: "Main".into(), method: "run".into(), descriptor: "()V".into(), bci: 4 }
        );
        let structure = json!({"avoidable_cost": 624412.0, "contexts": 1, "fields": [{"field": "Object[] elements",
            "rab": 0.0, "rac": 14000.0}], "instances": 240, "made_by_library": true, "n_rab": 0.0, "n_rac": 624412.0,
            "rate": 624412.0, "tree_height": 4, "type": "java.lang.Object[]", "unread_cost": 0.0,
            "unread_everywhere": true, "unread_fields": []});
        assert!(matches!(round_trip(Kind::LowUtility, structure), Evidence::LowUtility(_)));
    }

    #[test]
    fn a_ratio_with_no_reads_is_written_inf() {
        let e = Evidence::Usage(
            UsageKind::WriteReadImbalance,
            UsageEvidence { ratio: Some(WritesPerRead(f64::INFINITY)), ..UsageEvidence::default() },
        );
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["ratio"], "inf");
        let back = Evidence::from_json(Kind::WriteReadImbalance, json).unwrap();
        assert_eq!(back.usage().and_then(|u| u.ratio).map(|r| r.0), Some(f64::INFINITY));
    }

    /// Merged findings keep their own kind and typed evidence, nested merges included.
    #[test]
    fn merged_findings_round_trip_with_their_kinds() {
        let nath = json!({"also": [{"evidence": {"class": "short", "type": "Main$P"}, "kind": "lifetime",
            "message": "short", "pattern": "temporary-string", "share": 0.01}], "instances": 10, "type": "Main$P"});
        let json = json!({"also": [{"evidence": nath, "kind": "nath", "message": "m", "share": 0.02}],
            "class": "immortal", "growing": true, "leak": true});
        let e = Evidence::from_json(Kind::Lifetime, json).unwrap();
        let also = &e.also()[0];
        assert_eq!(also.kind(), Kind::Nath);
        assert_eq!(also.evidence.also()[0].kind(), Kind::Lifetime);
        assert_eq!(also.evidence.also()[0].pattern, Some(Pattern::TemporaryString));
        let written = serde_json::to_string(&e).unwrap();
        assert!(written.starts_with(r#"{"also":[{"evidence":{"also":[{"evidence":{"#), "{written}");
    }

    /// Fields are written in alphabetical order, the order reports have always had: every field,
    /// the optional ones set.
    #[test]
    fn figures_are_written_in_alphabetical_order() {
        let some = Some(1);
        let kinds: [(Kind, Evidence); 7] = [
            (
                Kind::CopyChain,
                Evidence::CopyChain(CopyChainEvidence {
                    fields_copied: Some(vec!["a".into()]),
                    producer: Some("p".into()),
                    ..CopyChainEvidence::default()
                }),
            ),
            (Kind::Clone, Evidence::Clone(CloneEvidence::default())),
            (
                Kind::Nath,
                Evidence::Usage(
                    UsageKind::Nath,
                    UsageEvidence {
                        contexts: some,
                        factory_at: Some((None, None)),
                        ratio: Some(WritesPerRead(2.0)),
                        ..UsageEvidence::default()
                    },
                ),
            ),
            (Kind::LowUtility, Evidence::LowUtility(LowUtilityEvidence::default())),
            (Kind::LowUtility, Evidence::FilledCollection(FilledCollectionEvidence::default())),
            (
                Kind::Lifetime,
                Evidence::Lifetime(LifetimeEvidence {
                    leak: true,
                    short_context_objects: some,
                    temporary_bytes: some,
                    temporary_objects: some,
                    ..LifetimeEvidence::default()
                }),
            ),
            (
                Kind::Bottleneck,
                Evidence::Bottleneck(BottleneckEvidence {
                    cum_before: Some(1),
                    cum_change: Some(1),
                    ..BottleneckEvidence::default()
                }),
            ),
        ];
        for (kind, mut e) in kinds {
            assert_eq!(e.kind(), kind);
            e.set_line_ran(1);
            e.set_internal_bytes(1);
            e.mark_partial();
            let merged = AlsoEntry { evidence: e.clone(), message: String::new(), pattern: None, share: 0.0 };
            e.also_mut().push(merged);
            // The object's own keys, as written: the merged finding's left out.
            let merged = serde_json::to_string(e.also()).unwrap();
            let text = serde_json::to_string(&e).unwrap().replace(&merged, "[]");
            let json = serde_json::to_value(&e).unwrap();
            let mut written: Vec<&String> = json.as_object().unwrap().keys().collect();
            written.sort_by_key(|k| text.find(&format!("\"{k}\":")));
            let mut sorted = written.clone();
            sorted.sort();
            assert_eq!(written, sorted, "{kind}");
        }
    }
}
