//! Java2D on `BufferedImage`s, as a headless HotSpot draws them: the native loops libawt registers
//! for the pixel formats a `BufferedImage` has (blits between formats, mask blits with Porter-Duff
//! Src and SrcOver, the transform helper that samples an image under an affine transform),
//! written here over the Java arrays the rasters hold. They are registered as libawt registers
//! its own (`GraphicsPrimitive`s with a native handle, found by `GraphicsPrimitiveMgr.locate`);
//! the JDK's Java loops do the rest (fills, lines, custom images). The pixel arithmetic is libawt's:
//! its 8-bit multiply and divide tables, its grey weights, the transform helper's 32.32 fixed-point
//! stepping from pixel centres, so that what a program draws is HotSpot's pixel for pixel.
//!
//! What is not here: writing through these loops into indexed and packed-binary images (the JDK's
//! Java loops write those), and antialiased shapes and text.

use super::{Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};
use std::collections::HashMap;
use std::rc::Rc;

/// The raster of each `BufImgSurfaceData` (by the surface object), as its `initRaster` said it.
/// An entry may outlive its surface: a new surface at the same reference replaces it at its own
/// `initRaster`, only surfaces of the registered formats reach the loops, and entries whose surface
/// is gone are dropped whenever the table has doubled.
#[derive(Default)]
pub struct Surfaces {
    by_surface: HashMap<Ref, Surface>,
    /// The table's size at which the dead entries are next dropped.
    prune_at: usize,
}

/// Where a surface's pixels are: offsets and strides in bytes, as libawt's `SurfaceDataRasInfo`.
#[derive(Clone)]
struct Surface {
    /// The surface object's class: a reference reused by another object is not this surface.
    class: u32,
    array: Ref,
    offset: i64,
    bit_offset: i64,
    width: i32,
    height: i32,
    /// Bytes between pixels (bits, for a packed binary raster).
    pixel_stride: i64,
    scan_stride: i64,
    format: Format,
    /// An indexed image's colours (ARGB), 256 entries.
    lut: Rc<[u32]>,
}

/// A `BufferedImage`'s pixel layout, as its `SurfaceType` names it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Format {
    IntRgb,
    IntArgb,
    IntArgbPre,
    IntBgr,
    ThreeByteBgr,
    FourByteAbgr,
    FourByteAbgrPre,
    Ushort565Rgb,
    Ushort555Rgb,
    ByteGray,
    UshortGray,
    /// 8-bit indices into the colour model's table.
    Indexed,
    /// 1, 2 or 4 bits a pixel, packed into bytes, indices into the table.
    Binary(u8),
}

/// The formats, by their `SurfaceType` constant and its description (`SurfaceType.desc`).
const FORMATS: &[(&str, &str, Format)] = &[
    ("IntRgb", "Integer RGB", Format::IntRgb),
    ("IntArgb", "Integer ARGB", Format::IntArgb),
    ("IntArgbPre", "Integer ARGB Premultiplied", Format::IntArgbPre),
    ("IntBgr", "Integer BGR", Format::IntBgr),
    ("ThreeByteBgr", "3 Byte BGR", Format::ThreeByteBgr),
    ("FourByteAbgr", "4 Byte ABGR", Format::FourByteAbgr),
    ("FourByteAbgrPre", "4 Byte ABGR Premultiplied", Format::FourByteAbgrPre),
    ("Ushort565Rgb", "Short 565 RGB", Format::Ushort565Rgb),
    ("Ushort555Rgb", "Short 555 RGB", Format::Ushort555Rgb),
    ("ByteGray", "8-bit Gray", Format::ByteGray),
    ("UshortGray", "16-bit Gray", Format::UshortGray),
    ("ByteIndexed", "8-bit Indexed", Format::Indexed),
    ("ByteIndexedOpaque", "8-bit Indexed (Opaque)", Format::Indexed),
    ("ByteIndexedBm", "8-bit Indexed (Bitmask)", Format::Indexed),
    ("Index8Gray", "8-bit Palettized Gray", Format::Indexed),
    ("ByteBinary1Bit", "Packed Binary 1-bit Bitmap", Format::Binary(1)),
    ("ByteBinary2Bit", "Packed Binary 2-bit Bitmap", Format::Binary(2)),
    ("ByteBinary4Bit", "Packed Binary 4-bit Bitmap", Format::Binary(4)),
];

impl Format {
    fn premultiplied(self) -> bool {
        matches!(self, Format::IntArgbPre | Format::FourByteAbgrPre)
    }

    fn has_alpha(self) -> bool {
        matches!(self, Format::IntArgb | Format::IntArgbPre | Format::FourByteAbgr | Format::FourByteAbgrPre)
    }

    /// The loops here write it (indexed and packed formats need an inverse colour map: the JDK's
    /// Java loops write those).
    fn writable(self) -> bool {
        !matches!(self, Format::Indexed | Format::Binary(_))
    }
}

/// libawt's `mul8table[a][b]`: a·b/255, rounded as its table is built.
fn mul8(a: u32, b: u32) -> u32 {
    (0x10101 * a * b + (1 << 23)) >> 24
}

/// libawt's `div8table[a][b]`: b·255/a, 255 from b ≥ a on.
fn div8(a: u32, b: u32) -> u32 {
    if b >= a || a == 0 {
        return 255;
    }
    let inc = (0xff00_0000u32 + a / 2) / a;
    ((1u32 << 23) + b * inc) >> 24
}

