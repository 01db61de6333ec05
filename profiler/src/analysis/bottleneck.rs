//! Bottlenecks (`seeds/bottlenecks.txt`, DESIGN §4.5): the calling-context tree with base costs
//! per node — instructions executed in the context's own frames, bytes it allocated, heap-to-heap
//! copies it made — and the bottleneck call sequences the automatic search of
//! [`super::calltree`] finds in it, each reported at the innermost frame of the program on its
//! path (the line a developer can change), with its share of the run and its overlap with the
//! other bottlenecks.
//!
//! The JVM's start-up and shutdown — outermost contexts with no method of the program below
//! them — are left out: shares are of the program's own run. The tree the report carries is
//! pruned for size: a context whose cum is below 1/10,000 of the
//! run in every metric is folded into its parent (its costs too, so totals stay exact). Bridge
//! methods and the VM's generated classes (lambda proxies, concatenation sites) are folded away.

use super::calltree::{
    find_bottlenecks, high_base, zoom, CallNode, CallTree, ComparativeProfile, Direction, Found, Labels, Metric,
    ProfileInterface, Search, Summary, TreeProfile,
};
use super::cct::{Cct, ROOT};
use super::objects::{locate, Locator};
use super::shadow::ShadowStack;
use crate::classfile::access;
use crate::evidence::{BottleneckEvidence, Evidence, RepeatedWork};
use crate::report::{Comparison, Finding, Location, SequenceChange, Settings};
use crate::vm::class::{Class, Method, MethodId};
use crate::vm::heap::Ref;
use crate::vm::tracker::{is_user_method, Alloc, Arguments, Bulk, Context, HeapLoc, Site, Tracker, Value};

/// Base costs of one calling context.
#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    instructions: u64,
    bytes: u64,
    copies: u64,
    /// Calls into the context (not summed into a cum: only its call site's count is read).
    calls: u64,
    /// Of those, recursive calls folded into it (made from below it, not from its caller).
    reentries: u64,
}

impl Cost {
    fn add(&mut self, other: &Cost) {
        self.instructions += other.instructions;
        self.bytes += other.bytes;
        self.copies += other.copies;
    }
}

pub struct BottleneckTracker {
    settings: Settings,
    cct: Cct,
    cost: Vec<Cost>,
    /// The instruction count when costs were last charged.
    charged: u64,
    /// Whether a slot holds a value loaded from the heap and not computed on since (so storing
    /// it is a copy).
    loaded: ShadowStack<bool>,
    /// The tree as the report carries it, and the findings.
    pub tree: CallTree,
    pub findings: Vec<Finding>,
    /// What ran in the program's frames and below them: with the JUnit launcher as `main`, the
    /// tests' own work, without the launcher's discovery and reporting.
    pub user_work: crate::cost_model::Work,
    /// Per node of `tree`: the CCT node it stands for (to locate call sites).
    cct_of: Vec<u32>,
    user_label: Vec<bool>,
    /// Per CCT node: the distinct arguments it was called with (to tell repeated work).
    arguments: Vec<ArgumentSets>,
    /// Argument lists by value, for calls from the program's code.
    fingerprints: super::fingerprint::Fingerprints,
    /// Per thread, per frame: its receiver and CCT node (to see a call change its receiver).
    receivers: Vec<Vec<(Ref, u32)>>,
    thread: usize,
    /// Per CCT node: what ran in it and below it.
    cum: Vec<Cost>,
    /// Per CCT node: of those, instructions compiling regular expressions (`Pattern`'s constructor).
    regex_instructions: Vec<u64>,
    /// How often each call site in the user's code ran (for triage's one-time work).
    pub site_calls: crate::triage::SiteCalls,
}

/// The distinct argument lists (receiver, primitives and objects by value: see
/// [`super::fingerprint`]) a calling context was called with from the program's code, up to
/// [`ArgumentSets::MAX`]; past it, only that they varied.
#[derive(Default)]
struct ArgumentSets {
    seen: Vec<u64>,
    varied: bool,
    /// Some call wrote a field of its receiver: the same arguments may not mean the same work.
    changes_receiver: bool,
    /// The first argument slot (the receiver, or a static method's first argument) of every call,
    /// while it stays the same; 0 once it differed (or was 0).
    same_first: Option<u64>,
}

