//! AVX2 + FMA kernels for four-influence meshes: eight vertices at a time.
//!
//! The formulas are those of `lbs.rs`, `dqs.rs` and `cor.rs` (the portable per-vertex kernels,
//! which stay the reference and the path for other CPUs, eight influences and per-joint stretch);
//! only the evaluation order changes, so results agree to float rounding (FMA contracts the
//! products, sums run strongest influence first).
//!
//! Shape of one block of eight vertices:
//! 1. **Blend, one vertex at a time, in registers**: a palette entry is contiguous
//!    (`Affine3A` = four 16-byte columns = two ymm loads), so Σ w_k S_k is two 8-wide FMAs per
//!    influence with the weight broadcast from memory; quaternions are one 4-wide FMA each.
//!    Gathering palette entries lane by lane instead would cost 12 gathers per influence.
//! 2. **Transpose** the eight blended entries into structure-of-arrays registers (one lane per
//!    vertex): 24 shuffles per 8×8 block.
//! 3. **Everything else lane-parallel**: transform, cofactor normal matrix, quaternion
//!    rotation and normalisation are then plain 8-wide arithmetic with no horizontal operations.
//!
//! Steps 1 and 2 live in `blend.rs`, step 3 in `lanes.rs`; this file packs the mesh and runs
//! the per-method chunk kernels over it.
//!
//! The per-vertex inputs are packed once ([`PackedMesh`], built by `Skinner::new`) into one
//! 64-byte record per vertex (position, normal, weights, joints) so the hot loop streams a single
//! aligned array; joints are clamped to the palette there, and influences are sorted strongest
//! first so the DQS sign reference (Kavan et al. 2008 §4.1) is always influence 0.

mod blend;
mod lanes;

use self::blend::*;
use self::lanes::*;
use super::{cor, dqs, lbs, normal_matrix, Palette, StretchMode, CHUNK};
use crate::math::{Mat3A, Vec3, Vec3A};
use crate::rig::SkinnedMesh;
use rayon::prelude::*;

/// Vertices per SIMD block (one ymm lane each).
const LANES: usize = 8;

/// Whether this CPU can run the kernels of this module.
pub(crate) fn available() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

/// One vertex's inputs, 64 bytes (one cache line).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PackedVertex {
    /// Bind-space position, w = 1 (unused).
    p: [f32; 4],
    /// Bind-space normal, w = 0 (unused).
    n: [f32; 4],
    /// Weights, strongest first (stable: ties keep their file order).
    w: [f32; 4],
    /// Joint numbers in the order of `w`, clamped to `palette_len − 1`.
    j: [u32; 4],
}

/// The packed inputs of one four-influence skinned mesh.
#[derive(Clone, Debug, Default)]
pub(crate) struct PackedMesh {
    verts: Vec<PackedVertex>,
    /// Palette length the joints were clamped against; the kernels refuse any other.
    palette_len: usize,
    /// CoR centre per vertex (w unused). A vertex without a centre and a single influence uses
    /// its own position: `R S (p − p) + LBS(p)` is then exactly that joint's transform, what DQS
    /// gives it too. Empty until centres are set.
    centers: Vec<[f32; 4]>,
    /// Per block of [`LANES`]: a vertex there has no centre but several influences, so the block
    /// runs the portable CoR kernel (which falls back to DQS per vertex).
    portable_cor_block: Vec<bool>,
}

