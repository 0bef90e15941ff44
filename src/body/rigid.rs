//! Rigid parts as body: meshes that follow a joint node rigidly (RobotExpressive's torso, head,
//! arms and legs; KayKit's hats, capes, weapons and shields) and meshes bound to another skin
//! over the same joints (RobotExpressive's second hand) are as much the body as the skin is, so
//! the proxies must cover them and the garments' pins may ride them. [`with_rigid_parts`] gives
//! a copy of the rig in which every such mesh is bound to the chosen skin, each vertex weighted
//! 1 to the nearest skin joint at or above the mesh's node (for a rigid mesh), or to the same
//! joints by node (for a mesh of another skin), at the same rest position. The fitting code then
//! needs no special case; the scene keeps drawing and exporting the rig as loaded.
//!
//! A rigid mesh moves with the joint it is given exactly as long as the nodes between that joint
//! and the mesh's node keep their rest transforms (true in the files seen: the mesh nodes are
//! children of joint nodes and are not animated).

use crate::math::{Mat3, Mat4};
use crate::rig::{Rig, SkinnedMesh};

/// What [`with_rigid_parts`] appends to the name of a rigid mesh it binds to the skin.
pub const RIGID_PART: &str = " (rigid, as body)";

/// Whether `mesh` is a rigid mesh that [`with_rigid_parts`] bound to the skin (a hat, a helmet,
/// a prop), not one the file skins.
pub fn is_rigid_part(mesh: &SkinnedMesh) -> bool {
    mesh.name.ends_with(RIGID_PART)
}

/// The name of `mesh` as the file gives it: without the mark [`with_rigid_parts`] appends to a
/// rigid mesh it binds (for messages: "its mesh 'Head/Head#0'").
pub fn file_mesh_name(mesh: &SkinnedMesh) -> &str {
    mesh.name.strip_suffix(RIGID_PART).unwrap_or(&mesh.name)
}

/// The rig with its rigid and other-skin meshes bound to skin `skin` (appended after the rig's
/// own meshes, so mesh indices of the originals are unchanged), or `None` when there is nothing
/// to add (then the rig itself is the body) or the rig has no such skin.
pub fn with_rigid_parts(rig: &Rig, skin: usize) -> Option<Rig> {
    let s = rig.skins.get(skin)?;
    let rest = rig.skeleton.rest_world();
    let mut wfb = Vec::new();
    super::world_from_bind(&rest, s, &mut wfb);
    let joint_of_node = |n: usize| s.joints.iter().position(|&j| j as usize == n);
    let mut added = Vec::new();
    for m in &rig.meshes {
        if m.skin == Some(skin as u32) || m.positions.is_empty() {
            continue;
        }
        let converted = match m.skin {
            None => rigid_to_skin(rig, m, &rest, &wfb, &joint_of_node),
            Some(other) => other_skin_to_skin(rig, m, other as usize, &rest, &wfb, &joint_of_node),
        };
        added.extend(converted.map(|mut c| {
            c.skin = Some(skin as u32);
            c
        }));
    }
    if added.is_empty() {
        return None;
    }
    let mut out = rig.clone();
    out.meshes.extend(added);
    Some(out)
}

/// Mesh `mesh` of the rig bound to skin `skin` the way [`with_rigid_parts`] binds it (bind-space
/// positions, joints and weights of that skin): a clone if it already belongs to the skin, the
/// converted copy for a rigid or other-skin mesh, `None` if it cannot be bound. A mesh simulated
/// as cloth (`garments::mesh`) pins its vertices with these influences.
pub fn mesh_bound_to_skin(rig: &Rig, mesh: usize, skin: usize) -> Option<SkinnedMesh> {
    let s = rig.skins.get(skin)?;
    let m = rig.meshes.get(mesh)?;
    if m.skin == Some(skin as u32) {
        return (m.joints.len() == m.positions.len()).then(|| m.clone());
    }
    let rest = rig.skeleton.rest_world();
    let mut wfb = Vec::new();
    super::world_from_bind(&rest, s, &mut wfb);
    let joint_of_node = |n: usize| s.joints.iter().position(|&j| j as usize == n);
    let converted = match m.skin {
        None => rigid_to_skin(rig, m, &rest, &wfb, &joint_of_node),
        Some(other) => other_skin_to_skin(rig, m, other as usize, &rest, &wfb, &joint_of_node),
    };
    converted.map(|mut c| {
        c.skin = Some(skin as u32);
        c
    })
}

