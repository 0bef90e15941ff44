//! The one render path: [`Renderer::encode`] draws a [`FrameScene`] into any
//! `wgpu::TextureView` — a window's surface texture in the viewer, an offscreen texture for
//! `render_to_image`, screenshots and the golden-image tests.
//!
//! Per frame: a depth-only shadow pass from the key light (orthographic, fitted to the objects
//! and their shadows on the ground), then the main pass (ground, objects with their chosen
//! shader, debug solids, debug lines on top).
//!
//! Files: `scene` (what a frame is made of: [`FrameScene`], [`DrawItem`], [`Shading`], …),
//! `uniforms` (the uploaded uniform blocks), `pipelines` (bind group layouts and pipelines),
//! `passes` ([`Renderer::encode`]: uniforms, shadow pass, main pass), `offscreen`
//! ([`Renderer::render_to_image`] and the readback); this file holds the [`Renderer`], its
//! shared resources and texture sets.

mod offscreen;
mod passes;
mod pipelines;
mod scene;
mod uniforms;

use std::collections::HashMap;

use image::GrayImage;

use super::context::{GpuContext, GpuError};
use super::mesh::{GpuMesh, MeshData};
use super::textures;
use crate::math::Vec2;
use crate::rig::Texture;
use offscreen::Offscreen;
use pipelines::{Layouts, Pipelines};
use uniforms::{FrameUniform, ObjectUniform, ShadowFrameUniform, OBJECT_STRIDE};

pub use offscreen::read_texture;
pub use scene::{
    DepthTarget, DrawItem, FrameScene, Ground, KeyLight, ObjectMaterial, Shading, TextureSetId,
};

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
        let device = &ctx.device;
        let layouts = Layouts::new(device);
        let Pipelines {
            shading: pipelines,
            shadow: shadow_pipeline,
            debug_line: debug_line_pipeline,
            debug_solid: debug_solid_pipeline,
            sky: sky_pipeline,
        } = Pipelines::new(device, &layouts, color_format, sample_count);
        let Layouts {
            frame: frame_layout,
            object: object_layout,
            material: material_layout,
            wire: wire_layout,
            shadow: shadow_layout,
        } = layouts;

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
}
