//! The test corpus of issue 19: bodies and motions like real Mixamo exports, made by drape
//! itself (no downloads) and committed under `rigs/corpus/` (`drape rig --corpus rigs/corpus`).
//!
//! Real Mixamo characters dressed in drape's garments showed what the ninja alone never did
//! (MIXAMO.md, "What real Mixamo bodies and motions do to garments"). Each body here sits on the
//! ninja's 65-joint `mixamorig:` skeleton under the 0.01-scaled `Armature`, with one skin shared
//! by all of its meshes, weights on real bones, no texture:
//!
//! - [`BodyKind::Robot`]: a slim robot of two meshes, a surface and a joints mesh (balls at the
//!   shoulders, elbows, wrists, hips, knees, ankles, neck and waist, each rigid on one bone), as
//!   Mixamo's robots are.
//! - [`BodyKind::Soldier`]: a bulky, taller body with a second mesh of armour plates (helmet,
//!   breastplate, belt, pauldrons, vambraces, cuisses, greaves), each plate skinned to one bone
//!   (a few blend into the neighbouring bone at their rim).
//! - [`BodyKind::LongHair`]: a smaller, slimmer body with a large hair mesh (a hair volume over
//!   the back of the head, a bun and a long ponytail down the back), skinned to `Head` only.
//!
//! The motions (`rigs/corpus/clips/*.toml`, the ninja's key-pose format, see
//! [`super::clips`]) are written the way Mixamo exports hold them
//! ([`Expanded::to_mixamo_clip`]): LINEAR keys on every frame at 30 or 60 fps, the first at
//! 1/30 s, T/R/S channels on every joint, rotation keys with sign flips where a joint turns past
//! 180°, and each clip ends in the pose it starts from.
//!
//! The meshes are built on the ninja's 175 cm skeleton (the ninja's lofted parts with other
//! girths, [`mesh::build_with`]) and scaled with the skeleton, so proportions stay consistent.

use super::clips::{self, ClipError, Expanded};
use super::mesh::{self, chain, rect, sweep, Fabric, MeshBuilder, Shape};
use super::skeleton::NinjaSkeleton;
use crate::anim::Skin;
use crate::math::{Vec3, Vec4};
use crate::rig::{Material, Rig, SkinnedMesh};

/// Where `drape rig --corpus` writes the bodies by default.
pub const DEFAULT_DIR: &str = "rigs/corpus";

/// Time of every clip's first key, s: several real Mixamo exports start at 1/30 s, not 0.
pub const CLIP_START: f32 = 1.0 / 30.0;

/// The motions: name, frame rate of the keys, source (embedded so the generator needs nothing at
/// run time). Mixamo exports come at 30 fps or at 60 fps; both are here.
pub const CLIPS: &[(&str, f32, &str)] = &[
    (
        "idle",
        30.0,
        include_str!("../../rigs/corpus/clips/idle.toml"),
    ),
    (
        "walk",
        30.0,
        include_str!("../../rigs/corpus/clips/walk.toml"),
    ),
    (
        "guard",
        30.0,
        include_str!("../../rigs/corpus/clips/guard.toml"),
    ),
    (
        "front_kick_high",
        60.0,
        include_str!("../../rigs/corpus/clips/front_kick_high.toml"),
    ),
    (
        "side_kick",
        60.0,
        include_str!("../../rigs/corpus/clips/side_kick.toml"),
    ),
    (
        "spinning_kick",
        30.0,
        include_str!("../../rigs/corpus/clips/spinning_kick.toml"),
    ),
    (
        "hit_reaction",
        30.0,
        include_str!("../../rigs/corpus/clips/hit_reaction.toml"),
    ),
    (
        "jump",
        30.0,
        include_str!("../../rigs/corpus/clips/jump.toml"),
    ),
];

/// The three bodies of the corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    Robot,
    Soldier,
    LongHair,
}

impl BodyKind {
    pub const ALL: [BodyKind; 3] = [BodyKind::Robot, BodyKind::Soldier, BodyKind::LongHair];

