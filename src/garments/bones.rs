//! The bone map: which node of a skeleton plays each humanoid role the garments are laid out
//! from, keyed by the role's Mixamo base name (`Hips`, `Spine2`, `LeftUpLeg`...). The garments
//! ask for bones by role ([`super::BodyAtRest::joint`], [`super::BodyAtRest::node`]), never by a
//! rig's own names.
//!
//! # How a rig's map is found ([`BoneMap::resolve`])
//! 1. Mixamo base names (after any prefix such as `mixamorig:`, MIXAMO.md).
//! 2. Other common naming schemes, case-insensitive, for the roles still missing
//!    ([`read_name`]): Blender and Rigify (`upper_arm.L`, `thigh.L`, `DEF-` deform bones,
//!    `.001` segments), Unreal's mannequin (`upperarm_l`, `thigh_l`, `calf_l`, `pelvis`),
//!    VRM/Unity humanoid (`leftUpperArm`, `LeftUpperLeg`, VRoid's `J_Bip_L_UpperArm`), these
//!    files' own (`UpperArm.L`, `upperarm.l`, `LowerLeg.L`), `L_`/`R_` prefixes and 3ds Max's
//!    `Bip01 L Thigh`; prefixes such as `mixamorig1:` or `Armature|` are dropped. Where several
//!    nodes read as one role, a bone carrying skin weight beats one that does not, then the
//!    one nearest the root (a bone's first segment, a wrist before its hand).
//! 3. Roles filled from the chains between those found ([`BoneMap::fill_chains`]): the hips
//!    where the legs meet, the chest (`Spine2`) where the arms meet, `Spine`/`Spine1` from the
//!    spine between hips and chest whatever its length, the neck between chest and head (the
//!    head itself on a rig with no neck), a hand, forearm or foot from its limb's chain.
//! 4. The skeleton's shape ([`BoneMap::guess_among`]) for the roles still missing, looking only
//!    at bones that carry skin weight (a rigid mesh under a node counts as weight on it, see
//!    [`weighted_nodes`]) and their ancestors, so IK targets, poles and control bones are
//!    ignored.
//! 5. The scene file's `[bones]` table overrides single roles.
//!
//! Each role records how it was found ([`BoneSource`]); [`BoneMap::report`] lists them.

use super::{GarmentError, GarmentKind};
use crate::anim::Skeleton;
use crate::math::Vec3;
use crate::rig::Rig;

/// Whether `skeleton` has, by name (any scheme [`BoneMap::by_names`] reads, with the chains
/// between them filled), the bones a garment of `kind` is laid out from, and the hips and legs
/// every garment needs. A rig this says no to may still be dressed from its shape.
pub fn has_bones(skeleton: &Skeleton, kind: GarmentKind) -> bool {
    let map = BoneMap::by_names(skeleton, &[]);
    let need: &[&str] = match kind {
        GarmentKind::Cape => &["Neck", "Spine2", "LeftArm", "RightArm", "Hips"],
        GarmentKind::Hakama | GarmentKind::Sash => &["Hips", "Spine", "LeftFoot", "RightFoot"],
        GarmentKind::Headband => &["Head"],
        // A modelled mesh is laid out already: only the hips and legs below.
        GarmentKind::Mesh => &[],
    };
    need.iter().all(|n| map.get(n).is_some())
        && ["LeftUpLeg", "RightUpLeg", "LeftFoot", "RightFoot", "Hips"]
            .iter()
            .all(|n| map.get(n).is_some())
}

/// The humanoid bones the library knows, by their Mixamo base names.
pub const HUMANOID_BONES: [&str; 23] = [
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
    "RightToeBase",
];

/// The roles every garment together needs; a map missing one is completed from the shape.
const REQUIRED: [&str; 11] = [
    "Hips",
    "Spine",
    "Spine2",
    "Neck",
    "Head",
    "LeftArm",
    "RightArm",
    "LeftUpLeg",
    "RightUpLeg",
    "LeftFoot",
    "RightFoot",
];

