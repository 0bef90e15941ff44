//! Forces: springs with damping projected on the spring, wind per triangle (PHYSICS.md §1). The
//! stability bound that decides how stiff a spring the explicit step can carry is computed from
//! the model ([`super::model::stiffness_spectrum`]).
//! Gravity is added as an acceleration in the integrator.

use rayon::prelude::*;

use crate::math::{Vec3, Vec3A, Vec4};

use super::constraints::simd_available;
use super::model::{ClothModel, EdgeSet, GridStencil, STENCIL_FAMILIES};
use super::params::Wind;

/// Adds the force of spring `e` to `fa` (on end a) and its opposite to `fb`:
/// `F_a = k (l − l0) u + k_d ((v_b − v_a)·u) u` with `u = (x_b − x_a)/l` (Provot 1995;
/// Park & Byun 2019 Eq. 1). The dashpot acts along the spring only, so rigid rotation is not
/// damped.
#[inline(always)]
fn spring_force(xa: Vec3A, xb: Vec3A, va: Vec3A, vb: Vec3A, rest: f32, k: f32, kd: f32) -> Vec3A {
    let d = xb - xa;
    let l2 = d.length_squared();
    if l2 < 1e-24 {
        return Vec3A::ZERO;
    }
    let inv_l = l2.sqrt().recip();
    let stretch = l2 * inv_l - rest;
    let rate = (vb - va).dot(d) * inv_l;
    d * (inv_l * (k * stretch + kd * rate))
}

/// The reference kernel: zeroes `f` and accumulates every spring of `model.springs` (with the
/// stiffnesses `k`, `kd` indexed like it) into it, edge by edge. [`springs_fast`] computes the
/// same forces; this one is kept as the reference the tests compare it with.
pub fn springs(
    model: &ClothModel,
    x: &[Vec3A],
    v: &[Vec3A],
    k: &[f32],
    kd: &[f32],
    f: &mut [Vec3A],
) {
    edge_springs(&model.springs, model.chunk_size, x, v, k, kd, f);
}

/// Scratch of the fast kernel: one [`BandScratch`] per band of each grid stencil.
#[derive(Clone, Debug, Default)]
pub struct SpringScratch {
    bands: Vec<Vec<BandScratch>>,
}

impl SpringScratch {
    pub fn new(model: &ClothModel) -> Self {
        Self {
            bands: model
                .stencils
                .iter()
                .map(|st| vec![BandScratch::new(st); st.bands()])
                .collect(),
        }
    }
}

/// Structure-of-arrays copies of one band of a grid (plus the two rows on each side its
/// springs reach), its force accumulators and one row of per-spring forces.
#[derive(Clone, Debug, Default)]
pub struct BandScratch {
    /// Positions x, y, z and velocities x, y, z of rows `lo..hi`, row-major.
    pv: [Vec<f32>; 6],
    /// Force x, y, z on the band's own rows.
    acc: [Vec<f32>; 3],
    /// Force of each spring of one family row.
    tmp: [Vec<f32>; 3],
}

impl BandScratch {
    fn new(st: &GridStencil) -> Self {
        let halo = (st.band_rows + 4).min(st.ny) * st.nx;
        let own = st.band_rows.min(st.ny) * st.nx;
        Self {
            pv: std::array::from_fn(|_| vec![0.0; halo]),
            acc: std::array::from_fn(|_| vec![0.0; own]),
            tmp: std::array::from_fn(|_| vec![0.0; st.nx]),
        }
    }
}

