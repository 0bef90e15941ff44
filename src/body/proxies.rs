//! Body proxies: spheres joined by tapered capsules, fitted to a skinned character at its bind
//! pose, stored in bind space per joint and moved by the skin matrices every frame
//! (PHYSICS.md §4 "Body proxies").
//!
//! # How a bone is fitted
//! For every bone that keeps proxies (fingers, tiny bones and bones with few vertices are merged
//! into their parent, listed bones are skipped) we take the skin vertices it dominates (largest
//! weight) and build a bone frame: `u` along the bone (towards the child joint that continues the
//! chain), `v` the major and `w` the minor axis of the cross-section (2-D principal axes). The bone
//! is cut into rows along `u`. Each row is a *stadium*: `n_cols` spheres of one radius spread
//! along `v`, so that flat parts (torso, pelvis, hands) are not forced into round cross-sections;
//! round parts (limbs, neck) get one column. Rows are joined along `u` and across `v` by tapered
//! capsules. The end rows are pulled in so that a round cap ends where the vertices end: by the
//! whole radius at an exposed end (head top, hand, foot), by √(r² − r_neighbour²) at a joint (a
//! head sphere must not swallow the neck; a chest sphere may overlap the belly). The first row of
//! each bone is joined to the nearest sphere of its parent bone, so that joints (elbow, neck, hip)
//! are closed by a capsule that bends with them.
//!
//! Radii start as a robust percentile of the vertices' distances to the row's core segment and are
//! then refined a few times against the whole union: each sphere grows (at most by
//! [`ProxyOptions::max_growth`]) or shrinks by the same percentile of the signed distances of the
//! vertices it is closest to.
//!
//! The stadium model suits human bodies (round limbs, elliptic torso); box-like parts (a cartoon
//! head with flat faces, a figure made of blocks) are wrapped with bulges at their faces.
//!
//! # Units
//! Everything in [`Proxies`] is in bind space, whose unit is the file's (metres, or centimetres in
//! the Mixamo convention where `world_from_bind` is a 0.01 scale at rest). The tunables in
//! [`ProxyOptions`] are in metres and converted with the rest pose's scale. [`ProxyFrame`] is in
//! world space, i.e. metres.

// Loops over joints index several structs-of-arrays in step; iterators would hide that.
#![allow(clippy::needless_range_loop)]

use crate::anim::{Skeleton, Skin};
use crate::body::surface::hidden_vertices;
use crate::math::{Mat3, Mat4, Vec3, Vec3A};
use crate::rig::{Rig, SkinnedMesh};
use std::fmt;

/// Why proxies could not be fitted.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BodyError {
    #[error("the rig has no skin number {0} (it has {1})")]
    NoSkin(usize, usize),
    #[error("no mesh of the rig is bound to skin {0}")]
    NoVertices(usize),
    #[error("skin {0} names node {1}, which the skeleton does not have")]
    BadJoint(usize, u32),
}

/// Options for [`Proxies::fit`]; the scene file fills them. Lengths are in metres (world space).
#[derive(Clone, Debug, PartialEq)]
pub struct ProxyOptions {
    /// Bones that get no proxies (matched by name after any Mixamo prefix, e.g. `"LeftHand"`).
    /// Bones merged into a skipped bone (its fingers, say) are skipped with it; their vertices are
    /// left out of the fit and of [`quality`]. Default: none.
    pub skip: Vec<String>,
    /// Per-bone radius factors `(bone name, factor)`, applied after fitting to every sphere of that
    /// bone (factor range 0.1..10). Default: none.
    pub radius_scale: Vec<(String, f32)>,
    /// Share of a sphere's vertices that its radius puts inside the proxies (robust percentile).
    /// Range 0.5..1; default 0.9 (a little outside the skin beats cloth sinking into it).
    pub percentile: f32,
    /// Width of the band the refinement fits, metres (range 0..0.05, default 0.008; 0 = plain
    /// percentile). A sphere whose vertices spread over more than twice this across its surface
    /// (a non-round cross-section, a foot's sole and instep) cannot match them all: it takes the
    /// percentile of the largest group of its vertices that fits in the band instead of letting
    /// the outliers push its surface away from the rest.
    pub fit_tolerance: f32,
    /// Bones shorter than this (segment to the child joint, or vertex extent for end bones) merge
    /// into their parent. Metres, range 0..0.2, default 0.03.
    pub min_bone_length: f32,
    /// Bones dominating fewer vertices than this merge into their parent. Range 0..1000,
    /// default 12.
    pub min_vertices: usize,
    /// Merge finger bones (names containing thumb/index/middle/ring/pinky/finger) into the hand.
    /// Default true.
    pub merge_fingers: bool,
    /// Target distance between rows along a bone. Metres, range 0.01..0.5, default 0.08.
    pub row_spacing: f32,
    /// Most rows per bone. Range 1..32, default 8.
    pub max_rows: usize,
    /// A cross-section whose major half-extent exceeds its minor one by more than this is fitted
    /// with several columns (a stadium) instead of one sphere. Metres, range 0..0.1, default 0.01.
    pub flat_threshold: f32,
    /// Largest dent allowed between neighbouring columns of a stadium; sets the column count.
    /// Metres, range 0.0005..0.05, default 0.003.
    pub max_dent: f32,
    /// Most columns per row (odd). Range 1..9, default 5.
    pub max_columns: usize,
    /// Radius refinement passes against the whole union. Range 0..10, default 3.
    pub refine_iterations: usize,
    /// Most a sphere may grow in refinement, as a fraction of its fitted radius: growing to
    /// swallow a box-like part's corners makes it bulge over its neighbours. Range 0..1,
    /// default 0.15.
    pub max_growth: f32,
    /// Cover phase: while the fit at the bind pose ([`quality_at_bind`]'s `within`) is below
    /// this share, spheres that stick out of the skin are shrunk and medial spheres are added
    /// where the skin is far from every proxy (see [`Proxies::fit`]). Range 0..1 (0 = off),
    /// default 0.955: just above the 95 % target, so that a fit that already meets it
    /// (the built-in ninja: 95.6 %) is left exactly as it is.
    pub cover_target: f32,
    /// Most spheres the cover phase may add. Range 0..1000, default 200.
    pub max_cover_spheres: usize,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        Self {
            skip: Vec::new(),
            radius_scale: Vec::new(),
            percentile: 0.9,
            fit_tolerance: 0.008,
            min_bone_length: 0.03,
            min_vertices: 12,
            merge_fingers: true,
            row_spacing: 0.08,
            max_rows: 8,
            flat_threshold: 0.01,
            max_dent: 0.003,
            max_columns: 5,
            refine_iterations: 3,
            max_growth: 0.15,
            cover_target: 0.955,
            max_cover_spheres: 200,
        }
    }
}

/// Spheres attached to skin joints (structs of arrays, indexed by sphere) and the tapered capsules
/// over them. Every collider is `capsules[i] = [a, b]`, the convex hull of spheres `a` and `b`;
/// `[a, a]` is a lone sphere.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Proxies {
    /// Skin joint (index into `Skin::joints`, the `k` of `world_from_bind[k]`) each sphere follows.
    pub joint: Vec<u32>,
    /// Sphere centre in bind space (the mesh's POSITION space). The joint-space centre is
    /// `inverse_bind[k] * center_in_bind`; storing the bind-space one lets the skin matrices move it.
    pub center_in_bind: Vec<Vec3>,
    /// Radius in bind units.
    pub radius: Vec<f32>,
    /// Tapered capsules as pairs of sphere indices (`[i, i]` for a lone sphere).
    pub capsules: Vec<[u32; 2]>,
    /// Skin joints whose vertices are represented by no proxy (skipped by the options, or merged
    /// into a skipped bone); [`quality`] leaves their vertices out.
    pub skipped_joints: Vec<u32>,
}

/// Proxies posed for one frame, in world space (metres).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProxyFrame {
    pub center: Vec<Vec3>,
    pub radius: Vec<f32>,
}

impl ProxyFrame {
    /// The proxies between two frames, `t` in [0, 1] from `prev` to `next`, written into `out`
    /// (no allocation once it has the size): PHYSICS.md §2 "Moving colliders" interpolates the
    /// body at every substep so that a fast limb sweeps through the cloth in small steps; the
    /// collider's velocity there is `(next.center - prev.center) / frame_dt`.
    pub fn lerp(prev: &ProxyFrame, next: &ProxyFrame, t: f32, out: &mut ProxyFrame) {
        let n = prev.center.len().min(next.center.len());
        out.center.resize(n, Vec3::ZERO);
        out.radius.resize(n, 0.0);
        for i in 0..n {
            out.center[i] = prev.center[i].lerp(next.center[i], t);
            out.radius[i] = prev.radius[i] + (next.radius[i] - prev.radius[i]) * t;
        }
    }
}

