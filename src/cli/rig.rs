//! `drape rig`: generates the built-in ninja and, on request, its contact sheets.
//!
//! ```text
//! drape rig --out rigs/ninja.glb             # the committed default character
//! drape rig --sheet docs/ninja_sheet.png     # every clip at 6 times, front and side
//! drape rig --sheet docs/ninja_sheet.png --per-clip   # also docs/ninja_sheet_<clip>.png
//! drape rig --corpus rigs/corpus             # issue 19's test bodies (robot, soldier, long_hair)
//! drape rig --corpus rigs/corpus --sheet docs/corpus_sheet.png   # + docs/corpus_sheet_<body>.png
//! ```

use std::path::PathBuf;

use super::CliError;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where to write the glb (default rigs/ninja.glb when neither --out nor --sheet is given).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write the ninja as binary FBX (Mixamo's layout: centimetres, Y up, `mixamorig:`
    /// LimbNodes, a Skin with one Cluster per joint, one `AnimationStack` per clip).
    #[arg(long)]
    pub fbx: Option<PathBuf>,
    /// Write a contact sheet PNG of every clip (front and side views).
    #[arg(long)]
    pub sheet: Option<PathBuf>,
    /// Columns (sample times) per clip on the sheet, 2..=16 (default 6).
    #[arg(long, default_value_t = 6)]
    pub columns: usize,
    /// Height of one view on the sheet in pixels, 100..=2000 (default 260).
    #[arg(long, default_value_t = 260)]
    pub tile_height: u32,
    /// Explicit sample times in seconds (comma-separated) instead of evenly spaced columns.
    #[arg(long, value_delimiter = ',')]
    pub times: Vec<f32>,
    /// Sample each clip at its key poses (at most --columns of them) instead of evenly.
    #[arg(long)]
    pub keys: bool,
    /// Only these clips on the sheet (repeatable; default all).
    #[arg(long = "clip")]
    pub clips: Vec<String>,
    /// Also write one sheet per clip beside --sheet (`<stem>_<clip>.png`, its key poses, ≤ 14).
    #[arg(long)]
    pub per_clip: bool,
    /// Generate the test corpus instead of the ninja: `robot.glb`, `soldier.glb` and
    /// `long_hair.glb` (bodies and motions like real Mixamo exports) into this folder; with
    /// --sheet, one contact sheet per body (`<stem>_<body>.png`, every clip at --columns times).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
}

fn write_png(canvas: &crate::raster::Canvas, path: &std::path::Path) -> Result<(), CliError> {
    let png = canvas
        .to_png()
        .map_err(|e| CliError::new(format!("could not encode {}: {e}", path.display())))?;
    crate::output::write_atomic(path, &png)
        .map_err(|e| CliError::new(format!("could not write {}: {e}", path.display())))
}

