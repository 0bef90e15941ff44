//! The dressed character, end to end: every built-in clip with the default garments (coarse
//! resolution, to keep the dev-profile run time reasonable), checked at the end of every frame.

use drape::body::union_sdf;
use drape::garments::{GarmentKind, GarmentSpec};
use drape::scene::{Scene, SceneConfig};
use drape::skin::SkinMethod;

/// Coarse garments (2.5× the default spacing) and a short start-up.
fn coarse_config(clip: Option<String>) -> SceneConfig {
    SceneConfig {
        clip,
        garments: GarmentKind::ALL
            .iter()
            .map(|&k| GarmentSpec::coarse(k, 2.5))
            .collect(),
        settle: 0.2,
        blend: 0.3,
        ..SceneConfig::default()
    }
}

/// The end-of-frame checks; returns a description of the first violation.
fn check_frame(scene: &Scene) -> Result<(), String> {
    let st = &scene.state;
    let m = &scene.model;
    if !st.is_finite() {
        return Err("non-finite particle".into());
    }
    // Pins on their skinned targets.
    for (k, &i) in m.pins.iter().enumerate() {
        let d = st.x[i as usize].distance(scene.pin_targets[k].into());
        if d > 1e-4 {
            return Err(format!(
                "pin {k} (particle {i}) is {:.3} mm off its target",
                d * 1e3
            ));
        }
    }
    // No particle inside a body proxy by more than 1 mm.
    for i in 0..m.len() {
        if m.is_pinned(i) {
            continue;
        }
        let d = union_sdf(st.x[i].into(), &scene.proxy_frame, &scene.proxies.capsules);
        if d < -1e-3 {
            return Err(format!(
                "particle {i} of {} is {:.2} mm inside the body",
                m.garments[m.garment_of[i] as usize].name,
                -d * 1e3
            ));
        }
    }
    // Provot limit + 2 % on structural and shear springs.
    let tau = scene.config.sim.provot_limit.unwrap_or(0.1);
    let l = &m.limits;
    for e in 0..l.len() {
        let (a, b) = (l.a[e] as usize, l.b[e] as usize);
        if m.is_pinned(a) && m.is_pinned(b) {
            continue;
        }
        let len = st.x[a].distance(st.x[b]);
        if len > l.rest[e] * (1.0 + tau + 0.02) {
            return Err(format!(
                "spring {a}-{b} of {} stretched to {:.1} % of rest",
                m.garments[m.garment_of[a] as usize].name,
                100.0 * len / l.rest[e]
            ));
        }
    }
    // Particles of different garments at least half a thickness apart.
    for i in 0..m.len() {
        for j in i + 1..m.len() {
            if m.garment_of[i] == m.garment_of[j] {
                continue;
            }
            let min = 0.5 * m.thickness[i].max(m.thickness[j]);
            let d = st.x[i].distance(st.x[j]);
            if d < min {
                return Err(format!(
                    "particles {i} ({}) and {j} ({}) are {:.2} mm apart",
                    m.garments[m.garment_of[i] as usize].name,
                    m.garments[m.garment_of[j] as usize].name,
                    d * 1e3
                ));
            }
        }
    }
    Ok(())
}

fn run_frames(scene: &mut Scene, frames: usize, label: &str) {
    for f in 0..frames {
        scene.step(1.0 / 60.0);
        if let Err(e) = check_frame(scene) {
            panic!(
                "{label}: frame {f} (t = {:.3} s, {:?}): {e}",
                scene.time, scene.phase
            );
        }
    }
}

#[test]
fn every_builtin_clip_keeps_the_garments_sane() {
    let ninja = drape::ninja::build().unwrap();
    for c in 0..ninja.rig.clips.len() {
        let name = ninja.rig.clips[c].name.clone();
        let mut scene = Scene::new(ninja.rig.clone(), coarse_config(Some(name.clone()))).unwrap();
        // Start-up (30 frames) plus the first 0.75 s of the clip.
        run_frames(&mut scene, 30 + 45, &name);
        println!("{name}: {} particles, ok", scene.particle_count());
    }
}
