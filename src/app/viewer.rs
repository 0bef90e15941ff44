//! The viewer's state without a window: the settings, the dressed-character [`Scene`], the
//! orbit camera and the messages shown in the panel, changed only through [`Action`]s applied
//! by [`Viewer::apply`]. The egui panel, the keyboard shortcuts and `drape view --action` all
//! emit Actions, so what a test does through this type is what a click does.
//!
//! Which edits act live and which rebuild the scene: the fabric is baked into the cloth model
//! when a garment is built (`drape::cloth::params`), so garment toggles, fabric edits and the
//! integrator rebuild the scene (which restarts the settle-and-blend start-up); substeps,
//! self-collision, wind and everything wet are read every frame and act at once.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::inspect::{verdict_line, Inspect};
use super::orbit::OrbitCamera;
use super::settings::{garment_index, FabricParam, FabricPreset, ViewerSettings};
use crate::anim::player::{LoopMode, RootMotion};
use crate::cloth::wet::{AdhesionMode, Fabric};
use crate::cloth::{ClothModelKind, Integrator, SimParams};
use crate::garments::{has_bones, GarmentKind, GarmentSpec, HakamaStyle};
use crate::math::Vec3;
use crate::rig::Rig;
use crate::scene::{Scene, SceneConfig};
use crate::skin::SkinMethod;

/// One thing the user asks for. Every control of the viewer is one of these.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    // Character and playback.
    SetMethod(SkinMethod),
    /// Plays the clip of that name (crossfading over the set crossfade time).
    SelectClip(String),
    Play,
    Pause,
    TogglePlay,
    /// Scrubs to this time on the clip's timeline, s.
    Seek(f32),
    /// World speed × real time, 0.05 … 2.
    SetSpeed(f32),
    SetLoop(bool),
    /// Crossfade time, s, 0 … 2.
    SetCrossfade(f32),
    SetRootMotion(RootMotion),
    /// Opens a .glb/.gltf/.fbx; on failure the current character stays.
    LoadCharacter(PathBuf),
    /// The built-in ninja.
    LoadNinja,
    // Garments and the world.
    SetGarment(GarmentKind, bool),
    /// Wear a garment even where the body cannot (`GarmentSpec::wear_unfit`).
    WearUnfit(GarmentKind, bool),
    /// Simulates the character's mesh of that (full) name as cloth pinned at its top, or stops.
    SimulateAsCloth(String, bool),
    /// Takes the character's mesh of that (full) name off (a prop the file shows with every
    /// other: `SceneConfig::hide`), or puts it back.
    HideMesh(String, bool),
    SetFabricPreset(FabricPreset),
    /// One fabric parameter of one garment, in the parameter's unit ([`FabricParam`]).
    SetFabric(GarmentKind, FabricParam, f32),
    /// Garment particle spacing × the default ([`ViewerSettings::spacing_scale`]); rebuilds.
    SetSpacingScale(f32),
    /// Cloth substeps per frame, 1 … 64.
    SetSubsteps(u32),
    SetIntegrator(Integrator),
    /// Cloth model (rebuilds the garments).
    SetModel(ClothModelKind),
    /// How the hakama is cut (rebuilds the garments).
    SetHakamaStyle(HakamaStyle),
    SetSelfCollision(bool),
    /// Cloth against the skinned triangles on every substep, or the proxies alone.
    SetSkinContact(bool),
    /// Mean wind speed, m/s, 0 … 30.
    SetWindSpeed(f32),
    /// Direction the wind blows towards, degrees about +Y from +Z.
    SetWindAzimuth(f32),
    /// Gust amplitude, fraction of the mean speed, 0 … 2.
    SetWindGusts(f32),
    /// Rebuilds the garments at the bind pose and restarts the start-up.
    ResetSim,
    // Wet cloth.
    SetWet(bool),
    /// A [`Fabric`] preset by name (its saturation B sets the water held).
    SetWetFabric(String),
    /// Fraction of the fabric's saturation, 0 … 1.
    SetWetness(f32),
    /// Adhesion scale s, 0 … 10.
    SetAdhesionScale(f32),
    SetAdhesion(AdhesionMode),
    SetSelfAdhesion(bool),
    // Shading and debug views.
    SetBodyShader(String),
    SetGarmentShader(String),
    /// Key light azimuth and elevation, degrees.
    SetLight(f32, f32),
    SetShadows(bool),
    /// 4× MSAA on or off.
    SetMsaa(bool),
    ShowProxies(bool),
    ShowBvh(bool),
    ShowSkeleton(bool),
    /// Measure the cloth against the visible skin every frame and mark what is inside
    /// ([`super::inspect`]).
    ShowInside(bool),
    /// Run `drape check` on the current clip with the current settings, in the background.
    CheckClip,
    SetWireframe(bool),
    SetGround(bool),
    // Camera and UI.
    /// Mouse drag in pixels.
    Orbit(f32, f32),
    /// Mouse drag in pixels, viewport height in pixels.
    Pan(f32, f32, f32),
    /// Wheel notches (positive: closer).
    Zoom(f32),
    SetFollow(bool),
    /// Frame the character (F).
    FrameCamera,
    /// The default view, framed.
    ResetCamera,
    ToggleHelp,
    /// Every setting back to its default (the character stays).
    ResetDefaults,
}

