//! Stage `constrain`: the tethers and Provot's deformation limit (PHYSICS.md §1), the tracked
//! passes of the contact rounds, and the bounded pass that ends a substep with rounds
//! (`last_word`). The per-spring kernels are in `cloth/constraints.rs`.

use crate::cloth::constraints;
use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::stages::skin::{has_skin_plane, hold_on_skin_plane, keep_skin_pushes};
use crate::cloth::state::ClothState;
use crate::cloth::workspace::ClothWorkspace;
use crate::math::Vec3A;

/// Stage `constrain`: the tethers and Provot's deformation limit, `provot_iterations` passes
/// or more (see `provot_passes`).
///
/// The passes after the first skip the blocks of springs that the pass before found within
/// the limit and whose particles have not moved since ([`constraints::ProvotScratch`], the
/// same result as visiting them): in the dressed scene (`drape bench scene`) ~40 % of the
/// springs. `ws.provot_moved` is written on the way (the contact rounds' first
/// [`constrain_tracked`] clears it).
pub fn constrain(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
) {
    let (moved, scratch) = (&mut ws.provot_moved, &mut ws.provot);
    // The stages before moved every particle.
    scratch.invalidate();
    provot_passes(model, state, params, moved, scratch);
    keep_skin_pushes(model, state, ws);
}

/// The tethers (`SimParams::tether_slack`), then Provot's passes, of [`constrain`] and
/// [`constrain_tracked`]: at least `provot_iterations`, and on up to `provot_max_iterations`
/// while the last pass found a spring more than `provot_tolerance` past the limit; none after a
/// pass that moved nothing. The tethers run inside the first pass (one fork–join for both, see
/// [`constraints::provot_tracked`]). Returns whether anything moved a particle.
fn provot_passes(
    model: &ClothModel,
    state: &mut ClothState,
    params: &SimParams,
    moved: &mut [u8],
    scratch: &mut constraints::ProvotScratch,
) -> bool {
    constraints::tethers_and_limit(
        model,
        &state.inv_mass,
        &mut state.x,
        params.provot_limit,
        params.tether_slack,
        (
            params.provot_iterations,
            params.max_provot_passes(),
            params.provot_tolerance,
        ),
        moved,
        scratch,
        constraints::provot_tracked,
    )
}

/// [`constrain`] for a contact round: sets `moved[i] = 1` for every particle it moved, 0 for the
/// others, and returns whether it moved any. On entry `moved` holds the previous round's
/// [`reproject`](crate::cloth::stages::collide::reproject) result (2 = pushed out): with `first`
/// false, the deformation limit's passes visit only the springs near those particles or near its
/// own earlier moves, and skip the others, which are still within the limit (see
/// [`constraints::ProvotScratch`]; the same result as visiting them). `first` = the substep's first
/// round, after stages that moved everything: every spring is visited.
pub fn constrain_tracked(
    model: &ClothModel,
    state: &mut ClothState,
    params: &SimParams,
    moved: &mut [u8],
    scratch: &mut constraints::ProvotScratch,
    first: bool,
) -> bool {
    if first {
        scratch.invalidate();
    }
    if first {
        moved.fill(0);
    } else {
        // Most particles were not pushed: 16 flags are tested at once (one SIMD compare).
        for (c, m16) in moved.chunks_mut(16).enumerate() {
            if m16.iter().fold(false, |any, &m| any | (m == 2)) {
                for (k, m) in m16.iter().enumerate() {
                    if *m == 2 {
                        scratch.moved_by(model, 16 * c + k);
                    }
                }
            }
            m16.fill(0);
        }
    }
    provot_passes(model, state, params, moved, scratch)
}

/// After the contact rounds, the deformation limit has the last word: one more tracked
/// `constrain` over the springs near the particles the last re-projection pushed, bounded so
/// that no particle is moved more than half its thickness into the collision margin, and the
/// moved particles' velocities re-derived.
///
/// Why: where a limb drags cloth that friction holds on its surface, collision and the limit
/// conflict, and whichever runs last wins; a collision push left last kept springs at 113 % in
/// the front kick at the default garment resolution (`default_resolution_report` in
/// tests/scene.rs; the limit + 2 % is 112 %). The collision stage keeps particles a thickness
/// (2–3 mm) off the body, a margin, not the body: the limit may use half of it. The bound is
/// applied on each moved particle's contact plane from the last collision pass that visited it
/// (`contact_gap`, `contact_normal`): with `d` the move along the normal, the particle is put
/// back to `gap + d = thickness / 2` if it went below. Unbounded, the limit's moves (up to 10 %
/// of a spring, 4.5 mm in the tests' coarse garments) left a hakama particle 1.9 mm inside the
/// body during the kata's bow. A particle the skin stage pushed in this substep is held the same
/// way on the skin's contact plane
/// ([`hold_on_skin_plane`](crate::cloth::stages::skin::hold_on_skin_plane)), before the proxies'
/// bound.
pub(crate) fn last_word(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    // Only particles with a contact plane (a proxy's or the skin's) are bounded: only their
    // positions are kept.
    ws.last_word_x.resize(state.x.len(), Vec3A::ZERO);
    let planes = ws.skin_planes_live.then_some(ws.skin_clear.as_slice());
    for (i, ((b, &x), &g)) in ws
        .last_word_x
        .iter_mut()
        .zip(&state.x)
        .zip(&ws.contact_gap)
        .enumerate()
    {
        if g.is_finite() || has_skin_plane(planes, i) {
            *b = x;
        }
    }
    let (moved, provot) = (&mut ws.provot_moved, &mut ws.provot);
    if !constrain_tracked(model, state, params, moved, provot, false) {
        return;
    }
    let inv_dt = 1.0 / dt;
    let (gap, normal, before) = (&ws.contact_gap, &ws.contact_normal, &ws.last_word_x);
    let planes = ws.skin_planes_live.then_some(ws.skin_clear.as_slice());
    for (c, m16) in moved.chunks(16).enumerate() {
        if !m16.iter().fold(false, |any, &m| any | (m != 0)) {
            continue;
        }
        for (k, &m) in m16.iter().enumerate() {
            if m == 0 {
                continue;
            }
            let i = 16 * c + k;
            hold_on_skin_plane(planes, i, before[i], &mut state.x[i], model.thickness[i]);
            if gap[i].is_finite() {
                let n = normal[i];
                let h = gap[i] + (state.x[i] - before[i]).dot(n);
                let floor = 0.5 * model.thickness[i];
                if h < floor {
                    state.x[i] += n * (floor - h);
                }
            }
            state.v[i] = (state.x[i] - state.x_prev[i]) * inv_dt;
        }
    }
}
