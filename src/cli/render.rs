//! `drape render`: a clip rendered offscreen with the wgpu renderer into numbered PNG frames and,
//! on request, an animated GIF.
//!
//! ```text
//! drape render --clip roundhouse_kick --frames 0..90 --size 1280x720 --out out/ --gif kick.gif
//! drape render --rig ../shared/rigs/khronos/Fox/glTF-Binary/Fox.glb --clip Run --method dqs
//! drape render --clip stance --frames 0..1 --shader toon --camera 30,10
//! drape render --garments cape,hakama --wet all --compare --frames 40..=40 --out dry_wet/
//! ```
//!
//! Frames are sampled at a fixed step (`--fps`, default 30), never from the wall clock, so the
//! same command writes the same pictures. The camera is framed once over every frame of the
//! range. Garments: [`crate::gpu::stage::GarmentFrame`] is the hook; the dressed-character scene
//! hands its garments to `Stage::render` each frame. Files already in `--out` (the frames this
//! run would write) and an existing `--gif` are never replaced without `--force`.

use std::path::{Path, PathBuf};

use super::CliError;
use crate::garments::GarmentSpec;
use crate::gpu::renderer::Shading;
use crate::gpu::stage::{clip_bounds, CameraView, FrameTimes, GarmentFrame, Stage};
use crate::gpu::GpuContext;
use crate::scene::SceneConfig;
use crate::skin::SkinMethod;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Scene file (TOML, as `drape bake` reads it): render that scene, its character, clip,
    /// skinning, model, hidden meshes and garments as the file sets them (mesh garments and the
    /// character's own clothes included). --clip, --method, --model and --spacing (× each
    /// garment's spacing there) override it; --hide adds to its `hide`.
    #[arg(conflicts_with_all = ["rig", "garments", "wear_unfit"])]
    pub scene: Option<PathBuf>,
    /// The character (.glb/.gltf/.fbx); default the built-in ninja (rigs/ninja.glb when found, else
    /// generated in memory), from any folder.
    #[arg(long)]
    pub rig: Option<PathBuf>,
    /// Take a mesh off the character: a mesh or node name, or a node above it (`handslot.r`:
    /// whatever the right hand holds); `*` and `?` as in a shell. Repeatable.
    #[arg(long, value_name = "NAME")]
    pub hide: Vec<String>,
    /// Clip name (`drape info FILE` lists them); default the rig's first clip, or the rest pose
    /// when it has none.
    #[arg(long)]
    pub clip: Option<String>,
    /// Frame range at --fps: `A..B` (B excluded) or `A..=B`; default the whole clip.
    #[arg(long)]
    pub frames: Option<String>,
    /// Frames per second of the sampling step (1..=240, default 30).
    #[arg(long, default_value_t = 30.0)]
    pub fps: f32,
    /// Image size `WxH` in pixels, each 16..=8192 (default 1280x720).
    #[arg(long, default_value = "1280x720")]
    pub size: String,
    /// Folder for the PNG frames (`frame_0000.png`, …); created if missing.
    #[arg(long, default_value = "render")]
    pub out: PathBuf,
    /// Also write an animated GIF of the frames here.
    #[arg(long)]
    pub gif: Option<PathBuf>,
    /// Width of the GIF in pixels (its height keeps the aspect; 16..=8192, default 480): GIFs
    /// of full-size frames are large and slow to encode.
    #[arg(long, default_value_t = 480)]
    pub gif_width: u32,
    /// Do not write PNG frames (with --gif: only the animation).
    #[arg(long)]
    pub no_png: bool,
    /// Skinning method: lbs, dqs or cor (default lbs, or the scene file's `skinning`).
    #[arg(long)]
    pub method: Option<String>,
    /// Cloth model: mass_spring or xpbd (default mass_spring, or the scene file's `model`).
    #[arg(long)]
    pub model: Option<crate::cloth::ClothModelKind>,
    /// Shader: wireframe, normals, phong, texture, bump, displace, mirror or toon (default
    /// phong: the rig's own colours and colour maps, lit with Blinn-Phong).
    #[arg(long, default_value = "phong")]
    pub shader: String,
    /// Camera: auto, front, side or `AZ,EL[,DIST]` (degrees, degrees, metres).
    #[arg(long, default_value = "auto")]
    pub camera: String,
    /// Dress the character and simulate the garments: a comma-separated list of cape, hakama,
    /// sash, headband (or `all`). The garments settle and the body blends into the clip before
    /// frame 0; the clip then plays in place. Default: no garments.
    #[arg(long, value_delimiter = ',')]
    pub garments: Vec<String>,
    /// Wear the garments even where the body cannot (a cape whose collar the hair swings
    /// through), saying why they do not fit; by default such a garment is left off.
    #[arg(long)]
    pub wear_unfit: bool,
    /// Garment particle spacing, × each garment's default (0.75..=3, default 1): finer is more
    /// detailed and slower (the particle count goes with 1/spacing²).
    #[arg(long, default_value_t = 1.0)]
    pub spacing: f32,
    /// Soak these garments (a comma-separated list of the names given to --garments, or `all`)
    /// to saturation before they settle: heavier, clinging cloth that renders darker and
    /// glossier. Water content follows cotton's saturation law (drape::cloth::wet).
    #[arg(long, value_delimiter = ',')]
    pub wet: Vec<String>,
    /// Render every frame twice side by side: the garments dry (left) and soaked as --wet says
    /// (right), each simulated on its own. Each half is --size; the image is twice as wide.
    #[arg(long)]
    pub compare: bool,
    /// Samples per pixel: 4 (MSAA, default) or 1 (no antialiasing: on lavapipe about half the
    /// frame time, for quick previews).
    #[arg(long, default_value_t = 4)]
    pub samples: u32,
    /// Replace frames (and the --gif) that already exist.
    #[arg(long)]
    pub force: bool,
}

