//! What the dressed-character tests share (tests/scene.rs, tests/khronos.rs, tests/body.rs): the
//! coarse test configuration, issue 5's end-of-frame checks, and the Khronos sample rigs.

#![allow(dead_code)]

use drape::body::union_sdf;
use drape::garments::{GarmentKind, GarmentSpec};
use drape::rig::Rig;
use drape::scene::{Scene, SceneConfig};

/// Coarse garments (3× the default spacing, to keep the dev-profile run time reasonable) and a
/// short start-up.
pub fn coarse_config(clip: Option<String>, kinds: &[GarmentKind]) -> SceneConfig {
    SceneConfig {
        clip,
        garments: kinds.iter().map(|&k| GarmentSpec::coarse(k, 3.0)).collect(),
        settle: 0.2,
        blend: 0.3,
        ..SceneConfig::default()
    }
}

/// Issue 5's end-of-frame checks; returns a description of the first violation.
pub fn check_frame(scene: &Scene) -> Result<(), String> {
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
    if let Some((e, r)) = m.worst_limit_spring(&st.x) {
        if r > 1.0 + tau + 0.02 {
            let (a, b) = (m.limits.a[e], m.limits.b[e]);
            return Err(format!(
                "spring {a}-{b} of {} stretched to {:.1} % of rest",
                m.garments[m.garment_of[a as usize] as usize].name,
                100.0 * r
            ));
        }
    }
    // Particles of different garments at least half a thickness apart. A uniform grid of
    // cells as wide as the largest such distance: every pair closer than it lies in the same
    // or neighbouring cells (the brute-force pair loop took most of a default-resolution run).
    let cell = m
        .thickness
        .iter()
        .fold(0.0f32, |a, &t| a.max(0.5 * t))
        .max(1e-6);
    let key = |p: drape::math::Vec3A| {
        let q = (p / cell).floor();
        (q.x as i64, q.y as i64, q.z as i64)
    };
    let mut grid: std::collections::HashMap<(i64, i64, i64), Vec<u32>> =
        std::collections::HashMap::new();
    for i in 0..m.len() {
        grid.entry(key(st.x[i])).or_default().push(i as u32);
    }
    for i in 0..m.len() {
        let (cx, cy, cz) = key(st.x[i]);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let Some(list) = grid.get(&(cx + dx, cy + dy, cz + dz)) else {
                        continue;
                    };
                    for &j in list {
                        let j = j as usize;
                        if j <= i || m.garment_of[i] == m.garment_of[j] {
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
            }
        }
    }
    Ok(())
}

/// A Khronos sample rig from ../shared/rigs (`khronos/NAME/NAME.glb`). When the folder is not
/// there the test says SKIPPED and gets `None` — a failure instead under `DRAPE_REQUIRE_ALL=1`,
/// which CI sets (CI has ../shared).
pub fn khronos_rig(name: &str) -> Option<Rig> {
    let rel = format!("khronos/{name}/{name}.glb");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = [root.join("../shared/rigs"), root.join("../../shared/rigs")]
        .into_iter()
        .map(|d| d.join(&rel))
        .find(|p| p.exists());
    match found {
        Some(p) => {
            Some(drape::asset::load_rig(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        }
        None => {
            super::tools::tool_missing(&format!("../shared/rigs/{rel}"));
            None
        }
    }
}
