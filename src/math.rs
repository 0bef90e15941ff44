//! Maths shared by every stage: glam re-exports, [`Transform`] (TRS) and [`DualQuat`].
//!
//! # Convention
//! Transforms are named `a_from_b`: a matrix that maps coordinates expressed in space `b` to space
//! `a`. They compose right to left, so `world_from_vertex = world_from_joint * joint_from_bind`.
//! Positions carry their space in their name (`x_world`, `center_in_joint`).
//! glTF is Y-up, right-handed, metres unless the file scales itself.

pub use glam::{Affine3A, Mat3, Mat3A, Mat4, Quat, Vec2, Vec3, Vec3A, Vec4};

/// How far a perspective camera with vertical field of view `fov_y` (radians) and `aspect`
/// (width / height; anything not positive and finite counts as 1) must stand from the centre of a
/// sphere of `radius` for the sphere to fit the narrower of its two fields of view, scaled by
/// `margin` (1 = touching; 1.1 leaves 10 % to spare). The one framing rule of the renderer's
/// camera and the viewer's orbit camera.
pub fn framing_distance(radius: f32, fov_y: f32, aspect: f32, margin: f32) -> f32 {
    let aspect = if aspect.is_finite() && aspect > 0.0 {
        aspect
    } else {
        1.0
    };
    let fov_x = 2.0 * ((fov_y * 0.5).tan() * aspect).atan();
    let half = 0.5 * fov_y.min(fov_x);
    radius * margin / half.sin()
}

/// A translation–rotation–scale transform, the form glTF nodes and animation channels use.
/// As a matrix it is `T * R * S` (scale first).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    pub translation: Vec3,
    pub rotation: Quat,
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    pub const IDENTITY: Transform = Transform {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    pub fn from_translation(translation: Vec3) -> Self {
        Self {
            translation,
            ..Self::IDENTITY
        }
    }

    pub fn from_rotation(rotation: Quat) -> Self {
        Self {
            rotation,
            ..Self::IDENTITY
        }
    }

    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// Decomposes an affine matrix into TRS. A matrix with shear cannot be represented exactly;
    /// the result is then the closest TRS glam finds (callers that care compare `to_mat4`).
    pub fn from_mat4(m: &Mat4) -> Self {
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        Self {
            translation,
            rotation: rotation.normalize(),
            scale,
        }
    }

    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

/// A unit dual quaternion `real + ε dual` representing a rigid motion (Kavan et al. 2008).
/// `dual = ½ (0, t) real` for a rotation `real` followed by a translation `t`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualQuat {
    pub real: Quat,
    pub dual: Quat,
}

impl DualQuat {
    pub const IDENTITY: DualQuat = DualQuat {
        real: Quat::IDENTITY,
        dual: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
    };

    /// The rigid motion `p ↦ rotation p + translation`.
    pub fn from_rotation_translation(rotation: Quat, translation: Vec3) -> Self {
        let t = Quat::from_xyzw(translation.x, translation.y, translation.z, 0.0);
        Self {
            real: rotation,
            dual: (t * rotation) * 0.5,
        }
    }

    pub fn translation(&self) -> Vec3 {
        let t = (self.dual * 2.0) * self.real.conjugate();
        Vec3::new(t.x, t.y, t.z)
    }

    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        self.real * p + self.translation()
    }
}
