//! The one table of allowed values: every number a user can set — in a scene file, with a CLI
//! flag, from the viewer's panel, `drape view --action` or its settings file — is checked here
//! against the same [`Limit`], and a value outside it is refused with a message naming the
//! key, the value and the range. Nothing is clamped silently.
//!
//! - [`Limit`] constants: one per parameter, with its unit and (for the viewer) the slider's
//!   narrower range.
//! - [`SCENE_KEYS`] and [`GARMENT_KEYS`]: the keys of a scene file (`drape bake scene.toml`),
//!   each with what it accepts; [`check_scene_table`] walks a parsed file against them. Adding a
//!   key to the scene file is one line here (and its field in [`crate::scene::SceneFile`]).
//! - [`Cost`]: the estimated wall time of a simulation from a measured throughput, so that an
//!   absurd one is refused before it starts.

use std::fmt::Write as _;

/// The allowed range of one parameter (inclusive).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    /// What it is, for messages ("particle spacing").
    pub what: &'static str,
    pub min: f64,
    pub max: f64,
    /// Unit for messages ("m", "N/m"; empty when dimensionless).
    pub unit: &'static str,
    /// The viewer's slider range, within `min … max` (the full range when `None`): values a
    /// slider does not need but a file or an action may set.
    pub slider: Option<(f64, f64)>,
}

impl Limit {
    const fn new(what: &'static str, min: f64, max: f64, unit: &'static str) -> Limit {
        Limit {
            what,
            min,
            max,
            unit,
            slider: None,
        }
    }

    const fn slider(mut self, lo: f64, hi: f64) -> Limit {
        self.slider = Some((lo, hi));
        self
    }

    /// `0.005 … 0.1 m`.
    pub fn range_text(&self) -> String {
        let mut s = format!("{} … {}", num(self.min), num(self.max));
        if !self.unit.is_empty() {
            let _ = write!(s, " {}", self.unit);
        }
        s
    }

    pub fn contains(&self, v: f64) -> bool {
        v.is_finite() && v >= self.min && v <= self.max
    }

    /// `v` when it is finite and within the range, else the message
    /// `KEY = V is out of range: allowed MIN … MAX UNIT (WHAT)`.
    pub fn check(&self, key: &str, v: f64) -> Result<f64, String> {
        if self.contains(v) {
            Ok(v)
        } else if !v.is_finite() {
            Err(format!(
                "{key} = {v} is not a finite number: allowed {} ({})",
                self.range_text(),
                self.what
            ))
        } else {
            Err(format!(
                "{key} = {} is out of range: allowed {} ({})",
                num(v),
                self.range_text(),
                self.what
            ))
        }
    }

    /// [`Limit::check`] for an `f32`, compared in `f32` (so that `0.005` written in a file is
    /// within `0.005 …`, which its `f64` widening would not be).
    pub fn check_f32(&self, key: &str, v: f32) -> Result<f32, String> {
        let (lo, hi) = self.f32();
        if v.is_finite() && v >= lo && v <= hi {
            Ok(v)
        } else {
            self.check(key, v as f64).map(|_| v)
        }
    }

    /// [`Limit::check`] for a whole number.
    pub fn check_u32(&self, key: &str, v: u32) -> Result<u32, String> {
        self.check(key, v as f64).map(|v| v as u32)
    }

    /// `(min, max)` as `f32`.
    pub fn f32(&self) -> (f32, f32) {
        (self.min as f32, self.max as f32)
    }

    /// The viewer's slider range as `f32` (the full range when it has no narrower one).
    pub fn slider_f32(&self) -> (f32, f32) {
        let (lo, hi) = self.slider.unwrap_or((self.min, self.max));
        (lo as f32, hi as f32)
    }
}

/// A number as a person writes it: `0.005`, `10000000`, `1e-4`, never `0.004999999888241291`.
fn num(v: f64) -> String {
    let f = v as f32;
    if f as f64 == v || (f as f64 - v).abs() <= v.abs() * 1e-7 {
        format!("{f}")
    } else {
        format!("{v}")
    }
}

