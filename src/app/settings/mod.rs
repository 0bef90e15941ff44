//! The viewer's remembered settings: plain values the UI edits and the scene reads, stored as a
//! small TOML file in the user's config folder (`$XDG_CONFIG_HOME/drape/viewer.toml`, else
//! `~/.config/drape/viewer.toml`).
//!
//! Robustness rules: the file is written atomically (a temporary file in the same folder, then
//! a rename), a missing file means defaults, and a corrupt or half-valid file gives a warning
//! and defaults for what could not be read — never a crash. `DRAPE_NO_SETTINGS=1` (or
//! `drape view --no-settings`) keeps the viewer off the user's file, for tests and CI.
//!
//! Files: `fabric` (the fabric presets and slider parameters), `store` (the file's location,
//! loading and atomic saving); this file holds [`ViewerSettings`] and its TOML form.

mod fabric;
mod store;

pub use fabric::{FabricParam, FabricPreset};
pub use store::SettingsStore;

use crate::anim::player::RootMotion;
use crate::cloth::wet::{AdhesionMode, Fabric};
use crate::cloth::{ClothModelKind, GarmentParams, Integrator};
use crate::garments::GarmentKind;
use crate::garments::HakamaStyle;
use crate::skin::SkinMethod;

/// The shaders a viewer can pick (names of `drape::gpu::Shading`, kept as plain strings here so
/// the settings stay free of GPU types; the window maps them and falls back to the default for
/// a name it does not know).
pub const SHADER_NAMES: [&str; 8] = [
    "texture",
    "phong",
    "toon",
    "normals",
    "bump",
    "displace",
    "mirror",
    "wireframe",
];

/// Range of [`ViewerSettings::spacing_scale`].
pub const SPACING_SCALE: (f32, f32) = (
    crate::limits::SPACING_SCALE.min as f32,
    crate::limits::SPACING_SCALE.max as f32,
);

