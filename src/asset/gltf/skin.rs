//! glTF nodes and skins: the skeleton (every node, parents first, with its rest transform) and
//! each skin's joints, inverse bind matrices and skeleton root (glTF 2.0 §3.5, §3.7.3).

use ::gltf::json;

use super::document::{read_f32, Ctx, Data};
use crate::anim::{Skeleton, Skin};
use crate::asset::AssetError;
use crate::math::{Mat4, Quat, Transform, Vec3};

/// Builds the skeleton (every node, parents first) and the map glTF node → skeleton index.
pub(super) fn build_skeleton(
    cx: &mut Ctx,
    root: &json::Root,
) -> Result<(Skeleton, Vec<u32>), AssetError> {
    let n = root.nodes.len();
    if n >= u32::MAX as usize {
        return Err(cx.err(format!("{n} nodes is more than drape supports")));
    }
    let mut parent: Vec<Option<usize>> = vec![None; n];
    for (i, node) in root.nodes.iter().enumerate() {
        for c in node.children.iter().flatten() {
            let c = c.value();
            if c >= n {
                return Err(cx.err(format!(
                    "node {i} has child {c}, but the file has {n} nodes"
                )));
            }
            if c == i {
                return Err(cx.err(format!(
                    "node {i} is its own child (a cycle in the node hierarchy)"
                )));
            }
            if let Some(p) = parent[c] {
                return Err(cx.err(format!(
                    "node {c} has two parents (nodes {p} and {i}); glTF nodes form a tree"
                )));
            }
            parent[c] = Some(i);
        }
    }
    // Kahn's algorithm, always taking the smallest available file index: a file whose nodes are
    // already ordered parents-first keeps its numbering, others are reordered minimally.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (c, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(c);
        }
    }
    let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
        .filter(|&i| parent[i].is_none())
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(i)) = heap.pop() {
        order.push(i);
        for &c in &children[i] {
            heap.push(std::cmp::Reverse(c));
        }
    }
    if order.len() != n {
        let mut seen = vec![false; n];
        for &i in &order {
            seen[i] = true;
        }
        let first = seen.iter().position(|s| !s).unwrap_or(0);
        return Err(cx.err(format!(
            "the node hierarchy has a cycle (node {first} is its own ancestor)"
        )));
    }
    let mut node_of = vec![0u32; n];
    for (new, &old) in order.iter().enumerate() {
        node_of[old] = new as u32;
    }
    let mut sk = Skeleton {
        names: Vec::with_capacity(n),
        parents: Vec::with_capacity(n),
        rest: Vec::with_capacity(n),
    };
    for &old in &order {
        let node = &root.nodes[old];
        sk.names.push(node.name.clone().unwrap_or_default());
        sk.parents.push(parent[old].map(|p| node_of[p]));
        sk.rest.push(node_transform(cx, node, old)?);
    }
    Ok((sk, node_of))
}

fn node_transform(cx: &mut Ctx, node: &json::Node, i: usize) -> Result<Transform, AssetError> {
    if let Some(m) = node.matrix {
        if m.iter().any(|v| !v.is_finite()) {
            return Err(cx.err(format!("node {i} has a non-finite matrix")));
        }
        let mat = Mat4::from_cols_array(&m);
        let t = Transform::from_mat4(&mat);
        if !t.is_finite() {
            return Err(cx.err(format!("node {i} has a degenerate matrix (zero scale?)")));
        }
        // A TRS reproduces the matrix unless it has shear (or is singular).
        let back = t.to_mat4();
        let scale = m.iter().fold(1.0f32, |a, v| a.max(v.abs()));
        let err = (0..16).fold(0.0f32, |a, k| a.max((back.to_cols_array()[k] - m[k]).abs()));
        if err > 1e-4 * scale {
            cx.warn.shear_nodes.push(i);
        }
        return Ok(t);
    }
    let translation = Vec3::from(node.translation.unwrap_or([0.0; 3]));
    let scale = Vec3::from(node.scale.unwrap_or([1.0; 3]));
    let r = node.rotation.map(|q| q.0).unwrap_or([0.0, 0.0, 0.0, 1.0]);
    let rotation = Quat::from_array(r);
    if !translation.is_finite() || !scale.is_finite() || !rotation.is_finite() {
        return Err(cx.err(format!(
            "node {i} has a non-finite translation, rotation or scale"
        )));
    }
    let rotation = if rotation.length_squared() > 1e-12 {
        rotation.normalize()
    } else {
        cx.warn.push(format!(
            "node {i} has a zero rotation quaternion; identity used"
        ));
        Quat::IDENTITY
    };
    Ok(Transform {
        translation,
        rotation,
        scale,
    })
}

/// Each skin's joints (as skeleton indices), inverse bind matrices and skeleton root.
pub(super) fn build_skins(
    cx: &mut Ctx,
    root: &json::Root,
    data: &Data,
    node_of: &[u32],
) -> Result<Vec<Skin>, AssetError> {
    let mut skins = Vec::with_capacity(root.skins.len());
    for (si, s) in root.skins.iter().enumerate() {
        let mut joints = Vec::with_capacity(s.joints.len());
        for j in &s.joints {
            let j = j.value();
            let node = node_of.get(j).ok_or_else(|| {
                cx.err(format!(
                    "skin {si} has joint node {j}, but the file has {} nodes",
                    node_of.len()
                ))
            })?;
            joints.push(*node);
        }
        if joints.len() > u16::MAX as usize + 1 {
            return Err(cx.err(format!(
                "skin {si} has {} joints; at most 65536 are supported",
                joints.len()
            )));
        }
        let inverse_bind = match s.inverse_bind_matrices {
            None => vec![Mat4::IDENTITY; joints.len()],
            Some(a) => {
                let role = format!("inverse bind matrices of skin {si}");
                let acc = data.accessor(cx, root, a.value(), &role)?;
                if acc.count != joints.len() as u64 {
                    return Err(cx.err(format!(
                        "accessor {} ({role}) has {} matrices but skin {si} has {} joints",
                        a.value(),
                        acc.count,
                        joints.len()
                    )));
                }
                if acc.view.is_some_and(|v| v.stride.is_some()) {
                    cx.warn.forbidden_stride.push(acc.index);
                }
                let m = read_f32::<16>(cx, &acc, &role)?;
                let mut out = Vec::with_capacity(m.len());
                for (k, m) in m.iter().enumerate() {
                    if m.iter().any(|v| !v.is_finite()) {
                        return Err(cx.err(format!(
                            "inverse bind matrix {k} of skin {si} (accessor {}) contains NaN or infinity",
                            a.value()
                        )));
                    }
                    out.push(Mat4::from_cols_array(m));
                }
                out
            }
        };
        let skeleton_root = match s.skeleton {
            None => None,
            Some(r) => Some(*node_of.get(r.value()).ok_or_else(|| {
                cx.err(format!(
                    "skin {si} has skeleton node {}, but the file has {} nodes",
                    r.value(),
                    node_of.len()
                ))
            })?),
        };
        skins.push(Skin {
            name: s.name.clone().unwrap_or_default(),
            joints,
            inverse_bind,
            skeleton_root,
        });
    }
    Ok(skins)
}
