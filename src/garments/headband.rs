//! The headband (hachimaki): a light band round the forehead, where the head is widest above the
//! eyes, with two tails at the back of the head.

use super::band::band_with_tails;
use super::fit::BodyAtRest;
use super::sheet::Sheet;
use super::{GarmentError, GarmentSpec};
use crate::math::Vec3;

/// The headband's sheet at rest: the band all pinned, the tails by their top rows.
pub(super) fn shape(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "headband";
    let head = body.joint("Head", g)?;
    let top = body.joint("HeadTop_End", g)?;
    let clearance = spec.clearance;
    let h = (top.y - head.y).max(0.05 * body.scale);
    let f = forehead_height(body, head, top);
    let centre = head + (top - head) * f;
    // The band's height and the tails' length go with the head, as far as a head can be in
    // proportion to a body: at most a quarter of the stature from the skull's base to the
    // crown (a person's is 11 %, CesiumMan's 22 %; a chibi's, as the KayKit characters', 46 %,
    // gave the Rogue tails 1.3 m long, and the Barbarian, sized to its hat too, 1.6 m that its
    // chop flung 60 cm off its body).
    let size = match (body.joint("LeftFoot", g), body.joint("RightFoot", g)) {
        (Ok(l), Ok(r)) => h.min(MAX_HEAD_SHARE * (top.y - l.y.min(r.y))),
        _ => h,
    };
    Ok(band_with_tails(
        body,
        spec,
        centre,
        0.15 * size,
        clearance,
        0.035 * body.scale,
        1.4 * size,
        0.02 * body.scale,
    ))
}

/// The largest share of the stature (head top to the lower foot joint) that the headband's
/// sizes take the head to have, skull base to crown.
const MAX_HEAD_SHARE: f32 = 0.25;

/// Where a hachimaki sits, as a fraction of the way from the `head` joint (the skull's base)
/// to `top` (the head top): the height above the eyes where the head's skin is widest from
/// side to side, so the band rests on the forehead and the temples and cannot ride up.
/// The eyes are taken from `LeftEye`/`RightEye` bones where the rig has them, else at half
/// the head's height (a human skull's eyes sit near the middle of base-to-crown); the band's
/// lower edge keeps a quarter of the head's height above them. Falls back to 0.7 if the head
/// has no skin vertices of its own.
fn forehead_height(body: &BodyAtRest, head: Vec3, top: Vec3) -> f32 {
    let h = (top.y - head.y).max(1e-3);
    let eyes = ["LeftEye", "RightEye"]
        .iter()
        .filter_map(|n| body.joint(n, "headband").ok())
        .map(|p| (p.y - head.y) / h)
        .fold(None, |a: Option<f32>, y| Some(a.map_or(y, |a| a.max(y))))
        .unwrap_or(0.5);
    let lo = (eyes + 0.2).clamp(0.3, 0.85);
    let hi = 0.88f32.max(lo + 0.05);
    let Some(head_node) = body.node("Head") else {
        return 0.7;
    };
    // Widest side-to-side extent per 5 % slab of the head's height, from the vertices the
    // Head bone dominates.
    let slabs = 20;
    let mut lo_x = vec![f32::INFINITY; slabs];
    let mut hi_x = vec![f32::NEG_INFINITY; slabs];
    for q in body.head_vertices(head_node) {
        let t = (q.y - head.y) / h;
        if !(0.0..1.0).contains(&t) {
            continue;
        }
        let s = ((t * slabs as f32) as usize).min(slabs - 1);
        let x = q.dot(body.left);
        lo_x[s] = lo_x[s].min(x);
        hi_x[s] = hi_x[s].max(x);
    }
    let mut best: Option<(f32, f32)> = None;
    for s in 0..slabs {
        let t = (s as f32 + 0.5) / slabs as f32;
        if t < lo || t > hi || !lo_x[s].is_finite() {
            continue;
        }
        let width = hi_x[s] - lo_x[s];
        // Ties (a round skull) go to the lowest slab: the band sits as low as it can.
        if best.is_none_or(|(_, w)| width > w + 1e-3) {
            best = Some((t, width));
        }
    }
    best.map_or(0.7, |(t, _)| t)
}
