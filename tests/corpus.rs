//! Issue 19's test corpus (`rigs/corpus/`, `drape rig --corpus rigs/corpus`): bodies and motions
//! like real Mixamo exports. The committed files regenerate byte for byte, load with drape's
//! loader, and hold what real exports do to garments: a two-mesh slim robot, a bulky armoured
//! body, a big hair mesh on the head; keys on every frame at 30 and 60 fps from 1/30 s, clips
//! ending in their first pose, hands beside the thighs in idle and walk, kicks above the hips,
//! a torso whipped within three frames, sign-flipped rotation keys.

#[path = "support/dressed.rs"]
mod dressed;
#[path = "support/tools.rs"]
mod tools;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use drape::anim::{Interpolation, Pose};
use drape::asset::{load_rig_with, LoadOptions};
use drape::math::{Mat4, Quat, Vec3};
use drape::ninja::corpus::{self, BodyKind, CorpusBody};
use drape::rig::Rig;
use drape::skin::{SkinMethod, Skinner};

fn bodies() -> &'static Vec<CorpusBody> {
    static B: OnceLock<Vec<CorpusBody>> = OnceLock::new();
    B.get_or_init(|| corpus::build_all().expect("the corpus clips parse"))
}

fn file(kind: BodyKind) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(corpus::DEFAULT_DIR)
        .join(kind.file_name())
}

/// The committed files, loaded by drape's loader.
fn loaded() -> &'static Vec<Rig> {
    static L: OnceLock<Vec<Rig>> = OnceLock::new();
    L.get_or_init(|| {
        BodyKind::ALL
            .iter()
            .map(|&k| {
                load_rig_with(&file(k), &LoadOptions::default())
                    .unwrap_or_else(|e| panic!("{}: {e}", file(k).display()))
            })
            .collect()
    })
}

fn node(rig: &Rig, base: &str) -> usize {
    rig.skeleton
        .find(&format!("mixamorig:{base}"))
        .unwrap_or_else(|| panic!("no mixamorig:{base}"))
}

fn world_at(rig: &Rig, clip: usize, t: f32) -> Vec<Mat4> {
    let mut pose = Pose::rest(&rig.skeleton);
    rig.clips[clip].sample(t, &mut pose);
    let mut w = Vec::new();
    pose.world_from_node(&rig.skeleton, &mut w);
    w
}

fn pos(m: &Mat4) -> Vec3 {
    m.transform_point3(Vec3::ZERO)
}

/// The key times of a clip (every track shares them).
fn key_times(rig: &Rig, clip: usize) -> Vec<f32> {
    rig.clips[clip].rotations[0].times.clone()
}

fn clip_index(rig: &Rig, name: &str) -> usize {
    rig.clip(name)
        .unwrap_or_else(|| panic!("{}: no clip {name}", rig.source))
}

/// Distance from `p` to the segment `a`–`b`.
fn to_segment(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    let ab = b - a;
    let f = ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
    p.distance(a + ab * f)
}

// ---------------------------------------------------------------- files

#[test]
fn committed_files_regenerate_byte_identically() {
    for b in bodies() {
        let bytes = drape::asset::export::to_glb(&b.rig).expect("export");
        let path = file(b.kind);
        let committed = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run `drape rig --corpus {}`)",
                path.display(),
                corpus::DEFAULT_DIR
            )
        });
        assert!(
            bytes == committed,
            "{} differs from what the generator writes now ({} vs {} bytes): run `drape rig \
             --corpus {}` and commit",
            path.display(),
            committed.len(),
            bytes.len(),
            corpus::DEFAULT_DIR
        );
        println!("{}: {} bytes", path.display(), committed.len());
    }
    let total: u64 = BodyKind::ALL
        .iter()
        .map(|&k| std::fs::metadata(file(k)).unwrap().len())
        .sum();
    assert!(total < 8_000_000, "the corpus grew to {total} bytes");
}

#[test]
fn generation_is_deterministic() {
    let again = corpus::build_body(BodyKind::Soldier).unwrap();
    let a = drape::asset::export::to_glb(&again.rig).unwrap();
    let b = drape::asset::export::to_glb(&bodies()[1].rig).unwrap();
    assert!(a == b, "two generations differ");
}

