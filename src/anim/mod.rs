//! Skeletons, clips, sampling, forward kinematics and playback.

pub mod clip;
pub mod player;
pub mod pose;
pub mod skeleton;

pub use clip::{Clip, Interpolation, Track};
pub use player::{LoopMode, Player, RootMotion};
pub use pose::{sample_track, slerp_shortest, Pose};
pub use skeleton::{Skeleton, Skin};
