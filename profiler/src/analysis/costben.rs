//! Cost-benefit (`seeds/abstract-dynamic-slicing.txt` §4, DESIGN §4.3): low-utility data
//! structures, whose fields cost much more to compute than their values are ever used for.
//!
//! **G_cost.** A node is an instruction in a context: `(site, g mod s)` where `g` encodes the
//! chain of receivers' allocation sites down the call stack (`g' = 3·g + allocId(this)`, static
//! methods keep their caller's `g`). A node depends on the nodes that last wrote the values it
//! reads (thin slicing: a field access does not depend on its base pointer); every node counts
//! how often it ran. Heap effects are marked: allocations, loads and stores, each store and load
//! tied to the field it touches (`O^d.f`, elements of arrays as `O^d.[]`), and each reference
//! store to the object it stores (the reference edges of the object trees). Branches and native
//! calls are consumer nodes, without a context.
//!
//! **Cost convention.** Every executed instruction that produces, moves or consumes a value
//! costs 1: local loads and stores, constants, arithmetic and comparisons, heap loads and stores,
//! allocations, branches, native calls (`dup`/`swap` shuffles, calls and returns of void cost
//! nothing). Bulk copies (`arraycopy`, `clone`) are transparent: loads from the copy depend on
//! the stores that wrote the original.
//!
//! **Figures.** HRAC of a node: the frequencies of the nodes that reach it on paths that read no
//! heap location (the node included, the heap reads excluded); RAC of a field: the mean HRAC of
//! its stores. HRAB of a node: the frequencies of the nodes it reaches on paths that write no
//! heap location (the writes excluded); RAB of a field: the mean HRAB of its loads, plus a
//! *large benefit* when a value loaded from it reaches a branch or a native — the largest RAC of
//! any field in the run, so that such a field never looks wasteful for its cost alone. n-RAC and
//! n-RAB of an allocation site: the sums over the fields of the objects in its reference tree of
//! height n (its own fields, the fields of the objects they point to, … n levels, cycles cut).
//! The **rate** is n-RAC / (n-RAB + 1) (the +1 keeps never-read structures finite, ranked by
//! cost). Whole-program figures: IPD, the share of executed instructions that produce only dead
//! values (nodes from which no consumer is reachable — a branch, a native, or a dereference);
//! IPP, the share that only feed branches; NLD, the share of graph nodes that are dead.

use super::copy::{instance_field_name, static_field_name};
use super::events::{Consumer, Event};
use super::objects::{type_name, Locator};
use super::shadow::{ShadowHeap, ShadowStack};
use super::words;
use crate::evidence::{Evidence, FieldCost, LowUtilityEvidence};
use crate::report::{CostSummary, Finding, Location, Settings};
use crate::vm::class::{Class, ClassId, Method, MethodId};
use crate::vm::heap::Ref;
use crate::vm::tracker::{is_user_class, Alloc, Bulk, HeapLoc, RefUse, Sink, Site, Value};
use rustc_hash::{FxHashMap, FxHashSet};

/// A node of G_cost; 0 is no node (a value with no recorded producer).
pub type NodeId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    Plain,
    Alloc,
    Load,
    Store,
    Branch,
    Native,
}

/// A heap location as cost-benefit groups them: a field (slot) of the objects of one
/// allocation node, their elements ([`ELEMENTS`]), or a static field (object 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldKey {
    pub object: NodeId,
    pub field: u32,
}

pub const ELEMENTS: u32 = u32::MAX;

/// What a value can reach (see [`CostGraph::reach`]).
const BRANCH: u8 = 1;
const NATIVE: u8 = 2;
const DEREF: u8 = 4;
const DEAD: u8 = 8;

#[derive(Debug, Clone)]
pub struct Node {
    pub site: Site,
    pub ctx: u32,
    pub effect: Effect,
    pub freq: u64,
    /// The nodes this one depends on.
    pub preds: Vec<NodeId>,
    /// Its value was dereferenced (a use that keeps it alive for IPD).
    pub deref: bool,
    /// The last field this heap node touched (to skip repeated bookkeeping).
    last_field: Option<FieldKey>,
}

/// The stores and loads of one field, and the allocation nodes of the objects stored in it.
#[derive(Debug, Clone, Default)]
pub struct FieldUse {
    pub stores: Vec<NodeId>,
    pub loads: Vec<NodeId>,
    pub targets: Vec<NodeId>,
}

/// G_cost with its heap effects.
#[derive(Debug, Clone)]
pub struct CostGraph {
    pub nodes: Vec<Node>,
    pub fields: FxHashMap<FieldKey, FieldUse>,
}

impl Default for CostGraph {
    fn default() -> Self {
        let none = Node {
            site: Site::default(),
            ctx: 0,
            effect: Effect::Plain,
            freq: 0,
            preds: Vec::new(),
            deref: false,
            last_field: None,
        };
        CostGraph { nodes: vec![none], fields: FxHashMap::default() }
    }
}

/// What the graph says once the run is over.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub rac: FxHashMap<FieldKey, f64>,
    pub rab: FxHashMap<FieldKey, f64>,
    /// The benefit a field gets when its values reach a branch or a native.
    pub large_benefit: f64,
    /// Per allocation node: n-RAC and n-RAB.
    pub n_rac: FxHashMap<NodeId, f64>,
    pub n_rab: FxHashMap<NodeId, f64>,
    pub ipd: f64,
    pub ipp: f64,
    pub nld: f64,
    pub edges: usize,
}

