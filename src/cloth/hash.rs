//! Spatial hashing for self- and garment–garment collision (PHYSICS.md §3; Teschner et al.
//! 2003, "Optimized spatial hashing for collision detection of deformable objects", whose
//! primes are used below).
//!
//! A sorted cell grid: the points are counting-sorted by the hash bucket of their cell (count
//! per bucket, prefix sum, scatter), which allocates nothing once the buffers have grown to the
//! point count. The cell edge equals the query radius, so the ball of radius r around a point
//! lies in the 3 × 3 × 3 block of cells around it. Cells adjacent in x fall into adjacent
//! buckets (x is not multiplied in the hash), so each of the block's 9 rows of 3 cells is one
//! contiguous range of the sorted arrays: a query makes 9 range look-ups instead of 27 (or the
//! 8 of a grid with cells of 2 r, whose candidate volume is 64 r³ against 27 r³ here).
//!
//! Two cells may share a bucket (a hash collision), so each sorted point also records its
//! cell's (y, z): a row's range keeps only its own row's points, and every point within the
//! radius is visited exactly once.

use crate::math::Vec3A;

/// A spatial hash over a set of points, rebuilt in place.
#[derive(Clone, Debug, Default)]
pub struct SpatialHash {
    /// Cell edge length, m.
    cell: f32,
    inv_cell: f32,
    /// Table size − 1 (a power of two minus one).
    mask: u32,
    /// `start[b]..start[b + 1]` is bucket b's range in `entries`.
    start: Vec<u32>,
    /// Point indices sorted by bucket (ascending within a bucket).
    entries: Vec<u32>,
    /// Positions in `entries` order, so neighbour loops read contiguous memory.
    sorted_x: Vec<Vec3A>,
    /// Cell (y, z) of each sorted point: filters hash collisions out of a row's range.
    sorted_yz: Vec<[i32; 2]>,
    /// Scratch: each point's bucket and cell (y, z).
    bucket_of: Vec<u32>,
    yz_of: Vec<[i32; 2]>,
    /// Inverse of `entries`: the sorted position of each point.
    pos_of: Vec<u32>,
}

/// ⌊v / cell⌋ without a call to libm's `floorf` (the baseline x86-64 target has no SSE4.1
/// `roundss`, and the call showed up at 5 % of a self-collision profile). Saturates far away;
/// NaN goes to cell 0.
#[inline(always)]
fn cell_coord(v: f32, inv_cell: f32) -> i32 {
    let s = v * inv_cell;
    let t = s as i32; // truncates toward zero, saturating
    t.saturating_sub(((t as f32) > s) as i32)
}

/// Bucket of an integer cell: x + P1·y + P2·z modulo the table size (the grid's x + W·y + W·H·z,
/// with large odd multipliers instead of W and H). Keeping x unmultiplied puts cells adjacent in
/// x into adjacent buckets, so a row of 3 cells is one range of the sorted arrays.
#[inline(always)]
fn bucket(ix: i32, iy: i32, iz: i32, mask: u32) -> u32 {
    let h = ix
        .wrapping_add(iy.wrapping_mul(92_837_111))
        .wrapping_add(iz.wrapping_mul(689_287_499));
    (h as u32) & mask
}

impl SpatialHash {
    pub fn new() -> Self {
        Self::default()
    }

    /// Cell edge length of the last build, m (= its radius).
    pub fn cell_size(&self) -> f32 {
        self.cell
    }

