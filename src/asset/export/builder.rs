//! The GLB writer under both exports: [`Builder`] accumulates the binary chunk, its buffer views
//! and accessors; [`root_json`] assembles the glTF root object and [`glb_bytes`] the GLB
//! container (glTF 2.0 §4.4).

use serde_json::{json, Value};

use super::ExportError;
use crate::math::{Quat, Vec3};

// glTF component types and targets.
pub(super) const FLOAT: u32 = 5126;
pub(super) const UNSIGNED_BYTE: u32 = 5121;
pub(super) const UNSIGNED_SHORT: u32 = 5123;
pub(super) const UNSIGNED_INT: u32 = 5125;
pub(super) const ARRAY_BUFFER: u32 = 34962;
pub(super) const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// Accumulates the binary chunk, buffer views and accessors.
pub(super) struct Builder {
    pub(super) bin: Vec<u8>,
    pub(super) views: Vec<Value>,
    pub(super) accessors: Vec<Value>,
}

impl Builder {
    pub(super) fn view(
        &mut self,
        bytes: &[u8],
        target: Option<u32>,
        stride: Option<usize>,
    ) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut v = json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()});
        if let Some(t) = target {
            v["target"] = json!(t);
        }
        if let Some(s) = stride {
            v["byteStride"] = json!(s);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(v);
        self.views.len() - 1
    }

    /// A float accessor of `n` components per element; `minmax` adds the bounds the spec
    /// requires for POSITION and animation inputs.
    pub(super) fn floats(
        &mut self,
        data: &[f32],
        n: usize,
        ty: &str,
        target: Option<u32>,
        minmax: bool,
    ) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.view(&bytes, target, None);
        let count = data.len() / n;
        let mut a = json!({"bufferView": view, "componentType": FLOAT, "count": count, "type": ty});
        if minmax && count > 0 {
            let mut lo = vec![f32::INFINITY; n];
            let mut hi = vec![f32::NEG_INFINITY; n];
            for e in data.chunks_exact(n) {
                for k in 0..n {
                    lo[k] = lo[k].min(e[k]);
                    hi[k] = hi[k].max(e[k]);
                }
            }
            a["min"] = json!(lo);
            a["max"] = json!(hi);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    pub(super) fn ints(
        &mut self,
        data: &[u32],
        n: usize,
        ty: &str,
        component: u32,
        target: Option<u32>,
    ) -> usize {
        let bytes: Vec<u8> = match component {
            UNSIGNED_BYTE => data.iter().map(|&v| v as u8).collect(),
            UNSIGNED_SHORT => data
                .iter()
                .flat_map(|&v| (v as u16).to_le_bytes())
                .collect(),
            _ => data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        };
        // Vertex attributes must have 4-byte-aligned strides: u8×4 and u16×4 are.
        let view = self.view(&bytes, target, None);
        self.accessors.push(
            json!({"bufferView": view, "componentType": component, "count": data.len() / n, "type": ty}),
        );
        self.accessors.len() - 1
    }
}

pub(super) fn vec3s(v: &[Vec3]) -> Vec<f32> {
    v.iter().flat_map(|p| p.to_array()).collect()
}

pub(super) fn quats(v: &[Quat]) -> Vec<f32> {
    v.iter().flat_map(|q| q.to_array()).collect()
}

/// The glTF root object from its arrays (empty optional arrays left out, as the spec asks).
#[allow(clippy::too_many_arguments)]
pub(super) fn root_json(
    b: &mut Builder,
    generator: &str,
    scene_nodes: Vec<usize>,
    nodes: Vec<Value>,
    meshes: Vec<Value>,
    skins: Vec<Value>,
    materials: Vec<Value>,
    (textures, images): (Vec<Value>, Vec<Value>),
    animations: Vec<Value>,
) -> Value {
    while !b.bin.len().is_multiple_of(4) {
        b.bin.push(0);
    }
    let mut root = json!({
        "asset": {"version": "2.0", "generator": generator},
        "scene": 0,
        "scenes": [{"name": "Scene", "nodes": scene_nodes}],
        "nodes": nodes,
        "buffers": [{"byteLength": b.bin.len()}],
        "bufferViews": std::mem::take(&mut b.views),
        "accessors": std::mem::take(&mut b.accessors),
    });
    if !meshes.is_empty() {
        root["meshes"] = json!(meshes);
    }
    if !skins.is_empty() {
        root["skins"] = json!(skins);
    }
    if !materials.is_empty() {
        root["materials"] = json!(materials);
    }
    if !textures.is_empty() {
        root["textures"] = json!(textures);
        root["images"] = json!(images);
        // Linear filtering with mipmaps, repeat wrapping: the glTF defaults spelled out.
        root["samplers"] =
            json!([{"magFilter": 9729, "minFilter": 9987, "wrapS": 10497, "wrapT": 10497}]);
    }
    if !animations.is_empty() {
        root["animations"] = json!(animations);
    }
    root
}

/// The GLB container: header, JSON chunk (space-padded), BIN chunk (zero-padded).
pub(super) fn glb_bytes(root: &Value, bin: &[u8]) -> Result<Vec<u8>, ExportError> {
    let mut json_bytes =
        serde_json::to_vec(root).map_err(|e| ExportError::Invalid(e.to_string()))?;
    while json_bytes.len() % 4 != 0 {
        json_bytes.push(b' ');
    }
    let total = 12 + 8 + json_bytes.len() + 8 + bin.len();
    if total > u32::MAX as usize {
        return Err(ExportError::Invalid(format!(
            "{total} bytes exceed the 4 GiB a GLB file can hold"
        )));
    }
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json_bytes);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(bin);
    Ok(out)
}
