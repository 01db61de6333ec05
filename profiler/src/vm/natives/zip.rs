//! java.util.zip: `CRC32` through the crc32fast crate, `Adler32` computed here, `Inflater` and
//! `Deflater` on zlib itself (`zlib.rs`), as the JDK's `Inflater.c` and `Deflater.c` drive it:
//! each Java object's native handle indexes a table of zlib streams, and each native is one call
//! of zlib over the Java buffers, so compressed bytes are zlib's, byte for byte.

use super::zlib::{self, Step, ZStream};
use super::{Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{JThread, Tracker, Vm};

/// zlib streams by the handle their Java `Inflater` or `Deflater` holds.
#[derive(Default)]
pub struct Inflaters {
    inflaters: std::collections::HashMap<u64, ZStream>,
    deflaters: std::collections::HashMap<u64, ZStream>,
    next: u64,
}

/// Where a native's input comes from, or its output goes: a slice of a `byte[]` or native
/// memory (a direct buffer's address).
#[derive(Clone, Copy)]
enum Buf {
    Array { array: Ref, off: i32, len: i32 },
    Memory { addr: u64, len: i32 },
}

impl Buf {
    fn len(self) -> usize {
        match self {
            Buf::Array { len, .. } | Buf::Memory { len, .. } => len.max(0) as usize,
        }
    }
}

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    register_inflater(reg);
    register_deflater(reg);
    reg.add("java/util/zip/Adler32", "update", "(II)I", |_, _, a| Ok(adler32(a[0] as u32, &[a[1] as u8]) as u64));
    reg.add("java/util/zip/Adler32", "updateBytes", "(I[BII)I", |vm, t, a| {
        let bytes = byte_range(vm, t, a[1] as Ref, a[2] as i32, a[3] as i32)?;
        Ok(adler32(a[0] as u32, &bytes) as u64)
    });
    reg.add("java/util/zip/Adler32", "updateByteBuffer", "(IJII)I", |vm, _, a| {
        let (addr, off, len) = (a[1], a[3] as i32 as u64, a[4] as i32 as u64);
        let bytes: Vec<u8> =
            (0..len).filter_map(|i| vm.native_memory.read(addr + off + i, 1)).map(|b| b as u8).collect();
        Ok(adler32(a[0] as u32, &bytes) as u64)
    });
    reg.add("java/util/zip/CRC32", "update", "(II)I", |_, _, a| {
        let mut h = crc32fast::Hasher::new_with_initial(a[0] as u32);
        h.update(&[a[1] as u8]);
        Ok(h.finalize() as u64)
    });
    reg.add("java/util/zip/CRC32", "updateBytes0", "(I[BII)I", |vm, t, a| {
        let bytes = byte_range(vm, t, a[1] as Ref, a[2] as i32, a[3] as i32)?;
        let mut h = crc32fast::Hasher::new_with_initial(a[0] as u32);
        h.update(&bytes);
        Ok(h.finalize() as u64)
    });
    reg.add("java/util/zip/CRC32", "updateByteBuffer0", "(IJII)I", |vm, _, a| {
        let (addr, off, len) = (a[1], a[3] as i32 as u64, a[4] as i32 as u64);
        let bytes: Vec<u8> =
            (0..len).filter_map(|i| vm.native_memory.read(addr + off + i, 1)).map(|b| b as u8).collect();
        let mut h = crc32fast::Hasher::new_with_initial(a[0] as u32);
        h.update(&bytes);
        Ok(h.finalize() as u64)
    });
}

