//! Issue 24: any mesh simulated as cloth — a mesh of the rig (the KayKit Rogue's cape) or a
//! separate garment file (a skirt and a long coat generated here on the built-in ninja and
//! written as GLB by drape's exporter), pinned by `pin = "top"`, `{ within = … }` or painted
//! weights (`_PIN`, 0 … 1). Physical checks: pins held, no NaN, stretch within Provot + 2 %,
//! the cloth falls, the rest shape kept at rest.

#[path = "support/dressed.rs"]
mod dressed;
#[path = "support/gltf_builder.rs"]
mod gltf_builder;
#[path = "support/tools.rs"]
mod tools;

use drape::anim::Skeleton;
use drape::garments::mesh::{MeshGarmentSpec, MeshSource, PinRule};
use drape::garments::GarmentSpec;
use drape::math::{Transform, Vec2, Vec3, Vec4};
use drape::rig::{Material, Rig, SkinnedMesh};
use drape::scene::{Scene, SceneConfig};

fn shared(rel: &str) -> Option<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = [root.join("../shared"), root.join("../../shared")]
        .into_iter()
        .map(|d| d.join(rel))
        .find(|p| p.exists());
    if p.is_none() {
        tools::tool_missing(&format!("../shared/{rel}"));
    }
    p
}

fn config(garments: Vec<GarmentSpec>) -> SceneConfig {
    SceneConfig {
        clip: None,
        garments,
        settle: 0.5,
        blend: 0.3,
        ..SceneConfig::default()
    }
}

/// Largest structural/shear stretch of garment `g` over rest.
fn worst_stretch(scene: &Scene) -> f32 {
    scene
        .model
        .worst_limit_spring(&scene.state.x)
        .map(|(_, r)| r)
        .unwrap_or(1.0)
}

/// Mean height of the free particles of garment `g`.
fn mean_free_y(scene: &Scene, g: usize) -> f32 {
    let info = &scene.model.garments[g];
    let free: Vec<usize> = info
        .particles
        .clone()
        .filter(|&i| !scene.model.is_pinned(i))
        .collect();
    free.iter().map(|&i| scene.state.x[i].y).sum::<f32>() / free.len().max(1) as f32
}

#[test]
fn rogue_cape_from_its_own_mesh_pinned_at_top() {
    let Some(path) = shared("rigs/cc0/KayKit_Rogue/Rogue.glb") else {
        return;
    };
    let rig = drape::asset::load_rig(&path).unwrap();
    let n_meshes = rig.meshes.len();
    let spec = GarmentSpec::mesh(MeshGarmentSpec::new(
        MeshSource::Rig("Cape".into()),
        PinRule::Top,
    ));
    let mut cfg = config(vec![spec]);
    cfg.clip = Some("Idle".into());
    let mut scene = Scene::new(rig, cfg).unwrap();
    // The cape left the body: one mesh fewer to draw, export and check as body.
    assert_eq!(scene.rig.meshes.len(), n_meshes - 1);
    assert!(scene.rig.meshes.iter().all(|m| !m.name.contains("Cape")));
    let report = scene.garments[0].mesh.as_ref().unwrap().report.clone();
    eprintln!("rogue cape: {report:?}");
    assert!(report.pinned >= 3, "{report:?}");
    let rest0 = scene.garment_frame(0);
    if std::env::var("CAPE_DUMP").is_ok() {
        for (i, x) in scene.model.rest.iter().enumerate() {
            eprintln!(
                "p{i} {:.3} {:.3} {:.3} pinned {}",
                x.x,
                x.y,
                x.z,
                scene.model.is_pinned(i)
            );
        }
        for t in &scene.model.triangles {
            eprint!("{t:?} ");
        }
        eprintln!();
        eprintln!(
            "clips: {:?}",
            scene
                .rig
                .clips
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
        );
    }
    let y0 = mean_free_y(&scene, 0);
    let mut worst = 1.0f32;
    for f in 0..240 {
        scene.step(1.0 / 60.0);
        dressed::check_frame(&scene).unwrap_or_else(|e| panic!("frame {f}: {e}"));
        worst = worst.max(worst_stretch(&scene));
    }
    let y1 = mean_free_y(&scene, 0);
    let out = scene.garment_frame(0);
    picture(&scene, "rogue_cape_idle", Vec3::new(0.0, 0.9, 0.0), 0.95);
    assert_eq!(out.positions.len(), rest0.positions.len());
    assert_eq!(out.triangles, rest0.triangles);
    eprintln!(
        "rogue cape: free mean y {y0:.4} → {y1:.4} m, worst stretch {:.1} %",
        worst * 100.0
    );
    assert!(worst < 1.12, "stretch {worst}");
    assert!(y1 < y0 - 0.01, "the cape falls onto the back: {y0} → {y1}");
    // Downstream unchanged: soaked, under DQS and CoR skinning, the pins stay on the skinned
    // cape's collar and nothing breaks.
    for i in scene.model.garments[0].particles.clone() {
        scene.state.set_wetness(&scene.model, i, 0.84);
    }
    for method in [drape::skin::SkinMethod::Dqs, drape::skin::SkinMethod::Cor] {
        scene.set_method(method);
        for f in 0..30 {
            scene.step(1.0 / 60.0);
            dressed::check_frame(&scene).unwrap_or_else(|e| panic!("{method:?} frame {f}: {e}"));
        }
    }
}

