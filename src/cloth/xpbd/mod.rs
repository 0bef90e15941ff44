//! The XPBD model (PHYSICS.md §7): position-based dynamics with compliant constraints
//! (Macklin, Müller & Chentanez 2016) in small steps (Macklin et al. 2019): many substeps, one
//! constraint iteration each. Its substep order is in [`step`] (read that first); its own
//! stages, one file each: `forces` (external forces: wind), `integrate` (prediction, and the
//! velocity damping that ends a substep) and `constrain` (stretch, shear and bending springs as
//! distance constraints with compliance 1/k, coloured Gauss–Seidel; tethers). The stages it
//! shares with the mass-spring model (pins, adhesion, self-collision, collision with friction
//! and the velocity update) are in `stages/`.

pub mod constrain;
pub mod forces;
pub mod integrate;
pub mod step;
