//! A [`Rig`] → binary FBX, laid out the way Mixamo lays out its downloads, so that Blender, Maya
//! or any FBX tool opens drape's characters and bakes, and so that drape's own reader can be held
//! against its glTF loader on the same character:
//!
//! - centimetres (`UnitScaleFactor` 1), Y up, front +Z; root nodes that only carry the glTF
//!   armature's unit scale and axis turn (`Armature`, 0.01 and 90° about X) are folded into their
//!   children, so the bones (`LimbNode`, with their `NodeAttribute`) start at the hips like
//!   Mixamo's;
//! - each bone's rest rotation as its `PreRotation` (`RotationActive` 1, order XYZ) and the
//!   animation as `Lcl Rotation` curves relative to it, in Euler degrees, unwrapped so that
//!   consecutive keys never jump by 360°;
//! - one `Mesh` model + `Geometry` per drape mesh, control points = the mesh's vertices in order
//!   (in centimetres, at bind), triangles, normals and UVs by polygon vertex, one `Skin` with a
//!   `Cluster` per skin joint (weighted or not) whose `TransformLink` is the bone at rest and
//!   `Transform` the mesh at bind; a rigid mesh gets a one-cluster skin on its node;
//! - one `AnimationStack` + `AnimationLayer` per clip with `T`, `R`, `S` curve nodes on each
//!   animated bone, keys at the clip's own key times (FBX ticks), plus samples every 1/60 s where
//!   a track is stepped or cubic (FBX curves are written linear);
//! - materials (`DiffuseColor`, `Opacity`) with their base-colour textures embedded as PNG.

use std::collections::BTreeSet;
use std::path::Path;

use glam::{DMat3, DMat4, DQuat, DVec3};

use super::binary::{self, ArrayEncoding, Document, Node, Prop};
use super::records::{
    leaf, name_prop, p_double, p_int, p_num, p_time, p_vec, props70, ticks, unwrap_euler, Ids,
};
use super::scene::quat_euler_xyz;
use crate::anim::{sample_track, Interpolation};
use crate::math::Transform;
use crate::rig::Rig;

/// Why a rig could not be written as FBX.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FbxWriteError(pub String);

/// Knobs for [`to_fbx`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FbxWriteOptions {
    /// FBX version written: 7400 (32-bit record offsets, FBX 2014/2015, what older Mixamo
    /// downloads use) or 7500..=7700 (64-bit offsets). Default 7400.
    pub version: u32,
    /// zlib-compress arrays of 128 bytes or more, as the FBX SDK does. Default `true`.
    pub compress: bool,
}

impl Default for FbxWriteOptions {
    fn default() -> Self {
        Self {
            version: 7400,
            compress: true,
        }
    }
}

/// Writes `rig` to `path` as binary FBX.
pub fn write_fbx(rig: &Rig, path: &Path, opts: &FbxWriteOptions) -> Result<(), FbxWriteError> {
    let bytes = to_fbx(rig, opts)?;
    crate::output::write_atomic(path, &bytes)
        .map_err(|e| FbxWriteError(format!("cannot write {}: {e}", path.display())))
}

/// File units per metre: the file is in centimetres.
const CM: f64 = 100.0;

