//! Writing a [`Rig`] as a binary glTF 2.0 file (`.glb`).
//!
//! The output is deterministic: the JSON is built from ordered maps (serde_json's default map is
//! a `BTreeMap`, so keys are sorted), floats are written by serde_json's shortest round-trip
//! formatter, binary data is little-endian, and nothing depends on time or hashing. Writing the
//! same rig twice gives the same bytes.
//!
//! Layout: one buffer (the GLB BIN chunk); every accessor has its own 4-byte-aligned buffer view;
//! node indices in the file equal the rig's node indices; each
//! [`SkinnedMesh`](crate::rig::SkinnedMesh) becomes one mesh with one primitive, instantiated by
//! its node (meshes sharing a node become primitives of one mesh); textures are embedded as PNG;
//! each [`Clip`](crate::anim::Clip) becomes one animation, tracks sharing identical key times
//! share one input accessor.
//!
//! - `builder`: the binary chunk, buffer views, accessors and the GLB container;
//! - `rig`: a rig's nodes, meshes, skins, materials, textures and clips ([`to_glb`]);
//! - `bake`: a baked simulation, body and garments ([`bake_to_glb`]).

mod bake;
mod builder;
mod rig;
#[cfg(test)]
mod tests;

pub use bake::{bake_to_glb, Bake, BakeLayout, BakedBody, BakedMaterial, MorphMesh};
pub use rig::{exportable, to_glb};

use crate::rig::Rig;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("rig is inconsistent: {0}")]
    Invalid(String),
    #[error("could not encode texture {name}: {msg}")]
    Texture { name: String, msg: String },
    #[error("could not write {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Writes `rig` to `path` as GLB.
pub fn write_glb(rig: &Rig, path: &std::path::Path) -> Result<(), ExportError> {
    let bytes = to_glb(rig)?;
    crate::output::write_atomic(path, &bytes).map_err(|source| ExportError::Io {
        path: path.display().to_string(),
        source,
    })
}
