//! Which skin vertices lie on the body's outer surface, and which are hidden inside another closed
//! part of the same skin.
//!
//! Game characters are often built from closed parts that overlap where they meet: an arm tube
//! pushed into the torso, a leg into the pelvis, a glove over the wrist (the built-in ninja is made
//! this way, and many Mixamo characters have separate closed eyes, teeth or armour pieces). The
//! part of a tube inside its neighbour, with its cap, is never seen and no cloth can touch it;
//! it is not body surface. Fitting proxies to it drags spheres into the neighbour's volume, and
//! measuring the proxies against it counts a perfectly fitted body as "deep inside".
//!
//! A vertex is hidden when a point just outside it (offset along its normal) is inside a closed
//! component of the mesh other than its own. Inside is decided per component by ray parity
//! (Jordan curve theorem in 3-D: a ray from a point inside a closed surface crosses it an odd
//! number of times), so two overlapping occluders do not cancel each other. Only components that
//! are closed 2-manifolds (every edge shared by exactly two triangles, after welding vertices at
//! identical positions across UV seams) occlude; open components (a cape, hair cards, a mesh with
//! holes) never hide anything, so a character made of one open sheet keeps every vertex.

use crate::math::Vec3;
use crate::rig::SkinnedMesh;
use std::collections::HashMap;