fn register_inflater<T: Tracker>(reg: &mut Registry<T>) {
    const INF: &str = "java/util/zip/Inflater";
    reg.add(INF, "init", "(Z)J", |vm, t, a| {
        let stream = match ZStream::inflater(a[0] != 0) {
            Ok(s) => s,
            Err(e) => return Err(init_failed(vm, t, e, false)),
        };
        vm.inflaters.next += 1;
        let h = vm.inflaters.next;
        vm.inflaters.inflaters.insert(h, stream);
        Ok(h)
    });
    reg.add(INF, "setDictionary", "(J[BII)V", |vm, t, a| {
        let dict = byte_range(vm, t, a[2] as Ref, a[3] as i32, a[4] as i32)?;
        set_dictionary(vm, t, a[0], &dict, false)
    });
    reg.add(INF, "setDictionaryBuffer", "(JJI)V", |vm, t, a| {
        let dict = vm.native_memory.read_bytes(a[2], a[4] as i32 as usize).unwrap_or_default();
        set_dictionary(vm, t, a[0], &dict, false)
    });
    reg.add(INF, "getAdler", "(J)I", |vm, _, a| {
        Ok(vm.inflaters.inflaters.get(&a[0]).map(|s| s.adler()).unwrap_or(1) as u64)
    });
    reg.add(INF, "reset", "(J)V", |vm, t, a| reset(vm, t, a[0], false));
    reg.add(INF, "end", "(J)V", |vm, _, a| {
        vm.inflaters.inflaters.remove(&a[0]);
        Ok(0)
    });
    // (this, addr, input, output); arrays are (array, off, len), buffers (address, len).
    reg.add(INF, "inflateBytesBytes", "(J[BII[BII)J", |vm, t, a| {
        let input = Buf::Array { array: a[3] as Ref, off: a[4] as i32, len: a[5] as i32 };
        let output = Buf::Array { array: a[6] as Ref, off: a[7] as i32, len: a[8] as i32 };
        inflate(vm, t, a[0] as Ref, a[1], input, output)
    });
    reg.add(INF, "inflateBytesBuffer", "(J[BIIJI)J", |vm, t, a| {
        let input = Buf::Array { array: a[3] as Ref, off: a[4] as i32, len: a[5] as i32 };
        let output = Buf::Memory { addr: a[6], len: a[8] as i32 };
        inflate(vm, t, a[0] as Ref, a[1], input, output)
    });
    reg.add(INF, "inflateBufferBytes", "(JJI[BII)J", |vm, t, a| {
        let input = Buf::Memory { addr: a[3], len: a[5] as i32 };
        let output = Buf::Array { array: a[6] as Ref, off: a[7] as i32, len: a[8] as i32 };
        inflate(vm, t, a[0] as Ref, a[1], input, output)
    });
    reg.add(INF, "inflateBufferBuffer", "(JJIJI)J", |vm, t, a| {
        let input = Buf::Memory { addr: a[3], len: a[5] as i32 };
        let output = Buf::Memory { addr: a[6], len: a[8] as i32 };
        inflate(vm, t, a[0] as Ref, a[1], input, output)
    });
}

fn register_deflater<T: Tracker>(reg: &mut Registry<T>) {
    const DEF: &str = "java/util/zip/Deflater";
    reg.add(DEF, "init", "(IIZ)J", |vm, t, a| {
        let stream = match ZStream::deflater(a[0] as i32, a[1] as i32, a[2] != 0) {
            Ok(s) => s,
            Err(e) => return Err(init_failed(vm, t, e, true)),
        };
        vm.inflaters.next += 1;
        let h = vm.inflaters.next;
        vm.inflaters.deflaters.insert(h, stream);
        Ok(h)
    });
    reg.add(DEF, "setDictionary", "(J[BII)V", |vm, t, a| {
        let dict = byte_range(vm, t, a[2] as Ref, a[3] as i32, a[4] as i32)?;
        set_dictionary(vm, t, a[0], &dict, true)
    });
    reg.add(DEF, "setDictionaryBuffer", "(JJI)V", |vm, t, a| {
        let dict = vm.native_memory.read_bytes(a[2], a[4] as i32 as usize).unwrap_or_default();
        set_dictionary(vm, t, a[0], &dict, true)
    });
    reg.add(DEF, "getAdler", "(J)I", |vm, _, a| {
        Ok(vm.inflaters.deflaters.get(&a[0]).map(|s| s.adler()).unwrap_or(1) as u64)
    });
    reg.add(DEF, "reset", "(J)V", |vm, t, a| reset(vm, t, a[0], true));
    reg.add(DEF, "end", "(J)V", |vm, _, a| {
        vm.inflaters.deflaters.remove(&a[0]);
        Ok(0)
    });
    // (this, addr, input, output, flush, params); arrays are (array, off, len), buffers (address, len).
    reg.add(DEF, "deflateBytesBytes", "(J[BII[BIIII)J", |vm, t, a| {
        let input = Buf::Array { array: a[3] as Ref, off: a[4] as i32, len: a[5] as i32 };
        let output = Buf::Array { array: a[6] as Ref, off: a[7] as i32, len: a[8] as i32 };
        deflate(vm, t, a[1], input, output, a[9] as i32, a[10] as i32)
    });
    reg.add(DEF, "deflateBytesBuffer", "(J[BIIJIII)J", |vm, t, a| {
        let input = Buf::Array { array: a[3] as Ref, off: a[4] as i32, len: a[5] as i32 };
        let output = Buf::Memory { addr: a[6], len: a[8] as i32 };
        deflate(vm, t, a[1], input, output, a[9] as i32, a[10] as i32)
    });
    reg.add(DEF, "deflateBufferBytes", "(JJI[BIIII)J", |vm, t, a| {
        let input = Buf::Memory { addr: a[3], len: a[5] as i32 };
        let output = Buf::Array { array: a[6] as Ref, off: a[7] as i32, len: a[8] as i32 };
        deflate(vm, t, a[1], input, output, a[9] as i32, a[10] as i32)
    });
    reg.add(DEF, "deflateBufferBuffer", "(JJIJIII)J", |vm, t, a| {
        let input = Buf::Memory { addr: a[3], len: a[5] as i32 };
        let output = Buf::Memory { addr: a[6], len: a[8] as i32 };
        deflate(vm, t, a[1], input, output, a[9] as i32, a[10] as i32)
    });
}

