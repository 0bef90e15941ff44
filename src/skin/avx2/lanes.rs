//! Lane-parallel arithmetic on eight vertices at once (one per ymm lane): vector algebra,
//! affine transforms, quaternion rotation and the LBS and DQS formulas in structure-of-arrays
//! form. No horizontal operations.

use std::arch::x86_64::*;

/// Eight floats, one vertex per lane.
pub(super) type F = __m256;

/// Three coordinates, one vertex per lane.
#[derive(Clone, Copy)]
pub(super) struct V3 {
    pub(super) x: F,
    pub(super) y: F,
    pub(super) z: F,
}

#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn splat(x: f32) -> F {
    _mm256_set1_ps(x)
}

#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn add3(a: V3, b: V3) -> V3 {
    V3 {
        x: _mm256_add_ps(a.x, b.x),
        y: _mm256_add_ps(a.y, b.y),
        z: _mm256_add_ps(a.z, b.z),
    }
}

#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn sub3(a: V3, b: V3) -> V3 {
    V3 {
        x: _mm256_sub_ps(a.x, b.x),
        y: _mm256_sub_ps(a.y, b.y),
        z: _mm256_sub_ps(a.z, b.z),
    }
}

/// a × b.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn cross(a: V3, b: V3) -> V3 {
    V3 {
        x: _mm256_fmsub_ps(a.y, b.z, _mm256_mul_ps(a.z, b.y)),
        y: _mm256_fmsub_ps(a.z, b.x, _mm256_mul_ps(a.x, b.z)),
        z: _mm256_fmsub_ps(a.x, b.y, _mm256_mul_ps(a.y, b.x)),
    }
}

#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn dot(a: V3, b: V3) -> F {
    _mm256_fmadd_ps(a.x, b.x, _mm256_fmadd_ps(a.y, b.y, _mm256_mul_ps(a.z, b.z)))
}

/// a s + b.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn scale_add(a: V3, s: F, b: V3) -> V3 {
    V3 {
        x: _mm256_fmadd_ps(a.x, s, b.x),
        y: _mm256_fmadd_ps(a.y, s, b.y),
        z: _mm256_fmadd_ps(a.z, s, b.z),
    }
}

#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn scale(a: V3, s: F) -> V3 {
    V3 {
        x: _mm256_mul_ps(a.x, s),
        y: _mm256_mul_ps(a.y, s),
        z: _mm256_mul_ps(a.z, s),
    }
}

/// c0 x + c1 y + c2 z for lane vectors c0..c2 (`m[3c + r]` = row r of column c).
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn columns_mul(m: &[F], v: V3) -> V3 {
    let row = |r: usize| {
        _mm256_fmadd_ps(
            m[r],
            v.x,
            _mm256_fmadd_ps(m[3 + r], v.y, _mm256_mul_ps(m[6 + r], v.z)),
        )
    };
    V3 {
        x: row(0),
        y: row(1),
        z: row(2),
    }
}

/// A constant column-major 3×3 times lane vectors.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn mat3_mul(m: &[f32; 9], v: V3) -> V3 {
    let cols: [F; 9] = std::array::from_fn(|i| splat(m[i]));
    columns_mul(&cols, v)
}

/// Blended affine (12 lane vectors, columns then translation) applied to a point.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn affine_point(m: &[F; 12], p: V3) -> V3 {
    add3(
        columns_mul(&m[..9], p),
        V3 {
            x: m[9],
            y: m[10],
            z: m[11],
        },
    )
}

/// 1/√x to ~2 ulp (estimate + one Newton step), as the portable `rsqrt`.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn rsqrt(x: F) -> F {
    let y = _mm256_rsqrt_ps(x);
    // y (1.5 − 0.5 x y²)
    let h = _mm256_mul_ps(_mm256_mul_ps(splat(0.5), x), _mm256_mul_ps(y, y));
    _mm256_mul_ps(y, _mm256_sub_ps(splat(1.5), h))
}

