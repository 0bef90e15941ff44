//! Stage `collide`'s face pass: colliders thinner than the cloth's triangles (PHYSICS.md §2).
//!
//! The particle pass keeps every particle a thickness off every collider, and for a collider
//! wider than the cloth's triangles that keeps the cloth out: a sphere of radius `r` whose
//! centre crosses a triangle comes within `r` of one of its corners, since no point of the
//! triangle is further than its *cover radius* from the nearest corner (the circumradius of an
//! acute triangle, half the longest edge of any other). A collider thinner than that can pass
//! between the three particles without coming near any of them: measured on the coarse
//! ninja's kata with the sewn hakama, the hand's spheres (radius 2.0–2.8 cm) went through
//! triangles of the skirt's front 4–6 cm across whose corners stayed 3–9 mm clear of them,
//! and the hand, inside the skirt, then lifted it as it rose to the guard.
//!
//! So for each such pair — a triangle whose cover radius (at rest, × [`COVER_STRETCH`] for the
//! stretch and shear the cloth may have) exceeds a collider's smallest radius plus the cloth's
//! thickness — this pass finds the point `q` of the triangle nearest the collider: exact for a
//! sphere (the point–triangle closest point of Ericson 2005, *Real-Time Collision Detection*
//! §5.1.5, as the skin-contact stage finds it); for a tapered capsule by alternating closest
//! points between the triangle and the capsule's axis, which converge for two convex sets.
//! Where `q` is closer to the surface than the thickness, and `q` is not a corner (the particle
//! pass has those), the corners move as a point constraint on `q = Σ wᵢ xᵢ` (barycentric `wᵢ`)
//! moves them (Müller et al. 2007, "Position Based Dynamics", §3.3; PhysX's cloth calls such
//! points virtual particles): `Δxᵢ = wᵢ m⁻¹ᵢ λ n` with `λ = depth / Σ wⱼ² m⁻¹ⱼ`, which moves `q`
//! out by exactly `depth` along the collider's normal `n`. No friction: a collider touching
//! cloth between its particles slides over it.
//!
//! It runs before each particle pass (the stage's and each contact round's re-projection), so
//! where a face is pinched between a hand and the thigh the particle pass has the last word and
//! keeps the particles out of the body. The pairs are found once per substep, in the stage's
//! pass, within the reach plus [`PAIR_SLACK`] (the rounds move cloth by millimetres), and the
//! rounds reuse them. Most bodies' large colliders (torso, thighs) never pair with default-size
//! triangles: only hands and fingers, and the whole pass costs nothing where no collider is
//! thin enough.

// `!(x > 0.0)` is meant wherever it stands: NaN takes the safe branch.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use crate::cloth::collide::Shape;
use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::skin::{closest_on_triangle, Feature};
use crate::cloth::state::ClothState;
use crate::cloth::workspace::ClothWorkspace;
use crate::math::Vec3A;

/// A triangle's cover radius at rest is multiplied by this before it is compared with a
/// collider's radius (range 1..2, default 1.3). Deformed, a triangle is wider: with every edge
/// within Provot's limit (1.1 × rest), a grid's right triangle sheared into an acute one has a
/// circumradius up to `0.577 × 1.1 × √2 s` against `0.707 s` at rest (× 1.27), and compression is
/// not limited. A pair tested needlessly costs one distance query; one left out lets a collider
/// through.
pub const COVER_STRETCH: f32 = 1.3;

/// Slack on the reach when the substep's pairs are found, m (range 0..0.05, default 0.01): the
/// contact rounds reuse the pairs after their strain-limit passes have moved the cloth.
const PAIR_SLACK: f32 = 0.01;

/// Triangles per group of the broad phase (consecutive triangles of a garment are neighbours:
/// a group's box is small).
const GROUP: usize = 32;

/// Alternations of closest points between a triangle and a capsule's axis (range 1..16, default
/// 4: the alternation converges linearly, and the contact's depth is then measured exactly at
/// the point reached).
const CAPSULE_ALTERNATIONS: usize = 4;

