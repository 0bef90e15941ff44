//! Forces: springs with damping projected on the spring, wind per triangle (PHYSICS.md §1), and
//! the stability bound that decides how stiff a spring the explicit step can carry.
//! Gravity is added as an acceleration in the integrator.

use rayon::prelude::*;

use crate::math::{Vec3, Vec3A, Vec4};

use super::model::{ClothModel, EdgeSet};
use super::params::Wind;

/// Adds the force of spring `e` to `fa` (on end a) and its opposite to `fb`:
/// `F_a = k (l − l0) u + k_d ((v_b − v_a)·u) u` with `u = (x_b − x_a)/l` (Provot 1995;
/// Park & Byun 2019 Eq. 1). The dashpot acts along the spring only, so rigid rotation is not
/// damped.
#[inline(always)]
fn spring_force(xa: Vec3A, xb: Vec3A, va: Vec3A, vb: Vec3A, rest: f32, k: f32, kd: f32) -> Vec3A {
    let d = xb - xa;
    let l2 = d.length_squared();
    if l2 < 1e-24 {
        return Vec3A::ZERO;
    }
    let inv_l = l2.sqrt().recip();
    let stretch = l2 * inv_l - rest;
    let rate = (vb - va).dot(d) * inv_l;
    d * (inv_l * (k * stretch + kd * rate))
}

/// Zeroes `f` and accumulates every spring force into it. Chunks of particles run in parallel
/// (each chunk's internal springs write only inside the chunk), then the springs crossing
/// chunks run serially; the summation order is fixed, so the result does not depend on the
/// number of threads.
pub fn springs(
    model: &ClothModel,
    x: &[Vec3A],
    v: &[Vec3A],
    k: &[f32],
    kd: &[f32],
    f: &mut [Vec3A],
) {
    let set: &EdgeSet = &model.springs;
    let cs = model.chunk_size;
    let chunk = |c: usize, fc: &mut [Vec3A]| {
        fc.fill(Vec3A::ZERO);
        let base = c * cs;
        // Edges come sorted by `a`: sum a's forces in a register and store once per particle,
        // instead of a read-modify-write chain through memory on every spring.
        let mut cur = usize::MAX;
        let mut acc = Vec3A::ZERO;
        let mut add = |a: usize, b: usize, fa: Vec3A, fc: &mut [Vec3A]| {
            if a != cur {
                if cur != usize::MAX {
                    fc[cur - base] += acc;
                }
                cur = a;
                acc = Vec3A::ZERO;
            }
            acc += fa;
            fc[b - base] -= fa;
        };
        let range = set.chunk_edges[c].clone();
        let mut e = range.start;
        // Four springs at a time: the square roots and divisions, whose latency dominated the
        // one-spring loop, run as one 4-wide SSE instruction each. The arithmetic is the same
        // expression as `spring_force`, so both paths give bit-identical forces.
        while e + 4 <= range.end {
            let mut d = [Vec3A::ZERO; 4];
            let mut l2 = [0.0f32; 4];
            let mut dvd = [0.0f32; 4];
            for q in 0..4 {
                let (a, b) = (set.a[e + q] as usize, set.b[e + q] as usize);
                d[q] = x[b] - x[a];
                l2[q] = d[q].length_squared();
                dvd[q] = (v[b] - v[a]).dot(d[q]);
            }
            let l2 = Vec4::from_array(l2);
            let degenerate = l2.cmplt(Vec4::splat(1e-24));
            let inv_l = Vec4::select(degenerate, Vec4::ONE, l2).sqrt().recip();
            let stretch = l2 * inv_l - Vec4::from_slice(&set.rest[e..e + 4]);
            let rate = Vec4::from_array(dvd) * inv_l;
            let kk = Vec4::from_slice(&k[e..e + 4]);
            let kdd = Vec4::from_slice(&kd[e..e + 4]);
            let coef = Vec4::select(degenerate, Vec4::ZERO, inv_l * (kk * stretch + kdd * rate));
            let coef = coef.to_array();
            for q in 0..4 {
                add(
                    set.a[e + q] as usize,
                    set.b[e + q] as usize,
                    d[q] * coef[q],
                    fc,
                );
            }
            e += 4;
        }
        for e in e..range.end {
            let (a, b) = (set.a[e] as usize, set.b[e] as usize);
            let fa = spring_force(x[a], x[b], v[a], v[b], set.rest[e], k[e], kd[e]);
            add(a, b, fa, fc);
        }
        if cur != usize::MAX {
            fc[cur - base] += acc;
        }
    };
    if f.len() <= cs {
        chunk(0, f);
    } else {
        f.par_chunks_mut(cs)
            .enumerate()
            .for_each(|(c, fc)| chunk(c, fc));
    }
    for e in set.crossing.clone() {
        let (a, b) = (set.a[e] as usize, set.b[e] as usize);
        let fa = spring_force(x[a], x[b], v[a], v[b], set.rest[e], k[e], kd[e]);
        f[a] += fa;
        f[b] -= fa;
    }
}

