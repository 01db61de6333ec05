//! Reference maps for the precise collector: which local and operand-stack slots of a frame hold
//! references at a given instruction. Computed on demand (only for methods on a stack when a
//! collection happens) by a dataflow pass over the original bytecode, in the manner of the
//! verifier: a slot holds a reference after a join only if it does on every incoming path. Code
//! the verifier accepts uses a slot as a reference only where that holds, so the map never misses
//! a live reference; the interpreter itself tracks nothing.
//!
//! Methods with subroutines (`jsr`/`ret`, class files before version 50) are mapped
//! conservatively instead: a `ret` may return to the instruction after any `jsr`, and a slot is a
//! root where any path leaves a reference in it. A slot that holds something else there is then
//! taken for a handle; the collector keeps only handles of live objects, so such a slot can at
//! worst keep an object alive, never lose one.

use crate::classfile::descriptor::{field_kind, Kind, MethodDescriptor};
use crate::classfile::{Code, Constant, ConstantPool};

/// Per bytecode index (instruction starts only): the reference bits of locals then stack slots.
pub struct RefMaps {
    max_locals: usize,
    at: Vec<Option<State>>,
}

#[derive(Clone, PartialEq)]
struct State {
    locals: Vec<bool>,
    stack: Vec<bool>,
}

impl RefMaps {
    /// Reference bits at `bci`: locals, and the bottom `stack_depth` operand slots.
    pub fn roots(&self, bci: u16, stack_depth: usize) -> Option<(&[bool], &[bool])> {
        let s = self.at.get(bci as usize)?.as_ref()?;
        Some((&s.locals[..self.max_locals.min(s.locals.len())], &s.stack[..stack_depth.min(s.stack.len())]))
    }
}

fn push_kind(stack: &mut Vec<bool>, k: Kind) {
    match k {
        Kind::Void => {}
        Kind::Reference => stack.push(true),
        k => {
            for _ in 0..k.slots() {
                stack.push(false);
            }
        }
    }
}

fn pop(stack: &mut Vec<bool>, n: usize) {
    let len = stack.len().saturating_sub(n);
    stack.truncate(len);
}

