//! A garment made from a modelled mesh instead of a shape of the library: one of the character's
//! own meshes (the KayKit Rogue's cape, a skirt skinned with the body), or a mesh of a separate
//! glTF file modelled on the character in its bind pose. As Unity Cloth, Unreal's Chaos Cloth
//! and Blender's pin groups do, the mesh keeps its topology and rest shape, and a per-vertex pin
//! strength says how tightly each vertex is held by the body.
//!
//! # Topology
//! Vertices split only by UV or normal (seams: the same position twice) are welded into one
//! particle ([`weld`]); the output keeps the mesh's own vertices, order and triangles
//! ([`MeshOutput`]), each vertex taking its particle's position. The particle mesh gets the
//! springs of PHYSICS.md §1 for a triangle mesh ([`crate::cloth::build::mesh`]): structural on
//! edges, one across the two opposite vertices of each pair of triangles sharing an edge, and
//! bending between the ends of nearly collinear edge pairs. Rest lengths are the modelled ones,
//! so a flared skirt stays flared. Degenerate triangles (two corners on one particle, or no
//! area) and repeated ones are left out of the simulation (still drawn); edges shared by more
//! than two triangles (non-manifold) keep their structural spring but get no spring across; all
//! are counted in the [`MeshReport`].
//!
//! # Pins
//! Each particle has a pin strength w in 0 … 1 ([`PinRule`]): painted (`_PIN`, else the red
//! channel of `COLOR_0`; the largest over the vertices welded into it), the highest ring, or
//! the vertices near the body. w = 1: the particle is pinned, placed every substep where the
//! skin puts it. 0 < w < 1: it is free but kept within (1 − w) · `max_distance` of that place
//! (Unity Cloth's "max distance"), [`SoftPins`]. w = 0: free.
//!
//! Where the skin puts a particle: a mesh of the rig is skinned by its own influences (a rigid
//! mesh, such as the Rogue's cape, weighted 1 to its joint: `body::mesh_bound_to_skin`), so a
//! pinned vertex follows exactly the surface the mesh had as a rigid or skinned piece; a mesh
//! from a separate file takes the influences of the nearest skin vertex, like the library's pins.

use std::path::PathBuf;

use super::fit::BodyAtRest;
use super::pins::{blend, PinBinding};
use super::{BuiltGarment, GarmentError, GarmentKind, GarmentSpec};
use crate::math::{Vec2, Vec3};
use crate::rig::{Rig, SkinnedMesh};

/// Where the garment's mesh comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum MeshSource {
    /// A mesh of the rig, by node name, mesh name or the full `"node/mesh#primitive"` name
    /// (exact, else case-insensitive and unique part of one).
    Rig(String),
    /// A glTF/GLB file of garment meshes modelled on the character at its bind pose (its nodes'
    /// transforms applied), and which of its meshes (named as for [`MeshSource::Rig`]; `None`:
    /// the file must have exactly one).
    File { path: PathBuf, node: Option<String> },
}

/// Which particles hold on to the body, and how strongly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PinRule {
    /// The painted strength: `_PIN`, else the red channel of `COLOR_0`.
    Weights,
    /// The highest ring: vertices on the mesh's border (or anywhere, for a closed mesh) within
    /// 5 % of the garment's height of its highest one, fully pinned.
    Top,
    /// Vertices within this distance (m) of the body's skin at rest, fully pinned.
    Within(f32),
}

/// What a mesh garment is made of.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshGarmentSpec {
    pub source: MeshSource,
    pub pin: PinRule,
    /// Distance a free-ish particle may stray from where the skin puts it, at pin strength 0+,
    /// m: `(1 − w) · max_distance`. Range 0 … 2; default 0.1.
    pub max_distance: f32,
}

impl MeshGarmentSpec {
    pub fn new(source: MeshSource, pin: PinRule) -> Self {
        Self {
            source,
            pin,
            max_distance: 0.1,
        }
    }

    /// A short name for messages.
    pub fn label(&self) -> String {
        match &self.source {
            MeshSource::Rig(n) => format!("mesh '{n}'"),
            MeshSource::File { path, node: None } => format!("mesh file {}", path.display()),
            MeshSource::File {
                path,
                node: Some(n),
            } => format!("mesh '{n}' of {}", path.display()),
        }
    }
}

/// A scene file's `mesh = …`: a name (a mesh of the rig, or a `.glb`/`.gltf` file when it ends
/// so) or `{ file = "…", node = "…" }`.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub enum MeshKey {
    Name(String),
    File { file: String, node: Option<String> },
}

