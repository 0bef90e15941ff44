//! Body proxies: spheres joined by tapered capsules, fitted to a skinned character at its bind
//! pose, stored in bind space per joint and moved by the skin matrices every frame
//! (PHYSICS.md §4 "Body proxies").
//!
//! # How a bone is fitted
//! For every bone that keeps proxies (fingers, tiny bones and bones with few vertices are merged
//! into their parent, listed bones are skipped) we take the skin vertices it dominates (largest
//! weight) and build a bone frame: `u` along the bone (towards the child joint that continues the
//! chain), `v` the major and `w` the minor axis of the cross-section (2-D principal axes). The bone
//! is cut into rows along `u`. Each row is a *stadium*: `n_cols` spheres of one radius spread
//! along `v`, so that flat parts (torso, pelvis, hands) are not forced into round cross-sections;
//! round parts (limbs, neck) get one column. Rows are joined along `u` and across `v` by tapered
//! capsules. The end rows are pulled in so that a round cap ends where the vertices end: by the
//! whole radius at an exposed end (head top, hand, foot), by √(r² − r_neighbour²) at a joint (a
//! head sphere must not swallow the neck; a chest sphere may overlap the belly). The first row of
//! each bone is joined to the nearest sphere of its parent bone, so that joints (elbow, neck, hip)
//! are closed by a capsule that bends with them.
//!
//! Radii start as a robust percentile of the vertices' distances to the row's core segment and are
//! then refined a few times against the whole union: each sphere grows (at most by
//! [`ProxyOptions::max_growth`]) or shrinks by the same percentile of the signed distances of the
//! vertices it is closest to.
//!
//! Last, the bound phase (`BindFit::bound`) enlarges the spheres until the skin no longer
//! stands out of them by more than [`ProxyOptions::bound_allowance`] (95 % of each sphere's
//! nearest vertices), moving their centres towards the skin that stands out so that they do not
//! lift off the skin elsewhere: a percentile fit leaves part of the skin outside the proxies,
//! and cloth resting on them then sits inside the body people see (issue 19).
//! [`stand_off_at_bind`] measures both sides: skin standing out of the proxies and proxy
//! surface standing off the skin (over-cover, cloth floating off the body).
//!
//! The stadium model suits human bodies (round limbs, elliptic torso); box-like parts (a cartoon
//! head with flat faces, a figure made of blocks) are wrapped with bulges at their faces.
//!
//! # Units
//! Everything in [`Proxies`] is in bind space, whose unit is the file's (metres, or centimetres in
//! the Mixamo convention where `world_from_bind` is a 0.01 scale at rest). The tunables in
//! [`ProxyOptions`] are in metres and converted with the rest pose's scale. [`ProxyFrame`] is in
//! world space, i.e. metres.
//!
//! # Where things live
//! - here: the fitted proxies ([`Proxies`]), the options of a fit and its errors, and
//!   [`Proxies::fit`], which runs the phases below;
//! - `fit.rs`: the fit at the bind pose: which bones keep proxies, their spheres in rows, the
//!   joints closed, the radii refined against the whole union;
//! - `slices.rs`: a bone cut into cross-sections (stadiums) and the rows of spheres along them;
//! - `cover.rs`: the cover phase, for skins the stadium model does not suit;
//! - `fit.rs` also holds the bound phase, last of all;
//! - `frame.rs`: the per-frame update: the skin matrices, [`Proxies::update`], [`ProxyFrame`];
//! - `capsule.rs`: the tapered capsule's signed distance and the union of colliders;
//! - `quality.rs`: how well the proxies match the skin ([`quality`] and its reports).

// Loops over joints index several structs-of-arrays in step; iterators would hide that.
#![allow(clippy::needless_range_loop)]

use crate::anim::Skeleton;
use crate::math::Vec3;
use crate::rig::Rig;

mod capsule;
mod cover;
mod fit;
mod frame;
mod quality;
mod sheets;
mod slices;

