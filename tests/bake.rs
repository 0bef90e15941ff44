//! `drape bake`: the file it writes must open in the tools users view it with, and show what
//! drape simulated. The Khronos validator must report no errors and no warnings; three.js
//! (GLTFLoader + AnimationMixer, under node: tests/support/three-check.mjs) must load it, and
//! the vertex positions three.js computes at baked frames (skinning the body with the baked
//! bone keys, blending the garments' morph targets) must equal drape's own scene there within
//! 0.1 mm. Without node/three.js/the validator those checks say SKIPPED (fail with
//! DRAPE_REQUIRE_ALL=1, as CI sets).

#[path = "support/tools.rs"]
mod tools;

use std::path::PathBuf;
use std::sync::OnceLock;

use drape::cli::bake::{bake, BakeOptions, Baked};
use drape::garments::{GarmentKind, GarmentSpec};
use drape::math::Vec3;
use drape::scene::{load_rig_named, Scene, SceneConfig};
use drape::skin::SkinMethod;
use tools::{three_check, tool_missing, validate_gltf};

/// 0.1 mm: three.js must put every vertex where drape did (float rounding aside).
const TOLERANCE: f32 = 1e-4;

/// One bake and drape's positions at each baked frame.
struct Case {
    baked: Baked,
    /// `body[k][m]`: positions of rig mesh `m` at baked frame `k`.
    body: Vec<Vec<Vec<Vec3>>>,
    /// `garments[k][g]`.
    garments: Vec<Vec<Vec<Vec3>>>,
    /// Normals, laid out like `body` and `garments`: the skinner's and the renderer's.
    body_normals: Vec<Vec<Vec<Vec3>>>,
    garment_normals: Vec<Vec<Vec<Vec3>>>,
    file: PathBuf,
}

/// The ninja's roundhouse kick through the chamber and the extension (0.7 s), every garment at
/// 2× the default spacing and a short start-up, to keep the test quick.
fn run_case(method: SkinMethod) -> Case {
    let rig = load_rig_named("ninja", None).expect("the built-in ninja");
    run_rig(rig, Some("roundhouse_kick"), method, 0.7)
}

fn run_rig(rig: drape::Rig, clip: Option<&str>, method: SkinMethod, seconds: f32) -> Case {
    let config = SceneConfig {
        clip: clip.map(String::from),
        method,
        garments: GarmentKind::ALL
            .iter()
            .map(|&k| GarmentSpec::coarse(k, 2.0))
            .collect(),
        settle: 0.2,
        blend: 0.2,
        ..SceneConfig::default()
    };
    let mut scene = Scene::new(rig, config).expect("scene");
    let (mut body, mut garments) = (Vec::new(), Vec::new());
    let (mut body_normals, mut garment_normals) = (Vec::new(), Vec::new());
    let opts = BakeOptions {
        seconds: Some(seconds),
        every: 2,
        normals: true,
    };
    let baked = bake(&mut scene, opts, &mut |_, _| {}, &mut |k, s| {
        assert_eq!(k, body.len());
        body.push(
            (0..s.rig.meshes.len())
                .map(|m| s.body_positions(m).to_vec())
                .collect(),
        );
        body_normals.push(
            (0..s.rig.meshes.len())
                .map(|m| s.body_normals(m).to_vec())
                .collect(),
        );
        let frames: Vec<_> = (0..s.garments.len()).map(|g| s.garment_frame(g)).collect();
        garment_normals.push(frames.iter().map(|f| f.normals.clone()).collect());
        garments.push(frames.into_iter().map(|f| f.positions).collect());
    })
    .expect("bake");
    // In cargo's scratch folder for integration tests, replaced by the next run (not piling up
    // in /tmp); kept after the run for a look in a viewer.
    let file = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "bake-test-{}-{method:?}.glb",
        scene.rig.skeleton.names[0].replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    ));
    std::fs::write(&file, &baked.bytes).expect("write the bake");
    Case {
        baked,
        body,
        garments,
        body_normals,
        garment_normals,
        file,
    }
}

fn lbs_case() -> &'static Case {
    static CASE: OnceLock<Case> = OnceLock::new();
    CASE.get_or_init(|| run_case(SkinMethod::Lbs))
}

