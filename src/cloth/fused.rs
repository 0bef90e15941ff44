//! The fused substep: for the common world (dry grid garments, a few colliders, no
//! self-collision, no Provot limit, no contact rounds) the stages `forces → integrate → pins →
//! collide` of [`super::step`] run as one pass per band of grid rows instead of one pass each
//! over the whole cloth, bit-identical to them.
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
//! - Integrate and pins: `step::integrate` and `step::pins`, lane by lane (glam's `Vec3A` is
//!   lane-wise IEEE arithmetic and its dot product is `(x·x' + y·y') + z·z'`; Rust never
//!   contracts `a * b + c` into an FMA, and AVX2 alone does not enable FMA).
//! - Collide: the staged stage's result equals testing every collider in index order, twice
//!   if the first pass touched two or more (its BVH lists and per-particle lists only skip
//!   colliders whose box grown by the reach misses the particle, on which the response is a
//!   no-op; `collide_brute_force` in step.rs is that reference and its test asserts the
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

use super::collide::{self, Collider, PreparedShape, Shape};
use super::model::{ClothModel, GridStencil, STENCIL_FAMILIES};
use super::params::{Integrator, SimParams};
use super::state::ClothState;

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
        || (params.tether_slack.is_some() && !model.tethers.is_empty())
        || params.wind.is_active()
        || colliders.len() > MAX_COLLIDERS
        || !model.general.is_empty()
        || model.stencils.len() != model.garments.len()
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
    if wet.adhesion != super::wet::AdhesionMode::Off
        && state
            .wet
            .iter()
            .fold(false, |any, &a| any | (a >= min_wet && a > 0.0))
    {
        return false;
    }
    true
}

/// One collider as the band loops see it at the end of the substep.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// Free side `(x − o)·n ≥ 0`.
    Plane {
        o: [f32; 3],
        n: [f32; 3],
    },
    Sphere {
        c: [f32; 3],
        r: f32,
    },
    /// A capsule (or anything else): per particle through `collide::resolve_prepared`.
    Other,
}

/// The collider's surface motion over the substep that friction measures sliding against
/// (`Shape::surface_displacement`): a constant for a plane (or mismatched shapes: zero), or
/// `dc + n dr` for a sphere.
#[derive(Clone, Copy, Debug)]
enum Surface {
    Fixed([f32; 3]),
    Sphere { dc: [f32; 3], dr: f32 },
}

#[derive(Clone, Copy, Debug)]
struct KernelCollider {
    kind: Kind,
    surface: Surface,
    /// Bounds at the substep's end (infinite for a plane).
    lo: [f32; 3],
    hi: [f32; 3],
}

