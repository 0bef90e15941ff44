//! `--clips-from FILE` (repeatable) for the commands that open a character: the clips of FILE
//! (a Mixamo "without skin" FBX download, or any FBX/glTF with clips) are put on the character by
//! bone name, named after FILE's stem. See [`crate::asset::fbx::clips_from`].

use std::path::PathBuf;

use crate::asset::fbx::load_clips_from;
use crate::asset::LoadOptions;
use crate::cli::CliError;
use crate::rig::Rig;

/// Adds the clips of every file in `files` to `rig`, printing warnings on stderr.
pub fn add_clips(rig: &mut Rig, files: &[PathBuf], opts: &LoadOptions) -> Result<(), CliError> {
    for f in files {
        let (added, warnings) = load_clips_from(rig, f, opts)
            .map_err(|e| CliError::new(format!("--clips-from {}: {e}", f.display())))?;
        for w in warnings {
            eprintln!("warning: {w}");
        }
        eprintln!("added clip(s) {} from {}", added.join(", "), f.display());
    }
    Ok(())
}