pub fn compute(code: &Code, cp: &ConstantPool, descriptor: &str, is_static: bool) -> RefMaps {
    let b = &code.bytecode;
    let max_locals = code.max_locals as usize;
    let mut entry = State { locals: vec![false; max_locals], stack: Vec::new() };
    let mut slot = 0;
    if !is_static {
        if let Some(l) = entry.locals.get_mut(0) {
            *l = true;
        }
        slot = 1;
    }
    if let Some(d) = MethodDescriptor::parse(descriptor) {
        for k in d.params {
            if k == Kind::Reference {
                if let Some(l) = entry.locals.get_mut(slot) {
                    *l = true;
                }
            }
            slot += k.slots();
        }
    }
    // The instruction after every `jsr`: where a `ret` may go.
    let mut returns = Vec::new();
    let mut subroutines = false;
    let mut p = 0;
    while p < b.len() {
        let len = super::decode::instruction_length(b, p).unwrap_or(1).max(1);
        match b[p] {
            0xa8 | 0xc9 => returns.push(p + len),
            0xa9 => subroutines = true,
            0xc4 if b.get(p + 1) == Some(&0xa9) => subroutines = true,
            _ => {}
        }
        p += len;
    }
    let conservative = subroutines || !returns.is_empty();
    let merge = |at: &mut [Option<State>], work: &mut Vec<usize>, target: usize, incoming: State| {
        merge(at, work, target, incoming, conservative)
    };
    let mut at: Vec<Option<State>> = vec![None; b.len()];
    let mut work = vec![0usize];
    at[0] = Some(entry);
    let u2 =
        |i: usize| -> u16 { u16::from_be_bytes([b.get(i).copied().unwrap_or(0), b.get(i + 1).copied().unwrap_or(0)]) };
    let i4 = |i: usize| -> i32 {
        i32::from_be_bytes([
            b.get(i).copied().unwrap_or(0),
            b.get(i + 1).copied().unwrap_or(0),
            b.get(i + 2).copied().unwrap_or(0),
            b.get(i + 3).copied().unwrap_or(0),
        ])
    };
    let member_desc = |i: usize| -> Option<String> {
        let r = cp.member_ref(u2(i)).ok()?;
        Some(r.descriptor.to_string())
    };
    let mut steps = 0usize;
    while let Some(pc) = work.pop() {
        steps += 1;
        if steps > 200_000 {
            break; // pathological code: what is computed so far stays usable
        }
        let Some(state) = at[pc].clone() else { continue };
        let mut s = state.clone();
        let op = b[pc];
        let mut succ: Vec<usize> = Vec::new();
        let mut falls = true;
        let mut len = 1usize;
        let local = |s: &mut State, i: usize, v: bool| {
            if let Some(l) = s.locals.get_mut(i) {
                *l = v;
            }
        };
        match op {
            0x00 => {}
            0x01 => s.stack.push(true),
            0x02..=0x08 | 0x0b..=0x0d => s.stack.push(false),
            0x09 | 0x0a | 0x0e | 0x0f => push_kind(&mut s.stack, Kind::Long),
            0x10 => {
                s.stack.push(false);
                len = 2;
            }
            0x11 => {
                s.stack.push(false);
                len = 3;
            }
            0x12 | 0x13 => {
                let idx = if op == 0x12 { b.get(pc + 1).copied().unwrap_or(0) as u16 } else { u2(pc + 1) };
                let is_ref = !matches!(cp.get(idx), Some(Constant::Integer(_) | Constant::Float(_)));
                s.stack.push(is_ref);
                len = if op == 0x12 { 2 } else { 3 };
            }
            0x14 => {
                push_kind(&mut s.stack, Kind::Long);
                len = 3;
            }
            0x15 | 0x17 => {
                s.stack.push(false);
                len = 2;
            }
            0x16 | 0x18 => {
                push_kind(&mut s.stack, Kind::Long);
                len = 2;
            }
            0x19 => {
                s.stack.push(true);
                len = 2;
            }
            0x1a..=0x1d | 0x22..=0x25 => s.stack.push(false),
            0x1e..=0x21 | 0x26..=0x29 => push_kind(&mut s.stack, Kind::Long),
            0x2a..=0x2d => s.stack.push(true),
            0x2e | 0x30 | 0x33 | 0x34 | 0x35 => {
                pop(&mut s.stack, 2);
                s.stack.push(false);
            }
            0x2f | 0x31 => {
                pop(&mut s.stack, 2);
                push_kind(&mut s.stack, Kind::Long);
            }
            0x32 => {
                pop(&mut s.stack, 2);
                s.stack.push(true);
            }
            0x36 | 0x38 => {
                pop(&mut s.stack, 1);
                local(&mut s, b.get(pc + 1).copied().unwrap_or(0) as usize, false);
                len = 2;
            }
            0x37 | 0x39 => {
                pop(&mut s.stack, 2);
                let i = b.get(pc + 1).copied().unwrap_or(0) as usize;
                local(&mut s, i, false);
                local(&mut s, i + 1, false);
                len = 2;
            }
            0x3a => {
                let v = s.stack.pop().unwrap_or(false);
                local(&mut s, b.get(pc + 1).copied().unwrap_or(0) as usize, v);
                len = 2;
            }
            0x3b..=0x3e | 0x43..=0x46 => {
                pop(&mut s.stack, 1);
                local(&mut s, ((op - 0x3b) % 4) as usize, false);
            }
            0x3f..=0x42 | 0x47..=0x4a => {
                pop(&mut s.stack, 2);
                let i = ((op - 0x3f) % 4) as usize;
                local(&mut s, i, false);
                local(&mut s, i + 1, false);
            }
            0x4b..=0x4e => {
                let v = s.stack.pop().unwrap_or(false);
                local(&mut s, (op - 0x4b) as usize, v);
            }
            0x4f | 0x51 | 0x53..=0x56 => pop(&mut s.stack, 3),
            0x50 | 0x52 => pop(&mut s.stack, 4),
            0x57 => pop(&mut s.stack, 1),
            0x58 => pop(&mut s.stack, 2),
            0x59 => {
                let v = *s.stack.last().unwrap_or(&false);
                s.stack.push(v);
            }
            0x5a..=0x5e => {
                // dup_x1, dup_x2, dup2, dup2_x1, dup2_x2: same shapes as the interpreter's.
                let n = s.stack.len();
                let g = |i: usize| s.stack.get(n.wrapping_sub(i)).copied().unwrap_or(false);
                let (v1, v2, v3, v4) = (g(1), g(2), g(3), g(4));
                match op {
                    0x5a => {
                        pop(&mut s.stack, 2);
                        s.stack.extend([v1, v2, v1]);
                    }
                    0x5b => {
                        pop(&mut s.stack, 3);
                        s.stack.extend([v1, v3, v2, v1]);
                    }
                    0x5c => s.stack.extend([v2, v1]),
                    0x5d => {
                        pop(&mut s.stack, 3);
                        s.stack.extend([v2, v1, v3, v2, v1]);
                    }
                    _ => {
                        pop(&mut s.stack, 4);
                        s.stack.extend([v2, v1, v4, v3, v2, v1]);
                    }
                }
            }
            0x5f => {
                let n = s.stack.len();
                if n >= 2 {
                    s.stack.swap(n - 1, n - 2);
                }
            }
            // Arithmetic: int/float binary, long/double binary, shifts, negation, conversions.
            0x60 | 0x62 | 0x64 | 0x66 | 0x68 | 0x6a | 0x6c | 0x6e | 0x70 | 0x72 | 0x78 | 0x7a | 0x7c | 0x7e | 0x80
            | 0x82 => {
                pop(&mut s.stack, 2);
                s.stack.push(false);
            }
            0x61 | 0x63 | 0x65 | 0x67 | 0x69 | 0x6b | 0x6d | 0x6f | 0x71 | 0x73 | 0x7f | 0x81 | 0x83 => {
                pop(&mut s.stack, 4);
                push_kind(&mut s.stack, Kind::Long);
            }
            0x79 | 0x7b | 0x7d => {
                pop(&mut s.stack, 3);
                push_kind(&mut s.stack, Kind::Long);
            }
            0x74..=0x77 => {}
            0x84 => len = 3,
            0x85 | 0x87 | 0x8c | 0x8d => {
                pop(&mut s.stack, 1);
                push_kind(&mut s.stack, Kind::Long);
            }
            0x86 | 0x8b | 0x91..=0x93 => {
                pop(&mut s.stack, 1);
                s.stack.push(false);
            }
            0x88 | 0x89 | 0x8e | 0x90 => {
                pop(&mut s.stack, 2);
                s.stack.push(false);
            }
            0x8a | 0x8f => {}
            0x94 | 0x97 | 0x98 => {
                pop(&mut s.stack, 4);
                s.stack.push(false);
            }
            0x95 | 0x96 => {
                pop(&mut s.stack, 2);
                s.stack.push(false);
            }
            0x99..=0x9e | 0xc6 | 0xc7 => {
                pop(&mut s.stack, 1);
                succ.push((pc as i64 + u2(pc + 1) as i16 as i64) as usize);
                len = 3;
            }
            0x9f..=0xa6 => {
                pop(&mut s.stack, 2);
                succ.push((pc as i64 + u2(pc + 1) as i16 as i64) as usize);
                len = 3;
            }
            0xa7 | 0xc8 => {
                let off = if op == 0xa7 { u2(pc + 1) as i16 as i64 } else { i4(pc + 1) as i64 };
                succ.push((pc as i64 + off) as usize);
                falls = false;
            }
            0xaa | 0xab => {
                pop(&mut s.stack, 1);
                let p = (pc + 4) & !3;
                succ.push((pc as i64 + i4(p) as i64) as usize);
                if op == 0xaa {
                    let (low, high) = (i4(p + 4) as i64, i4(p + 8) as i64);
                    for k in 0..(high - low + 1).clamp(0, 65536) as usize {
                        succ.push((pc as i64 + i4(p + 12 + 4 * k) as i64) as usize);
                    }
                } else {
                    let n = i4(p + 4).clamp(0, 65536) as usize;
                    for k in 0..n {
                        succ.push((pc as i64 + i4(p + 12 + 8 * k) as i64) as usize);
                    }
                }
                falls = false;
            }
            0xa8 | 0xc9 => {
                // The subroutine starts with the return address pushed; the instruction after
                // the `jsr` is reached by its `ret` (and, conservatively, with this state).
                len = if op == 0xa8 { 3 } else { 5 };
                let off = if op == 0xa8 { u2(pc + 1) as i16 as i64 } else { i4(pc + 1) as i64 };
                merge(&mut at, &mut work, pc + len, s.clone());
                s.stack.push(false);
                succ.push((pc as i64 + off) as usize);
                falls = false;
            }
            0xa9 => {
                len = 2;
                succ.extend(returns.iter().copied());
                falls = false;
            }
            0xac..=0xb1 | 0xbf => falls = false,
            0xb2..=0xb5 => {
                let k = member_desc(pc + 1).map(|d| field_kind(&d)).unwrap_or(Kind::Int);
                match op {
                    0xb2 => push_kind(&mut s.stack, k),
                    0xb3 => pop(&mut s.stack, k.slots()),
                    0xb4 => {
                        pop(&mut s.stack, 1);
                        push_kind(&mut s.stack, k);
                    }
                    _ => pop(&mut s.stack, 1 + k.slots()),
                }
                len = 3;
            }
            0xb6..=0xba => {
                let desc = if op == 0xba {
                    match cp.get(u2(pc + 1)) {
                        Some(Constant::InvokeDynamic { name_and_type, .. }) => {
                            cp.name_and_type(*name_and_type).ok().map(|(_, d)| d.to_string())
                        }
                        _ => None,
                    }
                } else {
                    member_desc(pc + 1)
                };
                if let Some(d) = desc.as_deref().and_then(MethodDescriptor::parse) {
                    let receiver = usize::from(op != 0xb8 && op != 0xba);
                    pop(&mut s.stack, d.param_slots() + receiver);
                    push_kind(&mut s.stack, d.ret);
                }
                len = if op >= 0xb9 { 5 } else { 3 };
            }
            0xbb => {
                s.stack.push(true);
                len = 3;
            }
            0xbc => {
                pop(&mut s.stack, 1);
                s.stack.push(true);
                len = 2;
            }
            0xbd | 0xc0 => {
                pop(&mut s.stack, 1);
                s.stack.push(true);
                len = 3;
            }
            0xbe => {
                pop(&mut s.stack, 1);
                s.stack.push(false);
            }
            0xc1 => {
                pop(&mut s.stack, 1);
                s.stack.push(false);
                len = 3;
            }
            0xc2 | 0xc3 => pop(&mut s.stack, 1),
            0xc4 => {
                let inner = b.get(pc + 1).copied().unwrap_or(0);
                let i = u2(pc + 2) as usize;
                len = 4;
                match inner {
                    0x15 | 0x17 => s.stack.push(false),
                    0x16 | 0x18 => push_kind(&mut s.stack, Kind::Long),
                    0x19 => s.stack.push(true),
                    0x36 | 0x38 => {
                        pop(&mut s.stack, 1);
                        local(&mut s, i, false);
                    }
                    0x37 | 0x39 => {
                        pop(&mut s.stack, 2);
                        local(&mut s, i, false);
                        local(&mut s, i + 1, false);
                    }
                    0x3a => {
                        let v = s.stack.pop().unwrap_or(false);
                        local(&mut s, i, v);
                    }
                    0x84 => len = 6,
                    0xa9 => {
                        succ.extend(returns.iter().copied());
                        falls = false;
                    }
                    _ => falls = false,
                }
            }
            0xc5 => {
                pop(&mut s.stack, b.get(pc + 3).copied().unwrap_or(0) as usize);
                s.stack.push(true);
                len = 4;
            }
            _ => falls = false,
        }
        if op == 0xaa || op == 0xab {
            falls = false;
        }
        if falls {
            succ.push(pc + len);
        }
        // Exception handlers covering this instruction start with the locals before it.
        for h in &code.exception_table {
            if (h.start_pc as usize..h.end_pc as usize).contains(&pc) {
                let hs = State { locals: state.locals.clone(), stack: vec![true] };
                merge(&mut at, &mut work, h.handler_pc as usize, hs.clone());
                // …and after it, for a store inside the protected range.
                merge(&mut at, &mut work, h.handler_pc as usize, State { locals: s.locals.clone(), stack: vec![true] });
            }
        }
        for t in succ {
            if t < b.len() {
                merge(&mut at, &mut work, t, s.clone());
            }
        }
    }
    RefMaps { max_locals, at }
}