/// `world_from_bind[k] = world_from_node[joints[k]] * inverse_bind[k]` for every joint of `skin`
/// (the skin matrices), written into `out` without reallocating once it has the right length.
/// A joint naming a node outside `world_from_node` gets the identity.
pub fn world_from_bind(world_from_node: &[Mat4], skin: &Skin, out: &mut Vec<Mat4>) {
    out.resize(skin.joints.len(), Mat4::IDENTITY);
    for (k, o) in out.iter_mut().enumerate() {
        let node = skin.joints[k] as usize;
        let ib = skin.inverse_bind.get(k).copied().unwrap_or(Mat4::IDENTITY);
        *o = world_from_node
            .get(node)
            .map_or(Mat4::IDENTITY, |w| *w * ib);
    }
}

/// The factor by which `m` scales lengths: the longest of its three axes, so that a sphere moved
/// by a non-uniformly scaled joint still encloses the ellipsoid it becomes.
fn max_axis_scale(m: &Mat4) -> f32 {
    m.x_axis
        .truncate()
        .length_squared()
        .max(m.y_axis.truncate().length_squared())
        .max(m.z_axis.truncate().length_squared())
        .sqrt()
}

impl Proxies {
    pub fn sphere_count(&self) -> usize {
        self.joint.len()
    }

    /// Moves every sphere to world space with the skin matrices (`world_from_bind[k]`, see
    /// [`world_from_bind`]); radii scale with the matrix. No allocation once `out` has the size.
    pub fn update(&self, world_from_bind: &[Mat4], out: &mut ProxyFrame) {
        let n = self.joint.len();
        out.center.resize(n, Vec3::ZERO);
        out.radius.resize(n, 0.0);
        for i in 0..n {
            let m = world_from_bind
                .get(self.joint[i] as usize)
                .copied()
                .unwrap_or(Mat4::IDENTITY);
            out.center[i] = m.transform_point3(self.center_in_bind[i]);
            out.radius[i] = self.radius[i] * max_axis_scale(&m);
        }
    }

    /// The proxies at the rest (= bind) pose, in world space.
    pub fn rest_frame(&self, rig: &Rig, skin: usize) -> ProxyFrame {
        let mut frame = ProxyFrame::default();
        if let Some(s) = rig.skins.get(skin) {
            let mut wfb = Vec::new();
            world_from_bind(&rig.skeleton.rest_world(), s, &mut wfb);
            self.update(&wfb, &mut frame);
        }
        frame
    }

    /// Fits spheres and tapered capsules to every mesh bound to `rig.skins[skin]` (see the module
    /// docs for the method). Works at the bind pose; never panics on odd input (missing inverse
    /// bind matrices, zero weights, joints without vertices).
    ///
    /// When the result is below [`ProxyOptions::cover_target`] a cover phase follows (the
    /// stadium model does not suit every character: CesiumMan's and RiggedFigure's bones
    /// dominate skin far from their axis, so spheres both stick out of the skin and leave parts
    /// of it uncovered). See `BindFit::cover`.
    pub fn fit(rig: &Rig, skin: usize, opts: &ProxyOptions) -> Result<Proxies, BodyError> {
        let fit = BindFit::new(rig, skin)?;
        let mut px = fit.run(opts);
        fit.cover(rig, skin, &mut px, opts);
        // Per-bone radius factors last: they are the user's word over the fit and the cover.
        for (name, factor) in &opts.radius_scale {
            let name = Skeleton::base_name(name);
            if !(factor.is_finite() && *factor > 0.0) {
                continue;
            }
            for i in 0..px.joint.len() {
                let node = fit.skin.joints[px.joint[i] as usize] as usize;
                if Skeleton::base_name(&rig.skeleton.names[node]) == name {
                    px.radius[i] *= factor;
                }
            }
        }
        Ok(px)
    }
}

// ---------------------------------------------------------------------------------------------
// Fitting
// ---------------------------------------------------------------------------------------------

/// The bind-pose data a fit needs, gathered once.
struct BindFit<'a> {
    skeleton: &'a Skeleton,
    skin: &'a Skin,
    /// Bind-space position of every skin joint.
    joint_pos: Vec<Vec3>,
    /// `bind_from_world` at rest, per joint (to bring child nodes into bind space).
    bind_from_world: Vec<Mat4>,
    /// Metres per bind unit, per joint (1 or 0.01 for Mixamo files).
    metres_per_unit: Vec<f32>,
    /// Parent skin joint of each skin joint (nearest ancestor node that is a joint of this skin).
    parent: Vec<Option<u32>>,
    /// Node index → skin joint.
    joint_of_node: Vec<Option<u32>>,
    /// Children of every node.
    children: Vec<Vec<u32>>,
    /// Descendant count of every node (to find the chain that continues from a root).
    subtree: Vec<u32>,
    /// Bind-space positions of all vertices of meshes bound to this skin.
    positions: Vec<Vec3>,
    /// Dominant skin joint per vertex (`u32::MAX` when it has no usable weight).
    dominant: Vec<u32>,
}

impl<'a> BindFit<'a> {
    fn new(rig: &'a Rig, skin_index: usize) -> Result<Self, BodyError> {
        let skin = rig
            .skins
            .get(skin_index)
            .ok_or(BodyError::NoSkin(skin_index, rig.skins.len()))?;
        let skeleton = &rig.skeleton;
        let nodes = skeleton.len();
        let nj = skin.joints.len();
        for &j in &skin.joints {
            if j as usize >= nodes {
                return Err(BodyError::BadJoint(skin_index, j));
            }
        }
        let rest_world = skeleton.rest_world();
        let mut wfb = Vec::new();
        world_from_bind(&rest_world, skin, &mut wfb);

        let mut joint_pos = Vec::with_capacity(nj);
        let mut bind_from_world = Vec::with_capacity(nj);
        let mut metres_per_unit = Vec::with_capacity(nj);
        for m in wfb.iter() {
            let inv = if m.determinant().abs() > 1e-12 {
                m.inverse()
            } else {
                Mat4::IDENTITY
            };
            bind_from_world.push(inv);
            metres_per_unit.push(max_axis_scale(m).max(1e-9));
        }
        for k in 0..nj {
            let node = skin.joints[k] as usize;
            let p = bind_from_world[k].transform_point3(rest_world[node].w_axis.truncate());
            joint_pos.push(if p.is_finite() { p } else { Vec3::ZERO });
        }

        let mut joint_of_node = vec![None; nodes];
        for (k, &j) in skin.joints.iter().enumerate() {
            joint_of_node[j as usize].get_or_insert(k as u32);
        }
        let mut parent = vec![None; nj];
        for k in 0..nj {
            let mut n = skeleton.parents[skin.joints[k] as usize];
            while let Some(p) = n {
                if let Some(pk) = joint_of_node[p as usize] {
                    parent[k] = Some(pk);
                    break;
                }
                n = skeleton.parents[p as usize];
            }
        }
        let mut children = vec![Vec::new(); nodes];
        for i in 0..nodes {
            if let Some(p) = skeleton.parents[i] {
                if (p as usize) < nodes {
                    children[p as usize].push(i as u32);
                }
            }
        }
        let mut subtree = vec![0u32; nodes];
        for i in (0..nodes).rev() {
            if let Some(p) = skeleton.parents[i] {
                if (p as usize) < i {
                    subtree[p as usize] += subtree[i] + 1;
                }
            }
        }

        let mut positions = Vec::new();
        let mut dominant = Vec::new();
        let meshes: Vec<&SkinnedMesh> = rig
            .meshes
            .iter()
            .filter(|m| m.skin == Some(skin_index as u32))
            .collect();
        // Vertices hidden inside another closed part are no body surface: they would drag the
        // spheres into the neighbour's volume (src/body/surface.rs).
        let hidden = hidden_vertices(&meshes);
        for mesh in &meshes {
            for v in 0..mesh.positions.len() {
                let d = if hidden[positions.len()] {
                    u32::MAX
                } else {
                    dominant_joint(mesh, v, nj)
                };
                positions.push(mesh.positions[v]);
                dominant.push(d);
            }
        }
        if positions.is_empty() {
            return Err(BodyError::NoVertices(skin_index));
        }
        Ok(Self {
            skeleton,
            skin,
            joint_pos,
            bind_from_world,
            metres_per_unit,
            parent,
            joint_of_node,
            children,
            subtree,
            positions,
            dominant,
        })
    }

