//! Poses: sampling clips and forward kinematics.

use crate::math::Transform;

/// Local transforms (`parent_from_node`) of every node of a [`crate::anim::Skeleton`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pose {
    pub local: Vec<Transform>,
}

use crate::anim::Skeleton;
use crate::math::Mat4;

impl Pose {
    /// The rest pose of a skeleton.
    pub fn rest(skeleton: &Skeleton) -> Self {
        Self {
            local: skeleton.rest.clone(),
        }
    }

    /// Forward kinematics: `world_from_node` for every node, written into `out` (resized, never
    /// reallocated once it has the right length). Relies on parents preceding children.
    pub fn world_from_node(&self, skeleton: &Skeleton, out: &mut Vec<Mat4>) {
        out.resize(self.local.len(), Mat4::IDENTITY);
        for i in 0..self.local.len() {
            let local = self.local[i].to_mat4();
            out[i] = match skeleton.parents[i] {
                Some(p) => out[p as usize] * local,
                None => local,
            };
        }
    }
}
