//! A [`Rig`] as glTF: consistency check, nodes, meshes with their skin influences, skins,
//! materials, embedded PNG textures and the rig's clips as animations ([`to_glb`]).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::builder::{
    glb_bytes, quats, root_json, vec3s, Builder, ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER, UNSIGNED_BYTE,
    UNSIGNED_INT, UNSIGNED_SHORT,
};
use super::ExportError;
use crate::anim::{Clip, Interpolation};
use crate::math::{Quat, Vec3};
use crate::rig::{Rig, SkinnedMesh};

pub(super) fn check(rig: &Rig) -> Result<(), ExportError> {
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
            || (!m.pin.is_empty() && m.pin.len() != v)
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
    if !m.pin.is_empty() {
        // Painted pin strength (a custom attribute: glTF 2.0 §3.7.2.1 allows `_`-prefixed ones).
        attributes["_PIN"] = json!(b.floats(&m.pin, 1, "SCALAR", Some(ARRAY_BUFFER), false));
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
pub(super) struct RigParts {
    pub(super) nodes: Vec<Value>,
    pub(super) meshes: Vec<Value>,
    pub(super) skins: Vec<Value>,
    pub(super) materials: Vec<Value>,
    pub(super) textures: Vec<Value>,
    pub(super) images: Vec<Value>,
    /// Root nodes of the skeleton.
    pub(super) roots: Vec<usize>,
    /// Per rig mesh: (glTF mesh, primitive) it became.
    pub(super) layout: Vec<(usize, usize)>,
}

/// Writes the rig's nodes, meshes, skins, textures and materials (everything but its clips).
pub(super) fn rig_parts(b: &mut Builder, rig: &Rig) -> Result<RigParts, ExportError> {
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
pub(super) fn texture_parts(
    b: &mut Builder,
    rig: &Rig,
) -> Result<(Vec<Value>, Vec<Value>), ExportError> {
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

pub(super) fn material_parts(rig: &Rig) -> Vec<Value> {
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
