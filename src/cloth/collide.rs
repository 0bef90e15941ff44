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

/// A shape prepared for many distance queries at one instant: everything
/// [`crate::body::tapered_capsule_closest`] derives from the capsule alone (axis direction,
/// length, cone slope) is computed once, so each particle's query is a few dot products, one
/// square root to reject and one more for a contact. The collide stage prepares every collider
/// once per substep.
///
/// The per-particle arithmetic repeats that function's operation by operation on the same
/// precomputed values, so within reach it returns the very same result (tested); what it adds
/// is rejection without the exact math: by the slab and cylinder that bound the hull, and by the
/// squared distance to the closest sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PreparedShape {
    kind: PreparedKind,
    /// Plane point, sphere centre, or the capsule's c1.
    origin: Vec3A,
    /// Plane normal or the capsule's unit axis â (zero for a sphere).
    dir: Vec3A,
    /// Capsule axis length L, m (0 otherwise).
    len: f32,
    /// Sphere radius or the capsule's r1, m.
    r1: f32,
    /// Capsule r2 − r1, m.
    dr: f32,
    /// Capsule cone slope tan α, α = asin((r1 − r2)/L).
    tan_a: f32,
    /// Capsule max(r1, r2), m: the hull lies within this distance of the axis segment's line.
    r_max: f32,
    /// Capsule r2, m.
    r2: f32,
    /// The axis parameter reported for a sphere (0, or 1 for a degenerate capsule whose hull is
    /// its c2 sphere).
    t_sphere: f32,
    /// The original shape, for the rare exact-degenerate normal.
    shape: Shape,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PreparedKind {
    Plane,
    Sphere,
    Capsule,
}

impl PreparedShape {
    /// Prepares `shape` (the same constants as `tapered_capsule_closest` computes per call).
    pub fn new(shape: &Shape) -> Self {
        let base = PreparedShape {
            kind: PreparedKind::Sphere,
            origin: Vec3A::ZERO,
            dir: Vec3A::ZERO,
            len: 0.0,
            r1: 0.0,
            dr: 0.0,
            tan_a: 0.0,
            r_max: 0.0,
            r2: 0.0,
            t_sphere: 0.0,
            shape: *shape,
        };
        match *shape {
            Shape::Plane { point, normal } => PreparedShape {
                kind: PreparedKind::Plane,
                origin: point,
                dir: normal,
                ..base
            },
            Shape::Sphere { centre, radius } => PreparedShape {
                origin: centre,
                r1: radius,
                ..base
            },
            Shape::Capsule { c1, r1, c2, r2 } => {
                let axis = c2 - c1;
                let l = axis.length();
                if l <= (r1 - r2).abs() || l < 1e-9 {
                    // Degenerate: the bigger sphere is the hull (as in the reference).
                    let (c, r, t) = if r1 >= r2 {
                        (c1, r1, 0.0)
                    } else {
                        (c2, r2, 1.0)
                    };
                    return PreparedShape {
                        origin: c,
                        r1: r,
                        t_sphere: t,
                        ..base
                    };
                }
                let sin_a = (r1 - r2) / l;
                PreparedShape {
                    kind: PreparedKind::Capsule,
                    origin: c1,
                    dir: axis / l,
                    len: l,
                    r1,
                    dr: r2 - r1,
                    tan_a: sin_a / (1.0 - sin_a * sin_a).sqrt(),
                    r_max: r1.max(r2),
                    r2,
                    ..base
                }
            }
        }
    }

    /// The signed distance query of [`Shape::closest`], but only for points closer than `reach`
    /// (m, ≥ 0) to the surface; `None` when the point is at least `reach` away (up to rounding
    /// at exactly `reach`).
    #[inline]
    pub fn closest_within(&self, x: Vec3A, reach: f32) -> Option<Closest> {
        self.query::<false>(x, reach).ok()
    }

    /// [`PreparedShape::closest_within`] (the very same result within reach), and beyond reach
    /// a lower bound on the distance, m (≥ `reach` up to rounding): the exact distance for a
    /// plane or sphere and past the capsule's final test, else the distance to the cylinder
    /// slab that bounds the hull. The collide stage keeps it to skip the particle's later
    /// substeps while it cannot have come within reach.
    #[inline]
    pub fn closest_or_bound(&self, x: Vec3A, reach: f32) -> Result<Closest, f32> {
        self.query::<true>(x, reach)
    }