/// Parses `WxH`.
pub fn parse_size(s: &str) -> Result<(u32, u32), CliError> {
    let bad = || {
        CliError::new(format!(
            "bad --size '{s}': expected WIDTHxHEIGHT with each side 16..=8192, e.g. 1280x720"
        ))
    };
    let (w, h) = s.trim().split_once(['x', 'X', '×']).ok_or_else(bad)?;
    let (w, h) = (
        w.trim().parse::<u32>().map_err(|_| bad())?,
        h.trim().parse::<u32>().map_err(|_| bad())?,
    );
    let side = &crate::limits::IMAGE_SIDE;
    if !side.contains(w as f64) || !side.contains(h as f64) {
        return Err(bad());
    }
    Ok((w, h))
}

/// Parses `A..B` (B excluded) or `A..=B` into the list of frame numbers.
pub fn parse_frames(s: &str) -> Result<Vec<u32>, CliError> {
    let bad = |why: &str| {
        CliError::new(format!(
            "bad --frames '{s}': {why} (expected A..B or A..=B, e.g. 0..90)"
        ))
    };
    let (a, b, inclusive) = if let Some((a, b)) = s.split_once("..=") {
        (a, b, true)
    } else if let Some((a, b)) = s.split_once("..") {
        (a, b, false)
    } else {
        return Err(bad("no '..'"));
    };
    let a: u32 = a.trim().parse().map_err(|_| bad("start is not a number"))?;
    let b: u32 = b.trim().parse().map_err(|_| bad("end is not a number"))?;
    let end = if inclusive { b.saturating_add(1) } else { b };
    if end <= a {
        return Err(bad("the range is empty"));
    }
    if end - a > 100_000 {
        return Err(bad("more than 100000 frames"));
    }
    Ok((a..end).collect())
}

