//! The viewer's UI state → scene mapping, without a window: every control is an `Action`
//! applied by `Viewer::apply`, and these tests check what each one does to the scene.

#[path = "support/tools.rs"]
mod tools;

use drape::anim::player::RootMotion;
use drape::app::settings::{FabricParam, FabricPreset, SettingsStore, ViewerSettings};
use drape::app::viewer::{parse_scheduled, Action, Level, Viewer};
use drape::cloth::wet::{AdhesionMode, Fabric};
use drape::cloth::{ClothModelKind, Integrator};
use drape::garments::{GarmentKind, HakamaStyle};
use drape::skin::SkinMethod;

fn ninja() -> drape::Rig {
    drape::cli::load_character(None, &Default::default()).expect("built-in ninja")
}

fn viewer() -> Viewer {
    Viewer::new(ninja(), "built-in ninja", ViewerSettings::default()).expect("viewer")
}

fn kinds(v: &Viewer) -> Vec<GarmentKind> {
    v.scene.garments.iter().map(|g| g.kind).collect()
}

fn errors(v: &Viewer) -> Vec<String> {
    v.messages
        .iter()
        .filter(|(l, _)| *l == Level::Error)
        .map(|(_, m)| m.clone())
        .collect()
}

#[test]
fn defaults_dress_the_ninja_in_all_garments_playing_the_roundhouse_kick() {
    let v = viewer();
    assert_eq!(kinds(&v), GarmentKind::ALL.to_vec());
    let clip = v.scene.clip.expect("a clip");
    assert_eq!(v.rig().clips[clip].name, "roundhouse_kick");
    assert_eq!(v.scene.config.method, SkinMethod::Lbs);
    assert!(v.scene.config.sim.self_collision);
    assert_eq!(v.scene.config.sim.substeps, 16);
    assert!(v.scene.particle_count() > 1000);
    assert!(errors(&v).is_empty(), "{:?}", v.messages);
}

#[test]
fn method_clip_playback_and_time_reach_the_scene() {
    let mut v = viewer();
    // Skinning method: the scene skins with it, and the body really changes at a bent pose.
    v.apply(Action::Seek(0.8));
    v.apply(Action::SetMethod(SkinMethod::Lbs));
    v.apply(Action::Seek(0.8));
    let lbs: Vec<_> = v.scene.body_positions(0).to_vec();
    v.apply(Action::SetMethod(SkinMethod::Dqs));
    assert_eq!(v.scene.config.method, SkinMethod::Dqs);
    assert_eq!(v.settings.method, SkinMethod::Dqs);
    v.apply(Action::Seek(0.8));
    let dqs = v.scene.body_positions(0);
    let moved = lbs
        .iter()
        .zip(dqs)
        .filter(|(a, b)| (**a - **b).length() > 1e-3)
        .count();
    assert!(
        moved > 100,
        "only {moved} vertices differ between LBS and DQS"
    );

    // Clips by name; an unknown one is an error in the panel, not a crash.
    v.apply(Action::SelectClip("kata".into()));
    assert_eq!(v.rig().clips[v.scene.clip.unwrap()].name, "kata");
    assert_eq!(v.settings.clip.as_deref(), Some("kata"));
    v.apply(Action::SelectClip("moonwalk".into()));
    assert_eq!(v.rig().clips[v.scene.clip.unwrap()].name, "kata");
    let e = errors(&v);
    assert!(
        e.iter()
            .any(|m| m.contains("moonwalk") && m.contains("kata")),
        "{e:?}"
    );

    // Paused: time stands still. Playing: 1/60 s per 1/60 s, scaled by the speed.
    v.apply(Action::Pause);
    let t0 = v.scene.time;
    let r = v.tick(0.1);
    assert_eq!((r.steps, v.scene.time), (0, t0));
    v.apply(Action::TogglePlay);
    v.tick(1.0 / 60.0);
    assert!((v.scene.time - t0 - 1.0 / 60.0).abs() < 1e-5);
    v.apply(Action::SetSpeed(0.5));
    let t1 = v.scene.time;
    v.tick(1.0 / 30.0);
    assert!((v.scene.time - t1 - 1.0 / 60.0).abs() < 1e-5);
    // Out of range (0.05 … 2): refused with a message, not clamped (drape::limits).
    v.apply(Action::SetSpeed(100.0));
    assert_eq!(v.settings.speed, 0.5);
    assert!(v
        .messages
        .last()
        .unwrap()
        .1
        .contains("speed = 100 is out of range"));

    // Root motion and looping reach the player.
    v.apply(Action::SetRootMotion(RootMotion::Travel));
    assert_eq!(v.scene.player.root_motion(), RootMotion::Travel);
    v.apply(Action::SetLoop(false));
    assert_eq!(
        v.scene.player.loop_mode(),
        drape::anim::player::LoopMode::Once
    );
}

