//! Every tunable of the cloth engine, with its unit, range and default.
//!
//! Two levels: [`GarmentParams`] is the fabric of one garment (stiffness, density, damping,
//! thickness, friction) and is baked into the [`ClothModel`](super::ClothModel) when the garment
//! is built; [`SimParams`] is the world (gravity, wind, substeps, integrator, constraint and
//! collision switches) and is read at every frame.

use crate::math::Vec3;

use super::wet::WetParams;

/// The explicit time integrator (PHYSICS.md §1, "Integration").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Integrator {
    /// Position Verlet, the CS184 homework's: `x_new = x + (1 − d)(x − x_prev) + a Δt²`, with
    /// `d` = [`SimParams::verlet_damping`].
    #[default]
    Verlet,
    /// Semi-implicit (symplectic) Euler, Park & Byun 2019's: `v ← v + Δt F/m`, `x ← x + Δt v`.
    /// Position corrections (constraints, collisions) are turned back into velocity as
    /// `Δx / Δt` (PHYSICS.md §1).
    SymplecticEuler,
}

impl std::str::FromStr for Integrator {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "verlet" => Ok(Self::Verlet),
            "euler" | "symplectic-euler" | "semi-implicit-euler" => Ok(Self::SymplecticEuler),
            _ => Err(format!(
                "unknown integrator '{s}' (expected verlet or euler)"
            )),
        }
    }
}

/// The fabric of one garment. Baked into per-spring and per-particle arrays of the model.
#[derive(Clone, Debug, PartialEq)]
pub struct GarmentParams {
    /// Structural spring stiffness, N/m per spring. Range 0 … 1e7 (values the time step cannot
    /// carry are clamped per substep, see [`crate::cloth::StabilityReport`]). Default 40.
    pub k_structural: f32,
    /// Shear spring stiffness, N/m per spring. Range 0 … 1e7. Default 40.
    pub k_shear: f32,
    /// Bending (flexion) spring stiffness, N/m per spring. Range 0 … 1e7. Default 4 (the
    /// homework's 0.2× of structural would be 8; the benchmark scene uses 4).
    pub k_bend: f32,
    /// Areal density of the dry fabric, kg/m². Range 0.01 … 10. Default 0.2 (a light cotton
    /// is 0.1–0.15, denim ~0.4).
    pub area_density: f32,
    /// Damping ratio ζ of each spring's dashpot: `k_d = 2 ζ √(k m)` with m the mean mass of
    /// the two ends, applied along the spring only (PHYSICS.md §1). Dimensionless, range
    /// 0 … 1 (1 = critically damped pair). Default 0.1.
    pub damping_ratio: f32,
    /// Collision thickness, m: particles keep this distance from colliders, and two particles
    /// keep the sum of their thicknesses from each other. Range 1e-4 … 0.05. Default 0.002.
    pub thickness: f32,
    /// Coulomb friction coefficient μ against colliders (Bridson et al. 2002). Dimensionless,
    /// range 0 … 2. Default 0.5.
    pub friction: f32,
}

impl Default for GarmentParams {
    fn default() -> Self {
        Self {
            k_structural: 40.0,
            k_shear: 40.0,
            k_bend: 4.0,
            area_density: 0.2,
            damping_ratio: 0.1,
            thickness: 0.002,
            friction: 0.5,
        }
    }
}

/// A wind velocity field: a constant velocity modulated by travelling gusts. The force on each
/// triangle is `drag · A · ((w − v)·n) n`, split over its three vertices (PHYSICS.md §1).
#[derive(Clone, Debug, PartialEq)]
pub struct Wind {
    /// Mean wind velocity, m/s. Default zero (no wind; the wind pass is then skipped).
    pub velocity: Vec3,
    /// Gust amplitude as a fraction of the mean speed. Range 0 … 2. Default 0.5.
    pub gust_amplitude: f32,
    /// Gust period, s. Range > 0. Default 1.3.
    pub gust_period: f32,
    /// Gust wavelength along the wind direction, m (gusts travel with the wind). Range > 0.
    /// Default 2.
    pub gust_wavelength: f32,
    /// Linear drag coefficient, N·s/m³ (force per unit area per unit normal relative speed).
    /// Range 0 … 10. Default 0.6 (≈ ½ ρ_air C_d |w| for a few m/s of wind).
    pub drag: f32,
}

