//! Stage `self_collide`: self- and garment–garment collision (PHYSICS.md §3) over per-particle
//! neighbour lists built from the spatial hash (`cloth/hash.rs`) with a skin, kept while they
//! hold every contact, refreshed for the few fast particles, rebuilt otherwise.

use rayon::prelude::*;

use crate::cloth::model::ClothModel;
use crate::cloth::params::SimParams;
use crate::cloth::state::ClothState;
use crate::cloth::workspace::{ChunkScratch, ClothWorkspace};
use crate::math::Vec3A;

/// Stage `self_collide`: particles of one garment or of different garments closer than the sum
/// of their thicknesses are pushed apart along the pair direction (PHYSICS.md §3), weighted by
/// inverse mass, with Jacobi averaging of all corrections on a particle, and with friction
/// removing `self_friction` of their relative tangential displacement. A pair of the same
/// garment whose rest distance is below that sum is only pushed back to its rest distance
/// (Müller, Ten Minute Physics 15), so neighbours are not forced apart.
///
/// Candidate pairs come from per-particle neighbour lists built from the spatial hash with a
/// skin (see [`SimParams::self_skin`]) and rebuilt only when needed, so most substeps do no
/// hashing at all; the result is the same as querying the hash every substep. Each list entry
/// carries its pair's target distance, fixed at the build, so the substep loop reads only
/// positions and masses.
///
/// When only a few particles moved too far for the lists (more than half the skin, "fast";
/// see `needs_rebuild`), the lists are kept: every pair of two slow particles is still in
/// them, and the fast particles' pairs are found afresh (`find_fresh_pairs`) and merged in.
/// A limb whips part of a garment past the skin within a substep or two (a roundhouse kick:
/// lists rebuilt 11 times in 16 substeps), while the rest of the cloth stays within it. Each
/// particle still sums its pairs in ascending neighbour order, so the result is the very one
/// a rebuild gives (`drape bake` output byte-identical; test
/// `neighbour_lists_never_miss_a_contact`).
///
/// Whole lists are skipped when none of their pairs can be in contact: a pair's distance has
/// shrunk since the build by at most `|d_i − c| + |d_j − c|` (`d` the displacements since the
/// build, `c` the drift the rebuild test measured against), so with `m` the largest
/// `|d_j − c|`, particle i's list can hold a contact only if its smallest
/// `distance − target` at the build is below `|d_i − c| + m`. Flat or gently moving cloth
/// (grid neighbours 0.2 h beyond their target) then reads no neighbour at all in most
/// substeps. A margin of 10⁻³ of the skin keeps float rounding of the bound from skipping a
/// pair the full test would have counted.
pub fn self_collide(
    model: &ClothModel,
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
) {
    let cs = model.chunk_size;
    let max_t = model.max_thickness;
    let skin = params.self_skin.clamp(0.1, 4.0) * max_t;
    let radius = 2.0 * max_t + skin;
    let n = state.x.len();
    // Particles that moved more than half the skin (relative to the drift) are "fast".
    let half = 0.5 * skin;
    let fresh = match needs_rebuild(model, &state.x, ws, radius, skin) {
        Lists::Hold => false,
        Lists::Refresh(fast) if fast <= n / FRESH_SHARE => true,
        _ => {
            build_lists(model, state, ws, radius);
            false
        }
    };
    let mu = params.self_friction.clamp(0.0, 1.0);
    if fresh {
        find_fresh_pairs(model, state, ws, 2.0 * max_t, half * half);
    }
    let (x, xp, inv_mass) = (&state.x, &state.x_prev, &state.inv_mass);
    let (nbr_start, nbr, nbr_target) = (&ws.nbr_start, &ws.nbr, &ws.nbr_target);
    let (slack, move2) = (&ws.nbr_slack, &ws.list_move2);
    // With fresh pairs, a list is read only for slow particles and only its slow entries: the
    // other end moved at most half the skin.
    let other = if fresh {
        ws.list_move_max.min(half)
    } else {
        ws.list_move_max
    };
    let reach = other + 1e-3 * skin;
    let fast2 = if fresh { half * half } else { f32::INFINITY };
    let (f_start, f_nbr, f_target) = (&ws.fresh_start, &ws.fresh_nbr, &ws.fresh_target);
    let run = |c: usize, dx: &mut [Vec3A], scratch: &mut ChunkScratch| {
        let base = c * cs;
        let mut pairs = 0;
        for (k, dxi) in dx.iter_mut().enumerate() {
            let i = base + k;
            *dxi = Vec3A::ZERO;
            let wi = inv_mass[i];
            if wi == 0.0 {
                continue;
            }
            // Written so that a NaN bound reads the list.
            let free = slack[i] - reach;
            let skip = (free > 0.0 && free * free > move2[i]) || move2[i] > fast2;
            let (s, e) = if skip {
                (0, 0)
            } else {
                (nbr_start[i] as usize, nbr_start[i + 1] as usize)
            };
            let (fs, fe) = if fresh {
                (f_start[i] as usize, f_start[i + 1] as usize)
            } else {
                (0, 0)
            };
            if s == e && fs == fe {
                continue;
            }
            let xi = x[i];
            let di = xi - xp[i];
            let mut sum = Vec3A::ZERO;
            let mut count = 0u32;
            // The list's entries of slow particles and the fresh pairs, merged in ascending
            // neighbour order: the order a full list would give, so the sum has its bits.
            let (mut p, mut q) = (s, fs);
            while p < e || q < fe {
                let (j, target) = if q >= fe || (p < e && nbr[p] < f_nbr[q]) {
                    p += 1;
                    if move2[nbr[p - 1] as usize] > fast2 {
                        continue;
                    }
                    (nbr[p - 1] as usize, nbr_target[p - 1])
                } else {
                    q += 1;
                    (f_nbr[q - 1] as usize, f_target[q - 1])
                };
                let xj = x[j];
                let d = xi - xj;
                let d2 = d.length_squared();
                if d2 >= target * target {
                    continue;
                }
                sum += pair_push(i, j, d, d2, di, xj - xp[j], wi, inv_mass[j], target, mu);
                count += 1;
            }
            if count > 0 {
                *dxi = sum / count as f32;
                pairs += count;
            }
        }
        scratch.self_pairs = pairs;
    };
    if model.chunks() == 1 {
        run(0, &mut ws.dx, &mut ws.chunks[0]);
    } else {
        ws.dx
            .par_chunks_mut(cs)
            .zip(ws.chunks.par_iter_mut())
            .enumerate()
            .for_each(|(c, (dx, sc))| run(c, dx, sc));
    }
    // Jacobi: every correction was computed from the same positions; apply them all now.
    let apply = |x: &mut [Vec3A], d: &[Vec3A]| {
        for (x, d) in x.iter_mut().zip(d) {
            *x += *d;
        }
    };
    if model.chunks() == 1 {
        apply(&mut state.x, &ws.dx);
    } else {
        state
            .x
            .par_chunks_mut(cs)
            .zip(ws.dx.par_chunks(cs))
            .for_each(|(x, d)| apply(x, d));
    }
}

