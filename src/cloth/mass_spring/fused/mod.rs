//! The fused substep: for the common world (dry grid garments, a few colliders, no
//! self-collision, no Provot limit, no contact rounds) the stages `forces → integrate → pins →
//! collide` of the mass-spring substep ([`super::step`]) run as one pass per band of grid rows
//! instead of one pass each over the whole cloth, bit-identical to them.
//!
//! This file is the driver: when the pass applies ([`eligible`]), the band partition and its
//! scratch, the parallel dispatch over bands, and the per-ISA builds of the band body (AVX-512,
//! AVX2, portable: one body, compiled three times). The band body's parts are one file per stage
//! it fuses: `springs.rs` (gather + stencil springs), `integrate.rs`, `collide.rs`.
//!
//! Why: the staged substep streams every particle array through memory four times (forces,
//! integrate, collide, plus the spring kernel's own gather), and its collide stage pays a
//! broad phase, per-particle candidate lists and a scalar, branchy contact test for a scene
//! that has two colliders. Here a band gathers the positions and velocities of its rows (and
//! the two rows on each side its springs reach) into structure-of-arrays scratch that stays in
//! L1/L2, sums the stencil springs, integrates, and tests every collider in 8-wide loops (AVX2
//! when the CPU has it, detected at run time; the same expressions otherwise), then writes
//! the particle once.
//!
//! Races: bands read the old positions and velocities of neighbouring rows, so the new ones go
//! to double buffers (`x_new`, `v_new`, swapped into the state after the pass); `x_prev` is
//! read and written by its own band only. Bands run in parallel by recursive `rayon::join`
//! over a fixed partition that depends on the grid only, and no particle's arithmetic depends
//! on the partition, so results do not depend on the thread count either.
//!
//! Bit-identity with the staged path (the reference; tests/cloth_fused.rs asserts equal
//! positions, velocities and contact records after many substeps): every particle goes
//! through the same f32 operations in the same order.
//! - Springs: the stencil kernel of `forces::springs_fast` (spring rows ascending, families in
//!   [`STENCIL_FAMILIES`] order, sums started at 0), so each particle's force sum is the same.
//! - Integrate and pins: the `integrate` and `pins` stages, lane by lane (glam's `Vec3A` is
//!   lane-wise IEEE arithmetic and its dot product is `(x·x' + y·y') + z·z'`; Rust never
//!   contracts `a * b + c` into an FMA, and AVX2 alone does not enable FMA).
//! - Collide: the staged stage's result equals testing every collider in index order, twice
//!   if the first pass touched two or more (its BVH lists and per-particle lists only skip
//!   colliders whose box grown by the reach misses the particle, on which the response is a
//!   no-op; `collide_brute_force` in stages/collide.rs is that reference and its test asserts the
//!   equality). The first pass runs here per collider over the band, planes and spheres
//!   branch-free with `collide::PreparedShape::closest_within` and `collide::respond`'s
//!   arithmetic written out lane-wise; capsules, and the rare second pass, call
//!   `collide::resolve_prepared` per particle.
//!
//! Not fused (everything falls back to the staged substep): wet cloth, self-collision, the
//! Provot limit, contact rounds, wind, garments that are not plain grids, more than
//! [`MAX_COLLIDERS`] colliders, pinned particles with a non-zero inverse mass. `ws.f` (the
//! force accumulator) is not written by the fused pass: forces live in band scratch only.

use crate::math::Vec3A;

use crate::cloth::collide::{Collider, PreparedShape, Shape};
use crate::cloth::model::{ClothModel, GridStencil, STENCIL_FAMILIES};
use crate::cloth::params::{Integrator, SimParams};
use crate::cloth::state::ClothState;

mod collide;
mod integrate;
mod springs;

use self::collide::{collide, KernelCollider};
use self::integrate::integrate;
use self::springs::{gather, springs};

/// Most colliders the fused pass takes (each is one loop over the band); a world with more
/// (a dressed body has dozens of capsules) is better served by the staged broad phase.
pub const MAX_COLLIDERS: usize = 8;

/// Rows per band: at least this many (halo rows of springs are recomputed by both bands that
/// need them, 2 per band, so short bands waste work).
const MIN_BAND_ROWS: usize = 8;

