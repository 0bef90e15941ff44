//! The ninja's body: closed lofted tubes ("generalised cylinders") per part, with smooth
//! normals, atlas UVs and ≤ 4 smooth skin weights.
//!
//! Each part is a sequence of elliptical (or superelliptical) rings swept along a path in the
//! character frame (cm, see [`super::skeleton`]), closed at both ends by rounded caps that end in
//! a pole vertex, so every part is a closed surface. Parts overlap where they meet (arm into
//! torso, leg into pelvis) as in most game characters; the overlap hides the caps.
//!
//! Skin weights come from the position of each ring along its bone chain: a bone hands over to
//! the next across a blend window centred on the joint (smoothstep), so elbows and knees bend
//! smoothly; a few regions (shoulders, hips, heel) blend in a neighbouring chain. The forearm
//! hands over to the hand across its distal half, so a wrist twist twists the forearm the way a
//! real Mixamo skin does (and shows LBS's candy wrapper).

use std::collections::BTreeMap;

use super::skeleton::NinjaSkeleton;
use crate::math::{Vec2, Vec3};

/// Cross-section samples around each ring (before the seam duplicate).
const AROUND: usize = 28;
/// Rings per rounded end cap (excluding the pole).
const CAP_RINGS: usize = 5;

/// A rectangle of the texture atlas, in pixels.
#[derive(Clone, Copy, Debug)]
pub struct AtlasRect {
    pub x0: u32,
    pub y0: u32,
    pub x1: u32,
    pub y1: u32,
}

/// What a part is made of, for the texture painter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fabric {
    /// Hood with the eye slit.
    Hood,
    /// Tunic (uwagi).
    Tunic,
    /// Belt (obi).
    Belt,
    /// Sleeves: cloth above the elbow, wrapped forearm guards (tekko) below.
    Sleeve,
    /// Trousers: cloth above the knee, wrapped shins (kyahan) below.
    Trousers,
    /// Split-toe socks (tabi).
    Tabi,
    /// Gloves.
    Glove,
}

/// The texture layout: each fabric's atlas rectangle and the range of the part coordinate `s`
/// (cm along the part, caps included) that its rows cover.
#[derive(Clone, Copy, Debug)]
pub struct PartLayout {
    pub fabric: Fabric,
    pub rect: AtlasRect,
    pub s_min: f32,
    pub s_max: f32,
}

/// Side length of the texture atlas in pixels.
pub const ATLAS: u32 = 1024;

pub(crate) fn rect(x0: u32, y0: u32, x1: u32, y1: u32) -> AtlasRect {
    AtlasRect { x0, y0, x1, y1 }
}

/// One ring of a tube: centre, tangent `t`, first cross-section axis `a` (⊥ t; the seam lies at
/// θ = 0, along `a`), radii along `a` and `b = t × a`, superellipse exponent (2 = ellipse,
/// larger = boxier) and the part coordinate `s` (cm) used for UVs and weights.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ring {
    pub(crate) c: Vec3,
    pub(crate) t: Vec3,
    pub(crate) a: Vec3,
    pub(crate) ra: f32,
    pub(crate) rb: f32,
    pub(crate) p: f32,
    pub(crate) s: f32,
}

/// Mesh data under construction (character frame, cm) with per-vertex weight lists.
#[derive(Default)]
pub struct MeshBuilder {
    pub positions: Vec<Vec3>,
    pub uvs: Vec<Vec2>,
    /// (joint, weight) lists, not yet limited to 4.
    pub influences: Vec<Vec<(usize, f32)>>,
    pub indices: Vec<u32>,
    /// Which part each vertex belongs to (index into `part_names`).
    pub part_of_vertex: Vec<u16>,
    pub part_names: Vec<String>,
    pub layouts: Vec<PartLayout>,
    /// Cross-section samples around each ring; 0 means [`AROUND`].
    pub around: usize,
}

/// Body proportions and mesh density for [`build_with`]: the ninja is [`Shape::NINJA`]; the test
/// corpus's bodies (slim robot, bulky soldier, long-haired body) vary the girths and use fewer
/// vertices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// Radius factors of the head, the torso (and belt), the arms and the legs.
    pub head: f32,
    pub torso: f32,
    pub arm: f32,
    pub leg: f32,
    /// Cross-section samples around each ring.
    pub around: usize,
    /// Factor on the number of rings along each part (1 = the ninja's).
    pub density: f32,
    /// Rings along each finger.
    pub finger_steps: usize,
}

