//! The egui panel: reads the [`Viewer`] and emits [`Action`]s — it changes nothing itself.

use super::settings::{FabricParam, FabricPreset, SHADER_NAMES};
use super::viewer::{Action, Level, Viewer};
use crate::anim::player::RootMotion;
use crate::cloth::wet::{AdhesionMode, Fabric};
use crate::cloth::{ClothModelKind, Integrator};
use crate::garments::{GarmentKind, HakamaStyle};
use crate::skin::SkinMethod;

/// The panel's own UI state (not settings).
#[derive(Default)]
pub struct PanelState {
    /// The "open file" path field.
    pub path: String,
    /// Which garment's fabric the sliders edit (index into `GarmentKind::ALL`).
    pub fabric_garment: usize,
    /// The stats line (written by the window each frame).
    pub stats: String,
    /// The character mesh picked for "simulate as cloth" (index into its meshes).
    pub cloth_mesh: usize,
    /// Where settings are saved, for the panel's footer.
    pub settings_path: String,
}

/// The keyboard shortcuts, as the help panel lists them.
pub const SHORTCUTS: [(&str, &str); 14] = [
    ("1 / 2 / 3", "skinning LBS / DQS / CoR"),
    ("Space", "play / pause"),
    ("← / →", "step the clip back / forward 1/30 s (paused)"),
    ("R", "reset the simulation"),
    ("F", "frame the character"),
    ("G", "follow the character on / off"),
    ("P / B / K", "show proxies / BVH / skeleton"),
    ("W", "wireframe"),
    ("I", "mark cloth inside the skin"),
    ("H or F1", "this help"),
    ("left drag", "orbit"),
    ("right or middle drag", "pan"),
    ("wheel", "zoom"),
    ("drop a .glb/.gltf/.fbx", "open it"),
];

/// Whether the user changed a widget (egui also reports `changed` when a slider clamps or rounds
/// a value it was handed, e.g. the timeline following the clip; that must not emit an Action).
fn edited(r: &egui::Response) -> bool {
    r.changed() && (r.dragged() || r.is_pointer_button_down_on() || r.has_focus() || r.clicked())
}

fn slider(
    ui: &mut egui::Ui,
    value: f32,
    range: std::ops::RangeInclusive<f32>,
    text: &str,
    out: &mut Vec<Action>,
    make: impl FnOnce(f32) -> Action,
) {
    let mut v = value;
    if edited(&ui.add(egui::Slider::new(&mut v, range).text(text))) {
        out.push(make(v));
    }
}

fn check(
    ui: &mut egui::Ui,
    value: bool,
    text: &str,
    out: &mut Vec<Action>,
    make: impl FnOnce(bool) -> Action,
) {
    let mut v = value;
    if ui.checkbox(&mut v, text).changed() {
        out.push(make(v));
    }
}

