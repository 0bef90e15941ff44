//! The body's skin as a collider: a triangle mesh that moves every frame (the skinned body the
//! viewer draws), with the closest-point query the skin-contact stage needs
//! (`stages/skin.rs`).
//!
//! - **Topology once, positions per frame.** [`SkinSurface::new`] welds the vertices that UV and
//!   normal seams duplicate (bit-identical positions at rest), records for every triangle edge
//!   its neighbour across the edge, and builds a bounding-volume hierarchy over the triangles
//!   (median split of the centroids at rest). Each frame [`SkinSurface::set_frame`] takes the
//!   skinned positions; [`SkinSurface::prepare`] places the surface at a fraction of the frame
//!   (linear interpolation of the vertices between the previous and the current frame), computes
//!   the normals and *refits* the hierarchy's boxes bottom-up (no rebuild: the tree's shape from
//!   the rest pose stays good while limbs bend, and a refit is one linear pass). The query reads
//!   the inner nodes packed with both children's boxes ([`Pair`]).
//! - **Inside or outside.** The nearest point on the mesh (Ericson 2005, "Real-Time Collision
//!   Detection" §5.1.5, by Voronoi regions) is on a face, an edge or a vertex. The side is the
//!   sign of `(p − c)·n` with `n` the angle-weighted pseudo-normal of that feature (Bærentzen &
//!   Aanæs 2005, "Signed distance computation using the angle weighted pseudonormal"): the face
//!   normal on a face, the sum of the two faces' normals on an edge, and on a vertex the sum of
//!   its faces' normals each weighted by the face's angle at the vertex. For a closed, outward
//!   oriented mesh that sign is exact at any distance; on an open edge (hair cards, a mesh with a
//!   hole) the edge's one face stands in for the missing one.

use std::collections::HashMap;

use glam::Vec4Swizzles;

use crate::math::{Vec3, Vec3A, Vec4};

/// Triangles per leaf of the hierarchy.
const LEAF: usize = 4;

/// Regions of the surface whose travel is followed apart ([`SkinSurface::region_travel`]): the
/// subtrees of the hierarchy found by splitting the largest until there are this many (a head, a
/// forearm, a thigh, a patch of the back).
pub const REGIONS: usize = 16;

/// A child in [`Pair::child`] that is a leaf: this bit, the leaf's first triangle shifted by 3
/// and its count (at most [`LEAF`]) in the low 3 bits. Otherwise the child's index in `pairs`.
const LEAF_BIT: u32 = 1 << 31;
const _: () = assert!(LEAF < 8);

/// An inner node of the hierarchy as [`SkinSurface::closest`] reads it: its two children's
/// boxes, packed so that one cache line holds both and a few 4-wide operations give both
/// distances, and the children themselves. The descent spent most of its time loading boxes
/// when each node held its own (the right child's box is far from its parent in memory):
/// with the boxes in the parent it visits the same nodes in the same order, and computes the
/// same distances to the bit ([`pair_dist2`]), so the answer is the same.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Pair {
    /// `[lo.x, lo.x, lo.y, lo.y]` of the left and the right child, in that order in each pair.
    lo_xy: Vec4,
    /// `[hi.x, hi.x, hi.y, hi.y]`, as `lo_xy`.
    hi_xy: Vec4,
    /// `[lo.z left, lo.z right, hi.z left, hi.z right]`.
    z: Vec4,
    /// Left and right child (see [`LEAF_BIT`]).
    child: [u32; 2],
}

#[derive(Clone, Copy, Debug, Default)]
struct Node {
    lo: Vec3A,
    hi: Vec3A,
    /// Leaf: first triangle and count; inner: `start` is the right child, `count` 0 (the left
    /// child is the next node).
    start: u32,
    count: u32,
    /// The largest squared motion of a vertex of the subtree over the frame (current minus
    /// previous position).
    frame2: f32,
    /// The largest squared displacement of a vertex of the subtree in the frame's first
    /// preparation.
    jump2: f32,
}

/// Where on a triangle the nearest point lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    Face,
    /// Edge `k`, from corner `k` to corner `(k + 1) % 3`.
    Edge(u8),
    /// Corner `k`.
    Vertex(u8),
}

/// What [`SkinSurface::closest`] finds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkinHit {
    /// The nearest point on the skin.
    pub point: Vec3A,
    /// Distance from the query to `point`, m (unsigned).
    pub distance: f32,
    /// Whether the query is inside the skin (the pseudo-normal's side).
    pub inside: bool,
    /// Unit outward direction at `point` towards which an inside point is pushed out (and along
    /// which an outside one lies): `±(p − c)/|p − c|`, or the pseudo-normal when `p` is on the
    /// surface.
    pub normal: Vec3A,
    /// The triangle (in the order given to [`SkinSurface::new`], less the ones dropped) and the
    /// point's barycentric coordinates in it.
    pub triangle: u32,
    pub bary: [f32; 3],
}

