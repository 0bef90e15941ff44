//! Dual quaternion skinning: Kavan, Collins, Žára, O'Sullivan, "Geometric Skinning with
//! Approximate Dual Quaternion Blending", ACM TOG 27(4), 2008.
//!
//! Each skin matrix is split into a rigid part `[R_k | t_k]` and a scale/shear part `S_k`
//! (`S = R_k · S_k` with `R_k` the polar factor), so that `world_from_bind_k p = R_k (S_k p) + t_k`.
//! Per vertex (§4, "two-phase skinning" in §4.3 of the paper for non-rigid joints):
//! 1. `S = Σ w_k S_k` applied first (skipped when every joint is rigid, a constant when every
//!    joint has the same stretch, e.g. the 0.01-scaled Mixamo armature);
//! 2. `b = Σ ±w_k q̂_k`, the sign making `q0_k · q0_ref ≥ 0` for the strongest influence `ref`
//!    (antipodality, §4.1); `c = b / |b0|`; `R = rot(c0)`, `t = 2 (w0 vε − wε v0 + v0 × vε)`;
//! 3. `p' = R (S p) + t`, `n' = normalise(R cof(S) n)`.
//!
//! This matches Blender's "Preserve Volume" armature deform for joints without scale (the
//! reference files of /work/shared/rigs/reference).

#![allow(clippy::needless_range_loop)] // fixed-size influence arrays read clearer indexed

use super::{normal_matrix, normalize_safe, strongest, Palette, StretchMode, VertexInput};
use crate::math::{Mat3A, Quat, Vec3, Vec3A, Vec4};

/// Splits a 3×3 linear map into a rotation and the remaining scale/shear: `m = R · S`, with `R`
/// the rotation nearest to `m` (polar decomposition, scaled Newton iteration of Higham 1986,
/// "Computing the polar decomposition", §3, in f64). For a mirroring `m` (det < 0) the polar
/// factor of `−m` is used, leaving the reflection in `S`. A singular `m` gives `(I, m)`.
pub fn split_rigid_stretch(m: Mat3A) -> (Quat, Mat3A) {
    let md = crate::math::Mat3::from(m).as_dmat3();
    let det = md.determinant();
    if !det.is_finite() || det.abs() < 1e-30 {
        return (Quat::IDENTITY, m);
    }
    let mut q = if det < 0.0 { -md } else { md };
    for _ in 0..40 {
        let d = q.determinant();
        if d.is_nan() || d <= 0.0 {
            break;
        }
        // Scaling by |det|^(-1/3) makes the iteration converge in a handful of steps even for
        // the 0.01 armature scale (Higham 1986, eq. 3.1 with the determinant scaling).
        let g = d.powf(-1.0 / 3.0);
        let next = (q * g + q.inverse().transpose() * (1.0 / g)) * 0.5;
        let diff = (next - q)
            .x_axis
            .abs()
            .max_element()
            .max((next - q).y_axis.abs().max_element())
            .max((next - q).z_axis.abs().max_element());
        q = next;
        if diff < 1e-13 {
            break;
        }
    }
    let rotation = glam::DQuat::from_mat3(&q).normalize().as_quat().normalize();
    if !rotation.is_finite() {
        return (Quat::IDENTITY, m);
    }
    let stretch = Mat3A::from_quat(rotation).transpose() * m;
    (rotation, stretch)
}

/// Blends the dual quaternions of one vertex with signs against the strongest influence; returns
/// the (unnormalised) real and dual parts.
#[inline(always)]
pub(crate) fn blend_dq<const N: usize>(
    palette: &Palette,
    j: &[u16; N],
    w: &[f32; N],
) -> (Vec4, Vec4) {
    let rot = |k: usize| {
        Vec4::from(palette.rotation[(j[k] as usize).min(palette.rotation.len().saturating_sub(1))])
    };
    let dual = |k: usize| {
        Vec4::from(palette.dual[(j[k] as usize).min(palette.dual.len().saturating_sub(1))])
    };
    let reference = rot(strongest(w));
    let mut b0 = Vec4::ZERO;
    let mut be = Vec4::ZERO;
    for k in 0..N {
        let r = rot(k);
        // Branch-free sign: the weight takes the sign of q_k · q_ref.
        let s = w[k].copysign(r.dot(reference));
        b0 += r * s;
        be += dual(k) * s;
    }
    (b0, be)
}

