//! The pre-decoded instruction form the interpreter runs. Bytecode is decoded once per method:
//! branch targets become op indices, the `<t>load_<n>` families fold into one op with an operand,
//! and constant-pool references start as `*Cp` ops that the first execution rewrites in place
//! (quickening) into ops that carry resolved slots, method ids and class ids.

use super::class::{ClassId, MethodId};
use super::heap::Ref;

/// Index into the thread's slot stack of a local variable, relative to the frame's locals base.
pub type Local = u16;
/// An op index inside a method's decoded code.
pub type Target = u32;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Nop,
    AconstNull,
    Iconst(i32),
    Lconst(i64),
    Fconst(f32),
    Dconst(f64),
    /// `ldc` of an int/float/string/class/method-type constant, not yet resolved.
    LdcCp(u16),
    /// `ldc2_w`: long or double.
    Ldc2Cp(u16),
    /// A resolved reference constant (an interned string or a class mirror; both are GC roots).
    LdcRef(u32),

    Load(Local),
    Load2(Local),
    Store(Local),
    Store2(Local),
    Iinc(Local, i32),

    Iaload,
    Laload,
    Faload,
    Daload,
    Aaload,
    Baload,
    Caload,
    Saload,
    Iastore,
    Lastore,
    Fastore,
    Dastore,
    Aastore,
    Bastore,
    Castore,
    Sastore,

    Pop,
    Pop2,
    Dup,
    DupX1,
    DupX2,
    Dup2,
    Dup2X1,
    Dup2X2,
    Swap,

    Iadd,
    Ladd,
    Fadd,
    Dadd,
    Isub,
    Lsub,
    Fsub,
    Dsub,
    Imul,
    Lmul,
    Fmul,
    Dmul,
    Idiv,
    Ldiv,
    Fdiv,
    Ddiv,
    Irem,
    Lrem,
    Frem,
    Drem,
    Ineg,
    Lneg,
    Fneg,
    Dneg,
    Ishl,
    Lshl,
    Ishr,
    Lshr,
    Iushr,
    Lushr,
    Iand,
    Land,
    Ior,
    Lor,
    Ixor,
    Lxor,

    I2l,
    I2f,
    I2d,
    L2i,
    L2f,
    L2d,
    F2i,
    F2l,
    F2d,
    D2i,
    D2l,
    D2f,
    I2b,
    I2c,
    I2s,

    Lcmp,
    Fcmpl,
    Fcmpg,
    Dcmpl,
    Dcmpg,

    Ifeq(Target),
    Ifne(Target),
    Iflt(Target),
    Ifge(Target),
    Ifgt(Target),
    Ifle(Target),
    IfIcmpeq(Target),
    IfIcmpne(Target),
    IfIcmplt(Target),
    IfIcmpge(Target),
    IfIcmpgt(Target),
    IfIcmple(Target),
    IfAcmpeq(Target),
    IfAcmpne(Target),
    IfNull(Target),
    IfNonNull(Target),
    Goto(Target),
    /// Index into the method's switch tables.
    TableSwitch(u32),
    LookupSwitch(u32),

    Ireturn,
    /// `ireturn` in a method returning boolean, byte, char or short: the value narrowed to that
    /// type, as HotSpot's interpreter does (the verifier lets any int through).
    IreturnNarrow(Narrow),
    Lreturn,
    Return,

    GetStaticCp(u16),
    PutStaticCp(u16),
    GetFieldCp(u16),
    PutFieldCp(u16),
    /// Static slots are global indices into the VM's statics table.
    GetStatic(u32),
    GetStatic2(u32),
    PutStatic(u32),
    PutStatic2(u32),
    GetField(u32),
    GetField2(u32),
    PutField(u32),
    PutField2(u32),
    /// A boolean, byte, char or short field: stores narrow to its type, as HotSpot does.
    PutFieldNarrow(u32, Narrow),
    PutStaticNarrow(u32, Narrow),

    InvokeVirtualCp(u16),
    InvokeSpecialCp(u16),
    InvokeStaticCp(u16),
    InvokeInterfaceCp(u16),
    InvokeDynamicCp(u16),
    /// Dispatch through the receiver class's vtable.
    InvokeVirtual {
        vindex: u32,
        args: u16,
    },
    /// A signature-polymorphic call on a `VarHandle` (see varhandle.rs).
    InvokeVarHandle {
        op: u8,
        args: u16,
        ret_slots: u8,
    },
    /// `MethodHandle.invokeBasic`: calls the entry of the handle's lambda form (see method_handles.rs).
    InvokeBasic {
        args: u16,
    },
    /// `MethodHandle.linkTo*`: calls the method of the trailing `MemberName`, selected as `dispatch` says.
    LinkTo {
        dispatch: u8,
        args: u16,
    },
    /// A linked `invokeExact`/`invoke`/`invokedynamic`: calls the invoker with `appendix` after the arguments.
    InvokeHandle {
        invoker: MethodId,
        appendix: Ref,
        args: u16,
    },
    /// A call whose target is known: static (class initialised), private, final, `super.` and `<init>`.
    InvokeDirect {
        method: MethodId,
        args: u16,
    },
    /// Like `InvokeDirect`, with a null check on the receiver.
    InvokeDirectNonNull {
        method: MethodId,
        args: u16,
    },
    /// Dispatch by signature through the receiver class's method table, once the receiver's class
    /// is known to implement `iface` (the verifier lets any object through to an interface call).
    InvokeInterface {
        sig: u32,
        args: u16,
        iface: ClassId,
    },

    NewCp(u16),
    New(ClassId),
    NewArray(u8),
    ANewArrayCp(u16),
    ANewArray(ClassId),
    MultiANewArrayCp(u16, u8),
    ArrayLength,
    Athrow,
    CheckCastCp(u16),
    CheckCast(ClassId),
    InstanceOfCp(u16),
    InstanceOf(ClassId),
    MonitorEnter,
    MonitorExit,
    // Superinstructions. Each stands in the slot of the first op of the sequence it fuses, and the
    // ops it covers stay in place behind it (a branch into them still runs them one by one).
    /// `load a; load b` (one-slot locals).
    LoadLoad(Local, Local),
    /// `load a; iconst c`.
    LoadConst(Local, i32),
    /// `load a; load b; if_icmp<cond> target`.
    IfCmpLocals {
        a: Local,
        b: Local,
        cond: Cond,
        target: Target,
    },
    /// `load a; iconst c; if_icmp<cond> target`.
    IfCmpConst {
        a: Local,
        cond: Cond,
        c: i32,
        target: Target,
    },
    /// `iinc n d; goto target`.
    IincGoto {
        local: Local,
        delta: i16,
        target: Target,
    },
    /// `aload a; getfield slot` (one-slot field).
    LoadGetField {
        local: Local,
        slot: u32,
    },
    /// `aload a; getfield slot` (long or double field).
    LoadGetField2 {
        local: Local,
        slot: u32,
    },

    /// `jsr`/`jsr_w` (class files before version 50): pushes the return address (`next`, an op
    /// index) and jumps to the subroutine.
    Jsr {
        target: Target,
        next: Target,
    },
    /// `ret`: jumps to the return address in this local.
    Ret(Local),
    /// An opcode this VM does not run, with the opcode.
    Unsupported(u8),
}

