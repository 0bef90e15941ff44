//! Procedural textures drape generates itself (cloth weave height map, relief height map,
//! checker, toon ramp, a sky-and-floor environment cube map) and their upload with a mip chain.
//! `write_assets` saves them as small PNGs under assets/ for inspection.

use std::path::Path;

use image::{GrayImage, Luma, Rgba, RgbaImage};

use super::context::GpuContext;
use crate::math::Vec3;

/// A plain-weave height map (`size`² texels, `threads` yarns across, even so that it tiles):
/// round warp and weft yarns passing alternately over and under each other, so that each
/// crossing shows one yarn on top (the checkerboard of a plain weave). Heights in [0, 1].
pub fn weave_height(size: u32, threads: u32) -> GrayImage {
    let threads = (threads.max(2) + 1) & !1;
    let pi = std::f32::consts::PI;
    GrayImage::from_fn(size, size, |x, y| {
        let gx = (x as f32 + 0.5) / size as f32 * threads as f32;
        let gy = (y as f32 + 0.5) / size as f32 * threads as f32;
        // Round yarn cross-section, slightly narrower than its spacing (gaps between yarns).
        let profile = |f: f32| {
            let d = (f.fract() - 0.5) * 2.0 / 0.8;
            (1.0 - d * d).max(0.0).sqrt()
        };
        // Undulation over/under with period two yarns, offset by one between neighbours.
        let warp_up = 0.5 + 0.5 * (pi * (gy - 0.5 + gx.floor())).cos();
        let weft_up = 0.5 - 0.5 * (pi * (gx - 0.5 + gy.floor())).cos();
        let warp = profile(gx) * (0.3 + 0.7 * warp_up);
        let weft = profile(gy) * (0.3 + 0.7 * weft_up);
        Luma([(warp.max(weft).clamp(0.0, 1.0) * 255.0).round() as u8])
    })
}

/// A smooth, tileable relief for displacement mapping: `cells`² round bumps, height in [0, 1],
/// zero on the cell borders.
/// Its features are large enough that a mesh of a few dozen vertices per cell resolves them.
pub fn bumps_height(size: u32, cells: u32) -> GrayImage {
    let tau = std::f32::consts::TAU;
    GrayImage::from_fn(size, size, |x, y| {
        let u = (x as f32 + 0.5) / size as f32 * cells as f32;
        let v = (y as f32 + 0.5) / size as f32 * cells as f32;
        // Zero along every cell border, so that rows v = 0 and v = 1 are flat: the poles of a
        // UV sphere (where one point has many u) do not tear.
        let h = (0.5 - 0.5 * (tau * u).cos()) * (0.5 - 0.5 * (tau * v).cos());
        Luma([(h * 255.0).round() as u8])
    })
}

/// A two-colour checkerboard (sRGB bytes), `cells` squares across.
pub fn checker(size: u32, cells: u32, a: [u8; 3], b: [u8; 3]) -> RgbaImage {
    let cells = cells.max(1);
    RgbaImage::from_fn(size, size, |x, y| {
        let cx = x * cells / size;
        let cy = y * cells / size;
        let c = if (cx + cy).is_multiple_of(2) { a } else { b };
        Rgba([c[0], c[1], c[2], 255])
    })
}

/// A toon ramp of `bands` flat steps, indexed by the lit fraction n·l in [0, 1]. The steps are
/// even in perceived brightness (even in sRGB-encoded value from 0.35 to 1, stored linear: the
/// γ = 2.2 power), so every band reads as its own tone; linear steps would crowd the upper
/// bands together once encoded for display. The darkest band is never black (the ambient term
/// alone is too dark for a cel look). Linear values stored in an Rgba8Unorm texture.
pub fn toon_ramp(width: u32, bands: u32) -> RgbaImage {
    let bands = bands.max(2);
    RgbaImage::from_fn(width, 1, |x, _| {
        let t = (x as f32 + 0.5) / width as f32;
        let band = ((t * bands as f32).floor()).min(bands as f32 - 1.0);
        let encoded = 0.35 + 0.65 * band / (bands - 1) as f32;
        let v = encoded.powf(2.2);
        let b = (v * 255.0).round() as u8;
        Rgba([b, b, b, 255])
    })
}

/// The direction through texel (s, t) ∈ [0, 1]² of cube face `face` (+X, −X, +Y, −Y, +Z, −Z:
/// the layer order of a cube texture), following the Vulkan/WebGPU face-selection table
/// (Vulkan spec, "Cube Map Face Selection": e.g. +X uses sc = −z, tc = −y).
pub fn cube_direction(face: usize, s: f32, t: f32) -> Vec3 {
    let sc = 2.0 * s - 1.0;
    let tc = 2.0 * t - 1.0;
    let d = match face {
        0 => Vec3::new(1.0, -tc, -sc),
        1 => Vec3::new(-1.0, -tc, sc),
        2 => Vec3::new(sc, 1.0, tc),
        3 => Vec3::new(sc, -1.0, -tc),
        4 => Vec3::new(sc, -tc, 1.0),
        _ => Vec3::new(-sc, -tc, -1.0),
    };
    d.normalize()
}