/// Blends only the rotations (CoR's q = Σ ±w_k q_k), signs against the strongest influence.
#[inline(always)]
pub(crate) fn blend_rotation<const N: usize>(
    palette: &Palette,
    j: &[u16; N],
    w: &[f32; N],
) -> Vec4 {
    let rot = |k: usize| {
        Vec4::from(palette.rotation[(j[k] as usize).min(palette.rotation.len().saturating_sub(1))])
    };
    let reference = rot(strongest(w));
    let mut b0 = Vec4::ZERO;
    for k in 0..N {
        let r = rot(k);
        // Branch-free sign: the weight takes the sign of q_k · q_ref.
        let s = w[k].copysign(r.dot(reference));
        b0 += r * s;
    }
    b0
}

/// 1/|q|² of a blended quaternion, without a division (refined reciprocal square root,
/// squared); 0 when every weight cancelled, which makes [`rotate`] the identity.
#[inline(always)]
pub(crate) fn inverse_length_squared(q: Vec4) -> f32 {
    let len2 = q.length_squared();
    if len2 > 1e-30 {
        let r = super::rsqrt(len2);
        r * r
    } else {
        0.0
    }
}

/// Rotates `x` by the unnormalised quaternion (v, w) with 1/|q|² = `inv_len2`:
/// x' = x + w t + v × t with t = 2 (v × x)/|q|² (the unit-quaternion formula
/// x + 2w (v × x) + 2 v × (v × x) with the scale divided out). Two cross products, no matrix.
#[inline(always)]
pub(crate) fn rotate(v: Vec3A, w: f32, inv_len2: f32, x: Vec3A) -> Vec3A {
    let t = v.cross(x) * (2.0 * inv_len2);
    x + t * w + v.cross(t)
}

/// The blended scale/shear applied to `p` and `n` before the rigid part (two-phase skinning).
#[inline(always)]
pub(crate) fn apply_stretch<const N: usize, const MODE: u8>(
    palette: &Palette,
    common: &Mat3A,
    j: &[u16; N],
    w: &[f32; N],
    p: Vec3A,
    n: Vec3A,
) -> (Vec3A, Vec3A) {
    match MODE {
        MODE_IDENTITY => (p, n),
        MODE_COMMON => (*common * p, normal_matrix(*common) * n),
        _ => {
            let at = |k: usize| {
                palette.stretch[(j[k] as usize).min(palette.stretch.len().saturating_sub(1))]
            };
            let s0 = at(0);
            let w0 = Vec3A::splat(w[0]);
            let (mut c0, mut c1, mut c2) = (s0.x_axis * w0, s0.y_axis * w0, s0.z_axis * w0);
            for k in 1..N {
                let s = at(k);
                let wk = Vec3A::splat(w[k]);
                c0 += s.x_axis * wk;
                c1 += s.y_axis * wk;
                c2 += s.z_axis * wk;
            }
            let s = Mat3A::from_cols(c0, c1, c2);
            (s * p, normal_matrix(s) * n)
        }
    }
}

pub(crate) const MODE_IDENTITY: u8 = 0;
pub(crate) const MODE_COMMON: u8 = 1;
pub(crate) const MODE_PER_JOINT: u8 = 2;

