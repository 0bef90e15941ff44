//! Skeletons, clips, sampling, forward kinematics and playback.

pub mod clip;
pub mod pose;
pub mod skeleton;

pub use clip::{Clip, Interpolation, Track};
pub use pose::Pose;
pub use skeleton::{Skeleton, Skin};