#[test]
fn every_file_loads_like_a_mixamo_export() {
    for (rig, kind) in loaded().iter().zip(BodyKind::ALL) {
        let name = kind.name();
        println!("{name}: warnings {:?}", rig.warnings);
        assert_eq!(rig.skins.len(), 1, "{name}: one skin");
        let joints = &rig.skins[0].joints;
        assert_eq!(joints.len(), 65, "{name}: 65 joints");
        for &j in joints {
            assert!(
                rig.skeleton.names[j as usize].starts_with("mixamorig:"),
                "{name}: joint {}",
                rig.skeleton.names[j as usize]
            );
        }
        // The armature: 0.01 scale, 90° about X, above the Hips.
        let arm = rig.skeleton.find("Armature").expect("an Armature node");
        let rest = rig.skeleton.rest[arm];
        assert!((rest.scale - Vec3::splat(0.01)).abs().max_element() < 1e-7);
        let want = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
        assert!(
            rest.rotation.dot(want).abs() > 0.99999,
            "{name}: armature 90° about X"
        );
        assert_eq!(rig.skeleton.parents[node(rig, "Hips")], Some(arm as u32));
        // Two meshes (nodes) sharing the one skin, every vertex on real bones.
        assert_eq!(rig.meshes.len(), 2, "{name}: two meshes");
        assert_ne!(rig.meshes[0].node, rig.meshes[1].node, "{name}: two nodes");
        for m in &rig.meshes {
            assert_eq!(m.skin, Some(0), "{name}/{}: on the shared skin", m.name);
            for (js, ws) in m.joints.iter().zip(&m.weights) {
                let sum: f32 = ws.iter().sum();
                assert!(
                    (sum - 1.0).abs() < 1e-5,
                    "{name}/{}: weights sum {sum}",
                    m.name
                );
                for (j, w) in js.iter().zip(ws) {
                    assert!(*w == 0.0 || (*j as usize) < joints.len());
                }
            }
        }
        let vertices = rig.vertex_count();
        assert!(
            (5_000..=28_000).contains(&vertices),
            "{name}: {vertices} vertices, outside the range of real characters"
        );
        // Standing on the floor, a plausible height.
        let top = rig.meshes[0]
            .positions
            .iter()
            .map(|p| p.y)
            .fold(f32::MIN, f32::max);
        let bottom = rig.meshes[0]
            .positions
            .iter()
            .map(|p| p.y)
            .fold(f32::MAX, f32::min);
        println!("{name}: {vertices} vertices, {bottom:.3}..{top:.3} m");
        assert!(bottom.abs() < 0.01 && (1.6..2.0).contains(&top), "{name}");
        assert_eq!(rig.clips.len(), corpus::CLIPS.len(), "{name}: every clip");
    }
}

#[test]
fn the_robot_is_two_meshes_and_slimmer_than_the_ninja() {
    let robot = &loaded()[0];
    assert!(robot.meshes[0].name.starts_with("Bot_Surface"));
    assert!(robot.meshes[1].name.starts_with("Bot_Joints"));
    // The joints mesh: balls each rigid on one bone.
    for (js, ws) in robot.meshes[1].joints.iter().zip(&robot.meshes[1].weights) {
        assert!(ws[0] == 1.0, "a joint ball vertex on bones {js:?} {ws:?}");
    }
    // Slimmer: the thigh is thinner than the ninja's, the soldier's thicker.
    let thigh = |rig: &Rig| -> f32 {
        let up = rig.skins[0]
            .joints
            .iter()
            .position(|&j| j as usize == node(rig, "LeftUpLeg"))
            .unwrap() as u16;
        let w = rig.skeleton.rest_world();
        let (h, k) = (
            pos(&w[node(rig, "LeftUpLeg")]),
            pos(&w[node(rig, "LeftLeg")]),
        );
        let m = &rig.meshes[0];
        let mut r = 0.0f32;
        for (i, p) in m.positions.iter().enumerate() {
            let y = h.y + (k.y - h.y) * 0.4;
            if m.joints[i][0] == up && m.weights[i][0] > 0.9 && (p.y - y).abs() < 0.02 {
                r = r.max(to_segment(*p, h, k));
            }
        }
        r
    };
    let ninja = drape::ninja::build().unwrap().rig;
    let (r_robot, r_ninja, r_soldier) = (thigh(robot), thigh(&ninja), thigh(&loaded()[1]));
    println!(
        "thigh radius: robot {:.1} cm, ninja {:.1} cm, soldier {:.1} cm",
        r_robot * 100.0,
        r_ninja * 100.0,
        r_soldier * 100.0
    );
    assert!(r_robot < 0.8 * r_ninja && r_soldier > 1.1 * r_ninja);
}

