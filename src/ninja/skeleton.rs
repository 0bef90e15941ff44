//! The ninja's skeleton: the 65-joint Mixamo humanoid, laid out like a Blender export of a Mixamo
//! FBX (MIXAMO.md, points marked *mimic*).
//!
//! # Spaces
//! - **character frame** (`*_char`): Y up, +Z forward (the way the character faces), +X the
//!   character's left, centimetres, origin on the floor between the feet. All authoring (joint
//!   offsets here, keyframes in `rigs/clips/*.toml`) happens in this frame.
//! - **armature space**: the space under the `Armature` node, which carries a 0.01 scale and a
//!   +90° rotation about X exactly as Blender writes a Mixamo armature to glTF. So
//!   `armature_from_char` is a −90° rotation about X; world up (+Y) is −Z in armature space.
//! - **world**: glTF, Y up, metres, feet on y = 0, facing +Z.
//!
//! The Hips' rest rotation undoes the armature's 90° (as newer Blender exports do), so every joint
//! below the Hips has an identity rest rotation and a rest translation given in the character
//! frame, in centimetres. Bind pose = rest pose.

use crate::anim::Skeleton;
use crate::math::{Mat4, Quat, Transform, Vec3};

/// Name of the armature node above `mixamorig:Hips`.
pub const ARMATURE: &str = "Armature";
/// Name of the node that instantiates the skinned mesh (a scene root beside the armature).
pub const MESH_NODE: &str = "Ninja";
/// The Mixamo prefix of every joint.
pub const PREFIX: &str = "mixamorig:";
/// The armature's uniform scale (centimetres to metres), as in every Mixamo export.
pub const ARMATURE_SCALE: f32 = 0.01;

/// `world_from_armature` rotation: +90° about X.
pub fn armature_rotation() -> Quat {
    Quat::from_rotation_x(std::f32::consts::FRAC_PI_2)
}

/// `armature_from_char` rotation: −90° about X (maps character Y-up to armature −Z-up).
pub fn armature_from_char() -> Quat {
    Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2)
}

/// One joint: base name (without prefix), parent base name, rest offset from the parent in the
/// character frame (cm). The Hips' offset is its position above the floor.
struct JointDef(&'static str, &'static str, [f32; 3]);

/// Adult male proportions, 175 cm to the top of the head (anthropometric ratios after Winter,
/// "Biomechanics and Motor Control of Human Movement", segment lengths as fractions of height H:
/// upper arm 0.186 H, forearm 0.146 H, thigh 0.245 H, shank 0.246 H, hip joint at 0.53 H).
/// Left side only; the right side mirrors X.
const TRUNK: &[JointDef] = &[
    JointDef("Hips", "", [0.0, 98.0, 0.0]),
    JointDef("Spine", "Hips", [0.0, 9.5, -0.5]),
    JointDef("Spine1", "Spine", [0.0, 11.0, -0.5]),
    JointDef("Spine2", "Spine1", [0.0, 12.5, 0.0]),
    JointDef("Neck", "Spine2", [0.0, 16.0, -0.5]),
    JointDef("Head", "Neck", [0.0, 9.5, 2.0]),
    JointDef("HeadTop_End", "Head", [0.0, 18.5, 1.0]),
];

