//! "Is this point inside the visible skin, and how deep?" against a triangle soup (every mesh of
//! the character, skinned), fast enough to ask for every garment vertex at every frame.
//!
//! **Inside** is decided by the generalized winding number (Jacobson, Kavan & Sorkine-Hornung
//! 2013, "Robust inside-outside segmentation using generalized winding numbers"):
//! `w(q) = Σ_t Ω_t(q) / 4π`, the signed solid angles of all triangles seen from `q`. It is 1
//! inside and 0 outside a closed, outward-oriented mesh, and degrades gracefully on the meshes
//! real characters have: open seams, separate primitives (a robot's surface and its joints mesh),
//! hair cards, overlapping armour. A point is inside when `w ≥ 0.5`. The soup is summed as one:
//! where two closed meshes overlap (a joint mesh inside the surface, an arm pushed into the
//! torso) `w ≈ 2`, still inside, counted once.
//!
//! The sum is evaluated hierarchically (Barill, Dickson, Schmidt, Levin & Jacobson 2018, "Fast
//! winding numbers for soups and clouds"): a BVH over the triangles stores per node the
//! area-weighted normal sum `N = Σ a_t n_t` at the area-weighted centroid `p̃`; a node whose
//! triangles all lie within radius `r` of `p̃` and whose `p̃` is farther than `β r` from `q`
//! (β = 2, their default) contributes its dipole term `(p̃ − q)·N / (4π |p̃ − q|³)`; nearer nodes
//! are opened, and leaves near `q` sum exact solid angles (Van Oosterom & Strackee 1983:
//! `tan(Ω/2) = a·(b×c) / (|a||b||c| + (a·b)|c| + (b·c)|a| + (c·a)|b|)`).
//!
//! **Depth** is the distance to the nearest triangle of any mesh (the same BVH, nearest-first
//! with box-distance pruning; closest point on a triangle by Voronoi regions, Ericson 2005,
//! "Real-Time Collision Detection" §5.1.5).
//!
//! **Skin folding into itself** (an armpit with the arm down, the back of a bent knee, the groin
//! in a high kick: linear blend skinning pushes one surface through the other) makes a region
//! with `w ≈ 2` bounded by both surfaces, and a crease whose two sides touch closes a thin
//! pocket. Cloth there is inside (it is hidden by skin), and its depth is its distance to the
//! *nearest* surface of either side. So cloth pinched in a fold counts as inside, but only as
//! deep as the fold is thick around it: a fold rarely hides a vertex by more than a few
//! millimetres, and the 1 cm figure counts cloth that is really buried in the body.

use rayon::prelude::*;

use crate::math::Vec3;

const LEAF: usize = 8;
const BETA: f32 = 2.0;
const FOUR_PI: f64 = 4.0 * std::f64::consts::PI;

#[derive(Clone, Copy, Debug)]
struct Node {
    min: Vec3,
    max: Vec3,
    /// Area-weighted centroid of the node's triangles.
    center: Vec3,
    /// Σ of the triangles' area-weighted normals (½ (b − a) × (c − a)).
    dipole: Vec3,
    /// Upper bound of the distance from `center` to a vertex of the node's triangles.
    radius: f32,
    /// Total triangle area.
    area: f32,
    /// Leaf: first triangle (in `order`) and count; inner: `start` = right child, count 0
    /// (the left child is the next node).
    start: u32,
    count: u32,
}

/// A triangle soup with its hierarchy, built for one frame. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct SkinQuery {
    nodes: Vec<Node>,
    /// Triangles' corners, in BVH leaf order.
    tris: Vec<[Vec3; 3]>,
    /// Caller's triangle index of each entry of `tris`.
    ids: Vec<u32>,
    /// Whether each entry of `tris` is part of an open sheet (`crate::body::sheets`), which has
    /// no inside: it adds nothing to the winding number and is not the surface a depth is
    /// measured to. Empty when there is none.
    sheet: Vec<bool>,
    scratch: Vec<(u32, Vec3)>,
}

/// What [`SkinQuery::query`] finds about one point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inside {
    /// Generalized winding number (≈ 1 inside a closed mesh, 0 outside).
    pub winding: f32,
    /// Distance to the nearest triangle, m, when inside (`winding ≥ 0.5`); 0 outside.
    pub depth: f32,
}

impl Inside {
    pub fn is_inside(&self) -> bool {
        self.winding >= 0.5
    }
}

