//! Skinning on the GPU: a compute pass (shaders/skin.wgsl) that reads bind-space vertices and a
//! per-frame joint palette and writes the skinned vertices straight into the [`GpuMesh`] vertex
//! buffer the draw uses. LBS, two-phase DQS (Kavan et al. 2008) and optimized centres of
//! rotation (Le & Hodgins 2016); up to 8 influences per vertex.
//!
//! The CPU skinning in `drape::skin` computes the same thing; the two must agree to 1e-4 of the
//! model size (tests/gpu_skin.rs).

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use super::context::{GpuContext, GpuError};
use super::mesh::{GpuMesh, GpuVertex};
use crate::anim::Skin;
use crate::asset::geometry::smooth_normals;
use crate::math::{DualQuat, Mat3, Mat4, Quat, Vec3};
use crate::rig::SkinnedMesh;

/// Which skinning formula the compute pass evaluates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GpuSkinMethod {
    /// Linear blend skinning.
    #[default]
    Lbs,
    /// Dual quaternion skinning, two-phase for scaled joints.
    Dqs,
    /// Optimized centres of rotation; needs per-vertex centres
    /// ([`GpuSkinnedMesh::set_cor_centers`]).
    Cor,
}

impl GpuSkinMethod {
    fn code(self) -> u32 {
        match self {
            GpuSkinMethod::Lbs => 0,
            GpuSkinMethod::Dqs => 1,
            GpuSkinMethod::Cor => 2,
        }
    }
}

/// A bind-space vertex with its influences, 96 bytes. Mirrors `SkinVertex` in shaders/skin.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuSkinVertex {
    /// xyz bind-space position; w wetness in [0, 1], copied to the output vertex.
    pub position: [f32; 4],
    /// xyz bind-space unit normal; w unused.
    pub normal: [f32; 4],
    /// Skin joint numbers (indices into the palette) of influences 0–3.
    pub joints0: [u32; 4],
    pub weights0: [f32; 4],
    /// Influences 4–7 (JOINTS_1 / WEIGHTS_1); zero weights when the mesh has only four.
    pub joints1: [u32; 4],
    pub weights1: [f32; 4],
}

/// One joint's transform for this frame in every form the three methods read, 128 bytes.
/// Mirrors `Joint` in shaders/skin.wgsl. Built from the skin matrix
/// `world_from_bind = world_from_joint × joint_from_bind` = (A, t), with A = R S split by polar
/// decomposition into a rotation R and a scale/shear part S = Rᵀ A.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct JointPalette {
    /// Rows of the 3×4 affine matrix: row i = (A_i0, A_i1, A_i2, t_i). Read by LBS and CoR.
    pub lbs_rows: [[f32; 4]; 3],
    /// The rigid part (R, t) as a unit dual quaternion: real = R (x, y, z, w),
    /// dual = ½ (t, 0) real. Read by DQS (both) and CoR (real only).
    pub dq_real: [f32; 4],
    pub dq_dual: [f32; 4],
    /// Columns of S (xyz, w = 0). Identity for rigid joints. Read by DQS and CoR.
    pub scale_cols: [[f32; 4]; 3],
}

impl JointPalette {
    pub const IDENTITY: JointPalette = JointPalette {
        lbs_rows: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ],
        dq_real: [0.0, 0.0, 0.0, 1.0],
        dq_dual: [0.0, 0.0, 0.0, 0.0],
        scale_cols: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ],
    };

    /// From a skin matrix `world_from_bind` (affine; the bottom row is ignored).
    pub fn from_world_from_bind(world_from_bind: &Mat4) -> Self {
        let a = Mat3::from_mat4(*world_from_bind);
        let t = world_from_bind.w_axis.truncate();
        let (r, s) = polar_decomposition(a);
        let dq = DualQuat::from_rotation_translation(r, t);
        let row = |i: usize| {
            let rw = a.row(i);
            [rw.x, rw.y, rw.z, t[i]]
        };
        let col = |c: Vec3| [c.x, c.y, c.z, 0.0];
        Self {
            lbs_rows: [row(0), row(1), row(2)],
            dq_real: dq.real.to_array(),
            dq_dual: dq.dual.to_array(),
            scale_cols: [col(s.x_axis), col(s.y_axis), col(s.z_axis)],
        }
    }
}

