//! Body proxies per frame: moving them with the skin matrices, refitting the BVH, and the broad
//! phase for a garment of 6000 particles (one AABB query each).
//!
//! The character is a stick humanoid (Mixamo names, T-pose, metres) made of tubes, each skinned
//! rigidly to its bone; the numbers depend on the proxy count, printed once.

use criterion::{criterion_group, criterion_main, Criterion};
use drape::anim::{Pose, Skeleton, Skin};
use drape::body::{world_from_bind, Proxies, ProxyBvh, ProxyFrame, ProxyOptions};
use drape::math::{Mat4, Quat, Transform, Vec3};
use drape::rig::{Rig, SkinnedMesh};
use std::hint::black_box;

/// (name, parent, world position at rest, tube radius to the first child).
const BONES: &[(&str, Option<&str>, [f32; 3], f32)] = &[
    ("Hips", None, [0.0, 1.0, 0.0], 0.14),
    ("Spine", Some("Hips"), [0.0, 1.1, 0.0], 0.14),
    ("Spine1", Some("Spine"), [0.0, 1.22, 0.0], 0.14),
    ("Spine2", Some("Spine1"), [0.0, 1.34, 0.0], 0.14),
    ("Neck", Some("Spine2"), [0.0, 1.48, 0.0], 0.055),
    ("Head", Some("Neck"), [0.0, 1.6, 0.0], 0.1),
    ("HeadTop_End", Some("Head"), [0.0, 1.8, 0.0], 0.0),
    ("LeftArm", Some("Spine2"), [0.17, 1.44, 0.0], 0.05),
    ("LeftForeArm", Some("LeftArm"), [0.45, 1.44, 0.0], 0.04),
    ("LeftHand", Some("LeftForeArm"), [0.71, 1.44, 0.0], 0.035),
    ("LeftHand_End", Some("LeftHand"), [0.88, 1.44, 0.0], 0.0),
    ("RightArm", Some("Spine2"), [-0.17, 1.44, 0.0], 0.05),
    ("RightForeArm", Some("RightArm"), [-0.45, 1.44, 0.0], 0.04),
    ("RightHand", Some("RightForeArm"), [-0.71, 1.44, 0.0], 0.035),
    ("RightHand_End", Some("RightHand"), [-0.88, 1.44, 0.0], 0.0),
    ("LeftUpLeg", Some("Hips"), [0.09, 0.93, 0.0], 0.075),
    ("LeftLeg", Some("LeftUpLeg"), [0.09, 0.52, 0.0], 0.05),
    ("LeftFoot", Some("LeftLeg"), [0.09, 0.1, 0.0], 0.04),
    ("LeftToe_End", Some("LeftFoot"), [0.09, 0.03, 0.2], 0.0),
    ("RightUpLeg", Some("Hips"), [-0.09, 0.93, 0.0], 0.075),
    ("RightLeg", Some("RightUpLeg"), [-0.09, 0.52, 0.0], 0.05),
    ("RightFoot", Some("RightLeg"), [-0.09, 0.1, 0.0], 0.04),
    ("RightToe_End", Some("RightFoot"), [-0.09, 0.03, 0.2], 0.0),
];

fn stick_humanoid() -> Rig {
    let index = |n: &str| BONES.iter().position(|b| b.0 == n).unwrap();
    let mut skeleton = Skeleton::default();
    for (name, parent, pos, _) in BONES {
        let parent_pos = parent.map_or(Vec3::ZERO, |p| Vec3::from(BONES[index(p)].2));
        skeleton.names.push(format!("mixamorig:{name}"));
        skeleton.parents.push(parent.map(|p| index(p) as u32));
        skeleton
            .rest
            .push(Transform::from_translation(Vec3::from(*pos) - parent_pos));
    }
    let world = skeleton.rest_world();
    let joints: Vec<u32> = (0..BONES.len() as u32).collect();
    let inverse_bind = world.iter().map(|m| m.inverse()).collect();
    let mut mesh = SkinnedMesh {
        name: "body".into(),
        skin: Some(0),
        ..Default::default()
    };
    for (k, (_, _, pos, r)) in BONES.iter().enumerate() {
        let Some(child) = BONES.iter().position(|b| b.1 == Some(BONES[k].0)) else {
            continue;
        };
        if *r == 0.0 {
            continue;
        }
        let (a, b) = (Vec3::from(*pos), Vec3::from(BONES[child].2));
        let axis = (b - a).normalize();
        let (e1, e2) = axis.any_orthonormal_pair();
        let rings = ((b - a).length() / 0.01) as usize + 1;
        for i in 0..=rings {
            for j in 0..24 {
                let t = std::f32::consts::TAU * j as f32 / 24.0;
                let p = a.lerp(b, i as f32 / rings as f32) + (e1 * t.cos() + e2 * t.sin()) * *r;
                mesh.positions.push(p);
                mesh.joints.push([k as u16, 0, 0, 0]);
                mesh.weights.push([1.0, 0.0, 0.0, 0.0]);
            }
        }
    }
    Rig {
        skeleton,
        skins: vec![Skin {
            name: "skin".into(),
            joints,
            inverse_bind,
            skeleton_root: Some(0),
        }],
        meshes: vec![mesh],
        ..Default::default()
    }
}

fn bench(c: &mut Criterion) {
    let rig = stick_humanoid();
    let px = Proxies::fit(&rig, 0, &ProxyOptions::default()).unwrap();
    println!(
        "{} spheres, {} colliders",
        px.sphere_count(),
        px.capsules.len()
    );

    // A pose with the arms and a knee bent.
    let mut pose = Pose::rest(&rig.skeleton);
    for (name, q) in [
        ("LeftArm", Quat::from_rotation_z(1.0)),
        ("LeftForeArm", Quat::from_rotation_y(-1.5)),
        ("RightLeg", Quat::from_rotation_x(1.2)),
    ] {
        pose.local[rig.skeleton.find(name).unwrap()].rotation = q;
    }
    let mut world = Vec::new();
    pose.world_from_node(&rig.skeleton, &mut world);
    let mut wfb: Vec<Mat4> = Vec::new();
    world_from_bind(&world, &rig.skins[0], &mut wfb);
    let mut frame = ProxyFrame::default();
    px.update(&wfb, &mut frame);
    let mut bvh = ProxyBvh::build(&px.capsules, &px.rest_frame(&rig, 0));

    c.bench_function("proxies update + bvh refit", |b| {
        b.iter(|| {
            px.update(black_box(&wfb), &mut frame);
            black_box(bvh.refit(&px.capsules, &frame))
        })
    });

    // 6000 particles on a cylinder around the torso and hips, 1 cm from the proxies' surface.
    let particles: Vec<Vec3> = (0..6000)
        .map(|i| {
            let t = std::f32::consts::TAU * (i % 100) as f32 / 100.0;
            let y = 0.7 + 0.7 * (i / 100) as f32 / 60.0;
            Vec3::new(0.15 * t.cos(), y, 0.15 * t.sin())
        })
        .collect();
    let mut found = Vec::with_capacity(64);
    c.bench_function("6000 particle queries (r = 2 cm)", |b| {
        b.iter(|| {
            let mut total = 0;
            for p in &particles {
                bvh.query_sphere(*p, 0.02, &mut found);
                total += found.len();
            }
            black_box(total)
        })
    });
    c.bench_function("bvh rebuild", |b| {
        b.iter(|| bvh.rebuild(&px.capsules, black_box(&frame)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
