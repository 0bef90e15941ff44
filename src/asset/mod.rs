//! Reading and writing assets: glTF in, glTF and OBJ out.
//!
//! [`load_rig`] reads a glTF 2.0 file (`.glb`, or `.gltf` with embedded or external buffers and
//! images) into a [`Rig`](crate::rig::Rig). The JSON is parsed with the `gltf` crate (in `gltf/`, the only files that
//! import it); every byte of buffer data is read by drape's own bounds-checked accessor reader
//! ([`accessor`]), so that a damaged or hostile file gives an [`AssetError`] naming the file and the
//! problem instead of a panic or an out-of-memory abort.

pub mod accessor;
pub mod export;
pub mod fbx;
pub mod geometry;
pub mod glb;
mod gltf;
mod load;
pub mod obj;
pub mod uri;

use std::path::Path;

pub use self::load::{load_rig, load_rig_from_slice, load_rig_with};

/// Knobs for [`load_rig_with`]. `LoadOptions::default()` is what [`load_rig`] uses.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadOptions {
    /// Follow buffer and image URIs that leave the file's folder (absolute paths, `..`,
    /// percent-encoded variants, symlinks pointing out). Default `false`: such URIs are refused,
    /// so that opening a downloaded file cannot make drape read arbitrary files.
    pub allow_outside_uris: bool,
    /// Upper bound on the bytes the loader may hold for one file: buffers read, decoded vertex,
    /// index and key data, decoded textures. Unit: bytes; range 1 ..= u64::MAX;
    /// default 2 GiB. Every count in the file is checked against this *before* allocating, so a
    /// tiny file that claims billions of vertices is an error, not an out-of-memory abort.
    pub max_total_bytes: u64,
    /// Decode base-colour textures (PNG, JPEG) into RGBA8. Default `true`; `false` skips the
    /// decoding (the materials then have no texture), which is what a tool that only needs
    /// geometry and animation wants.
    pub decode_textures: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            allow_outside_uris: false,
            max_total_bytes: 2 << 30,
            decode_textures: true,
        }
    }
}

/// Why a file could not be loaded. Every variant names the file (`file`, usually its file name)
/// and says what is wrong in words a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    /// The file (or a buffer/image it refers to) could not be read.
    #[error("{file}: cannot read {what}: {source}")]
    Io {
        file: String,
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid glTF, or its data contradicts itself (sizes, counts, indices).
    #[error("{file}: {problem}")]
    Malformed { file: String, problem: String },
    /// The file requires an extension drape does not implement (Draco, meshopt, …).
    #[error("{file}: requires the glTF extension {extension}, which drape does not support{hint}")]
    UnsupportedExtension {
        file: String,
        extension: String,
        /// Extra advice (for example how to re-export without compression), or "".
        hint: String,
    },
    /// A buffer or image URI that points outside the file's folder, refused by
    /// [`LoadOptions::allow_outside_uris`].
    #[error("{file}: refusing URI {uri:?} of {what}: {reason} (LoadOptions::allow_outside_uris)")]
    UriRefused {
        file: String,
        uri: String,
        what: String,
        reason: String,
    },
    /// Loading would need more memory than [`LoadOptions::max_total_bytes`] allows.
    #[error("{file}: {what} needs {needed} bytes, over the limit of {limit} bytes (LoadOptions::max_total_bytes)")]
    TooLarge {
        file: String,
        what: String,
        needed: u64,
        limit: u64,
    },
}

impl AssetError {
    /// The file the error is about, as named in the message.
    pub fn file(&self) -> &str {
        match self {
            AssetError::Io { file, .. }
            | AssetError::Malformed { file, .. }
            | AssetError::UnsupportedExtension { file, .. }
            | AssetError::UriRefused { file, .. }
            | AssetError::TooLarge { file, .. } => file,
        }
    }
}

/// The label used in error messages for a path: its file name, or the whole path if it has none.
pub(crate) fn label_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Convenience: is this a glTF file name?
pub fn is_gltf_path(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase()),
        Some(ref e) if e == "gltf" || e == "glb"
    )
}
