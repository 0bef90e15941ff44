//! Building garments: rectangular grids (the homework's cloths) and arbitrary triangle meshes.
//!
//! Springs follow PHYSICS.md §1: on a grid, structural (i±1, j), (i, j±1), shear (i±1, j±1) and
//! bending (i±2, j), (i, j±2); on a mesh, structural on edges, shear across each pair of
//! triangles sharing an edge (the two opposite vertices) and bending between vertices two edges
//! apart along a nearly straight line.

use std::collections::HashSet;

use crate::math::Vec3;

use super::model::{Garment, SpringKind};
use super::params::GarmentParams;

/// Errors from building a garment out of user data.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BuildError {
    #[error("a grid needs at least 2×2 particles, got {0}×{1}")]
    GridTooSmall(u32, u32),
    #[error("triangle {0} refers to vertex {1}, but the mesh has {2} vertices")]
    BadIndex(usize, u32, usize),
    #[error("pinned index {0} out of range ({1} particles)")]
    BadPin(u32, usize),
    #[error("the mesh has a non-finite vertex position at {0}")]
    NonFinite(usize),
    #[error("the mesh has no triangles")]
    Empty,
}

/// Plane of a grid cloth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orientation {
    /// In the XZ plane (lying flat), at height `origin.y`.
    Horizontal,
    /// In the XY plane (hanging), at depth `origin.z`, rows going down from `origin.y`.
    Vertical,
}

/// A rectangular grid cloth.
#[derive(Clone, Debug)]
pub struct GridSpec {
    /// Particles along the width (columns), ≥ 2.
    pub nx: u32,
    /// Particles along the height (rows), ≥ 2.
    pub ny: u32,
    /// Width (along X), m.
    pub width: f32,
    /// Height (along Z when horizontal, along −Y when vertical), m.
    pub height: f32,
    pub orientation: Orientation,
    /// Position of particle (0, 0), m. Horizontal: the grid spans +X and +Z from it; vertical:
    /// +X and −Y.
    pub origin: Vec3,
    /// Pinned particles as (column, row).
    pub pinned: Vec<(u32, u32)>,
    /// Amplitude, m, of a deterministic out-of-plane offset that breaks the symmetry of a
    /// perfectly flat cloth (the homework jitters vertical cloths by ±1 mm). Default 0.
    pub jitter: f32,
}

impl GridSpec {
    /// A horizontal `n × n` grid of `size × size` metres centred on `centre`.
    pub fn square(n: u32, size: f32, centre: Vec3) -> Self {
        Self {
            nx: n,
            ny: n,
            width: size,
            height: size,
            orientation: Orientation::Horizontal,
            origin: centre - Vec3::new(0.5 * size, 0.0, 0.5 * size),
            pinned: Vec::new(),
            jitter: 0.0,
        }
    }

    pub fn index(&self, col: u32, row: u32) -> u32 {
        row * self.nx + col
    }
}

/// A small integer hash turned into a value in [−1, 1]: deterministic "noise" for the jitter.
fn noise(i: u32) -> f32 {
    let mut h = i.wrapping_mul(0x9E37_79B9) ^ 0x85EB_CA6B;
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    (h & 0xFFFF) as f32 / 32767.5 - 1.0
}