/// Draws the side panel, the stats line and the help window; returns the panel's width in
/// pixels... in points (the window converts).
pub fn show(
    ui: &mut egui::Ui,
    viewer: &Viewer,
    state: &mut PanelState,
    out: &mut Vec<Action>,
) -> f32 {
    let ctx = ui.ctx().clone();
    let s = &viewer.settings;
    egui::Panel::bottom("stats").show(ui, |ui| {
        ui.monospace(&state.stats);
    });
    let panel = egui::Panel::left("controls")
        .default_size(310.0)
        .resizable(true)
        .show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                ui.heading("drape");
                for (level, msg) in &viewer.messages {
                    let color = match level {
                        Level::Info => ui.visuals().weak_text_color(),
                        Level::Warning => egui::Color32::from_rgb(230, 180, 60),
                        Level::Error => egui::Color32::from_rgb(240, 90, 80),
                    };
                    ui.colored_label(color, msg);
                }
                egui::CollapsingHeader::new("Character")
                    .default_open(true)
                    .show(ui, |ui| character(ui, viewer, state, out));
                egui::CollapsingHeader::new("Animation")
                    .default_open(true)
                    .show(ui, |ui| animation(ui, viewer, out));
                egui::CollapsingHeader::new("Garments")
                    .default_open(true)
                    .show(ui, |ui| garments(ui, viewer, state, out));
                egui::CollapsingHeader::new("Wet cloth")
                    .default_open(false)
                    .show(ui, |ui| wet(ui, viewer, out));
                egui::CollapsingHeader::new("Check against the skin")
                    .default_open(viewer.inspect.show_inside || viewer.inspect.status().is_some())
                    .show(ui, |ui| inspect(ui, viewer, out));
                egui::CollapsingHeader::new("Shading & views")
                    .default_open(false)
                    .show(ui, |ui| shading(ui, viewer, out));
                egui::CollapsingHeader::new("Camera")
                    .default_open(false)
                    .show(ui, |ui| {
                        check(
                            ui,
                            s.follow,
                            "follow the character (G)",
                            out,
                            Action::SetFollow,
                        );
                        ui.horizontal(|ui| {
                            if ui.button("Frame (F)").clicked() {
                                out.push(Action::FrameCamera);
                            }
                            if ui.button("Reset view").clicked() {
                                out.push(Action::ResetCamera);
                            }
                        });
                    });
                ui.separator();
                ui.horizontal(|ui| {
                    if ui.button("Help (H)").clicked() {
                        out.push(Action::ToggleHelp);
                    }
                    if ui.button("Reset to defaults").clicked() {
                        out.push(Action::ResetDefaults);
                    }
                });
                ui.small(&state.settings_path);
            });
        });
    if s.show_help {
        let mut open = true;
        egui::Window::new("Help")
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .show(&ctx, |ui| {
                egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                    for (k, what) in SHORTCUTS {
                        ui.monospace(k);
                        ui.label(what);
                        ui.end_row();
                    }
                });
            });
        if !open {
            out.push(Action::ToggleHelp);
        }
    }
    panel.response.rect.width()
}

fn character(ui: &mut egui::Ui, viewer: &Viewer, state: &mut PanelState, out: &mut Vec<Action>) {
    ui.label(format!("showing: {}", viewer.character));
    ui.horizontal(|ui| {
        let field = ui.add(
            egui::TextEdit::singleline(&mut state.path)
                .hint_text("path to .glb / .gltf / .fbx")
                .desired_width(180.0),
        );
        let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if (ui.button("Open").clicked() || enter) && !state.path.trim().is_empty() {
            out.push(Action::LoadCharacter(state.path.trim().into()));
        }
    });
    ui.horizontal(|ui| {
        if ui.button("Built-in ninja").clicked() {
            out.push(Action::LoadNinja);
        }
        ui.weak("or drop a file on the window");
    });
    ui.label("Skinning");
    ui.horizontal(|ui| {
        for (m, label) in [
            (SkinMethod::Lbs, "LBS (1)"),
            (SkinMethod::Dqs, "DQS (2)"),
            (SkinMethod::Cor, "CoR (3)"),
        ] {
            if ui
                .selectable_label(viewer.settings.method == m, label)
                .clicked()
            {
                out.push(Action::SetMethod(m));
            }
        }
    });
}

fn animation(ui: &mut egui::Ui, viewer: &Viewer, out: &mut Vec<Action>) {
    let s = &viewer.settings;
    let rig = viewer.rig();
    let current = viewer
        .scene
        .clip
        .map(|c| rig.clips[c].name.clone())
        .unwrap_or_else(|| "(no clips)".into());
    egui::ComboBox::from_label("clip")
        .selected_text(&current)
        .show_ui(ui, |ui| {
            for c in &rig.clips {
                if ui.selectable_label(c.name == current, &c.name).clicked() {
                    out.push(Action::SelectClip(c.name.clone()));
                }
            }
        });
    ui.horizontal(|ui| {
        let label = if s.playing { "Pause" } else { "Play" };
        if ui.button(label).clicked() {
            out.push(Action::TogglePlay);
        }
        check(ui, s.looping, "loop", out, Action::SetLoop);
    });
    if let Some((t, duration)) = viewer.clip_time() {
        let mut v = t;
        let r = ui.add(
            egui::Slider::new(&mut v, 0.0..=duration.max(1e-3))
                .text("time (s)")
                .fixed_decimals(2),
        );
        if edited(&r) {
            let start = viewer.scene.clip.map(|c| rig.clips[c].start).unwrap_or(0.0);
            out.push(Action::Pause);
            out.push(Action::Seek(start + v));
        }
    }
    slider(
        ui,
        s.speed,
        {
            let (lo, hi) = crate::limits::SPEED.slider_f32();
            lo..=hi
        },
        "speed ×",
        out,
        Action::SetSpeed,
    );
    slider(
        ui,
        s.crossfade,
        {
            let (lo, hi) = crate::limits::CROSSFADE.slider_f32();
            lo..=hi
        },
        "crossfade (s)",
        out,
        Action::SetCrossfade,
    );
    ui.horizontal(|ui| {
        ui.label("root motion");
        for (r, label) in [
            (RootMotion::InPlace, "in place"),
            (RootMotion::Travel, "travel"),
        ] {
            if ui.selectable_label(s.root_motion == r, label).clicked() {
                out.push(Action::SetRootMotion(r));
            }
        }
    });
}

