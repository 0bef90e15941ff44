//! How well the proxies match the skin: the share of the skin surface within a tolerance of a
//! proxy surface, the gaps, per joint; and their text report.

use super::capsule::Hulls;
use super::fit::dominant_joint;
use super::frame::world_from_bind;
use super::{Proxies, ProxyFrame};
use crate::body::surface::hidden_vertices;
use crate::math::{Mat4, Vec3};
use crate::rig::{Rig, SkinnedMesh};
use std::fmt;

/// How well the proxies match the skin, in world space (metres), weighted by surface area.
#[derive(Clone, Debug, PartialEq)]
pub struct ProxyQuality {
    pub spheres: usize,
    pub capsules: usize,
    /// Vertices measured (those with a non-zero weight).
    pub vertices: usize,
    /// Vertices left out (skipped bones, hidden inside another part, zero weight).
    pub ignored: usize,
    /// Of those, vertices hidden inside another closed part of the skin ([`quality_at_bind`]
    /// counts them; [`quality`] does not know and reports 0).
    pub hidden: usize,
    /// Share of the skin surface inside the proxy union (signed distance ≤ 0.5 mm), 0..1.
    pub coverage: f32,
    /// Share of the skin surface within `tolerance` of a proxy surface (|signed distance|), 0..1.
    pub within: f32,
    /// The tolerance of `within`, metres.
    pub tolerance: f32,
    /// Mean |signed distance| from skin to proxy surface, metres.
    pub mean_gap: f32,
    /// 95th percentile of |signed distance|, metres.
    pub p95_gap: f32,
    /// Largest distance of a skin vertex outside the proxies, metres.
    pub max_outside: f32,
    /// Largest depth of a skin vertex inside the proxies, metres.
    pub max_inside: f32,
}

/// Tolerance of [`ProxyQuality::within`]: metres, 0.015 (the target: ≥ 95 % of the body
/// surface within 1.5 cm of a proxy surface).
pub const QUALITY_TOLERANCE: f32 = 0.015;

/// Measures proxies posed as `frame` against skin vertices `x_world` (same space, metres), each
/// weighted by `weight` (its share of surface area; 0 leaves it out; an empty slice weighs all
/// vertices alike). Inside a collider the gap is the depth in the deepest one (see
/// [`union_sdf`](super::union_sdf)).
pub fn quality(
    frame: &ProxyFrame,
    capsules: &[[u32; 2]],
    x_world: &[Vec3],
    weight: &[f32],
) -> ProxyQuality {
    let mut gaps: Vec<(f32, f32)> = Vec::with_capacity(x_world.len());
    let mut ignored = 0;
    let hulls = Hulls::new(&frame.center, &frame.radius, capsules);
    let mut hint = 0;
    for (i, &x) in x_world.iter().enumerate() {
        let w = if weight.is_empty() {
            1.0
        } else {
            weight.get(i).copied().unwrap_or(0.0)
        };
        if w <= 0.0 || !x.is_finite() {
            ignored += 1;
            continue;
        }
        let d = if capsules.is_empty() {
            f32::INFINITY
        } else {
            let (d, _, i) = hulls.nearest(x, hint);
            hint = i;
            d
        };
        gaps.push((d, w));
    }
    let total: f32 = (0.0 + gaps.iter().map(|g| g.1).sum::<f32>()).max(f32::MIN_POSITIVE);
    let share =
        // `+ 0.0`: an empty float sum is −0.0, which would print as "-0.0 %".
        |f: &dyn Fn(f32) -> bool| (0.0 + gaps.iter().filter(|g| f(g.0)).map(|g| g.1).sum::<f32>()) / total;
    let coverage = share(&|d| d <= 5e-4);
    let within = share(&|d| d.abs() <= QUALITY_TOLERANCE);
    let mean_gap = (0.0 + gaps.iter().map(|g| g.0.abs() * g.1).sum::<f32>()) / total;
    let mut sorted: Vec<(f32, f32)> = gaps.iter().map(|g| (g.0.abs(), g.1)).collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut acc = 0.0;
    let mut p95_gap = sorted.last().map_or(0.0, |s| s.0);
    for s in &sorted {
        acc += s.1;
        if acc >= 0.95 * total {
            p95_gap = s.0;
            break;
        }
    }
    ProxyQuality {
        spheres: frame.center.len(),
        capsules: capsules.len(),
        vertices: gaps.len(),
        ignored,
        hidden: 0,
        coverage,
        within,
        tolerance: QUALITY_TOLERANCE,
        mean_gap,
        p95_gap,
        max_outside: gaps.iter().map(|g| g.0).fold(0.0, f32::max),
        max_inside: gaps.iter().map(|g| -g.0).fold(0.0, f32::max),
    }
}

