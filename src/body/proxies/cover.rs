//! The cover phase of [`Proxies::fit`], for skins the stadium model does not suit: spheres that
//! stick out of the skin shrink, and medial spheres (shrinking balls) are added where the skin
//! is far from every proxy, in rounds until the fit at the bind pose meets
//! [`ProxyOptions::cover_target`] (or the rounds or [`ProxyOptions::max_cover_spheres`] run
//! out).

use super::capsule::Hulls;
use super::fit::{percentile, BindFit};
use super::quality::rest_skin;
use super::{Proxies, ProxyFrame, ProxyOptions, QUALITY_TOLERANCE};
use crate::math::Vec3;
use crate::rig::Rig;

/// Smallest medial sphere the cover phase adds, metres: a smaller "medial" ball is the noise of
/// the vertex normals (a ball tangent at p that touches a neighbour a few mm away on a flat
/// patch), and too small to keep cloth out.
const COVER_MIN_RADIUS: f32 = 0.004;
/// Largest medial sphere, metres (a ball inside an open mesh has no far side to touch).
const COVER_MAX_RADIUS: f32 = 0.5;
/// Most rounds of the cover phase (each shrinks the bulging spheres, then adds medial ones).
const COVER_ROUNDS: usize = 8;

/// Radius of the largest ball tangent to the surface at `p` (outward unit normal `n`, centre
/// `p − r n`) that contains none of `samples`: the shrinking-ball medial point of Ma, Bae & Choi
/// (2012), "3D medial axis point approximation using nearest neighbors and the normal field",
/// solved in closed form. Sample q is inside the ball iff |q − p|² + 2r (q − p)·n < 0, so only
/// samples behind the tangent plane ((p − q)·n > 0) bound it, at r = |p − q|² / (2 (p − q)·n).
/// Samples within 0.1 mm of `p` (the same point split at a seam) are ignored.
fn shrinking_ball(p: Vec3, n: Vec3, samples: &[Vec3]) -> f32 {
    let mut r = f32::INFINITY;
    for &q in samples {
        let d = p - q;
        let dn = d.dot(n);
        let l2 = d.length_squared();
        if dn > 0.0 && l2 > 1e-8 {
            r = r.min(l2 / (2.0 * dn));
        }
    }
    r
}

