//! Fig 5: cloth dropped on a ball resting on the floor; the area-based adhesion force pulls the
//! folds of the contact region down where per-vertex bridges leave them standing.

use serde::Serialize;

use super::setup::{paper_fabric, paper_params, square, Sim, PAPER_SPACING};
use crate::cloth::build;
use crate::cloth::collide::{Collider, Shape};
use crate::cloth::params::ClothModelKind;
use crate::cloth::wet::{AdhesionMode, Fabric};
use crate::math::{Vec3, Vec3A};

/// The floor patch of one Fig 5 run.
#[derive(Clone, Debug, Serialize)]
pub struct Fig5Patch {
    /// Particles in the floor patch (outside the ball's footprint, within 3 cm of the floor).
    pub particles: usize,
    /// Wrinkle measure: standard deviation of the patch's heights, m.
    pub height_sd: f32,
    /// Share of the patch lifted off the floor by a wrinkle: higher than thickness + h_max
    /// (no bridge to the floor).
    pub lifted: f32,
    /// Variance of the patch's triangle normals (1 − |mean normal|).
    pub normal_var: f32,
}

#[derive(Clone, Debug, Serialize)]
pub struct Fig5 {
    pub n: u32,
    pub per_vertex: Fig5Patch,
    pub area_based: Fig5Patch,
    /// The dry cloth, for reference (`None` unless asked for).
    pub dry: Option<Fig5Patch>,
    pub finite: bool,
}

/// The floor patch: the particles outside the ball's footprint and within 3 cm of the floor.
fn floor_patch(s: &Sim, ball: Vec3, r: f32) -> Fig5Patch {
    let inside = |x: Vec3A| {
        let d = Vec3::new(x.x - ball.x, 0.0, x.z - ball.z).length();
        d > 1.05 * r && x.y < 0.03
    };
    let ys: Vec<f32> = s
        .state
        .x
        .iter()
        .filter(|&&x| inside(x))
        .map(|x| x.y)
        .collect();
    let n = ys.len().max(1) as f32;
    let mean = ys.iter().sum::<f32>() / n;
    let var = ys.iter().map(|y| (y - mean) * (y - mean)).sum::<f32>() / n;
    let floor_reach = s.model.max_thickness + s.params.wet.h_max;
    let lifted = ys.iter().filter(|&&y| y > floor_reach).count() as f32 / n;
    let mut nsum = Vec3A::ZERO;
    let mut count = 0;
    for t in &s.model.triangles {
        let [a, b, c] = t.map(|i| s.state.x[i as usize]);
        if inside(a) && inside(b) && inside(c) {
            let nn = (b - a).cross(c - a).normalize_or_zero();
            // Orientation-free: fold the normal into the upper half-space.
            nsum += if nn.y < 0.0 { -nn } else { nn };
            count += 1;
        }
    }
    let normal_var = if count > 0 {
        1.0 - (nsum / count as f32).length()
    } else {
        0.0
    };
    Fig5Patch {
        particles: ys.len(),
        height_sd: var.sqrt(),
        lifted,
        normal_var,
    }
}

/// Fig 5: an `n × n` saturated cotton cloth dropped on a ball resting on the floor, adhesion
/// scale 2, per-vertex versus area-based adhesion; the wrinkles of the floor patch after
/// `seconds`. The folds a dropped cloth makes on the floor stand centimetres high, far above
/// h_max = 1 mm: per-vertex bridges cannot reach them and leave them standing, while the
/// area-based force, which acts on every vertex over the contact region
/// ([`crate::cloth::wet::WetParams::area_region`]), pulls them down. `dry` adds the dry
/// cloth's patch. Returns the area-based and per-vertex sims (in that order) for pictures.
pub fn fig5(n: u32, seconds: f32, dry: bool, model: ClothModelKind) -> (Fig5, Sim, Sim) {
    let w = (n - 1) as f32 * PAPER_SPACING;
    let r = 0.2 * w;
    let ball = Vec3::new(0.0, r, 0.0);
    let run = |mode: AdhesionMode, wet_on: bool| {
        let g = build::grid(
            "cloth",
            &square(n, Vec3::new(0.0, 2.0 * r + 0.05, 0.0)),
            &paper_fabric(n, n, PAPER_SPACING),
        )
        .expect("valid grid");
        let mut s = Sim::new(
            g,
            vec![
                Collider::fixed(Shape::sphere(ball, r)),
                Collider::fixed(Shape::plane(Vec3::ZERO, Vec3::Y)),
            ],
            paper_params(mode, 2.0, false, model),
        );
        if wet_on {
            s.soak(&Fabric::COTTON);
        }
        s.frames(s.seconds(seconds));
        s
    };
    let (v, a) = (
        run(AdhesionMode::PerVertex, true),
        run(AdhesionMode::AreaBased, true),
    );
    let dry = dry.then(|| floor_patch(&run(AdhesionMode::Off, false), ball, r));
    (
        Fig5 {
            n,
            per_vertex: floor_patch(&v, ball, r),
            area_based: floor_patch(&a, ball, r),
            dry,
            finite: v.state.is_finite() && a.state.is_finite(),
        },
        a,
        v,
    )
}