fn push_new(v: &mut Vec<NodeId>, n: NodeId) {
    if !v.contains(&n) {
        v.push(n);
    }
}

impl CostGraph {
    pub fn add(&mut self, site: Site, ctx: u32, effect: Effect) -> NodeId {
        self.nodes.push(Node { site, ctx, effect, freq: 0, preds: Vec::new(), deref: false, last_field: None });
        self.nodes.len() as NodeId - 1
    }

    /// `node` depends on `dep`.
    #[inline]
    pub fn edge(&mut self, node: NodeId, dep: NodeId) {
        if dep != 0 {
            let preds = &mut self.nodes[node as usize].preds;
            if preds.last() != Some(&dep) {
                push_new(preds, dep);
            }
        }
    }

    /// `node` (a load or a store) touched `key`.
    #[inline]
    pub fn touch(&mut self, node: NodeId, key: FieldKey) {
        let n = &mut self.nodes[node as usize];
        if n.last_field == Some(key) {
            return;
        }
        n.last_field = Some(key);
        let store = n.effect == Effect::Store;
        let f = self.fields.entry(key).or_default();
        push_new(if store { &mut f.stores } else { &mut f.loads }, node);
    }

    /// A reference to an object of allocation node `target` was stored in `key`.
    pub fn reference(&mut self, key: FieldKey, target: NodeId) {
        if target != 0 {
            push_new(&mut self.fields.entry(key).or_default().targets, target);
        }
    }

    fn succs(&self) -> Vec<Vec<NodeId>> {
        let mut succs = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for &p in &n.preds {
                succs[p as usize].push(i as NodeId);
            }
        }
        succs
    }

    /// Sums the frequencies of the nodes reachable from `start` through `next`, not entering
    /// nodes for which `stop` holds (`start` itself always counts).
    fn region<'g>(
        &self,
        start: NodeId,
        next: &dyn Fn(NodeId) -> &'g [NodeId],
        stop: &dyn Fn(&Node) -> bool,
        seen: &mut [u32],
        stamp: u32,
    ) -> u64 {
        let mut sum = 0;
        let mut work = vec![start];
        seen[start as usize] = stamp;
        while let Some(n) = work.pop() {
            let node = &self.nodes[n as usize];
            sum += node.freq;
            for &m in next(n) {
                if seen[m as usize] != stamp && !stop(&self.nodes[m as usize]) {
                    seen[m as usize] = stamp;
                    work.push(m);
                }
            }
        }
        sum
    }

    /// What each node's value can reach, following every dependence (through the heap too):
    /// flags [`BRANCH`], [`NATIVE`], [`DEREF`], [`DEAD`] (a value nothing depends on). Stores
    /// into objects handed to natives count as reaching a native.
    fn reach(&self, succs: &[Vec<NodeId>], to_natives: &FxHashSet<NodeId>) -> Vec<u8> {
        let mut reach = vec![0u8; self.nodes.len()];
        for (&key, f) in &self.fields {
            if to_natives.contains(&key.object) {
                f.stores.iter().for_each(|&s| reach[s as usize] |= NATIVE);
            }
        }
        let mut work: Vec<NodeId> = Vec::new();
        for (i, n) in self.nodes.iter().enumerate().skip(1) {
            reach[i] |= match n.effect {
                Effect::Branch => BRANCH,
                Effect::Native => NATIVE,
                _ if n.deref => DEREF,
                _ if succs[i].is_empty() => DEAD,
                _ => 0,
            };
            if reach[i] != 0 {
                work.push(i as NodeId);
            }
        }
        // Backwards from the ends: a node reaches what its dependents reach.
        while let Some(n) = work.pop() {
            let flags = reach[n as usize];
            for &p in &self.nodes[n as usize].preds {
                let old = reach[p as usize];
                if old | flags != old {
                    reach[p as usize] = old | flags;
                    work.push(p);
                }
            }
        }
        reach
    }

    /// RAC and RAB per field, n-RAC and n-RAB per allocation node (trees of height `height`),
    /// IPD, IPP and NLD against `instructions` executed. Objects of the allocation nodes in
    /// `to_natives` were handed to natives that read them (an array printed by `writeBytes`).
    pub fn analyze(&self, height: usize, instructions: u64, to_natives: &FxHashSet<NodeId>) -> Figures {
        let succs = self.succs();
        let reach = self.reach(&succs, to_natives);
        let mut seen = vec![0u32; self.nodes.len()];
        let mut stamp = 0;
        let mut hrac: FxHashMap<NodeId, u64> = FxHashMap::default();
        let mut hrab: FxHashMap<NodeId, u64> = FxHashMap::default();
        let reads_heap = |n: &Node| n.effect == Effect::Load;
        let writes_heap = |n: &Node| n.effect == Effect::Store;
        let backward = |n: NodeId| self.nodes[n as usize].preds.as_slice();
        let forward = |n: NodeId| succs[n as usize].as_slice();
        let mut fig = Figures::default();
        let mut consumed: FxHashSet<FieldKey> = FxHashSet::default();
        for (&key, f) in &self.fields {
            let mut cost = 0.0;
            for &s in &f.stores {
                let h = *hrac.entry(s).or_insert_with(|| {
                    stamp += 1;
                    self.region(s, &backward, &reads_heap, &mut seen, stamp)
                });
                cost += h as f64;
            }
            let mut benefit = 0.0;
            for &l in &f.loads {
                benefit += *hrab.entry(l).or_insert_with(|| {
                    stamp += 1;
                    self.region(l, &forward, &writes_heap, &mut seen, stamp)
                }) as f64;
            }
            // The values it holds reach a branch or a native, at any distance: through its loads,
            // or through loads of bulk copies of it (which depend on its stores directly).
            let read_by_native = to_natives.contains(&key.object) && key.field == ELEMENTS;
            let reaches = |n: &NodeId| reach[*n as usize] & (BRANCH | NATIVE) != 0;
            if read_by_native || f.stores.iter().any(reaches) || f.loads.iter().any(reaches) {
                consumed.insert(key);
            }
            fig.rac.insert(key, if f.stores.is_empty() { 0.0 } else { cost / f.stores.len() as f64 });
            fig.rab.insert(key, if f.loads.is_empty() { 0.0 } else { benefit / f.loads.len() as f64 });
        }
        fig.large_benefit = fig.rac.values().copied().fold(1.0, f64::max);
        for key in &consumed {
            *fig.rab.get_mut(key).expect("a field") += fig.large_benefit;
        }
        // Reference trees.
        let mut fields_of: FxHashMap<NodeId, Vec<FieldKey>> = FxHashMap::default();
        for &key in self.fields.keys() {
            if key.object != 0 {
                fields_of.entry(key.object).or_default().push(key);
            }
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.effect != Effect::Alloc {
                continue;
            }
            let (mut c, mut b) = (0.0, 0.0);
            let mut level = vec![i as NodeId];
            let mut in_tree = vec![i as NodeId];
            for _ in 0..height {
                let mut next = Vec::new();
                for o in &level {
                    for key in fields_of.get(o).map(Vec::as_slice).unwrap_or(&[]) {
                        c += fig.rac[key];
                        b += fig.rab[key];
                        for &t in &self.fields[key].targets {
                            if !in_tree.contains(&t) {
                                in_tree.push(t);
                                next.push(t);
                            }
                        }
                    }
                }
                level = next;
            }
            fig.n_rac.insert(i as NodeId, c);
            fig.n_rab.insert(i as NodeId, b);
        }
        // Dead and predicate-only values.
        let (mut dead_freq, mut pred_freq, mut dead_nodes) = (0u64, 0u64, 0usize);
        for (i, n) in self.nodes.iter().enumerate().skip(1) {
            match reach[i] {
                // Only dead ends, or a cycle that feeds nothing else.
                0 | DEAD => {
                    dead_freq += n.freq;
                    dead_nodes += 1;
                }
                BRANCH => pred_freq += n.freq,
                _ => {}
            }
        }
        let total = instructions.max(1) as f64;
        fig.ipd = dead_freq as f64 / total;
        fig.ipp = pred_freq as f64 / total;
        fig.nld = dead_nodes as f64 / (self.nodes.len() - 1).max(1) as f64;
        fig.edges = self.nodes.iter().map(|n| n.preds.len()).sum();
        fig
    }
}