fn on_off(v: &str) -> Result<bool, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        o => Err(format!("expected on or off, not '{o}'")),
    }
}

fn number(v: &str) -> Result<f32, String> {
    v.trim()
        .parse::<f32>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("expected a number, not '{v}'"))
}

impl Action {
    /// Parses `KEY=VALUE` (or a bare `KEY` for actions without a value), the form of
    /// `drape view --action`. Keys: method, clip, play, pause, seek, speed, loop, crossfade,
    /// root_motion, load, garment.KIND, wear_unfit.KIND (wear a garment the body cannot), fabric, fabric.KIND.PARAM, spacing, substeps, integrator,
    /// model, hakama (half_skirts|sewn|fitted|divided), cloth.MESH (simulate the character's mesh MESH as cloth), hide.MESH (take it off), self_collision, skin_contact, wind, wind_dir, gusts, reset_sim, wet, wet_fabric, wetness, adhesion,
    /// adhesion_mode, self_adhesion, body_shader, garment_shader, light (AZ,EL), shadows, msaa,
    /// proxies, bvh, skeleton, inside, check, wireframe, ground, follow, frame, reset_camera, help, defaults.
    pub fn parse(text: &str) -> Result<Action, String> {
        let (key, value) = match text.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (text.trim(), None),
        };
        let need = || value.ok_or_else(|| format!("'{key}' needs a value ({key}=…)"));
        let a = match key {
            "method" => Action::SetMethod(need()?.parse()?),
            "clip" => Action::SelectClip(need()?.to_string()),
            "play" => Action::Play,
            "pause" => Action::Pause,
            "seek" => Action::Seek(number(need()?)?),
            "speed" => Action::SetSpeed(number(need()?)?),
            "loop" => Action::SetLoop(on_off(need()?)?),
            "crossfade" => Action::SetCrossfade(number(need()?)?),
            "root_motion" => Action::SetRootMotion(super::settings::parse_root_motion(need()?)?),
            "load" => Action::LoadCharacter(PathBuf::from(need()?)),
            "ninja" => Action::LoadNinja,
            "fabric" => Action::SetFabricPreset(
                FabricPreset::from_name(need()?)
                    .ok_or_else(|| format!("unknown fabric preset '{}'", need().unwrap_or("")))?,
            ),
            "spacing" => Action::SetSpacingScale(number(need()?)?),
            "substeps" => Action::SetSubsteps(
                need()?
                    .parse::<u32>()
                    .map_err(|_| "substeps: expected a whole number".to_string())?,
            ),
            "integrator" => Action::SetIntegrator(need()?.parse()?),
            "model" => Action::SetModel(need()?.parse()?),
            "hakama" => Action::SetHakamaStyle(need()?.parse()?),
            "self_collision" => Action::SetSelfCollision(on_off(need()?)?),
            "skin_contact" => Action::SetSkinContact(on_off(need()?)?),
            "wind" => Action::SetWindSpeed(number(need()?)?),
            "wind_dir" => Action::SetWindAzimuth(number(need()?)?),
            "gusts" => Action::SetWindGusts(number(need()?)?),
            "reset_sim" => Action::ResetSim,
            "wet" => Action::SetWet(on_off(need()?)?),
            "wet_fabric" => Action::SetWetFabric(need()?.to_string()),
            "wetness" => Action::SetWetness(number(need()?)?),
            "adhesion" => Action::SetAdhesionScale(number(need()?)?),
            "adhesion_mode" => Action::SetAdhesion(need()?.parse()?),
            "self_adhesion" => Action::SetSelfAdhesion(on_off(need()?)?),
            "body_shader" => Action::SetBodyShader(need()?.to_string()),
            "garment_shader" => Action::SetGarmentShader(need()?.to_string()),
            "light" => {
                let v = need()?;
                let (az, el) = v
                    .split_once(',')
                    .ok_or_else(|| format!("light: expected AZ,EL degrees, not '{v}'"))?;
                Action::SetLight(number(az)?, number(el)?)
            }
            "shadows" => Action::SetShadows(on_off(need()?)?),
            "msaa" => Action::SetMsaa(on_off(need()?)?),
            "proxies" => Action::ShowProxies(on_off(need()?)?),
            "bvh" => Action::ShowBvh(on_off(need()?)?),
            "skeleton" => Action::ShowSkeleton(on_off(need()?)?),
            "inside" => Action::ShowInside(on_off(need()?)?),
            "check" => Action::CheckClip,
            "wireframe" => Action::SetWireframe(on_off(need()?)?),
            "ground" => Action::SetGround(on_off(need()?)?),
            "follow" => Action::SetFollow(on_off(need()?)?),
            "frame" => Action::FrameCamera,
            "reset_camera" => Action::ResetCamera,
            "orbit" => {
                let v = need()?;
                let (dx, dy) = v
                    .split_once(',')
                    .ok_or_else(|| format!("orbit: expected DX,DY pixels, not '{v}'"))?;
                Action::Orbit(number(dx)?, number(dy)?)
            }
            "zoom" => Action::Zoom(number(need()?)?),
            "help" => Action::ToggleHelp,
            "defaults" => Action::ResetDefaults,
            k => {
                if let Some(name) = k.strip_prefix("cloth.") {
                    Action::SimulateAsCloth(name.to_string(), on_off(need()?)?)
                } else if let Some(name) = k.strip_prefix("hide.") {
                    Action::HideMesh(name.to_string(), on_off(need()?)?)
                } else if let Some(kind) = k.strip_prefix("wear_unfit.") {
                    let kind: GarmentKind = kind.parse().map_err(|e| format!("{e}"))?;
                    Action::WearUnfit(kind, on_off(need()?)?)
                } else if let Some(kind) = k.strip_prefix("garment.") {
                    let kind: GarmentKind = kind.parse().map_err(|e| format!("{e}"))?;
                    Action::SetGarment(kind, on_off(need()?)?)
                } else if let Some(rest) = k.strip_prefix("fabric.") {
                    let (kind, param) = rest
                        .split_once('.')
                        .ok_or_else(|| format!("'{k}': expected fabric.KIND.PARAM"))?;
                    let kind: GarmentKind = kind.parse().map_err(|e| format!("{e}"))?;
                    let param = FabricParam::from_key(param).ok_or_else(|| {
                        format!(
                            "unknown fabric parameter '{param}' (expected one of: {})",
                            FabricParam::ALL.map(|p| p.key()).join(", ")
                        )
                    })?;
                    Action::SetFabric(kind, param, number(need()?)?)
                } else {
                    return Err(format!("unknown action '{k}'"));
                }
            }
        };
        Ok(a)
    }
}

