//! Stage `integrate`: explicit time integration of the mass-spring model (PHYSICS.md §1).

use crate::cloth::model::ClothModel;
use crate::cloth::params::{Integrator, SimParams};
use crate::cloth::state::ClothState;
use crate::cloth::workspace::{each_chunk_xv, ChunkScratch, ClothWorkspace};
use crate::math::Vec3A;

/// Stage `integrate`: gravity plus `f / m`, Verlet or symplectic Euler, with the speed limit.
/// Pinned particles are skipped (stage `pins` places them).
pub fn integrate(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    let cs = model.chunk_size;
    let g = Vec3A::from(params.gravity);
    let dt2 = dt * dt;
    let keep = 1.0 - params.verlet_damping.clamp(0.0, 1.0);
    let max_step = params.max_speed * dt;
    let integrator = params.integrator;
    let (f, inv_mass) = (&ws.f, &state.inv_mass);
    let run = |c: usize,
               x: &mut [Vec3A],
               xp: &mut [Vec3A],
               v: &mut [Vec3A],
               scratch: &mut ChunkScratch| {
        let base = c * cs;
        let mut limited = 0;
        for k in 0..x.len() {
            let i = base + k;
            let w = inv_mass[i];
            if w == 0.0 {
                continue;
            }
            let a = g + f[i] * w;
            let mut step = match integrator {
                // x_new = x + (1 − d)(x − x_prev) + a Δt²
                Integrator::Verlet => (x[k] - xp[k]) * keep + a * dt2,
                // v ← v + Δt a; x ← x + Δt v
                Integrator::SymplecticEuler => (v[k] + a * dt) * dt,
            };
            let l2 = step.length_squared();
            // Written negated on purpose: it also catches NaN (a non-finite step becomes no step).
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            let too_far = !(l2 <= max_step * max_step);
            if too_far {
                step = if l2.is_finite() {
                    step * (max_step / l2.sqrt())
                } else {
                    Vec3A::ZERO
                };
                limited += 1;
            }
            xp[k] = x[k];
            x[k] += step;
        }
        scratch.limited = limited;
    };
    let xv = [&mut state.x[..], &mut state.x_prev[..], &mut state.v[..]];
    each_chunk_xv(model, xv, &mut ws.chunks, run);
}
