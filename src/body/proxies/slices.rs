//! A bone cut into cross-sections along its axis: each slice a stadium (a core segment along
//! the section's major axis swept by a radius), and the rows of spheres placed along the bone by
//! interpolating the slices (see the module docs of `proxies`).

use super::fit::{percentile, BindFit};
use super::ProxyOptions;
use crate::math::{Mat3, Vec3};

impl BindFit<'_> {
    /// Cuts one bone's vertices into cross-section slices along its axis (bind space).
    pub(super) fn slice_bone(
        &self,
        k: usize,
        verts: &[u32],
        chain_child: Option<Vec3>,
        opts: &ProxyOptions,
        scratch: &mut Vec<f32>,
    ) -> Option<BoneSlices> {
        let unit_per_m = 1.0 / self.metres_per_unit[k];
        let o = self.joint_pos[k];
        let pts: Vec<Vec3> = verts
            .iter()
            .map(|&v| self.positions[v as usize])
            .filter(|p| p.is_finite())
            .collect();
        if pts.len() < 4 {
            return None;
        }
        let centroid = pts.iter().copied().sum::<Vec3>() / pts.len() as f32;
        let (long_axis, l1, l2) = principal_axes(&pts, centroid);

        // Axis: towards the child joint that continues the chain; an end bone points from its
        // joint to its vertices; a bone whose vertices sit on its joint uses their long axis.
        let axis = chain_child
            .map(|c| c - o)
            .filter(|d| d.length_squared() > 1e-12)
            .or_else(|| Some(centroid - o).filter(|d| d.length_squared() > 1e-12))
            .map(|d| d.normalize())
            .unwrap_or(long_axis);
        // An elongated vertex cloud lying roughly along the bone (a foot whose bone runs from the
        // ankle down to the ball while the foot itself is horizontal) is better cut across its
        // own long axis; a wide, short one (a torso slice) keeps the bone's axis.
        let axis = if l1 >= 2.0 * l2 && long_axis.dot(axis).abs() > std::f32::consts::FRAC_1_SQRT_2
        {
            long_axis * long_axis.dot(axis).signum()
        } else {
            axis
        };
        let (e1, e2) = axis.any_orthonormal_pair();
        // Cross-section principal axes (2-D covariance of the vertices around the axis).
        let (mut a, mut b, mut c) = (0.0f32, 0.0f32, 0.0f32);
        for p in &pts {
            let d = *p - centroid;
            let (x, y) = (d.dot(e1), d.dot(e2));
            a += x * x;
            b += x * y;
            c += y * y;
        }
        let theta = 0.5 * (2.0 * b).atan2(a - c);
        let v_axis = e1 * theta.cos() + e2 * theta.sin();
        let w_axis = axis.cross(v_axis);

        // Slices along u over the robust vertex extent.
        scratch.clear();
        scratch.extend(pts.iter().map(|p| (*p - o).dot(axis)));
        let u_lo = percentile(scratch, 0.01);
        let u_hi = percentile(scratch, 0.99);
        let spacing = opts.row_spacing.max(1e-4) * unit_per_m;
        let span = (u_hi - u_lo).max(0.0);
        // Rounded, not ceiled: a flat end cap whose vertices spread a little along a tilted axis
        // stays one slice instead of being halved.
        let nrows = (steps(span / spacing).round() as usize + 1).clamp(1, opts.max_rows.max(1));
        let du = if nrows > 1 {
            span / (nrows - 1) as f32
        } else {
            1.0
        };
        let bin_of = |u: f32| {
            if nrows > 1 {
                steps((u - u_lo) / du)
                    .round()
                    .clamp(0.0, (nrows - 1) as f32) as usize
            } else {
                0
            }
        };
        let mut bins: Vec<Vec<[f32; 3]>> = vec![Vec::new(); nrows];
        for p in &pts {
            let d = *p - o;
            let u = d.dot(axis);
            bins[bin_of(u)].push([u, d.dot(v_axis), d.dot(w_axis)]);
        }
        let mut slices: Vec<Slice> = Vec::new();
        for (i, bin) in bins.iter().enumerate() {
            if bin.len() < 4 {
                continue;
            }
            scratch.clear();
            scratch.extend(bin.iter().map(|q| q[1]));
            let (v_lo, v_hi) = (percentile(scratch, 0.02), percentile(scratch, 0.98));
            scratch.clear();
            scratch.extend(bin.iter().map(|q| q[2]));
            let (w_lo, w_hi) = (percentile(scratch, 0.02), percentile(scratch, 0.98));
            let (cv, cw) = (0.5 * (v_lo + v_hi), 0.5 * (w_lo + w_hi));
            // Stadium: core half-length = major − minor half-extent.
            let h = (0.5 * (v_hi - v_lo) - 0.5 * (w_hi - w_lo)).max(0.0);
            let u = if nrows > 1 {
                u_lo + du * i as f32
            } else {
                0.5 * (u_lo + u_hi)
            };
            slices.push(Slice {
                u,
                cv,
                cw,
                h,
                r: 0.0,
                bin: i,
            });
        }
        if slices.is_empty() {
            return None;
        }
        // Round or flat: the median, not the largest, core half-length: slices at a junction are
        // cut by the neighbouring part and look flat when the bone is round.
        let h_bone = {
            scratch.clear();
            scratch.extend(slices.iter().map(|s| s.h));
            percentile(scratch, 0.5)
        };
        let flat = h_bone > opts.flat_threshold * unit_per_m;
        if !flat {
            for s in slices.iter_mut() {
                s.h = 0.0;
            }
        }
        // Radii: percentile of the distances to the slice's core segment, in the slice's plane.
        for s in slices.iter_mut() {
            scratch.clear();
            scratch.extend(bins[s.bin].iter().map(|q| {
                let dv = ((q[1] - s.cv).abs() - s.h).max(0.0);
                let dw = q[2] - s.cw;
                (dv * dv + dw * dw).sqrt()
            }));
            s.r = percentile(scratch, opts.percentile).max(1e-3 * unit_per_m);
        }
        // Columns: an odd number spaced so that the dent between neighbours stays under max_dent.
        let ncols = if flat {
            scratch.clear();
            scratch.extend(slices.iter().map(|s| s.r));
            let r_med = percentile(scratch, 0.5);
            let dent = (opts.max_dent * unit_per_m).min(0.5 * r_med);
            let s_max = 2.0
                * (r_med * r_med - (r_med - dent) * (r_med - dent))
                    .max(1e-12)
                    .sqrt();
            let half = (h_bone / s_max).ceil() as usize;
            (1 + 2 * half).min(opts.max_columns.max(1) | 1).max(3)
        } else {
            1
        };
        Some(BoneSlices {
            o,
            axis,
            v_axis,
            w_axis,
            u_lo,
            u_hi,
            spacing,
            ncols,
            slices,
        })
    }
}

