//! The garment library: `cape`, `hakama`, `sash` and `headband`, built against any humanoid whose
//! bones carry Mixamo names (matched after any prefix, MIXAMO.md; otherwise guessed from the
//! skeleton's shape or named by the scene file, see [`BoneMap`]), sized from the skeleton and
//! fitted around the body proxies at the bind pose.
//!
//! # How a garment is made
//! Each garment is a triangle mesh in world space at the bind pose (metres). Shapes are laid out
//! from joint positions (hips, spine, neck, head, shoulders, knees) and then fitted to the body:
//! rings (the hakama's waist, the sash, the headband) take their radius per angle from a ray cast
//! out of the body's axis against the body, plus a clearance; every other particle is pushed
//! out of the body along its distance's gradient to the same clearance. The body's distance is
//! the smaller of the proxy union's and the visible skin's (all the rig's meshes bound to the
//! skin, props included, [`BodyAtRest`]), so the garments start outside both, even where the
//! skin stands far out of the proxies (a box head, a character's own cape).
//!
//! # Pins
//! Pinned particles are bound to the body like skinned vertices (PHYSICS.md §4 "Attachments"):
//! each takes the joints and weights of the nearest skin vertex and its bind-space position
//! (world position at rest mapped back through the blended rest skin matrix, so both Mixamo
//! unit conventions work). [`PinBinding::targets`] places them with linear blend skinning for
//! any frame; the scene interpolates the targets over the substeps.
//!
//! # Fabric
//! Each kind has its own [`GarmentParams`] (see [`GarmentKind::fabric`]): a light cotton
//! headband, a medium cape, a heavier pleated hakama and a stiff obi.
//!
//! # Where things live
//! - here: the kinds ([`GarmentKind`]) and their fabrics, what to build ([`GarmentSpec`]), the
//!   errors, and [`build_garment`], which lays out a kind's sheet and binds its pins;
//! - `bones.rs`: the bone map ([`BoneMap`]), which skeleton node plays each humanoid role;
//! - `fit.rs`: the body at its bind pose ([`BodyAtRest`]) and the measurements a shape is
//!   fitted with (the body's distance, proxies and skin, rays out of the body's axis, push-outs);
//! - `sweep.rs`: where the limbs go in the rig's clips (arm and limb sweeps), and which skin
//!   joints are the limbs';
//! - `pins.rs`: [`PinBinding`], pins bound to the skin and placed on it every frame;
//! - `layout.rs`: the pose the garments are laid out and settled in ([`Layout`]): the bind
//!   pose, or with a hakama the legs spread;
//! - `sheet.rs`: the mesh a garment is laid out as; `band.rs`: the band with two tails that the
//!   sash and the headband share, on rings hugging the body;
//! - `cape.rs`, `hakama.rs`, `sash.rs`, `headband.rs`: each garment's shape.

use crate::cloth::{build, BuildError, Garment, GarmentParams};
use crate::math::Vec3;

mod band;
mod bones;
mod cape;
mod fit;
mod hakama;
mod headband;
pub mod layout;
pub mod mesh;
mod pins;
mod sash;
mod sheet;
mod sweep;

pub use bones::{
    has_bones, read_name, weighted_nodes, BoneChoice, BoneMap, BoneSource, NameScheme,
    HUMANOID_BONES,
};
pub use fit::{body_scale, BodyAtRest};
pub use layout::{layout, Layout};
pub use pins::PinBinding;

