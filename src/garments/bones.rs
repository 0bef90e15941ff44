//! The bone map: which node of a skeleton plays each humanoid role the garments are laid out
//! from, keyed by the role's Mixamo base name (`Hips`, `Spine2`, `LeftUpLeg`...). A rig's map
//! is read from its nodes' names (after any Mixamo prefix, MIXAMO.md), else guessed from the
//! skeleton's shape, and then the scene file's `[bones]` table overrides single roles. The
//! garments ask for bones by role ([`super::BodyAtRest::joint`], [`super::BodyAtRest::node`]),
//! never by a rig's own names; [`has_bones`] alone looks at the names themselves.

use super::{GarmentError, GarmentKind};
use crate::anim::Skeleton;
use crate::math::Vec3;

/// Whether `skeleton` has, by name (after any Mixamo prefix), the bones a garment of `kind` is
/// laid out from, and the hips and legs every garment needs.
pub fn has_bones(skeleton: &Skeleton, kind: GarmentKind) -> bool {
    let need: &[&str] = match kind {
        GarmentKind::Cape => &["Neck", "Spine2", "LeftArm", "RightArm", "Hips"],
        GarmentKind::Hakama | GarmentKind::Sash => &["Hips", "Spine", "LeftFoot", "RightFoot"],
        GarmentKind::Headband => &["Head", "HeadTop_End"],
    };
    need.iter().all(|n| skeleton.find(n).is_some())
        && ["LeftUpLeg", "RightUpLeg", "LeftFoot", "RightFoot", "Hips"]
            .iter()
            .all(|n| skeleton.find(n).is_some())
}

/// The humanoid bones the library knows, by their Mixamo base names.
pub const HUMANOID_BONES: [&str; 22] = [
    "Hips",
    "Spine",
    "Spine1",
    "Spine2",
    "Neck",
    "Head",
    "HeadTop_End",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "LeftToeBase",
];

/// Which skeleton node plays each humanoid bone (by Mixamo base name), plus positions of bones
/// the rig lacks but the body gives (a head top taken from the skin).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoneMap {
    /// `(Mixamo base name, node index)`.
    pub nodes: Vec<(String, usize)>,
    /// `(Mixamo base name, world position at rest)` of bones with no node.
    pub points: Vec<(String, Vec3)>,
    /// Whether the map was guessed from the skeleton's shape rather than read from its names.
    pub guessed: bool,
}

impl BoneMap {
    /// Node of the humanoid bone `name`.
    pub fn get(&self, name: &str) -> Option<usize> {
        self.nodes.iter().find(|(n, _)| n == name).map(|&(_, i)| i)
    }

    fn set(&mut self, name: &str, node: usize) {
        self.nodes.retain(|(n, _)| n != name);
        self.nodes.push((name.to_string(), node));
    }

    /// The bones found by name (after any Mixamo prefix).
    pub fn by_name(skeleton: &Skeleton) -> BoneMap {
        BoneMap {
            nodes: HUMANOID_BONES
                .iter()
                .filter_map(|&n| skeleton.find(n).map(|i| (n.to_string(), i)))
                .collect(),
            ..BoneMap::default()
        }
    }

    /// The map for a skeleton: its Mixamo names where it has them (Hips at least), else a guess
    /// from its shape ([`BoneMap::guess`]); then `overrides` (`(base name, node name)`, the
    /// scene file's `[bones]` table) replace single entries.
    pub fn resolve(
        skeleton: &Skeleton,
        joint_world: &[Vec3],
        overrides: &[(String, String)],
    ) -> Result<BoneMap, GarmentError> {
        let named = BoneMap::by_name(skeleton);
        let mut map = if named.get("Hips").is_some() {
            named
        } else {
            match BoneMap::guess(skeleton, joint_world) {
                Ok(m) => m,
                // With a full table the guess is not needed.
                Err(e) if overrides.is_empty() => return Err(e),
                Err(_) => BoneMap::default(),
            }
        };
        for (bone, node) in overrides {
            let i = skeleton
                .names
                .iter()
                .position(|n| n == node)
                .or_else(|| skeleton.find(node))
                .ok_or_else(|| GarmentError::UnknownNode {
                    bone: bone.clone(),
                    node: node.clone(),
                })?;
            map.set(bone, i);
        }
        Ok(map)
    }