/// The fast kernel: the same forces as [`springs`] (to rounding: only the order of the sums
/// differs), for the stability scale `garment_scale` of each garment. Grid garments run as a
/// stencil ([`GridStencil`]): each spring family is a shifted pair of contiguous rows, computed
/// eight springs at a time (AVX2 where the CPU has it; the same expressions in the same order
/// otherwise, so both paths give bit-identical forces) with no index lists and no scatter;
/// bands of rows run in parallel, each summing the forces on its own rows (recomputing the
/// two rows of springs above it), so a particle's sum is in the same order whatever the
/// banding and the thread count. Other garments run on the edge list `model.general` with
/// their effective stiffnesses `k_general`, `kd_general`.
#[allow(clippy::too_many_arguments)]
pub fn springs_fast(
    model: &ClothModel,
    x: &[Vec3A],
    v: &[Vec3A],
    garment_scale: &[f32],
    k_general: &[f32],
    kd_general: &[f32],
    scratch: &mut SpringScratch,
    f: &mut [Vec3A],
) {
    edge_springs(
        &model.general,
        model.chunk_size,
        x,
        v,
        k_general,
        kd_general,
        f,
    );
    for (st, bands) in model.stencils.iter().zip(scratch.bands.iter_mut()) {
        let range = st.first..st.first + st.len();
        let scale = garment_scale.get(st.garment).copied().unwrap_or(1.0);
        let (xg, vg, fg) = (&x[range.clone()], &v[range.clone()], &mut f[range]);
        let rows = st.band_rows * st.nx;
        if bands.len() == 1 {
            stencil_band(st, scale, 0, xg, vg, &mut bands[0], fg);
        } else {
            fg.par_chunks_mut(rows)
                .zip(bands.par_iter_mut())
                .enumerate()
                .for_each(|(b, (fb, sc))| stencil_band(st, scale, b, xg, vg, sc, fb));
        }
    }
}

/// Forces on the rows of band `band` of a grid stencil, written to `out` (those rows).
fn stencil_band(
    st: &GridStencil,
    scale: f32,
    band: usize,
    x: &[Vec3A],
    v: &[Vec3A],
    sc: &mut BandScratch,
    out: &mut [Vec3A],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { stencil_band_avx2(st, scale, band, x, v, sc, out) };
            return;
        }
    }
    stencil_band_body(st, scale, band, x, v, sc, out);
}

/// [`stencil_band_body`] compiled for AVX2: the row loops become 8-wide. No FMA: Rust never
/// contracts `a * b + c`, so this path rounds exactly like the portable one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn stencil_band_avx2(
    st: &GridStencil,
    scale: f32,
    band: usize,
    x: &[Vec3A],
    v: &[Vec3A],
    sc: &mut BandScratch,
    out: &mut [Vec3A],
) {
    stencil_band_body(st, scale, band, x, v, sc, out);
}

