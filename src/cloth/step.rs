//! The substep loop. One frame = `substeps` fixed substeps; each substep runs the stages below
//! in this order, one named function each (ARCHITECTURE.md, style 3):
//!
//! ```text
//! forces → adhere → integrate → pins → constrain → self_collide → collide (+ friction, velocity)
//!   → [constrain_tracked → reproject] × SimParams::contact_rounds → last word
//! ```
//!
//! `forces` accumulates springs and wind (gravity is added by `integrate`); `adhere` is the wet
//! stage's place (adhesion forces and the extra normal load friction sees); `pins` places pinned
//! particles on their interpolated targets; `constrain` is Provot's limit (with the tethers from
//! the pins, `SimParams::tether_slack`); `self_collide` pushes
//! apart particles of one or several garments; `collide` runs last so that no particle ends a
//! substep inside a collider, applies friction, and derives the velocity. The contact rounds
//! repeat the last two for the particles the deformation limit moves (`contact_rounds`), and a
//! bounded limit pass ends the substep after them (`last_word`).
//!
//! Building the workspace allocates; stepping does not.

use rayon::prelude::*;

use crate::body::ProxyBvh;
use crate::math::{Vec3, Vec3A};

use super::collide::{self, Collider, Shape};
use super::constraints;
use super::forces;
use super::hash::SpatialHash;
use super::model::ClothModel;
use super::params::{Integrator, SimParams};
use super::state::ClothState;
use super::wet;

/// How much of its authored stiffness each garment keeps at the current substep length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StabilityReport {
    /// Per garment: the factor (≤ 1) applied to its springs' k and k_d. 1 means as authored;
    /// below 1 the time step could not carry the stiffness and it was clamped (the Provot limit
    /// still bounds the stretch, so the cloth stays nearly inextensible).
    pub garment_scale: Vec<f32>,
    /// Substep length the scales were computed for, s.
    pub dt: f32,
}

impl StabilityReport {
    /// True if any garment's springs were softened.
    pub fn clamped(&self) -> bool {
        self.garment_scale.iter().any(|&s| s < 1.0)
    }
}

/// Counters from the last substep of a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepStats {
    /// Particles in contact with (or within the contact margin of) a collider.
    pub contacts: u32,
    /// Particle pairs pushed apart by self/garment–garment collision (counted from both sides).
    pub self_pairs: u32,
    /// Particles whose substep displacement hit the speed limit (should be 0).
    pub speed_limited: u32,
}

/// The colliders that may come within reach of one block of particles during the current frame:
/// every collider whose box swept over the frame overlaps `lo..hi`, the block's box when the list
/// was made grown by the contact reach plus [`COLLIDE_SKIN`]. Valid while the block's box grown
/// by the reach stays inside `lo..hi` and the frame (`generation`) is the same.
#[derive(Clone, Debug, Default)]
struct BlockList {
    generation: u64,
    /// Bumped at every remake: particle lists drawn from an older list are stale.
    epoch: u32,
    lo: Vec3A,
    hi: Vec3A,
    list: Vec<u32>,
}

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

/// Longest per-particle collider list (count, range 4..64, default 32: on the dressed ninja, 8
/// sent a quarter of the particle visits to their block's longer list and 16 a tenth, and those
/// visits cannot use a clearance record); a particle near more colliders tests its block's list.
const PARTICLE_LIST: usize = 32;

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

/// How far a particle was from every collider of its list when last tested, so that later
/// substeps can skip it while it provably stays out of reach (conservative advancement): the
/// distance to a collider changes no faster than the particle moves plus the collider's
/// [`Collider::sweep_speed`] × the elapsed frame fraction. Most particles are out of reach of
/// every collider most of the time (on the dressed ninja, 3 % of the particle–substeps touch a
/// collider while 3.5 candidates per particle pass the box test), so most visits end here.
/// Read and written together, hence one record per particle.
#[derive(Clone, Copy, Debug, Default)]
struct Clearance {
    /// Where the particle was, m.
    x: Vec3A,
    /// The lower bound on its distance from every collider of its list then, less the rounding
    /// tolerance, plus `speed` × the frame fraction then, m: at frame fraction t (same sweep),
    /// the particle is at least `clear − speed·t − |x_now − x|` from all of them.
    clear: f32,
    /// The same bound over every collider of its list but the `nearest`th, m (same offset): a
    /// particle resting on one collider tests only that one while this holds.
    clear_far: f32,
    /// Position in the particle's list of the collider left out of `clear_far`.
    nearest: u32,
    /// The largest [`Collider::sweep_speed`] over its list, m per frame (set when the list is
    /// made; infinite for a list that is its block's).
    speed: f32,
    /// The workspace's `collide_sweep` when recorded; 0 = no record.
    sweep: u32,
}

#[derive(Clone, Debug, Default)]
struct ChunkScratch {
    /// The brute-force reference's per-block list (tests only).
    #[cfg(test)]
    candidates: Vec<u32>,
    /// Per block of [`COLLIDE_BLOCK`] particles: its frame-long collider list.
    blocks: Vec<BlockList>,
    /// Colliders near one particle in the first collision pass.
    near: Vec<u32>,
    /// This substep's cut of the current block's list.
    block_cut: Vec<u32>,
    /// Per particle of the chunk: its collider list (`p_len` entries of `p_list`, or the block's
    /// list when `p_len == u8::MAX`), where it was made, and the block epoch it was drawn from.
    p_list: Vec<[u32; PARTICLE_LIST]>,
    p_len: Vec<u8>,
    p_anchor: Vec<Vec3A>,
    p_epoch: Vec<u32>,
    /// Per particle of the chunk: its clearance record.
    p_clear: Vec<Clearance>,
    /// The self-collision pairs this chunk's particles found at the last list build (from
    /// their forward half-shells: each pair once over all chunks).
    pairs: Vec<(u32, u32)>,
    /// The pairs this chunk's fast particles found afresh this substep (see
    /// [`find_fresh_pairs`]).
    fresh: Vec<(u32, u32)>,
    /// Rebuild test: the two largest squared displacements of this chunk's particles relative
    /// to the common drift, the box of their displacements, and how many moved more than half
    /// the skin.
    moves: (f32, f32, Vec3A, Vec3A, usize),
    contacts: u32,
    /// Tests only: particle visits of the collide stage that the clearance record skipped.
    #[cfg(test)]
    clear_skips: u64,
    /// Tests only: visits that tested only the particle's nearest collider.
    #[cfg(test)]
    clear_singles: u64,
    self_pairs: u32,
    limited: u32,
}

