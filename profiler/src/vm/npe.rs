//! HotSpot's helpful NullPointerException messages (JEP 358): from the instruction that failed
//! ("Cannot invoke \"String.length()\"") and the instruction that pushed the null
//! ("because \"s\" is null", "because the return value of \"Main.find()\" is null"). The second
//! comes from a dataflow over the method's bytecode that records, for every operand-stack slot,
//! the instruction that pushed it (forgotten where paths disagree).

use super::class::MethodId;
use super::heap::Ref;
use super::{Tracker, Vm};
use crate::classfile::descriptor::{Kind, MethodDescriptor};
use crate::classfile::{Code, Constant, ConstantPool};

/// Origins of the operand-stack slots before an instruction (None: unknown).
type Stack = Vec<Option<u16>>;

/// Java's name for a type in these messages: `String` and `Object` without their package.
fn type_name(internal: &str) -> String {
    let dotted = internal.replace('/', ".");
    match dotted.as_str() {
        "java.lang.String" | "java.lang.Object" => dotted["java.lang.".len()..].to_string(),
        _ => dotted,
    }
}

fn descriptor_type(d: &str) -> String {
    let dims = d.bytes().take_while(|&b| b == b'[').count();
    let base = match &d[dims..] {
        "Z" => "boolean".into(),
        "B" => "byte".into(),
        "C" => "char".into(),
        "S" => "short".into(),
        "I" => "int".into(),
        "J" => "long".into(),
        "F" => "float".into(),
        "D" => "double".into(),
        other => type_name(other.trim_start_matches('L').trim_end_matches(';')),
    };
    format!("{base}{}", "[]".repeat(dims))
}

fn method_text(cp: &ConstantPool, index: u16) -> Option<String> {
    let r = cp.member_ref(index).ok()?;
    let d = MethodDescriptor::parse(&r.descriptor)?;
    let params: Vec<String> = d.param_types.iter().map(|p| descriptor_type(p)).collect();
    Some(format!("{}.{}({})", type_name(&r.class), r.name, params.join(", ")))
}

fn u2(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b.get(i).copied().unwrap_or(0), b.get(i + 1).copied().unwrap_or(0)])
}