impl Repeated {
    /// What the finding's evidence calls it.
    fn work(self) -> RepeatedWork {
        match self {
            Repeated::Scan { .. } => RepeatedWork::ScanPerIteration,
            Repeated::SameArguments { .. } => RepeatedWork::SameArguments,
            Repeated::Recompiles { .. } => RepeatedWork::RegexCompiledPerCall,
        }
    }
}

impl ArgumentSets {
    const MAX: usize = 16;

    /// The first argument slot of a call (by identity: the object a loop goes over again).
    #[inline]
    fn see_first(&mut self, args: &[u64]) {
        let first = args.first().copied().unwrap_or(0);
        match self.same_first {
            None => self.same_first = Some(first),
            Some(f) if f != first => self.same_first = Some(0),
            Some(_) => {}
        }
    }

    /// Whether another argument list can still tell anything (few seen, the receiver unchanged).
    fn counting(&self) -> bool {
        !self.varied && !self.changes_receiver
    }

    /// A call's argument list, as its fingerprint.
    fn see(&mut self, h: u64) {
        if !self.seen.contains(&h) {
            if self.seen.len() == Self::MAX {
                self.varied = true;
                self.seen = Vec::new();
            } else {
                self.seen.push(h);
            }
        }
    }

    /// Every call went over the same object (its receiver or first argument): a loop calling it
    /// goes over that object again each time.
    fn same_subject(&self) -> bool {
        self.same_first.is_some_and(|f| f != 0)
    }

    /// How many distinct argument lists, when few.
    fn distinct(&self) -> Option<u64> {
        (!self.varied && !self.changes_receiver).then_some(self.seen.len() as u64)
    }
}

impl BottleneckTracker {
    pub fn new(settings: Settings) -> Self {
        BottleneckTracker {
            settings,
            cct: Cct::default(),
            cost: vec![Cost::default()],
            charged: 0,
            loaded: ShadowStack::default(),
            tree: CallTree::default(),
            findings: Vec::new(),
            user_work: crate::cost_model::Work::default(),
            cct_of: Vec::new(),
            user_label: Vec::new(),
            cum: Vec::new(),
            regex_instructions: Vec::new(),
            arguments: Vec::new(),
            fingerprints: Default::default(),
            receivers: vec![Vec::new()],
            thread: 0,
            site_calls: Default::default(),
        }
    }

    #[inline]
    fn top(&mut self) -> &mut Cost {
        let n = self.cct.top() as usize;
        if n >= self.cost.len() {
            self.cost.resize(n + 1, Cost::default());
        }
        &mut self.cost[n]
    }

    pub fn metric(&self) -> Metric {
        Metric::parse(&self.settings.bottleneck_metric).unwrap_or_default()
    }

    fn search(&self) -> Search {
        Search {
            cutoff: self.settings.zoom_cutoff,
            min_share: self.settings.bottleneck_min_share,
            max: self.settings.max_findings_per_kind,
        }
    }
}

impl Tracker for BottleneckTracker {
    const FLOW: bool = true;
    const INSTRUCTIONS: bool = true;

    fn on_instructions(&mut self, total: u64) {
        let ran = total.saturating_sub(self.charged);
        self.charged = total;
        self.top().instructions += ran;
    }

    fn on_thread(&mut self, thread: usize) {
        self.cct.switch_to(thread);
        self.loaded.switch_to(thread);
        if thread >= self.receivers.len() {
            self.receivers.resize_with(thread + 1, Vec::new);
        }
        self.thread = thread;
    }

    fn on_call(&mut self, site: Site, callee: MethodId, depth: usize, this: Ref, args: &Arguments) {
        let node = self.cct.enter(site, callee, depth) as usize;
        let reentered = self.cct.reentered;
        let cost = self.top();
        cost.calls += 1;
        cost.reentries += u64::from(reentered);
        if node >= self.arguments.len() {
            self.arguments.resize_with(node + 1, ArgumentSets::default);
        }
        let a = &mut self.arguments[node];
        a.see_first(args.slots);
        // Only calls made from the program's code (or glue it calls through) can be reported as
        // repeated work: only theirs are compared.
        if a.counting() && from_program(args, site) {
            let h = self.fingerprints.argument_list(args, callee);
            self.arguments[node].see(h);
        }
        let receivers = &mut self.receivers[self.thread];
        receivers.truncate(depth.saturating_sub(1));
        receivers.push((this, node as u32));
    }

    fn on_return(&mut self, _: MethodId) {
        self.cct.exit();
    }