/// Why a garment could not be built.
#[derive(Debug, thiserror::Error)]
pub enum GarmentError {
    #[error("garment '{garment}' needs bone '{bone}' (matched by name after any Mixamo prefix)")]
    MissingBone { garment: String, bone: String },
    #[error("unknown garment '{0}' (known: cape, hakama, sash, headband)")]
    UnknownKind(String),
    #[error("rig has no skinned mesh to bind pins to")]
    NoSkin,
    #[error("the skeleton is not a humanoid the garments fit ({0}); name its bones in the scene file's [bones] table")]
    NotHumanoid(String),
    #[error("[bones] maps '{bone}' to node '{node}', which the skeleton does not have")]
    UnknownNode { bone: String, node: String },
    #[error("building garment '{0}': {1}")]
    Build(String, BuildError),
    #[error("{0}")]
    Mesh(String),
    /// The garment cannot be worn by this body in its clips: a scene leaves it off and says
    /// why ([`crate::scene::Scene::refused`]) rather than simulate cloth the body passes
    /// through.
    #[error("garment '{garment}' does not fit this character: {reason}")]
    Unfit { garment: String, reason: String },
}

/// The garments of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GarmentKind {
    /// Hangs from the shoulders and upper back to the knees.
    Cape,
    /// A pleated divided trouser (umanori) to mid-calf: two half-skirts pinned along the waist
    /// (the default; or sewn together at the front and back down to mid-thigh), or divided
    /// trousers with a crotch seam and a tube per leg ([`HakamaStyle`], see `hakama.rs`).
    Hakama,
    /// An obi around the waist with two tails hanging at the back.
    Sash,
    /// A hachimaki around the forehead with two tails at the back of the head.
    Headband,
    /// A modelled mesh simulated as cloth (a mesh of the rig or of a garment file, see
    /// [`mesh`]); not one of the library's kinds ([`GarmentKind::ALL`]).
    Mesh,
}

impl GarmentKind {
    pub const ALL: [GarmentKind; 4] = [
        GarmentKind::Cape,
        GarmentKind::Hakama,
        GarmentKind::Sash,
        GarmentKind::Headband,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GarmentKind::Cape => "cape",
            GarmentKind::Hakama => "hakama",
            GarmentKind::Sash => "sash",
            GarmentKind::Headband => "headband",
            GarmentKind::Mesh => "mesh",
        }
    }

    /// The fabric of each kind. Stiffnesses are N/m per spring, densities kg/m² (see
    /// [`GarmentParams`] for ranges); values the substep cannot carry are softened by the engine.
    pub fn fabric(self) -> GarmentParams {
        match self {
            // Medium wool-cotton: drapes, swings with the turn.
            GarmentKind::Cape => GarmentParams {
                k_structural: 60.0,
                k_shear: 40.0,
                k_bend: 6.0,
                area_density: 0.25,
                damping_ratio: 0.15,
                thickness: 0.003,
                friction: 0.4,
            },
            // Heavier cotton twill with pleats: stiffer bending keeps the folds.
            GarmentKind::Hakama => GarmentParams {
                k_structural: 80.0,
                k_shear: 50.0,
                k_bend: 10.0,
                area_density: 0.3,
                damping_ratio: 0.15,
                thickness: 0.003,
                // Low: a kicking knee must lift the skirt by sliding under it, not drag it.
                friction: 0.2,
            },
            // A stiff silk obi.
            GarmentKind::Sash => GarmentParams {
                k_structural: 80.0,
                k_shear: 60.0,
                k_bend: 12.0,
                area_density: 0.35,
                damping_ratio: 0.2,
                thickness: 0.003,
                friction: 0.6,
            },
            // A modelled garment: the cape's cloth unless the scene file says otherwise.
            GarmentKind::Mesh => GarmentKind::Cape.fabric(),
            // Light cotton: the tails flutter.
            GarmentKind::Headband => GarmentParams {
                k_structural: 40.0,
                k_shear: 30.0,
                k_bend: 3.0,
                area_density: 0.15,
                damping_ratio: 0.15,
                thickness: 0.002,
                friction: 0.5,
            },
        }
    }

    /// Default particle spacing, m.
    pub fn default_spacing(self) -> f32 {
        match self {
            GarmentKind::Cape => 0.015,
            GarmentKind::Hakama => 0.015,
            GarmentKind::Sash => 0.015,
            GarmentKind::Headband => 0.012,
            // Unused: a mesh garment's particles are its vertices.
            GarmentKind::Mesh => 0.015,
        }
    }
}