impl PackedMesh {
    /// Packs `mesh` (4 influences, `normals` as long as its positions) against a palette of
    /// `palette_len` ≥ 1 joints; `None` where the mesh does not qualify.
    pub(crate) fn new(mesh: &SkinnedMesh, normals: &[Vec3], palette_len: usize) -> Option<Self> {
        let n = mesh.positions.len();
        if palette_len == 0
            || !mesh.joints1.is_empty()
            || mesh.joints.len() != n
            || mesh.weights.len() != n
            || normals.len() != n
        {
            return None;
        }
        let last = (palette_len - 1) as u32;
        let verts = (0..n)
            .map(|i| {
                let (p, nn) = (mesh.positions[i], normals[i]);
                let (j, w) = (mesh.joints[i], mesh.weights[i]);
                let mut order = [0usize, 1, 2, 3];
                // Stable and descending, so influence 0 is the first largest weight, the sign
                // reference `strongest` picks. `total_cmp` keeps the order total for NaN input.
                order.sort_by(|&a, &b| w[b].total_cmp(&w[a]));
                PackedVertex {
                    p: [p.x, p.y, p.z, 1.0],
                    n: [nn.x, nn.y, nn.z, 0.0],
                    w: order.map(|k| w[k]),
                    j: order.map(|k| (j[k] as u32).min(last)),
                }
            })
            .collect();
        Some(Self {
            verts,
            palette_len,
            centers: Vec::new(),
            portable_cor_block: Vec::new(),
        })
    }

    /// Packs CoR centres (NaN where a vertex has none), or clears them.
    pub(crate) fn set_centers(&mut self, centers: Option<&[Vec3]>) {
        self.centers.clear();
        self.portable_cor_block.clear();
        let Some(centers) = centers.filter(|c| c.len() == self.verts.len()) else {
            return;
        };
        self.portable_cor_block = vec![false; self.verts.len().div_ceil(LANES)];
        for (i, (v, c)) in self.verts.iter().zip(centers).enumerate() {
            let c = if c.is_finite() {
                [c.x, c.y, c.z, 0.0]
            } else {
                if v.w.iter().filter(|&&w| w != 0.0).count() > 1 {
                    self.portable_cor_block[i / LANES] = true;
                }
                v.p
            };
            self.centers.push(c);
        }
    }

    pub(crate) fn has_centers(&self) -> bool {
        !self.centers.is_empty()
    }
}

/// Skins `mesh` with its packed form. Returns `false`, touching nothing, where these kernels do
/// not apply (palette of another length, per-joint stretch for DQS/CoR); the caller then runs
/// the portable path. `cor` must be the centres `packed` holds (`None`: DQS instead of CoR).
#[allow(clippy::too_many_arguments)]
pub(crate) fn skin(
    packed: &PackedMesh,
    mesh: &SkinnedMesh,
    normals: &[Vec3],
    palette: &Palette,
    method: super::SkinMethod,
    cor: Option<&[Vec3]>,
    out_positions: &mut [Vec3],
    out_normals: &mut [Vec3],
) -> bool {
    use super::SkinMethod;
    let n = packed.verts.len();
    if palette.len() != packed.palette_len
        || out_positions.len() != n
        || out_normals.len() != n
        || mesh.positions.len() != n
        || normals.len() != n
        || !available()
    {
        return false;
    }
    let stretch = match (method, palette.stretch_mode) {
        (SkinMethod::Lbs, _) => Mat3A::IDENTITY,
        (_, StretchMode::Identity) => Mat3A::IDENTITY,
        (_, StretchMode::Common(s)) => s,
        (_, StretchMode::PerJoint) => return false,
    };
    let rigid = !matches!(palette.stretch_mode, StretchMode::Common(_));
    let ctx = Ctx {
        packed,
        mesh,
        normals,
        palette,
        stretch: Stretch::new(stretch),
    };
    let cor = cor.filter(|c| c.len() == n && packed.has_centers());
    // SAFETY (all three): `available()` checked AVX2 and FMA above.
    match (method, cor) {
        (SkinMethod::Lbs, _) => run(out_positions, out_normals, &|b, op, on| unsafe {
            ctx.lbs_chunk(b, op, on)
        }),
        (SkinMethod::Dqs, _) | (SkinMethod::Cor, None) => {
            if rigid {
                run(out_positions, out_normals, &|b, op, on| unsafe {
                    ctx.dqs_chunk::<false>(b, op, on)
                })
            } else {
                run(out_positions, out_normals, &|b, op, on| unsafe {
                    ctx.dqs_chunk::<true>(b, op, on)
                })
            }
        }
        (SkinMethod::Cor, Some(c)) => {
            if rigid {
                run(out_positions, out_normals, &|b, op, on| unsafe {
                    ctx.cor_chunk::<false>(c, b, op, on)
                })
            } else {
                run(out_positions, out_normals, &|b, op, on| unsafe {
                    ctx.cor_chunk::<true>(c, b, op, on)
                })
            }
        }
    }
    true
}

