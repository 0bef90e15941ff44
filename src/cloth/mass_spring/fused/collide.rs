//! The fused band's stage `collide`: every collider in 8-wide loops over a block (planes and
//! spheres branch-free, capsules and the rare second pass through `collide::resolve_prepared`).

use super::*;
use crate::cloth::collide;

/// One collider as the band loops see it at the end of the substep.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// Free side `(x − o)·n ≥ 0`.
    Plane {
        o: [f32; 3],
        n: [f32; 3],
    },
    Sphere {
        c: [f32; 3],
        r: f32,
    },
    /// A capsule (or anything else): per particle through `collide::resolve_prepared`.
    Other,
}

/// The collider's surface motion over the substep that friction measures sliding against
/// (`Shape::surface_displacement`): a constant for a plane (or mismatched shapes: zero), or
/// `dc + n dr` for a sphere.
#[derive(Clone, Copy, Debug)]
enum Surface {
    Fixed([f32; 3]),
    Sphere { dc: [f32; 3], dr: f32 },
}

#[derive(Clone, Copy, Debug)]
pub(super) struct KernelCollider {
    kind: Kind,
    surface: Surface,
    /// Bounds at the substep's end (infinite for a plane).
    lo: [f32; 3],
    hi: [f32; 3],
}

impl KernelCollider {
    pub(super) fn new(end: &Shape, start: &Shape, bounds: (Vec3A, Vec3A)) -> Self {
        let a3 = |v: Vec3A| [v.x, v.y, v.z];
        let (kind, surface) = match (*end, *start) {
            (Shape::Plane { point, normal }, _) => (
                Kind::Plane {
                    o: a3(point),
                    n: a3(normal),
                },
                // For planes the normal argument is unused.
                Surface::Fixed(a3(end.surface_displacement(start, Vec3A::ZERO, 0.0))),
            ),
            (
                Shape::Sphere { centre, radius },
                Shape::Sphere {
                    centre: c0,
                    radius: r0,
                },
            ) => (
                Kind::Sphere {
                    c: a3(centre),
                    r: radius,
                },
                Surface::Sphere {
                    dc: a3(centre - c0),
                    dr: radius - r0,
                },
            ),
            (Shape::Sphere { centre, radius }, _) => (
                Kind::Sphere {
                    c: a3(centre),
                    r: radius,
                },
                Surface::Fixed([0.0; 3]),
            ),
            _ => (Kind::Other, Surface::Fixed([0.0; 3])),
        };
        KernelCollider {
            kind,
            surface,
            lo: a3(bounds.0),
            hi: a3(bounds.1),
        }
    }
}

