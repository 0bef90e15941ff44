//! glTF 2.0 → [`Rig`]. The files of this module are the only ones in drape that import the
//! `gltf` crate, and they only use its JSON layer (`gltf::json`): buffer data is located here and
//! read by [`super::accessor`], with every index, count and size checked before use. Nothing here
//! may panic on file content.
//!
//! - `document`: loading context, warnings, buffers, buffer views and accessors;
//! - `skin`: nodes (the skeleton) and skins;
//! - `material`: materials and their base-colour textures;
//! - `mesh`: mesh primitives with their skin influences;
//! - `animation`: animation clips.
//!
//! References: the glTF 2.0 specification (Khronos, 2021), cited by section.

mod animation;
mod document;
mod material;
mod mesh;
mod skin;

use std::path::Path;

use ::gltf::json;

use self::document::{Ctx, Warnings};
use super::{glb, label_of, AssetError, LoadOptions};
use crate::rig::Rig;

/// Loads a `.gltf` or `.glb` file with [`LoadOptions::default`].
pub fn load_rig(path: &Path) -> Result<Rig, AssetError> {
    load_rig_with(path, &LoadOptions::default())
}

/// Loads a `.gltf` or `.glb` file. External buffers and images are looked up next to it.
pub fn load_rig_with(path: &Path, opts: &LoadOptions) -> Result<Rig, AssetError> {
    let label = label_of(path);
    let bytes = document::read_file_limited(path, opts.max_total_bytes, &label, "the file")?;
    let base = path.parent().map(|p| {
        if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        }
    });
    // The file's bytes stay in memory while loading (the GLB chunks are borrowed from them).
    let mut rig = load_impl(&bytes, base, &label, opts, bytes.len() as u64)?;
    rig.source = path.display().to_string();
    Ok(rig)
}

/// Loads glTF or GLB data from memory. `base_dir` is where relative URIs are resolved (`None`:
/// only embedded data is allowed); `label` names the data in errors and warnings.
pub fn load_rig_from_slice(
    bytes: &[u8],
    base_dir: Option<&Path>,
    label: &str,
    opts: &LoadOptions,
) -> Result<Rig, AssetError> {
    load_impl(bytes, base_dir, label, opts, 0)
}

/// `already_used`: bytes of the budget taken before (the file read by [`load_rig_with`]).
fn load_impl(
    bytes: &[u8],
    base_dir: Option<&Path>,
    label: &str,
    opts: &LoadOptions,
    already_used: u64,
) -> Result<Rig, AssetError> {
    let mut cx = Ctx {
        label: label.to_string(),
        opts,
        used: already_used,
        base_dir,
        warn: Warnings::default(),
    };
    if bytes.is_empty() {
        return Err(cx.err("the file is empty"));
    }
    let (json_bytes, bin) = if glb::looks_like_glb(bytes) {
        let g = glb::parse(bytes).map_err(|p| cx.err(p))?;
        (g.json, g.bin)
    } else {
        let text = bytes
            .strip_prefix(b"\xEF\xBB\xBF".as_slice())
            .unwrap_or(bytes);
        // JSON text starts with '{' (after white space); anything else is a damaged GLB or not
        // glTF at all, and saying so beats a JSON parser's "expected value at line 1".
        let first = text.iter().find(|b| !b.is_ascii_whitespace());
        let named_glb = label.to_ascii_lowercase().ends_with(".glb");
        if !text.is_empty() && (first != Some(&b'{') || named_glb) {
            let head: Vec<u8> = bytes.iter().take(4).copied().collect();
            return Err(cx.err(format!(
                "neither a GLB file (magic is {head:02x?}, expected \"glTF\") nor glTF JSON text"
            )));
        }
        (text, None)
    };
    let root: json::Root = json::deserialize::from_slice(json_bytes)
        .map_err(|e| cx.err(format!("invalid glTF JSON: {e}")))?;
    let mut rig = build(&mut cx, &root, bin)?;
    rig.source = label.to_string();
    rig.warnings = cx.warn.finish();
    Ok(rig)
}

fn build(cx: &mut Ctx, root: &json::Root, bin: Option<&[u8]>) -> Result<Rig, AssetError> {
    document::check_version_and_extensions(cx, root)?;
    let buffers = document::load_buffers(cx, root, bin)?;
    let data = document::resolve_views(cx, root, &buffers)?;

    let (skeleton, node_of) = skin::build_skeleton(cx, root)?;
    let skins = skin::build_skins(cx, root, &data, &node_of)?;
    let (materials, textures) = material::build_materials(cx, root, &data)?;
    let meshes = mesh::build_meshes(cx, root, &data, &node_of, &skins, materials.len())?;
    let clips = animation::build_clips(cx, root, &data, &node_of)?;

    Ok(Rig {
        source: String::new(),
        skeleton,
        skins,
        meshes,
        materials,
        textures,
        clips,
        warnings: Vec::new(),
    })
}
