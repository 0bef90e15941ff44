//! Martial-arts clips: readable key poses (`rigs/clips/*.toml`) expanded into 30 fps samples.
//!
//! # Key-pose files
//! ```toml
//! name = "jab_cross"
//! duration = 1.6              # s
//! looping = false             # a loop's last key must equal its first
//! airborne = [[0.5, 0.8]]     # intervals (s) where no foot needs to touch the floor
//! flight = [[0.44, 0.9]]      # airborne intervals flown as a thrown body flies (see below)
//! [poses.guard]               # named poses, reusable by keys (`from = "guard"`)
//! LeftArm = [0, 0, -70]
//! [[key]]
//! t = 0.0                     # s
//! from = "guard"              # start from a named pose (default: the previous key)
//! hips = [0, -5, 0]           # cm, hips displacement from rest in the character frame
//! plant = ["L", "R"]          # feet flat on the floor and not sliding until the next key
//! pivot = ["L"]               # feet turning on the ball of the foot (heel swings) until the
//!                             # next key; a foot is on the floor between two keys that both
//!                             # list it under plant or pivot
//! home = ["R"]                # feet that touch down at this key go back to the spot (and
//!                             # turn) where they stood at the clip's first frame, so that a
//!                             # clip whose feet end as they began loops without a jump
//! stop = true                 # zero velocity at this key (an extreme / a hit)
//! [key.rot]                   # joint rotations, degrees [x, y, z]
//! Hips = [0, 30, 0]
//! ```
//! Rotations are Euler angles in degrees about the parent's rest axes, which for every joint are
//! the character's axes (x = the character's left, y = up, z = forward), applied z first, then x,
//! then y: `q = Ry(y) Rx(x) Rz(z)`. Joints on the right side are mirrored (`[x, −y, −z]` is used)
//! so that equal numbers on `LeftArm` and `RightArm` give mirror-image poses. Cheat sheet:
//! - spine, neck, head: x > 0 bends forward, y > 0 turns to the character's left, z > 0 tilts
//!   the top towards its right (−x).
//! - Hips: the same, for the whole body; hips `y` is the facing (yaw) of the character.
//! - UpLeg: x < 0 lifts the leg forward (x > 0 takes it back), z > 0 spreads it sideways
//!   (abduction), y > 0 turns the toes out; Leg: x > 0 bends the knee; Foot: x > 0 points the
//!   toes, x < 0 pulls them up.
//! - Arm (T-pose is 0): z < 0 lowers the arm (−80 ≈ hanging), then x < 0 swings it forward,
//!   y turns it in the horizontal plane (y < 0 forward from the T); ForeArm: y < 0 bends the
//!   elbow (forward in the T-pose), x twists the forearm; Hand: z < 0 bends the wrist down.
//! - fingers: z < 0 curls; `fist = 1.0` on a key curls the whole hand (0 = open).
//!
//! # Expansion
//! Key values (angles, hips offset) are interpolated with cubic Hermite splines whose tangents
//! are the finite differences of the neighbouring keys (Catmull–Rom on a non-uniform grid; zero
//! at `stop` keys and at the ends of non-looping clips), sampled at 30 fps, then turned into
//! quaternions. Feet are handled afterwards: a planted foot keeps the ball of the foot at the
//! place where the plant began, flat on the floor, and the leg reaches it with analytic two-bone
//! IK (law of cosines, knee towards the knee direction of the keyed pose); after a plant the
//! foot eases back to its keyed motion over [`RELEASE`]; any foot that the keys would push
//! through the floor is lifted onto it.
//!
//! # Flight
//! In a `flight` interval nothing holds the body up, so its centre of mass (the hips stand for
//! it) moves as a thrown body does: at constant velocity across, and falling at
//! g = 9.81 m/s² (a parabola) vertically, from where the key at the interval's start puts the
//! hips to where the key at its end puts them. Both ends must be key times; keys inside the
//! interval pose the joints but may not set `hips`. The two end keys take the flight's
//! velocity as their hips tangent, so the push-off runs into the flight and the flight into the
//! landing without a jolt. Keyed heights alone make no such path: a tuck jump keyed at take-off,
//! apex and touch-down through a spline fell from its apex at 3–4 g (the corpus jump before
//! 2026-12-05), far from what motion capture records. A flight interval is airborne too.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::skeleton::{armature_from_char, NinjaSkeleton};
use crate::anim::{Clip, Interpolation, Track};
use crate::math::{Mat3, Quat, Vec3};

