//! `drape bake scene.toml --out baked.glb` (or flags instead of a file): simulates the dressed
//! character over its clip and writes the body and every garment as one glTF 2.0 binary with
//! morph-target animation: each mesh's base positions are the first baked frame, each later
//! frame is one morph target (a position delta), and a STEP `weights` animation switches to
//! frame k's target at its time. Blender's importer and three.js play this as is.

use std::io::Write;
use std::path::PathBuf;

use clap::Args as ClapArgs;
use serde_json::{json, Value};

use super::CliError;
use crate::math::Vec3;
use crate::scene::{load_rig_named, Scene, SceneConfig};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Scene file (TOML, see `drape::scene::SceneFile`); without it the flags describe the scene.
    pub scene: Option<PathBuf>,
    /// Output .glb.
    #[arg(long, default_value = "baked.glb")]
    pub out: PathBuf,
    /// Rig (`ninja` or a glTF path) when no scene file is given.
    #[arg(long, default_value = "ninja")]
    pub rig: String,
    /// Clip when no scene file is given (default: the rig's first).
    #[arg(long)]
    pub clip: Option<String>,
    /// Seconds to bake (default: the clip's duration).
    #[arg(long)]
    pub seconds: Option<f32>,
    /// Bake every n-th simulated frame (1 = every frame at the simulation's fps).
    #[arg(long, default_value_t = 2)]
    pub every: u32,
    /// Replace --out if it exists.
    #[arg(long)]
    pub force: bool,
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
    let mut scene = match &args.scene {
        Some(p) => Scene::from_file(p).map_err(|e| err(&e))?,
        None => {
            let rig = load_rig_named(&args.rig, None).map_err(|e| err(&e))?;
            let cfg = SceneConfig {
                clip: args.clip.clone(),
                ..SceneConfig::default()
            };
            Scene::new(rig, cfg).map_err(|e| err(&e))?
        }
    };
    let dt = scene.config.sim.frame_dt;
    let clip_len = scene
        .clip
        .map(|c| scene.rig.clips[c].duration())
        .unwrap_or(1.0);
    let seconds = args.seconds.unwrap_or(clip_len).clamp(dt, 600.0);
    let every = args.every.max(1);
    let startup = (scene.startup_seconds() / dt).ceil() as u32;
    let sim_frames = (seconds / dt).ceil() as u32;
    let total = startup + sim_frames;
    // frames[mesh][frame] = positions; meshes are the rig's meshes, then the garments.
    let n_body = scene.rig.meshes.len();
    let n_mesh = n_body + scene.garments.len();
    let mut frames: Vec<Vec<Vec<Vec3>>> = vec![Vec::new(); n_mesh];
    let mut times = Vec::new();
    let mut stderr = std::io::stderr();
    for f in 0..total {
        scene.step(dt);
        let _ = write!(stderr, "\rbaking: frame {}/{}", f + 1, total);
        let _ = stderr.flush();
        if f < startup || !(f - startup).is_multiple_of(every) {
            continue;
        }
        if !scene.state.is_finite() {
            return Err(CliError::new("the simulation produced non-finite values"));
        }
        times.push((f - startup) as f32 * dt);
        for (m, out) in frames.iter_mut().enumerate().take(n_body) {
            out.push(scene.body_positions(m).to_vec());
        }
        for g in 0..scene.garments.len() {
            frames[n_body + g].push(scene.garment_frame(g).positions);
        }
    }
    let _ = writeln!(stderr);
    let mut meshes = Vec::new();
    for (m, f) in frames.iter().enumerate() {
        let (name, indices) = if m < n_body {
            let mesh = &scene.rig.meshes[m];
            (mesh.name.clone(), mesh.indices.clone())
        } else {
            let g = scene.garment_frame(m - n_body);
            let idx: Vec<u32> = g.triangles.iter().flatten().copied().collect();
            (g.name, idx)
        };
        meshes.push((name, indices, f));
    }
    let bytes = glb(&meshes, &times).map_err(CliError::new)?;
    let mut file = super::create_output(&args.out, args.force)?;
    std::io::Write::write_all(&mut file, &bytes)
        .map_err(|e| CliError::new(format!("could not write {}: {e}", args.out.display())))?;
    println!(
        "wrote {}: {} meshes, {} frames, {} particles",
        args.out.display(),
        meshes.len(),
        times.len(),
        scene.particle_count()
    );
    Ok(())
}