impl KernelCollider {
    fn new(end: &Shape, start: &Shape, bounds: (Vec3A, Vec3A)) -> Self {
        let a3 = |v: Vec3A| [v.x, v.y, v.z];
        let (kind, surface) = match (*end, *start) {
            (Shape::Plane { point, normal }, _) => (
                Kind::Plane {
                    o: a3(point),
                    n: a3(normal),
                },
                // For planes the normal argument is unused.
                Surface::Fixed(a3(end.surface_displacement(start, Vec3A::ZERO, 0.0))),
            ),
            (
                Shape::Sphere { centre, radius },
                Shape::Sphere {
                    centre: c0,
                    radius: r0,
                },
            ) => (
                Kind::Sphere {
                    c: a3(centre),
                    r: radius,
                },
                Surface::Sphere {
                    dc: a3(centre - c0),
                    dr: radius - r0,
                },
            ),
            (Shape::Sphere { centre, radius }, _) => (
                Kind::Sphere {
                    c: a3(centre),
                    r: radius,
                },
                Surface::Fixed([0.0; 3]),
            ),
            _ => (Kind::Other, Surface::Fixed([0.0; 3])),
        };
        KernelCollider {
            kind,
            surface,
            lo: a3(bounds.0),
            hi: a3(bounds.1),
        }
    }
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

/// Copies rows `r0 − 2 .. r1 + 2` of the stencil's positions and velocities into the band's
/// structure-of-arrays scratch.
#[inline(always)]
fn gather(st: &GridStencil, b: &mut Band, x: &[Vec3A], v: &[Vec3A]) {
    let nx = st.nx;
    let lo = b.r0.saturating_sub(2);
    let hi = (b.r1 + 2).min(st.ny);
    let span = (hi - lo) * nx;
    let from = st.first + lo * nx;
    // Strided loads of the f32 lanes (the vectoriser de-interleaves them).
    let (xs, vs) = (
        &lanes(x)[4 * from..4 * (from + span)],
        &lanes(v)[4 * from..4 * (from + span)],
    );
    let [px, py, pz, vx, vy, vz] = &mut b.pv;
    let (px, py, pz) = (&mut px[..span], &mut py[..span], &mut pz[..span]);
    let (vx, vy, vz) = (&mut vx[..span], &mut vy[..span], &mut vz[..span]);
    for i in 0..span {
        px[i] = xs[4 * i];
        py[i] = xs[4 * i + 1];
        pz[i] = xs[4 * i + 2];
        vx[i] = vs[4 * i];
        vy[i] = vs[4 * i + 1];
        vz[i] = vs[4 * i + 2];
    }
}

/// `forces::spring_row`: the force on end a of each spring of one family row (a
/// [`SpringRow`]), handed to `$emit(j, [fx, fy, fz])`. A macro, not a function taking a
/// closure: closures do not inherit `band_avx2`'s target feature, so a closure here is not
/// inlined and the loop stays scalar.
macro_rules! spring_row {
    ($r:expr, |$j:ident, $f:ident| $emit:block) => {{
        let r: &SpringRow = $r;
        let m = r.rest.len();
        let (k, kd, rest) = (r.k, r.kd, r.rest);
        let (xa0, xa1, xa2) = (&r.xa[0][..m], &r.xa[1][..m], &r.xa[2][..m]);
        let (xb0, xb1, xb2) = (&r.xb[0][..m], &r.xb[1][..m], &r.xb[2][..m]);
        let (va0, va1, va2) = (&r.va[0][..m], &r.va[1][..m], &r.va[2][..m]);
        let (vb0, vb1, vb2) = (&r.vb[0][..m], &r.vb[1][..m], &r.vb[2][..m]);
        for $j in 0..m {
            let (dx, dy, dz) = (xb0[$j] - xa0[$j], xb1[$j] - xa1[$j], xb2[$j] - xa2[$j]);
            let l2 = dx * dx + dy * dy + dz * dz;
            let dvd =
                (vb0[$j] - va0[$j]) * dx + (vb1[$j] - va1[$j]) * dy + (vb2[$j] - va2[$j]) * dz;
            let degenerate = l2 < 1e-24;
            let inv_l = 1.0 / (if degenerate { 1.0 } else { l2 }).sqrt();
            let stretch = l2 * inv_l - rest[$j];
            let rate = dvd * inv_l;
            let c = inv_l * (k * stretch + kd * rate);
            let c = if degenerate { 0.0 } else { c };
            let $f = [dx * c, dy * c, dz * c];
            $emit
        }
    }};
}

/// The spring forces on the band's rows into `b.acc`: `forces::springs_fast`'s stencil kernel
/// (same rows, same family order, same expressions), so every sum is bit-identical.
///
/// That kernel writes each family row's forces to a scratch row, adds it at end a's particles,
/// then subtracts it at end b's. Here a family whose two ends lie in different grid rows adds
/// and subtracts in the spring loop itself (its a row and b row are disjoint, so each particle
/// gets at most one term of the family row, in the same order as before); a family along a row
/// (ends d = 1 or 2 columns apart) merges its two passes into one, `(acc + t[p − a]) − t[p − b]`,
/// which is the two passes' order per particle. That skips a store and two reloads of the
/// scratch and one read-modify-write pass over the accumulators per spring (callgrind: see the
/// commit message).
#[inline(always)]
fn springs(st: &GridStencil, scale: f32, b: &mut Band) {
    let (nx, ny) = (st.nx, st.ny);
    let (r0, r1) = (b.r0, b.r1);
    let lo = r0.saturating_sub(2);
    let own = (r1 - r0) * nx;
    let Band { pv, acc, tmp, .. } = b;
    for a in acc.iter_mut() {
        a[..own].fill(0.0);
    }
    for s in lo..r1 {
        for (fi, fam) in STENCIL_FAMILIES.iter().enumerate() {
            let (rows, cols) = fam.extent(nx, ny);
            if s >= rows || cols == 0 {
                continue;
            }
            let (ra, rb) = (s + fam.a.0, s + fam.b.0);
            let a_in = (r0..r1).contains(&ra);
            let b_in = (r0..r1).contains(&rb);
            if !a_in && !b_in {
                continue;
            }
            let ia = (ra - lo) * nx + fam.a.1;
            let ib = (rb - lo) * nx + fam.b.1;
            let rest = &st.rest[fi][s * nx..s * nx + cols];
            let sl = |k: usize, at: usize| &pv[k][at..at + cols];
            let row = SpringRow {
                xa: [sl(0, ia), sl(1, ia), sl(2, ia)],
                xb: [sl(0, ib), sl(1, ib), sl(2, ib)],
                va: [sl(3, ia), sl(4, ia), sl(5, ia)],
                vb: [sl(3, ib), sl(4, ib), sl(5, ib)],
                rest,
                k: st.k[fi] * scale,
                kd: st.kd[fi] * scale,
            };
            // Offsets in the band's own rows (meaningful only for an end that is in them).
            let oa = ra.wrapping_sub(r0).wrapping_mul(nx).wrapping_add(fam.a.1);
            let ob = rb.wrapping_sub(r0).wrapping_mul(nx).wrapping_add(fam.b.1);
            if ra == rb {
                // Along a row (a_in == b_in here): forces to the scratch row, then one pass.
                let d = fam.b.1 - fam.a.1;
                let [tx, ty, tz] = &mut *tmp;
                let (tx, ty, tz) = (&mut tx[..cols], &mut ty[..cols], &mut tz[..cols]);
                row_to(&row, tx, ty, tz);
                for (a, t) in acc.iter_mut().zip(tmp.iter()) {
                    merge_row(&mut a[oa..oa + d + cols], &t[..cols], d);
                }
            } else if a_in && b_in {
                let [ax, ay, az] = acc;
                let (ax, bx) = ax.split_at_mut(ob);
                let (ay, by) = ay.split_at_mut(ob);
                let (az, bz) = az.split_at_mut(ob);
                let (ax, ay, az) = (
                    &mut ax[oa..oa + cols],
                    &mut ay[oa..oa + cols],
                    &mut az[oa..oa + cols],
                );
                let (bx, by, bz) = (&mut bx[..cols], &mut by[..cols], &mut bz[..cols]);
                row_add_sub(&row, ax, ay, az, bx, by, bz);
            } else if a_in {
                let [ax, ay, az] = acc;
                let (ax, ay, az) = (
                    &mut ax[oa..oa + cols],
                    &mut ay[oa..oa + cols],
                    &mut az[oa..oa + cols],
                );
                row_add(&row, ax, ay, az);
            } else {
                let [bx, by, bz] = acc;
                let (bx, by, bz) = (
                    &mut bx[ob..ob + cols],
                    &mut by[ob..ob + cols],
                    &mut bz[ob..ob + cols],
                );
                row_sub(&row, bx, by, bz);
            }
        }
    }
}

// The four uses of `spring_row!`, as functions whose outputs are separate `&mut` parameters:
// LLVM keeps their no-alias guarantee through inlining, so the vectorised loops need no
// run-time overlap checks against the six input rows (callgrind: those checks cost ~7
// instructions per spring when the loop was written inline in `springs`).

/// The forces to a scratch row.
#[inline(always)]
fn row_to(r: &SpringRow, tx: &mut [f32], ty: &mut [f32], tz: &mut [f32]) {
    let m = r.rest.len();
    let (tx, ty, tz) = (&mut tx[..m], &mut ty[..m], &mut tz[..m]);
    spring_row!(r, |j, f| {
        tx[j] = f[0];
        ty[j] = f[1];
        tz[j] = f[2];
    });
}

/// Added at end a's particles, subtracted at end b's (rows `a` and `b`, disjoint).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn row_add_sub(
    r: &SpringRow,
    ax: &mut [f32],
    ay: &mut [f32],
    az: &mut [f32],
    bx: &mut [f32],
    by: &mut [f32],
    bz: &mut [f32],
) {
    let m = r.rest.len();
    let (ax, ay, az) = (&mut ax[..m], &mut ay[..m], &mut az[..m]);
    let (bx, by, bz) = (&mut bx[..m], &mut by[..m], &mut bz[..m]);
    spring_row!(r, |j, f| {
        ax[j] += f[0];
        ay[j] += f[1];
        az[j] += f[2];
        bx[j] -= f[0];
        by[j] -= f[1];
        bz[j] -= f[2];
    });
}