/// A chunk kernel: `(first_vertex, positions, normals)`.
type ChunkFn<'a> = dyn Fn(usize, &mut [Vec3], &mut [Vec3]) + Sync + 'a;

/// Runs `f(first_vertex, positions, normals)` over fixed chunks in parallel (as
/// `VertexInput::for_each`: each vertex is computed on its own, so the result does not depend on
/// the thread count).
fn run(out_positions: &mut [Vec3], out_normals: &mut [Vec3], f: &ChunkFn<'_>) {
    out_positions
        .par_chunks_mut(CHUNK)
        .zip(out_normals.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, (op, on))| f(c * CHUNK, op, on));
}

/// A common scale/shear `S` and its normal matrix, as broadcast scalars (column-major).
#[derive(Clone, Copy)]
struct Stretch {
    s: [f32; 9],
    cof: [f32; 9],
}

impl Stretch {
    fn new(s: Mat3A) -> Self {
        let cols = |m: Mat3A| {
            let a = m.to_cols_array();
            [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]]
        };
        Self {
            s: cols(s),
            cof: cols(normal_matrix(s)),
        }
    }
}

struct Ctx<'a> {
    packed: &'a PackedMesh,
    mesh: &'a SkinnedMesh,
    normals: &'a [Vec3],
    palette: &'a Palette,
    stretch: Stretch,
}