    /// Bind-space position of node `n` seen from joint `k`'s bind space.
    fn node_in_bind(&self, k: usize, rest_world: &[Mat4], n: usize) -> Vec3 {
        self.bind_from_world[k].transform_point3(rest_world[n].w_axis.truncate())
    }

    fn run(&self, opts: &ProxyOptions) -> Proxies {
        let nj = self.skin.joints.len();
        let rest_world = self.skeleton.rest_world();
        let base =
            |k: usize| Skeleton::base_name(&self.skeleton.names[self.skin.joints[k] as usize]);

        // Own vertex lists.
        let mut own: Vec<Vec<u32>> = vec![Vec::new(); nj];
        for (v, &d) in self.dominant.iter().enumerate() {
            if (d as usize) < nj {
                own[d as usize].push(v as u32);
            }
        }

        // The child joint that continues each bone's chain (its axis), in bind space.
        let mut chain_child: Vec<Option<(u32, Vec3)>> = vec![None; nj];
        for k in 0..nj {
            let node = self.skin.joints[k] as usize;
            let o = self.joint_pos[k];
            let parent_dir = self.parent[k]
                .map(|p| o - self.joint_pos[p as usize])
                .filter(|d| d.length_squared() > 1e-12)
                .map(|d| d.normalize());
            let mut best: Option<(f32, u32, Vec3)> = None;
            for &c in &self.children[node] {
                let pc = self.node_in_bind(k, &rest_world, c as usize);
                let d = pc - o;
                if !d.is_finite() || d.length_squared() < 1e-12 {
                    continue;
                }
                let score = match parent_dir {
                    Some(pd) => d.normalize().dot(pd),
                    None => self.subtree[c as usize] as f32,
                };
                if best.is_none_or(|(s, _, _)| score > s) {
                    best = Some((score, c, pc));
                }
            }
            chain_child[k] = best.map(|b| (b.1, b.2));
        }

        // Owners: merge fingers, tiny bones and bones with few vertices into their parent, in
        // node order so that merges cascade (Index3 → Index2 → Index1 → Hand).
        let mut order: Vec<usize> = (0..nj).collect();
        order.sort_by_key(|&k| self.skin.joints[k]);
        let mut owner: Vec<usize> = (0..nj).collect();
        let mut skipped = vec![false; nj];
        let skip_set: Vec<&str> = opts.skip.iter().map(|s| Skeleton::base_name(s)).collect();
        for &k in &order {
            let name = base(k);
            let size_m = {
                let o = self.joint_pos[k];
                let len = match chain_child[k] {
                    Some((_, c)) => (c - o).length(),
                    None => own[k]
                        .iter()
                        .map(|&v| (self.positions[v as usize] - o).length())
                        .fold(0.0, f32::max),
                };
                len * self.metres_per_unit[k]
            };
            let merge = self.parent[k].is_some()
                && ((opts.merge_fingers && is_finger(name))
                    || own[k].len() < opts.min_vertices
                    || size_m < opts.min_bone_length);
            if merge {
                let p = self.parent[k].unwrap() as usize;
                owner[k] = owner[p];
                skipped[k] = skipped[owner[p]];
            }
            if skip_set.contains(&name) {
                skipped[k] = true;
            }
        }
        let mut verts: Vec<Vec<u32>> = vec![Vec::new(); nj];
        for k in 0..nj {
            if !skipped[k] {
                let o = owner[k];
                let taken = std::mem::take(&mut own[k]);
                verts[o].extend(taken);
            }
        }
        for k in 0..nj {
            if owner[k] != k {
                verts[k].clear();
            }
        }

        // Phase 1: the cross-section slices of every bone that keeps proxies.
        let mut scratch = Vec::new();
        let mut fits: Vec<Option<BoneSlices>> = (0..nj).map(|_| None).collect();
        for &k in &order {
            if owner[k] == k && !skipped[k] && verts[k].len() >= 4 {
                let child = chain_child[k].map(|c| c.1);
                fits[k] = self.slice_bone(k, &verts[k], child, opts, &mut scratch);
            }
        }

        // Phase 2: rows of spheres, in node order (parents first, so that a child can connect to
        // its parent's spheres). Each end row is pulled in along the bone so that its sphere does
        // not bulge past the skin: by its whole radius at an exposed end (head top, hand, foot,
        // the pelvis floor), and at a joint by how far a sphere of that radius reaches along the
        // neighbour's thinner part before it fits inside it: √(r² − r_neighbour²) (0 when the
        // neighbour is as thick, e.g. chest above belly; most of r for a head above a neck).
        let excess = |r: f32, r_nb: f32| (r * r - r_nb * r_nb).max(0.0).sqrt();
        let mut out = Proxies::default();
        let mut bone_spheres: Vec<std::ops::Range<usize>> = vec![0..0; nj];
        for &k in &order {
            let Some(fit) = &fits[k] else { continue };
            let parent = self.parent[k]
                .map(|p| owner[p as usize])
                .filter(|&p| p != k && fits[p].is_some());
            let child = chain_child[k].and_then(|(node, pos)| {
                let c = owner[self.joint_of_node[node as usize]? as usize];
                (c != k && fits[c].is_some()).then_some((c, pos))
            });
            let r_first = fit.slices[0].r;
            let r_last = fit.slices[fit.slices.len() - 1].r;
            let pull_first = match parent {
                Some(p) => excess(
                    r_first,
                    fits[p].as_ref().unwrap().radius_near(self.joint_pos[k]),
                ),
                None => r_first,
            };
            let pull_last = match child {
                Some((c, pos)) => excess(r_last, fits[c].as_ref().unwrap().radius_near(pos)),
                None => r_last,
            };
            let rows = fit.rows(pull_first, pull_last, opts);
            let has_parent_spheres = parent.is_some_and(|p| !bone_spheres[p].is_empty());
            let start = out.joint.len();

            // Spheres, and capsules along each column and across each row.
            let mut prev_row: Option<Vec<u32>> = None;
            let mut first_row = Vec::new();
            for row in &rows {
                let mut ids = Vec::with_capacity(row.centers.len());
                for &c in &row.centers {
                    ids.push(out.joint.len() as u32);
                    out.joint.push(k as u32);
                    out.center_in_bind.push(c);
                    out.radius.push(row.radius);
                }
                for w in ids.windows(2) {
                    // Columns of a round row coincide: no capsule between them.
                    let gap = (out.center_in_bind[w[0] as usize]
                        - out.center_in_bind[w[1] as usize])
                        .length();
                    if gap > 1e-3 * row.radius {
                        out.capsules.push([w[0], w[1]]);
                    }
                }
                if let Some(prev) = &prev_row {
                    for (a, b) in prev.iter().zip(ids.iter()) {
                        out.capsules.push([*a, *b]);
                    }
                } else {
                    first_row = ids.clone();
                }
                prev_row = Some(ids);
            }
            bone_spheres[k] = start..out.joint.len();
            if rows.len() == 1 && rows[0].centers.len() == 1 && !has_parent_spheres {
                out.capsules.push([start as u32, start as u32]);
            }
            // Close the joint: each first-row sphere to the nearest sphere of the parent bone.
            if let Some(p) = parent.filter(|_| has_parent_spheres) {
                for &a in &first_row {
                    let ca = out.center_in_bind[a as usize];
                    // Nearest centre; near-ties (mirror-symmetric columns) go to the lower index
                    // so that the topology does not depend on rounding.
                    let mut nearest: Option<(usize, f32)> = None;
                    for i in bone_spheres[p].clone() {
                        let d = (out.center_in_bind[i] - ca).length();
                        if nearest.is_none_or(|(_, best)| {
                            d < best - 1e-4 * (best + out.radius[a as usize])
                        }) {
                            nearest = Some((i, d));
                        }
                    }
                    if let Some((b, _)) = nearest {
                        out.capsules.push([b as u32, a]);
                    }
                }
            }
        }

        // Refine radii against the whole union.
        let used: Vec<u32> = (0..self.positions.len() as u32)
            .filter(|&v| {
                let d = self.dominant[v as usize] as usize;
                d < nj && !skipped[d]
            })
            .collect();
        let initial = out.radius.clone();
        let growth = opts.max_growth.max(0.0);
        for _ in 0..opts.refine_iterations {
            let band: Vec<f32> = out
                .joint
                .iter()
                .map(|&k| 2.0 * opts.fit_tolerance.max(0.0) / self.metres_per_unit[k as usize])
                .collect();
            refine_radii(&mut out, &self.positions, &used, opts.percentile, &band);
            for (r, r0) in out.radius.iter_mut().zip(&initial) {
                *r = r.min(r0 * (1.0 + growth));
            }
        }

        out.skipped_joints = (0..nj as u32).filter(|&k| skipped[k as usize]).collect();
        out
    }

