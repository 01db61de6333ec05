//! One method's verification: the instruction rules (what each opcode pops, pushes, stores and
//! where it may go) and the worklist that carries frames along the code, checking them against
//! the declared stack map frames (type checking) or merging them at joins (type inference).

use super::frame::{bad_stack, Frame};
use super::stackmap::{self, MapFrame};
use super::types::{assignable, merge, VType};
use super::{Lookup, Problem};
use crate::classfile::descriptor::{Kind, MethodDescriptor};
use crate::classfile::{access, ClassFile, Code, Constant, ConstantPool, MethodInfo};
use crate::vm::decode::instruction_length;
use std::collections::HashMap;
use std::sync::Arc;

/// A broken rule and where (the instruction's index, when there is one).
pub type Fail = (Problem, Option<u16>);

/// A broken rule, where, and whether type inference found it (HotSpot words those differently).
pub type Refusal = (Problem, Option<u16>, bool);

/// Frames carried before a method is given up as too complex (subroutines copied per call site
/// can multiply them): far above what compilers emit.
const MAX_STEPS: usize = 2_000_000;
/// Nested subroutine calls (`jsr` inside a subroutine) followed at most.
const MAX_SUBROUTINE_DEPTH: usize = 16;

struct Method<'a> {
    class: &'a ClassFile,
    cp: &'a ConstantPool,
    code: &'a Code,
    /// The return type; `None` for `void`.
    ret: Option<VType>,
    is_init: bool,
    /// `starts[pc]`: an instruction begins at `pc`.
    starts: Vec<bool>,
    max_stack: usize,
}

/// How control reaches an instruction (for the error a missing or mismatched frame gives).
#[derive(Clone, Copy, PartialEq)]
enum Edge {
    Fall,
    Branch,
    Handler,
}

/// What one instruction does: the frame after it and where control goes next.
struct Step {
    frame: Frame,
    next: Vec<(u16, Edge)>,
    /// A `jsr`: enter the subroutine at `.0`, returning to `.1`.
    call: Option<(u16, u16)>,
    /// A `ret`: back to the instruction after the `jsr` that entered this subroutine.
    ret: bool,
    /// The instruction wrote a local (handlers then also see the locals after it).
    stored: bool,
}

fn problem(headline: impl Into<String>, reason: Option<String>) -> Problem {
    Problem::new(headline, reason)
}

pub fn verify(class: &ClassFile, m: &MethodInfo, h: &mut dyn Lookup) -> Result<(), Refusal> {
    let inferred = class.major_version < 50;
    let at_start = |(p, bci): Fail| (p, bci, inferred);
    let Some(code) = &m.code else { return Ok(()) };
    let desc = MethodDescriptor::parse(&m.descriptor)
        .ok_or((problem("Illegal method signature", None), None))
        .map_err(at_start)?;
    let is_init = &*m.name == "<init>";
    let mut initial = Vec::new();
    if m.access_flags & access::STATIC == 0 {
        initial.push(if is_init && &*class.this_class != "java/lang/Object" {
            VType::UninitThis
        } else {
            VType::Ref(class.this_class.clone())
        });
    }
    for p in &desc.param_types {
        initial
            .push(VType::of_descriptor(p).ok_or((problem("Illegal method signature", None), None)).map_err(at_start)?);
    }
    let ret = match desc.ret {
        Kind::Void => None,
        _ => Some(
            VType::of_descriptor(&desc.return_type)
                .ok_or((problem("Illegal method signature", None), None))
                .map_err(at_start)?,
        ),
    };
    let max_locals = code.max_locals as usize;
    let mut locals = Vec::with_capacity(max_locals);
    for t in &initial {
        locals.push(t.clone());
        if t.is_wide() {
            locals.push(VType::Top);
        }
    }
    if locals.len() > max_locals {
        return Err((problem("Arguments can't fit into locals", None), None, inferred));
    }
    locals.resize(max_locals, VType::Top);
    let entry = Frame { this_uninit: locals.contains(&VType::UninitThis), locals, stack: Vec::new() };

    let b = &code.bytecode;
    let mut starts = vec![false; b.len() + 1];
    let mut pc = 0;
    while pc < b.len() {
        starts[pc] = true;
        pc += instruction_length(b, pc)
            .map_err(|e| (problem("Bad instruction", Some(e.reason)), Some(pc as u16), inferred))?;
    }
    let at_instruction = |pc: u16| starts.get(pc as usize).copied().unwrap_or(false);
    for hd in &code.exception_table {
        let bad = if !at_instruction(hd.start_pc) {
            Some(format!("Illegal exception table start_pc {}", hd.start_pc))
        } else if hd.end_pc as usize != b.len() && !at_instruction(hd.end_pc) {
            Some(format!("Illegal exception table end_pc {}", hd.end_pc))
        } else if !at_instruction(hd.handler_pc) || hd.handler_pc as usize >= b.len() {
            Some(format!("Illegal exception table handler_pc {}", hd.handler_pc))
        } else {
            None
        };
        if let Some(headline) = bad {
            return Err((problem(headline, None), None, inferred));
        }
    }
    let method =
        Method { class, cp: &class.constant_pool, code, ret, is_init, starts, max_stack: code.max_stack as usize };

    if class.major_version >= 50 {
        let maps = match &code.stack_map_table {
            Some(raw) => stackmap::parse(raw, method.cp, &initial, max_locals)
                .map_err(|e| (problem("StackMapTable format error", Some(e)), None, false))?,
            None => Vec::new(),
        };
        let checked = method.run(entry.clone(), Some(maps), h);
        // Version 50 may still be verified by inference (HotSpot's FailOverToOldVerifier).
        if checked.is_err() && class.major_version == 50 && !matches!(checked, Err((Problem::Hierarchy, _))) {
            return method.run(entry, None, h).map_err(|(p, bci)| (p, bci, true));
        }
        checked.map_err(|(p, bci)| (p, bci, false))
    } else {
        method.run(entry, None, h).map_err(at_start)
    }
}

