//! Contact sheets: each clip at several times, from the front and from the side, drawn with the
//! CPU rasteriser ([`crate::raster`]) from the rig's own exported tracks.

use crate::anim::{Clip, Pose};
use crate::math::Vec3;
use crate::raster::{ortho, Canvas, Shading};
use crate::rig::Rig;
use crate::skin::{SkinMethod, Skinner};

/// Local transforms of every node at key index `k` of a clip whose tracks all share one key
/// grid (true of the ninja's clips). Nodes without a track keep their rest transform.
pub fn pose_at_key(rig: &Rig, clip: &Clip, k: usize) -> Pose {
    let mut pose = Pose::rest(&rig.skeleton);
    for t in &clip.translations {
        pose.local[t.node as usize].translation = t.values[k.min(t.values.len() - 1)];
    }
    for t in &clip.rotations {
        pose.local[t.node as usize].rotation = t.values[k.min(t.values.len() - 1)];
    }
    for t in &clip.scales {
        pose.local[t.node as usize].scale = t.values[k.min(t.values.len() - 1)];
    }
    pose
}

/// Skinned positions and normals of mesh `m` in a pose, by drape's CPU linear blend skinning
/// ([`crate::skin::Skinner`]).
pub fn skin_lbs(rig: &Rig, m: usize, pose: &Pose) -> (Vec<Vec3>, Vec<Vec3>) {
    let mut world = Vec::new();
    pose.world_from_node(&rig.skeleton, &mut world);
    let mut skinner = Skinner::new(rig);
    skinner.update(rig, &world, SkinMethod::Lbs);
    (skinner.positions(m).to_vec(), skinner.normals(m).to_vec())
}

/// Default tile height of a contact sheet, pixels (tiles are 200 × 260 unless asked otherwise).
pub const TILE_H: u32 = 260;

fn draw_tile(
    rig: &Rig,
    pose: &Pose,
    front: bool,
    center: Vec3,
    tile_w: u32,
    tile_h: u32,
) -> Canvas {
    let (tw, th) = (tile_w, tile_h);
    let mut c = Canvas::new(tw, th, [214, 210, 200]);
    let half_h = 1.05;
    let half_w = half_h * tw as f32 / th as f32;
    // Floor line at y = 0.
    let floor_px = ((1.0 - (0.0 - (half_h - 0.1)) / half_h) * 0.5 * th as f32) as i32;
    c.fill_rect(0, floor_px, tw as i32, th as i32, [178, 172, 160]);
    let look = if front { Vec3::NEG_Z } else { Vec3::NEG_X };
    let target = Vec3::new(center.x, half_h - 0.1, center.z);
    let clip_from_world = ortho(target, look, Vec3::Y, half_w, half_h, 3.0);
    let shading = Shading {
        light_dir: Vec3::new(0.5, 0.9, 0.7),
        ..Default::default()
    };
    for m in 0..rig.meshes.len() {
        let (p, n) = skin_lbs(rig, m, pose);
        let mesh = &rig.meshes[m];
        let material = rig.materials.get(mesh.material.unwrap_or(0) as usize);
        let tex = material.and_then(|mat| {
            mat.base_color_texture
                .and_then(|t| rig.textures.get(t as usize))
        });
        // Untextured meshes (the corpus bodies) in their material's colour.
        let shading = Shading {
            base_color: material
                .map(|m| m.base_color.truncate())
                .unwrap_or(shading.base_color),
            ..shading
        };
        c.draw_mesh(
            &clip_from_world,
            &p,
            &n,
            &mesh.uvs,
            &mesh.indices,
            tex,
            &shading,
        );
    }
    c
}

/// A sheet of every clip (rows) at `columns` evenly spaced times, each time from the front and
/// the side (two tiles). The view follows the hips horizontally so root motion stays in frame.
/// `tile_h` is the height of one view in pixels (width 10/13 of it).
/// `times[row]` (s), when given and not empty, replaces that row's evenly spaced columns.
pub fn contact_sheet(
    rig: &Rig,
    clips: &[usize],
    columns: usize,
    tile_h: u32,
    times: &[Vec<f32>],
) -> Canvas {
    // The sheet is as wide as its longest row.
    let columns = (0..clips.len())
        .map(|r| {
            times
                .get(r)
                .filter(|t| !t.is_empty())
                .map(|t| t.len())
                .unwrap_or(columns)
        })
        .max()
        .unwrap_or(columns)
        .max(1);
    let (tw, th) = (tile_h * 10 / 13, tile_h);
    let label_h = 22;
    let w = tw * 2 * columns as u32;
    let h = (th + label_h) * clips.len() as u32;
    let mut sheet = Canvas::new(w, h, [40, 40, 44]);
    let hips = rig.skeleton.find("mixamorig:Hips").unwrap_or(1);
    for (row, &ci) in clips.iter().enumerate() {
        let clip = &rig.clips[ci];
        let keys = clip.rotations.first().map(|t| t.times.len()).unwrap_or(1);
        let y0 = row as u32 * (th + label_h);
        sheet.text(
            6,
            y0 as i32 + 4,
            &format!("{}  {:.2} S", clip.name, clip.duration()),
            2,
            [235, 235, 225],
        );
        let row_times = times.get(row).filter(|t| !t.is_empty());
        let cols = row_times.map(|t| t.len()).unwrap_or(columns);
        for col in 0..cols {
            let k = if let Some(times) = row_times {
                ((times[col] * 30.0).round().max(0.0) as usize).min(keys - 1)
            } else if cols == 1 {
                0
            } else {
                col * (keys - 1) / (cols - 1)
            };
            let pose = pose_at_key(rig, clip, k);
            let mut world = Vec::new();
            pose.world_from_node(&rig.skeleton, &mut world);
            let center = world[hips].transform_point3(Vec3::ZERO);
            let t = clip.rotations.first().map(|t| t.times[k]).unwrap_or(0.0);
            for (v, front) in [true, false].into_iter().enumerate() {
                let tile = draw_tile(rig, &pose, front, center, tw, th);
                let x = (col * 2 + v) as u32 * tw;
                sheet.blit(&tile, x, y0 + label_h);
                if v == 0 {
                    sheet.text(
                        x as i32 + 4,
                        (y0 + label_h) as i32 + 4,
                        &format!("{t:.2}"),
                        2,
                        [60, 60, 60],
                    );
                }
            }
        }
    }
    sheet
}
