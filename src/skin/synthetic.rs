//! Synthetic skinned meshes for tests and benchmarks: a closed cylinder around a chain of bones
//! with smooth weights (a "capsule chain"), in the shapes real rigs take (an armature node above
//! the bones, optionally 0.01-scaled, in either Mixamo convention).

use crate::anim::{Skeleton, Skin};
use crate::math::{Mat4, Transform, Vec3};
use crate::rig::{Rig, SkinnedMesh};

/// Parameters of [`capsule_chain`].
#[derive(Clone, Debug)]
pub struct ChainSpec {
    /// Number of bones along +Y (≥ 1).
    pub bones: usize,
    /// Length of each bone, armature units (> 0).
    pub bone_length: f32,
    /// Cylinder radius, armature units (> 0).
    pub radius: f32,
    /// Rings of vertices per bone (≥ 1); ring `b · rings_per_bone` lies on joint `b`.
    pub rings_per_bone: usize,
    /// Vertices per ring (≥ 3).
    pub segments: usize,
    /// Influences per vertex, 1 to 8 (the strongest bones by a Gaussian falloff, renormalised).
    pub influences: usize,
    /// Width of the Gaussian falloff around each bone's middle, in bone lengths (> 0).
    pub falloff: f32,
    /// The armature node above the bones (e.g. a 0.01 scale and 90° about X, as Mixamo).
    pub armature: Transform,
    /// true: positions in world units and the armature folded into the inverse binds (Blender
    /// exports); false: positions in armature units, inverse binds without the armature.
    pub fold_armature: bool,
}

impl Default for ChainSpec {
    fn default() -> Self {
        Self {
            bones: 2,
            bone_length: 1.0,
            radius: 0.25,
            rings_per_bone: 16,
            segments: 32,
            influences: 2,
            falloff: 0.5,
            armature: Transform::IDENTITY,
            fold_armature: false,
        }
    }
}

impl ChainSpec {
    /// Number of side rings (the caps add one centre vertex and one ring copy each).
    pub fn rings(&self) -> usize {
        self.bones * self.rings_per_bone + 1
    }

    /// Index of vertex `segment` of side ring `ring`.
    pub fn side_vertex(&self, ring: usize, segment: usize) -> usize {
        ring * self.segments + segment
    }
}