    /// Cuts one bone's vertices into cross-section slices along its axis (bind space).
    fn slice_bone(
        &self,
        k: usize,
        verts: &[u32],
        chain_child: Option<Vec3>,
        opts: &ProxyOptions,
        scratch: &mut Vec<f32>,
    ) -> Option<BoneSlices> {
        let unit_per_m = 1.0 / self.metres_per_unit[k];
        let o = self.joint_pos[k];
        let pts: Vec<Vec3> = verts
            .iter()
            .map(|&v| self.positions[v as usize])
            .filter(|p| p.is_finite())
            .collect();
        if pts.len() < 4 {
            return None;
        }
        let centroid = pts.iter().copied().sum::<Vec3>() / pts.len() as f32;
        let (long_axis, l1, l2) = principal_axes(&pts, centroid);

        // Axis: towards the child joint that continues the chain; an end bone points from its
        // joint to its vertices; a bone whose vertices sit on its joint uses their long axis.
        let axis = chain_child
            .map(|c| c - o)
            .filter(|d| d.length_squared() > 1e-12)
            .or_else(|| Some(centroid - o).filter(|d| d.length_squared() > 1e-12))
            .map(|d| d.normalize())
            .unwrap_or(long_axis);
        // An elongated vertex cloud lying roughly along the bone (a foot whose bone runs from the
        // ankle down to the ball while the foot itself is horizontal) is better cut across its
        // own long axis; a wide, short one (a torso slice) keeps the bone's axis.
        let axis = if l1 >= 2.0 * l2 && long_axis.dot(axis).abs() > std::f32::consts::FRAC_1_SQRT_2
        {
            long_axis * long_axis.dot(axis).signum()
        } else {
            axis
        };
        let (e1, e2) = axis.any_orthonormal_pair();
        // Cross-section principal axes (2-D covariance of the vertices around the axis).
        let (mut a, mut b, mut c) = (0.0f32, 0.0f32, 0.0f32);
        for p in &pts {
            let d = *p - centroid;
            let (x, y) = (d.dot(e1), d.dot(e2));
            a += x * x;
            b += x * y;
            c += y * y;
        }
        let theta = 0.5 * (2.0 * b).atan2(a - c);
        let v_axis = e1 * theta.cos() + e2 * theta.sin();
        let w_axis = axis.cross(v_axis);

        // Slices along u over the robust vertex extent.
        scratch.clear();
        scratch.extend(pts.iter().map(|p| (*p - o).dot(axis)));
        let u_lo = percentile(scratch, 0.01);
        let u_hi = percentile(scratch, 0.99);
        let spacing = opts.row_spacing.max(1e-4) * unit_per_m;
        let span = (u_hi - u_lo).max(0.0);
        // Rounded, not ceiled: a flat end cap whose vertices spread a little along a tilted axis
        // stays one slice instead of being halved.
        let nrows = (steps(span / spacing).round() as usize + 1).clamp(1, opts.max_rows.max(1));
        let du = if nrows > 1 {
            span / (nrows - 1) as f32
        } else {
            1.0
        };
        let bin_of = |u: f32| {
            if nrows > 1 {
                steps((u - u_lo) / du)
                    .round()
                    .clamp(0.0, (nrows - 1) as f32) as usize
            } else {
                0
            }
        };
        let mut bins: Vec<Vec<[f32; 3]>> = vec![Vec::new(); nrows];
        for p in &pts {
            let d = *p - o;
            let u = d.dot(axis);
            bins[bin_of(u)].push([u, d.dot(v_axis), d.dot(w_axis)]);
        }
        let mut slices: Vec<Slice> = Vec::new();
        for (i, bin) in bins.iter().enumerate() {
            if bin.len() < 4 {
                continue;
            }
            scratch.clear();
            scratch.extend(bin.iter().map(|q| q[1]));
            let (v_lo, v_hi) = (percentile(scratch, 0.02), percentile(scratch, 0.98));
            scratch.clear();
            scratch.extend(bin.iter().map(|q| q[2]));
            let (w_lo, w_hi) = (percentile(scratch, 0.02), percentile(scratch, 0.98));
            let (cv, cw) = (0.5 * (v_lo + v_hi), 0.5 * (w_lo + w_hi));
            // Stadium: core half-length = major − minor half-extent.
            let h = (0.5 * (v_hi - v_lo) - 0.5 * (w_hi - w_lo)).max(0.0);
            let u = if nrows > 1 {
                u_lo + du * i as f32
            } else {
                0.5 * (u_lo + u_hi)
            };
            slices.push(Slice {
                u,
                cv,
                cw,
                h,
                r: 0.0,
                bin: i,
            });
        }
        if slices.is_empty() {
            return None;
        }
        // Round or flat: the median, not the largest, core half-length: slices at a junction are
        // cut by the neighbouring part and look flat when the bone is round.
        let h_bone = {
            scratch.clear();
            scratch.extend(slices.iter().map(|s| s.h));
            percentile(scratch, 0.5)
        };
        let flat = h_bone > opts.flat_threshold * unit_per_m;
        if !flat {
            for s in slices.iter_mut() {
                s.h = 0.0;
            }
        }
        // Radii: percentile of the distances to the slice's core segment, in the slice's plane.
        for s in slices.iter_mut() {
            scratch.clear();
            scratch.extend(bins[s.bin].iter().map(|q| {
                let dv = ((q[1] - s.cv).abs() - s.h).max(0.0);
                let dw = q[2] - s.cw;
                (dv * dv + dw * dw).sqrt()
            }));
            s.r = percentile(scratch, opts.percentile).max(1e-3 * unit_per_m);
        }
        // Columns: an odd number spaced so that the dent between neighbours stays under max_dent.
        let ncols = if flat {
            scratch.clear();
            scratch.extend(slices.iter().map(|s| s.r));
            let r_med = percentile(scratch, 0.5);
            let dent = (opts.max_dent * unit_per_m).min(0.5 * r_med);
            let s_max = 2.0
                * (r_med * r_med - (r_med - dent) * (r_med - dent))
                    .max(1e-12)
                    .sqrt();
            let half = (h_bone / s_max).ceil() as usize;
            (1 + 2 * half).min(opts.max_columns.max(1) | 1).max(3)
        } else {
            1
        };
        Some(BoneSlices {
            o,
            axis,
            v_axis,
            w_axis,
            u_lo,
            u_hi,
            spacing,
            ncols,
            slices,
        })
    }
}

/// One cross-section of a bone: a stadium (core segment of half-length `h` along `v`, centred at
/// (`cv`, `cw`) from the axis, swept by radius `r`) at `u` along the axis. Bind units.
struct Slice {
    u: f32,
    cv: f32,
    cw: f32,
    h: f32,
    r: f32,
    bin: usize,
}

/// A bone's frame and slices, before its rows are placed.
struct BoneSlices {
    /// Joint position and bone frame (bind space): `axis` along the bone, `v_axis` the major and
    /// `w_axis` the minor axis of the cross-section.
    o: Vec3,
    axis: Vec3,
    v_axis: Vec3,
    w_axis: Vec3,
    /// Robust extent of the bone's vertices along `axis`.
    u_lo: f32,
    u_hi: f32,
    /// Row spacing, bind units.
    spacing: f32,
    ncols: usize,
    slices: Vec<Slice>,
}

impl BoneSlices {
    fn center(&self, s: &Slice) -> Vec3 {
        self.o + self.axis * s.u + self.v_axis * s.cv + self.w_axis * s.cw
    }

    /// Radius of the slice whose centre is nearest to `x`.
    fn radius_near(&self, x: Vec3) -> f32 {
        self.slices
            .iter()
            .min_by(|a, b| {
                let da = (self.center(a) - x).length_squared();
                let db = (self.center(b) - x).length_squared();
                da.total_cmp(&db)
            })
            .map_or(0.0, |s| s.r)
    }

