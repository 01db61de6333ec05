//! The interpreter against mutated bytecode: small programs of `fixtures/conformance/` are compiled
//! with the machine's `javac`, then one method of one of their classes gets one seeded mutation in
//! its `Code` attribute (a branch target, an opcode swapped for another of the same length, an
//! operand naming another local, constant or array type, `max_stack`/`max_locals`, an exception
//! handler) and the program runs under the VM with tight budgets. Whatever the mutation, the VM
//! must never panic: it ends the program normally, with a Java exception (`VerifyError` once the
//! verifier rejects the method), or with a clean VM error (a budget, bad code). Mutations keep every
//! length as it was, so they reach the interpreter rather than the class-file parser; the
//! `StackMapTable`s javac wrote are left as they are (a verifier must see the mismatch). A run that
//! goes on a minute past its budgets (a loop where no budget is checked) fails the test too.
//!
//! The summary (kinds × endings, the most frequent reasons of each ending, where each panic came
//! from) goes to stderr: `cargo test --release --test bytecode_fuzz -- --nocapture` shows it.
//!
//! `BLOATLENS_FUZZ_CASES` sets the number of mutations (default [`DEFAULT_CASES`]; the complete
//! run, `BLOATLENS_SUITE=full`, [`FULL_CASES`]),
//! `BLOATLENS_FUZZ_SEED` the seed, `BLOATLENS_FUZZ_THREADS` the runs at a time, and
//! `BLOATLENS_FUZZ_CASE` runs only the case of that number (as listed in a failure) to reproduce
//! it. The cases are generated from the seed alone, so a number names the same mutation every time.

use bloatlens_profiler::run::{run, RunConfig, RunResult};
use bloatlens_profiler::vm::{Outcome, VmError};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// About 50 seconds in release mode on two (shared) cores: a run costs ~50 ms, mostly the JDK boot.
/// The cases are the first of the complete run's, so CI repeats the same ones every time.
const DEFAULT_CASES: usize = 1000;
/// The complete run's (`BLOATLENS_SUITE=full`, made before a release).
const FULL_CASES: usize = 2000;
const DEFAULT_SEED: u64 = 0x5DEE_CE66_D1CE_B00C;

/// The programs mutated: arithmetic, floating point, strings, collections, exceptions, switches,
/// loops, arrays, inheritance, enums and a state machine.
const PROGRAMS: [&str; 10] = [
    "int_arith",
    "float_double",
    "strings",
    "collections_map",
    "exceptions",
    "string_switch",
    "control_flow",
    "arrays",
    "inheritance",
    "state_machine",
];

/// Wall-clock budget of one mutated run.
const MAX_WALL: Duration = Duration::from_secs(3);
/// A run this long has hung where no budget is checked: it is abandoned, and the test fails.
const HANG: Duration = Duration::from_secs(60);
/// Hung runs abandoned before the test stops running cases (each keeps a core busy).
const MAX_HANGS: usize = 3;

/// xorshift64*: a small deterministic generator, so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

// ---------------------------------------------------------------------------------------------
// The class-file walker: just enough to find each method's `Code` attribute and the kinds of the
// constant-pool entries.

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let s = self.b.get(self.at..self.at + n).ok_or_else(|| format!("truncated at {}", self.at))?;
        self.at += n;
        Ok(s)
    }
    fn u1(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u2(&mut self) -> Result<u16, String> {
        let s = self.take(2)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }
    fn u4(&mut self) -> Result<u32, String> {
        let s = self.take(4)?;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
}

/// Where a method's `Code` attribute lies in the class file (absolute offsets).
#[derive(Debug, Clone)]
struct CodeAttr {
    /// `max_stack` (u2), then `max_locals` (u2).
    limits: usize,
    code: usize,
    code_len: usize,
    /// The first exception-table entry (8 bytes each).
    table: usize,
    handlers: usize,
}

#[derive(Debug, Clone)]
struct MethodInfo {
    name: String,
    code: Option<CodeAttr>,
}

#[derive(Debug, Clone)]
struct ClassInfo {
    /// The tag of each constant-pool entry; 0 for index 0 and the second slot of a long or double.
    tags: Vec<u8>,
    /// Where each constant-pool entry starts (its tag) in the class file; 0 where `tags` has 0.
    offsets: Vec<usize>,
    methods: Vec<MethodInfo>,
}

fn walk_class(bytes: &[u8]) -> Result<ClassInfo, String> {
    let mut r = Reader { b: bytes, at: 0 };
    if r.u4()? != 0xCAFE_BABE {
        return Err("not a class file".into());
    }
    r.take(4)?;
    let count = r.u2()? as usize;
    let mut tags = vec![0u8; count];
    let mut offsets = vec![0usize; count];
    let mut utf8 = vec![String::new(); count];
    let mut i = 1;
    while i < count {
        offsets[i] = r.at;
        let tag = r.u1()?;
        tags[i] = tag;
        match tag {
            1 => {
                let n = r.u2()? as usize;
                utf8[i] = String::from_utf8_lossy(r.take(n)?).into_owned();
            }
            7 | 8 | 16 | 19 | 20 => {
                r.take(2)?;
            }
            15 => {
                r.take(3)?;
            }
            3 | 4 | 9 | 10 | 11 | 12 | 17 | 18 => {
                r.take(4)?;
            }
            5 | 6 => {
                r.take(8)?;
                i += 1;
            }
            _ => return Err(format!("constant-pool tag {tag} at index {i}")),
        }
        i += 1;
    }
    r.take(6)?;
    let interfaces = r.u2()? as usize;
    r.take(2 * interfaces)?;
    let mut methods = Vec::new();
    for members in 0..2 {
        let n = r.u2()?;
        for _ in 0..n {
            r.take(2)?;
            let name = utf8.get(r.u2()? as usize).cloned().unwrap_or_default();
            let descriptor = utf8.get(r.u2()? as usize).cloned().unwrap_or_default();
            let mut code = None;
            for _ in 0..r.u2()? {
                let attr = utf8.get(r.u2()? as usize).cloned().unwrap_or_default();
                let len = r.u4()? as usize;
                let start = r.at;
                if members == 1 && attr == "Code" {
                    r.take(4)?;
                    let code_len = r.u4()? as usize;
                    let at = r.at;
                    r.take(code_len)?;
                    let handlers = r.u2()? as usize;
                    code = Some(CodeAttr { limits: start, code: at, code_len, table: r.at, handlers });
                }
                r.at = start;
                r.take(len)?;
            }
            if members == 1 {
                methods.push(MethodInfo { name: format!("{name}{descriptor}"), code });
            }
        }
    }
    Ok(ClassInfo { tags, offsets, methods })
}

// ---------------------------------------------------------------------------------------------
// Instructions.

const MNEMONICS: &str = "nop aconst_null iconst_m1 iconst_0 iconst_1 iconst_2 iconst_3 iconst_4 iconst_5 lconst_0 \
lconst_1 fconst_0 fconst_1 fconst_2 dconst_0 dconst_1 bipush sipush ldc ldc_w ldc2_w iload lload fload dload aload \
iload_0 iload_1 iload_2 iload_3 lload_0 lload_1 lload_2 lload_3 fload_0 fload_1 fload_2 fload_3 dload_0 dload_1 \
dload_2 dload_3 aload_0 aload_1 aload_2 aload_3 iaload laload faload daload aaload baload caload saload istore lstore \
fstore dstore astore istore_0 istore_1 istore_2 istore_3 lstore_0 lstore_1 lstore_2 lstore_3 fstore_0 fstore_1 \
fstore_2 fstore_3 dstore_0 dstore_1 dstore_2 dstore_3 astore_0 astore_1 astore_2 astore_3 iastore lastore fastore \
dastore aastore bastore castore sastore pop pop2 dup dup_x1 dup_x2 dup2 dup2_x1 dup2_x2 swap iadd ladd fadd dadd isub \
lsub fsub dsub imul lmul fmul dmul idiv ldiv fdiv ddiv irem lrem frem drem ineg lneg fneg dneg ishl lshl ishr lshr \
iushr lushr iand land ior lor ixor lxor iinc i2l i2f i2d l2i l2f l2d f2i f2l f2d d2i d2l d2f i2b i2c i2s lcmp fcmpl \
fcmpg dcmpl dcmpg ifeq ifne iflt ifge ifgt ifle if_icmpeq if_icmpne if_icmplt if_icmpge if_icmpgt if_icmple \
if_acmpeq if_acmpne goto jsr ret tableswitch lookupswitch ireturn lreturn freturn dreturn areturn return getstatic \
putstatic getfield putfield invokevirtual invokespecial invokestatic invokeinterface invokedynamic new newarray \
anewarray arraylength athrow checkcast instanceof monitorenter monitorexit wide multianewarray ifnull ifnonnull \
goto_w jsr_w";

fn mnemonic(op: u8) -> String {
    match MNEMONICS.split(' ').nth(op as usize) {
        Some(name) => format!("{name}({op:#04x})"),
        None => format!("{op:#04x}"),
    }
}

fn i4(code: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(code.get(at..at + 4)?.try_into().ok()?))
}

