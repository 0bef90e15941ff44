//! Poses: sampling clips (glTF 2.0 §3.11 "Animations" and Appendix C "Animation Sampler
//! Interpolation Modes") and forward kinematics.
//!
//! Sampling writes only the animated channels into a [`Pose`]; callers start from the rest pose
//! (`Pose::rest`) so that channels a clip does not animate keep their rest values.
//!
//! Key lookup is a binary search per track (`partition_point`, O(log keys)). A cursor cache would
//! save a few comparisons during sequential playback, but a Mixamo clip has ~200 tracks of ≤ 600
//! keys, so a full sample costs ~2,000 comparisons: not worth state that breaks under scrubbing
//! and negative speed.

use crate::anim::{Clip, Interpolation, Skeleton, Track};
use crate::math::{Mat4, Quat, Transform, Vec3, Vec4};

/// Local transforms (`parent_from_node`) of every node of a [`crate::anim::Skeleton`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pose {
    pub local: Vec<Transform>,
}

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

    /// Overwrites `self` with `a` blended towards `b` by `s` ∈ [0, 1] per local TRS: translations
    /// and scales lerp, rotations slerp along the shortest arc. The three poses must have the
    /// same length (extra nodes in `self` are left untouched).
    pub fn blend(&mut self, a: &Pose, b: &Pose, s: f32) {
        let n = self.local.len().min(a.local.len()).min(b.local.len());
        for i in 0..n {
            let (ta, tb) = (&a.local[i], &b.local[i]);
            self.local[i] = Transform {
                translation: ta.translation.lerp(tb.translation, s),
                rotation: slerp_shortest(ta.rotation, tb.rotation, s),
                scale: ta.scale.lerp(tb.scale, s),
            };
        }
    }
}

impl Clip {
    /// Samples every track at clip time `t` (seconds, on the clip's own timeline: keys may start
    /// after 0) and overwrites the animated channels of `pose`. Before the first key a track holds
    /// its first value, after the last key its last value (glTF §3.11). Tracks that name a node
    /// outside the pose, or hold no keys, are skipped. Allocates nothing.
    pub fn sample(&self, t: f32, pose: &mut Pose) {
        for track in &self.translations {
            if let (Some(v), Some(local)) = (
                sample_track(track, t),
                pose.local.get_mut(track.node as usize),
            ) {
                local.translation = v;
            }
        }
        for track in &self.rotations {
            if let (Some(v), Some(local)) = (
                sample_track(track, t),
                pose.local.get_mut(track.node as usize),
            ) {
                local.rotation = v;
            }
        }
        for track in &self.scales {
            if let (Some(v), Some(local)) = (
                sample_track(track, t),
                pose.local.get_mut(track.node as usize),
            ) {
                local.scale = v;
            }
        }
    }

    /// The translation track of `node`, if the clip animates it.
    pub fn translation_track(&self, node: usize) -> Option<&Track<Vec3>> {
        self.translations.iter().find(|tr| tr.node as usize == node)
    }

    /// The rotation track of `node`, if the clip animates it.
    pub fn rotation_track(&self, node: usize) -> Option<&Track<Quat>> {
        self.rotations.iter().find(|tr| tr.node as usize == node)
    }
}

/// A value type a track can hold: how it interpolates linearly and as a Hermite spline.
pub trait Keyframe: Copy {
    /// Linear interpolation (`s` ∈ [0, 1]); rotations along the shortest arc.
    fn interpolate(a: Self, b: Self, s: f32) -> Self;
    /// `h00 a + h10 b + h01 c + h11 d` (component-wise), then normalised for rotations.
    fn hermite(v0: Self, m0: Self, v1: Self, m1: Self, h: [f32; 4]) -> Self;
}

impl Keyframe for Vec3 {
    fn interpolate(a: Self, b: Self, s: f32) -> Self {
        a.lerp(b, s)
    }
    fn hermite(v0: Self, m0: Self, v1: Self, m1: Self, h: [f32; 4]) -> Self {
        v0 * h[0] + m0 * h[1] + v1 * h[2] + m1 * h[3]
    }
}

impl Keyframe for Quat {
    fn interpolate(a: Self, b: Self, s: f32) -> Self {
        slerp_shortest(a, b, s)
    }
    fn hermite(v0: Self, m0: Self, v1: Self, m1: Self, h: [f32; 4]) -> Self {
        // glTF Appendix C: the spline is evaluated on the four components, then normalised.
        let v = Vec4::from(v0) * h[0]
            + Vec4::from(m0) * h[1]
            + Vec4::from(v1) * h[2]
            + Vec4::from(m1) * h[3];
        let len = v.length();
        if len > 1e-12 && len.is_finite() {
            Quat::from_vec4(v / len)
        } else {
            v0
        }
    }
}

