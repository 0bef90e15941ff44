//! Every tunable of the cloth engine, with its unit, range and default.
//!
//! Two levels: [`GarmentParams`] is the fabric of one garment (stiffness, density, damping,
//! thickness, friction) and is baked into the [`ClothModel`](super::ClothModel) when the garment is
//! built; [`SimParams`] is the world (gravity, wind, substeps, integrator, constraint and collision
//! switches) and is read at every frame. [`WetParams`] (part of [`SimParams`]), [`Fabric`] and
//! [`Region`] are the wet model's (PHYSICS.md §5; the model itself is `cloth/wet.rs`).

use crate::math::{Vec3, Vec3A};

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

/// The cloth model a world is stepped with (PHYSICS.md §1 and §7). Both share the garments,
/// pins, colliders, friction, self-collision and wet forces; only the internal forces and the
/// integration differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClothModelKind {
    /// Masses and springs with an explicit integrator and Provot's deformation limit (§1), the
    /// seeds' model and the reference (`cloth::mass_spring`).
    #[default]
    MassSpring,
    /// Position-based dynamics with compliant constraints in small steps (XPBD, Macklin, Müller
    /// & Chentanez 2016; Macklin et al. 2019), `cloth::xpbd`.
    Xpbd,
}

impl ClothModelKind {
    /// Both models, in the order reports list them.
    pub const ALL: [ClothModelKind; 2] = [Self::MassSpring, Self::Xpbd];

    /// The name scene files and `--model` use.
    pub fn name(self) -> &'static str {
        match self {
            Self::MassSpring => "mass_spring",
            Self::Xpbd => "xpbd",
        }
    }
}

