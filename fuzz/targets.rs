//! The bodies of the fuzz targets, shared by the AFL++ binaries (`fuzz/src/bin/*.rs`) and the
//! regression test that replays the committed corpus and every crash found
//! (`tests/fuzz_regressions.rs`). Each takes arbitrary bytes and must return: any panic, abort,
//! hang or runaway allocation is a bug. Only drape's public API is used.
#![allow(dead_code)]

use drape::anim::Pose;
use drape::asset::{load_rig_from_slice, LoadOptions};
use drape::cli::pose::write_posed_obj;
use drape::skin::SkinMethod;
use drape::Rig;

/// The targets by name, as `fuzz/run.sh TARGET` and the corpus folders name them.
pub const TARGETS: [(&str, fn(&[u8])); 4] = [
    ("gltf", gltf),
    ("fbx", fbx),
    ("scene", scene),
    ("pose", pose),
];

/// A memory budget well under AFL's limit: the loaders must refuse huge counts themselves
/// rather than try to allocate them.
fn opts() -> LoadOptions {
    LoadOptions {
        max_total_bytes: 64 << 20,
        ..LoadOptions::default()
    }
}

/// The invariants every loaded rig promises: the skinner, the cloth and the exporters index with
/// them (the same rules `drape rig`'s exporter checks before writing).
fn check_rig(rig: &Rig) {
    let nodes = rig.skeleton.len();
    assert_eq!(rig.skeleton.parents.len(), nodes, "skeleton arrays");
    assert_eq!(rig.skeleton.rest.len(), nodes, "skeleton arrays");
    for (i, p) in rig.skeleton.parents.iter().enumerate() {
        assert!(p.is_none_or(|p| (p as usize) < i), "parents come first");
    }
    for s in &rig.skins {
        assert_eq!(
            s.joints.len(),
            s.inverse_bind.len(),
            "one inverse bind per joint"
        );
        assert!(
            s.joints.iter().all(|&j| (j as usize) < nodes),
            "joint out of range"
        );
    }
    for m in &rig.meshes {
        let n = m.positions.len();
        assert!((m.node as usize) < nodes, "mesh node out of range");
        assert!(m.indices.len() % 3 == 0, "triangles");
        assert!(
            m.indices.iter().all(|&i| (i as usize) < n),
            "index out of range"
        );
        assert_eq!(m.normals.len(), n, "one normal per vertex");
        assert!(m.uvs.is_empty() || m.uvs.len() == n, "one uv per vertex");
        assert!(
            m.joints.is_empty() || m.joints.len() == n,
            "one joint set per vertex"
        );
        assert_eq!(
            m.joints.len(),
            m.weights.len(),
            "joints and weights pair up"
        );
        if let Some(s) = m.skin {
            let joints = rig.skins.get(s as usize).map_or(0, |s| s.joints.len());
            assert!(
                m.joints
                    .iter()
                    .chain(&m.joints1)
                    .flatten()
                    .all(|&j| (j as usize) < joints),
                "vertex joint outside its skin"
            );
        }
    }
}

/// glTF and GLB from memory, with no folder (external URIs are errors, so the fuzzer cannot
/// make the loader read files). FBX magic goes to the FBX loader, as on the command line.
pub fn gltf(data: &[u8]) {
    if let Ok(rig) = load_rig_from_slice(data, None, "fuzz.glb", &opts()) {
        check_rig(&rig);
    }
}

/// Binary FBX: drape's own record reader and scene builder.
pub fn fbx(data: &[u8]) {
    let opts = LoadOptions {
        decode_textures: false,
        ..opts()
    };
    if let Ok(rig) = drape::asset::fbx::load_fbx_from_slice(data, "fuzz.fbx", &opts) {
        check_rig(&rig);
    }
}

/// A scene file's text → its configuration (everything before the rig is loaded and the
/// simulation built).
pub fn scene(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = drape::scene::SceneFile::parse(text) {
        let _ = file.config();
    }
}

/// `drape pose` end to end, writing the OBJ to memory: byte 0 picks the method, byte 1 the clip
/// (0: the rest pose), bytes 2..6 the time (f32, little-endian); the rest is the character file
/// (glTF, GLB or FBX, found by content). CoR centres are computed without the disk cache.
pub fn pose(data: &[u8]) {
    if data.len() < 6 {
        return;
    }
    let method = [SkinMethod::Lbs, SkinMethod::Dqs, SkinMethod::Cor][data[0] as usize % 3];
    let clip = data[1];
    let time = f32::from_le_bytes([data[2], data[3], data[4], data[5]]);
    let opts = LoadOptions {
        decode_textures: false,
        ..opts()
    };
    let Ok(rig) = load_rig_from_slice(&data[6..], None, "fuzz.glb", &opts) else {
        return;
    };
    check_rig(&rig);
    // `drape pose` refuses a non-finite --time before posing.
    if !time.is_finite() {
        return;
    }
    let mut pose = Pose::rest(&rig.skeleton);
    if clip > 0 && !rig.clips.is_empty() {
        rig.clips[(clip as usize - 1) % rig.clips.len()].sample(time, &mut pose);
    }
    // CoR centres computed, not read from or written to the disk cache.
    let mut quiet = |_: usize, _: drape::skin::CorProgress| {};
    let cor = (method == SkinMethod::Cor).then_some((None, &mut quiet as _));
    let mut out = Vec::new();
    write_posed_obj(&rig, &pose, method, cor, "drape pose (fuzz)", &mut out)
        .expect("writing to memory");
}
