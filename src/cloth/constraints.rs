//! Provot's deformation constraint (Provot 1995, "Deformation constraints in a mass-spring
//! model to describe rigid cloth behavior"; PHYSICS.md §1).

use rayon::prelude::*;

use crate::math::Vec3A;

use super::model::ClothModel;

/// One Gauss–Seidel pass: every structural or shear spring stretched past `(1 + tau) l0` has
/// its ends moved toward each other by half the excess each, the whole excess on the free end
/// if the other is pinned (`inv_mass == 0`), nothing if both are pinned. Chunks run in
/// parallel (their springs touch only their own particles), then the crossing springs serially.
/// Returns nothing: the velocity follows from the positions at the end of the substep
/// (`v = (x − x_prev)/Δt`, which for the Euler integrator is the correction/Δt rule).
///
/// Returns whether it moved any particle: a pass that moved none leaves every spring within the
/// limit, so another pass would do nothing either.
pub fn provot(model: &ClothModel, inv_mass: &[f32], tau: f32, x: &mut [Vec3A]) -> bool {
    provot_pass::<false>(model, inv_mass, tau, x, &mut [], None)
}

/// Particles per stamp block of [`ProvotScratch`] (each chunk's particles from its start).
const STAMP_BLOCK: usize = 32;

/// Limit springs per spring block of [`ProvotScratch`] (consecutive in a chunk's range).
const SPRING_BLOCK: usize = 64;

/// A block of consecutive limit springs of one chunk: their range, and the chunk-local ranges
/// (inclusive) of stamp blocks their first ends and their second ends lie in.
#[derive(Clone, Copy, Debug, Default)]
struct SpringBlock {
    springs: (u32, u32),
    first_ends: (u32, u32),
    second_ends: (u32, u32),
}

/// What lets repeated tracked passes skip springs that cannot be past the limit, with the very
/// same result as visiting them. A chunk's springs are cut into blocks of [`SPRING_BLOCK`]; a
/// block whose last visit moved nothing stays within the limit until one of its particles
/// moves, and every particle move (by a pass, or reported with [`ProvotScratch::moved_by`]) is
/// recorded per block of [`STAMP_BLOCK`] particles with the pass count ("time"). A block is
/// skipped while no stamp block it touches has moved since the visit. Springs are sorted by
/// first end, so a block's first ends are a short run of particles and its second ends another
/// (on a grid, the same run one row on): each run is a range of a few stamp blocks.
///
/// Valid only while nothing else moves the particles: [`ProvotScratch::invalidate`] after any
/// other stage. The contact rounds (src/cloth/step.rs) use it: between their passes only their
/// re-projection moves particles, and it reports the ones it pushed.
#[derive(Clone, Debug, Default)]
pub struct ProvotScratch {
    /// (particles, chunk size, springs) the blocks were cut for.
    built_for: (usize, usize, usize),
    /// Stamp blocks per chunk.
    stamps_per_chunk: usize,
    /// Per chunk, its spring blocks.
    blocks: Vec<Vec<SpringBlock>>,
    /// Per chunk and block: the time of its last visit if that moved nothing, else 0 (visit).
    ok_at: Vec<Vec<u32>>,
    /// Per stamp block (`stamps_per_chunk` per chunk): the time a particle in it last moved.
    stamp: Vec<u32>,
    /// Pass count; starts at 1 so that 0 means "never visited clean".
    now: u32,
}

impl ProvotScratch {
    /// Cuts `model`'s limit springs into blocks (once per model; allocates).
    fn ensure(&mut self, model: &ClothModel) {
        let (n, cs, m) = (model.len(), model.chunk_size, model.limits.len());
        if self.built_for == (n, cs, m) && !self.blocks.is_empty() {
            return;
        }
        self.built_for = (n, cs, m);
        let set = &model.limits;
        self.stamps_per_chunk = cs.div_ceil(STAMP_BLOCK);
        self.blocks.clear();
        self.ok_at.clear();
        for (c, range) in set.chunk_edges.iter().enumerate() {
            let base = c * cs;
            let mut list = Vec::new();
            let mut e0 = range.start;
            while e0 < range.end {
                let e1 = (e0 + SPRING_BLOCK).min(range.end);
                let run = |ends: &[u32]| {
                    let sb = |p: u32| ((p as usize - base) / STAMP_BLOCK) as u32;
                    let lo = ends.iter().map(|&p| sb(p)).min().unwrap_or(0);
                    let hi = ends.iter().map(|&p| sb(p)).max().unwrap_or(0);
                    (lo, hi)
                };
                list.push(SpringBlock {
                    springs: (e0 as u32, e1 as u32),
                    first_ends: run(&set.a[e0..e1]),
                    second_ends: run(&set.b[e0..e1]),
                });
                e0 = e1;
            }
            self.ok_at.push(vec![0; list.len()]);
            self.blocks.push(list);
        }
        self.stamp = vec![0; set.chunk_edges.len().max(1) * self.stamps_per_chunk];
        self.now = 1;
    }

