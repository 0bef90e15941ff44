//! glTF meshes: each primitive of each node's mesh read into a [`SkinnedMesh`] (positions,
//! normals, UVs, tangents, triangle indices) with its JOINTS_n/WEIGHTS_n influences checked
//! against the node's skin (glTF 2.0 §3.7.2, §3.7.3).

use ::gltf::json;
use json::validation::Checked;

use super::document::{read_f32, read_u32, Ctx, Data};
use crate::anim::Skin;
use crate::asset::accessor::{AccessorDesc, Component};
use crate::asset::geometry::{self, Topology};
use crate::asset::AssetError;
use crate::math::{Vec2, Vec3, Vec4};
use crate::rig::SkinnedMesh;

pub(super) fn build_meshes(
    cx: &mut Ctx,
    root: &json::Root,
    data: &Data,
    node_of: &[u32],
    skins: &[Skin],
    n_materials: usize,
) -> Result<Vec<SkinnedMesh>, AssetError> {
    use json::mesh::{Mode, Semantic};
    let mut out = Vec::new();
    for (ni, node) in root.nodes.iter().enumerate() {
        let Some(mesh_index) = node.mesh else {
            continue;
        };
        let mi = mesh_index.value();
        let mesh = root.meshes.get(mi).ok_or_else(|| {
            cx.err(format!(
                "node {ni} uses mesh {mi}, but the file has {}",
                root.meshes.len()
            ))
        })?;
        let skin = match node.skin {
            None => None,
            Some(s) if s.value() < skins.len() => Some(s.value()),
            Some(s) => {
                return Err(cx.err(format!(
                    "node {ni} uses skin {}, but the file has {}",
                    s.value(),
                    skins.len()
                )))
            }
        };
        for (pi, p) in mesh.primitives.iter().enumerate() {
            let here = format!("mesh {mi} primitive {pi}");
            let name = format!(
                "{}/{}#{pi}",
                node.name.as_deref().unwrap_or(&format!("node {ni}")),
                mesh.name.as_deref().unwrap_or(&format!("mesh {mi}"))
            );
            let topology = match p.mode {
                Checked::Valid(Mode::Triangles) => Topology::Triangles,
                Checked::Valid(Mode::TriangleStrip) => Topology::TriangleStrip,
                Checked::Valid(Mode::TriangleFan) => Topology::TriangleFan,
                Checked::Valid(_) => {
                    cx.warn.skipped_primitives.push(name);
                    continue;
                }
                Checked::Invalid => return Err(cx.err(format!("{here} has an invalid mode"))),
            };
            if p.extensions
                .as_ref()
                .is_some_and(|e| e.others.contains_key("KHR_draco_mesh_compression"))
            {
                // Not required (else refused earlier): the file promises uncompressed fallback
                // data in the accessors; check it really has it.
                let pos = p.attributes.get(&Checked::Valid(Semantic::Positions));
                let has_data = pos
                    .and_then(|a| root.accessors.get(a.value()))
                    .is_some_and(|a| a.buffer_view.is_some());
                if !has_data {
                    return Err(AssetError::UnsupportedExtension {
                        file: cx.label.clone(),
                        extension: "KHR_draco_mesh_compression".into(),
                        hint: format!(" ({here} has no uncompressed fallback)"),
                    });
                }
            }
            let attr = |s: Semantic| p.attributes.get(&Checked::Valid(s)).map(|a| a.value());
            let Some(pos_index) = attr(Semantic::Positions) else {
                cx.warn
                    .push(format!("{here} has no POSITION attribute; skipped"));
                continue;
            };
            let role = |a: &str| format!("{a} of {here}");
            let pos_acc = data.accessor(cx, root, pos_index, &role("POSITION"))?;
            let n = pos_acc.count;
            if n > u32::MAX as u64 {
                return Err(cx.err(format!(
                    "{here} has {n} vertices; at most 2^32 are supported"
                )));
            }
            // Every attribute must have the same count (§3.7.2.1).
            let same_count = |cx: &Ctx, acc: &AccessorDesc, what: &str| -> Result<(), AssetError> {
                if acc.count != n {
                    Err(cx.err(format!(
                        "accessor {} ({}) has {} elements but POSITION has {n}",
                        acc.index,
                        role(what),
                        acc.count
                    )))
                } else {
                    Ok(())
                }
            };
            // Locate (and size-check) everything before reading anything.
            let locate = |cx: &mut Ctx,
                          s: Semantic,
                          what: &str|
             -> Result<Option<AccessorDesc>, AssetError> {
                match attr(s) {
                    None => Ok(None),
                    Some(i) => {
                        let acc = data.accessor(cx, root, i, &role(what))?;
                        same_count(cx, &acc, what)?;
                        Ok(Some(acc))
                    }
                }
            };
            let nrm_acc = locate(cx, Semantic::Normals, "NORMAL")?;
            let uv_acc = locate(cx, Semantic::TexCoords(0), "TEXCOORD_0")?;
            let tan_acc = locate(cx, Semantic::Tangents, "TANGENT")?;
            let j0_acc = locate(cx, Semantic::Joints(0), "JOINTS_0")?;
            let w0_acc = locate(cx, Semantic::Weights(0), "WEIGHTS_0")?;
            let j1_acc = locate(cx, Semantic::Joints(1), "JOINTS_1")?;
            let w1_acc = locate(cx, Semantic::Weights(1), "WEIGHTS_1")?;
            // Painted pin strength for cloth: the custom `_PIN` attribute, else COLOR_0's red.
            let pin_acc = locate(cx, Semantic::Extras("PIN".into()), "_PIN")?;
            let color_acc = match pin_acc {
                Some(_) => None,
                None => locate(cx, Semantic::Colors(0), "COLOR_0")?,
            };
            let idx_acc = match p.indices {
                Some(i) => {
                    let acc = data.accessor(cx, root, i.value(), &role("indices"))?;
                    if acc.view.is_some_and(|v| v.stride.is_some()) {
                        cx.warn.forbidden_stride.push(acc.index);
                    }
                    Some(acc)
                }
                None => None,
            };
            let material = match p.material {
                None => None,
                Some(m) if m.value() < n_materials => Some(m.value() as u32),
                Some(m) => {
                    return Err(cx.err(format!(
                        "{here} uses material {}, but the file has {n_materials}",
                        m.value()
                    )))
                }
            };

            let positions: Vec<Vec3> = read_f32::<3>(cx, &pos_acc, &role("POSITION"))?
                .into_iter()
                .map(Vec3::from)
                .collect();
            if let Some(v) = positions.iter().position(|p| !p.is_finite()) {
                return Err(cx.err(format!("POSITION of {here} vertex {v} is not finite")));
            }
            let seq: Vec<u32> = match &idx_acc {
                Some(acc) => {
                    if !matches!(
                        acc.component,
                        Component::U8 | Component::U16 | Component::U32
                    ) {
                        return Err(cx.err(format!(
                            "accessor {} (indices of {here}) has component type {}; indices must be unsigned",
                            acc.index,
                            acc.component.name()
                        )));
                    }
                    let seq: Vec<u32> = read_u32::<1>(cx, acc, &role("indices"))?
                        .into_iter()
                        .map(|[i]| i)
                        .collect();
                    if let Some(k) = seq.iter().position(|&i| i as u64 >= n) {
                        return Err(cx.err(format!(
                            "index {k} of {here} (accessor {}) is {}, but the primitive has {n} vertices",
                            acc.index, seq[k]
                        )));
                    }
                    seq
                }
                None => {
                    cx.charge(n * 4, || format!("indices of {here}"))?;
                    (0..n as u32).collect()
                }
            };
            let (indices, dropped) = geometry::triangulate(seq, topology);
            cx.warn.dropped_indices += dropped;

            let normals = match &nrm_acc {
                Some(acc) => {
                    let v = read_f32::<3>(cx, acc, &role("NORMAL"))?;
                    v.into_iter()
                        .map(|n| Vec3::from(n).try_normalize().unwrap_or(Vec3::Y))
                        .collect()
                }
                None => {
                    cx.charge(n * 12, || format!("computed normals of {here}"))?;
                    geometry::smooth_normals(&positions, &indices)
                }
            };
            let uvs: Vec<Vec2> = match &uv_acc {
                Some(acc) => read_f32::<2>(cx, acc, &role("TEXCOORD_0"))?
                    .into_iter()
                    .map(Vec2::from)
                    .collect(),
                None => Vec::new(),
            };
            let tangents: Vec<Vec4> = match &tan_acc {
                Some(acc) => read_f32::<4>(cx, acc, &role("TANGENT"))?
                    .into_iter()
                    .map(Vec4::from)
                    .collect(),
                None => Vec::new(),
            };

            let pin = read_pin(cx, pin_acc.as_ref(), color_acc.as_ref(), &here)?;
            let mut m = SkinnedMesh {
                name,
                node: node_of[ni],
                skin: None,
                material,
                positions,
                normals,
                uvs,
                tangents,
                indices,
                pin,
                ..Default::default()
            };
            match (skin, &j0_acc, &w0_acc) {
                (Some(s), Some(ja), Some(wa)) => {
                    let joint_count = skins[s].joints.len();
                    let (joints, mut weights) = read_influences(cx, ja, wa, joint_count, &here, 0)?;
                    let (joints1, mut weights1) = match (&j1_acc, &w1_acc) {
                        (Some(ja), Some(wa)) => read_influences(cx, ja, wa, joint_count, &here, 1)?,
                        _ => (Vec::new(), Vec::new()),
                    };
                    // Quantised weights cannot sum to 1 exactly: allow ½ unit per influence.
                    let quantum = |acc: &AccessorDesc| -> f32 { match acc.component {
                        Component::U8 => 0.5 / 255.0,
                        Component::U16 => 0.5 / 65535.0,
                        _ => 0.0,
                    } };
                    let influences: f32 = if joints1.is_empty() { 4.0 } else { 8.0 };
                    let q = quantum(wa).max(w1_acc.as_ref().map(quantum).unwrap_or(0.0));
                    let tol = (influences * q).max(2e-3);
                    let fx = geometry::normalise_weights(&mut weights, &mut weights1, tol);
                    if fx.renormalised > 0 {
                        cx.warn.weight_meshes += 1;
                    }
                    cx.warn.weights.merge(&fx);
                    m.skin = Some(s as u32);
                    m.joints = joints;
                    m.weights = weights;
                    m.joints1 = joints1;
                    m.weights1 = weights1;
                }
                (Some(s), _, _) => cx.warn.push(format!(
                    "{here} is used by skinned node {ni} (skin {s}) but has no JOINTS_0/WEIGHTS_0; drawn rigid"
                )),
                (None, Some(_), _) => cx.warn.push(format!(
                    "{here} has JOINTS_0 but node {ni} has no skin; drawn rigid"
                )),
                (None, None, _) => {}
            }
            out.push(m);
        }
    }
    Ok(out)
}

