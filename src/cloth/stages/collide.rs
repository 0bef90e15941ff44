//! Stage `collide`: every particle against the colliders (planes, spheres, tapered capsules,
//! static or moving), pushed out to its thickness with Coulomb friction, contact records for the
//! wet stage, then the velocity (PHYSICS.md §2). Also the contact rounds' re-projection
//! ([`reproject`]) and the per-substep interpolation of the colliders
//! (`interpolate_colliders`). The shapes, their distance queries and the contact response are
//! in `cloth/collide.rs`; this file is the pass over the cloth: the two-level broad phase, the
//! clearance records and the parallel chunks.

use rayon::prelude::*;

use crate::cloth::collide::{self, Collider, Shape};
use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::stages::faces;
use crate::cloth::state::ClothState;
use crate::cloth::workspace::{BlockList, ChunkScratch, Clearance, ClothWorkspace, PARTICLE_LIST};
use crate::math::{Vec3, Vec3A};

/// Particles per broad-phase block. Garments are laid out row by row, so a block is a short strip
/// whose box meets only the nearby body colliders.
const COLLIDE_BLOCK: usize = 32;

/// Slack added around a block's box when its collider list is made, m (range 0.001..0.2, default
/// 0.02): larger keeps lists valid for more substeps of motion but makes them longer.
const COLLIDE_SKIN: f32 = 0.02;

/// Slack around a particle's own collider list, m (range 0.001..0.1, default 0.01): the list
/// holds every collider whose frame-swept box is within reach plus this of the particle's
/// position when the list was made, and stays valid until the particle moves further.
const PARTICLE_SKIN: f32 = 0.01;

/// A particle pushed by less than this in the first collision pass, m, needs in the second pass
/// only the colliders the first pass found within reach plus this (range 0..0.1, default 0.01).
const SECOND_PASS_SLACK: f32 = 0.01;

/// Tolerance taken off a particle's recorded clearance for rounding, m: this plus
/// [`CLEARANCE_EPS_REL`] × the particle's largest coordinate (range 1e-6..1e-3, default 1e-4:
/// the distance queries and interpolations round at ~1e-7 of the coordinates, and a larger
/// value only costs a few more visits).
const CLEARANCE_EPS: f32 = 1e-4;
/// See [`CLEARANCE_EPS`] (range 1e-6..1e-4, default 1e-5).
const CLEARANCE_EPS_REL: f32 = 1e-5;

/// Each collider's shape at the start and end of the substep, and its bounds at the end; once
/// per frame (whenever the colliders differ from last substep's) the boxes swept over the frame
/// and their BVH, which the collide stage's per-block lists are drawn from.
pub(crate) fn interpolate_colliders(
    colliders: &[Collider],
    t0: f32,
    t1: f32,
    ws: &mut ClothWorkspace,
) {
    ws.shapes_start.clear();
    ws.shapes_end.clear();
    ws.prepared_end.clear();
    ws.bounds.clear();
    for c in colliders {
        ws.shapes_start.push(Shape::lerp(&c.prev, &c.cur, t0));
        let end = Shape::lerp(&c.prev, &c.cur, t1);
        ws.bounds.push(end.aabb());
        ws.prepared_end.push(collide::PreparedShape::new(&end));
        ws.shapes_end.push(end);
    }
    // A new sweep unless this substep continues the last one's interpolation.
    let mut restart = t0 != ws.collide_t;
    ws.collide_t = t1;
    if ws.swept_for.as_slice() != colliders {
        restart = true;
        ws.collider_speed.clear();
        ws.collider_speed
            .extend(colliders.iter().map(Collider::sweep_speed));
        ws.swept_for.clear();
        ws.swept_for.extend_from_slice(colliders);
        ws.swept.clear();
        ws.swept_collider.clear();
        ws.unbounded.clear();
        ws.swept_by_collider.clear();
        for (i, c) in colliders.iter().enumerate() {
            let (a_lo, a_hi) = c.prev.aabb();
            let (b_lo, b_hi) = c.cur.aabb();
            let (lo, hi) = (a_lo.min(b_lo), a_hi.max(b_hi));
            ws.swept_by_collider.push((lo, hi));
            if lo.is_finite() && hi.is_finite() {
                ws.swept.push((lo, hi));
                ws.swept_collider.push(i as u32);
            } else {
                ws.unbounded.push(i as u32);
            }
        }
        ws.collider_bvh.update_boxes(&ws.swept, 2.0);
        ws.collide_generation += 1;
    }
    if restart {
        ws.collide_sweep = ws.collide_sweep.wrapping_add(1).max(1);
    }
}

