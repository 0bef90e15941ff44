//! Builds small glTF files inside tests: typed arrays go into one binary buffer (4-byte aligned
//! views), accessors point at them, and the result is written as `.gltf` JSON with a base64 data
//! URI or as `.glb`. Shared by tests/gltf_load.rs and tests/malformed.rs.
#![allow(dead_code)]

use base64::Engine as _;
use serde_json::{json, Value};

pub const BYTE: u32 = 5120;
pub const UNSIGNED_BYTE: u32 = 5121;
pub const SHORT: u32 = 5122;
pub const UNSIGNED_SHORT: u32 = 5123;
pub const UNSIGNED_INT: u32 = 5125;
pub const FLOAT: u32 = 5126;

#[derive(Default, Clone)]
pub struct Builder {
    pub bin: Vec<u8>,
    pub views: Vec<Value>,
    pub accessors: Vec<Value>,
}

impl Builder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends raw bytes as a buffer view (optionally strided); returns the view index.
    pub fn view(&mut self, bytes: &[u8], stride: Option<usize>) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut v = json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()});
        if let Some(s) = stride {
            v["byteStride"] = json!(s);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(v);
        self.views.len() - 1
    }

    /// Adds an accessor on `view`; returns its index.
    pub fn accessor(
        &mut self,
        view: usize,
        ctype: u32,
        count: u64,
        ty: &str,
        normalized: bool,
    ) -> usize {
        let mut a = json!({"bufferView": view, "componentType": ctype, "count": count, "type": ty});
        if normalized {
            a["normalized"] = json!(true);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    pub fn raw_accessor(&mut self, a: Value) -> usize {
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    fn elements(ty: &str) -> usize {
        match ty {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            _ => panic!("type {ty}"),
        }
    }

    pub fn f32s(&mut self, data: &[f32], ty: &str) -> usize {
        let b: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let v = self.view(&b, None);
        self.accessor(
            v,
            FLOAT,
            (data.len() / Self::elements(ty)) as u64,
            ty,
            false,
        )
    }

    pub fn u16s(&mut self, data: &[u16], ty: &str, normalized: bool) -> usize {
        let b: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let v = self.view(&b, None);
        self.accessor(
            v,
            UNSIGNED_SHORT,
            (data.len() / Self::elements(ty)) as u64,
            ty,
            normalized,
        )
    }

    pub fn u8s(&mut self, data: &[u8], ty: &str, normalized: bool) -> usize {
        let v = self.view(data, None);
        self.accessor(
            v,
            UNSIGNED_BYTE,
            (data.len() / Self::elements(ty)) as u64,
            ty,
            normalized,
        )
    }

    pub fn u32s(&mut self, data: &[u32], ty: &str) -> usize {
        let b: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let v = self.view(&b, None);
        self.accessor(
            v,
            UNSIGNED_INT,
            (data.len() / Self::elements(ty)) as u64,
            ty,
            false,
        )
    }

    /// The document: `rest` (nodes, meshes, …) plus asset, buffer views and accessors. The buffer
    /// entry is added by [`Self::gltf`] / [`Self::glb`].
    fn document(&self, rest: &Value) -> Value {
        let mut doc = json!({"asset": {"version": "2.0", "generator": "drape tests"}});
        if let Value::Object(m) = rest {
            for (k, v) in m {
                doc[k] = v.clone();
            }
        }
        if doc.get("bufferViews").is_none() {
            doc["bufferViews"] = Value::Array(self.views.clone());
        }
        if doc.get("accessors").is_none() {
            doc["accessors"] = Value::Array(self.accessors.clone());
        }
        doc
    }

    /// A `.gltf` with the buffer embedded as a base64 data URI.
    pub fn gltf(&self, rest: &Value) -> Vec<u8> {
        let mut doc = self.document(rest);
        if doc.get("buffers").is_none() {
            let b64 = base64::engine::general_purpose::STANDARD.encode(&self.bin);
            doc["buffers"] = json!([{
                "byteLength": self.bin.len(),
                "uri": format!("data:application/octet-stream;base64,{b64}")
            }]);
        }
        serde_json::to_vec_pretty(&doc).unwrap()
    }

    /// A `.glb` with the buffer in the BIN chunk.
    pub fn glb(&self, rest: &Value) -> Vec<u8> {
        let mut doc = self.document(rest);
        if doc.get("buffers").is_none() {
            doc["buffers"] = json!([{"byteLength": self.bin.len()}]);
        }
        glb_bytes(&serde_json::to_vec(&doc).unwrap(), Some(&self.bin))
    }
}

/// Wraps a JSON chunk and an optional BIN chunk into a GLB container.
pub fn glb_bytes(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
    let mut j = json.to_vec();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    if let Some(b) = bin {
        let mut b = b.to_vec();
        while !b.len().is_multiple_of(4) {
            b.push(0);
        }
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&b);
    }
    let n = out.len() as u32;
    out[8..12].copy_from_slice(&n.to_le_bytes());
    out
}

/// A small skinned character: an armature node scaled 0.01 (as Mixamo exports), a two-joint
/// chain with `prefix` names, and a quad in the XY plane skinned with u8 joints and normalised
/// u16 weights, without normals. Animation: one LINEAR rotation channel on the second joint.
/// Returns the builder and the rest of the document.
pub fn skinned_quad(prefix: &str) -> (Builder, Value) {
    let mut b = Builder::new();
    let pos = b.f32s(
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0],
        "VEC3",
    );
    let idx = b.u16s(&[0, 1, 2, 0, 2, 3], "SCALAR", false);
    let joints = b.u8s(
        &[0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0],
        "VEC4",
        false,
    );
    // 65535 = 1.0: (0.75, 0.25), (0.5, 0.5), (1, 0), (1, 0)
    let weights = b.u16s(
        &[
            49151, 16384, 0, 0, 32768, 32767, 0, 0, 65535, 0, 0, 0, 65535, 0, 0, 0,
        ],
        "VEC4",
        true,
    );
    let ibm = b.f32s(
        &[
            1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., //
            1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., -1., 0., 1.,
        ],
        "MAT4",
    );
    let times = b.f32s(&[1.0 / 30.0, 0.5, 1.0], "SCALAR");
    let rots = b.f32s(&[0., 0., 0., 1., 0., 0., 0.6, 0.8, 0., 0., 0., 2.0], "VEC4");
    let rest = json!({
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [
            {"name": "Armature", "scale": [0.01, 0.01, 0.01], "children": [1, 3]},
            {"name": format!("{prefix}Hips"), "children": [2]},
            {"name": format!("{prefix}Spine"), "translation": [0.0, 1.0, 0.0]},
            {"name": "Body", "mesh": 0, "skin": 0}
        ],
        "meshes": [{"name": "body", "primitives": [{
            "attributes": {"POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights},
            "indices": idx
        }]}],
        "skins": [{"name": "skin", "joints": [1, 2], "inverseBindMatrices": ibm, "skeleton": 1}],
        "animations": [{"name": "Bend", "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}}],
                        "samplers": [{"input": times, "output": rots}]}]
    });
    (b, rest)
}