/// Added at end a's particles only (end b in the halo).
#[inline(always)]
fn row_add(r: &SpringRow, ax: &mut [f32], ay: &mut [f32], az: &mut [f32]) {
    let m = r.rest.len();
    let (ax, ay, az) = (&mut ax[..m], &mut ay[..m], &mut az[..m]);
    spring_row!(r, |j, f| {
        ax[j] += f[0];
        ay[j] += f[1];
        az[j] += f[2];
    });
}

/// Subtracted at end b's particles only (end a in the halo).
#[inline(always)]
fn row_sub(r: &SpringRow, bx: &mut [f32], by: &mut [f32], bz: &mut [f32]) {
    let m = r.rest.len();
    let (bx, by, bz) = (&mut bx[..m], &mut by[..m], &mut bz[..m]);
    spring_row!(r, |j, f| {
        bx[j] -= f[0];
        by[j] -= f[1];
        bz[j] -= f[2];
    });
}

/// `a[j] += t[j]` then `a[j + d] −= t[j]` for every j (the two passes of the staged kernel for
/// a family along a row, ends `d` columns apart), in one pass with the same order per element.
#[inline(always)]
fn merge_row(a: &mut [f32], t: &[f32], d: usize) {
    let cols = t.len();
    let ov = cols.saturating_sub(d);
    let head = d.min(cols);
    for (a, t) in a[..head].iter_mut().zip(&t[..head]) {
        *a += *t;
    }
    // Elements with both terms: end a of spring d + j, end b of spring j.
    for ((a, ta), tb) in a[d..d + ov].iter_mut().zip(&t[d..d + ov]).zip(&t[..ov]) {
        *a = (*a + *ta) - *tb;
    }
    for (a, t) in a[d + ov..d + cols].iter_mut().zip(&t[ov..cols]) {
        *a -= *t;
    }
}

