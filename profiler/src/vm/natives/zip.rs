//! java.util.zip: `CRC32` through the crc32fast crate, `Adler32` computed here, `Inflater` through flate2 (each Java
//! Inflater's native handle indexes a table of decompressors).

use super::{Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{JThread, Tracker, Vm};

/// Decompressors by the handle their Java `Inflater` holds.
#[derive(Default)]
pub struct Inflaters {
    table: std::collections::HashMap<u64, (flate2::Decompress, bool)>,
    next: u64,
}

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    const INF: &str = "java/util/zip/Inflater";
    reg.add(INF, "init", "(Z)J", |vm, _, a| {
        let nowrap = a[0] != 0;
        vm.inflaters.next += 1;
        let h = vm.inflaters.next;
        vm.inflaters.table.insert(h, (flate2::Decompress::new(!nowrap), nowrap));
        Ok(h)
    });
    reg.add(INF, "reset", "(J)V", |vm, _, a| {
        if let Some((d, nowrap)) = vm.inflaters.table.get_mut(&a[0]) {
            d.reset(!*nowrap);
        }
        Ok(0)
    });
    reg.add(INF, "end", "(J)V", |vm, _, a| {
        vm.inflaters.table.remove(&a[0]);
        Ok(0)
    });
    reg.add(INF, "getAdler", "(J)I", |_, _, _| Ok(1));
    reg.add(INF, "inflateBytesBytes", "(J[BII[BII)J", |vm, t, a| {
        // Returns read | written << 31 | finished << 62, as Inflater.inflate decodes it.
        let (h, input, in_off, in_len, output, out_off, out_len) =
            (a[1], a[3] as Ref, a[4] as i32, a[5] as i32, a[6] as Ref, a[7] as i32, a[8] as i32);
        let src = byte_range(vm, t, input, in_off, in_len)?;
        let mut dst = vec![0u8; out_len.max(0) as usize];
        let Some((d, _)) = vm.inflaters.table.get_mut(&h) else {
            return Err(vm.throw_new(t, "java/lang/NullPointerException", Some("Inflater has been closed")));
        };
        let (before_in, before_out) = (d.total_in(), d.total_out());
        let status = d.decompress(&src, &mut dst, flate2::FlushDecompress::None);
        let (read, written) = (d.total_in() - before_in, d.total_out() - before_out);
        let finished = match status {
            Ok(flate2::Status::StreamEnd) => 1u64,
            Ok(_) => 0,
            Err(e) => return Err(vm.throw_new(t, "java/util/zip/DataFormatException", Some(&e.to_string()))),
        };
        if let ObjData::Bytes(b) = &mut vm.heap.get_mut(output).data {
            for (i, &x) in dst[..written as usize].iter().enumerate() {
                b[out_off as usize + i] = x as i8;
            }
        }
        Ok(read | written << 31 | finished << 62)
    });
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