fn channels(argb: u32) -> [u32; 4] {
    [argb >> 24, (argb >> 16) & 0xff, (argb >> 8) & 0xff, argb & 0xff]
}

fn pack([a, r, g, b]: [u32; 4]) -> u32 {
    (a << 24) | (r << 16) | (g << 8) | b
}

/// Premultiplied ARGB from straight ARGB, as libawt's `LoadXToIntArgbPre`.
fn premultiply(argb: u32) -> u32 {
    let [a, r, g, b] = channels(argb);
    match a {
        0xff => argb,
        _ => pack([a, mul8(a, r), mul8(a, g), mul8(a, b)]),
    }
}

/// Straight ARGB from premultiplied, as libawt's `LoadIntArgbPreTo1IntArgb`.
fn unpremultiply(argb: u32) -> u32 {
    let [a, r, g, b] = channels(argb);
    match a {
        0xff | 0 => argb,
        _ => pack([a, div8(a, r), div8(a, g), div8(a, b)]),
    }
}

impl Surface {
    fn contains(&self, x: i32, y: i32) -> bool {
        x >= 0 && y >= 0 && x < self.width && y < self.height
    }

    /// The byte address of pixel (x, y) relative to the array's start.
    fn at(&self, x: i32, y: i32) -> i64 {
        self.offset + y as i64 * self.scan_stride + x as i64 * self.pixel_stride
    }

    /// The pixel as its storage holds it (premultiplied formats stay premultiplied).
    fn load_raw(&self, data: &ObjData, x: i32, y: i32) -> u32 {
        let at = self.at(x, y);
        let byte = |i: i64| match data {
            ObjData::Bytes(b) => b.get(i as usize).map_or(0, |&v| v as u8 as u32),
            _ => 0,
        };
        let short = |i: i64| match data {
            ObjData::Shorts(s) => s.get((i / 2) as usize).map_or(0, |&v| v as u16 as u32),
            _ => 0,
        };
        let int = |i: i64| match data {
            ObjData::Ints(v) => v.get((i / 4) as usize).map_or(0, |&v| v as u32),
            _ => 0,
        };
        match self.format {
            Format::IntRgb => 0xff00_0000 | int(at),
            Format::IntArgb | Format::IntArgbPre => int(at),
            Format::IntBgr => {
                let v = int(at);
                0xff00_0000 | ((v & 0xff) << 16) | (v & 0xff00) | ((v >> 16) & 0xff)
            }
            Format::ThreeByteBgr => pack([0xff, byte(at + 2), byte(at + 1), byte(at)]),
            Format::FourByteAbgr | Format::FourByteAbgrPre => {
                pack([byte(at), byte(at + 3), byte(at + 2), byte(at + 1)])
            }
            Format::Ushort565Rgb => {
                let v = short(at);
                let (r, g, b) = ((v >> 11) & 0x1f, (v >> 5) & 0x3f, v & 0x1f);
                pack([0xff, (r << 3) | (r >> 2), (g << 2) | (g >> 4), (b << 3) | (b >> 2)])
            }
            Format::Ushort555Rgb => {
                let v = short(at);
                let (r, g, b) = ((v >> 10) & 0x1f, (v >> 5) & 0x1f, v & 0x1f);
                pack([0xff, (r << 3) | (r >> 2), (g << 3) | (g >> 2), (b << 3) | (b >> 2)])
            }
            Format::ByteGray => 0xff00_0000 | (byte(at) * 0x10101),
            Format::UshortGray => 0xff00_0000 | ((short(at) >> 8) * 0x10101),
            Format::Indexed => self.lut[byte(at) as usize & 0xff],
            Format::Binary(bits) => {
                let bit = self.bit_offset + x as i64 * bits as i64;
                let index = byte(self.offset + y as i64 * self.scan_stride + bit / 8);
                let shift = 8 - bits as i64 - (bit % 8);
                self.lut[((index >> shift) & ((1 << bits) - 1)) as usize]
            }
        }
    }

    /// The pixel as straight ARGB.
    #[cfg(test)]
    fn load(&self, data: &ObjData, x: i32, y: i32) -> u32 {
        let raw = self.load_raw(data, x, y);
        if self.format.premultiplied() {
            unpremultiply(raw)
        } else {
            raw
        }
    }

    /// The pixel as premultiplied ARGB.
    fn load_pre(&self, data: &ObjData, x: i32, y: i32) -> u32 {
        let raw = self.load_raw(data, x, y);
        if self.format.premultiplied() {
            raw
        } else {
            premultiply(raw)
        }
    }

