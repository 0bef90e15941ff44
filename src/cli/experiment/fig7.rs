//! Fig 7a (one cloth hanging on a ball, dry and wet; also on a ten times softer fabric) and
//! Fig 7b (two balls under the cloth turn about the vertical; how wrinkled the cloth ends).

use serde::Serialize;

use super::setup::{paper_fabric, paper_params, square, Sim, PAPER_SPACING};
use crate::cloth::build;
use crate::cloth::collide::{Collider, Shape};
use crate::cloth::params::ClothModelKind;
use crate::cloth::wet::{self, AdhesionMode, Fabric};
use crate::math::{Vec3, Vec3A};

/// Fig 7a: outcome of one cloth hanging on a ball.
#[derive(Clone, Debug, Serialize)]
pub struct Fig7Run {
    pub mass_g: f64,
    /// Lowest point of the cloth, m (the ball's centre is at y = 1).
    pub lowest_y: f32,
    /// Share of the particles holding a bridge to the ball at the end.
    pub adhering: f32,
    pub finite: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Fig7 {
    pub n: u32,
    /// Ball radius, m.
    pub ball_radius: f32,
    pub dry: Fig7Run,
    /// Saturated, adhesion off: the effect of the water's weight alone.
    pub wet_mass_only: Fig7Run,
    /// Saturated, per-vertex adhesion at scale 1.5 (the paper's set-up).
    pub wet: Fig7Run,
    /// N × 0.1 g × (1 + B), g.
    pub expected_wet_mass_g: f64,
    /// The same dry/wet pair on a fabric ten times softer (springs 4/4/0.4 N/m), where the
    /// outcome reverses: the soft cloth wraps the ball, every vertex that lands within h_max
    /// is held by its bridge, and the bridge's pull adds μ·F_adh of friction (PHYSICS.md §5.6;
    /// at the cap that is 10× the vertex's weight), so the wet cloth cannot slide down the
    /// ball as the dry one does and its hem ends higher. `None` unless asked for.
    pub soft_fabric: Option<(Fig7Run, Fig7Run)>,
}

/// Fig 7a: an `n × n` cloth (the paper's fabric: 0.1 g per vertex at 1 cm, the engine's
/// default springs) dropped on a ball of radius 0.2 × its width (no floor), dry and saturated
/// cotton (adhesion scale 1.5); after `seconds` the wet one hangs lower: the water's weight
/// stretches the skirt that hangs from the ball. `soft` adds the soft-fabric pair (see
/// [`Fig7::soft_fabric`]). Returns the dry and wet sims for pictures.
pub fn fig7(n: u32, seconds: f32, soft: bool, model: ClothModelKind) -> (Fig7, Sim, Sim) {
    let w = (n - 1) as f32 * PAPER_SPACING;
    let r = 0.2 * w;
    let ball = Vec3::new(0.0, 1.0, 0.0);
    let make = |wet: bool, adhesion: AdhesionMode, soft: bool| {
        let mut fabric = paper_fabric(n, n, PAPER_SPACING);
        if soft {
            fabric.k_structural = 4.0;
            fabric.k_shear = 4.0;
            fabric.k_bend = 0.4;
        }
        let g = build::grid("cloth", &square(n, ball + Vec3::Y * (r + 0.02)), &fabric)
            .expect("valid grid");
        let mut s = Sim::new(
            g,
            vec![Collider::fixed(Shape::sphere(ball, r))],
            paper_params(adhesion, 1.5, false, model),
        );
        if wet {
            s.soak(&Fabric::COTTON);
        }
        let k = s.seconds(seconds);
        s.frames(k);
        s
    };
    let run = |s: &Sim| Fig7Run {
        mass_g: wet::total_mass(&s.state) * 1e3,
        lowest_y: s.min_y(),
        adhering: s.ws.wet.adhering as f32 / s.model.len() as f32,
        finite: s.state.is_finite(),
    };
    let d = make(false, AdhesionMode::PerVertex, false);
    let heavy = make(true, AdhesionMode::Off, false);
    let wt = make(true, AdhesionMode::PerVertex, false);
    let soft_fabric = soft.then(|| {
        (
            run(&make(false, AdhesionMode::PerVertex, true)),
            run(&make(true, AdhesionMode::PerVertex, true)),
        )
    });
    let out = Fig7 {
        n,
        ball_radius: r,
        dry: run(&d),
        wet_mass_only: run(&heavy),
        wet: run(&wt),
        expected_wet_mass_g: (n * n) as f64 * 0.1 * (1.0 + Fabric::COTTON.saturation as f64),
        soft_fabric,
    };
    (out, d, wt)
}

/// One cloth of Fig 7b.
#[derive(Clone, Debug, Serialize)]
pub struct Fig7bRun {
    /// Wrinkle measure: mean of 1 − n_a·n_b over the structural and shear springs (a, b),
    /// with n the area-weighted vertex normals (0 for a flat cloth).
    pub wrinkle_before: f32,
    pub wrinkle_after: f32,
    /// How far the cloth turned with the balls, degrees: the change of each particle's angle
    /// about the turning axis, averaged with weights ρ² (ρ its distance from the axis, so the
    /// ill-defined angles of particles near the axis count little).
    pub dragged_deg: f32,
    pub finite: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Fig7b {
    pub n: u32,
    /// How far the balls turned, degrees.
    pub turned_deg: f32,
    pub dry: Fig7bRun,
    pub wet: Fig7bRun,
}

/// Mean 1 − n_a·n_b over the structural and shear springs: how far neighbouring normals
/// disagree (0 for a flat or smoothly curved cloth at fine spacing).
fn wrinkle_measure(s: &Sim) -> f32 {
    let x = &s.state.x;
    let mut nrm = vec![Vec3A::ZERO; x.len()];
    for t in &s.model.triangles {
        let [a, b, c] = t.map(|i| x[i as usize]);
        let n = (b - a).cross(c - a);
        for &i in t {
            nrm[i as usize] += n;
        }
    }
    for n in &mut nrm {
        *n = n.normalize_or_zero();
    }
    let l = &s.model.limits;
    let sum: f32 = (0..l.len())
        .map(|e| 1.0 - nrm[l.a[e] as usize].dot(nrm[l.b[e] as usize]))
        .sum();
    sum / l.len().max(1) as f32
}

/// Fig 7b: an `n × n` cloth dropped on two balls side by side (radius 0.15 × its width,
/// centres ±0.2 × its width apart from the vertical axis), settled for `settle` seconds;
/// then the balls revolve about the vertical axis at `turn_rate` rad/s for `turn` seconds
/// and stop, and the cloth has 1 s more. Dry versus saturated cotton (scale 1.5, the
/// paper's). Both cloths turn with the balls by friction and the wet one ends more wrinkled:
/// its bridges hold the folds where they form, when it lands and while it turns. Measured
/// (wrinkle measure before → after the turn): n = 24, dry 0.062 → 0.060, wet 0.084 → 0.108;
/// n = 50, dry 0.048 → 0.065, wet 0.075 → 0.088. So at the paper's resolution the turn
/// itself adds relatively more wrinkles to the dry cloth; the wet one's lead comes from
/// keeping the folds it landed with.
pub fn fig7b(
    n: u32,
    settle: f32,
    turn: f32,
    turn_rate: f32,
    model: ClothModelKind,
) -> (Fig7b, Sim, Sim) {
    let w = (n - 1) as f32 * PAPER_SPACING;
    let (r, d) = (0.15 * w, 0.2 * w);
    let y = 1.0;
    let balls = |angle: f32| {
        let (sn, cs) = angle.sin_cos();
        let off = Vec3::new(d * cs, 0.0, -d * sn);
        [
            Shape::sphere(Vec3::new(0.0, y, 0.0) + off, r),
            Shape::sphere(Vec3::new(0.0, y, 0.0) - off, r),
        ]
    };
    let angle_of = |p: Vec3A| (-p.z).atan2(p.x);
    let run = |wet_on: bool| {
        let g = build::grid(
            "cloth",
            &square(n, Vec3::new(0.0, y + r + 0.02, 0.0)),
            &paper_fabric(n, n, PAPER_SPACING),
        )
        .expect("valid grid");
        let mut s = Sim::new(
            g,
            balls(0.0).iter().map(|&b| Collider::fixed(b)).collect(),
            paper_params(AdhesionMode::PerVertex, 1.5, false, model),
        );
        if wet_on {
            s.soak(&Fabric::COTTON);
        }
        s.frames(s.seconds(settle));
        let before = wrinkle_measure(&s);
        let x0 = s.state.x.clone();
        let frames = s.seconds(turn);
        let step = turn_rate * s.params.frame_dt;
        for f in 0..frames {
            let shapes = balls(step * (f + 1) as f32);
            for (c, b) in s.colliders.iter_mut().zip(shapes) {
                c.move_to(b);
            }
            s.frames(1);
        }
        // The balls stop: both ends of the last frame at the same place.
        for c in &mut s.colliders {
            c.move_to(c.cur);
        }
        s.frames(s.seconds(1.0));
        let (mut dragged, mut weight) = (0.0f32, 0.0f32);
        for (p, q) in s.state.x.iter().zip(&x0) {
            let rho2 = q.x * q.x + q.z * q.z;
            let mut da = angle_of(*p) - angle_of(*q);
            // Unwrap to (−π, π]: no particle turns half a revolution in this set-up.
            if da > std::f32::consts::PI {
                da -= std::f32::consts::TAU;
            } else if da <= -std::f32::consts::PI {
                da += std::f32::consts::TAU;
            }
            dragged += rho2 * da;
            weight += rho2;
        }
        let run = Fig7bRun {
            wrinkle_before: before,
            wrinkle_after: wrinkle_measure(&s),
            dragged_deg: (dragged / weight.max(1e-12)).to_degrees(),
            finite: s.state.is_finite(),
        };
        (run, s)
    };
    let ((dry, ds), (wet_run, ws)) = (run(false), run(true));
    (
        Fig7b {
            n,
            turned_deg: (turn_rate * turn).to_degrees(),
            dry,
            wet: wet_run,
        },
        ds,
        ws,
    )
}
