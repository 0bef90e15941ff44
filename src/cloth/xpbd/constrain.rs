//! Stage `constrain` of the XPBD model (PHYSICS.md §7): the model's springs as compliant distance
//! constraints, projected by Gauss–Seidel in colour order, then the tethers.
//!
//! Every spring of [`ClothModel::springs`] (structural, shear, bending) becomes a constraint
//! `C = |x_j − x_i| − l0` with compliance `α = 1 / k` (k the spring's stiffness in N/m, from the
//! same fabric parameters as the mass-spring model) and the XPBD update of Macklin, Müller &
//! Chentanez 2016 (their Eq. 18, with the damping of their Eq. 26):
//!
//! ```text
//! α̃ = α / Δt²    γ = α̃ β̃ / Δt = α k_d / Δt   (β̃ = Δt² k_d: the spring's own dashpot)
//! Δλ = (−C − α̃ λ − γ ∇C·(x − x_prev)) / ((1 + γ) Σ w |∇C|² + α̃)
//! Δx_i = w_i ∇_i C Δλ,   λ ← λ + Δλ
//! ```
//!
//! with λ reset to 0 at the start of each substep. The damping term uses the dashpot the
//! mass-spring model puts on the same spring (`k_d = 2 ζ √(k m)`, `GarmentParams::damping_ratio`),
//! so it too acts only along the spring.
//!
//! Gauss–Seidel in parallel: the constraints are coloured once (greedy, in spring order) so that
//! no two constraints of one colour share a particle. The colours run one after the other; the
//! constraints of one colour touch disjoint particles and run in parallel in any split, so the
//! result does not depend on the thread count and is bit-identical from run to run.

use std::ops::Range;

use rayon::prelude::*;

use crate::cloth::constraints;
use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::state::ClothState;
use crate::cloth::workspace::ClothWorkspace;
use crate::math::Vec3A;

/// Constraints per parallel task within a colour (smaller colours run on one thread: a
/// fork–join costs more than a few thousand constraint projections).
const PAR_BLOCK: usize = 2048;

/// The distance constraints in colour order, with their multipliers.
#[derive(Clone, Debug, Default)]
pub struct Coloured {
    a: Vec<u32>,
    b: Vec<u32>,
    rest: Vec<f32>,
    /// Compliance α = 1/k, m/N.
    alpha: Vec<f32>,
    /// The spring's dashpot k_d, N·s/m.
    kd: Vec<f32>,
    /// Lagrange multipliers of the current substep.
    lambda: Vec<f32>,
    /// The constraints of each colour.
    colours: Vec<Range<usize>>,
    /// Particle count the colouring was made for.
    particles: usize,
    /// Whether the last colour is the overflow colour, whose constraints may share particles.
    overflow: bool,
}

impl Coloured {
    /// Colours the springs of `model` greedily in their order: each takes the lowest colour
    /// neither of its particles has yet. Springs with k ≤ 0 (no stiffness) are left out. Colours
    /// beyond 64 (a particle with more than 32 springs of one colour class, which no garment of
    /// the engine has) share the last colour, which then runs on one thread.
    pub fn new(model: &ClothModel) -> Self {
        let s = &model.springs;
        let n = model.len();
        const SERIAL: u8 = 64;
        let mut used = vec![0u64; n];
        let mut colour = vec![0u8; s.len()];
        let mut count = [0usize; SERIAL as usize + 1];
        for e in 0..s.len() {
            if !(s.k[e] > 0.0) {
                colour[e] = u8::MAX;
                continue;
            }
            let (i, j) = (s.a[e] as usize, s.b[e] as usize);
            let free = !(used[i] | used[j]);
            let c = if free == 0 {
                SERIAL
            } else {
                free.trailing_zeros() as u8
            };
            if c < SERIAL {
                used[i] |= 1 << c;
                used[j] |= 1 << c;
            }
            colour[e] = c;
            count[c as usize] += 1;
        }
        let mut start = [0usize; SERIAL as usize + 2];
        for c in 0..=SERIAL as usize {
            start[c + 1] = start[c] + count[c];
        }
        let total = start[SERIAL as usize + 1];
        let mut out = Coloured {
            a: vec![0; total],
            b: vec![0; total],
            rest: vec![0.0; total],
            alpha: vec![0.0; total],
            kd: vec![0.0; total],
            lambda: vec![0.0; total],
            colours: Vec::new(),
            particles: n,
            overflow: count[SERIAL as usize] > 0,
        };
        let mut fill = start;
        for e in 0..s.len() {
            let c = colour[e];
            if c == u8::MAX {
                continue;
            }
            let k = &mut fill[c as usize];
            out.a[*k] = s.a[e];
            out.b[*k] = s.b[e];
            out.rest[*k] = s.rest[e];
            out.alpha[*k] = 1.0 / s.k[e];
            out.kd[*k] = s.kd[e];
            *k += 1;
        }
        out.colours = (0..=SERIAL as usize)
            .map(|c| start[c]..start[c + 1])
            .filter(|r| !r.is_empty())
            .collect();
        out
    }

