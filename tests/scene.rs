//! The dressed character, end to end: every built-in clip with the default garments, checked at
//! the end of every frame: at their default resolution (`default_garments_*`), and coarse (3× the
//! spacing, quicker) alone and in other combinations, those on over the loop into the clip's
//! second pass.

#[path = "support/dressed.rs"]
mod dressed;
#[path = "support/tools.rs"]
mod tools;

use drape::anim::player::LoopMode;
use drape::body::union_sdf;
use drape::garments::GarmentKind;
use drape::scene::{Phase, Scene, SceneConfig};
use drape::skin::SkinMethod;
use dressed::{check_frame, coarse_config};

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

/// Frames of the start-up plus the whole of clip `clip` at 60 fps (one more frame so the clip's
/// last key is reached).
fn whole_clip_frames(scene: &Scene, clip: &drape::anim::Clip) -> usize {
    ((scene.startup_seconds() + clip.duration()) * 60.0).ceil() as usize + 1
}

/// Runs the whole of clip `name` (after the start-up) with `kinds` skinned with `method`, and
/// on over the loop into the clip's next pass for [`PAST_THE_LOOP`], checking every frame.
fn run_clip(rig: &drape::rig::Rig, name: &str, kinds: &[GarmentKind], method: SkinMethod) {
    let mut cfg = coarse_config(Some(name.into()), kinds);
    cfg.method = method;
    run_clip_with(rig, name, cfg, true);
}

/// How far the coarse tests play into the clip's second pass, s: the loop is seamless (the
/// kicks' feet land where they started, the kata's next pass is turned as its last frame
/// stands), so the garments go over it like over any other frame.
const PAST_THE_LOOP: f32 = 0.5;

/// The diagnostics' knobs: `T_SLACK` (tether slack, negative = off), `T_PIT` (Provot passes,
/// at least), `T_PMAX` (at most), `T_R` (contact rounds), `T_TOL` (the tolerance that ends the
/// extra passes), `T_FACTOR` (every garment's spacing × this).
fn tweak(cfg: &mut SceneConfig) {
    let env = |k: &str| std::env::var(k).ok().and_then(|s| s.parse::<f32>().ok());
    if let Some(v) = env("T_SLACK") {
        cfg.sim.tether_slack = if v < 0.0 { None } else { Some(v) };
    }
    if let Some(v) = env("T_PIT") {
        cfg.sim.provot_iterations = v as u32;
    }
    if let Some(v) = env("T_PMAX") {
        cfg.sim.provot_max_iterations = v as u32;
    }
    if let Some(v) = env("T_R") {
        cfg.sim.contact_rounds = v as u32;
    }
    if let Some(v) = env("T_TOL") {
        cfg.sim.provot_tolerance = v;
    }
    if let Some(v) = env("T_FACTOR") {
        // Every garment's spacing × v (`drape bench scene --coarse v`).
        for g in cfg.garments.iter_mut() {
            *g = drape::garments::GarmentSpec::coarse(g.kind, v);
        }
    }
}

/// Runs the whole of clip `name` (after the start-up) with `cfg`, checking every frame; with
/// `looped`, on over the loop for [`PAST_THE_LOOP`].
fn run_clip_with(rig: &drape::rig::Rig, name: &str, cfg: SceneConfig, looped: bool) {
    let method = cfg.method;
    let mut scene = Scene::new(rig.clone(), cfg).unwrap();
    let clip = &rig.clips[rig.clip(name).unwrap()];
    let mut frames = whole_clip_frames(&scene, clip);
    if looped {
        assert_eq!(scene.player.loop_mode(), LoopMode::Loop, "the scene loops");
        frames += (PAST_THE_LOOP * 60.0).ceil() as usize;
    } else {
        scene.player.set_loop_mode(LoopMode::Once);
    }
    run_frames(&mut scene, frames, &format!("{name} ({method})"));
    println!(
        "{name} ({method}): {frames} frames, {} particles, ok",
        scene.particle_count()
    );
}

/// The test, one test per built-in clip so they run in parallel: the whole clip (after the
/// start-up) and [`PAST_THE_LOOP`] of its next pass, skinned with LBS and then DQS, every frame
/// checked.
fn every_frame_of(clip: &str, kinds: &[GarmentKind]) {
    let ninja = drape::ninja::build().unwrap();
    assert!(ninja.rig.clip(clip).is_some(), "no built-in clip {clip}");
    for method in [SkinMethod::Lbs, SkinMethod::Dqs] {
        run_clip(&ninja.rig, clip, kinds, method);
    }
}

