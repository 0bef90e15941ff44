//! Open sheets among the body's meshes: parts with no inside.
//!
//! A character's meshes are mostly closed parts (limbs, a head, a helmet, a shield), and the
//! check's inside test (the generalized winding number, `crate::check::winding`) and the
//! skin-contact stage's (the side of the nearest surface, `crate::cloth::skin`) both assume that
//! a point near the surface is either in front of it or behind it, inside. A single-sided sheet
//! has no inside: KayKit's capes are one curved plane hung from the chest (78 and 84 triangles,
//! 26 open edges each). Behind such a sheet the winding number is about ½ over a region as
//! deep as the sheet is curved, and the nearest surface's side says "inside" up to any depth:
//! the KayKit Barbarian's hakama, hanging 35 mm behind its cape (between the cape and the
//! back, where it belongs), counted as 35 mm inside the skin at w = 0.50-0.53, and the
//! skin-contact stage pushed it out through the cape.
//!
//! **Which parts are sheets.** The vertices of each node's primitives are welded together
//! (bit-identical positions: UV and normal seams split them, and a part may be split into
//! primitives by material: RobotExpressive's head and torso are open primitives, up to 0.85
//! below, that close each other) and the triangles grouped into connected parts. A part's
//! vector area `Σ a_t n_t` is zero when it is closed and equals that of its open boundary when
//! it is not (Stokes); a flat sheet's is its whole area, a hemisphere's half its area. A part
//! whose vector area is at least [`SHEET_OPENNESS`] of its area is a sheet: flatter than a
//! bowl. Small open pieces laid on a closed part (eyes, brows, a beard plate, the open rings of
//! a hat: 0.14-0.46 on the cc0 characters) keep counting; they sit on the surface and their
//! own winding number barely reaches ½. Every mesh of the built-in ninja and of the corpus
//! bodies is closed (no open edge), so none of this changes them.

use crate::math::Vec3;
use crate::rig::Rig;

/// A connected part whose vector area is at least this fraction of its area is an open sheet
/// (a hemisphere's is exactly ½, a closed part's 0, a flat sheet's 1).
pub const SHEET_OPENNESS: f64 = 0.5;

/// For every triangle of `rig`'s meshes, in order (the first mesh's triangles first, as
/// `crate::check::body_query` and the skin surface number them): whether it belongs to an
/// open sheet. The primitives of one node are welded together (a box head whose face is a
/// primitive of its own, with its own material, is closed only with it), each in its own space
/// (a vector-area ratio does not change under the similarity that places it).
pub fn sheet_triangles(rig: &Rig) -> Vec<bool> {
    let mut out: Vec<Vec<bool>> = vec![Vec::new(); rig.meshes.len()];
    let mut done = vec![false; rig.meshes.len()];
    for i in 0..rig.meshes.len() {
        if done[i] {
            continue;
        }
        let key = (rig.meshes[i].node, rig.meshes[i].skin);
        let group: Vec<usize> = (i..rig.meshes.len())
            .filter(|&k| (rig.meshes[k].node, rig.meshes[k].skin) == key)
            .collect();
        // The group as one indexed mesh.
        let mut positions = Vec::new();
        let mut indices = Vec::new();
        for &k in &group {
            let m = &rig.meshes[k];
            let base = positions.len() as u32;
            positions.extend_from_slice(&m.positions);
            indices.extend(m.indices.iter().map(|&v| base.saturating_add(v)));
        }
        let flags = mesh_sheets(&positions, &indices);
        let mut at = 0;
        for &k in &group {
            let n = rig.meshes[k].indices.len() / 3;
            out[k] = flags[at..at + n].to_vec();
            at += n;
            done[k] = true;
        }
    }
    out.concat()
}

/// For every mesh of `rig`, per vertex: whether it belongs to a triangle of an open sheet
/// ([`sheet_triangles`]).
pub fn sheet_vertices_per_mesh(rig: &Rig) -> Vec<Vec<bool>> {
    let tris = sheet_triangles(rig);
    let mut first_tri = 0;
    rig.meshes
        .iter()
        .map(|m| {
            let mut flags = vec![false; m.positions.len()];
            for (t, k) in m.indices.chunks_exact(3).zip(first_tri..) {
                if tris.get(k).copied().unwrap_or(false) {
                    for &v in t {
                        if let Some(f) = flags.get_mut(v as usize) {
                            *f = true;
                        }
                    }
                }
            }
            first_tri += m.indices.len() / 3;
            flags
        })
        .collect()
}