/// The length of the instruction at `bci`, as the JVM specification decodes it.
fn insn_len(code: &[u8], bci: usize) -> Option<usize> {
    Some(match *code.get(bci)? {
        0x10 | 0x12 | 0x15..=0x19 | 0x36..=0x3a | 0xa9 | 0xbc => 2,
        0x11 | 0x13 | 0x14 | 0x84 | 0x99..=0xa8 | 0xb2..=0xb8 | 0xbb | 0xbd | 0xc0 | 0xc1 | 0xc6 | 0xc7 => 3,
        0xc5 => 4,
        0xb9 | 0xba | 0xc8 | 0xc9 => 5,
        0xaa => {
            let p = (bci + 4) & !3;
            let (low, high) = (i4(code, p + 4)? as i64, i4(code, p + 8)? as i64);
            p + 12 + 4 * usize::try_from(high - low + 1).ok()? - bci
        }
        0xab => p_of(bci) + 8 + 8 * usize::try_from(i4(code, p_of(bci) + 4)?).ok()? - bci,
        0xc4 if *code.get(bci + 1)? == 0x84 => 6,
        0xc4 => 4,
        0x00..=0x0f | 0x1a..=0x35 | 0x3b..=0x83 | 0x85..=0x98 | 0xac..=0xb1 | 0xbe | 0xbf | 0xc2 | 0xc3 => 1,
        _ => return None,
    })
}

/// Where a switch's operands start (after its padding).
fn p_of(bci: usize) -> usize {
    (bci + 4) & !3
}

/// Start and length of every instruction (javac's code always decodes).
fn instructions(code: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut bci = 0;
    while bci < code.len() {
        let len = insn_len(code, bci).unwrap_or_else(|| panic!("undecodable bytecode at {bci}"));
        out.push((bci, len));
        bci += len;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Mutations.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    Branch,
    Opcode,
    Operand,
    Limits,
    Handler,
}

const KINDS: [Kind; 5] = [Kind::Branch, Kind::Opcode, Kind::Operand, Kind::Limits, Kind::Handler];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Branch => "branch-target",
            Kind::Opcode => "opcode",
            Kind::Operand => "operand",
            Kind::Limits => "max-stack/locals",
            Kind::Handler => "handler",
        }
    }
}

/// One-byte opcodes the interpreter leans on most: arithmetic of every type, loads, stack shuffles,
/// array access, returns, throws, monitors.
const ONE_BYTE_FAVOURITES: [u8; 27] = [
    0x60, 0x62, 0x61, 0x63, 0x2a, 0x1a, 0x57, 0x58, 0x5f, 0x5b, 0x59, 0x5e, 0xbe, 0xbf, 0xb0, 0xac, 0xad, 0xb1, 0x01,
    0x2e, 0x32, 0x53, 0x4b, 0xc2, 0xc3, 0x6c, 0x94,
];
const TWO_BYTE: [u8; 13] = [0x10, 0x12, 0x15, 0x16, 0x17, 0x18, 0x19, 0x36, 0x37, 0x38, 0x39, 0x3a, 0xbc];
const THREE_BYTE_BRANCHES: [u8; 17] =
    [0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xc6, 0xc7];
