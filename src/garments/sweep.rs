//! Where the limbs go in the rig's clips, seen from the pelvis: the arms' skin and the limbs'
//! proxies at every sampled pose of every clip, carried into the hips' rest frame (the frame a
//! waistband's pins ride in), so that the parts of a garment tied to the trunk keep out of their
//! way. Also which skin joints belong to the limbs.

use super::fit::BodyAtRest;
use super::pins::{blend, strongest, PinBinding};
use crate::body::proxies::Hulls;
use crate::body::ProxyFrame;
use crate::math::{Mat4, Vec3};

/// The limbs' proxies (the capsules of [`BodyAtRest::limb_joints`]: legs, arms, neck and head)
/// in every pose of the rig's clips, carried into the hips' rest frame: what a waistband
/// pinned to the trunk must keep out of (see [`BodyAtRest::limb_sweep`]).
///
/// Kept as bounding-sphered hulls ([`Hulls`]), [`POSES_PER_BLOCK`] poses to a block: the
/// least distance over every pose skips the capsules whose bounding sphere is farther than the
/// best found, and the blocks are searched in parallel. Scanning every capsule of every pose
/// (`union_sdf` pose by pose) took 94 % of building the KayKit Barbarian's scene (76 clips,
/// 29–57 s).
#[derive(Default)]
pub(super) struct LimbSweep {
    /// The limbs' capsules over blocks of poses.
    limbs: Vec<Hulls>,
    /// Those of the legs (the subtrees of both upper legs).
    legs: Vec<Hulls>,
}

/// Poses per block of [`LimbSweep`] (a block is searched by one thread).
const POSES_PER_BLOCK: usize = 32;