/// A frame per (instruction, subroutine context); contexts are interned return-address stacks.
struct Flow {
    states: HashMap<(u16, u32), Frame>,
    work: Vec<(u16, u32)>,
    contexts: Vec<Vec<u16>>,
    context_ids: HashMap<Vec<u16>, u32>,
}

impl Flow {
    fn context(&mut self, c: Vec<u16>) -> u32 {
        if let Some(&id) = self.context_ids.get(&c) {
            return id;
        }
        let id = self.contexts.len() as u32;
        self.contexts.push(c.clone());
        self.context_ids.insert(c, id);
        id
    }
}

impl Method<'_> {
    fn run(&self, entry: Frame, maps: Option<Vec<MapFrame>>, h: &mut dyn Lookup) -> Result<(), Fail> {
        let maps: Option<HashMap<u16, Frame>> = match maps {
            None => None,
            Some(v) => {
                let mut out = HashMap::with_capacity(v.len());
                for f in v {
                    if !self.starts.get(f.offset as usize).copied().unwrap_or(false)
                        || f.offset as usize >= self.code.bytecode.len()
                    {
                        return Err((
                            problem(
                                "StackMapTable error: bad offset",
                                Some(format!("a frame at {} is not an instruction", f.offset)),
                            ),
                            None,
                        ));
                    }
                    if f.stack.len() > self.max_stack {
                        return Err((
                            problem("Operand stack overflow", Some("a stack map frame exceeds max_stack".into())),
                            Some(f.offset),
                        ));
                    }
                    let this_uninit = f.locals.contains(&VType::UninitThis);
                    out.insert(f.offset, Frame { locals: f.locals, stack: f.stack, this_uninit });
                }
                Some(out)
            }
        };
        let mut flow =
            Flow { states: HashMap::new(), work: Vec::new(), contexts: Vec::new(), context_ids: HashMap::new() };
        let root = flow.context(Vec::new());
        self.arrive(&mut flow, maps.as_ref(), 0, root, entry, Edge::Fall, h).map_err(|p| (p, Some(0)))?;
        let mut steps = 0usize;
        while let Some((pc, cx)) = flow.work.pop() {
            steps += 1;
            if steps > MAX_STEPS {
                return Err((problem("Method too complex to verify", None), Some(pc)));
            }
            let frame = flow.states[&(pc, cx)].clone();
            let fail = |p: Problem| (p, Some(pc));
            let step = self.step(pc, &frame, h).map_err(fail)?;
            for hd in &self.code.exception_table {
                if !(hd.start_pc..hd.end_pc).contains(&pc) {
                    continue;
                }
                let caught = if hd.catch_type == 0 {
                    VType::object("java/lang/Throwable")
                } else {
                    let name =
                        self.cp.class_name(hd.catch_type).map_err(|e| fail(problem("Illegal catch type", Some(e))))?;
                    let t = VType::of_class_constant(name);
                    if !assignable(&t, &VType::object("java/lang/Throwable"), h).map_err(fail)? {
                        return Err(fail(problem(
                            format!("Catch type is not a subclass of Throwable in exception handler {}", hd.handler_pc),
                            None,
                        )));
                    }
                    t
                };
                let before =
                    Frame { locals: frame.locals.clone(), stack: vec![caught.clone()], this_uninit: frame.this_uninit };
                self.arrive(&mut flow, maps.as_ref(), hd.handler_pc, cx, before, Edge::Handler, h).map_err(fail)?;
                if step.stored {
                    let after = Frame {
                        locals: step.frame.locals.clone(),
                        stack: vec![caught],
                        this_uninit: step.frame.this_uninit,
                    };
                    self.arrive(&mut flow, maps.as_ref(), hd.handler_pc, cx, after, Edge::Handler, h).map_err(fail)?;
                }
            }
            if let Some((target, return_to)) = step.call {
                if maps.is_some() {
                    return Err(fail(problem(
                        "Bad instruction",
                        Some("jsr in a class file that must be type checked".into()),
                    )));
                }
                let mut c = flow.contexts[cx as usize].clone();
                if c.contains(&return_to) || c.len() >= MAX_SUBROUTINE_DEPTH {
                    return Err(fail(problem("Recursive call to jsr entry", None)));
                }
                c.push(return_to);
                let inner = flow.context(c);
                self.arrive(&mut flow, None, target, inner, step.frame.clone(), Edge::Branch, h).map_err(fail)?;
            }
            if step.ret {
                if maps.is_some() {
                    return Err(fail(problem(
                        "Bad instruction",
                        Some("ret in a class file that must be type checked".into()),
                    )));
                }
                let mut c = flow.contexts[cx as usize].clone();
                let Some(back) = c.pop() else {
                    return Err(fail(problem("Returning from a subroutine that was not called", None)));
                };
                let outer = flow.context(c);
                self.arrive(&mut flow, None, back, outer, step.frame.clone(), Edge::Branch, h).map_err(fail)?;
            }
            for &(target, edge) in &step.next {
                self.arrive(&mut flow, maps.as_ref(), target, cx, step.frame.clone(), edge, h).map_err(fail)?;
            }
        }
        Ok(())
    }

    /// Control reaches `target` with `incoming`: checked against its declared frame, or merged
    /// into the frame inferred so far; the instruction is (re)visited when its frame is new.
    #[allow(clippy::too_many_arguments)]
    fn arrive(
        &self,
        flow: &mut Flow,
        maps: Option<&HashMap<u16, Frame>>,
        target: u16,
        cx: u32,
        incoming: Frame,
        edge: Edge,
        h: &mut dyn Lookup,
    ) -> Result<(), Problem> {
        let len = self.code.bytecode.len();
        if target as usize >= len {
            return Err(match edge {
                Edge::Fall => problem("Falling off the end of the code", None),
                _ => problem("Illegal target of jump or branch", Some(format!("target {target} is past the code"))),
            });
        }
        if !self.starts[target as usize] {
            return Err(problem(
                "Illegal target of jump or branch",
                Some(format!("{target} is not the start of an instruction")),
            ));
        }
        let key = (target, cx);
        match maps {
            Some(maps) => match maps.get(&target) {
                Some(declared) => {
                    if let Some(why) = incoming.assignable_to(declared, h)? {
                        let headline = match edge {
                            Edge::Handler => format!("Stack map does not match the one at exception handler {target}"),
                            Edge::Branch => format!("Inconsistent stackmap frames at branch target {target}"),
                            Edge::Fall => "Instruction type does not match stack map".to_string(),
                        };
                        return Err(problem(headline, Some(why)));
                    }
                    if let std::collections::hash_map::Entry::Vacant(e) = flow.states.entry(key) {
                        e.insert(declared.clone());
                        flow.work.push(key);
                    }
                }
                None if edge != Edge::Fall => {
                    return Err(problem(format!("Expecting a stackmap frame at branch target {target}"), None));
                }
                None => {
                    flow.states.insert(key, incoming);
                    flow.work.push(key);
                }
            },
            None => match flow.states.get(&key) {
                None => {
                    flow.states.insert(key, incoming);
                    flow.work.push(key);
                }
                Some(existing) => {
                    let merged = merge_frames(existing, &incoming, h)?;
                    if merged != *existing {
                        flow.states.insert(key, merged);
                        flow.work.push(key);
                    }
                }
            },
        }
        Ok(())
    }
}

