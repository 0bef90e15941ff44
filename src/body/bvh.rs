//! A bounding volume hierarchy over the body's colliders (crate `bvh`, SAH build), refitted every
//! frame and queried per cloth particle without allocating.
//!
//! This is the only file that sees `bvh` and `nalgebra`; everything public takes glam types.
//! The crate builds the tree and owns its layout; refitting is done here: a child node always has
//! a larger index than its parent in `bvh`'s node array (its builder places the left child right
//! after the parent and the right child after the left subtree), so one backward sweep over the
//! nodes recomputes every box bottom-up.

use crate::body::proxies::ProxyFrame;
use crate::math::Vec3;
use bvh::aabb::{Aabb, Bounded};
use bvh::bounding_hierarchy::BHShape;
use bvh::bvh::{Bvh, BvhNode};
use nalgebra::Point3;

/// The box of one collider (capsule `[a, b]`), as the `bvh` crate wants its shapes.
#[derive(Clone, Copy, Debug)]
struct Leaf {
    aabb: Aabb<f32, 3>,
    node: usize,
}

impl Bounded<f32, 3> for Leaf {
    fn aabb(&self) -> Aabb<f32, 3> {
        self.aabb
    }
}

impl BHShape<f32, 3> for Leaf {
    fn set_bh_node_index(&mut self, index: usize) {
        self.node = index;
    }
    fn bh_node_index(&self) -> usize {
        self.node
    }
}

fn point(v: Vec3) -> Point3<f32> {
    Point3::new(v.x, v.y, v.z)
}

fn capsule_aabb(cap: [u32; 2], frame: &ProxyFrame) -> Aabb<f32, 3> {
    let (a, b) = (cap[0] as usize, cap[1] as usize);
    let (ca, ra) = (frame.center[a], frame.radius[a]);
    let (cb, rb) = (frame.center[b], frame.radius[b]);
    let min = (ca - Vec3::splat(ra)).min(cb - Vec3::splat(rb));
    let max = (ca + Vec3::splat(ra)).max(cb + Vec3::splat(rb));
    Aabb::with_bounds(point(min), point(max))
}

fn half_area(b: &Aabb<f32, 3>) -> f32 {
    let d = b.max - b.min;
    d.x * d.y + d.y * d.z + d.z * d.x
}

/// BVH over the colliders `capsules[i] = [a, b]` of a [`ProxyFrame`]; queries answer collider
/// indices `i`.
#[derive(Clone, Debug)]
pub struct ProxyBvh {
    bvh: Bvh<f32, 3>,
    leaves: Vec<Leaf>,
    /// Scratch for refitting: the box of every node.
    node_aabb: Vec<Aabb<f32, 3>>,
    /// Summed half-areas of the inner nodes' boxes right after the last build (the SAH cost scale).
    built_cost: f32,
}

impl ProxyBvh {
    /// Builds the tree over the colliders posed as `frame`.
    pub fn build(capsules: &[[u32; 2]], frame: &ProxyFrame) -> Self {
        let mut leaves: Vec<Leaf> = capsules
            .iter()
            .map(|&c| Leaf {
                aabb: capsule_aabb(c, frame),
                node: 0,
            })
            .collect();
        let bvh = Bvh::build(&mut leaves);
        let node_aabb = vec![Aabb::empty(); bvh.nodes.len()];
        let mut out = Self {
            bvh,
            leaves,
            node_aabb,
            built_cost: 0.0,
        };
        out.built_cost = out.cost();
        out
    }

    /// Number of colliders.
    pub fn len(&self) -> usize {
        self.leaves.len()
    }

    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    /// Rebuilds the tree for a new pose (allocates; use when [`ProxyBvh::refit`] reports a tree
    /// that has degraded).
    pub fn rebuild(&mut self, capsules: &[[u32; 2]], frame: &ProxyFrame) {
        *self = Self::build(capsules, frame);
    }

    /// Summed half-areas of the inner nodes' child boxes: proportional to the expected cost of a
    /// query (the SAH).
    fn cost(&self) -> f32 {
        let mut sum = 0.0;
        for n in &self.bvh.nodes {
            if let BvhNode::Node {
                child_l_aabb,
                child_r_aabb,
                ..
            } = n
            {
                sum += half_area(child_l_aabb) + half_area(child_r_aabb);
            }
        }
        sum
    }