/// Stack effect of the instruction at `pc`: slots popped and kinds pushed, or None if unknown.
fn effect(b: &[u8], cp: &ConstantPool, pc: usize) -> Option<(usize, Vec<Kind>)> {
    use Kind::*;
    let op = b[pc];
    let one = |k: Kind| Some((0, vec![k]));
    Some(match op {
        0x00 => (0, vec![]),
        0x01 => return one(Reference),
        0x02..=0x08 | 0x10 | 0x11 => return one(Int),
        0x09 | 0x0a => return one(Long),
        0x0b..=0x0d => return one(Float),
        0x0e | 0x0f => return one(Double),
        0x12 | 0x13 => {
            let idx = if op == 0x12 { b[pc + 1] as u16 } else { u2(b, pc + 1) };
            return one(match cp.get(idx)? {
                crate::classfile::Constant::Integer(_) => Int,
                crate::classfile::Constant::Float(_) => Float,
                _ => Reference,
            });
        }
        0x14 => return one(Long),
        0x15 | 0x1a..=0x1d => return one(Int),
        0x16 | 0x1e..=0x21 => return one(Long),
        0x17 | 0x22..=0x25 => return one(Float),
        0x18 | 0x26..=0x29 => return one(Double),
        0x19 | 0x2a..=0x2d => return one(Reference),
        0x2e | 0x33..=0x35 => (2, vec![Int]),
        0x2f => (2, vec![Long]),
        0x30 => (2, vec![Float]),
        0x31 => (2, vec![Double]),
        0x32 => (2, vec![Reference]),
        0x36 | 0x38 | 0x3a | 0x3b..=0x3e | 0x43..=0x46 | 0x4b..=0x4e => (1, vec![]),
        0x37 | 0x39 | 0x3f..=0x42 | 0x47..=0x4a => (2, vec![]),
        0x4f | 0x51 | 0x53..=0x56 => (3, vec![]),
        0x50 | 0x52 => (4, vec![]),
        0x57 => (1, vec![]),
        0x58 => (2, vec![]),
        0x60 | 0x64 | 0x68 | 0x6c | 0x70 | 0x78 | 0x7a | 0x7c | 0x7e | 0x80 | 0x82 => (2, vec![Int]),
        0x62 | 0x66 | 0x6a | 0x6e | 0x72 => (2, vec![Float]),
        0x61 | 0x65 | 0x69 | 0x6d | 0x71 | 0x7f | 0x81 | 0x83 => (4, vec![Long]),
        0x63 | 0x67 | 0x6b | 0x6f | 0x73 => (4, vec![Double]),
        0x79 | 0x7b | 0x7d => (3, vec![Long]),
        0x74 => (1, vec![Int]),
        0x75 => (2, vec![Long]),
        0x76 => (1, vec![Float]),
        0x77 => (2, vec![Double]),
        0x84 => (0, vec![]),
        0x85 | 0x8c => (1, vec![Long]),
        0x86 => (1, vec![Float]),
        0x87 | 0x8d => (1, vec![Double]),
        0x88 | 0x8e => (2, vec![Int]),
        0x89 | 0x90 => (2, vec![Float]),
        0x8a | 0x8f => (2, vec![if op == 0x8a { Double } else { Long }]),
        0x8b | 0x91..=0x93 => (1, vec![Int]),
        0x94 | 0x97 | 0x98 => (4, vec![Int]),
        0x95 | 0x96 => (2, vec![Int]),
        0x99..=0x9e | 0xc6 | 0xc7 => (1, vec![]),
        0x9f..=0xa6 => (2, vec![]),
        0xb2 | 0xb4 => {
            let d = cp.member_ref(u2(b, pc + 1)).ok()?.descriptor;
            (usize::from(op == 0xb4), vec![crate::classfile::descriptor::field_kind(&d)])
        }
        0xb3 | 0xb5 => {
            let d = cp.member_ref(u2(b, pc + 1)).ok()?.descriptor;
            (crate::classfile::descriptor::field_kind(&d).slots() + usize::from(op == 0xb5), vec![])
        }
        0xb6..=0xb9 => {
            let d = MethodDescriptor::parse(&cp.member_ref(u2(b, pc + 1)).ok()?.descriptor)?;
            (d.param_slots() + usize::from(op != 0xb8), if d.ret == Void { vec![] } else { vec![d.ret] })
        }
        0xba => {
            let Some(Constant::InvokeDynamic { name_and_type, .. }) = cp.get(u2(b, pc + 1)) else { return None };
            let d = MethodDescriptor::parse(cp.name_and_type(*name_and_type).ok()?.1)?;
            (d.param_slots(), if d.ret == Void { vec![] } else { vec![d.ret] })
        }
        0xc5 => (b[pc + 3] as usize, vec![Reference]),
        0xbb => return one(Reference),
        0xbc | 0xbd | 0xc0 => (1, vec![Reference]),
        0xbe | 0xc1 => (1, vec![Int]),
        0xc2 | 0xc3 => (1, vec![]),
        _ => return None,
    })
}

fn instruction_len(b: &[u8], pc: usize) -> usize {
    match b[pc] {
        0x10 | 0x12 | 0x15..=0x19 | 0x36..=0x3a | 0xbc => 2,
        0x11 | 0x13 | 0x14 | 0x84 | 0x99..=0xa8 | 0xb2..=0xb8 | 0xbb | 0xbd | 0xc0 | 0xc1 | 0xc6 | 0xc7 => 3,
        0xc5 => 4,
        0xb9 | 0xba | 0xc8 => 5,
        0xc4 => {
            if b.get(pc + 1) == Some(&0x84) {
                6
            } else {
                4
            }
        }
        0xaa | 0xab => 0,
        _ => 1,
    }
}

