//! drape — skinned characters (LBS, DQS, optimized centres of rotation) wearing mass-spring
//! garments that collide with the body, themselves and each other, dry or wet.
//!
//! One frame, end to end (each arrow is a plain function over plain data):
//!
//! ```text
//! load (glTF) → sample clip → forward kinematics → skin (LBS | DQS | CoR)
//!             → move body proxies, refit BVH → step garments (substeps) → upload → draw
//! ```
//!
//! The core (everything but `gpu` and `app`) has no GPU or window dependency:
//! `cargo test --no-default-features` builds and tests it.

pub mod anim;
pub mod app;
pub mod asset;
pub mod body;
pub mod check;
pub mod cli;
pub mod cloth;
pub mod math;
pub mod memory;
pub mod ninja;
pub mod raster;
pub mod rig;
pub mod skin;

#[cfg(feature = "gpu")]
pub mod gpu;

pub use rig::Rig;
pub mod garments;
pub mod limits;
pub mod output;
pub mod scene;