/// Stage `collide` on one block of the band, then its write-back of positions, velocities
/// and contact records into `out` from `k`. Returns the number of particles in contact.
#[inline(always)]
pub(super) fn collide(
    ctx: &Ctx,
    b: &mut Band,
    o: usize,
    i0: usize,
    m: usize,
    out: &mut BandOut,
    k: usize,
) -> u32 {
    let w = &ctx.inv_mass[i0..i0 + m];
    let th = &ctx.thickness[i0..i0 + m];
    let mu = &ctx.friction[i0..i0 + m];
    let en = &ctx.extra[i0..i0 + m];
    let margin = ctx.margin;
    b.gap[..m].fill(f32::INFINITY);
    for a in b.nrm.iter_mut() {
        a[..m].fill(0.0);
    }
    b.which[..m].fill(u32::MAX);
    b.touched[..m].fill(0);
    let [px, py, pz, ..] = &b.pv;
    let start = [&px[o..o + m], &py[o..o + m], &pz[o..o + m]];
    for (ci, col) in ctx.colliders.iter().enumerate() {
        let lanes = Lanes {
            start,
            w,
            th,
            mu,
            en,
            margin,
            ci: ci as u32,
            lo: col.lo,
            hi: col.hi,
            surface: col.surface,
        };
        let [cx, cy, cz] = &mut b.cur;
        let [nx, ny, nz] = &mut b.nrm;
        let st = LaneState {
            cur: [&mut cx[..m], &mut cy[..m], &mut cz[..m]],
            gap: &mut b.gap[..m],
            nrm: [&mut nx[..m], &mut ny[..m], &mut nz[..m]],
            which: &mut b.which[..m],
            touched: &mut b.touched[..m],
        };
        match col.kind {
            Kind::Plane { o, n } => lanes.plane(st, o, n),
            Kind::Sphere { c, r } => lanes.sphere(st, c, r),
            Kind::Other => {
                for j in 0..m {
                    if w[j] > 0.0 {
                        let mut x = Vec3A::new(st.cur[0][j], st.cur[1][j], st.cur[2][j]);
                        let xs = Vec3A::new(start[0][j], start[1][j], start[2][j]);
                        if let Some(h) = apply(ctx, ci, &mut x, xs, th[j], mu[j], en[j]) {
                            st.touched[j] += 1;
                            if h.gap < st.gap[j] {
                                st.gap[j] = h.gap;
                                st.nrm[0][j] = h.normal.x;
                                st.nrm[1][j] = h.normal.y;
                                st.nrm[2][j] = h.normal.z;
                                st.which[j] = ci as u32;
                            }
                        }
                        st.cur[0][j] = x.x;
                        st.cur[1][j] = x.y;
                        st.cur[2][j] = x.z;
                    }
                }
            }
        }
    }
    // The second pass, for particles squeezed between two colliders: every collider again,
    // per particle.
    // A vectorised max first: the per-particle scan below is scalar and nearly always finds
    // nobody (callgrind: ~9 instructions per particle-substep on the N = 100 bench).
    let squeezed = || b.touched[..m].iter().fold(0u32, |a, &t| a.max(t)) >= 2;
    if ctx.colliders.len() >= 2 && squeezed() {
        for j in 0..m {
            if b.touched[j] < 2 {
                continue;
            }
            let mut x = Vec3A::new(b.cur[0][j], b.cur[1][j], b.cur[2][j]);
            let xs = Vec3A::new(start[0][j], start[1][j], start[2][j]);
            for ci in 0..ctx.colliders.len() {
                if let Some(h) = apply(ctx, ci, &mut x, xs, th[j], mu[j], en[j]) {
                    if h.gap < b.gap[j] {
                        b.gap[j] = h.gap;
                        b.nrm[0][j] = h.normal.x;
                        b.nrm[1][j] = h.normal.y;
                        b.nrm[2][j] = h.normal.z;
                        b.which[j] = ci as u32;
                    }
                }
            }
            b.cur[0][j] = x.x;
            b.cur[1][j] = x.y;
            b.cur[2][j] = x.z;
        }
    }
    // Write-back, lane-interleaved stores (w lane = z, as `Vec3A::new` does): x, v from the
    // segment start (the old x), contact records.
    let inv_dt = ctx.inv_dt;
    let [cx, cy, cz] = &b.cur;
    let (cx, cy, cz) = (&cx[..m], &cy[..m], &cz[..m]);
    let [nx, ny, nz] = &b.nrm;
    let (nx, ny, nz) = (&nx[..m], &ny[..m], &nz[..m]);
    let (gap, which) = (&b.gap[..m], &b.which[..m]);
    let xo = &mut lanes_mut(out.x)[4 * k..4 * (k + m)];
    let vo = &mut lanes_mut(out.v)[4 * k..4 * (k + m)];
    let no = &mut lanes_mut(out.normal)[4 * k..4 * (k + m)];
    let (go, wo) = (&mut out.gap[k..k + m], &mut out.which[k..k + m]);
    let mut contacts = 0u32;
    let mut massless = false;
    for j in 0..m {
        xo[4 * j] = cx[j];
        xo[4 * j + 1] = cy[j];
        xo[4 * j + 2] = cz[j];
        xo[4 * j + 3] = cz[j];
        let vz = (cz[j] - start[2][j]) * inv_dt;
        vo[4 * j] = (cx[j] - start[0][j]) * inv_dt;
        vo[4 * j + 1] = (cy[j] - start[1][j]) * inv_dt;
        vo[4 * j + 2] = vz;
        vo[4 * j + 3] = vz;
        no[4 * j] = nx[j];
        no[4 * j + 1] = ny[j];
        no[4 * j + 2] = nz[j];
        no[4 * j + 3] = nz[j];
        go[j] = gap[j];
        wo[j] = which[j];
        contacts += (which[j] != u32::MAX) as u32;
        massless |= w[j] == 0.0;
    }
    // A massless particle kept its x_prev (pins are placed after the pass anyway).
    if massless {
        for j in 0..m {
            if w[j] == 0.0 {
                let x = Vec3A::new(cx[j], cy[j], cz[j]);
                out.v[k + j] = (x - ctx.xp_old[i0 + j]) * inv_dt;
            }
        }
    }
    contacts
}