    /// Stores `argb` as the storage holds it (premultiplied for those formats), libawt's
    /// `StoreXFrom1IntArgb`/`FromIntArgbPre` conversions.
    fn store_raw(&self, data: &mut ObjData, x: i32, y: i32, argb: u32) {
        let at = self.at(x, y);
        let [a, r, g, b] = channels(argb);
        let mut put_byte = |i: i64, v: u32| {
            if let ObjData::Bytes(bytes) = &mut *data {
                if let Some(slot) = bytes.get_mut(i as usize) {
                    *slot = v as u8 as i8;
                }
            }
        };
        match self.format {
            Format::ThreeByteBgr => {
                put_byte(at, b);
                put_byte(at + 1, g);
                put_byte(at + 2, r);
                return;
            }
            Format::FourByteAbgr | Format::FourByteAbgrPre => {
                put_byte(at, a);
                put_byte(at + 1, b);
                put_byte(at + 2, g);
                put_byte(at + 3, r);
                return;
            }
            Format::ByteGray => {
                put_byte(at, (77 * r + 150 * g + 29 * b + 128) / 256);
                return;
            }
            _ => {}
        }
        match (self.format, data) {
            (Format::IntRgb | Format::IntArgb | Format::IntArgbPre, ObjData::Ints(v)) => {
                if let Some(slot) = v.get_mut((at / 4) as usize) {
                    *slot = argb as i32;
                }
            }
            (Format::IntBgr, ObjData::Ints(v)) => {
                if let Some(slot) = v.get_mut((at / 4) as usize) {
                    *slot = ((b << 16) | (g << 8) | r) as i32;
                }
            }
            (Format::Ushort565Rgb | Format::Ushort555Rgb | Format::UshortGray, ObjData::Shorts(v)) => {
                let value = match self.format {
                    Format::Ushort565Rgb => ((r >> 3) << 11) | ((g >> 2) << 5) | (b >> 3),
                    Format::Ushort555Rgb => ((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3),
                    _ => (19672 * r + 38621 * g + 7500 * b) >> 8,
                };
                if let Some(slot) = v.get_mut((at / 2) as usize) {
                    *slot = value as u16 as i16;
                }
            }
            _ => {}
        }
    }

    /// Stores straight ARGB.
    fn store(&self, data: &mut ObjData, x: i32, y: i32, argb: u32) {
        let raw = if self.format.premultiplied() { premultiply(argb) } else { argb };
        self.store_raw(data, x, y, raw);
    }
}

/// The Porter-Duff rule a loop composes with, and the composite's extra alpha (0–255).
#[derive(Clone, Copy, Debug)]
enum Rule {
    Src(u32),
    SrcOver(u32),
}

/// A source pixel: straight or premultiplied ARGB.
#[derive(Clone, Copy)]
enum Pixel {
    Straight(u32),
    Pre(u32),
}

/// Composes `src` onto the destination pixel (x, y) with coverage `path` (0–255), as libawt's
/// `DEFINE_SRC_MASKBLIT` and `DEFINE_SRCOVER_MASKBLIT` compose ARGB.
fn compose(dst: &Surface, data: &mut ObjData, x: i32, y: i32, src: Pixel, rule: Rule, path: u32) {
    let (extra, over) = match rule {
        Rule::Src(ea) => (ea, false),
        Rule::SrcOver(ea) => (ea, true),
    };
    let src_f = mul8(path, extra);
    let (s_a, mut s_rgb, pre) = match src {
        Pixel::Straight(p) => (p >> 24, [(p >> 16) & 0xff, (p >> 8) & 0xff, p & 0xff], false),
        Pixel::Pre(p) => (p >> 24, [(p >> 16) & 0xff, (p >> 8) & 0xff, p & 0xff], true),
    };
    if dst.format == Format::ByteGray {
        // libawt blends into grey in grey: the source's colour becomes grey first.
        let [r, g, b] = s_rgb;
        s_rgb = [(77 * r + 150 * g + 29 * b + 128) / 256; 3];
    }
    if !over && src_f == 0xff {
        // Src at full coverage: the source replaces the destination.
        match src {
            Pixel::Straight(p) => dst.store(data, x, y, p),
            Pixel::Pre(p) if dst.format.premultiplied() => dst.store_raw(data, x, y, p),
            Pixel::Pre(p) => dst.store(data, x, y, unpremultiply(p)),
        }
        return;
    }
    let mut res_a = mul8(src_f, s_a);
    // The source's share, premultiplied.
    let mut res = s_rgb.map(|c| match pre {
        true => mul8(src_f, c),
        false if res_a < 0xff => mul8(res_a, c),
        false => c,
    });
    if over && res_a == 0 {
        return;
    }
    // The destination's share: everything the source leaves (SrcOver), or what coverage leaves (Src).
    let dst_f = if over { 0xff - res_a } else { 0xff - path };
    if (over && res_a < 0xff) || (!over && dst_f > 0) {
        let d = dst.load_pre(data, x, y);
        let [d_a, d_r, d_g, d_b] = channels(d);
        let d_a = if dst.format.has_alpha() { d_a } else { 0xff };
        let share = mul8(dst_f, d_a);
        res_a += share;
        let d_rgb = [d_r, d_g, d_b];
        for (r, d) in res.iter_mut().zip(d_rgb) {
            *r += if dst_f == 0xff { d } else { mul8(dst_f, d) };
        }
    }
    let res_a = res_a.min(0xff);
    let res = res.map(|c| c.min(0xff));
    if dst.format.premultiplied() {
        dst.store_raw(data, x, y, pack([res_a, res[0], res[1], res[2]]));
    } else {
        let straight = match res_a {
            0 | 0xff => res,
            a => res.map(|c| div8(a, c)),
        };
        dst.store_raw(data, x, y, pack([res_a, straight[0], straight[1], straight[2]]));
    }
}

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    const BISD: &str = "sun/awt/image/BufImgSurfaceData";
    reg.add(BISD, "initRaster", "(Ljava/lang/Object;IIIIIILjava/awt/image/IndexColorModel;)V", init_raster);
    reg.add("sun/java2d/SurfaceData", "isOpaqueGray", "(Ljava/awt/image/IndexColorModel;)Z", |vm, _, a| {
        Ok((a[0] != 0 && vm.get_named(a[0] as Ref, "allgrayopaque") != 0) as u64)
    });
    reg.add("sun/java2d/loops/GraphicsPrimitiveMgr", "registerNativeLoops", "()V", register_loops);
    const BLIT: &str =
        "(Lsun/java2d/SurfaceData;Lsun/java2d/SurfaceData;Ljava/awt/Composite;Lsun/java2d/pipe/Region;IIIIII)V";
    const MASK_BLIT: &str =
        "(Lsun/java2d/SurfaceData;Lsun/java2d/SurfaceData;Ljava/awt/Composite;Lsun/java2d/pipe/Region;IIIIII[BII)V";
    reg.add("sun/java2d/loops/Blit", "Blit", BLIT, blit_native);
    reg.add("sun/java2d/loops/MaskBlit", "MaskBlit", MASK_BLIT, blit_native);
    reg.add(
        "sun/java2d/loops/TransformHelper",
        "Transform",
        "(Lsun/java2d/loops/MaskBlit;Lsun/java2d/SurfaceData;Lsun/java2d/SurfaceData;Ljava/awt/Composite;Lsun/java2d/pipe/Region;Ljava/awt/geom/AffineTransform;IIIIIIIII[III)V",
        transform,
    );
}