/// Samples one track at time `t`; `None` when it has no usable key.
///
/// The number of keys is `min(times, values / stride)` so that a track whose accessors disagree
/// in length samples what it has instead of panicking.
pub fn sample_track<T: Keyframe>(track: &Track<T>, t: f32) -> Option<T> {
    let cubic = track.interpolation == Interpolation::CubicSpline;
    let stride = if cubic { 3 } else { 1 };
    let n = track.times.len().min(track.values.len() / stride);
    if n == 0 {
        return None;
    }
    // Key `k`'s value: for CUBICSPLINE the middle of (in-tangent, value, out-tangent).
    let value = |k: usize| track.values[k * stride + (stride / 2)];
    let times = &track.times[..n];
    // Number of keys at or before t (NaN compares false: treated as before the first key).
    let i = times.partition_point(|&k| k <= t);
    if i == 0 {
        return Some(value(0));
    }
    if i >= n {
        return Some(value(n - 1));
    }
    let k = i - 1;
    let (t0, t1) = (times[k], times[k + 1]);
    let td = t1 - t0;
    if td <= 0.0 || !td.is_finite() {
        return Some(value(k));
    }
    let s = ((t - t0) / td).clamp(0.0, 1.0);
    Some(match track.interpolation {
        Interpolation::Step => value(k),
        Interpolation::Linear => T::interpolate(value(k), value(k + 1), s),
        Interpolation::CubicSpline => {
            // glTF Appendix C: p(s) = (2s³−3s²+1) v_k + td (s³−2s²+s) b_k + (−2s³+3s²) v_k+1
            //                        + td (s³−s²) a_k+1,
            // with b_k the out-tangent of key k and a_k+1 the in-tangent of key k+1.
            let (s2, s3) = (s * s, s * s * s);
            let h = [
                2.0 * s3 - 3.0 * s2 + 1.0,
                td * (s3 - 2.0 * s2 + s),
                -2.0 * s3 + 3.0 * s2,
                td * (s3 - s2),
            ];
            let out_tangent = track.values[3 * k + 2];
            let in_tangent = track.values[3 * (k + 1)];
            T::hermite(value(k), out_tangent, value(k + 1), in_tangent, h)
        }
    })
}

