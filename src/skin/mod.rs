//! CPU skinning: linear blend (LBS), dual quaternions (DQS) and optimized centres of rotation
//! (CoR). PHYSICS.md §4 states the equations; each kernel cites its paper.
//!
//! One frame: [`Palette::update`] turns the posed skeleton into per-joint skin data once
//! (`world_from_bind[k] = world_from_node[joints[k]] * inverse_bind[k]` as a 3×4 affine for LBS,
//! split into a dual quaternion and a scale/shear part for DQS and CoR), then a tight per-vertex
//! loop runs in parallel over fixed chunks of vertices (rayon; each vertex is computed on its own,
//! so results do not depend on scheduling). [`Skinner`] owns the palettes and the output buffers
//! so that a frame allocates nothing.
//!
//! Output positions and normals are in glTF world space: the skinned mesh node's own transform is
//! ignored (glTF 2.0 §3.7.3.3); rigid meshes (no skin) follow their node's world matrix.

#[cfg(target_arch = "x86_64")]
mod avx2;
pub mod cor;
pub mod dqs;
pub mod lbs;
pub mod synthetic;

pub use cor::{CorCenters, CorProgress};

use crate::anim::Skin;
use crate::math::{Affine3A, DualQuat, Mat3A, Mat4, Quat, Vec3, Vec3A};
use crate::rig::{Rig, SkinnedMesh};
use rayon::prelude::*;

/// Vertices per parallel work item: large enough to amortise rayon's scheduling (~1 µs), small
/// enough to balance two to sixteen cores on a 5k–28k vertex character.
pub(crate) const CHUNK: usize = 2048;

/// Which skinning formula to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum SkinMethod {
    /// Linear blend skinning: p' = (Σ w_k S_k) p.
    #[default]
    Lbs,
    /// Dual quaternion skinning (Kavan et al. 2008), two-phase for scale.
    Dqs,
    /// Optimized centres of rotation (Le & Hodgins 2016); DQS where no centre exists.
    Cor,
}

impl SkinMethod {
    pub const ALL: [SkinMethod; 3] = [SkinMethod::Lbs, SkinMethod::Dqs, SkinMethod::Cor];

    pub fn name(self) -> &'static str {
        match self {
            SkinMethod::Lbs => "lbs",
            SkinMethod::Dqs => "dqs",
            SkinMethod::Cor => "cor",
        }
    }
}

impl std::fmt::Display for SkinMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SkinMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "lbs" | "linear" => Ok(SkinMethod::Lbs),
            "dqs" | "dual-quaternion" | "dual_quaternion" => Ok(SkinMethod::Dqs),
            "cor" | "centers-of-rotation" | "optimized-cor" => Ok(SkinMethod::Cor),
            _ => Err(format!(
                "unknown skinning method '{s}' (expected lbs, dqs or cor)"
            )),
        }
    }
}

/// How the palette's scale/shear parts (`world_from_bind = rigid × stretch`) vary over joints;
/// decided once per frame so the per-vertex loop does only the work it needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StretchMode {
    /// Every joint is rigid (Blender-style exports: scale folded into the inverse binds).
    Identity,
    /// Every joint has the same stretch (the 0.01 Mixamo armature with centimetre vertices).
    Common(Mat3A),
    /// Stretch varies per joint (scaled bones): blended linearly per vertex, then applied first.
    PerJoint,
}

/// Per-joint skin data for one skin at one frame. Index `k` is the skin's joint number (the value
/// stored in a vertex's JOINTS); the palette is padded with identities up to the largest joint
/// number any mesh uses so a bad index cannot read out of bounds.
#[derive(Clone, Debug)]
pub struct Palette {
    /// `world_from_bind[k]` (LBS and CoR's LBS(p*)).
    pub world_from_bind: Vec<Affine3A>,
    /// Rotation of the rigid part `[R_k | t_k]` (DQS real part, CoR's q_k).
    pub rotation: Vec<Quat>,
    /// Dual part of the rigid part: ½ (0, t_k) R_k.
    pub dual: Vec<Quat>,
    /// `stretch[k] = R_kᵀ · linear(world_from_bind[k])`: scale/shear applied before the rigid part.
    pub stretch: Vec<Mat3A>,
    pub stretch_mode: StretchMode,
}