/// Signed solid angle of triangle `t` seen from `q`, over 4π (its winding number contribution).
pub fn triangle_winding(q: Vec3, t: &[Vec3; 3]) -> f64 {
    let a = (t[0] - q).as_dvec3();
    let b = (t[1] - q).as_dvec3();
    let c = (t[2] - q).as_dvec3();
    let (la, lb, lc) = (a.length(), b.length(), c.length());
    let det = a.dot(b.cross(c));
    let den = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
    2.0 * det.atan2(den) / FOUR_PI
}

/// Closest point to `p` on triangle `t` (Ericson 2005, §5.1.5): the skin collider's query
/// ([`crate::cloth::skin::closest_on_triangle`]), without its barycentric coordinates.
pub fn closest_on_triangle(p: Vec3, t: &[Vec3; 3]) -> Vec3 {
    let t = t.map(crate::math::Vec3A::from);
    crate::cloth::skin::closest_on_triangle(p.into(), &t)
        .0
        .into()
}

fn box_distance_squared(min: Vec3, max: Vec3, p: Vec3) -> f32 {
    let d = (min - p).max(p - max).max(Vec3::ZERO);
    d.length_squared()
}

impl SkinQuery {
    /// Builds the hierarchy over `triangles` (corner positions); a triangle's index in this
    /// slice is the one [`SkinQuery::nearest`] returns.
    pub fn new(triangles: &[[Vec3; 3]]) -> Self {
        let mut q = SkinQuery::default();
        q.rebuild(triangles.iter().copied());
        q
    }