impl BodyAtRest<'_> {
    /// Skin joints (indices into the skin's joint list) whose node lies in the subtree of one
    /// of the `excluded` bones (matched by name): the legs, for a garment tied round the waist.
    pub(super) fn joints_under(&self, excluded: &[&str]) -> Vec<bool> {
        let sk = &self.rig.skeleton;
        let roots: Vec<usize> = excluded.iter().filter_map(|n| self.node(n)).collect();
        // Up the ancestors of every node (glTF does not order parents before children).
        let under: Vec<bool> = (0..sk.len())
            .map(|i| {
                let mut n = Some(i);
                for _ in 0..sk.len() {
                    match n {
                        Some(k) if roots.contains(&k) => return true,
                        Some(k) => n = sk.parents.get(k).copied().flatten().map(|p| p as usize),
                        None => break,
                    }
                }
                false
            })
            .collect();
        let skin = &self.rig.skins[self.skin];
        skin.joints
            .iter()
            .map(|&n| under.get(n as usize).copied().unwrap_or(false))
            .collect()
    }

    /// Skin joints outside the trunk (the hips and spine chain): the subtrees of the limb roots
    /// (each shoulder, or the upper arm where the rig has no shoulder; each upper leg) and of
    /// the neck.
    pub fn limb_joints(&self) -> Vec<bool> {
        let mut roots = vec!["LeftUpLeg", "RightUpLeg", "Neck"];
        for [shoulder, arm] in [["LeftShoulder", "LeftArm"], ["RightShoulder", "RightArm"]] {
            roots.push(if self.node(shoulder).is_some() {
                shoulder
            } else {
                arm
            });
        }
        self.joints_under(&roots)
    }

    /// Where the arms go relative to the pelvis: every arm skin vertex (dominant joint under a
    /// shoulder, see [`BodyAtRest::limb_joints`]) at every 1/15 s of each of the rig's clips,
    /// carried into the hips' rest frame (the frame the waist garments' pins ride in), so that
    /// a waist garment can keep its fixed parts out of the arms' swing. Empty if the rig has
    /// no clip or no Hips bone. A bind pose (T-pose) says nothing about where hanging arms
    /// swing: CesiumMan's forearm passes within ~2 cm of the hips' skin at the back in its walk.
    pub(super) fn arm_sweep(&self) -> &[Vec<Vec3>] {
        self.sweep.get_or_init(|| self.sweep_arms())
    }

    /// [`BodyAtRest::arm_sweep`], uncached. 15 samples a second: a hand swings at ~1 m/s, but
    /// the extremes that matter here are turning points, where it is slowest.
    fn sweep_arms(&self) -> Vec<Vec<Vec3>> {
        let Some(hips) = self.node("Hips") else {
            return Vec::new();
        };
        let mut roots = Vec::new();
        for [shoulder, arm] in [["LeftShoulder", "LeftArm"], ["RightShoulder", "RightArm"]] {
            roots.push(if self.node(shoulder).is_some() {
                shoulder
            } else {
                arm
            });
        }
        let arm = self.joints_under(&roots);
        let verts: Vec<(usize, usize)> = self
            .rig
            .meshes
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                m.skin == Some(self.skin as u32) && m.joints.len() == m.positions.len()
            })
            .flat_map(|(mi, m)| {
                let arm = &arm;
                (0..m.positions.len())
                    .filter(move |&v| {
                        let (j, w) = (m.joints[v], m.weights[v]);
                        let k = strongest(w);
                        arm.get(j[k] as usize).copied().unwrap_or(false)
                    })
                    .map(move |v| (mi, v))
            })
            .collect();
        let mut out = Vec::new();
        self.for_each_clip_pose(hips, 15.0, |_, _, wfb, to_rest| {
            out.push(
                verts
                    .iter()
                    .map(|&(mi, v)| {
                        let m = &self.rig.meshes[mi];
                        let q =
                            blend(wfb, m.joints[v], m.weights[v]).transform_point3(m.positions[v]);
                        to_rest.transform_point3(q)
                    })
                    .collect(),
            );
        });
        out
    }

    /// Poses the rig at `rate` samples a second of each of its clips (both ends included) and
    /// calls `f(clip, t, world_from_bind, to_rest)` for each pose: the clip's index and the
    /// clip time, the skin's joint matrices, and the map that carries the posed world into the
    /// hips' rest frame (the frame a waistband's pins ride in).
    fn for_each_clip_pose(
        &self,
        hips: usize,
        rate: f32,
        mut f: impl FnMut(usize, f32, &[Mat4], Mat4),
    ) {
        let sk = &self.rig.skeleton;
        let skin = &self.rig.skins[self.skin];
        let rest_hips = sk.rest_world()[hips];
        let (mut wfn, mut wfb) = (Vec::new(), Vec::new());
        let mut pose = crate::anim::Pose::rest(sk);
        for (ci, clip) in self.rig.clips.iter().enumerate() {
            let n = (clip.duration() * rate).ceil() as usize;
            for k in 0..=n {
                pose.local.clone_from(&sk.rest);
                let t = clip.start + clip.duration() * k as f32 / n.max(1) as f32;
                clip.sample(t, &mut pose);
                pose.world_from_node(sk, &mut wfn);
                crate::body::world_from_bind(&wfn, skin, &mut wfb);
                f(ci, t, &wfb, rest_hips * wfn[hips].inverse());
            }
        }
    }

    /// Where the limbs' proxies go relative to the pelvis: each proxy sphere following a skin
    /// joint of [`BodyAtRest::limb_joints`] (a kicking thigh, a blocking forearm), at every
    /// 1/30 s of each of the rig's clips (kicks are fast: at 1/15 s a front kick's thigh turns
    /// ~20° between samples), carried into the hips' rest frame, the frame a waistband's pins
    /// ride in. Empty without the proxies' joints ([`BodyAtRest::with_proxy_joints`]), a Hips
    /// bone or clips.
    fn limb_sweep(&self) -> &LimbSweep {
        self.limbs.get_or_init(|| self.sweep_limbs())
    }

    /// [`BodyAtRest::limb_sweep`], uncached.
    fn sweep_limbs(&self) -> LimbSweep {
        let (Some(hips), false) = (self.node("Hips"), self.proxy_joints.is_empty()) else {
            return LimbSweep::default();
        };
        let limb = self.limb_joints();
        let on_limb = |s: u32| limb.get(self.proxy_joints[s as usize] as usize) == Some(&true);
        let capsules: Vec<[u32; 2]> = self
            .capsules
            .iter()
            .copied()
            .filter(|&[a, b]| on_limb(a) && on_limb(b))
            .collect();
        if capsules.is_empty() {
            return LimbSweep::default();
        }
        let leg = self.joints_under(&["LeftUpLeg", "RightUpLeg"]);
        let on_leg = |s: u32| leg.get(self.proxy_joints[s as usize] as usize) == Some(&true);
        let legs: Vec<[u32; 2]> = capsules
            .iter()
            .copied()
            .filter(|&[a, b]| on_leg(a) && on_leg(b))
            .collect();
        // Each sphere's centre in bind space, from its rest position.
        let in_bind: Vec<Vec3> = self
            .proxies
            .center
            .iter()
            .zip(self.proxy_joints)
            .map(|(&c, &j)| {
                let m = self
                    .world_from_bind
                    .get(j as usize)
                    .copied()
                    .unwrap_or(Mat4::IDENTITY);
                m.inverse().transform_point3(c)
            })
            .collect();
        let mut poses: Vec<ProxyFrame> = Vec::new();
        self.for_each_clip_pose(hips, 30.0, |_, _, wfb, to_rest| {
            let center = in_bind
                .iter()
                .zip(self.proxy_joints)
                .map(|(&c, &j)| {
                    let m = wfb.get(j as usize).copied().unwrap_or(Mat4::IDENTITY);
                    to_rest.transform_point3(m.transform_point3(c))
                })
                .collect();
            poses.push(ProxyFrame {
                center,
                radius: self.proxies.radius.clone(),
            });
        });
        // Each block's spheres end to end, its capsules' indices shifted to match.
        let blocks = |caps: &[[u32; 2]]| -> Vec<Hulls> {
            if caps.is_empty() {
                return Vec::new();
            }
            poses
                .chunks(POSES_PER_BLOCK)
                .map(|block| {
                    let n = self.proxies.radius.len() as u32;
                    let center: Vec<Vec3> = block
                        .iter()
                        .flat_map(|f| f.center.iter().copied())
                        .collect();
                    let radius: Vec<f32> = block
                        .iter()
                        .flat_map(|f| f.radius.iter().copied())
                        .collect();
                    let shifted: Vec<[u32; 2]> = (0..block.len() as u32)
                        .flat_map(|k| caps.iter().map(move |&[a, b]| [a + k * n, b + k * n]))
                        .collect();
                    Hulls::new(&center, &radius, &shifted)
                })
                .collect()
        };
        LimbSweep {
            limbs: blocks(&capsules),
            legs: blocks(&legs),
        }
    }

    /// The least signed distance from `p` (at rest) to the limbs' proxies (or with `legs`, the
    /// legs' alone) over every pose of [`BodyAtRest::limb_sweep`], m; +∞ without a sweep.
    ///
    /// The blocks of poses are searched in parallel (the hakama's fit asks for up to 31 heights
    /// of each waist pin, each against every pose of every clip), each skipping the capsules
    /// whose bounding sphere cannot beat its best ([`LimbSweep`]). The least of the distances
    /// is the same in any order, and a skipped capsule could not have lowered it.
    pub(super) fn limb_clearance(&self, p: Vec3, legs: bool) -> f32 {
        use rayon::prelude::*;
        let s = self.limb_sweep();
        let blocks = if legs { &s.legs } else { &s.limbs };
        blocks
            .par_iter()
            .map(|h| h.nearest(p, 0).0)
            .reduce(|| f32::INFINITY, f32::min)
    }
}

