//! Reference propagation (`seeds/reference-propagation.txt`, DESIGN §4.2).
//!
//! The paper builds a graph of reference-assignment nodes (producer × statement) and reads its
//! client analyses off it. Every figure those analyses need is a count over the references the
//! program moves, so this tracker counts them directly from the values the VM reports, per
//! producer — no per-slot shadow is needed:
//! - an object is *assigned to the heap* when a reference to it is stored into a field, a static
//!   or an array element; a site none of whose objects ever is, is NATH;
//! - an object is *used* when it is the base of a field or element access, a call's receiver, an
//!   operand of `instanceof`/`checkcast`/`==`/`!=`, or a native's argument — not inside its own
//!   constructor, and a null test is not a use;
//! - heap writes and reads of a producer's references give the write-read imbalance;
//! - the ease-of-fix figures count the distinct statements (call/return sites; heap read/write
//!   sites) its references pass through: the paper's reachable call/return and heap nodes.
//!
//! Producers are allocation site × 1-object-sensitive context × the first user frame that reached
//! a site inside the JDK, so every finding lands on a line the user can change.

use super::objects::{type_name, Locator, ObjectTags};
use super::words;
use crate::evidence::{CallSite, Evidence, FilledCollectionEvidence, UsageEvidence, UsageKind, WritesPerRead};
use crate::graphs::{Graph, GraphEdge, GraphNode};
use crate::report::{Finding, Kind, Location, Settings};
use crate::vm::class::{Class, ClassId, Method, MethodId};
use crate::vm::heap::Ref;
use crate::vm::tracker::{Alloc, Context, HeapLoc, RefPass, RefUse, Site, Tracker, Value};
use petgraph::graph::NodeIndex;
use rustc_hash::{FxHashMap, FxHashSet};

const HEAP: u8 = 1;
const USED: u8 = 2;
/// Handed whole to a method that copies its characters into an output or another text.
const WRITTEN: u8 = 4;

/// HotSpot's `FreqInlineSize`: the bytecode size up to which a hot call is inlined. An object that
/// only ever reaches methods this small, and is never stored or given to a native, does not escape
/// the compiled code that makes it: escape analysis removes its allocation.
const INLINED_CODE: u32 = 325;

/// HotSpot's `MaxInlineSize`: a method this small that makes and returns an object is a factory
/// (`TypeToken.get`, an `iterator()` wrapping another): what to change is the caller that calls it
/// per value, not the factory, which cannot do without the object.
const FACTORY_CODE: u32 = 35;

#[derive(Debug, Default, Clone)]
struct Stats {
    /// Objects of this producer ever assigned to the heap, ever used.
    in_heap: u64,
    used: u64,
    /// Heap stores and loads of references to its objects.
    writes: u64,
    reads: u64,
    /// Of the stores, those as a JDK map's key (`HashMap.Node.key`): the map reads a key by its
    /// hash and equality, not by loading it, so a key is in use however rarely it is loaded.
    key_writes: u64,
    /// Stores made by the library method that made the object, into a field: a collection's
    /// view or table, a lazily built cache, kept by the library for itself (`this.entrySet =
    /// new EntrySet()`). Not the user's to stop.
    own_writes: u64,
    /// Distinct call/return sites and heap read/write sites its references passed through.
    call_sites: FxHashSet<Site>,
    heap_sites: FxHashSet<Site>,
    /// Where its references were stored to the heap, and where its objects were first used, with counts.
    stores: FxHashMap<Site, u64>,
    uses: FxHashMap<Site, u64>,
    /// A `java.util` collection or map: the methods called on its objects (with the user's call
    /// sites that called them), to tell one only filled and asked for its size.
    collection: bool,
    calls_on: FxHashMap<MethodId, FxHashSet<Site>>,
    /// Objects handed whole to a text output ([`WRITTEN`]).
    written: u64,
    /// The largest bytecode size of a method its objects were called on, passed into or returned
    /// from; whether one was an argument of a native.
    reach_code: u32,
    to_native: bool,
    /// Objects made in a method of the user's code no larger than [`FACTORY_CODE`]: the call
    /// sites that called it, with counts; whether an object was returned from it.
    makers: FxHashMap<Site, u64>,
    returned: bool,
}

