//! The one render path: [`Renderer::encode`] draws a [`FrameScene`] into any
//! `wgpu::TextureView` — a window's surface texture in the viewer, an offscreen texture for
//! `render_to_image`, screenshots and the golden-image tests.
//!
//! Per frame: a depth-only shadow pass from the key light (orthographic, fitted to the objects
//! and their shadows on the ground), then the main pass (ground, objects with their chosen
//! shader, debug solids, debug lines on top).

use std::collections::HashMap;

use bytemuck::{Pod, Zeroable};
use image::{GrayImage, RgbaImage};
use wgpu::util::DeviceExt;

use super::camera::{light_clip_from_world, Camera};
use super::context::{GpuContext, GpuError};
use super::debug::{DebugDraw, DebugLineVertex, DebugSolidVertex};
use super::mesh::{GpuMesh, GpuVertex, MeshData};
use super::shaders;
use super::textures;
use crate::math::{Mat3, Mat4, Vec2, Vec3, Vec4};
use crate::rig::Texture;

/// The per-object shader choice (files in shaders/).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shading {
    /// Every triangle's edges as antialiased lines over a dim fill, fading where triangles are
    /// only a few pixels tall (wireframe.wgsl).
    Wireframe,
    /// World normal as colour (normals.wgsl).
    Normals,
    /// Ambient + diffuse + specular (phong.wgsl).
    BlinnPhong,
    /// The base colour map as it is, unlit but shadowed (texture.wgsl).
    Textured,
    /// Height map → perturbed normal (bump.wgsl).
    Bump,
    /// Height map → vertices moved along the normal (displace.wgsl).
    Displacement,
    /// Environment reflection (mirror.wgsl).
    Mirror,
    /// Ramp bands, stepped specular, rim (toon.wgsl).
    Toon,
}

impl Shading {
    pub const ALL: [Shading; 8] = [
        Shading::Wireframe,
        Shading::Normals,
        Shading::BlinnPhong,
        Shading::Textured,
        Shading::Bump,
        Shading::Displacement,
        Shading::Mirror,
        Shading::Toon,
    ];

    /// Short name (file stem, CLI and UI label).
    pub fn name(self) -> &'static str {
        match self {
            Shading::Wireframe => "wireframe",
            Shading::Normals => "normals",
            Shading::BlinnPhong => "phong",
            Shading::Textured => "texture",
            Shading::Bump => "bump",
            Shading::Displacement => "displace",
            Shading::Mirror => "mirror",
            Shading::Toon => "toon",
        }
    }

    pub fn from_name(name: &str) -> Option<Shading> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    fn source(self) -> &'static str {
        match self {
            Shading::Wireframe => shaders::WIREFRAME,
            Shading::Normals => shaders::NORMALS,
            Shading::BlinnPhong => shaders::PHONG,
            Shading::Textured => shaders::TEXTURE,
            Shading::Bump => shaders::BUMP,
            Shading::Displacement => shaders::DISPLACE,
            Shading::Mirror => shaders::MIRROR,
            Shading::Toon => shaders::TOON,
        }
    }
}

/// A set of textures an object samples (base colour map and height map), created with
/// [`Renderer::create_texture_set`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureSetId(pub usize);

impl TextureSetId {
    /// White base colour, flat height: the material's own colour only.
    pub const PLAIN: TextureSetId = TextureSetId(0);
    /// White base colour, plain-weave height map (cloth close-ups, bump mapping).
    pub const WEAVE: TextureSetId = TextureSetId(1);
    /// White base colour, smooth round bumps (displacement mapping).
    pub const BUMPS: TextureSetId = TextureSetId(2);
    /// Grey checkerboard, flat height (the ground).
    pub const CHECKER: TextureSetId = TextureSetId(3);
}

/// Material parameters of one drawn object. Mirrors `Object.base_color/material/extra` in
/// shaders/common.wgsl.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObjectMaterial {
    /// Linear RGBA multiplied with the base colour map; default (0.8, 0.8, 0.8, 1).
    pub base_color: Vec4,
    /// Specular strength, [0, 1], default 0.3.
    pub specular: f32,
    /// Blinn-Phong exponent p, [1, 2048], default 32.
    pub shininess: f32,
    /// Bump strength: slope per unit height difference per texel, [0, 16], default 4.
    pub bump_strength: f32,
    /// Displacement at height 1, metres, [0, 0.2], default 0.04.
    pub displacement: f32,
    /// Texture repeats per UV unit, (0, 64], default 1.
    pub uv_scale: f32,
    /// Toon rim exponent, [0.5, 16], default 2.
    pub rim_power: f32,
    /// Toon rim brightness, [0, 1], default 0.5.
    pub rim_strength: f32,
    /// How much the mirror takes the base colour, [0, 1], default 0.15.
    pub mirror_tint: f32,
    pub textures: TextureSetId,
}

impl Default for ObjectMaterial {
    fn default() -> Self {
        Self {
            base_color: Vec4::new(0.8, 0.8, 0.8, 1.0),
            specular: 0.3,
            shininess: 32.0,
            bump_strength: 4.0,
            displacement: 0.04,
            uv_scale: 1.0,
            rim_power: 2.0,
            rim_strength: 0.5,
            mirror_tint: 0.15,
            textures: TextureSetId::PLAIN,
        }
    }
}

/// One object to draw this frame.
#[derive(Clone, Copy)]
pub struct DrawItem<'a> {
    pub mesh: &'a GpuMesh,
    pub shading: Shading,
    pub material: ObjectMaterial,
    pub world_from_object: Mat4,
    /// Whether it is drawn into the shadow map (default true).
    pub casts_shadow: bool,
}

impl<'a> DrawItem<'a> {
    pub fn new(mesh: &'a GpuMesh, shading: Shading) -> Self {
        Self {
            mesh,
            shading,
            material: ObjectMaterial::default(),
            world_from_object: Mat4::IDENTITY,
            casts_shadow: true,
        }
    }

