//! The ninja's base-colour atlas, painted procedurally: a plain-weave cloth (alternating
//! warp/weft threads with slow dye variation), wrapped straps on the forearms and shins, a
//! knotted belt, the hood's eye slit, tabi soles and seams.
//!
//! Everything is a pure function of pixel coordinates (an integer hash gives the noise), so the
//! texture is identical on every run and machine.

use super::mesh::{Fabric, PartLayout, ATLAS};
use crate::rig::Texture;

/// Integer hash (a variant of the "lowbias32" mixer) → [0, 1).
fn hash(x: u32, y: u32, seed: u32) -> f32 {
    let mut h =
        x.wrapping_mul(0x9E37_79B9) ^ y.wrapping_mul(0x85EB_CA6B) ^ seed.wrapping_mul(0xC2B2_AE35);
    h ^= h >> 16;
    h = h.wrapping_mul(0x7FEB_352D);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846C_A68B);
    h ^= h >> 16;
    (h >> 8) as f32 / (1u32 << 24) as f32
}

/// Smooth value noise with a cell of `cell` pixels.
fn value_noise(x: f32, y: f32, cell: f32, seed: u32) -> f32 {
    let (fx, fy) = (x / cell, y / cell);
    let (ix, iy) = (fx.floor(), fy.floor());
    let (tx, ty) = (fx - ix, fy - iy);
    let (sx, sy) = (tx * tx * (3.0 - 2.0 * tx), ty * ty * (3.0 - 2.0 * ty));
    let (ix, iy) = (ix as i32 as u32, iy as i32 as u32);
    let a = hash(ix, iy, seed);
    let b = hash(ix.wrapping_add(1), iy, seed);
    let c = hash(ix, iy.wrapping_add(1), seed);
    let d = hash(ix.wrapping_add(1), iy.wrapping_add(1), seed);
    let top = a + (b - a) * sx;
    let bot = c + (d - c) * sx;
    top + (bot - top) * sy
}

type Rgb = [f32; 3];

fn scale(c: Rgb, k: f32) -> Rgb {
    [c[0] * k, c[1] * k, c[2] * k]
}