fn garments(ui: &mut egui::Ui, viewer: &Viewer, state: &mut PanelState, out: &mut Vec<Action>) {
    let s = &viewer.settings;
    ui.horizontal_wrapped(|ui| {
        for (i, kind) in GarmentKind::ALL.into_iter().enumerate() {
            // A garment this body cannot wear in its clips is asked for but left off: say so
            // on its box, and why when hovered.
            // Its "wear anyway" box puts it on all the same; a garment so worn says so too.
            let refused = viewer.scene.refused.iter().find(|(k, _)| *k == kind);
            let worn = viewer.scene.worn_unfit.iter().find(|(k, _)| *k == kind);
            match refused.or(worn) {
                Some((_, why)) => {
                    let mut v = s.garments[i];
                    let label = if refused.is_some() {
                        format!("{} (left off)", kind.name())
                    } else {
                        format!("{} (does not fit)", kind.name())
                    };
                    if ui.checkbox(&mut v, label).on_hover_text(why).changed() {
                        out.push(Action::SetGarment(kind, v));
                    }
                    let mut anyway = s.wear_unfit[i];
                    if ui
                        .checkbox(&mut anyway, "wear anyway")
                        .on_hover_text(why)
                        .changed()
                    {
                        out.push(Action::WearUnfit(kind, anyway));
                    }
                }
                None => check(ui, s.garments[i], kind.name(), out, move |on| {
                    Action::SetGarment(kind, on)
                }),
            }
        }
    });
    // Any mesh of the character as cloth, pinned at its highest ring (issue 24).
    let meshes = viewer.character_meshes();
    if !meshes.is_empty() {
        let pick = state.cloth_mesh.min(meshes.len() - 1);
        egui::ComboBox::from_id_salt("cloth mesh")
            .selected_text(meshes[pick].as_str())
            .show_ui(ui, |ui| {
                for (i, m) in meshes.iter().enumerate() {
                    ui.selectable_value(&mut state.cloth_mesh, i, m.as_str());
                }
            });
        // The buttons under the mesh, not beside it: a row as wide as a long mesh name and both
        // buttons widened the panel and shrank the 3D view.
        ui.horizontal(|ui| {
            let on = s.cloth_meshes.contains(&meshes[pick]);
            let label = if on {
                "stop simulating"
            } else {
                "simulate as cloth"
            };
            if ui.button(label).clicked() {
                out.push(Action::SimulateAsCloth(meshes[pick].clone(), !on));
            }
            let hidden = s.hidden_meshes.contains(&meshes[pick]);
            if ui
                .button(if hidden { "show" } else { "hide" })
                .on_hover_text(
                    "take this mesh off the character (a prop the file shows with every other): \
                     not drawn, and not body to the cloth or the check",
                )
                .clicked()
            {
                out.push(Action::HideMesh(meshes[pick].clone(), !hidden));
            }
        });
    }
    egui::ComboBox::from_label("fabric preset")
        .selected_text(s.fabric_preset.name())
        .show_ui(ui, |ui| {
            for p in FabricPreset::ALL {
                if ui
                    .selectable_label(s.fabric_preset == p, p.name())
                    .clicked()
                {
                    out.push(Action::SetFabricPreset(p));
                }
            }
        });
    let kind = GarmentKind::ALL[state.fabric_garment.min(3)];
    egui::ComboBox::from_label("edit fabric of")
        .selected_text(kind.name())
        .show_ui(ui, |ui| {
            for (i, k) in GarmentKind::ALL.into_iter().enumerate() {
                ui.selectable_value(&mut state.fabric_garment, i, k.name());
            }
        });
    let fabric = &s.fabrics[state.fabric_garment.min(3)];
    for p in FabricParam::ALL {
        let (lo, hi) = p.range();
        let mut v = p.get(fabric);
        let mut sl = egui::Slider::new(&mut v, lo..=hi).text(p.label());
        if matches!(
            p,
            FabricParam::KStructural | FabricParam::KShear | FabricParam::KBend
        ) {
            sl = sl.logarithmic(true);
        }
        if edited(&ui.add(sl)) {
            out.push(Action::SetFabric(kind, p, v));
        }
    }
    ui.separator();
    let (lo, hi) = crate::limits::SPACING_SCALE.slider_f32();
    let mut v = s.spacing_scale;
    let r = ui
        .add(
            egui::Slider::new(&mut v, lo..=hi)
                .step_by(0.05)
                .text("particle spacing ×"),
        )
        .on_hover_text(
            "Garment detail: particle spacing × each garment's default. \
             Coarser is faster (cost ∝ 1/spacing²); 1.25–1.5 keeps up with real time on a slow CPU.",
        );
    if edited(&r) {
        out.push(Action::SetSpacingScale(v));
    }
    if viewer.rebuild_pending() {
        ui.weak("rebuilding when the slider is let go…");
    }
    let mut n = s.substeps;
    if edited(
        &ui.add(
            egui::Slider::new(&mut n, {
                let (lo, hi) = crate::limits::SUBSTEPS.slider_f32();
                lo as u32..=hi as u32
            })
            .text("substeps / frame"),
        ),
    ) {
        out.push(Action::SetSubsteps(n));
    }
    ui.horizontal(|ui| {
        ui.label("cloth model");
        for (m, label) in [
            (ClothModelKind::MassSpring, "mass-spring"),
            (ClothModelKind::Xpbd, "XPBD"),
        ] {
            if ui
                .selectable_label(s.model == m, label)
                .on_hover_text(match m {
                    ClothModelKind::MassSpring => {
                        "springs with an explicit integrator and Provot's limit (the reference)"
                    }
                    ClothModelKind::Xpbd => "position-based constraints in small steps (real time)",
                })
                .clicked()
            {
                out.push(Action::SetModel(m));
            }
        }
    });
    // Wrapped: four cuts in one row would widen the panel over the 3D view.
    ui.horizontal_wrapped(|ui| {
        ui.label("hakama cut");
        for (h, label, hover) in [
            (
                HakamaStyle::HalfSkirts,
                "half-skirts",
                "two open half-skirts, one per leg (the default)",
            ),
            (
                HakamaStyle::Sewn,
                "sewn",
                "the half-skirts sewn together at the front and back down to mid-thigh, so \
                 each thigh stays inside its own side (slower: the strain limit runs harder)",
            ),
            (
                HakamaStyle::Fitted,
                "fitted",
                "the half-skirts hugging the hips under hanging hands, so the hands rest \
                 outside and an arm swing does not carry the skirt (the hands pinch the \
                 cloth against the hips instead)",
            ),
            (
                HakamaStyle::Divided,
                "divided",
                "trousers with a tube per leg, laid out with the legs spread \
                 (experimental: issue 19)",
            ),
        ] {
            if ui
                .selectable_label(s.hakama_style == h, label)
                .on_hover_text(hover)
                .clicked()
            {
                out.push(Action::SetHakamaStyle(h));
            }
        }
    });
    ui.horizontal(|ui| {
        ui.label("integrator");
        for (i, label) in [
            (Integrator::Verlet, "Verlet"),
            (Integrator::SymplecticEuler, "symplectic Euler"),
        ] {
            if ui.selectable_label(s.integrator == i, label).clicked() {
                out.push(Action::SetIntegrator(i));
            }
        }
    });
    check(
        ui,
        s.self_collision,
        "self-collision",
        out,
        Action::SetSelfCollision,
    );
    check(
        ui,
        s.skin_contact,
        "cloth meets the visible skin",
        out,
        Action::SetSkinContact,
    );
    slider(
        ui,
        s.wind_speed,
        {
            let (lo, hi) = crate::limits::WIND_SPEED.slider_f32();
            lo..=hi
        },
        "wind (m/s)",
        out,
        Action::SetWindSpeed,
    );
    slider(
        ui,
        s.wind_azimuth,
        {
            let (lo, hi) = crate::limits::AZIMUTH.slider_f32();
            lo..=hi
        },
        "wind towards (°)",
        out,
        Action::SetWindAzimuth,
    );
    slider(
        ui,
        s.wind_gusts,
        {
            let (lo, hi) = crate::limits::WIND_GUSTS.slider_f32();
            lo..=hi
        },
        "gusts",
        out,
        Action::SetWindGusts,
    );
    if ui.button("Reset simulation (R)").clicked() {
        out.push(Action::ResetSim);
    }
}

