//! Skinning with optimized centres of rotation: Le & Hodgins, "Real-time Skeletal Skinning with
//! Optimized Centers of Rotation", ACM TOG 35(4), 2016.
//!
//! Precompute (§4, Eqs. 6–7): each vertex i gets a centre of rotation p*_i, the average of all
//! triangle centroids c_t weighted by area a_t and by the similarity of skinning weights
//!
//! ```text
//! s(w_i, w_t) = Σ_{j<k} w_ij w_ik w_tj w_tk exp(−(w_ij w_tk − w_ik w_tj)² / σ²),   σ = 0.1
//! p*_i = Σ_t s(w_i, w_t) a_t c_t / Σ_t s(w_i, w_t) a_t
//! ```
//!
//! with w_t the average of the triangle's three vertex weights. (The paper sums over ordered
//! pairs j ≠ k; that doubles numerator and denominator alike.) A vertex with a single influence
//! has no pair, so no centre: it is skinned by DQS, which is then exactly its joint's transform.
//!
//! Run time (§5): `q = normalise(Σ ±w_k q_k)`, `p' = R(q) S (p − p*) + LBS(p*)`,
//! `n' = R(q) cof(S) n`, with `S` the blended scale/shear of two-phase skinning (identity for
//! rigid palettes) so that a centimetre mesh under a 0.01 armature matches a metre one.
//!
//! Making the O(V·T) precompute fast, exactly:
//! - s is a sum over joint pairs, and a pair contributes only when both the vertex and the
//!   triangle weight both joints; so triangles are bucketed by each joint pair of their support,
//!   and a vertex visits only the buckets of its own pairs.
//! - Within a bucket only (w_tj, w_tk) matter: triangles with identical pairs are merged.
//! - p* depends only on the vertex's weights: vertices with identical weights are computed once.
//! - Buckets are structures of arrays and the inner loop runs eight lanes at a time with a
//!   polynomial exp (relative error < 5e-6), in parallel over vertices (rayon).
//!
//! Results are cached on disk (`$XDG_CACHE_HOME/drape` or `~/.cache/drape`), keyed by a hash of
//! the mesh's positions, weights and indices and σ; any cache failure just recomputes.

use super::lbs::blend_affine;
use super::{dqs, normalize_safe, Palette, StretchMode, VertexInput};
use crate::math::{Mat3A, Vec3, Vec3A};
use crate::rig::SkinnedMesh;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// σ of the weight similarity (Le & Hodgins 2016, §4: 0.1). Unitless (weights are in [0, 1]);
/// smaller values demand closer weights. Range (0, 1].
pub const DEFAULT_SIGMA: f32 = 0.1;

/// Exponents (d/σ)² are clamped here: e^−80 ≈ 2e−35, below anything that can matter next to a
/// similar triangle's term (≤ 1), and still a normal f32 in [`exp_neg`].
const EXPONENT_CUTOFF: f32 = 80.0;

/// Per-vertex centres of rotation of one mesh, in bind space.
#[derive(Clone, Debug, PartialEq)]
pub struct CorCenters {
    /// Centre of vertex i, or NaN (all three components) where the vertex has no centre.
    pub centers: Vec<Vec3>,
    /// σ they were computed with.
    pub sigma: f32,
}

impl CorCenters {
    pub fn is_valid(&self, i: usize) -> bool {
        self.centers.get(i).is_some_and(|c| c.is_finite())
    }

    pub fn valid_count(&self) -> usize {
        self.centers.iter().filter(|c| c.is_finite()).count()
    }
}

/// Progress of a CoR precompute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CorProgress {
    /// Found in the disk cache.
    Cached,
    /// `done` of `total` distinct weight vectors computed.
    Computing { done: usize, total: usize },
}

/// Sparse weights of one vertex or triangle: (joint, weight) sorted by joint, weights > 0.
type Sparse = Vec<(u16, f32)>;

