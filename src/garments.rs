//! The garment library: `cape`, `hakama`, `sash` and `headband`, built against any humanoid whose
//! bones carry Mixamo names (matched after any prefix, MIXAMO.md), sized from the skeleton and
//! fitted around the body proxies at the bind pose.
//!
//! # How a garment is made
//! Each garment is a triangle mesh in world space at the bind pose (metres). Shapes are laid out
//! from joint positions (hips, spine, neck, head, shoulders, knees) and then fitted to the body:
//! rings (the hakama's waist, the sash, the headband) take their radius per angle from a ray cast
//! out of the body's axis against the proxy union, plus a clearance; every other particle is
//! pushed out of the proxies along the union's gradient to the same clearance. So the garments
//! start outside the body on any character the proxies fit.
//!
//! # Pins
//! Pinned particles are bound to the body like skinned vertices (PHYSICS.md §4 "Attachments"):
//! each takes the joints and weights of the nearest skin vertex and its bind-space position
//! (world position at rest mapped back through the blended rest skin matrix, so both Mixamo
//! unit conventions work). [`PinBinding::targets`] places them with linear blend skinning for
//! any frame; the scene interpolates the targets over the substeps.
//!
//! # Fabric
//! Each kind has its own [`GarmentParams`] (see [`GarmentKind::fabric`]): a light cotton
//! headband, a medium cape, a heavier pleated hakama and a stiff obi.

use crate::anim::Skeleton;
use crate::body::{union_sdf, ProxyFrame};
use crate::cloth::{build, BuildError, Garment, GarmentParams};
use crate::math::{Mat3A, Mat4, Vec3, Vec3A};
use crate::rig::Rig;
use crate::skin::{Palette, SkinMethod, Skinner};

/// Why a garment could not be built.
#[derive(Debug, thiserror::Error)]
pub enum GarmentError {
    #[error("garment '{garment}' needs bone '{bone}' (matched by name after any Mixamo prefix)")]
    MissingBone { garment: String, bone: String },
    #[error("unknown garment '{0}' (known: cape, hakama, sash, headband)")]
    UnknownKind(String),
    #[error("rig has no skinned mesh to bind pins to")]
    NoSkin,
    #[error("the skeleton is not a humanoid the garments fit ({0}); name its bones in the scene file's [bones] table")]
    NotHumanoid(String),
    #[error("[bones] maps '{bone}' to node '{node}', which the skeleton does not have")]
    UnknownNode { bone: String, node: String },
    #[error("building garment '{0}': {1}")]
    Build(String, BuildError),
}

/// The garments of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GarmentKind {
    /// Hangs from the shoulders and upper back to the knees.
    Cape,
    /// A pleated divided trouser (umanori): two wide legs, each pinned along half the waist and
    /// the crotch seam, to mid-calf.
    Hakama,
    /// An obi around the waist with two tails hanging at the back.
    Sash,
    /// A hachimaki around the forehead with two tails at the back of the head.
    Headband,
}

impl GarmentKind {
    pub const ALL: [GarmentKind; 4] = [
        GarmentKind::Cape,
        GarmentKind::Hakama,
        GarmentKind::Sash,
        GarmentKind::Headband,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GarmentKind::Cape => "cape",
            GarmentKind::Hakama => "hakama",
            GarmentKind::Sash => "sash",
            GarmentKind::Headband => "headband",
        }
    }

    /// The fabric of each kind. Stiffnesses are N/m per spring, densities kg/m² (see
    /// [`GarmentParams`] for ranges); values the substep cannot carry are softened by the engine.
    pub fn fabric(self) -> GarmentParams {
        match self {
            // Medium wool-cotton: drapes, swings with the turn.
            GarmentKind::Cape => GarmentParams {
                k_structural: 60.0,
                k_shear: 40.0,
                k_bend: 6.0,
                area_density: 0.25,
                damping_ratio: 0.15,
                thickness: 0.003,
                friction: 0.4,
            },
            // Heavier cotton twill with pleats: stiffer bending keeps the folds.
            GarmentKind::Hakama => GarmentParams {
                k_structural: 80.0,
                k_shear: 50.0,
                k_bend: 10.0,
                area_density: 0.3,
                damping_ratio: 0.15,
                thickness: 0.003,
                // Low: a kicking knee must lift the skirt by sliding under it, not drag it.
                friction: 0.2,
            },
            // A stiff silk obi.
            GarmentKind::Sash => GarmentParams {
                k_structural: 80.0,
                k_shear: 60.0,
                k_bend: 12.0,
                area_density: 0.35,
                damping_ratio: 0.2,
                thickness: 0.003,
                friction: 0.6,
            },
            // Light cotton: the tails flutter.
            GarmentKind::Headband => GarmentParams {
                k_structural: 40.0,
                k_shear: 30.0,
                k_bend: 3.0,
                area_density: 0.15,
                damping_ratio: 0.15,
                thickness: 0.002,
                friction: 0.5,
            },
        }
    }

    /// Default particle spacing, m.
    pub fn default_spacing(self) -> f32 {
        match self {
            GarmentKind::Cape => 0.015,
            GarmentKind::Hakama => 0.015,
            GarmentKind::Sash => 0.015,
            GarmentKind::Headband => 0.012,
        }
    }
}

impl std::str::FromStr for GarmentKind {
    type Err = GarmentError;
    fn from_str(s: &str) -> Result<Self, GarmentError> {
        match s.to_ascii_lowercase().as_str() {
            "cape" => Ok(GarmentKind::Cape),
            "hakama" | "skirt" => Ok(GarmentKind::Hakama),
            "sash" | "obi" => Ok(GarmentKind::Sash),
            "headband" | "hachimaki" => Ok(GarmentKind::Headband),
            _ => Err(GarmentError::UnknownKind(s.to_string())),
        }
    }
}

/// One garment to build: its kind, resolution and fabric.
#[derive(Clone, Debug, PartialEq)]
pub struct GarmentSpec {
    pub kind: GarmentKind,
    /// Particle spacing, m. Range 0.005 … 0.1; default [`GarmentKind::default_spacing`]. Coarser
    /// is faster (particle count ∝ 1/spacing²).
    pub spacing: f32,
    /// Gap kept between the garment's rest shape and the body proxies, m (on top of the
    /// per-kind layering offset that keeps garments apart). Range 0.001 … 0.05; default 0.006.
    pub clearance: f32,
    /// Length scale of the hanging parts (cape, hakama, tails), dimensionless. Range 0.3 … 1.5;
    /// default 1.
    pub length: f32,
    pub fabric: GarmentParams,
}

impl GarmentSpec {
    pub fn new(kind: GarmentKind) -> Self {
        Self {
            kind,
            spacing: kind.default_spacing(),
            clearance: 0.006,
            length: 1.0,
            fabric: kind.fabric(),
        }
    }

    /// The same garment with `factor` × the default spacing.
    pub fn coarse(kind: GarmentKind, factor: f32) -> Self {
        let mut s = Self::new(kind);
        s.spacing *= factor;
        s
    }
}

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
fn blend(world_from_bind: &[Mat4], j: [u16; 4], w: [f32; 4]) -> Mat4 {
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

/// What the library needs to know about a body at its bind pose.
pub struct BodyAtRest<'a> {
    pub rig: &'a Rig,
    /// The skin the garments are pinned to.
    pub skin: usize,
    /// Skin matrices at rest.
    pub world_from_bind: Vec<Mat4>,
    /// Proxies at rest, world space.
    pub proxies: &'a ProxyFrame,
    pub capsules: &'a [[u32; 2]],
    /// World positions of every node at rest.
    joint_world: Vec<Vec3>,
    /// The humanoid bones, by Mixamo base name.
    pub bones: BoneMap,
    /// Up (+Y), the character's forward and left, world space.
    pub up: Vec3,
    pub forward: Vec3,
    pub left: Vec3,
    /// [`BodyAtRest::arm_sweep`], computed on first use (it poses every clip).
    sweep: std::cell::OnceCell<Vec<Vec<Vec3>>>,
    /// Skin joint each proxy sphere follows (`Proxies::joint`, indexed like `proxies`); empty
    /// when unknown (then the garments fit against the bind pose alone). See
    /// [`BodyAtRest::with_proxy_joints`].
    proxy_joints: &'a [u32],
    /// [`BodyAtRest::limb_sweep`], computed on first use.
    limbs: std::cell::OnceCell<LimbSweep>,
}

