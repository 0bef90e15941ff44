//! The layout pose: the pose the garments are laid out in, and the pose the scene's start-up
//! settles them in before it blends into the clip (README "Timing").
//!
//! Without a hakama cut as divided trousers ([`HakamaStyle::Divided`]) it is the bind pose.
//! With one it is the bind pose with each thigh turned
//! outward (abducted) about its hip joint, round the body's forward axis: the hakama's two leg
//! tubes must each go round their own leg, and at the bind pose many bodies leave no room
//! between the legs for two walls of cloth (the built-in ninja's thigh proxies overlap on the
//! mid-line by 3 mm, the corpus soldier's by up to 6 cm). A tube laid out round a leg that
//! another leg's proxy overlaps starts inside the body. Spread, the legs part, the tubes are
//! laid out round them with the crotch seam between, and their rest lengths are those of the
//! spread layout, so the cloth has the slack between the legs that a kick needs.

use super::fit::BodyAtRest;
use super::hakama;
use super::{GarmentKind, GarmentSpec, HakamaStyle};
use crate::anim::Pose;
use crate::body::{union_sdf, ProxyFrame};
use crate::math::{Mat4, Quat, Vec3};

/// Least and most each thigh is turned outward in the layout pose, degrees. The least leaves
/// a wide gusset even on a body whose legs are apart at the bind pose; the most keeps the
/// start-up's blend back to a standing first frame short of a split (a Mixamo bind pose's
/// thighs are near vertical).
pub const SPREAD_DEG: [f32; 2] = [0.0, 20.0];

/// The layout pose of one scene (see the module's documentation).
#[derive(Clone, Debug)]
pub struct Layout {
    /// How far each thigh is turned outward, degrees (0: the bind pose).
    pub spread_deg: f32,
    /// Local transforms of every node.
    pub pose: Pose,
    /// World matrix of every node in the pose.
    pub world_from_node: Vec<Mat4>,
}

/// The layout pose for `specs` on `body` (at its bind pose, with its proxies' joints, see
/// [`BodyAtRest::with_proxy_joints`]): the bind pose unless a divided hakama is among them,
/// else the least spread in [`SPREAD_DEG`] (whole degrees) at which the legs' proxies leave
/// room on the mid-line for the hakama's two inner walls, each its least gap off the mid-line
/// and clear of the legs by its clearance, from halfway down the thighs to the hem; the most
/// if no spread does (then the crotch seam drops to where there is room, as at the bind pose).
pub fn layout(body: &BodyAtRest, specs: &[GarmentSpec]) -> Layout {
    let sk = &body.rig.skeleton;
    let rest = Pose::rest(sk);
    let rest_world = sk.rest_world();
    let bind = |rest: Pose, world: Vec<Mat4>| Layout {
        spread_deg: 0.0,
        pose: rest,
        world_from_node: world,
    };
    let divided =
        |s: &&GarmentSpec| s.kind == GarmentKind::Hakama && s.style == HakamaStyle::Divided;
    let Some(spec) = specs.iter().find(divided) else {
        return bind(rest, rest_world);
    };
    let (Some(l), Some(r)) = (body.node("LeftUpLeg"), body.node("RightUpLeg")) else {
        return bind(rest, rest_world);
    };
    let mut spec = spec.clone();
    spec.spacing *= body.scale;
    spec.clearance *= body.scale;
    let spread = least_spread(body, &spec).unwrap_or(SPREAD_DEG[0]);
    let mut pose = rest;
    for (node, side) in [(l, 1.0f32), (r, -1.0)] {
        // The thigh's world rotation turned by `turn`: its local rotation conjugated into the
        // parent's frame (rotation only: Mixamo's armature scale is uniform).
        let turn = Quat::from_axis_angle(body.forward, side * spread.to_radians());
        let parent = sk.parents[node].map_or(Quat::IDENTITY, |p| {
            rest_world[p as usize].to_scale_rotation_translation().1
        });
        let local = &mut pose.local[node];
        local.rotation = (parent.inverse() * turn * parent * local.rotation).normalize();
    }
    let mut world = Vec::new();
    pose.world_from_node(sk, &mut world);
    Layout {
        spread_deg: spread,
        pose,
        world_from_node: world,
    }
}

/// The least whole-degree spread in [`SPREAD_DEG`] that leaves the hakama's inner walls room
/// on the mid-line (see [`layout`]), the most if none does; `None` without the proxies'
/// joints (the legs' proxies are then unknown).
fn least_spread(body: &BodyAtRest, spec: &GarmentSpec) -> Option<f32> {
    if body.proxy_joints.is_empty() {
        return None;
    }
    let (waist, hem_y) = hakama::waist_and_hem(body, spec).ok()?;
    let knee_y =
        0.5 * (body.joint("LeftLeg", "hakama").ok()?.y + body.joint("RightLeg", "hakama").ok()?.y);
    let hip = |k: usize| body.joint(["LeftUpLeg", "RightUpLeg"][k], "hakama").ok();
    let hips = [hip(0)?, hip(1)?];
    let top = 0.5 * (0.5 * (hips[0].y + hips[1].y) + knee_y);
    let need = spec.clearance + 2.0 * hakama::least_gap(spec);
    let legs = [
        body.joints_under(&["LeftUpLeg"]),
        body.joints_under(&["RightUpLeg"]),
    ];
    let step = 0.005 * body.scale;
    let mut frame = ProxyFrame {
        center: body.proxies.center.clone(),
        radius: body.proxies.radius.clone(),
    };
    let (lo, hi) = (SPREAD_DEG[0] as i32, SPREAD_DEG[1] as i32);
    for deg in lo..=hi {
        for (i, c) in frame.center.iter_mut().enumerate() {
            let j = body.proxy_joints[i] as usize;
            let c0 = body.proxies.center[i];
            *c = match (0..2).find(|&k| legs[k].get(j) == Some(&true)) {
                Some(k) => {
                    let side = if k == 0 { 1.0 } else { -1.0 };
                    let turn =
                        Quat::from_axis_angle(body.forward, side * (deg as f32).to_radians());
                    hips[k] + turn * (c0 - hips[k])
                }
                None => c0,
            };
        }
        let mut y = top;
        let mut clear = true;
        while y > hem_y {
            if union_sdf(Vec3::new(waist.x, y, waist.z), &frame, body.capsules) < need {
                clear = false;
                break;
            }
            y -= step;
        }
        if clear {
            return Some(deg as f32);
        }
    }
    Some(hi as f32)
}