/// One collider against one particle, as the staged stage's `apply`: the box test, then
/// `collide::resolve_prepared`.
#[inline]
fn apply(
    ctx: &Ctx,
    ci: usize,
    x: &mut Vec3A,
    xs: Vec3A,
    t: f32,
    mu: f32,
    en: f32,
) -> Option<collide::Contact> {
    let reach = t + ctx.margin;
    let (blo, bhi) = ctx.bounds[ci];
    if x.cmplt(blo - reach).any() || x.cmpgt(bhi + reach).any() {
        return None;
    }
    collide::resolve_prepared(
        x,
        xs,
        &ctx.prepared[ci],
        &ctx.shapes_end[ci],
        &ctx.shapes_start[ci],
        t,
        ctx.margin,
        mu,
        en,
    )
}

/// Per-particle inputs of one collider's loop.
struct Lanes<'a> {
    /// Start of the substep segment (x_prev after integrate): the old position.
    start: [&'a [f32]; 3],
    w: &'a [f32],
    th: &'a [f32],
    mu: &'a [f32],
    en: &'a [f32],
    margin: f32,
    ci: u32,
    lo: [f32; 3],
    hi: [f32; 3],
    surface: Surface,
}

/// Per-particle state the collider loops update.
struct LaneState<'a> {
    cur: [&'a mut [f32]; 3],
    gap: &'a mut [f32],
    nrm: [&'a mut [f32]; 3],
    which: &'a mut [u32],
    touched: &'a mut [u32],
}

impl Lanes<'_> {
    /// The per-particle box test of the staged stage (`outside`): exact, the box grown by the
    /// reach holds every point within reach.
    #[inline(always)]
    fn outside(&self, x: f32, y: f32, z: f32, reach: f32) -> bool {
        let (lo, hi) = (self.lo, self.hi);
        (x < lo[0] - reach)
            | (y < lo[1] - reach)
            | (z < lo[2] - reach)
            | (x > hi[0] + reach)
            | (y > hi[1] + reach)
            | (z > hi[2] + reach)
    }

    /// `collide::respond` for the lanes within reach, and the nearest-contact record; `dist`
    /// is the signed distance and `n` the normal of `closest_within`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn respond(
        &self,
        st: &mut LaneState,
        j: usize,
        within: bool,
        dist: f32,
        n: [f32; 3],
        p: [f32; 3],
    ) {
        let t = self.th[j];
        let depth = t - dist;
        // Negated on purpose, as in `respond`'s `depth <= 0` early return: NaN pushes.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let push = within & !(depth <= 0.0);
        // x += n depth
        let q = [
            p[0] + n[0] * depth,
            p[1] + n[1] * depth,
            p[2] + n[2] * depth,
        ];
        let ds = match self.surface {
            Surface::Fixed(d) => d,
            Surface::Sphere { dc, dr } => [dc[0] + n[0] * dr, dc[1] + n[1] * dr, dc[2] + n[2] * dr],
        };
        // d_rel = (x − x_start) − d_surface; d_t = d_rel − n (d_rel·n)
        let s = self.start;
        let dr = [
            (q[0] - s[0][j]) - ds[0],
            (q[1] - s[1][j]) - ds[1],
            (q[2] - s[2][j]) - ds[2],
        ];
        let dn = dr[0] * n[0] + dr[1] * n[1] + dr[2] * n[2];
        let d_t = [dr[0] - n[0] * dn, dr[1] - n[1] * dn, dr[2] - n[2] * dn];
        let lt = (d_t[0] * d_t[0] + d_t[1] * d_t[1] + d_t[2] * d_t[2]).sqrt();
        let keep = 1.0 - self.mu[j] * (depth + self.en[j]) / lt;
        // f32::max(keep, 0.0), NaN → 0 (keep is never −0: 1 − a rounds to +0).
        let keep = if keep > 0.0 { keep } else { 0.0 };
        let f = 1.0 - keep;
        let slide = lt > 0.0;
        let r = if slide {
            [q[0] - d_t[0] * f, q[1] - d_t[1] * f, q[2] - d_t[2] * f]
        } else {
            q
        };
        let r = if push { r } else { p };
        st.cur[0][j] = r[0];
        st.cur[1][j] = r[1];
        st.cur[2][j] = r[2];
        let gap = if push { t } else { dist };
        let nearer = within & (gap < st.gap[j]);
        st.gap[j] = if nearer { gap } else { st.gap[j] };
        st.nrm[0][j] = if nearer { n[0] } else { st.nrm[0][j] };
        st.nrm[1][j] = if nearer { n[1] } else { st.nrm[1][j] };
        st.nrm[2][j] = if nearer { n[2] } else { st.nrm[2][j] };
        st.which[j] = if nearer { self.ci } else { st.which[j] };
        st.touched[j] += within as u32;
    }

    /// A plane (`PreparedShape::closest_within`'s plane case) against every lane.
    #[inline(always)]
    fn plane(&self, mut st: LaneState, o: [f32; 3], n: [f32; 3]) {
        for j in 0..st.gap.len() {
            let p = [st.cur[0][j], st.cur[1][j], st.cur[2][j]];
            let reach = self.th[j] + self.margin;
            let dist = (p[0] - o[0]) * n[0] + (p[1] - o[1]) * n[1] + (p[2] - o[2]) * n[2];
            let within =
                (self.w[j] > 0.0) & !self.outside(p[0], p[1], p[2], reach) & (dist < reach);
            self.respond(&mut st, j, within, dist, n, p);
        }
    }

    /// A sphere (`PreparedShape::closest_within`'s sphere case) against every lane.
    #[inline(always)]
    fn sphere(&self, mut st: LaneState, c: [f32; 3], r: f32) {
        for j in 0..st.gap.len() {
            let p = [st.cur[0][j], st.cur[1][j], st.cur[2][j]];
            let reach = self.th[j] + self.margin;
            let d = [p[0] - c[0], p[1] - c[1], p[2] - c[2]];
            let l2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let out = r + reach;
            let l = l2.sqrt();
            let dist = l - r;
            // Negated on purpose: `closest_within` rejects with `>=`, so NaN is within.
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            let within = (self.w[j] > 0.0)
                & !self.outside(p[0], p[1], p[2], reach)
                & !(l2 >= out * out)
                & !(dist >= reach);
            let nz = l > 1e-12;
            let n = if nz {
                [d[0] / l, d[1] / l, d[2] / l]
            } else {
                [0.0, 1.0, 0.0]
            };
            self.respond(&mut st, j, within, dist, n, p);
        }
    }
}