/// The limbs' proxies (the capsules of [`BodyAtRest::limb_joints`]: legs, arms, neck and head)
/// in every pose of the rig's clips, carried into the hips' rest frame: what a waistband
/// pinned to the trunk must keep out of (see [`BodyAtRest::limb_sweep`]).
#[derive(Default)]
struct LimbSweep {
    /// Per pose, every proxy sphere (only the limbs' are meaningful).
    poses: Vec<ProxyFrame>,
    /// The limbs' capsules (pairs of sphere indices).
    capsules: Vec<[u32; 2]>,
    /// Those of the legs (the subtrees of both upper legs).
    legs: Vec<[u32; 2]>,
}

impl<'a> BodyAtRest<'a> {
    pub fn new(
        rig: &'a Rig,
        skin: usize,
        proxies: &'a ProxyFrame,
        capsules: &'a [[u32; 2]],
    ) -> Result<Self, GarmentError> {
        Self::with_bones(rig, skin, proxies, capsules, &[])
    }

    /// [`BodyAtRest::new`] with explicit bone names: `(Mixamo base name, node name)` pairs that
    /// override the names found or guessed by [`BoneMap::resolve`].
    pub fn with_bones(
        rig: &'a Rig,
        skin: usize,
        proxies: &'a ProxyFrame,
        capsules: &'a [[u32; 2]],
        overrides: &[(String, String)],
    ) -> Result<Self, GarmentError> {
        let s = rig.skins.get(skin).ok_or(GarmentError::NoSkin)?;
        let rest = rig.skeleton.rest_world();
        let mut world_from_bind = Vec::new();
        crate::body::world_from_bind(&rest, s, &mut world_from_bind);
        let joint_world: Vec<Vec3> = rest
            .iter()
            .map(|m| m.transform_point3(Vec3::ZERO))
            .collect();
        let mut b = Self {
            rig,
            skin,
            world_from_bind,
            proxies,
            capsules,
            bones: BoneMap::resolve(&rig.skeleton, &joint_world, overrides)?,
            joint_world,
            up: Vec3::Y,
            forward: Vec3::Z,
            left: Vec3::X,
            sweep: std::cell::OnceCell::new(),
            proxy_joints: &[],
            limbs: std::cell::OnceCell::new(),
        };
        // glTF is Y up; the character's left from its hip joints, forward = left × up.
        if let (Ok(l), Ok(r)) = (b.joint("LeftUpLeg", "body"), b.joint("RightUpLeg", "body")) {
            let across = (l - r).reject_from(Vec3::Y);
            if let Some(left) = across.try_normalize() {
                b.left = left;
                b.forward = left.cross(Vec3::Y);
            }
        }
        // Rigs without an end joint above the head (HeadTop_End): the top of the head's skin.
        if b.bones.get("HeadTop_End").is_none() {
            if let Some(top) = b.head_top() {
                b.bones.points.push(("HeadTop_End".into(), top));
            }
        }
        Ok(b)
    }

    /// Tells the library which skin joint each proxy sphere follows (`Proxies::joint`, one per
    /// sphere of `proxies`), so that a waistband can keep its pins out of where the limbs'
    /// proxies go in the rig's clips (`BodyAtRest::limb_sweep`). Without it (or with a list of
    /// the wrong length) the garments are fitted against the bind pose alone.
    pub fn with_proxy_joints(mut self, joints: &'a [u32]) -> Self {
        if joints.len() == self.proxies.center.len() {
            self.proxy_joints = joints;
        }
        self
    }

    /// Node index of the humanoid bone `name` (Mixamo base name).
    pub fn node(&self, name: &str) -> Option<usize> {
        self.bones.get(name)
    }

