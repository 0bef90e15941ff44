//! Pins: the particles a garment hangs by, bound to the body's skin like skinned vertices
//! (PHYSICS.md §4 "Attachments": each takes the influences of the nearest skin vertex) and
//! placed on the skinned body every frame.

use super::fit::BodyAtRest;
use super::GarmentError;
use crate::math::{Mat3A, Mat4, Vec3, Vec3A};
use crate::skin::{Palette, SkinMethod, Skinner};

/// Pinned particles bound to the body like skinned vertices: structs of arrays indexed by pin
/// (the order of [`crate::cloth::ClothModel::pins`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PinBinding {
    /// Skin joints (indices into `Skin::joints`, i.e. into `world_from_bind`).
    pub joints: Vec<[u16; 4]>,
    pub weights: Vec<[f32; 4]>,
    /// Position in bind space (the skin mesh's POSITION space).
    pub p_bind: Vec<Vec3>,
    /// The skin vertex each pin took its influences from: rig mesh index and vertex index (CoR
    /// places the pin about that vertex's centre of rotation).
    pub mesh: Vec<u32>,
    pub vertex: Vec<u32>,
}

impl PinBinding {
    pub fn len(&self) -> usize {
        self.p_bind.len()
    }

    pub fn is_empty(&self) -> bool {
        self.p_bind.is_empty()
    }

    /// Linear blend skinning of every pin with the skin matrices `world_from_bind` (see
    /// [`crate::body::world_from_bind`]), written into `out` (resized, no allocation once sized).
    pub fn targets(&self, world_from_bind: &[Mat4], out: &mut Vec<Vec3>) {
        out.resize(self.len(), Vec3::ZERO);
        for (k, o) in out.iter_mut().enumerate() {
            let m = blend(world_from_bind, self.joints[k], self.weights[k]);
            *o = m.transform_point3(self.p_bind[k]);
        }
    }

    /// Places every pin exactly as the body's skin places a vertex with the pin's influences:
    /// the same per-vertex kernels of [`crate::skin`] (LBS, DQS with its two-phase stretch, or
    /// CoR about `centers[k]`, the bind-space centre of rotation of the pin's skin vertex; a
    /// non-finite centre falls back to DQS as the body does). `palette` is this frame's palette
    /// of the skin the pins are bound to. So a pin sits on the skinned surface whatever the
    /// scene's [`SkinMethod`], and the cloth engine interpolates it per substep between frames.
    pub fn place(
        &self,
        palette: &Palette,
        method: SkinMethod,
        centers: &[Vec3],
        out: &mut Vec<Vec3>,
    ) {
        use crate::skin::{cor, dqs, lbs, StretchMode};
        out.resize(self.len(), Vec3::ZERO);
        if palette.is_empty() {
            out.copy_from_slice(&self.p_bind);
            return;
        }
        // The kernels are monomorphised on the palette's stretch mode, as the body's are.
        fn run<const MODE: u8>(
            b: &PinBinding,
            palette: &Palette,
            common: &Mat3A,
            method: SkinMethod,
            centers: &[Vec3],
            out: &mut [Vec3],
        ) {
            for (k, o) in out.iter_mut().enumerate() {
                let (j, w) = (&b.joints[k], &b.weights[k]);
                let p = Vec3A::from(b.p_bind[k]);
                let n = Vec3A::Y;
                let centre = centers.get(k).copied().unwrap_or(Vec3::NAN);
                let (q, _) = match method {
                    SkinMethod::Lbs => lbs::skin_vertex::<4>(palette, j, w, p, n),
                    SkinMethod::Dqs => dqs::skin_vertex::<4, MODE>(palette, common, j, w, p, n),
                    SkinMethod::Cor if centre.is_finite() => {
                        cor::skin_vertex::<4, MODE>(palette, common, j, w, p, n, centre.into())
                    }
                    SkinMethod::Cor => dqs::skin_vertex::<4, MODE>(palette, common, j, w, p, n),
                };
                *o = Vec3::from(q);
            }
        }
        match palette.stretch_mode {
            StretchMode::Identity => {
                run::<{ dqs::MODE_IDENTITY }>(self, palette, &Mat3A::IDENTITY, method, centers, out)
            }
            StretchMode::Common(s) => {
                run::<{ dqs::MODE_COMMON }>(self, palette, &s, method, centers, out)
            }
            StretchMode::PerJoint => run::<{ dqs::MODE_PER_JOINT }>(
                self,
                palette,
                &Mat3A::IDENTITY,
                method,
                centers,
                out,
            ),
        }
    }

    /// The CoR centre of each pin's skin vertex from `skinner` (NaN where the skinner has no
    /// centres for that mesh, so [`PinBinding::place`] uses DQS there, like the body).
    pub fn cor_centers(&self, skinner: &Skinner, out: &mut Vec<Vec3>) {
        out.clear();
        out.extend((0..self.len()).map(|k| {
            skinner
                .cor_centers(self.mesh[k] as usize)
                .filter(|c| c.is_valid(self.vertex[k] as usize))
                .map(|c| c.centers[self.vertex[k] as usize])
                .unwrap_or(Vec3::NAN)
        }));
    }

    /// Appends the pins of another binding (garments are concatenated in the model).
    pub fn extend(&mut self, other: &PinBinding) {
        self.joints.extend_from_slice(&other.joints);
        self.weights.extend_from_slice(&other.weights);
        self.p_bind.extend_from_slice(&other.p_bind);
        self.mesh.extend_from_slice(&other.mesh);
        self.vertex.extend_from_slice(&other.vertex);
    }
}