/// Scratch space of the step: everything that is neither model nor state. Also exposes the
/// per-particle contact records of the last collision pass (gap h and collider normal), which
/// the wet stage reads.
#[derive(Clone, Debug)]
pub struct ClothWorkspace {
    /// Force accumulator, N.
    pub f: Vec<Vec3A>,
    /// Stiffness and dashpot in effect (authored × stability scale) of the springs of
    /// `model.general` (the garments that are not grid stencils).
    k_eff: Vec<f32>,
    kd_eff: Vec<f32>,
    /// The fast spring kernel's scratch.
    springs: forces::SpringScratch,
    /// (dt, safety) the effective springs were computed for.
    prepared_for: Option<(u32, u32)>,
    pub stability: StabilityReport,
    pub hash: SpatialHash,
    /// Self-collision corrections, m.
    dx: Vec<Vec3A>,
    /// Self-collision neighbour lists: particle i has the neighbours
    /// `nbr[nbr_start[i]..nbr_start[i + 1]]` (ascending), each with its pair's target distance
    /// in `nbr_target`, m. Empty before the first build.
    nbr_start: Vec<u32>,
    nbr: Vec<u32>,
    nbr_target: Vec<f32>,
    /// Per particle: the smallest `distance − target` over its list at the build, m (infinite
    /// for an empty list). No pair of its list can be in contact while this exceeds the most
    /// the pair can have closed in since (see [`self_collide`]).
    nbr_slack: Vec<f32>,
    /// Per particle: its squared displacement since the build relative to the drift the last
    /// rebuild test measured against, m² (zero right after a build; infinite for NaN).
    list_move2: Vec<f32>,
    /// The largest of `list_move2`'s square roots, m.
    list_move_max: f32,
    /// Gap h, m, between each particle and its nearest collider within thickness + margin after
    /// the last collision pass; `f32::INFINITY` if none.
    pub contact_gap: Vec<f32>,
    /// That collider's outward normal (zero if none).
    pub contact_normal: Vec<Vec3A>,
    /// Positions before [`last_word`]'s pass, of the particles with a contact (`contact_gap`
    /// finite); the other entries are stale.
    last_word_x: Vec<Vec3A>,
    /// That collider's index (`u32::MAX` if none).
    pub contact_collider: Vec<u32>,
    /// Extra normal load per particle, expressed as a normal displacement per substep (m),
    /// added to the penetration depth in the friction law. Zero for dry cloth; the wet stage
    /// writes `F_adh Δt² / m` here so wet cloth resists sliding more (PHYSICS.md §5.6).
    pub extra_normal: Vec<f32>,
    /// Per particle: 1 if the current contact round's deformation limit moved it (the
    /// particles [`reproject`] visits), 2 if [`reproject`] then pushed it out, else 0.
    provot_moved: Vec<u8>,
    /// The contact rounds' record of which limit springs need a visit.
    provot: constraints::ProvotScratch,
    shapes_start: Vec<Shape>,
    shapes_end: Vec<Shape>,
    /// `shapes_end` prepared for the narrow phase's distance queries.
    prepared_end: Vec<collide::PreparedShape>,
    bounds: Vec<(Vec3A, Vec3A)>,
    /// The colliders the frame-long broad phase was prepared for (compared every substep, so a
    /// caller that changes them mid-frame still gets exact lists).
    swept_for: Vec<Collider>,
    /// Box of each bounded collider swept over the frame (the union of its boxes at the frame's
    /// start and end holds every interpolated pose: a box's corners move linearly).
    swept: Vec<(Vec3A, Vec3A)>,
    /// Each collider's [`Collider::sweep_speed`] over the current frame, m per frame.
    collider_speed: Vec<f32>,
    /// Bumped whenever the interpolation restarts (new colliders, a new frame, a substep out of
    /// order): clearance records from an older sweep are void. Never 0.
    collide_sweep: u32,
    /// Frame fraction of the current substep's end (the instant of `shapes_end`).
    collide_t: f32,
    /// Collider index of each entry of `swept` (the BVH answers indices into `swept`).
    swept_collider: Vec<u32>,
    /// Each collider's swept box, by collider index (infinite for planes).
    swept_by_collider: Vec<(Vec3A, Vec3A)>,
    /// Colliders without finite bounds (planes): in every candidate list.
    unbounded: Vec<u32>,
    /// BVH over `swept`, refitted every frame (body proxies, src/body/bvh.rs).
    collider_bvh: ProxyBvh,
    /// Bumped whenever the swept boxes change: older block lists are stale.
    collide_generation: u64,
    /// Tests only: run the collide stage with a linear scan over every collider instead.
    #[cfg(test)]
    brute_force_collide: bool,
    chunks: Vec<ChunkScratch>,
    /// Positions when the self-collision lists were last built; empty = never built.
    x_at_list_build: Vec<Vec3A>,
    /// Neighbour-list radius of the last build, m.
    list_radius: f32,
    /// The common displacement the rebuild test measures particle moves against, m: the centre
    /// of the box of all displacements at the previous test (see [`needs_rebuild`]).
    list_drift: Vec3A,
    /// How many times the self-collision lists were rebuilt (statistics).
    pub list_rebuilds: u64,
    /// How many substeps found the fast particles' pairs afresh instead (statistics).
    pub list_refreshes: u64,
    /// The hash over the current positions those substeps query.
    fresh_hash: SpatialHash,
    /// The fresh pairs as lists for both ends: `fresh_nbr[fresh_start[i]..fresh_start[i + 1]]`
    /// (ascending), with their targets in `fresh_target`.
    fresh_start: Vec<u32>,
    fresh_nbr: Vec<u32>,
    fresh_target: Vec<f32>,
    /// The wet stage's per-particle data and counters (src/cloth/wet.rs).
    pub wet: wet::WetScratch,
    /// Run the staged substep even where the fused one applies (`drape bench cloth
    /// --staged`, and the tests that compare the two). Default false.
    pub force_staged: bool,
    /// Which build of the fused band kernel runs (tests pin each; speed only). Default: the
    /// widest the CPU has.
    pub fused_isa: super::fused::KernelIsa,
    /// The fused substep's band scratch and double buffers (src/cloth/fused.rs).
    fused: super::fused::FusedScratch,
}