/// The cover radius of triangle `a b c`: the largest distance from a point of the triangle to
/// its nearest corner, m. For a triangle with no angle over 90° it is the circumradius (the
/// circumcentre is inside). Otherwise, with `c` the corner of the largest angle, the farthest
/// points lie on the long edge `a b`, where the perpendicular bisectors of `a c` and `b c` meet
/// it: `|ac| / (2 cos A)` and `|bc| / (2 cos B)` from `a` and `b` (half the hypotenuse for a right
/// angle at `c`; half the longer part for three corners on a line).
pub fn cover_radius(a: Vec3A, b: Vec3A, c: Vec3A) -> f32 {
    // The corner of the largest angle (opposite the longest edge) last.
    let (lab, lbc, lca) = (
        a.distance_squared(b),
        b.distance_squared(c),
        c.distance_squared(a),
    );
    let (a, b, c) = if lab >= lbc && lab >= lca {
        (a, b, c)
    } else if lbc >= lca {
        (b, c, a)
    } else {
        (c, a, b)
    };
    let (ab, ac, bc) = (b - a, c - a, c - b);
    if ac.dot(bc) > 0.0 {
        // Acute at c (and so everywhere): R = |ab| |bc| |ca| / (4 · area).
        let area2 = ab.cross(ac).length();
        if area2 > 0.0 {
            return (ab.length_squared() * bc.length_squared() * ac.length_squared()).sqrt()
                / (2.0 * area2);
        }
    }
    // |ac| / (2 cos A) = |ac|² |ab| / (2 ac·ab), and the same from b.
    let lab = ab.length();
    let from = |side2: f32, dot: f32| {
        if dot > 0.0 {
            side2 * lab / (2.0 * dot)
        } else {
            0.0
        }
    };
    from(ac.length_squared(), ac.dot(ab)).max(from(bc.length_squared(), -bc.dot(ab)))
}

/// The point of segment `p0 p1` nearest `q`.
fn closest_on_segment(q: Vec3A, p0: Vec3A, p1: Vec3A) -> Vec3A {
    let d = p1 - p0;
    let l2 = d.length_squared();
    if !(l2 > 0.0) {
        return p0;
    }
    p0 + d * ((q - p0).dot(d) / l2).clamp(0.0, 1.0)
}

/// The smallest radius of a collider's shape (`None` for a plane, which no triangle hides).
fn thinnest(shape: &Shape) -> Option<f32> {
    match *shape {
        Shape::Plane { .. } => None,
        Shape::Sphere { radius, .. } => Some(radius),
        Shape::Capsule { r1, r2, .. } => Some(r1.min(r2)),
    }
}

/// Whether the face pass is on and any of `shapes` is thin enough for some triangle of `model`
/// to hide it (the pass has work). The mass-spring model's fused substep, which has no face
/// pass, runs only where this is false.
pub fn needed(model: &ClothModel, params: &SimParams, shapes: impl Iterator<Item = Shape>) -> bool {
    if !params.face_contact {
        return false;
    }
    let cover = model.max_triangle_cover * COVER_STRETCH;
    let thin = model.min_thickness;
    cover > 0.0
        && shapes
            .filter_map(|s| thinnest(&s))
            .any(|r| r + thin < cover)
}

/// Slack around a group of triangles' box when its frame-long list of colliders is made, m
/// (range 0.001..0.2, default 0.03): larger keeps lists valid for more substeps of motion but
/// makes them longer.
const GROUP_SKIN: f32 = 0.03;

/// A group of [`GROUP`] consecutive triangles' frame-long list of the colliders that may pair
/// with its triangles: those thin enough for its widest triangle whose frame-swept boxes meet
/// the group's box (`lo`, `hi`: the box when the list was made, grown by the reach and
/// [`GROUP_SKIN`]). Valid while the collide stage's broad phase is of the same `generation`
/// and the group stays inside the box.
#[derive(Clone, Debug, Default)]
pub struct FaceGroup {
    generation: u64,
    lo: Vec3A,
    hi: Vec3A,
    list: Vec<u32>,
}

