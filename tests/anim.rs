//! The player on a Mixamo-shaped skeleton: an armature node 0.01-scaled and rotated 90° about X
//! above `mixamorig:Hips`, whose translation track is therefore in armature units.

use drape::anim::{Clip, Interpolation, LoopMode, Player, Pose, RootMotion, Skeleton, Skin, Track};
use drape::math::{Mat4, Quat, Transform, Vec3};
use std::f32::consts::TAU;

const ARMATURE: usize = 0;
const HIPS: usize = 1;
const SPINE: usize = 2;
const HEAD: usize = 3;
const FOOT: usize = 4;

fn skeleton() -> Skeleton {
    let armature = Transform {
        translation: Vec3::ZERO,
        rotation: Quat::from_rotation_x(90f32.to_radians()),
        scale: Vec3::splat(0.01),
    };
    let hips_local = armature_from_world().transform_point3(Vec3::new(0.0, 1.0, 0.0));
    Skeleton {
        names: [
            "Armature",
            "mixamorig:Hips",
            "mixamorig:Spine",
            "mixamorig:Head",
            "mixamorig:LeftFoot",
        ]
        .map(String::from)
        .to_vec(),
        parents: vec![None, Some(0), Some(1), Some(2), Some(1)],
        rest: vec![
            armature,
            // The hips' rest rotation undoes the armature's 90°, as in real exports.
            Transform {
                translation: hips_local,
                rotation: Quat::from_rotation_x(-90f32.to_radians()),
                scale: Vec3::ONE,
            },
            Transform::from_translation(Vec3::new(0.0, 10.0, 0.0)),
            Transform::from_translation(Vec3::new(0.0, 50.0, 0.0)),
            Transform::from_translation(Vec3::new(10.0, -90.0, 0.0)),
        ],
    }
}

/// Maps world points to the armature's (hips-parent) space.
fn armature_from_world() -> Mat4 {
    Transform {
        translation: Vec3::ZERO,
        rotation: Quat::from_rotation_x(90f32.to_radians()),
        scale: Vec3::splat(0.01),
    }
    .to_mat4()
    .inverse()
}

/// Builds a LINEAR clip sampled at 30 fps from 1/30 s for `seconds`, from world-space hips
/// positions and spine rotations given as functions of the phase u ∈ [0, 1]. Every other spine
/// key is stored negated, as in real Mixamo files.
fn clip(
    name: &str,
    seconds: f32,
    hips_world: impl Fn(f32) -> Vec3,
    spine: impl Fn(f32) -> Quat,
) -> Clip {
    let keys = (seconds * 30.0).round() as usize + 1;
    let start = 1.0 / 30.0;
    let times: Vec<f32> = (0..keys).map(|i| start + i as f32 / 30.0).collect();
    let u = |i: usize| i as f32 / (keys - 1) as f32;
    let a = armature_from_world();
    Clip {
        name: name.into(),
        start,
        end: *times.last().unwrap(),
        translations: vec![Track {
            node: HIPS as u32,
            times: times.clone(),
            values: (0..keys)
                .map(|i| a.transform_point3(hips_world(u(i))))
                .collect(),
            interpolation: Interpolation::Linear,
        }],
        rotations: vec![Track {
            node: SPINE as u32,
            times,
            values: (0..keys)
                .map(|i| {
                    if i % 2 == 1 {
                        -spine(u(i))
                    } else {
                        spine(u(i))
                    }
                })
                .collect(),
            interpolation: Interpolation::Linear,
        }],
        scales: vec![],
    }
}

/// A walk loop: 1 m forward (+Z) per second, sideways sway and vertical bob that loop.
fn walk() -> Clip {
    clip(
        "walk",
        1.0,
        |u| Vec3::new(0.1 * (TAU * u).sin(), 1.0 + 0.05 * (2.0 * TAU * u).cos(), u),
        |u| Quat::from_rotation_z(0.3 * (TAU * u).sin()),
    )
}

/// An idle: hips lower and slightly off-centre, spine bent forward.
fn idle() -> Clip {
    clip(
        "idle",
        2.0,
        |u| Vec3::new(0.05, 0.95 + 0.01 * (TAU * u).sin(), 0.0),
        |_| Quat::from_rotation_x(0.4),
    )
}

fn world_positions(skeleton: &Skeleton, pose: &Pose) -> Vec<Vec3> {
    let mut world = Vec::new();
    pose.world_from_node(skeleton, &mut world);
    world
        .iter()
        .map(|m| m.transform_point3(Vec3::ZERO))
        .collect()
}