/// Builds a rig: node 0 "Armature", nodes 1..=bones "Bone0".. (a chain along +Y), one skin over
/// the bones, one closed mesh (side rings, then per cap a ring copy with the cap's normal and a
/// centre vertex), outward-wound triangles, unit normals, no clip.
pub fn capsule_chain(spec: &ChainSpec) -> Rig {
    let bones = spec.bones.max(1);
    let segs = spec.segments.max(3);
    let rpb = spec.rings_per_bone.max(1);
    let len = spec.bone_length;
    let k_inf = spec.influences.clamp(1, 8);
    let mut names = vec!["Armature".to_string()];
    let mut parents = vec![None];
    let mut rest = vec![spec.armature];
    for b in 0..bones {
        names.push(format!("Bone{b}"));
        parents.push(Some(b as u32));
        rest.push(Transform::from_translation(if b == 0 {
            Vec3::ZERO
        } else {
            Vec3::new(0.0, len, 0.0)
        }));
    }
    let skeleton = Skeleton {
        names,
        parents,
        rest,
    };
    let armature = spec.armature.to_mat4();
    let world_of_mesh = if spec.fold_armature {
        armature
    } else {
        Mat4::IDENTITY
    };
    let inverse_bind = (0..bones)
        .map(|b| {
            let bone_in_armature = Mat4::from_translation(Vec3::new(0.0, b as f32 * len, 0.0));
            (world_of_mesh * bone_in_armature).inverse()
        })
        .collect();
    let skin = Skin {
        name: "chain".into(),
        joints: (1..=bones as u32).collect(),
        inverse_bind,
        skeleton_root: Some(1),
    };

    let weights_at = |y: f32| -> ([u16; 8], [f32; 8]) {
        let mut raw: Vec<(f32, u16)> = (0..bones)
            .map(|b| {
                let d = (y - (b as f32 + 0.5) * len) / (spec.falloff * len);
                ((-d * d).exp(), b as u16)
            })
            .collect();
        raw.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        raw.truncate(k_inf);
        let sum: f32 = raw.iter().map(|r| r.0).sum();
        let mut j = [0u16; 8];
        let mut w = [0f32; 8];
        for (i, (x, b)) in raw.iter().enumerate() {
            j[i] = *b;
            w[i] = x / sum;
        }
        (j, w)
    };

    let mut positions = Vec::new();
    let mut normals = Vec::new();
    let mut ws: Vec<([u16; 8], [f32; 8])> = Vec::new();
    let ring_point = |r: usize, s: usize| {
        let a = s as f32 / segs as f32 * std::f32::consts::TAU;
        let y = r as f32 * len / rpb as f32;
        (
            Vec3::new(spec.radius * a.cos(), y, spec.radius * a.sin()),
            Vec3::new(a.cos(), 0.0, a.sin()),
        )
    };
    let rings = bones * rpb + 1;
    for r in 0..rings {
        for s in 0..segs {
            let (p, n) = ring_point(r, s);
            positions.push(p);
            normals.push(n);
            ws.push(weights_at(p.y));
        }
    }
    let mut indices = Vec::new();
    for r in 0..rings - 1 {
        for s in 0..segs {
            let s1 = (s + 1) % segs;
            let (a, b, c, d) = (
                r * segs + s,
                (r + 1) * segs + s,
                r * segs + s1,
                (r + 1) * segs + s1,
            );
            indices.extend([a, b, c, b, d, c].map(|i| i as u32));
        }
    }
    // Caps: a copy of the end ring with the cap normal, and a centre vertex.
    for (ring, normal) in [(0usize, -Vec3::Y), (rings - 1, Vec3::Y)] {
        let base = positions.len();
        for s in 0..segs {
            let (p, _) = ring_point(ring, s);
            positions.push(p);
            normals.push(normal);
            ws.push(weights_at(p.y));
        }
        let centre = positions.len();
        let y = ring as f32 * len / rpb as f32;
        positions.push(Vec3::new(0.0, y, 0.0));
        normals.push(normal);
        ws.push(weights_at(y));
        for s in 0..segs {
            let (a, b) = (base + s, base + (s + 1) % segs);
            if normal.y < 0.0 {
                indices.extend([centre, a, b].map(|i| i as u32));
            } else {
                indices.extend([centre, b, a].map(|i| i as u32));
            }
        }
    }
    if spec.fold_armature {
        let n3 = crate::math::Mat3::from_mat4(armature).inverse().transpose();
        for (p, n) in positions.iter_mut().zip(normals.iter_mut()) {
            *p = armature.transform_point3(*p);
            *n = (n3 * *n).normalize();
        }
    }
    let eight = k_inf > 4;
    let mesh = SkinnedMesh {
        name: "chain".into(),
        node: 0,
        skin: Some(0),
        material: None,
        positions,
        normals,
        uvs: Vec::new(),
        tangents: Vec::new(),
        joints: ws.iter().map(|(j, _)| [j[0], j[1], j[2], j[3]]).collect(),
        weights: ws.iter().map(|(_, w)| [w[0], w[1], w[2], w[3]]).collect(),
        joints1: if eight {
            ws.iter().map(|(j, _)| [j[4], j[5], j[6], j[7]]).collect()
        } else {
            Vec::new()
        },
        weights1: if eight {
            ws.iter().map(|(_, w)| [w[4], w[5], w[6], w[7]]).collect()
        } else {
            Vec::new()
        },
        indices,
        pin: Vec::new(),
    };
    Rig {
        source: "synthetic capsule chain".into(),
        skeleton,
        skins: vec![skin],
        meshes: vec![mesh],
        ..Rig::default()
    }
}

/// Signed volume enclosed by a closed, outward-wound triangle mesh (divergence theorem:
/// Σ p0 · (p1 × p2) / 6).
pub fn enclosed_volume(positions: &[Vec3], indices: &[u32]) -> f32 {
    let mut v = 0f64;
    for t in indices.chunks_exact(3) {
        let (a, b, c) = (
            positions[t[0] as usize],
            positions[t[1] as usize],
            positions[t[2] as usize],
        );
        v += a.as_dvec3().dot(b.as_dvec3().cross(c.as_dvec3()));
    }
    (v / 6.0) as f32
}
