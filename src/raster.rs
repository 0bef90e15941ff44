//! A small CPU rasteriser for pictures without a GPU (contact sheets, tests): orthographic or
//! perspective camera, z-buffer, Lambert + ambient shading, optional base-colour texture,
//! PNG output through `image`.
//!
//! Triangles are filled with edge functions over their bounding box (pixel centres, top-left
//! fill rule not needed for a picture). Attributes are interpolated with perspective-correct
//! barycentrics. Back faces are drawn too (the lighting uses the normal facing the camera), so
//! an open or inverted mesh still shows up instead of vanishing.

use crate::math::{Mat4, Vec2, Vec3, Vec4};
use crate::rig::Texture;

/// An RGB8 colour buffer with a depth buffer.
#[derive(Clone, Debug)]
pub struct Canvas {
    pub width: u32,
    pub height: u32,
    /// Row-major RGB8, sRGB.
    pub rgb: Vec<[u8; 3]>,
    /// Clip-space depth per pixel (smaller is nearer); `f32::INFINITY` where empty.
    pub depth: Vec<f32>,
}

/// How to shade a mesh.
#[derive(Clone, Copy, Debug)]
pub struct Shading {
    /// Direction *towards* the key light, world space (normalised by the rasteriser).
    pub light_dir: Vec3,
    /// Ambient term, 0..1 (default 0.35).
    pub ambient: f32,
    /// Diffuse term, 0..1 (default 0.75).
    pub diffuse: f32,
    /// Linear RGB used where the mesh has no texture.
    pub base_color: Vec3,
}

impl Default for Shading {
    fn default() -> Self {
        Self {
            light_dir: Vec3::new(0.4, 0.8, 0.6),
            ambient: 0.35,
            diffuse: 0.75,
            base_color: Vec3::splat(0.6),
        }
    }
}

fn srgb_to_linear(c: u8) -> f32 {
    let s = c as f32 / 255.0;
    if s <= 0.04045 {
        s / 12.92
    } else {
        ((s + 0.055) / 1.055).powf(2.4)
    }
}

