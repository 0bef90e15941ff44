//! Linear blend skinning (glTF 2.0 §3.7.3 "Skins"): `p' = (Σ_k w_k S_k) p`, with the skin matrix
//! `S_k = world_from_node[joint_k] · inverse_bind_k`. Normals use the inverse-transpose of the
//! blended 3×3 (here its cofactor matrix, which differs by the factor det and needs no division),
//! renormalised.

#![allow(clippy::needless_range_loop)] // fixed-size influence arrays read clearer indexed

use super::{normal_matrix, normalize_safe, Palette, VertexInput};
use crate::math::{Affine3A, Mat3A, Vec3, Vec3A};

/// Blends the affine palette entries of one vertex: Σ w_k S_k.
#[inline(always)]
pub(crate) fn blend_affine<const N: usize>(
    palette: &[Affine3A],
    j: &[u16; N],
    w: &[f32; N],
) -> Affine3A {
    // Clamping instead of `get` keeps the loop branch-free and lets the compiler drop the bounds
    // check; callers pad the palette, so the clamp only matters for corrupt joint numbers.
    let last = palette.len().saturating_sub(1);
    let at = |k: usize| &palette[(j[k] as usize).min(last)];
    let a = at(0);
    let w0 = Vec3A::splat(w[0]);
    let (mut c0, mut c1, mut c2, mut t) = (
        a.matrix3.x_axis * w0,
        a.matrix3.y_axis * w0,
        a.matrix3.z_axis * w0,
        a.translation * w0,
    );
    for k in 1..N {
        let a = at(k);
        let wk = Vec3A::splat(w[k]);
        c0 += a.matrix3.x_axis * wk;
        c1 += a.matrix3.y_axis * wk;
        c2 += a.matrix3.z_axis * wk;
        t += a.translation * wk;
    }
    Affine3A {
        matrix3: Mat3A::from_cols(c0, c1, c2),
        translation: t,
    }
}

/// One vertex: blended matrix applied to the position, its cofactor to the normal.
#[inline(always)]
pub fn skin_vertex<const N: usize>(
    palette: &Palette,
    j: &[u16; N],
    w: &[f32; N],
    p: Vec3A,
    n: Vec3A,
) -> (Vec3A, Vec3A) {
    let m = blend_affine(&palette.world_from_bind, j, w);
    let p = m.matrix3 * p + m.translation;
    let n = normalize_safe(normal_matrix(m.matrix3) * n);
    (p, n)
}

pub(crate) fn skin(
    input: &VertexInput,
    palette: &Palette,
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) {
    if input.eight() {
        input.for_each(out_positions, out_normals, |i| {
            let (j, w) = input.influences::<8>(i);
            skin_vertex(
                palette,
                &j,
                &w,
                input.positions[i].into(),
                input.normals[i].into(),
            )
        });
    } else {
        input.for_each(out_positions, out_normals, |i| {
            let (j, w) = input.influences::<4>(i);
            skin_vertex(
                palette,
                &j,
                &w,
                input.positions[i].into(),
                input.normals[i].into(),
            )
        });
    }
}
