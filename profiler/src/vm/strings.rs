//! Java strings from Rust and back. JDK 17 strings are a `byte[]` plus a coder (LATIN1 or
//! UTF16, little-endian on this platform); literals are interned in one table (a GC root).

use super::heap::{ObjData, Ref};
use super::{Tracker, Vm};

const LATIN1: u64 = 0;
const UTF16: u64 = 1;

impl<T: Tracker> Vm<T> {
    pub fn new_string(&mut self, s: &str) -> Ref {
        let units: Vec<u16> = s.encode_utf16().collect();
        self.new_string_utf16(&units)
    }

    pub fn new_string_utf16(&mut self, units: &[u16]) -> Ref {
        let (bytes, coder): (Vec<i8>, u64) = if units.iter().all(|&u| u <= 0xFF) {
            (units.iter().map(|&u| u as u8 as i8).collect(), LATIN1)
        } else {
            (units.iter().flat_map(|&u| u.to_le_bytes()).map(|b| b as i8).collect(), UTF16)
        };
        let byte_array = self.wk.byte_array;
        let value = self.heap.alloc(byte_array, ObjData::Bytes(bytes.into()));
        let s = self.alloc_instance(self.wk.string);
        if let ObjData::Fields(f) = &mut self.heap.get_mut(s).data {
            f[self.wk.string_value as usize] = value as u64;
            f[self.wk.string_coder as usize] = coder;
        }
        s
    }

    /// The UTF-16 code units of a Java string.
    pub fn string_units(&self, s: Ref) -> Vec<u16> {
        let (value, coder) = match &self.heap.get(s).data {
            ObjData::Fields(f) => (f[self.wk.string_value as usize] as Ref, f[self.wk.string_coder as usize]),
            _ => return Vec::new(),
        };
        if value == 0 {
            return Vec::new();
        }
        match &self.heap.get(value).data {
            ObjData::Bytes(b) if coder == LATIN1 => b.iter().map(|&x| x as u8 as u16).collect(),
            ObjData::Bytes(b) => b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0] as u8, c[1] as u8])).collect(),
            _ => Vec::new(),
        }
    }

    pub fn rust_string(&self, s: Ref) -> String {
        String::from_utf16_lossy(&self.string_units(s))
    }

    /// The interned string with this content (string literals, `String.intern`).
    pub fn intern_str(&mut self, s: &str) -> Ref {
        self.intern_utf16(s.encode_utf16().collect())
    }

    /// The interned string with these UTF-16 code units.
    pub fn intern_utf16(&mut self, units: Box<[u16]>) -> Ref {
        if let Some(&r) = self.interned.get(&units) {
            return r;
        }
        let r = self.new_string_utf16(&units);
        self.interned.insert(units, r);
        r
    }

    /// `String.intern()`: the canonical instance, which is `s` itself the first time.
    pub fn intern(&mut self, s: Ref) -> Ref {
        let units: Box<[u16]> = self.string_units(s).into();
        *self.interned.entry(units).or_insert(s)
    }
}
