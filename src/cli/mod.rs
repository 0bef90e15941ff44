//! The `drape` command line: one module per subcommand, each with an `Args` struct (clap) and a
//! `run(args) -> Result<(), CliError>`; `src/main.rs` only parses and dispatches.

pub mod info;

/// An error a subcommand reports to the user (already phrased for them) and exits non-zero on.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CliError(pub String);

impl CliError {
    pub fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

pub mod rig;
pub mod bench;
pub mod scene;
pub mod bake;
pub mod proxies;
