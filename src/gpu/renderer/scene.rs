//! What a frame is made of, as the renderer's callers describe it: the per-object shader
//! ([`Shading`]), material and texture set, the draw list, key light, ground, the whole
//! [`FrameScene`], and the depth target the main pass draws with.

use crate::gpu::camera::Camera;
use crate::gpu::context::GpuContext;
use crate::gpu::debug::DebugDraw;
use crate::gpu::mesh::GpuMesh;
use crate::gpu::shaders;
use crate::math::{Mat4, Vec3, Vec4};

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

    pub(super) fn source(self) -> &'static str {
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
/// [`Renderer::create_texture_set`](super::Renderer::create_texture_set).
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
    /// Samples per pixel; must equal the renderer's
    /// [`Renderer::sample_count`](super::Renderer::sample_count).
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
