//! Object lifetimes (`seeds/rolp-lifetime.txt`, DESIGN §4.4), exact rather than sampled.
//!
//! Every object records its allocation context — site and calling-context-tree node — its size
//! and its birth time. Time is bytes allocated; a death is observed by the collector (which, for
//! this analysis, runs every `young_gen_bytes` of allocation, so "GCs survived" is the number of
//! young collections an object lives through with a young generation of that size). The run ends
//! with one more collection; objects alive after it are censored. Collections are counted from
//! `main` (the VM's `first_collection_in_main`), so where they fall does not move with what the
//! JDK's start-up allocated on this machine.
//!
//! Classes, by the GCs an object survived (ROLP's unit of time): **short** (died before its first
//! collection), **medium** (survived 1–15: HotSpot's tenuring threshold), **long** (survived more,
//! then died), **immortal** (lived to the end: freed only by the final collection, or alive after
//! it, having survived at least one collection before); objects born after the last collection
//! and alive after the final one are not classified. A context's class is its
//! objects' majority; a site whose contexts have different classes (each with at least
//! `min_instances` classified objects and 1% of the site's) is **mixed**, and the finding names the calling contexts that split it — the
//! calling-context tree tells apart paths that ROLP's additive stack hash cannot.
//!
//! The VM's young generation is small (1 MB by default) so that a short run sees collections;
//! HotSpot's is tens of MB. What costs on HotSpot is judged from lifetimes in bytes: an object
//! that lived through `hotspot_young_bytes` of allocation and then died is one a HotSpot young
//! collection copies. And since HotSpot places every object alike whatever its site, a mixed
//! site costs only where some callers make objects they never store and drop at once: with the
//! value-flow analyses on, the tracker sees stores and counts those temporaries.

use super::cct::Cct;
use super::events::{Consumer, Event};
use super::objects::{type_name, Locator};
use super::words;
use crate::evidence::{Evidence, HistogramBucket, LifetimeClass, LifetimeEvidence};
use crate::report::{Finding, Location, Settings};
use crate::vm::class::{Class, ClassId, Method, MethodId};
use crate::vm::heap::Ref;
use crate::vm::tracker::{is_user_method, Alloc, Arguments, Context, Site, Tracker, Value};
use rustc_hash::FxHashMap;

const TENURING: u32 = 15;
/// log2 buckets of lifetimes in bytes allocated: bucket k holds [2^k, 2^(k+1)).
const BUCKETS: usize = 48;

/// A live object's birth, one per object handle (16 bytes: the table is as long as the heap has
/// handles, so its size is what lifetimes cost in memory).
#[derive(Debug, Clone, Copy)]
struct Birth {
    /// Bytes allocated before it (the clock).
    time: u64,
    /// Its record; [`Birth::NONE`]: no object lives under this handle.
    record: u32,
    /// Collections before it, and (the top bit) whether its reference was stored in a field, an
    /// array element or a static.
    gcs_stored: u32,
}

impl Birth {
    const NONE: Birth = Birth { time: 0, record: u32::MAX, gcs_stored: 0 };
    const STORED: u32 = 1 << 31;

    fn new(record: u32, time: u64, gcs: u32) -> Birth {
        Birth { time, record, gcs_stored: gcs & !Birth::STORED }
    }

    fn is_some(&self) -> bool {
        self.record != u32::MAX
    }

    fn gcs(&self) -> u32 {
        self.gcs_stored & !Birth::STORED
    }

    fn stored(&self) -> bool {
        self.gcs_stored & Birth::STORED != 0
    }

    /// The birth under a handle, leaving none there.
    fn take(&mut self) -> Option<Birth> {
        let b = std::mem::replace(self, Birth::NONE);
        b.is_some().then_some(b)
    }
}

/// An object the collector freed, classified when the next collection ends.
#[derive(Debug, Clone, Copy)]
struct Death {
    record: u32,
    /// The VM's young collections it lived through.
    survived: u32,
    /// Bytes allocated while it lived.
    lifetime: u64,
    stored: bool,
}