/// One vertex of DQS; see the module docs.
#[inline(always)]
pub fn skin_vertex<const N: usize, const MODE: u8>(
    palette: &Palette,
    common: &Mat3A,
    j: &[u16; N],
    w: &[f32; N],
    p: Vec3A,
    n: Vec3A,
) -> (Vec3A, Vec3A) {
    let (p, n) = apply_stretch::<N, MODE>(palette, common, j, w, p, n);
    let (b0, be) = blend_dq(palette, j, w);
    let inv_len2 = inverse_length_squared(b0);
    // t = 2 (w0 vε − wε v0 + v0 × vε) for c = b/|b0|; with b unnormalised, the products of two
    // parts carry 1/|b0|².
    let v0 = Vec3A::new(b0.x, b0.y, b0.z);
    let ve = Vec3A::new(be.x, be.y, be.z);
    let t = (ve * b0.w - v0 * be.w + v0.cross(ve)) * (2.0 * inv_len2);
    (
        rotate(v0, b0.w, inv_len2, p) + t,
        normalize_safe(rotate(v0, b0.w, inv_len2, n)),
    )
}

pub(crate) fn skin(
    input: &VertexInput,
    palette: &Palette,
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    match palette.stretch_mode {
        StretchMode::Identity => {
            skin_mode::<MODE_IDENTITY>(input, palette, &Mat3A::IDENTITY, out_positions, out_normals)
        }
        StretchMode::Common(s) => {
            skin_mode::<MODE_COMMON>(input, palette, &s, out_positions, out_normals)
        }
        StretchMode::PerJoint => skin_mode::<MODE_PER_JOINT>(
            input,
            palette,
            &Mat3A::IDENTITY,
            out_positions,
            out_normals,
        ),
    }
}

fn skin_mode<const MODE: u8>(
    input: &VertexInput,
    palette: &Palette,
    common: &Mat3A,
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    if input.eight() {
        input.for_each(out_positions, out_normals, |i| {
            let (j, w) = input.influences::<8>(i);
            skin_vertex::<8, MODE>(
                palette,
                common,
                &j,
                &w,
                input.positions[i].into(),
                input.normals[i].into(),
            )
        });
    } else {
        input.for_each(out_positions, out_normals, |i| {
            let (j, w) = input.influences::<4>(i);
            skin_vertex::<4, MODE>(
                palette,
                common,
                &j,
                &w,
                input.positions[i].into(),
                input.normals[i].into(),
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_recovers_rotation_and_scale() {
        let r = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0);
        let s = Mat3A::from_diagonal(Vec3::new(0.01, 0.02, 0.03));
        let (q, st) = split_rigid_stretch(Mat3A::from_quat(r) * s);
        assert!(q.dot(r).abs() > 1.0 - 1e-6, "{q} vs {r}");
        assert!((st.x_axis - s.x_axis).abs().max_element() < 1e-7);
        assert!((st.z_axis - s.z_axis).abs().max_element() < 1e-7);
        // A mirror keeps a proper rotation and moves the reflection into S.
        let (q, st) = split_rigid_stretch(Mat3A::from_diagonal(Vec3::new(-1.0, 1.0, 1.0)));
        assert!(q.is_normalized());
        assert!(
            (Mat3A::from_quat(q) * st - Mat3A::from_diagonal(Vec3::new(-1.0, 1.0, 1.0)))
                .x_axis
                .length()
                < 1e-6
        );
        let (q, st) = split_rigid_stretch(Mat3A::ZERO);
        assert_eq!((q, st), (Quat::IDENTITY, Mat3A::ZERO));
    }

    #[test]
    fn rotation_by_an_unnormalised_quaternion() {
        let q = Quat::from_axis_angle(Vec3::new(1.0, -2.0, 0.5).normalize(), 2.3);
        let b = Vec4::from(q) * 3.0;
        let x = Vec3A::new(0.3, -1.2, 2.0);
        let r = rotate(Vec3A::new(b.x, b.y, b.z), b.w, inverse_length_squared(b), x);
        assert!((r - Vec3A::from(q * Vec3::from(x))).length() < 1e-5);
        assert_eq!(
            rotate(Vec3A::ZERO, 0.0, inverse_length_squared(Vec4::ZERO), x),
            x
        );
    }
}