/// The origin of every stack slot at `target`, by a forward pass over straight-line code and
/// branch targets (conflicting paths leave a slot unknown).
fn origins_at(code: &Code, cp: &ConstantPool, target: usize) -> Option<Stack> {
    let b = &code.bytecode;
    let mut at: Vec<Option<Stack>> = vec![None; b.len()];
    at[0] = Some(Vec::new());
    for h in &code.exception_table {
        at[h.handler_pc as usize] = Some(vec![None]);
    }
    let mut work: Vec<usize> = (0..b.len()).filter(|&i| at[i].is_some()).collect();
    let mut steps = 0;
    while let Some(pc) = work.pop() {
        steps += 1;
        if steps > 100_000 {
            break;
        }
        let Some(mut s) = at[pc].clone() else { continue };
        let op = b[pc];
        let len = instruction_len(b, pc);
        let mut next: Vec<usize> = Vec::new();
        match op {
            0x59 => s.push(*s.last()?),
            0x5a..=0x5f => {
                let n = s.len();
                let g = |i: usize| s.get(n.wrapping_sub(i)).copied().flatten();
                let (v1, v2, v3, v4) = (g(1), g(2), g(3), g(4));
                s.truncate(n.saturating_sub(match op {
                    0x5a | 0x5f => 2,
                    0x5b | 0x5d => 3,
                    0x5e => 4,
                    _ => 0,
                }));
                s.extend(match op {
                    0x5a => vec![v1, v2, v1],
                    0x5b => vec![v1, v3, v2, v1],
                    0x5c => vec![v2, v1],
                    0x5d => vec![v2, v1, v3, v2, v1],
                    0x5e => vec![v2, v1, v4, v3, v2, v1],
                    _ => vec![v1, v2],
                });
            }
            0xa7 | 0xc8 => {
                let off = if op == 0xa7 {
                    u2(b, pc + 1) as i16 as i64
                } else {
                    i32::from_be_bytes([b[pc + 1], b[pc + 2], b[pc + 3], b[pc + 4]]) as i64
                };
                next.push((pc as i64 + off) as usize);
            }
            0xa8..=0xb1 | 0xbf => {}
            0xc4 => match b.get(pc + 1) {
                Some(0x15 | 0x17) => s.push(Some(pc as u16)),
                Some(0x16 | 0x18) => s.extend([Some(pc as u16), Some(pc as u16)]),
                Some(0x19) => s.push(Some(pc as u16)),
                Some(0x36 | 0x38 | 0x3a) => {
                    s.pop();
                }
                Some(0x37 | 0x39) => s.truncate(s.len().saturating_sub(2)),
                _ => {}
            },
            _ => {
                let (pop, push) = effect(b, cp, pc)?;
                s.truncate(s.len().saturating_sub(pop));
                for k in push {
                    for _ in 0..k.slots() {
                        s.push(Some(pc as u16));
                    }
                }
            }
        }
        if matches!(op, 0x99..=0xa6 | 0xc6 | 0xc7) {
            next.push((pc as i64 + u2(b, pc + 1) as i16 as i64) as usize);
        }
        if !matches!(op, 0xa7..=0xb1 | 0xbf | 0xc8) && len > 0 {
            next.push(pc + len);
        }
        for t in next {
            if t >= b.len() {
                continue;
            }
            match &mut at[t] {
                slot @ None => {
                    *slot = Some(s.clone());
                    work.push(t);
                }
                Some(existing) => {
                    let mut changed = false;
                    if existing.len() != s.len() {
                        continue;
                    }
                    for (e, i) in existing.iter_mut().zip(&s) {
                        if e.is_some() && *e != *i {
                            *e = None;
                            changed = true;
                        }
                    }
                    if changed {
                        work.push(t);
                    }
                }
            }
        }
    }
    at.get(target).cloned().flatten()
}

impl<T: Tracker> Vm<T> {
    /// `NullPointerException.getExtendedNPEMessage()`: None where HotSpot gives no message
    /// (explicitly constructed NPEs, natives, unknown code).
    pub(super) fn extended_npe_message(&self, npe: Ref) -> Option<String> {
        let backtrace = self.fields(npe).get(self.wk.throwable_backtrace as usize).copied()? as Ref;
        let &(m, bci) = self.decode_backtrace(backtrace).first()?;
        let method = &self.methods[m as usize];
        let code = method.raw.as_ref()?;
        let file = method.obsolete.clone().or_else(|| self.classes[method.class as usize].file.clone())?;
        let cp = &file.constant_pool;
        let b = &code.bytecode;
        let pc = bci as usize;
        let op = *b.get(pc)?;
        let array_type =
            |o: u8| ["int", "long", "float", "double", "object", "byte/boolean", "char", "short"][(o % 8) as usize];
        // The failed action and how deep below the top of the stack the null sits.
        let (action, depth) = match op {
            0x2e..=0x35 => (format!("Cannot load from {} array", array_type(op - 0x2e)), 1),
            0x4f..=0x56 => {
                let value_slots = if matches!(op, 0x50 | 0x52) { 2 } else { 1 };
                (format!("Cannot store to {} array", array_type(op - 0x4f)), 1 + value_slots)
            }
            0xbe => ("Cannot read the array length".to_string(), 0),
            0xbf => ("Cannot throw exception".to_string(), 0),
            0xc2 => ("Cannot enter synchronized block".to_string(), 0),
            0xc3 => ("Cannot exit synchronized block".to_string(), 0),
            0xb4 => (format!("Cannot read field \"{}\"", cp.member_ref(u2(b, pc + 1)).ok()?.name), 0),
            0xb5 => {
                let r = cp.member_ref(u2(b, pc + 1)).ok()?;
                (
                    format!("Cannot assign field \"{}\"", r.name),
                    crate::classfile::descriptor::field_kind(&r.descriptor).slots(),
                )
            }
            0xb6 | 0xb7 | 0xb9 => {
                let r = cp.member_ref(u2(b, pc + 1)).ok()?;
                if &*r.name == "<init>" {
                    return None; // an NPE constructed explicitly
                }
                let d = MethodDescriptor::parse(&r.descriptor)?;
                (format!("Cannot invoke \"{}\"", method_text(cp, u2(b, pc + 1))?), d.param_slots())
            }
            _ => return None,
        };
        let cause = origins_at(code, cp, pc).and_then(|s| {
            let mut source = s.get(s.len().checked_sub(depth + 1)?).copied().flatten()?;
            // A cast passes the null through unchanged: name what was cast.
            while b[source as usize] == 0xc0 {
                let before = origins_at(code, cp, source as usize)?;
                source = before.last().copied().flatten()?;
            }
            match b[source as usize] {
                0xb6..=0xb9 => Some(format!(
                    " because the return value of \"{}\" is null",
                    method_text(cp, u2(b, source as usize + 1))?
                )),
                _ => Some(format!(" because \"{}\" is null", self.describe_source(m, code, cp, source as usize, 0)?)),
            }
        });
        Some(format!("{action}{}", cause.unwrap_or_default()))
    }

