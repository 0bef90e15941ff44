//! Stage `skin`: cloth against the skinned body's triangles (the body as drawn), beside the
//! proxy colliders. Run after `pins` and before the deformation limit, on the substeps
//! `SimParams::skin_contact` selects, against the surface in `ClothWorkspace::skin`.
//!
//! The proxies (spheres and tapered capsules fitted to bound the skin) carry most of the contact:
//! they are smooth, cheap and their friction is what holds a garment on a moving limb. But they
//! bound the skin only to within a few millimetres, and where the skin stands outside them (bulky
//! thighs, hair, armour plates, a shoulder pad) cloth resting on them is inside the body people
//! see. This stage finds those particles with a closest-point query on the skin at the substep's
//! instant (`cloth::skin`: the vertices interpolated between the previous and the current frame,
//! the hierarchy refitted, the side from the angle-weighted pseudo-normal) and projects each
//! particle that is inside, or nearer than its thickness from outside, onto the surface plus
//! its thickness, with the proxies' position-level Coulomb friction against the skin's own
//! motion (`cloth::collide`'s `respond`: `d_T ← max(1 − μ δ/|d_T|, 0) d_T`) and the velocity
//! kept, less any part into the skin (the push is a correction of position, not a motion). A
//! particle deeper than `SimParams::skin_contact_step` comes out by that much per pass, over the
//! next substeps. The query reaches `SimParams::skin_contact_depth` into the body: deeper cloth
//! is left to the proxies. Both lengths are for a body 1–2 m tall and scale with the body the
//! scene dressed (`SimParams::body_scale`).
//!
//! **Where in the substep.** The push runs *before* the deformation limit, so that the limit
//! (and the contact rounds after the proxies' pass) takes up the stretch it makes in the same
//! substep, as it does for the integrator's own motion: the skin is a soft boundary the cloth
//! is brought back to on every substep, the proxies the hard one that the substep ends outside
//! of. Run last instead (after the proxies' pass and in each contact round's re-projection, as
//! first built), the push and the limit fought and the push won: on 4 of 16 substeps the
//! ninja's default-resolution roundhouse kick ended a frame with a hakama spring at 112.3 % of
//! rest (issue 5 allows 112 %) and the DQS kata at 119.6 %. Run first, on every substep with
//! 2 mm per pass, every built-in clip at the default resolution stays within 112 % with LBS
//! and DQS (`drape check --rig ninja --skin-contact 16`), and the corpus soldier's frames with
//! cloth more than 1 cm inside the skin fell from 276 of 702 (proxies alone) to 37 (67 with the
//! old placement), at spacing × 1.35. Every pass of the limit after the push (the constrain
//! stage's, each contact round's, the last word) is held on the plane each particle was pushed
//! against ([`keep_skin_pushes`], [`hold_on_skin_plane`]): it takes up the stretch the push
//! makes by moving the particle's neighbours, or along the plane, but never moves a pushed
//! particle back deeper (when only the last word was held, cloth stretched round a bending body
//! rested inside it: [`keep_skin_pushes`]); with that and the hands left out of the surface
//! (`crate::scene`'s `body_surface`), the coarse kata passes in both models; the cc0 robot's
//! coarse walk (tests/bones.rs), which ended a frame 1.4 mm inside a proxy (cloth pinched
//! between forearm and shin), passes since the collide stage squeezes such cloth out of both
//! (`cloth::collide::squeeze_out`), and the dressed scene runs the stage on every substep by
//! default (`crate::scene::SceneConfig`, docs/CHECK.md).
//!
//! **Folds.** Where the skin folds into itself (an armpit with the arm down, the groin in a high
//! kick, the back of a bent knee), linear blend skinning pushes one surface through the other:
//! the nearest surface of a point in the fold is not the way out. Before a particle inside is
//! moved, the point it would be moved to is tested against the skin again (its nearest surface
//! within 1.5 × its thickness); if that point is inside too, the particle is left where it is and
//! counted as a fold (`SkinStats::folds`), for the proxies and the check's rule (docs/CHECK.md:
//! cloth pinched in a fold counts as inside only as deep as the fold is thick around it).

use rayon::prelude::*;

use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::skin::{SkinSurface, REGIONS};
use crate::cloth::state::ClothState;
use crate::cloth::workspace::ClothWorkspace;
use crate::math::Vec3A;

/// Particles per parallel task (a fixed partition: results do not depend on the thread count,
/// and each particle's result depends on its own data only).
const CHUNK: usize = 256;

