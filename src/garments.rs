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
use crate::math::{Mat4, Vec3};
use crate::rig::Rig;

/// Why a garment could not be built.
#[derive(Debug, thiserror::Error)]
pub enum GarmentError {
    #[error("garment '{garment}' needs bone '{bone}' (matched by name after any Mixamo prefix)")]
    MissingBone { garment: String, bone: String },
    #[error("unknown garment '{0}' (known: cape, hakama, sash, headband)")]
    UnknownKind(String),
    #[error("rig has no skinned mesh to bind pins to")]
    NoSkin,
    #[error("building garment '{0}': {1}")]
    Build(String, BuildError),
}

/// The garments of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GarmentKind {
    /// Hangs from the shoulders and upper back to the knees.
    Cape,
    /// A pleated wide skirt pinned in a ring around the hips, to mid-calf.
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

    /// Appends the pins of another binding (garments are concatenated in the model).
    pub fn extend(&mut self, other: &PinBinding) {
        self.joints.extend_from_slice(&other.joints);
        self.weights.extend_from_slice(&other.weights);
        self.p_bind.extend_from_slice(&other.p_bind);
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
    /// Up (+Y), the character's forward and left, world space.
    pub up: Vec3,
    pub forward: Vec3,
    pub left: Vec3,
}

impl<'a> BodyAtRest<'a> {
    pub fn new(
        rig: &'a Rig,
        skin: usize,
        proxies: &'a ProxyFrame,
        capsules: &'a [[u32; 2]],
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
            joint_world,
            up: Vec3::Y,
            forward: Vec3::Z,
            left: Vec3::X,
        };
        // glTF is Y up; the character's left from its hip joints, forward = left × up.
        if let (Ok(l), Ok(r)) = (b.joint("LeftUpLeg", "body"), b.joint("RightUpLeg", "body")) {
            let across = (l - r).reject_from(Vec3::Y);
            if let Some(left) = across.try_normalize() {
                b.left = left;
                b.forward = left.cross(Vec3::Y);
            }
        }
        Ok(b)
    }

    /// World position at rest of the bone named `name` (after any prefix).
    pub fn joint(&self, name: &str, garment: &str) -> Result<Vec3, GarmentError> {
        self.rig
            .skeleton
            .find(name)
            .map(|i| self.joint_world[i])
            .ok_or_else(|| GarmentError::MissingBone {
                garment: garment.into(),
                bone: name.into(),
            })
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

    /// Binds world-space points (at rest) to the skin: nearest skin vertex's influences.
    fn bind(&self, points: &[Vec3]) -> Result<PinBinding, GarmentError> {
        let skin = self.skin as u32;
        let meshes: Vec<_> = self
            .rig
            .meshes
            .iter()
            .filter(|m| m.skin == Some(skin) && m.joints.len() == m.positions.len())
            .collect();
        if meshes.is_empty() {
            return Err(GarmentError::NoSkin);
        }
        let mut out = PinBinding::default();
        for &p in points {
            let mut best = (f32::INFINITY, [0u16; 4], [1.0f32, 0.0, 0.0, 0.0]);
            for m in &meshes {
                for (v, q) in m.positions.iter().enumerate() {
                    let w = blend(&self.world_from_bind, m.joints[v], m.weights[v]);
                    let d = w.transform_point3(*q).distance_squared(p);
                    if d < best.0 {
                        best = (d, m.joints[v], m.weights[v]);
                    }
                }
            }
            let m = blend(&self.world_from_bind, best.1, best.2);
            let p_bind = if m.determinant().abs() > 1e-20 {
                m.inverse().transform_point3(p)
            } else {
                p
            };
            out.joints.push(best.1);
            out.weights.push(best.2);
            out.p_bind.push(p_bind);
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
    let pins = body.bind(&pin_points)?;
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

fn hakama(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "hakama";
    let hips = body.joint("Hips", g)?;
    let spine = body.joint("Spine", g)?;
    let legs = leg_length(body, g)?;
    let clearance = spec.clearance;
    // Waist ring a little above the hip joint; hem at 70 % of the leg below the hips. (A
    // knee-length skirt was tried: the kicking thigh stretched it more, not less.)
    let waist = Vec3::new(hips.x, hips.y + 0.3 * (spine.y - hips.y), hips.z);
    let length = 0.7 * legs * spec.length;
    let waist_ring = fitted_ring(body, waist, spec.spacing, clearance);
    // The skirt's radius below the waist: the widest of the waist and of rings further down
    // (around both legs), so it falls freely instead of clinging.
    let mut widest: Vec<f32> = waist_ring.iter().map(|&(_, r)| r).collect();
    for k in 1..=5 {
        let c = waist - Vec3::Y * (0.08 * k as f32 * legs);
        for (w, &(dir, _)) in widest.iter_mut().zip(&waist_ring) {
            *w = w.max(body.ray_exit(c, dir, clearance, 0.6));
        }
    }
    let cols = waist_ring.len();
    let rows = ((length / spec.spacing).round() as usize).max(3) + 1;
    let dy = length / (rows - 1) as f32;
    // Pleats: a zig-zag of depth `pleat` around the circumference, growing from the waist (sewn
    // flat) to the hem; every fourth column folds out. The folds store the width a raised knee
    // needs (a front kick lifts the thigh to horizontal inside the skirt).
    let pleat = 0.03;
    let mut sheet = Sheet::default();
    let base = sheet.grid(cols, rows, true, |c, r| {
        let (dir, r0) = waist_ring[c];
        let t = r as f32 / (rows - 1) as f32;
        // Reach the widest radius (plus 5 cm of ease for legs that spread) within the top
        // eighth, so the thighs never pull the cloth taut against its pinned waist.
        let ease = (t * 8.0).min(1.0);
        let radius = r0 + (widest[c] + 0.05 - r0) * ease + 0.04 * t;
        let fold = if (c / 2) % 2 == 0 { pleat } else { 0.0 } * ease;
        let p = waist + dir * (radius + fold) - Vec3::Y * dy * r as f32;
        if r == 0 {
            p
        } else {
            body.push_out(p, clearance)
        }
    });
    sheet.pinned.extend((0..cols as u32).map(|c| base + c));
    Ok(sheet)
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
    Ok(band_with_tails(
        body,
        spec,
        centre,
        0.06,
        clearance,
        0.06,
        0.45 * legs,
        0.05,
    ))
}

fn headband(body: &BodyAtRest, spec: &GarmentSpec) -> Result<Sheet, GarmentError> {
    let g = "headband";
    let head = body.joint("Head", g)?;
    let top = body.joint("HeadTop_End", g)?;
    let centre = head + (top - head) * 0.45;
    let clearance = spec.clearance;
    let h = (top.y - head.y).max(0.05);
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