const THREE_BYTE_CP: [u8; 13] = [0x13, 0x14, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xbb, 0xbd, 0xc0, 0xc1];
const THREE_BYTE_OTHER: [u8; 3] = [0x11, 0x84, 0xa8];
const FIVE_BYTE_INVOKES: [u8; 2] = [0xb9, 0xba];

fn one_byte_opcodes() -> Vec<u8> {
    (0u8..=0xc9).filter(|&op| op != 0xc4 && insn_len(&[op], 0) == Some(1)).collect()
}

fn get_u2(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn put_u2(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// What one mutation did: the instruction it touched (if any) and how.
struct Mutation {
    bci: Option<usize>,
    detail: String,
}

/// A new branch target for the branch at `bci` (absolute; may lie anywhere, even outside the code).
fn pick_target(rng: &mut Rng, bci: usize, old: i64, code_len: usize, insns: &[(usize, usize)]) -> i64 {
    match rng.below(100) {
        0..=39 => rng.pick(insns).0 as i64,
        40..=59 => old + [-3, -2, -1, 1, 2, 3][rng.below(6)],
        60..=64 => bci as i64,
        65..=74 => code_len as i64 + rng.below(4) as i64,
        75..=79 => -1 - rng.below(8) as i64,
        80..=89 => rng.below(code_len) as i64,
        _ => bci as i64 + rng.next() as i16 as i64,
    }
}

fn mutate_branch(rng: &mut Rng, b: &mut [u8], c: &CodeAttr, insns: &[(usize, usize)]) -> Option<Mutation> {
    // (bci of the instruction, absolute offset of its offset operand, operand width)
    let mut sites = Vec::new();
    let code = &b[c.code..c.code + c.code_len];
    for &(bci, _) in insns {
        match code[bci] {
            0x99..=0xa8 | 0xc6 | 0xc7 => sites.push((bci, bci + 1, 2)),
            0xc8 | 0xc9 => sites.push((bci, bci + 1, 4)),
            0xaa => {
                let p = p_of(bci);
                let n = (i4(code, p + 8)? as i64 - i4(code, p + 4)? as i64 + 1) as usize;
                sites.push((bci, p, 4));
                sites.extend((0..n).map(|i| (bci, p + 12 + 4 * i, 4)));
            }
            0xab => {
                let p = p_of(bci);
                let n = i4(code, p + 4)? as usize;
                sites.push((bci, p, 4));
                sites.extend((0..n).map(|i| (bci, p + 12 + 8 * i, 4)));
            }
            _ => {}
        }
    }
    if sites.is_empty() {
        return None;
    }
    let (bci, at, width) = rng.pick(&sites);
    let op = mnemonic(code[bci]);
    let which = if matches!(code[bci], 0xaa | 0xab) { " target" } else { "" };
    let abs = c.code + at;
    for _ in 0..20 {
        if width == 2 {
            let old = get_u2(b, abs) as i16 as i64;
            let Ok(new) = i16::try_from(pick_target(rng, bci, bci as i64 + old, c.code_len, insns) - bci as i64) else {
                continue;
            };
            if new as i64 != old {
                put_u2(b, abs, new as u16);
                let detail = format!("{op} offset {old:+} -> {new:+} (target {})", bci as i64 + new as i64);
                return Some(Mutation { bci: Some(bci), detail });
            }
        } else {
            let old = i4(b, abs)? as i64;
            let Ok(new) = i32::try_from(pick_target(rng, bci, bci as i64 + old, c.code_len, insns) - bci as i64) else {
                continue;
            };
            if new as i64 != old {
                b[abs..abs + 4].copy_from_slice(&new.to_be_bytes());
                let detail = format!("{op}{which} offset {old:+} -> {new:+} (target {})", bci as i64 + new as i64);
                return Some(Mutation { bci: Some(bci), detail });
            }
        }
    }
    None
}

fn mutate_opcode(rng: &mut Rng, b: &mut [u8], c: &CodeAttr, insns: &[(usize, usize)]) -> Option<Mutation> {
    let one_byte = one_byte_opcodes();
    for _ in 0..20 {
        let (bci, _) = rng.pick(insns);
        let at = c.code + bci;
        let old = b[at];
        let new = match insn_len(&b[c.code..c.code + c.code_len], bci)? {
            _ if old == 0xc4 || old == 0xaa || old == 0xab => continue,
            1 if rng.chance(50) => rng.pick(&ONE_BYTE_FAVOURITES),
            1 => rng.pick(&one_byte),
            2 => rng.pick(&TWO_BYTE),
            3 => {
                let all: Vec<u8> =
                    THREE_BYTE_BRANCHES.iter().chain(&THREE_BYTE_CP).chain(&THREE_BYTE_OTHER).copied().collect();
                let group: &[u8] = if THREE_BYTE_BRANCHES.contains(&old) {
                    &THREE_BYTE_BRANCHES
                } else if THREE_BYTE_CP.contains(&old) {
                    &THREE_BYTE_CP
                } else {
                    &THREE_BYTE_OTHER
                };
                if rng.chance(70) {
                    rng.pick(group)
                } else {
                    rng.pick(&all)
                }
            }
            5 if FIVE_BYTE_INVOKES.contains(&old) => rng.pick(&FIVE_BYTE_INVOKES),
            _ => continue,
        };
        if new != old {
            b[at] = new;
            return Some(Mutation { bci: Some(bci), detail: format!("{} -> {}", mnemonic(old), mnemonic(new)) });
        }
    }
    None
}

/// A constant-pool index to put where `old` was: mostly a valid entry of another kind, sometimes
/// another entry of the same kind, sometimes no usable entry at all.
fn pick_cp(rng: &mut Rng, tags: &[u8], old: usize, max: usize) -> usize {
    let old_tag = tags.get(old).copied().unwrap_or(0);
    let valid = |i: &usize| *i <= max && tags[*i] != 0;
    let other: Vec<usize> = (1..tags.len()).filter(valid).filter(|&i| tags[i] != old_tag).collect();
    let same: Vec<usize> = (1..tags.len()).filter(valid).filter(|&i| tags[i] == old_tag && i != old).collect();
    let roll = rng.below(100);
    if roll < 50 && !other.is_empty() {
        rng.pick(&other)
    } else if roll < 85 && !same.is_empty() {
        rng.pick(&same)
    } else {
        let unusable: Vec<usize> = (1..tags.len().min(max + 1)).filter(|&i| tags[i] == 0).collect();
        match rng.below(4) {
            0 => 0,
            1 if tags.len() <= max => tags.len(),
            2 if !unusable.is_empty() => rng.pick(&unusable),
            _ => max,
        }
    }
}

fn cp_kind(tags: &[u8], i: usize) -> &'static str {
    match tags.get(i) {
        None => "out of range",
        Some(1) => "Utf8",
        Some(3) => "Integer",
        Some(4) => "Float",
        Some(5) => "Long",
        Some(6) => "Double",
        Some(7) => "Class",
        Some(8) => "String",
        Some(9) => "Fieldref",
        Some(10) => "Methodref",
        Some(11) => "InterfaceMethodref",
        Some(12) => "NameAndType",
        Some(15) => "MethodHandle",
        Some(16) => "MethodType",
        Some(17) => "Dynamic",
        Some(18) => "InvokeDynamic",
        Some(_) => "unusable",
    }
}

enum Operand {
    /// A local-variable index: one byte, or two after `wide`.
    Local { at: usize, wide: bool },
    /// A constant-pool index: one byte (`ldc`) or two.
    Cp { at: usize, wide: bool },
    /// `newarray`'s element type.
    Atype { at: usize },
    /// `multianewarray`'s dimensions.
    Dims { at: usize },
}

fn mutate_operand(
    rng: &mut Rng,
    b: &mut [u8],
    c: &CodeAttr,
    class: &ClassInfo,
    insns: &[(usize, usize)],
) -> Option<Mutation> {
    let code = &b[c.code..c.code + c.code_len];
    let mut sites = Vec::new();
    for &(bci, _) in insns {
        let at = c.code + bci + 1;
        match code[bci] {
            0x15..=0x19 | 0x36..=0x3a | 0xa9 | 0x84 => sites.push((bci, Operand::Local { at, wide: false })),
            0xc4 => sites.push((bci, Operand::Local { at: at + 1, wide: true })),
            0x12 => sites.push((bci, Operand::Cp { at, wide: false })),
            0x13 | 0x14 | 0xb2..=0xbb | 0xbd | 0xc0 | 0xc1 => sites.push((bci, Operand::Cp { at, wide: true })),
            0xc5 => {
                sites.push((bci, Operand::Cp { at, wide: true }));
                sites.push((bci, Operand::Dims { at: at + 2 }));
            }
            0xbc => sites.push((bci, Operand::Atype { at })),
            _ => {}
        }
    }
    if sites.is_empty() {
        return None;
    }
    let max_locals = get_u2(b, c.limits + 2) as usize;
    for _ in 0..20 {
        let (bci, site) = &sites[rng.below(sites.len())];
        let op = mnemonic(b[c.code + bci]);
        let (at, wide, old, new, what) = match *site {
            Operand::Local { at, wide } => {
                let old = if wide { get_u2(b, at) as usize } else { b[at] as usize };
                let limit = if wide { 0xFFFF } else { 0xFF };
                let new = match rng.below(6) {
                    0 => max_locals,
                    1 => max_locals.saturating_sub(1),
                    2 => max_locals + 1,
                    3 => limit,
                    4 => 0,
                    _ => rng.below(max_locals + 3),
                };
                (at, wide, old, new.min(limit), format!("local {old} -> {new} (max_locals {max_locals})"))
            }
            Operand::Cp { at, wide } => {
                let old = if wide { get_u2(b, at) as usize } else { b[at] as usize };
                let new = pick_cp(rng, &class.tags, old, if wide { 0xFFFF } else { 0xFF });
                let what =
                    format!("cp #{old} ({}) -> #{new} ({})", cp_kind(&class.tags, old), cp_kind(&class.tags, new));
                (at, wide, old, new, what)
            }
            Operand::Atype { at } => {
                let old = b[at] as usize;
                let new = if rng.chance(50) { 4 + rng.below(8) } else { rng.pick(&[0, 1, 3, 12, 13, 16, 127, 255]) };
                (at, false, old, new, format!("atype {old} -> {new}"))
            }
            Operand::Dims { at } => {
                let old = b[at] as usize;
                let new = rng.pick(&[0, 1, old + 1, old + 2, 255]);
                (at, false, old, new, format!("dimensions {old} -> {new}"))
            }
        };
        if new != old {
            if wide {
                put_u2(b, at, new as u16);
            } else {
                b[at] = new as u8;
            }
            return Some(Mutation { bci: Some(*bci), detail: format!("{op} {what}") });
        }
    }
    None
}

fn mutate_limits(rng: &mut Rng, b: &mut [u8], c: &CodeAttr) -> Option<Mutation> {
    let (at, name) = if rng.chance(50) { (c.limits, "max_stack") } else { (c.limits + 2, "max_locals") };
    let old = get_u2(b, at) as u32;
    let new = match rng.below(100) {
        0..=24 => 0,
        25..=44 => old.saturating_sub(1),
        45..=59 => old.saturating_sub(2),
        60..=74 => old + 1 + rng.below(3) as u32,
        75..=84 => 0xFFFF,
        _ => rng.below(old as usize) as u32,
    };
    let new = if new == old { old + 1 } else { new }.min(0xFFFF);
    if new == old {
        return None;
    }
    put_u2(b, at, new as u16);
    Some(Mutation { bci: None, detail: format!("{name} {old} -> {new}") })
}

fn mutate_handler(
    rng: &mut Rng,
    b: &mut [u8],
    c: &CodeAttr,
    class: &ClassInfo,
    insns: &[(usize, usize)],
) -> Option<Mutation> {
    if c.handlers == 0 {
        return None;
    }
    let entry = rng.below(c.handlers);
    let field = rng.below(4);
    let at = c.table + 8 * entry + 2 * field;
    let old = get_u2(b, at) as usize;
    let (new, what) = if field == 3 {
        let new = if rng.chance(25) { 0 } else { pick_cp(rng, &class.tags, old, 0xFFFF) };
        (new, format!("catch_type #{old} ({}) -> #{new} ({})", cp_kind(&class.tags, old), cp_kind(&class.tags, new)))
    } else {
        let new = match rng.below(100) {
            0..=44 => rng.pick(insns).0,
            45..=54 => old + 1 + rng.below(3),
            55..=64 => old.saturating_sub(1 + rng.below(3)),
            65..=74 => c.code_len + rng.below(3),
            75..=84 => 0,
            _ => rng.below(c.code_len),
        };
        let name = ["start_pc", "end_pc", "handler_pc"][field];
        (new, format!("{name} {old} -> {new} (code length {})", c.code_len))
    };
    if new == old || new > 0xFFFF {
        return None;
    }
    put_u2(b, at, new as u16);
    Some(Mutation { bci: None, detail: format!("handler {entry}: {what}") })
}

// ---------------------------------------------------------------------------------------------
// Programs and cases.

struct Program {
    name: String,
    /// Compiled classes: (path relative to the class directory, bytes, walked).
    classes: Vec<(PathBuf, Vec<u8>, ClassInfo)>,
    /// Instructions the unmutated program executes (the JDK's boot included).
    baseline_instructions: u64,
}

struct Case {
    id: usize,
    kind: Kind,
    program: usize,
    class: usize,
    method: String,
    bci: Option<usize>,
    detail: String,
    bytes: Vec<u8>,
}

impl Case {
    fn describe(&self, programs: &[Program]) -> String {
        let p = &programs[self.program];
        let bci = self.bci.map(|b| format!(" bci {b}")).unwrap_or_default();
        format!(
            "case {} [{}] {}/{} {}{bci}: {}",
            self.id,
            self.kind.name(),
            p.name,
            p.classes[self.class].0.display(),
            self.method,
            self.detail
        )
    }
}

fn class_files(dir: &Path, under: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect::<Vec<_>>();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            class_files(&path, under, out);
        } else if path.extension().is_some_and(|e| e == "class") {
            out.push(path.strip_prefix(under).unwrap().to_path_buf());
        }
    }
}