fn wet(ui: &mut egui::Ui, viewer: &Viewer, out: &mut Vec<Action>) {
    let s = &viewer.settings;
    check(ui, s.wet, "wet", out, Action::SetWet);
    egui::ComboBox::from_label("fabric (uptake)")
        .selected_text(&s.wet_fabric)
        .show_ui(ui, |ui| {
            for f in Fabric::ALL {
                if ui
                    .selectable_label(s.wet_fabric == f.name, f.name)
                    .clicked()
                {
                    out.push(Action::SetWetFabric(f.name.into()));
                }
            }
        });
    slider(
        ui,
        s.wetness,
        {
            let (lo, hi) = crate::limits::WETNESS.slider_f32();
            lo..=hi
        },
        "wetness (of saturation)",
        out,
        Action::SetWetness,
    );
    slider(
        ui,
        s.adhesion_scale,
        {
            let (lo, hi) = crate::limits::ADHESION_SCALE.slider_f32();
            lo..=hi
        },
        "adhesion scale",
        out,
        Action::SetAdhesionScale,
    );
    ui.horizontal(|ui| {
        ui.label("adhesion");
        for (a, label) in [
            (AdhesionMode::Off, "off"),
            (AdhesionMode::PerVertex, "per vertex"),
            (AdhesionMode::AreaBased, "area"),
        ] {
            if ui.selectable_label(s.adhesion == a, label).clicked() {
                out.push(Action::SetAdhesion(a));
            }
        }
    });
    check(
        ui,
        s.self_adhesion,
        "self-adhesion",
        out,
        Action::SetSelfAdhesion,
    );
}