/// Objects of one allocation context.
#[derive(Debug, Clone)]
struct Record {
    site: Site,
    node: u32,
    /// The first user frame that led to the site.
    user: Option<Site>,
    class: ClassId,
    instances: u64,
    bytes: u64,
    /// Objects by class (`LifetimeClass::OF_OBJECTS` order), and alive at exit but unclassified.
    by_class: [u64; 4],
    unknown: u64,
    /// Short-lived objects never stored in the heap: made, read and dropped.
    short_unstored: u64,
    /// Objects that died before the end having lived through a HotSpot-sized young generation.
    outlived_hotspot_young: u64,
    histogram: Vec<u64>,
    first_birth: u64,
    last_birth: u64,
}

pub struct LifetimeTracker {
    settings: Settings,
    young: u64,
    /// The run reports value flow (`flow_store`): whether an object was ever stored is known.
    sees_stores: bool,
    cct: Cct,
    records: Vec<Record>,
    index: FxHashMap<(Site, u32), u32>,
    births: Vec<Birth>,
    /// Bytes allocated so far (the clock), and collections so far.
    now: u64,
    gcs: u32,
    /// Deaths seen by the collection in progress, and by the one before. A collection's deaths are classified when the next one ends, so that those of
    /// the final collection (objects that lived to the end) are known as such.
    dying: Vec<Death>,
    previous: Vec<Death>,
    pub findings: Vec<Finding>,
}

impl LifetimeTracker {
    pub fn new(settings: Settings, young_gen_bytes: u64, sees_stores: bool) -> Self {
        LifetimeTracker {
            settings,
            young: young_gen_bytes,
            sees_stores,
            cct: Cct::default(),
            records: Vec::new(),
            index: FxHashMap::default(),
            births: Vec::new(),
            now: 0,
            gcs: 0,
            dying: Vec::new(),
            previous: Vec::new(),
            findings: Vec::new(),
        }
    }

    /// The heap the run ends with (immortal objects, by each record's mean size), that a
    /// finding's retained bytes are a share of; known once the run has finished.
    pub fn heap_at_end(&self) -> u64 {
        self.records.iter().map(immortal_bytes).sum()
    }

    fn die(&mut self, b: Birth) {
        let r = &mut self.records[b.record as usize];
        let lifetime = self.now.saturating_sub(b.time).max(1);
        r.histogram[(63 - lifetime.leading_zeros()) as usize % BUCKETS] += 1;
        self.dying.push(Death { record: b.record, survived: self.gcs - b.gcs(), lifetime, stored: b.stored() });
    }

    /// Classifies the deaths of a collection; `last`: it was the final one.
    fn classify(&mut self, deaths: Vec<Death>, last: bool) {
        for d in deaths {
            let r = &mut self.records[d.record as usize];
            let class = match d.survived {
                // Born after the last young collection and freed by the final one: it may have
                // died at once or lived to the end; like the censored, no verdict.
                0 if last => {
                    r.unknown += 1;
                    continue;
                }
                0 => 0,
                _ if last => 3,
                1..=TENURING => 1,
                _ => 2,
            };
            r.by_class[class] += 1;
            r.short_unstored += (class == 0 && !d.stored) as u64;
            r.outlived_hotspot_young += (!last && d.lifetime >= self.settings.hotspot_young_bytes) as u64;
        }
    }
}

/// What the run tells the analysis, whether as a tracker on the VM's thread or as events.
impl LifetimeTracker {
    fn call(&mut self, site: Site, callee: MethodId, depth: usize) {
        self.cct.enter(site, callee, depth);
    }

    fn alloc(&mut self, a: &Alloc, user: Option<Site>) {
        let node = self.cct.top();
        let next = self.records.len() as u32;
        let record = *self.index.entry((a.site, node)).or_insert(next);
        if record == next {
            self.records.push(Record {
                site: a.site,
                node,
                user,
                class: a.class,
                instances: 0,
                bytes: 0,
                by_class: [0; 4],
                unknown: 0,
                short_unstored: 0,
                outlived_hotspot_young: 0,
                histogram: vec![0; BUCKETS],
                first_birth: self.now,
                last_birth: self.now,
            });
        }
        let r = &mut self.records[record as usize];
        r.instances += 1;
        r.bytes += a.bytes as u64;
        r.last_birth = self.now;
        let i = a.obj as usize;
        if i >= self.births.len() {
            // Only as far as the handle: the vector's own growth is amortised, and entries
            // beyond the highest handle would be memory written for nothing.
            self.births.resize(i + 1, Birth::NONE);
        }
        self.births[i] = Birth::new(record, self.now, self.gcs);
        self.now += a.bytes as u64;
    }