/// The ninja's body at rest as the cloth meets it (its proxies): for a height and a direction
/// round the vertical axis through the hips, how far out the proxy union ends.
struct Profile {
    scene: Scene,
}

impl Profile {
    fn of_ninja(rig: &Rig) -> Profile {
        let scene = Scene::new(
            rig.clone(),
            SceneConfig {
                garments: vec![],
                ..SceneConfig::default()
            },
        )
        .unwrap();
        Profile { scene }
    }

    /// Distance from the axis at height `y` in direction `angle` (atan2(z, x)) past which the
    /// proxies are left for good, m (marching out in 5 mm steps to 0.6 m).
    fn radius(&self, y: f32, angle: f32) -> f32 {
        let dir = Vec3::new(angle.cos(), 0.0, angle.sin());
        let mut last_inside = 0.0;
        let mut r = 0.0;
        while r < 0.6 {
            let p = Vec3::new(0.0, y, 0.0) + dir * r;
            let d =
                drape::body::union_sdf(p, &self.scene.proxy_frame, &self.scene.proxies.capsules);
            if d < 0.0 {
                last_inside = r;
            }
            r += 0.005;
        }
        last_inside
    }
}

/// A tube garment hanging from `top` to `bottom` (heights, m) around the ninja, `cols` columns
/// over `angle` radians (a full turn: closed, with its last column a UV seam duplicating the
/// first), `rows` rings; each ring at least 2 cm outside the body and flaring by `flare` m
/// over its length (the body: its collision proxies, which the cloth meets). Pin weights per
/// ring: `pin(r)`.
struct Tube {
    name: &'static str,
    top: f32,
    bottom: f32,
    rows: usize,
    cols: usize,
    /// Opening at the front, radians (0: closed round).
    opening: f32,
    flare: f32,
}

fn tube(profile: &Profile, t: &Tube, pin: impl Fn(usize) -> f32) -> SkinnedMesh {
    let closed = t.opening == 0.0;
    // Columns: a closed tube repeats column 0 as column `cols` (the seam: same position,
    // u = 1 instead of 0).
    let ncols = t.cols + 1;
    let span = std::f32::consts::TAU - t.opening;
    // The front is +Z; the opening is centred on it (angle π/2 in atan2(z, x)).
    let angle =
        |c: usize| std::f32::consts::FRAC_PI_2 + 0.5 * t.opening + span * c as f32 / t.cols as f32;
    let mut radius = vec![0.0f32; ncols];
    let mut m = SkinnedMesh {
        name: t.name.into(),
        node: 0,
        material: Some(0),
        ..Default::default()
    };
    for r in 0..t.rows {
        let s = r as f32 / (t.rows - 1) as f32;
        let y = t.top + (t.bottom - t.top) * s;
        for c in 0..ncols {
            let a = angle(c);
            // Never narrower than the ring above: the garment hangs over the body.
            let body = profile.radius(y, a) + 0.02;
            radius[c] = if r == 0 {
                body
            } else {
                body.max(radius[c] + t.flare / (t.rows - 1) as f32)
            };
            if closed && c == t.cols {
                radius[c] = radius[0];
            }
            let p = Vec3::new(radius[c] * a.cos(), y, radius[c] * a.sin());
            m.positions.push(if closed && c == t.cols {
                m.positions[r * ncols]
            } else {
                p
            });
            m.uvs.push(Vec2::new(c as f32 / t.cols as f32, s));
            m.pin.push(pin(r));
        }
    }
    for r in 0..t.rows - 1 {
        for c in 0..t.cols {
            let (a, b) = ((r * ncols + c) as u32, (r * ncols + c + 1) as u32);
            let (d, e) = (a + ncols as u32, b + ncols as u32);
            // Outward-facing (counter-clockwise seen from outside).
            m.indices.extend_from_slice(&[a, b, d, b, e, d]);
        }
    }
    m.normals = drape::asset::geometry::smooth_normals(&m.positions, &m.indices);
    m
}

