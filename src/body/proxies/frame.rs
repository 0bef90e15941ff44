//! The per-frame update: the skin matrices of a pose ([`world_from_bind`]), the proxies moved
//! with them into world space ([`Proxies::update`], no allocation), and the posed frame
//! ([`ProxyFrame`]) the cloth collides with, interpolated between frames.

use super::capsule::tapered_capsule_closest;
use super::Proxies;
use crate::anim::Skin;
use crate::math::{Mat4, Vec3, Vec3A};
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

/// What [`ProxyFrame::yield_to`] did to one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Yielded {
    /// Spheres made smaller.
    pub spheres: usize,
    /// The deepest a point lay inside a proxy before, m.
    pub deepest: f32,
}

impl ProxyFrame {
    /// Makes the proxies that swallow one of `points` (the garments' pins, this frame) more than
    /// `allow` deep smaller, until they reach no deeper than that; returns what it did.
    ///
    /// A pin is bound a clearance off the skin people see, so a proxy that swallows it deeply
    /// stands far off the skin there: a proxy of one bone over-covering where another bone's
    /// skin comes close. The KayKit Barbarian's round chest is fitted with spheres up to 49 cm
    /// across whose tops reach the back of its head: when it falls back (`Death_A`) the
    /// headband's knot lies up to 24 cm inside them, and the tails, held on their surface,
    /// stretched to 6.7 times their length. Made smaller while they do, the proxies still
    /// keep the cloth off the rest of the body, and the skin contact keeps it off the skin
    /// where they gave way. `capsules` are the proxies' hulls; each sphere flagged in `yielding`
    /// shrinks by the largest excess of a hull it belongs to (both ends of the hull alike), never
    /// below 1 mm; the others stay as fitted.
    pub fn yield_to(
        &mut self,
        capsules: &[[u32; 2]],
        yielding: &[bool],
        points: &[Vec3],
        allow: f32,
    ) -> Yielded {
        let mut out = Yielded::default();
        if points.is_empty() || capsules.is_empty() {
            return out;
        }
        let (mut lo, mut hi) = (Vec3A::splat(f32::INFINITY), Vec3A::splat(f32::NEG_INFINITY));
        for &p in points {
            lo = lo.min(p.into());
            hi = hi.max(p.into());
        }
        let n = self.radius.len();
        let mut shrink: Vec<(u32, f32)> = Vec::new();
        for &[a, b] in capsules {
            let (a, b) = (a as usize, b as usize);
            let gives = |i: usize| yielding.get(i).copied().unwrap_or(false);
            if a >= n || b >= n || !(gives(a) || gives(b)) {
                continue;
            }
            let (ca, cb) = (Vec3A::from(self.center[a]), Vec3A::from(self.center[b]));
            let (ra, rb) = (self.radius[a], self.radius[b]);
            // Only a point deeper than `allow` matters: the hull's box shrunk by it.
            let clo = (ca - ra).min(cb - rb) + allow;
            let chi = (ca + ra).max(cb + rb) - allow;
            if clo.cmpgt(hi).any() || chi.cmplt(lo).any() {
                continue;
            }
            let mut excess = 0.0f32;
            for &p in points {
                let p = Vec3A::from(p);
                if p.cmplt(clo).any() || p.cmpgt(chi).any() {
                    continue;
                }
                let d = -tapered_capsule_closest(p, ca, ra, cb, rb).distance;
                out.deepest = out.deepest.max(d);
                excess = excess.max(d - allow);
            }
            if excess > 0.0 {
                for i in [a, b].into_iter().filter(|&i| gives(i)) {
                    shrink.push((i as u32, excess));
                }
            }
        }
        if shrink.is_empty() {
            return out;
        }
        shrink.sort_unstable_by(|x, y| x.0.cmp(&y.0).then(y.1.total_cmp(&x.1)));
        shrink.dedup_by_key(|x| x.0);
        for (s, e) in shrink {
            let r = &mut self.radius[s as usize];
            *r = (*r - e).max(1e-3f32.min(*r));
            out.spheres += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A proxy gives way to a pin it swallows deeper than the allowance, until the pin is that
    /// deep; one that does not reach so deep, and its neighbours, stay as fitted.
    #[test]
    fn a_proxy_gives_way_to_a_pin_it_swallows() {
        let mut f = ProxyFrame {
            center: vec![
                Vec3::ZERO,
                Vec3::new(0.0, 0.5, 0.0),
                Vec3::new(2.0, 0.0, 0.0),
            ],
            radius: vec![0.2, 0.2, 0.1],
        };
        let caps = [[0, 1], [2, 2]];
        // 10 cm inside the first capsule's axis end at c1, 1 cm inside the sphere.
        let pins = [Vec3::new(0.1, 0.0, 0.0), Vec3::new(2.09, 0.0, 0.0)];
        let y = f.yield_to(&caps, &[true; 3], &pins, 0.03);
        assert_eq!(y.spheres, 2);
        assert!((y.deepest - 0.1).abs() < 1e-5, "{}", y.deepest);
        // Both ends of the capsule by the excess (7 cm): the pin is 3 cm deep.
        assert!((f.radius[0] - 0.13).abs() < 1e-5 && (f.radius[1] - 0.13).abs() < 1e-5);
        let d = tapered_capsule_closest(
            Vec3A::from(pins[0]),
            f.center[0].into(),
            f.radius[0],
            f.center[1].into(),
            f.radius[1],
        )
        .distance;
        assert!((d + 0.03).abs() < 1e-5, "{d}");
        assert_eq!(f.radius[2], 0.1);
        // Nothing swallowed that deep: nothing changes.
        let before = f.clone();
        assert_eq!(
            f.yield_to(&caps, &[true; 3], &pins, 0.05),
            Yielded::default()
        );
        // Spheres not flagged stay as fitted.
        let mut g = before.clone();
        assert_eq!(
            g.yield_to(&caps, &[false; 3], &pins, 0.0),
            Yielded::default()
        );
        assert_eq!(g, before);
        assert_eq!(f, before);
    }
}