    /// Builds the hierarchy over the triangles of several indexed meshes (`positions`,
    /// `indices` pairs), numbered in order (the first mesh's triangles first).
    pub fn from_meshes<'a>(meshes: impl IntoIterator<Item = (&'a [Vec3], &'a [u32])>) -> Self {
        let mut q = SkinQuery::default();
        q.rebuild_meshes(meshes);
        q
    }

    /// [`SkinQuery::from_meshes`] into reused buffers (once per frame).
    pub fn rebuild_meshes<'a>(
        &mut self,
        meshes: impl IntoIterator<Item = (&'a [Vec3], &'a [u32])>,
    ) {
        self.rebuild_meshes_with_sheets(meshes, &[]);
    }

    /// [`SkinQuery::rebuild_meshes`], the triangles flagged in `sheets` (in the same order;
    /// missing flags are `false`) being parts of open sheets ([`crate::body::sheet_triangles`]):
    /// they have no inside, so they add nothing to the winding number and a depth is not
    /// measured to them; [`SkinQuery::nearest`] still finds them.
    pub fn rebuild_meshes_with_sheets<'a>(
        &mut self,
        meshes: impl IntoIterator<Item = (&'a [Vec3], &'a [u32])>,
        sheets: &[bool],
    ) {
        let tris: Vec<[Vec3; 3]> = meshes
            .into_iter()
            .flat_map(|(p, idx)| {
                idx.chunks_exact(3).filter_map(move |t| {
                    Some([
                        *p.get(t[0] as usize)?,
                        *p.get(t[1] as usize)?,
                        *p.get(t[2] as usize)?,
                    ])
                })
            })
            .collect();
        self.rebuild(tris.into_iter());
        if sheets.iter().any(|&s| s) {
            self.sheet = self
                .ids
                .iter()
                .map(|&i| sheets.get(i as usize).copied().unwrap_or(false))
                .collect();
            self.fill_moments(0);
        }
    }

    fn rebuild(&mut self, triangles: impl Iterator<Item = [Vec3; 3]>) {
        self.tris.clear();
        self.ids.clear();
        self.sheet.clear();
        self.nodes.clear();
        for (i, t) in triangles.enumerate() {
            if t.iter().all(|p| p.is_finite()) {
                self.tris.push(t);
                self.ids.push(i as u32);
            }
        }
        let n = self.tris.len();
        if n == 0 {
            return;
        }
        let mut items: Vec<(u32, Vec3)> = std::mem::take(&mut self.scratch);
        items.clear();
        items.extend(
            self.tris
                .iter()
                .enumerate()
                .map(|(i, t)| (i as u32, (t[0] + t[1] + t[2]) / 3.0)),
        );
        self.nodes.reserve(2 * n / LEAF + 1);
        self.build_node(&mut items, 0);
        // Reorder the triangles into leaf order.
        let tris: Vec<[Vec3; 3]> = items.iter().map(|&(i, _)| self.tris[i as usize]).collect();
        let ids: Vec<u32> = items.iter().map(|&(i, _)| self.ids[i as usize]).collect();
        self.tris = tris;
        self.ids = ids;
        self.scratch = items;
        self.fill_moments(0);
    }

    /// Splits `items` (triangles `offset ..`) at the median of the centroids' widest axis.
    fn build_node(&mut self, items: &mut [(u32, Vec3)], offset: usize) -> usize {
        let me = self.nodes.len();
        self.nodes.push(Node {
            min: Vec3::ZERO,
            max: Vec3::ZERO,
            center: Vec3::ZERO,
            dipole: Vec3::ZERO,
            radius: 0.0,
            area: 0.0,
            start: offset as u32,
            count: items.len() as u32,
        });
        if items.len() > LEAF {
            let (lo, hi) = items.iter().fold(
                (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
                |(lo, hi), (_, c)| (lo.min(*c), hi.max(*c)),
            );
            let ext = hi - lo;
            let axis = if ext.x >= ext.y && ext.x >= ext.z {
                0
            } else if ext.y >= ext.z {
                1
            } else {
                2
            };
            let mid = items.len() / 2;
            items.select_nth_unstable_by(mid, |a, b| a.1[axis].total_cmp(&b.1[axis]));
            let (l, r) = items.split_at_mut(mid);
            self.build_node(l, offset);
            let right = self.build_node(r, offset + mid);
            self.nodes[me].start = right as u32;
            self.nodes[me].count = 0;
        }
        me
    }

    /// Bounds, area, area-weighted centroid, normal sum and radius of node `i` and its subtree,
    /// bottom-up: a leaf from its triangles, an inner node from its two children (the radius
    /// then an upper bound, `max(r_child + |c_child − c|)`, capped by the farthest box corner —
    /// a larger radius only opens more nodes, it never makes the sum less exact).
    fn fill_moments(&mut self, i: usize) {
        let node = self.nodes[i];
        if node.count > 0 {
            let s = node.start as usize;
            let tris = &self.tris[s..s + node.count as usize];
            let mut min = Vec3::splat(f32::INFINITY);
            let mut max = Vec3::splat(f32::NEG_INFINITY);
            let mut dipole = glam::DVec3::ZERO;
            let mut weighted = glam::DVec3::ZERO;
            let mut area = 0.0f64;
            let mut mean = glam::DVec3::ZERO;
            for (k, t) in tris.iter().enumerate() {
                for p in t {
                    min = min.min(*p);
                    max = max.max(*p);
                }
                let n = 0.5 * (t[1] - t[0]).as_dvec3().cross((t[2] - t[0]).as_dvec3());
                let a = n.length();
                let c = (t[0] + t[1] + t[2]).as_dvec3() / 3.0;
                if !self.is_sheet(s + k) {
                    dipole += n;
                }
                weighted += a * c;
                area += a;
                mean += c;
            }
            let center = if area > 0.0 {
                (weighted / area).as_vec3()
            } else {
                (mean / tris.len().max(1) as f64).as_vec3()
            };
            let radius = tris
                .iter()
                .flatten()
                .fold(0.0f32, |r, p| r.max(p.distance(center)));
            let n = &mut self.nodes[i];
            n.min = min;
            n.max = max;
            n.center = center;
            n.dipole = dipole.as_vec3();
            n.radius = radius;
            n.area = area as f32;
            return;
        }
        let (l, r) = (i + 1, node.start as usize);
        self.fill_moments(l);
        self.fill_moments(r);
        let (nl, nr) = (self.nodes[l], self.nodes[r]);
        let area = nl.area + nr.area;
        let center = if area > 0.0 {
            (nl.center * nl.area + nr.center * nr.area) / area
        } else {
            0.5 * (nl.center + nr.center)
        };
        let min = nl.min.min(nr.min);
        let max = nl.max.max(nr.max);
        let from_children =
            (nl.radius + nl.center.distance(center)).max(nr.radius + nr.center.distance(center));
        let from_box = (center - min).abs().max((max - center).abs()).length();
        let n = &mut self.nodes[i];
        n.min = min;
        n.max = max;
        n.center = center;
        n.dipole = nl.dipole + nr.dipole;
        n.radius = from_children.min(from_box);
        n.area = area;
    }

    /// Whether entry `k` of `tris` is part of an open sheet.
    fn is_sheet(&self, k: usize) -> bool {
        self.sheet.get(k).copied().unwrap_or(false)
    }

    /// Number of triangles.
    pub fn len(&self) -> usize {
        self.tris.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tris.is_empty()
    }

    /// Generalized winding number at `q` (fast approximation; exact near the surface).
    pub fn winding(&self, q: Vec3) -> f32 {
        if self.nodes.is_empty() || !q.is_finite() {
            return 0.0;
        }
        let mut stack = [0u32; 64];
        let mut top = 1;
        let mut w = 0.0f64;
        while top > 0 {
            top -= 1;
            let i = stack[top] as usize;
            let n = &self.nodes[i];
            let d = n.center - q;
            let dist2 = d.length_squared();
            if dist2 > (BETA * n.radius) * (BETA * n.radius) {
                let dd = d.as_dvec3();
                w += dd.dot(n.dipole.as_dvec3()) / (FOUR_PI * dist2 as f64 * dd.length());
            } else if n.count > 0 {
                let s = n.start as usize;
                for (k, t) in self.tris[s..s + n.count as usize].iter().enumerate() {
                    if !self.is_sheet(s + k) {
                        w += triangle_winding(q, t);
                    }
                }
            } else if top + 2 <= stack.len() {
                stack[top] = i as u32 + 1;
                stack[top + 1] = n.start;
                top += 2;
            } else {
                // Deeper than any median-split tree gets: sum the subtree exactly.
                w += self.exact_subtree(q, i);
            }
        }
        w as f32
    }

    fn exact_subtree(&self, q: Vec3, i: usize) -> f64 {
        let n = &self.nodes[i];
        if n.count > 0 {
            let s = n.start as usize;
            return self.tris[s..s + n.count as usize]
                .iter()
                .enumerate()
                .filter(|&(k, _)| !self.is_sheet(s + k))
                .map(|(_, t)| triangle_winding(q, t))
                .sum();
        }
        self.exact_subtree(q, i + 1) + self.exact_subtree(q, n.start as usize)
    }

    /// The nearest triangle to `q` within `max_dist`: its distance and index (in the order the
    /// triangles were given).
    pub fn nearest(&self, q: Vec3, max_dist: f32) -> Option<(f32, u32)> {
        self.nearest_of(q, max_dist, false)
    }

    /// [`SkinQuery::nearest`], over the closed parts only when `solid` (the surface a point
    /// inside is as deep as).
    fn nearest_of(&self, q: Vec3, max_dist: f32, solid: bool) -> Option<(f32, u32)> {
        if self.nodes.is_empty() || !q.is_finite() {
            return None;
        }
        let mut best2 = if max_dist.is_finite() {
            max_dist * max_dist
        } else {
            f32::INFINITY
        };
        let mut best: Option<u32> = None;
        let mut stack: Vec<(u32, f32)> = Vec::with_capacity(64);
        let root = &self.nodes[0];
        stack.push((0, box_distance_squared(root.min, root.max, q)));
        while let Some((i, d2)) = stack.pop() {
            if d2 > best2 {
                continue;
            }
            let n = &self.nodes[i as usize];
            if n.count > 0 {
                let s = n.start as usize;
                for (k, t) in self.tris[s..s + n.count as usize].iter().enumerate() {
                    if solid && self.is_sheet(s + k) {
                        continue;
                    }
                    let e2 = closest_on_triangle(q, t).distance_squared(q);
                    if e2 <= best2 {
                        best2 = e2;
                        best = Some(self.ids[s + k]);
                    }
                }
            } else {
                let (l, r) = (i + 1, n.start);
                let dl = {
                    let c = &self.nodes[l as usize];
                    box_distance_squared(c.min, c.max, q)
                };
                let dr = {
                    let c = &self.nodes[r as usize];
                    box_distance_squared(c.min, c.max, q)
                };
                // Nearer child last, so that it is popped first.
                if dl < dr {
                    stack.push((r, dr));
                    stack.push((l, dl));
                } else {
                    stack.push((l, dl));
                    stack.push((r, dr));
                }
            }
        }
        best.map(|b| (best2.sqrt(), b))
    }

    /// Winding number and depth of one point.
    pub fn query(&self, q: Vec3) -> Inside {
        let winding = self.winding(q);
        let depth = if winding >= 0.5 {
            self.nearest_of(q, f32::INFINITY, true)
                .map_or(0.0, |(d, _)| d)
        } else {
            0.0
        };
        Inside { winding, depth }
    }

    /// [`SkinQuery::query`] for many points, in parallel.
    pub fn query_all(&self, points: &[Vec3], out: &mut Vec<Inside>) {
        points
            .par_iter()
            .map(|&p| self.query(p))
            .collect_into_vec(out);
    }
}

/// The winding number by summing every triangle exactly (the reference the tests compare with).
pub fn winding_brute(triangles: &[[Vec3; 3]], q: Vec3) -> f32 {
    triangles
        .iter()
        .map(|t| triangle_winding(q, t))
        .sum::<f64>() as f32
}

/// The nearest triangle by trying them all.
pub fn nearest_brute(triangles: &[[Vec3; 3]], q: Vec3) -> Option<(f32, u32)> {
    triangles
        .iter()
        .enumerate()
        .map(|(i, t)| (closest_on_triangle(q, t).distance(q), i as u32))
        .min_by(|a, b| a.0.total_cmp(&b.0))
}
