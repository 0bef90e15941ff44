//! The fused band's springs: the stencil kernel of `forces::springs_fast` over the band's rows
//! (see the parent module for the bit-identity argument).

use super::*;

/// Copies rows `r0 − 2 .. r1 + 2` of the stencil's positions and velocities into the band's
/// structure-of-arrays scratch.
#[inline(always)]
pub(super) fn gather(st: &GridStencil, b: &mut Band, x: &[Vec3A], v: &[Vec3A]) {
    let nx = st.nx;
    let lo = b.r0.saturating_sub(2);
    let hi = (b.r1 + 2).min(st.ny);
    let span = (hi - lo) * nx;
    let from = st.first + lo * nx;
    // Strided loads of the f32 lanes (the vectoriser de-interleaves them).
    let (xs, vs) = (
        &lanes(x)[4 * from..4 * (from + span)],
        &lanes(v)[4 * from..4 * (from + span)],
    );
    let [px, py, pz, vx, vy, vz] = &mut b.pv;
    let (px, py, pz) = (&mut px[..span], &mut py[..span], &mut pz[..span]);
    let (vx, vy, vz) = (&mut vx[..span], &mut vy[..span], &mut vz[..span]);
    for i in 0..span {
        px[i] = xs[4 * i];
        py[i] = xs[4 * i + 1];
        pz[i] = xs[4 * i + 2];
        vx[i] = vs[4 * i];
        vy[i] = vs[4 * i + 1];
        vz[i] = vs[4 * i + 2];
    }
}

/// `forces::spring_row`: the force on end a of each spring of one family row (a
/// [`SpringRow`]), handed to `$emit(j, [fx, fy, fz])`. A macro, not a function taking a
/// closure: closures do not inherit `band_avx2`'s target feature, so a closure here is not
/// inlined and the loop stays scalar.
macro_rules! spring_row {
    ($r:expr, |$j:ident, $f:ident| $emit:block) => {{
        let r: &SpringRow = $r;
        let m = r.rest.len();
        let (k, kd, rest) = (r.k, r.kd, r.rest);
        let (xa0, xa1, xa2) = (&r.xa[0][..m], &r.xa[1][..m], &r.xa[2][..m]);
        let (xb0, xb1, xb2) = (&r.xb[0][..m], &r.xb[1][..m], &r.xb[2][..m]);
        let (va0, va1, va2) = (&r.va[0][..m], &r.va[1][..m], &r.va[2][..m]);
        let (vb0, vb1, vb2) = (&r.vb[0][..m], &r.vb[1][..m], &r.vb[2][..m]);
        for $j in 0..m {
            let (dx, dy, dz) = (xb0[$j] - xa0[$j], xb1[$j] - xa1[$j], xb2[$j] - xa2[$j]);
            let l2 = dx * dx + dy * dy + dz * dz;
            let dvd =
                (vb0[$j] - va0[$j]) * dx + (vb1[$j] - va1[$j]) * dy + (vb2[$j] - va2[$j]) * dz;
            let degenerate = l2 < 1e-24;
            let inv_l = 1.0 / (if degenerate { 1.0 } else { l2 }).sqrt();
            let stretch = l2 * inv_l - rest[$j];
            let rate = dvd * inv_l;
            let c = inv_l * (k * stretch + kd * rate);
            let c = if degenerate { 0.0 } else { c };
            let $f = [dx * c, dy * c, dz * c];
            $emit
        }
    }};
}