/// The value `action` carries, checked against [`crate::limits`] under the key `drape view
/// --action` uses for it: `Err` names the key, the value and the allowed range.
pub fn check_range(action: &Action) -> Result<(), String> {
    use crate::limits as l;
    let angle = |key: &str, v: f32| {
        if v.is_finite() {
            Ok(())
        } else {
            Err(format!("{key} = {v} is not a finite angle"))
        }
    };
    match action {
        Action::Seek(t) if !t.is_finite() => Err(format!("seek = {t} is not a finite time")),
        Action::SetSpeed(v) => l::SPEED.check_f32("speed", *v).map(drop),
        Action::SetCrossfade(v) => l::CROSSFADE.check_f32("crossfade", *v).map(drop),
        Action::SetFabric(kind, p, v) => p
            .limit()
            .check_f32(&format!("fabric.{}.{}", kind.name(), p.key()), *v)
            .map(drop),
        Action::SetSpacingScale(v) => l::SPACING_SCALE.check_f32("spacing", *v).map(drop),
        Action::SetSubsteps(n) => l::SUBSTEPS.check_u32("substeps", *n).map(drop),
        Action::SetWindSpeed(v) => l::WIND_SPEED.check_f32("wind", *v).map(drop),
        Action::SetWindAzimuth(v) => angle("wind_dir", *v),
        Action::SetWindGusts(v) => l::WIND_GUSTS.check_f32("gusts", *v).map(drop),
        Action::SetWetness(v) => l::WETNESS.check_f32("wetness", *v).map(drop),
        Action::SetAdhesionScale(v) => l::ADHESION_SCALE.check_f32("adhesion", *v).map(drop),
        Action::SetLight(az, el) => {
            angle("light azimuth", *az)?;
            l::LIGHT_ELEVATION
                .check_f32("light elevation", *el)
                .map(drop)
        }
        _ => Ok(()),
    }
}

/// Parses `KEY=VALUE@FRAME` (the frame defaults to 1): an [`Action`] to apply at that frame.
pub fn parse_scheduled(text: &str) -> Result<(u32, Action), String> {
    let (action, frame) = match text.rsplit_once('@') {
        Some((a, f)) => (
            a,
            f.trim()
                .parse::<u32>()
                .ok()
                .filter(|f| *f >= 1)
                .ok_or_else(|| format!("'{text}': the frame after @ must be a number ≥ 1"))?,
        ),
        None => (text, 1),
    };
    Ok((frame, Action::parse(action)?))
}

