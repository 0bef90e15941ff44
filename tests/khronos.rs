//! The Khronos sample humanoids (CesiumMan, RiggedFigure from ../shared/rigs) dressed by the
//! garment library: waist pins bound to the trunk, and every garment through the whole walk
//! with the every-frame checks, LBS and DQS.

#[path = "support/dressed.rs"]
mod dressed;
#[path = "support/tools.rs"]
mod tools;

use drape::anim::Pose;
use drape::body::union_sdf;
use drape::garments::{BodyAtRest, GarmentKind, GarmentSpec, PinBinding};
use drape::math::Vec3;
use drape::scene::Scene;
use drape::skin::SkinMethod;
use dressed::{check_frame, coarse_config, khronos_rig as khronos};

/// Runs the start-up and the rig's first clip to its end with `kinds`, skinned with `method`,
/// checking every frame.
fn every_frame(name: &str, kinds: &[GarmentKind], method: SkinMethod) {
    let Some(rig) = khronos(name) else {
        return;
    };
    let clip = rig.clips[0].name.clone();
    let mut cfg = coarse_config(Some(clip), kinds);
    cfg.method = method;
    let mut scene = Scene::new(rig.clone(), cfg).unwrap();
    let frames = ((scene.startup_seconds() + rig.clips[0].duration()) * 60.0).ceil() as usize + 1;
    for f in 0..frames {
        scene.step(1.0 / 60.0);
        if let Err(e) = check_frame(&scene) {
            panic!(
                "{name} ({method}): frame {f} (t = {:.3} s, {:?}): {e}",
                scene.time, scene.phase
            );
        }
    }
    println!(
        "{name} ({method}): {frames} frames, {} particles, ok",
        scene.particle_count()
    );
}

/// The hakama's and the sash's waist pins are bound to the trunk only (hips and spine chain):
/// on CesiumMan the hands hang by the hips, and pins bound to the nearest skin took the
/// forearm's weights and swung with the arms. Every pin weight is on a trunk joint, and over
/// the whole walk every pin stays within 2 cm of where the hips' frame carries its rest
/// position (the spine's bend is all that may move it).
#[test]
fn waist_pins_follow_the_trunk_on_khronos_rigs() {
    for name in ["CesiumMan", "RiggedFigure"] {
        let Some(rig) = khronos(name) else {
            continue;
        };
        let proxies =
            drape::body::Proxies::fit(&rig, 0, &drape::body::ProxyOptions::default()).unwrap();
        let rest = proxies.rest_frame(&rig, 0);
        let body = BodyAtRest::new(&rig, 0, &rest, &proxies.capsules).unwrap();
        let limbs = body.limb_joints();
        let hips = body.node("Hips").unwrap();
        let mut pins = PinBinding::default();
        for kind in [GarmentKind::Hakama, GarmentKind::Sash] {
            let g = drape::garments::build_garment(&body, &GarmentSpec::coarse(kind, 3.0)).unwrap();
            for (j, w) in g.pins.joints.iter().zip(&g.pins.weights) {
                for k in 0..4 {
                    assert!(
                        w[k] == 0.0 || !limbs[j[k] as usize],
                        "{name} {kind:?}: a pin weighs {} on limb joint {}",
                        w[k],
                        rig.skeleton.names[rig.skins[0].joints[j[k] as usize] as usize]
                    );
                }
                assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            }
            pins.extend(&g.pins);
        }
        let rest_world = rig.skeleton.rest_world();
        let mut wfb = Vec::new();
        drape::body::world_from_bind(&rest_world, &rig.skins[0], &mut wfb);
        let mut at_rest = Vec::new();
        pins.targets(&wfb, &mut at_rest);
        let in_hips: Vec<Vec3> = at_rest
            .iter()
            .map(|&p| rest_world[hips].inverse().transform_point3(p))
            .collect();
        let clip = &rig.clips[0];
        let mut pose = Pose::rest(&rig.skeleton);
        let mut wfn = Vec::new();
        let mut targets = Vec::new();
        let mut worst = 0.0f32;
        for f in 0..=(clip.duration() * 60.0).ceil() as usize {
            clip.sample(f as f32 / 60.0, &mut pose);
            pose.world_from_node(&rig.skeleton, &mut wfn);
            drape::body::world_from_bind(&wfn, &rig.skins[0], &mut wfb);
            pins.targets(&wfb, &mut targets);
            for (t, r) in targets.iter().zip(&in_hips) {
                worst = worst.max(t.distance(wfn[hips].transform_point3(*r)));
            }
        }
        println!(
            "{name}: waist pins move at most {:.1} mm off the hips' frame",
            worst * 1e3
        );
        assert!(
            worst < 0.02,
            "{name}: a waist pin moved {:.1} mm off the hips' frame",
            worst * 1e3
        );
    }
}

