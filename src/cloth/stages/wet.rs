//! Stage `adhere`: the wet model's place in the substep (PHYSICS.md §5). The model itself
//! (water uptake, liquid bridges, self-adhesion) is `cloth/wet.rs`.

use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::state::ClothState;
use crate::cloth::wet;
use crate::cloth::workspace::ClothWorkspace;

/// Stage `adhere`: wet cloth's adhesion (Park & Byun 2019 Eq. 5, PHYSICS.md §5; see
/// [`wet::adhere`]): per-vertex liquid-bridge forces toward colliders from
/// `ws.contact_gap`/`contact_normal` of the previous collision pass (or the area-based force),
/// and self-adhesion between nearby non-neighbour particles from the self-collision neighbour
/// lists. Dry cloth holds no bridges and gets nothing. `ws.extra_normal` stays zero: friction
/// already sees the adhesion load in the penetration it causes (see the module docs of wet).
pub fn adhere(model: &ClothModel, state: &ClothState, ws: &mut ClothWorkspace, params: &SimParams) {
    // The accumulator moves out for the call so the neighbour lists can be read alongside.
    let mut f = std::mem::take(&mut ws.f);
    let mut scratch = std::mem::take(&mut ws.wet);
    {
        let ws_ref: &ClothWorkspace = ws;
        wet::adhere(
            model,
            state,
            &params.wet,
            &ws_ref.contact_gap,
            &ws_ref.contact_normal,
            |i| ws_ref.self_neighbours(model, i),
            params.dt(),
            &mut scratch,
            &mut f,
        );
    }
    ws.f = f;
    ws.wet = scratch;
}
