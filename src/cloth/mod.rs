//! The cloth engine: mass-spring garments with Provot's deformation limit, collisions against
//! planes, spheres and tapered capsules (static or moving) with Coulomb friction, and self- and
//! garment–garment collision by spatial hashing (PHYSICS.md §1–3).
//!
//! Data is split the way warp.sim and rapier do it: [`ClothModel`] (static: rest shape, dry
//! masses, springs, per-garment ranges), [`ClothState`] (positions, velocities, wetness, current
//! masses, pin targets) and [`ClothWorkspace`] (scratch: forces, spatial hash, contact records).
//! Building allocates; [`step_frame`] does not. Results are bit-identical from run to run and
//! independent of the number of threads (the parallel partition is fixed by the particle count).
//!
//! The substep loop and its stages are in [`step`]; self- and garment–garment collision use
//! per-particle neighbour lists built from the spatial hash ([`hash`]) with a skin and rebuilt
//! only when particles have moved enough to matter. Springs that a substep cannot carry are
//! softened and reported ([`StabilityReport`]) instead of exploding; a speed limit is the last
//! safety net. The benchmark scene `drop` and the homework's scenes are in [`scenes`]; `drape
//! scene NAME` and `drape bench cloth` run them.
//!
//! ```no_run
//! use drape::cloth::*;
//! use drape::math::Vec3;
//! let g = build::grid("sheet", &GridSpec::square(32, 1.0, Vec3::new(0.0, 1.0, 0.0)),
//!                     &GarmentParams::default()).unwrap();
//! let model = ClothModel::new(vec![g]);
//! let mut state = ClothState::new(&model);
//! let mut ws = ClothWorkspace::new(&model);
//! let colliders = [Collider::fixed(Shape::plane(Vec3::ZERO, Vec3::Y))];
//! let params = SimParams::default();
//! for _ in 0..60 {
//!     step_frame(&model, &mut state, &mut ws, &colliders, &params);
//! }
//! ```

pub mod build;
pub mod collide;
pub mod constraints;
pub mod export;
pub mod forces;
pub mod fused;
pub mod hash;
pub mod mass_spring;
pub mod model;
pub mod params;
pub mod scenes;
pub mod stages;
pub mod state;
pub mod wet;
pub mod workspace;

pub use build::{BuildError, GridSpec, Orientation};
pub use collide::{Collider, Shape};
pub use mass_spring::step::{step_frame, step_frame_timed, substep, StageTimes, StepStats};
pub use model::{ClothModel, Garment, SpringKind};
pub use params::{AdhesionMode, Fabric, Region, WetParams};
pub use params::{GarmentParams, Integrator, SimParams, Wind};
pub use state::ClothState;
pub use workspace::{ClothWorkspace, StabilityReport};
