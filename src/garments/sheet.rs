//! The mesh a garment is laid out as, before its springs are made ([`Sheet`]): particles at
//! rest, their UVs, triangles, and which particles are pinned.

use crate::math::Vec3;

/// A garment's mesh before springs are made.
#[derive(Default)]
pub(super) struct Sheet {
    pub(super) positions: Vec<Vec3>,
    pub(super) uvs: Vec<crate::math::Vec2>,
    pub(super) triangles: Vec<[u32; 3]>,
    pub(super) pinned: Vec<u32>,
}

impl Sheet {
    /// Appends a `cols × rows` grid whose particle (c, r) is `at(c, r)`; closed around if
    /// `wrap` (column `cols` joins column 0). Returns the index of particle (0, 0).
    pub(super) fn grid(
        &mut self,
        cols: usize,
        rows: usize,
        wrap: bool,
        mut at: impl FnMut(usize, usize) -> Vec3,
    ) -> u32 {
        let base = self.positions.len() as u32;
        for r in 0..rows {
            for c in 0..cols {
                self.positions.push(at(c, r));
                let u = if wrap {
                    c as f32 / cols as f32
                } else {
                    c as f32 / (cols - 1).max(1) as f32
                };
                self.uvs.push(crate::math::Vec2::new(
                    u,
                    r as f32 / (rows - 1).max(1) as f32,
                ));
            }
        }
        let id = |c: usize, r: usize| base + (r * cols + c % cols) as u32;
        let ncols = if wrap { cols } else { cols - 1 };
        for r in 0..rows.saturating_sub(1) {
            for c in 0..ncols {
                let (a, b, cc, d) = (id(c, r), id(c + 1, r), id(c, r + 1), id(c + 1, r + 1));
                // Alternate the diagonal so the sheet has no preferred shear direction.
                if (c + r) % 2 == 0 {
                    self.triangles.push([a, cc, b]);
                    self.triangles.push([b, cc, d]);
                } else {
                    self.triangles.push([a, cc, d]);
                    self.triangles.push([a, d, b]);
                }
            }
        }
        base
    }
}