const MAX_SITES: usize = 64;

fn count_at(map: &mut FxHashMap<Site, u64>, site: Site) {
    if let Some(n) = map.get_mut(&site) {
        *n += 1;
    } else if map.len() < MAX_SITES {
        map.insert(site, 1);
    }
}

pub struct RefPropTracker {
    settings: Settings,
    pub objects: ObjectTags,
    stats: Vec<Stats>,
    /// HEAP and USED bits of each live object, by handle.
    flags: Vec<u8>,
    pub findings: Vec<Finding>,
    /// Build [`RefPropTracker::graph`] when the run ends (for `--format dot`).
    pub keep_graph: bool,
    pub graph: Option<Graph>,
    /// Per class (by id, filled on first sight): the slot of its `key` field when it is a JDK
    /// map's entry (`java.util.HashMap$Node`, `TreeMap$Entry`, `ConcurrentHashMap$Node`).
    key_slots: Vec<Option<Option<u32>>>,
    /// Per method (by id, filled on first call): whether it copies a text argument into an
    /// output or another text.
    text_sinks: Vec<Option<bool>>,
}

impl RefPropTracker {
    pub fn new(settings: Settings) -> Self {
        RefPropTracker {
            objects: ObjectTags::new(settings.context_slots, true),
            settings,
            stats: Vec::new(),
            flags: Vec::new(),
            findings: Vec::new(),
            keep_graph: false,
            graph: None,
            key_slots: Vec::new(),
            text_sinks: Vec::new(),
        }
    }

    /// Whether `m` copies the characters of a text argument into an output or another text:
    /// `append`, `write`, `print`, `insert` of an `Appendable` (a `Writer`, a `StringBuilder`, a
    /// `PrintStream`; the VM's string concatenation is a `StringBuilder` chain), `String.concat`.
    fn copies_text(&mut self, methods: &[Method], classes: &[Class], m: MethodId) -> bool {
        let i = m as usize;
        if i >= self.text_sinks.len() {
            self.text_sinks.resize(i + 1, None);
        }
        *self.text_sinks[i].get_or_insert_with(|| {
            let method = &methods[i];
            let class = &classes[method.class as usize];
            match &*method.name {
                "append" | "write" | "print" | "println" | "insert" => {
                    class.supertypes.iter().any(|&t| &*classes[t as usize].name == "java/lang/Appendable")
                }
                "concat" => &*class.name == "java/lang/String",
                _ => false,
            }
        })
    }

    /// Whether the field at `slot` of `class`'s objects is a JDK map entry's key.
    fn is_map_key(&mut self, classes: &[Class], class: ClassId, slot: u32) -> bool {
        let i = class as usize;
        if i >= self.key_slots.len() {
            self.key_slots.resize(i + 1, None);
        }
        *self.key_slots[i].get_or_insert_with(|| {
            let entry = |c: &Class| c.name.starts_with("java/util/") && c.name.contains('$');
            let mut c = entry(&classes[i]).then_some(class);
            while let Some(id) = c {
                let k = &classes[id as usize];
                if let Some(f) = k.fields.iter().find(|f| !f.is_static() && f.name.as_ref() == "key") {
                    return Some(f.slot);
                }
                c = k.super_class;
            }
            None
        }) == Some(slot)
    }

    /// Sets `bit` on `obj`; returns its producer when the bit was newly set.
    #[inline]
    fn mark(&mut self, obj: Ref, bit: u8) -> Option<usize> {
        let p = self.objects.producer_of(obj)? as usize;
        let f = &mut self.flags[obj as usize];
        if *f & bit != 0 {
            return None;
        }
        *f |= bit;
        Some(p)
    }
}

