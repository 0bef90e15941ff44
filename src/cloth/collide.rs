//! Colliders (plane, sphere, tapered capsule), static or moving, their distance queries, the
//! broad phase and the contact response with Coulomb friction (PHYSICS.md §2).

use crate::math::{Vec3, Vec3A};

/// A collider's shape at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// Half-space `(x − point)·normal ≥ 0` is free; `normal` is unit. A particle behind the
    /// plane is pushed out along the normal (every plane here is a floor or a wall, so the
    /// free side is known; this is the homework's crossing rule for particles coming from the
    /// front, and it also recovers particles that somehow ended behind it).
    Plane {
        point: Vec3A,
        normal: Vec3A,
    },
    Sphere {
        centre: Vec3A,
        radius: f32,
    },
    /// The convex hull of two spheres (NvCloth's "sphere pair").
    Capsule {
        c1: Vec3A,
        r1: f32,
        c2: Vec3A,
        r2: f32,
    },
}

/// A signed-distance query result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Closest {
    /// Signed distance from the surface, m (negative inside).
    pub distance: f32,
    /// Outward unit normal at the closest surface point.
    pub normal: Vec3A,
    /// For a capsule, the axis parameter of the closest centre in [0, 1] (0 = c1); else 0.
    pub t: f32,
}

impl Shape {
    pub fn plane(point: Vec3, normal: Vec3) -> Self {
        Shape::Plane {
            point: point.into(),
            normal: normal.normalize().into(),
        }
    }
    pub fn sphere(centre: Vec3, radius: f32) -> Self {
        Shape::Sphere {
            centre: centre.into(),
            radius,
        }
    }
    pub fn capsule(c1: Vec3, r1: f32, c2: Vec3, r2: f32) -> Self {
        Shape::Capsule {
            c1: c1.into(),
            r1,
            c2: c2.into(),
            r2,
        }
    }

    /// Signed distance from `x` to the surface and the outward normal.
    #[inline]
    pub fn closest(&self, x: Vec3A) -> Closest {
        match *self {
            Shape::Plane { point, normal } => Closest {
                distance: (x - point).dot(normal),
                normal,
                t: 0.0,
            },
            Shape::Sphere { centre, radius } => {
                let d = x - centre;
                let l = d.length();
                let normal = if l > 1e-12 { d / l } else { Vec3A::Y };
                Closest {
                    distance: l - radius,
                    normal,
                    t: 0.0,
                }
            }
            Shape::Capsule { c1, r1, c2, r2 } => capsule_closest(x, c1, r1, c2, r2),
        }
    }

    /// Axis-aligned bounds (min, max), m; infinite for a plane.
    pub fn aabb(&self) -> (Vec3A, Vec3A) {
        match *self {
            Shape::Plane { .. } => (Vec3A::splat(f32::NEG_INFINITY), Vec3A::splat(f32::INFINITY)),
            Shape::Sphere { centre, radius } => (centre - radius, centre + radius),
            Shape::Capsule { c1, r1, c2, r2 } => ((c1 - r1).min(c2 - r2), (c1 + r1).max(c2 + r2)),
        }
    }

    /// The shape a fraction `s` of the way from `a` to `b` (same variant; otherwise `b`).
    pub fn lerp(a: &Shape, b: &Shape, s: f32) -> Shape {
        match (*a, *b) {
            (
                Shape::Plane {
                    point: p0,
                    normal: n0,
                },
                Shape::Plane {
                    point: p1,
                    normal: n1,
                },
            ) => Shape::Plane {
                point: p0.lerp(p1, s),
                normal: n0.lerp(n1, s).try_normalize().unwrap_or(n1),
            },
            (
                Shape::Sphere {
                    centre: c0,
                    radius: r0,
                },
                Shape::Sphere {
                    centre: c1,
                    radius: r1,
                },
            ) => Shape::Sphere {
                centre: c0.lerp(c1, s),
                radius: r0 + (r1 - r0) * s,
            },
            (
                Shape::Capsule {
                    c1: a1,
                    r1: ar1,
                    c2: a2,
                    r2: ar2,
                },
                Shape::Capsule {
                    c1: b1,
                    r1: br1,
                    c2: b2,
                    r2: br2,
                },
            ) => Shape::Capsule {
                c1: a1.lerp(b1, s),
                r1: ar1 + (br1 - ar1) * s,
                c2: a2.lerp(b2, s),
                r2: ar2 + (br2 - ar2) * s,
            },
            _ => *b,
        }
    }

