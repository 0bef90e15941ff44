//! Writing a [`Rig`] as a binary glTF 2.0 file (`.glb`).
//!
//! The output is deterministic: the JSON is built from ordered maps (serde_json's default map is
//! a `BTreeMap`, so keys are sorted), floats are written by serde_json's shortest round-trip
//! formatter, binary data is little-endian, and nothing depends on time or hashing. Writing the
//! same rig twice gives the same bytes.
//!
//! Layout: one buffer (the GLB BIN chunk); every accessor has its own 4-byte-aligned buffer view;
//! node indices in the file equal the rig's node indices; each [`SkinnedMesh`] becomes one mesh
//! with one primitive, instantiated by its node (meshes sharing a node become primitives of one
//! mesh); textures are embedded as PNG; each [`Clip`] becomes one animation, tracks sharing
//! identical key times share one input accessor.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::anim::{Clip, Interpolation};
use crate::math::{Quat, Transform, Vec2, Vec3};
use crate::rig::{Rig, SkinnedMesh};

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

// glTF component types and targets.
const FLOAT: u32 = 5126;
const UNSIGNED_BYTE: u32 = 5121;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// Accumulates the binary chunk, buffer views and accessors.
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    fn view(&mut self, bytes: &[u8], target: Option<u32>, stride: Option<usize>) -> usize {
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
    fn floats(
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

    fn ints(
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

fn vec3s(v: &[Vec3]) -> Vec<f32> {
    v.iter().flat_map(|p| p.to_array()).collect()
}

fn quats(v: &[Quat]) -> Vec<f32> {
    v.iter().flat_map(|q| q.to_array()).collect()
}

fn check(rig: &Rig) -> Result<(), ExportError> {
    let n = rig.skeleton.len();
    let bad = |m: String| Err(ExportError::Invalid(m));
    if rig.skeleton.parents.len() != n || rig.skeleton.rest.len() != n {
        return bad("skeleton arrays differ in length".into());
    }
    for (i, p) in rig.skeleton.parents.iter().enumerate() {
        if let Some(p) = p {
            if *p as usize >= i {
                return bad(format!("node {i} has parent {p} after it"));
            }
        }
    }
    for s in &rig.skins {
        if s.joints.len() != s.inverse_bind.len() || s.joints.iter().any(|&j| j as usize >= n) {
            return bad(format!("skin {} has bad joints", s.name));
        }
    }
    for m in &rig.meshes {
        let v = m.positions.len();
        if m.node as usize >= n
            || m.normals.len() != v
            || (!m.uvs.is_empty() && m.uvs.len() != v)
            || (!m.joints.is_empty() && (m.joints.len() != v || m.weights.len() != v))
            || m.indices.iter().any(|&i| i as usize >= v)
            || m.indices.len() % 3 != 0
        {
            return bad(format!("mesh {} has inconsistent arrays", m.name));
        }
        if !m.joints1.is_empty() {
            return bad(format!("mesh {}: 8 influences are not exported", m.name));
        }
        if let Some(s) = m.skin {
            let joints = rig
                .skins
                .get(s as usize)
                .map(|s| s.joints.len())
                .unwrap_or(0);
            if m.joints.iter().flatten().any(|&j| j as usize >= joints) {
                return bad(format!(
                    "mesh {} refers to a joint outside its skin",
                    m.name
                ));
            }
        }
    }
    for c in &rig.clips {
        let times_ok = |t: &[f32]| t.windows(2).all(|w| w[0] < w[1]) && !t.is_empty();
        let ok = c
            .translations
            .iter()
            .all(|t| times_ok(&t.times) && (t.node as usize) < n)
            && c.rotations
                .iter()
                .all(|t| times_ok(&t.times) && (t.node as usize) < n)
            && c.scales
                .iter()
                .all(|t| times_ok(&t.times) && (t.node as usize) < n);
        if !ok {
            return bad(format!("clip {} has a bad track", c.name));
        }
    }
    Ok(())
}

fn mesh_primitive(b: &mut Builder, m: &SkinnedMesh) -> Value {
    let pos = b.floats(&vec3s(&m.positions), 3, "VEC3", Some(ARRAY_BUFFER), true);
    let nrm = b.floats(&vec3s(&m.normals), 3, "VEC3", Some(ARRAY_BUFFER), false);
    let mut attributes = json!({"POSITION": pos, "NORMAL": nrm});
    if !m.uvs.is_empty() {
        let uv: Vec<f32> = m.uvs.iter().flat_map(|u| u.to_array()).collect();
        attributes["TEXCOORD_0"] = json!(b.floats(&uv, 2, "VEC2", Some(ARRAY_BUFFER), false));
    }
    if !m.joints.is_empty() {
        let joints: Vec<u32> = m.joints.iter().flatten().map(|&j| j as u32).collect();
        let wide = joints.iter().any(|&j| j > 255);
        let ct = if wide { UNSIGNED_SHORT } else { UNSIGNED_BYTE };
        attributes["JOINTS_0"] = json!(b.ints(&joints, 4, "VEC4", ct, Some(ARRAY_BUFFER)));
        let w: Vec<f32> = m.weights.iter().flatten().copied().collect();
        attributes["WEIGHTS_0"] = json!(b.floats(&w, 4, "VEC4", Some(ARRAY_BUFFER), false));
    }
    let ct = if m.positions.len() <= 65535 {
        UNSIGNED_SHORT
    } else {
        UNSIGNED_INT
    };
    let idx = b.ints(&m.indices, 1, "SCALAR", ct, Some(ELEMENT_ARRAY_BUFFER));
    let mut p = json!({"attributes": attributes, "indices": idx, "mode": 4});
    if let Some(mat) = m.material {
        p["material"] = json!(mat);
    }
    p
}

fn interpolation_name(i: Interpolation) -> &'static str {
    match i {
        Interpolation::Step => "STEP",
        Interpolation::Linear => "LINEAR",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

fn animation(b: &mut Builder, c: &Clip) -> Value {
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    // Shared key-time accessors, keyed by the exact bit patterns of the times.
    let mut inputs: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
    let mut input = |b: &mut Builder, times: &[f32]| -> usize {
        let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        *inputs
            .entry(key)
            .or_insert_with(|| b.floats(times, 1, "SCALAR", None, true))
    };
    // Per node: translation, rotation, scale, the order Blender writes them in.
    let mut order: Vec<(u32, u8, usize)> = Vec::new();
    order.extend(
        c.translations
            .iter()
            .enumerate()
            .map(|(i, t)| (t.node, 0, i)),
    );
    order.extend(c.rotations.iter().enumerate().map(|(i, t)| (t.node, 1, i)));
    order.extend(c.scales.iter().enumerate().map(|(i, t)| (t.node, 2, i)));
    order.sort();
    for (node, kind, i) in order {
        let (times, out, interp, path) = match kind {
            0 => {
                let t = &c.translations[i];
                (
                    &t.times,
                    b.floats(&vec3s(&t.values), 3, "VEC3", None, false),
                    t.interpolation,
                    "translation",
                )
            }
            1 => {
                let t = &c.rotations[i];
                (
                    &t.times,
                    b.floats(&quats(&t.values), 4, "VEC4", None, false),
                    t.interpolation,
                    "rotation",
                )
            }
            _ => {
                let t = &c.scales[i];
                (
                    &t.times,
                    b.floats(&vec3s(&t.values), 3, "VEC3", None, false),
                    t.interpolation,
                    "scale",
                )
            }
        };
        let inp = input(b, times);
        samplers.push(
            json!({"input": inp, "output": out, "interpolation": interpolation_name(interp)}),
        );
        channels
            .push(json!({"sampler": samplers.len() - 1, "target": {"node": node, "path": path}}));
    }
    json!({"name": c.name, "samplers": samplers, "channels": channels})
}

fn encode_png(t: &crate::rig::Texture) -> Result<Vec<u8>, ExportError> {
    let err = |msg: String| ExportError::Texture {
        name: t.name.clone(),
        msg,
    };
    let img = image::RgbaImage::from_raw(t.width, t.height, t.rgba8.clone())
        .ok_or_else(|| err("pixel buffer does not match its size".into()))?;
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .map_err(|e| err(e.to_string()))?;
    Ok(out.into_inner())
}

/// The rig's static content, written into a [`Builder`]: the JSON arrays that refer to it.
struct RigParts {
    nodes: Vec<Value>,
    meshes: Vec<Value>,
    skins: Vec<Value>,
    materials: Vec<Value>,
    textures: Vec<Value>,
    images: Vec<Value>,
    /// Root nodes of the skeleton.
    roots: Vec<usize>,
    /// Per rig mesh: (glTF mesh, primitive) it became.
    layout: Vec<(usize, usize)>,
}

/// Writes the rig's nodes, meshes, skins, textures and materials (everything but its clips).
fn rig_parts(b: &mut Builder, rig: &Rig) -> Result<RigParts, ExportError> {
    let sk = &rig.skeleton;

    // Meshes: group primitives by node, in node order.
    let mut by_node: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, m) in rig.meshes.iter().enumerate() {
        by_node.entry(m.node).or_default().push(i);
    }
    let mut meshes = Vec::new();
    let mut layout = vec![(0, 0); rig.meshes.len()];
    let mut node_mesh: BTreeMap<u32, (usize, Option<u32>)> = BTreeMap::new();
    for (&node, prims) in &by_node {
        let primitives: Vec<Value> = prims
            .iter()
            .map(|&i| mesh_primitive(b, &rig.meshes[i]))
            .collect();
        for (k, &i) in prims.iter().enumerate() {
            layout[i] = (meshes.len(), k);
        }
        let name = rig.meshes[prims[0]].name.clone();
        meshes.push(json!({"name": name, "primitives": primitives}));
        node_mesh.insert(node, (meshes.len() - 1, rig.meshes[prims[0]].skin));
    }

    let mut skins = Vec::new();
    for s in &rig.skins {
        let ibm: Vec<f32> = s
            .inverse_bind
            .iter()
            .flat_map(|m| m.to_cols_array())
            .collect();
        let acc = b.floats(&ibm, 16, "MAT4", None, false);
        let mut v = json!({"name": s.name, "joints": s.joints, "inverseBindMatrices": acc});
        if let Some(r) = s.skeleton_root {
            v["skeleton"] = json!(r);
        }
        skins.push(v);
    }

    // Nodes.
    let mut nodes = Vec::new();
    for i in 0..sk.len() {
        let t = &sk.rest[i];
        let mut v = json!({"name": sk.names[i]});
        if t.translation != Vec3::ZERO {
            v["translation"] = json!(t.translation.to_array());
        }
        if t.rotation != Quat::IDENTITY {
            v["rotation"] = json!(t.rotation.to_array());
        }
        if t.scale != Vec3::ONE {
            v["scale"] = json!(t.scale.to_array());
        }
        let children: Vec<usize> = (0..sk.len())
            .filter(|&c| sk.parents[c] == Some(i as u32))
            .collect();
        if !children.is_empty() {
            v["children"] = json!(children);
        }
        if let Some((mesh, skin)) = node_mesh.get(&(i as u32)) {
            v["mesh"] = json!(mesh);
            if let Some(s) = skin {
                v["skin"] = json!(s);
            }
        }
        nodes.push(v);
    }
    let roots: Vec<usize> = (0..sk.len()).filter(|&i| sk.parents[i].is_none()).collect();

    let (textures, images) = texture_parts(b, rig)?;
    let materials = material_parts(rig);
    Ok(RigParts {
        nodes,
        meshes,
        skins,
        materials,
        textures,
        images,
        roots,
        layout,
    })
}

/// The rig's textures (embedded PNG) and their images.
fn texture_parts(b: &mut Builder, rig: &Rig) -> Result<(Vec<Value>, Vec<Value>), ExportError> {
    let mut images = Vec::new();
    let mut textures = Vec::new();
    for (i, t) in rig.textures.iter().enumerate() {
        let png = encode_png(t)?;
        let view = b.view(&png, None, None);
        images.push(json!({"name": t.name, "bufferView": view, "mimeType": "image/png"}));
        textures.push(json!({"sampler": 0, "source": i}));
    }
    Ok((textures, images))
}

fn material_parts(rig: &Rig) -> Vec<Value> {
    rig.materials
        .iter()
        .map(|m| {
            let mut pbr = json!({
                "baseColorFactor": m.base_color.to_array(),
                "metallicFactor": m.metallic,
                "roughnessFactor": m.roughness,
            });
            if let Some(t) = m.base_color_texture {
                pbr["baseColorTexture"] = json!({"index": t});
            }
            let mut v = json!({"name": m.name, "pbrMetallicRoughness": pbr});
            if m.double_sided {
                v["doubleSided"] = json!(true);
            }
            v
        })
        .collect()
}

/// The glTF root object from its arrays (empty optional arrays left out, as the spec asks).
#[allow(clippy::too_many_arguments)]
fn root_json(
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
fn glb_bytes(root: &Value, bin: &[u8]) -> Result<Vec<u8>, ExportError> {
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

/// Whether [`to_glb`] can write `rig` (consistent arrays, at most 4 influences per vertex); the
/// reason when it cannot.
pub fn exportable(rig: &Rig) -> Result<(), ExportError> {
    check(rig)
}

/// Serialises `rig` as a GLB (binary glTF 2.0) file.
pub fn to_glb(rig: &Rig) -> Result<Vec<u8>, ExportError> {
    check(rig)?;
    let mut b = Builder {
        bin: Vec::new(),
        views: Vec::new(),
        accessors: Vec::new(),
    };
    let parts = rig_parts(&mut b, rig)?;
    let animations: Vec<Value> = rig.clips.iter().map(|c| animation(&mut b, c)).collect();
    let root = root_json(
        &mut b,
        concat!("drape ", env!("CARGO_PKG_VERSION")),
        parts.roots,
        parts.nodes,
        parts.meshes,
        parts.skins,
        parts.materials,
        (parts.textures, parts.images),
        animations,
    );
    glb_bytes(&root, &b.bin)
}

// ---------------------------------------------------------------------------------------------
// Baked simulations (`drape bake`): the body as the skinned rig with its pose sampled as node
// keys, the garments (and a body glTF cannot skin) as morph-target meshes, one target per frame.

/// What a morph-target mesh is drawn with.
#[derive(Clone, Debug, PartialEq)]
pub enum BakedMaterial {
    /// One of the rig's materials (or none).
    Rig(Option<u32>),
    /// A new double-sided, matte material of this linear RGB colour (cloth).
    Cloth([f32; 3]),
}

/// A mesh baked as morph targets: its world-space positions at every baked frame.
#[derive(Clone, Debug)]
pub struct MorphMesh {
    pub name: String,
    /// Triangle list.
    pub indices: Vec<u32>,
    /// Per vertex, or empty.
    pub uvs: Vec<Vec2>,
    pub material: BakedMaterial,
    /// `frames[k][v]`: position of vertex `v` at baked frame `k`, metres, world space.
    pub frames: Vec<Vec<Vec3>>,
    /// `normals[k][v]`: unit normal of vertex `v` at baked frame `k`, world space; or empty for
    /// none. Without normals glTF viewers shade every triangle flat (glTF 2.0 §3.7.2.1: "When
    /// normals are not specified, client implementations MUST calculate flat normals"), which
    /// makes cloth look faceted; with them the base mesh gets NORMAL and each morph target
    /// NORMAL deltas, and viewers shade smoothly as drape does.
    pub normals: Vec<Vec<Vec3>>,
}

/// How the body is baked.
#[derive(Clone, Debug)]
pub enum BakedBody {
    /// The rig itself (skeleton nodes, skins with inverse bind matrices, meshes with
    /// JOINTS_0/WEIGHTS_0), animated by node keys: `locals[k][node]` is every node's local
    /// transform at baked frame `k`. glTF skins by linear blending (glTF 2.0 §3.7.3), so this
    /// reproduces drape's LBS exactly and is small: a few floats per bone per frame.
    Skinned { locals: Vec<Vec<Transform>> },
    /// Every rig mesh as morph targets (world space): for skinning glTF cannot express (DQS,
    /// CoR) or a rig the exporter cannot hold (8 influences). One full copy per frame.
    Morph(Vec<MorphMesh>),
}

/// A baked scene for [`bake_to_glb`].
#[derive(Clone, Debug)]
pub struct Bake<'a> {
    pub rig: &'a Rig,
    /// Seconds of each baked frame, strictly increasing.
    pub times: Vec<f32>,
    /// Seconds the last frame is held after its key (> 0): the animation ends one frame
    /// interval after the last frame, so a looping player shows the last frame as long as the
    /// others instead of wrapping at the instant it appears.
    pub hold: f32,
    pub body: BakedBody,
    pub garments: Vec<MorphMesh>,
    /// Name of the animation.
    pub name: String,
}

/// Where each baked mesh went in the file: (glTF mesh index, primitive index).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BakeLayout {
    /// Per rig mesh.
    pub body: Vec<(usize, usize)>,
    /// Per garment.
    pub garments: Vec<(usize, usize)>,
}

fn check_morph(m: &MorphMesh, frames: usize) -> Result<(), ExportError> {
    let bad = |what: &str| {
        Err(ExportError::Invalid(format!(
            "baked mesh {}: {what}",
            m.name
        )))
    };
    if m.frames.len() != frames {
        return bad("frame count differs from the key times");
    }
    let n = m.frames[0].len();
    if m.frames.iter().any(|f| f.len() != n) {
        return bad("vertex count changes between frames");
    }
    if m.frames.iter().flatten().any(|p| !p.is_finite()) {
        return bad("non-finite position");
    }
    if !m.indices.len().is_multiple_of(3) || m.indices.iter().any(|&i| i as usize >= n) {
        return bad("bad triangle indices");
    }
    if !m.uvs.is_empty() && m.uvs.len() != n {
        return bad("UV count differs from the vertex count");
    }
    if !m.normals.is_empty() {
        if m.normals.len() != frames || m.normals.iter().any(|f| f.len() != n) {
            return bad("normals differ in count from the positions");
        }
        // The validator requires unit normals on the base mesh (and drape's renderer gives
        // unit normals everywhere): anything else is a bug upstream.
        if m.normals
            .iter()
            .flatten()
            .any(|v| !v.is_finite() || (v.length() - 1.0).abs() > 1e-3)
        {
            return bad("normals must be finite unit vectors");
        }
    }
    Ok(())
}

/// Key outputs followed by the hold key (the last value again).
fn with_hold<T: Copy>(v: &[T]) -> Vec<T> {
    let mut out = v.to_vec();
    out.extend(v.last().copied());
    out
}

/// A morph-target mesh: base positions = frame 0, target `k − 1` = frame `k` − frame 0, and a
/// LINEAR `weights` sampler that goes from frame to frame (weight 1 on frame k's target at its
/// key, so positions between keys are interpolated linearly like the body's bones). Normals,
/// when the mesh has them, are laid out the same way (NORMAL deltas in each target; viewers
/// renormalise after blending). Returns the mesh JSON and, when it has targets, the sampler
/// output accessor.
fn morph_mesh(b: &mut Builder, m: &MorphMesh, material: Option<usize>) -> (Value, Option<usize>) {
    let base = &m.frames[0];
    let n = base.len();
    let pos = b.floats(&vec3s(base), 3, "VEC3", Some(ARRAY_BUFFER), true);
    let mut attributes = json!({"POSITION": pos});
    let base_normals = m.normals.first();
    if let Some(bn) = base_normals {
        attributes["NORMAL"] = json!(b.floats(&vec3s(bn), 3, "VEC3", Some(ARRAY_BUFFER), false));
    }
    if !m.uvs.is_empty() {
        let uv: Vec<f32> = m.uvs.iter().flat_map(|u| u.to_array()).collect();
        attributes["TEXCOORD_0"] = json!(b.floats(&uv, 2, "VEC2", Some(ARRAY_BUFFER), false));
    }
    let ct = if n <= 65535 {
        UNSIGNED_SHORT
    } else {
        UNSIGNED_INT
    };
    let idx = b.ints(&m.indices, 1, "SCALAR", ct, Some(ELEMENT_ARRAY_BUFFER));
    let mut prim = json!({"attributes": attributes, "indices": idx, "mode": 4});
    if let Some(mat) = material {
        prim["material"] = json!(mat);
    }
    let mut mesh = json!({"name": m.name});
    let n_t = m.frames.len() - 1;
    let mut output = None;
    if n_t > 0 {
        let mut delta = Vec::with_capacity(n * 3);
        let targets: Vec<Value> = (1..m.frames.len())
            .map(|k| {
                delta.clear();
                let f = &m.frames[k];
                delta.extend(f.iter().zip(base).flat_map(|(p, q)| (*p - *q).to_array()));
                let mut t =
                    json!({"POSITION": b.floats(&delta, 3, "VEC3", Some(ARRAY_BUFFER), true)});
                if let Some(bn) = base_normals {
                    delta.clear();
                    let f = &m.normals[k];
                    delta.extend(f.iter().zip(bn).flat_map(|(p, q)| (*p - *q).to_array()));
                    t["NORMAL"] = json!(b.floats(&delta, 3, "VEC3", Some(ARRAY_BUFFER), false));
                }
                t
            })
            .collect();
        prim["targets"] = json!(targets);
        mesh["weights"] = json!(vec![0.0f32; n_t]);
        // Names for the targets (three.js's morphTargetDictionary, Blender's shape keys): the
        // baked frame each one shows.
        let names: Vec<String> = (1..=n_t).map(|k| format!("frame {k}")).collect();
        mesh["extras"] = json!({"targetNames": names});
        // Key k (k ≥ 1) shows target k − 1 alone, key 0 none; the hold key repeats the last.
        let keys = m.frames.len() + 1;
        let mut w = vec![0.0f32; keys * n_t];
        for k in 1..keys {
            w[k * n_t + (k - 1).min(n_t - 1)] = 1.0;
        }
        output = Some(b.floats(&w, 1, "SCALAR", None, false));
    }
    mesh["primitives"] = json!([prim]);
    (mesh, output)
}

/// Node keys of a skinned bake: one LINEAR channel per node and property that moves (more than
/// float noise away from the rest transform at some frame); the others keep their rest value.
fn node_channels(
    b: &mut Builder,
    rig: &Rig,
    locals: &[Vec<Transform>],
    input: usize,
    samplers: &mut Vec<Value>,
    channels: &mut Vec<Value>,
) {
    // Far below anything visible (1 µm on a 1 m bone), far above f64 → f32 decomposition noise.
    const EPS: f32 = 1e-6;
    let far = |a: &[f32], b: &[f32], scale: f32| {
        a.iter()
            .zip(b)
            .any(|(x, y)| (x - y).abs() > EPS * scale.max(1.0))
    };
    for (node, rest) in rig.skeleton.rest.iter().enumerate() {
        let t: Vec<Vec3> = locals.iter().map(|l| l[node].translation).collect();
        let s: Vec<Vec3> = locals.iter().map(|l| l[node].scale).collect();
        // Consecutive rotations on one hemisphere: the glTF LINEAR rotation is a slerp, which
        // three.js takes the short way, but Blender keys quaternion components and interpolates
        // them one by one, so a sign flip between keys would spin the bone through the long way.
        let mut r: Vec<Quat> = Vec::with_capacity(locals.len());
        let mut prev = rest.rotation;
        for l in locals {
            let mut q = l[node].rotation.normalize();
            if q.dot(prev) < 0.0 {
                q = -q;
            }
            r.push(q);
            prev = q;
        }
        let rest_t = rest.translation.to_array();
        let moves_t = t
            .iter()
            .any(|v| far(&v.to_array(), &rest_t, rest.translation.length()));
        let moves_r = r.iter().any(|q| {
            let q = if q.dot(rest.rotation) < 0.0 { -*q } else { *q };
            far(&q.to_array(), &rest.rotation.to_array(), 1.0)
        });
        let moves_s = s.iter().any(|v| {
            far(
                &v.to_array(),
                &rest.scale.to_array(),
                rest.scale.abs().max_element(),
            )
        });
        let mut add = |b: &mut Builder, data: Vec<f32>, n: usize, ty: &str, path: &str| {
            let out = b.floats(&data, n, ty, None, false);
            samplers.push(json!({"input": input, "output": out, "interpolation": "LINEAR"}));
            channels.push(
                json!({"sampler": samplers.len() - 1, "target": {"node": node, "path": path}}),
            );
        };
        if moves_t {
            add(b, vec3s(&with_hold(&t)), 3, "VEC3", "translation");
        }
        if moves_r {
            add(b, quats(&with_hold(&r)), 4, "VEC4", "rotation");
        }
        if moves_s {
            add(b, vec3s(&with_hold(&s)), 3, "VEC3", "scale");
        }
    }
}

/// Serialises a baked scene as GLB: see [`Bake`] and [`BakedBody`]. One animation (`name`)
/// drives the body and every garment over `times` plus the hold.
pub fn bake_to_glb(bake: &Bake) -> Result<(Vec<u8>, BakeLayout), ExportError> {
    let rig = bake.rig;
    let frames = bake.times.len();
    let bad = |m: &str| Err(ExportError::Invalid(m.to_string()));
    if frames == 0 {
        return bad("nothing to bake (no frames)");
    }
    if bake.times.iter().any(|t| !t.is_finite())
        || !bake.times.windows(2).all(|w| w[0] < w[1])
        || !(bake.hold > 0.0 && bake.hold.is_finite())
    {
        return bad("baked key times must be finite and increasing, the hold positive");
    }
    let mut b = Builder {
        bin: Vec::new(),
        views: Vec::new(),
        accessors: Vec::new(),
    };
    let mut layout = BakeLayout::default();
    let mut nodes;
    let mut meshes;
    let mut scene_nodes;
    let skins;
    let mut materials;
    let tex;
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    let mut keys = bake.times.clone();
    keys.push(bake.times[frames - 1] + bake.hold);
    let input = b.floats(&keys, 1, "SCALAR", None, true);
    let mut morphs: Vec<(&MorphMesh, bool)> = Vec::new();
    match &bake.body {
        BakedBody::Skinned { locals } => {
            check(rig)?;
            let n = rig.skeleton.len();
            if locals.len() != frames || locals.iter().any(|l| l.len() != n) {
                return bad("baked node transforms do not match the frames and the skeleton");
            }
            if locals.iter().flatten().any(|t| !t.is_finite()) {
                return bad("non-finite baked node transform");
            }
            let parts = rig_parts(&mut b, rig)?;
            node_channels(&mut b, rig, locals, input, &mut samplers, &mut channels);
            nodes = parts.nodes;
            meshes = parts.meshes;
            scene_nodes = parts.roots;
            // A skinned mesh's own node transform (and its parents') is ignored (glTF 2.0
            // §3.7.3.3; drape's skinner too), but viewers differ: three.js binds with an identity
            // bind matrix and then applies the node's world matrix, so a skinned mesh below a
            // transformed node (CesiumMan's Z-up node) would be drawn moved. Instantiate each
            // skinned mesh from a root node of its own with no transform, which every viewer
            // draws the same (and the validator's NODE_SKINNED_MESH_NON_ROOT warning goes away).
            for i in 0..nodes.len() {
                let placed = rig.skeleton.parents[i].is_none()
                    && ["translation", "rotation", "scale"]
                        .iter()
                        .all(|k| nodes[i].get(k).is_none());
                if nodes[i].get("skin").is_none() || placed {
                    continue;
                }
                let node = nodes[i].as_object_mut().expect("nodes are objects");
                let (mesh, skin) = (node.remove("mesh"), node.remove("skin"));
                let mesh = mesh.expect("a skinned node has a mesh");
                let name = meshes[mesh.as_u64().unwrap_or(0) as usize]["name"].clone();
                nodes.push(json!({"name": name, "mesh": mesh, "skin": skin}));
                scene_nodes.push(nodes.len() - 1);
            }
            skins = parts.skins;
            materials = parts.materials;
            tex = (parts.textures, parts.images);
            layout.body = parts.layout;
        }
        BakedBody::Morph(body) => {
            if body.len() != rig.meshes.len() {
                return bad("one baked body mesh per rig mesh expected");
            }
            nodes = Vec::new();
            meshes = Vec::new();
            scene_nodes = Vec::new();
            skins = Vec::new();
            materials = material_parts(rig);
            tex = texture_parts(&mut b, rig)?;
            morphs.extend(body.iter().map(|m| (m, true)));
        }
    }
    morphs.extend(bake.garments.iter().map(|m| (m, false)));
    for (m, is_body) in morphs {
        check_morph(m, frames)?;
        let material = match &m.material {
            BakedMaterial::Rig(i) => i
                .filter(|&i| (i as usize) < rig.materials.len())
                .map(|i| i as usize),
            BakedMaterial::Cloth(c) => {
                materials.push(json!({
                    "name": m.name,
                    "doubleSided": true,
                    "pbrMetallicRoughness": {
                        "baseColorFactor": [c[0], c[1], c[2], 1.0],
                        "metallicFactor": 0.0,
                        "roughnessFactor": 0.9,
                    },
                }));
                Some(materials.len() - 1)
            }
        };
        let (mesh, weights) = morph_mesh(&mut b, m, material);
        let node = nodes.len();
        nodes.push(json!({"name": m.name, "mesh": meshes.len()}));
        scene_nodes.push(node);
        if is_body {
            layout.body.push((meshes.len(), 0));
        } else {
            layout.garments.push((meshes.len(), 0));
        }
        meshes.push(mesh);
        if let Some(out) = weights {
            samplers.push(json!({"input": input, "output": out, "interpolation": "LINEAR"}));
            channels.push(
                json!({"sampler": samplers.len() - 1, "target": {"node": node, "path": "weights"}}),
            );
        }
    }
    let animations = if channels.is_empty() {
        Vec::new()
    } else {
        vec![json!({"name": bake.name, "samplers": samplers, "channels": channels})]
    };
    let root = root_json(
        &mut b,
        concat!("drape ", env!("CARGO_PKG_VERSION"), " bake"),
        scene_nodes,
        nodes,
        meshes,
        skins,
        materials,
        tex,
        animations,
    );
    Ok((glb_bytes(&root, &b.bin)?, layout))
}

/// Writes `rig` to `path` as GLB.
pub fn write_glb(rig: &Rig, path: &std::path::Path) -> Result<(), ExportError> {
    let bytes = to_glb(rig)?;
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
                path: dir.display().to_string(),
                source,
            })?;
        }
    }
    std::fs::write(path, bytes).map_err(|source| ExportError::Io {
        path: path.display().to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Clip, Skeleton, Skin, Track};
    use crate::math::{Mat4, Transform, Vec2};
    use crate::rig::{Material, SkinnedMesh, Texture};

    /// A two-joint rig with one skinned triangle, a 2×2 texture and a STEP + LINEAR clip.
    fn tiny() -> Rig {
        let skeleton = Skeleton {
            names: vec!["root".into(), "child".into(), "mesh".into()],
            parents: vec![None, Some(0), None],
            rest: vec![
                Transform::IDENTITY,
                Transform::from_translation(Vec3::Y),
                Transform::IDENTITY,
            ],
        };
        let mesh = SkinnedMesh {
            name: "tri".into(),
            node: 2,
            skin: Some(0),
            material: Some(0),
            positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
            normals: vec![Vec3::Z; 3],
            uvs: vec![Vec2::ZERO, Vec2::X, Vec2::Y],
            joints: vec![[0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]],
            weights: vec![[1.0, 0.0, 0.0, 0.0]; 3],
            indices: vec![0, 1, 2],
            ..Default::default()
        };
        let clip = Clip {
            name: "wave".into(),
            start: 0.0,
            end: 1.0,
            rotations: vec![Track {
                node: 1,
                times: vec![0.0, 1.0],
                values: vec![Quat::IDENTITY, Quat::from_rotation_z(1.0)],
                interpolation: Interpolation::Linear,
            }],
            translations: vec![Track {
                node: 0,
                times: vec![0.0, 0.5],
                values: vec![Vec3::ZERO, Vec3::X],
                interpolation: Interpolation::Step,
            }],
            scales: vec![],
        };
        Rig {
            source: "test".into(),
            skeleton,
            skins: vec![Skin {
                name: "skin".into(),
                joints: vec![0, 1],
                inverse_bind: vec![Mat4::IDENTITY, Mat4::from_translation(-Vec3::Y)],
                skeleton_root: Some(0),
            }],
            meshes: vec![mesh],
            materials: vec![Material {
                base_color_texture: Some(0),
                ..Default::default()
            }],
            textures: vec![Texture {
                name: "t".into(),
                width: 2,
                height: 2,
                rgba8: vec![200; 16],
            }],
            clips: vec![clip],
            ..Default::default()
        }
    }

    #[test]
    fn tiny_rig_round_trips_through_the_gltf_crate() {
        let bytes = to_glb(&tiny()).unwrap();
        assert_eq!(&bytes[0..4], b"glTF");
        assert_eq!(
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
            bytes.len()
        );
        let g = gltf::Gltf::from_slice(&bytes).expect("valid glb");
        let blob = g.blob.clone().expect("a BIN chunk");
        let doc = g.document;
        let skin = doc.skins().next().unwrap();
        assert_eq!(skin.joints().map(|j| j.index()).collect::<Vec<_>>(), [0, 1]);
        let ibm: Vec<[[f32; 4]; 4]> = skin
            .reader(|_| Some(&blob[..]))
            .read_inverse_bind_matrices()
            .unwrap()
            .collect();
        assert_eq!(ibm[1][3], [0.0, -1.0, 0.0, 1.0]);
        let anim = doc.animations().next().unwrap();
        let interps: Vec<_> = anim.samplers().map(|s| s.interpolation()).collect();
        assert!(interps.contains(&gltf::animation::Interpolation::Step));
        assert!(interps.contains(&gltf::animation::Interpolation::Linear));
        let img = doc.images().next().unwrap();
        assert!(matches!(
            img.source(),
            gltf::image::Source::View {
                mime_type: "image/png",
                ..
            }
        ));
        let mesh_node = doc.nodes().nth(2).unwrap();
        assert!(mesh_node.mesh().is_some() && mesh_node.skin().is_some());
    }

    /// The tiny rig with its child bone bent at the second of two frames, and one morphing
    /// triangle: bone keys where the pose moves, weights keys with the hold key at the end.
    #[test]
    fn bake_keys_moving_bones_and_morph_weights_with_a_hold() {
        let rig = tiny();
        let mut bent = rig.skeleton.rest.clone();
        bent[1].rotation = Quat::from_rotation_z(-0.5);
        let cloth = MorphMesh {
            name: "cloth".into(),
            indices: vec![0, 1, 2],
            uvs: vec![],
            material: BakedMaterial::Cloth([0.5; 3]),
            frames: vec![
                vec![Vec3::ZERO, Vec3::X, Vec3::Y],
                vec![Vec3::Z, Vec3::X, Vec3::Y],
            ],
            normals: vec![vec![Vec3::Z; 3], vec![Vec3::ONE.normalize(); 3]],
        };
        let mut bake = Bake {
            rig: &rig,
            times: vec![0.0, 0.5],
            hold: 0.5,
            body: BakedBody::Skinned {
                locals: vec![rig.skeleton.rest.clone(), bent],
            },
            garments: vec![cloth],
            name: "b".into(),
        };
        let (bytes, layout) = bake_to_glb(&bake).unwrap();
        assert_eq!(layout.body, [(0, 0)]);
        assert_eq!(layout.garments, [(1, 0)]);
        let g = gltf::Gltf::from_slice(&bytes).expect("valid glb");
        let blob = g.blob.clone().unwrap();
        let anim = g.document.animations().next().unwrap();
        let mut paths = Vec::new();
        for ch in anim.channels() {
            let r = ch.reader(|_| Some(&blob[..]));
            let inputs: Vec<f32> = r.read_inputs().unwrap().collect();
            assert_eq!(inputs, [0.0, 0.5, 1.0]);
            paths.push((ch.target().node().index(), ch.target().property()));
            if let gltf::animation::util::ReadOutputs::MorphTargetWeights(w) =
                r.read_outputs().unwrap()
            {
                assert_eq!(w.into_f32().collect::<Vec<_>>(), [0.0, 1.0, 1.0]);
            }
        }
        use gltf::animation::Property;
        // Only the bent bone and the cloth's weights are keyed.
        assert_eq!(
            paths,
            [(1, Property::Rotation), (3, Property::MorphTargetWeights)]
        );

        // The cloth's normals: frame 0's as NORMAL, frame 1's as the target's NORMAL delta.
        let prim = g
            .document
            .meshes()
            .nth(1)
            .unwrap()
            .primitives()
            .next()
            .unwrap();
        let r = prim.reader(|_| Some(&blob[..]));
        let base: Vec<[f32; 3]> = r.read_normals().unwrap().collect();
        assert_eq!(base, [[0.0, 0.0, 1.0]; 3]);
        let (_, normals, _) = r.read_morph_targets().next().unwrap();
        let n1 = Vec3::ONE.normalize();
        for d in normals.unwrap() {
            let back = Vec3::Z + Vec3::from(d);
            assert!(back.distance(n1) < 1e-6, "{back}");
        }

        // Inconsistent bakes are refused, not written.
        bake.garments[0].normals[1][2] = Vec3::X * 2.0;
        assert!(matches!(bake_to_glb(&bake), Err(ExportError::Invalid(_))));
        bake.garments[0].normals.pop();
        assert!(matches!(bake_to_glb(&bake), Err(ExportError::Invalid(_))));
        bake.garments[0].normals.clear();
        bake.garments[0].frames.pop();
        assert!(matches!(bake_to_glb(&bake), Err(ExportError::Invalid(_))));
        bake.garments.clear();
        bake.times = vec![0.5, 0.0];
        assert!(matches!(bake_to_glb(&bake), Err(ExportError::Invalid(_))));
    }

    #[test]
    fn inconsistent_rigs_are_refused_not_written() {
        let mut r = tiny();
        r.meshes[0].indices.push(7);
        assert!(matches!(to_glb(&r), Err(ExportError::Invalid(_))));
        let mut r = tiny();
        r.skeleton.parents[0] = Some(1);
        assert!(matches!(to_glb(&r), Err(ExportError::Invalid(_))));
        let mut r = tiny();
        r.textures[0].rgba8.pop();
        assert!(matches!(to_glb(&r), Err(ExportError::Texture { .. })));
    }
}
