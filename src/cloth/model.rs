//! The static part of a cloth world: rest shape, dry masses, springs, pins and the per-garment
//! ranges. Built once (allocation happens here), read by every substep.
//!
//! Several garments live in one model, their particles concatenated, so that self-collision and
//! garment–garment collision are one code path (PHYSICS.md §3): a cape particle and a skirt
//! particle meet in the same spatial hash exactly like two particles of one cloth.

use std::ops::Range;

use crate::math::{Vec3, Vec3A};

use super::params::GarmentParams;

/// The kind of a spring (PHYSICS.md §1). Structural and shear springs are subject to Provot's
/// deformation limit; bending springs are not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpringKind {
    Structural,
    Shear,
    Bend,
}

/// One garment as built (by [`super::build`]), before it joins a world.
#[derive(Clone, Debug)]
pub struct Garment {
    pub name: String,
    /// Rest positions, m (also the initial positions).
    pub rest: Vec<Vec3>,
    /// Triangles (counter-clockwise seen from the front), indices into `rest`.
    pub triangles: Vec<[u32; 3]>,
    /// Springs as index pairs with their kind; rest lengths come from `rest`.
    pub springs: Vec<(u32, u32, SpringKind)>,
    /// Dry mass of each particle, kg.
    pub mass: Vec<f32>,
    /// Indices of pinned particles (they follow targets, see [`super::ClothState::pin_target`]).
    pub pinned: Vec<u32>,
    pub params: GarmentParams,
    /// For a grid garment: (columns, rows) with particle index `row * columns + column`.
    pub grid: Option<(u32, u32)>,
}

/// A set of edges (springs or distance limits) as structs of arrays, partitioned for parallel
/// processing: edge range `chunk_edges[c]` touches only particles of particle chunk `c`, so
/// the chunks can run in parallel without conflicts; `crossing` holds the edges between chunks
/// and runs after them, serially. The partition depends on the particle count only (never on
/// the thread count), so results are bit-identical whatever the number of threads. Within a
/// range, edges are sorted by `a`, and `a < b`.
#[derive(Clone, Debug, Default)]
pub struct EdgeSet {
    pub a: Vec<u32>,
    pub b: Vec<u32>,
    /// Rest length, m.
    pub rest: Vec<f32>,
    /// Stiffness, N/m (as authored; the step may clamp it, see `ClothWorkspace`).
    pub k: Vec<f32>,
    /// Dashpot coefficient along the spring, N·s/m.
    pub kd: Vec<f32>,
    /// Edge ranges per particle chunk.
    pub chunk_edges: Vec<Range<usize>>,
    /// Edges spanning two chunks.
    pub crossing: Range<usize>,
}

impl EdgeSet {
    pub fn len(&self) -> usize {
        self.a.len()
    }

    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// Builds the partitioned set from unordered edges `(a, b, rest, k, kd)`.
    fn partition(mut edges: Vec<(u32, u32, f32, f32, f32)>, chunk_size: usize, n: usize) -> Self {
        // a < b always, and edges sorted by a: the force pass keeps a's sum in a register.
        for e in &mut edges {
            if e.0 > e.1 {
                std::mem::swap(&mut e.0, &mut e.1);
            }
        }
        let chunks = n.div_ceil(chunk_size).max(1);
        let chunk_of = |e: &(u32, u32, f32, f32, f32)| {
            let ca = e.0 as usize / chunk_size;
            let cb = e.1 as usize / chunk_size;
            if ca == cb {
                ca
            } else {
                chunks
            }
        };
        // Stable sort: by chunk (crossing last), then by first index for locality.
        edges.sort_by_key(|e| (chunk_of(e), e.0, e.1));
        let mut set = EdgeSet::default();
        let mut starts = vec![0usize; chunks + 2];
        for e in &edges {
            starts[chunk_of(e) + 1] += 1;
        }
        for c in 0..=chunks {
            starts[c + 1] += starts[c];
        }
        set.chunk_edges = (0..chunks).map(|c| starts[c]..starts[c + 1]).collect();
        set.crossing = starts[chunks]..starts[chunks + 1];
        for (a, b, rest, k, kd) in edges {
            set.a.push(a);
            set.b.push(b);
            set.rest.push(rest);
            set.k.push(k);
            set.kd.push(kd);
        }
        set
    }
}