/// Radiance (linear RGB) of the environment seen along unit direction `d`: a sky graded from
/// a pale horizon to a blue zenith with a sun, over a floor of large grey tiles that fades into
/// haze at the horizon (a "sky over a courtyard" that gives reflections structure in every
/// direction).
pub fn environment_radiance(d: Vec3) -> Vec3 {
    let horizon = Vec3::new(0.85, 0.88, 0.95);
    if d.y >= 0.0 {
        let zenith = Vec3::new(0.18, 0.36, 0.78);
        let t = d.y.powf(0.6);
        let mut c = horizon.lerp(zenith, t);
        let sun = Vec3::new(0.45, 0.75, 0.48).normalize();
        let cos = d.dot(sun);
        if cos > 0.995 {
            c = Vec3::new(4.0, 3.8, 3.3);
        } else {
            c += Vec3::new(1.0, 0.9, 0.7) * (cos.max(0.0).powf(64.0) * 0.6);
        }
        c
    } else {
        // Ray hits a floor 1.5 m below: tile coordinates where it lands.
        let k = 1.5 / -d.y;
        let (x, z) = (d.x * k, d.z * k);
        let tile = ((x.floor() as i64 + z.floor() as i64) & 1) == 0;
        let base = if tile {
            Vec3::new(0.42, 0.38, 0.33)
        } else {
            Vec3::new(0.22, 0.2, 0.18)
        };
        // Far floor (near the horizon) dissolves into haze, so that the sky behind a scene's own
        // ground plane reads as distance rather than a second floor.
        let haze = (-d.y * 1.5).min(1.0).powf(1.5);
        horizon.lerp(base, haze)
    }
}

/// The six faces of the environment cube map, `size`² each, sRGB-encoded.
pub fn environment_cube(size: u32) -> [RgbaImage; 6] {
    std::array::from_fn(|face| {
        RgbaImage::from_fn(size, size, |x, y| {
            let d = cube_direction(
                face,
                (x as f32 + 0.5) / size as f32,
                (y as f32 + 0.5) / size as f32,
            );
            let c = environment_radiance(d);
            let enc = |v: f32| (linear_to_srgb(v.clamp(0.0, 1.0)) * 255.0).round() as u8;
            Rgba([enc(c.x), enc(c.y), enc(c.z), 255])
        })
    })
}

/// The sRGB transfer function (IEC 61966-2-1).
pub fn linear_to_srgb(v: f32) -> f32 {
    if v <= 0.003_130_8 {
        v * 12.92
    } else {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    }
}

/// Writes the procedural textures to `dir` as PNGs (a few kB each).
pub fn write_assets(dir: &Path) -> Result<(), image::ImageError> {
    std::fs::create_dir_all(dir).map_err(image::ImageError::IoError)?;
    crate::output::save_image(&weave_height(128, 16), &dir.join("weave_height.png"))?;
    crate::output::save_image(&bumps_height(128, 4), &dir.join("bumps_height.png"))?;
    crate::output::save_image(&toon_ramp(64, 3), &dir.join("toon_ramp.png"))?;
    crate::output::save_image(
        &checker(64, 8, [200, 200, 196], [120, 124, 128]),
        &dir.join("checker.png"),
    )?;
    let faces = environment_cube(64);
    let names = ["px", "nx", "py", "ny", "pz", "nz"];
    for (face, name) in faces.iter().zip(names) {
        crate::output::save_image(face, &dir.join(format!("env_{name}.png")))?;
    }
    Ok(())
}

/// Halves an image with a 2×2 box filter (odd sizes clamp at the edge), `channels` bytes per
/// texel. Filtering sRGB bytes directly slightly darkens high-contrast mips; acceptable here.
fn downsample(data: &[u8], w: u32, h: u32, channels: usize) -> (Vec<u8>, u32, u32) {
    let (nw, nh) = ((w / 2).max(1), (h / 2).max(1));
    let mut out = vec![0u8; (nw * nh) as usize * channels];
    for y in 0..nh {
        for x in 0..nw {
            for c in 0..channels {
                let mut sum = 0u32;
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let sx = (2 * x + dx).min(w - 1);
                    let sy = (2 * y + dy).min(h - 1);
                    sum += data[(sy * w + sx) as usize * channels + c] as u32;
                }
                out[(y * nw + x) as usize * channels + c] = ((sum + 2) / 4) as u8;
            }
        }
    }
    (out, nw, nh)
}

/// Texel data of one 2D image for [`upload_2d`]: `width × height` texels of `channels` bytes in
/// `format` (an 8-bit format: Rgba8UnormSrgb, Rgba8Unorm or R8Unorm).
pub struct TexelData<'a> {
    pub data: &'a [u8],
    pub width: u32,
    pub height: u32,
    pub format: wgpu::TextureFormat,
    pub channels: usize,
}