    /// How HotSpot names the value an instruction pushed (`s`, `this.name`, `Main.field`, `a[0]`).
    fn describe_source(&self, m: MethodId, code: &Code, cp: &ConstantPool, pc: usize, level: u32) -> Option<String> {
        if level > 4 {
            return None;
        }
        let b = &code.bytecode;
        let local = |slot: usize| -> String { self.local_name(m, code, slot, pc) };
        Some(match b[pc] {
            0x01 => "null".to_string(),
            0x02..=0x08 => (b[pc] as i32 - 3).to_string(),
            0x10 => (b[pc + 1] as i8).to_string(),
            0x11 => (u2(b, pc + 1) as i16).to_string(),
            0x15 | 0x19 => local(b[pc + 1] as usize),
            0x1a..=0x1d => local((b[pc] - 0x1a) as usize),
            0x2a..=0x2d => local((b[pc] - 0x2a) as usize),
            0xc4 if matches!(b.get(pc + 1), Some(0x15 | 0x19)) => local(u2(b, pc + 2) as usize),
            0xb2 => {
                let r = cp.member_ref(u2(b, pc + 1)).ok()?;
                format!("{}.{}", type_name(&r.class), r.name)
            }
            0xb4 => {
                let r = cp.member_ref(u2(b, pc + 1)).ok()?;
                let s = origins_at(code, cp, pc)?;
                let obj = s.last().copied().flatten();
                match obj.and_then(|o| self.describe_source(m, code, cp, o as usize, level + 1)) {
                    Some(o) => format!("{o}.{}", r.name),
                    None => r.name.to_string(),
                }
            }
            0x32 => {
                let s = origins_at(code, cp, pc)?;
                let (arr, idx) = (s.get(s.len().checked_sub(2)?).copied().flatten()?, s.last().copied().flatten()?);
                format!(
                    "{}[{}]",
                    self.describe_source(m, code, cp, arr as usize, level + 1)?,
                    self.describe_source(m, code, cp, idx as usize, level + 1)?
                )
            }
            0xc0 => {
                let s = origins_at(code, cp, pc)?;
                self.describe_source(m, code, cp, s.last().copied().flatten()? as usize, level + 1)?
            }
            0xb6..=0xb9 if level > 0 => method_text(cp, u2(b, pc + 1))?,
            _ => return None,
        })
    }

    /// A local's name: from the LocalVariableTable, else `this`, `<parameterN>` or `<localN>`.
    fn local_name(&self, m: MethodId, code: &Code, slot: usize, pc: usize) -> String {
        if let Some(v) = code.local_variables.iter().find(|v| {
            v.index as usize == slot && (v.start_pc as usize) <= pc && pc < v.start_pc as usize + v.length as usize
        }) {
            return v.name.to_string();
        }
        let method = &self.methods[m as usize];
        let mut s = 0;
        if !method.is_static() {
            if slot == 0 {
                return "this".to_string();
            }
            s = 1;
        }
        for (i, k) in method.parsed.params.iter().enumerate() {
            if s == slot {
                return format!("<parameter{}>", i + 1);
            }
            s += k.slots();
        }
        format!("<local{slot}>")
    }
}