#[inline(always)]
fn stencil_band_body(
    st: &GridStencil,
    scale: f32,
    band: usize,
    x: &[Vec3A],
    v: &[Vec3A],
    sc: &mut BandScratch,
    out: &mut [Vec3A],
) {
    let (nx, ny) = (st.nx, st.ny);
    let r0 = band * st.band_rows;
    let r1 = (r0 + st.band_rows).min(ny);
    // Rows whose springs reach the band: anchors from r0 − 2; ends up to r1 + 1.
    let lo = r0.saturating_sub(2);
    let hi = (r1 + 2).min(ny);
    let BandScratch { pv, acc, tmp } = sc;
    let span = (hi - lo) * nx;
    {
        let [px, py, pz, vx, vy, vz] = pv;
        let (px, py, pz) = (&mut px[..span], &mut py[..span], &mut pz[..span]);
        let (vx, vy, vz) = (&mut vx[..span], &mut vy[..span], &mut vz[..span]);
        let (xs, vs) = (&x[lo * nx..hi * nx], &v[lo * nx..hi * nx]);
        for i in 0..span {
            px[i] = xs[i].x;
            py[i] = xs[i].y;
            pz[i] = xs[i].z;
            vx[i] = vs[i].x;
            vy[i] = vs[i].y;
            vz[i] = vs[i].z;
        }
    }
    let own = (r1 - r0) * nx;
    for a in acc.iter_mut() {
        a[..own].fill(0.0);
    }
    // Spring rows in ascending order, families in their fixed order within a row: each
    // particle's forces are summed in the same order whichever band holds it.
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
            spring_row(
                [
                    &pv[0][ia..ia + cols],
                    &pv[1][ia..ia + cols],
                    &pv[2][ia..ia + cols],
                ],
                [
                    &pv[0][ib..ib + cols],
                    &pv[1][ib..ib + cols],
                    &pv[2][ib..ib + cols],
                ],
                [
                    &pv[3][ia..ia + cols],
                    &pv[4][ia..ia + cols],
                    &pv[5][ia..ia + cols],
                ],
                [
                    &pv[3][ib..ib + cols],
                    &pv[4][ib..ib + cols],
                    &pv[5][ib..ib + cols],
                ],
                rest,
                st.k[fi] * scale,
                st.kd[fi] * scale,
                tmp,
            );
            if a_in {
                let o = (ra - r0) * nx + fam.a.1;
                for (a, t) in acc.iter_mut().zip(tmp.iter()) {
                    add_row(&mut a[o..o + cols], &t[..cols]);
                }
            }
            if b_in {
                let o = (rb - r0) * nx + fam.b.1;
                for (a, t) in acc.iter_mut().zip(tmp.iter()) {
                    sub_row(&mut a[o..o + cols], &t[..cols]);
                }
            }
        }
    }
    let [fx, fy, fz] = acc;
    for (i, o) in out[..own].iter_mut().enumerate() {
        *o = Vec3A::new(fx[i], fy[i], fz[i]);
    }
}

/// The force on end a of each spring of one family row (`F_a`, see [`spring_force`]; end b
/// gets `−F_a`), written to `out`. Every slice has the row's length.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn spring_row(
    xa: [&[f32]; 3],
    xb: [&[f32]; 3],
    va: [&[f32]; 3],
    vb: [&[f32]; 3],
    rest: &[f32],
    k: f32,
    kd: f32,
    out: &mut [Vec<f32>; 3],
) {
    let m = rest.len();
    let [ox, oy, oz] = out;
    let (ox, oy, oz) = (&mut ox[..m], &mut oy[..m], &mut oz[..m]);
    let (xa0, xa1, xa2) = (&xa[0][..m], &xa[1][..m], &xa[2][..m]);
    let (xb0, xb1, xb2) = (&xb[0][..m], &xb[1][..m], &xb[2][..m]);
    let (va0, va1, va2) = (&va[0][..m], &va[1][..m], &va[2][..m]);
    let (vb0, vb1, vb2) = (&vb[0][..m], &vb[1][..m], &vb[2][..m]);
    for j in 0..m {
        let (dx, dy, dz) = (xb0[j] - xa0[j], xb1[j] - xa1[j], xb2[j] - xa2[j]);
        let l2 = dx * dx + dy * dy + dz * dz;
        let dvd = (vb0[j] - va0[j]) * dx + (vb1[j] - va1[j]) * dy + (vb2[j] - va2[j]) * dz;
        // Coincident ends exert no force (as in `spring_force`); the select keeps the loop
        // branch-free.
        let degenerate = l2 < 1e-24;
        let inv_l = 1.0 / (if degenerate { 1.0 } else { l2 }).sqrt();
        let stretch = l2 * inv_l - rest[j];
        let rate = dvd * inv_l;
        let c = inv_l * (k * stretch + kd * rate);
        let c = if degenerate { 0.0 } else { c };
        ox[j] = dx * c;
        oy[j] = dy * c;
        oz[j] = dz * c;
    }
}

#[inline(always)]
fn add_row(a: &mut [f32], t: &[f32]) {
    for (a, t) in a.iter_mut().zip(t) {
        *a += *t;
    }
}

