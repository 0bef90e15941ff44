//! `drape bake scene.toml --out baked.glb` (or flags instead of a file): simulates the dressed
//! character over its clip and writes it as one glTF 2.0 binary that Blender's importer and
//! three.js play as is:
//!
//! - the body is the rig itself (skeleton nodes, skin, inverse bind matrices, the mesh with its
//!   JOINTS_0/WEIGHTS_0), animated by node keys sampled at every baked frame (LINEAR, as drape
//!   interpolates). glTF skins by linear blending, so with LBS this is drape's body exactly, and
//!   small: the roundhouse kick's 28,607-vertex body costs 12-28 bytes per moving bone per
//!   frame instead of 343 KB per frame as morph targets (6.9 MB for the whole bake instead of
//!   26 MB). DQS and CoR cannot be expressed in glTF: with them the body is baked as morph
//!   targets instead (said on stderr).
//! - each garment is a morph-target mesh: base positions and normals = the first baked frame,
//!   one target (position and normal deltas) per later frame, and a LINEAR `weights` animation
//!   from each frame's target to the next. The normals are the renderer's (area-weighted), so
//!   viewers shade the cloth smoothly instead of flat.
//!
//! See [`crate::asset::export::bake_to_glb`] for the layout.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use super::CliError;
use crate::asset::export::{
    bake_to_glb, exportable, Bake, BakeLayout, BakedBody, BakedMaterial, MorphMesh,
};
use crate::garments::GarmentKind;
use crate::math::{Mat4, Transform, Vec3};
use crate::scene::{load_rig_named, Scene, SceneConfig};
use crate::skin::SkinMethod;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Scene file (TOML, see `drape::scene::SceneFile`); without it the flags describe the scene.
    pub scene: Option<PathBuf>,
    /// Output .glb.
    #[arg(long, default_value = "baked.glb")]
    pub out: PathBuf,
    /// Rig (`ninja` or a glTF/FBX path) when no scene file is given.
    #[arg(long, default_value = "ninja")]
    pub rig: String,
    /// Clip when no scene file is given (default: the rig's first).
    #[arg(long)]
    pub clip: Option<String>,
    /// Add the clips of this file (a Mixamo "without skin" FBX, …) to --rig, matched by bone
    /// name and named after its stem. Repeatable; a scene file uses `clips = [...]` instead.
    #[arg(long = "clips-from", value_name = "FILE")]
    pub clips_from: Vec<PathBuf>,
    /// Seconds to bake (default: the clip's duration).
    #[arg(long)]
    pub seconds: Option<f32>,
    /// Bake every n-th simulated frame (1 = every frame at the simulation's fps; 2 = 30 keys
    /// per second at the default 60 fps). Each baked frame is one morph target per garment.
    #[arg(long, default_value_t = 2)]
    pub every: u32,
    /// Replace --out if it exists, and run a bake estimated to take over an hour.
    #[arg(long)]
    pub force: bool,
    /// Leave the vertex normals out of the morph-target meshes (the garments; the body with DQS
    /// or CoR): a smaller file (the roundhouse kick: 6.9 MB instead of 10.6 MB) that viewers
    /// shade flat.
    #[arg(long)]
    pub no_normals: bool,
    /// Cloth model: mass_spring or xpbd (default: the scene file's, else mass_spring).
    #[arg(long)]
    pub model: Option<crate::cloth::ClothModelKind>,
    /// Wear every garment even where the body cannot (a cape whose collar the hair swings
    /// through), saying why it does not fit; by default such a garment is left off. A scene
    /// file says it per garment: `wear_unfit = true`.
    #[arg(long, conflicts_with = "scene")]
    pub wear_unfit: bool,
    /// Take a mesh off the character: a mesh or node name, or a node above it (`handslot.r`:
    /// whatever the right hand holds); `*` and `?` as in a shell. Hidden meshes are neither
    /// drawn, baked nor met by the cloth. Repeatable; adds to a scene file's `hide`.
    #[arg(long, value_name = "NAME")]
    pub hide: Vec<String>,
}

/// What to bake of a scene.
#[derive(Clone, Copy, Debug)]
pub struct BakeOptions {
    /// Seconds of the clip to bake (default: the clip's duration; 1 s without a clip). Clamped
    /// to one frame … 600 s.
    pub seconds: Option<f32>,
    /// Keep every n-th simulated frame (≥ 1; 0 is refused).
    pub every: u32,
    /// Write vertex normals with the morph-target meshes (smooth shading in viewers).
    pub normals: bool,
}

