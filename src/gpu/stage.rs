//! A character on a stage: one [`Rig`] skinned on the GPU, posed from a clip at a given time,
//! lit, framed and drawn with any shader, plus garments handed in as plain arrays. `drape render`,
//! the golden tests and the pictures in docs/ all go through [`Stage::render`], so they show the
//! same thing.
//!
//! Framing is decided once for a whole clip ([`clip_bounds`] then [`CameraView::camera`]), so a
//! rendered sequence never jumps from frame to frame.

use image::RgbaImage;

use super::camera::Camera;
use super::character::GpuCharacter;
use super::context::{GpuContext, GpuError};
use super::mesh::{GpuMesh, MeshData};
use super::renderer::{DrawItem, FrameScene, ObjectMaterial, Renderer, Shading};
use super::skin::{GpuSkinMethod, SkinPipeline};
use crate::anim::Pose;
use crate::math::{Mat4, Vec3};
use crate::rig::Rig;
use crate::skin::{SkinMethod, Skinner};

/// Where the camera looks from. Directions are in the rig's frame (glTF: +Y up, the character
/// faces +Z).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CameraView {
    /// Three-quarter view from the front left, slightly above (azimuth 30°, elevation 12°).
    Auto,
    /// From the front (+Z), at chest height (elevation 5°).
    Front,
    /// From the character's left (+X), elevation 5°.
    Side,
    /// Orbit around the framed centre. `azimuth` in degrees from +Z towards +X, `elevation` in
    /// degrees above the horizon in (−89, 89), `distance` in metres from the centre (`None`:
    /// fit the bounds).
    Orbit {
        azimuth: f32,
        elevation: f32,
        distance: Option<f32>,
    },
}

impl CameraView {
    /// Azimuth and elevation in degrees.
    fn angles(self) -> (f32, f32, Option<f32>) {
        match self {
            CameraView::Auto => (30.0, 12.0, None),
            CameraView::Front => (0.0, 5.0, None),
            CameraView::Side => (90.0, 5.0, None),
            CameraView::Orbit {
                azimuth,
                elevation,
                distance,
            } => (azimuth, elevation, distance),
        }
    }

    /// The camera that frames `bounds` (world space) at `aspect` (width / height) from this view:
    /// it looks at the box's centre from the closest distance at which all eight corners are
    /// inside the picture, with `margin` ≥ 1 of slack (1.1: a tenth of the half-frame free
    /// around the box). An explicit orbit distance is kept as given.
    pub fn camera(self, bounds: (Vec3, Vec3), aspect: f32, margin: f32) -> Camera {
        let (az, el, distance) = self.angles();
        let (az, el) = (az.to_radians(), el.clamp(-89.0, 89.0).to_radians());
        // The eye sits at centre + (sin az cos el, sin el, cos az cos el) · d.
        let to_eye = Vec3::new(az.sin() * el.cos(), el.sin(), az.cos() * el.cos());
        let mut cam = Camera::frame_bounds(bounds.0, bounds.1, aspect, -to_eye, 1.0);
        let radius = ((bounds.1 - bounds.0).length() * 0.5).max(1e-3);
        let d = match distance.filter(|d| d.is_finite() && *d > 0.0) {
            Some(d) => d,
            None => fit_distance(&cam, bounds, aspect, margin.max(1.0)),
        };
        cam.eye = cam.target + to_eye * d;
        cam.near = (d - 2.0 * radius).max(d * 0.01).max(0.01);
        cam.far = d + 2.0 * radius;
        cam
    }
}

/// The smallest eye distance from `cam.target` along the camera's current view direction at
/// which every corner of `bounds` projects inside the frame shrunk by `margin`: a corner at
/// offset o from the target, with right/up/forward axes r, u, f, is at depth d + o·f and must
/// satisfy |o·r| ≤ tan(fov_x/2)/margin · (d + o·f), and likewise for u and fov_y.
fn fit_distance(cam: &Camera, bounds: (Vec3, Vec3), aspect: f32, margin: f32) -> f32 {
    let f = (cam.target - cam.eye).normalize_or(Vec3::NEG_Z);
    let r = f.cross(cam.up).normalize_or(Vec3::X);
    let u = r.cross(f);
    let tan_y = (cam.fov_y * 0.5).tan() / margin;
    let tan_x = tan_y
        * if aspect.is_finite() && aspect > 0.0 {
            aspect
        } else {
            1.0
        };
    let (lo, hi) = bounds;
    let mut d = 1e-3f32;
    for i in 0..8 {
        let c = Vec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        );
        let o = c - cam.target;
        d = d
            .max(o.dot(r).abs() / tan_x - o.dot(f))
            .max(o.dot(u).abs() / tan_y - o.dot(f));
    }
    // Never inside the box: the near plane must stay in front of every corner.
    d.max((hi - lo).length() * 0.5 * 1.05)
}