    /// Forgets every clean visit: the next pass visits every spring. Call when something other
    /// than the tracked passes and [`ProvotScratch::moved_by`] moved particles.
    pub fn invalidate(&mut self) {
        for ok in &mut self.ok_at {
            ok.fill(0);
        }
    }

    /// Records that particle `i` moved since the last pass (another stage pushed it).
    #[inline]
    pub fn moved_by(&mut self, model: &ClothModel, i: usize) {
        let cs = model.chunk_size;
        let k = (i / cs) * self.stamps_per_chunk + (i % cs) / STAMP_BLOCK;
        if let Some(s) = self.stamp.get_mut(k) {
            *s = self.now;
        }
    }
}

/// [`provot`], also setting `moved[i] = 1` for every particle the pass moved (entries of
/// particles it did not move are left as they are, so several passes accumulate). `moved` has
/// one entry per particle. The contact rounds (src/cloth/step.rs) re-project only these
/// particles: the others are where the last collision pass left them.
///
/// With `scratch`, spring blocks that cannot be past the limit are skipped (see
/// [`ProvotScratch`]): the result is the same as [`provot`]'s, bit for bit.
pub fn provot_tracked(
    model: &ClothModel,
    inv_mass: &[f32],
    tau: f32,
    x: &mut [Vec3A],
    moved: &mut [u8],
    scratch: &mut ProvotScratch,
) -> bool {
    assert_eq!(moved.len(), x.len(), "one moved flag per particle");
    scratch.ensure(model);
    scratch.now += 1;
    if scratch.now == u32::MAX {
        // Wrapped (after 4 billion passes): start the clock again, visiting everything once.
        scratch.now = 1;
        scratch.stamp.fill(0);
        scratch.invalidate();
    }
    provot_pass::<true>(model, inv_mass, tau, x, moved, Some(scratch))
}

