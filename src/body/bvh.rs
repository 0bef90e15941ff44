//! A bounding volume hierarchy over the body's colliders, refitted every frame and queried per
//! cloth particle without allocating.
//!
//! The crate `bvh` builds the tree (binned SAH). This is the only file that sees `bvh` and
//! `nalgebra`: right after a build the tree is copied into flat glam arrays (one box per node,
//! structs of arrays, the crate's node numbering kept), which refit and queries use. In `bvh`'s
//! numbering a child always has a larger index than its parent (the builder places the left child
//! right after its parent and the right child after the left subtree), so one backward sweep
//! recomputes every box bottom-up.

use crate::body::proxies::ProxyFrame;
use crate::math::{Vec3, Vec3A};
use bvh::aabb::{Aabb, Bounded};
use bvh::bounding_hierarchy::BHShape;
use bvh::bvh::{Bvh, BvhNode};
use nalgebra::Point3;

/// Marks a node's `child` entry as a leaf: the low bits are the collider index.
const LEAF: u32 = 1 << 31;
/// Traversal stack size; trees deeper than this (never seen for a body) use recursion instead.
const STACK: usize = 64;

/// The box of one collider, in the form the `bvh` crate builds from.
struct BuildShape {
    aabb: Aabb<f32, 3>,
    node: usize,
}

impl Bounded<f32, 3> for BuildShape {
    fn aabb(&self) -> Aabb<f32, 3> {
        self.aabb
    }
}

impl BHShape<f32, 3> for BuildShape {
    fn set_bh_node_index(&mut self, index: usize) {
        self.node = index;
    }
    fn bh_node_index(&self) -> usize {
        self.node
    }
}

fn point(v: Vec3A) -> Point3<f32> {
    Point3::new(v.x, v.y, v.z)
}

/// The box of collider `[a, b]`: the hull of two spheres lies in the union of their boxes.
fn capsule_box(cap: [u32; 2], frame: &ProxyFrame) -> (Vec3A, Vec3A) {
    let (a, b) = (cap[0] as usize, cap[1] as usize);
    let (ca, cb) = (Vec3A::from(frame.center[a]), Vec3A::from(frame.center[b]));
    let (ra, rb) = (Vec3A::splat(frame.radius[a]), Vec3A::splat(frame.radius[b]));
    ((ca - ra).min(cb - rb), (ca + ra).max(cb + rb))
}

fn half_area(lo: Vec3A, hi: Vec3A) -> f32 {
    let d = (hi - lo).max(Vec3A::ZERO);
    d.x * d.y + d.y * d.z + d.z * d.x
}

/// BVH over the colliders `capsules[i] = [a, b]` of a [`ProxyFrame`]; queries answer collider
/// indices `i`.
#[derive(Clone, Debug, Default)]
pub struct ProxyBvh {
    /// Box of every node (inner nodes and leaves), indexed like `bvh`'s node array.
    lo: Vec<Vec3A>,
    hi: Vec<Vec3A>,
    /// Children of inner nodes; `[LEAF | collider, 0]` for leaves.
    child: Vec<[u32; 2]>,
    /// Longest root-to-leaf path (nodes).
    depth: usize,
    colliders: usize,
    /// Summed half-areas of the inner nodes' boxes right after the last build (the SAH cost).
    built_cost: f32,
}

impl ProxyBvh {
    /// Builds the tree over the colliders posed as `frame`.
    pub fn build(capsules: &[[u32; 2]], frame: &ProxyFrame) -> Self {
        Self::build_with(capsules.len(), |i| capsule_box(capsules[i], frame))
    }

    /// Builds the tree over arbitrary finite boxes `(min, max)`; queries answer box indices.
    /// The cloth's broad phase uses it over each collider's box swept over a frame.
    pub fn from_boxes(boxes: &[(Vec3A, Vec3A)]) -> Self {
        Self::build_with(boxes.len(), |i| boxes[i])
    }