/// What the skin-contact stage did, summed over its passes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SkinStats {
    /// Passes run (a substep's collision pass and its contact rounds' passes).
    pub passes: u64,
    /// Particles queried.
    pub visits: u64,
    /// Particles moved out to their thickness from outside (nearer than their thickness).
    pub near: u64,
    /// Particles moved out from inside the skin.
    pub inside: u64,
    /// Particles inside left where they were: the way out along the nearest surface led into
    /// the skin again (a fold).
    pub folds: u64,
    /// Particles kept a thickness off an open sheet ([`sheet_contact`]).
    pub sheets: u64,
    /// Wall seconds in the stage (surface preparation included).
    pub secs: f64,
}

/// A particle's clearance record: at its last query it was at `x`, and for each region of the
/// skin ([`crate::cloth::skin::REGIONS`]) at least `base[r] − T_r` (m) beyond its thickness
/// outside that region's triangles, `T_r` the region's travel then
/// ([`crate::cloth::skin::SkinSurface::region_travel`]): the clearance found (out of the
/// query's reach counts as the reach) or, where larger, the distance to the region's box. While
/// its own move since stays below `base[r] − T_r` for every region with the region's travel at
/// the time, it cannot be in contact, and is not queried (conservative advancement, as the
/// proxies' records in `stages/collide.rs`).
///
/// One bound for the whole skin, its largest travel, expired every record in two or three
/// substeps of a kick (the kicking foot moves up to 9 mm a substep), and 97 % of the queries
/// were of particles whose own move had not used their room. With a bound per region, a
/// particle on the back waits for the back's own motion: the ninja's roundhouse kick at the
/// default resolution queries 9,016 particles a frame instead of 14,743 (XPBD; 9,691 instead
/// of 15,219 with the mass-spring model). A particle that cannot be in contact is not pushed
/// whether or not it is queried, so the pushes are the same, but for the two cases no record
/// covers: cloth deeper than the query's reach, and a side that flips without the distance
/// passing through zero (at an open edge such as a wrist, and in folds), which are now found
/// at other substeps.
///
/// It also keeps the contact plane of the pass's push, if the last pass that visited the particle
/// pushed it (a particle pushed is visited again by the next pass, so the plane is the latest
/// pass's): the outward normal `normal` and the offset `offset` = `normal · (point on the skin)`,
/// NaN for none. The deformation limit's last word holds pushed particles on its side
/// ([`hold_on_skin_plane`]).
#[derive(Clone, Copy, Debug)]
pub struct Clearance {
    x: Vec3A,
    base: [f64; REGIONS],
    normal: Vec3A,
    offset: f32,
    /// The triangle the last query found (`u32::MAX`: none), where the next one starts
    /// ([`SkinSurface::closest_near`]).
    tri: u32,
}

impl Default for Clearance {
    fn default() -> Self {
        Clearance {
            x: Vec3A::ZERO,
            base: [f64::NEG_INFINITY; REGIONS],
            normal: Vec3A::ZERO,
            offset: f32::NAN,
            tri: u32::MAX,
        }
    }
}

impl Clearance {
    /// A record of no contact: `x` was at least `clear` beyond its thickness `th` off the skin
    /// `surf` (prepared at the query's instant), and at least its distance to each region's box.
    fn clear_at(x: Vec3A, clear: f32, th: f32, surf: &SkinSurface) -> Self {
        let boxes = surf.region_distances(x);
        let travel = surf.region_travel();
        Clearance {
            x,
            base: std::array::from_fn(|r| (boxes[r] - th).max(clear) as f64 + travel[r]),
            ..Default::default()
        }
    }

    /// How far the particle, now at `x`, still is from contact at least (m; ≤ 0: query it).
    #[inline]
    fn room(&self, x: Vec3A, travel: &[f64; REGIONS]) -> f64 {
        let mut room = f64::INFINITY;
        for (b, t) in self.base.iter().zip(travel) {
            let r = b - t;
            if r < room {
                room = r;
            }
        }
        room - (x - self.x).length() as f64
    }

    /// The contact plane of this substep's push (see the type's docs), if any.
    fn plane(&self) -> Option<(Vec3A, f32)> {
        self.offset
            .is_finite()
            .then_some((self.normal, self.offset))
    }
}

/// Whether particle `i` has a skin contact plane in `planes` (`ClothWorkspace::skin_clear` when
/// the stage ran in this substep, `skin_planes_live`; else `None`): the stage pushed it in this
/// substep.
pub(crate) fn has_skin_plane(planes: Option<&[Clearance]>, i: usize) -> bool {
    planes
        .and_then(|p| p.get(i))
        .is_some_and(|r| r.plane().is_some())
}