    /// Rebuilds the table over `x` for queries of radius up to `radius` (m, > 0).
    pub fn build(&mut self, x: &[Vec3A], radius: f32) {
        let n = x.len();
        self.cell = if radius.is_finite() {
            radius.max(1e-6)
        } else {
            1e-6
        };
        self.inv_cell = 1.0 / self.cell;
        let table = (2 * n).next_power_of_two().max(16);
        self.mask = (table - 1) as u32;
        self.start.clear();
        self.start.resize(table + 1, 0);
        self.bucket_of.resize(n, 0);
        self.yz_of.resize(n, [0; 2]);
        self.entries.resize(n, 0);
        self.sorted_x.resize(n, Vec3A::ZERO);
        self.sorted_yz.resize(n, [0; 2]);
        self.pos_of.resize(n, 0);
        let ic = self.inv_cell;
        for (i, p) in x.iter().enumerate() {
            let (cx, cy, cz) = (
                cell_coord(p.x, ic),
                cell_coord(p.y, ic),
                cell_coord(p.z, ic),
            );
            let b = bucket(cx, cy, cz, self.mask);
            self.bucket_of[i] = b;
            self.yz_of[i] = [cy, cz];
            self.start[b as usize] += 1;
        }
        // Inclusive prefix sum: start[b] = end of bucket b.
        let mut acc = 0u32;
        for s in self.start.iter_mut() {
            acc += *s;
            *s = acc;
        }
        // Scatter backwards so each bucket lists its points in ascending order; afterwards
        // start[b] is the start of bucket b and start[table] = n.
        for i in (0..n).rev() {
            let b = self.bucket_of[i] as usize;
            self.start[b] -= 1;
            let k = self.start[b] as usize;
            self.entries[k] = i as u32;
            self.sorted_x[k] = x[i];
            self.sorted_yz[k] = self.yz_of[i];
            self.pos_of[i] = k as u32;
        }
    }

    /// Calls `f(j, x_j)` for every point j of the last build that lies in the 3 × 3 × 3 block
    /// of cells around `p`: a superset of the points within the build radius of `p`, each
    /// visited once. The caller checks the distance.
    #[inline]
    pub fn for_each_candidate(&self, p: Vec3A, mut f: impl FnMut(u32, Vec3A)) {
        if self.entries.is_empty() {
            return;
        }
        let ic = self.inv_cell;
        let (cx, cy, cz) = (
            cell_coord(p.x, ic),
            cell_coord(p.y, ic),
            cell_coord(p.z, ic),
        );
        let table = self.mask + 1;
        for dz in -1i32..=1 {
            let z = cz.wrapping_add(dz);
            for dy in -1i32..=1 {
                let y = cy.wrapping_add(dy);
                // Buckets b0, b0 + 1, b0 + 2 (mod the table) hold the row's three cells.
                let b0 = bucket(cx.wrapping_sub(1), y, z, self.mask);
                let b_end = b0 + 3;
                let mut visit = |lo: u32, hi: u32| {
                    let (s, e) = (self.start[lo as usize] as usize, self.start[hi as usize]);
                    for k in s..e as usize {
                        // A point of another row that shares a bucket is not this row's.
                        if self.sorted_yz[k] == [y, z] {
                            f(self.entries[k], self.sorted_x[k]);
                        }
                    }
                };
                if b_end <= table {
                    visit(b0, b_end);
                } else {
                    visit(b0, table);
                    visit(0, b_end - table);
                }
            }
        }
    }

    /// Calls `f(j, x_j)` for every point j of the last build with |x_j − p|² < `r2` (r2 at
    /// most the build radius squared), each once.
    #[inline]
    pub fn for_each_within(&self, p: Vec3A, r2: f32, mut f: impl FnMut(u32, Vec3A)) {
        debug_assert!(
            r2 <= self.cell * self.cell * (1.0 + 1e-5),
            "query radius above the build radius"
        );
        self.for_each_candidate(p, |j, q| {
            if p.distance_squared(q) < r2 {
                f(j, q);
            }
        });
    }