#[test]
fn a_slow_simulation_drops_time_and_says_so() {
    let mut v = viewer();
    v.budget = std::time::Duration::ZERO;
    let r = v.tick(0.2);
    assert_eq!(
        r.steps, 1,
        "one step per redraw at least, then the budget stops it"
    );
    assert!(r.lagging);
    // Nothing owed is carried over: the next redraw does not try to catch up.
    let r = v.tick(1.0 / 60.0);
    assert_eq!(r.steps, 1);
    assert!(!r.lagging);
}

#[test]
fn garment_checkboxes_rebuild_with_exactly_those_garments() {
    let mut v = viewer();
    let all = v.scene.particle_count();
    let generation = v.scene_generation;
    v.apply(Action::SetGarment(GarmentKind::Cape, false));
    v.apply(Action::SetGarment(GarmentKind::Headband, false));
    assert!(v.rebuild_pending());
    assert_eq!(kinds(&v).len(), 4, "rebuilt only on flush (slider let go)");
    v.flush();
    assert_eq!(kinds(&v), vec![GarmentKind::Hakama, GarmentKind::Sash]);
    assert_eq!(v.scene_generation, generation + 1);
    assert!(v.scene.particle_count() < all);
    v.apply(Action::SetGarment(GarmentKind::Cape, true));
    v.flush();
    assert_eq!(
        kinds(&v),
        vec![GarmentKind::Cape, GarmentKind::Hakama, GarmentKind::Sash]
    );
}

#[test]
fn fabric_edits_reach_the_garment_params_in_their_units() {
    let mut v = viewer();
    v.apply(Action::SetFabric(
        GarmentKind::Cape,
        FabricParam::KBend,
        2.5,
    ));
    v.apply(Action::SetFabric(
        GarmentKind::Cape,
        FabricParam::AreaDensity,
        0.4,
    ));
    v.apply(Action::SetFabric(
        GarmentKind::Sash,
        FabricParam::Friction,
        99.0,
    ));
    v.flush();
    let cape = &v.scene.config.garments[0];
    assert_eq!(cape.kind, GarmentKind::Cape);
    assert_eq!(cape.fabric.k_bend, 2.5); // N/m per spring
    assert_eq!(cape.fabric.area_density, 0.4); // kg/m²
                                               // The built model carries them: the cape's garment info and its masses (density × area).
    let info = &v.scene.model.garments[0];
    assert_eq!(info.params.area_density, 0.4);
    let mass: f32 = v.scene.model.mass_dry[info.particles.clone()].iter().sum();
    let area: f32 = v.scene.model.triangle_area[info.triangles.clone()]
        .iter()
        .sum();
    assert!((mass / area - 0.4).abs() < 0.02, "{mass} kg over {area} m²");
    // Out-of-range values are refused with a message naming the range (μ ≤ 2), not clamped
    // (drape::limits): the sash keeps its own friction.
    let sash = &v.scene.config.garments[2];
    assert_eq!(
        (sash.kind, sash.fabric.friction),
        (GarmentKind::Sash, GarmentKind::Sash.fabric().friction)
    );
    let (_, last) = v.messages.last().unwrap();
    assert!(
        last.contains("fabric.sash.friction = 99 is out of range: allowed 0 … 2"),
        "{last}"
    );

    v.apply(Action::SetFabricPreset(FabricPreset::Denim));
    v.flush();
    for g in &v.scene.config.garments {
        assert_eq!(g.fabric, FabricPreset::Denim.fabric(g.kind));
    }
    v.apply(Action::SetFabricPreset(FabricPreset::Garment));
    v.flush();
    for g in &v.scene.config.garments {
        assert_eq!(g.fabric, g.kind.fabric());
    }
}