/// The substep's pairs of a triangle and a collider it may hide, into `ws.face_pairs`. Per
/// group of [`GROUP`] consecutive triangles (neighbours on the garment: a small box) whose
/// widest triangle some collider is thin enough for (none, for most groups: only hands and
/// fingers are thinner than default-size triangles), the group's frame-long list
/// ([`FaceGroup`]: the collide stage's BVH over the frame-swept boxes, asked once a frame);
/// then per triangle, those of the list thin enough for it whose boxes at the substep's end
/// (`ws.bounds`) meet the triangle's, grown by the reach.
fn find_pairs(model: &ClothModel, state: &ClothState, ws: &mut ClothWorkspace, margin: f32) {
    ws.face_pairs.clear();
    let tris = &model.triangles;
    let cover = model.max_triangle_cover * COVER_STRETCH;
    if !(cover > 0.0) {
        return;
    }
    let n_groups = tris.len().div_ceil(GROUP);
    // Each group's widest triangle, once.
    if ws.face_group_cover.len() != n_groups {
        ws.face_group_cover = model
            .triangle_cover
            .chunks(GROUP)
            .map(|c| c.iter().fold(0.0f32, |a, &b| a.max(b)) * COVER_STRETCH)
            .collect();
        ws.face_groups = vec![FaceGroup::default(); n_groups];
    }
    // The thinnest collider decides which groups can have pairs at all.
    let thinnest_of_all = ws
        .shapes_end
        .iter()
        .filter_map(thinnest)
        .fold(f32::INFINITY, f32::min);
    if !(thinnest_of_all + model.min_thickness < cover) {
        return;
    }
    let reach = model.max_thickness + margin + PAIR_SLACK;
    let generation = ws.collide_generation;
    let x = &state.x;
    for (gi, g0) in (0..tris.len()).step_by(GROUP).enumerate() {
        let gcover = ws.face_group_cover[gi];
        if !(thinnest_of_all + model.min_thickness < gcover) {
            continue;
        }
        let g1 = (g0 + GROUP).min(tris.len());
        let mut glo = Vec3A::splat(f32::INFINITY);
        let mut ghi = Vec3A::splat(f32::NEG_INFINITY);
        for t in &tris[g0..g1] {
            for &i in t {
                glo = glo.min(x[i as usize]);
                ghi = ghi.max(x[i as usize]);
            }
        }
        if !(glo.is_finite() && ghi.is_finite()) {
            continue;
        }
        let (qlo, qhi) = (glo - reach, ghi + reach);
        let group = &mut ws.face_groups[gi];
        if group.generation != generation
            || !(group.lo.cmple(qlo).all() && group.hi.cmpge(qhi).all())
        {
            group.generation = generation;
            group.lo = qlo - GROUP_SKIN;
            group.hi = qhi + GROUP_SKIN;
            ws.collider_bvh
                .query_aabb(group.lo.into(), group.hi.into(), &mut group.list);
            let (swept, shapes) = (&ws.swept_collider, &ws.shapes_end);
            group.list.retain_mut(|k| {
                *k = swept[*k as usize];
                thinnest(&shapes[*k as usize]).is_some_and(|r| r + model.min_thickness < gcover)
            });
            // Collider order, whatever the tree's layout.
            group.list.sort_unstable();
        }
        let group = &ws.face_groups[gi];
        if group.list.is_empty() {
            continue;
        }
        for (ti, t) in tris.iter().enumerate().take(g1).skip(g0) {
            if t.iter().all(|&i| state.inv_mass[i as usize] == 0.0) {
                continue;
            }
            let [a, b, c] = t.map(|i| x[i as usize]);
            let (tlo, thi) = (a.min(b).min(c) - reach, a.max(b).max(c) + reach);
            let hides = model.triangle_cover[ti] * COVER_STRETCH;
            let th = model.thickness[t[0] as usize];
            for &ci in &group.list {
                let (lo, hi) = ws.bounds[ci as usize];
                if !(tlo.cmple(hi).all() && thi.cmpge(lo).all()) {
                    continue;
                }
                if thinnest(&ws.shapes_end[ci as usize]).is_some_and(|r| r + th < hides) {
                    ws.face_pairs.push((ti as u32, ci));
                }
            }
        }
    }
}