/// The test as the user gets it: the default garments at their default resolution
/// (about 5,250 particles) and the default start-up, the whole clip with LBS and then DQS,
/// every frame checked.
fn every_frame_at_default_resolution(clip: &str) {
    let ninja = drape::ninja::build().unwrap();
    for method in [SkinMethod::Lbs, SkinMethod::Dqs] {
        let cfg = SceneConfig {
            clip: Some(clip.into()),
            method,
            ..SceneConfig::default()
        };
        run_clip_with(&ninja.rig, clip, cfg, false);
    }
}

#[test]
fn default_garments_tpose_every_frame() {
    every_frame_at_default_resolution("tpose");
}

#[test]
fn default_garments_stance_every_frame() {
    every_frame_at_default_resolution("stance");
}

#[test]
fn default_garments_jab_cross_every_frame() {
    every_frame_at_default_resolution("jab_cross");
}

#[test]
fn default_garments_front_kick_every_frame() {
    every_frame_at_default_resolution("front_kick");
}

#[test]
fn default_garments_roundhouse_kick_every_frame() {
    every_frame_at_default_resolution("roundhouse_kick");
}

#[test]
fn default_garments_spinning_back_kick_every_frame() {
    every_frame_at_default_resolution("spinning_back_kick");
}

#[test]
fn default_garments_kata_every_frame() {
    every_frame_at_default_resolution("kata");
}

const NO_HAKAMA: [GarmentKind; 3] = [GarmentKind::Cape, GarmentKind::Sash, GarmentKind::Headband];

#[test]
fn dressed_tpose_every_frame() {
    every_frame_of("tpose", &GarmentKind::ALL);
}

#[test]
fn cape_sash_headband_tpose_every_frame() {
    every_frame_of("tpose", &NO_HAKAMA);
}

#[test]
fn dressed_stance_every_frame() {
    every_frame_of("stance", &GarmentKind::ALL);
}

#[test]
fn cape_sash_headband_stance_every_frame() {
    every_frame_of("stance", &NO_HAKAMA);
}

#[test]
fn dressed_jab_cross_every_frame() {
    every_frame_of("jab_cross", &GarmentKind::ALL);
}

#[test]
fn cape_sash_headband_jab_cross_every_frame() {
    every_frame_of("jab_cross", &NO_HAKAMA);
}

#[test]
fn dressed_front_kick_every_frame() {
    every_frame_of("front_kick", &GarmentKind::ALL);
}

#[test]
fn cape_sash_headband_front_kick_every_frame() {
    every_frame_of("front_kick", &NO_HAKAMA);
}

#[test]
fn dressed_roundhouse_kick_every_frame() {
    every_frame_of("roundhouse_kick", &GarmentKind::ALL);
}

#[test]
fn cape_sash_headband_roundhouse_kick_every_frame() {
    every_frame_of("roundhouse_kick", &NO_HAKAMA);
}

#[test]
fn dressed_spinning_back_kick_every_frame() {
    every_frame_of("spinning_back_kick", &GarmentKind::ALL);
}

#[test]
fn cape_sash_headband_spinning_back_kick_every_frame() {
    every_frame_of("spinning_back_kick", &NO_HAKAMA);
}

#[test]
fn dressed_kata_every_frame() {
    every_frame_of("kata", &GarmentKind::ALL);
}

#[test]
fn cape_sash_headband_kata_every_frame() {
    every_frame_of("kata", &NO_HAKAMA);
}