#[inline(always)]
fn sub_row(a: &mut [f32], t: &[f32]) {
    for (a, t) in a.iter_mut().zip(t) {
        *a -= *t;
    }
}

/// Zeroes `f` and accumulates the forces of the springs in `set` into it. Chunks of particles
/// run in parallel (each chunk's internal springs write only inside the chunk), then the
/// springs crossing chunks run serially; the summation order is fixed, so the result does not
/// depend on the number of threads. Every spring's force is `spring_force`'s expression, and
/// the forces are summed in edge order, so the AVX2 path and the portable one give the same
/// bits (test `edge_springs_avx2_equals_portable`).
fn edge_springs(
    set: &EdgeSet,
    cs: usize,
    x: &[Vec3A],
    v: &[Vec3A],
    k: &[f32],
    kd: &[f32],
    f: &mut [Vec3A],
) {
    edge_springs_with(set, cs, x, v, k, kd, f, simd_available());
}

/// [`edge_springs`], with the AVX2 kernel or without (`simd`, which must only be true where
/// the CPU has AVX2).
#[allow(clippy::too_many_arguments)]
fn edge_springs_with(
    set: &EdgeSet,
    cs: usize,
    x: &[Vec3A],
    v: &[Vec3A],
    k: &[f32],
    kd: &[f32],
    f: &mut [Vec3A],
    simd: bool,
) {
    assert!(
        x.len() == v.len() && x.len() == f.len(),
        "one velocity and one force per particle"
    );
    let chunk = |c: usize, fc: &mut [Vec3A]| {
        #[cfg(target_arch = "x86_64")]
        if simd {
            // SAFETY: the caller checked that the CPU has AVX2.
            unsafe { edge_chunk_avx2(set, c, cs, x, v, k, kd, fc) };
            return;
        }
        edge_chunk::<false>(set, c, cs, x, v, k, kd, fc);
    };
    if f.len() <= cs {
        chunk(0, f);
    } else {
        f.par_chunks_mut(cs)
            .enumerate()
            .for_each(|(c, fc)| chunk(c, fc));
    }
    for e in set.crossing.clone() {
        let (a, b) = (set.a[e] as usize, set.b[e] as usize);
        let fa = spring_force(x[a], x[b], v[a], v[b], set.rest[e], k[e], kd[e]);
        f[a] += fa;
        f[b] -= fa;
    }
}

/// [`edge_chunk`] compiled for AVX2, with its eight-spring kernel.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn edge_chunk_avx2(
    set: &EdgeSet,
    c: usize,
    cs: usize,
    x: &[Vec3A],
    v: &[Vec3A],
    k: &[f32],
    kd: &[f32],
    fc: &mut [Vec3A],
) {
    edge_chunk::<true>(set, c, cs, x, v, k, kd, fc);
}

