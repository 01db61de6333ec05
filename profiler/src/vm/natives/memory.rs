//! `jdk.internal.misc.Unsafe` (instance methods: `a[0]` is the Unsafe itself): field and array access by offset, compare-and-set, fences and a
//! small off-heap arena. Offsets are VM-chosen: an instance field's offset is its slot, a static
//! field's is its global slot tagged with [`STATIC_TAG`], an array element's is
//! `ARRAY_BASE + index * scale`, as the JDK computes it from `arrayBaseOffset`/`arrayIndexScale`.

use super::{NativeFn, Registry, VmResult};
use crate::vm::class::ClassKind;
use crate::vm::heap::{ObjData, Ref};
use crate::vm::tracker::HeapLoc;
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};

pub(crate) const ARRAY_BASE: i64 = 16;
pub(crate) const STATIC_TAG: i64 = 1 << 40;
const MEMORY_BASE: u64 = 0x1_0000_0000;

/// Where an (object, offset) pair points.
enum Place {
    Field(Ref, usize),
    Static(usize),
    Array(Ref, usize),
    Memory(u64),
}

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    const U: &str = "jdk/internal/misc/Unsafe";
    // The JDK builds sub-word compare-and-swap from int CAS on the enclosing 4-byte word; field
    // offsets here are slots, not bytes, so the VM does them on the field itself.
    reg.add(U, "compareAndExchangeByte", "(Ljava/lang/Object;JBB)B", cas::<T, b'B', true>);
    reg.add(U, "compareAndExchangeShort", "(Ljava/lang/Object;JSS)S", cas::<T, b'S', true>);
    reg.add(U, "compareAndSetByte", "(Ljava/lang/Object;JBB)Z", cas::<T, b'B', false>);
    reg.add(U, "compareAndSetShort", "(Ljava/lang/Object;JSS)Z", cas::<T, b'S', false>);
    reg.add(U, "park", "(ZJ)V", |vm, t, a| {
        vm.park(t, a[1] != 0, a[2] as i64)?;
        Ok(0)
    });
    reg.add(U, "unpark", "(Ljava/lang/Object;)V", |vm, _, a| {
        vm.unpark(a[1] as Ref);
        Ok(0)
    });
    reg.add(U, "arrayBaseOffset0", "(Ljava/lang/Class;)I", |_, _, _| Ok(ARRAY_BASE as u64));
    reg.add(U, "arrayIndexScale0", "(Ljava/lang/Class;)I", |vm, _, a| {
        let c = vm.class_of_mirror(a[1] as Ref);
        Ok(match vm.classes[c as usize].kind {
            ClassKind::Array { elem, .. } => elem.size() as u64,
            _ => 0,
        })
    });
    reg.add(U, "objectFieldOffset1", "(Ljava/lang/Class;Ljava/lang/String;)J", |vm, t, a| {
        let c = vm.class_of_mirror(a[1] as Ref);
        let name = vm.rust_string(a[2] as Ref);
        match vm.field_slot(c, &name) {
            Some(s) => Ok(s as u64),
            None => Err(vm.throw_new(t, "java/lang/InternalError", Some(&name))),
        }
    });
    reg.add(U, "objectFieldOffset0", "(Ljava/lang/reflect/Field;)J", |vm, t, a| {
        let (c, name) = reflected_field(vm, a[1] as Ref);
        match vm.field_slot(c, &name) {
            Some(s) => Ok(s as u64),
            None => Err(vm.throw_new(t, "java/lang/InternalError", Some(&name))),
        }
    });
    reg.add(U, "staticFieldOffset0", "(Ljava/lang/reflect/Field;)J", |vm, t, a| {
        let (c, name) = reflected_field(vm, a[1] as Ref);
        match vm.classes[c as usize].field(&name, None).filter(|f| f.is_static()) {
            Some(f) => Ok((STATIC_TAG | f.slot as i64) as u64),
            None => Err(vm.throw_new(t, "java/lang/InternalError", Some(&name))),
        }
    });
    reg.add(U, "staticFieldBase0", "(Ljava/lang/reflect/Field;)Ljava/lang/Object;", |vm, _, a| {
        let (c, _) = reflected_field(vm, a[1] as Ref);
        Ok(vm.mirror(c) as u64)
    });
    reg.add(U, "shouldBeInitialized0", "(Ljava/lang/Class;)Z", |vm, _, a| {
        let c = vm.class_of_mirror(a[1] as Ref);
        Ok((vm.classes[c as usize].init.get() != crate::vm::class::InitState::Initialized) as u64)
    });
    reg.add(U, "ensureClassInitialized0", "(Ljava/lang/Class;)V", |vm, t, a| {
        let c = vm.class_of_mirror(a[1] as Ref);
        vm.initialize(t, c)?;
        Ok(0)
    });
    reg.add(U, "allocateInstance", "(Ljava/lang/Class;)Ljava/lang/Object;", |vm, t, a| {
        let c = vm.class_of_mirror(a[1] as Ref);
        vm.initialize(t, c)?;
        Ok(vm.alloc_instance(c) as u64)
    });
    reg.add(U, "throwException", "(Ljava/lang/Throwable;)V", |_, _, a| Err(Fault::Exception(a[1] as Ref)));
    for fence in ["storeFence", "loadFence", "fullFence"] {
        reg.add(U, fence, "()V", |_, _, _| Ok(0));
    }
    reg.add(U, "allocateMemory0", "(J)J", |vm, _, a| Ok(vm.native_memory.allocate(a[1] as usize)));
    reg.add(U, "reallocateMemory0", "(JJ)J", |vm, _, a| Ok(vm.native_memory.reallocate(a[1], a[3] as usize)));
    reg.add(U, "freeMemory0", "(J)V", |vm, _, a| {
        vm.native_memory.free(a[1]);
        Ok(0)
    });
    reg.add(U, "setMemory0", "(Ljava/lang/Object;JJB)V", |vm, t, a| {
        let (o, off, len, v) = (a[1] as Ref, a[2] as i64, a[4] as i64, a[6] as u8);
        bulk(vm, |vm| {
            for i in 0..len {
                write(vm, t, o, off + i, 1, v as u64)?;
            }
            Ok(0)
        })
    });
    reg.add(U, "copySwapMemory0", "(Ljava/lang/Object;JLjava/lang/Object;JJJ)V", |vm, t, a| {
        // Copies elements of `size` bytes, reversing the bytes of each (endianness conversion).
        let (src, soff, dst, doff, len, size) =
            (a[1] as Ref, a[2] as i64, a[4] as Ref, a[5] as i64, a[7] as i64, a[9] as i64);
        let bytes: Vec<u64> = (0..len).map(|i| read(vm, t, src, soff + i, 1)).collect::<VmResult<_>>()?;
        bulk(vm, |vm| {
            for (i, chunk) in bytes.chunks(size.max(1) as usize).enumerate() {
                for (j, &b) in chunk.iter().rev().enumerate() {
                    write(vm, t, dst, doff + (i * size as usize + j) as i64, 1, b)?;
                }
            }
            Ok(0)
        })
    });
    reg.add(U, "copyMemory0", "(Ljava/lang/Object;JLjava/lang/Object;JJ)V", |vm, t, a| {
        let (src, soff, dst, doff, len) = (a[1] as Ref, a[2] as i64, a[4] as Ref, a[5] as i64, a[7] as i64);
        let bytes: Vec<u64> = (0..len).map(|i| read(vm, t, src, soff + i, 1)).collect::<VmResult<_>>()?;
        bulk(vm, |vm| {
            for (i, b) in bytes.into_iter().enumerate() {
                write(vm, t, dst, doff + i as i64, 1, b)?;
            }
            Ok(0)
        })
    });
}