/// Writes `mesh` alone (one node, a cloth material) as a GLB with drape's exporter.
fn write_garment(mesh: SkinnedMesh, path: &std::path::Path) {
    let rig = Rig {
        source: "generated garment".into(),
        skeleton: Skeleton {
            names: vec![mesh.name.clone()],
            parents: vec![None],
            rest: vec![Transform::IDENTITY],
        },
        meshes: vec![mesh],
        materials: vec![Material {
            name: "cloth".into(),
            base_color: Vec4::new(0.55, 0.12, 0.1, 1.0),
            metallic: 0.0,
            roughness: 0.9,
            double_sided: true,
            ..Default::default()
        }],
        ..Default::default()
    };
    drape::asset::export::write_glb(&rig, path).unwrap();
}

fn out_dir() -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mesh_garment");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn skirt_tube() -> Tube {
    Tube {
        name: "Skirt",
        top: 1.02,
        bottom: 0.52,
        rows: 14,
        cols: 36,
        opening: 0.0,
        flare: 0.12,
    }
}

fn coat_tube() -> Tube {
    Tube {
        name: "Coat",
        top: 1.28,
        bottom: 0.36,
        rows: 24,
        cols: 36,
        opening: 0.5,
        flare: 0.1,
    }
}

/// Distance from the hips' axis of the mean of the lowest ring (the hem), m.
fn hem_radius(frame: &drape::scene::GarmentFrame) -> f32 {
    let lo = frame
        .positions
        .iter()
        .map(|p| p.y)
        .fold(f32::INFINITY, f32::min);
    let hem: Vec<f32> = frame
        .positions
        .iter()
        .filter(|p| p.y < lo + 0.03)
        .map(|p| Vec2::new(p.x, p.z).length())
        .collect();
    hem.iter().sum::<f32>() / hem.len().max(1) as f32
}

#[test]
fn generated_skirt_with_a_uv_seam_builds_exports_and_drapes() {
    let ninja = drape::ninja::build().unwrap().rig;
    let profile = Profile::of_ninja(&ninja);
    let t = skirt_tube();
    let mesh = tube(&profile, &t, |_| 0.0);
    let path = out_dir().join("skirt.glb");
    write_garment(mesh.clone(), &path);
    // Loaded back as a garment by a scene file.
    let dir = path.parent().unwrap();
    std::fs::write(
        dir.join("skirt.toml"),
        "rig = \"ninja\"\nclip = \"stance\"\nsettle = 0.5\nblend = 0.3\n\n[[garment]]\nmesh = \"skirt.glb\"\npin = \"top\"\n",
    )
    .unwrap();
    let mut scene = Scene::from_file(&dir.join("skirt.toml")).unwrap();
    let report = scene.garments[0].mesh.as_ref().unwrap().report.clone();
    eprintln!("skirt: {report:?}");
    // The UV seam is welded: one vertex per ring fewer than the mesh has.
    assert_eq!(report.vertices, t.rows * (t.cols + 1));
    assert_eq!(report.welded, t.rows);
    assert_eq!(report.particles, t.rows * t.cols);
    assert_eq!(report.pinned, t.cols, "the waist ring is pinned");
    assert_eq!(report.problems(), "");
    let rest = scene.garment_frame(0);
    assert_eq!(
        rest.positions.len(),
        mesh.positions.len(),
        "original vertex order kept"
    );

    let r0 = hem_radius(&rest);
    let mut worst = 1.0f32;
    for f in 0..150 {
        scene.step(1.0 / 60.0);
        dressed::check_frame(&scene).unwrap_or_else(|e| panic!("frame {f}: {e}"));
        worst = worst.max(worst_stretch(&scene));
    }
    let out = scene.garment_frame(0);
    // The seam stays closed: both copies of a seam vertex share the particle's position.
    for r in 0..t.rows {
        let (a, b) = (r * (t.cols + 1), r * (t.cols + 1) + t.cols);
        assert_eq!(out.positions[a], out.positions[b]);
        assert_ne!(out.uvs[a], out.uvs[b]);
    }
    let r1 = hem_radius(&out);
    picture(&scene, "skirt", Vec3::new(0.0, 0.9, 0.0), 0.95);
    let waist = hem_radius(&drape::scene::GarmentFrame {
        positions: rest.positions[..t.cols].to_vec(),
        ..Default::default()
    });
    eprintln!(
        "skirt: hem radius {:.3} → {:.3} m (waist {:.3}), worst stretch {:.1} %",
        r0,
        r1,
        waist,
        worst * 100.0
    );
    assert!(worst < 1.12, "stretch {worst}");
    // It stays flared: the hem well outside the waist.
    assert!(r1 > waist + 0.03, "hem {r1} waist {waist}");
}