/// A type narrower than int, which an int stored or returned as that type is narrowed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Narrow {
    /// boolean: the low bit.
    Z,
    /// byte: the low 8 bits, sign-extended.
    B,
    /// char: the low 16 bits.
    C,
    /// short: the low 16 bits, sign-extended.
    S,
}

impl Narrow {
    /// The narrowing for values of this field or return type, if it is narrower than int.
    pub fn of(kind: crate::classfile::descriptor::Kind) -> Option<Narrow> {
        use crate::classfile::descriptor::Kind;
        Some(match kind {
            Kind::Boolean => Narrow::Z,
            Kind::Byte => Narrow::B,
            Kind::Char => Narrow::C,
            Kind::Short => Narrow::S,
            _ => return None,
        })
    }

    /// Narrows an int slot (an `i32` zero-extended into the slot, as the interpreter keeps ints).
    #[inline(always)]
    pub fn apply(self, slot: u64) -> u64 {
        let v = slot as i32;
        (match self {
            Narrow::Z => v & 1,
            Narrow::B => v as i8 as i32,
            Narrow::C => v as u16 as i32,
            Narrow::S => v as i16 as i32,
        }) as u32 as u64
    }

    /// The bytes a value of this type takes in a heap object.
    pub fn bytes(self) -> u8 {
        match self {
            Narrow::Z | Narrow::B => 1,
            Narrow::C | Narrow::S => 2,
        }
    }
}