/// The springs of chunk `c` (particles `c·cs ..`, forces `fc`), zeroing `fc` first. With
/// `AVX2` (only inside [`edge_chunk_avx2`]) eight springs at a time, then four, then one.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn edge_chunk<const AVX2: bool>(
    set: &EdgeSet,
    c: usize,
    cs: usize,
    x: &[Vec3A],
    v: &[Vec3A],
    k: &[f32],
    kd: &[f32],
    fc: &mut [Vec3A],
) {
    fc.fill(Vec3A::ZERO);
    let base = c * cs;
    // Edges come sorted by `a`: sum a's forces in a register and store once per particle,
    // instead of a read-modify-write chain through memory on every spring.
    let mut cur = usize::MAX;
    let mut acc = Vec3A::ZERO;
    let mut add = |a: usize, b: usize, fa: Vec3A, fc: &mut [Vec3A]| {
        if a != cur {
            if cur != usize::MAX {
                fc[cur - base] += acc;
            }
            cur = a;
            acc = Vec3A::ZERO;
        }
        acc += fa;
        fc[b - base] -= fa;
    };
    let range = set.chunk_edges[c].clone();
    let mut e = range.start;
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        while e + 8 <= range.end {
            // SAFETY: AVX2 is enabled (`AVX2` is only true inside `edge_chunk_avx2`),
            // e + 8 <= range.end <= the set's length, and x holds the chunk's particles
            // (x.len() == f.len(), asserted by the caller).
            let Some(fa) = (unsafe { spring_forces8_avx2(set, e, base, fc.len(), x, v, k, kd) })
            else {
                // An end outside the chunk: the loops below panic on it.
                break;
            };
            let (ga, gb) = (&set.a[e..e + 8], &set.b[e..e + 8]);
            for (q, fa) in fa.into_iter().enumerate() {
                add(ga[q] as usize, gb[q] as usize, fa, fc);
            }
            e += 8;
        }
    }
    // Four springs at a time: the square roots and divisions, whose latency dominated the
    // one-spring loop, run as one 4-wide SSE instruction each. The arithmetic is the same
    // expression as `spring_force`, so both paths give bit-identical forces.
    while e + 4 <= range.end {
        let mut d = [Vec3A::ZERO; 4];
        let mut l2 = [0.0f32; 4];
        let mut dvd = [0.0f32; 4];
        for q in 0..4 {
            let (a, b) = (set.a[e + q] as usize, set.b[e + q] as usize);
            d[q] = x[b] - x[a];
            l2[q] = d[q].length_squared();
            dvd[q] = (v[b] - v[a]).dot(d[q]);
        }
        let l2 = Vec4::from_array(l2);
        let degenerate = l2.cmplt(Vec4::splat(1e-24));
        let inv_l = Vec4::select(degenerate, Vec4::ONE, l2).sqrt().recip();
        let stretch = l2 * inv_l - Vec4::from_slice(&set.rest[e..e + 4]);
        let rate = Vec4::from_array(dvd) * inv_l;
        let kk = Vec4::from_slice(&k[e..e + 4]);
        let kdd = Vec4::from_slice(&kd[e..e + 4]);
        let coef = Vec4::select(degenerate, Vec4::ZERO, inv_l * (kk * stretch + kdd * rate));
        let coef = coef.to_array();
        for q in 0..4 {
            add(
                set.a[e + q] as usize,
                set.b[e + q] as usize,
                d[q] * coef[q],
                fc,
            );
        }
        e += 4;
    }
    for e in e..range.end {
        let (a, b) = (set.a[e] as usize, set.b[e] as usize);
        let fa = spring_force(x[a], x[b], v[a], v[b], set.rest[e], k[e], kd[e]);
        add(a, b, fa, fc);
    }
    if cur != usize::MAX {
        fc[cur - base] += acc;
    }
}