// Garment geometry (GarmentSpec). Sizes are for a body 1 to 2 m tall; on a bigger or smaller
// one they scale with it.
pub const SPACING: Limit = Limit::new("garment particle spacing", 0.005, 0.1, "m");
/// A mesh garment's `max_distance`: how far a partly pinned vertex may leave its skinned place
/// (scaled by 1 − pin weight).
pub const MAX_DISTANCE: Limit = Limit::new("pin max distance", 0.0, 2.0, "m");
/// A mesh garment's `pin = { within = … }`: vertices this close to the skin at rest are pinned.
pub const PIN_WITHIN: Limit = Limit::new("pin distance to the skin", 0.0, 0.5, "m");
pub const CLEARANCE: Limit = Limit::new("gap between garment and body", 0.001, 0.05, "m");
pub const LENGTH: Limit = Limit::new("length scale of the hanging parts", 0.3, 1.5, "");
/// The viewer's and `render`/`check`'s spacing: × each garment's default spacing.
pub const SPACING_SCALE: Limit =
    Limit::new("garment spacing × each garment's default", 0.75, 3.0, "");

// Fabric (GarmentParams; PHYSICS.md §1). The engine softens stiffness a substep cannot carry,
// so the stiffness range is wide; the sliders keep to what a fabric needs.
pub const K_STRUCTURAL: Limit =
    Limit::new("structural spring stiffness", 0.0, 1e7, "N/m").slider(1.0, 500.0);
pub const K_SHEAR: Limit = Limit::new("shear spring stiffness", 0.0, 1e7, "N/m").slider(1.0, 500.0);
pub const K_BEND: Limit = Limit::new("bend spring stiffness", 0.0, 1e7, "N/m").slider(0.0, 100.0);
pub const AREA_DENSITY: Limit =
    Limit::new("fabric areal density", 0.01, 10.0, "kg/m²").slider(0.01, 2.0);
pub const DAMPING: Limit = Limit::new("spring damping ratio ζ", 0.0, 1.0, "");
pub const THICKNESS: Limit = Limit::new("fabric thickness", 1e-4, 0.05, "m").slider(1e-4, 0.02);
pub const FRICTION: Limit = Limit::new("friction coefficient μ", 0.0, 2.0, "");

// The world and the clock.
pub const SUBSTEPS: Limit =
    Limit::new("cloth substeps per frame", 1.0, 1000.0, "").slider(1.0, 64.0);
/// `drape check --trials`: runs of each clip, the cloth's start nudged in all but the first.
pub const CHECK_TRIALS: Limit = Limit::new("runs of each clip", 1.0, 16.0, "");

pub const SKIN_CONTACT: Limit = Limit::new(
    "substeps per frame with cloth-against-skin contact (0: off)",
    0.0,
    1000.0,
    "",
)
.slider(0.0, 16.0);
pub const SETTLE: Limit = Limit::new(
    "seconds of bind pose while the garments settle",
    0.0,
    10.0,
    "s",
);
pub const BLEND: Limit = Limit::new(
    "seconds of blend into the clip's first frame",
    0.0,
    10.0,
    "s",
);
/// Frames per second of a simulation (scene files, `bake`).
pub const SIM_FPS: Limit = Limit::new("simulation frames per second", 10.0, 240.0, "");
/// Seconds of a bake.
pub const BAKE_SECONDS: Limit = Limit::new("seconds to bake", 0.001, 600.0, "s");

// The viewer.
pub const SPEED: Limit = Limit::new("playback speed × real time", 0.05, 2.0, "");
pub const CROSSFADE: Limit = Limit::new("crossfade time", 0.0, 2.0, "s");
pub const WIND_SPEED: Limit = Limit::new("mean wind speed", 0.0, 30.0, "m/s");
pub const WIND_GUSTS: Limit = Limit::new("gust amplitude, fraction of the mean", 0.0, 2.0, "");
pub const AZIMUTH: Limit = Limit::new("azimuth", -180.0, 180.0, "°");
pub const WETNESS: Limit = Limit::new("water held, fraction of saturation", 0.0, 1.0, "");
pub const ADHESION_SCALE: Limit = Limit::new("adhesion scale", 0.0, 10.0, "");
pub const LIGHT_ELEVATION: Limit = Limit::new("key light elevation", 5.0, 90.0, "°");