struct Rig {
    skeleton: Skeleton,
    clips: Vec<Clip>,
    player: Player,
    pose: Pose,
}

impl Rig {
    fn new() -> Self {
        let skeleton = skeleton();
        let player = Player::new(&skeleton, &[]);
        let pose = Pose::rest(&skeleton);
        Self {
            skeleton,
            clips: vec![walk(), idle()],
            player,
            pose,
        }
    }

    /// Advances by dt and returns the world positions of every node.
    fn step(&mut self, dt: f32) -> Vec<Vec3> {
        self.player.advance(dt, &self.clips);
        self.now()
    }

    fn now(&mut self) -> Vec<Vec3> {
        self.player.pose(&self.clips, &mut self.pose);
        world_positions(&self.skeleton, &self.pose)
    }
}

fn max_move(a: &[Vec3], b: &[Vec3]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (*x - *y).length())
        .fold(0.0, f32::max)
}

#[test]
fn hips_are_found_by_base_name_or_first_skin_joint() {
    let s = skeleton();
    assert_eq!(Player::new(&s, &[]).hips(), Some(HIPS));
    let mut renamed = s.clone();
    renamed.names[HIPS] = "pelvis".into();
    let skin = Skin {
        joints: vec![SPINE as u32, HIPS as u32],
        inverse_bind: vec![Mat4::IDENTITY; 2],
        ..Skin::default()
    };
    assert_eq!(Player::new(&renamed, &[skin]).hips(), Some(SPINE));
    assert_eq!(Player::new(&renamed, &[]).hips(), None);
}

#[test]
fn in_place_keeps_the_hips_over_the_origin_and_keeps_the_bob() {
    let mut r = Rig::new();
    r.player.set_root_motion(RootMotion::InPlace);
    r.player.play(0, &r.clips);
    let (mut lo, mut hi) = (f32::MAX, f32::MIN);
    for _ in 0..200 {
        let w = r.step(1.0 / 60.0);
        let h = w[HIPS];
        assert!(
            h.x.abs() < 1e-5 && h.z.abs() < 1e-5,
            "hips left the origin: {h}"
        );
        lo = lo.min(h.y);
        hi = hi.max(h.y);
    }
    assert!(hi - lo > 0.09, "vertical bob kept: {lo}..{hi}");
}

#[test]
fn travel_accumulates_across_loops_without_jumps() {
    let mut r = Rig::new();
    r.player.set_root_motion(RootMotion::Travel);
    r.player.play(0, &r.clips);
    let start = r.now();
    let mut prev = start.clone();
    // 3 s at 60 fps: three loops. The fastest joint moves ~1.8 m/s (forward 1, sway 0.63,
    // spine swing at the head): 0.03 m per frame; a loop snapping back would move ≥ 1 m.
    for _ in 0..180 {
        let w = r.step(1.0 / 60.0);
        let m = max_move(&prev, &w);
        assert!(m < 0.04, "jump of {m} m at t = {}", r.player.time());
        prev = w;
    }
    let travelled = prev[HIPS] - start[HIPS];
    assert!(
        (travelled.z - 3.0).abs() < 1e-3 && travelled.x.abs() < 1e-3,
        "travelled {travelled}"
    );
    // The Authored mode snaps back at the loop: the guard above can fail.
    r.player.set_root_motion(RootMotion::Authored);
    r.player.seek(r.clips[0].end - 0.01, &r.clips);
    let before = r.now();
    let after = r.step(0.02);
    assert!(max_move(&before, &after) > 0.9);
}

/// A quarter turn: over 1 s the hips walk 0.5 m forward (+Z) while turning 90° to the left
/// (about +Y), so the clip ends turned and a loop played as authored snaps back 90°.
fn quarter_turn() -> Clip {
    let mut c = clip(
        "quarter_turn",
        1.0,
        |u| Vec3::new(0.0, 1.0, 0.5 * u),
        |_| Quat::IDENTITY,
    );
    let track = &c.translations[0];
    let (times, keys) = (track.times.clone(), track.times.len());
    // World yaw ψ: the hips' world rotation is armature (Rx 90°) × local, and their rest local
    // rotation is Rx(−90°), so the local key Rx(−90°) Ry(ψ) turns the body by ψ in the world.
    c.rotations.push(Track {
        node: HIPS as u32,
        times,
        values: (0..keys)
            .map(|i| {
                let psi = std::f32::consts::FRAC_PI_2 * i as f32 / (keys - 1) as f32;
                Quat::from_rotation_x(-90f32.to_radians()) * Quat::from_rotation_y(psi)
            })
            .collect(),
        interpolation: Interpolation::Linear,
    });
    c
}