/// For every vertex of `meshes`, concatenated in order: true when it is hidden inside another
/// closed part (see the module docs). Bad indices are ignored; never panics.
pub fn hidden_vertices(meshes: &[&SkinnedMesh]) -> Vec<bool> {
    // Concatenate positions and triangles.
    let mut pos: Vec<Vec3> = Vec::new();
    let mut tris: Vec<[u32; 3]> = Vec::new();
    for m in meshes {
        let base = pos.len() as u32;
        let n = m.positions.len();
        pos.extend_from_slice(&m.positions);
        for t in m.indices.chunks_exact(3) {
            if t.iter().all(|&i| (i as usize) < n) && t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
                tris.push([base + t[0], base + t[1], base + t[2]]);
            }
        }
    }
    let nv = pos.len();
    let mut hidden = vec![false; nv];
    if tris.is_empty() || !pos.iter().all(|p| p.is_finite()) {
        return hidden;
    }

    // Weld vertices at bit-identical positions (UV and normal seams duplicate them).
    let mut weld: Vec<u32> = (0..nv as u32).collect();
    {
        let mut first: HashMap<[u32; 3], u32> = HashMap::with_capacity(nv);
        for (i, p) in pos.iter().enumerate() {
            let key = [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()];
            weld[i] = *first.entry(key).or_insert(i as u32);
        }
    }
    // Triangles that collapse when welded (a pole's fan) have no area and no edges.
    let welded: Vec<[u32; 3]> = tris
        .iter()
        .map(|t| t.map(|i| weld[i as usize]))
        .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
        .collect();

    // Connected components over welded triangles (union–find).
    let mut parent: Vec<u32> = (0..nv as u32).collect();
    fn find(parent: &mut [u32], mut i: u32) -> u32 {
        while parent[i as usize] != i {
            parent[i as usize] = parent[parent[i as usize] as usize];
            i = parent[i as usize];
        }
        i
    }
    for t in &welded {
        for e in [(t[0], t[1]), (t[1], t[2])] {
            let (a, b) = (find(&mut parent, e.0), find(&mut parent, e.1));
            if a != b {
                parent[a.max(b) as usize] = a.min(b);
            }
        }
    }
    let mut comp_id: HashMap<u32, u32> = HashMap::new();
    let mut comp_of_vertex = vec![u32::MAX; nv];
    for v in 0..nv {
        let root = find(&mut parent, weld[v]);
        let next = comp_id.len() as u32;
        comp_of_vertex[v] = *comp_id.entry(root).or_insert(next);
    }
    let ncomp = comp_id.len();
    let comp_of_tri: Vec<u32> = welded
        .iter()
        .map(|t| comp_of_vertex[t[0] as usize])
        .collect();

    // Closed 2-manifold components: every undirected edge used exactly twice.
    let mut edge_use: HashMap<(u32, u32), u32> = HashMap::with_capacity(3 * welded.len() / 2);
    for t in &welded {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            *edge_use.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    let mut closed = vec![true; ncomp];
    for (&(a, _), &n) in &edge_use {
        if n != 2 {
            closed[comp_of_vertex[a as usize] as usize] = false;
        }
    }
    if closed.iter().filter(|&&c| c).count() == 0 || ncomp < 2 {
        return hidden;
    }

    // Area-weighted vertex normals from the welded topology (seam copies agree).
    let mut normal = vec![Vec3::ZERO; nv];
    for t in &welded {
        let [a, b, c] = t.map(|i| pos[i as usize]);
        let n = (b - a).cross(c - a);
        for &i in t {
            normal[i as usize] += n;
        }
    }

    // Rays along +X; triangles of closed components binned by their (y, z) bounds.
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for p in &pos {
        lo = lo.min(*p);
        hi = hi.max(*p);
    }
    let diag = (hi - lo).length().max(1e-12);
    let eps = 2e-4 * diag;
    let g = ((tris.len() as f32).sqrt() * 0.5).clamp(1.0, 256.0) as usize;
    let (sy, sz) = (
        g as f32 / (hi.y - lo.y).max(1e-12),
        g as f32 / (hi.z - lo.z).max(1e-12),
    );
    let cell = |y: f32, z: f32| -> (usize, usize) {
        (
            (((y - lo.y) * sy) as isize).clamp(0, g as isize - 1) as usize,
            (((z - lo.z) * sz) as isize).clamp(0, g as isize - 1) as usize,
        )
    };
    let mut bins: Vec<Vec<u32>> = vec![Vec::new(); g * g];
    for (ti, t) in welded.iter().enumerate() {
        if !closed[comp_of_tri[ti] as usize] {
            continue;
        }
        let [a, b, c] = t.map(|i| pos[i as usize]);
        let (y0, z0) = cell(a.y.min(b.y).min(c.y), a.z.min(b.z).min(c.z));
        let (y1, z1) = cell(a.y.max(b.y).max(c.y), a.z.max(b.z).max(c.z));
        for iy in y0..=y1 {
            for iz in z0..=z1 {
                bins[iy * g + iz].push(ti as u32);
            }
        }
    }

    let mut parity = vec![false; ncomp];
    let mut touched: Vec<u32> = Vec::new();
    for v in 0..nv {
        let n = normal[weld[v] as usize];
        let Some(n) = n.try_normalize() else { continue };
        let p = pos[v] + n * eps;
        let own = comp_of_vertex[v];
        let (iy, iz) = cell(p.y, p.z);
        if p.y < lo.y || p.y > hi.y || p.z < lo.z || p.z > hi.z {
            continue;
        }
        touched.clear();
        for &ti in &bins[iy * g + iz] {
            let c = comp_of_tri[ti as usize];
            if c == own {
                continue;
            }
            let [a, b, cc] = welded[ti as usize].map(|i| pos[i as usize]);
            if crosses_plus_x(p, a, b, cc) {
                let slot = &mut parity[c as usize];
                if !*slot {
                    touched.push(c);
                }
                *slot = !*slot;
            }
        }
        hidden[v] = touched.iter().any(|&c| parity[c as usize]);
        for &c in &touched {
            parity[c as usize] = false;
        }
    }
    hidden
}