/// The forces on end a of springs `e .. e + 8` of `set`, `spring_force`'s expression eight at
/// a time: each end's position and velocity is one 16-byte load, springs `j` and `j + 4` share
/// a ymm register; the squared length and `Δv·d` are summed with horizontal adds as
/// `(x² + y²) + (z² + 0)` (w masked off), `Vec3A::dot`'s order, and the square root, the
/// division and the products are the same IEEE operations, so every force has the bits of
/// the scalar expression. `None` if an end lies outside the chunk's particles
/// `base .. base + len` (or outside `x`).
///
/// Why: the four-wide loop spent about 70 instructions a spring (callgrind, `drape bench
/// scene`), most of them moving single lanes in and out of the 4-wide registers.
///
/// # Safety
/// AVX2 must be available and `e + 8` at most the set's length.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn spring_forces8_avx2(
    set: &EdgeSet,
    e: usize,
    base: usize,
    len: usize,
    x: &[Vec3A],
    v: &[Vec3A],
    k: &[f32],
    kd: &[f32],
) -> Option<[Vec3A; 8]> {
    use std::arch::x86_64::*;
    let (a, b) = (&set.a[e..e + 8], &set.b[e..e + 8]);
    let (rest, k, kd) = (&set.rest[e..e + 8], &k[e..e + 8], &kd[e..e + 8]);
    unsafe {
        // Every end in base .. base + len (one unsigned compare for the group).
        let vbase = _mm256_set1_epi32(base as i32);
        let last = _mm256_set1_epi32(len.min(x.len().saturating_sub(base)) as i32 - 1);
        let ia = _mm256_sub_epi32(_mm256_loadu_si256(a.as_ptr() as *const __m256i), vbase);
        let ib = _mm256_sub_epi32(_mm256_loadu_si256(b.as_ptr() as *const __m256i), vbase);
        let hi = _mm256_max_epu32(ia, ib);
        let inside = _mm256_cmpeq_epi32(_mm256_min_epu32(hi, last), hi);
        if len == 0 || _mm256_movemask_epi8(inside) != -1 {
            return None;
        }
        let xp = x.as_ptr() as *const f32;
        let vp = v.as_ptr() as *const f32;
        // SAFETY (loads): every index was checked against x.len() == v.len() above; Vec3A is
        // 16 bytes, 16-aligned. (Indices below 2³¹: the model's particle count is a u32.)
        let ld = |p: *const f32, i: u32| _mm_load_ps(p.add(4 * i as usize));
        let pair = |p: *const f32, idx: &[u32], j: usize| {
            _mm256_set_m128(ld(p, idx[j + 4]), ld(p, idx[j]))
        };
        let xyz = _mm256_castsi256_ps(_mm256_setr_epi32(-1, -1, -1, 0, -1, -1, -1, 0));
        let d: [__m256; 4] = std::array::from_fn(|j| {
            _mm256_and_ps(_mm256_sub_ps(pair(xp, b, j), pair(xp, a, j)), xyz)
        });
        let dv: [__m256; 4] = std::array::from_fn(|j| {
            _mm256_and_ps(_mm256_sub_ps(pair(vp, b, j), pair(vp, a, j)), xyz)
        });
        let sum =
            |p: [__m256; 4]| _mm256_hadd_ps(_mm256_hadd_ps(p[0], p[1]), _mm256_hadd_ps(p[2], p[3]));
        // Lanes: springs 0 .. 8 in order (see `past_limit_avx2` in constraints.rs).
        let l2 = sum(std::array::from_fn(|j| _mm256_mul_ps(d[j], d[j])));
        let dvd = sum(std::array::from_fn(|j| _mm256_mul_ps(dv[j], d[j])));
        let one = _mm256_set1_ps(1.0);
        let degenerate = _mm256_cmp_ps::<_CMP_LT_OQ>(l2, _mm256_set1_ps(1e-24));
        let safe = _mm256_blendv_ps(l2, one, degenerate);
        let inv_l = _mm256_div_ps(one, _mm256_sqrt_ps(safe));
        let stretch = _mm256_sub_ps(_mm256_mul_ps(l2, inv_l), _mm256_loadu_ps(rest.as_ptr()));
        let rate = _mm256_mul_ps(dvd, inv_l);
        let kk = _mm256_loadu_ps(k.as_ptr());
        let kdd = _mm256_loadu_ps(kd.as_ptr());
        let coef = _mm256_mul_ps(
            inv_l,
            _mm256_add_ps(_mm256_mul_ps(kk, stretch), _mm256_mul_ps(kdd, rate)),
        );
        let coef = _mm256_blendv_ps(coef, _mm256_setzero_ps(), degenerate);
        let mut out = [Vec3A::ZERO; 8];
        for j in 0..4 {
            let jj = j as i32;
            let idx = _mm256_setr_epi32(jj, jj, jj, jj, jj + 4, jj + 4, jj + 4, jj + 4);
            let fa = _mm256_mul_ps(d[j], _mm256_permutevar8x32_ps(coef, idx));
            out[j] = Vec3A::from(_mm256_castps256_ps128(fa));
            out[j + 4] = Vec3A::from(_mm256_extractf128_ps::<1>(fa));
        }
        Some(out)
    }
}