#[test]
fn a_clip_that_ends_turned_loops_on_turned_without_a_jump() {
    for root in [RootMotion::InPlace, RootMotion::Travel] {
        let mut r = Rig::new();
        r.clips = vec![quarter_turn()];
        r.player.set_root_motion(root);
        r.player.play(0, &r.clips);
        let start = r.now();
        let mut prev = start.clone();
        let mut after_one = None;
        // Four loops at 60 fps: the fastest joint (the foot, 0.9 m from the hips) moves about
        // 0.03 m a frame; the authored loop snaps it back by more than 1 m.
        for f in 1..=240 {
            let w = r.step(1.0 / 60.0);
            let m = max_move(&prev, &w);
            assert!(m < 0.04, "{root:?}: jump of {m} m at frame {f}");
            if f == 60 {
                after_one = Some(w.clone());
            }
            prev = w;
        }
        // One loop on, the body has turned 90° to the left (about +Y): the foot, 0.1 m to the
        // hips' +X at the start, is now 0.1 m to their −Z.
        let one = after_one.unwrap();
        let foot = one[FOOT] - one[HIPS];
        assert!(
            (foot - Vec3::new(0.0, -0.9, -0.1)).length() < 1e-3,
            "{root:?}: foot after one loop at {foot}"
        );
        // Four quarter turns make a whole one: the pose is the first frame's again, and in
        // Travel the walk has closed a square back to where it began.
        assert!(
            max_move(&start, &prev) < 2e-3,
            "{root:?}: after four loops {}",
            max_move(&start, &prev)
        );
    }
    // As authored, the loop turns the body back by 90° in one frame.
    let mut r = Rig::new();
    r.clips = vec![quarter_turn()];
    r.player.set_root_motion(RootMotion::Authored);
    r.player.play(0, &r.clips);
    r.player.seek(r.clips[0].end - 0.005, &r.clips);
    let before = r.now();
    let after = r.step(1.0 / 60.0);
    assert!(max_move(&before, &after) > 0.1);
}

#[test]
fn a_switch_keeps_the_turn_the_loops_made() {
    for root in [RootMotion::InPlace, RootMotion::Travel] {
        let mut r = Rig::new();
        r.clips = vec![quarter_turn(), idle()];
        r.player.set_root_motion(root);
        r.player.play(0, &r.clips);
        // Two loops and a bit: turned 180°.
        for _ in 0..121 {
            r.step(1.0 / 60.0);
        }
        r.player.crossfade_to(1, 0.3, &r.clips);
        let mut prev = r.now();
        for _ in 0..30 {
            let w = r.step(1.0 / 60.0);
            assert!(max_move(&prev, &w) < 0.04, "{root:?}");
            prev = w;
        }
        assert!(!r.player.is_fading());
        // The idle faces the way the loops left the character: its foot at the hips' −X.
        let foot = prev[FOOT] - prev[HIPS];
        assert!(foot.x < -0.09, "{root:?}: foot at {foot}");
    }
}

#[test]
fn negative_speed_plays_backwards_and_wraps() {
    let mut r = Rig::new();
    r.player.set_root_motion(RootMotion::Travel);
    r.player.set_speed(-1.0);
    r.player.play(0, &r.clips);
    assert_eq!(r.player.time(), r.clips[0].end);
    let start = r.now();
    let mut prev = start.clone();
    let mut t_prev = r.player.time();
    let mut wrapped = false;
    for _ in 0..150 {
        let w = r.step(1.0 / 60.0);
        assert!(max_move(&prev, &w) < 0.04);
        let t = r.player.time();
        if t > t_prev {
            wrapped = true;
        } else {
            assert!(t < t_prev);
        }
        t_prev = t;
        prev = w;
    }
    assert!(wrapped, "time wrapped from the start back to the end");
    let travelled = prev[HIPS] - start[HIPS];
    assert!(
        (travelled.z + 2.5).abs() < 1e-3,
        "walked backwards 2.5 m: {travelled}"
    );
    // Once at negative speed holds the first frame.
    r.player.set_loop_mode(LoopMode::Once);
    r.player.play(0, &r.clips);
    for _ in 0..100 {
        r.step(1.0 / 30.0);
    }
    assert_eq!(r.player.time(), r.clips[0].start);
}

