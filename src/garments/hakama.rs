//! The hakama, a pleated divided trouser (umanori): its shape at rest and the measurements of
//! the rig's clips that only it needs (where the thighs reach over the waist, whether the arms
//! hang by the hips).

use super::fit::{leg_length, BodyAtRest};
use super::sheet::Sheet;
use super::{GarmentError, GarmentSpec};
use crate::math::Vec3;

/// The hakama: a divided trouser (umanori), two very wide legs side by side.
///
/// Each leg is one open sheet of cloth, half a skirt: its top row, all pinned, runs along the
/// outer half of the waist ring, from the back centre round that leg's hip to the front centre.
/// Below it the sheet widens within the top quarter of its length into a half-ellipse with
/// `ease` around the widest the leg's side of the body gets, folded in pleats. The two halves
/// meet at the body's mid-plane front and back, `2 · seam_gap` apart, and are not sewn there:
/// there is no crotch seam and no inner (gusset) panel, so between the legs each half hangs
/// free.
///
/// Why divided: a closed skirt must go round both legs, so a kicking knee lifts the whole skirt
/// and stretches its ring between the standing and the kicking leg (past Provot's limit in the
/// front and roundhouse kicks). A divided leg is lifted by its own thigh alone; its back panel
/// hangs from the waist, so it can reach the raised knee without stretching. The two halves
/// keep `seam_gap` from the mid-plane so they never start in contact.
pub(super) fn shape(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "hakama";
    let hips = body.joint("Hips", g)?;
    let spine = body.joint("Spine", g)?;
    let legs = leg_length(body, g)?;
    let clearance = spec.clearance;
    // Waist a little above the hip joint; hem at 70 % of the leg below it (mid-calf).
    let waist = Vec3::new(hips.x, hips.y + 0.3 * (spine.y - hips.y), hips.z);
    let hem_y = waist.y - 0.7 * legs * spec.length;
    // Half the gap between the two legs' inner panels, m: a few thicknesses, at least.
    let seam_gap = (0.2 * spec.spacing).max(4.0 * spec.fabric.thickness);
    // Horizontal room around the body at the hem, m (the wide hakama leg), and pleat depth.
    let ease = 0.08 * body.scale;
    let pleat = 0.03 * body.scale;
    let arms_hang_by_hips = arms_hang_by_hips(body, waist, hem_y);
    let mut sheet = Sheet::default();
    for side in [1.0f32, -1.0] {
        let left = body.left * side;
        let centre = waist + left * seam_gap;
        let dir = |th: f32| -body.forward * th.cos() + left * th.sin();
        // Outer half of the waist ring, back centre (θ = 0) → side → front centre (θ = π).
        let probe: Vec<(Vec3, f32)> = (0..=32)
            .map(|k| {
                let d = dir(std::f32::consts::PI * k as f32 / 32.0);
                (d, body.ray_exit(centre, d, clearance, 0.6))
            })
            .collect();
        let half_circ: f32 = probe
            .windows(2)
            .map(|w| (w[0].0 * w[0].1).distance(w[1].0 * w[1].1))
            .sum();
        let n_outer = ((half_circ / spec.spacing).round() as usize).max(4);
        // The widest the body gets on this side in each direction, from the waist down to the
        // hem (rays from the mid-line, so they pass the gap between the legs and find the
        // thigh's outside).
        let widest = |th: f32| {
            let d = dir(th);
            (0..=6)
                .map(|k| {
                    let y = waist.y + (hem_y - waist.y) * k as f32 / 6.0;
                    body.ray_exit(Vec3::new(centre.x, y, centre.z), d, clearance, 0.6)
                })
                .fold(0.0f32, f32::max)
        };
        // The waist's pins ride on the trunk, but in a kick the thigh's proxy swings up over
        // the hip crease: on the built-in ninja's front kick it reaches 17 mm past the
        // front-right of a waist ring that clears the bind pose. A pin inside a collider holds
        // its free neighbour, which the collider pushes out, a whole penetration depth away:
        // 19.5 mm for a 15.3 mm spring (130 % of rest; at 3× the spacing the same depth was
        // within the limit, so only the default resolution failed). Pushing the pin out
        // horizontally does not help (the raised thigh reaches forward along the push), so
        // each column's pin that a leg comes within `clearance` of rises, hugging the trunk at
        // its new height, to the lowest height
        // (in 2 mm steps, at most 6 cm: higher, the waistband would ride over the sash) where
        // the limbs' proxies in every pose of the rig's clips keep `clearance` off it
        // ([`BodyAtRest::limb_sweep`]), or where they come least deep if no height is clear:
        // on the ninja the kata's low block sweeps the right forearm down in front of the hip
        // a little above where the front kick's thigh reaches, so there the best is 7.6 mm
        // deep (12 mm up), which a free neighbour 15 mm away can clear. Then the waist line is
        // smoothed so it rises gently (at most 1 cm per 2 cm around) rather than in a step.
        let top_at = |d: Vec3, rise: f32| {
            let c = centre + Vec3::Y * rise;
            c + d * body.ray_exit(c, d, clearance, 0.6)
        };
        let dirs: Vec<Vec3> = (0..=n_outer)
            .map(|k| dir(std::f32::consts::PI * k as f32 / n_outer as f32))
            .collect();
        let raw: Vec<f32> = dirs
            .iter()
            .map(|&d| {
                // Only where a leg comes too close: a hand hanging by the hip (CesiumMan's
                // walk) is handled by the flare below, and raising the waist there would only
                // move it into the forearm's path.
                if body.limb_clearance(top_at(d, 0.0), true) >= clearance {
                    return 0.0;
                }
                let mut best = (f32::NEG_INFINITY, 0.0);
                for k in 0..=30 {
                    let s = 0.002 * body.scale * k as f32;
                    let c = body.limb_clearance(top_at(d, s), false);
                    if c >= clearance {
                        return s;
                    }
                    if c > best.0 + 1e-4 {
                        best = (c, s);
                    }
                }
                best.1
            })
            .collect();
        let step = top_at(dirs[0], 0.0)
            .distance(top_at(dirs[1], 0.0))
            .max(1e-3);
        let rise: Vec<f32> = (0..raw.len())
            .map(|k| {
                raw.iter()
                    .enumerate()
                    .map(|(j, &q)| q - 0.5 * step * k.abs_diff(j) as f32)
                    .fold(0.0, f32::max)
            })
            .collect();
        // (top point, hem point, outer: whether the column belongs to the pleated outer side)
        let mut columns: Vec<(Vec3, Vec3, bool)> = Vec::new();
        for (k, &d) in dirs.iter().enumerate() {
            let th = std::f32::consts::PI * k as f32 / n_outer as f32;
            let top = top_at(d, rise[k]);
            let hem = Vec3::new(centre.x, hem_y, centre.z) + d * (widest(th) + ease);
            columns.push((top, hem, true));
        }
        // Mirrored legs wind the other way round: reverse one so both face outwards.
        if side < 0.0 {
            columns.reverse();
        }
        let cols = columns.len();
        let longest = columns
            .iter()
            .map(|(t, _, _)| t.y - hem_y)
            .fold(0.0f32, f32::max);
        let rows = ((longest / spec.spacing).round() as usize).max(3) + 1;
        // Full width by a quarter of the length: the thighs never pull the cloth taut against
        // its pinned top. Where the arms hang by the hips, by the first free row instead: a
        // row still hugging the hip is pinched between the hip and the hanging hand, pulled
        // off its pinned top (CesiumMan's walk: 122.6 % of rest; flared at the first row,
        // 110.2 %).
        let t_full = if arms_hang_by_hips {
            1.0 / (rows - 1) as f32
        } else {
            0.25
        };
        let base = sheet.grid(cols, rows, false, |c, r| {
            let (top, hem, outer) = columns[c];
            let t = r as f32 / (rows - 1) as f32;
            let e = smoothstep((t / t_full).min(1.0));
            let mut p = top.lerp(hem, e);
            p.y = top.y + (hem_y - top.y) * t;
            if outer && (c / 2) % 2 == 0 {
                let radial = (p - centre).reject_from(Vec3::Y).normalize_or_zero();
                p += radial * pleat * e;
            }
            if r == 0 {
                return p;
            }
            // Out of the body horizontally away from the leg's axis, not along the union's
            // gradient: in the groove between thigh and belly the gradient sends neighbouring
            // rows to one point, and springs of zero rest length would follow.
            let out = (p - centre).reject_from(Vec3::Y);
            match out.try_normalize() {
                Some(d) => body.push_out_along(p, d, clearance),
                None => body.push_out(p, clearance),
            }
        });
        sheet.pinned.extend((0..cols as u32).map(|c| base + c));
    }
    Ok(sheet)
}

