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
    /// Of those, vertices of open sheets (and not hidden): not fitted, met by the skin contact
    /// from either side (`sheets.rs`; counted by [`quality_at_bind`], 0 from [`quality`]).
    pub sheets: usize,
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
        sheets: 0,
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
        // Open sheets are not fitted (`sheets.rs`): no proxy is meant to cover them.
        let sheet = super::sheets::sheet_vertices(rig, skin);
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
                if d as usize >= nj
                    || self.skipped_joints.contains(&d)
                    || hidden[base + v]
                    || sheet[base + v]
                {
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
    let hidden = hidden_vertices(&meshes);
    q.hidden = hidden.iter().filter(|&&h| h).count();
    q.sheets = super::sheets::sheet_vertices(rig, skin)
        .iter()
        .zip(&hidden)
        .filter(|&(&s, &h)| s && !h)
        .count();
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
                " ({} left out: {} hidden inside another part, ",
                self.ignored, self.hidden
            )?;
            if self.sheets > 0 {
                write!(f, "{} of open sheets, not fitted, ", self.sheets)?;
            }
            write!(f, "the rest of skipped bones)")?;
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

/// How far the proxies and the skin stand off each other at the bind pose, both ways, in world
/// space (metres): the skin standing out of the proxies (cloth resting on the proxies sinks
/// that deep into the visible skin, less its thickness) and the proxies standing out of the skin
/// (cloth resting there floats that far off the body). See [`stand_off_at_bind`].
#[derive(Clone, Debug, PartialEq)]
pub struct StandOff {
    /// Skin: area shares farther than 3 mm, 5 mm and 1 cm outside every proxy.
    pub skin_out_3mm: f32,
    pub skin_out_5mm: f32,
    pub skin_out_10mm: f32,
    /// Skin: 99th percentile (area) and largest distance outside the proxies (0 when inside).
    pub skin_out_p99: f32,
    pub skin_out_max: f32,
    /// Proxy union surface: area shares farther than 5 mm, 1 cm and 2 cm outside the skin.
    pub proxy_off_5mm: f32,
    pub proxy_off_10mm: f32,
    pub proxy_off_20mm: f32,
    /// Proxy union surface: mean, 95th percentile and largest distance outside the skin (0 where
    /// the proxy surface lies inside the skin).
    pub proxy_off_mean: f32,
    pub proxy_off_p95: f32,
    pub proxy_off_max: f32,
    /// Surface samples of the union measured.
    pub proxy_off_samples: usize,
    /// Per joint whose spheres carry union surface: (joint name, share of the union's area,
    /// mean distance off the skin), the largest contributions (share × mean) first.
    pub proxy_off_by_joint: Vec<(String, f32, f32)>,
}

/// Area-weighted quantile of `(value, weight)` pairs (sorts them).
fn weighted_quantile(v: &mut [(f32, f32)], q: f32) -> f32 {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f32 = v.iter().map(|x| x.1).sum();
    let mut acc = 0.0;
    for x in v.iter() {
        acc += x.1;
        if acc >= q * total {
            return x.0;
        }
    }
    v.last().map_or(0.0, |x| x.0)
}

