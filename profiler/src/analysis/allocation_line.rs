//! The line an allocation is on. javac's line table gives a `new` instruction the line where its
//! statement (or the last call or branch before it) starts, not the line of the `new` expression:
//! in `return\n    new Order(a, b);` both the `new` and its constructor call are on the `return`'s
//! line, and in `new Order(\n    price(a),\n    tax(b))` the constructor call is on the last
//! argument's line. So the line table only bounds where the expression is: at or after the
//! `new`'s line, and, when the arguments run code with lines of their own, at or before the first
//! of them (found by following the bytecode from the `new` to the constructor call that consumes
//! the object it pushed). Within those bounds the source text says which line holds `new Order`.

use crate::classfile::descriptor::{field_kind, MethodDescriptor};
use crate::classfile::{Code, Constant, ConstantPool};

/// Lines past the `new`'s own that the expression is looked for on, when the line table gives no
/// closer bound.
const MAX_SPAN: u16 = 12;

/// The bytecode index of the `invokespecial <init>` that initialises the object the `new` at
/// `new_bci` creates: a walk forward that tracks which operand-stack slots hold that
/// (uninitialised) object, following the path the expression takes (a conditional's first arm,
/// a loop left once entered again). `None` when the bytecode is not a `new` or the walk loses it.
pub fn constructor_call(code: &Code, cp: &ConstantPool, new_bci: u16) -> Option<u16> {
    let b = &code.bytecode;
    let u2 = |i: usize| -> Option<u16> { Some(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?])) };
    let i4 = |i: usize| -> Option<i32> {
        Some(i32::from_be_bytes([*b.get(i)?, *b.get(i + 1)?, *b.get(i + 2)?, *b.get(i + 3)?]))
    };
    let mut pc = new_bci as usize;
    if *b.get(pc)? != 0xbb {
        return None;
    }
    // One entry per stack slot above what the walk started on: whether it holds the object.
    let mut stack: Vec<bool> = vec![true];
    pc += 3;
    let mut visits = vec![0u8; b.len()];
    for _ in 0..b.len() * 2 + 16 {
        let op = *b.get(pc)?;
        visits[pc] = visits[pc].saturating_add(1);
        let again = visits[pc] > 1;
        let branch = |pc: usize| -> Option<usize> { Some((pc as i64 + u2(pc + 1)? as i16 as i64) as usize) };
        // (slots popped, slots pushed, instruction length); control flow and stack shuffles apart.
        let (pop, push, len): (usize, usize, usize) = match op {
            0x00 => (0, 0, 1),
            0x01..=0x08 | 0x0b..=0x0d => (0, 1, 1),
            0x09 | 0x0a | 0x0e | 0x0f => (0, 2, 1),
            0x10 => (0, 1, 2),
            0x11 => (0, 1, 3),
            0x12 => (0, 1, 2),
            0x13 => (0, 1, 3),
            0x14 => (0, 2, 3),
            0x15 | 0x17 | 0x19 => (0, 1, 2),
            0x16 | 0x18 => (0, 2, 2),
            0x1a..=0x1d | 0x22..=0x25 | 0x2a..=0x2d => (0, 1, 1),
            0x1e..=0x21 | 0x26..=0x29 => (0, 2, 1),
            0x2e | 0x30 | 0x32..=0x35 => (2, 1, 1),
            0x2f | 0x31 => (2, 2, 1),
            0x36 | 0x38 | 0x3a => (1, 0, 2),
            0x37 | 0x39 => (2, 0, 2),
            0x3b..=0x3e | 0x43..=0x46 | 0x4b..=0x4e => (1, 0, 1),
            0x3f..=0x42 | 0x47..=0x4a => (2, 0, 1),
            0x4f | 0x51 | 0x53..=0x56 => (3, 0, 1),
            0x50 | 0x52 => (4, 0, 1),
            0x57 => (1, 0, 1),
            0x58 => (2, 0, 1),
            0x59..=0x5f => {
                let n = stack.len();
                let need = [1, 2, 3, 2, 3, 4, 2][(op - 0x59) as usize];
                if n < need {
                    return None;
                }
                let v = |i: usize| stack[n - i];
                let (drop, put): (usize, Vec<bool>) = match op {
                    0x59 => (0, vec![v(1)]),
                    0x5a => (2, vec![v(1), v(2), v(1)]),
                    0x5b => (3, vec![v(1), v(3), v(2), v(1)]),
                    0x5c => (0, vec![v(2), v(1)]),
                    0x5d => (3, vec![v(2), v(1), v(3), v(2), v(1)]),
                    0x5e => (4, vec![v(2), v(1), v(4), v(3), v(2), v(1)]),
                    _ => (2, vec![v(1), v(2)]),
                };
                stack.truncate(n - drop);
                stack.extend(put);
                pc += 1;
                continue;
            }
            // Arithmetic by type (int, long, float, double), shifts, logic, negation.
            0x60..=0x73 => match (op - 0x60) % 4 {
                1 | 3 => (4, 2, 1),
                _ => (2, 1, 1),
            },
            0x74 | 0x76 => (1, 1, 1),
            0x75 | 0x77 => (2, 2, 1),
            0x78 | 0x7a | 0x7c | 0x7e | 0x80 | 0x82 => (2, 1, 1),
            0x79 | 0x7b | 0x7d => (3, 2, 1),
            0x7f | 0x81 | 0x83 => (4, 2, 1),
            0x84 => (0, 0, 3),
            0x85 | 0x87 | 0x8c | 0x8d => (1, 2, 1),
            0x86 | 0x8b | 0x91..=0x93 => (1, 1, 1),
            0x88 | 0x89 | 0x8e | 0x90 => (2, 1, 1),
            0x8a | 0x8f => (2, 2, 1),
            0x94 | 0x97 | 0x98 => (4, 1, 1),
            0x95 | 0x96 => (2, 1, 1),
            // Conditional branches: the first time, the fall-through (a conditional's first arm,
            // a loop's body); when it comes round again, the branch (out of the loop).
            0x99..=0x9e | 0xc6 | 0xc7 | 0x9f..=0xa6 => {
                let pops = if (0x9f..=0xa6).contains(&op) { 2 } else { 1 };
                if stack.len() < pops || stack[stack.len() - pops..].contains(&true) {
                    return None;
                }
                stack.truncate(stack.len() - pops);
                pc = if again { branch(pc)? } else { pc + 3 };
                continue;
            }
            0xa7 => {
                pc = branch(pc)?;
                continue;
            }
            0xc8 => {
                pc = (pc as i64 + i4(pc + 1)? as i64) as usize;
                continue;
            }
            // A switch in the arguments: its default.
            0xaa | 0xab => {
                if stack.pop()? {
                    return None;
                }
                pc = (pc as i64 + i4((pc + 4) & !3)? as i64) as usize;
                continue;
            }
            0xb2..=0xb5 => {
                let slots = field_kind(&cp.member_ref(u2(pc + 1)?).ok()?.descriptor).slots();
                match op {
                    0xb2 => (0, slots, 3),
                    0xb3 => (slots, 0, 3),
                    0xb4 => (1, slots, 3),
                    _ => (1 + slots, 0, 3),
                }
            }
            0xb6..=0xb9 => {
                let r = cp.member_ref(u2(pc + 1)?).ok()?;
                let d = MethodDescriptor::parse(&r.descriptor)?;
                let args = d.param_slots() + usize::from(op != 0xb8);
                if op == 0xb7 && &*r.name == "<init>" {
                    let receiver = stack.len().checked_sub(args)?;
                    if stack[receiver] {
                        return Some(pc as u16);
                    }
                }
                (args, d.ret.slots(), if op == 0xb9 { 5 } else { 3 })
            }
            0xba => {
                let Some(Constant::InvokeDynamic { name_and_type, .. }) = cp.get(u2(pc + 1)?) else { return None };
                let d = MethodDescriptor::parse(cp.name_and_type(*name_and_type).ok()?.1)?;
                (d.param_slots(), d.ret.slots(), 5)
            }
            0xbb => (0, 1, 3),
            0xbc => (1, 1, 2),
            0xbd | 0xc0 | 0xc1 => (1, 1, 3),
            0xbe => (1, 1, 1),
            0xc2 | 0xc3 => (1, 0, 1),
            0xc4 => match *b.get(pc + 1)? {
                0x15 | 0x17 | 0x19 => (0, 1, 4),
                0x16 | 0x18 => (0, 2, 4),
                0x36 | 0x38 | 0x3a => (1, 0, 4),
                0x37 | 0x39 => (2, 0, 4),
                0x84 => (0, 0, 6),
                _ => return None,
            },
            0xc5 => (*b.get(pc + 3)? as usize, 1, 4),
            // Returns, throws, subroutines: the object was not initialised on this path.
            _ => return None,
        };
        if stack.len() < pop || stack[stack.len() - pop..].contains(&true) {
            return None;
        }
        stack.truncate(stack.len() - pop);
        stack.extend(std::iter::repeat_n(false, push));
        pc += len;
    }
    None
}

