//! Draws a [`Viewer`]'s frame with `drape::gpu`: the character skinned on the GPU with the
//! viewer's method (posed by the scene's forward kinematics), the garments uploaded from the
//! scene each frame, and the debug views (proxies, BVH, skeleton, cloth inside the skin). It records into any
//! `&TextureView` of the surface's format: the window's surface texture, or an offscreen
//! texture for a screenshot — one path for both.

use super::viewer::Viewer;
use crate::gpu::debug::DebugDraw;
use crate::gpu::renderer::{DepthTarget, DrawItem, FrameScene, ObjectMaterial, Renderer, Shading};
use crate::gpu::stage::{gpu_method, CHARACTER_DISPLACEMENT};
use crate::gpu::{Camera, GpuCharacter, GpuContext, GpuError, GpuMesh, MeshData, SkinPipeline};
use crate::math::{Vec3, Vec4};
use crate::scene::GarmentFrame;
use crate::skin::SkinMethod;

/// Base colour of each garment kind (indigo cape, charcoal hakama, red sash, white headband,
/// as in `drape render --garments`), linear RGB.
fn garment_color(kind: crate::garments::GarmentKind) -> Vec4 {
    use crate::garments::GarmentKind::*;
    let c = match kind {
        Cape => [0.18, 0.22, 0.45],
        Hakama => [0.16, 0.16, 0.18],
        Sash => [0.62, 0.10, 0.10],
        Headband => [0.85, 0.85, 0.80],
        // A mesh garment without a material of its own (see `garment_material`).
        Mesh => [0.5, 0.5, 0.5],
    };
    Vec4::new(c[0], c[1], c[2], 1.0)
}

fn samples(viewer: &Viewer) -> u32 {
    if viewer.settings.msaa {
        Renderer::DEFAULT_SAMPLES
    } else {
        1
    }
}

fn shading(name: &str, wireframe: bool) -> Shading {
    if wireframe {
        return Shading::Wireframe;
    }
    Shading::from_name(name).unwrap_or(Shading::Textured)
}

/// The GPU side of the viewer.
pub struct SceneRenderer {
    skin_pipeline: SkinPipeline,
    renderer: Renderer,
    character: GpuCharacter,
    character_generation: u64,
    /// Samples per pixel the renderer was built with.
    samples: u32,
    /// Whether the CoR centres of the current character are on the GPU.
    cor_uploaded: bool,
    garments: Vec<GpuMesh>,
    /// Reused buffers for the scene's garment frames.
    frame: GarmentFrame,
    flat: Vec<u32>,
    wet: Vec<f32>,
    debug: DebugDraw,
    depth: Option<DepthTarget>,
}

impl SceneRenderer {
    /// Uploads the viewer's character for targets of `format`.
    pub fn new(
        ctx: &GpuContext,
        format: wgpu::TextureFormat,
        viewer: &Viewer,
    ) -> Result<Self, GpuError> {
        let skin_pipeline = SkinPipeline::new(ctx);
        let samples = samples(viewer);
        let mut renderer = Renderer::with_samples(ctx, format, samples);
        let character = GpuCharacter::new(ctx, &skin_pipeline, &mut renderer, viewer.rig())?;
        Ok(Self {
            skin_pipeline,
            renderer,
            character,
            character_generation: viewer.character_generation,
            samples,
            cor_uploaded: false,
            garments: Vec::new(),
            frame: GarmentFrame::default(),
            flat: Vec::new(),
            wet: Vec::new(),
            debug: DebugDraw::default(),
            depth: None,
        })
    }

    /// The camera the viewer's orbit describes, for a target of `aspect`.
    pub fn camera(viewer: &Viewer) -> Camera {
        let o = &viewer.camera;
        let (near, far) = o.clip_range(1.5);
        Camera {
            eye: o.eye(),
            target: o.target,
            up: Vec3::Y,
            fov_y: super::orbit::FOV_Y_DEG.to_radians(),
            near,
            far,
        }
    }