    fn on_gc(&mut self, _: u64, _: u64) {
        self.fingerprints.collected();
    }

    fn on_alloc(&mut self, _: &Context, a: &Alloc) {
        self.top().bytes += a.bytes as u64;
        self.loaded.set(a.dst, false);
    }

    fn on_bulk_copy(&mut self, _: Ref, _: usize, _: Ref, _: usize, len: usize, _: Bulk) {
        self.top().copies += len as u64;
    }

    fn flow_new(&mut self, dst: usize) {
        self.loaded.set(dst, false);
    }

    fn flow_move(&mut self, _: Site, src: usize, dst: usize) {
        self.loaded.copy(src, dst);
    }

    fn flow_shuffle(&mut self, base: usize, from: &[usize]) {
        self.loaded.shuffle(base, from);
    }

    fn flow_compute(&mut self, _: Site, _: &[usize], dst: Option<usize>) {
        if let Some(d) = dst {
            self.loaded.set(d, false);
        }
    }

    fn flow_load(&mut self, _: &Context, _: Site, _: HeapLoc, _: Value, dst: usize) {
        self.loaded.set(dst, true);
    }

    fn flow_store(&mut self, cx: &Context, _: Site, loc: HeapLoc, _: Value, _: u8, src: usize) {
        if self.loaded.get(src) {
            self.top().copies += 1;
        }
        // A call that changes its receiver (an iterator's `next`, a reader's `read`) does new
        // work each time, whatever its arguments: so do its callers on the same receiver.
        if let HeapLoc::Field { obj, .. } = loc {
            // Entries past the thread's depth are frames that returned.
            let frames = &self.receivers[self.thread];
            for &(this, node) in frames[..cx.frames.len().min(frames.len())].iter().rev() {
                if this != obj {
                    break;
                }
                if let Some(a) = self.arguments.get_mut(node as usize) {
                    a.changes_receiver = true;
                }
            }
        }
    }

    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        self.build_tree(methods, classes);
        self.findings = self.build_findings(methods, classes);
        self.site_calls = self.count_site_calls(methods, classes);
    }
}

impl BottleneckTracker {
    /// The calling-context tree the report carries, as a graph (contexts under 1% of the run out).
    pub fn call_graph(&self) -> crate::graphs::Graph {
        let user = |l: u32| self.user_label.get(l as usize).copied().unwrap_or(false);
        crate::graphs::call_graph(&self.tree, &user, 0.01)
    }
}

/// `com.acme.Main.run(I)V`: a method's label in the tree (stable across runs, for comparisons).
fn label(methods: &[Method], classes: &[Class], m: MethodId) -> String {
    let method = &methods[m as usize];
    format!("{}.{}{}", classes[method.class as usize].java_name(), method.name, method.descriptor)
}

/// Whether a call site is in the program's code or in code generated for it (a lambda's proxy),
/// not in a library.
fn from_program(args: &Arguments, site: Site) -> bool {
    let class = &args.classes[args.methods[site.method as usize].class as usize];
    class.user || class.hidden || class.origin == crate::classpath::Origin::Generated
}

/// `Pattern`'s constructor: compiling a regular expression (what `String.replaceAll`, `split` with
/// a pattern, `matches` do on every call).
fn is_pattern_compile(methods: &[Method], classes: &[Class], m: MethodId) -> bool {
    let method = &methods[m as usize];
    &*method.name == "<init>" && &*classes[method.class as usize].name == "java/util/regex/Pattern"
}

fn is_glue(methods: &[Method], classes: &[Class], m: MethodId) -> bool {
    let method = &methods[m as usize];
    method.access & access::BRIDGE != 0 || classes[method.class as usize].hidden || is_generated(method)
}

/// A member javac generates with no source of its own (a record's `toString`, `equals`,
/// `hashCode`: one `invokedynamic` to `ObjectMethods`): its line is the record's header, so the
/// line a developer changes is its caller's.
fn is_generated(method: &Method) -> bool {
    matches!(&*method.name, "toString" | "equals" | "hashCode")
        && method.raw.as_ref().is_some_and(|c| c.bytecode.len() <= 8 && c.bytecode.contains(&0xba))
}