/// The line of the `new` expression at `new_bci`, read in `source` (the class's source text)
/// within the bounds the line table gives (see the module's comment): the `k`-th `new Name` from
/// the `new`'s own line on, for the `k`-th `new` of that class the method runs from that line.
/// Without the source, or where it does not show the expression, the line table's line.
pub fn allocation_line(code: &Code, cp: &ConstantPool, new_bci: u16, source: Option<&str>) -> Option<u16> {
    let line = code.line_of(new_bci)?;
    let (Some(source), Some(&0xbb)) = (source, code.bytecode.get(new_bci as usize)) else { return Some(line) };
    let b = &code.bytecode;
    let class = u16::from_be_bytes([*b.get(new_bci as usize + 1)?, *b.get(new_bci as usize + 2)?]);
    let name = simple_name(cp.class_name(class).ok()?);
    // An anonymous class is written `new Interface() {`: no name to look for.
    if name.is_empty() || name.bytes().all(|c| c.is_ascii_digit()) {
        return Some(line);
    }
    let Some(init) = constructor_call(code, cp, new_bci) else { return Some(line) };
    let last = code
        .line_numbers
        .iter()
        .filter(|&&(pc, l)| pc > new_bci && pc <= init && l > line)
        .map(|&(_, l)| l)
        .min()
        .unwrap_or(line.saturating_add(MAX_SPAN));
    let earlier = instruction_starts(b)
        .take_while(|&pc| pc < new_bci as usize)
        .filter(|&pc| b[pc] == 0xbb && b.get(pc + 1..pc + 3) == Some(&class.to_be_bytes()[..]))
        .filter(|&pc| code.line_of(pc as u16) == Some(line))
        .count();
    source
        .lines()
        .enumerate()
        .skip((line as usize).saturating_sub(1))
        .take((last - line) as usize + 1)
        .flat_map(|(i, text)| std::iter::repeat_n(i as u16 + 1, mentions(text, &name)))
        .nth(earlier)
        .or(Some(line))
}