    /// World position at rest of the humanoid bone `name` (Mixamo base name, see [`BoneMap`]).
    pub fn joint(&self, name: &str, garment: &str) -> Result<Vec3, GarmentError> {
        self.bones
            .get(name)
            .map(|i| self.joint_world[i])
            .or_else(|| {
                self.bones
                    .points
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|&(_, p)| p)
            })
            .ok_or_else(|| GarmentError::MissingBone {
                garment: garment.into(),
                bone: name.into(),
            })
    }

    /// World positions at rest of the skin vertices whose strongest influence is `node`.
    fn dominated_vertices(&self, node: usize) -> Vec<Vec3> {
        let skin = &self.rig.skins[self.skin];
        let mut out = Vec::new();
        for m in &self.rig.meshes {
            if m.skin != Some(self.skin as u32) || m.joints.len() != m.positions.len() {
                continue;
            }
            for (v, p) in m.positions.iter().enumerate() {
                let (j, w) = (m.joints[v], m.weights[v]);
                let k = (0..4).fold(0, |b, k| if w[k] > w[b] { k } else { b });
                if skin.joints.get(j[k] as usize) == Some(&(node as u32)) {
                    out.push(blend(&self.world_from_bind, j, w).transform_point3(*p));
                }
            }
        }
        out
    }

    /// The highest skin vertex the Head bone dominates, above the head joint, at rest.
    fn head_top(&self) -> Option<Vec3> {
        let head = self.node("Head")?;
        let h = self.joint_world[head];
        self.dominated_vertices(head)
            .iter()
            .map(|q| q.y)
            .fold(None, |a: Option<f32>, y| Some(a.map_or(y, |a| a.max(y))))
            .filter(|&t| t > h.y + 0.02)
            .map(|t| Vec3::new(h.x, t, h.z))
    }

    fn sdf(&self, p: Vec3) -> f32 {
        union_sdf(p, self.proxies, self.capsules)
    }

    /// Distance from `centre` along the horizontal unit `dir` to where the proxy union is first
    /// left for good (its signed distance ≥ `clearance`), m; `max` if nothing is hit.
    fn ray_exit(&self, centre: Vec3, dir: Vec3, clearance: f32, max: f32) -> f32 {
        // March outwards in 2 mm steps from the far end inwards would miss inner hits; march
        // from the axis and keep the last entry, so a hand beside the hips does not count while
        // the hip surface does (the first exit after which nothing is hit within 3 cm).
        let step = 0.002;
        let mut r = 0.0;
        let mut exit = None;
        while r < max {
            let d = self.sdf(centre + dir * r);
            if d >= clearance {
                if exit.is_none() {
                    exit = Some(r);
                } else if r - exit.unwrap_or(r) > 0.03 {
                    break;
                }
            } else {
                exit = None;
            }
            // Outside, the sdf bounds how far we can jump without crossing a surface.
            r += if d > clearance + step {
                (d - clearance).min(0.03)
            } else {
                step
            };
        }
        exit.unwrap_or(max)
    }

    /// Pushes `p` out of the proxy union to at least `clearance` along the union's gradient.
    fn push_out(&self, mut p: Vec3, clearance: f32) -> Vec3 {
        for _ in 0..12 {
            let d = self.sdf(p);
            if d >= clearance {
                break;
            }
            let e = 0.001;
            let g = Vec3::new(
                self.sdf(p + Vec3::X * e) - self.sdf(p - Vec3::X * e),
                self.sdf(p + Vec3::Y * e) - self.sdf(p - Vec3::Y * e),
                self.sdf(p + Vec3::Z * e) - self.sdf(p - Vec3::Z * e),
            );
            let n = g.try_normalize().unwrap_or(self.forward);
            p += n * (clearance - d + 1e-4);
        }
        p
    }

    /// Where a hachimaki sits, as a fraction of the way from the `head` joint (the skull's base)
    /// to `top` (the head top): the height above the eyes where the head's skin is widest from
    /// side to side, so the band rests on the forehead and the temples and cannot ride up.
    /// The eyes are taken from `LeftEye`/`RightEye` bones where the rig has them, else at half
    /// the head's height (a human skull's eyes sit near the middle of base-to-crown); the band's
    /// lower edge keeps a quarter of the head's height above them. Falls back to 0.7 if the head
    /// has no skin vertices of its own.
    fn forehead_height(&self, head: Vec3, top: Vec3) -> f32 {
        let h = (top.y - head.y).max(1e-3);
        let eyes = ["LeftEye", "RightEye"]
            .iter()
            .filter_map(|n| self.joint(n, "headband").ok())
            .map(|p| (p.y - head.y) / h)
            .fold(None, |a: Option<f32>, y| Some(a.map_or(y, |a| a.max(y))))
            .unwrap_or(0.5);
        let lo = (eyes + 0.2).clamp(0.3, 0.85);
        let hi = 0.88f32.max(lo + 0.05);
        let Some(head_node) = self.node("Head") else {
            return 0.7;
        };
        // Widest side-to-side extent per 5 % slab of the head's height, from the vertices the
        // Head bone dominates.
        let slabs = 20;
        let mut lo_x = vec![f32::INFINITY; slabs];
        let mut hi_x = vec![f32::NEG_INFINITY; slabs];
        for q in self.dominated_vertices(head_node) {
            let t = (q.y - head.y) / h;
            if !(0.0..1.0).contains(&t) {
                continue;
            }
            let s = ((t * slabs as f32) as usize).min(slabs - 1);
            let x = q.dot(self.left);
            lo_x[s] = lo_x[s].min(x);
            hi_x[s] = hi_x[s].max(x);
        }
        let mut best: Option<(f32, f32)> = None;
        for s in 0..slabs {
            let t = (s as f32 + 0.5) / slabs as f32;
            if t < lo || t > hi || !lo_x[s].is_finite() {
                continue;
            }
            let width = hi_x[s] - lo_x[s];
            // Ties (a round skull) go to the lowest slab: the band sits as low as it can.
            if best.is_none_or(|(_, w)| width > w + 1e-3) {
                best = Some((t, width));
            }
        }
        best.map_or(0.7, |(t, _)| t)
    }

    /// Moves `p` along the unit `dir` until it is outside the proxy union by `clearance`
    /// (at most 0.6 m; then along the gradient as a last resort).
    fn push_out_along(&self, p: Vec3, dir: Vec3, clearance: f32) -> Vec3 {
        let mut s = 0.0;
        while s < 0.6 {
            let d = self.sdf(p + dir * s);
            if d >= clearance {
                return p + dir * s;
            }
            // Inside, |sdf| bounds the distance to the surface along any direction.
            s += (clearance - d).clamp(0.001, 0.02);
        }
        self.push_out(p, clearance)
    }

    /// Binds world-space points (at rest) to the skin: nearest skin vertex's influences.
    /// Skin joints (indices into the skin's joint list) whose node lies in the subtree of one
    /// of the `excluded` bones (matched by name): the legs, for a garment tied round the waist.
    fn joints_under(&self, excluded: &[&str]) -> Vec<bool> {
        let sk = &self.rig.skeleton;
        let roots: Vec<usize> = excluded.iter().filter_map(|n| self.node(n)).collect();
        // Up the ancestors of every node (glTF does not order parents before children).
        let under: Vec<bool> = (0..sk.len())
            .map(|i| {
                let mut n = Some(i);
                for _ in 0..sk.len() {
                    match n {
                        Some(k) if roots.contains(&k) => return true,
                        Some(k) => n = sk.parents.get(k).copied().flatten().map(|p| p as usize),
                        None => break,
                    }
                }
                false
            })
            .collect();
        let skin = &self.rig.skins[self.skin];
        skin.joints
            .iter()
            .map(|&n| under.get(n as usize).copied().unwrap_or(false))
            .collect()
    }

    /// Skin joints outside the trunk (the hips and spine chain): the subtrees of the limb roots
    /// (each shoulder, or the upper arm where the rig has no shoulder; each upper leg) and of
    /// the neck.
    pub fn limb_joints(&self) -> Vec<bool> {
        let mut roots = vec!["LeftUpLeg", "RightUpLeg", "Neck"];
        for [shoulder, arm] in [["LeftShoulder", "LeftArm"], ["RightShoulder", "RightArm"]] {
            roots.push(if self.node(shoulder).is_some() {
                shoulder
            } else {
                arm
            });
        }
        self.joints_under(&roots)
    }

    /// Where the arms go relative to the pelvis: every arm skin vertex (dominant joint under a
    /// shoulder, see [`BodyAtRest::limb_joints`]) at every 1/15 s of each of the rig's clips,
    /// carried into the hips' rest frame (the frame the waist garments' pins ride in), so that
    /// a waist garment can keep its fixed parts out of the arms' swing. Empty if the rig has
    /// no clip or no Hips bone. A bind pose (T-pose) says nothing about where hanging arms
    /// swing: CesiumMan's forearm passes within ~2 cm of the hips' skin at the back in its walk.
    fn arm_sweep(&self) -> &[Vec<Vec3>] {
        self.sweep.get_or_init(|| self.sweep_arms())
    }

    /// [`BodyAtRest::arm_sweep`], uncached. 15 samples a second: a hand swings at ~1 m/s, but
    /// the extremes that matter here are turning points, where it is slowest.
    fn sweep_arms(&self) -> Vec<Vec<Vec3>> {
        let Some(hips) = self.node("Hips") else {
            return Vec::new();
        };
        let mut roots = Vec::new();
        for [shoulder, arm] in [["LeftShoulder", "LeftArm"], ["RightShoulder", "RightArm"]] {
            roots.push(if self.node(shoulder).is_some() {
                shoulder
            } else {
                arm
            });
        }
        let arm = self.joints_under(&roots);
        let verts: Vec<(usize, usize)> = self
            .rig
            .meshes
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                m.skin == Some(self.skin as u32) && m.joints.len() == m.positions.len()
            })
            .flat_map(|(mi, m)| {
                let arm = &arm;
                (0..m.positions.len())
                    .filter(move |&v| {
                        let (j, w) = (m.joints[v], m.weights[v]);
                        let k = (0..4).fold(0, |b, k| if w[k] > w[b] { k } else { b });
                        arm.get(j[k] as usize).copied().unwrap_or(false)
                    })
                    .map(move |v| (mi, v))
            })
            .collect();
        let mut out = Vec::new();
        self.for_each_clip_pose(hips, 15.0, |wfb, to_rest| {
            out.push(
                verts
                    .iter()
                    .map(|&(mi, v)| {
                        let m = &self.rig.meshes[mi];
                        let q =
                            blend(wfb, m.joints[v], m.weights[v]).transform_point3(m.positions[v]);
                        to_rest.transform_point3(q)
                    })
                    .collect(),
            );
        });
        out
    }

    /// Poses the rig at `rate` samples a second of each of its clips (both ends included) and
    /// calls `f(world_from_bind, to_rest)` for each pose: the skin's joint matrices, and the
    /// map that carries the posed world into the hips' rest frame (the frame a waistband's pins
    /// ride in).
    fn for_each_clip_pose(&self, hips: usize, rate: f32, mut f: impl FnMut(&[Mat4], Mat4)) {
        let sk = &self.rig.skeleton;
        let skin = &self.rig.skins[self.skin];
        let rest_hips = sk.rest_world()[hips];
        let (mut wfn, mut wfb) = (Vec::new(), Vec::new());
        let mut pose = crate::anim::Pose::rest(sk);
        for clip in &self.rig.clips {
            let n = (clip.duration() * rate).ceil() as usize;
            for k in 0..=n {
                pose.local.clone_from(&sk.rest);
                let t = clip.start + clip.duration() * k as f32 / n.max(1) as f32;
                clip.sample(t, &mut pose);
                pose.world_from_node(sk, &mut wfn);
                crate::body::world_from_bind(&wfn, skin, &mut wfb);
                f(&wfb, rest_hips * wfn[hips].inverse());
            }
        }
    }

    /// Where the limbs' proxies go relative to the pelvis: each proxy sphere following a skin
    /// joint of [`BodyAtRest::limb_joints`] (a kicking thigh, a blocking forearm), at every
    /// 1/30 s of each of the rig's clips (kicks are fast: at 1/15 s a front kick's thigh turns
    /// ~20° between samples), carried into the hips' rest frame, the frame a waistband's pins
    /// ride in. Empty without the proxies' joints ([`BodyAtRest::with_proxy_joints`]), a Hips
    /// bone or clips.
    fn limb_sweep(&self) -> &LimbSweep {
        self.limbs.get_or_init(|| self.sweep_limbs())
    }

    /// [`BodyAtRest::limb_sweep`], uncached.
    fn sweep_limbs(&self) -> LimbSweep {
        let (Some(hips), false) = (self.node("Hips"), self.proxy_joints.is_empty()) else {
            return LimbSweep::default();
        };
        let limb = self.limb_joints();
        let on_limb = |s: u32| limb.get(self.proxy_joints[s as usize] as usize) == Some(&true);
        let capsules: Vec<[u32; 2]> = self
            .capsules
            .iter()
            .copied()
            .filter(|&[a, b]| on_limb(a) && on_limb(b))
            .collect();
        if capsules.is_empty() {
            return LimbSweep::default();
        }
        let leg = self.joints_under(&["LeftUpLeg", "RightUpLeg"]);
        let on_leg = |s: u32| leg.get(self.proxy_joints[s as usize] as usize) == Some(&true);
        let legs = capsules
            .iter()
            .copied()
            .filter(|&[a, b]| on_leg(a) && on_leg(b))
            .collect();
        // Each sphere's centre in bind space, from its rest position.
        let in_bind: Vec<Vec3> = self
            .proxies
            .center
            .iter()
            .zip(self.proxy_joints)
            .map(|(&c, &j)| {
                let m = self
                    .world_from_bind
                    .get(j as usize)
                    .copied()
                    .unwrap_or(Mat4::IDENTITY);
                m.inverse().transform_point3(c)
            })
            .collect();
        let mut poses = Vec::new();
        self.for_each_clip_pose(hips, 30.0, |wfb, to_rest| {
            let center = in_bind
                .iter()
                .zip(self.proxy_joints)
                .map(|(&c, &j)| {
                    let m = wfb.get(j as usize).copied().unwrap_or(Mat4::IDENTITY);
                    to_rest.transform_point3(m.transform_point3(c))
                })
                .collect();
            poses.push(ProxyFrame {
                center,
                radius: self.proxies.radius.clone(),
            });
        });
        LimbSweep {
            poses,
            capsules,
            legs,
        }
    }

    /// The least signed distance from `p` (at rest) to the limbs' proxies (or with `legs`, the
    /// legs' alone) over every pose of [`BodyAtRest::limb_sweep`], m; +∞ without a sweep.
    ///
    /// The poses are scanned in parallel (the hakama's fit asks for up to 31 heights of each
    /// waist pin, each against every pose of every clip): the dressed ninja's scene build went
    /// from 2.43–2.49 s to 2.31–2.32 s. The least of the distances is the same in any order.
    fn limb_clearance(&self, p: Vec3, legs: bool) -> f32 {
        use rayon::prelude::*;
        let s = self.limb_sweep();
        let caps = if legs { &s.legs } else { &s.capsules };
        s.poses
            .par_iter()
            .with_min_len(64)
            .map(|f| union_sdf(p, f, caps))
            .reduce(|| f32::INFINITY, f32::min)
    }

    fn bind(&self, points: &[Vec3]) -> Result<PinBinding, GarmentError> {
        self.bind_excluding(points, &[])
    }

    /// Binds world-space points (at rest) to the skin like [`BodyAtRest::bind`], but without the
    /// influences of the skin joints flagged in `excluded` (renormalised; kept if nothing else
    /// is left). A waistband is tied round the pelvis: it must not slide with the thigh's skin
    /// when a knee comes up, so the hakama's and the sash's pins keep only the trunk's weights.
    /// A point whose nearest vertex has no kept weight at all takes the nearest vertex that is
    /// at least half on kept joints.
    fn bind_excluding(
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
                        if min_kept > 0.0 && kept_weight(m.joints[v], m.weights[v]) < min_kept {
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

/// A built garment with its pins bound to the body.
#[derive(Clone, Debug)]
pub struct BuiltGarment {
    pub kind: GarmentKind,
    pub garment: Garment,
    /// UV per particle (u around or across, v down), 0..1.
    pub uvs: Vec<crate::math::Vec2>,
    /// Bindings of `garment.pinned`, in that order.
    pub pins: PinBinding,
}

/// Builds one garment against the body.
pub fn build_garment(body: &BodyAtRest, spec: &GarmentSpec) -> Result<BuiltGarment, GarmentError> {
    let mut sheet = match spec.kind {
        GarmentKind::Cape => cape(body, spec)?,
        GarmentKind::Hakama => hakama(body, spec)?,
        GarmentKind::Sash => sash(body, spec)?,
        GarmentKind::Headband => headband(body, spec)?,
    };
    let name = spec.kind.name();
    // The pinned list must be sorted and unique for the model.
    sheet.pinned.sort_unstable();
    sheet.pinned.dedup();
    let garment = build::mesh(
        name,
        &sheet.positions,
        &sheet.triangles,
        &sheet.pinned,
        &spec.fabric,
    )
    .map_err(|e| GarmentError::Build(name.into(), e))?;
    let pin_points: Vec<Vec3> = garment
        .pinned
        .iter()
        .map(|&i| garment.rest[i as usize])
        .collect();
    let pins = match spec.kind {
        // A waistband is tied round the trunk: on a rig whose hands hang by the hips
        // (CesiumMan) the nearest skin is often the forearm's or the hand's, and a pin bound to
        // it swings with the arm.
        GarmentKind::Hakama | GarmentKind::Sash => {
            body.bind_excluding(&pin_points, &body.limb_joints())?
        }
        // A cape is tied over the shoulders and the upper back: it must not ride on the upper
        // arm's skin when the arms swing.
        GarmentKind::Cape => {
            body.bind_excluding(&pin_points, &body.joints_under(&["LeftArm", "RightArm"]))?
        }
        _ => body.bind(&pin_points)?,
    };
    Ok(BuiltGarment {
        kind: spec.kind,
        garment,
        uvs: sheet.uvs,
        pins,
    })
}

/// A garment's mesh before springs are made.
#[derive(Default)]
struct Sheet {
    positions: Vec<Vec3>,
    uvs: Vec<crate::math::Vec2>,
    triangles: Vec<[u32; 3]>,
    pinned: Vec<u32>,
}

impl Sheet {
    /// Appends a `cols × rows` grid whose particle (c, r) is `at(c, r)`; closed around if
    /// `wrap` (column `cols` joins column 0). Returns the index of particle (0, 0).
    fn grid(
        &mut self,
        cols: usize,
        rows: usize,
        wrap: bool,
        mut at: impl FnMut(usize, usize) -> Vec3,
    ) -> u32 {
        let base = self.positions.len() as u32;
        for r in 0..rows {
            for c in 0..cols {
                self.positions.push(at(c, r));
                let u = if wrap {
                    c as f32 / cols as f32
                } else {
                    c as f32 / (cols - 1).max(1) as f32
                };
                self.uvs.push(crate::math::Vec2::new(
                    u,
                    r as f32 / (rows - 1).max(1) as f32,
                ));
            }
        }
        let id = |c: usize, r: usize| base + (r * cols + c % cols) as u32;
        let ncols = if wrap { cols } else { cols - 1 };
        for r in 0..rows.saturating_sub(1) {
            for c in 0..ncols {
                let (a, b, cc, d) = (id(c, r), id(c + 1, r), id(c, r + 1), id(c + 1, r + 1));
                // Alternate the diagonal so the sheet has no preferred shear direction.
                if (c + r) % 2 == 0 {
                    self.triangles.push([a, cc, b]);
                    self.triangles.push([b, cc, d]);
                } else {
                    self.triangles.push([a, cc, d]);
                    self.triangles.push([a, d, b]);
                }
            }
        }
        base
    }
}

/// Body height scale: the hips' height above the lowest foot joint, m.
fn leg_length(body: &BodyAtRest, garment: &str) -> Result<f32, GarmentError> {
    let hips = body.joint("Hips", garment)?;
    let foot = body
        .joint("LeftFoot", garment)?
        .y
        .min(body.joint("RightFoot", garment)?.y);
    Ok((hips.y - foot).max(0.2))
}

/// A horizontal ring of `n` points around `centre` hugging the body at `clearance`, rays taken in
/// the directions of angle θ_c = 2π c / n measured from the back (−forward) towards the left.
fn ring(body: &BodyAtRest, centre: Vec3, n: usize, clearance: f32) -> Vec<(Vec3, f32)> {
    (0..n)
        .map(|c| {
            let th = std::f32::consts::TAU * c as f32 / n as f32;
            let dir = -body.forward * th.cos() + body.left * th.sin();
            let r = body.ray_exit(centre, dir, clearance, 0.6);
            (dir, r)
        })
        .collect()
}

/// Columns for a closed ring of circumference `circ` at `spacing` (even, ≥ 8).
fn ring_columns(circ: f32, spacing: f32) -> usize {
    (((circ / spacing).round() as usize).max(8) + 1) & !1
}

fn ring_circumference(r: &[(Vec3, f32)]) -> f32 {
    let n = r.len();
    (0..n)
        .map(|k| {
            let (d0, r0) = r[k];
            let (d1, r1) = r[(k + 1) % n];
            (d0 * r0).distance(d1 * r1)
        })
        .sum()
}

/// Ring radii at `n` columns, measuring the body first with 64 rays then resampling.
fn fitted_ring(body: &BodyAtRest, centre: Vec3, spacing: f32, clearance: f32) -> Vec<(Vec3, f32)> {
    let probe = ring(body, centre, 64, clearance);
    let cols = ring_columns(ring_circumference(&probe), spacing);
    ring(body, centre, cols, clearance)
}

fn cape(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "cape";
    let neck = body.joint("Neck", g)?;
    let spine2 = body.joint("Spine2", g)?;
    let (la, ra) = (body.joint("LeftArm", g)?, body.joint("RightArm", g)?);
    let legs = leg_length(body, g)?;
    let clearance = spec.clearance + 0.012;
    // The top edge: an arc over the upper back from shoulder to shoulder, at the height between
    // the chest joint and the neck, hugging the body.
    let top_y = spine2.y + 0.6 * (neck.y - spine2.y);
    let centre = Vec3::new(neck.x, top_y, neck.z);
    let half_width = 0.5 * la.distance(ra) * 0.9;
    let length = (0.55 * legs + (top_y - body.joint("Hips", g)?.y)) * spec.length;
    let cols = ((2.0 * half_width / spec.spacing).round() as usize).max(4) + 1;
    let rows = ((length / spec.spacing).round() as usize).max(3) + 1;
    let dy = length / (rows - 1) as f32;
    // Top edge points: behind the body at lateral offset s ∈ [−w, w]; depth from a ray cast
    // backwards from the spine axis at that offset.
    let top: Vec<Vec3> = (0..cols)
        .map(|c| {
            let s = -half_width + 2.0 * half_width * c as f32 / (cols - 1) as f32;
            let o = centre + body.left * s;
            let depth = body.ray_exit(o, -body.forward, clearance, 0.6);
            o - body.forward * depth
        })
        .collect();
    let mut sheet = Sheet::default();
    // Hang straight down, flaring 15 % wider at the hem, and keep off the body.
    let base = sheet.grid(cols, rows, false, |c, r| {
        let t = r as f32 / (rows - 1) as f32;
        let flare = 1.0 + 0.15 * t;
        let mid = top[cols / 2];
        let lateral = (top[c] - mid).dot(body.left) * flare;
        let p = top[c] - body.left * (top[c] - mid).dot(body.left) + body.left * lateral
            - Vec3::Y * dy * r as f32;
        if r == 0 {
            p
        } else {
            body.push_out(p, clearance)
        }
    });
    sheet.pinned.extend((0..cols as u32).map(|c| base + c));
    Ok(sheet)
}

/// The hakama: a divided trouser (umanori), two very wide legs side by side.
///
/// Each leg is one open sheet of cloth, half a skirt: its top row, all pinned, runs along the
/// outer half of the waist ring, from the back centre round that leg's hip to the front centre.
/// Below it the sheet widens within the top quarter of its length into a half-ellipse with
/// `ease` around the widest the leg's side of the body gets, folded in pleats. The two halves
/// meet at the body's mid-plane front and back, `2 · seam_gap` apart, and are not sewn there:
/// there is no crotch seam and no inner (gusset) panel, so between the legs each half hangs
/// free.
///
/// Why divided: a closed skirt must go round both legs, so a kicking knee lifts the whole skirt
/// and stretches its ring between the standing and the kicking leg (past Provot's limit in the
/// front and roundhouse kicks). A divided leg is lifted by its own thigh alone; its back panel
/// hangs from the waist, so it can reach the raised knee without stretching. The two halves
/// keep `seam_gap` from the mid-plane so they never start in contact.
fn hakama(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "hakama";
    let hips = body.joint("Hips", g)?;
    let spine = body.joint("Spine", g)?;
    let legs = leg_length(body, g)?;
    let clearance = spec.clearance;
    // Waist a little above the hip joint; hem at 70 % of the leg below it (mid-calf).
    let waist = Vec3::new(hips.x, hips.y + 0.3 * (spine.y - hips.y), hips.z);
    let hem_y = waist.y - 0.7 * legs * spec.length;
    // Half the gap between the two legs' inner panels, m: a few thicknesses, at least.
    let seam_gap = (0.2 * spec.spacing).max(4.0 * spec.fabric.thickness);
    // Horizontal room around the body at the hem, m (the wide hakama leg), and pleat depth.
    let ease = 0.08;
    let pleat = 0.03;
    let arms_hang_by_hips = arms_hang_by_hips(body, waist, hem_y);
    let mut sheet = Sheet::default();
    for side in [1.0f32, -1.0] {
        let left = body.left * side;
        let centre = waist + left * seam_gap;
        let dir = |th: f32| -body.forward * th.cos() + left * th.sin();
        // Outer half of the waist ring, back centre (θ = 0) → side → front centre (θ = π).
        let probe: Vec<(Vec3, f32)> = (0..=32)
            .map(|k| {
                let d = dir(std::f32::consts::PI * k as f32 / 32.0);
                (d, body.ray_exit(centre, d, clearance, 0.6))
            })
            .collect();
        let half_circ: f32 = probe
            .windows(2)
            .map(|w| (w[0].0 * w[0].1).distance(w[1].0 * w[1].1))
            .sum();
        let n_outer = ((half_circ / spec.spacing).round() as usize).max(4);
        // The widest the body gets on this side in each direction, from the waist down to the
        // hem (rays from the mid-line, so they pass the gap between the legs and find the
        // thigh's outside).
        let widest = |th: f32| {
            let d = dir(th);
            (0..=6)
                .map(|k| {
                    let y = waist.y + (hem_y - waist.y) * k as f32 / 6.0;
                    body.ray_exit(Vec3::new(centre.x, y, centre.z), d, clearance, 0.6)
                })
                .fold(0.0f32, f32::max)
        };
        // The waist's pins ride on the trunk, but in a kick the thigh's proxy swings up over
        // the hip crease: on the built-in ninja's front kick it reaches 17 mm past the
        // front-right of a waist ring that clears the bind pose. A pin inside a collider holds
        // its free neighbour, which the collider pushes out, a whole penetration depth away:
        // 19.5 mm for a 15.3 mm spring (130 % of rest; at 3× the spacing the same depth was
        // within the limit, so only the default resolution failed). Pushing the pin out
        // horizontally does not help (the raised thigh reaches forward along the push), so
        // each column's pin that a leg comes within `clearance` of rises, hugging the trunk at
        // its new height, to the lowest height
        // (in 2 mm steps, at most 6 cm: higher, the waistband would ride over the sash) where
        // the limbs' proxies in every pose of the rig's clips keep `clearance` off it
        // ([`BodyAtRest::limb_sweep`]), or where they come least deep if no height is clear:
        // on the ninja the kata's low block sweeps the right forearm down in front of the hip
        // a little above where the front kick's thigh reaches, so there the best is 7.6 mm
        // deep (12 mm up), which a free neighbour 15 mm away can clear. Then the waist line is
        // smoothed so it rises gently (at most 1 cm per 2 cm around) rather than in a step.
        let top_at = |d: Vec3, rise: f32| {
            let c = centre + Vec3::Y * rise;
            c + d * body.ray_exit(c, d, clearance, 0.6)
        };
        let dirs: Vec<Vec3> = (0..=n_outer)
            .map(|k| dir(std::f32::consts::PI * k as f32 / n_outer as f32))
            .collect();
        let raw: Vec<f32> = dirs
            .iter()
            .map(|&d| {
                // Only where a leg comes too close: a hand hanging by the hip (CesiumMan's
                // walk) is handled by the flare below, and raising the waist there would only
                // move it into the forearm's path.
                if body.limb_clearance(top_at(d, 0.0), true) >= clearance {
                    return 0.0;
                }
                let mut best = (f32::NEG_INFINITY, 0.0);
                for k in 0..=30 {
                    let s = 0.002 * k as f32;
                    let c = body.limb_clearance(top_at(d, s), false);
                    if c >= clearance {
                        return s;
                    }
                    if c > best.0 + 1e-4 {
                        best = (c, s);
                    }
                }
                best.1
            })
            .collect();
        let step = top_at(dirs[0], 0.0)
            .distance(top_at(dirs[1], 0.0))
            .max(1e-3);
        let rise: Vec<f32> = (0..raw.len())
            .map(|k| {
                raw.iter()
                    .enumerate()
                    .map(|(j, &q)| q - 0.5 * step * k.abs_diff(j) as f32)
                    .fold(0.0, f32::max)
            })
            .collect();
        // (top point, hem point, outer: whether the column belongs to the pleated outer side)
        let mut columns: Vec<(Vec3, Vec3, bool)> = Vec::new();
        for (k, &d) in dirs.iter().enumerate() {
            let th = std::f32::consts::PI * k as f32 / n_outer as f32;
            let top = top_at(d, rise[k]);
            let hem = Vec3::new(centre.x, hem_y, centre.z) + d * (widest(th) + ease);
            columns.push((top, hem, true));
        }
        // Mirrored legs wind the other way round: reverse one so both face outwards.
        if side < 0.0 {
            columns.reverse();
        }
        let cols = columns.len();
        let longest = columns
            .iter()
            .map(|(t, _, _)| t.y - hem_y)
            .fold(0.0f32, f32::max);
        let rows = ((longest / spec.spacing).round() as usize).max(3) + 1;
        // Full width by a quarter of the length: the thighs never pull the cloth taut against
        // its pinned top. Where the arms hang by the hips, by the first free row instead: a
        // row still hugging the hip is pinched between the hip and the hanging hand, pulled
        // off its pinned top (CesiumMan's walk: 122.6 % of rest; flared at the first row,
        // 110.2 %).
        let t_full = if arms_hang_by_hips {
            1.0 / (rows - 1) as f32
        } else {
            0.25
        };
        let base = sheet.grid(cols, rows, false, |c, r| {
            let (top, hem, outer) = columns[c];
            let t = r as f32 / (rows - 1) as f32;
            let e = smoothstep((t / t_full).min(1.0));
            let mut p = top.lerp(hem, e);
            p.y = top.y + (hem_y - top.y) * t;
            if outer && (c / 2) % 2 == 0 {
                let radial = (p - centre).reject_from(Vec3::Y).normalize_or_zero();
                p += radial * pleat * e;
            }
            if r == 0 {
                return p;
            }
            // Out of the body horizontally away from the leg's axis, not along the union's
            // gradient: in the groove between thigh and belly the gradient sends neighbouring
            // rows to one point, and springs of zero rest length would follow.
            let out = (p - centre).reject_from(Vec3::Y);
            match out.try_normalize() {
                Some(d) => body.push_out_along(p, d, clearance),
                None => body.push_out(p, clearance),
            }
        });
        sheet.pinned.extend((0..cols as u32).map(|c| base + c));
    }
    Ok(sheet)
}

/// Whether the arms hang by the hips: in at least a fifth of the poses of the rig's clips (every
/// 1/15 s, see [`BodyAtRest::arm_sweep`]), some arm skin lies beside the hip (within 45° of
/// the body's side, seen from the waist centre), between the hakama's waist and a quarter of its
/// length below, within 3 cm (the pleats' depth) of the body at rest. A walk's hanging hands do
/// (CesiumMan: 9 of its 31 poses, 29 %); a kata's fist chambered at the hip passes there now
/// and then (the built-in ninja: 31 of 337 poses, 9.2 %; RiggedFigure: none).
fn arms_hang_by_hips(body: &BodyAtRest, waist: Vec3, hem_y: f32) -> bool {
    /// Room a hanging hand leaves beside the hip, m (the hakama's pleat depth).
    const ROOM: f32 = 0.03;
    /// Share of the poses that must have an arm there: between the two cases above.
    const SHARE: f32 = 0.2;
    let low = waist.y - 0.25 * (waist.y - hem_y);
    let poses = body.arm_sweep();
    if poses.is_empty() {
        return false;
    }
    let near = poses
        .iter()
        .filter(|pose| {
            pose.iter().any(|q| {
                let d = (*q - waist).reject_from(Vec3::Y).normalize_or_zero();
                q.y <= waist.y && q.y >= low && d.dot(body.left).abs() > 0.7 && body.sdf(*q) < ROOM
            })
        })
        .count();
    near as f32 >= SHARE * poses.len() as f32
}

fn smoothstep(s: f32) -> f32 {
    let s = s.clamp(0.0, 1.0);
    s * s * (3.0 - 2.0 * s)
}

/// A band (closed ring, all pinned) at `centre` with `rows` rows, plus two tails hanging from its
/// back, their top rows pinned.
#[allow(clippy::too_many_arguments)]
fn band_with_tails(
    body: &BodyAtRest,
    spec: &GarmentSpec,
    centre: Vec3,
    band_height: f32,
    clearance: f32,
    tail_width: f32,
    tail_length: f32,
    tail_spread: f32,
) -> Sheet {
    let mut sheet = Sheet::default();
    let ring_pts = fitted_ring(body, centre, spec.spacing, clearance);
    let cols = ring_pts.len();
    let rows = ((band_height / spec.spacing).round() as usize).max(1) + 1;
    let dy = band_height / (rows - 1) as f32;
    let top = centre + Vec3::Y * 0.5 * band_height;
    // Each band row hugs the body at its own height: rays from the axis at that height.
    let row_rings: Vec<Vec<(Vec3, f32)>> = (0..rows)
        .map(|r| {
            let c = top - Vec3::Y * dy * r as f32;
            ring_pts
                .iter()
                .map(|&(dir, _)| (dir, body.ray_exit(c, dir, clearance, 0.6)))
                .collect()
        })
        .collect();
    let base = sheet.grid(cols, rows, true, |c, r| {
        let (dir, rad) = row_rings[r][c];
        top + dir * rad - Vec3::Y * dy * r as f32
    });
    sheet.pinned.extend(base..base + (cols * rows) as u32);
    // The knot at the back (column 0 faces −forward): tails start just outside the band.
    let back = ring_pts[0].1;
    let tail_cols = ((tail_width / spec.spacing).round() as usize).max(1) + 1;
    let tail_rows = ((tail_length * spec.length / spec.spacing).round() as usize).max(2) + 1;
    let tdy = tail_length * spec.length / (tail_rows - 1) as f32;
    let tail_clear = clearance + 0.012;
    for side in [-1.0f32, 1.0] {
        let start = centre - body.forward * (back + 0.012) + body.left * side * tail_spread
            - Vec3::Y * 0.25 * band_height;
        let tb = sheet.grid(tail_cols, tail_rows, false, |c, r| {
            let s = (c as f32 / (tail_cols - 1) as f32 - 0.5) * tail_width;
            // Tails fan out a little as they fall.
            let fan = side * 0.15 * tdy * r as f32;
            let p = start + body.left * (s + fan) - Vec3::Y * tdy * r as f32;
            if r == 0 {
                p
            } else {
                body.push_out(p, tail_clear)
            }
        });
        sheet.pinned.extend((0..tail_cols as u32).map(|c| tb + c));
    }
    sheet
}

fn sash(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "sash";
    let hips = body.joint("Hips", g)?;
    let spine = body.joint("Spine", g)?;
    let legs = leg_length(body, g)?;
    // Around the waist, above the hakama's waist ring, and further out (layering).
    let centre = Vec3::new(hips.x, hips.y + 0.8 * (spine.y - hips.y), hips.z);
    let clearance = spec.clearance + 0.008;
    let band_height = 0.06;
    let tail_length = 0.45 * legs;
    let (tail_width, tail_spread) =
        sash_tails(body, spec, centre, band_height, tail_length, clearance);
    Ok(band_with_tails(
        body,
        spec,
        centre,
        band_height,
        clearance,
        tail_width,
        tail_length,
        tail_spread,
    ))
}

/// The sash's tails: width and the lateral offset of each tail's centre from the back centre,
/// m. By default 6 cm wide tails 5 cm either side of the spine (outer edges 8 cm out). Where
/// the arms swing close behind the hips (CesiumMan's hanging forearms pass 5.2 cm from the
/// spine's plane at the back in its walk; the built-in ninja's arms keep 11.7 cm off), the
/// tails' pinned tops would sit in the forearm's path: the arm pushes the first free row away
/// from its pinned top (137 % of rest on CesiumMan). Then both tails move in towards the spine
/// so their outer edges keep the band's clearance inside the arms' lane (the closest any arm
/// vertex of any of the rig's clips comes to the mid-plane, behind the back, from the band's
/// top down a quarter of the tails' length: lower down the tails swing free and the arm pushes
/// them aside), narrowing them if both no longer fit with a gap of
/// `max(2 × thickness, 3 mm)` either side of the spine.
fn sash_tails(
    body: &BodyAtRest,
    spec: &GarmentSpec,
    centre: Vec3,
    band_height: f32,
    tail_length: f32,
    clearance: f32,
) -> (f32, f32) {
    let (width, spread) = (0.06f32, 0.05f32);
    let back = body.ray_exit(centre, -body.forward, clearance, 0.6);
    let top = centre.y + 0.5 * band_height;
    let bottom = centre.y - 0.25 * band_height - 0.25 * tail_length * spec.length;
    // Tails hang 1.2 cm off the band plus their own clearance; 3 cm of room beyond that.
    let depth = back + 0.012 + clearance + 0.03;
    let lane = body
        .arm_sweep()
        .iter()
        .flatten()
        .filter(|q| {
            let d = (**q - centre).dot(-body.forward);
            q.y <= top && q.y >= bottom && d > 0.0 && d <= depth
        })
        .map(|q| (*q - centre).dot(body.left).abs())
        .fold(f32::INFINITY, f32::min);
    let outer = lane - clearance;
    if outer >= spread + 0.5 * width {
        return (width, spread);
    }
    let gap = (2.0 * spec.fabric.thickness).max(0.003);
    // At least two columns' worth of cloth: a tail narrower than that is no tail.
    let w = (outer - gap).min(width).max(0.02);
    (w, (outer - 0.5 * w).max(gap + 0.5 * w))
}

fn headband(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "headband";
    let head = body.joint("Head", g)?;
    let top = body.joint("HeadTop_End", g)?;
    let clearance = spec.clearance;
    let h = (top.y - head.y).max(0.05);
    let f = body.forehead_height(head, top);
    let centre = head + (top - head) * f;
    Ok(band_with_tails(
        body,
        spec,
        centre,
        0.15 * h,
        clearance,
        0.035,
        1.4 * h,
        0.02,
    ))
}

/// The base name of the skeleton's nodes, for error messages and lookups.
pub fn has_bones(skeleton: &Skeleton, kind: GarmentKind) -> bool {
    let need: &[&str] = match kind {
        GarmentKind::Cape => &["Neck", "Spine2", "LeftArm", "RightArm", "Hips"],
        GarmentKind::Hakama | GarmentKind::Sash => &["Hips", "Spine", "LeftFoot", "RightFoot"],
        GarmentKind::Headband => &["Head", "HeadTop_End"],
    };
    need.iter().all(|n| skeleton.find(n).is_some())
        && ["LeftUpLeg", "RightUpLeg", "LeftFoot", "RightFoot", "Hips"]
            .iter()
            .all(|n| skeleton.find(n).is_some())
}

/// The humanoid bones the library knows, by their Mixamo base names.
pub const HUMANOID_BONES: [&str; 22] = [
    "Hips",
    "Spine",
    "Spine1",
    "Spine2",
    "Neck",
    "Head",
    "HeadTop_End",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "LeftToeBase",
];

/// Which skeleton node plays each humanoid bone (by Mixamo base name), plus positions of bones
/// the rig lacks but the body gives (a head top taken from the skin).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoneMap {
    /// `(Mixamo base name, node index)`.
    pub nodes: Vec<(String, usize)>,
    /// `(Mixamo base name, world position at rest)` of bones with no node.
    pub points: Vec<(String, Vec3)>,
    /// Whether the map was guessed from the skeleton's shape rather than read from its names.
    pub guessed: bool,
}

impl BoneMap {
    /// Node of the humanoid bone `name`.
    pub fn get(&self, name: &str) -> Option<usize> {
        self.nodes.iter().find(|(n, _)| n == name).map(|&(_, i)| i)
    }

    fn set(&mut self, name: &str, node: usize) {
        self.nodes.retain(|(n, _)| n != name);
        self.nodes.push((name.to_string(), node));
    }

    /// The bones found by name (after any Mixamo prefix).
    pub fn by_name(skeleton: &Skeleton) -> BoneMap {
        BoneMap {
            nodes: HUMANOID_BONES
                .iter()
                .filter_map(|&n| skeleton.find(n).map(|i| (n.to_string(), i)))
                .collect(),
            ..BoneMap::default()
        }
    }

    /// The map for a skeleton: its Mixamo names where it has them (Hips at least), else a guess
    /// from its shape ([`BoneMap::guess`]); then `overrides` (`(base name, node name)`, the
    /// scene file's `[bones]` table) replace single entries.
    pub fn resolve(
        skeleton: &Skeleton,
        joint_world: &[Vec3],
        overrides: &[(String, String)],
    ) -> Result<BoneMap, GarmentError> {
        let named = BoneMap::by_name(skeleton);
        let mut map = if named.get("Hips").is_some() {
            named
        } else {
            match BoneMap::guess(skeleton, joint_world) {
                Ok(m) => m,
                // With a full table the guess is not needed.
                Err(e) if overrides.is_empty() => return Err(e),
                Err(_) => BoneMap::default(),
            }
        };
        for (bone, node) in overrides {
            let i = skeleton
                .names
                .iter()
                .position(|n| n == node)
                .or_else(|| skeleton.find(node))
                .ok_or_else(|| GarmentError::UnknownNode {
                    bone: bone.clone(),
                    node: node.clone(),
                })?;
            map.set(bone, i);
        }
        Ok(map)
    }

    /// Guesses the humanoid bones from the skeleton's topology and rest geometry (Y up):
    ///
    /// - the hips are the highest node (in the hierarchy) from which two chains go down (legs)
    ///   and one goes up (spine);
    /// - each leg chain is UpLeg, Leg, Foot (and ToeBase); the toes give the forward direction
    ///   (+Z where the feet have no toe joint), and the character's left is up × forward;
    /// - the spine goes up to the first node with two chains going sideways (arms, the chest:
    ///   Spine2) and one going up (Neck, then Head, then HeadTop_End where present);
    /// - an arm chain of four or more nodes starts with the shoulder (clavicle), else with the
    ///   upper arm (Arm, ForeArm, Hand).
    pub fn guess(skeleton: &Skeleton, joint_world: &[Vec3]) -> Result<BoneMap, GarmentError> {
        let n = skeleton.len();
        let mut children = vec![Vec::new(); n];
        for i in 0..n {
            if let Some(p) = skeleton.parents[i] {
                children[p as usize].push(i);
            }
        }
        let mut size = vec![1usize; n];
        for i in (0..n).rev() {
            if let Some(p) = skeleton.parents[i] {
                size[p as usize] += size[i];
            }
        }
        // The subtree's farthest node from `from`, as a direction.
        let reach = |from: usize, c: usize| -> Vec3 {
            let mut far = joint_world[c];
            let mut stack = vec![c];
            while let Some(k) = stack.pop() {
                if joint_world[k].distance(joint_world[from]) > far.distance(joint_world[from]) {
                    far = joint_world[k];
                }
                stack.extend(&children[k]);
            }
            far - joint_world[from]
        };
        // A chain from `c`: each step to the child with the biggest subtree.
        let chain = |c: usize| -> Vec<usize> {
            let mut out = vec![c];
            let mut k = c;
            while let Some(&next) = children[k].iter().max_by_key(|&&x| size[x]) {
                out.push(next);
                k = next;
            }
            out
        };
        let down = |d: Vec3| d.y < -0.6 * d.length() && d.length() > 1e-4;
        let up = |d: Vec3| d.y > 0.6 * d.length() && d.length() > 1e-4;
        let side = |d: Vec3| d.y.abs() < 0.7 * d.length() && d.length() > 1e-4;
        let mut why = String::from("no node has two chains going down and one going up");
        for h in 0..n {
            let big: Vec<usize> = children[h]
                .iter()
                .copied()
                .filter(|&c| size[c] >= 3)
                .collect();
            let legs: Vec<usize> = big.iter().copied().filter(|&c| down(reach(h, c))).collect();
            let spines: Vec<usize> = big.iter().copied().filter(|&c| up(reach(h, c))).collect();
            if legs.len() != 2 || spines.is_empty() {
                continue;
            }
            let spine_root = *spines
                .iter()
                .max_by_key(|&&c| size[c])
                .unwrap_or(&spines[0]);
            let (l0, l1) = (chain(legs[0]), chain(legs[1]));
            // Forward from the toes (foot → toe), else glTF's +Z.
            let forward = [&l0, &l1]
                .iter()
                .filter(|c| c.len() >= 4)
                .map(|c| (joint_world[c[3]] - joint_world[c[2]]).reject_from(Vec3::Y))
                .fold(Vec3::ZERO, |a, b| a + b)
                .try_normalize()
                .unwrap_or(Vec3::Z);
            let left = Vec3::Y.cross(forward);
            let (left_leg, right_leg) =
                if joint_world[l0[0]].dot(left) >= joint_world[l1[0]].dot(left) {
                    (l0, l1)
                } else {
                    (l1, l0)
                };
            // Up the spine to the chest: a node with two chains going sideways and one up.
            let mut spine = vec![spine_root];
            let mut chest = None;
            let mut k = spine_root;
            loop {
                let kids: Vec<usize> = children[k]
                    .iter()
                    .copied()
                    .filter(|&c| size[c] >= 2)
                    .collect();
                let sideways: Vec<usize> = kids
                    .iter()
                    .copied()
                    .filter(|&c| side(reach(k, c)))
                    .collect();
                let ups: Vec<usize> = kids.iter().copied().filter(|&c| up(reach(k, c))).collect();
                if sideways.len() >= 2 && !ups.is_empty() {
                    chest = Some((k, sideways, ups));
                    break;
                }
                match ups.first().or(kids.first()) {
                    Some(&next) => {
                        spine.push(next);
                        k = next;
                    }
                    None => break,
                }
            }
            let Some((chest, arms, ups)) = chest else {
                why = format!(
                    "'{}' has legs and a spine, but no chest with two arms and a neck",
                    skeleton.names[h]
                );
                continue;
            };
            let mut map = BoneMap {
                guessed: true,
                ..BoneMap::default()
            };
            map.set("Hips", h);
            map.set("Spine", spine[0]);
            if spine.len() >= 3 {
                map.set("Spine1", spine[1]);
            }
            map.set("Spine2", chest);
            for (side_name, leg) in [("Left", &left_leg), ("Right", &right_leg)] {
                if leg.len() < 3 {
                    why = format!("the {side_name} leg has fewer than three joints");
                    continue;
                }
                map.set(&format!("{side_name}UpLeg"), leg[0]);
                map.set(&format!("{side_name}Leg"), leg[1]);
                map.set(&format!("{side_name}Foot"), leg[2]);
                if leg.len() >= 4 {
                    map.set(&format!("{side_name}ToeBase"), leg[3]);
                }
            }
            // Two arms: the sideways chains farthest to the left and to the right.
            let lr = |c: &usize| reach(chest, *c).dot(left);
            let la = arms.iter().copied().max_by(|a, b| lr(a).total_cmp(&lr(b)));
            let ra = arms.iter().copied().min_by(|a, b| lr(a).total_cmp(&lr(b)));
            for (side_name, arm) in [("Left", la), ("Right", ra)] {
                let Some(arm) = arm else { continue };
                let c = chain(arm);
                let names = ["Shoulder", "Arm", "ForeArm", "Hand"];
                let skip = if c.len() >= 4 { 0 } else { 1 };
                for (name, &node) in names[skip..].iter().zip(&c) {
                    map.set(&format!("{side_name}{name}"), node);
                }
            }
            let neck = chain(*ups.iter().max_by_key(|&&c| size[c]).unwrap_or(&ups[0]));
            map.set("Neck", neck[0]);
            if neck.len() >= 2 {
                map.set("Head", neck[1]);
            }
            if neck.len() >= 3 {
                map.set("HeadTop_End", neck[2]);
            }
            if map.get("LeftFoot").is_none() || map.get("RightFoot").is_none() {
                continue;
            }
            return Ok(map);
        }
        Err(GarmentError::NotHumanoid(why))
    }
}
