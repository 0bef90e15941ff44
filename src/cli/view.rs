//! `drape view` (and `drape` with no subcommand): the interactive viewer on the built-in ninja
//! (or a .glb/.gltf/.fbx) in its garments, playing a martial-arts clip. See `drape::app`.
//!
//! ```text
//! drape                                   # the ninja, roundhouse kick, all garments
//! drape view character.glb
//! drape view --screenshot out.png --after-frames 120 --size 1280x800 --action method=dqs@60
//! drape view --quit-after 600 --no-vsync  # prints the frame rate
//! ```

use std::path::PathBuf;

use super::CliError;

#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// A .glb/.gltf/.fbx character to open (default: the built-in ninja).
    pub file: Option<PathBuf>,
    /// Add the clips of this file (a Mixamo "without skin" FBX, …), matched by bone name and
    /// named after its stem. Repeatable.
    #[arg(long = "clips-from", value_name = "FILE")]
    pub clips_from: Vec<PathBuf>,
    /// Take a mesh off the character: a mesh or node name, or a node above it (`handslot.r`:
    /// whatever the right hand holds); `*` and `?` as in a shell. Repeatable.
    #[arg(long, value_name = "NAME")]
    pub hide: Vec<String>,
    /// Save the frame drawn at --after-frames to this PNG and exit (the world then advances
    /// exactly 1/60 s per frame, so the picture does not depend on the machine's speed).
    #[arg(long)]
    pub screenshot: Option<PathBuf>,
    /// Frame number (from 1) of the screenshot.
    #[arg(long, default_value_t = 120)]
    pub after_frames: u32,
    /// Window size in physical pixels, WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x800")]
    pub size: String,
    /// `KEY=VALUE[@FRAME]`: a control to set at a frame (default 1), through the same path as
    /// the panel, e.g. `method=dqs@60`, `clip=kata`, `garment.cape=off`, `wet=on`, `wind=8`,
    /// `fabric.cape.k_bend=2`, `proxies=on`, `pause@90`. Repeatable.
    #[arg(long = "action", value_name = "KEY=VALUE@FRAME")]
    pub actions: Vec<String>,
    /// Neither read nor write the settings file (also: DRAPE_NO_SETTINGS=1).
    #[arg(long)]
    pub no_settings: bool,
    /// Exit after this many frames and print the frame rate and the CPU time per frame.
    #[arg(long)]
    pub quit_after: Option<u32>,
    /// Do not wait for vertical blank (measure the frame rate).
    #[arg(long)]
    pub no_vsync: bool,
    /// Advance the world by exactly 1/60 s per frame (implied by --screenshot).
    #[arg(long)]
    pub fixed_step: bool,
}

#[cfg(not(feature = "app"))]
pub fn run(_args: Args) -> Result<(), CliError> {
    Err(CliError::new(
        "this drape was built without the `app` feature, so it has no window; build with \
         default features (`cargo run --release`), or render offscreen with `drape render`",
    ))
}

#[cfg(feature = "app")]
pub fn run(args: Args) -> Result<(), CliError> {
    use crate::app::settings::SettingsStore;
    use crate::app::viewer::parse_scheduled;
    use crate::app::window::{self, Options};

    let size = super::render::parse_size(&args.size)?;
    let actions = args
        .actions
        .iter()
        .map(|a| parse_scheduled(a).map_err(|e| CliError::new(format!("--action {a}: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    if args.after_frames == 0 {
        return Err(CliError::new("--after-frames must be ≥ 1"));
    }
    if let Some(path) = &args.file {
        if !path.is_file() {
            return Err(CliError::new(format!("{}: no such file", path.display())));
        }
    }
    let opts = Options {
        character: args.file.clone(),
        clips_from: args.clips_from.clone(),
        hide: args.hide.clone(),
        settings: if args.no_settings {
            SettingsStore::none()
        } else {
            SettingsStore::user()
        },
        size,
        screenshot: args.screenshot.clone(),
        after_frames: args.after_frames,
        quit_after: args.quit_after,
        actions,
        fixed_step: args.fixed_step || args.screenshot.is_some(),
        vsync: !args.no_vsync,
    };
    let report = window::run(opts).map_err(|e| CliError::new(e.to_string()))?;
    if args.screenshot.is_some() || args.quit_after.is_some() {
        let n = report.frames.max(1) as f64;
        eprintln!(
            "drape view: {} frames at {}×{} in {:.2} s: {:.1} fps; CPU simulation {:.1} ms/frame \
             (pose, skin, proxies, cloth), drawing {:.1} ms/frame, {} particles, {} lagging \
             frames, on {}",
            report.frames,
            report.size.0,
            report.size.1,
            report.seconds,
            report.fps(),
            report.sim_seconds * 1e3 / n,
            report.draw_seconds * 1e3 / n,
            report.particles,
            report.lagging_frames,
            report.adapter
        );
    }
    Ok(())
}

impl Args {
    /// What plain `drape` runs: the viewer with its defaults.
    pub fn default_view() -> Self {
        Self {
            after_frames: 120,
            size: "1280x800".into(),
            ..Default::default()
        }
    }
}