/// A scene file's `pin = …`: `"weights"`, `"top"` or `{ within = 0.01 }`.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub enum PinKey {
    Rule(String),
    Within { within: f32 },
}

/// The [`GarmentSpec`] of one `[[garment]]` entry from its `kind`, or its `mesh`, `pin` and
/// `max_distance`; a clear message for a bad combination or value. Fabric keys are applied by
/// the caller.
pub fn garment_entry(
    kind: Option<&str>,
    mesh: Option<&MeshKey>,
    pin: Option<&PinKey>,
    max_distance: Option<f32>,
) -> Result<GarmentSpec, String> {
    let Some(mesh) = mesh else {
        if pin.is_some() || max_distance.is_some() {
            return Err(
                "[[garment]]: pin and max_distance apply to a mesh garment (mesh = …)".into(),
            );
        }
        let kind = kind.ok_or("[[garment]] needs kind = \"cape\" (or another) or mesh = \"…\"")?;
        return Ok(GarmentSpec::new(kind.parse().map_err(|e| format!("{e}"))?));
    };
    if let Some(k) = kind {
        return Err(format!(
            "[[garment]] has both kind = \"{k}\" and mesh; a garment is one or the other"
        ));
    }
    let is_file = |n: &str| {
        let l = n.to_ascii_lowercase();
        l.ends_with(".glb") || l.ends_with(".gltf")
    };
    let source = match mesh {
        MeshKey::Name(n) if n.trim().is_empty() => {
            return Err("[[garment]]: mesh = \"\" names no mesh".into())
        }
        MeshKey::Name(n) if is_file(n) => MeshSource::File {
            path: PathBuf::from(n),
            node: None,
        },
        MeshKey::Name(n) => MeshSource::Rig(n.clone()),
        MeshKey::File { file, node } => MeshSource::File {
            path: PathBuf::from(file),
            node: node.clone(),
        },
    };
    let pin = match pin {
        None => {
            return Err(
                "[[garment]] with mesh needs pin = \"weights\", \"top\" or { within = 0.01 }"
                    .into(),
            )
        }
        Some(PinKey::Rule(r)) => match r.as_str() {
            "weights" => PinRule::Weights,
            "top" => PinRule::Top,
            o => {
                return Err(format!(
                    "[[garment]]: unknown pin = \"{o}\" (weights, top or {{ within = 0.01 }})"
                ))
            }
        },
        Some(PinKey::Within { within }) => {
            if !(within.is_finite() && (0.0..=0.5).contains(within)) {
                return Err(format!(
                    "[[garment]]: pin within = {within} m must be within 0 … 0.5"
                ));
            }
            PinRule::Within(*within)
        }
    };
    let mut m = MeshGarmentSpec::new(source, pin);
    if let Some(d) = max_distance {
        if !(d.is_finite() && (0.0..=2.0).contains(&d)) {
            return Err(format!(
                "[[garment]]: max_distance = {d} m must be within 0 … 2"
            ));
        }
        m.max_distance = d;
    }
    Ok(GarmentSpec::mesh(m))
}

/// The fabric of a mesh garment when the scene file names none: the cape's medium wool-cotton.
pub fn default_fabric() -> crate::cloth::GarmentParams {
    GarmentKind::Cape.fabric()
}

/// A mesh to simulate, resolved from its source: world space at the bind pose.
#[derive(Clone, Debug, Default)]
pub struct GarmentMesh {
    pub name: String,
    pub positions: Vec<Vec3>,
    pub uvs: Vec<Vec2>,
    pub indices: Vec<u32>,
    /// Painted pin strength per vertex (empty: none painted).
    pub pin: Vec<f32>,
    /// Index into the scene rig's materials.
    pub material: Option<u32>,
    /// The mesh's own skinning (a mesh of the rig), or `None` (pins bind to the nearest skin).
    pub skin: Option<VertexSkin>,
}

/// A mesh's own influences on the scene's skin, per vertex.
#[derive(Clone, Debug, Default)]
pub struct VertexSkin {
    pub joints: Vec<[u16; 4]>,
    pub weights: Vec<[f32; 4]>,
    /// Bind-space position.
    pub p_bind: Vec<Vec3>,
}