/// Adds the wind force of every triangle, `drag · A · ((w − v)·n) n` with w sampled at the
/// centroid and v the mean vertex velocity, one third to each vertex (PHYSICS.md §1). Serial:
/// it runs only in windy scenes and costs one pass over the triangles.
pub fn wind(model: &ClothModel, x: &[Vec3A], v: &[Vec3A], wind: &Wind, time: f32, f: &mut [Vec3A]) {
    if !wind.is_active() {
        return;
    }
    for t in &model.triangles {
        let [a, b, c] = t.map(|i| i as usize);
        let n2 = (x[b] - x[a]).cross(x[c] - x[a]); // |n2| = 2 A
        let len = n2.length();
        if len < 1e-20 {
            continue;
        }
        let centroid = (x[a] + x[b] + x[c]) / 3.0;
        let w = Vec3A::from(wind.at(Vec3::from(centroid), time));
        let rel = w - (v[a] + v[b] + v[c]) / 3.0;
        // drag · A · (rel·n̂) n̂ = drag · ½ (rel·n2) n2 / |n2|
        let force = n2 * (wind.drag * 0.5 * rel.dot(n2) / len);
        let third = force / 3.0;
        f[a] += third;
        f[b] += third;
        f[c] += third;
    }
}

/// The largest eigenvalues, 1/s² and 1/s, of M⁻¹K and M⁻¹C for one garment's springs at rest
/// (K: stiffness, C: dashpots, M: dry masses, pins fixed), by power iteration with the
/// Rayleigh quotient. Explicit (symplectic Euler / Verlet) integration of a mode with
/// M⁻¹K-eigenvalue ω² and damping rate γ is stable when Δt² ω² + 2 Δt γ < 4 (the roots of
/// z² − (2 − Δtγ − Δt²ω²) z + (1 − Δtγ) lie in the unit disc); the step uses these two numbers to
/// clamp springs a time step cannot carry instead of exploding.
pub fn stiffness_spectrum(model: &ClothModel, particles: std::ops::Range<usize>) -> (f32, f32) {
    let set = &model.springs;
    let edges: Vec<usize> = (0..set.len())
        .filter(|&e| particles.contains(&(set.a[e] as usize)))
        .collect();
    let n = particles.len();
    if n == 0 || edges.is_empty() {
        return (0.0, 0.0);
    }
    let base = particles.start;
    let free: Vec<f32> = particles
        .clone()
        .map(|i| if model.is_pinned(i) { 0.0 } else { 1.0 })
        .collect();
    let mass: Vec<f32> = model.mass_dry[particles.clone()].to_vec();
    let largest = |coef: &[f32]| -> f32 {
        // Symmetric form A = M^-1/2 K M^-1/2 acting on y = M^1/2 x, so the Rayleigh quotient
        // is an under-estimate that converges to λ_max from below.
        let mut y: Vec<Vec3A> = (0..n)
            .map(|i| {
                let h = (i as u32).wrapping_mul(2_654_435_761);
                let s = |k: u32| ((h.rotate_left(k) & 0xFFFF) as f32 / 65535.0) - 0.5;
                Vec3A::new(s(0), s(11), s(22)) * free[i]
            })
            .collect();
        let mut ay = vec![Vec3A::ZERO; n];
        let mut lambda = 0.0f32;
        for _ in 0..60 {
            let norm = y.iter().map(|v| v.length_squared()).sum::<f32>().sqrt();
            if norm < 1e-30 {
                return 0.0;
            }
            y.iter_mut().for_each(|v| *v /= norm);
            ay.fill(Vec3A::ZERO);
            for &e in &edges {
                let (a, b) = (set.a[e] as usize - base, set.b[e] as usize - base);
                let u = (model.rest[b + base] - model.rest[a + base]).normalize_or_zero();
                let xa = y[a] / mass[a].sqrt();
                let xb = y[b] / mass[b].sqrt();
                let f = u * (coef[e] * u.dot(xb - xa));
                ay[a] += f;
                ay[b] -= f;
            }
            for i in 0..n {
                ay[i] = -ay[i] / mass[i].sqrt() * free[i];
            }
            lambda = y.iter().zip(&ay).map(|(a, b)| a.dot(*b)).sum::<f32>();
            std::mem::swap(&mut y, &mut ay);
        }
        lambda.max(0.0)
    };
    (largest(&set.k), largest(&set.kd))
}