/// Whether the arms hang by the hips: in at least a fifth of the poses of the rig's clips (every
/// 1/15 s, see [`BodyAtRest::arm_sweep`]), some arm skin lies beside the hip (within 45° of
/// the body's side, seen from the waist centre), between the hakama's waist and a quarter of its
/// length below, within 3 cm (the pleats' depth) of the body at rest. A walk's hanging hands do
/// (CesiumMan: 9 of its 31 poses, 29 %); a kata's fist chambered at the hip passes there now
/// and then (the built-in ninja: 31 of 337 poses, 9.2 %; RiggedFigure: none).
fn arms_hang_by_hips(body: &BodyAtRest, waist: Vec3, hem_y: f32) -> bool {
    // Room a hanging hand leaves beside the hip, m (the hakama's pleat depth).
    let room = 0.03 * body.scale;
    /// Share of the poses that must have an arm there: between the two cases above.
    const SHARE: f32 = 0.2;
    let low = waist.y - 0.25 * (waist.y - hem_y);
    let poses = body.arm_sweep();
    if poses.is_empty() {
        return false;
    }
    let near = poses
        .iter()
        .filter(|pose| {
            pose.iter().any(|q| {
                let d = (*q - waist).reject_from(Vec3::Y).normalize_or_zero();
                q.y <= waist.y && q.y >= low && d.dot(body.left).abs() > 0.7 && body.sdf(*q) < room
            })
        })
        .count();
    near as f32 >= SHARE * poses.len() as f32
}

fn smoothstep(s: f32) -> f32 {
    let s = s.clamp(0.0, 1.0);
    s * s * (3.0 - 2.0 * s)
}