/// A = R S with R the rotation closest to A (Higham 1986, Newton iteration
/// R ← ½ (R + R⁻ᵀ)) and S = Rᵀ A. A reflection (det A < 0) is kept in S (its first column
/// negated) so that R stays a proper rotation a quaternion can hold.
pub fn polar_decomposition(a: Mat3) -> (Quat, Mat3) {
    let flip = a.determinant() < 0.0;
    let a_proper = if flip {
        Mat3::from_cols(-a.x_axis, a.y_axis, a.z_axis)
    } else {
        a
    };
    if a_proper.determinant().abs() < 1e-30 || !a_proper.is_finite() {
        return (Quat::IDENTITY, a);
    }
    let mut r = a_proper;
    for _ in 0..30 {
        let next = (r + r.inverse().transpose()) * 0.5;
        let done = (next - r).abs_diff_eq(Mat3::ZERO, 1e-7);
        r = next;
        if done {
            break;
        }
    }
    let q = Quat::from_mat3(&r).normalize();
    let s = Mat3::from_quat(q).transpose() * a;
    (q, s)
}

/// The palette for one skin at one pose: joint k's skin matrix is
/// `world_from_node[skin.joints[k]] × skin.inverse_bind[k]` (glTF; the mesh node's own transform
/// is ignored). Joints whose node index is out of range get the identity.
pub fn palette_from_pose(skin: &Skin, world_from_node: &[Mat4]) -> Vec<JointPalette> {
    skin.joints
        .iter()
        .enumerate()
        .map(|(k, &node)| match world_from_node.get(node as usize) {
            Some(w) => {
                let ib = skin.inverse_bind.get(k).copied().unwrap_or(Mat4::IDENTITY);
                JointPalette::from_world_from_bind(&(*w * ib))
            }
            None => JointPalette::IDENTITY,
        })
        .collect()
}

/// Dispatch parameters, 16 bytes. Mirrors `Params` in shaders/skin.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
struct SkinParams {
    vertex_count: u32,
    method: u32,
    influences: u32,
    joint_count: u32,
}

/// Invocations per workgroup; must equal `@workgroup_size` in shaders/skin.wgsl.
const WORKGROUP: u32 = 64;