/// The spring families of a regular grid, in the order the stencil kernel sums them. Each is
/// a shift: the spring anchored at (row r, column c) joins particle `(r, c) + A` to
/// `(r, c) + B` with the (row, column) offsets below (PHYSICS.md §1's structural (i±1, j),
/// (i, j±1), shear (i±1, j±1) and bending (i±2, j), (i, j±2)).
pub const STENCIL_FAMILIES: [StencilFamily; 6] = [
    // Structural along a row, and across rows.
    StencilFamily {
        a: (0, 0),
        b: (0, 1),
        kind: SpringKind::Structural,
    },
    StencilFamily {
        a: (0, 0),
        b: (1, 0),
        kind: SpringKind::Structural,
    },
    // Shear: the two diagonals of each quad.
    StencilFamily {
        a: (0, 0),
        b: (1, 1),
        kind: SpringKind::Shear,
    },
    StencilFamily {
        a: (0, 1),
        b: (1, 0),
        kind: SpringKind::Shear,
    },
    // Bending, two apart along a row and across rows.
    StencilFamily {
        a: (0, 0),
        b: (0, 2),
        kind: SpringKind::Bend,
    },
    StencilFamily {
        a: (0, 0),
        b: (2, 0),
        kind: SpringKind::Bend,
    },
];

/// One spring family of the grid stencil: end a at (row, column) offset `a` from the anchor,
/// end b at offset `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StencilFamily {
    pub a: (usize, usize),
    pub b: (usize, usize),
    pub kind: SpringKind,
}

impl StencilFamily {
    /// Anchor rows and columns of the family on an `nx × ny` grid: `0..rows`, `0..cols`.
    pub fn extent(&self, nx: usize, ny: usize) -> (usize, usize) {
        let dr = self.a.0.max(self.b.0);
        let dc = self.a.1.max(self.b.1);
        (ny.saturating_sub(dr), nx.saturating_sub(dc))
    }
}

/// The stencil family and anchor index of the spring joining grid particles `a` and `b` (local
/// indices `r·nx + c`, either order), or `None` if no family joins them.
fn classify(a: usize, b: usize, nx: usize) -> Option<(usize, usize)> {
    let (a, b) = (a.min(b), a.max(b));
    let (ra, ca, rb, cb) = (a / nx, a % nx, b / nx, b % nx);
    STENCIL_FAMILIES.iter().enumerate().find_map(|(f, fam)| {
        // Anchor from end a's offset; the family matches if end b sits at its offset.
        let (r, c) = (ra.checked_sub(fam.a.0)?, ca.checked_sub(fam.a.1)?);
        (r + fam.b.0 == rb && c + fam.b.1 == cb).then_some((f, r * nx + c))
    })
}

/// A grid garment as a stencil: its springs are exactly the six families of
/// [`STENCIL_FAMILIES`] over an `nx × ny` grid (particle `first + r·nx + c`), each family with
/// one stiffness and one dashpot, so that the force kernel can treat every family as a shifted
/// pair of contiguous rows (no index lists, no scatter conflicts, fully vectorisable).
#[derive(Clone, Debug)]
pub struct GridStencil {
    /// Garment index.
    pub garment: usize,
    /// Index of particle (0, 0) in the world.
    pub first: usize,
    pub nx: usize,
    pub ny: usize,
    /// Rest length, m, of each family's spring by anchor index `r·nx + c` (0 where the family
    /// has no spring at that anchor). Rest lengths differ per spring when the grid is jittered.
    pub rest: [Vec<f32>; 6],
    /// Stiffness per family, N/m (as authored).
    pub k: [f32; 6],
    /// Dashpot per family, N·s/m (as authored).
    pub kd: [f32; 6],
    /// Rows per band of parallel work (from the model's chunk size, never from the thread
    /// count; the kernel's sums do not depend on it anyway).
    pub band_rows: usize,
}

