//! The hakama, pleated divided trousers (umanori), in four cuts ([`HakamaStyle`]): two open
//! half-skirts (the default), the same sewn together at the front and back down to mid-thigh,
//! or fitted to the hips under hanging hands, or divided trousers with a tube per leg. Its
//! shape at rest and the measurements of the rig's clips that only it needs (where the thighs
//! reach over the waist, whether the arms hang by the hips, the crotch seam's height).

use super::fit::{leg_length, BodyAtRest};
use super::sheet::Sheet;
use super::{GarmentError, GarmentSpec, HakamaStyle};
use crate::math::{Vec2, Vec3};

/// The hakama's shape at rest, in the style `spec.style` asks for.
pub(super) fn shape(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    match spec.style {
        HakamaStyle::HalfSkirts => half_skirts(body, spec, false, false),
        HakamaStyle::Sewn => half_skirts(body, spec, false, true),
        HakamaStyle::Fitted => half_skirts(body, spec, true, false),
        HakamaStyle::Divided => divided(body, spec),
    }
}

/// The hakama as divided trousers ([`HakamaStyle::Divided`]): one wide leg per leg of the
/// wearer, laid out in the layout pose ([`super::layout`]) with the legs spread.
///
/// Three pieces sewn into one closed mesh:
/// - the **seat**, a pleated ring round the pelvis from the waist (its top row, all pinned,
///   hugging the trunk) down to the crotch seam, widening within its upper part to `ease`
///   around the widest the body gets between the waist and the crotch seam;
/// - the **crotch seam** (the gusset's bottom edge): a line in the body's mid-plane from the
///   seat's back centre to its front centre, under the wearer's crotch, halfway from the
///   body's crotch to the knees (lower where the thighs leave less room between them);
/// - two **leg tubes**, each hanging from half of the seat's bottom ring and the crotch seam
///   down to the hem at mid-calf, open there. Their inner walls part from the seam within two
///   rows, each towards its own leg, halfway between the mid-plane and that leg.
///
/// So each leg of the wearer is inside its own tube from the crotch down and cannot leave it:
/// a kicking leg lifts its own tube, and the cloth falls back round the leg when it comes
/// down. The open half-skirts ([`half_skirts`], issue 19) have free edges at the mid-plane
/// that a high kick throws over the guard and that stay draped over the forearms, and open
/// sides a hanging hand gathers up in a walk. A closed skirt (the first version) had to go round both
/// legs, so a kicking knee stretched its ring between the standing and the kicking leg; here
/// the seam gives way as the tubes move apart, the standing leg's inner wall rising with it.
fn divided(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "hakama";
    let knees = [body.joint("LeftLeg", g)?, body.joint("RightLeg", g)?];
    let thighs = [body.joint("LeftUpLeg", g)?, body.joint("RightUpLeg", g)?];
    let feet = [body.joint("LeftFoot", g)?, body.joint("RightFoot", g)?];
    let (u, sp, clearance) = (body.scale, spec.spacing, spec.clearance);
    let (waist, hem_y) = waist_and_hem(body, spec)?;
    let mid = |y: f32| Vec3::new(waist.x, y, waist.z);
    let gap_min = least_gap(spec);
    // Horizontal room around the body (the wide hakama leg), and the pleats' depth, m.
    let ease = 0.08 * u;
    let pleat = 0.03 * u;
    let arms_hang_by_hips = arms_hang_by_hips(body, waist, hem_y);
    // Room between the legs on the mid-line at height y: how far the nearest leg's proxy is,
    // less the clearance.
    let room = |y: f32| body.sdf(mid(y)) - clearance;
    let crotch_y = crotch_seam_height(body, waist.y, hem_y, &knees, gap_min, sp, &room);

    // The seat's columns: a closed ring, column 0 at the back centre, `n / 2` at the front
    // centre, angles from the back towards the left (an even count, a multiple of 4 so both
    // sides mirror).
    let dir = |th: f32| -body.forward * th.cos() + body.left * th.sin();
    // (Down to the crotch seam: below it each tube follows its own leg.)
    let widest = |d: Vec3| {
        (0..=8)
            .map(|k| {
                let y = waist.y + (crotch_y - waist.y) * k as f32 / 8.0;
                body.ray_exit(mid(y), d, clearance, 0.6)
            })
            .fold(0.0f32, f32::max)
    };
    let probe: Vec<(Vec3, f32, f32)> = (0..64)
        .map(|k| {
            let d = dir(std::f32::consts::TAU * k as f32 / 64.0);
            (d, body.ray_exit(waist, d, clearance, 0.6), widest(d) + ease)
        })
        .collect();
    let circ = |f: &dyn Fn(&(Vec3, f32, f32)) -> f32| -> f32 {
        (0..64)
            .map(|k| {
                let (a, b) = (&probe[k], &probe[(k + 1) % 64]);
                (a.0 * f(a)).distance(b.0 * f(b))
            })
            .sum()
    };
    // Columns at the spacing round the widest ring (the seat's bottom), so the tubes' cells
    // are square; closer together at the waist.
    let n = (((circ(&|p| p.2) / sp).round() as usize).max(16) + 2) / 4 * 4;
    let dirs: Vec<Vec3> = (0..n)
        .map(|k| dir(std::f32::consts::TAU * k as f32 / n as f32))
        .collect();
    let rise = waist_rise(body, waist, &dirs, clearance, true);
    let top_at = |d: Vec3, rise: f32| {
        let c = waist + Vec3::Y * rise;
        c + d * body.ray_exit(c, d, clearance, 0.6)
    };
    // At the back, more room still: a kicking thigh carries its tube forward and up, and the
    // seat's back must reach from the waist round the buttock to under the raised thigh.
    let back_ease = 0.05 * u;
    let bottom: Vec<f32> = dirs
        .iter()
        .map(|&d| widest(d) + ease + back_ease * d.dot(-body.forward).max(0.0))
        .collect();

    let mut sheet = Sheet::default();
    let v_of = |y: f32| ((waist.y - y) / (waist.y - hem_y)).clamp(0.0, 1.0);

    // The seat: rows from the waist (pinned) to the crotch seam's height.
    let seat_rows = (((waist.y - crotch_y) / sp).round() as usize).max(2) + 1;
    // Full width by a quarter of the hakama's length (the thighs never pull the cloth taut
    // against its pinned top), or by the first free row where the arms hang by the hips: a row
    // still hugging the hip is pinched between the hip and the hanging hand, pulled off its
    // pinned top (CesiumMan's walk: 122.6 % of rest; flared at the first row, 110.2 %).
    let full_drop = if arms_hang_by_hips {
        (waist.y - crotch_y) / (seat_rows - 1) as f32
    } else {
        0.25 * (waist.y - hem_y)
    };
    let pleated = |k: usize| (k / 2).is_multiple_of(2);
    let mut seat: Vec<Vec<u32>> = Vec::with_capacity(seat_rows);
    for r in 0..seat_rows {
        let t = r as f32 / (seat_rows - 1) as f32;
        let ring = (0..n)
            .map(|k| {
                let d = dirs[k];
                let top = top_at(d, rise[k]);
                let y = top.y + (crotch_y - top.y) * t;
                let e = smoothstep((waist.y - y) / full_drop);
                let radius = (top - waist).reject_from(Vec3::Y).length();
                let mut radius = radius + (bottom[k] - radius).max(0.0) * e;
                if pleated(k) {
                    radius += pleat * e;
                }
                let p = if r == 0 {
                    top
                } else {
                    // Out of the body horizontally away from the mid-line, not along the
                    // union's gradient: in the groove between thigh and belly the gradient
                    // sends neighbouring rows to one point.
                    body.push_out_along(mid(y) + d * radius, d, clearance)
                };
                add(&mut sheet, p, Vec2::new(k as f32 / n as f32, v_of(p.y)))
            })
            .collect();
        seat.push(ring);
    }
    sheet.pinned.extend(seat[0].iter().copied());
    let seat_bottom = seat[seat_rows - 1].clone();

    // The crotch seam, back centre to front centre (interior points only).
    let (back, front) = (
        sheet.positions[seat_bottom[0] as usize],
        sheet.positions[seat_bottom[n / 2] as usize],
    );
    let seam_n = ((back.distance(front) / sp).round() as usize).max(2);
    let seam: Vec<u32> = (1..seam_n)
        .map(|k| {
            let p = back.lerp(front, k as f32 / seam_n as f32);
            // Under the buttocks, drop rather than cut through them (by a row at most: where
            // the legs touch all the way down, as the built-in ninja's do at its bind pose,
            // the seam stays between them and the cloth finds its way out as they part).
            let below = body.push_out_along(p, -Vec3::Y, clearance);
            let p = if p.y - below.y <= sp { below } else { p };
            add(&mut sheet, p, Vec2::new(0.5, v_of(p.y)))
        })
        .collect();

    // The leg tubes. Rings wind like the seat (back → left → front → right → back), so the
    // left tube runs back → left → front then along the seam front → back, the right tube
    // front → right → back then along the seam back → front: each seam edge is walked once
    // each way, and every triangle faces out.
    // How much wider each tube gets from the crotch seam's height to the hem, m.
    let flare = 0.05 * u;
    let tube_rows = (((crotch_y - hem_y) / sp).round() as usize).max(2) + 1;
    for side in 0..2 {
        let s = if side == 0 { 1.0f32 } else { -1.0 };
        let ring: Vec<u32> = if side == 0 {
            (0..=n / 2)
                .map(|k| seat_bottom[k])
                .chain(seam.iter().rev().copied())
                .collect()
        } else {
            (n / 2..=n)
                .map(|k| seat_bottom[k % n])
                .chain(seam.iter().copied())
                .collect()
        };
        // The leg's axis at height y (hip joint → knee → ankle).
        let axis = |y: f32| leg_axis(thighs[side], knees[side], feet[side], y);
        let m = ring.len();
        let mut rows: Vec<Vec<u32>> = vec![ring.clone()];
        for r in 1..tube_rows {
            let t = r as f32 / (tube_rows - 1) as f32;
            let y = crotch_y + (hem_y - crotch_y) * t;
            // The inner walls part from the seam within two rows, each towards its own leg.
            let part =
                (0.5 * room(y)).clamp(gap_min, room(y).max(gap_min)) * smoothstep(r as f32 / 2.0);
            // Each column drops from the seam's ring and follows the leg's axis (in the layout
            // pose the legs are spread: a vertical tube would leave the leg through its outer
            // wall), wider towards the hem (a kicking shin pokes forward through it).
            let shift = (axis(y) - axis(crotch_y)).reject_from(Vec3::Y);
            let placed: Vec<Vec3> = (0..m)
                .map(|j| {
                    let top = sheet.positions[ring[j] as usize];
                    let p = Vec3::new(top.x, y, top.z) + shift;
                    let radial = (p - axis(y)).reject_from(Vec3::Y).normalize_or_zero();
                    p + radial * flare * t
                })
                .collect();
            // Off the mid-line by `part` at least: the row's lateral offsets squeezed linearly
            // from [least, most] onto [part, most], keeping the columns' order and spacing
            // ratios (a clamp to `part` sent the columns round the front and back centres,
            // which differ in x but hardly in z, to one point: springs of zero rest length).
            let lateral = |p: Vec3| (p - mid(y)).dot(body.left) * s;
            let (least, most) = placed
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |a, &p| {
                    (a.0.min(lateral(p)), a.1.max(lateral(p)))
                });
            let squeeze = if least < part && most > part {
                (most - part) / (most - least)
            } else {
                1.0
            };
            let row = placed
                .iter()
                .enumerate()
                .map(|(j, &p)| {
                    let l = lateral(p);
                    let p = if squeeze < 1.0 {
                        p + body.left * s * (part + (l - least) * squeeze - l)
                    } else {
                        p
                    };
                    let out = (p - axis(y)).reject_from(Vec3::Y);
                    let p = match out.try_normalize() {
                        Some(d) => body.push_out_along(p, d, clearance),
                        None => body.push_out(p, clearance),
                    };
                    let uv = Vec2::new(0.5 * side as f32 + 0.5 * j as f32 / m as f32, v_of(p.y));
                    add(&mut sheet, p, uv)
                })
                .collect();
            rows.push(row);
        }
        for w in rows.windows(2) {
            strip(&mut sheet, &w[0], &w[1]);
        }
    }
    for w in seat.windows(2) {
        strip(&mut sheet, &w[0], &w[1]);
    }
    Ok(sheet)
}

