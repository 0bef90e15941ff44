//! Cloth against the skinned body's triangles (issue 19 point 1, `cloth::stages::skin`): cloth
//! ends outside the skin as drawn where the skin stands outside the proxies, on a synthetic body
//! and on the corpus's bulky soldier; the stage is deterministic and switchable.

use std::path::Path;

use drape::anim::player::LoopMode;
use drape::asset::{load_rig_with, LoadOptions};
use drape::check::winding::SkinQuery;
use drape::cloth::build::grid;
use drape::cloth::skin::SkinSurface;
use drape::cloth::{
    step_frame, ClothModel, ClothModelKind, ClothState, ClothWorkspace, Collider, GarmentParams,
    GridSpec, Shape, SimParams,
};
use drape::garments::{GarmentKind, GarmentSpec};
use drape::math::Vec3;
use drape::scene::{Scene, SceneConfig};

/// A closed, outward-oriented box (12 triangles, corners duplicated per face as a UV-seamed
/// export has them) of half extent `h` around `c`.
fn seamed_box(c: Vec3, h: Vec3) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let corner = |i: u32| {
        c + Vec3::new(
            if i & 1 == 0 { -h.x } else { h.x },
            if i & 2 == 0 { -h.y } else { h.y },
            if i & 4 == 0 { -h.z } else { h.z },
        )
    };
    let faces = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    let mut pos = Vec::new();
    let mut tris = Vec::new();
    for f in faces {
        let base = pos.len() as u32;
        pos.extend(f.iter().map(|&i| corner(i)));
        tris.push([base, base + 1, base + 2]);
        tris.push([base, base + 2, base + 3]);
    }
    (pos, tris)
}

/// A square of cloth dropped from 2 cm onto the top of a box-shaped "body" whose proxy (a plane)
/// lies 1.5 cm under the box's top face, as a proxy under a bulging thigh does; 1.5 s: how deep
/// inside the box the cloth ends, m, and its positions.
fn drop_on_box(skin_contact: u32) -> (f32, Vec<Vec3>) {
    let (c, h) = (Vec3::new(0.0, 0.2, 0.0), Vec3::new(0.3, 0.2, 0.3));
    let g = grid(
        "sheet",
        &GridSpec::square(21, 0.3, Vec3::new(0.0, 0.42, 0.0)),
        &GarmentParams::default(),
    )
    .unwrap();
    let model = ClothModel::new(vec![g]);
    let mut state = ClothState::new(&model);
    let mut ws = ClothWorkspace::new(&model);
    let (pos, tris) = seamed_box(c, h);
    ws.skin = SkinSurface::new(&pos, &tris);
    let colliders = [Collider::fixed(Shape::plane(
        Vec3::new(0.0, 0.385, 0.0),
        Vec3::Y,
    ))];
    let params = SimParams {
        skin_contact,
        ..SimParams::default()
    };
    for _ in 0..90 {
        ws.skin.set_frame([pos.as_slice()]);
        step_frame(&model, &mut state, &mut ws, &colliders, &params);
    }
    let deepest = state
        .x
        .iter()
        .map(|p| {
            let q = (Vec3::from(*p) - c).abs() - h;
            (-q.max_element()).max(0.0)
        })
        .fold(0.0f32, f32::max);
    (deepest, state.x.iter().map(|&p| Vec3::from(p)).collect())
}

#[test]
fn cloth_rests_on_the_skin_not_on_a_proxy_inside_it() {
    let (off, _) = drop_on_box(0);
    assert!(
        off > 0.01,
        "without the skin contact the cloth sinks to the proxy: {off}"
    );
    for k in [16, 4] {
        let (on, a) = drop_on_box(k);
        assert!(
            on < 1e-3,
            "skin contact on {k} substeps: {:.1} mm inside",
            on * 1e3
        );
        // Deterministic: the same run twice gives the same bits.
        let (_, b) = drop_on_box(k);
        assert_eq!(a, b);
    }
}