/// Runs a bulk write: mapped files get its changes once, at the end.
fn bulk<T: Tracker>(vm: &mut Vm<T>, f: impl FnOnce(&mut Vm<T>) -> VmResult<u64>) -> VmResult<u64> {
    vm.native_memory.begin_bulk();
    let r = f(vm);
    vm.native_memory.end_bulk();
    r
}

/// The declaring class and name of a `java.lang.reflect.Field`.
fn reflected_field<T: Tracker>(vm: &Vm<T>, field: Ref) -> (u32, String) {
    let clazz = vm.get_named(field, "clazz") as Ref;
    let name = vm.get_named(field, "name") as Ref;
    (vm.class_of_mirror(clazz), vm.rust_string(name))
}

fn place<T: Tracker>(vm: &Vm<T>, o: Ref, off: i64) -> Place {
    if o == 0 {
        return Place::Memory(off as u64);
    }
    if off & STATIC_TAG != 0 && vm.heap.get(o).class == vm.wk.class {
        return Place::Static((off & !STATIC_TAG) as usize);
    }
    match vm.heap.get(o).data {
        ObjData::Fields(_) => Place::Field(o, off as usize),
        _ => Place::Array(o, (off - ARRAY_BASE) as usize),
    }
}

/// The heap location an `Unsafe` access of a reference at `off` of `o` reaches, and the reference
/// it holds now (none off the heap or out of bounds).
pub(crate) fn reference_at<T: Tracker>(vm: &Vm<T>, o: Ref, off: i64) -> Option<(HeapLoc, u64)> {
    match place(vm, o, off) {
        Place::Field(r, s) => Some((HeapLoc::Field { obj: r, slot: s as u32 }, *vm.fields(r).get(s)?)),
        Place::Static(s) => Some((HeapLoc::Static { slot: s as u32 }, *vm.statics.get(s)?)),
        Place::Array(r, byte) => match &vm.heap.get(r).data {
            ObjData::Refs(a) if byte % 4 == 0 => {
                Some((HeapLoc::Element { array: r, index: (byte / 4) as u32 }, *a.get(byte / 4)? as u64))
            }
            _ => None,
        },
        Place::Memory(_) => None,
    }
}

