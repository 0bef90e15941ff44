//! Baked simulations (`drape bake`, [`bake_to_glb`]): the body as the skinned rig with its pose
//! sampled as node keys, the garments (and a body glTF cannot skin) as morph-target meshes, one
//! target per frame.

use serde_json::{json, Value};

use super::builder::{
    glb_bytes, quats, root_json, vec3s, Builder, ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER, UNSIGNED_INT,
    UNSIGNED_SHORT,
};
use super::rig::{check, material_parts, rig_parts, texture_parts};
use super::ExportError;
use crate::math::{Quat, Transform, Vec2, Vec3};
use crate::rig::Rig;

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