fn vertex_weights(mesh: &SkinnedMesh, i: usize, out: &mut Sparse) {
    out.clear();
    let mut push = |j: &[u16; 4], w: &[f32; 4]| {
        for k in 0..4 {
            if w[k] > 0.0 && w[k].is_finite() {
                out.push((j[k], w[k]));
            }
        }
    };
    push(&mesh.joints[i], &mesh.weights[i]);
    if mesh.joints1.len() == mesh.positions.len() && mesh.weights1.len() == mesh.positions.len() {
        push(&mesh.joints1[i], &mesh.weights1[i]);
    }
    merge_sorted(out);
    let sum: f32 = out.iter().map(|e| e.1).sum();
    if sum > 0.0 {
        for e in out.iter_mut() {
            e.1 /= sum;
        }
    }
}

/// Sorts by joint and sums duplicate joints.
fn merge_sorted(v: &mut Sparse) {
    v.sort_unstable_by_key(|e| e.0);
    let mut w = 0;
    for r in 0..v.len() {
        if w > 0 && v[w - 1].0 == v[r].0 {
            v[w - 1].1 += v[r].1;
        } else {
            v[w] = v[r];
            w += 1;
        }
    }
    v.truncate(w);
}

/// Before blocking: (w_tj, w_tk) bits → (Σ area, Σ area · centroid).
type RawBucket = HashMap<(u32, u32), (f64, [f64; 3])>;

/// Lanes per block of a bucket: two SSE registers, one AVX register.
const L: usize = 8;

/// Eight merged triangle entries of one joint pair (j, k), as structure of arrays.
/// `coef = w_tj w_tk Σ a_t` and `m* = w_tj w_tk Σ a_t c_t` (the area-weighted centroid moment).
/// Padding lanes have coef = m = 0 and contribute nothing. Fixed-size arrays let the compiler
/// drop bounds checks and vectorise the lanes.
#[derive(Clone, Copy, Default)]
struct Block {
    wj: [f32; L],
    wk: [f32; L],
    coef: [f32; L],
    mx: [f32; L],
    my: [f32; L],
    mz: [f32; L],
}

/// Triangles of one joint pair, merged by (w_tj, w_tk), in blocks of [`L`].
type Bucket = Vec<Block>;

/// e^(−x) for x ∈ [0, 87]: round(−x log2 e) = n, 2^n from the exponent bits and e^(f ln 2),
/// |f| ≤ ½, from its degree-6 Taylor polynomial (truncation (ln2/2)^7/7! ≈ 1.2e−7). Written
/// without branches or libm calls so the eight-lane loop below vectorises.
// Used by the portable path and to test the SIMD one.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn exp_neg(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 · 2^23: adding it rounds to an integer in the mantissa
    let y = -x * std::f32::consts::LOG2_E;
    let r = y + MAGIC;
    let n = (r.to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32);
    let f = y - (r - MAGIC);
    let z = f * std::f32::consts::LN_2;
    let p = 1.0
        + z * (1.0
            + z * (0.5
                + z * (1.0 / 6.0 + z * (1.0 / 24.0 + z * (1.0 / 120.0 + z * (1.0 / 720.0))))));
    p * f32::from_bits(((n + 127) << 23) as u32)
}

