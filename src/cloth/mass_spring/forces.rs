//! Stage `forces`: the mass-spring model's internal forces (springs with projected damping) and
//! wind, with the stiffness the stability clamp leaves (`ClothWorkspace::prepare`). The kernels
//! are in `cloth/forces.rs`.

use crate::cloth::forces;
use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::state::ClothState;
use crate::cloth::workspace::ClothWorkspace;

/// Stage `forces`: springs (with projected damping) and wind into `ws.f`.
pub fn forces(
    model: &ClothModel,
    state: &ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    time: f32,
) {
    forces::springs_fast(
        model,
        &state.x,
        &state.v,
        &ws.stability.garment_scale,
        &ws.k_eff,
        &ws.kd_eff,
        &mut ws.springs,
        &mut ws.f,
    );
    forces::wind(model, &state.x, &state.v, &params.wind, time, &mut ws.f);
}