/// Diagnostic for issue 5 (the hakama stretching in kicks): runs one clip (`DRAPE_CLIP`, default
/// `front_kick`, LBS) with the hakama alone and prints, for every frame that breaks the Provot
/// limit + 2 %, the worst spring: its ends, whether pinned, their signed distance to the body
/// and the bones of the collider each end last touched. Run by hand:
/// `DRAPE_CLIP=kata cargo test --no-default-features --test scene hakama_stretch_report -- --ignored --nocapture`.
#[test]
#[ignore = "diagnostic print; run by hand"]
fn hakama_stretch_report() {
    let clip = std::env::var("DRAPE_CLIP").unwrap_or_else(|_| "front_kick".into());
    // `DRAPE_FACTOR`: spacing as a multiple of the default (default 3, the coarse tests'; 1 =
    // the default resolution); `DRAPE_ALL=1`: all four garments, not the hakama alone.
    let factor: f32 = std::env::var("DRAPE_FACTOR")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let all = std::env::var("DRAPE_ALL").is_ok_and(|s| s == "1");
    let method: SkinMethod = std::env::var("DRAPE_METHOD")
        .unwrap_or_else(|_| "lbs".into())
        .parse()
        .unwrap();
    let kinds: &[GarmentKind] = if all {
        &GarmentKind::ALL
    } else {
        &[GarmentKind::Hakama]
    };
    let ninja = drape::ninja::build().unwrap();
    let mut cfg = coarse_config(Some(clip.clone()), kinds);
    for g in &mut cfg.garments {
        *g = drape::garments::GarmentSpec::coarse(g.kind, factor);
    }
    cfg.method = method;
    if std::env::var("DRAPE_DEFAULT_STARTUP").is_ok_and(|s| s == "1") {
        let d = SceneConfig::default();
        (cfg.settle, cfg.blend) = (d.settle, d.blend);
    }
    tweak(&mut cfg);
    let env = |k: &str| std::env::var(k).ok().and_then(|s| s.parse::<f32>().ok());
    if let Some(v) = env("DRAPE_SUBSTEPS") {
        cfg.sim.substeps = v as u32;
    }
    if let Some(v) = env("DRAPE_SAFETY") {
        cfg.sim.stability_safety = v;
    }
    if let Some(v) = env("DRAPE_DAMP") {
        for g in &mut cfg.garments {
            g.fabric.damping_ratio = v;
        }
    }
    if let Some(v) = env("DRAPE_FRICTION") {
        for g in &mut cfg.garments {
            g.fabric.friction = v;
        }
    }
    if let Some(v) = env("DRAPE_SHEAR") {
        for g in &mut cfg.garments {
            g.fabric.k_shear *= v;
        }
    }
    let mut scene = Scene::new(ninja.rig.clone(), cfg).unwrap();
    scene.player.set_loop_mode(LoopMode::Once);
    let c = &ninja.rig.clips[ninja.rig.clip(&clip).expect("no such clip")];
    let frames = whole_clip_frames(&scene, c);
    let limit = 1.0 + scene.config.sim.provot_limit.unwrap_or(0.1) + 0.02;
    // The bones at the two ends of collider `c` (a proxy capsule), or "-" for no contact.
    let bones = |scene: &Scene, c: u32| -> String {
        if c == u32::MAX {
            return "-".into();
        }
        let skin = &scene.rig.skins[scene.config.skin];
        let name = |s: u32| {
            let node = skin.joints[scene.proxies.joint[s as usize] as usize] as usize;
            scene.rig.skeleton.names[node].clone()
        };
        let [a, b] = scene.proxies.capsules[c as usize];
        format!("{}/{}", name(a), name(b))
    };
    let mut worst_all = 0.0f32;
    let mut bad = 0;
    for f in 0..frames {
        scene.step(1.0 / 60.0);
        assert!(
            scene.state.is_finite(),
            "{clip}: frame {f}: non-finite particle"
        );
        let (m, st, l) = (&scene.model, &scene.state, &scene.model.limits);
        let ratio = |e: usize| st.x[l.a[e] as usize].distance(st.x[l.b[e] as usize]) / l.rest[e];
        let free = |e: usize| !(m.is_pinned(l.a[e] as usize) && m.is_pinned(l.b[e] as usize));
        let over = (0..l.len())
            .filter(|&e| free(e) && ratio(e) > limit)
            .count();
        let Some(e) = (0..l.len())
            .filter(|&e| free(e))
            .max_by(|&p, &q| ratio(p).total_cmp(&ratio(q)))
        else {
            continue;
        };
        worst_all = worst_all.max(ratio(e));
        if over == 0 {
            continue;
        }
        bad += 1;
        // The capsule nearest particle `i`.
        let nearest = |i: usize| -> u32 {
            let p: drape::math::Vec3 = st.x[i].into();
            (0..scene.proxies.capsules.len())
                .min_by(|&a, &b| {
                    let d = |c: usize| {
                        let cap = [scene.proxies.capsules[c]];
                        union_sdf(p, &scene.proxy_frame, &cap)
                    };
                    d(a).total_cmp(&d(b))
                })
                .map_or(u32::MAX, |c| c as u32)
        };
        let end = |i: usize| {
            let sdf = union_sdf(st.x[i].into(), &scene.proxy_frame, &scene.proxies.capsules);
            let g = &m.garments[m.garment_of[i] as usize];
            format!(
                "{} {}{} at {:.3?}, {:+.1} mm from the body, on {}, nearest {}",
                g.name,
                i - g.particles.start,
                if m.is_pinned(i) { " (pin)" } else { "" },
                st.x[i].to_array(),
                sdf * 1e3,
                bones(&scene, scene.workspace.contact_collider[i]),
                bones(&scene, nearest(i))
            )
        };
        println!(
            "frame {f}: {over} springs over; worst {:.1} % of rest {:.1} mm: {} — {}",
            100.0 * ratio(e),
            l.rest[e] * 1e3,
            end(l.a[e] as usize),
            end(l.b[e] as usize)
        );
    }
    println!(
        "{clip}: worst spring {:.1} % of rest; {bad} frames over; scale {:?}",
        100.0 * worst_all,
        scene.workspace.stability.garment_scale
    );
}