/// `com/acme/Main$Order` → `Order`.
fn simple_name(class: &str) -> String {
    let simple = class.rsplit('/').next().unwrap_or(class);
    simple.rsplit('$').next().unwrap_or(simple).to_string()
}

/// How many times a line of source creates a `name` (`new Order(`, `new com.acme.Order<>(`,
/// `outer.new Order(`), outside a line comment.
fn mentions(line: &str, name: &str) -> usize {
    let code = match line.find("//") {
        Some(c) => &line[..c],
        None => line,
    };
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut count = 0;
    let mut rest = code;
    while let Some(at) = rest.find("new") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + 3..];
        rest = after;
        if before.is_some_and(ident) || !after.starts_with(char::is_whitespace) {
            continue;
        }
        let ty: String = after.trim_start().chars().take_while(|&c| ident(c) || c == '.').collect();
        if ty.rsplit('.').next() == Some(name) {
            count += 1;
        }
    }
    count
}

/// The bytecode indices where instructions start.
fn instruction_starts(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut pc = 0usize;
    std::iter::from_fn(move || {
        let here = pc;
        let op = *b.get(pc)?;
        let i4 =
            |i: usize| -> i64 { b.get(i..i + 4).map_or(0, |s| i32::from_be_bytes([s[0], s[1], s[2], s[3]]) as i64) };
        let len = match op {
            0x10 | 0x12 | 0x15..=0x19 | 0x36..=0x3a | 0xa9 | 0xbc => 2,
            0x11 | 0x13 | 0x14 | 0x84 | 0x99..=0xa8 | 0xb2..=0xb8 | 0xbb | 0xbd | 0xc0 | 0xc1 | 0xc6 | 0xc7 => 3,
            0xc5 => 4,
            0xb9 | 0xba | 0xc8 | 0xc9 => 5,
            0xc4 => {
                if b.get(pc + 1) == Some(&0x84) {
                    6
                } else {
                    4
                }
            }
            0xaa => {
                let p = (pc + 4) & !3;
                let (low, high) = (i4(p + 4), i4(p + 8));
                p - pc + 12 + 4 * (high - low + 1).max(0) as usize
            }
            0xab => {
                let p = (pc + 4) & !3;
                p - pc + 8 + 8 * i4(p + 4).max(0) as usize
            }
            _ => 1,
        };
        pc += len;
        Some(here)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classfile::builder::ClassBuilder;

    /// `code` with the line table `lines`, and the class's constant pool.
    fn method(build: impl FnOnce(&mut ClassBuilder) -> Vec<u8>, lines: &[(u16, u16)]) -> (Code, ConstantPool) {
        let mut cb = ClassBuilder::new();
        let bytecode = build(&mut cb);
        let code = Code {
            max_stack: 8,
            max_locals: 4,
            bytecode,
            exception_table: Vec::new(),
            line_numbers: lines.to_vec(),
            local_variables: Vec::new(),
            stack_map_table: None,
        };
        (code, cb.build("T", "java/lang/Object", &[], 0).constant_pool)
    }

    fn u2(v: u16) -> [u8; 2] {
        v.to_be_bytes()
    }

    /// `return\n    new P(a, b);`: javac gives both the `new` and its constructor call line 4.
    #[test]
    fn a_new_on_the_line_after_its_statement() {
        let (code, cp) = method(
            |cb| {
                let (p, init) = (cb.class("T$P"), cb.method_ref("T$P", "<init>", "(II)V", false));
                let mut b = vec![0xbb];
                b.extend(u2(p));
                b.extend([0x59, 0x1a, 0x1b, 0xb7]);
                b.extend(u2(init));
                b.push(0xb0);
                b
            },
            &[(0, 4)],
        );
        assert_eq!(constructor_call(&code, &cp, 0), Some(6));
        let source = "class T {\n  record P(int a, int b) {}\n  static P f(int a, int b) {\n    return\n        new P(a, b);\n  }\n}\n";
        assert_eq!(allocation_line(&code, &cp, 0, Some(source)), Some(5));
        // Without the source, the line table's line.
        assert_eq!(allocation_line(&code, &cp, 0, None), Some(4));
    }

    /// `P p = new P(\n    foo(a),\n    foo(b));`: the constructor call is on the last argument's
    /// line, the expression on the first; a nested `new P` in the arguments is the second one.
    #[test]
    fn arguments_over_several_lines() {
        let (code, cp) = method(
            |cb| {
                let (p, init) = (cb.class("T$P"), cb.method_ref("T$P", "<init>", "(II)V", false));
                let init1 = cb.method_ref("T$P", "<init>", "(LT$P;)V", false);
                let foo = cb.method_ref("T", "foo", "(I)I", false);
                let mut b = vec![0xbb];
                b.extend(u2(p)); // 0: new P (outer, one-argument constructor)
                b.push(0x59); // 3: dup
                b.push(0xbb);
                b.extend(u2(p)); // 4: new P (inner)
                b.extend([0x59, 0x1a, 0xb8]); // 7: dup, 8: iload_0, 9: invokestatic foo
                b.extend(u2(foo));
                b.extend([0x1b, 0xb8]); // 12: iload_1, 13: invokestatic foo
                b.extend(u2(foo));
                b.push(0xb7); // 16: invokespecial P(int, int)
                b.extend(u2(init));
                b.push(0xb7); // 19: invokespecial P(P)
                b.extend(u2(init1));
                b.push(0xb0); // 22: areturn
                b
            },
            &[(0, 1), (9, 3), (13, 4)],
        );
        assert_eq!(constructor_call(&code, &cp, 4), Some(16));
        assert_eq!(constructor_call(&code, &cp, 0), Some(19));
        let source = "P p = new P(\n    new P(\n        foo(a),\n        foo(b)));\n";
        assert_eq!(allocation_line(&code, &cp, 0, Some(source)), Some(1));
        assert_eq!(allocation_line(&code, &cp, 4, Some(source)), Some(2));
    }

    /// `x = c ? null :\n    new P(a);` with the arms in order; a conditional inside the
    /// arguments (`new P(c ? a : b)`) is followed through its first arm.
    #[test]
    fn branches_on_the_way() {
        let (code, cp) = method(
            |cb| {
                let (p, init) = (cb.class("T$P"), cb.method_ref("T$P", "<init>", "(I)V", false));
                let mut b = vec![0xbb];
                b.extend(u2(p)); // 0: new P
                b.extend([0x59, 0x1a, 0x99]); // 3: dup, 4: iload_0, 5: ifeq +7
                b.extend(u2(7));
                b.extend([0x1b, 0xa7]); // 8: iload_1, 9: goto +4
                b.extend(u2(4));
                b.push(0x1c); // 12: iload_2
                b.push(0xb7); // 13: invokespecial
                b.extend(u2(init));
                b.push(0xb0);
                b
            },
            &[(0, 7)],
        );
        assert_eq!(constructor_call(&code, &cp, 0), Some(13));
        assert_eq!(constructor_call(&code, &cp, 3), None, "not a new");
    }

    #[test]
    fn mentions_are_creations_of_the_name() {
        assert_eq!(mentions("    new Order(a), new com.acme.Order<>(b)", "Order"), 2);
        assert_eq!(mentions("renewOrder(a); new OrderLine(b)", "Order"), 0);
        assert_eq!(mentions("outer.new Order(); // new Order()", "Order"), 1);
        assert_eq!(simple_name("com/acme/Main$Order"), "Order");
    }
}
