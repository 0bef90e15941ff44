//! `drape bench cloth`: times the benchmark scene `drop` (see `cloth::scenes`) for several grid
//! sizes, with self-collision off and on, in particle-substeps per second and wall seconds per
//! simulated second, with a per-stage breakdown.

use clap::{Args as ClapArgs, Subcommand};

use super::CliError;
use crate::cloth::scenes::{build_scene, SceneOptions};
use crate::cloth::{step_frame_timed, ClothModelKind, StageTimes};

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(Subcommand, Debug)]
pub enum What {
    /// The cloth engine on the `drop` scene.
    Cloth(ClothArgs),
    /// The dressed ninja (cape + hakama + sash + headband) playing a clip: the whole frame.
    Scene(SceneArgs),
}

#[derive(ClapArgs, Debug)]
pub struct SceneArgs {
    /// Clip of the built-in ninja.
    #[arg(long, default_value = "roundhouse_kick")]
    pub clip: String,
    /// Frames to time (after the start-up, which is simulated but not timed).
    #[arg(long, default_value_t = 120)]
    pub frames: u32,
    /// Substeps per 60 fps frame.
    #[arg(long, default_value_t = 16)]
    pub substeps: u32,
    /// Garment spacing as a multiple of each garment's default (1 = about 6,000 particles).
    #[arg(long, default_value_t = 1.0)]
    pub coarse: f32,
    /// Skinning: lbs, dqs or cor.
    #[arg(long, default_value = "lbs")]
    pub skinning: crate::skin::SkinMethod,
    /// Diagnostic: contact rounds per substep (the scene's default 6). Fewer break the
    /// dressed scene's stretch check; the bench prints the worst stretch it saw.
    #[arg(long)]
    pub contact_rounds: Option<u32>,
    /// Diagnostic: deformation-limit passes per substep, `MIN..=MAX` or `N` (the scene's
    /// default 1..=32, 1..=16 for the XPBD model: more while a spring is over the limit by more
    /// than 1 %). With 0 and
    /// `--contact-rounds 0` the limit is off.
    #[arg(long)]
    pub limit_passes: Option<String>,
    /// Diagnostic: switch self- and garment–garment collision off.
    #[arg(long)]
    pub no_self_collision: bool,
    /// Substeps per frame with cloth-against-skin contact (0: off; 16, the scene's default: every substep).
    #[arg(long)]
    pub skin_contact: Option<u32>,
    /// Hands and fingers thinner than the cloth's triangles meet them between their particles
    /// too: true or false (the scene's default: false).
    #[arg(long)]
    pub face_contact: Option<bool>,
    /// Cloth model: mass_spring, xpbd, or both (alternating, side by side).
    #[arg(long, default_value = "mass_spring")]
    pub model: String,
    /// Rounds of runs (with --model both, the models alternate in each round).
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
}

/// `MIN..=MAX` or `N` (= `N..=N`), each 0..=50.
fn parse_passes(s: &str) -> Result<(u32, u32), CliError> {
    let bad = || {
        CliError::new(format!(
            "--limit-passes: expected N or MIN..=MAX (0 … 50), not '{s}'"
        ))
    };
    let num = |t: &str| {
        t.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n <= 50)
            .ok_or_else(bad)
    };
    let (lo, hi) = match s.split_once("..=") {
        Some((a, b)) => (num(a)?, num(b)?),
        None => {
            let n = num(s)?;
            (n, n)
        }
    };
    if lo > hi {
        return Err(bad());
    }
    Ok((lo, hi))
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
    /// Force the staged substep (one pass per stage) where the fused one would run, for
    /// comparison (src/cloth/mass_spring/fused/).
    #[arg(long)]
    pub staged: bool,
    /// Cloth model: mass_spring, xpbd, or both (one table after the other).
    #[arg(long, default_value = "mass_spring")]
    pub model: String,
}

pub fn run(args: Args) -> Result<(), CliError> {
    match args.what {
        What::Cloth(a) => cloth(a),
        What::Scene(a) => scene(a),
    }
}

/// The cloth models `--model` names: mass_spring, xpbd, or both (side by side, in that order).
fn parse_models(s: &str) -> Result<Vec<ClothModelKind>, CliError> {
    if s.eq_ignore_ascii_case("both") {
        return Ok(ClothModelKind::ALL.to_vec());
    }
    s.parse::<ClothModelKind>()
        .map(|m| vec![m])
        .map_err(|e| CliError::new(format!("--model: {e}, or both")))
}

fn cloth(args: ClothArgs) -> Result<(), CliError> {
    let models = parse_models(&args.model)?;
    for &model in &models {
        if models.len() > 1 || model != ClothModelKind::MassSpring {
            println!("model {model}");
        }
        cloth_one(&args, model)?;
    }
    Ok(())
}