pub fn run(args: Args) -> Result<(), CliError> {
    let (width, height) = parse_size(&args.size)?;
    use crate::limits;
    limits::RENDER_FPS
        .check_f32("--fps", args.fps)
        .map_err(CliError::new)?;
    limits::IMAGE_SIDE
        .check_u32("--gif-width", args.gif_width)
        .map_err(CliError::new)?;
    if args.no_png && args.gif.is_none() {
        return Err(CliError::new(
            "--no-png without --gif would write nothing".to_string(),
        ));
    }
    if args.samples != 1 && args.samples != 4 {
        return Err(CliError::new(format!(
            "bad --samples {}: expected 1 or 4",
            args.samples
        )));
    }
    // A scene file's character and configuration, the flags over them.
    let scene_file = match &args.scene {
        Some(p) => Some(
            crate::scene::SceneFile::load_scene(p)
                .map_err(|e| CliError::new(format!("{}: {e}", p.display())))?,
        ),
        None => None,
    };
    let method: SkinMethod = match (&args.method, &scene_file) {
        (Some(m), _) => m.parse().map_err(CliError::new)?,
        (None, Some((_, c))) => c.method,
        (None, None) => SkinMethod::Lbs,
    };
    let shading = Shading::from_name(&args.shader.to_ascii_lowercase()).ok_or_else(|| {
        CliError::new(format!(
            "unknown --shader '{}' (expected one of: {})",
            args.shader,
            Shading::ALL.map(|s| s.name()).join(", ")
        ))
    })?;
    let view: CameraView = args.camera.parse().map_err(CliError::new)?;
    limits::SPACING_SCALE
        .check_f32("--spacing", args.spacing)
        .map_err(CliError::new)?;
    if !args.wet.is_empty() && args.garments.is_empty() && scene_file.is_none() {
        return Err(CliError::new(
            "--wet needs garments to soak: add --garments (e.g. --garments cape --wet cape)",
        ));
    }
    if args.compare && args.wet.is_empty() {
        return Err(CliError::new(
            "--compare shows dry against wet: say which garments are wet with --wet (e.g. --wet all)",
        ));
    }
    let (mut rig, mut base) = match scene_file {
        Some((rig, config)) => (rig, Some(config)),
        None => {
            let rig =
                super::load_character(args.rig.as_deref(), &Default::default()).map_err(|e| {
                    CliError::new(match &args.rig {
                        Some(p) => format!("cannot load --rig {}: {e}", p.display()),
                        None => e.to_string(),
                    })
                })?;
            (rig, None)
        }
    };
    let rig_name = match (&args.scene, &args.rig) {
        (Some(_), _) => rig.source.clone(),
        (None, Some(p)) => p.display().to_string(),
        (None, None) => "the built-in ninja".to_string(),
    };
    // Hidden once, here: the clip's bounds and the drawn body are without them.
    let mut hide = base
        .as_mut()
        .map(|c| std::mem::take(&mut c.hide))
        .unwrap_or_default();
    hide.extend(args.hide.iter().cloned());
    rig.hide_meshes(&hide)
        .map_err(|e| CliError::new(format!("hide: {e}")))?;
    let clip_name = args
        .clip
        .clone()
        .or_else(|| base.as_ref().and_then(|c| c.clip.clone()));
    let clip = match &clip_name {
        Some(name) => Some(rig.clip(name).ok_or_else(|| {
            let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
            CliError::new(format!(
                "{rig_name} has no clip '{name}' (it has: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ))
        })?),
        None => (!rig.clips.is_empty()).then_some(0),
    };
    let duration = clip.map(|c| rig.clips[c].duration()).unwrap_or(0.0);
    let frames = match &args.frames {
        Some(f) => parse_frames(f)?,
        None => (0..=(duration * args.fps).round() as u32).collect(),
    };
    let times: Vec<f32> = frames.iter().map(|&f| f as f32 / args.fps).collect();
    let frame_paths: Vec<PathBuf> = if args.no_png {
        Vec::new()
    } else {
        frames
            .iter()
            .map(|f| args.out.join(format!("frame_{f:04}.png")))
            .collect()
    };
    refuse_overwrite(&args.out, &frame_paths, args.gif.as_deref(), args.force)?;

    let bounds = clip_bounds(&rig, clip, &times)
        .ok_or_else(|| CliError::new(format!("{rig_name} has no vertices")))?;
    let camera = view.camera(bounds, width as f32 / height as f32, 1.1);

    let ctx = GpuContext::headless().map_err(|e| CliError::new(format!("no GPU: {e}")))?;
    eprintln!(
        "drape render: {} frames of {} at {width}×{height}, {method}, {} shader, on {}",
        frames.len(),
        clip.map(|c| rig.clips[c].name.as_str())
            .unwrap_or("the rest pose"),
        shading.name(),
        ctx.summary
    );
    // The garments: the scene file's (their spacings × --spacing), or --garments.
    let from_file = base.is_some();
    let config = match base {
        Some(c) => Some(c),
        None => {
            let kinds = parse_garments(&args.garments, "--garments")?;
            (!kinds.is_empty()).then(|| SceneConfig {
                garments: kinds
                    .iter()
                    .map(|&k| GarmentSpec {
                        wear_unfit: args.wear_unfit,
                        ..GarmentSpec::coarse(k, args.spacing)
                    })
                    .collect(),
                ..SceneConfig::default()
            })
        }
    };
    let config = match config {
        Some(mut c) => {
            c.clip = clip.map(|c| rig.clips[c].name.clone());
            c.method = method;
            if let Some(m) = args.model {
                c.sim.model = m;
            }
            for (i, g) in c.garments.iter_mut().enumerate() {
                // A modelled garment keeps its mesh's spacing.
                if from_file && g.mesh.is_none() {
                    g.spacing = limits::SPACING
                        .check_f32(
                            &format!("--spacing × garment[{i}].spacing"),
                            g.spacing * args.spacing,
                        )
                        .map_err(CliError::new)?;
                }
            }
            (!c.garments.is_empty()).then_some(c)
        }
        None => None,
    };
    if !args.wet.is_empty() && config.is_none() {
        return Err(CliError::new(
            "--wet needs garments to soak: the scene file has none",
        ));
    }
    // `--wet all` means every garment worn.
    let wet_kinds = if args.wet.is_empty() {
        Vec::new()
    } else if args.wet.iter().any(|g| g == "all") {
        config
            .as_ref()
            .map(|c| c.garments.iter().map(|g| g.kind).collect())
            .unwrap_or_default()
    } else {
        parse_garments(&args.wet, "--wet")?
    };
    // The right-hand (or only) dressed scene carries --wet; with --compare a dry twin runs too.
    let mut dressed = dress(config.as_ref(), &rig, &wet_kinds)?;
    let mut dry_twin = if args.compare {
        dress(config.as_ref(), &rig, &[])?
    } else {
        None
    };
    // The body drawn: without the meshes a scene simulates as cloth (they are garments now).
    if let Some(d) = &dressed {
        rig = d.scene.rig.clone();
    }
    let mut stage = Stage::with_samples(
        &ctx,
        &rig,
        method,
        args.samples,
        &mut super::progress::cor_progress(),
    )
    .map_err(|e| CliError::new(format!("cannot upload {rig_name}: {e}")))?;

    if !args.no_png {
        std::fs::create_dir_all(&args.out).map_err(|e| {
            CliError::new(format!("cannot create --out {}: {e}", args.out.display()))
        })?;
    }
    let gif_height = ((height as f64 * args.gif_width as f64 / width as f64).round() as u32).max(1);
    let mut gif_frames: Vec<image::RgbaImage> = Vec::new();
    let mut total = FrameTimes::default();
    let mut bar = super::progress::Progress::new("rendering", frames.len() as u64, "frames");
    for (k, (&frame, &t)) in frames.iter().zip(&times).enumerate() {
        // Ctrl-C (cli::interrupt): stop between frames, saying what was written.
        super::interrupt::stop_if_requested(|| match (k, frame_paths.first()) {
            (0, _) | (_, None) => "no frame was written; the GIF was not written".to_string(),
            (_, Some(first)) => format!(
                "wrote {k} of {} frames ({} … {}); the GIF was not written",
                frames.len(),
                first.display(),
                frame_paths[k - 1].display()
            ),
        })?;
        let img = match &mut dressed {
            None => stage.render(&ctx, &rig, clip, t, shading, camera, &[], (width, height)),
            Some(d) => {
                let err = |e: String| CliError::new(format!("frame {frame}: {e}"));
                d.advance_to(frame, args.fps).map_err(err)?;
                let wet =
                    render_dressed(&mut stage, &ctx, &rig, d, shading, camera, (width, height));
                match (&mut dry_twin, wet) {
                    (Some(twin), Ok(wet)) => {
                        twin.advance_to(frame, args.fps).map_err(err)?;
                        let (wet_times, dry) = (
                            stage.last_times,
                            render_dressed(
                                &mut stage,
                                &ctx,
                                &rig,
                                twin,
                                shading,
                                camera,
                                (width, height),
                            ),
                        );
                        stage.last_times.skin_s += wet_times.skin_s;
                        stage.last_times.draw_s += wet_times.draw_s;
                        dry.map(|dry| side_by_side(&dry, &wet))
                    }
                    (_, wet) => wet,
                }
            }
        }
        .map_err(|e| CliError::new(format!("frame {frame}: {e}")))?;
        total.skin_s += stage.last_times.skin_s;
        total.draw_s += stage.last_times.draw_s;
        if let Some(path) = frame_paths.get(k) {
            crate::output::save_image(&img, path)
                .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))?;
        }
        if args.gif.is_some() {
            // With --compare the picture is two frames wide: keep its aspect in the GIF.
            let halves = if args.compare { 2 } else { 1 };
            gif_frames.push(image::imageops::resize(
                &img,
                args.gif_width * halves,
                gif_height,
                image::imageops::FilterType::Triangle,
            ));
        }
        bar.set(k as u64 + 1);
    }
    bar.finish();
    let n = frames.len() as f64;
    eprintln!(
        "per frame: skinning {:.2} ms, drawing + readback {:.2} ms (on {})",
        total.skin_s * 1e3 / n,
        total.draw_s * 1e3 / n,
        ctx.summary
    );
    if let Some(path) = &args.gif {
        write_gif(path, gif_frames, args.fps, args.force)?;
        eprintln!("wrote {}", path.display());
    }
    if !args.no_png {
        eprintln!("wrote {} frames to {}", frames.len(), args.out.display());
    }
    Ok(())
}