/// Σ over a bucket of exp(−((a w_tk − b w_tj)/σ)²) · (coef, m): returns (den, num).
/// SSE2 (the x86_64 baseline) by hand: the compiler leaves the lane loops scalar.
#[cfg(target_arch = "x86_64")]
fn bucket_sum(bucket: &[Block], a: f32, bb: f32, inv_sigma2: f32) -> (f64, [f64; 3]) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; loads read 4 floats at offsets 0 and 4 of
    // 8-float arrays.
    unsafe {
        let (va, vb, vinv, vcut) = (
            _mm_set1_ps(a),
            _mm_set1_ps(bb),
            _mm_set1_ps(inv_sigma2),
            _mm_set1_ps(EXPONENT_CUTOFF),
        );
        let mut acc = [_mm_setzero_ps(); 8];
        for blk in bucket {
            for h in 0..2 {
                let o = 4 * h;
                let wk = _mm_loadu_ps(blk.wk.as_ptr().add(o));
                let wj = _mm_loadu_ps(blk.wj.as_ptr().add(o));
                let d = _mm_sub_ps(_mm_mul_ps(va, wk), _mm_mul_ps(vb, wj));
                let e = exp_neg_sse(_mm_min_ps(_mm_mul_ps(_mm_mul_ps(d, d), vinv), vcut));
                let q = 4 * h;
                acc[q] = _mm_add_ps(
                    acc[q],
                    _mm_mul_ps(e, _mm_loadu_ps(blk.coef.as_ptr().add(o))),
                );
                acc[q + 1] = _mm_add_ps(
                    acc[q + 1],
                    _mm_mul_ps(e, _mm_loadu_ps(blk.mx.as_ptr().add(o))),
                );
                acc[q + 2] = _mm_add_ps(
                    acc[q + 2],
                    _mm_mul_ps(e, _mm_loadu_ps(blk.my.as_ptr().add(o))),
                );
                acc[q + 3] = _mm_add_ps(
                    acc[q + 3],
                    _mm_mul_ps(e, _mm_loadu_ps(blk.mz.as_ptr().add(o))),
                );
            }
        }
        let mut out = [0f64; 4];
        for (q, v) in acc.iter().enumerate() {
            let mut lanes = [0f32; 4];
            _mm_storeu_ps(lanes.as_mut_ptr(), *v);
            out[q % 4] += lanes.iter().map(|&x| x as f64).sum::<f64>();
        }
        (out[0], [out[1], out[2], out[3]])
    }
}

/// [`exp_neg`] on four lanes (SSE2).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn exp_neg_sse(x: std::arch::x86_64::__m128) -> std::arch::x86_64::__m128 {
    use std::arch::x86_64::*;
    const MAGIC: f32 = 12_582_912.0;
    let magic = _mm_set1_ps(MAGIC);
    let y = _mm_mul_ps(x, _mm_set1_ps(-std::f32::consts::LOG2_E));
    let r = _mm_add_ps(y, magic);
    let n = _mm_sub_epi32(_mm_castps_si128(r), _mm_castps_si128(magic));
    let f = _mm_sub_ps(y, _mm_sub_ps(r, magic));
    let z = _mm_mul_ps(f, _mm_set1_ps(std::f32::consts::LN_2));
    let mut p = _mm_set1_ps(1.0 / 720.0);
    for c in [1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0] {
        p = _mm_add_ps(_mm_mul_ps(p, z), _mm_set1_ps(c));
    }
    let scale = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n, _mm_set1_epi32(127)), 23));
    _mm_mul_ps(p, scale)
}

/// Portable fallback of the above.
#[cfg(not(target_arch = "x86_64"))]
fn bucket_sum(bucket: &[Block], a: f32, bb: f32, inv_sigma2: f32) -> (f64, [f64; 3]) {
    let mut d = 0f64;
    let mut m = [0f64; 3];
    for blk in bucket {
        for l in 0..L {
            let x = a * blk.wk[l] - bb * blk.wj[l];
            let e = exp_neg((x * x * inv_sigma2).min(EXPONENT_CUTOFF)) as f64;
            d += e * blk.coef[l] as f64;
            m[0] += e * blk.mx[l] as f64;
            m[1] += e * blk.my[l] as f64;
            m[2] += e * blk.mz[l] as f64;
        }
    }
    (d, m)
}

