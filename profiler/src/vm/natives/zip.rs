//! java.util.zip: `CRC32` through the crc32fast crate, `Adler32` computed here, `Inflater` and
//! `Deflater` through flate2 (each Java object's native handle indexes a table of streams).
//! flate2 runs on zlib-rs here (the zip crate asks for it). Its compressed bytes are valid but
//! not zlib's (zlib-rs follows zlib-ng's match finding), and it takes no strategy: programs that
//! print compressed sizes differ from HotSpot.

use super::{Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{JThread, Tracker, Vm};

/// Decompressors by the handle their Java `Inflater` holds; compressors by their `Deflater`'s.
#[derive(Default)]
pub struct Inflaters {
    table: std::collections::HashMap<u64, (flate2::Decompress, bool)>,
    deflaters: std::collections::HashMap<u64, Deflater>,
    next: u64,
}

/// One `Deflater`'s stream, with what zlib's `z_stream` would tell Java besides the bytes.
struct Deflater {
    stream: flate2::Compress,
    nowrap: bool,
    /// `strm->adler`: the Adler-32 of the input consumed (zlib format only), or of the
    /// dictionary until the header is written.
    adler: u32,
    dictionary_pending: bool,
}

/// zlib's `Z_BUF_ERROR` and `Z_STREAM_END` as flate2 reports them, for `checkDeflateStatus`.
enum Outcome {
    Ok,
    BufError,
    StreamEnd,
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

fn register_deflater<T: Tracker>(reg: &mut Registry<T>) {
    const DEF: &str = "java/util/zip/Deflater";
    reg.add(DEF, "init", "(IIZ)J", |vm, _, a| {
        // The strategy (FILTERED, HUFFMAN_ONLY) cannot be given to flate2: the default is used.
        let (level, nowrap) = (a[0] as i32, a[2] != 0);
        let stream = flate2::Compress::new(compression(level), !nowrap);
        vm.inflaters.next += 1;
        let h = vm.inflaters.next;
        vm.inflaters.deflaters.insert(h, Deflater { stream, nowrap, adler: 1, dictionary_pending: false });
        Ok(h)
    });
    reg.add(DEF, "setDictionary", "(J[BII)V", |vm, t, a| {
        let dict = byte_range(vm, t, a[2] as Ref, a[3] as i32, a[4] as i32)?;
        set_dictionary(vm, t, a[0], &dict)
    });
    reg.add(DEF, "setDictionaryBuffer", "(JJI)V", |vm, t, a| {
        let dict = vm.native_memory.read_bytes(a[2], a[4] as i32 as usize).unwrap_or_default();
        set_dictionary(vm, t, a[0], &dict)
    });
    reg.add(DEF, "getAdler", "(J)I", |vm, _, a| {
        Ok(vm.inflaters.deflaters.get(&a[0]).map(|d| d.adler).unwrap_or(1) as u64)
    });
    reg.add(DEF, "reset", "(J)V", |vm, _, a| {
        if let Some(d) = vm.inflaters.deflaters.get_mut(&a[0]) {
            d.stream.reset();
            d.adler = 1;
            d.dictionary_pending = false;
        }
        Ok(0)
    });
    reg.add(DEF, "end", "(J)V", |vm, _, a| {
        vm.inflaters.deflaters.remove(&a[0]);
        Ok(0)
    });
    // (this, addr, input, output, flush, params); arrays are (array, off, len), buffers (address, len).
    reg.add(DEF, "deflateBytesBytes", "(J[BII[BIIII)J", |vm, t, a| {
        let src = byte_range(vm, t, a[3] as Ref, a[4] as i32, a[5] as i32)?;
        let (result, out) = deflate(vm, t, a[1], &src, a[8] as i32, a[9] as i32, a[10] as i32)?;
        store_array(vm, a[6] as Ref, a[7] as i32, &out);
        Ok(result)
    });
    reg.add(DEF, "deflateBytesBuffer", "(J[BIIJIII)J", |vm, t, a| {
        let src = byte_range(vm, t, a[3] as Ref, a[4] as i32, a[5] as i32)?;
        let (result, out) = deflate(vm, t, a[1], &src, a[8] as i32, a[9] as i32, a[10] as i32)?;
        store_memory(vm, a[6], &out);
        Ok(result)
    });
    reg.add(DEF, "deflateBufferBytes", "(JJI[BIIII)J", |vm, t, a| {
        let src = vm.native_memory.read_bytes(a[3], a[5] as i32 as usize).unwrap_or_default();
        let (result, out) = deflate(vm, t, a[1], &src, a[8] as i32, a[9] as i32, a[10] as i32)?;
        store_array(vm, a[6] as Ref, a[7] as i32, &out);
        Ok(result)
    });
    reg.add(DEF, "deflateBufferBuffer", "(JJIJIII)J", |vm, t, a| {
        let src = vm.native_memory.read_bytes(a[3], a[5] as i32 as usize).unwrap_or_default();
        let (result, out) = deflate(vm, t, a[1], &src, a[8] as i32, a[9] as i32, a[10] as i32)?;
        store_memory(vm, a[6], &out);
        Ok(result)
    });
}

/// zlib's level: -1 (DEFAULT_COMPRESSION) is 6.
fn compression(level: i32) -> flate2::Compression {
    flate2::Compression::new(if (0..=9).contains(&level) { level as u32 } else { 6 })
}

fn set_dictionary<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, h: u64, dict: &[u8]) -> VmResult<u64> {
    let Some(d) = vm.inflaters.deflaters.get_mut(&h) else {
        return Err(vm.throw_new(t, "java/lang/NullPointerException", Some("Deflater has been closed")));
    };
    match d.stream.set_dictionary(dict) {
        Ok(adler) => {
            if !d.nowrap {
                d.adler = adler;
                d.dictionary_pending = true;
            }
            Ok(0)
        }
        Err(e) => Err(vm.throw_new(t, "java/lang/IllegalArgumentException", Some(&e.to_string()))),
    }
}

/// Deflater.c's `doDeflate` + `checkDeflateStatus`: either `deflateParams` (params bit 0; level
/// in bits 3.., strategy in 1-2) or `deflate` with the flush mode. Returns the packed result
/// (read | written << 31 | finished << 62 | params still pending << 63) and the bytes written.
fn deflate<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    h: u64,
    src: &[u8],
    out_len: i32,
    flush: i32,
    params: i32,
) -> VmResult<(u64, Vec<u8>)> {
    let Some(d) = vm.inflaters.deflaters.get_mut(&h) else {
        return Err(vm.throw_new(t, "java/lang/NullPointerException", Some("Deflater has been closed")));
    };
    let mut dst = vec![0u8; out_len.max(0) as usize];
    if params & 1 != 0 {
        // A level change mid-stream that zlib would need output room for keeps the old level.
        let _ = d.stream.set_level(compression(params >> 3));
        return Ok((0, Vec::new()));
    }
    let mode = match flush {
        2 => flate2::FlushCompress::Sync,
        3 => flate2::FlushCompress::Full,
        4 => flate2::FlushCompress::Finish,
        _ => flate2::FlushCompress::None,
    };
    let (before_in, before_out) = (d.stream.total_in(), d.stream.total_out());
    let outcome = match d.stream.compress(src, &mut dst, mode) {
        Ok(flate2::Status::Ok) => Outcome::Ok,
        Ok(flate2::Status::BufError) => Outcome::BufError,
        Ok(flate2::Status::StreamEnd) => Outcome::StreamEnd,
        Err(e) => return Err(vm.throw_new(t, "java/lang/InternalError", Some(&e.to_string()))),
    };
    let (read, written) = ((d.stream.total_in() - before_in) as usize, (d.stream.total_out() - before_out) as usize);
    if !d.nowrap {
        if d.dictionary_pending && (read > 0 || written > 0) {
            d.adler = 1;
            d.dictionary_pending = false;
        }
        d.adler = adler32(d.adler, &src[..read]);
    }
    dst.truncate(written);
    let result = match outcome {
        Outcome::BufError => 0,
        Outcome::Ok => read as u64 | (written as u64) << 31,
        Outcome::StreamEnd => read as u64 | (written as u64) << 31 | 1 << 62,
    };
    Ok((result, dst))
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
