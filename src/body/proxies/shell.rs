//! Thin shells for open sheets: a cape that is one curved plane (KayKit's, hung from the chest:
//! [`crate::body::sheets`]) has no volume for the stadium fit to bound. Fitted with the rest of
//! its bone, its vertices drew spheres round it that stood 9 cm off it and up to 24 cm off any
//! skin: blobs at the cape's edges that the hakama and the sash tails caught on (the KayKit
//! Rogue's hakama failed its return to the drape in 16 of 76 clips), and round which the sash
//! was laid out as a hoop. Left out of the fit, the sheet is instead covered by a shell of
//! tapered capsules of one radius laid along the edges of its triangles, each triangle first
//! cut into equal smaller ones whose longest edge is at most three radii: a slab a radius
//! thick either side of the sheet along the edges and at least half as thick in the middle of
//! the cut triangles, which cloth can rest on from either side and not pass.

use super::fit::dominant_joint;
use super::Proxies;
use crate::rig::{Rig, SkinnedMesh};
use std::collections::HashMap;

/// Radius of a sheet's shell, m: the cloth keeps this far (plus its thickness) from the sheet.
pub const SHELL_RADIUS: f32 = 0.02;

/// Triangles are cut until no edge is longer than this many shell radii. No point of a triangle
/// whose longest edge is 3 r is farther than 0.87 r from an edge (the inradius of the
/// equilateral one), so across the sheet the capsules of the edges reach at least
/// √(1 − 0.87²) r = r / 2 either side of it.
const EDGE_IN_RADII: f32 = 3.0;

/// For every vertex of the meshes bound to `rig.skins[skin]` (mesh order, as the fit numbers
/// them): whether it belongs to a triangle of an open sheet ([`crate::body::sheet_triangles`]).
pub(super) fn sheet_vertices(rig: &Rig, skin: usize) -> Vec<bool> {
    let sheet_tris = crate::body::sheet_triangles(rig);
    let mut out = Vec::new();
    let mut first_tri = 0;
    for m in &rig.meshes {
        let tris = first_tri..first_tri + m.indices.len() / 3;
        first_tri = tris.end;
        if m.skin != Some(skin as u32) {
            continue;
        }
        let base = out.len();
        out.resize(base + m.positions.len(), false);
        for (t, k) in m.indices.chunks_exact(3).zip(tris) {
            if sheet_tris.get(k).copied().unwrap_or(false) {
                for &v in t {
                    if let Some(f) = out.get_mut(base + v as usize) {
                        *f = true;
                    }
                }
            }
        }
    }
    out
}

/// Appends to `px` the shells of the open sheets of the meshes bound to `rig.skins[skin]`: a
/// sphere at every corner of the cut triangles (shared corners once), each following the skin
/// joint that dominates the nearest corner of its original triangle, and a capsule along every
/// edge. `metres_per_unit[k]` converts joint `k`'s bind units to metres. Nothing is added
/// where there is no sheet.
pub(super) fn add_sheet_shells(rig: &Rig, skin: usize, metres_per_unit: &[f32], px: &mut Proxies) {
    let nj = metres_per_unit.len();
    let sheet_tris = crate::body::sheet_triangles(rig);
    let mut first_tri = 0;
    // Corners welded by their bind position on a grid of a hundredth of the radius: the cut
    // triangles on either side of an original edge share its corners, one sphere each.
    let mut corners: HashMap<(i64, i64, i64), u32> = HashMap::new();
    let mut edges: HashMap<(u32, u32), ()> = HashMap::new();
    for m in &rig.meshes {
        let tris = first_tri..first_tri + m.indices.len() / 3;
        first_tri = tris.end;
        if m.skin != Some(skin as u32) {
            continue;
        }
        for (t, k) in m.indices.chunks_exact(3).zip(tris) {
            if !sheet_tris.get(k).copied().unwrap_or(false) {
                continue;
            }
            let v = [t[0] as usize, t[1] as usize, t[2] as usize];
            if v.iter().any(|&i| i >= m.positions.len()) {
                continue;
            }
            let joints = v.map(|i| dominant_joint(m, i, nj));
            if joints.iter().any(|&j| j as usize >= nj) {
                continue;
            }
            add_triangle(m, v, joints, metres_per_unit, px, &mut corners, &mut edges);
        }
    }
    let mut pairs: Vec<(u32, u32)> = edges.into_keys().collect();
    pairs.sort_unstable();
    px.capsules.extend(pairs.into_iter().map(|(a, b)| [a, b]));
}

