//! The XPBD model's substep order (PHYSICS.md §7; Macklin et al. 2019, "Small Steps in Physics
//! Simulation"). One frame = `substeps` fixed substeps of length Δt; each runs these stages in
//! this order, one named function each: `forces`, `integrate` with `damp`, and `constrain` in
//! this folder; `adhere` (stages/wet.rs), `pins`, `skin` (stages/skin.rs), `self_collide`
//! (stages/self_collision.rs) and `collide` (stages/collide.rs) shared with the mass-spring model:
//!
//! ```text
//! forces → adhere → integrate → pins → skin → constrain → self_collide → collide (+ friction, velocity)
//!   → [tethers + strain limit → reproject] × SimParams::contact_rounds → last word → damp
//! ```
//!
//! - `forces` + `adhere`: the external forces (wind; the wet forces of §5) into `ws.f`;
//! - `integrate`: `v ← v + Δt (g + f/m)`, `x_prev ← x`, `x ← x + Δt v`;
//! - `pins`: pinned particles (inverse mass 0) on their interpolated targets;
//! - `skin`: cloth out of the skinned body's triangles, on `SimParams::skin_contact` substeps;
//! - `constrain`: λ ← 0, then every stretch, shear and bending constraint projected once
//!   (coloured Gauss–Seidel, compliance α = 1/k), each structural and shear one also held to
//!   its strain limit `(1 + τ) l0` (α = 0, τ = `SimParams::provot_limit`), then the tethers,
//!   then more strain-limit passes if `SimParams::provot_max_iterations` asks for them;
//! - `self_collide`: particle pairs of one or several garments pushed to their contact distance;
//! - `collide`: particles pushed out of the colliders to their thickness, position-level Coulomb
//!   friction against the collider's motion, then `v ← (x − x_prev)/Δt`;
//! - `contact_rounds` (in `constrain.rs`): the tethers and the strain limit again and the
//!   particles they moved pushed back out, `SimParams::contact_rounds` times (the dressed
//!   character: 6), then a last strain-limit pass bounded to half the collision margin;
//! - `damp`: `v ← (1 − d) v`.
//!
//! Contacts run after the constraints so that no particle ends a substep inside a collider; the
//! stretch they leave is taken up by the contact rounds, or else by the next substep's
//! projection. No stability clamp: the stiffness enters as a compliance, not a time-step limit.
//! The strain limit is a constraint of its own (zero compliance, unilateral), not a clamp of k.

use crate::cloth::collide::Collider;
use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::stages::collide::{collide, interpolate_colliders};
use crate::cloth::stages::frame::{run_frame, StageClock, StageTimes, StepStats};
use crate::cloth::stages::pins::pins;
use crate::cloth::stages::self_collision::self_collide;
use crate::cloth::stages::skin::skin;
use crate::cloth::stages::wet::adhere;
use crate::cloth::state::ClothState;
use crate::cloth::workspace::ClothWorkspace;

use super::constrain::{constrain, contact_rounds};
use super::forces::forces;
use super::integrate::{damp, integrate};

/// Steps one frame with the XPBD model (`params.frame_dt`, in `params.substeps` substeps),
/// optionally timing each stage into `times` (`damp` is counted with `collide`). Colliders move
/// from `prev` to `cur` over the frame and pins from `pin_prev` to `pin_target`; afterwards the
/// pins hold their targets until new ones are set.
pub fn step_frame_timed(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    colliders: &[Collider],
    params: &SimParams,
    mut times: Option<&mut StageTimes>,
) -> StepStats {
    run_frame(state, ws, params, |state, ws, s| {
        substep_timed(model, state, ws, colliders, params, s, times.as_deref_mut())
    })
}

/// Substep `s` (0-based) of the current frame, optionally timing each stage into `times`.
#[allow(clippy::too_many_arguments)]
pub fn substep_timed(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    colliders: &[Collider],
    params: &SimParams,
    s: u32,
    times: Option<&mut StageTimes>,
) {
    let n_sub = params.substeps.max(1);
    let dt = params.dt();
    let (t0, t1) = (s as f32 / n_sub as f32, (s + 1) as f32 / n_sub as f32);
    let time = state.time as f32 + s as f32 * dt;
    interpolate_colliders(colliders, t0, t1, ws);
    let mut clock = StageClock::new(times);
    let mut lap = |k: usize| clock.lap(k);
    forces(model, state, ws, params, time);
    lap(0);
    adhere(model, state, ws, params);
    lap(1);
    integrate(model, state, ws, params, dt);
    lap(2);
    pins(model, state, t0, t1);
    lap(3);
    skin(model, state, ws, params);
    lap(7);
    constrain(model, state, ws, params, dt);
    lap(4);
    if params.self_collision {
        self_collide(model, state, ws, params);
    }
    lap(5);
    collide(model, state, ws, params, dt);
    contact_rounds(model, state, ws, params, dt);
    damp(state, params);
    lap(6);
}