/// Particles per band at most (unless [`MIN_BAND_ROWS`] rows hold more): a band's scratch is
/// about 80 bytes a particle, so 4096 particles stay within a core's 1–2 MiB L2.
const MAX_BAND_PARTICLES: usize = 4096;

/// Particles integrated and collided per block inside a band: the block's ~20 arrays
/// (~80 bytes a particle) stay in a 32 KiB L1 while every collider's loop passes over them.
const BLOCK: usize = 256;

/// Bands per grid at least, when the rows allow (so two to four threads all get work even at
/// N = 32).
const MIN_BANDS: usize = 8;

/// True when [`substep`] can replace the staged substep for this world and these parameters
/// (cheap: O(pins + colliders), plus one scan of the wetness when adhesion is on).
pub fn eligible(
    model: &ClothModel,
    state: &ClothState,
    colliders: &[Collider],
    params: &SimParams,
) -> bool {
    if model.is_empty()
        || params.self_collision
        || (params.provot_limit.is_some() && params.provot_iterations > 0)
        || params.contact_rounds > 0
        || params.skin_contact > 0
        || (params.tether_slack.is_some() && !model.tethers.is_empty())
        || params.wind.is_active()
        || colliders.len() > MAX_COLLIDERS
        || !model.general.is_empty()
        || model.stencils.len() != model.garments.len()
        // A collider thin enough to pass between particles needs the face pass.
        || crate::cloth::stages::faces::needed(model, params, colliders.iter().flat_map(|c| [c.prev, c.cur]))
    {
        return false;
    }
    // Every particle in a stencil (stencils are whole garments, in garment order).
    let covered: usize = model.stencils.iter().map(|s| s.len()).sum();
    if covered != model.len() {
        return false;
    }
    // Pins must be massless (the staged collide stage would push a pinned particle that is
    // given a mass; the fused pass places pins after its parallel pass).
    if model
        .pins
        .iter()
        .any(|&i| state.inv_mass.get(i as usize).is_none_or(|&w| w != 0.0))
    {
        return false;
    }
    // Dry: the same test as `wet::adhere`'s `active`.
    let wet = &params.wet;
    let min_wet = wet.min_wetness.max(0.0);
    if wet.adhesion != crate::cloth::params::AdhesionMode::Off
        && state
            .wet
            .iter()
            .fold(false, |any, &a| any | (a >= min_wet && a > 0.0))
    {
        return false;
    }
    true
}

/// Structure-of-arrays scratch of one band.
#[derive(Clone, Debug, Default)]
struct Band {
    /// Stencil index and its rows `r0..r1`.
    stencil: usize,
    r0: usize,
    r1: usize,
    /// World index of the band's first particle.
    first: usize,
    /// Positions x, y, z and velocities x, y, z of rows `r0 − 2 .. r1 + 2` (clamped).
    pv: [Vec<f32>; 6],
    /// Spring force on the band's rows.
    acc: [Vec<f32>; 3],
    /// Force of each spring of one family row.
    tmp: [Vec<f32>; 3],
    /// Positions being integrated and collided, one block of [`BLOCK`] particles at a time.
    cur: [Vec<f32>; 3],
    /// Nearest contact of the block's particles: gap, normal, collider.
    gap: Vec<f32>,
    nrm: [Vec<f32>; 3],
    which: Vec<u32>,
    /// Colliders within reach in the first collision pass.
    touched: Vec<u32>,
    /// Particles with zero inverse mass (pins, normally).
    massless: u32,
    contacts: u32,
    limited: u32,
    /// Seconds in springs, integrate (+ gather), collide (+ write-back), when timed.
    secs: [f64; 3],
}

/// Which build of the band kernel runs. Every build rounds exactly alike (same operations in
/// the same order, no FMA), so this changes speed only; tests pin each build in turn so that
/// the ones a given CPU would not pick are still checked against the staged substep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KernelIsa {
    /// The widest the CPU has: AVX-512F/VL, else AVX2, else portable. Default.
    #[default]
    Best,
    /// AVX2 if the CPU has it, else portable.
    Avx2,
    /// Portable code (SSE2 on x86_64).
    Portable,
}

/// Scratch of the fused substep (part of the cloth workspace).
#[derive(Clone, Debug, Default)]
pub struct FusedScratch {
    bands: Vec<Band>,
    x_new: Vec<Vec3A>,
    v_new: Vec<Vec3A>,
    colliders: Vec<KernelCollider>,
}

