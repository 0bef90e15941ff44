//! Putting the clips of one file on another character: Mixamo's "without skin" downloads hold a
//! skeleton and one clip, and a user puts that clip on the character they downloaded with skin.
//!
//! Bones are matched by name after any `mixamorig:`-style prefix ([`Skeleton::base_name`]). The
//! clip is applied as **local rotations** on every matched bone, plus the **translation of the
//! hips** (the topmost matched bone the clip moves), so a donor skeleton whose rest pose sits a
//! few millimetres from the character's changes nothing: the character keeps its own bone
//! lengths. The hips' keys are carried through the frames above the hips (the file's root
//! node with its unit scale, a glTF `Armature` with its 90° turn), so a clip in centimetres and
//! Y-up lands right on a character in metres under a turned armature. Scale keys and the
//! translations of other bones are not carried over.

use std::path::Path;

use crate::anim::{Clip, Skeleton, Track};
use crate::asset::{label_of, load_rig_with, AssetError, LoadOptions};
use crate::math::{Mat4, Quat};
use crate::rig::Rig;

/// Adds every clip of `donor` to `rig` (see the module docs). A single clip is named `name`
/// (the donor file's stem, for `--clips-from punch.fbx` → `punch`); several are named
/// `name/clip`. Returns the names added and warnings (bones of the donor's clips that match no
/// bone of `rig`), or an error when no animated bone matches at all.
pub fn add_clips_from(
    rig: &mut Rig,
    donor: &Rig,
    name: &str,
) -> Result<(Vec<String>, Vec<String>), String> {
    if donor.clips.is_empty() {
        return Err(format!("{} has no animation clip", donor.source));
    }
    let dsk = &donor.skeleton;
    let tsk = &rig.skeleton;
    // Donor node → character node, by base name.
    let map: Vec<Option<u32>> = dsk
        .names
        .iter()
        .map(|n| {
            let b = Skeleton::base_name(n);
            tsk.names
                .iter()
                .position(|t| Skeleton::base_name(t) == b)
                .map(|i| i as u32)
        })
        .collect();
    let d_world = dsk.rest_world();
    let t_world = tsk.rest_world();
    let parent_world = |sk: &Skeleton, w: &[Mat4], i: usize| match sk.parents[i] {
        Some(p) => w[p as usize],
        None => Mat4::IDENTITY,
    };
    let depth = |sk: &Skeleton, mut i: usize| {
        let mut d = 0;
        while let Some(p) = sk.parents[i] {
            i = p as usize;
            d += 1;
        }
        d
    };
    let mut added = Vec::new();
    let mut warnings = Vec::new();
    let several = donor.clips.len() > 1;
    for clip in &donor.clips {
        // The hips: the matched bone named Hips, else the topmost matched translated bone.
        let hips = clip
            .translations
            .iter()
            .map(|t| t.node as usize)
            .filter(|&n| map.get(n).copied().flatten().is_some())
            .min_by_key(|&n| {
                (
                    Skeleton::base_name(&dsk.names[n]) != "Hips",
                    depth(dsk, n),
                    n,
                )
            });
        let mut out = Clip {
            name: String::new(),
            start: clip.start,
            end: clip.end,
            ..Default::default()
        };
        let mut unmatched = Vec::new();
        let animated: std::collections::BTreeSet<usize> = clip
            .rotations
            .iter()
            .chain(clip.rotations.iter())
            .map(|t| t.node as usize)
            .chain(clip.translations.iter().map(|t| t.node as usize))
            .collect();
        for &n in &animated {
            if map.get(n).copied().flatten().is_none() {
                unmatched.push(dsk.names[n].clone());
            }
        }
        // Frames above the hips: donor parent → character parent.
        let (rot_fix, point_fix) = match hips {
            Some(h) => {
                let th = map[h].unwrap_or(0) as usize;
                let pd = parent_world(dsk, &d_world, h);
                let pt = parent_world(tsk, &t_world, th);
                let rd = pd.to_scale_rotation_translation().1.normalize();
                let rt = pt.to_scale_rotation_translation().1.normalize();
                (rt.inverse() * rd, pt.inverse() * pd)
            }
            None => (Quat::IDENTITY, Mat4::IDENTITY),
        };
        for t in &clip.rotations {
            let n = t.node as usize;
            let Some(target) = map.get(n).copied().flatten() else {
                continue;
            };
            let fix = if Some(n) == hips {
                rot_fix
            } else {
                Quat::IDENTITY
            };
            out.rotations.push(Track {
                node: target,
                times: t.times.clone(),
                values: t.values.iter().map(|q| (fix * *q).normalize()).collect(),
                interpolation: t.interpolation,
            });
        }
        if let Some(h) = hips {
            if let Some(t) = clip.translations.iter().find(|t| t.node as usize == h) {
                out.translations.push(Track {
                    node: map[h].unwrap_or(0),
                    times: t.times.clone(),
                    values: t
                        .values
                        .iter()
                        .map(|v| point_fix.transform_point3(*v))
                        .collect(),
                    interpolation: t.interpolation,
                });
            }
        }
        if out.rotations.is_empty() && out.translations.is_empty() {
            return Err(format!(
                "no bone that {}'s clip {:?} animates matches a bone of {} (by name after any \
                 \"mixamorig:\" prefix)",
                donor.source, clip.name, rig.source
            ));
        }
        let unmatched: Vec<String> = unmatched
            .into_iter()
            .filter(|n| !is_root_frame(n))
            .collect();
        if !unmatched.is_empty() {
            warnings.push(format!(
                "clip {:?} from {}: {} animated bone(s) match no bone of {} and are left out: {}",
                if several { &clip.name } else { name },
                donor.source,
                unmatched.len(),
                rig.source,
                unmatched.join(", ")
            ));
        }
        let base = if several {
            format!("{name}/{}", clip.name)
        } else {
            name.to_string()
        };
        let mut final_name = base.clone();
        let mut k = 2;
        while rig.clip(&final_name).is_some() {
            final_name = format!("{base} ({k})");
            k += 1;
        }
        out.name = final_name.clone();
        rig.clips.push(out);
        added.push(final_name);
    }
    Ok((added, warnings))
}

fn is_root_frame(name: &str) -> bool {
    name == "RootNode"
}

/// Loads `path` (FBX or glTF) and adds its clips to `rig`, named after the file's stem. Returns
/// the names added and the warnings to show.
pub fn load_clips_from(
    rig: &mut Rig,
    path: &Path,
    opts: &LoadOptions,
) -> Result<(Vec<String>, Vec<String>), AssetError> {
    let opts = LoadOptions {
        decode_textures: false,
        ..opts.clone()
    };
    let donor = load_rig_with(path, &opts)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "clip".into());
    let (added, mut warnings) =
        add_clips_from(rig, &donor, &stem).map_err(|problem| AssetError::Malformed {
            file: label_of(path),
            problem,
        })?;
    warnings.extend(
        donor
            .warnings
            .iter()
            .map(|w| format!("{}: {w}", label_of(path))),
    );
    Ok((added, warnings))
}