    /// Calls `f(j)` for every point j of the last build within the build radius of point `i`
    /// (|x_j − x_i|² < `r2` ≤ radius²) that lies in i's forward half-shell: the later points of
    /// i's own cell, the next cell in x, and 4 of the 8 other rows of the 3 × 3 × 3 block, one
    /// of each mirror pair. Of any two points within the radius exactly one finds the other, so
    /// calling this for every point lists each pair once, for half the candidates of a full
    /// query (13.5 cells instead of 27).
    #[inline]
    pub fn for_each_forward(&self, i: usize, r2: f32, mut f: impl FnMut(u32)) {
        let k = self.pos_of[i] as usize;
        let (p, [cy, cz]) = (self.sorted_x[k], self.sorted_yz[k]);
        let cx = cell_coord(p.x, self.inv_cell);
        let table = self.mask + 1;
        let mut visit = |lo: usize, hi: usize, y: i32, z: i32| {
            for m in lo..hi {
                // A point of another row that shares a bucket is not this row's.
                if self.sorted_yz[m] == [y, z] && p.distance_squared(self.sorted_x[m]) < r2 {
                    f(self.entries[m]);
                }
            }
        };
        // Own row: after i in its bucket, then the next bucket (the cell at x + 1).
        let b = bucket(cx, cy, cz, self.mask);
        if b + 1 < table {
            visit(k + 1, self.start[b as usize + 2] as usize, cy, cz);
        } else {
            visit(k + 1, self.start[table as usize] as usize, cy, cz);
            visit(0, self.start[1] as usize, cy, cz);
        }
        for (dy, dz) in [(1i32, 0i32), (-1, 1), (0, 1), (1, 1)] {
            let (y, z) = (cy.wrapping_add(dy), cz.wrapping_add(dz));
            let b0 = bucket(cx.wrapping_sub(1), y, z, self.mask);
            let b_end = b0 + 3;
            let at = |b: u32| self.start[b as usize] as usize;
            if b_end <= table {
                visit(at(b0), at(b_end), y, z);
            } else {
                visit(at(b0), at(table), y, z);
                visit(0, at(b_end - table), y, z);
            }
        }
    }

    /// Number of points of the last build.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Point indices in bucket order (queries made in this order reuse the cache).
    pub fn sorted_indices(&self) -> &[u32] {
        &self.entries
    }

    /// Positions in bucket order.
    pub fn sorted_positions(&self) -> &[Vec3A] {
        &self.sorted_x
    }

    /// All pairs (i < j) of points of the last build closer than `radius` (≤ the build radius;
    /// tests, statistics).
    pub fn pairs_within(&self, radius: f32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let r2 = radius * radius;
        for k in 0..self.entries.len() {
            let (i, p) = (self.entries[k], self.sorted_x[k]);
            self.for_each_within(p, r2, |j, _| {
                if i < j {
                    out.push((i, j));
                }
            });
        }
        out.sort_unstable();
        out
    }

    /// The same pairs as [`SpatialHash::pairs_within`], from the forward half-shells.
    pub fn pairs_within_half_shell(&self, radius: f32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let r2 = radius * radius;
        for i in 0..self.entries.len() {
            self.for_each_forward(i, r2, |j| out.push((j.min(i as u32), j.max(i as u32))));
        }
        out.sort_unstable();
        out
    }
}

/// All pairs (i < j) closer than `radius`, by brute force (the reference for tests).
pub fn brute_force_pairs(x: &[Vec3A], radius: f32) -> Vec<(u32, u32)> {
    let r2 = radius * radius;
    let mut out = Vec::new();
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            if x[i].distance_squared(x[j]) < r2 {
                out.push((i as u32, j as u32));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points on exact cell boundaries, at negative coordinates and in a tiny table where many
    /// cells share buckets (and rows wrap around the table's end).
    #[test]
    fn collisions_and_wrapping_rows_find_each_pair_once() {
        let pts: Vec<Vec3A> = (0..6)
            .flat_map(|i| {
                (0..6).map(move |k| Vec3A::new(i as f32 * 0.5 - 1.5, 0.0, k as f32 * 0.5 - 1.0))
            })
            .collect();
        let mut h = SpatialHash::new();
        for r in [0.5001f32, 0.75, 1.0] {
            h.build(&pts, r);
            assert_eq!(h.pairs_within(r), brute_force_pairs(&pts, r), "r = {r}");
            assert_eq!(h.pairs_within_half_shell(r), brute_force_pairs(&pts, r));
        }
        // NaN and infinite points are ignored by distance and never panic.
        let mut bad = pts.clone();
        bad.push(Vec3A::splat(f32::NAN));
        bad.push(Vec3A::splat(f32::INFINITY));
        bad.push(Vec3A::splat(f32::NEG_INFINITY));
        h.build(&bad, 0.75);
        assert_eq!(h.pairs_within(0.75), brute_force_pairs(&bad, 0.75));
        assert_eq!(
            h.pairs_within_half_shell(0.75),
            brute_force_pairs(&bad, 0.75)
        );
    }
}