impl GridStencil {
    /// The stencil of garment `g` (particles from `first`), if its springs (`springs`, world
    /// indices, as pushed by [`ClothModel::with_chunk_size`]) are exactly the grid's families,
    /// each with one k and k_d; `None` for any other garment (it then runs on the edge list).
    fn detect(
        g: &Garment,
        garment: usize,
        first: usize,
        springs: &[(u32, u32, f32, f32, f32)],
        chunk_size: usize,
    ) -> Option<Self> {
        let (nx, ny) = g.grid?;
        let (nx, ny) = (nx as usize, ny as usize);
        if nx < 2 || ny < 2 || nx * ny != g.rest.len() {
            return None;
        }
        let mut rest: [Vec<f32>; 6] = Default::default();
        let mut seen: [Vec<bool>; 6] = Default::default();
        for f in 0..6 {
            rest[f] = vec![0.0; nx * ny];
            seen[f] = vec![false; nx * ny];
        }
        let mut k = [f32::NAN; 6];
        let mut kd = [f32::NAN; 6];
        for &(a, b, l0, ks, kds) in springs {
            let (f, anchor) = classify(a as usize - first, b as usize - first, nx)?;
            if seen[f][anchor] {
                return None;
            }
            seen[f][anchor] = true;
            rest[f][anchor] = l0;
            if k[f].is_nan() {
                (k[f], kd[f]) = (ks, kds);
            } else if k[f] != ks || kd[f] != kds {
                return None;
            }
        }
        // Every anchor of every family must hold its spring (no missing springs either).
        for (f, fam) in STENCIL_FAMILIES.iter().enumerate() {
            let (rows, cols) = fam.extent(nx, ny);
            let count = seen[f].iter().filter(|&&s| s).count();
            if count != rows * cols {
                return None;
            }
            if count == 0 {
                (k[f], kd[f]) = (0.0, 0.0);
            }
        }
        // The kinds must be the grid's too: the kind decides which springs Provot limits.
        let kinds_match = g.springs.iter().all(|&(a, b, kind)| {
            classify(a as usize, b as usize, nx)
                .is_some_and(|(f, _)| STENCIL_FAMILIES[f].kind == kind)
        });
        if !kinds_match {
            return None;
        }
        Some(GridStencil {
            garment,
            first,
            nx,
            ny,
            rest,
            k,
            kd,
            band_rows: chunk_size.div_ceil(nx).max(8),
        })
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.nx * self.ny
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of bands of parallel work.
    pub fn bands(&self) -> usize {
        self.ny.div_ceil(self.band_rows)
    }
}

/// Where one garment's particles and triangles sit in the concatenated world.
#[derive(Clone, Debug)]
pub struct GarmentInfo {
    pub name: String,
    pub particles: Range<usize>,
    pub triangles: Range<usize>,
    pub params: GarmentParams,
    pub grid: Option<(u32, u32)>,
    /// Largest eigenvalue of M⁻¹K over this garment's springs at rest, 1/s² (ω²_max).
    pub omega2_max: f32,
    /// Largest eigenvalue of M⁻¹C (dashpots), 1/s (γ_max).
    pub gamma_max: f32,
}

/// The static cloth world. Arrays are indexed by particle (`rest`, `mass_dry`, …), by spring
/// (`springs`), by limit edge (`limits`) or by triangle.
#[derive(Clone, Debug)]
pub struct ClothModel {
    /// Rest positions, m.
    pub rest: Vec<Vec3A>,
    /// Dry mass, kg (the state's current mass is `mass_dry (1 + wet)`).
    pub mass_dry: Vec<f32>,
    /// Index into `pins` of a pinned particle, `u32::MAX` for a free one.
    pub pin_slot: Vec<u32>,
    /// Pinned particle indices, in pin-slot order.
    pub pins: Vec<u32>,
    /// Garment index of each particle.
    pub garment_of: Vec<u32>,
    /// Collision thickness of each particle, m.
    pub thickness: Vec<f32>,
    /// Friction coefficient μ of each particle against colliders.
    pub friction: Vec<f32>,
    /// All triangles, indices into the particle arrays.
    pub triangles: Vec<[u32; 3]>,
    /// Rest area of each triangle, m².
    pub triangle_area: Vec<f32>,
    /// All springs (structural, shear, bending) for the force pass.
    pub springs: EdgeSet,
    /// Structural and shear springs, for Provot's deformation limit.
    pub limits: EdgeSet,
    /// Grid garments whose springs are exactly the regular grid's (the fast force kernel runs
    /// them as a stencil over rows, see [`super::forces::springs_fast`]).
    pub stencils: Vec<GridStencil>,
    /// The springs of every other garment (a subset of `springs`, partitioned the same way),
    /// for the edge-list kernel of the fast path.
    pub general: EdgeSet,
    /// Particles per chunk of parallel work (the last chunk may be shorter).
    pub chunk_size: usize,
    pub garments: Vec<GarmentInfo>,
    /// Largest particle thickness, m.
    pub max_thickness: f32,
    /// Smallest particle thickness, m (0 without particles).
    pub min_thickness: f32,
    /// Each triangle's cover radius at rest, m: the furthest a point of it is from its nearest
    /// corner ([`crate::cloth::stages::faces::cover_radius`]). A collider thinner than this can
    /// pass through the triangle without meeting a particle (stage `collide`'s face pass).
    pub triangle_cover: Vec<f32>,
    /// The largest of `triangle_cover`, m (0 without triangles).
    pub max_triangle_cover: f32,
    /// Long-range attachments: each free particle a pin can reach through limit springs, tied to
    /// its nearest pin (see [`Tethers`]).
    pub tethers: Tethers,
}

/// Long-range attachments (Kim, Chentanez & Müller-Fischer 2012, "Long Range Attachments — A
/// Method to Simulate Inextensible Clothing in Computer Games"): free particle `particle[k]` is
/// tied to pinned particle `anchor[k]`, the pin nearest to it along the cloth, with `length[k]`
/// that shortest path's rest length through limit (structural and shear) springs.
///
/// If every limit spring is within Provot's limit `(1 + τ) l0`, the triangle inequality along
/// that path gives `|x − x_anchor| ≤ (1 + τ) length`; so enforcing the tether never excludes a
/// state the deformation limit allows, it only gets there in one step where Gauss–Seidel over
/// the springs needs a pass per spring of the path. Particles sorted ascending, one tether each.
#[derive(Clone, Debug, Default)]
pub struct Tethers {
    pub particle: Vec<u32>,
    pub anchor: Vec<u32>,
    pub length: Vec<f32>,
    /// `anchor[k]`'s index into [`ClothModel::pins`].
    pub anchor_slot: Vec<u32>,
    /// Per parallel chunk of particles, the range of its tethers.
    pub chunk_tethers: Vec<Range<usize>>,
}

impl Tethers {
    pub fn len(&self) -> usize {
        self.particle.len()
    }