fn dqs_case() -> &'static Case {
    static CASE: OnceLock<Case> = OnceLock::new();
    CASE.get_or_init(|| run_case(SkinMethod::Dqs))
}

fn gltf_json(bytes: &[u8]) -> serde_json::Value {
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    assert_eq!(&bytes[16..20], b"JSON");
    serde_json::from_slice(&bytes[20..20 + len]).expect("the JSON chunk parses")
}

#[test]
fn lbs_body_is_the_skinned_rig_and_garments_are_morph_targets() {
    let case = lbs_case();
    let b = &case.baked;
    assert!(b.skinned_body);
    let doc = gltf_json(&b.bytes);
    let n = b.times.len();
    assert!(n >= 20, "{n} frames");
    // The body: skinned, no morph targets.
    assert_eq!(doc["skins"].as_array().map(Vec::len), Some(1));
    for &(mesh, prim) in &b.layout.body {
        let p = &doc["meshes"][mesh]["primitives"][prim];
        assert!(
            p["attributes"]["JOINTS_0"].is_number() && p["attributes"]["WEIGHTS_0"].is_number()
        );
        assert!(p["targets"].is_null(), "body mesh {mesh} has morph targets");
    }
    // Each garment: normals (smooth shading), one target per frame after the first, each
    // with position and normal deltas.
    assert_eq!(b.layout.garments.len(), GarmentKind::ALL.len());
    for &(mesh, prim) in &b.layout.garments {
        let p = &doc["meshes"][mesh]["primitives"][prim];
        assert!(
            p["attributes"]["NORMAL"].is_number(),
            "garment without normals"
        );
        let targets = p["targets"].as_array().unwrap();
        assert_eq!(targets.len(), n - 1);
        assert!(targets
            .iter()
            .all(|t| t["POSITION"].is_number() && t["NORMAL"].is_number()));
    }
    // One animation over the baked times plus the hold key.
    let anims = doc["animations"].as_array().unwrap();
    assert_eq!(anims.len(), 1);
    let input = anims[0]["samplers"][0]["input"].as_u64().unwrap() as usize;
    let acc = &doc["accessors"][input];
    assert_eq!(acc["count"].as_u64(), Some(n as u64 + 1));
    let hold = acc["max"][0].as_f64().unwrap() as f32 - b.times[n - 1];
    assert!(
        hold > 0.0 && (hold - (b.times[1] - b.times[0])).abs() < 1e-5,
        "hold {hold}"
    );
    // Compact: the body costs its mesh once plus bone keys, not a mesh copy per frame.
    let body_vertices: usize = case.body[0].iter().map(Vec::len).sum();
    let particles: usize = case.garments[0].iter().map(Vec::len).sum();
    let morph_bytes = (body_vertices + particles) * 12 * n;
    println!(
        "{} bytes for {n} frames; the body as morph targets too would take over {morph_bytes}",
        b.bytes.len()
    );
    assert!(b.bytes.len() < particles * 12 * n + body_vertices * 80 + 4_000_000);
}

#[test]
fn bake_passes_the_khronos_validator() {
    for case in [lbs_case(), dqs_case()] {
        match validate_gltf(&case.file) {
            None => {
                tool_missing("the Khronos glTF validator (npm gltf-validator + node)");
                return;
            }
            Some(Ok(report)) => println!("{report}"),
            Some(Err(report)) => {
                panic!("the validator rejects {}:\n{report}", case.file.display())
            }
        }
    }
}

#[test]
fn three_js_loads_the_bake() {
    let case = lbs_case();
    let report = match three_check(&case.file, &[]) {
        None => {
            tool_missing("three.js (npm three@0.187.0 + node, DRAPE_THREE_DIR)");
            return;
        }
        Some(r) => r.unwrap_or_else(|e| panic!("three.js cannot load the bake: {e}")),
    };
    println!("three.js r{}", report["revision"]);
    let anims = report["animations"].as_array().unwrap();
    assert_eq!(anims.len(), 1, "{report:#}");
    let n = case.baked.times.len();
    let duration = anims[0]["duration"].as_f64().unwrap() as f32;
    let expected = case.baked.times[n - 1] * n as f32 / (n - 1) as f32;
    assert!(
        (duration - expected).abs() < 1e-4,
        "duration {duration}, expected {expected}"
    );
    let meshes = report["meshes"].as_array().unwrap();
    let skinned = meshes.iter().filter(|m| m["skinned"] == true).count();
    assert_eq!(skinned, case.baked.layout.body.len());
    let morphed = meshes
        .iter()
        .filter(|m| m["morphTargets"].as_u64() == Some(n as u64 - 1))
        .count();
    assert_eq!(morphed, case.baked.layout.garments.len());
}