/// Adds the wind force of every triangle, `(drag + quadratic |u_n|) · A · u_n n` with
/// u_n = (w − v)·n, w sampled at the centroid and v the mean vertex velocity, one third to each
/// vertex (PHYSICS.md §1; the quadratic term is 0 unless set, [`Wind::quadratic`]); with no
/// wind and [`Wind::still_air`] (scenes) the same drag against the air at rest (w = 0). Serial:
/// one pass over the triangles, skipped when [`Wind::is_active`] is false.
pub fn wind(model: &ClothModel, x: &[Vec3A], v: &[Vec3A], wind: &Wind, time: f32, f: &mut [Vec3A]) {
    if !wind.is_active() {
        return;
    }
    for t in &model.triangles {
        let [a, b, c] = t.map(|i| i as usize);
        let n2 = (x[b] - x[a]).cross(x[c] - x[a]); // |n2| = 2 A
        let len = n2.length();
        if len < 1e-20 {
            continue;
        }
        let centroid = (x[a] + x[b] + x[c]) / 3.0;
        let w = Vec3A::from(wind.at(Vec3::from(centroid), time));
        let rel = w - (v[a] + v[b] + v[c]) / 3.0;
        // (drag + quadratic |u_n|) · A · u_n n̂ with u_n = rel·n̂ = rel·n2 / |n2| and
        // A n̂ = ½ n2.
        let un = rel.dot(n2) / len;
        let force = n2 * (0.5 * (wind.drag + wind.quadratic * un.abs()) * un);
        let third = force / 3.0;
        f[a] += third;
        f[b] += third;
        f[c] += third;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloth::scenes::{test_random, two_chunk_cloth};

    /// The AVX2 spring kernel gives the portable loop's forces bit for bit (x, y, z of every
    /// particle), on a cloth of two chunks (crossing springs included) with random positions,
    /// velocities and stiffnesses, a spring of zero length and a NaN particle. Skipped
    /// (trivially true) on CPUs without AVX2.
    #[test]
    fn edge_springs_avx2_equals_portable() {
        if !simd_available() {
            return;
        }
        let scene = two_chunk_cloth();
        let model = &scene.model;
        let set = &model.springs;
        let mut rnd = test_random(7);
        let mut x: Vec<Vec3A> = model
            .rest
            .iter()
            .map(|r| *r + Vec3A::new(rnd(), rnd(), rnd()) * 0.01)
            .collect();
        let v: Vec<Vec3A> = (0..x.len())
            .map(|_| Vec3A::new(rnd(), rnd(), rnd()) * 3.0)
            .collect();
        // A spring of zero length (its ends coincide) and a NaN particle.
        let (a0, b0) = (set.a[5] as usize, set.b[5] as usize);
        x[b0] = x[a0];
        x[300] = Vec3A::splat(f32::NAN);
        let k: Vec<f32> = set.k.iter().map(|k| k * (1.0 + rnd())).collect();
        let kd: Vec<f32> = set.kd.iter().map(|k| k * (1.0 + rnd())).collect();
        let run = |simd: bool| {
            let mut f = vec![Vec3A::splat(1e9); x.len()];
            edge_springs_with(set, model.chunk_size, &x, &v, &k, &kd, &mut f, simd);
            f
        };
        let (portable, avx2) = (run(false), run(true));
        let bits = |f: &[Vec3A]| -> Vec<[u32; 3]> {
            f.iter().map(|p| p.to_array().map(f32::to_bits)).collect()
        };
        assert_eq!(bits(&portable), bits(&avx2));
        assert!(portable.iter().any(|p| p.is_nan()));
        assert!(portable.iter().filter(|p| p.is_finite()).count() > x.len() / 2);
    }
}
