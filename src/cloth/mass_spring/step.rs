//! The mass-spring model's substep order. One frame = `substeps` fixed substeps; each substep
//! runs the stages below in this order, one named function each (ARCHITECTURE.md, style 3), each
//! in its own file: `forces`, `integrate`, `constrain` (with `constrain_tracked`, `last_word`) in
//! this folder, `adhere` (stages/wet.rs), `pins`, `skin` (stages/skin.rs), `self_collide`
//! (stages/self_collision.rs), `collide` and `reproject` (stages/collide.rs) shared with any
//! other model:
//!
//! ```text
//! forces → adhere → integrate → pins → skin → constrain → self_collide → collide (+ friction, velocity)
//!   → [constrain_tracked → reproject] × SimParams::contact_rounds → last word
//! ```
//!
//! `forces` accumulates springs and wind (gravity is added by `integrate`); `adhere` is the wet
//! stage's place (adhesion forces and the extra normal load friction sees); `pins` places pinned
//! particles on their interpolated targets; `skin` moves cloth out of the skinned body's
//! triangles, on the substeps `SimParams::skin_contact` selects, before the deformation limit so
//! that the limit takes up the stretch its pushes make; `constrain` is Provot's limit (with the
//! tethers from the pins, `SimParams::tether_slack`); `self_collide` pushes
//! apart particles of one or several garments; `collide` runs last so that no particle ends a
//! substep inside a collider, applies friction, and derives the velocity. The contact rounds
//! repeat the last two for the particles the deformation limit moves (`contact_rounds`), and a
//! bounded limit pass ends the substep after them (`last_word`).
//!
//! Where the world allows (dry grid garments, few colliders, none of the optional stages), the
//! same stages run fused into one pass per band of rows ([`super::fused`]), bit-identical.
//! Building the workspace allocates; stepping does not.

use crate::cloth::collide::Collider;
use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::stages::collide::{collide, interpolate_colliders, reproject};
use crate::cloth::stages::frame::{run_frame, StageClock};
pub use crate::cloth::stages::frame::{StageTimes, StepStats};
use crate::cloth::stages::pins::pins;
use crate::cloth::stages::self_collision::self_collide;
use crate::cloth::stages::skin::{keep_skin_pushes, skin};
use crate::cloth::stages::wet::adhere;
use crate::cloth::state::ClothState;
use crate::cloth::workspace::ClothWorkspace;

use super::constrain::{constrain, constrain_tracked, last_word};
use super::forces::forces;
use super::fused;
use super::integrate::integrate;

/// Steps one frame (`params.frame_dt`, in `params.substeps` substeps). Colliders move from
/// `prev` to `cur` over the frame and pins from `pin_prev` to `pin_target`; afterwards the pins
/// hold their targets until new ones are set.
pub fn step_frame(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    colliders: &[Collider],
    params: &SimParams,
) -> StepStats {
    step_frame_timed(model, state, ws, colliders, params, None)
}

/// [`step_frame`], optionally timing each stage into `times`.
pub fn step_frame_timed(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    colliders: &[Collider],
    params: &SimParams,
    mut times: Option<&mut StageTimes>,
) -> StepStats {
    ws.prepare(model, params);
    run_frame(state, ws, params, |state, ws, s| {
        substep_timed(model, state, ws, colliders, params, s, times.as_deref_mut())
    })
}

/// Substep `s` (0-based) of the current frame. Call [`ClothWorkspace::prepare`] first (as
/// [`step_frame`] does).
pub fn substep(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    colliders: &[Collider],
    params: &SimParams,
    s: u32,
) {
    substep_timed(model, state, ws, colliders, params, s, None);
}

/// [`substep`], optionally timing each stage into `times`.
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
    #[cfg(test)]
    let staged = ws.force_staged || ws.brute_force_collide;
    #[cfg(not(test))]
    let staged = ws.force_staged;
    if !staged && fused::eligible(model, state, colliders, params) {
        // The same stages in one pass per band of rows (mass_spring/fused/), bit-identical.
        fused_substep(model, state, ws, params, s, times);
        return;
    }
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
    constrain(model, state, ws, params);
    lap(4);
    if params.self_collision {
        self_collide(model, state, ws, params);
    }
    lap(5);
    #[cfg(test)]
    if ws.brute_force_collide {
        collide_and_rounds_brute_force(model, state, ws, params, dt);
        lap(6);
        return;
    }
    collide(model, state, ws, params, dt);
    contact_rounds_and_last_word(model, state, ws, params, dt);
    lap(6);
}