#[test]
fn the_armour_plates_are_rigid_on_one_bone_each() {
    let soldier = &loaded()[1];
    let armour = &soldier.meshes[1];
    assert!(armour.name.starts_with("Soldier_Armour"));
    let rigid = armour.weights.iter().filter(|w| w[0] >= 0.99).count();
    let mostly = armour.weights.iter().filter(|w| w[0] >= 0.5).count();
    println!(
        "armour: {rigid} of {} vertices on one bone, {mostly} mostly",
        armour.vertex_count()
    );
    assert_eq!(mostly, armour.vertex_count());
    assert!(rigid * 10 >= armour.vertex_count() * 8);
}

#[test]
fn the_hair_mesh_is_skinned_to_the_head_only() {
    let rig = &loaded()[2];
    let hair = &rig.meshes[1];
    assert!(hair.name.starts_with("Hair"));
    let head = rig.skins[0]
        .joints
        .iter()
        .position(|&j| j as usize == node(rig, "Head"))
        .unwrap() as u16;
    for (js, ws) in hair.joints.iter().zip(&hair.weights) {
        assert!(
            js[0] == head && ws[0] == 1.0,
            "hair vertex on {js:?} {ws:?}"
        );
    }
    // Large: reaching well down the back.
    let lowest = hair.positions.iter().map(|p| p.y).fold(f32::MAX, f32::min);
    let head_y = pos(&rig.skeleton.rest_world()[node(rig, "Head")]).y;
    println!(
        "hair: {} vertices, down to {:.0} cm below the head joint",
        hair.vertex_count(),
        (head_y - lowest) * 100.0
    );
    assert!(head_y - lowest > 0.3);
}

// ---------------------------------------------------------------- keys

#[test]
fn keys_on_every_frame_from_a_thirtieth_of_a_second() {
    let mut rates = Vec::new();
    for rig in loaded() {
        for (ci, clip) in rig.clips.iter().enumerate() {
            let fps = corpus::CLIPS[ci].1;
            assert_eq!(clip.name, corpus::CLIPS[ci].0);
            rates.push(fps);
            // T, R, S on every joint.
            for j in &rig.skins[0].joints {
                for has in [
                    clip.translations.iter().any(|t| t.node == *j),
                    clip.rotations.iter().any(|t| t.node == *j),
                    clip.scales.iter().any(|t| t.node == *j),
                ] {
                    assert!(has, "{}: joint {j} lacks a channel", clip.name);
                }
            }
            let times = key_times(rig, ci);
            assert!((times[0] - 1.0 / 30.0).abs() < 1e-6, "{}", clip.name);
            assert!((clip.start - 1.0 / 30.0).abs() < 1e-6);
            for w in times.windows(2) {
                assert!(
                    (w[1] - w[0] - 1.0 / fps).abs() < 2e-5,
                    "{}: key step {} at {fps} fps",
                    clip.name,
                    w[1] - w[0]
                );
            }
            let all = clip
                .translations
                .iter()
                .map(|t| (&t.times, t.interpolation))
                .chain(clip.rotations.iter().map(|t| (&t.times, t.interpolation)))
                .chain(clip.scales.iter().map(|t| (&t.times, t.interpolation)));
            for (t, i) in all {
                assert_eq!(i, Interpolation::Linear);
                assert_eq!(t, &times, "{}: every track on one key grid", clip.name);
            }
        }
    }
    assert!(rates.contains(&30.0) && rates.contains(&60.0));
}