/// A skinned triangle mesh as a moving collider. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct SkinSurface {
    /// Input vertex → welded vertex.
    weld: Vec<u32>,
    /// Triangles (welded vertices) in the hierarchy's leaf order.
    tris: Vec<[u32; 3]>,
    /// Per triangle, per edge `k` (corners `k`, `k + 1`): the triangle across it, or `u32::MAX`
    /// where the edge is open or shared by more than two triangles.
    adj: Vec<[u32; 3]>,
    prev: Vec<Vec3A>,
    cur: Vec<Vec3A>,
    frames: u64,
    /// Frame fraction the surface below was prepared at (NaN: not prepared).
    at: f32,
    /// How far each region's vertices (see [`REGIONS`]; 0 past `regions`) have moved, at most,
    /// over all preparations so far, m: the sum of each preparation's largest displacement of
    /// one of them from the one before. A point that was `d` from the region is still at least
    /// `d − Δtravel − (its own move)` from it.
    region_travel: [f64; REGIONS],
    /// The regions' subtrees (node indices), at most [`REGIONS`].
    regions: Vec<u32>,
    x: Vec<Vec3A>,
    /// Each vertex's squared displacement in the frame's first preparation.
    moved2: Vec<f32>,
    /// The frame (`frames`) the boxes were last refitted for.
    boxes_of: u64,
    /// Triangles around each welded vertex: `v_tris[v_start[v]..v_start[v + 1]]` (triangle,
    /// corner), for the vertex pseudo-normals, computed only where a query needs one.
    v_start: Vec<u32>,
    v_tris: Vec<(u32, u8)>,
    nodes: Vec<Node>,
    /// The inner nodes in `nodes`' order as the query reads them (see [`Pair`]), refitted with
    /// `nodes`; `pair_of[i]` is node `i`'s index here (`u32::MAX` for a leaf).
    pairs: Vec<Pair>,
    pair_of: Vec<u32>,
}

