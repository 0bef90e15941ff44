//! Round trips of the exporter's output through the `gltf` crate (an independent reader):
//! a tiny rig, a two-frame bake, and inconsistent input refused.

use super::*;
use crate::anim::{Clip, Interpolation, Skeleton, Skin, Track};
use crate::math::{Mat4, Quat, Transform, Vec2, Vec3};
use crate::rig::{Material, Rig, SkinnedMesh, Texture};

/// A two-joint rig with one skinned triangle, a 2×2 texture and a STEP + LINEAR clip.
fn tiny() -> Rig {
    let skeleton = Skeleton {
        names: vec!["root".into(), "child".into(), "mesh".into()],
        parents: vec![None, Some(0), None],
        rest: vec![
            Transform::IDENTITY,
            Transform::from_translation(Vec3::Y),
            Transform::IDENTITY,
        ],
    };
    let mesh = SkinnedMesh {
        name: "tri".into(),
        node: 2,
        skin: Some(0),
        material: Some(0),
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        normals: vec![Vec3::Z; 3],
        uvs: vec![Vec2::ZERO, Vec2::X, Vec2::Y],
        joints: vec![[0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]],
        weights: vec![[1.0, 0.0, 0.0, 0.0]; 3],
        indices: vec![0, 1, 2],
        ..Default::default()
    };
    let clip = Clip {
        name: "wave".into(),
        start: 0.0,
        end: 1.0,
        rotations: vec![Track {
            node: 1,
            times: vec![0.0, 1.0],
            values: vec![Quat::IDENTITY, Quat::from_rotation_z(1.0)],
            interpolation: Interpolation::Linear,
        }],
        translations: vec![Track {
            node: 0,
            times: vec![0.0, 0.5],
            values: vec![Vec3::ZERO, Vec3::X],
            interpolation: Interpolation::Step,
        }],
        scales: vec![],
    };
    Rig {
        source: "test".into(),
        skeleton,
        skins: vec![Skin {
            name: "skin".into(),
            joints: vec![0, 1],
            inverse_bind: vec![Mat4::IDENTITY, Mat4::from_translation(-Vec3::Y)],
            skeleton_root: Some(0),
        }],
        meshes: vec![mesh],
        materials: vec![Material {
            base_color_texture: Some(0),
            ..Default::default()
        }],
        textures: vec![Texture {
            name: "t".into(),
            width: 2,
            height: 2,
            rgba8: vec![200; 16],
        }],
        clips: vec![clip],
        ..Default::default()
    }
}

#[test]
fn tiny_rig_round_trips_through_the_gltf_crate() {
    let bytes = to_glb(&tiny()).unwrap();
    assert_eq!(&bytes[0..4], b"glTF");
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
        bytes.len()
    );
    let g = gltf::Gltf::from_slice(&bytes).expect("valid glb");
    let blob = g.blob.clone().expect("a BIN chunk");
    let doc = g.document;
    let skin = doc.skins().next().unwrap();
    assert_eq!(skin.joints().map(|j| j.index()).collect::<Vec<_>>(), [0, 1]);
    let ibm: Vec<[[f32; 4]; 4]> = skin
        .reader(|_| Some(&blob[..]))
        .read_inverse_bind_matrices()
        .unwrap()
        .collect();
    assert_eq!(ibm[1][3], [0.0, -1.0, 0.0, 1.0]);
    let anim = doc.animations().next().unwrap();
    let interps: Vec<_> = anim.samplers().map(|s| s.interpolation()).collect();
    assert!(interps.contains(&gltf::animation::Interpolation::Step));
    assert!(interps.contains(&gltf::animation::Interpolation::Linear));
    let img = doc.images().next().unwrap();
    assert!(matches!(
        img.source(),
        gltf::image::Source::View {
            mime_type: "image/png",
            ..
        }
    ));
    let mesh_node = doc.nodes().nth(2).unwrap();
    assert!(mesh_node.mesh().is_some() && mesh_node.skin().is_some());
}