impl BottleneckTracker {
    /// Calls made from each call site of the user's code, however many contexts it ran in.
    fn count_site_calls(&self, methods: &[Method], classes: &[Class]) -> crate::triage::SiteCalls {
        let mut by_site: rustc_hash::FxHashMap<Site, crate::triage::SiteRuns> = Default::default();
        for (i, n) in self.cct.nodes.iter().enumerate().skip(1) {
            if n.parent != ROOT && is_user_method(methods, classes, n.site.method) {
                let runs = by_site.entry(n.site).or_default();
                // A class initialiser the instruction triggered is not a call the line made: a
                // line that ran once (`SpringApplication.run(…)` in `main`) stays a line that ran once.
                let initialiser = n.method != MethodId::MAX && &*methods[n.method as usize].name == "<clinit>";
                if !initialiser {
                    runs.calls += self.cost.get(i).map_or(0, |c| c.calls);
                }
                runs.instructions += self.cum.get(i).map_or(0, |c| c.instructions);
            }
        }
        by_site
            .into_iter()
            .map(|(site, n)| {
                let l = locate(methods, classes, site);
                ((l.class, l.method, l.descriptor, l.bci), n)
            })
            .collect()
    }

    /// The report's tree: glue folded into callers, tiny contexts into their parents.
    fn build_tree(&mut self, methods: &[Method], classes: &[Class]) {
        let nodes = &self.cct.nodes;
        self.cost.resize(nodes.len(), Cost::default());
        // Cum per CCT node (children come after parents).
        // The JVM's start-up and shutdown (outermost frames with no frame of the program below
        // them) are not the program's cost: left out.
        let mut has_user: Vec<bool> =
            nodes.iter().map(|n| n.method != MethodId::MAX && is_user_method(methods, classes, n.method)).collect();
        let mut cum = self.cost.clone();
        for i in (1..nodes.len()).rev() {
            let p = nodes[i].parent as usize;
            has_user[p] |= has_user[i];
            if nodes[i].parent == ROOT && !has_user[i] {
                continue;
            }
            let below = cum[i];
            cum[p].add(&below);
        }
        // The work done in user frames and below them (children come after parents).
        let mut under_user = vec![false; nodes.len()];
        let mut user_work = crate::cost_model::Work::default();
        for i in 1..nodes.len() {
            under_user[i] = under_user[nodes[i].parent as usize] || is_user_method(methods, classes, nodes[i].method);
            if under_user[i] {
                let c = self.cost[i];
                user_work = user_work.plus(crate::cost_model::Work::new(c.instructions, c.bytes));
            }
        }
        self.user_work = user_work;
        let mut dropped = vec![false; nodes.len()];
        let total = Cost {
            instructions: cum[ROOT as usize].instructions - self.cost[ROOT as usize].instructions,
            bytes: cum[ROOT as usize].bytes - self.cost[ROOT as usize].bytes,
            copies: cum[ROOT as usize].copies - self.cost[ROOT as usize].copies,
            calls: 0,
            reentries: 0,
        };
        let tiny = |c: &Cost| {
            c.instructions * 10_000 < total.instructions.max(1)
                && c.bytes * 10_000 < total.bytes.max(1)
                && c.copies * 10_000 < total.copies.max(1)
        };
        let mut labels = Labels::default();
        let mut user_label = Vec::new();
        // CCT node → tree node it is charged to.
        let mut into = vec![0u32; nodes.len()];
        let mut tree_nodes = vec![CallNode { parent: 0, method: u32::MAX, instructions: 0, bytes: 0, copies: 0 }];
        let mut cct_of = vec![ROOT];
        for i in 1..nodes.len() {
            let n = nodes[i];
            dropped[i] = dropped[n.parent as usize] || (n.parent == ROOT && !has_user[i]);
            if dropped[i] {
                continue;
            }
            let parent = into[n.parent as usize];
            let fold = tiny(&cum[i]) || is_glue(methods, classes, n.method);
            let target = if fold {
                parent
            } else {
                let l = labels.intern(&label(methods, classes, n.method));
                if l as usize >= user_label.len() {
                    user_label.push(is_user_method(methods, classes, n.method));
                }
                tree_nodes.push(CallNode { parent, method: l, instructions: 0, bytes: 0, copies: 0 });
                cct_of.push(i as u32);
                tree_nodes.len() as u32 - 1
            };
            into[i] = target;
            let c = self.cost[i];
            let t = &mut tree_nodes[target as usize];
            t.instructions += c.instructions;
            t.bytes += c.bytes;
            t.copies += c.copies;
        }
        self.tree = CallTree { methods: labels.names, nodes: tree_nodes };
        let mut regex = vec![0u64; nodes.len()];
        for i in (1..nodes.len()).rev() {
            let m = nodes[i].method;
            if m != MethodId::MAX && is_pattern_compile(methods, classes, m) {
                regex[i] = cum[i].instructions;
            }
            regex[nodes[i].parent as usize] += regex[i];
        }
        self.regex_instructions = regex;
        self.cum = cum;
        self.cct_of = cct_of;
        self.user_label = user_label;
    }

