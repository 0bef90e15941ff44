//! Loading real files (the Khronos sample rigs) and small files built here, checking counts and
//! values against what the files contain.

#[path = "support/gltf_builder.rs"]
mod builder;

use std::path::{Path, PathBuf};

use drape::anim::{Interpolation, Skeleton};
use drape::asset::{load_rig, load_rig_from_slice, LoadOptions};
use drape::math::{Mat4, Quat, Vec3};
use drape::Rig;
use serde_json::json;

fn khronos(rel: &str) -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/rigs/khronos"
    ))
    .join(rel)
}

fn load(rel: &str) -> Rig {
    let p = khronos(rel);
    load_rig(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn from_slice(bytes: &[u8], label: &str) -> Rig {
    load_rig_from_slice(bytes, None, label, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * (1.0 + a.abs().max(b.abs()))
}

fn close3(a: Vec3, b: [f32; 3]) -> bool {
    (0..3).all(|k| close(a[k], b[k]))
}

/// Structural invariants every loaded rig must satisfy.
fn check_invariants(rig: &Rig) {
    let sk = &rig.skeleton;
    assert_eq!(sk.parents.len(), sk.len());
    assert_eq!(sk.rest.len(), sk.len());
    for (i, p) in sk.parents.iter().enumerate() {
        if let Some(p) = p {
            assert!((*p as usize) < i, "parent {p} of node {i} must come first");
        }
        assert!(sk.rest[i].is_finite());
    }
    for s in &rig.skins {
        assert_eq!(s.joints.len(), s.inverse_bind.len());
        assert!(s.joints.iter().all(|&j| (j as usize) < sk.len()));
    }
    for m in &rig.meshes {
        let n = m.vertex_count();
        assert_eq!(m.normals.len(), n, "{}", m.name);
        assert!(m.uvs.is_empty() || m.uvs.len() == n);
        assert!(m.indices.len() % 3 == 0);
        assert!(m.indices.iter().all(|&i| (i as usize) < n));
        assert!(m.normals.iter().all(|v| (v.length() - 1.0).abs() < 1e-3));
        assert!((m.node as usize) < sk.len());
        if let Some(s) = m.skin {
            let jc = rig.skins[s as usize].joints.len();
            assert_eq!(m.joints.len(), n);
            assert_eq!(m.weights.len(), n);
            for v in 0..n {
                assert!(m.joints[v].iter().all(|&j| (j as usize) < jc));
                let mut sum: f32 = m.weights[v].iter().sum();
                if !m.weights1.is_empty() {
                    sum += m.weights1[v].iter().sum::<f32>();
                }
                assert!(
                    (sum - 1.0).abs() < 1e-5,
                    "{} vertex {v} weights sum {sum}",
                    m.name
                );
            }
        }
    }
    for c in &rig.clips {
        assert!(c.start <= c.end);
        for t in &c.rotations {
            assert!(t.times.windows(2).all(|w| w[0] < w[1]));
            let per = if t.interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            assert_eq!(t.values.len(), t.times.len() * per);
        }
        for t in c.translations.iter().chain(&c.scales) {
            assert!(t.times.windows(2).all(|w| w[0] < w[1]));
        }
    }
}

#[test]
fn every_khronos_file_loads() {
    let mut n = 0;
    let mut stack = vec![khronos("")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if drape::asset::is_gltf_path(&p) {
                let rig = load_rig(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                check_invariants(&rig);
                assert!(!rig.meshes.is_empty(), "{}", p.display());
                n += 1;
            }
        }
    }
    assert!(n >= 9, "found only {n} sample files");
}

#[test]
fn simple_skin_values() {
    let rig = load("SimpleSkin/SimpleSkin.gltf");
    assert_eq!(rig.skeleton.len(), 3);
    assert_eq!(rig.meshes.len(), 1);
    let m = &rig.meshes[0];
    assert_eq!(m.vertex_count(), 10);
    assert_eq!(m.triangle_count(), 8);
    assert_eq!(&m.indices[..6], &[0, 1, 3, 0, 3, 2]);
    assert!(close3(m.positions[0], [-0.5, 0.0, 0.0]));
    assert!(close3(m.positions[9], [0.5, 2.0, 0.0]));
    // JOINTS_0 is UNSIGNED_SHORT read through byteStride 16; WEIGHTS_0 shares that view.
    assert_eq!(m.joints[2], [0, 1, 0, 0]);
    assert_eq!(m.weights[2], [0.75, 0.25, 0.0, 0.0]);
    assert_eq!(m.weights[9], [0.0, 1.0, 0.0, 0.0]);
    // No normals in the file: computed, the quad strip lies in z = 0.
    assert!(m.normals.iter().all(|n| n.z.abs() > 0.999));
    let skin = &rig.skins[0];
    assert_eq!(skin.joints, vec![1, 2]);
    assert_eq!(skin.inverse_bind[1].w_axis.y, -1.0);
    assert_eq!(rig.skeleton.parents, vec![None, None, Some(1)]);
    assert!(close3(rig.skeleton.rest[2].translation, [0.0, 1.0, 0.0]));
    let c = &rig.clips[0];
    assert_eq!(c.name, "animation 0");
    assert_eq!(c.rotations.len(), 1);
    assert_eq!(c.rotations[0].node, 2);
    assert_eq!(c.rotations[0].times.len(), 12);
    assert_eq!((c.start, c.end), (0.0, 5.5));
    // Key 2 is (0, 0, 0.707, 0.707) in the file, normalised on load.
    let q = c.rotations[0].values[2];
    assert!((q.length() - 1.0).abs() < 1e-6);
    assert!(close(q.z, std::f32::consts::FRAC_1_SQRT_2));
    assert!(rig.warnings.is_empty(), "{:?}", rig.warnings);
}

#[test]
fn sparse_accessor_values_match_the_sample() {
    // The sample's README: the sparse accessor replaces vertices 8, 10 and 12 of a 14-vertex
    // grid (y = 1 row) with (1, 2, 0), (3, 3, 0), (5, 4, 0).
    let rig = load("SimpleSparseAccessor/SimpleSparseAccessor.gltf");
    let m = &rig.meshes[0];
    assert_eq!(m.vertex_count(), 14);
    assert_eq!(m.triangle_count(), 12);
    assert!(close3(m.positions[8], [1.0, 2.0, 0.0]));
    assert!(close3(m.positions[10], [3.0, 3.0, 0.0]));
    assert!(close3(m.positions[12], [5.0, 4.0, 0.0]));
    // Untouched base values around them.
    assert!(close3(m.positions[7], [0.0, 1.0, 0.0]));
    assert!(close3(m.positions[9], [2.0, 1.0, 0.0]));
    assert!(close3(m.positions[13], [6.0, 1.0, 0.0]));
    assert!(m.skin.is_none() && m.joints.is_empty());
}

#[test]
fn rigged_simple() {
    let rig = load("RiggedSimple/RiggedSimple.glb");
    assert_eq!(rig.skeleton.len(), 5);
    let m = &rig.meshes[0];
    assert_eq!(m.vertex_count(), 160);
    assert_eq!(m.triangle_count(), 188);
    assert!(close3(m.positions[1], [0.19509031, -0.98078483, -4.575077]));
    assert!(close3(m.normals[100], [0.3826688, -0.9238457, 0.008590877]));
    assert_eq!(m.joints[100], [1, 0, 0, 0]);
    assert_eq!(rig.skins[0].joints.len(), 2);
    assert_eq!(rig.skeleton.names[rig.skins[0].joints[0] as usize], "Bone");
    let c = &rig.clips[0];
    assert_eq!(c.channel_count(), 3);
    let keys: usize = c.translations.iter().map(|t| t.times.len()).sum::<usize>()
        + c.rotations.iter().map(|t| t.times.len()).sum::<usize>()
        + c.scales.iter().map(|t| t.times.len()).sum::<usize>();
    assert_eq!(keys, 150);
    assert!(close(c.start, 0.04166662) && close(c.end, 2.083333));
}

#[test]
fn cesium_man() {
    let rig = load("CesiumMan/CesiumMan.glb");
    assert_eq!(rig.skeleton.len(), 22);
    let m = &rig.meshes[0];
    assert_eq!(m.vertex_count(), 3273);
    assert_eq!(m.triangle_count(), 14016 / 3);
    assert_eq!(m.uvs.len(), 3273);
    assert!(close(m.uvs[100].x, 0.766209) && close(m.uvs[100].y, 0.35799003));
    assert_eq!(m.joints[100], [2, 3, 4, 0]);
    assert!(close(
        m.weights[100][2],
        0.6774148 / (0.020529382 + 0.30205584 + 0.6774148)
    ));
    assert_eq!(rig.skins[0].joints.len(), 19);
    let ibm1 = rig.skins[0].inverse_bind[1];
    assert!(close(ibm1.w_axis.x, 0.8218304) && close(ibm1.x_axis.z, 0.9981733));
    assert_eq!(rig.clips.len(), 1);
    assert_eq!(rig.clips[0].channel_count(), 57);
    assert!(close(rig.clips[0].start, 0.04166662) && close(rig.clips[0].end, 2.0));
    // The JPEG base colour texture decodes to its size.
    assert_eq!(rig.textures.len(), 1);
    let t = &rig.textures[0];
    assert_eq!((t.width, t.height), (1024, 1024));
    assert_eq!(t.rgba8.len(), 1024 * 1024 * 4);
    assert_eq!(
        rig.materials[m.material.unwrap() as usize].base_color_texture,
        Some(0)
    );
    // The embedded .gltf variant holds the same mesh.
    let e = load("CesiumMan/glTF-Embedded/CesiumMan.gltf");
    assert_eq!(e.meshes[0].positions, m.positions);
    assert_eq!(e.textures[0].width, 1024);
}

#[test]
fn fox_glb_and_external_bin_png_agree() {
    let glb = load("Fox/Fox.glb");
    let ext = load("Fox/glTF/Fox.gltf");
    for rig in [&glb, &ext] {
        assert_eq!(rig.skeleton.len(), 26);
        let m = &rig.meshes[0];
        assert_eq!(m.vertex_count(), 1728);
        assert_eq!(m.triangle_count(), 576, "non-indexed: vertex k is index k");
        assert_eq!(m.indices[..6], [0, 1, 2, 3, 4, 5]);
        assert!(close3(m.positions[0], [2.056373, 35.21442, -23.045118]));
        assert!(close(m.uvs[1].x, 0.545417));
        assert_eq!(m.joints[1], [2, 16, 20, 0]);
        assert!(close(m.weights[1][0], 0.70019305));
        assert_eq!(rig.skins[0].joints.len(), 24);
        let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Survey", "Walk", "Run"]);
        let dur: Vec<f32> = rig.clips.iter().map(|c| c.duration()).collect();
        assert!(
            close(dur[0], 3.4166667) && close(dur[1], 0.7083333) && close(dur[2], 1.1583333),
            "{dur:?}"
        );
        let keys: Vec<usize> = rig
            .clips
            .iter()
            .map(|c| {
                c.translations.iter().map(|t| t.times.len()).sum::<usize>()
                    + c.rotations.iter().map(|t| t.times.len()).sum::<usize>()
                    + c.scales.iter().map(|t| t.times.len()).sum::<usize>()
            })
            .collect();
        assert_eq!(keys, [1743, 378, 525]);
        assert!(rig.clips.iter().all(|c| c.channel_count() == 21));
        assert_eq!(rig.textures.len(), 1);
        assert_eq!(
            (rig.textures[0].width, rig.textures[0].height),
            (1024, 1024)
        );
    }
    assert_eq!(glb.meshes, ext.meshes);
    assert_eq!(glb.textures[0].rgba8, ext.textures[0].rgba8);
}

#[test]
fn recursive_skeletons_84_skins() {
    let rig = load("RecursiveSkeletons/RecursiveSkeletons.glb");
    assert_eq!(rig.skins.len(), 84);
    assert_eq!(rig.meshes.len(), 84);
    assert_eq!(rig.skeleton.len(), 924);
    // Every mesh uses its own skin, in node order.
    for (i, m) in rig.meshes.iter().enumerate() {
        assert_eq!(m.skin, Some(i as u32));
    }
}

#[test]
fn rigged_figure_rest_pose_matches_inverse_binds() {
    // Bind pose = rest pose in this sample: world_from_joint × inverse_bind ≈ the same matrix
    // (the mesh node's world) for every joint. A wrong node order or decomposition breaks it.
    let rig = load("RiggedFigure/RiggedFigure.glb");
    let world = rig.skeleton.rest_world();
    let skin = &rig.skins[0];
    let first = world[skin.joints[0] as usize] * skin.inverse_bind[0];
    for (k, &j) in skin.joints.iter().enumerate() {
        let m: Mat4 = world[j as usize] * skin.inverse_bind[k];
        assert!(m.abs_diff_eq(first, 1e-3), "joint {k}: {m:?} vs {first:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Small files built here.

#[test]
fn mixamo_like_quad_u8_joints_u16_weights_computed_normals() {
    let (b, rest) = builder::skinned_quad("mixamorig1:");
    for bytes in [b.gltf(&rest), b.glb(&rest)] {
        let rig = from_slice(&bytes, "quad");
        check_invariants(&rig);
        let sk = &rig.skeleton;
        // The 0.01 armature node is kept as a node with its scale.
        assert_eq!(sk.names[0], "Armature");
        assert!(close3(sk.rest[0].scale, [0.01, 0.01, 0.01]));
        let hips = sk.find("Hips").expect("mixamorig1:Hips by base name");
        assert_eq!(sk.names[hips], "mixamorig1:Hips");
        assert_eq!(Skeleton::base_name(&sk.names[hips]), "Hips");
        let m = &rig.meshes[0];
        assert_eq!(m.name, "Body/body#0");
        assert_eq!(
            m.joints,
            vec![[0, 1, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]]
        );
        assert!(close(m.weights[0][0], 0.75) && close(m.weights[0][1], 0.25));
        assert!(close(m.weights[1][0], 0.5));
        assert_eq!(m.weights[2], [1.0, 0.0, 0.0, 0.0]);
        for n in &m.normals {
            assert!(close3(*n, [0.0, 0.0, 1.0]), "{n:?}");
        }
        let c = &rig.clips[0];
        assert_eq!(c.name, "Bend");
        assert!(close(c.start, 1.0 / 30.0) && close(c.end, 1.0));
        assert_eq!(
            c.rotations[0].values[2],
            Quat::IDENTITY,
            "(0,0,0,2) normalised"
        );
        assert!(rig.warnings.is_empty(), "{:?}", rig.warnings);
    }
}

#[test]
fn weights_not_summing_to_one_are_renormalised_with_one_warning() {
    let (mut b, mut rest) = builder::skinned_quad("mixamorig:");
    let w = b.f32s(
        &[
            0.49, 0.49, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.98, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        ],
        "VEC4",
    );
    rest["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"] = json!(w);
    let rig = from_slice(&b.gltf(&rest), "w.gltf");
    let m = &rig.meshes[0];
    assert!(close(m.weights[0][0], 0.5) && close(m.weights[0][1], 0.5));
    assert!(close(m.weights[2][0], 1.0));
    // Vertex 3 had no weight at all: bound to its first joint slot.
    assert_eq!(m.weights[3], [1.0, 0.0, 0.0, 0.0]);
    let renorm: Vec<&String> = rig
        .warnings
        .iter()
        .filter(|w| w.contains("renormalised"))
        .collect();
    assert_eq!(renorm.len(), 1, "{:?}", rig.warnings);
    assert!(
        renorm[0].contains("2 vertices") && renorm[0].contains("0.98"),
        "{}",
        renorm[0]
    );
    assert!(rig
        .warnings
        .iter()
        .any(|w| w.contains("1 vertices had all skin weights zero")));
}

#[test]
fn triangle_strip_and_fan_become_lists() {
    let mut b = builder::Builder::new();
    let pos = b.f32s(&[0., 0., 0., 1., 0., 0., 0., 1., 0., 1., 1., 0.], "VEC3");
    let rest = json!({
        "nodes": [{"mesh": 0}, {"mesh": 1}],
        "meshes": [
            {"primitives": [{"attributes": {"POSITION": pos}, "mode": 5}]},
            {"primitives": [{"attributes": {"POSITION": pos}, "mode": 6}, {"attributes": {"POSITION": pos}, "mode": 1}]}
        ]
    });
    let rig = from_slice(&b.gltf(&rest), "strip.gltf");
    assert_eq!(rig.meshes.len(), 2, "the LINES primitive is skipped");
    assert_eq!(rig.meshes[0].indices, vec![0, 1, 2, 1, 3, 2]);
    assert_eq!(rig.meshes[1].indices, vec![1, 2, 0, 2, 3, 0]);
    // Both strip triangles face +Z (consistent winding), so the computed normals do too.
    assert!(rig.meshes[0]
        .normals
        .iter()
        .all(|n| close3(*n, [0.0, 0.0, 1.0])));
    assert!(
        rig.warnings
            .iter()
            .any(|w| w.contains("1 primitives skipped")),
        "{:?}",
        rig.warnings
    );
}

#[test]
fn two_skins_and_meshes_sharing_a_skin() {
    let (mut b, mut rest) = builder::skinned_quad("mixamorig:");
    let ibm = b.f32s(&Mat4::IDENTITY.to_cols_array(), "MAT4");
    // A visor: second skin with one joint (the spine); two mesh nodes share skin 0.
    rest["nodes"][0]["children"] = json!([1, 3, 4, 5]);
    rest["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "Visor", "mesh": 0, "skin": 1}));
    rest["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "Body2", "mesh": 0, "skin": 0}));
    rest["skins"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "visor", "joints": [2], "inverseBindMatrices": ibm}));
    // Visor's quad refers to joint 1, beyond its one-joint skin, with weight: must fail …
    let e =
        load_rig_from_slice(&b.gltf(&rest), None, "two.gltf", &LoadOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("refers to joint 1") && e.to_string().contains("1 joints"),
        "{e}"
    );
    // … so give the visor its own mesh bound to joint 0 only.
    let j = b.u8s(&[0; 16], "VEC4", false);
    let w = b.f32s(
        &[
            1., 0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0.,
        ],
        "VEC4",
    );
    let mut visor = rest["meshes"][0].clone();
    visor["name"] = json!("visor");
    visor["primitives"][0]["attributes"]["JOINTS_0"] = json!(j);
    visor["primitives"][0]["attributes"]["WEIGHTS_0"] = json!(w);
    rest["meshes"].as_array_mut().unwrap().push(visor);
    rest["nodes"][4]["mesh"] = json!(1);
    let rig = from_slice(&b.gltf(&rest), "two.gltf");
    check_invariants(&rig);
    assert_eq!(rig.skins.len(), 2);
    let names: Vec<&str> = rig.meshes.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        ["Body/body#0", "Visor/visor#0", "Body2/body#0"],
        "node order, nothing merged"
    );
    let skins: Vec<Option<u32>> = rig.meshes.iter().map(|m| m.skin).collect();
    assert_eq!(skins, [Some(0), Some(1), Some(0)]);
    assert_eq!(
        rig.skins[1].joints,
        vec![rig.skeleton.find("Spine").unwrap() as u32]
    );
}

#[test]
fn children_listed_before_parents_are_reordered() {
    let mut b = builder::Builder::new();
    let pos = b.f32s(&[0., 0., 0., 1., 0., 0., 0., 1., 0.], "VEC3");
    // File order: leaf (0) ← mid (1) ← root (2); the mesh hangs on the leaf.
    let rest = json!({
        "nodes": [
            {"name": "leaf", "mesh": 0, "translation": [0.0, 0.0, 3.0]},
            {"name": "mid", "children": [0], "translation": [0.0, 2.0, 0.0]},
            {"name": "root", "children": [1], "translation": [1.0, 0.0, 0.0]}
        ],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos}}]}],
        "animations": [{"channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}],
                        "samplers": [{"input": b.f32s(&[0.0], "SCALAR"), "output": b.f32s(&[1.0, 2.0, 3.0], "VEC3"), "interpolation": "STEP"}]}]
    });
    let rig = from_slice(&b.gltf(&rest), "order.gltf");
    assert_eq!(rig.skeleton.names, ["root", "mid", "leaf"]);
    assert_eq!(rig.skeleton.parents, [None, Some(0), Some(1)]);
    assert_eq!(rig.meshes[0].node, 2);
    assert_eq!(rig.clips[0].translations[0].node, 2);
    assert_eq!(
        rig.clips[0].translations[0].interpolation,
        Interpolation::Step
    );
    let w = rig.skeleton.rest_world()[2];
    assert!(close3(w.w_axis.truncate(), [1.0, 2.0, 3.0]));
}

