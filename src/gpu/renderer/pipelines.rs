//! The renderer's pipelines and the bind group layouts they share: one pipeline per [`Shading`]
//! (the wireframe pulls its vertices from storage buffers), the depth-only shadow pipeline,
//! the debug line and solid pipelines and the sky.

use std::collections::HashMap;

use super::{DepthTarget, Shading};
use crate::gpu::debug::{DebugLineVertex, DebugSolidVertex};
use crate::gpu::mesh::GpuVertex;
use crate::gpu::shaders;

/// The bind group layouts: group 0 (frame: uniforms, shadow map, environment, toon ramp,
/// sampler), group 1 (object uniforms, dynamic offset), group 2 (material textures), group 3
/// of the wireframe (a mesh's buffers as storage), and the shadow pass's group 0.
pub(super) struct Layouts {
    pub(super) frame: wgpu::BindGroupLayout,
    pub(super) object: wgpu::BindGroupLayout,
    pub(super) material: wgpu::BindGroupLayout,
    pub(super) wire: wgpu::BindGroupLayout,
    pub(super) shadow: wgpu::BindGroupLayout,
}

/// Every render pipeline, compiled up front.
pub(super) struct Pipelines {
    pub(super) shading: HashMap<Shading, wgpu::RenderPipeline>,
    pub(super) shadow: wgpu::RenderPipeline,
    pub(super) debug_line: wgpu::RenderPipeline,
    pub(super) debug_solid: wgpu::RenderPipeline,
    pub(super) sky: wgpu::RenderPipeline,
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

impl Layouts {
    /// Creates the layouts (frame, object, material, wireframe mesh, shadow frame).
    pub(super) fn new(device: &wgpu::Device) -> Self {
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
        Self {
            frame: frame_layout,
            object: object_layout,
            material: material_layout,
            wire: wire_layout,
            shadow: shadow_layout,
        }
    }
}

impl Pipelines {
    /// Compiles every pipeline for colour targets of `color_format` with `sample_count` samples
    /// per pixel (the shadow pipeline: depth only, one sample).
    pub(super) fn new(
        device: &wgpu::Device,
        layouts: &Layouts,
        color_format: wgpu::TextureFormat,
        sample_count: u32,
    ) -> Self {
        let multisample = wgpu::MultisampleState {
            count: sample_count,
            ..Default::default()
        };
        let main_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("scene pipeline layout"),
            bind_group_layouts: &[
                Some(&layouts.frame),
                Some(&layouts.object),
                Some(&layouts.material),
            ],
            immediate_size: 0,
        });
        let wire_pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("wireframe pipeline layout"),
            bind_group_layouts: &[
                Some(&layouts.frame),
                Some(&layouts.object),
                Some(&layouts.material),
                Some(&layouts.wire),
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
                bind_group_layouts: &[Some(&layouts.shadow), Some(&layouts.object)],
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
            bind_group_layouts: &[Some(&layouts.frame)],
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
        Self {
            shading: pipelines,
            shadow: shadow_pipeline,
            debug_line: debug_line_pipeline,
            debug_solid: debug_solid_pipeline,
            sky: sky_pipeline,
        }
    }
}