/// `BufImgSurfaceData.initRaster(array, offset, bitoffset, width, height, pixStr, scanStr, icm)`.
fn init_raster<T: Tracker>(vm: &mut Vm<T>, _: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let surface = a[0] as Ref;
    let surface_type = vm.get_named(surface, "surfaceType") as Ref;
    let desc = match surface_type {
        0 => String::new(),
        st => match vm.get_named(st, "desc") as Ref {
            0 => String::new(),
            d => vm.rust_string(d),
        },
    };
    // A format the loops do not know is drawn by the JDK's Java loops: nothing to record.
    let Some(&(_, _, format)) = FORMATS.iter().find(|(_, d, _)| *d == desc) else { return Ok(0) };
    let icm = a[8] as Ref;
    let indexed = matches!(format, Format::Indexed | Format::Binary(_));
    let mut lut = vec![0u32; if indexed { 256 } else { 0 }];
    if icm != 0 && indexed {
        let size = vm.get_named(icm, "map_size") as i32;
        let rgb = vm.get_named(icm, "rgb") as Ref;
        if rgb != 0 {
            if let ObjData::Ints(colours) = &vm.heap.get(rgb).data {
                for (slot, &c) in lut.iter_mut().zip(colours.iter()).take(size.clamp(0, 256) as usize) {
                    *slot = c as u32;
                }
            }
        }
    }
    let raster = Surface {
        class: vm.heap.get(surface).class,
        array: a[1] as Ref,
        offset: a[2] as i32 as i64,
        bit_offset: a[3] as i32 as i64,
        width: a[4] as i32,
        height: a[5] as i32,
        pixel_stride: a[6] as i32 as i64,
        scan_stride: a[7] as i32 as i64,
        format,
        lut: lut.into(),
    };
    let surfaces = &mut vm.surfaces;
    if surfaces.by_surface.len() >= surfaces.prune_at {
        let heap = &vm.heap;
        surfaces.by_surface.retain(|&r, s| heap.is_live(r) && heap.get(r).class == s.class);
        surfaces.prune_at = (2 * surfaces.by_surface.len()).max(256);
    }
    surfaces.by_surface.insert(surface, raster);
    Ok(0)
}

/// `registerNativeLoops`: this module's loops, as libawt's are, through `GraphicsPrimitiveMgr.register`.
fn register_loops<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, _: &[u64]) -> VmResult<u64> {
    const ST: &str = "sun/java2d/loops/SurfaceType";
    const CT: &str = "sun/java2d/loops/CompositeType";
    const CTOR: &str =
        "(JLsun/java2d/loops/SurfaceType;Lsun/java2d/loops/CompositeType;Lsun/java2d/loops/SurfaceType;)V";
    let pinned = vm.pinned.len();
    let result = (|| {
        let mut surface_types = Vec::new();
        for (name, _, format) in FORMATS {
            surface_types.push((static_ref(vm, t, ST, name)?, *format));
        }
        let argb_pre = static_ref(vm, t, ST, "IntArgbPre")?;
        let composites: Vec<Ref> = ["SrcNoEa", "SrcOverNoEa", "Src", "SrcOver"]
            .iter()
            .map(|c| static_ref(vm, t, CT, c))
            .collect::<Result<_, _>>()?;
        let mut loops = Vec::new();
        let mut add = |vm: &mut Vm<T>, t: &mut JThread, class: &str, src: Ref, comp: Ref, dst: Ref| -> VmResult<()> {
            // The native handle only has to be non-zero (DrawImage renders directly through a
            // MaskBlit that has one); the loops read their types from the primitive itself.
            let prim = vm.construct(t, class, CTOR, &[1, 0, src as u64, comp as u64, dst as u64])?;
            vm.pinned.push(prim);
            loops.push(prim);
            Ok(())
        };
        for &(src, _) in &surface_types {
            add(vm, t, "sun/java2d/loops/TransformHelper", src, composites[0], argb_pre)?;
            for &(dst, _) in surface_types.iter().filter(|(_, f)| f.writable()) {
                for &comp in &composites[..2] {
                    add(vm, t, "sun/java2d/loops/Blit", src, comp, dst)?;
                }
                for &comp in &composites {
                    add(vm, t, "sun/java2d/loops/MaskBlit", src, comp, dst)?;
                }
            }
        }
        let class = vm.load_or_throw(t, "[Lsun/java2d/loops/GraphicsPrimitive;")?;
        let array = vm.heap.alloc(class, ObjData::Refs(loops.into()));
        vm.pinned.push(array);
        let mgr = vm.load_or_throw(t, "sun/java2d/loops/GraphicsPrimitiveMgr")?;
        let register =
            vm.find_method(mgr, "register", "([Lsun/java2d/loops/GraphicsPrimitive;)V").ok_or_else(|| {
                Fault::Fatal(VmError::Internal("GraphicsPrimitiveMgr has no register(GraphicsPrimitive[])".into()))
            })?;
        vm.invoke(t, register, &[array as u64])?;
        Ok(0)
    })();
    vm.pinned.truncate(pinned);
    result
}