/// The compiled compute pipeline, shared by every skinned mesh.
pub struct SkinPipeline {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl SkinPipeline {
    pub fn new(ctx: &GpuContext) -> Self {
        let device = &ctx.device;
        let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("skin bind group layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                storage(1, true),
                storage(2, true),
                storage(3, true),
                storage(4, false),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("skin pipeline layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = super::shaders::module(device, "skin.wgsl", super::shaders::SKIN);
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("skin pipeline"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("skin_main"),
            compilation_options: Default::default(),
            cache: None,
        });
        Self { pipeline, layout }
    }
}

/// One skinned mesh on the GPU: its bind-space input, palette and centres, and the output
/// [`GpuMesh`] that the renderer draws.
pub struct GpuSkinnedMesh {
    /// The skinned result; draw this.
    pub mesh: GpuMesh,
    params: wgpu::Buffer,
    palette: wgpu::Buffer,
    centers: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    joint_count: u32,
    influences: u32,
    has_centers: bool,
}

impl GpuSkinnedMesh {
    /// Uploads `mesh` (bind space) for a skin of `joint_count` joints. Refuses a mesh without
    /// influences, with inconsistent array lengths or with joint numbers out of range. Normals
    /// are computed (area-weighted) when the mesh has none. The palette starts at identity
    /// (bind pose).
    pub fn new(
        ctx: &GpuContext,
        pipeline: &SkinPipeline,
        mesh: &SkinnedMesh,
        joint_count: usize,
    ) -> Result<Self, GpuError> {
        let n = mesh.positions.len();
        let name = &mesh.name;
        let bad = |what: String| {
            Err(GpuError::InvalidInput(format!(
                "skinned mesh '{name}': {what}"
            )))
        };
        if n == 0 || mesh.indices.is_empty() {
            return bad("no vertices or no triangles".into());
        }
        if joint_count == 0 {
            return bad("the skin has no joints".into());
        }
        if mesh.joints.len() != n || mesh.weights.len() != n {
            return bad(format!(
                "{} vertices but {} JOINTS_0 and {} WEIGHTS_0",
                n,
                mesh.joints.len(),
                mesh.weights.len()
            ));
        }
        let eight = !mesh.joints1.is_empty();
        if eight && (mesh.joints1.len() != n || mesh.weights1.len() != n) {
            return bad("JOINTS_1/WEIGHTS_1 lengths differ from the vertex count".into());
        }
        if let Some(i) = mesh.indices.iter().find(|&&i| i as usize >= n) {
            return bad(format!("index {i} out of range"));
        }
        let in_range = |js: &[u16; 4], ws: &[f32; 4]| {
            js.iter()
                .zip(ws)
                .all(|(&j, &w)| w == 0.0 || (j as usize) < joint_count)
        };
        for i in 0..n {
            let ok = in_range(&mesh.joints[i], &mesh.weights[i])
                && (!eight || in_range(&mesh.joints1[i], &mesh.weights1[i]));
            if !ok {
                return bad(format!(
                    "vertex {i} refers to a joint beyond the skin's {joint_count}"
                ));
            }
        }
        let computed;
        let normals = if mesh.normals.len() == n {
            &mesh.normals
        } else {
            computed = smooth_normals(&mesh.positions, &mesh.indices);
            &computed
        };
        let u4 = |j: &[u16; 4]| j.map(u32::from);
        let input: Vec<GpuSkinVertex> = (0..n)
            .map(|i| {
                let p = mesh.positions[i];
                let nn = normals[i];
                GpuSkinVertex {
                    position: [p.x, p.y, p.z, 0.0],
                    normal: [nn.x, nn.y, nn.z, 0.0],
                    joints0: u4(&mesh.joints[i]),
                    weights0: mesh.weights[i],
                    joints1: if eight { u4(&mesh.joints1[i]) } else { [0; 4] },
                    weights1: if eight { mesh.weights1[i] } else { [0.0; 4] },
                }
            })
            .collect();
        let bind_vertices: Vec<GpuVertex> = (0..n)
            .map(|i| GpuVertex::new(mesh.positions[i], normals[i], 0.0))
            .collect();
        let uvs: Vec<[f32; 2]> = (0..n)
            .map(|i| mesh.uvs.get(i).map(|u| [u.x, u.y]).unwrap_or([0.0; 2]))
            .collect();
        let out = GpuMesh::from_parts(ctx, name, &bind_vertices, &uvs, &mesh.indices);

        let device = &ctx.device;
        let input_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(&format!("{name} skin input")),
            contents: bytemuck::cast_slice(&input),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let palette_init = vec![JointPalette::IDENTITY; joint_count];
        let palette = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(&format!("{name} joint palette")),
            contents: bytemuck::cast_slice(&palette_init),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        });
        // Until centres are set, p* = p (CoR then equals LBS; dispatching CoR is refused anyway).
        let centers_init: Vec<[f32; 4]> = mesh
            .positions
            .iter()
            .map(|p| [p.x, p.y, p.z, 1.0])
            .collect();
        let centers = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(&format!("{name} CoR centres")),
            contents: bytemuck::cast_slice(&centers_init),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        });
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(&format!("{name} skin params")),
            size: std::mem::size_of::<SkinParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&format!("{name} skin bind group")),
            layout: &pipeline.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: params.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: input_buf.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: palette.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: centers.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 4,
                    resource: out.vertices.as_entire_binding(),
                },
            ],
        });
        Ok(Self {
            mesh: out,
            params,
            palette,
            centers,
            bind_group,
            joint_count: joint_count as u32,
            influences: if eight { 8 } else { 4 },
            has_centers: false,
        })
    }

    pub fn joint_count(&self) -> usize {
        self.joint_count as usize
    }

    /// This frame's palette, one entry per skin joint.
    pub fn set_palette(&self, ctx: &GpuContext, palette: &[JointPalette]) -> Result<(), GpuError> {
        if palette.len() != self.joint_count as usize {
            return Err(GpuError::InvalidInput(format!(
                "skinned mesh '{}': palette of {} joints for a skin of {}",
                self.mesh.label,
                palette.len(),
                self.joint_count
            )));
        }
        ctx.queue
            .write_buffer(&self.palette, 0, bytemuck::cast_slice(palette));
        Ok(())
    }

    /// The per-vertex centres of rotation p* (bind space), computed once per mesh by the CPU
    /// precomputation (Le & Hodgins 2016 §4.1). Required before dispatching CoR.
    pub fn set_cor_centers(&mut self, ctx: &GpuContext, centers: &[Vec3]) -> Result<(), GpuError> {
        if centers.len() != self.mesh.vertex_count as usize {
            return Err(GpuError::InvalidInput(format!(
                "skinned mesh '{}': {} CoR centres for {} vertices",
                self.mesh.label,
                centers.len(),
                self.mesh.vertex_count
            )));
        }
        // w = 1 marks a centre; a non-finite one (the CPU's "no centre", `CorCenters`) is
        // stored as w = 0 and skinned with DQS, as the CPU does.
        let data: Vec<[f32; 4]> = centers
            .iter()
            .map(|c| {
                if c.is_finite() {
                    [c.x, c.y, c.z, 1.0]
                } else {
                    [0.0; 4]
                }
            })
            .collect();
        ctx.queue
            .write_buffer(&self.centers, 0, bytemuck::cast_slice(&data));
        self.has_centers = true;
        Ok(())
    }

    /// Records the skinning dispatch into `encoder` (the frame's encoder, before the render
    /// pass that draws [`Self::mesh`]).
    pub fn encode(
        &self,
        ctx: &GpuContext,
        pipeline: &SkinPipeline,
        encoder: &mut wgpu::CommandEncoder,
        method: GpuSkinMethod,
    ) -> Result<(), GpuError> {
        if method == GpuSkinMethod::Cor && !self.has_centers {
            return Err(GpuError::InvalidInput(format!(
                "skinned mesh '{}': CoR skinning needs centres of rotation (set_cor_centers)",
                self.mesh.label
            )));
        }
        let params = SkinParams {
            vertex_count: self.mesh.vertex_count,
            method: method.code(),
            influences: self.influences,
            joint_count: self.joint_count,
        };
        ctx.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("skin pass"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&pipeline.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(self.mesh.vertex_count.div_ceil(WORKGROUP), 1, 1);
        Ok(())
    }

    /// Skins now (own encoder and submit); for tools and tests.
    pub fn skin(
        &self,
        ctx: &GpuContext,
        pipeline: &SkinPipeline,
        method: GpuSkinMethod,
    ) -> Result<(), GpuError> {
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("skin encoder"),
            });
        self.encode(ctx, pipeline, &mut encoder, method)?;
        ctx.queue.submit([encoder.finish()]);
        Ok(())
    }

    /// Skinned positions and normals read back (tests and tools only: a full GPU sync).
    pub fn read_back(&self, ctx: &GpuContext) -> Result<(Vec<Vec3>, Vec<Vec3>), GpuError> {
        let v = self.mesh.read_vertices(ctx)?;
        Ok((
            v.iter()
                .map(|v| Vec3::new(v.pos_wet[0], v.pos_wet[1], v.pos_wet[2]))
                .collect(),
            v.iter()
                .map(|v| Vec3::new(v.normal[0], v.normal[1], v.normal[2]))
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polar_decomposition_recovers_rotation_and_scale() {
        let r = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0);
        let s = Mat3::from_cols(
            Vec3::new(0.01, 0.0, 0.0),
            Vec3::new(0.002, 0.01, 0.0),
            Vec3::new(0.0, 0.0, 0.02),
        );
        let a = Mat3::from_quat(r) * s;
        let (q, s2) = polar_decomposition(a);
        assert!((Mat3::from_quat(q) * s2 - a).abs_diff_eq(Mat3::ZERO, 1e-6));
        // Uniform scale: S is exactly the scale and R the rotation.
        let a = Mat3::from_quat(r) * 0.01;
        let (q, s2) = polar_decomposition(a);
        assert!(q.dot(r).abs() > 1.0 - 1e-5);
        assert!(s2.abs_diff_eq(Mat3::IDENTITY * 0.01, 1e-7));
        // A mirror stays in S; R is proper.
        let a = Mat3::from_quat(r) * Mat3::from_diagonal(Vec3::new(-1.0, 1.0, 1.0));
        let (q, s2) = polar_decomposition(a);
        assert!((Mat3::from_quat(q) * s2 - a).abs_diff_eq(Mat3::ZERO, 1e-5));
        assert!(s2.determinant() < 0.0);
    }

    #[test]
    fn palette_of_a_rigid_transform_holds_its_rotation_and_translation() {
        let r = Quat::from_rotation_z(0.7);
        let t = Vec3::new(1.0, 2.0, 3.0);
        let p = JointPalette::from_world_from_bind(&Mat4::from_rotation_translation(r, t));
        let dq = DualQuat {
            real: Quat::from_array(p.dq_real),
            dual: Quat::from_array(p.dq_dual),
        };
        let x = Vec3::new(0.3, -0.2, 0.5);
        assert!((dq.transform_point(x) - (r * x + t)).length() < 1e-5);
        assert!((p.lbs_rows[0][3] - 1.0).abs() < 1e-6 && (p.lbs_rows[2][3] - 3.0).abs() < 1e-6);
        for (i, c) in p.scale_cols.iter().enumerate() {
            for (j, v) in c[..3].iter().enumerate() {
                assert!((v - if i == j { 1.0 } else { 0.0 }).abs() < 1e-5);
            }
        }
    }
}
