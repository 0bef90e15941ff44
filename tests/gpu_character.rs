//! A hand-built rig (a two-bone "arm": a cylinder along +Y bound to a root and an elbow joint)
//! goes through the whole GPU path: upload, palette from a pose, compute skinning, drawing.

#![cfg(feature = "gpu")]

#[path = "support/tools.rs"]
mod tools;

use drape::anim::{Pose, Skeleton, Skin};
use drape::gpu::context::headless_for_tests;
use drape::gpu::renderer::{FrameScene, Renderer, Shading};
use drape::gpu::skin::{GpuSkinMethod, SkinPipeline};
use drape::gpu::{Camera, GpuCharacter};
use drape::math::{Quat, Transform, Vec2, Vec3, Vec4};
use drape::rig::{Material, Rig, SkinnedMesh, Texture};

/// A cylinder of radius 0.1 from y = 0 to y = 2 bound to joint 0 below y = 0.8, to joint 1
/// above y = 1.2 and blended in between. The elbow (joint 1) sits at y = 1.
fn arm_rig() -> Rig {
    let skeleton = Skeleton {
        names: vec!["mixamorig:Hips".into(), "mixamorig:LeftForeArm".into()],
        parents: vec![None, Some(0)],
        rest: vec![
            Transform::IDENTITY,
            Transform::from_translation(Vec3::new(0.0, 1.0, 0.0)),
        ],
    };
    let skin = Skin {
        name: "arm".into(),
        joints: vec![0, 1],
        inverse_bind: vec![
            glam::Mat4::IDENTITY,
            glam::Mat4::from_translation(Vec3::new(0.0, -1.0, 0.0)),
        ],
        skeleton_root: Some(0),
    };
    let (seg, rings) = (16u32, 40u32);
    let mut mesh = SkinnedMesh {
        name: "arm".into(),
        node: 0,
        skin: Some(0),
        material: Some(0),
        ..Default::default()
    };
    for r in 0..=rings {
        let y = 2.0 * r as f32 / rings as f32;
        let w1 = ((y - 0.8) / 0.4).clamp(0.0, 1.0);
        for s in 0..=seg {
            let a = s as f32 / seg as f32 * std::f32::consts::TAU;
            mesh.positions
                .push(Vec3::new(0.1 * a.cos(), y, 0.1 * a.sin()));
            mesh.normals.push(Vec3::new(a.cos(), 0.0, a.sin()));
            mesh.uvs.push(Vec2::new(s as f32 / seg as f32, y / 2.0));
            mesh.joints.push([0, 1, 0, 0]);
            mesh.weights.push([1.0 - w1, w1, 0.0, 0.0]);
        }
    }
    for r in 0..rings {
        for s in 0..seg {
            let a = r * (seg + 1) + s;
            let b = a + seg + 1;
            mesh.indices
                .extend_from_slice(&[a, b, a + 1, a + 1, b, b + 1]);
        }
    }
    let texture = Texture {
        name: "stripes".into(),
        width: 2,
        height: 2,
        rgba8: vec![
            255, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 255,
        ],
    };
    Rig {
        source: "test arm".into(),
        skeleton,
        skins: vec![skin],
        meshes: vec![mesh],
        materials: vec![Material {
            name: "m".into(),
            base_color: Vec4::ONE,
            base_color_texture: Some(0),
            roughness: 0.5,
            ..Default::default()
        }],
        textures: vec![texture],
        ..Default::default()
    }
}

#[test]
fn a_posed_rig_is_skinned_and_drawn() {
    let Some(ctx) = headless_for_tests("a_posed_rig_is_skinned_and_drawn") else {
        return;
    };
    let rig = arm_rig();
    let pipeline = SkinPipeline::new(&ctx);
    let mut renderer = Renderer::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb);
    let mut character = GpuCharacter::new(&ctx, &pipeline, &mut renderer, &rig).unwrap();

    // Bend the elbow 90° about Z: the forearm's tip (0, 2, 0) goes to (−1, 1, 0).
    let mut pose = Pose::rest(&rig.skeleton);
    pose.local[1].rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let mut world = Vec::new();
    pose.world_from_node(&rig.skeleton, &mut world);

    let mut images = Vec::new();
    for method in [GpuSkinMethod::Lbs, GpuSkinMethod::Dqs] {
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        character
            .encode_skinning(&ctx, &pipeline, &mut encoder, &rig, &world, method)
            .unwrap();
        ctx.queue.submit([encoder.finish()]);
        let (p, _) = character.skinned_mut(0).unwrap().read_back(&ctx).unwrap();
        // The ring's 16 distinct vertices (the 17th repeats the first at the seam).
        let tip: Vec3 = p[p.len() - 17..p.len() - 1].iter().copied().sum::<Vec3>() / 16.0;
        assert!(
            (tip - Vec3::new(-1.0, 1.0, 0.0)).length() < 1e-4,
            "{method:?}: tip at {tip}"
        );
        let base: Vec3 = p[..16].iter().copied().sum::<Vec3>() / 16.0;
        assert!(
            base.length() < 1e-5,
            "{method:?}: the root part stays: {base}"
        );

        let items = character.draw_items(&world, Shading::Textured, None);
        let (lo, hi) = items[0].mesh.bounds;
        assert!(
            lo.x < -0.99 && hi.y > 1.0,
            "skinned bounds follow the pose: {lo} {hi}"
        );
        let camera = Camera::frame_bounds(
            Vec3::new(-1.2, 0.0, -0.2),
            Vec3::new(0.2, 1.3, 0.2),
            1.0,
            Vec3::new(0.0, 0.0, -1.0),
            1.0,
        );
        let scene = FrameScene::new(camera, &items);
        images.push(renderer.render_to_image(&ctx, 96, 96, &scene).unwrap());
    }
    // The forearm is drawn where it was bent to (left of the elbow, at elbow height), in the
    // texture's colours.
    let camera = Camera::frame_bounds(
        Vec3::new(-1.2, 0.0, -0.2),
        Vec3::new(0.2, 1.3, 0.2),
        1.0,
        Vec3::new(0.0, 0.0, -1.0),
        1.0,
    );
    let c = camera.clip_from_world(1.0) * Vec3::new(-0.6, 1.0, 0.1).extend(1.0);
    let (x, y) = (
        ((c.x / c.w) * 0.5 + 0.5) * 96.0,
        (0.5 - (c.y / c.w) * 0.5) * 96.0,
    );
    for img in &images {
        let p = img.get_pixel(x as u32, y as u32);
        assert!(
            p[0] > 80 && p[0] as i32 > p[2] as i32 - 10,
            "forearm pixel {p:?}"
        );
    }
    // Textured: the material's texture set is bound; the elbow region is skinned differently by
    // LBS and DQS (DQS keeps the elbow's volume), so the two frames differ.
    let diff: u64 = images[0]
        .pixels()
        .zip(images[1].pixels())
        .map(|(a, b)| {
            (0..3)
                .map(|i| (a[i] as i64 - b[i] as i64).unsigned_abs())
                .sum::<u64>()
        })
        .sum();
    assert!(diff > 0);
}

