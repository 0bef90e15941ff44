//! The `drape` binary: parses the command line and calls the library.

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "drape",
    version,
    about = "Skinned characters wearing simulated garments"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Describe a character file: meshes, skins, nodes, clips, textures, loader warnings.
    Info(drape::cli::info::Args),
    /// Generate the built-in ninja (rigs/ninja.glb) and its contact sheets.
    Rig(drape::cli::rig::Args),
}

fn main() {
    let cli = Cli::parse();
    let result: Result<(), drape::cli::CliError> = match cli.command {
        Command::Info(args) => drape::cli::info::run(args),
        Command::Rig(a) => drape::cli::rig::run(a),
    };
    if let Err(e) = result {
        eprintln!("drape: {e}");
        std::process::exit(1);
    }
}