/// The clip starts when the start-up ends: in every frame of the play phase the clip's time is
/// the scene's time minus the start-up (settle + blend), also when the start-up is not a whole
/// number of frames. (The player used to advance a whole frame on the frame the clip started,
/// running one frame ahead of the scene.)
#[test]
fn clip_time_is_scene_time_minus_startup() {
    let ninja = drape::ninja::build().unwrap();
    let name = "jab_cross";
    let clip = ninja.rig.clips[ninja.rig.clip(name).unwrap()].clone();
    for (settle, blend) in [(0.2, 0.3), (0.21, 0.13), (0.0, 0.25), (0.0, 0.0)] {
        let cfg = SceneConfig {
            settle,
            blend,
            ..coarse_config(Some(name.into()), &[GarmentKind::Headband])
        };
        let mut scene = Scene::new(ninja.rig.clone(), cfg).unwrap();
        scene.player.set_loop_mode(LoopMode::Once);
        let dt = 1.0 / 60.0;
        let mut played = 0;
        for f in 0..60 {
            scene.step(dt);
            let since = scene.time - scene.startup_seconds();
            if scene.phase != Phase::Play {
                assert!(
                    since < 0.0,
                    "frame {f}: still starting up {since} s after the start-up"
                );
                continue;
            }
            // The clip starts in the first frame that ends at or after the start-up.
            assert!(
                since >= 0.0 && (since - dt < 1e-6 || played > 0),
                "frame {f}: the clip started {since} s after the start-up ended"
            );
            let t = scene.player.time() - clip.start;
            assert!(
                (t - since).abs() < 1e-4,
                "settle {settle}, blend {blend}, frame {f}: clip at {t} s, {since} s after the start-up"
            );
            played += 1;
        }
        assert!(
            played >= 20,
            "settle {settle}, blend {blend}: {played} frames played"
        );
    }
}

