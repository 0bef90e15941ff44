//! Meshes on the GPU: a vertex buffer of [`GpuVertex`] (written by the skinning compute pass, or
//! uploaded every frame for cloth), static texture coordinates and a triangle index buffer, all
//! three also bindable as storage (the wireframe shader pulls each triangle's corners from them
//! to know its barycentric coordinates). [`MeshData`] builds the shapes the tests and the
//! debug views need (UV sphere, tapered capsule, grid).

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use super::context::{GpuContext, GpuError};
use crate::asset::geometry::smooth_normals;
use crate::math::{Vec2, Vec3};

/// One vertex as the draw reads it, 32 bytes. Mirrors `VsIn` locations 0–1 in
/// shaders/common.wgsl and `OutVertex` in shaders/skin.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuVertex {
    /// xyz object-space position (m); w per-vertex wetness in [0, 1], 0 = dry.
    pub pos_wet: [f32; 4],
    /// xyz unit normal; w unused (0).
    pub normal: [f32; 4],
}

impl GpuVertex {
    pub fn new(position: Vec3, normal: Vec3, wetness: f32) -> Self {
        Self {
            pos_wet: [position.x, position.y, position.z, wetness],
            normal: [normal.x, normal.y, normal.z, 0.0],
        }
    }
}

/// A triangle mesh on the CPU, ready to upload (structs of arrays, like `SkinnedMesh`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    /// Texture coordinates, or empty (then all zero).
    pub uvs: Vec<Vec2>,
    /// Per-vertex wetness in [0, 1], or empty (dry).
    pub wetness: Vec<f32>,
    pub indices: Vec<u32>,
}

impl MeshData {
    /// A UV sphere of `radius` around `center` with `segments` around the axis and `rings`
    /// from pole to pole; u goes around (×2 so that texels are about square), v pole to pole.
    pub fn uv_sphere(center: Vec3, radius: f32, segments: u32, rings: u32) -> Self {
        let segments = segments.max(3);
        let rings = rings.max(2);
        let mut m = MeshData::default();
        for r in 0..=rings {
            let v = r as f32 / rings as f32;
            let theta = v * std::f32::consts::PI;
            for s in 0..=segments {
                let u = s as f32 / segments as f32;
                let phi = u * std::f32::consts::TAU;
                let n = Vec3::new(
                    theta.sin() * phi.cos(),
                    theta.cos(),
                    -theta.sin() * phi.sin(),
                );
                m.positions.push(center + n * radius);
                m.normals.push(n);
                m.uvs.push(Vec2::new(u * 2.0, v));
            }
        }
        let row = segments + 1;
        for r in 0..rings {
            for s in 0..segments {
                let a = r * row + s;
                let b = a + row;
                // Counter-clockwise seen from outside.
                if r != 0 {
                    m.indices.extend_from_slice(&[a, b, a + 1]);
                }
                if r != rings - 1 {
                    m.indices.extend_from_slice(&[a + 1, b, b + 1]);
                }
            }
        }
        m
    }