    fn build_with(count: usize, box_of: impl Fn(usize) -> (Vec3A, Vec3A)) -> Self {
        let mut shapes: Vec<BuildShape> = (0..count)
            .map(|i| {
                let (lo, hi) = box_of(i);
                BuildShape {
                    aabb: Aabb::with_bounds(point(lo), point(hi)),
                    node: 0,
                }
            })
            .collect();
        let tree = Bvh::build(&mut shapes);
        let n = tree.nodes.len();
        let mut child = vec![[0u32; 2]; n];
        let mut depth_of = vec![1usize; n];
        for (i, node) in tree.nodes.iter().enumerate() {
            match *node {
                BvhNode::Leaf { shape_index, .. } => child[i] = [LEAF | shape_index as u32, 0],
                BvhNode::Node {
                    child_l_index,
                    child_r_index,
                    ..
                } => {
                    debug_assert!(child_l_index > i && child_r_index > i);
                    child[i] = [child_l_index as u32, child_r_index as u32];
                    depth_of[child_l_index] = depth_of[i] + 1;
                    depth_of[child_r_index] = depth_of[i] + 1;
                }
            }
        }
        let mut out = Self {
            lo: vec![Vec3A::ZERO; n],
            hi: vec![Vec3A::ZERO; n],
            child,
            depth: depth_of.iter().copied().max().unwrap_or(0),
            colliders: count,
            built_cost: 0.0,
        };
        out.built_cost = out.fit_with(box_of);
        out
    }

    /// Number of colliders.
    pub fn len(&self) -> usize {
        self.colliders
    }

    pub fn is_empty(&self) -> bool {
        self.colliders == 0
    }

    /// Longest root-to-leaf path of the tree (nodes).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Every node's box (inner nodes and leaves) with its depth below the root (0 = root), for
    /// drawing the tree (the viewer's BVH view). Root first.
    pub fn node_boxes(&self) -> Vec<(Vec3, Vec3, u32)> {
        let mut out = Vec::with_capacity(self.child.len());
        let mut stack = vec![(0usize, 0u32)];
        while let Some((i, d)) = stack.pop() {
            if i >= self.child.len() {
                continue;
            }
            out.push((Vec3::from(self.lo[i]), Vec3::from(self.hi[i]), d));
            let [l, r] = self.child[i];
            if l & LEAF == 0 {
                stack.push((r as usize, d + 1));
                stack.push((l as usize, d + 1));
            }
        }
        out
    }

    /// Rebuilds the tree for a new pose (allocates; for when [`ProxyBvh::refit`] reports a tree
    /// that has degraded).
    pub fn rebuild(&mut self, capsules: &[[u32; 2]], frame: &ProxyFrame) {
        *self = Self::build(capsules, frame);
    }

    /// Recomputes every node's box bottom-up; returns the summed half-areas of the inner nodes'
    /// boxes (proportional to the expected cost of a query, the SAH).
    fn fit_boxes(&mut self, capsules: &[[u32; 2]], frame: &ProxyFrame) -> f32 {
        self.fit_with(|i| capsule_box(capsules[i], frame))
    }

    fn fit_with(&mut self, box_of: impl Fn(usize) -> (Vec3A, Vec3A)) -> f32 {
        let mut cost = 0.0;
        for i in (0..self.child.len()).rev() {
            let [l, r] = self.child[i];
            if l & LEAF != 0 {
                let (lo, hi) = box_of((l & !LEAF) as usize);
                self.lo[i] = lo;
                self.hi[i] = hi;
            } else {
                let (l, r) = (l as usize, r as usize);
                self.lo[i] = self.lo[l].min(self.lo[r]);
                self.hi[i] = self.hi[l].max(self.hi[r]);
                cost += half_area(self.lo[i], self.hi[i]);
            }
        }
        cost
    }

    /// [`ProxyBvh::update`] for a tree built by [`ProxyBvh::from_boxes`]: refits to the new
    /// boxes, rebuilding when the count changed or the refitted tree costs more than
    /// `max_cost_ratio` times a fresh one. Returns whether it rebuilt.
    pub fn update_boxes(&mut self, boxes: &[(Vec3A, Vec3A)], max_cost_ratio: f32) -> bool {
        if boxes.len() != self.colliders || self.child.is_empty() {
            *self = Self::from_boxes(boxes);
            return true;
        }
        let cost = self.fit_with(|i| boxes[i]);
        if self.built_cost > 0.0 && cost / self.built_cost > max_cost_ratio {
            *self = Self::from_boxes(boxes);
            return true;
        }
        false
    }

    /// Moves the boxes to the colliders posed as `frame`, keeping the tree's topology. No
    /// allocation. `capsules` must be the list the tree was built from. Returns the tree's cost
    /// relative to a fresh build at the build pose (1 = as good; a pose far from it, arms up
    /// after a T-pose build, gives more); [`ProxyBvh::update`] rebuilds above a threshold.
    pub fn refit(&mut self, capsules: &[[u32; 2]], frame: &ProxyFrame) -> f32 {
        debug_assert_eq!(capsules.len(), self.colliders);
        let cost = self.fit_boxes(capsules, frame);
        if self.built_cost > 0.0 {
            cost / self.built_cost
        } else {
            1.0
        }
    }