/// One family row's springs: both ends' positions and velocities (x, y, z rows), rest lengths,
/// stiffness and dashpot.
struct SpringRow<'a> {
    xa: [&'a [f32]; 3],
    xb: [&'a [f32]; 3],
    va: [&'a [f32]; 3],
    vb: [&'a [f32]; 3],
    rest: &'a [f32],
    k: f32,
    kd: f32,
}

/// Stage `integrate` on one block of the band (`step::integrate`, lane by lane): the new
/// positions into `b.cur`. `o` is the block's offset in the band's halo arrays, `k` in its own
/// rows, `i0` in the world. Returns the speed-limited and the massless particles.
#[inline(always)]
fn integrate(ctx: &Ctx, b: &mut Band, o: usize, k: usize, i0: usize, m: usize) -> (u32, u32) {
    let [px, py, pz, vx, vy, vz] = &b.pv;
    let (px, py, pz) = (&px[o..o + m], &py[o..o + m], &pz[o..o + m]);
    let (vx, vy, vz) = (&vx[o..o + m], &vy[o..o + m], &vz[o..o + m]);
    let [fx, fy, fz] = &b.acc;
    let (fx, fy, fz) = (&fx[k..k + m], &fy[k..k + m], &fz[k..k + m]);
    let [cx, cy, cz] = &mut b.cur;
    let (cx, cy, cz) = (&mut cx[..m], &mut cy[..m], &mut cz[..m]);
    let w = &ctx.inv_mass[i0..i0 + m];
    let (g, dt, dt2, keep) = (ctx.g, ctx.dt, ctx.dt2, ctx.keep);
    let ms2 = ctx.max_step * ctx.max_step;
    let max_step = ctx.max_step;
    let (mut limited, mut massless) = (0u32, 0u32);
    // One loop per integrator, so the Euler loop reads no x_prev.
    macro_rules! body {
        ($step:expr) => {
            for j in 0..m {
                let wj = w[j];
                let (ax, ay, az) = (g.x + fx[j] * wj, g.y + fy[j] * wj, g.z + fz[j] * wj);
                let (sx, sy, sz) = $step(j, ax, ay, az);
                let l2 = sx * sx + sy * sy + sz * sz;
                // Negated on purpose, as in `step::integrate`: NaN is too far too.
                #[allow(clippy::neg_cmp_op_on_partial_ord)]
                let too_far = !(l2 <= ms2);
                let fin = l2.is_finite();
                let f = max_step / l2.sqrt();
                let (sx, sy, sz) = if too_far {
                    if fin {
                        (sx * f, sy * f, sz * f)
                    } else {
                        (0.0, 0.0, 0.0)
                    }
                } else {
                    (sx, sy, sz)
                };
                let moving = wj != 0.0;
                limited += (too_far && moving) as u32;
                massless += !moving as u32;
                cx[j] = if moving { px[j] + sx } else { px[j] };
                cy[j] = if moving { py[j] + sy } else { py[j] };
                cz[j] = if moving { pz[j] + sz } else { pz[j] };
            }
        };
    }
    if ctx.verlet {
        let xp = &lanes(ctx.xp_old)[4 * i0..4 * (i0 + m)];
        body!(|j: usize, ax: f32, ay: f32, az: f32| (
            (px[j] - xp[4 * j]) * keep + ax * dt2,
            (py[j] - xp[4 * j + 1]) * keep + ay * dt2,
            (pz[j] - xp[4 * j + 2]) * keep + az * dt2,
        ));
    } else {
        body!(|j: usize, ax: f32, ay: f32, az: f32| (
            (vx[j] + ax * dt) * dt,
            (vy[j] + ay * dt) * dt,
            (vz[j] + az * dt) * dt,
        ));
    }
    (limited, massless)
}

/// Stage `collide` on one block of the band, then its write-back of positions, velocities
/// and contact records into `out` from `k`. Returns the number of particles in contact.
#[inline(always)]
fn collide(
    ctx: &Ctx,
    b: &mut Band,
    o: usize,
    i0: usize,
    m: usize,
    out: &mut BandOut,
    k: usize,
) -> u32 {
    let w = &ctx.inv_mass[i0..i0 + m];
    let th = &ctx.thickness[i0..i0 + m];
    let mu = &ctx.friction[i0..i0 + m];
    let en = &ctx.extra[i0..i0 + m];
    let margin = ctx.margin;
    b.gap[..m].fill(f32::INFINITY);
    for a in b.nrm.iter_mut() {
        a[..m].fill(0.0);
    }
    b.which[..m].fill(u32::MAX);
    b.touched[..m].fill(0);
    let [px, py, pz, ..] = &b.pv;
    let start = [&px[o..o + m], &py[o..o + m], &pz[o..o + m]];
    for (ci, col) in ctx.colliders.iter().enumerate() {
        let lanes = Lanes {
            start,
            w,
            th,
            mu,
            en,
            margin,
            ci: ci as u32,
            lo: col.lo,
            hi: col.hi,
            surface: col.surface,
        };
        let [cx, cy, cz] = &mut b.cur;
        let [nx, ny, nz] = &mut b.nrm;
        let st = LaneState {
            cur: [&mut cx[..m], &mut cy[..m], &mut cz[..m]],
            gap: &mut b.gap[..m],
            nrm: [&mut nx[..m], &mut ny[..m], &mut nz[..m]],
            which: &mut b.which[..m],
            touched: &mut b.touched[..m],
        };
        match col.kind {
            Kind::Plane { o, n } => lanes.plane(st, o, n),
            Kind::Sphere { c, r } => lanes.sphere(st, c, r),
            Kind::Other => {
                for j in 0..m {
                    if w[j] > 0.0 {
                        let mut x = Vec3A::new(st.cur[0][j], st.cur[1][j], st.cur[2][j]);
                        let xs = Vec3A::new(start[0][j], start[1][j], start[2][j]);
                        if let Some(h) = apply(ctx, ci, &mut x, xs, th[j], mu[j], en[j]) {
                            st.touched[j] += 1;
                            if h.gap < st.gap[j] {
                                st.gap[j] = h.gap;
                                st.nrm[0][j] = h.normal.x;
                                st.nrm[1][j] = h.normal.y;
                                st.nrm[2][j] = h.normal.z;
                                st.which[j] = ci as u32;
                            }
                        }
                        st.cur[0][j] = x.x;
                        st.cur[1][j] = x.y;
                        st.cur[2][j] = x.z;
                    }
                }
            }
        }
    }
    // The second pass, for particles squeezed between two colliders: every collider again,
    // per particle.
    // A vectorised max first: the per-particle scan below is scalar and nearly always finds
    // nobody (callgrind: ~9 instructions per particle-substep on the N = 100 bench).
    let squeezed = || b.touched[..m].iter().fold(0u32, |a, &t| a.max(t)) >= 2;
    if ctx.colliders.len() >= 2 && squeezed() {
        for j in 0..m {
            if b.touched[j] < 2 {
                continue;
            }
            let mut x = Vec3A::new(b.cur[0][j], b.cur[1][j], b.cur[2][j]);
            let xs = Vec3A::new(start[0][j], start[1][j], start[2][j]);
            for ci in 0..ctx.colliders.len() {
                if let Some(h) = apply(ctx, ci, &mut x, xs, th[j], mu[j], en[j]) {
                    if h.gap < b.gap[j] {
                        b.gap[j] = h.gap;
                        b.nrm[0][j] = h.normal.x;
                        b.nrm[1][j] = h.normal.y;
                        b.nrm[2][j] = h.normal.z;
                        b.which[j] = ci as u32;
                    }
                }
            }
            b.cur[0][j] = x.x;
            b.cur[1][j] = x.y;
            b.cur[2][j] = x.z;
        }
    }
    // Write-back, lane-interleaved stores (w lane = z, as `Vec3A::new` does): x, v from the
    // segment start (the old x), contact records.
    let inv_dt = ctx.inv_dt;
    let [cx, cy, cz] = &b.cur;
    let (cx, cy, cz) = (&cx[..m], &cy[..m], &cz[..m]);
    let [nx, ny, nz] = &b.nrm;
    let (nx, ny, nz) = (&nx[..m], &ny[..m], &nz[..m]);
    let (gap, which) = (&b.gap[..m], &b.which[..m]);
    let xo = &mut lanes_mut(out.x)[4 * k..4 * (k + m)];
    let vo = &mut lanes_mut(out.v)[4 * k..4 * (k + m)];
    let no = &mut lanes_mut(out.normal)[4 * k..4 * (k + m)];
    let (go, wo) = (&mut out.gap[k..k + m], &mut out.which[k..k + m]);
    let mut contacts = 0u32;
    let mut massless = false;
    for j in 0..m {
        xo[4 * j] = cx[j];
        xo[4 * j + 1] = cy[j];
        xo[4 * j + 2] = cz[j];
        xo[4 * j + 3] = cz[j];
        let vz = (cz[j] - start[2][j]) * inv_dt;
        vo[4 * j] = (cx[j] - start[0][j]) * inv_dt;
        vo[4 * j + 1] = (cy[j] - start[1][j]) * inv_dt;
        vo[4 * j + 2] = vz;
        vo[4 * j + 3] = vz;
        no[4 * j] = nx[j];
        no[4 * j + 1] = ny[j];
        no[4 * j + 2] = nz[j];
        no[4 * j + 3] = nz[j];
        go[j] = gap[j];
        wo[j] = which[j];
        contacts += (which[j] != u32::MAX) as u32;
        massless |= w[j] == 0.0;
    }
    // A massless particle kept its x_prev (pins are placed after the pass anyway).
    if massless {
        for j in 0..m {
            if w[j] == 0.0 {
                let x = Vec3A::new(cx[j], cy[j], cz[j]);
                out.v[k + j] = (x - ctx.xp_old[i0 + j]) * inv_dt;
            }
        }
    }
    contacts
}

/// One collider against one particle, as the staged stage's `apply`: the box test, then
/// `collide::resolve_prepared`.
#[inline]
fn apply(
    ctx: &Ctx,
    ci: usize,
    x: &mut Vec3A,
    xs: Vec3A,
    t: f32,
    mu: f32,
    en: f32,
) -> Option<collide::Contact> {
    let reach = t + ctx.margin;
    let (blo, bhi) = ctx.bounds[ci];
    if x.cmplt(blo - reach).any() || x.cmpgt(bhi + reach).any() {
        return None;
    }
    collide::resolve_prepared(
        x,
        xs,
        &ctx.prepared[ci],
        &ctx.shapes_end[ci],
        &ctx.shapes_start[ci],
        t,
        ctx.margin,
        mu,
        en,
    )
}

/// Per-particle inputs of one collider's loop.
struct Lanes<'a> {
    /// Start of the substep segment (x_prev after integrate): the old position.
    start: [&'a [f32]; 3],
    w: &'a [f32],
    th: &'a [f32],
    mu: &'a [f32],
    en: &'a [f32],
    margin: f32,
    ci: u32,
    lo: [f32; 3],
    hi: [f32; 3],
    surface: Surface,
}

/// Per-particle state the collider loops update.
struct LaneState<'a> {
    cur: [&'a mut [f32]; 3],
    gap: &'a mut [f32],
    nrm: [&'a mut [f32]; 3],
    which: &'a mut [u32],
    touched: &'a mut [u32],
}

impl Lanes<'_> {
    /// The per-particle box test of the staged stage (`outside`): exact, the box grown by the
    /// reach holds every point within reach.
    #[inline(always)]
    fn outside(&self, x: f32, y: f32, z: f32, reach: f32) -> bool {
        let (lo, hi) = (self.lo, self.hi);
        (x < lo[0] - reach)
            | (y < lo[1] - reach)
            | (z < lo[2] - reach)
            | (x > hi[0] + reach)
            | (y > hi[1] + reach)
            | (z > hi[2] + reach)
    }

    /// `collide::respond` for the lanes within reach, and the nearest-contact record; `dist`
    /// is the signed distance and `n` the normal of `closest_within`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn respond(
        &self,
        st: &mut LaneState,
        j: usize,
        within: bool,
        dist: f32,
        n: [f32; 3],
        p: [f32; 3],
    ) {
        let t = self.th[j];
        let depth = t - dist;
        // Negated on purpose, as in `respond`'s `depth <= 0` early return: NaN pushes.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let push = within & !(depth <= 0.0);
        // x += n depth
        let q = [
            p[0] + n[0] * depth,
            p[1] + n[1] * depth,
            p[2] + n[2] * depth,
        ];
        let ds = match self.surface {
            Surface::Fixed(d) => d,
            Surface::Sphere { dc, dr } => [dc[0] + n[0] * dr, dc[1] + n[1] * dr, dc[2] + n[2] * dr],
        };
        // d_rel = (x − x_start) − d_surface; d_t = d_rel − n (d_rel·n)
        let s = self.start;
        let dr = [
            (q[0] - s[0][j]) - ds[0],
            (q[1] - s[1][j]) - ds[1],
            (q[2] - s[2][j]) - ds[2],
        ];
        let dn = dr[0] * n[0] + dr[1] * n[1] + dr[2] * n[2];
        let d_t = [dr[0] - n[0] * dn, dr[1] - n[1] * dn, dr[2] - n[2] * dn];
        let lt = (d_t[0] * d_t[0] + d_t[1] * d_t[1] + d_t[2] * d_t[2]).sqrt();
        let keep = 1.0 - self.mu[j] * (depth + self.en[j]) / lt;
        // f32::max(keep, 0.0), NaN → 0 (keep is never −0: 1 − a rounds to +0).
        let keep = if keep > 0.0 { keep } else { 0.0 };
        let f = 1.0 - keep;
        let slide = lt > 0.0;
        let r = if slide {
            [q[0] - d_t[0] * f, q[1] - d_t[1] * f, q[2] - d_t[2] * f]
        } else {
            q
        };
        let r = if push { r } else { p };
        st.cur[0][j] = r[0];
        st.cur[1][j] = r[1];
        st.cur[2][j] = r[2];
        let gap = if push { t } else { dist };
        let nearer = within & (gap < st.gap[j]);
        st.gap[j] = if nearer { gap } else { st.gap[j] };
        st.nrm[0][j] = if nearer { n[0] } else { st.nrm[0][j] };
        st.nrm[1][j] = if nearer { n[1] } else { st.nrm[1][j] };
        st.nrm[2][j] = if nearer { n[2] } else { st.nrm[2][j] };
        st.which[j] = if nearer { self.ci } else { st.which[j] };
        st.touched[j] += within as u32;
    }

    /// A plane (`PreparedShape::closest_within`'s plane case) against every lane.
    #[inline(always)]
    fn plane(&self, mut st: LaneState, o: [f32; 3], n: [f32; 3]) {
        for j in 0..st.gap.len() {
            let p = [st.cur[0][j], st.cur[1][j], st.cur[2][j]];
            let reach = self.th[j] + self.margin;
            let dist = (p[0] - o[0]) * n[0] + (p[1] - o[1]) * n[1] + (p[2] - o[2]) * n[2];
            let within =
                (self.w[j] > 0.0) & !self.outside(p[0], p[1], p[2], reach) & (dist < reach);
            self.respond(&mut st, j, within, dist, n, p);
        }
    }

    /// A sphere (`PreparedShape::closest_within`'s sphere case) against every lane.
    #[inline(always)]
    fn sphere(&self, mut st: LaneState, c: [f32; 3], r: f32) {
        for j in 0..st.gap.len() {
            let p = [st.cur[0][j], st.cur[1][j], st.cur[2][j]];
            let reach = self.th[j] + self.margin;
            let d = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
            let l2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let out = r + reach;
            let l = l2.sqrt();
            let dist = l - r;
            // Negated on purpose: `closest_within` rejects with `>=`, so NaN is within.
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            let within = (self.w[j] > 0.0)
                & !self.outside(p[0], p[1], p[2], reach)
                & !(l2 >= out * out)
                & !(dist >= reach);
            let nz = l > 1e-12;
            let n = if nz {
                [d[0] / l, d[1] / l, d[2] / l]
            } else {
                [0.0, 1.0, 0.0]
            };
            self.respond(&mut st, j, within, dist, n, p);
        }
    }
}
