//! Playback: time, looping, speed, scrubbing, crossfades and root motion.
//!
//! The player owns plain values (which clip, what time, how fast) and two scratch poses; the clips
//! themselves stay in the [`crate::Rig`] and are passed in on each call, so the UI can swap the
//! player's settings without touching the data. Nothing allocates after the first frame.
//!
//! # Root motion
//! The hips carry the character's travel. In a Mixamo rig their translation is expressed in the
//! armature's space (0.01-scaled and rotated 90° about X), so "horizontal" is decided in **world**
//! space: the XZ plane (glTF is Y up). A horizontal world displacement `d` becomes the local
//! displacement `P⁻¹ d`, where `P` is the 3×3 part of `world_from_parent` of the hips.
//!
//! - [`RootMotion::InPlace`]: the hips' world XZ is pinned to their rest XZ (the origin for
//!   Mixamo rigs), vertical motion is kept.
//! - [`RootMotion::Travel`]: the clip's displacement accumulates over loops (each wrap adds the
//!   clip's end−start horizontal travel), and a switch to another clip starts it where the
//!   character stands, so the character never snaps back.
//! - [`RootMotion::Authored`]: the clip as stored (jumps back at each loop).
//!
//! In the first two modes the clip's change of **heading** carries over loops too: the turn of
//! the hips about the vertical from the clip's first to its last frame (the twist about world Y
//! of `q_end q_start⁻¹`) is added at each wrap, and the next loop is played turned by it — about
//! the pinned hips in place, about the point that maps the clip's start onto its end in Travel.
//! A clip that ends turned (the built-in kata ends facing the other way, 41 cm forward) then
//! loops without a jump, where the authored loop turns the whole body in one frame and tears the
//! garments off it. A clip that ends as it starts has no turn, and nothing changes. A switch to
//! another clip keeps the heading the loops have accumulated.

use crate::anim::pose::slerp_shortest;
use crate::anim::{Clip, Pose, Skeleton, Skin};
use crate::math::{Mat3, Mat4, Quat, Transform, Vec3};

/// What happens at the end of a clip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LoopMode {
    /// Wrap around (forwards and backwards).
    #[default]
    Loop,
    /// Hold the last (or, at negative speed, the first) frame.
    Once,
}

/// How the hips' horizontal travel is treated; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RootMotion {
    #[default]
    InPlace,
    Travel,
    Authored,
}