/// Substep `s` by the fused pass: stage `adhere` (which does nothing for dry cloth but reset its
/// records), then [`fused::substep`], its counters put where the staged stages leave theirs.
fn fused_substep(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    s: u32,
    times: Option<&mut StageTimes>,
) {
    let clock = times.as_ref().map(|_| std::time::Instant::now());
    adhere(model, state, ws, params);
    let adhered = clock.map(|c| c.elapsed().as_secs_f64());
    let io = fused::FusedIo {
        garment_scale: &ws.stability.garment_scale,
        shapes_start: &ws.shapes_start,
        shapes_end: &ws.shapes_end,
        bounds: &ws.bounds,
        prepared_end: &ws.prepared_end,
        extra_normal: &ws.extra_normal,
        contact_gap: &mut ws.contact_gap,
        contact_normal: &mut ws.contact_normal,
        contact_collider: &mut ws.contact_collider,
        isa: ws.fused_isa,
    };
    let st = fused::substep(model, state, &mut ws.fused, io, params, s, clock.is_some());
    for (c, sc) in ws.chunks.iter_mut().enumerate() {
        sc.contacts = if c == 0 { st.contacts } else { 0 };
        sc.limited = if c == 0 { st.speed_limited } else { 0 };
    }
    if let (Some(t), Some(c), Some(a)) = (times, clock, adhered) {
        // The pass's wall time, split like the bands' summed time in each part.
        let wall = c.elapsed().as_secs_f64() - a;
        let sum: f64 = st.secs.iter().sum::<f64>().max(1e-12);
        t.secs[1] += a;
        for (k, stage) in [0, 2, 6].into_iter().enumerate() {
            t.secs[stage] += wall * st.secs[k] / sum;
        }
    }
}

/// Stage `collide` and the contact rounds as [`substep_timed`] runs them, with the collide
/// stage's reference (`collide_brute_force`: every collider scanned) instead of the broad phase.
#[cfg(test)]
fn collide_and_rounds_brute_force(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    use crate::cloth::stages::collide::collide_brute_force;
    collide_brute_force(model, state, ws, params, dt, false);
    let rounds = contact_rounds(params);
    for r in 0..rounds {
        let (moved, provot) = (&mut ws.provot_moved, &mut ws.provot);
        if !constrain_tracked(model, state, params, moved, provot, r == 0) {
            return;
        }
        collide_brute_force(model, state, ws, params, dt, true);
    }
    if rounds > 0 {
        last_word(model, state, ws, params, dt);
    }
}

/// The contact rounds ([`contact_rounds`]), then, if every round ran (none stopped early for
/// want of work), [`last_word`].
fn contact_rounds_and_last_word(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    let rounds = contact_rounds(params);
    for r in 0..rounds {
        // A round whose deformation limit moved nothing would change nothing, nor would any
        // round after it: stop.
        let (moved, provot) = (&mut ws.provot_moved, &mut ws.provot);
        if !constrain_tracked(model, state, params, moved, provot, r == 0) {
            return;
        }
        keep_skin_pushes(model, state, ws);
        reproject(model, state, ws, params, dt);
    }
    if rounds > 0 {
        last_word(model, state, ws, params, dt);
    }
}

/// Why [`SimParams::contact_rounds`] exists: one pass each of `constrain` and `collide` leaves
/// cloth that a fast limb pushed out along its surface stretched (collision runs last, so it
/// wins): a hakama leg draped over a kicking knee, one end held on the thigh and the other on the
/// shin, ended frames at 114–115 % of rest with Provot's limit at 110 %. Alternating the two
/// projections is Gauss–Seidel over both constraint sets; measured on the hakama alone (coarse,
/// `hakama_stretch_report` in tests/scene.rs): worst spring in the front kick 115.3 % (0 rounds),
/// 112.7 % (1), 111.7 % (2), 110.8 % (4). More Provot passes without collision in between change
/// nothing, since collision undoes them. Each round costs one more `constrain` and `collide`, so
/// the engine's default is 0 and the dressed scene asks for more.
///
/// A round is cheaper than the stages it repeats: its `constrain` records which particles it
/// moved ([`constrain_tracked`]) and only those are pushed back out ([`reproject`]), without
/// friction, so friction is charged once per substep however many rounds run. (Re-running the
/// full `collide` instead applied friction every round: with the wet bridges' extra normal load
/// that made wet cloth stick far more than the calibrated single pass and failed the Fig. 6 and
/// Fig. 7 checks of tests/wet.rs, so wet cloth had to go without rounds; now it gets them too.)
/// The rounds stop early once a `constrain` moves nothing: every later round would be a no-op.
fn contact_rounds(params: &SimParams) -> u32 {
    params.contact_rounds.min(8)
}