/// Painted pin weights of the coat: 1 on the top ring, falling linearly to 0 over the next six.
fn coat_weight(r: usize) -> f32 {
    (1.0 - r as f32 / 6.0).max(0.0)
}

#[test]
fn generated_long_coat_with_painted_weights_between_0_and_1() {
    let ninja = drape::ninja::build().unwrap().rig;
    let profile = Profile::of_ninja(&ninja);
    let t = coat_tube();
    let mesh = tube(&profile, &t, coat_weight);
    let dir = out_dir();
    write_garment(mesh.clone(), &dir.join("coat.glb"));
    let max_distance = 0.05;
    std::fs::write(
        dir.join("coat.toml"),
        format!(
            "rig = \"ninja\"\nclip = \"tpose\"\nsettle = 0.5\nblend = 0.3\n\n[[garment]]\n\
             mesh = {{ file = \"coat.glb\", node = \"Coat\" }}\npin = \"weights\"\nmax_distance = {max_distance}\n"
        ),
    )
    .unwrap();
    let mut scene = Scene::from_file(&dir.join("coat.toml")).unwrap();
    let report = scene.garments[0].mesh.as_ref().unwrap().report.clone();
    eprintln!("coat: {report:?}");
    // An open coat has no seam to weld; top ring pinned, the next five rings partly.
    assert_eq!(report.welded, 0);
    assert_eq!(report.pinned, t.cols + 1);
    assert_eq!(report.partial, 5 * (t.cols + 1));
    assert_eq!(scene.soft.len(), report.partial);
    // Radii from the painted weights: (1 − w) · max_distance.
    let mut radii = scene.soft.radius.clone();
    radii.sort_by(f32::total_cmp);
    radii.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
    let expect: Vec<f32> = (1..6)
        .map(|r| (1.0 - coat_weight(r)) * max_distance)
        .collect();
    assert_eq!(radii.len(), 5, "{radii:?}");
    for (a, b) in radii.iter().zip(&expect) {
        assert!((a - b).abs() < 1e-5, "{radii:?} vs {expect:?}");
    }
    let y0 = mean_free_y(&scene, 0);
    let mut worst = 1.0f32;
    let mut worst_soft = 0.0f32;
    for f in 0..150 {
        scene.step(1.0 / 60.0);
        dressed::check_frame(&scene).unwrap_or_else(|e| panic!("frame {f}: {e}"));
        worst = worst.max(worst_stretch(&scene));
        for (k, &i) in scene.soft.particles.iter().enumerate() {
            let d = scene.state.x[i as usize].distance(scene.soft_targets[k].into());
            worst_soft = worst_soft.max(d / scene.soft.radius[k]);
        }
    }
    let y1 = mean_free_y(&scene, 0);
    picture(&scene, "coat", Vec3::new(0.0, 0.95, 0.0), 1.0);
    eprintln!(
        "coat: free mean y {y0:.3} → {y1:.3} m, worst stretch {:.1} %, soft pins at most {:.3} of their max distance",
        worst * 100.0,
        worst_soft
    );
    assert!(worst < 1.12, "stretch {worst}");
    assert!(
        worst_soft <= 1.0 + 1e-4,
        "a partly pinned vertex strayed past its max distance"
    );
    assert!(y1 < y0 - 0.002, "the coat hangs down: {y0} → {y1}");
}

#[test]
fn rest_shape_is_kept_at_rest_without_gravity() {
    let ninja = drape::ninja::build().unwrap().rig;
    let profile = Profile::of_ninja(&ninja);
    let t = skirt_tube();
    let path = out_dir().join("skirt_rest.glb");
    write_garment(tube(&profile, &t, |_| 0.0), &path);
    let mut cfg = config(vec![GarmentSpec::mesh(MeshGarmentSpec::new(
        MeshSource::File { path, node: None },
        PinRule::Top,
    ))]);
    cfg.settle = 2.0;
    cfg.sim.gravity = Vec3::ZERO;
    let mut scene = Scene::new(ninja, cfg).unwrap();
    let rest = scene.garment_frame(0);
    for _ in 0..60 {
        scene.step(1.0 / 60.0);
    }
    let out = scene.garment_frame(0);
    let moved = rest
        .positions
        .iter()
        .zip(&out.positions)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0f32, f32::max);
    eprintln!(
        "rest shape: largest move after 1 s without gravity {:.3} mm",
        moved * 1e3
    );
    // The modelled flare is the springs' rest state: nothing moves it.
    assert!(moved < 1e-3, "{moved}");
}

