//! The GPU side of drape (feature `gpu`): a wgpu context with or without a window surface, meshes
//! in GPU buffers, skinning as a compute pass (LBS, DQS, optimized centres of rotation), and one
//! renderer that draws a [`FrameScene`] into any `wgpu::TextureView` (a window's swapchain image or
//! an offscreen texture) with a per-object choice of shader from `shaders/`.
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