impl Default for Palette {
    fn default() -> Self {
        Self {
            world_from_bind: Vec::new(),
            rotation: Vec::new(),
            dual: Vec::new(),
            stretch: Vec::new(),
            stretch_mode: StretchMode::Identity,
        }
    }
}

impl Palette {
    pub fn len(&self) -> usize {
        self.world_from_bind.len()
    }

    pub fn is_empty(&self) -> bool {
        self.world_from_bind.is_empty()
    }

    /// Recomputes the palette of `skin` from `world_from_node` (forward kinematics of the current
    /// pose), padded with identities to at least `min_len` entries. Joints whose node index is out
    /// of range are treated as at rest at the origin (identity). Allocates only when it grows.
    pub fn update(&mut self, world_from_node: &[Mat4], skin: &Skin, min_len: usize) {
        let n = skin.joints.len().max(min_len);
        self.world_from_bind.resize(n, Affine3A::IDENTITY);
        self.rotation.resize(n, Quat::IDENTITY);
        self.dual.resize(n, DualQuat::IDENTITY.dual);
        self.stretch.resize(n, Mat3A::IDENTITY);
        for k in 0..n {
            let m = match (skin.joints.get(k), skin.inverse_bind.get(k)) {
                (Some(&node), ibm) => {
                    let world = world_from_node
                        .get(node as usize)
                        .copied()
                        .unwrap_or(Mat4::IDENTITY);
                    world * ibm.copied().unwrap_or(Mat4::IDENTITY)
                }
                (None, _) => Mat4::IDENTITY,
            };
            self.set(k, &m);
        }
        self.classify();
    }

    /// A palette for one rigid transform (meshes without a skin, and tests).
    pub fn from_matrices(world_from_bind: &[Mat4]) -> Self {
        let mut p = Palette::default();
        let n = world_from_bind.len();
        p.world_from_bind.resize(n, Affine3A::IDENTITY);
        p.rotation.resize(n, Quat::IDENTITY);
        p.dual.resize(n, DualQuat::IDENTITY.dual);
        p.stretch.resize(n, Mat3A::IDENTITY);
        for (k, m) in world_from_bind.iter().enumerate() {
            p.set(k, m);
        }
        p.classify();
        p
    }

    fn set(&mut self, k: usize, m: &Mat4) {
        let affine = Affine3A::from_mat4(*m);
        let affine = if affine.is_finite() {
            affine
        } else {
            Affine3A::IDENTITY
        };
        let (rotation, stretch) = dqs::split_rigid_stretch(affine.matrix3);
        // Canonical sign (w ≥ 0): q and −q are the same rotation, and keeping neighbouring joints
        // in one hemisphere makes the per-vertex antipodality flip rare.
        let rotation = if rotation.w < 0.0 {
            -rotation
        } else {
            rotation
        };
        let dq = DualQuat::from_rotation_translation(rotation, Vec3::from(affine.translation));
        self.world_from_bind[k] = affine;
        self.rotation[k] = dq.real;
        self.dual[k] = dq.dual;
        self.stretch[k] = stretch;
    }

    fn classify(&mut self) {
        let close = |a: &Mat3A, b: &Mat3A, tol: f32| {
            (a.x_axis - b.x_axis).abs().max_element() <= tol
                && (a.y_axis - b.y_axis).abs().max_element() <= tol
                && (a.z_axis - b.z_axis).abs().max_element() <= tol
        };
        let Some(first) = self.stretch.first().copied() else {
            self.stretch_mode = StretchMode::Identity;
            return;
        };
        // Tolerances relative to the stretch's size: f32 polar decompositions of rigid matrices
        // leave ~1e-7 noise, which must not force the per-joint path.
        let size = first
            .x_axis
            .length()
            .max(first.y_axis.length())
            .max(first.z_axis.length())
            .max(1e-30);
        let tol = 2e-6 * size;
        self.stretch_mode = if self
            .stretch
            .iter()
            .all(|s| close(s, &Mat3A::IDENTITY, 2e-6))
        {
            StretchMode::Identity
        } else if self.stretch.iter().all(|s| close(s, &first, tol)) {
            StretchMode::Common(first)
        } else {
            StretchMode::PerJoint
        };
    }
}

