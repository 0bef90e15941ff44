//! The cloth engine: garments as mass-spring cloth with Provot's deformation limit (PHYSICS.md
//! §1) or as XPBD constraints in small steps (§7), chosen by `SimParams::model`; collisions
//! against planes, spheres and tapered capsules (static or moving) with Coulomb friction, and
//! self- and garment–garment collision by spatial hashing (§2–3), shared by both models.
//!
//! Data is split the way warp.sim and rapier do it: [`ClothModel`] (static: rest shape, dry
//! masses, springs, per-garment ranges), [`ClothState`] (positions, velocities, wetness, current
//! masses, pin targets) and [`ClothWorkspace`] (scratch: forces, spatial hash, contact records).
//! Building allocates; [`step_frame`] does not. Results are bit-identical from run to run and
//! independent of the number of threads (the parallel partition is fixed by the particle count).
//!
//! Where things are (one stage, one file):
//!
//! - Data, depending on no module that computes: [`params`] (every tunable, the wet model's
//!   included), [`model`] (the static world, and the stiffness spectrum the stability clamp is
//!   computed from), [`state`], [`workspace`] (scratch of every stage; the stability clamp).
//! - Physics kernels, one law each, on slices of the data: [`forces`] (springs, wind),
//!   [`constraints`] (Provot's limit, tethers), [`collide`] (collider shapes, distance queries,
//!   Coulomb response), [`wet`] (water uptake, liquid bridges), [`hash`] (spatial hash),
//!   [`skin`] (the skinned body's triangles as a moving collider: refitted BVH, closest point,
//!   pseudo-normal side; its stage is `stages::skin`, run inside the collision passes).
//! - The substep's stages, each a pass over the world in its own file: the stages every model
//!   shares in [`stages`] (`pins`, `wet` = `adhere`, `self_collision`, `collide`), the
//!   mass-spring model's own in [`mass_spring`] (`forces`, `integrate`, `constrain`), with its
//!   substep order in [`mass_spring::step`] (read that first) and its fused fast path in
//!   [`mass_spring::fused`]. The second model, XPBD (PHYSICS.md §7), is the sibling folder
//!   [`xpbd`] with its own substep order ([`xpbd::step`]) and stages (`forces`, `integrate`,
//!   `constrain`), reusing `stages/`. [`step`] holds the one dispatch between the two
//!   ([`step_frame`] reads `SimParams::model`).
//! - Around the engine: [`build`] (garments from grids and meshes), [`scenes`] (benchmark and
//!   homework scenes), [`export`] (OBJ/PLY/glTF).
//!
//! Self- and garment–garment collision use per-particle neighbour lists built from the spatial
//! hash with a skin and rebuilt only when particles have moved enough to matter. Springs that a
//! substep cannot carry are softened and reported ([`StabilityReport`]) instead of exploding; a
//! speed limit is the last safety net. `drape scene NAME` and `drape bench cloth` run the scenes.
//!
//! Module dependencies (`a → b`: a uses b; test modules excepted, they may use any fixture).
//! No cycles: data depends on data only, kernels on data, stages on data, kernels and the
//! workspace, the substep order on the stages.
//!
//! ```text
//! params                                   hash      collide (shapes)      skin
//! model        → params
//! state        → model
//! forces       → model, params, constraints (its SIMD check)
//! constraints  → model
//! wet          → model, state, params
//! mass_spring::fused → collide, model, params, state
//! workspace    → model, params, collide, constraints, forces, hash, wet, mass_spring::fused,
//!                xpbd::constrain (its coloured constraints live in the workspace), skin and
//!                stages::skin (the skin surface and the skin contact's records)
//! stages::{pins, wet, self_collision, collide, skin} → model, state, params, workspace, kernels
//! mass_spring::{forces, integrate, constrain}     → model, state, params, workspace, kernels
//! mass_spring::step → the stages above, mass_spring::fused, workspace, model, params, state
//! xpbd::{forces, integrate, constrain}            → model, state, params, workspace, kernels
//! xpbd::step → the shared stages, xpbd's own, mass_spring::step (StepStats, StageTimes)
//! step → mass_spring::step, xpbd::step, params
//! build → model, params      export → model, collide
//! scenes → build, model, params, state, collide, workspace, step
//! ```
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
pub mod hash;
pub mod mass_spring;
pub mod model;
pub mod params;
pub mod scenes;
pub mod skin;
pub mod stages;
pub mod state;
pub mod step;
pub mod wet;
pub mod workspace;
pub mod xpbd;

pub use build::{BuildError, GridSpec, Orientation};
pub use collide::{Collider, Shape};
pub use mass_spring::fused;
pub use mass_spring::step::{substep, StageTimes, StepStats};
pub use model::{ClothModel, Garment, SpringKind};
pub use params::{AdhesionMode, Fabric, Region, WetParams};
pub use params::{ClothModelKind, GarmentParams, Integrator, SimParams, Wind};
pub use state::ClothState;
pub use step::{step_frame, step_frame_timed};
pub use workspace::{ClothWorkspace, StabilityReport};