impl FusedScratch {
    /// The band partition of `model`'s grid garments (empty unless every garment is a grid): it
    /// depends on the grids only, never on the thread count.
    pub fn new(model: &ClothModel) -> Self {
        let mut bands = Vec::new();
        for (si, st) in model.stencils.iter().enumerate() {
            let rows = band_rows(st);
            let halo_cap = (rows + 4).min(st.ny) * st.nx;
            let own_cap = rows.min(st.ny) * st.nx;
            let mut r0 = 0;
            while r0 < st.ny {
                let r1 = (r0 + rows).min(st.ny);
                let v = |n: usize| vec![0.0f32; n];
                bands.push(Band {
                    stencil: si,
                    r0,
                    r1,
                    first: st.first + r0 * st.nx,
                    pv: std::array::from_fn(|_| v(halo_cap)),
                    acc: std::array::from_fn(|_| v(own_cap)),
                    tmp: std::array::from_fn(|_| v(st.nx)),
                    cur: std::array::from_fn(|_| v(BLOCK)),
                    gap: v(BLOCK),
                    nrm: std::array::from_fn(|_| v(BLOCK)),
                    which: vec![0; BLOCK],
                    touched: vec![0; BLOCK],
                    ..Band::default()
                });
                r0 = r1;
            }
        }
        // The double buffers only for worlds the fused pass can take (all grids).
        let n = if model.stencils.len() == model.garments.len() {
            model.len()
        } else {
            bands.clear();
            0
        };
        Self {
            bands,
            x_new: vec![Vec3A::ZERO; n],
            v_new: vec![Vec3A::ZERO; n],
            colliders: Vec::with_capacity(MAX_COLLIDERS),
        }
    }
}

fn band_rows(st: &GridStencil) -> usize {
    let by_count = st.ny.div_ceil(MIN_BANDS);
    let by_size = (MAX_BAND_PARTICLES / st.nx.max(1)).max(MIN_BAND_ROWS);
    by_count.clamp(MIN_BAND_ROWS, by_size)
}

/// The state and workspace pieces the fused substep reads and writes (borrowed from the
/// cloth workspace by `step::substep_timed`).
pub struct FusedIo<'a> {
    /// Per-garment stiffness scale (`StabilityReport::garment_scale`).
    pub garment_scale: &'a [f32],
    /// Collider shapes at the substep's start and end, end bounds, and prepared end shapes.
    pub shapes_start: &'a [Shape],
    pub shapes_end: &'a [Shape],
    pub bounds: &'a [(Vec3A, Vec3A)],
    pub prepared_end: &'a [PreparedShape],
    pub extra_normal: &'a [f32],
    pub contact_gap: &'a mut [f32],
    pub contact_normal: &'a mut [Vec3A],
    pub contact_collider: &'a mut [u32],
    /// Which build of the band kernel runs.
    pub isa: KernelIsa,
}

/// Counters of one fused substep.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FusedStats {
    pub contacts: u32,
    pub speed_limited: u32,
    /// Summed over bands (CPU time, not wall), s: springs, integrate, collide.
    pub secs: [f64; 3],
}

/// Everything a band reads that is shared by all bands.
struct Ctx<'a> {
    stencils: &'a [GridStencil],
    garment_scale: &'a [f32],
    x_old: &'a [Vec3A],
    /// `x_prev` at the start of the substep (read for Verlet and massless particles).
    xp_old: &'a [Vec3A],
    v_old: &'a [Vec3A],
    inv_mass: &'a [f32],
    thickness: &'a [f32],
    friction: &'a [f32],
    extra: &'a [f32],
    colliders: &'a [KernelCollider],
    prepared: &'a [PreparedShape],
    shapes_end: &'a [Shape],
    shapes_start: &'a [Shape],
    bounds: &'a [(Vec3A, Vec3A)],
    g: Vec3A,
    dt: f32,
    dt2: f32,
    keep: f32,
    max_step: f32,
    verlet: bool,
    inv_dt: f32,
    margin: f32,
    timed: bool,
    isa: KernelIsa,
}

/// The band's own rows of every per-particle output.
struct BandOut<'a> {
    x: &'a mut [Vec3A],
    v: &'a mut [Vec3A],
    gap: &'a mut [f32],
    normal: &'a mut [Vec3A],
    which: &'a mut [u32],
}