    pub fn is_empty(&self) -> bool {
        self.particle.is_empty()
    }

    /// Multi-source Dijkstra from every pin over the limit edges `(a, b, rest)` of `n`
    /// particles (`pinned[i]` true for a pin).
    fn build(n: usize, pinned: &[bool], edges: &[(u32, u32, f32)]) -> Self {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut adj_start = vec![0u32; n + 1];
        for &(a, b, _) in edges {
            adj_start[a as usize + 1] += 1;
            adj_start[b as usize + 1] += 1;
        }
        for i in 0..n {
            adj_start[i + 1] += adj_start[i];
        }
        let mut fill = adj_start.clone();
        let mut adj = vec![(0u32, 0.0f32); 2 * edges.len()];
        for &(a, b, r) in edges {
            adj[fill[a as usize] as usize] = (b, r);
            fill[a as usize] += 1;
            adj[fill[b as usize] as usize] = (a, r);
            fill[b as usize] += 1;
        }
        let mut dist = vec![f32::INFINITY; n];
        let mut anchor = vec![u32::MAX; n];
        // Non-negative f32s order like their bit patterns.
        let mut heap = BinaryHeap::new();
        for i in 0..n {
            if pinned[i] {
                dist[i] = 0.0;
                anchor[i] = i as u32;
                heap.push(Reverse((0u32, i as u32)));
            }
        }
        while let Some(Reverse((d, i))) = heap.pop() {
            let (d, i) = (f32::from_bits(d), i as usize);
            if d > dist[i] {
                continue;
            }
            for &(j, r) in &adj[adj_start[i] as usize..adj_start[i + 1] as usize] {
                let nd = d + r;
                if nd < dist[j as usize] {
                    dist[j as usize] = nd;
                    anchor[j as usize] = anchor[i];
                    heap.push(Reverse((nd.to_bits(), j)));
                }
            }
        }
        let mut t = Tethers::default();
        for i in 0..n {
            if !pinned[i] && anchor[i] != u32::MAX {
                t.particle.push(i as u32);
                t.anchor.push(anchor[i]);
                t.length.push(dist[i]);
            }
        }
        t
    }