/// Computes the centres of rotation of `mesh` (no cache). `progress` is called from this thread.
pub fn compute_centers(
    mesh: &SkinnedMesh,
    sigma: f32,
    progress: &mut dyn FnMut(CorProgress),
) -> CorCenters {
    let nv = mesh.positions.len();
    let nan = Vec3::splat(f32::NAN);
    if mesh.joints.len() != nv || mesh.weights.len() != nv || sigma.is_nan() || sigma <= 0.0 {
        return CorCenters {
            centers: vec![nan; nv],
            sigma,
        };
    }
    // 1. Sparse vertex weights, deduplicated.
    let mut distinct: Vec<Sparse> = Vec::new();
    let mut vertex_class = vec![0u32; nv];
    {
        let mut index: HashMap<Vec<(u16, u32)>, u32> = HashMap::new();
        let mut w = Sparse::new();
        for (i, class) in vertex_class.iter_mut().enumerate() {
            vertex_weights(mesh, i, &mut w);
            let key: Vec<(u16, u32)> = w.iter().map(|&(j, x)| (j, x.to_bits())).collect();
            let next = distinct.len() as u32;
            *class = *index.entry(key).or_insert_with(|| {
                distinct.push(w.clone());
                next
            });
        }
    }
    // 2. Triangles into joint-pair buckets: (w_tj, w_tk) → (Σ area, Σ area·centroid).
    let mut raw: HashMap<(u16, u16), RawBucket> = HashMap::new();
    {
        let mut wv = Sparse::new();
        let mut wt = Sparse::new();
        for tri in mesh.indices.chunks_exact(3) {
            let [a, b, c] = [tri[0] as usize, tri[1] as usize, tri[2] as usize];
            if a >= nv || b >= nv || c >= nv {
                continue;
            }
            let (pa, pb, pc) = (mesh.positions[a], mesh.positions[b], mesh.positions[c]);
            let area = 0.5 * (pb - pa).cross(pc - pa).length();
            if area.is_nan() || area <= 0.0 || !area.is_finite() {
                continue;
            }
            let centroid = (pa + pb + pc) / 3.0;
            wt.clear();
            for v in [a, b, c] {
                vertex_weights(mesh, v, &mut wv);
                wt.extend(wv.iter().map(|&(j, x)| (j, x / 3.0)));
            }
            merge_sorted(&mut wt);
            for p in 0..wt.len() {
                for q in p + 1..wt.len() {
                    let (j, wj) = wt[p];
                    let (k, wk) = wt[q];
                    let e = raw
                        .entry((j, k))
                        .or_default()
                        .entry((wj.to_bits(), wk.to_bits()))
                        .or_insert((0.0, [0.0; 3]));
                    e.0 += area as f64;
                    e.1[0] += (area * centroid.x) as f64;
                    e.1[1] += (area * centroid.y) as f64;
                    e.1[2] += (area * centroid.z) as f64;
                }
            }
        }
    }
    let buckets: HashMap<(u16, u16), Bucket> = raw
        .into_iter()
        .map(|(pair, entries)| {
            let mut b: Bucket = Vec::with_capacity(entries.len().div_ceil(L));
            for (i, ((wj, wk), (area, m))) in entries.into_iter().enumerate() {
                if i % L == 0 {
                    b.push(Block::default());
                }
                let blk = b.last_mut().expect("pushed above");
                let l = i % L;
                let (wj, wk) = (f32::from_bits(wj), f32::from_bits(wk));
                let s = (wj * wk) as f64;
                blk.wj[l] = wj;
                blk.wk[l] = wk;
                blk.coef[l] = (s * area) as f32;
                blk.mx[l] = (s * m[0]) as f32;
                blk.my[l] = (s * m[1]) as f32;
                blk.mz[l] = (s * m[2]) as f32;
            }
            (pair, b)
        })
        .collect();
    // 3. One centre per distinct weight vector, in parallel, in batches for progress reports.
    let inv_sigma2 = 1.0 / (sigma * sigma);
    let centre_of = |w: &Sparse| -> Vec3 {
        let mut den = 0f64;
        let mut num = [0f64; 3];
        for p in 0..w.len() {
            for q in p + 1..w.len() {
                let (j, a) = w[p];
                let (k, bb) = w[q];
                let Some(bucket) = buckets.get(&(j, k)) else {
                    continue;
                };
                // Pair term: w_ij w_ik w_tj w_tk exp(−(w_ij w_tk − w_ik w_tj)²/σ²); the bucket
                // holds w_tj w_tk a_t already.
                let (d, m) = bucket_sum(bucket, a, bb, inv_sigma2);
                let s = (a * bb) as f64;
                den += s * d;
                for c in 0..3 {
                    num[c] += s * m[c];
                }
            }
        }
        if den > 1e-30 && den.is_finite() {
            Vec3::new(
                (num[0] / den) as f32,
                (num[1] / den) as f32,
                (num[2] / den) as f32,
            )
        } else {
            nan
        }
    };
    let total = distinct.len();
    let mut class_centre = vec![nan; total];
    let batch = (total / 50).max(256);
    let mut done = 0;
    progress(CorProgress::Computing { done: 0, total });
    for chunk in class_centre.chunks_mut(batch) {
        let start = done;
        chunk
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, c)| *c = centre_of(&distinct[start + i]));
        done += chunk.len();
        progress(CorProgress::Computing { done, total });
    }
    CorCenters {
        centers: vertex_class
            .iter()
            .map(|&c| class_centre[c as usize])
            .collect(),
        sigma,
    }
}