#[test]
fn rotation_keys_flip_sign_and_play_the_short_way() {
    let rig = &loaded()[0];
    let mut flips = 0;
    let mut worst = 0.0f32;
    for (ci, clip) in rig.clips.iter().enumerate() {
        for tr in &clip.rotations {
            for k in 1..tr.values.len() {
                if tr.values[k].dot(tr.values[k - 1]) < 0.0 {
                    flips += 1;
                    // Halfway between the flipped keys the joint is between its two key poses,
                    // not spun the long way round.
                    let t = 0.5 * (tr.times[k - 1] + tr.times[k]);
                    let mut pose = Pose::rest(&rig.skeleton);
                    clip.sample(t, &mut pose);
                    let q = pose.local[tr.node as usize].rotation;
                    let a = tr.values[k - 1];
                    worst = worst.max(q.angle_between(a).to_degrees());
                    let _ = ci;
                }
            }
        }
    }
    println!(
        "{flips} sign flips between consecutive rotation keys; worst mid-key turn {worst:.1}°"
    );
    assert!(flips >= 1, "no sign flips");
    assert!(
        worst < 15.0,
        "a flipped key pair plays the long way ({worst:.1}°)"
    );
}

#[test]
fn every_clip_ends_in_its_first_pose() {
    for rig in loaded() {
        for (ci, clip) in rig.clips.iter().enumerate() {
            let a = world_at(rig, ci, clip.start);
            let b = world_at(rig, ci, clip.end);
            let worst = rig.skins[0]
                .joints
                .iter()
                .map(|&j| pos(&a[j as usize]).distance(pos(&b[j as usize])))
                .fold(0.0f32, f32::max);
            println!(
                "{} {}: last pose {:.2} mm from the first",
                rig.source,
                clip.name,
                worst * 1e3
            );
            assert!(worst < 0.005, "{}: {:.1} mm", clip.name, worst * 1e3);
        }
    }
}

// ---------------------------------------------------------------- motions

/// Per frame of `clip`: the distance (m) between the closest hand and thigh vertices of each
/// side, skinned (LBS) from the loaded file.
fn hand_to_thigh(rig: &Rig, clip: usize) -> Vec<[f32; 2]> {
    let m = &rig.meshes[0];
    let idx = |base: &str| {
        rig.skins[0]
            .joints
            .iter()
            .position(|&j| j as usize == node(rig, base))
            .unwrap() as u16
    };
    let side = |s: &str| -> (Vec<usize>, Vec<usize>) {
        let hand: Vec<u16> = rig.skins[0]
            .joints
            .iter()
            .enumerate()
            .filter(|(_, &j)| rig.skeleton.names[j as usize].contains(&format!("{s}Hand")))
            .map(|(i, _)| i as u16)
            .collect();
        let up = idx(&format!("{s}UpLeg"));
        let hv = (0..m.vertex_count())
            .filter(|&v| hand.contains(&m.joints[v][0]) && m.weights[v][0] > 0.5)
            .step_by(2)
            .collect();
        let tv = (0..m.vertex_count())
            .filter(|&v| m.joints[v][0] == up && m.weights[v][0] > 0.5)
            .collect();
        (hv, tv)
    };
    let sides = [side("Left"), side("Right")];
    let mut skinner = Skinner::new(rig);
    key_times(rig, clip)
        .iter()
        .map(|&t| {
            skinner.update(rig, &world_at(rig, clip, t), SkinMethod::Lbs);
            let p = skinner.positions(0);
            std::array::from_fn(|s| {
                let (hv, tv) = &sides[s];
                hv.iter()
                    .map(|&h| {
                        tv.iter()
                            .map(|&v| p[h].distance(p[v]))
                            .fold(f32::MAX, f32::min)
                    })
                    .fold(f32::MAX, f32::min)
            })
        })
        .collect()
}

