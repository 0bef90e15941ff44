//! FBX animation curves: key times in FBX ticks, values, and stepped keys from `KeyAttrFlags`;
//! evaluated linearly between keys.

use super::scene::{Obj, TICKS_PER_SECOND};

/// The largest key time a curve may have, s (either sign).
const MAX_KEY_SECONDS: f64 = 1e5;

/// One animation curve: key times (ticks) and values.
#[derive(Clone, Debug, Default)]
pub(super) struct Curve {
    pub(super) times: Vec<i64>,
    values: Vec<f64>,
    /// Constant (stepped) interpolation from each key, from `KeyAttrFlags`.
    step: Vec<bool>,
}

impl Curve {
    pub(super) fn eval(&self, t: i64) -> f64 {
        let n = self.times.len();
        let i = self.times.partition_point(|&k| k <= t);
        if i == 0 {
            return self.values[0];
        }
        if i >= n {
            return self.values[n - 1];
        }
        let k = i - 1;
        if self.step.get(k).copied().unwrap_or(false) {
            return self.values[k];
        }
        // In f64: the difference of two i64 tick counts can overflow i64.
        let (t0, t1) = (self.times[k] as f64, self.times[k + 1] as f64);
        let s = (t as f64 - t0) / (t1 - t0);
        self.values[k] + (self.values[k + 1] - self.values[k]) * s
    }
}

pub(super) fn read_curve(o: &Obj) -> Result<Option<Curve>, String> {
    let times = o.node.child_prop("KeyTime").and_then(|p| p.to_i64s());
    let values = o.node.child_prop("KeyValueFloat").and_then(|p| p.to_f64s());
    let (Some(times), Some(values)) = (times, values) else {
        return Ok(None);
    };
    if times.len() != values.len() {
        return Err(format!(
            "curve {:?} has {} key times but {} values",
            o.name,
            times.len(),
            values.len()
        ));
    }
    if times.is_empty() {
        return Ok(None);
    }
    // Clip times are f32 seconds: beyond 1e5 s (28 hours) an f32 cannot tell 60 fps frames
    // apart, so a key that far out is damage, not animation.
    if let Some(&t) = times
        .iter()
        .find(|&&t| (t as f64 / TICKS_PER_SECOND).abs() > MAX_KEY_SECONDS)
    {
        return Err(format!(
            "curve {:?}: key time {:.3e} s is outside ±{MAX_KEY_SECONDS:.0e} s",
            o.name,
            t as f64 / TICKS_PER_SECOND
        ));
    }
    if times.windows(2).any(|w| w[1] <= w[0]) {
        return Err(format!("curve {:?}: key times do not increase", o.name));
    }
    if values.iter().any(|v| !v.is_finite()) {
        return Err(format!("curve {:?} has a value that is not finite", o.name));
    }
    // KeyAttrFlags + KeyAttrRefCount: run-length attributes; 0x02 = constant interpolation.
    let mut step = Vec::new();
    if let (Some(flags), Some(counts)) = (
        o.node.child_prop("KeyAttrFlags").and_then(|p| p.to_i64s()),
        o.node
            .child_prop("KeyAttrRefCount")
            .and_then(|p| p.to_i64s()),
    ) {
        for (f, c) in flags.iter().zip(&counts) {
            let c = (*c).clamp(0, times.len() as i64) as usize;
            step.extend(std::iter::repeat_n(f & 0x02 != 0, c));
            if step.len() >= times.len() {
                break;
            }
        }
    }
    Ok(Some(Curve {
        times,
        values,
        step,
    }))
}