    /// Slice parameters at `u`, linearly interpolated (clamped at the ends).
    fn at(&self, u: f32) -> (f32, f32, f32, f32) {
        let sl = &self.slices;
        let first = &sl[0];
        if u <= first.u {
            return (first.cv, first.cw, first.h, first.r);
        }
        for w in sl.windows(2) {
            if u <= w[1].u {
                let t = (u - w[0].u) / (w[1].u - w[0].u).max(1e-12);
                let l = |x: f32, y: f32| x + (y - x) * t;
                return (
                    l(w[0].cv, w[1].cv),
                    l(w[0].cw, w[1].cw),
                    l(w[0].h, w[1].h),
                    l(w[0].r, w[1].r),
                );
            }
        }
        let last = &sl[sl.len() - 1];
        (last.cv, last.cw, last.h, last.r)
    }

    /// Rows between the ends pulled in by `pull_first` and `pull_last` (bind units), evenly
    /// spaced, with the slices interpolated; a single row midway when the ends cross.
    fn rows(&self, pull_first: f32, pull_last: f32, opts: &ProxyOptions) -> Vec<Row> {
        let first = &self.slices[0];
        let last = &self.slices[self.slices.len() - 1];
        let a = first.u.min(self.u_lo) + pull_first;
        let b = last.u.max(self.u_hi) - pull_last;
        let us: Vec<f32> = if b <= a {
            let lo = self.u_lo.min(self.u_hi);
            vec![(0.5 * (a + b)).clamp(lo, self.u_hi.max(lo))]
        } else {
            let n =
                (steps((b - a) / self.spacing).ceil() as usize + 1).clamp(2, opts.max_rows.max(2));
            (0..n)
                .map(|i| a + (b - a) * i as f32 / (n - 1) as f32)
                .collect()
        };
        us.iter()
            .map(|&u| {
                let (cv, cw, h, r) = self.at(u);
                let c0 = self.o + self.axis * u + self.v_axis * cv + self.w_axis * cw;
                let centers = if self.ncols == 1 {
                    vec![c0]
                } else {
                    let n = (self.ncols - 1) as f32;
                    (0..self.ncols)
                        .map(|j| c0 + self.v_axis * (h * (2.0 * j as f32 / n - 1.0)))
                        .collect()
                };
                Row { centers, radius: r }
            })
            .collect()
    }
}

struct Row {
    centers: Vec<Vec3>,
    radius: f32,
}

/// A ratio of lengths snapped to 1/1024, before it is rounded to a count: the same character in
/// metres and in centimetres differs in the last float bits, which must not change the count when
/// the ratio lands on a rounding boundary.
fn steps(ratio: f32) -> f32 {
    (ratio * 1024.0).round() / 1024.0
}

/// Names of finger bones in Mixamo and other common rigs.
fn is_finger(base_name: &str) -> bool {
    let n = base_name.to_ascii_lowercase();
    ["thumb", "index", "middle", "ring", "pinky", "finger"]
        .iter()
        .any(|f| n.contains(f))
}

/// The skin joint with the largest weight of vertex `v` (`u32::MAX` if none is usable).
fn dominant_joint(mesh: &crate::rig::SkinnedMesh, v: usize, nj: usize) -> u32 {
    let mut best = (0.0f32, u32::MAX);
    let sets = [
        (&mesh.joints, &mesh.weights),
        (&mesh.joints1, &mesh.weights1),
    ];
    for (joints, weights) in sets {
        if let (Some(j), Some(w)) = (joints.get(v), weights.get(v)) {
            for i in 0..4 {
                if w[i] > best.0 && (j[i] as usize) < nj {
                    best = (w[i], j[i] as u32);
                }
            }
        }
    }
    best.1
}

/// The direction of largest spread of `pts` and the two largest variances (power iteration on
/// the covariance, then on the covariance with that direction removed).
fn principal_axes(pts: &[Vec3], centroid: Vec3) -> (Vec3, f32, f32) {
    let mut cov = Mat3::ZERO;
    for p in pts {
        let d = *p - centroid;
        cov += Mat3::from_cols(d * d.x, d * d.y, d * d.z);
    }
    cov *= 1.0 / pts.len().max(1) as f32;
    let power = |m: &Mat3| -> (Vec3, f32) {
        let mut x = Vec3::new(0.8, 0.5, 0.3).normalize();
        for _ in 0..64 {
            let y = *m * x;
            if y.length_squared() < 1e-30 {
                return (x, 0.0);
            }
            x = y.normalize();
        }
        (x, x.dot(*m * x))
    };
    let (v1, l1) = power(&cov);
    let deflated = cov - Mat3::from_cols(v1 * v1.x, v1 * v1.y, v1 * v1.z) * l1;
    let (_, l2) = power(&deflated);
    let v1 = if v1.is_finite() && l1 > 0.0 {
        v1
    } else {
        Vec3::Y
    };
    (v1, l1, l2.max(0.0))
}

/// The `p`-quantile (0..1) of `values` (reorders them). 0 for an empty slice.
fn percentile(values: &mut [f32], p: f32) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    let i =
        ((p.clamp(0.0, 1.0) * (values.len() - 1) as f32).round() as usize).min(values.len() - 1);
    *values.select_nth_unstable_by(i, |a, b| a.total_cmp(b)).1
}

/// One refinement pass: every vertex is given to the sphere nearest along its closest capsule;
/// each sphere then moves its radius by the `p`-quantile of its vertices' signed distances, so
/// that a share `p` of them ends up inside.
fn refine_radii(px: &mut Proxies, positions: &[Vec3], used: &[u32], p: f32, band: &[f32]) {
    let n = px.joint.len();
    if n == 0 || px.capsules.is_empty() {
        return;
    }
    let hulls = Hulls::new(&px.center_in_bind, &px.radius, &px.capsules);
    let mut per_sphere: Vec<Vec<f32>> = vec![Vec::new(); n];
    let mut hint = 0;
    for &v in used {
        let x = positions[v as usize];
        if !x.is_finite() {
            continue;
        }
        let (d, t, i) = hulls.nearest(x, hint);
        hint = i;
        let [a, b] = px.capsules[i];
        per_sphere[if t < 0.5 { a } else { b } as usize].push(d);
    }
    for (i, ds) in per_sphere.iter_mut().enumerate() {
        if ds.len() >= 3 {
            // The largest group of signed distances within one band (two pointers over the
            // sorted list); the percentile is taken in that group.
            let w = band.get(i).copied().unwrap_or(0.0);
            let group: &mut [f32] = if w > 0.0 {
                ds.sort_unstable_by(|a, b| a.total_cmp(b));
                let (mut best, mut lo) = ((0usize, ds.len()), 0usize);
                let mut best_n = 0;
                for hi in 0..ds.len() {
                    while ds[hi] - ds[lo] > w {
                        lo += 1;
                    }
                    // Ties go to the outer group: a little outside beats sinking into the skin.
                    if hi + 1 - lo >= best_n {
                        best_n = hi + 1 - lo;
                        best = (lo, hi + 1);
                    }
                }
                &mut ds[best.0..best.1]
            } else {
                &mut ds[..]
            };
            let dr = percentile(group, p);
            px.radius[i] = (px.radius[i] + dr).max(0.05 * px.radius[i]);
        }
    }
}

/// Colliders unpacked for many distance queries, each with a bounding sphere so that most can be
/// skipped: the signed distance to a hull is at least |x − mid| − bound.
struct Hulls {
    ends: Vec<(Vec3, f32, Vec3, f32)>,
    mid: Vec<Vec3>,
    bound: Vec<f32>,
}

impl Hulls {
    fn new(center: &[Vec3], radius: &[f32], capsules: &[[u32; 2]]) -> Self {
        let mut ends = Vec::with_capacity(capsules.len());
        let mut mid = Vec::with_capacity(capsules.len());
        let mut bound = Vec::with_capacity(capsules.len());
        for &[a, b] in capsules {
            let (a, b) = (a as usize, b as usize);
            let (c1, r1, c2, r2) = (center[a], radius[a], center[b], radius[b]);
            ends.push((c1, r1, c2, r2));
            mid.push(0.5 * (c1 + c2));
            bound.push(0.5 * (c2 - c1).length() + r1.max(r2));
        }
        Self { ends, mid, bound }
    }