    /// File stem under [`DEFAULT_DIR`].
    pub fn name(self) -> &'static str {
        match self {
            BodyKind::Robot => "robot",
            BodyKind::Soldier => "soldier",
            BodyKind::LongHair => "long_hair",
        }
    }

    pub fn file_name(self) -> String {
        format!("{}.glb", self.name())
    }

    /// Height relative to the ninja's 175 cm.
    pub fn scale(self) -> f32 {
        match self {
            BodyKind::Robot => 1.0,
            BodyKind::Soldier => 1.04,
            BodyKind::LongHair => 0.95,
        }
    }

    /// Girths and mesh density of the body surface.
    pub fn shape(self) -> Shape {
        let light = Shape {
            around: 12,
            density: 0.4,
            finger_steps: 6,
            ..Shape::NINJA
        };
        match self {
            // Slimmer than the ninja everywhere (MIXAMO.md: the robots are).
            BodyKind::Robot => Shape {
                head: 0.85,
                torso: 0.78,
                arm: 0.72,
                leg: 0.74,
                ..light
            },
            BodyKind::Soldier => Shape {
                head: 1.02,
                torso: 1.2,
                arm: 1.22,
                leg: 1.16,
                ..light
            },
            BodyKind::LongHair => Shape {
                head: 0.95,
                torso: 0.9,
                arm: 0.84,
                leg: 0.92,
                ..light
            },
        }
    }

    /// Names of the mesh nodes (the first is the body surface).
    pub fn mesh_names(self) -> [&'static str; 2] {
        match self {
            BodyKind::Robot => ["Bot_Surface", "Bot_Joints"],
            BodyKind::Soldier => ["Soldier_Body", "Soldier_Armour"],
            BodyKind::LongHair => ["Body", "Hair"],
        }
    }
}

/// A generated corpus body with its clips.
pub struct CorpusBody {
    pub kind: BodyKind,
    pub rig: Rig,
    /// The body's own (scaled) skeleton.
    pub skeleton: NinjaSkeleton,
    /// The clips as expanded frames (character frame), in [`CLIPS`] order.
    pub expanded: Vec<Expanded>,
}

/// Centre and half extents of the vertices of `parts` (names starting with one of them) in the
/// slab `|(p − c)·t| ≤ half` around `c`, measured along `a` and `b = t × a`: how thick the body
/// is there, for fitting plates, balls and hair around it.
fn girth_at(
    body: &MeshBuilder,
    parts: &[&str],
    c: Vec3,
    t: Vec3,
    a: Vec3,
    half: f32,
) -> Option<(Vec3, f32, f32)> {
    let b = t.cross(a);
    let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
    for (i, p) in body.positions.iter().enumerate() {
        let name = &body.part_names[body.part_of_vertex[i] as usize];
        if !parts.iter().any(|q| name.starts_with(q)) {
            continue;
        }
        let d = *p - c;
        if d.dot(t).abs() > half {
            continue;
        }
        let (x, y) = (d.dot(a), d.dot(b));
        lo = [lo[0].min(x), lo[1].min(y)];
        hi = [hi[0].max(x), hi[1].max(y)];
    }
    if !lo[0].is_finite() {
        return None;
    }
    let centre = c + a * (0.5 * (lo[0] + hi[0])) + b * (0.5 * (lo[1] + hi[1]));
    Some((centre, 0.5 * (hi[0] - lo[0]), 0.5 * (hi[1] - lo[1])))
}

/// A shell around the body between `p0` and `p1`: `rings` cross-sections fitted to `parts` plus
/// `clear` cm, boxy (superellipse exponent `p`), skinned by `weigh`.
#[allow(clippy::too_many_arguments)]
fn shell(
    out: &mut MeshBuilder,
    body: &MeshBuilder,
    name: &str,
    parts: &[&str],
    (p0, p1): (Vec3, Vec3),
    a0: Vec3,
    clear: f32,
    p: f32,
    (cap0, cap1): (f32, f32),
    weigh: &dyn Fn(f32, Vec3) -> Vec<(usize, f32)>,
) {
    let t = (p1 - p0).normalize();
    let a = (a0 - t * a0.dot(t)).normalize();
    let rings = 7;
    let mut samples = Vec::new();
    for k in 0..=rings {
        let c = p0.lerp(p1, k as f32 / rings as f32);
        let (centre, ra, rb) = girth_at(body, parts, c, t, a, 2.0)
            .unwrap_or_else(|| panic!("no {parts:?} vertices around {c:?} for {name}"));
        // Keep the shell centred on the axis lengthwise (only its cross-section follows the body).
        let centre = centre - t * (centre - c).dot(t);
        samples.push((centre, ra + clear, rb + clear));
    }
    let rings = sweep(&samples, a, p);
    out.tube(
        name,
        Fabric::Tunic,
        rect(0, 0, 512, 512),
        &rings,
        cap0,
        cap1,
        weigh,
    );
}