impl std::str::FromStr for GarmentKind {
    type Err = GarmentError;
    fn from_str(s: &str) -> Result<Self, GarmentError> {
        match s.to_ascii_lowercase().as_str() {
            "cape" => Ok(GarmentKind::Cape),
            "hakama" | "skirt" => Ok(GarmentKind::Hakama),
            "sash" | "obi" => Ok(GarmentKind::Sash),
            "headband" | "hachimaki" => Ok(GarmentKind::Headband),
            _ => Err(GarmentError::UnknownKind(s.to_string())),
        }
    }
}

/// How the hakama is cut (a scene file's `style` key on a hakama garment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HakamaStyle {
    /// Two open half-skirts, one per leg, pinned along the waist and not sewn between the
    /// legs (the default; `"half_skirts"`).
    #[default]
    HalfSkirts,
    /// The two half-skirts sewn together at the front and at the back from the waist down to
    /// mid-thigh and open below (`"sewn"`): each thigh stays inside its own side, and a kicking
    /// leg cannot leave its half through the front. The scene then runs the strain limit
    /// harder ([`crate::scene::Scene::new`]: the sewn ring whips both hems at once). Not yet
    /// the default: on the XPBD model the coarse hakama tangles in the kata, where a hand goes
    /// through the sewn front between its particles, unless `SimParams::face_contact` is on,
    /// which costs the open and the sewn cut clips elsewhere (docs/CHECK.md, "The half-skirts
    /// sewn at the front and back" and "Hands that cannot pass between the cloth's particles").
    Sewn,
    /// The half-skirts fitted to the hips under hanging hands (`"fitted"`): where the arms hang
    /// by the hips, the cloth they lie against hugs the body to below the fingertips before it
    /// flares, so the hands rest outside it and an arm swing (a jump's, a walk's) does not carry
    /// the skirt; the hand pinches the cloth against the hip instead (docs/CHECK.md, "Why the
    /// jumps fail").
    Fitted,
    /// Divided trousers: a pleated seat, a crotch seam and one wide tube per leg, open at the
    /// hem (`"divided"`), laid out and settled with the legs spread ([`layout`]).
    Divided,
}

impl HakamaStyle {
    pub fn name(self) -> &'static str {
        match self {
            HakamaStyle::HalfSkirts => "half_skirts",
            HakamaStyle::Sewn => "sewn",
            HakamaStyle::Fitted => "fitted",
            HakamaStyle::Divided => "divided",
        }
    }
}

impl std::str::FromStr for HakamaStyle {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "half_skirts" | "half-skirts" | "skirts" => Ok(HakamaStyle::HalfSkirts),
            "sewn" => Ok(HakamaStyle::Sewn),
            "fitted" => Ok(HakamaStyle::Fitted),
            "divided" | "trousers" => Ok(HakamaStyle::Divided),
            _ => Err(format!(
                "unknown hakama style '{s}' (known: half_skirts, sewn, fitted, divided)"
            )),
        }
    }
}