impl ClothWorkspace {
    pub fn new(model: &ClothModel) -> Self {
        let n = model.len();
        Self {
            f: vec![Vec3A::ZERO; n],
            k_eff: model.general.k.clone(),
            kd_eff: model.general.kd.clone(),
            springs: forces::SpringScratch::new(model),
            prepared_for: None,
            stability: StabilityReport::default(),
            hash: SpatialHash::new(),
            dx: vec![Vec3A::ZERO; n],
            nbr_start: Vec::with_capacity(n + 1),
            nbr: Vec::new(),
            nbr_target: Vec::new(),
            nbr_slack: vec![f32::INFINITY; n],
            list_move2: vec![0.0; n],
            list_move_max: 0.0,
            contact_gap: vec![f32::INFINITY; n],
            contact_normal: vec![Vec3A::ZERO; n],
            last_word_x: Vec::with_capacity(n),
            contact_collider: vec![u32::MAX; n],
            extra_normal: vec![0.0; n],
            provot_moved: vec![0; n],
            provot: constraints::ProvotScratch::default(),
            shapes_start: Vec::new(),
            shapes_end: Vec::new(),
            prepared_end: Vec::new(),
            bounds: Vec::new(),
            swept_for: Vec::new(),
            swept: Vec::new(),
            swept_collider: Vec::new(),
            collider_speed: Vec::new(),
            collide_sweep: 1,
            collide_t: f32::NAN,
            swept_by_collider: Vec::new(),
            unbounded: Vec::new(),
            collider_bvh: ProxyBvh::default(),
            collide_generation: 1,
            #[cfg(test)]
            brute_force_collide: false,
            chunks: vec![ChunkScratch::default(); model.chunks()],
            x_at_list_build: Vec::with_capacity(n),
            list_radius: 0.0,
            list_drift: Vec3A::ZERO,
            list_rebuilds: 0,
            list_refreshes: 0,
            fresh_hash: SpatialHash::new(),
            fresh_start: Vec::new(),
            fresh_nbr: Vec::new(),
            fresh_target: Vec::new(),
            wet: wet::WetScratch::new(model),
            force_staged: false,
            fused_isa: super::fused::KernelIsa::Best,
            fused: super::fused::FusedScratch::new(model),
        }
    }

    /// Tracked deformation-limit passes run so far (statistics: `drape bench scene`).
    pub fn limit_passes(&self) -> u64 {
        self.provot.passes
    }

    /// The self-collision neighbour list of particle `i`: every particle that was within the
    /// contact distance plus the skin at the last list build (a superset of the particles now
    /// in contact; empty before the first self-collision substep). The wet stage's
    /// self-adhesion queries the same lists.
    pub fn self_neighbours(&self, model: &ClothModel, i: usize) -> &[u32] {
        let _ = model;
        if i + 1 < self.nbr_start.len() {
            &self.nbr[self.nbr_start[i] as usize..self.nbr_start[i + 1] as usize]
        } else {
            &[]
        }
    }

    /// Computes the springs in effect for the substep length of `params` (once per change of
    /// Δt): a garment whose stiffest mode would violate Δt² ω² + 2 Δt γ < 4 (see
    /// [`forces::stiffness_spectrum`]) has its k and k_d scaled down to
    /// `stability_safety` × the bound.
    pub fn prepare(&mut self, model: &ClothModel, params: &SimParams) {
        let dt = params.dt();
        let key = (dt.to_bits(), params.stability_safety.to_bits());
        if self.prepared_for == Some(key) {
            return;
        }
        self.prepared_for = Some(key);
        let safety = params.stability_safety.clamp(0.05, 1.0);
        self.stability.dt = dt;
        self.stability.garment_scale.clear();
        for g in &model.garments {
            let load = dt * dt * g.omega2_max + 2.0 * dt * g.gamma_max;
            let scale = if load > 4.0 * safety {
                4.0 * safety / load
            } else {
                1.0
            };
            self.stability.garment_scale.push(scale);
        }
        let set = &model.general;
        for e in 0..set.len() {
            let s = self.stability.garment_scale[model.garment_of[set.a[e] as usize] as usize];
            self.k_eff[e] = set.k[e] * s;
            self.kd_eff[e] = set.kd[e] * s;
        }
    }
}

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
    // Run the frame inside the pool so each parallel stage is a cheap fork–join rather than a
    // hand-off from an outside thread.
    let stats = rayon::scope(|_| {
        for s in 0..params.substeps.max(1) {
            substep_timed(model, state, ws, colliders, params, s, times.as_deref_mut());
        }
        let mut st = StepStats::default();
        for c in &ws.chunks {
            st.contacts += c.contacts;
            st.self_pairs += c.self_pairs;
            st.speed_limited += c.limited;
        }
        st
    });
    state.time += params.frame_dt as f64;
    state.frame += 1;
    state.hold_pins();
    stats
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

/// Wall time spent in each stage, s, accumulated by [`substep_timed`] (for profiling).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Indexed like [`StageTimes::NAMES`].
    pub secs: [f64; 7],
}