impl std::str::FromStr for CameraView {
    type Err = String;

    /// `auto`, `front`, `side`, or `AZ,EL[,DIST]` (degrees, degrees, metres).
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => return Ok(CameraView::Auto),
            "front" => return Ok(CameraView::Front),
            "side" => return Ok(CameraView::Side),
            _ => {}
        }
        let bad = || {
            format!(
                "bad camera '{s}': expected auto, front, side or AZ,EL[,DIST] \
                 (degrees, degrees, metres), e.g. 30,15 or 30,15,4"
            )
        };
        let parts: Vec<f32> = s
            .split(',')
            .map(|p| p.trim().parse::<f32>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        if !(2..=3).contains(&parts.len()) || parts.iter().any(|v| !v.is_finite()) {
            return Err(bad());
        }
        if parts[1].abs() >= 89.5 {
            return Err(format!(
                "bad camera '{s}': elevation {} is outside (−89.5°, 89.5°)",
                parts[1]
            ));
        }
        let distance = match parts.get(2) {
            Some(&d) if d > 0.0 => Some(d),
            Some(&d) => return Err(format!("bad camera '{s}': distance {d} must be > 0")),
            None => None,
        };
        Ok(CameraView::Orbit {
            azimuth: parts[0],
            elevation: parts[1],
            distance,
        })
    }
}

/// Displacement of a character's surface at height 1 of its (weave) height map, metres: the
/// renderer's default (4 cm, made for the reference sphere) would tear a body's few-centimetre
/// triangles apart. Range [0, 0.02].
pub const CHARACTER_DISPLACEMENT: f32 = 0.004;

/// `drape::skin`'s method as the compute pass's.
pub fn gpu_method(method: SkinMethod) -> GpuSkinMethod {
    match method {
        SkinMethod::Lbs => GpuSkinMethod::Lbs,
        SkinMethod::Dqs => GpuSkinMethod::Dqs,
        SkinMethod::Cor => GpuSkinMethod::Cor,
    }
}

/// The world-space bounds of every mesh of `rig` over the poses of `clip` at `times` (seconds),
/// skinned on the CPU with LBS (the other methods stay within a few millimetres of it). `None`
/// for a rig without vertices. Used to frame a whole sequence once.
pub fn clip_bounds(rig: &Rig, clip: Option<usize>, times: &[f32]) -> Option<(Vec3, Vec3)> {
    let mut skinner = Skinner::new(rig);
    let mut pose = Pose::rest(&rig.skeleton);
    let mut world = Vec::new();
    let mut out: Option<(Vec3, Vec3)> = None;
    let rest = [0.0];
    let times = if clip.is_some() && !times.is_empty() {
        times
    } else {
        &rest[..]
    };
    for &t in times {
        pose_at(rig, clip, t, &mut pose, &mut world);
        skinner.update(rig, &world, SkinMethod::Lbs);
        for m in 0..rig.meshes.len() {
            if let Some((lo, hi)) = super::mesh::bounds_of(skinner.positions(m)) {
                out = Some(match out {
                    Some((a, b)) => (a.min(lo), b.max(hi)),
                    None => (lo, hi),
                });
            }
        }
    }
    out
}

/// The pose of `rig` at `t` seconds into `clip` (the rest pose where `clip` is `None`), as
/// `world_from_node` in `world`. Nodes the clip does not animate keep their rest transform.
pub fn pose_at(rig: &Rig, clip: Option<usize>, t: f32, pose: &mut Pose, world: &mut Vec<Mat4>) {
    *pose = Pose::rest(&rig.skeleton);
    if let Some(c) = clip.and_then(|c| rig.clips.get(c)) {
        c.sample(t, pose);
    }
    pose.world_from_node(&rig.skeleton, world);
}