/// The spring forces on the band's rows into `b.acc`: `forces::springs_fast`'s stencil kernel
/// (same rows, same family order, same expressions), so every sum is bit-identical.
///
/// That kernel writes each family row's forces to a scratch row, adds it at end a's particles,
/// then subtracts it at end b's. Here a family whose two ends lie in different grid rows adds
/// and subtracts in the spring loop itself (its a row and b row are disjoint, so each particle
/// gets at most one term of the family row, in the same order as before); a family along a row
/// (ends d = 1 or 2 columns apart) merges its two passes into one, `(acc + t[p − a]) − t[p − b]`,
/// which is the two passes' order per particle. That skips a store and two reloads of the
/// scratch and one read-modify-write pass over the accumulators per spring (callgrind: see the
/// commit message).
#[inline(always)]
pub(super) fn springs(st: &GridStencil, scale: f32, b: &mut Band) {
    let (nx, ny) = (st.nx, st.ny);
    let (r0, r1) = (b.r0, b.r1);
    let lo = r0.saturating_sub(2);
    let own = (r1 - r0) * nx;
    let Band { pv, acc, tmp, .. } = b;
    for a in acc.iter_mut() {
        a[..own].fill(0.0);
    }
    for s in lo..r1 {
        for (fi, fam) in STENCIL_FAMILIES.iter().enumerate() {
            let (rows, cols) = fam.extent(nx, ny);
            if s >= rows || cols == 0 {
                continue;
            }
            let (ra, rb) = (s + fam.a.0, s + fam.b.0);
            let a_in = (r0..r1).contains(&ra);
            let b_in = (r0..r1).contains(&rb);
            if !a_in && !b_in {
                continue;
            }
            let ia = (ra - lo) * nx + fam.a.1;
            let ib = (rb - lo) * nx + fam.b.1;
            let rest = &st.rest[fi][s * nx..s * nx + cols];
            let sl = |k: usize, at: usize| &pv[k][at..at + cols];
            let row = SpringRow {
                xa: [sl(0, ia), sl(1, ia), sl(2, ia)],
                xb: [sl(0, ib), sl(1, ib), sl(2, ib)],
                va: [sl(3, ia), sl(4, ia), sl(5, ia)],
                vb: [sl(3, ib), sl(4, ib), sl(5, ib)],
                rest,
                k: st.k[fi] * scale,
                kd: st.kd[fi] * scale,
            };
            // Offsets in the band's own rows (meaningful only for an end that is in them).
            let oa = ra.wrapping_sub(r0).wrapping_mul(nx).wrapping_add(fam.a.1);
            let ob = rb.wrapping_sub(r0).wrapping_mul(nx).wrapping_add(fam.b.1);
            if ra == rb {
                // Along a row (a_in == b_in here): forces to the scratch row, then one pass.
                let d = fam.b.1 - fam.a.1;
                let [tx, ty, tz] = &mut *tmp;
                let (tx, ty, tz) = (&mut tx[..cols], &mut ty[..cols], &mut tz[..cols]);
                row_to(&row, tx, ty, tz);
                for (a, t) in acc.iter_mut().zip(tmp.iter()) {
                    merge_row(&mut a[oa..oa + d + cols], &t[..cols], d);
                }
            } else if a_in && b_in {
                let [ax, ay, az] = acc;
                let (ax, bx) = ax.split_at_mut(ob);
                let (ay, by) = ay.split_at_mut(ob);
                let (az, bz) = az.split_at_mut(ob);
                let (ax, ay, az) = (
                    &mut ax[oa..oa + cols],
                    &mut ay[oa..oa + cols],
                    &mut az[oa..oa + cols],
                );
                let (bx, by, bz) = (&mut bx[..cols], &mut by[..cols], &mut bz[..cols]);
                row_add_sub(&row, ax, ay, az, bx, by, bz);
            } else if a_in {
                let [ax, ay, az] = acc;
                let (ax, ay, az) = (
                    &mut ax[oa..oa + cols],
                    &mut ay[oa..oa + cols],
                    &mut az[oa..oa + cols],
                );
                row_add(&row, ax, ay, az);
            } else {
                let [bx, by, bz] = acc;
                let (bx, by, bz) = (
                    &mut bx[ob..ob + cols],
                    &mut by[ob..ob + cols],
                    &mut bz[ob..ob + cols],
                );
                row_sub(&row, bx, by, bz);
            }
        }
    }
}

