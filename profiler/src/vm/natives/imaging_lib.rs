//! `sun.awt.image.ImagingLib`: the affine transform of `AffineTransformOp` on `BufferedImage`s,
//! which HotSpot runs in its medialib (`libmlib_image`) and which has no Java fallback
//! (`AffineTransformOp.filter` throws "Unable to transform src image" without it).
//!
//! Done as medialib does it: the destination cleared, then each destination pixel whose centre
//! the inverse transform maps into the source takes the source sampled there (nearest, bilinear,
//! or bicubic with a = −0.5), the source's edge pixels extended, each channel on its own, on the
//! images' own samples when both have one 8- or 16-bit layout, else on ARGB (indexed and packed
//! images, as medialib expands them). The arithmetic is double precision rounded once, not
//! medialib's fixed point: a pixel can differ from HotSpot's by one level (known gap); a
//! rotation by a multiple of 90° gives the source pixels exactly. `LookupOp` and `ConvolveOp`
//! take their Java path: `init` answers that medialib is there, and their natives are unsupported.

use super::{Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    const LIB: &str = "sun/awt/image/ImagingLib";
    reg.add(LIB, "init", "()Z", |_, _, _| Ok(1));
    reg.add(LIB, "transformBI", "(Ljava/awt/image/BufferedImage;Ljava/awt/image/BufferedImage;[DI)I", transform_image);
    // A raster, a lookup or a convolution: 0 is "not done by the library", and the ops then
    // throw (`AffineTransformOp` on rasters) or take their Java path.
    reg.add(LIB, "transformRaster", "*", |_, _, _| Ok(0));
    reg.add(LIB, "convolveBI", "*", |_, _, _| Ok(0));
    reg.add(LIB, "convolveRaster", "*", |_, _, _| Ok(0));
    reg.add(LIB, "lookupByteBI", "*", |_, _, _| Ok(0));
    reg.add(LIB, "lookupByteRaster", "*", |_, _, _| Ok(0));
}

/// `BufferedImage` types whose samples are filtered as they are: 8-bit channels, or 16-bit grey.
fn sample_type(image_type: i32) -> Option<i32> {
    match image_type {
        // INT_RGB, INT_ARGB, INT_ARGB_PRE, INT_BGR, 3BYTE_BGR, 4BYTE_ABGR(_PRE), BYTE_GRAY.
        1..=7 | 10 => Some(255),
        11 => Some(65535),
        _ => None,
    }
}

/// How pixels are read and written: the raster's samples (`bands` a pixel) or ARGB.
enum Layout {
    Samples { bands: usize, max: i32 },
    Argb,
}

fn transform_image<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let (src, dst, matrix, interpolation) = (a[0] as Ref, a[1] as Ref, a[2] as Ref, a[3] as i32);
    if src == 0 || dst == 0 || matrix == 0 {
        return Err(vm.throw_npe(t));
    }
    let m: Vec<f64> = match &vm.heap.get(matrix).data {
        ObjData::Doubles(d) if d.len() >= 6 => d[..6].to_vec(),
        _ => return Ok(0),
    };
    let int = |vm: &mut Vm<T>, t: &mut JThread, img: Ref, name: &str| -> VmResult<i32> {
        Ok(vm.invoke_virtual(t, img, name, "()I", &[])? as i32)
    };
    let (sw, sh, s_type) = (int(vm, t, src, "getWidth")?, int(vm, t, src, "getHeight")?, int(vm, t, src, "getType")?);
    let (dw, dh, d_type) = (int(vm, t, dst, "getWidth")?, int(vm, t, dst, "getHeight")?, int(vm, t, dst, "getType")?);
    if sw <= 0 || sh <= 0 || dw <= 0 || dh <= 0 {
        return Ok(0);
    }
    // The forward matrix [m00 m10 m01 m11 m02 m12], inverted: destination → source.
    let (m00, m10, m01, m11, m02, m12) = (m[0], m[1], m[2], m[3], m[4], m[5]);
    let det = m00 * m11 - m01 * m10;
    if det == 0.0 || !det.is_finite() {
        return Ok(0);
    }
    let (i00, i01, i10, i11) = (m11 / det, -m01 / det, -m10 / det, m00 / det);
    let (i02, i12) = (-(i00 * m02 + i01 * m12), -(i10 * m02 + i11 * m12));

    let layout = match (sample_type(s_type), s_type == d_type) {
        (Some(max), true) => {
            let raster = vm.invoke_virtual(t, src, "getRaster", "()Ljava/awt/image/WritableRaster;", &[])? as Ref;
            let bands = vm.invoke_virtual(t, raster, "getNumBands", "()I", &[])? as usize;
            Layout::Samples { bands, max }
        }
        _ => Layout::Argb,
    };
    let channels = match layout {
        Layout::Samples { bands, .. } => bands,
        Layout::Argb => 4,
    };
    let source: Vec<i32> = read(vm, t, src, &layout, sw, sh)?;
    let mut out = vec![0i32; (dw * dh) as usize * channels];
    let at = |x: i32, y: i32, c: usize| -> f64 {
        let (x, y) = (x.clamp(0, sw - 1), y.clamp(0, sh - 1));
        let pixel = (y * sw + x) as usize;
        match layout {
            // ARGB packed into one int: one byte a channel.
            Layout::Argb => ((source[pixel] as u32 >> (24 - 8 * c)) & 0xff) as f64,
            Layout::Samples { .. } => source[pixel * channels + c] as f64,
        }
    };
    let max = match layout {
        Layout::Samples { max, .. } => max,
        Layout::Argb => 255,
    } as f64;
    for dy in 0..dh {
        for dx in 0..dw {
            let (cx, cy) = (dx as f64 + 0.5, dy as f64 + 0.5);
            let (xs, ys) = (i00 * cx + i01 * cy + i02, i10 * cx + i11 * cy + i12);
            if !(xs >= 0.0 && ys >= 0.0 && xs < sw as f64 && ys < sh as f64) {
                continue;
            }
            let base = (dy * dw + dx) as usize * channels;
            for c in 0..channels {
                let v = match interpolation {
                    // TYPE_NEAREST_NEIGHBOR
                    1 => at(xs.floor() as i32, ys.floor() as i32, c),
                    // TYPE_BILINEAR
                    2 => {
                        let (u, v) = (xs - 0.5, ys - 0.5);
                        let (x0, y0) = (u.floor(), v.floor());
                        let (fx, fy) = (u - x0, v - y0);
                        let (x0, y0) = (x0 as i32, y0 as i32);
                        let top = at(x0, y0, c) * (1.0 - fx) + at(x0 + 1, y0, c) * fx;
                        let bottom = at(x0, y0 + 1, c) * (1.0 - fx) + at(x0 + 1, y0 + 1, c) * fx;
                        top * (1.0 - fy) + bottom * fy
                    }
                    // TYPE_BICUBIC
                    _ => {
                        let (u, v) = (xs - 0.5, ys - 0.5);
                        let (x0, y0) = (u.floor(), v.floor());
                        let (wx, wy) = (cubic_weights(u - x0), cubic_weights(v - y0));
                        let (x0, y0) = (x0 as i32, y0 as i32);
                        let mut sum = 0.0;
                        for (j, wyj) in wy.iter().enumerate() {
                            let row: f64 = wx
                                .iter()
                                .enumerate()
                                .map(|(i, wxi)| wxi * at(x0 - 1 + i as i32, y0 - 1 + j as i32, c))
                                .sum();
                            sum += wyj * row;
                        }
                        sum
                    }
                };
                out[base + c] = v.round().clamp(0.0, max) as i32;
            }
        }
    }
    write(vm, t, dst, &layout, dw, dh, out)?;
    Ok(1)
}

