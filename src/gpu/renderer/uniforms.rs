//! The uniform blocks the renderer uploads each frame. Every struct mirrors a WGSL struct of the
//! same name (shaders/common.wgsl, shadow.wgsl, debug.wgsl) and documents its byte layout.

use bytemuck::{Pod, Zeroable};

use super::ObjectMaterial;
use crate::math::{Mat3, Mat4};

/// 320 bytes. Mirrors `Frame` in shaders/common.wgsl (and debug.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(super) struct FrameUniform {
    pub(super) clip_from_world: [[f32; 4]; 4],
    pub(super) light_clip_from_world: [[f32; 4]; 4],
    pub(super) eye_world: [f32; 4],
    pub(super) light_dir_world: [f32; 4],
    pub(super) light_color: [f32; 4],
    pub(super) ambient_color: [f32; 4],
    /// x 1/shadow-map size, y depth bias (NDC), z shadows on, w unused.
    pub(super) shadow_params: [f32; 4],
    pub(super) _pad: [[f32; 4]; 3],
    /// Inverse of `clip_from_world`, for the sky pass.
    pub(super) world_from_clip: [[f32; 4]; 4],
}

/// 256 bytes. Mirrors `ShadowFrame` in shaders/shadow.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(super) struct ShadowFrameUniform {
    pub(super) light_clip_from_world: [[f32; 4]; 4],
    pub(super) _pad: [[f32; 4]; 12],
}

/// 192 bytes (stored at a 256-byte stride for dynamic offsets). Mirrors `Object` in
/// shaders/common.wgsl and shaders/shadow.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(super) struct ObjectUniform {
    pub(super) world_from_object: [[f32; 4]; 4],
    pub(super) normal_from_object: [[f32; 4]; 4],
    pub(super) base_color: [f32; 4],
    /// x specular, y shininess, z bump strength, w displacement (m).
    pub(super) material: [f32; 4],
    /// x uv scale, y rim power, z rim strength, w mirror tint.
    pub(super) extra: [f32; 4],
    pub(super) _pad: [f32; 4],
}

impl ObjectUniform {
    pub(super) fn new(world_from_object: Mat4, m: &ObjectMaterial) -> Self {
        let normal = Mat3::from_mat4(world_from_object).inverse().transpose();
        let normal = if normal.is_finite() {
            Mat4::from_mat3(normal)
        } else {
            Mat4::IDENTITY
        };
        Self {
            world_from_object: world_from_object.to_cols_array_2d(),
            normal_from_object: normal.to_cols_array_2d(),
            base_color: m.base_color.to_array(),
            material: [m.specular, m.shininess, m.bump_strength, m.displacement],
            extra: [m.uv_scale, m.rim_power, m.rim_strength, m.mirror_tint],
            _pad: [0.0; 4],
        }
    }
}

pub(super) const OBJECT_STRIDE: u64 = 256;