/// Reads `size` bytes (1, 2, 4 or 8) at `off` of `o`, zero-extended into a u64.
pub(crate) fn read<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, o: Ref, off: i64, size: usize) -> VmResult<u64> {
    Ok(match place(vm, o, off) {
        Place::Field(r, s) => vm.fields(r).get(s).copied().unwrap_or(0),
        Place::Static(s) => vm.statics[s],
        Place::Array(r, byte) => match array_read(&vm.heap.get(r).data, byte, size) {
            Some(v) => v,
            None => return Err(vm.throw_new(t, "java/lang/InternalError", Some("Unsafe access out of bounds"))),
        },
        Place::Memory(addr) => match vm.native_memory.read(addr, size) {
            Some(v) => v,
            None => {
                return Err(Fault::Fatal(VmError::Unsupported(format!("Unsafe read of unallocated address {addr:#x}"))))
            }
        },
    })
}

pub(crate) fn write<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    o: Ref,
    off: i64,
    size: usize,
    v: u64,
) -> VmResult<()> {
    match place(vm, o, off) {
        Place::Field(r, s) => vm.set_field(r, s as u32, v),
        Place::Static(s) => vm.statics[s] = v,
        Place::Array(r, byte) => {
            if !array_write(&mut vm.heap.get_mut(r).data, byte, size, v) {
                return Err(vm.throw_new(t, "java/lang/InternalError", Some("Unsafe access out of bounds")));
            }
        }
        Place::Memory(addr) => {
            if !vm.native_memory.write(addr, size, v) {
                return Err(Fault::Fatal(VmError::Unsupported(format!(
                    "Unsafe write to unallocated address {addr:#x}"
                ))));
            }
        }
    }
    Ok(())
}

/// Little-endian byte view of a primitive array: `size` bytes at byte offset `byte`, which may
/// straddle elements (the JDK's vectorized mismatch reads longs out of int and char arrays).
fn array_read(data: &ObjData, byte: usize, size: usize) -> Option<u64> {
    if let ObjData::Refs(a) = data {
        return (size == 4 && byte % 4 == 0).then(|| a.get(byte / 4).map(|&x| x as u64)).flatten();
    }
    let width = elem_width(data)?;
    if size == width && byte % width == 0 {
        return element_bits(data, byte / width);
    }
    let mut v = 0u64;
    for i in 0..size {
        let at = byte + i;
        let bits = element_bits(data, at / width)?;
        v |= ((bits >> (8 * (at % width))) & 0xFF) << (8 * i);
    }
    Some(v)
}

fn array_write(data: &mut ObjData, byte: usize, size: usize, v: u64) -> bool {
    if let ObjData::Refs(a) = data {
        return match a.get_mut(byte / 4) {
            Some(slot) if size == 4 && byte % 4 == 0 => {
                *slot = v as Ref;
                true
            }
            _ => false,
        };
    }
    let Some(width) = elem_width(data) else { return false };
    if size == width && byte % width == 0 {
        return set_element_bits(data, byte / width, v);
    }
    for i in 0..size {
        let at = byte + i;
        let Some(old) = element_bits(data, at / width) else { return false };
        let shift = 8 * (at % width);
        let new = (old & !(0xFF << shift)) | (((v >> (8 * i)) & 0xFF) << shift);
        set_element_bits(data, at / width, new);
    }
    true
}

