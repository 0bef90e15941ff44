//! The WGSL shader suite in `shaders/`, compiled into the binary. A file whose first line is
//! `// #import common.wgsl` is prefixed with `shaders/common.wgsl` (WGSL has no includes);
//! `tests/shaders.rs` validates every file that way with naga, no GPU needed.

/// Shared declarations (bind groups, vertex I/O, lighting, shadows, wet look).
pub const COMMON: &str = include_str!("../../shaders/common.wgsl");
pub const WIREFRAME: &str = include_str!("../../shaders/wireframe.wgsl");
pub const NORMALS: &str = include_str!("../../shaders/normals.wgsl");
pub const PHONG: &str = include_str!("../../shaders/phong.wgsl");
pub const TEXTURE: &str = include_str!("../../shaders/texture.wgsl");
pub const BUMP: &str = include_str!("../../shaders/bump.wgsl");
pub const DISPLACE: &str = include_str!("../../shaders/displace.wgsl");
pub const MIRROR: &str = include_str!("../../shaders/mirror.wgsl");
pub const TOON: &str = include_str!("../../shaders/toon.wgsl");
pub const SHADOW: &str = include_str!("../../shaders/shadow.wgsl");
pub const DEBUG: &str = include_str!("../../shaders/debug.wgsl");
pub const SKY: &str = include_str!("../../shaders/sky.wgsl");
pub const SKIN: &str = include_str!("../../shaders/skin.wgsl");

/// The marker line that asks for `common.wgsl` to be prepended.
pub const IMPORT_COMMON: &str = "// #import common.wgsl";

/// The complete WGSL source of a shader file: itself, or `common.wgsl` followed by it.
pub fn compose(source: &str) -> String {
    if source.lines().next().map(str::trim) == Some(IMPORT_COMMON) {
        let mut s = String::with_capacity(COMMON.len() + source.len() + 1);
        s.push_str(COMMON);
        s.push('\n');
        s.push_str(source);
        s
    } else {
        source.to_string()
    }
}

pub(crate) fn module(device: &wgpu::Device, label: &str, source: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(compose(source).into()),
    })
}