/// Pin strength per vertex from `_PIN` (SCALAR, float or normalized integer) or, failing that,
/// the red channel of `COLOR_0` (VEC3 or VEC4, float or normalized integer, glTF 2.0 §3.7.2.1);
/// clamped to 0 … 1. Empty when the primitive has neither.
fn read_pin(
    cx: &mut Ctx,
    pin: Option<&AccessorDesc>,
    color: Option<&AccessorDesc>,
    here: &str,
) -> Result<Vec<f32>, AssetError> {
    let values: Vec<f32> = match (pin, color) {
        (Some(acc), _) => read_f32::<1>(cx, acc, &format!("_PIN of {here}"))?
            .into_iter()
            .map(|[v]| v)
            .collect(),
        (None, Some(acc)) if acc.shape.components() == 4 => {
            read_f32::<4>(cx, acc, &format!("COLOR_0 of {here}"))?
                .into_iter()
                .map(|c| c[0])
                .collect()
        }
        (None, Some(acc)) => read_f32::<3>(cx, acc, &format!("COLOR_0 of {here}"))?
            .into_iter()
            .map(|c| c[0])
            .collect(),
        (None, None) => return Ok(Vec::new()),
    };
    if let Some(v) = values.iter().position(|p| !p.is_finite()) {
        return Err(cx.err(format!("pin weight of {here} vertex {v} is not finite")));
    }
    Ok(values.into_iter().map(|v| v.clamp(0.0, 1.0)).collect())
}