fn elem_width(data: &ObjData) -> Option<usize> {
    Some(match data {
        ObjData::Bytes(_) => 1,
        ObjData::Chars(_) | ObjData::Shorts(_) => 2,
        ObjData::Ints(_) | ObjData::Floats(_) | ObjData::Refs(_) => 4,
        ObjData::Longs(_) | ObjData::Doubles(_) => 8,
        ObjData::Fields(_) => return None,
    })
}

/// The raw bits of element `i`, zero-extended.
fn element_bits(data: &ObjData, i: usize) -> Option<u64> {
    Some(match data {
        ObjData::Bytes(a) => *a.get(i)? as u8 as u64,
        ObjData::Chars(a) => *a.get(i)? as u64,
        ObjData::Shorts(a) => *a.get(i)? as u16 as u64,
        ObjData::Ints(a) => *a.get(i)? as u32 as u64,
        ObjData::Floats(a) => a.get(i)?.to_bits() as u64,
        ObjData::Longs(a) => *a.get(i)? as u64,
        ObjData::Doubles(a) => a.get(i)?.to_bits(),
        ObjData::Refs(a) => *a.get(i)? as u64,
        ObjData::Fields(_) => return None,
    })
}

fn set_element_bits(data: &mut ObjData, i: usize, v: u64) -> bool {
    macro_rules! set {
        ($a:expr, $conv:expr) => {
            match $a.get_mut(i) {
                Some(slot) => {
                    *slot = $conv;
                    true
                }
                None => false,
            }
        };
    }
    match data {
        ObjData::Bytes(a) => set!(a, v as u8 as i8),
        ObjData::Chars(a) => set!(a, v as u16),
        ObjData::Shorts(a) => set!(a, v as u16 as i16),
        ObjData::Ints(a) => set!(a, v as u32 as i32),
        ObjData::Floats(a) => set!(a, f32::from_bits(v as u32)),
        ObjData::Longs(a) => set!(a, v as i64),
        ObjData::Doubles(a) => set!(a, f64::from_bits(v)),
        ObjData::Refs(a) => set!(a, v as Ref),
        ObjData::Fields(_) => false,
    }
}

/// Access width and the slot form of a value of kind `K` ('I', 'J', 'L', …).
pub(crate) const fn width(k: u8) -> usize {
    match k {
        b'Z' | b'B' => 1,
        b'S' | b'C' => 2,
        b'I' | b'F' | b'L' => 4,
        _ => 8,
    }
}

/// A raw read, extended to the slot form Java expects for kind `k`.
pub(crate) fn to_slot(k: u8, raw: u64) -> u64 {
    match k {
        b'B' => raw as u8 as i8 as i32 as u32 as u64,
        b'Z' => (raw as u8 != 0) as u64,
        b'S' => raw as u16 as i16 as i32 as u32 as u64,
        b'C' => raw as u16 as u64,
        b'I' | b'F' | b'L' => raw & 0xFFFF_FFFF,
        _ => raw,
    }
}

fn get<T: Tracker, const K: u8>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let raw = read(vm, t, a[1] as Ref, a[2] as i64, width(K))?;
    Ok(to_slot(K, raw))
}

fn put<T: Tracker, const K: u8>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let v = if K == b'Z' { a[4] & 1 } else { a[4] };
    write(vm, t, a[1] as Ref, a[2] as i64, width(K), v)?;
    Ok(0)
}

/// compareAndSet (EXCHANGE = false) or compareAndExchange (EXCHANGE = true).
fn cas<T: Tracker, const K: u8, const EXCHANGE: bool>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let (o, off) = (a[1] as Ref, a[2] as i64);
    let (expected, x) = if K == b'J' { (a[4], a[6]) } else { (a[4], a[5]) };
    let mask = if width(K) == 8 { u64::MAX } else { (1u64 << (8 * width(K))) - 1 };
    let current = read(vm, t, o, off, width(K))?;
    let hit = current & mask == expected & mask;
    if hit {
        write(vm, t, o, off, width(K), x)?;
    }
    Ok(if EXCHANGE { to_slot(K, current) } else { hit as u64 })
}