    fn store(&mut self, value: Value) {
        if value.is_ref {
            if let Some(b) = self.births.get_mut(value.bits as usize).filter(|b| b.is_some()) {
                b.gcs_stored |= Birth::STORED;
            }
        }
    }

    fn free(&mut self, obj: Ref) {
        if let Some(b) = self.births.get_mut(obj as usize).and_then(Birth::take) {
            self.die(b);
        }
    }

    fn gc(&mut self) {
        let previous = std::mem::replace(&mut self.previous, std::mem::take(&mut self.dying));
        self.classify(previous, false);
        self.gcs += 1;
    }

    fn end(&mut self, methods: &[Method], classes: &[Class]) {
        // The final collection's deaths are objects that lived to the end.
        let last = std::mem::take(&mut self.previous);
        self.classify(last, true);
        let rest = std::mem::take(&mut self.dying);
        self.classify(rest, true);
        // Censor what is still alive.
        let alive: Vec<Birth> = self.births.iter_mut().filter_map(Birth::take).collect();
        for b in alive {
            let r = &mut self.records[b.record as usize];
            if self.gcs > b.gcs() {
                r.by_class[3] += 1;
            } else {
                r.unknown += 1;
            }
        }
        self.findings = self.build(methods, classes);
    }
}

/// Alone, on the VM's thread: without value flow, so whether an object was stored is not known.
impl Tracker for LifetimeTracker {
    const FINAL_COLLECTION: bool = true;

    fn on_thread(&mut self, thread: usize) {
        self.cct.switch_to(thread);
    }

    fn on_call(&mut self, site: Site, callee: MethodId, depth: usize, _: Ref, _: &Arguments) {
        self.call(site, callee, depth);
    }

    fn on_return(&mut self, _: MethodId) {
        self.cct.exit();
    }

    fn on_alloc(&mut self, cx: &Context, a: &Alloc) {
        self.alloc(a, cx.user_frame(a.site));
    }

    fn on_free(&mut self, obj: Ref, _: ClassId, _: usize) {
        self.free(obj);
    }

    fn on_gc(&mut self, _: u64, _: u64) {
        self.gc();
    }

    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        self.end(methods, classes);
    }
}

/// Fed the events, with the value-flow analyses (inline or on their thread).
impl Consumer for LifetimeTracker {
    const FINAL_COLLECTION: bool = true;
    const PASSES: bool = false;
    const FLOW: bool = false;

    // Inline: most events are value flow, which this analysis passes over.
    #[inline(always)]
    fn consume(&mut self, e: &Event<'_>) {
        match *e {
            Event::Thread(t) => self.cct.switch_to(t),
            Event::Call { site, callee, depth, .. } => self.call(site, callee, depth),
            Event::Return(_) => self.cct.exit(),
            Event::Alloc { alloc, user_frame } => self.alloc(&alloc, user_frame),
            Event::Store { value, .. } => self.store(value),
            Event::Free { obj, .. } => self.free(obj),
            Event::Gc { .. } => self.gc(),
            _ => {}
        }
    }

    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        self.end(methods, classes);
    }
}

/// A record's bytes still alive at the end of the run.
fn immortal_bytes(r: &Record) -> u64 {
    r.bytes * r.by_class[3] / r.instances.max(1)
}

/// A mixed site's short-lived contexts: their objects, and those of them never stored.
#[derive(Debug, Clone, Copy)]
struct Throwaways {
    short: u64,
    objects: u64,
    bytes: u64,
}

/// Short-lived objects are a finding from this many times `min_instances` of them.
const SHORT_NUMEROUS: u64 = 100;

/// The class most of these objects have, if any was classified.
fn majority(by_class: &[u64; 4]) -> Option<usize> {
    let (i, &n) = by_class.iter().enumerate().max_by_key(|(i, &n)| (n, std::cmp::Reverse(*i)))?;
    (n > 0).then_some(i)
}