// Command-line flags.
/// `render --fps`: the sampling step of rendered frames.
pub const RENDER_FPS: Limit = Limit::new("rendered frames per second", 1.0, 240.0, "");
/// `render --size`, `--gif-width`: one side of an image.
pub const IMAGE_SIDE: Limit = Limit::new("image side", 16.0, 8192.0, "px");
/// `experiment --n`: particles per side.
pub const EXPERIMENT_N: Limit = Limit::new("particles per side", 6.0, 200.0, "");
/// `rig --tile-height`.
pub const TILE_HEIGHT: Limit = Limit::new("contact sheet tile height", 100.0, 2000.0, "px");
/// `rig --columns`.
pub const COLUMNS: Limit = Limit::new("contact sheet columns", 2.0, 16.0, "");
/// `bench --coarse`: garment spacing × the default.
pub const BENCH_COARSE: Limit = Limit::new("garment spacing × the default", 0.25, 10.0, "");
/// `scene --n`: particles per side of the cloth scenes.
pub const SCENE_N: Limit = Limit::new("particles per side", 2.0, 1000.0, "");

/// What a scene-file key accepts.
#[derive(Clone, Copy, Debug)]
pub enum Accepts {
    /// A number (an integer is taken as a number too) within the limit.
    Number(&'static Limit),
    /// A whole number within the limit.
    Whole(&'static Limit),
    Bool,
    /// A string the parser accepts (its error says what is allowed).
    Word(fn(&str) -> Result<(), String>),
    /// Any string (a path, a clip name).
    Text,
    /// An array of strings.
    TextList,
    /// A table of strings (`[bones]`; its keys are checked by the scene's config).
    TextTable,
    /// An array of tables, each checked against [`GARMENT_KEYS`].
    Garments,
    /// A mesh garment's source: a name (a mesh of the rig, or a `.glb`/`.gltf` path), or a table
    /// `{ file = "…", node = "…" }` (`node` optional).
    MeshSource,
    /// A mesh garment's pins: `"weights"`, `"top"`, or `{ within = D }` with D within
    /// [`PIN_WITHIN`].
    PinRule,
}

fn skinning(s: &str) -> Result<(), String> {
    s.parse::<crate::skin::SkinMethod>().map(|_| ())
}
fn cloth_model(s: &str) -> Result<(), String> {
    s.parse::<crate::cloth::ClothModelKind>().map(|_| ())
}
fn hakama_style(s: &str) -> Result<(), String> {
    s.parse::<crate::garments::HakamaStyle>().map(|_| ())
}

fn garment_kind(s: &str) -> Result<(), String> {
    s.parse::<crate::garments::GarmentKind>()
        .map(|_| ())
        .map_err(|e| e.to_string())
}
/// Root motion names of a scene file ([`crate::scene::parse_root_motion`]).
fn root_motion(s: &str) -> Result<(), String> {
    crate::scene::parse_root_motion(s).map(|_| ())
}

/// The top-level keys of a scene file (see [`crate::scene::SceneFile`]).
pub const SCENE_KEYS: &[(&str, Accepts)] = &[
    ("rig", Accepts::Text),
    ("clips", Accepts::TextList),
    ("clip", Accepts::Text),
    ("skinning", Accepts::Word(skinning)),
    ("substeps", Accepts::Whole(&SUBSTEPS)),
    ("self_collision", Accepts::Bool),
    ("skin_contact", Accepts::Whole(&SKIN_CONTACT)),
    ("face_contact", Accepts::Bool),
    ("model", Accepts::Word(cloth_model)),
    ("settle", Accepts::Number(&SETTLE)),
    ("blend", Accepts::Number(&BLEND)),
    ("fps", Accepts::Number(&SIM_FPS)),
    ("root_motion", Accepts::Word(root_motion)),
    ("garment", Accepts::Garments),
    ("bones", Accepts::TextTable),
    ("hide", Accepts::TextList),
];

/// The keys of one `[[garment]]` table (see [`crate::scene::GarmentEntry`]).
pub const GARMENT_KEYS: &[(&str, Accepts)] = &[
    ("kind", Accepts::Word(garment_kind)),
    ("mesh", Accepts::MeshSource),
    ("pin", Accepts::PinRule),
    ("max_distance", Accepts::Number(&MAX_DISTANCE)),
    ("spacing", Accepts::Number(&SPACING)),
    ("clearance", Accepts::Number(&CLEARANCE)),
    ("length", Accepts::Number(&LENGTH)),
    ("k_structural", Accepts::Number(&K_STRUCTURAL)),
    ("k_shear", Accepts::Number(&K_SHEAR)),
    ("k_bend", Accepts::Number(&K_BEND)),
    ("area_density", Accepts::Number(&AREA_DENSITY)),
    ("damping", Accepts::Number(&DAMPING)),
    ("thickness", Accepts::Number(&THICKNESS)),
    ("friction", Accepts::Number(&FRICTION)),
    ("style", Accepts::Word(hakama_style)),
    ("wear_unfit", Accepts::Bool),
];

/// Checks a parsed scene file against [`SCENE_KEYS`]: every key known, every value of the
/// right type and in range. Integers given for number keys are turned into floats (so that
/// `spacing = 1` reads as 1.0). Errors name the key as a path (`garment[1].k_structural`;
/// garments count from 0, in file order).
pub fn check_scene_table(table: &mut toml::Table) -> Result<(), String> {
    check_table(table, SCENE_KEYS, "")
}

fn check_table(
    table: &mut toml::Table,
    keys: &[(&str, Accepts)],
    prefix: &str,
) -> Result<(), String> {
    for (key, value) in table.iter_mut() {
        let path = format!("{prefix}{key}");
        let Some((_, accepts)) = keys.iter().find(|(k, _)| k == key) else {
            let names: Vec<&str> = keys.iter().map(|(k, _)| *k).collect();
            let hint = match closest(key, &names) {
                Some(n) => format!("did you mean '{n}'? "),
                None => String::new(),
            };
            return Err(format!(
                "unknown key '{path}': {hint}(known here: {})",
                names.join(", ")
            ));
        };
        check_value(&path, value, *accepts)?;
    }
    Ok(())
}

fn type_name(v: &toml::Value) -> &'static str {
    v.type_str()
}

fn check_value(path: &str, value: &mut toml::Value, accepts: Accepts) -> Result<(), String> {
    use toml::Value;
    let wrong = |want: &str, v: &Value| {
        format!(
            "{path} = {} is {} {}, expected {want}",
            short(v),
            article(type_name(v)),
            type_name(v)
        )
    };
    match accepts {
        Accepts::Number(limit) => {
            let v = match value {
                Value::Float(f) => *f,
                Value::Integer(i) => *i as f64,
                other => {
                    return Err(wrong(
                        &format!("a number within {}", limit.range_text()),
                        other,
                    ))
                }
            };
            limit.check(path, v)?;
            *value = Value::Float(v);
        }
        Accepts::Whole(limit) => match value {
            Value::Integer(i) => {
                limit.check(path, *i as f64)?;
            }
            other => {
                return Err(wrong(
                    &format!("a whole number within {}", limit.range_text()),
                    other,
                ))
            }
        },
        Accepts::Bool => {
            if !value.is_bool() {
                return Err(wrong("true or false", value));
            }
        }
        Accepts::Word(parse) => match value {
            Value::String(s) => parse(s).map_err(|e| format!("{path} = \"{s}\": {e}"))?,
            other => return Err(wrong("a string", other)),
        },
        Accepts::MeshSource => match value {
            Value::String(_) => {}
            Value::Table(t) => {
                for (k, v) in t.iter() {
                    match k.as_str() {
                        "file" | "node" if v.is_str() => {}
                        "file" | "node" => {
                            return Err(wrong("a string", v).replacen(
                                path,
                                &format!("{path}.{k}"),
                                1,
                            ))
                        }
                        o => {
                            return Err(format!(
                                "unknown key '{path}.{o}' (known here: file, node)"
                            ))
                        }
                    }
                }
                if !t.contains_key("file") {
                    return Err(format!("{path} = {{ … }} needs file = \"garment.glb\""));
                }
            }
            other => {
                return Err(wrong(
                    "a mesh name or { file = \"…\", node = \"…\" }",
                    other,
                ))
            }
        },
        Accepts::PinRule => match value {
            Value::String(s) if s == "weights" || s == "top" => {}
            Value::String(s) => {
                return Err(format!(
                    "{path} = \"{s}\": expected \"weights\", \"top\" or {{ within = 0.01 }}"
                ))
            }
            Value::Table(t) => {
                for (k, v) in t.iter_mut() {
                    if k != "within" {
                        return Err(format!("unknown key '{path}.{k}' (known here: within)"));
                    }
                    check_value(&format!("{path}.within"), v, Accepts::Number(&PIN_WITHIN))?;
                }
                if !t.contains_key("within") {
                    return Err(format!("{path} = {{ … }} needs within = 0.01 (m)"));
                }
            }
            other => return Err(wrong("\"weights\", \"top\" or { within = 0.01 }", other)),
        },
        Accepts::Text => {
            if !value.is_str() {
                return Err(wrong("a string", value));
            }
        }
        Accepts::TextList => match value {
            Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    if !v.is_str() {
                        return Err(wrong("a string", v).replacen(
                            path,
                            &format!("{path}[{i}]"),
                            1,
                        ));
                    }
                }
            }
            other => return Err(wrong("an array of strings", other)),
        },
        Accepts::TextTable => match value {
            Value::Table(t) => {
                for (k, v) in t.iter() {
                    if !v.is_str() {
                        return Err(wrong("a string", v).replacen(path, &format!("{path}.{k}"), 1));
                    }
                }
            }
            other => return Err(wrong("a table of strings", other)),
        },
        Accepts::Garments => match value {
            Value::Array(a) => {
                for (i, g) in a.iter_mut().enumerate() {
                    let here = format!("{path}[{i}]");
                    match g {
                        Value::Table(t) => {
                            if !t.contains_key("kind") && !t.contains_key("mesh") {
                                return Err(format!(
                                    "{here} has no kind (one of cape, hakama, sash, headband) \
                                     and no mesh (a mesh of the character, or a garment file)"
                                ));
                            }
                            check_table(t, GARMENT_KEYS, &format!("{here}."))?;
                        }
                        other => {
                            return Err(wrong("a [[garment]] table", other).replacen(path, &here, 1))
                        }
                    }
                }
            }
            other => return Err(wrong("[[garment]] tables", other)),
        },
    }
    Ok(())
}