/// `--corpus DIR`: the three corpus bodies, and their sheets when asked.
fn run_corpus(args: &Args, dir: &std::path::Path) -> Result<(), CliError> {
    if args.out.is_some() || args.per_clip || !args.times.is_empty() || args.keys {
        return Err(CliError::new(
            "--corpus writes its own files: --out, --per-clip, --times and --keys apply to the ninja only",
        ));
    }
    crate::limits::TILE_HEIGHT
        .check_u32("--tile-height", args.tile_height)
        .map_err(CliError::new)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::new(format!("could not create {}: {e}", dir.display())))?;
    let bodies = crate::ninja::corpus::build_all().map_err(|e| CliError::new(e.to_string()))?;
    for body in &bodies {
        let rig = &body.rig;
        let path = dir.join(body.kind.file_name());
        crate::asset::export::write_glb(rig, &path).map_err(|e| CliError::new(e.to_string()))?;
        println!(
            "wrote {}: {} joints, meshes {}, {} vertices, {} triangles, clips: {}",
            path.display(),
            rig.skins[0].joints.len(),
            rig.meshes
                .iter()
                .map(|m| format!("{} ({} vertices)", m.name, m.vertex_count()))
                .collect::<Vec<_>>()
                .join(" + "),
            rig.vertex_count(),
            rig.meshes.iter().map(|m| m.triangle_count()).sum::<usize>(),
            rig.clips
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some(sheet) = &args.sheet {
            let mut chosen = Vec::new();
            for name in &args.clips {
                chosen.push(
                    rig.clip(name)
                        .ok_or_else(|| CliError::new(format!("no corpus clip {name:?}")))?,
                );
            }
            if chosen.is_empty() {
                chosen = (0..rig.clips.len()).collect();
            }
            let stem = sheet
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("sheet");
            let path = sheet.with_file_name(format!("{stem}_{}.png", body.kind.name()));
            let canvas = crate::ninja::sheet::contact_sheet(
                rig,
                &chosen,
                args.columns,
                args.tile_height,
                &[],
            );
            write_png(&canvas, &path)?;
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}

pub fn run(args: Args) -> Result<(), CliError> {
    crate::limits::COLUMNS
        .check("--columns", args.columns as f64)
        .map_err(CliError::new)?;
    if let Some(dir) = &args.corpus {
        return run_corpus(&args, dir);
    }
    let ninja = crate::ninja::build().map_err(|e| CliError::new(e.to_string()))?;
    let rig = &ninja.rig;
    if let Some(path) = &args.fbx {
        crate::asset::fbx::write_fbx(rig, path, &Default::default())
            .map_err(|e| CliError::new(e.to_string()))?;
        println!(
            "wrote {}: binary FBX 7400, {} vertices, clips: {}",
            path.display(),
            rig.vertex_count(),
            rig.clips
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let out = match (&args.out, &args.sheet, &args.fbx) {
        (None, None, Some(_)) => None,
        (None, None, None) => Some(PathBuf::from(crate::ninja::DEFAULT_PATH)),
        (o, _, _) => o.clone(),
    };
    if let Some(out) = out {
        crate::asset::export::write_glb(rig, &out).map_err(|e| CliError::new(e.to_string()))?;
        println!(
            "wrote {}: {} joints, {} vertices, {} triangles, clips: {}",
            out.display(),
            rig.skins[0].joints.len(),
            rig.vertex_count(),
            rig.meshes.iter().map(|m| m.triangle_count()).sum::<usize>(),
            rig.clips
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some(sheet) = &args.sheet {
        if !(100..=2000).contains(&args.tile_height) {
            return Err(CliError::new("--tile-height must be between 100 and 2000"));
        }
        let mut chosen = Vec::new();
        for name in &args.clips {
            chosen.push(
                rig.clip(name)
                    .ok_or_else(|| CliError::new(format!("no clip {name:?}")))?,
            );
        }
        if chosen.is_empty() {
            chosen = (0..rig.clips.len()).collect();
        }
        // Sample times per row: --times for every row, or the clip's key poses (--keys, at most
        // `columns` of them, evenly picked), or evenly spaced times.
        let key_times = |clip: usize, max: usize| -> Vec<f32> {
            let k = &ninja.expanded[clip].key_times;
            if k.len() <= max {
                k.clone()
            } else {
                (0..max).map(|i| k[i * (k.len() - 1) / (max - 1)]).collect()
            }
        };
        let rows: Vec<Vec<f32>> = chosen
            .iter()
            .map(|&c| {
                if !args.times.is_empty() {
                    args.times.clone()
                } else if args.keys {
                    key_times(c, args.columns)
                } else {
                    Vec::new()
                }
            })
            .collect();
        let canvas =
            crate::ninja::sheet::contact_sheet(rig, &chosen, args.columns, args.tile_height, &rows);
        write_png(&canvas, sheet)?;
        println!("wrote {}", sheet.display());
        if args.per_clip {
            let stem = sheet
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("sheet");
            for (i, c) in rig.clips.iter().enumerate() {
                let path = sheet.with_file_name(format!("{stem}_{}.png", c.name));
                let times = [key_times(i, 14)];
                let canvas =
                    crate::ninja::sheet::contact_sheet(rig, &[i], 14, args.tile_height, &times);
                write_png(&canvas, &path)?;
                println!("wrote {}", path.display());
            }
        }
    }
    Ok(())
}