impl Tracker for RefPropTracker {
    const FLOW: bool = true;

    fn on_alloc(&mut self, cx: &Context, a: &Alloc) {
        let (p, obj) = (self.objects.on_alloc(a, cx.user_frame(a.site)) as usize, a.obj);
        if p >= self.stats.len() {
            self.stats.resize_with(p + 1, Stats::default);
            self.stats[p].collection = is_collection(cx.classes, a.class);
        }
        let i = obj as usize;
        if i >= self.flags.len() {
            self.flags.resize(i + 1, 0);
        }
        self.flags[i] = 0;
        if cx.is_user(a.site.method) && code_size(cx.methods, a.site.method) <= FACTORY_CODE {
            // Callers' pcs point past their call op.
            if let Some(caller) = cx.frames.len().checked_sub(2).map(|i| &cx.frames[i]) {
                count_at(&mut self.stats[p].makers, Site { method: caller.method, pc: caller.pc.saturating_sub(1) });
            }
        }
    }

    fn on_free(&mut self, obj: Ref, _: ClassId, _: usize) {
        self.objects.on_free(obj);
    }

    fn flow_load(&mut self, _: &Context, site: Site, _: HeapLoc, value: Value, _: usize) {
        if !value.is_ref || value.bits == 0 {
            return;
        }
        if let Some(p) = self.objects.producer_of(value.bits as Ref) {
            let s = &mut self.stats[p as usize];
            s.reads += 1;
            s.heap_sites.insert(site);
        }
    }

    fn flow_store(&mut self, cx: &Context, site: Site, to: HeapLoc, value: Value, _: u8, _: usize) {
        if !value.is_ref || value.bits == 0 {
            return;
        }
        let obj = value.bits as Ref;
        if let Some(p) = self.mark(obj, HEAP) {
            self.stats[p].in_heap += 1;
        }
        if let Some(p) = self.objects.producer_of(obj) {
            let key = match to {
                HeapLoc::Field { obj: holder, slot } => self
                    .objects
                    .producer_of(holder)
                    .map(|h| self.objects.producers[h as usize].class)
                    .is_some_and(|class| self.is_map_key(cx.classes, class, slot)),
                _ => false,
            };
            let made_by = self.objects.producers[p as usize].site.method;
            let own = matches!(to, HeapLoc::Field { .. }) && made_by == site.method && !cx.is_user(site.method);
            let s = &mut self.stats[p as usize];
            s.key_writes += key as u64;
            s.own_writes += own as u64;
            s.writes += 1;
            s.heap_sites.insert(site);
            count_at(&mut s.stores, site);
        }
    }

    fn flow_use(&mut self, _: &Context, site: Site, obj: Ref, how: RefUse) {
        if how == RefUse::Native {
            if let Some(p) = self.objects.producer_of(obj) {
                self.stats[p as usize].to_native = true;
            }
        }
        // Where objects are first used (counting every use would cost a lookup per field access).
        if let Some(p) = self.mark(obj, USED) {
            let s = &mut self.stats[p];
            s.used += 1;
            count_at(&mut s.uses, site);
        }
    }

    fn on_call(&mut self, site: Site, callee: MethodId, _: usize, this: Ref, args: &crate::vm::tracker::Arguments) {
        if this == 0 {
            return;
        }
        if let Some(p) = self.objects.producer_of(this) {
            let s = &mut self.stats[p as usize];
            s.reach_code = s.reach_code.max(code_size(args.methods, callee));
            if s.collection && (s.calls_on.len() < MAX_SITES || s.calls_on.contains_key(&callee)) {
                let sites = s.calls_on.entry(callee).or_default();
                if sites.len() < 8 {
                    sites.insert(site);
                }
            }
        }
    }