/// A static reference field of a class, the class initialised first.
fn static_ref<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, class: &str, name: &str) -> VmResult<Ref> {
    let c = vm.load_or_throw(t, class)?;
    vm.initialize(t, c)?;
    let slot = vm.classes[c as usize].field(name, None).filter(|f| f.is_static()).map(|f| f.slot);
    match slot {
        Some(s) => Ok(vm.statics[s as usize] as Ref),
        None => Err(Fault::Fatal(VmError::Internal(format!("{class} has no static field {name}")))),
    }
}

/// A rectangle of pixels: source origin, destination origin, size.
#[derive(Clone, Copy, Debug)]
struct Area {
    sx: i32,
    sy: i32,
    dx: i32,
    dy: i32,
    w: i32,
    h: i32,
}

impl Area {
    fn of(mut v: impl Iterator<Item = i32>) -> Area {
        let mut next = || v.next().unwrap_or(0);
        Area { sx: next(), sy: next(), dx: next(), dy: next(), w: next(), h: next() }
    }
}

/// A coverage mask: `mask[offset + y * scan + x]` for the area's pixel (x, y).
#[derive(Clone, Copy)]
struct Mask {
    array: Ref,
    offset: i32,
    scan: i32,
}

/// The rectangles (x1, y1, x2, y2) a clip `Region` holds (everything, for no region).
fn clip_rects<T: Tracker>(vm: &Vm<T>, region: Ref) -> Vec<[i32; 4]> {
    if region == 0 {
        return vec![[i32::MIN, i32::MIN, i32::MAX, i32::MAX]];
    }
    let field = |name: &str| vm.get_named(region, name) as i32;
    let bounds = [field("lox"), field("loy"), field("hix"), field("hiy")];
    let bands = vm.get_named(region, "bands") as Ref;
    if bands == 0 {
        return vec![bounds];
    }
    let end = field("endIndex").max(0) as usize;
    let ObjData::Ints(b) = &vm.heap.get(bands).data else { return vec![bounds] };
    let mut rects = Vec::new();
    let mut i = 0;
    while i + 3 <= end.min(b.len()) {
        let (y1, y2, n) = (b[i], b[i + 1], b[i + 2].max(0) as usize);
        i += 3;
        for _ in 0..n {
            if i + 2 > b.len() {
                break;
            }
            rects.push([b[i], y1, b[i + 1], y2]);
            i += 2;
        }
    }
    rects
}

/// The rule a primitive composes with: its `CompositeType`, and the composite's extra alpha.
fn rule_of<T: Tracker>(vm: &Vm<T>, prim: Ref, composite: Ref) -> Option<Rule> {
    let ct = vm.get_named(prim, "compositeType") as Ref;
    let desc = match ct {
        0 => return None,
        ct => vm.rust_string(vm.get_named(ct, "desc") as Ref),
    };
    let extra = match composite {
        0 => 0xff,
        c => {
            let class = vm.heap.get(c).class;
            match vm.field_slot(class, "extraAlpha") {
                Some(s) => {
                    let ea = f32::from_bits(vm.fields(c)[s as usize] as u32);
                    (ea * 255.0 + 0.5) as u32
                }
                None => 0xff,
            }
        }
    };
    match desc.as_str() {
        "Porter-Duff Src, No Extra Alpha" => Some(Rule::Src(0xff)),
        "Porter-Duff SrcOverDst, No Extra Alpha" => Some(Rule::SrcOver(0xff)),
        "Porter-Duff Src" => Some(Rule::Src(extra.min(0xff))),
        "Porter-Duff Src Over Dst" => Some(Rule::SrcOver(extra.min(0xff))),
        _ => None,
    }
}

fn surface<T: Tracker>(vm: &Vm<T>, data: Ref) -> VmResult<Surface> {
    vm.surfaces.by_surface.get(&data).cloned().ok_or_else(|| {
        Fault::Fatal(VmError::Unsupported("a Java2D loop on a surface that is not a BufferedImage's raster".into()))
    })
}

