//! The node hierarchy of a loaded scene.

use crate::math::{Mat4, Transform};

/// Every node of a glTF scene that matters for posing (joints, the armature above them, mesh nodes),
/// stored as structs of arrays and sorted so that **parents come before children**. Index `i` here
/// is a "node index" everywhere else in drape (skins, clips, meshes refer to these indices, not to
/// the glTF file's own node numbers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skeleton {
    /// Node names as in the file ("" where the file has none).
    pub names: Vec<String>,
    /// Parent of each node; `None` for scene roots. `parents[i] < i` always.
    pub parents: Vec<Option<u32>>,
    /// `parent_from_node` at rest (the file's node TRS / matrix).
    pub rest: Vec<Transform>,
}

impl Skeleton {
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Node `node` and the nodes above it, nearest first (at most [`Skeleton::len`] of them, so
    /// a malformed parent cycle cannot loop; nothing for a node out of range).
    pub fn self_and_ancestors(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors((node < self.len()).then_some(node), |&k| {
            self.parents.get(k).copied().flatten().map(|p| p as usize)
        })
        .take(self.len())
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The name with any Mixamo-style prefix removed: `mixamorig:Hips`, `mixamorig1:Hips`,
    /// `mixamorigHips` and `Hips` all give `Hips` (MIXAMO.md: match bones by the name after the
    /// prefix).
    pub fn base_name(name: &str) -> &str {
        if let Some(i) = name.rfind(':') {
            return &name[i + 1..];
        }
        if let Some(rest) = name.strip_prefix("mixamorig") {
            let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            if !rest.is_empty() {
                return rest;
            }
        }
        name
    }

    /// Finds a node by its name after any prefix (`find("LeftArm")`), or by its full name.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name).or_else(|| {
            self.names
                .iter()
                .position(|n| Self::base_name(n) == Self::base_name(name))
        })
    }

    /// `world_from_node` for every node at rest.
    pub fn rest_world(&self) -> Vec<Mat4> {
        let mut out = Vec::with_capacity(self.len());
        for i in 0..self.len() {
            let local = self.rest[i].to_mat4();
            out.push(match self.parents[i] {
                Some(p) => out[p as usize] * local,
                None => local,
            });
        }
        out
    }
}

/// A glTF skin: the joints (as node indices into [`Skeleton`]) and their inverse bind matrices.
/// The skin matrix of joint `k` is `world_from_node[joints[k]] * inverse_bind[k]`
/// (`world_from_bind`): glTF ignores the skinned mesh node's own transform.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skin {
    pub name: String,
    /// Node index of each joint; a vertex's joint number `k` means `joints[k]`.
    pub joints: Vec<u32>,
    /// `joint_from_bind` for each joint (identity where the file has none).
    pub inverse_bind: Vec<Mat4>,
    /// The skin's `skeleton` root node, if the file names one.
    pub skeleton_root: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skeleton(parents: Vec<Option<u32>>) -> Skeleton {
        let n = parents.len();
        Skeleton {
            names: (0..n).map(|i| format!("n{i}")).collect(),
            parents,
            rest: vec![Transform::IDENTITY; n],
        }
    }

    #[test]
    fn ancestors_go_up_to_the_root_and_stop_on_a_cycle() {
        let sk = skeleton(vec![None, Some(0), Some(1), Some(0)]);
        assert_eq!(sk.self_and_ancestors(2).collect::<Vec<_>>(), [2, 1, 0]);
        assert_eq!(sk.self_and_ancestors(3).collect::<Vec<_>>(), [3, 0]);
        assert_eq!(sk.self_and_ancestors(9).count(), 0);
        // A malformed file: 0 and 1 each other's parent.
        let bad = skeleton(vec![Some(1), Some(0)]);
        assert_eq!(bad.self_and_ancestors(0).count(), 2);
    }
}
