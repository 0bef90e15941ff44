//! The workspace: every scratch array the stages of a substep use, neither model nor state
//! (forces, the self-collision neighbour lists, the colliders interpolated for the substep, the
//! contact records of the last collision pass, per-chunk records, the fused kernel's buffers),
//! and the stability clamp the forces stage reads. Data only: the stages that fill and read it
//! are in `stages/` and `mass_spring/`. Building the workspace allocates; stepping does not.

use crate::body::ProxyBvh;
use rayon::prelude::*;

use crate::math::Vec3A;

use super::collide::{self, Collider, Shape};
use super::constraints;
use super::forces;
use super::hash::SpatialHash;
use super::mass_spring::fused;
use super::model::ClothModel;
use super::params::SimParams;
use super::wet;
use super::xpbd;

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

/// The colliders that may come within reach of one block of particles during the current frame:
/// every collider whose box swept over the frame overlaps `lo..hi`, the block's box when the list
/// was made grown by the contact reach plus `COLLIDE_SKIN` (stages/collide.rs). Valid while the
/// block's box grown by the reach stays inside `lo..hi` and the frame (`generation`) is the same.
#[derive(Clone, Debug, Default)]
pub(super) struct BlockList {
    pub(super) generation: u64,
    /// Bumped at every remake: particle lists drawn from an older list are stale.
    pub(super) epoch: u32,
    pub(super) lo: Vec3A,
    pub(super) hi: Vec3A,
    pub(super) list: Vec<u32>,
}

/// Longest per-particle collider list (count, range 4..64, default 32: on the dressed ninja, 8
/// sent a quarter of the particle visits to their block's longer list and 16 a tenth, and those
/// visits cannot use a clearance record); a particle near more colliders tests its block's list.
pub(super) const PARTICLE_LIST: usize = 32;

/// How far a particle was from every collider of its list when last tested, so that later
/// substeps can skip it while it provably stays out of reach (conservative advancement): the
/// distance to a collider changes no faster than the particle moves plus the collider's
/// [`Collider::sweep_speed`] × the elapsed frame fraction. Most particles are out of reach of
/// every collider most of the time (on the dressed ninja, 3 % of the particle–substeps touch a
/// collider while 3.5 candidates per particle pass the box test), so most visits end here.
/// Read and written together, hence one record per particle.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Clearance {
    /// Where the particle was, m.
    pub(super) x: Vec3A,
    /// The lower bound on its distance from every collider of its list then, less the rounding
    /// tolerance, plus `speed` × the frame fraction then, m: at frame fraction t (same sweep),
    /// the particle is at least `clear − speed·t − |x_now − x|` from all of them.
    pub(super) clear: f32,
    /// The same bound over every collider of its list but the `nearest`th, m (same offset): a
    /// particle resting on one collider tests only that one while this holds.
    pub(super) clear_far: f32,
    /// Position in the particle's list of the collider left out of `clear_far`.
    pub(super) nearest: u32,
    /// The largest [`Collider::sweep_speed`] over its list, m per frame (set when the list is
    /// made; infinite for a list that is its block's).
    pub(super) speed: f32,
    /// The workspace's `collide_sweep` when recorded; 0 = no record.
    pub(super) sweep: u32,
}

