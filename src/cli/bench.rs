//! `drape bench cloth`: times the benchmark scene `drop` (see `cloth::scenes`) for several grid
//! sizes, with self-collision off and on, in particle-substeps per second and wall seconds per
//! simulated second, with a per-stage breakdown.

use clap::{Args as ClapArgs, Subcommand};

use super::CliError;
use crate::cloth::scenes::{build_scene, SceneOptions};
use crate::cloth::{step_frame_timed, StageTimes};

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(Subcommand, Debug)]
pub enum What {
    /// The cloth engine on the `drop` scene.
    Cloth(ClothArgs),
}

#[derive(ClapArgs, Debug)]
pub struct ClothArgs {
    /// Grid sizes, comma separated.
    #[arg(long, value_delimiter = ',', default_values_t = [32u32, 60, 100, 256])]
    pub n: Vec<u32>,
    /// Frames per run (the scene has 120).
    #[arg(long, default_value_t = 120)]
    pub frames: u32,
    /// Self-collision: off, on or both.
    #[arg(long, default_value = "both")]
    pub self_collision: String,
    /// Print the time per stage.
    #[arg(long)]
    pub profile: bool,
    /// Also run each case wet (saturated cotton, per-vertex adhesion, self-adhesion on) and
    /// print its cost relative to the dry run.
    #[arg(long)]
    pub wet: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    match args.what {
        What::Cloth(a) => cloth(a),
    }
}

fn cloth(args: ClothArgs) -> Result<(), CliError> {
    let modes: &[bool] = match args.self_collision.as_str() {
        "off" => &[false],
        "on" => &[true],
        "both" => &[false, true],
        other => {
            return Err(CliError::new(format!(
                "--self-collision must be off, on or both, not '{other}'"
            )))
        }
    };
    println!(
        "threads {}  frames {}\n{:>5} {:>8} {:>6} {:>5} {:>10} {:>14} {:>12}",
        rayon::current_num_threads(),
        args.frames,
        "N",
        "particles",
        "subst",
        "self",
        "wall s",
        "M p-substeps/s",
        "wall s/sim s"
    );
    let wet_modes: &[bool] = if args.wet { &[false, true] } else { &[false] };
    for &n in &args.n {
        for &self_collision in modes {
            let mut dry_wall = 0.0f64;
            for &wet_on in wet_modes {
                let opts = SceneOptions {
                    n,
                    frames: Some(args.frames),
                    self_collision,
                    ..SceneOptions::default()
                };
                let mut scene =
                    build_scene("drop", &opts).map_err(|e| CliError::new(e.to_string()))?;
                if wet_on {
                    crate::cloth::wet::saturate(
                        &scene.model,
                        &mut scene.state,
                        &crate::cloth::wet::Fabric::COTTON,
                        crate::cloth::wet::Region::All,
                    );
                    scene.params.wet.self_adhesion = true;
                }
                let mut times = StageTimes::default();
                let t = std::time::Instant::now();
                for _ in 0..args.frames {
                    let timer = if args.profile { Some(&mut times) } else { None };
                    step_frame_timed(
                        &scene.model,
                        &mut scene.state,
                        &mut scene.workspace,
                        &scene.colliders,
                        &scene.params,
                        timer,
                    );
                }
                let wall = t.elapsed().as_secs_f64();
                if !scene.state.is_finite() {
                    return Err(CliError::new(format!(
                        "N = {n}: the simulation produced non-finite values"
                    )));
                }
                let particles = scene.model.len();
                let substeps = scene.params.substeps;
                let ps = particles as f64 * substeps as f64 * args.frames as f64;
                let sim = args.frames as f64 * scene.params.frame_dt as f64;
                println!(
                    "{:>5} {:>8} {:>6} {:>5} {:>10.3} {:>14.2} {:>12.3}",
                    n,
                    particles,
                    substeps,
                    if self_collision { "on" } else { "off" },
                    wall,
                    ps / wall / 1e6,
                    wall / sim
                );
                if wet_on {
                    println!(
                        "      wet (cotton, saturated, self-adhesion {}): {:.2}x the dry run",
                        if self_collision {
                            "on"
                        } else {
                            "off: no lists"
                        },
                        wall / dry_wall.max(1e-12)
                    );
                } else {
                    dry_wall = wall;
                }
                if args.profile {
                    let total: f64 = times.secs.iter().sum();
                    let parts: Vec<String> = StageTimes::NAMES
                        .iter()
                        .zip(times.secs)
                        .filter(|(_, s)| *s > 0.0)
                        .map(|(name, s)| format!("{name} {:.0}%", 100.0 * s / total.max(1e-12)))
                        .collect();
                    println!(
                        "      stages: {}; self-collision list rebuilds {} of {} substeps",
                        parts.join(", "),
                        scene.workspace.list_rebuilds,
                        args.frames as u64 * substeps as u64
                    );
                }
            }
        }
    }
    Ok(())
}