    /// Guesses the humanoid bones from the skeleton's topology and rest geometry (Y up):
    ///
    /// - the hips are the highest node (in the hierarchy) from which two chains go down (legs)
    ///   and one goes up (spine);
    /// - each leg chain is UpLeg, Leg, Foot (and ToeBase); the toes give the forward direction
    ///   (+Z where the feet have no toe joint), and the character's left is up × forward;
    /// - the spine goes up to the first node with two chains going sideways (arms, the chest:
    ///   Spine2) and one going up (Neck, then Head, then HeadTop_End where present);
    /// - an arm chain of four or more nodes starts with the shoulder (clavicle), else with the
    ///   upper arm (Arm, ForeArm, Hand).
    pub fn guess(skeleton: &Skeleton, joint_world: &[Vec3]) -> Result<BoneMap, GarmentError> {
        let n = skeleton.len();
        let mut children = vec![Vec::new(); n];
        for i in 0..n {
            if let Some(p) = skeleton.parents[i] {
                children[p as usize].push(i);
            }
        }
        let mut size = vec![1usize; n];
        for i in (0..n).rev() {
            if let Some(p) = skeleton.parents[i] {
                size[p as usize] += size[i];
            }
        }
        // The subtree's farthest node from `from`, as a direction.
        let reach = |from: usize, c: usize| -> Vec3 {
            let mut far = joint_world[c];
            let mut stack = vec![c];
            while let Some(k) = stack.pop() {
                if joint_world[k].distance(joint_world[from]) > far.distance(joint_world[from]) {
                    far = joint_world[k];
                }
                stack.extend(&children[k]);
            }
            far - joint_world[from]
        };
        // A chain from `c`: each step to the child with the biggest subtree.
        let chain = |c: usize| -> Vec<usize> {
            let mut out = vec![c];
            let mut k = c;
            while let Some(&next) = children[k].iter().max_by_key(|&&x| size[x]) {
                out.push(next);
                k = next;
            }
            out
        };
        let down = |d: Vec3| d.y < -0.6 * d.length() && d.length() > 1e-4;
        let up = |d: Vec3| d.y > 0.6 * d.length() && d.length() > 1e-4;
        let side = |d: Vec3| d.y.abs() < 0.7 * d.length() && d.length() > 1e-4;
        let mut why = String::from("no node has two chains going down and one going up");
        for h in 0..n {
            let big: Vec<usize> = children[h]
                .iter()
                .copied()
                .filter(|&c| size[c] >= 3)
                .collect();
            let legs: Vec<usize> = big.iter().copied().filter(|&c| down(reach(h, c))).collect();
            let spines: Vec<usize> = big.iter().copied().filter(|&c| up(reach(h, c))).collect();
            if legs.len() != 2 || spines.is_empty() {
                continue;
            }
            let spine_root = *spines
                .iter()
                .max_by_key(|&&c| size[c])
                .unwrap_or(&spines[0]);
            let (l0, l1) = (chain(legs[0]), chain(legs[1]));
            // Forward from the toes (foot → toe), else glTF's +Z.
            let forward = [&l0, &l1]
                .iter()
                .filter(|c| c.len() >= 4)
                .map(|c| (joint_world[c[3]] - joint_world[c[2]]).reject_from(Vec3::Y))
                .fold(Vec3::ZERO, |a, b| a + b)
                .try_normalize()
                .unwrap_or(Vec3::Z);
            let left = Vec3::Y.cross(forward);
            let (left_leg, right_leg) =
                if joint_world[l0[0]].dot(left) >= joint_world[l1[0]].dot(left) {
                    (l0, l1)
                } else {
                    (l1, l0)
                };
            // Up the spine to the chest: a node with two chains going sideways and one up.
            let mut spine = vec![spine_root];
            let mut chest = None;
            let mut k = spine_root;
            loop {
                let kids: Vec<usize> = children[k]
                    .iter()
                    .copied()
                    .filter(|&c| size[c] >= 2)
                    .collect();
                let sideways: Vec<usize> = kids
                    .iter()
                    .copied()
                    .filter(|&c| side(reach(k, c)))
                    .collect();
                let ups: Vec<usize> = kids.iter().copied().filter(|&c| up(reach(k, c))).collect();
                if sideways.len() >= 2 && !ups.is_empty() {
                    chest = Some((k, sideways, ups));
                    break;
                }
                match ups.first().or(kids.first()) {
                    Some(&next) => {
                        spine.push(next);
                        k = next;
                    }
                    None => break,
                }
            }
            let Some((chest, arms, ups)) = chest else {
                why = format!(
                    "'{}' has legs and a spine, but no chest with two arms and a neck",
                    skeleton.names[h]
                );
                continue;
            };
            let mut map = BoneMap {
                guessed: true,
                ..BoneMap::default()
            };
            map.set("Hips", h);
            map.set("Spine", spine[0]);
            if spine.len() >= 3 {
                map.set("Spine1", spine[1]);
            }
            map.set("Spine2", chest);
            for (side_name, leg) in [("Left", &left_leg), ("Right", &right_leg)] {
                if leg.len() < 3 {
                    why = format!("the {side_name} leg has fewer than three joints");
                    continue;
                }
                map.set(&format!("{side_name}UpLeg"), leg[0]);
                map.set(&format!("{side_name}Leg"), leg[1]);
                map.set(&format!("{side_name}Foot"), leg[2]);
                if leg.len() >= 4 {
                    map.set(&format!("{side_name}ToeBase"), leg[3]);
                }
            }
            // Two arms: the sideways chains farthest to the left and to the right.
            let lr = |c: &usize| reach(chest, *c).dot(left);
            let la = arms.iter().copied().max_by(|a, b| lr(a).total_cmp(&lr(b)));
            let ra = arms.iter().copied().min_by(|a, b| lr(a).total_cmp(&lr(b)));
            for (side_name, arm) in [("Left", la), ("Right", ra)] {
                let Some(arm) = arm else { continue };
                let c = chain(arm);
                let names = ["Shoulder", "Arm", "ForeArm", "Hand"];
                let skip = if c.len() >= 4 { 0 } else { 1 };
                for (name, &node) in names[skip..].iter().zip(&c) {
                    map.set(&format!("{side_name}{name}"), node);
                }
            }
            let neck = chain(*ups.iter().max_by_key(|&&c| size[c]).unwrap_or(&ups[0]));
            map.set("Neck", neck[0]);
            if neck.len() >= 2 {
                map.set("Head", neck[1]);
            }
            if neck.len() >= 3 {
                map.set("HeadTop_End", neck[2]);
            }
            if map.get("LeftFoot").is_none() || map.get("RightFoot").is_none() {
                continue;
            }
            return Ok(map);
        }
        Err(GarmentError::NotHumanoid(why))
    }
}