/// The folder for cached precomputes: `$XDG_CACHE_HOME/drape`, else `$HOME/.cache/drape`.
pub fn cache_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    Some(base.join("drape"))
}

/// 64-bit FNV-1a over everything the centres depend on (and a format version).
pub fn mesh_key(mesh: &SkinnedMesh, sigma: f32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(b"drape-cor-v1");
    eat(&sigma.to_le_bytes());
    eat(&(mesh.positions.len() as u64).to_le_bytes());
    for p in &mesh.positions {
        for x in p.to_array() {
            eat(&x.to_le_bytes());
        }
    }
    for (js, ws) in [
        (&mesh.joints, &mesh.weights),
        (&mesh.joints1, &mesh.weights1),
    ] {
        eat(&(js.len() as u64).to_le_bytes());
        for j in js.iter().flatten() {
            eat(&j.to_le_bytes());
        }
        for w in ws.iter().flatten() {
            eat(&w.to_le_bytes());
        }
    }
    eat(&(mesh.indices.len() as u64).to_le_bytes());
    for i in &mesh.indices {
        eat(&i.to_le_bytes());
    }
    h
}

const MAGIC: &[u8; 8] = b"DRAPECOR";

fn read_cache(path: &Path, n: usize, sigma: f32) -> Option<CorCenters> {
    let bytes = std::fs::read(path).ok()?;
    let head = 8 + 8;
    if bytes.len() != head + n * 12
        || &bytes[..8] != MAGIC
        || u64::from_le_bytes(bytes[8..16].try_into().ok()?) != n as u64
    {
        return None;
    }
    let f = |o: usize| f32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
    let centers = (0..n)
        .map(|i| Vec3::new(f(head + 12 * i), f(head + 12 * i + 4), f(head + 12 * i + 8)))
        .collect();
    Some(CorCenters { centers, sigma })
}

fn write_cache(path: &Path, c: &CorCenters) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut bytes = Vec::with_capacity(16 + c.centers.len() * 12);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(c.centers.len() as u64).to_le_bytes());
    for p in &c.centers {
        for x in p.to_array() {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    // Write then rename, so a concurrent reader never sees half a file.
    crate::output::write_atomic(path, &bytes)
}

/// Centres from the cache in `dir` (if given and readable), else computed and written there
/// (silently skipped when the folder is not writable).
pub fn centers_cached_in(
    dir: Option<&Path>,
    mesh: &SkinnedMesh,
    sigma: f32,
    progress: &mut dyn FnMut(CorProgress),
) -> CorCenters {
    let path = dir.map(|d| d.join(format!("cor-{:016x}.bin", mesh_key(mesh, sigma))));
    if let Some(c) = path
        .as_deref()
        .and_then(|p| read_cache(p, mesh.positions.len(), sigma))
    {
        progress(CorProgress::Cached);
        return c;
    }
    let c = compute_centers(mesh, sigma, progress);
    if let Some(p) = path {
        let _ = write_cache(&p, &c);
    }
    c
}

/// Centres through the default cache folder ([`cache_dir`]).
pub fn centers_cached(
    mesh: &SkinnedMesh,
    sigma: f32,
    progress: &mut dyn FnMut(CorProgress),
) -> CorCenters {
    centers_cached_in(cache_dir().as_deref(), mesh, sigma, progress)
}

/// One vertex with a valid centre; see the module docs.
#[inline(always)]
pub fn skin_vertex<const N: usize, const MODE: u8>(
    palette: &Palette,
    common: &Mat3A,
    j: &[u16; N],
    w: &[f32; N],
    p: Vec3A,
    n: Vec3A,
    center: Vec3A,
) -> (Vec3A, Vec3A) {
    let m = blend_affine(&palette.world_from_bind, j, w);
    let lbs_center = m.matrix3 * center + m.translation;
    let q = dqs::blend_rotation(palette, j, w);
    let inv_len2 = dqs::inverse_length_squared(q);
    let v = Vec3A::new(q.x, q.y, q.z);
    let (d, n) = dqs::apply_stretch::<N, MODE>(palette, common, j, w, p - center, n);
    (
        dqs::rotate(v, q.w, inv_len2, d) + lbs_center,
        normalize_safe(dqs::rotate(v, q.w, inv_len2, n)),
    )
}

/// One vertex: CoR where it has a centre (finite `center`), else DQS.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn skin_vertex_or_dqs<const N: usize, const MODE: u8>(
    palette: &Palette,
    common: &Mat3A,
    j: &[u16; N],
    w: &[f32; N],
    p: Vec3A,
    n: Vec3A,
    center: Vec3,
) -> (Vec3A, Vec3A) {
    if center.x.is_finite() {
        skin_vertex::<N, MODE>(palette, common, j, w, p, n, center.into())
    } else {
        dqs::skin_vertex::<N, MODE>(palette, common, j, w, p, n)
    }
}