fn shader_combo(
    ui: &mut egui::Ui,
    label: &str,
    current: &str,
    out: &mut Vec<Action>,
    make: fn(String) -> Action,
) {
    egui::ComboBox::from_label(label)
        .selected_text(current)
        .show_ui(ui, |ui| {
            for name in SHADER_NAMES {
                if ui.selectable_label(current == name, name).clicked() {
                    out.push(make(name.to_string()));
                }
            }
        });
}

fn shading(ui: &mut egui::Ui, viewer: &Viewer, out: &mut Vec<Action>) {
    let s = &viewer.settings;
    shader_combo(
        ui,
        "body shader",
        &s.body_shader,
        out,
        Action::SetBodyShader,
    );
    shader_combo(
        ui,
        "garment shader",
        &s.garment_shader,
        out,
        Action::SetGarmentShader,
    );
    let el = s.light_elevation;
    slider(
        ui,
        s.light_azimuth,
        {
            let (lo, hi) = crate::limits::AZIMUTH.slider_f32();
            lo..=hi
        },
        "light azimuth (°)",
        out,
        move |v| Action::SetLight(v, el),
    );
    let az = s.light_azimuth;
    slider(
        ui,
        s.light_elevation,
        {
            let (lo, hi) = crate::limits::LIGHT_ELEVATION.slider_f32();
            lo..=hi
        },
        "light elevation (°)",
        out,
        move |v| Action::SetLight(az, v),
    );
    check(ui, s.shadows, "shadows", out, Action::SetShadows);
    check(ui, s.msaa, "antialiasing (4× MSAA)", out, Action::SetMsaa);
    check(ui, s.show_proxies, "proxies (P)", out, Action::ShowProxies);
    check(ui, s.show_bvh, "BVH (B)", out, Action::ShowBvh);
    check(
        ui,
        s.show_skeleton,
        "skeleton (K)",
        out,
        Action::ShowSkeleton,
    );
    check(ui, s.wireframe, "wireframe (W)", out, Action::SetWireframe);
    check(ui, s.ground, "ground", out, Action::SetGround);
}