/// Skinned positions and normals of one mesh, in world space.
#[derive(Clone, Debug, Default)]
pub struct SkinnedOutput {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
}

/// Skins every mesh of a rig. Owns the palettes (one per skin), the output buffers (one per mesh)
/// and the CoR centres (one per skinned mesh, once prepared).
#[derive(Clone, Debug, Default)]
pub struct Skinner {
    palettes: Vec<Palette>,
    /// Palette length per skin: joint count, or more when a mesh uses larger joint numbers.
    palette_len: Vec<usize>,
    outputs: Vec<SkinnedOutput>,
    cor: Vec<Option<CorCenters>>,
    /// Unit +Y normals for meshes whose normal count does not match their positions.
    fallback_normals: Vec<Option<Vec<Vec3>>>,
    /// Packed inputs of four-influence meshes for the AVX2 kernels (only where the CPU has
    /// AVX2 and FMA); `None` meshes take the portable path.
    #[cfg(target_arch = "x86_64")]
    packed: Vec<Option<avx2::PackedMesh>>,
}

impl Skinner {
    /// Allocates palettes and output buffers for `rig`.
    pub fn new(rig: &Rig) -> Self {
        let mut palette_len: Vec<usize> = rig.skins.iter().map(|s| s.joints.len()).collect();
        for mesh in &rig.meshes {
            if let Some(s) = mesh
                .skin
                .map(|s| s as usize)
                .filter(|&s| s < palette_len.len())
            {
                let max_joint = mesh
                    .joints
                    .iter()
                    .chain(&mesh.joints1)
                    .flat_map(|j| j.iter())
                    .copied()
                    .max();
                if let Some(m) = max_joint {
                    palette_len[s] = palette_len[s].max(m as usize + 1);
                }
            }
        }
        let outputs = rig
            .meshes
            .iter()
            .map(|m| SkinnedOutput {
                positions: m.positions.clone(),
                normals: vec![Vec3::Y; m.positions.len()],
            })
            .collect();
        let fallback_normals = rig
            .meshes
            .iter()
            .map(|m| {
                (m.normals.len() != m.positions.len()).then(|| vec![Vec3::Y; m.positions.len()])
            })
            .collect();
        #[cfg(target_arch = "x86_64")]
        let packed = rig
            .meshes
            .iter()
            .zip(&fallback_normals)
            .map(|(m, fallback): (&SkinnedMesh, &Option<Vec<Vec3>>)| {
                let s = m.skin? as usize;
                let len = *palette_len.get(s)?;
                if !avx2::available() {
                    return None;
                }
                avx2::PackedMesh::new(m, fallback.as_deref().unwrap_or(&m.normals), len)
            })
            .collect();
        Self {
            palettes: vec![Palette::default(); rig.skins.len()],
            palette_len,
            outputs,
            cor: vec![None; rig.meshes.len()],
            fallback_normals,
            #[cfg(target_arch = "x86_64")]
            packed,
        }
    }

    /// Runs only the portable kernels (`true`) or the fastest this CPU has (`false`, the
    /// default). For comparing the two; results agree to float rounding.
    pub fn force_portable(&mut self, portable: bool) {
        #[cfg(target_arch = "x86_64")]
        if portable {
            self.packed.iter_mut().for_each(|p| *p = None);
        }
        let _ = portable;
    }

