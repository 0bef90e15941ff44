//! Wet cloth (PHYSICS.md §5; Park & Byun 2019, "Wet cloth animation using a vertex-based
//! adhesion force model"): water absorbed per vertex with the saturation law (their Eqs. 3–4),
//! the mass that follows, and adhesion through liquid bridges (their Eq. 5) between each wet
//! vertex and every collider (floor, spheres, capsules, body proxies) and between
//! non-neighbouring cloth vertices of one garment or of two garments (self-adhesion).
//!
//! The older area-based model (one force from the total contact area, spread evenly over the
//! contact vertices; Wang & Xiao's, which Park & Byun compare against) is kept as
//! [`AdhesionMode::AreaBased`].
//!
//! Units are SI. The paper's CGS constants are converted here (1 dyn/cm = 1e-3 N/m, 1 cm =
//! 1e-2 m, 1 g = 1e-3 kg).
//!
//! How it plugs into the step: the substep stage `adhere` (src/cloth/stages/wet.rs) calls
//! [`adhere`], which reads the contact records (gap, collider normal) that the previous
//! collision pass left in the workspace and the self-collision neighbour lists, and adds the
//! adhesion forces to the force accumulator before integration. Friction sees the adhesion
//! load without any extra bookkeeping: the adhesion pulls the vertex into the collider during
//! integration, and the penetration depth the collision stage undoes — the `δ` of its Coulomb
//! law — includes exactly `F_adh Δt² / m`. (Adding it again through `extra_normal` would count
//! it twice, so the wet stage leaves that hook at zero.)

use rayon::prelude::*;

use crate::math::Vec3A;

use super::model::ClothModel;
use super::state::ClothState;

// The wet model's parameters are data (params.rs); re-exported here, where they were first.
pub use super::params::{AdhesionMode, Fabric, Region, WetParams, WATER_SURFACE_TENSION};

/// Standard gravity, m/s², used for the adhesion cap `k_cap · m · g` (a fixed reference, so the
/// cap does not vanish in a zero-gravity scene).
pub const G0: f32 = 9.806_65;

/// Wets the particles inside `region` for `seconds` with `fabric`'s saturation law, mass
/// following (velocity kept). Call it once for a soak, or every frame with the frame time for
/// rain or a spray (a rate over time; the law itself slows the uptake near saturation).
/// Returns how many particles were wetted.
pub fn soak(
    model: &ClothModel,
    state: &mut ClothState,
    fabric: &Fabric,
    region: Region,
    seconds: f32,
) -> usize {
    let mut n = 0;
    for i in 0..model.len() {
        if region.contains(state.x[i]) {
            let a = fabric.absorb(state.wet[i], seconds);
            state.set_wetness(model, i, a);
            n += 1;
        }
    }
    n
}

/// Saturates the particles inside `region` (A = B). Returns how many.
pub fn saturate(
    model: &ClothModel,
    state: &mut ClothState,
    fabric: &Fabric,
    region: Region,
) -> usize {
    let mut n = 0;
    for i in 0..model.len() {
        if region.contains(state.x[i]) {
            state.set_wetness(model, i, fabric.saturation.max(state.wet[i]));
            n += 1;
        }
    }
    n
}

/// Drying by evaporation over `seconds`: `A ← A e^(−k t)` with `rate_per_s` = k, 1/s (optional;
/// a drying rate is not in the paper: **chosen**, first-order like the uptake law).
pub fn dry(model: &ClothModel, state: &mut ClothState, rate_per_s: f32, seconds: f32) {
    let keep = (-rate_per_s.max(0.0) * seconds.max(0.0)).exp();
    for i in 0..model.len() {
        if state.wet[i] > 0.0 {
            let a = state.wet[i] * keep;
            state.set_wetness(model, i, a);
        }
    }
}

/// Total current mass of the cloth, kg.
pub fn total_mass(state: &ClothState) -> f64 {
    state.mass.iter().map(|&m| m as f64).sum()
}

/// Per-particle data of the wet stage that depends on the model only, plus its counters.
/// Lives in the workspace (built with it; the step allocates nothing).
#[derive(Clone, Debug, Default)]
pub struct WetScratch {
    /// Half the local particle spacing, √(vertex area)/2, m: the default bridge radius.
    pub half_spacing: Vec<f32>,
    /// True when the last `adhere` found water in the cloth (the collision pass then records
    /// contacts out to h_max).
    pub active: bool,
    /// Particles holding a bridge to a collider after the last `adhere`.
    pub adhering: u32,
    /// Self-adhesion pairs after the last `adhere` (counted from both sides).
    pub self_pairs: u32,
    /// Total adhesion force magnitude toward colliders in the last `adhere`, N.
    pub collider_force: f32,
}

impl WetScratch {
    pub fn new(model: &ClothModel) -> Self {
        let n = model.len();
        let mut area = vec![0.0f32; n];
        for (t, &a) in model.triangles.iter().zip(&model.triangle_area) {
            for &i in t {
                area[i as usize] += a / 3.0;
            }
        }
        // A particle in no triangle (none in practice) takes its garment's mean spacing.
        let half_spacing = area
            .iter()
            .map(|&a| if a > 0.0 { 0.5 * a.sqrt() } else { 0.0 })
            .collect();
        Self {
            half_spacing,
            ..Self::default()
        }
    }
}