/// Everything the viewer remembers. Every field documents its unit, range and default.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewerSettings {
    // Character and playback.
    /// Skinning of the body. Default LBS.
    pub method: SkinMethod,
    /// Clip to play (by name); `None` or a name the rig lacks: its first clip. Default
    /// `roundhouse_kick` (the built-in ninja's showpiece).
    pub clip: Option<String>,
    /// Playing or paused. Default playing.
    pub playing: bool,
    /// Playback speed of the whole world (body and cloth), × real time. Range 0.05 … 2;
    /// default 1.
    pub speed: f32,
    /// Loop the clip (else hold its last frame). Default true.
    pub looping: bool,
    /// Crossfade when switching clips, s. Range 0 … 2; default 0.3.
    pub crossfade: f32,
    /// Root motion. Default in place.
    pub root_motion: RootMotion,
    // Garments.
    /// Which library garments are worn, in [`GarmentKind::ALL`] order. Default all four.
    pub garments: [bool; 4],
    /// The last preset applied to every garment's fabric. Default per garment.
    pub fabric_preset: FabricPreset,
    /// Each garment's fabric, in [`GarmentKind::ALL`] order. Default each kind's own.
    pub fabrics: [GarmentParams; 4],
    /// Garment particle spacing, × each garment's default (15 mm for the cape): the detail of
    /// the cloth against its cost, which goes roughly with the particle count ∝ 1/scale². 1.25
    /// or 1.5 lets a slow CPU keep up with real time. Range 0.75 … 3; default 1.
    pub spacing_scale: f32,
    /// Cloth substeps per frame. Range 1 … 64; default 16.
    pub substeps: u32,
    /// Time integrator of the mass-spring model. Default Verlet.
    pub integrator: Integrator,
    /// Cloth model: mass-spring (the reference) or position-based (XPBD). Default mass-spring.
    pub model: ClothModelKind,
    /// How the hakama is cut: two half-skirts (the default) or divided trousers, laid out with
    /// the legs spread ([`HakamaStyle`]).
    pub hakama_style: HakamaStyle,
    /// Self- and garment–garment collisions. Default on.
    pub self_collision: bool,
    /// Cloth against the skin as drawn (the skinned triangles, on every substep) besides the
    /// proxies: keeps cloth from resting inside the visible body where it stands outside its
    /// proxies; costs about a third more time per frame. Default on (the scene's default).
    pub skin_contact: bool,
    /// Wind: mean speed, m/s. Range 0 … 30; default 0.
    pub wind_speed: f32,
    /// Wind: direction it blows towards, degrees about +Y from +Z (0 = towards the viewer of a
    /// front view, 90 = towards +X). Range −180 … 180; default 180 (from the front, blowing the
    /// cape out behind).
    pub wind_azimuth: f32,
    /// Wind: gust amplitude, fraction of the mean speed. Range 0 … 2; default 0.5.
    pub wind_gusts: f32,
    // Wet cloth.
    /// Garments wet or dry. Default dry.
    pub wet: bool,
    /// Fabric whose uptake law sets the water held ([`Fabric::ALL`] by name). Default cotton.
    pub wet_fabric: String,
    /// Wetness level, fraction of the fabric's saturation B. Range 0 … 1; default 1.
    pub wetness: f32,
    /// Adhesion scale s (Park & Byun 2019). Range 0 … 10; default 1.
    pub adhesion_scale: f32,
    /// Adhesion model. Default per vertex.
    pub adhesion: AdhesionMode,
    /// Wet self-adhesion. Default on.
    pub self_adhesion: bool,
    // Shading and debug views.
    /// Body shader (a [`SHADER_NAMES`] entry). Default `texture`.
    pub body_shader: String,
    /// Garment shader. Default `phong`.
    pub garment_shader: String,
    /// Key light: azimuth, degrees about +Y from +Z. Range −180 … 180; default 53 (the
    /// renderer's default light (0.4, 1, 0.3)).
    pub light_azimuth: f32,
    /// Key light: elevation above the horizon, degrees. Range 5 … 90; default 62.
    pub light_elevation: f32,
    /// Shadows on/off. Default on.
    pub shadows: bool,
    /// 4× multisample antialiasing. Default on; off roughly halves the drawing time on a
    /// software rasteriser (lavapipe).
    pub msaa: bool,
    /// Show the body proxies (spheres and tapered capsules). Default off.
    pub show_proxies: bool,
    /// Show the proxy BVH's boxes. Default off.
    pub show_bvh: bool,
    /// Show the skeleton. Default off.
    pub show_skeleton: bool,
    /// Draw everything as wireframe. Default off.
    pub wireframe: bool,
    /// Draw the ground. Default on.
    pub ground: bool,
    // Camera and UI.
    /// The camera follows the character. Default on.
    pub follow: bool,
    /// Help panel shown. Default off.
    pub show_help: bool,
    /// Meshes of the character simulated as cloth (full mesh names, `garments::mesh`), pinned
    /// at their highest ring. Not saved; cleared when another character is loaded. Default none.
    pub cloth_meshes: Vec<String>,
    /// Meshes of the character taken off (full mesh names, `SceneConfig::hide`): props a file
    /// shows all at once. Not saved; cleared when another character is loaded. Default none.
    pub hidden_meshes: Vec<String>,
    /// Library garments worn even where this body cannot wear them, in [`GarmentKind::ALL`]
    /// order (`GarmentSpec::wear_unfit`). Not saved; cleared when another character is loaded.
    /// Default none.
    pub wear_unfit: [bool; 4],
}

impl Default for ViewerSettings {
    fn default() -> Self {
        Self {
            method: SkinMethod::Lbs,
            clip: Some("roundhouse_kick".into()),
            playing: true,
            speed: 1.0,
            looping: true,
            crossfade: 0.3,
            root_motion: RootMotion::InPlace,
            garments: [true; 4],
            fabric_preset: FabricPreset::Garment,
            fabrics: GarmentKind::ALL.map(|k| k.fabric()),
            spacing_scale: 1.0,
            substeps: 16,
            integrator: Integrator::Verlet,
            model: ClothModelKind::MassSpring,
            hakama_style: HakamaStyle::HalfSkirts,
            self_collision: true,
            skin_contact: true,
            wind_speed: 0.0,
            wind_azimuth: 180.0,
            wind_gusts: 0.5,
            wet: false,
            wet_fabric: Fabric::COTTON.name.into(),
            wetness: 1.0,
            adhesion_scale: 1.0,
            adhesion: AdhesionMode::PerVertex,
            self_adhesion: true,
            body_shader: "texture".into(),
            garment_shader: "phong".into(),
            light_azimuth: 53.0,
            light_elevation: 62.0,
            shadows: true,
            msaa: true,
            show_proxies: false,
            show_bvh: false,
            show_skeleton: false,
            wireframe: false,
            ground: true,
            follow: true,
            show_help: false,
            cloth_meshes: Vec::new(),
            hidden_meshes: Vec::new(),
            wear_unfit: [false; 4],
        }
    }
}