/// `Inflater.init`/`Deflater.init` failing: out of memory, a bad level or strategy
/// (IllegalArgumentException, Deflater only), or zlib's message as an InternalError.
fn init_failed<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, e: zlib::InitError, deflater: bool) -> crate::vm::Fault {
    match e.code {
        zlib::Z_MEM_ERROR => vm.throw_new(t, "java/lang/OutOfMemoryError", None),
        zlib::Z_STREAM_ERROR if deflater => vm.throw_new(t, "java/lang/IllegalArgumentException", None),
        _ => vm.throw_new(t, "java/lang/InternalError", Some(&e.message)),
    }
}

fn closed<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, what: &str) -> crate::vm::Fault {
    vm.throw_new(t, "java/lang/NullPointerException", Some(&format!("{what} has been closed")))
}

fn stream<T: Tracker>(vm: &mut Vm<T>, h: u64, deflater: bool) -> Option<&mut ZStream> {
    if deflater {
        vm.inflaters.deflaters.get_mut(&h)
    } else {
        vm.inflaters.inflaters.get_mut(&h)
    }
}

/// Deflater.c's `doSetDictionary` / Inflater.c's `checkSetDictionaryResult`.
fn set_dictionary<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, h: u64, dict: &[u8], deflater: bool) -> VmResult<u64> {
    let Some(s) = stream(vm, h, deflater) else {
        return Err(closed(vm, t, if deflater { "Deflater" } else { "Inflater" }));
    };
    let code = s.set_dictionary(dict);
    let msg = s.message();
    match code {
        zlib::Z_OK => Ok(0),
        zlib::Z_STREAM_ERROR if deflater => Err(vm.throw_new(t, "java/lang/IllegalArgumentException", None)),
        zlib::Z_STREAM_ERROR | zlib::Z_DATA_ERROR if !deflater => {
            Err(vm.throw_new(t, "java/lang/IllegalArgumentException", msg.as_deref()))
        }
        _ => Err(vm.throw_new(t, "java/lang/InternalError", msg.as_deref())),
    }
}

fn reset<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, h: u64, deflater: bool) -> VmResult<u64> {
    match stream(vm, h, deflater).map(|s| s.reset()) {
        Some(zlib::Z_OK) | None => Ok(0),
        Some(_) => Err(vm.throw_new(t, "java/lang/InternalError", None)),
    }
}

/// The bytes of an input buffer.
fn read_buf<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, b: Buf) -> VmResult<Vec<u8>> {
    match b {
        Buf::Array { array, off, len } => byte_range(vm, t, array, off, len),
        Buf::Memory { addr, len } => Ok(vm.native_memory.read_bytes(addr, len.max(0) as usize).unwrap_or_default()),
    }
}

/// Checks that an output array can take `len` bytes at `off` (before zlib runs).
fn check_out<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, b: Buf) -> VmResult<()> {
    if let Buf::Array { array, off, len } = b {
        byte_range_ok(vm, t, array, off, len)?;
    }
    Ok(())
}

fn write_buf<T: Tracker>(vm: &mut Vm<T>, b: Buf, bytes: &[u8]) {
    match b {
        Buf::Array { array, off, .. } => store_array(vm, array, off, bytes),
        Buf::Memory { addr, .. } => store_memory(vm, addr, bytes),
    }
}