/// The stage `adhere`: adds the adhesion forces of every wet particle to `f` (N).
///
/// `gap`/`normal` are the contact records of the previous collision pass (distance from the
/// particle to its nearest collider and that collider's outward normal; `INFINITY` when none
/// within thickness + h_max). The bridge height is the gap minus the particle's thickness (the
/// distance from the cloth's surface to the collider). `neighbours(i)` gives the self-collision
/// candidates of particle i (a superset of the pairs within reach; empty when self-collision is
/// off).
#[allow(clippy::too_many_arguments)]
pub fn adhere<'a>(
    model: &ClothModel,
    state: &ClothState,
    p: &WetParams,
    gap: &[f32],
    normal: &[Vec3A],
    neighbours: impl Fn(usize) -> &'a [u32] + Sync,
    dt: f32,
    scratch: &mut WetScratch,
    f: &mut [Vec3A],
) {
    let min_wet = p.min_wetness.max(0.0);
    scratch.active =
        p.adhesion != AdhesionMode::Off && state.wet.iter().any(|&a| a >= min_wet && a > 0.0);
    scratch.adhering = 0;
    scratch.self_pairs = 0;
    scratch.collider_force = 0.0;
    if !scratch.active || p.scale <= 0.0 {
        return;
    }
    let (_, h_max) = p.heights();
    let radius = |i: usize| p.bridge_radius.unwrap_or(scratch.half_spacing[i]).max(0.0);
    let cap_of = |i: usize| p.cap.max(0.0) * state.mass[i] * G0;
    // Stability (chosen, like the engine's clamp of springs too stiff for the substep): in one
    // substep a bridge may not pull its vertex farther than the bridge is high (h, at least
    // h_min), F Δt²/m ≤ max(h, h_min); a bang-bang force that overshoots the surface every
    // substep would otherwise rattle at coarse substeps. At the paper's settings (32 substeps
    // of 1/60 s) this bound is ~37 m g, above the cap, so it changes nothing there.
    let inv_dt2 = 1.0 / (dt * dt).max(1e-12);
    let (h_lo, _) = p.heights();
    let reach_of = |i: usize, h: f32| state.mass[i] * h.max(h_lo) * inv_dt2;
    let holds = |i: usize| state.wet[i] >= min_wet && state.wet[i] > 0.0;
    // Bridge height to the nearest collider, or None when there is no bridge.
    let bridge = |i: usize| -> Option<f32> {
        if state.inv_mass[i] == 0.0 || !holds(i) {
            return None;
        }
        let h = (gap[i] - model.thickness[i]).max(0.0);
        (h <= h_max).then_some(h)
    };

    // The area-based force is one global quantity: computed first, serially (a comparison
    // mode, not the fast path). Per-vertex bridges and self-adhesion are per particle and run
    // in one parallel pass over the step's fixed chunks.
    let mut area_each = 0.0f32;
    let mut area_count = 0u32;
    let region = p.area_region.clamp(h_max, 0.05);
    let over_region = |i: usize| -> Option<f32> {
        if state.inv_mass[i] == 0.0 || !holds(i) {
            return None;
        }
        let h = (gap[i] - model.thickness[i]).max(0.0);
        (h <= region).then_some(h)
    };
    if p.adhesion == AdhesionMode::AreaBased {
        // One bridge over the whole wetted contact area A_c = Σ π r_i² (the vertices within
        // h_max) at their mean gap, its force split evenly over every wet vertex over the
        // contact region (within `area_region`): the model Park & Byun argue glues the patch
        // flat.
        let (mut count, mut area, mut h_sum) = (0u32, 0.0f32, 0.0f32);
        for i in 0..model.len() {
            if let Some(h) = bridge(i) {
                let r = radius(i);
                count += 1;
                area += std::f32::consts::PI * r * r;
                h_sum += h;
            }
        }
        if count > 0 {
            area_count = (0..model.len())
                .filter(|&i| over_region(i).is_some())
                .count() as u32;
        }
        if area_count > 0 {
            let r_c = (area / std::f32::consts::PI).sqrt();
            area_each = p.scale * p.bridge_force(r_c, h_sum / count as f32) / area_count as f32;
        }
    }

    // Pairs of one garment closer than this in the rest shape are neighbours (structural,
    // shear and bending rings, up to two spacings): their water is part of the same fabric and
    // forms no bridge between separate layers.
    const NEIGHBOUR_SPACINGS: f32 = 2.5;
    let self_on = p.self_adhesion;
    let (x, cs) = (&state.x, model.chunk_size);
    let max_t = model.max_thickness;
    // No pair farther apart than this holds a bridge: squared-distance rejection first.
    let reach2 = (h_max + 2.0 * max_t) * (h_max + 2.0 * max_t);
    let (count, total, pairs) = f
        .par_chunks_mut(cs)
        .enumerate()
        .map(|(c, fc)| {
            let base = c * cs;
            let (mut count, mut total, mut pairs) = (0u32, 0.0f32, 0u32);
            for (k, fi) in fc.iter_mut().enumerate() {
                let i = base + k;
                if state.inv_mass[i] == 0.0 {
                    continue;
                }
                // The bridge to the nearest collider.
                match p.adhesion {
                    AdhesionMode::PerVertex => {
                        if let Some(h) = bridge(i) {
                            let mag = (p.scale * p.bridge_force(radius(i), h))
                                .min(cap_of(i))
                                .min(reach_of(i, h));
                            *fi -= normal[i] * mag;
                            count += 1;
                            total += mag;
                        }
                    }
                    AdhesionMode::AreaBased if area_each > 0.0 => {
                        if let Some(h) = over_region(i) {
                            let mag = area_each.min(cap_of(i)).min(reach_of(i, h));
                            *fi -= normal[i] * mag;
                            count += 1;
                            total += mag;
                        }
                    }
                    _ => {}
                }
                if !self_on {
                    continue;
                }
                let (xi, ti, gi, ri) = (x[i], model.thickness[i], model.garment_of[i], radius(i));
                let (rest_i, wet_i) = (model.rest[i], holds(i));
                for &j in neighbours(i) {
                    let j = j as usize;
                    let d = x[j] - xi;
                    let d2 = d.length_squared();
                    // A bridge needs water on at least one side (it wets the other).
                    if d2 > reach2 || !(wet_i || holds(j)) {
                        continue;
                    }
                    let dist = d2.sqrt();
                    let h = dist - ti - model.thickness[j];
                    if h > h_max || dist < 1e-9 {
                        continue;
                    }
                    let rj = radius(j);
                    if model.garment_of[j] == gi {
                        let near = NEIGHBOUR_SPACINGS * (ri + rj);
                        if rest_i.distance_squared(model.rest[j]) < near * near {
                            continue;
                        }
                    }
                    // Symmetric in i and j (min radius, min cap), so the pair's forces are
                    // equal and opposite; each side closes half the gap at most.
                    let mag = (p.scale * p.bridge_force(ri.min(rj), h.max(0.0)))
                        .min(cap_of(i).min(cap_of(j)))
                        .min(0.5 * reach_of(i, h).min(reach_of(j, h)));
                    *fi += d * (mag / dist);
                    pairs += 1;
                }
            }
            (count, total, pairs)
        })
        .reduce(|| (0, 0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    scratch.adhering = count;
    scratch.collider_force = total;
    scratch.self_pairs = pairs;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturation_law_reaches_b_and_steps_compose() {
        let c = Fabric::COTTON;
        assert!((c.absorbed_after(1e6) - 0.84).abs() < 1e-6);
        assert_eq!(c.absorbed_after(0.0), 0.0);
        // Ten 1-second steps equal one 10-second soak (the law is memoryless in (B − A)).
        let mut a = 0.0;
        for _ in 0..10 {
            a = c.absorb(a, 1.0);
        }
        assert!((a - c.absorbed_after(10.0)).abs() < 1e-5, "{a}");
        // Slower fabrics take longer to reach the same fraction of B.
        let frac = |f: Fabric| f.absorbed_after(10.0) / f.saturation;
        assert!(frac(Fabric::COTTON) > frac(Fabric::COARSE_WOOL));
        assert!(frac(Fabric::COARSE_WOOL) > frac(Fabric::HIGH_ABSORPTION));
    }

    #[test]
    fn bridge_force_falls_with_the_gap_and_breaks_at_h_max() {
        let p = WetParams::default();
        let r = 0.005;
        let at = |h: f32| p.bridge_force(r, h);
        // Below h_min it is constant (fully adhered).
        assert_eq!(at(0.0), at(p.h_min));
        let mut last = f32::INFINITY;
        for k in 0..=20 {
            let h = p.h_min + (p.h_max - p.h_min) * k as f32 / 20.0;
            let fh = at(h);
            assert!(fh >= 0.0 && fh <= last, "h {h}: {fh} after {last}");
            last = fh;
        }
        assert_eq!(at(p.h_max * 1.01), 0.0);
        // At h_max, θ = 90°: only π r γ remains (rim 2π r γ minus the Laplace term π r γ).
        let want = std::f32::consts::PI * r * p.surface_tension;
        assert!((at(p.h_max) - want).abs() < 1e-3 * want);
        // At contact the Laplace term dominates: 2π r² γ cos θ_min / h_min.
        let want0 = std::f32::consts::PI * r * r * p.surface_tension * (2.0 / p.h_min - 1.0 / r);
        assert!((at(0.0) - want0).abs() < 1e-3 * want0);
        // ~60× the weight of a saturated 0.1 g cotton vertex: the cap (20×) is what holds.
        let weight = 1e-4 * 1.84 * G0;
        assert!(at(0.0) > 20.0 * weight);
    }
}