/// Where a part of the body that moves with the head passes through a garment's pins in the
/// rig's clips ([`BodyAtRest::head_through`]).
#[derive(Clone, Debug)]
pub(super) struct HeadClash {
    /// The body mesh the deepest pin was inside (hair, a hat, the head itself).
    pub part: String,
    /// Where: the clip and its time (s), and how deep inside that part, m.
    pub clip: String,
    pub time: f32,
    pub depth: f32,
    /// Every clip in which some pin went deeper than the limit.
    pub clips: Vec<String>,
}

impl BodyAtRest<'_> {
    /// The deepest any of `pins` (bound to the trunk, skinned as the body is) goes inside the
    /// parts of the body that move with the head — the skin whose strongest joint is the neck,
    /// the head or a bone under them: hair, a hat, a helmet — over the rig's clips at 30 poses
    /// a second, if deeper than `limit` (m); `None` otherwise, or without clips or a neck.
    ///
    /// A long ponytail skinned to the head alone swings with the head: when the head turns in a
    /// kick it passes through the shoulders (the long-haired corpus body's: up to 4 cm deep in
    /// its side and spinning kicks). A cape's pins there end inside the hair, and the cloth
    /// they hold with them, whatever the cloth does: the corpus body's cape had 0.6-0.9 % of
    /// its vertices more than 3 mm inside the skin and ended caught round the ponytail.
    pub(super) fn head_through(&self, pins: &PinBinding, limit: f32) -> Option<HeadClash> {
        use crate::check::winding::SkinQuery;
        let hips = self.node("Hips")?;
        let head = self.joints_under(&["Neck"]);
        if pins.is_empty() || !head.iter().any(|&h| h) {
            return None;
        }
        // The head's triangles, by their first vertex's strongest joint (as `drape check`
        // names a triangle's part). Those whose vertices all follow one joint alone (hair on
        // the head, a rigid helmet) are tested in that joint's bind space, built once; the
        // others (the neck's blend) are skinned in each pose. Winding numbers add over
        // triangles, so a point's winding number against the whole is the sum over the groups,
        // each taken in its own frame (a similarity keeps it), and its depth the least.
        let mut rigid: Vec<(u16, Vec<[Vec3; 3]>, Vec<usize>)> = Vec::new();
        // (mesh, vertex) of each blended triangle's corners.
        let mut blended: Vec<[(usize, usize); 3]> = Vec::new();
        for (mi, m) in self.rig.meshes.iter().enumerate() {
            if m.skin != Some(self.skin as u32) || m.joints.len() != m.positions.len() {
                continue;
            }
            let sole = |v: usize| {
                let (j, w) = (m.joints[v], m.weights[v]);
                let k = strongest(w);
                (w[k] > 0.999).then_some(j[k])
            };
            for t in m.indices.chunks_exact(3) {
                let (j, w) = (m.joints[t[0] as usize], m.weights[t[0] as usize]);
                let k = strongest(w);
                if !head.get(j[k] as usize).copied().unwrap_or(false) {
                    continue;
                }
                let v = [t[0] as usize, t[1] as usize, t[2] as usize];
                match v.map(sole) {
                    [Some(a), Some(b), Some(c)] if a == b && b == c => {
                        let g = match rigid.iter().position(|r| r.0 == a) {
                            Some(g) => g,
                            None => {
                                rigid.push((a, Vec::new(), Vec::new()));
                                rigid.len() - 1
                            }
                        };
                        rigid[g].1.push(v.map(|v| m.positions[v]));
                        rigid[g].2.push(mi);
                    }
                    _ => blended.push(v.map(|v| (mi, v))),
                }
            }
        }
        if rigid.is_empty() && blended.is_empty() {
            return None;
        }
        let rigid: Vec<(usize, SkinQuery, Vec<usize>)> = rigid
            .into_iter()
            .map(|(j, tris, meshes)| (j as usize, SkinQuery::new(&tris), meshes))
            .collect();
        let mut at = Vec::new();
        let mut worst: Option<HeadClash> = None;
        let mut clips: Vec<usize> = Vec::new();
        self.for_each_clip_pose(hips, 30.0, |ci, t, wfb, _| {
            let skinned = |&(mi, v): &(usize, usize)| {
                let m = &self.rig.meshes[mi];
                blend(wfb, m.joints[v], m.weights[v]).transform_point3(m.positions[v])
            };
            let posed: Vec<[Vec3; 3]> = blended.iter().map(|t| t.map(|v| skinned(&v))).collect();
            let loose = (!posed.is_empty()).then(|| SkinQuery::new(&posed));
            // Each rigid group's bind space from this pose's world, and its scale.
            let to_bind: Vec<Option<(Mat4, f32)>> = rigid
                .iter()
                .map(|(j, _, _)| {
                    let m = wfb.get(*j)?;
                    Some((m.inverse(), m.x_axis.truncate().length()))
                })
                .collect();
            pins.targets(wfb, &mut at);
            for &p in &at {
                // (winding number, distance to the nearest triangle, that triangle's mesh)
                let mut w = 0.0;
                let mut near = (f32::INFINITY, usize::MAX);
                for ((_, q, meshes), to) in rigid.iter().zip(&to_bind) {
                    let Some((inv, s)) = to else { continue };
                    let local = inv.transform_point3(p);
                    w += q.winding(local);
                    if let Some((d, tri)) = q.nearest(local, f32::INFINITY) {
                        if d * s < near.0 {
                            near = (d * s, meshes[tri as usize]);
                        }
                    }
                }
                if let Some(q) = &loose {
                    w += q.winding(p);
                    if let Some((d, tri)) = q.nearest(p, f32::INFINITY) {
                        if d < near.0 {
                            near = (d, blended[tri as usize][0].0);
                        }
                    }
                }
                if !(w >= 0.5 && near.0 > limit) {
                    continue;
                }
                if !clips.contains(&ci) {
                    clips.push(ci);
                }
                if worst.as_ref().is_none_or(|c| near.0 > c.depth) {
                    worst = Some(HeadClash {
                        part: crate::body::file_mesh_name(&self.rig.meshes[near.1]).to_string(),
                        clip: self.rig.clips[ci].name.clone(),
                        time: t,
                        depth: near.0,
                        clips: Vec::new(),
                    });
                }
            }
        });
        worst.map(|mut c| {
            c.clips = clips
                .iter()
                .map(|&k| self.rig.clips[k].name.clone())
                .collect();
            c
        })
    }
}
