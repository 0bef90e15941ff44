//! The cape: hangs from an arc over the upper back, shoulder to shoulder, to about the knees,
//! flaring a little towards the hem. Its top row is pinned; the pins ride the shoulders and the
//! upper back, never the upper arms.

use super::fit::{leg_length, BodyAtRest};
use super::sheet::Sheet;
use super::{GarmentError, GarmentSpec};
use crate::math::Vec3;

/// The cape's sheet at rest, its top row pinned.
pub(super) fn shape(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "cape";
    let neck = body.joint("Neck", g)?;
    let spine2 = body.joint("Spine2", g)?;
    let (la, ra) = (body.joint("LeftArm", g)?, body.joint("RightArm", g)?);
    let legs = leg_length(body, g)?;
    let clearance = spec.clearance + 0.012 * body.scale;
    // The top edge: an arc over the upper back from shoulder to shoulder, at the height between
    // the chest joint and the neck, hugging the body.
    let top_y = spine2.y + 0.6 * (neck.y - spine2.y);
    let centre = Vec3::new(neck.x, top_y, neck.z);
    let half_width = 0.5 * la.distance(ra) * 0.9;
    let length = (0.55 * legs + (top_y - body.joint("Hips", g)?.y)) * spec.length;
    let cols = ((2.0 * half_width / spec.spacing).round() as usize).max(4) + 1;
    let rows = ((length / spec.spacing).round() as usize).max(3) + 1;
    let dy = length / (rows - 1) as f32;
    // Top edge points: behind the body at lateral offset s ∈ [−w, w]; depth from a ray cast
    // backwards from the spine axis at that offset.
    let top: Vec<Vec3> = (0..cols)
        .map(|c| {
            let s = -half_width + 2.0 * half_width * c as f32 / (cols - 1) as f32;
            let o = centre + body.left * s;
            let depth = body.ray_exit(o, -body.forward, clearance, 0.6);
            o - body.forward * depth
        })
        .collect();
    let mut sheet = Sheet::default();
    // Hang straight down, flaring 15 % wider at the hem, and keep off the body.
    let base = sheet.grid(cols, rows, false, |c, r| {
        let t = r as f32 / (rows - 1) as f32;
        let flare = 1.0 + 0.15 * t;
        let mid = top[cols / 2];
        let lateral = (top[c] - mid).dot(body.left) * flare;
        let p = top[c] - body.left * (top[c] - mid).dot(body.left) + body.left * lateral
            - Vec3::Y * dy * r as f32;
        if r == 0 {
            p
        } else {
            body.push_out(p, clearance)
        }
    });
    sheet.pinned.extend((0..cols as u32).map(|c| base + c));
    Ok(sheet)
}