/// Stage `collide`: each particle against the colliders that can reach it (moving colliders at
/// their substep-end pose), pushed out to its thickness with Coulomb friction against the
/// collider's own motion; records the nearest contact (gap, normal) for the wet stage; finally
/// `v = (x − x_prev)/Δt`.
///
/// Broad phase in two levels. Per frame and per block of `COLLIDE_BLOCK` consecutive particles,
/// a list from the BVH over the colliders' frame-swept boxes: every collider that can come within
/// reach of the block's box grown by `COLLIDE_SKIN` at any substep of the frame. It is kept as
/// long as the block stays inside that box, so most blocks query the BVH once per frame. Per
/// substep, the block's list is cut to the colliders whose current box meets the block's current
/// box, and each particle tests only those (a box test, then the exact tapered-capsule distance).
pub fn collide(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    faces::collide_faces(model, state, ws, params, true);
    clear_face_moved(ws);
    collide_pass(model, state, ws, params, dt, false);
}

/// Clears the face pass's per-particle flags and their list.
fn clear_face_moved(ws: &mut ClothWorkspace) {
    for &i in &ws.face_moved_list {
        ws.face_moved[i as usize] = 0;
    }
    ws.face_moved_list.clear();
}

/// A contact round's face pass ([`faces::collide_faces`] on the stage's pairs) before the
/// particle pass `pass` (which visits the particles `ws.provot_moved` flags): the particles it
/// moves are flagged for the particle pass to visit (their velocity re-derived, their pushes
/// out of the body last), and flagged 2 after it (moved: the next round's limit looks at them).
fn with_face_pass(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    pass: impl FnOnce(&mut ClothState, &mut ClothWorkspace),
) {
    clear_face_moved(ws);
    if faces::collide_faces(model, state, ws, params, false) {
        for &i in &ws.face_moved_list {
            let m = &mut ws.provot_moved[i as usize];
            *m = (*m).max(1);
        }
    }
    pass(state, ws);
    for &i in &ws.face_moved_list {
        ws.provot_moved[i as usize] = 2;
    }
    clear_face_moved(ws);
}

/// The contact rounds' collision pass: only the particles the round's deformation limit moved
/// (`ws.provot_moved`) are pushed back out of the colliders, against the same lists as
/// [`collide()`], and without friction — friction belongs to the substep's motion, which
/// [`collide()`] has already charged it for once; applying it again in every round would make cloth
/// stick more the more rounds it gets (and wet cloth, whose bridges add normal load, far more).
/// Their contact records and velocities are updated; every other particle is where the last pass
/// left it, outside every collider, and is not visited (a block of `COLLIDE_BLOCK` particles none
/// of which moved is skipped whole). Leaves `moved` at 2 for each particle it pushed and 0 for the
/// others (the next round's
/// [`constrain_tracked`](crate::cloth::mass_spring::constrain::constrain_tracked) reads it).
pub fn reproject(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    with_face_pass(model, state, ws, params, |state, ws| {
        collide_pass(model, state, ws, params, dt, true)
    });
}

/// The contact margin the collision passes record contacts within, m: the scene's, or the wet
/// bridges' reach h_max where the cloth is wet.
pub(crate) fn contact_margin(params: &SimParams, ws: &ClothWorkspace) -> f32 {
    let margin = params.contact_margin.max(0.0);
    if ws.wet.active {
        // Wet cloth needs the gaps out to h_max for its bridges.
        margin.max(params.wet.contact_margin())
    } else {
        margin
    }
}