impl Ctx<'_> {
    /// The portable kernels' inputs for vertex `i` (tails and CoR fallback blocks).
    #[inline(always)]
    fn vertex(&self, i: usize) -> ([u16; 4], [f32; 4], Vec3A, Vec3A) {
        (
            self.mesh.joints[i],
            self.mesh.weights[i],
            self.mesh.positions[i].into(),
            self.normals[i].into(),
        )
    }

    fn common(&self) -> Mat3A {
        Mat3A::from_cols_slice(&self.stretch.s)
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn lbs_chunk(&self, base: usize, op: &mut [Vec3], on: &mut [Vec3]) {
        let full = op.len() / LANES * LANES;
        let verts = &self.packed.verts[base..base + op.len()];
        let pal = self.palette.world_from_bind.as_ptr() as *const f32;
        for b in (0..full).step_by(LANES) {
            let v: &[PackedVertex; LANES] = verts[b..b + LANES].try_into().unwrap();
            let (p, n) = load_pn(v);
            let m = blend_affine(pal, v);
            let (pp, nn) = lbs_soa(&m, p, n);
            store(pp, op[b..b + LANES].as_mut_ptr());
            store(nn, on[b..b + LANES].as_mut_ptr());
        }
        for k in full..op.len() {
            let (j, w, p, n) = self.vertex(base + k);
            let (pp, nn) = lbs::skin_vertex::<4>(self.palette, &j, &w, p, n);
            op[k] = pp.into();
            on[k] = nn.into();
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn dqs_chunk<const STRETCH: bool>(&self, base: usize, op: &mut [Vec3], on: &mut [Vec3]) {
        let full = op.len() / LANES * LANES;
        let verts = &self.packed.verts[base..base + op.len()];
        let rot = self.palette.rotation.as_ptr() as *const f32;
        let dual = self.palette.dual.as_ptr() as *const f32;
        for b in (0..full).step_by(LANES) {
            let v: &[PackedVertex; LANES] = verts[b..b + LANES].try_into().unwrap();
            let (mut p, mut n) = load_pn(v);
            if STRETCH {
                (p, n) = self.stretch_soa(p, n);
            }
            let (q, d) = blend_dq(rot, dual, v);
            let (pp, nn) = dqs_soa(q, d, p, n);
            store(pp, op[b..b + LANES].as_mut_ptr());
            store(nn, on[b..b + LANES].as_mut_ptr());
        }
        let common = self.common();
        for k in full..op.len() {
            let (j, w, p, n) = self.vertex(base + k);
            let (pp, nn) = if STRETCH {
                dqs::skin_vertex::<4, { dqs::MODE_COMMON }>(self.palette, &common, &j, &w, p, n)
            } else {
                dqs::skin_vertex::<4, { dqs::MODE_IDENTITY }>(self.palette, &common, &j, &w, p, n)
            };
            op[k] = pp.into();
            on[k] = nn.into();
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn cor_chunk<const STRETCH: bool>(
        &self,
        centers: &[Vec3],
        base: usize,
        op: &mut [Vec3],
        on: &mut [Vec3],
    ) {
        let full = op.len() / LANES * LANES;
        let verts = &self.packed.verts[base..base + op.len()];
        let packed_centers = &self.packed.centers[base..base + op.len()];
        let pal = self.palette.world_from_bind.as_ptr() as *const f32;
        let rot = self.palette.rotation.as_ptr() as *const f32;
        let common = self.common();
        let portable = |k: usize, op: &mut [Vec3], on: &mut [Vec3]| {
            let (j, w, p, n) = self.vertex(base + k);
            let (pp, nn) = if STRETCH {
                cor::skin_vertex_or_dqs::<4, { dqs::MODE_COMMON }>(
                    self.palette,
                    &common,
                    &j,
                    &w,
                    p,
                    n,
                    centers[base + k],
                )
            } else {
                cor::skin_vertex_or_dqs::<4, { dqs::MODE_IDENTITY }>(
                    self.palette,
                    &common,
                    &j,
                    &w,
                    p,
                    n,
                    centers[base + k],
                )
            };
            op[k] = pp.into();
            on[k] = nn.into();
        };
        for b in (0..full).step_by(LANES) {
            // CHUNK is a multiple of LANES, so blocks never straddle chunks.
            if self.packed.portable_cor_block[(base + b) / LANES] {
                for k in b..b + LANES {
                    portable(k, op, on);
                }
                continue;
            }
            let v: &[PackedVertex; LANES] = verts[b..b + LANES].try_into().unwrap();
            let c: &[[f32; 4]; LANES] = packed_centers[b..b + LANES].try_into().unwrap();
            let (p, n) = load_pn(v);
            let c = load_v3(c);
            let (m, q) = blend_affine_rotation(pal, rot, v);
            // p' = R(q) S (p − p*) + LBS(p*), n' = R(q) cof(S) n (Le & Hodgins 2016, §5).
            let lbs_c = affine_point(&m, c);
            let mut d = sub3(p, c);
            let mut n = n;
            if STRETCH {
                (d, n) = self.stretch_soa(d, n);
            }
            let inv_len2 = inverse_length_squared(q);
            let v0 = V3 {
                x: q[0],
                y: q[1],
                z: q[2],
            };
            let pp = add3(rotate(v0, q[3], inv_len2, d), lbs_c);
            let nn = normalize_safe(rotate(v0, q[3], inv_len2, n));
            store(pp, op[b..b + LANES].as_mut_ptr());
            store(nn, on[b..b + LANES].as_mut_ptr());
        }
        for k in full..op.len() {
            portable(k, op, on);
        }
    }

    /// `(S p, cof(S) n)` for the common stretch (two-phase skinning, Kavan et al. 2008 §4.3).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn stretch_soa(&self, p: V3, n: V3) -> (V3, V3) {
        (mat3_mul(&self.stretch.s, p), mat3_mul(&self.stretch.cof, n))
    }
}

#[cfg(test)]
mod tests {
    use super::super::synthetic::{capsule_chain, ChainSpec};
    use super::super::{SkinMethod, Skinner};
    use crate::anim::Pose;
    use crate::math::{Quat, Transform, Vec3};

    /// The AVX2 kernels against the portable ones on a bent, twisted chain, in both Mixamo
    /// scale conventions (rigid palette, common 0.01 stretch), for every method, with a vertex
    /// count that leaves a tail.
    #[test]
    fn avx2_matches_the_portable_kernels() {
        if !super::available() {
            eprintln!("no AVX2/FMA on this CPU: nothing to compare");
            return;
        }
        for centimetres in [false, true] {
            let spec = ChainSpec {
                bones: 5,
                rings_per_bone: 9,
                segments: 13,
                influences: 4,
                falloff: 0.8,
                ..ChainSpec::default()
            };
            let mut rig = capsule_chain(&spec);
            if centimetres {
                // Mixamo's 0.01 armature with centimetre vertices: every skin matrix then carries
                // the same ×100 stretch.
                rig.skeleton.rest[0].scale = Vec3::splat(0.01);
                for m in &mut rig.meshes {
                    m.positions.iter_mut().for_each(|p| *p *= 100.0);
                }
                let mut world = Vec::new();
                Pose::rest(&rig.skeleton).world_from_node(&rig.skeleton, &mut world);
                let skin = &mut rig.skins[0];
                for (k, &node) in skin.joints.iter().enumerate() {
                    skin.inverse_bind[k] = world[node as usize].inverse();
                }
            }
            assert!(!rig.meshes[0].positions.len().is_multiple_of(8));
            let mut pose = Pose::rest(&rig.skeleton);
            for b in 1..pose.local.len() {
                pose.local[b].rotation =
                    Quat::from_rotation_z(0.5) * Quat::from_rotation_y(0.9 * b as f32);
            }
            pose.local[0] = Transform {
                translation: Vec3::new(0.3, -1.0, 2.0),
                rotation: Quat::from_rotation_x(2.8),
                scale: pose.local[0].scale,
            };
            let mut world = Vec::new();
            pose.world_from_node(&rig.skeleton, &mut world);
            let mut fast = Skinner::new(&rig);
            assert!(
                fast.packed[0].is_some(),
                "the chain must take the AVX2 path"
            );
            let mut slow = Skinner::new(&rig);
            slow.force_portable(true);
            let c = super::super::cor::compute_centers(
                &rig.meshes[0],
                super::super::cor::DEFAULT_SIGMA,
                &mut |_| {},
            );
            fast.set_cor_centers(&rig, 0, c.clone());
            slow.set_cor_centers(&rig, 0, c);
            let scale = rig.meshes[0]
                .positions
                .iter()
                .fold(0f32, |m, p| m.max(p.length()));
            for method in SkinMethod::ALL {
                fast.update(&rig, &world, method);
                slow.update(&rig, &world, method);
                let (fp, sp) = (fast.positions(0), slow.positions(0));
                // FMA contraction makes some results differ in the last bits: proof that the
                // two paths really are different code.
                assert!(
                    fp.iter().zip(sp).any(|(a, b)| a != b),
                    "{method}: same bits"
                );
                for i in 0..fp.len() {
                    assert!(
                        (fp[i] - sp[i]).length() <= 2e-6 * scale,
                        "{method} cm={centimetres} vertex {i}: {} vs {}",
                        fp[i],
                        sp[i]
                    );
                    let (fnn, snn) = (fast.normals(0)[i], slow.normals(0)[i]);
                    assert!(
                        (fnn - snn).length() <= 2e-5,
                        "{method} cm={centimetres} normal {i}: {fnn} vs {snn}"
                    );
                }
            }
        }
    }
}