/// Spherical linear interpolation from `a` to `b` along the shortest arc: `b` is negated when
/// `a · b < 0` (q and −q are the same rotation; real Mixamo clips flip signs between keys, and
/// interpolating across a flip without this would spin the joint the long way round).
/// Falls back to normalised lerp when the rotations are nearly equal, where slerp's
/// `sin θ` denominator loses precision and the two agree to float precision.
pub fn slerp_shortest(a: Quat, mut b: Quat, s: f32) -> Quat {
    let mut dot = a.dot(b);
    if dot < 0.0 {
        b = -b;
        dot = -dot;
    }
    let va = Vec4::from(a);
    let vb = Vec4::from(b);
    if dot > 0.9995 {
        let v = va.lerp(vb, s);
        return Quat::from_vec4(v.normalize_or(va));
    }
    let theta = dot.min(1.0).acos();
    let sin_theta = theta.sin();
    let wa = ((1.0 - s) * theta).sin() / sin_theta;
    let wb = (s * theta).sin() / sin_theta;
    let v = va * wa + vb * wb;
    Quat::from_vec4(v.normalize_or(va))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Angle between two rotations, accurate near zero (glam's `angle_between` uses acos, which
    /// loses ~1e-3 rad of precision there).
    fn ang(a: Quat, b: Quat) -> f32 {
        let d = a.conjugate() * b;
        2.0 * Vec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
    }

    fn track<T>(times: &[f32], values: Vec<T>, interpolation: Interpolation) -> Track<T> {
        Track {
            node: 0,
            times: times.to_vec(),
            values,
            interpolation,
        }
    }

    #[test]
    fn step_holds_the_left_key() {
        let tr = track(
            &[0.0, 1.0, 2.0],
            vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            Interpolation::Step,
        );
        assert_eq!(sample_track(&tr, 0.0), Some(Vec3::ZERO));
        assert_eq!(sample_track(&tr, 0.99), Some(Vec3::ZERO));
        assert_eq!(sample_track(&tr, 1.0), Some(Vec3::X));
        assert_eq!(sample_track(&tr, 1.5), Some(Vec3::X));
        assert_eq!(sample_track(&tr, 2.0), Some(Vec3::Y));
    }

    #[test]
    fn linear_at_and_between_keys_and_outside_the_range() {
        let tr = track(
            &[1.0 / 30.0, 1.0, 3.0],
            vec![
                Vec3::ZERO,
                Vec3::new(2.0, 0.0, 0.0),
                Vec3::new(2.0, 4.0, 0.0),
            ],
            Interpolation::Linear,
        );
        assert_eq!(sample_track(&tr, 1.0), Some(Vec3::new(2.0, 0.0, 0.0)));
        let mid = sample_track(&tr, 2.0).unwrap();
        assert!((mid - Vec3::new(2.0, 2.0, 0.0)).length() < 1e-6);
        // Before the first key (which is at 1/30 s, not 0) and after the last.
        assert_eq!(sample_track(&tr, -5.0), Some(Vec3::ZERO));
        assert_eq!(sample_track(&tr, 0.0), Some(Vec3::ZERO));
        assert_eq!(sample_track(&tr, 10.0), Some(Vec3::new(2.0, 4.0, 0.0)));
        assert_eq!(sample_track(&tr, f32::NAN), Some(Vec3::ZERO));
    }

    #[test]
    fn single_key_and_empty_tracks() {
        let tr = track(&[0.5], vec![Vec3::X], Interpolation::Linear);
        assert_eq!(sample_track(&tr, 0.0), Some(Vec3::X));
        assert_eq!(sample_track(&tr, 9.0), Some(Vec3::X));
        let empty: Track<Vec3> = track(&[], vec![], Interpolation::Linear);
        assert_eq!(sample_track(&empty, 0.0), None);
        // Cubic track with too few values: keys limited to what the values cover.
        let short = track(
            &[0.0, 1.0],
            vec![Vec3::ZERO, Vec3::X, Vec3::ZERO],
            Interpolation::CubicSpline,
        );
        assert_eq!(sample_track(&short, 0.7), Some(Vec3::X));
    }

    #[test]
    fn linear_rotation_is_slerp() {
        let a = Quat::IDENTITY;
        let b = Quat::from_rotation_y(1.2);
        let tr = track(&[0.0, 1.0], vec![a, b], Interpolation::Linear);
        let q = sample_track(&tr, 0.25).unwrap();
        assert!(ang(q, Quat::from_rotation_y(0.3)) < 1e-5);
    }

    #[test]
    fn rotations_follow_the_shortest_arc_under_sign_flips() {
        // Keys every 10° about a tilted axis, with every other key stored negated (as real Mixamo
        // exports do). Sampled densely, consecutive rotations must never jump: a long-way
        // interpolation would sweep ~350° within one 10° interval.
        let axis = Vec3::new(0.3, 1.0, -0.2).normalize();
        let times: Vec<f32> = (0..37).map(|i| i as f32).collect();
        let values: Vec<Quat> = (0..37)
            .map(|i| {
                let q = Quat::from_axis_angle(axis, (i as f32 * 10.0).to_radians());
                if i % 2 == 1 {
                    -q
                } else {
                    q
                }
            })
            .collect();
        let tr = track(&times, values, Interpolation::Linear);
        let mut prev = sample_track(&tr, 0.0).unwrap();
        let mut max_step = 0.0f32;
        for i in 1..=3600 {
            let q = sample_track(&tr, i as f32 * 0.01).unwrap();
            max_step = max_step.max(ang(prev, q));
            prev = q;
        }
        // 10° per key interval sampled 100 times: ~0.1° per step.
        assert!(
            max_step.to_degrees() < 0.2,
            "largest step {}°",
            max_step.to_degrees()
        );
        // Halfway between two keys of opposite sign, the rotation is the halfway angle.
        let q = sample_track(&tr, 0.5).unwrap();
        assert!(ang(q, Quat::from_axis_angle(axis, 5f32.to_radians())) < 1e-4);
    }

    #[test]
    fn cubic_spline_matches_a_hand_computed_value() {
        // Keys at t = 1 and t = 3 (td = 2): v0 = 1, out-tangent b0 = 2, v1 = 5, in-tangent a1 = -1
        // (x components). At t = 1.5: s = 0.25,
        //   h00 = 2s³−3s²+1 = 0.03125 − 0.1875 + 1 = 0.84375
        //   h10 = s³−2s²+s  = 0.015625 − 0.125 + 0.25 = 0.140625 → × td = 0.28125
        //   h01 = −2s³+3s²  = −0.03125 + 0.1875 = 0.15625
        //   h11 = s³−s²     = 0.015625 − 0.0625 = −0.046875 → × td = −0.09375
        //   p = 0.84375·1 + 0.28125·2 + 0.15625·5 + (−0.09375)(−1) = 2.28125
        let v = |x: f32| Vec3::new(x, 0.0, 0.0);
        let values = vec![v(9.0), v(1.0), v(2.0), v(-1.0), v(5.0), v(7.0)];
        let tr = track(&[1.0, 3.0], values, Interpolation::CubicSpline);
        let p = sample_track(&tr, 1.5).unwrap();
        assert!((p.x - 2.28125).abs() < 1e-6, "{p}");
        // At the keys the spline passes through the values, not the tangents.
        assert_eq!(sample_track(&tr, 1.0).unwrap().x, 1.0);
        assert!((sample_track(&tr, 3.0).unwrap().x - 5.0).abs() < 1e-6);
        assert_eq!(sample_track(&tr, 0.0).unwrap().x, 1.0);
        assert_eq!(sample_track(&tr, 4.0).unwrap().x, 5.0);
    }

    #[test]
    fn cubic_spline_rotations_are_normalised() {
        let a = Quat::IDENTITY;
        let b = Quat::from_rotation_z(1.0);
        let zero = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        let tr = track(
            &[0.0, 1.0],
            vec![zero, a, zero, zero, b, zero],
            Interpolation::CubicSpline,
        );
        for i in 0..=10 {
            let q = sample_track(&tr, i as f32 / 10.0).unwrap();
            assert!((q.length() - 1.0).abs() < 1e-6);
        }
        // Zero tangents: the path is a smoothstep of the components; halfway is their midpoint.
        let q = sample_track(&tr, 0.5).unwrap();
        assert!(ang(q, Quat::from_rotation_z(0.5)) < 1e-5);
    }

    #[test]
    fn clip_sample_overrides_only_animated_channels() {
        let rest = Transform {
            translation: Vec3::new(1.0, 2.0, 3.0),
            rotation: Quat::from_rotation_x(0.4),
            scale: Vec3::splat(2.0),
        };
        let mut pose = Pose {
            local: vec![rest; 2],
        };
        let clip = Clip {
            name: "c".into(),
            start: 0.0,
            end: 1.0,
            translations: vec![Track {
                node: 1,
                times: vec![0.0, 1.0],
                values: vec![Vec3::ZERO, Vec3::X],
                interpolation: Interpolation::Linear,
            }],
            rotations: vec![Track {
                node: 7,
                times: vec![0.0],
                values: vec![Quat::IDENTITY],
                interpolation: Interpolation::Linear,
            }],
            scales: vec![],
        };
        clip.sample(0.5, &mut pose);
        assert_eq!(pose.local[0], rest);
        assert_eq!(pose.local[1].translation, Vec3::new(0.5, 0.0, 0.0));
        assert_eq!(pose.local[1].rotation, rest.rotation);
        assert_eq!(pose.local[1].scale, rest.scale);
    }

    #[test]
    fn forward_kinematics_of_a_chain() {
        // root (translated 1 along X, rotated 90° about Z) → child (1 along X, scaled 2) → tip
        // (1 along X). Rotating the root by 90° about Z maps +X to +Y.
        let skeleton = Skeleton {
            names: vec!["root".into(), "child".into(), "tip".into()],
            parents: vec![None, Some(0), Some(1)],
            rest: vec![
                Transform {
                    translation: Vec3::X,
                    rotation: Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
                    scale: Vec3::ONE,
                },
                Transform {
                    translation: Vec3::X,
                    rotation: Quat::IDENTITY,
                    scale: Vec3::splat(2.0),
                },
                Transform::from_translation(Vec3::X),
            ],
        };
        let mut world = Vec::new();
        Pose::rest(&skeleton).world_from_node(&skeleton, &mut world);
        let origin = |m: &Mat4| m.transform_point3(Vec3::ZERO);
        assert!((origin(&world[0]) - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-6);
        assert!((origin(&world[1]) - Vec3::new(1.0, 1.0, 0.0)).length() < 1e-6);
        // The child's scale 2 doubles the tip's offset.
        assert!((origin(&world[2]) - Vec3::new(1.0, 3.0, 0.0)).length() < 1e-6);
        assert_eq!(world, skeleton.rest_world());
    }

    #[test]
    fn blend_is_continuous_and_shortest_arc() {
        let a = Pose {
            local: vec![Transform::from_rotation(Quat::from_rotation_y(0.2))],
        };
        let b = Pose {
            local: vec![Transform::from_rotation(-Quat::from_rotation_y(0.4))],
        };
        let mut out = a.clone();
        out.blend(&a, &b, 0.5);
        assert!(ang(out.local[0].rotation, Quat::from_rotation_y(0.3)) < 1e-5);
        out.blend(&a, &b, 0.0);
        assert!(ang(out.local[0].rotation, a.local[0].rotation) < 1e-6);
    }
}