/// What an allocation node is.
#[derive(Debug, Clone)]
struct AllocInfo {
    class: ClassId,
    /// The first user frame that led to it.
    user: Option<Site>,
}

pub struct CostBenefitTracker {
    settings: Settings,
    slots: usize,
    pub graph: CostGraph,
    /// Per method: node by `pc * slots + ctx` (0: none yet).
    index: Vec<Vec<NodeId>>,
    shadow: ShadowStack<NodeId>,
    heap: ShadowHeap<NodeId>,
    /// Allocation node of each live object, by handle.
    obj_node: Vec<NodeId>,
    allocs: FxHashMap<NodeId, AllocInfo>,
    /// Dense ids of allocation sites (`allocId`), by site, and by allocation node (0: none yet).
    site_ids: FxHashMap<Site, u64>,
    alloc_id: Vec<u64>,
    /// Allocation nodes of sites inside the JDK, by site and the user frame that reached them:
    /// a `StringBuilder`'s array is one structure per line of the program that builds one.
    jdk_allocs: FxHashMap<(Site, Option<Site>), NodeId>,
    /// Per thread, the receiver-chain code `g` of each open frame.
    chains: Vec<Vec<u64>>,
    current: usize,
    /// The running frame's context slot, `g mod s` (kept here: the ops of a frame all need it).
    ctx: u32,
    instructions: u64,
    /// The native being called, and the allocation nodes of objects passed to each native.
    native: MethodId,
    to_natives: FxHashSet<(NodeId, MethodId)>,
    /// (source, copy) allocation nodes of bulk copies: a native that reads the copy reads the
    /// source's values.
    bulk: FxHashSet<(NodeId, NodeId)>,
    pub findings: Vec<Finding>,
    pub summary: Option<CostSummary>,
}

impl CostBenefitTracker {
    pub fn new(settings: Settings) -> Self {
        CostBenefitTracker {
            slots: settings.cost_slots.max(1) as usize,
            settings,
            graph: CostGraph::default(),
            index: Vec::new(),
            shadow: ShadowStack::default(),
            heap: ShadowHeap::default(),
            obj_node: Vec::new(),
            allocs: FxHashMap::default(),
            site_ids: FxHashMap::default(),
            alloc_id: Vec::new(),
            jdk_allocs: FxHashMap::default(),
            chains: vec![Vec::new()],
            current: 0,
            ctx: 0,
            instructions: 0,
            native: 0,
            to_natives: FxHashSet::default(),
            bulk: FxHashSet::default(),
            findings: Vec::new(),
            summary: None,
        }
    }

