//! Blending, one vertex at a time in registers (palette entries and dual quaternions weighted
//! by their influences), the 8×8 transposes into structure-of-arrays registers, and the
//! loads and stores of packed vertices.

use std::arch::x86_64::*;

use super::lanes::{F, V3};
use super::{PackedVertex, LANES};
use crate::math::Vec3;

/// Positions and normals of eight packed vertices, lane per vertex.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn load_pn(v: &[PackedVertex; LANES]) -> (V3, V3) {
    // One ymm per vertex: [px py pz 1 | nx ny nz 0].
    let rows: [F; LANES] = std::array::from_fn(|l| unsafe { _mm256_loadu_ps(v[l].p.as_ptr()) });
    let t = transpose8(rows);
    (
        V3 {
            x: t[0],
            y: t[1],
            z: t[2],
        },
        V3 {
            x: t[4],
            y: t[5],
            z: t[6],
        },
    )
}

/// xyz of eight 16-byte records, lane per record.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn load_v3(c: &[[f32; 4]; LANES]) -> V3 {
    let t = transpose4x8(std::array::from_fn(|l| unsafe {
        _mm_loadu_ps(c[l].as_ptr())
    }));
    V3 {
        x: t[0],
        y: t[1],
        z: t[2],
    }
}

/// Σ w_k S_k for eight vertices. `pal` points at `Affine3A`s (16 floats: three columns and the
/// translation, each padded to four lanes). Returns columns c0, c1, c2, t as 12 lane vectors
/// (c0.x, c0.y, c0.z, c1.x, …, t.z).
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) unsafe fn blend_affine(pal: *const f32, v: &[PackedVertex; LANES]) -> [F; 12] {
    let mut lo = [_mm256_setzero_ps(); LANES];
    let mut hi = [_mm256_setzero_ps(); LANES];
    for l in 0..LANES {
        let (mut a, mut b) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        for k in 0..4 {
            let w = _mm256_broadcast_ss(&v[l].w[k]);
            let m = pal.add(v[l].j[k] as usize * 16);
            a = _mm256_fmadd_ps(_mm256_loadu_ps(m), w, a);
            b = _mm256_fmadd_ps(_mm256_loadu_ps(m.add(8)), w, b);
        }
        lo[l] = a;
        hi[l] = b;
    }
    affine_soa(transpose8(lo), transpose8(hi))
}

pub(super) fn affine_soa(lo: [F; 8], hi: [F; 8]) -> [F; 12] {
    [
        lo[0], lo[1], lo[2], lo[4], lo[5], lo[6], hi[0], hi[1], hi[2], hi[4], hi[5], hi[6],
    ]
}

/// The weight of influence `k` of `v` with the sign of `q_k · q_0` (antipodality, Kavan et al.
/// 2008 §4.1; influence 0 is the strongest), broadcast; also returns q_k.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) unsafe fn signed_weight(
    rot: *const f32,
    v: &PackedVertex,
    q0: __m128,
    k: usize,
) -> (__m128, __m128) {
    let w = _mm_broadcast_ss(&v.w[k]);
    let q = _mm_loadu_ps(rot.add(v.j[k] as usize * 4));
    if k == 0 {
        return (w, q);
    }
    // copysign(w, q·q0), as the portable kernel's `w.copysign(r.dot(reference))`.
    let dot = _mm_dp_ps::<0xFF>(q, q0);
    let sign = _mm_set1_ps(-0.0);
    (_mm_or_ps(_mm_andnot_ps(sign, w), _mm_and_ps(sign, dot)), q)
}

/// Blended dual quaternions (real, dual; x y z w each) of eight vertices.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) unsafe fn blend_dq(
    rot: *const f32,
    dual: *const f32,
    v: &[PackedVertex; LANES],
) -> ([F; 4], [F; 4]) {
    let mut real = [_mm_setzero_ps(); LANES];
    let mut du = [_mm_setzero_ps(); LANES];
    for l in 0..LANES {
        let q0 = _mm_loadu_ps(rot.add(v[l].j[0] as usize * 4));
        let (mut a, mut b) = (_mm_setzero_ps(), _mm_setzero_ps());
        for k in 0..4 {
            let (w, q) = signed_weight(rot, &v[l], q0, k);
            a = _mm_fmadd_ps(q, w, a);
            b = _mm_fmadd_ps(_mm_loadu_ps(dual.add(v[l].j[k] as usize * 4)), w, b);
        }
        real[l] = a;
        du[l] = b;
    }
    (transpose4x8(real), transpose4x8(du))
}