    /// The surface of a tapered capsule: the convex hull of the spheres (c1, r1) and (c2, r2)
    /// (PHYSICS.md §2). Built by revolving its profile: an arc of sphere 1 from its far pole to
    /// the tangent latitude, the cone's straight side, and an arc of sphere 2. With
    /// sin α = (r1 − r2) / L the tangent points sit at angle α past each sphere's equator,
    /// towards sphere 1's side for the bigger sphere. If one sphere contains the other the hull
    /// is the bigger sphere.
    pub fn tapered_capsule(
        c1: Vec3,
        r1: f32,
        c2: Vec3,
        r2: f32,
        segments: u32,
        rings: u32,
    ) -> Self {
        let axis = c2 - c1;
        let len = axis.length();
        if len <= (r1 - r2).abs() || len < 1e-9 {
            return if r1 >= r2 {
                Self::uv_sphere(c1, r1, segments, rings * 2)
            } else {
                Self::uv_sphere(c2, r2, segments, rings * 2)
            };
        }
        let a = axis / len;
        let sin_alpha = (r1 - r2) / len;
        let alpha = sin_alpha.asin();
        // Profile in (along-axis from c1, radial) with its unit normal, parametrised by the
        // polar angle θ from the −axis pole: sphere 1 covers θ ∈ [0, π/2 + α], sphere 2
        // θ ∈ [π/2 + α, π]; the cone is the straight segment between the two tangent points.
        let segments = segments.max(3);
        let rings = rings.max(2);
        let mut profile: Vec<(f32, f32, f32, f32)> = Vec::new(); // (x, r, nx, nr)
        let theta_t = std::f32::consts::FRAC_PI_2 + alpha;
        for i in 0..=rings {
            let th = theta_t * i as f32 / rings as f32;
            let (nx, nr) = (-th.cos(), th.sin());
            profile.push((nx * r1, nr * r1, nx, nr));
        }
        // The cone's side, subdivided so that it is not one long stretched quad strip.
        let (t1x, t1r) = (profile[rings as usize].0, profile[rings as usize].1);
        let (t2x, t2r) = (len + sin_alpha * r2, alpha.cos() * r2);
        let steps = (rings / 2).max(1) * 2;
        for k in 1..steps {
            let f = k as f32 / steps as f32;
            profile.push((
                t1x + (t2x - t1x) * f,
                t1r + (t2r - t1r) * f,
                sin_alpha,
                alpha.cos(),
            ));
        }
        for i in 0..=rings {
            let th = theta_t + (std::f32::consts::PI - theta_t) * i as f32 / rings as f32;
            // The far pole exactly on the axis (sin π in f32 is not 0).
            let (nx, nr) = if i == rings {
                (1.0, 0.0)
            } else {
                (-th.cos(), th.sin())
            };
            profile.push((len + nx * r2, nr * r2, nx, nr));
        }
        let ortho = a.any_orthonormal_vector();
        let ortho2 = a.cross(ortho);
        let mut m = MeshData::default();
        let count = profile.len() as u32;
        // v by arc length along the profile, so that textures are not stretched on the cone.
        let mut arc = vec![0.0f32; profile.len()];
        for i in 1..profile.len() {
            let (a, b) = (profile[i - 1], profile[i]);
            arc[i] = arc[i - 1] + ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        }
        let total = arc[arc.len() - 1].max(1e-9);
        for (pi, &(x, r, nx, nr)) in profile.iter().enumerate() {
            for s in 0..=segments {
                let phi = s as f32 / segments as f32 * std::f32::consts::TAU;
                let radial = ortho * phi.cos() + ortho2 * phi.sin();
                m.positions.push(c1 + a * x + radial * r);
                m.normals.push((a * nx + radial * nr).normalize());
                m.uvs
                    .push(Vec2::new(s as f32 / segments as f32, arc[pi] / total));
            }
        }
        let row = segments + 1;
        for p in 0..count - 1 {
            for s in 0..segments {
                let i0 = p * row + s;
                let i1 = i0 + row;
                m.indices
                    .extend_from_slice(&[i0, i0 + 1, i1, i0 + 1, i1 + 1, i1]);
            }
        }
        m.drop_degenerate_triangles();
        m
    }

    /// A flat grid in the XZ plane at height `y`, centred at the origin, `nx × nz` quads,
    /// normal +Y, uv in [0, 1]²; `wetness(u, v)` gives each vertex's wetness.
    pub fn grid(size: Vec2, y: f32, nx: u32, nz: u32, wetness: impl Fn(f32, f32) -> f32) -> Self {
        let nx = nx.max(1);
        let nz = nz.max(1);
        let mut m = MeshData::default();
        for j in 0..=nz {
            for i in 0..=nx {
                let u = i as f32 / nx as f32;
                let v = j as f32 / nz as f32;
                m.positions
                    .push(Vec3::new((u - 0.5) * size.x, y, (v - 0.5) * size.y));
                m.normals.push(Vec3::Y);
                m.uvs.push(Vec2::new(u, v));
                m.wetness.push(wetness(u, v).clamp(0.0, 1.0));
            }
        }
        let row = nx + 1;
        for j in 0..nz {
            for i in 0..nx {
                let a = j * row + i;
                let b = a + row;
                // Counter-clockwise seen from +Y.
                m.indices.extend_from_slice(&[a, b, a + 1, a + 1, b, b + 1]);
            }
        }
        m
    }

    /// Area-weighted vertex normals from the triangles (what the cloth upload uses when the
    /// simulation does not provide normals).
    pub fn recompute_normals(&mut self) {
        self.normals = smooth_normals(&self.positions, &self.indices);
    }

