//! `drape pose [FILE] --clip NAME --time T --method lbs|dqs|cor --out posed.obj`: skins one frame
//! on the CPU and writes it as an OBJ that any 3D tool opens.
//!
//! Output: world-space positions (glTF's Y-up, in the file's own units), meshes in glTF node order
//! and primitives in order, vertices in accessor order with nothing merged — vertex `k` of the
//! OBJ is vertex `k` of the file's meshes concatenated (the order of Blender's reference files).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::anim::Pose;
use crate::asset::obj::{write_obj, ObjMesh};
use crate::asset::LoadOptions;
use crate::cli::{create_output, load_character, CliError};
use crate::skin::{CorProgress, SkinMethod, Skinner};
use crate::Rig;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The character (.glb/.gltf/.fbx, found by content); default: the built-in ninja.
    pub file: Option<PathBuf>,
    /// Add the clips of this file (a Mixamo "without skin" FBX, …), matched by bone name and
    /// named after its stem: `--clips-from punch.fbx --clip punch`. Repeatable.
    #[arg(long = "clips-from", value_name = "FILE")]
    pub clips_from: Vec<PathBuf>,
    /// Take a mesh off the character: a mesh or node name, or a node above it (`handslot.r`:
    /// whatever the right hand holds); `*` and `?` as in a shell. Repeatable; the OBJ then
    /// leaves its vertices out.
    #[arg(long, value_name = "NAME")]
    pub hide: Vec<String>,
    /// Clip name, or its index in the file; default: the rest (bind) pose.
    #[arg(long)]
    pub clip: Option<String>,
    /// Time in seconds on the clip's own timeline (the glTF sampler input's time).
    #[arg(long, default_value_t = 0.0)]
    pub time: f32,
    /// Skinning method: lbs, dqs or cor.
    #[arg(long, default_value = "lbs")]
    pub method: SkinMethod,
    /// Where to write the OBJ.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace --out if it exists.
    #[arg(long)]
    pub force: bool,
    /// Follow buffer/image URIs that point outside the file's folder.
    #[arg(long)]
    pub allow_outside_uris: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let opts = LoadOptions {
        allow_outside_uris: args.allow_outside_uris,
        decode_textures: false,
        ..Default::default()
    };
    let mut rig = load_character(args.file.as_deref(), &opts)?;
    crate::cli::clips_from::add_clips(&mut rig, &args.clips_from, &opts)?;
    let hidden = rig
        .hide_meshes(&args.hide)
        .map_err(|e| CliError::new(format!("--hide: {e}")))?;
    for w in &rig.warnings {
        eprintln!("warning: {w}");
    }
    if !args.time.is_finite() {
        return Err(CliError::new("--time must be a finite number of seconds"));
    }
    let mut pose = Pose::rest(&rig.skeleton);
    let clip_label = match &args.clip {
        None => "rest pose".to_string(),
        Some(name) => {
            let index = rig
                .clip(name)
                .or_else(|| name.parse::<usize>().ok().filter(|&i| i < rig.clips.len()))
                .ok_or_else(|| {
                    let names: Vec<&str> = rig.clips.iter().map(|c| c.name.as_str()).collect();
                    CliError::new(format!(
                        "{}: no clip {name:?}; it has {}",
                        rig.source,
                        if names.is_empty() {
                            "no clips".to_string()
                        } else {
                            names.join(", ")
                        }
                    ))
                })?;
            rig.clips[index].sample(args.time, &mut pose);
            format!("clip {:?} at t = {} s", rig.clips[index].name, args.time)
        }
    };
    let mut header = format!(
        "drape pose: {} — {clip_label}, {} skinning\nworld space, glTF Y-up, the file's units; vertex order = the file's",
        rig.source, args.method
    );
    if !hidden.is_empty() {
        header.push_str(&format!(", less the hidden meshes: {}", hidden.join(", ")));
    }
    let mut progress = |mesh: usize, p: CorProgress| {
        if let CorProgress::Computing { done, total } = p {
            eprint!("\rcentres of rotation, mesh {mesh}: {done}/{total}   ");
        }
    };
    let cache = crate::skin::cor::cache_dir();
    let mut out = create_output(&args.out, args.force)?;
    let cor = (args.method == SkinMethod::Cor).then_some((cache.as_deref(), &mut progress as _));
    write_posed_obj(&rig, &pose, args.method, cor, &header, &mut out)
        .map_err(|e| CliError::new(format!("cannot write {}: {e}", args.out.display())))?;
    if args.method == SkinMethod::Cor {
        eprintln!();
    }
    super::commit_output(out)?;
    eprintln!(
        "wrote {} ({} vertices, {} meshes, {clip_label}, {})",
        args.out.display(),
        rig.vertex_count(),
        rig.meshes.len(),
        args.method
    );
    Ok(())
}

/// Skins every mesh of `rig` in `pose` with `method` on the CPU and writes them as one OBJ to
/// `out` under `header` (what `drape pose` writes; also the fuzz target's end-to-end path). For
/// CoR, `cor` gives the centres' cache folder (`None`: computed, not cached) and a progress
/// callback (mesh index, progress); without it CoR skins as DQS until centres are set.
pub fn write_posed_obj(
    rig: &Rig,
    pose: &Pose,
    method: SkinMethod,
    cor: Option<(Option<&Path>, &mut dyn FnMut(usize, CorProgress))>,
    header: &str,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let mut world = Vec::new();
    pose.world_from_node(&rig.skeleton, &mut world);
    let mut skinner = Skinner::new(rig);
    if let Some((cache, progress)) = cor {
        skinner.prepare_cor_in(rig, cache, progress);
    }
    skinner.update(rig, &world, method);
    let meshes: Vec<ObjMesh> = rig
        .meshes
        .iter()
        .enumerate()
        .map(|(i, m)| ObjMesh {
            name: &m.name,
            positions: skinner.positions(i),
            normals: skinner.normals(i),
            uvs: &m.uvs,
            indices: &m.indices,
        })
        .collect();
    write_obj(out, header, &meshes)
}