    fn build_findings(&self, methods: &[Method], classes: &[Class]) -> Vec<Finding> {
        let metric = self.metric();
        let mut labels = Labels::default();
        let profile = TreeProfile::new(&self.tree, metric, &mut labels);
        // What the same calls allocate: a fix that stops them saves their bytes too (the cost model).
        let bytes = TreeProfile::new(&self.tree, Metric::Bytes, &mut labels);
        let total = profile.total();
        if total <= 0 {
            return Vec::new();
        }
        let user = |l: u32| self.user_label.get(l as usize).copied().unwrap_or(false);
        let mut found = find_bottlenecks(&profile, total, &user, self.search());
        // The entry point alone (`main` costs everything) says nothing a developer can act on.
        found.retain(|f| {
            f.summary.calls.len() > 1 || profile.roots(&f.summary).iter().any(|&r| !profile.is_outermost(r))
        });
        let kept: Vec<Summary> = found.iter().map(|f| f.summary.clone()).collect();
        let covered = profile.total_cum_of(&kept);
        let mut locator = Locator::default();
        found
            .iter()
            .filter_map(|f| {
                let mut finding =
                    self.finding(f, &profile, &labels, total, covered, metric, methods, classes, &mut locator)?;
                if let Evidence::Bottleneck(b) = &mut finding.evidence {
                    b.cum_bytes = bytes.cum_of(&f.summary).max(0) as u64;
                }
                Some(finding)
            })
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn finding(
        &self,
        f: &Found,
        profile: &TreeProfile,
        labels: &Labels,
        total: i64,
        covered: i64,
        metric: Metric,
        methods: &[Method],
        classes: &[Class],
        locator: &mut Locator,
    ) -> Option<Finding> {
        let end = profile.heaviest_final(&f.summary)?;
        // The tree path from the outermost frame to the sequence's end, as CCT nodes.
        let (mut path, mut tree_path) = (Vec::new(), Vec::new());
        let mut n = end;
        while n != 0 {
            path.push(self.cct_of[n as usize]);
            tree_path.push(n);
            n = self.tree.nodes[n as usize].parent;
        }
        path.reverse();
        tree_path.reverse();
        // A sequence that starts in the framework calling the user's code (a test run's JUnit
        // launcher, a pool's worker loop) is shown from the user's first frame: those frames are
        // how the code was reached, not what to change.
        let is_user_label = |l: &u32| self.user_label.get(*l as usize).copied().unwrap_or(false);
        let lead = f.summary.calls.iter().position(is_user_label).unwrap_or(0);
        let shown = &f.summary.calls[lead..];
        let first = path.len() - shown.len();
        let node = |c: u32| self.cct.nodes[c as usize];
        // Where a context was called from, seen through folded glue (a lambda proxy calls the
        // lambda's body: the call site that matters is the proxy's caller's).
        let call_site = |mut c: u32| {
            while node(c).parent != ROOT && is_glue(methods, classes, node(node(c).parent).method) {
                c = node(c).parent;
            }
            node(c).site
        };
        let mut loc = |site: Site| -> Location {
            locator.resolve(methods, classes, site);
            locator.get(site)
        };
        // A loop in the user's code that calls, each time round, work as large as the loop itself
        // (a scan of the data it loops over: quadratic) is the line to change; otherwise the
        // innermost user frame on the path: where it calls the next frame down; when it is the
        // sequence's last frame, where its user caller calls it (else its own first line).
        let repeated = self.repeated_work(&path, methods, classes);
        let (innermost, &inner) =
            path.iter().enumerate().rev().find(|(_, &c)| is_user_method(methods, classes, node(c).method))?;
        let mut at_frame = |k: usize| match path.get(k + 1) {
            Some(&below) => loc(call_site(below)),
            None => {
                let site = call_site(inner);
                if node(inner).parent != ROOT && is_user_method(methods, classes, site.method) {
                    loc(site)
                } else {
                    locate(methods, classes, Site { method: node(inner).method, pc: 0 })
                }
            }
        };
        let location = at_frame(repeated.map_or(innermost, |(k, _)| k));
        // Where the work is done, when the finding is where it is repeated: triage moves it there
        // when what that line builds is dropped (the fix is there, not at the loop).
        let work_location = repeated.map(|_| at_frame(innermost)).filter(|l| *l != location);
        let name = |l: u32| short_name(&labels.names[l as usize]);
        let calls: Vec<String> = shown.iter().map(|&l| name(l)).collect();
        let share = f.cum as f64 / total as f64;
        let what = match metric {
            Metric::Instructions => "instructions",
            Metric::Bytes => "allocated bytes",
            Metric::Copies => "heap copies",
        };
        let count = |n: u64| super::words::count(n);
        let why = repeated.map(|(k, r)| {
            let callee = short_name(&label(methods, classes, node(path[k + 1]).method));
            match r {
                Repeated::Scan { repeat, per_call } => {
                    format!(
                        "; {callee} runs {} times per call of its caller, {} instructions each",
                        count(repeat),
                        count(per_call)
                    )
                }
                Repeated::Recompiles { calls } => {
                    format!("; {callee} compiles its regular expression again on each of its {} calls", count(calls))
                }
                Repeated::SameArguments { calls, distinct } => format!(
                    "; {callee} runs {} times with only {} (the same work again)",
                    count(calls),
                    super::words::plural(distinct, "argument list", "different argument lists")
                ),
            }
        });
        let message = format!(
            "the calls {} take {:.0}% of the run's {what} ({} of {}){}{}",
            shorten_path(&calls),
            share * 100.0,
            count(f.cum.max(0) as u64),
            count(total.max(0) as u64),
            why.unwrap_or_default(),
            if f.overlap > 0 {
                format!("; {:.0}% of it shared with other bottlenecks", f.overlap as f64 * 100.0 / f.cum as f64)
            } else {
                String::new()
            }
        );
        let evidence = BottleneckEvidence {
            base: f.base,
            base_share: round3(f.base as f64 / total as f64),
            calls: shown.iter().map(|&l| labels.names[l as usize].clone()).collect(),
            covered_by_all: round3(covered as f64 / total as f64),
            cum: f.cum,
            graph_nodes: tree_path[first..].iter().map(|&n| u64::from(n)).collect(),
            metric,
            overlap: f.overlap,
            repeated: repeated.map(|(_, r)| r.work()),
            share: round3(share),
            suggestion: suggestion(f, repeated.map(|(_, r)| r), methods, classes, &path[first..], |c| node(c).method),
            total,
            work_location,
            ..BottleneckEvidence::default()
        };
        let mut finding = Finding::new(Evidence::Bottleneck(evidence), f.cum as f64, message, location);
        for (i, &c) in path[first..].iter().enumerate() {
            let site = call_site(c);
            // The first call of a path shown from the user's first frame is made by the framework
            // (the JUnit launcher's reflective call of a test method): no place of the user's.
            if node(c).parent == ROOT || (i == 0 && lead > 0) {
                continue;
            }
            let at = loc(site);
            if at.file.is_some() {
                finding = finding.related(at, format!("call {} of {}: {}", i + 1, shown.len(), calls[i]));
            }
        }
        Some(finding)
    }
}

/// Why a call on a bottleneck's path looks redundant (the paper's repeated work).
#[derive(Clone, Copy)]
enum Repeated {
    /// Called `repeat` times per run of its caller (a loop) on the same object, each call doing
    /// work that grows with the loop (`per_call` instructions): the same data scanned again on
    /// every iteration, quadratic.
    Scan { repeat: u64, per_call: u64 },
    /// Called `calls` times with only `distinct` different argument lists: the same work again.
    SameArguments { calls: u64, distinct: u64 },
    /// Called `calls` times, each compiling a regular expression again (`String.replaceAll`).
    Recompiles { calls: u64 },
}

impl BottleneckTracker {
    /// The innermost user frame on `path` (CCT nodes, outermost first) whose call to the next
    /// frame repeats work (see [`Repeated`]): the line to change. An outer loop qualifies only
    /// through the inner one's cost, so the innermost is the one to name.
    fn repeated_work(&self, path: &[u32], methods: &[Method], classes: &[Class]) -> Option<(usize, Repeated)> {
        let found = (0..path.len().saturating_sub(1))
            .rev()
            .find_map(|k| Some((k, self.repeated_call(path, k, methods, classes)?)));
        // Work repeated with the same arguments inside a call repeated with the same arguments:
        // hoisting the outer call saves both.
        let (mut k, mut r) = found?;
        while let Some(outer @ Repeated::SameArguments { .. }) =
            k.checked_sub(1).and_then(|j| self.repeated_call(path, j, methods, classes))
        {
            if !matches!(r, Repeated::SameArguments { .. }) {
                break;
            }
            (k, r) = (k - 1, outer);
        }
        Some((k, r))
    }