/// How serious a panel message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// What [`Viewer::tick`] did this redraw.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TickReport {
    /// Scene steps run.
    pub steps: u32,
    /// Simulated seconds advanced.
    pub sim_seconds: f32,
    /// Wall seconds spent stepping.
    pub wall_seconds: f32,
    /// The simulation could not keep up with `speed × real time` within the budget and dropped
    /// the rest of this redraw's time (the picture runs in slow motion).
    pub lagging: bool,
}

/// The shortest and longest scene step, s (`Scene::step` clamps to 1/240 … 1/10; one rendered
/// frame of 1/60 s is what the garments are tuned for).
const MIN_STEP: f32 = 1.0 / 240.0;
const MAX_STEP: f32 = 1.0 / 60.0;

/// The viewer without its window. See the module docs.
pub struct Viewer {
    pub settings: ViewerSettings,
    pub scene: Scene,
    /// The character as loaded; each rebuild gives the scene a copy.
    base_rig: Rig,
    /// "built-in ninja" or the file's path.
    pub character: String,
    pub camera: OrbitCamera,
    /// Messages for the panel, newest last (at most 8 kept).
    pub messages: Vec<(Level, String)>,
    /// Bumped when the character changes (the window re-uploads it).
    pub character_generation: u64,
    /// Bumped when the scene is rebuilt (garment meshes change).
    pub scene_generation: u64,
    /// The camera should frame the character at the next draw (its aspect is known there).
    pub frame_requested: bool,
    rebuild_pending: bool,
    /// Simulated seconds owed to the clock (speed × real time not yet stepped).
    pending: f32,
    /// Wall time allowed for stepping per redraw.
    pub budget: Duration,
    /// The garment check: cloth inside the skin now, and the verdict on the clip.
    pub inspect: Inspect,
}

impl Viewer {
    /// A viewer on `rig` (named `character` in the panel) with `settings`. Garments the rig
    /// lacks the bones for are left off with a warning; fails only when no scene can be made
    /// at all (no skin, no usable skeleton).
    pub fn new(rig: Rig, character: &str, settings: ViewerSettings) -> Result<Viewer, String> {
        // A viewer session rebuilds large scenes many times: keep resident memory flat.
        crate::memory::tune_for_long_sessions();
        let mut messages = Vec::new();
        let scene = build_scene(&rig, &settings, &mut messages)?;
        let mut v = Viewer {
            settings,
            scene,
            base_rig: rig,
            character: character.to_string(),
            camera: OrbitCamera::default(),
            messages: Vec::new(),
            character_generation: 0,
            scene_generation: 0,
            frame_requested: true,
            rebuild_pending: false,
            pending: 0.0,
            budget: Duration::from_millis(40),
            inspect: Inspect::default(),
        };
        for (l, m) in messages {
            v.message(l, m);
        }
        v.after_build();
        Ok(v)
    }

    pub fn message(&mut self, level: Level, text: impl Into<String>) {
        self.messages.push((level, text.into()));
        let n = self.messages.len();
        if n > 8 {
            self.messages.drain(..n - 8);
        }
    }

    /// The rig being shown (the scene's copy).
    pub fn rig(&self) -> &Rig {
        &self.scene.rig
    }

    /// The names of the character's own meshes, including those simulated as cloth.
    pub fn character_meshes(&self) -> Vec<String> {
        self.base_rig
            .meshes
            .iter()
            .map(|m| m.name.clone())
            .collect()
    }

    /// Whether a rebuild is waiting (fabric edits are applied when the slider is let go).
    pub fn rebuild_pending(&self) -> bool {
        self.rebuild_pending
    }