/// An animated GIF that loops forever, one frame per 1/fps seconds (GIF delays are in
/// hundredths of a second, so 30 fps plays at 1/30 s only approximately).
fn write_gif(
    path: &Path,
    frames: Vec<image::RgbaImage>,
    fps: f32,
    force: bool,
) -> Result<(), CliError> {
    use image::codecs::gif::{GifEncoder, Repeat};
    let err = |e: &dyn std::fmt::Display| {
        CliError::new(format!("cannot write --gif {}: {e}", path.display()))
    };
    let mut file = super::create_output(path, force)?;
    {
        // Speed 10 of 1..=30 (NeuQuant sampling): good colours at a tenth of the cost of speed 1.
        let mut enc = GifEncoder::new_with_speed(&mut file, 10);
        enc.set_repeat(Repeat::Infinite).map_err(|e| err(&e))?;
        let delay = image::Delay::from_numer_denom_ms(1000, fps.round().max(1.0) as u32);
        enc.encode_frames(
            frames
                .into_iter()
                .map(|f| image::Frame::from_parts(f, 0, 0, delay)),
        )
        .map_err(|e| err(&e))?;
    }
    super::commit_output(file)
}

/// A dressed character being simulated alongside the render.
struct Dressed {
    scene: crate::scene::Scene,
    /// Frames (at --fps) simulated since the clip started playing.
    frame: u32,
}