impl std::fmt::Display for ClothModelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ClothModelKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "mass_spring" | "massspring" | "springs" => Ok(Self::MassSpring),
            "xpbd" => Ok(Self::Xpbd),
            _ => Err(format!(
                "unknown cloth model '{s}' (expected mass_spring or xpbd)"
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
    /// Drag against still air when `velocity` is zero: the same force with w = 0, so cloth
    /// moving through the air at rest is slowed along its normal (a light headband tail whipped
    /// by a turning head is not flung like a rope in vacuum). Default false for the engine (a
    /// bare `SimParams`, the cloth benchmarks and the fused substep keep the vacuum); a scene
    /// turns it on ([`crate::scene::SceneConfig`]).
    pub still_air: bool,
    /// Pressure (quadratic) drag coefficient ½ ρ_air C_d, kg/m³: the force per unit area grows
    /// with the square of the normal relative speed, `quadratic · |u_n| u_n` added to the linear
    /// `drag · u_n` (u_n = (w − v)·n). Range 0 … 10. Default 0 for the engine (a bare
    /// `SimParams` keeps the linear law of PHYSICS.md §1); a scene sets 0.72 (ρ_air = 1.2 kg/m³,
    /// C_d ≈ 1.2 for a plate across the flow, Hoerner 1965, "Fluid-Dynamic Drag"): a hem or a
    /// tail whipped at several m/s meets several times the linear law's resistance, as in air.
    pub quadratic: f32,
}

impl Default for Wind {
    fn default() -> Self {
        Self {
            velocity: Vec3::ZERO,
            gust_amplitude: 0.5,
            gust_period: 1.3,
            gust_wavelength: 2.0,
            drag: 0.6,
            still_air: false,
            quadratic: 0.0,
        }
    }
}

impl Wind {
    /// True when the wind does anything (the per-triangle pass is skipped otherwise).
    pub fn is_active(&self) -> bool {
        (self.drag > 0.0 || self.quadratic > 0.0)
            && (self.still_air || self.velocity.length_squared() > 0.0)
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
    /// The cloth model. Default [`ClothModelKind::MassSpring`].
    pub model: ClothModelKind,
    /// Constraint iterations per substep of the XPBD model (Gauss–Seidel passes over every
    /// stretch, shear and bending constraint; the multipliers λ are reset at the start of each
    /// substep). Range 1 … 16. Default 1: small steps (Macklin et al. 2019) spend the budget on
    /// substeps, not iterations. Ignored by the mass-spring model.
    pub xpbd_iterations: u32,
    /// Time integrator of the mass-spring model. Default [`Integrator::Verlet`]. (The XPBD
    /// model always integrates `v ← v + Δt a`, `x ← x + Δt v`, PHYSICS.md §7.)
    pub integrator: Integrator,
    /// Verlet damping fraction d, per substep, dimensionless. Range 0 … 0.1. Default 0.002
    /// (the homework's 0.2 %). Ignored by symplectic Euler. The XPBD model applies the same
    /// fraction to its velocity at the end of each substep (`v ← (1 − d) v`).
    pub verlet_damping: f32,
    /// Provot's deformation limit τ_c: structural and shear springs are not allowed to stretch
    /// past (1 + τ_c) of their rest length. Dimensionless, range 0.01 … 1, or `None` to disable.
    /// Default `Some(0.1)` (Provot 1995's 10 %). The XPBD model holds the same limit as a hard
    /// unilateral constraint (zero compliance) in its Gauss–Seidel pass, with
    /// `provot_iterations` … `xpbd_max_limit_passes` passes and `provot_tolerance` as here
    /// (`cloth::xpbd::constrain`).
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
    /// The XPBD model's cap on its strain-limit passes (per `constrain` and per contact round,
    /// as `provot_max_iterations` is the mass-spring model's), or 0 for `provot_max_iterations`
    /// itself. Range 0 … 50. Default 0; the dressed character uses 16 (see
    /// [`crate::scene::SceneConfig`]). Ignored by the mass-spring model.
    pub xpbd_max_limit_passes: u32,
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
    /// over a fast limb within Provot's limit — see `cloth::mass_spring::step`'s `contact_rounds`. A round
    /// re-projects only the particles the limit moved, without friction, so wet cloth gets them
    /// too. The XPBD model runs the same rounds with its strain limit
    /// (`cloth::xpbd::constrain::contact_rounds`).
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
    /// `cloth::stages::self_collision`'s rebuild test); on the dressed roundhouse kick 1,309 in 1,920 against
    /// 1,554: there limbs move garments apart faster than any global skin allows (a per-particle
    /// rebuild test would be needed).
    pub self_skin: f32,
    /// Contact with the skinned body's triangles (`cloth::stages::skin`, beside the proxy
    /// colliders, run before the deformation limit): on how many substeps per frame, evenly
    /// spaced and always including the last one. 0: off. Range 0 … 1000 (more than `substeps`
    /// means every substep). Default 0 (the engine's scenes have no skin; the dressed character,
    /// [`crate::scene::SceneConfig`], builds the surface when it is asked for, and asks for it
    /// on every substep by default: see there). Needs a surface in `ClothWorkspace::skin`.
    pub skin_contact: u32,
    /// Colliders thinner than the cloth's triangles meet the triangles between their particles
    /// (stage `collide`'s face pass, `cloth::stages::faces`), not only the particles. Default
    /// true. The dressed scene turns it off ([`crate::scene::SceneConfig`]: there it lets the
    /// hands catch the open half-skirts; docs/CHECK.md, "Hands that cannot pass between the
    /// cloth's particles").
    pub face_contact: bool,
    /// How deep inside the skin a particle is still pushed out by the skin contact, m: the
    /// closest-point query's reach. Deeper cloth is left to the proxies (deeper than this the
    /// nearest surface is rarely the one the cloth came in through). Range 0 … 0.2. Default
    /// 0.04.
    pub skin_contact_depth: f32,
    /// The most the skin contact moves a particle in one pass, m: a deeper particle comes out
    /// over several passes. A larger jump is a velocity the deformation limit that follows
    /// hands on to the particle's neighbours (`constrain` moves positions, and velocity is the
    /// change of position over the substep): a 1.4 cm push became 13 m/s. Range 0.0001 …
    /// 0.05. Default 0.002: on every substep that is up to 3.2 cm a frame, more than the
    /// proxies leave (they bound the skin to within ~1.5 cm), and the ninja's default-resolution
    /// clips stay within issue 5's 112 % with LBS and DQS (`drape check --rig ninja
    /// --skin-contact 16`: worst 111.5 %). Corpus soldier, all clips, frames with cloth more
    /// than 1 cm inside on 16 substeps: 51 of 702 with 1 mm, 37 with 2 mm, 63 with 4 mm.
    pub skin_contact_step: f32,
    /// The size of the body the cloth meets, as a multiple of a person's
    /// (`crate::garments::BodyAtRest::scale`: 1 for a body 1–2 m tall). The skin contact's reach
    /// and step above are for such a body and scale with it, as the garments do: on
    /// RobotExpressive (2.03) a head twice a person's size swept its headband's tails 56 mm into
    /// its box head in `Jump`, beyond the 3.2 cm a frame the stage moves them, and with both
    /// scaled they reached 23 mm and were out a frame sooner. Set by the dressed scene
    /// ([`crate::scene::Scene`], from the body it dressed); range 0.01 … 100. Default 1.
    pub body_scale: f32,
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
            model: ClothModelKind::MassSpring,
            xpbd_iterations: 1,
            integrator: Integrator::Verlet,
            verlet_damping: 0.002,
            provot_limit: Some(0.1),
            provot_iterations: 1,
            provot_max_iterations: 0,
            xpbd_max_limit_passes: 0,
            provot_tolerance: 0.01,
            tether_slack: None,
            contact_rounds: 0,
            self_collision: false,
            self_friction: 0.1,
            max_speed: 50.0,
            stability_safety: 0.9,
            contact_margin: 0.0,
            self_skin: 2.9,
            skin_contact: 0,
            face_contact: true,
            skin_contact_depth: 0.04,
            skin_contact_step: 0.002,
            body_scale: 1.0,
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

    /// The most strain-limit passes an XPBD `constrain` or contact round runs (see
    /// `xpbd_max_limit_passes`).
    pub fn max_xpbd_limit_passes(&self) -> u32 {
        match self.xpbd_max_limit_passes {
            0 => self.max_provot_passes(),
            n => self.provot_iterations.max(n),
        }
    }
}

// The wet model's tunables (PHYSICS.md §5; Park & Byun 2019). Units are SI.

/// Surface tension of water at 20 °C, N/m (72.75 dyn/cm; the paper prints 75.75 dyn/cm,
/// evidently a transposition, PHYSICS.md §5).
pub const WATER_SURFACE_TENSION: f32 = 0.072_75;

/// A fabric's water uptake: `A(t) = B (1 − e^(−c t))`, t in minutes (Park & Byun 2019,
/// Eqs. 3–4, with the constants of their Table 1 as PHYSICS.md §5 lists them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fabric {
    pub name: &'static str,
    /// B: water held at saturation, g of water per g of dry fabric. Range 0 … 5.
    pub saturation: f32,
    /// c: uptake rate, 1/min. Range > 0.
    pub rate_per_min: f32,
}

impl Fabric {
    /// Cotton: B = 0.84, c = 8.884 /min.
    pub const COTTON: Fabric = Fabric {
        name: "cotton",
        saturation: 0.84,
        rate_per_min: 8.884,
    };
    /// Coarse wool: B = 1.24, c = 4.8936 /min.
    pub const COARSE_WOOL: Fabric = Fabric {
        name: "coarse-wool",
        saturation: 1.24,
        rate_per_min: 4.8936,
    };
    /// High-absorption fabric: B = 2.492, c = 3.3803 /min.
    pub const HIGH_ABSORPTION: Fabric = Fabric {
        name: "high-absorption",
        saturation: 2.492,
        rate_per_min: 3.3803,
    };
    /// The three presets.
    pub const ALL: [Fabric; 3] = [Self::COTTON, Self::COARSE_WOOL, Self::HIGH_ABSORPTION];

    /// A preset by name (`cotton`, `coarse-wool`/`wool`, `high-absorption`/`high`).
    pub fn by_name(name: &str) -> Option<Fabric> {
        match name.to_ascii_lowercase().as_str() {
            "cotton" => Some(Self::COTTON),
            "coarse-wool" | "wool" => Some(Self::COARSE_WOOL),
            "high-absorption" | "high" => Some(Self::HIGH_ABSORPTION),
            _ => None,
        }
    }

    /// Water absorbed after `seconds` of wetting from dry, g/g: `B (1 − e^(−c t/60))`.
    pub fn absorbed_after(&self, seconds: f32) -> f32 {
        self.saturation * (1.0 - (-self.rate_per_min * seconds.max(0.0) / 60.0).exp())
    }

    /// One wetting step of `dt` seconds from `a` g/g: `a + (B − a)(1 − e^(−c Δt/60))`
    /// (PHYSICS.md §5; the per-vertex form of Eq. 4, so every vertex can start wetting at its
    /// own time). Never lowers `a` (a fabric wetter than B stays as wet).
    pub fn absorb(&self, a: f32, dt: f32) -> f32 {
        let room = (self.saturation - a).max(0.0);
        a + room * (1.0 - (-self.rate_per_min * dt.max(0.0) / 60.0).exp())
    }
}

/// Where water reaches the cloth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Region {
    /// Every particle.
    All,
    /// Particles below a water level (y < `level`, m): dipping a hem in a pond.
    Below { level: f32 },
    /// Particles inside a sphere (m): a spray or a bucket's splash.
    Sphere { centre: Vec3, radius: f32 },
}