/// Diagnostic for issue 5 at the default garment resolution (the tests above use a coarse one):
/// plays one clip once (`DRAPE_CLIP`, default `kata`; `DRAPE_METHOD`, default `lbs`) with all
/// four garments and prints every frame that fails the checks, then the count. Run by
/// hand (minutes):
/// `cargo test --no-default-features --test scene default_resolution_report -- --ignored --nocapture`
/// (`DRAPE_CLIP`, `DRAPE_METHOD`, and the knobs of `tweak`).
#[test]
#[ignore = "diagnostic print; run by hand"]
fn default_resolution_report() {
    let clip = std::env::var("DRAPE_CLIP").unwrap_or_else(|_| "kata".into());
    let method: SkinMethod = std::env::var("DRAPE_METHOD")
        .unwrap_or_else(|_| "lbs".into())
        .parse()
        .unwrap();
    let ninja = drape::ninja::build().unwrap();
    let mut cfg = SceneConfig {
        clip: Some(clip.clone()),
        method,
        ..SceneConfig::default()
    };
    tweak(&mut cfg);
    let mut scene = Scene::new(ninja.rig.clone(), cfg).unwrap();
    scene.player.set_loop_mode(LoopMode::Once);
    let c = &ninja.rig.clips[ninja.rig.clip(&clip).expect("no such clip")];
    let frames = whole_clip_frames(&scene, c);
    let mut bad = 0;
    // Per garment, the largest stretch of a limit spring between two pins (their targets come
    // from skinning, so the cloth between them cannot be within the limit past ~110 %).
    let mut pin_pin = vec![(0.0f32, 0usize, 0usize); scene.model.garments.len()];
    for f in 0..frames {
        scene.step(1.0 / 60.0);
        let (m, l) = (&scene.model, &scene.model.limits);
        for e in 0..l.len() {
            let (a, b) = (l.a[e] as usize, l.b[e] as usize);
            if m.is_pinned(a) && m.is_pinned(b) {
                let r = scene.state.x[a].distance(scene.state.x[b]) / l.rest[e];
                let g = m.garment_of[a] as usize;
                if r > pin_pin[g].0 {
                    let s = m.garments[g].particles.start;
                    pin_pin[g] = (r, a - s, b - s);
                }
            }
        }
        if let Err(e) = check_frame(&scene) {
            bad += 1;
            println!(
                "frame {f} (t = {:.3} s, clip {:.3} s): {e}",
                scene.time,
                scene.player.time()
            );
        }
    }
    println!(
        "{clip} ({method}), {} particles: {bad} of {frames} frames fail",
        scene.particle_count()
    );
    for (g, (r, a, b)) in pin_pin.iter().enumerate() {
        println!(
            "  {}: pins {a}-{b} stretched to {:.1} % of rest",
            scene.model.garments[g].name,
            100.0 * r
        );
    }
}

/// The end-of-frame checks the tests above rely on catch what they check (in the order they
/// check it, so each change below breaks only its own rule): a NaN, a pin off its target, a
/// particle inside the body, a spring past the limit + 2 %; and the frame as simulated passes.
/// (The garment–garment distance cannot be broken alone here: moving a particle onto another
/// garment stretches its springs first.)
#[test]
fn the_frame_checks_catch_each_violation() {
    use drape::math::{Vec3, Vec3A};
    let ninja = drape::ninja::build().unwrap();
    let mut scene = Scene::new(
        ninja.rig,
        coarse_config(Some("stance".into()), &[GarmentKind::Cape]),
    )
    .unwrap();
    run_frames(&mut scene, 30, "stance");
    let good = scene.state.x.clone();
    let m = scene.model.clone();
    let free = (0..m.len()).find(|&i| !m.is_pinned(i)).unwrap();
    let pin = m.pins[0] as usize;
    let outside = |p: Vec3A| union_sdf(p.into(), &scene.proxy_frame, &scene.proxies.capsules);
    // 20 cm off the cloth, in a direction that stays clear of the body.
    let away = [Vec3::X, -Vec3::X, Vec3::Z, -Vec3::Z, Vec3::Y]
        .into_iter()
        .map(|d| Vec3A::from(d * 0.2))
        .find(|&d| outside(good[free] + d) > 0.01)
        .expect("a direction clear of the body");
    let inside = Vec3A::from(scene.proxy_frame.center[0]);
    assert!(outside(inside) < -0.01);
    for needle in [
        "non-finite",
        "off its target",
        "inside the body",
        "stretched",
    ] {
        scene.state.x.copy_from_slice(&good);
        let x = &mut scene.state.x;
        match needle {
            "non-finite" => x[free] = Vec3A::NAN,
            "off its target" => x[pin] += Vec3A::X * 1e-3,
            "inside the body" => x[free] = inside,
            _ => x[free] += away,
        }
        let e = check_frame(&scene).expect_err(needle);
        assert!(e.contains(needle), "{needle}: {e}");
    }
    scene.state.x.copy_from_slice(&good);
    assert_eq!(check_frame(&scene), Ok(()));
}

/// Every built-in clip has a test above.
#[test]
fn every_builtin_clip_has_a_dressed_test() {
    let ninja = drape::ninja::build().unwrap();
    let tested = [
        "tpose",
        "stance",
        "jab_cross",
        "front_kick",
        "roundhouse_kick",
        "spinning_back_kick",
        "kata",
    ];
    for c in &ninja.rig.clips {
        assert!(
            tested.contains(&c.name.as_str()),
            "clip {} has no test",
            c.name
        );
    }
}