/// Binds the family of typed accessors by name: get/put{Int,Long,…}[Volatile],
/// compareAndSet{Int,Long,Reference}, compareAndExchange{…}.
pub(super) fn bind_unsafe_access<T: Tracker>(name: &str) -> Option<NativeFn<T>> {
    let name = name.strip_suffix("Volatile").unwrap_or(name);
    macro_rules! by_type {
        ($rest:expr, $f:ident $(, $extra:expr)?) => {
            match $rest {
                "Int" => Some($f::<T, b'I' $(, $extra)?>),
                "Long" => Some($f::<T, b'J' $(, $extra)?>),
                "Reference" => Some($f::<T, b'L' $(, $extra)?>),
                "Boolean" => Some($f::<T, b'Z' $(, $extra)?>),
                "Byte" => Some($f::<T, b'B' $(, $extra)?>),
                "Short" => Some($f::<T, b'S' $(, $extra)?>),
                "Char" => Some($f::<T, b'C' $(, $extra)?>),
                "Float" => Some($f::<T, b'F' $(, $extra)?>),
                "Double" => Some($f::<T, b'D' $(, $extra)?>),
                _ => None,
            }
        };
    }
    if let Some(rest) = name.strip_prefix("compareAndSet") {
        return by_type!(rest, cas, false);
    }
    if let Some(rest) = name.strip_prefix("compareAndExchange") {
        return by_type!(rest, cas, true);
    }
    if let Some(rest) = name.strip_prefix("get") {
        return by_type!(rest, get);
    }
    if let Some(rest) = name.strip_prefix("put") {
        return by_type!(rest, put);
    }
    None
}

/// Off-heap memory for `Unsafe.allocateMemory`: blocks at distinct, never-reused addresses.
#[derive(Default)]
pub struct NativeMemory {
    blocks: std::collections::BTreeMap<u64, Block>,
    next: u64,
    /// Inside a bulk operation (`copyMemory`, `setMemory`): writes to mapped files are written
    /// through once, at its end (`end_bulk`), instead of one by one.
    bulk: bool,
}

/// A block of native memory: allocated by the program, the JDK image mapped read-only by the VM
/// (as HotSpot maps it for `NativeImageBuffer`), or a file region the program mapped
/// (`FileChannel.map`).
enum Block {
    Owned(Vec<u8>),
    Mapped(std::sync::Arc<memmap2::Mmap>),
    File(FileMap),
}

/// A region of a file mapped by the program: its bytes, read in when mapped. A shared writable
/// mapping (`MapMode.READ_WRITE`) writes every change through to the file at once, so the file
/// reads as it would with the pages shared (reads elsewhere see the writes; changes made to the
/// file by other means after the mapping are not seen through it). A read-only or private mapping
/// keeps its changes to itself.
struct FileMap {
    bytes: Vec<u8>,
    /// The file and the position of the region, for a shared writable mapping.
    sink: Option<(std::fs::File, u64)>,
    /// Bytes changed during a bulk operation, not yet written through.
    dirty: Option<(usize, usize)>,
}

impl FileMap {
    fn changed(&mut self, from: usize, to: usize, bulk: bool) {
        if self.sink.is_none() {
            return;
        }
        self.dirty = Some(match self.dirty {
            Some((a, b)) => (a.min(from), b.max(to)),
            None => (from, to),
        });
        if !bulk {
            self.write_through();
        }
    }

    fn write_through(&mut self) {
        use std::os::unix::fs::FileExt;
        if let (Some((file, position)), Some((from, to))) = (&self.sink, self.dirty.take()) {
            // A failing write (a full disk) is lost, as a failing page write-back is for mmap.
            file.write_all_at(&self.bytes[from..to], position + from as u64).ok();
        }
    }
}

impl Block {
    fn bytes(&self) -> &[u8] {
        match self {
            Block::Owned(v) => v,
            Block::Mapped(m) => m,
            Block::File(f) => &f.bytes,
        }
    }
}