/// A partial refresh ([`find_fresh_pairs`]) replaces a rebuild while at most one particle in
/// this many is fast. `drape bench scene` (one thread, best of four runs, self_collide stage):
/// 8.1 ms a frame with rebuilds only; 6.3 (at most a half fast), 5.9 (a quarter), 5.5–6.7
/// (an eighth), 6.2 (a sixteenth); the host's noise is about ±1 ms, so any of these will do.
const FRESH_SHARE: usize = 8;

/// The correction pair (i, j) asks of particle i (`d = x_i − x_j`, `d2 = |d|²`, `di`, `dj`
/// the two displacements over the substep): pushed apart to `target` along the pair, weighted
/// by inverse mass, less `mu` of the relative tangential displacement. Coincident particles
/// separate along a fixed, index-ordered direction.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn pair_push(
    i: usize,
    j: usize,
    d: Vec3A,
    d2: f32,
    di: Vec3A,
    dj: Vec3A,
    wi: f32,
    wj: f32,
    target: f32,
    mu: f32,
) -> Vec3A {
    let wsum = wi + wj;
    let dist = d2.sqrt();
    let n = if dist > 1e-9 {
        d / dist
    } else if i < j {
        Vec3A::Y
    } else {
        -Vec3A::Y
    };
    let share = wi / wsum;
    let rel = di - dj;
    let rel_t = rel - n * rel.dot(n);
    n * ((target - dist) * share) - rel_t * (mu * share)
}

