//! Skinning against Blender: ../shared/rigs/reference/<Model>_<lbs|dqs>.json hold world-space vertex
//! positions at two times of one clip as Blender 3.4.1's armature modifier computes them (plain LBS,
//! and "Preserve Volume" DQS), vertices in the order `drape pose` writes them.

use std::path::PathBuf;

use drape::anim::Pose;
use drape::math::{Mat4, Vec3};
use drape::skin::SkinMethod;

fn shared(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/rigs")).join(rel)
}

struct Reference {
    file: String,
    clip_index: usize,
    times: Vec<f32>,
    /// positions[time][vertex]
    positions: Vec<Vec<Vec3>>,
}

fn read_reference(name: &str) -> Reference {
    let path = shared(&format!("reference/{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text).expect("reference JSON");
    let positions = v["positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|frame| {
            frame
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    let a: Vec<f32> = p
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_f64().unwrap() as f32)
                        .collect();
                    Vec3::new(a[0], a[1], a[2])
                })
                .collect()
        })
        .collect();
    Reference {
        file: v["file"].as_str().unwrap().to_string(),
        clip_index: v["clip_index"].as_u64().unwrap() as usize,
        times: v["times"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_f64().unwrap() as f32)
            .collect(),
        positions,
    }
}

/// Poses `model` at each reference time with `method` and compares every vertex.
/// Returns the worst error relative to the model's bounding-box diagonal.
fn compare(model: &str, method: SkinMethod) -> f32 {
    let tag = match method {
        SkinMethod::Lbs => "lbs",
        _ => "dqs",
    };
    let reference = read_reference(&format!("{model}_{tag}"));
    let rig = drape::asset::load_rig(&shared(&format!("khronos/{}", reference.file)))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut skinner = drape::skin::Skinner::new(&rig);
    let clip = &rig.clips[reference.clip_index];
    let mut pose = Pose::rest(&rig.skeleton);
    let mut world: Vec<Mat4> = Vec::new();
    let mut worst = 0.0f32;
    for (ti, &t) in reference.times.iter().enumerate() {
        pose.local.copy_from_slice(&rig.skeleton.rest);
        clip.sample(t, &mut pose);
        pose.world_from_node(&rig.skeleton, &mut world);
        skinner.update(&rig, &world, method);
        let ours: Vec<Vec3> = (0..rig.meshes.len())
            .filter(|&m| rig.meshes[m].skin.is_some())
            .flat_map(|m| skinner.positions(m).iter().copied())
            .collect();
        let theirs = &reference.positions[ti];
        assert_eq!(ours.len(), theirs.len(), "{model}: vertex count");
        let (lo, hi) = theirs.iter().fold(
            (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
            |(a, b), p| (a.min(*p), b.max(*p)),
        );
        let size = (hi - lo).length();
        for (k, (a, b)) in ours.iter().zip(theirs).enumerate() {
            let e = (*a - *b).length() / size;
            assert!(e < 2e-4, "{model} {method} t={t}: vertex {k} is {a} but Blender has {b} ({e:.2e} of the model size)");
            worst = worst.max(e);
        }
    }
    println!("{model} {method}: worst vertex error {worst:.2e} of the model size");
    worst
}

#[test]
fn lbs_matches_blender() {
    for model in [
        "SimpleSkin",
        "RiggedSimple",
        "RiggedFigure",
        "CesiumMan",
        "Fox",
    ] {
        compare(model, SkinMethod::Lbs);
    }
}

#[test]
fn dqs_matches_blender_preserve_volume() {
    for model in [
        "SimpleSkin",
        "RiggedSimple",
        "RiggedFigure",
        "CesiumMan",
        "Fox",
    ] {
        compare(model, SkinMethod::Dqs);
    }
}

/// `drape pose` end to end: the OBJ's vertex k is the file's vertex k, posed as Blender poses it.
#[test]
fn drape_pose_writes_blender_matching_obj() {
    let dir = std::env::temp_dir().join(format!("drape-pose-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (model, method) in [("CesiumMan", "lbs"), ("Fox", "dqs")] {
        let reference = read_reference(&format!("{model}_{method}"));
        let out = dir.join(format!("{model}.obj"));
        let _ = std::fs::remove_file(&out);
        let t = reference.times[1];
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_drape"))
            .arg("pose")
            .arg(shared(&format!("khronos/{}", reference.file)))
            .args([
                "--clip",
                &reference.clip_index.to_string(),
                "--time",
                &t.to_string(),
            ])
            .args(["--method", method, "--out"])
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        let text = std::fs::read_to_string(&out).unwrap();
        let ours: Vec<Vec3> = text
            .lines()
            .filter_map(|l| l.strip_prefix("v "))
            .map(|l| {
                let a: Vec<f32> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
                Vec3::new(a[0], a[1], a[2])
            })
            .collect();
        let theirs = &reference.positions[1];
        assert_eq!(ours.len(), theirs.len(), "{model}");
        for (k, (a, b)) in ours.iter().zip(theirs).enumerate() {
            assert!((*a - *b).length() < 1e-3, "{model} vertex {k}: {a} vs {b}");
        }
        // A second run must not overwrite the file without --force.
        let again = std::process::Command::new(env!("CARGO_BIN_EXE_drape"))
            .arg("pose")
            .arg(shared(&format!("khronos/{}", reference.file)))
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(!again.status.success());
        assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