/// [`StandOff`] at the bind pose. The skin side weighs every measured vertex by its area (as
/// [`quality_at_bind`]). The proxy side samples the surface of every collider about every
/// 7 mm (a Fibonacci lattice of directions around points along its axis, each projected onto
/// the collider's surface), keeps the samples on the surface of the union (not more than 0.5 mm
/// inside another collider), weighs each by its share of its collider's area, and measures how
/// far it lies outside the skin: the generalized winding number of every mesh bound to the skin
/// (the same test as `drape check`, [`crate::check::SkinQuery`]) and the distance to the nearest
/// triangle.
pub fn stand_off_at_bind(rig: &Rig, skin: usize, proxies: &Proxies) -> StandOff {
    use crate::check::SkinQuery;
    let (wfb, x) = rest_skin(rig, skin);
    let mut frame = ProxyFrame::default();
    proxies.update(&wfb, &mut frame);
    let weights = proxies.surface_weights(rig, skin);
    let hulls = Hulls::new(&frame.center, &frame.radius, &proxies.capsules);

    // Skin standing out of the proxies.
    let mut out: Vec<(f32, f32)> = Vec::new();
    let mut hint = 0;
    for (v, &p) in x.iter().enumerate() {
        let w = weights.get(v).copied().unwrap_or(0.0);
        if w <= 0.0 || !p.is_finite() || proxies.capsules.is_empty() {
            continue;
        }
        let (d, _, i) = hulls.nearest(p, hint);
        hint = i;
        out.push((d.max(0.0), w));
    }
    let total: f32 = out.iter().map(|o| o.1).sum::<f32>().max(f32::MIN_POSITIVE);
    let share = |v: &[(f32, f32)], lim: f32, total: f32| {
        (0.0 + v.iter().filter(|o| o.0 > lim).map(|o| o.1).sum::<f32>()) / total
    };
    let (skin_out_3mm, skin_out_5mm, skin_out_10mm) = (
        share(&out, 0.003, total),
        share(&out, 0.005, total),
        share(&out, 0.010, total),
    );
    let skin_out_max = out.iter().map(|o| o.0).fold(0.0, f32::max);
    let skin_out_p99 = weighted_quantile(&mut out, 0.99);

    // Proxy surface standing out of the skin.
    let mut positions: Vec<(Vec<Vec3>, &[u32])> = Vec::new();
    let mut base = 0;
    for mesh in rig.meshes.iter().filter(|m| m.skin == Some(skin as u32)) {
        let n = mesh.positions.len();
        positions.push((x[base..base + n].to_vec(), &mesh.indices));
        base += n;
    }
    let query = SkinQuery::from_meshes(positions.iter().map(|(p, i)| (&p[..], *i)));
    let step = 0.007f32;
    let mut samples: Vec<(Vec3, f32, u32)> = Vec::new();
    for &[a, b] in &proxies.capsules {
        let joint = proxies.joint[a as usize];
        let (a, b) = (a as usize, b as usize);
        let (c1, r1, c2, r2) = (
            frame.center[a],
            frame.radius[a],
            frame.center[b],
            frame.radius[b],
        );
        let len = (c2 - c1).length();
        let rmax = r1.max(r2);
        // Points along the axis, and directions around each.
        let rows = ((len / step).ceil() as usize + 1).max(1);
        let dirs = ((4.0 * std::f32::consts::PI * rmax * rmax / (step * step)).ceil() as usize)
            .clamp(16, 4000);
        let area =
            4.0 * std::f32::consts::PI * rmax * rmax + std::f32::consts::PI * (r1 + r2) * len;
        let mut local = Vec::new();
        for row in 0..rows {
            let t = if rows > 1 {
                row as f32 / (rows - 1) as f32
            } else {
                0.0
            };
            let c = c1.lerp(c2, t);
            let r = r1 + (r2 - r1) * t;
            // Fibonacci lattice on the unit sphere.
            for k in 0..dirs {
                let z = 1.0 - 2.0 * (k as f32 + 0.5) / dirs as f32;
                let rho = (1.0 - z * z).max(0.0).sqrt();
                let phi = k as f32 * 2.399_963_2;
                let d = Vec3::new(rho * phi.cos(), rho * phi.sin(), z);
                let q = c + d * (r + 0.01);
                let cl =
                    super::capsule::tapered_capsule_closest(q.into(), c1.into(), r1, c2.into(), r2);
                let s = q - Vec3::from(cl.normal) * cl.distance;
                local.push(s);
            }
        }
        // Thin the samples of this collider to about one per step² (rows overlap on the caps).
        let mut kept: Vec<Vec3> = Vec::new();
        let mut grid: std::collections::HashSet<(i32, i32, i32)> = Default::default();
        for s in local {
            let key = (
                (s.x / step).floor() as i32,
                (s.y / step).floor() as i32,
                (s.z / step).floor() as i32,
            );
            if grid.insert(key) {
                kept.push(s);
            }
        }
        let w = area / kept.len().max(1) as f32;
        for s in kept {
            let (d, _, _) = hulls.nearest(s, 0);
            if d >= -5e-4 {
                samples.push((s, w, joint));
            }
        }
    }
    let off: Vec<(f32, f32)> = {
        use rayon::prelude::*;
        samples
            .par_iter()
            .map(|&(s, w, _)| {
                let q = query.query(s);
                let d = if q.is_inside() {
                    0.0
                } else {
                    query.nearest(s, f32::INFINITY).map_or(0.0, |(d, _)| d)
                };
                (d, w)
            })
            .collect()
    };
    let total_p: f32 = off.iter().map(|o| o.1).sum::<f32>().max(f32::MIN_POSITIVE);
    let mut off_sorted = off.clone();
    let nj = rig.skins.get(skin).map_or(0, |s| s.joints.len());
    let mut per = vec![(0.0f32, 0.0f32); nj];
    for (o, smp) in off.iter().zip(&samples) {
        if let Some(p) = per.get_mut(smp.2 as usize) {
            p.0 += o.1;
            p.1 += o.0 * o.1;
        }
    }
    let mut by_joint: Vec<(String, f32, f32)> = per
        .iter()
        .enumerate()
        .filter(|(_, p)| p.0 > 0.0)
        .map(|(k, p)| {
            let node = rig.skins[skin].joints[k] as usize;
            (rig.skeleton.names[node].clone(), p.0 / total_p, p.1 / p.0)
        })
        .collect();
    by_joint.sort_by(|a, b| (b.1 * b.2).total_cmp(&(a.1 * a.2)));
    StandOff {
        skin_out_3mm,
        skin_out_5mm,
        skin_out_10mm,
        skin_out_p99,
        skin_out_max,
        proxy_off_5mm: share(&off, 0.005, total_p),
        proxy_off_10mm: share(&off, 0.010, total_p),
        proxy_off_20mm: share(&off, 0.020, total_p),
        proxy_off_mean: (0.0 + off.iter().map(|o| o.0 * o.1).sum::<f32>()) / total_p,
        proxy_off_p95: weighted_quantile(&mut off_sorted, 0.95),
        proxy_off_max: off.iter().map(|o| o.0).fold(0.0, f32::max),
        proxy_off_samples: off.len(),
        proxy_off_by_joint: by_joint,
    }
}

impl fmt::Display for StandOff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "skin out of the proxies: {:.1} % of the surface > 3 mm, {:.1} % > 5 mm, {:.1} % > 1 cm; \
             99th percentile {:.1} mm, max {:.1} mm",
            100.0 * self.skin_out_3mm,
            100.0 * self.skin_out_5mm,
            100.0 * self.skin_out_10mm,
            1000.0 * self.skin_out_p99,
            1000.0 * self.skin_out_max
        )?;
        write!(
            f,
            "proxies off the skin (over-cover, {} samples of the union's surface): {:.1} % > 5 mm, \
             {:.1} % > 1 cm, {:.1} % > 2 cm; mean {:.1} mm, 95th percentile {:.1} mm, max {:.1} mm",
            self.proxy_off_samples,
            100.0 * self.proxy_off_5mm,
            100.0 * self.proxy_off_10mm,
            100.0 * self.proxy_off_20mm,
            1000.0 * self.proxy_off_mean,
            1000.0 * self.proxy_off_p95,
            1000.0 * self.proxy_off_max
        )
    }
}
