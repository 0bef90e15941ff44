//! An experiment's picture of its two runs: with the `gpu` feature a side-by-side render
//! through drape's renderer, else (or without an adapter) the engine's three-view raster.

use std::path::Path;

use super::CliError;
use crate::cloth::collide::Collider;
use crate::cloth::export;
use crate::cloth::model::ClothModel;
use crate::math::Vec3A;
use crate::scene::Scene;

use super::setup::Sim;

/// What a picture shows of one run: the cloth model, its positions, water and the colliders,
/// and the dressed character when there is one.
pub struct View<'a> {
    pub model: &'a ClothModel,
    pub x: &'a [Vec3A],
    /// Absorbed water per particle, g/g.
    pub wet: &'a [f32],
    pub colliders: &'a [Collider],
    pub scene: Option<&'a Scene>,
}

impl<'a> From<&'a Sim> for View<'a> {
    fn from(s: &'a Sim) -> Self {
        View {
            model: &s.model,
            x: &s.state.x,
            wet: &s.state.wet,
            colliders: &s.colliders,
            scene: None,
        }
    }
}

impl<'a> From<&'a Scene> for View<'a> {
    fn from(s: &'a Scene) -> Self {
        View {
            model: &s.model,
            x: &s.state.x,
            wet: &s.state.wet,
            colliders: &s.colliders,
            scene: Some(s),
        }
    }
}

/// Writes the picture of a pair of runs into `DIR/NAME.png`: with the `gpu` feature, a
/// side-by-side render (reference left, wet right) with the wet look and the ground's shadow;
/// without it, or when no GPU adapter is found, the engine's three-view raster (reference
/// above, wet below).
pub(super) fn picture(dir: &Path, name: &str, top: View, bottom: View) -> Result<(), CliError> {
    #[cfg(feature = "gpu")]
    {
        match gpu_picture::render_pair(&top, &bottom) {
            Ok(img) => {
                return crate::output::save_image(&img, &dir.join(format!("{name}.png")))
                    .map_err(|e| CliError::new(format!("{name}.png: {e}")));
            }
            Err(e) => eprintln!("{name}: no GPU picture ({e}); writing the raster views"),
        }
    }
    raster_picture(dir, name, top, bottom)
}

/// The fallback picture: the engine's three-view PNG (front, side, top) of `top` above that
/// of `bottom`.
fn raster_picture(dir: &Path, name: &str, top: View, bottom: View) -> Result<(), CliError> {
    let err = |e: String| CliError::new(format!("{name}: {e}"));
    let mut imgs = Vec::new();
    for (tag, v) in [("a", top), ("b", bottom)] {
        let p = dir.join(format!(".{name}_{tag}.png"));
        export::write_png(&p, v.model, v.x, v.colliders, 360).map_err(|e| err(e.to_string()))?;
        let img = image::open(&p).map_err(|e| err(e.to_string()));
        let _ = std::fs::remove_file(&p);
        imgs.push(img?.to_rgb8());
    }
    let (w, h) = (imgs[0].width(), imgs[0].height());
    let mut out = image::RgbImage::from_pixel(w, 2 * h + 4, image::Rgb([40, 40, 40]));
    image::imageops::replace(&mut out, &imgs[0], 0, 0);
    image::imageops::replace(&mut out, &imgs[1], 0, h as i64 + 4);
    crate::output::save_image(&out, &dir.join(format!("{name}.png")))
        .map_err(|e| err(e.to_string()))
}

#[cfg(feature = "gpu")]
mod gpu_picture {
    //! The side-by-side render of an experiment's two runs through drape's renderer.

    use super::View;
    use crate::cloth::collide::Shape;
    use crate::cloth::wet::Fabric;
    use crate::gpu::{
        Camera, DrawItem, FrameScene, GarmentFrame, GpuContext, GpuMesh, MeshData, ObjectMaterial,
        Renderer, Shading, Stage,
    };
    use crate::math::{Vec3, Vec4};

    /// Width and height of each half, pixels.
    const HALF: (u32, u32) = (640, 540);

    /// Absorbed water (g/g) as the renderer's 0–1 wetness: saturated cotton is 1.
    fn wetness(a: &[f32]) -> Vec<f32> {
        let b = Fabric::COTTON.saturation;
        a.iter().map(|&w| (w / b).clamp(0.0, 1.0)).collect()
    }

    /// Both halves framed alike: the union of both runs' cloth and bounded colliders, seen
    /// from the front, a little from the right and above (a character from behind).
    fn camera(views: [&View; 2]) -> Camera {
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for v in views {
            for p in v.x.iter().filter(|p| p.is_finite()) {
                lo = lo.min(Vec3::from(*p));
                hi = hi.max(Vec3::from(*p));
            }
            if let Some(sc) = v.scene {
                for m in 0..sc.rig.meshes.len() {
                    for &p in sc.body_positions(m) {
                        lo = lo.min(p);
                        hi = hi.max(p);
                    }
                }
            }
            for c in v.colliders {
                if v.scene.is_none() && !matches!(c.cur, Shape::Plane { .. }) {
                    let (a, b) = c.cur.aabb();
                    lo = lo.min(a.into());
                    hi = hi.max(b.into());
                }
            }
        }
        let aspect = HALF.0 as f32 / HALF.1 as f32;
        // A character wears its cape on its back (it faces +z): look from behind.
        let dir = if views[0].scene.is_some() {
            Vec3::new(0.5, -0.25, 1.0)
        } else {
            Vec3::new(-0.45, -0.55, -1.0)
        };
        Camera::frame_bounds(lo, hi, aspect, dir, 1.05)
    }