/// Unit vectors, +Y where the length is zero, tiny or not finite (as the portable
/// `normalize_safe`).
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn normalize_safe(v: V3) -> V3 {
    let l2 = dot(v, v);
    let r = rsqrt(_mm256_max_ps(l2, splat(1e-30)));
    let ok = _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_GT_OQ>(l2, splat(1e-30)),
        _mm256_cmp_ps::<_CMP_LT_OQ>(l2, splat(f32::INFINITY)),
    );
    let n = scale(v, r);
    V3 {
        x: _mm256_and_ps(ok, n.x),
        y: _mm256_blendv_ps(splat(1.0), n.y, ok),
        z: _mm256_and_ps(ok, n.z),
    }
}

/// 1/|q|², 0 where the blend cancelled (as `dqs::inverse_length_squared`).
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn inverse_length_squared(q: [F; 4]) -> F {
    let l2 = _mm256_fmadd_ps(
        q[3],
        q[3],
        dot(
            V3 {
                x: q[0],
                y: q[1],
                z: q[2],
            },
            V3 {
                x: q[0],
                y: q[1],
                z: q[2],
            },
        ),
    );
    let r = rsqrt(_mm256_max_ps(l2, splat(1e-30)));
    _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_GT_OQ>(l2, splat(1e-30)),
        _mm256_mul_ps(r, r),
    )
}

/// x rotated by the unnormalised quaternion (v, w), 1/|q|² = `inv_len2` (as `dqs::rotate`).
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn rotate(v: V3, w: F, inv_len2: F, x: V3) -> V3 {
    let t = scale(cross(v, x), _mm256_add_ps(inv_len2, inv_len2));
    add3(scale_add(t, w, x), cross(v, t))
}

/// LBS of eight vertices from their blended columns (see `lbs::skin_vertex`).
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn lbs_soa(m: &[F; 12], p: V3, n: V3) -> (V3, V3) {
    let pp = affine_point(m, p);
    let c0 = V3 {
        x: m[0],
        y: m[1],
        z: m[2],
    };
    let c1 = V3 {
        x: m[3],
        y: m[4],
        z: m[5],
    };
    let c2 = V3 {
        x: m[6],
        y: m[7],
        z: m[8],
    };
    // Cofactor matrix [c1×c2, c2×c0, c0×c1] with the sign of det (see `normal_matrix`).
    let x12 = cross(c1, c2);
    let x20 = cross(c2, c0);
    let x01 = cross(c0, c1);
    let det = dot(c0, x12);
    let flip = _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_LT_OQ>(det, _mm256_setzero_ps()),
        splat(-0.0),
    );
    let nn = scale_add(x12, n.x, scale_add(x20, n.y, scale(x01, n.z)));
    let nn = V3 {
        x: _mm256_xor_ps(nn.x, flip),
        y: _mm256_xor_ps(nn.y, flip),
        z: _mm256_xor_ps(nn.z, flip),
    };
    (pp, normalize_safe(nn))
}

/// DQS of eight vertices from blended real and dual parts (see `dqs::skin_vertex`).
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn dqs_soa(q: [F; 4], d: [F; 4], p: V3, n: V3) -> (V3, V3) {
    let inv_len2 = inverse_length_squared(q);
    let v0 = V3 {
        x: q[0],
        y: q[1],
        z: q[2],
    };
    let ve = V3 {
        x: d[0],
        y: d[1],
        z: d[2],
    };
    // t = 2 (w0 vε − wε v0 + v0 × vε) / |b0|².
    let t = scale_add(
        ve,
        q[3],
        scale_add(v0, _mm256_sub_ps(_mm256_setzero_ps(), d[3]), cross(v0, ve)),
    );
    let t = scale(t, _mm256_add_ps(inv_len2, inv_len2));
    (
        add3(rotate(v0, q[3], inv_len2, p), t),
        normalize_safe(rotate(v0, q[3], inv_len2, n)),
    )
}