/// Builds a grid garment. Particle (col, row) has index `row * nx + col`; each has the same
/// mass, area density × total area / particle count (PHYSICS.md §1).
pub fn grid(name: &str, spec: &GridSpec, params: &GarmentParams) -> Result<Garment, BuildError> {
    let (nx, ny) = (spec.nx, spec.ny);
    if nx < 2 || ny < 2 {
        return Err(BuildError::GridTooSmall(nx, ny));
    }
    let n = (nx * ny) as usize;
    let dx = spec.width / (nx - 1) as f32;
    let dy = spec.height / (ny - 1) as f32;
    let mut rest = Vec::with_capacity(n);
    for row in 0..ny {
        for col in 0..nx {
            let j = spec.jitter * noise(row * nx + col);
            let (u, v) = (col as f32 * dx, row as f32 * dy);
            rest.push(
                spec.origin
                    + match spec.orientation {
                        Orientation::Horizontal => Vec3::new(u, j, v),
                        Orientation::Vertical => Vec3::new(u, -v, j),
                    },
            );
        }
    }
    let id = |c: u32, r: u32| r * nx + c;
    let mut springs = Vec::with_capacity(n * 6);
    let mut triangles = Vec::with_capacity(2 * n);
    for r in 0..ny {
        for c in 0..nx {
            let i = id(c, r);
            if c + 1 < nx {
                springs.push((i, id(c + 1, r), SpringKind::Structural));
            }
            if r + 1 < ny {
                springs.push((i, id(c, r + 1), SpringKind::Structural));
            }
            if c + 1 < nx && r + 1 < ny {
                springs.push((i, id(c + 1, r + 1), SpringKind::Shear));
                springs.push((id(c + 1, r), id(c, r + 1), SpringKind::Shear));
                // Counter-clockwise seen from +Y for a horizontal cloth (rows along +Z).
                triangles.push([i, id(c, r + 1), id(c + 1, r)]);
                triangles.push([id(c + 1, r), id(c, r + 1), id(c + 1, r + 1)]);
            }
            if c + 2 < nx {
                springs.push((i, id(c + 2, r), SpringKind::Bend));
            }
            if r + 2 < ny {
                springs.push((i, id(c, r + 2), SpringKind::Bend));
            }
        }
    }
    let mut pinned = Vec::with_capacity(spec.pinned.len());
    for &(c, r) in &spec.pinned {
        if c >= nx || r >= ny {
            return Err(BuildError::BadPin(
                r.saturating_mul(nx).saturating_add(c),
                n,
            ));
        }
        pinned.push(id(c, r));
    }
    let m = params.area_density * spec.width * spec.height / n as f32;
    Ok(Garment {
        name: name.to_owned(),
        rest,
        triangles,
        springs,
        mass: vec![m; n],
        pinned,
        params: params.clone(),
        grid: Some((nx, ny)),
    })
}