/// The last word's bound on the skin's contact plane: particle `i`, at `before` when the last
/// word's limit pass began and moved by it to `x`, is held at least `min(h_before, thickness / 2)`
/// above the plane the skin stage pushed it to in this substep (`h` the height above the plane),
/// so that the limit cannot undo the push: it may use half the margin the push left, as on the
/// proxies' planes, and never take a particle deeper than it was. Nothing for a particle without
/// a plane in `planes` (see [`has_skin_plane`]).
pub(crate) fn hold_on_skin_plane(
    planes: Option<&[Clearance]>,
    i: usize,
    before: Vec3A,
    x: &mut Vec3A,
    thickness: f32,
) {
    let Some((n, d)) = planes.and_then(|p| p.get(i)).and_then(|r| r.plane()) else {
        return;
    };
    let h_before = n.dot(before) - d;
    let floor = h_before.min(0.5 * thickness);
    let h = n.dot(*x) - d;
    if h < floor {
        *x += n * (floor - h);
    }
}

/// Whether the skin contact runs in the current substep: a surface is
/// set, `SimParams::skin_contact` is on, and this substep is one of the `k` evenly spaced ones
/// that end on the frame's last substep (`s + 1` a multiple of `n / k`, rounded: `(s + 1) k mod
/// n < k`).
pub fn active(ws: &ClothWorkspace, params: &SimParams) -> bool {
    let n = params.substeps.max(1);
    let k = params.skin_contact.min(n);
    if k == 0 || (ws.skin.is_empty() && ws.sheets.is_empty()) || !ws.collide_t.is_finite() {
        return false;
    }
    let s1 = (ws.collide_t * n as f32).round().max(0.0) as u32;
    s1 >= 1 && (s1 * k) % n < k
}

/// Stage `skin` of substep order (after `pins`, before the deformation limit): the stage, on
/// the substeps [`active`] selects.
pub fn skin(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
) {
    let on = active(ws, params);
    // The contact planes of an earlier substep's pass are stale (the skin has moved since).
    ws.skin_planes_live = on;
    if on {
        skin_contact(model, state, ws, params, params.dt());
        let planes = Some(ws.skin_clear.as_slice());
        ws.skin_pushed.clear();
        ws.skin_pushed.extend(
            (0..state.x.len())
                .filter(|&i| has_skin_plane(planes, i))
                .map(|i| (i as u32, state.x[i])),
        );
    } else {
        ws.skin_pushed.clear();
    }
}

/// After a pass of the deformation limit (the constrain stage's, each contact round's): every
/// particle the skin stage pushed in this substep is held on its contact plane no deeper than
/// the stage left it, or than half its thickness above the plane ([`hold_on_skin_plane`]), and
/// reported to the limit's scratch as moved, so the next pass visits its springs.
///
/// Why: the limit's passes run after the skin stage and could undo its push. Where cloth is
/// stretched round the body (a waistband's first free rows when the body bends, pinned at both
/// ends), the 2 mm each pass moves it out was pulled straight back in, every substep, and the
/// cloth rested inside the skin as the chord its springs wanted: the KayKit Rogue's hakama 10.7
/// mm inside its back under its sash in `Spellcast_Raise`, 23 of 126 frames deeper than 1 cm.
/// Held, it ends outside, its springs past the limit instead where the body leaves no other
/// way (`the_strain_limit_does_not_pull_cloth_into_the_skin`, tests/skin_contact.rs). The
/// last word was already held so.
pub(crate) fn keep_skin_pushes(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
) {
    if !ws.skin_planes_live {
        return;
    }
    let planes = Some(ws.skin_clear.as_slice());
    for &(i, before) in &ws.skin_pushed {
        let i = i as usize;
        let Some(x) = state.x.get_mut(i) else {
            continue;
        };
        let was = *x;
        hold_on_skin_plane(planes, i, before, x, model.thickness[i]);
        if *x != was {
            ws.provot.moved_by(model, i);
        }
    }
}