/// "Cloth meets the visible skin": on by default on every substep; off acts live; back on
/// follows the substeps, and a scene built without the skin's surface is rebuilt with one.
#[test]
fn skin_contact_toggles_live_and_follows_the_substeps() {
    let mut v = viewer();
    assert_eq!(v.scene.config.sim.skin_contact, 16);
    assert!(!v.scene.workspace.skin.is_empty());
    let generation = v.scene_generation;
    v.apply(Action::SetSkinContact(false));
    assert_eq!(v.scene.config.sim.skin_contact, 0);
    v.apply(Action::SetSubsteps(24));
    assert_eq!(v.scene.config.sim.skin_contact, 0);
    v.apply(Action::SetSkinContact(true));
    assert_eq!(v.scene.config.sim.skin_contact, 24);
    assert!(!v.rebuild_pending());
    assert_eq!(v.scene_generation, generation);
    v.tick(1.0 / 30.0);
    assert!(v.scene.state.is_finite());
    // Off across a rebuild: the new scene has no surface; turning it on rebuilds with one.
    v.apply(Action::SetSkinContact(false));
    v.apply(Action::SetModel(ClothModelKind::Xpbd));
    v.flush();
    assert!(v.scene.workspace.skin.is_empty());
    assert_eq!(v.scene.config.sim.skin_contact, 0);
    v.apply(Action::SetSkinContact(true));
    assert!(v.rebuild_pending());
    v.flush();
    assert!(!v.scene.workspace.skin.is_empty());
    assert_eq!(v.scene.config.sim.skin_contact, 24);
    assert!(errors(&v).is_empty(), "{:?}", v.messages);
}

#[test]
fn world_parameters_act_live_without_a_rebuild() {
    let mut v = viewer();
    let generation = v.scene_generation;
    v.apply(Action::SetSubsteps(8));
    v.apply(Action::SetSelfCollision(false));
    v.apply(Action::SetWindSpeed(10.0));
    v.apply(Action::SetWindAzimuth(90.0));
    v.apply(Action::SetWindGusts(0.25));
    let sim = &v.scene.config.sim;
    assert_eq!(sim.substeps, 8);
    assert!(!sim.self_collision);
    assert!((sim.wind.velocity - drape::math::Vec3::new(10.0, 0.0, 0.0)).length() < 1e-4);
    assert_eq!(sim.wind.gust_amplitude, 0.25);
    assert_eq!(v.scene_generation, generation);
    assert!(!v.rebuild_pending());
    // The integrator changes how the state is advanced: it restarts the simulation.
    v.apply(Action::SetIntegrator(Integrator::SymplecticEuler));
    v.flush();
    assert_eq!(v.scene.config.sim.integrator, Integrator::SymplecticEuler);
    assert_eq!(v.scene.config.sim.substeps, 8, "kept across the rebuild");
    assert_eq!(v.scene_generation, generation + 1);
    // So does the cloth model (XPBD beside the mass-spring reference); choosing the one in use
    // does nothing.
    v.apply(Action::SetModel(ClothModelKind::Xpbd));
    v.flush();
    assert_eq!(v.scene.config.sim.model, ClothModelKind::Xpbd);
    assert_eq!(v.scene_generation, generation + 2);
    v.tick(1.0 / 30.0);
    assert!(v.scene.state.is_finite());
    v.apply(Action::SetModel(ClothModelKind::Xpbd));
    assert!(!v.rebuild_pending());
}