impl<'a> BandOut<'a> {
    fn split_at(self, at: usize) -> (BandOut<'a>, BandOut<'a>) {
        let (x0, x1) = self.x.split_at_mut(at);
        let (v0, v1) = self.v.split_at_mut(at);
        let (g0, g1) = self.gap.split_at_mut(at);
        let (n0, n1) = self.normal.split_at_mut(at);
        let (w0, w1) = self.which.split_at_mut(at);
        (
            BandOut {
                x: x0,
                v: v0,
                gap: g0,
                normal: n0,
                which: w0,
            },
            BandOut {
                x: x1,
                v: v1,
                gap: g1,
                normal: n1,
                which: w1,
            },
        )
    }
}

/// Substep `s` of the current frame, fused (the caller checked [`eligible`] and ran the
/// `adhere` stage, which does nothing for dry cloth but reset its records). Returns the
/// contact and speed-limit counts the staged stages would have left.
#[allow(clippy::too_many_arguments)]
pub fn substep(
    model: &ClothModel,
    state: &mut ClothState,
    scratch: &mut FusedScratch,
    io: FusedIo<'_>,
    params: &SimParams,
    s: u32,
    timed: bool,
) -> FusedStats {
    let n = model.len();
    if scratch.x_new.len() != n || scratch.bands.is_empty() {
        *scratch = FusedScratch::new(model);
    }
    let n_sub = params.substeps.max(1);
    let dt = params.dt();
    let (t0, t1) = (s as f32 / n_sub as f32, (s + 1) as f32 / n_sub as f32);
    scratch.colliders.clear();
    for c in 0..io.shapes_end.len() {
        scratch.colliders.push(KernelCollider::new(
            &io.shapes_end[c],
            &io.shapes_start[c],
            io.bounds[c],
        ));
    }
    let FusedScratch {
        bands,
        x_new,
        v_new,
        colliders,
    } = scratch;
    {
        let ctx = Ctx {
            stencils: &model.stencils,
            garment_scale: io.garment_scale,
            x_old: &state.x,
            xp_old: &state.x_prev,
            v_old: &state.v,
            inv_mass: &state.inv_mass,
            thickness: &model.thickness,
            friction: &model.friction,
            extra: io.extra_normal,
            colliders,
            prepared: io.prepared_end,
            shapes_end: io.shapes_end,
            shapes_start: io.shapes_start,
            bounds: io.bounds,
            g: Vec3A::from(params.gravity),
            dt,
            dt2: dt * dt,
            keep: 1.0 - params.verlet_damping.clamp(0.0, 1.0),
            max_step: params.max_speed * dt,
            verlet: params.integrator == Integrator::Verlet,
            inv_dt: 1.0 / dt,
            margin: params.contact_margin.max(0.0),
            timed,
            isa: io.isa,
        };
        let out = BandOut {
            x: x_new,
            v: v_new,
            gap: io.contact_gap,
            normal: io.contact_normal,
            which: io.contact_collider,
        };
        run_bands(&ctx, bands, out);
    }
    // x_prev ← the old x (what `integrate` sets for every moving particle), x ← the new one,
    // and the old x_prev becomes the next substep's buffer.
    std::mem::swap(&mut state.x_prev, x_new);
    std::mem::swap(&mut state.x, &mut state.x_prev);
    std::mem::swap(&mut state.v, v_new);
    // A massless particle that is not a pin keeps its x_prev (integrate skips it).
    let massless: usize = bands.iter().map(|b| b.massless as usize).sum();
    if massless > model.pins.len() {
        for (i, (xp, old)) in state.x_prev.iter_mut().zip(x_new.iter()).enumerate() {
            if state.inv_mass[i] == 0.0 && !model.is_pinned(i) {
                *xp = *old;
            }
        }
    }
    // Stage `pins` (after the parallel pass: neighbouring bands read the old positions), and
    // the velocity the collide stage derives from the placed pins.
    let inv_dt = 1.0 / dt;
    for (k, &i) in model.pins.iter().enumerate() {
        let (a, b) = (state.pin_prev[k], state.pin_target[k]);
        let i = i as usize;
        state.x_prev[i] = a.lerp(b, t0);
        state.x[i] = a.lerp(b, t1);
        state.v[i] = (state.x[i] - state.x_prev[i]) * inv_dt;
    }
    let mut st = FusedStats::default();
    for b in bands.iter() {
        st.contacts += b.contacts;
        st.speed_limited += b.limited;
        for k in 0..3 {
            st.secs[k] += b.secs[k];
        }
    }
    st
}