/// The largest distance between drape's vectors and three.js's (flat x, y, z JSON numbers),
/// and the vertex it is at.
fn farthest(ours: &[Vec3], theirs: &[serde_json::Value]) -> (f32, usize) {
    let mut worst = (0.0f32, 0);
    for (v, p) in ours.iter().enumerate() {
        let q = Vec3::new(
            theirs[3 * v].as_f64().unwrap() as f32,
            theirs[3 * v + 1].as_f64().unwrap() as f32,
            theirs[3 * v + 2].as_f64().unwrap() as f32,
        );
        let d = p.distance(q);
        if d > worst.0 {
            worst = (d, v);
        }
    }
    worst
}

/// three.js's positions at a few baked frames against drape's, mesh by mesh.
fn three_matches_drape(case: &Case) {
    let n = case.baked.times.len();
    let frames = [0, 1, n / 2, n - 1];
    let times: Vec<f32> = frames.iter().map(|&k| case.baked.times[k]).collect();
    let report = match three_check(&case.file, &times) {
        None => {
            tool_missing("three.js (npm three@0.187.0 + node, DRAPE_THREE_DIR)");
            return;
        }
        Some(r) => r.unwrap_or_else(|e| panic!("three.js cannot load the bake: {e}")),
    };
    let meshes = report["meshes"].as_array().unwrap();
    let layout = &case.baked.layout;
    let mut checked = 0;
    for m in meshes {
        let key = (
            m["mesh"].as_u64().unwrap() as usize,
            m["primitive"].as_u64().unwrap() as usize,
        );
        type Frames<'a> = Vec<&'a Vec<Vec3>>;
        let (what, drape_frames, drape_normals): (String, Frames, Frames) =
            if let Some(i) = layout.body.iter().position(|&l| l == key) {
                (
                    format!("body mesh {i}"),
                    frames.iter().map(|&k| &case.body[k][i]).collect(),
                    frames.iter().map(|&k| &case.body_normals[k][i]).collect(),
                )
            } else if let Some(g) = layout.garments.iter().position(|&l| l == key) {
                (
                    format!("garment {g}"),
                    frames.iter().map(|&k| &case.garments[k][g]).collect(),
                    frames
                        .iter()
                        .map(|&k| &case.garment_normals[k][g])
                        .collect(),
                )
            } else {
                panic!("three.js shows a mesh drape did not bake: {}", m["name"]);
            };
        for (j, ours) in drape_frames.iter().enumerate() {
            let theirs = m["positions"][j].as_array().unwrap();
            assert_eq!(theirs.len(), ours.len() * 3, "{what}: vertex count");
            let worst = farthest(ours, theirs);
            println!(
                "{what} at {:.3} s: worst {:.2e} m (vertex {})",
                times[j], worst.0, worst.1
            );
            assert!(
                worst.0 <= TOLERANCE,
                "{what} at {} s: three.js puts vertex {} {:.3} mm from drape",
                times[j],
                worst.1,
                worst.0 * 1e3
            );
        }
        // Morph-target meshes (every garment; the body when it is baked as morph targets)
        // carry their normals: three.js must shade with drape's, not flat ones.
        let morphed = !(m["skinned"] == true);
        if morphed {
            assert!(!m["normals"].is_null(), "{what}: no normals");
        }
        if let Some(nrm) = m["normals"].as_array() {
            for (j, ours) in drape_normals.iter().enumerate() {
                let worst = farthest(ours, nrm[j].as_array().unwrap());
                println!(
                    "{what} normals at {:.3} s: worst {:.2e} (vertex {})",
                    times[j], worst.0, worst.1
                );
                // 1e-3 of a unit vector: 0.06°, float rounding of the deltas aside.
                assert!(
                    worst.0 <= 1e-3,
                    "{what} at {} s: three.js turns vertex {}'s normal {:.4} away from drape's",
                    times[j],
                    worst.1,
                    worst.0
                );
            }
        }
        checked += 1;
    }
    assert_eq!(checked, layout.body.len() + layout.garments.len());
}