    /// Moves the boxes to the colliders posed as `frame`, keeping the tree's topology. No
    /// allocation. `capsules` must be the list the tree was built from. Returns the tree's cost
    /// relative to a fresh build at the build pose (1 = as good; a pose far from it, arms up
    /// after a T-pose build, gives more); [`ProxyBvh::update`] rebuilds above a threshold.
    pub fn refit(&mut self, capsules: &[[u32; 2]], frame: &ProxyFrame) -> f32 {
        debug_assert_eq!(capsules.len(), self.leaves.len());
        for (leaf, &cap) in self.leaves.iter_mut().zip(capsules) {
            leaf.aabb = capsule_aabb(cap, frame);
        }
        let mut cost = 0.0;
        for i in (0..self.bvh.nodes.len()).rev() {
            match &mut self.bvh.nodes[i] {
                BvhNode::Leaf { shape_index, .. } => {
                    self.node_aabb[i] = self.leaves[*shape_index].aabb;
                }
                BvhNode::Node {
                    child_l_index,
                    child_l_aabb,
                    child_r_index,
                    child_r_aabb,
                    ..
                } => {
                    *child_l_aabb = self.node_aabb[*child_l_index];
                    *child_r_aabb = self.node_aabb[*child_r_index];
                    cost += half_area(child_l_aabb) + half_area(child_r_aabb);
                    self.node_aabb[i] = child_l_aabb.join(child_r_aabb);
                }
            }
        }
        if self.built_cost > 0.0 {
            cost / self.built_cost
        } else {
            1.0
        }
    }

    /// Refits, and rebuilds when the refitted tree costs more than `max_cost_ratio` times a fresh
    /// one (range 1.2..10; 2 is a good default). Returns whether it rebuilt.
    pub fn update(
        &mut self,
        capsules: &[[u32; 2]],
        frame: &ProxyFrame,
        max_cost_ratio: f32,
    ) -> bool {
        if capsules.len() != self.leaves.len() {
            self.rebuild(capsules, frame);
            return true;
        }
        let ratio = self.refit(capsules, frame);
        if ratio > max_cost_ratio {
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
        if self.bvh.nodes.is_empty() {
            return;
        }
        let q = Aabb::with_bounds(point(min), point(max));
        if let BvhNode::Leaf { shape_index, .. } = self.bvh.nodes[0] {
            if q.intersects_aabb(&self.leaves[shape_index].aabb) {
                out.push(shape_index as u32);
            }
            return;
        }
        self.visit(0, &q, out);
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

    /// Depth-first descent through the children whose boxes overlap `q`; recursion depth is the
    /// tree's depth, so no heap stack is needed.
    fn visit(&self, node: usize, q: &Aabb<f32, 3>, out: &mut Vec<u32>) {
        match &self.bvh.nodes[node] {
            BvhNode::Leaf { shape_index, .. } => out.push(*shape_index as u32),
            BvhNode::Node {
                child_l_index,
                child_l_aabb,
                child_r_index,
                child_r_aabb,
                ..
            } => {
                if q.intersects_aabb(child_l_aabb) {
                    self.visit(*child_l_index, q, out);
                }
                if q.intersects_aabb(child_r_aabb) {
                    self.visit(*child_r_index, q, out);
                }
            }
        }
    }

    /// The box of collider `i` as the tree holds it (for tests and debug drawing).
    pub fn collider_box(&self, i: usize) -> (Vec3, Vec3) {
        let b = &self.leaves[i].aabb;
        (
            Vec3::new(b.min.x, b.min.y, b.min.z),
            Vec3::new(b.max.x, b.max.y, b.max.z),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refit_equals_fresh_boxes() {
        let frame = ProxyFrame {
            center: (0..20)
                .map(|i| Vec3::new(i as f32 * 0.1, (i % 3) as f32 * 0.2, 0.0))
                .collect(),
            radius: vec![0.05; 20],
        };
        let caps: Vec<[u32; 2]> = (0..19).map(|i| [i, i + 1]).collect();
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
        // Every inner node's child boxes contain the boxes of the leaves below them.
        for n in &t.bvh.nodes {
            if let BvhNode::Node {
                child_l_index,
                child_l_aabb,
                ..
            } = n
            {
                let mut stack = vec![*child_l_index];
                while let Some(i) = stack.pop() {
                    match &t.bvh.nodes[i] {
                        BvhNode::Leaf { shape_index, .. } => {
                            let b = capsule_aabb(caps[*shape_index], &moved);
                            assert!(child_l_aabb.approx_contains_aabb_eps(&b, 1e-6));
                        }
                        BvhNode::Node {
                            child_l_index,
                            child_r_index,
                            ..
                        } => {
                            stack.push(*child_l_index);
                            stack.push(*child_r_index);
                        }
                    }
                }
            }
        }
    }
}