#[test]
fn idle_and_walk_keep_the_hands_beside_the_thighs() {
    for rig in loaded() {
        for name in ["idle", "walk"] {
            let d = hand_to_thigh(rig, clip_index(rig, name));
            let worst = d.iter().flatten().fold(0.0f32, |a, &b| a.max(b));
            let best = d.iter().flatten().fold(f32::MAX, |a, &b| a.min(b));
            println!(
                "{} {name}: hand-to-thigh gap {:.1}..{:.1} cm",
                rig.source,
                best * 100.0,
                worst * 100.0
            );
            assert!(
                worst < 0.06,
                "{name}: a hand {:.1} cm from its thigh",
                worst * 100.0
            );
        }
    }
}

#[test]
fn the_kicks_raise_the_foot_above_the_hips() {
    for rig in loaded() {
        for name in ["front_kick_high", "side_kick"] {
            let ci = clip_index(rig, name);
            let mut best = f32::MIN;
            let (mut flexion, mut raised) = (0.0f32, 0.0f32);
            for t in key_times(rig, ci) {
                let w = world_at(rig, ci, t);
                let foot = pos(&w[node(rig, "RightFoot")]);
                let hips = pos(&w[node(rig, "Hips")]);
                best = best.max(foot.y - hips.y);
                // Hip flexion: the thigh against the pelvis's own down direction; and the thigh
                // against the vertical (the side kick tilts the pelvis as well).
                let thigh = pos(&w[node(rig, "RightLeg")]) - pos(&w[node(rig, "RightUpLeg")]);
                let down = w[node(rig, "Hips")].transform_vector3(Vec3::NEG_Y);
                flexion = flexion.max(thigh.angle_between(down).to_degrees());
                raised = raised.max(thigh.angle_between(Vec3::NEG_Y).to_degrees());
            }
            println!(
                "{} {name}: ankle up to {:.0} cm above the hips joint, thigh {flexion:.0}° from \
                 the pelvis's down, {raised:.0}° from the vertical",
                rig.source,
                best * 100.0
            );
            assert!(
                best > 0.1,
                "{name}: the foot stays {:.0} cm from the hips",
                best * 100.0
            );
            assert!(raised > 110.0, "{name}: {raised:.0}°");
            if name == "front_kick_high" {
                assert!(flexion > 110.0, "{name}: hip flexion {flexion:.0}°");
            }
        }
    }
}

#[test]
fn the_hit_reaction_whips_the_torso_within_three_frames() {
    for rig in loaded() {
        let ci = clip_index(rig, "hit_reaction");
        let times = key_times(rig, ci);
        let rot = |t: f32| {
            let w = world_at(rig, ci, t);
            // The world matrix carries the armature's 0.01 scale: take its rotation only.
            w[node(rig, "Spine2")].to_scale_rotation_translation().1
        };
        let mut best = 0.0f32;
        let mut whips = 0;
        let mut prev_hit = -1.0;
        for k in 0..times.len() - 3 {
            let a = rot(times[k]).angle_between(rot(times[k + 3])).to_degrees();
            best = best.max(a);
            if a > 30.0 && times[k] - prev_hit > 0.3 {
                whips += 1;
                prev_hit = times[k];
            }
        }
        println!(
            "{}: the chest turns up to {best:.0}° in 3 frames; {whips} separate hits",
            rig.source
        );
        assert!(best > 35.0 && whips >= 2);
    }
}

#[test]
fn the_guard_holds_the_forearms_before_the_chest_and_the_fists_at_the_chin() {
    for rig in loaded() {
        let ci = clip_index(rig, "guard");
        let (mut ahead, mut below_chin, mut above_chin) = (f32::MAX, 0.0f32, 0.0f32);
        for t in key_times(rig, ci) {
            let w = world_at(rig, ci, t);
            let (_, chest_rot, _) = w[node(rig, "Spine2")].to_scale_rotation_translation();
            let forward = chest_rot * Vec3::Z;
            let chest = pos(&w[node(rig, "Spine2")]);
            // The chin: between the neck and head joints, a little forward.
            let chin = pos(&w[node(rig, "Head")]);
            for side in ["Left", "Right"] {
                let hand = pos(&w[node(rig, &format!("{side}Hand"))]);
                let elbow = pos(&w[node(rig, &format!("{side}ForeArm"))]);
                ahead = ahead
                    .min((hand - chest).dot(forward))
                    .min((elbow - chest).dot(forward));
                below_chin = below_chin.max(chin.y - hand.y);
                above_chin = above_chin.max(hand.y - chin.y);
            }
        }
        println!(
            "{} guard: hands and elbows at least {:.0} cm before the chest joint; wrists from \
             {:.0} cm below to {:.0} cm above the head joint",
            rig.source,
            ahead * 100.0,
            below_chin * 100.0,
            above_chin * 100.0
        );
        assert!(ahead > 0.08 && below_chin < 0.15 && above_chin < 0.1);
    }
}