/// [`sheet_triangles`] for one indexed mesh.
pub fn mesh_sheets(positions: &[Vec3], indices: &[u32]) -> Vec<bool> {
    let tris = indices.len() / 3;
    // Weld bit-identical positions.
    let mut id = std::collections::HashMap::with_capacity(positions.len());
    let weld: Vec<u32> = positions
        .iter()
        .map(|p| {
            let key = (p.x.to_bits(), p.y.to_bits(), p.z.to_bits());
            let next = id.len() as u32;
            *id.entry(key).or_insert(next)
        })
        .collect();
    let mut parent: Vec<u32> = (0..id.len() as u32).collect();
    fn root(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            let up = parent[parent[x as usize] as usize];
            parent[x as usize] = up;
            x = up;
        }
        x
    }
    let corner = |v: u32| weld.get(v as usize).copied();
    for t in indices.chunks_exact(3) {
        let Some(a) = corner(t[0]) else { continue };
        let a = root(&mut parent, a);
        for &v in &t[1..] {
            if let Some(b) = corner(v) {
                let b = root(&mut parent, b);
                parent[b as usize] = a;
            }
        }
    }
    // Vector area and area of each part.
    let mut sums: std::collections::HashMap<u32, (glam::DVec3, f64)> = Default::default();
    let mut part = vec![u32::MAX; tris];
    for (k, t) in indices.chunks_exact(3).enumerate() {
        let (Some(a), Some(b), Some(c)) = (
            positions.get(t[0] as usize),
            positions.get(t[1] as usize),
            positions.get(t[2] as usize),
        ) else {
            continue;
        };
        let Some(w) = corner(t[0]) else { continue };
        let r = root(&mut parent, w);
        part[k] = r;
        let n = 0.5 * (*b - *a).as_dvec3().cross((*c - *a).as_dvec3());
        if !n.is_finite() {
            continue;
        }
        let s = sums.entry(r).or_default();
        s.0 += n;
        s.1 += n.length();
    }
    part.iter()
        .map(|r| {
            sums.get(r)
                .is_some_and(|&(v, a)| a > 0.0 && v.length() >= SHEET_OPENNESS * a)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit cube (closed, split at its edges as UV seams split real meshes: 24 vertices) and
    /// a curved sheet beside it in one mesh.
    #[test]
    fn a_sheet_is_told_from_a_closed_part_with_seams() {
        let mut p = Vec::new();
        let mut idx = Vec::new();
        // Six faces, four vertices each (unwelded), outward.
        let faces = [
            (Vec3::X, Vec3::Y, Vec3::Z),
            (-Vec3::X, Vec3::Z, Vec3::Y),
            (Vec3::Y, Vec3::Z, Vec3::X),
            (-Vec3::Y, Vec3::X, Vec3::Z),
            (Vec3::Z, Vec3::X, Vec3::Y),
            (-Vec3::Z, Vec3::Y, Vec3::X),
        ];
        for (n, u, v) in faces {
            let b = p.len() as u32;
            for (su, sv) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                p.push(0.5 * (n + su * u + sv * v));
            }
            idx.extend([b, b + 1, b + 2, b, b + 2, b + 3]);
        }
        let cube_tris = idx.len() / 3;
        // A quarter cylinder sheet, 4 × 3 quads.
        let b = p.len() as u32;
        for i in 0..=4 {
            let a = std::f32::consts::FRAC_PI_2 * i as f32 / 4.0;
            for j in 0..=3 {
                p.push(Vec3::new(3.0 + a.cos(), j as f32 * 0.5, a.sin()));
            }
        }
        for i in 0..4u32 {
            for j in 0..3u32 {
                let v = b + i * 4 + j;
                idx.extend([v, v + 4, v + 5, v, v + 5, v + 1]);
            }
        }
        let s = mesh_sheets(&p, &idx);
        assert_eq!(s.len(), idx.len() / 3);
        assert!(s[..cube_tris].iter().all(|&x| !x), "the cube is closed");
        assert!(
            s[cube_tris..].iter().all(|&x| x),
            "the quarter cylinder is a sheet"
        );
        // Without one face the cube is a box open at one end: vector area 1 of 5, closed enough
        // to keep an inside.
        let s = mesh_sheets(&p, &idx[6..]);
        assert!(s[..cube_tris - 2].iter().all(|&x| !x));

        // The cube as two primitives of one node (a box head whose face has a material of its
        // own): closed together, though each is open. The sheet as a mesh of another node is
        // a sheet still.
        let prim = |name: &str, node: u32, idx: &[u32]| crate::rig::SkinnedMesh {
            name: name.into(),
            node,
            positions: p.clone(),
            indices: idx.to_vec(),
            ..Default::default()
        };
        let split = 6; // the first face (two triangles)
        let rig = Rig {
            meshes: vec![
                prim("Head#0", 1, &idx[..split]),
                prim("Cape#0", 2, &idx[3 * cube_tris..]),
                prim("Head#1", 1, &idx[split..3 * cube_tris]),
            ],
            ..Default::default()
        };
        let s = sheet_triangles(&rig);
        let cape_tris = idx.len() / 3 - cube_tris;
        assert_eq!(s.len(), cube_tris + cape_tris);
        assert!(s[..2].iter().all(|&x| !x), "the face, welded to the box");
        assert!(s[2..2 + cape_tris].iter().all(|&x| x), "the cape");
        assert!(
            s[2 + cape_tris..].iter().all(|&x| !x),
            "the rest of the box"
        );
    }
}
