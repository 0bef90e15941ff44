//! The dressed character under the XPBD cloth model (issue 20, point 4): issue 5's per-frame
//! checks (pins on their targets, no particle inside the body, structural and shear springs
//! within Provot's limit + 2 %, no NaN, garments apart) in every frame of every built-in clip,
//! skinned with LBS and DQS. The tests run the garments coarse (3× the spacing, as tests/scene.rs
//! does for the mass-spring model); `default_resolution_report` runs the default garments and
//! prints the worst stretch per clip (minutes; run by hand).

#[path = "support/dressed.rs"]
mod dressed;
#[path = "support/tools.rs"]
mod tools;

use drape::anim::player::LoopMode;
use drape::cloth::ClothModelKind;
use drape::garments::GarmentKind;
use drape::scene::{Scene, SceneConfig};
use drape::skin::SkinMethod;
use dressed::{check_frame, coarse_config};

/// Every built-in clip of the ninja.
const CLIPS: [&str; 7] = [
    "tpose",
    "stance",
    "jab_cross",
    "front_kick",
    "roundhouse_kick",
    "spinning_back_kick",
    "kata",
];

/// What one run of a clip measured.
struct ClipRun {
    frames: usize,
    /// Frames that failed a check, and the first failure.
    failed: usize,
    first: Option<String>,
    /// Largest limit-spring stretch at the end of any frame, ratio to rest.
    worst: f32,
    particles: usize,
}

/// Plays the start-up and then `clip` once under the XPBD model with `cfg` (its model set to
/// XPBD here), checking the end of every frame.
fn run_clip(rig: &drape::rig::Rig, clip: &str, mut cfg: SceneConfig) -> ClipRun {
    cfg.clip = Some(clip.into());
    cfg.sim.model = ClothModelKind::Xpbd;
    let mut scene = Scene::new(rig.clone(), cfg).unwrap();
    scene.player.set_loop_mode(LoopMode::Once);
    let c = &rig.clips[rig.clip(clip).expect("no such clip")];
    let frames = ((scene.startup_seconds() + c.duration()) * 60.0).ceil() as usize + 1;
    let mut run = ClipRun {
        frames,
        failed: 0,
        first: None,
        worst: 0.0,
        particles: scene.particle_count(),
    };
    for f in 0..frames {
        scene.step(1.0 / 60.0);
        if let Some((_, r)) = scene.model.worst_limit_spring(&scene.state.x) {
            run.worst = run.worst.max(if r.is_nan() { f32::INFINITY } else { r });
        }
        if let Err(e) = check_frame(&scene) {
            if std::env::var("DRAPE_WHY").is_ok() {
                why(&scene, f);
            }
            run.failed += 1;
            run.first.get_or_insert_with(|| {
                format!(
                    "frame {f} (t = {:.3} s, {:?}): {e}",
                    scene.time, scene.phase
                )
            });
        }
    }
    run
}

/// The coarse garments of the mass-spring tests (tests/scene.rs), every frame of `clip` checked,
/// LBS then DQS.
fn every_frame_of(clip: &str) {
    let ninja = drape::ninja::build().unwrap();
    for method in [SkinMethod::Lbs, SkinMethod::Dqs] {
        let mut cfg = coarse_config(None, &GarmentKind::ALL);
        cfg.method = method;
        let r = run_clip(&ninja.rig, clip, cfg);
        println!(
            "{clip} ({method}), xpbd, {} particles: worst spring {:.1} % of rest, {} of {} frames fail",
            r.particles,
            100.0 * r.worst,
            r.failed,
            r.frames
        );
        if let Some(e) = r.first {
            panic!("{clip} ({method}), xpbd: {e}");
        }
    }
}

#[test]
fn xpbd_dressed_tpose_every_frame() {
    every_frame_of("tpose");
}

#[test]
fn xpbd_dressed_stance_every_frame() {
    every_frame_of("stance");
}

#[test]
fn xpbd_dressed_jab_cross_every_frame() {
    every_frame_of("jab_cross");
}

#[test]
fn xpbd_dressed_front_kick_every_frame() {
    every_frame_of("front_kick");
}