/// `Blit.Blit(src, dst, comp, clip, srcx, srcy, dstx, dsty, w, h)` and `MaskBlit.MaskBlit(…, mask,
/// maskoff, maskscan)`.
fn blit_native<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let area = Area::of(a[5..11].iter().map(|&v| v as i32));
    let mask = match a.get(11..14) {
        Some(&[array, offset, scan]) if array != 0 => {
            Some(Mask { array: array as Ref, offset: offset as i32, scan: scan as i32 })
        }
        _ => None,
    };
    blit(vm, t, a[0] as Ref, [a[1] as Ref, a[2] as Ref, a[3] as Ref, a[4] as Ref], area, mask)
}

/// The source's area composed onto the destination's, within the clip.
fn blit<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    prim: Ref,
    [src, dst, composite, clip]: [Ref; 4],
    area: Area,
    mask: Option<Mask>,
) -> VmResult<u64> {
    if src == 0 || dst == 0 {
        return Err(vm.throw_npe(t));
    }
    let (s, d) = (surface(vm, src)?, surface(vm, dst)?);
    let rule = rule_of(vm, prim, composite)
        .ok_or_else(|| Fault::Fatal(VmError::Internal("a Java2D blit of an unknown composite".into())))?;
    let mask_bytes: Option<Vec<u8>> = mask.map(|m| match &vm.heap.get(m.array).data {
        ObjData::Bytes(b) => b.iter().map(|&v| v as u8).collect(),
        _ => Vec::new(),
    });
    // The pixels to write, read first (source and destination may be one image).
    let mut writes: Vec<(i32, i32, Pixel, u32)> = Vec::new();
    {
        let data = &vm.heap.get(s.array).data;
        for [cx1, cy1, cx2, cy2] in clip_rects(vm, clip) {
            let (x1, y1) = (area.dx.max(cx1).max(0), area.dy.max(cy1).max(0));
            let (x2, y2) = ((area.dx + area.w).min(cx2).min(d.width), (area.dy + area.h).min(cy2).min(d.height));
            for y in y1..y2 {
                for x in x1..x2 {
                    let (sx, sy) = (area.sx + x - area.dx, area.sy + y - area.dy);
                    if !s.contains(sx, sy) {
                        continue;
                    }
                    let path = match (&mask, &mask_bytes) {
                        (Some(m), Some(bytes)) => {
                            let i = m.offset as i64 + (y - area.dy) as i64 * m.scan as i64 + (x - area.dx) as i64;
                            bytes.get(i as usize).map_or(0, |&v| v as u32)
                        }
                        _ => 0xff,
                    };
                    if path == 0 {
                        continue;
                    }
                    // One format's stored value passes as it is (below); a premultiplied one is.
                    let raw = s.load_raw(data, sx, sy);
                    let pixel = match s.format == d.format || s.format.premultiplied() {
                        true => Pixel::Pre(raw),
                        false => Pixel::Straight(raw),
                    };
                    writes.push((x, y, pixel, path));
                }
            }
        }
    }
    let data = &mut vm.heap.get_mut(d.array).data;
    let same = s.format == d.format;
    for (x, y, pixel, path) in writes {
        match (pixel, rule, path) {
            // A copy between surfaces of one format: the stored value as it is.
            (Pixel::Pre(raw), Rule::Src(0xff), 0xff) if same => d.store_raw(data, x, y, raw),
            (Pixel::Pre(raw), _, _) if same && !d.format.premultiplied() => {
                compose(&d, data, x, y, Pixel::Straight(raw), rule, path)
            }
            _ => compose(&d, data, x, y, pixel, rule, path),
        }
    }
    Ok(0)
}

/// How a transformed image is sampled: the rendering hint's interpolation.
enum Sampling {
    Nearest,
    Bilinear,
    /// With libawt's table of the cubic kernel (a = −0.5) in 1/256ths.
    Bicubic(Box<[i32; 513]>),
}

/// libawt's `bicubic_coeff`: the kernel at i/256 for i in 0..384, in 256ths (truncated), and
/// the entries from 384 on made so that each set of four weights sums to 256.
fn bicubic_table() -> Box<[i32; 513]> {
    const A: f64 = -0.5;
    let mut c = Box::new([0i32; 513]);
    for (i, slot) in c.iter_mut().enumerate().take(384) {
        let x = i as f64 / 256.0;
        let v = if i < 256 {
            ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
        } else {
            ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A
        };
        *slot = (v * 256.0) as i32;
    }
    c[384] = (256 - c[128] * 2) / 2;
    for i in 385..=512 {
        c[i] = 256 - (c[512 - i] + c[i - 256] + c[768 - i]);
    }
    c
}

