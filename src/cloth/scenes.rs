//! The CS184 cloth homework's scenes, headless, plus `drop`, the benchmark scene compared with
//! other simulators, and `two_garments` (garment–garment collision).

use std::time::Instant;

use crate::math::{Vec3, Vec3A};

use super::build::{self, GridSpec, Orientation};
use super::collide::{Collider, Shape};
use super::mass_spring::step::StepStats;
use super::model::{ClothModel, Garment};
use super::params::{ClothModelKind, GarmentParams, Integrator, SimParams, Wind};
use super::state::ClothState;
use super::step::step_frame;
use super::workspace::ClothWorkspace;

/// Names accepted by [`build_scene`].
pub const SCENE_NAMES: [&str; 8] = [
    "pinned2",
    "pinned4",
    "sphere",
    "plane",
    "selfcollide",
    "wind",
    "two_garments",
    "drop",
];

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SceneError {
    #[error("unknown scene '{0}' (known: {list})", list = SCENE_NAMES.join(", "))]
    Unknown(String),
    #[error("grid size {0} is out of range (2 … 1024)")]
    BadSize(u32),
    #[error(transparent)]
    Build(#[from] build::BuildError),
}

/// Options common to every scene.
#[derive(Clone, Debug)]
pub struct SceneOptions {
    /// Particles per side. Default 32.
    pub n: u32,
    /// Frames to simulate; `None` = the scene's default.
    pub frames: Option<u32>,
    /// Self- and garment–garment collision (always on in `selfcollide` and `two_garments`).
    pub self_collision: bool,
    /// Substeps per frame; `None` = the scene's default (see [`drop_substeps`]).
    pub substeps: Option<u32>,
    /// Integrator; `None` = the scene's default.
    pub integrator: Option<Integrator>,
    /// Cloth model. Default [`ClothModelKind::MassSpring`].
    pub model: ClothModelKind,
}

impl Default for SceneOptions {
    fn default() -> Self {
        Self {
            n: 32,
            frames: None,
            self_collision: false,
            substeps: None,
            integrator: None,
            model: ClothModelKind::MassSpring,
        }
    }
}

/// A ready-to-run scene.
pub struct Scene {
    pub name: String,
    pub model: ClothModel,
    pub state: ClothState,
    pub workspace: ClothWorkspace,
    pub colliders: Vec<Collider>,
    pub params: SimParams,
    pub frames: u32,
}

/// Substeps per frame of the benchmark scene: 16 / 32 / 64 for N = 32 / 60 / 100 (fixed by
/// the benchmark), and beyond, proportional to N like the N = 100 case (the explicit step's
/// stability limit shrinks like the spacing h ∝ 1/N at fixed per-spring stiffness).
pub fn drop_substeps(n: u32) -> u32 {
    match n {
        0..=32 => 16,
        33..=60 => 32,
        61..=100 => 64,
        _ => (64 * n).div_ceil(100),
    }
}

/// Fabric of the grid scenes at spacing h: the benchmark's springs (40/40/4 N/m), 0.2 kg/m²,
/// ζ = 0.1, μ = 0.5, thickness 0.4 h.
fn fabric(h: f32) -> GarmentParams {
    GarmentParams {
        thickness: 0.4 * h,
        ..GarmentParams::default()
    }
}

fn world(garments: Vec<Garment>) -> ClothModel {
    ClothModel::new(garments)
}

/// Builds scene `name`.
pub fn build_scene(name: &str, opts: &SceneOptions) -> Result<Scene, SceneError> {
    let n = opts.n;
    if !(2..=1024).contains(&n) {
        return Err(SceneError::BadSize(n));
    }
    let h = 1.0 / (n - 1) as f32;
    let mut params = SimParams {
        substeps: opts.substeps.unwrap_or(drop_substeps(n)),
        ..SimParams::default()
    };
    let ground = Collider::fixed(Shape::plane(Vec3::ZERO, Vec3::Y));
    let mut frames = 120;
    let (garments, colliders) = match name {
        "drop" => {
            // The benchmark scene, exactly as specified: a pure explicit mass-spring cloth (no
            // deformation limit, no Verlet damping), semi-implicit Euler.
            params.integrator = Integrator::SymplecticEuler;
            params.provot_limit = None;
            params.verlet_damping = 0.0;
            params.self_friction = 0.0;
            let g = build::grid(
                "cloth",
                &GridSpec::square(n, 1.0, Vec3::new(0.0, 1.0, 0.0)),
                &fabric(h),
            )?;
            (
                vec![g],
                vec![
                    Collider::fixed(Shape::sphere(Vec3::new(0.0, 0.3, 0.0), 0.3)),
                    ground,
                ],
            )
        }
        "pinned2" | "pinned4" => {
            let mut spec = GridSpec::square(n, 1.0, Vec3::new(0.0, 1.0, 0.0));
            spec.pinned = vec![(0, 0), (n - 1, 0)];
            if name == "pinned4" {
                spec.pinned.extend([(0, n - 1), (n - 1, n - 1)]);
            }
            frames = 240;
            (vec![build::grid("cloth", &spec, &fabric(h))?], vec![])
        }
        "sphere" => {
            let g = build::grid(
                "cloth",
                &GridSpec::square(n, 1.0, Vec3::new(0.0, 1.0, 0.0)),
                &fabric(h),
            )?;
            (
                vec![g],
                vec![Collider::fixed(Shape::sphere(
                    Vec3::new(0.0, 0.5, 0.0),
                    0.3,
                ))],
            )
        }
        "plane" => {
            // Slanted 15° about Z: tan 15° ≈ 0.27 < μ, so the cloth lands and stays.
            let a = 15f32.to_radians();
            let slope = Collider::fixed(Shape::plane(Vec3::ZERO, Vec3::new(a.sin(), a.cos(), 0.0)));
            let g = build::grid(
                "cloth",
                &GridSpec::square(n, 1.0, Vec3::new(0.0, 0.6, 0.0)),
                &fabric(h),
            )?;
            (vec![g], vec![slope])
        }
        "selfcollide" => {
            params.self_collision = true;
            frames = 240;
            let spec = GridSpec {
                orientation: Orientation::Vertical,
                origin: Vec3::new(-0.5, 1.2, 0.0),
                jitter: 0.002,
                ..GridSpec::square(n, 1.0, Vec3::ZERO)
            };
            (vec![build::grid("cloth", &spec, &fabric(h))?], vec![ground])
        }
        "wind" => {
            frames = 240;
            params.wind = Wind {
                velocity: Vec3::new(6.0, 0.0, 1.0),
                ..Wind::default()
            };
            let mut spec = GridSpec {
                nx: (n * 3).div_ceil(2),
                ny: n,
                width: 1.5,
                height: 1.0,
                orientation: Orientation::Vertical,
                origin: Vec3::new(0.0, 2.0, 0.0),
                pinned: Vec::new(),
                jitter: 0.001,
            };
            spec.pinned = (0..n).map(|r| (0, r)).collect();
            let pole = Collider::fixed(Shape::capsule(
                Vec3::new(-0.03, 0.0, 0.0),
                0.025,
                Vec3::new(-0.03, 2.05, 0.0),
                0.02,
            ));
            (
                vec![build::grid("flag", &spec, &fabric(h))?],
                vec![pole, ground],
            )
        }
        "two_garments" => {
            params.self_collision = true;
            let p = fabric(h);
            let a = build::grid(
                "lower",
                &GridSpec::square(n, 1.0, Vec3::new(0.0, 0.8, 0.0)),
                &p,
            )?;
            let mut spec = GridSpec::square(n, 0.8, Vec3::new(0.1, 1.0, -0.05));
            spec.jitter = 0.0;
            let b = build::grid(
                "upper",
                &spec,
                &GarmentParams {
                    thickness: 0.4 * 0.8 * h,
                    ..p
                },
            )?;
            (
                vec![a, b],
                vec![
                    Collider::fixed(Shape::sphere(Vec3::new(0.0, 0.3, 0.0), 0.3)),
                    ground,
                ],
            )
        }
        _ => return Err(SceneError::Unknown(name.to_owned())),
    };
    params.self_collision |= opts.self_collision;
    if let Some(i) = opts.integrator {
        params.integrator = i;
    }
    params.model = opts.model;
    let model = world(garments);
    let state = ClothState::new(&model);
    let workspace = ClothWorkspace::new(&model);
    Ok(Scene {
        name: name.to_owned(),
        model,
        state,
        workspace,
        colliders,
        params,
        frames: opts.frames.unwrap_or(frames),
    })
}

/// Per-frame statistics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameRecord {
    pub frame: u64,
    /// Simulated time at the end of the frame, s.
    pub time: f64,
    /// Wall time of the step, s.
    pub wall: f64,
    /// Kinetic energy, J.
    pub kinetic_energy: f64,
    /// Largest particle speed, m/s.
    pub max_speed: f32,
    /// Lowest particle height, m.
    pub min_y: f32,
    /// Largest stretch l/l0 over structural springs.
    pub max_stretch: f32,
    /// Deepest violation of a collider's thickness offset, m (≤ 0: none).
    pub max_penetration: f32,
    pub step: StepStats,
}