/// A naming scheme a bone's name was read in (see [`read_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameScheme {
    /// Blender and Rigify: side suffix `.L`/`.R` (`upper_arm.L`, `UpperArm.L`, `thigh.l`).
    Blender,
    /// Unreal's mannequin and the like: side suffix `_l`/`_r` (`upperarm_l`, `thigh_l`).
    Unreal,
    /// VRM / Unity humanoid: side as a `left`/`Left` prefix in camel case (`leftUpperArm`).
    Humanoid,
    /// Side as a separate prefix: `L_UpperArm`, `Bip01 L Thigh`, VRoid's `J_Bip_L_UpperArm`.
    SidePrefix,
    /// A side-less name (`hips`, `pelvis`, `head`) in a rig whose sided bones say no scheme.
    Plain,
}

impl std::fmt::Display for NameScheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NameScheme::Blender => "Blender/Rigify name (.L/.R)",
            NameScheme::Unreal => "Unreal-style name (_l/_r)",
            NameScheme::Humanoid => "VRM/Unity humanoid name (left…/right…)",
            NameScheme::SidePrefix => "name with an L_/R_ prefix",
            NameScheme::Plain => "name",
        })
    }
}

/// How a role of a [`BoneMap`] was settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoneSource {
    /// By its Mixamo base name (after any prefix).
    Mixamo,
    /// By a name in another scheme.
    Name(NameScheme),
    /// From the chain between bones found by name (the spine between hips and chest, the neck
    /// between chest and head, the hips where the legs meet...).
    Chain,
    /// Guessed from the skeleton's shape.
    Shape,
    /// Named by the scene file's `[bones]` table.
    Table,
    /// A point taken from the skin, with no node (the top of the head).
    Skin,
}

impl std::fmt::Display for BoneSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoneSource::Mixamo => f.write_str("Mixamo name"),
            BoneSource::Name(s) => write!(f, "{s}"),
            BoneSource::Chain => f.write_str("chain between named bones"),
            BoneSource::Shape => f.write_str("skeleton's shape"),
            BoneSource::Table => f.write_str("[bones] table"),
            BoneSource::Skin => f.write_str("top of the head's skin"),
        }
    }
}

/// One line of [`BoneMap::report`]: which node plays a role, and how that was found.
#[derive(Clone, Debug, PartialEq)]
pub struct BoneChoice {
    /// The role (Mixamo base name).
    pub role: String,
    /// The node, or `None` for a point taken from the skin.
    pub node: Option<usize>,
    /// The node's name in the file (empty for a point).
    pub name: String,
    pub source: BoneSource,
}

/// Which skeleton node plays each humanoid bone (by Mixamo base name), plus positions of bones
/// the rig lacks but the body gives (a head top taken from the skin).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoneMap {
    /// `(Mixamo base name, node index)`.
    pub nodes: Vec<(String, usize)>,
    /// `(Mixamo base name, world position at rest)` of bones with no node.
    pub points: Vec<(String, Vec3)>,
    /// Whether some role was guessed from the skeleton's shape rather than read from names.
    pub guessed: bool,
    /// How each role of `nodes` and `points` was found.
    pub sources: Vec<(String, BoneSource)>,
}

