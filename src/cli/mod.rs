//! The `drape` command line: one module per subcommand, each with an `Args` struct (clap) and a
//! `run(args) -> Result<(), CliError>`; `src/main.rs` only parses and dispatches.

pub mod info;
pub mod interrupt;
pub mod progress;

/// An error a subcommand reports to the user (already phrased for them) and exits non-zero on.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CliError(pub String);

impl CliError {
    pub fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

pub mod bake;
pub mod bench;
pub mod check;
pub mod clips_from;
pub mod experiment;
pub mod pose;
pub mod proxies;
#[cfg(feature = "gpu")]
pub mod render;
pub mod rig;
pub mod scene;
pub mod view;

/// `drape render` in a build without the `gpu` feature: it takes whatever it is given and says
/// why it cannot run (left out of the command line, it was "unrecognized subcommand 'render'",
/// with clap's tip of the nearest name, `scene`).
#[cfg(not(feature = "gpu"))]
#[derive(clap::Args, Debug)]
pub struct NoGpuArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<String>,
}

use std::path::{Path, PathBuf};

use crate::asset::{load_rig_with, LoadOptions};
use crate::output::AtomicFile;
use crate::rig::Rig;

/// Loads the character a command works on: `file` when given, else the built-in ninja — the
/// committed `rigs/ninja.glb` when it is found (in the current folder or beside the crate), or
/// generated in memory (a fraction of a second) so drape works from anywhere with no download.
pub fn load_character(file: Option<&Path>, opts: &LoadOptions) -> Result<Rig, CliError> {
    if let Some(path) = file {
        return load_rig_with(path, opts).map_err(|e| CliError::new(e.to_string()));
    }
    let candidates = [
        PathBuf::from(crate::ninja::DEFAULT_PATH),
        Path::new(env!("CARGO_MANIFEST_DIR")).join(crate::ninja::DEFAULT_PATH),
    ];
    if let Some(path) = candidates.iter().find(|p| p.is_file()) {
        return load_rig_with(path, opts).map_err(|e| CliError::new(e.to_string()));
    }
    let ninja = crate::ninja::build()
        .map_err(|e| CliError::new(format!("could not build the built-in ninja: {e}")))?;
    Ok(ninja.rig)
}

/// Starts writing `path`, refusing to replace an existing file unless `force` is set (nothing
/// the user had is overwritten without asking), and creating missing parent folders. The file
/// is written beside `path` and renamed into place by [`commit_output`] ([`crate::output`]):
/// an interrupted run leaves the old file whole.
pub fn create_output(path: &Path, force: bool) -> Result<AtomicFile, CliError> {
    refuse_existing(path, force)?;
    AtomicFile::create(path)
        .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))
}

/// Refuses an existing `path` unless `force` is set.
pub fn refuse_existing(path: &Path, force: bool) -> Result<(), CliError> {
    if path.exists() && !force {
        return Err(CliError::new(format!(
            "{} already exists; pass --force to overwrite it",
            path.display()
        )));
    }
    Ok(())
}

/// Finishes a file from [`create_output`]: renames it into place.
pub fn commit_output(file: AtomicFile) -> Result<(), CliError> {
    let path = file.path().to_path_buf();
    file.commit()
        .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))
}

/// Writes `bytes` to `path` atomically (refusing an existing file unless `force`).
pub fn write_output(path: &Path, bytes: &[u8], force: bool) -> Result<(), CliError> {
    refuse_existing(path, force)?;
    crate::output::write_atomic(path, bytes)
        .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))
}