/// Sampling rate of every clip, frames per second (Mixamo's).
pub const FPS: f32 = 30.0;
/// Time over which a released foot blends from its planted place back to its keyed motion, s.
pub const RELEASE: f32 = 0.2;
/// Largest heel raise (foot pitch about the ball of the foot) a planted foot may use to stay
/// within the leg's reach, degrees.
pub const MAX_HEEL_RAISE: f32 = 55.0;

/// The clip files, embedded so that the generator needs nothing at run time.
pub const SOURCES: &[(&str, &str)] = &[
    ("tpose", include_str!("../../rigs/clips/tpose.toml")),
    ("stance", include_str!("../../rigs/clips/stance.toml")),
    ("jab_cross", include_str!("../../rigs/clips/jab_cross.toml")),
    (
        "front_kick",
        include_str!("../../rigs/clips/front_kick.toml"),
    ),
    (
        "roundhouse_kick",
        include_str!("../../rigs/clips/roundhouse_kick.toml"),
    ),
    (
        "spinning_back_kick",
        include_str!("../../rigs/clips/spinning_back_kick.toml"),
    ),
    ("kata", include_str!("../../rigs/clips/kata.toml")),
];

#[derive(Debug, thiserror::Error)]
pub enum ClipError {
    #[error("clip {clip}: {msg}")]
    Parse { clip: String, msg: String },
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    name: String,
    duration: f32,
    #[serde(default)]
    looping: bool,
    #[serde(default)]
    airborne: Vec<[f32; 2]>,
    #[serde(default)]
    flight: Vec<[f32; 2]>,
    #[serde(default)]
    poses: BTreeMap<String, BTreeMap<String, [f32; 3]>>,
    key: Vec<KeyDef>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
struct KeyDef {
    t: f32,
    #[serde(default)]
    from: Option<String>,
    #[serde(default)]
    hips: Option<[f32; 3]>,
    #[serde(default)]
    plant: Vec<String>,
    #[serde(default)]
    pivot: Vec<String>,
    #[serde(default)]
    home: Vec<String>,
    #[serde(default)]
    stop: bool,
    #[serde(default)]
    fist: Option<[f32; 2]>,
    #[serde(default)]
    rot: BTreeMap<String, [f32; 3]>,
}

/// A clip expanded to frames, in the character frame, before export.
#[derive(Clone, Debug)]
pub struct Expanded {
    pub name: String,
    /// Frames per second of the expansion ([`FPS`] for the ninja's clips).
    pub fps: f32,
    /// Frame count; frame `f` is at `f / fps` seconds.
    pub frames: usize,
    /// Hips position per frame, character frame, cm.
    pub hips_char: Vec<Vec3>,
    /// `local[f][j]`: joint `j`'s rotation relative to its parent at frame `f`; for the Hips, its
    /// orientation in the character frame.
    pub local: Vec<Vec<Quat>>,
    /// Per foot (0 = left, 1 = right), per frame: planted (flat, fixed) or pivoting.
    pub planted: [Vec<bool>; 2],
    /// Frames in which no foot needs to touch the floor.
    pub airborne: Vec<bool>,
    /// Times of the key poses (s), for contact sheets.
    pub key_times: Vec<f32>,
}

/// One key after resolving inheritance: angles per joint, hips offset, fist curl, feet.
#[derive(Clone, Debug)]
struct Key {
    t: f32,
    /// Per joint [x, y, z] degrees (as written, mirroring not yet applied) plus hips offset as
    /// the last entry and fist curls (left, right) packed after it.
    values: Vec<[f32; 3]>,
    plant: [bool; 2],
    pivot: [bool; 2],
    /// The plant (or pivot) that starts at this key puts the foot where it stood at frame 0.
    home: [bool; 2],
    stop: bool,
    /// The hips' tangent (cm/s) where a flight starts or ends at this key ([`Flight`]); the
    /// finite differences of the neighbouring keys otherwise.
    hips_tangent: Option<Vec3>,
}

/// Gravity in the key files' units (cm/s²).
const G_CM: f32 = 981.0;

/// A `flight` interval resolved against its keys: the hips' path of a thrown body from `p0`
/// at `t0` to `p1` at `t1` (character frame, cm; the hips' offsets from rest).
#[derive(Clone, Copy, Debug)]
struct Flight {
    t0: f32,
    t1: f32,
    p0: Vec3,
    p1: Vec3,
}

impl Flight {
    /// The take-off velocity (cm/s) that lands at `p1` at `t1`: across, the mean velocity;
    /// up, that plus half the speed gravity takes away over the flight.
    fn v0(&self) -> Vec3 {
        let dt = self.t1 - self.t0;
        (self.p1 - self.p0) / dt + Vec3::Y * (0.5 * G_CM * dt)
    }

