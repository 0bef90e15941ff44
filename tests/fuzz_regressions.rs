//! What the AFL++ fuzzers (`fuzz/run.sh TARGET`, README "Fuzzing") found, kept as tests: every
//! file of the committed corpus (`fuzz/corpus/TARGET/`) and every crash input
//! (`tests/data/fuzz/TARGET/`) runs through its target's body (`fuzz/targets.rs`, the code the
//! fuzzers run) without a panic; each crash also has a test of the error it now gives.
//!
//! The seed corpus is written by `write_fuzz_seeds` (ignored: run by hand, see fuzz/run.sh).

#[path = "support/gltf_builder.rs"]
mod builder;
#[path = "support/fbx_builder.rs"]
mod fbx_builder;
#[path = "../fuzz/targets.rs"]
mod targets;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use drape::asset::fbx::{to_fbx, FbxWriteOptions};
use drape::asset::{load_rig_from_slice, LoadOptions};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Files of a folder, sorted (none if it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn every_corpus_file_and_crash_input_runs_without_a_panic() {
    // The fuzzers' own panic messages would flood the output; failures are listed below.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, target) in targets::TARGETS {
        let dirs = [
            root().join("fuzz/corpus").join(name),
            root().join("tests/data/fuzz").join(name),
        ];
        for path in dirs.iter().flat_map(|d| files(d)) {
            let bytes = std::fs::read(&path).unwrap();
            count += 1;
            if catch_unwind(AssertUnwindSafe(|| target(&bytes))).is_err() {
                failures.push(format!("{name}: {}", path.display()));
            }
        }
    }
    std::panic::set_hook(hook);
    assert!(count > 0, "no corpus found under fuzz/corpus");
    assert!(failures.is_empty(), "panicked on:\n{}", failures.join("\n"));
}

/// Loads one crash input and returns the error text (which must name the file).
#[track_caller]
fn load_err(target: &str, file: &str) -> String {
    let path = root().join("tests/data/fuzz").join(target).join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let bytes = if target == "pose" {
        &bytes[6..]
    } else {
        &bytes[..]
    };
    let opts = LoadOptions {
        max_total_bytes: 64 << 20,
        ..LoadOptions::default()
    };
    match catch_unwind(AssertUnwindSafe(|| {
        load_rig_from_slice(bytes, None, file, &opts)
    })) {
        Ok(Ok(_)) => panic!("{file}: loaded, an error was expected"),
        Ok(Err(e)) => {
            let m = e.to_string();
            assert!(
                m.starts_with(&format!("{file}: ")),
                "must name the file: {m}"
            );
            m
        }
        Err(_) => panic!("{file}: the loader panicked"),
    }
}

// ---------------------------------------------------------------------------------------------
// The seed corpus.

/// The small skinned quad of the malformed-file tests, loaded.
fn quad_rig() -> drape::Rig {
    let (b, rest) = builder::skinned_quad("mixamorig:");
    load_rig_from_slice(&b.glb(&rest), None, "quad.glb", &LoadOptions::default()).unwrap()
}

const SCENES: [&str; 4] = [
    "rig = \"ninja\"\nclip = \"stance\"\nskinning = \"dqs\"\nsubsteps = 8\n\
     [[garment]]\nkind = \"cape\"\nspacing = 0.05\n",
    "rig = \"hero.fbx\"\nclips = [\"Punch.fbx\", \"kick.fbx\"]\nskinning = \"cor\"\n\
     self_collision = false\nmodel = \"xpbd\"\nsettle = 0.5\nblend = 0.25\nfps = 30\n\
     root_motion = \"travel\"\n",
    "[[garment]]\nkind = \"hakama\"\nspacing = 0.02\nclearance = 0.01\nlength = 1.0\n\
     k_structural = 5000.0\nk_bend = 2.5\narea_density = 0.2\nthickness = 0.001\n\
     friction = 0.4\n[[garment]]\nkind = \"sash\"\n[[garment]]\nkind = \"headband\"\n",
    "[bones]\nHips = \"pelvis\"\nHead = \"Skeleton_neck_joint_1\"\nLeftArm = \"l_arm\"\n",
];