const ARM: &[JointDef] = &[
    JointDef("Shoulder", "Spine2", [5.5, 11.5, -0.5]),
    JointDef("Arm", "Shoulder", [12.5, 0.0, 0.0]),
    JointDef("ForeArm", "Arm", [28.5, 0.0, 0.0]),
    JointDef("Hand", "ForeArm", [25.0, 0.0, 0.0]),
    // Palm down in the T-pose, thumb forward (+Z).
    JointDef("HandThumb1", "Hand", [2.2, -1.2, 2.4]),
    JointDef("HandThumb2", "HandThumb1", [2.6, -0.8, 2.2]),
    JointDef("HandThumb3", "HandThumb2", [2.4, -0.4, 1.2]),
    JointDef("HandThumb4", "HandThumb3", [2.1, -0.2, 0.8]),
    JointDef("HandIndex1", "Hand", [9.4, 0.1, 2.6]),
    JointDef("HandIndex2", "HandIndex1", [3.9, 0.0, 0.2]),
    JointDef("HandIndex3", "HandIndex2", [2.4, 0.0, 0.1]),
    JointDef("HandIndex4", "HandIndex3", [2.1, 0.0, 0.0]),
    JointDef("HandMiddle1", "Hand", [9.7, 0.2, 0.75]),
    JointDef("HandMiddle2", "HandMiddle1", [4.3, 0.0, 0.0]),
    JointDef("HandMiddle3", "HandMiddle2", [2.8, 0.0, 0.0]),
    JointDef("HandMiddle4", "HandMiddle3", [2.2, 0.0, 0.0]),
    JointDef("HandRing1", "Hand", [9.2, 0.1, -1.1]),
    JointDef("HandRing2", "HandRing1", [4.0, 0.0, -0.1]),
    JointDef("HandRing3", "HandRing2", [2.6, 0.0, -0.1]),
    JointDef("HandRing4", "HandRing3", [2.0, 0.0, 0.0]),
    JointDef("HandPinky1", "Hand", [8.4, -0.1, -2.8]),
    JointDef("HandPinky2", "HandPinky1", [3.2, 0.0, -0.3]),
    JointDef("HandPinky3", "HandPinky2", [2.0, 0.0, -0.2]),
    JointDef("HandPinky4", "HandPinky3", [1.8, 0.0, -0.1]),
];

const LEG: &[JointDef] = &[
    JointDef("UpLeg", "Hips", [9.0, -7.0, 0.0]),
    JointDef("Leg", "UpLeg", [0.0, -42.5, 0.5]),
    JointDef("Foot", "Leg", [0.0, -40.5, -1.5]),
    JointDef("ToeBase", "Foot", [0.0, -5.5, 13.0]),
    // Mixamo's toe end: 7.5 cm ahead of the ball of the foot, at its height.
    JointDef("Toe_End", "ToeBase", [0.0, 0.0, 7.5]),
];

/// Height of the ankle (`Foot` joint) above the floor at rest, cm.
pub const ANKLE_HEIGHT: f32 = 98.0 - 7.0 - 42.5 - 40.5;

/// The joints in hierarchy order (parents before children), base names and character-frame rest
/// offsets in cm. 65 joints.
pub fn joint_table() -> Vec<(String, Option<usize>, Vec3)> {
    let mut out: Vec<(String, Option<usize>, Vec3)> = Vec::new();
    let find = |out: &Vec<(String, Option<usize>, Vec3)>, name: &str| {
        out.iter().position(|(n, _, _)| n == name)
    };
    for JointDef(n, p, o) in TRUNK {
        let parent = if p.is_empty() { None } else { find(&out, p) };
        out.push((n.to_string(), parent, Vec3::from_array(*o)));
    }
    for (side, sx) in [("Left", 1.0f32), ("Right", -1.0)] {
        for JointDef(n, p, o) in ARM {
            let parent = if *p == "Spine2" {
                find(&out, "Spine2")
            } else {
                find(&out, &format!("{side}{p}"))
            };
            out.push((
                format!("{side}{n}"),
                parent,
                Vec3::new(o[0] * sx, o[1], o[2]),
            ));
        }
    }
    for (side, sx) in [("Left", 1.0f32), ("Right", -1.0)] {
        for JointDef(n, p, o) in LEG {
            let parent = if *p == "Hips" {
                find(&out, "Hips")
            } else {
                find(&out, &format!("{side}{p}"))
            };
            out.push((
                format!("{side}{n}"),
                parent,
                Vec3::new(o[0] * sx, o[1], o[2]),
            ));
        }
    }
    out
}