fn article(type_name: &str) -> &'static str {
    if type_name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// A value as written in TOML, cut short.
fn short(v: &toml::Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

/// The known name closest to `key` when it is a plausible typo (edit distance ≤ 2, or ≤ a
/// third of the name's length).
pub fn closest<'a>(key: &str, names: &[&'a str]) -> Option<&'a str> {
    let best = names
        .iter()
        .map(|n| (edit_distance(key, n), *n))
        .min_by_key(|(d, _)| *d)?;
    (best.0 <= 2.max(key.chars().count() / 3)).then_some(best.1)
}

/// Levenshtein distance (insertions, deletions, substitutions), by the two-row dynamic program.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The estimated cost of a cloth simulation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// Particle updates: substeps × particles × frames.
    pub particle_steps: f64,
}

impl Cost {
    /// Particle substeps per second of one run, **measured**: `drape bake` of the default scene
    /// (built-in ninja, four garments, 5,251 particles, 16 substeps, 120 frames with the
    /// start-up: 10.1 M particle substeps) took 4.04 s of CPU time, whole command included —
    /// 2.5 M/s — in the test build (drape at opt-level 2) on the project's 2-core machine. Set
    /// 20 % lower for heavier clips (more contacts). Cheaper settings run faster; the estimate
    /// is for a warning and a refusal, not a promise.
    pub const PARTICLE_STEPS_PER_SECOND: f64 = 2.0e6;