impl SkinSurface {
    /// The surface of `triangles` (indices into `rest`, the vertices at rest, in world space);
    /// bad and degenerate triangles are dropped. Positions come later, from
    /// [`SkinSurface::set_frame`], one per vertex of `rest` in the same order.
    pub fn new(rest: &[Vec3], triangles: &[[u32; 3]]) -> Self {
        let n = rest.len();
        let mut weld = vec![0u32; n];
        let mut first: HashMap<[u32; 3], u32> = HashMap::with_capacity(n);
        let mut nw = 0u32;
        for (i, p) in rest.iter().enumerate() {
            let key = [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()];
            weld[i] = *first.entry(key).or_insert_with(|| {
                nw += 1;
                nw - 1
            });
        }
        let mut welded_rest = vec![Vec3A::ZERO; nw as usize];
        for (i, p) in rest.iter().enumerate() {
            welded_rest[weld[i] as usize] = Vec3A::from(*p);
        }
        let mut tris: Vec<[u32; 3]> = triangles
            .iter()
            .filter(|t| t.iter().all(|&i| (i as usize) < n))
            .map(|t| t.map(|i| weld[i as usize]))
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .filter(|t| t.iter().all(|&i| welded_rest[i as usize].is_finite()))
            .collect();
        let mut s = SkinSurface {
            weld,
            prev: welded_rest.clone(),
            cur: welded_rest,
            at: f32::NAN,
            boxes_of: u64::MAX,
            ..Default::default()
        };
        if !tris.is_empty() {
            let mut items: Vec<(u32, Vec3A)> = tris
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let c = t.iter().map(|&v| s.cur[v as usize]).sum::<Vec3A>() / 3.0;
                    (i as u32, c)
                })
                .collect();
            s.build(&mut items, 0);
            tris = items.iter().map(|&(i, _)| tris[i as usize]).collect();
        }
        // Neighbours across edges (after the reordering).
        let mut edges: HashMap<(u32, u32), Vec<(u32, u8)>> = HashMap::new();
        for (ti, t) in tris.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                edges
                    .entry((a.min(b), a.max(b)))
                    .or_default()
                    .push((ti as u32, k as u8));
            }
        }
        let mut adj = vec![[u32::MAX; 3]; tris.len()];
        for users in edges.values() {
            if let [(t0, k0), (t1, k1)] = users[..] {
                adj[t0 as usize][k0 as usize] = t1;
                adj[t1 as usize][k1 as usize] = t0;
            }
        }
        let nv = s.cur.len();
        let mut v_start = vec![0u32; nv + 1];
        for t in &tris {
            for &v in t {
                v_start[v as usize + 1] += 1;
            }
        }
        for v in 0..nv {
            v_start[v + 1] += v_start[v];
        }
        let mut fill = v_start.clone();
        let mut v_tris = vec![(0u32, 0u8); 3 * tris.len()];
        for (ti, t) in tris.iter().enumerate() {
            for (k, &v) in t.iter().enumerate() {
                v_tris[fill[v as usize] as usize] = (ti as u32, k as u8);
                fill[v as usize] += 1;
            }
        }
        let code = |i: usize, nodes: &[Node], pair_of: &[u32]| {
            let n = nodes[i];
            if n.count > 0 {
                LEAF_BIT | n.start << 3 | n.count
            } else {
                pair_of[i]
            }
        };
        s.pair_of = vec![u32::MAX; s.nodes.len()];
        let mut np = 0u32;
        for (i, n) in s.nodes.iter().enumerate() {
            if n.count == 0 {
                s.pair_of[i] = np;
                np += 1;
            }
        }
        s.pairs = (0..s.nodes.len())
            .filter(|&i| s.nodes[i].count == 0)
            .map(|i| Pair {
                child: [
                    code(i + 1, &s.nodes, &s.pair_of),
                    code(s.nodes[i].start as usize, &s.nodes, &s.pair_of),
                ],
                ..Default::default()
            })
            .collect();
        s.regions = regions_of(&s.nodes);
        s.tris = tris;
        s.adj = adj;
        s.v_start = v_start;
        s.v_tris = v_tris;
        s
    }

    fn build(&mut self, items: &mut [(u32, Vec3A)], offset: usize) -> usize {
        let me = self.nodes.len();
        self.nodes.push(Node {
            start: offset as u32,
            count: items.len() as u32,
            ..Default::default()
        });
        if items.len() > LEAF {
            let (lo, hi) = items.iter().fold(
                (Vec3A::splat(f32::INFINITY), Vec3A::splat(f32::NEG_INFINITY)),
                |(lo, hi), (_, c)| (lo.min(*c), hi.max(*c)),
            );
            let e = hi - lo;
            let axis = if e.x >= e.y && e.x >= e.z {
                0
            } else if e.y >= e.z {
                1
            } else {
                2
            };
            let mid = items.len() / 2;
            // Ties broken by index: the tree depends on the input only.
            items.select_nth_unstable_by(mid, |a, b| {
                a.1[axis].total_cmp(&b.1[axis]).then(a.0.cmp(&b.0))
            });
            let (l, r) = items.split_at_mut(mid);
            self.build(l, offset);
            let right = self.build(r, offset + mid);
            self.nodes[me].start = right as u32;
            self.nodes[me].count = 0;
        }
        me
    }

    /// Number of triangles.
    pub fn len(&self) -> usize {
        self.tris.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tris.is_empty()
    }

    /// Number of input vertices [`SkinSurface::set_frame`] expects.
    pub fn input_vertices(&self) -> usize {
        self.weld.len()
    }

    /// The skinned positions of a new frame, one per input vertex (several slices, read in
    /// order: one per mesh); the previous frame's become the start of the interpolation. The
    /// first call sets both. Missing or non-finite positions keep the last ones.
    pub fn set_frame<'a>(&mut self, positions: impl IntoIterator<Item = &'a [Vec3]>) {
        std::mem::swap(&mut self.prev, &mut self.cur);
        self.cur.clone_from(&self.prev);
        let mut i = 0usize;
        for slice in positions {
            for p in slice {
                if let Some(&w) = self.weld.get(i) {
                    if p.is_finite() {
                        self.cur[w as usize] = Vec3A::from(*p);
                    }
                }
                i += 1;
            }
        }
        if self.frames == 0 {
            self.prev.clone_from(&self.cur);
        }
        self.frames += 1;
        self.at = f32::NAN;
    }

    /// Places the surface at frame fraction `t` (0: the previous frame, 1: the current one):
    /// the positions, and once a frame the boxes (normals are computed where a query needs them).
    /// Nothing to do if it is there already.
    ///
    /// The boxes hold each subtree's triangles over the whole frame (the box of their corners at
    /// both ends: a corner moves on the segment between them, so the triangle at any fraction
    /// stays inside), so that one refit serves every substep; a substep's preparation is the
    /// positions alone, on all threads. Refitted at every preparation, the boxes were 40 % of
    /// the skin stage's time (0.22 ms, 16 times a frame, on one thread). The query finds the
    /// same nearest point either way: a looser box only costs a visit more.
    pub fn prepare(&mut self, t: f32) {
        use rayon::prelude::*;
        if t == self.at || self.tris.is_empty() {
            return;
        }
        let nv = self.cur.len();
        self.x.resize(nv, Vec3A::ZERO);
        const CHUNK: usize = 2048;
        if self.boxes_of != self.frames {
            // The first preparation of a frame: from wherever the last one left the surface,
            // each vertex's own displacement (the frame before may have been left early).
            self.moved2.resize(nv, 0.0);
            self.x
                .par_chunks_mut(CHUNK)
                .zip(self.moved2.par_chunks_mut(CHUNK))
                .zip(self.prev.par_chunks(CHUNK).zip(self.cur.par_chunks(CHUNK)))
                .for_each(|((x, m), (a, b))| {
                    for k in 0..x.len() {
                        let y = a[k].lerp(b[k], t);
                        m[k] = (y - x[k]).length_squared();
                        x[k] = y;
                    }
                });
            self.refit_frame();
            self.boxes_of = self.frames;
            let jump = |n: &Node| n.jump2.sqrt() as f64;
            for (tr, &r) in self.region_travel.iter_mut().zip(&self.regions) {
                *tr += jump(&self.nodes[r as usize]);
            }
        } else {
            // Later in the frame every vertex moves on its segment: by (cur − prev)·|t − at|.
            self.x
                .par_chunks_mut(CHUNK)
                .zip(self.prev.par_chunks(CHUNK).zip(self.cur.par_chunks(CHUNK)))
                .for_each(|(x, (a, b))| {
                    for k in 0..x.len() {
                        x[k] = a[k].lerp(b[k], t);
                    }
                });
            let dt = (t - self.at).abs() as f64;
            let step = |n: &Node| n.frame2.sqrt() as f64 * dt;
            for (tr, &r) in self.region_travel.iter_mut().zip(&self.regions) {
                *tr += step(&self.nodes[r as usize]);
            }
        }
        self.at = t;
    }

    /// Refits every box to hold its triangles at both ends of the frame, with the subtree's
    /// largest squared vertex motion over the frame (`frame2`) and in the preparation just made
    /// (`jump2`, from `moved2`).
    fn refit_frame(&mut self) {
        for i in (0..self.nodes.len()).rev() {
            let node = self.nodes[i];
            let (lo, hi, f2, j2) = if node.count > 0 {
                let s = node.start as usize;
                self.tris[s..s + node.count as usize].iter().flatten().fold(
                    (
                        Vec3A::splat(f32::INFINITY),
                        Vec3A::splat(f32::NEG_INFINITY),
                        0.0f32,
                        0.0f32,
                    ),
                    |(lo, hi, f2, j2), &v| {
                        let v = v as usize;
                        let (a, b) = (self.prev[v], self.cur[v]);
                        (
                            lo.min(a.min(b)),
                            hi.max(a.max(b)),
                            f2.max((b - a).length_squared()),
                            j2.max(self.moved2[v]),
                        )
                    },
                )
            } else {
                let (l, r) = (self.nodes[i + 1], self.nodes[node.start as usize]);
                let pair = &mut self.pairs[self.pair_of[i] as usize];
                pair.lo_xy = Vec4::new(l.lo.x, r.lo.x, l.lo.y, r.lo.y);
                pair.hi_xy = Vec4::new(l.hi.x, r.hi.x, l.hi.y, r.hi.y);
                pair.z = Vec4::new(l.lo.z, r.lo.z, l.hi.z, r.hi.z);
                (
                    l.lo.min(r.lo),
                    l.hi.max(r.hi),
                    l.frame2.max(r.frame2),
                    l.jump2.max(r.jump2),
                )
            };
            let n = &mut self.nodes[i];
            (n.lo, n.hi, n.frame2, n.jump2) = (lo, hi, f2, j2);
        }
    }

    /// How far each region's vertices have moved, at most, since the surface was created, m
    /// (see the field; [`REGIONS`]; a region the surface is too small to have stays at 0). Where the body moves in one place (a kicking
    /// foot), a point near another still far from it cannot have been reached.
    pub fn region_travel(&self) -> &[f64; REGIONS] {
        &self.region_travel
    }

    /// The distance from `p` to each region's box at the prepared instant, a lower bound of its
    /// distance to the region's triangles, m (infinity for a region the surface lacks).
    pub fn region_distances(&self, p: Vec3A) -> [f32; REGIONS] {
        let mut d = [f32::INFINITY; REGIONS];
        if !self.at.is_nan() {
            for (d, &r) in d.iter_mut().zip(&self.regions) {
                *d = box_dist2(&self.nodes[r as usize], p).sqrt();
            }
        }
        d
    }

    /// The displacement of the surface point `(triangle, bary)` over one frame (current minus
    /// previous position), m.
    pub fn frame_motion(&self, triangle: u32, bary: [f32; 3]) -> Vec3A {
        let t = self.tris[triangle as usize];
        (0..3)
            .map(|k| (self.cur[t[k] as usize] - self.prev[t[k] as usize]) * bary[k])
            .sum()
    }

    /// The nearest point of the prepared surface to `p` within `max_dist`, with its side (see
    /// the module docs). `None` when nothing is that near (or nothing is prepared).
    pub fn closest(&self, p: Vec3A, max_dist: f32) -> Option<SkinHit> {
        self.closest_near(p, max_dist, u32::MAX)
    }

    /// [`SkinSurface::closest`], starting from triangle `hint` (the one an earlier query of a
    /// point near `p` found; `u32::MAX` for none): its distance bounds the search from the start,
    /// so the descent leaves out at once what is farther. The answer is the same.
    pub fn closest_near(&self, p: Vec3A, max_dist: f32, hint: u32) -> Option<SkinHit> {
        if self.nodes.is_empty() || self.at.is_nan() || !p.is_finite() {
            return None;
        }
        let mut best2 = max_dist * max_dist;
        let mut best: Option<(u32, Vec3A, [f32; 3], Feature)> = None;
        if let Some(t) = self.tris.get(hint as usize) {
            let t = t.map(|v| self.x[v as usize]);
            let (c, bary, f) = closest_on_triangle(p, &t);
            let e2 = (c - p).length_squared();
            if e2 <= best2 {
                best2 = e2;
                best = Some((hint, c, bary, f));
            }
        }
        let (q_xy, q_z) = (Vec4::new(p.x, p.x, p.y, p.y), Vec4::splat(p.z));
        let mut stack = [(0u32, 0.0f32); 64];
        let mut top = 1usize;
        let root = if self.nodes[0].count > 0 {
            LEAF_BIT | self.nodes[0].count
        } else {
            0
        };
        stack[0] = (root, box_dist2(&self.nodes[0], p));
        while top > 0 {
            top -= 1;
            let (i, d2) = stack[top];
            if d2 > best2 {
                continue;
            }
            if i & LEAF_BIT != 0 {
                let s = ((i & !LEAF_BIT) >> 3) as usize;
                for ti in s..s + (i & 7) as usize {
                    let t = self.tris[ti].map(|v| self.x[v as usize]);
                    let (c, bary, f) = closest_on_triangle(p, &t);
                    let e2 = (c - p).length_squared();
                    // Of equally near triangles (a shared corner or edge), the first in leaf
                    // order: the answer does not depend on the order of the visit.
                    if e2 < best2 || (e2 == best2 && best.is_none_or(|b| (ti as u32) < b.0)) {
                        best2 = e2;
                        best = Some((ti as u32, c, bary, f));
                    }
                }
            } else {
                let pair = &self.pairs[i as usize];
                let [l, r] = pair.child;
                let (dl, dr) = pair_dist2(pair, q_xy, q_z);
                if top + 2 > stack.len() {
                    // Deeper than a median split of any mesh gets; give up rather than panic.
                    continue;
                }
                // Nearer child on top; a child already beyond the best is left out (it would be
                // skipped when taken: the best only gets nearer).
                let (far, near) = if dl < dr {
                    ((r, dr), (l, dl))
                } else {
                    ((l, dl), (r, dr))
                };
                for c in [far, near] {
                    if c.1 <= best2 {
                        stack[top] = c;
                        top += 1;
                    }
                }
            }
        }
        let (ti, c, bary, feature) = best?;
        let pseudo = self.pseudo_normal(ti, feature);
        let d = p - c;
        let distance = d.length();
        let inside = d.dot(pseudo) < 0.0;
        let normal = if distance > 1e-7 {
            if inside {
                -d / distance
            } else {
                d / distance
            }
        } else {
            pseudo.normalize_or_zero()
        };
        Some(SkinHit {
            point: c,
            distance,
            inside,
            normal,
            triangle: ti,
            bary,
        })
    }

    /// Unit normal of triangle `t` (as [`SkinHit::triangle`] numbers it) at the prepared
    /// positions, by its corners' order (zero if degenerate).
    pub fn face_normal(&self, t: usize) -> Vec3A {
        let p = self.tris[t].map(|i| self.x[i as usize]);
        (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero()
    }

    /// The angle-weighted pseudo-normal of a feature of triangle `ti` (not normalised).
    fn pseudo_normal(&self, ti: u32, feature: Feature) -> Vec3A {
        let t = ti as usize;
        match feature {
            Feature::Face => self.face_normal(t),
            Feature::Edge(k) => {
                let other = self.adj[t][k as usize];
                if other == u32::MAX {
                    self.face_normal(t)
                } else {
                    self.face_normal(t) + self.face_normal(other as usize)
                }
            }
            Feature::Vertex(k) => {
                let v = self.tris[t][k as usize] as usize;
                let (a, b) = (self.v_start[v] as usize, self.v_start[v + 1] as usize);
                self.v_tris[a..b]
                    .iter()
                    .map(|&(f, c)| {
                        let p = self.tris[f as usize].map(|i| self.x[i as usize]);
                        let c = c as usize;
                        let e1 = (p[(c + 1) % 3] - p[c]).normalize_or_zero();
                        let e2 = (p[(c + 2) % 3] - p[c]).normalize_or_zero();
                        let angle = e1.dot(e2).clamp(-1.0, 1.0).acos();
                        self.face_normal(f as usize) * angle
                    })
                    .sum()
            }
        }
    }
}