/// Per node, whether it carries skin weight: some vertex of a skinned mesh weights it, or a
/// rigid mesh hangs from it (the mesh's node when it is a joint of a skin, else its nearest
/// ancestor that is). Robot-like rigs are built from rigid pieces parented to joints: those
/// joints are the body as much as a skinned one.
pub fn weighted_nodes(rig: &Rig) -> Vec<bool> {
    let sk = &rig.skeleton;
    let mut out = vec![false; sk.len()];
    let mut is_joint = vec![false; sk.len()];
    for s in &rig.skins {
        for &j in &s.joints {
            if let Some(x) = is_joint.get_mut(j as usize) {
                *x = true;
            }
        }
    }
    for m in &rig.meshes {
        match m.skin.and_then(|s| rig.skins.get(s as usize)) {
            Some(skin) => {
                let sets = [(&m.joints, &m.weights), (&m.joints1, &m.weights1)];
                for (js, ws) in sets {
                    for (j, w) in js.iter().zip(ws.iter()) {
                        for k in 0..4 {
                            if w[k] > 0.0 {
                                if let Some(&n) = skin.joints.get(j[k] as usize) {
                                    if let Some(x) = out.get_mut(n as usize) {
                                        *x = true;
                                    }
                                }
                            }
                        }
                    }
                }
            }
            None if !m.positions.is_empty() => {
                let mut n = Some(m.node as usize);
                while let Some(i) = n.filter(|&i| i < sk.len()) {
                    if is_joint[i] {
                        out[i] = true;
                        break;
                    }
                    n = sk.parents[i].map(|p| p as usize);
                }
            }
            None => {}
        }
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// Sided roles (without the side) and the names that mean them, after the side marker, the
/// separators and any trailing digits are removed.
const SIDED: [(&str, &[&str]); 8] = [
    (
        "Shoulder",
        &["shoulder", "clavicle", "collar", "collarbone", "clav"],
    ),
    ("Arm", &["arm", "upperarm", "uparm", "humerus"]),
    ("ForeArm", &["forearm", "lowerarm", "loarm", "elbow"]),
    ("Hand", &["hand", "wrist"]),
    ("UpLeg", &["upleg", "thigh", "upperleg", "hip"]),
    ("Leg", &["leg", "calf", "shin", "lowerleg", "loleg", "knee"]),
    ("Foot", &["foot", "ankle"]),
    ("ToeBase", &["toebase", "toe", "toes", "ball"]),
];

/// Side-less roles and their names. The spine's roles come from the chain between hips and
/// chest ([`BoneMap::fill_chains`]): schemes number their spine bones too differently
/// (`spine_01`..`spine_05`, `spine.001`, `chest`, `upperChest`, `Abdomen`, `Torso`).
const CENTRE: [(&str, &[&str]); 4] = [
    ("Hips", &["hips", "pelvis", "hip"]),
    ("Neck", &["neck"]),
    ("Head", &["head"]),
    ("HeadTop_End", &["headtopend", "headend", "headtop"]),
];

/// Reads a node name as a humanoid role: `(role, scheme)` with the role's Mixamo base name
/// (`LeftArm`), or `None`. Case-insensitive; drops any prefix up to a `:` or `|`
/// (`mixamorig1:`, `Armature|`), a Rigify `DEF-`, VRoid's `J_Bip_`, 3ds Max's `Bip01 `, and
/// Blender's `.001` duplicate index; finds the side as a suffix (`.L`, `_l`, `-left`, ` R`), a
/// prefix (`L_`, `r.`, `Left `) or a camel-case `left`/`right`; then the rest, without
/// separators and trailing digits, must be one of the role's names exactly, so that
/// `kneeIK.l`, `IK-foot.l`, `control-heel-roll.l`, `handslot.l`, `upper_arm_ik.L`, `ORG-` and
/// `MCH-` bones and `leg_joint_L_1` are not taken for a limb.
pub fn read_name(name: &str) -> Option<(String, NameScheme)> {
    let base = Skeleton::base_name(name);
    let base = base.rsplit('|').next().unwrap_or(base);
    let mut s = base.to_ascii_lowercase();
    for p in [
        "def-", "def_", "j_bip_", "bip01 ", "bip01_", "bip001 ", "bip001_",
    ] {
        if let Some(r) = s.strip_prefix(p) {
            s = r.to_string();
            break;
        }
    }
    if let Some(i) = s.rfind('.') {
        let tail = &s[i + 1..];
        if i > 0 && tail.len() == 3 && tail.bytes().all(|b| b.is_ascii_digit()) {
            s.truncate(i);
        }
    }
    const SEPS: [char; 4] = ['.', '_', '-', ' '];
    let words = [
        ("left", Side::Left),
        ("right", Side::Right),
        ("l", Side::Left),
        ("r", Side::Right),
    ];
    let mut side = None;
    let mut scheme = NameScheme::Plain;
    let mut core = s.as_str();
    'found: for (w, sd) in words {
        for sep in SEPS {
            if let Some(c) = s.strip_suffix(w).and_then(|c| c.strip_suffix(sep)) {
                if !c.is_empty() {
                    side = Some(sd);
                    scheme = match sep {
                        '.' => NameScheme::Blender,
                        '_' => NameScheme::Unreal,
                        _ => NameScheme::Plain,
                    };
                    core = c;
                    break 'found;
                }
            }
            if let Some(c) = s.strip_prefix(w).and_then(|c| c.strip_prefix(sep)) {
                if !c.is_empty() {
                    side = Some(sd);
                    scheme = NameScheme::SidePrefix;
                    core = c;
                    break 'found;
                }
            }
        }
    }
    if side.is_none() {
        if let Some(c) = s.strip_prefix("c_") {
            // VRoid's centre bones (`J_Bip_C_Hips`).
            core = c;
            scheme = NameScheme::SidePrefix;
        } else {
            for (w, sd) in &words[..2] {
                if let Some(c) = s.strip_prefix(w).filter(|c| c.len() >= 3) {
                    side = Some(*sd);
                    scheme = NameScheme::Humanoid;
                    core = c;
                    break;
                }
            }
        }
    }
    let core: String = core.chars().filter(|c| !SEPS.contains(c)).collect();
    let core = core.trim_end_matches(|c: char| c.is_ascii_digit());
    match side {
        Some(sd) => {
            let (role, _) = SIDED.iter().find(|(_, names)| names.contains(&core))?;
            let prefix = if sd == Side::Left { "Left" } else { "Right" };
            Some((format!("{prefix}{role}"), scheme))
        }
        None => {
            let (role, _) = CENTRE.iter().find(|(_, names)| names.contains(&core))?;
            Some((role.to_string(), scheme))
        }
    }
}

impl BoneMap {
    /// Node of the humanoid bone `name`.
    pub fn get(&self, name: &str) -> Option<usize> {
        self.nodes.iter().find(|(n, _)| n == name).map(|&(_, i)| i)
    }

    /// How the role `name` was found, if it was.
    pub fn source(&self, name: &str) -> Option<BoneSource> {
        self.sources
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, s)| s)
    }

    fn set(&mut self, name: &str, node: usize, source: BoneSource) {
        self.nodes.retain(|(n, _)| n != name);
        self.nodes.push((name.to_string(), node));
        self.set_source(name, source);
    }

    pub(super) fn set_source(&mut self, name: &str, source: BoneSource) {
        self.sources.retain(|(n, _)| n != name);
        self.sources.push((name.to_string(), source));
    }

    /// The bones found by their Mixamo base names (after any prefix).
    pub fn by_name(skeleton: &Skeleton) -> BoneMap {
        let mut map = BoneMap::default();
        for &n in &HUMANOID_BONES {
            if let Some(i) = skeleton.find(n) {
                map.set(n, i, BoneSource::Mixamo);
            }
        }
        map
    }

    /// The bones found by name in any scheme [`read_name`] knows, after the Mixamo names, with
    /// the roles between them filled from the chains ([`BoneMap::fill_chains`]). `weighted`:
    /// [`weighted_nodes`] (empty: every node counts as weighted).
    pub fn by_names(skeleton: &Skeleton, weighted: &[bool]) -> BoneMap {
        let mut map = BoneMap::by_name(skeleton);
        let is_weighted = |i: usize| weighted.get(i).copied().unwrap_or(true);
        let depth: Vec<usize> = depths(skeleton);
        // A node with no weight on it or under it (a skinned mesh's own node, an IK target)
        // plays no role; an end joint above the head is only a point, and is taken.
        let kept = kept_nodes(skeleton, weighted);
        // Best node per role: weighted first, then nearest the root, then first in the file.
        let mut best: Vec<(String, usize, NameScheme)> = Vec::new();
        for (i, name) in skeleton.names.iter().enumerate() {
            let Some((role, scheme)) = read_name(name) else {
                continue;
            };
            if map.get(&role).is_some() || (!kept[i] && role != "HeadTop_End") {
                continue;
            }
            let key = |k: usize| (!is_weighted(k), depth[k], k);
            match best.iter_mut().find(|(r, _, _)| *r == role) {
                Some(b) if key(i) < key(b.1) => *b = (role, i, scheme),
                Some(_) => {}
                None => best.push((role, i, scheme)),
            }
        }
        // Side-less names say no scheme: they take the one the sided bones use most.
        let mut counts = [0usize; 5];
        for (_, _, sc) in &best {
            counts[*sc as usize] += 1;
        }
        let main = [
            NameScheme::Blender,
            NameScheme::Unreal,
            NameScheme::Humanoid,
            NameScheme::SidePrefix,
        ]
        .into_iter()
        .max_by_key(|&sc| (counts[sc as usize], std::cmp::Reverse(sc as usize)))
        .filter(|&sc| counts[sc as usize] > 0)
        .unwrap_or(NameScheme::Plain);
        for (role, i, sc) in best {
            let sc = if sc == NameScheme::Plain { main } else { sc };
            map.set(&role, i, BoneSource::Name(sc));
        }
        // Generic names (`Hips`, `Head`) matched as Mixamo's in a rig whose limbs are named
        // otherwise were not Mixamo names.
        if main != NameScheme::Plain {
            let relabel: Vec<String> = map
                .sources
                .iter()
                .filter(|(_, s)| *s == BoneSource::Mixamo)
                .map(|(n, _)| n.clone())
                .collect();
            if !relabel
                .iter()
                .any(|n| n.starts_with("Left") || n.starts_with("Right"))
            {
                for n in relabel {
                    map.set_source(&n, BoneSource::Name(main));
                }
            }
        }
        map.fill_chains(skeleton, weighted);
        map
    }

    /// Fills roles from the chains between the roles already found (each filled role's source
    /// is [`BoneSource::Chain`]):
    ///
    /// - `Hips`: where the two upper legs meet (their nearest common ancestor);
    /// - `Spine2` (the chest): where the two arms meet (shoulders, else upper arms);
    /// - `Spine`, `Spine1`: the spine from the hips up to the chest, whatever its length: its
    ///   first bone, its middle one (with two bones, the first again; with the chest right
    ///   above the hips, the chest);
    /// - `Neck`: the bone after the chest towards the head (the head itself when it hangs
    ///   straight from the chest, as on KayKit's rigs); `Head`: the end of the weighted chain
    ///   going up from the chest that is not an arm;
    /// - `ForeArm`/`Leg` between the bones above and below them, `Hand`/`Foot`/`ToeBase` as
    ///   the weighted child with the most bones under it.
    pub fn fill_chains(&mut self, skeleton: &Skeleton, weighted: &[bool]) {
        let n = skeleton.len();
        let parent = |i: usize| {
            skeleton
                .parents
                .get(i)
                .copied()
                .flatten()
                .map(|p| p as usize)
        };
        let ancestors = |i: usize| {
            let mut out = vec![i];
            let mut k = i;
            while let Some(p) = parent(k) {
                out.push(p);
                k = p;
            }
            out
        };
        let lca = |a: usize, b: usize| {
            let up = ancestors(a);
            ancestors(b).into_iter().find(|x| up.contains(x))
        };
        // Nodes strictly between `top` and `bottom` (top an ancestor of bottom), top down.
        let between = |top: usize, bottom: usize| -> Option<Vec<usize>> {
            let up = ancestors(bottom);
            let at = up.iter().position(|&x| x == top)?;
            let mut mid: Vec<usize> = up[1..at].to_vec();
            mid.reverse();
            Some(mid)
        };
        let kept = kept_nodes(skeleton, weighted);
        let mut children = vec![Vec::new(); n];
        let mut size = vec![1usize; n];
        for i in (0..n).rev() {
            if let (Some(p), true) = (parent(i), kept[i]) {
                children[p].push(i);
                size[p] += size[i];
            }
        }
        for c in &mut children {
            c.reverse();
        }
        let biggest_child = |i: usize| children[i].iter().copied().max_by_key(|&c| size[c]);
        let fill = |map: &mut BoneMap, role: &str, node: usize| {
            if map.get(role).is_none() {
                map.set(role, node, BoneSource::Chain);
            }
        };
        if let (Some(l), Some(r)) = (self.get("LeftUpLeg"), self.get("RightUpLeg")) {
            if let Some(h) = lca(l, r).filter(|&h| h != l && h != r) {
                fill(self, "Hips", h);
            }
        }
        let arm_root = |m: &BoneMap, side: &str| {
            m.get(&format!("{side}Shoulder"))
                .or_else(|| m.get(&format!("{side}Arm")))
        };
        if let (Some(l), Some(r)) = (arm_root(self, "Left"), arm_root(self, "Right")) {
            if let Some(c) = lca(l, r).filter(|&c| c != l && c != r) {
                fill(self, "Spine2", c);
            }
        }
        if let Some(chest) = self.get("Spine2") {
            let spine = self
                .get("Hips")
                .and_then(|h| between(h, chest))
                .unwrap_or_default();
            let mut path = spine;
            path.push(chest);
            fill(self, "Spine", path[0]);
            fill(self, "Spine1", path[(path.len() - 1) / 2]);
            // Up from the chest: the child that leads to neither arm.
            let arms: Vec<usize> = ["Left", "Right"]
                .iter()
                .filter_map(|s| arm_root(self, s))
                .collect();
            if self.get("Head").is_none() {
                let up = children[chest]
                    .iter()
                    .copied()
                    .filter(|&c| !arms.iter().any(|&a| ancestors(a).contains(&c)))
                    .max_by_key(|&c| size[c]);
                if let Some(mut k) = up {
                    while let Some(c) = biggest_child(k) {
                        k = c;
                    }
                    fill(self, "Head", k);
                }
            }
            if let Some(head) = self.get("Head") {
                if let Some(mid) = between(chest, head) {
                    fill(self, "Neck", mid.first().copied().unwrap_or(head));
                }
            }
        }
        for side in ["Left", "Right"] {
            let r = |x: &str| format!("{side}{x}");
            for [a, b, c] in [["Arm", "ForeArm", "Hand"], ["UpLeg", "Leg", "Foot"]] {
                if let (Some(top), None, Some(end)) =
                    (self.get(&r(a)), self.get(&r(b)), self.get(&r(c)))
                {
                    if let Some(&m) = between(top, end).unwrap_or_default().first() {
                        fill(self, &r(b), m);
                    }
                }
            }
            for [above, end] in [["ForeArm", "Hand"], ["Leg", "Foot"], ["Foot", "ToeBase"]] {
                if let (Some(k), None) = (self.get(&r(above)), self.get(&r(end))) {
                    if let Some(c) = biggest_child(k).filter(|&c| kept_weighted(weighted, c)) {
                        fill(self, &r(end), c);
                    }
                }
            }
        }
    }

    /// Whether every role some garment needs is found.
    fn complete(&self) -> bool {
        REQUIRED.iter().all(|r| self.get(r).is_some())
    }

    /// The map for a rig: [`BoneMap::resolve`] with the rig's rest pose and its weighted nodes
    /// ([`weighted_nodes`]).
    pub fn for_rig(rig: &Rig, overrides: &[(String, String)]) -> Result<BoneMap, GarmentError> {
        let joint_world: Vec<Vec3> = rig
            .skeleton
            .rest_world()
            .iter()
            .map(|m| m.transform_point3(Vec3::ZERO))
            .collect();
        BoneMap::resolve(&rig.skeleton, &joint_world, &weighted_nodes(rig), overrides)
    }

    /// The map for a skeleton: names in any scheme with the chains between them filled
    /// ([`BoneMap::by_names`]); the roles still missing from its shape among the weighted bones
    /// ([`BoneMap::guess_among`]); then `overrides` (`(base name, node name)`, the scene file's
    /// `[bones]` table) replace single entries. `weighted`: [`weighted_nodes`] (empty: all).
    pub fn resolve(
        skeleton: &Skeleton,
        joint_world: &[Vec3],
        weighted: &[bool],
        overrides: &[(String, String)],
    ) -> Result<BoneMap, GarmentError> {
        let mut map = BoneMap::by_names(skeleton, weighted);
        if !map.complete() {
            match BoneMap::guess_among(skeleton, joint_world, weighted) {
                Ok(g) => {
                    for (role, node) in &g.nodes {
                        if map.get(role).is_none() {
                            map.set(role, *node, BoneSource::Shape);
                            map.guessed = true;
                        }
                    }
                }
                // With a full table, or the names' hips, the guess is not needed.
                Err(e) if overrides.is_empty() && map.get("Hips").is_none() => return Err(e),
                Err(_) => {}
            }
        }
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
            map.set(bone, i, BoneSource::Table);
        }
        Ok(map)
    }

    /// Which node plays each role and how it was found, in the order of [`HUMANOID_BONES`]
    /// (then any other role the map holds); roles the map lacks are left out.
    pub fn report(&self, skeleton: &Skeleton) -> Vec<BoneChoice> {
        let mut roles: Vec<&str> = HUMANOID_BONES.to_vec();
        let held = self.nodes.iter().map(|(n, _)| n);
        for n in held.chain(self.points.iter().map(|(n, _)| n)) {
            if !roles.contains(&n.as_str()) {
                roles.push(n);
            }
        }
        let mut out = Vec::new();
        for role in roles {
            let source = self.source(role);
            if let Some(i) = self.get(role) {
                out.push(BoneChoice {
                    role: role.into(),
                    node: Some(i),
                    name: skeleton.names.get(i).cloned().unwrap_or_default(),
                    source: source.unwrap_or(BoneSource::Shape),
                });
            } else if self.points.iter().any(|(n, _)| n == role) {
                out.push(BoneChoice {
                    role: role.into(),
                    node: None,
                    name: String::new(),
                    source: source.unwrap_or(BoneSource::Skin),
                });
            }
        }
        out
    }

    /// [`BoneMap::report`] as text, one role a line: `LeftArm       <- "upperarm.l" (Blender/Rigify name (.L/.R))`.
    pub fn describe(&self, skeleton: &Skeleton) -> String {
        let mut s = String::new();
        for c in self.report(skeleton) {
            let what = match c.node {
                Some(_) => format!("{:?}", c.name),
                None => "(no node)".into(),
            };
            s.push_str(&format!("  {:<14} <- {what} ({})\n", c.role, c.source));
        }
        s
    }

    /// [`BoneMap::guess_among`] with every node counted as weighted.
    pub fn guess(skeleton: &Skeleton, joint_world: &[Vec3]) -> Result<BoneMap, GarmentError> {
        BoneMap::guess_among(skeleton, joint_world, &[])
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
    pub fn guess_among(
        skeleton: &Skeleton,
        joint_world: &[Vec3],
        weighted: &[bool],
    ) -> Result<BoneMap, GarmentError> {
        let n = skeleton.len();
        // Only bones with skin weight and their ancestors: IK targets, poles and control bones
        // hang from the root beside the legs and would read as more legs.
        let kept = kept_nodes(skeleton, weighted);
        let mut children = vec![Vec::new(); n];
        for i in 0..n {
            if let (Some(p), true) = (skeleton.parents[i], kept[i]) {
                children[p as usize].push(i);
            }
        }
        let mut size = vec![1usize; n];
        for i in (0..n).rev() {
            if let (Some(p), true) = (skeleton.parents[i], kept[i]) {
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
        for h in (0..n).filter(|&h| kept[h]) {
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
            map.set("Hips", h, BoneSource::Shape);
            map.set("Spine", spine[0], BoneSource::Shape);
            if spine.len() >= 3 {
                map.set("Spine1", spine[1], BoneSource::Shape);
            }
            map.set("Spine2", chest, BoneSource::Shape);
            for (side_name, leg) in [("Left", &left_leg), ("Right", &right_leg)] {
                if leg.len() < 3 {
                    why = format!("the {side_name} leg has fewer than three joints");
                    continue;
                }
                map.set(&format!("{side_name}UpLeg"), leg[0], BoneSource::Shape);
                map.set(&format!("{side_name}Leg"), leg[1], BoneSource::Shape);
                map.set(&format!("{side_name}Foot"), leg[2], BoneSource::Shape);
                if leg.len() >= 4 {
                    map.set(&format!("{side_name}ToeBase"), leg[3], BoneSource::Shape);
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
                    map.set(&format!("{side_name}{name}"), node, BoneSource::Shape);
                }
            }
            let neck = chain(*ups.iter().max_by_key(|&&c| size[c]).unwrap_or(&ups[0]));
            map.set("Neck", neck[0], BoneSource::Shape);
            if neck.len() >= 2 {
                map.set("Head", neck[1], BoneSource::Shape);
            }
            if neck.len() >= 3 {
                map.set("HeadTop_End", neck[2], BoneSource::Shape);
            }
            if map.get("LeftFoot").is_none() || map.get("RightFoot").is_none() {
                continue;
            }
            return Ok(map);
        }
        Err(GarmentError::NotHumanoid(why))
    }
}

/// Depth of every node in the hierarchy (roots 0).
fn depths(skeleton: &Skeleton) -> Vec<usize> {
    let mut d = vec![0usize; skeleton.len()];
    for i in 0..skeleton.len() {
        if let Some(p) = skeleton.parents[i] {
            d[i] = d.get(p as usize).copied().unwrap_or(0) + 1;
        }
    }
    d
}

/// Whether node `i` carries weight (`weighted` empty: every node does).
fn kept_weighted(weighted: &[bool], i: usize) -> bool {
    weighted.get(i).copied().unwrap_or(weighted.is_empty())
}

/// The weighted nodes and their ancestors (`weighted` empty: every node).
fn kept_nodes(skeleton: &Skeleton, weighted: &[bool]) -> Vec<bool> {
    let n = skeleton.len();
    let mut kept: Vec<bool> = (0..n).map(|i| kept_weighted(weighted, i)).collect();
    for i in (0..n).rev() {
        if kept[i] {
            if let Some(p) = skeleton.parents[i] {
                kept[p as usize] = true;
            }
        }
    }
    kept
}
