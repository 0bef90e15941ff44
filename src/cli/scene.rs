//! `drape scene NAME`: runs one of the cloth scenes headless, writing per-frame statistics
//! (stats.csv), the final frame (final.obj, final.ply) and a picture of it (final.png). Those
//! files are never replaced in an existing --out without --force.

use std::io::Write;
use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::CliError;
use crate::cloth::export;
use crate::cloth::scenes::{build_scene, SceneOptions, SCENE_NAMES};
use crate::cloth::{ClothModelKind, Integrator};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Scene: pinned2, pinned4, sphere, plane, selfcollide, wind, two_garments or drop.
    pub name: String,
    /// Particles per side of the cloth.
    #[arg(long, default_value_t = 32)]
    pub n: u32,
    /// Frames to simulate (default: the scene's own, 120 or 240).
    #[arg(long)]
    pub frames: Option<u32>,
    /// Turn on self- and garment–garment collision.
    #[arg(long)]
    pub self_collision: bool,
    /// Substeps per frame (default: 16/32/64 for N = 32/60/100, ∝ N beyond).
    #[arg(long)]
    pub substeps: Option<u32>,
    /// Integrator: verlet or euler (default: the scene's).
    #[arg(long)]
    pub integrator: Option<Integrator>,
    /// Cloth model: mass_spring (PHYSICS.md §1) or xpbd (§7).
    #[arg(long, default_value_t = ClothModelKind::MassSpring)]
    pub model: ClothModelKind,
    /// Output folder (created if missing).
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Replace stats.csv, final.obj, final.ply and final.png when --out already holds them, and
    /// run a simulation estimated to take over an hour.
    #[arg(long)]
    pub force: bool,
    /// Height of the PNG in pixels (three views side by side).
    #[arg(long, default_value_t = 512)]
    pub png_size: u32,
    /// Print nothing per frame.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The files a run writes into --out.
const OUTPUTS: [&str; 4] = ["stats.csv", "final.obj", "final.ply", "final.png"];