/// Builds a garment from any triangle mesh (its rest shape is the given positions). Masses are
/// one third of the area of each adjacent triangle × area density.
pub fn mesh(
    name: &str,
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    pinned: &[u32],
    params: &GarmentParams,
) -> Result<Garment, BuildError> {
    let n = positions.len();
    if triangles.is_empty() {
        return Err(BuildError::Empty);
    }
    if let Some(i) = positions.iter().position(|p| !p.is_finite()) {
        return Err(BuildError::NonFinite(i));
    }
    for (t, tri) in triangles.iter().enumerate() {
        for &v in tri {
            if v as usize >= n {
                return Err(BuildError::BadIndex(t, v, n));
            }
        }
    }
    for &p in pinned {
        if p as usize >= n {
            return Err(BuildError::BadPin(p, n));
        }
    }
    let key = |a: u32, b: u32| (a.min(b), a.max(b));
    let mut mass = vec![0.0f32; n];
    // Edge → opposite vertices of the (up to two) triangles sharing it.
    let mut edge_opposite: std::collections::BTreeMap<(u32, u32), Vec<u32>> = Default::default();
    for tri in triangles {
        let [a, b, c] = tri.map(|i| positions[i as usize]);
        let area = 0.5 * (b - a).cross(c - a).length();
        for k in 0..3 {
            mass[tri[k] as usize] += params.area_density * area / 3.0;
            let (u, v, w) = (tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]);
            if u != v {
                edge_opposite.entry(key(u, v)).or_default().push(w);
            }
        }
    }
    let mut seen: HashSet<(u32, u32)> = HashSet::new();
    let mut springs = Vec::new();
    let mut neighbours = vec![Vec::new(); n];
    for &(a, b) in edge_opposite.keys() {
        seen.insert((a, b));
        springs.push((a, b, SpringKind::Structural));
        neighbours[a as usize].push(b);
        neighbours[b as usize].push(a);
    }
    for opp in edge_opposite.values() {
        if let [p, q] = opp[..] {
            if p != q && seen.insert(key(p, q)) {
                springs.push((p.min(q), p.max(q), SpringKind::Shear));
            }
        }
    }
    // Bending: a, v, b nearly collinear (angle at v above ~140°), a and b not yet joined.
    for v in 0..n {
        let nb = &neighbours[v];
        for (ia, &a) in nb.iter().enumerate() {
            for &b in &nb[ia + 1..] {
                let da = positions[a as usize] - positions[v];
                let db = positions[b as usize] - positions[v];
                if da.dot(db) < -0.766 * da.length() * db.length() && seen.insert(key(a, b)) {
                    springs.push((a.min(b), a.max(b), SpringKind::Bend));
                }
            }
        }
    }
    // A vertex used by no triangle would be massless: give it the mean mass so it stays finite.
    let mean = mass.iter().sum::<f32>() / n.max(1) as f32;
    for m in &mut mass {
        if *m <= 0.0 {
            *m = mean.max(1e-9);
        }
    }
    Ok(Garment {
        name: name.to_owned(),
        rest: positions.to_vec(),
        triangles: triangles.to_vec(),
        springs,
        mass,
        pinned: pinned.to_vec(),
        params: params.clone(),
        grid: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_springs_and_mass() {
        let p = GarmentParams::default();
        let g = grid("g", &GridSpec::square(4, 1.0, Vec3::ZERO), &p).unwrap();
        let count = |k| g.springs.iter().filter(|s| s.2 == k).count();
        assert_eq!(count(SpringKind::Structural), 2 * 4 * 3);
        assert_eq!(count(SpringKind::Shear), 2 * 3 * 3);
        assert_eq!(count(SpringKind::Bend), 2 * 4 * 2);
        assert_eq!(g.triangles.len(), 18);
        let total: f32 = g.mass.iter().sum();
        assert!((total - 0.2).abs() < 1e-6);
    }

    #[test]
    fn mesh_of_a_grid_matches_grid_structure() {
        let p = GarmentParams::default();
        let g = grid("g", &GridSpec::square(5, 1.0, Vec3::ZERO), &p).unwrap();
        let m = mesh("m", &g.rest, &g.triangles, &[], &p).unwrap();
        let count = |k| m.springs.iter().filter(|s| s.2 == k).count();
        // Edges: 2·5·4 axis edges + 16 diagonals; shear: the other diagonal of each quad.
        assert_eq!(count(SpringKind::Structural), 40 + 16);
        assert!(count(SpringKind::Shear) >= 16);
        assert_eq!(count(SpringKind::Bend), 2 * 5 * 3 + 3 * 3);
        let total: f32 = m.mass.iter().sum();
        assert!((total - 0.2).abs() < 1e-5);
    }

    #[test]
    fn bad_input_is_an_error() {
        let p = GarmentParams::default();
        let pos = [Vec3::ZERO, Vec3::X, Vec3::Z];
        assert!(matches!(
            mesh("m", &pos, &[[0, 1, 3]], &[], &p),
            Err(BuildError::BadIndex(..))
        ));
        assert!(matches!(
            mesh("m", &pos, &[], &[], &p),
            Err(BuildError::Empty)
        ));
        assert!(matches!(
            mesh("m", &pos, &[[0, 1, 2]], &[7], &p),
            Err(BuildError::BadPin(..))
        ));
        let mut spec = GridSpec::square(1, 1.0, Vec3::ZERO);
        assert!(grid("g", &spec, &p).is_err());
        spec.nx = 3;
        spec.ny = 3;
        spec.pinned = vec![(3, 0)];
        assert!(grid("g", &spec, &p).is_err());
    }
}