    /// The shared body of the two queries; `BOUND` false returns `Err(0.0)` beyond reach (the
    /// bound's arithmetic compiled out).
    #[inline(always)]
    fn query<const BOUND: bool>(&self, x: Vec3A, reach: f32) -> Result<Closest, f32> {
        match self.kind {
            PreparedKind::Plane => {
                let distance = (x - self.origin).dot(self.dir);
                if distance < reach {
                    Ok(Closest {
                        distance,
                        normal: self.dir,
                        t: 0.0,
                    })
                } else {
                    Err(distance)
                }
            }
            PreparedKind::Sphere => {
                let d = x - self.origin;
                let l2 = d.length_squared();
                let out = self.r1 + reach;
                if l2 >= out * out {
                    return Err(if BOUND { l2.sqrt() - self.r1 } else { 0.0 });
                }
                let l = l2.sqrt();
                let distance = l - self.r1;
                if distance >= reach {
                    return Err(distance);
                }
                let normal = if l > 1e-12 { d / l } else { Vec3A::Y };
                Ok(Closest {
                    distance,
                    normal,
                    t: self.t_sphere,
                })
            }
            PreparedKind::Capsule => {
                let d = x - self.origin;
                let a = d.dot(self.dir);
                // The distance to the cylinder slab {−r1 ≤ axial ≤ L + r2, radial ≤ r_max} that
                // holds the hull: its axial and radial excesses are orthogonal.
                let slab = |radial: Vec3A| {
                    let ax = (-self.r1 - a).max(a - self.len - self.r2).max(0.0);
                    let rad = (radial.length() - self.r_max).max(0.0);
                    (ax * ax + rad * rad).sqrt()
                };
                // The hull's axial extent is [−r1, L + r2]: beyond it by `reach` is out of reach.
                if a <= -(self.r1 + reach) || a >= self.len + self.r2 + reach {
                    return Err(if BOUND { slab(d - self.dir * a) } else { 0.0 });
                }
                let radial = d - self.dir * a;
                let rho2 = radial.length_squared();
                // The hull lies within r_max of the axis line.
                let out = self.r_max + reach;
                if rho2 >= out * out {
                    return Err(if BOUND { slab(radial) } else { 0.0 });
                }
                // From here, the reference's arithmetic (tapered_capsule_closest) step by step.
                let rho = rho2.sqrt();
                let s = (a - rho * self.tan_a).clamp(0.0, self.len);
                let t = s / self.len;
                let centre = self.origin + self.dir * s;
                let r = self.r1 + self.dr * t;
                let to_x = x - centre;
                let dl2 = to_x.length_squared();
                let out = r + reach;
                if dl2 >= out * out {
                    return Err(if BOUND { dl2.sqrt() - r } else { 0.0 });
                }
                let dl = dl2.sqrt();
                let distance = dl - r;
                if distance >= reach {
                    return Err(distance);
                }
                let normal = if dl > 1e-12 {
                    to_x / dl
                } else if rho > 1e-12 {
                    radial / rho
                } else {
                    // x on the axis at the closest centre: the reference picks the normal.
                    return Ok(self.shape.closest(x));
                };
                Ok(Closest {
                    distance,
                    normal,
                    t,
                })
            }
        }
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

    /// How fast, m per unit of frame fraction, the distance from any fixed point to the
    /// interpolated shape `Shape::lerp(prev, cur, s)` can change with `s` (infinite when it is
    /// not bounded: a plane that turns, a change of shape kind).
    ///
    /// Why this bound holds: a capsule is the union of the spheres of centre c1 + u (c2 − c1)
    /// and radius r1 + u (r2 − r1), u ∈ [0, 1] (the convex hull of its end spheres), so outside
    /// it the distance is min over u of |x − c(u)| − r(u). Moving the ends by Δc1, Δc2 and the
    /// radii by Δr1, Δr2 changes each term by at most max |Δc| + max |Δr|, and the minimum by no
    /// more; interpolation moves them by (s1 − s0) times the frame's change. Rounding of the
    /// interpolated shapes is left to the caller's tolerance.
    pub fn sweep_speed(&self) -> f32 {
        let speed = match (self.prev, self.cur) {
            (
                Shape::Plane {
                    point: p0,
                    normal: n0,
                },
                Shape::Plane {
                    point: p1,
                    normal: n1,
                },
            ) if n0 == n1 => (p1 - p0).dot(n0).abs(),
            (
                Shape::Sphere {
                    centre: c0,
                    radius: r0,
                },
                Shape::Sphere {
                    centre: c1,
                    radius: r1,
                },
            ) => c0.distance(c1) + (r1 - r0).abs(),
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
                // `f32::max` would drop a NaN: add instead (NaN stays NaN).
                let dc = a1.distance(b1) + a2.distance(b2);
                let dr = (br1 - ar1).abs() + (br2 - ar2).abs();
                if dc.is_nan() || dr.is_nan() {
                    f32::NAN
                } else {
                    a1.distance(b1).max(a2.distance(b2)) + (br1 - ar1).abs().max((br2 - ar2).abs())
                }
            }
            _ => f32::INFINITY,
        };
        // NaN (a broken collider) is unbounded too.
        if speed >= 0.0 {
            speed
        } else {
            f32::INFINITY
        }
    }
}

