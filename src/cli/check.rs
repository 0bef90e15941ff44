//! `drape check [SCENE.toml] [--rig FILE] [--clips-from FILE] [--clip NAME|all]
//! [--method lbs|dqs|cor] [--spacing X] [--json out.json]`: dresses the character, simulates
//! each clip as `drape bake` does and measures the garments against the visible skin (see
//! [`crate::check`]): a table per clip and garment, a verdict, and a non-zero exit status when
//! any clip fails. With a scene file it checks that scene: its character and clips, its
//! garments as the file sets them (the character's own clothes, fabrics, cuts, spacings), its
//! skinning, model, substeps and start-up; the flags given beside it override the file.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;

use super::CliError;
use crate::check::{check_clip_trial, ClipReport, Report, ReturnKind, Thresholds};
use crate::garments::{GarmentKind, GarmentSpec, HakamaStyle};
use crate::rig::Rig;
use crate::scene::{load_rig_named, SceneConfig, SceneFile};
use crate::skin::SkinMethod;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Scene file (TOML, as `drape bake` reads it): check that scene, its
    /// character, clips, garments and settings. Without it every library garment is checked on
    /// --rig with the defaults. A character file (.glb, .gltf, .fbx) here is taken as --rig.
    pub scene: Option<PathBuf>,
    /// Character: `ninja` (built in) or a .glb/.gltf/.fbx path [default: ninja; a scene file
    /// names its own].
    #[arg(long, conflicts_with = "scene")]
    pub rig: Option<String>,
    /// Add the clips of this file (a Mixamo "without skin" FBX, …) to the character, matched by
    /// bone name and named after its stem. Repeatable.
    #[arg(long = "clips-from", value_name = "FILE")]
    pub clips_from: Vec<PathBuf>,
    /// Take a mesh off the character before checking: a mesh or node name, or a node above it
    /// (`handslot.r`: whatever the right hand holds); `*` and `?` as in a shell. A file that
    /// shows every prop at once (KayKit's) is checked with the props a scene would show.
    /// Repeatable; adds to a scene file's `hide`.
    #[arg(long, value_name = "NAME")]
    pub hide: Vec<String>,
    /// Clip name, or `all` [default: all; with a scene file that names a clip, that clip].
    #[arg(long)]
    pub clip: Option<String>,
    /// Skinning of the body (and of the pins): lbs, dqs or cor [default: lbs, or the scene
    /// file's `skinning`].
    #[arg(long)]
    pub method: Option<String>,
    /// Garment particle spacing, × each garment's default (0.75..=3; 1.35 or more for a quick
    /// check, as in CI); with a scene file, × each garment's spacing there [default: 1].
    #[arg(long)]
    pub spacing: Option<f32>,
    /// Cloth model: mass_spring or xpbd [default: mass_spring, or the scene file's `model`].
    /// The table's method column then reads `lbs, xpbd`.
    #[arg(long)]
    pub model: Option<crate::cloth::ClothModelKind>,
    /// Substeps per frame on which the cloth meets the skinned triangles (0: only the proxies;
    /// default: the scene's, 16, every substep).
    #[arg(long)]
    pub skin_contact: Option<u32>,
    /// Colliders thinner than the cloth's triangles (hands, fingers) meet the triangles between
    /// their particles too: true or false [default: the scene's, false].
    #[arg(long)]
    pub face_contact: Option<bool>,
    /// Also write the whole report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Replace --json if it exists (like every command, check never replaces a file without
    /// being asked).
    #[arg(long)]
    pub force: bool,
    /// Print only the table and the verdict (no per-clip progress on stderr).
    #[arg(long)]
    pub quiet: bool,
    /// How the hakama is cut: half_skirts (the default), sewn (the half-skirts sewn together at
    /// the front and back down to mid-thigh), fitted (the half-skirts hugging the
    /// hips under hanging hands, so the hands rest outside the cloth) or divided (trousers with
    /// a tube per leg, laid out with the legs spread), as a scene file's `style` (which this
    /// overrides).
    #[arg(long)]
    pub hakama: Option<String>,
    /// Print one Markdown row per clip on stdout (the table of issue 19: frames with cloth more
    /// than 1 cm inside, worst share deeper than 3 mm, deepest, hakama lift and return, worst
    /// return, worst after the last pose held, hanging, verdict), the per-clip tables and the
    /// verdict going to stderr instead; rows of
    /// several runs (bodies, methods) appended to one file make one table.
    #[arg(long)]
    pub summary: bool,
    /// With --summary: print the table's header first.
    #[arg(long, requires = "summary")]
    pub summary_header: bool,
    /// Check the garments the body cannot wear too (a cape whose collar the hair swings
    /// through) instead of leaving them off; the tables say why they do not fit. A scene file
    /// says it per garment (`wear_unfit = true`); this sets it on every garment.
    #[arg(long)]
    pub wear_unfit: bool,
    /// Runs of each clip (1..=16): the first as built, each other with the cloth's start moved
    /// by at most a micrometre. Swinging cloth is chaotic, and whether a garment ends within
    /// 6 cm of its drape can change with such a nudge; a clip passes only if every trial does,
    /// and the summary row gives the worst of its trials.
    #[arg(long, default_value_t = 1)]
    pub trials: u32,
}