/// Joint numbers and weights of one JOINTS_n/WEIGHTS_n set.
type Influences = (Vec<[u16; 4]>, Vec<[f32; 4]>);

/// Reads one JOINTS_n/WEIGHTS_n pair, checking joint numbers against the skin.
fn read_influences(
    cx: &mut Ctx,
    ja: &AccessorDesc,
    wa: &AccessorDesc,
    joint_count: usize,
    here: &str,
    set: u32,
) -> Result<Influences, AssetError> {
    if !matches!(ja.component, Component::U8 | Component::U16) {
        return Err(cx.err(format!(
            "accessor {} (JOINTS_{set} of {here}) has component type {}; UNSIGNED_BYTE or UNSIGNED_SHORT expected",
            ja.index,
            ja.component.name()
        )));
    }
    if !matches!(
        (wa.component, wa.normalized),
        (Component::F32, _) | (Component::U8, true) | (Component::U16, true)
    ) {
        return Err(cx.err(format!(
            "accessor {} (WEIGHTS_{set} of {here}) has component type {}{}; FLOAT or normalized UNSIGNED_BYTE/SHORT expected",
            wa.index,
            wa.component.name(),
            if wa.normalized { "" } else { " (not normalized)" }
        )));
    }
    let j = read_u32::<4>(cx, ja, &format!("JOINTS_{set} of {here}"))?;
    let w = read_f32::<4>(cx, wa, &format!("WEIGHTS_{set} of {here}"))?;
    cx.charge(j.len() as u64 * 8, || format!("JOINTS_{set} of {here}"))?;
    let mut joints = Vec::with_capacity(j.len());
    for (v, (jv, wv)) in j.iter().zip(&w).enumerate() {
        let mut out = [0u16; 4];
        for k in 0..4 {
            if !wv[k].is_finite() {
                return Err(cx.err(format!("WEIGHTS_{set} of {here} vertex {v} is not finite")));
            }
            if jv[k] as usize >= joint_count {
                if wv[k] != 0.0 {
                    return Err(cx.err(format!(
                        "JOINTS_{set} of {here} vertex {v} refers to joint {} (weight {}), but the skin has {joint_count} joints",
                        jv[k], wv[k]
                    )));
                }
                cx.warn.stray_zero_weight_joints += 1;
            } else {
                out[k] = jv[k] as u16;
            }
        }
        joints.push(out);
    }
    Ok((joints, w))
}
