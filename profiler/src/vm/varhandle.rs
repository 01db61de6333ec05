//! Calls through `VarHandle`s (`get`, `set`, `compareAndSet`, `getAndAdd`, …), which javac emits
//! as signature-polymorphic invokes. The JDK's own code builds the handle objects (see
//! natives/invoke.rs); the VM links each call site to [`Op::InvokeVarHandle`] and performs the
//! access here for the handles of fields, array elements and byte-array views, reading the handle's
//! offsets and going through the same memory access as Unsafe. One thread runs at a time, so every
//! access mode (plain, opaque, acquire/release, volatile) is the same operation. Any other handle
//! (memory segments' and byte buffers' views, handles adapted by `MethodHandles`' var-handle
//! combinators) is called as HotSpot calls every one: through the invoker the JDK links for the
//! site's access mode and type (`MethodHandleNatives.linkMethod`), which runs the handle's own
//! Java code.

use super::heap::Ref;
use super::natives::memory::{read, to_slot, width, STATIC_TAG};
use super::ops::Op;
use super::{Fault, JThread, Tracker, Vm, VmError, VmResult};
use crate::classfile::descriptor::MethodDescriptor;

/// The operation of an access mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum VhOp {
    Get,
    Set,
    CompareAndSet,
    CompareAndExchange,
    GetAndSet,
    GetAndAdd,
    GetAndOr,
    GetAndAnd,
    GetAndXor,
}

impl VhOp {
    /// The operation of a VarHandle method name, or None for a method that is not an access mode.
    pub fn of(name: &str) -> Option<VhOp> {
        let base = ["Volatile", "Acquire", "Release", "Opaque", "Plain"]
            .iter()
            .fold(name, |n, s| n.strip_suffix(s).unwrap_or(n));
        Some(match base {
            "get" => VhOp::Get,
            "set" => VhOp::Set,
            "compareAndSet" | "weakCompareAndSet" => VhOp::CompareAndSet,
            "compareAndExchange" => VhOp::CompareAndExchange,
            "getAndSet" => VhOp::GetAndSet,
            "getAndAdd" => VhOp::GetAndAdd,
            "getAndBitwiseOr" => VhOp::GetAndOr,
            "getAndBitwiseAnd" => VhOp::GetAndAnd,
            "getAndBitwiseXor" => VhOp::GetAndXor,
            _ => return None,
        })
    }

    fn from_u8(v: u8) -> VhOp {
        [
            VhOp::Get,
            VhOp::Set,
            VhOp::CompareAndSet,
            VhOp::CompareAndExchange,
            VhOp::GetAndSet,
            VhOp::GetAndAdd,
            VhOp::GetAndOr,
            VhOp::GetAndAnd,
            VhOp::GetAndXor,
        ][v as usize]
    }
}

/// The quickened op for a call `VarHandle.<name><descriptor>`.
pub fn link(name: &str, descriptor: &str) -> Option<Op> {
    let op = VhOp::of(name)?;
    let d = MethodDescriptor::parse(descriptor)?;
    Some(Op::InvokeVarHandle { op: op as u8, args: 1 + d.param_slots() as u16, ret_slots: d.ret.slots() as u8 })
}