/// One garment's current shape, handed to [`Stage::render`] by whoever simulates it (the
/// dressed-character scene, a cloth demo): world-space positions, optional per-vertex normals
/// (empty: computed from the triangles), triangles (indices into `positions`, three per
/// triangle, fixed for the garment's life), per-vertex wetness in [0, 1] (empty: dry), and its
/// material (the base colour; wetness darkens it and sharpens its highlight in the shaders).
#[derive(Clone, Copy, Debug)]
pub struct GarmentFrame<'a> {
    pub name: &'a str,
    pub positions: &'a [Vec3],
    pub normals: &'a [Vec3],
    pub triangles: &'a [u32],
    pub wetness: &'a [f32],
    pub material: ObjectMaterial,
}

/// Seconds spent in the last [`Stage::render`], split by stage (wall clock, including the wait
/// for the GPU: on lavapipe both run on the CPU).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameTimes {
    /// Palette upload, skinning dispatch and the wait for it.
    pub skin_s: f64,
    /// Drawing and reading the image back.
    pub draw_s: f64,
}

/// A rig on the GPU with its renderer and, for garments, one GPU mesh each.
pub struct Stage {
    pipeline: SkinPipeline,
    renderer: Renderer,
    character: GpuCharacter,
    method: GpuSkinMethod,
    garments: Vec<GpuMesh>,
    pose: Pose,
    world: Vec<Mat4>,
    /// Timing of the last frame.
    pub last_times: FrameTimes,
}

impl Stage {
    /// Uploads `rig`. For [`SkinMethod::Cor`] the centres of rotation are computed here on the
    /// CPU (or read from the disk cache; `drape::skin::cor`), `progress` is told how far it is.
    pub fn new(
        ctx: &GpuContext,
        rig: &Rig,
        method: SkinMethod,
        progress: &mut dyn FnMut(usize, crate::skin::CorProgress),
    ) -> Result<Self, GpuError> {
        Self::with_samples(ctx, rig, method, Renderer::DEFAULT_SAMPLES, progress)
    }

    /// As [`Stage::new`] with `samples` per pixel (1: no antialiasing, about half the frame
    /// time on a software rasteriser such as lavapipe; 4: MSAA, the default).
    pub fn with_samples(
        ctx: &GpuContext,
        rig: &Rig,
        method: SkinMethod,
        samples: u32,
        progress: &mut dyn FnMut(usize, crate::skin::CorProgress),
    ) -> Result<Self, GpuError> {
        let pipeline = SkinPipeline::new(ctx);
        let mut renderer =
            Renderer::with_samples(ctx, wgpu::TextureFormat::Rgba8UnormSrgb, samples);
        let mut character = GpuCharacter::new(ctx, &pipeline, &mut renderer, rig)?;
        if method == SkinMethod::Cor {
            let mut skinner = Skinner::new(rig);
            skinner.prepare_cor(rig, progress);
            for m in 0..rig.meshes.len() {
                if let (Some(c), Some(gpu)) = (skinner.cor_centers(m), character.skinned_mut(m)) {
                    gpu.set_cor_centers(ctx, &c.centers)?;
                }
            }
        }
        Ok(Self {
            pipeline,
            renderer,
            character,
            method: gpu_method(method),
            garments: Vec::new(),
            pose: Pose::rest(&rig.skeleton),
            world: Vec::new(),
            last_times: FrameTimes::default(),
        })
    }

    /// Renders `rig` at `t` seconds into `clip` (rest pose for `None`) with `shading`, seen by
    /// `camera`, with `garments` drawn in their own materials, at `width × height`.
    #[allow(clippy::too_many_arguments)]
    pub fn render(
        &mut self,
        ctx: &GpuContext,
        rig: &Rig,
        clip: Option<usize>,
        t: f32,
        shading: Shading,
        camera: Camera,
        garments: &[GarmentFrame],
        size: (u32, u32),
    ) -> Result<RgbaImage, GpuError> {
        pose_at(rig, clip, t, &mut self.pose, &mut self.world);
        let world = std::mem::take(&mut self.world);
        let image = self.render_posed(ctx, rig, &world, shading, camera, garments, size);
        self.world = world;
        image
    }