/// The skin contact's reach and step go with the body's size (`SimParams::body_scale`): cloth
/// 6 cm inside a big box, beyond the 4 cm a person-sized body's contact reaches, is left there
/// at scale 1 (for the proxies) and brought out at scale 2 (RobotExpressive's is 2.03), where
/// each pass also moves it twice as far.
#[test]
fn the_skin_contact_reaches_as_deep_as_the_body_is_big() {
    let (c, h) = (Vec3::new(0.0, 0.2, 0.0), Vec3::new(0.3, 0.2, 0.3));
    let (pos, tris) = seamed_box(c, h);
    let depth_after = |body_scale: f32, reach: f32, frames: usize| {
        let g = grid(
            "patch",
            &GridSpec::square(5, 0.1, Vec3::new(0.0, 0.34, 0.0)),
            &GarmentParams::default(),
        )
        .unwrap();
        let model = ClothModel::new(vec![g]);
        let mut state = ClothState::new(&model);
        let mut ws = ClothWorkspace::new(&model);
        ws.skin = SkinSurface::new(&pos, &tris);
        let params = SimParams {
            skin_contact: 16,
            gravity: Vec3::ZERO,
            body_scale,
            skin_contact_depth: reach,
            ..SimParams::default()
        };
        for _ in 0..frames {
            ws.skin.set_frame([pos.as_slice()]);
            step_frame(&model, &mut state, &mut ws, &[], &params);
        }
        state
            .x
            .iter()
            .map(|p| {
                let q = (Vec3::from(*p) - c).abs() - h;
                (-q.max_element()).max(0.0)
            })
            .fold(0.0f32, f32::max)
    };
    // A person-sized body: out of the 4 cm reach, the patch stays 6 cm deep.
    assert!(depth_after(1.0, 0.04, 10) > 0.055);
    // Twice the size: reached (8 cm), and out in one frame (16 passes of 4 mm).
    assert!(depth_after(2.0, 0.04, 1) < 1e-3);
    // The reach alone doubled, each pass still moves 2 mm: 3.2 cm in that frame, then out.
    let one = depth_after(1.0, 0.08, 1);
    assert!((0.02..0.035).contains(&one), "after a frame: {one}");
    assert!(depth_after(1.0, 0.08, 2) < 1e-3);
}

/// The corpus's bulky soldier, whose thighs and chest stand outside their proxies: with the
/// skin contact no frame of a walk has more than 0.5 % of the unpinned garment vertices more
/// than 3 mm inside the skinned triangles (generalized winding number, the check's measure),
/// nor any more than 1 cm inside; without it, frames have (the test's premise).
#[test]
fn soldier_garments_end_outside_the_skinned_triangles() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("rigs/corpus/soldier.glb");
    let rig = load_rig_with(&path, &LoadOptions::default()).unwrap();
    let clip = rig
        .clips
        .iter()
        .find(|c| c.name.contains("walk"))
        .map(|c| c.name.clone())
        .expect("the soldier walks");
    let run = |skin_contact: u32| -> (f32, f32) {
        let mut cfg = SceneConfig {
            clip: Some(clip.clone()),
            garments: GarmentKind::ALL
                .iter()
                .map(|&k| GarmentSpec::coarse(k, 2.0))
                .collect(),
            ..SceneConfig::default()
        };
        cfg.sim.skin_contact = skin_contact;
        let mut scene = Scene::new(rig.clone(), cfg).unwrap();
        scene.player.set_loop_mode(LoopMode::Once);
        let free: Vec<usize> = (0..scene.model.len())
            .filter(|&i| !scene.model.is_pinned(i))
            .collect();
        let startup = (scene.startup_seconds() * 60.0).ceil() as usize;
        let mut query = SkinQuery::default();
        let mut inside = Vec::new();
        let (mut worst_share, mut deepest) = (0.0f32, 0.0f32);
        for f in 0..startup + 40 {
            scene.step(1.0 / 60.0);
            if f < startup || f % 4 != 0 {
                continue;
            }
            drape::check::garment_inside(&scene, &mut query, &mut inside);
            let mut shallow = 0;
            for &i in &free {
                if inside[i].is_inside() {
                    shallow += (inside[i].depth > 0.003) as usize;
                    deepest = deepest.max(inside[i].depth);
                }
            }
            worst_share = worst_share.max(shallow as f32 / free.len() as f32);
        }
        (worst_share, deepest)
    };
    let (share_off, deep_off) = run(0);
    // Every substep, as docs/CHECK.md measures.
    let (share_on, deep_on) = run(16);
    println!(
        "soldier {clip}: worst share > 3 mm {:.2} % → {:.2} %, deepest {:.1} → {:.1} mm",
        share_off * 100.0,
        share_on * 100.0,
        deep_off * 1e3,
        deep_on * 1e3
    );
    assert!(
        share_off > 0.005 || deep_off > 0.01,
        "premise: proxies alone leave cloth inside"
    );
    assert!(share_on <= 0.005, "{:.2} % > 3 mm inside", share_on * 100.0);
    assert!(deep_on <= 0.01, "{:.1} mm inside", deep_on * 1e3);
}

