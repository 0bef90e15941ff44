//! Fig 9: a saturated cloth folded onto itself on the floor, its outer edge lifted; with
//! self-adhesion the folded layers stay together.

use serde::Serialize;

use super::setup::{paper_fabric, paper_params, Sim, PAPER_SPACING};
use crate::cloth::build::{self, GridSpec, Orientation};
use crate::cloth::collide::{Collider, Shape};
use crate::cloth::params::ClothModelKind;
use crate::cloth::wet::{AdhesionMode, Fabric};
use crate::math::{Vec3, Vec3A};

#[derive(Clone, Debug, Serialize)]
pub struct Fig9 {
    pub nx: u32,
    pub ny: u32,
    /// Fraction of folded vertex pairs in contact right after folding.
    pub contact_start: f32,
    pub contact_without: f32,
    pub contact_with: f32,
    pub finite: bool,
}

/// Fig 9: an `nx × ny` saturated cotton cloth (the paper's 800 points: 40 × 20) lies folded onto
/// itself on the floor; its outer edge is lifted 0.35 m in 0.7 s and held, so the folded layer
/// hangs upside down on the other. After `seconds`: the fraction of the folded vertex pairs
/// (column c and its mirror nx − 1 − c) still within 2·thickness + h_max + 1 mm, with and
/// without self-adhesion.
pub fn fig9(nx: u32, ny: u32, seconds: f32, model: ClothModelKind) -> (Fig9, Sim, Sim) {
    let half = nx / 2;
    let h = PAPER_SPACING;
    let p = paper_fabric(nx, ny, h);
    let t = p.thickness;
    let mirror = |c: u32| nx - 1 - c;
    let pairs: Vec<(usize, usize)> = (0..ny)
        .flat_map(|r| {
            (0..half).map(move |c| ((r * nx + c) as usize, (r * nx + mirror(c)) as usize))
        })
        .collect();
    let reach = 2.0 * t + 0.001 + 0.001;
    let share = |s: &Sim| {
        pairs
            .iter()
            .filter(|&&(a, b)| s.state.x[a].distance(s.state.x[b]) <= reach)
            .count() as f32
            / pairs.len() as f32
    };
    let mut start = 0.0;
    let mut run = |self_adhesion: bool| {
        let spec = GridSpec {
            nx,
            ny,
            width: (nx - 1) as f32 * h,
            height: (ny - 1) as f32 * h,
            orientation: Orientation::Horizontal,
            origin: Vec3::new(0.0, t, 0.0),
            pinned: (0..ny).map(|r| (0, r)).collect(),
            jitter: 0.0,
        };
        let g = build::grid("cloth", &spec, &p).expect("valid grid");
        let mut params = paper_params(AdhesionMode::PerVertex, 1.0, true, model);
        params.wet.self_adhesion = self_adhesion;
        let mut s = Sim::new(
            g,
            vec![Collider::fixed(Shape::plane(Vec3::ZERO, Vec3::Y))],
            params,
        );
        // Fold: the far half goes on top of the near half, mirrored, one contact distance up.
        for r in 0..ny {
            for c in half..nx {
                let i = (r * nx + c) as usize;
                let below = s.state.x[(r * nx + mirror(c)) as usize];
                let x = below + Vec3A::Y * (2.0 * t);
                s.state.x[i] = x;
                s.state.x_prev[i] = x;
            }
        }
        s.soak(&Fabric::COTTON);
        start = share(&s);
        s.frames(s.seconds(0.2));
        let pins0: Vec<Vec3> = s.state.pin_target.iter().map(|&p| Vec3::from(p)).collect();
        let lift = s.seconds(0.7).max(1);
        for f in 0..s.seconds(seconds) {
            let k = ((f + 1) as f32 / lift as f32).min(1.0);
            let targets: Vec<Vec3> = pins0.iter().map(|p| *p + Vec3::Y * (0.35 * k)).collect();
            s.state.set_pin_targets(&targets);
            s.frames(1);
        }
        (share(&s), s)
    };
    let (without, d) = run(false);
    let (with, w) = run(true);
    let finite = d.state.is_finite() && w.state.is_finite();
    (
        Fig9 {
            nx,
            ny,
            contact_start: start,
            contact_without: without,
            contact_with: with,
            finite,
        },
        d,
        w,
    )
}
