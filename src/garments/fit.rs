//! The body at its bind pose as the garments see it ([`BodyAtRest`]): its humanoid bones (the
//! bone map), its axes, and the measurements a garment's shape is fitted with: the body's
//! signed distance (proxies and visible skin), rays cast out of the body's axis, pushing points
//! out to a clearance, the leg length the hanging parts are sized by.

use super::bones::{weighted_nodes, BoneMap, BoneSource};
use super::pins::{blend, strongest};
use super::sweep::LimbSweep;
use super::GarmentError;
use crate::body::proxies::Hulls;
use crate::body::ProxyFrame;
use crate::math::{Mat4, Vec3};
use crate::rig::Rig;

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
    /// How big the body is against the sizes the garments are laid out with
    /// ([`body_scale`]): 1 for a body 1 to 2 m tall (the head's top to the lowest ankle), else
    /// its height over the nearer end of that range. Every length of a garment's layout (the
    /// spec's spacing and clearance, the ease, pleats, band heights and widths, the probes'
    /// reach) is multiplied by it.
    pub scale: f32,
    /// Up (+Y), the character's forward and left, world space.
    pub up: Vec3,
    pub forward: Vec3,
    pub left: Vec3,
    /// [`BodyAtRest::arm_sweep`], computed on first use (it poses every clip).
    pub(super) sweep: std::cell::OnceCell<Vec<Vec<Vec3>>>,
    /// Skin joint each proxy sphere follows (`Proxies::joint`, indexed like `proxies`); empty
    /// when unknown (then the garments fit against the bind pose alone). See
    /// [`BodyAtRest::with_proxy_joints`].
    pub(super) proxy_joints: &'a [u32],
    /// [`BodyAtRest::limb_sweep`], computed on first use.
    pub(super) limbs: std::cell::OnceCell<LimbSweep>,
    /// The visible skin at this pose ([`BodyAtRest::sdf`]), built on first use (`None`: no
    /// triangles, the proxies alone).
    pub(super) surface: std::cell::OnceCell<Option<crate::cloth::skin::SkinSurface>>,
    /// The proxies as bounding-sphered hulls for [`BodyAtRest::sdf`], built on first use, and
    /// the capsule that was nearest last (tried first: the layout asks about nearby points in
    /// turn).
    hulls: std::cell::OnceCell<Hulls>,
    hint: std::cell::Cell<usize>,
    /// The open sheets' triangles at this pose ([`BodyAtRest::keep_under_sheets`]), built on
    /// first use.
    sheets: std::cell::OnceCell<Vec<[Vec3; 3]>>,
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
            bones: BoneMap::resolve(&rig.skeleton, &joint_world, &weighted_nodes(rig), overrides)?,
            joint_world,
            scale: 1.0,
            up: Vec3::Y,
            forward: Vec3::Z,
            left: Vec3::X,
            sweep: std::cell::OnceCell::new(),
            proxy_joints: &[],
            limbs: std::cell::OnceCell::new(),
            surface: std::cell::OnceCell::new(),
            hulls: std::cell::OnceCell::new(),
            hint: std::cell::Cell::new(0),
            sheets: std::cell::OnceCell::new(),
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
                b.bones.set_source("HeadTop_End", BoneSource::Skin);
            }
        }
        if let (Ok(top), Ok(l), Ok(r)) = (
            b.joint("HeadTop_End", "body"),
            b.joint("LeftFoot", "body"),
            b.joint("RightFoot", "body"),
        ) {
            b.scale = body_scale(top.y - l.y.min(r.y));
        }
        Ok(b)
    }

    /// The same body in another pose of its skeleton (`world_from_node`, every node's world
    /// matrix) with its proxies there (`proxies`, indexed like this body's): the garments laid
    /// out on it fit that pose, and their pins bind through its skin matrices, so they are
    /// placed on the skin in any pose as usual. The bone map, axes and scale stay the bind
    /// pose's (the layout pose, [`super::layout`], moves only the legs).
    pub fn at_pose<'b>(
        &'b self,
        world_from_node: &[Mat4],
        proxies: &'b ProxyFrame,
    ) -> BodyAtRest<'b> {
        let mut world_from_bind = Vec::new();
        crate::body::world_from_bind(
            world_from_node,
            &self.rig.skins[self.skin],
            &mut world_from_bind,
        );
        BodyAtRest {
            rig: self.rig,
            skin: self.skin,
            world_from_bind,
            proxies,
            capsules: self.capsules,
            joint_world: world_from_node
                .iter()
                .map(|m| m.transform_point3(Vec3::ZERO))
                .collect(),
            bones: self.bones.clone(),
            scale: self.scale,
            up: self.up,
            forward: self.forward,
            left: self.left,
            sweep: std::cell::OnceCell::new(),
            proxy_joints: self.proxy_joints,
            limbs: std::cell::OnceCell::new(),
            surface: std::cell::OnceCell::new(),
            hulls: std::cell::OnceCell::new(),
            hint: std::cell::Cell::new(0),
            sheets: std::cell::OnceCell::new(),
        }
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
    pub(super) fn dominated_vertices(&self, node: usize) -> Vec<Vec3> {
        self.dominated_in(node, |_| true)
    }

    /// The head's own vertices at rest: those the Head bone dominates in the meshes the file
    /// skins, leaving out rigid meshes on the head (a KayKit hat: the Barbarian's stands 21 cm
    /// above its skull), which are body to lie against but not the head a headband is sized
    /// to. All the Head bone dominates where the file skins none (RobotExpressive's
    /// head is a rigid box).
    pub(super) fn head_vertices(&self, head: usize) -> Vec<Vec3> {
        let own = self.dominated_in(head, |m| !crate::body::is_rigid_part(m));
        if own.is_empty() {
            self.dominated_vertices(head)
        } else {
            own
        }
    }

    /// [`BodyAtRest::dominated_vertices`] over the meshes `keep` accepts.
    fn dominated_in(
        &self,
        node: usize,
        keep: impl Fn(&crate::rig::SkinnedMesh) -> bool,
    ) -> Vec<Vec3> {
        let skin = &self.rig.skins[self.skin];
        let mut out = Vec::new();
        for m in &self.rig.meshes {
            if m.skin != Some(self.skin as u32) || m.joints.len() != m.positions.len() || !keep(m) {
                continue;
            }
            for (v, p) in m.positions.iter().enumerate() {
                let (j, w) = (m.joints[v], m.weights[v]);
                let k = strongest(w);
                if skin.joints.get(j[k] as usize) == Some(&(node as u32)) {
                    out.push(blend(&self.world_from_bind, j, w).transform_point3(*p));
                }
            }
        }
        out
    }

    /// The highest of the head's own vertices ([`BodyAtRest::head_vertices`]), above the head
    /// joint, at rest.
    fn head_top(&self) -> Option<Vec3> {
        let head = self.node("Head")?;
        let h = self.joint_world[head];
        self.head_vertices(head)
            .iter()
            .map(|q| q.y)
            .fold(None, |a: Option<f32>, y| Some(a.map_or(y, |a| a.max(y))))
            .filter(|&t| t > h.y + 0.02 * self.scale)
            .map(|t| Vec3::new(h.x, t, h.z))
    }

    /// Signed distance of `p` to the body (negative inside), m: the smaller of the proxy
    /// union's and the visible skin's at this pose (every mesh of the rig bound to the skin,
    /// rigid parts and props included, [`crate::body::with_rigid_parts`]; side by the
    /// angle-weighted pseudo-normal, [`crate::cloth::skin::SkinSurface::closest`], searched
    /// within 10 cm × [`BodyAtRest::scale`]). Everything a garment is laid out against (rays,
    /// push-outs, the pins' rows) thus starts outside the skin people see as well as the
    /// proxies: laid out on the proxies alone, the cc0 RobotExpressive's headband started in
    /// the corners of its box head that the spheres miss (12.4 % of its vertices > 3 mm inside
    /// in Idle, 21 cm deep), where the skin stage cannot reach it and pins cannot move.
    pub(super) fn sdf(&self, p: Vec3) -> f32 {
        // The least over the capsules, as `union_sdf`, skipping those whose bounding sphere is
        // farther than the best so far (the KayKit characters' scenes spent half their build
        // here, over every prop's capsule for every probe of the layout).
        let d = if self.capsules.is_empty() {
            f32::INFINITY
        } else {
            let hulls = self.hulls.get_or_init(|| {
                Hulls::new(&self.proxies.center, &self.proxies.radius, self.capsules)
            });
            let (d, _, i) = hulls.nearest(p, self.hint.get());
            self.hint.set(i);
            d
        };
        match self.surface.get_or_init(|| self.build_surface()) {
            Some(s) => match s.closest(p.into(), 0.1 * self.scale) {
                Some(h) => d.min(if h.inside { -h.distance } else { h.distance }),
                // Nothing within reach: far outside, or deep inside a big part the proxies
                // miss (RobotExpressive's forearm blocks: two hakama particles were laid out
                // 15-21 cm inside one, and stayed there, beyond the skin contact's reach). Only
                // an inside answer is taken from farther: outside, the proxies' distance stands
                // as before.
                None => match s.closest(p.into(), DEEP_REACH * self.scale) {
                    Some(h) if h.inside => d.min(-h.distance),
                    _ => d,
                },
            },
            None => d,
        }
    }

    /// The skin of [`BodyAtRest::sdf`]: the rig's meshes bound to the skin, placed by this
    /// pose's skin matrices (LBS), as one surface; `None` without triangles.
    ///
    /// Less the open sheets ([`crate::body::sheet_triangles`]), as the check and the skin
    /// contact leave them out: the side of a sheet's nearest point says "inside" for every
    /// point behind it, to any depth. The KayKit Rogue's sash was laid out round its cape
    /// (a curved plane hung from the chest) as if the cape closed a body behind it: the band's
    /// rays left the "body" only beyond the cape, and at the sides up to 31 cm from any skin,
    /// a hoop 0.6–0.86 m from the waist's axis.
    fn build_surface(&self) -> Option<crate::cloth::skin::SkinSurface> {
        let (rest, all, sheet) = self.posed_triangles();
        let tris: Vec<[u32; 3]> = all
            .into_iter()
            .zip(sheet)
            .filter(|&(_, s)| !s)
            .map(|(t, _)| t)
            .collect();
        if tris.is_empty() {
            return None;
        }
        let mut s = crate::cloth::skin::SkinSurface::new(&rest, &tris);
        s.set_frame([rest.as_slice()]);
        s.prepare(1.0);
        Some(s)
    }

    /// Moves every point of `points` that lies beyond an open sheet of the body (KayKit's capes:
    /// [`crate::body::sheets`]), seen from the body's axis (the vertical through the hips at the
    /// point's height), back along that line to `clearance` short of the sheet. The layout does
    /// not see the sheets otherwise (they have no inside), and the skin contact keeps each
    /// particle on the side of a sheet it is on: without this a garment could start on both
    /// sides of a cape, through it (the Rogue's sash band under its cape, the tails and the back
    /// of the hakama over it). The waist's garments are laid out so, under the sheets.
    pub(super) fn keep_under_sheets(&self, points: &mut [Vec3], clearance: f32) {
        let tris = self.sheets.get_or_init(|| self.sheet_triangles());
        if tris.is_empty() {
            return;
        }
        let Ok(hips) = self.joint("Hips", "layout") else {
            return;
        };
        for p in points.iter_mut() {
            let a = Vec3::new(hips.x, p.y, hips.z);
            let d = *p - a;
            let len = d.length();
            if !(len > 1e-6) {
                continue;
            }
            let first = tris
                .iter()
                .filter_map(|t| segment_hits(a, d, t))
                .fold(f32::INFINITY, f32::min);
            if first.is_finite() {
                *p = a + d * ((first - clearance / len).max(0.0));
            }
        }
    }

    /// The triangles of the open sheets among the meshes [`BodyAtRest::sdf`] reads, at this pose.
    fn sheet_triangles(&self) -> Vec<[Vec3; 3]> {
        let (x, tris, sheet) = self.posed_triangles();
        tris.iter()
            .zip(sheet)
            .filter(|&(t, s)| s && t.iter().all(|&v| (v as usize) < x.len()))
            .map(|(t, _)| t.map(|v| x[v as usize]))
            .collect()
    }

    /// The meshes bound to the skin at this pose (LBS): their vertices, their triangles (indices
    /// into those), and whether each triangle is part of an open sheet
    /// ([`crate::body::sheet_triangles`]).
    fn posed_triangles(&self) -> (Vec<Vec3>, Vec<[u32; 3]>, Vec<bool>) {
        let sheets = crate::body::sheet_triangles(self.rig);
        let (mut x, mut tris, mut sheet) = (Vec::new(), Vec::new(), Vec::new());
        let mut first_tri = 0;
        for m in &self.rig.meshes {
            let mesh_tris = first_tri..first_tri + m.indices.len() / 3;
            first_tri = mesh_tris.end;
            if m.skin != Some(self.skin as u32) || m.joints.len() != m.positions.len() {
                continue;
            }
            let base = x.len() as u32;
            x.extend(m.positions.iter().enumerate().map(|(v, p)| {
                blend(&self.world_from_bind, m.joints[v], m.weights[v]).transform_point3(*p)
            }));
            for (t, k) in m.indices.chunks_exact(3).zip(mesh_tris) {
                tris.push([base + t[0], base + t[1], base + t[2]]);
                sheet.push(sheets.get(k).copied().unwrap_or(false));
            }
        }
        (x, tris, sheet)
    }

    /// Distance from `centre` along the horizontal unit `dir` to where the body
    /// ([`BodyAtRest::sdf`]) is first left for good (its signed distance ≥ `clearance`), m; `max` × [`BodyAtRest::scale`] if
    /// nothing is hit.
    pub(super) fn ray_exit(&self, centre: Vec3, dir: Vec3, clearance: f32, max: f32) -> f32 {
        // March outwards in 2 mm steps from the far end inwards would miss inner hits; march
        // from the axis and keep the last entry, so a hand beside the hips does not count while
        // the hip surface does (the first exit after which nothing is hit within 3 cm).
        let (u, max) = (self.scale, max * self.scale);
        let step = 0.002 * u;
        let mut r = 0.0;
        let mut exit = None;
        while r < max {
            let d = self.sdf(centre + dir * r);
            if d >= clearance {
                if exit.is_none() {
                    exit = Some(r);
                } else if r - exit.unwrap_or(r) > 0.03 * u {
                    break;
                }
            } else {
                exit = None;
            }
            // Outside, the sdf bounds how far we can jump without crossing a surface.
            r += if d > clearance + step {
                (d - clearance).min(0.03 * u)
            } else {
                step
            };
        }
        exit.unwrap_or(max)
    }

    /// Pushes `p` out of the body ([`BodyAtRest::sdf`]) to at least `clearance` along the union's gradient.
    pub(super) fn push_out(&self, mut p: Vec3, clearance: f32) -> Vec3 {
        for _ in 0..12 {
            let d = self.sdf(p);
            if d >= clearance {
                break;
            }
            let e = 0.001 * self.scale;
            let g = Vec3::new(
                self.sdf(p + Vec3::X * e) - self.sdf(p - Vec3::X * e),
                self.sdf(p + Vec3::Y * e) - self.sdf(p - Vec3::Y * e),
                self.sdf(p + Vec3::Z * e) - self.sdf(p - Vec3::Z * e),
            );
            let n = g.try_normalize().unwrap_or(self.forward);
            p += n * (clearance - d + 1e-4 * self.scale);
        }
        p
    }

    /// Moves `p` along the unit `dir` until it is outside the body by `clearance`
    /// (at most 0.6 m × [`BodyAtRest::scale`]; then along the gradient as a last resort).
    pub(super) fn push_out_along(&self, p: Vec3, dir: Vec3, clearance: f32) -> Vec3 {
        let u = self.scale;
        let mut s = 0.0;
        while s < 0.6 * u {
            let d = self.sdf(p + dir * s);
            if d >= clearance {
                return p + dir * s;
            }
            // Inside, |sdf| bounds the distance to the surface along any direction.
            s += (clearance - d).clamp(0.001 * u, 0.02 * u);
        }
        self.push_out(p, clearance)
    }
}