fn config(class_dir: &Path, max_instructions: u64) -> RunConfig {
    let mut config = RunConfig::new(class_dir.display().to_string(), "Main");
    config.capture = true;
    config.limits.max_instructions = max_instructions;
    config.limits.max_wall = MAX_WALL;
    config.limits.max_heap_bytes = 256 << 20;
    config.limits.max_stack_depth = 3000;
    config
}

/// Compiles every program (javac processes side by side: each takes a second to start) and runs
/// it once unmutated for its instruction count.
fn compile_all(root: &Path) -> Vec<Program> {
    let javacs: Vec<_> = PROGRAMS
        .iter()
        .map(|name| {
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/conformance").join(name);
            let sources =
                bloatlens_profiler::javac::java_files(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
            std::process::Command::new("javac")
                .args(["-g", "-nowarn", "-d"])
                .arg(root.join(name))
                .args(&sources)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("javac (a JDK) on PATH")
        })
        .collect();
    let mut programs = Vec::new();
    for (name, javac) in PROGRAMS.iter().zip(javacs) {
        let compiled = javac.wait_with_output().unwrap();
        assert!(compiled.status.success(), "javac {name}: {}", String::from_utf8_lossy(&compiled.stderr));
        let out = root.join(name);
        let mut paths = Vec::new();
        class_files(&out, &out, &mut paths);
        let classes = paths
            .into_iter()
            .map(|rel| {
                let bytes = std::fs::read(out.join(&rel)).unwrap();
                let info = walk_class(&bytes).unwrap_or_else(|e| panic!("{name}/{}: {e}", rel.display()));
                (rel, bytes, info)
            })
            .collect();
        let baseline = run(&config(&out, 1 << 40)).unwrap_or_else(|e| panic!("{name} does not start: {e}"));
        assert!(
            matches!(baseline.outcome, Outcome::Exited(0)),
            "unmutated {name} must run cleanly: {:?}",
            baseline.outcome
        );
        programs.push(Program { name: name.to_string(), classes, baseline_instructions: baseline.stats.instructions });
    }
    programs
}

/// `count` mutations, round-robin over the kinds, each of one method of one class of one program.
fn generate(programs: &[Program], count: usize, seed: u64) -> Vec<Case> {
    let mut rng = Rng(seed | 1);
    let mut cases = Vec::with_capacity(count);
    for id in 0..count {
        let kind = KINDS[id % KINDS.len()];
        for _attempt in 0..500 {
            let program = rng.below(programs.len());
            let class = rng.below(programs[program].classes.len());
            let (_, original, info) = &programs[program].classes[class];
            let with_code: Vec<&MethodInfo> = info.methods.iter().filter(|m| m.code.is_some()).collect();
            if with_code.is_empty() {
                continue;
            }
            let method = rng.pick(&with_code);
            let c = method.code.as_ref().unwrap();
            let insns = instructions(&original[c.code..c.code + c.code_len]);
            let mut bytes = original.clone();
            let mutation = match kind {
                Kind::Branch => mutate_branch(&mut rng, &mut bytes, c, &insns),
                Kind::Opcode => mutate_opcode(&mut rng, &mut bytes, c, &insns),
                Kind::Operand => mutate_operand(&mut rng, &mut bytes, c, info, &insns),
                Kind::Limits => mutate_limits(&mut rng, &mut bytes, c),
                Kind::Handler => mutate_handler(&mut rng, &mut bytes, c, info, &insns),
            };
            if let Some(Mutation { bci, detail }) = mutation {
                assert_eq!(bytes.len(), original.len(), "a mutation changed the file's length");
                cases.push(Case { id, kind, program, class, method: method.name.clone(), bci, detail, bytes });
                break;
            }
        }
    }
    cases
}

/// What the workers share: the cases, and their results as they come.
struct Shared {
    cases: Vec<Case>,
    programs: Vec<Program>,
    /// Where each worker keeps its copy of every program's classes.
    root: PathBuf,
    next: AtomicUsize,
    /// Per worker, the case it runs and since when.
    running: Mutex<Vec<Option<(usize, Instant)>>>,
    results: Mutex<Vec<Option<CaseResult>>>,
}

/// Starts a worker on a copy of its own of every program's classes: it writes one case's mutated
/// class over the original, runs the program, puts the original back, and takes the next case.
fn start_worker(shared: &Arc<Shared>) {
    let w = {
        let mut running = shared.running.lock().unwrap();
        running.push(None);
        running.len() - 1
    };
    let dirs: Vec<PathBuf> = shared
        .programs
        .iter()
        .map(|p| {
            let dir = shared.root.join(format!("worker{w}")).join(&p.name);
            for (rel, bytes, _) in &p.classes {
                std::fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
                std::fs::write(dir.join(rel), bytes).unwrap();
            }
            dir
        })
        .collect();
    let shared = Arc::clone(shared);
    std::thread::spawn(move || loop {
        let i = shared.next.fetch_add(1, Ordering::Relaxed);
        let Some(case) = shared.cases.get(i) else { break };
        let p = &shared.programs[case.program];
        let file = dirs[case.program].join(&p.classes[case.class].0);
        std::fs::write(&file, &case.bytes).unwrap();
        // Enough for the program once and a half and a few million instructions of a loop.
        let budget = p.baseline_instructions * 3 / 2 + 5_000_000;
        let since = Instant::now();
        shared.running.lock().unwrap()[w] = Some((i, since));
        let (ended, reason, panic, raw) = classify_raw(run(&config(&dirs[case.program], budget)));
        let took = since.elapsed();
        if shared.running.lock().unwrap()[w].take().is_none() {
            // The watchdog gave up on this run as hung, and on this worker.
            break;
        }
        std::fs::write(&file, &p.classes[case.class].1).unwrap();
        shared.results.lock().unwrap()[i] = Some(CaseResult { ended, reason, panic, took, raw });
    });
}

// ---------------------------------------------------------------------------------------------
// Outcomes.

/// How a mutated run ended: the columns of the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Ended {
    Ran,
    VerifyError,
    ClassFormatError,
    OtherException,
    Budget,
    BadCode,
    OtherVmError,
    Panic,
    /// Still running long after its budgets: no budget check stops it.
    Hang,
}

