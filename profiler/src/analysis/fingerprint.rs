//! Argument lists compared by value: a hash of what a call was given, as it was at the call. Two
//! calls get the same fingerprint when their primitives are equal and their objects have equal
//! contents — strings by their characters, boxes by their value, other objects by their fields
//! (primitives by value, referenced objects by their own contents, to a small depth), arrays by
//! their elements (up to a bound) — so a mutable object changed between two calls (a scanner at
//! a new position) is a different argument, and two equal objects (two equal strings, two lists
//! of the same elements) are the same one.
//!
//! The cost is bounded: [`MAX_DEPTH`] levels of objects, [`ARRAY_BOUND`] elements an array
//! (its first and last halves), [`BUDGET`] values an argument list; past those an object counts
//! by its identity.

use crate::classfile::descriptor::Kind;
use crate::vm::class::{Class, ClassId, MethodId};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::tracker::Arguments;
use std::sync::Arc;

/// Levels of referenced objects read by content; deeper ones count by identity.
const MAX_DEPTH: u32 = 4;
/// Elements of an array read (half from each end), besides its length.
const ARRAY_BOUND: usize = 256;
/// Values read for one argument list.
const BUDGET: usize = 2048;

const NULL: u64 = 0x9e37_79b9_7f4a_7c15;

/// How to read an object of one class.
enum Plan {
    /// `java.lang.String`: its characters and their coding (not the cached hash).
    String { value: u32, coder: u32 },
    /// Instance slots, each a reference or not (a modification count left out).
    Fields(Vec<(u32, bool)>),
}

#[derive(Default)]
pub struct Fingerprints {
    /// Per class id, once seen.
    plans: Vec<Option<Arc<Plan>>>,
    /// Strings' fingerprints by handle (a string never changes; a handle is reused only after a
    /// collection, which empties this).
    strings: rustc_hash::FxHashMap<Ref, u64>,
}

fn mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x0100_0000_01b3).rotate_left(29)
}

impl Fingerprints {
    /// The fingerprint of the argument list of a call of `callee` (its receiver first). A
    /// constructor's receiver, a new object, counts by its identity: each call builds another one.
    pub fn argument_list(&mut self, args: &Arguments, callee: MethodId) -> u64 {
        let method = &args.methods[callee as usize];
        let mut budget = BUDGET;
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut slots = args.slots.iter().copied();
        if !method.is_static() {
            let this = slots.next().unwrap_or(0);
            h = if &*method.name == "<init>" {
                mix(h, this)
            } else {
                mix(h, self.object(args, this as Ref, MAX_DEPTH, &mut budget))
            };
        }
        for kind in &method.parsed.params {
            for _ in 0..kind.slots() {
                let Some(v) = slots.next() else { return h };
                h = match kind {
                    Kind::Reference => mix(h, self.object(args, v as Ref, MAX_DEPTH, &mut budget)),
                    _ => mix(h, v),
                };
            }
        }
        h
    }

    /// A collection ran: handles may now name other objects.
    pub fn collected(&mut self) {
        self.strings.clear();
    }