/// Index of `kind` in [`GarmentKind::ALL`] (and in the settings' per-garment arrays).
pub fn garment_index(kind: GarmentKind) -> usize {
    GarmentKind::ALL
        .iter()
        .position(|&k| k == kind)
        .unwrap_or(0)
}

pub(crate) fn integrator_name(i: Integrator) -> &'static str {
    match i {
        Integrator::Verlet => "verlet",
        Integrator::SymplecticEuler => "euler",
    }
}

pub(crate) fn adhesion_name(a: AdhesionMode) -> &'static str {
    match a {
        AdhesionMode::Off => "off",
        AdhesionMode::PerVertex => "vertex",
        AdhesionMode::AreaBased => "area",
    }
}

pub(crate) fn root_motion_name(r: RootMotion) -> &'static str {
    match r {
        RootMotion::InPlace => "in_place",
        RootMotion::Travel => "travel",
        RootMotion::Authored => "authored",
    }
}

pub(crate) fn parse_root_motion(s: &str) -> Result<RootMotion, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "in_place" | "in-place" | "inplace" => Ok(RootMotion::InPlace),
        "travel" => Ok(RootMotion::Travel),
        "authored" => Ok(RootMotion::Authored),
        o => Err(format!(
            "unknown root motion '{o}' (expected in_place, travel or authored)"
        )),
    }
}

/// The file's shape: every field optional and typed loosely, so one bad value costs only that
/// value (with a warning), not the whole file.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
struct SettingsFile {
    method: Option<String>,
    clip: Option<String>,
    playing: Option<bool>,
    speed: Option<f32>,
    looping: Option<bool>,
    crossfade: Option<f32>,
    root_motion: Option<String>,
    garments: Option<Vec<String>>,
    fabric_preset: Option<String>,
    fabric: std::collections::BTreeMap<String, std::collections::BTreeMap<String, f32>>,
    spacing_scale: Option<f32>,
    substeps: Option<u32>,
    integrator: Option<String>,
    model: Option<String>,
    hakama_style: Option<String>,
    self_collision: Option<bool>,
    skin_contact: Option<bool>,
    wind_speed: Option<f32>,
    wind_azimuth: Option<f32>,
    wind_gusts: Option<f32>,
    wet: Option<bool>,
    wet_fabric: Option<String>,
    wetness: Option<f32>,
    adhesion_scale: Option<f32>,
    adhesion: Option<String>,
    self_adhesion: Option<bool>,
    body_shader: Option<String>,
    garment_shader: Option<String>,
    light_azimuth: Option<f32>,
    light_elevation: Option<f32>,
    shadows: Option<bool>,
    msaa: Option<bool>,
    show_proxies: Option<bool>,
    show_bvh: Option<bool>,
    show_skeleton: Option<bool>,
    wireframe: Option<bool>,
    ground: Option<bool>,
    follow: Option<bool>,
    show_help: Option<bool>,
}

/// A value of the settings file, checked against its [`crate::limits`] entry (the same ranges
/// as scene files and the viewer's actions): out of range, it is reported and the default kept.
fn ranged(
    warnings: &mut Vec<String>,
    name: &str,
    v: Option<f32>,
    limit: &crate::limits::Limit,
    out: &mut f32,
) {
    if let Some(v) = v {
        match limit.check_f32(name, v) {
            Ok(v) => *out = v,
            Err(e) => warnings.push(format!("{e}; kept {out}")),
        }
    }
}

fn parsed<T>(
    warnings: &mut Vec<String>,
    v: Option<&String>,
    parse: impl Fn(&str) -> Result<T, String>,
    out: &mut T,
) {
    if let Some(s) = v {
        match parse(s) {
            Ok(x) => *out = x,
            Err(e) => warnings.push(e),
        }
    }
}

