//! Bytecode → [`Op`]s, once per method, on its first call. One op per instruction, so an op
//! index maps back to a bytecode index through `Code::bci` (for line numbers and handlers).

use super::ops::{LookupSwitch, Op, TableSwitch, Target};
use crate::classfile;
use std::cell::Cell;

/// A method's decoded code. Ops sit in `Cell`s so that quickening can rewrite them while the
/// method is running (the VM is single-threaded; a `Cell` write is a plain store).
#[derive(Debug)]
pub struct Code {
    pub ops: Box<[Cell<Op>]>,
    /// Bytecode index of each op.
    pub bci: Box<[u16]>,
    pub handlers: Box<[Handler]>,
    pub table_switches: Box<[TableSwitch]>,
    pub lookup_switches: Box<[LookupSwitch]>,
    pub max_locals: u16,
    pub max_stack: u16,
}

#[derive(Debug, Clone)]
pub struct Handler {
    pub start: Target,
    pub end: Target,
    pub handler: Target,
    /// Constant-pool index of the caught class; 0 catches everything.
    pub catch_type: u16,
}

#[derive(Debug, thiserror::Error)]
#[error("bad bytecode at index {bci}: {reason}")]
pub struct DecodeError {
    pub bci: usize,
    pub reason: String,
}

struct Bytes<'a> {
    b: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn get(&self, i: usize) -> Result<u8, DecodeError> {
        self.b
            .get(i)
            .copied()
            .ok_or(DecodeError { bci: self.at, reason: "instruction runs past the end of the code".into() })
    }
    fn u2(&self, i: usize) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes([self.get(i)?, self.get(i + 1)?]))
    }
    fn i4(&self, i: usize) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes([self.get(i)?, self.get(i + 1)?, self.get(i + 2)?, self.get(i + 3)?]))
    }
}

/// Length in bytes of the instruction at `pc` of `code` (the verifier walks code with it too).
pub fn instruction_length(code: &[u8], pc: usize) -> Result<usize, DecodeError> {
    instruction_len(&Bytes { b: code, at: pc }, pc)
}

fn instruction_len(b: &Bytes, pc: usize) -> Result<usize, DecodeError> {
    let op = b.get(pc)?;
    Ok(match op {
        0x10 | 0x12 | 0x15..=0x19 | 0x36..=0x3a | 0xa9 | 0xbc => 2,
        0x11 | 0x13 | 0x14 | 0x84 | 0x99..=0xa8 | 0xb2..=0xb8 | 0xbb | 0xbd | 0xc0 | 0xc1 | 0xc6 | 0xc7 => 3,
        0xc5 => 4,
        0xb9 | 0xba | 0xc8 | 0xc9 => 5,
        0xaa => {
            let p = (pc + 4) & !3;
            let low = b.i4(p + 4)?;
            let high = b.i4(p + 8)?;
            if high < low {
                return Err(DecodeError { bci: pc, reason: "tableswitch with high < low".into() });
            }
            p + 12 + 4 * ((high as i64 - low as i64 + 1) as usize) - pc
        }
        0xab => {
            let p = (pc + 4) & !3;
            let n = b.i4(p + 4)?;
            if n < 0 {
                return Err(DecodeError { bci: pc, reason: "lookupswitch with a negative count".into() });
            }
            p + 8 + 8 * n as usize - pc
        }
        0xc4 => {
            if b.get(pc + 1)? == 0x84 {
                6
            } else {
                4
            }
        }
        0x00..=0x0f | 0x1a..=0x35 | 0x3b..=0x83 | 0x85..=0x98 | 0xac..=0xb1 | 0xbe | 0xbf | 0xc2 | 0xc3 => 1,
        _ => return Err(DecodeError { bci: pc, reason: format!("unknown opcode {op:#04x}") }),
    })
}