/// A finished bake.
pub struct Baked {
    /// The GLB file.
    pub bytes: Vec<u8>,
    /// Where each body mesh and garment went in it.
    pub layout: BakeLayout,
    /// Seconds of each baked frame in the file's animation (0 = the clip's first frame).
    pub times: Vec<f32>,
    /// Whether the body is the skinned rig (LBS) rather than morph targets.
    pub skinned_body: bool,
}

/// Garment colours (linear RGB), as the viewer draws them (src/app/draw.rs).
fn garment_color(kind: GarmentKind) -> [f32; 3] {
    match kind {
        GarmentKind::Cape => [0.18, 0.22, 0.45],
        GarmentKind::Hakama => [0.16, 0.16, 0.18],
        GarmentKind::Sash => [0.62, 0.10, 0.10],
        GarmentKind::Headband => [0.85, 0.85, 0.80],
        // A mesh garment uses its own material; this is for one without.
        GarmentKind::Mesh => [0.5, 0.5, 0.5],
    }
}

/// Every node's local transform from the world matrices of a pose (`local = parent⁻¹ · world`,
/// in f64 so that the round trip through the matrices adds no visible error).
fn locals_from_world(parents: &[Option<u32>], world: &[Mat4], out: &mut Vec<Transform>) {
    out.clear();
    for (i, w) in world.iter().enumerate() {
        let w = w.as_dmat4();
        let local = match parents.get(i).copied().flatten() {
            Some(p) => world[p as usize].as_dmat4().inverse() * w,
            None => w,
        };
        let (s, r, t) = local.to_scale_rotation_translation();
        out.push(Transform {
            translation: t.as_vec3(),
            rotation: r.normalize().as_quat(),
            scale: s.as_vec3(),
        });
    }
}

/// Frames a bake of `scene` simulates: `(start-up frames, all frames)`. `seconds` of the clip
/// (default: its duration; 1 s without a clip) must lie within [`crate::limits::BAKE_SECONDS`];
/// at least one frame is baked.
pub fn frames_to_bake(scene: &Scene, seconds: Option<f32>) -> Result<(u32, u32), CliError> {
    let dt = scene.config.sim.frame_dt;
    let seconds = match seconds {
        Some(s) => crate::limits::BAKE_SECONDS.check_f32("--seconds", s),
        None => {
            let clip_len = scene
                .clip
                .map(|c| scene.rig.clips[c].duration())
                .unwrap_or(1.0);
            crate::limits::BAKE_SECONDS
                .check_f32("the clip's duration", clip_len)
                .map_err(|e| format!("{e}; bake a part of it with --seconds"))
        }
    }
    .map_err(CliError::new)?
    .max(dt);
    let startup = (scene.startup_seconds() / dt).ceil() as u32;
    let sim_frames = (seconds / dt).ceil() as u32;
    Ok((startup, startup + sim_frames))
}