    /// Records the viewer's frame into `target` (a view of a texture of the renderer's format).
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        viewer: &Viewer,
    ) -> Result<(), GpuError> {
        let size = target.texture().size();
        if self.samples != samples(viewer) {
            // Pipelines are built for one sample count; the character's texture sets live in
            // the renderer, so it is uploaded again with it.
            self.samples = samples(viewer);
            self.renderer = Renderer::with_samples(ctx, self.renderer.color_format(), self.samples);
            self.character =
                GpuCharacter::new(ctx, &self.skin_pipeline, &mut self.renderer, viewer.rig())?;
            self.cor_uploaded = false;
            self.depth = None;
        }
        if self.character_generation != viewer.character_generation {
            self.character =
                GpuCharacter::new(ctx, &self.skin_pipeline, &mut self.renderer, viewer.rig())?;
            self.character_generation = viewer.character_generation;
            self.cor_uploaded = false;
        }
        let scene = &viewer.scene;
        let method = scene.config.method;
        if method == SkinMethod::Cor && !self.cor_uploaded {
            // The scene computed (or read from the disk cache) the centres when CoR was chosen.
            for m in 0..scene.rig.meshes.len() {
                if let (Some(c), Some(gpu)) =
                    (scene.skinner.cor_centers(m), self.character.skinned_mut(m))
                {
                    gpu.set_cor_centers(ctx, &c.centers)?;
                }
            }
            self.cor_uploaded = true;
        }
        let world_from_node = scene.world_from_node();
        self.character.encode_skinning(
            ctx,
            &self.skin_pipeline,
            encoder,
            &scene.rig,
            world_from_node,
            gpu_method(method),
        )?;
        self.upload_garments(ctx, viewer)?;
        fill_debug(&mut self.debug, viewer);
        let s = &viewer.settings;
        let mut items =
            self.character
                .draw_items(world_from_node, shading(&s.body_shader, s.wireframe), None);
        for item in &mut items {
            item.material.displacement = CHARACTER_DISPLACEMENT;
        }
        let garment_shading = shading(&s.garment_shader, s.wireframe);
        for (mesh, g) in self.garments.iter().zip(&scene.garments) {
            // A garment made from one of the character's meshes keeps its material and texture
            // (its UVs are uploaded with it); the library's garments their own colours.
            let own = g
                .mesh
                .as_ref()
                .filter(|m| !m.uvs.is_empty())
                .and_then(|m| m.material)
                .and_then(|i| self.character.material(i));
            let material = own.unwrap_or_else(|| ObjectMaterial {
                base_color: crate::garments::mesh::material_color(&scene.rig, g.mesh.as_ref())
                    .unwrap_or_else(|| garment_color(g.kind)),
                ..Default::default()
            });
            items.push(DrawItem::new(mesh, garment_shading).with_material(material));
        }
        let mut frame = FrameScene::new(Self::camera(viewer), &items);
        let (az, el) = (s.light_azimuth.to_radians(), s.light_elevation.to_radians());
        frame.light.dir_to_light = Vec3::new(az.sin() * el.cos(), el.sin(), az.cos() * el.cos());
        frame.light.shadows = s.shadows;
        if !s.ground {
            frame.ground = None;
        }
        if !self.debug.is_empty() {
            frame.debug = Some(&self.debug);
        }
        let fits = self
            .depth
            .as_ref()
            .is_some_and(|d| d.width == size.width && d.height == size.height);
        if !fits {
            self.depth = Some(self.renderer.depth_target(ctx, size.width, size.height));
        }
        let depth = self.depth.as_ref().expect("depth target just made");
        self.renderer.encode(ctx, encoder, target, depth, &frame)
    }

    /// The scene's garments into GPU meshes (recreated when a rebuild changed their sizes).
    fn upload_garments(&mut self, ctx: &GpuContext, viewer: &Viewer) -> Result<(), GpuError> {
        let scene = &viewer.scene;
        let n = scene.garments.len();
        self.garments.truncate(n);
        let saturation = viewer.settings.wet_fabric().saturation.max(1e-6);
        for g in 0..n {
            scene.garment_frame_into(g, &mut self.frame);
            self.flat.clear();
            self.flat
                .extend(self.frame.triangles.iter().flatten().copied());
            // Absorbed water (g/g) as the shaders' 0–1 wetness: saturated is 1.
            self.wet.clear();
            self.wet.extend(
                self.frame
                    .wetness
                    .iter()
                    .map(|&a| (a / saturation).min(1.0)),
            );
            let f = &self.frame;
            let stale = g == self.garments.len()
                || self.garments[g].vertex_count as usize != f.positions.len()
                || self.garments[g].index_count as usize != self.flat.len();
            if stale {
                let data = MeshData {
                    positions: f.positions.clone(),
                    normals: f.normals.clone(),
                    uvs: f.uvs.clone(),
                    wetness: self.wet.clone(),
                    indices: self.flat.clone(),
                };
                let mesh = GpuMesh::new(ctx, &f.name, &data)?;
                if g == self.garments.len() {
                    self.garments.push(mesh);
                } else {
                    self.garments[g] = mesh;
                }
            } else {
                self.garments[g].update_vertices(
                    ctx,
                    &f.positions,
                    &f.normals,
                    &self.wet,
                    &self.flat,
                )?;
            }
        }
        Ok(())
    }
}

/// Proxies (capsules), BVH boxes (coloured by depth) and the skeleton.
fn fill_debug(debug: &mut DebugDraw, viewer: &Viewer) {
    debug.clear();
    let s = &viewer.settings;
    let scene = &viewer.scene;
    if s.show_proxies {
        let f = &scene.proxy_frame;
        let color = Vec4::new(0.2, 0.8, 0.9, 1.0);
        for &[a, b] in &scene.proxies.capsules {
            let (a, b) = (a as usize, b as usize);
            if a == b {
                debug.sphere(f.center[a], f.radius[a], color);
            } else {
                debug.capsule(f.center[a], f.radius[a], f.center[b], f.radius[b], color);
            }
        }
    }
    if s.show_bvh {
        for (lo, hi, depth) in scene.bvh.node_boxes() {
            // Root yellow, deeper levels towards green.
            let t = (depth as f32 / 6.0).min(1.0);
            let color = Vec4::new(1.0 - 0.7 * t, 0.9, 0.2 + 0.2 * t, 1.0);
            debug.aabb(lo, hi, color);
        }
    }
    // Cloth inside the visible skin (the viewer's check): a small cross at each such particle,
    // drawn over everything (lines ignore depth), so a vertex buried in the body shows.
    let th = &viewer.inspect.thresholds;
    for (i, depth) in viewer.inspect.inside_particles(scene) {
        let color = if depth > th.deep {
            Vec4::new(1.0, 0.15, 0.1, 1.0)
        } else if depth > th.shallow {
            Vec4::new(1.0, 0.55, 0.1, 1.0)
        } else {
            Vec4::new(1.0, 0.95, 0.2, 1.0)
        };
        let p = Vec3::from(scene.state.x[i]);
        let h = 0.006 + depth.min(0.03);
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            debug.line(p - axis * h, p + axis * h, color);
        }
    }
    if s.show_skeleton {
        let world = scene.world_from_node();
        let joints: Vec<Vec3> = world.iter().map(|m| m.w_axis.truncate()).collect();
        debug.skeleton(
            &joints,
            &scene.rig.skeleton.parents,
            Vec4::new(1.0, 0.5, 0.1, 1.0),
        );
    }
}