const ENDINGS: [Ended; 9] = [
    Ended::Ran,
    Ended::VerifyError,
    Ended::ClassFormatError,
    Ended::OtherException,
    Ended::Budget,
    Ended::BadCode,
    Ended::OtherVmError,
    Ended::Panic,
    Ended::Hang,
];

impl Ended {
    fn name(self) -> &'static str {
        match self {
            Ended::Ran => "ran",
            Ended::VerifyError => "VerifyError",
            Ended::ClassFormatError => "ClassFormatError",
            Ended::OtherException => "other exception",
            Ended::Budget => "budget",
            Ended::BadCode => "bad code",
            Ended::OtherVmError => "other VM error",
            Ended::Panic => "PANIC",
            Ended::Hang => "HANG",
        }
    }
}

/// A panic the hook saw on a VM thread: its message, where, and our frames that led there.
struct Seen {
    message: String,
    location: String,
    via: String,
}

static PANICS: Mutex<Vec<Seen>> = Mutex::new(Vec::new());
static TRACED: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
const CRASHED: &str = "the VM crashed: ";

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// The function names of the first few frames of our own crate in a backtrace (the panic's
/// callers), innermost first.
fn our_frames(trace: &str) -> String {
    let mut frames = Vec::new();
    let mut lines = trace.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        let Some((n, function)) = line.split_once(": ") else { continue };
        if n.parse::<usize>().is_err() || !function.starts_with("bloatlens_profiler::") {
            continue;
        }
        let at = lines.peek().and_then(|l| l.strip_prefix("at ")).map(|l| {
            let l = l.rsplit_once(':').map(|(f, _)| f).unwrap_or(l);
            l.rsplit("/src/").next().unwrap_or(l).to_string()
        });
        let short = function
            .trim_start_matches("bloatlens_profiler::")
            .replace("<impl bloatlens_profiler::vm::Vm<T>>::", "Vm::");
        let short = short.as_str();
        let short = short.rsplit_once("::h").map(|(f, _)| f).unwrap_or(short);
        frames.push(match at {
            Some(at) => format!("{short} ({at})"),
            None => short.to_string(),
        });
        if frames.len() == 4 {
            break;
        }
    }
    frames.join(" <- ")
}