    pub fn with_material(mut self, material: ObjectMaterial) -> Self {
        self.material = material;
        self
    }

    pub fn with_transform(mut self, world_from_object: Mat4) -> Self {
        self.world_from_object = world_from_object;
        self
    }
}

/// The key light (directional, the sun) and the ambient term.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyLight {
    /// Direction from the scene towards the light (need not be unit); default (0.4, 1, 0.3).
    pub dir_to_light: Vec3,
    /// Linear RGB radiance of the light (colour × intensity); default (1.0, 0.97, 0.92), so that
    /// a white diffuse surface facing the light reaches about 1 (no tone mapping is applied).
    pub color: Vec3,
    /// Linear RGB ambient radiance; default (0.16, 0.18, 0.22).
    pub ambient: Vec3,
    /// Shadow map on or off; default on.
    pub shadows: bool,
}

impl Default for KeyLight {
    fn default() -> Self {
        Self {
            dir_to_light: Vec3::new(0.4, 1.0, 0.3),
            color: Vec3::new(1.0, 0.97, 0.92),
            ambient: Vec3::new(0.16, 0.18, 0.22),
            shadows: true,
        }
    }
}

/// A ground plane y = `height` (m), a square of side 2 × `half_extent` (m) centred under the
/// origin, drawn lit with its base colour map (Blinn-Phong; checker by default) and receiving shadows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ground {
    pub height: f32,
    /// Half side, metres, default 5.
    pub half_extent: f32,
    pub material: ObjectMaterial,
}

impl Default for Ground {
    fn default() -> Self {
        Self {
            height: 0.0,
            half_extent: 5.0,
            material: ObjectMaterial {
                base_color: Vec4::ONE,
                specular: 0.05,
                shininess: 16.0,
                // One texture (8 × 8 squares) per 2 m: 25 cm squares.
                uv_scale: 5.0,
                textures: TextureSetId::CHECKER,
                ..Default::default()
            },
        }
    }
}

/// Everything one frame draws.
#[derive(Clone, Copy)]
pub struct FrameScene<'a> {
    pub camera: Camera,
    pub light: KeyLight,
    pub objects: &'a [DrawItem<'a>],
    pub ground: Option<Ground>,
    pub debug: Option<&'a DebugDraw>,
    /// Linear RGBA background (where no sky is drawn).
    pub clear_color: Vec4,
    /// Draw the environment cube map as the background (the sky the mirror shader reflects);
    /// default off (a flat `clear_color`).
    pub sky: bool,
}

impl<'a> FrameScene<'a> {
    pub fn new(camera: Camera, objects: &'a [DrawItem<'a>]) -> Self {
        Self {
            camera,
            light: KeyLight::default(),
            objects,
            ground: Some(Ground::default()),
            debug: None,
            clear_color: Vec4::new(0.03, 0.035, 0.045, 1.0),
            sky: false,
        }
    }

    /// World-space bounds of the objects (not the ground), or `None` when there are none.
    pub fn object_bounds(&self) -> Option<(Vec3, Vec3)> {
        let mut out: Option<(Vec3, Vec3)> = None;
        for item in self.objects {
            let (lo, hi) = item.mesh.bounds;
            for i in 0..8 {
                let c = Vec3::new(
                    if i & 1 == 0 { lo.x } else { hi.x },
                    if i & 2 == 0 { lo.y } else { hi.y },
                    if i & 4 == 0 { lo.z } else { hi.z },
                );
                let w = item.world_from_object.transform_point3(c);
                out = Some(match out {
                    Some((a, b)) => (a.min(w), b.max(w)),
                    None => (w, w),
                });
            }
        }
        out
    }
}

/// A depth buffer for the main pass; its size must match the colour target's.
pub struct DepthTarget {
    pub texture: wgpu::Texture,
    pub view: wgpu::TextureView,
    pub width: u32,
    pub height: u32,
    /// Samples per pixel; must equal the renderer's [`Renderer::sample_count`].
    pub sample_count: u32,
}

impl DepthTarget {
    pub const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

    pub fn new(ctx: &GpuContext, width: u32, height: u32, sample_count: u32) -> Self {
        let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("depth target"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count,
            dimension: wgpu::TextureDimension::D2,
            format: Self::FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        let view = texture.create_view(&Default::default());
        Self {
            texture,
            view,
            width,
            height,
            sample_count,
        }
    }
}

/// 320 bytes. Mirrors `Frame` in shaders/common.wgsl (and debug.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct FrameUniform {
    clip_from_world: [[f32; 4]; 4],
    light_clip_from_world: [[f32; 4]; 4],
    eye_world: [f32; 4],
    light_dir_world: [f32; 4],
    light_color: [f32; 4],
    ambient_color: [f32; 4],
    /// x 1/shadow-map size, y depth bias (NDC), z shadows on, w unused.
    shadow_params: [f32; 4],
    _pad: [[f32; 4]; 3],
    /// Inverse of `clip_from_world`, for the sky pass.
    world_from_clip: [[f32; 4]; 4],
}

/// 256 bytes. Mirrors `ShadowFrame` in shaders/shadow.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct ShadowFrameUniform {
    light_clip_from_world: [[f32; 4]; 4],
    _pad: [[f32; 4]; 12],
}

/// 192 bytes (stored at a 256-byte stride for dynamic offsets). Mirrors `Object` in
/// shaders/common.wgsl and shaders/shadow.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct ObjectUniform {
    world_from_object: [[f32; 4]; 4],
    normal_from_object: [[f32; 4]; 4],
    base_color: [f32; 4],
    /// x specular, y shininess, z bump strength, w displacement (m).
    material: [f32; 4],
    /// x uv scale, y rim power, z rim strength, w mirror tint.
    extra: [f32; 4],
    _pad: [f32; 4],
}