/// Deflater.c's `doDeflate`: `deflateParams` (params bit 0; level in bits 3.., strategy in 1-2)
/// or `deflate` with the flush mode; returns read | written << 31 | finished << 62 | params still
/// pending << 63.
fn deflate<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    h: u64,
    input: Buf,
    output: Buf,
    flush: i32,
    params: i32,
) -> VmResult<u64> {
    let src = read_buf(vm, t, input)?;
    check_out(vm, t, output)?;
    let mut dst = vec![0u8; output.len()];
    let Some(s) = vm.inflaters.deflaters.get_mut(&h) else {
        return Err(closed(vm, t, "Deflater"));
    };
    let set_params = params & 1 != 0;
    let step = if set_params {
        s.deflate_params(&src, &mut dst, params >> 3, (params >> 1) & 3)
    } else {
        s.deflate(&src, &mut dst, flush)
    };
    let msg = s.message();
    let Step { code, read, written } = step;
    let (finished, pending) = match (set_params, code) {
        (true, zlib::Z_OK) => (false, false),
        (true, zlib::Z_BUF_ERROR) => (false, true),
        (false, zlib::Z_STREAM_END) => (true, false),
        (false, zlib::Z_OK | zlib::Z_BUF_ERROR) => (false, false),
        _ => return Err(vm.throw_new(t, "java/lang/InternalError", msg.as_deref())),
    };
    write_buf(vm, output, &dst[..written]);
    Ok(read as u64 | (written as u64) << 31 | (finished as u64) << 62 | (pending as u64) << 63)
}

/// Inflater.c's `doInflate` + `checkInflateStatus`: returns read | written << 31 | finished << 62
/// | needs a dictionary << 63. Corrupt data throws DataFormatException with what was used so far
/// in the `Inflater`'s `inputConsumed`/`outputConsumed`.
fn inflate<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, this: Ref, h: u64, input: Buf, output: Buf) -> VmResult<u64> {
    let src = read_buf(vm, t, input)?;
    check_out(vm, t, output)?;
    let mut dst = vec![0u8; output.len()];
    let Some(s) = vm.inflaters.inflaters.get_mut(&h) else {
        return Err(closed(vm, t, "Inflater"));
    };
    let Step { code, read, written } = s.inflate(&src, &mut dst);
    let msg = s.message();
    write_buf(vm, output, &dst[..written]);
    let (read, written) = (read as u64, written as u64);
    match code {
        zlib::Z_STREAM_END => Ok(read | written << 31 | 1 << 62),
        zlib::Z_OK => Ok(read | written << 31),
        zlib::Z_NEED_DICT => Ok(read | written << 31 | 1 << 63),
        zlib::Z_BUF_ERROR => Ok(0),
        zlib::Z_DATA_ERROR => {
            vm.set_named(this, "inputConsumed", read);
            vm.set_named(this, "outputConsumed", written);
            Err(vm.throw_new(t, "java/util/zip/DataFormatException", msg.as_deref()))
        }
        zlib::Z_MEM_ERROR => Err(vm.throw_new(t, "java/lang/OutOfMemoryError", None)),
        _ => Err(vm.throw_new(t, "java/lang/InternalError", msg.as_deref())),
    }
}

fn store_array<T: Tracker>(vm: &mut Vm<T>, arr: Ref, off: i32, bytes: &[u8]) {
    if let ObjData::Bytes(b) = &mut vm.heap.get_mut(arr).data {
        for (i, &x) in bytes.iter().enumerate() {
            b[off as usize + i] = x as i8;
        }
    }
}

fn store_memory<T: Tracker>(vm: &mut Vm<T>, addr: u64, bytes: &[u8]) {
    for (i, &x) in bytes.iter().enumerate() {
        vm.native_memory.write(addr + i as u64, 1, x as u64);
    }
}

/// Adler-32 continued from `adler` (RFC 1950): two running sums modulo 65521.
fn adler32(adler: u32, bytes: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (adler & 0xffff, adler >> 16);
    // 5552 bytes is the longest run whose sums cannot overflow a u32 before the reduction.
    for chunk in bytes.chunks(5552) {
        for &x in chunk {
            a += x as u32;
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// Throws as the JDK's array access would when `off..off+len` is not within the `byte[]`.
fn byte_range_ok<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, arr: Ref, off: i32, len: i32) -> VmResult<()> {
    if arr == 0 {
        return Err(vm.throw_npe(t));
    }
    match &vm.heap.get(arr).data {
        ObjData::Bytes(b) if off >= 0 && len >= 0 && (off as usize + len as usize) <= b.len() => Ok(()),
        _ => Err(vm.throw_new(t, "java/lang/ArrayIndexOutOfBoundsException", None)),
    }
}

fn byte_range<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, arr: Ref, off: i32, len: i32) -> VmResult<Vec<u8>> {
    if arr == 0 {
        return Err(vm.throw_npe(t));
    }
    match &vm.heap.get(arr).data {
        ObjData::Bytes(b) if off >= 0 && len >= 0 && (off as usize + len as usize) <= b.len() => {
            Ok(b[off as usize..(off + len) as usize].iter().map(|&x| x as u8).collect())
        }
        _ => Err(vm.throw_new(t, "java/lang/ArrayIndexOutOfBoundsException", None)),
    }
}