/// The pass, with or without recording (`TRACK`; `moved` is ignored, and may be empty, when
/// false), so the untracked pass pays nothing for the option.
fn provot_pass<const TRACK: bool>(
    model: &ClothModel,
    inv_mass: &[f32],
    tau: f32,
    x: &mut [Vec3A],
    moved: &mut [u8],
    scratch: Option<&mut ProvotScratch>,
) -> bool {
    let set = &model.limits;
    let cs = model.chunk_size;
    let limit = 1.0 + tau;
    let w = |i: usize| if inv_mass[i] > 0.0 { 1.0 } else { 0.0 };
    // One spring (ends `a`, `b` in `x`, which starts at particle `base`); returns whether it
    // moved an end. Most springs are within the limit: that test comes first, and the ends'
    // weights are read only for a spring past it.
    let fix = |x: &mut [Vec3A], moved: &mut [u8], base: usize, e: usize| -> bool {
        let (ga, gb) = (set.a[e] as usize, set.b[e] as usize);
        let (a, b) = (ga - base, gb - base);
        let max_len = limit * set.rest[e];
        let d = x[b] - x[a];
        let l2 = d.length_squared();
        if l2 <= max_len * max_len {
            return false;
        }
        let (wa, wb) = (w(ga), w(gb));
        if wa + wb == 0.0 {
            return false;
        }
        let l = l2.sqrt();
        let corr = d * ((l - max_len) / (l * (wa + wb)));
        x[a] += corr * wa;
        x[b] -= corr * wb;
        if TRACK {
            // A pinned end (weight 0) does not move.
            moved[a] |= (wa > 0.0) as u8;
            moved[b] |= (wb > 0.0) as u8;
        }
        true
    };
    let chunk = |c: usize, xc: &mut [Vec3A], mc: &mut [u8]| -> bool {
        let mut any = false;
        for e in set.chunk_edges[c].clone() {
            any |= fix(xc, mc, c * cs, e);
        }
        any
    };
    let Some(sc) = scratch else {
        let mut any = if x.len() <= cs {
            chunk(0, x, moved)
        } else {
            // Untracked (the tracked pass always has its scratch): no flags to split.
            x.par_chunks_mut(cs)
                .enumerate()
                .map(|(c, xc)| chunk(c, xc, &mut []))
                .reduce(|| false, |p, q| p | q)
        };
        for e in set.crossing.clone() {
            any |= fix(x, moved, 0, e);
        }
        return any;
    };
    // The tracked pass with skipping: per chunk, its blocks, its stamps and its clean marks.
    let now = sc.now;
    let spc = sc.stamps_per_chunk;
    let blocks = &sc.blocks;
    let chunk_skip =
        |c: usize, xc: &mut [Vec3A], mc: &mut [u8], stamp: &mut [u32], ok_at: &mut [u32]| -> bool {
            let base = c * cs;
            let mut any = false;
            for (bi, blk) in blocks[c].iter().enumerate() {
                let ok = ok_at[bi];
                let clean =
                    |(s0, s1): (u32, u32)| stamp[s0 as usize..=s1 as usize].iter().all(|&t| t < ok);
                if ok != 0 && clean(blk.first_ends) && clean(blk.second_ends) {
                    continue;
                }
                let (e0, e1) = blk.springs;
                let mut fixed = false;
                for e in e0 as usize..e1 as usize {
                    if fix(xc, mc, base, e) {
                        fixed = true;
                        stamp[(set.a[e] as usize - base) / STAMP_BLOCK] = now;
                        stamp[(set.b[e] as usize - base) / STAMP_BLOCK] = now;
                    }
                }
                ok_at[bi] = if fixed { 0 } else { now };
                any |= fixed;
            }
            any
        };
    let mut any = if x.len() <= cs {
        chunk_skip(0, x, moved, &mut sc.stamp[..spc], &mut sc.ok_at[0])
    } else {
        x.par_chunks_mut(cs)
            .zip(moved.par_chunks_mut(cs))
            .zip(sc.stamp.par_chunks_mut(spc))
            .zip(sc.ok_at.par_iter_mut())
            .enumerate()
            .map(|(c, (((xc, mc), st), ok))| chunk_skip(c, xc, mc, st, ok))
            .reduce(|| false, |p, q| p | q)
    };
    for e in set.crossing.clone() {
        if fix(x, moved, 0, e) {
            any = true;
            for p in [set.a[e] as usize, set.b[e] as usize] {
                sc.stamp[(p / cs) * spc + (p % cs) / STAMP_BLOCK] = now;
            }
        }
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloth::scenes::{build_scene, SceneOptions};

    /// The tracked pass with its skipping gives bit-identical positions to plain passes, across
    /// rounds in which other stages push a few particles (reported with `moved_by`), on a cloth
    /// of two chunks (crossing springs included) with pinned corners.
    #[test]
    fn skipping_passes_equal_plain_passes() {
        let opts = SceneOptions {
            n: 40,
            ..SceneOptions::default()
        };
        let scene = build_scene("drop", &opts).unwrap();
        let (model, w) = (&scene.model, &scene.state.inv_mass);
        assert!(model.chunks() >= 2 && !model.limits.crossing.is_empty());
        let mut inv_mass = w.clone();
        inv_mass[0] = 0.0;
        inv_mass[39] = 0.0;
        let mut seed = 3u32;
        let mut rnd = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        // Rest positions, a few regions stretched hard, everything jittered a little.
        let spacing = model.limits.rest[0];
        let mut a: Vec<Vec3A> = scene.state.x.clone();
        for (i, p) in a.iter_mut().enumerate() {
            let big = if (i / 40) % 13 == 5 { 0.8 } else { 0.05 };
            *p += Vec3A::new(rnd(), rnd(), rnd()) * spacing * big;
        }
        let mut b = a.clone();
        let mut moved = vec![0u8; a.len()];
        let mut scratch = ProvotScratch::default();
        let tau = 0.1;
        for round in 0..6 {
            if round == 0 {
                scratch.ensure(model);
                scratch.invalidate();
            }
            for pass in 0..4 {
                let pa = provot(model, &inv_mass, tau, &mut a);
                let pb = provot_tracked(model, &inv_mass, tau, &mut b, &mut moved, &mut scratch);
                assert_eq!(pa, pb, "round {round} pass {pass}");
                assert!(a == b, "round {round} pass {pass}");
            }
            // Another stage pushes a few particles.
            for _ in 0..5 {
                let i = ((rnd() + 0.5) * a.len() as f32) as usize % a.len();
                let d = Vec3A::new(rnd(), rnd(), rnd()) * spacing;
                a[i] += d;
                b[i] += d;
                scratch.moved_by(model, i);
            }
        }
        // Some passes did skip: the last passes left most blocks clean.
        let clean: usize = scratch.ok_at.iter().flatten().filter(|&&t| t != 0).count();
        assert!(clean > 0, "no block was clean");
    }
}