/// What was found in the mesh's topology.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshReport {
    pub vertices: usize,
    /// Particles after welding seams.
    pub particles: usize,
    /// Vertices merged into another at the same position (seams).
    pub welded: usize,
    pub triangles: usize,
    /// Triangles left out of the simulation: two corners on one particle, or no area.
    pub degenerate: usize,
    /// Triangles over the same three particles as an earlier one, left out.
    pub repeated: usize,
    /// Edges shared by more than two triangles.
    pub non_manifold_edges: usize,
    /// Vertices no triangle uses (not simulated; they take particle 0's position).
    pub loose: usize,
    /// Particles fully pinned, and partly pinned (max distance).
    pub pinned: usize,
    pub partial: usize,
}

impl MeshReport {
    /// One line for the user, naming every problem found (empty when none).
    pub fn problems(&self) -> String {
        let mut p = Vec::new();
        if self.degenerate > 0 {
            p.push(format!("{} degenerate triangles left out", self.degenerate));
        }
        if self.repeated > 0 {
            p.push(format!("{} repeated triangles left out", self.repeated));
        }
        if self.non_manifold_edges > 0 {
            p.push(format!(
                "{} non-manifold edges (more than two triangles; no spring across them)",
                self.non_manifold_edges
            ));
        }
        if self.loose > 0 {
            p.push(format!(
                "{} vertices in no triangle, not simulated",
                self.loose
            ));
        }
        p.join(", ")
    }
}

/// How the simulated particles map back onto the modelled mesh.
#[derive(Clone, Debug, Default)]
pub struct MeshOutput {
    /// Particle (garment-local) of each vertex of the mesh.
    pub vertex_particle: Vec<u32>,
    /// The mesh's triangles, over its own vertices (all of them, degenerate ones included).
    pub triangles: Vec<[u32; 3]>,
    /// The mesh's UVs per vertex (empty: none).
    pub uvs: Vec<Vec2>,
    pub material: Option<u32>,
    pub report: MeshReport,
}

/// Partly pinned particles (0 < w < 1): each kept within `radius` of where the skin puts it.
#[derive(Clone, Debug, Default)]
pub struct SoftPins {
    /// Particle indices (garment-local in a [`BuiltGarment`], global in the scene).
    pub particles: Vec<u32>,
    /// m.
    pub radius: Vec<f32>,
    pub binding: PinBinding,
}

impl SoftPins {
    pub fn len(&self) -> usize {
        self.particles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.particles.is_empty()
    }

    /// Appends another garment's soft pins, its particles offset by `base`.
    pub fn extend(&mut self, other: &SoftPins, base: u32) {
        self.particles
            .extend(other.particles.iter().map(|&p| p + base));
        self.radius.extend_from_slice(&other.radius);
        self.binding.extend(&other.binding);
    }

    /// Keeps every soft-pinned particle within its radius of its target (`targets`, placed by
    /// the skin like the pins): a particle beyond is moved onto the sphere, then out of the body
    /// again by `outside` (the body wins over the max distance, as a collision would), and its
    /// velocity away from the target removed (both `v` and `x_prev`, so either integrator sees
    /// the same motion; `dt` is the substep). Returns the largest distance moved, m.
    pub fn enforce(
        &self,
        targets: &[Vec3],
        state: &mut crate::cloth::ClothState,
        dt: f32,
        outside: impl Fn(Vec3) -> Vec3,
    ) -> f32 {
        use crate::math::Vec3A;
        let mut worst = 0.0f32;
        for (k, &i) in self.particles.iter().enumerate() {
            let (Some(&t), i) = (targets.get(k), i as usize) else {
                continue;
            };
            let t = Vec3A::from(t);
            let d = state.x[i] - t;
            let len = d.length();
            let r = self.radius[k];
            if len <= r || !len.is_finite() {
                continue;
            }
            let n = d / len;
            let x = Vec3A::from(outside(Vec3::from(t + n * r)));
            worst = worst.max(len - r);
            let mut v = state.v[i];
            let out = v.dot(n);
            if out > 0.0 {
                v -= n * out;
            }
            state.x[i] = x;
            state.v[i] = v;
            state.x_prev[i] = x - v * dt;
        }
        worst
    }
}

/// `p` moved out of the proxy union (`frame`, `capsules`) to at least `clearance`, along the
/// union's gradient (central differences); `p` itself when already outside.
pub fn push_out_of_body(
    mut p: Vec3,
    frame: &crate::body::ProxyFrame,
    capsules: &[[u32; 2]],
    clearance: f32,
) -> Vec3 {
    let sdf = |q: Vec3| crate::body::union_sdf(q, frame, capsules);
    for _ in 0..8 {
        let d = sdf(p);
        if d >= clearance || !d.is_finite() {
            break;
        }
        let e = 1e-3;
        let g = Vec3::new(
            sdf(p + Vec3::X * e) - sdf(p - Vec3::X * e),
            sdf(p + Vec3::Y * e) - sdf(p - Vec3::Y * e),
            sdf(p + Vec3::Z * e) - sdf(p - Vec3::Z * e),
        );
        let Some(n) = g.try_normalize() else {
            break;
        };
        p += n * (clearance - d + 1e-5);
    }
    p
}