#[test]
fn three_js_poses_the_skinned_body_and_garments_as_drape() {
    three_matches_drape(lbs_case());
}

#[test]
fn three_js_poses_a_dqs_body_baked_as_morph_targets_as_drape() {
    let case = dqs_case();
    assert!(!case.baked.skinned_body);
    three_matches_drape(case);
}

/// CesiumMan (Khronos sample) has its skinned mesh below a Z-up node, whose transform glTF
/// ignores for skinned meshes and three.js does not: the bake must still look as in drape.
#[test]
fn three_js_poses_cesium_man_as_drape() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/rigs/khronos/CesiumMan/CesiumMan.glb");
    if !path.is_file() {
        tool_missing("../shared/rigs (the Khronos sample rigs)");
        return;
    }
    let rig = drape::asset::load_rig(&path).expect("CesiumMan loads");
    let case = run_rig(rig, None, SkinMethod::Lbs, 0.5);
    assert!(case.baked.skinned_body);
    match validate_gltf(&case.file) {
        None => {
            tool_missing("the Khronos glTF validator (npm gltf-validator + node)");
        }
        Some(Ok(report)) => println!("{report}"),
        Some(Err(report)) => panic!("the validator rejects {}:\n{report}", case.file.display()),
    }
    three_matches_drape(&case);
}

#[test]
fn bake_refuses_to_overwrite_without_force() {
    let out = std::env::temp_dir().join(format!("drape-bake-exists-{}.glb", std::process::id()));
    std::fs::write(&out, b"keep me").unwrap();
    let args = drape::cli::bake::Args {
        scene: None,
        out: out.clone(),
        rig: "ninja".into(),
        clip: None,
        clips_from: Vec::new(),
        seconds: Some(0.1),
        every: 1,
        force: false,
        no_normals: false,
        model: None,
        wear_unfit: false,
        hide: Vec::new(),
    };
    let err = drape::cli::bake::run(args).expect_err("must refuse");
    assert!(err.to_string().contains("--force"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    let _ = std::fs::remove_file(out);
}

#[test]
fn bad_seconds_or_every_are_refused_not_a_panic() {
    let rig = load_rig_named("ninja", None).unwrap();
    let mut scene = Scene::new(
        rig,
        SceneConfig {
            garments: vec![GarmentSpec::coarse(GarmentKind::Headband, 2.0)],
            ..SceneConfig::default()
        },
    )
    .unwrap();
    for s in [f32::NAN, -1.0, 0.0] {
        let opts = BakeOptions {
            seconds: Some(s),
            every: 1,
            normals: true,
        };
        assert!(bake(&mut scene, opts, &mut |_, _| {}, &mut |_, _| {}).is_err());
    }
    let opts = BakeOptions {
        seconds: Some(0.1),
        every: 0,
        normals: true,
    };
    let err = bake(&mut scene, opts, &mut |_, _| {}, &mut |_, _| {}).err();
    assert!(err.is_some_and(|e| e.to_string().contains("--every")));
}

/// `--no-normals`: the garments' morph meshes carry positions only (a smaller file).
#[test]
fn bake_without_normals_writes_positions_only() {
    let rig = load_rig_named("ninja", None).unwrap();
    let mut scene = Scene::new(
        rig,
        SceneConfig {
            clip: Some("stance".into()),
            garments: vec![GarmentSpec::coarse(GarmentKind::Headband, 2.0)],
            settle: 0.1,
            blend: 0.1,
            ..SceneConfig::default()
        },
    )
    .unwrap();
    let opts = BakeOptions {
        seconds: Some(0.1),
        every: 2,
        normals: false,
    };
    let baked = bake(&mut scene, opts, &mut |_, _| {}, &mut |_, _| {}).unwrap();
    let doc = gltf_json(&baked.bytes);
    let (mesh, prim) = baked.layout.garments[0];
    let p = &doc["meshes"][mesh]["primitives"][prim];
    assert!(p["attributes"]["NORMAL"].is_null());
    let targets = p["targets"].as_array().unwrap();
    assert!(!targets.is_empty());
    assert!(targets.iter().all(|t| t["NORMAL"].is_null()));
}