    #[inline(always)]
    fn ctx(&self) -> u32 {
        self.ctx
    }

    /// Recomputes the running frame's slot after a call, a return or a thread switch.
    fn refresh_ctx(&mut self) {
        let g = self.chains[self.current].last().copied().unwrap_or(0);
        self.ctx = (g % self.slots as u64) as u32;
    }

    /// The node of `site` in context `ctx`, one more execution of it.
    #[inline(always)]
    fn node(&mut self, site: Site, ctx: u32, effect: Effect) -> NodeId {
        let k = site.pc as usize * self.slots + ctx as usize;
        let n = match self.index.get(site.method as usize).and_then(|row| row.get(k)) {
            Some(&n) if n != 0 => n,
            _ => self.new_node(site, ctx, effect, k),
        };
        self.graph.nodes[n as usize].freq += 1;
        n
    }

    #[inline(never)]
    fn new_node(&mut self, site: Site, ctx: u32, effect: Effect, k: usize) -> NodeId {
        let m = site.method as usize;
        if m >= self.index.len() {
            self.index.resize_with(m + 1, Vec::new);
        }
        let row = &mut self.index[m];
        if k >= row.len() {
            row.resize(k + 1, 0);
        }
        let n = self.graph.add(site, ctx, effect);
        self.index[m][k] = n;
        n
    }

    #[inline]
    fn object(&self, obj: Ref) -> NodeId {
        self.obj_node.get(obj as usize).copied().unwrap_or(0)
    }

    fn key(&self, loc: HeapLoc) -> FieldKey {
        match loc {
            HeapLoc::Field { obj, slot } => FieldKey { object: self.object(obj), field: slot },
            HeapLoc::Element { array, .. } => FieldKey { object: self.object(array), field: ELEMENTS },
            HeapLoc::Static { slot } => FieldKey { object: 0, field: slot },
        }
    }
}

/// The hooks cost-benefit analysis follows, fed by [`Consumer::consume`].
impl CostBenefitTracker {
    #[inline(always)]
    fn on_thread(&mut self, thread: usize) {
        if thread >= self.chains.len() {
            self.chains.resize_with(thread + 1, Vec::new);
        }
        self.current = thread;
        self.shadow.switch_to(thread);
        self.refresh_ctx();
    }

    #[inline(always)]
    fn on_call(&mut self, depth: usize, this: Ref) {
        let receiver = self.object(this);
        let id = match self.alloc_id.get(receiver as usize) {
            Some(&id) if receiver != 0 => Some(id),
            _ => None,
        };
        let chain = &mut self.chains[self.current];
        chain.truncate(depth.saturating_sub(1));
        let g = chain.last().copied().unwrap_or(0);
        chain.push(match id {
            Some(id) => g.wrapping_mul(3).wrapping_add(id),
            None => g,
        });
        self.refresh_ctx();
    }

    #[inline(always)]
    fn on_return(&mut self) {
        self.chains[self.current].pop();
        self.refresh_ctx();
    }

    #[inline(always)]
    fn on_alloc(&mut self, a: &Alloc, user_frame: Option<Site>) {
        let ctx = self.ctx();
        let n = if user_frame == Some(a.site) {
            self.node(a.site, ctx, Effect::Alloc)
        } else {
            let key = (a.site, user_frame);
            let graph = &mut self.graph;
            let n = *self.jdk_allocs.entry(key).or_insert_with(|| graph.add(a.site, ctx, Effect::Alloc));
            self.graph.nodes[n as usize].freq += 1;
            n
        };
        if n as usize >= self.alloc_id.len() || self.alloc_id[n as usize] == 0 {
            let next = self.site_ids.len() as u64 + 1;
            let id = *self.site_ids.entry(a.site).or_insert(next);
            if n as usize >= self.alloc_id.len() {
                self.alloc_id.resize(n as usize + 1, 0);
            }
            self.alloc_id[n as usize] = id;
            self.allocs.insert(n, AllocInfo { class: a.class, user: user_frame });
        }
        let i = a.obj as usize;
        if i >= self.obj_node.len() {
            self.obj_node.resize(i + 1, 0);
        }
        self.obj_node[i] = n;
        self.shadow.set(a.dst, n);
    }

    #[inline(always)]
    fn flow_use(&mut self, obj: Ref, how: RefUse) {
        if how == RefUse::Native {
            let n = self.object(obj);
            if n != 0 {
                self.to_natives.insert((n, self.native));
            }
        }
    }

    #[inline(always)]
    fn on_free(&mut self, obj: Ref) {
        if let Some(n) = self.obj_node.get_mut(obj as usize) {
            *n = 0;
        }
        self.heap.free(obj);
    }

    #[inline(always)]
    fn on_bulk_copy(&mut self, src: Ref, src_pos: usize, dst: Ref, dst_pos: usize, len: usize, unit: Bulk) {
        self.heap.bulk_copy(src, src_pos, dst, dst_pos, len, unit);
        // The copy points where the original did.
        if let Bulk::Elements(_) = unit {
            let from = FieldKey { object: self.object(src), field: ELEMENTS };
            let to = FieldKey { object: self.object(dst), field: ELEMENTS };
            if from.object != 0 && to.object != 0 && from != to {
                self.bulk.insert((from.object, to.object));
                let targets = self.graph.fields.get(&from).map(|f| f.targets.clone()).unwrap_or_default();
                for t in targets {
                    self.graph.reference(to, t);
                }
            }
        }
    }

