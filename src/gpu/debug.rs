//! Debug drawing: lines (skeleton bones, BVH boxes), and solid shapes (body-proxy spheres and
//! tapered capsules, pin markers), collected on the CPU each frame in world space and drawn by
//! the renderer after the scene (shaders/debug.wgsl). Lines are drawn over everything (x-ray:
//! a skeleton inside the body stays visible); solids are depth-tested.

use bytemuck::{Pod, Zeroable};

use super::mesh::MeshData;
use crate::math::{Vec3, Vec4};

/// A line vertex, 32 bytes. Mirrors `vs_line`'s inputs in shaders/debug.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct DebugLineVertex {
    /// xyz world position (m), w = 1.
    pub pos: [f32; 4],
    /// Linear RGBA.
    pub color: [f32; 4],
}

/// A solid vertex, 48 bytes. Mirrors `vs_solid`'s inputs in shaders/debug.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct DebugSolidVertex {
    /// xyz world position (m), w = 1.
    pub pos: [f32; 4],
    /// xyz unit normal, w = 0.
    pub normal: [f32; 4],
    /// Linear RGBA.
    pub color: [f32; 4],
}

/// This frame's debug geometry (clear it and refill it every frame).
#[derive(Clone, Debug, Default)]
pub struct DebugDraw {
    /// Line list: two vertices per segment.
    pub lines: Vec<DebugLineVertex>,
    /// Triangle list (non-indexed).
    pub solids: Vec<DebugSolidVertex>,
}

fn v4(p: Vec3, w: f32) -> [f32; 4] {
    [p.x, p.y, p.z, w]
}

impl DebugDraw {
    pub fn clear(&mut self) {
        self.lines.clear();
        self.solids.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.solids.is_empty()
    }

    pub fn line(&mut self, a: Vec3, b: Vec3, color: Vec4) {
        let c = color.to_array();
        self.lines.push(DebugLineVertex {
            pos: v4(a, 1.0),
            color: c,
        });
        self.lines.push(DebugLineVertex {
            pos: v4(b, 1.0),
            color: c,
        });
    }

    /// The 12 edges of an axis-aligned box (a BVH node).
    pub fn aabb(&mut self, min: Vec3, max: Vec3, color: Vec4) {
        let corner = |i: u32| {
            Vec3::new(
                if i & 1 == 0 { min.x } else { max.x },
                if i & 2 == 0 { min.y } else { max.y },
                if i & 4 == 0 { min.z } else { max.z },
            )
        };
        for i in 0..8u32 {
            for bit in [1u32, 2, 4] {
                if i & bit == 0 {
                    self.line(corner(i), corner(i | bit), color);
                }
            }
        }
    }

    /// Bones as lines from each joint to its parent (`parents[i] < i`), given joint positions.
    pub fn skeleton(&mut self, joint_positions: &[Vec3], parents: &[Option<u32>], color: Vec4) {
        for (i, parent) in parents.iter().enumerate() {
            if let (Some(p), Some(&a)) = (parent, joint_positions.get(i)) {
                if let Some(&b) = joint_positions.get(*p as usize) {
                    self.line(b, a, color);
                }
            }
        }
    }

    fn mesh(&mut self, m: &MeshData, color: Vec4) {
        let c = color.to_array();
        for &i in &m.indices {
            let i = i as usize;
            self.solids.push(DebugSolidVertex {
                pos: v4(m.positions[i], 1.0),
                normal: v4(m.normals[i], 0.0),
                color: c,
            });
        }
    }

    /// A body-proxy sphere.
    pub fn sphere(&mut self, center: Vec3, radius: f32, color: Vec4) {
        self.mesh(&MeshData::uv_sphere(center, radius, 16, 8), color);
    }

    /// A tapered capsule: the convex hull of spheres (c1, r1) and (c2, r2).
    pub fn capsule(&mut self, c1: Vec3, r1: f32, c2: Vec3, r2: f32, color: Vec4) {
        self.mesh(&MeshData::tapered_capsule(c1, r1, c2, r2, 16, 6), color);
    }

    /// A pin marker: a small sphere of `radius` (m) at `p`.
    pub fn point(&mut self, p: Vec3, radius: f32, color: Vec4) {
        self.mesh(&MeshData::uv_sphere(p, radius, 8, 4), color);
    }
}
