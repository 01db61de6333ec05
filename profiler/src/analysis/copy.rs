//! Copy profiling (`seeds/copy-profiling.txt`, DESIGN §4.1).
//!
//! Every stack and local slot's shadow is a [`Tag`]: the copy-graph node of the heap location its
//! value was loaded from (or the producer node of a fresh reference) and the site that loaded it.
//! A heap store of a tagged value adds an edge from that node to the stored-to location's node;
//! when the source is a heap location the store is a *copy* (a value moved heap → stack → heap
//! unmodified), counted in the storing method's flat profile. A computation, a branch or a native
//! consuming a tagged value adds an edge to the consumer node `C`.
//!
//! Nodes: producers (allocation site × context slot, and for a site inside the JDK the user frame
//! that reached it, so that one `Arrays.copyOf` does not merge every array in the program),
//! instance fields `O.f`, array elements
//! `O.ELM`, static fields, and `C`. The heap needs no shadow of its own: a heap location's node is
//! a function of its object's producer and the field.
//!
//! Hot chains: paths of heap-to-heap edges up to `max_chain_hops` long; a path's frequency is its
//! smallest edge frequency. **Waste factor = hops × frequency × bytes** (the paper's definition in
//! §5.1). The paper's printed example (`(355162, 2)` for a 2-hop chain of 177581 two-byte copies)
//! shows frequency × bytes, the *volume*; we report both, rank by the waste factor, and test both.

use super::events::{Consumer, Event};
use super::objects::{type_name, Locator, ObjectTags};
use super::shadow::ShadowStack;
use super::words;
use crate::evidence::{CloneEvidence, CopyChainEvidence, Evidence};
use crate::graphs::{Graph, GraphEdge, GraphNode};
use crate::report::{Finding, Kind, Location, MethodCopies, Settings};
use crate::vm::class::{Class, ClassId, Method, MethodId};
use crate::vm::heap::Ref;
use crate::vm::tracker::{is_user_class, Alloc, Bulk, HeapLoc, Site};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use rustc_hash::{FxHashMap, FxHashSet};

const NONE: u32 = 0;
const CONSUMER: u32 = 1;
/// The slot number standing for "any element" in an array's element node.
const ELEMENT: u32 = u32::MAX;
/// The producer standing for objects the VM made without an allocation op the program ran.
const UNTRACKED: u32 = u32::MAX;
/// Copy-graph edges a clone finding names (its heaviest), for its drawing.
const CLONE_GRAPH_EDGES: usize = 24;

/// A slot's shadow: where its value came from.
#[derive(Debug, Clone, Copy, Default)]
struct Tag {
    node: u32,
    site: Site,
    /// The object it was loaded from (0: none, or a static).
    obj: Ref,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Node {
    Consumer,
    Producer(u32),
    Field { producer: u32, slot: u32 },
    Static { slot: u32 },
}

/// One way an edge happened: the load that picked the value up and the store that put it down
/// (for a consumer edge, the consuming op), with the first user frame of the store.
#[derive(Debug, Clone)]
struct Way {
    load: Site,
    store: Site,
    user: Option<Site>,
    count: u64,
}

#[derive(Debug, Clone)]
struct Edge {
    src: u32,
    dst: u32,
    freq: u64,
    /// Of `freq`, the copies from one object into that same object (a field into another of its
    /// fields, an element into another of its array's): program state moving, not data copied.
    within_object: u64,
    /// Size of the copied value.
    bytes: u8,
    /// The commonest ways this edge happened (a few at most).
    ways: Vec<Way>,
}

const MAX_WAYS: usize = 4;

pub struct CopyTracker {
    settings: Settings,
    pub objects: ObjectTags,
    nodes: Vec<Node>,
    node_index: FxHashMap<Node, u32>,
    /// Field and element nodes by producer and slot + 1 (0: the element node).
    field_nodes: Vec<Vec<u32>>,
    edges: Vec<Edge>,
    edge_index: FxHashMap<(u32, u32), u32>,
    /// Frequency of the edge from each node to the consumer `C`.
    consumed: Vec<u64>,
    /// Shadows of every thread's slots; `cur` is the running thread.
    slots: ShadowStack<Tag>,
    cur: usize,
    /// Copies stored by each method (flat), and with its callees (cumulative).
    flat: Vec<u64>,
    cumulative: Vec<u64>,
    /// Per thread: copies so far, the open frames, and how many frames of each method are open
    /// (a recursive method's copies are counted once).
    copies: Vec<u64>,
    frames: Vec<Vec<OpenFrame>>,
    active: Vec<Vec<u32>>,
    last_native: Site,
    /// Filled by `finish`.
    pub findings: Vec<Finding>,
    pub profile: Vec<MethodCopies>,
    /// Build [`CopyTracker::graph`] when the run ends (for `--format dot`).
    pub keep_graph: bool,
    pub graph: Option<Graph>,
}

/// A frame the analysis was told of and has not seen end.
#[derive(Debug, Clone, Copy)]
struct OpenFrame {
    method: MethodId,
    /// Whether `method` is the user's code.
    user: bool,
    /// Where its caller called it.
    call_site: Site,
    /// The thread's copies when it was entered.
    copies_at_entry: u64,
}

impl CopyTracker {
    pub fn new(settings: Settings) -> Self {
        let mut t = CopyTracker {
            objects: ObjectTags::new(settings.context_slots, true),
            settings,
            nodes: Vec::new(),
            node_index: FxHashMap::default(),
            field_nodes: Vec::new(),
            edges: Vec::new(),
            edge_index: FxHashMap::default(),
            consumed: Vec::new(),
            slots: ShadowStack::default(),
            cur: 0,
            flat: Vec::new(),
            cumulative: Vec::new(),
            copies: vec![0],
            frames: vec![Vec::new()],
            active: vec![Vec::new()],
            last_native: Site::default(),
            findings: Vec::new(),
            profile: Vec::new(),
            keep_graph: false,
            graph: None,
        };
        // Node ids 0 (no origin) and 1 (the consumer) are fixed.
        t.nodes.push(Node::Consumer);
        t.nodes.push(Node::Consumer);
        t.node_index.insert(Node::Consumer, CONSUMER);
        t
    }