/// The cubic convolution kernel with a = −0.5 at the four samples around fraction `f`.
fn cubic_weights(f: f64) -> [f64; 4] {
    const A: f64 = -0.5;
    let near = |x: f64| ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0;
    let far = |x: f64| ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A;
    [far(1.0 + f), near(f), near(1.0 - f), far(2.0 - f)]
}

/// The image's pixels: its raster's samples, or ARGB (`getRGB`) packed one int a pixel.
fn read<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, img: Ref, layout: &Layout, w: i32, h: i32) -> VmResult<Vec<i32>> {
    let array = match layout {
        Layout::Samples { .. } => {
            let raster = vm.invoke_virtual(t, img, "getRaster", "()Ljava/awt/image/WritableRaster;", &[])? as Ref;
            vm.invoke_virtual(t, raster, "getPixels", "(IIII[I)[I", &[0, 0, w as u64, h as u64, 0])? as Ref
        }
        Layout::Argb => {
            vm.invoke_virtual(t, img, "getRGB", "(IIII[III)[I", &[0, 0, w as u64, h as u64, 0, 0, w as u64])? as Ref
        }
    };
    match &vm.heap.get(array).data {
        ObjData::Ints(v) => Ok(v.to_vec()),
        _ => Err(Fault::Fatal(VmError::Internal("an image's pixels were not an int[]".into()))),
    }
}

/// Writes `pixels` (as `read` gives them) into the image.
fn write<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    img: Ref,
    layout: &Layout,
    w: i32,
    h: i32,
    pixels: Vec<i32>,
) -> VmResult<()> {
    let pixels = match layout {
        Layout::Argb => {
            // Channels back into one ARGB int a pixel.
            pixels.chunks(4).map(|c| (c[0] << 24) | (c[1] << 16) | (c[2] << 8) | c[3]).collect::<Vec<i32>>()
        }
        Layout::Samples { .. } => pixels,
    };
    let ints = vm.load_or_throw(t, "[I")?;
    let array = vm.heap.alloc(ints, ObjData::Ints(pixels.into()));
    vm.pinning(&[array], |vm| -> VmResult<()> {
        match layout {
            Layout::Samples { .. } => {
                let raster = vm.invoke_virtual(t, img, "getRaster", "()Ljava/awt/image/WritableRaster;", &[])? as Ref;
                vm.invoke_virtual(t, raster, "setPixels", "(IIII[I)V", &[0, 0, w as u64, h as u64, array as u64])?;
            }
            Layout::Argb => {
                vm.invoke_virtual(
                    t,
                    img,
                    "setRGB",
                    "(IIII[III)V",
                    &[0, 0, w as u64, h as u64, array as u64, 0, w as u64],
                )?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cubic_weights_sum_to_one_and_pick_the_sample_at_whole_positions() {
        for f in [0.0, 0.25, 0.5, 0.9] {
            let w = cubic_weights(f);
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{f}: {w:?}");
        }
        assert_eq!(cubic_weights(0.0), [0.0, 1.0, 0.0, 0.0]);
    }
}