impl<T: Tracker> Vm<T> {
    /// `MethodHandles.byteArrayViewVarHandle`: an int/long/… read or written at a byte index of a
    /// `byte[]`, in the handle's byte order.
    fn byte_array_view(&mut self, t: &mut JThread, handle: Ref, family: &str, op: VhOp, at: usize) -> VmResult<u64> {
        let kind = match family {
            "Shorts" => b'S',
            "Chars" => b'C',
            "Ints" => b'I',
            "Longs" => b'J',
            "Floats" => b'F',
            "Doubles" => b'D',
            _ => return Err(Fault::Fatal(VmError::Unsupported(format!("byte-array view VarHandle of {family}")))),
        };
        let (arr, index) = (t.stack[at + 1] as Ref, t.stack[at + 2] as i32);
        if arr == 0 {
            return Err(self.throw_npe(t));
        }
        let w = width(kind);
        let len = self.heap.get(arr).data.array_len().unwrap_or(0);
        if index < 0 || index as usize + w > len {
            let msg = format!("Index {index} out of bounds for length {len}");
            return Err(self.throw_new(t, "java/lang/IndexOutOfBoundsException", Some(&msg)));
        }
        let big_endian = self.get_named(handle, "be") != 0;
        let swap = |v: u64| if big_endian { v.swap_bytes() >> (64 - 8 * w) } else { v };
        let offset = super::natives::memory::ARRAY_BASE + index as i64;
        match op {
            VhOp::Get => Ok(to_slot(kind, swap(read(self, t, arr, offset, w)?))),
            VhOp::Set => {
                let mask = if w == 8 { u64::MAX } else { (1u64 << (8 * w)) - 1 };
                super::natives::memory::write(self, t, arr, offset, w, swap(t.stack[at + 3] & mask))?;
                Ok(0)
            }
            _ => Err(Fault::Fatal(VmError::Unsupported(format!("byte-array view VarHandle access {op:?}")))),
        }
    }

    /// A VarHandle call the VM does not perform itself, through the JDK's invoker for the call
    /// site (linked on first use and kept per site).
    fn varhandle_through_jdk(&mut self, t: &mut JThread, at: usize, nargs: usize) -> VmResult<u64> {
        let depth = t.frames.len() - 1;
        let (caller, bci) = (t.frames[depth].method, t.frame_bci(depth));
        let (invoker, appendix) = match self.varhandle_sites.get(&(caller, bci)) {
            Some(&linked) => linked,
            None => {
                let owner = self.methods[caller as usize].class;
                let (name, desc) = self.call_site_ref(caller, bci)?;
                let linked = self.link_varhandle_site(t, owner, &name, &desc, nargs as u16)?;
                self.varhandle_sites.insert((caller, bci), linked);
                linked
            }
        };
        let mut args = t.stack[at..at + nargs].to_vec();
        if appendix != 0 {
            args.push(appendix as u64);
        }
        self.invoke(t, invoker, &args)
    }

    /// The name and descriptor of the method the invoke instruction at `bci` of `m` names.
    fn call_site_ref(&self, m: super::class::MethodId, bci: u16) -> VmResult<(String, String)> {
        let method = &self.methods[m as usize];
        let bad = || Fault::Fatal(VmError::Internal(format!("no invoke at {}:{bci}", self.method_name(m))));
        let code = method.raw.as_ref().ok_or_else(bad)?;
        let index = match code.bytecode.get(bci as usize..bci as usize + 3) {
            Some(&[_, hi, lo]) => u16::from_be_bytes([hi, lo]),
            _ => return Err(bad()),
        };
        let file = self.classes[method.class as usize].file.as_ref().ok_or_else(bad)?;
        let r = file.constant_pool.member_ref(index).map_err(|_| bad())?;
        Ok((r.name.to_string(), r.descriptor.to_string()))
    }

