//! Provot's deformation constraint (Provot 1995, "Deformation constraints in a mass-spring
//! model to describe rigid cloth behavior"; PHYSICS.md §1).

use rayon::prelude::*;

use crate::math::Vec3A;

use super::model::ClothModel;

/// One Gauss–Seidel pass: every structural or shear spring stretched past `(1 + tau) l0` has
/// its ends moved toward each other by half the excess each, the whole excess on the free end
/// if the other is pinned (`inv_mass == 0`), nothing if both are pinned. Chunks run in
/// parallel (their springs touch only their own particles), then the crossing springs serially.
/// Returns nothing: the velocity follows from the positions at the end of the substep
/// (`v = (x − x_prev)/Δt`, which for the Euler integrator is the correction/Δt rule).
pub fn provot(model: &ClothModel, inv_mass: &[f32], tau: f32, x: &mut [Vec3A]) {
    let set = &model.limits;
    let cs = model.chunk_size;
    let limit = 1.0 + tau;
    #[inline(always)]
    fn fix(x: &mut [Vec3A], a: usize, b: usize, wa: f32, wb: f32, max_len: f32) {
        let d = x[b] - x[a];
        let l2 = d.length_squared();
        if l2 <= max_len * max_len || wa + wb == 0.0 {
            return;
        }
        let l = l2.sqrt();
        let corr = d * ((l - max_len) / (l * (wa + wb)));
        x[a] += corr * wa;
        x[b] -= corr * wb;
    }
    let w = |i: usize| if inv_mass[i] > 0.0 { 1.0 } else { 0.0 };
    let chunk = |c: usize, xc: &mut [Vec3A]| {
        let base = c * cs;
        for e in set.chunk_edges[c].clone() {
            let (a, b) = (set.a[e] as usize, set.b[e] as usize);
            fix(xc, a - base, b - base, w(a), w(b), limit * set.rest[e]);
        }
    };
    if x.len() <= cs {
        chunk(0, x);
    } else {
        x.par_chunks_mut(cs)
            .enumerate()
            .for_each(|(c, xc)| chunk(c, xc));
    }
    for e in set.crossing.clone() {
        let (a, b) = (set.a[e] as usize, set.b[e] as usize);
        fix(x, a, b, w(a), w(b), limit * set.rest[e]);
    }
}