    /// Refits, and rebuilds when the refitted tree costs more than `max_cost_ratio` times the
    /// fresh one (range 1.2..10; 2 is a good default). Returns whether it rebuilt.
    pub fn update(
        &mut self,
        capsules: &[[u32; 2]],
        frame: &ProxyFrame,
        max_cost_ratio: f32,
    ) -> bool {
        if capsules.len() != self.colliders {
            self.rebuild(capsules, frame);
            return true;
        }
        if self.refit(capsules, frame) > max_cost_ratio {
            // Later refits compare with this pose's fresh build.
            self.rebuild(capsules, frame);
            return true;
        }
        false
    }

    /// Writes into `out` (cleared first) the index of every collider whose box overlaps the box
    /// `[min, max]` (touching counts). No allocation once `out` has grown to its working size.
    pub fn query_aabb(&self, min: Vec3, max: Vec3, out: &mut Vec<u32>) {
        out.clear();
        if self.child.is_empty() {
            return;
        }
        let (qlo, qhi) = (Vec3A::from(min), Vec3A::from(max));
        if self.depth > STACK {
            self.visit(0, qlo, qhi, out);
            return;
        }
        let mut stack = [0u32; STACK];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let i = stack[top] as usize;
            if !(self.lo[i].cmple(qhi) & self.hi[i].cmpge(qlo)).all() {
                continue;
            }
            let [l, r] = self.child[i];
            if l & LEAF != 0 {
                out.push(l & !LEAF);
            } else {
                // Right first so that the left subtree is visited first (the crate's order).
                stack[top] = r;
                stack[top + 1] = l;
                top += 2;
            }
        }
    }

    /// The same descent as [`ProxyBvh::query_aabb`], by recursion, for trees deeper than the
    /// fixed stack.
    fn visit(&self, i: usize, qlo: Vec3A, qhi: Vec3A, out: &mut Vec<u32>) {
        if !(self.lo[i].cmple(qhi) & self.hi[i].cmpge(qlo)).all() {
            return;
        }
        let [l, r] = self.child[i];
        if l & LEAF != 0 {
            out.push(l & !LEAF);
        } else {
            self.visit(l as usize, qlo, qhi, out);
            self.visit(r as usize, qlo, qhi, out);
        }
    }

    /// [`ProxyBvh::query_aabb`] with the box around a sphere (a particle at `center` with a
    /// search radius: its thickness plus its motion this step).
    pub fn query_sphere(&self, center: Vec3, radius: f32, out: &mut Vec<u32>) {
        self.query_aabb(
            center - Vec3::splat(radius),
            center + Vec3::splat(radius),
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: u32) -> (Vec<[u32; 2]>, ProxyFrame) {
        let frame = ProxyFrame {
            center: (0..n)
                .map(|i| Vec3::new(i as f32 * 0.1, (i % 3) as f32 * 0.2, 0.0))
                .collect(),
            radius: vec![0.05; n as usize],
        };
        ((0..n - 1).map(|i| [i, i + 1]).collect(), frame)
    }

    #[test]
    fn refit_boxes_contain_their_leaves() {
        let (caps, frame) = chain(40);
        let mut t = ProxyBvh::build(&caps, &frame);
        let moved = ProxyFrame {
            center: frame
                .center
                .iter()
                .map(|c| Vec3::new(c.y, -c.x, c.z + 1.0))
                .collect(),
            radius: frame.radius.clone(),
        };
        t.refit(&caps, &moved);
        for i in 0..t.child.len() {
            let mut stack = vec![i];
            while let Some(j) = stack.pop() {
                let [l, r] = t.child[j];
                if l & LEAF != 0 {
                    let (lo, hi) = capsule_box(caps[(l & !LEAF) as usize], &moved);
                    assert!(t.lo[i].cmple(lo).all() && t.hi[i].cmpge(hi).all());
                } else {
                    stack.push(l as usize);
                    stack.push(r as usize);
                }
            }
        }
    }

    #[test]
    fn recursion_fallback_answers_like_the_stack() {
        let (caps, frame) = chain(60);
        let t = ProxyBvh::build(&caps, &frame);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..50 {
            let p = Vec3A::new(i as f32 * 0.13, 0.1, 0.0);
            t.query_aabb(Vec3::from(p - 0.07), Vec3::from(p + 0.07), &mut a);
            b.clear();
            t.visit(0, p - 0.07, p + 0.07, &mut b);
            assert_eq!(a, b);
        }
    }
}