/// A linear broad phase: appends to `out` the indices of the shapes whose bounds, grown by
/// `margin`, overlap the box `(lo, hi)`. The collide stage itself draws its lists from a BVH over
/// the colliders' frame-swept boxes (src/cloth/stages/collide.rs); this scan is the reference its
/// tests compare against.
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
    Some(respond(
        x,
        x_start,
        c,
        shape,
        shape_start,
        thickness,
        mu,
        extra_normal,
    ))
}

/// [`resolve`] against a [`PreparedShape`] (`prepared` made from `shape`): the same response,
/// with the prepared, early-rejecting distance query. The collide stage's path.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn resolve_prepared(
    x: &mut Vec3A,
    x_start: Vec3A,
    prepared: &PreparedShape,
    shape: &Shape,
    shape_start: &Shape,
    thickness: f32,
    margin: f32,
    mu: f32,
    extra_normal: f32,
) -> Option<Contact> {
    let c = prepared.closest_within(*x, thickness + margin)?;
    Some(respond(
        x,
        x_start,
        c,
        shape,
        shape_start,
        thickness,
        mu,
        extra_normal,
    ))
}

/// [`resolve_prepared`] that also reports, when `x` is out of reach, a lower bound on its
/// distance from the shape, m ([`PreparedShape::closest_or_bound`]).
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn resolve_prepared_or_bound(
    x: &mut Vec3A,
    x_start: Vec3A,
    prepared: &PreparedShape,
    shape: &Shape,
    shape_start: &Shape,
    thickness: f32,
    margin: f32,
    mu: f32,
    extra_normal: f32,
) -> Result<Contact, f32> {
    let c = prepared.closest_or_bound(*x, thickness + margin)?;
    Ok(respond(
        x,
        x_start,
        c,
        shape,
        shape_start,
        thickness,
        mu,
        extra_normal,
    ))
}

/// Rounds of [`squeeze_out`] (range 1..64, default 8: each round at least halves what is left
/// of a feasible corner's overlap, and a pinch settles on its balance point in two).
const SQUEEZE_ROUNDS: usize = 8;

/// Overlap below which [`squeeze_out`] stops, m (range 1e-7..1e-4, default 1e-6: the distance
/// queries round at ~1e-7 of the coordinates).
const SQUEEZE_TOLERANCE: f32 = 1e-6;