impl ObjectUniform {
    fn new(world_from_object: Mat4, m: &ObjectMaterial) -> Self {
        let normal = Mat3::from_mat4(world_from_object).inverse().transpose();
        let normal = if normal.is_finite() {
            Mat4::from_mat3(normal)
        } else {
            Mat4::IDENTITY
        };
        Self {
            world_from_object: world_from_object.to_cols_array_2d(),
            normal_from_object: normal.to_cols_array_2d(),
            base_color: m.base_color.to_array(),
            material: [m.specular, m.shininess, m.bump_strength, m.displacement],
            extra: [m.uv_scale, m.rim_power, m.rim_strength, m.mirror_tint],
            _pad: [0.0; 4],
        }
    }
}

const OBJECT_STRIDE: u64 = 256;

/// Owns every pipeline, the shadow map, the shared textures and the per-frame buffers.
pub struct Renderer {
    color_format: wgpu::TextureFormat,
    /// Samples per pixel of the main pass (4: MSAA, resolved into the target; 1: none).
    sample_count: u32,
    /// The multisampled colour buffer, resized to the target on demand.
    msaa: Option<(wgpu::Texture, wgpu::TextureView)>,
    object_layout: wgpu::BindGroupLayout,
    material_layout: wgpu::BindGroupLayout,
    /// Group 3 of the wireframe pipeline: a mesh's vertex, index and uv buffers as storage.
    wire_layout: wgpu::BindGroupLayout,
    pipelines: HashMap<Shading, wgpu::RenderPipeline>,
    shadow_pipeline: wgpu::RenderPipeline,
    debug_line_pipeline: wgpu::RenderPipeline,
    debug_solid_pipeline: wgpu::RenderPipeline,
    sky_pipeline: wgpu::RenderPipeline,
    frame_buffer: wgpu::Buffer,
    frame_bind_group: wgpu::BindGroup,
    shadow_frame_buffer: wgpu::Buffer,
    shadow_bind_group: wgpu::BindGroup,
    shadow_view: wgpu::TextureView,
    shadow_size: u32,
    object_buffer: wgpu::Buffer,
    object_bind_group: wgpu::BindGroup,
    object_capacity: u64,
    linear_sampler: wgpu::Sampler,
    texture_sets: Vec<wgpu::BindGroup>,
    ground_mesh: GpuMesh,
    /// `render_to_image`'s colour target, depth target and readback buffer, kept while the
    /// size stays the same (a sequence of frames allocates them once).
    offscreen: Option<Offscreen>,
}

/// An offscreen colour target of one size with its depth target and its readback buffer.
struct Offscreen {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    depth: DepthTarget,
    readback: wgpu::Buffer,
}

fn uniform_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    dynamic: bool,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: dynamic,
            min_binding_size: None,
        },
        count: None,
    }
}

fn texture_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    sample_type: wgpu::TextureSampleType,
    view_dimension: wgpu::TextureViewDimension,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Texture {
            sample_type,
            view_dimension,
            multisampled: false,
        },
        count: None,
    }
}

impl Renderer {
    /// Shadow map resolution, texels per side.
    pub const SHADOW_MAP_SIZE: u32 = 1024;

    /// Samples per pixel used by [`Renderer::new`]: 4× MSAA, which every WebGPU adapter
    /// supports for renderable 8-bit formats. Antialiased edges also make frames from different
    /// GPUs agree more closely (golden images).
    pub const DEFAULT_SAMPLES: u32 = 4;

    /// A renderer for colour targets of `color_format` (e.g. the surface's format, or
    /// `Rgba8UnormSrgb` for `render_to_image`), with 4× MSAA. Compiles every pipeline up front.
    pub fn new(ctx: &GpuContext, color_format: wgpu::TextureFormat) -> Self {
        Self::with_samples(ctx, color_format, Self::DEFAULT_SAMPLES)
    }