    fn node(&mut self, n: Node) -> u32 {
        let next = self.nodes.len() as u32;
        let id = *self.node_index.entry(n).or_insert(next);
        if id == next {
            self.nodes.push(n);
        }
        id
    }

    /// The node of a heap location. Field and element nodes are cached per producer, by slot
    /// (slot 0 of the cache is the element node), since this runs on every heap access.
    #[inline]
    fn heap_node(&mut self, loc: HeapLoc) -> u32 {
        let (obj, slot) = match loc {
            HeapLoc::Field { obj, slot } => (obj, slot),
            HeapLoc::Element { array, .. } => (array, ELEMENT),
            HeapLoc::Static { slot } => return self.node(Node::Static { slot }),
        };
        let Some(p) = self.objects.producer_of(obj) else {
            return self.node(Node::Field { producer: UNTRACKED, slot });
        };
        let (pi, k) = (p as usize, if slot == ELEMENT { 0 } else { slot as usize + 1 });
        if let Some(&n) = self.field_nodes.get(pi).and_then(|v| v.get(k)) {
            if n != NONE {
                return n;
            }
        }
        let n = self.node(Node::Field { producer: p, slot });
        if pi >= self.field_nodes.len() {
            self.field_nodes.resize_with(pi + 1, Vec::new);
        }
        let v = &mut self.field_nodes[pi];
        if k >= v.len() {
            v.resize(k + 1, NONE);
        }
        v[k] = n;
        n
    }

    fn is_heap(&self, node: u32) -> bool {
        matches!(self.nodes[node as usize], Node::Field { .. } | Node::Static { .. })
    }

    #[inline(always)]
    fn shadow(&mut self, slot: usize) -> &mut Tag {
        self.slots.slot(slot)
    }

    /// Adds `n` to edge `src → dst` (values of `bytes` each), which happened as `(load, store)`,
    /// `within_object` if from an object into itself; `in_frames` when the store ran in the running
    /// thread's top frame (a bulk copy's native did not), so its user frame is known.
    fn add_edge(
        &mut self,
        in_frames: bool,
        (src, dst): (u32, u32),
        bytes: u8,
        (load, store): (Site, Site),
        n: u64,
        within_object: bool,
    ) {
        let next = self.edges.len() as u32;
        let e = *self.edge_index.entry((src, dst)).or_insert(next);
        if e == next {
            self.edges.push(Edge { src, dst, freq: 0, within_object: 0, bytes, ways: Vec::new() });
        }
        let edge = &mut self.edges[e as usize];
        edge.freq += n;
        if within_object {
            edge.within_object += n;
        }
        edge.bytes = bytes;
        if let Some(w) = edge.ways.iter_mut().find(|w| w.load == load && w.store == store) {
            w.count += n;
            return;
        }
        if edge.ways.len() >= MAX_WAYS {
            return;
        }
        let user = if in_frames { self.user_frame(store) } else { None };
        self.edges[e as usize].ways.push(Way { load, store, user, count: n });
    }

    /// The innermost user frame of the running thread for an event at `site` in its top frame
    /// (as `Context::user_frame` has it, from the frames the analysis was told of).
    fn user_frame(&self, site: Site) -> Option<Site> {
        let mut inner = site;
        for f in self.frames[self.cur].iter().rev() {
            if f.user && f.method == inner.method {
                return Some(inner);
            }
            inner = f.call_site;
        }
        None
    }

    fn count_copies(&mut self, method: MethodId, n: u64) {
        let m = method as usize;
        if m >= self.flat.len() {
            self.flat.resize(m + 1, 0);
        }
        self.flat[m] += n;
        self.copies[self.cur] += n;
    }
}

/// The hooks copy profiling follows, fed by [`Consumer::consume`].
impl CopyTracker {
    fn on_alloc(&mut self, a: &Alloc, user_frame: Option<Site>) {
        let p = self.objects.on_alloc(a, user_frame);
        let node = self.node(Node::Producer(p));
        *self.shadow(a.dst) = Tag { node, site: a.site, obj: 0 };
    }

    fn on_bulk_copy(&mut self, src: Ref, src_pos: usize, dst: Ref, dst_pos: usize, len: usize, unit: Bulk) {
        if len == 0 {
            return;
        }
        let site = self.last_native;
        match unit {
            // Every element lands in the same element node: one edge carries them all.
            Bulk::Elements(bytes) => {
                let from = self.heap_node(HeapLoc::Element { array: src, index: src_pos as u32 });
                let to = self.heap_node(HeapLoc::Element { array: dst, index: dst_pos as u32 });
                self.add_edge(false, (from, to), bytes, (site, site), len as u64, src == dst);
            }
            Bulk::Fields => {
                for i in 0..len as u32 {
                    let from = self.heap_node(HeapLoc::Field { obj: src, slot: src_pos as u32 + i });
                    let to = self.heap_node(HeapLoc::Field { obj: dst, slot: dst_pos as u32 + i });
                    self.add_edge(false, (from, to), 4, (site, site), 1, src == dst);
                }
            }
        }
        self.count_copies(site.method, len as u64);
    }

    fn on_call(&mut self, call_site: Site, callee: MethodId, depth: usize, user: bool) {
        let (cur, m) = (self.cur, callee as usize);
        // Frames discarded by a fatal error never returned: forget them.
        while self.frames[cur].len() >= depth.max(1) {
            let gone = self.frames[cur].pop().expect("not empty");
            self.active[cur][gone.method as usize] -= 1;
        }
        let active = &mut self.active[cur];
        if m >= active.len() {
            active.resize(m + 1, 0);
        }
        active[m] += 1;
        let copies_at_entry = self.copies[cur];
        self.frames[cur].push(OpenFrame { method: callee, user, call_site, copies_at_entry });
    }