/// One cross-section of a bone: a stadium (core segment of half-length `h` along `v`, centred at
/// (`cv`, `cw`) from the axis, swept by radius `r`) at `u` along the axis. Bind units.
pub(super) struct Slice {
    u: f32,
    cv: f32,
    cw: f32,
    h: f32,
    pub(super) r: f32,
    bin: usize,
}

/// A bone's frame and slices, before its rows are placed.
pub(super) struct BoneSlices {
    /// Joint position and bone frame (bind space): `axis` along the bone, `v_axis` the major and
    /// `w_axis` the minor axis of the cross-section.
    o: Vec3,
    axis: Vec3,
    v_axis: Vec3,
    w_axis: Vec3,
    /// Robust extent of the bone's vertices along `axis`.
    u_lo: f32,
    u_hi: f32,
    /// Row spacing, bind units.
    spacing: f32,
    ncols: usize,
    pub(super) slices: Vec<Slice>,
}

impl BoneSlices {
    fn center(&self, s: &Slice) -> Vec3 {
        self.o + self.axis * s.u + self.v_axis * s.cv + self.w_axis * s.cw
    }

    /// Radius of the slice whose centre is nearest to `x`.
    pub(super) fn radius_near(&self, x: Vec3) -> f32 {
        self.slices
            .iter()
            .min_by(|a, b| {
                let da = (self.center(a) - x).length_squared();
                let db = (self.center(b) - x).length_squared();
                da.total_cmp(&db)
            })
            .map_or(0.0, |s| s.r)
    }