impl Shape {
    pub const NINJA: Shape = Shape {
        head: 1.0,
        torso: 1.0,
        arm: 1.0,
        leg: 1.0,
        around: AROUND,
        density: 1.0,
        finger_steps: 28,
    };

    /// `n` rings scaled by the density (at least 2).
    fn steps(&self, n: usize) -> usize {
        ((n as f32 * self.density).round() as usize).max(2)
    }
}

pub(crate) fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Weights along a chain of bones: `bones[k]` hands over to `bones[k+1]` around `at[k]` over
/// `at[k] ± half[k]` (in the chain coordinate `s`). Windows must not overlap.
pub(crate) fn chain(s: f32, bones: &[usize], at: &[f32], half: &[f32]) -> Vec<(usize, f32)> {
    let mut f = 0.0;
    for k in 0..at.len() {
        f += smoothstep((s - at[k] + half[k]) / (2.0 * half[k]));
    }
    let i = (f.floor() as usize).min(bones.len() - 1);
    let frac = f - i as f32;
    if i + 1 < bones.len() && frac > 0.0 {
        vec![(bones[i], 1.0 - frac), (bones[i + 1], frac)]
    } else {
        vec![(bones[i], 1.0)]
    }
}

/// Blend two weight lists: `(1 − x) w1 + x w2`.
pub(crate) fn mix(w1: Vec<(usize, f32)>, w2: Vec<(usize, f32)>, x: f32) -> Vec<(usize, f32)> {
    let mut out: Vec<(usize, f32)> = w1.into_iter().map(|(j, w)| (j, w * (1.0 - x))).collect();
    for (j, w) in w2 {
        out.push((j, w * x));
    }
    out
}

fn superellipse(theta: f32, p: f32) -> (f32, f32) {
    let (s, c) = theta.sin_cos();
    let e = 2.0 / p;
    (c.signum() * c.abs().powf(e), s.signum() * s.abs().powf(e))
}