/// The premultiplied ARGB the transform helper takes at the 32.32 fixed-point source position
/// (`fx`, `fy`): the pixel there, or the bilinear or bicubic blend around the position half a
/// pixel up and left, the source rectangle's edge pixels repeated beyond it — libawt's
/// `BilinearInterp` and `BicubicInterp` arithmetic.
fn sample(s: &Surface, data: &ObjData, how: &Sampling, [sx1, sy1, sx2, sy2]: [i32; 4], fx: i64, fy: i64) -> u32 {
    let whole = |v: i64| (v >> 32) as i32;
    let fraction = |v: i64| ((v as u64 >> 24) & 0xff) as i32;
    let at = |x: i32, y: i32| {
        let (x, y) = (x.clamp(sx1, (sx2 - 1).max(sx1)), y.clamp(sy1, (sy2 - 1).max(sy1)));
        let (x, y) = (x.clamp(0, s.width - 1), y.clamp(0, s.height - 1));
        s.load_pre(data, x, y)
    };
    const HALF: i64 = 1 << 31;
    match how {
        Sampling::Nearest => at(whole(fx), whole(fy)),
        Sampling::Bilinear => {
            let (x, y) = (fx - HALF, fy - HALF);
            let (x0, y0, xf, yf) = (whole(x), whole(y), fraction(x), fraction(y));
            let p = [at(x0, y0), at(x0 + 1, y0), at(x0, y0 + 1), at(x0 + 1, y0 + 1)];
            let mut out = 0u32;
            for shift in [24, 16, 8, 0] {
                let c = |i: usize| ((p[i] >> shift) & 0xff) as i32;
                let top = xf * (c(1) - c(0)) + (c(0) << 8);
                let bottom = xf * (c(3) - c(2)) + (c(2) << 8);
                let v = yf * (bottom - top) + (top << 8);
                out |= ((((v + (1 << 15)) >> 16) & 0xff) as u32) << shift;
            }
            out
        }
        Sampling::Bicubic(c) => {
            let (x, y) = (fx - HALF, fy - HALF);
            let (x0, y0, xf, yf) = (whole(x), whole(y), fraction(x) as usize, fraction(y) as usize);
            let weights = |f: usize| [f + 256, f, 256 - f, 512 - f];
            let (wx, wy) = (weights(xf), weights(yf));
            let mut acc = [1i64 << 15; 4];
            for (j, &cy) in wy.iter().enumerate() {
                for (i, &cx) in wx.iter().enumerate() {
                    let factor = (c[cx] * c[cy]) as i64;
                    let p = at(x0 - 1 + i as i32, y0 - 1 + j as i32);
                    for (k, shift) in [24, 16, 8, 0].into_iter().enumerate() {
                        acc[k] += ((p >> shift) & 0xff) as i64 * factor;
                    }
                }
            }
            let a = (acc[0] >> 16).clamp(0, 255);
            let [r, g, b] = [acc[1], acc[2], acc[3]].map(|v| (v >> 16).clamp(0, a));
            ((a << 24) | (r << 16) | (g << 8) | b) as u32
        }
    }
}

