//! `drape render`: a clip rendered offscreen with the wgpu renderer into numbered PNG frames and,
//! on request, an animated GIF.
//!
//! ```text
//! drape render --clip roundhouse_kick --frames 0..90 --size 1280x720 --out out/ --gif kick.gif
//! drape render --rig ../shared/rigs/khronos/Fox/glTF-Binary/Fox.glb --clip Run --method dqs
//! drape render --clip stance --frames 0..1 --shader toon --camera 30,10
//! ```
//!
//! Frames are sampled at a fixed step (`--fps`, default 30), never from the wall clock, so the
//! same command writes the same pictures. The camera is framed once over every frame of the
//! range. Garments: [`crate::gpu::stage::GarmentFrame`] is the hook; the dressed-character scene
//! hands its garments to `Stage::render` each frame.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use super::CliError;
use crate::gpu::renderer::Shading;
use crate::gpu::stage::{clip_bounds, CameraView, FrameTimes, GarmentFrame, Stage};
use crate::gpu::GpuContext;
use crate::skin::SkinMethod;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The character (.glb/.gltf); default the built-in ninja, rigs/ninja.glb.
    #[arg(long, default_value = "rigs/ninja.glb")]
    pub rig: PathBuf,
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
    /// Skinning method: lbs, dqs or cor (default lbs).
    #[arg(long, default_value = "lbs")]
    pub method: String,
    /// Shader: wireframe, normals, phong, texture, bump, displace, mirror or toon (default
    /// texture: the rig's own colour maps, lit with Blinn-Phong).
    #[arg(long, default_value = "texture")]
    pub shader: String,
    /// Camera: auto, front, side or AZ,EL[,DIST] (degrees, degrees, metres).
    #[arg(long, default_value = "auto")]
    pub camera: String,
    /// Dress the character and simulate the garments: a comma-separated list of cape, hakama,
    /// sash, headband (or `all`). The garments settle and the body blends into the clip before
    /// frame 0; the clip then plays in place. Default: no garments.
    #[arg(long, value_delimiter = ',')]
    pub garments: Vec<String>,
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
    if !(16..=8192).contains(&w) || !(16..=8192).contains(&h) {
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
    if !(1.0..=240.0).contains(&args.fps) {
        return Err(CliError::new(format!(
            "bad --fps {}: expected 1..=240",
            args.fps
        )));
    }
    if !(16..=8192).contains(&args.gif_width) {
        return Err(CliError::new(format!(
            "bad --gif-width {}: expected 16..=8192",
            args.gif_width
        )));
    }
    if args.no_png && args.gif.is_none() {
        return Err(CliError::new(
            "--no-png without --gif would write nothing".to_string(),
        ));
    }
    let method: SkinMethod = args.method.parse().map_err(CliError::new)?;
    let shading = Shading::from_name(&args.shader.to_ascii_lowercase()).ok_or_else(|| {
        CliError::new(format!(
            "unknown --shader '{}' (expected one of: {})",
            args.shader,
            Shading::ALL.map(|s| s.name()).join(", ")
        ))
    })?;
    let view: CameraView = args.camera.parse().map_err(CliError::new)?;
    let rig = crate::asset::load_rig(&args.rig)
        .map_err(|e| CliError::new(format!("cannot load --rig {}: {e}", args.rig.display())))?;
    let clip = match &args.clip {
        Some(name) => Some(rig.clip(name).ok_or_else(|| {
            let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
            CliError::new(format!(
                "{} has no clip '{name}' (it has: {})",
                args.rig.display(),
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

    let bounds = clip_bounds(&rig, clip, &times)
        .ok_or_else(|| CliError::new(format!("{} has no vertices", args.rig.display())))?;
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
    let mut dressed = dress(&args, &rig, clip, method)?;
    let mut stage = Stage::new(&ctx, &rig, method, &mut |_, p| {
        if let crate::skin::CorProgress::Computing { done, total } = p {
            eprint!("\rcentres of rotation: {done}/{total}   ");
        }
    })
    .map_err(|e| CliError::new(format!("cannot upload {}: {e}", args.rig.display())))?;

    if !args.no_png {
        std::fs::create_dir_all(&args.out).map_err(|e| {
            CliError::new(format!("cannot create --out {}: {e}", args.out.display()))
        })?;
    }
    let gif_height = ((height as f64 * args.gif_width as f64 / width as f64).round() as u32).max(1);
    let mut gif_frames: Vec<image::RgbaImage> = Vec::new();
    let mut total = FrameTimes::default();
    let started = Instant::now();
    for (k, (&frame, &t)) in frames.iter().zip(&times).enumerate() {
        let img = match &mut dressed {
            None => stage.render(&ctx, &rig, clip, t, shading, camera, &[], (width, height)),
            Some(d) => {
                d.advance_to(frame, args.fps)
                    .map_err(|e| CliError::new(format!("frame {frame}: {e}")))?;
                let frames: Vec<crate::scene::GarmentFrame> = (0..d.scene.garments.len())
                    .map(|g| d.scene.garment_frame(g))
                    .collect();
                let flat: Vec<Vec<u32>> = frames
                    .iter()
                    .map(|g| g.triangles.iter().flatten().copied().collect())
                    .collect();
                let wet: Vec<Vec<f32>> = frames
                    .iter()
                    .map(|g| {
                        // Absorbed water (g/g) shown as a 0–1 wetness: saturated cotton is 1.
                        let b = crate::cloth::wet::Fabric::COTTON.saturation;
                        g.wetness.iter().map(|&a| (a / b).min(1.0)).collect()
                    })
                    .collect();
                let garments: Vec<GarmentFrame> = frames
                    .iter()
                    .zip(&flat)
                    .zip(&wet)
                    .enumerate()
                    .map(|(i, ((g, tris), wet))| GarmentFrame {
                        name: &g.name,
                        positions: &g.positions,
                        normals: &g.normals,
                        triangles: tris,
                        wetness: wet,
                        material: garment_material(i),
                    })
                    .collect();
                stage.render_posed(
                    &ctx,
                    &rig,
                    d.scene.world_from_node(),
                    shading,
                    camera,
                    &garments,
                    (width, height),
                )
            }
        }
        .map_err(|e| CliError::new(format!("frame {frame}: {e}")))?;
        total.skin_s += stage.last_times.skin_s;
        total.draw_s += stage.last_times.draw_s;
        if !args.no_png {
            let path = args.out.join(format!("frame_{frame:04}.png"));
            img.save(&path)
                .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))?;
        }
        if args.gif.is_some() {
            gif_frames.push(image::imageops::resize(
                &img,
                args.gif_width,
                gif_height,
                image::imageops::FilterType::Triangle,
            ));
        }
        progress(k + 1, frames.len(), started.elapsed().as_secs_f64());
    }
    eprintln!();
    let n = frames.len() as f64;
    eprintln!(
        "per frame: skinning {:.2} ms, drawing + readback {:.2} ms (on {})",
        total.skin_s * 1e3 / n,
        total.draw_s * 1e3 / n,
        ctx.summary
    );
    if let Some(path) = &args.gif {
        write_gif(path, gif_frames, args.fps)?;
        eprintln!("wrote {}", path.display());
    }
    if !args.no_png {
        eprintln!("wrote {} frames to {}", frames.len(), args.out.display());
    }
    Ok(())
}

/// A one-line progress bar on stderr, redrawn in place.
fn progress(done: usize, total: usize, elapsed_s: f64) {
    const WIDTH: usize = 30;
    let filled = done * WIDTH / total.max(1);
    let eta = elapsed_s / done.max(1) as f64 * (total - done) as f64;
    eprint!(
        "\r[{}{}] {done}/{total} frames, {:.2} s/frame, {eta:.0} s left ",
        "#".repeat(filled),
        " ".repeat(WIDTH - filled),
        elapsed_s / done.max(1) as f64
    );
    std::io::stderr().flush().ok();
}

/// An animated GIF that loops forever, one frame per 1/fps seconds (GIF delays are in
/// hundredths of a second, so 30 fps plays at 1/30 s only approximately).
fn write_gif(path: &PathBuf, frames: Vec<image::RgbaImage>, fps: f32) -> Result<(), CliError> {
    use image::codecs::gif::{GifEncoder, Repeat};
    let err = |e: &dyn std::fmt::Display| {
        CliError::new(format!("cannot write --gif {}: {e}", path.display()))
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
    }
    let file = std::fs::File::create(path).map_err(|e| err(&e))?;
    // Speed 10 of 1..=30 (NeuQuant sampling): good colours at a tenth of the cost of speed 1.
    let mut enc = GifEncoder::new_with_speed(std::io::BufWriter::new(file), 10);
    enc.set_repeat(Repeat::Infinite).map_err(|e| err(&e))?;
    let delay = image::Delay::from_numer_denom_ms(1000, fps.round().max(1.0) as u32);
    enc.encode_frames(
        frames
            .into_iter()
            .map(|f| image::Frame::from_parts(f, 0, 0, delay)),
    )
    .map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> Args {
        Args {
            rig: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/rigs/ninja.glb")),
            clip: None,
            frames: Some("0..1".into()),
            fps: 30.0,
            size: "64x64".into(),
            out: std::env::temp_dir().join("drape_render_cli_test"),
            gif: None,
            gif_width: 480,
            no_png: false,
            method: "lbs".into(),
            shader: "texture".into(),
            camera: "auto".into(),
            garments: Vec::new(),
        }
    }

    /// Bad input is refused before any GPU work, with a message naming the problem.
    #[test]
    fn bad_rig_clip_and_options_are_named() {
        let err = |a: Args| run(a).unwrap_err().to_string();
        let e = err(Args {
            rig: "/no/such/rig.glb".into(),
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
            method: "magic".into(),
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

/// Builds and starts the dressed-character scene when --garments asks for one.
fn dress(
    args: &Args,
    rig: &crate::rig::Rig,
    clip: Option<usize>,
    method: SkinMethod,
) -> Result<Option<Dressed>, CliError> {
    use crate::garments::{GarmentKind, GarmentSpec};
    use crate::scene::{Scene, SceneConfig};
    if args.garments.is_empty() || args.garments.iter().all(|g| g == "none") {
        return Ok(None);
    }
    let kinds: Vec<GarmentKind> = if args.garments.iter().any(|g| g == "all") {
        GarmentKind::ALL.to_vec()
    } else {
        args.garments
            .iter()
            .map(|g| g.parse::<GarmentKind>())
            .collect::<Result<_, _>>()
            .map_err(|e| CliError::new(format!("--garments: {e}")))?
    };
    let config = SceneConfig {
        clip: clip.map(|c| rig.clips[c].name.clone()),
        method,
        garments: kinds.iter().map(|&k| GarmentSpec::new(k)).collect(),
        ..SceneConfig::default()
    };
    let mut scene = Scene::new(rig.clone(), config)
        .map_err(|e| CliError::new(format!("cannot dress {}: {e}", args.rig.display())))?;
    eprintln!(
        "settling {} garment(s) and blending into the clip…",
        kinds.len()
    );
    let startup_frames = (scene.startup_seconds() * 60.0).ceil() as u32;
    for _ in 0..startup_frames {
        scene.step(1.0 / 60.0);
    }
    Ok(Some(Dressed { scene, frame: 0 }))
}

/// A distinct cloth colour per garment (indigo cape, charcoal hakama, red sash, white headband).
fn garment_material(i: usize) -> crate::gpu::renderer::ObjectMaterial {
    const COLOURS: [[f32; 3]; 4] = [
        [0.18, 0.22, 0.45],
        [0.16, 0.16, 0.18],
        [0.62, 0.10, 0.10],
        [0.85, 0.85, 0.80],
    ];
    let c = COLOURS[i % COLOURS.len()];
    crate::gpu::renderer::ObjectMaterial {
        base_color: crate::math::Vec4::new(c[0], c[1], c[2], 1.0),
        ..Default::default()
    }
}