    fn cloth_mesh(v: &View) -> MeshData {
        let positions: Vec<Vec3> = v.x.iter().map(|&p| p.into()).collect();
        let indices: Vec<u32> = v.model.triangles.iter().flatten().copied().collect();
        let mut m = MeshData {
            normals: vec![Vec3::Y; positions.len()],
            positions,
            wetness: wetness(v.wet),
            indices,
            ..MeshData::default()
        };
        m.recompute_normals();
        m
    }

    fn render_one(
        ctx: &GpuContext,
        renderer: &mut Renderer,
        v: &View,
        camera: Camera,
    ) -> Result<image::RgbaImage, String> {
        let e = |e: crate::gpu::GpuError| e.to_string();
        if let Some(scene) = v.scene {
            // The dressed character: the body skinned on the GPU, the garments with the wet look.
            let mut stage =
                Stage::new(ctx, &scene.rig, scene.config.method, &mut |_, _| {}).map_err(e)?;
            let frames: Vec<crate::scene::GarmentFrame> = (0..scene.garments.len())
                .map(|g| scene.garment_frame(g))
                .collect();
            let tris: Vec<Vec<u32>> = frames
                .iter()
                .map(|g| g.triangles.iter().flatten().copied().collect())
                .collect();
            let wet: Vec<Vec<f32>> = frames.iter().map(|g| wetness(&g.wetness)).collect();
            let garments: Vec<GarmentFrame> = frames
                .iter()
                .zip(&tris)
                .zip(&wet)
                .map(|((g, t), w)| GarmentFrame {
                    name: &g.name,
                    positions: &g.positions,
                    normals: &g.normals,
                    triangles: t,
                    wetness: w,
                    material: cloth_material(),
                })
                .collect();
            return stage
                .render_posed(
                    ctx,
                    &scene.rig,
                    scene.world_from_node(),
                    Shading::BlinnPhong,
                    camera,
                    &garments,
                    HALF,
                )
                .map_err(e);
        }
        let cloth = GpuMesh::new(ctx, "cloth", &cloth_mesh(v)).map_err(e)?;
        let mut solids = Vec::new();
        for c in v.colliders {
            let m = match c.cur {
                Shape::Sphere { centre, radius } => {
                    MeshData::uv_sphere(centre.into(), radius, 48, 24)
                }
                Shape::Capsule { c1, r1, c2, r2 } => {
                    MeshData::tapered_capsule(c1.into(), r1, c2.into(), r2, 32, 12)
                }
                // Floors are the renderer's ground.
                Shape::Plane { .. } => continue,
            };
            solids.push(GpuMesh::new(ctx, "collider", &m).map_err(e)?);
        }
        let mut items =
            vec![DrawItem::new(&cloth, Shading::BlinnPhong).with_material(cloth_material())];
        for m in &solids {
            items.push(
                DrawItem::new(m, Shading::BlinnPhong).with_material(ObjectMaterial {
                    base_color: Vec4::new(0.75, 0.72, 0.66, 1.0),
                    specular: 0.4,
                    shininess: 48.0,
                    ..ObjectMaterial::default()
                }),
            );
        }
        let mut frame = FrameScene::new(camera, &items);
        frame.clear_color = Vec4::new(0.55, 0.62, 0.72, 1.0);
        renderer
            .render_to_image(ctx, HALF.0, HALF.1, &frame)
            .map_err(e)
    }

    /// One cloth colour for both runs, so only the water makes them look different.
    fn cloth_material() -> ObjectMaterial {
        ObjectMaterial {
            base_color: Vec4::new(0.72, 0.30, 0.22, 1.0),
            specular: 0.15,
            shininess: 24.0,
            ..ObjectMaterial::default()
        }
    }

    /// Renders `left` and `right` side by side with a thin divider.
    pub fn render_pair(left: &View, right: &View) -> Result<image::RgbaImage, String> {
        let ctx = GpuContext::headless().map_err(|e| e.to_string())?;
        let mut renderer = Renderer::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb);
        let cam = camera([left, right]);
        let a = render_one(&ctx, &mut renderer, left, cam)?;
        let b = render_one(&ctx, &mut renderer, right, cam)?;
        let mut out =
            image::RgbaImage::from_pixel(2 * HALF.0 + 4, HALF.1, image::Rgba([30, 30, 30, 255]));
        image::imageops::replace(&mut out, &a, 0, 0);
        image::imageops::replace(&mut out, &b, HALF.0 as i64 + 4, 0);
        Ok(out)
    }
}