/// The frame where two paths meet (type inference).
fn merge_frames(a: &Frame, b: &Frame, h: &mut dyn Lookup) -> Result<Frame, Problem> {
    if a.stack.len() != b.stack.len() {
        return Err(problem(format!("Inconsistent stack height {} != {}", a.stack.len(), b.stack.len()), None));
    }
    let mut locals = Vec::with_capacity(a.locals.len());
    for (x, y) in a.locals.iter().zip(&b.locals) {
        locals.push(merge(x, y, h)?);
    }
    let mut stack = Vec::with_capacity(a.stack.len());
    for (x, y) in a.stack.iter().zip(&b.stack) {
        let t = merge(x, y, h)?;
        if t == VType::Top && *x != VType::Top {
            return Err(problem("Mismatched stack types", Some(format!("{x} and {y} meet on the operand stack"))));
        }
        stack.push(t);
    }
    Ok(Frame { locals, stack, this_uninit: a.this_uninit || b.this_uninit })
}

fn object() -> VType {
    VType::object("java/lang/Object")
}

/// The element an array load or store works on, by its place in the opcode group
/// (`iaload`…`saload`, `iastore`…`sastore`): the array descriptors' element letters and the value's
/// type; `None` for `aaload`/`aastore`.
fn array_element(i: u8) -> Option<(&'static [u8], VType)> {
    Some(match i {
        0 => (b"I", VType::Int),
        1 => (b"J", VType::Long),
        2 => (b"F", VType::Float),
        3 => (b"D", VType::Double),
        5 => (b"BZ", VType::Int),
        6 => (b"C", VType::Int),
        7 => (b"S", VType::Int),
        _ => return None,
    })
}

fn is_reference_array(d: &str) -> bool {
    matches!(d.as_bytes().get(1), Some(b'L' | b'['))
}

/// `iload`…`aload` (plain or `wide`): `kind` 0–4 is int, long, float, double, reference. A
/// reference load pushes the local's own type (uninitialised objects included).
fn load_local(f: &mut Frame, kind: u8, index: usize, max_stack: usize, h: &mut dyn Lookup) -> Result<(), Problem> {
    let t = [VType::Int, VType::Long, VType::Float, VType::Double, object()][kind as usize].clone();
    let v = f.load(index, &t, h)?;
    f.push(if kind == 4 { v } else { t }, max_stack)
}

/// `istore`…`astore` (plain or `wide`); `astore` also takes `jsr`'s return address.
fn store_local(f: &mut Frame, kind: u8, index: usize, h: &mut dyn Lookup) -> Result<(), Problem> {
    let t = if kind == 4 {
        let at = f.stack.len().saturating_sub(1);
        let v = f.pop_any()?;
        if !v.is_reference() && !matches!(v, VType::ReturnAddress(_)) {
            return Err(bad_stack(&v, at, &object()));
        }
        v
    } else {
        f.pop(&[VType::Int, VType::Long, VType::Float, VType::Double][kind as usize].clone(), h)?
    };
    f.store(index, t)
}