    fn on_return(&mut self) {
        let cur = self.cur;
        if let Some(f) = self.frames[cur].pop() {
            let (m, start) = (f.method as usize, f.copies_at_entry);
            self.active[cur][m] -= 1;
            if self.active[cur][m] == 0 {
                if m >= self.cumulative.len() {
                    self.cumulative.resize(m + 1, 0);
                }
                self.cumulative[m] += self.copies[cur] - start;
            }
        }
    }

    fn on_native(&mut self, site: Site) {
        self.last_native = site;
    }

    fn on_free(&mut self, obj: Ref) {
        self.objects.on_free(obj);
    }

    fn on_thread(&mut self, thread: usize) {
        if thread != self.cur {
            if thread >= self.copies.len() {
                self.copies.resize(thread + 1, 0);
                self.frames.resize_with(thread + 1, Vec::new);
                self.active.resize_with(thread + 1, Vec::new);
            }
            self.slots.switch_to(thread);
            self.cur = thread;
        }
    }

    #[inline(always)]
    fn flow_new(&mut self, dst: usize) {
        *self.shadow(dst) = Tag::default();
    }

    #[inline(always)]
    fn flow_move(&mut self, src: usize, dst: usize) {
        self.slots.copy(src, dst);
    }

    fn flow_shuffle(&mut self, base: usize, from: &[usize]) {
        self.slots.shuffle(base, from);
    }

    #[inline(always)]
    fn flow_compute(&mut self, srcs: &[usize], dst: Option<usize>) {
        for &src in srcs {
            let tag = *self.shadow(src);
            if tag.node != NONE && self.is_heap(tag.node) {
                // Edges to the consumer only need their frequency: counted by source node.
                let n = tag.node as usize;
                if n >= self.consumed.len() {
                    self.consumed.resize(n + 1, 0);
                }
                self.consumed[n] += 1;
            }
        }
        if let Some(d) = dst {
            *self.shadow(d) = Tag::default();
        }
    }

    #[inline]
    fn flow_load(&mut self, site: Site, loc: HeapLoc, dst: usize) {
        let node = self.heap_node(loc);
        *self.shadow(dst) = Tag { node, site, obj: loc.object() };
    }

    #[inline]
    fn flow_store(&mut self, site: Site, loc: HeapLoc, bytes: u8, src: usize) {
        let tag = *self.shadow(src);
        if tag.node == NONE {
            return;
        }
        let dst = self.heap_node(loc);
        let within = tag.obj != 0 && tag.obj == loc.object();
        self.add_edge(true, (tag.node, dst), bytes, (tag.site, site), 1, within);
        if self.is_heap(tag.node) {
            self.count_copies(site.method, 1);
        }
    }
}

impl Consumer for CopyTracker {
    const PASSES: bool = false;

    fn consume(&mut self, e: &Event<'_>) {
        match *e {
            Event::Alloc { alloc, user_frame } => self.on_alloc(&alloc, user_frame),
            Event::BulkCopy { src, src_pos, dst, dst_pos, len, unit } => {
                self.on_bulk_copy(src, src_pos, dst, dst_pos, len, unit)
            }
            Event::Call { site, callee, depth, user, .. } => self.on_call(site, callee, depth, user),
            Event::Return(_) => self.on_return(),
            Event::Native { site, .. } => self.on_native(site),
            Event::Free { obj, .. } => self.on_free(obj),
            Event::Thread(t) => self.on_thread(t),
            Event::New(dst) | Event::Const { dst, .. } => self.flow_new(dst),
            Event::Move { src, dst, .. } => self.flow_move(src, dst),
            Event::Shuffle { base, from } => self.flow_shuffle(base, from),
            Event::Compute { srcs, dst, .. } => self.flow_compute(srcs, dst),
            Event::Consume { srcs, .. } => self.flow_compute(srcs, None),
            Event::Load { site, loc, dst, .. } => self.flow_load(site, loc, dst),
            Event::Store { site, loc, bytes, src, .. } => self.flow_store(site, loc, bytes, src),
            Event::Instructions(_)
            | Event::Gc { .. }
            | Event::Deref { .. }
            | Event::Use { .. }
            | Event::Pass { .. } => {}
        }
    }

    fn finish(&mut self, methods: &[Method], classes: &[Class]) {
        let report = Analysis { t: self, methods, classes };
        let (findings, profile) = report.build();
        // A clone's copies are many edges, each of which may be under the hot threshold: the
        // graph keeps the ones its findings name.
        let named: FxHashSet<u32> = findings
            .iter()
            .filter(|f| f.kind() == Kind::Clone)
            .flat_map(|f| f.evidence.graph_nodes())
            .map(|&n| n as u32)
            .collect();
        let graph = self.keep_graph.then(|| report.named_graph(&mut Locator::default(), &named));
        self.findings = findings;
        self.profile = profile;
        self.graph = graph;
    }
}

/// The report-building half: reads the graph once the run is over.
struct Analysis<'a> {
    t: &'a CopyTracker,
    methods: &'a [Method],
    classes: &'a [Class],
}

/// A hot chain: heap-to-heap edges, each hop's destination the next hop's source.
struct Chain {
    edges: Vec<u32>,
    freq: u64,
    bytes: u8,
}

impl Chain {
    fn volume(&self) -> u64 {
        self.freq * self.bytes as u64
    }
    fn waste(&self) -> u64 {
        self.edges.len() as u64 * self.volume()
    }
}

/// How many times their own size objects may be copied into and still be a clone.
const REWRITES: u64 = 2;

/// How many times larger than the array it fills an array must be to be a table looked up.
const TABLE_RATIO: u64 = 4;

/// The name of objects the copy analysis did not see made (constants, the JVM's own).
pub const JVM_MADE: &str = "objects the JVM made";

