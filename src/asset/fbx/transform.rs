//! A model's local transform as the FBX SDK computes it:
//! `T · Roff · Rp · Rpre · R · Rpost⁻¹ · Rp⁻¹ · Soff · Sp · S · Sp⁻¹`, with `R` in the model's
//! `RotationOrder`, and the conversions between FBX Euler angles and quaternions.

use glam::{DMat4, DQuat, DVec3, EulerRot};

use super::scene::Props;

/// The static transform properties of a model.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ModelXf {
    pub t: DVec3,
    /// Euler degrees.
    pub r: DVec3,
    pub s: DVec3,
    pub order: u8,
    pub pre: DVec3,
    pub post: DVec3,
    pub roff: DVec3,
    pub rpiv: DVec3,
    pub soff: DVec3,
    pub spiv: DVec3,
    pub geo_t: DVec3,
    pub geo_r: DVec3,
    pub geo_s: DVec3,
}

impl ModelXf {
    pub(super) fn read(p: &Props) -> Self {
        let active = p.num("RotationActive", 0.0) != 0.0;
        ModelXf {
            t: p.vec3("Lcl Translation", DVec3::ZERO),
            r: p.vec3("Lcl Rotation", DVec3::ZERO),
            s: p.vec3("Lcl Scaling", DVec3::ONE),
            order: if active {
                p.num("RotationOrder", 0.0) as u8
            } else {
                0
            },
            pre: if active {
                p.vec3("PreRotation", DVec3::ZERO)
            } else {
                DVec3::ZERO
            },
            post: if active {
                p.vec3("PostRotation", DVec3::ZERO)
            } else {
                DVec3::ZERO
            },
            roff: p.vec3("RotationOffset", DVec3::ZERO),
            rpiv: p.vec3("RotationPivot", DVec3::ZERO),
            soff: p.vec3("ScalingOffset", DVec3::ZERO),
            spiv: p.vec3("ScalingPivot", DVec3::ZERO),
            geo_t: p.vec3("GeometricTranslation", DVec3::ZERO),
            geo_r: p.vec3("GeometricRotation", DVec3::ZERO),
            geo_s: p.vec3("GeometricScaling", DVec3::ONE),
        }
    }

    /// `parent_from_model` for the given Lcl T, R (degrees), S.
    pub fn local(&self, t: DVec3, r: DVec3, s: DVec3) -> DMat4 {
        let rot = |v: DVec3, order: u8| DMat4::from_quat(euler_quat(v, order));
        let tr = DMat4::from_translation;
        tr(t)
            * tr(self.roff)
            * tr(self.rpiv)
            * rot(self.pre, 0)
            * rot(r, self.order)
            * rot(self.post, 0).inverse()
            * tr(-self.rpiv)
            * tr(self.soff)
            * tr(self.spiv)
            * DMat4::from_scale(s)
            * tr(-self.spiv)
    }

    pub fn rest_local(&self) -> DMat4 {
        self.local(self.t, self.r, self.s)
    }

    /// The geometric transform (applies to the model's geometry only, not to its children).
    pub fn geometric(&self) -> DMat4 {
        DMat4::from_translation(self.geo_t)
            * DMat4::from_quat(euler_quat(self.geo_r, 0))
            * DMat4::from_scale(self.geo_s)
    }
}

/// An FBX Euler rotation (degrees) as a quaternion. `order` is FBX's `EFbxRotationOrder`:
/// 0 XYZ, 1 XZY, 2 YZX, 3 YXZ, 4 ZXY, 5 ZYX, 6 spheric XYZ (read as XYZ); "XYZ" rotates about X
/// first, so its matrix is `Rz · Ry · Rx`.
pub fn euler_quat(deg: DVec3, order: u8) -> DQuat {
    let x = DQuat::from_rotation_x(deg.x.to_radians());
    let y = DQuat::from_rotation_y(deg.y.to_radians());
    let z = DQuat::from_rotation_z(deg.z.to_radians());
    match order {
        1 => y * z * x,
        2 => x * z * y,
        3 => z * x * y,
        4 => y * x * z,
        5 => x * y * z,
        _ => z * y * x,
    }
}

/// A quaternion as FBX Euler XYZ degrees (`Rz · Ry · Rx`), the inverse of
/// [`euler_quat`]`(_, 0)`.
pub fn quat_euler_xyz(q: DQuat) -> DVec3 {
    // glam's EulerRot::ZYX gives (z, y, x) with q = Rz · Ry · Rx.
    let (z, y, x) = q.to_euler(EulerRot::ZYX);
    DVec3::new(x.to_degrees(), y.to_degrees(), z.to_degrees())
}