    fn flow_pass(&mut self, cx: &Context, site: Site, obj: Ref, how: RefPass) {
        let Some(p) = self.objects.producer_of(obj) else { return };
        let (p, reached) = (
            p as usize,
            match how {
                RefPass::Argument(callee) => callee,
                RefPass::Return => site.method,
            },
        );
        let made_here = self.objects.producers[p].site.method == site.method;
        let s = &mut self.stats[p];
        s.returned |= how == RefPass::Return && made_here;
        s.call_sites.insert(site);
        s.reach_code = s.reach_code.max(code_size(cx.methods, reached));
        if let RefPass::Argument(callee) = how {
            if self.copies_text(cx.methods, cx.classes, callee) && self.mark(obj, WRITTEN).is_some() {
                self.stats[p].written += 1;
            }
        }
    }

    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        self.findings = self.build(methods, classes);
        if self.keep_graph {
            self.graph = Some(self.named_graph(methods, classes));
        }
    }
}

impl RefPropTracker {
    /// The user line producer `p`'s findings go on: its first user frame, or, for objects a small
    /// factory of the user's code makes and returns, the user's call of the factory that made
    /// most of them.
    fn placed(&self, p: usize, methods: &[Method], classes: &[Class]) -> Option<Site> {
        let (prod, st) = (&self.objects.producers[p], &self.stats[p]);
        let caller = st
            .makers
            .iter()
            .max_by_key(|(s, n)| (**n, std::cmp::Reverse(**s)))
            .filter(|(_, n)| **n * 2 >= prod.instances);
        match caller {
            Some((&site, _)) if st.returned && crate::vm::tracker::is_user_method(methods, classes, site.method) => {
                Some(site)
            }
            _ => prod.user,
        }
    }

    /// The reference-propagation graph as it stands at the end: each allocation site with enough
    /// objects (in the source's words, with its figures) joined to the call/return and heap access
    /// sites its references passed through, and the stores that put them into the heap.
    fn named_graph(&self, methods: &[Method], classes: &[Class]) -> Graph {
        let mut locator = Locator::default();
        let mut loc = |site: Site| -> Location {
            locator.resolve(methods, classes, site);
            locator.get(site)
        };
        let mut g = Graph::new();
        let mut sites: FxHashMap<Site, NodeIndex> = FxHashMap::default();
        for (p, prod) in self.objects.producers.iter().enumerate() {
            let (st, Some(user)) = (&self.stats[p], prod.user) else { continue };
            if prod.instances < self.settings.min_instances {
                continue;
            }
            let at = loc(user);
            let made_in = (prod.site != user).then(|| loc(prod.site));
            let name = format!(
                "{} ({})",
                words::allocation_subject(&at, &type_name(classes, prod.class), made_in.as_ref()),
                at.short()
            );
            let figures = format!(
                "{} objects, {} never stored, {} used",
                words::count(prod.instances),
                words::count(prod.instances - st.in_heap.min(prod.instances)),
                words::count(st.used)
            );
            let node = g.add_node(GraphNode { name, figures, user: prod.site == user, id: Some(p as u64) });
            let mut join = |site: Site, label: String, weight: u64, g: &mut Graph| {
                let s = *sites.entry(site).or_insert_with(|| {
                    let l = loc(site);
                    let what = l.expression.clone().unwrap_or_else(|| words::short_method(&l.class, &l.method));
                    let user = crate::vm::tracker::is_user_method(methods, classes, site.method);
                    g.add_node(GraphNode {
                        name: format!("{what} ({})", l.short()),
                        figures: String::new(),
                        user,
                        id: None,
                    })
                });
                g.add_edge(node, s, GraphEdge { label, weight });
            };
            let mut calls: Vec<Site> = st.call_sites.iter().copied().collect();
            calls.sort();
            for site in calls {
                join(site, "passed".into(), 1, &mut g);
            }
            let mut stores: Vec<(Site, u64)> = st.stores.iter().map(|(&s, &n)| (s, n)).collect();
            stores.sort();
            for (site, n) in stores {
                join(site, format!("stored {}×", words::count(n)), n, &mut g);
            }
        }
        g
    }