/// Under `DRAPE_PICTURES=1`: the scene's current frame from the front-left and the back-right
/// (CPU rasteriser, the body and the garments in their own materials and textures) written to
/// docs/mesh_garment_NAME.png for the README.
fn picture(scene: &Scene, name: &str, center: Vec3, half: f32) {
    if std::env::var("DRAPE_PICTURES").is_err() {
        return;
    }
    use drape::raster::{ortho, Canvas, Shading};
    let (w, h) = (360u32, 440u32);
    let mut sheet = Canvas::new(2 * w, h, [235, 235, 238]);
    let rig = &scene.rig;
    let texture = |mat: Option<u32>| {
        mat.and_then(|m| rig.materials.get(m as usize))
            .and_then(|m| m.base_color_texture)
            .and_then(|t| rig.textures.get(t as usize))
    };
    let color = |mat: Option<u32>, fallback: Vec3| {
        mat.and_then(|m| rig.materials.get(m as usize))
            .map(|m| m.base_color.truncate())
            .unwrap_or(fallback)
    };
    for (k, angle) in [0.5f32, std::f32::consts::PI + 0.6].into_iter().enumerate() {
        let mut c = Canvas::new(w, h, [235, 235, 238]);
        let fwd = -Vec3::new(angle.sin(), -0.15, angle.cos());
        let cam = ortho(center, fwd, Vec3::Y, half * w as f32 / h as f32, half, 3.0);
        let light = Shading {
            light_dir: -fwd + Vec3::Y,
            ..Default::default()
        };
        for (m, mesh) in rig.meshes.iter().enumerate() {
            let shading = Shading {
                base_color: color(mesh.material, Vec3::splat(0.6)),
                ..light
            };
            c.draw_mesh(
                &cam,
                scene.body_positions(m),
                scene.body_normals(m),
                &mesh.uvs,
                &mesh.indices,
                texture(mesh.material),
                &shading,
            );
        }
        for g in 0..scene.garments.len() {
            let f = scene.garment_frame(g);
            let shading = Shading {
                base_color: color(f.material, Vec3::new(0.2, 0.25, 0.5)),
                ..light
            };
            let idx: Vec<u32> = f.triangles.iter().flatten().copied().collect();
            c.draw_mesh(
                &cam,
                &f.positions,
                &f.normals,
                &f.uvs,
                &idx,
                texture(f.material),
                &shading,
            );
        }
        sheet.blit(&c, k as u32 * w, 0);
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(format!("mesh_garment_{name}.png"));
    std::fs::write(&out, sheet.to_png().unwrap()).unwrap();
    eprintln!("wrote {}", out.display());
}

#[test]
fn rogue_bake_replaces_the_rigid_cape_with_the_simulated_one() {
    let Some(path) = shared("rigs/cc0/KayKit_Rogue/Rogue.glb") else {
        return;
    };
    let rig = drape::asset::load_rig(&path).unwrap();
    let body_meshes = rig.meshes.len() - 1;
    let mut cfg = config(vec![GarmentSpec::mesh(MeshGarmentSpec::new(
        MeshSource::Rig("Rogue_Cape".into()),
        PinRule::Top,
    ))]);
    cfg.clip = Some("Walking_A".into());
    cfg.settle = 0.2;
    cfg.blend = 0.2;
    let mut scene = Scene::new(rig, cfg).unwrap();
    let opts = drape::cli::bake::BakeOptions {
        seconds: Some(0.25),
        every: 3,
        normals: true,
    };
    let baked = drape::cli::bake::bake(&mut scene, opts, &mut |_, _| {}, &mut |_, s| {
        dressed::check_frame(s).unwrap();
    })
    .unwrap();
    // One body entry per remaining rig mesh, one garment; the cape is the garment, not body.
    assert_eq!(baked.layout.body.len(), body_meshes);
    assert_eq!(baked.layout.garments.len(), 1);
    let back =
        drape::asset::load_rig_from_slice(&baked.bytes, None, "rogue bake", &Default::default())
            .unwrap();
    let capes: Vec<&SkinnedMesh> = back
        .meshes
        .iter()
        .filter(|m| m.name.contains("Cape"))
        .collect();
    assert_eq!(
        capes.len(),
        1,
        "the cape once: {:?}",
        back.meshes.iter().map(|m| &m.name).collect::<Vec<_>>()
    );
    // In its own textured material, with its own UVs and vertex count.
    let cape = capes[0];
    assert_eq!(cape.positions.len(), 56);
    assert_eq!(cape.uvs.len(), 56);
    let mat = &back.materials[cape.material.unwrap() as usize];
    assert!(mat.base_color_texture.is_some(), "{mat:?}");
    picture(&scene, "rogue_cape", Vec3::new(0.0, 0.9, 0.0), 0.95);
}

#[test]
fn scene_file_mesh_keys_and_their_errors() {
    use drape::scene::SceneFile;
    let parse = |t: &str| SceneFile::parse(t).and_then(|f| f.config());
    let c = parse("[[garment]]\nmesh = \"Cape\"\npin = \"weights\"\nmax_distance = 0.2\n").unwrap();
    let m = c.garments[0].mesh.as_ref().unwrap();
    assert_eq!(m.source, MeshSource::Rig("Cape".into()));
    assert_eq!(m.pin, PinRule::Weights);
    assert_eq!(m.max_distance, 0.2);
    let c = parse(
        "[[garment]]\nmesh = { file = \"a.glb\", node = \"Skirt\" }\npin = { within = 0.01 }\n",
    )
    .unwrap();
    let m = c.garments[0].mesh.as_ref().unwrap();
    assert_eq!(
        m.source,
        MeshSource::File {
            path: "a.glb".into(),
            node: Some("Skirt".into())
        }
    );
    assert_eq!(m.pin, PinRule::Within(0.01));
    let c = parse("[[garment]]\nmesh = \"skirt.GLB\"\npin = \"top\"\nk_structural = 90\n").unwrap();
    assert!(matches!(
        c.garments[0].mesh.as_ref().unwrap().source,
        MeshSource::File { .. }
    ));
    assert_eq!(c.garments[0].fabric.k_structural, 90.0);
    for (bad, says) in [
        (
            "[[garment]]\nkind = \"cape\"\nmesh = \"Cape\"\npin = \"top\"\n",
            "both",
        ),
        ("[[garment]]\nmesh = \"Cape\"\n", "needs pin"),
        (
            "[[garment]]\nmesh = \"Cape\"\npin = \"bottom\"\n",
            "garment[0].pin = \"bottom\": expected \"weights\", \"top\"",
        ),
        (
            "[[garment]]\nmesh = \"Cape\"\npin = { within = -1 }\n",
            "within",
        ),
        (
            "[[garment]]\nmesh = \"Cape\"\npin = \"top\"\nmax_distance = 9\n",
            "max_distance",
        ),
        (
            "[[garment]]\nkind = \"cape\"\npin = \"top\"\n",
            "mesh garment",
        ),
        ("[[garment]]\nspacing = 0.02\n", "has no kind"),
        (
            "[[garment]]\nmesh = \"Cape\"\npin = \"top\"\nspacing = 0.02\n",
            "modelled shape",
        ),
    ] {
        let e = parse(bad).expect_err(bad);
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn a_missing_mesh_or_weight_map_is_a_clear_error() {
    let ninja = drape::ninja::build().unwrap().rig;
    let spec = |name: &str, pin| {
        config(vec![GarmentSpec::mesh(MeshGarmentSpec::new(
            MeshSource::Rig(name.into()),
            pin,
        ))])
    };
    let e = Scene::new(ninja.clone(), spec("Skirt", PinRule::Top))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no mesh named 'Skirt'"), "{e}");
    // The ninja's body mesh has no painted weights, and is all of its body.
    let e = Scene::new(ninja.clone(), spec("Ninja", PinRule::Weights))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no painted pin weights"), "{e}");
    let e = Scene::new(ninja, spec("Ninja", PinRule::Top))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("leaves no body"), "{e}");
}

#[test]
fn degenerate_repeated_and_non_manifold_triangles_are_reported_and_simulated() {
    let ninja = drape::ninja::build().unwrap().rig;
    let profile = Profile::of_ninja(&ninja);
    let t = skirt_tube();
    let mut mesh = tube(&profile, &t, |_| 0.0);
    let n = mesh.positions.len() as u32;
    let ring = (t.cols + 1) as u32;
    // A fin on the edge between vertices 2·ring+3 and 3·ring+3 (a third triangle on it), a
    // triangle with two corners on one vertex, one with no area (three vertices on a line across
    // a seam copy), and a repeat of the first triangle.
    mesh.positions
        .push(mesh.positions[(2 * ring + 3) as usize] + Vec3::new(0.0, 0.0, 0.05));
    mesh.normals.push(Vec3::Z);
    mesh.uvs.push(Vec2::ZERO);
    mesh.pin.push(0.0);
    let first: Vec<u32> = mesh.indices[..3].to_vec();
    mesh.indices
        .extend_from_slice(&[2 * ring + 3, 3 * ring + 3, n]);
    mesh.indices.extend_from_slice(&[5, 5, 6]);
    mesh.indices.extend_from_slice(&[0, t.cols as u32, ring]);
    mesh.indices.extend_from_slice(&first);
    let path = out_dir().join("skirt_bad.glb");
    write_garment(mesh, &path);
    let mut scene = Scene::new(
        ninja,
        config(vec![GarmentSpec::mesh(MeshGarmentSpec::new(
            MeshSource::File { path, node: None },
            PinRule::Top,
        ))]),
    )
    .unwrap();
    let report = scene.garments[0].mesh.as_ref().unwrap().report.clone();
    eprintln!("bad skirt: {report:?}: {}", report.problems());
    assert_eq!(report.degenerate, 2, "{report:?}");
    assert_eq!(report.repeated, 1, "{report:?}");
    assert_eq!(report.non_manifold_edges, 1, "{report:?}");
    assert!(report.problems().contains("non-manifold"));
    for _ in 0..30 {
        scene.step(1.0 / 60.0);
    }
    assert!(scene.state.is_finite());
    assert!(worst_stretch(&scene) < 1.12);
}

#[test]
fn pin_within_a_distance_of_the_skin() {
    let ninja = drape::ninja::build().unwrap().rig;
    let profile = Profile::of_ninja(&ninja);
    let path = out_dir().join("skirt_within.glb");
    write_garment(tube(&profile, &skirt_tube(), |_| 0.0), &path);
    let within = |d: f32| {
        let scene = Scene::new(
            ninja.clone(),
            config(vec![GarmentSpec::mesh(MeshGarmentSpec::new(
                MeshSource::File {
                    path: path.clone(),
                    node: None,
                },
                PinRule::Within(d),
            ))]),
        )
        .unwrap();
        scene.garments[0].mesh.as_ref().unwrap().report.pinned
    };
    let (near, far) = (within(0.03), within(0.08));
    eprintln!("within 3 cm: {near} pinned, within 8 cm: {far}");
    // The waist hugs the body (about 2 cm outside the proxies, nearer the skin), the hem flares
    // away from it: more is pinned the farther the reach, never the whole skirt.
    assert!(near > 0 && far > near && far < 14 * 36, "{near} {far}");
}

#[test]
fn pin_weights_read_from_pin_attribute_or_color_0_red() {
    use serde_json::json;
    let mut b = gltf_builder::Builder::new();
    let pos = b.f32s(
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0],
        "VEC3",
    );
    let idx = b.u16s(&[0, 1, 2, 0, 2, 3], "SCALAR", false);
    // COLOR_0 as normalized RGBA8: red 0, 128, 255, 64 (green and blue ignored).
    let rgba = b.u8s(
        &[
            0, 255, 255, 255, 128, 0, 0, 255, 255, 9, 9, 255, 64, 0, 0, 255,
        ],
        "VEC4",
        true,
    );
    // COLOR_0 as float RGB, and a `_PIN` that takes precedence over it.
    let rgb = b.f32s(
        &[1.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0],
        "VEC3",
    );
    let pin = b.f32s(&[1.0, 0.75, 0.5, 0.25], "SCALAR");
    let rest = json!({
        "scene": 0,
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [{"name": "A", "mesh": 0}, {"name": "B", "mesh": 1}],
        "meshes": [
            {"name": "a", "primitives": [{"attributes": {"POSITION": pos, "COLOR_0": rgba}, "indices": idx}]},
            {"name": "b", "primitives": [{"attributes": {"POSITION": pos, "COLOR_0": rgb, "_PIN": pin}, "indices": idx}]}
        ]
    });
    let rig = drape::asset::load_rig_from_slice(&b.glb(&rest), None, "pins", &Default::default())
        .unwrap();
    let near = |a: &[f32], b: &[f32]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-3)
    };
    assert!(
        near(&rig.meshes[0].pin, &[0.0, 128.0 / 255.0, 1.0, 64.0 / 255.0]),
        "{:?}",
        rig.meshes[0].pin
    );
    assert!(
        near(&rig.meshes[1].pin, &[1.0, 0.75, 0.5, 0.25]),
        "{:?}",
        rig.meshes[1].pin
    );
    // The exporter writes `_PIN` back, and the loader reads it again.
    let again = drape::asset::load_rig_from_slice(
        &drape::asset::export::to_glb(&rig).unwrap(),
        None,
        "pins again",
        &Default::default(),
    )
    .unwrap();
    assert!(near(&again.meshes[0].pin, &rig.meshes[0].pin));
    assert!(near(&again.meshes[1].pin, &rig.meshes[1].pin));
}