    /// Displacement, m, of the surface point with outward normal `n` (and capsule parameter
    /// `t`) when the shape moves from `from` to `self`: the collider's own motion that
    /// friction measures the particle's sliding against.
    #[inline]
    pub fn surface_displacement(&self, from: &Shape, n: Vec3A, t: f32) -> Vec3A {
        match (*from, *self) {
            (Shape::Plane { point: p0, normal }, Shape::Plane { point: p1, .. }) => {
                normal * (p1 - p0).dot(normal)
            }
            (
                Shape::Sphere {
                    centre: c0,
                    radius: r0,
                },
                Shape::Sphere {
                    centre: c1,
                    radius: r1,
                },
            ) => (c1 - c0) + n * (r1 - r0),
            (
                Shape::Capsule {
                    c1: a1,
                    r1: ar1,
                    c2: a2,
                    r2: ar2,
                },
                Shape::Capsule {
                    c1: b1,
                    r1: br1,
                    c2: b2,
                    r2: br2,
                },
            ) => {
                let dc = (b1 - a1).lerp(b2 - a2, t);
                let dr = (br1 - ar1) + ((br2 - ar2) - (br1 - ar1)) * t;
                dc + n * dr
            }
            _ => Vec3A::ZERO,
        }
    }
}

/// Signed distance to the convex hull of spheres (c1, r1) and (c2, r2): the body's tapered
/// capsule ([`crate::body::tapered_capsule_closest`], the one implementation, derived there).
#[inline]
pub fn capsule_closest(x: Vec3A, c1: Vec3A, r1: f32, c2: Vec3A, r2: f32) -> Closest {
    let c = crate::body::tapered_capsule_closest(x, c1, r1, c2, r2);
    Closest {
        distance: c.distance,
        normal: c.normal,
        t: c.t,
    }
}

/// A collider: its shape at the start (`prev`) and end (`cur`) of the current frame. Each
/// substep interpolates between them, so fast motion is swept in small steps, and the same
/// interpolation gives the collider velocity used by friction (PHYSICS.md §2).
#[derive(Clone, Debug, PartialEq)]
pub struct Collider {
    pub prev: Shape,
    pub cur: Shape,
}

impl Collider {
    /// A collider that does not move.
    pub fn fixed(shape: Shape) -> Self {
        Self {
            prev: shape,
            cur: shape,
        }
    }

    /// Moves the collider for the next frame: the current shape becomes the previous one.
    pub fn move_to(&mut self, shape: Shape) {
        self.prev = self.cur;
        self.cur = shape;
    }
}

/// A linear broad phase: appends to `out` the indices of the shapes whose bounds, grown by
/// `margin`, overlap the box `(lo, hi)`. The collide stage itself draws its lists from a BVH over
/// the colliders' frame-swept boxes (src/cloth/step.rs); this scan is the reference its tests
/// compare against.
pub fn broad_phase(
    bounds: &[(Vec3A, Vec3A)],
    lo: Vec3A,
    hi: Vec3A,
    margin: f32,
    out: &mut Vec<u32>,
) {
    out.clear();
    for (k, &(blo, bhi)) in bounds.iter().enumerate() {
        if (blo - margin).cmple(hi).all() && (bhi + margin).cmpge(lo).all() {
            out.push(k as u32);
        }
    }
}

/// Result of resolving one particle against one collider, for the wet stage and statistics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Gap h between the particle and the surface after the response, m (≥ thickness when
    /// resolved).
    pub gap: f32,
    /// Collider outward normal.
    pub normal: Vec3A,
}