/// Uploads a 2D texture, with a full box-filtered mip chain when `mips`.
pub fn upload_2d(ctx: &GpuContext, label: &str, texels: TexelData, mips: bool) -> wgpu::Texture {
    let TexelData {
        data,
        width,
        height,
        format,
        channels,
    } = texels;
    let levels = if mips {
        32 - width.max(height).max(1).leading_zeros()
    } else {
        1
    };
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: levels,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let (mut level_data, mut w, mut h) = (data.to_vec(), width, height);
    for level in 0..levels {
        write_level(ctx, &texture, level, 0, &level_data, w, h, channels);
        if level + 1 < levels {
            (level_data, w, h) = downsample(&level_data, w, h, channels);
        }
    }
    texture
}

#[allow(clippy::too_many_arguments)]
fn write_level(
    ctx: &GpuContext,
    texture: &wgpu::Texture,
    level: u32,
    layer: u32,
    data: &[u8],
    w: u32,
    h: u32,
    channels: usize,
) {
    ctx.queue.write_texture(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: level,
            origin: wgpu::Origin3d {
                x: 0,
                y: 0,
                z: layer,
            },
            aspect: wgpu::TextureAspect::All,
        },
        data,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(w * channels as u32),
            rows_per_image: Some(h),
        },
        wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        },
    );
}

/// Uploads six square sRGB faces as a cube texture (with mips) and returns a cube view.
pub fn upload_cube(ctx: &GpuContext, label: &str, faces: &[RgbaImage; 6]) -> wgpu::TextureView {
    let size = faces[0].width();
    let levels = 32 - size.max(1).leading_zeros();
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width: size,
            height: size,
            depth_or_array_layers: 6,
        },
        mip_level_count: levels,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    for (layer, face) in faces.iter().enumerate() {
        let (mut data, mut w, mut h) = (face.as_raw().clone(), size, size);
        for level in 0..levels {
            write_level(ctx, &texture, level, layer as u32, &data, w, h, 4);
            if level + 1 < levels {
                (data, w, h) = downsample(&data, w, h, 4);
            }
        }
    }
    texture.create_view(&wgpu::TextureViewDescriptor {
        label: Some(label),
        dimension: Some(wgpu::TextureViewDimension::Cube),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weave_tiles_and_alternates() {
        let h = weave_height(64, 8);
        // Tileable: the first and last columns/rows continue each other (period = texture).
        let row_diff: i32 = (0..64)
            .map(|x| (h.get_pixel(x, 0)[0] as i32 - h.get_pixel(x, 63)[0] as i32).abs())
            .max()
            .unwrap();
        assert!(row_diff < 80, "edge mismatch {row_diff}");
        // At yarn crossings one yarn is up and the next crossing along a yarn has it down.
        let c = |i: u32, j: u32| h.get_pixel(i * 8 + 4, j * 8 + 4)[0];
        assert!(c(0, 0) > 200 && c(1, 1) > 200);
        // The gaps between yarns are low.
        assert!(h.get_pixel(0, 0)[0] < 60);
        // Heights use the range.
        let (lo, hi) = h
            .pixels()
            .fold((255u8, 0u8), |(lo, hi), p| (lo.min(p[0]), hi.max(p[0])));
        assert!(lo < 40 && hi > 230, "range {lo}..{hi}");
    }

    #[test]
    fn cube_directions_point_at_their_faces() {
        let axes = [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z];
        for (f, axis) in axes.iter().enumerate() {
            assert!((cube_direction(f, 0.5, 0.5) - *axis).length() < 1e-6);
        }
        // +X face: s grows towards −z, t grows towards −y (Vulkan's table).
        assert!(cube_direction(0, 0.9, 0.5).z < 0.0);
        assert!(cube_direction(0, 0.5, 0.9).y < 0.0);
        // +Y face: t grows towards +z.
        assert!(cube_direction(2, 0.5, 0.9).z > 0.0);
    }

    #[test]
    fn environment_is_sky_above_and_floor_below() {
        let up = environment_radiance(Vec3::Y);
        let down = environment_radiance(-Vec3::Y);
        assert!(up.z > up.x, "sky is blue");
        assert!(down.length() < up.length());
    }

    #[test]
    fn toon_ramp_has_flat_bands() {
        let r = toon_ramp(64, 4);
        let mut values: Vec<u8> = r.pixels().map(|p| p[0]).collect();
        values.dedup();
        assert_eq!(values.len(), 4);
        assert!(values.windows(2).all(|w| w[0] < w[1]));
        // Even steps once encoded for display (within 8-bit rounding).
        let shown: Vec<f32> = values
            .iter()
            .map(|&v| linear_to_srgb(v as f32 / 255.0))
            .collect();
        let steps: Vec<f32> = shown.windows(2).map(|w| w[1] - w[0]).collect();
        for s in &steps {
            assert!((s - steps[0]).abs() < 0.02, "uneven bands {shown:?}");
        }
    }

    #[test]
    fn mip_downsample_averages() {
        let data = [0u8, 255, 255, 0];
        let (out, w, h) = downsample(&data, 2, 2, 1);
        assert_eq!((w, h), (1, 1));
        assert!((out[0] as i32 - 128).abs() <= 1);
    }
}