#[test]
fn garment_check_measures_the_cape_against_the_rest_of_the_body() {
    let Some(path) = shared("rigs/cc0/KayKit_Rogue/Rogue.glb") else {
        return;
    };
    let rig = drape::asset::load_rig(&path).unwrap();
    let clip = rig.clip("Walking_A").unwrap();
    let mut cfg = config(vec![GarmentSpec::mesh(MeshGarmentSpec::new(
        MeshSource::Rig("Cape".into()),
        PinRule::Top,
    ))]);
    cfg.settle = 0.2;
    cfg.blend = 0.2;
    let th = drape::check::Thresholds::default();
    let report = drape::check::check_clip(&rig, clip, &cfg, &th, &mut |_, _| {}).unwrap();
    let g = &report.garments[0];
    eprintln!(
        "check: {} ({}) {} free vertices, deepest {:.1} mm, {} deep frames, worst stretch {:.1} %, failures {:?}",
        g.name,
        g.kind,
        g.vertices,
        g.max_depth * 1e3,
        g.deep_frames,
        g.worst_stretch * 100.0,
        g.failures
    );
    assert_eq!(g.kind, "mesh");
    assert_eq!(g.vertices, 56 - 7);
    assert!(g.worst_stretch < 1.12);
    // The skin it is measured against is the rest of the body: the cape's 84 triangles are not
    // in it (check_clip measures against its scene's rig, built as here).
    let total: usize = rig.meshes.iter().map(|m| m.triangle_count()).sum();
    let scene = Scene::new(rig, cfg).unwrap();
    assert_eq!(drape::check::triangle_nodes(&scene.rig).len(), total - 84);
}