/// The binary chunk and the JSON arrays that index it.
#[derive(Default)]
struct Bin {
    data: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Bin {
    fn push(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        while !self.data.len().is_multiple_of(4) {
            self.data.push(0);
        }
        let mut v = json!({"buffer": 0, "byteOffset": self.data.len(), "byteLength": bytes.len()});
        if let Some(t) = target {
            v["target"] = json!(t);
        }
        self.data.extend_from_slice(bytes);
        self.views.push(v);
        self.views.len() - 1
    }

    fn vec3(&mut self, v: &[Vec3]) -> usize {
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        let mut bytes = Vec::with_capacity(v.len() * 12);
        for p in v {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
                bytes.extend_from_slice(&p[k].to_le_bytes());
            }
        }
        if v.is_empty() {
            lo = [0.0; 3];
            hi = [0.0; 3];
        }
        let view = self.push(&bytes, Some(34962));
        self.accessors
            .push(json!({"bufferView": view, "componentType": 5126,
            "count": v.len(), "type": "VEC3", "min": lo, "max": hi}));
        self.accessors.len() - 1
    }

    fn scalars(&mut self, v: &[f32], with_bounds: bool) -> usize {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let view = self.push(&bytes, None);
        let mut a = json!({"bufferView": view, "componentType": 5126, "count": v.len(),
            "type": "SCALAR"});
        if with_bounds {
            let lo = v.iter().copied().fold(f32::INFINITY, f32::min);
            let hi = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            a["min"] = json!([lo]);
            a["max"] = json!([hi]);
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    fn indices(&mut self, v: &[u32]) -> usize {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let view = self.push(&bytes, Some(34963));
        self.accessors
            .push(json!({"bufferView": view, "componentType": 5125,
            "count": v.len(), "type": "SCALAR"}));
        self.accessors.len() - 1
    }
}

type BakedMesh<'a> = (String, Vec<u32>, &'a Vec<Vec<Vec3>>);

/// Writes the meshes (name, triangle indices, positions per frame) with a morph-target
/// animation over `times` as GLB bytes.
fn glb(meshes: &[BakedMesh], times: &[f32]) -> Result<Vec<u8>, String> {
    let mut bin = Bin::default();
    let mut json_meshes = Vec::new();
    let mut nodes = Vec::new();
    let mut channels = Vec::new();
    let mut samplers = Vec::new();
    let n_frames = times.len();
    if n_frames == 0 {
        return Err("nothing to bake (no frames)".into());
    }
    let input = bin.scalars(times, true);
    for (m, (name, indices, frames)) in meshes.iter().enumerate() {
        let base = &frames[0];
        let pos = bin.vec3(base);
        let idx = bin.indices(indices);
        // One target per frame after the first: the delta from the base.
        let mut targets = Vec::new();
        for f in frames.iter().skip(1) {
            let delta: Vec<Vec3> = f.iter().zip(base).map(|(p, b)| *p - *b).collect();
            targets.push(json!({"POSITION": bin.vec3(&delta)}));
        }
        let n_t = targets.len();
        let mut prim = json!({"attributes": {"POSITION": pos}, "indices": idx, "mode": 4});
        let mut mesh = json!({"name": name, "primitives": []});
        if n_t > 0 {
            prim["targets"] = json!(targets);
            mesh["weights"] = json!(vec![0.0f32; n_t]);
            // Frame k (k ≥ 1) shows target k − 1 alone; frame 0 shows none.
            let mut w = vec![0.0f32; n_frames * n_t];
            for k in 1..n_frames {
                w[k * n_t + (k - 1)] = 1.0;
            }
            let output = bin.scalars(&w, false);
            samplers.push(json!({"input": input, "output": output, "interpolation": "STEP"}));
            channels.push(json!({"sampler": samplers.len() - 1,
                "target": {"node": m, "path": "weights"}}));
        }
        mesh["primitives"] = json!([prim]);
        json_meshes.push(mesh);
        nodes.push(json!({"name": name, "mesh": m}));
    }
    let mut doc = json!({
        "asset": {"version": "2.0", "generator": "drape bake"},
        "scene": 0,
        "scenes": [{"nodes": (0..meshes.len()).collect::<Vec<_>>()}],
        "nodes": nodes,
        "meshes": json_meshes,
        "accessors": bin.accessors,
        "bufferViews": bin.views,
        "buffers": [{"byteLength": 0}],
    });
    while !bin.data.len().is_multiple_of(4) {
        bin.data.push(0);
    }
    doc["buffers"][0]["byteLength"] = json!(bin.data.len());
    if !channels.is_empty() {
        doc["animations"] = json!([{"name": "baked", "channels": channels, "samplers": samplers}]);
    }
    let mut js = serde_json::to_vec(&doc).map_err(|e| e.to_string())?;
    while !js.len().is_multiple_of(4) {
        js.push(b' ');
    }
    let total = 12 + 8 + js.len() + 8 + bin.data.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(js.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&js);
    out.extend_from_slice(&(bin.data.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin.data);
    Ok(out)
}