    /// Hips offset at time `t` (cm).
    fn at(&self, t: f32) -> Vec3 {
        let s = t - self.t0;
        self.p0 + self.v0() * s - Vec3::Y * (0.5 * G_CM * s * s)
    }

    /// Velocity at time `t` (cm/s).
    fn velocity(&self, t: f32) -> Vec3 {
        self.v0() - Vec3::Y * (G_CM * (t - self.t0))
    }
}

fn feet(list: &[String], clip: &str) -> Result<[bool; 2], ClipError> {
    let mut out = [false; 2];
    for f in list {
        match f.as_str() {
            "L" => out[0] = true,
            "R" => out[1] = true,
            other => {
                return Err(ClipError::Parse {
                    clip: clip.into(),
                    msg: format!("foot {other:?} is not L or R"),
                })
            }
        }
    }
    Ok(out)
}

/// Euler degrees → quaternion, mirrored for right-side joints (see the module docs).
fn euler(deg: [f32; 3], mirror: bool) -> Quat {
    let [x, y, z] = deg.map(f32::to_radians);
    let (y, z) = if mirror { (-y, -z) } else { (y, z) };
    Quat::from_rotation_y(y) * Quat::from_rotation_x(x) * Quat::from_rotation_z(z)
}

type Parsed = (KeyFile, Vec<Key>, Vec<Flight>);

fn parse(src: &str, sk: &NinjaSkeleton) -> Result<Parsed, ClipError> {
    let file: KeyFile = toml::from_str(src).map_err(|e| ClipError::Parse {
        clip: "?".into(),
        msg: e.to_string(),
    })?;
    let err = |msg: String| ClipError::Parse {
        clip: file.name.clone(),
        msg,
    };
    let nj = sk.joint_count();
    let hips_slot = nj;
    let fist_slot = nj + 1;
    let resolve =
        |map: &BTreeMap<String, [f32; 3]>, into: &mut Vec<[f32; 3]>| -> Result<(), ClipError> {
            for (name, v) in map {
                let j = sk
                    .try_joint(name)
                    .ok_or_else(|| err(format!("unknown joint {name:?}")))?;
                into[j] = *v;
            }
            Ok(())
        };
    let mut keys: Vec<Key> = Vec::new();
    for (i, k) in file.key.iter().enumerate() {
        let mut values = match (&k.from, keys.last()) {
            (Some(p), _) => {
                let pose = file
                    .poses
                    .get(p)
                    .ok_or_else(|| err(format!("key {i}: no pose {p:?}")))?;
                let mut v = vec![[0.0; 3]; nj + 2];
                resolve(pose, &mut v)?;
                // Hips offset and fists carry on from the previous key unless given.
                if let Some(prev) = keys.last() {
                    v[hips_slot] = prev.values[hips_slot];
                    v[fist_slot] = prev.values[fist_slot];
                }
                v
            }
            (None, Some(prev)) => prev.values.clone(),
            (None, None) => vec![[0.0; 3]; nj + 2],
        };
        resolve(&k.rot, &mut values)?;
        if let Some(h) = k.hips {
            values[hips_slot] = h;
        }
        if let Some([l, r]) = k.fist {
            values[fist_slot] = [l, r, 0.0];
        }
        if !(k.t >= 0.0 && k.t <= file.duration + 1e-4) || keys.last().is_some_and(|p| p.t >= k.t) {
            return Err(err(format!(
                "key {i}: time {} out of order or outside the clip",
                k.t
            )));
        }
        let (plant, pivot) = (feet(&k.plant, &file.name)?, feet(&k.pivot, &file.name)?);
        let home = feet(&k.home, &file.name)?;
        if let Some(side) = (0..2).find(|&s| home[s] && !(plant[s] || pivot[s])) {
            return Err(err(format!(
                "key {i}: foot {} goes home but is neither planted nor pivoting",
                ["L", "R"][side]
            )));
        }
        keys.push(Key {
            t: k.t,
            values,
            plant,
            pivot,
            home,
            stop: k.stop,
            hips_tangent: None,
        });
    }
    if keys.len() < 2 || keys[0].t != 0.0 || (keys.last().unwrap().t - file.duration).abs() > 1e-4 {
        return Err(err("needs keys at 0 and at the duration".into()));
    }
    let mut flights = Vec::with_capacity(file.flight.len());
    for &[t0, t1] in &file.flight {
        let at_key = |t: f32| keys.iter().position(|k| (k.t - t).abs() < 1e-4);
        let (Some(i0), Some(i1)) = (at_key(t0), at_key(t1)) else {
            return Err(err(format!(
                "flight [{t0}, {t1}]: both ends must be key times"
            )));
        };
        if i1 <= i0 {
            return Err(err(format!("flight [{t0}, {t1}]: ends out of order")));
        }
        if let Some(i) = (i0 + 1..i1).find(|&i| file.key[i].hips.is_some()) {
            return Err(err(format!(
                "key {i} (t = {}) sets hips inside flight [{t0}, {t1}], where the hips follow \
                 a thrown body's path",
                keys[i].t
            )));
        }
        if let Some(i) = [i0, i1]
            .into_iter()
            .find(|&i| keys[i].stop || keys[i].hips_tangent.is_some())
        {
            return Err(err(format!(
                "key {i} (t = {}) ends flight [{t0}, {t1}] but is a stop or ends another flight",
                keys[i].t
            )));
        }
        let f = Flight {
            t0,
            t1,
            p0: Vec3::from_array(keys[i0].values[hips_slot]),
            p1: Vec3::from_array(keys[i1].values[hips_slot]),
        };
        keys[i0].hips_tangent = Some(f.velocity(t0));
        keys[i1].hips_tangent = Some(f.velocity(t1));
        flights.push(f);
    }
    Ok((file, keys, flights))
}

/// Cubic Hermite interpolation of key values at time `t` (see the module docs).
#[allow(clippy::needless_range_loop)] // (slot, axis) index the same cell in three keys
fn interpolate(keys: &[Key], looping: bool, t: f32) -> Vec<[f32; 3]> {
    let n = keys.len();
    let seg = (0..n - 1).find(|&i| t <= keys[i + 1].t).unwrap_or(n - 2);
    let (k0, k1) = (&keys[seg], &keys[seg + 1]);
    let h = k1.t - k0.t;
    let u = ((t - k0.t) / h).clamp(0.0, 1.0);
    // Tangent (value per second) at key i.
    // The hips' slot (the fists' follows it): a flight's end keys carry their own tangent.
    let hips_slot = keys[0].values.len() - 2;
    let tangent = |i: usize, c: usize, d: usize| -> f32 {
        if let (true, Some(v)) = (c == hips_slot, keys[i].hips_tangent) {
            return v[d];
        }
        if keys[i].stop {
            return 0.0;
        }
        let (prev, next) = if i == 0 || i == n - 1 {
            if !looping {
                return 0.0;
            }
            // Across the loop seam: the last key equals the first.
            let dur = keys[n - 1].t;
            (
                (keys[n - 2].values[c][d], keys[n - 2].t - dur),
                (keys[1].values[c][d], keys[1].t),
            )
        } else {
            (
                (keys[i - 1].values[c][d], keys[i - 1].t),
                (keys[i + 1].values[c][d], keys[i + 1].t),
            )
        };
        let dt = next.1 - prev.1;
        (next.0 - prev.0) / dt
    };
    let (h00, h10, h01, h11) = (
        2.0 * u * u * u - 3.0 * u * u + 1.0,
        u * u * u - 2.0 * u * u + u,
        -2.0 * u * u * u + 3.0 * u * u,
        u * u * u - u * u,
    );
    let mut out = k0.values.clone();
    for c in 0..out.len() {
        for d in 0..3 {
            let (p0, p1) = (k0.values[c][d], k1.values[c][d]);
            if p0 == p1 && tangent(seg, c, d) == 0.0 && tangent(seg + 1, c, d) == 0.0 {
                continue;
            }
            out[c][d] = h00 * p0
                + h10 * h * tangent(seg, c, d)
                + h01 * p1
                + h11 * h * tangent(seg + 1, c, d);
        }
    }
    out
}

/// Joint-space rigid placement: world rotation and position (character frame, cm).
#[derive(Clone, Copy)]
struct Frame {
    rot: Quat,
    pos: Vec3,
}

#[allow(clippy::needless_range_loop)] // j indexes the joint arrays of the skeleton too
fn fk(sk: &NinjaSkeleton, hips: Vec3, local: &[Quat]) -> Vec<Frame> {
    let mut out: Vec<Frame> = Vec::with_capacity(local.len());
    for j in 0..local.len() {
        out.push(match sk.parent_joint[j] {
            None => Frame {
                rot: local[j],
                pos: hips,
            },
            Some(p) => {
                let pf = out[p];
                Frame {
                    rot: pf.rot * local[j],
                    pos: pf.pos + pf.rot * sk.offsets_char[j],
                }
            }
        });
    }
    out
}

/// An orthonormal basis with `v` as its first axis and `pole` (made ⊥ v) as its second.
fn basis(v: Vec3, pole: Vec3) -> Mat3 {
    let e1 = v.normalize();
    let mut e2 = pole - e1 * pole.dot(e1);
    if e2.length_squared() < 1e-10 {
        e2 = e1.any_orthonormal_vector();
    }
    let e2 = e2.normalize();
    Mat3::from_cols(e1, e2, e1.cross(e2))
}

/// The rotation that takes rest bone vector `rest` with rest pole `rest_pole` onto `now`,
/// `now_pole`.
fn aim(rest: Vec3, rest_pole: Vec3, now: Vec3, now_pole: Vec3) -> Quat {
    let m = basis(now, now_pole) * basis(rest, rest_pole).transpose();
    Quat::from_mat3(&m).normalize()
}

/// Indices of the leg joints of one side.
struct Leg {
    up: usize,
    knee: usize,
    foot: usize,
    toe: usize,
}

/// Places the ankle of `leg` at `target` with the foot's world rotation `foot_rot`, by
/// analytic two-bone IK (law of cosines). The knee bends towards the knee direction of the
/// current pose. Rewrites the local rotations of UpLeg, Leg and Foot.
fn two_bone_ik(
    sk: &NinjaSkeleton,
    hips: Vec3,
    local: &mut [Quat],
    leg: &Leg,
    target: Vec3,
    foot_rot: Quat,
) {
    let w = fk(sk, hips, local);
    let parent = w[sk.parent_joint[leg.up].unwrap()].rot;
    let h = w[leg.up].pos;
    let v1 = sk.offsets_char[leg.knee];
    let v2 = sk.offsets_char[leg.foot];
    let (l1, l2) = (v1.length(), v2.length());
    let to = target - h;
    let d = to
        .length()
        .clamp((l1 - l2).abs() + 1e-3, (l1 + l2) * 0.99995);
    let dir = to.normalize_or(Vec3::NEG_Y);
    // Knee forward direction of the keyed pose.
    let pole = w[leg.up].rot * Vec3::Z;
    let side = pole - dir * pole.dot(dir);
    let side = side.normalize_or(dir.any_orthonormal_vector());
    let a = (l1 * l1 - l2 * l2 + d * d) / (2.0 * d);
    let hh = (l1 * l1 - a * a).max(0.0).sqrt();
    let knee = h + dir * a + side * hh;
    let ankle = h + dir * d;
    let r_up = aim(v1, Vec3::Z, knee - h, side);
    let r_knee = aim(v2, Vec3::Z, ankle - knee, side);
    local[leg.up] = (parent.inverse() * r_up).normalize();
    local[leg.knee] = (r_up.inverse() * r_knee).normalize();
    local[leg.foot] = (r_knee.inverse() * foot_rot).normalize();
}

/// The yaw (rotation about +Y) part of a rotation, for laying a foot flat.
fn yaw_of(q: Quat) -> Quat {
    let f = q * Vec3::Z;
    let ang = f.x.atan2(f.z);
    Quat::from_rotation_y(ang)
}

fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Sole sample points of each foot as (joint, offset in the joint's rest frame, cm), the lowest
/// points of the tabi: used to keep feet above the floor.
pub fn sole_points(sk: &NinjaSkeleton, side: usize) -> Vec<(usize, Vec3)> {
    let s = if side == 0 { "Left" } else { "Right" };
    let sx = if side == 0 { 1.0 } else { -1.0 };
    let foot = sk.joint(&format!("{s}Foot"));
    let toe = sk.joint(&format!("{s}ToeBase"));
    let rest = sk.rest_positions_char();
    let (a, b) = (rest[foot], rest[toe]);
    let mut out = Vec::new();
    // Heel, the outer and inner edges, the ball; the toe tip and its edges on the toe joint.
    for (x, z) in [
        (0.4, -7.8),
        (0.0, -6.5),
        (3.8, -2.0),
        (-3.0, -2.0),
        (4.6, 8.0),
        (-4.0, 8.0),
    ] {
        out.push((foot, Vec3::new(a.x + sx * x, 0.0, a.z + z) - a));
    }
    for (x, z) in [
        (4.6, -0.5),
        (-4.2, -0.5),
        (0.0, 8.0),
        (3.0, 6.0),
        (-2.5, 6.0),
    ] {
        out.push((toe, Vec3::new(b.x + sx * x, 0.0, b.z + z) - b));
    }
    out
}

/// Expands one clip source into frames at [`FPS`].
pub fn expand(src: &str, sk: &NinjaSkeleton) -> Result<Expanded, ClipError> {
    expand_at(src, sk, FPS)
}

/// Expands one clip source into frames at `fps` frames per second (frame `f` at `f / fps` s).
pub fn expand_at(src: &str, sk: &NinjaSkeleton, fps: f32) -> Result<Expanded, ClipError> {
    if !(fps.is_finite() && fps >= 1.0) {
        return Err(ClipError::Parse {
            clip: "?".into(),
            msg: format!("frame rate {fps} is not a number of frames per second >= 1"),
        });
    }
    let (file, keys, flights) = parse(src, sk)?;
    let nj = sk.joint_count();
    let frames = (file.duration * fps).round() as usize + 1;
    let rest_hips = sk.offsets_char[0];
    let mirror: Vec<bool> = sk
        .base_names
        .iter()
        .map(|n| n.starts_with("Right"))
        .collect();
    let legs = ["Left", "Right"].map(|s| Leg {
        up: sk.joint(&format!("{s}UpLeg")),
        knee: sk.joint(&format!("{s}Leg")),
        foot: sk.joint(&format!("{s}Foot")),
        toe: sk.joint(&format!("{s}ToeBase")),
    });
    let soles = [sole_points(sk, 0), sole_points(sk, 1)];
    let rest = sk.rest_positions_char();
    // Finger joints: (joint, side, segment; thumb segments are 11..13).
    let fingers: Vec<(usize, usize, usize)> = sk
        .base_names
        .iter()
        .enumerate()
        .filter_map(|(j, n)| {
            let side = if n.starts_with("LeftHand") {
                0
            } else if n.starts_with("RightHand") {
                1
            } else {
                return None;
            };
            let seg = n.chars().last()?.to_digit(10)? as usize;
            (seg <= 3).then_some((j, side, if n.contains("Thumb") { 10 + seg } else { seg }))
        })
        .collect();
    // The key segment holding time t: keys `seg` and `seg + 1`.
    let segment_at = |t: f32| -> usize {
        let n = keys.len();
        (0..n - 1)
            .find(|&i| t <= keys[i + 1].t + 1e-5)
            .unwrap_or(n - 2)
    };
    // A foot is planted (or pivoting) between two consecutive keys that both say so.
    let state_at = |t: f32, which: fn(&Key) -> [bool; 2], side: usize| -> bool {
        let seg = segment_at(t);
        which(&keys[seg])[side] && which(&keys[seg + 1])[side]
    };

    // Pass 1: the keyed motion (forward kinematics only).
    let mut hips_char = Vec::with_capacity(frames);
    let mut locals: Vec<Vec<Quat>> = Vec::with_capacity(frames);
    let mut fk_frames: Vec<Vec<Frame>> = Vec::with_capacity(frames);
    for f in 0..frames {
        let t = f as f32 / fps;
        let vals = interpolate(&keys, file.looping, t);
        let mut local: Vec<Quat> = (0..nj).map(|j| euler(vals[j], mirror[j])).collect();
        // Fists: curl every finger joint by the key's amount (the thumb folds across).
        let fist = vals[nj + 1];
        for &(j, side, seg) in &fingers {
            let c = fist[side];
            if c == 0.0 {
                continue;
            }
            let deg = match seg {
                1 => [0.0, 0.0, -80.0],
                2 => [0.0, 0.0, -95.0],
                3 => [0.0, 0.0, -70.0],
                // The thumb folds down (x > 0 turns +z to −y) across the front of the fist.
                11 => [35.0, -10.0, -20.0],
                12 => [25.0, 0.0, -25.0],
                _ => [20.0, 0.0, -30.0],
            };
            local[j] = (local[j] * euler(deg.map(|d| d * c), mirror[j])).normalize();
        }
        let keyed = Vec3::from_array(vals[nj]);
        let offset = flights
            .iter()
            .find(|fl| t > fl.t0 && t < fl.t1)
            .map_or(keyed, |fl| fl.at(t));
        let hips = rest_hips + offset;
        fk_frames.push(fk(sk, hips, &local));
        hips_char.push(hips);
        locals.push(local);
    }

    // Pass 2: foot targets. Runs of planted/pivoting frames hold the ball of the foot where the
    // run began (where it stood at frame 0 for a run begun by a `home` key); a planted frame
    // after pivoting keeps the last pivot yaw.
    let ball_from_ankle = rest[legs[0].toe] - rest[legs[0].foot];
    let ankle_height = rest[legs[0].foot].y;
    let ball_height = rest[legs[0].toe].y;
    let mut planted = [vec![false; frames], vec![false; frames]];
    let mut targets: [Vec<Option<(Vec3, Quat)>>; 2] = [vec![None; frames], vec![None; frames]];
    for side in 0..2 {
        let leg = &legs[side];
        let mut run: Option<(Vec3, Quat)> = None; // (ball, yaw) of the current run
                                                  // While pivoting, the foot turns by as much as the keyed foot has turned since the pivot
                                                  // began (a relative turn, so that switching from planted to pivoting never snaps).
        let mut last_fk_yaw = Quat::IDENTITY;
        // Where the foot stood at frame 0: its plant, or the keyed ball put on the floor.
        let mut at_frame0: Option<(Vec3, Quat)> = None;
        for f in 0..frames {
            let t = f as f32 / fps;
            // On the floor between two keys that both put it there (planted or pivoting);
            // pivoting only while both keys say so (plant → pivot starts turning at the pivot key).
            let on = state_at(
                t,
                |k| [k.plant[0] || k.pivot[0], k.plant[1] || k.pivot[1]],
                side,
            );
            let pivot = on && state_at(t, |k| k.pivot, side);
            let fk_yaw = yaw_of(fk_frames[f][leg.foot].rot);
            let b = fk_frames[f][leg.toe].pos;
            let here = (Vec3::new(b.x, ball_height, b.z), fk_yaw);
            let home = *at_frame0.get_or_insert(here);
            if !on {
                run = None;
                last_fk_yaw = fk_yaw;
                continue;
            }
            planted[side][f] = true;
            let (ball, yaw) = run.get_or_insert_with(|| {
                // The key that began the run: the first of the segment holding frame f.
                if keys[segment_at(t)].home[side] {
                    home
                } else {
                    here
                }
            });
            if pivot {
                *yaw = (fk_yaw * last_fk_yaw.inverse() * *yaw).normalize();
            }
            last_fk_yaw = fk_yaw;
            let ankle = *ball - *yaw * ball_from_ankle;
            targets[side][f] = Some((Vec3::new(ankle.x, ankle_height, ankle.z), *yaw));
        }
        // Ease into and out of each run over RELEASE seconds.
        let fixed: Vec<Option<(Vec3, Quat)>> = targets[side].clone();
        for f in 0..frames {
            if fixed[f].is_some() {
                continue;
            }
            let fk_p = fk_frames[f][leg.foot].pos;
            let fk_r = fk_frames[f][leg.foot].rot;
            let prev = (0..f).rev().find(|&g| fixed[g].is_some());
            let next = (f + 1..frames).find(|&g| fixed[g].is_some());
            let weight = |g: Option<usize>| match g {
                Some(g) => 1.0 - smoothstep((f as f32 - g as f32).abs() / fps / RELEASE),
                None => 0.0,
            };
            let w_prev = weight(prev);
            let w_next = weight(next).min(1.0 - w_prev);
            let w_total = w_prev + w_next;
            let (mut p, mut r) = (fk_p, fk_r);
            if w_prev > 0.0 {
                let (tp, tr) = fixed[prev.unwrap()].unwrap();
                p += (tp - fk_p) * w_prev;
                r = r.slerp(tr, w_prev);
            }
            if w_next > 0.0 {
                let (tp, tr) = fixed[next.unwrap()].unwrap();
                p += (tp - fk_p) * w_next;
                r = r.slerp(tr, w_next / (1.0 - w_prev).max(1e-6));
            }
            if w_total > 0.0 {
                targets[side][f] = Some((p, r));
            }
        }
    }

    // Longest comfortable hip-to-ankle distance: just short of a locked knee.
    let reach =
        0.995 * (sk.offsets_char[legs[0].knee].length() + sk.offsets_char[legs[0].foot].length());
    // Pass 3: IK onto the targets, flat toes while planted, soles kept above the floor.
    for f in 0..frames {
        let hips = hips_char[f];
        let local = &mut locals[f];
        for side in 0..2 {
            let leg = &legs[side];
            let mut target = targets[side][f];
            if planted[side][f] {
                local[leg.toe] = Quat::IDENTITY;
                // Out of reach: raise the heel, rolling the foot about the fixed ball of the foot
                // (toes stay flat), as a person does when the hips move far from a planted foot.
                let (ankle, yaw) = target.expect("planted frames have targets");
                let ball = ankle + yaw * ball_from_ankle;
                let hip = fk(sk, hips, local)[leg.up].pos;
                let at = |phi: f32| ball - yaw * Quat::from_rotation_x(phi) * ball_from_ankle;
                if (at(0.0) - hip).length() > reach {
                    let (mut lo, mut hi) = (0.0f32, MAX_HEEL_RAISE.to_radians());
                    for _ in 0..24 {
                        let mid = 0.5 * (lo + hi);
                        if (at(mid) - hip).length() > reach {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                    }
                    target = Some((at(hi), yaw * Quat::from_rotation_x(hi)));
                    local[leg.toe] = Quat::from_rotation_x(-hi);
                }
            }
            if let Some((p, r)) = target {
                two_bone_ik(sk, hips, local, leg, p, r);
            }
            let w = fk(sk, hips, local);
            let lowest = soles[side]
                .iter()
                .map(|(j, o)| (w[*j].pos + w[*j].rot * *o).y)
                .fold(f32::INFINITY, f32::min);
            if lowest < 0.0 {
                let p = w[leg.foot].pos - Vec3::Y * lowest;
                let r = w[leg.foot].rot;
                two_bone_ik(sk, hips, local, leg, p, r);
            }
        }
    }
    let airborne = (0..frames)
        .map(|f| {
            let t = f as f32 / fps;
            file.airborne
                .iter()
                .chain(&file.flight)
                .any(|[a, b]| t >= a - 1e-4 && t <= b + 1e-4)
        })
        .collect();
    let key_times = keys.iter().map(|k| k.t).collect();
    Ok(Expanded {
        name: file.name.clone(),
        fps,
        frames,
        hips_char,
        local: locals,
        planted,
        airborne,
        key_times,
    })
}

impl Expanded {
    /// World placement of every joint at frame `f` (character frame, cm): (rotation, position).
    pub fn joint_world(&self, sk: &NinjaSkeleton, f: usize) -> Vec<(Quat, Vec3)> {
        fk(sk, self.hips_char[f], &self.local[f])
            .into_iter()
            .map(|w| (w.rot, w.pos))
            .collect()
    }

    /// The glTF clip: translation, rotation and scale tracks on every joint node, LINEAR, keys at
    /// every frame. The Hips' values are in armature space (see [`super::skeleton`]).
    pub fn to_clip(&self, sk: &NinjaSkeleton) -> Clip {
        let times: Vec<f32> = (0..self.frames).map(|f| f as f32 / FPS).collect();
        self.tracks(sk, times, false)
    }

    /// The clip the way Mixamo exports hold it (MIXAMO.md): LINEAR keys on every frame at the
    /// expansion's frame rate, the first at `start` seconds (1/30 s in several real files), and
    /// every rotation key converted from its rotation matrix on its own, with no care for the
    /// previous key's sign: consecutive keys flip sign wherever the conversion's branch changes
    /// (real exports flip up to 23 times in a clip), and a player must take the shortest arc.
    pub fn to_mixamo_clip(&self, sk: &NinjaSkeleton, start: f32) -> Clip {
        let times: Vec<f32> = (0..self.frames)
            .map(|f| start + f as f32 / self.fps)
            .collect();
        self.tracks(sk, times, true)
    }

    fn tracks(&self, sk: &NinjaSkeleton, times: Vec<f32>, exporter_signs: bool) -> Clip {
        let mut clip = Clip {
            name: self.name.clone(),
            start: times[0],
            end: *times.last().unwrap(),
            ..Default::default()
        };
        let a_from_c = armature_from_char();
        for (j, &node) in sk.joint_nodes.iter().enumerate() {
            let (tr, rot): (Vec<Vec3>, Vec<Quat>) = if j == 0 {
                (
                    self.hips_char.iter().map(|h| a_from_c * *h).collect(),
                    self.local
                        .iter()
                        .map(|l| (a_from_c * l[0]).normalize())
                        .collect(),
                )
            } else {
                (
                    vec![sk.offsets_char[j]; self.frames],
                    self.local.iter().map(|l| l[j].normalize()).collect(),
                )
            };
            let mut rot = rot;
            if exporter_signs {
                // Each key converted from its rotation matrix (Shoemake's branches, as an
                // exporter that goes through matrices does): the sign follows the branch, so it
                // flips between consecutive keys wherever the branch changes.
                for q in &mut rot {
                    *q = Quat::from_mat3(&Mat3::from_quat(*q)).normalize();
                }
            } else {
                // Keep consecutive keys on the same hemisphere (shortest-arc LINEAR playback).
                for i in 1..rot.len() {
                    if rot[i].dot(rot[i - 1]) < 0.0 {
                        rot[i] = -rot[i];
                    }
                }
            }
            clip.translations.push(Track {
                node,
                times: times.clone(),
                values: tr,
                interpolation: Interpolation::Linear,
            });
            clip.rotations.push(Track {
                node,
                times: times.clone(),
                values: rot,
                interpolation: Interpolation::Linear,
            });
            clip.scales.push(Track {
                node,
                times: times.clone(),
                values: vec![Vec3::ONE; self.frames],
                interpolation: Interpolation::Linear,
            });
        }
        clip
    }
}

/// Expands every built-in clip, in [`SOURCES`] order.
pub fn expand_all(sk: &NinjaSkeleton) -> Result<Vec<Expanded>, ClipError> {
    SOURCES.iter().map(|(_, src)| expand(src, sk)).collect()
}