/// Welds vertices at the same position (within `1e-6` of the mesh's size): the particle of each
/// vertex, and the first vertex of each particle.
pub fn weld(positions: &[Vec3]) -> (Vec<u32>, Vec<u32>) {
    let (lo, hi) = positions.iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(a, b), &p| (a.min(p), b.max(p)),
    );
    let size = if positions.is_empty() {
        1.0
    } else {
        (hi - lo).length()
    };
    let tol = (size * 1e-6).max(1e-9);
    let cell = |p: Vec3| ((p - lo) / tol).floor().as_ivec3();
    let mut grid: std::collections::HashMap<glam::IVec3, Vec<u32>> =
        std::collections::HashMap::new();
    let mut vertex_particle = Vec::with_capacity(positions.len());
    let mut first = Vec::new();
    for &p in positions {
        let c = cell(p);
        let mut found = None;
        'search: for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let key = c + glam::IVec3::new(dx, dy, dz);
                    if let Some(list) = grid.get(&key) {
                        for &q in list {
                            if positions[first[q as usize] as usize].distance(p) <= tol {
                                found = Some(q);
                                break 'search;
                            }
                        }
                    }
                }
            }
        }
        let q = found.unwrap_or_else(|| {
            let q = first.len() as u32;
            first.push(vertex_particle.len() as u32);
            grid.entry(c).or_default().push(q);
            q
        });
        vertex_particle.push(q);
    }
    (vertex_particle, first)
}

/// The particle mesh of a welded mesh: its triangles (degenerate and repeated ones left out),
/// which particles are used, and the report.
struct Topology {
    triangles: Vec<[u32; 3]>,
    used: Vec<bool>,
    report: MeshReport,
}

fn topology(mesh: &GarmentMesh, vertex_particle: &[u32], particles: usize) -> Topology {
    let mut report = MeshReport {
        vertices: mesh.positions.len(),
        particles,
        welded: mesh.positions.len() - particles,
        triangles: mesh.indices.len() / 3,
        ..Default::default()
    };
    let mut seen = std::collections::HashSet::new();
    let mut edges: std::collections::HashMap<(u32, u32), u32> = std::collections::HashMap::new();
    let mut triangles = Vec::new();
    let mut used = vec![false; particles];
    let size = mesh.positions.iter().fold(
        (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
        |(a, b), &p| (a.min(p), b.max(p)),
    );
    let min_area = ((size.1 - size.0).length() * 1e-6).powi(2);
    for t in mesh.indices.chunks_exact(3) {
        let p = [0, 1, 2].map(|k| vertex_particle[t[k] as usize]);
        let x = [0, 1, 2].map(|k| mesh.positions[t[k] as usize]);
        let area = 0.5 * (x[1] - x[0]).cross(x[2] - x[0]).length();
        if p[0] == p[1] || p[1] == p[2] || p[0] == p[2] || area <= min_area {
            report.degenerate += 1;
            continue;
        }
        let mut key = p;
        key.sort_unstable();
        if !seen.insert(key) {
            report.repeated += 1;
            continue;
        }
        for k in 0..3 {
            let (a, b) = (p[k], p[(k + 1) % 3]);
            *edges.entry((a.min(b), a.max(b))).or_default() += 1;
            used[p[k] as usize] = true;
        }
        triangles.push(p);
    }
    report.non_manifold_edges = edges.values().filter(|&&n| n > 2).count();
    Topology {
        triangles,
        used,
        report,
    }
}

/// Pin strength per particle (garment-local, over `first`: the first vertex of each particle).
fn pin_strength(
    body: &BodyAtRest,
    spec: &MeshGarmentSpec,
    mesh: &GarmentMesh,
    vertex_particle: &[u32],
    positions: &[Vec3],
    triangles: &[[u32; 3]],
) -> Result<Vec<f32>, GarmentError> {
    let n = positions.len();
    match spec.pin {
        PinRule::Weights => {
            if mesh.pin.len() != mesh.positions.len() {
                return Err(GarmentError::Mesh(format!(
                    "{} has no painted pin weights (neither a _PIN attribute nor COLOR_0); \
                     use pin = \"top\" or pin = {{ within = 0.01 }}",
                    spec.label()
                )));
            }
            let mut w = vec![0.0f32; n];
            for (v, &p) in vertex_particle.iter().enumerate() {
                w[p as usize] = w[p as usize].max(mesh.pin[v]);
            }
            Ok(w)
        }
        PinRule::Top => {
            let mut count: std::collections::HashMap<(u32, u32), u32> = Default::default();
            for t in triangles {
                for k in 0..3 {
                    let (a, b) = (t[k], t[(k + 1) % 3]);
                    *count.entry((a.min(b), a.max(b))).or_default() += 1;
                }
            }
            let mut border = vec![false; n];
            for (&(a, b), &c) in &count {
                if c == 1 {
                    border[a as usize] = true;
                    border[b as usize] = true;
                }
            }
            let used: Vec<bool> = {
                let mut u = vec![false; n];
                for t in triangles {
                    for &i in t {
                        u[i as usize] = true;
                    }
                }
                u
            };
            let closed = !border.iter().any(|&b| b);
            let candidate = |i: usize| used[i] && (closed || border[i]);
            let ys = (0..n).filter(|&i| used[i]).map(|i| positions[i].y);
            let (lo, hi) = ys.fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), y| {
                (a.min(y), b.max(y))
            });
            let top = (0..n)
                .filter(|&i| candidate(i))
                .map(|i| positions[i].y)
                .fold(f32::NEG_INFINITY, f32::max);
            let band = 0.05 * (hi - lo).max(1e-6);
            Ok((0..n)
                .map(|i| {
                    if candidate(i) && positions[i].y >= top - band {
                        1.0
                    } else {
                        0.0
                    }
                })
                .collect())
        }
        PinRule::Within(d) => {
            let near = body.near_skin(positions, d);
            Ok(near
                .into_iter()
                .map(|b| if b { 1.0 } else { 0.0 })
                .collect())
        }
    }
}