#[test]
fn switching_skinning_and_clip_mid_run_does_not_explode() {
    let ninja = drape::ninja::build().unwrap();
    let rig = ninja.rig;
    let jab = rig.clip("jab_cross").unwrap();
    let mut scene = Scene::new(
        rig,
        coarse_config(
            Some("stance".into()),
            &[GarmentKind::Cape, GarmentKind::Sash],
        ),
    )
    .unwrap();
    run_frames(&mut scene, 40, "stance");
    scene.set_method(SkinMethod::Dqs);
    run_frames(&mut scene, 10, "stance dqs");
    scene.switch_clip(jab, 0.0);
    run_frames(&mut scene, 20, "cut to jab_cross");
    scene.set_method(SkinMethod::Lbs);
    run_frames(&mut scene, 10, "jab_cross lbs");
    let ke = scene.state.kinetic_energy();
    assert!(ke.is_finite() && ke < 10.0, "kinetic energy {ke} J");
}

#[test]
fn scene_file_parses_and_rejects_bad_input() {
    use drape::scene::SceneFile;
    let f = SceneFile::parse(
        "rig = \"ninja\"\nclip = \"stance\"\nskinning = \"dqs\"\nsubsteps = 8\n\
         [[garment]]\nkind = \"cape\"\nspacing = 0.05\n",
    )
    .unwrap();
    let c = f.config().unwrap();
    assert_eq!(c.method, SkinMethod::Dqs);
    assert_eq!(c.sim.substeps, 8);
    assert_eq!(c.garments.len(), 1);
    assert_eq!(c.garments[0].kind, GarmentKind::Cape);
    assert!((c.garments[0].spacing - 0.05).abs() < 1e-6);
    assert!(SceneFile::parse("bogus = 1").is_err());
    // Bad values are refused when the file is read, before anything is built (tests/scene_file.rs
    // covers every key).
    assert!(SceneFile::parse("[[garment]]\nkind = \"kimono\"\n").is_err());
    assert!(SceneFile::parse("fps = 1000").is_err());
}

/// Renders frames of the roundhouse kick with all garments to PNG (front and side views) for a
/// person to look at: `DRAPE_RENDER_DIR=out cargo test --test scene render -- --ignored`.
#[test]
#[ignore = "writes pictures; run by hand"]
fn render_roundhouse_frames() {
    use drape::math::{Vec2, Vec3};
    use drape::raster::{ortho, Canvas, Shading};
    let dir = std::path::PathBuf::from(
        std::env::var("DRAPE_RENDER_DIR").unwrap_or_else(|_| "target/scene_frames".into()),
    );
    std::fs::create_dir_all(&dir).unwrap();
    let ninja = drape::ninja::build().unwrap();
    let cfg = SceneConfig {
        clip: Some("roundhouse_kick".into()),
        ..SceneConfig::default()
    };
    let mut scene = Scene::new(ninja.rig, cfg).unwrap();
    let colours = [
        Vec3::new(0.6, 0.05, 0.05),
        Vec3::new(0.1, 0.1, 0.3),
        Vec3::new(0.8, 0.7, 0.2),
        Vec3::new(0.9, 0.9, 0.9),
    ];
    let total = 60 + 60;
    for f in 0..total {
        scene.step(1.0 / 60.0);
        if f % 15 != 14 {
            continue;
        }
        let mut sheet = Canvas::new(800, 400, [40, 40, 48]);
        for (v, fwd) in [Vec3::NEG_Z, Vec3::X].into_iter().enumerate() {
            let mut c = Canvas::new(400, 400, [40, 40, 48]);
            let cam = ortho(Vec3::new(0.0, 1.0, 0.0), fwd, Vec3::Y, 1.1, 1.1, 3.0);
            let body = &scene.rig.meshes[0];
            let idx = &body.indices;
            c.draw_mesh(
                &cam,
                scene.body_positions(0),
                scene.body_normals(0),
                &body.uvs,
                idx,
                scene.rig.textures.first(),
                &Shading::default(),
            );
            for g in 0..scene.garments.len() {
                let gf = scene.garment_frame(g);
                let tris: Vec<u32> = gf.triangles.iter().flatten().copied().collect();
                let sh = Shading {
                    base_color: colours[g % colours.len()],
                    ..Shading::default()
                };
                c.draw_mesh(
                    &cam,
                    &gf.positions,
                    &gf.normals,
                    &[] as &[Vec2],
                    &tris,
                    None,
                    &sh,
                );
            }
            sheet.blit(&c, 400 * v as u32, 0);
        }
        std::fs::write(
            dir.join(format!("frame{f:03}.png")),
            sheet.to_png().unwrap(),
        )
        .unwrap();
    }
}