// The four uses of `spring_row!`, as functions whose outputs are separate `&mut` parameters:
// LLVM keeps their no-alias guarantee through inlining, so the vectorised loops need no
// run-time overlap checks against the six input rows (callgrind: those checks cost ~7
// instructions per spring when the loop was written inline in `springs`).

/// The forces to a scratch row.
#[inline(always)]
fn row_to(r: &SpringRow, tx: &mut [f32], ty: &mut [f32], tz: &mut [f32]) {
    let m = r.rest.len();
    let (tx, ty, tz) = (&mut tx[..m], &mut ty[..m], &mut tz[..m]);
    spring_row!(r, |j, f| {
        tx[j] = f[0];
        ty[j] = f[1];
        tz[j] = f[2];
    });
}

/// Added at end a's particles, subtracted at end b's (rows `a` and `b`, disjoint).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn row_add_sub(
    r: &SpringRow,
    ax: &mut [f32],
    ay: &mut [f32],
    az: &mut [f32],
    bx: &mut [f32],
    by: &mut [f32],
    bz: &mut [f32],
) {
    let m = r.rest.len();
    let (ax, ay, az) = (&mut ax[..m], &mut ay[..m], &mut az[..m]);
    let (bx, by, bz) = (&mut bx[..m], &mut by[..m], &mut bz[..m]);
    spring_row!(r, |j, f| {
        ax[j] += f[0];
        ay[j] += f[1];
        az[j] += f[2];
        bx[j] -= f[0];
        by[j] -= f[1];
        bz[j] -= f[2];
    });
}

/// Added at end a's particles only (end b in the halo).
#[inline(always)]
fn row_add(r: &SpringRow, ax: &mut [f32], ay: &mut [f32], az: &mut [f32]) {
    let m = r.rest.len();
    let (ax, ay, az) = (&mut ax[..m], &mut ay[..m], &mut az[..m]);
    spring_row!(r, |j, f| {
        ax[j] += f[0];
        ay[j] += f[1];
        az[j] += f[2];
    });
}

/// Subtracted at end b's particles only (end a in the halo).
#[inline(always)]
fn row_sub(r: &SpringRow, bx: &mut [f32], by: &mut [f32], bz: &mut [f32]) {
    let m = r.rest.len();
    let (bx, by, bz) = (&mut bx[..m], &mut by[..m], &mut bz[..m]);
    spring_row!(r, |j, f| {
        bx[j] -= f[0];
        by[j] -= f[1];
        bz[j] -= f[2];
    });
}

/// `a[j] += t[j]` then `a[j + d] −= t[j]` for every j (the two passes of the staged kernel for
/// a family along a row, ends `d` columns apart), in one pass with the same order per element.
#[inline(always)]
fn merge_row(a: &mut [f32], t: &[f32], d: usize) {
    let cols = t.len();
    let ov = cols.saturating_sub(d);
    let head = d.min(cols);
    for (a, t) in a[..head].iter_mut().zip(&t[..head]) {
        *a += *t;
    }
    // Elements with both terms: end a of spring d + j, end b of spring j.
    for ((a, ta), tb) in a[d..d + ov].iter_mut().zip(&t[d..d + ov]).zip(&t[..ov]) {
        *a = (*a + *ta) - *tb;
    }
    for (a, t) in a[d + ov..d + cols].iter_mut().zip(&t[ov..cols]) {
        *a -= *t;
    }
}

/// One family row's springs: both ends' positions and velocities (x, y, z rows), rest lengths,
/// stiffness and dashpot.
struct SpringRow<'a> {
    xa: [&'a [f32]; 3],
    xb: [&'a [f32]; 3],
    va: [&'a [f32]; 3],
    vb: [&'a [f32]; 3],
    rest: &'a [f32],
    k: f32,
    kd: f32,
}