/// Builds a mesh garment: welds, makes the springs, sets the pins.
pub(super) fn build(
    body: &BodyAtRest,
    spec: &GarmentSpec,
    mspec: &MeshGarmentSpec,
    mesh: &GarmentMesh,
) -> Result<BuiltGarment, GarmentError> {
    let label = mspec.label();
    if mesh.indices.len() < 3 {
        return Err(GarmentError::Mesh(format!("{label} has no triangles")));
    }
    if let Some(v) = mesh.positions.iter().position(|p| !p.is_finite()) {
        return Err(GarmentError::Mesh(format!(
            "{label}: vertex {v} has a non-finite position"
        )));
    }
    let (vertex_particle, first) = weld(&mesh.positions);
    let topo = topology(mesh, &vertex_particle, first.len());
    if topo.triangles.is_empty() {
        return Err(GarmentError::Mesh(format!(
            "{label}: all {} triangles are degenerate",
            topo.report.triangles
        )));
    }
    // Drop particles no triangle uses (they would fall on their own).
    let mut compact = vec![u32::MAX; first.len()];
    let mut kept = Vec::new();
    for (p, &u) in topo.used.iter().enumerate() {
        if u {
            compact[p] = kept.len() as u32;
            kept.push(p);
        }
    }
    let mut report = topo.report;
    report.loose = vertex_particle
        .iter()
        .filter(|&&p| compact[p as usize] == u32::MAX)
        .count();
    let positions: Vec<Vec3> = kept
        .iter()
        .map(|&p| mesh.positions[first[p] as usize])
        .collect();
    let triangles: Vec<[u32; 3]> = topo
        .triangles
        .iter()
        .map(|t| t.map(|p| compact[p as usize]))
        .collect();
    let vertex_particle: Vec<u32> = vertex_particle
        .iter()
        .map(|&p| match compact[p as usize] {
            u32::MAX => 0,
            c => c,
        })
        .collect();
    let strength = pin_strength(body, mspec, mesh, &vertex_particle, &positions, &triangles)?;
    // Representative vertex of each particle: its first one.
    let rep: Vec<usize> = kept.iter().map(|&p| first[p] as usize).collect();
    let pinned: Vec<u32> = (0..positions.len() as u32)
        .filter(|&i| strength[i as usize] >= 1.0 - 1e-4)
        .collect();
    let partial: Vec<u32> = (0..positions.len() as u32)
        .filter(|&i| {
            let w = strength[i as usize];
            w > 1e-4 && w < 1.0 - 1e-4
        })
        .collect();
    report.pinned = pinned.len();
    report.partial = partial.len();
    let name = mesh.name.clone();
    let garment = crate::cloth::build::mesh(&name, &positions, &triangles, &pinned, &spec.fabric)
        .map_err(|e| GarmentError::Build(name.clone(), e))?;
    let bind = |list: &[u32]| -> Result<PinBinding, GarmentError> {
        match &mesh.skin {
            Some(s) => {
                let mut b = PinBinding::default();
                for &i in list {
                    let v = rep[i as usize];
                    b.joints.push(s.joints[v]);
                    b.weights.push(s.weights[v]);
                    b.p_bind.push(s.p_bind[v]);
                    // No CoR centre for this vertex: the mesh is no longer skinned as body
                    // (CoR scenes place these pins by DQS).
                    b.mesh.push(u32::MAX);
                    b.vertex.push(v as u32);
                }
                Ok(b)
            }
            None => {
                let points: Vec<Vec3> = list.iter().map(|&i| positions[i as usize]).collect();
                body.bind(&points)
            }
        }
    };
    let pins = bind(&garment.pinned)?;
    let soft = SoftPins {
        radius: partial
            .iter()
            .map(|&i| (1.0 - strength[i as usize]) * mspec.max_distance)
            .collect(),
        binding: bind(&partial)?,
        particles: partial,
    };
    let uvs = if mesh.uvs.len() == mesh.positions.len() {
        rep.iter().map(|&v| mesh.uvs[v]).collect()
    } else {
        vec![Vec2::ZERO; positions.len()]
    };
    Ok(BuiltGarment {
        kind: GarmentKind::Mesh,
        garment,
        uvs,
        pins,
        soft,
        mesh: Some(MeshOutput {
            vertex_particle,
            triangles: mesh
                .indices
                .chunks_exact(3)
                .map(|t| [t[0], t[1], t[2]])
                .collect(),
            uvs: if mesh.uvs.len() == mesh.positions.len() {
                mesh.uvs.clone()
            } else {
                Vec::new()
            },
            material: mesh.material,
            report,
        }),
        start: None,
        unfit: None,
    })
}

