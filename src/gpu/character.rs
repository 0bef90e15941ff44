//! A whole [`Rig`] on the GPU: every skinned mesh with its compute skinning, rigid meshes that
//! follow their node, and a texture set per material. Each frame: give it `world_from_node`
//! (forward kinematics of the current pose), record the skinning, then draw its items.

use super::context::{GpuContext, GpuError};
use super::mesh::{GpuMesh, MeshData};
use super::renderer::{DrawItem, ObjectMaterial, Renderer, Shading, TextureSetId};
use super::skin::{palette_from_pose, GpuSkinMethod, GpuSkinnedMesh, JointPalette, SkinPipeline};
use crate::math::{Mat4, Vec3};
use crate::rig::Rig;

enum Part {
    Skinned {
        skin: usize,
        mesh: GpuSkinnedMesh,
        bind_bounds: (Vec3, Vec3),
    },
    Rigid {
        node: usize,
        mesh: GpuMesh,
    },
}

/// The GPU side of one character.
pub struct GpuCharacter {
    /// One per `rig.meshes` entry, in the same order.
    parts: Vec<Part>,
    /// Per `rig.meshes` entry: its material's parameters and texture set.
    materials: Vec<ObjectMaterial>,
    /// Per `rig.materials` entry: its parameters and texture set (for garments made from the
    /// character's own meshes, which keep their material).
    by_material: Vec<ObjectMaterial>,
}

impl GpuCharacter {
    /// Uploads every mesh of `rig` (skinned meshes to the skinning pass, rigid ones as they
    /// are) and every material's base colour texture. Refuses meshes that point at a missing
    /// skin or carry bad influences (typed error, nothing half-uploaded is kept).
    pub fn new(
        ctx: &GpuContext,
        skin_pipeline: &SkinPipeline,
        renderer: &mut Renderer,
        rig: &Rig,
    ) -> Result<Self, GpuError> {
        let mut sets: Vec<Option<TextureSetId>> = vec![None; rig.textures.len()];
        // Height map of every material: a plain weave (the bump and displacement shaders show
        // it; the others ignore it). Characters wear cloth, and glTF has no height maps.
        let weave = super::textures::weave_height(256, 32);
        // Every material of the file, its texture uploaded once: the meshes' and those of meshes
        // simulated as cloth (taken out of the rig's meshes but not out of its materials).
        let by_material: Vec<ObjectMaterial> = rig
            .materials
            .iter()
            .map(|mat| {
                let mut m = ObjectMaterial {
                    textures: TextureSetId::WEAVE,
                    ..Default::default()
                };
                m.base_color = mat.base_color;
                // glTF roughness → Blinn-Phong exponent (a common mapping: p = 2/α² − 2 with
                // α = roughness², Walter et al. 2007 §5.2's Beckmann–Phong correspondence),
                // clamped to the exponent's documented range.
                let alpha = (mat.roughness * mat.roughness).clamp(0.03, 1.0);
                m.shininess = (2.0 / (alpha * alpha) - 2.0).clamp(1.0, 2048.0);
                m.specular = 0.04 + 0.5 * (1.0 - mat.roughness).clamp(0.0, 1.0);
                if let Some(t) = mat.base_color_texture.map(|t| t as usize) {
                    if let Some(tex) = rig.textures.get(t) {
                        let set = *sets[t].get_or_insert_with(|| {
                            renderer.create_texture_set(ctx, &tex.name, Some(tex), Some(&weave))
                        });
                        m.textures = set;
                    }
                }
                m
            })
            .collect();
        let mut parts = Vec::with_capacity(rig.meshes.len());
        let mut materials = Vec::with_capacity(rig.meshes.len());
        for mesh in &rig.meshes {
            let part = match mesh.skin {
                Some(s) if !mesh.joints.is_empty() => {
                    let skin = rig.skins.get(s as usize).ok_or_else(|| {
                        GpuError::InvalidInput(format!(
                            "mesh '{}' uses missing skin {s}",
                            mesh.name
                        ))
                    })?;
                    let gpu = GpuSkinnedMesh::new(ctx, skin_pipeline, mesh, skin.joints.len())?;
                    let bind_bounds = gpu.mesh.bounds;
                    Part::Skinned {
                        skin: s as usize,
                        mesh: gpu,
                        bind_bounds,
                    }
                }
                _ => {
                    let data = MeshData {
                        positions: mesh.positions.clone(),
                        normals: mesh.normals.clone(),
                        uvs: mesh.uvs.clone(),
                        wetness: Vec::new(),
                        indices: mesh.indices.clone(),
                    };
                    let mut data = data;
                    if data.normals.len() != data.positions.len() {
                        data.recompute_normals();
                    }
                    Part::Rigid {
                        node: mesh.node as usize,
                        mesh: GpuMesh::new(ctx, &mesh.name, &data)?,
                    }
                }
            };
            parts.push(part);
            let m = mesh
                .material
                .and_then(|i| by_material.get(i as usize).copied())
                .unwrap_or(ObjectMaterial {
                    textures: TextureSetId::WEAVE,
                    ..Default::default()
                });
            materials.push(m);
        }
        Ok(Self {
            parts,
            materials,
            by_material,
        })
    }