/// Up to [`REGIONS`] subtrees that together hold every triangle once: from the root, the one
/// with the most triangles split into its children, until there are enough or only leaves.
fn regions_of(nodes: &[Node]) -> Vec<u32> {
    if nodes.is_empty() {
        return Vec::new();
    }
    // Triangles under each node (children come after their parent).
    let mut size = vec![0u32; nodes.len()];
    for i in (0..nodes.len()).rev() {
        size[i] = if nodes[i].count > 0 {
            nodes[i].count
        } else {
            size[i + 1] + size[nodes[i].start as usize]
        };
    }
    let mut regions = vec![0u32];
    while regions.len() < REGIONS {
        let Some(k) = (0..regions.len())
            .filter(|&k| nodes[regions[k] as usize].count == 0)
            .max_by_key(|&k| (size[regions[k] as usize], std::cmp::Reverse(k)))
        else {
            break;
        };
        let i = regions[k] as usize;
        regions[k] = i as u32 + 1;
        regions.push(nodes[i].start);
    }
    regions
}

fn box_dist2(n: &Node, p: Vec3A) -> f32 {
    let d = (n.lo - p).max(p - n.hi).max(Vec3A::ZERO);
    d.length_squared()
}

/// [`box_dist2`] of the two children of `pair` from the point `(q_xy.x, q_xy.z, q_z.x)`
/// (`q_xy = [x, x, y, y]`, `q_z` all `z`), to the bit: the same differences and maxima lane by
/// lane, and the squares summed in the same order, `(x² + y²) + z²`.
#[inline]
fn pair_dist2(pair: &Pair, q_xy: Vec4, q_z: Vec4) -> (f32, f32) {
    let dxy = (pair.lo_xy - q_xy).max(q_xy - pair.hi_xy).max(Vec4::ZERO);
    // Lanes 0, 1: lo.z − z and, from lanes 2, 3 of the second, z − hi.z.
    let dz = (pair.z - q_z).max((q_z - pair.z).zwxy()).max(Vec4::ZERO);
    let (sxy, sz) = (dxy * dxy, dz * dz);
    ((sxy.x + sxy.z) + sz.x, (sxy.y + sxy.w) + sz.y)
}