impl MeshBuilder {
    /// Sweeps `rings` (already ordered along the part) into a closed tube with rounded caps of
    /// relative length `cap0`/`cap1` (fraction of the end ring's smaller radius), UVs into the
    /// fabric's rectangle, and weights from `weigh(s, position)`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn tube(
        &mut self,
        name: &str,
        fabric: Fabric,
        atlas: AtlasRect,
        rings: &[Ring],
        cap0: f32,
        cap1: f32,
        weigh: &dyn Fn(f32, Vec3) -> Vec<(usize, f32)>,
    ) {
        // Add cap rings at both ends.
        let mut all: Vec<Ring> = Vec::new();
        let first = rings[0];
        let l0 = cap0 * first.ra.min(first.rb);
        for k in (1..=CAP_RINGS).rev() {
            let phi = k as f32 / (CAP_RINGS as f32 + 1.0) * std::f32::consts::FRAC_PI_2;
            let mut r = first;
            r.c = first.c - first.t * l0 * phi.sin();
            r.ra *= phi.cos();
            r.rb *= phi.cos();
            r.s = first.s - l0 * phi.sin();
            all.push(r);
        }
        all.extend_from_slice(rings);
        let last = *rings.last().unwrap();
        let l1 = cap1 * last.ra.min(last.rb);
        for k in 1..=CAP_RINGS {
            let phi = k as f32 / (CAP_RINGS as f32 + 1.0) * std::f32::consts::FRAC_PI_2;
            let mut r = last;
            r.c = last.c + last.t * l1 * phi.sin();
            r.ra *= phi.cos();
            r.rb *= phi.cos();
            r.s = last.s + l1 * phi.sin();
            all.push(r);
        }
        let s_min = first.s - l0;
        let s_max = last.s + l1;
        let part = self.part_names.len() as u16;
        self.part_names.push(name.to_string());
        if !self.layouts.iter().any(|l| l.fabric == fabric) {
            self.layouts.push(PartLayout {
                fabric,
                rect: atlas,
                s_min,
                s_max,
            });
        }
        let lay = *self.layouts.iter().find(|l| l.fabric == fabric).unwrap();
        let uv = |u: f32, s: f32| {
            let r = lay.rect;
            let v = ((s - lay.s_min) / (lay.s_max - lay.s_min)).clamp(0.0, 1.0);
            // Half a pixel inside the rectangle so that filtering never bleeds across.
            let x = r.x0 as f32 + 0.5 + u * (r.x1 - r.x0 - 1) as f32;
            let y = r.y0 as f32 + 0.5 + v * (r.y1 - r.y0 - 1) as f32;
            Vec2::new(x / ATLAS as f32, y / ATLAS as f32)
        };
        let around = if self.around == 0 {
            AROUND
        } else {
            self.around
        };
        let base = self.positions.len() as u32;
        let push = |b: &mut Self, p: Vec3, u: f32, s: f32| {
            b.positions.push(p);
            b.uvs.push(uv(u, s));
            b.influences.push(weigh(s, p));
            b.part_of_vertex.push(part);
        };
        // Pole 0.
        push(self, first.c - first.t * l0, 0.5, s_min);
        for r in &all {
            let b = r.t.cross(r.a);
            let mut ring0 = Vec3::ZERO;
            for j in 0..=around {
                let p = if j == around {
                    ring0 // the seam duplicate has exactly the first vertex's position
                } else {
                    let th = j as f32 / around as f32 * std::f32::consts::TAU;
                    let (x, y) = superellipse(th, r.p);
                    r.c + r.a * (x * r.ra) + b * (y * r.rb)
                };
                if j == 0 {
                    ring0 = p;
                }
                push(self, p, j as f32 / around as f32, r.s);
            }
        }
        push(self, last.c + last.t * l1, 0.5, s_max);
        let w = (around + 1) as u32;
        let n_rings = all.len() as u32;
        let idx = |ring: u32, j: u32| base + 1 + ring * w + j;
        let pole1 = base + 1 + n_rings * w;
        for j in 0..around as u32 {
            // Fan at the start cap: the pole lies behind (−t), so wind the other way.
            self.indices
                .extend_from_slice(&[base, idx(0, j + 1), idx(0, j)]);
            self.indices
                .extend_from_slice(&[pole1, idx(n_rings - 1, j), idx(n_rings - 1, j + 1)]);
        }
        for i in 0..n_rings - 1 {
            for j in 0..around as u32 {
                let (a, b, c, d) = (idx(i, j), idx(i, j + 1), idx(i + 1, j + 1), idx(i + 1, j));
                self.indices.extend_from_slice(&[a, b, c, a, c, d]);
            }
        }
    }
}

/// A vector perpendicular to `t`, as close to `hint` as possible.
fn perp(t: Vec3, hint: Vec3) -> Vec3 {
    let v = hint - t * hint.dot(t);
    if v.length_squared() < 1e-8 {
        t.any_orthonormal_vector()
    } else {
        v.normalize()
    }
}

/// Rings along a polyline of (point, ra, rb) samples, with parallel-transported frames starting
/// from `a0`, the part coordinate `s` = arc length.
pub(crate) fn sweep(samples: &[(Vec3, f32, f32)], a0: Vec3, p: f32) -> Vec<Ring> {
    let n = samples.len();
    let mut out: Vec<Ring> = Vec::with_capacity(n);
    let mut s = 0.0;
    let mut a = Vec3::ZERO;
    for i in 0..n {
        let prev = samples[i.saturating_sub(1)].0;
        let next = samples[(i + 1).min(n - 1)].0;
        let t = (next - prev).normalize();
        if i == 0 {
            a = perp(t, a0);
        } else {
            s += (samples[i].0 - samples[i - 1].0).length();
            a = perp(t, a);
        }
        out.push(Ring {
            c: samples[i].0,
            t,
            a,
            ra: samples[i].1,
            rb: samples[i].2,
            p,
            s,
        });
    }
    out
}