    /// Above this many estimated seconds a run asks for `--force`.
    pub const REFUSE_ABOVE_S: f64 = 3600.0;

    pub fn new(substeps: u32, particles: usize, frames: u64) -> Cost {
        Cost {
            particle_steps: substeps as f64 * particles as f64 * frames as f64,
        }
    }

    /// Estimated wall seconds at [`Cost::PARTICLE_STEPS_PER_SECOND`].
    pub fn seconds(&self) -> f64 {
        self.particle_steps / Self::PARTICLE_STEPS_PER_SECOND
    }

    /// "about 3 min", "about 2.5 h".
    pub fn duration_text(&self) -> String {
        duration_text(self.seconds())
    }

    /// Refuses (unless `force`) a run estimated to take longer than
    /// [`Cost::REFUSE_ABOVE_S`]; `what` describes it ("16 substeps × 1,776 particles × 144
    /// frames").
    pub fn check(&self, what: &str, force: bool) -> Result<(), String> {
        if self.seconds() > Self::REFUSE_ABOVE_S && !force {
            return Err(format!(
                "this simulation ({what}) would take {} (estimated at {:.1e} particle \
                 substeps/s); pass --force to run it anyway, or lower the substeps, the \
                 particle count (a coarser spacing) or the duration",
                self.duration_text(),
                Self::PARTICLE_STEPS_PER_SECOND
            ));
        }
        Ok(())
    }
}

