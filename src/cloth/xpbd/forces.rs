//! Stage `forces` of the XPBD model: the external forces other than gravity (wind; PHYSICS.md
//! §1). The springs are constraints here (stage `constrain`), not forces.

use crate::cloth::forces;
use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::state::ClothState;
use crate::cloth::workspace::ClothWorkspace;
use crate::math::Vec3A;

/// Stage `forces`: `ws.f` cleared, then wind added (the wet stage `adhere` adds its forces next).
pub fn forces(
    model: &ClothModel,
    state: &ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    time: f32,
) {
    ws.f.fill(Vec3A::ZERO);
    forces::wind(model, &state.x, &state.v, &params.wind, time, &mut ws.f);
}
