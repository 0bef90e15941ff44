//! Stage `pins`: pinned particles follow their attachment.

use crate::cloth::model::ClothModel;
use crate::cloth::state::ClothState;

/// Stage `pins`: pinned particles go to their targets interpolated at the end of the substep
/// (and start from them at its beginning), so they never lag their attachment.
pub fn pins(model: &ClothModel, state: &mut ClothState, t0: f32, t1: f32) {
    for (k, &i) in model.pins.iter().enumerate() {
        let (a, b) = (state.pin_prev[k], state.pin_target[k]);
        state.x_prev[i as usize] = a.lerp(b, t0);
        state.x[i as usize] = a.lerp(b, t1);
    }
}
