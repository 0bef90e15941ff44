//! `drape info FILE`: what a character file holds — meshes, skins, nodes, clips, textures — and
//! the warnings the loader raised, as aligned text.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::anim::{Interpolation, Skeleton};
use crate::asset::{load_rig_with, LoadOptions};
use crate::cli::CliError;
use crate::rig::Rig;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The character file (.glb, .gltf or binary .fbx, found by content).
    pub file: PathBuf,
    /// List every joint of every skin instead of a summary.
    #[arg(long)]
    pub joints: bool,
    /// Also say which node plays each humanoid role the garments are laid out from, and how it
    /// was found (by name, from a chain, from the skeleton's shape).
    #[arg(long)]
    pub bones: bool,
    /// Follow buffer/image URIs that point outside the file's folder.
    #[arg(long)]
    pub allow_outside_uris: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let opts = LoadOptions {
        allow_outside_uris: args.allow_outside_uris,
        ..Default::default()
    };
    let rig = load_rig_with(&args.file, &opts).map_err(|e| CliError::new(e.to_string()))?;
    print!("{}", describe(&rig, args.joints));
    if args.bones {
        print!("{}", describe_bones(&rig));
    }
    Ok(())
}

/// The humanoid bone map of `drape info --bones`: each role's node and how it was found, or why
/// there is none (its rigid meshes count as body, as in a scene).
pub fn describe_bones(rig: &Rig) -> String {
    let body = crate::body::with_rigid_parts(rig, 0);
    match crate::garments::BoneMap::for_rig(body.as_ref().unwrap_or(rig), &[]) {
        Ok(map) => format!(
            "\nbones (role <- node, how it was found)\n{}",
            map.describe(&rig.skeleton)
        ),
        Err(e) => format!("\nbones: {e}\n"),
    }
}