pub use capsule::{
    tapered_capsule_closest, tapered_capsule_sdf, tapered_capsule_sdf_t, union_sdf, CapsuleClosest,
    Hulls,
};
pub use frame::{world_from_bind, ProxyFrame, Yielded};
pub use quality::{
    quality, quality_at_bind, quality_by_joint, stand_off_at_bind, JointQuality, ProxyQuality,
    StandOff, QUALITY_TOLERANCE,
};

use fit::BindFit;

/// Why proxies could not be fitted.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BodyError {
    #[error("the rig has no skin number {0} (it has {1})")]
    NoSkin(usize, usize),
    #[error("no mesh of the rig is bound to skin {0}")]
    NoVertices(usize),
    #[error("skin {0} names node {1}, which the skeleton does not have")]
    BadJoint(usize, u32),
}

/// Options for [`Proxies::fit`]; the scene file fills them. Lengths are in metres (world space).
#[derive(Clone, Debug, PartialEq)]
pub struct ProxyOptions {
    /// Bones that get no proxies (matched by name after any Mixamo prefix, e.g. `"LeftHand"`).
    /// Bones merged into a skipped bone (its fingers, say) are skipped with it; their vertices are
    /// left out of the fit and of [`quality`]. Default: none.
    pub skip: Vec<String>,
    /// Per-bone radius factors `(bone name, factor)`, applied after fitting to every sphere of that
    /// bone (factor range 0.1..10). Default: none.
    pub radius_scale: Vec<(String, f32)>,
    /// Share of a sphere's vertices that its radius puts inside the proxies (robust percentile).
    /// Range 0.5..1; default 0.9 (a little outside the skin beats cloth sinking into it).
    pub percentile: f32,
    /// Width of the band the refinement fits, metres (range 0..0.05, default 0.008; 0 = plain
    /// percentile). A sphere whose vertices spread over more than twice this across its surface
    /// (a non-round cross-section, a foot's sole and instep) cannot match them all: it takes the
    /// percentile of the largest group of its vertices that fits in the band instead of letting
    /// the outliers push its surface away from the rest.
    pub fit_tolerance: f32,
    /// Bones shorter than this (segment to the child joint, or vertex extent for end bones) merge
    /// into their parent. Metres, range 0..0.2, default 0.03.
    pub min_bone_length: f32,
    /// Bones dominating fewer vertices than this merge into their parent. Range 0..1000,
    /// default 12.
    pub min_vertices: usize,
    /// Merge finger bones (names containing thumb/index/middle/ring/pinky/finger) into the hand.
    /// Default true.
    pub merge_fingers: bool,
    /// Target distance between rows along a bone. Metres, range 0.01..0.5, default 0.08.
    pub row_spacing: f32,
    /// Most rows per bone. Range 1..32, default 8.
    pub max_rows: usize,
    /// A cross-section whose major half-extent exceeds its minor one by more than this is fitted
    /// with several columns (a stadium) instead of one sphere. Metres, range 0..0.1, default 0.01.
    pub flat_threshold: f32,
    /// Largest dent allowed between neighbouring columns of a stadium; sets the column count.
    /// Metres, range 0.0005..0.05, default 0.003.
    pub max_dent: f32,
    /// Most columns per row (odd). Range 1..9, default 5.
    pub max_columns: usize,
    /// Radius refinement passes against the whole union. Range 0..10, default 3.
    pub refine_iterations: usize,
    /// Most a sphere may grow in refinement, as a fraction of its fitted radius: growing to
    /// swallow a box-like part's corners makes it bulge over its neighbours. Range 0..1,
    /// default 0.15.
    pub max_growth: f32,
    /// Cover phase: while the fit at the bind pose ([`quality_at_bind`]'s `within`) is below
    /// this share, spheres that stick out of the skin are shrunk and medial spheres are added
    /// where the skin is far from every proxy (see [`Proxies::fit`]). Range 0..1 (0 = off),
    /// default 0.955: just above the 95 % target, so that a fit that already meets it
    /// (the built-in ninja: 95.6 %) is left exactly as it is.
    pub cover_target: f32,
    /// Most spheres the cover phase may add. Range 0..1000, default 200.
    pub max_cover_spheres: usize,
    /// Bound phase (last): every sphere grows until this share of the skin it is nearest to
    /// (by count of vertices) lies no farther than [`ProxyOptions::bound_allowance`] outside the
    /// proxies, so that cloth resting on them rests on the skin as drawn, not inside it. Range
    /// 0.5..1 (0 = off), default 0.95 (stray vertices, a fingertip merged into the hand, do not
    /// blow a sphere up).
    pub bound_share: f32,
    /// How far the skin may still stand out of the proxies after the bound phase, metres: cloth
    /// is kept its thickness (2-3 mm for the built-in garments) off the proxies, so skin standing
    /// out by less than that is still under the cloth. Range 0..0.01, default 0.003.
    pub bound_allowance: f32,
    /// Most a sphere may grow in the bound phase, metres (range 0..0.05, default 0.01).
    pub bound_max_growth: f32,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        Self {
            skip: Vec::new(),
            radius_scale: Vec::new(),
            percentile: 0.9,
            fit_tolerance: 0.008,
            min_bone_length: 0.03,
            min_vertices: 12,
            merge_fingers: true,
            row_spacing: 0.08,
            max_rows: 8,
            flat_threshold: 0.01,
            max_dent: 0.003,
            max_columns: 5,
            refine_iterations: 3,
            max_growth: 0.15,
            cover_target: 0.955,
            max_cover_spheres: 200,
            bound_share: 0.95,
            bound_allowance: 0.003,
            bound_max_growth: 0.01,
        }
    }
}

