//! One entry point for every character file drape opens: the kind is found by the content
//! (binary FBX starts with `Kaydara FBX Binary`, ASCII FBX with `; FBX`), never by the extension;
//! everything else goes to the glTF loader (which tells GLB from JSON by its magic).

use std::path::Path;

use super::{fbx, gltf, AssetError, LoadOptions};
use crate::rig::Rig;

/// Loads a `.glb`, `.gltf` or binary `.fbx` file with [`LoadOptions::default`].
pub fn load_rig(path: &Path) -> Result<Rig, AssetError> {
    if sniff(path).is_some_and(|head| fbx::looks_like_fbx(&head)) {
        return fbx::load_fbx(path, &LoadOptions::default());
    }
    gltf::load_rig(path)
}

/// Loads a `.glb`, `.gltf` or binary `.fbx` file; the format is found by the file's first bytes.
pub fn load_rig_with(path: &Path, opts: &LoadOptions) -> Result<Rig, AssetError> {
    if sniff(path).is_some_and(|head| fbx::looks_like_fbx(&head)) {
        return fbx::load_fbx(path, opts);
    }
    gltf::load_rig_with(path, opts)
}

/// Loads glTF, GLB or binary FBX data from memory (see [`gltf::load_rig_from_slice`] for
/// `base_dir`).
pub fn load_rig_from_slice(
    bytes: &[u8],
    base_dir: Option<&Path>,
    label: &str,
    opts: &LoadOptions,
) -> Result<Rig, AssetError> {
    if fbx::looks_like_fbx(bytes) {
        return fbx::load_fbx_from_slice(bytes, label, opts);
    }
    gltf::load_rig_from_slice(bytes, base_dir, label, opts)
}

/// The first 4 KiB of a file (`None` if it cannot be read: the loader then reports why).
fn sniff(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = vec![0u8; 4096];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(_) => return None,
        }
    }
    head.truncate(n);
    Some(head)
}