impl Proxies {
    /// Per-vertex surface weights for [`quality`], for the vertices of every mesh bound to
    /// `rig.skins[skin]` in mesh order (the order the skinning stage writes them): a third of
    /// the area of each triangle around the vertex, in bind units², and 0 for vertices of skipped
    /// bones and for vertices hidden inside another closed part of the skin (no body surface, see
    /// [`crate::body::surface`]). A mesh without triangles weighs its vertices alike.
    pub fn surface_weights(&self, rig: &Rig, skin: usize) -> Vec<f32> {
        let nj = rig.skins.get(skin).map_or(0, |s| s.joints.len());
        let meshes: Vec<&SkinnedMesh> = rig
            .meshes
            .iter()
            .filter(|m| m.skin == Some(skin as u32))
            .collect();
        let hidden = hidden_vertices(&meshes);
        let mut out = Vec::new();
        for mesh in meshes {
            let base = out.len();
            out.resize(base + mesh.positions.len(), 0.0);
            let mut any = false;
            for t in mesh.indices.chunks_exact(3) {
                let (i, j, k) = (t[0] as usize, t[1] as usize, t[2] as usize);
                if i.max(j).max(k) >= mesh.positions.len() {
                    continue;
                }
                let (a, b, c) = (mesh.positions[i], mesh.positions[j], mesh.positions[k]);
                let area = 0.5 * (b - a).cross(c - a).length();
                if area.is_finite() {
                    for v in [i, j, k] {
                        out[base + v] += area / 3.0;
                    }
                    any = true;
                }
            }
            if !any {
                out[base..].iter_mut().for_each(|w| *w = 1.0);
            }
            for v in 0..mesh.positions.len() {
                let d = dominant_joint(mesh, v, nj);
                if d as usize >= nj || self.skipped_joints.contains(&d) || hidden[base + v] {
                    out[base + v] = 0.0;
                }
            }
        }
        out
    }
}

/// The skin matrices at rest and every skin vertex of `rig.skins[skin]` (mesh order) placed in
/// world space with them (linear blend); NaN for a vertex without a usable weight.
pub(super) fn rest_skin(rig: &Rig, skin: usize) -> (Vec<Mat4>, Vec<Vec3>) {
    let mut wfb = Vec::new();
    if let Some(s) = rig.skins.get(skin) {
        world_from_bind(&rig.skeleton.rest_world(), s, &mut wfb);
    }
    let mut x = Vec::new();
    for mesh in rig.meshes.iter().filter(|m| m.skin == Some(skin as u32)) {
        for v in 0..mesh.positions.len() {
            let p = mesh.positions[v];
            let mut acc = Vec3::ZERO;
            let mut wsum = 0.0;
            let sets = [
                (&mesh.joints, &mesh.weights),
                (&mesh.joints1, &mesh.weights1),
            ];
            for (joints, weights) in sets {
                if let (Some(j), Some(w)) = (joints.get(v), weights.get(v)) {
                    for i in 0..4 {
                        if let Some(m) = wfb.get(j[i] as usize) {
                            acc += w[i] * m.transform_point3(p);
                            wsum += w[i];
                        }
                    }
                }
            }
            x.push(if wsum > 0.0 { acc / wsum } else { Vec3::NAN });
        }
    }
    (wfb, x)
}

/// [`quality`] at the bind pose: the skin vertices are placed in world space with the rest skin
/// matrices (linear blend), the proxies with [`Proxies::update`].
pub fn quality_at_bind(rig: &Rig, skin: usize, proxies: &Proxies) -> ProxyQuality {
    let (wfb, x) = rest_skin(rig, skin);
    let mut frame = ProxyFrame::default();
    proxies.update(&wfb, &mut frame);
    let weights = proxies.surface_weights(rig, skin);
    let mut q = quality(&frame, &proxies.capsules, &x, &weights);
    let meshes: Vec<&SkinnedMesh> = rig
        .meshes
        .iter()
        .filter(|m| m.skin == Some(skin as u32))
        .collect();
    q.hidden = hidden_vertices(&meshes).iter().filter(|&&h| h).count();
    q
}