    /// Applies one action. Errors and warnings go to [`Viewer::messages`]; nothing panics. A
    /// value outside its range ([`crate::limits`], the table scene files use too) is refused
    /// with a message and changes nothing: the panel's sliders cannot go there, so such a value
    /// comes from `--action` or code, and clamping it would hide the mistake.
    pub fn apply(&mut self, action: Action) {
        if let Err(e) = check_range(&action) {
            self.message(Level::Error, format!("{e}; unchanged"));
            return;
        }
        let s = &mut self.settings;
        match action {
            Action::SetMethod(m) => {
                s.method = m;
                self.scene.set_method(m);
            }
            Action::SelectClip(name) => match self.scene.rig.clip(&name) {
                Some(c) => {
                    s.clip = Some(name);
                    self.scene.switch_clip(c, s.crossfade);
                }
                None => {
                    let known: Vec<&str> = self
                        .scene
                        .rig
                        .clips
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect();
                    let msg = format!(
                        "{} has no clip '{name}' (clips: {})",
                        self.character,
                        known.join(", ")
                    );
                    self.message(Level::Error, msg);
                }
            },
            Action::Play => s.playing = true,
            Action::Pause => s.playing = false,
            Action::TogglePlay => s.playing = !s.playing,
            Action::Seek(t) => self.seek(t),
            Action::SetSpeed(v) => s.speed = v,
            Action::SetLoop(on) => {
                s.looping = on;
                self.scene.player.set_loop_mode(loop_mode(on));
            }
            Action::SetCrossfade(v) => s.crossfade = v,
            Action::SetRootMotion(r) => {
                s.root_motion = r;
                self.scene.config.root_motion = r;
                self.scene.player.set_root_motion(r);
            }
            Action::LoadCharacter(path) => self.load(Some(path)),
            Action::LoadNinja => self.load(None),
            Action::SetGarment(kind, on) => {
                s.garments[garment_index(kind)] = on;
                self.rebuild_pending = true;
            }
            Action::WearUnfit(kind, on) => {
                s.wear_unfit[garment_index(kind)] = on;
                self.rebuild_pending = true;
            }
            Action::SimulateAsCloth(name, on) => {
                s.cloth_meshes.retain(|n| *n != name);
                if on {
                    s.cloth_meshes.push(name);
                }
                self.rebuild_pending = true;
            }
            Action::HideMesh(name, on) => {
                if !self.base_rig.meshes.iter().any(|m| m.name == name) {
                    let msg = format!("hide: the character has no mesh '{name}'");
                    self.message(Level::Error, msg);
                    return;
                }
                let s = &mut self.settings;
                s.hidden_meshes.retain(|n| *n != name);
                if on {
                    s.hidden_meshes.push(name);
                }
                self.rebuild_pending = true;
            }
            Action::SetFabricPreset(p) => {
                s.fabric_preset = p;
                s.fabrics = GarmentKind::ALL.map(|k| p.fabric(k));
                self.rebuild_pending = true;
            }
            Action::SetFabric(kind, param, v) => {
                // In range: checked above.
                if param.set(&mut s.fabrics[garment_index(kind)], v).is_ok() {
                    self.rebuild_pending = true;
                }
            }
            Action::SetSpacingScale(v) => {
                if v != s.spacing_scale {
                    s.spacing_scale = v;
                    self.rebuild_pending = true;
                }
            }
            Action::SetSubsteps(n) => {
                s.substeps = n;
                self.scene.config.sim.substeps = s.substeps;
                apply_skin_contact(s, &mut self.scene.config.sim);
            }
            Action::SetIntegrator(i) => {
                s.integrator = i;
                self.rebuild_pending = true;
            }
            Action::SetModel(m) => {
                if s.model != m {
                    s.model = m;
                    self.rebuild_pending = true;
                }
            }
            Action::SetHakamaStyle(h) => {
                if s.hakama_style != h {
                    s.hakama_style = h;
                    self.rebuild_pending = true;
                }
            }
            Action::SetSelfCollision(on) => {
                s.self_collision = on;
                self.scene.config.sim.self_collision = on;
            }
            Action::SetSkinContact(on) => {
                s.skin_contact = on;
                if on && self.scene.workspace.skin.is_empty() {
                    // The scene was built without the skin's surface: build it with one.
                    self.rebuild_pending = true;
                } else {
                    apply_skin_contact(s, &mut self.scene.config.sim);
                }
            }
            Action::SetWindSpeed(v) => {
                s.wind_speed = v;
                apply_world(s, &mut self.scene.config.sim);
            }
            Action::SetWindAzimuth(v) => {
                s.wind_azimuth = (v + 180.0).rem_euclid(360.0) - 180.0;
                apply_world(s, &mut self.scene.config.sim);
            }
            Action::SetWindGusts(v) => {
                s.wind_gusts = v;
                apply_world(s, &mut self.scene.config.sim);
            }
            Action::ResetSim => self.rebuild(),
            Action::SetWet(on) => {
                s.wet = on;
                apply_wetness(s, &mut self.scene);
            }
            Action::SetWetFabric(name) => match Fabric::by_name(&name) {
                Some(f) => {
                    s.wet_fabric = f.name.to_string();
                    apply_wetness(s, &mut self.scene);
                }
                None => self.message(
                    Level::Error,
                    format!(
                        "unknown wet fabric '{name}' (expected {})",
                        Fabric::ALL.map(|f| f.name).join(", ")
                    ),
                ),
            },
            Action::SetWetness(v) => {
                s.wetness = v;
                apply_wetness(s, &mut self.scene);
            }
            Action::SetAdhesionScale(v) => {
                s.adhesion_scale = v;
                apply_world(s, &mut self.scene.config.sim);
            }
            Action::SetAdhesion(a) => {
                s.adhesion = a;
                apply_world(s, &mut self.scene.config.sim);
            }
            Action::SetSelfAdhesion(on) => {
                s.self_adhesion = on;
                apply_world(s, &mut self.scene.config.sim);
            }
            Action::SetBodyShader(name) => {
                if let Some(n) = shader_name(&name) {
                    s.body_shader = n;
                } else {
                    self.message(Level::Error, format!("unknown shader '{name}'"));
                }
            }
            Action::SetGarmentShader(name) => {
                if let Some(n) = shader_name(&name) {
                    s.garment_shader = n;
                } else {
                    self.message(Level::Error, format!("unknown shader '{name}'"));
                }
            }
            Action::SetLight(az, el) => {
                // Azimuths wrap around (370° is 10°); the elevation was checked above.
                s.light_azimuth = (az + 180.0).rem_euclid(360.0) - 180.0;
                s.light_elevation = el;
            }
            Action::SetShadows(on) => s.shadows = on,
            Action::SetMsaa(on) => s.msaa = on,
            Action::ShowProxies(on) => s.show_proxies = on,
            Action::ShowBvh(on) => s.show_bvh = on,
            Action::ShowSkeleton(on) => s.show_skeleton = on,
            Action::ShowInside(on) => {
                self.inspect.show_inside = on;
                self.inspect.update(&self.scene, self.scene_generation);
            }
            Action::CheckClip => match self.inspect.start_check(&self.scene) {
                Ok(clip) => self.message(Level::Info, format!("checking '{clip}' …")),
                Err(e) => self.message(Level::Warning, e),
            },
            Action::SetWireframe(on) => s.wireframe = on,
            Action::SetGround(on) => s.ground = on,
            Action::Orbit(dx, dy) => self.camera.orbit(dx, dy),
            Action::Pan(dx, dy, h) => self.camera.pan(dx, dy, h),
            Action::Zoom(n) => self.camera.zoom(n),
            Action::SetFollow(on) => {
                s.follow = on;
                self.camera.pan = Vec3::ZERO;
            }
            Action::FrameCamera => self.frame_requested = true,
            Action::ResetCamera => {
                self.camera = OrbitCamera::default();
                self.frame_requested = true;
            }
            Action::ToggleHelp => s.show_help = !s.show_help,
            Action::ResetDefaults => {
                self.settings = ViewerSettings::default();
                self.camera = OrbitCamera::default();
                self.frame_requested = true;
                self.rebuild();
                self.message(Level::Info, "settings reset to defaults");
            }
        }
    }