/// Piecewise-linear interpolation in a table of (x, values…) rows, clamped at the ends.
pub(crate) fn lerp_table<const N: usize>(table: &[(f32, [f32; N])], x: f32) -> [f32; N] {
    if x <= table[0].0 {
        return table[0].1;
    }
    for w in table.windows(2) {
        if x <= w[1].0 {
            let f = (x - w[0].0) / (w[1].0 - w[0].0);
            // Smooth the profile between the rows (cosine ease) so it has no creases.
            let f = 0.5 - 0.5 * (f * std::f32::consts::PI).cos();
            return std::array::from_fn(|k| w[0].1[k] + (w[1].1[k] - w[0].1[k]) * f);
        }
    }
    table[table.len() - 1].1
}

/// Builds the ninja's body in the character frame (cm).
pub fn build(sk: &NinjaSkeleton) -> MeshBuilder {
    build_with(sk, &Shape::NINJA)
}

/// Builds a body of the ninja's build (parts and skin weights) with the girths and mesh density
/// of `shape`, in the character frame (cm) of the ninja's 175 cm skeleton `sk`.
pub fn build_with(sk: &NinjaSkeleton, shape: &Shape) -> MeshBuilder {
    let mut m = MeshBuilder {
        around: shape.around,
        ..Default::default()
    };
    let rest = sk.rest_positions_char();
    let j = |n: &str| sk.joint(n);
    let y = |n: &str| rest[sk.joint(n)].y;

    // --- Head and hood: along +Y from the neck; seam at the back (a = −Z).
    {
        // (height cm, [half width, half depth, forward offset])
        let prof: &[(f32, [f32; 3])] = &[
            (145.0, [6.4, 6.4, 0.0]),
            (151.0, [6.2, 6.6, 0.6]),
            (155.0, [7.2, 8.6, 1.8]),
            (159.0, [8.2, 9.8, 2.2]),
            (164.0, [8.8, 10.4, 2.0]),
            (168.0, [8.3, 9.9, 1.6]),
            (170.5, [7.3, 8.8, 1.3]),
        ];
        let mut samples = Vec::new();
        let ns = shape.steps(26);
        for k in 0..=ns {
            let h = 145.0 + 25.5 * k as f32 / ns as f32;
            let [w, d, f] = lerp_table(prof, h);
            samples.push((Vec3::new(0.0, h, f), d * shape.head, w * shape.head));
        }
        let rings = sweep(&samples, -Vec3::Z, 2.0);
        let (neck, head) = (j("Neck"), j("Head"));
        let yh = y("Head");
        m.tube(
            "hood",
            Fabric::Hood,
            rect(512, 0, 768, 256),
            &rings,
            0.4,
            0.72,
            &move |_s, p| chain(p.y, &[neck, head], &[yh - 1.0], &[4.5]),
        );
    }

    // --- Torso: along +Y from the crotch to the base of the neck, boxy cross-section.
    {
        let prof: &[(f32, [f32; 3])] = &[
            (84.0, [10.0, 8.0, 0.0]),
            (90.0, [15.5, 10.5, 0.0]),
            (97.0, [17.0, 11.5, 0.2]),
            (104.0, [15.2, 10.5, 0.5]),
            (112.0, [15.0, 10.5, 0.8]),
            (121.0, [16.2, 11.2, 1.0]),
            (131.0, [17.6, 11.8, 0.8]),
            (139.0, [18.4, 10.8, 0.0]),
            (144.0, [17.0, 9.4, -0.5]),
            (148.0, [10.0, 7.4, -0.5]),
        ];
        let mut samples = Vec::new();
        let ns = shape.steps(48);
        for k in 0..=ns {
            let h = 84.0 + 64.0 * k as f32 / ns as f32;
            let [w, d, f] = lerp_table(prof, h);
            samples.push((Vec3::new(0.0, h, f), d * shape.torso, w * shape.torso));
        }
        let rings = sweep(&samples, -Vec3::Z, 2.6);
        let trunk = [j("Hips"), j("Spine"), j("Spine1"), j("Spine2"), j("Neck")];
        let at = [y("Spine"), y("Spine1"), y("Spine2") + 1.0, y("Neck") - 1.0];
        let (ll, rl) = (j("LeftUpLeg"), j("RightUpLeg"));
        let (ls, rs) = (j("LeftShoulder"), j("RightShoulder"));
        let (la, ra) = (j("LeftArm"), j("RightArm"));
        let hip_y = y("LeftUpLeg");
        let sh_y = y("LeftArm");
        m.tube(
            "tunic",
            Fabric::Tunic,
            rect(0, 0, 512, 512),
            &rings,
            0.3,
            0.5,
            &move |_s, p| {
                let mut w = chain(p.y, &trunk, &at, &[3.5, 4.0, 4.0, 4.0]);
                // Below the hip joints the sides follow the thighs.
                let side = smoothstep((p.x.abs() - 3.0) / 8.0);
                let low = smoothstep((hip_y + 3.0 - p.y) / 10.0);
                if low * side > 0.0 {
                    let leg = if p.x > 0.0 { ll } else { rl };
                    w = mix(w, vec![(leg, 1.0)], 0.8 * low * side);
                }
                // The top corners follow the clavicles and the upper arms.
                let up = smoothstep((p.y - (sh_y - 14.0)) / 11.0);
                let out = smoothstep((p.x.abs() - 4.0) / 12.0);
                if up * out > 0.0 {
                    let (s, a) = if p.x > 0.0 { (ls, la) } else { (rs, ra) };
                    let arm = smoothstep((p.x.abs() - 12.0) / 9.0);
                    w = mix(w, vec![(s, 1.0 - arm), (a, arm)], 0.85 * up * out);
                }
                w
            },
        );
    }

    // --- Belt (obi): a band slightly proud of the waist.
    {
        let prof: &[(f32, [f32; 3])] = &[(100.5, [16.6, 11.5, 0.4]), (107.5, [15.9, 11.2, 0.6])];
        let mut samples = Vec::new();
        let ns = shape.steps(8);
        for k in 0..=ns {
            let h = 100.5 + 7.0 * k as f32 / ns as f32;
            let [w, d, f] = lerp_table(prof, h);
            samples.push((Vec3::new(0.0, h, f), d * shape.torso, w * shape.torso));
        }
        let rings = sweep(&samples, -Vec3::Z, 2.6);
        let (hips, spine) = (j("Hips"), j("Spine"));
        let ys = y("Spine");
        m.tube(
            "obi",
            Fabric::Belt,
            rect(768, 0, 1024, 128),
            &rings,
            0.05,
            0.05,
            &move |_s, p| chain(p.y, &[hips, spine], &[ys], &[3.5]),
        );
    }

    for (side, sx) in [("Left", 1.0f32), ("Right", -1.0)] {
        let n = |b: &str| format!("{side}{b}");
        // --- Arm: shoulder to wrist along ±X; seam underneath (a = −Y).
        {
            let x_arm = rest[j(&n("Arm"))].x.abs();
            let x_elb = rest[j(&n("ForeArm"))].x.abs();
            let x_wr = rest[j(&n("Hand"))].x.abs();
            let yy = rest[j(&n("Arm"))].y;
            let prof: &[(f32, [f32; 2])] = &[
                (6.0, [3.5, 3.5]),
                (x_arm - 6.0, [5.6, 6.0]),
                (x_arm, [6.2, 6.5]),
                (x_arm + 5.0, [5.6, 5.8]),
                (x_arm + 13.0, [5.0, 5.1]),
                (x_elb - 3.0, [4.3, 4.4]),
                (x_elb + 1.0, [4.1, 4.3]),
                (x_elb + 7.0, [4.4, 4.8]),
                (x_wr - 9.0, [3.8, 4.3]),
                (x_wr - 1.0, [2.7, 3.4]),
                (x_wr + 0.5, [2.6, 3.3]),
            ];
            let mut samples = Vec::new();
            let len = x_wr + 0.5 - 6.0;
            let ns = shape.steps(60);
            for k in 0..=ns {
                let x = 6.0 + len * k as f32 / ns as f32;
                let [ry, rz] = lerp_table(prof, x);
                samples.push((
                    Vec3::new(sx * x, yy - 0.6, -0.3),
                    ry * shape.arm,
                    rz * shape.arm,
                ));
            }
            let rings = sweep(&samples, -Vec3::Y, 2.0);
            let bones = [
                j(&n("Shoulder")),
                j(&n("Arm")),
                j(&n("ForeArm")),
                j(&n("Hand")),
            ];
            let sp2 = j("Spine2");
            m.tube(
                &n("sleeve"),
                Fabric::Sleeve,
                rect(512, 256, 1024, 512),
                &rings,
                0.8,
                0.6,
                &move |_s, p| {
                    let x = p.x.abs();
                    // Forearm → hand over the distal half of the forearm: pronation twists it.
                    let twist =
                        ((x - (x_elb + 12.0)) / (x_wr + 1.0 - (x_elb + 12.0))).clamp(0.0, 1.0);
                    let w = chain(x, &bones[..3], &[x_arm - 1.0, x_elb], &[3.5, 3.5]);
                    let w = if twist > 0.0 {
                        mix(w, vec![(bones[3], 1.0)], twist * twist)
                    } else {
                        w
                    };
                    let inner = smoothstep((14.0 - x) / 4.0);
                    if inner > 0.0 {
                        mix(w, vec![(sp2, 1.0)], 0.5 * inner)
                    } else {
                        w
                    }
                },
            );
        }
        // --- Hand: palm, four fingers, thumb (glove).
        {
            let hand = j(&n("Hand"));
            let wrist = rest[hand];
            let knuckles: Vec<Vec3> = ["Index1", "Middle1", "Ring1", "Pinky1"]
                .iter()
                .map(|f| rest[j(&n(&format!("Hand{f}")))])
                .collect();
            let knuck_x = knuckles.iter().map(|k| k.x.abs()).sum::<f32>() / 4.0;
            let zc = (knuckles[0].z + knuckles[3].z) * 0.5;
            let mut samples = Vec::new();
            let ns = shape.steps(12);
            for k in 0..=ns {
                let f = k as f32 / ns as f32;
                let x = wrist.x.abs() - 1.5 + (knuck_x + 0.6 - (wrist.x.abs() - 1.5)) * f;
                // Thick at the heel of the hand, flatter and wider towards the knuckles.
                let ry = 2.0 - 0.6 * f;
                let rz = 3.4 + 1.3 * smoothstep(f * 1.5);
                samples.push((Vec3::new(sx * x, wrist.y - 0.2, zc * f), ry, rz));
            }
            let rings = sweep(&samples, -Vec3::Y, 3.0);
            let f1: Vec<usize> = ["Index1", "Middle1", "Ring1", "Pinky1"]
                .iter()
                .map(|f| j(&n(&format!("Hand{f}"))))
                .collect();
            let kx = knuck_x;
            let wx = wrist.x.abs();
            m.tube(
                &n("palm"),
                Fabric::Glove,
                rect(768, 512, 1024, 768),
                &rings,
                0.5,
                0.4,
                &move |_s, p| {
                    let x = p.x.abs();
                    let fwd = smoothstep((x - (kx - 1.2)) / 2.0);
                    // Towards the knuckles, blend in the fingers by their distance across the palm
                    // (a tent kernel in z, so neighbouring fingers share the boundary).
                    let mut fw: Vec<(usize, f32)> = knuckles
                        .iter()
                        .zip(&f1)
                        .map(|(k, &b)| (b, (1.0 - (p.z - k.z).abs() / 2.2).max(0.0)))
                        .filter(|e| e.1 > 0.0)
                        .collect();
                    let total: f32 = fw.iter().map(|e| e.1).sum();
                    if total <= 0.0 {
                        return vec![(hand, 1.0)];
                    }
                    fw.iter_mut().for_each(|e| e.1 /= total);
                    let _ = wx;
                    mix(vec![(hand, 1.0)], fw, 0.5 * fwd)
                },
            );
            for finger in ["Index", "Middle", "Ring", "Pinky", "Thumb"] {
                let bones: Vec<usize> = (1..=4)
                    .map(|k| j(&n(&format!("Hand{finger}{k}"))))
                    .collect();
                let pts: Vec<Vec3> = bones.iter().map(|&b| rest[b]).collect();
                let (r0, r1) = match finger {
                    "Thumb" => (1.35, 0.9),
                    "Pinky" => (0.85, 0.7),
                    _ => (0.95, 0.78),
                };
                // Thumb starts deeper in the palm.
                let start = if finger == "Thumb" {
                    pts[0].lerp(wrist, 0.2)
                } else {
                    pts[0].lerp(wrist, 0.12)
                };
                let mut poly = vec![start];
                poly.extend_from_slice(&pts[1..]);
                let mut lens = vec![0.0];
                for w in poly.windows(2) {
                    lens.push(lens.last().unwrap() + (w[1] - w[0]).length());
                }
                let total = *lens.last().unwrap();
                let mut samples = Vec::new();
                let steps = shape.finger_steps;
                for k in 0..=steps {
                    let d = total * k as f32 / steps as f32;
                    let seg = (0..poly.len() - 1)
                        .find(|&i| d <= lens[i + 1] + 1e-4)
                        .unwrap_or(poly.len() - 2);
                    let f = (d - lens[seg]) / (lens[seg + 1] - lens[seg]);
                    let c = poly[seg].lerp(poly[seg + 1], f);
                    let r = r0 + (r1 - r0) * (d / total);
                    samples.push((c, r * 0.92, r));
                }
                let rings = sweep(&samples, -Vec3::Y, 2.0);
                let at = [lens[1], lens[2]];
                let b3 = [bones[0], bones[1], bones[2]];
                m.tube(
                    &n(&format!("{}_finger", finger.to_lowercase())),
                    Fabric::Glove,
                    rect(768, 512, 1024, 768),
                    &rings,
                    0.3,
                    0.9,
                    &move |s, _p| {
                        let w = chain(s, &b3, &at, &[0.65, 0.55]);
                        let base = smoothstep((1.2 - s) / 1.6);
                        if base > 0.0 {
                            mix(w, vec![(hand, 1.0)], 0.6 * base)
                        } else {
                            w
                        }
                    },
                );
            }
        }
        // --- Leg: from inside the pelvis down to the ankle; seam at the back.
        {
            let hip = rest[j(&n("UpLeg"))];
            let knee = rest[j(&n("Leg"))];
            let ankle = rest[j(&n("Foot"))];
            let prof: &[(f32, [f32; 2])] = &[
                (hip.y + 6.0, [8.6, 9.6]),
                (hip.y - 4.0, [8.8, 9.4]),
                (hip.y - 18.0, [8.0, 8.6]),
                (knee.y + 9.0, [6.3, 6.4]),
                (knee.y + 1.0, [5.3, 5.5]),
                (knee.y - 9.0, [5.2, 5.0]),
                (knee.y - 20.0, [4.0, 3.9]),
                (ankle.y + 7.0, [3.6, 3.6]),
                (ankle.y + 1.0, [3.5, 3.6]),
            ];
            let mut samples = Vec::new();
            let top = hip.y + 6.0;
            let bot = ankle.y + 1.0;
            let ns = shape.steps(80);
            for k in 0..=ns {
                let yy = top + (bot - top) * k as f32 / ns as f32;
                // The centre line runs from the hip joint through the knee to the ankle.
                let c = if yy > knee.y {
                    hip.lerp(knee, (hip.y - yy) / (hip.y - knee.y))
                } else {
                    knee.lerp(ankle, (knee.y - yy) / (knee.y - ankle.y))
                };
                let [rz, rx] = lerp_table(prof, yy);
                // Baggy trousers hang slightly behind the thigh.
                samples.push((
                    Vec3::new(c.x - sx * 0.6, yy, c.z - 0.4),
                    rz * shape.leg,
                    rx * shape.leg,
                ));
            }
            let rings = sweep(&samples, -Vec3::Z, 2.0);
            let bones = [j("Hips"), j(&n("UpLeg")), j(&n("Leg")), j(&n("Foot"))];
            let (hy, ky, ay) = (hip.y, knee.y, ankle.y);
            m.tube(
                &n("trouser"),
                Fabric::Trousers,
                rect(0, 512, 512, 1024),
                &rings,
                0.6,
                0.3,
                &move |_s, p| {
                    chain(
                        -p.y,
                        &bones,
                        &[-(hy + 3.0), -ky, -(ay + 4.0)],
                        &[4.0, 4.0, 3.5],
                    )
                },
            );
        }
        // --- Foot (tabi): heel to toe along +Z; seam under the sole.
        {
            let ankle = rest[j(&n("Foot"))];
            let ball = rest[j(&n("ToeBase"))];
            // (z from the ankle, [centre height, half height, half width])
            let prof: &[(f32, [f32; 3])] = &[
                (-6.0, [4.0, 3.9, 3.3]),
                (-2.0, [5.8, 5.7, 3.9]),
                (3.0, [4.8, 4.7, 4.2]),
                (9.0, [3.3, 3.2, 4.6]),
                (ball.z - ankle.z, [2.4, 2.35, 4.8]),
                (ball.z - ankle.z + 5.0, [2.0, 1.95, 4.3]),
                (ball.z - ankle.z + 7.2, [1.8, 1.75, 3.5]),
            ];
            let mut samples = Vec::new();
            let (z0, z1) = (-6.0, ball.z - ankle.z + 7.2);
            let ns = shape.steps(44);
            for k in 0..=ns {
                let z = z0 + (z1 - z0) * k as f32 / ns as f32;
                let [cy, hh, hw] = lerp_table(prof, z);
                samples.push((Vec3::new(ankle.x + sx * 0.4, cy, ankle.z + z), hh, hw));
            }
            let rings = sweep(&samples, -Vec3::Y, 3.2);
            let (leg, foot, toe) = (j(&n("Leg")), j(&n("Foot")), j(&n("ToeBase")));
            let (bz, ay) = (ball.z, ankle.y);
            m.tube(
                &n("tabi"),
                Fabric::Tabi,
                rect(512, 512, 768, 768),
                &rings,
                0.7,
                0.6,
                &move |_s, p| {
                    let w = chain(p.z, &[foot, toe], &[bz - 0.5], &[2.5]);
                    let up = smoothstep((p.y - (ay + 1.0)) / 4.0);
                    if up > 0.0 {
                        mix(w, vec![(leg, 1.0)], 0.7 * up)
                    } else {
                        w
                    }
                },
            );
        }
    }
    m
}