/// The hakama as two half-skirts ([`HakamaStyle::HalfSkirts`], the default): a divided trouser
/// (umanori) in the looser sense, two very wide legs side by side.
///
/// Each leg is one open sheet of cloth, half a skirt: its top row, all pinned, runs along the
/// outer half of the waist ring, from the back centre round that leg's hip to the front centre.
/// Below it the sheet widens within the top quarter of its length into a half-ellipse with
/// `ease` around the widest the leg's side of the body gets, folded in pleats. The two halves
/// meet at the body's mid-plane front and back, `2 · seam_gap` apart, and are not sewn there
/// (`sewn`, [`HakamaStyle::Sewn`]: sewn together from the waist down to mid-thigh,
/// [`sew_front_and_back`], and open below): there is no crotch seam and no inner (gusset)
/// panel, so between the legs each half hangs free.
///
/// Why divided: a closed skirt must go round both legs, so a kicking knee lifts the whole skirt
/// and stretches its ring between the standing and the kicking leg (past Provot's limit in the
/// front and roundhouse kicks). A divided leg is lifted by its own thigh alone; its back panel
/// hangs from the waist, so it can reach the raised knee without stretching. The two halves
/// keep `seam_gap` from the mid-plane so they never start in contact.
///
/// `fitted` ([`HakamaStyle::Fitted`]): where the arms hang by the hips, the columns the hanging
/// hands lie against hug the body down to below the fingertips before they flare, so the hands
/// rest outside the cloth ([`hands_reach`]); otherwise the same cut.
fn half_skirts(
    body: &BodyAtRest,
    spec: &GarmentSpec,
    fitted: bool,
    sewn: bool,
) -> Result<Sheet, GarmentError> {
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
    // (base index, columns, rows) of each half, left then right.
    let mut halves: Vec<(u32, usize, usize)> = Vec::new();
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
        // Each column's pin rises where a kicking thigh would reach over it ([`waist_rise`]; at
        // 3× the spacing the same depth was within the limit, so only the default resolution
        // failed without it).
        let top_at = |d: Vec3, rise: f32| {
            let c = centre + Vec3::Y * rise;
            c + d * body.ray_exit(c, d, clearance, 0.6)
        };
        let dirs: Vec<Vec3> = (0..=n_outer)
            .map(|k| dir(std::f32::consts::PI * k as f32 / n_outer as f32))
            .collect();
        let rise = waist_rise(body, centre, &dirs, clearance, false);
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
        // Each column widens from its top to its full width over a quarter of the length: the
        // thighs never pull the cloth taut against its pinned top. Where the arms hang by the
        // hips, by the first free row instead, round the hanging hand: a row still hugging the
        // hip is pinched between the hip and the hand, pulled off its pinned top (CesiumMan's
        // walk: 122.6 % of rest; flared at the first row, 110.2 %). But then the hand is inside
        // the flare, and the skirt goes where the arm swings: a jump's swing threw both
        // half-skirts over the robot's shoulders, 65 cm above their drape, and a walk gathers
        // them up to the hands. The fitted cut instead hugs the body down to below the
        // fingertips in the columns the hanging hands lie against ([`hands_reach`]), so the
        // hands rest outside the cloth, and pinch it against the hip (docs/CHECK.md, "Why the
        // jumps fail"); where the hanging arm sinks into the hip no cloth can lie between
        // them, and that side is cut as the default.
        let flare: Vec<(f32, f32)> = if !arms_hang_by_hips {
            vec![(0.0, FLARE); cols]
        } else {
            let tops: Vec<Vec3> = columns.iter().map(|c| c.0).collect();
            let reach = fitted
                .then(|| hands_reach(body, centre, left, &tops, hem_y, ease + pleat + clearance))
                .flatten();
            match reach {
                Some(reach) => reach.into_iter().map(|r| (r, FLARE)).collect(),
                None => vec![(0.0, 1.0 / (rows - 1) as f32); cols],
            }
        };
        let base = sheet.grid(cols, rows, false, |c, r| {
            let (top, hem, outer) = columns[c];
            let t = r as f32 / (rows - 1) as f32;
            let (start, span) = flare[c];
            let e = smoothstep(((t - start) / span).clamp(0.0, 1.0));
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
        halves.push((base, cols, rows));
    }
    if sewn {
        sew_front_and_back(&mut sheet, &halves);
    }
    Ok(sheet)
}

/// How far down the two half-skirts are sewn together at the front and at the back, as a share
/// of their length from the waist to the hem: to mid-thigh, where a hakama's gusset (machi)
/// joins its legs.
const SEWN: f32 = 0.5;

/// Sews the two half-skirts (`halves`: base index, columns, rows, the left half first) together
/// at the front centre and at the back centre, from the waist down [`SEWN`] of their rows: a
/// strip of cells between the two facing columns, `2 · seam_gap` wide.
///
/// Open all the way down, a kicking leg left its half-skirt through the front: after the
/// robot's side kick it came down in front of the cloth, and the half-skirt hung behind the leg
/// for good (13.1 / 49.7 cm from its drape after the pose was held 1.5 s). Sewn, the waist ring
/// is closed, each thigh stays inside its own side, and below the seams the halves still part,
/// so a kicking leg lifts its own side (docs/CHECK.md, "The half-skirts sewn at the front and
/// back"). Sewn all the way down (a closed skirt) the kicking knee stretches the ring between
/// the legs: the ninja's roundhouse kick ended frames with a hakama spring at 118.7 % of rest
/// (LBS; 119.7 % DQS).
fn sew_front_and_back(sheet: &mut Sheet, halves: &[(u32, usize, usize)]) {
    let [l, r] = [halves[0], halves[1]];
    let id = |h: (u32, usize, usize), c: usize, row: usize| h.0 + (row * h.1 + c) as u32;
    let rows = l.2.min(r.2);
    // Rows go evenly from the waist to the hem: the seam's last row is the nearest its end.
    let last = ((SEWN * (rows - 1) as f32).round() as usize).clamp(1, rows - 1);
    // In the ring's winding (the left half runs back → front, the right half front → back):
    // at the front, the left half's last column then the right half's first; at the back, the
    // right half's last column then the left half's first. Diagonals alternate as in
    // [`Sheet::grid`].
    for (a_h, a_c, b_h, b_c) in [(l, l.1 - 1, r, 0), (r, r.1 - 1, l, 0)] {
        for row in 0..last {
            let (a, b) = (id(a_h, a_c, row), id(b_h, b_c, row));
            let (c, d) = (id(a_h, a_c, row + 1), id(b_h, b_c, row + 1));
            quad(sheet, [a, b, c, d], row % 2 == 0);
        }
    }
}

/// The waist's centre, a little above the hip joint, and the hem's height, at 70 % of the leg
/// below it (mid-calf), m.
pub(super) fn waist_and_hem(
    body: &BodyAtRest,
    spec: &GarmentSpec,
) -> Result<(Vec3, f32), GarmentError> {
    let g = "hakama";
    let hips = body.joint("Hips", g)?;
    let spine = body.joint("Spine", g)?;
    let legs = leg_length(body, g)?;
    let waist = Vec3::new(hips.x, hips.y + 0.3 * (spine.y - hips.y), hips.z);
    Ok((waist, waist.y - 0.7 * legs * spec.length))
}

/// Half the least gap between the two tubes' inner walls, m (`spec` already scaled with the
/// body): a few thicknesses, at least.
pub(super) fn least_gap(spec: &GarmentSpec) -> f32 {
    (0.2 * spec.spacing).max(4.0 * spec.fabric.thickness)
}

/// Appends a particle at `p` with texture coordinates `uv`; its index.
fn add(sheet: &mut Sheet, p: Vec3, uv: Vec2) -> u32 {
    sheet.positions.push(p);
    sheet.uvs.push(uv);
    (sheet.positions.len() - 1) as u32
}

/// Triangles between two closed rings of particle indices of the same length, `top` above
/// `below`, with alternating diagonals (no preferred shear direction) and the winding of
/// [`Sheet::grid`].
fn strip(sheet: &mut Sheet, top: &[u32], below: &[u32]) {
    let m = top.len();
    for c in 0..m {
        let (a, b) = (top[c], top[(c + 1) % m]);
        let (cc, d) = (below[c], below[(c + 1) % m]);
        quad(sheet, [a, b, cc, d], c % 2 == 0);
    }
}

/// The cell `a b` over `c d` (`c` below `a`, `d` below `b`) as two triangles, split along `b c`
/// when `even`, along `a d` otherwise: alternating the diagonal cell by cell, as
/// [`Sheet::grid`] does.
fn quad(sheet: &mut Sheet, [a, b, c, d]: [u32; 4], even: bool) {
    if even {
        sheet.triangles.push([a, c, b]);
        sheet.triangles.push([b, c, d]);
    } else {
        sheet.triangles.push([a, c, d]);
        sheet.triangles.push([a, d, b]);
    }
}

/// The leg's axis at height `y`, on the polyline hip joint → knee → ankle (clamped at its ends).
fn leg_axis(hip: Vec3, knee: Vec3, foot: Vec3, y: f32) -> Vec3 {
    let on = |a: Vec3, b: Vec3| {
        let t = ((a.y - y) / (a.y - b.y).max(1e-6)).clamp(0.0, 1.0);
        a.lerp(b, t)
    };
    if y >= knee.y {
        Vec3::new(0.0, y, 0.0) + on(hip, knee).reject_from(Vec3::Y)
    } else {
        Vec3::new(0.0, y, 0.0) + on(knee, foot).reject_from(Vec3::Y)
    }
}

/// The crotch seam's height: halfway from the body's crotch (where the mid-line
/// below the pelvis leaves the body proxies) down to the knees — a low gusset leaves the
/// standing leg's tube room to rise when the other leg kicks — or lower, to the highest
/// height from which down to the hem the thighs leave room for the two inner walls on the
/// mid-line (`room(y)` ≥ 2 × `gap_min`). Kept two rows below the waist and above the hem.
fn crotch_seam_height(
    body: &BodyAtRest,
    waist_y: f32,
    hem_y: f32,
    knees: &[Vec3; 2],
    gap_min: f32,
    sp: f32,
    room: &dyn Fn(f32) -> f32,
) -> f32 {
    let step = 0.005 * body.scale;
    let (hi, lo) = (waist_y - 2.0 * sp, hem_y + 2.0 * sp);
    // The body's crotch: the highest point of the mid-line from which down it is clear.
    let mut crotch = lo;
    let mut y = lo;
    while y < hi && room(y) >= 0.0 {
        crotch = y;
        y += step;
    }
    let knee_y = 0.5 * (knees[0].y + knees[1].y);
    let wanted = (crotch - 0.5 * (crotch - knee_y).max(0.0)).clamp(lo, hi);
    // Up from the hem: the highest height with room everywhere below it.
    let mut best = lo;
    let mut y = lo;
    while y <= wanted && room(y) >= 2.0 * gap_min {
        best = y;
        y += step;
    }
    best
}

/// How far each waist column's pin rises above the waist so the limbs keep off it.
///
/// The waist's pins ride on the trunk, but in a kick the thigh's proxy swings up over the hip
/// crease: on the built-in ninja's front kick it reaches 17 mm past the front-right of a waist
/// ring that clears the bind pose. A pin inside a collider holds its free neighbour, which the
/// collider pushes out, a whole penetration depth away: 19.5 mm for a 15.3 mm spring (130 % of
/// rest). Pushing the pin out horizontally does not help (the raised thigh reaches forward
/// along the push), so each column's pin that a leg comes within `clearance` of rises, hugging
/// the trunk at its new height, to the lowest height (in 2 mm steps, at most 6 cm: higher, the
/// waistband would ride over the sash) where the limbs' proxies in every pose of the rig's
/// clips keep `clearance` off it ([`BodyAtRest::limb_sweep`]), or where they come least deep
/// if no height is clear: on the ninja the kata's low block sweeps the right forearm down in
/// front of the hip a little above where the front kick's thigh reaches, so there the best is
/// 7.6 mm deep (12 mm up), which a free neighbour 15 mm away can clear. Then the waist line is
/// smoothed round the ring (`closed`; else along the open arc of `dirs`) so it rises gently (at
/// most 1 cm per 2 cm around) rather than in a step.
fn waist_rise(
    body: &BodyAtRest,
    waist: Vec3,
    dirs: &[Vec3],
    clearance: f32,
    closed: bool,
) -> Vec<f32> {
    let top_at = |d: Vec3, rise: f32| {
        let c = waist + Vec3::Y * rise;
        c + d * body.ray_exit(c, d, clearance, 0.6)
    };
    let raw: Vec<f32> = dirs
        .iter()
        .map(|&d| {
            // Only where a leg comes too close: a hand hanging by the hip (CesiumMan's walk) is
            // handled by the flare, and raising the waist there would only move it into the
            // forearm's path.
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
    let n = dirs.len();
    let step = top_at(dirs[0], 0.0)
        .distance(top_at(dirs[1], 0.0))
        .max(1e-3);
    (0..n)
        .map(|k| {
            raw.iter()
                .enumerate()
                .map(|(j, &q)| {
                    let around = if closed {
                        k.abs_diff(j).min(n - k.abs_diff(j))
                    } else {
                        k.abs_diff(j)
                    };
                    q - 0.5 * step * around as f32
                })
                .fold(0.0, f32::max)
        })
        .collect()
}

/// Share of a half-skirt's length over which a column widens from hugging the body to its full
/// width.
const FLARE: f32 = 0.25;

/// How far down each column of a half-skirt (its top points `tops`, from the waist ring of the
/// side `left` round `centre`) must hug the body so that the arm hanging by that hip lies
/// outside it: a share of the column's length (0: the column flares from its top). `None` where
/// the hanging arm sinks into the hip, so that no cloth could lie between them.
///
/// The poses are those of the rig's clips ([`BodyAtRest::arm_sweep`]) where an arm hangs by
/// this hip (as [`arms_hang_by_hips`] counts them). In each, every arm skin vertex between the
/// waist and the hem within `room` of the body at rest (inside the flare's reach) marks the
/// column whose direction from `centre` is nearest its own, down to 2 cm below the vertex. The
/// marks then fall off round the waist at 10 per metre (a quarter of the length over 2.5 cm),
/// so the front and back keep their room for a kicking thigh, and stop at 0.6 so the cloth
/// still flares below.
///
/// The arm sinks into the hip when, in at least half of those poses, the arm skin beside the
/// hip lies more than 3 cm inside the body at rest: deeper than two proxies (each within
/// 1.5 cm outside its skin) can overlap with their skins apart. The armoured soldier's forearm
/// plates are 8 cm inside its hip plates in most of its hanging poses; the robot's arm 1.6 cm,
/// the long-haired body's none.
fn hands_reach(
    body: &BodyAtRest,
    centre: Vec3,
    left: Vec3,
    tops: &[Vec3],
    hem_y: f32,
    room: f32,
) -> Option<Vec<f32>> {
    let n = tops.len();
    let (u, waist_y) = (body.scale, centre.y);
    let dirs: Vec<Vec3> = tops
        .iter()
        .map(|t| (*t - centre).reject_from(Vec3::Y).normalize_or_zero())
        .collect();
    let beside = |q: &Vec3| {
        (*q - centre)
            .reject_from(Vec3::Y)
            .normalize_or_zero()
            .dot(left)
            > 0.7
    };
    let low = waist_y - 0.25 * (waist_y - hem_y);
    let mut raw = vec![0.0f32; n];
    // Per hanging pose, how far the arm beside the hip is from the body at rest (negative:
    // inside it).
    let mut apart = Vec::new();
    // Per pose, the arm skin on this side between the waist and the hem, with its distance
    // from the body at rest (each distance computed once: it is most of this function's time).
    let mut band: Vec<(Vec3, f32)> = Vec::new();
    for pose in body.arm_sweep() {
        band.clear();
        band.extend(
            pose.iter()
                .filter(|q| q.y < waist_y && q.y > hem_y)
                .filter(|q| (**q - centre).reject_from(Vec3::Y).dot(left) > 0.0)
                .map(|q| (*q, body.sdf(*q))),
        );
        let hangs = band
            .iter()
            .any(|(q, d)| q.y >= low && beside(q) && *d < 0.03 * u);
        if !hangs {
            continue;
        }
        apart.push(
            band.iter()
                .filter(|(q, _)| beside(q))
                .map(|&(_, d)| d)
                .fold(f32::INFINITY, f32::min),
        );
        for &(q, d) in &band {
            if d >= room {
                continue;
            }
            let h = (q - centre).reject_from(Vec3::Y).normalize_or_zero();
            let Some(k) = (0..n).max_by(|&a, &b| dirs[a].dot(h).total_cmp(&dirs[b].dot(h))) else {
                continue;
            };
            let top = tops[k].y;
            raw[k] = raw[k].max((top - q.y + 0.02 * u) / (top - hem_y).max(1e-3));
        }
    }
    if !apart.is_empty() {
        apart.sort_by(f32::total_cmp);
        if apart[(apart.len() - 1) / 2] < -0.03 * u {
            return None;
        }
    }
    // The mean distance between neighbouring columns' tops, m.
    let step = tops
        .windows(2)
        .map(|w| {
            w[0].reject_from(Vec3::Y)
                .distance(w[1].reject_from(Vec3::Y))
        })
        .sum::<f32>()
        / (n.max(2) - 1) as f32;
    Some(
        (0..n)
            .map(|k| {
                raw.iter()
                    .enumerate()
                    .map(|(j, &r)| r - 10.0 / u * step * k.abs_diff(j) as f32)
                    .fold(0.0, f32::max)
                    .min(0.6)
            })
            .collect(),
    )
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