impl BodyAtRest<'_> {
    /// For each point: whether the body's skin at rest (its triangles) is within `d`.
    pub(super) fn near_skin(&self, points: &[Vec3], d: f32) -> Vec<bool> {
        let mut near = vec![false; points.len()];
        let (lo, hi) = points.iter().fold(
            (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
            |(a, b), &p| (a.min(p), b.max(p)),
        );
        let (lo, hi) = (lo - Vec3::splat(d), hi + Vec3::splat(d));
        for m in &self.rig.meshes {
            if m.skin != Some(self.skin as u32) || m.joints.len() != m.positions.len() {
                continue;
            }
            let world: Vec<Vec3> = m
                .positions
                .iter()
                .enumerate()
                .map(|(v, &p)| {
                    blend(&self.world_from_bind, m.joints[v], m.weights[v]).transform_point3(p)
                })
                .collect();
            for t in m.indices.chunks_exact(3) {
                let Some(x) = t
                    .iter()
                    .map(|&i| world.get(i as usize).copied())
                    .collect::<Option<Vec<Vec3>>>()
                else {
                    continue;
                };
                let (tl, th) = (x[0].min(x[1]).min(x[2]), x[0].max(x[1]).max(x[2]));
                if tl.cmpgt(hi).any() || th.cmplt(lo).any() {
                    continue;
                }
                for (k, &p) in points.iter().enumerate() {
                    if near[k] || (p - tl).min_element() < -d || (th - p).min_element() < -d {
                        continue;
                    }
                    if point_triangle_distance(p, x[0], x[1], x[2]) <= d {
                        near[k] = true;
                    }
                }
            }
        }
        near
    }
}

/// Distance from `p` to the triangle `abc` (Ericson, "Real-Time Collision Detection" §5.1.5,
/// closest point by Voronoi regions).
pub fn point_triangle_distance(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> f32 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return p.distance(a);
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return p.distance(b);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return p.distance(a + ab * v);
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return p.distance(c);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return p.distance(a + ac * w);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return p.distance(b + (c - b) * w);
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    p.distance(a + ab * v + ac * w)
}