/// Writes the seed corpus into `fuzz/corpus/TARGET/seed-*` (small files: AFL is fastest on
/// them): the malformed-file tests' skinned quad as GLB and glTF, two Khronos samples, small
/// hand-built FBX files (quads and an n-gon, 7400 and 7700, plain and compressed; the quad rig
/// written by drape's FBX writer with and without its mesh), scene files using every key, and
/// the pose target's 6-byte header before GLB and FBX rigs.
#[test]
#[ignore = "writes the seed corpus; run by hand before a first fuzzing run"]
fn write_fuzz_seeds() {
    let out = root().join("fuzz/corpus");
    let put = |target: &str, name: &str, bytes: &[u8]| {
        let d = out.join(target);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("seed-{name}")), bytes).unwrap();
    };
    let (b, rest) = builder::skinned_quad("mixamorig:");
    let glb = b.glb(&rest);
    put("gltf", "quad.glb", &glb);
    put("gltf", "quad.gltf", &b.gltf(&rest));
    let khronos = root().join("../shared/rigs/khronos");
    for f in [
        "SimpleSkin/SimpleSkin.gltf",
        "SimpleSparseAccessor/SimpleSparseAccessor.gltf",
    ] {
        if let Ok(bytes) = std::fs::read(khronos.join(f)) {
            put("gltf", f.split('/').next_back().unwrap(), &bytes);
        }
    }

    let mut plate = fbx_builder::Fbx::new(7400);
    plate.mesh(
        "Plate",
        0,
        &[
            [0.0, 0.0, 0.0],
            [100.0, 0.0, 0.0],
            [100.0, 100.0, 0.0],
            [0.0, 100.0, 0.0],
            [200.0, 0.0, 0.0],
            [250.0, 50.0, 0.0],
            [200.0, 100.0, 0.0],
        ],
        &[&[0, 1, 2, 3], &[1, 4, 5, 6, 2]],
    );
    put("fbx", "plate7400.fbx", &plate.bytes(false));
    plate.version = 7700;
    put("fbx", "plate7700z.fbx", &plate.bytes(true));
    let quad = quad_rig();
    let quad_fbx = to_fbx(&quad, &FbxWriteOptions::default()).unwrap();
    put("fbx", "quad.fbx", &quad_fbx);
    let mut clip_only = quad.clone();
    clip_only.meshes.clear();
    clip_only.skins.clear();
    let clip_fbx = to_fbx(&clip_only, &FbxWriteOptions::default()).unwrap();
    put("fbx", "clip.fbx", &clip_fbx);

    for (i, s) in SCENES.iter().enumerate() {
        put("scene", &format!("{i}.toml"), s.as_bytes());
    }

    // Method, clip, time: DQS on the first clip at 0.4 s; CoR at rest; LBS past the end.
    let header = |m: u8, c: u8, t: f32| {
        let mut h = vec![m, c];
        h.extend(t.to_le_bytes());
        h
    };
    for (name, h, file) in [
        ("dqs-quad.glb", header(1, 1, 0.4), &glb),
        ("cor-quad.glb", header(2, 0, 0.0), &glb),
        ("lbs-quad.fbx", header(0, 1, 5.0), &quad_fbx),
    ] {
        put("pose", name, &[&h[..], file].concat());
    }
}

// ---------------------------------------------------------------------------------------------
// The crashes found, each with the error it now gives.

/// fbx, 2026-12-04: an animation curve's key times ±9e18 ticks apart overflowed i64 in the
/// interpolation (`attempt to subtract with overflow` in `fbx/curve.rs`). Key times beyond ±1e5 s
/// are now refused, naming the curve; interpolation is in f64.
#[test]
fn fbx_key_times_far_out_are_an_error_not_an_overflow() {
    let m = load_err("fbx", "key_time_overflow.fbx");
    assert!(m.contains("key time") && m.contains("outside"), "{m}");
}
