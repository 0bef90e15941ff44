//! The mass-spring model (PHYSICS.md §1–2): its substep order ([`step`], the file to read first)
//! and the stages only it has, one file each: `forces` (springs and wind), `integrate`
//! (Verlet or symplectic Euler with the speed limit) and `constrain` (tethers and Provot's
//! deformation limit). The stages it shares with any other model (pins, adhesion,
//! self-collision, collision) are in `stages/`.
//!
//! The second model (XPBD, PHYSICS.md §7) is the sibling folder `xpbd/`, with the same shape:
//! a `step.rs` with its substep order, plus a file for each stage of its own.

pub mod constrain;
pub mod forces;
pub mod fused;
pub mod integrate;
pub mod step;
