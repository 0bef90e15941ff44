//! Stage `integrate` of the XPBD model (PHYSICS.md §7): the prediction `v ← v + Δt (g + f/m)`,
//! `x_prev ← x`, `x ← x + Δt v`, with the speed limit; and `damp`, the velocity damping that
//! ends a substep.

use rayon::prelude::*;

use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::state::ClothState;
use crate::cloth::workspace::{each_chunk_xv, ChunkScratch, ClothWorkspace};
use crate::math::Vec3A;

/// Stage `integrate`: symplectic Euler prediction of every free particle (pinned ones are
/// placed by stage `pins`). A displacement longer than `max_speed · Δt` is shortened to it and
/// counted, a non-finite one dropped (the same safety net as the mass-spring model's).
pub fn integrate(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    let cs = model.chunk_size;
    let g = Vec3A::from(params.gravity);
    let max_step = params.max_speed * dt;
    let (f, inv_mass) = (&ws.f, &state.inv_mass);
    let run = |c: usize,
               x: &mut [Vec3A],
               xp: &mut [Vec3A],
               v: &mut [Vec3A],
               scratch: &mut ChunkScratch| {
        let base = c * cs;
        let mut limited = 0;
        for k in 0..x.len() {
            let w = inv_mass[base + k];
            if w == 0.0 {
                continue;
            }
            let mut vk = v[k] + (g + f[base + k] * w) * dt;
            let mut step = vk * dt;
            let l2 = step.length_squared();
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            if !(l2 <= max_step * max_step) {
                (step, vk) = if l2.is_finite() {
                    let s = max_step / l2.sqrt();
                    (step * s, vk * s)
                } else {
                    (Vec3A::ZERO, Vec3A::ZERO)
                };
                limited += 1;
            }
            v[k] = vk;
            xp[k] = x[k];
            x[k] += step;
        }
        scratch.limited = limited;
    };
    let xv = [&mut state.x[..], &mut state.x_prev[..], &mut state.v[..]];
    each_chunk_xv(model, xv, &mut ws.chunks, run);
}

/// Stage `damp`: `v ← (1 − d) v` with d = `SimParams::verlet_damping`, the fraction the
/// mass-spring model's Verlet step takes off per substep, so both models lose the same share of
/// their motion to the air in a substep. (The springs' own dashpots act inside `constrain`.)
pub fn damp(state: &mut ClothState, params: &SimParams) {
    let keep = 1.0 - params.verlet_damping.clamp(0.0, 1.0);
    if keep == 1.0 {
        return;
    }
    state
        .v
        .par_iter_mut()
        .with_min_len(4096)
        .for_each(|v| *v *= keep);
}