fn add_triangle(
    m: &SkinnedMesh,
    v: [usize; 3],
    joints: [u32; 3],
    metres_per_unit: &[f32],
    px: &mut Proxies,
    corners: &mut HashMap<(i64, i64, i64), u32>,
    edges: &mut HashMap<(u32, u32), ()>,
) {
    let [a, b, c] = v.map(|i| m.positions[i]);
    // Bind units per metre of this triangle (its first corner's joint; a sheet follows one
    // joint rigidly, or joints of one scale).
    let unit = 1.0 / metres_per_unit[joints[0] as usize];
    let radius = SHELL_RADIUS * unit;
    let longest = (b - a).length().max((c - b).length()).max((a - c).length());
    if !(longest.is_finite() && radius.is_finite() && radius > 0.0) {
        return;
    }
    let n = ((longest / (EDGE_IN_RADII * radius)).ceil() as usize).clamp(1, 64);
    let weld = 0.01 * radius;
    let mut corner = |i: usize, j: usize| -> u32 {
        let (s, t) = (i as f32 / n as f32, j as f32 / n as f32);
        let p = a + (b - a) * s + (c - a) * t;
        let key = (
            (p.x / weld).round() as i64,
            (p.y / weld).round() as i64,
            (p.z / weld).round() as i64,
        );
        *corners.entry(key).or_insert_with(|| {
            // The joint of the nearest original corner.
            let w = [1.0 - s - t, s, t];
            let k = (0..3).max_by(|&x, &y| w[x].total_cmp(&w[y])).unwrap_or(0);
            px.joint.push(joints[k]);
            px.center_in_bind.push(p);
            px.radius.push(radius);
            (px.joint.len() - 1) as u32
        })
    };
    let mut grid = vec![vec![0u32; n + 1]; n + 1];
    for (i, row) in grid.iter_mut().enumerate() {
        for (j, slot) in row.iter_mut().enumerate().take(n + 1 - i) {
            *slot = corner(i, j);
        }
    }
    let mut edge = |p: u32, q: u32| {
        if p != q {
            edges.insert((p.min(q), p.max(q)), ());
        }
    };
    for i in 0..n {
        for j in 0..n - i {
            let (p, q, r) = (grid[i][j], grid[i + 1][j], grid[i][j + 1]);
            edge(p, q);
            edge(q, r);
            edge(r, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::proxies::{union_sdf, ProxyFrame};
    use crate::math::Vec3;

    /// A quarter cylinder (radius 1 m, 1.5 m high: 4 × 3 quads, edges of 0.39 and 0.5 m) bound
    /// to one joint: its shell holds every point of the sheet, and every point up to half a
    /// radius off it either side, and nothing a radius and 5 mm off it.
    #[test]
    fn a_sheet_is_wrapped_in_a_thin_shell() {
        let mut positions = Vec::new();
        let mut indices = Vec::new();
        let point = |a: f32, y: f32| Vec3::new(a.cos(), y, a.sin());
        for i in 0..=4 {
            for j in 0..=3 {
                positions.push(point(
                    std::f32::consts::FRAC_PI_2 * i as f32 / 4.0,
                    j as f32 * 0.5,
                ));
            }
        }
        for i in 0..4u32 {
            for j in 0..3u32 {
                let v = i * 4 + j;
                indices.extend([v, v + 4, v + 5, v, v + 5, v + 1]);
            }
        }
        let n = positions.len();
        let rig = Rig {
            meshes: vec![SkinnedMesh {
                name: "Cape#0".into(),
                positions,
                indices,
                joints: vec![[0; 4]; n],
                weights: vec![[1.0, 0.0, 0.0, 0.0]; n],
                skin: Some(0),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(sheet_vertices(&rig, 0).iter().all(|&s| s));
        let mut px = Proxies::default();
        add_sheet_shells(&rig, 0, &[1.0], &mut px);
        assert!(px.radius.iter().all(|&r| r == SHELL_RADIUS));
        assert!(px.joint.iter().all(|&j| j == 0));
        let frame = ProxyFrame {
            center: px.center_in_bind.clone(),
            radius: px.radius.clone(),
        };
        let r = SHELL_RADIUS;
        for k in 0..=80 {
            for j in 0..=30 {
                // The chord surface: points on the flat triangles between the grid's columns.
                let i = ((k as f32 / 20.0).floor() as usize).min(3);
                let s = k as f32 / 20.0 - i as f32;
                let (a0, a1) = (
                    std::f32::consts::FRAC_PI_2 * i as f32 / 4.0,
                    std::f32::consts::FRAC_PI_2 * (i + 1) as f32 / 4.0,
                );
                let y = 1.5 * j as f32 / 30.0;
                let on = point(a0, y) * (1.0 - s) + point(a1, y) * s;
                // The flat triangle's normal (horizontal, between its two columns).
                let normal = (point(a0, 0.0) + point(a1, 0.0)).normalize();
                for side in [0.0, 0.49, -0.49] {
                    let p = on + normal * side * r;
                    let d = union_sdf(p, &frame, &px.capsules);
                    assert!(
                        d < 0.0,
                        "{p:?}, {:.1} mm off the sheet, is outside",
                        1e3 * side * r
                    );
                }
                for side in [1.0, -1.0] {
                    let off = on + normal * side * (r + 0.005);
                    let d = union_sdf(off, &frame, &px.capsules);
                    assert!(
                        d > 0.0,
                        "{off:?}, {:.1} mm off the sheet, is inside",
                        1e3 * (r + 0.005)
                    );
                }
            }
        }
    }
}