    /// An object's fingerprint, reading `depth` levels of objects by content.
    fn object(&mut self, args: &Arguments, obj: Ref, depth: u32, budget: &mut usize) -> u64 {
        if obj == 0 {
            return NULL;
        }
        if !args.heap.is_live(obj) {
            return mix(NULL, obj as u64);
        }
        let o = args.heap.get(obj);
        let class = o.class;
        let plan = self.plan(args.classes, class);
        // Strings and boxes are values at any depth.
        let value_like =
            matches!(*plan, Plan::String { .. }) || crate::analysis::words::is_box(&args.classes[class as usize].name);
        if (depth == 0 || *budget == 0) && !value_like {
            return mix(mix(NULL, 1), obj as u64);
        }
        let mut h = mix(NULL, class as u64);
        match (&o.data, &*plan) {
            (ObjData::Fields(f), Plan::String { value, coder }) => {
                if let Some(&known) = self.strings.get(&obj) {
                    return known;
                }
                let (value, coder) = (f[*value as usize] as Ref, f[*coder as usize]);
                h = mix(h, coder);
                if args.heap.is_live(value) {
                    h = mix(h, array(&args.heap.get(value).data, budget, |_, _| 0));
                }
                self.strings.insert(obj, h);
            }
            (ObjData::Fields(f), Plan::Fields(slots)) => {
                for &(s, is_ref) in slots {
                    let v = f[s as usize];
                    *budget = budget.saturating_sub(1);
                    h = mix(h, if is_ref { self.object(args, v as Ref, depth - 1, budget) } else { v });
                }
            }
            (data, _) => {
                h = mix(h, array(data, budget, |r, budget| self.object(args, r, depth - 1, budget)));
            }
        }
        h
    }

    fn plan(&mut self, classes: &[Class], class: ClassId) -> Arc<Plan> {
        let i = class as usize;
        if i >= self.plans.len() {
            self.plans.resize_with(i + 1, || None);
        }
        self.plans[i].get_or_insert_with(|| Arc::new(plan_of(classes, class))).clone()
    }
}

fn plan_of(classes: &[Class], class: ClassId) -> Plan {
    let mut slots = Vec::new();
    let mut c = Some(class);
    let string = &*classes[class as usize].name == "java/lang/String";
    let (mut value, mut coder) = (None, None);
    while let Some(id) = c {
        let k = &classes[id as usize];
        for f in k.fields.iter().filter(|f| !f.is_static()) {
            match &*f.name {
                "value" if string => value = Some(f.slot),
                "coder" if string => coder = Some(f.slot),
                // How often a collection was changed, not what it holds.
                "modCount" => {}
                _ => slots.push((f.slot, f.descriptor.starts_with('L') || f.descriptor.starts_with('['))),
            }
        }
        c = k.super_class;
    }
    match (value, coder) {
        (Some(value), Some(coder)) => Plan::String { value, coder },
        _ => Plan::Fields(slots),
    }
}

/// An array's length and elements (the first and last `ARRAY_BOUND / 2` of a longer one);
/// references through `refs`, trailing nulls left out (a list's spare capacity).
fn array(data: &ObjData, budget: &mut usize, mut refs: impl FnMut(Ref, &mut usize) -> u64) -> u64 {
    fn bounded<T: Copy>(a: &[T], budget: &mut usize, mut each: impl FnMut(T, &mut usize) -> u64) -> u64 {
        let mut h = mix(NULL, a.len() as u64);
        let half = ARRAY_BOUND / 2;
        let picked: Box<dyn Iterator<Item = &T>> = if a.len() <= ARRAY_BOUND {
            Box::new(a.iter())
        } else {
            Box::new(a[..half].iter().chain(&a[a.len() - half..]))
        };
        for &x in picked {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            h = mix(h, each(x, budget));
        }
        h
    }
    match data {
        ObjData::Fields(_) => NULL,
        ObjData::Bytes(a) => bounded(a, budget, |x, _| x as u64),
        ObjData::Chars(a) => bounded(a, budget, |x, _| x as u64),
        ObjData::Shorts(a) => bounded(a, budget, |x, _| x as u64),
        ObjData::Ints(a) => bounded(a, budget, |x, _| x as u64),
        ObjData::Longs(a) => bounded(a, budget, |x, _| x as u64),
        ObjData::Floats(a) => bounded(a, budget, |x, _| x.to_bits() as u64),
        ObjData::Doubles(a) => bounded(a, budget, |x, _| x.to_bits()),
        ObjData::Refs(a) => {
            let used = a.iter().rposition(|&r| r != 0).map_or(0, |i| i + 1);
            bounded(&a[..used], budget, |r, budget| refs(r, budget))
        }
    }
}
