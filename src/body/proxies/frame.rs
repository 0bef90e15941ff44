//! The per-frame update: the skin matrices of a pose ([`world_from_bind`]), the proxies moved
//! with them into world space ([`Proxies::update`], no allocation), and the posed frame
//! ([`ProxyFrame`]) the cloth collides with, interpolated between frames.

use super::Proxies;
use crate::anim::Skin;
use crate::math::{Mat4, Vec3};
use crate::rig::Rig;

/// Proxies posed for one frame, in world space (metres).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProxyFrame {
    pub center: Vec<Vec3>,
    pub radius: Vec<f32>,
}

impl ProxyFrame {
    /// The proxies between two frames, `t` in [0, 1] from `prev` to `next`, written into `out`
    /// (no allocation once it has the size): PHYSICS.md §2 "Moving colliders" interpolates the
    /// body at every substep so that a fast limb sweeps through the cloth in small steps; the
    /// collider's velocity there is `(next.center - prev.center) / frame_dt`.
    pub fn lerp(prev: &ProxyFrame, next: &ProxyFrame, t: f32, out: &mut ProxyFrame) {
        let n = prev.center.len().min(next.center.len());
        out.center.resize(n, Vec3::ZERO);
        out.radius.resize(n, 0.0);
        for i in 0..n {
            out.center[i] = prev.center[i].lerp(next.center[i], t);
            out.radius[i] = prev.radius[i] + (next.radius[i] - prev.radius[i]) * t;
        }
    }
}

/// `world_from_bind[k] = world_from_node[joints[k]] * inverse_bind[k]` for every joint of `skin`
/// (the skin matrices), written into `out` without reallocating once it has the right length.
/// A joint naming a node outside `world_from_node` gets the identity.
pub fn world_from_bind(world_from_node: &[Mat4], skin: &Skin, out: &mut Vec<Mat4>) {
    out.resize(skin.joints.len(), Mat4::IDENTITY);
    for (k, o) in out.iter_mut().enumerate() {
        let node = skin.joints[k] as usize;
        let ib = skin.inverse_bind.get(k).copied().unwrap_or(Mat4::IDENTITY);
        *o = world_from_node
            .get(node)
            .map_or(Mat4::IDENTITY, |w| *w * ib);
    }
}

/// The factor by which `m` scales lengths: the longest of its three axes, so that a sphere moved
/// by a non-uniformly scaled joint still encloses the ellipsoid it becomes.
pub(super) fn max_axis_scale(m: &Mat4) -> f32 {
    m.x_axis
        .truncate()
        .length_squared()
        .max(m.y_axis.truncate().length_squared())
        .max(m.z_axis.truncate().length_squared())
        .sqrt()
}

impl Proxies {
    /// Moves every sphere to world space with the skin matrices (`world_from_bind[k]`, see
    /// [`world_from_bind`]); radii scale with the matrix. No allocation once `out` has the size.
    pub fn update(&self, world_from_bind: &[Mat4], out: &mut ProxyFrame) {
        let n = self.joint.len();
        out.center.resize(n, Vec3::ZERO);
        out.radius.resize(n, 0.0);
        for i in 0..n {
            let m = world_from_bind
                .get(self.joint[i] as usize)
                .copied()
                .unwrap_or(Mat4::IDENTITY);
            out.center[i] = m.transform_point3(self.center_in_bind[i]);
            out.radius[i] = self.radius[i] * max_axis_scale(&m);
        }
    }

    /// The proxies at the rest (= bind) pose, in world space.
    pub fn rest_frame(&self, rig: &Rig, skin: usize) -> ProxyFrame {
        let mut frame = ProxyFrame::default();
        if let Some(s) = rig.skins.get(skin) {
            let mut wfb = Vec::new();
            world_from_bind(&rig.skeleton.rest_world(), s, &mut wfb);
            self.update(&wfb, &mut frame);
        }
        frame
    }
}