/// Serialises `rig` (see the module docs for the layout).
pub fn to_fbx(rig: &Rig, opts: &FbxWriteOptions) -> Result<Vec<u8>, FbxWriteError> {
    if !(7100..=7700).contains(&opts.version) {
        return Err(FbxWriteError(format!(
            "FBX version {} cannot be written (7100..=7700)",
            opts.version
        )));
    }
    let sk = &rig.skeleton;
    let n = sk.len();
    let fail = |m: String| FbxWriteError(m);
    if n == 0 && rig.meshes.is_empty() {
        return Err(fail("the rig has no nodes and no meshes".into()));
    }
    for (i, p) in sk.parents.iter().enumerate() {
        if p.is_some_and(|p| p as usize >= i) {
            return Err(fail("the skeleton is not sorted parents-first".into()));
        }
    }
    // Which nodes are joints, animated, mesh nodes.
    let mut joint = vec![false; n];
    for s in &rig.skins {
        for &j in &s.joints {
            if let Some(f) = joint.get_mut(j as usize) {
                *f = true;
            }
        }
    }
    let mut animated = vec![false; n];
    for c in &rig.clips {
        for node in c
            .translations
            .iter()
            .map(|t| t.node)
            .chain(c.rotations.iter().map(|t| t.node))
            .chain(c.scales.iter().map(|t| t.node))
        {
            if let Some(f) = animated.get_mut(node as usize) {
                *f = true;
            }
        }
    }
    let mut mesh_node = vec![false; n];
    for m in &rig.meshes {
        if m.skin.is_none() {
            if let Some(f) = mesh_node.get_mut(m.node as usize) {
                *f = true;
            }
        }
    }
    // Root nodes that are only a frame (no joint, no animation, no rigid mesh, uniform scale)
    // are folded into their children.
    let folded: Vec<bool> = (0..n)
        .map(|i| {
            let r = &sk.rest[i];
            sk.parents[i].is_none()
                && !joint[i]
                && !animated[i]
                && !mesh_node[i]
                && (r.scale.max_element() - r.scale.min_element()).abs()
                    <= 1e-5 * r.scale.abs().max_element()
        })
        .collect();
    // Bones: joints and everything below a joint.
    let mut bone = vec![false; n];
    for i in 0..n {
        bone[i] = joint[i] || sk.parents[i].is_some_and(|p| bone[p as usize]);
    }
    let to_file = DMat4::from_scale(DVec3::splat(CM));
    // `pre[i]`: what the written local transform is premultiplied by (file units, folding).
    let pre: Vec<DMat4> = (0..n)
        .map(|i| match sk.parents[i] {
            None => to_file,
            Some(p) if folded[p as usize] => to_file * sk.rest[p as usize].to_mat4().as_dmat4(),
            Some(_) => DMat4::IDENTITY,
        })
        .collect();
    // File-space world of every node at rest.
    let rest_world: Vec<DMat4> = sk
        .rest_world()
        .iter()
        .map(|m| to_file * m.as_dmat4())
        .collect();

    let mut ids = Ids(1_000_000);
    let mut objects: Vec<Node> = Vec::new();
    let mut conns: Vec<Node> = Vec::new();
    let oo = |c: i64, p: i64| {
        Node::new(
            "C",
            vec![Prop::Str("OO".into()), Prop::I64(c), Prop::I64(p)],
        )
    };
    let op = |c: i64, p: i64, prop: &str| {
        Node::new(
            "C",
            vec![
                Prop::Str("OP".into()),
                Prop::I64(c),
                Prop::I64(p),
                Prop::Str(prop.into()),
            ],
        )
    };
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();

    // ---- Models.
    let mut model_id = vec![0i64; n];
    let mut pre_rot = vec![DQuat::IDENTITY; n];
    for i in 0..n {
        if folded[i] {
            continue;
        }
        let local = Transform::from_mat4(&(pre[i] * sk.rest[i].to_mat4().as_dmat4()).as_mat4());
        let q = local.rotation.as_dquat().normalize();
        pre_rot[i] = q;
        let id = ids.next();
        model_id[i] = id;
        let kind = if bone[i] { "LimbNode" } else { "Null" };
        let name = if sk.names[i].is_empty() {
            format!("node{i}")
        } else {
            sk.names[i].clone()
        };
        let mut p = vec![
            p_int("RotationActive", "bool", 1),
            p_int("InheritType", "enum", 1),
            p_vec("PreRotation", "Vector3D", quat_euler_xyz(q), false),
            p_vec(
                "Lcl Translation",
                "Lcl Translation",
                local.translation.as_dvec3(),
                true,
            ),
            p_vec("Lcl Rotation", "Lcl Rotation", DVec3::ZERO, true),
            p_vec("Lcl Scaling", "Lcl Scaling", local.scale.as_dvec3(), true),
        ];
        if bone[i] {
            p.push(p_double("Size", 1.0));
        }
        objects.push(
            Node::new(
                "Model",
                vec![
                    Prop::I64(id),
                    name_prop(&name, "Model"),
                    Prop::Str(kind.into()),
                ],
            )
            .with(vec![
                leaf("Version", Prop::I32(232)),
                props70(p),
                leaf("Shading", Prop::Bool(true)),
                leaf("Culling", Prop::Str("CullingOff".into())),
            ]),
        );
        *counts.entry("Model").or_default() += 1;
        let parent = sk.parents[i]
            .filter(|&p| !folded[p as usize])
            .map(|p| model_id[p as usize])
            .unwrap_or(0);
        conns.push(oo(id, parent));
        if bone[i] {
            let aid = ids.next();
            objects.push(
                Node::new(
                    "NodeAttribute",
                    vec![
                        Prop::I64(aid),
                        name_prop(&name, "NodeAttribute"),
                        Prop::Str("LimbNode".into()),
                    ],
                )
                .with(vec![
                    props70(vec![p_double("Size", 1.0)]),
                    leaf("TypeFlags", Prop::Str("Skeleton".into())),
                ]),
            );
            *counts.entry("NodeAttribute").or_default() += 1;
            conns.push(oo(aid, id));
        }
    }

    // ---- Materials and textures.
    let mut material_id = Vec::new();
    for (mi, m) in rig.materials.iter().enumerate() {
        let id = ids.next();
        material_id.push(id);
        let c = m.base_color.truncate().as_dvec3();
        objects.push(
            Node::new(
                "Material",
                vec![
                    Prop::I64(id),
                    name_prop(&m.name, "Material"),
                    Prop::Str("".into()),
                ],
            )
            .with(vec![
                leaf("Version", Prop::I32(102)),
                leaf("ShadingModel", Prop::Str("phong".into())),
                leaf("MultiLayer", Prop::I32(0)),
                props70(vec![
                    p_vec("DiffuseColor", "ColorRGB", c, true),
                    p_num("DiffuseFactor", 1.0),
                    p_num("Opacity", m.base_color.w as f64),
                ]),
            ]),
        );
        *counts.entry("Material").or_default() += 1;
        if let Some(t) = m
            .base_color_texture
            .and_then(|t| rig.textures.get(t as usize))
        {
            let Some(img) = image::RgbaImage::from_raw(t.width, t.height, t.rgba8.clone()) else {
                continue;
            };
            let mut png = Vec::new();
            if img
                .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
                .is_err()
            {
                continue;
            }
            let file = format!(
                "{}_{mi}.png",
                if t.name.is_empty() {
                    "texture"
                } else {
                    &t.name
                }
            );
            let (tid, vid) = (ids.next(), ids.next());
            objects.push(
                Node::new(
                    "Video",
                    vec![
                        Prop::I64(vid),
                        name_prop(&file, "Video"),
                        Prop::Str("Clip".into()),
                    ],
                )
                .with(vec![
                    leaf("Type", Prop::Str("Clip".into())),
                    leaf("UseMipMap", Prop::I32(0)),
                    leaf("Filename", Prop::Str(file.clone())),
                    leaf("RelativeFilename", Prop::Str(file.clone())),
                    leaf("Content", Prop::Raw(png)),
                ]),
            );
            objects.push(
                Node::new(
                    "Texture",
                    vec![
                        Prop::I64(tid),
                        name_prop(&file, "Texture"),
                        Prop::Str("".into()),
                    ],
                )
                .with(vec![
                    leaf("Type", Prop::Str("TextureVideoClip".into())),
                    leaf("Version", Prop::I32(202)),
                    leaf("TextureName", name_prop(&file, "Texture")),
                    leaf("Media", name_prop(&file, "Video")),
                    leaf("FileName", Prop::Str(file.clone())),
                    leaf("RelativeFilename", Prop::Str(file)),
                ]),
            );
            *counts.entry("Video").or_default() += 1;
            *counts.entry("Texture").or_default() += 1;
            conns.push(oo(vid, tid));
            conns.push(op(tid, id, "DiffuseColor"));
        }
    }

    // ---- Meshes, geometry, skins.
    let mut used_names = BTreeSet::new();
    for (k, m) in rig.meshes.iter().enumerate() {
        let nv = m.positions.len();
        // Joints (node per joint slot) and inverse binds of this mesh's skin, in drape terms.
        let (joints, inverse_bind): (Vec<u32>, Vec<DMat4>) = match m.skin {
            Some(s) => {
                let s = rig
                    .skins
                    .get(s as usize)
                    .ok_or_else(|| fail(format!("mesh {:?} names a missing skin", m.name)))?;
                (
                    s.joints.clone(),
                    s.inverse_bind.iter().map(|b| b.as_dmat4()).collect(),
                )
            }
            None => (vec![m.node], vec![DMat4::IDENTITY]),
        };
        if joints.iter().any(|&j| j as usize >= n) {
            return Err(fail(format!("mesh {:?}: a joint is not a node", m.name)));
        }
        // Bind: the file-space world of the mesh at bind, from its first used joint.
        let first = if m.skin.is_some() {
            m.joints.first().map(|j| j[0] as usize).unwrap_or(0)
        } else {
            0
        };
        let first = first.min(joints.len().saturating_sub(1));
        let bind = rest_world[joints[first] as usize] * inverse_bind[first];
        if bind.determinant().abs() < 1e-12 {
            return Err(fail(format!(
                "mesh {:?}: its bind matrix is singular",
                m.name
            )));
        }
        let bind_inv = bind.inverse();
        let normal_mat = DMat3::from_mat4(bind).inverse().transpose();
        let mut vertices = Vec::with_capacity(nv * 3);
        for p in &m.positions {
            let q = bind.transform_point3(p.as_dvec3());
            vertices.extend_from_slice(&[q.x, q.y, q.z]);
        }
        let mut pvi = Vec::with_capacity(m.indices.len());
        for t in m.indices.chunks_exact(3) {
            pvi.extend_from_slice(&[t[0] as i32, t[1] as i32, !(t[2] as i32)]);
        }
        let mut normals = Vec::with_capacity(m.indices.len() / 3 * 9);
        for &i in m.indices.iter().take(m.indices.len() / 3 * 3) {
            let nrm = m
                .normals
                .get(i as usize)
                .map(|v| (normal_mat * v.as_dvec3()).normalize_or_zero())
                .unwrap_or(DVec3::Y);
            normals.extend_from_slice(&[nrm.x, nrm.y, nrm.z]);
        }
        let mut name = m.name.replace(['/', '#'], "_");
        if name.is_empty() {
            name = format!("mesh{k}");
        }
        while !used_names.insert(name.clone()) {
            name.push('_');
        }
        let gid = ids.next();
        let mut layer = vec![
            leaf("Version", Prop::I32(100)),
            Node::new("LayerElement", vec![]).with(vec![
                leaf("Type", Prop::Str("LayerElementNormal".into())),
                leaf("TypedIndex", Prop::I32(0)),
            ]),
        ];
        let mut geo = vec![
            leaf("Vertices", Prop::ArrF64(vertices)),
            leaf("PolygonVertexIndex", Prop::ArrI32(pvi)),
            leaf("GeometryVersion", Prop::I32(124)),
            Node::new("LayerElementNormal", vec![Prop::I32(0)]).with(vec![
                leaf("Version", Prop::I32(101)),
                leaf("Name", Prop::Str("".into())),
                leaf(
                    "MappingInformationType",
                    Prop::Str("ByPolygonVertex".into()),
                ),
                leaf("ReferenceInformationType", Prop::Str("Direct".into())),
                leaf("Normals", Prop::ArrF64(normals)),
            ]),
        ];
        if m.uvs.len() == nv {
            let uv: Vec<f64> = m
                .uvs
                .iter()
                .flat_map(|u| [u.x as f64, 1.0 - u.y as f64])
                .collect();
            let uv_index: Vec<i32> = m.indices.iter().map(|&i| i as i32).collect();
            geo.push(Node::new("LayerElementUV", vec![Prop::I32(0)]).with(vec![
                leaf("Version", Prop::I32(101)),
                leaf("Name", Prop::Str("UVMap".into())),
                leaf(
                    "MappingInformationType",
                    Prop::Str("ByPolygonVertex".into()),
                ),
                leaf(
                    "ReferenceInformationType",
                    Prop::Str("IndexToDirect".into()),
                ),
                leaf("UV", Prop::ArrF64(uv)),
                leaf("UVIndex", Prop::ArrI32(uv_index)),
            ]));
            layer.push(Node::new("LayerElement", vec![]).with(vec![
                leaf("Type", Prop::Str("LayerElementUV".into())),
                leaf("TypedIndex", Prop::I32(0)),
            ]));
        }
        let material = m
            .material
            .and_then(|i| material_id.get(i as usize).copied());
        if material.is_some() {
            geo.push(
                Node::new("LayerElementMaterial", vec![Prop::I32(0)]).with(vec![
                    leaf("Version", Prop::I32(101)),
                    leaf("Name", Prop::Str("".into())),
                    leaf("MappingInformationType", Prop::Str("AllSame".into())),
                    leaf(
                        "ReferenceInformationType",
                        Prop::Str("IndexToDirect".into()),
                    ),
                    leaf("Materials", Prop::ArrI32(vec![0])),
                ]),
            );
            layer.push(Node::new("LayerElement", vec![]).with(vec![
                leaf("Type", Prop::Str("LayerElementMaterial".into())),
                leaf("TypedIndex", Prop::I32(0)),
            ]));
        }
        geo.push(Node::new("Layer", vec![Prop::I32(0)]).with(layer));
        objects.push(
            Node::new(
                "Geometry",
                vec![
                    Prop::I64(gid),
                    name_prop(&name, "Geometry"),
                    Prop::Str("Mesh".into()),
                ],
            )
            .with(geo),
        );
        let mid = ids.next();
        objects.push(
            Node::new(
                "Model",
                vec![
                    Prop::I64(mid),
                    name_prop(&name, "Model"),
                    Prop::Str("Mesh".into()),
                ],
            )
            .with(vec![
                leaf("Version", Prop::I32(232)),
                props70(vec![
                    p_vec("Lcl Translation", "Lcl Translation", DVec3::ZERO, true),
                    p_vec("Lcl Rotation", "Lcl Rotation", DVec3::ZERO, true),
                    p_vec("Lcl Scaling", "Lcl Scaling", DVec3::ONE, true),
                ]),
                leaf("Shading", Prop::Bool(true)),
                leaf("Culling", Prop::Str("CullingOff".into())),
            ]),
        );
        *counts.entry("Geometry").or_default() += 1;
        *counts.entry("Model").or_default() += 1;
        conns.push(oo(mid, 0));
        conns.push(oo(gid, mid));
        if let Some(mat) = material {
            conns.push(oo(mat, mid));
        }
        // Skin: one cluster per joint slot.
        let sid = ids.next();
        objects.push(
            Node::new(
                "Deformer",
                vec![
                    Prop::I64(sid),
                    name_prop(&name, "Deformer"),
                    Prop::Str("Skin".into()),
                ],
            )
            .with(vec![
                leaf("Version", Prop::I32(101)),
                leaf("Link_DeformAcuracy", Prop::F64(50.0)),
            ]),
        );
        *counts.entry("Deformer").or_default() += 1;
        conns.push(oo(sid, gid));
        let mut per_joint: Vec<(Vec<i32>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); joints.len()];
        if m.skin.is_some() {
            for v in 0..nv {
                let sets = [
                    (m.joints.get(v), m.weights.get(v)),
                    (m.joints1.get(v), m.weights1.get(v)),
                ];
                for (j, w) in sets {
                    let (Some(j), Some(w)) = (j, w) else { continue };
                    for s in 0..4 {
                        if w[s] > 0.0 {
                            if let Some(pj) = per_joint.get_mut(j[s] as usize) {
                                pj.0.push(v as i32);
                                pj.1.push(w[s] as f64);
                            }
                        }
                    }
                }
            }
        } else {
            per_joint[0] = ((0..nv as i32).collect(), vec![1.0; nv]);
        }
        for (slot, (idx, w)) in per_joint.into_iter().enumerate() {
            let node = joints[slot] as usize;
            let link = rest_world[node];
            let transform = link * inverse_bind[slot] * bind_inv;
            let cid = ids.next();
            let mut c = vec![
                leaf("Version", Prop::I32(100)),
                Node::new("UserData", vec![Prop::Str("".into()), Prop::Str("".into())]),
            ];
            if !idx.is_empty() {
                c.push(leaf("Indexes", Prop::ArrI32(idx)));
                c.push(leaf("Weights", Prop::ArrF64(w)));
            }
            c.push(leaf(
                "Transform",
                Prop::ArrF64(transform.to_cols_array().to_vec()),
            ));
            c.push(leaf(
                "TransformLink",
                Prop::ArrF64(link.to_cols_array().to_vec()),
            ));
            objects.push(
                Node::new(
                    "Deformer",
                    vec![
                        Prop::I64(cid),
                        name_prop(&sk.names[node], "SubDeformer"),
                        Prop::Str("Cluster".into()),
                    ],
                )
                .with(c),
            );
            *counts.entry("Deformer").or_default() += 1;
            conns.push(oo(cid, sid));
            if model_id[node] == 0 {
                return Err(fail(format!(
                    "mesh {:?}: joint {:?} is a folded root node",
                    m.name, sk.names[node]
                )));
            }
            conns.push(oo(model_id[node], cid));
        }
    }

    // ---- Animation.
    for clip in &rig.clips {
        let stack = ids.next();
        let layer = ids.next();
        let (start, end) = (ticks(clip.start), ticks(clip.end));
        objects.push(
            Node::new(
                "AnimationStack",
                vec![
                    Prop::I64(stack),
                    name_prop(&clip.name, "AnimStack"),
                    Prop::Str("".into()),
                ],
            )
            .with(vec![props70(vec![
                p_time("LocalStart", start),
                p_time("LocalStop", end),
                p_time("ReferenceStart", start),
                p_time("ReferenceStop", end),
            ])]),
        );
        objects.push(Node::new(
            "AnimationLayer",
            vec![
                Prop::I64(layer),
                name_prop("BaseLayer", "AnimLayer"),
                Prop::Str("".into()),
            ],
        ));
        *counts.entry("AnimationStack").or_default() += 1;
        *counts.entry("AnimationLayer").or_default() += 1;
        conns.push(oo(layer, stack));
        for node in 0..n {
            let tt = clip.translations.iter().find(|t| t.node as usize == node);
            let rt = clip.rotations.iter().find(|t| t.node as usize == node);
            let st = clip.scales.iter().find(|t| t.node as usize == node);
            if tt.is_none() && rt.is_none() && st.is_none() {
                continue;
            }
            let mut times: Vec<f32> = Vec::new();
            let mut smooth = false;
            for (ti, interp) in [
                tt.map(|t| (&t.times, t.interpolation)),
                rt.map(|t| (&t.times, t.interpolation)),
                st.map(|t| (&t.times, t.interpolation)),
            ]
            .into_iter()
            .flatten()
            {
                times.extend(ti.iter().copied().filter(|t| t.is_finite()));
                smooth |= interp != Interpolation::Linear;
            }
            if smooth {
                let steps = ((clip.end - clip.start) * 60.0).ceil().clamp(0.0, 1e6) as usize;
                times.extend(
                    (0..=steps)
                        .map(|k| clip.start + k as f32 / 60.0)
                        .filter(|&t| t <= clip.end),
                );
            }
            times.sort_by(|a, b| a.total_cmp(b));
            times.dedup_by(|a, b| ticks(*a) == ticks(*b));
            if times.is_empty() {
                continue;
            }
            let rest = sk.rest[node];
            let qpre_inv = pre_rot[node].inverse();
            let mut keys: [Vec<f32>; 9] = Default::default();
            let mut prev: Option<DVec3> = None;
            for &t in &times {
                let trs = Transform {
                    translation: tt
                        .and_then(|k| sample_track(k, t))
                        .unwrap_or(rest.translation),
                    rotation: rt.and_then(|k| sample_track(k, t)).unwrap_or(rest.rotation),
                    scale: st.and_then(|k| sample_track(k, t)).unwrap_or(rest.scale),
                };
                let local = Transform::from_mat4(&(pre[node] * trs.to_mat4().as_dmat4()).as_mat4());
                let e = unwrap_euler(qpre_inv * local.rotation.as_dquat().normalize(), prev);
                prev = Some(e);
                let v = [local.translation.as_dvec3(), e, local.scale.as_dvec3()];
                for c in 0..3 {
                    for a in 0..3 {
                        keys[c * 3 + a].push(v[c][a] as f32);
                    }
                }
            }
            let key_ticks: Vec<i64> = times.iter().map(|&t| ticks(t)).collect();
            for (c, (short, prop)) in [
                ("T", "Lcl Translation"),
                ("R", "Lcl Rotation"),
                ("S", "Lcl Scaling"),
            ]
            .into_iter()
            .enumerate()
            {
                let cn = ids.next();
                let first = |a: usize| keys[c * 3 + a][0] as f64;
                objects.push(
                    Node::new(
                        "AnimationCurveNode",
                        vec![
                            Prop::I64(cn),
                            name_prop(short, "AnimCurveNode"),
                            Prop::Str("".into()),
                        ],
                    )
                    .with(vec![props70(vec![
                        p_num("d|X", first(0)),
                        p_num("d|Y", first(1)),
                        p_num("d|Z", first(2)),
                    ])]),
                );
                *counts.entry("AnimationCurveNode").or_default() += 1;
                conns.push(oo(cn, layer));
                conns.push(op(cn, model_id[node], prop));
                for (a, axis) in ["d|X", "d|Y", "d|Z"].into_iter().enumerate() {
                    let values = keys[c * 3 + a].clone();
                    let cid = ids.next();
                    let nk = values.len() as i32;
                    objects.push(
                        Node::new(
                            "AnimationCurve",
                            vec![
                                Prop::I64(cid),
                                name_prop("", "AnimCurve"),
                                Prop::Str("".into()),
                            ],
                        )
                        .with(vec![
                            leaf("Default", Prop::F64(values[0] as f64)),
                            leaf("KeyVer", Prop::I32(4008)),
                            leaf("KeyTime", Prop::ArrI64(key_ticks.clone())),
                            leaf("KeyValueFloat", Prop::ArrF32(values)),
                            // One attribute for every key: linear interpolation (0x4).
                            leaf("KeyAttrFlags", Prop::ArrI32(vec![0x4])),
                            leaf("KeyAttrDataFloat", Prop::ArrF32(vec![0.0; 4])),
                            leaf("KeyAttrRefCount", Prop::ArrI32(vec![nk])),
                        ]),
                    );
                    *counts.entry("AnimationCurve").or_default() += 1;
                    conns.push(op(cid, cn, axis));
                }
            }
        }
    }

    // ---- The document.
    let g = |name: &str, v: i32| p_int(name, "int", v);
    let global = Node::new("GlobalSettings", vec![]).with(vec![
        leaf("Version", Prop::I32(1000)),
        props70(vec![
            g("UpAxis", 1),
            g("UpAxisSign", 1),
            g("FrontAxis", 2),
            g("FrontAxisSign", 1),
            g("CoordAxis", 0),
            g("CoordAxisSign", 1),
            g("OriginalUpAxis", 1),
            g("OriginalUpAxisSign", 1),
            p_double("UnitScaleFactor", 1.0),
            p_double("OriginalUnitScaleFactor", 1.0),
            p_int("TimeMode", "enum", 6),
        ]),
    ]);
    let header = Node::new("FBXHeaderExtension", vec![]).with(vec![
        leaf("FBXHeaderVersion", Prop::I32(1003)),
        leaf("FBXVersion", Prop::I32(opts.version as i32)),
        leaf("EncryptionType", Prop::I32(0)),
        leaf(
            "Creator",
            Prop::Str(format!("drape {}", env!("CARGO_PKG_VERSION"))),
        ),
    ]);
    let mut defs = vec![
        leaf("Version", Prop::I32(100)),
        leaf(
            "Count",
            Prop::I32(counts.values().sum::<usize>() as i32 + 1),
        ),
        Node::new("ObjectType", vec![Prop::Str("GlobalSettings".into())])
            .with(vec![leaf("Count", Prop::I32(1))]),
    ];
    for (k, c) in &counts {
        defs.push(
            Node::new("ObjectType", vec![Prop::Str((*k).into())])
                .with(vec![leaf("Count", Prop::I32(*c as i32))]),
        );
    }
    let doc = Document {
        version: opts.version,
        nodes: vec![
            header,
            leaf(
                "Creator",
                Prop::Str(format!("drape {}", env!("CARGO_PKG_VERSION"))),
            ),
            global,
            Node::new("Definitions", vec![]).with(defs),
            Node::new("Objects", vec![]).with(objects),
            Node::new("Connections", vec![]).with(conns),
        ],
    };
    Ok(binary::write(
        &doc,
        if opts.compress {
            ArrayEncoding::Zlib { min_bytes: 128 }
        } else {
            ArrayEncoding::Plain
        },
    ))
}