    /// (signed distance, t, collider) of the collider with the smallest signed distance to `x`;
    /// `hint` is tried first (the answer for a nearby point tightens the bound at once).
    fn nearest(&self, x: Vec3, hint: usize) -> (f32, f32, usize) {
        let eval = |i: usize| {
            let (c1, r1, c2, r2) = self.ends[i];
            tapered_capsule_sdf_t(x, c1, r1, c2, r2)
        };
        let hint = hint.min(self.ends.len().saturating_sub(1));
        let (d0, t0) = eval(hint);
        let mut best = (d0, t0, hint);
        for i in 0..self.ends.len() {
            if i == hint || (x - self.mid[i]).length() - self.bound[i] >= best.0 {
                continue;
            }
            let (d, t) = eval(i);
            if d < best.0 {
                best = (d, t, i);
            }
        }
        best
    }
}

// ---------------------------------------------------------------------------------------------
// Geometry
// ---------------------------------------------------------------------------------------------

/// Signed distance from `p` to the tapered capsule over spheres `(c1, r1)` and `(c2, r2)` — their
/// convex hull (PHYSICS.md §2): negative inside, exact inside and outside.
pub fn tapered_capsule_sdf(p: Vec3, c1: Vec3, r1: f32, c2: Vec3, r2: f32) -> f32 {
    tapered_capsule_sdf_t(p, c1, r1, c2, r2).0
}

/// [`tapered_capsule_sdf`] and `t` in [0, 1]: where along the capsule the closest surface point
/// lies (0 on sphere 1's cap, 1 on sphere 2's, in between on the cone).
pub fn tapered_capsule_sdf_t(p: Vec3, c1: Vec3, r1: f32, c2: Vec3, r2: f32) -> (f32, f32) {
    let c = tapered_capsule_closest(p.into(), c1.into(), r1, c2.into(), r2);
    (c.distance, c.t)
}

/// The closest point of a tapered capsule to a query point: see [`tapered_capsule_closest`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapsuleClosest {
    /// Signed distance from the surface (negative inside), in the units of the inputs.
    pub distance: f32,
    /// Outward unit normal at the closest surface point.
    pub normal: Vec3A,
    /// Axis parameter in [0, 1] of the sphere centre the closest point belongs to (0 = c1).
    pub t: f32,
}

/// Any unit vector perpendicular to `a` (for a point exactly on an axis).
fn any_perpendicular(a: Vec3A) -> Vec3A {
    let o = if a.x.abs() < 0.9 { Vec3A::X } else { Vec3A::Y };
    a.cross(o).normalize()
}

/// Signed distance, outward normal and axis parameter from `x` to the convex hull of spheres
/// (c1, r1) and (c2, r2): the one implementation of the tapered capsule (PHYSICS.md §2) that the
/// fitting, the quality measure and the cloth's collisions all use.
///
/// Derivation: the hull is the union of the spheres centred at c(s) = c1 + s â, s ∈ [0, L], of
/// radius r(s) = r1 + (r2 − r1) s / L. In the plane of the axis and x, with axial coordinate
/// a = (x − c1)·â and radial distance ρ, the distance to the sphere at s is
/// f(s) = √((a − s)² + ρ²) − r(s), convex in s. f'(s) = 0 gives (a − s)/√(…) = sin α with
/// sin α = (r1 − r2)/L, i.e. s* = a − ρ tan α (the cone's side is tangent to both spheres);
/// clamping s* to [0, L] gives the minimum. When one sphere contains the other (|r1 − r2| ≥ L)
/// the hull is that sphere.
#[inline]
pub fn tapered_capsule_closest(x: Vec3A, c1: Vec3A, r1: f32, c2: Vec3A, r2: f32) -> CapsuleClosest {
    let axis = c2 - c1;
    let l = axis.length();
    if l <= (r1 - r2).abs() || l < 1e-9 {
        // Degenerate: the bigger sphere is the hull.
        let (c, r, t) = if r1 >= r2 {
            (c1, r1, 0.0)
        } else {
            (c2, r2, 1.0)
        };
        let d = x - c;
        let dl = d.length();
        let normal = if dl > 1e-12 { d / dl } else { Vec3A::Y };
        return CapsuleClosest {
            distance: dl - r,
            normal,
            t,
        };
    }
    let a_hat = axis / l;
    let d = x - c1;
    let a = d.dot(a_hat);
    let radial = d - a_hat * a;
    let rho = radial.length();
    let sin_a = (r1 - r2) / l;
    let tan_a = sin_a / (1.0 - sin_a * sin_a).sqrt();
    let s = (a - rho * tan_a).clamp(0.0, l);
    let t = s / l;
    let centre = c1 + a_hat * s;
    let r = r1 + (r2 - r1) * t;
    let to_x = x - centre;
    let dl = to_x.length();
    let normal = if dl > 1e-12 {
        to_x / dl
    } else if rho > 1e-12 {
        radial / rho
    } else {
        any_perpendicular(a_hat)
    };
    CapsuleClosest {
        distance: dl - r,
        normal,
        t,
    }
}

/// Signed distance from `p` to the union of the capsules of `frame` (minimum over colliders):
/// exact outside; inside, the depth in the deepest single collider (a lower bound on the depth
/// in the union).
pub fn union_sdf(p: Vec3, frame: &ProxyFrame, capsules: &[[u32; 2]]) -> f32 {
    let mut best = f32::INFINITY;
    for &[a, b] in capsules {
        let (a, b) = (a as usize, b as usize);
        let d = tapered_capsule_sdf(
            p,
            frame.center[a],
            frame.radius[a],
            frame.center[b],
            frame.radius[b],
        );
        best = best.min(d);
    }
    best
}

// ---------------------------------------------------------------------------------------------
// Quality
// ---------------------------------------------------------------------------------------------

/// How well the proxies match the skin, in world space (metres), weighted by surface area.
#[derive(Clone, Debug, PartialEq)]
pub struct ProxyQuality {
    pub spheres: usize,
    pub capsules: usize,
    /// Vertices measured (those with a non-zero weight).
    pub vertices: usize,
    /// Vertices left out (skipped bones, hidden inside another part, zero weight).
    pub ignored: usize,
    /// Of those, vertices hidden inside another closed part of the skin ([`quality_at_bind`]
    /// counts them; [`quality`] does not know and reports 0).
    pub hidden: usize,
    /// Share of the skin surface inside the proxy union (signed distance ≤ 0.5 mm), 0..1.
    pub coverage: f32,
    /// Share of the skin surface within `tolerance` of a proxy surface (|signed distance|), 0..1.
    pub within: f32,
    /// The tolerance of `within`, metres.
    pub tolerance: f32,
    /// Mean |signed distance| from skin to proxy surface, metres.
    pub mean_gap: f32,
    /// 95th percentile of |signed distance|, metres.
    pub p95_gap: f32,
    /// Largest distance of a skin vertex outside the proxies, metres.
    pub max_outside: f32,
    /// Largest depth of a skin vertex inside the proxies, metres.
    pub max_inside: f32,
}

/// Tolerance of [`ProxyQuality::within`]: metres, 0.015 (the target: ≥ 95 % of the body
/// surface within 1.5 cm of a proxy surface).
pub const QUALITY_TOLERANCE: f32 = 0.015;

/// Measures proxies posed as `frame` against skin vertices `x_world` (same space, metres), each
/// weighted by `weight` (its share of surface area; 0 leaves it out; an empty slice weighs all
/// vertices alike). Inside a collider the gap is the depth in the deepest one (see [`union_sdf`]).
pub fn quality(
    frame: &ProxyFrame,
    capsules: &[[u32; 2]],
    x_world: &[Vec3],
    weight: &[f32],
) -> ProxyQuality {
    let mut gaps: Vec<(f32, f32)> = Vec::with_capacity(x_world.len());
    let mut ignored = 0;
    let hulls = Hulls::new(&frame.center, &frame.radius, capsules);
    let mut hint = 0;
    for (i, &x) in x_world.iter().enumerate() {
        let w = if weight.is_empty() {
            1.0
        } else {
            weight.get(i).copied().unwrap_or(0.0)
        };
        if w <= 0.0 || !x.is_finite() {
            ignored += 1;
            continue;
        }
        let d = if capsules.is_empty() {
            f32::INFINITY
        } else {
            let (d, _, i) = hulls.nearest(x, hint);
            hint = i;
            d
        };
        gaps.push((d, w));
    }
    let total: f32 = (0.0 + gaps.iter().map(|g| g.1).sum::<f32>()).max(f32::MIN_POSITIVE);
    let share =
        // `+ 0.0`: an empty float sum is −0.0, which would print as "-0.0 %".
        |f: &dyn Fn(f32) -> bool| (0.0 + gaps.iter().filter(|g| f(g.0)).map(|g| g.1).sum::<f32>()) / total;
    let coverage = share(&|d| d <= 5e-4);
    let within = share(&|d| d.abs() <= QUALITY_TOLERANCE);
    let mean_gap = (0.0 + gaps.iter().map(|g| g.0.abs() * g.1).sum::<f32>()) / total;
    let mut sorted: Vec<(f32, f32)> = gaps.iter().map(|g| (g.0.abs(), g.1)).collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut acc = 0.0;
    let mut p95_gap = sorted.last().map_or(0.0, |s| s.0);
    for s in &sorted {
        acc += s.1;
        if acc >= 0.95 * total {
            p95_gap = s.0;
            break;
        }
    }
    ProxyQuality {
        spheres: frame.center.len(),
        capsules: capsules.len(),
        vertices: gaps.len(),
        ignored,
        hidden: 0,
        coverage,
        within,
        tolerance: QUALITY_TOLERANCE,
        mean_gap,
        p95_gap,
        max_outside: gaps.iter().map(|g| g.0).fold(0.0, f32::max),
        max_inside: gaps.iter().map(|g| -g.0).fold(0.0, f32::max),
    }
}