impl Analysis<'_> {
    fn build(&self) -> (Vec<Finding>, Vec<MethodCopies>) {
        let mut locator = Locator::default();
        let mut findings = self.chains(&mut locator);
        findings.extend(self.clones(&mut locator));
        (findings, self.profile(&mut locator))
    }

    fn location(&self, locator: &mut Locator, site: Site) -> Location {
        locator.resolve(self.methods, self.classes, site);
        locator.get(site)
    }

    /// Producer `p`'s name in the source's words: `new int[…] (line 12)`, `String objects made by
    /// String.substring(…) (line 30)`.
    fn producer_name(&self, locator: &mut Locator, p: u32) -> String {
        if p == UNTRACKED {
            return JVM_MADE.into();
        }
        let prod = &self.t.objects.producers[p as usize];
        let at = self.location(locator, prod.user.unwrap_or(prod.site));
        let made_in = (prod.user != Some(prod.site)).then(|| self.location(locator, prod.site));
        let what = words::allocation_subject(&at, &type_name(self.classes, prod.class), made_in.as_ref());
        format!("{what} ({})", line_of(&at, prod.user.is_some()))
    }

    /// Node `n`'s name in the source's words: `Cell.value (line 4)`, `int[] elements (line 9)`,
    /// `String contents (line 12)`, `ArrayList elements (line 20)`.
    fn node_name(&self, locator: &mut Locator, n: u32) -> String {
        let Some(prod) = self.t.objects.producers.get(self.owner(n) as usize) else {
            return match self.t.nodes[n as usize] {
                Node::Consumer => "a computation or native".into(),
                Node::Static { slot } => static_field_name(self.classes, slot),
                _ => JVM_MADE.into(),
            };
        };
        let at = self.location(locator, prod.user.unwrap_or(prod.site));
        let line = line_of(&at, prod.user.is_some());
        match self.t.nodes[n as usize] {
            Node::Field { slot: ELEMENT, .. } => {
                let made_in = prod.user != Some(prod.site);
                let ty = self.element_type(locator, prod);
                // An array is named by the object that owns it (1-object sensitivity): a library's
                // array inside the user's structure is that structure's elements.
                let owner = prod.owner_site.and_then(|o| self.t.objects.producers.iter().find(|q| q.site == o));
                let holder = owner.map(|q| {
                    let ty = words::source_type(&type_name(self.classes, q.class));
                    (ty, line_of(&self.location(locator, q.user.unwrap_or(q.site)), q.user.is_some()))
                });
                match (ty.as_str(), holder) {
                    ("String", _) => format!("String contents ({line})"),
                    (_, Some((h, _))) if made_in => format!("{h} elements ({line})"),
                    (_, Some((h, from))) => format!("{ty} elements ({line}) of the {h} from {from}"),
                    _ => format!("{ty} elements ({line})"),
                }
            }
            Node::Field { .. } => format!("{} ({line})", self.field_name(n)),
            Node::Producer(p) => self.producer_name(locator, p),
            Node::Consumer | Node::Static { .. } => unreachable!("owner() is only a producer for fields and producers"),
        }
    }

    /// A field node's field as the source names it (`Order.sku`); other nodes by their kind.
    fn field_name(&self, n: u32) -> String {
        match self.t.nodes[n as usize] {
            Node::Field { producer, slot } if slot != ELEMENT => {
                match self.t.objects.producers.get(producer as usize) {
                    Some(prod) => instance_field_name(self.classes, prod.class, slot),
                    None => format!("field #{slot}"),
                }
            }
            Node::Field { .. } => "elements".into(),
            Node::Static { slot } => static_field_name(self.classes, slot),
            Node::Consumer | Node::Producer(_) => String::new(),
        }
    }

    fn owner(&self, n: u32) -> u32 {
        match self.t.nodes[n as usize] {
            Node::Field { producer, .. } | Node::Producer(producer) => producer,
            _ => UNTRACKED,
        }
    }

    /// Whether node `n` holds the program's data rather than a library's bookkeeping: a field of a
    /// user class, an element of an array (but not of a library's own node table), or
    /// the key or value a library container holds (`HashMap.Node.value`, `Long.value`).
    fn is_data(&self, n: u32) -> bool {
        let class_of = |p: u32| self.t.objects.producers.get(p as usize).map(|prod| &self.classes[prod.class as usize]);
        match self.t.nodes[n as usize] {
            Node::Consumer | Node::Producer(_) => false,
            // A static holds what it refers to, not data of its own: a chain from one into a
            // library's bookkeeping (an iterator's outer list) moves no data.
            Node::Static { .. } => false,
            Node::Field { producer, slot: ELEMENT } => class_of(producer).is_some_and(|c| {
                let elem = c.name.trim_start_matches('[');
                let library = ["Ljava/", "Ljdk/", "Lsun/"].iter().any(|p| elem.starts_with(p));
                !(library && elem.contains('$'))
            }),
            Node::Field { producer, slot } => class_of(producer).is_some_and(|c| {
                is_user_class(c)
                    || matches!(
                        instance_field_name(self.classes, c.id, slot).rsplit('.').next(),
                        Some("value" | "key" | "item" | "element" | "val")
                    )
            }),
        }
    }

    /// Whether node `n` is a string's characters (compact strings' `byte[]`), as its name says.
    fn is_string_contents(&self, locator: &mut Locator, n: u32) -> bool {
        let Node::Field { producer, slot: ELEMENT } = self.t.nodes[n as usize] else { return false };
        let Some(prod) = self.t.objects.producers.get(producer as usize) else { return false };
        self.element_type(locator, prod) == "String"
    }

    /// The type an array's elements are named by: `String` for a string's contents.
    fn element_type(&self, locator: &mut Locator, prod: &super::objects::Producer) -> String {
        let at = self.location(locator, prod.user.unwrap_or(prod.site));
        let made_in = (prod.user != Some(prod.site)).then(|| self.location(locator, prod.site));
        words::object_type(&at, &type_name(self.classes, prod.class), made_in.as_ref())
    }

    /// Whether edge `e`'s copies are the program's state moving rather than data copied: mostly
    /// within one object (a cursor saved into another field, elements moved about in their array),
    /// or into a field linking a structure's objects (`n.next = head.next` relinks a list).
    fn moves_state(&self, e: &Edge) -> bool {
        e.within_object * 2 > e.freq || self.is_link(e.dst)
    }

    /// Whether edge `e` takes values out of a table: from an array's elements into an array much
    /// smaller than it (`product[i] = exp[log[a] + log[b]]`, a lookup in a code table). A copy of
    /// an array, whole or per call, goes into one about its size.
    fn reads_a_table(&self, e: &Edge) -> bool {
        let average = |n: u32| match self.t.nodes[n as usize] {
            Node::Field { producer, slot: ELEMENT } => {
                self.t.objects.producers.get(producer as usize).map(|p| p.bytes / p.instances.max(1))
            }
            _ => None,
        };
        matches!((average(e.src), average(e.dst)), (Some(from), Some(into)) if from >= TABLE_RATIO * into.max(1))
    }

    /// Whether node `n` is a field linking objects of one class (`Node.next`).
    fn is_link(&self, n: u32) -> bool {
        match self.t.nodes[n as usize] {
            Node::Field { producer, slot } if slot != ELEMENT => self
                .t
                .objects
                .producers
                .get(producer as usize)
                .is_some_and(|prod| is_link_field(self.classes, prod.class, slot)),
            _ => false,
        }
    }

    /// Whether node `n` is inside an intermediate container: an array element, or a field of a
    /// library object (a map's entry, a box).
    fn is_container(&self, n: u32) -> bool {
        match self.t.nodes[n as usize] {
            Node::Field { producer, slot } => self
                .t
                .objects
                .producers
                .get(producer as usize)
                .is_some_and(|prod| slot == ELEMENT || !is_user_class(&self.classes[prod.class as usize])),
            _ => false,
        }
    }

    /// The hot part of the copy graph: heap-to-heap edges copied at least `min_copies` times, as a
    /// petgraph graph (node weights: copy-graph nodes; edge weights: edge indices). Edges that move
    /// the program's state ([`Analysis::moves_state`]) are left out.
    fn hot_graph(&self) -> DiGraph<u32, u32> {
        let t = self.t;
        let mut g = DiGraph::new();
        let mut index: FxHashMap<u32, NodeIndex> = FxHashMap::default();
        for (i, e) in t.edges.iter().enumerate() {
            if t.is_heap(e.src) && t.is_heap(e.dst) && e.freq >= self.settings().min_copies && !self.moves_state(e) {
                let a = *index.entry(e.src).or_insert_with(|| g.add_node(e.src));
                let b = *index.entry(e.dst).or_insert_with(|| g.add_node(e.dst));
                g.add_edge(a, b, i as u32);
            }
        }
        g
    }

    fn chains(&self, locator: &mut Locator) -> Vec<Finding> {
        let t = self.t;
        let s = &self.settings();
        let mut g = self.hot_graph();
        // Copy cycles: values that go round between places (a strongly connected component of
        // more than one node) are state that moves as the program works (registers and a stack
        // trading values, two lists relinked into each other), not a second representation of
        // data: their edges are no chain's. (A node copying into itself is objects of one site
        // copied into others of that site: a copy per call, or a context-insensitive merge.)
        let mut cyclic = FxHashSet::default();
        for scc in petgraph::algo::tarjan_scc(&g) {
            if scc.len() > 1 {
                for &n in &scc {
                    cyclic.extend(g.edges(n).filter(|e| scc.contains(&e.target())).map(|e| e.id()));
                }
            }
        }
        g.retain_edges(|_, e| !cyclic.contains(&e));
        // Values of objects the JDK made for itself (a cache of boxes, interned constants) are
        // handed out by reference: moving such a reference copies none of the program's data.
        // So are those of objects made where nothing was observed (the JDK's start-up, a test
        // launcher, the VM itself): the user's code and what it calls are always observed.
        let jdk_made = |n: u32| match t.nodes[n as usize] {
            Node::Field { producer: UNTRACKED, .. } => true,
            Node::Field { producer: p, .. } | Node::Producer(p) => {
                p != UNTRACKED && t.objects.producers.get(p as usize).is_some_and(|q| q.user.is_none())
            }
            _ => false,
        };
        g.retain_edges(|g, e| !jdk_made(g[g.edge_endpoints(e).expect("edge").0]));
        // A string's characters copied into another string's by a string operation (`replace`,
        // `substring`, `toLowerCase`) are what that operation is: its cost is the call's (a
        // temporary string, repeated work), not a second representation to share.
        g.retain_edges(|g, e| {
            let (a, b) = g.edge_endpoints(e).expect("edge");
            !(self.is_string_contents(locator, g[a]) && self.is_string_contents(locator, g[b]))
        });
        // Every path of up to `max_chain_hops` edges, from every edge (within a search budget).
        let mut chains = Vec::new();
        let mut budget = 200_000usize;
        for e in g.edge_references() {
            let mut path = vec![*e.weight()];
            self.extend(&g, e.target(), &mut path, &mut chains, &mut budget);
        }
        chains.sort_by(|a: &Chain, b: &Chain| b.waste().cmp(&a.waste()).then(b.edges.len().cmp(&a.edges.len())));
        // Keep a chain only if no chosen chain already contains it.
        let mut chosen: Vec<Chain> = Vec::new();
        for c in chains {
            if chosen.len() >= s.max_findings_per_kind {
                break;
            }
            let contained = chosen.iter().any(|k| k.edges.windows(c.edges.len()).any(|w| w == c.edges.as_slice()));
            // One chain per source line: the others through it are variations of the worst.
            let Some(user) = self.user_store(&t.edges[c.edges[0] as usize]).and_then(|w| w.user) else { continue };
            let same_line = chosen
                .iter()
                .any(|k| self.user_store(&t.edges[k.edges[0] as usize]).and_then(|w| w.user) == Some(user));
            if !contained && !same_line {
                chosen.push(c);
            }
        }
        chosen.iter().map(|c| self.chain_finding(locator, c)).collect()
    }

    /// The copy graph as it stands at the end, for a developer to look at: the hot edges (heap
    /// to heap, and from there to a computation) between nodes named in the source's words.
    fn named_graph(&self, locator: &mut Locator, named: &FxHashSet<u32>) -> Graph {
        let t = self.t;
        let hot = |e: &Edge| {
            e.freq >= self.settings().min_copies && (t.is_heap(e.src) || t.is_heap(e.dst))
                || named.contains(&e.src) && named.contains(&e.dst)
        };
        let mut g = Graph::new();
        let mut index: FxHashMap<u32, NodeIndex> = FxHashMap::default();
        for e in t.edges.iter().filter(|e| hot(e)) {
            let [a, b] = [e.src, e.dst].map(|n| {
                *index.entry(n).or_insert_with(|| {
                    let user = match t.nodes[n as usize] {
                        Node::Producer(p) | Node::Field { producer: p, .. } => {
                            t.objects.producers.get(p as usize).is_some_and(|q| q.user == Some(q.site))
                        }
                        Node::Static { .. } => true,
                        Node::Consumer => false,
                    };
                    let figures = match t.consumed.get(n as usize) {
                        Some(&c) if c > 0 => format!("{} values used by a computation", words::count(c)),
                        _ => String::new(),
                    };
                    g.add_node(GraphNode { name: self.node_name(locator, n), figures, user, id: Some(n as u64) })
                })
            });
            let label = format!("{} copies", words::count(e.freq));
            g.add_edge(a, b, GraphEdge { label, weight: e.freq });
        }
        g
    }

    /// Grows `path` (edge indices, ending at node `at` of `g`) by one hot edge at a time, up to
    /// `max_chain_hops`, recording every prefix as a chain.
    fn extend(
        &self,
        g: &DiGraph<u32, u32>,
        at: NodeIndex,
        path: &mut Vec<u32>,
        chains: &mut Vec<Chain>,
        budget: &mut usize,
    ) {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let edges = &self.t.edges;
        let freq = path.iter().map(|&e| edges[e as usize].freq).min().unwrap_or(0);
        chains.push(Chain { edges: path.clone(), freq, bytes: edges[path[0] as usize].bytes });
        if path.len() >= self.settings().max_chain_hops {
            return;
        }
        for e in g.edges(at) {
            if !path.contains(e.weight()) {
                path.push(*e.weight());
                self.extend(g, e.target(), path, chains, budget);
                path.pop();
            }
        }
    }

    fn settings(&self) -> &Settings {
        &self.t.settings
    }

    /// The commonest way an edge happened, with a user frame for its store.
    fn user_store<'e>(&self, e: &'e Edge) -> Option<&'e Way> {
        e.ways.iter().filter(|w| w.user.is_some()).max_by_key(|w| w.count)
    }

    fn chain_finding(&self, locator: &mut Locator, c: &Chain) -> Finding {
        let t = self.t;
        let edges: Vec<&Edge> = c.edges.iter().map(|&e| &t.edges[e as usize]).collect();
        let first = edges[0];
        // Where a developer removes the copy: the first hop into an intermediate container (a
        // map's entry, an array, a box), else the first hop.
        let into = edges.iter().copied().find(|e| self.is_container(e.dst) && self.user_store(e).is_some());
        let way = self.user_store(into.unwrap_or(first)).expect("chosen chains have a user frame");
        let location = self.location(locator, way.user.expect("user frame"));
        // Chains that copy into the same kind of container in the same method are one problem
        // (the fields of one record put into one map), whatever line each field is on.
        let merge_key = format!("{}.{}{}|{}", location.class, location.method, location.descriptor, into.is_some());
        // The field whose value goes into the container (`email` of `Customer.email → …`).
        let field = self.field_name(into.unwrap_or(first).src);
        let hops = edges.len();
        // Where the value came from, and whether anything ever computed with it.
        let producer = t
            .edges
            .iter()
            .filter(|e| e.dst == first.src && matches!(t.nodes[e.src as usize], Node::Producer(_)))
            .max_by_key(|e| e.freq)
            .map(|e| self.node_name(locator, e.src));
        let last = edges[hops - 1].dst;
        let consumed = t.consumed.get(last as usize).is_some_and(|&n| n > 0);
        let mut path = vec![self.node_name(locator, first.src)];
        for e in &edges {
            path.push(self.node_name(locator, e.dst));
        }
        let message = format!(
            "{} copied {} without computation: {}{}",
            words::plural(c.freq, "value", "values"),
            words::plural(hops as u64, "time", "times"),
            path.join(" → "),
            if consumed { "" } else { "; the copies are never used by a computation" }
        );
        let user_data = std::iter::once(first.src).chain(edges.iter().map(|e| e.dst)).any(|n| self.is_data(n));
        let evidence = CopyChainEvidence {
            bytes: c.bytes as u64,
            consumed,
            field,
            frequency: c.freq,
            from_a_table: self.reads_a_table(first),
            graph_nodes: std::iter::once(first.src).chain(edges.iter().map(|e| e.dst)).map(u64::from).collect(),
            hops: hops as u64,
            merge_key,
            path: path.clone(),
            producer,
            through_containers: edges[..hops - 1].iter().filter(|e| self.is_container(e.dst)).count() as u64,
            user_data,
            via_container: into.is_some(),
            volume: c.volume(),
            waste_factor: c.waste(),
            ..CopyChainEvidence::default()
        };
        let mut f = Finding::new(Evidence::CopyChain(evidence), c.waste() as f64, message, location);
        for (i, e) in edges.iter().enumerate() {
            let Some(w) = e.ways.iter().max_by_key(|w| w.count) else { continue };
            let load = self.location(locator, w.load);
            let store = self.location(locator, w.store);
            f = f.related(load, format!("hop {} of {hops}: loaded from {}", i + 1, path[i]));
            f = f.related(store, format!("hop {} of {hops}: stored to {}", i + 1, path[i + 1]));
            if let Some(u) = w.user.filter(|u| *u != w.store) {
                let user = self.location(locator, u);
                f = f.related(user, format!("hop {} of {hops}: the call that made it", i + 1));
            }
        }
        f
    }

    /// Pairs of allocation sites whose object graphs much data is copied between (§5.2): direct
    /// flow between objects' fields, attributed also to the objects that point to them (up to 3
    /// references up). Reported for pairs of the same type (a list into a list, a char[] into a
    /// char[]): a copy into a different kind of object is a transformation, not a clone.
    fn clones(&self, locator: &mut Locator) -> Vec<Finding> {
        let t = self.t;
        let owner = |n: u32| match t.nodes[n as usize] {
            Node::Field { producer, .. } if producer != UNTRACKED => Some(producer),
            _ => None,
        };
        let mut direct: FxHashMap<(u32, u32), u64> = FxHashMap::default();
        // The copy-graph edges of each pair of objects, for the clone's part of the graph.
        let mut direct_edges: FxHashMap<(u32, u32), Vec<u32>> = FxHashMap::default();
        let mut parents: FxHashMap<u32, FxHashSet<u32>> = FxHashMap::default();
        for (i, e) in t.edges.iter().enumerate().filter(|(_, e)| !self.moves_state(e) && !self.reads_a_table(e)) {
            match (t.nodes[e.src as usize], owner(e.src), owner(e.dst)) {
                (_, Some(a), Some(b)) => {
                    *direct.entry((a, b)).or_default() += e.freq * e.bytes as u64;
                    direct_edges.entry((a, b)).or_default().push(i as u32);
                }
                (Node::Producer(child), None, Some(parent)) if child != parent => {
                    parents.entry(child).or_default().insert(parent);
                }
                _ => {}
            }
        }
        // Each producer with the producers pointing to it, up to 3 steps, and the steps taken.
        // Outer pairs (more steps) sort first among equal volumes, so that they explain inner ones.
        let ancestors = |p: u32| -> Vec<(u32, u32)> {
            let mut seen = vec![(p, 0u32)];
            let mut frontier = vec![p];
            for depth in 1..=3 {
                let mut next = Vec::new();
                for q in frontier {
                    for &r in parents.get(&q).into_iter().flatten() {
                        if seen.len() < 32 && !seen.iter().any(|s| s.0 == r) {
                            seen.push((r, depth));
                            next.push(r);
                        }
                    }
                }
                frontier = next;
            }
            seen
        };
        let mut total: FxHashMap<(u32, u32), (u64, u32)> = FxHashMap::default();
        for (&(a, b), &v) in &direct {
            for (x, dx) in ancestors(a) {
                for &(y, dy) in &ancestors(b) {
                    let entry = total.entry((x, y)).or_default();
                    entry.0 += v;
                    entry.1 = entry.1.max(dx + dy);
                }
            }
        }
        // A clone is a copy into an object of the same type as the original.
        let same_type = |x: u32, y: u32| t.objects.producers[x as usize].class == t.objects.producers[y as usize].class;
        // Data that flows both ways between two structures (registers and a stack trading values,
        // nodes of two lists relinked into each other) is state moving, not a copy made of one.
        let exchanged = |x: u32, y: u32, v: u64| total.get(&(y, x)).is_some_and(|back| back.0 * 2 >= v);
        // The bytes of each producer's objects and of the objects they own: a clone writes its
        // objects once, so more copied into them than they hold means they are written over
        // and over (an output buffer, an iterator's reused value), not cloned.
        let mut owned_bytes: FxHashMap<u32, u64> = FxHashMap::default();
        for (p, prod) in t.objects.producers.iter().enumerate() {
            for (a, _) in ancestors(p as u32) {
                *owned_bytes.entry(a).or_default() += prod.bytes;
            }
        }
        let rewritten = |y: u32, v: u64| v > REWRITES * owned_bytes.get(&y).copied().unwrap_or(0);
        // An object made from one made at the same place is the next value of a computation (a
        // sum of immutable values, an iterator's next step), not a clone of it.
        let same_place = |x: u32, y: u32| {
            let (px, py) = (&t.objects.producers[x as usize], &t.objects.producers[y as usize]);
            px.site == py.site && px.user == py.user
        };
        let mut pairs: Vec<((u32, u32), (u64, u32))> = total
            .iter()
            .filter(|&(&(x, y), &(v, _))| {
                x != y && same_type(x, y) && !exchanged(x, y, v) && !rewritten(y, v) && !same_place(x, y)
            })
            .map(|(&k, &v)| (k, v))
            .collect();
        pairs.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(b.1 .1.cmp(&a.1 .1)).then(a.0.cmp(&b.0)));
        let min_volume = self.settings().min_copies * 4;
        let mut chosen: Vec<((u32, u32), u64)> = Vec::new();
        for ((x, y), (v, _)) in pairs {
            if v < min_volume || chosen.len() >= self.settings().max_findings_per_kind {
                break;
            }
            // A pair explained by a chosen pair of their owners, with the same volume, adds nothing.
            let explained = chosen.iter().any(|&((cx, cy), cv)| {
                cv == v && ancestors(x).iter().any(|a| a.0 == cx) && ancestors(y).iter().any(|a| a.0 == cy)
            });
            // Both roots are objects the user's code allocates: what the user can stop cloning.
            let in_user_code = |p: u32| {
                let prod = &t.objects.producers[p as usize];
                prod.user == Some(prod.site)
            };
            if !explained && in_user_code(x) && in_user_code(y) {
                chosen.push(((x, y), v));
            }
        }
        chosen
            .into_iter()
            .map(|((x, y), v)| {
                let (px, py) = (&t.objects.producers[x as usize], &t.objects.producers[y as usize]);
                let location = self.location(locator, py.user.unwrap_or(py.site));
                let source = self.location(locator, px.user.unwrap_or(px.site));
                let (nx, ny) = (self.producer_name(locator, x), self.producer_name(locator, y));
                // Its part of the copy graph: the heaviest edges from x's object graph into y's.
                let (below_x, below_y): (FxHashSet<u32>, FxHashSet<u32>) = {
                    let under = |root: u32| {
                        direct_edges
                            .keys()
                            .flat_map(|&(a, b)| [a, b])
                            .filter(|&p| ancestors(p).iter().any(|s| s.0 == root))
                            .collect()
                    };
                    (under(x), under(y))
                };
                let mut edges: Vec<u32> = direct_edges
                    .iter()
                    .filter(|((a, b), _)| below_x.contains(a) && below_y.contains(b))
                    .flat_map(|(_, es)| es.iter().copied())
                    .collect();
                edges.sort_by_key(|&i| {
                    let e = &t.edges[i as usize];
                    (std::cmp::Reverse(e.freq * e.bytes as u64), i)
                });
                let mut nodes: Vec<u32> = Vec::new();
                for &i in edges.iter().take(CLONE_GRAPH_EDGES) {
                    let e = &t.edges[i as usize];
                    for n in [e.src, e.dst] {
                        if !nodes.contains(&n) {
                            nodes.push(n);
                        }
                    }
                }
                let message = format!(
                    "{} bytes copied from the objects of {nx} into those of {ny}: a clone built copy by copy",
                    words::count(v)
                );
                let evidence = CloneEvidence {
                    graph_nodes: nodes.into_iter().map(u64::from).collect(),
                    source: nx,
                    target: ny,
                    volume: v,
                    ..CloneEvidence::default()
                };
                Finding::new(Evidence::Clone(evidence), v as f64, message, location)
                    .related(source, "the cloned object graph's root is allocated here")
            })
            .collect()
    }

    fn profile(&self, locator: &mut Locator) -> Vec<MethodCopies> {
        let t = self.t;
        let mut rows: Vec<MethodCopies> = (0..t.flat.len().max(t.cumulative.len()))
            .filter_map(|m| {
                let flat = t.flat.get(m).copied().unwrap_or(0);
                let cumulative = t.cumulative.get(m).copied().unwrap_or(0).max(flat);
                if cumulative == 0 {
                    return None;
                }
                let loc = self.location(locator, Site { method: m as MethodId, pc: 0 });
                Some(MethodCopies {
                    class: loc.class,
                    method: loc.method,
                    descriptor: loc.descriptor,
                    file: loc.file,
                    line: loc.line,
                    flat,
                    cumulative,
                })
            })
            .collect();
        // The 100 methods that copy most themselves, and the 100 that copy most with their callees.
        rows.sort_by(|a, b| b.cumulative.cmp(&a.cumulative).then(a.class.cmp(&b.class)));
        let mut keep: Vec<bool> = (0..rows.len()).map(|i| i < 100).collect();
        let mut by_flat: Vec<usize> = (0..rows.len()).collect();
        by_flat.sort_by(|&a, &b| rows[b].flat.cmp(&rows[a].flat));
        by_flat.iter().take(100).for_each(|&i| keep[i] = true);
        let mut rows: Vec<MethodCopies> = rows.into_iter().zip(keep).filter(|(_, k)| *k).map(|(r, _)| r).collect();
        rows.sort_by(|a, b| b.flat.cmp(&a.flat).then(b.cumulative.cmp(&a.cumulative)).then(a.class.cmp(&b.class)));
        rows
    }
}