/// Area-weighted smooth normals; vertices at the same position (UV seams) share one normal, so
/// the surface shades without visible seams.
pub fn smooth_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut acc = vec![Vec3::ZERO; positions.len()];
    for t in indices.chunks_exact(3) {
        let (a, b, c) = (
            positions[t[0] as usize],
            positions[t[1] as usize],
            positions[t[2] as usize],
        );
        let n = (b - a).cross(c - a); // length = 2 × area: area weighting
        for &i in t {
            acc[i as usize] += n;
        }
    }
    let key = |p: Vec3| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()];
    let mut welded: BTreeMap<[u32; 3], Vec3> = BTreeMap::new();
    for (i, p) in positions.iter().enumerate() {
        *welded.entry(key(*p)).or_insert(Vec3::ZERO) += acc[i];
    }
    positions
        .iter()
        .map(|p| {
            let n = welded[&key(*p)];
            if n.length_squared() > 0.0 {
                n.normalize()
            } else {
                Vec3::Y
            }
        })
        .collect()
}

/// Keeps the 4 strongest influences, merges duplicates, normalises; unused slots hold joint 0
/// with weight 0 (the validator wants unused joint indices to be zero).
pub fn limit_weights(inf: &[(usize, f32)]) -> ([u16; 4], [f32; 4]) {
    let mut merged: Vec<(usize, f32)> = Vec::new();
    for &(j, w) in inf {
        if w <= 1e-4 {
            continue;
        }
        match merged.iter_mut().find(|(k, _)| *k == j) {
            Some(e) => e.1 += w,
            None => merged.push((j, w)),
        }
    }
    merged.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    merged.truncate(4);
    let sum: f32 = merged.iter().map(|e| e.1).sum();
    let mut joints = [0u16; 4];
    let mut weights = [0.0f32; 4];
    for (k, (j, w)) in merged.iter().enumerate() {
        joints[k] = *j as u16;
        weights[k] = w / sum;
    }
    // Quantisation-free renormalisation: make the sum exactly 1 in f32 on the strongest slot.
    let rest: f32 = weights[1..].iter().sum();
    weights[0] = 1.0 - rest;
    (joints, weights)
}
