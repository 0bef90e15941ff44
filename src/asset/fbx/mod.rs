//! Binary FBX (Autodesk's interchange format, the one Mixamo downloads come in): reading into a
//! [`Rig`] and writing a rig back out.
//!
//! - [`binary`]: the record tree (own reader and writer; zlib arrays via `miniz_oxide`).
//! - [`scene`]: the object graph → skeleton, skins, meshes, materials, textures, clips.
//! - [`write`]: a rig (and its clips) → binary FBX laid out as Mixamo lays it out.
//! - [`clips_from`]: putting the clips of one file (a "without skin" download) on another rig.
//!
//! Why an own reader rather than the `fbxcel` crate: the container is a few hundred lines to read
//! (records, eight scalar and five array types), and owning it lets every length be checked
//! against the bytes present and every array against [`LoadOptions::max_total_bytes`] before
//! it is allocated, with errors phrased like the glTF loader's, without another dependency tree
//! (zlib comes from `miniz_oxide`, already built for PNG). The same types serve the writer,
//! which `fbxcel` does not offer. What `fbxcel` would add (the FBX 6 and ASCII dialects) drape
//! refuses anyway.

pub mod binary;
pub mod clips_from;
mod curve;
mod geometry;
mod records;
pub mod scene;
mod transform;
pub mod write;

use std::path::Path;

use super::{AssetError, LoadOptions};
use crate::rig::Rig;

pub use clips_from::{add_clips_from, load_clips_from};
pub use write::{to_fbx, write_fbx, FbxWriteOptions};

/// Is this the start of an FBX file, binary or ASCII?
pub fn looks_like_fbx(bytes: &[u8]) -> bool {
    binary::is_binary_fbx(bytes) || binary::is_ascii_fbx(bytes)
}

/// Loads binary FBX data. `label` names it in errors and warnings.
pub fn load_fbx_from_slice(
    bytes: &[u8],
    label: &str,
    opts: &LoadOptions,
) -> Result<Rig, AssetError> {
    let err = |problem: String| AssetError::Malformed {
        file: label.to_string(),
        problem,
    };
    if !binary::is_binary_fbx(bytes) {
        if binary::is_ascii_fbx(bytes) {
            return Err(err(
                "ASCII FBX is not supported: drape reads binary FBX 7.1 to 7.7 (7400, 7500, \
                 7700); save it as binary FBX (Blender: the default; Maya/FBX Converter: \
                 \"Binary\")"
                    .into(),
            ));
        }
        return Err(err("not a binary FBX file".into()));
    }
    let budget = opts.max_total_bytes.saturating_sub(bytes.len() as u64);
    let doc = binary::parse(bytes, budget).map_err(err)?;
    let mut rig = scene::build(&doc, label, opts).map_err(err)?;
    rig.source = label.to_string();
    Ok(rig)
}

/// Loads a binary FBX file.
pub fn load_fbx(path: &Path, opts: &LoadOptions) -> Result<Rig, AssetError> {
    let label = super::label_of(path);
    let bytes = std::fs::read(path).map_err(|e| AssetError::Io {
        file: label.clone(),
        what: "the file".into(),
        source: e,
    })?;
    let mut rig = load_fbx_from_slice(&bytes, &label, opts)?;
    rig.source = path.display().to_string();
    Ok(rig)
}