    /// Computes (or loads from the disk cache) the CoR centres of every skinned mesh. `progress`
    /// is called from this thread with the mesh index and how far it is.
    pub fn prepare_cor(&mut self, rig: &Rig, progress: &mut dyn FnMut(usize, CorProgress)) {
        self.prepare_cor_in(rig, cor::cache_dir().as_deref(), progress);
    }

    /// [`Skinner::prepare_cor`] with the centres cached in `cache` (`None`: computed, not
    /// cached).
    pub fn prepare_cor_in(
        &mut self,
        rig: &Rig,
        cache: Option<&std::path::Path>,
        progress: &mut dyn FnMut(usize, CorProgress),
    ) {
        for (i, mesh) in rig.meshes.iter().enumerate() {
            if mesh.skin.is_none() || mesh.joints.len() != mesh.positions.len() {
                continue;
            }
            let centers =
                cor::centers_cached_in(cache, mesh, cor::DEFAULT_SIGMA, &mut |p| progress(i, p));
            self.store_cor(i, centers);
        }
    }

    /// Sets the CoR centres of mesh `mesh` (e.g. computed elsewhere); ignored if the vertex count
    /// does not match.
    pub fn set_cor_centers(&mut self, rig: &Rig, mesh: usize, centers: CorCenters) {
        if rig
            .meshes
            .get(mesh)
            .is_some_and(|m| m.positions.len() == centers.centers.len())
        {
            self.store_cor(mesh, centers);
        }
    }

    fn store_cor(&mut self, mesh: usize, centers: CorCenters) {
        #[cfg(target_arch = "x86_64")]
        if let Some(Some(p)) = self.packed.get_mut(mesh) {
            p.set_centers(Some(&centers.centers));
        }
        self.cor[mesh] = Some(centers);
    }

    pub fn cor_centers(&self, mesh: usize) -> Option<&CorCenters> {
        self.cor.get(mesh).and_then(|c| c.as_ref())
    }

    /// Skins every mesh for the pose whose forward kinematics is `world_from_node`.
    /// [`SkinMethod::Cor`] uses DQS for meshes whose centres are not prepared.
    pub fn update(&mut self, rig: &Rig, world_from_node: &[Mat4], method: SkinMethod) {
        for (s, skin) in rig.skins.iter().enumerate() {
            self.palettes[s].update(world_from_node, skin, self.palette_len[s]);
        }
        for (i, mesh) in rig.meshes.iter().enumerate() {
            let out = &mut self.outputs[i];
            let normals = self.fallback_normals[i].as_deref().unwrap_or(&mesh.normals);
            let palette = mesh.skin.and_then(|s| self.palettes.get(s as usize));
            let skinned = mesh.joints.len() == mesh.positions.len()
                && mesh.weights.len() == mesh.positions.len();
            match palette {
                Some(palette) if skinned => {
                    let cor = self.cor[i].as_ref();
                    #[cfg(target_arch = "x86_64")]
                    if let Some(packed) = &self.packed[i] {
                        out.positions.resize(mesh.positions.len(), Vec3::ZERO);
                        out.normals.resize(mesh.positions.len(), Vec3::Y);
                        if avx2::skin(
                            packed,
                            mesh,
                            normals,
                            palette,
                            method,
                            cor.map(|c| c.centers.as_slice()),
                            &mut out.positions,
                            &mut out.normals,
                        ) {
                            continue;
                        }
                    }
                    skin_mesh(
                        mesh,
                        normals,
                        palette,
                        method,
                        cor,
                        &mut out.positions,
                        &mut out.normals,
                    );
                }
                _ => {
                    let world = world_from_node
                        .get(mesh.node as usize)
                        .copied()
                        .unwrap_or(Mat4::IDENTITY);
                    transform_rigid(
                        &mesh.positions,
                        normals,
                        &world,
                        &mut out.positions,
                        &mut out.normals,
                    );
                }
            }
        }
    }

    pub fn output(&self, mesh: usize) -> &SkinnedOutput {
        &self.outputs[mesh]
    }

    pub fn positions(&self, mesh: usize) -> &[Vec3] {
        &self.outputs[mesh].positions
    }