/// A rigid mesh bound with weight 1 to the nearest joint of the skin at or above its node.
fn rigid_to_skin(
    rig: &Rig,
    m: &SkinnedMesh,
    rest: &[Mat4],
    wfb: &[Mat4],
    joint_of_node: &dyn Fn(usize) -> Option<usize>,
) -> Option<SkinnedMesh> {
    let k = rig
        .skeleton
        .self_and_ancestors(m.node as usize)
        .find_map(joint_of_node)?;
    let world_from_mesh = *rest.get(m.node as usize)?;
    let bind_from_world = wfb.get(k)?.inverse();
    let bind_from_mesh = bind_from_world * world_from_mesh;
    if !bind_from_mesh.is_finite() || bind_from_mesh.determinant().abs() < 1e-20 {
        return None;
    }
    let normal_m = Mat3::from_mat4(bind_from_mesh).inverse().transpose();
    let mut out = m.clone();
    out.name = format!("{}{RIGID_PART}", m.name);
    out.positions = m
        .positions
        .iter()
        .map(|&p| bind_from_mesh.transform_point3(p))
        .collect();
    out.normals = m
        .normals
        .iter()
        .map(|&v| (normal_m * v).normalize_or_zero())
        .collect();
    out.tangents.clear();
    out.joints = vec![[k as u16, 0, 0, 0]; m.positions.len()];
    out.weights = vec![[1.0, 0.0, 0.0, 0.0]; m.positions.len()];
    out.joints1.clear();
    out.weights1.clear();
    Some(out)
}

/// A mesh of another skin whose joints are all joints of this one, rebound to this skin: each
/// vertex keeps its weights on the same nodes and its rest position.
fn other_skin_to_skin(
    rig: &Rig,
    m: &SkinnedMesh,
    other: usize,
    rest: &[Mat4],
    wfb: &[Mat4],
    joint_of_node: &dyn Fn(usize) -> Option<usize>,
) -> Option<SkinnedMesh> {
    let so = rig.skins.get(other)?;
    if m.joints.len() != m.positions.len() || !m.joints1.is_empty() {
        return None;
    }
    let mut wfb_other = Vec::new();
    super::world_from_bind(rest, so, &mut wfb_other);
    let mut out = m.clone();
    out.name = format!("{} (skin {other}, as body)", m.name);
    out.tangents.clear();
    for v in 0..m.positions.len() {
        let (j, w) = (m.joints[v], m.weights[v]);
        let mut nj = [0u16; 4];
        for k in 0..4 {
            if w[k] > 0.0 {
                let node = *so.joints.get(j[k] as usize)? as usize;
                nj[k] = joint_of_node(node)? as u16;
            }
        }
        let q = blend(&wfb_other, j, w).transform_point3(m.positions[v]);
        let b = blend(wfb, nj, w);
        if b.determinant().abs() < 1e-20 {
            return None;
        }
        let bind_from_world = b.inverse();
        out.positions[v] = bind_from_world.transform_point3(q);
        if let Some(n) = m.normals.get(v) {
            let world_n = Mat3::from_mat4(blend(&wfb_other, j, w))
                .inverse()
                .transpose()
                * *n;
            out.normals[v] = (Mat3::from_mat4(bind_from_world).inverse().transpose() * world_n)
                .normalize_or_zero();
        }
        out.joints[v] = nj;
    }
    Some(out)
}

fn blend(m: &[Mat4], j: [u16; 4], w: [f32; 4]) -> Mat4 {
    let mut out = Mat4::ZERO;
    let mut total = 0.0;
    for k in 0..4 {
        if w[k] > 0.0 {
            out += m.get(j[k] as usize).copied().unwrap_or(Mat4::IDENTITY) * w[k];
            total += w[k];
        }
    }
    if total > 0.0 {
        out * (1.0 / total)
    } else {
        Mat4::IDENTITY
    }
}
