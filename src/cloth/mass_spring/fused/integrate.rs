//! The fused band's stage `integrate`, lane by lane.

use super::*;

/// Stage `integrate` on one block of the band (`mass_spring::integrate`, lane by lane): the new
/// positions into `b.cur`. `o` is the block's offset in the band's halo arrays, `k` in its own
/// rows, `i0` in the world. Returns the speed-limited and the massless particles.
#[inline(always)]
pub(super) fn integrate(
    ctx: &Ctx,
    b: &mut Band,
    o: usize,
    k: usize,
    i0: usize,
    m: usize,
) -> (u32, u32) {
    let [px, py, pz, vx, vy, vz] = &b.pv;
    let (px, py, pz) = (&px[o..o + m], &py[o..o + m], &pz[o..o + m]);
    let (vx, vy, vz) = (&vx[o..o + m], &vy[o..o + m], &vz[o..o + m]);
    let [fx, fy, fz] = &b.acc;
    let (fx, fy, fz) = (&fx[k..k + m], &fy[k..k + m], &fz[k..k + m]);
    let [cx, cy, cz] = &mut b.cur;
    let (cx, cy, cz) = (&mut cx[..m], &mut cy[..m], &mut cz[..m]);
    let w = &ctx.inv_mass[i0..i0 + m];
    let (g, dt, dt2, keep) = (ctx.g, ctx.dt, ctx.dt2, ctx.keep);
    let ms2 = ctx.max_step * ctx.max_step;
    let max_step = ctx.max_step;
    let (mut limited, mut massless) = (0u32, 0u32);
    // One loop per integrator, so the Euler loop reads no x_prev.
    macro_rules! body {
        ($step:expr) => {
            for j in 0..m {
                let wj = w[j];
                let (ax, ay, az) = (g.x + fx[j] * wj, g.y + fy[j] * wj, g.z + fz[j] * wj);
                let (sx, sy, sz) = $step(j, ax, ay, az);
                let l2 = sx * sx + sy * sy + sz * sz;
                // Negated on purpose, as in `mass_spring::integrate`: NaN is too far too.
                #[allow(clippy::neg_cmp_op_on_partial_ord)]
                let too_far = !(l2 <= ms2);
                let fin = l2.is_finite();
                let f = max_step / l2.sqrt();
                let (sx, sy, sz) = if too_far {
                    if fin {
                        (sx * f, sy * f, sz * f)
                    } else {
                        (0.0, 0.0, 0.0)
                    }
                } else {
                    (sx, sy, sz)
                };
                let moving = wj != 0.0;
                limited += (too_far && moving) as u32;
                massless += !moving as u32;
                cx[j] = if moving { px[j] + sx } else { px[j] };
                cy[j] = if moving { py[j] + sy } else { py[j] };
                cz[j] = if moving { pz[j] + sz } else { pz[j] };
            }
        };
    }
    if ctx.verlet {
        let xp = &lanes(ctx.xp_old)[4 * i0..4 * (i0 + m)];
        body!(|j: usize, ax: f32, ay: f32, az: f32| (
            (px[j] - xp[4 * j]) * keep + ax * dt2,
            (py[j] - xp[4 * j + 1]) * keep + ay * dt2,
            (pz[j] - xp[4 * j + 2]) * keep + az * dt2,
        ));
    } else {
        body!(|j: usize, ax: f32, ay: f32, az: f32| (
            (vx[j] + ax * dt) * dt,
            (vy[j] + ay * dt) * dt,
            (vz[j] + az * dt) * dt,
        ));
    }
    (limited, massless)
}