    pub fn normals(&self, mesh: usize) -> &[Vec3] {
        &self.outputs[mesh].normals
    }

    pub fn palette(&self, skin: usize) -> Option<&Palette> {
        self.palettes.get(skin)
    }
}

/// Skins one mesh with `palette` (its skin's palette for this frame). `normals` may be the mesh's
/// own or a substitute of the same length. Outputs are resized to the vertex count.
///
/// Requirements (checked, never a panic): joints/weights as long as positions (else the mesh is
/// copied unskinned); joint numbers beyond the palette read as identity. `joints1`/`weights1`,
/// when as long as positions, add four more influences.
pub fn skin_mesh(
    mesh: &SkinnedMesh,
    normals: &[Vec3],
    palette: &Palette,
    method: SkinMethod,
    cor: Option<&CorCenters>,
    out_positions: &mut Vec<Vec3>,
    out_normals: &mut Vec<Vec3>,
) {
    let n = mesh.positions.len();
    out_positions.resize(n, Vec3::ZERO);
    out_normals.resize(n, Vec3::Y);
    let ok = mesh.joints.len() == n && mesh.weights.len() == n && normals.len() == n;
    let max_joint = palette.len();
    if !ok || max_joint == 0 {
        out_positions.copy_from_slice(&mesh.positions);
        if normals.len() == n {
            out_normals.copy_from_slice(normals);
        }
        return;
    }
    let eight = mesh.joints1.len() == n && mesh.weights1.len() == n;
    let cor = cor.filter(|c| c.centers.len() == n);
    let input = VertexInput {
        positions: &mesh.positions,
        normals,
        joints: &mesh.joints,
        weights: &mesh.weights,
        joints1: if eight { &mesh.joints1 } else { &[] },
        weights1: if eight { &mesh.weights1 } else { &[] },
    };
    match (method, cor) {
        (SkinMethod::Lbs, _) => lbs::skin(&input, palette, out_positions, out_normals),
        (SkinMethod::Dqs, _) | (SkinMethod::Cor, None) => {
            dqs::skin(&input, palette, out_positions, out_normals)
        }
        (SkinMethod::Cor, Some(c)) => {
            cor::skin(&input, palette, &c.centers, out_positions, out_normals)
        }
    }
}

/// Transforms a rigid mesh by `world_from_mesh`; normals by its inverse-transpose, renormalised.
pub fn transform_rigid(
    positions: &[Vec3],
    normals: &[Vec3],
    world_from_mesh: &Mat4,
    out_positions: &mut Vec<Vec3>,
    out_normals: &mut Vec<Vec3>,
) {
    let n = positions.len();
    out_positions.resize(n, Vec3::ZERO);
    out_normals.resize(n, Vec3::Y);
    let m = Affine3A::from_mat4(*world_from_mesh);
    let normal_m = normal_matrix(m.matrix3);
    out_positions
        .par_chunks_mut(CHUNK)
        .zip(out_normals.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, (op, on))| {
            let base = c * CHUNK;
            for (k, (p, nn)) in op.iter_mut().zip(on.iter_mut()).enumerate() {
                *p = m.transform_point3(positions[base + k]);
                let src = normals.get(base + k).copied().unwrap_or(Vec3::Y);
                *nn = Vec3::from(normalize_safe(normal_m * Vec3A::from(src)));
            }
        });
}

/// The matrix that maps normals under `m`: the cofactor matrix (det · m⁻ᵀ), with the sign of the
/// determinant so that mirrored transforms keep outward normals outward. Directions only: callers
/// renormalise.
#[inline(always)]
pub(crate) fn normal_matrix(m: Mat3A) -> Mat3A {
    let (c0, c1, c2) = (m.x_axis, m.y_axis, m.z_axis);
    let x12 = c1.cross(c2);
    let x20 = c2.cross(c0);
    let x01 = c0.cross(c1);
    let det = c0.dot(x12);
    let sign = if det < 0.0 { -1.0 } else { 1.0 };
    // m⁻ᵀ ∝ [c1×c2, c2×c0, c0×c1] as columns: (m⁻ᵀ) n = (c1×c2) nx + (c2×c0) ny + (c0×c1) nz.
    Mat3A::from_cols(x12 * sign, x20 * sign, x01 * sign)
}