/// Walking, under both cloth models. The mass-spring model passes issue 5's end-of-frame checks
/// every frame; under XPBD the cape's upper corners stretch past Provot's limit where the
/// swinging forearms catch them (measured and printed, not asserted: the position-based
/// model has no Provot pass), with the pins held and nothing non-finite.
#[test]
fn rogue_cape_walking_under_both_cloth_models() {
    let Some(path) = shared("rigs/cc0/KayKit_Rogue/Rogue.glb") else {
        return;
    };
    let rig = drape::asset::load_rig(&path).unwrap();
    for model in [
        drape::cloth::ClothModelKind::MassSpring,
        drape::cloth::ClothModelKind::Xpbd,
    ] {
        let mut cfg = config(vec![GarmentSpec::mesh(MeshGarmentSpec::new(
            MeshSource::Rig("Cape".into()),
            PinRule::Top,
        ))]);
        cfg.clip = Some("Walking_A".into());
        cfg.sim.model = model;
        let mut scene = Scene::new(rig.clone(), cfg).unwrap();
        let y0 = mean_free_y(&scene, 0);
        let (mut worst, mut off) = (1.0f32, 0);
        for f in 0..120 {
            scene.step(1.0 / 60.0);
            assert!(scene.state.is_finite(), "{model:?} frame {f}");
            for (k, &i) in scene.model.pins.iter().enumerate() {
                let d = scene.state.x[i as usize].distance(scene.pin_targets[k].into());
                assert!(d < 1e-4, "{model:?} frame {f}: pin {k} {d} m off");
            }
            match dressed::check_frame(&scene) {
                Err(e) if model == drape::cloth::ClothModelKind::MassSpring => {
                    panic!("{model:?} frame {f}: {e}")
                }
                Err(_) => off += 1,
                Ok(()) => {}
            }
            worst = worst.max(worst_stretch(&scene));
        }
        let y1 = mean_free_y(&scene, 0);
        eprintln!(
            "rogue cape walking, {model:?}: free mean y {y0:.3} → {y1:.3} m, worst stretch {:.1} %, {off} frames off issue 5's checks",
            worst * 100.0
        );
        // (Walking, the cape swings back: its height is printed, not asserted; the Idle test
        // asserts the fall.)
    }
}