/// Largest l/l0 over structural springs (measured from the spring list of the model).
pub fn max_structural_stretch(model: &ClothModel, x: &[Vec3A]) -> f32 {
    let set = &model.limits;
    let mut worst = 0.0f32;
    for e in 0..set.len() {
        let l = x[set.a[e] as usize].distance(x[set.b[e] as usize]);
        // Limits hold structural and shear springs; both must respect the same bound.
        worst = worst.max(l / set.rest[e].max(1e-12));
    }
    worst
}

/// Deepest penetration of any particle into any collider's thickness band, m (negative or zero
/// when every particle is outside).
pub fn max_penetration(model: &ClothModel, x: &[Vec3A], colliders: &[Collider]) -> f32 {
    let mut worst = f32::NEG_INFINITY;
    for (i, p) in x.iter().enumerate() {
        if model.is_pinned(i) {
            continue;
        }
        for c in colliders {
            worst = worst.max(model.thickness[i] - c.cur.closest(*p).distance);
        }
    }
    worst.max(-1.0)
}

/// Statistics of the current state.
pub fn record(scene: &Scene, wall: f64, step: StepStats) -> FrameRecord {
    let s = &scene.state;
    FrameRecord {
        frame: s.frame,
        time: s.time,
        wall,
        kinetic_energy: s.kinetic_energy(),
        max_speed: s.v.iter().map(|v| v.length()).fold(0.0, f32::max),
        min_y: s.x.iter().map(|x| x.y).fold(f32::INFINITY, f32::min),
        max_stretch: max_structural_stretch(&scene.model, &s.x),
        max_penetration: max_penetration(&scene.model, &s.x, &scene.colliders),
        step,
    }
}