impl StageTimes {
    pub const NAMES: [&'static str; 7] = [
        "forces",
        "adhere",
        "integrate",
        "pins",
        "constrain",
        "self_collide",
        "collide",
    ];
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
    mut times: Option<&mut StageTimes>,
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
    if !staged && super::fused::eligible(model, state, colliders, params) {
        // The same stages in one pass per band of rows (src/cloth/fused.rs), bit-identical.
        let clock = times.as_ref().map(|_| std::time::Instant::now());
        adhere(model, state, ws, params);
        let adhered = clock.map(|c| c.elapsed().as_secs_f64());
        let io = super::fused::FusedIo {
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
        let st = super::fused::substep(model, state, &mut ws.fused, io, params, s, clock.is_some());
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
        return;
    }
    let mut clock = times.as_ref().map(|_| std::time::Instant::now());
    let mut lap = |k: usize| {
        if let (Some(t), Some(c)) = (times.as_deref_mut(), clock.as_mut()) {
            let now = std::time::Instant::now();
            t.secs[k] += (now - *c).as_secs_f64();
            *c = now;
        }
    };
    forces(model, state, ws, params, time);
    lap(0);
    adhere(model, state, ws, params);
    lap(1);
    integrate(model, state, ws, params, dt);
    lap(2);
    pins(model, state, t0, t1);
    lap(3);
    constrain(model, state, ws, params);
    lap(4);
    if params.self_collision {
        self_collide(model, state, ws, params);
    }
    lap(5);
    #[cfg(test)]
    if ws.brute_force_collide {
        collide_brute_force(model, state, ws, params, dt, false);
        let rounds = contact_rounds(params);
        for r in 0..rounds {
            let (moved, provot) = (&mut ws.provot_moved, &mut ws.provot);
            if !constrain_tracked(model, state, params, moved, provot, r == 0) {
                lap(6);
                return;
            }
            collide_brute_force(model, state, ws, params, dt, true);
        }
        if rounds > 0 {
            last_word(model, state, ws, params, dt);
        }
        lap(6);
        return;
    }
    collide(model, state, ws, params, dt);
    contact_rounds_and_last_word(model, state, ws, params, dt);
    lap(6);
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
        reproject(model, state, ws, params, dt);
    }
    if rounds > 0 {
        last_word(model, state, ws, params, dt);
    }
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
/// body during the kata's bow.
fn last_word(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    // Only particles with a contact plane are bounded: only their positions are kept.
    ws.last_word_x.resize(state.x.len(), Vec3A::ZERO);
    for ((b, &x), &g) in ws.last_word_x.iter_mut().zip(&state.x).zip(&ws.contact_gap) {
        if g.is_finite() {
            *b = x;
        }
    }
    let (moved, provot) = (&mut ws.provot_moved, &mut ws.provot);
    if !constrain_tracked(model, state, params, moved, provot, false) {
        return;
    }
    let inv_dt = 1.0 / dt;
    let (gap, normal, before) = (&ws.contact_gap, &ws.contact_normal, &ws.last_word_x);
    for (c, m16) in moved.chunks(16).enumerate() {
        if !m16.iter().fold(false, |any, &m| any | (m != 0)) {
            continue;
        }
        for (k, &m) in m16.iter().enumerate() {
            if m == 0 {
                continue;
            }
            let i = 16 * c + k;
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

/// Each collider's shape at the start and end of the substep, and its bounds at the end; once
/// per frame (whenever the colliders differ from last substep's) the boxes swept over the frame
/// and their BVH, which the collide stage's per-block lists are drawn from.
fn interpolate_colliders(colliders: &[Collider], t0: f32, t1: f32, ws: &mut ClothWorkspace) {
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

/// Stage `forces`: springs (with projected damping) and wind into `ws.f`.
pub fn forces(
    model: &ClothModel,
    state: &ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    time: f32,
) {
    forces::springs_fast(
        model,
        &state.x,
        &state.v,
        &ws.stability.garment_scale,
        &ws.k_eff,
        &ws.kd_eff,
        &mut ws.springs,
        &mut ws.f,
    );
    forces::wind(model, &state.x, &state.v, &params.wind, time, &mut ws.f);
}

/// Stage `adhere`: wet cloth's adhesion (Park & Byun 2019 Eq. 5, PHYSICS.md §5; see
/// [`wet::adhere`]): per-vertex liquid-bridge forces toward colliders from
/// `ws.contact_gap`/`contact_normal` of the previous collision pass (or the area-based force),
/// and self-adhesion between nearby non-neighbour particles from the self-collision neighbour
/// lists. Dry cloth holds no bridges and gets nothing. `ws.extra_normal` stays zero: friction
/// already sees the adhesion load in the penetration it causes (see the module docs of wet).
pub fn adhere(model: &ClothModel, state: &ClothState, ws: &mut ClothWorkspace, params: &SimParams) {
    // The accumulator moves out for the call so the neighbour lists can be read alongside.
    let mut f = std::mem::take(&mut ws.f);
    let mut scratch = std::mem::take(&mut ws.wet);
    {
        let ws_ref: &ClothWorkspace = ws;
        wet::adhere(
            model,
            state,
            &params.wet,
            &ws_ref.contact_gap,
            &ws_ref.contact_normal,
            |i| ws_ref.self_neighbours(model, i),
            params.dt(),
            &mut scratch,
            &mut f,
        );
    }
    ws.f = f;
    ws.wet = scratch;
}

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
    if model.chunks() == 1 {
        run(
            0,
            &mut state.x,
            &mut state.x_prev,
            &mut state.v,
            &mut ws.chunks[0],
        );
    } else {
        state
            .x
            .par_chunks_mut(cs)
            .zip(state.x_prev.par_chunks_mut(cs))
            .zip(state.v.par_chunks_mut(cs))
            .zip(ws.chunks.par_iter_mut())
            .enumerate()
            .for_each(|(c, (((x, xp), v), sc))| run(c, x, xp, v, sc));
    }
}

/// Stage `pins`: pinned particles go to their targets interpolated at the end of the substep
/// (and start from them at its beginning), so they never lag their attachment.
pub fn pins(model: &ClothModel, state: &mut ClothState, t0: f32, t1: f32) {
    for (k, &i) in model.pins.iter().enumerate() {
        let (a, b) = (state.pin_prev[k], state.pin_target[k]);
        state.x_prev[i as usize] = a.lerp(b, t0);
        state.x[i as usize] = a.lerp(b, t1);
    }
}

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
    let (min, max) = (params.provot_iterations, params.max_provot_passes());
    let Some(tau) = params.provot_limit.filter(|_| max > 0) else {
        return match params.tether_slack {
            Some(slack) => constraints::tethers(model, slack, &mut state.x, moved, scratch),
            None => false,
        };
    };
    let mut any = false;
    for k in 0..max {
        let (x, w) = (&mut state.x, &state.inv_mass);
        let tethers = params.tether_slack.filter(|_| k == 0);
        let worst = constraints::provot_tracked(model, w, tau, x, moved, scratch, tethers);
        if worst == 0.0 {
            // A pass that moved nothing leaves nothing for the next.
            break;
        }
        any = true;
        if k + 1 >= min && worst <= 1.0 + params.provot_tolerance {
            break;
        }
    }
    any
}

/// [`constrain`] for a contact round: sets `moved[i] = 1` for every particle it moved, 0 for the
/// others, and returns whether it moved any. On entry `moved` holds the previous round's
/// [`reproject`] result (2 = pushed out): with `first` false, the deformation limit's passes
/// visit only the springs near those particles or near its own earlier moves, and skip the
/// others, which are still within the limit (see [`constraints::ProvotScratch`]; the same
/// result as visiting them). `first` = the substep's first round, after stages that moved
/// everything: every spring is visited.
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

/// Stage `self_collide`: particles of one garment or of different garments closer than the sum
/// of their thicknesses are pushed apart along the pair direction (PHYSICS.md §3), weighted by
/// inverse mass, with Jacobi averaging of all corrections on a particle, and with friction
/// removing `self_friction` of their relative tangential displacement. A pair of the same
/// garment whose rest distance is below that sum is only pushed back to its rest distance
/// (Müller, Ten Minute Physics 15), so neighbours are not forced apart.
///
/// Candidate pairs come from per-particle neighbour lists built from the spatial hash with a
/// skin (see [`SimParams::self_skin`]) and rebuilt only when needed, so most substeps do no
/// hashing at all; the result is the same as querying the hash every substep. Each list entry
/// carries its pair's target distance, fixed at the build, so the substep loop reads only
/// positions and masses.
///
/// When only a few particles moved too far for the lists (more than half the skin, "fast";
/// see `needs_rebuild`), the lists are kept: every pair of two slow particles is still in
/// them, and the fast particles' pairs are found afresh (`find_fresh_pairs`) and merged in.
/// A limb whips part of a garment past the skin within a substep or two (a roundhouse kick:
/// lists rebuilt 11 times in 16 substeps), while the rest of the cloth stays within it. Each
/// particle still sums its pairs in ascending neighbour order, so the result is the very one
/// a rebuild gives (`drape bake` output byte-identical; test
/// `neighbour_lists_never_miss_a_contact`).
///
/// Whole lists are skipped when none of their pairs can be in contact: a pair's distance has
/// shrunk since the build by at most `|d_i − c| + |d_j − c|` (`d` the displacements since the
/// build, `c` the drift the rebuild test measured against), so with `m` the largest
/// `|d_j − c|`, particle i's list can hold a contact only if its smallest
/// `distance − target` at the build is below `|d_i − c| + m`. Flat or gently moving cloth
/// (grid neighbours 0.2 h beyond their target) then reads no neighbour at all in most
/// substeps. A margin of 10⁻³ of the skin keeps float rounding of the bound from skipping a
/// pair the full test would have counted.
pub fn self_collide(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
) {
    let cs = model.chunk_size;
    let max_t = model.max_thickness;
    let skin = params.self_skin.clamp(0.1, 4.0) * max_t;
    let radius = 2.0 * max_t + skin;
    let n = state.x.len();
    // Particles that moved more than half the skin (relative to the drift) are "fast".
    let half = 0.5 * skin;
    let fresh = match needs_rebuild(model, &state.x, ws, radius, skin) {
        Lists::Hold => false,
        Lists::Refresh(fast) if fast <= n / FRESH_SHARE => true,
        _ => {
            build_lists(model, state, ws, radius);
            false
        }
    };
    let mu = params.self_friction.clamp(0.0, 1.0);
    if fresh {
        find_fresh_pairs(model, state, ws, 2.0 * max_t, half * half);
    }
    let (x, xp, inv_mass) = (&state.x, &state.x_prev, &state.inv_mass);
    let (nbr_start, nbr, nbr_target) = (&ws.nbr_start, &ws.nbr, &ws.nbr_target);
    let (slack, move2) = (&ws.nbr_slack, &ws.list_move2);
    // With fresh pairs, a list is read only for slow particles and only its slow entries: the
    // other end moved at most half the skin.
    let other = if fresh {
        ws.list_move_max.min(half)
    } else {
        ws.list_move_max
    };
    let reach = other + 1e-3 * skin;
    let fast2 = if fresh { half * half } else { f32::INFINITY };
    let (f_start, f_nbr, f_target) = (&ws.fresh_start, &ws.fresh_nbr, &ws.fresh_target);
    let run = |c: usize, dx: &mut [Vec3A], scratch: &mut ChunkScratch| {
        let base = c * cs;
        let mut pairs = 0;
        for (k, dxi) in dx.iter_mut().enumerate() {
            let i = base + k;
            *dxi = Vec3A::ZERO;
            let wi = inv_mass[i];
            if wi == 0.0 {
                continue;
            }
            // Written so that a NaN bound reads the list.
            let free = slack[i] - reach;
            let skip = (free > 0.0 && free * free > move2[i]) || move2[i] > fast2;
            let (s, e) = if skip {
                (0, 0)
            } else {
                (nbr_start[i] as usize, nbr_start[i + 1] as usize)
            };
            let (fs, fe) = if fresh {
                (f_start[i] as usize, f_start[i + 1] as usize)
            } else {
                (0, 0)
            };
            if s == e && fs == fe {
                continue;
            }
            let xi = x[i];
            let di = xi - xp[i];
            let mut sum = Vec3A::ZERO;
            let mut count = 0u32;
            // The list's entries of slow particles and the fresh pairs, merged in ascending
            // neighbour order: the order a full list would give, so the sum has its bits.
            let (mut p, mut q) = (s, fs);
            while p < e || q < fe {
                let (j, target) = if q >= fe || (p < e && nbr[p] < f_nbr[q]) {
                    p += 1;
                    if move2[nbr[p - 1] as usize] > fast2 {
                        continue;
                    }
                    (nbr[p - 1] as usize, nbr_target[p - 1])
                } else {
                    q += 1;
                    (f_nbr[q - 1] as usize, f_target[q - 1])
                };
                let xj = x[j];
                let d = xi - xj;
                let d2 = d.length_squared();
                if d2 >= target * target {
                    continue;
                }
                sum += pair_push(i, j, d, d2, di, xj - xp[j], wi, inv_mass[j], target, mu);
                count += 1;
            }
            if count > 0 {
                *dxi = sum / count as f32;
                pairs += count;
            }
        }
        scratch.self_pairs = pairs;
    };
    if model.chunks() == 1 {
        run(0, &mut ws.dx, &mut ws.chunks[0]);
    } else {
        ws.dx
            .par_chunks_mut(cs)
            .zip(ws.chunks.par_iter_mut())
            .enumerate()
            .for_each(|(c, (dx, sc))| run(c, dx, sc));
    }
    // Jacobi: every correction was computed from the same positions; apply them all now.
    let apply = |x: &mut [Vec3A], d: &[Vec3A]| {
        for (x, d) in x.iter_mut().zip(d) {
            *x += *d;
        }
    };
    if model.chunks() == 1 {
        apply(&mut state.x, &ws.dx);
    } else {
        state
            .x
            .par_chunks_mut(cs)
            .zip(ws.dx.par_chunks(cs))
            .for_each(|(x, d)| apply(x, d));
    }
}

/// A partial refresh ([`find_fresh_pairs`]) replaces a rebuild while at most one particle in
/// this many is fast. `drape bench scene` (one thread, best of four runs, self_collide stage):
/// 8.1 ms a frame with rebuilds only; 6.3 (at most a half fast), 5.9 (a quarter), 5.5–6.7
/// (an eighth), 6.2 (a sixteenth); the host's noise is about ±1 ms, so any of these will do.
const FRESH_SHARE: usize = 8;

/// The correction pair (i, j) asks of particle i (`d = x_i − x_j`, `d2 = |d|²`, `di`, `dj`
/// the two displacements over the substep): pushed apart to `target` along the pair, weighted
/// by inverse mass, less `mu` of the relative tangential displacement. Coincident particles
/// separate along a fixed, index-ordered direction.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn pair_push(
    i: usize,
    j: usize,
    d: Vec3A,
    d2: f32,
    di: Vec3A,
    dj: Vec3A,
    wi: f32,
    wj: f32,
    target: f32,
    mu: f32,
) -> Vec3A {
    let wsum = wi + wj;
    let dist = d2.sqrt();
    let n = if dist > 1e-9 {
        d / dist
    } else if i < j {
        Vec3A::Y
    } else {
        -Vec3A::Y
    };
    let share = wi / wsum;
    let rel = di - dj;
    let rel_t = rel - n * rel.dot(n);
    n * ((target - dist) * share) - rel_t * (mu * share)
}

/// The contact pairs of the fast particles (squared move since the list build above `fast2`),
/// found afresh: a spatial hash over the current positions with cells of `contact` (the
/// largest target distance), each fast particle's whole neighbourhood, every pair within the
/// sum of its thicknesses once (a pair of two fast particles from the lower index). Stored by
/// [`fill_lists`] as lists for both ends (`fresh_start`, `fresh_nbr`, `fresh_target`), in
/// ascending neighbour order with the rebuild's targets, so `self_collide` merges them with
/// the slow particles' list entries in the order a full rebuild would give.
fn find_fresh_pairs(
    model: &ClothModel,
    state: &ClothState,
    ws: &mut ClothWorkspace,
    contact: f32,
    fast2: f32,
) {
    let (cs, n) = (model.chunk_size, state.x.len());
    let x = &state.x;
    ws.list_refreshes += 1;
    ws.fresh_hash.build(x, contact);
    let (hash, move2) = (&ws.fresh_hash, &ws.list_move2);
    let find = |c: usize, sc: &mut ChunkScratch| {
        sc.fresh.clear();
        for i in c * cs..((c + 1) * cs).min(n) {
            // (A NaN move is stored as infinite.)
            if move2[i] <= fast2 {
                continue;
            }
            let (xi, ti) = (x[i], model.thickness[i]);
            hash.for_each_candidate(xi, |j, xj| {
                let j = j as usize;
                if j == i || (move2[j] > fast2 && j < i) {
                    return;
                }
                // Within the sum of the thicknesses (a superset of the contacts: a pair of one
                // garment may have a smaller target, which `self_collide` tests).
                let t = ti + model.thickness[j];
                if xi.distance_squared(xj) < t * t {
                    sc.fresh.push((i as u32, j as u32));
                }
            });
        }
    };
    each_chunk(&mut ws.chunks, find);
    fill_lists(
        model,
        n,
        &ws.chunks,
        |sc| &sc.fresh,
        (&mut ws.fresh_start, &mut ws.fresh_nbr, &mut ws.fresh_target),
    );
}

/// Whether the neighbour lists hold every pair within the contact distance ([`Lists::Hold`]),
/// hold every pair of two particles that moved at most half the skin ([`Lists::Refresh`], with
/// the number that moved more), or were never built or built for another radius
/// ([`Lists::Rebuild`]). Leaves each particle's squared move in `list_move2`.
///
/// With `d_i` each particle's displacement since the build and any common vector `c`, a pair's
/// distance changed by at most `|d_i − c| + |d_j − c|`, so the lists hold every pair within the
/// contact distance as long as the two largest `|d_i − c|` sum to less than the skin (the
/// Verlet-list rule of molecular dynamics, with the pair's two largest moves rather than twice
/// the largest). Any `c` is safe; the best is the one that minimises the largest move, which
/// the centre of the box of all displacements approximates (exactly, per axis). The same pass
/// that tests against `c` measures that box, and its centre is the next substep's `c`
/// (displacements change little in one substep). Against the mean displacement (the previous
/// choice) this matters when the cloth moves in two groups, as when its middle has landed on
/// the sphere and its edges still fall: with 70 % stopped and 30 % falling by D, the mean puts
/// the fallers 0.7 D away (two of them: 1.4 D) and the centre D/2 (two of them: D). A rigid
/// translation of the whole cloth (free fall) still triggers no rebuild.
fn needs_rebuild(
    model: &ClothModel,
    x: &[Vec3A],
    ws: &mut ClothWorkspace,
    radius: f32,
    skin: f32,
) -> Lists {
    let at_build = &ws.x_at_list_build;
    if at_build.len() != x.len() || radius != ws.list_radius {
        return Lists::Rebuild;
    }
    let half2 = 0.25 * skin * skin;
    let c = ws.list_drift;
    let cs = model.chunk_size;
    // (two largest |d − c|², box of d, how many |d − c| above half the skin)
    type Moves = (f32, f32, Vec3A, Vec3A, usize);
    let empty: Moves = (
        0.0,
        0.0,
        Vec3A::splat(f32::INFINITY),
        Vec3A::splat(f32::NEG_INFINITY),
        0,
    );
    let moves = |x: &[Vec3A], b: &[Vec3A], mv: &mut [f32]| -> Moves {
        let (mut m1, mut m2, mut lo, mut hi, mut fast) = empty;
        for ((a, b), mv) in x.iter().zip(b).zip(mv) {
            let d = *a - *b;
            lo = lo.min(d);
            hi = hi.max(d);
            let d2 = (d - c).length_squared();
            // NaN compares false everywhere: treat it as infinitely far.
            let d2 = if d2.is_nan() { f32::INFINITY } else { d2 };
            *mv = d2;
            fast += (d2 > half2) as usize;
            if d2 > m2 {
                if d2 > m1 {
                    m2 = m1;
                    m1 = d2;
                } else {
                    m2 = d2;
                }
            }
        }
        (m1, m2, lo, hi, fast)
    };
    let move2 = &mut ws.list_move2;
    let (m1, m2, lo, hi, fast) = if model.chunks() == 1 {
        moves(x, at_build, move2)
    } else {
        ws.chunks
            .par_iter_mut()
            .zip(x.par_chunks(cs).zip(at_build.par_chunks(cs)))
            .zip(move2.par_chunks_mut(cs))
            .for_each(|((sc, (xc, bc)), mv)| sc.moves = moves(xc, bc, mv));
        ws.chunks.iter().fold(empty, |(m1, m2, lo, hi, fast), sc| {
            let (a, b, l, h, f) = sc.moves;
            // The two largest of {m1, m2, a, b} (m1 ≥ m2, a ≥ b); min/max are order-free.
            let (m1, m2) = if a >= m1 {
                (a, m1.max(b))
            } else {
                (m1, m2.max(a))
            };
            (m1, m2, lo.min(l), hi.max(h), fast + f)
        })
    };
    let centre = (lo + hi) * 0.5;
    ws.list_drift = if centre.is_finite() {
        centre
    } else {
        Vec3A::ZERO
    };
    // Written negated on purpose: a NaN skin or displacement also asks for a rebuild.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let hold = m1.sqrt() + m2.sqrt() <= skin;
    ws.list_move_max = m1.sqrt();
    if hold {
        Lists::Hold
    } else {
        Lists::Refresh(fast)
    }
}

/// What the rebuild test found ([`needs_rebuild`]).
enum Lists {
    /// Every pair within the contact distance is in the lists.
    Hold,
    /// Pairs of two particles that moved at most half the skin are (their moves sum to at
    /// most the skin); this many particles moved more.
    Refresh(usize),
    /// The lists do not fit the model or the radius.
    Rebuild,
}

/// Rebuilds the neighbour lists: every pair closer than `radius`, from the hash, each with its
/// target distance (the sum of the thicknesses, or the rest distance for a pair of one garment
/// that is closer than that at rest).
///
/// In parallel per chunk, each particle's forward half-shell query
/// ([`SpatialHash::for_each_forward`]) finds each pair once (half the candidates of a full
/// query); [`fill_lists`] makes the lists; then each list's slack for the skip test.
fn build_lists(model: &ClothModel, state: &ClothState, ws: &mut ClothWorkspace, radius: f32) {
    let cs = model.chunk_size;
    let n = state.x.len();
    ws.hash.build(&state.x, radius);
    ws.list_radius = radius;
    ws.list_drift = Vec3A::ZERO;
    ws.list_rebuilds += 1;
    ws.x_at_list_build.clear();
    ws.x_at_list_build.extend_from_slice(&state.x);
    ws.list_move2.clear();
    ws.list_move2.resize(n, 0.0);
    ws.list_move_max = 0.0;
    let hash = &ws.hash;
    let r2 = radius * radius;
    let find = |c: usize, scratch: &mut ChunkScratch| {
        scratch.pairs.clear();
        for i in c * cs..((c + 1) * cs).min(n) {
            hash.for_each_forward(i, r2, |j| scratch.pairs.push((i as u32, j)));
        }
    };
    each_chunk(&mut ws.chunks, find);
    fill_lists(
        model,
        n,
        &ws.chunks,
        |sc| &sc.pairs,
        (&mut ws.nbr_start, &mut ws.nbr, &mut ws.nbr_target),
    );
    let start = &ws.nbr_start;
    // Each list's smallest distance beyond its targets, for `self_collide`'s skip test.
    let (x, nbr, target) = (&state.x, &ws.nbr, &ws.nbr_target);
    let slack_of = |lo: usize, out: &mut [f32]| {
        for (k, sl) in out.iter_mut().enumerate() {
            let i = lo + k;
            let (s, e) = (start[i] as usize, start[i + 1] as usize);
            *sl = nbr[s..e]
                .iter()
                .zip(&target[s..e])
                .map(|(&j, &t)| x[i].distance(x[j as usize]) - t)
                // NaN (a broken position) must keep the list read, as the full test would.
                .fold(f32::INFINITY, |a, v| {
                    if v.is_nan() {
                        f32::NEG_INFINITY
                    } else {
                        a.min(v)
                    }
                });
        }
    };
    ws.nbr_slack.resize(n, f32::INFINITY);
    if model.chunks() == 1 {
        slack_of(0, &mut ws.nbr_slack);
    } else {
        ws.nbr_slack
            .par_chunks_mut(cs)
            .enumerate()
            .for_each(|(c, out)| slack_of(c * cs, out));
    }
}

/// Runs `f(c, scratch of chunk c)` for every chunk, in parallel when there are several.
fn each_chunk(chunks: &mut [ChunkScratch], f: impl Fn(usize, &mut ChunkScratch) + Sync) {
    if let [only] = chunks {
        f(0, only);
    } else {
        chunks
            .par_iter_mut()
            .enumerate()
            .for_each(|(c, sc)| f(c, sc));
    }
}

/// Fills symmetric neighbour lists from the pairs each chunk found (`pairs(chunk)`, every
/// unordered pair once over all chunks): `nbr[start[i]..start[i + 1]]` in ascending order,
/// each entry with its pair's target distance (the sum of the thicknesses, or the rest distance
/// for a pair of one garment that is closer than that at rest). A serial counting sort by both
/// ends (degrees, prefix sums, scatter with the cursor `start[i + 1]` counted down), then, in
/// parallel per chunk, each list sorted (so the Jacobi sums depend neither on the hash layout
/// nor on the chunking) and given its targets.
fn fill_lists(
    model: &ClothModel,
    n: usize,
    chunks: &[ChunkScratch],
    pairs: impl Fn(&ChunkScratch) -> &[(u32, u32)],
    (start, nbr, target): (&mut Vec<u32>, &mut Vec<u32>, &mut Vec<f32>),
) {
    start.clear();
    start.resize(n + 1, 0);
    for sc in chunks {
        for &(i, j) in pairs(sc) {
            start[i as usize + 1] += 1;
            start[j as usize + 1] += 1;
        }
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let total = start[n] as usize;
    nbr.resize(total, 0);
    target.resize(total, 0.0);
    // Fill each list from its end, then shift the starts back.
    for sc in chunks {
        for &(i, j) in pairs(sc) {
            start[i as usize + 1] -= 1;
            nbr[start[i as usize + 1] as usize] = j;
            start[j as usize + 1] -= 1;
            nbr[start[j as usize + 1] as usize] = i;
        }
    }
    // Now start[i + 1] is list i's start: shift left by one.
    for i in 0..n {
        start[i] = start[i + 1];
    }
    start[n] = total as u32;
    let start = &*start;
    let finish = |lo: usize, hi: usize, nbr: &mut [u32], target: &mut [f32]| {
        let base = start[lo] as usize;
        for i in lo..hi {
            let (s, e) = (start[i] as usize - base, start[i + 1] as usize - base);
            // Ascending neighbour order (short lists: insertion sort inside sort_unstable).
            nbr[s..e].sort_unstable();
            let (ti, gi, ri) = (model.thickness[i], model.garment_of[i], model.rest[i]);
            for (&j, t) in nbr[s..e].iter().zip(&mut target[s..e]) {
                let j = j as usize;
                let mut tg = ti + model.thickness[j];
                if model.garment_of[j] == gi {
                    // min(sum of thicknesses, rest distance), with a square root only for the
                    // pairs that are closer at rest (grid neighbours when the cloth is thick).
                    let rest2 = ri.distance_squared(model.rest[j]);
                    if rest2 < tg * tg {
                        tg = rest2.sqrt();
                    }
                }
                *t = tg;
            }
        }
    };
    if model.chunks() == 1 {
        finish(0, n, nbr, target);
    } else {
        split_lists(
            0..model.chunks(),
            model.chunk_size,
            n,
            start,
            nbr,
            target,
            &finish,
        );
    }
}

/// A pass over the lists of particles `lo..hi`: `(lo, hi, neighbours, targets)`.
type ListPass<'a> = dyn Fn(usize, usize, &mut [u32], &mut [f32]) + Sync + 'a;

/// Runs `f(lo, hi, lists, targets)` for the lists of each chunk of particles in `chunks`, in
/// parallel, splitting the list arrays at chunk boundaries by recursion (no allocation).
fn split_lists(
    chunks: std::ops::Range<usize>,
    cs: usize,
    n: usize,
    start: &[u32],
    nbr: &mut [u32],
    target: &mut [f32],
    f: &ListPass<'_>,
) {
    let (lo, hi) = (chunks.start * cs, (chunks.end * cs).min(n));
    if chunks.len() <= 1 {
        f(lo, hi, nbr, target);
        return;
    }
    let mid = chunks.start + chunks.len() / 2;
    let at = (start[mid * cs] - start[lo]) as usize;
    let (na, nb) = nbr.split_at_mut(at);
    let (ta, tb) = target.split_at_mut(at);
    rayon::join(
        || split_lists(chunks.start..mid, cs, n, start, na, ta, f),
        || split_lists(mid..chunks.end, cs, n, start, nb, tb, f),
    );
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
    collide_pass(model, state, ws, params, dt, false);
}

/// The contact rounds' collision pass: only the particles the round's deformation limit moved
/// (`ws.provot_moved`) are pushed back out of the colliders, against the same lists as
/// [`collide()`], and without friction — friction belongs to the substep's motion, which
/// [`collide()`] has already charged it for once; applying it again in every round would make
/// cloth stick more the more rounds it gets (and wet cloth, whose bridges add normal load,
/// far more). Their contact records and velocities are updated; every other particle is where
/// the last pass left it, outside every collider, and is not visited (a block of
/// `COLLIDE_BLOCK` particles none of which moved is skipped whole). Leaves `moved` at 2 for
/// each particle it pushed and 0 for the others (the next round's [`constrain_tracked`] reads it).
pub fn reproject(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    collide_pass(model, state, ws, params, dt, true);
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
    let mut margin = params.contact_margin.max(0.0);
    if ws.wet.active {
        // Wet cloth needs the gaps out to h_max for its bridges.
        margin = margin.max(params.wet.contact_margin());
    }
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
fn collide_brute_force(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
    only_moved: bool,
) {
    let cs = model.chunk_size;
    let mut margin = params.contact_margin.max(0.0);
    if ws.wet.active {
        // Wet cloth needs the gaps out to h_max for its bridges.
        margin = margin.max(params.wet.contact_margin());
    }
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
                    for _pass in 0..2 {
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
