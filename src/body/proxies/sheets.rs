//! Open sheets among the proxies' skin: a cape that is one curved plane (KayKit's, hung from the
//! chest: [`crate::body::sheets`]) has no volume for the stadium fit to bound. Fitted with the
//! rest of its bone, its vertices drew spheres round it that stood 9 cm off it: blobs at the
//! cape's edges that the hakama and the sash tails caught on (the KayKit Rogue's hakama failed
//! its return to the drape in 16 of 76 clips), and round which the sash was laid out as a hoop
//! 24 cm off the skin. Sheets are left out of the fit and of its quality; the cloth meets them
//! in the skin-contact stage, from either side (`cloth::stages::skin`'s `sheet_contact`).

use crate::rig::Rig;

/// For every vertex of the meshes bound to `rig.skins[skin]` (mesh order, as the fit numbers
/// them): whether it belongs to a triangle of an open sheet ([`crate::body::sheet_triangles`]).
pub(super) fn sheet_vertices(rig: &Rig, skin: usize) -> Vec<bool> {
    crate::body::sheets::sheet_vertices_per_mesh(rig)
        .into_iter()
        .zip(&rig.meshes)
        .filter(|(_, m)| m.skin == Some(skin as u32))
        .flat_map(|(flags, _)| flags)
        .collect()
}