    /// Rebuilds now if an edit asked for it.
    pub fn flush(&mut self) {
        if self.rebuild_pending {
            self.rebuild();
        }
    }

    /// Rebuilds the scene from the settings (the previous scene stays on failure).
    pub fn rebuild(&mut self) {
        self.rebuild_pending = false;
        let mut msgs = Vec::new();
        match build_scene(&self.base_rig, &self.settings, &mut msgs) {
            Ok(scene) => {
                // A mesh hidden, simulated as cloth or given back changes the body drawn: the
                // window uploads the character again (its meshes are indexed as the scene's).
                let names = |r: &Rig| r.meshes.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
                if names(&scene.rig) != names(&self.scene.rig) {
                    self.character_generation += 1;
                }
                self.scene = scene;
                self.scene_generation += 1;
                self.after_build();
            }
            Err(e) => msgs.push((Level::Error, e)),
        }
        for (l, m) in msgs {
            self.message(l, m);
        }
    }

    fn after_build(&mut self) {
        // The previous scene was just dropped: give its pages back (crate::memory).
        crate::memory::release_free_memory();
        self.scene.profile = true;
        self.pending = 0.0;
        apply_wetness(&self.settings, &mut self.scene);
        self.scene
            .player
            .set_loop_mode(loop_mode(self.settings.looping));
        // The clip the scene plays is the one the settings name if the rig has it.
        if let Some(c) = self.scene.clip {
            self.settings.clip = Some(self.scene.rig.clips[c].name.clone());
        }
    }

    /// Loads a character (`None`: the built-in ninja). The current one stays on any failure.
    fn load(&mut self, path: Option<PathBuf>) {
        let (rig, name) = match &path {
            Some(p) => match crate::asset::load_rig(p) {
                // A file with clips and no mesh (Mixamo's "without skin" download): its clips go
                // on the current character.
                Ok(r) if r.meshes.is_empty() && !r.clips.is_empty() => {
                    self.add_clips_from(p, &r);
                    return;
                }
                Ok(r) => (r, p.display().to_string()),
                Err(e) => {
                    self.message(Level::Error, format!("cannot open {}: {e}", p.display()));
                    return;
                }
            },
            None => match crate::cli::load_character(None, &Default::default()) {
                Ok(r) => (r, "built-in ninja".to_string()),
                Err(e) => {
                    self.message(Level::Error, e.to_string());
                    return;
                }
            },
        };
        let mut msgs = Vec::new();
        // Meshes simulated as cloth belong to the character being replaced.
        let mut fresh = self.settings.clone();
        fresh.cloth_meshes.clear();
        fresh.hidden_meshes.clear();
        fresh.wear_unfit = [false; 4];
        match build_scene(&rig, &fresh, &mut msgs) {
            Ok(scene) => {
                self.settings.cloth_meshes.clear();
                self.settings.hidden_meshes.clear();
                self.settings.wear_unfit = [false; 4];
                self.scene = scene;
                self.base_rig = rig;
                self.character = name.clone();
                self.character_generation += 1;
                self.scene_generation += 1;
                self.frame_requested = true;
                self.after_build();
                msgs.push((Level::Info, format!("loaded {name}")));
            }
            Err(e) => msgs.push((
                Level::Error,
                format!("cannot show {name}: {e}; keeping {}", self.character),
            )),
        }
        for (l, m) in msgs {
            self.message(l, m);
        }
    }