    fn build(&self, methods: &[Method], classes: &[Class]) -> Vec<Finding> {
        let s = &self.settings;
        let mut locator = Locator::default();
        let mut loc = |site: Site| -> Location {
            locator.resolve(methods, classes, site);
            locator.get(site)
        };
        // A line's allocation in all its calling contexts (producers are split by context).
        #[derive(Default)]
        struct Line {
            instances: u64,
            bytes: u64,
            contexts: u64,
            /// Objects never stored, objects used, over all contexts.
            nath: u64,
            used: u64,
            written: u64,
            /// No context's objects reach a native or a method too large to inline.
            inlined: bool,
            /// Its largest context, which speaks for the line when all contexts agree.
            largest: usize,
        }
        // Where each producer's findings go: its first user frame, or the caller of its factory.
        let placed: Vec<Option<Site>> =
            (0..self.objects.producers.len()).map(|p| self.placed(p, methods, classes)).collect();
        let mut lines: FxHashMap<(Site, Site), Line> = FxHashMap::default();
        for (p, prod) in self.objects.producers.iter().enumerate() {
            let Some(user) = placed[p] else { continue };
            let l =
                lines.entry((prod.site, user)).or_insert_with(|| Line { largest: p, inlined: true, ..Line::default() });
            l.instances += prod.instances;
            l.bytes += prod.bytes;
            l.contexts += 1;
            l.nath += prod.instances - self.stats[p].in_heap.min(prod.instances);
            l.used += self.stats[p].used;
            l.written += self.stats[p].written;
            l.inlined &= stays_inlined(&self.stats[p]);
            if prod.instances > self.objects.producers[l.largest].instances {
                l.largest = p;
            }
        }
        let mut by_kind: FxHashMap<Kind, Vec<Finding>> = FxHashMap::default();
        for (p, prod) in self.objects.producers.iter().enumerate() {
            let st = &self.stats[p];
            let Some(user) = placed[p] else { continue };
            let line = &lines[&(prod.site, user)];
            // NATH and never-used are said once for a line all of whose contexts agree, with all
            // its objects (by its largest context); other verdicts are per context.
            let split = line.contexts > 1;
            let speaks = line.largest == p && line.instances >= s.min_instances;
            let (line_nath, line_unused) = (split && line.nath == line.instances, split && line.used == 0);
            if prod.instances < s.min_instances && !(speaks && (line_nath || line_unused)) {
                continue;
            }
            let n = prod.instances;
            let nath = n - st.in_heap.min(n);
            let type_name = type_name(classes, prod.class);
            let location = loc(user);
            let at_jdk = (prod.site != user).then(|| loc(prod.site));
            let what = words::allocation_subject(&location, &type_name, at_jdk.as_ref());
            let made_by_library = Some(prod.site) != prod.user;
            let from_value = made_by_library && makes_text_of_a_value(methods, classes, prod.site.method);
            // Whether the user's code ever touches these objects (makes, uses, stores or passes
            // them): if not, they are a library structure's insides.
            let user_site = |site: &Site| crate::vm::tracker::is_user_method(methods, classes, site.method);
            let handled_by_user = prod.site == user
                || st.uses.keys().any(user_site)
                || st.stores.keys().any(user_site)
                || st.call_sites.iter().any(user_site)
                || st.heap_sites.iter().any(user_site);
            // Temporaries whose only uses are hashing and comparing inside the JDK: keys made for
            // a lookup (`map.get(a + "@" + b)`).
            let lookup_key = nath == n
                && !st.uses.is_empty()
                && st.uses.keys().all(|site| {
                    let m = &methods[site.method as usize];
                    !user_site(site) && matches!(&*m.name, "hashCode" | "equals" | "hash" | "getNode" | "compareTo")
                });
            let base = |kind: UsageKind, score: f64, message: String| {
                let evidence = UsageEvidence {
                    bytes: prod.bytes,
                    call_return_nodes: st.call_sites.len() as u64,
                    empty_collection: st.collection && never_filled(st, methods),
                    // Placed at the factory's caller: where the factory made them, for what is said
                    // of the objects on their own line (their lifetime).
                    factory_at: at_jdk.as_ref().filter(|_| Some(user) != prod.user).map(|j| (j.file.clone(), j.line)),
                    from_value,
                    graph_nodes: vec![p as u64],
                    handled_by_user,
                    heap_nodes: st.heap_sites.len() as u64,
                    heap_reads: st.reads,
                    heap_writes: st.writes,
                    inlined: nath == n && stays_inlined(st),
                    instances: n,
                    lookup_key,
                    made_by_library,
                    nath_objects: nath,
                    reach_code: st.reach_code.into(),
                    type_name: type_name.clone(),
                    used_objects: st.used,
                    written_objects: st.written,
                    ..UsageEvidence::default()
                };
                let mut f = Finding::new(Evidence::Usage(kind, evidence), score, message, location.clone());
                if let Some(j) = &at_jdk {
                    f = f.related(j.clone(), format!("allocated inside {}", words::short_method(&j.class, &j.method)));
                }
                f
            };
            let top = |map: &FxHashMap<Site, u64>, k: usize| -> Vec<(Site, u64)> {
                let mut v: Vec<(Site, u64)> = map.iter().map(|(&a, &b)| (a, b)).collect();
                v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                v.truncate(k);
                v
            };
            // Instantiations first, then bytes: the paper's ranking.
            let score = n as f64 + prod.bytes as f64 / 1e9;
            // The line's figures in a finding for all its contexts.
            let whole_line = |mut f: Finding| {
                if let Evidence::Usage(_, u) = &mut f.evidence {
                    u.instances = line.instances;
                    u.bytes = line.bytes;
                    u.nath_objects = line.nath;
                    u.used_objects = line.used;
                    u.written_objects = line.written;
                    u.inlined = line.inlined;
                    u.contexts = Some(line.contexts);
                }
                f
            };
            let line_score = line.instances as f64 + line.bytes as f64 / 1e9;
            let temporaries = "temporaries, never stored in a field, array or collection (NATH)";
            let all_temporaries =
                |n: u64| format!("{what}: all {} are {temporaries}", words::plural(n, "object", "objects"));
            let none_used = |n: u64| {
                format!(
                    "{what}: none of its {} objects is ever used (no field read or written, no call on it)",
                    words::count(n)
                )
            };
            if line_nath && speaks {
                let f = base(UsageKind::Nath, line_score, all_temporaries(line.instances));
                by_kind.entry(Kind::Nath).or_default().push(whole_line(f));
            }
            if line_unused && speaks {
                let f = base(UsageKind::NeverUsed, line_score, none_used(line.instances));
                by_kind.entry(Kind::NeverUsed).or_default().push(whole_line(f));
            }
            if prod.instances < s.min_instances {
                continue;
            }
            // This context's own verdicts.
            if st.in_heap == 0 {
                if !line_nath {
                    let msg = match split {
                        false => all_temporaries(n),
                        true => format!(
                            "{what}: the {} made in one calling context (of {} made here) are {temporaries}",
                            words::plural(n, "object", "objects"),
                            words::count(line.instances)
                        ),
                    };
                    by_kind.entry(Kind::Nath).or_default().push(base(UsageKind::Nath, score, msg));
                }
            } else if nath as f64 >= s.mostly_nath * n as f64 {
                let pct = 100.0 * nath as f64 / n as f64;
                let mut f = base(
                    UsageKind::MostlyNath,
                    score,
                    format!(
                        "{what}: {} of {} objects ({pct:.0}%) are never stored in a field, array or collection (mostly NATH)",
                        words::count(nath),
                        words::count(n)
                    ),
                );
                for (site, count) in top(&st.stores, 3) {
                    f = f.related(loc(site), format!("stored here ({count}×)"));
                }
                by_kind.entry(Kind::MostlyNath).or_default().push(f);
            }
            if st.used == 0 {
                if !line_unused {
                    by_kind.entry(Kind::NeverUsed).or_default().push(base(UsageKind::NeverUsed, score, none_used(n)));
                }
            } else if (st.used as f64) < s.rarely_used * n as f64 {
                let pct = 100.0 * st.used as f64 / n as f64;
                let mut f = base(
                    UsageKind::RarelyUsed,
                    score,
                    format!(
                        "{what}: only {} of {} objects ({pct:.1}%) are ever used",
                        words::count(st.used),
                        words::count(n)
                    ),
                );
                for (site, count) in top(&st.uses, 3) {
                    f = f.related(loc(site), format!("used here ({count}×)"));
                }
                by_kind.entry(Kind::RarelyUsed).or_default().push(f);
            }
            if let Some(f) = self.only_filled(prod, st, &what, methods, classes, &mut loc) {
                by_kind.entry(Kind::LowUtility).or_default().push(f);
            }
            // Write-read imbalance, for objects that do reach the heap.
            let writes = st.writes - st.key_writes - st.own_writes;
            if writes > 0 && (st.reads == 0 || writes as f64 >= s.imbalance_ratio * st.reads as f64) {
                let ratio = if st.reads == 0 { f64::INFINITY } else { writes as f64 / st.reads as f64 };
                let msg = if st.reads == 0 {
                    format!(
                        "{what}: stored into fields or collections {} times and never read back",
                        words::count(writes)
                    )
                } else {
                    format!(
                        "{what}: stored into fields or collections {} times but read back only {} times ({ratio:.1}×)",
                        words::count(writes),
                        words::count(st.reads)
                    )
                };
                let mut f = base(UsageKind::WriteReadImbalance, writes as f64, msg);
                if let Evidence::Usage(_, u) = &mut f.evidence {
                    u.ratio = Some(WritesPerRead(ratio));
                }
                for (site, count) in top(&st.stores, 3) {
                    f = f.related(loc(site), format!("stored here ({count}×)"));
                }
                by_kind.entry(Kind::WriteReadImbalance).or_default().push(f);
            }
        }
        let mut out = Vec::new();
        // In the report's kind order; the kinds this analysis does not make are absent.
        for kind in Kind::ALL {
            let Some(mut v) = by_kind.remove(&kind) else { continue };
            v.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.location.cmp(&b.location)));
            v.truncate(s.max_findings_per_kind);
            out.extend(v);
        }
        out
    }
}