fn khronos(name: &str) -> Option<std::path::PathBuf> {
    let rel = format!("khronos/{name}/{name}.glb");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/rigs")
        .join(&rel);
    let path = if path.exists() {
        path
    } else {
        std::path::Path::new("/work/shared/rigs").join(&rel)
    };
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: {} not found", path.display());
        None
    }
}

/// CesiumMan's bones have no Mixamo names: the humanoid bone map is guessed from the skeleton
/// (hips = the root of two legs and a spine, …) and the garments that fit it (the cape and the
/// headband) pass the every-frame checks over its whole walk, LBS and DQS.
#[test]
fn cesium_man_is_dressed_through_a_guessed_bone_map() {
    let Some(path) = khronos("CesiumMan") else {
        return;
    };
    let rig = drape::asset::load_rig(&path).unwrap();
    let world: Vec<_> = rig
        .skeleton
        .rest_world()
        .iter()
        .map(|m| m.transform_point3(drape::math::Vec3::ZERO))
        .collect();
    let map = drape::garments::BoneMap::guess(&rig.skeleton, &world).unwrap();
    let name = |b: &str| rig.skeleton.names[map.get(b).unwrap()].as_str();
    assert_eq!(name("Hips"), "Skeleton_torso_joint_1");
    assert_eq!(name("LeftUpLeg"), "leg_joint_L_1");
    assert_eq!(name("RightFoot"), "leg_joint_R_3");
    assert_eq!(name("Head"), "Skeleton_neck_joint_2");
    assert!(name("LeftHand").contains("_L_"));
    let clip = rig.clips[0].name.clone();
    for method in [SkinMethod::Lbs, SkinMethod::Dqs] {
        let mut cfg = coarse_config(
            Some(clip.clone()),
            &[GarmentKind::Cape, GarmentKind::Headband],
        );
        cfg.method = method;
        let mut scene = Scene::new(rig.clone(), cfg).unwrap();
        let frames = whole_clip_frames(&scene, &rig.clips[0]);
        run_frames(&mut scene, frames, &format!("CesiumMan ({method})"));
    }
}

/// The scene file's `[bones]` table overrides single bones; a node that does not exist is a
/// typed error naming it.
#[test]
fn bones_table_overrides_the_guess() {
    let Some(path) = khronos("CesiumMan") else {
        return;
    };
    let rig = drape::asset::load_rig(&path).unwrap();
    let f = drape::scene::SceneFile::parse(
        "[bones]\nHead = \"Skeleton_neck_joint_1\"\n[[garment]]\nkind = \"headband\"\n",
    )
    .unwrap();
    let cfg = f.config().unwrap();
    assert_eq!(
        cfg.bones,
        vec![("Head".into(), "Skeleton_neck_joint_1".into())]
    );
    assert!(Scene::new(rig.clone(), cfg).is_ok());
    let bad = drape::scene::SceneFile::parse("[bones]\nHead = \"no_such_node\"\n").unwrap();
    match Scene::new(rig, bad.config().unwrap()) {
        Err(drape::scene::SceneError::Garment(drape::garments::GarmentError::UnknownNode {
            node,
            ..
        })) => assert_eq!(node, "no_such_node"),
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("a missing node was accepted"),
    }
    let unknown = drape::scene::SceneFile::parse("[bones]\nTail = \"x\"\n").unwrap();
    assert!(unknown.config().is_err());
}