/// One clip being played: its time and its accumulated horizontal offset (world space).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Layer {
    clip: usize,
    /// Seconds on the clip's own timeline, within `[clip.start, clip.end]`.
    time: f32,
    /// Horizontal world displacement added to the hips (Travel mode), after the turn.
    offset_world: Vec3,
    /// Turn about world Y from the loops played so far, radians (InPlace and Travel).
    heading: f32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum FadeFrom {
    /// The skeleton's rest (bind) pose: the start-up blend.
    Rest,
    Clip(Layer),
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Fade {
    from: FadeFrom,
    /// Seconds since the fade started.
    elapsed: f32,
    /// Seconds the fade lasts (> 0).
    duration: f32,
}

/// Plays clips of one skeleton. See the module docs.
#[derive(Clone, Debug)]
pub struct Player {
    rest: Pose,
    parents: Vec<Option<u32>>,
    hips: Option<usize>,
    /// Rest world position of the hips (In-place mode pins their XZ there).
    hips_rest_world: Vec3,
    current: Option<Layer>,
    fade: Option<Fade>,
    playing: bool,
    /// Playback rate; 1 = real time, negative plays backwards. Range: any finite value.
    speed: f32,
    loop_mode: LoopMode,
    root_motion: RootMotion,
    /// Seconds of blend from the rest pose into the first clip started with [`Player::play`]
    /// when nothing was playing. Range ≥ 0; default 0 (no blend). Cloth likes ~0.5 s.
    startup_blend: f32,
    scratch: Pose,
}

impl Player {
    /// A stopped player for `skeleton`. The hips are the node whose base name is `Hips` in any
    /// case (KayKit's `hips`), else the first joint of the first skin; with neither, root motion
    /// is left as authored. A scene sets the hips its bone map finds in any naming scheme
    /// ([`Player::set_hips`]).
    pub fn new(skeleton: &Skeleton, skins: &[Skin]) -> Self {
        let hips = skeleton
            .names
            .iter()
            .position(|n| Skeleton::base_name(n).eq_ignore_ascii_case("Hips"))
            .or_else(|| {
                skins
                    .first()
                    .and_then(|s| s.joints.first())
                    .map(|&j| j as usize)
            })
            .filter(|&h| h < skeleton.len());
        let rest = Pose::rest(skeleton);
        let hips_rest_world = match hips {
            Some(h) => skeleton.rest_world()[h].transform_point3(Vec3::ZERO),
            None => Vec3::ZERO,
        };
        Self {
            scratch: rest.clone(),
            rest,
            parents: skeleton.parents.clone(),
            hips,
            hips_rest_world,
            current: None,
            fade: None,
            playing: false,
            speed: 1.0,
            loop_mode: LoopMode::Loop,
            root_motion: RootMotion::InPlace,
            startup_blend: 0.0,
        }
    }

    /// Node index of the hips, if found.
    pub fn hips(&self) -> Option<usize> {
        self.hips
    }

    /// Takes node `hips` of `skeleton` as the hips (root motion, the in-place anchor): a scene
    /// passes the one its humanoid bone map found (Unreal's `pelvis`, Rigify's `DEF-hips`, a
    /// scene file's `[bones]`). An index outside the skeleton is ignored.
    pub fn set_hips(&mut self, skeleton: &Skeleton, hips: usize) {
        if hips < skeleton.len() {
            self.hips = Some(hips);
            self.hips_rest_world = skeleton.rest_world()[hips].transform_point3(Vec3::ZERO);
        }
    }

    /// Starts `clip` at its start time (its end at negative speed) and plays it. With nothing
    /// playing before, blends in from the rest pose over the start-up blend time; otherwise this
    /// is a cut (see [`Player::crossfade_to`] for a smooth switch). An invalid index stops.
    pub fn play(&mut self, clip: usize, clips: &[Clip]) {
        let Some(c) = clips.get(clip) else {
            self.stop();
            return;
        };
        let first = self.current.is_none();
        let time = if self.speed < 0.0 { c.end } else { c.start };
        let mut layer = Layer {
            clip,
            time,
            offset_world: Vec3::ZERO,
            heading: 0.0,
        };
        if let Some(cur) = self.current {
            // A cut continues from where (Travel) and how (both) the character stands.
            self.continue_from(&cur, &mut layer, clips);
        }
        self.current = Some(layer);
        self.fade = if first && self.startup_blend > 0.0 {
            Some(Fade {
                from: FadeFrom::Rest,
                elapsed: 0.0,
                duration: self.startup_blend,
            })
        } else {
            None
        };
        self.playing = true;
    }

    /// Switches to `clip` over `duration` seconds, blending the local TRS of the outgoing and the
    /// incoming clip (both keep playing during the fade). A duration ≤ 0 is a cut.
    pub fn crossfade_to(&mut self, clip: usize, duration: f32, clips: &[Clip]) {
        let Some(cur) = self.current else {
            self.play(clip, clips);
            return;
        };
        let Some(c) = clips.get(clip) else {
            return;
        };
        if duration.is_nan() || duration <= 0.0 {
            self.play(clip, clips);
            return;
        }
        // If a fade is still running, the outgoing side restarts from the clip now dominant;
        // the pose jumps by at most what the unfinished fade had not yet blended in.
        let time = if self.speed < 0.0 { c.end } else { c.start };
        let mut layer = Layer {
            clip,
            time,
            offset_world: Vec3::ZERO,
            heading: 0.0,
        };
        self.continue_from(&cur, &mut layer, clips);
        self.fade = Some(Fade {
            from: FadeFrom::Clip(cur),
            elapsed: 0.0,
            duration,
        });
        self.current = Some(layer);
        self.playing = true;
    }

    /// Stops and forgets the clip: the pose returns to rest.
    pub fn stop(&mut self) {
        self.current = None;
        self.fade = None;
        self.playing = false;
    }

    pub fn pause(&mut self) {
        self.playing = false;
    }

    pub fn resume(&mut self) {
        self.playing = self.current.is_some();
    }

    pub fn is_playing(&self) -> bool {
        self.playing
    }

    /// Playback rate; 1 = real time, negative plays backwards. Non-finite values are ignored.
    pub fn set_speed(&mut self, speed: f32) {
        if speed.is_finite() {
            self.speed = speed;
        }
    }

    pub fn speed(&self) -> f32 {
        self.speed
    }

    pub fn set_loop_mode(&mut self, mode: LoopMode) {
        self.loop_mode = mode;
    }

    pub fn loop_mode(&self) -> LoopMode {
        self.loop_mode
    }

    pub fn set_root_motion(&mut self, mode: RootMotion) {
        self.root_motion = mode;
    }

    pub fn root_motion(&self) -> RootMotion {
        self.root_motion
    }

    /// Seconds of blend from rest into the first clip (≥ 0; default 0). Negative or NaN → 0.
    pub fn set_startup_blend(&mut self, seconds: f32) {
        self.startup_blend = if seconds > 0.0 { seconds } else { 0.0 };
    }

    /// The current clip index, if any.
    pub fn clip(&self) -> Option<usize> {
        self.current.map(|l| l.clip)
    }

    /// The current time on the current clip's timeline (seconds).
    pub fn time(&self) -> f32 {
        self.current.map_or(0.0, |l| l.time)
    }

    /// True while a crossfade (or the start-up blend) is running.
    pub fn is_fading(&self) -> bool {
        self.fade.is_some()
    }

    /// Scrubs the current clip to time `t` (clip timeline, clamped to its range). Ends any fade.
    /// Travel offsets are kept, so scrubbing moves the character along the clip's own path.
    pub fn seek(&mut self, t: f32, clips: &[Clip]) {
        if let Some(layer) = &mut self.current {
            if let Some(c) = clips.get(layer.clip) {
                layer.time = if t.is_finite() {
                    t.clamp(c.start, c.end)
                } else {
                    c.start
                };
            }
        }
        self.fade = None;
    }

    /// Advances time by `dt` seconds of wall time (× speed) when playing.
    pub fn advance(&mut self, dt: f32, clips: &[Clip]) {
        if !self.playing || !dt.is_finite() || dt <= 0.0 {
            return;
        }
        let step = dt * self.speed;
        if let Some(mut layer) = self.current {
            self.advance_layer(&mut layer, step, clips);
            self.current = Some(layer);
        }
        if let Some(mut fade) = self.fade {
            if let FadeFrom::Clip(mut from) = fade.from {
                self.advance_layer(&mut from, step, clips);
                fade.from = FadeFrom::Clip(from);
            }
            fade.elapsed += dt;
            self.fade = if fade.elapsed >= fade.duration {
                None
            } else {
                Some(fade)
            };
        }
    }

    /// Writes the pose for the current time into `out` (resized to the skeleton): rest where no
    /// clip plays or a channel is not animated.
    pub fn pose(&mut self, clips: &[Clip], out: &mut Pose) {
        out.local.clone_from(&self.rest.local);
        let Some(layer) = self.current else {
            return;
        };
        self.layer_pose(&layer, clips, out);
        if let Some(fade) = self.fade {
            let s = smoothstep(fade.elapsed / fade.duration);
            let mut from = std::mem::take(&mut self.scratch);
            from.local.clone_from(&self.rest.local);
            if let FadeFrom::Clip(l) = fade.from {
                self.layer_pose(&l, clips, &mut from);
            }
            for (o, f) in out.local.iter_mut().zip(&from.local) {
                *o = Transform {
                    translation: f.translation.lerp(o.translation, s),
                    rotation: slerp_shortest(f.rotation, o.rotation, s),
                    scale: f.scale.lerp(o.scale, s),
                };
            }
            self.scratch = from;
        }
    }

    /// Moves one layer's time by `step` seconds of clip time, wrapping or clamping, and for each
    /// wrap composes the layer's turn and offset with the clip's own (see the module docs), so
    /// that neither InPlace nor Travel jumps.
    fn advance_layer(&self, layer: &mut Layer, step: f32, clips: &[Clip]) {
        let Some(c) = clips.get(layer.clip) else {
            return;
        };
        let d = c.duration();
        let mut t = layer.time + step;
        if d <= 0.0 {
            layer.time = c.start;
            return;
        }
        match self.loop_mode {
            LoopMode::Once => t = t.clamp(c.start, c.end),
            LoopMode::Loop => {
                let wraps = ((t - c.start) / d).floor();
                if wraps != 0.0 {
                    t -= wraps * d;
                    // Guard against t landing on c.end through rounding.
                    if t >= c.end {
                        t = c.start;
                    }
                    t = t.max(c.start);
                    self.wrap_root(layer, c, wraps);
                }
            }
        }
        layer.time = t;
    }

    /// Composes the layer's root transform `M` (turn `heading` about Y, then `offset_world`)
    /// with the clip's start-to-end transform `T` once per wrap (`M ← M T`; `M T⁻¹` for a wrap
    /// backwards). `T(p) = R(θ) (p − s) + e` with `s`, `e` the hips' horizontal world positions
    /// at the clip's start and end and `θ` its turn ([`Player::clip_turn`]), so `T` puts the
    /// clip's first frame where and as its last one stands.
    fn wrap_root(&self, layer: &mut Layer, clip: &Clip, wraps: f32) {
        let s = horizontal(self.hips_world_at(clip, clip.start));
        let e = horizontal(self.hips_world_at(clip, clip.end));
        let turn = self.clip_turn(clip);
        // One wrap forward: θ, with d = e − R(θ) s; backward (T⁻¹): −θ, s − R(−θ) e.
        let (theta, d) = if wraps > 0.0 {
            (turn, e - Quat::from_rotation_y(turn) * s)
        } else {
            (-turn, s - Quat::from_rotation_y(-turn) * e)
        };
        // Normally one wrap a frame; an absurd time step still ends in bounded work.
        for _ in 0..(wraps.abs() as u32).min(1 << 16) {
            layer.offset_world += Quat::from_rotation_y(layer.heading) * d;
            layer.heading = wrap_angle(layer.heading + theta);
        }
    }

    /// The clip's turn about world Y from its first frame to its last, radians in (−π, π]: the
    /// twist about Y of `q_end q_start⁻¹`, `q` the hips' world rotation with their ancestors at
    /// rest (as [`Player::hips_world_at`]). 0 without hips or a hips rotation track.
    fn clip_turn(&self, clip: &Clip) -> f32 {
        let Some(h) = self.hips else {
            return 0.0;
        };
        let Some(track) = clip.rotation_track(h) else {
            return 0.0;
        };
        let sample = |t: f32| {
            crate::anim::pose::sample_track(track, t)
                .filter(|q| q.is_finite() && q.length_squared() > 1e-12)
                .map(|q| Mat3::from_quat(q.normalize()))
        };
        let (Some(a), Some(b)) = (sample(clip.start), sample(clip.end)) else {
            return 0.0;
        };
        let p3 = Mat3::from_mat4(self.world_from_hips_parent_rest());
        let det = p3.determinant();
        if !det.is_finite() || det.abs() < 1e-20 {
            return 0.0;
        }
        // World rotations P R; their quotient P R_e R_sᵀ P⁻¹ (P's scale cancels).
        let delta = p3 * b * a.transpose() * p3.inverse();
        yaw_of(delta)
    }

    /// World position of the hips in `clip` at `t` as authored (no root motion processing),
    /// assuming the ancestors of the hips are at rest unless the clip animates them.
    fn hips_world_at(&self, clip: &Clip, t: f32) -> Vec3 {
        let Some(h) = self.hips else {
            return Vec3::ZERO;
        };
        let mut local = self.rest.local[h].translation;
        if let Some(track) = clip.translation_track(h) {
            if let Some(v) = crate::anim::pose::sample_track(track, t) {
                local = v;
            }
        }
        self.world_from_hips_parent_rest().transform_point3(local)
    }

    /// `world_from_parent` of the hips at rest.
    fn world_from_hips_parent_rest(&self) -> Mat4 {
        self.world_from_hips_parent(&self.rest)
    }

    /// `world_from_parent` of the hips in `pose` (identity for a root hips).
    fn world_from_hips_parent(&self, pose: &Pose) -> Mat4 {
        let Some(h) = self.hips else {
            return Mat4::IDENTITY;
        };
        let mut m = Mat4::IDENTITY;
        let mut node = self.parents[h];
        // Walk up to the root, composing parent_from_node on the left.
        while let Some(p) = node {
            m = pose.local[p as usize].to_mat4() * m;
            node = self.parents[p as usize];
        }
        m
    }

    /// Sets `next`'s turn and offset to continue from `cur`: the turn its loops accumulated
    /// (InPlace and Travel) and, in Travel, the offset that puts `next`'s hips, horizontally,
    /// where `cur`'s are now.
    fn continue_from(&self, cur: &Layer, next: &mut Layer, clips: &[Clip]) {
        next.offset_world = Vec3::ZERO;
        next.heading = 0.0;
        if self.root_motion == RootMotion::Authored {
            return;
        }
        next.heading = cur.heading;
        if self.root_motion != RootMotion::Travel {
            return;
        }
        let (Some(a), Some(b)) = (clips.get(cur.clip), clips.get(next.clip)) else {
            return;
        };
        let turn = Quat::from_rotation_y(cur.heading);
        let here = turn * horizontal(self.hips_world_at(a, cur.time)) + cur.offset_world;
        let there = turn * horizontal(self.hips_world_at(b, next.time));
        next.offset_world = horizontal(here - there);
    }

    /// Samples one layer over the rest pose already in `out` and applies root motion.
    fn layer_pose(&self, layer: &Layer, clips: &[Clip], out: &mut Pose) {
        let Some(c) = clips.get(layer.clip) else {
            return;
        };
        c.sample(layer.time, out);
        let Some(h) = self.hips else {
            return;
        };
        if h >= out.local.len() {
            return;
        }
        let world_from_parent = self.world_from_hips_parent(out);
        let p3 = Mat3::from_mat4(world_from_parent);
        let det = p3.determinant();
        if !det.is_finite() || det.abs() < 1e-20 {
            return;
        }
        let parent_from_world3 = p3.inverse();
        let local = out.local[h].translation;
        let world = world_from_parent.transform_point3(local);
        let delta_world = match self.root_motion {
            RootMotion::Authored => return,
            RootMotion::InPlace => horizontal(self.hips_rest_world - world),
            RootMotion::Travel => {
                // M: turn about Y, then the offset (the hips' height is kept).
                let flat = horizontal(world);
                Quat::from_rotation_y(layer.heading) * flat + layer.offset_world - flat
            }
        };
        out.local[h].translation = local + parent_from_world3 * delta_world;
        if layer.heading != 0.0 {
            // The turn in the parent's frame: P⁻¹ R_y P (a rotation when P's scale is uniform).
            let turn = parent_from_world3 * Mat3::from_rotation_y(layer.heading) * p3;
            let q = Quat::from_mat3(&turn).normalize();
            if q.is_finite() {
                out.local[h].rotation = (q * out.local[h].rotation).normalize();
            }
        }
    }
}

/// The world XZ part of a vector (Y up).
fn horizontal(v: Vec3) -> Vec3 {
    Vec3::new(v.x, 0.0, v.z)
}

/// An angle in radians brought into (−π, π].
fn wrap_angle(a: f32) -> f32 {
    let w = a.rem_euclid(std::f32::consts::TAU);
    if w > std::f32::consts::PI {
        w - std::f32::consts::TAU
    } else {
        w
    }
}

/// The angle of `m`'s twist about world Y (swing–twist decomposition), radians in (−π, π]:
/// for the quaternion (x, y, z, w) of `m`, `2 atan2(y, w)`. 0 for a matrix that is not a finite
/// rotation or has no twist component (a half-turn about a horizontal axis).
fn yaw_of(m: Mat3) -> f32 {
    let q = Quat::from_mat3(&m);
    if !q.is_finite() || (q.y * q.y + q.w * q.w) < 1e-12 {
        return 0.0;
    }
    wrap_angle(2.0 * q.y.atan2(q.w))
}

/// 3s² − 2s³ on [0, 1]: a fade whose rate starts and ends at zero, so joint velocities stay
/// continuous when a fade begins and ends.
fn smoothstep(s: f32) -> f32 {
    let s = s.clamp(0.0, 1.0);
    s * s * (3.0 - 2.0 * s)
}
