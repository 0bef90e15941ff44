//! The `drape` binary: parses the command line and calls the library.

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "drape", version, about = "Skinned characters wearing simulated garments")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Describe a character file: meshes, skins, nodes, clips, textures, loader warnings.
    Info(drape::cli::info::Args),
}

fn main() {
    let cli = Cli::parse();
    let result: Result<(), drape::cli::CliError> = match cli.command {
        Command::Info(args) => drape::cli::info::run(args),
    };
    if let Err(e) = result {
        eprintln!("drape: {e}");
        std::process::exit(1);
    }
}