    /// Number of constraints.
    pub fn len(&self) -> usize {
        self.a.len()
    }

    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// Number of colours (sequential Gauss–Seidel phases per iteration).
    pub fn colours(&self) -> usize {
        self.colours.len()
    }
}

/// The particle positions, shared by the tasks of one colour. Sound because a colour's
/// constraints touch disjoint particles (see [`Coloured::new`]) and every task handles its own
/// constraints only.
#[derive(Clone, Copy)]
struct SharedX(*mut Vec3A);
unsafe impl Send for SharedX {}
unsafe impl Sync for SharedX {}

/// Stage `constrain`: `SimParams::xpbd_iterations` Gauss–Seidel passes over the distance
/// constraints (λ reset first), then the tethers (`SimParams::tether_slack`) as unilateral
/// constraints of zero compliance: a free particle farther from its anchor pin than
/// `(1 + slack)` times the rest path between them is put back on that sphere (the pin, of
/// infinite mass, does not move; Kim, Chentanez & Müller-Fischer 2012).
pub fn constrain(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    dt: f32,
) {
    if ws.xpbd.as_ref().is_none_or(|c| c.particles != model.len()) {
        ws.xpbd = Some(Box::new(Coloured::new(model)));
    }
    let c = ws.xpbd.as_mut().expect("coloured above");
    c.lambda.fill(0.0);
    for _ in 0..params.xpbd_iterations.clamp(1, 16) {
        project(c, &mut state.x, &state.x_prev, &state.inv_mass, dt);
    }
    if let Some(slack) = params.tether_slack {
        ws.provot.invalidate();
        constraints::tethers(
            model,
            slack,
            &mut state.x,
            &mut ws.provot_moved,
            &mut ws.provot,
        );
    }
}

/// One Gauss–Seidel pass over every constraint, colour by colour.
fn project(c: &mut Coloured, x: &mut [Vec3A], x_prev: &[Vec3A], w: &[f32], dt: f32) {
    assert!(x.len() >= c.particles && w.len() >= c.particles);
    let inv_dt2 = 1.0 / (dt * dt);
    let inv_dt = 1.0 / dt;
    let shared = SharedX(x.as_mut_ptr());
    let Coloured {
        a,
        b,
        rest,
        alpha,
        kd,
        lambda,
        colours,
        overflow,
        ..
    } = c;
    for (ci, range) in colours.iter().enumerate() {
        let last = ci + 1 == colours.len();
        let run = |from: usize, lam: &mut [f32]| {
            let x = shared;
            for (k, l) in lam.iter_mut().enumerate() {
                let e = from + k;
                let (i, j) = (a[e] as usize, b[e] as usize);
                let (wi, wj) = (w[i], w[j]);
                let wsum = wi + wj;
                if wsum == 0.0 {
                    continue;
                }
                // SAFETY: i, j < c.particles ≤ x.len() (asserted above; they index the model's
                // particles), and no other task of this colour touches them.
                let (xi, xj) = unsafe { (*x.0.add(i), *x.0.add(j)) };
                let d = xj - xi;
                let len = d.length();
                if !(len > 1e-12) {
                    continue;
                }
                let n = d / len;
                let at = alpha[e] * inv_dt2;
                let gamma = alpha[e] * kd[e] * inv_dt;
                let rel = n.dot((xj - x_prev[j]) - (xi - x_prev[i]));
                let dl = (-(len - rest[e]) - at * *l - gamma * rel) / ((1.0 + gamma) * wsum + at);
                if !dl.is_finite() {
                    continue;
                }
                *l += dl;
                unsafe {
                    *x.0.add(i) = xi - n * (wi * dl);
                    *x.0.add(j) = xj + n * (wj * dl);
                }
            }
        };
        let lam = &mut lambda[range.clone()];
        // The overflow colour (only ever the last) may share particles: one thread, in order.
        if lam.len() <= PAR_BLOCK || (last && *overflow) {
            run(range.start, lam);
        } else {
            lam.par_chunks_mut(PAR_BLOCK)
                .enumerate()
                .for_each(|(t, chunk)| run(range.start + t * PAR_BLOCK, chunk));
        }
    }
}