#[test]
fn cubic_spline_duplicate_keys_and_morph_channels() {
    let mut b = builder::Builder::new();
    let pos = b.f32s(&[0., 0., 0., 1., 0., 0., 0., 1., 0.], "VEC3");
    let t = b.f32s(&[0.0, 0.5, 0.5, 1.0], "SCALAR");
    let lin = b.f32s(&[0., 0., 0., 1., 1., 1., 9., 9., 9., 2., 2., 2.], "VEC3");
    let t2 = b.f32s(&[0.0, 2.0], "SCALAR");
    // CUBICSPLINE: (in-tangent, value, out-tangent) per key.
    let cub = b.f32s(
        &[
            0., 0., 0., 1., 1., 1., 0.5, 0.5, 0.5, -1., -1., -1., 3., 3., 3., 0., 0., 0.,
        ],
        "VEC3",
    );
    let mw = b.f32s(&[0.0, 1.0], "SCALAR");
    let rest = json!({
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos}}]}],
        "animations": [{"name": "a", "channels": [
            {"sampler": 0, "target": {"node": 0, "path": "translation"}},
            {"sampler": 1, "target": {"node": 0, "path": "scale"}},
            {"sampler": 2, "target": {"node": 0, "path": "weights"}}
        ], "samplers": [
            {"input": t, "output": lin},
            {"input": t2, "output": cub, "interpolation": "CUBICSPLINE"},
            {"input": t2, "output": mw}
        ]}]
    });
    let rig = from_slice(&b.gltf(&rest), "anim.gltf");
    let c = &rig.clips[0];
    let tr = &c.translations[0];
    assert_eq!(tr.times, [0.0, 0.5, 1.0], "duplicate time dropped");
    assert_eq!(
        tr.values,
        [Vec3::ZERO, Vec3::ONE, Vec3::splat(2.0)],
        "first key at a time kept"
    );
    let sc = &c.scales[0];
    assert_eq!(sc.interpolation, Interpolation::CubicSpline);
    assert_eq!(sc.values.len(), 6);
    assert_eq!(sc.values[4], Vec3::splat(3.0));
    assert_eq!(c.channel_count(), 2);
    assert_eq!((c.start, c.end), (0.0, 2.0));
    assert!(
        rig.warnings.iter().any(|w| w.contains("1 animation keys")),
        "{:?}",
        rig.warnings
    );
    assert!(
        rig.warnings
            .iter()
            .any(|w| w.contains("1 morph-target weight channels")),
        "{:?}",
        rig.warnings
    );
}