fn linear_to_srgb(l: f32) -> u8 {
    let l = l.clamp(0.0, 1.0);
    let s = if l <= 0.003_130_8 {
        12.92 * l
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    (s * 255.0 + 0.5) as u8
}

/// Bilinear lookup of a texture in linear RGB, repeat wrapping.
fn sample(tex: &Texture, lut: &[f32; 256], uv: Vec2) -> Vec3 {
    let (w, h) = (tex.width as f32, tex.height as f32);
    let x = uv.x.rem_euclid(1.0) * w - 0.5;
    let y = uv.y.rem_euclid(1.0) * h - 0.5;
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let px = |xi: f32, yi: f32| {
        let xi = (xi as i64).rem_euclid(tex.width as i64) as usize;
        let yi = (yi as i64).rem_euclid(tex.height as i64) as usize;
        let i = (yi * tex.width as usize + xi) * 4;
        Vec3::new(
            lut[tex.rgba8[i] as usize],
            lut[tex.rgba8[i + 1] as usize],
            lut[tex.rgba8[i + 2] as usize],
        )
    };
    let top = px(x0, y0).lerp(px(x0 + 1.0, y0), fx);
    let bot = px(x0, y0 + 1.0).lerp(px(x0 + 1.0, y0 + 1.0), fx);
    top.lerp(bot, fy)
}

impl Canvas {
    pub fn new(width: u32, height: u32, background: [u8; 3]) -> Self {
        let n = (width * height) as usize;
        Self {
            width,
            height,
            rgb: vec![background; n],
            depth: vec![f32::INFINITY; n],
        }
    }

    /// Fills a rectangle (clipped to the canvas) with a colour, leaving depth alone.
    pub fn fill_rect(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, c: [u8; 3]) {
        for y in y0.max(0)..y1.min(self.height as i32) {
            for x in x0.max(0)..x1.min(self.width as i32) {
                self.rgb[(y as u32 * self.width + x as u32) as usize] = c;
            }
        }
    }

    /// Draws a triangle mesh. `clip_from_world` projects to clip space (wgpu/D3D depth 0..1);
    /// `positions` and `normals` are world space; `uvs` may be empty.
    #[allow(clippy::too_many_arguments)]
    pub fn draw_mesh(
        &mut self,
        clip_from_world: &Mat4,
        positions: &[Vec3],
        normals: &[Vec3],
        uvs: &[Vec2],
        indices: &[u32],
        texture: Option<&Texture>,
        shading: &Shading,
    ) {
        let lut: [f32; 256] = std::array::from_fn(|i| srgb_to_linear(i as u8));
        let light = shading.light_dir.normalize_or_zero();
        let (w, h) = (self.width as f32, self.height as f32);
        // Project every vertex once: screen x, y, depth and 1/w.
        let proj: Vec<Vec4> = positions
            .iter()
            .map(|p| {
                let c = *clip_from_world * p.extend(1.0);
                let iw = 1.0 / c.w;
                Vec4::new(
                    (c.x * iw * 0.5 + 0.5) * w,
                    (0.5 - c.y * iw * 0.5) * h,
                    c.z * iw,
                    iw,
                )
            })
            .collect();
        // Camera direction for two-sided lighting: the clip-space forward axis in world.
        let inv = clip_from_world.inverse();
        let near = inv.project_point3(Vec3::new(0.0, 0.0, 0.0));
        let far = inv.project_point3(Vec3::new(0.0, 0.0, 1.0));
        let view_dir = (far - near).normalize_or_zero();
        for t in indices.chunks_exact(3) {
            let (ia, ib, ic) = (t[0] as usize, t[1] as usize, t[2] as usize);
            let (a, b, c) = (proj[ia], proj[ib], proj[ic]);
            if a.w <= 0.0 || b.w <= 0.0 || c.w <= 0.0 {
                continue; // behind the camera; pictures never need clipping against near
            }
            let area = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
            if area.abs() < 1e-12 {
                continue;
            }
            let x0 = a.x.min(b.x).min(c.x).floor().max(0.0) as i32;
            let x1 = a.x.max(b.x).max(c.x).ceil().min(w - 1.0) as i32;
            let y0 = a.y.min(b.y).min(c.y).floor().max(0.0) as i32;
            let y1 = a.y.max(b.y).max(c.y).ceil().min(h - 1.0) as i32;
            for py in y0..=y1 {
                for px in x0..=x1 {
                    let (sx, sy) = (px as f32 + 0.5, py as f32 + 0.5);
                    let w0 = ((b.x - sx) * (c.y - sy) - (b.y - sy) * (c.x - sx)) / area;
                    let w1 = ((c.x - sx) * (a.y - sy) - (c.y - sy) * (a.x - sx)) / area;
                    let w2 = 1.0 - w0 - w1;
                    if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                        continue;
                    }
                    let z = w0 * a.z + w1 * b.z + w2 * c.z;
                    let i = (py as u32 * self.width + px as u32) as usize;
                    if z < 0.0 || z >= self.depth[i] {
                        continue;
                    }
                    self.depth[i] = z;
                    // Perspective-correct weights.
                    let (p0, p1, p2) = (w0 * a.w, w1 * b.w, w2 * c.w);
                    let s = p0 + p1 + p2;
                    let (p0, p1, p2) = (p0 / s, p1 / s, p2 / s);
                    let mut n = (normals[ia] * p0 + normals[ib] * p1 + normals[ic] * p2)
                        .normalize_or_zero();
                    if n.dot(view_dir) > 0.0 {
                        n = -n;
                    }
                    let albedo = match texture {
                        Some(tex) if !uvs.is_empty() => {
                            sample(tex, &lut, uvs[ia] * p0 + uvs[ib] * p1 + uvs[ic] * p2)
                        }
                        _ => shading.base_color,
                    };
                    // A weak headlight (from the camera) keeps dark cloth readable in shadow.
                    let headlight = 0.25 * (-n.dot(view_dir)).max(0.0);
                    let l = shading.ambient + shading.diffuse * n.dot(light).max(0.0) + headlight;
                    let col = albedo * l;
                    self.rgb[i] = [
                        linear_to_srgb(col.x),
                        linear_to_srgb(col.y),
                        linear_to_srgb(col.z),
                    ];
                }
            }
        }
    }

    /// Copies another canvas into this one at (x, y).
    pub fn blit(&mut self, src: &Canvas, x: u32, y: u32) {
        for sy in 0..src.height {
            for sx in 0..src.width {
                let (dx, dy) = (x + sx, y + sy);
                if dx < self.width && dy < self.height {
                    self.rgb[(dy * self.width + dx) as usize] =
                        src.rgb[(sy * src.width + sx) as usize];
                }
            }
        }
    }

    /// Encodes the colour buffer as PNG.
    pub fn to_png(&self) -> Result<Vec<u8>, image::ImageError> {
        let flat: Vec<u8> = self.rgb.iter().flatten().copied().collect();
        let img =
            image::RgbImage::from_raw(self.width, self.height, flat).expect("buffer matches size");
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png)?;
        Ok(out.into_inner())
    }
}