/// Does the ray from `p` along +X cross triangle `abc`? The (y, z) projection decides whether
/// the ray's line meets the triangle (with a half-open rule on edges so that a ray through a
/// shared edge is counted once), the plane equation where.
fn crosses_plus_x(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> bool {
    // Edge functions in the (y, z) plane, in f64 so that near-degenerate cases stay consistent
    // between the two triangles sharing an edge.
    let (py, pz) = (p.y as f64, p.z as f64);
    let e = |u: Vec3, w: Vec3| -> f64 {
        (w.y as f64 - u.y as f64) * (pz - u.z as f64)
            - (w.z as f64 - u.z as f64) * (py - u.y as f64)
    };
    let (e0, e1, e2) = (e(a, b), e(b, c), e(c, a));
    let area = e0 + e1 + e2;
    if area == 0.0 {
        return false;
    }
    // Half-open: a point exactly on an edge counts for the triangle on one side only.
    let inside = |e: f64, u: Vec3, w: Vec3| {
        if e != 0.0 {
            (e > 0.0) == (area > 0.0)
        } else {
            // Tie rule on the edge direction (consistent for both triangles of an edge, which
            // traverse it in opposite directions).
            let (dy, dz) = (w.y - u.y, w.z - u.z);
            (dy > 0.0 || (dy == 0.0 && dz > 0.0)) == (area > 0.0)
        }
    };
    if !(inside(e0, a, b) && inside(e1, b, c) && inside(e2, c, a)) {
        return false;
    }
    // Barycentric weights (e1 ↔ a, e2 ↔ b, e0 ↔ c) give the hit's x.
    let x = (e1 * a.x as f64 + e2 * b.x as f64 + e0 * c.x as f64) / area;
    x > p.x as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed UV sphere (poles welded, seam duplicated like an exported mesh).
    fn sphere(c: Vec3, r: f32, n: usize) -> SkinnedMesh {
        let mut m = SkinnedMesh::default();
        for i in 0..=n {
            let th = std::f32::consts::PI * i as f32 / n as f32;
            for j in 0..=n {
                let ph = std::f32::consts::TAU * j as f32 / n as f32;
                m.positions
                    .push(c + r * Vec3::new(th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin()));
            }
        }
        // Poles and the seam: make the copies bit-identical so they weld.
        for i in 0..=n {
            m.positions[i * (n + 1) + n] = m.positions[i * (n + 1)];
        }
        for j in 0..=n {
            m.positions[j] = c + Vec3::Y * r;
            m.positions[n * (n + 1) + j] = c - Vec3::Y * r;
        }
        for i in 0..n {
            for j in 0..n {
                let a = (i * (n + 1) + j) as u32;
                let b = a + (n + 1) as u32;
                m.indices.extend_from_slice(&[a, b, a + 1, a + 1, b, b + 1]);
            }
        }
        m
    }

    #[test]
    fn overlapping_closed_parts_hide_each_others_insides() {
        let a = sphere(Vec3::ZERO, 1.0, 24);
        let b = sphere(Vec3::new(1.2, 0.1, 0.05), 0.6, 24);
        let h = hidden_vertices(&[&a, &b]);
        let na = a.positions.len();
        for (v, &hv) in h.iter().enumerate() {
            let (p, inside_other) = if v < na {
                let p = a.positions[v];
                (p, (p - Vec3::new(1.2, 0.1, 0.05)).length() < 0.6 - 0.02)
            } else {
                let p = b.positions[v - na];
                (p, p.length() < 1.0 - 0.02)
            };
            let outside_other = if v < na {
                (p - Vec3::new(1.2, 0.1, 0.05)).length() > 0.6 + 0.02
            } else {
                p.length() > 1.0 + 0.02
            };
            if inside_other {
                assert!(hv, "vertex {v} at {p} is inside the other part");
            }
            if outside_other {
                assert!(!hv, "vertex {v} at {p} is outside the other part");
            }
        }
        assert!(h.iter().any(|&x| x));
    }

    #[test]
    fn open_parts_hide_nothing() {
        let a = sphere(Vec3::ZERO, 1.0, 16);
        let mut b = sphere(Vec3::new(0.5, 0.0, 0.0), 0.8, 16);
        // Open b: drop its first band of triangles.
        b.indices.drain(0..6 * 16);
        let h = hidden_vertices(&[&a, &b]);
        assert!(
            h[..a.positions.len()].iter().all(|&x| !x),
            "b is open: hides nothing"
        );
        assert!(
            h[a.positions.len()..].iter().any(|&x| x),
            "a is closed: hides b's inside"
        );
        // One closed part alone hides nothing; bad indices do not panic.
        let mut c = sphere(Vec3::ZERO, 1.0, 8);
        c.indices.extend_from_slice(&[0, 1, 99_999]);
        assert!(hidden_vertices(&[&c]).iter().all(|&x| !x));
    }
}