#[derive(Clone, Debug, Default)]
pub(super) struct ChunkScratch {
    /// The brute-force reference's per-block list (tests only).
    #[cfg(test)]
    pub(super) candidates: Vec<u32>,
    /// Per block of `COLLIDE_BLOCK` (stages/collide.rs) particles: its frame-long collider list.
    pub(super) blocks: Vec<BlockList>,
    /// Colliders near one particle in the first collision pass.
    pub(super) near: Vec<u32>,
    /// This substep's cut of the current block's list.
    pub(super) block_cut: Vec<u32>,
    /// Per particle of the chunk: its collider list (`p_len` entries of `p_list`, or the block's
    /// list when `p_len == u8::MAX`), where it was made, and the block epoch it was drawn from.
    pub(super) p_list: Vec<[u32; PARTICLE_LIST]>,
    pub(super) p_len: Vec<u8>,
    pub(super) p_anchor: Vec<Vec3A>,
    pub(super) p_epoch: Vec<u32>,
    /// Per particle of the chunk: its clearance record.
    pub(super) p_clear: Vec<Clearance>,
    /// The self-collision pairs this chunk's particles found at the last list build (from
    /// their forward half-shells: each pair once over all chunks).
    pub(super) pairs: Vec<(u32, u32)>,
    /// The pairs this chunk's fast particles found afresh this substep (see
    /// `find_fresh_pairs` (stages/self_collision.rs)).
    pub(super) fresh: Vec<(u32, u32)>,
    /// Rebuild test: the two largest squared displacements of this chunk's particles relative
    /// to the common drift, the box of their displacements, and how many moved more than half
    /// the skin.
    pub(super) moves: (f32, f32, Vec3A, Vec3A, usize),
    pub(super) contacts: u32,
    /// Tests only: particle visits of the collide stage that the clearance record skipped.
    #[cfg(test)]
    pub(super) clear_skips: u64,
    /// Tests only: visits that tested only the particle's nearest collider.
    #[cfg(test)]
    pub(super) clear_singles: u64,
    pub(super) self_pairs: u32,
    pub(super) limited: u32,
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
    pub(super) k_eff: Vec<f32>,
    pub(super) kd_eff: Vec<f32>,
    /// The fast spring kernel's scratch.
    pub(super) springs: forces::SpringScratch,
    /// (dt, safety) the effective springs were computed for.
    pub(super) prepared_for: Option<(u32, u32)>,
    pub stability: StabilityReport,
    pub hash: SpatialHash,
    /// Self-collision corrections, m.
    pub(super) dx: Vec<Vec3A>,
    /// Self-collision neighbour lists: particle i has the neighbours
    /// `nbr[nbr_start[i]..nbr_start[i + 1]]` (ascending), each with its pair's target distance
    /// in `nbr_target`, m. Empty before the first build.
    pub(super) nbr_start: Vec<u32>,
    pub(super) nbr: Vec<u32>,
    pub(super) nbr_target: Vec<f32>,
    /// Per particle: the smallest `distance − target` over its list at the build, m (infinite for
    /// an empty list). No pair of its list can be in contact while this exceeds the most the pair
    /// can have closed in since (see
    /// [`self_collide`](super::stages::self_collision::self_collide)).
    pub(super) nbr_slack: Vec<f32>,
    /// Per particle: its squared displacement since the build relative to the drift the last
    /// rebuild test measured against, m² (zero right after a build; infinite for NaN).
    pub(super) list_move2: Vec<f32>,
    /// The largest of `list_move2`'s square roots, m.
    pub(super) list_move_max: f32,
    /// Gap h, m, between each particle and its nearest collider within thickness + margin after
    /// the last collision pass; `f32::INFINITY` if none.
    pub contact_gap: Vec<f32>,
    /// That collider's outward normal (zero if none).
    pub contact_normal: Vec<Vec3A>,
    /// Positions before [`last_word`](super::mass_spring::constrain::last_word)'s pass, of the
    /// particles with a contact (`contact_gap` finite); the other entries are stale. The XPBD
    /// model also keeps here where its `constrain` stage left every particle, until its first
    /// contact round (`cloth::xpbd::constrain::contact_rounds`).
    pub(super) last_word_x: Vec<Vec3A>,
    /// That collider's index (`u32::MAX` if none).
    pub contact_collider: Vec<u32>,
    /// Extra normal load per particle, expressed as a normal displacement per substep (m),
    /// added to the penetration depth in the friction law. Zero for dry cloth; the wet stage
    /// writes `F_adh Δt² / m` here so wet cloth resists sliding more (PHYSICS.md §5.6).
    pub extra_normal: Vec<f32>,
    /// Per particle: 1 if the current contact round's deformation limit moved it (the particles
    /// [`reproject`](super::stages::collide::reproject) visits), 2 if
    /// [`reproject`](super::stages::collide::reproject) then pushed it out, else 0.
    pub(super) provot_moved: Vec<u8>,
    /// The contact rounds' record of which limit springs need a visit.
    pub(super) provot: constraints::ProvotScratch,
    pub(super) shapes_start: Vec<Shape>,
    pub(super) shapes_end: Vec<Shape>,
    /// `shapes_end` prepared for the narrow phase's distance queries.
    pub(super) prepared_end: Vec<collide::PreparedShape>,
    pub(super) bounds: Vec<(Vec3A, Vec3A)>,
    /// The colliders the frame-long broad phase was prepared for (compared every substep, so a
    /// caller that changes them mid-frame still gets exact lists).
    pub(super) swept_for: Vec<Collider>,
    /// Box of each bounded collider swept over the frame (the union of its boxes at the frame's
    /// start and end holds every interpolated pose: a box's corners move linearly).
    pub(super) swept: Vec<(Vec3A, Vec3A)>,
    /// Each collider's [`Collider::sweep_speed`] over the current frame, m per frame.
    pub(super) collider_speed: Vec<f32>,
    /// Bumped whenever the interpolation restarts (new colliders, a new frame, a substep out of
    /// order): clearance records from an older sweep are void. Never 0.
    pub(super) collide_sweep: u32,
    /// Frame fraction of the current substep's end (the instant of `shapes_end`).
    pub(super) collide_t: f32,
    /// Collider index of each entry of `swept` (the BVH answers indices into `swept`).
    pub(super) swept_collider: Vec<u32>,
    /// Each collider's swept box, by collider index (infinite for planes).
    pub(super) swept_by_collider: Vec<(Vec3A, Vec3A)>,
    /// Colliders without finite bounds (planes): in every candidate list.
    pub(super) unbounded: Vec<u32>,
    /// BVH over `swept`, refitted every frame (body proxies, src/body/bvh.rs).
    pub(super) collider_bvh: ProxyBvh,
    /// Bumped whenever the swept boxes change: older block lists are stale.
    pub(super) collide_generation: u64,
    /// Tests only: run the collide stage with a linear scan over every collider instead.
    #[cfg(test)]
    pub(super) brute_force_collide: bool,
    pub(super) chunks: Vec<ChunkScratch>,
    /// Positions when the self-collision lists were last built; empty = never built.
    pub(super) x_at_list_build: Vec<Vec3A>,
    /// Neighbour-list radius of the last build, m.
    pub(super) list_radius: f32,
    /// The common displacement the rebuild test measures particle moves against, m: the centre of
    /// the box of all displacements at the previous test (see `needs_rebuild`
    /// (stages/self_collision.rs)).
    pub(super) list_drift: Vec3A,
    /// How many times the self-collision lists were rebuilt (statistics).
    pub list_rebuilds: u64,
    /// How many substeps found the fast particles' pairs afresh instead (statistics).
    pub list_refreshes: u64,
    /// The hash over the current positions those substeps query.
    pub(super) fresh_hash: SpatialHash,
    /// The fresh pairs as lists for both ends: `fresh_nbr[fresh_start[i]..fresh_start[i + 1]]`
    /// (ascending), with their targets in `fresh_target`.
    pub(super) fresh_start: Vec<u32>,
    pub(super) fresh_nbr: Vec<u32>,
    pub(super) fresh_target: Vec<f32>,
    /// The wet stage's per-particle data and counters (src/cloth/wet.rs).
    pub wet: wet::WetScratch,
    /// Run the staged substep even where the fused one applies (`drape bench cloth
    /// --staged`, and the tests that compare the two). Default false.
    pub force_staged: bool,
    /// Which build of the fused band kernel runs (tests pin each; speed only). Default: the
    /// widest the CPU has.
    pub fused_isa: fused::KernelIsa,
    /// The fused substep's band scratch and double buffers (src/cloth/mass_spring/fused/).
    pub(super) fused: fused::FusedScratch,
    /// The skinned body's surface for the skin-contact stage (`stages/skin.rs`); empty: no
    /// skin contact. The caller (the dressed scene) builds it and sets each frame's positions.
    pub skin: crate::cloth::skin::SkinSurface,
    /// The body's open sheets (`crate::body::sheets`: KayKit's capes), met from either side by
    /// the skin-contact stage (`stages/skin.rs`); empty: none.
    pub sheets: crate::cloth::skin::SkinSurface,
    /// Per particle: how far it was from the skin at its last query (see
    /// `cloth::stages::skin::Clearance`).
    pub(super) skin_clear: Vec<crate::cloth::stages::skin::Clearance>,
    /// What the skin-contact stage did, summed over frames.
    pub skin_stats: crate::cloth::stages::skin::SkinStats,
    /// Whether the skin-contact stage ran in the current substep (its records' contact planes
    /// are this substep's).
    pub(super) skin_planes_live: bool,
    /// The particles the skin-contact stage pushed in the current substep, each where the stage
    /// left it (for `cloth::stages::skin::keep_skin_pushes`).
    pub(super) skin_pushed: Vec<(u32, Vec3A)>,
    /// The XPBD model's constraints in colour order with their multipliers
    /// (src/cloth/xpbd/constrain.rs); built on the first XPBD frame, `None` before.
    pub(super) xpbd: Option<Box<xpbd::constrain::Coloured>>,
    /// Stage `collide`'s face pass (`stages/faces.rs`): the substep's pairs (triangle, collider)
    /// of a collider thin enough to pass through the triangle between its particles.
    pub(super) face_pairs: Vec<(u32, u32)>,
    /// The widest triangle's cover radius in each group of triangles, × the stretch allowed,
    /// and each group's frame-long list of colliders.
    pub(super) face_group_cover: Vec<f32>,
    pub(super) face_groups: Vec<super::stages::faces::FaceGroup>,
    /// The pass's scratch: colliders near a corner it would move.
    pub(super) face_near: Vec<u32>,
    /// Per particle: 1 if the face pass moved it since the flags were last cleared; the list
    /// of those particles.
    pub(super) face_moved: Vec<u8>,
    pub(super) face_moved_list: Vec<u32>,
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
            skin: Default::default(),
            skin_clear: Vec::new(),
            sheets: Default::default(),
            skin_stats: Default::default(),
            skin_planes_live: false,
            skin_pushed: Vec::new(),
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
            fused_isa: fused::KernelIsa::Best,
            fused: fused::FusedScratch::new(model),
            xpbd: None,
            face_pairs: Vec::new(),
            face_group_cover: Vec::new(),
            face_groups: Vec::new(),
            face_near: Vec::new(),
            face_moved: Vec::new(),
            face_moved_list: Vec::new(),
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
    /// [`super::model::stiffness_spectrum`]) has its k and k_d scaled down to
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

/// Runs `run(chunk, x, x_prev, v, scratch)` on every particle chunk of `model` (in parallel when
/// there are several), with the chunk's slices of the state's positions, previous positions and
/// velocities (`[x, x_prev, v]`) and its scratch record: the driver of the integrate stages.
pub(super) fn each_chunk_xv(
    model: &ClothModel,
    [x, x_prev, v]: [&mut [Vec3A]; 3],
    chunks: &mut [ChunkScratch],
    run: impl Fn(usize, &mut [Vec3A], &mut [Vec3A], &mut [Vec3A], &mut ChunkScratch) + Sync,
) {
    let cs = model.chunk_size;
    if model.chunks() == 1 {
        run(0, x, x_prev, v, &mut chunks[0]);
    } else {
        x.par_chunks_mut(cs)
            .zip(x_prev.par_chunks_mut(cs))
            .zip(v.par_chunks_mut(cs))
            .zip(chunks.par_iter_mut())
            .enumerate()
            .for_each(|(c, (((x, xp), v), sc))| run(c, x, xp, v, sc));
    }
}
