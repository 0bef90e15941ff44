//! The tapered capsule (the convex hull of two spheres, PHYSICS.md §2): its signed distance,
//! closest point and normal, the one implementation the fitting, the quality measure and the
//! cloth's collisions share; the union of a frame's colliders; and [`Hulls`], colliders
//! unpacked for many distance queries.

use super::ProxyFrame;
use crate::math::{Vec3, Vec3A};

/// Signed distance from `p` to the tapered capsule over spheres `(c1, r1)` and `(c2, r2)` — their
/// convex hull (PHYSICS.md §2): negative inside, exact inside and outside.
pub fn tapered_capsule_sdf(p: Vec3, c1: Vec3, r1: f32, c2: Vec3, r2: f32) -> f32 {
    tapered_capsule_sdf_t(p, c1, r1, c2, r2).0
}

/// [`tapered_capsule_sdf`] and `t` in [0, 1]: where along the capsule the closest surface point
/// lies (0 on sphere 1's cap, 1 on sphere 2's, in between on the cone).
pub fn tapered_capsule_sdf_t(p: Vec3, c1: Vec3, r1: f32, c2: Vec3, r2: f32) -> (f32, f32) {
    let c = tapered_capsule_closest(p.into(), c1.into(), r1, c2.into(), r2);
    (c.distance, c.t)
}

/// The closest point of a tapered capsule to a query point: see [`tapered_capsule_closest`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapsuleClosest {
    /// Signed distance from the surface (negative inside), in the units of the inputs.
    pub distance: f32,
    /// Outward unit normal at the closest surface point.
    pub normal: Vec3A,
    /// Axis parameter in [0, 1] of the sphere centre the closest point belongs to (0 = c1).
    pub t: f32,
}

/// Any unit vector perpendicular to `a` (for a point exactly on an axis).
fn any_perpendicular(a: Vec3A) -> Vec3A {
    let o = if a.x.abs() < 0.9 { Vec3A::X } else { Vec3A::Y };
    a.cross(o).normalize()
}

/// Signed distance, outward normal and axis parameter from `x` to the convex hull of spheres
/// (c1, r1) and (c2, r2): the one implementation of the tapered capsule (PHYSICS.md §2) that the
/// fitting, the quality measure and the cloth's collisions all use.
///
/// Derivation: the hull is the union of the spheres centred at c(s) = c1 + s â, s ∈ [0, L], of
/// radius r(s) = r1 + (r2 − r1) s / L. In the plane of the axis and x, with axial coordinate
/// a = (x − c1)·â and radial distance ρ, the distance to the sphere at s is
/// f(s) = √((a − s)² + ρ²) − r(s), convex in s. f'(s) = 0 gives (a − s)/√(…) = sin α with
/// sin α = (r1 − r2)/L, i.e. s* = a − ρ tan α (the cone's side is tangent to both spheres);
/// clamping s* to [0, L] gives the minimum. When one sphere contains the other (|r1 − r2| ≥ L)
/// the hull is that sphere.
#[inline]
pub fn tapered_capsule_closest(x: Vec3A, c1: Vec3A, r1: f32, c2: Vec3A, r2: f32) -> CapsuleClosest {
    let axis = c2 - c1;
    let l = axis.length();
    if l <= (r1 - r2).abs() || l < 1e-9 {
        // Degenerate: the bigger sphere is the hull.
        let (c, r, t) = if r1 >= r2 {
            (c1, r1, 0.0)
        } else {
            (c2, r2, 1.0)
        };
        let d = x - c;
        let dl = d.length();
        let normal = if dl > 1e-12 { d / dl } else { Vec3A::Y };
        return CapsuleClosest {
            distance: dl - r,
            normal,
            t,
        };
    }
    let a_hat = axis / l;
    let d = x - c1;
    let a = d.dot(a_hat);
    let radial = d - a_hat * a;
    let rho = radial.length();
    let sin_a = (r1 - r2) / l;
    let tan_a = sin_a / (1.0 - sin_a * sin_a).sqrt();
    let s = (a - rho * tan_a).clamp(0.0, l);
    let t = s / l;
    let centre = c1 + a_hat * s;
    let r = r1 + (r2 - r1) * t;
    let to_x = x - centre;
    let dl = to_x.length();
    let normal = if dl > 1e-12 {
        to_x / dl
    } else if rho > 1e-12 {
        radial / rho
    } else {
        any_perpendicular(a_hat)
    };
    CapsuleClosest {
        distance: dl - r,
        normal,
        t,
    }
}

/// Signed distance from `p` to the union of the capsules of `frame` (minimum over colliders):
/// exact outside; inside, the depth in the deepest single collider (a lower bound on the depth
/// in the union).
pub fn union_sdf(p: Vec3, frame: &ProxyFrame, capsules: &[[u32; 2]]) -> f32 {
    let mut best = f32::INFINITY;
    for &[a, b] in capsules {
        let (a, b) = (a as usize, b as usize);
        let d = tapered_capsule_sdf(
            p,
            frame.center[a],
            frame.radius[a],
            frame.center[b],
            frame.radius[b],
        );
        best = best.min(d);
    }
    best
}

/// Colliders unpacked for many distance queries, each with a bounding sphere so that most can be
/// skipped: the signed distance to a hull is at least |x − mid| − bound.
pub struct Hulls {
    ends: Vec<(Vec3, f32, Vec3, f32)>,
    mid: Vec<Vec3>,
    bound: Vec<f32>,
}

impl Hulls {
    pub fn new(center: &[Vec3], radius: &[f32], capsules: &[[u32; 2]]) -> Self {
        let mut ends = Vec::with_capacity(capsules.len());
        let mut mid = Vec::with_capacity(capsules.len());
        let mut bound = Vec::with_capacity(capsules.len());
        for &[a, b] in capsules {
            let (a, b) = (a as usize, b as usize);
            let (c1, r1, c2, r2) = (center[a], radius[a], center[b], radius[b]);
            ends.push((c1, r1, c2, r2));
            mid.push(0.5 * (c1 + c2));
            bound.push(0.5 * (c2 - c1).length() + r1.max(r2));
        }
        Self { ends, mid, bound }
    }

    /// (signed distance, t, collider) of the collider with the smallest signed distance to `x`;
    /// `hint` is tried first (the answer for a nearby point tightens the bound at once).
    pub fn nearest(&self, x: Vec3, hint: usize) -> (f32, f32, usize) {
        let eval = |i: usize| {
            let (c1, r1, c2, r2) = self.ends[i];
            tapered_capsule_sdf_t(x, c1, r1, c2, r2)
        };
        let hint = hint.min(self.ends.len().saturating_sub(1));
        let (d0, t0) = eval(hint);
        let mut best = (d0, t0, hint);
        for i in 0..self.ends.len() {
            if i == hint || (x - self.mid[i]).length() - self.bound[i] >= best.0 {
                continue;
            }
            let (d, t) = eval(i);
            if d < best.0 {
                best = (d, t, i);
            }
        }
        best
    }
}