/// Closest point to `p` on triangle `t`, its barycentric coordinates and the feature it lies on
/// (Ericson 2005, §5.1.5, the Voronoi regions in the same order).
pub fn closest_on_triangle(p: Vec3A, t: &[Vec3A; 3]) -> (Vec3A, [f32; 3], Feature) {
    let [a, b, c] = *t;
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, [1.0, 0.0, 0.0], Feature::Vertex(0));
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, [0.0, 1.0, 0.0], Feature::Vertex(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, [1.0 - v, v, 0.0], Feature::Edge(0));
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, [0.0, 0.0, 1.0], Feature::Vertex(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, [1.0 - w, 0.0, w], Feature::Edge(2));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, [0.0, 1.0 - w, w], Feature::Edge(1));
    }
    let den = va + vb + vc;
    if den.abs() < f32::MIN_POSITIVE {
        // Degenerate triangle: the nearest corner.
        let k = (0..3)
            .min_by(|&i, &j| {
                t[i].distance_squared(p)
                    .total_cmp(&t[j].distance_squared(p))
            })
            .unwrap_or(0);
        let mut bary = [0.0; 3];
        bary[k] = 1.0;
        return (t[k], bary, Feature::Vertex(k as u8));
    }
    let v = vb / den;
    let w = vc / den;
    (a + ab * v + ac * w, [1.0 - v - w, v, w], Feature::Face)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed, outward-oriented box of half extent `h` around `c`, split into 12 triangles,
    /// with its 8 corners duplicated per face (as a UV-seamed export has them).
    pub(crate) fn seamed_box(c: Vec3, h: Vec3) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let corner = |i: u32| {
            c + Vec3::new(
                if i & 1 == 0 { -h.x } else { h.x },
                if i & 2 == 0 { -h.y } else { h.y },
                if i & 4 == 0 { -h.z } else { h.z },
            )
        };
        // Faces as corner quads, counter-clockwise seen from outside.
        let faces = [
            [0, 2, 3, 1], // -z
            [4, 5, 7, 6], // +z
            [0, 1, 5, 4], // -y
            [2, 6, 7, 3], // +y
            [0, 4, 6, 2], // -x
            [1, 3, 7, 5], // +x
        ];
        let mut pos = Vec::new();
        let mut tris = Vec::new();
        for f in faces {
            let base = pos.len() as u32;
            pos.extend(f.iter().map(|&i| corner(i)));
            tris.push([base, base + 1, base + 2]);
            tris.push([base, base + 2, base + 3]);
        }
        (pos, tris)
    }

    fn brute_nearest(s: &SkinSurface, p: Vec3A) -> f32 {
        s.tris
            .iter()
            .map(|t| {
                let t = t.map(|v| s.x[v as usize]);
                closest_on_triangle(p, &t).0.distance(p)
            })
            .fold(f32::INFINITY, f32::min)
    }

    #[test]
    fn sign_and_distance_on_a_box_match_the_box() {
        let (pos, tris) = seamed_box(Vec3::new(0.1, 1.0, -0.2), Vec3::new(0.3, 0.2, 0.1));
        let mut s = SkinSurface::new(&pos, &tris);
        assert_eq!(s.len(), 12);
        // Welded: every edge has its neighbour (a closed mesh).
        assert!(s.adj.iter().flatten().all(|&a| a != u32::MAX));
        s.set_frame([pos.as_slice()]);
        s.prepare(1.0);
        let mut seed = 7u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        };
        let (c, h) = (Vec3A::new(0.1, 1.0, -0.2), Vec3A::new(0.3, 0.2, 0.1));
        for _ in 0..2000 {
            let p = c + Vec3A::new(rnd(), rnd(), rnd()) * (h + 0.15);
            let q = (p - c).abs() - h;
            let inside = q.max_element() < 0.0;
            let want = if inside {
                -q.max_element()
            } else {
                q.max(Vec3A::ZERO).length()
            };
            let hit = s.closest(p, 1.0).expect("within reach");
            assert!((hit.distance - want).abs() < 1e-5, "{p}: {hit:?} vs {want}");
            assert!((hit.distance - brute_nearest(&s, p)).abs() < 1e-6);
            if want > 1e-4 {
                assert_eq!(hit.inside, inside, "{p}: {hit:?}");
                // The pushed-out point is outside and on the surface.
                let out = hit.point + hit.normal * 0.01;
                let q = (out - c).abs() - h;
                assert!(q.max_element() > 0.0, "{p} pushed to {out}");
            }
        }
        // Out of reach: nothing.
        assert!(s.closest(c + Vec3A::new(2.0, 0.0, 0.0), 0.5).is_none());
    }

    /// Points near a box's corners and edges, where the nearest point is shared by several
    /// triangles whose normals disagree: only the pseudo-normal gets the side right every time.
    #[test]
    fn pseudo_normal_decides_corners_and_edges() {
        let (pos, tris) = seamed_box(Vec3::ZERO, Vec3::splat(0.5));
        let mut s = SkinSurface::new(&pos, &tris);
        s.set_frame([pos.as_slice()]);
        s.prepare(0.5);
        for i in 0..8 {
            let sgn = Vec3A::new(
                if i & 1 == 0 { -1.0 } else { 1.0 },
                if i & 2 == 0 { -1.0 } else { 1.0 },
                if i & 4 == 0 { -1.0 } else { 1.0 },
            );
            let corner = sgn * 0.5;
            // Just outside along the diagonal, and just inside.
            let out = s.closest(corner + sgn * 0.01, 1.0).unwrap();
            assert!(!out.inside);
            let inn = s.closest(corner - sgn * 0.01, 1.0).unwrap();
            assert!(inn.inside);
            // Outside beyond an edge (two coordinates past the faces, one within).
            let edge = Vec3A::new(sgn.x * 0.52, sgn.y * 0.52, 0.1);
            assert!(!s.closest(edge, 1.0).unwrap().inside);
        }
    }

    /// The descent as first written, each node holding its own box: the reference for the
    /// packed one ([`Pair`]), which must give the same answer to the bit.
    fn reference_closest(s: &SkinSurface, p: Vec3A, max_dist: f32) -> Option<(u32, Vec3A)> {
        let mut best2 = max_dist * max_dist;
        let mut best = None;
        let mut stack = vec![(0u32, box_dist2(&s.nodes[0], p))];
        while let Some((i, d2)) = stack.pop() {
            if d2 > best2 {
                continue;
            }
            let n = &s.nodes[i as usize];
            if n.count > 0 {
                for ti in n.start as usize..(n.start + n.count) as usize {
                    let t = s.tris[ti].map(|v| s.x[v as usize]);
                    let c = closest_on_triangle(p, &t).0;
                    let e2 = (c - p).length_squared();
                    if e2 < best2
                        || (e2 == best2 && best.is_none_or(|b: (u32, _)| (ti as u32) < b.0))
                    {
                        best2 = e2;
                        best = Some((ti as u32, c));
                    }
                }
            } else {
                let (l, r) = (i + 1, n.start);
                let dl = box_dist2(&s.nodes[l as usize], p);
                let dr = box_dist2(&s.nodes[r as usize], p);
                if dl < dr {
                    stack.extend([(r, dr), (l, dl)]);
                } else {
                    stack.extend([(l, dl), (r, dr)]);
                }
            }
        }
        best
    }

    /// A bumpy closed sphere of 3,200 triangles moving and deforming between two frames,
    /// prepared at a fraction: every node's box holds its triangles over the frame, and the
    /// packed descent finds the very triangle and point the reference descent and brute force
    /// do, from points off, near and inside the surface, from whatever triangle it starts.
    #[test]
    fn packed_descent_matches_the_reference_to_the_bit() {
        let (nu, nv) = (40u32, 41u32);
        let sphere = |phase: f32| -> Vec<Vec3> {
            let mut pos = vec![Vec3::new(0.0, -0.3, 0.0)];
            for j in 1..nv - 1 {
                let th = std::f32::consts::PI * j as f32 / (nv - 1) as f32;
                for i in 0..nu {
                    let ph = std::f32::consts::TAU * i as f32 / nu as f32;
                    let r = 0.3 * (1.0 + 0.08 * (5.0 * ph + phase).sin() * (3.0 * th).sin());
                    pos.push(Vec3::new(
                        r * th.sin() * ph.cos() + phase * 0.05,
                        -r * th.cos(),
                        r * th.sin() * ph.sin(),
                    ));
                }
            }
            pos.push(Vec3::new(phase * 0.05, 0.3, 0.0));
            pos
        };
        let ring = |j: u32, i: u32| 1 + (j - 1) * nu + i % nu;
        let last = 1 + (nv - 2) * nu;
        let mut tris = Vec::new();
        for i in 0..nu {
            tris.push([0, ring(1, i + 1), ring(1, i)]);
            tris.push([last, ring(nv - 2, i), ring(nv - 2, i + 1)]);
            for j in 1..nv - 2 {
                let (a, b) = (ring(j, i), ring(j, i + 1));
                let (c, d) = (ring(j + 1, i), ring(j + 1, i + 1));
                tris.push([a, b, d]);
                tris.push([a, d, c]);
            }
        }
        let rest = sphere(0.0);
        let mut s = SkinSurface::new(&rest, &tris);
        assert_eq!(s.len(), tris.len());
        s.set_frame([rest.as_slice()]);
        s.set_frame([sphere(0.7).as_slice()]);
        s.prepare(0.1);
        s.prepare(0.3);
        for n in &s.nodes {
            let (lo, hi) = if n.count > 0 {
                s.tris[n.start as usize..(n.start + n.count) as usize]
                    .iter()
                    .flatten()
                    .fold(
                        (Vec3A::splat(f32::INFINITY), Vec3A::splat(f32::NEG_INFINITY)),
                        |(lo, hi), &v| {
                            let (a, b) = (s.prev[v as usize], s.cur[v as usize]);
                            (lo.min(a.min(b)), hi.max(a.max(b)))
                        },
                    )
            } else {
                (n.lo, n.hi)
            };
            assert_eq!((n.lo, n.hi), (lo, hi));
            // The triangles at the prepared instant are inside.
            if n.count > 0 {
                for t in &s.tris[n.start as usize..(n.start + n.count) as usize] {
                    for &v in t {
                        let x = s.x[v as usize];
                        assert!(x.cmpge(n.lo).all() && x.cmple(n.hi).all());
                    }
                }
            }
        }
        let mut seed = 11u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        };
        let mut hits = 0;
        for _ in 0..3000 {
            let dir = Vec3A::new(rnd(), rnd(), rnd()).normalize_or_zero();
            let p = Vec3A::new(0.0105, 0.0, 0.0) + dir * (0.3 + 0.05 * rnd());
            for reach in [0.01, 0.04] {
                let hit = s.closest(p, reach);
                let want = reference_closest(&s, p, reach);
                assert_eq!(
                    hit.map(|h| (h.triangle, h.point)),
                    want,
                    "{p} within {reach}"
                );
                // Started from any triangle (near, far, none), the same answer.
                let hint = (rnd().abs() * 1.1 * s.len() as f32) as u32;
                assert_eq!(s.closest_near(p, reach, hint), hit, "{p} from {hint}");
                if let Some(h) = hit {
                    assert_eq!(s.closest_near(p, reach, h.triangle), hit);
                }
                if let Some(h) = hit {
                    hits += 1;
                    assert!((h.distance - brute_nearest(&s, p)).abs() < 1e-6);
                }
            }
        }
        assert!(hits > 2000, "{hits}");
    }

    /// Interpolation between two frames, refitted boxes, and the surface's own motion.
    #[test]
    fn moving_surface_is_interpolated_and_refitted() {
        let (pos, tris) = seamed_box(Vec3::ZERO, Vec3::splat(0.1));
        let mut s = SkinSurface::new(&pos, &tris);
        s.set_frame([pos.as_slice()]);
        let moved: Vec<Vec3> = pos.iter().map(|p| *p + Vec3::new(1.0, 0.0, 0.0)).collect();
        s.set_frame([moved.as_slice()]);
        s.prepare(0.5);
        let hit = s.closest(Vec3A::new(0.5, 0.0, 0.0), 0.2).unwrap();
        assert!(hit.inside && (hit.distance - 0.1).abs() < 1e-6);
        assert!(s.closest(Vec3A::ZERO, 0.2).is_none(), "boxes refitted");
        let m = s.frame_motion(hit.triangle, hit.bary);
        assert!((m - Vec3A::new(1.0, 0.0, 0.0)).length() < 1e-6);
    }

    /// Eight boxes in a row, the first moving: the regions hold every triangle once; each
    /// region's travel bounds the displacement of its own triangles' corners from one
    /// preparation to the next (within a frame, across frames, after a frame left early), and
    /// regions of the still boxes do not travel; a region's box distance never exceeds the
    /// distance to its triangles.
    #[test]
    fn each_region_travels_only_with_its_own_triangles() {
        let mut pos = Vec::new();
        let mut tris = Vec::new();
        for b in 0..8 {
            let (p, t) = seamed_box(Vec3::new(0.5 * b as f32, 0.0, 0.0), Vec3::splat(0.1));
            let base = pos.len() as u32;
            pos.extend(p);
            tris.extend(t.iter().map(|t| t.map(|i| i + base)));
        }
        let mut s = SkinSurface::new(&pos, &tris);
        assert_eq!(s.regions.len(), REGIONS);
        // Each triangle in exactly one region: the regions' ranges tile the leaf order.
        let range = |s: &SkinSurface, node: usize| {
            let (mut lo, mut hi) = (usize::MAX, 0);
            let mut stack = vec![node];
            while let Some(i) = stack.pop() {
                let n = s.nodes[i];
                if n.count > 0 {
                    lo = lo.min(n.start as usize);
                    hi = hi.max((n.start + n.count) as usize);
                } else {
                    stack.extend([i + 1, n.start as usize]);
                }
            }
            lo..hi
        };
        let mut ranges: Vec<_> = s.regions.iter().map(|&r| range(&s, r as usize)).collect();
        ranges.sort_by_key(|r| r.start);
        assert_eq!(ranges[0].start, 0);
        assert_eq!(ranges.last().unwrap().end, s.tris.len());
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
        let movers: Vec<bool> = (0..REGIONS)
            .map(|r| {
                s.tris[range(&s, s.regions[r] as usize)]
                    .iter()
                    .flatten()
                    .any(|&v| s.cur[v as usize].x < 0.25)
            })
            .collect();
        assert!(movers.iter().any(|&m| m) && movers.iter().any(|&m| !m));
        let shifted = |dy: f32| -> Vec<Vec3> {
            pos.iter()
                .map(|p| {
                    if p.x < 0.25 {
                        *p + Vec3::new(0.0, dy, 0.02 * dy)
                    } else {
                        *p
                    }
                })
                .collect()
        };
        s.set_frame([pos.as_slice()]);
        s.prepare(1.0);
        let mut seed = 5u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        for (frame, ts) in [[0.25, 0.5, 1.0], [0.5, 0.75, 0.9], [0.1, 0.6, 1.0]]
            .iter()
            .enumerate()
        {
            s.set_frame([shifted(0.3 * (frame + 1) as f32).as_slice()]);
            if frame == 2 {
                // A frame the stage left early: the next starts from where this one stopped.
                s.set_frame([shifted(0.2).as_slice()]);
            }
            for &t in ts {
                let (x0, t0) = (s.x.clone(), *s.region_travel());
                s.prepare(t);
                for (r, &node) in s.regions.iter().enumerate() {
                    let dt = s.region_travel()[r] - t0[r];
                    let moved = s.tris[range(&s, node as usize)]
                        .iter()
                        .flatten()
                        .map(|&v| (s.x[v as usize] - x0[v as usize]).length())
                        .fold(0.0f32, f32::max);
                    assert!(moved as f64 <= dt + 1e-6, "region {r}: {moved} > {dt}");
                    if !movers[r] {
                        // (Interpolating between equal ends rounds by a few ulps.)
                        assert!(dt < 1e-6, "region {r} of still boxes: {dt}");
                    }
                }
                for _ in 0..200 {
                    let p = Vec3A::new(4.0 * rnd() - 0.3, rnd() - 0.5, rnd() - 0.5);
                    let boxes = s.region_distances(p);
                    for (r, &node) in s.regions.iter().enumerate() {
                        let near = s.tris[range(&s, node as usize)]
                            .iter()
                            .map(|t| {
                                let c = t.map(|v| s.x[v as usize]);
                                (closest_on_triangle(p, &c).0 - p).length()
                            })
                            .fold(f32::INFINITY, f32::min);
                        assert!(boxes[r] <= near + 1e-6);
                    }
                }
            }
        }
    }
}