/// Joins `incoming` into the state at `target`: a slot stays a reference only if both say so,
/// or (`conservative`) becomes one if either does.
fn merge(at: &mut [Option<State>], work: &mut Vec<usize>, target: usize, incoming: State, conservative: bool) {
    if target >= at.len() {
        return;
    }
    match &mut at[target] {
        slot @ None => {
            *slot = Some(incoming);
            work.push(target);
        }
        Some(existing) => {
            let mut changed = false;
            let join = |e: &mut bool, i: bool, changed: &mut bool| {
                let joined = if conservative { *e || i } else { *e && i };
                if joined != *e {
                    *e = joined;
                    *changed = true;
                }
            };
            for (e, i) in existing.locals.iter_mut().zip(&incoming.locals) {
                join(e, *i, &mut changed);
            }
            let n = existing.stack.len().min(incoming.stack.len());
            if existing.stack.len() != n {
                existing.stack.truncate(n);
                changed = true;
            }
            for (e, i) in existing.stack.iter_mut().zip(&incoming.stack) {
                join(e, *i, &mut changed);
            }
            if changed {
                work.push(target);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classfile::builder::ClassBuilder;

    fn code(bytes: &[u8], max_locals: u16) -> Code {
        Code { max_stack: 4, max_locals, bytecode: bytes.to_vec(), ..Default::default() }
    }

    #[test]
    fn a_slot_is_a_reference_only_while_it_holds_one() {
        // static void m(String s, int i): aload_0; astore_2; iconst_1; istore_2; aload_0; return
        let c = code(&[0x2a, 0x4d, 0x04, 0x3d, 0x2a, 0xb1], 3);
        let cp = ClassBuilder::new().build("T", "java/lang/Object", &[], 0).constant_pool;
        let maps = compute(&c, &cp, "(Ljava/lang/String;I)V", true);
        assert_eq!(maps.roots(0, 0).unwrap().0, &[true, false, false]);
        assert_eq!(maps.roots(2, 0).unwrap().0, &[true, false, true], "after astore_2");
        assert_eq!(maps.roots(4, 0).unwrap().0, &[true, false, false], "after istore_2");
        assert_eq!(maps.roots(5, 1).unwrap().1, &[true], "aload_0 pushed a reference");
    }

    #[test]
    fn subroutines_return_after_every_jsr_with_a_conservative_map() {
        // static Object m(): aconst_null; astore_1; jsr S; aload_1; areturn; S: astore_2; ret 2
        let c = code(&[0x01, 0x4c, 0xa8, 0x00, 0x05, 0x2b, 0xb0, 0x4d, 0xa9, 0x02], 3);
        let cp = ClassBuilder::new().build("T", "java/lang/Object", &[], 0).constant_pool;
        let maps = compute(&c, &cp, "()Ljava/lang/Object;", true);
        assert_eq!(maps.roots(7, 1).unwrap().1, &[false], "the return address is no reference");
        assert_eq!(maps.roots(8, 0).unwrap().0, &[false, true, false], "stored return address");
        assert_eq!(maps.roots(5, 0).unwrap().0, &[false, true, false], "reached through ret");
    }

    #[test]
    fn a_join_keeps_only_what_every_path_agrees_on() {
        // static void m(int c): iload_0; ifeq L; aconst_null; astore_1; goto J; L: iconst_0; istore_1; J: return
        let c = code(&[0x1a, 0x99, 0x00, 0x08, 0x01, 0x4c, 0xa7, 0x00, 0x05, 0x03, 0x3c, 0xb1], 2);
        let cp = ClassBuilder::new().build("T", "java/lang/Object", &[], 0).constant_pool;
        let maps = compute(&c, &cp, "(I)V", true);
        assert_eq!(maps.roots(6, 0).unwrap().0, &[false, true], "reference on the taken path");
        assert_eq!(maps.roots(11, 0).unwrap().0, &[false, false], "int on the other path: not a root after the join");
    }
}