#[test]
fn the_hakama_cut_is_chosen_in_the_panel_and_rebuilds_the_garments() {
    let mut v = viewer();
    let generation = v.scene_generation;
    let hakama = |v: &Viewer| {
        v.scene
            .config
            .garments
            .iter()
            .find(|g| g.kind == GarmentKind::Hakama)
            .map(|g| g.style)
    };
    assert_eq!(hakama(&v), Some(HakamaStyle::HalfSkirts));
    let skirts = v.scene.particle_count();
    v.apply(Action::parse("hakama=divided").unwrap());
    assert!(v.rebuild_pending());
    v.flush();
    assert_eq!(v.scene_generation, generation + 1);
    assert_eq!(v.settings.hakama_style, HakamaStyle::Divided);
    assert_eq!(hakama(&v), Some(HakamaStyle::Divided));
    assert_ne!(v.scene.particle_count(), skirts, "a different garment");
    for _ in 0..10 {
        v.tick(1.0 / 60.0);
    }
    assert!(v.scene.state.is_finite());
    // Choosing the cut in use asks for nothing; a name it does not know is refused.
    v.apply(Action::SetHakamaStyle(HakamaStyle::Divided));
    assert!(!v.rebuild_pending());
    assert!(Action::parse("hakama=kilt").is_err());
}

#[test]
fn particle_spacing_trades_detail_for_speed_after_one_rebuild() {
    let mut v = viewer();
    let fine = v.scene.particle_count();
    let generation = v.scene_generation;
    v.apply(Action::SetSpacingScale(1.5));
    assert!(v.rebuild_pending(), "waits for the slider to be let go");
    assert_eq!(v.scene.particle_count(), fine);
    v.flush();
    assert_eq!(v.scene_generation, generation + 1);
    let coarse = v.scene.particle_count();
    // Particles ∝ 1/spacing² (rings and rows round to whole counts).
    let ratio = coarse as f64 / fine as f64;
    assert!((0.35..0.55).contains(&ratio), "{coarse} of {fine}");
    for g in &v.scene.config.garments {
        let want = 1.5 * g.kind.default_spacing();
        assert!((g.spacing - want).abs() < 1e-6, "{:?}", g.kind);
    }
    // The same value again asks for nothing. Out-of-range values are refused with a message and
    // change nothing (they used to be clamped silently; drape::limits is one rule for scene
    // files, flags and the viewer, and none of them clamps).
    v.apply(Action::SetSpacingScale(1.5));
    assert!(!v.rebuild_pending());
    for bad in [100.0, 0.0, f32::NAN] {
        v.apply(Action::SetSpacingScale(bad));
        assert_eq!(v.settings.spacing_scale, 1.5);
        assert!(!v.rebuild_pending());
        let (_, last) = v.messages.last().unwrap();
        assert!(
            last.starts_with("spacing = ") && last.contains("0.75 … 3"),
            "{last}"
        );
    }
    // Other rebuilds keep it.
    v.apply(Action::SetSpacingScale(1.25));
    v.apply(Action::ResetSim);
    for g in &v.scene.config.garments {
        assert!((g.spacing - 1.25 * g.kind.default_spacing()).abs() < 1e-6);
    }
}