/// A rig that is not a humanoid (the Fox: four legs, no arms) is refused with a typed error,
/// not dressed wrongly and not a panic.
#[test]
fn a_rig_that_is_not_humanoid_is_refused_with_a_typed_error() {
    let Some(path) = khronos("Fox") else {
        return;
    };
    let rig = drape::asset::load_rig(&path).unwrap();
    match Scene::new(rig, SceneConfig::default()) {
        Err(drape::scene::SceneError::Garment(drape::garments::GarmentError::NotHumanoid(why))) => {
            assert!(!why.is_empty())
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(_) => panic!("the Fox was dressed as a humanoid"),
    }
}

/// The waist's pins ride on the trunk, but in a kick the thigh's proxy swings up over the hip
/// crease. A pin inside a collider holds its free neighbour, which the collider pushes out, a
/// whole penetration depth away: at the default resolution a hakama pin 17 mm inside the right
/// thigh in the front kick left its 15.3 mm spring at 130 % of rest (src/garments.rs raises
/// the waist there, as far as the kata's low-blocking forearm allows). In every pose of every
/// built-in clip, at 60 fps, skinned with LBS like the cloth's pins: every pin that holds free
/// cloth (a structural or shear spring to a free particle) is so little inside a limb's proxy
/// (if at all) that its free neighbours can lie outside it unstretched: depth plus the
/// cloth's thickness within the shortest such spring's rest length. (The sash's band is pinned
/// all over: its lowest row may brush a raised thigh without holding any free cloth.)
#[test]
fn pins_holding_cloth_stay_out_of_the_limbs_in_every_pose_of_every_clip() {
    use drape::anim::Pose;
    use drape::body::ProxyFrame;
    let ninja = drape::ninja::build().unwrap();
    let scene = Scene::new(ninja.rig, SceneConfig::default()).unwrap();
    let (rig, m) = (&scene.rig, &scene.model);
    let skin = &rig.skins[scene.config.skin];
    let on_limb = |s: u32| {
        let node = skin.joints[scene.proxies.joint[s as usize] as usize] as usize;
        let name = &rig.skeleton.names[node];
        ["Leg", "Foot", "Toe", "Arm", "Hand"]
            .iter()
            .any(|b| name.contains(b))
    };
    let limbs: Vec<[u32; 2]> = scene
        .proxies
        .capsules
        .iter()
        .copied()
        .filter(|&[a, b]| on_limb(a) && on_limb(b))
        .collect();
    assert!(limbs.len() >= 8, "{} limb capsules", limbs.len());
    // Per pinned particle: the shortest rest length of its springs to free particles (∞: it
    // holds no free cloth).
    let mut reach = vec![f32::INFINITY; m.len()];
    let l = &m.limits;
    for e in 0..l.len() {
        let (a, b) = (l.a[e] as usize, l.b[e] as usize);
        for (p, q) in [(a, b), (b, a)] {
            if m.is_pinned(p) && !m.is_pinned(q) {
                reach[p] = reach[p].min(l.rest[e]);
            }
        }
    }
    let mut pose = Pose::rest(&rig.skeleton);
    let (mut wfn, mut wfb, mut targets) = (Vec::new(), Vec::new(), Vec::new());
    let mut frame = ProxyFrame::default();
    let mut worst = vec![f32::INFINITY; m.garments.len()];
    for clip in &rig.clips {
        let n = (clip.duration() * 60.0).ceil() as usize;
        for k in 0..=n {
            pose.local.clone_from(&rig.skeleton.rest);
            let t = clip.start + clip.duration() * k as f32 / n.max(1) as f32;
            clip.sample(t, &mut pose);
            pose.world_from_node(&rig.skeleton, &mut wfn);
            drape::body::world_from_bind(&wfn, skin, &mut wfb);
            scene.proxies.update(&wfb, &mut frame);
            scene.pins.targets(&wfb, &mut targets);
            for (p, &i) in targets.iter().zip(&m.pins) {
                let i = i as usize;
                if !reach[i].is_finite() {
                    continue;
                }
                let g = m.garment_of[i] as usize;
                let d = union_sdf(*p, &frame, &limbs);
                worst[g] = worst[g].min(d);
                assert!(
                    -d + m.thickness[i] <= reach[i],
                    "{} at {t:.3} s: pin {i} of {} is {:.1} mm inside a limb (its spring {:.1} mm)",
                    clip.name,
                    m.garments[g].name,
                    -d * 1e3,
                    reach[i] * 1e3
                );
            }
        }
    }
    for (g, w) in m.garments.iter().zip(&worst) {
        println!(
            "{}: pins holding cloth {:+.1} mm from the limbs",
            g.name,
            w * 1e3
        );
    }
}