#[test]
fn the_spinning_kick_turns_a_full_circle() {
    let rig = &loaded()[0];
    let ci = clip_index(rig, "spinning_kick");
    let mut total = 0.0f32;
    let mut prev: Option<f32> = None;
    for t in key_times(rig, ci) {
        let w = world_at(rig, ci, t);
        let f = w[node(rig, "Hips")].transform_vector3(Vec3::Z);
        let yaw = f.x.atan2(f.z);
        if let Some(p) = prev {
            let mut d = yaw - p;
            while d > std::f32::consts::PI {
                d -= std::f32::consts::TAU;
            }
            while d < -std::f32::consts::PI {
                d += std::f32::consts::TAU;
            }
            total += d;
        }
        prev = Some(yaw);
    }
    println!("spinning_kick: hips turn {:.0}°", total.to_degrees());
    assert!(total.to_degrees().abs() > 340.0);
}

#[test]
fn the_jump_leaves_the_floor() {
    let rig = &loaded()[2];
    let ci = clip_index(rig, "jump");
    let mut highest = 0.0f32;
    for t in key_times(rig, ci) {
        let w = world_at(rig, ci, t);
        let low = ["LeftToeBase", "RightToeBase", "LeftFoot", "RightFoot"]
            .iter()
            .map(|b| pos(&w[node(rig, b)]).y)
            .fold(f32::MAX, f32::min);
        highest = highest.max(low);
    }
    println!(
        "jump: the lowest foot joint rises to {:.0} cm",
        highest * 100.0
    );
    assert!(highest > 0.15);
}

/// In the air nothing holds the body up: like motion capture, the jump's hips fall at g
/// between take-off and touch-down (keys 30 frames a second; the second difference of a
/// sampled parabola is exact).
#[test]
fn the_jump_flies_as_a_thrown_body_does() {
    let rig = &loaded()[0];
    let ci = clip_index(rig, "jump");
    let hips = node(rig, "Hips");
    // The clip starts at 1/30 s, Mixamo's way: the source's flight is 0.44–0.90 s after that
    // (the frames from 0.467 s to the touch-down at 0.9 s).
    let keys = key_times(rig, ci);
    let times: Vec<f32> = keys
        .iter()
        .copied()
        .filter(|t| (0.45..=0.901).contains(&(t - keys[0])))
        .collect();
    assert!(times.len() >= 12, "{} keys in the air", times.len());
    let y: Vec<f32> = times
        .iter()
        .map(|&t| pos(&world_at(rig, ci, t)[hips]).y)
        .collect();
    let mut worst = 0.0f32;
    for k in 1..y.len() - 1 {
        let h = times[k] - times[k - 1];
        let a = (y[k + 1] - 2.0 * y[k] + y[k - 1]) / (h * h);
        worst = worst.max((a + 9.81).abs());
    }
    println!("jump: the hips' vertical acceleration in the air is within {worst:.2} m/s² of −g");
    assert!(worst < 0.5);
}

// ---------------------------------------------------------------- garments that cannot fit

