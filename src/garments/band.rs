//! A band round the body, all pinned, with two tails hanging from its back: the shape the sash
//! (round the waist) and the headband (round the forehead) share, laid on rings that hug the
//! body at a clearance.

use super::fit::BodyAtRest;
use super::sheet::Sheet;
use super::GarmentSpec;
use crate::math::Vec3;

/// A band (closed ring, all pinned) `band_height` tall around `centre`, each row hugging the
/// body at `clearance`, plus two tails `tail_width` wide and `tail_length` long (scaled by the
/// spec's length) hanging from its back, `tail_spread` either side of the back centre, their top
/// rows pinned.
#[allow(clippy::too_many_arguments)]
/// How far from its axis a band's rays look for the body's surface, m × the body scale: far
/// enough for RobotExpressive's box head, 2.7 units across at a scale of 2.03 (with 0.6, as the
/// waist garments' rays, they ended inside it and the headband's band was laid out 10 cm
/// inside its head). A ray stops 3 cm past the surface it leaves, so on a smaller body this
/// changes nothing.
const BAND_REACH: f32 = 2.0;

pub(super) fn band_with_tails(
    body: &BodyAtRest,
    spec: &GarmentSpec,
    centre: Vec3,
    band_height: f32,
    clearance: f32,
    tail_width: f32,
    tail_length: f32,
    tail_spread: f32,
) -> Sheet {
    let mut sheet = Sheet::default();
    let ring_pts = fitted_ring(body, centre, spec.spacing, clearance);
    let cols = ring_pts.len();
    let rows = ((band_height / spec.spacing).round() as usize).max(1) + 1;
    let dy = band_height / (rows - 1) as f32;
    let top = centre + Vec3::Y * 0.5 * band_height;
    // Each band row hugs the body at its own height: rays from the axis at that height.
    let row_rings: Vec<Vec<(Vec3, f32)>> = (0..rows)
        .map(|r| {
            let c = top - Vec3::Y * dy * r as f32;
            ring_pts
                .iter()
                .map(|&(dir, _)| (dir, body.ray_exit(c, dir, clearance, BAND_REACH)))
                .collect()
        })
        .collect();
    let base = sheet.grid(cols, rows, true, |c, r| {
        let (dir, rad) = row_rings[r][c];
        top + dir * rad - Vec3::Y * dy * r as f32
    });
    sheet.pinned.extend(base..base + (cols * rows) as u32);
    // The knot at the back (column 0 faces −forward): tails start just outside the band.
    let back = ring_pts[0].1;
    let tail_cols = ((tail_width / spec.spacing).round() as usize).max(1) + 1;
    let tail_rows = ((tail_length * spec.length / spec.spacing).round() as usize).max(2) + 1;
    let tdy = tail_length * spec.length / (tail_rows - 1) as f32;
    let tail_clear = clearance + 0.012 * body.scale;
    for side in [-1.0f32, 1.0] {
        let start = centre - body.forward * (back + 0.012 * body.scale)
            + body.left * side * tail_spread
            - Vec3::Y * 0.25 * band_height;
        let tb = sheet.grid(tail_cols, tail_rows, false, |c, r| {
            let s = (c as f32 / (tail_cols - 1) as f32 - 0.5) * tail_width;
            // Tails fan out a little as they fall.
            let fan = side * 0.15 * tdy * r as f32;
            let p = start + body.left * (s + fan) - Vec3::Y * tdy * r as f32;
            if r == 0 {
                p
            } else {
                body.push_out(p, tail_clear)
            }
        });
        sheet.pinned.extend((0..tail_cols as u32).map(|c| tb + c));
    }
    sheet
}

/// A horizontal ring of `n` points around `centre` hugging the body at `clearance`, rays taken in
/// the directions of angle θ_c = 2π c / n measured from the back (−forward) towards the left.
fn ring(body: &BodyAtRest, centre: Vec3, n: usize, clearance: f32) -> Vec<(Vec3, f32)> {
    (0..n)
        .map(|c| {
            let th = std::f32::consts::TAU * c as f32 / n as f32;
            let dir = -body.forward * th.cos() + body.left * th.sin();
            let r = body.ray_exit(centre, dir, clearance, BAND_REACH);
            (dir, r)
        })
        .collect()
}

/// Columns for a closed ring of circumference `circ` at `spacing` (even, ≥ 8).
fn ring_columns(circ: f32, spacing: f32) -> usize {
    (((circ / spacing).round() as usize).max(8) + 1) & !1
}

fn ring_circumference(r: &[(Vec3, f32)]) -> f32 {
    let n = r.len();
    (0..n)
        .map(|k| {
            let (d0, r0) = r[k];
            let (d1, r1) = r[(k + 1) % n];
            (d0 * r0).distance(d1 * r1)
        })
        .sum()
}

/// Ring radii at `n` columns, measuring the body first with 64 rays then resampling.
fn fitted_ring(body: &BodyAtRest, centre: Vec3, spacing: f32, clearance: f32) -> Vec<(Vec3, f32)> {
    let probe = ring(body, centre, 64, clearance);
    let cols = ring_columns(ring_circumference(&probe), spacing);
    ring(body, centre, cols, clearance)
}