/// Diagnostic (by hand): the worst spring of the ninja's roundhouse kick frame by frame, and
/// where it is, with and without the skin contact.
#[test]
#[ignore]
fn diagnose_worst_spring() {
    let rig = drape::ninja::build().unwrap().rig;
    let mut cfg = SceneConfig {
        clip: Some(std::env::var("CLIP").unwrap_or("roundhouse_kick".into())),
        garments: GarmentKind::ALL
            .iter()
            .map(|&k| GarmentSpec::coarse(k, 1.35))
            .collect(),
        ..SceneConfig::default()
    };
    // The scene's defaults unless SKIN (substeps) / STEP (m per pass) say otherwise.
    if let Ok(v) = std::env::var("SKIN") {
        cfg.sim.skin_contact = v.parse().unwrap();
    }
    if let Ok(v) = std::env::var("STEP") {
        cfg.sim.skin_contact_step = v.parse().unwrap();
    }
    let mut scene = Scene::new(rig, cfg).unwrap();
    scene.player.set_loop_mode(LoopMode::Once);
    let mut last = scene.workspace.skin_stats;
    let mut worst = 0.0f32;
    for f in 0..240 {
        scene.step(1.0 / 60.0);
        let Some((s, r)) = scene.model.worst_limit_spring(&scene.state.x) else {
            continue;
        };
        let st = scene.workspace.skin_stats;
        let (a, b) = (
            scene.model.limits.a[s] as usize,
            scene.model.limits.b[s] as usize,
        );
        println!(
            "frame {f} worst {r:.3} ({a}-{b}) inside {} near {} folds {}",
            st.inside - last.inside,
            st.near - last.near,
            st.folds - last.folds
        );
        last = st;
        worst = worst.max(r);
        if r > 1.2 {
            for i in [a, b] {
                let x = scene.state.x[i];
                println!(
                    "  {i}: x {x} v {} hit {:?}",
                    scene.state.v[i],
                    scene.workspace.skin.closest(x, 0.1)
                );
            }
            break;
        }
    }
    println!("worst {worst:.3} stats {:?}", scene.workspace.skin_stats);
}

/// An open sheet (KayKit's capes: `drape::body::sheets`) has no inside, and cloth meets it from
/// either side (`ClothWorkspace::sheets`): a square of cloth dropped on a flat sheet 2 m above the
/// floor rests on it, and one lifted into it from below (gravity upwards) stays under it. With
/// the sheet not met, both pass through it.
#[test]
fn cloth_meets_an_open_sheet_from_either_side() {
    let run = |meet: bool, up: bool| -> (f32, f32) {
        let y = 2.0;
        let start = if up { y - 0.05 } else { y + 0.05 };
        let g = grid(
            "sheet",
            &GridSpec::square(11, 0.3, Vec3::new(0.0, start, 0.0)),
            &GarmentParams::default(),
        )
        .unwrap();
        let model = ClothModel::new(vec![g]);
        let mut state = ClothState::new(&model);
        let mut ws = ClothWorkspace::new(&model);
        // A 1 m square sheet, two triangles, facing up.
        let pos = [
            Vec3::new(-0.5, y, -0.5),
            Vec3::new(0.5, y, -0.5),
            Vec3::new(0.5, y, 0.5),
            Vec3::new(-0.5, y, 0.5),
        ];
        let tris = [[0, 2, 1], [0, 3, 2]];
        if meet {
            ws.sheets = SkinSurface::new(&pos, &tris);
        }
        let params = SimParams {
            skin_contact: 16,
            gravity: if up { Vec3::Y * 9.8 } else { Vec3::Y * -9.8 },
            ..SimParams::default()
        };
        for _ in 0..60 {
            ws.sheets.set_frame([pos.as_slice()]);
            step_frame(&model, &mut state, &mut ws, &[], &params);
        }
        let ys = state.x.iter().map(|p| p.y);
        (
            ys.clone().fold(f32::INFINITY, f32::min),
            ys.fold(f32::NEG_INFINITY, f32::max),
        )
    };
    let (lo, _) = run(true, false);
    assert!(
        lo > 2.0,
        "dropped on the sheet: the lowest particle at {lo:.3} m"
    );
    let (_, hi) = run(true, true);
    assert!(
        hi < 2.0,
        "lifted into the sheet: the highest particle at {hi:.3} m"
    );
    let (lo, _) = run(false, false);
    assert!(lo < 1.5, "not met, the cloth falls through: {lo:.3} m");
}