    #[inline(always)]
    fn flow_const(&mut self, site: Site, dst: usize) {
        let n = self.node(site, self.ctx(), Effect::Plain);
        self.shadow.set(dst, n);
    }

    #[inline(always)]
    fn flow_move(&mut self, site: Site, src: usize, dst: usize) {
        let dep = self.shadow.get(src);
        let n = self.node(site, self.ctx(), Effect::Plain);
        self.graph.edge(n, dep);
        self.shadow.set(dst, n);
    }

    #[inline(always)]
    fn flow_compute(&mut self, site: Site, srcs: &[usize], dst: usize) {
        let n = self.node(site, self.ctx(), Effect::Plain);
        for &s in srcs {
            let dep = self.shadow.get(s);
            self.graph.edge(n, dep);
        }
        self.shadow.set(dst, n);
    }

    #[inline(always)]
    fn flow_consume(&mut self, site: Site, srcs: &[usize], sink: Sink) {
        let effect = match sink {
            Sink::Branch => Effect::Branch,
            Sink::Native => Effect::Native,
        };
        let n = self.node(site, 0, effect);
        for &s in srcs {
            let dep = self.shadow.get(s);
            self.graph.edge(n, dep);
        }
    }

    #[inline(always)]
    fn flow_deref(&mut self, slot: usize) {
        let n = self.shadow.get(slot);
        if n != 0 {
            self.graph.nodes[n as usize].deref = true;
        }
    }

    #[inline(always)]
    fn flow_load(&mut self, site: Site, loc: HeapLoc, dst: usize) {
        let n = self.node(site, self.ctx(), Effect::Load);
        self.graph.edge(n, self.heap.get(loc));
        let key = self.key(loc);
        self.graph.touch(n, key);
        self.shadow.set(dst, n);
    }

    #[inline(always)]
    fn flow_store(&mut self, site: Site, loc: HeapLoc, value: Value, src: usize) {
        let dep = self.shadow.get(src);
        let n = self.node(site, self.ctx(), Effect::Store);
        self.graph.edge(n, dep);
        self.heap.set(loc, n);
        let key = self.key(loc);
        self.graph.touch(n, key);
        if value.is_ref && value.bits != 0 {
            let target = self.object(value.bits as Ref);
            self.graph.reference(key, target);
        }
    }
}

impl Consumer for CostBenefitTracker {
    const PASSES: bool = false;

    fn consume(&mut self, e: &Event<'_>) {
        match *e {
            // Told once, before `finish` (IPD and IPP are shares of the run's instructions).
            Event::Instructions(total) => self.instructions = total,
            Event::Thread(t) => self.on_thread(t),
            Event::Call { depth, this, .. } => self.on_call(depth, this),
            Event::Return(_) => self.on_return(),
            Event::Alloc { alloc, user_frame } => self.on_alloc(&alloc, user_frame),
            Event::Native { callee, .. } => self.native = callee,
            Event::Use { obj, how, .. } => self.flow_use(obj, how),
            Event::Free { obj, .. } => self.on_free(obj),
            Event::BulkCopy { src, src_pos, dst, dst_pos, len, unit } => {
                self.on_bulk_copy(src, src_pos, dst, dst_pos, len, unit)
            }
            Event::New(dst) => self.shadow.set(dst, 0),
            Event::Const { site, dst } => self.flow_const(site, dst),
            Event::Move { site, src, dst } => self.flow_move(site, src, dst),
            Event::Shuffle { base, from } => self.shadow.shuffle(base, from),
            Event::Compute { site, srcs, dst: Some(dst) } => self.flow_compute(site, srcs, dst),
            Event::Compute { site, srcs, dst: None } => self.flow_consume(site, srcs, Sink::Branch),
            Event::Consume { site, srcs, sink } => self.flow_consume(site, srcs, sink),
            Event::Deref { slot, .. } => self.flow_deref(slot),
            Event::Load { site, loc, dst, .. } => self.flow_load(site, loc, dst),
            Event::Store { site, loc, value, src, .. } => self.flow_store(site, loc, value, src),
            Event::Gc { .. } | Event::Pass { .. } => {}
        }
    }
    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        // Natives that read what they are handed (output, encoders, checksums…), not those that
        // only look at an object's identity or class, and not bulk copies (followed element by
        // element instead).
        let reads_contents = |m: MethodId| {
            let m = &methods[m as usize];
            let class = &*classes[m.class as usize].name;
            let identity_only = matches!(
                class,
                "java/lang/Object"
                    | "java/lang/Class"
                    | "java/lang/Thread"
                    | "java/lang/ref/Reference"
                    | "java/lang/reflect/Array"
                    | "jdk/internal/misc/Unsafe"
                    | "jdk/internal/reflect/Reflection"
            ) || class.starts_with("java/lang/invoke/");
            !identity_only && !matches!(&*m.name, "arraycopy" | "identityHashCode")
        };
        let mut to_natives: FxHashSet<NodeId> =
            self.to_natives.iter().filter(|(_, m)| reads_contents(*m)).map(|(n, _)| *n).collect();
        // A native reads what it is handed and what that points to (a String's bytes), and the
        // originals of bulk copies it reads.
        let mut points_to: FxHashMap<NodeId, Vec<NodeId>> = FxHashMap::default();
        for (key, f) in &self.graph.fields {
            if key.object != 0 {
                points_to.entry(key.object).or_default().extend(&f.targets);
            }
        }
        for &(from, to) in &self.bulk {
            points_to.entry(to).or_default().push(from);
        }
        let mut work: Vec<(NodeId, usize)> = to_natives.iter().map(|&n| (n, 0)).collect();
        while let Some((n, depth)) = work.pop() {
            for &t in points_to.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
                if depth < self.settings.tree_height && to_natives.insert(t) {
                    work.push((t, depth + 1));
                }
            }
        }
        let figures = self.graph.analyze(self.settings.tree_height, self.instructions, &to_natives);
        self.summary = Some(CostSummary {
            nodes: self.graph.nodes.len() as u64 - 1,
            edges: figures.edges as u64,
            instructions: self.instructions,
            ipd: round3(figures.ipd),
            ipp: round3(figures.ipp),
            nld: round3(figures.nld),
            large_benefit: figures.large_benefit,
        });
        self.findings = self.build(&figures, methods, classes);
    }
}