/// Panics on the VM's threads are recorded (message, location, callers) instead of printed; the
/// rest go to the default hook.
fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() != Some("bloatlens-vm") {
            return default(info);
        }
        let message = payload_text(info.payload());
        let location = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        // A backtrace only for the first panic at each place: resolving one is slow.
        let via = {
            let mut traced = TRACED.lock().unwrap_or_else(|e| e.into_inner());
            match traced.iter().find(|(l, _)| *l == location) {
                Some((_, via)) => via.clone(),
                None => {
                    let via = our_frames(&std::backtrace::Backtrace::force_capture().to_string());
                    traced.push((location.clone(), via.clone()));
                    via
                }
            }
        };
        PANICS.lock().unwrap_or_else(|e| e.into_inner()).push(Seen { message, location, via });
    }));
}

/// The panic the hook saw with this message (taken out of the record).
fn take_panic(message: &str) -> Seen {
    let mut panics = PANICS.lock().unwrap_or_else(|e| e.into_inner());
    match panics.iter().position(|p| p.message == message) {
        Some(i) => panics.remove(i),
        None => Seen { message: message.into(), location: "?".into(), via: String::new() },
    }
}

/// Digits folded, so that messages differing only in numbers group together.
fn shape(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        if ch.is_ascii_digit() {
            if !out.ends_with('N') {
                out.push('N');
            }
        } else {
            out.push(ch);
        }
    }
    out.chars().take(160).collect()
}

/// What a Java exception's description names: its class.
fn exception_class(line: &str) -> String {
    line.split(':').next().unwrap_or(line).trim().to_string()
}

fn from_exception(class: String) -> (Ended, String) {
    let ended = match class.as_str() {
        "java.lang.VerifyError" => Ended::VerifyError,
        "java.lang.ClassFormatError" => Ended::ClassFormatError,
        _ => Ended::OtherException,
    };
    (ended, class)
}

/// [`classify`], and the run's outcome and the start of its stderr as they were.
fn classify_raw(result: Result<RunResult, VmError>) -> (Ended, String, Option<Seen>, String) {
    let raw = match &result {
        Ok(r) => {
            let stderr = String::from_utf8_lossy(&r.stderr);
            format!("{:?}\n{}", r.outcome, stderr.lines().take(8).collect::<Vec<_>>().join("\n"))
        }
        Err(e) => format!("{e}"),
    };
    let (ended, reason, panic) = classify(result);
    (ended, reason, panic, raw)
}