impl Method<'_> {
    fn u1(&self, i: usize) -> u8 {
        self.code.bytecode.get(i).copied().unwrap_or(0)
    }
    fn u2(&self, i: usize) -> u16 {
        u16::from_be_bytes([self.u1(i), self.u1(i + 1)])
    }
    fn i4(&self, i: usize) -> i32 {
        i32::from_be_bytes([self.u1(i), self.u1(i + 1), self.u1(i + 2), self.u1(i + 3)])
    }

    fn target(&self, pc: u16, offset: i64) -> Result<u16, Problem> {
        let t = pc as i64 + offset;
        if !(0..self.code.bytecode.len() as i64).contains(&t) {
            return Err(problem("Illegal target of jump or branch", Some(format!("target {t} is outside the code"))));
        }
        Ok(t as u16)
    }

    /// An operand naming a constant of the wrong kind, or none, in HotSpot's words.
    fn bad_constant(&self, index: u16) -> Problem {
        let class = self.class.this_class.replace('/', ".");
        let headline = if index == 0 || self.cp.get(index).is_none() {
            format!("Illegal constant pool index {index} in class {class}")
        } else {
            format!("Illegal type at constant pool entry {index} in class {class}")
        };
        problem(headline, Some(format!("Constant pool index {index} is invalid")))
    }

    fn class_constant(&self, index: u16) -> Result<Arc<str>, Problem> {
        self.cp.class_name(index).cloned().map_err(|_| self.bad_constant(index))
    }

    /// A field or method reference of the kinds `allowed` (the tags of §4.4.2).
    fn member(&self, index: u16, allowed: &[u8]) -> Result<crate::classfile::MemberRef, Problem> {
        let tag = match self.cp.get(index) {
            Some(Constant::FieldRef { .. }) => 9,
            Some(Constant::MethodRef { .. }) => 10,
            Some(Constant::InterfaceMethodRef { .. }) => 11,
            _ => 0,
        };
        if !allowed.contains(&tag) {
            return Err(self.bad_constant(index));
        }
        self.cp.member_ref(index).map_err(|_| self.bad_constant(index))
    }

    /// Pops an array (or null) whose descriptor `ok` accepts; `None` for null.
    fn pop_array(&self, f: &mut Frame, ok: fn(&str) -> bool, want: &str) -> Result<Option<Arc<str>>, Problem> {
        let at = f.stack.len().saturating_sub(1);
        match f.pop_any()? {
            VType::Null => Ok(None),
            VType::Ref(d) if d.starts_with('[') && ok(&d) => Ok(Some(d)),
            t => Err(bad_stack(&t, at, &VType::object(want))),
        }
    }

    /// Pops a primitive array (or null) whose element letter is one of `elems`.
    fn pop_primitive_array(&self, f: &mut Frame, elems: &[u8]) -> Result<(), Problem> {
        let at = f.stack.len().saturating_sub(1);
        match f.pop_any()? {
            VType::Null => Ok(()),
            VType::Ref(d) if d.len() == 2 && elems.contains(&d.as_bytes()[1]) => Ok(()),
            other => Err(bad_stack(&other, at, &VType::object(&format!("[{}", elems[0] as char)))),
        }
    }

    /// Pops `n` slots as one group for the stack shuffles, refusing to split a `long`/`double`.
    fn take(&self, f: &mut Frame, n: usize) -> Result<Vec<VType>, Problem> {
        let len = f.stack.len();
        if n > len {
            return Err(problem("Operand stack underflow", None));
        }
        if f.stack[len - n] == VType::Top {
            return Err(bad_stack(&VType::Top, len - n, &VType::Top));
        }
        Ok(f.stack.split_off(len - n))
    }

    fn put(&self, f: &mut Frame, groups: &[&[VType]]) -> Result<(), Problem> {
        let n: usize = groups.iter().map(|g| g.len()).sum();
        if f.stack.len() + n > self.max_stack {
            return Err(problem("Operand stack overflow", None));
        }
        for g in groups {
            f.stack.extend_from_slice(g);
        }
        Ok(())
    }

    /// The rules of one instruction (JVMS §4.10.1.9), applied to a copy of `frame`.
    fn step(&self, pc: u16, frame: &Frame, h: &mut dyn Lookup) -> Result<Step, Problem> {
        use VType::{Double, Float, Int, Long};
        let p = pc as usize;
        let op = self.u1(p);
        let ms = self.max_stack;
        let mut f = frame.clone();
        let mut next: Vec<(u16, Edge)> = Vec::new();
        let mut falls = true;
        let mut call = None;
        let mut ret = false;
        let mut stored = false;
        let len = instruction_length(&self.code.bytecode, p).map_err(|e| problem("Bad instruction", Some(e.reason)))?;
        match op {
            0x00 => {}
            0x01 => f.push(VType::Null, ms)?,
            0x02..=0x08 | 0x10 | 0x11 => f.push(Int, ms)?,
            0x09 | 0x0a => f.push(Long, ms)?,
            0x0b..=0x0d => f.push(Float, ms)?,
            0x0e | 0x0f => f.push(Double, ms)?,
            0x12..=0x14 => {
                let index = if op == 0x12 { self.u1(p + 1) as u16 } else { self.u2(p + 1) };
                let t = match self.cp.get(index) {
                    Some(Constant::Integer(_)) if op != 0x14 => Int,
                    Some(Constant::Float(_)) if op != 0x14 => Float,
                    Some(Constant::Long(_)) if op == 0x14 => Long,
                    Some(Constant::Double(_)) if op == 0x14 => Double,
                    Some(Constant::String { .. }) if op != 0x14 => VType::object("java/lang/String"),
                    Some(Constant::Class { .. }) if op != 0x14 => VType::object("java/lang/Class"),
                    Some(Constant::MethodType { .. }) if op != 0x14 => VType::object("java/lang/invoke/MethodType"),
                    Some(Constant::MethodHandle { .. }) if op != 0x14 => VType::object("java/lang/invoke/MethodHandle"),
                    Some(Constant::Dynamic { name_and_type, .. }) => {
                        let d =
                            self.cp.name_and_type(*name_and_type).map(|(_, d)| d.clone()).unwrap_or_else(|_| "".into());
                        match VType::of_descriptor(&d) {
                            Some(t) if t.is_wide() == (op == 0x14) => t,
                            _ => return Err(problem(format!("Invalid index in ldc: {index}"), None)),
                        }
                    }
                    _ => return Err(self.bad_constant(index)),
                };
                f.push(t, ms)?;
            }
            // Loads.
            0x15..=0x2d => {
                let (kind, index) = if op <= 0x19 {
                    (op - 0x15, self.u1(p + 1) as usize)
                } else {
                    ((op - 0x1a) / 4, ((op - 0x1a) % 4) as usize)
                };
                load_local(&mut f, kind, index, ms, h)?;
            }
            // Array loads.
            0x2e..=0x35 => {
                f.pop(&Int, h)?;
                let t = match array_element(op - 0x2e) {
                    Some((elems, t)) => {
                        self.pop_primitive_array(&mut f, elems)?;
                        t
                    }
                    None => match self.pop_array(&mut f, is_reference_array, "[Ljava/lang/Object;")? {
                        None => VType::Null,
                        Some(d) => {
                            VType::of_descriptor(&d[1..]).ok_or_else(|| problem("Bad type on operand stack", None))?
                        }
                    },
                };
                f.push(t, ms)?;
            }
            // Stores.
            0x36..=0x4e => {
                let (kind, index) = if op <= 0x3a {
                    (op - 0x36, self.u1(p + 1) as usize)
                } else {
                    ((op - 0x3b) / 4, ((op - 0x3b) % 4) as usize)
                };
                store_local(&mut f, kind, index, h)?;
                stored = true;
            }
            // Array stores.
            0x4f..=0x56 => {
                let element = array_element(op - 0x4f);
                f.pop(&element.as_ref().map_or_else(object, |(_, t)| t.clone()), h)?;
                f.pop(&Int, h)?;
                match element {
                    Some((elems, _)) => self.pop_primitive_array(&mut f, elems)?,
                    None => {
                        self.pop_array(&mut f, is_reference_array, "[Ljava/lang/Object;")?;
                    }
                }
            }
            // Stack shuffles.
            0x57 => {
                self.take(&mut f, 1)?;
            }
            0x58 => {
                self.take(&mut f, 2)?;
            }
            0x59 => {
                let v = self.take(&mut f, 1)?;
                self.put(&mut f, &[&v, &v])?;
            }
            // dup_x1, dup_x2, dup2_x1, dup2_x2: the top group (one or two slots) copied below the next.
            0x5a | 0x5b | 0x5d | 0x5e => {
                let (top, below) = match op {
                    0x5a => (1, 1),
                    0x5b => (1, 2),
                    0x5d => (2, 1),
                    _ => (2, 2),
                };
                let v1 = self.take(&mut f, top)?;
                let v2 = self.take(&mut f, below)?;
                self.put(&mut f, &[&v1, &v2, &v1])?;
            }
            0x5c => {
                let v = self.take(&mut f, 2)?;
                self.put(&mut f, &[&v, &v])?;
            }
            0x5f => {
                let v1 = self.take(&mut f, 1)?;
                let v2 = self.take(&mut f, 1)?;
                self.put(&mut f, &[&v1, &v2])?;
            }
            // Arithmetic: the type is the opcode's position in its group of four.
            0x60..=0x77 => {
                let t = [Int, Long, Float, Double][((op - 0x60) % 4) as usize].clone();
                f.pop(&t, h)?;
                if op < 0x74 {
                    f.pop(&t, h)?;
                }
                f.push(t, ms)?;
            }
            0x78..=0x7d => {
                let t = if op % 2 == 0 { Int } else { Long };
                f.pop(&Int, h)?;
                f.pop(&t, h)?;
                f.push(t, ms)?;
            }
            0x7e..=0x83 => {
                let t = if op % 2 == 0 { Int } else { Long };
                f.pop(&t, h)?;
                f.pop(&t, h)?;
                f.push(t, ms)?;
            }
            0x84 => {
                f.load(self.u1(p + 1) as usize, &Int, h)?;
            }
            // Conversions.
            0x85..=0x93 => {
                let (from, to) = match op {
                    0x85 => (Int, Long),
                    0x86 => (Int, Float),
                    0x87 => (Int, Double),
                    0x88 => (Long, Int),
                    0x89 => (Long, Float),
                    0x8a => (Long, Double),
                    0x8b => (Float, Int),
                    0x8c => (Float, Long),
                    0x8d => (Float, Double),
                    0x8e => (Double, Int),
                    0x8f => (Double, Long),
                    0x90 => (Double, Float),
                    _ => (Int, Int),
                };
                f.pop(&from, h)?;
                f.push(to, ms)?;
            }
            0x94..=0x98 => {
                let t = match op {
                    0x94 => Long,
                    0x95 | 0x96 => Float,
                    _ => Double,
                };
                f.pop(&t, h)?;
                f.pop(&t, h)?;
                f.push(Int, ms)?;
            }
            // Branches.
            0x99..=0xa6 | 0xc6 | 0xc7 => {
                match op {
                    0x99..=0x9e => {
                        f.pop(&Int, h)?;
                    }
                    0x9f..=0xa4 => {
                        f.pop(&Int, h)?;
                        f.pop(&Int, h)?;
                    }
                    0xa5 | 0xa6 => {
                        f.pop_reference()?;
                        f.pop_reference()?;
                    }
                    _ => {
                        f.pop_reference()?;
                    }
                }
                next.push((self.target(pc, self.u2(p + 1) as i16 as i64)?, Edge::Branch));
            }
            0xa7 | 0xc8 => {
                let off = if op == 0xa7 { self.u2(p + 1) as i16 as i64 } else { self.i4(p + 1) as i64 };
                next.push((self.target(pc, off)?, Edge::Branch));
                falls = false;
            }
            0xa8 | 0xc9 => {
                let off = if op == 0xa8 { self.u2(p + 1) as i16 as i64 } else { self.i4(p + 1) as i64 };
                let target = self.target(pc, off)?;
                f.push(VType::ReturnAddress(target), ms)?;
                call = Some((target, pc + len as u16));
                falls = false;
            }
            0xa9 => {
                let i = self.u1(p + 1) as usize;
                self.ret(&f, i)?;
                ret = true;
                falls = false;
            }
            0xaa | 0xab => {
                f.pop(&Int, h)?;
                let a = (p + 4) & !3;
                next.push((self.target(pc, self.i4(a) as i64)?, Edge::Branch));
                if op == 0xaa {
                    let (low, high) = (self.i4(a + 4) as i64, self.i4(a + 8) as i64);
                    for k in 0..(high - low + 1) as usize {
                        next.push((self.target(pc, self.i4(a + 12 + 4 * k) as i64)?, Edge::Branch));
                    }
                } else {
                    let n = self.i4(a + 4) as usize;
                    let mut last = None;
                    for k in 0..n {
                        let key = self.i4(a + 8 + 8 * k);
                        if last.is_some_and(|l| key <= l) {
                            return Err(problem("Bad lookupswitch instruction", None));
                        }
                        last = Some(key);
                        next.push((self.target(pc, self.i4(a + 12 + 8 * k) as i64)?, Edge::Branch));
                    }
                }
                falls = false;
            }
            // Returns.
            0xac..=0xb1 => {
                // As HotSpot: the value is popped by the opcode's type, then held to the method's.
                let want = [Some(Int), Some(Long), Some(Float), Some(Double), Some(object()), None]
                    [(op - 0xac) as usize]
                    .clone();
                match (&self.ret, want) {
                    (None, None) => {
                        if f.this_uninit && self.is_init {
                            return Err(problem("Constructor must call super() or this() before return", None));
                        }
                    }
                    (Some(r), Some(w)) => {
                        let v = f.pop(&w, h)?;
                        if !assignable(&v, r, h)? {
                            return Err(problem(
                                "Bad return type",
                                Some(format!(
                                    "Type {v} (current frame, stack[{}]) is not assignable to {r}",
                                    f.stack.len()
                                )),
                            ));
                        }
                    }
                    (None, Some(_)) => return Err(problem("Method does not expect a return value", None)),
                    (Some(_), None) => return Err(problem("Method expects a return value", None)),
                }
                falls = false;
            }
            // Fields.
            0xb2..=0xb5 => {
                let r = self.member(self.u2(p + 1), &[9])?;
                let t = VType::of_descriptor(&r.descriptor).ok_or_else(|| problem("Illegal field signature", None))?;
                let owner = VType::of_class_constant(&r.class);
                match op {
                    0xb2 => f.push(t, ms)?,
                    0xb3 => {
                        f.pop(&t, h)?;
                    }
                    0xb4 => {
                        f.pop(&owner, h)?;
                        f.push(t, ms)?;
                    }
                    _ => {
                        f.pop(&t, h)?;
                        let at = f.stack.len().saturating_sub(1);
                        let receiver = f.pop_any()?;
                        // A constructor may set its own class's fields before calling super().
                        let own_field = receiver == VType::UninitThis && r.class == self.class.this_class;
                        if !own_field && !assignable(&receiver, &owner, h)? {
                            return Err(bad_stack(&receiver, at, &owner));
                        }
                    }
                }
            }
            // Invocations.
            0xb6..=0xba => self.invoke(p, op, &mut f, h)?,
            0xbb => {
                let c = self.class_constant(self.u2(p + 1))?;
                if c.starts_with('[') {
                    return Err(problem("Illegal new instruction", None));
                }
                f.push(VType::Uninit(pc), ms)?;
            }
            0xbc => {
                f.pop(&Int, h)?;
                let d = match self.u1(p + 1) {
                    4 => "[Z",
                    5 => "[C",
                    6 => "[F",
                    7 => "[D",
                    8 => "[B",
                    9 => "[S",
                    10 => "[I",
                    11 => "[J",
                    _ => return Err(problem("Illegal newarray instruction", None)),
                };
                f.push(VType::object(d), ms)?;
            }
            0xbd => {
                f.pop(&Int, h)?;
                let c = self.class_constant(self.u2(p + 1))?;
                let d = if c.starts_with('[') { format!("[{c}") } else { format!("[L{c};") };
                if d.bytes().take_while(|&b| b == b'[').count() > 255 {
                    return Err(problem("Array with too many dimensions", None));
                }
                f.push(VType::object(&d), ms)?;
            }
            0xbe => {
                self.pop_array(&mut f, |_| true, "[")?;
                f.push(Int, ms)?;
            }
            0xbf => {
                f.pop(&VType::object("java/lang/Throwable"), h)?;
                falls = false;
            }
            0xc0 | 0xc1 => {
                let c = self.class_constant(self.u2(p + 1))?;
                f.pop(&object(), h)?;
                f.push(if op == 0xc0 { VType::of_class_constant(&c) } else { Int }, ms)?;
            }
            0xc2 | 0xc3 => {
                f.pop(&object(), h)?;
            }
            0xc4 => {
                let inner = self.u1(p + 1);
                let i = self.u2(p + 2) as usize;
                match inner {
                    0x15..=0x19 => load_local(&mut f, inner - 0x15, i, ms, h)?,
                    0x36..=0x3a => {
                        store_local(&mut f, inner - 0x36, i, h)?;
                        stored = true;
                    }
                    0x84 => {
                        f.load(i, &Int, h)?;
                    }
                    0xa9 => {
                        self.ret(&f, i)?;
                        ret = true;
                        falls = false;
                    }
                    _ => return Err(problem("Bad instruction", Some(format!("wide {inner:#04x}")))),
                }
            }
            0xc5 => {
                let c = self.class_constant(self.u2(p + 1))?;
                let dims = self.u1(p + 3) as usize;
                if dims == 0 || c.bytes().take_while(|&b| b == b'[').count() < dims {
                    return Err(problem("Illegal multianewarray instruction", None));
                }
                for _ in 0..dims {
                    f.pop(&Int, h)?;
                }
                f.push(VType::of_class_constant(&c), ms)?;
            }
            _ => return Err(problem("Bad instruction", Some(format!("opcode {op:#04x}")))),
        }
        if falls {
            next.push((pc + len as u16, Edge::Fall));
        }
        Ok(Step { frame: f, next, call, ret, stored })
    }

    /// `ret`: the local must hold a return address.
    fn ret(&self, f: &Frame, i: usize) -> Result<(), Problem> {
        match f.locals.get(i) {
            Some(VType::ReturnAddress(_)) => Ok(()),
            Some(t) => Err(problem(
                "Bad local variable type",
                Some(format!("Type {t} (current frame, locals[{i}]) is not a return address")),
            )),
            None => Err(problem("Illegal local variable number", None)),
        }
    }

    fn invoke(&self, p: usize, op: u8, f: &mut Frame, h: &mut dyn Lookup) -> Result<(), Problem> {
        let index = self.u2(p + 1);
        let (class, name, descriptor) = if op == 0xba {
            let Some(Constant::InvokeDynamic { name_and_type, .. }) = self.cp.get(index) else {
                return Err(self.bad_constant(index));
            };
            if self.u2(p + 3) != 0 {
                return Err(problem("Bad invokedynamic instruction", None));
            }
            let (n, d) =
                self.cp.name_and_type(*name_and_type).map_err(|e| problem("Illegal constant pool entry", Some(e)))?;
            (None, n.clone(), d.clone())
        } else {
            let allowed: &[u8] = match op {
                0xb6 => &[10],
                0xb9 => &[11],
                _ => &[10, 11],
            };
            let r = self.member(index, allowed)?;
            (Some(r.class), r.name, r.descriptor)
        };
        let d = MethodDescriptor::parse(&descriptor).ok_or_else(|| problem("Illegal method signature", None))?;
        if name.starts_with('<') && (&*name != "<init>" || op != 0xb7) {
            return Err(problem("Illegal call to internal method", None));
        }
        if op == 0xb9 {
            let count = self.u1(p + 3) as usize;
            if count != d.param_slots() + 1 || self.u1(p + 4) != 0 {
                return Err(problem("Inconsistent args count operand in invokeinterface", None));
            }
        }
        for t in d.param_types.iter().rev() {
            let t = VType::of_descriptor(t).ok_or_else(|| problem("Illegal method signature", None))?;
            f.pop(&t, h)?;
        }
        if let Some(class) = class.filter(|_| op != 0xb8) {
            let owner = VType::of_class_constant(&class);
            let at = f.stack.len().saturating_sub(1);
            if &*name == "<init>" {
                let receiver = f.pop_any()?;
                let now = match &receiver {
                    VType::UninitThis => {
                        let ok = class == self.class.this_class || Some(&class) == self.class.super_class.as_ref();
                        if !ok {
                            return Err(problem(
                                "Bad <init> method call",
                                Some(format!("{class} is neither this class nor its superclass")),
                            ));
                        }
                        VType::Ref(self.class.this_class.clone())
                    }
                    VType::Uninit(new_at) => {
                        let made = (self.u1(*new_at as usize) == 0xbb && self.starts[*new_at as usize])
                            .then(|| self.class_constant(self.u2(*new_at as usize + 1)).ok())
                            .flatten();
                        if made.as_deref() != Some(&*class) {
                            return Err(problem(
                                "Bad <init> method call",
                                Some(format!("the object is not a new {class}")),
                            ));
                        }
                        VType::Ref(class.clone())
                    }
                    t => return Err(bad_stack(t, at, &VType::UninitThis)),
                };
                f.initialise(&receiver, now);
            } else if op == 0xb7 {
                f.pop(&VType::Ref(self.class.this_class.clone()), h)?;
            } else {
                f.pop(&owner, h)?;
            }
        }
        if d.ret != Kind::Void {
            let t = VType::of_descriptor(&d.return_type).ok_or_else(|| problem("Illegal method signature", None))?;
            f.push(t, self.max_stack)?;
        }
        Ok(())
    }
}