impl Region {
    pub fn contains(&self, x: Vec3A) -> bool {
        match *self {
            Region::All => true,
            Region::Below { level } => x.y < level,
            Region::Sphere { centre, radius } => {
                x.distance_squared(Vec3A::from(centre)) <= radius * radius
            }
        }
    }
}

/// How adhesion is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AdhesionMode {
    /// No adhesion: wet cloth is only heavier.
    Off,
    /// Park & Byun's per-vertex liquid bridges: each contact vertex gets the force of its own
    /// bridge at its own gap.
    #[default]
    PerVertex,
    /// The earlier area-based model: one bridge force from the total wetted contact area at
    /// the mean gap, spread evenly over every vertex over the contact region (those within
    /// [`WetParams::area_region`] of a collider), for comparison. It knows the contact area,
    /// not each vertex's gap, so a vertex lifted by a wrinkle inside the patch is pulled like
    /// one lying flat: the patch is glued flat (Park & Byun's Fig 5 contrast).
    AreaBased,
}

impl std::str::FromStr for AdhesionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "off" | "none" => Ok(Self::Off),
            "vertex" | "per-vertex" => Ok(Self::PerVertex),
            "area" | "area-based" => Ok(Self::AreaBased),
            _ => Err(format!(
                "unknown adhesion mode '{s}' (expected off, vertex or area)"
            )),
        }
    }
}