impl Proxies {
    /// Per-vertex surface weights for [`quality`], for the vertices of every mesh bound to
    /// `rig.skins[skin]` in mesh order (the order the skinning stage writes them): a third of
    /// the area of each triangle around the vertex, in bind units², and 0 for vertices of skipped
    /// bones and for vertices hidden inside another closed part of the skin (no body surface, see
    /// [`crate::body::surface`]). A mesh without triangles weighs its vertices alike.
    pub fn surface_weights(&self, rig: &Rig, skin: usize) -> Vec<f32> {
        let nj = rig.skins.get(skin).map_or(0, |s| s.joints.len());
        let meshes: Vec<&SkinnedMesh> = rig
            .meshes
            .iter()
            .filter(|m| m.skin == Some(skin as u32))
            .collect();
        let hidden = hidden_vertices(&meshes);
        let mut out = Vec::new();
        for mesh in meshes {
            let base = out.len();
            out.resize(base + mesh.positions.len(), 0.0);
            let mut any = false;
            for t in mesh.indices.chunks_exact(3) {
                let (i, j, k) = (t[0] as usize, t[1] as usize, t[2] as usize);
                if i.max(j).max(k) >= mesh.positions.len() {
                    continue;
                }
                let (a, b, c) = (mesh.positions[i], mesh.positions[j], mesh.positions[k]);
                let area = 0.5 * (b - a).cross(c - a).length();
                if area.is_finite() {
                    for v in [i, j, k] {
                        out[base + v] += area / 3.0;
                    }
                    any = true;
                }
            }
            if !any {
                out[base..].iter_mut().for_each(|w| *w = 1.0);
            }
            for v in 0..mesh.positions.len() {
                let d = dominant_joint(mesh, v, nj);
                if d as usize >= nj || self.skipped_joints.contains(&d) || hidden[base + v] {
                    out[base + v] = 0.0;
                }
            }
        }
        out
    }
}

/// The skin matrices at rest and every skin vertex of `rig.skins[skin]` (mesh order) placed in
/// world space with them (linear blend); NaN for a vertex without a usable weight.
fn rest_skin(rig: &Rig, skin: usize) -> (Vec<Mat4>, Vec<Vec3>) {
    let mut wfb = Vec::new();
    if let Some(s) = rig.skins.get(skin) {
        world_from_bind(&rig.skeleton.rest_world(), s, &mut wfb);
    }
    let mut x = Vec::new();
    for mesh in rig.meshes.iter().filter(|m| m.skin == Some(skin as u32)) {
        for v in 0..mesh.positions.len() {
            let p = mesh.positions[v];
            let mut acc = Vec3::ZERO;
            let mut wsum = 0.0;
            let sets = [
                (&mesh.joints, &mesh.weights),
                (&mesh.joints1, &mesh.weights1),
            ];
            for (joints, weights) in sets {
                if let (Some(j), Some(w)) = (joints.get(v), weights.get(v)) {
                    for i in 0..4 {
                        if let Some(m) = wfb.get(j[i] as usize) {
                            acc += w[i] * m.transform_point3(p);
                            wsum += w[i];
                        }
                    }
                }
            }
            x.push(if wsum > 0.0 { acc / wsum } else { Vec3::NAN });
        }
    }
    (wfb, x)
}

/// [`quality`] at the bind pose: the skin vertices are placed in world space with the rest skin
/// matrices (linear blend), the proxies with [`Proxies::update`].
pub fn quality_at_bind(rig: &Rig, skin: usize, proxies: &Proxies) -> ProxyQuality {
    let (wfb, x) = rest_skin(rig, skin);
    let mut frame = ProxyFrame::default();
    proxies.update(&wfb, &mut frame);
    let weights = proxies.surface_weights(rig, skin);
    let mut q = quality(&frame, &proxies.capsules, &x, &weights);
    let meshes: Vec<&SkinnedMesh> = rig
        .meshes
        .iter()
        .filter(|m| m.skin == Some(skin as u32))
        .collect();
    q.hidden = hidden_vertices(&meshes).iter().filter(|&&h| h).count();
    q
}

/// How well the proxies fit the skin that one joint dominates, at the bind pose (the
/// [`quality_at_bind`] measure split by each vertex's dominant joint).
#[derive(Clone, Debug, PartialEq)]
pub struct JointQuality {
    /// Skin joint (index into `Skin::joints`).
    pub joint: u32,
    /// The joint's node name.
    pub name: String,
    /// Its share of the measured skin surface, 0..1.
    pub area: f32,
    /// Share of its surface within [`QUALITY_TOLERANCE`] of a proxy surface, 0..1.
    pub within: f32,
    /// Share of its surface deeper than the tolerance inside a proxy (proxies sticking out).
    pub deep: f32,
    /// Share of its surface farther than the tolerance outside every proxy (proxies too thin).
    pub far: f32,
    /// Spheres that follow this joint.
    pub spheres: usize,
}

/// [`quality_at_bind`] per dominant joint, for every joint that dominates measured skin, worst
/// fit (smallest `within`) first.
pub fn quality_by_joint(rig: &Rig, skin: usize, proxies: &Proxies) -> Vec<JointQuality> {
    let Some(s) = rig.skins.get(skin) else {
        return Vec::new();
    };
    let nj = s.joints.len();
    let (wfb, x) = rest_skin(rig, skin);
    let mut frame = ProxyFrame::default();
    proxies.update(&wfb, &mut frame);
    let weights = proxies.surface_weights(rig, skin);
    let hulls = Hulls::new(&frame.center, &frame.radius, &proxies.capsules);
    // Per joint: area, within, deep, far.
    let mut acc = vec![[0.0f64; 4]; nj];
    let mut v = 0;
    let mut hint = 0;
    for mesh in rig.meshes.iter().filter(|m| m.skin == Some(skin as u32)) {
        for i in 0..mesh.positions.len() {
            let w = weights.get(v).copied().unwrap_or(0.0);
            let d = dominant_joint(mesh, i, nj) as usize;
            if w > 0.0 && d < nj && x[v].is_finite() && !proxies.capsules.is_empty() {
                let (g, _, c) = hulls.nearest(x[v], hint);
                hint = c;
                let slot = if g.abs() <= QUALITY_TOLERANCE {
                    1
                } else if g < 0.0 {
                    2
                } else {
                    3
                };
                acc[d][0] += w as f64;
                acc[d][slot] += w as f64;
            }
            v += 1;
        }
    }
    let total: f64 = acc.iter().map(|a| a[0]).sum::<f64>().max(f64::MIN_POSITIVE);
    let mut out: Vec<JointQuality> = (0..nj)
        .filter(|&k| acc[k][0] > 0.0)
        .map(|k| JointQuality {
            joint: k as u32,
            name: rig.skeleton.names[s.joints[k] as usize].clone(),
            area: (acc[k][0] / total) as f32,
            within: (acc[k][1] / acc[k][0]) as f32,
            deep: (acc[k][2] / acc[k][0]) as f32,
            far: (acc[k][3] / acc[k][0]) as f32,
            spheres: proxies.joint.iter().filter(|&&j| j as usize == k).count(),
        })
        .collect();
    out.sort_by(|a, b| a.within.total_cmp(&b.within).then(a.joint.cmp(&b.joint)));
    out
}

