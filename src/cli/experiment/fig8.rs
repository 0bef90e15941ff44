//! Fig 8: the centre of a cloth lying on the floor pulled up; the wet centre rises less.

use serde::Serialize;

use super::setup::{paper_fabric, paper_params, square, Sim, PAPER_SPACING};
use crate::cloth::build;
use crate::cloth::collide::{Collider, Shape};
use crate::cloth::params::ClothModelKind;
use crate::cloth::wet::{AdhesionMode, Fabric};
use crate::math::{Vec3, Vec3A};

#[derive(Clone, Debug, Serialize)]
pub struct Fig8 {
    pub n: u32,
    /// Upward force on the centre patch, N.
    pub force: f32,
    pub dry_rise: f32,
    pub wet_rise: f32,
    pub finite: bool,
}

/// Fig 8: an `n × n` cloth lying on the floor; the same upward force `force` (N) on its centre
/// 3×3 patch for `push` seconds (applied as the equivalent velocity change each frame); the
/// largest rise of the centre over `seconds`. Dry versus saturated cotton (scale 1).
pub fn fig8(
    n: u32,
    force: f32,
    push: f32,
    seconds: f32,
    model: ClothModelKind,
) -> (Fig8, Sim, Sim) {
    let run = |wet_on: bool| {
        let p = paper_fabric(n, n, PAPER_SPACING);
        let g = build::grid("cloth", &square(n, Vec3::Y * p.thickness), &p).expect("valid grid");
        let mut s = Sim::new(
            g,
            vec![Collider::fixed(Shape::plane(Vec3::ZERO, Vec3::Y))],
            paper_params(AdhesionMode::PerVertex, 1.0, false, model),
        );
        if wet_on {
            s.soak(&Fabric::COTTON);
        }
        // Let the wet cloth form its bridges first.
        s.frames(s.seconds(0.2));
        let c = n / 2;
        let patch: Vec<usize> = (c - 1..=c + 1)
            .flat_map(|r| (c - 1..=c + 1).map(move |q| (r * n + q) as usize))
            .collect();
        let y0 = s.state.x[(c * n + c) as usize].y;
        let mut rise = 0.0f32;
        let (push_frames, total) = (s.seconds(push), s.seconds(seconds));
        let dt = s.params.dt();
        for f in 0..total {
            if f < push_frames {
                for &i in &patch {
                    let dv = force / patch.len() as f32 / s.state.mass[i] * s.params.frame_dt;
                    let dv = Vec3A::Y * dv;
                    s.state.v[i] += dv;
                    s.state.x_prev[i] -= dv * dt;
                }
            }
            s.frames(1);
            rise = rise.max(s.state.x[(c * n + c) as usize].y - y0);
        }
        (rise, s)
    };
    let ((dry_rise, d), (wet_rise, w)) = (run(false), run(true));
    let finite = d.state.is_finite() && w.state.is_finite();
    (
        Fig8 {
            n,
            force,
            dry_rise,
            wet_rise,
            finite,
        },
        d,
        w,
    )
}
