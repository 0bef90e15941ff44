//! Spatial hashing for self- and garment–garment collision (PHYSICS.md §3; Teschner et al.
//! 2003, "Optimized spatial hashing for collision detection of deformable objects", whose three
//! primes are used below).
//!
//! The table is rebuilt every substep by a counting sort (count per bucket, prefix sum,
//! scatter), which allocates nothing once the buffers have grown to the particle count. The
//! cell size is twice the query radius, so the ball of radius r around any point overlaps at
//! most 2 cells per axis: a query visits at most 8 cells instead of 27.

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
    /// Scratch: each point's bucket.
    bucket_of: Vec<u32>,
    /// Inverse of `entries`: the sorted position of each point.
    pos_of: Vec<u32>,
}

/// ⌊v / cell⌋ without a call to libm's `floorf` (the baseline x86-64 target has no SSE4.1
/// `roundss`, and the call showed up at 5 % of a self-collision profile). Saturates far away.
#[inline(always)]
fn cell_coord(v: f32, inv_cell: f32) -> i32 {
    let s = v * inv_cell;
    let t = s as i32; // truncates toward zero, saturating
    t - ((t as f32) > s) as i32
}

/// Bucket of an integer cell: x + P1·y + P2·z modulo the table size (the homework's
/// x + W·y + W·H·z, with large odd multipliers instead of the grid's W and H). Keeping x
/// unmultiplied puts cells adjacent in x into adjacent buckets, so a query's 8 cells touch
/// about 4 cache lines, and consecutive queries (made in bucket order) reuse them.
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

    /// Cell edge length of the last build, m.
    pub fn cell_size(&self) -> f32 {
        self.cell
    }

    /// Rebuilds the table over `x` for queries of radius up to `radius` (m, > 0).
    pub fn build(&mut self, x: &[Vec3A], radius: f32) {
        let n = x.len();
        self.cell = 2.0 * radius.max(1e-6);
        self.inv_cell = 1.0 / self.cell;
        let table = (2 * n).next_power_of_two().max(16);
        self.mask = (table - 1) as u32;
        self.start.clear();
        self.start.resize(table + 1, 0);
        self.bucket_of.resize(n, 0);
        self.entries.resize(n, 0);
        self.sorted_x.resize(n, Vec3A::ZERO);
        self.pos_of.resize(n, 0);
        let ic = self.inv_cell;
        for (i, p) in x.iter().enumerate() {
            let b = bucket(
                cell_coord(p.x, ic),
                cell_coord(p.y, ic),
                cell_coord(p.z, ic),
                self.mask,
            );
            self.bucket_of[i] = b;
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
            self.pos_of[i] = k as u32;
        }
    }

    /// Calls `f(j, x_j)` for every point j that lies in a cell touched by the ball of radius
    /// `radius` (≤ the build radius) around `p`; a superset of the points within `radius`,
    /// each visited once. The caller checks the distance.
    #[inline]
    pub fn for_each_candidate(&self, p: Vec3A, radius: f32, mut f: impl FnMut(u32, Vec3A)) {
        debug_assert!(
            radius <= 0.5 * self.cell * (1.0 + 1e-6),
            "query radius above the build radius"
        );
        let ic = self.inv_cell;
        let lo = [
            cell_coord(p.x - radius, ic),
            cell_coord(p.y - radius, ic),
            cell_coord(p.z - radius, ic),
        ];
        let hi = [
            cell_coord(p.x + radius, ic),
            cell_coord(p.y + radius, ic),
            cell_coord(p.z + radius, ic),
        ];
        let mut seen = [u32::MAX; 8];
        let mut n_seen = 0;
        for ix in lo[0]..=hi[0].min(lo[0] + 1) {
            for iy in lo[1]..=hi[1].min(lo[1] + 1) {
                for iz in lo[2]..=hi[2].min(lo[2] + 1) {
                    let b = bucket(ix, iy, iz, self.mask);
                    // Two cells may share a bucket: visit each bucket once.
                    if seen[..n_seen].contains(&b) {
                        continue;
                    }
                    seen[n_seen] = b;
                    n_seen += 1;
                    let (s, e) = (
                        self.start[b as usize] as usize,
                        self.start[b as usize + 1] as usize,
                    );
                    for k in s..e {
                        f(self.entries[k], self.sorted_x[k]);
                    }
                }
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

    /// Sorted position of point `i`.
    #[inline]
    pub fn position_of(&self, i: usize) -> usize {
        self.pos_of[i] as usize
    }

    /// All pairs (i < j) of points of the last build closer than `radius` (tests, statistics).
    pub fn pairs_within(&self, radius: f32) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let r2 = radius * radius;
        for k in 0..self.entries.len() {
            let (i, p) = (self.entries[k], self.sorted_x[k]);
            self.for_each_candidate(p, radius, |j, q| {
                if i < j && p.distance_squared(q) < r2 {
                    out.push((i, j));
                }
            });
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