#[test]
fn xpbd_dressed_roundhouse_kick_every_frame() {
    every_frame_of("roundhouse_kick");
}

#[test]
fn xpbd_dressed_spinning_back_kick_every_frame() {
    every_frame_of("spinning_back_kick");
}

#[test]
fn xpbd_dressed_kata_every_frame() {
    every_frame_of("kata");
}

/// The sewn hakama under XPBD with the hands meeting the cloth between its particles
/// (`SimParams::face_contact`): without it the coarse kata's closing bow takes the left hand
/// through the triangles of the sewn front (2.0–2.8 cm spheres through triangles 4–6 cm
/// across) and, rising to the guard, it lifts the skirt, 38 of 631 frames past the checks
/// (`sewn_kata_hands_report` below); with it, none. LBS and DQS.
#[test]
fn xpbd_dressed_sewn_kata_with_face_contact_every_frame() {
    use drape::garments::HakamaStyle;
    let ninja = drape::ninja::build().unwrap();
    for method in [SkinMethod::Lbs, SkinMethod::Dqs] {
        let mut cfg = coarse_config(None, &GarmentKind::ALL);
        cfg.method = method;
        cfg.sim.face_contact = true;
        for g in cfg
            .garments
            .iter_mut()
            .filter(|g| g.kind == GarmentKind::Hakama)
        {
            g.style = HakamaStyle::Sewn;
        }
        let r = run_clip(&ninja.rig, "kata", cfg);
        if let Some(e) = r.first {
            panic!(
                "kata ({method}), xpbd, sewn, face contact: {} of {} frames fail, first {e}",
                r.failed, r.frames
            );
        }
    }
}

/// Every built-in clip has a test above.
#[test]
fn every_builtin_clip_is_tested_under_xpbd() {
    let ninja = drape::ninja::build().unwrap();
    for c in &ninja.rig.clips {
        assert!(
            CLIPS.contains(&c.name.as_str()),
            "clip {} has no test",
            c.name
        );
    }
}

/// The default garments at their default resolution (about 5,250 particles, the scene's default
/// settings, 16 substeps), every built-in clip once with LBS and DQS, under XPBD: per clip the
/// worst limit-spring stretch at the end of any frame and the frames failing issue 5's checks.
/// Run by hand (minutes):
/// `cargo test --no-default-features --test dressed_xpbd default_resolution_report -- --ignored --nocapture`.
/// Knobs: `DRAPE_CLIP` (one clip), `DRAPE_METHOD` (`lbs` or `dqs`), `DRAPE_NO_LIMIT=1` (no strain
/// limit: the XPBD model before it had one), `DRAPE_SUBSTEPS`, `DRAPE_ROUNDS` (contact rounds),
/// `DRAPE_PMAX` (strain-limit passes at most), `DRAPE_TOL` (their tolerance).
#[test]
#[ignore = "minutes at the default resolution; run by hand"]
fn default_resolution_report() {
    let ninja = drape::ninja::build().unwrap();
    let clips: Vec<String> = match std::env::var("DRAPE_CLIP") {
        Ok(c) => vec![c],
        Err(_) => CLIPS.iter().map(|c| c.to_string()).collect(),
    };
    let methods: Vec<SkinMethod> = match std::env::var("DRAPE_METHOD") {
        Ok(m) => vec![m.parse().unwrap()],
        Err(_) => vec![SkinMethod::Lbs, SkinMethod::Dqs],
    };
    let mut bad = 0;
    for clip in &clips {
        for &method in &methods {
            let mut cfg = SceneConfig {
                method,
                ..SceneConfig::default()
            };
            if std::env::var("DRAPE_NO_LIMIT").is_ok() {
                // The model's own checks still ask for τ = 0.1 + 2 % (check_frame's default).
                cfg.sim.provot_limit = None;
            }
            let env = |k: &str| std::env::var(k).ok().and_then(|s| s.parse::<f32>().ok());
            if let Some(v) = env("DRAPE_SUBSTEPS") {
                cfg.sim.substeps = v as u32;
            }
            if let Some(v) = env("DRAPE_ROUNDS") {
                cfg.sim.contact_rounds = v as u32;
            }
            if let Some(v) = env("DRAPE_PMAX") {
                cfg.sim.provot_max_iterations = v as u32;
                cfg.sim.xpbd_max_limit_passes = v as u32;
            }
            if let Some(v) = env("DRAPE_SKIN_CONTACT") {
                cfg.sim.skin_contact = v as u32;
            }
            if let Some(v) = env("DRAPE_TOL") {
                cfg.sim.provot_tolerance = v;
            }
            let start = std::time::Instant::now();
            let r = run_clip(&ninja.rig, clip, cfg);
            bad += r.failed;
            println!(
                "{clip} ({method}), {} particles: worst spring {:.1} % of rest; {} of {} frames fail{} ({:.0} s)",
                r.particles,
                100.0 * r.worst,
                r.failed,
                r.frames,
                r.first.map(|e| format!(", first: {e}")).unwrap_or_default(),
                start.elapsed().as_secs_f32()
            );
        }
    }
    println!("{bad} failing frames in all");
}