/// The stage (see the module docs), on every particle.
pub fn skin_contact(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    let clock = std::time::Instant::now();
    ws.skin.prepare(ws.collide_t);
    // Both lengths are for a body 1-2 m tall (`SimParams::body_scale`).
    let scale = if params.body_scale.is_finite() && params.body_scale > 0.0 {
        params.body_scale
    } else {
        1.0
    };
    let reach_in = params.skin_contact_depth.max(0.0) * scale;
    let step = params.skin_contact_step.max(1e-6) * scale;
    let steps = Steps {
        n_sub: params.substeps.max(1) as f32,
        inv_dt: 1.0 / dt,
        inv_frame: 1.0 / params.frame_dt.max(1e-6),
        dt,
    };
    // The sheets first: where cloth is pinched between a sheet and the skin (a rigid cape close
    // to a bending back), the skin has the last word, and the cloth ends outside the body.
    let sheets = sheet_contact(model, state, ws, &steps, reach_in);
    let travel = ws.skin.region_travel();
    if ws.skin_clear.len() != state.x.len() {
        ws.skin_clear.clear();
        ws.skin_clear.resize(state.x.len(), Clearance::default());
    }
    let surf = &ws.skin;
    let (inv_mass, thickness, friction) = (&state.inv_mass, &model.thickness, &model.friction);
    let extra = &ws.extra_normal;
    let counts = state
        .x
        .par_chunks_mut(CHUNK)
        .zip(state.x_prev.par_chunks_mut(CHUNK))
        .zip(state.v.par_chunks_mut(CHUNK))
        .zip(ws.skin_clear.par_chunks_mut(CHUNK))
        .enumerate()
        .map(|(c, (((x, xp), v), rec))| {
            let mut n = [0u64; 4];
            for k in 0..x.len() {
                let i = c * CHUNK + k;
                if inv_mass[i] <= 0.0 {
                    continue;
                }
                if rec[k].room(x[k], travel) > 0.0 {
                    continue;
                }
                n[0] += 1;
                let th = thickness[i];
                let reach = reach_in.max(th);
                let Some(hit) = surf.closest_near(x[k], reach, rec[k].tri) else {
                    rec[k] = Clearance::clear_at(x[k], reach - th, th, surf);
                    continue;
                };
                let signed = if hit.inside {
                    -hit.distance
                } else {
                    hit.distance
                };
                if signed >= th {
                    rec[k] = Clearance::clear_at(x[k], signed - th, th, surf);
                    rec[k].tri = hit.triangle;
                    continue;
                }
                rec[k] = Clearance {
                    tri: hit.triangle,
                    ..Default::default()
                };
                let target = hit.point + hit.normal * th;
                if hit.inside {
                    // A fold: the way out leads into the skin again.
                    if surf.closest(target, 1.5 * th).is_some_and(|h| h.inside) {
                        n[3] += 1;
                        continue;
                    }
                    n[2] += 1;
                } else {
                    n[1] += 1;
                }
                let nrm = hit.normal;
                let depth = (th - signed).min(step);
                let push = if th - signed > step {
                    nrm * step
                } else {
                    target - x[k]
                };
                rec[k].normal = nrm;
                rec[k].offset = nrm.dot(hit.point);
                let contact = Contact {
                    push,
                    normal: nrm,
                    depth: depth + extra[i],
                    motion: surf.frame_motion(hit.triangle, hit.bary),
                    friction: friction[i],
                };
                respond(&contact, &mut x[k], &mut xp[k], &mut v[k], &steps);
            }
            n
        })
        .reduce(|| [0u64; 4], |a, b| std::array::from_fn(|j| a[j] + b[j]));
    let st = &mut ws.skin_stats;
    st.sheets += sheets;
    st.passes += 1;
    st.visits += counts[0];
    st.near += counts[1];
    st.inside += counts[2];
    st.folds += counts[3];
    st.secs += clock.elapsed().as_secs_f64();
}

/// The substep's clock, for [`respond`].
struct Steps {
    n_sub: f32,
    inv_dt: f32,
    inv_frame: f32,
    dt: f32,
}

/// One particle's push against a moving surface.
struct Contact {
    /// The correction of position.
    push: Vec3A,
    /// The surface's unit normal towards the particle's side.
    normal: Vec3A,
    /// How far the push went into the contact (plus any wet adhesion's extra normal force), for
    /// the friction's bound.
    depth: f32,
    /// The surface point's motion over the frame.
    motion: Vec3A,
    friction: f32,
}