/// Σ w_k M_k (LBS matrix blend); joints outside the palette count as identity.
/// Which of a vertex's four influences weighs most (the first of equals).
pub(super) fn strongest(w: [f32; 4]) -> usize {
    (0..4).fold(0, |b, k| if w[k] > w[b] { k } else { b })
}

pub(super) fn blend(world_from_bind: &[Mat4], j: [u16; 4], w: [f32; 4]) -> Mat4 {
    let mut m = Mat4::ZERO;
    let mut total = 0.0;
    for k in 0..4 {
        if w[k] > 0.0 {
            let mk = world_from_bind
                .get(j[k] as usize)
                .copied()
                .unwrap_or(Mat4::IDENTITY);
            m += mk * w[k];
            total += w[k];
        }
    }
    if total <= 0.0 {
        Mat4::IDENTITY
    } else {
        m * (1.0 / total)
    }
}

impl BodyAtRest<'_> {
    /// Binds world-space points (at rest) to the skin: nearest skin vertex's influences.
    pub(super) fn bind(&self, points: &[Vec3]) -> Result<PinBinding, GarmentError> {
        self.bind_excluding(points, &[])
    }

    /// Binds world-space points (at rest) to the skin like [`BodyAtRest::bind`], but without the
    /// influences of the skin joints flagged in `excluded` (renormalised; kept if nothing else
    /// is left). A waistband is tied round the pelvis: it must not slide with the thigh's skin
    /// when a knee comes up, so the hakama's and the sash's pins keep only the trunk's weights.
    /// A point whose nearest vertex has no kept weight at all takes the nearest vertex that is
    /// at least half on kept joints.
    pub(super) fn bind_excluding(
        &self,
        points: &[Vec3],
        excluded: &[bool],
    ) -> Result<PinBinding, GarmentError> {
        let skin = self.skin as u32;
        let meshes: Vec<_> = self
            .rig
            .meshes
            .iter()
            .enumerate()
            .filter(|(_, m)| m.skin == Some(skin) && m.joints.len() == m.positions.len())
            .collect();
        if meshes.is_empty() {
            return Err(GarmentError::NoSkin);
        }
        // A garment is tied to the body, not to an open sheet hung on it (a KayKit cape,
        // [`crate::body::sheet_triangles`]): the KayKit Barbarian's sash knot, laid out under its
        // cape, took the cape's vertices as nearest, and its pins swung 9 cm apart with the cape
        // in its Block_Attack, holding the tails at up to 282 % of their length. Sheet vertices
        // are taken only where a mesh has nothing else.
        let sheet = crate::body::sheets::sheet_vertices_per_mesh(self.rig);
        let any_body = meshes
            .iter()
            .any(|&(mi, m)| (0..m.positions.len()).any(|v| !sheet[mi][v]));
        let on_sheet = |mi: usize, v: usize| any_body && sheet[mi][v];
        let mut out = PinBinding::default();
        let is_excluded = |j: u16| excluded.get(j as usize).copied().unwrap_or(false);
        let kept_weight = |j: [u16; 4], w: [f32; 4]| -> f32 {
            (0..4).filter(|&k| !is_excluded(j[k])).map(|k| w[k]).sum()
        };
        for &p in points {
            // Nearest skin vertex; when it has (almost) nothing but excluded influences (a hand
            // hanging by the hip, a thigh's skin under the waistband), the nearest vertex that
            // is at least half on the kept joints instead, so that the pin cannot swing with
            // the limb.
            let nearest = |min_kept: f32| {
                let mut best = (f32::INFINITY, [0u16; 4], [1.0f32, 0.0, 0.0, 0.0], 0, 0);
                for &(mi, m) in &meshes {
                    for (v, q) in m.positions.iter().enumerate() {
                        if on_sheet(mi, v)
                            || (min_kept > 0.0 && kept_weight(m.joints[v], m.weights[v]) < min_kept)
                        {
                            continue;
                        }
                        let w = blend(&self.world_from_bind, m.joints[v], m.weights[v]);
                        let d = w.transform_point3(*q).distance_squared(p);
                        if d < best.0 {
                            best = (d, m.joints[v], m.weights[v], mi as u32, v as u32);
                        }
                    }
                }
                best
            };
            let mut best = nearest(0.0);
            if kept_weight(best.1, best.2) <= 1e-3 {
                let trunk = nearest(0.5);
                if trunk.0.is_finite() {
                    best = trunk;
                }
            }
            let mut weights = best.2;
            let kept = kept_weight(best.1, weights);
            if kept > 1e-3 && kept < 0.9999 {
                for (w, &j) in weights.iter_mut().zip(&best.1) {
                    *w = if is_excluded(j) { 0.0 } else { *w / kept };
                }
            }
            let best = (best.0, best.1, weights, best.3, best.4);
            let m = blend(&self.world_from_bind, best.1, best.2);
            let p_bind = if m.determinant().abs() > 1e-20 {
                m.inverse().transform_point3(p)
            } else {
                p
            };
            out.joints.push(best.1);
            out.weights.push(best.2);
            out.p_bind.push(p_bind);
            out.mesh.push(best.3);
            out.vertex.push(best.4);
        }
        Ok(out)
    }
}