impl ViewerSettings {
    /// Parses a settings file's text: values it lacks keep their defaults, bad values are
    /// reported in the returned warnings and keep their defaults, a file that is not TOML at
    /// all gives defaults and one warning.
    pub fn from_toml(text: &str) -> (ViewerSettings, Vec<String>) {
        let mut s = ViewerSettings::default();
        let mut w = Vec::new();
        let f: SettingsFile = match toml::from_str(text) {
            Ok(f) => f,
            Err(e) => {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or("").to_string();
                w.push(format!("unreadable settings ({first}); using defaults"));
                return (s, w);
            }
        };
        parsed(&mut w, f.method.as_ref(), |x| x.parse(), &mut s.method);
        if f.clip.is_some() {
            s.clip = f.clip.filter(|c| !c.is_empty());
        }
        s.playing = f.playing.unwrap_or(s.playing);
        ranged(
            &mut w,
            "speed",
            f.speed,
            &crate::limits::SPEED,
            &mut s.speed,
        );
        s.looping = f.looping.unwrap_or(s.looping);
        ranged(
            &mut w,
            "crossfade",
            f.crossfade,
            &crate::limits::CROSSFADE,
            &mut s.crossfade,
        );
        parsed(
            &mut w,
            f.root_motion.as_ref(),
            parse_root_motion,
            &mut s.root_motion,
        );
        if let Some(list) = &f.garments {
            let mut on = [false; 4];
            for name in list {
                match name.parse::<GarmentKind>() {
                    Ok(k) => on[garment_index(k)] = true,
                    Err(e) => w.push(e.to_string()),
                }
            }
            s.garments = on;
        }
        parsed(
            &mut w,
            f.fabric_preset.as_ref(),
            |x| FabricPreset::from_name(x).ok_or_else(|| format!("unknown fabric preset '{x}'")),
            &mut s.fabric_preset,
        );
        for (kind, params) in &f.fabric {
            let Ok(k) = kind.parse::<GarmentKind>() else {
                w.push(format!("[fabric.{kind}]: unknown garment"));
                continue;
            };
            let fabric = &mut s.fabrics[garment_index(k)];
            for (key, &v) in params {
                match FabricParam::from_key(key) {
                    Some(p) => {
                        if let Err(e) = p.set(fabric, v) {
                            w.push(format!("fabric.{kind}.{e}"));
                        }
                    }
                    None => w.push(format!("fabric.{kind}.{key}: unknown parameter")),
                }
            }
        }
        ranged(
            &mut w,
            "spacing_scale",
            f.spacing_scale,
            &crate::limits::SPACING_SCALE,
            &mut s.spacing_scale,
        );
        if let Some(n) = f.substeps {
            match crate::limits::SUBSTEPS.check_u32("substeps", n) {
                Ok(n) => s.substeps = n,
                Err(e) => w.push(format!("{e}; kept {}", s.substeps)),
            }
        }
        parsed(
            &mut w,
            f.integrator.as_ref(),
            |x| x.parse(),
            &mut s.integrator,
        );
        parsed(&mut w, f.model.as_ref(), |x| x.parse(), &mut s.model);
        parsed(
            &mut w,
            f.hakama_style.as_ref(),
            |x| x.parse(),
            &mut s.hakama_style,
        );
        s.self_collision = f.self_collision.unwrap_or(s.self_collision);
        s.skin_contact = f.skin_contact.unwrap_or(s.skin_contact);
        ranged(
            &mut w,
            "wind_speed",
            f.wind_speed,
            &crate::limits::WIND_SPEED,
            &mut s.wind_speed,
        );
        ranged(
            &mut w,
            "wind_azimuth",
            f.wind_azimuth,
            &crate::limits::AZIMUTH,
            &mut s.wind_azimuth,
        );
        ranged(
            &mut w,
            "wind_gusts",
            f.wind_gusts,
            &crate::limits::WIND_GUSTS,
            &mut s.wind_gusts,
        );
        s.wet = f.wet.unwrap_or(s.wet);
        parsed(
            &mut w,
            f.wet_fabric.as_ref(),
            |x| {
                Fabric::by_name(x)
                    .map(|f| f.name.to_string())
                    .ok_or_else(|| format!("unknown wet fabric '{x}'"))
            },
            &mut s.wet_fabric,
        );
        ranged(
            &mut w,
            "wetness",
            f.wetness,
            &crate::limits::WETNESS,
            &mut s.wetness,
        );
        ranged(
            &mut w,
            "adhesion_scale",
            f.adhesion_scale,
            &crate::limits::ADHESION_SCALE,
            &mut s.adhesion_scale,
        );
        parsed(&mut w, f.adhesion.as_ref(), |x| x.parse(), &mut s.adhesion);
        s.self_adhesion = f.self_adhesion.unwrap_or(s.self_adhesion);
        let shader = |x: &str| {
            SHADER_NAMES
                .iter()
                .find(|n| **n == x)
                .map(|n| n.to_string())
                .ok_or_else(|| format!("unknown shader '{x}'"))
        };
        parsed(&mut w, f.body_shader.as_ref(), shader, &mut s.body_shader);
        parsed(
            &mut w,
            f.garment_shader.as_ref(),
            shader,
            &mut s.garment_shader,
        );
        ranged(
            &mut w,
            "light_azimuth",
            f.light_azimuth,
            &crate::limits::AZIMUTH,
            &mut s.light_azimuth,
        );
        ranged(
            &mut w,
            "light_elevation",
            f.light_elevation,
            &crate::limits::LIGHT_ELEVATION,
            &mut s.light_elevation,
        );
        s.shadows = f.shadows.unwrap_or(s.shadows);
        s.msaa = f.msaa.unwrap_or(s.msaa);
        s.show_proxies = f.show_proxies.unwrap_or(s.show_proxies);
        s.show_bvh = f.show_bvh.unwrap_or(s.show_bvh);
        s.show_skeleton = f.show_skeleton.unwrap_or(s.show_skeleton);
        s.wireframe = f.wireframe.unwrap_or(s.wireframe);
        s.ground = f.ground.unwrap_or(s.ground);
        s.follow = f.follow.unwrap_or(s.follow);
        s.show_help = f.show_help.unwrap_or(s.show_help);
        (s, w)
    }

