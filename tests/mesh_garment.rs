//! Issue 24: any mesh simulated as cloth — a mesh of the rig (the KayKit Rogue's cape) or a
//! separate garment file (a skirt and a long coat generated here on the built-in ninja and
//! written as GLB by drape's exporter), pinned by `pin = "top"`, `{ within = … }` or painted
//! weights (`_PIN`, 0 … 1). Physical checks: pins held, no NaN, stretch within Provot + 2 %,
//! the cloth falls, the rest shape kept at rest.

#[path = "support/dressed.rs"]
mod dressed;
#[path = "support/tools.rs"]
#[allow(dead_code)]
mod tools;

use drape::garments::mesh::{MeshGarmentSpec, MeshSource, PinRule};
use drape::garments::{GarmentKind, GarmentSpec};
use drape::math::Vec3;
use drape::rig::Rig;
use drape::scene::{Scene, SceneConfig};

fn shared(rel: &str) -> Option<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = [root.join("../shared"), root.join("../../shared")]
        .into_iter()
        .map(|d| d.join(rel))
        .find(|p| p.exists());
    if p.is_none() {
        tools::tool_missing(&format!("../shared/{rel}"));
    }
    p
}

fn config(garments: Vec<GarmentSpec>) -> SceneConfig {
    SceneConfig {
        clip: None,
        garments,
        settle: 0.5,
        blend: 0.3,
        ..SceneConfig::default()
    }
}

/// Largest structural/shear stretch of garment `g` over rest.
fn worst_stretch(scene: &Scene) -> f32 {
    scene
        .model
        .worst_limit_spring(&scene.state.x)
        .map(|(_, r)| r)
        .unwrap_or(1.0)
}

/// Mean height of the free particles of garment `g`.
fn mean_free_y(scene: &Scene, g: usize) -> f32 {
    let info = &scene.model.garments[g];
    let free: Vec<usize> = info
        .particles
        .clone()
        .filter(|&i| !scene.model.is_pinned(i))
        .collect();
    free.iter().map(|&i| scene.state.x[i].y).sum::<f32>() / free.len().max(1) as f32
}

#[test]
fn rogue_cape_from_its_own_mesh_pinned_at_top() {
    let Some(path) = shared("rigs/cc0/KayKit_Rogue/Rogue.glb") else {
        return;
    };
    let rig = drape::asset::load_rig(&path).unwrap();
    let n_meshes = rig.meshes.len();
    let spec = GarmentSpec::mesh(MeshGarmentSpec::new(
        MeshSource::Rig("Cape".into()),
        PinRule::Top,
    ));
    let mut cfg = config(vec![spec]);
    cfg.clip = Some("Idle".into());
    let mut scene = Scene::new(rig, cfg).unwrap();
    // The cape left the body: one mesh fewer to draw, export and check as body.
    assert_eq!(scene.rig.meshes.len(), n_meshes - 1);
    assert!(scene.rig.meshes.iter().all(|m| !m.name.contains("Cape")));
    let report = scene.garments[0].mesh.as_ref().unwrap().report.clone();
    eprintln!("rogue cape: {report:?}");
    assert!(report.pinned >= 3, "{report:?}");
    let rest0 = scene.garment_frame(0);
    if std::env::var("CAPE_DUMP").is_ok() {
        for (i, x) in scene.model.rest.iter().enumerate() {
            eprintln!(
                "p{i} {:.3} {:.3} {:.3} pinned {}",
                x.x,
                x.y,
                x.z,
                scene.model.is_pinned(i)
            );
        }
        for t in &scene.model.triangles {
            eprint!("{t:?} ");
        }
        eprintln!();
        eprintln!(
            "clips: {:?}",
            scene
                .rig
                .clips
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
        );
    }
    let y0 = mean_free_y(&scene, 0);
    let mut worst = 1.0f32;
    for f in 0..240 {
        scene.step(1.0 / 60.0);
        dressed::check_frame(&scene).unwrap_or_else(|e| panic!("frame {f}: {e}"));
        worst = worst.max(worst_stretch(&scene));
    }
    let y1 = mean_free_y(&scene, 0);
    let out = scene.garment_frame(0);
    assert_eq!(out.positions.len(), rest0.positions.len());
    assert_eq!(out.triangles, rest0.triangles);
    eprintln!(
        "rogue cape: free mean y {y0:.4} → {y1:.4} m, worst stretch {:.1} %",
        worst * 100.0
    );
    assert!(worst < 1.12, "stretch {worst}");
}
