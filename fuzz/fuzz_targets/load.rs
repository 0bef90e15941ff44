//! Feeds arbitrary bytes to the glTF loader. Any panic, abort, hang or out-of-memory is a bug:
//! the loader must answer every input with `Ok` or an `AssetError`.
//!
//! Seed corpus: the Khronos sample rigs, e.g.
//!     mkdir -p corpus/load && cp ../../shared/rigs/khronos/*/*.glb corpus/load/
//!     cargo +nightly fuzz run load
#![no_main]

use drape::asset::{load_rig_from_slice, LoadOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // No folder: external URIs are errors, so the fuzzer cannot make the loader read files.
    // A small memory budget keeps libFuzzer's RSS limit meaningful: the loader must refuse
    // huge counts itself rather than try to allocate them.
    let opts = LoadOptions { max_total_bytes: 64 << 20, ..LoadOptions::default() };
    if let Ok(rig) = load_rig_from_slice(data, None, "fuzz.glb", &opts) {
        // Touch the result so the whole load is kept, and check the invariants the loader
        // promises.
        for m in &rig.meshes {
            assert!(m.indices.iter().all(|&i| (i as usize) < m.positions.len()));
            assert_eq!(m.normals.len(), m.positions.len());
        }
        for (i, p) in rig.skeleton.parents.iter().enumerate() {
            assert!(p.is_none_or(|p| (p as usize) < i));
        }
    }
});