/// An orthographic `clip_from_world` looking along `forward` (world), with `up`, centred on
/// `center`, showing `half_width` × `half_height` metres, depth range ±`depth` metres.
pub fn ortho(
    center: Vec3,
    forward: Vec3,
    up: Vec3,
    half_width: f32,
    half_height: f32,
    depth: f32,
) -> Mat4 {
    let f = forward.normalize();
    let r = f.cross(up).normalize();
    let u = r.cross(f);
    // view: rows r, u, -f (right-handed camera looking down −z).
    let view = Mat4::from_cols(
        Vec4::new(r.x, u.x, -f.x, 0.0),
        Vec4::new(r.y, u.y, -f.y, 0.0),
        Vec4::new(r.z, u.z, -f.z, 0.0),
        Vec4::new(-r.dot(center), -u.dot(center), f.dot(center), 1.0),
    );
    // x, y to −1..1; view z (−depth..+depth in front/behind the centre) to depth 0..1.
    let proj = Mat4::from_cols(
        Vec4::new(1.0 / half_width, 0.0, 0.0, 0.0),
        Vec4::new(0.0, 1.0 / half_height, 0.0, 0.0),
        Vec4::new(0.0, 0.0, -0.5 / depth, 0.0),
        Vec4::new(0.0, 0.0, 0.5, 1.0),
    );
    proj * view
}

/// A 5×7 bitmap font for labels (digits, upper case, a few signs). Unknown glyphs draw as blanks.
fn glyph(c: char) -> [u8; 7] {
    match c.to_ascii_uppercase() {
        'A' => [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'D' => [0x1E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1E],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'F' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'H' => [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'I' => [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'J' => [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        'K' => [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11],
        'L' => [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        'M' => [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'P' => [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        'Q' => [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'U' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'V' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'W' => [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A],
        'X' => [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        'Y' => [0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x04],
        'Z' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        '.' => [0, 0, 0, 0, 0, 0x0C, 0x0C],
        '_' => [0, 0, 0, 0, 0, 0, 0x1F],
        '-' => [0, 0, 0, 0x1F, 0, 0, 0],
        ':' => [0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0],
        '=' => [0, 0, 0x1F, 0, 0x1F, 0, 0],
        _ => [0; 7],
    }
}

impl Canvas {
    /// Writes `text` at (x, y) with the bitmap font, each font pixel `scale` pixels wide.
    pub fn text(&mut self, x: i32, y: i32, text: &str, scale: i32, c: [u8; 3]) {
        for (k, ch) in text.chars().enumerate() {
            let g = glyph(ch);
            let gx = x + k as i32 * 6 * scale;
            for (row, bits) in g.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) != 0 {
                        let px = gx + col * scale;
                        let py = y + row as i32 * scale;
                        self.fill_rect(px, py, px + scale, py + scale, c);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearer_triangle_wins_and_lighting_follows_the_normal() {
        let mut c = Canvas::new(32, 32, [0, 0, 0]);
        let cam = ortho(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y, 1.0, 1.0, 10.0);
        let tri = |z: f32| {
            vec![
                Vec3::new(-1.0, -1.0, z),
                Vec3::new(1.0, -1.0, z),
                Vec3::new(0.0, 1.0, z),
            ]
        };
        let n = vec![Vec3::Z; 3];
        let lit = Shading {
            light_dir: Vec3::Z,
            ambient: 0.0,
            diffuse: 1.0,
            base_color: Vec3::new(1.0, 0.0, 0.0),
        };
        let dark = Shading {
            base_color: Vec3::new(0.0, 1.0, 0.0),
            ..lit
        };
        // The green triangle is behind (z = −1, camera looks down −z from +z) and drawn last.
        c.draw_mesh(&cam, &tri(1.0), &n, &[], &[0, 1, 2], None, &lit);
        c.draw_mesh(&cam, &tri(-1.0), &n, &[], &[0, 1, 2], None, &dark);
        let centre = c.rgb[(16 * 32 + 16) as usize];
        assert!(centre[0] > 200 && centre[1] == 0, "{centre:?}");
        // Outside the triangle the background stays.
        assert_eq!(c.rgb[0], [0, 0, 0]);
        let png = c.to_png().unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}