/// The wet model's parameters (PHYSICS.md §5). They act only on particles with water in them
/// (`ClothState::wet ≥ min_wetness`); a dry cloth is stepped exactly as without them.
#[derive(Clone, Debug, PartialEq)]
pub struct WetParams {
    /// Adhesion model. Default [`AdhesionMode::PerVertex`].
    pub adhesion: AdhesionMode,
    /// Self-adhesion between non-neighbouring wet particles (one garment or two). It reuses the
    /// self-collision neighbour lists, so it needs `SimParams::self_collision` on. Default true.
    pub self_adhesion: bool,
    /// γ, surface tension of the liquid, N/m. Range 0 … 0.1. Default 0.07275 (water, 20 °C;
    /// the paper's 75.75 dyn/cm read as 72.75).
    pub surface_tension: f32,
    /// r, contact radius of a vertex's bridge, m; `None` = half the local particle spacing
    /// (√(vertex area) / 2), the paper's 0.5 cm at 1 cm spacing. Range 1e-4 … 0.05.
    /// Default `None`.
    pub bridge_radius: Option<f32>,
    /// h_max, gap beyond which a bridge breaks, m (paper: 0.1 cm). Range 1e-5 … 0.01.
    /// Default 0.001.
    pub h_max: f32,
    /// h_min, the fully-adhered bridge height, m: smaller gaps are treated as h_min (PHYSICS.md
    /// §5, **chosen** ~0.05–0.1 mm). Range 1e-6 … h_max. Default 1e-4.
    pub h_min: f32,
    /// θ_min, contact angle at h_min, degrees (paper: ~0.001°, fully adhered); θ rises linearly
    /// to 90° at h_max (the paper's algorithm section). Range 0 … 90. Default 0.001.
    pub theta_min_deg: f32,
    /// s, the scene's adhesion scale (paper: 1 … 3). Dimensionless, range 0 … 10. Default 1.
    pub scale: f32,
    /// k_cap: no vertex's bridge to a collider (and no self-adhesion pair) pulls with more than
    /// k_cap · m · g (PHYSICS.md §5, **chosen**; uncapped a bridge at h_min pulls ~600× the
    /// weight of a 0.18 g vertex). Dimensionless, range 0 … 100. Default 20.
    pub cap: f32,
    /// Water below which a particle holds no bridge, g/g. Range 0 … 1. Default 0.01.
    pub min_wetness: f32,
    /// Area-based mode only: depth of the contact region, m. The area model's force is a
    /// pressure over the wetted contact area (Wang & Xiao's model, which Park & Byun compare
    /// against, treats the patch as one sealed film); it has no per-vertex bridge that could
    /// break, so it acts on every wet vertex over the patch, including those a wrinkle lifts
    /// above h_max: here, every vertex within this distance of a collider. **Chosen**: two
    /// particle spacings of the paper's 1 cm grid, the height of the folds a dropped cloth
    /// makes. Range h_max … 0.05. Default 0.02.
    pub area_region: f32,
}