/// Finds the mesh `name` among `meshes`: the full name, its node part or its mesh part exactly,
/// else the one name that contains it (case-insensitive). `None` with `name = None`: the only
/// mesh. Errors list the candidates.
pub fn find_mesh(meshes: &[SkinnedMesh], name: Option<&str>, what: &str) -> Result<usize, String> {
    let names = || {
        meshes
            .iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(name) = name else {
        return match meshes.len() {
            1 => Ok(0),
            0 => Err(format!("{what} has no meshes")),
            _ => Err(format!(
                "{what} has {} meshes; name one with node = \"…\" (meshes: {})",
                meshes.len(),
                names()
            )),
        };
    };
    let parts = |m: &SkinnedMesh| -> (String, String) {
        let (node, rest) = m.name.split_once('/').unwrap_or((m.name.as_str(), ""));
        let mesh = rest.split('#').next().unwrap_or("");
        (node.to_string(), mesh.to_string())
    };
    let exact: Vec<usize> = (0..meshes.len())
        .filter(|&i| {
            let (n, m) = parts(&meshes[i]);
            meshes[i].name == name || n == name || m == name
        })
        .collect();
    let lower = name.to_lowercase();
    let found = if exact.is_empty() {
        (0..meshes.len())
            .filter(|&i| meshes[i].name.to_lowercase().contains(&lower))
            .collect()
    } else {
        exact
    };
    match found[..] {
        [i] => Ok(i),
        [] => Err(format!(
            "{what} has no mesh named '{name}' (meshes: {})",
            names()
        )),
        _ => Err(format!(
            "'{name}' names {} meshes of {what} ({}); give the full \"node/mesh#primitive\" name",
            found.len(),
            found
                .iter()
                .map(|&i| meshes[i].name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The meshes the scene simulates, resolved before the body is fitted: each mesh garment's
/// [`GarmentMesh`] (indexed like the scene's garments; `None` for a library garment), the rig
/// with the meshes that became cloth removed (they are no longer body: not fitted with proxies,
/// drawn, exported or checked as body), and the file garments' materials and textures appended.
pub fn take_meshes(
    mut rig: Rig,
    skin: usize,
    specs: &[GarmentSpec],
) -> Result<(Rig, Vec<Option<GarmentMesh>>), GarmentError> {
    let mut out = Vec::with_capacity(specs.len());
    let mut remove = Vec::new();
    for spec in specs {
        let Some(m) = &spec.mesh else {
            out.push(None);
            continue;
        };
        let gm = match &m.source {
            MeshSource::Rig(name) => {
                let i = find_mesh(&rig.meshes, Some(name), &format!("rig '{}'", rig.source))
                    .map_err(GarmentError::Mesh)?;
                if remove.contains(&i) {
                    return Err(GarmentError::Mesh(format!(
                        "mesh '{}' is simulated twice",
                        rig.meshes[i].name
                    )));
                }
                remove.push(i);
                rig_mesh(&rig, i, skin)?
            }
            MeshSource::File { path, node } => {
                let file = crate::asset::load_rig(path).map_err(|e| {
                    GarmentError::Mesh(format!("garment file {}: {e}", path.display()))
                })?;
                let i = find_mesh(
                    &file.meshes,
                    node.as_deref(),
                    &format!("garment file {}", path.display()),
                )
                .map_err(GarmentError::Mesh)?;
                file_mesh(&mut rig, &file, i)
            }
        };
        if m.pin == PinRule::Weights && gm.pin.len() != gm.positions.len() {
            return Err(GarmentError::Mesh(format!(
                "{} ('{}') has no painted pin weights (neither a _PIN attribute nor COLOR_0); \
                 use pin = \"top\" or pin = {{ within = 0.01 }}",
                m.label(),
                gm.name
            )));
        }
        out.push(Some(gm));
    }
    remove.sort_unstable();
    for &i in remove.iter().rev() {
        rig.meshes.remove(i);
    }
    if !remove.is_empty() && !rig.meshes.iter().any(|m| !m.positions.is_empty()) {
        return Err(GarmentError::Mesh(format!(
            "simulating {} as cloth leaves no body for it to hang on",
            specs
                .iter()
                .filter_map(|s| s.mesh.as_ref().map(|m| m.label()))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok((rig, out))
}

/// Mesh `i` of the rig, skinned as the body skins it.
fn rig_mesh(rig: &Rig, i: usize, skin: usize) -> Result<GarmentMesh, GarmentError> {
    let m = &rig.meshes[i];
    let bound = crate::body::mesh_bound_to_skin(rig, i, skin).ok_or_else(|| {
        GarmentError::Mesh(format!(
            "mesh '{}' follows no joint of skin {skin}, so nothing can hold it",
            m.name
        ))
    })?;
    let s = &rig.skins[skin];
    let mut wfb = Vec::new();
    crate::body::world_from_bind(&rig.skeleton.rest_world(), s, &mut wfb);
    // At most four influences per pin: the four strongest, renormalised.
    let (joints, weights): (Vec<[u16; 4]>, Vec<[f32; 4]>) = (0..bound.positions.len())
        .map(|v| strongest_four(&bound, v))
        .unzip();
    let positions = (0..bound.positions.len())
        .map(|v| blend(&wfb, joints[v], weights[v]).transform_point3(bound.positions[v]))
        .collect();
    Ok(GarmentMesh {
        name: m.name.clone(),
        positions,
        uvs: m.uvs.clone(),
        indices: m.indices.clone(),
        pin: m.pin.clone(),
        material: m.material,
        skin: Some(VertexSkin {
            joints,
            weights,
            p_bind: bound.positions.clone(),
        }),
    })
}

fn strongest_four(m: &SkinnedMesh, v: usize) -> ([u16; 4], [f32; 4]) {
    let mut all: Vec<(u16, f32)> = (0..4).map(|k| (m.joints[v][k], m.weights[v][k])).collect();
    if let (Some(j), Some(w)) = (m.joints1.get(v), m.weights1.get(v)) {
        all.extend((0..4).map(|k| (j[k], w[k])));
    }
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f32 = all[..4].iter().map(|x| x.1).sum();
    let mut j = [0u16; 4];
    let mut w = [0f32; 4];
    for k in 0..4 {
        j[k] = all[k].0;
        w[k] = if total > 0.0 { all[k].1 / total } else { 0.0 };
    }
    if total <= 0.0 {
        w[0] = 1.0;
    }
    (j, w)
}

/// Mesh `i` of a garment file, placed by its node at rest; its material (with its texture)
/// appended to the scene rig's.
fn file_mesh(rig: &mut Rig, file: &Rig, i: usize) -> GarmentMesh {
    let m = &file.meshes[i];
    let rest = file.skeleton.rest_world();
    let world = rest
        .get(m.node as usize)
        .copied()
        .unwrap_or(crate::math::Mat4::IDENTITY);
    // A skinned mesh's POSITION is already in the bind pose's space (glTF 2.0 §3.7.3: the node
    // transform does not apply); a static one is placed by its node.
    let positions = m
        .positions
        .iter()
        .map(|&p| match m.skin {
            Some(_) => p,
            None => world.transform_point3(p),
        })
        .collect();
    let material = m
        .material
        .and_then(|k| file.materials.get(k as usize))
        .map(|mat| {
            let mut mat = mat.clone();
            mat.base_color_texture = mat
                .base_color_texture
                .and_then(|t| file.textures.get(t as usize))
                .map(|t| {
                    rig.textures.push(t.clone());
                    (rig.textures.len() - 1) as u32
                });
            rig.materials.push(mat);
            (rig.materials.len() - 1) as u32
        });
    GarmentMesh {
        name: m.name.clone(),
        positions,
        uvs: m.uvs.clone(),
        indices: m.indices.clone(),
        pin: m.pin.clone(),
        material,
        skin: None,
    }
}

/// The colour a renderer without garment textures draws a mesh garment in: its material's base
/// colour times the mean of its texture over the texels its UVs cover (the texel under each
/// vertex's UV, averaged), linear RGB; `None` for a garment without a material.
pub fn material_color(rig: &Rig, mesh: Option<&MeshOutput>) -> Option<crate::math::Vec4> {
    let m = mesh?;
    let mat = rig.materials.get(m.material? as usize)?;
    let mut c = mat.base_color;
    if let Some(t) = mat
        .base_color_texture
        .and_then(|t| rig.textures.get(t as usize))
        .filter(|t| t.width > 0 && t.height > 0 && !m.uvs.is_empty())
    {
        // sRGB texels to linear (IEC 61966-2-1) before averaging.
        let lin = |v: u8| {
            let s = v as f32 / 255.0;
            if s <= 0.04045 {
                s / 12.92
            } else {
                ((s + 0.055) / 1.055).powf(2.4)
            }
        };
        let mut sum = Vec3::ZERO;
        for uv in &m.uvs {
            let x = ((uv.x.rem_euclid(1.0) * t.width as f32) as u32).min(t.width - 1);
            let y = ((uv.y.rem_euclid(1.0) * t.height as f32) as u32).min(t.height - 1);
            let k = 4 * (y as usize * t.width as usize + x as usize);
            if let Some(px) = t.rgba8.get(k..k + 3) {
                sum += Vec3::new(lin(px[0]), lin(px[1]), lin(px[2]));
            }
        }
        let mean = sum / m.uvs.len() as f32;
        c = crate::math::Vec4::new(c.x * mean.x, c.y * mean.y, c.z * mean.z, c.w);
    }
    Some(c)
}