/// Runs `bands` (consecutive, covering `out`) in parallel by halving.
fn run_bands(ctx: &Ctx, bands: &mut [Band], out: BandOut) {
    match bands.len() {
        0 => {}
        1 => band(ctx, &mut bands[0], out),
        len => {
            let mid = len / 2;
            let at = bands[mid].first - bands[0].first;
            let (lo, hi) = out.split_at(at);
            let (bl, bh) = bands.split_at_mut(mid);
            rayon::join(|| run_bands(ctx, bl, lo), || run_bands(ctx, bh, hi));
        }
    }
}

fn band(ctx: &Ctx, b: &mut Band, out: BandOut) {
    #[cfg(target_arch = "x86_64")]
    {
        if ctx.isa == KernelIsa::Best
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl")
        {
            // SAFETY: the CPU supports AVX-512F/VL (checked just above).
            unsafe { band_avx512(ctx, b, out) };
            return;
        }
        if ctx.isa != KernelIsa::Portable && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { band_avx2(ctx, b, out) };
            return;
        }
    }
    band_body(ctx, b, out);
}

/// [`band_body`] compiled for AVX-512 (16-wide particle loops, mask registers for the
/// contact tests). Rounds exactly like the other paths, for the same reason as AVX2's.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2")]
unsafe fn band_avx512(ctx: &Ctx, b: &mut Band, out: BandOut) {
    band_body(ctx, b, out);
}

/// [`band_body`] compiled for AVX2: the particle loops become 8-wide. No FMA: Rust never
/// contracts `a * b + c`, so this path rounds exactly like the portable one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn band_avx2(ctx: &Ctx, b: &mut Band, out: BandOut) {
    band_body(ctx, b, out);
}

#[inline(always)]
fn band_body(ctx: &Ctx, b: &mut Band, mut out: BandOut) {
    let clock = |on: bool| on.then(std::time::Instant::now);
    let lap = |t: &mut Option<std::time::Instant>, acc: &mut f64| {
        if let Some(c) = t {
            let now = std::time::Instant::now();
            *acc += (now - *c).as_secs_f64();
            *c = now;
        }
    };
    let mut t = clock(ctx.timed);
    let mut secs = [0.0f64; 3];
    let st = &ctx.stencils[b.stencil];
    let scale = ctx.garment_scale.get(st.garment).copied().unwrap_or(1.0);
    let nx = st.nx;
    let lo = b.r0.saturating_sub(2);
    let own = (b.r1 - b.r0) * nx;
    gather(st, b, ctx.x_old, ctx.v_old);
    springs(st, scale, b);
    lap(&mut t, &mut secs[0]);
    let (mut limited, mut contacts, mut massless) = (0, 0, 0);
    for k0 in (0..own).step_by(BLOCK) {
        let m = BLOCK.min(own - k0);
        // Offset of the block in the band's halo arrays and in the world.
        let o = (b.r0 - lo) * nx + k0;
        let i0 = b.first + k0;
        let (l, z) = integrate(ctx, b, o, k0, i0, m);
        limited += l;
        massless += z;
        lap(&mut t, &mut secs[1]);
        contacts += collide(ctx, b, o, i0, m, &mut out, k0);
        lap(&mut t, &mut secs[2]);
    }
    b.limited = limited;
    b.contacts = contacts;
    b.massless = massless;
    b.secs = secs;
}

/// `v` as its four f32 lanes (x, y, z, and the unused w).
#[inline(always)]
fn lanes(v: &[Vec3A]) -> &[f32] {
    // SAFETY: Vec3A is 16 bytes, 16-aligned, four initialised f32 lanes (glam's SSE2 layout,
    // and its scalar fallback is `#[repr(align(16))]` x, y, z plus padding that `Vec3A::new`
    // fills); the length covers the same bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<f32>(), 4 * v.len()) }
}

/// [`lanes`], mutable. Writes must keep every lane a valid f32 (we write z into w, as
/// `Vec3A::new` does).
#[inline(always)]
fn lanes_mut(v: &mut [Vec3A]) -> &mut [f32] {
    // SAFETY: as in `lanes`; any f32 bits are a valid Vec3A.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<f32>(), 4 * v.len()) }
}