    /// Puts the clips of `donor` (loaded from `path`) on the current character by bone name,
    /// named after the file's stem, and plays the first one added.
    fn add_clips_from(&mut self, path: &std::path::Path, donor: &Rig) {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "clip".into());
        let mut rig = self.base_rig.clone();
        let (added, warnings) = match crate::asset::fbx::add_clips_from(&mut rig, donor, &stem) {
            Ok(r) => r,
            Err(e) => {
                self.message(
                    Level::Error,
                    format!("cannot add the clips of {}: {e}", path.display()),
                );
                return;
            }
        };
        let mut msgs: Vec<(Level, String)> =
            warnings.into_iter().map(|w| (Level::Warning, w)).collect();
        let previous = self.settings.clip.clone();
        self.settings.clip = added.first().cloned();
        match build_scene(&rig, &self.settings, &mut msgs) {
            Ok(scene) => {
                self.scene = scene;
                self.base_rig = rig;
                self.character_generation += 1;
                self.scene_generation += 1;
                self.frame_requested = true;
                self.after_build();
                msgs.push((
                    Level::Info,
                    format!("added clip {} from {}", added.join(", "), path.display()),
                ));
            }
            Err(e) => {
                self.settings.clip = previous;
                msgs.push((
                    Level::Error,
                    format!("cannot add the clips of {}: {e}", path.display()),
                ));
            }
        }
        for (l, m) in msgs {
            self.message(l, m);
        }
    }

    fn seek(&mut self, t: f32) {
        if !t.is_finite() || self.scene.clip.is_none() {
            return;
        }
        let scene = &mut self.scene;
        if scene.phase != crate::scene::Phase::Play {
            // Scrubbing skips the start-up: the clip plays from where the user put it.
            scene.phase = crate::scene::Phase::Play;
            scene.time = scene.time.max(scene.startup_seconds());
        }
        scene.player.seek(t, &scene.rig.clips);
        // One short step with the clip held shows the new pose (the cloth follows it).
        scene.player.pause();
        scene.step(MIN_STEP);
        scene.player.resume();
    }

    /// Advances the world by `real_dt` wall seconds × speed (nothing while paused), in steps of
    /// 1/240 … 1/60 s, spending at most [`Viewer::budget`] of wall time; when the simulation is
    /// slower than that allows, the rest of the time is dropped and the report says so.
    ///
    /// Then the garment check's news: the cloth against the skin at the new frame when that is
    /// shown, and the background check's verdict when it ends (also as a panel message).
    pub fn tick(&mut self, real_dt: f32) -> TickReport {
        let report = self.advance(real_dt);
        self.inspect.update(&self.scene, self.scene_generation);
        if let Some((passed, line)) = self.inspect.poll().and_then(verdict_line) {
            let level = if passed { Level::Info } else { Level::Warning };
            self.message(level, line);
        }
        report
    }

    fn advance(&mut self, real_dt: f32) -> TickReport {
        let mut report = TickReport::default();
        if !self.settings.playing {
            self.pending = 0.0;
            return report;
        }
        if real_dt.is_finite() && real_dt > 0.0 {
            // A stall (window dragged, debugger) is not caught up on.
            self.pending += real_dt.min(0.25) * self.settings.speed;
        }
        let start = Instant::now();
        while self.pending >= MIN_STEP {
            let dt = self.pending.min(MAX_STEP);
            self.scene.step(dt);
            self.pending -= dt;
            report.steps += 1;
            report.sim_seconds += dt;
            if start.elapsed() >= self.budget {
                break;
            }
        }
        if self.pending >= MAX_STEP {
            report.lagging = true;
            self.pending = 0.0;
        }
        report.wall_seconds = start.elapsed().as_secs_f32();
        report
    }

    /// Time on the current clip's timeline and the clip's duration, s.
    pub fn clip_time(&self) -> Option<(f32, f32)> {
        let c = self.scene.clip?;
        let clip = self.scene.rig.clips.get(c)?;
        let t = if self.scene.phase == crate::scene::Phase::Play {
            self.scene.player.time()
        } else {
            clip.start
        };
        Some((t - clip.start, clip.duration()))
    }

    /// World bounds of the body at the current frame (the CPU-skinned meshes).
    pub fn body_bounds(&self) -> Option<(Vec3, Vec3)> {
        let mut out: Option<(Vec3, Vec3)> = None;
        for m in 0..self.scene.rig.meshes.len() {
            for &p in self.scene.body_positions(m) {
                if !p.is_finite() {
                    continue;
                }
                out = Some(match out {
                    Some((a, b)) => (a.min(p), b.max(p)),
                    None => (p, p),
                });
            }
        }
        out
    }
}