fn cloth_one(args: &ClothArgs, model: ClothModelKind) -> Result<(), CliError> {
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
        "threads {}  frames {}\n{:>5} {:>8} {:>6} {:>5} {:>10} {:>14} {:>12} {:>8} {:>12}",
        rayon::current_num_threads(),
        args.frames,
        "N",
        "particles",
        "subst",
        "self",
        "wall s",
        "M p-substeps/s",
        "wall s/sim s",
        "CPU s",
        "M p-s/CPU-s"
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
                    model,
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
                scene.workspace.force_staged = args.staged;
                let mut times = StageTimes::default();
                let cpu0 = process_cpu_seconds();
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
                let cpu = process_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
                if !scene.state.is_finite() {
                    return Err(CliError::new(format!(
                        "N = {n}: the simulation produced non-finite values"
                    )));
                }
                let particles = scene.model.len();
                let substeps = scene.params.substeps;
                let ps = particles as f64 * substeps as f64 * args.frames as f64;
                let sim = args.frames as f64 * scene.params.frame_dt as f64;
                let (cpu_s, per_cpu) = match cpu {
                    Some(c) if c > 0.0 => (format!("{c:.2}"), format!("{:.2}", ps / c / 1e6)),
                    _ => ("-".to_owned(), "-".to_owned()),
                };
                println!(
                    "{:>5} {:>8} {:>6} {:>5} {:>10.3} {:>14.2} {:>12.3} {:>8} {:>12}",
                    n,
                    particles,
                    substeps,
                    if self_collision { "on" } else { "off" },
                    wall,
                    ps / wall / 1e6,
                    wall / sim,
                    cpu_s,
                    per_cpu
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

/// CPU time of the whole process (all threads, user + system), s, from `/proc/self/stat`
/// (Linux; `None` elsewhere). On a machine shared with other work, wall time says little and
/// CPU seconds say how much the simulation itself costs; with several threads they also
/// count the pool's idle spinning, so one thread (`RAYON_NUM_THREADS=1`) gives the cleanest
/// figure. Resolution: the kernel's 100 Hz clock tick.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

fn scene(args: SceneArgs) -> Result<(), CliError> {
    let models = parse_models(&args.model)?;
    // Side by side: the models alternate, `repeat` rounds of one run each.
    for round in 0..args.repeat.max(1) {
        for &model in &models {
            if models.len() > 1 || args.repeat > 1 {
                println!("== model {model}, round {}", round + 1);
            }
            scene_one(&args, model)?;
        }
    }
    Ok(())
}

fn scene_one(args: &SceneArgs, model: ClothModelKind) -> Result<(), CliError> {
    use crate::garments::{GarmentKind, GarmentSpec};
    use crate::scene::{Scene, SceneConfig, SceneTimes};
    let rig = crate::ninja::build()
        .map_err(|e| CliError::new(e.to_string()))?
        .rig;
    let mut config = SceneConfig {
        clip: Some(args.clip.clone()),
        method: args.skinning,
        garments: GarmentKind::ALL
            .iter()
            .map(|&k| GarmentSpec::coarse(k, args.coarse))
            .collect(),
        ..SceneConfig::default()
    };
    crate::limits::BENCH_COARSE
        .check_f32("--coarse", args.coarse)
        .map_err(CliError::new)?;
    config.sim.substeps = crate::limits::SUBSTEPS
        .check_u32("--substeps", args.substeps)
        .map_err(CliError::new)?;
    config.sim.self_collision = !args.no_self_collision;
    config.sim.model = model;
    if let Some(r) = args.contact_rounds {
        config.sim.contact_rounds = r.min(8);
    }
    if let Some(k) = args.skin_contact {
        config.sim.skin_contact = crate::limits::SKIN_CONTACT
            .check_u32("--skin-contact", k)
            .map_err(CliError::new)?;
    }
    if let Some(f) = args.face_contact {
        config.sim.face_contact = f;
    }
    if let Some(p) = &args.limit_passes {
        let (lo, hi) = parse_passes(p)?;
        config.sim.provot_iterations = lo;
        config.sim.provot_max_iterations = hi;
        config.sim.xpbd_max_limit_passes = hi;
    }
    let sim = config.sim.clone();
    let t = std::time::Instant::now();
    let mut scene = Scene::new(rig, config).map_err(|e| CliError::new(e.to_string()))?;
    eprint!("{}", super::bake::refused_note(&scene));
    if args.skinning == crate::skin::SkinMethod::Cor {
        scene.set_method(args.skinning);
    }
    let build = t.elapsed().as_secs_f64();
    let dt = 1.0 / 60.0;
    let startup = (scene.startup_seconds() / dt).ceil() as u32;
    for _ in 0..startup {
        scene.step(dt);
    }
    scene.profile = true;
    scene.times = SceneTimes::default();
    let (passes0, rebuilds0, refreshes0) = (
        scene.workspace.limit_passes(),
        scene.workspace.list_rebuilds,
        scene.workspace.list_refreshes,
    );
    let skin0 = scene.workspace.skin_stats;
    // Only the steps are timed; the stretch check between them is not.
    let mut wall = 0.0;
    let mut worst = 0.0f32;
    for _ in 0..args.frames {
        let t = std::time::Instant::now();
        scene.step(dt);
        wall += t.elapsed().as_secs_f64();
        if let Some((_, r)) = scene.model.worst_limit_spring(&scene.state.x) {
            worst = worst.max(r);
        }
    }
    if !scene.state.is_finite() {
        return Err(CliError::new("the simulation produced non-finite values"));
    }
    println!(
        "threads {}  clip {}  particles {}  colliders {}  substeps {}  self-collision {}  build {:.2} s",
        rayon::current_num_threads(),
        args.clip,
        scene.particle_count(),
        scene.colliders.len(),
        args.substeps,
        if sim.self_collision { "on" } else { "off" },
        build
    );
    println!(
        "contact rounds {}  limit passes {}..={} (more while a spring is {:.0} % past the limit)",
        sim.contact_rounds,
        sim.provot_iterations,
        if model == ClothModelKind::Xpbd {
            sim.max_xpbd_limit_passes()
        } else {
            sim.max_provot_passes()
        },
        100.0 * sim.provot_tolerance
    );
    println!(
        "{} frames in {:.3} s: {:.1} simulated frames per second ({:.2} ms per frame)",
        args.frames,
        wall,
        args.frames as f64 / wall,
        1e3 * wall / args.frames as f64
    );
    let per = |s: f64| 1e3 * s / args.frames.max(1) as f64;
    let stages: Vec<String> = SceneTimes::NAMES
        .iter()
        .zip(scene.times.secs)
        .map(|(n, s)| format!("{n} {:.3} ms", per(s)))
        .collect();
    println!("per frame: {}", stages.join(", "));
    let cloth: Vec<String> = StageTimes::NAMES
        .iter()
        .zip(scene.times.cloth.secs)
        .map(|(n, s)| format!("{n} {:.3} ms", per(s)))
        .collect();
    println!("cloth per frame: {}", cloth.join(", "));
    let f = args.frames.max(1) as f64;
    println!(
        "per frame: {:.1} deformation-limit passes, {:.2} self-collision list rebuilds, {:.2} \
         partial refreshes",
        (scene.workspace.limit_passes() - passes0) as f64 / f,
        (scene.workspace.list_rebuilds - rebuilds0) as f64 / f,
        (scene.workspace.list_refreshes - refreshes0) as f64 / f
    );
    let sk = scene.workspace.skin_stats;
    println!(
        "skin contact on {} substeps per frame ({} body triangles): {:.3} ms per frame in the \
         stage (`skin` above), per frame {:.0} particles queried, {:.1} pushed out from \
         inside, {:.1} from nearer than their thickness, {:.1} left in folds",
        sim.skin_contact.min(sim.substeps),
        scene.workspace.skin.len(),
        per(sk.secs - skin0.secs),
        (sk.visits - skin0.visits) as f64 / f,
        (sk.inside - skin0.inside) as f64 / f,
        (sk.near - skin0.near) as f64 / f,
        (sk.folds - skin0.folds) as f64 / f
    );
    let tau = sim.provot_limit.unwrap_or(0.1);
    println!(
        "worst limit spring at a frame's end: {:.1} % of its rest length (limit {:.0} %, the \
         dressed scene's checks allow {:.0} %)",
        100.0 * worst,
        100.0 * (1.0 + tau),
        100.0 * (1.02 + tau)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_passes;

    #[test]
    fn limit_passes_parse_as_a_count_or_a_range() {
        assert_eq!(parse_passes("3").ok(), Some((3, 3)));
        assert_eq!(parse_passes("1..=8").ok(), Some((1, 8)));
        assert_eq!(parse_passes(" 0 ..= 0 ").ok(), Some((0, 0)));
        for bad in ["", "x", "8..=1", "1..8", "51", "-1", "1..=51"] {
            let e = parse_passes(bad).expect_err(bad);
            assert!(e.to_string().contains("--limit-passes"), "{bad}: {e}");
        }
    }
}