/// For `DRAPE_WHY=1`: the worst limit spring's ends at frame `f`: pinned or not, inverse mass,
/// signed distance to the body, the collide stage's contact gap.
fn why(scene: &Scene, f: usize) {
    let (m, x) = (&scene.model, &scene.state.x);
    let Some((e, r)) = m.worst_limit_spring(x) else {
        return;
    };
    let ends = [m.limits.a[e] as usize, m.limits.b[e] as usize];
    let info: Vec<String> = ends
        .iter()
        .map(|&i| {
            let d =
                drape::body::union_sdf(x[i].into(), &scene.proxy_frame, &scene.proxies.capsules);
            format!(
                "{i}: pinned {}, w {:.0}, body {:+.2} mm, gap {:.2} mm",
                m.is_pinned(i),
                scene.state.inv_mass[i],
                d * 1e3,
                scene.workspace.contact_gap[i] * 1e3
            )
        })
        .collect();
    println!("  frame {f}: {:.1} %: {}", 100.0 * r, info.join("; "));
    // Every limit spring of the free end: the other end, whether pinned, the stretch.
    let free = ends
        .into_iter()
        .find(|&i| !m.is_pinned(i))
        .unwrap_or(ends[0]);
    let l = &m.limits;
    for e in 0..l.len() {
        let (a, b) = (l.a[e] as usize, l.b[e] as usize);
        if a == free || b == free {
            let o = if a == free { b } else { a };
            let r = x[a].distance(x[b]) / l.rest[e];
            println!(
                "    {free}-{o} (pinned {}, rest {:.1} mm): {:.1} %",
                m.is_pinned(o),
                l.rest[e] * 1e3,
                100.0 * r
            );
        }
    }
}

