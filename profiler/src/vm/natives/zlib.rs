//! One zlib stream, as the JDK's `Deflater.c` and `Inflater.c` hold it: zlib itself (its C
//! sources, built into the VM by libz-sys), so that what a program compresses is byte for byte
//! what HotSpot's zlib produces. The JDK's natives set the stream's buffers and call zlib once per
//! Java call; `ZStream` does the same with Rust slices and reports zlib's return code and how much
//! of each buffer was used. All of the crate's `unsafe` for zlib is here.

use libz_sys as z;
use std::ffi::{c_int, c_uint, c_void, CStr};
use std::ptr::NonNull;

pub(super) const Z_OK: c_int = z::Z_OK;
pub(super) const Z_STREAM_END: c_int = z::Z_STREAM_END;
pub(super) const Z_NEED_DICT: c_int = z::Z_NEED_DICT;
pub(super) const Z_STREAM_ERROR: c_int = z::Z_STREAM_ERROR;
pub(super) const Z_DATA_ERROR: c_int = z::Z_DATA_ERROR;
pub(super) const Z_MEM_ERROR: c_int = z::Z_MEM_ERROR;
pub(super) const Z_BUF_ERROR: c_int = z::Z_BUF_ERROR;

/// Deflater.c's `DEF_MEM_LEVEL` and zlib's `MAX_WBITS`.
const DEF_MEM_LEVEL: c_int = 8;
const MAX_WBITS: c_int = 15;

/// A stream zlib refused to set up: its return code and message.
#[derive(Debug, thiserror::Error)]
#[error("zlib could not initialise a stream ({code}): {message}")]
pub(super) struct InitError {
    pub code: c_int,
    pub message: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Deflate,
    Inflate,
}

/// A zlib `z_stream` set up for deflating or inflating, freed (`deflateEnd`/`inflateEnd`) on drop.
pub(super) struct ZStream {
    /// Owned (from `Box::into_raw`) and never moved: zlib's state points back at it.
    strm: NonNull<z::z_stream>,
    kind: Kind,
}

/// What one call did: zlib's return code and the bytes of input read and of output written.
pub(super) struct Step {
    pub code: c_int,
    pub read: usize,
    pub written: usize,
}

/// zlib's allocator: `calloc`, as zlib's own default (which the JDK's streams use).
extern "C" fn zalloc(_opaque: *mut c_void, items: c_uint, size: c_uint) -> *mut c_void {
    // SAFETY: calloc may be called with any sizes (it checks the product for overflow and returns
    // null when it cannot allocate, which zlib reports as Z_MEM_ERROR).
    unsafe { libc::calloc(items as libc::size_t, size as libc::size_t) }
}

extern "C" fn zfree(_opaque: *mut c_void, address: *mut c_void) {
    // SAFETY: zlib frees only what `zalloc` returned (calloc'd memory), once.
    unsafe { libc::free(address) }
}

impl ZStream {
    /// `deflateInit2` as Deflater.c calls it: zlib format, or raw deflate with `nowrap`.
    pub fn deflater(level: i32, strategy: i32, nowrap: bool) -> Result<ZStream, InitError> {
        let bits = if nowrap { -MAX_WBITS } else { MAX_WBITS };
        Self::init(Kind::Deflate, |strm| {
            // SAFETY: `strm` is a valid, zeroed z_stream with allocators, not yet initialised;
            // the version string and struct size are those of the zlib linked in.
            unsafe {
                z::deflateInit2_(
                    strm,
                    level,
                    z::Z_DEFLATED,
                    bits,
                    DEF_MEM_LEVEL,
                    strategy,
                    z::zlibVersion(),
                    std::mem::size_of::<z::z_stream>() as c_int,
                )
            }
        })
    }

    /// `inflateInit2` as Inflater.c calls it.
    pub fn inflater(nowrap: bool) -> Result<ZStream, InitError> {
        let bits = if nowrap { -MAX_WBITS } else { MAX_WBITS };
        Self::init(Kind::Inflate, |strm| {
            // SAFETY: as in `deflater`.
            unsafe { z::inflateInit2_(strm, bits, z::zlibVersion(), std::mem::size_of::<z::z_stream>() as c_int) }
        })
    }

    fn init(kind: Kind, init: impl FnOnce(*mut z::z_stream) -> c_int) -> Result<ZStream, InitError> {
        let strm = Box::into_raw(Box::new(z::z_stream {
            next_in: std::ptr::null_mut(),
            avail_in: 0,
            total_in: 0,
            next_out: std::ptr::null_mut(),
            avail_out: 0,
            total_out: 0,
            msg: std::ptr::null_mut(),
            state: std::ptr::null_mut(),
            zalloc,
            zfree,
            opaque: std::ptr::null_mut(),
            data_type: 0,
            adler: 0,
            reserved: 0,
        }));
        let code = init(strm);
        if code == Z_OK {
            // Box::into_raw never returns null.
            return Ok(ZStream { strm: NonNull::new(strm).expect("a Box is never null"), kind });
        }
        // SAFETY: `strm` came from Box::into_raw above; a failed init leaves no state behind
        // (zlib frees what it allocated), so the box is the only allocation.
        let strm = unsafe { Box::from_raw(strm) };
        Err(InitError { code, message: message(&strm).unwrap_or_else(|| format!("zlib error {code}")) })
    }