/// How well the proxies fit the skin that one joint dominates, at the bind pose (the
/// [`quality_at_bind`] measure split by each vertex's dominant joint).
#[derive(Clone, Debug, PartialEq)]
pub struct JointQuality {
    /// Skin joint (index into `Skin::joints`).
    pub joint: u32,
    /// The joint's node name.
    pub name: String,
    /// Its share of the measured skin surface, 0..1.
    pub area: f32,
    /// Share of its surface within [`QUALITY_TOLERANCE`] of a proxy surface, 0..1.
    pub within: f32,
    /// Share of its surface deeper than the tolerance inside a proxy (proxies sticking out).
    pub deep: f32,
    /// Share of its surface farther than the tolerance outside every proxy (proxies too thin).
    pub far: f32,
    /// Spheres that follow this joint.
    pub spheres: usize,
}

/// [`quality_at_bind`] per dominant joint, for every joint that dominates measured skin, worst
/// fit (smallest `within`) first.
pub fn quality_by_joint(rig: &Rig, skin: usize, proxies: &Proxies) -> Vec<JointQuality> {
    let Some(s) = rig.skins.get(skin) else {
        return Vec::new();
    };
    let nj = s.joints.len();
    let (wfb, x) = rest_skin(rig, skin);
    let mut frame = ProxyFrame::default();
    proxies.update(&wfb, &mut frame);
    let weights = proxies.surface_weights(rig, skin);
    let hulls = Hulls::new(&frame.center, &frame.radius, &proxies.capsules);
    // Per joint: area, within, deep, far.
    let mut acc = vec![[0.0f64; 4]; nj];
    let mut v = 0;
    let mut hint = 0;
    for mesh in rig.meshes.iter().filter(|m| m.skin == Some(skin as u32)) {
        for i in 0..mesh.positions.len() {
            let w = weights.get(v).copied().unwrap_or(0.0);
            let d = dominant_joint(mesh, i, nj) as usize;
            if w > 0.0 && d < nj && x[v].is_finite() && !proxies.capsules.is_empty() {
                let (g, _, c) = hulls.nearest(x[v], hint);
                hint = c;
                let slot = if g.abs() <= QUALITY_TOLERANCE {
                    1
                } else if g < 0.0 {
                    2
                } else {
                    3
                };
                acc[d][0] += w as f64;
                acc[d][slot] += w as f64;
            }
            v += 1;
        }
    }
    let total: f64 = acc.iter().map(|a| a[0]).sum::<f64>().max(f64::MIN_POSITIVE);
    let mut out: Vec<JointQuality> = (0..nj)
        .filter(|&k| acc[k][0] > 0.0)
        .map(|k| JointQuality {
            joint: k as u32,
            name: rig.skeleton.names[s.joints[k] as usize].clone(),
            area: (acc[k][0] / total) as f32,
            within: (acc[k][1] / acc[k][0]) as f32,
            deep: (acc[k][2] / acc[k][0]) as f32,
            far: (acc[k][3] / acc[k][0]) as f32,
            spheres: proxies.joint.iter().filter(|&&j| j as usize == k).count(),
        })
        .collect();
    out.sort_by(|a, b| a.within.total_cmp(&b.within).then(a.joint.cmp(&b.joint)));
    out
}

impl fmt::Display for ProxyQuality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "proxies: {} spheres, {} capsules",
            self.spheres, self.capsules
        )?;
        write!(f, "skin: {} vertices measured", self.vertices)?;
        if self.ignored > 0 {
            write!(
                f,
                " ({} left out: {} hidden inside another part, the rest of skipped bones)",
                self.ignored, self.hidden
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "coverage: {:.1} % of the skin surface inside the proxies",
            100.0 * self.coverage
        )?;
        writeln!(
            f,
            "fit: {:.1} % of the skin surface within {:.1} cm of a proxy surface (target ≥ 95 %)",
            100.0 * self.within,
            100.0 * self.tolerance
        )?;
        write!(
            f,
            "gap: mean {:.1} mm, 95th percentile {:.1} mm, max outside {:.1} mm, max inside {:.1} mm",
            1000.0 * self.mean_gap,
            1000.0 * self.p95_gap,
            1000.0 * self.max_outside,
            1000.0 * self.max_inside
        )
    }
}