#[test]
fn wet_controls_reach_wet_params_and_every_particle() {
    let mut v = viewer();
    let dry_mass: f64 = drape::cloth::wet::total_mass(&v.scene.state);
    v.apply(Action::SetWetFabric("coarse-wool".into()));
    v.apply(Action::SetWetness(0.5));
    assert!(v.scene.state.wet.iter().all(|&w| w == 0.0), "still dry");
    v.apply(Action::SetWet(true));
    let b = Fabric::COARSE_WOOL.saturation;
    assert!(v
        .scene
        .state
        .wet
        .iter()
        .all(|&w| (w - 0.5 * b).abs() < 1e-6));
    let wet_mass = drape::cloth::wet::total_mass(&v.scene.state);
    assert!(((wet_mass / dry_mass) - (1.0 + 0.5 * b as f64)).abs() < 1e-3);
    v.apply(Action::SetAdhesionScale(2.5));
    v.apply(Action::SetAdhesion(AdhesionMode::AreaBased));
    v.apply(Action::SetSelfAdhesion(false));
    let wet = &v.scene.config.sim.wet;
    assert_eq!(
        (wet.scale, wet.adhesion, wet.self_adhesion),
        (2.5, AdhesionMode::AreaBased, false)
    );
    // A rebuild keeps the garments wet and the adhesion settings.
    v.apply(Action::ResetSim);
    assert!(v
        .scene
        .state
        .wet
        .iter()
        .all(|&w| (w - 0.5 * b).abs() < 1e-6));
    assert_eq!(v.scene.config.sim.wet.scale, 2.5);
    v.apply(Action::SetWet(false));
    assert!(v.scene.state.wet.iter().all(|&w| w == 0.0));
    v.apply(Action::SetWetFabric("silk".into()));
    assert!(errors(&v).iter().any(|m| m.contains("silk")));
}