/// Why the sewn hakama (`HakamaStyle::Sewn`) is not the default: under XPBD the coarse ninja's
/// kata ends frames with hakama springs past the limit from its closing bow on, where the left
/// hand, rising from the thigh to the guard, carries the left half-skirt's hem up with it. Prints,
/// every 6th frame from frame 480, each hand's height and distance from the hakama's waist axis
/// and the distances of the hakama particles near it (within 0.3 rad round the axis and 6 cm in
/// height): a hand nearer the axis than the cloth there is inside the skirt. Then the highest
/// free particle (below the pinned rows) and the frames failing the checks. Run by hand:
/// `cargo test --release --no-default-features --test dressed_xpbd sewn_kata_hands_report -- --ignored --nocapture`
/// (`DRAPE_MODEL=mass_spring` for the other model, `DRAPE_HAKAMA` for another cut,
/// `DRAPE_FACE_CONTACT=true` for the hands meeting the cloth between its particles).
#[test]
#[ignore = "diagnostic print; run by hand"]
fn sewn_kata_hands_report() {
    use drape::garments::HakamaStyle;
    use drape::math::Vec3;
    let ninja = drape::ninja::build().unwrap();
    let style: HakamaStyle = std::env::var("DRAPE_HAKAMA")
        .unwrap_or_else(|_| "sewn".into())
        .parse()
        .unwrap();
    let model: ClothModelKind = std::env::var("DRAPE_MODEL")
        .unwrap_or_else(|_| "xpbd".into())
        .parse()
        .unwrap();
    let mut cfg = coarse_config(Some("kata".into()), &GarmentKind::ALL);
    cfg.sim.model = model;
    cfg.sim.face_contact = std::env::var("DRAPE_FACE_CONTACT").is_ok_and(|v| v == "true");
    for g in cfg
        .garments
        .iter_mut()
        .filter(|g| g.kind == GarmentKind::Hakama)
    {
        g.style = style;
    }
    let mut scene = Scene::new(ninja.rig.clone(), cfg).unwrap();
    scene.player.set_loop_mode(LoopMode::Once);
    let clip = &ninja.rig.clips[ninja.rig.clip("kata").unwrap()];
    let frames = ((scene.startup_seconds() + clip.duration()) * 60.0).ceil() as usize + 1;
    let hk = scene
        .model
        .garments
        .iter()
        .position(|g| g.name == "hakama")
        .unwrap();
    let range = scene.model.garments[hk].particles.clone();
    let pins: Vec<usize> = (scene.model.pins.iter().map(|&i| i as usize))
        .filter(|i| range.contains(i))
        .collect();
    let skin = &scene.rig.skins[scene.config.skin];
    let joint_name = |j: u32| scene.rig.skeleton.names[skin.joints[j as usize] as usize].clone();
    let hand_spheres: Vec<(String, Vec<usize>)> = ["LeftHand", "RightHand"]
        .iter()
        .map(|h| {
            let s = (0..scene.proxies.joint.len())
                .filter(|&s| joint_name(scene.proxies.joint[s]).ends_with(h))
                .collect();
            (h.to_string(), s)
        })
        .collect();
    let mut bad = 0;
    for f in 0..frames {
        scene.step(1.0 / 60.0);
        if check_frame(&scene).is_err() {
            bad += 1;
        }
        if f < 480 || f % 6 != 0 {
            continue;
        }
        let x = |i: usize| Vec3::from(scene.state.x[i]);
        let axis = pins.iter().map(|&i| x(i)).sum::<Vec3>() / pins.len() as f32;
        let polar = |p: Vec3| {
            let q = p - axis;
            ((q.x * q.x + q.z * q.z).sqrt(), q.z.atan2(q.x), q.y)
        };
        let lowest_pin = pins.iter().map(|&i| x(i).y).fold(f32::INFINITY, f32::min);
        let top = range
            .clone()
            .filter(|i| !pins.contains(i))
            .map(|i| x(i).y)
            .fold(f32::MIN, f32::max);
        let mut line = format!(
            "frame {f} (clip {:.2} s): highest free hakama particle {:+.3} m from the lowest pin",
            scene.player.time(),
            top - lowest_pin
        );
        for (hand, spheres) in &hand_spheres {
            if spheres.is_empty() {
                continue;
            }
            let c = spheres
                .iter()
                .map(|&s| scene.proxy_frame.center[s])
                .sum::<Vec3>()
                / spheres.len() as f32;
            let (r, a, y) = polar(c);
            let mut near: Vec<f32> = range
                .clone()
                .map(|i| polar(x(i)))
                .filter(|&(_, b, h)| {
                    let d = (b - a).abs();
                    d.min(std::f32::consts::TAU - d) < 0.3 && (h - y).abs() < 0.06
                })
                .map(|(rr, _, _)| rr)
                .collect();
            near.sort_by(f32::total_cmp);
            let cloth = match (near.first(), near.last()) {
                (Some(lo), Some(hi)) => format!("{lo:.3}–{hi:.3}"),
                _ => "none".into(),
            };
            line += &format!("; {hand} {y:+.3} m up, {r:.3} m out (cloth there {cloth})");
        }
        println!("{line}");
    }
    println!(
        "{model:?}, hakama {}: {bad} of {frames} frames fail the checks",
        style.name()
    );
}