impl NativeMemory {
    pub fn allocate(&mut self, size: usize) -> u64 {
        let addr = self.reserve(size);
        self.blocks.insert(addr, Block::Owned(vec![0; size]));
        addr
    }
    fn reserve(&mut self, size: usize) -> u64 {
        let addr = MEMORY_BASE + self.next;
        self.next += (size as u64 + 15) & !15;
        self.next += 16;
        addr
    }
    /// Places a read-only mapping in the address space; its address.
    pub fn map(&mut self, map: std::sync::Arc<memmap2::Mmap>) -> u64 {
        let addr = self.reserve(map.len());
        self.blocks.insert(addr, Block::Mapped(map));
        addr
    }
    /// Places a file region the program mapped (`bytes`, read from the file at `position`); with
    /// `sink`, its changes are written through to that file.
    pub fn map_file(&mut self, bytes: Vec<u8>, sink: Option<(std::fs::File, u64)>) -> u64 {
        let addr = self.reserve(bytes.len().max(1));
        self.blocks.insert(addr, Block::File(FileMap { bytes, sink, dirty: None }));
        addr
    }
    /// Writes through what a mapped file's region at `addr` changed (`MappedByteBuffer.force`).
    pub fn force(&mut self, addr: u64) {
        if let Some((_, Block::File(f))) = self.blocks.range_mut(..=addr).next_back() {
            f.write_through();
        }
    }
    pub fn begin_bulk(&mut self) {
        self.bulk = true;
    }
    /// Ends a bulk operation: what it changed in mapped files is written through.
    pub fn end_bulk(&mut self) {
        self.bulk = false;
        for block in self.blocks.values_mut() {
            if let Block::File(f) = block {
                f.write_through();
            }
        }
    }
    pub fn reallocate(&mut self, addr: u64, size: usize) -> u64 {
        let old = self.blocks.remove(&addr);
        let new = self.allocate(size);
        if let (Some(old), Some(Block::Owned(b))) = (old, self.blocks.get_mut(&new)) {
            let n = old.bytes().len().min(size);
            b[..n].copy_from_slice(&old.bytes()[..n]);
        }
        new
    }
    pub fn free(&mut self, addr: u64) {
        if let Some(Block::File(mut f)) = self.blocks.remove(&addr) {
            f.write_through();
        }
    }
    fn locate(&self, addr: u64, size: usize) -> Option<(&[u8], usize)> {
        let (&base, block) = self.blocks.range(..=addr).next_back()?;
        let off = (addr - base) as usize;
        let bytes = block.bytes();
        (off + size <= bytes.len()).then_some((bytes, off))
    }
    pub fn read(&self, addr: u64, size: usize) -> Option<u64> {
        let (b, off) = self.locate(addr, size)?;
        Some((0..size).fold(0u64, |v, i| v | (b[off + i] as u64) << (8 * i)))
    }
    /// `len` bytes from `addr`, if they lie in one block.
    pub fn read_bytes(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        let (b, off) = self.locate(addr, len)?;
        Some(b[off..off + len].to_vec())
    }
    /// The writable bytes of the block holding `addr..addr + size`, the offset of `addr` in them,
    /// and the file mapping they belong to (if any). The JDK image is read-only.
    fn writable(&mut self, addr: u64, size: usize) -> Option<(usize, &mut Block)> {
        let (&base, block) = self.blocks.range_mut(..=addr).next_back()?;
        let off = (addr - base) as usize;
        match block {
            Block::Owned(b) if off + size <= b.len() => Some((off, block)),
            Block::File(f) if off + size <= f.bytes.len() => Some((off, block)),
            _ => None,
        }
    }
    /// Writes to program-allocated memory or a file the program mapped.
    pub fn write(&mut self, addr: u64, size: usize, v: u64) -> bool {
        let bulk = self.bulk;
        let Some((off, block)) = self.writable(addr, size) else {
            return false;
        };
        let bytes = match block {
            Block::Owned(b) => b.as_mut_slice(),
            Block::File(f) => f.bytes.as_mut_slice(),
            Block::Mapped(_) => return false,
        };
        for i in 0..size {
            bytes[off + i] = (v >> (8 * i)) as u8;
        }
        if let Block::File(f) = block {
            f.changed(off, off + size, bulk);
        }
        true
    }
    /// Writes `data` at `addr`, if it fits in one writable block.
    pub fn write_bytes(&mut self, addr: u64, data: &[u8]) -> bool {
        let bulk = self.bulk;
        let Some((off, block)) = self.writable(addr, data.len()) else {
            return false;
        };
        match block {
            Block::Owned(b) => b[off..off + data.len()].copy_from_slice(data),
            Block::File(f) => {
                f.bytes[off..off + data.len()].copy_from_slice(data);
                f.changed(off, off + data.len(), bulk);
            }
            Block::Mapped(_) => return false,
        }
        true
    }
}