/// Spheres attached to skin joints (structs of arrays, indexed by sphere) and the tapered capsules
/// over them. Every collider is `capsules[i] = [a, b]`, the convex hull of spheres `a` and `b`;
/// `[a, a]` is a lone sphere.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Proxies {
    /// Skin joint (index into `Skin::joints`, the `k` of `world_from_bind[k]`) each sphere follows.
    pub joint: Vec<u32>,
    /// Sphere centre in bind space (the mesh's POSITION space). The joint-space centre is
    /// `inverse_bind[k] * center_in_bind`; storing the bind-space one lets the skin matrices move it.
    pub center_in_bind: Vec<Vec3>,
    /// Radius in bind units.
    pub radius: Vec<f32>,
    /// Tapered capsules as pairs of sphere indices (`[i, i]` for a lone sphere).
    pub capsules: Vec<[u32; 2]>,
    /// Skin joints whose vertices are represented by no proxy (skipped by the options, or merged
    /// into a skipped bone); [`quality`] leaves their vertices out.
    pub skipped_joints: Vec<u32>,
}

impl Proxies {
    pub fn sphere_count(&self) -> usize {
        self.joint.len()
    }

    /// Fits spheres and tapered capsules to every mesh bound to `rig.skins[skin]` (see the module
    /// docs for the method). Works at the bind pose; never panics on odd input (missing inverse
    /// bind matrices, zero weights, joints without vertices).
    ///
    /// When the result is below [`ProxyOptions::cover_target`] a cover phase follows (the
    /// stadium model does not suit every character: CesiumMan's and RiggedFigure's bones
    /// dominate skin far from their axis, so spheres both stick out of the skin and leave parts
    /// of it uncovered). See `BindFit::cover`.
    pub fn fit(rig: &Rig, skin: usize, opts: &ProxyOptions) -> Result<Proxies, BodyError> {
        let fit = BindFit::new(rig, skin)?;
        let mut px = fit.run(opts);
        fit.cover(rig, skin, &mut px, opts);
        fit.bound(&mut px, opts);
        // Per-bone radius factors last: they are the user's word over the fit and the cover.
        for (name, factor) in &opts.radius_scale {
            let name = Skeleton::base_name(name);
            if !(factor.is_finite() && *factor > 0.0) {
                continue;
            }
            for i in 0..px.joint.len() {
                let node = fit.skin.joints[px.joint[i] as usize] as usize;
                if Skeleton::base_name(&rig.skeleton.names[node]) == name {
                    px.radius[i] *= factor;
                }
            }
        }
        Ok(px)
    }
}
