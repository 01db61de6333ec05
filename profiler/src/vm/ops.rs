//! The pre-decoded instruction form the interpreter runs. Bytecode is decoded once per method:
//! branch targets become op indices, the `<t>load_<n>` families fold into one op with an operand,
//! and constant-pool references start as `*Cp` ops that the first execution rewrites in place
//! (quickening) into ops that carry resolved slots, method ids and class ids.

use super::class::{ClassId, MethodId};

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
    /// A boolean field: stores narrow to the low bit, as HotSpot does.
    PutFieldZ(u32),

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
    /// Dispatch by signature through the receiver class's method table.
    InvokeInterface {
        sig: u32,
        args: u16,
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
    /// An opcode this VM does not run (`jsr`/`ret` from pre-Java-6 class files), with the opcode.
    Unsupported(u8),
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