/// Cloth squeezed between colliders: after the collide stage's two passes of one push per
/// collider in turn, a particle caught where two colliders are less than two thicknesses apart
/// (a forearm swinging past the thigh, the hand against the hip) ends pushed out of the last one
/// and into the other, as deep as the squeeze is tight — the passes alternate between two
/// positions and never settle, and which one a frame ends on is chance.
///
/// This moves the particle instead by the *average* of the pushes of every collider of `list`
/// within reach (`thickness + margin`, a collider within reach but not overlapped counting with
/// a zero push), repeated [`SQUEEZE_ROUNDS`] times or until no collider overlaps the particle's
/// thickness by more than [`SQUEEZE_TOLERANCE`] — simultaneous (Jacobi) projection, which
/// minimises the sum of the squared overlaps rather than chasing one constraint after the other.
/// Where the colliders leave room (a crease between two touching limbs) it converges to a point
/// outside both; where they do not (two surfaces closer than two thicknesses, facing each other)
/// it settles between them, where the overlap is shared evenly and the particle's centre is
/// outside both shapes as long as the shapes themselves do not meet. No friction: the passes have
/// charged it. Returns whether it moved the particle (never, when the passes left no overlap,
/// so unsqueezed cloth is untouched).
#[allow(clippy::too_many_arguments)]
pub fn squeeze_out(
    x: &mut Vec3A,
    list: impl Iterator<Item = usize> + Clone,
    bounds: &[(Vec3A, Vec3A)],
    prepared: &[PreparedShape],
    thickness: f32,
    margin: f32,
) -> bool {
    let reach = thickness + margin;
    let mut moved = false;
    for _ in 0..SQUEEZE_ROUNDS {
        let (mut sum, mut n, mut worst) = (Vec3A::ZERO, 0u32, 0.0f32);
        for ci in list.clone() {
            let (lo, hi) = bounds[ci];
            if x.cmplt(lo - reach).any() || x.cmpgt(hi + reach).any() {
                continue;
            }
            if let Some(c) = prepared[ci].closest_within(*x, reach) {
                let overlap = (thickness - c.distance).max(0.0);
                sum += c.normal * overlap;
                n += 1;
                worst = worst.max(overlap);
            }
        }
        if worst <= SQUEEZE_TOLERANCE {
            break;
        }
        *x += sum / n as f32;
        moved = true;
    }
    moved
}