    /// Slice parameters at `u`, linearly interpolated (clamped at the ends).
    fn at(&self, u: f32) -> (f32, f32, f32, f32) {
        let sl = &self.slices;
        let first = &sl[0];
        if u <= first.u {
            return (first.cv, first.cw, first.h, first.r);
        }
        for w in sl.windows(2) {
            if u <= w[1].u {
                let t = (u - w[0].u) / (w[1].u - w[0].u).max(1e-12);
                let l = |x: f32, y: f32| x + (y - x) * t;
                return (
                    l(w[0].cv, w[1].cv),
                    l(w[0].cw, w[1].cw),
                    l(w[0].h, w[1].h),
                    l(w[0].r, w[1].r),
                );
            }
        }
        let last = &sl[sl.len() - 1];
        (last.cv, last.cw, last.h, last.r)
    }

    /// Rows between the ends pulled in by `pull_first` and `pull_last` (bind units), evenly
    /// spaced, with the slices interpolated; a single row midway when the ends cross.
    pub(super) fn rows(&self, pull_first: f32, pull_last: f32, opts: &ProxyOptions) -> Vec<Row> {
        let first = &self.slices[0];
        let last = &self.slices[self.slices.len() - 1];
        let a = first.u.min(self.u_lo) + pull_first;
        let b = last.u.max(self.u_hi) - pull_last;
        let us: Vec<f32> = if b <= a {
            let lo = self.u_lo.min(self.u_hi);
            vec![(0.5 * (a + b)).clamp(lo, self.u_hi.max(lo))]
        } else {
            let n =
                (steps((b - a) / self.spacing).ceil() as usize + 1).clamp(2, opts.max_rows.max(2));
            (0..n)
                .map(|i| a + (b - a) * i as f32 / (n - 1) as f32)
                .collect()
        };
        us.iter()
            .map(|&u| {
                let (cv, cw, h, r) = self.at(u);
                let c0 = self.o + self.axis * u + self.v_axis * cv + self.w_axis * cw;
                let centers = if self.ncols == 1 {
                    vec![c0]
                } else {
                    let n = (self.ncols - 1) as f32;
                    (0..self.ncols)
                        .map(|j| c0 + self.v_axis * (h * (2.0 * j as f32 / n - 1.0)))
                        .collect()
                };
                Row { centers, radius: r }
            })
            .collect()
    }
}

pub(super) struct Row {
    pub(super) centers: Vec<Vec3>,
    pub(super) radius: f32,
}

/// A ratio of lengths snapped to 1/1024, before it is rounded to a count: the same character in
/// metres and in centimetres differs in the last float bits, which must not change the count when
/// the ratio lands on a rounding boundary.
fn steps(ratio: f32) -> f32 {
    (ratio * 1024.0).round() / 1024.0
}

/// The direction of largest spread of `pts` and the two largest variances (power iteration on
/// the covariance, then on the covariance with that direction removed).
fn principal_axes(pts: &[Vec3], centroid: Vec3) -> (Vec3, f32, f32) {
    let mut cov = Mat3::ZERO;
    for p in pts {
        let d = *p - centroid;
        cov += Mat3::from_cols(d * d.x, d * d.y, d * d.z);
    }
    cov *= 1.0 / pts.len().max(1) as f32;
    let power = |m: &Mat3| -> (Vec3, f32) {
        let mut x = Vec3::new(0.8, 0.5, 0.3).normalize();
        for _ in 0..64 {
            let y = *m * x;
            if y.length_squared() < 1e-30 {
                return (x, 0.0);
            }
            x = y.normalize();
        }
        (x, x.dot(*m * x))
    };
    let (v1, l1) = power(&cov);
    let deflated = cov - Mat3::from_cols(v1 * v1.x, v1 * v1.y, v1 * v1.z) * l1;
    let (_, l2) = power(&deflated);
    let v1 = if v1.is_finite() && l1 > 0.0 {
        v1
    } else {
        Vec3::Y
    };
    (v1, l1, l2.max(0.0))
}