/// The contact pairs of the fast particles (squared move since the list build above `fast2`),
/// found afresh: a spatial hash over the current positions with cells of `contact` (the
/// largest target distance), each fast particle's whole neighbourhood, every pair within the
/// sum of its thicknesses once (a pair of two fast particles from the lower index). Stored by
/// [`fill_lists`] as lists for both ends (`fresh_start`, `fresh_nbr`, `fresh_target`), in
/// ascending neighbour order with the rebuild's targets, so `self_collide` merges them with
/// the slow particles' list entries in the order a full rebuild would give.
fn find_fresh_pairs(
    model: &ClothModel,
    state: &ClothState,
    ws: &mut ClothWorkspace,
    contact: f32,
    fast2: f32,
) {
    let (cs, n) = (model.chunk_size, state.x.len());
    let x = &state.x;
    ws.list_refreshes += 1;
    ws.fresh_hash.build(x, contact);
    let (hash, move2) = (&ws.fresh_hash, &ws.list_move2);
    let find = |c: usize, sc: &mut ChunkScratch| {
        sc.fresh.clear();
        for i in c * cs..((c + 1) * cs).min(n) {
            // (A NaN move is stored as infinite.)
            if move2[i] <= fast2 {
                continue;
            }
            let (xi, ti) = (x[i], model.thickness[i]);
            hash.for_each_candidate(xi, |j, xj| {
                let j = j as usize;
                if j == i || (move2[j] > fast2 && j < i) {
                    return;
                }
                // Within the sum of the thicknesses (a superset of the contacts: a pair of one
                // garment may have a smaller target, which `self_collide` tests).
                let t = ti + model.thickness[j];
                if xi.distance_squared(xj) < t * t {
                    sc.fresh.push((i as u32, j as u32));
                }
            });
        }
    };
    each_chunk(&mut ws.chunks, find);
    fill_lists(
        model,
        n,
        &ws.chunks,
        |sc| &sc.fresh,
        (&mut ws.fresh_start, &mut ws.fresh_nbr, &mut ws.fresh_target),
    );
}

/// Whether the neighbour lists hold every pair within the contact distance ([`Lists::Hold`]),
/// hold every pair of two particles that moved at most half the skin ([`Lists::Refresh`], with
/// the number that moved more), or were never built or built for another radius
/// ([`Lists::Rebuild`]). Leaves each particle's squared move in `list_move2`.
///
/// With `d_i` each particle's displacement since the build and any common vector `c`, a pair's
/// distance changed by at most `|d_i − c| + |d_j − c|`, so the lists hold every pair within the
/// contact distance as long as the two largest `|d_i − c|` sum to less than the skin (the
/// Verlet-list rule of molecular dynamics, with the pair's two largest moves rather than twice
/// the largest). Any `c` is safe; the best is the one that minimises the largest move, which
/// the centre of the box of all displacements approximates (exactly, per axis). The same pass
/// that tests against `c` measures that box, and its centre is the next substep's `c`
/// (displacements change little in one substep). Against the mean displacement (the previous
/// choice) this matters when the cloth moves in two groups, as when its middle has landed on
/// the sphere and its edges still fall: with 70 % stopped and 30 % falling by D, the mean puts
/// the fallers 0.7 D away (two of them: 1.4 D) and the centre D/2 (two of them: D). A rigid
/// translation of the whole cloth (free fall) still triggers no rebuild.
fn needs_rebuild(
    model: &ClothModel,
    x: &[Vec3A],
    ws: &mut ClothWorkspace,
    radius: f32,
    skin: f32,
) -> Lists {
    let at_build = &ws.x_at_list_build;
    if at_build.len() != x.len() || radius != ws.list_radius {
        return Lists::Rebuild;
    }
    let half2 = 0.25 * skin * skin;
    let c = ws.list_drift;
    let cs = model.chunk_size;
    // (two largest |d − c|², box of d, how many |d − c| above half the skin)
    type Moves = (f32, f32, Vec3A, Vec3A, usize);
    let empty: Moves = (
        0.0,
        0.0,
        Vec3A::splat(f32::INFINITY),
        Vec3A::splat(f32::NEG_INFINITY),
        0,
    );
    let moves = |x: &[Vec3A], b: &[Vec3A], mv: &mut [f32]| -> Moves {
        let (mut m1, mut m2, mut lo, mut hi, mut fast) = empty;
        for ((a, b), mv) in x.iter().zip(b).zip(mv) {
            let d = *a - *b;
            lo = lo.min(d);
            hi = hi.max(d);
            let d2 = (d - c).length_squared();
            // NaN compares false everywhere: treat it as infinitely far.
            let d2 = if d2.is_nan() { f32::INFINITY } else { d2 };
            *mv = d2;
            fast += (d2 > half2) as usize;
            if d2 > m2 {
                if d2 > m1 {
                    m2 = m1;
                    m1 = d2;
                } else {
                    m2 = d2;
                }
            }
        }
        (m1, m2, lo, hi, fast)
    };
    let move2 = &mut ws.list_move2;
    let (m1, m2, lo, hi, fast) = if model.chunks() == 1 {
        moves(x, at_build, move2)
    } else {
        ws.chunks
            .par_iter_mut()
            .zip(x.par_chunks(cs).zip(at_build.par_chunks(cs)))
            .zip(move2.par_chunks_mut(cs))
            .for_each(|((sc, (xc, bc)), mv)| sc.moves = moves(xc, bc, mv));
        ws.chunks.iter().fold(empty, |(m1, m2, lo, hi, fast), sc| {
            let (a, b, l, h, f) = sc.moves;
            // The two largest of {m1, m2, a, b} (m1 ≥ m2, a ≥ b); min/max are order-free.
            let (m1, m2) = if a >= m1 {
                (a, m1.max(b))
            } else {
                (m1, m2.max(a))
            };
            (m1, m2, lo.min(l), hi.max(h), fast + f)
        })
    };
    let centre = (lo + hi) * 0.5;
    ws.list_drift = if centre.is_finite() {
        centre
    } else {
        Vec3A::ZERO
    };
    // Written negated on purpose: a NaN skin or displacement also asks for a rebuild.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let hold = m1.sqrt() + m2.sqrt() <= skin;
    ws.list_move_max = m1.sqrt();
    if hold {
        Lists::Hold
    } else {
        Lists::Refresh(fast)
    }
}