    /// Renders `rig` in the pose whose forward kinematics is `world_from_node` (posed by a
    /// simulation, a player, …), otherwise as [`Stage::render`].
    #[allow(clippy::too_many_arguments)]
    pub fn render_posed(
        &mut self,
        ctx: &GpuContext,
        rig: &Rig,
        world_from_node: &[Mat4],
        shading: Shading,
        camera: Camera,
        garments: &[GarmentFrame],
        (width, height): (u32, u32),
    ) -> Result<RgbaImage, GpuError> {
        let start = std::time::Instant::now();
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("stage skinning encoder"),
            });
        self.character.encode_skinning(
            ctx,
            &self.pipeline,
            &mut encoder,
            rig,
            world_from_node,
            self.method,
        )?;
        ctx.queue.submit([encoder.finish()]);
        ctx.wait_idle()?;
        let skinned = std::time::Instant::now();
        self.upload_garments(ctx, garments)?;
        let mut items = self.character.draw_items(world_from_node, shading, None);
        for item in &mut items {
            item.material.displacement = CHARACTER_DISPLACEMENT;
        }
        for (mesh, g) in self.garments.iter().zip(garments) {
            items.push(DrawItem::new(mesh, shading).with_material(g.material));
        }
        let scene = FrameScene::new(camera, &items);
        let image = self.renderer.render_to_image(ctx, width, height, &scene)?;
        self.last_times = FrameTimes {
            skin_s: (skinned - start).as_secs_f64(),
            draw_s: skinned.elapsed().as_secs_f64(),
        };
        Ok(image)
    }

    fn upload_garments(
        &mut self,
        ctx: &GpuContext,
        garments: &[GarmentFrame],
    ) -> Result<(), GpuError> {
        self.garments.truncate(garments.len());
        for (i, g) in garments.iter().enumerate() {
            if i == self.garments.len()
                || self.garments[i].vertex_count as usize != g.positions.len()
                || self.garments[i].index_count as usize != g.triangles.len()
            {
                let mut data = MeshData {
                    positions: g.positions.to_vec(),
                    normals: Vec::new(),
                    uvs: Vec::new(),
                    wetness: g.wetness.to_vec(),
                    indices: g.triangles.to_vec(),
                };
                data.recompute_normals();
                let mesh = GpuMesh::new(ctx, g.name, &data)?;
                if i == self.garments.len() {
                    self.garments.push(mesh);
                } else {
                    self.garments[i] = mesh;
                }
            }
            self.garments[i].update_vertices(
                ctx,
                g.positions,
                g.normals,
                g.wetness,
                g.triangles,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camera_views_parse_and_refuse_nonsense() {
        assert_eq!("auto".parse::<CameraView>(), Ok(CameraView::Auto));
        assert_eq!("Side".parse::<CameraView>(), Ok(CameraView::Side));
        assert_eq!(
            "30, -10, 4".parse::<CameraView>(),
            Ok(CameraView::Orbit {
                azimuth: 30.0,
                elevation: -10.0,
                distance: Some(4.0)
            })
        );
        for bad in ["", "top", "1", "1,2,3,4", "0,90", "0,10,-1", "a,b", "nan,0"] {
            let e = bad.parse::<CameraView>().unwrap_err();
            assert!(e.contains("camera"), "{bad}: {e}");
        }
    }

    #[test]
    fn views_look_at_the_bounds_from_the_stated_side() {
        let b = (Vec3::new(-0.5, 0.0, -0.3), Vec3::new(0.5, 1.8, 0.3));
        let c = (b.0 + b.1) * 0.5;
        let front = CameraView::Front.camera(b, 16.0 / 9.0, 1.0);
        assert!((front.target - c).length() < 1e-5);
        assert!(front.eye.z > 1.0 && front.eye.x.abs() < 1e-4);
        let side = CameraView::Side.camera(b, 1.0, 1.0);
        assert!(side.eye.x > 1.0 && side.eye.z.abs() < 1e-3);
        let orbit = CameraView::Orbit {
            azimuth: 180.0,
            elevation: 30.0,
            distance: Some(5.0),
        }
        .camera(b, 1.0, 1.0);
        assert!(((orbit.eye - c).length() - 5.0).abs() < 1e-4);
        assert!(orbit.eye.z < c.z && orbit.eye.y > c.y);
        assert!(orbit.near > 0.0 && orbit.near < 5.0 - 0.9 && orbit.far > 5.0 + 0.9);
    }
}