/// The tiny rig with its child bone bent at the second of two frames, and one morphing
/// triangle: bone keys where the pose moves, weights keys with the hold key at the end.
#[test]
fn bake_keys_moving_bones_and_morph_weights_with_a_hold() {
    let rig = tiny();
    let mut bent = rig.skeleton.rest.clone();
    bent[1].rotation = Quat::from_rotation_z(-0.5);
    let cloth = MorphMesh {
        name: "cloth".into(),
        indices: vec![0, 1, 2],
        uvs: vec![],
        material: BakedMaterial::Cloth([0.5; 3]),
        frames: vec![
            vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            vec![Vec3::Z, Vec3::X, Vec3::Y],
        ],
        normals: vec![vec![Vec3::Z; 3], vec![Vec3::ONE.normalize(); 3]],
    };
    let mut bake = Bake {
        rig: &rig,
        times: vec![0.0, 0.5],
        hold: 0.5,
        body: BakedBody::Skinned {
            locals: vec![rig.skeleton.rest.clone(), bent],
        },
        garments: vec![cloth],
        name: "b".into(),
    };
    let (bytes, layout) = bake_to_glb(&bake).unwrap();
    assert_eq!(layout.body, [(0, 0)]);
    assert_eq!(layout.garments, [(1, 0)]);
    let g = gltf::Gltf::from_slice(&bytes).expect("valid glb");
    let blob = g.blob.clone().unwrap();
    let anim = g.document.animations().next().unwrap();
    let mut paths = Vec::new();
    for ch in anim.channels() {
        let r = ch.reader(|_| Some(&blob[..]));
        let inputs: Vec<f32> = r.read_inputs().unwrap().collect();
        assert_eq!(inputs, [0.0, 0.5, 1.0]);
        paths.push((ch.target().node().index(), ch.target().property()));
        if let gltf::animation::util::ReadOutputs::MorphTargetWeights(w) = r.read_outputs().unwrap()
        {
            assert_eq!(w.into_f32().collect::<Vec<_>>(), [0.0, 1.0, 1.0]);
        }
    }
    use gltf::animation::Property;
    // Only the bent bone and the cloth's weights are keyed.
    assert_eq!(
        paths,
        [(1, Property::Rotation), (3, Property::MorphTargetWeights)]
    );

    // The cloth's normals: frame 0's as NORMAL, frame 1's as the target's NORMAL delta.
    let prim = g
        .document
        .meshes()
        .nth(1)
        .unwrap()
        .primitives()
        .next()
        .unwrap();
    let r = prim.reader(|_| Some(&blob[..]));
    let base: Vec<[f32; 3]> = r.read_normals().unwrap().collect();
    assert_eq!(base, [[0.0, 0.0, 1.0]; 3]);
    let (_, normals, _) = r.read_morph_targets().next().unwrap();
    let n1 = Vec3::ONE.normalize();
    for d in normals.unwrap() {
        let back = Vec3::Z + Vec3::from(d);
        assert!(back.distance(n1) < 1e-6, "{back}");
    }

    // Inconsistent bakes are refused, not written.
    bake.garments[0].normals[1][2] = Vec3::X * 2.0;
    assert!(matches!(bake_to_glb(&bake), Err(ExportError::Invalid(_))));
    bake.garments[0].normals.pop();
    assert!(matches!(bake_to_glb(&bake), Err(ExportError::Invalid(_))));
    bake.garments[0].normals.clear();
    bake.garments[0].frames.pop();
    assert!(matches!(bake_to_glb(&bake), Err(ExportError::Invalid(_))));
    bake.garments.clear();
    bake.times = vec![0.5, 0.0];
    assert!(matches!(bake_to_glb(&bake), Err(ExportError::Invalid(_))));
}

#[test]
fn inconsistent_rigs_are_refused_not_written() {
    let mut r = tiny();
    r.meshes[0].indices.push(7);
    assert!(matches!(to_glb(&r), Err(ExportError::Invalid(_))));
    let mut r = tiny();
    r.skeleton.parents[0] = Some(1);
    assert!(matches!(to_glb(&r), Err(ExportError::Invalid(_))));
    let mut r = tiny();
    r.textures[0].rgba8.pop();
    assert!(matches!(to_glb(&r), Err(ExportError::Texture { .. })));
}