impl Default for Wind {
    fn default() -> Self {
        Self {
            velocity: Vec3::ZERO,
            gust_amplitude: 0.5,
            gust_period: 1.3,
            gust_wavelength: 2.0,
            drag: 0.6,
        }
    }
}

impl Wind {
    /// True when the wind does anything (the per-triangle pass is skipped otherwise).
    pub fn is_active(&self) -> bool {
        self.drag > 0.0 && self.velocity.length_squared() > 0.0
    }

    /// The wind velocity at position `x` (m) and time `t` (s).
    pub fn at(&self, x: Vec3, t: f32) -> Vec3 {
        let speed = self.velocity.length();
        if speed == 0.0 {
            return Vec3::ZERO;
        }
        let dir = self.velocity / speed;
        let phase = std::f32::consts::TAU
            * (t / self.gust_period.max(1e-3) - x.dot(dir) / self.gust_wavelength.max(1e-3));
        // A second, slower and sideways component breaks the symmetry so a flag flutters.
        let side = dir.cross(Vec3::Y).normalize_or_zero();
        let gust = 1.0 + self.gust_amplitude * phase.sin();
        self.velocity * gust + side * (0.3 * self.gust_amplitude * speed * (0.37 * phase).sin())
    }
}

/// World-level simulation parameters, read every frame.
#[derive(Clone, Debug, PartialEq)]
pub struct SimParams {
    /// Gravity, m/s². Default (0, −9.8, 0) (Y up).
    pub gravity: Vec3,
    /// Rendered frame duration, s. Range 1/240 … 1/10. Default 1/60.
    pub frame_dt: f32,
    /// Substeps per frame (fixed). Range 1 … 1000. Default 16.
    pub substeps: u32,
    /// Time integrator. Default [`Integrator::Verlet`].
    pub integrator: Integrator,
    /// Verlet damping fraction d, per substep, dimensionless. Range 0 … 0.1. Default 0.002
    /// (the homework's 0.2 %). Ignored by symplectic Euler.
    pub verlet_damping: f32,
    /// Provot's deformation limit τ_c: structural and shear springs are not allowed to stretch
    /// past (1 + τ_c) of their rest length. Dimensionless, range 0.01 … 1, or `None` to disable.
    /// Default `Some(0.1)` (Provot 1995's 10 %).
    pub provot_limit: Option<f32>,
    /// Gauss–Seidel passes of the deformation constraint per substep (and per contact round),
    /// at least. Range 0 … 50. Default 1.
    pub provot_iterations: u32,
    /// More passes, up to this many in all, while the last pass still found a spring past the
    /// limit by more than `provot_tolerance` (a pass that moves nothing always ends them).
    /// Range 0 … 50; below `provot_iterations` it means exactly `provot_iterations`. Default 0.
    /// Calm cloth hanging at the limit stops at the minimum; a limb whipping cloth gets more
    /// passes where a fixed count would leave springs past the limit (the dressed character's
    /// kicks at the default garment resolution, see [`crate::scene::SceneConfig`]).
    pub provot_max_iterations: u32,
    /// How far past the limit, as a fraction of the limit length, a spring may still be when
    /// the extra passes stop (see `provot_max_iterations`). Range 0 … 0.1. Default 0.01.
    pub provot_tolerance: f32,
    /// Long-range attachments (Kim, Chentanez & Müller-Fischer 2012, see
    /// [`crate::cloth::model::Tethers`]): every free particle a pin reaches through the cloth is
    /// kept within `(1 + slack)` times its shortest rest path to the nearest pin, before each
    /// `constrain`. `None`: off. Range 0 … 1. Default `None`; the dressed character uses
    /// `Some(0.05)` (the paper's are inextensible, 0; see [`crate::scene::SceneConfig`] for why
    /// not here), which takes the load a hanging garment puts on its top rows off Provot's
    /// passes: a chain of springs at the limit needs a Gauss–Seidel pass per spring to pull its
    /// lower end back, a tether one step.
    pub tether_slack: Option<f32>,
    /// Extra `constrain` → `collide` rounds after each substep's `collide`, count. Range 0 … 8.
    /// Default 0 (the engine's plain stage order, which the `drop` benchmark is defined with);
    /// the dressed character ([`crate::scene::SceneConfig`]) uses 3, which keeps cloth draped
    /// over a fast limb within Provot's limit — see `cloth::step`'s `contact_rounds`. A round
    /// re-projects only the particles the limit moved, without friction, so wet cloth gets them
    /// too.
    pub contact_rounds: u32,
    /// Self- and garment–garment collision on/off. Default false.
    pub self_collision: bool,
    /// Friction between two cloth particles in contact: fraction of their relative tangential
    /// displacement removed per substep. Dimensionless, range 0 … 1. Default 0.1.
    pub self_friction: f32,
    /// Speed limit, m/s: no particle moves farther than this times Δt in one substep. A safety
    /// net against instabilities; never reached by a sane scene. Range > 0. Default 50.
    pub max_speed: f32,
    /// Safety factor on the explicit stability bound Δt² ω²_max + 2 Δt γ_max < 4 used to clamp
    /// springs that are too stiff for the substep (1 = exactly at the bound; the bound's
    /// eigenvalues are power-iteration estimates at rest, so keep a margin). Range 0.1 … 1.
    /// Default 0.9 (the benchmark scene sits at 0.82 of the bound at N = 32 and is not
    /// clamped).
    pub stability_safety: f32,
    /// Extra distance, m, beyond a particle's thickness within which the collision query still
    /// records a contact (gap and normal) without pushing. The wet stage sets it to its h_max.
    /// Range 0 … 0.05. Default 0.
    pub contact_margin: f32,
    /// Skin of the self-collision neighbour lists, as a multiple of the largest particle
    /// thickness. The lists hold every pair within the contact distance plus this skin and are
    /// rebuilt (from the spatial hash) only when some particle has moved, relative to the
    /// cloth's mean motion, by more than half the skin since the last build (the Verlet-list
    /// rule of molecular dynamics), so no contact can be missed. Larger: longer lists, fewer
    /// rebuilds. Range 0.1 … 4. Default 2.9: the list radius (2 + 2.9) t then sits just below a
    /// ring of rest neighbours in both of the engine's cases, so the skin is as large as it can
    /// be without lengthening the lists of flat cloth: the `drop` grid (t = 0.4 h) gets 1.96 h,
    /// under its 2 h ring (8 neighbours, as with 1.6 h), and the garments (t = 3 mm at 15 mm
    /// spacing) 14.7 mm, under their spacing. Measured on `drop` N = 100: 592 rebuilds in 7,680
    /// substeps against 849 with the old default 2 (529 with the box-centre drift of
    /// `cloth::step`'s rebuild test); on the dressed roundhouse kick 1,309 in 1,920 against
    /// 1,554: there limbs move garments apart faster than any global skin allows (a per-particle
    /// rebuild test would be needed).
    pub self_skin: f32,
    /// Wind field. Default: none.
    pub wind: Wind,
    /// Wet cloth: adhesion model and constants (PHYSICS.md §5). They act only on particles
    /// holding water (`ClothState::wet`). Default: [`WetParams::default`] (per-vertex).
    pub wet: WetParams,
}

impl Default for SimParams {
    fn default() -> Self {
        Self {
            gravity: Vec3::new(0.0, -9.8, 0.0),
            frame_dt: 1.0 / 60.0,
            substeps: 16,
            integrator: Integrator::Verlet,
            verlet_damping: 0.002,
            provot_limit: Some(0.1),
            provot_iterations: 1,
            provot_max_iterations: 0,
            provot_tolerance: 0.01,
            tether_slack: None,
            contact_rounds: 0,
            self_collision: false,
            self_friction: 0.1,
            max_speed: 50.0,
            stability_safety: 0.9,
            contact_margin: 0.0,
            self_skin: 2.9,
            wind: Wind::default(),
            wet: WetParams::default(),
        }
    }
}

impl SimParams {
    /// Substep length Δt, s.
    pub fn dt(&self) -> f32 {
        self.frame_dt / self.substeps.max(1) as f32
    }

    /// The most Provot passes a `constrain` runs (see `provot_max_iterations`).
    pub fn max_provot_passes(&self) -> u32 {
        self.provot_iterations.max(self.provot_max_iterations)
    }
}