/// The header of [`summary_rows`]' table.
pub const SUMMARY_HEADER: &str = "| body | clip | method | frames > 1 cm inside | worst share > 3 mm | deepest | hakama lift | hakama return RMS / max | worst return RMS / max | worst held 1.5 s RMS / max | hanging | verdict |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";

/// One Markdown row per clip of `report` (columns of [`SUMMARY_HEADER`]): the share of frames
/// with a garment vertex more than 1 cm inside, the largest share of a garment's vertices more
/// than 3 mm inside (and which garment), the deepest vertex, the hakama's lift and return to
/// its drape, the worst return of any garment (the farthest past the return's limits, RMS or
/// max), the worst after the last pose held (looping clips; `-` otherwise), the vertices hanging
/// from the arms, the verdict. With several trials of a clip, each column is the worst of them.
pub fn summary_rows(report: &Report) -> String {
    let body = std::path::Path::new(&report.rig)
        .file_stem()
        .map_or(report.rig.clone(), |s| s.to_string_lossy().into_owned());
    let mut out = String::new();
    for trials in report.clips.chunk_by(|a, b| a.clip == b.clip) {
        let c = &trials[0];
        // Each column the worst of the clip's trials.
        let all = || trials.iter().flat_map(|t| &t.garments);
        let by = |f: &dyn Fn(&crate::check::GarmentReport) -> f32| {
            all().max_by(|a, b| f(a).total_cmp(&f(b)))
        };
        let worst = by(&|g| g.worst_share);
        // The garment farthest past its limits (RMS or max), the one a failure names.
        let th = &report.thresholds;
        let over = |rms: f32, max: f32| (rms / th.return_rms).max(max / th.return_max);
        let ret = by(&|g| over(g.return_rms, g.return_max));
        let held = by(&|g| match (g.held_rms, g.held_max) {
            (Some(r), Some(m)) => over(r, m),
            _ => -1.0,
        })
        .filter(|g| g.held_max.is_some());
        let hakamas = || all().filter(|g| g.kind == "hakama");
        let lift = hakamas().map(|g| g.lift).reduce(f32::max);
        let hakama = hakamas().max_by(|a, b| a.return_rms.total_cmp(&b.return_rms));
        let deepest = all().map(|g| g.max_depth).fold(0.0f32, f32::max);
        let deep_share = trials
            .iter()
            .map(|t| t.deep_frames as f32 / t.frames.max(1) as f32)
            .fold(0.0f32, f32::max);
        let hanging = trials
            .iter()
            .map(|t| t.garments.iter().map(|g| g.hanging).sum::<usize>())
            .max()
            .unwrap_or(0);
        let pct = |x: f32| format!("{:.0} %", 100.0 * x);
        out += &format!(
            "| {body} | {} | {} | {} | {} | {:.1} mm | {} | {} | {} | {} | {} | {} |\n",
            c.clip,
            if report.model == crate::cloth::ClothModelKind::MassSpring.name() {
                report.method.clone()
            } else {
                format!("{}, {}", report.method, report.model)
            },
            pct(deep_share),
            match worst {
                // The garment named only when some of it was that deep.
                Some(g) if g.worst_share > 0.0 => {
                    format!("{:.2} % ({})", 100.0 * g.worst_share, g.name)
                }
                _ => "0.00 %".into(),
            },
            1000.0 * deepest,
            lift.map_or("-".into(), |l| format!("{} cm", cm(l))),
            hakama.map_or("-".into(), |g| format!(
                "{} / {} cm",
                cm(g.return_rms),
                cm(g.return_max)
            )),
            ret.map_or("-".into(), |g| format!(
                "{} / {} cm ({})",
                cm(g.return_rms),
                cm(g.return_max),
                g.name
            )),
            held.map_or("-".into(), |g| format!(
                "{} / {} cm ({})",
                cm(g.held_rms.unwrap_or(0.0)),
                cm(g.held_max.unwrap_or(0.0)),
                g.name
            )),
            hanging,
            verdict_cell(trials),
        );
    }
    out
}

