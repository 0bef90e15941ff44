//! Writing a cloth frame: Wavefront OBJ, ASCII PLY, and a PNG with three orthographic views
//! (front, side, top) rasterised on the CPU so a person can look at a result without a renderer.

use std::io::Write;
use std::path::Path;

use crate::math::{Vec3, Vec3A};

use super::collide::{Collider, Shape};
use super::model::ClothModel;

/// Errors writing output files.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot encode {path}: {source}")]
    Image {
        path: String,
        source: image::ImageError,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |source| ExportError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Writes positions `x` of `model` as an OBJ, one group per garment.
pub fn write_obj(path: &Path, model: &ClothModel, x: &[Vec3A]) -> Result<(), ExportError> {
    let body = |w: &mut crate::output::AtomicFile| -> std::io::Result<()> {
        writeln!(w, "# drape cloth, {} particles", x.len())?;
        for p in x {
            writeln!(w, "v {} {} {}", p.x, p.y, p.z)?;
        }
        for g in &model.garments {
            writeln!(w, "g {}", g.name)?;
            for t in &model.triangles[g.triangles.clone()] {
                writeln!(w, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1)?;
            }
        }
        Ok(())
    };
    crate::output::write_with(path, body).map_err(io_err(path))
}

/// Writes positions `x` of `model` as an ASCII PLY (vertices with a garment index, faces).
pub fn write_ply(path: &Path, model: &ClothModel, x: &[Vec3A]) -> Result<(), ExportError> {
    let body = |w: &mut crate::output::AtomicFile| -> std::io::Result<()> {
        writeln!(w, "ply\nformat ascii 1.0\ncomment drape cloth")?;
        writeln!(w, "element vertex {}", x.len())?;
        writeln!(
            w,
            "property float x\nproperty float y\nproperty float z\nproperty uint garment"
        )?;
        writeln!(w, "element face {}", model.triangles.len())?;
        writeln!(w, "property list uchar uint vertex_indices\nend_header")?;
        for (p, g) in x.iter().zip(&model.garment_of) {
            writeln!(w, "{} {} {} {}", p.x, p.y, p.z, g)?;
        }
        for t in &model.triangles {
            writeln!(w, "3 {} {} {}", t[0], t[1], t[2])?;
        }
        Ok(())
    };
    crate::output::write_with(path, body).map_err(io_err(path))
}

const GARMENT_COLOURS: [[f32; 3]; 6] = [
    [0.85, 0.35, 0.25],
    [0.25, 0.55, 0.85],
    [0.35, 0.75, 0.35],
    [0.85, 0.75, 0.25],
    [0.65, 0.35, 0.75],
    [0.35, 0.75, 0.75],
];

/// Renders front (looking along −Z), side (along −X) and top (along −Y) orthographic views of
/// the cloth, flat-shaded per triangle and coloured per garment, with the colliders outlined in
/// grey, into one PNG `3·size × size` pixels.
pub fn write_png(
    path: &Path,
    model: &ClothModel,
    x: &[Vec3A],
    colliders: &[Collider],
    size: u32,
) -> Result<(), ExportError> {
    let size = size.clamp(64, 2048);
    let (w, h) = (3 * size, size);
    let mut rgb = vec![245u8; (w * h * 3) as usize];
    // Common scale: fit the cloth and the bounded colliders.
    let mut lo = Vec3A::splat(f32::INFINITY);
    let mut hi = Vec3A::splat(f32::NEG_INFINITY);
    for p in x.iter().filter(|p| p.is_finite()) {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    for c in colliders {
        if !matches!(c.cur, Shape::Plane { .. }) {
            let (a, b) = c.cur.aabb();
            lo = lo.min(a);
            hi = hi.max(b);
        }
    }
    if !lo.is_finite() {
        lo = Vec3A::splat(-1.0);
        hi = Vec3A::splat(1.0);
    }
    let centre = (lo + hi) * 0.5;
    let extent = (hi - lo).max_element().max(1e-3) * 1.15;
    let scale = size as f32 / extent;
    // view v: (screen-right axis, screen-up axis, towards-viewer axis)
    let views: [(usize, usize, usize, f32); 3] = [(0, 1, 2, 1.0), (2, 1, 0, -1.0), (0, 2, 1, 1.0)];
    let light = Vec3::new(0.4, 0.8, 0.45).normalize();
    for (vi, &(ax, ay, az, flip)) in views.iter().enumerate() {
        let x0 = vi as u32 * size;
        let to_screen = |p: Vec3A| -> (f32, f32, f32) {
            let q = p - centre;
            let sx = flip * q[ax] * scale + size as f32 * 0.5;
            // Top view: +Z goes down the image (looking down from +Y with X to the right).
            let sy = if vi == 2 {
                q[ay] * scale + size as f32 * 0.5
            } else {
                size as f32 * 0.5 - q[ay] * scale
            };
            let depth = if vi == 2 { q[1] } else { flip * q[az] };
            (sx, sy, depth)
        };
        let mut zbuf = vec![f32::NEG_INFINITY; (size * size) as usize];
        for t in &model.triangles {
            let [a, b, c] = t.map(|i| x[i as usize]);
            if !(a.is_finite() && b.is_finite() && c.is_finite()) {
                continue;
            }
            let n = Vec3::from((b - a).cross(c - a)).normalize_or_zero();
            let shade = 0.35 + 0.65 * n.dot(light).abs();
            let g = model.garment_of[t[0] as usize] as usize;
            let col = GARMENT_COLOURS[g % GARMENT_COLOURS.len()].map(|c| (c * shade * 255.0) as u8);
            let (pa, pb, pc) = (to_screen(a), to_screen(b), to_screen(c));
            let minx = pa.0.min(pb.0).min(pc.0).floor().max(0.0) as i32;
            let maxx = pa.0.max(pb.0).max(pc.0).ceil().min(size as f32 - 1.0) as i32;
            let miny = pa.1.min(pb.1).min(pc.1).floor().max(0.0) as i32;
            let maxy = pa.1.max(pb.1).max(pc.1).ceil().min(size as f32 - 1.0) as i32;
            let area = (pb.0 - pa.0) * (pc.1 - pa.1) - (pc.0 - pa.0) * (pb.1 - pa.1);
            if area.abs() < 1e-9 {
                continue;
            }
            for py in miny..=maxy {
                for px in minx..=maxx {
                    let (fx, fy) = (px as f32 + 0.5, py as f32 + 0.5);
                    let w0 = ((pb.0 - fx) * (pc.1 - fy) - (pc.0 - fx) * (pb.1 - fy)) / area;
                    let w1 = ((pc.0 - fx) * (pa.1 - fy) - (pa.0 - fx) * (pc.1 - fy)) / area;
                    let w2 = 1.0 - w0 - w1;
                    if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                        continue;
                    }
                    let z = w0 * pa.2 + w1 * pb.2 + w2 * pc.2;
                    let zi = (py as u32 * size + px as u32) as usize;
                    if z > zbuf[zi] {
                        zbuf[zi] = z;
                        let o = ((py as u32 * w + x0 + px as u32) * 3) as usize;
                        rgb[o..o + 3].copy_from_slice(&col);
                    }
                }
            }
        }
        // Collider outlines (drawn over the cloth, thin grey).
        let mut plot = |sx: f32, sy: f32| {
            if sx >= 0.0 && sy >= 0.0 && sx < size as f32 && sy < size as f32 {
                let o = ((sy as u32 * w + x0 + sx as u32) * 3) as usize;
                rgb[o..o + 3].copy_from_slice(&[110, 110, 110]);
            }
        };
        let circle = |c: Vec3A, r: f32, plot: &mut dyn FnMut(f32, f32)| {
            let (cx, cy, _) = to_screen(c);
            let steps = (r * scale * 7.0).clamp(16.0, 2000.0) as i32;
            for k in 0..steps {
                let a = k as f32 / steps as f32 * std::f32::consts::TAU;
                plot(cx + a.cos() * r * scale, cy + a.sin() * r * scale);
            }
        };
        for c in colliders {
            match c.cur {
                Shape::Sphere { centre, radius } => circle(centre, radius, &mut plot),
                Shape::Capsule { c1, r1, c2, r2 } => {
                    for k in 0..=8 {
                        let t = k as f32 / 8.0;
                        circle(c1.lerp(c2, t), r1 + (r2 - r1) * t, &mut plot);
                    }
                }
                Shape::Plane { point, normal } => {
                    // Trace the plane's line in views where it is seen edge-on-ish.
                    let n = Vec3::from(normal);
                    let mut axis = Vec3::ZERO;
                    axis[az] = 1.0;
                    let dir = n.cross(axis);
                    if dir.length() > 0.3 {
                        let dir = Vec3A::from(dir.normalize());
                        for k in -2000..2000 {
                            let p = point + dir * (k as f32 * extent / 1000.0);
                            let (sx, sy, _) = to_screen(p);
                            plot(sx, sy);
                        }
                    }
                }
            }
        }
    }
    let img = image::RgbImage::from_raw(w, h, rgb).expect("buffer size matches");
    crate::output::save_image(&img, path).map_err(|source| ExportError::Image {
        path: path.display().to_string(),
        source,
    })
}
