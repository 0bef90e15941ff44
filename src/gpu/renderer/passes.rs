//! Recording one frame: the per-frame uniforms, the depth-only shadow pass from the key light
//! (orthographic, fitted to the objects and their shadows on the ground), then the main pass
//! (sky, ground, objects with their chosen shader, debug solids, debug lines on top).

use wgpu::util::DeviceExt;

use super::uniforms::{FrameUniform, ObjectUniform, ShadowFrameUniform, OBJECT_STRIDE};
use super::{DepthTarget, FrameScene, Renderer, Shading, TextureSetId};
use crate::gpu::camera::light_clip_from_world;
use crate::gpu::context::{GpuContext, GpuError};
use crate::gpu::mesh::GpuMesh;
use crate::math::{Mat4, Vec3};

/// A vertex buffer of debug geometry and its vertex count.
type DebugBuffer = (wgpu::Buffer, u32);

impl Renderer {
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

        let shadows = self.write_uniforms(ctx, scene, aspect);

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

        self.shadow_pass(encoder, scene, shadows);
        self.main_pass(
            ctx,
            encoder,
            target,
            depth,
            scene,
            debug_lines.as_ref(),
            debug_solids.as_ref(),
        );
        let _ = &self.linear_sampler;
        Ok(())
    }

    /// Uploads the object uniforms (objects first, the ground last; the buffer grows as
    /// needed), the frame uniform and the shadow frame uniform. Returns whether shadows are on.
    fn write_uniforms(&mut self, ctx: &GpuContext, scene: &FrameScene, aspect: f32) -> bool {
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
        shadows
    }

    /// The depth-only pass from the key light into the shadow map, always run, so that a frame
    /// with shadows off still has a cleared map.
    fn shadow_pass(&self, encoder: &mut wgpu::CommandEncoder, scene: &FrameScene, shadows: bool) {
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

    /// The scene pass into `target` (through the MSAA buffer when multisampling): sky, ground,
    /// objects, debug solids, debug lines.
    #[allow(clippy::too_many_arguments)]
    fn main_pass(
        &self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        depth: &DepthTarget,
        scene: &FrameScene,
        debug_lines: Option<&DebugBuffer>,
        debug_solids: Option<&DebugBuffer>,
    ) {
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
    }
}