    /// As [`Renderer::new`] with `sample_count` samples per pixel (1 or 4).
    pub fn with_samples(
        ctx: &GpuContext,
        color_format: wgpu::TextureFormat,
        sample_count: u32,
    ) -> Self {
        let sample_count = if sample_count >= 4 { 4 } else { 1 };
        let multisample = wgpu::MultisampleState {
            count: sample_count,
            ..Default::default()
        };
        let device = &ctx.device;
        let vf = wgpu::ShaderStages::VERTEX_FRAGMENT;
        let frame_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("frame bind group layout"),
            entries: &[
                uniform_entry(0, vf, false),
                texture_entry(
                    1,
                    vf,
                    wgpu::TextureSampleType::Depth,
                    wgpu::TextureViewDimension::D2,
                ),
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: vf,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Comparison),
                    count: None,
                },
                texture_entry(
                    3,
                    vf,
                    wgpu::TextureSampleType::Float { filterable: true },
                    wgpu::TextureViewDimension::Cube,
                ),
                texture_entry(
                    4,
                    vf,
                    wgpu::TextureSampleType::Float { filterable: true },
                    wgpu::TextureViewDimension::D2,
                ),
                wgpu::BindGroupLayoutEntry {
                    binding: 5,
                    visibility: vf,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let object_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("object bind group layout"),
            entries: &[uniform_entry(0, vf, true)],
        });
        let material_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("material bind group layout"),
            entries: &[
                texture_entry(
                    0,
                    vf,
                    wgpu::TextureSampleType::Float { filterable: true },
                    wgpu::TextureViewDimension::D2,
                ),
                texture_entry(
                    1,
                    vf,
                    wgpu::TextureSampleType::Float { filterable: true },
                    wgpu::TextureViewDimension::D2,
                ),
            ],
        });
        let storage_entry = |binding: u32| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let wire_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("wireframe mesh bind group layout"),
            entries: &[storage_entry(0), storage_entry(1), storage_entry(2)],
        });
        let shadow_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("shadow bind group layout"),
            entries: &[uniform_entry(0, wgpu::ShaderStages::VERTEX, false)],
        });

        let main_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("scene pipeline layout"),
            bind_group_layouts: &[
                Some(&frame_layout),
                Some(&object_layout),
                Some(&material_layout),
            ],
            immediate_size: 0,
        });
        let wire_pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("wireframe pipeline layout"),
            bind_group_layouts: &[
                Some(&frame_layout),
                Some(&object_layout),
                Some(&material_layout),
                Some(&wire_layout),
            ],
            immediate_size: 0,
        });
        let vertex_attrs = [
            wgpu::VertexAttribute {
                format: wgpu::VertexFormat::Float32x4,
                offset: 0,
                shader_location: 0,
            },
            wgpu::VertexAttribute {
                format: wgpu::VertexFormat::Float32x4,
                offset: 16,
                shader_location: 1,
            },
        ];
        let uv_attrs = [wgpu::VertexAttribute {
            format: wgpu::VertexFormat::Float32x2,
            offset: 0,
            shader_location: 2,
        }];
        let vertex_buffers = [
            Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<GpuVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &vertex_attrs,
            }),
            Some(wgpu::VertexBufferLayout {
                array_stride: 8,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &uv_attrs,
            }),
        ];
        let depth_state = |write: bool, compare: wgpu::CompareFunction| wgpu::DepthStencilState {
            format: DepthTarget::FORMAT,
            depth_write_enabled: Some(write),
            depth_compare: Some(compare),
            stencil: Default::default(),
            bias: Default::default(),
        };
        let color_target = [Some(wgpu::ColorTargetState {
            format: color_format,
            blend: Some(wgpu::BlendState::ALPHA_BLENDING),
            write_mask: wgpu::ColorWrites::ALL,
        })];

        let mut pipelines = HashMap::new();
        for shading in Shading::ALL {
            let module = shaders::module(
                device,
                &format!("{}.wgsl", shading.name()),
                shading.source(),
            );
            // The wireframe pulls its vertices from storage buffers (group 3) by vertex index.
            let wire = shading == Shading::Wireframe;
            let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(&format!("{} pipeline", shading.name())),
                layout: Some(if wire {
                    &wire_pipeline_layout
                } else {
                    &main_layout
                }),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs_main"),
                    compilation_options: Default::default(),
                    buffers: if wire { &[] } else { &vertex_buffers },
                },
                // Cloth is seen from both sides: no culling; the shaders flip back-facing normals.
                primitive: wgpu::PrimitiveState {
                    topology: wgpu::PrimitiveTopology::TriangleList,
                    cull_mode: None,
                    ..Default::default()
                },
                depth_stencil: Some(depth_state(true, wgpu::CompareFunction::LessEqual)),
                multisample,
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fs_main"),
                    compilation_options: Default::default(),
                    targets: &color_target,
                }),
                multiview_mask: None,
                cache: None,
            });
            pipelines.insert(shading, pipeline);
        }

        let shadow_module = shaders::module(device, "shadow.wgsl", shaders::SHADOW);
        let shadow_pipeline_layout =
            device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("shadow pipeline layout"),
                bind_group_layouts: &[Some(&shadow_layout), Some(&object_layout)],
                immediate_size: 0,
            });
        let shadow_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("shadow pipeline"),
            layout: Some(&shadow_pipeline_layout),
            vertex: wgpu::VertexState {
                module: &shadow_module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &vertex_buffers[..1],
            },
            primitive: wgpu::PrimitiveState {
                cull_mode: None,
                ..Default::default()
            },
            depth_stencil: Some(wgpu::DepthStencilState {
                bias: wgpu::DepthBiasState {
                    constant: 0,
                    slope_scale: 1.5,
                    clamp: 0.0,
                },
                ..depth_state(true, wgpu::CompareFunction::LessEqual)
            }),
            multisample: Default::default(),
            fragment: None,
            multiview_mask: None,
            cache: None,
        });

        let debug_module = shaders::module(device, "debug.wgsl", shaders::DEBUG);
        let debug_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("debug pipeline layout"),
            bind_group_layouts: &[Some(&frame_layout)],
            immediate_size: 0,
        });
        let line_attrs = [
            wgpu::VertexAttribute {
                format: wgpu::VertexFormat::Float32x4,
                offset: 0,
                shader_location: 0,
            },
            wgpu::VertexAttribute {
                format: wgpu::VertexFormat::Float32x4,
                offset: 16,
                shader_location: 1,
            },
        ];
        let solid_attrs = [
            wgpu::VertexAttribute {
                format: wgpu::VertexFormat::Float32x4,
                offset: 0,
                shader_location: 0,
            },
            wgpu::VertexAttribute {
                format: wgpu::VertexFormat::Float32x4,
                offset: 16,
                shader_location: 1,
            },
            wgpu::VertexAttribute {
                format: wgpu::VertexFormat::Float32x4,
                offset: 32,
                shader_location: 2,
            },
        ];
        let debug_pipeline = |label: &str,
                              vs: &str,
                              fs: &str,
                              stride: u64,
                              attrs: &[wgpu::VertexAttribute],
                              topology: wgpu::PrimitiveTopology,
                              depth: wgpu::DepthStencilState| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&debug_layout),
                vertex: wgpu::VertexState {
                    module: &debug_module,
                    entry_point: Some(vs),
                    compilation_options: Default::default(),
                    buffers: &[Some(wgpu::VertexBufferLayout {
                        array_stride: stride,
                        step_mode: wgpu::VertexStepMode::Vertex,
                        attributes: attrs,
                    })],
                },
                primitive: wgpu::PrimitiveState {
                    topology,
                    cull_mode: None,
                    ..Default::default()
                },
                depth_stencil: Some(depth),
                multisample,
                fragment: Some(wgpu::FragmentState {
                    module: &debug_module,
                    entry_point: Some(fs),
                    compilation_options: Default::default(),
                    targets: &color_target,
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let debug_line_pipeline = debug_pipeline(
            "debug line pipeline",
            "vs_line",
            "fs_line",
            std::mem::size_of::<DebugLineVertex>() as u64,
            &line_attrs,
            wgpu::PrimitiveTopology::LineList,
            depth_state(false, wgpu::CompareFunction::Always),
        );
        let debug_solid_pipeline = debug_pipeline(
            "debug solid pipeline",
            "vs_solid",
            "fs_solid",
            std::mem::size_of::<DebugSolidVertex>() as u64,
            &solid_attrs,
            wgpu::PrimitiveTopology::TriangleList,
            depth_state(true, wgpu::CompareFunction::LessEqual),
        );

        let sky_module = shaders::module(device, "sky.wgsl", shaders::SKY);
        let sky_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("sky pipeline"),
            layout: Some(&debug_layout),
            vertex: wgpu::VertexState {
                module: &sky_module,
                entry_point: Some("vs_sky"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: Default::default(),
            // Behind everything and leaving the depth buffer cleared.
            depth_stencil: Some(depth_state(false, wgpu::CompareFunction::Always)),
            multisample,
            fragment: Some(wgpu::FragmentState {
                module: &sky_module,
                entry_point: Some("fs_sky"),
                compilation_options: Default::default(),
                targets: &color_target,
            }),
            multiview_mask: None,
            cache: None,
        });

        // Shared resources.
        let shadow_size = Self::SHADOW_MAP_SIZE;
        let shadow_texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("shadow map"),
            size: wgpu::Extent3d {
                width: shadow_size,
                height: shadow_size,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: DepthTarget::FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
            view_formats: &[],
        });
        let shadow_view = shadow_texture.create_view(&Default::default());
        let shadow_sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("shadow comparison sampler"),
            address_mode_u: wgpu::AddressMode::ClampToEdge,
            address_mode_v: wgpu::AddressMode::ClampToEdge,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            compare: Some(wgpu::CompareFunction::LessEqual),
            ..Default::default()
        });
        let linear_sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("linear repeat sampler"),
            address_mode_u: wgpu::AddressMode::Repeat,
            address_mode_v: wgpu::AddressMode::Repeat,
            address_mode_w: wgpu::AddressMode::Repeat,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            mipmap_filter: wgpu::MipmapFilterMode::Linear,
            anisotropy_clamp: 1,
            ..Default::default()
        });
        let env_view = textures::upload_cube(
            ctx,
            "environment cube map",
            &textures::environment_cube(128),
        );
        // Three bands: shadow, half-lit, lit (the classic cel look).
        let ramp = textures::toon_ramp(64, 3);
        let ramp_view = textures::upload_2d(
            ctx,
            "toon ramp",
            textures::TexelData {
                data: ramp.as_raw(),
                width: ramp.width(),
                height: 1,
                format: wgpu::TextureFormat::Rgba8Unorm,
                channels: 4,
            },
            false,
        )
        .create_view(&Default::default());

        let frame_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("frame uniform"),
            size: std::mem::size_of::<FrameUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let frame_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("frame bind group"),
            layout: &frame_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: frame_buffer.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&shadow_view),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Sampler(&shadow_sampler),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: wgpu::BindingResource::TextureView(&env_view),
                },
                wgpu::BindGroupEntry {
                    binding: 4,
                    resource: wgpu::BindingResource::TextureView(&ramp_view),
                },
                wgpu::BindGroupEntry {
                    binding: 5,
                    resource: wgpu::BindingResource::Sampler(&linear_sampler),
                },
            ],
        });
        let shadow_frame_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("shadow frame uniform"),
            size: std::mem::size_of::<ShadowFrameUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let shadow_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("shadow bind group"),
            layout: &shadow_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: shadow_frame_buffer.as_entire_binding(),
            }],
        });
        let (object_buffer, object_bind_group) = Self::object_buffer(device, &object_layout, 16);

        let ground = MeshData::grid(Vec2::splat(2.0), 0.0, 16, 16, |_, _| 0.0);
        let ground_mesh = GpuMesh::new(ctx, "ground", &ground).expect("the ground grid is valid");

        let mut renderer = Self {
            color_format,
            sample_count,
            msaa: None,
            object_layout,
            material_layout,
            wire_layout,
            pipelines,
            shadow_pipeline,
            debug_line_pipeline,
            debug_solid_pipeline,
            sky_pipeline,
            frame_buffer,
            frame_bind_group,
            shadow_frame_buffer,
            shadow_bind_group,
            shadow_view,
            shadow_size,
            object_buffer,
            object_bind_group,
            object_capacity: 16,
            linear_sampler,
            texture_sets: Vec::new(),
            ground_mesh,
            offscreen: None,
        };
        // The built-in sets, in the order of the TextureSetId constants.
        let plain = renderer.create_texture_set(ctx, "plain", None, None);
        let weave =
            renderer.create_texture_set(ctx, "weave", None, Some(&textures::weave_height(256, 16)));
        let bumps =
            renderer.create_texture_set(ctx, "bumps", None, Some(&textures::bumps_height(256, 4)));
        let checker = textures::checker(256, 8, [200, 200, 196], [120, 124, 128]);
        let checker = Texture {
            name: "checker".into(),
            width: checker.width(),
            height: checker.height(),
            rgba8: checker.into_raw(),
        };
        let checker = renderer.create_texture_set(ctx, "checker", Some(&checker), None);
        debug_assert_eq!(
            [plain, weave, bumps, checker],
            [
                TextureSetId::PLAIN,
                TextureSetId::WEAVE,
                TextureSetId::BUMPS,
                TextureSetId::CHECKER
            ]
        );
        let _ = &renderer.object_layout;
        renderer
    }

    fn object_buffer(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        capacity: u64,
    ) -> (wgpu::Buffer, wgpu::BindGroup) {
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("object uniforms"),
            size: capacity * OBJECT_STRIDE,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("object bind group"),
            layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &buffer,
                    offset: 0,
                    size: wgpu::BufferSize::new(std::mem::size_of::<ObjectUniform>() as u64),
                }),
            }],
        });
        (buffer, bind_group)
    }

    pub fn color_format(&self) -> wgpu::TextureFormat {
        self.color_format
    }

    pub fn sample_count(&self) -> u32 {
        self.sample_count
    }

    /// A depth target for this renderer (right format and sample count).
    pub fn depth_target(&self, ctx: &GpuContext, width: u32, height: u32) -> DepthTarget {
        DepthTarget::new(ctx, width, height, self.sample_count)
    }

    /// A texture set from a base colour map (a rig's texture, sRGB RGBA8; `None` = white) and a
    /// height map (`None` = flat). Both get a mip chain.
    pub fn create_texture_set(
        &mut self,
        ctx: &GpuContext,
        label: &str,
        base: Option<&Texture>,
        height: Option<&GrayImage>,
    ) -> TextureSetId {
        let white = [255u8; 4];
        let (base_data, bw, bh) = match base {
            Some(t)
                if t.width > 0
                    && t.height > 0
                    && t.rgba8.len() == (t.width * t.height * 4) as usize =>
            {
                (t.rgba8.as_slice(), t.width, t.height)
            }
            _ => (&white[..], 1, 1),
        };
        let base_view = textures::upload_2d(
            ctx,
            &format!("{label} base colour"),
            textures::TexelData {
                data: base_data,
                width: bw,
                height: bh,
                format: wgpu::TextureFormat::Rgba8UnormSrgb,
                channels: 4,
            },
            true,
        )
        .create_view(&Default::default());
        let flat = [128u8];
        let (h_data, hw, hh) = match height {
            Some(h) if h.width() > 0 && h.height() > 0 => {
                (h.as_raw().as_slice(), h.width(), h.height())
            }
            _ => (&flat[..], 1, 1),
        };
        let height_view = textures::upload_2d(
            ctx,
            &format!("{label} height"),
            textures::TexelData {
                data: h_data,
                width: hw,
                height: hh,
                format: wgpu::TextureFormat::R8Unorm,
                channels: 1,
            },
            true,
        )
        .create_view(&Default::default());
        let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&format!("{label} texture set")),
            layout: &self.material_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&base_view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&height_view),
                },
            ],
        });
        self.texture_sets.push(bind_group);
        TextureSetId(self.texture_sets.len() - 1)
    }

    /// Records the whole frame (shadow pass, main pass) into `encoder`, drawing into `target`
    /// (any view of a `color_format` texture) with `depth` of the same size. Record compute
    /// work (skinning) into the same encoder before calling this.
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        depth: &DepthTarget,
        scene: &FrameScene,
    ) -> Result<(), GpuError> {
        let size = target.texture().size();
        if size.width != depth.width || size.height != depth.height {
            return Err(GpuError::InvalidInput(format!(
                "colour target {}×{} and depth target {}×{} differ",
                size.width, size.height, depth.width, depth.height
            )));
        }
        if target.texture().format().remove_srgb_suffix() != self.color_format.remove_srgb_suffix()
        {
            return Err(GpuError::InvalidInput(format!(
                "target format {:?}, renderer built for {:?}",
                target.texture().format(),
                self.color_format
            )));
        }
        for item in scene.objects {
            if item.material.textures.0 >= self.texture_sets.len() {
                return Err(GpuError::InvalidInput(format!(
                    "object '{}' uses texture set {} of {}",
                    item.mesh.label,
                    item.material.textures.0,
                    self.texture_sets.len()
                )));
            }
        }
        if depth.sample_count != self.sample_count {
            return Err(GpuError::InvalidInput(format!(
                "depth target has {} samples, the renderer {} (use Renderer::depth_target)",
                depth.sample_count, self.sample_count
            )));
        }
        if self.sample_count > 1 {
            let fits = self.msaa.as_ref().is_some_and(|(t, _)| {
                t.width() == size.width
                    && t.height() == size.height
                    && t.format() == target.texture().format()
            });
            if !fits {
                let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
                    label: Some("msaa colour"),
                    size: wgpu::Extent3d {
                        width: size.width,
                        height: size.height,
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: self.sample_count,
                    dimension: wgpu::TextureDimension::D2,
                    // The pipelines' format, which the target view must have.
                    format: self.color_format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                    view_formats: &[],
                });
                let view = texture.create_view(&Default::default());
                self.msaa = Some((texture, view));
            }
        }
        let aspect = size.width as f32 / size.height.max(1) as f32;

        // Uniforms: objects first, the ground last.
        let mut objects: Vec<ObjectUniform> = scene
            .objects
            .iter()
            .map(|it| ObjectUniform::new(it.world_from_object, &it.material))
            .collect();
        if let Some(g) = &scene.ground {
            let m = Mat4::from_translation(Vec3::new(0.0, g.height, 0.0))
                * Mat4::from_scale(Vec3::new(g.half_extent, 1.0, g.half_extent));
            objects.push(ObjectUniform::new(m, &g.material));
        }
        let needed = objects.len().max(1) as u64;
        if needed > self.object_capacity {
            let capacity = needed.next_power_of_two();
            let (buffer, group) = Self::object_buffer(&ctx.device, &self.object_layout, capacity);
            self.object_buffer = buffer;
            self.object_bind_group = group;
            self.object_capacity = capacity;
        }
        let mut bytes = vec![0u8; (objects.len() as u64 * OBJECT_STRIDE) as usize];
        for (i, o) in objects.iter().enumerate() {
            let at = i * OBJECT_STRIDE as usize;
            bytes[at..at + std::mem::size_of::<ObjectUniform>()]
                .copy_from_slice(bytemuck::bytes_of(o));
        }
        if !bytes.is_empty() {
            ctx.queue.write_buffer(&self.object_buffer, 0, &bytes);
        }

        // The light's box holds the objects and where their shadows land on the ground.
        let l = scene.light.dir_to_light.try_normalize().unwrap_or(Vec3::Y);
        let (lo, hi) = scene
            .object_bounds()
            .unwrap_or((Vec3::splat(-1.0), Vec3::splat(1.0)));
        let (mut slo, mut shi) = (lo, hi);
        if let Some(g) = &scene.ground {
            if l.y > 0.05 {
                for i in 0..8 {
                    let c = Vec3::new(
                        if i & 1 == 0 { lo.x } else { hi.x },
                        if i & 2 == 0 { lo.y } else { hi.y },
                        if i & 4 == 0 { lo.z } else { hi.z },
                    );
                    let on_ground = c - l * ((c.y - g.height).max(0.0) / l.y);
                    slo = slo.min(on_ground);
                    shi = shi.max(on_ground);
                }
            }
        }
        let light_clip = light_clip_from_world(l, slo, shi);
        let shadows = scene.light.shadows && !scene.objects.is_empty();
        let clip_from_world = scene.camera.clip_from_world(aspect);
        let frame = FrameUniform {
            clip_from_world: clip_from_world.to_cols_array_2d(),
            world_from_clip: clip_from_world.inverse().to_cols_array_2d(),
            light_clip_from_world: light_clip.to_cols_array_2d(),
            eye_world: scene.camera.eye.extend(1.0).to_array(),
            light_dir_world: l.extend(0.0).to_array(),
            light_color: scene.light.color.extend(1.0).to_array(),
            ambient_color: scene.light.ambient.extend(1.0).to_array(),
            shadow_params: [
                1.0 / self.shadow_size as f32,
                1.0 / self.shadow_size as f32,
                if shadows { 1.0 } else { 0.0 },
                0.0,
            ],
            _pad: [[0.0; 4]; 3],
        };
        ctx.queue
            .write_buffer(&self.frame_buffer, 0, bytemuck::bytes_of(&frame));
        let shadow_frame = ShadowFrameUniform {
            light_clip_from_world: light_clip.to_cols_array_2d(),
            _pad: [[0.0; 4]; 12],
        };
        ctx.queue.write_buffer(
            &self.shadow_frame_buffer,
            0,
            bytemuck::bytes_of(&shadow_frame),
        );

        // Debug geometry for this frame.
        let debug_lines = scene.debug.filter(|d| !d.lines.is_empty()).map(|d| {
            (
                ctx.device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("debug lines"),
                        contents: bytemuck::cast_slice(&d.lines),
                        usage: wgpu::BufferUsages::VERTEX,
                    }),
                d.lines.len() as u32,
            )
        });
        let debug_solids = scene.debug.filter(|d| !d.solids.is_empty()).map(|d| {
            (
                ctx.device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("debug solids"),
                        contents: bytemuck::cast_slice(&d.solids),
                        usage: wgpu::BufferUsages::VERTEX,
                    }),
                d.solids.len() as u32,
            )
        });

        // Shadow pass (always run, so that a frame with shadows off still has a cleared map).
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("shadow pass"),
                color_attachments: &[],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &self.shadow_view,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            if shadows {
                pass.set_pipeline(&self.shadow_pipeline);
                pass.set_bind_group(0, &self.shadow_bind_group, &[]);
                for (i, item) in scene.objects.iter().enumerate() {
                    if !item.casts_shadow {
                        continue;
                    }
                    pass.set_bind_group(
                        1,
                        &self.object_bind_group,
                        &[(i as u64 * OBJECT_STRIDE) as u32],
                    );
                    pass.set_vertex_buffer(0, item.mesh.vertices.slice(..));
                    pass.set_index_buffer(item.mesh.indices.slice(..), wgpu::IndexFormat::Uint32);
                    pass.draw_indexed(0..item.mesh.index_count, 0, 0..1);
                }
            }
        }

        // The wireframe's per-mesh storage bindings (a bind group is a few handles; meshes are
        // owned by the caller, so they are not cached across frames).
        let wire_groups: Vec<Option<wgpu::BindGroup>> = scene
            .objects
            .iter()
            .map(|item| {
                (item.shading == Shading::Wireframe).then(|| {
                    ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("wireframe mesh bind group"),
                        layout: &self.wire_layout,
                        entries: &[
                            wgpu::BindGroupEntry {
                                binding: 0,
                                resource: item.mesh.vertices.as_entire_binding(),
                            },
                            wgpu::BindGroupEntry {
                                binding: 1,
                                resource: item.mesh.indices.as_entire_binding(),
                            },
                            wgpu::BindGroupEntry {
                                binding: 2,
                                resource: item.mesh.uvs.as_entire_binding(),
                            },
                        ],
                    })
                })
            })
            .collect();

        // Main pass.
        let c = scene.clear_color;
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("scene pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                // With MSAA: draw into the multisampled buffer and resolve into the target.
                view: match (&self.msaa, self.sample_count > 1) {
                    (Some((_, msaa)), true) => msaa,
                    _ => target,
                },
                depth_slice: None,
                resolve_target: if self.sample_count > 1 {
                    Some(target)
                } else {
                    None
                },
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: c.x as f64,
                        g: c.y as f64,
                        b: c.z as f64,
                        a: c.w as f64,
                    }),
                    // The resolve target receives the image; the multisampled buffer need not
                    // be kept.
                    store: if self.sample_count > 1 {
                        wgpu::StoreOp::Discard
                    } else {
                        wgpu::StoreOp::Store
                    },
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth.view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, &self.frame_bind_group, &[]);
        if scene.sky {
            pass.set_pipeline(&self.sky_pipeline);
            pass.draw(0..3, 0..1);
        }
        let draw = |pass: &mut wgpu::RenderPass,
                    slot: usize,
                    mesh: &GpuMesh,
                    shading: Shading,
                    set: TextureSetId,
                    wire: Option<&wgpu::BindGroup>| {
            pass.set_pipeline(&self.pipelines[&shading]);
            pass.set_bind_group(
                1,
                &self.object_bind_group,
                &[(slot as u64 * OBJECT_STRIDE) as u32],
            );
            pass.set_bind_group(2, &self.texture_sets[set.0], &[]);
            if let Some(group) = wire {
                pass.set_bind_group(3, group, &[]);
                pass.draw(0..mesh.index_count, 0..1);
            } else {
                pass.set_vertex_buffer(0, mesh.vertices.slice(..));
                pass.set_vertex_buffer(1, mesh.uvs.slice(..));
                pass.set_index_buffer(mesh.indices.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(0..mesh.index_count, 0, 0..1);
            }
        };
        if let Some(g) = &scene.ground {
            draw(
                &mut pass,
                scene.objects.len(),
                &self.ground_mesh,
                Shading::BlinnPhong,
                g.material.textures,
                None,
            );
        }
        for (i, item) in scene.objects.iter().enumerate() {
            draw(
                &mut pass,
                i,
                item.mesh,
                item.shading,
                item.material.textures,
                wire_groups[i].as_ref(),
            );
        }
        if let Some((buffer, count)) = &debug_solids {
            pass.set_pipeline(&self.debug_solid_pipeline);
            pass.set_vertex_buffer(0, buffer.slice(..));
            pass.draw(0..*count, 0..1);
        }
        if let Some((buffer, count)) = &debug_lines {
            pass.set_pipeline(&self.debug_line_pipeline);
            pass.set_vertex_buffer(0, buffer.slice(..));
            pass.draw(0..*count, 0..1);
        }
        drop(pass);
        let _ = &self.linear_sampler;
        Ok(())
    }

    /// Draws one frame into `target` and submits it.
    pub fn render(
        &mut self,
        ctx: &GpuContext,
        target: &wgpu::TextureView,
        depth: &DepthTarget,
        scene: &FrameScene,
    ) -> Result<(), GpuError> {
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("frame encoder"),
            });
        self.encode(ctx, &mut encoder, target, depth, scene)?;
        ctx.queue.submit([encoder.finish()]);
        Ok(())
    }

    /// Renders offscreen at `width × height` and reads the image back (sRGB RGBA8). The
    /// renderer must have been created for `Rgba8UnormSrgb`.
    pub fn render_to_image(
        &mut self,
        ctx: &GpuContext,
        width: u32,
        height: u32,
        scene: &FrameScene,
    ) -> Result<RgbaImage, GpuError> {
        if width == 0 || height == 0 {
            return Err(GpuError::InvalidInput(format!(
                "image size {width}×{height}"
            )));
        }
        let fits = self
            .offscreen
            .as_ref()
            .is_some_and(|o| o.depth.width == width && o.depth.height == height);
        if !fits {
            let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
                label: Some("offscreen colour target"),
                size: wgpu::Extent3d {
                    width,
                    height,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rgba8UnormSrgb,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
                view_formats: &[],
            });
            let view = texture.create_view(&Default::default());
            let depth = self.depth_target(ctx, width, height);
            let readback = readback_buffer(ctx, width, height);
            self.offscreen = Some(Offscreen {
                texture,
                view,
                depth,
                readback,
            });
        }
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("offscreen encoder"),
            });
        // Taken out for the call (encode borrows the renderer mutably), put back after.
        let o = self.offscreen.take().expect("created above");
        let encoded = self.encode(ctx, &mut encoder, &o.view, &o.depth, scene);
        let image = encoded
            .and_then(|()| read_texture_into(ctx, encoder, &o.texture, &o.readback, width, height));
        self.offscreen = Some(o);
        image
    }
}

