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
    let sheet_tris = crate::body::sheet_triangles(rig);
    let mut out = Vec::new();
    let mut first_tri = 0;
    for m in &rig.meshes {
        let tris = first_tri..first_tri + m.indices.len() / 3;
        first_tri = tris.end;
        if m.skin != Some(skin as u32) {
            continue;
        }
        let base = out.len();
        out.resize(base + m.positions.len(), false);
        for (t, k) in m.indices.chunks_exact(3).zip(tris) {
            if sheet_tris.get(k).copied().unwrap_or(false) {
                for &v in t {
                    if let Some(f) = out.get_mut(base + v as usize) {
                        *f = true;
                    }
                }
            }
        }
    }
    out
}