/// What the rebuild test found ([`needs_rebuild`]).
enum Lists {
    /// Every pair within the contact distance is in the lists.
    Hold,
    /// Pairs of two particles that moved at most half the skin are (their moves sum to at
    /// most the skin); this many particles moved more.
    Refresh(usize),
    /// The lists do not fit the model or the radius.
    Rebuild,
}

/// Rebuilds the neighbour lists: every pair closer than `radius`, from the hash, each with its
/// target distance (the sum of the thicknesses, or the rest distance for a pair of one garment
/// that is closer than that at rest).
///
/// In parallel per chunk, each particle's forward half-shell query
/// ([`SpatialHash::for_each_forward`](crate::cloth::hash::SpatialHash::for_each_forward))
/// finds each pair once (half the candidates of a full query); [`fill_lists`] makes the lists;
/// then each list's slack for the skip test.
fn build_lists(model: &ClothModel, state: &ClothState, ws: &mut ClothWorkspace, radius: f32) {
    let cs = model.chunk_size;
    let n = state.x.len();
    ws.hash.build(&state.x, radius);
    ws.list_radius = radius;
    ws.list_drift = Vec3A::ZERO;
    ws.list_rebuilds += 1;
    ws.x_at_list_build.clear();
    ws.x_at_list_build.extend_from_slice(&state.x);
    ws.list_move2.clear();
    ws.list_move2.resize(n, 0.0);
    ws.list_move_max = 0.0;
    let hash = &ws.hash;
    let r2 = radius * radius;
    let find = |c: usize, scratch: &mut ChunkScratch| {
        scratch.pairs.clear();
        for i in c * cs..((c + 1) * cs).min(n) {
            hash.for_each_forward(i, r2, |j| scratch.pairs.push((i as u32, j)));
        }
    };
    each_chunk(&mut ws.chunks, find);
    fill_lists(
        model,
        n,
        &ws.chunks,
        |sc| &sc.pairs,
        (&mut ws.nbr_start, &mut ws.nbr, &mut ws.nbr_target),
    );
    let start = &ws.nbr_start;
    // Each list's smallest distance beyond its targets, for `self_collide`'s skip test.
    let (x, nbr, target) = (&state.x, &ws.nbr, &ws.nbr_target);
    let slack_of = |lo: usize, out: &mut [f32]| {
        for (k, sl) in out.iter_mut().enumerate() {
            let i = lo + k;
            let (s, e) = (start[i] as usize, start[i + 1] as usize);
            *sl = nbr[s..e]
                .iter()
                .zip(&target[s..e])
                .map(|(&j, &t)| x[i].distance(x[j as usize]) - t)
                // NaN (a broken position) must keep the list read, as the full test would.
                .fold(f32::INFINITY, |a, v| {
                    if v.is_nan() {
                        f32::NEG_INFINITY
                    } else {
                        a.min(v)
                    }
                });
        }
    };
    ws.nbr_slack.resize(n, f32::INFINITY);
    if model.chunks() == 1 {
        slack_of(0, &mut ws.nbr_slack);
    } else {
        ws.nbr_slack
            .par_chunks_mut(cs)
            .enumerate()
            .for_each(|(c, out)| slack_of(c * cs, out));
    }
}