impl LifetimeTracker {
    /// Whether the calling context `node` runs inside a static initialiser.
    fn in_class_init(&self, mut node: u32, methods: &[Method]) -> bool {
        while node != super::cct::ROOT {
            let n = self.cct.nodes[node as usize];
            if &*methods[n.method as usize].name == "<clinit>" {
                return true;
            }
            node = n.parent;
        }
        false
    }

    fn build(&self, methods: &[Method], classes: &[Class]) -> Vec<Finding> {
        let mut locator = Locator::default();
        let mut loc = |site: Site| -> Location {
            locator.resolve(methods, classes, site);
            locator.get(site)
        };
        // Sites (as the user sees them: the site, or the user frame that reached a JDK site).
        let mut sites: FxHashMap<(Site, Site), Vec<usize>> = FxHashMap::default();
        for (i, r) in self.records.iter().enumerate() {
            if let Some(user) = r.user {
                // Objects a class initialiser made are the process's one-time set-up (the JDK's
                // locale tables behind a first `printf`, a program's constant tables), whichever
                // line happened to trigger it.
                if !self.in_class_init(r.node, methods) {
                    sites.entry((r.site, user)).or_default().push(i);
                }
            }
        }
        let heap_at_end = self.heap_at_end();
        let mut findings = Vec::new();
        for ((site, user), recs) in sites {
            let instances: u64 = recs.iter().map(|&i| self.records[i].instances).sum();
            if instances < self.settings.min_instances {
                continue;
            }
            let mut by_class = [0u64; 4];
            let mut histogram = vec![0u64; BUCKETS];
            let (mut bytes, mut unknown, mut outlived) = (0, 0, 0);
            for &i in &recs {
                let r = &self.records[i];
                (0..4).for_each(|c| by_class[c] += r.by_class[c]);
                (0..BUCKETS).for_each(|b| histogram[b] += r.histogram[b]);
                bytes += r.bytes;
                unknown += r.unknown;
                outlived += r.outlived_hotspot_young;
            }
            // A class judged from a minority of the objects is a guess: most were born after the
            // last young collection (the run allocated little) and were never seen to live or die.
            if by_class.iter().sum::<u64>() * 2 < instances {
                continue;
            }
            let Some(class) = majority(&by_class) else { continue };
            // Contexts whose own class differs from another's, each with a real share of the site.
            let significant: Vec<(usize, usize)> = recs
                .iter()
                .filter_map(|&i| {
                    let r = &self.records[i];
                    let classified: u64 = r.by_class.iter().sum();
                    let share = classified >= self.settings.min_instances && classified * 100 >= instances;
                    share.then(|| majority(&r.by_class).map(|c| (i, c))).flatten()
                })
                .collect();
            let mixed = significant.iter().any(|&(_, c)| c != significant[0].1);
            let name = if mixed { LifetimeClass::Mixed } else { LifetimeClass::OF_OBJECTS[class] };
            // Short-lived objects are the normal case: reported only when they are numerous
            // (temporaries made on every iteration, a hundred times the reporting minimum) and the
            // user's own expression makes them (a `new`, a boxing) — a library's temporaries
            // inside a call belong to the object or call the user made.
            if name == LifetimeClass::Short
                && (instances < SHORT_NUMEROUS * self.settings.min_instances
                    || (site != user && !loc(user).expression.is_some_and(|e| e.starts_with("boxing"))))
            {
                continue;
            }
            // The short-lived contexts' objects, and those of them never stored: what the callers
            // that drop them at once could do without.
            let throwaways = mixed.then(|| {
                let short: Vec<&Record> =
                    significant.iter().filter(|&&(_, c)| c == 0).map(|&(i, _)| &self.records[i]).collect();
                Throwaways {
                    short: short.iter().map(|r| r.by_class[0]).sum(),
                    objects: short.iter().map(|r| r.short_unstored).sum(),
                    bytes: short.iter().map(|r| r.bytes * r.short_unstored / r.instances.max(1)).sum(),
                }
            });
            let type_name = type_name(classes, self.records[recs[0]].class);
            let growing = name == LifetimeClass::Immortal && {
                let last = recs.iter().map(|&i| self.records[i].last_birth).max().unwrap_or(0);
                let first = recs.iter().map(|&i| self.records[i].first_birth).min().unwrap_or(0);
                // Born all through the run, not only at start-up.
                last > first && (last - first) * 2 > self.now.saturating_sub(first)
            };
            let at = loc(user);
            let made_in = (site != user).then(|| loc(site));
            let what = words::allocation_subject(&at, &type_name, made_in.as_ref());
            let (all, end) = (words::count(instances), words::count(by_class[3]));
            let on_hotspot = format!(
                "{} of them die after outliving {} of allocation, a HotSpot-sized young generation",
                words::count(outlived),
                crate::report::human_bytes(self.settings.hotspot_young_bytes)
            );
            let message = match name {
                LifetimeClass::Mixed => {
                    let dropped = match throwaways.filter(|t| self.sees_stores && t.objects > 0) {
                        Some(t) => format!("; {} of them are made only to be read and dropped, never stored", words::count(t.objects)),
                        None => String::new(),
                    };
                    format!(
                        "{what}: these objects live for different spans depending on the caller ({} calling contexts differ){dropped}",
                        significant.len()
                    )
                }
                LifetimeClass::Immortal if growing => format!("{what}: {end} of {all} objects live to the end and their number keeps growing: a possible leak"),
                LifetimeClass::Immortal => format!("{what}: {end} of {all} objects live to the end of the run"),
                LifetimeClass::Short => format!("{what}: {all} short-lived temporaries, each dead before the next young collection (made and dropped over and over)"),
                LifetimeClass::Long => format!("{what}: most of {all} objects survive more than {TENURING} young collections before dying; {on_hotspot}"),
                LifetimeClass::Medium => format!("{what}: most of {all} objects survive a young collection and die soon after (the costliest lifetime for a generational collector); {on_hotspot}"),
            };
            let histogram = histogram
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(b, &n)| HistogramBucket { from_bytes: 1u64 << b, objects: n })
                .collect();
            // Which of the short-lived contexts' objects are stored is known from value flow only.
            let seen_throwaways = throwaways.filter(|_| mixed && self.sees_stores);
            let evidence = LifetimeEvidence {
                bytes,
                class: name,
                collections: self.gcs.into(),
                growing,
                heap_at_end,
                histogram,
                hotspot_young_bytes: self.settings.hotspot_young_bytes,
                immortal: by_class[3],
                instances,
                long: by_class[2],
                made_by_library: site != user,
                medium: by_class[1],
                outlived_hotspot_young: outlived,
                retained_bytes: recs.iter().map(|&i| immortal_bytes(&self.records[i])).sum(),
                short: by_class[0],
                short_context_objects: seen_throwaways.map(|t| t.short),
                temporary_bytes: seen_throwaways.map(|t| t.bytes),
                temporary_objects: seen_throwaways.map(|t| t.objects),
                type_name,
                unclassified: unknown,
                young_gen_bytes: self.young,
                ..LifetimeEvidence::default()
            };
            let mut f = Finding::new(Evidence::Lifetime(evidence), bytes as f64, message, at);
            let jdk = loc(site);
            if site != user && jdk.file.is_some() {
                f = f
                    .related(jdk.clone(), format!("allocated inside {}", words::short_method(&jdk.class, &jdk.method)));
            }
            if mixed {
                for &(i, c) in &significant {
                    let r = &self.records[i];
                    let user = |s: Site| is_user_method(methods, classes, s.method);
                    let path: Vec<String> =
                        self.cct.user_path(r.node, user).into_iter().map(|s| loc(s).short()).collect();
                    let at = self.cct.path(r.node).into_iter().rev().find(|s| loc(*s).file.is_some()).map(&mut loc);
                    let role = format!(
                        "context: {} ({} objects) via {}",
                        LifetimeClass::OF_OBJECTS[c].as_str(),
                        words::count(r.instances),
                        path.join(" → ")
                    );
                    if let Some(at) = at {
                        f = f.related(at, role);
                    }
                }
            }
            findings.push(f);
        }
        findings.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.location.cmp(&b.location)));
        findings.truncate(self.settings.max_findings_per_kind);
        findings
    }
}