/// How deep inside the skin [`BodyAtRest::sdf`] still finds a point, m × [`BodyAtRest::scale`],
/// when nothing lies within 10 cm: RobotExpressive's forearm blocks are 40 cm across at its
/// scale (2.03).
const DEEP_REACH: f32 = 0.5;

/// Body height scale: the hips' height above the lowest foot joint, m.
pub(super) fn leg_length(body: &BodyAtRest, garment: &str) -> Result<f32, GarmentError> {
    let hips = body.joint("Hips", garment)?;
    let foot = body
        .joint("LeftFoot", garment)?
        .y
        .min(body.joint("RightFoot", garment)?.y);
    Ok((hips.y - foot).max(0.2 * body.scale))
}

/// The body scale [`BodyAtRest::scale`] for a body `height` tall (world units): 1 from 1 to
/// 2 m, so a person is dressed at the sizes stated in metres whatever their height, and
/// proportional beyond (height / 2 above, height / 1 below): RobotExpressive, 4.1 units from
/// its head's end joint to its ankles, is dressed as a 2 m person scaled by 2.03, with a
/// particle spacing and a clearance 2.03 times as large, so that its garments have the
/// proportions and particle count they would have on a person; the KayKit characters (2.2 to
/// 2.4 units) by about 1.1. A unit mistake (a centimetre body 180 units tall) gets garments
/// of its size rather than a cape a hundredth of its back. The fabrics (per-spring
/// stiffness, area density) and gravity are not scaled: a big body is dressed like a giant.
pub fn body_scale(height: f32) -> f32 {
    if !height.is_finite() || height <= 0.0 {
        1.0
    } else if height > 2.0 {
        height / 2.0
    } else if height < 1.0 {
        height
    } else {
        1.0
    }
}

/// Where the segment `a + s d`, `s` in [0, 1], crosses triangle `t` (Möller & Trumbore 1997), as
/// `s`; `None` if it does not.
fn segment_hits(a: Vec3, d: Vec3, t: &[Vec3; 3]) -> Option<f32> {
    let e1 = t[1] - t[0];
    let e2 = t[2] - t[0];
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-12 {
        return None;
    }
    let inv = 1.0 / det;
    let o = a - t[0];
    let u = o.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = o.cross(e1);
    let v = d.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let s = e2.dot(q) * inv;
    (0.0..=1.0).contains(&s).then_some(s)
}