impl Default for WetParams {
    fn default() -> Self {
        Self {
            adhesion: AdhesionMode::PerVertex,
            self_adhesion: true,
            surface_tension: WATER_SURFACE_TENSION,
            bridge_radius: None,
            h_max: 0.001,
            h_min: 1e-4,
            theta_min_deg: 0.001,
            scale: 1.0,
            cap: 20.0,
            min_wetness: 0.01,
            area_region: 0.02,
        }
    }
}

impl WetParams {
    /// The contact angle θ(h), radians: θ_min at h ≤ h_min, rising linearly to 90° at h_max.
    pub fn contact_angle(&self, h: f32) -> f32 {
        let (lo, hi) = self.heights();
        let t = ((h - lo) / (hi - lo)).clamp(0.0, 1.0);
        let t_min = self.theta_min_deg.clamp(0.0, 90.0).to_radians();
        t_min + t * (std::f32::consts::FRAC_PI_2 - t_min)
    }

    /// (h_min, h_max) made consistent: 0 < h_min < h_max.
    pub(super) fn heights(&self) -> (f32, f32) {
        let hi = self.h_max.max(1e-7);
        let lo = self.h_min.clamp(1e-8, 0.999 * hi);
        (lo, hi)
    }

    /// The liquid-bridge force, N (attraction positive), of a bridge of contact radius `r` (m)
    /// over a gap `h` (m), unscaled and uncapped (Park & Byun 2019 Eq. 5, after Maxwell's
    /// capillary force between two plates):
    ///
    /// `F = π r² γ (1/R1 − 1/R2) + 2π r γ sin θ`, `R1 = h / (cos θ_a + cos θ_b)`, `R2 ≈ r`,
    ///
    /// with h → max(h, h_min), both contact angles θ(h), and zero beyond h_max (the bridge has
    /// broken). Never negative (near h_max the Laplace term turns slightly repulsive but the rim
    /// term outweighs it; the max guards odd parameter choices).
    pub fn bridge_force(&self, r: f32, h: f32) -> f32 {
        let (lo, hi) = self.heights();
        if h > hi || r <= 0.0 {
            return 0.0;
        }
        let h = h.max(lo);
        let theta = self.contact_angle(h);
        let (sin, cos) = theta.sin_cos();
        let g = self.surface_tension.max(0.0);
        let pi = std::f32::consts::PI;
        let laplace = pi * r * r * g * (2.0 * cos / h - 1.0 / r);
        let rim = 2.0 * pi * r * g * sin;
        (laplace + rim).max(0.0)
    }

    /// Extra distance beyond a particle's thickness within which the collision pass must
    /// record contacts for adhesion, m.
    pub fn contact_margin(&self) -> f32 {
        match self.adhesion {
            AdhesionMode::Off => 0.0,
            AdhesionMode::PerVertex => self.heights().1,
            AdhesionMode::AreaBased => self.heights().1.max(self.area_region.min(0.05)),
        }
    }
}
