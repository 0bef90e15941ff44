//! glTF animations: each animation's channels read into a [`Clip`] of translation, rotation and
//! scale tracks, with key times checked and duplicate keys dropped (glTF 2.0 §3.11).

use ::gltf::json;
use json::validation::Checked;

use super::document::{read_f32, Ctx, Data};
use crate::anim::{Clip, Interpolation, Track};
use crate::asset::AssetError;
use crate::math::{Quat, Vec3};

pub(super) fn build_clips(
    cx: &mut Ctx,
    root: &json::Root,
    data: &Data,
    node_of: &[u32],
) -> Result<Vec<Clip>, AssetError> {
    use json::animation::{Interpolation as I, Property};
    let mut clips = Vec::with_capacity(root.animations.len());
    for (ai, a) in root.animations.iter().enumerate() {
        let name = a.name.clone().unwrap_or_else(|| format!("animation {ai}"));
        let mut clip = Clip {
            name,
            ..Default::default()
        };
        for (ci, ch) in a.channels.iter().enumerate() {
            let here = || format!("channel {ci} of animation {ai} ({:?})", clip.name);
            let si = ch.sampler.value();
            let s = a.samplers.get(si).ok_or_else(|| {
                cx.err(format!(
                    "{} uses sampler {si}, but the animation has {}",
                    here(),
                    a.samplers.len()
                ))
            })?;
            let target = ch.target.node.value();
            let node = *node_of.get(target).ok_or_else(|| {
                cx.err(format!(
                    "{} targets node {target}, but the file has {} nodes",
                    here(),
                    node_of.len()
                ))
            })?;
            let path = match ch.target.path {
                Checked::Valid(p) => p,
                Checked::Invalid => {
                    return Err(cx.err(format!("{} has an invalid target path", here())))
                }
            };
            if path == Property::MorphTargetWeights {
                cx.warn.morph_channels += 1;
                continue;
            }
            let interpolation = match s.interpolation {
                Checked::Valid(I::Step) => Interpolation::Step,
                Checked::Valid(I::Linear) => Interpolation::Linear,
                Checked::Valid(I::CubicSpline) => Interpolation::CubicSpline,
                Checked::Invalid => {
                    return Err(cx.err(format!(
                        "sampler {si} of animation {ai} has an invalid interpolation"
                    )))
                }
            };
            let per_key = if interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            let in_role = format!("input of sampler {si} of animation {ai}");
            let out_role = format!("output of sampler {si} of animation {ai}");
            let input = data.accessor(cx, root, s.input.value(), &in_role)?;
            let output = data.accessor(cx, root, s.output.value(), &out_role)?;
            for acc in [&input, &output] {
                if acc.view.is_some_and(|v| v.stride.is_some()) {
                    cx.warn.forbidden_stride.push(acc.index);
                }
            }
            if output.count != input.count.saturating_mul(per_key) {
                return Err(cx.err(format!(
                    "sampler {si} of animation {ai}: {} keys (accessor {}) need {} output values{} but accessor {} has {}",
                    input.count,
                    input.index,
                    input.count.saturating_mul(per_key),
                    if per_key == 3 { " (CUBICSPLINE: 3 per key)" } else { "" },
                    output.index,
                    output.count
                )));
            }
            if input.count == 0 {
                cx.warn.empty_samplers += 1;
                continue;
            }
            let times: Vec<f32> = read_f32::<1>(cx, &input, &in_role)?
                .into_iter()
                .map(|[t]| t)
                .collect();
            let keep = check_times(cx, &times, si, ai)?;
            let times = filter_keys(times, &keep, 1);
            macro_rules! track {
                ($n:literal, $conv:expr) => {{
                    let v = read_f32::<$n>(cx, &output, &out_role)?;
                    if let Some(k) = v.iter().position(|e| e.iter().any(|x| !x.is_finite())) {
                        return Err(cx.err(format!("{out_role} value {k} is not finite")));
                    }
                    let v = filter_keys(v, &keep, per_key as usize);
                    let conv = $conv;
                    Track {
                        node,
                        times,
                        values: v.into_iter().enumerate().map(|(k, e)| conv(k, e)).collect(),
                        interpolation,
                    }
                }};
            }
            match path {
                Property::Translation => clip.translations.push(track!(3, |_, e| Vec3::from(e))),
                Property::Scale => clip.scales.push(track!(3, |_, e| Vec3::from(e))),
                Property::Rotation => clip.rotations.push(track!(4, |k: usize, e: [f32; 4]| {
                    let q = Quat::from_array(e);
                    // Cubic tangents (entries 0 and 2 of each triple) are not unit quaternions.
                    if per_key == 3 && k % 3 != 1 {
                        q
                    } else if q.length_squared() > 1e-12 {
                        q.normalize()
                    } else {
                        Quat::IDENTITY
                    }
                })),
                Property::MorphTargetWeights => {}
            }
        }
        let firsts = clip
            .translations
            .iter()
            .map(|t| &t.times)
            .chain(clip.rotations.iter().map(|t| &t.times))
            .chain(clip.scales.iter().map(|t| &t.times));
        let (mut start, mut end) = (f32::INFINITY, f32::NEG_INFINITY);
        for t in firsts {
            if let (Some(a), Some(b)) = (t.first(), t.last()) {
                start = start.min(*a);
                end = end.max(*b);
            }
        }
        if start.is_finite() {
            clip.start = start;
            clip.end = end;
        }
        clips.push(clip);
    }
    Ok(clips)
}

/// Checks key times (finite, non-decreasing) and returns which keys to keep: exact duplicates
/// of the previous time are dropped (the first key at a time wins) so that times are strictly
/// increasing, as [`Track::times`] requires.
fn check_times(cx: &mut Ctx, times: &[f32], si: usize, ai: usize) -> Result<Vec<bool>, AssetError> {
    let mut keep = Vec::with_capacity(times.len());
    let mut prev = f32::NEG_INFINITY;
    for (k, &t) in times.iter().enumerate() {
        if !t.is_finite() {
            return Err(cx.err(format!(
                "key time {k} of sampler {si} of animation {ai} is not finite"
            )));
        }
        if t < prev {
            return Err(cx.err(format!(
                "key times of sampler {si} of animation {ai} decrease at key {k} ({t} after {prev})"
            )));
        }
        let dup = t == prev;
        if dup {
            cx.warn.duplicate_keys += 1;
        }
        keep.push(!dup);
        prev = t;
    }
    Ok(keep)
}

fn filter_keys<T: Copy>(v: Vec<T>, keep: &[bool], per_key: usize) -> Vec<T> {
    if keep.iter().all(|&k| k) {
        return v;
    }
    v.chunks(per_key)
        .zip(keep)
        .filter(|(_, &k)| k)
        .flat_map(|(c, _)| c.iter().copied())
        .collect()
}