fn loop_mode(on: bool) -> LoopMode {
    if on {
        LoopMode::Loop
    } else {
        LoopMode::Once
    }
}

fn shader_name(name: &str) -> Option<String> {
    let n = name.trim().to_ascii_lowercase();
    super::settings::SHADER_NAMES
        .iter()
        .find(|s| **s == n)
        .map(|s| s.to_string())
}

/// The live world parameters (wind, wet adhesion) from the settings.
fn apply_world(s: &ViewerSettings, sim: &mut SimParams) {
    let az = s.wind_azimuth.to_radians();
    sim.wind.velocity = Vec3::new(az.sin(), 0.0, az.cos()) * s.wind_speed;
    sim.wind.gust_amplitude = s.wind_gusts;
    sim.wet.scale = s.adhesion_scale;
    sim.wet.adhesion = s.adhesion;
    sim.wet.self_adhesion = s.self_adhesion;
}

/// Every particle holds `wetness × B` g/g of water when wet (B: the fabric's saturation), none
/// when dry; masses follow (`ClothState::set_wetness`).
fn apply_wetness(s: &ViewerSettings, scene: &mut Scene) {
    let absorbed = if s.wet {
        s.wetness.clamp(0.0, 1.0) * s.wet_fabric().saturation
    } else {
        0.0
    };
    for i in 0..scene.model.len() {
        scene.state.set_wetness(&scene.model, i, absorbed);
    }
}

/// The scene configuration the settings describe for `rig`.
pub fn scene_config(
    rig: &Rig,
    s: &ViewerSettings,
    messages: &mut Vec<(Level, String)>,
) -> SceneConfig {
    let mut c = SceneConfig {
        clip: s.clip.clone().filter(|name| rig.clip(name).is_some()),
        method: s.method,
        root_motion: s.root_motion,
        ..SceneConfig::default()
    };
    c.garments = GarmentKind::ALL
        .iter()
        .zip(s.garments)
        .filter(|(_, on)| *on)
        .filter_map(|(&kind, _)| {
            if has_bones(&rig.skeleton, kind) {
                let mut spec = GarmentSpec::coarse(kind, s.spacing_scale);
                spec.fabric = s.fabrics[garment_index(kind)].clone();
                spec.wear_unfit = s.wear_unfit[garment_index(kind)];
                if kind == GarmentKind::Hakama {
                    spec.style = s.hakama_style;
                }
                Some(spec)
            } else {
                messages.push((
                    Level::Warning,
                    format!(
                        "no {} on this character: it lacks the bones (Mixamo names) it hangs from",
                        kind.name()
                    ),
                ));
                None
            }
        })
        .collect();
    // The character's meshes picked to be simulated as cloth (panel: "simulate as cloth").
    for name in &s.cloth_meshes {
        if rig.meshes.iter().any(|m| m.name == *name) && !s.hidden_meshes.contains(name) {
            use crate::garments::mesh::{MeshGarmentSpec, MeshSource, PinRule};
            c.garments.push(GarmentSpec::mesh(MeshGarmentSpec::new(
                MeshSource::Rig(name.clone()),
                PinRule::Top,
            )));
        }
    }
    // The meshes taken off (panel: "hide"), by their full names.
    c.hide = s
        .hidden_meshes
        .iter()
        .filter(|name| rig.meshes.iter().any(|m| m.name == **name))
        .cloned()
        .collect();
    c.sim.substeps = s.substeps;
    c.sim.integrator = s.integrator;
    c.sim.model = s.model;
    c.sim.self_collision = s.self_collision;
    apply_skin_contact(s, &mut c.sim);
    apply_world(s, &mut c.sim);
    c
}

/// The skin-contact setting as the scene's substeps with the stage: every substep, or none.
fn apply_skin_contact(s: &ViewerSettings, sim: &mut SimParams) {
    sim.skin_contact = if s.skin_contact { s.substeps } else { 0 };
}

fn build_scene(
    rig: &Rig,
    s: &ViewerSettings,
    messages: &mut Vec<(Level, String)>,
) -> Result<Scene, String> {
    let config = scene_config(rig, s, messages);
    let mut scene = Scene::new(rig.clone(), config).map_err(|e| e.to_string())?;
    // Garments this body cannot wear in its clips: left off, and the panel says why.
    for (_, why) in &scene.refused {
        messages.push((Level::Warning, format!("left off: {why}")));
    }
    for (_, why) in &scene.worn_unfit {
        messages.push((
            Level::Warning,
            format!("worn though it does not fit: {why}"),
        ));
    }
    if s.method == SkinMethod::Cor {
        // Computes (or reads the cached) centres of rotation.
        scene.set_method(SkinMethod::Cor);
    }
    Ok(scene)
}
