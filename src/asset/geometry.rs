//! Mesh clean-up the loader applies: primitive modes to triangle lists, smooth normals, skin
//! weight renormalisation. Plain functions over arrays, independent of glTF.

use crate::math::Vec3;

/// How a primitive's index sequence forms triangles (glTF 2.0 §3.7.2.1 "Topology Types").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topology {
    Triangles,
    TriangleStrip,
    TriangleFan,
}

/// Converts an index sequence to a triangle list.
///
/// Strips: triangle `i` is `(p[i], p[i + 1 + i%2], p[i + 2 - i%2])`; fans: `(p[i+1], p[i+2], p[0])`
/// (glTF 2.0 §3.7.2.1), which keeps a consistent winding. Degenerate strip/fan triangles (two
/// equal indices, the usual way strips are stitched together) are dropped; a list keeps every
/// triangle as written and drops a trailing incomplete one. Returns the list and the number of
/// indices dropped because the count was not a multiple of three.
pub fn triangulate(seq: Vec<u32>, topology: Topology) -> (Vec<u32>, usize) {
    match topology {
        Topology::Triangles => {
            let rem = seq.len() % 3;
            let mut seq = seq;
            seq.truncate(seq.len() - rem);
            (seq, rem)
        }
        Topology::TriangleStrip => {
            let n = seq.len().saturating_sub(2);
            let mut out = Vec::with_capacity(n * 3);
            for i in 0..n {
                let odd = i % 2;
                let t = [seq[i], seq[i + 1 + odd], seq[i + 2 - odd]];
                if t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
                    out.extend_from_slice(&t);
                }
            }
            (out, 0)
        }
        Topology::TriangleFan => {
            let n = seq.len().saturating_sub(2);
            let mut out = Vec::with_capacity(n * 3);
            for i in 0..n {
                let t = [seq[i + 1], seq[i + 2], seq[0]];
                if t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
                    out.extend_from_slice(&t);
                }
            }
            (out, 0)
        }
    }
}

/// Smooth vertex normals: the sum of the (unnormalised) face normals of the triangles around
/// each vertex, i.e. weighted by triangle area, then normalised. Vertices no triangle uses, or
/// whose triangles cancel out, get +Y; a triangle with an index out of range is skipped.
pub fn smooth_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut n = Vec::new();
    smooth_normals_into(positions, indices, &mut n);
    n
}

/// [`smooth_normals`] into a reused buffer (per-frame callers: the renderer, the exporter).
pub fn smooth_normals_into(positions: &[Vec3], indices: &[u32], n: &mut Vec<Vec3>) {
    n.clear();
    n.resize(positions.len(), Vec3::ZERO);
    for t in indices.chunks_exact(3) {
        let (a, b, c) = (t[0] as usize, t[1] as usize, t[2] as usize);
        if a.max(b).max(c) >= n.len() {
            continue;
        }
        // The cross product's length is twice the triangle's area: area weighting for free.
        let f = (positions[b] - positions[a]).cross(positions[c] - positions[a]);
        n[a] += f;
        n[b] += f;
        n[c] += f;
    }
    for v in n.iter_mut() {
        *v = v.try_normalize().unwrap_or(Vec3::Y);
    }
}

/// What [`normalise_weights`] changed, for the loader's one-line warning.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WeightFixes {
    /// Vertices whose weights summed further from 1 than the tolerance.
    pub renormalised: usize,
    /// The sum furthest from 1 among those (1.0 when none).
    pub worst_sum: f32,
    /// Vertices whose weights summed to zero (bound to their first joint slot with weight 1).
    pub zero_sum: usize,
    /// Negative weights clamped to zero.
    pub negative: usize,
}

impl WeightFixes {
    pub fn merge(&mut self, o: &WeightFixes) {
        if o.renormalised > 0
            && (self.renormalised == 0 || (o.worst_sum - 1.0).abs() > (self.worst_sum - 1.0).abs())
        {
            self.worst_sum = o.worst_sum;
        }
        self.renormalised += o.renormalised;
        self.zero_sum += o.zero_sum;
        self.negative += o.negative;
    }
}