#[test]
fn a_rig_with_a_missing_skin_is_refused() {
    let Some(ctx) = headless_for_tests("a_rig_with_a_missing_skin_is_refused") else {
        return;
    };
    let mut rig = arm_rig();
    rig.meshes[0].skin = Some(5);
    let pipeline = SkinPipeline::new(&ctx);
    let mut renderer = Renderer::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb);
    assert!(GpuCharacter::new(&ctx, &pipeline, &mut renderer, &rig).is_err());
}

/// `drape render SCENE.toml` renders the scene as the file dresses it: here the KayKit Rogue
/// with the props its hands all hold taken off (`hide`) and its own rigid cape simulated as
/// cloth (a mesh garment, which `--garments` cannot ask for). Frames are written, the body is
/// drawn without the hidden props and the cape, and the cape is drawn as cloth: the frame
/// differs from the same clip rendered bare with the props hidden. Needs an adapter
/// (lavapipe), as every GPU test.
#[test]
fn a_scene_file_is_rendered_as_it_dresses_the_character() {
    if headless_for_tests("render scene file").is_none() {
        return;
    }
    let Some(rogue) = tools::cc0_file("KayKit_Rogue/Rogue.glb") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("drape-render-scene-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("rogue.toml");
    std::fs::write(
        &scene,
        format!(
            "rig = {:?}\nclip = \"Idle\"\nsettle = 0.2\nblend = 0.2\nhide = [\"handslot.*\"]\n\n\
             [[garment]]\nmesh = \"Rogue_Cape\"\npin = \"top\"\n",
            rogue.display().to_string()
        ),
    )
    .unwrap();
    let args = |scene: Option<std::path::PathBuf>, out: &str| drape::cli::render::Args {
        scene,
        rig: None,
        hide: Vec::new(),
        clip: None,
        frames: Some("0..2".into()),
        fps: 30.0,
        size: "160x160".into(),
        out: dir.join(out),
        gif: None,
        gif_width: 480,
        no_png: false,
        method: None,
        model: None,
        shader: "phong".into(),
        camera: "front".into(),
        garments: Vec::new(),
        wear_unfit: false,
        spacing: 1.0,
        wet: Vec::new(),
        compare: false,
        samples: 1,
        force: false,
    };
    drape::cli::render::run(args(Some(scene.clone()), "dressed")).expect("render the scene");
    // The same character bare (a scene file without [[garment]] wears the four library
    // garments): the rig and clip with nothing worn, the props and the rigid cape hidden.
    let mut bare_args = args(None, "bare");
    bare_args.frames = Some("1..2".into());
    bare_args.rig = Some(rogue.clone());
    bare_args.hide = vec!["handslot.*".into(), "Rogue_Cape".into()];
    bare_args.clip = Some("Idle".into());
    drape::cli::render::run(bare_args).expect("render bare");
    let dressed = image::open(dir.join("dressed/frame_0001.png"))
        .expect("frame 1 written")
        .to_rgba8();
    assert!(dir.join("dressed/frame_0000.png").exists());
    let bare = image::open(dir.join("bare/frame_0001.png"))
        .unwrap()
        .to_rgba8();
    assert_eq!(dressed.dimensions(), (160, 160));
    // The cloth cape is drawn: the frames differ where it hangs (the same camera frames the
    // same clip in both).
    let differing = dressed
        .pixels()
        .zip(bare.pixels())
        .filter(|(a, b)| a.0.iter().zip(b.0.iter()).any(|(x, y)| x.abs_diff(*y) > 24))
        .count();
    assert!(
        differing > 100,
        "only {differing} pixels differ between the dressed and the bare Rogue"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