/// How a run ended and a short reason (the exception class, the error, or the panic's place).
fn classify(result: Result<RunResult, VmError>) -> (Ended, String, Option<Seen>) {
    let stopped = |e: VmError| -> (Ended, String, Option<Seen>) {
        match e {
            VmError::InstructionBudget(_) | VmError::TimeBudget(_) => (Ended::Budget, "budget".into(), None),
            VmError::BadCode { reason, .. } => (Ended::BadCode, shape(&reason), None),
            VmError::MainClassLinkage { error, .. } => {
                let (ended, class) = from_exception(exception_class(&error));
                (ended, format!("{class} (loading the main class)"), None)
            }
            e => (Ended::OtherVmError, shape(&e.to_string()), None),
        }
    };
    match result {
        Err(VmError::Internal(m)) if m.starts_with(CRASHED) => {
            let seen = take_panic(&m[CRASHED.len()..]);
            (Ended::Panic, format!("{}: {}", seen.location, shape(&seen.message)), Some(seen))
        }
        Err(e) => stopped(e),
        Ok(r) => match r.outcome {
            Outcome::Exited(_) => (Ended::Ran, "ran".into(), None),
            Outcome::UncaughtException(line) => {
                let (ended, class) = from_exception(exception_class(&line));
                (ended, class, None)
            }
            Outcome::Stopped(e) => stopped(e),
        },
    }
}

struct CaseResult {
    ended: Ended,
    reason: String,
    panic: Option<Seen>,
    took: Duration,
    /// The outcome and stderr as they were.
    raw: String,
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number")))
}

#[test]
fn mutated_bytecode_never_panics_the_vm() {
    let started = Instant::now();
    let full = std::env::var("BLOATLENS_SUITE").as_deref() == Ok("full");
    let default = if full { FULL_CASES } else { DEFAULT_CASES };
    let count = env_number("BLOATLENS_FUZZ_CASES").map_or(default, |n| n as usize);
    let seed = env_number("BLOATLENS_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let only = env_number("BLOATLENS_FUZZ_CASE").map(|n| n as usize);
    let threads = env_number("BLOATLENS_FUZZ_THREADS")
        .map(|n| n as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get().min(4)))
        .max(1);

    let tmp = tempfile::tempdir().unwrap();
    let programs = compile_all(tmp.path());
    let setup = started.elapsed();
    let mut cases = generate(&programs, count.max(only.map_or(0, |n| n + 1)), seed);
    if let Some(n) = only {
        cases.retain(|c| c.id == n);
    }
    install_panic_hook();

    // Workers take cases in turn; this thread watches them. A worker whose run outlives every
    // budget is abandoned (it cannot be stopped) and replaced, a few times at most.
    let shared = Arc::new(Shared {
        cases,
        programs,
        root: tmp.path().to_path_buf(),
        next: AtomicUsize::new(0),
        running: Mutex::new(Vec::new()),
        results: Mutex::new(Vec::new()),
    });
    shared.results.lock().unwrap().resize_with(shared.cases.len(), || None);
    for _ in 0..threads {
        start_worker(&shared);
    }
    let mut hung = 0;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        // Done, or no worker left (one that panics loses its case: a bug of this test).
        if shared.results.lock().unwrap().iter().all(Option::is_some) || Arc::strong_count(&shared) == 1 {
            break;
        }
        // A run still going long after its budgets: its worker is given up (it cannot be stopped).
        let stuck: Vec<(usize, Duration)> = shared
            .running
            .lock()
            .unwrap()
            .iter_mut()
            .filter_map(|slot| {
                let (i, since) = (*slot)?;
                (since.elapsed() > HANG).then(|| {
                    *slot = None;
                    (i, since.elapsed())
                })
            })
            .collect();
        for (i, took) in stuck {
            hung += 1;
            let result = CaseResult {
                ended: Ended::Hang,
                reason: "no budget stopped the run".into(),
                panic: None,
                took,
                raw: String::new(),
            };
            shared.results.lock().unwrap()[i] = Some(result);
            if hung <= MAX_HANGS {
                start_worker(&shared);
            }
        }
        if hung > MAX_HANGS {
            // Stop handing out cases; those not run are left out of the summary.
            shared.next.store(usize::MAX / 2, Ordering::Relaxed);
            if shared.running.lock().unwrap().iter().all(Option::is_none) {
                break;
            }
        }
    }
    let results: Vec<Option<CaseResult>> = std::mem::take(&mut *shared.results.lock().unwrap());
    let (cases, results): (Vec<&Case>, Vec<CaseResult>) =
        shared.cases.iter().zip(results).filter_map(|(c, r)| Some((c, r?))).unzip();
    let programs = &shared.programs;
    let not_run = shared.cases.len() - cases.len();

    // The summary: kind × ending, then the most frequent reasons of each ending.
    let mut table: BTreeMap<(Kind, Ended), usize> = BTreeMap::new();
    // (how many, of which kinds, the first case)
    let mut reasons: BTreeMap<(Ended, String), (usize, HashSet<Kind>, usize)> = BTreeMap::new();
    for (case, r) in cases.iter().zip(&results) {
        *table.entry((case.kind, r.ended)).or_default() += 1;
        let e = reasons.entry((r.ended, r.reason.clone())).or_insert((0, HashSet::new(), case.id));
        e.0 += 1;
        e.1.insert(case.kind);
    }
    let mut out = format!(
        "\nbytecode fuzz: {} cases ({not_run} not run), seed {seed:#x}, {threads} threads, {:.1?} \
         (compiling and baselines {:.1?})\n{:<18}",
        cases.len(),
        started.elapsed(),
        setup,
        "kind"
    );
    for e in ENDINGS {
        out += &format!("{:>17}", e.name());
    }
    out += &format!("{:>8}\n", "total");
    for k in KINDS {
        out += &format!("{:<18}", k.name());
        for e in ENDINGS {
            out += &format!("{:>17}", table.get(&(k, e)).copied().unwrap_or(0));
        }
        out += &format!("{:>8}\n", cases.iter().filter(|c| c.kind == k).count());
    }
    for e in ENDINGS.into_iter().filter(|&e| e != Ended::Ran) {
        let mut top: Vec<_> = reasons.iter().filter(|((ended, _), _)| *ended == e).collect();
        if top.is_empty() {
            continue;
        }
        top.sort_by_key(|(_, (n, _, _))| std::cmp::Reverse(*n));
        out += &format!("{}:\n", e.name());
        let failure = matches!(e, Ended::Panic | Ended::Hang);
        for ((_, reason), (n, kinds, first)) in top.iter().take(if failure { 30 } else { 8 }) {
            let mut kinds: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
            kinds.sort();
            let example = if failure { format!(", e.g. case {first}") } else { String::new() };
            out += &format!("  {n:>5}  {reason}  [{}{example}]\n", kinds.join(", "));
        }
    }
    let mut slowest: Vec<(&Case, &CaseResult)> = cases.iter().copied().zip(&results).collect();
    slowest.sort_by_key(|(_, r)| std::cmp::Reverse(r.took));
    out += "slowest:\n";
    for (c, r) in slowest.iter().take(5) {
        out += &format!("  {:>6.2?}  {}  {}\n", r.took, r.ended.name(), c.describe(programs));
    }
    eprintln!("{out}");

    let panics: Vec<String> = cases
        .iter()
        .zip(&results)
        .filter_map(|(c, r)| {
            let seen = r.panic.as_ref()?;
            Some(format!(
                "{}\n      panicked at {}: {}\n      via {}",
                c.describe(programs),
                seen.location,
                seen.message,
                seen.via
            ))
        })
        .collect();
    let hangs: Vec<String> = cases
        .iter()
        .zip(&results)
        .filter(|(_, r)| r.ended == Ended::Hang)
        .map(|(c, r)| {
            format!("{}\n      still running after {:.0?}: no budget check stops it", c.describe(programs), r.took)
        })
        .collect();
    if only.is_some() {
        for (c, r) in cases.iter().zip(&results) {
            eprintln!("{}\n  ended: {} ({})\n  {}", c.describe(programs), r.ended.name(), r.reason, r.raw);
        }
    } else if hung <= MAX_HANGS {
        assert_eq!(not_run, 0, "cases were lost: a worker of this test failed");
        // Every kind was generated, and reached the VM: some of its mutations changed how a
        // program ended (all but a few do once the verifier refuses them).
        for k in KINDS {
            let of_kind: Vec<&CaseResult> =
                cases.iter().zip(&results).filter(|(c, _)| c.kind == k).map(|(_, r)| r).collect();
            let n = of_kind.len();
            assert!(
                n >= count / KINDS.len() * 9 / 10,
                "only {n} of the {count} cases are {} mutations: the generator lost a kind",
                k.name()
            );
            let changed = of_kind.iter().filter(|r| r.ended != Ended::Ran).count();
            assert!(
                n < 50 || changed * 20 >= n,
                "only {changed} of {n} {} mutations changed how a program ended: they do not reach the VM",
                k.name()
            );
        }
    }
    let failures: Vec<&String> = panics.iter().chain(&hangs).collect();
    assert!(
        failures.is_empty(),
        "of {} mutated programs, {} panicked the VM and {} hung it{} (rerun one with BLOATLENS_FUZZ_CASE=N); \
         the first {}:\n{}",
        cases.len(),
        panics.len(),
        hangs.len(),
        if not_run > 0 { format!(" ({not_run} cases not run after {hung} hangs)") } else { String::new() },
        failures.len().min(20),
        failures.iter().take(20).map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
    );
}