/// The garment check (issue 19): cloth inside the visible skin now, and `drape check`'s verdict on
/// the clip (see `super::inspect`).
fn inspect(ui: &mut egui::Ui, viewer: &Viewer, out: &mut Vec<Action>) {
    use super::inspect::CheckStatus;
    let ins = &viewer.inspect;
    let th = &ins.thresholds;
    check(
        ui,
        ins.show_inside,
        "mark cloth inside the skin (I)",
        out,
        Action::ShowInside,
    );
    if ins.show_inside {
        ui.small(format!(
            "markers: yellow up to {:.0} mm deep, orange to {:.0} mm, red deeper",
            th.shallow * 1e3,
            th.deep * 1e3
        ));
        egui::Grid::new("inside_now").striped(true).show(ui, |ui| {
            ui.label("garment");
            ui.label(format!("> {:.0} mm", th.shallow * 1e3));
            ui.label(format!("> {:.0} cm", th.deep * 1e2));
            ui.label("deepest");
            ui.end_row();
            for g in ins.garments() {
                let bad = g.deep > 0 || g.share() > th.shallow_share;
                let name = if bad {
                    egui::RichText::new(&g.name).color(egui::Color32::from_rgb(240, 90, 80))
                } else {
                    egui::RichText::new(&g.name)
                };
                ui.label(name);
                ui.label(format!("{} ({:.1} %)", g.shallow, 100.0 * g.share()));
                ui.label(g.deep.to_string());
                ui.label(format!("{:.1} mm", g.deepest * 1e3));
                ui.end_row();
            }
        });
    }
    ui.separator();
    let running = ins.checking();
    ui.add_enabled_ui(!running, |ui| {
        if ui
            .button("Check this clip")
            .on_hover_text(
                "simulates the clip as `drape check` does, with these settings, in the \
                 background, and gives its verdict",
            )
            .clicked()
        {
            out.push(Action::CheckClip);
        }
    });
    match ins.status() {
        None => {}
        Some(CheckStatus::Running { clip, done, total }) => {
            let f = if *total > 0 {
                *done as f32 / *total as f32
            } else {
                0.0
            };
            ui.label(format!("checking '{clip}' …"));
            ui.add(egui::ProgressBar::new(f).show_percentage());
        }
        Some(CheckStatus::Done {
            clip,
            setup,
            result,
        }) => match result {
            Err(e) => {
                ui.colored_label(
                    egui::Color32::from_rgb(240, 90, 80),
                    format!("'{clip}' could not be checked: {e}"),
                );
            }
            Ok(r) => {
                let (color, verdict) = if r.passed() {
                    (egui::Color32::from_rgb(110, 200, 110), "PASS")
                } else {
                    (egui::Color32::from_rgb(240, 90, 80), "FAIL")
                };
                ui.colored_label(color, format!("'{clip}': {verdict}"));
                ui.small(format!(
                    "{setup}; {} frames, {} with cloth > {:.0} cm inside; {:.0} s",
                    r.frames,
                    r.deep_frames,
                    th.deep * 1e2,
                    r.seconds
                ));
                egui::Grid::new("verdict").striped(true).show(ui, |ui| {
                    ui.label("garment");
                    ui.label("worst > 3 mm");
                    ui.label("deepest");
                    ui.label("return rms / max");
                    ui.label("held 1.5 s");
                    ui.end_row();
                    for g in &r.garments {
                        ui.label(&g.name);
                        ui.label(format!("{:.2} %", 100.0 * g.worst_share));
                        ui.label(format!("{:.1} mm", g.max_depth * 1e3));
                        ui.label(format!(
                            "{:.1} / {:.1} cm",
                            g.return_rms * 1e2,
                            g.return_max * 1e2
                        ));
                        ui.label(match (g.held_rms, g.held_max) {
                            (Some(a), Some(b)) => format!("{:.1} / {:.1} cm", a * 1e2, b * 1e2),
                            _ => "-".into(),
                        });
                        ui.end_row();
                    }
                });
                for f in &r.failures {
                    ui.colored_label(egui::Color32::from_rgb(230, 180, 60), f);
                }
            }
        },
    }
}