/// The long-haired body's ponytail is skinned to the head alone and swings through its
/// shoulders in the side kick, the spinning kick and the hit reaction (up to 4 cm deep): a cape
/// tied there would hold cloth inside the hair whatever the cloth does. The scene leaves the
/// cape off, names the hair and the clip, and dresses the rest, unless asked to wear it anyway;
/// without those clips, or on the other bodies, the cape is worn.
#[test]
fn a_cape_the_hair_swings_through_is_left_off_with_the_reason() {
    use drape::garments::GarmentKind;
    use drape::scene::{Scene, SceneConfig};
    let kinds = |s: &Scene| s.garments.iter().map(|g| g.kind).collect::<Vec<_>>();
    for (k, kind) in BodyKind::ALL.iter().enumerate() {
        let rig = loaded()[k].clone();
        let scene = Scene::new(rig.clone(), SceneConfig::default()).unwrap();
        if *kind != BodyKind::LongHair {
            assert!(
                scene.refused.is_empty(),
                "{}: {:?}",
                kind.name(),
                scene.refused
            );
            assert!(kinds(&scene).contains(&GarmentKind::Cape));
            continue;
        }
        assert_eq!(
            kinds(&scene),
            [
                GarmentKind::Hakama,
                GarmentKind::Sash,
                GarmentKind::Headband
            ]
        );
        assert_eq!(
            scene.config.garments.len(),
            3,
            "the configuration keeps what was built"
        );
        let [(GarmentKind::Cape, why)] = scene.refused.as_slice() else {
            panic!("refused: {:?}", scene.refused);
        };
        println!("{why}");
        for word in [
            "cape",
            "Hair",
            "mm deep",
            "side_kick",
            "spinning_kick",
            "hit_reaction",
        ] {
            assert!(why.contains(word), "'{word}' missing from: {why}");
        }
        // Asked to wear it anyway, the scene does, and keeps the reason.
        let mut cfg = SceneConfig::default();
        for g in &mut cfg.garments {
            g.wear_unfit = true;
        }
        let worn = Scene::new(rig.clone(), cfg).unwrap();
        assert!(worn.refused.is_empty(), "{:?}", worn.refused);
        assert_eq!(kinds(&worn)[0], GarmentKind::Cape);
        assert_eq!(worn.worn_unfit, [(GarmentKind::Cape, why.clone())]);
        // Without the clips whose head turns swing the hair through the shoulders, it fits.
        let mut calm = rig;
        calm.clips
            .retain(|c| !["side_kick", "spinning_kick", "hit_reaction"].contains(&c.name.as_str()));
        let scene = Scene::new(calm, SceneConfig::default()).unwrap();
        assert!(scene.refused.is_empty(), "{:?}", scene.refused);
        assert_eq!(kinds(&scene)[0], GarmentKind::Cape);
    }
}

// ---------------------------------------------------------------- validator

#[test]
fn corpus_files_pass_the_khronos_validator() {
    for kind in BodyKind::ALL {
        let f = file(kind);
        match tools::validate_gltf(&f) {
            None => {
                tools::tool_missing("the Khronos glTF validator (npm gltf-validator + node)");
                return;
            }
            Some(Ok(report)) => println!("{}: {report}", f.display()),
            Some(Err(report)) => panic!("the validator rejects {}:\n{report}", f.display()),
        }
    }
}

// ---------------------------------------------------------------- dressed

/// Runs `clip` on `rig` dressed per `cfg` (the start-up, then the whole clip once), checking the
/// end of every frame with issue 5's checks; the first violation, or the particle count.
fn dressed_run(rig: &Rig, clip: &str, cfg: drape::scene::SceneConfig) -> Result<usize, String> {
    use drape::anim::player::LoopMode;
    let mut scene = drape::scene::Scene::new(rig.clone(), cfg).map_err(|e| e.to_string())?;
    scene.player.set_loop_mode(LoopMode::Once);
    let c = &rig.clips[clip_index(rig, clip)];
    let frames = ((scene.startup_seconds() + c.duration()) * 60.0).ceil() as usize + 1;
    for f in 0..frames {
        scene.step(1.0 / 60.0);
        dressed::check_frame(&scene).map_err(|e| {
            format!(
                "frame {f} (t = {:.3} s, {:?}): {e}",
                scene.time, scene.phase
            )
        })?;
    }
    Ok(scene.particle_count())
}

