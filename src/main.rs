//! The `drape` binary: parses the command line and calls the library.

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "drape",
    version,
    about = "Skinned characters wearing simulated garments"
)]
struct Cli {
    /// Without a subcommand: `view` (the viewer on the built-in ninja).
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// The interactive viewer (the default): a window with the dressed character and a panel.
    View(drape::cli::view::Args),
    /// Describe a character file: meshes, skins, nodes, clips, textures, loader warnings.
    Info(drape::cli::info::Args),
    /// Skin one frame of a clip (LBS, DQS or CoR) and write it as an OBJ.
    Pose(drape::cli::pose::Args),
    /// Generate the built-in ninja (rigs/ninja.glb) and its contact sheets.
    Rig(drape::cli::rig::Args),
    /// Run a cloth scene headless (pinned2, pinned4, sphere, plane, selfcollide, wind,
    /// two_garments, drop) and write statistics, OBJ/PLY and a PNG of the final frame.
    Scene(drape::cli::scene::Args),
    /// Benchmarks (`drape bench cloth`, `drape bench scene`).
    Bench(drape::cli::bench::Args),
    /// Render a clip offscreen (wgpu) to PNG frames and an animated GIF.
    #[cfg(feature = "gpu")]
    Render(drape::cli::render::Args),
    /// Render a clip offscreen (wgpu): not in this build, which has no `gpu` feature.
    #[cfg(not(feature = "gpu"))]
    Render(drape::cli::NoGpuArgs),
    /// Park & Byun 2019's wet-cloth experiments (wet-fig5 … wet-fig9): JSON and a picture.
    Experiment(drape::cli::experiment::Args),
    /// Simulate a dressed character over its clip and write it as one animated glTF.
    Bake(drape::cli::bake::Args),
    /// Fit body proxies to a character (or `ninja`) and print their quality.
    Proxies(drape::cli::proxies::Args),
    /// Simulate every clip and measure the garments against the visible skin (inside, stretch,
    /// lift, return to the drape); a verdict, non-zero exit on a fail.
    Check(drape::cli::check::Args),
}

fn main() {
    let cli = Cli::parse();
    let command = cli
        .command
        .unwrap_or_else(|| Command::View(drape::cli::view::Args::default_view()));
    {
        use drape::cli::interrupt::{install, Mode};
        match &command {
            Command::Bake(a) => install(
                Mode::Cooperative,
                &format!("{} was not written", a.out.display()),
            ),
            #[cfg(feature = "gpu")]
            Command::Render(_) => install(
                Mode::Cooperative,
                "frames written so far are whole; the GIF was not written",
            ),
            Command::Experiment(a) => install(
                Mode::Exit,
                &format!("nothing was written to {}", a.out.display()),
            ),
            Command::Check(_) => install(Mode::Exit, "no --json report was written"),
            // `scene` writes its files only after the simulation.
            Command::Scene(a) => install(
                Mode::Exit,
                &format!("nothing was written to {}", a.out.display()),
            ),
            _ => {}
        }
    }
    let result: Result<(), drape::cli::CliError> = match command {
        Command::View(a) => drape::cli::view::run(a),
        Command::Info(args) => drape::cli::info::run(args),
        Command::Pose(a) => drape::cli::pose::run(a),
        Command::Rig(a) => drape::cli::rig::run(a),
        Command::Scene(a) => drape::cli::scene::run(a),
        Command::Bench(a) => drape::cli::bench::run(a),
        #[cfg(feature = "gpu")]
        Command::Render(a) => drape::cli::render::run(a),
        #[cfg(not(feature = "gpu"))]
        Command::Render(_) => Err(drape::cli::CliError::new(
            "this drape was built without the `gpu` feature, so it cannot render; build with \
             default features (`cargo build --release`), or bake the clip with `drape bake` \
             and open the glTF in any viewer",
        )),
        Command::Experiment(a) => drape::cli::experiment::run(a),
        Command::Proxies(a) => drape::cli::proxies::run(a),
        Command::Bake(a) => drape::cli::bake::run(a),
        Command::Check(a) => drape::cli::check::run(a),
    };
    if let Err(e) = result {
        eprintln!("drape: {e}");
        std::process::exit(if drape::cli::interrupt::requested() {
            drape::cli::interrupt::EXIT_STATUS
        } else {
            1
        });
    }
}