/// A ball (or ellipsoid with radii `r` along `t`, `a`, `t × a`) around `c`, on one bone.
fn ball(out: &mut MeshBuilder, name: &str, c: Vec3, t: Vec3, a: Vec3, r: [f32; 3], bone: usize) {
    // Two rings a hair apart with hemispherical caps make a closed ellipsoid.
    let e = 0.01;
    let samples = [(c - t * e, r[1], r[2]), (c + t * e, r[1], r[2])];
    let rings = sweep(&samples, a, 2.0);
    out.tube(
        name,
        Fabric::Glove,
        rect(768, 512, 1024, 768),
        &rings,
        r[0] / r[1].min(r[2]),
        r[0] / r[1].min(r[2]),
        &move |_s, _p| vec![(bone, 1.0)],
    );
}

/// The robot's joints mesh: balls a little proud of the slim surface at every major joint.
fn robot_joints(sk: &NinjaSkeleton, body: &MeshBuilder, around: usize) -> MeshBuilder {
    let mut m = MeshBuilder {
        around,
        ..Default::default()
    };
    let rest = sk.rest_positions_char();
    let j = |n: &str| sk.joint(n);
    let fit = |parts: &[&str], c: Vec3, t: Vec3| -> f32 {
        let a = t.any_orthonormal_vector();
        let (_, ra, rb) = girth_at(body, parts, c, t, a, 2.0).expect("the body surrounds it");
        ra.max(rb)
    };
    for (name, at, parts, t, bone, grow) in [
        ("neck", "Neck", vec!["hood", "tunic"], Vec3::Y, "Neck", 0.9),
        ("waist", "Spine", vec!["tunic"], Vec3::Y, "Spine", 0.55),
    ] {
        let c = rest[j(at)] + Vec3::Y * if at == "Neck" { 2.0 } else { 0.0 };
        let r = fit(&parts, c, t) * grow + 0.8;
        let r = [r * 0.45, r, r * 0.85];
        ball(&mut m, name, c, t, Vec3::X, r, j(bone));
    }
    for side in ["Left", "Right"] {
        let n = |b: &str| format!("{side}{b}");
        let sleeve = n("sleeve");
        let trouser = n("trouser");
        for (joint, parts, t) in [
            ("Arm", &sleeve, Vec3::X),
            ("ForeArm", &sleeve, Vec3::X),
            ("Hand", &sleeve, Vec3::X),
            ("UpLeg", &trouser, Vec3::Y),
            ("Leg", &trouser, Vec3::Y),
            ("Foot", &trouser, Vec3::Y),
        ] {
            let c = rest[j(&n(joint))];
            let c = if joint == "UpLeg" {
                // The hip ball sits at the side of the pelvis, over the joint.
                c + Vec3::new(c.x.signum() * 2.0, 0.0, 0.0)
            } else {
                c
            };
            let probe = if joint == "Foot" {
                c + Vec3::Y * 4.0
            } else {
                c
            };
            let r = fit(&[parts.as_str()], probe, t) + 0.9;
            ball(
                &mut m,
                &format!("{}_{}", side.to_lowercase(), joint.to_lowercase()),
                c,
                t,
                t.any_orthonormal_vector(),
                [r; 3],
                j(&n(joint)),
            );
        }
    }
    m
}