/// Makes each vertex's weights (4 in `w0`, and 4 more in `w1` when it is not empty) sum to 1.
///
/// `tolerance` is how far a sum may be from 1 before the vertex counts as "renormalised" in the
/// report (quantised weights are never exact: u8 weights are off by up to 4 × ½/255); every vertex
/// is rescaled regardless so that skinning sees exact sums. Negative weights (invalid) are clamped
/// to 0. A vertex whose weights sum to 0 gets weight 1 on its first slot: it follows that joint
/// rigidly instead of collapsing to the origin.
pub fn normalise_weights(w0: &mut [[f32; 4]], w1: &mut [[f32; 4]], tolerance: f32) -> WeightFixes {
    let mut fx = WeightFixes {
        worst_sum: 1.0,
        ..Default::default()
    };
    let has1 = w1.len() == w0.len();
    for i in 0..w0.len() {
        let mut sum = 0.0f32;
        for w in w0[i].iter_mut().chain(if has1 {
            w1[i].iter_mut()
        } else {
            [].iter_mut()
        }) {
            if *w < 0.0 {
                *w = 0.0;
                fx.negative += 1;
            }
            sum += *w;
        }
        if sum <= 0.0 || !sum.is_finite() {
            fx.zero_sum += 1;
            w0[i] = [1.0, 0.0, 0.0, 0.0];
            if has1 {
                w1[i] = [0.0; 4];
            }
            continue;
        }
        if (sum - 1.0).abs() > tolerance {
            if fx.renormalised == 0 || (sum - 1.0).abs() > (fx.worst_sum - 1.0).abs() {
                fx.worst_sum = sum;
            }
            fx.renormalised += 1;
        }
        if sum != 1.0 {
            let inv = 1.0 / sum;
            for w in w0[i].iter_mut() {
                *w *= inv;
            }
            if has1 {
                for w in w1[i].iter_mut() {
                    *w *= inv;
                }
            }
        }
    }
    fx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_and_fan() {
        // A strip of 4 vertices: two triangles, the second with flipped order.
        let (t, _) = triangulate(vec![0, 1, 2, 3], Topology::TriangleStrip);
        assert_eq!(t, vec![0, 1, 2, 1, 3, 2]); // (2,1,3) rotated: same winding
        let (t, _) = triangulate(vec![0, 1, 2, 3], Topology::TriangleFan);
        assert_eq!(t, vec![1, 2, 0, 2, 3, 0]);
        let (t, dropped) = triangulate(vec![0, 1, 2, 3], Topology::Triangles);
        assert_eq!((t, dropped), (vec![0, 1, 2], 1));
        // A degenerate stitch is dropped.
        let (t, _) = triangulate(vec![0, 1, 2, 2, 3, 4], Topology::TriangleStrip);
        assert!(t
            .chunks(3)
            .all(|c| c[0] != c[1] && c[1] != c[2] && c[0] != c[2]));
    }

    #[test]
    fn normals_of_a_quad_point_up() {
        let p = [
            Vec3::ZERO,
            Vec3::X,
            Vec3::new(1.0, 0.0, -1.0),
            Vec3::new(0.0, 0.0, -1.0),
        ];
        let n = smooth_normals(&p, &[0, 1, 2, 0, 2, 3]);
        for v in n {
            assert!((v - Vec3::Y).length() < 1e-6);
        }
    }

    #[test]
    fn normals_are_area_weighted() {
        // A big triangle facing +Z and a tiny one facing +X share vertex 0.
        let p = [
            Vec3::ZERO,
            Vec3::new(10.0, 0.0, 0.0),
            Vec3::new(0.0, 10.0, 0.0),
            Vec3::new(0.0, 0.1, 0.0),
            Vec3::new(0.0, 0.0, -0.1),
        ];
        let n = smooth_normals(&p, &[0, 1, 2, 0, 3, 4]);
        assert!(n[0].z > 0.99, "{:?}", n[0]);
    }

    #[test]
    fn weights() {
        let mut w = vec![
            [0.49, 0.49, 0.0, 0.0],
            [0.0; 4],
            [0.5, 0.5, 0.0, 0.0],
            [0.7, -0.1, 0.3, 0.0],
        ];
        let fx = normalise_weights(&mut w, &mut [], 1e-3);
        assert_eq!(fx.renormalised, 1);
        assert!((fx.worst_sum - 0.98).abs() < 1e-6);
        assert_eq!((fx.zero_sum, fx.negative), (1, 1));
        for v in &w {
            assert!((v.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
        assert_eq!(w[1], [1.0, 0.0, 0.0, 0.0]);
    }
}