/// The condition of a fused integer compare-and-branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    Eq,
    Ne,
    Lt,
    Ge,
    Gt,
    Le,
}

impl Cond {
    #[inline(always)]
    pub fn holds(self, a: i32, b: i32) -> bool {
        match self {
            Cond::Eq => a == b,
            Cond::Ne => a != b,
            Cond::Lt => a < b,
            Cond::Ge => a >= b,
            Cond::Gt => a > b,
            Cond::Le => a <= b,
        }
    }

    /// The condition of an `if_icmp<cond>` op.
    pub fn of_icmp(op: &Op) -> Option<(Cond, Target)> {
        Some(match *op {
            Op::IfIcmpeq(t) => (Cond::Eq, t),
            Op::IfIcmpne(t) => (Cond::Ne, t),
            Op::IfIcmplt(t) => (Cond::Lt, t),
            Op::IfIcmpge(t) => (Cond::Ge, t),
            Op::IfIcmpgt(t) => (Cond::Gt, t),
            Op::IfIcmple(t) => (Cond::Le, t),
            _ => return None,
        })
    }
}

/// Rewrites `ops[i]` into a superinstruction where the ops from `i` on form a known sequence.
/// Judged on the original ops only, so every position can be fused independently.
pub fn fuse(ops: &[Op]) -> Vec<Op> {
    let mut out = ops.to_vec();
    for i in 0..ops.len() {
        let next = |k: usize| ops.get(i + k).copied();
        out[i] = match (ops[i], next(1), next(2)) {
            (Op::Load(a), Some(Op::Load(b)), Some(third)) if Cond::of_icmp(&third).is_some() => {
                let (cond, target) = Cond::of_icmp(&third).expect("checked");
                Op::IfCmpLocals { a, b, cond, target }
            }
            (Op::Load(a), Some(Op::Iconst(c)), Some(third)) if Cond::of_icmp(&third).is_some() => {
                let (cond, target) = Cond::of_icmp(&third).expect("checked");
                Op::IfCmpConst { a, cond, c, target }
            }
            (Op::Load(a), Some(Op::Load(b)), _) => Op::LoadLoad(a, b),
            (Op::Load(a), Some(Op::Iconst(c)), _) => Op::LoadConst(a, c),
            (Op::Iinc(local, d), Some(Op::Goto(target)), _) if i16::try_from(d).is_ok() => {
                Op::IincGoto { local, delta: d as i16, target }
            }
            (op, _, _) => op,
        };
    }
    out
}

#[derive(Debug, Clone)]
pub struct TableSwitch {
    pub low: i32,
    pub default: Target,
    pub targets: Box<[Target]>,
}

#[derive(Debug, Clone)]
pub struct LookupSwitch {
    pub default: Target,
    /// Sorted by key (the class file requires it; the decoder sorts anyway).
    pub pairs: Box<[(i32, Target)]>,
}

#[cfg(test)]
mod size {
    #[test]
    fn ops_stay_small() {
        assert!(std::mem::size_of::<super::Op>() <= 16);
    }
}
