//! A loaded (or generated) character: node hierarchy, skins, meshes, materials and clips.
//! The loader (`asset::gltf`) produces it, the built-in ninja generator builds it, the exporter
//! writes it back to glTF.

use crate::anim::{Clip, Skeleton, Skin};
use crate::math::{Vec2, Vec3, Vec4};

/// One mesh primitive placed in the scene by one node. A glTF mesh with three primitives used by
/// two nodes gives six of these, in node order then primitive order (the order `drape pose`
/// writes and the reference files use).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedMesh {
    /// `"<node name>/<mesh name>#<primitive>"` or whatever identifies it best for the user.
    pub name: String,
    /// Node index (into [`Skeleton`]) of the node that instantiates the mesh.
    pub node: u32,
    /// Index into [`Rig::skins`]; `None` for a rigid mesh that follows `node`.
    pub skin: Option<u32>,
    /// Index into [`Rig::materials`].
    pub material: Option<u32>,
    /// Bind-space positions (glTF POSITION, morph targets not applied).
    pub positions: Vec<Vec3>,
    /// Unit normals (computed, area-weighted, when the file has none).
    pub normals: Vec<Vec3>,
    /// TEXCOORD_0, or empty.
    pub uvs: Vec<Vec2>,
    /// TANGENT (xyz + handedness w), or empty.
    pub tangents: Vec<Vec4>,
    /// JOINTS_0 (indices into the skin's joint list); empty for rigid meshes.
    pub joints: Vec<[u16; 4]>,
    /// WEIGHTS_0, renormalised together with `weights1` so that each vertex sums to 1.
    pub weights: Vec<[f32; 4]>,
    /// JOINTS_1 for up to 8 influences, or empty.
    pub joints1: Vec<[u16; 4]>,
    /// WEIGHTS_1, or empty.
    pub weights1: Vec<[f32; 4]>,
    /// Triangle list (other modes are converted or refused by the loader).
    pub indices: Vec<u32>,
    /// Painted pin strength per vertex, 0 (free) … 1 (held by the skin), for simulating the mesh
    /// as cloth (`garments::mesh`): the custom attribute `_PIN` if the file has one, else the red
    /// channel of `COLOR_0`; empty when the file has neither.
    pub pin: Vec<f32>,
}

impl SkinnedMesh {
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// Influences per vertex: 0 (rigid), 4 or 8.
    pub fn influences(&self) -> usize {
        if self.joints.is_empty() {
            0
        } else if self.joints1.is_empty() {
            4
        } else {
            8
        }
    }
}

/// An RGBA8 image, decoded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Texture {
    pub name: String,
    pub width: u32,
    pub height: u32,
    /// Row-major RGBA8, `width * height * 4` bytes, sRGB as stored in the file.
    pub rgba8: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    pub name: String,
    /// Linear RGBA factor (glTF baseColorFactor).
    pub base_color: Vec4,
    /// Index into [`Rig::textures`].
    pub base_color_texture: Option<u32>,
    pub metallic: f32,
    pub roughness: f32,
    pub double_sided: bool,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            name: String::new(),
            base_color: Vec4::ONE,
            base_color_texture: None,
            metallic: 1.0,
            roughness: 1.0,
            double_sided: false,
        }
    }
}

/// Everything drape knows about a character file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rig {
    /// Where it came from (a path, or "built-in ninja").
    pub source: String,
    pub skeleton: Skeleton,
    pub skins: Vec<Skin>,
    pub meshes: Vec<SkinnedMesh>,
    pub materials: Vec<Material>,
    pub textures: Vec<Texture>,
    pub clips: Vec<Clip>,
    /// Non-fatal problems found while loading (renormalised weights, strided accessors the spec
    /// forbids, ignored morph channels, …), each said once.
    pub warnings: Vec<String>,
}

impl Rig {
    pub fn clip(&self, name: &str) -> Option<usize> {
        self.clips.iter().position(|c| c.name == name)
    }

    pub fn vertex_count(&self) -> usize {
        self.meshes.iter().map(|m| m.vertex_count()).sum()
    }
}