/// `TransformHelper.Transform`: each destination pixel whose centre the inverse transform `itx`
/// maps into the source rectangle takes the source sampled there (nearest neighbour, bilinear or
/// bicubic, as the rendering hint asks), composed through `output`'s rule; `edges`, when given,
/// gets each row's covered span.
fn transform<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let (output, src, dst, composite, clip, itx) =
        (a[1] as Ref, a[2] as Ref, a[3] as Ref, a[4] as Ref, a[5] as Ref, a[6] as Ref);
    let int = |i: usize| a[i] as i32;
    let interpolation = int(7);
    let (sx1, sy1, sx2, sy2) = (int(8), int(9), int(10), int(11));
    let (dx1, dy1, dx2, dy2) = (int(12), int(13), int(14), int(15));
    let edges = a[16] as Ref;
    let (dxoff, dyoff) = (int(17), int(18));
    if output == 0 || src == 0 || dst == 0 || itx == 0 {
        return Err(vm.throw_npe(t));
    }
    let sampling = match interpolation {
        2 => Sampling::Bilinear,
        3 => Sampling::Bicubic(bicubic_table()),
        _ => Sampling::Nearest,
    };
    let (s, d) = (surface(vm, src)?, surface(vm, dst)?);
    let rule = rule_of(vm, output, composite)
        .ok_or_else(|| Fault::Fatal(VmError::Internal("a Java2D transform of an unknown composite".into())))?;
    let m = |name: &str| f64::from_bits(vm.get_named(itx, name));
    let (m00, m10, m01, m11, m02, m12) = (m("m00"), m("m10"), m("m01"), m("m11"), m("m02"), m("m12"));
    // libawt's 32.32 fixed point: `DblToLong`, `WholeOfLong`.
    let fixed = |v: f64| (v * 4_294_967_296.0) as i64;
    let whole = |v: i64| (v >> 32) as i32;
    let (dxdx, dydx) = (fixed(m00), fixed(m10));
    let clips = clip_rects(vm, clip);
    let rows = (dy2 - dy1).max(0) as usize;
    let mut spans = vec![(dx1, dx1); rows];
    let mut writes: Vec<(i32, i32, u32)> = Vec::new();
    {
        let data = &vm.heap.get(s.array).data;
        for y in dy1..dy2 {
            let (cx, cy) = ((dx1 + dxoff) as f64 + 0.5, (y + dyoff) as f64 + 0.5);
            let (mut fx, mut fy) = (fixed(m00 * cx + m01 * cy + m02), fixed(m10 * cx + m11 * cy + m12));
            let (mut lo, mut hi) = (i32::MAX, i32::MIN);
            for x in dx1..dx2 {
                let (here_x, here_y) = (fx, fy);
                let (px, py) = (whole(fx), whole(fy));
                fx = fx.wrapping_add(dxdx);
                fy = fy.wrapping_add(dydx);
                if px < sx1 || px >= sx2 || py < sy1 || py >= sy2 || !s.contains(px, py) {
                    continue;
                }
                lo = lo.min(x);
                hi = hi.max(x + 1);
                let clipped = clips.iter().any(|&[x1, y1, x2, y2]| x >= x1 && x < x2 && y >= y1 && y < y2);
                if clipped && d.contains(x, y) {
                    writes.push((x, y, sample(&s, data, &sampling, [sx1, sy1, sx2, sy2], here_x, here_y)));
                }
            }
            if lo < hi {
                spans[(y - dy1) as usize] = (lo, hi);
            }
        }
    }
    {
        let data = &mut vm.heap.get_mut(d.array).data;
        for (x, y, pre) in writes {
            compose(&d, data, x, y, Pixel::Pre(pre), rule, 0xff);
        }
    }
    if edges != 0 {
        if let ObjData::Ints(e) = &mut vm.heap.get_mut(edges).data {
            let mut put = |i: usize, v: i32| {
                if let Some(slot) = e.get_mut(i) {
                    *slot = v;
                }
            };
            put(0, dy1);
            put(1, dy2);
            for (row, (lo, hi)) in spans.into_iter().enumerate() {
                put(2 + 2 * row, lo);
                put(3 + 2 * row, hi);
            }
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_arithmetic_is_libawts_tables() {
        // mul8table and div8table entries as libawt builds them.
        assert_eq!(mul8(255, 200), 200);
        assert_eq!(mul8(128, 255), 128);
        assert_eq!(mul8(128, 128), 64);
        assert_eq!(mul8(0, 77), 0);
        assert_eq!(div8(128, 64), 128);
        assert_eq!(div8(128, 200), 255);
        assert_eq!(div8(255, 100), 100);
        // Premultiplying loses precision as alpha falls; from half opacity up, one level at most.
        for a in 128..=255 {
            for c in 0..=255 {
                assert!(div8(a, mul8(a, c)).abs_diff(c) <= 1, "a {a} c {c}");
            }
        }
    }

    #[test]
    fn pixels_round_trip_through_every_writable_format() {
        for &(_, _, format) in FORMATS.iter().filter(|(_, _, f)| f.writable()) {
            let (bytes_per, data) = match format {
                Format::IntRgb | Format::IntArgb | Format::IntArgbPre | Format::IntBgr => {
                    (4, ObjData::Ints(vec![0; 4].into()))
                }
                Format::Ushort565Rgb | Format::Ushort555Rgb | Format::UshortGray => {
                    (2, ObjData::Shorts(vec![0; 4].into()))
                }
                Format::ThreeByteBgr => (3, ObjData::Bytes(vec![0; 12].into())),
                Format::FourByteAbgr | Format::FourByteAbgrPre => (4, ObjData::Bytes(vec![0; 16].into())),
                _ => (1, ObjData::Bytes(vec![0; 4].into())),
            };
            let mut data = data;
            let s = Surface {
                class: 0,
                array: 0,
                offset: 0,
                bit_offset: 0,
                width: 2,
                height: 2,
                pixel_stride: bytes_per,
                scan_stride: 2 * bytes_per,
                format,
                lut: vec![0; 256].into(),
            };
            s.store(&mut data, 1, 1, 0xff80_4020);
            let back = s.load(&data, 1, 1);
            let grey = matches!(format, Format::ByteGray | Format::UshortGray);
            let expected: u32 = match format {
                _ if grey => 0xff00_0000 | (((77 * 0x80 + 150 * 0x40 + 29 * 0x20 + 128) / 256) * 0x10101),
                Format::Ushort565Rgb => 0xff84_4121,
                Format::Ushort555Rgb => 0xff84_4221,
                _ => 0xff80_4020,
            };
            if format == Format::UshortGray {
                // 16-bit grey keeps more precision than 8-bit: within one level.
                assert!((back & 0xff).abs_diff(expected & 0xff) <= 1, "{format:?}: {back:08x}");
            } else {
                assert_eq!(back, expected, "{format:?}");
            }
            assert_eq!(s.load(&data, 0, 0) >> 24, if format.has_alpha() { 0 } else { 0xff }, "{format:?}");
        }
    }

    #[test]
    fn the_bicubic_table_s_four_weights_sum_to_256() {
        let c = bicubic_table();
        assert_eq!((c[0], c[256]), (256, 0), "the kernel at 0 and 1");
        for f in 0..256 {
            assert_eq!(c[f + 256] + c[f] + c[256 - f] + c[512 - f], 256, "fraction {f}/256");
        }
    }

    #[test]
    fn src_over_blends_a_translucent_pixel_as_libawt() {
        let s = Surface {
            class: 0,
            array: 0,
            offset: 0,
            bit_offset: 0,
            width: 1,
            height: 1,
            pixel_stride: 4,
            scan_stride: 4,
            format: Format::IntRgb,
            lut: vec![0; 256].into(),
        };
        let mut data = ObjData::Ints(vec![0x00ff_ffff].into());
        compose(&s, &mut data, 0, 0, Pixel::Straight(0x8000_0000), Rule::SrcOver(0xff), 0xff);
        // Half-transparent black over white: 255 - 128 of white.
        assert_eq!(s.load(&data, 0, 0), 0xff7f_7f7f);
    }
}