pub fn run(args: Args) -> Result<(), CliError> {
    if !SCENE_NAMES.contains(&args.name.as_str()) {
        return Err(CliError::new(format!(
            "unknown scene '{}' (known: {})",
            args.name,
            SCENE_NAMES.join(", ")
        )));
    }
    crate::limits::SCENE_N
        .check_u32("--n", args.n)
        .map_err(CliError::new)?;
    if let Some(s) = args.substeps {
        crate::limits::SUBSTEPS
            .check_u32("--substeps", s)
            .map_err(CliError::new)?;
    }
    let opts = SceneOptions {
        n: args.n,
        frames: args.frames,
        self_collision: args.self_collision,
        substeps: args.substeps,
        integrator: args.integrator,
        model: args.model,
    };
    // Refuse before simulating, so a long run never ends in a refusal.
    let existing: Vec<&str> = OUTPUTS
        .iter()
        .copied()
        .filter(|f| args.out.join(f).exists())
        .collect();
    if !existing.is_empty() && !args.force {
        return Err(CliError::new(format!(
            "--out {} already holds {} from an earlier run; pass --force to overwrite, or choose \
             another --out",
            args.out.display(),
            existing.join(", ")
        )));
    }
    let mut scene = build_scene(&args.name, &opts).map_err(|e| CliError::new(e.to_string()))?;
    let cost = crate::limits::Cost::new(
        scene.params.substeps,
        scene.model.len(),
        scene.frames as u64,
    );
    cost.check(
        &format!(
            "{} substeps × {} particles × {} frames",
            scene.params.substeps,
            scene.model.len(),
            scene.frames
        ),
        args.force,
    )
    .map_err(CliError::new)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::new(format!("cannot create {}: {e}", args.out.display())))?;
    let n = scene.model.len();
    let p = &scene.params;
    eprintln!(
        "scene {}: {} particles, {} springs, {} substeps/frame, {}, self-collision {}",
        scene.name,
        n,
        scene.model.springs.len(),
        p.substeps,
        match p.model {
            ClothModelKind::MassSpring => format!("{:?}", p.integrator),
            ClothModelKind::Xpbd => "xpbd".to_owned(),
        },
        if p.self_collision { "on" } else { "off" }
    );
    scene.workspace.prepare(&scene.model, &scene.params);
    // The XPBD model has no stability clamp (its stiffness is a compliance).
    if scene.params.model == ClothModelKind::MassSpring && scene.workspace.stability.clamped() {
        eprintln!(
            "note: springs softened to stay stable at dt = {:.3e} s (scale per garment {:?})",
            scene.workspace.stability.dt, scene.workspace.stability.garment_scale
        );
    }
    let mut lines = Vec::new();
    let quiet = args.quiet;
    let records = scene.run(|r| {
        lines.push(format!(
            "{},{:.6},{:.6},{:.6e},{:.5},{:.6},{:.5},{:.3e},{},{},{}",
            r.frame,
            r.time,
            r.wall,
            r.kinetic_energy,
            r.max_speed,
            r.min_y,
            r.max_stretch,
            r.max_penetration,
            r.step.contacts,
            r.step.self_pairs,
            r.step.speed_limited
        ));
        if !quiet && (r.frame % 20 == 0) {
            eprintln!(
                "frame {:4}  KE {:.3e} J  max |v| {:.3} m/s  min y {:.4} m  stretch {:.3}  wall {:.1} ms",
                r.frame,
                r.kinetic_energy,
                r.max_speed,
                r.min_y,
                r.max_stretch,
                r.wall * 1e3
            );
        }
    });
    // Every file is written whole or not at all (crate::output), after the simulation.
    let csv_path = args.out.join("stats.csv");
    crate::output::write_with(&csv_path, |csv| {
        writeln!(
            csv,
            "frame,time_s,wall_s,kinetic_energy_j,max_speed_mps,min_y_m,max_stretch,max_penetration_m,contacts,self_pairs,speed_limited"
        )?;
        for l in &lines {
            writeln!(csv, "{l}")?;
        }
        Ok::<(), std::io::Error>(())
    })
    .map_err(|e| CliError::new(format!("cannot write {}: {e}", csv_path.display())))?;
    let x = &scene.state.x;
    let e = |e: export::ExportError| CliError::new(e.to_string());
    export::write_obj(&args.out.join("final.obj"), &scene.model, x).map_err(e)?;
    export::write_ply(&args.out.join("final.ply"), &scene.model, x).map_err(e)?;
    export::write_png(
        &args.out.join("final.png"),
        &scene.model,
        x,
        &scene.colliders,
        args.png_size,
    )
    .map_err(e)?;
    let wall: f64 = records.iter().map(|r| r.wall).sum();
    let sim = scene.params.frame_dt as f64 * records.len() as f64;
    let ps = n as f64 * scene.params.substeps as f64 * records.len() as f64;
    println!(
        "{}: {} frames in {:.3} s wall ({:.3} s per simulated s, {:.1} M particle-substeps/s); wrote {}",
        scene.name,
        records.len(),
        wall,
        wall / sim.max(1e-12),
        ps / wall.max(1e-12) / 1e6,
        args.out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(out: PathBuf, force: bool) -> Args {
        Args {
            name: "pinned2".into(),
            n: 4,
            frames: Some(2),
            self_collision: false,
            substeps: Some(2),
            integrator: None,
            model: ClothModelKind::MassSpring,
            out,
            png_size: 32,
            quiet: true,
            force,
        }
    }

    /// A second run into the same folder is refused (naming the folder and the files) and
    /// leaves the files alone; --force replaces them.
    #[test]
    fn existing_outputs_are_kept_unless_forced() {
        let out = std::env::temp_dir().join(format!("drape_scene_force_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        run(args(out.clone(), false)).unwrap();
        let csv = out.join("stats.csv");
        std::fs::write(&csv, "mine").unwrap();
        let e = run(args(out.clone(), false)).unwrap_err().to_string();
        assert!(
            e.contains(&out.display().to_string())
                && e.contains("stats.csv")
                && e.contains("--force"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), "mine");
        run(args(out.clone(), true)).unwrap();
        assert!(std::fs::read_to_string(&csv).unwrap().starts_with("frame,"));
        let _ = std::fs::remove_dir_all(&out);
    }
}
