//! Binary FBX: the built-in ninja written as FBX (Mixamo's layout) poses exactly like the ninja
//! itself, clip by clip; hand-built files cover the structural cases (quads and n-gons, clusters
//! without weights, compressed and plain arrays, 7400 and 7700 headers, PreRotation with
//! RotationOrder and pivots, an empty `Take 001` beside `mixamo.com`, 60 fps keys); clips move
//! between files by bone name (`--clips-from`); bad files are errors naming the file.

#[path = "support/fbx_builder.rs"]
mod fbx_builder;

use drape::anim::{Pose, Skeleton};
use drape::asset::fbx::{add_clips_from, to_fbx, FbxWriteOptions};
use drape::asset::{load_rig, load_rig_from_slice, LoadOptions};
use drape::math::{Quat, Vec3};
use drape::skin::{SkinMethod, Skinner};
use drape::Rig;
use fbx_builder::{p3, pi, Fbx, TICKS};
use glam::{DMat4, DVec3};

fn load(bytes: &[u8], label: &str) -> Rig {
    load_rig_from_slice(bytes, None, label, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{label}: {e}"))
}

/// Skinned (LBS) world positions of every mesh, concatenated, at `clip`/`t` (or at rest).
fn posed(rig: &Rig, clip: Option<&str>, t: f32) -> Vec<Vec3> {
    let mut pose = Pose::rest(&rig.skeleton);
    if let Some(c) = clip {
        let i = rig.clip(c).unwrap_or_else(|| panic!("no clip {c}"));
        rig.clips[i].sample(t, &mut pose);
    }
    let mut world = Vec::new();
    pose.world_from_node(&rig.skeleton, &mut world);
    let mut sk = Skinner::new(rig);
    sk.update(rig, &world, SkinMethod::Lbs);
    (0..rig.meshes.len())
        .flat_map(|i| sk.positions(i).to_vec())
        .collect()
}

fn max_diff(a: &[Vec3], b: &[Vec3]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(p, q)| (*p - *q).length())
        .fold(0.0, f32::max)
}

fn height(p: &[Vec3]) -> f32 {
    let (lo, hi) = p
        .iter()
        .fold((f32::MAX, f32::MIN), |(l, h), v| (l.min(v.y), h.max(v.y)));
    hi - lo
}

#[test]
fn ninja_as_fbx_poses_like_the_ninja_in_every_clip() {
    let ninja = drape::ninja::build().unwrap().rig;
    for (version, compress) in [(7400, true), (7700, false), (7500, true)] {
        let bytes = to_fbx(&ninja, &FbxWriteOptions { version, compress }).unwrap();
        assert!(bytes.starts_with(b"Kaydara FBX Binary  \0"));
        let fbx = load(&bytes, "ninja.fbx");
        assert_eq!(fbx.vertex_count(), ninja.vertex_count());
        assert_eq!(fbx.meshes[0].indices, ninja.meshes[0].indices);
        let names = |r: &Rig| r.clips.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&fbx), names(&ninja));
        assert_eq!(fbx.skins[0].joints.len(), ninja.skins[0].joints.len());
        // UVs survive the V flip both ways.
        let uv = max_diff(
            &ninja.meshes[0]
                .uvs
                .iter()
                .map(|u| u.extend(0.0))
                .collect::<Vec<_>>(),
            &fbx.meshes[0]
                .uvs
                .iter()
                .map(|u| u.extend(0.0))
                .collect::<Vec<_>>(),
        );
        assert!(uv < 1e-6, "uv {uv}");
        let rest = posed(&ninja, None, 0.0);
        let h = height(&rest);
        let mut worst = max_diff(&rest, &posed(&fbx, None, 0.0));
        for c in &ninja.clips {
            let n = 7;
            for k in 0..=n {
                // Key times and times between keys.
                let t = c.start
                    + c.duration() * k as f32 / n as f32
                    + if k % 2 == 1 { 0.013 } else { 0.0 };
                let d = max_diff(
                    &posed(&ninja, Some(&c.name), t),
                    &posed(&fbx, Some(&c.name), t),
                );
                worst = worst.max(d);
                assert!(d < 1e-4 * h, "{version}: clip {} at {t}: {d} m", c.name);
            }
        }
        eprintln!("FBX {version} (compressed {compress}): {} bytes, worst vertex difference {worst:.2e} m of a {h:.3} m character", bytes.len());
        assert!(fbx.textures.len() == 1 && fbx.textures[0].rgba8 == ninja.textures[0].rgba8);
    }
}