    /// `deflate(strm, flush)` over these buffers.
    pub fn deflate(&mut self, input: &[u8], output: &mut [u8], flush: i32) -> Step {
        debug_assert!(self.kind == Kind::Deflate);
        // SAFETY: the stream was set up by deflateInit2 (`kind`); `run` points it at live buffers.
        self.run(input, output, |strm| unsafe { z::deflate(strm, flush) })
    }

    /// `deflateParams(strm, level, strategy)` over these buffers (it may compress pending input).
    pub fn deflate_params(&mut self, input: &[u8], output: &mut [u8], level: i32, strategy: i32) -> Step {
        debug_assert!(self.kind == Kind::Deflate);
        // SAFETY: as in `deflate`.
        self.run(input, output, |strm| unsafe { z::deflateParams(strm, level, strategy) })
    }

    /// `inflate(strm, Z_PARTIAL_FLUSH)` over these buffers, as Inflater.c calls it.
    pub fn inflate(&mut self, input: &[u8], output: &mut [u8]) -> Step {
        debug_assert!(self.kind == Kind::Inflate);
        // SAFETY: the stream was set up by inflateInit2 (`kind`); `run` points it at live buffers.
        self.run(input, output, |strm| unsafe { z::inflate(strm, z::Z_PARTIAL_FLUSH) })
    }

    /// Points the stream at the buffers for one call, then unhooks them.
    fn run(&mut self, input: &[u8], output: &mut [u8], call: impl FnOnce(*mut z::z_stream) -> c_int) -> Step {
        // Java passes int lengths, so both fit zlib's uInt.
        let (in_len, out_len) = (input.len() as c_uint, output.len() as c_uint);
        let strm = self.strm.as_ptr();
        // SAFETY: `strm` is owned by self and valid (see `strm`); zlib only reads through
        // next_in (its `z_const` pointer) and writes at most avail_out bytes at next_out, both
        // within slices borrowed for this call; the pointers are cleared before they end.
        unsafe {
            (*strm).next_in = input.as_ptr() as *mut u8;
            (*strm).avail_in = in_len;
            (*strm).next_out = output.as_mut_ptr();
            (*strm).avail_out = out_len;
            let code = call(strm);
            let read = (in_len - (*strm).avail_in) as usize;
            let written = (out_len - (*strm).avail_out) as usize;
            (*strm).next_in = std::ptr::null_mut();
            (*strm).avail_in = 0;
            (*strm).next_out = std::ptr::null_mut();
            (*strm).avail_out = 0;
            Step { code, read, written }
        }
    }

    /// `deflateSetDictionary` or `inflateSetDictionary`.
    pub fn set_dictionary(&mut self, dictionary: &[u8]) -> c_int {
        let strm = self.strm.as_ptr();
        let (ptr, len) = (dictionary.as_ptr(), dictionary.len() as c_uint);
        // SAFETY: the stream is initialised for `kind`; zlib copies `len` bytes from the slice.
        unsafe {
            match self.kind {
                Kind::Deflate => z::deflateSetDictionary(strm, ptr, len),
                Kind::Inflate => z::inflateSetDictionary(strm, ptr, len),
            }
        }
    }

    /// `deflateReset` or `inflateReset`.
    pub fn reset(&mut self) -> c_int {
        let strm = self.strm.as_ptr();
        // SAFETY: the stream is initialised for `kind`.
        unsafe {
            match self.kind {
                Kind::Deflate => z::deflateReset(strm),
                Kind::Inflate => z::inflateReset(strm),
            }
        }
    }

    /// `strm->adler`: the running Adler-32 (or the dictionary's, or the one the stream needs).
    pub fn adler(&self) -> u32 {
        // SAFETY: `strm` is valid while self lives; this only reads a field.
        unsafe { (*self.strm.as_ptr()).adler as u32 }
    }

    /// `strm->msg`, zlib's message for the last error.
    pub fn message(&self) -> Option<String> {
        // SAFETY: `strm` is valid while self lives.
        message(unsafe { &*self.strm.as_ptr() })
    }
}

fn message(strm: &z::z_stream) -> Option<String> {
    if strm.msg.is_null() {
        return None;
    }
    // SAFETY: zlib sets msg to null or to one of its static NUL-terminated strings.
    Some(unsafe { CStr::from_ptr(strm.msg) }.to_string_lossy().into_owned())
}

impl Drop for ZStream {
    fn drop(&mut self) {
        let strm = self.strm.as_ptr();
        // SAFETY: the stream is initialised for `kind` and ended once, here; then the box made in
        // `init` is freed (zlib keeps no pointer to it after deflateEnd/inflateEnd).
        unsafe {
            match self.kind {
                Kind::Deflate => z::deflateEnd(strm),
                Kind::Inflate => z::inflateEnd(strm),
            };
            drop(Box::from_raw(strm));
        }
    }
}