pub fn decode(code: &classfile::Code) -> Result<Code, DecodeError> {
    let bytes = &code.bytecode;
    // Pass 1: instruction starts.
    let mut op_index = vec![u32::MAX; bytes.len() + 1];
    let mut starts = Vec::new();
    let mut pc = 0;
    while pc < bytes.len() {
        op_index[pc] = starts.len() as u32;
        starts.push(pc);
        pc += instruction_len(&Bytes { b: bytes, at: pc }, pc)?;
    }
    op_index[bytes.len()] = starts.len() as u32;
    let target = |from: usize, off: i64| -> Result<Target, DecodeError> {
        let t = from as i64 + off;
        if t < 0 || t as usize >= bytes.len() || op_index[t as usize] == u32::MAX {
            return Err(DecodeError { bci: from, reason: format!("branch to {t}, which is not an instruction") });
        }
        Ok(op_index[t as usize])
    };
    let mut ops = Vec::with_capacity(starts.len());
    let mut table_switches = Vec::new();
    let mut lookup_switches = Vec::new();
    // Pass 2: translate.
    for &pc in &starts {
        let b = Bytes { b: bytes, at: pc };
        let opcode = b.get(pc)?;
        let u1 = || b.get(pc + 1);
        let cp = || b.u2(pc + 1);
        let branch = || -> Result<Target, DecodeError> { target(pc, b.u2(pc + 1)? as i16 as i64) };
        let op = match opcode {
            0x00 => Op::Nop,
            0x01 => Op::AconstNull,
            0x02..=0x08 => Op::Iconst(opcode as i32 - 3),
            0x09 | 0x0a => Op::Lconst(opcode as i64 - 9),
            0x0b..=0x0d => Op::Fconst((opcode - 0x0b) as f32),
            0x0e | 0x0f => Op::Dconst((opcode - 0x0e) as f64),
            0x10 => Op::Iconst(u1()? as i8 as i32),
            0x11 => Op::Iconst(cp()? as i16 as i32),
            0x12 => Op::LdcCp(u1()? as u16),
            0x13 => Op::LdcCp(cp()?),
            0x14 => Op::Ldc2Cp(cp()?),
            0x15 | 0x17 | 0x19 => Op::Load(u1()? as u16),
            0x16 | 0x18 => Op::Load2(u1()? as u16),
            0x1a..=0x1d => Op::Load((opcode - 0x1a) as u16),
            0x1e..=0x21 => Op::Load2((opcode - 0x1e) as u16),
            0x22..=0x25 => Op::Load((opcode - 0x22) as u16),
            0x26..=0x29 => Op::Load2((opcode - 0x26) as u16),
            0x2a..=0x2d => Op::Load((opcode - 0x2a) as u16),
            0x2e => Op::Iaload,
            0x2f => Op::Laload,
            0x30 => Op::Faload,
            0x31 => Op::Daload,
            0x32 => Op::Aaload,
            0x33 => Op::Baload,
            0x34 => Op::Caload,
            0x35 => Op::Saload,
            0x36 | 0x38 | 0x3a => Op::Store(u1()? as u16),
            0x37 | 0x39 => Op::Store2(u1()? as u16),
            0x3b..=0x3e => Op::Store((opcode - 0x3b) as u16),
            0x3f..=0x42 => Op::Store2((opcode - 0x3f) as u16),
            0x43..=0x46 => Op::Store((opcode - 0x43) as u16),
            0x47..=0x4a => Op::Store2((opcode - 0x47) as u16),
            0x4b..=0x4e => Op::Store((opcode - 0x4b) as u16),
            0x4f => Op::Iastore,
            0x50 => Op::Lastore,
            0x51 => Op::Fastore,
            0x52 => Op::Dastore,
            0x53 => Op::Aastore,
            0x54 => Op::Bastore,
            0x55 => Op::Castore,
            0x56 => Op::Sastore,
            0x57 => Op::Pop,
            0x58 => Op::Pop2,
            0x59 => Op::Dup,
            0x5a => Op::DupX1,
            0x5b => Op::DupX2,
            0x5c => Op::Dup2,
            0x5d => Op::Dup2X1,
            0x5e => Op::Dup2X2,
            0x5f => Op::Swap,
            0x60 => Op::Iadd,
            0x61 => Op::Ladd,
            0x62 => Op::Fadd,
            0x63 => Op::Dadd,
            0x64 => Op::Isub,
            0x65 => Op::Lsub,
            0x66 => Op::Fsub,
            0x67 => Op::Dsub,
            0x68 => Op::Imul,
            0x69 => Op::Lmul,
            0x6a => Op::Fmul,
            0x6b => Op::Dmul,
            0x6c => Op::Idiv,
            0x6d => Op::Ldiv,
            0x6e => Op::Fdiv,
            0x6f => Op::Ddiv,
            0x70 => Op::Irem,
            0x71 => Op::Lrem,
            0x72 => Op::Frem,
            0x73 => Op::Drem,
            0x74 => Op::Ineg,
            0x75 => Op::Lneg,
            0x76 => Op::Fneg,
            0x77 => Op::Dneg,
            0x78 => Op::Ishl,
            0x79 => Op::Lshl,
            0x7a => Op::Ishr,
            0x7b => Op::Lshr,
            0x7c => Op::Iushr,
            0x7d => Op::Lushr,
            0x7e => Op::Iand,
            0x7f => Op::Land,
            0x80 => Op::Ior,
            0x81 => Op::Lor,
            0x82 => Op::Ixor,
            0x83 => Op::Lxor,
            0x84 => Op::Iinc(u1()? as u16, b.get(pc + 2)? as i8 as i32),
            0x85 => Op::I2l,
            0x86 => Op::I2f,
            0x87 => Op::I2d,
            0x88 => Op::L2i,
            0x89 => Op::L2f,
            0x8a => Op::L2d,
            0x8b => Op::F2i,
            0x8c => Op::F2l,
            0x8d => Op::F2d,
            0x8e => Op::D2i,
            0x8f => Op::D2l,
            0x90 => Op::D2f,
            0x91 => Op::I2b,
            0x92 => Op::I2c,
            0x93 => Op::I2s,
            0x94 => Op::Lcmp,
            0x95 => Op::Fcmpl,
            0x96 => Op::Fcmpg,
            0x97 => Op::Dcmpl,
            0x98 => Op::Dcmpg,
            0x99 => Op::Ifeq(branch()?),
            0x9a => Op::Ifne(branch()?),
            0x9b => Op::Iflt(branch()?),
            0x9c => Op::Ifge(branch()?),
            0x9d => Op::Ifgt(branch()?),
            0x9e => Op::Ifle(branch()?),
            0x9f => Op::IfIcmpeq(branch()?),
            0xa0 => Op::IfIcmpne(branch()?),
            0xa1 => Op::IfIcmplt(branch()?),
            0xa2 => Op::IfIcmpge(branch()?),
            0xa3 => Op::IfIcmpgt(branch()?),
            0xa4 => Op::IfIcmple(branch()?),
            0xa5 => Op::IfAcmpeq(branch()?),
            0xa6 => Op::IfAcmpne(branch()?),
            0xa7 => Op::Goto(branch()?),
            0xa8 => Op::Jsr { target: branch()?, next: target(pc, 3)? },
            0xa9 => Op::Ret(u1()? as u16),
            0xaa => {
                let p = (pc + 4) & !3;
                let default = target(pc, b.i4(p)? as i64)?;
                let low = b.i4(p + 4)?;
                let high = b.i4(p + 8)?;
                let mut targets = Vec::with_capacity((high as i64 - low as i64 + 1) as usize);
                for i in 0..(high as i64 - low as i64 + 1) as usize {
                    targets.push(target(pc, b.i4(p + 12 + 4 * i)? as i64)?);
                }
                table_switches.push(TableSwitch { low, default, targets: targets.into() });
                Op::TableSwitch(table_switches.len() as u32 - 1)
            }
            0xab => {
                let p = (pc + 4) & !3;
                let default = target(pc, b.i4(p)? as i64)?;
                let n = b.i4(p + 4)? as usize;
                let mut pairs = Vec::with_capacity(n);
                for i in 0..n {
                    pairs.push((b.i4(p + 8 + 8 * i)?, target(pc, b.i4(p + 12 + 8 * i)? as i64)?));
                }
                pairs.sort_by_key(|p| p.0);
                lookup_switches.push(LookupSwitch { default, pairs: pairs.into() });
                Op::LookupSwitch(lookup_switches.len() as u32 - 1)
            }
            0xac | 0xae | 0xb0 => Op::Ireturn,
            0xad | 0xaf => Op::Lreturn,
            0xb1 => Op::Return,
            0xb2 => Op::GetStaticCp(cp()?),
            0xb3 => Op::PutStaticCp(cp()?),
            0xb4 => Op::GetFieldCp(cp()?),
            0xb5 => Op::PutFieldCp(cp()?),
            0xb6 => Op::InvokeVirtualCp(cp()?),
            0xb7 => Op::InvokeSpecialCp(cp()?),
            0xb8 => Op::InvokeStaticCp(cp()?),
            0xb9 => Op::InvokeInterfaceCp(cp()?),
            0xba => Op::InvokeDynamicCp(cp()?),
            0xbb => Op::NewCp(cp()?),
            0xbc => Op::NewArray(u1()?),
            0xbd => Op::ANewArrayCp(cp()?),
            0xbe => Op::ArrayLength,
            0xbf => Op::Athrow,
            0xc0 => Op::CheckCastCp(cp()?),
            0xc1 => Op::InstanceOfCp(cp()?),
            0xc2 => Op::MonitorEnter,
            0xc3 => Op::MonitorExit,
            0xc4 => {
                let inner = b.get(pc + 1)?;
                let idx = b.u2(pc + 2)?;
                match inner {
                    0x15 | 0x17 | 0x19 => Op::Load(idx),
                    0x16 | 0x18 => Op::Load2(idx),
                    0x36 | 0x38 | 0x3a => Op::Store(idx),
                    0x37 | 0x39 => Op::Store2(idx),
                    0x84 => Op::Iinc(idx, b.u2(pc + 4)? as i16 as i32),
                    0xa9 => Op::Ret(idx),
                    _ => Op::Unsupported(inner),
                }
            }
            0xc5 => Op::MultiANewArrayCp(cp()?, b.get(pc + 3)?),
            0xc6 => Op::IfNull(branch()?),
            0xc7 => Op::IfNonNull(branch()?),
            0xc8 => Op::Goto(target(pc, b.i4(pc + 1)? as i64)?),
            0xc9 => Op::Jsr { target: target(pc, b.i4(pc + 1)? as i64)?, next: target(pc, 5)? },
            _ => Op::Unsupported(opcode),
        };
        ops.push(op);
    }
    let ops: Vec<Cell<Op>> = super::ops::fuse(&ops).into_iter().map(Cell::new).collect();
    let handlers = code
        .exception_table
        .iter()
        .map(|h| {
            let at = |pc: u16| -> Result<Target, DecodeError> {
                match op_index.get(pc as usize) {
                    Some(&i) if i != u32::MAX => Ok(i),
                    _ => Err(DecodeError {
                        bci: pc as usize,
                        reason: "exception handler boundary inside an instruction".into(),
                    }),
                }
            };
            Ok(Handler {
                start: at(h.start_pc)?,
                end: at(h.end_pc)?,
                handler: at(h.handler_pc)?,
                catch_type: h.catch_type,
            })
        })
        .collect::<Result<Vec<_>, DecodeError>>()?;
    Ok(Code {
        ops: ops.into(),
        bci: starts.iter().map(|&p| p as u16).collect(),
        handlers: handlers.into(),
        table_switches: table_switches.into(),
        lookup_switches: lookup_switches.into(),
        max_locals: code.max_locals,
        max_stack: code.max_stack,
    })
}