/// [`collide`] (`only_moved` false) or [`reproject`] (true).
fn collide_pass(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
    only_moved: bool,
) {
    let cs = model.chunk_size;
    let margin = contact_margin(params, ws);
    let inv_dt = 1.0 / dt;
    let (shapes_end, shapes_start, bounds) = (&ws.shapes_end, &ws.shapes_start, &ws.bounds);
    let prepared = &ws.prepared_end;
    let (bvh, swept_collider, unbounded, generation, swept) = (
        &ws.collider_bvh,
        &ws.swept_collider,
        &ws.unbounded,
        ws.collide_generation,
        &ws.swept_by_collider,
    );
    let (inv_mass, extra) = (&state.inv_mass, &ws.extra_normal);
    let grow = model.max_thickness + margin;
    let (speeds, sweep, t_now) = (&ws.collider_speed, ws.collide_sweep, ws.collide_t);
    #[allow(clippy::too_many_arguments)]
    let run = |c: usize,
               x: &mut [Vec3A],
               xp: &[Vec3A],
               v: &mut [Vec3A],
               gap: &mut [f32],
               normal: &mut [Vec3A],
               which: &mut [u32],
               moved: &mut [u8],
               scratch: &mut ChunkScratch| {
        let base = c * cs;
        // A re-projection changes only its particles' share of the count.
        let mut contacts = if only_moved { scratch.contacts } else { 0 };
        let nblocks = x.len().div_ceil(COLLIDE_BLOCK);
        if scratch.blocks.len() < nblocks {
            scratch.blocks.resize(nblocks, BlockList::default());
        }
        if scratch.p_len.len() < x.len() {
            scratch.p_list.resize(x.len(), [0; PARTICLE_LIST]);
            scratch.p_len.resize(x.len(), 0);
            scratch.p_anchor.resize(x.len(), Vec3A::ZERO);
            // Epoch 0 is never a block's: every particle starts stale.
            scratch.p_epoch.resize(x.len(), 0);
            scratch.p_clear.resize(x.len(), Clearance::default());
        }
        for (bi, b0) in (0..x.len()).step_by(COLLIDE_BLOCK).enumerate() {
            let b1 = (b0 + COLLIDE_BLOCK).min(x.len());
            if only_moved && moved[b0..b1].iter().all(|&m| m == 0) {
                continue;
            }
            let mut lo = Vec3A::splat(f32::INFINITY);
            let mut hi = Vec3A::splat(f32::NEG_INFINITY);
            for p in x[b0..b1].iter() {
                lo = lo.min(*p);
                hi = hi.max(*p);
            }
            let (qlo, qhi) = (lo - grow, hi + grow);
            // The frame-long list, remade when stale or when the block left its box.
            let block = &mut scratch.blocks[bi];
            if block.generation != generation
                || !(block.lo.cmple(qlo).all() && block.hi.cmpge(qhi).all())
            {
                block.generation = generation;
                block.epoch = block.epoch.wrapping_add(1).max(1);
                block.lo = qlo - COLLIDE_SKIN;
                block.hi = qhi + COLLIDE_SKIN;
                bvh.query_aabb(Vec3::from(block.lo), Vec3::from(block.hi), &mut block.list);
                for k in block.list.iter_mut() {
                    *k = swept_collider[*k as usize];
                }
                block.list.extend_from_slice(unbounded);
                // Collider order, as a linear scan would give: the responses do not depend on
                // the tree's layout.
                block.list.sort_unstable();
            }
            let block = &scratch.blocks[bi];
            // This substep's cut of the block's list (colliders whose current box meets the
            // block's), made only if a particle needs it.
            let mut cut_made = false;
            for k in b0..b1 {
                let i = base + k;
                let x_before = x[k];
                if only_moved {
                    if moved[k] == 0 {
                        continue;
                    }
                    moved[k] = 0;
                    if which[k] != u32::MAX {
                        contacts -= 1;
                    }
                }
                gap[k] = f32::INFINITY;
                normal[k] = Vec3A::ZERO;
                which[k] = u32::MAX;
                // The particle's own list, remade when drawn from an older block list or when
                // the particle left its skin: every collider whose frame-swept box is within
                // grow + skin of the anchor (a superset of those within reach of the particle
                // while it stays within the skin of the anchor).
                if scratch.p_epoch[k] != block.epoch
                    || (x[k] - scratch.p_anchor[k]).abs().max_element() > PARTICLE_SKIN
                {
                    scratch.p_epoch[k] = block.epoch;
                    scratch.p_anchor[k] = x[k];
                    let r = grow + PARTICLE_SKIN;
                    let (plo, phi) = (x[k] - r, x[k] + r);
                    let mut n = 0usize;
                    let mut speed = 0.0f32;
                    for &ci in &block.list {
                        let (slo, shi) = swept[ci as usize];
                        if slo.cmple(phi).all() && shi.cmpge(plo).all() {
                            if n == PARTICLE_LIST {
                                n = u8::MAX as usize;
                                speed = f32::INFINITY;
                                break;
                            }
                            scratch.p_list[k][n] = ci;
                            // NaN (which `max` would drop) is infinite already.
                            speed = speed.max(speeds[ci as usize]);
                            n += 1;
                        }
                    }
                    scratch.p_len[k] = n as u8;
                    // A new list: the old record's bound does not cover it.
                    scratch.p_clear[k] = Clearance {
                        x: x[k],
                        clear: f32::NEG_INFINITY,
                        clear_far: f32::NEG_INFINITY,
                        nearest: 0,
                        speed,
                        sweep: 0,
                    };
                }
                let rec = scratch.p_clear[k];
                let reach = model.thickness[i] + margin;
                // The room left to the list's colliders but the nearest, m (negative: none).
                let mut room_far = -1.0f32;
                if rec.sweep == sweep {
                    // Conservative advancement: out of reach of the whole list still.
                    let swept_by = rec.speed * t_now + reach;
                    let room = rec.clear - swept_by;
                    let drift2 = (x[k] - rec.x).length_squared();
                    if room >= 0.0 && drift2 <= room * room {
                        #[cfg(test)]
                        {
                            scratch.clear_skips += 1;
                        }
                        v[k] = (x[k] - xp[k]) * inv_dt;
                        continue;
                    }
                    let far = rec.clear_far - swept_by;
                    if far >= 0.0 && drift2 <= far * far {
                        room_far = far;
                    }
                }
                if scratch.p_len[k] == u8::MAX && !cut_made {
                    cut_made = true;
                    scratch.near.clear();
                    for &ci in &block.list {
                        let (blo, bhi) = bounds[ci as usize];
                        if blo.cmple(qhi).all() && bhi.cmpge(qlo).all() {
                            scratch.near.push(ci);
                        }
                    }
                    std::mem::swap(&mut scratch.near, &mut scratch.block_cut);
                }
                // The candidates are read in place, not gathered into a vector.
                let candidates: &[u32] = if scratch.p_len[k] == u8::MAX {
                    &scratch.block_cut
                } else {
                    &scratch.p_list[k][..scratch.p_len[k] as usize]
                };
                if inv_mass[i] > 0.0 && !candidates.is_empty() {
                    let (t, mu, en) = if only_moved {
                        (model.thickness[i], 0.0, 0.0)
                    } else {
                        (model.thickness[i], model.friction[i], extra[i])
                    };
                    let reach_near = reach + SECOND_PASS_SLACK;
                    let outside = |p: Vec3A, (blo, bhi): (Vec3A, Vec3A), r: f32| {
                        p.cmplt(blo - r).any() || p.cmpgt(bhi + r).any()
                    };
                    // Two passes: a particle squeezed between two colliders (cloth in the crease
                    // between a sphere and the floor) is pushed out of one into the other once.
                    // The first pass notes the colliders within reach + slack of the particle;
                    // if its pushes add up to less than the slack, no other collider can be
                    // within reach for the second pass.
                    //
                    // A particle with its own list also gathers a lower bound on its distance
                    // from each collider of it (to the collider's box, or from the distance
                    // query), for its clearance record.
                    //
                    // A particle whose record leaves only its nearest collider within reach tests
                    // that one alone, as the first pass would meet it (every other candidate is
                    // out of reach before and after its push); should its push carry the
                    // particle beyond the record's room, the first pass goes on from there.
                    scratch.near.clear();
                    let mut touched = 0;
                    let mut moved = 0.0f32;
                    let mut from = 0;
                    // Whether the first pass saw every candidate (else `near` is partial).
                    let mut whole = true;
                    if room_far >= 0.0 {
                        #[cfg(test)]
                        {
                            scratch.clear_singles += 1;
                        }
                        let at = rec.nearest as usize;
                        let ci = candidates[at] as usize;
                        let before = x[k];
                        if !outside(before, bounds[ci], reach) {
                            let hit = collide::resolve_prepared(
                                &mut x[k],
                                xp[k],
                                &prepared[ci],
                                &shapes_end[ci],
                                &shapes_start[ci],
                                t,
                                margin,
                                mu,
                                en,
                            );
                            if let Some(h) = hit {
                                if h.gap < gap[k] {
                                    gap[k] = h.gap;
                                    normal[k] = h.normal;
                                    which[k] = ci as u32;
                                }
                                touched = 1;
                                moved = (x[k] - before).length();
                            }
                        }
                        from = if touched == 0
                            || (x[k] - rec.x).length_squared() <= room_far * room_far
                        {
                            candidates.len()
                        } else {
                            whole = false;
                            at + 1
                        };
                    }
                    // A particle with its own list gathers a lower bound on its distance from
                    // each collider of it (to the collider's box, or from the distance query)
                    // for its clearance record: the two smallest before any push, and the
                    // smallest after one.
                    let record = rec.speed.is_finite() && from == 0;
                    let (mut lb1, mut lb2, mut lb_after) =
                        (f32::INFINITY, f32::INFINITY, f32::INFINITY);
                    let mut at1 = 0usize;
                    let mut hit_at = 0usize;
                    for (at, &ci) in candidates.iter().enumerate().skip(from) {
                        let ci = ci as usize;
                        let b = bounds[ci];
                        let near = !outside(x[k], b, reach_near);
                        if near {
                            scratch.near.push(ci as u32);
                        }
                        let lb = if !near || outside(x[k], b, reach) {
                            if !record {
                                continue;
                            }
                            let out = (b.0 - x[k]).max(x[k] - b.1).max(Vec3A::ZERO);
                            out.length()
                        } else {
                            let before = x[k];
                            let hit = if record {
                                collide::resolve_prepared_or_bound(
                                    &mut x[k],
                                    xp[k],
                                    &prepared[ci],
                                    &shapes_end[ci],
                                    &shapes_start[ci],
                                    t,
                                    margin,
                                    mu,
                                    en,
                                )
                            } else {
                                collide::resolve_prepared(
                                    &mut x[k],
                                    xp[k],
                                    &prepared[ci],
                                    &shapes_end[ci],
                                    &shapes_start[ci],
                                    t,
                                    margin,
                                    mu,
                                    en,
                                )
                                .ok_or(0.0)
                            };
                            match hit {
                                Ok(h) => {
                                    if h.gap < gap[k] {
                                        gap[k] = h.gap;
                                        normal[k] = h.normal;
                                        which[k] = ci as u32;
                                    }
                                    touched += 1;
                                    hit_at = at;
                                    moved += (x[k] - before).length();
                                    continue;
                                }
                                Err(lb) => lb,
                            }
                        };
                        if touched > 0 {
                            lb_after = lb_after.min(lb);
                        } else if lb < lb1 {
                            (lb2, lb1, at1) = (lb1, lb, at);
                        } else {
                            lb2 = lb2.min(lb);
                        }
                    }
                    if record && touched <= 1 {
                        // Bounds taken before the push hold at the pushed position less the
                        // push (`moved`, zero when untouched).
                        let eps = CLEARANCE_EPS + CLEARANCE_EPS_REL * x[k].abs().max_element();
                        let off = rec.speed * t_now - eps;
                        scratch.p_clear[k] = if touched == 0 {
                            Clearance {
                                x: x[k],
                                clear: lb1 + off,
                                clear_far: lb2 + off,
                                nearest: at1 as u32,
                                ..rec
                            }
                        } else {
                            Clearance {
                                x: x[k],
                                clear: f32::NEG_INFINITY,
                                clear_far: (lb1 - moved).min(lb_after) + off,
                                nearest: hit_at as u32,
                                ..rec
                            }
                        };
                        scratch.p_clear[k].sweep = sweep;
                    } else if from == 0 {
                        scratch.p_clear[k].sweep = 0;
                    }
                    // One collider: the per-particle box test (exact: the box grown by the reach
                    // holds every point within reach of the shape, and it is much cheaper than the
                    // distance), then the response (the second pass's path).
                    let mut apply = |ci: usize, xk: &mut Vec3A| -> bool {
                        if outside(*xk, bounds[ci], reach) {
                            return false;
                        }
                        let hit = collide::resolve_prepared(
                            xk,
                            xp[k],
                            &prepared[ci],
                            &shapes_end[ci],
                            &shapes_start[ci],
                            t,
                            margin,
                            mu,
                            en,
                        );
                        match hit {
                            Some(h) => {
                                if h.gap < gap[k] {
                                    gap[k] = h.gap;
                                    normal[k] = h.normal;
                                    which[k] = ci as u32;
                                }
                                true
                            }
                            None => false,
                        }
                    };
                    if touched >= 2 {
                        let use_near = whole && moved <= SECOND_PASS_SLACK;
                        let n = if use_near {
                            scratch.near.len()
                        } else {
                            candidates.len()
                        };
                        #[allow(clippy::needless_range_loop)] // one index, two lists
                        for idx in 0..n {
                            let ci = if use_near {
                                scratch.near[idx]
                            } else {
                                candidates[idx]
                            } as usize;
                            apply(ci, &mut x[k]);
                        }
                        // Still overlapping a collider: squeezed between two (see
                        // `collide::squeeze_out`), against every candidate, as its moves may
                        // exceed the near list's slack.
                        collide::squeeze_out(
                            &mut x[k],
                            candidates.iter().map(|&c| c as usize),
                            bounds,
                            prepared,
                            t,
                            margin,
                        );
                    }
                    if which[k] != u32::MAX {
                        contacts += 1;
                    }
                }
                if only_moved && x[k] != x_before {
                    // Pushed out: the next round's deformation limit must look at it again.
                    moved[k] = 2;
                }
                v[k] = (x[k] - xp[k]) * inv_dt;
            }
        }
        scratch.contacts = contacts;
    };
    if model.chunks() == 1 {
        run(
            0,
            &mut state.x,
            &state.x_prev,
            &mut state.v,
            &mut ws.contact_gap,
            &mut ws.contact_normal,
            &mut ws.contact_collider,
            &mut ws.provot_moved,
            &mut ws.chunks[0],
        );
    } else {
        state
            .x
            .par_chunks_mut(cs)
            .zip(state.x_prev.par_chunks(cs))
            .zip(state.v.par_chunks_mut(cs))
            .zip(ws.contact_gap.par_chunks_mut(cs))
            .zip(ws.contact_normal.par_chunks_mut(cs))
            .zip(ws.contact_collider.par_chunks_mut(cs))
            .zip(ws.provot_moved.par_chunks_mut(cs))
            .zip(ws.chunks.par_iter_mut())
            .enumerate()
            .for_each(|(c, (((((((x, xp), v), g), nrm), w), m), sc))| {
                run(c, x, xp, v, g, nrm, w, m, sc)
            });
    }
}