#[test]
fn strided_inverse_binds_and_animation_are_read_with_a_warning() {
    let (mut b, mut rest) = builder::skinned_quad("");
    // Inverse binds interleaved with 16 bytes of junk per matrix (stride 80).
    let mut bytes = Vec::new();
    for m in [
        Mat4::IDENTITY,
        Mat4::from_translation(Vec3::new(0.0, -1.0, 0.0)),
    ] {
        for f in m.to_cols_array() {
            bytes.extend_from_slice(&f.to_le_bytes());
        }
        bytes.extend_from_slice(&[0xFF; 16]);
    }
    let v = b.view(&bytes, Some(80));
    let a = b.accessor(v, builder::FLOAT, 2, "MAT4", false);
    rest["skins"][0]["inverseBindMatrices"] = json!(a);
    let rig = from_slice(&b.gltf(&rest), "stride.gltf");
    assert_eq!(
        rig.skins[0].inverse_bind[1],
        Mat4::from_translation(Vec3::new(0.0, -1.0, 0.0))
    );
    assert!(
        rig.warnings.iter().any(|w| w.contains("byteStride")),
        "{:?}",
        rig.warnings
    );
}

#[test]
fn external_uri_needs_a_folder_and_stays_inside_it() {
    let dir = std::env::temp_dir().join(format!("drape-loader-test-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let (b, rest) = builder::skinned_quad("");
    let mut doc: serde_json::Value = serde_json::from_slice(&b.gltf(&rest)).unwrap();
    doc["buffers"][0]["uri"] = json!("sub/quad%20data.bin");
    std::fs::write(dir.join("sub/quad data.bin"), &b.bin).unwrap();
    let path = dir.join("quad.gltf");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let rig = load_rig(&path).unwrap();
    assert_eq!(rig.meshes[0].vertex_count(), 4);
    // The same document without a folder cannot resolve the file.
    let e = load_rig_from_slice(
        &serde_json::to_vec(&doc).unwrap(),
        None,
        "mem.gltf",
        &LoadOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("mem.gltf") && e.to_string().contains("without a folder"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn node_matrices_are_decomposed_and_shear_is_reported() {
    let mut b = builder::Builder::new();
    let pos = b.f32s(&[0., 0., 0., 1., 0., 0., 0., 1., 0.], "VEC3");
    let trs = Mat4::from_scale_rotation_translation(
        Vec3::new(2.0, 3.0, 4.0),
        Quat::from_rotation_y(0.7),
        Vec3::new(1.0, -2.0, 5.0),
    );
    let mut shear = Mat4::IDENTITY;
    shear.y_axis.x = 0.5;
    let rest = json!({
        "nodes": [
            {"name": "trs", "matrix": trs.to_cols_array(), "children": [1]},
            {"name": "shear", "matrix": shear.to_cols_array(), "mesh": 0}
        ],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos}}]}]
    });
    let rig = from_slice(&b.gltf(&rest), "matrix.gltf");
    let t = rig.skeleton.rest[0];
    assert!(t.to_mat4().abs_diff_eq(trs, 1e-5));
    assert!(close3(t.scale, [2.0, 3.0, 4.0]));
    assert!(t.rotation.abs_diff_eq(Quat::from_rotation_y(0.7), 1e-5));
    let w: Vec<&String> = rig
        .warnings
        .iter()
        .filter(|w| w.contains("shear"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", rig.warnings);
    assert!(w[0].contains("node 1"), "{}", w[0]);
}

#[test]
fn info_describes_the_rig() {
    let (b, rest) = builder::skinned_quad("mixamorig1:");
    let rig = from_slice(&b.glb(&rest), "quad.glb");
    let text = drape::cli::info::describe(&rig, false);
    assert!(
        text.contains("4 nodes, 1 meshes (4 vertices), 1 skins"),
        "{text}"
    );
    assert!(text.contains("prefix \"mixamorig1:\""), "{text}");
    let clip_row = text.lines().find(|l| l.contains("Bend")).expect(&text);
    // name, start, duration, channels, keys, interpolation
    assert!(
        clip_row.contains("0.033 s") && clip_row.contains("0.967 s"),
        "{clip_row}"
    );
    assert!(
        clip_row.contains(" 3 ") && clip_row.ends_with("LINEAR"),
        "{clip_row}"
    );
    let mesh_row = text
        .lines()
        .find(|l| l.contains("Body/body#0"))
        .expect(&text);
    let cells: Vec<&str> = mesh_row.split_whitespace().collect();
    assert_eq!(cells[1..5], ["4", "2", "4", "0"], "{mesh_row}");
    assert!(text.contains("no warnings"));
}

#[test]
fn info_binary_prints_and_fails_with_the_error() {
    let exe = env!("CARGO_BIN_EXE_drape");
    let out = std::process::Command::new(exe)
        .arg("info")
        .arg(khronos("Fox/Fox.glb"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("Survey") && s.contains("1728") && s.contains("1024×1024"),
        "{s}"
    );
    let out = std::process::Command::new(exe)
        .args(["info", "no/such/file.glb"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("file.glb") && e.contains("cannot read"), "{e}");
}

#[test]
fn eight_influences_quantized_attributes_and_sparse_zeros() {
    let (mut b, mut rest) = builder::skinned_quad("");
    // KHR_mesh_quantization: positions as normalized SHORT (32767 = 1.0).
    let p: Vec<u8> = [
        0i16, 0, 0, 0, 32767, 0, 0, 0, 32767, 32767, 0, 0, 0, 32767, 0, 0,
    ]
    .iter()
    .flat_map(|v| v.to_le_bytes())
    .collect();
    let v = b.view(&p, Some(8)); // VEC3 of i16 padded to 8 bytes per vertex
    let pos = b.accessor(v, builder::SHORT, 4, "VEC3", true);
    // Second influence set: u8 normalized weights; vertex 0 puts 0.5 on joint 1 through set 1.
    let j1 = b.u8s(
        &[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        "VEC4",
        false,
    );
    let w1 = b.u8s(
        &[255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        "VEC4",
        true,
    );
    let tan = b.f32s(
        &[
            1., 0., 0., 1., 1., 0., 0., 1., 1., 0., 0., -1., 1., 0., 0., 1.,
        ],
        "VEC4",
    );
    // TEXCOORD_0 without a buffer view (zeros) and one sparse substitution at vertex 2.
    let si = b.view(&[2u8], None);
    let sv = b.view(
        &[0.25f32, 0.75]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect::<Vec<_>>(),
        None,
    );
    let uv = b.raw_accessor(json!({"componentType": 5126, "count": 4, "type": "VEC2",
        "sparse": {"count": 1, "indices": {"bufferView": si, "componentType": 5121}, "values": {"bufferView": sv}}}));
    let attrs = &mut rest["meshes"][0]["primitives"][0]["attributes"];
    attrs["POSITION"] = json!(pos);
    attrs["JOINTS_1"] = json!(j1);
    attrs["WEIGHTS_1"] = json!(w1);
    attrs["TANGENT"] = json!(tan);
    attrs["TEXCOORD_0"] = json!(uv);
    rest["extensionsUsed"] = json!(["KHR_mesh_quantization"]);
    rest["extensionsRequired"] = json!(["KHR_mesh_quantization"]);
    let rig = from_slice(&b.glb(&rest), "quant.glb");
    check_invariants(&rig);
    let m = &rig.meshes[0];
    assert!(close3(m.positions[2], [1.0, 1.0, 0.0]));
    assert_eq!(m.influences(), 8);
    // Vertex 0: (0.75, 0.25) + 1.0 on set 1 = 2.0 → halved.
    assert!(close(m.weights[0][0], 0.375) && close(m.weights[0][1], 0.125));
    assert_eq!(m.joints1[0], [1, 0, 0, 0]);
    assert!(close(m.weights1[0][0], 0.5));
    assert_eq!(m.tangents[2].w, -1.0);
    assert_eq!(m.uvs[2].to_array(), [0.25, 0.75]);
    assert_eq!(m.uvs[1].to_array(), [0.0, 0.0]);
    // Vertex 0's sum of 2 is reported once.
    let w: Vec<&String> = rig
        .warnings
        .iter()
        .filter(|w| w.contains("renormalised"))
        .collect();
    assert!(
        w.len() == 1 && w[0].contains("1 vertices") && w[0].contains("2.0000"),
        "{w:?}"
    );
}