fn lerp(a: Rgb, b: Rgb, t: f32) -> Rgb {
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

/// Plain weave: threads `pitch` pixels wide, over/under alternating, each thread a little
/// lighter in its middle; slow dye variation on top.
fn weave(base: Rgb, px: u32, py: u32, pitch: u32, seed: u32) -> Rgb {
    let (cx, cy) = (px / pitch, py / pitch);
    let over = (cx + cy) % 2 == 0;
    let along = if over { py % pitch } else { px % pitch };
    let across = if over { px % pitch } else { py % pitch };
    let _ = along;
    let mid = 1.0 - ((across as f32 + 0.5) / pitch as f32 - 0.5).abs() * 0.5;
    let thread = 0.86 + 0.14 * mid + 0.05 * (hash(cx, cy, seed) - 0.5);
    let dye = 0.92 + 0.16 * value_noise(px as f32, py as f32, 48.0, seed + 1);
    scale(base, thread * dye)
}

const INDIGO: Rgb = [0.05, 0.056, 0.085];
const CHARCOAL: Rgb = [0.07, 0.07, 0.078];
const STRAP: Rgb = [0.12, 0.115, 0.105];
const BELT: Rgb = [0.42, 0.07, 0.07];
const SKIN: Rgb = [0.80, 0.60, 0.47];
const EYE: Rgb = [0.06, 0.05, 0.05];
const SOLE: Rgb = [0.30, 0.27, 0.24];
const GLOVE: Rgb = [0.085, 0.08, 0.08];

/// Diagonal wraps: bands `width` cm wide climbing around the limb, with a dark gap between.
fn wraps(u: f32, s: f32, px: u32, py: u32, width: f32) -> Rgb {
    let phase = (s / width + u).rem_euclid(1.0);
    let edge = (phase - 0.5).abs() * 2.0; // 1 at the band's edges
    let gap = ((edge - 0.86) / 0.14).clamp(0.0, 1.0);
    let c = weave(STRAP, px, py, 3, 7);
    scale(c, 1.0 - 0.65 * gap)
}

/// The colour of one atlas pixel of a fabric at part coordinates (u around, s along in cm).
fn paint(fabric: Fabric, u: f32, s: f32, px: u32, py: u32) -> Rgb {
    match fabric {
        Fabric::Hood => {
            // s = height above 145 cm; the face opening faces u = 0.5.
            let du = (u - 0.5).abs();
            let slit = du < 0.115 && (17.6..21.0).contains(&s);
            let cloth = weave(INDIGO, px, py, 3, 1);
            if slit {
                let edge = (du / 0.115).max(((s - 19.3).abs() / 1.7).min(1.0));
                let mut c = lerp(SKIN, scale(SKIN, 0.8), edge * edge);
                for eye_u in [0.5 - 0.047, 0.5 + 0.047] {
                    let e = ((u - eye_u) / 0.026).powi(2) + ((s - 19.3) / 0.55).powi(2);
                    if e < 1.0 {
                        // Dark iris inside, a rim of white around it.
                        c = if e < 0.5 { EYE } else { [0.78, 0.76, 0.72] };
                    }
                }
                c
            } else {
                // A darker hem around the slit.
                let hem = du < 0.13 && (16.8..21.8).contains(&s);
                if hem {
                    scale(cloth, 0.7)
                } else {
                    cloth
                }
            }
        }
        Fabric::Tunic => {
            let mut c = weave(INDIGO, px, py, 3, 2);
            // Crossed lapels, left over right: the upper panel's edge runs from the right of the
            // neck (u < 0.5) down to the left of the belt; the lower panel shows only at the
            // neck. s is the height above the crotch (the belt sits at s ≈ 17–24).
            let band = |target: f32| (u - target).abs() < 0.011;
            let upper = 0.43 + (62.0 - s) / 40.0 * 0.17;
            let lower = 0.57 - (62.0 - s) / 12.0 * 0.07;
            if (22.0..63.0).contains(&s) && band(upper) || (50.0..63.0).contains(&s) && band(lower)
            {
                c = scale(c, 0.55);
            }
            // Side seams.
            if (u - 0.25).abs() < 0.003 || (u - 0.75).abs() < 0.003 {
                c = scale(c, 0.75);
            }
            c
        }
        Fabric::Belt => {
            let mut c = weave(BELT, px, py, 2, 3);
            // Two stitched lines along the belt.
            let f = s.rem_euclid(7.0);
            if (f - 1.2).abs() < 0.12 || (f - 5.8).abs() < 0.12 {
                c = scale(c, 0.65);
            }
            // The knot at the front.
            if (u - 0.5).abs() < 0.035 {
                c = scale(c, 0.8 + 0.2 * ((u - 0.5).abs() / 0.035));
            }
            c
        }
        Fabric::Sleeve => {
            // s runs from inside the torso (0) to the wrist (~62); forearm guards below the elbow.
            if s > 40.0 {
                wraps(u, s, px, py, 3.2)
            } else {
                weave(INDIGO, px, py, 3, 4)
            }
        }
        Fabric::Trousers => {
            // s runs from the waist (0) down to the ankle (~89); shin wraps below the knee.
            if s > 53.0 {
                wraps(u, s, px, py, 4.0)
            } else {
                let mut c = weave(INDIGO, px, py, 3, 5);
                if s > 51.0 {
                    c = scale(c, 0.7);
                }
                c
            }
        }
        Fabric::Tabi => {
            let mut c = weave(CHARCOAL, px, py, 2, 6);
            // Sole: the seam lies under the foot (u = 0 and 1).
            let du = u.min(1.0 - u);
            if du < 0.14 {
                c = weave(SOLE, px, py, 2, 9);
            }
            // Split toe: a dark line along the top near the toe end.
            if (u - 0.5).abs() < 0.01 && s > 23.0 {
                c = scale(c, 0.4);
            }
            c
        }
        Fabric::Glove => {
            let c = GLOVE;
            let grain = 0.9 + 0.2 * value_noise(px as f32, py as f32, 3.0, 8);
            scale(c, grain)
        }
    }
}

fn to_srgb8(linear: f32) -> u8 {
    let l = linear.clamp(0.0, 1.0);
    let s = if l <= 0.003_130_8 {
        12.92 * l
    } else {
        1.055 * l.powf(1.0 / 2.4) - 0.055
    };
    (s * 255.0 + 0.5) as u8
}

/// Paints the atlas for the given part layouts; pixels outside any part stay a neutral cloth.
pub fn paint_atlas(layouts: &[PartLayout]) -> Texture {
    let n = ATLAS;
    let mut rgba = vec![0u8; (n * n * 4) as usize];
    for py in 0..n {
        for px in 0..n {
            let mut c = weave(INDIGO, px, py, 3, 0);
            for l in layouts {
                let r = l.rect;
                if px >= r.x0 && px < r.x1 && py >= r.y0 && py < r.y1 {
                    let u = (px - r.x0) as f32 / (r.x1 - r.x0 - 1) as f32;
                    let v = (py - r.y0) as f32 / (r.y1 - r.y0 - 1) as f32;
                    let s = l.s_min + v * (l.s_max - l.s_min);
                    c = paint(l.fabric, u, s, px, py);
                }
            }
            let i = ((py * n + px) * 4) as usize;
            rgba[i] = to_srgb8(c[0]);
            rgba[i + 1] = to_srgb8(c[1]);
            rgba[i + 2] = to_srgb8(c[2]);
            rgba[i + 3] = 255;
        }
    }
    Texture {
        name: "ninja_basecolor".into(),
        width: n,
        height: n,
        rgba8: rgba,
    }
}