/// Unit vector, or +Y for a zero or non-finite input (degenerate triangles, zero weights).
#[inline(always)]
pub(crate) fn normalize_safe(v: Vec3A) -> Vec3A {
    let l2 = v.length_squared();
    let n = v * rsqrt(l2.max(1e-30));
    // One well-predicted branch on the result instead of two on the input.
    if n.is_finite() && l2 > 1e-30 {
        n
    } else {
        Vec3A::Y
    }
}

/// 1/√x for x > 0 to ~2 ulp: the SSE estimate (12 bits) refined by one Newton–Raphson step,
/// y ← y (3 − x y²)/2. The exact `1.0 / x.sqrt()` puts a square root and a division (~30 cycles
/// of latency) on every vertex's critical path; this is a multiply chain.
#[inline(always)]
pub(crate) fn rsqrt(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cvtss_f32, _mm_rsqrt_ss, _mm_set_ss};
        // SAFETY: SSE is part of the x86_64 baseline; the intrinsic reads only its argument.
        let y = unsafe { _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(x))) };
        y * (1.5 - 0.5 * x * y * y)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        1.0 / x.sqrt()
    }
}

/// The per-vertex inputs every kernel reads, borrowed from the mesh.
pub(crate) struct VertexInput<'a> {
    pub positions: &'a [Vec3],
    pub normals: &'a [Vec3],
    pub joints: &'a [[u16; 4]],
    pub weights: &'a [[f32; 4]],
    /// Empty, or as long as `positions` (influences 5–8).
    pub joints1: &'a [[u16; 4]],
    pub weights1: &'a [[f32; 4]],
}

impl VertexInput<'_> {
    pub fn eight(&self) -> bool {
        !self.joints1.is_empty()
    }

    /// Influences of vertex `i` as `N`-arrays (N = 4, or 8 when `joints1` is present).
    #[inline(always)]
    pub fn influences<const N: usize>(&self, i: usize) -> ([u16; N], [f32; N]) {
        let (j0, w0) = (&self.joints[i], &self.weights[i]);
        if N == 4 {
            (
                std::array::from_fn(|k| j0[k]),
                std::array::from_fn(|k| w0[k]),
            )
        } else {
            let (j1, w1) = (&self.joints1[i], &self.weights1[i]);
            (
                std::array::from_fn(|k| if k < 4 { j0[k] } else { j1[k - 4] }),
                std::array::from_fn(|k| if k < 4 { w0[k] } else { w1[k - 4] }),
            )
        }
    }

    /// Runs `f(i) -> (position, normal)` for every vertex, in parallel chunks, into the outputs.
    #[inline(always)]
    pub fn for_each<F>(&self, out_positions: &mut [Vec3], out_normals: &mut [Vec3], f: F)
    where
        F: Fn(usize) -> (Vec3A, Vec3A) + Sync,
    {
        out_positions
            .par_chunks_mut(CHUNK)
            .zip(out_normals.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(c, (op, on))| {
                let base = c * CHUNK;
                for (k, (p, n)) in op.iter_mut().zip(on.iter_mut()).enumerate() {
                    let (pp, nn) = f(base + k);
                    *p = Vec3::from(pp);
                    *n = Vec3::from(nn);
                }
            });
    }
}

/// Joint number of the largest weight (ties: the first), the reference for quaternion signs
/// (Kavan et al. 2008 §4.1, antipodality: all q_k are flipped into the hemisphere of the
/// strongest influence so that blending never takes the long way round).
#[inline(always)]
pub(crate) fn strongest<const N: usize>(w: &[f32; N]) -> usize {
    let mut best = 0;
    for k in 1..N {
        if w[k] > w[best] {
            best = k;
        }
    }
    best
}