// ---------------------------------------------------------------------------------------------
// Cover phase
// ---------------------------------------------------------------------------------------------

/// Smallest medial sphere the cover phase adds, metres: a smaller "medial" ball is the noise of
/// the vertex normals (a ball tangent at p that touches a neighbour a few mm away on a flat
/// patch), and too small to keep cloth out.
const COVER_MIN_RADIUS: f32 = 0.004;
/// Largest medial sphere, metres (a ball inside an open mesh has no far side to touch).
const COVER_MAX_RADIUS: f32 = 0.5;
/// Most rounds of the cover phase (each shrinks the bulging spheres, then adds medial ones).
const COVER_ROUNDS: usize = 8;

/// Radius of the largest ball tangent to the surface at `p` (outward unit normal `n`, centre
/// `p − r n`) that contains none of `samples`: the shrinking-ball medial point of Ma, Bae & Choi
/// (2012), "3D medial axis point approximation using nearest neighbors and the normal field",
/// solved in closed form. Sample q is inside the ball iff |q − p|² + 2r (q − p)·n < 0, so only
/// samples behind the tangent plane ((p − q)·n > 0) bound it, at r = |p − q|² / (2 (p − q)·n).
/// Samples within 0.1 mm of `p` (the same point split at a seam) are ignored.
fn shrinking_ball(p: Vec3, n: Vec3, samples: &[Vec3]) -> f32 {
    let mut r = f32::INFINITY;
    for &q in samples {
        let d = p - q;
        let dn = d.dot(n);
        let l2 = d.length_squared();
        if dn > 0.0 && l2 > 1e-8 {
            r = r.min(l2 / (2.0 * dn));
        }
    }
    r
}

impl BindFit<'_> {
    /// The cover phase of [`Proxies::fit`], at the rest pose in world space (the space of
    /// [`quality_at_bind`], so that the target is met exactly as it is reported). While the fit
    /// is below `opts.cover_target`, in rounds:
    /// 1. every sphere that the skin lies deeper than the tolerance inside (a sphere sticking
    ///    out of the skin: cloth would float on it) shrinks by the 90th percentile of that excess
    ///    depth (at most half its radius per round);
    /// 2. greedily, largest skin area first, every vertex still farther than the tolerance
    ///    outside the proxies gets a medial sphere (see [`shrinking_ball`]) tangent to the skin
    ///    there, following the vertex's dominant joint; a medial ball contains no skin sample, so
    ///    it cannot stick out. The vertices it brings within the tolerance need no ball of their
    ///    own.
    fn cover(&self, rig: &Rig, skin: usize, px: &mut Proxies, opts: &ProxyOptions) {
        if opts.cover_target.is_nan() || opts.cover_target <= 0.0 || px.capsules.is_empty() {
            return;
        }
        let nj = self.skin.joints.len();
        let tol = QUALITY_TOLERANCE;
        let (wfb, x) = rest_skin(rig, skin);
        if wfb.len() != nj || x.len() != self.positions.len() {
            return;
        }
        let weights = px.surface_weights(rig, skin);
        let used: Vec<usize> = (0..x.len())
            .filter(|&v| weights[v] > 0.0 && x[v].is_finite() && (self.dominant[v] as usize) < nj)
            .collect();
        let total: f32 = used.iter().map(|&v| weights[v]).sum();
        if total <= 0.0 {
            return;
        }
        // Outward unit normals at rest, and the samples a medial ball must not contain: the
        // measured vertices and the centroids of their triangles (a low-poly figure's faces lie
        // far from its vertices).
        let mut normals = vec![Vec3::ZERO; x.len()];
        let mut samples: Vec<Vec3> = used.iter().map(|&v| x[v]).collect();
        let mut base = 0;
        for mesh in rig.meshes.iter().filter(|m| m.skin == Some(skin as u32)) {
            for v in 0..mesh.positions.len() {
                let d = self.dominant[base + v] as usize;
                if let (Some(n), Some(m)) = (mesh.normals.get(v), wfb.get(d)) {
                    normals[base + v] = m.transform_vector3(*n).normalize_or_zero();
                }
            }
            for t in mesh.indices.chunks_exact(3) {
                let [a, b, c] = [t[0], t[1], t[2]].map(|i| base + i as usize);
                if a.max(b).max(c) < x.len() && [a, b, c].iter().all(|&i| weights[i] > 0.0) {
                    let g = (x[a] + x[b] + x[c]) / 3.0;
                    if g.is_finite() {
                        samples.push(g);
                    }
                }
            }
            base += mesh.positions.len();
        }

        let mut frame = ProxyFrame::default();
        let mut gap = vec![0.0f32; x.len()];
        let mut sphere_of = vec![0u32; x.len()];
        let mut added = 0;
        let measure =
            |px: &Proxies, frame: &mut ProxyFrame, gap: &mut [f32], sphere_of: &mut [u32]| -> f32 {
                px.update(&wfb, frame);
                let hulls = Hulls::new(&frame.center, &frame.radius, &px.capsules);
                let mut hint = 0;
                let mut within = 0.0;
                for &v in &used {
                    let (d, t, i) = hulls.nearest(x[v], hint);
                    hint = i;
                    gap[v] = d;
                    let [a, b] = px.capsules[i];
                    sphere_of[v] = if t < 0.5 { a } else { b };
                    if d.abs() <= tol {
                        within += weights[v];
                    }
                }
                within / total
            };
        for _ in 0..COVER_ROUNDS {
            if measure(px, &mut frame, &mut gap, &mut sphere_of) >= opts.cover_target {
                return;
            }
            // 1. Bulges.
            let mut excess: Vec<Vec<f32>> = vec![Vec::new(); px.joint.len()];
            for &v in &used {
                if gap[v] < -tol {
                    excess[sphere_of[v] as usize].push(-gap[v] - tol);
                }
            }
            for (s, e) in excess.iter_mut().enumerate() {
                if e.is_empty() {
                    continue;
                }
                let r = frame.radius[s];
                let shrink = (percentile(e, 0.9) + 0.25 * tol).min(0.5 * r);
                let world_per_bind = r / px.radius[s].max(f32::MIN_POSITIVE);
                px.radius[s] = (r - shrink).max(COVER_MIN_RADIUS.min(r)) / world_per_bind;
            }
            if measure(px, &mut frame, &mut gap, &mut sphere_of) >= opts.cover_target {
                return;
            }
            // 2. Medial spheres where the skin is far outside.
            let mut cand: Vec<usize> = used
                .iter()
                .copied()
                .filter(|&v| gap[v] > tol && normals[v] != Vec3::ZERO)
                .collect();
            cand.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
            let mut done = vec![false; x.len()];
            for &p in &cand {
                if done[p] {
                    continue;
                }
                done[p] = true;
                if added >= opts.max_cover_spheres {
                    return;
                }
                let r = shrinking_ball(x[p], normals[p], &samples);
                if !(COVER_MIN_RADIUS..=COVER_MAX_RADIUS).contains(&r) {
                    continue;
                }
                let c = x[p] - normals[p] * r;
                let k = self.dominant[p] as usize;
                let id = px.joint.len() as u32;
                px.joint.push(k as u32);
                px.center_in_bind
                    .push(self.bind_from_world[k].transform_point3(c));
                px.radius.push(r / self.metres_per_unit[k]);
                px.capsules.push([id, id]);
                added += 1;
                for &q in &cand {
                    if !done[q] && ((x[q] - c).length() - r).abs() <= tol {
                        done[q] = true;
                    }
                }
            }
        }
    }
}

impl fmt::Display for ProxyQuality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "proxies: {} spheres, {} capsules",
            self.spheres, self.capsules
        )?;
        write!(f, "skin: {} vertices measured", self.vertices)?;
        if self.ignored > 0 {
            write!(
                f,
                " ({} left out: {} hidden inside another part, the rest of skipped bones)",
                self.ignored, self.hidden
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "coverage: {:.1} % of the skin surface inside the proxies",
            100.0 * self.coverage
        )?;
        writeln!(
            f,
            "fit: {:.1} % of the skin surface within {:.1} cm of a proxy surface (target ≥ 95 %)",
            100.0 * self.within,
            100.0 * self.tolerance
        )?;
        write!(
            f,
            "gap: mean {:.1} mm, 95th percentile {:.1} mm, max outside {:.1} mm, max inside {:.1} mm",
            1000.0 * self.mean_gap,
            1000.0 * self.p95_gap,
            1000.0 * self.max_outside,
            1000.0 * self.max_inside
        )
    }
}