/// The soldier's armour: plates fitted over the bulky body, each on one bone.
fn soldier_armour(sk: &NinjaSkeleton, body: &MeshBuilder, around: usize) -> MeshBuilder {
    let mut m = MeshBuilder {
        around,
        ..Default::default()
    };
    let rest = sk.rest_positions_char();
    let j = |n: &str| sk.joint(n);
    let y = |n: &str| rest[j(n)].y;
    // Helmet: over the skull, above the brow.
    let head = j("Head");
    shell(
        &mut m,
        body,
        "helmet",
        &["hood"],
        (Vec3::new(0.0, 161.0, 0.0), Vec3::new(0.0, 170.0, 0.0)),
        -Vec3::Z,
        1.4,
        2.4,
        (0.15, 0.95),
        &move |_s, _p| vec![(head, 1.0)],
    );
    // Breastplate and backplate: the chest, on Spine2 (its lower rim eases onto Spine1).
    let (sp1, sp2) = (j("Spine1"), j("Spine2"));
    let y_rim = y("Spine1") + 4.0;
    shell(
        &mut m,
        body,
        "breastplate",
        &["tunic"],
        (Vec3::new(0.0, 117.0, 0.0), Vec3::new(0.0, 139.0, 0.0)),
        -Vec3::Z,
        1.6,
        3.0,
        (0.12, 0.12),
        &move |_s, p| chain(p.y, &[sp1, sp2], &[y_rim], &[2.5]),
    );
    // Belt of plates on the Hips.
    let hips = j("Hips");
    shell(
        &mut m,
        body,
        "belt",
        &["tunic", "obi"],
        (Vec3::new(0.0, 98.0, 0.0), Vec3::new(0.0, 106.0, 0.0)),
        -Vec3::Z,
        1.4,
        3.0,
        (0.1, 0.1),
        &move |_s, _p| vec![(hips, 1.0)],
    );
    for (side, sx) in [("Left", 1.0f32), ("Right", -1.0)] {
        let n = |b: &str| format!("{side}{b}");
        let sleeve = n("sleeve");
        let trouser = n("trouser");
        let (arm, fore, up, leg) = (j(&n("Arm")), j(&n("ForeArm")), j(&n("UpLeg")), j(&n("Leg")));
        let sh = j(&n("Shoulder"));
        let (xa, xe, xw) = (
            rest[arm].x.abs(),
            rest[fore].x.abs(),
            rest[j(&n("Hand"))].x.abs(),
        );
        let ya = rest[arm].y;
        // Pauldron over the shoulder joint, mostly on the upper arm.
        shell(
            &mut m,
            body,
            &n("_pauldron"),
            &[sleeve.as_str()],
            (
                Vec3::new(sx * (xa - 3.0), ya, 0.0),
                Vec3::new(sx * (xa + 9.0), ya, 0.0),
            ),
            -Vec3::Y,
            1.6,
            3.2,
            (0.5, 0.2),
            &move |_s, p| chain(p.x.abs(), &[sh, arm], &[xa - 1.5], &[2.0]),
        );
        // Vambrace on the forearm.
        shell(
            &mut m,
            body,
            &n("_vambrace"),
            &[sleeve.as_str()],
            (
                Vec3::new(sx * (xe + 5.0), ya, 0.0),
                Vec3::new(sx * (xw - 4.0), ya, 0.0),
            ),
            -Vec3::Y,
            1.2,
            3.0,
            (0.12, 0.12),
            &move |_s, _p| vec![(fore, 1.0)],
        );
        let (hip, knee, ankle) = (rest[up], rest[leg], rest[j(&n("Foot"))]);
        // Cuisse on the front and sides of the thigh.
        shell(
            &mut m,
            body,
            &n("_cuisse"),
            &[trouser.as_str()],
            (hip.lerp(knee, 0.22), hip.lerp(knee, 0.8)),
            -Vec3::Z,
            1.4,
            3.0,
            (0.12, 0.12),
            &move |_s, _p| vec![(up, 1.0)],
        );
        // Greave on the shin.
        shell(
            &mut m,
            body,
            &n("_greave"),
            &[trouser.as_str()],
            (knee.lerp(ankle, 0.15), knee.lerp(ankle, 0.85)),
            -Vec3::Z,
            1.3,
            3.0,
            (0.12, 0.12),
            &move |_s, _p| vec![(leg, 1.0)],
        );
    }
    m
}

/// The long-haired body's hair: a volume over the back and top of the head, a bun at the crown
/// of the back and a long, thick ponytail down the back; every vertex on `Head`.
fn hair(sk: &NinjaSkeleton, around: usize) -> MeshBuilder {
    let mut m = MeshBuilder {
        around,
        ..Default::default()
    };
    let head = sk.joint("Head");
    // The head (hood part) spans y 145..176 with its face at z ≈ +12 and its back at z ≈ −8.5
    // (mesh.rs): the hair volume leaves the face free.
    ball(
        &mut m,
        "hair_volume",
        Vec3::new(0.0, 166.5, -2.8),
        Vec3::Y,
        -Vec3::Z,
        [10.0, 8.6, 9.7],
        head,
    );
    ball(
        &mut m,
        "bun",
        Vec3::new(0.0, 164.0, -11.5),
        Vec3::Z,
        Vec3::Y,
        [3.6, 4.6, 4.6],
        head,
    );
    // Ponytail: tied at the back of the head, falling down the back clear of it.
    let path: &[(f32, [f32; 3])] = &[
        (0.0, [163.0, -13.5, 2.6]),
        (1.0, [159.0, -16.5, 3.8]),
        (2.0, [151.0, -18.0, 4.8]),
        (3.0, [141.0, -18.5, 5.0]),
        (4.0, [131.0, -18.0, 4.4]),
        (5.0, [122.0, -17.0, 3.2]),
        (6.0, [115.0, -16.0, 1.6]),
    ];
    let mut samples = Vec::new();
    for k in 0..=24 {
        let [yy, z, r] = mesh::lerp_table(path, 6.0 * k as f32 / 24.0);
        samples.push((Vec3::new(0.0, yy, z), r * 0.85, r));
    }
    let rings = sweep(&samples, Vec3::Z, 2.0);
    m.tube(
        "ponytail",
        Fabric::Hood,
        rect(512, 0, 768, 256),
        &rings,
        0.5,
        0.8,
        &move |_s, _p| vec![(head, 1.0)],
    );
    m
}