impl Scene {
    /// Steps one frame and returns its wall time, s.
    pub fn step(&mut self) -> (f64, StepStats) {
        let t = Instant::now();
        let st = step_frame(
            &self.model,
            &mut self.state,
            &mut self.workspace,
            &self.colliders,
            &self.params,
        );
        (t.elapsed().as_secs_f64(), st)
    }

    /// Runs all frames, calling `on_frame` with each frame's statistics.
    pub fn run(&mut self, mut on_frame: impl FnMut(&FrameRecord)) -> Vec<FrameRecord> {
        let mut out = Vec::with_capacity(self.frames as usize);
        for _ in 0..self.frames {
            let (wall, st) = self.step();
            let r = record(self, wall, st);
            on_frame(&r);
            out.push(r);
        }
        out
    }
}

/// The unit tests' cloth of two chunks (the `drop` scene at 40 × 40; crossing springs
/// included).
#[cfg(test)]
pub(crate) fn two_chunk_cloth() -> Scene {
    let opts = SceneOptions {
        n: 40,
        ..SceneOptions::default()
    };
    let scene = build_scene("drop", &opts).unwrap();
    let model = &scene.model;
    assert!(model.chunks() >= 2 && !model.limits.crossing.is_empty());
    assert!(!model.springs.crossing.is_empty());
    scene
}

/// The unit tests' random numbers in [−0.5, 0.5): a linear congruential generator (Numerical
/// Recipes' constants) from `seed`.
#[cfg(test)]
pub(crate) fn test_random(mut seed: u32) -> impl FnMut() -> f32 {
    move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    }
}
