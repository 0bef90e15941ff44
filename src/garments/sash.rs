//! The sash (obi): a stiff band round the waist, above the hakama's waistband and further out,
//! with two tails hanging at the back, kept out of the arms' swing.

use super::band::band_with_tails;
use super::fit::{leg_length, BodyAtRest};
use super::sheet::Sheet;
use super::{GarmentError, GarmentSpec};
use crate::math::Vec3;

/// The sash's sheet at rest: the band all pinned, the tails by their top rows.
pub(super) fn shape(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "sash";
    let hips = body.joint("Hips", g)?;
    let spine = body.joint("Spine", g)?;
    let legs = leg_length(body, g)?;
    // Around the waist, above the hakama's waist ring, and further out (layering).
    let centre = Vec3::new(hips.x, hips.y + 0.8 * (spine.y - hips.y), hips.z);
    let clearance = spec.clearance + 0.008 * body.scale;
    let band_height = 0.06 * body.scale;
    let tail_length = 0.45 * legs;
    let (tail_width, tail_spread) =
        sash_tails(body, spec, centre, band_height, tail_length, clearance);
    Ok(band_with_tails(
        body,
        spec,
        centre,
        band_height,
        clearance,
        tail_width,
        tail_length,
        tail_spread,
    ))
}

/// The sash's tails: width and the lateral offset of each tail's centre from the back centre,
/// m. By default 6 cm wide tails 5 cm either side of the spine (outer edges 8 cm out). Where
/// the arms swing close behind the hips (CesiumMan's hanging forearms pass 5.2 cm from the
/// spine's plane at the back in its walk; the built-in ninja's arms keep 11.7 cm off), the
/// tails' pinned tops would sit in the forearm's path: the arm pushes the first free row away
/// from its pinned top (137 % of rest on CesiumMan). Then both tails move in towards the spine
/// so their outer edges keep the band's clearance inside the arms' lane (the closest any arm
/// vertex of any of the rig's clips comes to the mid-plane, behind the back, from the band's
/// top down a quarter of the tails' length: lower down the tails swing free and the arm pushes
/// them aside), narrowing them if both no longer fit with a gap of
/// `max(2 × thickness, 3 mm)` either side of the spine.
fn sash_tails(
    body: &BodyAtRest,
    spec: &GarmentSpec,
    centre: Vec3,
    band_height: f32,
    tail_length: f32,
    clearance: f32,
) -> (f32, f32) {
    let u = body.scale;
    let (width, spread) = (0.06 * u, 0.05 * u);
    let back = body.ray_exit(centre, -body.forward, clearance, 0.6);
    let top = centre.y + 0.5 * band_height;
    let bottom = centre.y - 0.25 * band_height - 0.25 * tail_length * spec.length;
    // Tails hang 1.2 cm off the band plus their own clearance; 3 cm of room beyond that.
    let depth = back + 0.012 * u + clearance + 0.03 * u;
    let lane = body
        .arm_sweep()
        .iter()
        .flatten()
        .filter(|q| {
            let d = (**q - centre).dot(-body.forward);
            q.y <= top && q.y >= bottom && d > 0.0 && d <= depth
        })
        .map(|q| (*q - centre).dot(body.left).abs())
        .fold(f32::INFINITY, f32::min);
    let outer = lane - clearance;
    if outer >= spread + 0.5 * width {
        return (width, spread);
    }
    let gap = (2.0 * spec.fabric.thickness).max(0.003 * u);
    // At least two columns' worth of cloth: a tail narrower than that is no tail.
    let w = (outer - gap).min(width).max(0.02 * u);
    (w, (outer - 0.5 * w).max(gap + 0.5 * w))
}