    fn drop_degenerate_triangles(&mut self) {
        let p = &self.positions;
        let kept: Vec<u32> = self
            .indices
            .chunks_exact(3)
            .filter(|t| {
                let (a, b, c) = (p[t[0] as usize], p[t[1] as usize], p[t[2] as usize]);
                (b - a).cross(c - a).length_squared() > 1e-20
            })
            .flatten()
            .copied()
            .collect();
        self.indices = kept;
    }

    /// Axis-aligned bounds (min, max); `None` for an empty mesh.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        bounds_of(&self.positions)
    }

    /// Each vertex as the GPU reads it.
    pub fn gpu_vertices(&self) -> Vec<GpuVertex> {
        (0..self.positions.len())
            .map(|i| {
                GpuVertex::new(
                    self.positions[i],
                    self.normals.get(i).copied().unwrap_or(Vec3::Y),
                    self.wetness.get(i).copied().unwrap_or(0.0),
                )
            })
            .collect()
    }
}

/// Axis-aligned bounds of points; `None` when empty.
pub fn bounds_of(points: &[Vec3]) -> Option<(Vec3, Vec3)> {
    let first = *points.first()?;
    Some(
        points
            .iter()
            .fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p))),
    )
}

/// A mesh in GPU buffers. The vertex buffer also has `STORAGE` usage so that the skinning
/// compute pass can write it in place; all three buffers have it for the wireframe shader's
/// vertex pulling.
pub struct GpuMesh {
    pub label: String,
    /// [`GpuVertex`] per vertex (slot 0).
    pub vertices: wgpu::Buffer,
    /// `[f32; 2]` per vertex (slot 1).
    pub uvs: wgpu::Buffer,
    /// Three `u32` per triangle.
    pub indices: wgpu::Buffer,
    pub vertex_count: u32,
    pub index_count: u32,
    /// Object-space bounds at upload (and at each `update_vertices`).
    pub bounds: (Vec3, Vec3),
}

impl GpuMesh {
    /// Uploads a mesh. Refuses (typed error, no panic) an empty mesh or indices out of range.
    pub fn new(ctx: &GpuContext, label: &str, mesh: &MeshData) -> Result<Self, GpuError> {
        let n = mesh.positions.len();
        if n == 0 || mesh.indices.is_empty() {
            return Err(GpuError::InvalidInput(format!("mesh '{label}' is empty")));
        }
        if let Some(bad) = mesh.indices.iter().find(|&&i| i as usize >= n) {
            return Err(GpuError::InvalidInput(format!(
                "mesh '{label}': index {bad} out of range for {n} vertices"
            )));
        }
        let uvs: Vec<[f32; 2]> = (0..n)
            .map(|i| mesh.uvs.get(i).map(|u| [u.x, u.y]).unwrap_or([0.0, 0.0]))
            .collect();
        Ok(Self::from_parts(
            ctx,
            label,
            &mesh.gpu_vertices(),
            &uvs,
            &mesh.indices,
        ))
    }