/// Whether a producer's objects stay inside code HotSpot inlines: never given to a native, and
/// every method they reach small enough to inline.
fn stays_inlined(st: &Stats) -> bool {
    !st.to_native && st.reach_code <= INLINED_CODE
}

/// A collection on which nothing but its constructor and size or emptiness was ever called.
fn never_filled(st: &Stats, methods: &[Method]) -> bool {
    st.calls_on.keys().all(|m| {
        let name = &*methods[*m as usize].name;
        name == "<init>" || SIZING.contains(&name)
    })
}

/// The size of `m`'s bytecode (0 for a native or abstract method).
fn code_size(methods: &[Method], m: MethodId) -> u32 {
    methods[m as usize].raw.as_ref().map_or(0, |c| c.bytecode.len() as u32)
}

/// Whether the library method `m`, which made a string, made it from a value rather than from
/// other text: it takes no reference and is not a method of a text (`Long.toString(long)`,
/// `String.valueOf(char)`, a number formatter's buffer), so the string's characters exist nowhere
/// else. A substring, a builder's `toString` or a concatenation copies characters that do.
fn makes_text_of_a_value(methods: &[Method], classes: &[Class], m: MethodId) -> bool {
    use crate::classfile::descriptor::Kind as Slot;
    let method = &methods[m as usize];
    let class = &classes[method.class as usize];
    let text = |c: &Class| c.supertypes.iter().any(|&t| &*classes[t as usize].name == "java/lang/CharSequence");
    !method.parsed.params.contains(&Slot::Reference) && (method.is_static() || !text(class))
}