    /// Whether the call from `path[k]` (a user frame) to `path[k + 1]` repeats work.
    fn repeated_call(&self, path: &[u32], k: usize, methods: &[Method], classes: &[Class]) -> Option<Repeated> {
        let calls = |c: u32| self.cost.get(c as usize).map_or(0, |x| x.calls).max(1);
        let (caller, callee) = (path[k], *path.get(k + 1)?);
        if !is_user_method(methods, classes, self.cct.nodes[caller as usize].method) {
            return None;
        }
        // Calls its caller made: a recursive callee's calls from below it are no loop of the caller.
        let direct = self.cost.get(callee as usize).map_or(0, |x| x.calls - x.reentries).max(1);
        let repeat = direct / calls(caller);
        let below = self.cum.get(callee as usize).copied().unwrap_or_default();
        let cum = below.instructions;
        let regex = self.regex_instructions.get(callee as usize).copied().unwrap_or(0);
        // A fifth or more of the call spent compiling its pattern: precompiling saves that part.
        if calls(callee) >= SAME_ARGUMENTS && regex * 5 >= cum && regex > 0 {
            return Some(Repeated::Recompiles { calls: calls(callee) });
        }
        let per_call = below.instructions / calls(callee);
        let arguments = self.arguments.get(callee as usize);
        let distinct = arguments.and_then(ArgumentSets::distinct).filter(|&d| d > 0);
        // Few argument lists, each used again and again: the same work repeated (cache it by its
        // arguments), whether or not it goes over a collection.
        if let Some(d) = distinct.filter(|&d| calls(callee) >= SAME_ARGUMENTS * d) {
            return Some(Repeated::SameArguments { calls: calls(callee), distinct: d });
        }
        // A scan goes over the same object each time looking for something else: with every
        // argument list equal it is the same work again, which the rule above names once it
        // repeats enough; and an index pays only for many lookups.
        let same_subject = arguments.is_some_and(ArgumentSets::same_subject);
        // A scan looks things up; a call that allocates as it works builds its result (a
        // product, a rendered page) from what it goes over: the program's work.
        let builds = below.bytes * 1000 >= below.instructions * SCAN_BYTES_PER_1000;
        (repeat >= MIN_REPEAT
            && !builds
            && direct >= MIN_LOOKUPS
            && per_call >= (WORK_PER_REPEAT * repeat).max(MIN_SCAN)
            && same_subject
            && distinct != Some(1))
        .then_some(Repeated::Scan { repeat, per_call })
    }
}

/// Calls per run of the caller that make a loop worth naming.
const MIN_REPEAT: u64 = 2;
/// Bytes allocated per 1,000 instructions from which a call builds rather than scans.
const SCAN_BYTES_PER_1000: u64 = 100;
/// Calls on one object that make building an index for them worth it.
const MIN_LOOKUPS: u64 = 8;
/// Instructions per call, per repetition, of work that rescans what the loop goes over.
const WORK_PER_REPEAT: u64 = 10;
/// Instructions per call below which a call scans nothing (a `String.charAt`, a getter).
const MIN_SCAN: u64 = 100;
/// Calls per distinct argument list that make a call repeated work.
const SAME_ARGUMENTS: u64 = 8;

/// What to try, from the shape of the sequence: cost in the program's own frames, or in the
/// library it calls.
fn suggestion(
    f: &Found,
    repeated: Option<Repeated>,
    methods: &[Method],
    classes: &[Class],
    path: &[u32],
    method_of: impl Fn(u32) -> MethodId,
) -> String {
    match repeated {
        Some(Repeated::SameArguments { .. }) => {
            return "compute this once before the loop (or cache it by its arguments): the call repeats the same work".into()
        }
        Some(Repeated::Recompiles { .. }) => {
            return "compile the regular expression once (a static final Pattern) instead of on every call: replaceAll, split and matches compile it each time".into()
        }
        Some(Repeated::Scan { .. }) => {
            return "build what this call looks for once (a map or index, before the loop) instead of going over the data on every call".into()
        }
        None => {}
    }
    let in_library = path.last().is_some_and(|&c| !is_user_method(methods, classes, method_of(c)));
    let along = f.base * 10 >= f.cum * 7;
    match (in_library, along) {
        (true, _) => "most of the cost is in the library this path calls: call it less often on this path (cache or hoist the result, batch the calls) or use a cheaper operation".into(),
        (false, true) => "the cost is in these frames' own code: look for repeated work in the loop (hoist invariant work, cache results)".into(),
        (false, false) => "the cost is below these frames, spread over their callees: the path itself runs too often; consider a cheaper algorithm or caching at this level".into(),
    }
}

/// `java.util.HashMap.get(Ljava/lang/Object;)Ljava/lang/Object;` → `HashMap.get`, in the
/// source's words (`Main$Order.total` → `Order.total`, a lambda's method → `lambda`).
pub fn short_name(label: &str) -> String {
    let head = label.split('(').next().unwrap_or(label);
    match head.rsplit_once('.') {
        Some((class, method)) => super::words::short_method(class, method),
        None => head.to_string(),
    }
}

/// A long path shows its two ends: `a → b → … → y → z`.
fn shorten_path(calls: &[String]) -> String {
    if calls.len() <= 5 {
        return calls.join(" → ");
    }
    format!("{} → {} → … → {} → {}", calls[0], calls[1], calls[calls.len() - 2], calls[calls.len() - 1])
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The comparative profile of two runs: the call sequences whose cost changed most, found like
/// bottlenecks but in the difference of the two trees (searching from the largest changes of
/// base, extending towards the program's code). `before` is the earlier run's tree. Each
/// bottleneck among `findings` gets its own change as evidence (`cum_before`, `cum_change`).
pub fn compare(
    after: &CallTree,
    before: &CallTree,
    settings: &Settings,
    findings: &mut [Finding],
    previous: String,
) -> Comparison {
    let metric = Metric::parse(&settings.bottleneck_metric).unwrap_or_default();
    let mut labels = Labels::default();
    let cmp = ComparativeProfile {
        after: TreeProfile::new(after, metric, &mut labels),
        before: TreeProfile::new(before, metric, &mut labels),
    };
    for f in findings.iter_mut() {
        let Evidence::Bottleneck(b) = &mut f.evidence else { continue };
        let labels: Option<Vec<u32>> = b.calls.iter().map(|n| labels.get(n)).collect();
        if let Some(calls) = labels {
            let s = Summary { calls };
            b.cum_before = Some(cmp.before.cum_of(&s));
            b.cum_change = Some(cmp.cum_of(&s));
        }
    }
    let total_before = cmp.before.total();
    let total_after = cmp.after.total();
    let scale = total_before.max(total_after).max(1);
    let floor = (settings.bottleneck_min_share * scale as f64).max(1.0);
    let mut seen: Vec<Summary> = Vec::new();
    let mut out = Vec::new();
    for (s, delta) in high_base(&cmp).into_iter().take(30) {
        if (delta.unsigned_abs() as f64) < floor {
            break;
        }
        // Extend towards the callers while one of them carries the change.
        let z = zoom(&cmp, &s, settings.zoom_cutoff, Direction::Top);
        if seen.contains(&z.end) {
            continue;
        }
        let overlap = cmp.cum_overlap(&z.end, &seen).unsigned_abs();
        let cum = cmp.cum_of(&z.end);
        if overlap * 2 > cum.unsigned_abs() {
            continue;
        }
        let calls: Vec<String> = z.end.calls.iter().map(|&l| labels.names[l as usize].clone()).collect();
        out.push(SequenceChange {
            calls,
            before: cmp.before.cum_of(&z.end),
            after: cmp.after.cum_of(&z.end),
            change: cum,
            base_change: cmp.base_of(&z.end),
        });
        seen.push(z.end);
        if out.len() >= settings.max_findings_per_kind {
            break;
        }
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.change.unsigned_abs()));
    Comparison {
        previous,
        metric: metric.name().into(),
        total_before,
        total_after,
        changes: out,
        work: String::new(),
        gone: Vec::new(),
    }
}