/// How deep inside the box (centre `c`, half extent `h`) the deepest of `x` lies, m.
fn deepest_in_box(x: &[drape::math::Vec3A], c: Vec3, h: Vec3) -> f32 {
    x.iter()
        .map(|p| {
            let q = (Vec3::from(*p) - c).abs() - h;
            (-q.max_element()).max(0.0)
        })
        .fold(0.0f32, f32::max)
}

/// The deformation limit does not pull cloth back into the skin the skin contact pushed it out
/// of, in either cloth model. A strip 30 cm long pinned at both ends lies across the top of a
/// box 10 cm wide (the skin; no proxies) that rises 10 cm into it, so the strip must stretch
/// 28 % to go over it, past Provot's 10 %. The body wins: the strip ends on the box's top,
/// stretched (133 %), not cutting through the box as a chord would (without the hold 10.6 mm
/// inside it with the mass-spring model, 13.3 mm with XPBD). (Before, the limit's passes after
/// the skin stage undid each 2 mm push, and cloth stretched round a body rested centimetres
/// inside it: the KayKit Rogue's hakama 10.7 mm inside its back in `Spellcast_Raise`.)
#[test]
fn the_strain_limit_does_not_pull_cloth_into_the_skin() {
    for model_kind in ClothModelKind::ALL {
        let mut spec = GridSpec::square(31, 0.3, Vec3::new(0.0, 1.0, 0.0));
        spec.ny = 3;
        spec.height = 0.04;
        spec.origin = Vec3::new(-0.15, 1.0, -0.02);
        spec.pinned = (0..3).flat_map(|r| [(0, r), (30, r)]).collect();
        let g = grid("strip", &spec, &GarmentParams::default()).unwrap();
        let model = ClothModel::new(vec![g]);
        let mut state = ClothState::new(&model);
        let mut ws = ClothWorkspace::new(&model);
        let h = Vec3::new(0.05, 0.2, 0.1);
        let params = SimParams {
            skin_contact: 16,
            contact_rounds: 3,
            model: model_kind,
            ..SimParams::default()
        };
        // The box's top from 1 cm under the strip to 10 cm over it in 0.5 s, then held 0.5 s.
        let centre = |f: usize| Vec3::new(0.0, 0.99 - h.y + 0.11 * (f as f32 / 30.0).min(1.0), 0.0);
        let (pos0, tris) = seamed_box(centre(0), h);
        ws.skin = SkinSurface::new(&pos0, &tris);
        for f in 0..60 {
            let (pos, _) = seamed_box(centre(f + 1), h);
            ws.skin.set_frame([pos.as_slice()]);
            step_frame(&model, &mut state, &mut ws, &[], &params);
        }
        let deepest = deepest_in_box(&state.x, centre(60), h);
        assert!(
            deepest < 1e-3,
            "{model_kind:?}: the strip ends {:.1} mm inside the box",
            deepest * 1e3
        );
        let top = state
            .x
            .iter()
            .map(|p| p.y)
            .fold(f32::NEG_INFINITY, f32::max);
        assert!(
            top > 1.095,
            "{model_kind:?}: the strip went over the box: its top at {top:.3} m"
        );
    }
}