/// A field of an allocation site's objects that some of them never read.
struct UnreadField {
    name: String,
    /// The RAC of its stores in the objects that never read it.
    cost: f64,
    /// How many objects never read it.
    objects: u64,
}

/// "its fields a, b are never read", or, when other objects of the site read them (another
/// calling context), in how many of the site's objects they are not.
fn unread_phrase(unread: &[UnreadField], instances: u64) -> String {
    // `GradeStats.median` → `median`: the subject already names the class.
    let short = |u: &UnreadField| u.name.rsplit('.').next().unwrap_or(&u.name).to_string();
    let subject = if unread.len() == 1 { "its field" } else { "its fields" };
    let verb = if unread.len() == 1 { "is" } else { "are" };
    let names = unread.iter().map(short).collect::<Vec<_>>().join(", ");
    let everywhere = |u: &UnreadField| u.objects >= instances;
    if unread.iter().all(everywhere) {
        format!("{subject} {names} {verb} never read")
    } else if unread.iter().all(|u| u.objects == unread[0].objects) {
        format!(
            "{subject} {names} {verb} never read in {} of its {} objects (the others read {})",
            words::count(unread[0].objects),
            words::count(instances),
            if unread.len() == 1 { "it" } else { "them" },
        )
    } else {
        let each = unread
            .iter()
            .map(|u| match everywhere(u) {
                true => format!("{} (in all of them)", short(u)),
                false => format!("{} (in {})", short(u), words::count(u.objects)),
            })
            .collect::<Vec<_>>()
            .join(", ");
        format!("of its {} objects, {subject} {each} {verb} never read", words::count(instances))
    }
}