pub(crate) fn skin(
    input: &VertexInput,
    palette: &Palette,
    centers: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    use dqs::{MODE_COMMON, MODE_IDENTITY, MODE_PER_JOINT};
    match palette.stretch_mode {
        StretchMode::Identity => skin_mode::<MODE_IDENTITY>(
            input,
            palette,
            &Mat3A::IDENTITY,
            centers,
            out_positions,
            out_normals,
        ),
        StretchMode::Common(s) => {
            skin_mode::<MODE_COMMON>(input, palette, &s, centers, out_positions, out_normals)
        }
        StretchMode::PerJoint => skin_mode::<MODE_PER_JOINT>(
            input,
            palette,
            &Mat3A::IDENTITY,
            centers,
            out_positions,
            out_normals,
        ),
    }
}

fn skin_mode<const MODE: u8>(
    input: &VertexInput,
    palette: &Palette,
    common: &Mat3A,
    centers: &[Vec3],
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    #[inline(always)]
    fn one<const N: usize, const MODE: u8>(
        input: &VertexInput,
        palette: &Palette,
        common: &Mat3A,
        centers: &[Vec3],
        i: usize,
    ) -> (Vec3A, Vec3A) {
        let (j, w) = input.influences::<N>(i);
        let (p, n) = (input.positions[i].into(), input.normals[i].into());
        skin_vertex_or_dqs::<N, MODE>(palette, common, &j, &w, p, n, centers[i])
    }
    if input.eight() {
        input.for_each(out_positions, out_normals, |i| {
            one::<8, MODE>(input, palette, common, centers, i)
        });
    } else {
        input.for_each(out_positions, out_normals, |i| {
            one::<4, MODE>(input, palette, common, centers, i)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polynomial_exp_is_accurate() {
        let mut worst = 0f32;
        for i in 0..=5000 {
            let x = i as f32 * 0.01;
            let e = exp_neg(x);
            let r = (-x as f64).exp();
            worst = worst.max(((e as f64 - r) / r).abs() as f32);
        }
        // The polynomial is good to ~1e-7; rounding −x·log2 e in f32 adds up to ~4e-6 at x = 50.
        assert!(worst < 5e-6, "relative error {worst}");
        #[cfg(target_arch = "x86_64")]
        for i in 0..=1000 {
            use std::arch::x86_64::*;
            let x = i as f32 * 0.08;
            let mut lanes = [0f32; 4];
            // SAFETY: SSE2 is baseline on x86_64.
            unsafe { _mm_storeu_ps(lanes.as_mut_ptr(), exp_neg_sse(_mm_set1_ps(x))) };
            assert_eq!(lanes[0], exp_neg(x), "SIMD and scalar exp differ at {x}");
        }
    }
}
