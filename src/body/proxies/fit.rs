//! Fitting proxies at the bind pose (the method is in the module docs of `proxies`): the data a
//! fit needs ([`BindFit`]), which bones keep proxies (fingers, tiny bones and bones with few
//! vertices merge into their parent), their rows of spheres joined by tapered capsules with
//! each joint closed, and the radii refined against the whole union.

use super::capsule::Hulls;
use super::frame::{max_axis_scale, world_from_bind};
use super::slices::BoneSlices;
use super::{BodyError, Proxies, ProxyOptions};
use crate::anim::{Skeleton, Skin};
use crate::body::surface::hidden_vertices;
use crate::math::{Mat4, Vec3};
use crate::rig::{Rig, SkinnedMesh};

/// The bind-pose data a fit needs, gathered once.
pub(super) struct BindFit<'a> {
    skeleton: &'a Skeleton,
    pub(super) skin: &'a Skin,
    /// Bind-space position of every skin joint.
    pub(super) joint_pos: Vec<Vec3>,
    /// `bind_from_world` at rest, per joint (to bring child nodes into bind space).
    pub(super) bind_from_world: Vec<Mat4>,
    /// Metres per bind unit, per joint (1 or 0.01 for Mixamo files).
    pub(super) metres_per_unit: Vec<f32>,
    /// Parent skin joint of each skin joint (nearest ancestor node that is a joint of this skin).
    parent: Vec<Option<u32>>,
    /// Node index → skin joint.
    joint_of_node: Vec<Option<u32>>,
    /// Children of every node.
    children: Vec<Vec<u32>>,
    /// Descendant count of every node (to find the chain that continues from a root).
    subtree: Vec<u32>,
    /// Bind-space positions of all vertices of meshes bound to this skin.
    pub(super) positions: Vec<Vec3>,
    /// Dominant skin joint per vertex (`u32::MAX` when it has no usable weight).
    pub(super) dominant: Vec<u32>,
}

impl<'a> BindFit<'a> {
    pub(super) fn new(rig: &'a Rig, skin_index: usize) -> Result<Self, BodyError> {
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
        // Nor are the vertices of open sheets: a sheet has no volume to bound (`sheets.rs`).
        let sheet = super::sheets::sheet_vertices(rig, skin_index);
        for mesh in &meshes {
            for v in 0..mesh.positions.len() {
                let d = if hidden[positions.len()] || sheet[positions.len()] {
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

    pub(super) fn run(&self, opts: &ProxyOptions) -> Proxies {
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
}

/// Names of finger bones in Mixamo and other common rigs.
fn is_finger(base_name: &str) -> bool {
    let n = base_name.to_ascii_lowercase();
    ["thumb", "index", "middle", "ring", "pinky", "finger"]
        .iter()
        .any(|f| n.contains(f))
}

/// The skin joint with the largest weight of vertex `v` (`u32::MAX` if none is usable).
pub(super) fn dominant_joint(mesh: &crate::rig::SkinnedMesh, v: usize, nj: usize) -> u32 {
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

/// The `p`-quantile (0..1) of `values` (reorders them). 0 for an empty slice.
pub(super) fn percentile(values: &mut [f32], p: f32) -> f32 {
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

impl BindFit<'_> {
    /// The bound phase of [`Proxies::fit`] (after the fit and the cover). The fit puts each
    /// sphere's surface at a percentile of its skin, so part of the skin stands out of the
    /// proxies and cloth resting on them sinks into the skin people see (up to 2 cm on the
    /// built-in ninja's shins and back). Each sphere is enlarged until the
    /// [`ProxyOptions::bound_share`]-quantile of how far the vertices nearest to it stand out is
    /// within [`ProxyOptions::bound_allowance`], growing at most by
    /// [`ProxyOptions::bound_max_growth`]; spheres never shrink here.
    ///
    /// Growing a sphere evenly to reach skin that stands out on one side (a calf, a shoulder
    /// blade, a trouser cuff past the end of the shin's round cap) would lift its surface off
    /// the skin everywhere else, so the centre also moves towards the skin that stands out
    /// (ū, the excess-weighted mean direction from the centre to those vertices), by the
    /// share σ ∈ {0, 0.1, …, 1} of the needed growth that leaves the smallest growth: moving
    /// the centre by δ along ū changes a vertex's distance by about −δ ū·n, n the direction from
    /// the centre to the vertex. (Moving only across the bone left the built-in ninja's ankle
    /// spheres 2 cm larger and the mean over-cover 1.9 mm higher.) Three passes, since a grown
    /// sphere takes vertices from its neighbours.
    pub(super) fn bound(&self, px: &mut Proxies, opts: &ProxyOptions) {
        let nj = self.skin.joints.len();
        let share = opts.bound_share;
        if !(share > 0.0) || px.capsules.is_empty() {
            return;
        }
        let skipped = |k: usize| px.skipped_joints.contains(&(k as u32));
        let used: Vec<u32> = (0..self.positions.len() as u32)
            .filter(|&v| {
                let d = self.dominant[v as usize] as usize;
                d < nj && !skipped(d) && self.positions[v as usize].is_finite()
            })
            .collect();
        let n = px.joint.len();
        let unit: Vec<f32> = (0..n)
            .map(|i| self.metres_per_unit[px.joint[i] as usize].max(1e-9))
            .collect();
        let start = px.radius.clone();
        let mut per_sphere: Vec<Vec<(f32, Vec3)>> = vec![Vec::new(); n];
        let mut scratch: Vec<f32> = Vec::new();
        for _ in 0..3 {
            let hulls = Hulls::new(&px.center_in_bind, &px.radius, &px.capsules);
            per_sphere.iter_mut().for_each(|p| p.clear());
            let mut hint = 0;
            for &v in &used {
                let x = self.positions[v as usize];
                let (d, t, i) = hulls.nearest(x, hint);
                hint = i;
                let [a, b] = px.capsules[i];
                let s = if t < 0.5 { a } else { b } as usize;
                let dir = (x - px.center_in_bind[s]).normalize_or_zero();
                per_sphere[s].push((d, dir));
            }
            let mut changed = false;
            for (i, vs) in per_sphere.iter().enumerate() {
                if vs.is_empty() {
                    continue;
                }
                let allow = opts.bound_allowance.max(0.0) / unit[i];
                let cap = start[i] + opts.bound_max_growth.max(0.0) / unit[i] - px.radius[i];
                scratch.clear();
                scratch.extend(vs.iter().map(|v| v.0 - allow));
                let g = percentile(&mut scratch, share);
                if g <= 0.0 || cap <= 0.0 {
                    continue;
                }
                // Where the skin stands out, weighted by how far.
                let pull: Vec3 = vs
                    .iter()
                    .filter(|v| v.0 > allow)
                    .map(|v| v.1 * (v.0 - allow))
                    .sum();
                let u = pull.normalize_or_zero();
                let mut best = (g, 0.0f32);
                if u != Vec3::ZERO {
                    for step in 1..=10 {
                        let shift = 0.1 * step as f32 * g;
                        scratch.clear();
                        scratch.extend(vs.iter().map(|v| v.0 - allow - shift * v.1.dot(u)));
                        let gs = percentile(&mut scratch, share).max(0.0);
                        if gs < best.0 - 1e-6 * g {
                            best = (gs, shift);
                        }
                    }
                }
                let (grow, shift) = best;
                // Within the growth cap, scaled down together.
                let k = if grow > cap { cap / grow } else { 1.0 };
                px.center_in_bind[i] += u * (shift * k);
                px.radius[i] += grow * k;
                changed = true;
            }
            if !changed {
                break;
            }
        }
    }
}