    /// Fills `anchor_slot` and `chunk_tethers` for the model's pins and chunks.
    fn index(&mut self, pin_slot: &[u32], chunk_size: usize) {
        self.anchor_slot = self.anchor.iter().map(|&a| pin_slot[a as usize]).collect();
        let n = pin_slot.len();
        self.chunk_tethers = (0..n.div_ceil(chunk_size).max(1))
            .map(|c| {
                let at = |p: usize| self.particle.partition_point(|&i| (i as usize) < p);
                at(c * chunk_size)..at((c + 1) * chunk_size)
            })
            .collect();
    }
}

/// Largest number of particles per chunk of parallel work. Never derived from the thread count,
/// so that the partition, and with it every floating-point sum, is the same on any machine.
/// Large enough that a chunk's work (~20–60 µs) dwarfs rayon's scheduling cost.
pub const CHUNK_SIZE: usize = 1024;

/// The chunk size [`ClothModel::new`] gives `n` particles: at most [`CHUNK_SIZE`], cut into an
/// even number of equal chunks. A fixed 1,024 left the dressed ninja's 5,218 particles in five
/// full chunks and one of 98: on two threads one ran three full chunks while the other ran two
/// and the scraps, so every parallel stage took 3,072/2,609 = 1.18× its balanced time. Equal
/// chunks in an even count split evenly over two (and four) threads. Depends on `n` only.
pub fn balanced_chunk_size(n: usize) -> usize {
    let k = n.div_ceil(CHUNK_SIZE);
    if k <= 1 {
        return CHUNK_SIZE;
    }
    n.div_ceil(k + (k & 1))
}

impl ClothModel {
    /// Concatenates garments into one world, chunked by [`balanced_chunk_size`].
    pub fn new(garments: Vec<Garment>) -> Self {
        let n = garments.iter().map(|g| g.rest.len()).sum();
        Self::with_chunk_size(garments, balanced_chunk_size(n))
    }