/// `line 12` in the user's code, `Integer.java:415` in a library's, or the method where a
/// location has no line.
fn line_of(at: &Location, user: bool) -> String {
    match (at.line, user) {
        (Some(l), true) => format!("line {l}"),
        (Some(_), false) => at.short(),
        (None, _) => words::short_method(&at.class, &at.method),
    }
}

/// How a copy chain names a lambda's captured value.
pub const LAMBDA_CAPTURE: &str = "a value the lambda captured";

/// `Cell.value`: the instance field of `class` (or a superclass) in `slot`.
pub fn instance_field_name(classes: &[Class], class: ClassId, slot: u32) -> String {
    match instance_field(classes, class, slot) {
        Some((k, f)) => {
            let owner = super::words::source_type(&k.name);
            match owner.as_str() {
                "lambda" => LAMBDA_CAPTURE.into(),
                _ => format!("{owner}.{}", f.name),
            }
        }
        None => format!("field #{slot}"),
    }
}

/// The instance field in `slot` of `class`'s objects, with the class declaring it.
pub fn instance_field(classes: &[Class], class: ClassId, slot: u32) -> Option<(&Class, &crate::vm::class::Field)> {
    let mut c = Some(class);
    while let Some(id) = c {
        let k = &classes[id as usize];
        if let Some(f) = k.fields.iter().find(|f| !f.is_static() && f.slot == slot) {
            return Some((k, f));
        }
        c = k.super_class;
    }
    None
}

/// Whether field `slot` of `class`'s objects links them to one another (`Node.next`: its type is
/// the class declaring it): what is stored there is the structure's shape, not data.
fn is_link_field(classes: &[Class], class: ClassId, slot: u32) -> bool {
    instance_field(classes, class, slot)
        .is_some_and(|(k, f)| f.descriptor.strip_prefix('L').and_then(|d| d.strip_suffix(';')) == Some(k.name.as_ref()))
}

/// `Main.CACHE`: the static field in global slot `slot`.
pub fn static_field_name(classes: &[Class], slot: u32) -> String {
    for k in classes {
        if let Some(f) = k.fields.iter().find(|f| f.is_static() && f.slot == slot) {
            return format!("static {}.{}", super::words::source_type(&k.name), f.name);
        }
    }
    format!("static #{slot}")
}