#[test]
fn a_bad_character_file_leaves_the_current_one_loaded() {
    let mut v = viewer();
    let particles = v.scene.particle_count();
    let dir = std::env::temp_dir().join(format!("drape_viewer_bad_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("broken.glb");
    std::fs::write(&bad, b"glTF\x02\x00\x00\x00garbage").unwrap();
    for path in [bad.clone(), dir.join("missing.glb")] {
        v.apply(Action::LoadCharacter(path.clone()));
        assert_eq!(v.character, "built-in ninja");
        assert_eq!(v.character_generation, 0);
        assert_eq!(v.scene.particle_count(), particles);
        let e = errors(&v);
        assert!(
            e.last()
                .is_some_and(|m| m.contains(&*path.to_string_lossy())),
            "{e:?}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn shading_debug_camera_and_reset_to_defaults() {
    let mut v = viewer();
    v.apply(Action::SetBodyShader("toon".into()));
    v.apply(Action::SetGarmentShader("pastel".into()));
    v.apply(Action::ShowProxies(true));
    v.apply(Action::ShowBvh(true));
    v.apply(Action::SetLight(390.0, 80.0));
    // An elevation beyond 5 … 90° is refused with a message (drape::limits), not clamped.
    v.apply(Action::SetLight(30.0, 200.0));
    assert!(v
        .messages
        .iter()
        .any(|(_, m)| m.contains("light elevation")));
    assert_eq!(v.settings.body_shader, "toon");
    assert_eq!(
        v.settings.garment_shader, "phong",
        "an unknown shader is refused"
    );
    assert!(errors(&v).iter().any(|m| m.contains("pastel")));
    assert!(v.settings.show_proxies && v.settings.show_bvh);
    assert_eq!(
        (v.settings.light_azimuth, v.settings.light_elevation),
        (30.0, 80.0),
        "azimuths wrap around"
    );
    let d = v.camera.distance;
    v.apply(Action::Zoom(2.0));
    assert!(v.camera.distance < d);
    v.apply(Action::SetMethod(SkinMethod::Dqs));
    v.apply(Action::SetGarment(GarmentKind::Cape, false));
    v.apply(Action::ResetDefaults);
    assert_eq!(v.settings, ViewerSettings::default());
    assert_eq!(v.scene.config.method, SkinMethod::Lbs);
    assert_eq!(kinds(&v), GarmentKind::ALL.to_vec());
    assert!(v.frame_requested);
}

#[test]
fn command_line_actions_parse_to_the_same_actions() {
    let cases = [
        ("method=dqs", Action::SetMethod(SkinMethod::Dqs)),
        ("clip=kata", Action::SelectClip("kata".into())),
        ("pause", Action::Pause),
        ("seek=0.5", Action::Seek(0.5)),
        (
            "garment.cape=off",
            Action::SetGarment(GarmentKind::Cape, false),
        ),
        (
            "fabric.hakama.k_bend=3",
            Action::SetFabric(GarmentKind::Hakama, FabricParam::KBend, 3.0),
        ),
        ("fabric=wool", Action::SetFabricPreset(FabricPreset::Wool)),
        ("wet=on", Action::SetWet(true)),
        ("wind=8", Action::SetWindSpeed(8.0)),
        ("light=10,45", Action::SetLight(10.0, 45.0)),
        (
            "integrator=euler",
            Action::SetIntegrator(Integrator::SymplecticEuler),
        ),
        (
            "root_motion=travel",
            Action::SetRootMotion(RootMotion::Travel),
        ),
        ("proxies=on", Action::ShowProxies(true)),
        ("model=xpbd", Action::SetModel(ClothModelKind::Xpbd)),
        (
            "hakama=divided",
            Action::SetHakamaStyle(HakamaStyle::Divided),
        ),
        ("inside=on", Action::ShowInside(true)),
        ("check", Action::CheckClip),
        (
            "cloth.Rogue_Cape=on",
            Action::SimulateAsCloth("Rogue_Cape".into(), true),
        ),
        ("hide.Mug=off", Action::HideMesh("Mug".into(), false)),
        ("spacing=1.25", Action::SetSpacingScale(1.25)),
    ];
    for (text, want) in cases {
        assert_eq!(Action::parse(text), Ok(want), "{text}");
    }
    assert_eq!(
        parse_scheduled("method=cor@60"),
        Ok((60, Action::SetMethod(SkinMethod::Cor)))
    );
    assert_eq!(parse_scheduled("play"), Ok((1, Action::Play)));
    for bad in [
        "method=magic",
        "teleport=1",
        "seek=soon",
        "wet=maybe",
        "garment.cloak=on",
        "fabric.cape.stretchiness=1",
        "method",
        "pause@0",
        "pause@x",
        "light=10",
        "spacing=fine",
    ] {
        assert!(
            Action::parse(bad).is_err() || parse_scheduled(bad).is_err(),
            "{bad} accepted"
        );
    }
}

#[test]
fn settings_round_trip_and_survive_corrupt_files() {
    let mut s = ViewerSettings {
        method: SkinMethod::Cor,
        clip: Some("kata".into()),
        speed: 0.5,
        garments: [true, false, true, false],
        substeps: 24,
        spacing_scale: 1.5,
        wet: true,
        wet_fabric: "high-absorption".into(),
        adhesion: AdhesionMode::Off,
        body_shader: "toon".into(),
        show_bvh: true,
        root_motion: RootMotion::Travel,
        hakama_style: HakamaStyle::Divided,
        ..Default::default()
    };
    FabricParam::KBend.set(&mut s.fabrics[1], 7.5).unwrap();
    let (back, warnings) = ViewerSettings::from_toml(&s.to_toml());
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(back, s);

    // Not TOML at all: defaults and one warning.
    let (d, w) = ViewerSettings::from_toml("\u{0}\u{1}[[[ not toml");
    assert_eq!(d, ViewerSettings::default());
    assert_eq!(w.len(), 1);
    // Half-valid: the good values are kept, each bad one is named.
    let (p, w) = ViewerSettings::from_toml(
        "method = \"dqs\"\nspeed = 50.0\nsubsteps = 0\nspacing_scale = 9.0\nbody_shader = \"pastel\"\n\
         garments = [\"cape\", \"cloak\"]\n[fabric.cape]\nk_bend = 3.0\nstretch = 1.0\n",
    );
    assert_eq!(p.method, SkinMethod::Dqs);
    assert_eq!(p.speed, 1.0);
    assert_eq!(p.substeps, 16);
    assert_eq!(p.spacing_scale, 1.0);
    assert_eq!(p.body_shader, "texture");
    assert_eq!(p.garments, [true, false, false, false]);
    assert_eq!(p.fabrics[0].k_bend, 3.0);
    for needle in [
        "speed",
        "substeps",
        "spacing_scale",
        "pastel",
        "cloak",
        "stretch",
    ] {
        assert!(w.iter().any(|m| m.contains(needle)), "{needle}: {w:?}");
    }
}

#[test]
fn settings_files_are_written_atomically_and_optional() {
    let dir = std::env::temp_dir().join(format!("drape_viewer_settings_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = SettingsStore::at(dir.join("drape").join("viewer.toml"));
    // No file yet: defaults, no warning.
    assert_eq!(store.load(), (ViewerSettings::default(), vec![]));
    let s = ViewerSettings {
        method: SkinMethod::Dqs,
        model: ClothModelKind::Xpbd,
        ..Default::default()
    };
    store.save(&s).unwrap();
    assert_eq!(store.load(), (s.clone(), vec![]));
    // Only the settings file is left in the folder (no temporary file).
    let names: Vec<_> = std::fs::read_dir(dir.join("drape"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("viewer.toml")]);
    // A corrupt file: warning naming it, defaults.
    std::fs::write(store.path.as_ref().unwrap(), b"method = [").unwrap();
    let (d, w) = store.load();
    assert_eq!(d, ViewerSettings::default());
    assert!(w[0].contains("viewer.toml"), "{w:?}");
    // The no-settings store reads defaults and writes nothing.
    let none = SettingsStore::none();
    assert_eq!(none.load().0, ViewerSettings::default());
    none.save(&s).unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

/// The garment check in the viewer (issue 19, point 5): the cloth against the visible skin at the
/// current frame, on request, and `drape check`'s verdict on the clip, from a background thread.
#[test]
fn the_viewer_marks_cloth_inside_the_skin_and_gives_the_check_verdict() {
    let mut v = viewer();
    v.apply(Action::SetSpacingScale(3.0));
    v.apply(Action::SelectClip("tpose".into()));
    v.flush();
    v.apply(Action::Pause);
    // Off by default: nothing measured.
    v.tick(1.0 / 60.0);
    assert!(v.inspect.garments().is_empty());
    v.apply(Action::ShowInside(true));
    let g = v.inspect.garments().to_vec();
    assert_eq!(g.len(), v.scene.garments.len());
    assert!(g.iter().all(|g| g.vertices > 0), "{g:?}");
    // A free hakama particle moved to the chest's joint is deep inside and gets marked.
    let hakama = v
        .scene
        .garments
        .iter()
        .position(|g| g.kind == GarmentKind::Hakama)
        .expect("hakama");
    let range = v.scene.model.garments[hakama].particles.clone();
    let i = range
        .clone()
        .find(|&i| !v.scene.model.is_pinned(i))
        .expect("a free particle");
    let names = &v.scene.rig.skeleton.names;
    let chest = names
        .iter()
        .position(|n| n.ends_with("Spine1"))
        .map(|h| v.scene.world_from_node()[h].w_axis.truncate())
        .expect("a chest joint");
    v.scene.state.x[i] = chest.into();
    v.scene.time += 1e-3; // a new frame for the inspector
    v.tick(1.0 / 60.0);
    let now = &v.inspect.garments()[hakama];
    assert!(now.deep >= 1 && now.deepest > 0.05, "{now:?}");
    let marked: Vec<(usize, f32)> = v.inspect.inside_particles(&v.scene).collect();
    assert!(
        marked.iter().any(|&(j, d)| j == i && d > 0.05),
        "{marked:?}"
    );
    v.apply(Action::ShowInside(false));
    assert!(v.inspect.garments().is_empty());
    assert_eq!(v.inspect.inside_particles(&v.scene).count(), 0);

    // The clip's verdict, as `drape check` gives it, while the viewer keeps going.
    v.apply(Action::ResetSim);
    v.apply(Action::CheckClip);
    assert!(v.inspect.checking());
    v.apply(Action::CheckClip); // a second one is refused while the first runs
    assert!(v
        .messages
        .iter()
        .any(|(l, m)| *l == Level::Warning && m.contains("already running")));
    let start = std::time::Instant::now();
    while v.inspect.checking() {
        assert!(start.elapsed().as_secs() < 600, "the check never ended");
        std::thread::sleep(std::time::Duration::from_millis(50));
        v.tick(1.0 / 60.0);
    }
    match v.inspect.status() {
        Some(drape::app::inspect::CheckStatus::Done { clip, result, .. }) => {
            assert_eq!(clip, "tpose");
            let r = result.as_ref().expect("a report");
            assert_eq!(r.garments.len(), v.scene.garments.len());
            assert!(r.frames > 0);
        }
        s => panic!("no verdict: {s:?}"),
    }
    assert!(v
        .messages
        .iter()
        .any(|(_, m)| m.starts_with("check of 'tpose'")));
}

#[test]
fn simulate_as_cloth_turns_a_mesh_of_the_character_into_a_garment_and_back() {
    // The built-in ninja is one mesh (its whole body); the KayKit Rogue wears a rigid cape.
    let Some(mut v) = rogue_viewer() else { return };
    let cape = v
        .character_meshes()
        .into_iter()
        .find(|m| m.contains("Cape"))
        .expect("the Rogue has a cape");
    let meshes = v.rig().meshes.len();
    let uploaded = v.character_generation;
    v.apply(Action::SimulateAsCloth(cape.clone(), true));
    v.flush();
    assert!(v.character_generation > uploaded, "the body drawn changes");
    assert!(kinds(&v).contains(&GarmentKind::Mesh), "{:?}", v.messages);
    assert_eq!(v.rig().meshes.len(), meshes - 1, "the cape left the body");
    assert!(
        v.character_meshes().contains(&cape),
        "still listed, to stop it"
    );
    v.apply(Action::SimulateAsCloth(cape, false));
    v.flush();
    assert!(!kinds(&v).contains(&GarmentKind::Mesh));
    assert_eq!(v.rig().meshes.len(), meshes);
}

/// A prop the file shows with every other is taken off in the panel ("hide") and put back:
/// the scene's body loses the mesh and says so, the panel still lists it; a name the character
/// does not have is refused with a message and changes nothing.
#[test]
fn a_mesh_of_the_character_is_hidden_and_shown_again() {
    let Some(mut v) = rogue_viewer() else { return };
    let crossbow = v
        .character_meshes()
        .into_iter()
        .find(|m| m.starts_with("2H_Crossbow"))
        .expect("the Rogue holds a crossbow");
    let meshes = v.rig().meshes.len();
    let uploaded = v.character_generation;
    v.apply(Action::HideMesh(crossbow.clone(), true));
    v.flush();
    assert_eq!(v.rig().meshes.len(), meshes - 1, "{:?}", v.messages);
    // The window uploads the body again (its meshes are indexed as the scene's).
    assert!(v.character_generation > uploaded);
    assert_eq!(v.scene.hidden, [crossbow.clone()]);
    assert!(v.character_meshes().contains(&crossbow), "still listed");
    v.apply(Action::HideMesh(crossbow.clone(), false));
    v.flush();
    assert_eq!(v.rig().meshes.len(), meshes);
    assert!(v.scene.hidden.is_empty());
    v.apply(Action::HideMesh("Crossbow".into(), true));
    v.flush();
    assert_eq!(v.rig().meshes.len(), meshes);
    assert!(
        errors(&v).iter().any(|e| e.contains("no mesh 'Crossbow'")),
        "{:?}",
        v.messages
    );
}

/// A viewer on the KayKit Rogue from ../shared/rigs/cc0, without the library's garments
/// (fitting them sweeps its 76 clips); `None`, saying SKIPPED, when the folder is not there (a
/// failure under `DRAPE_REQUIRE_ALL=1`, as CI sets).
fn rogue_viewer() -> Option<Viewer> {
    let path = tools::cc0_file("KayKit_Rogue/Rogue.glb")?;
    let rig = drape::asset::load_rig(&path).unwrap();
    let settings = ViewerSettings {
        garments: [false; 4],
        ..Default::default()
    };
    Some(Viewer::new(rig, "Rogue", settings).expect("viewer"))
}