/// Σ w_k S_k and the signed rotation blend Σ ±w_k q_k (CoR) of eight vertices.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) unsafe fn blend_affine_rotation(
    pal: *const f32,
    rot: *const f32,
    v: &[PackedVertex; LANES],
) -> ([F; 12], [F; 4]) {
    let mut lo = [_mm256_setzero_ps(); LANES];
    let mut hi = [_mm256_setzero_ps(); LANES];
    let mut qs = [_mm_setzero_ps(); LANES];
    for l in 0..LANES {
        let q0 = _mm_loadu_ps(rot.add(v[l].j[0] as usize * 4));
        let (mut a, mut b, mut c) = (_mm256_setzero_ps(), _mm256_setzero_ps(), _mm_setzero_ps());
        for k in 0..4 {
            let w = _mm256_broadcast_ss(&v[l].w[k]);
            let m = pal.add(v[l].j[k] as usize * 16);
            a = _mm256_fmadd_ps(_mm256_loadu_ps(m), w, a);
            b = _mm256_fmadd_ps(_mm256_loadu_ps(m.add(8)), w, b);
            let (sw, q) = signed_weight(rot, &v[l], q0, k);
            c = _mm_fmadd_ps(q, sw, c);
        }
        lo[l] = a;
        hi[l] = b;
        qs[l] = c;
    }
    (affine_soa(transpose8(lo), transpose8(hi)), transpose4x8(qs))
}

/// 8×8 transpose: `out[c]` lane `r` = `rows[r]` lane `c`.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn transpose8(r: [F; 8]) -> [F; 8] {
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    let t4 = _mm256_unpacklo_ps(r[4], r[5]);
    let t5 = _mm256_unpackhi_ps(r[4], r[5]);
    let t6 = _mm256_unpacklo_ps(r[6], r[7]);
    let t7 = _mm256_unpackhi_ps(r[6], r[7]);
    let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
    let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
    let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
    let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
    let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
    let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
    let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
    let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
    [
        _mm256_permute2f128_ps::<0x20>(u0, u4),
        _mm256_permute2f128_ps::<0x20>(u1, u5),
        _mm256_permute2f128_ps::<0x20>(u2, u6),
        _mm256_permute2f128_ps::<0x20>(u3, u7),
        _mm256_permute2f128_ps::<0x31>(u0, u4),
        _mm256_permute2f128_ps::<0x31>(u1, u5),
        _mm256_permute2f128_ps::<0x31>(u2, u6),
        _mm256_permute2f128_ps::<0x31>(u3, u7),
    ]
}

/// Four lanes of eight 4-vectors into four 8-lane vectors: `out[c]` lane `r` = `v[r]` lane `c`.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn transpose4x8(v: [__m128; 8]) -> [F; 4] {
    let r: [F; 4] = std::array::from_fn(|i| _mm256_set_m128(v[i + 4], v[i]));
    in_lane_transpose4(r)
}

/// 4×4 transpose within each 128-bit half (its own inverse).
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn in_lane_transpose4(r: [F; 4]) -> [F; 4] {
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    [
        _mm256_shuffle_ps::<0x44>(t0, t2),
        _mm256_shuffle_ps::<0xEE>(t0, t2),
        _mm256_shuffle_ps::<0x44>(t1, t3),
        _mm256_shuffle_ps::<0xEE>(t1, t3),
    ]
}

/// Writes eight lanes as eight `Vec3`s at `out` (12-byte stride).
///
/// # Safety
/// `out` must be valid for writing eight `Vec3`s.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) unsafe fn store(v: V3, out: *mut Vec3) {
    // Vertex i is the low half of t[i] (i < 4), vertex i + 4 the high half.
    let t = in_lane_transpose4([v.x, v.y, v.z, v.z]);
    let out = out as *mut f32;
    // 16-byte stores in increasing order: each one's spare lane lands on the next vertex's x,
    // which the next store then overwrites. The last vertex writes exactly 12 bytes.
    for i in 0..LANES - 1 {
        let x = if i < 4 {
            _mm256_castps256_ps128(t[i])
        } else {
            _mm256_extractf128_ps::<1>(t[i - 4])
        };
        _mm_storeu_ps(out.add(3 * i), x);
    }
    let last = _mm256_extractf128_ps::<1>(t[3]);
    _mm_storel_epi64(out.add(21) as *mut __m128i, _mm_castps_si128(last));
    _mm_store_ss(out.add(23), _mm_movehl_ps(last, last));
}