/// The response to a point `c` within reach: push out to `thickness`, then friction.
#[inline]
#[allow(clippy::too_many_arguments)]
fn respond(
    x: &mut Vec3A,
    x_start: Vec3A,
    c: Closest,
    shape: &Shape,
    shape_start: &Shape,
    thickness: f32,
    mu: f32,
    extra_normal: f32,
) -> Contact {
    let depth = thickness - c.distance;
    if depth <= 0.0 {
        return Contact {
            gap: c.distance,
            normal: c.normal,
        };
    }
    *x += c.normal * depth;
    if mu <= 0.0 {
        // Frictionless (the contact rounds' re-projection): keep = 1, the tangential motion stays.
        return Contact {
            gap: thickness,
            normal: c.normal,
        };
    }
    let d_surface = shape.surface_displacement(shape_start, c.normal, c.t);
    let d_rel = (*x - x_start) - d_surface;
    let d_t = d_rel - c.normal * d_rel.dot(c.normal);
    let lt = d_t.length();
    if lt > 0.0 {
        let keep = (1.0 - mu * (depth + extra_normal) / lt).max(0.0);
        *x -= d_t * (1.0 - keep);
    }
    Contact {
        gap: thickness,
        normal: c.normal,
    }
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

    /// Two spheres 4 mm apart squeeze a particle of 3 mm thickness: no point keeps 3 mm off
    /// both, and pushing out of one after the other ends inside the other. `squeeze_out` settles
    /// it halfway, outside both shapes, the overlap shared. Two spheres that leave room (a crease)
    /// let it out of both within the tolerance; a particle clear of both is not moved.
    #[test]
    fn squeeze_out_shares_a_pinch_and_leaves_a_crease() {
        let prep = |shapes: &[Shape]| -> (Vec<(Vec3A, Vec3A)>, Vec<PreparedShape>) {
            (
                shapes.iter().map(Shape::aabb).collect(),
                shapes.iter().map(PreparedShape::new).collect(),
            )
        };
        let (th, margin) = (0.003, 0.001);
        // The pinch: surfaces at x = ±0.002.
        let pinch = [
            Shape::sphere(Vec3::new(-0.102, 0.0, 0.0), 0.1),
            Shape::sphere(Vec3::new(0.102, 0.0, 0.0), 0.1),
        ];
        let (bounds, prepared) = prep(&pinch);
        // Where the passes leave it: 3 mm off the first sphere, 1 mm inside the second.
        let mut x = Vec3A::new(0.001, 0.0005, 0.0);
        assert!(squeeze_out(&mut x, 0..2, &bounds, &prepared, th, margin));
        assert!(x.x.abs() < 1e-4, "{x}");
        for p in &prepared {
            let d = p.closest_within(x, 1.0).unwrap().distance;
            assert!(d > 0.0019 && d < 0.0021, "{d}");
        }
        // The crease: two spheres meeting at right angles leave room outside both.
        let crease = [
            Shape::sphere(Vec3::new(0.0, -0.1, 0.0), 0.1),
            Shape::sphere(Vec3::new(-0.1, 0.0, 0.0), 0.1),
        ];
        let (bounds, prepared) = prep(&crease);
        let mut x = Vec3A::new(0.003, 0.001, 0.0);
        assert!(squeeze_out(&mut x, 0..2, &bounds, &prepared, th, margin));
        for p in &prepared {
            let d = p.closest_within(x, 1.0).unwrap().distance;
            assert!(d > th - 2e-5, "{d}");
        }
        // Clear of both: untouched, to the bit.
        let before = Vec3A::new(0.02, 0.02, 0.0);
        let mut x = before;
        assert!(!squeeze_out(&mut x, 0..2, &bounds, &prepared, th, margin));
        assert_eq!(x, before);
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

    /// The prepared query equals the reference tapered capsule (and sphere, plane) exactly within
    /// reach, and rejects only points at least `reach` away.
    #[test]
    fn prepared_shape_matches_reference_on_random_inputs() {
        let mut seed = 7u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let mut within = 0;
        for case in 0..4000 {
            let mut v = || Vec3A::new(rnd(), rnd(), rnd()) * 2.0 - 1.0;
            let (c1, c2) = (v() * 0.5, v() * 0.5);
            let x = v() * 0.8;
            let n = v();
            let (r1, r2) = (rnd() * 0.3, rnd() * 0.3);
            let shape = match case % 5 {
                0 => Shape::sphere(c1.into(), r1),
                1 if n.length() > 0.1 => Shape::plane(c1.into(), n.into()),
                // Degenerate capsules: one sphere inside the other, and coincident centres.
                2 => Shape::capsule(c1.into(), r1 + 0.3, (c1 + n * 0.1).into(), r2),
                3 if case % 15 == 3 => Shape::capsule(c1.into(), r1, c1.into(), r2),
                _ => Shape::capsule(c1.into(), r1, c2.into(), r2),
            };
            let reach = rnd() * 0.1;
            let want = shape.closest(x);
            let got = PreparedShape::new(&shape).closest_within(x, reach);
            match got {
                Some(g) => {
                    within += 1;
                    assert!(want.distance < reach, "{shape:?} x={x}");
                    assert!((g.distance - want.distance).abs() <= 1e-6, "{g:?} {want:?}");
                    assert!(g.normal.abs_diff_eq(want.normal, 1e-6), "{g:?} {want:?}");
                    assert!((g.t - want.t).abs() <= 1e-6, "{g:?} {want:?}");
                }
                // Rejected: really out of reach (rounding aside).
                None => assert!(
                    want.distance >= reach - 1e-6,
                    "{shape:?} x={x} reach={reach} {want:?}"
                ),
            }
        }
        assert!(within > 400, "too few points within reach: {within}");
    }

    /// Beyond reach, `closest_or_bound` reports a lower bound on the true distance (and at
    /// least the reach); within reach, the very result of `closest_within`.
    #[test]
    fn prepared_bound_is_a_lower_bound() {
        let mut seed = 11u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let (mut tight, mut out) = (0, 0);
        for case in 0..6000 {
            let mut v = || Vec3A::new(rnd(), rnd(), rnd()) * 2.0 - 1.0;
            let (c1, c2) = (v() * 0.5, v() * 0.5);
            let x = v() * 1.2;
            let n = v();
            let (r1, r2) = (rnd() * 0.3, rnd() * 0.3);
            let shape = match case % 5 {
                0 => Shape::sphere(c1.into(), r1),
                1 if n.length() > 0.1 => Shape::plane(c1.into(), n.into()),
                2 => Shape::capsule(c1.into(), r1 + 0.3, (c1 + n * 0.1).into(), r2),
                _ => Shape::capsule(c1.into(), r1, c2.into(), r2),
            };
            let reach = rnd() * 0.1;
            let p = PreparedShape::new(&shape);
            let want = shape.closest(x).distance;
            match p.closest_or_bound(x, reach) {
                Ok(c) => assert_eq!(Some(c), p.closest_within(x, reach)),
                Err(lb) => {
                    out += 1;
                    assert!(p.closest_within(x, reach).is_none());
                    assert!(lb <= want + 1e-5, "{shape:?} x={x} lb={lb} want={want}");
                    assert!(lb >= reach - 1e-5, "{shape:?} x={x} lb={lb} reach={reach}");
                    if lb >= 0.8 * want {
                        tight += 1;
                    }
                }
            }
        }
        // The bound is useful: mostly within 20 % of the distance.
        assert!(tight * 10 > out * 7, "{tight} of {out}");
    }

    /// The distance from a fixed point to an interpolated collider changes no faster than
    /// `sweep_speed` per unit of frame fraction.
    #[test]
    fn sweep_speed_bounds_the_distance_change() {
        let mut seed = 5u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        for case in 0..3000 {
            let mut v = || Vec3::new(rnd(), rnd(), rnd()) * 2.0 - 1.0;
            let (a1, a2, m1, m2) = (v() * 0.5, v() * 0.5, v() * 0.2, v() * 0.2);
            let x = Vec3A::from(v());
            let (r1, r2, q1, q2) = (rnd() * 0.3, rnd() * 0.3, rnd() * 0.3, rnd() * 0.3);
            let c = match case % 3 {
                0 => Collider {
                    prev: Shape::sphere(a1, r1),
                    cur: Shape::sphere(a1 + m1, q1),
                },
                1 => Collider {
                    prev: Shape::plane(a1, Vec3::Y),
                    cur: Shape::plane(a1 + m1, Vec3::Y),
                },
                _ => Collider {
                    prev: Shape::capsule(a1, r1, a2, r2),
                    cur: Shape::capsule(a1 + m1, q1, a2 + m2, q2),
                },
            };
            let speed = c.sweep_speed();
            let (s0, s1) = (rnd(), rnd());
            let d0 = Shape::lerp(&c.prev, &c.cur, s0).closest(x).distance;
            let d1 = Shape::lerp(&c.prev, &c.cur, s1).closest(x).distance;
            // Outside the shape (where the collide stage uses the bound).
            if d0 > 0.0 && d1 > 0.0 {
                assert!(
                    (d1 - d0).abs() <= speed * (s1 - s0).abs() + 1e-5,
                    "{c:?} x={x} {d0} {d1} speed {speed}"
                );
            }
        }
        let turning = Collider {
            prev: Shape::plane(Vec3::ZERO, Vec3::Y),
            cur: Shape::plane(Vec3::ZERO, Vec3::X),
        };
        assert_eq!(turning.sweep_speed(), f32::INFINITY);
    }

    #[test]
    fn prepared_resolve_equals_resolve() {
        let start = Shape::capsule(Vec3::ZERO, 0.2, Vec3::new(0.6, 0.1, 0.0), 0.1);
        let end = Shape::capsule(
            Vec3::new(0.0, 0.01, 0.0),
            0.2,
            Vec3::new(0.6, 0.12, 0.0),
            0.1,
        );
        let prep = PreparedShape::new(&end);
        for k in 0..200 {
            let f = k as f32 / 200.0;
            let x0 = Vec3A::new(f * 0.8 - 0.1, 0.15 + 0.1 * (f * 17.0).sin(), 0.05);
            let xs = x0 - Vec3A::new(0.01, -0.02, 0.0);
            let (mut a, mut b) = (x0, x0);
            let ra = resolve(&mut a, xs, &end, &start, 0.005, 0.01, 0.4, 0.0);
            let rb = resolve_prepared(&mut b, xs, &prep, &end, &start, 0.005, 0.01, 0.4, 0.0);
            assert_eq!(ra.is_some(), rb.is_some(), "x={x0}");
            assert!(a.abs_diff_eq(b, 1e-6), "{a} {b}");
        }
    }
}