/// Pushes `x` out of `shape` to distance `thickness` and applies Coulomb friction by velocity
/// control (Bridson, Fedkiw & Anderson 2002, §7.2; Park & Byun 2019 Eq. 2), written on the
/// substep displacement as NvCloth does: with the particle's displacement relative to the
/// collider surface `d_rel = (x − x_start) − d_surface`, split into normal and tangential parts,
/// and the normal correction `δ` (= Δv_N Δt, plus `extra_normal` from adhesion),
/// `d_T ← max(1 − μ δ / |d_T|, 0) d_T`: friction never reverses sliding and stops it when it
/// wins (static friction). Returns the contact if `x` was within `thickness + margin`.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn resolve(
    x: &mut Vec3A,
    x_start: Vec3A,
    shape: &Shape,
    shape_start: &Shape,
    thickness: f32,
    margin: f32,
    mu: f32,
    extra_normal: f32,
) -> Option<Contact> {
    if let Shape::Sphere { centre, radius } = *shape {
        // Most particles are far from most spheres: reject without a square root.
        let reach = radius + thickness + margin;
        if (*x - centre).length_squared() >= reach * reach {
            return None;
        }
    }
    let c = shape.closest(*x);
    if c.distance >= thickness + margin {
        return None;
    }
    let depth = thickness - c.distance;
    if depth <= 0.0 {
        return Some(Contact {
            gap: c.distance,
            normal: c.normal,
        });
    }
    *x += c.normal * depth;
    let d_surface = shape.surface_displacement(shape_start, c.normal, c.t);
    let d_rel = (*x - x_start) - d_surface;
    let d_t = d_rel - c.normal * d_rel.dot(c.normal);
    let lt = d_t.length();
    if lt > 0.0 {
        let keep = (1.0 - mu * (depth + extra_normal) / lt).max(0.0);
        *x -= d_t * (1.0 - keep);
    }
    Some(Contact {
        gap: thickness,
        normal: c.normal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: signed distance to the union of many spheres along the axis.
    fn brute(x: Vec3A, c1: Vec3A, r1: f32, c2: Vec3A, r2: f32) -> f32 {
        let n = 20000;
        (0..=n)
            .map(|k| {
                let t = k as f32 / n as f32;
                x.distance(c1.lerp(c2, t)) - (r1 + (r2 - r1) * t)
            })
            .fold(f32::INFINITY, f32::min)
    }

    #[test]
    fn tapered_capsule_matches_brute_force() {
        let cases = [
            (Vec3A::ZERO, 0.3, Vec3A::new(1.0, 0.2, 0.0), 0.1),
            (Vec3A::ZERO, 0.05, Vec3A::new(0.0, 0.5, 0.3), 0.2),
            (Vec3A::ZERO, 0.2, Vec3A::new(0.4, 0.0, 0.0), 0.2),
        ];
        let mut seed = 1u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
        };
        for &(c1, r1, c2, r2) in &cases {
            for _ in 0..300 {
                let x = Vec3A::new(rnd(), rnd(), rnd()) * 1.2 + Vec3A::new(0.3, 0.1, 0.0);
                let got = capsule_closest(x, c1, r1, c2, r2);
                let want = brute(x, c1, r1, c2, r2);
                assert!(
                    (got.distance - want).abs() < 2e-4,
                    "x={x} got {} want {want}",
                    got.distance
                );
                // The reported surface point really is on the hull surface.
                let p = x - got.normal * got.distance;
                assert!(brute(p, c1, r1, c2, r2).abs() < 2e-4);
            }
        }
    }

    #[test]
    fn contained_sphere_capsule_is_the_big_sphere() {
        let c = capsule_closest(
            Vec3A::new(2.0, 0.0, 0.0),
            Vec3A::ZERO,
            1.0,
            Vec3A::X * 0.1,
            0.5,
        );
        assert!((c.distance - 1.0).abs() < 1e-6);
    }

    #[test]
    fn friction_stops_slow_sliding_and_slows_fast_sliding() {
        let ground = Shape::plane(Vec3::ZERO, Vec3::Y);
        // Particle sinking 1 mm while sliding 0.1 mm: friction (μ = 0.5 × 1 mm) wins.
        let mut x = Vec3A::new(0.0001, -0.001, 0.0);
        resolve(&mut x, Vec3A::ZERO, &ground, &ground, 0.0, 0.0, 0.5, 0.0);
        assert!(x.abs_diff_eq(Vec3A::ZERO, 1e-7), "{x}");
        // Sliding 10 mm: reduced by μ·depth = 0.5 mm, never reversed.
        let mut x = Vec3A::new(0.01, -0.001, 0.0);
        resolve(&mut x, Vec3A::ZERO, &ground, &ground, 0.0, 0.0, 0.5, 0.0);
        assert!((x.x - 0.0095).abs() < 1e-6 && x.y.abs() < 1e-7, "{x}");
    }
}
