//! The body as the cloth sees it: spheres and tapered capsules fitted to a skinned character,
//! moved with its joints every frame, and a BVH over them.
//!
//! ```text
//! Proxies::fit(rig, skin, &opts)            once, at the bind pose
//! world_from_bind(..)                       per frame (or take the skinning stage's matrices)
//! Proxies::update(&world_from_bind, &mut frame)   per frame, no allocation
//! ProxyBvh::refit(&capsules, &frame)        per frame, no allocation
//! ProxyBvh::query_aabb(min, max, &mut out)  per particle, no allocation
//! ```
//!
//! Every collider is a tapered capsule `[a, b]` over two spheres of the frame (the convex hull of
//! the two spheres, PHYSICS.md §2); `[i, i]` is a lone sphere. [`quality`] measures how well the
//! union of colliders matches the skin.

pub mod bvh;
pub mod proxies;
mod rigid;
pub mod sheets;
pub mod surface;

pub use self::bvh::ProxyBvh;
pub use proxies::{
    quality, quality_at_bind, quality_by_joint, stand_off_at_bind, tapered_capsule_closest,
    tapered_capsule_sdf, union_sdf, world_from_bind, BodyError, CapsuleClosest, JointQuality,
    Proxies, ProxyFrame, ProxyOptions, ProxyQuality, StandOff, QUALITY_TOLERANCE,
};
pub use rigid::{file_mesh_name, is_rigid_part, mesh_bound_to_skin, with_rigid_parts};
pub use sheets::sheet_triangles;
