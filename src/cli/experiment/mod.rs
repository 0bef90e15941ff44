//! `drape experiment wet-fig5 … wet-fig9 --out DIR`: Park & Byun 2019's experiments (PHYSICS.md
//! §5 table), headless. Each writes its measured numbers as JSON and a picture (dry/reference
//! run above, wet run below; front, side and top views) into DIR.
//!
//! The set-ups follow the paper: cotton, 1 cm spacing, 0.1 g dry per vertex (so 1 kg/m² of dry
//! fabric), r = 0.5 cm, h_max = 0.1 cm. The functions are public so the tests (tests/wet.rs)
//! assert the same outcomes the command reports; tests run them on coarser grids.
//!
//! What each reproduces and why, in short (the functions' docs say more):
//! - Fig 5: per-vertex bridges only reach vertices within h_max = 1 mm of the floor, so the
//!   centimetre folds of the dropped cloth stand; the area-based force acts on the whole
//!   contact region and pulls them down.
//! - Fig 6: on the built-in ninja in its cape, through [`crate::scene`].
//! - Fig 7a: the water's weight makes the wet cloth hang lower on the ball. On a fabric ten
//!   times softer than the engine's default the outcome reverses (reported, not hidden): the
//!   soft cloth wraps the ball and its bridges' pull, through friction, keeps it from sliding
//!   down as the dry cloth does.
//! - Fig 7b: two balls under the cloth turn about the vertical; the wet cloth ends more
//!   wrinkled.
//! - Fig 8, Fig 9: the wet centre rises less under the same pull; self-adhesion keeps a fold
//!   together.
//!
//! Files: `setup` (the paper's fabric and [`Sim`]), one file per figure (`fig5` … `fig9`; Fig 7a
//! and 7b share `fig7`), `picture` (the PNG of a pair of runs); this file holds the command.

mod fig5;
mod fig6;
mod fig7;
mod fig8;
mod fig9;
mod picture;
mod setup;

use std::path::{Path, PathBuf};

use clap::Args as ClapArgs;
use serde::Serialize;

use super::CliError;
use crate::cloth::params::ClothModelKind;
use picture::picture;

pub use fig5::{fig5, Fig5, Fig5Patch};
pub use fig6::{fig6, Fig6, Fig6Run, FIG6_WIND};
pub use fig7::{fig7, fig7b, Fig7, Fig7Run, Fig7b, Fig7bRun};
pub use fig8::{fig8, Fig8};
pub use fig9::{fig9, Fig9};
pub use picture::View;
pub use setup::{Sim, PAPER_SPACING, PAPER_VERTEX_MASS};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Experiment: wet-fig5, wet-fig6, wet-fig7, wet-fig7b, wet-fig8 or wet-fig9.
    pub name: String,
    /// Output folder (created if missing). Writes NAME.json and NAME.png there.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Particles per side (default: the paper's grid for that figure). For wet-fig6, the
    /// cape's resolution in percent of the default (50 = twice the spacing).
    #[arg(long)]
    pub n: Option<u32>,
    /// Overwrite NAME.json / NAME.png if they exist in --out.
    #[arg(long)]
    pub force: bool,
    /// Cloth model: mass_spring (PHYSICS.md §1) or xpbd (§7). NAME.json records it.
    #[arg(long, default_value_t = ClothModelKind::MassSpring)]
    pub model: ClothModelKind,
}

/// Names accepted by [`run`].
pub const EXPERIMENTS: [&str; 6] = [
    "wet-fig5",
    "wet-fig6",
    "wet-fig7",
    "wet-fig7b",
    "wet-fig8",
    "wet-fig9",
];

/// Writes `value` as NAME.json, with the cloth model it ran under added as field `model`.
fn write_json(
    dir: &Path,
    name: &str,
    model: ClothModelKind,
    value: &impl Serialize,
) -> Result<(), CliError> {
    let e = |e: serde_json::Error| CliError::new(e.to_string());
    let mut out = serde_json::Map::new();
    out.insert("model".into(), model.name().into());
    match serde_json::to_value(value).map_err(e)? {
        serde_json::Value::Object(fields) => out.extend(fields),
        other => {
            out.insert("result".into(), other);
        }
    }
    let text = serde_json::to_string_pretty(&out).map_err(e)?;
    println!("{text}");
    crate::output::write_atomic(&dir.join(format!("{name}.json")), text.as_bytes())
        .map_err(|e| CliError::new(format!("{name}.json: {e}")))
}

/// The files `name` writes into `dir`.
pub fn outputs(dir: &Path, name: &str) -> [PathBuf; 2] {
    [
        dir.join(format!("{name}.json")),
        dir.join(format!("{name}.png")),
    ]
}

pub fn run(args: Args) -> Result<(), CliError> {
    if !EXPERIMENTS.contains(&args.name.as_str()) {
        return Err(CliError::new(format!(
            "unknown experiment '{}' (known: {})",
            args.name,
            EXPERIMENTS.join(", ")
        )));
    }
    if let Some(n) = args.n {
        crate::limits::EXPERIMENT_N
            .check_u32("--n", n)
            .map_err(CliError::new)?;
    }
    let dir = args.out.as_path();
    let name = args.name.as_str();
    let model = args.model;
    // Refuse before simulating, not after minutes of work.
    if !args.force {
        if let Some(p) = outputs(dir, name).iter().find(|p| p.exists()) {
            return Err(CliError::new(format!(
                "{} already exists; pass --force to overwrite it",
                p.display()
            )));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| CliError::new(format!("{}: {e}", dir.display())))?;
    // The figures' runs have no total known in advance: show frames simulated and time.
    let _ticker = super::progress::Ticker::start(name);
    match name {
        "wet-fig5" => {
            let (r, a, v) = fig5(args.n.unwrap_or(60), 2.5, true, model);
            write_json(dir, name, model, &r)?;
            picture(dir, name, (&a).into(), (&v).into())
        }
        "wet-fig6" => {
            // --n is the cape's resolution relative to the default spacing: 100 = default.
            let factor = args.n.map(|n| 100.0 / n as f32).unwrap_or(1.0);
            let (r, d, w) = fig6(factor, 1.5, 1.5, 2.5, FIG6_WIND, model)?;
            write_json(dir, name, model, &r)?;
            picture(dir, name, (&d).into(), (&w).into())
        }
        "wet-fig7" => {
            let (r, d, w) = fig7(args.n.unwrap_or(50), 2.0, true, model);
            write_json(dir, name, model, &r)?;
            picture(dir, name, (&d).into(), (&w).into())
        }
        "wet-fig7b" => {
            let (r, d, w) = fig7b(args.n.unwrap_or(50), 1.5, 1.5, 1.0, model);
            write_json(dir, name, model, &r)?;
            picture(dir, name, (&d).into(), (&w).into())
        }
        "wet-fig8" => {
            let (r, d, w) = fig8(args.n.unwrap_or(40), 0.3, 0.3, 1.0, model);
            write_json(dir, name, model, &r)?;
            picture(dir, name, (&d).into(), (&w).into())
        }
        _ => {
            let nx = args.n.unwrap_or(40);
            let (r, d, w) = fig9(nx, (nx / 2).max(2), 2.0, model);
            write_json(dir, name, model, &r)?;
            picture(dir, name, (&d).into(), (&w).into())
        }
    }
}