/// Simulates `scene` from its start (settle, blend, then the clip) and bakes the clip part.
/// `progress(done, total)` is called after every simulated frame; `on_frame(k, scene)` after
/// baked frame `k` was recorded (tests compare the file against the scene there).
pub fn bake(
    scene: &mut Scene,
    opts: BakeOptions,
    progress: &mut dyn FnMut(u32, u32),
    on_frame: &mut dyn FnMut(usize, &Scene),
) -> Result<Baked, CliError> {
    let dt = scene.config.sim.frame_dt;
    if opts.every == 0 {
        return Err(CliError::new("--every must be at least 1"));
    }
    let every = opts.every;
    let (startup, total) = frames_to_bake(scene, opts.seconds)?;

    // glTF skins by linear blending only; DQS/CoR bodies (and rigs the exporter cannot hold)
    // are baked as morph targets, vertex for vertex.
    let why_morph = match (scene.config.method, exportable(&scene.rig)) {
        (SkinMethod::Lbs, Ok(())) => None,
        (SkinMethod::Lbs, Err(e)) => Some(e.to_string()),
        (m, _) => Some(format!(
            "{} skinning cannot be expressed in glTF (linear blend only)",
            format!("{m:?}").to_uppercase()
        )),
    };
    if let Some(why) = &why_morph {
        // Said before the progress bar starts, so that it is not drawn over.
        eprintln!("note: {why}: the body is baked as morph targets (one copy per frame)");
    }
    let n_body = scene.rig.meshes.len();
    let mut locals: Vec<Vec<Transform>> = Vec::new();
    let mut body_frames: Vec<Vec<Vec<Vec3>>> = vec![Vec::new(); n_body];
    let mut body_normals: Vec<Vec<Vec<Vec3>>> = vec![Vec::new(); n_body];
    let mut garment_frames: Vec<Vec<Vec<Vec3>>> = vec![Vec::new(); scene.garments.len()];
    let mut garment_normals: Vec<Vec<Vec<Vec3>>> = vec![Vec::new(); scene.garments.len()];
    let mut gf = crate::scene::GarmentFrame::default();
    let mut times = Vec::new();
    for f in 0..total {
        // Ctrl-C (cli::interrupt): stop between frames; nothing is written.
        if super::interrupt::requested() {
            return Err(CliError::new(format!(
                "interrupted (Ctrl-C) after {f} of {total} frames"
            )));
        }
        scene.step(dt);
        progress(f + 1, total);
        if f < startup || !(f - startup).is_multiple_of(every) {
            continue;
        }
        if !scene.state.is_finite() {
            return Err(CliError::new(format!(
                "the simulation produced non-finite values at {:.3} s of the clip",
                (f - startup) as f32 * dt
            )));
        }
        times.push((f - startup) as f32 * dt);
        if why_morph.is_none() {
            let mut l = Vec::new();
            locals_from_world(&scene.rig.skeleton.parents, scene.world_from_node(), &mut l);
            locals.push(l);
        } else {
            for (m, (out, nrm)) in body_frames.iter_mut().zip(&mut body_normals).enumerate() {
                out.push(scene.body_positions(m).to_vec());
                // The skinner's normals (per its method), not ones recomputed from triangles:
                // those would crease along the mesh's UV seams.
                if opts.normals {
                    nrm.push(scene.body_normals(m).to_vec());
                }
            }
        }
        for (g, (out, nrm)) in garment_frames
            .iter_mut()
            .zip(&mut garment_normals)
            .enumerate()
        {
            // The renderer's positions and normals of this frame.
            scene.garment_frame_into(g, &mut gf);
            out.push(gf.positions.clone());
            if opts.normals {
                nrm.push(gf.normals.clone());
            }
        }
        on_frame(times.len() - 1, scene);
    }
    let garments: Vec<MorphMesh> = garment_frames
        .into_iter()
        .zip(garment_normals)
        .enumerate()
        .map(|(g, (frames, normals))| {
            let gf = scene.garment_frame(g);
            MorphMesh {
                name: gf.name,
                indices: gf.triangles.iter().flatten().copied().collect(),
                uvs: gf.uvs,
                // A mesh garment keeps its own material (and texture, through its UVs).
                material: match gf.material {
                    Some(m) => BakedMaterial::Rig(Some(m)),
                    None => BakedMaterial::Cloth(garment_color(scene.garments[g].kind)),
                },
                frames,
                normals,
            }
        })
        .collect();
    let body = match why_morph {
        None => BakedBody::Skinned { locals },
        Some(_) => BakedBody::Morph(
            body_frames
                .into_iter()
                .zip(body_normals)
                .zip(&scene.rig.meshes)
                .map(|((frames, normals), m)| MorphMesh {
                    name: m.name.clone(),
                    indices: m.indices.clone(),
                    uvs: m.uvs.clone(),
                    material: BakedMaterial::Rig(m.material),
                    frames,
                    normals,
                })
                .collect(),
        ),
    };
    let skinned_body = matches!(body, BakedBody::Skinned { .. });
    let name = scene
        .clip
        .map(|c| scene.rig.clips[c].name.clone())
        .unwrap_or_else(|| "baked".into());
    let (bytes, layout) = bake_to_glb(&Bake {
        rig: &scene.rig,
        times: times.clone(),
        hold: dt * every as f32,
        body,
        garments,
        name,
    })
    .map_err(|e| CliError::new(e.to_string()))?;
    Ok(Baked {
        bytes,
        layout,
        times,
        skinned_body,
    })
}