/// One garment to build: its kind, resolution and fabric.
#[derive(Clone, Debug, PartialEq)]
pub struct GarmentSpec {
    pub kind: GarmentKind,
    /// Particle spacing, m. Range 0.005 … 0.1; default [`GarmentKind::default_spacing`]. Coarser
    /// is faster (particle count ∝ 1/spacing²). Like every length here, for a body 1 to 2 m
    /// tall: on a bigger or smaller one it is scaled with the body ([`BodyAtRest::scale`]).
    pub spacing: f32,
    /// Gap kept between the garment's rest shape and the body proxies, m (on top of the
    /// per-kind layering offset that keeps garments apart). Range 0.001 … 0.05; default 0.006.
    pub clearance: f32,
    /// Length scale of the hanging parts (cape, hakama, tails), dimensionless. Range 0.3 … 1.5;
    /// default 1.
    pub length: f32,
    pub fabric: GarmentParams,
    /// For [`GarmentKind::Hakama`]: how it is cut (ignored by the other kinds).
    pub style: HakamaStyle,
    /// For [`GarmentKind::Mesh`]: which mesh and how it is pinned (`spacing`, `clearance` and
    /// `length` do not apply to it). `None` for the library's kinds.
    pub mesh: Option<mesh::MeshGarmentSpec>,
    /// Wear it even where the body cannot ([`GarmentError::Unfit`]): built and simulated, with
    /// the reason kept in [`BuiltGarment::unfit`] for the commands to say. Default `false`: left
    /// off. For a user who knows the collar will sit inside the hair in some clips and wants the
    /// cape anyway.
    pub wear_unfit: bool,
}

impl GarmentSpec {
    pub fn new(kind: GarmentKind) -> Self {
        Self {
            kind,
            spacing: kind.default_spacing(),
            clearance: 0.006,
            length: 1.0,
            fabric: kind.fabric(),
            style: HakamaStyle::default(),
            mesh: None,
            wear_unfit: false,
        }
    }

    /// A mesh garment (see [`mesh`]) with the default mesh fabric.
    pub fn mesh(m: mesh::MeshGarmentSpec) -> Self {
        Self {
            mesh: Some(m),
            ..Self::new(GarmentKind::Mesh)
        }
    }

    /// The same garment with `factor` × the default spacing.
    pub fn coarse(kind: GarmentKind, factor: f32) -> Self {
        let mut s = Self::new(kind);
        s.spacing *= factor;
        s
    }
}

/// A built garment with its pins bound to the body.
#[derive(Clone, Debug)]
pub struct BuiltGarment {
    pub kind: GarmentKind,
    pub garment: Garment,
    /// UV per particle (u around or across, v down), 0..1.
    pub uvs: Vec<crate::math::Vec2>,
    /// Bindings of `garment.pinned`, in that order.
    pub pins: PinBinding,
    /// Partly pinned particles (a mesh garment's pin strengths between 0 and 1).
    pub soft: mesh::SoftPins,
    /// A mesh garment's map back onto its modelled mesh.
    pub mesh: Option<mesh::MeshOutput>,
    /// Why the body cannot wear it, when it was built all the same (`GarmentSpec::wear_unfit`).
    pub unfit: Option<String>,
    /// Where its particles start, where that differs from `garment.rest` (the shape its springs
    /// keep): the waist's garments tucked under a cape ([`BodyAtRest::keep_under_sheets`]).
    /// Their pins are bound there.
    pub start: Option<Vec<Vec3>>,
}

/// Builds a mesh garment ([`GarmentKind::Mesh`], `spec.mesh` set) from its resolved mesh
/// ([`mesh::take_meshes`]).
pub fn build_mesh_garment(
    body: &BodyAtRest,
    spec: &GarmentSpec,
    m: &mesh::GarmentMesh,
) -> Result<BuiltGarment, GarmentError> {
    let ms = spec
        .mesh
        .as_ref()
        .ok_or_else(|| GarmentError::Mesh("a mesh garment needs its mesh".into()))?;
    mesh::build(body, spec, ms, m)
}

