//! The substep stages every cloth model shares, one file each: `pins` (pinned particles follow
//! their attachment), `wet` (stage `adhere`: wet cloth's adhesion forces), `self_collision`
//! (stage `self_collide`: particle–particle contact within and between garments) and `collide`
//! (particles against the colliders, friction, velocity; `faces`, its pass for colliders thinner
//! than the cloth's triangles); `frame` is the loop over a frame's
//! substeps with the counters and timings a frame reports. Each works on the model, the state
//! and the [`ClothWorkspace`](super::ClothWorkspace); the models' own stages and their order
//! are in their folders (`mass_spring/`, `xpbd/`).

pub mod collide;
pub mod faces;
pub mod frame;
pub mod pins;
pub mod self_collision;
pub mod skin;
pub mod wet;