/// The ninja's node hierarchy: node 0 `Armature`, nodes 1..=65 the `mixamorig:` joints (Hips is
/// node 1), node 66 the mesh node `Ninja` (a scene root with an identity transform: glTF ignores a
/// skinned mesh node's transform, and giving it none keeps the validator quiet).
pub struct NinjaSkeleton {
    pub skeleton: Skeleton,
    /// Node index of each joint of [`joint_table`], in that order.
    pub joint_nodes: Vec<u32>,
    /// Rest offset of each joint from its parent joint in the character frame (cm); for the Hips
    /// its position above the floor.
    pub offsets_char: Vec<Vec3>,
    /// Parent joint (index into the joint list) of each joint.
    pub parent_joint: Vec<Option<usize>>,
    /// Base names ("Hips", "LeftArm", …).
    pub base_names: Vec<String>,
}

impl NinjaSkeleton {
    /// The ninja: 175 cm, one mesh node named [`MESH_NODE`].
    pub fn new() -> Self {
        Self::with_build(1.0, &[MESH_NODE])
    }

    /// The same 65 joints with every rest offset scaled by `scale` (1.0 = the ninja's 175 cm),
    /// followed by one scene-root mesh node per name in `mesh_nodes` (node indices 66, 67, …),
    /// for characters made of several meshes that share the one skin (a robot's surface and
    /// joints, a body and its hair).
    pub fn with_build(scale: f32, mesh_nodes: &[&str]) -> Self {
        let table: Vec<(String, Option<usize>, Vec3)> = joint_table()
            .into_iter()
            .map(|(n, p, o)| (n, p, o * scale))
            .collect();
        let mut names = vec![ARMATURE.to_string()];
        let mut parents = vec![None];
        let mut rest = vec![Transform {
            translation: Vec3::ZERO,
            rotation: armature_rotation(),
            scale: Vec3::splat(ARMATURE_SCALE),
        }];
        let mut joint_nodes = Vec::new();
        for (i, (name, parent, offset)) in table.iter().enumerate() {
            names.push(format!("{PREFIX}{name}"));
            joint_nodes.push(i as u32 + 1);
            match parent {
                Some(p) => {
                    parents.push(Some(*p as u32 + 1));
                    rest.push(Transform::from_translation(*offset));
                }
                None => {
                    parents.push(Some(0));
                    rest.push(Transform {
                        translation: armature_from_char() * *offset,
                        rotation: armature_from_char(),
                        scale: Vec3::ONE,
                    });
                }
            }
        }
        for m in mesh_nodes {
            names.push(m.to_string());
            parents.push(None);
            rest.push(Transform::IDENTITY);
        }
        Self {
            skeleton: Skeleton {
                names,
                parents,
                rest,
            },
            joint_nodes,
            offsets_char: table.iter().map(|t| t.2).collect(),
            parent_joint: table.iter().map(|t| t.1).collect(),
            base_names: table.iter().map(|t| t.0.clone()).collect(),
        }
    }

    pub fn joint_count(&self) -> usize {
        self.joint_nodes.len()
    }

    /// Joint index (into the joint list) of a base name; panics on a name not in the table,
    /// which is a programming error inside the generator (clip files are checked before).
    pub fn joint(&self, base: &str) -> usize {
        self.try_joint(base)
            .unwrap_or_else(|| panic!("no joint {base}"))
    }

    pub fn try_joint(&self, base: &str) -> Option<usize> {
        self.base_names.iter().position(|n| n == base)
    }

    /// Rest position of every joint in the character frame, cm.
    pub fn rest_positions_char(&self) -> Vec<Vec3> {
        let mut out: Vec<Vec3> = Vec::with_capacity(self.joint_count());
        for j in 0..self.joint_count() {
            out.push(match self.parent_joint[j] {
                Some(p) => out[p] + self.offsets_char[j],
                None => self.offsets_char[j],
            });
        }
        out
    }

    /// Inverse bind matrices, Blender's convention (MIXAMO.md): vertices are in metres in the
    /// world frame and the armature's ×100 is folded into these matrices, so that
    /// `world_from_joint × inverse_bind = identity` at rest.
    pub fn inverse_binds(&self) -> Vec<Mat4> {
        let world = self.skeleton.rest_world();
        self.joint_nodes
            .iter()
            .map(|&n| world[n as usize].inverse())
            .collect()
    }
}

impl Default for NinjaSkeleton {
    fn default() -> Self {
        Self::new()
    }
}