/// Bytes per row of a texture-to-buffer copy of an RGBA8 image `width` wide: padded to
/// `COPY_BYTES_PER_ROW_ALIGNMENT` (256 bytes).
fn padded_row(width: u32) -> u32 {
    let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    (width * 4).div_ceil(align) * align
}

fn readback_buffer(ctx: &GpuContext, width: u32, height: u32) -> wgpu::Buffer {
    ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("offscreen readback"),
        size: padded_row(width) as u64 * height as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    })
}

/// Copies an RGBA8 texture into a new buffer, submits `encoder` with that copy and returns the
/// unpadded image.
pub fn read_texture(
    ctx: &GpuContext,
    encoder: wgpu::CommandEncoder,
    texture: &wgpu::Texture,
    width: u32,
    height: u32,
) -> Result<RgbaImage, GpuError> {
    let buffer = readback_buffer(ctx, width, height);
    read_texture_into(ctx, encoder, texture, &buffer, width, height)
}

/// As [`read_texture`] into `buffer` (`MAP_READ | COPY_DST`, at least `padded row × height`
/// bytes, unmapped; left unmapped again).
fn read_texture_into(
    ctx: &GpuContext,
    mut encoder: wgpu::CommandEncoder,
    texture: &wgpu::Texture,
    buffer: &wgpu::Buffer,
    width: u32,
    height: u32,
) -> Result<RgbaImage, GpuError> {
    let unpadded = width * 4;
    let padded = padded_row(width);
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: Some(height),
            },
        },
        wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
    );
    ctx.queue.submit([encoder.finish()]);
    let bytes = ctx.map_and_read(buffer)?;
    let mut pixels = Vec::with_capacity((unpadded * height) as usize);
    for row in bytes.chunks_exact(padded as usize).take(height as usize) {
        pixels.extend_from_slice(&row[..unpadded as usize]);
    }
    RgbaImage::from_raw(width, height, pixels)
        .ok_or_else(|| GpuError::Readback("image size mismatch".into()))
}