/// The report `drape info` prints, as a string (tested without a process).
pub fn describe(rig: &Rig, all_joints: bool) -> String {
    let mut s = String::new();
    let sk = &rig.skeleton;
    let _ = writeln!(s, "{}", rig.source);
    let _ = writeln!(
        s,
        "  {} nodes, {} meshes ({} vertices), {} skins, {} materials, {} textures, {} clips",
        sk.len(),
        rig.meshes.len(),
        rig.vertex_count(),
        rig.skins.len(),
        rig.materials.len(),
        rig.textures.len(),
        rig.clips.len()
    );

    if !rig.meshes.is_empty() {
        let _ = writeln!(s, "\nmeshes");
        let rows: Vec<[String; 7]> = rig
            .meshes
            .iter()
            .take(MAX_ROWS)
            .map(|m| {
                [
                    m.name.clone(),
                    m.vertex_count().to_string(),
                    m.triangle_count().to_string(),
                    m.influences().to_string(),
                    m.skin.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
                    follows(rig, m),
                    m.material
                        .and_then(|i| rig.materials.get(i as usize))
                        .map(|mat| mat.name.clone())
                        .unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        table(
            &mut s,
            [
                "name",
                "vertices",
                "triangles",
                "influences",
                "skin",
                "follows",
                "material",
            ],
            &rows,
            &[1, 2, 3, 4],
        );
        more(&mut s, rig.meshes.len(), "meshes");
    }

    if !rig.skins.is_empty() {
        let _ = writeln!(s, "\nskins");
        for (i, skin) in rig.skins.iter().enumerate().take(MAX_ROWS) {
            let names: Vec<String> = skin
                .joints
                .iter()
                .map(|&j| match sk.names.get(j as usize) {
                    Some(n) if !n.is_empty() => n.clone(),
                    _ => format!("node {j}"),
                })
                .collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let prefix = prefix_of(&names);
            let _ = writeln!(
                s,
                "  {i}: {:?}, {} joints{}{}",
                skin.name,
                skin.joints.len(),
                match &prefix {
                    Some(p) => format!(", prefix {p:?}"),
                    None => String::new(),
                },
                match skin.skeleton_root.and_then(|r| sk.names.get(r as usize)) {
                    Some(r) => format!(", skeleton root {r:?}"),
                    None => String::new(),
                }
            );
            if all_joints {
                for (k, n) in names.iter().enumerate() {
                    let _ = writeln!(s, "     {k:>3} {n}");
                }
            } else {
                let shown: Vec<&str> = names
                    .iter()
                    .take(8)
                    .map(|n| Skeleton::base_name(n))
                    .collect();
                let more = names.len().saturating_sub(shown.len());
                let _ = writeln!(
                    s,
                    "     {}{}",
                    shown.join(", "),
                    if more > 0 {
                        format!(", … (+{more}; --joints lists all)")
                    } else {
                        String::new()
                    }
                );
            }
        }
        more(&mut s, rig.skins.len(), "skins");
    }

    if !rig.clips.is_empty() {
        let _ = writeln!(s, "\nclips");
        let rows: Vec<[String; 6]> = rig
            .clips
            .iter()
            .map(|c| {
                let mut interp = Vec::new();
                let mut keys = 0usize;
                let mut add = |i: Interpolation, k: usize| {
                    let name = match i {
                        Interpolation::Step => "STEP",
                        Interpolation::Linear => "LINEAR",
                        Interpolation::CubicSpline => "CUBICSPLINE",
                    };
                    if !interp.contains(&name) {
                        interp.push(name);
                    }
                    keys += k;
                };
                c.translations
                    .iter()
                    .for_each(|t| add(t.interpolation, t.times.len()));
                c.rotations
                    .iter()
                    .for_each(|t| add(t.interpolation, t.times.len()));
                c.scales
                    .iter()
                    .for_each(|t| add(t.interpolation, t.times.len()));
                [
                    c.name.clone(),
                    format!("{:.3} s", c.start),
                    format!("{:.3} s", c.duration()),
                    c.channel_count().to_string(),
                    keys.to_string(),
                    interp.join("+"),
                ]
            })
            .collect();
        table(
            &mut s,
            [
                "name",
                "start",
                "duration",
                "channels",
                "keys",
                "interpolation",
            ],
            &rows,
            &[1, 2, 3, 4],
        );
    }

    if !rig.materials.is_empty() {
        let _ = writeln!(s, "\nmaterials");
        let rows: Vec<[String; 5]> = rig
            .materials
            .iter()
            .map(|m| {
                let c = m.base_color;
                [
                    m.name.clone(),
                    format!("({:.2}, {:.2}, {:.2}, {:.2})", c.x, c.y, c.z, c.w),
                    m.base_color_texture
                        .map(|t| t.to_string())
                        .unwrap_or_else(|| "-".into()),
                    format!("{:.2}/{:.2}", m.metallic, m.roughness),
                    if m.double_sided {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                ]
            })
            .collect();
        table(
            &mut s,
            [
                "name",
                "base colour",
                "texture",
                "metal/rough",
                "double-sided",
            ],
            &rows,
            &[],
        );
    }

    if !rig.textures.is_empty() {
        let _ = writeln!(s, "\ntextures");
        for (i, t) in rig.textures.iter().enumerate() {
            let _ = writeln!(s, "  {i}: {:?} {}×{} RGBA8", t.name, t.width, t.height);
        }
    }

    if rig.warnings.is_empty() {
        let _ = writeln!(s, "\nno warnings");
    } else {
        let _ = writeln!(s, "\nwarnings");
        for w in &rig.warnings {
            let _ = writeln!(s, "  - {w}");
        }
    }
    s
}

/// Longer lists are cut to this many rows (RecursiveSkeletons has 84 meshes and 84 skins).
const MAX_ROWS: usize = 16;

fn more(s: &mut String, total: usize, what: &str) {
    if total > MAX_ROWS {
        let _ = writeln!(s, "  … and {} more {what}", total - MAX_ROWS);
    }
}

/// The Mixamo-style prefix shared by most joint names (`mixamorig:`, `mixamorig1:`,
/// `mixamorig` without colon), if any.
fn prefix_of(names: &[&str]) -> Option<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for n in names {
        let base = Skeleton::base_name(n);
        if base.len() < n.len() && n.ends_with(base) {
            let p = &n[..n.len() - base.len()];
            match counts.iter_mut().find(|(q, _)| q == p) {
                Some((_, c)) => *c += 1,
                None => counts.push((p.to_string(), 1)),
            }
        }
    }
    counts.into_iter().max_by_key(|(_, c)| *c).map(|(p, _)| p)
}

/// Writes rows as columns padded to their widest cell; `right` lists right-aligned columns.
/// For a mesh that no skin deforms: the joint it follows rigidly (its node, or the nearest node
/// above it, that some skin uses: a hat on `head`, a weapon on `handslot.r`), the name `--hide` can take
/// it off by with whatever else that joint holds; `-` for a skinned mesh or none found.
fn follows(rig: &crate::Rig, m: &crate::rig::SkinnedMesh) -> String {
    if m.skin.is_some() {
        return "-".into();
    }
    let sk = &rig.skeleton;
    let is_joint = |n: usize| rig.skins.iter().any(|s| s.joints.contains(&(n as u32)));
    sk.self_and_ancestors(m.node as usize)
        .find(|&k| is_joint(k))
        .and_then(|k| sk.names.get(k).cloned())
        .unwrap_or_else(|| "-".into())
}

fn table<const N: usize>(s: &mut String, head: [&str; N], rows: &[[String; N]], right: &[usize]) {
    let mut w = head.map(|h| h.chars().count());
    for r in rows {
        for (k, c) in r.iter().enumerate() {
            w[k] = w[k].max(c.chars().count());
        }
    }
    let line = |s: &mut String, cells: &[&str]| {
        s.push(' ');
        for (k, c) in cells.iter().enumerate() {
            let pad = w[k].saturating_sub(c.chars().count());
            s.push(' ');
            if right.contains(&k) {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            } else {
                s.push_str(c);
                if k + 1 < cells.len() {
                    s.push_str(&" ".repeat(pad));
                }
            }
            if k + 1 < cells.len() {
                s.push(' ');
            }
        }
        s.push('\n');
    };
    line(s, &head);
    for r in rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(s, &cells);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(
            prefix_of(&["mixamorig:Hips", "mixamorig:Spine", "LeftEye"]).as_deref(),
            Some("mixamorig:")
        );
        assert_eq!(
            prefix_of(&["mixamorig1:Hips"]).as_deref(),
            Some("mixamorig1:")
        );
        assert_eq!(prefix_of(&["Hips", "Spine"]), None);
    }

    #[test]
    fn table_aligns() {
        let mut s = String::new();
        table(
            &mut s,
            ["a", "n"],
            &[["long name".into(), "1".into()], ["x".into(), "100".into()]],
            &[1],
        );
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[1].len(), lines[2].len());
        assert!(lines[2].ends_with("100") && lines[1].ends_with("  1"));
    }
}