/// The collide stage as it was before the BVH broad phase: every collider's current box scanned
/// per block, every candidate in the second pass. The reference the fast stage must equal; with
/// `only_moved`, the reference of [`reproject`] (the flagged particles, without friction).
#[cfg(test)]
pub(crate) fn collide_brute_force(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
    only_moved: bool,
) {
    if only_moved {
        with_face_pass(model, state, ws, params, |state, ws| {
            particles_brute_force(model, state, ws, params, dt, true)
        });
    } else {
        faces::collide_faces(model, state, ws, params, true);
        clear_face_moved(ws);
        particles_brute_force(model, state, ws, params, dt, false);
    }
}

/// [`collide_brute_force`]'s particle pass.
#[cfg(test)]
fn particles_brute_force(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
    only_moved: bool,
) {
    let cs = model.chunk_size;
    let margin = contact_margin(params, ws);
    let inv_dt = 1.0 / dt;
    let (shapes_end, shapes_start, bounds) = (&ws.shapes_end, &ws.shapes_start, &ws.bounds);
    let prepared = &ws.prepared_end;
    let (inv_mass, extra) = (&state.inv_mass, &ws.extra_normal);
    let grow = model.max_thickness + margin;
    #[allow(clippy::too_many_arguments)]
    let run = |c: usize,
               x: &mut [Vec3A],
               xp: &[Vec3A],
               v: &mut [Vec3A],
               gap: &mut [f32],
               normal: &mut [Vec3A],
               which: &mut [u32],
               moved: &mut [u8],
               scratch: &mut ChunkScratch| {
        let base = c * cs;
        let mut contacts = if only_moved { scratch.contacts } else { 0 };
        // The broad phase runs per block of BLOCK consecutive particles: garments are laid out
        // row by row, so a block is a short strip whose box meets only the nearby body
        // colliders (a whole 1024-particle chunk of a skirt meets the whole lower body).
        const BLOCK: usize = 32;
        for b0 in (0..x.len()).step_by(BLOCK) {
            let b1 = (b0 + BLOCK).min(x.len());
            let mut lo = Vec3A::splat(f32::INFINITY);
            let mut hi = Vec3A::splat(f32::NEG_INFINITY);
            for p in x[b0..b1].iter() {
                lo = lo.min(*p);
                hi = hi.max(*p);
            }
            collide::broad_phase(bounds, lo, hi, grow, &mut scratch.candidates);
            for k in b0..b1 {
                let i = base + k;
                let x_before = x[k];
                if only_moved {
                    if moved[k] == 0 {
                        continue;
                    }
                    moved[k] = 0;
                    if which[k] != u32::MAX {
                        contacts -= 1;
                    }
                }
                gap[k] = f32::INFINITY;
                normal[k] = Vec3A::ZERO;
                which[k] = u32::MAX;
                if inv_mass[i] > 0.0 && !scratch.candidates.is_empty() {
                    let (t, mu, en) = if only_moved {
                        (model.thickness[i], 0.0, 0.0)
                    } else {
                        (model.thickness[i], model.friction[i], extra[i])
                    };
                    // Two passes: a particle squeezed between two colliders (cloth in the crease
                    // between a sphere and the floor) is pushed out of one into the other once.
                    let mut twice = false;
                    for pass in 0..2 {
                        twice = pass == 1;
                        let mut touched = 0;
                        for &ci in &scratch.candidates {
                            let ci = ci as usize;
                            // Per-particle box test: exact (the box grown by the reach holds every point
                            // within reach of the shape) and much cheaper than the distance query.
                            let (blo, bhi) = bounds[ci];
                            let reach = t + margin;
                            if x[k].cmplt(blo - reach).any() || x[k].cmpgt(bhi + reach).any() {
                                continue;
                            }
                            let hit = collide::resolve_prepared(
                                &mut x[k],
                                xp[k],
                                &prepared[ci],
                                &shapes_end[ci],
                                &shapes_start[ci],
                                t,
                                margin,
                                mu,
                                en,
                            );
                            if let Some(h) = hit {
                                touched += 1;
                                if h.gap < gap[k] {
                                    gap[k] = h.gap;
                                    normal[k] = h.normal;
                                    which[k] = ci as u32;
                                }
                            }
                        }
                        if touched < 2 {
                            break;
                        }
                    }
                    if twice {
                        collide::squeeze_out(
                            &mut x[k],
                            scratch.candidates.iter().map(|&c| c as usize),
                            bounds,
                            prepared,
                            t,
                            margin,
                        );
                    }
                    if which[k] != u32::MAX {
                        contacts += 1;
                    }
                }
                if only_moved && x[k] != x_before {
                    // Pushed out: the next round's deformation limit must look at it again.
                    moved[k] = 2;
                }
                v[k] = (x[k] - xp[k]) * inv_dt;
            }
        }
        scratch.contacts = contacts;
    };
    if model.chunks() == 1 {
        run(
            0,
            &mut state.x,
            &state.x_prev,
            &mut state.v,
            &mut ws.contact_gap,
            &mut ws.contact_normal,
            &mut ws.contact_collider,
            &mut ws.provot_moved,
            &mut ws.chunks[0],
        );
    } else {
        state
            .x
            .par_chunks_mut(cs)
            .zip(state.x_prev.par_chunks(cs))
            .zip(state.v.par_chunks_mut(cs))
            .zip(ws.contact_gap.par_chunks_mut(cs))
            .zip(ws.contact_normal.par_chunks_mut(cs))
            .zip(ws.contact_collider.par_chunks_mut(cs))
            .zip(ws.provot_moved.par_chunks_mut(cs))
            .zip(ws.chunks.par_iter_mut())
            .enumerate()
            .for_each(|(c, (((((((x, xp), v), g), nrm), w), m), sc))| {
                run(c, x, xp, v, g, nrm, w, m, sc)
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloth::scenes::{build_scene, SceneOptions};
    use crate::cloth::step_frame;

    /// Capsules sweeping fast through a falling cloth (and the scene's sphere and floor): the
    /// BVH broad phase with its frame-long block and particle lists must give bit-identical
    /// particles to scanning every collider, at every frame.
    #[test]
    fn bvh_broad_phase_equals_brute_force() {
        bvh_equals_brute_force_with_rounds(0);
    }

    /// The same with contact rounds: [`reproject`] against its reference (the flagged particles
    /// of a linear scan, frictionless).
    #[test]
    fn reprojection_rounds_equal_brute_force() {
        bvh_equals_brute_force_with_rounds(3);
    }

    fn bvh_equals_brute_force_with_rounds(rounds: u32) {
        let opts = SceneOptions {
            n: 40,
            ..SceneOptions::default()
        };
        let mut a = build_scene("drop", &opts).unwrap();
        let mut b = build_scene("drop", &opts).unwrap();
        b.workspace.brute_force_collide = true;
        a.params.contact_rounds = rounds;
        b.params.contact_rounds = rounds;
        let capsules = |f: u32| -> Vec<Shape> {
            (0..12)
                .map(|k| {
                    let ph = 0.25 * f as f32 + k as f32;
                    let c = crate::math::Vec3::new(
                        0.4 * ph.sin(),
                        0.4 + 0.05 * k as f32,
                        0.4 * ph.cos(),
                    );
                    Shape::capsule(
                        c,
                        0.06,
                        c + crate::math::Vec3::new(0.2, 0.1 * ph.cos(), 0.0),
                        0.03,
                    )
                })
                .collect()
        };
        for s in [&mut a, &mut b] {
            for sh in capsules(0) {
                s.colliders.push(Collider::fixed(sh));
            }
        }
        for f in 1..40 {
            for s in [&mut a, &mut b] {
                let base = s.colliders.len() - 12;
                for (k, sh) in capsules(f).into_iter().enumerate() {
                    s.colliders[base + k].move_to(sh);
                }
                step_frame(
                    &s.model,
                    &mut s.state,
                    &mut s.workspace,
                    &s.colliders,
                    &s.params,
                );
            }
            assert_eq!(a.state.x, b.state.x, "frame {f}");
            assert_eq!(a.workspace.contact_collider, b.workspace.contact_collider);
        }
        assert!(
            a.workspace
                .contact_collider
                .iter()
                .any(|&c| c as usize >= 2),
            "capsules touched the cloth"
        );
        // The clearance records were put to use (and so were tested bit for bit here).
        let skips: u64 = a.workspace.chunks.iter().map(|c| c.clear_skips).sum();
        let visits = 39 * a.params.substeps as u64 * a.model.len() as u64;
        assert!(skips * 4 > visits, "{skips} of {visits} visits skipped");
        let singles: u64 = a.workspace.chunks.iter().map(|c| c.clear_singles).sum();
        assert!(
            singles * 50 > visits,
            "{singles} of {visits} visits tested one collider"
        );
    }
}