    /// The settings as a settings file's text.
    pub fn to_toml(&self) -> String {
        let fabric = GarmentKind::ALL
            .iter()
            .zip(&self.fabrics)
            .map(|(k, f)| {
                (
                    k.name().to_string(),
                    FabricParam::ALL
                        .iter()
                        .map(|p| (p.key().to_string(), p.get(f)))
                        .collect(),
                )
            })
            .collect();
        let f = SettingsFile {
            method: Some(self.method.name().into()),
            clip: Some(self.clip.clone().unwrap_or_default()),
            playing: Some(self.playing),
            speed: Some(self.speed),
            looping: Some(self.looping),
            crossfade: Some(self.crossfade),
            root_motion: Some(root_motion_name(self.root_motion).into()),
            garments: Some(
                GarmentKind::ALL
                    .iter()
                    .zip(self.garments)
                    .filter(|(_, on)| *on)
                    .map(|(k, _)| k.name().to_string())
                    .collect(),
            ),
            fabric_preset: Some(self.fabric_preset.name().into()),
            fabric,
            spacing_scale: Some(self.spacing_scale),
            substeps: Some(self.substeps),
            integrator: Some(integrator_name(self.integrator).into()),
            model: Some(self.model.name().into()),
            hakama_style: Some(self.hakama_style.name().into()),
            self_collision: Some(self.self_collision),
            skin_contact: Some(self.skin_contact),
            wind_speed: Some(self.wind_speed),
            wind_azimuth: Some(self.wind_azimuth),
            wind_gusts: Some(self.wind_gusts),
            wet: Some(self.wet),
            wet_fabric: Some(self.wet_fabric.clone()),
            wetness: Some(self.wetness),
            adhesion_scale: Some(self.adhesion_scale),
            adhesion: Some(adhesion_name(self.adhesion).into()),
            self_adhesion: Some(self.self_adhesion),
            body_shader: Some(self.body_shader.clone()),
            garment_shader: Some(self.garment_shader.clone()),
            light_azimuth: Some(self.light_azimuth),
            light_elevation: Some(self.light_elevation),
            shadows: Some(self.shadows),
            msaa: Some(self.msaa),
            show_proxies: Some(self.show_proxies),
            show_bvh: Some(self.show_bvh),
            show_skeleton: Some(self.show_skeleton),
            wireframe: Some(self.wireframe),
            ground: Some(self.ground),
            follow: Some(self.follow),
            show_help: Some(self.show_help),
        };
        let body = toml::to_string(&f).unwrap_or_default();
        format!("# drape viewer settings (written by `drape view`; delete to reset)\n{body}")
    }

    /// The wet fabric preset (cotton when the name is unknown).
    pub fn wet_fabric(&self) -> Fabric {
        Fabric::by_name(&self.wet_fabric).unwrap_or(Fabric::COTTON)
    }
}