/// Moves a particle by `c.push` with Coulomb friction against the surface's own motion
/// (`d_T ← max(1 − μ δ/|d_T|, 0) d_T`, as the proxies' `respond` in `cloth::collide`), and sets
/// its velocity to the substep's own, less any part into the surface relative to its motion.
fn respond(c: &Contact, x: &mut Vec3A, xp: &mut Vec3A, v: &mut Vec3A, s: &Steps) {
    *x += c.push;
    let nrm = c.normal;
    if c.friction > 0.0 {
        let d_surface = c.motion / s.n_sub;
        let d_rel = (*x - *xp) - d_surface;
        let d_t = d_rel - nrm * d_rel.dot(nrm);
        let lt = d_t.length();
        if lt > 0.0 {
            let keep = (1.0 - c.friction * c.depth / lt).max(0.0);
            *x -= d_t * (1.0 - keep);
        }
    }
    // The projection is a correction of position, not a motion: the velocity is the substep's
    // own (friction included), less any part into the surface relative to the surface's motion.
    // (Deriving it from the corrected position, as the per-substep proxy contact may, would
    // turn a once-per-frame push of a few centimetres into tens of m/s outwards.) `x_prev` is
    // set to match, for the integrators that read the velocity from it.
    let mut vel = (*x - c.push - *xp) * s.inv_dt;
    let v_rel_n = (vel - c.motion * s.inv_frame).dot(nrm);
    if v_rel_n < 0.0 {
        vel -= nrm * v_rel_n;
    }
    *v = vel;
    *xp = *x - vel * s.dt;
}

/// Cloth against the body's open sheets (`ClothWorkspace::sheets`: KayKit's capes, one curved
/// plane each). A sheet has no inside, so the skin's rule (out of the side of the nearest
/// surface) cannot hold cloth off it, and the proxies do not fit it (`crate::body::proxies`:
/// fitted as volume, a cape drew spheres 9 cm round its edges that the hakama caught on). Here
/// a particle nearer to a sheet than its thickness, or past it, is moved to its thickness on the
/// side it was on at the start of the substep (`x_prev`, against the sheet's face normal; where
/// the nearest point is on the sheet's open edge, away from that edge), with the same friction
/// and velocity rule as the skin. Every particle is visited: the sheets are a few hundred
/// triangles, and a particle far from them costs one bounding-box test.
///
/// Where the sheet's nearest point lies inside the skin (within `reach`), the sheet is not met:
/// a rigid cape that a back bends into leaves cloth between the two no room, and held on the
/// sheet's near side the cloth stayed inside the body (the KayKit Rogue's sash 12 mm inside its
/// back in `Spellcast_Raise`, at the check's coarse spacing); left to the skin, it comes out of
/// the body, over the sheet there, where the sheet itself is hidden by the skin
/// (`the_rogue_s_sash_is_not_held_inside_its_back_by_its_cape`, tests/bones.rs).
fn sheet_contact(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    steps: &Steps,
    reach: f32,
) -> u64 {
    if ws.sheets.is_empty() {
        return 0;
    }
    ws.sheets.prepare(ws.collide_t);
    let (surf, skin) = (&ws.sheets, &ws.skin);
    let (inv_mass, thickness, friction) = (&state.inv_mass, &model.thickness, &model.friction);
    state
        .x
        .par_chunks_mut(CHUNK)
        .zip(state.x_prev.par_chunks_mut(CHUNK))
        .zip(state.v.par_chunks_mut(CHUNK))
        .enumerate()
        .map(|(c, ((x, xp), v))| {
            let mut n = 0u64;
            for k in 0..x.len() {
                let i = c * CHUNK + k;
                if inv_mass[i] <= 0.0 {
                    continue;
                }
                let th = thickness[i];
                // As far as the substep moved it, to catch it where it crossed the sheet.
                let Some(hit) = surf.closest(x[k], th + (x[k] - xp[k]).length()) else {
                    continue;
                };
                let face = surf.face_normal(hit.triangle as usize);
                let on_face = hit.bary.iter().all(|&b| b > 1e-4);
                let away = x[k] - hit.point;
                let nrm = if on_face || away.length_squared() < 1e-12 {
                    // The side it came from.
                    let side = (xp[k] - hit.point).dot(face);
                    if side >= 0.0 {
                        face
                    } else {
                        -face
                    }
                } else {
                    away.normalize()
                };
                if nrm == Vec3A::ZERO {
                    continue;
                }
                let gap = (x[k] - hit.point).dot(nrm);
                if gap >= th {
                    continue;
                }
                // Where the sheet has gone into the body (a rigid cape against a back that
                // bends back into it), cloth between the two has no room: the skin keeps it out
                // of both, and it comes out on the sheet's outer side.
                if !skin.is_empty() && skin.closest(hit.point, reach).is_some_and(|h| h.inside) {
                    continue;
                }
                n += 1;
                let contact = Contact {
                    push: nrm * (th - gap),
                    normal: nrm,
                    depth: th - gap,
                    motion: surf.frame_motion(hit.triangle, hit.bary),
                    friction: friction[i],
                };
                respond(&contact, &mut x[k], &mut xp[k], &mut v[k], steps);
            }
            n
        })
        .sum()
}