/// The verdict column of a clip's trials: pass (every trial passes) or FAIL, how many trials
/// passed when some did, and the garments left off ([`ClipReport::refused`]).
fn verdict_cell(trials: &[ClipReport]) -> String {
    let passed = trials.iter().filter(|t| t.passed()).count();
    let mut notes = Vec::new();
    if passed > 0 && passed < trials.len() {
        notes.push(format!("{passed} of {} trials pass", trials.len()));
    }
    let off: Vec<&str> = trials[0]
        .refused
        .iter()
        .map(|r| r.garment.as_str())
        .collect();
    if !off.is_empty() {
        notes.push(format!("{} left off", off.join(", ")));
    }
    let v = if passed == trials.len() {
        "pass"
    } else {
        "FAIL"
    };
    if notes.is_empty() {
        v.into()
    } else {
        format!("{v} ({})", notes.join("; "))
    }
}

fn cm(m: f32) -> String {
    format!("{:.1}", m * 100.0)
}

/// The human-readable table of one clip.
pub fn clip_table(c: &ClipReport) -> String {
    let mut s = String::new();
    s += &format!(
        "clip {}{} ({:.2} s, {} frames from {:.3} s, {}): {} of {} frames with a vertex > 1 cm inside — {}\n",
        c.clip,
        if c.trial > 0 {
            format!(", trial {} (start moved ≤ 1 µm)", c.trial)
        } else {
            String::new()
        },
        c.duration,
        c.frames,
        c.first_frame_time,
        if c.loops {
            "loops: played twice"
        } else {
            "does not loop: last pose held 1.5 s"
        },
        c.deep_frames,
        c.frames,
        if c.passed() { "PASS" } else { "FAIL" }
    );
    s += "  garment   | verts | frames >1cm | worst >3mm share (at s) | max depth cm (at s) | stretch % | lift cm | return RMS/max cm | held RMS/max cm | hanging | above sash cm | deepest near\n";
    for g in &c.garments {
        s += &format!(
            "  {:<9} | {:>5} | {:>11} | {:>8.2} % ({:>6.2})     | {:>6} ({:>6.2})     | {:>9.1} | {:>7} | {:>5} / {:<5} {} | {:>15} | {:>7} | {:>13} | {}\n",
            g.name,
            g.vertices,
            g.deep_frames,
            g.worst_share * 100.0,
            g.worst_share_time,
            cm(g.max_depth),
            g.max_depth_time,
            g.worst_stretch * 100.0,
            cm(g.lift),
            cm(g.return_rms),
            cm(g.return_max),
            match g.return_kind {
                ReturnKind::Loop => "loop",
                ReturnKind::Hold => "hold",
            },
            match (g.held_rms, g.held_max) {
                (Some(r), Some(m)) => format!("{} / {}", cm(r), cm(m)),
                _ => "-".into(),
            },
            g.hanging,
            g.above_sash.map_or("-".into(), cm),
            if g.max_depth_bone.is_empty() {
                "-"
            } else {
                g.max_depth_bone.as_str()
            },
        );
    }
    for r in &c.refused {
        s += &format!("  {:<9} | left off: {}\n", r.garment, r.reason);
    }
    for r in &c.worn_unfit {
        s += &format!(
            "  {:<9} | worn though it does not fit: {}\n",
            r.garment, r.reason
        );
    }
    for f in &c.failures {
        s += &format!("  FAIL: {f}\n");
    }
    s
}

