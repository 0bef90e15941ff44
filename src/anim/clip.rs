//! Animation clips: keyframe tracks on nodes.

use crate::math::{Quat, Vec3};

/// glTF sampler interpolation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    Step,
    Linear,
    /// Hermite spline; `values` holds three entries per key: in-tangent, value, out-tangent
    /// (glTF §3.11, Appendix C), tangents to be scaled by the key interval.
    CubicSpline,
}

/// One animated property of one node.
#[derive(Clone, Debug, PartialEq)]
pub struct Track<T> {
    /// Node index into [`crate::anim::Skeleton`].
    pub node: u32,
    /// Key times in seconds, strictly increasing, on the clip's timeline (may start after 0).
    pub times: Vec<f32>,
    /// One value per key (three per key for [`Interpolation::CubicSpline`]).
    pub values: Vec<T>,
    pub interpolation: Interpolation,
}

/// An animation: every channel of one glTF animation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Clip {
    pub name: String,
    /// First key time over all tracks (often 0, sometimes 1/30 s in Mixamo exports).
    pub start: f32,
    /// Last key time over all tracks: the clip plays on `[start, end]`.
    pub end: f32,
    pub translations: Vec<Track<Vec3>>,
    pub rotations: Vec<Track<Quat>>,
    pub scales: Vec<Track<Vec3>>,
}

impl Clip {
    /// Length of the playable range in seconds.
    pub fn duration(&self) -> f32 {
        (self.end - self.start).max(0.0)
    }

    pub fn channel_count(&self) -> usize {
        self.translations.len() + self.rotations.len() + self.scales.len()
    }
}