/// The mnemonic of an opcode, as HotSpot's verifier names the failing instruction.
pub fn opcode_name(op: u8) -> &'static str {
    const NAMES: [&str; 202] = [
        "nop",
        "aconst_null",
        "iconst_m1",
        "iconst_0",
        "iconst_1",
        "iconst_2",
        "iconst_3",
        "iconst_4",
        "iconst_5",
        "lconst_0",
        "lconst_1",
        "fconst_0",
        "fconst_1",
        "fconst_2",
        "dconst_0",
        "dconst_1",
        "bipush",
        "sipush",
        "ldc",
        "ldc_w",
        "ldc2_w",
        "iload",
        "lload",
        "fload",
        "dload",
        "aload",
        "iload_0",
        "iload_1",
        "iload_2",
        "iload_3",
        "lload_0",
        "lload_1",
        "lload_2",
        "lload_3",
        "fload_0",
        "fload_1",
        "fload_2",
        "fload_3",
        "dload_0",
        "dload_1",
        "dload_2",
        "dload_3",
        "aload_0",
        "aload_1",
        "aload_2",
        "aload_3",
        "iaload",
        "laload",
        "faload",
        "daload",
        "aaload",
        "baload",
        "caload",
        "saload",
        "istore",
        "lstore",
        "fstore",
        "dstore",
        "astore",
        "istore_0",
        "istore_1",
        "istore_2",
        "istore_3",
        "lstore_0",
        "lstore_1",
        "lstore_2",
        "lstore_3",
        "fstore_0",
        "fstore_1",
        "fstore_2",
        "fstore_3",
        "dstore_0",
        "dstore_1",
        "dstore_2",
        "dstore_3",
        "astore_0",
        "astore_1",
        "astore_2",
        "astore_3",
        "iastore",
        "lastore",
        "fastore",
        "dastore",
        "aastore",
        "bastore",
        "castore",
        "sastore",
        "pop",
        "pop2",
        "dup",
        "dup_x1",
        "dup_x2",
        "dup2",
        "dup2_x1",
        "dup2_x2",
        "swap",
        "iadd",
        "ladd",
        "fadd",
        "dadd",
        "isub",
        "lsub",
        "fsub",
        "dsub",
        "imul",
        "lmul",
        "fmul",
        "dmul",
        "idiv",
        "ldiv",
        "fdiv",
        "ddiv",
        "irem",
        "lrem",
        "frem",
        "drem",
        "ineg",
        "lneg",
        "fneg",
        "dneg",
        "ishl",
        "lshl",
        "ishr",
        "lshr",
        "iushr",
        "lushr",
        "iand",
        "land",
        "ior",
        "lor",
        "ixor",
        "lxor",
        "iinc",
        "i2l",
        "i2f",
        "i2d",
        "l2i",
        "l2f",
        "l2d",
        "f2i",
        "f2l",
        "f2d",
        "d2i",
        "d2l",
        "d2f",
        "i2b",
        "i2c",
        "i2s",
        "lcmp",
        "fcmpl",
        "fcmpg",
        "dcmpl",
        "dcmpg",
        "ifeq",
        "ifne",
        "iflt",
        "ifge",
        "ifgt",
        "ifle",
        "if_icmpeq",
        "if_icmpne",
        "if_icmplt",
        "if_icmpge",
        "if_icmpgt",
        "if_icmple",
        "if_acmpeq",
        "if_acmpne",
        "goto",
        "jsr",
        "ret",
        "tableswitch",
        "lookupswitch",
        "ireturn",
        "lreturn",
        "freturn",
        "dreturn",
        "areturn",
        "return",
        "getstatic",
        "putstatic",
        "getfield",
        "putfield",
        "invokevirtual",
        "invokespecial",
        "invokestatic",
        "invokeinterface",
        "invokedynamic",
        "new",
        "newarray",
        "anewarray",
        "arraylength",
        "athrow",
        "checkcast",
        "instanceof",
        "monitorenter",
        "monitorexit",
        "wide",
        "multianewarray",
        "ifnull",
        "ifnonnull",
        "goto_w",
        "jsr_w",
    ];
    NAMES.get(op as usize).copied().unwrap_or("<illegal>")
}