/// Every clip of one body with every garment, LBS and DQS; a table of the results, and the
/// failures.
fn dressed_body(kind: BodyKind, coarse: bool) -> Vec<String> {
    use drape::garments::GarmentKind;
    use drape::scene::SceneConfig;
    let rig = &loaded()[BodyKind::ALL.iter().position(|&k| k == kind).unwrap()];
    let mut failures = Vec::new();
    for (clip, _, _) in corpus::CLIPS {
        for method in [SkinMethod::Lbs, SkinMethod::Dqs] {
            let mut cfg = if coarse {
                dressed::coarse_config(Some(clip.to_string()), &GarmentKind::ALL)
            } else {
                SceneConfig {
                    clip: Some(clip.to_string()),
                    ..SceneConfig::default()
                }
            };
            cfg.method = method;
            let start = std::time::Instant::now();
            let r = dressed_run(rig, clip, cfg);
            let secs = start.elapsed().as_secs_f32();
            match r {
                Ok(n) => println!(
                    "{} {clip} ({method}): ok, {n} particles, {secs:.1} s",
                    kind.name()
                ),
                Err(e) => {
                    println!("{} {clip} ({method}): FAILS {e} ({secs:.1} s)", kind.name());
                    failures.push(format!("{} {clip} ({method}): {e}", kind.name()));
                }
            }
        }
    }
    failures
}

/// The default resolution on every body, clip and skinning method: a report (slow; run with
/// `--ignored --nocapture`).
#[test]
#[ignore = "slow report: the default garment resolution on every corpus body, clip and method"]
fn dressed_corpus_at_default_resolution_report() {
    let failures: Vec<String> = BodyKind::ALL
        .iter()
        .flat_map(|&k| dressed_body(k, false))
        .collect();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What the coarse garments cannot do yet on the corpus (measured when the corpus was made,
/// issue 19): the soldier's bulky thighs leave a hakama particle inside the body during the
/// start-up blend into the arms-hanging clips (the side kick passes since the proxies bound the
/// skin, the spinning kick since the quadratic still-air drag and the skin surface with the
/// parts hidden at rest, 2026-12-05);
/// the long hair (rigid on the head) swept the cape's top row past its stretch limit when the
/// head turned fast, until the scene left the cape off that body (its hair passes through the
/// shoulders where the cape is tied, 2026-12-05). These are garment problems for the garment
/// code, not corpus defects. The
/// tests below fail on any failure outside this list, and on any listed case that passes (so
/// the list shrinks as the garments improve).
const KNOWN_COARSE_FAILURES: &[&str] = &[
    "soldier idle (lbs)",
    "soldier idle (dqs)",
    "soldier walk (lbs)",
    "soldier walk (dqs)",
    "soldier jump (lbs)",
    "soldier jump (dqs)",
];

/// Coarse garments on every clip of `kind`, LBS and DQS, every frame checked, against
/// [`KNOWN_COARSE_FAILURES`].
fn dressed_coarse(kind: BodyKind) {
    let failures = dressed_body(kind, true);
    let failed = |case: &str| failures.iter().any(|f| f.starts_with(&format!("{case}:")));
    let new: Vec<&String> = failures
        .iter()
        .filter(|f| {
            !KNOWN_COARSE_FAILURES
                .iter()
                .any(|k| f.starts_with(&format!("{k}:")))
        })
        .collect();
    let fixed: Vec<&&str> = KNOWN_COARSE_FAILURES
        .iter()
        .filter(|k| k.starts_with(&format!("{} ", kind.name())) && !failed(k))
        .collect();
    assert!(
        new.is_empty() && fixed.is_empty(),
        "new failures: {new:#?}\nlisted as failing but passing now (remove them from \
         KNOWN_COARSE_FAILURES): {fixed:?}"
    );
}

#[test]
fn dressed_robot_every_clip_coarse() {
    dressed_coarse(BodyKind::Robot);
}

#[test]
fn dressed_soldier_every_clip_coarse() {
    dressed_coarse(BodyKind::Soldier);
}

#[test]
fn dressed_long_hair_every_clip_coarse() {
    dressed_coarse(BodyKind::LongHair);
}