/// The character and the scene configuration to check: the scene file's, or every library
/// garment on `--rig`; then the flags that override them. The name the messages use for the
/// character comes third.
fn setup(args: &Args) -> Result<(Rig, SceneConfig, String, Vec<String>), CliError> {
    let (mut rig, mut config, name) = match scene_file(args) {
        Some(path) => {
            let file = SceneFile::load(path).map_err(|e| CliError::new(e.to_string()))?;
            let base = path.parent().filter(|b| !b.as_os_str().is_empty());
            let rig = file
                .load_rig(base)
                .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
            let mut config = file
                .config()
                .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
            if let Some(b) = base {
                config.resolve_paths(b);
            }
            let name = format!("{} (scene {})", rig.source, path.display());
            (rig, config, name)
        }
        None => {
            let name = args
                .rig
                .clone()
                .or_else(|| args.scene.as_ref().map(|p| p.display().to_string()))
                .unwrap_or_else(|| "ninja".into());
            let rig = load_rig_named(&name, None)
                .map_err(|e| CliError::new(format!("cannot load {name}: {e}")))?;
            let config = SceneConfig {
                garments: GarmentKind::ALL
                    .iter()
                    .map(|&k| GarmentSpec::new(k))
                    .collect(),
                ..SceneConfig::default()
            };
            (rig, config, name)
        }
    };
    super::clips_from::add_clips(&mut rig, &args.clips_from, &Default::default())?;
    // Hidden here, once, rather than by each clip's scene: a name that matches nothing is
    // refused before anything is simulated, and the body measured is the one simulated.
    let mut hide = std::mem::take(&mut config.hide);
    hide.extend(args.hide.iter().cloned());
    let hidden = rig
        .hide_meshes(&hide)
        .map_err(|e| CliError::new(format!("hide: {e}")))?;
    if args.wear_unfit {
        for g in &mut config.garments {
            g.wear_unfit = true;
        }
    }
    if let Some(m) = &args.method {
        config.method = m.parse().map_err(CliError::new)?;
    }
    if let Some(m) = args.model {
        config.sim.model = m;
    }
    if let Some(k) = args.skin_contact {
        config.sim.skin_contact = crate::limits::SKIN_CONTACT
            .check_u32("--skin-contact", k)
            .map_err(CliError::new)?;
    }
    if let Some(f) = args.face_contact {
        config.sim.face_contact = f;
    }
    if let Some(h) = &args.hakama {
        let style: HakamaStyle = h
            .parse()
            .map_err(|e: String| CliError::new(format!("--hakama: {e}")))?;
        let mut any = false;
        for g in config
            .garments
            .iter_mut()
            .filter(|g| g.kind == GarmentKind::Hakama)
        {
            g.style = style;
            any = true;
        }
        if !any {
            return Err(CliError::new(format!(
                "--hakama {h}: {name} is dressed without a hakama"
            )));
        }
    }
    if let Some(f) = args.spacing {
        crate::limits::SPACING_SCALE
            .check_f32("--spacing", f)
            .map_err(CliError::new)?;
        for (i, g) in config.garments.iter_mut().enumerate() {
            // A modelled garment keeps its mesh's spacing.
            if g.mesh.is_none() {
                g.spacing = crate::limits::SPACING
                    .check_f32(&format!("--spacing × garment[{i}].spacing"), g.spacing * f)
                    .map_err(CliError::new)?;
            }
        }
    }
    Ok((rig, config, name, hidden))
}