impl BindFit<'_> {
    /// The cover phase of [`Proxies::fit`], at the rest pose in world space (the space of
    /// [`quality_at_bind`](super::quality_at_bind), so that the target is met exactly as it is
    /// reported). While the fit is below `opts.cover_target`, in rounds:
    /// 1. every sphere that the skin lies deeper than the tolerance inside (a sphere sticking
    ///    out of the skin: cloth would float on it) shrinks by the 90th percentile of that excess
    ///    depth (at most half its radius per round);
    /// 2. greedily, largest skin area first, every vertex still farther than the tolerance
    ///    outside the proxies gets a medial sphere (see [`shrinking_ball`]) tangent to the skin
    ///    there, following the vertex's dominant joint; a medial ball contains no skin sample, so
    ///    it cannot stick out. The vertices it brings within the tolerance need no ball of their
    ///    own.
    pub(super) fn cover(&self, rig: &Rig, skin: usize, px: &mut Proxies, opts: &ProxyOptions) {
        if opts.cover_target.is_nan() || opts.cover_target <= 0.0 || px.capsules.is_empty() {
            return;
        }
        let nj = self.skin.joints.len();
        let tol = QUALITY_TOLERANCE;
        let (wfb, x) = rest_skin(rig, skin);
        if wfb.len() != nj || x.len() != self.positions.len() {
            return;
        }
        let weights = px.surface_weights(rig, skin);
        let used: Vec<usize> = (0..x.len())
            .filter(|&v| weights[v] > 0.0 && x[v].is_finite() && (self.dominant[v] as usize) < nj)
            .collect();
        let total: f32 = used.iter().map(|&v| weights[v]).sum();
        if total <= 0.0 {
            return;
        }
        // Outward unit normals at rest, and the samples a medial ball must not contain: the
        // measured vertices and the centroids of their triangles (a low-poly figure's faces lie
        // far from its vertices).
        let mut normals = vec![Vec3::ZERO; x.len()];
        let mut samples: Vec<Vec3> = used.iter().map(|&v| x[v]).collect();
        let mut base = 0;
        for mesh in rig.meshes.iter().filter(|m| m.skin == Some(skin as u32)) {
            for v in 0..mesh.positions.len() {
                let d = self.dominant[base + v] as usize;
                if let (Some(n), Some(m)) = (mesh.normals.get(v), wfb.get(d)) {
                    normals[base + v] = m.transform_vector3(*n).normalize_or_zero();
                }
            }
            for t in mesh.indices.chunks_exact(3) {
                let [a, b, c] = [t[0], t[1], t[2]].map(|i| base + i as usize);
                if a.max(b).max(c) < x.len() && [a, b, c].iter().all(|&i| weights[i] > 0.0) {
                    let g = (x[a] + x[b] + x[c]) / 3.0;
                    if g.is_finite() {
                        samples.push(g);
                    }
                }
            }
            base += mesh.positions.len();
        }

        let mut frame = ProxyFrame::default();
        let mut gap = vec![0.0f32; x.len()];
        let mut sphere_of = vec![0u32; x.len()];
        let mut added = 0;
        let measure =
            |px: &Proxies, frame: &mut ProxyFrame, gap: &mut [f32], sphere_of: &mut [u32]| -> f32 {
                px.update(&wfb, frame);
                let hulls = Hulls::new(&frame.center, &frame.radius, &px.capsules);
                let mut hint = 0;
                let mut within = 0.0;
                for &v in &used {
                    let (d, t, i) = hulls.nearest(x[v], hint);
                    hint = i;
                    gap[v] = d;
                    let [a, b] = px.capsules[i];
                    sphere_of[v] = if t < 0.5 { a } else { b };
                    if d.abs() <= tol {
                        within += weights[v];
                    }
                }
                within / total
            };
        for _ in 0..COVER_ROUNDS {
            if measure(px, &mut frame, &mut gap, &mut sphere_of) >= opts.cover_target {
                return;
            }
            // 1. Bulges.
            let mut excess: Vec<Vec<f32>> = vec![Vec::new(); px.joint.len()];
            for &v in &used {
                if gap[v] < -tol {
                    excess[sphere_of[v] as usize].push(-gap[v] - tol);
                }
            }
            for (s, e) in excess.iter_mut().enumerate() {
                if e.is_empty() {
                    continue;
                }
                let r = frame.radius[s];
                let shrink = (percentile(e, 0.9) + 0.25 * tol).min(0.5 * r);
                let world_per_bind = r / px.radius[s].max(f32::MIN_POSITIVE);
                px.radius[s] = (r - shrink).max(COVER_MIN_RADIUS.min(r)) / world_per_bind;
            }
            if measure(px, &mut frame, &mut gap, &mut sphere_of) >= opts.cover_target {
                return;
            }
            // 2. Medial spheres where the skin is far outside.
            let mut cand: Vec<usize> = used
                .iter()
                .copied()
                .filter(|&v| gap[v] > tol && normals[v] != Vec3::ZERO)
                .collect();
            cand.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
            let mut done = vec![false; x.len()];
            for &p in &cand {
                if done[p] {
                    continue;
                }
                done[p] = true;
                if added >= opts.max_cover_spheres {
                    return;
                }
                let r = shrinking_ball(x[p], normals[p], &samples);
                if !(COVER_MIN_RADIUS..=COVER_MAX_RADIUS).contains(&r) {
                    continue;
                }
                let c = x[p] - normals[p] * r;
                let k = self.dominant[p] as usize;
                let id = px.joint.len() as u32;
                px.joint.push(k as u32);
                px.center_in_bind
                    .push(self.bind_from_world[k].transform_point3(c));
                px.radius.push(r / self.metres_per_unit[k]);
                px.capsules.push([id, id]);
                added += 1;
                for &q in &cand {
                    if !done[q] && ((x[q] - c).length() - r).abs() <= tol {
                        done[q] = true;
                    }
                }
            }
        }
    }
}