/// Mutations of a constant pool that HotSpot refuses while loading the class: the VM refuses the
/// class as well, in HotSpot's words, where a class that still loads would fail only at the
/// instruction that uses the entry (an internal error, or a different exception).
#[test]
fn constant_pool_mutants_are_refused_as_hotspot_refuses_them() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/conformance/strings/Main.java");
    let compiled = std::process::Command::new("javac")
        .args(["-g", "-nowarn", "-d"])
        .arg(tmp.path().join("original"))
        .arg(&src)
        .output()
        .expect("javac (a JDK) on PATH");
    assert!(compiled.status.success(), "javac: {}", String::from_utf8_lossy(&compiled.stderr));
    let original = std::fs::read(tmp.path().join("original/Main.class")).unwrap();
    let info = walk_class(&original).unwrap();
    let first = |tag: u8| info.tags.iter().position(|&t| t == tag).unwrap_or_else(|| panic!("no entry of tag {tag}"));
    let (indy, method_ref, utf8) = (first(18), first(10), first(1));
    let at = |i: usize| info.offsets[i];
    // (what, offset of a u2 to overwrite, its new value)
    let mutants: [(&str, usize, u16); 4] = [
        ("an InvokeDynamic's bootstrap index past the BootstrapMethods attribute", at(indy) + 1, 0x7fff),
        ("an InvokeDynamic's NameAndType index naming a Utf8", at(indy) + 3, utf8 as u16),
        ("a Methodref's NameAndType index naming a Methodref", at(method_ref) + 3, method_ref as u16),
        ("a Methodref's class index naming a Utf8", at(method_ref) + 1, utf8 as u16),
    ];
    let mut failures = Vec::new();
    for (i, (what, offset, value)) in mutants.into_iter().enumerate() {
        let dir = tmp.path().join(format!("mutant{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut bytes = original.clone();
        put_u2(&mut bytes, offset, value);
        std::fs::write(dir.join("Main.class"), &bytes).unwrap();
        let java = std::process::Command::new("java").arg("-cp").arg(&dir).arg("Main").output().expect("java on PATH");
        let stderr = String::from_utf8_lossy(&java.stderr);
        let Some(hotspot) = stderr.lines().map(str::trim).find(|l| l.starts_with("java.lang.ClassFormatError")) else {
            failures.push(format!("{what}: HotSpot did not refuse the class: {stderr}"));
            continue;
        };
        match run(&config(&dir, 1 << 40)).map(|r| r.outcome) {
            Ok(Outcome::Stopped(VmError::MainClassLinkage { error, .. })) if error.trim() == hotspot => {}
            other => failures.push(format!("{what}:\n  java:      {hotspot}\n  bloatlens: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