/// The share of a user object's own field cost that unread fields must reach to make it
/// low-utility by themselves (1 / this).
const UNREAD_SHARE: f64 = 10.0;

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl CostBenefitTracker {
    fn field_name(&self, key: FieldKey, classes: &[Class]) -> String {
        match (key.object, key.field) {
            (0, slot) => static_field_name(classes, slot),
            (o, ELEMENTS) => match self.allocs.get(&o) {
                Some(a) => format!("{} elements", words::source_type(&type_name(classes, a.class))),
                None => "[]".into(),
            },
            (o, slot) => match self.allocs.get(&o) {
                Some(a) => instance_field_name(classes, a.class, slot),
                None => format!("field #{slot}"),
            },
        }
    }

    fn build(&self, fig: &Figures, methods: &[Method], classes: &[Class]) -> Vec<Finding> {
        let mut locator = Locator::default();
        let mut loc = |site: Site| -> Location {
            locator.resolve(methods, classes, site);
            locator.get(site)
        };
        // Allocation sites as the user sees them: the site, or the user frame that reached a JDK site.
        let mut sites: FxHashMap<(Site, Site), Vec<NodeId>> = FxHashMap::default();
        for (&n, a) in &self.allocs {
            if let Some(user) = a.user {
                sites.entry((self.graph.nodes[n as usize].site, user)).or_default().push(n);
            }
        }
        let mut out: Vec<(f64, Finding)> = Vec::new();
        for ((site, user), mut nodes) in sites {
            nodes.sort_unstable();
            let n_rac: f64 = nodes.iter().map(|n| fig.n_rac.get(n).copied().unwrap_or(0.0)).sum();
            let n_rab: f64 = nodes.iter().map(|n| fig.n_rab.get(n).copied().unwrap_or(0.0)).sum();
            let rate = n_rac / (n_rab + 1.0);
            let min_cost = self.settings.low_utility_min_cost as f64;
            let class = self.allocs[&nodes[0]].class;
            let instances: u64 = nodes.iter().map(|&n| self.graph.nodes[n as usize].freq).sum();
            // A user class's fields that are written and never read: their cost is pure waste,
            // however useful the fields next to them are (a read that decides a branch gives the
            // whole structure a large benefit). Per context: a field one caller's objects read and
            // another's never do is unread in the latter's objects only.
            let mut unread: Vec<UnreadField> = Vec::new();
            let mut own_rac = 0.0;
            if is_user_class(&classes[class as usize]) {
                for (k, use_) in self.graph.fields.iter().filter(|(k, _)| nodes.contains(&k.object)) {
                    let rac = fig.rac[k];
                    own_rac += rac;
                    if use_.loads.is_empty() && !use_.stores.is_empty() {
                        let name = self.field_name(*k, classes);
                        let objects = self.graph.nodes[k.object as usize].freq;
                        match unread.iter_mut().find(|u| u.name == name) {
                            Some(u) => {
                                u.cost += rac;
                                u.objects += objects;
                            }
                            None => unread.push(UnreadField { name, cost: rac, objects }),
                        }
                    }
                }
            }
            unread.sort_by(|a, b| b.cost.total_cmp(&a.cost).then(a.name.cmp(&b.name)));
            let unread_rac: f64 = unread.iter().map(|u| u.cost).sum();
            let wasteful = n_rac >= min_cost && rate >= self.settings.low_utility_rate;
            let unread_costly = unread_rac >= min_cost && unread_rac * UNREAD_SHARE >= own_rac;
            if !wasteful && !unread_costly {
                continue;
            }
            let type_name = type_name(classes, class);
            // The object's own fields, costliest first.
            let mut fields: Vec<(FieldKey, f64, f64)> = self
                .graph
                .fields
                .keys()
                .filter(|k| nodes.contains(&k.object))
                .map(|&k| (k, fig.rac[&k], fig.rab[&k]))
                .collect();
            fields.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let mut by_name: Vec<(String, f64, f64)> = Vec::new();
            for (k, c, b) in fields {
                let name = self.field_name(k, classes);
                match by_name.iter_mut().find(|(n, _, _)| *n == name) {
                    Some(e) => {
                        e.1 += c;
                        e.2 += b;
                    }
                    None => by_name.push((name, c, b)),
                }
            }
            let costliest = by_name
                .iter()
                .take(3)
                .map(|(n, c, b)| format!("{n} (costs {}, used {})", words::count(*c as u64), words::count(*b as u64)))
                .collect::<Vec<_>>()
                .join(", ");
            let at = loc(user);
            let made_in = (site != user).then(|| loc(site));
            let what = words::allocation_subject(&at, &type_name, made_in.as_ref());
            let message = if wasteful {
                format!(
                    "{what}: building it costs {} instructions, for {} of use ({rate:.0}× more cost than benefit){}",
                    words::count(n_rac as u64),
                    words::count(n_rab as u64),
                    if costliest.is_empty() { String::new() } else { format!("; costliest: {costliest}") }
                )
            } else {
                format!(
                    "{what}: {}, yet computing {} costs {} of the {} instructions that build it",
                    unread_phrase(&unread, instances),
                    if unread.len() == 1 { "it" } else { "them" },
                    words::count(unread_rac as u64),
                    words::count(own_rac as u64),
                )
            };
            let score = if wasteful { rate } else { unread_rac / (own_rac - unread_rac + 1.0) };
            let evidence = LowUtilityEvidence {
                avoidable_cost: if wasteful { n_rac.round() } else { unread_rac.round() },
                contexts: nodes.len() as u64,
                fields: by_name
                    .iter()
                    .map(|(n, c, b)| FieldCost { field: n.clone(), rab: b.round(), rac: c.round() })
                    .collect(),
                instances,
                made_by_library: site != user,
                n_rab: n_rab.round(),
                n_rac: n_rac.round(),
                rate: round3(rate),
                tree_height: self.settings.tree_height as u64,
                type_name,
                unread_cost: unread_rac.round(),
                unread_everywhere: unread.iter().all(|u| u.objects >= instances),
                unread_fields: unread.iter().map(|u| u.name.clone()).collect(),
                ..LowUtilityEvidence::default()
            };
            let mut f = Finding::new(Evidence::LowUtility(evidence), score, message, at);
            let at = loc(site);
            if site != user && at.file.is_some() {
                f = f.related(at.clone(), format!("allocated inside {}", words::short_method(&at.class, &at.method)));
            }
            // Where the costliest field is written.
            if let Some((k, _, _)) = self
                .graph
                .fields
                .iter()
                .filter(|(k, _)| nodes.contains(&k.object))
                .map(|(k, _)| (*k, fig.rac[k], 0.0))
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            {
                for &s in self.graph.fields[&k].stores.iter().take(3) {
                    let at = loc(self.graph.nodes[s as usize].site);
                    if at.file.is_some() {
                        f = f.related(at, format!("writes {}", self.field_name(k, classes)));
                    }
                }
            }
            out.push((n_rac, f));
        }
        out.sort_by(|a, b| {
            b.1.score.total_cmp(&a.1.score).then(b.0.total_cmp(&a.0)).then(a.1.location.cmp(&b.1.location))
        });
        // Several JDK sites of one structure reached from one line (an ArrayList's first array
        // and the larger ones that replace it) are one finding: the highest ranked, with all the
        // instances.
        let mut merged: Vec<Finding> = Vec::new();
        for (_, f) in out {
            let Evidence::LowUtility(e) = &f.evidence else { continue };
            let same = merged
                .iter_mut()
                .find(|m| m.location == f.location && m.evidence.type_name() == Some(e.type_name.as_str()));
            match same.map(|m| &mut m.evidence) {
                Some(Evidence::LowUtility(m)) => m.instances += e.instances,
                _ => merged.push(f),
            }
        }
        merged.truncate(self.settings.max_findings_per_kind);
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(pc: u32) -> Site {
        Site { method: 0, pc }
    }

    /// The paper's Fig. 11, at its granularity (one node per statement): `A.foo` computes `t`
    /// in a loop of 1000 iterations and stores it (node 19); main reads `a.t` (node 4) and adds
    /// it to an `IntList` (node 35 passes it, node 28 stores it to the list's array). The text
    /// prints: HRAC(35) = 1, RAC(O33.t) = HRAC(19) = 4005, RAB(O33.t) = HRAB(4) = 2 (nodes 4 and
    /// 35), RAC(O24.ELM) = HRAC(28) = 2, RAB(O24.ELM) = 0 (never read).
    #[test]
    fn the_papers_figure_11_numbers() {
        let mut g = CostGraph::default();
        let node = |g: &mut CostGraph, pc: u32, effect: Effect, freq: u64, deps: &[NodeId]| {
            let n = g.add(site(pc), 0, effect);
            g.nodes[n as usize].freq = freq;
            deps.iter().for_each(|&d| g.edge(n, d));
            n
        };
        let o32 = node(&mut g, 32, Effect::Alloc, 1, &[]); // IntList l = new IntList()
        let o24 = node(&mut g, 24, Effect::Alloc, 1, &[]); // its array, in IntList's constructor
        let elems = node(&mut g, 25, Effect::Store, 1, &[o24]); // this.elems = array
        let o33 = node(&mut g, 33, Effect::Alloc, 1, &[]); // A a = new A()
                                                           // A.foo: five statements run once, four in the loop body run 1000 times.
        let s0 = node(&mut g, 12, Effect::Plain, 1, &[]); // s = 0
        let i0 = node(&mut g, 13, Effect::Plain, 1, &[]); // i = 0
        let k = node(&mut g, 14, Effect::Plain, 1, &[]); // k = 3
        let inc = node(&mut g, 15, Effect::Plain, 1000, &[i0]);
        g.edge(inc, inc); // i++
        let mul = node(&mut g, 16, Effect::Plain, 1000, &[inc, k]); // m = i * k
        let add = node(&mut g, 17, Effect::Plain, 1000, &[mul, s0]); // n = s + m
        let mov = node(&mut g, 18, Effect::Plain, 1000, &[add]); // s = n
        g.edge(add, mov);
        let _cond = node(&mut g, 15, Effect::Branch, 1001, &[inc]); // i < 1000
        let ret = node(&mut g, 20, Effect::Plain, 1, &[mov]); // r = s
        let n19 = node(&mut g, 19, Effect::Store, 1, &[ret]); // this.t = r
        let n4 = node(&mut g, 4, Effect::Load, 1, &[n19]); // a.t
        let n35 = node(&mut g, 35, Effect::Plain, 1, &[n4]); // l.add(a.t)
        let n28 = node(&mut g, 28, Effect::Store, 1, &[n35]); // elems[count++] = v
        let t = FieldKey { object: o33, field: 0 };
        let elm = FieldKey { object: o24, field: ELEMENTS };
        let elems_field = FieldKey { object: o32, field: 0 };
        g.touch(n19, t);
        g.touch(n4, t);
        g.touch(n28, elm);
        g.touch(elems, elems_field);
        g.reference(elems_field, o24);

        let fig = g.analyze(4, 5000, &FxHashSet::default());
        assert_eq!(fig.rac[&t], 4005.0);
        assert_eq!(fig.rab[&t], 2.0);
        assert_eq!(fig.rac[&elm], 2.0);
        assert_eq!(fig.rab[&elm], 0.0);
        // HRAC(35) = 1: it depends directly on the heap read 4.
        let mut seen = vec![0; g.nodes.len()];
        let back = |n: NodeId| g.nodes[n as usize].preds.as_slice();
        assert_eq!(g.region(n35, &back, &|n| n.effect == Effect::Load, &mut seen, 1), 1);
        // The list's 2-RAC reaches its array's elements; its 1-RAC does not.
        assert_eq!(fig.n_rac[&o32], fig.rac[&elems_field] + 2.0);
        assert_eq!(g.analyze(1, 5000, &FxHashSet::default()).n_rac[&o32], fig.rac[&elems_field]);
        assert_eq!(fig.n_rac[&o33], 4005.0);
        assert_eq!(fig.n_rab[&o33], 2.0);
        // Nothing here reaches a native or a dereference: the sum's 3000 computations and the
        // stores produce dead values; only the condition feeds nothing but a branch (the
        // counter feeds the dead sum too).
        assert_eq!(fig.ipd, 3011.0 / 5000.0, "3000 + s0, k, r, 19, 4, 35, 28, three allocations, the array store");
        assert_eq!(fig.ipp, 1001.0 / 5000.0);
    }

    #[test]
    fn a_value_that_reaches_a_branch_gets_the_large_benefit() {
        let mut g = CostGraph::default();
        let o = g.add(site(1), 0, Effect::Alloc);
        let c = g.add(site(2), 0, Effect::Plain);
        g.nodes[c as usize].freq = 50;
        let st = g.add(site(3), 0, Effect::Store);
        g.nodes[st as usize].freq = 1;
        g.edge(st, c);
        let ld = g.add(site(4), 0, Effect::Load);
        g.nodes[ld as usize].freq = 1;
        g.edge(ld, st);
        let br = g.add(site(5), 0, Effect::Branch);
        g.nodes[br as usize].freq = 1;
        g.edge(br, ld);
        let key = FieldKey { object: o, field: 0 };
        g.touch(st, key);
        g.touch(ld, key);
        let fig = g.analyze(4, 100, &FxHashSet::default());
        assert_eq!(fig.rac[&key], 51.0);
        assert_eq!(fig.large_benefit, 51.0);
        assert_eq!(fig.rab[&key], 2.0 + 51.0, "its own forward work plus the large benefit");
        assert_eq!(fig.ipd, 0.0, "everything feeds the branch");
        assert_eq!(fig.ipp, 0.53);
    }
}