    pub(crate) fn from_parts(
        ctx: &GpuContext,
        label: &str,
        vertices: &[GpuVertex],
        uvs: &[[f32; 2]],
        indices: &[u32],
    ) -> Self {
        let device = &ctx.device;
        let positions: Vec<Vec3> = vertices
            .iter()
            .map(|v| Vec3::new(v.pos_wet[0], v.pos_wet[1], v.pos_wet[2]))
            .collect();
        let bounds = bounds_of(&positions).unwrap_or((Vec3::ZERO, Vec3::ZERO));
        let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(&format!("{label} vertices")),
            contents: bytemuck::cast_slice(vertices),
            usage: wgpu::BufferUsages::VERTEX
                | wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
        });
        let uvs_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(&format!("{label} uvs")),
            contents: bytemuck::cast_slice(uvs),
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::STORAGE,
        });
        let index_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(&format!("{label} indices")),
            contents: bytemuck::cast_slice(indices),
            usage: wgpu::BufferUsages::INDEX | wgpu::BufferUsages::STORAGE,
        });
        Self {
            label: label.to_string(),
            vertices,
            uvs: uvs_buf,
            indices: index_buf,
            vertex_count: positions.len() as u32,
            index_count: indices.len() as u32,
            bounds,
        }
    }

    /// Per-frame upload of simulated positions, normals and wetness (cloth). `normals` may be
    /// empty: they are then recomputed from `triangles` (area-weighted). `wetness` may be empty
    /// (dry). Lengths must match the mesh.
    pub fn update_vertices(
        &mut self,
        ctx: &GpuContext,
        positions: &[Vec3],
        normals: &[Vec3],
        wetness: &[f32],
        triangles: &[u32],
    ) -> Result<(), GpuError> {
        let n = self.vertex_count as usize;
        if positions.len() != n
            || (!normals.is_empty() && normals.len() != n)
            || (!wetness.is_empty() && wetness.len() != n)
        {
            return Err(GpuError::InvalidInput(format!(
                "mesh '{}': update with {} positions, {} normals, {} wetness values for {n} vertices",
                self.label,
                positions.len(),
                normals.len(),
                wetness.len()
            )));
        }
        let computed;
        let normals = if normals.is_empty() {
            computed = smooth_normals(positions, triangles);
            &computed
        } else {
            normals
        };
        let data: Vec<GpuVertex> = (0..n)
            .map(|i| {
                GpuVertex::new(
                    positions[i],
                    normals[i],
                    wetness.get(i).copied().unwrap_or(0.0),
                )
            })
            .collect();
        ctx.queue
            .write_buffer(&self.vertices, 0, bytemuck::cast_slice(&data));
        if let Some(b) = bounds_of(positions) {
            self.bounds = b;
        }
        Ok(())
    }

    /// Reads the current vertex buffer back (tests and tools only: a full GPU sync).
    pub fn read_vertices(&self, ctx: &GpuContext) -> Result<Vec<GpuVertex>, GpuError> {
        let size = self.vertex_count as u64 * std::mem::size_of::<GpuVertex>() as u64;
        let bytes = ctx.read_buffer(&self.vertices, size)?;
        Ok(bytemuck::cast_slice(&bytes).to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sphere_normals_point_outwards_and_triangles_wind_ccw() {
        let m = MeshData::uv_sphere(Vec3::new(1.0, 2.0, 3.0), 0.5, 16, 8);
        for (p, n) in m.positions.iter().zip(&m.normals) {
            assert!(((*p - Vec3::new(1.0, 2.0, 3.0)).length() - 0.5).abs() < 1e-5);
            assert!((*n - (*p - Vec3::new(1.0, 2.0, 3.0)) / 0.5).length() < 1e-5);
        }
        for t in m.indices.chunks_exact(3) {
            let (a, b, c) = (
                m.positions[t[0] as usize],
                m.positions[t[1] as usize],
                m.positions[t[2] as usize],
            );
            let f = (b - a).cross(c - a);
            let centroid = (a + b + c) / 3.0 - Vec3::new(1.0, 2.0, 3.0);
            assert!(f.dot(centroid) > 0.0, "triangle {t:?} faces inwards");
        }
    }

    #[test]
    fn tapered_capsule_surface_lies_on_the_hull_of_its_spheres() {
        let (c1, r1, c2, r2) = (Vec3::ZERO, 0.3, Vec3::new(0.0, 1.0, 0.0), 0.1);
        let m = MeshData::tapered_capsule(c1, r1, c2, r2, 24, 12);
        // Every vertex is on the boundary of the hull: distance to the hull surface ≈ 0.
        // The hull's signed distance: project on the axis, correct for the slope.
        let l = 1.0f32;
        let sin_a = (r1 - r2) / l;
        let cos_a = (1.0 - sin_a * sin_a).sqrt();
        for p in &m.positions {
            let x = p.y;
            let rho = (p.x * p.x + p.z * p.z).sqrt();
            // Distance to the cone's side line, measured along its normal (cos α, sin α)·(ρ, x).
            let s = x * sin_a / 1.0 + rho * cos_a; // = r(x) along the normal for points on the side
            let d1 = (*p - c1).length() - r1;
            let d2 = (*p - c2).length() - r2;
            let on_side =
                (s - r1).abs() < 1e-4 && x > r1 * sin_a - 1e-4 && x < l + r2 * sin_a + 1e-4;
            assert!(
                d1.abs() < 1e-4 || d2.abs() < 1e-4 || on_side,
                "vertex {p} is off the hull"
            );
            assert!(d1 > -1e-4 && d2 > -1e-4, "vertex {p} inside a sphere");
        }
        for t in m.indices.chunks_exact(3) {
            let (a, b, c) = (
                m.positions[t[0] as usize],
                m.positions[t[1] as usize],
                m.positions[t[2] as usize],
            );
            let f = (b - a).cross(c - a);
            let n = m.normals[t[0] as usize] + m.normals[t[1] as usize] + m.normals[t[2] as usize];
            assert!(f.dot(n) > 0.0, "triangle {t:?} winds against its normals");
        }
    }
}