#[test]
fn rigged_figure_in_all_four_garments_every_frame_lbs() {
    every_frame("RiggedFigure", &GarmentKind::ALL, SkinMethod::Lbs);
}

#[test]
fn rigged_figure_in_all_four_garments_every_frame_dqs() {
    every_frame("RiggedFigure", &GarmentKind::ALL, SkinMethod::Dqs);
}

/// CesiumMan's hands hang by its hips through its walk: the hakama flares at its first free row
/// and the sash's tails move in towards the spine (see `arms_hang_by_hips` and `sash_tails` in
/// src/garments.rs). Worst spring over the walk, LBS / DQS (stretch_report): hakama 110.2 /
/// 110.2 %, sash 102.1 / 101.9 %, cape 107.9 / 108.1 %, headband 105.1 / 105.1 % (limit 112 %);
/// before: hakama 122.6 %, sash 137.5 %.
#[test]
fn cesium_man_in_all_four_garments_every_frame_lbs() {
    every_frame("CesiumMan", &GarmentKind::ALL, SkinMethod::Lbs);
}

#[test]
fn cesium_man_in_all_four_garments_every_frame_dqs() {
    every_frame("CesiumMan", &GarmentKind::ALL, SkinMethod::Dqs);
}

/// Diagnostic (not a check): the worst spring stretch per garment over CesiumMan's walk, where it
/// is and which proxies are nearest to it.
/// `cargo test --no-default-features --test khronos stretch_report -- --ignored --nocapture`;
/// env RIG=RiggedFigure, DQS=1, ONLY=hakama (one garment), ROUNDS=n (contact rounds). Measured
/// before the fit for hanging arms: hakama alone and sash alone failed as in the full set
/// (122.6 %, 137.4 %), and 6 contact rounds instead of 2 changed nothing (123.2 %, 134.6 %):
/// the failures were geometric. Now see the every-frame tests' figures above.
#[test]
#[ignore]
fn stretch_report() {
    let name = std::env::var("RIG").unwrap_or_else(|_| "CesiumMan".into());
    let Some(rig) = khronos(&name) else {
        return;
    };
    let clip = rig.clips[0].name.clone();
    // ONLY=hakama (or sash, …): that garment alone.
    let kinds: Vec<GarmentKind> = match std::env::var("ONLY") {
        Ok(k) => vec![k.parse().unwrap()],
        Err(_) => GarmentKind::ALL.to_vec(),
    };
    let mut cfg = coarse_config(Some(clip), &kinds);
    if std::env::var("DQS").is_ok() {
        cfg.method = SkinMethod::Dqs;
    }
    if let Some(r) = std::env::var("ROUNDS").ok().and_then(|v| v.parse().ok()) {
        cfg.sim.contact_rounds = r;
    }
    let mut scene = Scene::new(rig.clone(), cfg).unwrap();
    let frames = ((scene.startup_seconds() + rig.clips[0].duration()) * 60.0).ceil() as usize + 1;
    let skin = &rig.skins[0];
    for f in 0..frames {
        scene.step(1.0 / 60.0);
        let m = &scene.model;
        let st = &scene.state;
        let l = &m.limits;
        let mut worst = vec![(0.0f32, 0usize); m.garments.len()];
        for e in 0..l.len() {
            let (a, b) = (l.a[e] as usize, l.b[e] as usize);
            if m.is_pinned(a) && m.is_pinned(b) {
                continue;
            }
            let s = st.x[a].distance(st.x[b]) / l.rest[e];
            let g = m.garment_of[a] as usize;
            if s > worst[g].0 {
                worst[g] = (s, e);
            }
        }
        let mut line = format!("frame {f:3}:");
        for (g, &(s, e)) in worst.iter().enumerate() {
            line += &format!(" {} {:.1} %", m.garments[g].name, 100.0 * s);
            if s > 1.12 {
                let (a, b) = (l.a[e] as usize, l.b[e] as usize);
                for i in [a, b] {
                    let x: Vec3 = st.x[i].into();
                    let mut near: Vec<(f32, String)> = scene
                        .proxies
                        .capsules
                        .iter()
                        .map(|&[c1, c2]| {
                            let fr = &scene.proxy_frame;
                            let d = drape::body::tapered_capsule_sdf(
                                x,
                                fr.center[c1 as usize],
                                fr.radius[c1 as usize],
                                fr.center[c2 as usize],
                                fr.radius[c2 as usize],
                            );
                            let j = |c: u32| {
                                rig.skeleton.names
                                    [skin.joints[scene.proxies.joint[c as usize] as usize] as usize]
                                    .clone()
                            };
                            (d, format!("{}/{}", j(c1), j(c2)))
                        })
                        .collect();
                    near.sort_by(|a, b| a.0.total_cmp(&b.0));
                    line += &format!("\n    particle {i} pinned {} at {:?}:", m.is_pinned(i), x);
                    for (d, n) in near.iter().take(4) {
                        line += &format!(" {n} {:.1} mm;", d * 1e3);
                    }
                }
            }
        }
        println!("{line}");
    }
}

