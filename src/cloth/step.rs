//! The one place that picks the cloth model: [`step_frame`] steps a frame with the model
//! `SimParams::model` names, the mass-spring model's substep order
//! ([`super::mass_spring::step`]) or the XPBD model's ([`super::xpbd::step`]).

use super::collide::Collider;
use super::mass_spring;
use super::mass_spring::step::{StageTimes, StepStats};
use super::model::ClothModel;
use super::params::{ClothModelKind, SimParams};
use super::state::ClothState;
use super::workspace::ClothWorkspace;
use super::xpbd;

/// Steps one frame (`params.frame_dt`, in `params.substeps` substeps) with the model
/// `params.model`. Colliders move from `prev` to `cur` over the frame and pins from `pin_prev`
/// to `pin_target`; afterwards the pins hold their targets until new ones are set.
pub fn step_frame(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    colliders: &[Collider],
    params: &SimParams,
) -> StepStats {
    step_frame_timed(model, state, ws, colliders, params, None)
}

/// [`step_frame`], optionally timing each stage into `times`.
pub fn step_frame_timed(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    colliders: &[Collider],
    params: &SimParams,
    times: Option<&mut StageTimes>,
) -> StepStats {
    match params.model {
        ClothModelKind::MassSpring => {
            mass_spring::step::step_frame_timed(model, state, ws, colliders, params, times)
        }
        ClothModelKind::Xpbd => {
            xpbd::step::step_frame_timed(model, state, ws, colliders, params, times)
        }
    }
}