impl Dressed {
    /// Simulates up to `frame` (frames must not go backwards: the cloth has a history).
    fn advance_to(&mut self, frame: u32, fps: f32) -> Result<(), String> {
        if frame < self.frame {
            return Err("with --garments the frames must increase".into());
        }
        // The cloth steps at the simulation's own frame length (1/60 s by default), several
        // steps per rendered frame when --fps is lower.
        let steps = ((60.0 / fps).round() as u32).max(1);
        while self.frame < frame {
            for _ in 0..steps {
                self.scene.step(1.0 / (fps * steps as f32));
            }
            self.frame += 1;
        }
        Ok(())
    }
}

/// Garment names as given to --garments/--wet (`all` = every kind; `none` = no garment).
fn parse_garments(
    names: &[String],
    flag: &str,
) -> Result<Vec<crate::garments::GarmentKind>, CliError> {
    use crate::garments::GarmentKind;
    if names.iter().any(|g| g == "all") {
        return Ok(GarmentKind::ALL.to_vec());
    }
    names
        .iter()
        .filter(|g| g.as_str() != "none")
        .map(|g| g.parse::<GarmentKind>())
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::new(format!("{flag}: {e}")))
}

/// Builds and starts the dressed-character scene `config` describes (none without one), with
/// the garments of `wet` kinds soaked to saturation before they settle.
fn dress(
    config: Option<&SceneConfig>,
    rig: &crate::rig::Rig,
    wet: &[crate::garments::GarmentKind],
) -> Result<Option<Dressed>, CliError> {
    use crate::scene::Scene;
    let Some(config) = config else {
        return Ok(None);
    };
    let kinds: Vec<_> = config.garments.iter().map(|g| g.kind).collect();
    if let Some(k) = wet.iter().find(|k| !kinds.contains(k)) {
        return Err(CliError::new(format!(
            "--wet {} is not worn (the garments are {})",
            k.name(),
            kinds
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut scene = Scene::new_with_progress(
        rig.clone(),
        config.clone(),
        &mut super::progress::cor_progress(),
    )
    .map_err(|e| CliError::new(format!("cannot dress the character: {e}")))?;
    eprint!("{}", super::bake::refused_note(&scene));
    let mut soaked = 0;
    for (g, garment) in scene.garments.iter().enumerate() {
        if wet.contains(&garment.kind) {
            let particles = scene.model.garments[g].particles.clone();
            for i in particles {
                scene
                    .state
                    .set_wetness(&scene.model, i, WET_FABRIC.saturation);
                soaked += 1;
            }
        }
    }
    eprintln!(
        "settling {} garment(s){} and blending into the clip…",
        kinds.len(),
        if soaked > 0 {
            format!(" ({soaked} particles soaked)")
        } else {
            String::new()
        }
    );
    let startup_frames = (scene.startup_seconds() * 60.0).ceil() as u32;
    for _ in 0..startup_frames {
        scene.step(1.0 / 60.0);
    }
    Ok(Some(Dressed { scene, frame: 0 }))
}

/// The fabric whose saturation law --wet applies and whose saturation shows as wetness 1.
const WET_FABRIC: crate::cloth::wet::Fabric = crate::cloth::wet::Fabric::COTTON;

/// Renders the dressed scene's current frame: the body in the scene's pose and every garment
/// with its wetness (absorbed water as a fraction of saturation) and its kind's colour.
fn render_dressed(
    stage: &mut Stage,
    ctx: &GpuContext,
    rig: &crate::rig::Rig,
    d: &Dressed,
    shading: Shading,
    camera: crate::gpu::Camera,
    size: (u32, u32),
) -> Result<image::RgbaImage, crate::gpu::GpuError> {
    let scene = &d.scene;
    let frames: Vec<crate::scene::GarmentFrame> = (0..scene.garments.len())
        .map(|g| scene.garment_frame(g))
        .collect();
    let flat: Vec<Vec<u32>> = frames
        .iter()
        .map(|g| g.triangles.iter().flatten().copied().collect())
        .collect();
    let wet: Vec<Vec<f32>> = frames
        .iter()
        .map(|g| {
            g.wetness
                .iter()
                .map(|&a| (a / WET_FABRIC.saturation).min(1.0))
                .collect()
        })
        .collect();
    let garments: Vec<GarmentFrame> = frames
        .iter()
        .zip(&flat)
        .zip(&wet)
        .zip(&scene.garments)
        .map(|(((g, tris), wet), garment)| GarmentFrame {
            name: &g.name,
            positions: &g.positions,
            normals: &g.normals,
            triangles: tris,
            wetness: wet,
            material: match crate::garments::mesh::material_color(&scene.rig, garment.mesh.as_ref())
            {
                // A mesh garment in its own material's colour (its texture's mean under its UVs).
                Some(c) => crate::gpu::renderer::ObjectMaterial {
                    base_color: c,
                    ..Default::default()
                },
                None => garment_material(garment.kind),
            },
        })
        .collect();
    stage.render_posed(
        ctx,
        rig,
        scene.world_from_node(),
        shading,
        camera,
        &garments,
        size,
    )
}

/// `left` and `right` (same height) as one image, left beside right.
fn side_by_side(left: &image::RgbaImage, right: &image::RgbaImage) -> image::RgbaImage {
    let mut out = image::RgbaImage::new(left.width() + right.width(), left.height());
    image::imageops::replace(&mut out, left, 0, 0);
    image::imageops::replace(&mut out, right, left.width() as i64, 0);
    out
}

/// Refuses to run when it would replace files: any of `frames` (the PNGs this run writes into
/// `out`) or `gif`, unless `force`. Checked before any simulation or GPU work.
fn refuse_overwrite(
    out: &Path,
    frames: &[PathBuf],
    gif: Option<&Path>,
    force: bool,
) -> Result<(), CliError> {
    if force {
        return Ok(());
    }
    let existing: Vec<&PathBuf> = frames.iter().filter(|p| p.exists()).collect();
    if let Some(first) = existing.first() {
        return Err(CliError::new(format!(
            "--out {} already holds {} of the frames this would write ({}{}); pass --force to \
             overwrite them, or choose another --out",
            out.display(),
            existing.len(),
            first.file_name().unwrap_or_default().to_string_lossy(),
            if existing.len() > 1 { ", …" } else { "" }
        )));
    }
    if let Some(gif) = gif.filter(|g| g.exists()) {
        return Err(CliError::new(format!(
            "--gif {} already exists; pass --force to overwrite it",
            gif.display()
        )));
    }
    Ok(())
}

/// A distinct cloth colour per garment kind (indigo cape, charcoal hakama, red sash, white
/// headband).
fn garment_material(kind: crate::garments::GarmentKind) -> crate::gpu::renderer::ObjectMaterial {
    use crate::garments::GarmentKind;
    let c = match kind {
        GarmentKind::Cape => [0.18, 0.22, 0.45],
        GarmentKind::Hakama => [0.16, 0.16, 0.18],
        GarmentKind::Sash => [0.62, 0.10, 0.10],
        GarmentKind::Headband => [0.85, 0.85, 0.80],
        GarmentKind::Mesh => [0.5, 0.5, 0.5],
    };
    crate::gpu::renderer::ObjectMaterial {
        base_color: crate::math::Vec4::new(c[0], c[1], c[2], 1.0),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> Args {
        Args {
            scene: None,
            rig: None,
            hide: Vec::new(),
            clip: None,
            frames: Some("0..1".into()),
            fps: 30.0,
            size: "64x64".into(),
            out: std::env::temp_dir().join("drape_render_cli_test"),
            gif: None,
            gif_width: 480,
            no_png: false,
            method: None,
            shader: "texture".into(),
            camera: "auto".into(),
            garments: Vec::new(),
            wear_unfit: false,
            spacing: 1.0,
            model: None,
            wet: Vec::new(),
            compare: false,
            samples: 4,
            force: false,
        }
    }

    /// Bad input is refused before any GPU work, with a message naming the problem.
    #[test]
    fn bad_rig_clip_and_options_are_named() {
        let err = |a: Args| run(a).unwrap_err().to_string();
        let e = err(Args {
            rig: Some("/no/such/rig.glb".into()),
            ..args()
        });
        assert!(e.contains("--rig") && e.contains("/no/such/rig.glb"), "{e}");
        let e = err(Args {
            clip: Some("moonwalk".into()),
            ..args()
        });
        assert!(
            e.contains("no clip 'moonwalk'") && e.contains("roundhouse_kick"),
            "{e}"
        );
        let e = err(Args {
            size: "12x12".into(),
            ..args()
        });
        assert!(e.contains("--size"), "{e}");
        let e = err(Args {
            shader: "pastel".into(),
            ..args()
        });
        assert!(e.contains("--shader") && e.contains("toon"), "{e}");
        let e = err(Args {
            method: Some("magic".into()),
            ..args()
        });
        assert!(e.contains("magic"), "{e}");
        let e = err(Args {
            camera: "0,95".into(),
            ..args()
        });
        assert!(e.contains("camera"), "{e}");
        let e = err(Args {
            no_png: true,
            ..args()
        });
        assert!(e.contains("--no-png"), "{e}");
        let e = err(Args {
            samples: 2,
            ..args()
        });
        assert!(e.contains("--samples"), "{e}");
        for bad in [0.5, 3.5, f32::NAN] {
            let e = err(Args {
                spacing: bad,
                ..args()
            });
            assert!(e.contains("--spacing"), "{bad}: {e}");
        }
        let e = err(Args {
            wet: vec!["cape".into()],
            ..args()
        });
        assert!(e.contains("--wet") && e.contains("--garments"), "{e}");
        let e = err(Args {
            garments: vec!["cape".into()],
            compare: true,
            ..args()
        });
        assert!(e.contains("--compare") && e.contains("--wet"), "{e}");
        // A scene file: missing, with a bad key, hiding a mesh the character does not have.
        let dir = std::env::temp_dir().join(format!("drape_render_scene_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let scene = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            Args {
                scene: Some(p),
                ..args()
            }
        };
        let e = err(Args {
            scene: Some(dir.join("missing.toml")),
            ..args()
        });
        assert!(e.contains("missing.toml"), "{e}");
        let e = err(scene("typo.toml", "substep = 8\n"));
        assert!(e.contains("typo.toml") && e.contains("substeps"), "{e}");
        let e = err(scene("hide.toml", "hide = [\"Cape\"]\n"));
        assert!(e.contains("'Cape' names no mesh"), "{e}");
        let e = err(Args {
            hide: vec!["Ninja".into()],
            ..args()
        });
        assert!(e.contains("every mesh"), "{e}");
        let e = err(Args {
            clip: Some("moonwalk".into()),
            ..scene("clip.toml", "clip = \"stance\"\n")
        });
        assert!(e.contains("no clip 'moonwalk'"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Frames already in --out and an existing --gif are refused before any work, naming the
    /// folder; nothing is touched.
    #[test]
    fn existing_frames_and_gif_are_kept_unless_forced() {
        let out = std::env::temp_dir().join(format!("drape_render_force_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).unwrap();
        let frames = vec![out.join("frame_0000.png"), out.join("frame_0001.png")];
        // An empty folder, or one holding other files, is fine.
        std::fs::write(out.join("notes.txt"), "x").unwrap();
        refuse_overwrite(&out, &frames, None, false).unwrap();
        std::fs::write(&frames[1], "mine").unwrap();
        let e = refuse_overwrite(&out, &frames, None, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&out.display().to_string())
                && e.contains("frame_0001.png")
                && e.contains("--force"),
            "{e}"
        );
        refuse_overwrite(&out, &frames, None, true).unwrap();
        let gif = out.join("notes.txt");
        let e = refuse_overwrite(&out, &frames[..1], Some(&gif), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--gif") && e.contains("notes.txt"), "{e}");
        // Through run(): refused before the GPU is asked for anything.
        let e = run(Args {
            out: out.clone(),
            frames: Some("1..2".into()),
            ..args()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("--force"), "{e}");
        assert_eq!(std::fs::read_to_string(&frames[1]).unwrap(), "mine");
        let _ = std::fs::remove_dir_all(&out);
    }

    #[test]
    fn sizes_and_ranges_parse_and_bad_ones_name_the_problem() {
        assert_eq!(parse_size("1280x720").unwrap(), (1280, 720));
        assert_eq!(parse_size("256X256").unwrap(), (256, 256));
        for bad in ["", "1280", "0x720", "10x10", "99999x10", "axb", "1280x"] {
            let e = parse_size(bad).unwrap_err().to_string();
            assert!(e.contains("--size"), "{bad}: {e}");
        }
        assert_eq!(parse_frames("0..3").unwrap(), vec![0, 1, 2]);
        assert_eq!(parse_frames("5..=6").unwrap(), vec![5, 6]);
        for bad in ["", "3", "3..3", "4..2", "a..3", "0..1000000"] {
            let e = parse_frames(bad).unwrap_err().to_string();
            assert!(e.contains("--frames"), "{bad}: {e}");
        }
    }
}