/// Diagnostic (not a check): over CesiumMan's walk, how deep the waist garments' pins get inside
/// the arms' proxies and how close the arms' skin gets to them (nearest arm vertex, signed by
/// its normal: negative = the pin is under the arm's skin).
/// `cargo test --no-default-features --test khronos arm_vs_waist -- --ignored --nocapture`
#[test]
#[ignore]
fn arm_vs_waist_pins_report() {
    let Some(rig) = khronos("CesiumMan") else {
        return;
    };
    let clip = rig.clips[0].name.clone();
    let mut scene = Scene::new(
        rig.clone(),
        coarse_config(Some(clip), &[GarmentKind::Hakama, GarmentKind::Sash]),
    )
    .unwrap();
    let proxies = scene.proxies.clone();
    let rest = proxies.rest_frame(&rig, 0);
    let body = BodyAtRest::new(&rig, 0, &rest, &proxies.capsules).unwrap();
    let limbs = body.limb_joints();
    let mesh = &rig.meshes[0];
    let limb_vertex: Vec<bool> = (0..mesh.positions.len())
        .map(|v| {
            let (j, w) = (mesh.joints[v], mesh.weights[v]);
            let k = (0..4).fold(0, |b, k| if w[k] > w[b] { k } else { b });
            limbs[j[k] as usize]
        })
        .collect();
    let arm_caps: Vec<[u32; 2]> = proxies
        .capsules
        .iter()
        .copied()
        .filter(|&[a, b]| {
            let n = |s: u32| {
                rig.skeleton.names[rig.skins[0].joints[proxies.joint[s as usize] as usize] as usize]
                    .clone()
            };
            n(a).contains("arm") && n(b).contains("arm")
        })
        .collect();
    let frames = ((scene.startup_seconds() + rig.clips[0].duration()) * 60.0).ceil() as usize + 1;
    for f in 0..frames {
        scene.step(1.0 / 60.0);
        let x = scene.body_positions(0);
        let nrm = scene.body_normals(0);
        let mut worst_proxy = 0.0f32;
        let mut worst_skin = f32::INFINITY;
        for t in &scene.pin_targets {
            let d = union_sdf(*t, &scene.proxy_frame, &arm_caps);
            worst_proxy = worst_proxy.min(d);
            // Signed distance to the arm skin: nearest arm vertex, sign from its normal.
            let mut best = (f32::INFINITY, 0usize);
            for v in 0..x.len() {
                if limb_vertex[v] {
                    let dd = x[v].distance(*t);
                    if dd < best.0 {
                        best = (dd, v);
                    }
                }
            }
            let s = (*t - x[best.1]).dot(nrm[best.1]).signum() * best.0;
            if best.0 < worst_skin.abs() {
                worst_skin = s;
            }
        }
        if worst_proxy < 0.0 || worst_skin < 0.01 {
            println!(
                "frame {f:3}: deepest pin in an arm proxy {:.1} mm, nearest to arm skin {:.1} mm",
                worst_proxy * 1e3,
                worst_skin * 1e3
            );
        }
    }
}