/// Seconds as a person reads them.
pub fn duration_text(s: f64) -> String {
    if !s.is_finite() {
        "forever".into()
    } else if s < 90.0 {
        format!("about {s:.0} s")
    } else if s < 5400.0 {
        format!("about {:.0} min", s / 60.0)
    } else if s < 2.0 * 86400.0 {
        format!("about {:.1} h", s / 3600.0)
    } else {
        format!("about {:.0} days", s / 86400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_name_value_and_range() {
        assert_eq!(SPACING.check("spacing", 0.02), Ok(0.02));
        let e = K_STRUCTURAL
            .check("garment[1].k_structural", -5.0)
            .unwrap_err();
        assert_eq!(
            e,
            "garment[1].k_structural = -5 is out of range: allowed 0 … 10000000 N/m \
             (structural spring stiffness)"
        );
        let e = SPACING.check_f32("spacing", f32::NAN).unwrap_err();
        assert!(e.contains("not a finite number"), "{e}");
        assert_eq!(THICKNESS.range_text(), "0.0001 … 0.05 m");
        assert_eq!(SPACING.range_text(), "0.005 … 0.1 m");
    }

    #[test]
    fn every_slider_lies_within_its_limit() {
        for l in [
            SPACING,
            CLEARANCE,
            LENGTH,
            SPACING_SCALE,
            K_STRUCTURAL,
            K_SHEAR,
            K_BEND,
            AREA_DENSITY,
            DAMPING,
            THICKNESS,
            FRICTION,
            SUBSTEPS,
            SKIN_CONTACT,
            SETTLE,
            BLEND,
            SIM_FPS,
            BAKE_SECONDS,
            SPEED,
            CROSSFADE,
            WIND_SPEED,
            WIND_GUSTS,
            AZIMUTH,
            WETNESS,
            ADHESION_SCALE,
            LIGHT_ELEVATION,
            RENDER_FPS,
            IMAGE_SIDE,
            EXPERIMENT_N,
            TILE_HEIGHT,
            COLUMNS,
            BENCH_COARSE,
            SCENE_N,
        ] {
            assert!(l.min < l.max, "{}", l.what);
            let (lo, hi) = l.slider.unwrap_or((l.min, l.max));
            assert!(l.min <= lo && lo < hi && hi <= l.max, "{}", l.what);
        }
    }

    #[test]
    fn typos_get_a_suggestion() {
        let names: Vec<&str> = GARMENT_KEYS.iter().map(|(k, _)| *k).collect();
        assert_eq!(closest("k_structual", &names), Some("k_structural"));
        assert_eq!(closest("spacng", &names), Some("spacing"));
        assert_eq!(closest("colour", &names), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn costs_read_as_durations() {
        assert_eq!(duration_text(30.0), "about 30 s");
        assert_eq!(duration_text(600.0), "about 10 min");
        assert_eq!(duration_text(7200.0), "about 2.0 h");
        let absurd = Cost::new(100_000, 1776, 144);
        assert!(absurd.check("x", false).unwrap_err().contains("--force"));
        assert!(absurd.check("x", true).is_ok());
        assert!(Cost::new(16, 1776, 144).check("x", false).is_ok());
    }
}