/// Runs `f(c, scratch of chunk c)` for every chunk, in parallel when there are several.
fn each_chunk(chunks: &mut [ChunkScratch], f: impl Fn(usize, &mut ChunkScratch) + Sync) {
    if let [only] = chunks {
        f(0, only);
    } else {
        chunks
            .par_iter_mut()
            .enumerate()
            .for_each(|(c, sc)| f(c, sc));
    }
}

/// Fills symmetric neighbour lists from the pairs each chunk found (`pairs(chunk)`, every
/// unordered pair once over all chunks): `nbr[start[i]..start[i + 1]]` in ascending order,
/// each entry with its pair's target distance (the sum of the thicknesses, or the rest distance
/// for a pair of one garment that is closer than that at rest). A serial counting sort by both
/// ends (degrees, prefix sums, scatter with the cursor `start[i + 1]` counted down), then, in
/// parallel per chunk, each list sorted (so the Jacobi sums depend neither on the hash layout
/// nor on the chunking) and given its targets.
fn fill_lists(
    model: &ClothModel,
    n: usize,
    chunks: &[ChunkScratch],
    pairs: impl Fn(&ChunkScratch) -> &[(u32, u32)],
    (start, nbr, target): (&mut Vec<u32>, &mut Vec<u32>, &mut Vec<f32>),
) {
    start.clear();
    start.resize(n + 1, 0);
    for sc in chunks {
        for &(i, j) in pairs(sc) {
            start[i as usize + 1] += 1;
            start[j as usize + 1] += 1;
        }
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let total = start[n] as usize;
    nbr.resize(total, 0);
    target.resize(total, 0.0);
    // Fill each list from its end, then shift the starts back.
    for sc in chunks {
        for &(i, j) in pairs(sc) {
            start[i as usize + 1] -= 1;
            nbr[start[i as usize + 1] as usize] = j;
            start[j as usize + 1] -= 1;
            nbr[start[j as usize + 1] as usize] = i;
        }
    }
    // Now start[i + 1] is list i's start: shift left by one.
    for i in 0..n {
        start[i] = start[i + 1];
    }
    start[n] = total as u32;
    let start = &*start;
    let finish = |lo: usize, hi: usize, nbr: &mut [u32], target: &mut [f32]| {
        let base = start[lo] as usize;
        for i in lo..hi {
            let (s, e) = (start[i] as usize - base, start[i + 1] as usize - base);
            // Ascending neighbour order (short lists: insertion sort inside sort_unstable).
            nbr[s..e].sort_unstable();
            let (ti, gi, ri) = (model.thickness[i], model.garment_of[i], model.rest[i]);
            for (&j, t) in nbr[s..e].iter().zip(&mut target[s..e]) {
                let j = j as usize;
                let mut tg = ti + model.thickness[j];
                if model.garment_of[j] == gi {
                    // min(sum of thicknesses, rest distance), with a square root only for the
                    // pairs that are closer at rest (grid neighbours when the cloth is thick).
                    let rest2 = ri.distance_squared(model.rest[j]);
                    if rest2 < tg * tg {
                        tg = rest2.sqrt();
                    }
                }
                *t = tg;
            }
        }
    };
    if model.chunks() == 1 {
        finish(0, n, nbr, target);
    } else {
        split_lists(
            0..model.chunks(),
            model.chunk_size,
            n,
            start,
            nbr,
            target,
            &finish,
        );
    }
}

/// A pass over the lists of particles `lo..hi`: `(lo, hi, neighbours, targets)`.
type ListPass<'a> = dyn Fn(usize, usize, &mut [u32], &mut [f32]) + Sync + 'a;

/// Runs `f(lo, hi, lists, targets)` for the lists of each chunk of particles in `chunks`, in
/// parallel, splitting the list arrays at chunk boundaries by recursion (no allocation).
fn split_lists(
    chunks: std::ops::Range<usize>,
    cs: usize,
    n: usize,
    start: &[u32],
    nbr: &mut [u32],
    target: &mut [f32],
    f: &ListPass<'_>,
) {
    let (lo, hi) = (chunks.start * cs, (chunks.end * cs).min(n));
    if chunks.len() <= 1 {
        f(lo, hi, nbr, target);
        return;
    }
    let mid = chunks.start + chunks.len() / 2;
    let at = (start[mid * cs] - start[lo]) as usize;
    let (na, nb) = nbr.split_at_mut(at);
    let (ta, tb) = target.split_at_mut(at);
    rayon::join(
        || split_lists(chunks.start..mid, cs, n, start, na, ta, f),
        || split_lists(mid..chunks.end, cs, n, start, nb, tb, f),
    );
}