/// Diagnostic (not a check): how close the arms' proxies come to the body's mid-plane behind
/// and beside the waist, at rest and over CesiumMan's walk (min over arm spheres of lateral
/// offset minus radius, in 5 cm bands of height below the sash's centre). Measured: at rest
/// (T-pose) 0.53 m; over the walk, behind the hips, 39-48 mm: the sash's default tails (outer
/// edges 8 cm out) lie in the forearm's path.
/// `cargo test --no-default-features --test khronos arm_path -- --ignored --nocapture`
#[test]
#[ignore]
fn arm_path_report() {
    let name = std::env::var("RIG").unwrap_or_else(|_| "CesiumMan".into());
    let Some(rig) = khronos(&name) else {
        return;
    };
    let clip = rig.clips[0].name.clone();
    let mut scene = Scene::new(
        rig.clone(),
        coarse_config(Some(clip), &[GarmentKind::Hakama]),
    )
    .unwrap();
    let proxies = scene.proxies.clone();
    let rest = proxies.rest_frame(&rig, 0);
    let body = BodyAtRest::new(&rig, 0, &rest, &proxies.capsules).unwrap();
    let hips = body.joint("Hips", "x").unwrap();
    let spine = body.joint("Spine", "x").unwrap();
    let sash_y = hips.y + 0.8 * (spine.y - hips.y);
    let arm = |s: usize| {
        let n = &rig.skeleton.names[rig.skins[0].joints[proxies.joint[s] as usize] as usize];
        n.contains("arm") || n.contains("Arm") || n.contains("Hand")
    };
    let report = |fr: &drape::body::ProxyFrame, behind_only: bool| {
        let mut best = [f32::INFINITY; 4];
        for s in 0..fr.center.len() {
            if !arm(s) {
                continue;
            }
            let c = fr.center[s] - hips;
            let dy = fr.center[s].y - sash_y;
            if behind_only && c.dot(body.forward) > 0.0 {
                continue;
            }
            let band = ((-dy) / 0.05).floor();
            if !(0.0..4.0).contains(&band) {
                continue;
            }
            let lat = c.dot(body.left).abs() - fr.radius[s];
            best[band as usize] = best[band as usize].min(lat);
        }
        best
    };
    println!("sash_y {sash_y:.3} hips {hips:?}");
    println!("rest: {:?}", report(&rest, false));
    let frames = ((scene.startup_seconds() + rig.clips[0].duration()) * 60.0).ceil() as usize + 1;
    let mut all = [f32::INFINITY; 4];
    for _ in 0..frames {
        scene.step(1.0 / 60.0);
        let b = report(&scene.proxy_frame, true);
        for k in 0..4 {
            all[k] = all[k].min(b[k]);
        }
    }
    println!("walk, behind the hips: {all:?}");
}