/// Whether `class` is a `java.util` collection or map (what "filled, never read" applies to).
fn is_collection(classes: &[Class], class: ClassId) -> bool {
    let c = &classes[class as usize];
    c.name.starts_with("java/util/")
        && c.supertypes.iter().any(|&t| matches!(&*classes[t as usize].name, "java/util/Collection" | "java/util/Map"))
}

/// Methods that fill a collection or keep it (its own helpers included): calling them reads
/// none of its elements back.
const FILLING: &[&str] = &[
    "<init>",
    "add",
    "addAll",
    "addFirst",
    "addLast",
    "put",
    "putAll",
    "putVal",
    "offer",
    "push",
    "linkLast",
    "linkFirst",
    "grow",
    "resize",
    "ensureCapacity",
    "ensureCapacityInternal",
    "ensureExplicitCapacity",
    "trimToSize",
    "afterNodeInsertion",
    "afterNodeAccess",
    "newNode",
    "treeifyBin",
    "hash",
    "addCount",
];
/// Methods that read only its size.
const SIZING: &[&str] = &["size", "isEmpty"];

impl RefPropTracker {
    /// A collection the program fills and then only asks for its size (or never reads at all):
    /// low-utility, at the line that makes it, costed by the calls that make and fill it.
    fn only_filled(
        &self,
        prod: &super::objects::Producer,
        st: &Stats,
        what: &str,
        methods: &[Method],
        classes: &[Class],
        loc: &mut impl FnMut(Site) -> Location,
    ) -> Option<Finding> {
        if !st.collection {
            return None;
        }
        let name = |m: &MethodId| &*methods[*m as usize].name;
        let mut fills = 0;
        let mut sized = false;
        for m in st.calls_on.keys() {
            match name(m) {
                n if SIZING.contains(&n) => sized = true,
                n if FILLING.contains(&n) => {
                    fills += (n == "add" || n == "put" || n == "addAll" || n == "putAll") as u32
                }
                _ => return None,
            }
        }
        if fills == 0 {
            return None;
        }
        let user = prod.user?;
        let user_site = |s: &Site| crate::vm::tracker::is_user_method(methods, classes, s.method);
        // What it costs: the line that makes it, and the user's calls that fill it.
        let mut cost_sites: Vec<Site> = vec![user];
        for (m, sites) in &st.calls_on {
            if FILLING.contains(&name(m)) {
                cost_sites.extend(sites.iter().copied().filter(user_site));
            }
        }
        cost_sites.sort_unstable();
        cost_sites.dedup();
        let located: Vec<Location> = cost_sites.iter().map(|&s| loc(s)).collect();
        let its = if prod.instances == 1 { "its" } else { "their" };
        let message = format!(
            "{what}: {} filled, then {}",
            words::plural(prod.instances, "collection", "collections"),
            if sized {
                format!("only asked for {its} size or emptiness: {its} elements are never read")
            } else {
                format!("never read: neither {its} elements nor {its} size")
            },
        );
        let evidence = FilledCollectionEvidence {
            cost_sites: located
                .iter()
                .map(|l| CallSite {
                    class: l.class.clone(),
                    method: l.method.clone(),
                    descriptor: l.descriptor.clone(),
                    bci: l.bci,
                })
                .collect(),
            instances: prod.instances,
            only_size: sized,
            type_name: type_name(classes, prod.class),
            ..FilledCollectionEvidence::default()
        };
        let mut f = Finding::new(Evidence::FilledCollection(evidence), prod.instances as f64, message, loc(user));
        for l in located.into_iter().filter(|l| l.line != loc(user).line) {
            f = f.related(l, "filled here".to_string());
        }
        Some(f)
    }
}