pub fn run(args: Args) -> Result<(), CliError> {
    let err = |e: &dyn std::fmt::Display| CliError::new(e.to_string());
    // Refuse before simulating, not after minutes of work.
    if args.out.exists() && !args.force {
        return Err(CliError::new(format!(
            "{} already exists; pass --force to overwrite it",
            args.out.display()
        )));
    }
    let (rig, mut cfg) = match &args.scene {
        Some(p) => crate::scene::SceneFile::load_scene(p).map_err(|e| err(&e))?,
        None => {
            let mut rig = load_rig_named(&args.rig, None).map_err(|e| err(&e))?;
            super::clips_from::add_clips(&mut rig, &args.clips_from, &Default::default())?;
            let mut cfg = SceneConfig {
                clip: args.clip.clone(),
                ..SceneConfig::default()
            };
            for g in &mut cfg.garments {
                g.wear_unfit = args.wear_unfit;
            }
            (rig, cfg)
        }
    };
    // `--hide` adds to a scene file's `hide`.
    cfg.hide.extend(args.hide.iter().cloned());
    let mut scene = Scene::new_with_progress(rig, cfg, &mut super::progress::cor_progress())
        .map_err(|e| err(&e))?;
    if !scene.hidden.is_empty() {
        eprintln!("hidden: {}", scene.hidden.join(", "));
    }
    // Say which bone was taken for which role when the names were not all Mixamo's, and which
    // garments the body cannot wear.
    if let Some(note) = scene.bones_note() {
        eprint!("{note}");
    }
    eprint!("{}", refused_note(&scene));
    if let Some(m) = args.model {
        scene.config.sim.model = m;
    }
    // An absurd simulation is refused before it starts (or run with --force), and every run
    // says how long it should take.
    let (_, frames) = frames_to_bake(&scene, args.seconds)?;
    let cost = crate::limits::Cost::new(
        scene.config.sim.substeps,
        scene.particle_count(),
        frames as u64,
    );
    let what = format!(
        "{} substeps × {} particles × {frames} frames",
        scene.config.sim.substeps,
        scene.particle_count()
    );
    cost.check(&what, args.force).map_err(CliError::new)?;
    eprintln!(
        "baking {what}: estimated {} (at {:.1e} particle substeps/s)",
        cost.duration_text(),
        crate::limits::Cost::PARTICLE_STEPS_PER_SECOND
    );
    let mut bar = super::progress::Progress::new("baking", 0, "frames");
    let opts = BakeOptions {
        seconds: args.seconds,
        every: args.every,
        normals: !args.no_normals,
    };
    let baked = bake(
        &mut scene,
        opts,
        &mut |d, t| {
            if d == 1 {
                bar = super::progress::Progress::new("baking", t as u64, "frames");
            }
            bar.set(d as u64)
        },
        &mut |_, _| {},
    );
    bar.finish();
    let baked = baked.map_err(|e| {
        if super::interrupt::requested() {
            CliError::new(format!(
                "{e}; nothing written: {}",
                if args.out.exists() {
                    format!("{} is unchanged", args.out.display())
                } else {
                    format!("{} was not created", args.out.display())
                }
            ))
        } else {
            e
        }
    })?;
    super::write_output(&args.out, &baked.bytes, args.force)?;
    println!(
        "wrote {} ({:.1} MB): body {}, {} garments ({} particles), {} frames over {:.2} s",
        args.out.display(),
        baked.bytes.len() as f64 / 1e6,
        if baked.skinned_body {
            "skinned (node keys)"
        } else {
            "as morph targets"
        },
        scene.garments.len(),
        scene.particle_count(),
        baked.times.len(),
        baked.times.last().copied().unwrap_or(0.0),
    );
    Ok(())
}

/// The bone map the garments were built with, when some role was not found by its Mixamo
/// name (read in another scheme, filled from a chain, guessed from the shape, named by the
/// scene file), and the body scale when it is not 1; `None` for a plain Mixamo rig.
/// One line per garment the scene left off ([`Scene::refused`]) or wore although it does not
/// fit ([`Scene::worn_unfit`]), with why; empty if none.
pub fn refused_note(scene: &Scene) -> String {
    let off = scene
        .refused
        .iter()
        .map(|(k, why)| format!("left off: {why} (--wear-unfit, or `wear_unfit = true` in the scene file's [[garment]], wears the {} anyway)\n", k.name()));
    let worn = scene
        .worn_unfit
        .iter()
        .map(|(_, why)| format!("worn though it does not fit: {why}\n"));
    off.chain(worn).collect()
}