/// A mesh builder's result as a skinned mesh in metres on `node`, scaled by `scale`.
fn skinned(b: &MeshBuilder, name: &str, node: u32, material: u32, scale: f32) -> SkinnedMesh {
    let positions: Vec<Vec3> = b.positions.iter().map(|p| *p * (scale * 0.01)).collect();
    let normals = mesh::smooth_normals(&positions, &b.indices);
    let (joints, weights): (Vec<[u16; 4]>, Vec<[f32; 4]>) =
        b.influences.iter().map(|i| mesh::limit_weights(i)).unzip();
    SkinnedMesh {
        name: name.into(),
        node,
        skin: Some(0),
        material: Some(material),
        positions,
        normals,
        uvs: b.uvs.clone(),
        joints,
        weights,
        indices: b.indices.clone(),
        ..Default::default()
    }
}

fn material(name: &str, rgb: [f32; 3], metallic: f32, roughness: f32) -> Material {
    Material {
        name: name.into(),
        base_color: Vec4::new(rgb[0], rgb[1], rgb[2], 1.0),
        base_color_texture: None,
        metallic,
        roughness,
        double_sided: false,
    }
}

/// Generates one corpus body with every corpus clip. Deterministic: the same bytes every run.
pub fn build_body(kind: BodyKind) -> Result<CorpusBody, ClipError> {
    let names = kind.mesh_names();
    let sk = NinjaSkeleton::with_build(kind.scale(), &names);
    // Meshes are built around the ninja's 175 cm skeleton, then scaled with this one.
    let base = NinjaSkeleton::new();
    let shape = kind.shape();
    let body = mesh::build_with(&base, &shape);
    let (second, mats) = match kind {
        BodyKind::Robot => (
            robot_joints(&base, &body, shape.around),
            [
                material("Bot_Surface", [0.55, 0.58, 0.64], 0.6, 0.35),
                material("Bot_Joints", [0.08, 0.08, 0.09], 0.2, 0.6),
            ],
        ),
        BodyKind::Soldier => (
            soldier_armour(&base, &body, shape.around),
            [
                material("Soldier_Fatigues", [0.28, 0.31, 0.2], 0.0, 0.85),
                material("Soldier_Armour", [0.32, 0.33, 0.35], 0.7, 0.4),
            ],
        ),
        BodyKind::LongHair => (
            hair(&base, shape.around),
            [
                material("Body", [0.55, 0.36, 0.3], 0.0, 0.8),
                material("Hair", [0.16, 0.09, 0.05], 0.0, 0.7),
            ],
        ),
    };
    let first_node = (sk.joint_count() + 1) as u32;
    let s = kind.scale();
    let meshes = vec![
        skinned(&body, names[0], first_node, 0, s),
        skinned(&second, names[1], first_node + 1, 1, s),
    ];
    let expanded: Vec<Expanded> = CLIPS
        .iter()
        .map(|(_, fps, src)| clips::expand_at(src, &sk, *fps))
        .collect::<Result<_, _>>()?;
    let clips = expanded
        .iter()
        .map(|e| e.to_mixamo_clip(&sk, CLIP_START))
        .collect();
    let skin = Skin {
        name: "Armature".into(),
        joints: sk.joint_nodes.clone(),
        inverse_bind: sk.inverse_binds(),
        skeleton_root: Some(sk.joint_nodes[0]),
    };
    let rig = Rig {
        source: format!("drape corpus {}", kind.name()),
        skeleton: sk.skeleton.clone(),
        skins: vec![skin],
        meshes,
        materials: mats.to_vec(),
        textures: Vec::new(),
        clips,
        warnings: Vec::new(),
    };
    Ok(CorpusBody {
        kind,
        rig,
        skeleton: sk,
        expanded,
    })
}

/// Every corpus body, in [`BodyKind::ALL`] order.
pub fn build_all() -> Result<Vec<CorpusBody>, ClipError> {
    BodyKind::ALL.into_iter().map(build_body).collect()
}