    /// The parameters and texture set of `rig.materials[index]` as uploaded (a garment made from
    /// one of the character's meshes is drawn with it).
    pub fn material(&self, index: u32) -> Option<ObjectMaterial> {
        self.by_material.get(index as usize).copied()
    }

    /// Uploads this frame's palettes and records the skinning dispatches into `encoder`.
    /// `world_from_node` is the forward kinematics of the pose (`Pose::world_from_node`).
    pub fn encode_skinning(
        &mut self,
        ctx: &GpuContext,
        skin_pipeline: &SkinPipeline,
        encoder: &mut wgpu::CommandEncoder,
        rig: &Rig,
        world_from_node: &[Mat4],
        method: GpuSkinMethod,
    ) -> Result<(), GpuError> {
        for part in &mut self.parts {
            if let Part::Skinned {
                skin,
                mesh,
                bind_bounds,
            } = part
            {
                let s = &rig.skins[*skin];
                let palette = palette_from_pose(s, world_from_node);
                mesh.set_palette(ctx, &palette)?;
                mesh.mesh.bounds = skinned_bounds(*bind_bounds, &palette);
                mesh.encode(ctx, skin_pipeline, encoder, method)?;
            }
        }
        Ok(())
    }

    /// The skinned mesh of `rig.meshes[index]`, to set its CoR centres or read it back.
    pub fn skinned_mut(&mut self, index: usize) -> Option<&mut GpuSkinnedMesh> {
        match self.parts.get_mut(index) {
            Some(Part::Skinned { mesh, .. }) => Some(mesh),
            _ => None,
        }
    }

    /// This frame's draw items, one per mesh, with `shading` and each mesh's own material
    /// (or `material` for all, when given).
    pub fn draw_items(
        &self,
        world_from_node: &[Mat4],
        shading: Shading,
        material: Option<ObjectMaterial>,
    ) -> Vec<DrawItem<'_>> {
        self.parts
            .iter()
            .zip(&self.materials)
            .map(|(part, m)| {
                let m = material.unwrap_or(*m);
                match part {
                    Part::Skinned { mesh, .. } => {
                        DrawItem::new(&mesh.mesh, shading).with_material(m)
                    }
                    Part::Rigid { node, mesh } => DrawItem::new(mesh, shading)
                        .with_material(m)
                        .with_transform(
                            world_from_node
                                .get(*node)
                                .copied()
                                .unwrap_or(Mat4::IDENTITY),
                        ),
                }
            })
            .collect()
    }
}

/// Conservative world bounds of a skinned mesh: an LBS vertex lies in the convex hull of its
/// joints' images of it, so the union of every joint's image of the bind-space box contains it
/// (DQS and CoR stay within it up to their small deviations from LBS).
fn skinned_bounds(bind: (Vec3, Vec3), palette: &[JointPalette]) -> (Vec3, Vec3) {
    let (lo, hi) = bind;
    let mut out: Option<(Vec3, Vec3)> = None;
    for j in palette {
        for i in 0..8 {
            let c = Vec3::new(
                if i & 1 == 0 { lo.x } else { hi.x },
                if i & 2 == 0 { lo.y } else { hi.y },
                if i & 4 == 0 { lo.z } else { hi.z },
            );
            let r = &j.lbs_rows;
            let p = Vec3::new(
                r[0][0] * c.x + r[0][1] * c.y + r[0][2] * c.z + r[0][3],
                r[1][0] * c.x + r[1][1] * c.y + r[1][2] * c.z + r[1][3],
                r[2][0] * c.x + r[2][1] * c.y + r[2][2] * c.z + r[2][3],
            );
            out = Some(match out {
                Some((a, b)) => (a.min(p), b.max(p)),
                None => (p, p),
            });
        }
    }
    out.unwrap_or(bind)
}
