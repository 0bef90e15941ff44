//! Fig 6: the built-in ninja in its cape, dry and soaked, in the wind (through
//! [`crate::scene`]).

use serde::Serialize;

use crate::body::union_sdf;
use crate::cli::CliError;
use crate::cloth::params::{ClothModelKind, Wind};
use crate::cloth::wet::{self, AdhesionMode, Fabric, Region};
use crate::garments::{GarmentKind, GarmentSpec};
use crate::math::Vec3;
use crate::scene::{Scene, SceneConfig};

/// Fig 6's wind, m/s: from the front (the ninja faces +z), blowing the cape out behind it.
pub const FIG6_WIND: Vec3 = Vec3::new(0.0, 0.0, -8.0);

#[derive(Clone, Debug, Serialize)]
pub struct Fig6Run {
    /// Share of the free particles within thickness + 2 mm of the body proxies, before the
    /// wind and at the end.
    pub contact_before: f32,
    pub contact_after: f32,
    /// RMS distance of the free particles from their pre-wind positions when the wind stops, m.
    pub rms_wind: f32,
    /// The same at the end (`after` seconds after the wind), m.
    pub rms_return: f32,
    pub mass_g: f64,
    pub finite: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Fig6 {
    /// Particles of the cape.
    pub particles: usize,
    /// Wind velocity (mean; gusts ±50 %), m/s. The ninja faces +z.
    pub wind: [f32; 3],
    pub dry: Fig6Run,
    pub wet: Fig6Run,
}

/// Fig 6 on the built-in ninja (PHYSICS.md §5 table): the ninja stands in its bind pose
/// wearing the cape (particle spacing `spacing_factor` × the default), settles for `settle`
/// seconds, a wind of `wind_v` ([`FIG6_WIND`]) blows for `wind` seconds, then `after` seconds
/// without. Dry versus saturated cotton (the paper's scale 3). The wind blows the dry cape
/// out behind the ninja and, when it stops, the cape falls back to its pre-wind shape; the
/// wet cape's bridges hold it on the back through the wind and after. Returns the two scenes
/// for pictures.
pub fn fig6(
    spacing_factor: f32,
    settle: f32,
    wind: f32,
    after: f32,
    wind_v: Vec3,
    model: ClothModelKind,
) -> Result<(Fig6, Scene, Scene), CliError> {
    let rig =
        crate::scene::load_rig_named("ninja", None).map_err(|e| CliError::new(e.to_string()))?;
    let run = |wet_on: bool| -> Result<(Fig6Run, Scene), CliError> {
        let mut cfg = SceneConfig {
            clip: None,
            garments: vec![GarmentSpec::coarse(GarmentKind::Cape, spacing_factor)],
            // The bind pose for the whole experiment: the clip never starts.
            settle: 1e6,
            blend: 0.0,
            ..SceneConfig::default()
        };
        cfg.sim.wet.adhesion = AdhesionMode::PerVertex;
        cfg.sim.wet.scale = 3.0;
        cfg.sim.model = model;
        let mut sc = Scene::new(rig.clone(), cfg).map_err(|e| CliError::new(e.to_string()))?;
        if wet_on {
            wet::saturate(&sc.model, &mut sc.state, &Fabric::COTTON, Region::All);
        }
        let dt = 1.0 / 60.0;
        let frames = |sc: &mut Scene, secs: f32| {
            for _ in 0..(secs / dt).round() as u32 {
                crate::cli::progress::frames_done(1);
                sc.step(dt);
            }
        };
        let free: Vec<usize> = (0..sc.model.len())
            .filter(|&i| !sc.model.is_pinned(i))
            .collect();
        let contact = |sc: &Scene| {
            free.iter()
                .filter(|&&i| {
                    let d = union_sdf(sc.state.x[i].into(), &sc.proxy_frame, &sc.proxies.capsules);
                    d <= sc.model.thickness[i] + 0.002
                })
                .count() as f32
                / free.len().max(1) as f32
        };
        frames(&mut sc, settle);
        let before = contact(&sc);
        let x0 = sc.state.x.clone();
        let rms = |sc: &Scene| {
            (free
                .iter()
                .map(|&i| sc.state.x[i].distance_squared(x0[i]))
                .sum::<f32>()
                / free.len().max(1) as f32)
                .sqrt()
        };
        // The scene's air (still-air drag, the quadratic law) holds before, during and after
        // the wind.
        let air = Wind {
            velocity: Vec3::ZERO,
            ..sc.config.sim.wind.clone()
        };
        sc.config.sim.wind = Wind {
            velocity: wind_v,
            ..air.clone()
        };
        frames(&mut sc, wind);
        let rms_wind = rms(&sc);
        sc.config.sim.wind = air;
        frames(&mut sc, after);
        let out = Fig6Run {
            contact_before: before,
            contact_after: contact(&sc),
            rms_wind,
            rms_return: rms(&sc),
            mass_g: wet::total_mass(&sc.state) * 1e3,
            finite: sc.state.is_finite(),
        };
        Ok((out, sc))
    };
    let (dry, d) = run(false)?;
    let (wet_run, w) = run(true)?;
    Ok((
        Fig6 {
            particles: d.model.len(),
            wind: wind_v.to_array(),
            dry,
            wet: wet_run,
        },
        d,
        w,
    ))
}