#[test]
fn kind_is_found_by_content_not_extension() {
    let ninja = drape::ninja::build().unwrap().rig;
    let dir = std::env::temp_dir().join(format!("drape_fbx_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("character.glb");
    std::fs::write(&p, to_fbx(&ninja, &FbxWriteOptions::default()).unwrap()).unwrap();
    let rig = load_rig(&p).unwrap();
    assert_eq!(rig.vertex_count(), ninja.vertex_count());
    let _ = std::fs::remove_dir_all(&dir);
}

fn quad_and_pentagon(version: u32, compress: bool) -> Vec<u8> {
    let mut f = Fbx::new(version);
    let pts = [
        [0.0, 0.0, 0.0],
        [100.0, 0.0, 0.0],
        [100.0, 100.0, 0.0],
        [0.0, 100.0, 0.0],
        [200.0, 0.0, 0.0],
        [250.0, 50.0, 0.0],
        [200.0, 100.0, 0.0],
    ];
    f.mesh("Plate", 0, &pts, &[&[0, 1, 2, 3], &[1, 4, 5, 6, 2]]);
    f.bytes(compress)
}

#[test]
fn quads_and_ngons_are_fanned_in_control_point_order_in_metres() {
    for (v, c) in [(7400, false), (7400, true), (7700, false), (7700, true)] {
        let rig = load(&quad_and_pentagon(v, c), "plate.fbx");
        let m = &rig.meshes[0];
        assert_eq!(m.positions.len(), 7, "{v}");
        assert_eq!(m.indices, vec![0, 1, 2, 0, 2, 3, 1, 4, 5, 1, 5, 6, 1, 6, 2]);
        let p = posed(&rig, None, 0.0);
        assert!(
            (p[5] - Vec3::new(2.5, 0.5, 0.0)).length() < 1e-6,
            "{:?}",
            p[5]
        );
        // Normals computed (+Z) when the file has none.
        assert!(m.normals.iter().all(|n| (n.z - 1.0).abs() < 1e-5));
    }
}

/// FBX's local transform computed independently, with matrices:
/// T · Roff · Rp · Rpre · R · Rpost⁻¹ · Rp⁻¹ · Soff · Sp · S · Sp⁻¹.
fn fbx_local(t: DVec3, r: DVec3, order: &str, pre: DVec3, rp: DVec3, sp: DVec3, s: DVec3) -> DMat4 {
    let axis = |c: char, deg: f64| match c {
        'X' => DMat4::from_rotation_x(deg.to_radians()),
        'Y' => DMat4::from_rotation_y(deg.to_radians()),
        _ => DMat4::from_rotation_z(deg.to_radians()),
    };
    let angle = |c: char, v: DVec3| match c {
        'X' => v.x,
        'Y' => v.y,
        _ => v.z,
    };
    // Order "ABC": A applied first → matrix C · B · A.
    let rot = |v: DVec3, o: &str| {
        let c: Vec<char> = o.chars().collect();
        axis(c[2], angle(c[2], v)) * axis(c[1], angle(c[1], v)) * axis(c[0], angle(c[0], v))
    };
    let tr = DMat4::from_translation;
    tr(t)
        * tr(rp)
        * rot(pre, "XYZ")
        * rot(r, order)
        * tr(-rp)
        * tr(sp)
        * DMat4::from_scale(s)
        * tr(-sp)
}

#[test]
fn prerotation_rotation_order_pivots_and_60fps_keys() {
    let orders = ["XYZ", "XZY", "YZX", "YXZ", "ZXY", "ZYX"];
    for (oi, order) in orders.iter().enumerate() {
        let mut f = Fbx::new(if oi % 2 == 0 { 7400 } else { 7700 });
        let t = DVec3::new(1.0, 95.0, -2.0);
        let pre = DVec3::new(-90.0, 0.0, 35.0);
        let r = DVec3::new(10.0, 25.0, -40.0);
        let rp = DVec3::new(3.0, -1.0, 2.0);
        let sp = DVec3::new(0.5, 0.0, 1.0);
        let s = DVec3::new(1.0, 1.0, 1.0);
        let hips = f.model(
            "mixamorig:Hips",
            "LimbNode",
            0,
            vec![
                p3("Lcl Translation", t.into()),
                p3("Lcl Rotation", r.into()),
                p3("PreRotation", pre.into()),
                p3("RotationPivot", rp.into()),
                p3("ScalingPivot", sp.into()),
                pi("RotationOrder", oi as i32),
                pi("RotationActive", 1),
            ],
        );
        let spine = f.model(
            "mixamorig:Spine",
            "LimbNode",
            hips,
            vec![p3("Lcl Translation", [0.0, 10.0, 0.0])],
        );
        // 60 fps keys on the hips' X rotation: 0, 30, 60 degrees at frames 0, 1, 2.
        let (_, layer) = f.stack("Take 001");
        let _ = layer;
        let (_, layer) = f.stack("mixamo.com");
        let keys = [0, TICKS / 60, 2 * TICKS / 60];
        f.curves(
            layer,
            hips,
            "Lcl Rotation",
            &keys,
            [Some(&[0.0, 30.0, 60.0]), None, None],
        );
        let rig = load(&f.bytes(true), "pre.fbx");
        assert_eq!(rig.clips.len(), 1, "the empty Take 001 is not listed");
        assert_eq!(rig.clips[0].name, "mixamo.com");
        assert!((rig.clips[0].end - 2.0 / 60.0).abs() < 1e-6);
        let spine_node = rig.skeleton.find("Spine").unwrap();
        let root = DMat4::from_scale(DVec3::splat(0.01));
        let expect = |rx: f64| {
            let m = root
                * fbx_local(t, DVec3::new(rx, r.y, r.z), order, pre, rp, sp, s)
                * DMat4::from_translation(DVec3::new(0.0, 10.0, 0.0));
            m.transform_point3(DVec3::ZERO)
        };
        let world = rig.skeleton.rest_world();
        let got = world[spine_node].transform_point3(Vec3::ZERO).as_dvec3();
        assert!(
            (got - expect(r.x)).length() < 1e-6,
            "{order}: rest {got} vs {}",
            expect(r.x)
        );
        for (k, (time, rx)) in [(1.0 / 60.0, 30.0), (2.0 / 60.0, 60.0), (1.5 / 60.0, 45.0)]
            .iter()
            .enumerate()
        {
            let mut pose = Pose::rest(&rig.skeleton);
            rig.clips[0].sample(*time as f32, &mut pose);
            let mut w = Vec::new();
            pose.world_from_node(&rig.skeleton, &mut w);
            let got = w[spine_node].transform_point3(Vec3::ZERO).as_dvec3();
            // Between keys drape interpolates the composed rotation (slerp), not the Euler angle.
            let tol = if k == 2 { 5e-3 } else { 1e-6 };
            assert!(
                (got - expect(*rx)).length() < tol,
                "{order} t={time}: {got} vs {}",
                expect(*rx)
            );
        }
        let _ = spine;
    }
}

#[test]
fn rotation_active_off_ignores_prerotation() {
    let mut f = Fbx::new(7400);
    let a = f.model(
        "A",
        "Null",
        0,
        vec![
            p3("PreRotation", [0.0, 0.0, 90.0]),
            p3("Lcl Translation", [5.0, 0.0, 0.0]),
        ],
    );
    f.model(
        "B",
        "Null",
        a,
        vec![p3("Lcl Translation", [10.0, 0.0, 0.0])],
    );
    f.mesh(
        "M",
        a,
        &[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        &[&[0, 1, 2]],
    );
    let rig = load(&f.bytes(false), "inactive.fbx");
    let w = rig.skeleton.rest_world();
    let b = rig.skeleton.find("B").unwrap();
    let p = w[b].transform_point3(Vec3::ZERO);
    assert!((p - Vec3::new(0.15, 0.0, 0.0)).length() < 1e-6, "{p}");
}

#[test]
fn clusters_without_weights_and_unweighted_points() {
    let mut f = Fbx::new(7700);
    let hips = f.model(
        "mixamorig:Hips",
        "LimbNode",
        0,
        vec![p3("Lcl Translation", [0.0, 100.0, 0.0])],
    );
    let arm = f.model(
        "mixamorig:LeftArm",
        "LimbNode",
        hips,
        vec![p3("Lcl Translation", [10.0, 0.0, 0.0])],
    );
    let eye = f.model(
        "mixamorig:LeftEye",
        "LimbNode",
        hips,
        vec![p3("Lcl Translation", [0.0, 10.0, 0.0])],
    );
    let (_, g) = f.mesh(
        "Body",
        0,
        &[
            [10.0, 100.0, 0.0],
            [20.0, 100.0, 0.0],
            [20.0, 110.0, 0.0],
            [0.0, 0.0, 0.0],
        ],
        &[&[0, 1, 2], &[0, 2, 3]],
    );
    let skin = f.skin(g);
    let bind = |x: f64, y: f64| DMat4::from_translation(DVec3::new(x, y, 0.0));
    f.cluster(
        skin,
        hips,
        Some((&[], &[])),
        DMat4::IDENTITY,
        bind(0.0, 100.0),
    );
    f.cluster(
        skin,
        arm,
        Some((&[0, 1, 2], &[1.0, 1.0, 1.0])),
        DMat4::IDENTITY,
        bind(10.0, 100.0),
    );
    f.cluster(skin, eye, None, DMat4::IDENTITY, bind(0.0, 110.0));
    let (_, layer) = f.stack("mixamo.com");
    f.curves(
        layer,
        arm,
        "Lcl Rotation",
        &[0, TICKS],
        [None, None, Some(&[0.0, 90.0])],
    );
    let rig = load(&f.bytes(true), "clusters.fbx");
    // Three clusters (two without weights) + the mesh model for the loose control point.
    assert_eq!(rig.skins[0].joints.len(), 4);
    assert!(
        rig.warnings.iter().any(|w| w.contains("no skin weight")),
        "{:?}",
        rig.warnings
    );
    let rest = posed(&rig, None, 0.0);
    assert!((rest[1] - Vec3::new(0.2, 1.0, 0.0)).length() < 1e-6);
    let p = posed(&rig, Some("mixamo.com"), 1.0);
    // The arm turned 90° about Z at (0.1, 1.0): (0.2, 1.0) → (0.1, 1.1).
    assert!(
        (p[1] - Vec3::new(0.1, 1.1, 0.0)).length() < 1e-5,
        "{}",
        p[1]
    );
    assert!(
        (p[3] - Vec3::ZERO).length() < 1e-6,
        "the loose point stays: {}",
        p[3]
    );
}

#[test]
fn layered_normals_and_uvs_by_polygon_vertex() {
    use drape::asset::fbx::binary::{Node, Prop};
    let mut f = Fbx::new(7400);
    let (_, g) = f.mesh(
        "Quad",
        0,
        &[
            [0.0; 3],
            [100.0, 0.0, 0.0],
            [100.0, 100.0, 0.0],
            [0.0, 100.0, 0.0],
        ],
        &[&[0, 1, 2, 3]],
    );
    let leaf = |n: &str, p: Prop| Node::new(n, vec![p]);
    f.layer(
        g,
        Node::new("LayerElementNormal", vec![Prop::I32(0)]).with(vec![
            leaf(
                "MappingInformationType",
                Prop::Str("ByPolygonVertex".into()),
            ),
            leaf("ReferenceInformationType", Prop::Str("Direct".into())),
            leaf("Normals", Prop::ArrF64([0.0, 0.0, -1.0].repeat(4))),
        ]),
    );
    f.layer(
        g,
        Node::new("LayerElementUV", vec![Prop::I32(0)]).with(vec![
            leaf(
                "MappingInformationType",
                Prop::Str("ByPolygonVertex".into()),
            ),
            leaf(
                "ReferenceInformationType",
                Prop::Str("IndexToDirect".into()),
            ),
            leaf(
                "UV",
                Prop::ArrF64(vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]),
            ),
            leaf("UVIndex", Prop::ArrI32(vec![0, 1, 2, 3])),
        ]),
    );
    let rig = load(&f.bytes(false), "quad.fbx");
    let m = &rig.meshes[0];
    assert!(m.normals.iter().all(|n| (n.z + 1.0).abs() < 1e-6));
    assert_eq!(
        m.uvs[2],
        drape::math::Vec2::new(1.0, 0.0),
        "V flipped to glTF's origin"
    );
}

fn expect_err(bytes: &[u8], name: &str, words: &[&str]) {
    let dir = std::env::temp_dir().join(format!("drape_fbx_err_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    let e = load_rig(&p).expect_err(name).to_string();
    assert!(e.contains(name), "{e}");
    for w in words {
        assert!(e.contains(w), "{name}: {e:?} lacks {w:?}");
    }
}

#[test]
fn bad_files_are_errors_naming_the_file() {
    expect_err(
        b"; FBX 7.4.0 project file\nFBXHeaderExtension:  {\n",
        "ascii.fbx",
        &["ASCII FBX", "binary"],
    );
    let mut old = quad_and_pentagon(7400, false);
    old[23..27].copy_from_slice(&6100u32.to_le_bytes());
    expect_err(&old, "old.fbx", &["6.1", "7.1"]);
    let mut f = Fbx::new(7400);
    f.model("mixamorig:Hips", "LimbNode", 0, vec![]);
    expect_err(&f.bytes(false), "empty.fbx", &["no mesh and no animation"]);
    let good = to_fbx(
        &drape::ninja::build().unwrap().rig,
        &FbxWriteOptions::default(),
    )
    .unwrap();
    for cut in [30, 1000, good.len() / 3, good.len() / 2, good.len() - 200] {
        expect_err(&good[..cut], "cut.fbx", &["truncated"]);
    }
    // Corrupt bytes in the middle never panic.
    let geometry_only = LoadOptions {
        decode_textures: false,
        ..Default::default()
    };
    for i in (27..good.len()).step_by(good.len() / 40) {
        let mut b = good.clone();
        b[i] ^= 0x5a;
        let _ = load_rig_from_slice(&b, None, "corrupt.fbx", &geometry_only);
    }
}

/// A Mixamo "without skin" download made from the ninja: its skeleton and one clip, with a rest
/// pose a few millimetres off, one extra animated bone, and no mesh.
fn clip_only(ninja: &Rig, clip: &str) -> Vec<u8> {
    let mut r = ninja.clone();
    r.meshes.clear();
    r.skins.clear();
    r.materials.clear();
    r.textures.clear();
    r.clips.retain(|c| c.name == clip);
    let hips = r.skeleton.find("Hips").unwrap();
    for (i, t) in r.skeleton.rest.iter_mut().enumerate() {
        if i > hips {
            t.translation += Vec3::new(0.3, -0.2, 0.25); // 3 mm in centimetre bone space
        }
    }
    let head = r.skeleton.find("Head").unwrap() as u32;
    r.skeleton.names.push("mixamorig:Ponytail".into());
    r.skeleton.parents.push(Some(head));
    r.skeleton.rest.push(Default::default());
    let n = r.skeleton.len() as u32 - 1;
    let c = &mut r.clips[0];
    c.rotations.push(drape::anim::Track {
        node: n,
        times: vec![c.start, c.end],
        values: vec![Quat::IDENTITY, Quat::from_rotation_x(0.5)],
        interpolation: drape::anim::Interpolation::Linear,
    });
    to_fbx(&r, &FbxWriteOptions::default()).unwrap()
}

#[test]
fn clips_without_skin_go_on_a_character_by_bone_name() {
    let ninja = drape::ninja::build().unwrap().rig;
    let clip = ninja.clips[1].name.clone();
    let donor = load(&clip_only(&ninja, &clip), "punch.fbx");
    assert!(donor.meshes.is_empty() && donor.clips.len() == 1);
    // On the glTF ninja and on the ninja read back from FBX.
    let targets = [
        ninja.clone(),
        load(
            &to_fbx(&ninja, &FbxWriteOptions::default()).unwrap(),
            "ninja.fbx",
        ),
    ];
    for (k, target) in targets.into_iter().enumerate() {
        let mut rig = target;
        let (added, warnings) = add_clips_from(&mut rig, &donor, "punch").unwrap();
        assert_eq!(added, vec!["punch".to_string()]);
        assert!(
            warnings.len() == 1 && warnings[0].contains("mixamorig:Ponytail"),
            "{warnings:?}"
        );
        let c = &ninja.clips[1];
        let h = height(&posed(&ninja, None, 0.0));
        for i in 0..=5 {
            let t = c.start + c.duration() * i as f32 / 5.0;
            let d = max_diff(
                &posed(&ninja, Some(&clip), t),
                &posed(&rig, Some("punch"), t),
            );
            assert!(d < 1e-4 * h, "target {k}, t = {t}: {d} m");
        }
    }
    // Names after any prefix: a donor with `mixamorig1:` names matches too.
    let mut renamed = donor.clone();
    for n in renamed.skeleton.names.iter_mut() {
        *n = n.replace("mixamorig:", "mixamorig1:");
    }
    let mut rig = ninja.clone();
    assert!(add_clips_from(&mut rig, &renamed, "kick").is_ok());
    assert_eq!(Skeleton::base_name("mixamorig1:Hips"), "Hips");
}

#[test]
fn cli_pose_info_and_clips_from() {
    let exe = env!("CARGO_BIN_EXE_drape");
    let dir = std::env::temp_dir().join(format!("drape_fbx_cli_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ninja = drape::ninja::build().unwrap().rig;
    let ch = dir.join("ninja.fbx");
    let punch = dir.join("punch.fbx");
    std::fs::write(&ch, to_fbx(&ninja, &FbxWriteOptions::default()).unwrap()).unwrap();
    std::fs::write(&punch, clip_only(&ninja, &ninja.clips[1].name)).unwrap();
    let run = |args: &[&str]| {
        let o = std::process::Command::new(exe).args(args).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
    };
    let info = run(&["info", ch.to_str().unwrap()]);
    assert!(info.contains(&ninja.clips[0].name), "{info}");
    let out = dir.join("posed.obj");
    run(&[
        "pose",
        ch.to_str().unwrap(),
        "--clips-from",
        punch.to_str().unwrap(),
        "--clip",
        "punch",
        "--time",
        "0.5",
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    let obj = std::fs::read_to_string(&out).unwrap();
    let v: Vec<Vec3> = obj
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let x: Vec<f32> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
            Vec3::new(x[0], x[1], x[2])
        })
        .collect();
    let want = posed(&ninja, Some(&ninja.clips[1].name), 0.5);
    assert!(max_diff(&v, &want) < 2e-4, "{}", max_diff(&v, &want));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scene_file_rig_and_clips_keys_take_fbx() {
    let dir = std::env::temp_dir().join(format!("drape_fbx_scene_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ninja = drape::ninja::build().unwrap().rig;
    std::fs::write(
        dir.join("ninja.fbx"),
        to_fbx(&ninja, &FbxWriteOptions::default()).unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.join("punch.fbx"),
        clip_only(&ninja, &ninja.clips[2].name),
    )
    .unwrap();
    let scene = dir.join("dressed.toml");
    std::fs::write(
        &scene,
        "rig = \"ninja.fbx\"\nclips = [\"punch.fbx\"]\nclip = \"punch\"\n",
    )
    .unwrap();
    let file = drape::scene::SceneFile::load(&scene).unwrap();
    let rig = file.load_rig(Some(&dir)).unwrap();
    assert!(rig.clip("punch").is_some());
    assert!(
        rig.warnings.iter().any(|w| w.contains("Ponytail")),
        "{:?}",
        rig.warnings
    );
    assert_eq!(rig.clips.len(), ninja.clips.len() + 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_meshes_on_the_same_bones_share_one_skin() {
    let mut f = Fbx::new(7400);
    let hips = f.model(
        "mixamorig:Hips",
        "LimbNode",
        0,
        vec![p3("Lcl Translation", [0.0, 100.0, 0.0])],
    );
    let head = f.model(
        "mixamorig:Head",
        "LimbNode",
        hips,
        vec![p3("Lcl Translation", [0.0, 60.0, 0.0])],
    );
    let tri: &[&[i32]] = &[&[0, 1, 2]];
    let pts = [[0.0, 100.0, 0.0], [10.0, 100.0, 0.0], [0.0, 160.0, 0.0]];
    let (_, g1) = f.mesh("Body", 0, &pts, tri);
    let (_, g2) = f.mesh("Visor", 0, &pts, tri);
    let bind = |y: f64| DMat4::from_translation(DVec3::new(0.0, y, 0.0));
    let s1 = f.skin(g1);
    f.cluster(
        s1,
        hips,
        Some((&[0, 1], &[1.0, 1.0])),
        DMat4::IDENTITY,
        bind(100.0),
    );
    f.cluster(s1, head, Some((&[2], &[1.0])), DMat4::IDENTITY, bind(160.0));
    let s2 = f.skin(g2);
    f.cluster(
        s2,
        head,
        Some((&[0, 1, 2], &[1.0, 1.0, 1.0])),
        DMat4::IDENTITY,
        bind(160.0),
    );
    let rig = load(&f.bytes(true), "two.fbx");
    assert_eq!(rig.skins.len(), 1);
    assert_eq!(rig.meshes[1].skin, Some(0));
    let head_node = rig.skeleton.find("Head").unwrap() as u32;
    let slot = rig.meshes[1].joints[0][0] as usize;
    assert_eq!(rig.skins[0].joints[slot], head_node);
    let p = posed(&rig, None, 0.0);
    assert!((p[5] - Vec3::new(0.0, 1.6, 0.0)).length() < 1e-6);
}

#[test]
fn z_up_files_in_metres_are_turned_to_y_up() {
    let mut f = Fbx::new(7400);
    f.global = vec![
        pi("UpAxis", 2),
        pi("UpAxisSign", 1),
        pi("FrontAxis", 1),
        pi("FrontAxisSign", -1),
        pi("CoordAxis", 0),
        pi("CoordAxisSign", 1),
        fbx_builder::pd("UnitScaleFactor", 100.0),
    ];
    f.mesh(
        "Post",
        0,
        &[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, -1.0, 2.0]],
        &[&[0, 1, 2]],
    );
    let rig = load(&f.bytes(false), "zup.fbx");
    let p = posed(&rig, None, 0.0);
    // File (x, y, z) with z up and -y to the front → (x, z, -y), already in metres.
    assert!(
        (p[2] - Vec3::new(0.0, 2.0, 1.0)).length() < 1e-6,
        "{}",
        p[2]
    );
}