    /// Runs a VarHandle access whose arguments (handle first) are the `nargs` slots at `at`.
    pub(super) fn varhandle_invoke(&mut self, t: &mut JThread, op: u8, at: usize, nargs: usize) -> VmResult<u64> {
        let op = VhOp::from_u8(op);
        let handle = t.stack[at] as Ref;
        if handle == 0 {
            return Err(self.throw_npe(t));
        }
        let class = self.classes[self.heap.get(handle).class as usize].name.clone();
        if let Some(family) =
            class.strip_prefix("java/lang/invoke/VarHandleByteArrayAs").and_then(|r| r.strip_suffix("$ArrayHandle"))
        {
            return self.byte_array_view(t, handle, family, op, at);
        }
        let Some((family, shape)) = class.strip_prefix("java/lang/invoke/VarHandle").and_then(|r| r.split_once('$'))
        else {
            return self.varhandle_through_jdk(t, at, nargs);
        };
        let kind = match family {
            "Ints" => b'I',
            "Longs" => b'J',
            "References" => b'L',
            "Booleans" => b'Z',
            "Bytes" => b'B',
            "Shorts" => b'S',
            "Chars" => b'C',
            "Floats" => b'F',
            "Doubles" => b'D',
            _ => return self.varhandle_through_jdk(t, at, nargs),
        };
        if shape.ends_with("ReadOnly") && op != VhOp::Get {
            return Err(self.throw_new(t, "java/lang/UnsupportedOperationException", None));
        }
        // Coordinates: (receiver) for instance fields, () for statics, (array, index) for arrays.
        let (obj, offset, mut next) = if shape.starts_with("FieldInstance") {
            let recv = t.stack[at + 1] as Ref;
            if recv == 0 {
                return Err(self.throw_npe(t));
            }
            (recv, self.get_named(handle, "fieldOffset") as i64, at + 2)
        } else if shape.starts_with("FieldStatic") {
            let base = self.get_named(handle, "base") as Ref;
            let off = self.get_named(handle, "fieldOffset") as i64;
            (base, off | STATIC_TAG, at + 1)
        } else if shape == "Array" {
            let (arr, index) = (t.stack[at + 1] as Ref, t.stack[at + 2] as i32);
            if arr == 0 {
                return Err(self.throw_npe(t));
            }
            let len = self.heap.get(arr).data.array_len().unwrap_or(0);
            if index < 0 || index as usize >= len {
                return Err(self.throw_index(t, index, len));
            }
            let abase = self.get_named(handle, "abase") as i32 as i64;
            let ashift = self.get_named(handle, "ashift") as i32;
            (arr, abase + ((index as i64) << ashift), at + 3)
        } else {
            return self.varhandle_through_jdk(t, at, nargs);
        };
        let slots = if matches!(kind, b'J' | b'D') { 2 } else { 1 };
        let mut value = || {
            let v = t.stack[next];
            next += slots;
            v
        };
        let (a, b) = match op {
            VhOp::Get => (0, 0),
            VhOp::CompareAndSet | VhOp::CompareAndExchange => (value(), value()),
            _ => (value(), 0),
        };
        debug_assert!(next <= at + nargs);
        let w = width(kind);
        let mask = if w == 8 { u64::MAX } else { (1u64 << (8 * w)) - 1 };
        let current = read(self, t, obj, offset, w)?;
        let store = |vm: &mut Self, t: &mut JThread, v: u64| super::natives::memory::write(vm, t, obj, offset, w, v);
        Ok(match op {
            VhOp::Get => to_slot(kind, current),
            VhOp::Set => {
                store(self, t, if kind == b'Z' { a & 1 } else { a })?;
                0
            }
            VhOp::CompareAndSet | VhOp::CompareAndExchange => {
                let hit = current & mask == a & mask;
                if hit {
                    store(self, t, b)?;
                }
                if op == VhOp::CompareAndSet {
                    hit as u64
                } else {
                    to_slot(kind, current)
                }
            }
            VhOp::GetAndSet => {
                store(self, t, a)?;
                to_slot(kind, current)
            }
            VhOp::GetAndAdd => {
                let sum = match kind {
                    b'F' => (f32::from_bits(current as u32) + f32::from_bits(a as u32)).to_bits() as u64,
                    b'D' => (f64::from_bits(current) + f64::from_bits(a)).to_bits(),
                    _ => current.wrapping_add(a),
                };
                store(self, t, sum)?;
                to_slot(kind, current)
            }
            VhOp::GetAndOr | VhOp::GetAndAnd | VhOp::GetAndXor => {
                let r = match op {
                    VhOp::GetAndOr => current | a,
                    VhOp::GetAndAnd => current & a,
                    _ => current ^ a,
                };
                store(self, t, r)?;
                to_slot(kind, current)
            }
        })
    }
}