/// Builds one garment against the body.
pub fn build_garment(body: &BodyAtRest, spec: &GarmentSpec) -> Result<BuiltGarment, GarmentError> {
    // The spec's lengths are for a person 1-2 m tall: scaled with the body ([`BodyAtRest::scale`]).
    let mut scaled = spec.clone();
    scaled.spacing *= body.scale;
    scaled.clearance *= body.scale;
    let spec = &scaled;
    let mut sheet = match spec.kind {
        GarmentKind::Cape => cape::shape(body, spec)?,
        GarmentKind::Hakama => hakama::shape(body, spec)?,
        GarmentKind::Sash => sash::shape(body, spec)?,
        GarmentKind::Headband => headband::shape(body, spec)?,
        GarmentKind::Mesh => {
            return Err(GarmentError::Mesh(
                "a mesh garment is built from its mesh (build_mesh_garment)".into(),
            ))
        }
    };
    let name = spec.kind.name();
    // The pinned list must be sorted and unique for the model.
    sheet.pinned.sort_unstable();
    sheet.pinned.dedup();
    // The waist's garments are worn under the body's open sheets (a KayKit cape, hung from the
    // chest); the cape and the headband's tails, which hang from above it, go over them. Only
    // where they start (and where their pins are bound): their springs keep the shape as cut,
    // or a tail laid out beyond a cape close to the back would be sewn short.
    let start = matches!(spec.kind, GarmentKind::Hakama | GarmentKind::Sash)
        .then(|| {
            let mut start = sheet.positions.clone();
            body.keep_under_sheets(&mut start, spec.clearance);
            start
        })
        .filter(|s| *s != sheet.positions);
    let garment = build::mesh(
        name,
        &sheet.positions,
        &sheet.triangles,
        &sheet.pinned,
        &spec.fabric,
    )
    .map_err(|e| GarmentError::Build(name.into(), e))?;
    let laid = start.as_ref().unwrap_or(&garment.rest);
    let pin_points: Vec<Vec3> = garment.pinned.iter().map(|&i| laid[i as usize]).collect();
    let pins = match spec.kind {
        // A waistband is tied round the trunk: on a rig whose hands hang by the hips
        // (CesiumMan) the nearest skin is often the forearm's or the hand's, and a pin bound to
        // it swings with the arm.
        GarmentKind::Hakama | GarmentKind::Sash => {
            body.bind_excluding(&pin_points, &body.limb_joints())?
        }
        // A cape is tied over the shoulders and the upper back: it must not ride on the upper
        // arm's skin when the arms swing, nor on the head's: a top-row point laid out over a
        // hair mesh skinned to the head (the long-haired corpus body's ponytail) took the hair's
        // influences and swung with the head, tearing the row (641 % in its side kick).
        GarmentKind::Cape => body.bind_excluding(
            &pin_points,
            &body.joints_under(&["LeftArm", "RightArm", "Neck"]),
        )?,
        _ => body.bind(&pin_points)?,
    };
    // A cape is tied where a long ponytail skinned to the head can swing through the
    // shoulders: cloth held there is inside the hair whatever it does. Deeper than 1 cm (the
    // depth `drape check` counts a frame at), it is refused, with where and how deep.
    let mut unfit = None;
    if spec.kind == GarmentKind::Cape {
        if let Some(c) = body.head_through(&pins, 0.01 * body.scale) {
            let others: Vec<&str> = c
                .clips
                .iter()
                .map(String::as_str)
                .filter(|n| *n != c.clip)
                .collect();
            let also = if others.is_empty() {
                String::new()
            } else {
                format!("; also in {}", others.join(", "))
            };
            let e = GarmentError::Unfit {
                garment: name.into(),
                reason: format!(
                    "its mesh '{}' moves with the head and passes through the shoulders where \
                     the cape is tied: the cape's collar would be {:.0} mm deep inside it ({} \
                     at {:.2} s{also}). Leave the cape off, or skin that part to the neck and \
                     spine too",
                    c.part,
                    1000.0 * c.depth,
                    c.clip,
                    c.time
                ),
            };
            if !spec.wear_unfit {
                return Err(e);
            }
            unfit = Some(e.to_string());
        }
    }
    Ok(BuiltGarment {
        kind: spec.kind,
        garment,
        uvs: sheet.uvs,
        pins,
        soft: mesh::SoftPins::default(),
        mesh: None,
        unfit,
        start,
    })
}