/// Stage `collide`'s face pass: with `find` (the stage's pass) the substep's pairs are found
/// first, else (a contact round) the stage's are reused, and only triangles with a particle
/// the round's limit moved (`ws.provot_moved`) are visited. Pushes each hidden collider's triangle
/// out of it (see the module docs) and marks the particles it moved in `ws.face_moved`
/// (`ws.face_moved_list` lists them). Returns whether it moved any.
pub(crate) fn collide_faces(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    find: bool,
) -> bool {
    let margin = crate::cloth::stages::collide::contact_margin(params, ws);
    if !params.face_contact {
        ws.face_pairs.clear();
        return false;
    }
    if find {
        find_pairs(model, state, ws, margin);
    }
    if ws.face_pairs.is_empty() {
        return false;
    }
    if ws.face_moved.len() != model.len() {
        ws.face_moved.clear();
        ws.face_moved.resize(model.len(), 0);
    }
    let mut any = false;
    for &(ti, ci) in &ws.face_pairs {
        let t = model.triangles[ti as usize];
        // A round: a triangle none of whose particles its limit moved is where the last pass
        // left it.
        if !find && t.iter().all(|&i| ws.provot_moved[i as usize] == 0) {
            continue;
        }
        let [a, b, c] = t.map(|i| state.x[i as usize]);
        let th = model.thickness[t[0] as usize];
        let shape = &ws.shapes_end[ci as usize];
        // Out of reach of the triangle's bounding sphere (about its centroid): most pairs.
        let g = (a + b + c) / 3.0;
        let rho = g
            .distance_squared(a)
            .max(g.distance_squared(b))
            .max(g.distance_squared(c))
            .sqrt();
        let apart = match *shape {
            Shape::Sphere { centre, radius } => g.distance(centre) - radius,
            Shape::Capsule { c1, r1, c2, r2 } => {
                g.distance(closest_on_segment(g, c1, c2)) - r1.max(r2)
            }
            Shape::Plane { .. } => continue,
        };
        if apart - rho >= th {
            continue;
        }
        // The collider's point nearest the triangle, then the triangle's point nearest that.
        let tri = [a, b, c];
        let (q, w, feature) = match *shape {
            Shape::Sphere { centre, .. } => closest_on_triangle(centre, &tri),
            Shape::Capsule { c1, c2, .. } => {
                let mut o = closest_on_segment(g, c1, c2);
                let mut found = closest_on_triangle(o, &tri);
                for _ in 1..CAPSULE_ALTERNATIONS {
                    o = closest_on_segment(found.0, c1, c2);
                    found = closest_on_triangle(o, &tri);
                }
                found
            }
            Shape::Plane { .. } => continue,
        };
        // A corner: the particle pass's.
        if matches!(feature, Feature::Vertex(_)) {
            continue;
        }
        let Some(contact) = ws.prepared_end[ci as usize].closest_within(q, th) else {
            continue;
        };
        let depth = th - contact.distance;
        if !(depth > 0.0) {
            continue;
        }
        let inv_m = t.map(|i| state.inv_mass[i as usize]);
        let sum: f32 = (0..3).map(|k| w[k] * w[k] * inv_m[k]).sum();
        if !(sum > 0.0) {
            continue;
        }
        let lambda = depth / sum;
        // Pinched: a corner the push would put within its thickness of another collider (the
        // hand pressing the cloth against the thigh) — no room for the cloth between them, and
        // the particle pass would push the corner back. The collider passes through the face
        // there, as it did before this pass existed.
        let mut pinched = false;
        for k in 0..3 {
            let step = w[k] * inv_m[k] * lambda;
            if !(step > 0.0) {
                continue;
            }
            let p = state.x[t[k] as usize] + contact.normal * step;
            let r = th + 1e-4;
            ws.collider_bvh
                .query_aabb((p - r).into(), (p + r).into(), &mut ws.face_near);
            pinched = ws.face_near.iter().any(|&k| {
                let other = ws.swept_collider[k as usize];
                other != ci && {
                    let (lo, hi) = ws.bounds[other as usize];
                    !(p.cmplt(lo - r).any() || p.cmpgt(hi + r).any())
                        && ws.prepared_end[other as usize]
                            .closest_within(p, th)
                            .is_some()
                }
            });
            if pinched {
                break;
            }
        }
        if pinched {
            continue;
        }
        for k in 0..3 {
            let step = w[k] * inv_m[k] * lambda;
            if step > 0.0 {
                let i = t[k] as usize;
                state.x[i] += contact.normal * step;
                if ws.face_moved[i] == 0 {
                    ws.face_moved[i] = 1;
                    ws.face_moved_list.push(i as u32);
                }
                any = true;
            }
        }
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cover radius is the furthest any point of the triangle is from its nearest corner:
    /// checked against a dense sampling of the triangle, for an equilateral (circumradius
    /// L/√3), a right (half the hypotenuse), two obtuse and two other acute triangles.
    #[test]
    fn cover_radius_is_the_furthest_point_from_the_corners() {
        let cases = [
            (
                Vec3A::ZERO,
                Vec3A::new(1.0, 0.0, 0.0),
                Vec3A::new(0.5, 0.75f32.sqrt(), 0.0),
            ),
            (
                Vec3A::ZERO,
                Vec3A::new(0.1, 0.0, 0.0),
                Vec3A::new(0.0, 0.0, 0.1),
            ),
            (
                Vec3A::ZERO,
                Vec3A::new(1.0, 0.0, 0.0),
                Vec3A::new(0.3, 0.2, 0.1),
            ),
            (
                Vec3A::ZERO,
                Vec3A::new(0.05, 0.0, 0.0),
                Vec3A::new(0.02, 0.04, 0.0),
            ),
            (
                Vec3A::new(0.1, 0.2, 0.3),
                Vec3A::new(1.0, 0.0, 0.0),
                Vec3A::new(0.4, 0.8, 0.1),
            ),
            (
                Vec3A::ZERO,
                Vec3A::new(0.02, 0.01, 0.0),
                Vec3A::new(0.3, 0.0, 0.05),
            ),
        ];
        for (a, b, c) in cases {
            let n = 400;
            let mut far = 0.0f32;
            for i in 0..=n {
                for j in 0..=n - i {
                    let (u, v) = (i as f32 / n as f32, j as f32 / n as f32);
                    let p = a + (b - a) * u + (c - a) * v;
                    far = far.max(p.distance(a).min(p.distance(b)).min(p.distance(c)));
                }
            }
            let got = cover_radius(a, b, c);
            // Sampling finds a lower bound, within a grid step of the furthest point.
            assert!(
                got >= far - 1e-6 && got <= far * 1.005,
                "{a} {b} {c}: {got} vs {far}"
            );
        }
        let l = 1.0f32;
        assert!((cover_radius(cases[0].0, cases[0].1, cases[0].2) - l / 3f32.sqrt()).abs() < 1e-5);
        assert!(
            (cover_radius(cases[1].0, cases[1].1, cases[1].2) - 0.05 * 2f32.sqrt()).abs() < 1e-6
        );
        // Three corners on a line: half the longer part.
        let seg = cover_radius(Vec3A::ZERO, Vec3A::X, Vec3A::X * 0.3);
        assert!((seg - 0.35).abs() < 1e-6, "{seg}");
    }

    /// Only colliders thinner than some triangle's cover (× the stretch allowance) less the
    /// thickness give the face pass work; planes never do.
    #[test]
    fn needed_only_for_colliders_thinner_than_the_triangles() {
        use crate::cloth::build::{grid, GridSpec};
        use crate::cloth::params::GarmentParams;
        use crate::math::Vec3;
        // Cells 10 cm wide: cover 7.07 cm, × 1.25 = 8.8 cm; thickness 3 mm.
        let g = grid(
            "g",
            &GridSpec::square(4, 0.3, Vec3::ZERO),
            &GarmentParams {
                thickness: 0.003,
                ..GarmentParams::default()
            },
        )
        .unwrap();
        let model = ClothModel::new(vec![g]);
        assert!((model.max_triangle_cover - 0.05 * 2f32.sqrt()).abs() < 1e-5);
        let sphere = |r: f32| Shape::sphere(Vec3::ZERO, r);
        assert!(needed(
            &model,
            &SimParams::default(),
            [sphere(0.05)].into_iter()
        ));
        assert!(!needed(
            &model,
            &SimParams::default(),
            [sphere(0.09)].into_iter()
        ));
        assert!(!needed(
            &model,
            &SimParams::default(),
            [Shape::plane(Vec3::ZERO, Vec3::Y)].into_iter()
        ));
        let cap = Shape::capsule(Vec3::ZERO, 0.2, Vec3::X, 0.04);
        assert!(needed(&model, &SimParams::default(), [cap].into_iter()));
        let off = SimParams {
            face_contact: false,
            ..SimParams::default()
        };
        assert!(!needed(&model, &off, [sphere(0.05)].into_iter()));
    }
}