pub fn run(args: Args) -> Result<(), CliError> {
    let trials = crate::limits::CHECK_TRIALS
        .check_u32("--trials", args.trials)
        .map_err(CliError::new)?;
    // Refuse before simulating, not after minutes of work.
    if let Some(path) = &args.json {
        super::refuse_existing(path, args.force)?;
    }
    let (rig, config, name, hidden) = setup(&args)?;
    if !hidden.is_empty() && !args.quiet {
        eprintln!("hidden: {}", hidden.join(", "));
    }
    let method = config.method;
    let model = config.sim.model;
    let spacing = args.spacing.unwrap_or(1.0);
    if rig.clips.is_empty() {
        return Err(CliError::new(format!("{name} has no clips to check")));
    }
    // `--clip`, else the scene file's clip, else all.
    let wanted = args.clip.clone().or_else(|| config.clip.clone());
    let clips: Vec<usize> = match wanted.as_deref() {
        None | Some("all") => (0..rig.clips.len()).collect(),
        Some(clip) => vec![rig.clip(clip).ok_or_else(|| {
            CliError::new(format!(
                "{name} has no clip named '{clip}' (clips: {})",
                rig.clips
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?],
    };
    if method == SkinMethod::Cor {
        // Computed once here with a progress bar (and kept in the disk cache the scenes of
        // every clip then read).
        crate::skin::Skinner::new(&rig).prepare_cor(&rig, &mut super::progress::cor_progress());
    }
    let th = Thresholds::default();
    let mut reports = Vec::new();
    let mut unpinned_vertices = 0;
    for &c in &clips {
        for trial in 0..trials {
            let name = if trials > 1 {
                format!("{} (trial {} of {trials})", rig.clips[c].name, trial + 1)
            } else {
                rig.clips[c].name.clone()
            };
            if !args.quiet {
                eprintln!("checking {name} …");
            }
            let mut bar = super::progress::Progress::new(format!("checking {name}"), 0, "frames");
            let r = check_clip_trial(&rig, c, &config, &th, trial, &mut |done, total| {
                if args.quiet {
                    return;
                }
                if done == 1 {
                    bar = super::progress::Progress::new(
                        format!("checking {name}"),
                        total as u64,
                        "frames",
                    );
                }
                bar.set(done as u64);
            })
            .map_err(|e| CliError::new(format!("cannot dress {name}: {e}")))?;
            drop(bar);
            // Which bone was taken for which role (non-Mixamo names), once, before the tables.
            if reports.is_empty() && !args.quiet {
                if let Some(note) = &r.bones_note {
                    eprint!("{note}");
                }
            }
            unpinned_vertices = r.garments.iter().map(|g| g.vertices).sum::<usize>();
            if args.summary {
                eprint!("{}", clip_table(&r));
            } else {
                print!("{}", clip_table(&r));
                let _ = std::io::stdout().flush();
            }
            reports.push(r);
        }
    }
    let body_triangles = rig.meshes.iter().map(|m| m.triangle_count()).sum();
    let passed = reports.iter().all(|r| r.passed());
    let report = Report {
        rig: rig.source.clone(),
        method: method.name().to_string(),
        scene: scene_file(&args).map(|p| p.display().to_string()),
        hidden,
        model: model.name().to_string(),
        trials,
        spacing,
        unpinned_vertices,
        body_triangles,
        thresholds: th,
        clips: reports,
        passed,
    };
    if let Some(path) = &args.json {
        let mut f = super::create_output(path, args.force)?;
        serde_json::to_writer_pretty(&mut f, &report)
            .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))?;
        super::commit_output(f)?;
    }
    if args.summary {
        if args.summary_header {
            print!("{SUMMARY_HEADER}");
        }
        print!("{}", summary_rows(&report));
    }
    // The verdict goes with the per-clip tables.
    let say = |line: String| {
        if args.summary {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    // A clip fails if any of its trials does.
    let failed: Vec<&str> = report
        .clips
        .chunk_by(|a, b| a.clip == b.clip)
        .filter(|t| t.iter().any(|c| !c.passed()))
        .map(|t| t[0].clip.as_str())
        .collect();
    let n_clips = clips.len();
    let of_trials = if trials > 1 {
        format!(" × {trials} trials")
    } else {
        String::new()
    };
    // Garments left off are said once, with why (the same for every clip of the rig).
    if let Some(c) = report.clips.first() {
        for r in &c.refused {
            say(format!("left off: {}", r.reason));
        }
    }
    if failed.is_empty() {
        say(format!(
            "verdict: PASS ({n_clips} clips{of_trials}, {} skinning, {} model, spacing ×{spacing}{})",
            report.method,
            report.model,
            scene_note(&args)
        ));
        Ok(())
    } else {
        say(format!(
            "verdict: FAIL ({} of {n_clips} clips{of_trials}, {} skinning, {} model{}: {})",
            failed.len(),
            report.method,
            report.model,
            scene_note(&args),
            failed.join(", ")
        ));
        Err(CliError::new(format!(
            "check failed on {} of {n_clips} clips",
            failed.len(),
        )))
    }
}

/// The scene file to check: the positional argument, unless it names a character file (which
/// is taken as `--rig`).
fn scene_file(args: &Args) -> Option<&Path> {
    let p = args.scene.as_deref()?;
    let ext = p
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("glb" | "gltf" | "fbx") => None,
        _ => Some(p),
    }
}

/// `, scene FILE` for the verdict line of a check of a scene file.
fn scene_note(args: &Args) -> String {
    scene_file(args)
        .map(|p| format!(", scene {}", p.display()))
        .unwrap_or_default()
}