#[test]
fn once_holds_the_last_frame() {
    let mut r = Rig::new();
    r.player.set_loop_mode(LoopMode::Once);
    r.player.play(1, &r.clips);
    for _ in 0..200 {
        r.step(1.0 / 60.0);
    }
    assert_eq!(r.player.time(), r.clips[1].end);
    let a = r.now();
    let b = r.step(0.5);
    assert_eq!(a, b);
}

#[test]
fn crossfade_is_continuous_where_a_cut_jumps() {
    for root in [RootMotion::Travel, RootMotion::InPlace] {
        let mut r = Rig::new();
        r.player.set_root_motion(root);
        r.player.play(0, &r.clips);
        for _ in 0..20 {
            r.step(1.0 / 60.0);
        }
        let mut cut = Rig::new();
        cut.player.set_root_motion(root);
        cut.player.play(0, &cut.clips);
        for _ in 0..20 {
            cut.step(1.0 / 60.0);
        }
        let before = cut.now();
        cut.player.play(1, &cut.clips);
        let after = cut.now();
        let cut_jump = max_move(&before, &after);

        let mut prev = r.now();
        r.player.crossfade_to(1, 0.4, &r.clips);
        assert!(r.player.is_fading());
        let first = r.now();
        assert!(
            max_move(&prev, &first) < 1e-5,
            "a fade starts where the old clip is"
        );
        let mut worst = 0f32;
        for _ in 0..40 {
            let w = r.step(1.0 / 60.0);
            worst = worst.max(max_move(&prev, &w));
            prev = w;
        }
        assert!(!r.player.is_fading());
        assert_eq!(r.player.clip(), Some(1));
        println!(
            "{root:?}: cut jumps {cut_jump:.3} m, crossfade moves at most {worst:.4} m per frame"
        );
        assert!(
            cut_jump > 0.1,
            "the fixture must make a cut visible: {cut_jump}"
        );
        assert!(worst < 0.03, "crossfade jump {worst}");
        // No sinking: the hips end at the idle's height, not the rest pose or the floor.
        assert!((prev[HIPS].y - 0.95).abs() < 0.02, "{}", prev[HIPS].y);
    }
}

#[test]
fn startup_blend_goes_from_rest_to_the_clip() {
    let mut r = Rig::new();
    r.player.set_root_motion(RootMotion::Authored);
    r.player.set_startup_blend(0.5);
    r.player.play(1, &r.clips);
    let rest = world_positions(&r.skeleton, &Pose::rest(&r.skeleton));
    assert!(max_move(&r.now(), &rest) < 1e-6);
    let mut prev = r.now();
    // 31 frames: past 0.5 s whatever the rounding of 30 × 1/60.
    for _ in 0..31 {
        let w = r.step(1.0 / 60.0);
        assert!(max_move(&prev, &w) < 0.03);
        prev = w;
    }
    assert!(!r.player.is_fading());
    let mut direct = Pose::rest(&r.skeleton);
    r.clips[1].sample(r.player.time(), &mut direct);
    assert!(max_move(&prev, &world_positions(&r.skeleton, &direct)) < 1e-5);
}

#[test]
fn seek_pause_and_speed() {
    let mut r = Rig::new();
    r.player.play(0, &r.clips);
    r.player.seek(0.5, &r.clips);
    assert_eq!(r.player.time(), 0.5);
    r.player.pause();
    r.step(0.25);
    assert_eq!(r.player.time(), 0.5);
    r.player.resume();
    r.player.set_speed(2.0);
    r.step(0.125);
    assert!((r.player.time() - 0.75).abs() < 1e-6);
    r.player.seek(99.0, &r.clips);
    assert_eq!(r.player.time(), r.clips[0].end);
    r.player.set_speed(f32::NAN);
    assert_eq!(r.player.speed(), 2.0);
    // The foot follows the hips (a child of the hips moves with them).
    let w = r.now();
    assert!(
        (w[FOOT] - w[HIPS] - Vec3::new(0.1, -0.9, 0.0)).length() < 1e-4,
        "{}",
        w[FOOT] - w[HIPS]
    );
    let _ = (ARMATURE, HEAD);
}