    /// As [`ClothModel::new`] with an explicit chunk size (tests use small chunks to exercise the
    /// parallel partition on small cloths).
    pub fn with_chunk_size(garments: Vec<Garment>, chunk_size: usize) -> Self {
        let chunk_size = chunk_size.max(1);
        let n: usize = garments.iter().map(|g| g.rest.len()).sum();
        let mut m = ClothModel {
            rest: Vec::with_capacity(n),
            mass_dry: Vec::with_capacity(n),
            pin_slot: Vec::with_capacity(n),
            pins: Vec::new(),
            garment_of: Vec::with_capacity(n),
            thickness: Vec::with_capacity(n),
            friction: Vec::with_capacity(n),
            triangles: Vec::new(),
            triangle_area: Vec::new(),
            springs: EdgeSet::default(),
            limits: EdgeSet::default(),
            stencils: Vec::new(),
            general: EdgeSet::default(),
            chunk_size,
            garments: Vec::new(),
            max_thickness: 0.0,
            min_thickness: 0.0,
            triangle_cover: Vec::new(),
            max_triangle_cover: 0.0,
            tethers: Tethers::default(),
        };
        let mut springs = Vec::new();
        let mut limits = Vec::new();
        let mut general = Vec::new();
        for (gi, g) in garments.into_iter().enumerate() {
            let base = m.rest.len() as u32;
            let tri_base = m.triangles.len();
            let p = &g.params;
            m.rest.extend(g.rest.iter().map(|&x| Vec3A::from(x)));
            m.mass_dry.extend_from_slice(&g.mass);
            m.garment_of
                .extend(std::iter::repeat_n(gi as u32, g.rest.len()));
            m.thickness
                .extend(std::iter::repeat_n(p.thickness, g.rest.len()));
            m.friction
                .extend(std::iter::repeat_n(p.friction, g.rest.len()));
            m.pin_slot
                .extend(std::iter::repeat_n(u32::MAX, g.rest.len()));
            for &i in &g.pinned {
                let i = (base + i) as usize;
                if m.pin_slot[i] == u32::MAX {
                    m.pin_slot[i] = m.pins.len() as u32;
                    m.pins.push(i as u32);
                }
            }
            for t in &g.triangles {
                let [a, b, c] = t.map(|i| g.rest[i as usize]);
                m.triangle_area.push(0.5 * (b - a).cross(c - a).length());
                let cover = crate::cloth::stages::faces::cover_radius(a.into(), b.into(), c.into());
                m.triangle_cover.push(cover);
                m.max_triangle_cover = m.max_triangle_cover.max(cover);
                m.triangles.push(t.map(|i| i + base));
            }
            m.max_thickness = m.max_thickness.max(p.thickness);
            m.min_thickness = if gi == 0 {
                p.thickness
            } else {
                m.min_thickness.min(p.thickness)
            };
            let first_spring = springs.len();
            for &(a, b, kind) in &g.springs {
                let rest = g.rest[a as usize].distance(g.rest[b as usize]);
                let k = match kind {
                    SpringKind::Structural => p.k_structural,
                    SpringKind::Shear => p.k_shear,
                    SpringKind::Bend => p.k_bend,
                };
                let mean_mass = 0.5 * (g.mass[a as usize] + g.mass[b as usize]);
                let kd = 2.0 * p.damping_ratio * (k * mean_mass).max(0.0).sqrt();
                springs.push((a + base, b + base, rest, k, kd));
                if kind != SpringKind::Bend {
                    limits.push((a + base, b + base, rest, 0.0, 0.0));
                }
            }
            let mine = &springs[first_spring..];
            match GridStencil::detect(&g, gi, base as usize, mine, chunk_size) {
                Some(st) => m.stencils.push(st),
                None => general.extend_from_slice(mine),
            }
            m.garments.push(GarmentInfo {
                name: g.name,
                particles: base as usize..m.rest.len(),
                triangles: tri_base..m.triangles.len(),
                params: g.params,
                grid: g.grid,
                omega2_max: 0.0,
                gamma_max: 0.0,
            });
        }
        let pinned: Vec<bool> = m.pin_slot.iter().map(|&s| s != u32::MAX).collect();
        let edges: Vec<_> = limits.iter().map(|&(a, b, r, _, _)| (a, b, r)).collect();
        m.tethers = Tethers::build(n, &pinned, &edges);
        m.tethers.index(&m.pin_slot, chunk_size);
        m.springs = EdgeSet::partition(springs, chunk_size, n);
        m.limits = EdgeSet::partition(limits, chunk_size, n);
        m.general = EdgeSet::partition(general, chunk_size, n);
        for g in 0..m.garments.len() {
            let (w2, gamma) = stiffness_spectrum(&m, m.garments[g].particles.clone());
            m.garments[g].omega2_max = w2;
            m.garments[g].gamma_max = gamma;
        }
        m
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.rest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// Number of parallel chunks.
    pub fn chunks(&self) -> usize {
        self.len().div_ceil(self.chunk_size).max(1)
    }

    pub fn is_pinned(&self, i: usize) -> bool {
        self.pin_slot[i] != u32::MAX
    }

    /// The most stretched deformation-limit spring (structural or shear) with at least one
    /// free end, at positions `x`: its index in `limits` and its length / rest length, what
    /// Provot's limit bounds (1.1 by default; the dressed scene's checks allow 1.12). `None`
    /// without such springs; the first spring with a NaN length is returned as the worst.
    pub fn worst_limit_spring(&self, x: &[Vec3A]) -> Option<(usize, f32)> {
        self.worst_limit_spring_in(x, None)
    }

    /// [`ClothModel::worst_limit_spring`] among the springs of garment `garment` only (all
    /// garments with `None`).
    pub fn worst_limit_spring_in(
        &self,
        x: &[Vec3A],
        garment: Option<usize>,
    ) -> Option<(usize, f32)> {
        let l = &self.limits;
        let mut worst: Option<(usize, f32)> = None;
        for e in 0..l.len() {
            let (a, b) = (l.a[e] as usize, l.b[e] as usize);
            if self.is_pinned(a) && self.is_pinned(b) {
                continue;
            }
            if garment.is_some_and(|g| self.garment_of[a] as usize != g) {
                continue;
            }
            let r = x[a].distance(x[b]) / l.rest[e];
            if r.is_nan() {
                return Some((e, r));
            }
            if worst.is_none_or(|(_, w)| r > w) {
                worst = Some((e, r));
            }
        }
        worst
    }

    /// Total dry mass, kg.
    pub fn total_mass(&self) -> f32 {
        self.mass_dry.iter().sum()
    }
}

/// The largest eigenvalues, 1/s² and 1/s, of M⁻¹K and M⁻¹C for one garment's springs at rest
/// (K: stiffness, C: dashpots, M: dry masses, pins fixed), by power iteration with the
/// Rayleigh quotient. Explicit (symplectic Euler / Verlet) integration of a mode with
/// M⁻¹K-eigenvalue ω² and damping rate γ is stable when Δt² ω² + 2 Δt γ < 4 (the roots of
/// z² − (2 − Δtγ − Δt²ω²) z + (1 − Δtγ) lie in the unit disc); the step uses these two numbers to
/// clamp springs a time step cannot carry instead of exploding.
pub fn stiffness_spectrum(model: &ClothModel, particles: std::ops::Range<usize>) -> (f32, f32) {
    let set = &model.springs;
    let edges: Vec<usize> = (0..set.len())
        .filter(|&e| particles.contains(&(set.a[e] as usize)))
        .collect();
    let n = particles.len();
    if n == 0 || edges.is_empty() {
        return (0.0, 0.0);
    }
    let base = particles.start;
    let free: Vec<f32> = particles
        .clone()
        .map(|i| if model.is_pinned(i) { 0.0 } else { 1.0 })
        .collect();
    let mass: Vec<f32> = model.mass_dry[particles.clone()].to_vec();
    let largest = |coef: &[f32]| -> f32 {
        // Symmetric form A = M^-1/2 K M^-1/2 acting on y = M^1/2 x, so the Rayleigh quotient
        // is an under-estimate that converges to λ_max from below.
        let mut y: Vec<Vec3A> = (0..n)
            .map(|i| {
                let h = (i as u32).wrapping_mul(2_654_435_761);
                let s = |k: u32| ((h.rotate_left(k) & 0xFFFF) as f32 / 65535.0) - 0.5;
                Vec3A::new(s(0), s(11), s(22)) * free[i]
            })
            .collect();
        let mut ay = vec![Vec3A::ZERO; n];
        let mut lambda = 0.0f32;
        for _ in 0..60 {
            let norm = y.iter().map(|v| v.length_squared()).sum::<f32>().sqrt();
            if norm < 1e-30 {
                return 0.0;
            }
            y.iter_mut().for_each(|v| *v /= norm);
            ay.fill(Vec3A::ZERO);
            for &e in &edges {
                let (a, b) = (set.a[e] as usize - base, set.b[e] as usize - base);
                let u = (model.rest[b + base] - model.rest[a + base]).normalize_or_zero();
                let xa = y[a] / mass[a].sqrt();
                let xb = y[b] / mass[b].sqrt();
                let f = u * (coef[e] * u.dot(xb - xa));
                ay[a] += f;
                ay[b] -= f;
            }
            for i in 0..n {
                ay[i] = -ay[i] / mass[i].sqrt() * free[i];
            }
            lambda = y.iter().zip(&ay).map(|(a, b)| a.dot(*b)).sum::<f32>();
            std::mem::swap(&mut y, &mut ay);
        }
        lambda.max(0.0)
    };
    (largest(&set.k), largest(&set.kd))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each tether is a shortest path through the limit springs to the nearest pin: checked
    /// against Floyd–Warshall on a 9 × 9 sheet held at two corners and in the middle (so the
    /// nearest pin varies), and every free particle has one.
    #[test]
    fn tethers_are_shortest_paths_to_the_nearest_pin() {
        use crate::cloth::build::{grid, GridSpec};
        let mut spec = GridSpec::square(9, 1.0, Vec3::ZERO);
        spec.pinned = vec![(0, 0), (8, 0), (4, 4)];
        let g = grid("sheet", &spec, &GarmentParams::default()).unwrap();
        let m = ClothModel::new(vec![g]);
        let n = m.len();
        let mut d = vec![vec![f32::INFINITY; n]; n];
        for (i, row) in d.iter_mut().enumerate() {
            row[i] = 0.0;
        }
        let l = &m.limits;
        for e in 0..l.len() {
            let (a, b) = (l.a[e] as usize, l.b[e] as usize);
            d[a][b] = d[a][b].min(l.rest[e]);
            d[b][a] = d[a][b];
        }
        for k in 0..n {
            for i in 0..n {
                for j in 0..n {
                    let via = d[i][k] + d[k][j];
                    if via < d[i][j] {
                        d[i][j] = via;
                    }
                }
            }
        }
        let t = &m.tethers;
        assert_eq!(t.len(), n - m.pins.len());
        for k in 0..t.len() {
            let (i, a) = (t.particle[k] as usize, t.anchor[k] as usize);
            assert!(!m.is_pinned(i) && m.is_pinned(a));
            let best = m
                .pins
                .iter()
                .map(|&p| d[i][p as usize])
                .fold(f32::INFINITY, f32::min);
            assert!((t.length[k] - best).abs() <= 1e-5 * best, "particle {i}");
            assert!(
                (d[i][a] - best).abs() <= 1e-5 * best,
                "particle {i}: anchor {a}"
            );
        }
        assert!(t.particle.windows(2).all(|w| w[0] < w[1]));
    }

    /// The worst limit spring is the most stretched structural or shear spring with a free end;
    /// springs between two pins and bending springs do not count.
    #[test]
    fn worst_limit_spring_reads_the_free_limit_springs() {
        use crate::cloth::build::{grid, GridSpec};
        let mut spec = GridSpec::square(4, 0.3, Vec3::ZERO);
        spec.pinned = vec![(0, 0), (1, 0)];
        let g = grid("sheet", &spec, &GarmentParams::default()).unwrap();
        let m = ClothModel::new(vec![g]);
        let stretch = |x: &[Vec3A]| m.worst_limit_spring(x).unwrap().1;
        let mut x = m.rest.clone();
        assert!((stretch(&x) - 1.0).abs() < 1e-5);
        // Pulling the two pins apart stretches only their own spring (and the shear springs
        // from each to the next row, a little): the pinned pair is not counted.
        let (p, q) = (m.pins[0] as usize, m.pins[1] as usize);
        let (xp, xq) = (x[p], x[q]);
        x[q] = xp + (xq - xp) * 1.5;
        let w = stretch(&x);
        assert!(w > 1.0 && w < 1.5, "{w}");
        // A free particle lifted by a spacing (0.1 m): its structural springs to the side
        // reach √2 of their rest length, more than anything else.
        let mut y = m.rest.clone();
        let free = (0..m.len()).find(|&i| !m.is_pinned(i)).unwrap();
        y[free] += Vec3A::new(0.0, 0.1, 0.0);
        let (e, w) = m.worst_limit_spring(&y).unwrap();
        assert!((w - 2f32.sqrt()).abs() < 1e-4, "{w}");
        assert!(m.limits.a[e] as usize == free || m.limits.b[e] as usize == free);
        y[free] = Vec3A::splat(f32::NAN);
        assert!(stretch(&y).is_nan());
    }

    /// Chunks are never larger than CHUNK_SIZE, come in an even number once there are two or
    /// more, and are equal but for the last, which is at most one particle per chunk short.
    #[test]
    fn balanced_chunks_are_even_and_equal() {
        assert_eq!(balanced_chunk_size(5_218), 870);
        for n in [
            1, 100, 1_024, 1_025, 1_600, 3_600, 5_218, 10_000, 65_536, 100_003,
        ] {
            let cs = balanced_chunk_size(n);
            assert!(cs <= CHUNK_SIZE, "n {n}: chunk {cs}");
            let k = n.div_ceil(cs);
            if n > CHUNK_SIZE {
                assert_eq!(k % 2, 0, "n {n}: {k} chunks");
                let last = n - (k - 1) * cs;
                assert!(cs - last < k, "n {n}: chunk {cs}, last {last}");
            } else {
                assert_eq!(k, 1, "n {n}");
            }
        }
    }
}
