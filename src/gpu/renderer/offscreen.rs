//! Rendering into an image: [`Renderer::render_to_image`]'s offscreen target (kept while the
//! size stays the same) and the texture-to-buffer readback, also used by the viewer's
//! screenshots ([`read_texture`]).

use image::RgbaImage;

use super::{DepthTarget, FrameScene, Renderer};
use crate::gpu::context::{GpuContext, GpuError};

/// An offscreen colour target of one size with its depth target and its readback buffer.
pub(super) struct Offscreen {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    depth: DepthTarget,
    readback: wgpu::Buffer,
}

impl Renderer {
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

pub(super) fn readback_buffer(ctx: &GpuContext, width: u32, height: u32) -> wgpu::Buffer {
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
pub(super) fn read_texture_into(
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
