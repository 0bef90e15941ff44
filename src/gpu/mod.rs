//! The GPU side of drape (feature `gpu`): a wgpu context with or without a window surface, meshes
//! in GPU buffers, skinning as a compute pass (LBS, DQS, optimized centres of rotation), and one
//! renderer that draws a [`FrameScene`] into any `wgpu::TextureView` (a window's swapchain image or
//! an offscreen texture) with a per-object choice of shader from `shaders/`.
//!
//! One frame, headless (the viewer does the same with its surface texture's view and
//! `GpuContext::from_instance(instance, Some(&surface))`):
//!
//! ```no_run
//! use drape::gpu::{Camera, DrawItem, FrameScene, GpuContext, GpuMesh, MeshData, Renderer, Shading};
//! use drape::math::{Vec2, Vec3};
//!
//! # fn main() -> Result<(), drape::gpu::GpuError> {
//! let ctx = GpuContext::headless()?;
//! println!("rendering on {}", ctx.summary);
//! let mut renderer = Renderer::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb);
//! let ball = GpuMesh::new(&ctx, "ball", &MeshData::uv_sphere(Vec3::new(0.0, 1.0, 0.0), 0.5, 48, 24))?;
//! let mut cloth = GpuMesh::new(&ctx, "cloth", &MeshData::grid(Vec2::ONE, 0.2, 32, 32, |u, _| u))?;
//! // Each frame the simulation uploads positions (normals recomputed) and wetness:
//! # let (x, wetness, triangles): (Vec<Vec3>, Vec<f32>, Vec<u32>) = (vec![], vec![], vec![]);
//! cloth.update_vertices(&ctx, &x, &[], &wetness, &triangles)?;
//! let items = [DrawItem::new(&ball, Shading::Toon), DrawItem::new(&cloth, Shading::BlinnPhong)];
//! let camera = Camera::frame_bounds(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 1.5, 1.0), 16.0 / 9.0, Vec3::new(0.0, -0.3, -1.0), 1.1);
//! let image = renderer.render_to_image(&ctx, 1280, 720, &FrameScene::new(camera, &items))?;
//! image.save("frame.png").ok();
//! # Ok(())
//! # }
//! ```
//!
//! This module only reads core types (`Rig`, `SkinnedMesh`, `Texture`, `Skin`); the simulation
//! never reads back from the GPU. Every `#[repr(C)]` struct here that is uploaded mirrors a WGSL
//! struct of the same name and documents its byte layout.

pub mod camera;
pub mod character;
pub mod context;
pub mod debug;
pub mod mesh;
pub mod renderer;
pub mod shaders;
pub mod skin;
pub mod stage;
pub mod textures;

pub use camera::Camera;
pub use character::GpuCharacter;
pub use context::{AdapterSummary, GpuContext, GpuError};
pub use debug::DebugDraw;
pub use mesh::{GpuMesh, MeshData};
pub use renderer::{
    DepthTarget, DrawItem, FrameScene, Ground, KeyLight, ObjectMaterial, Renderer, Shading,
    TextureSetId,
};
pub use skin::{GpuSkinMethod, GpuSkinnedMesh, JointPalette, SkinPipeline};
pub use stage::{CameraView, GarmentFrame, Stage};
