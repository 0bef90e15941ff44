//! The context: which adapter we got, and what happens without one. The "no adapter" cases run
//! the probe below in a child process with `WGPU_BACKEND=metal` (no Metal backend on Linux or
//! Windows builds, so no adapter), so that the environment of the other tests is untouched.

#![cfg(feature = "gpu")]

use std::process::Command;

use drape::gpu::context::headless_for_tests;
use drape::gpu::renderer::{DepthTarget, FrameScene, Renderer};
use drape::gpu::{Camera, GpuContext, GpuError};

/// Run by the test below in a child process; ignored when run directly.
#[test]
#[ignore]
fn probe_headless_context() {
    match headless_for_tests("probe") {
        Some(ctx) => println!("PROBE got {}", ctx.summary),
        None => println!("PROBE no adapter"),
    }
}

fn run_probe(require: bool) -> (bool, String) {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args([
        "--ignored",
        "--exact",
        "probe_headless_context",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("WGPU_BACKEND", "metal")
    .env_remove("DRAPE_REQUIRE_GPU");
    if require {
        cmd.env("DRAPE_REQUIRE_GPU", "1");
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn without_an_adapter_gpu_tests_skip_unless_required() {
    if cfg!(target_os = "macos") {
        return; // Metal exists there: the trick below would find an adapter.
    }
    let (ok, text) = run_probe(false);
    assert!(
        ok && text.contains("SKIPPED") && text.contains("PROBE no adapter"),
        "{text}"
    );
    let (ok, text) = run_probe(true);
    assert!(!ok && text.contains("DRAPE_REQUIRE_GPU=1"), "{text}");
}

#[test]
fn no_adapter_is_a_typed_error() {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::empty(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    match pollster::block_on(GpuContext::from_instance(instance, None)) {
        Err(GpuError::NoAdapter(msg)) => assert!(!msg.is_empty()),
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("an instance without backends found an adapter"),
    }
}

#[test]
fn the_adapter_is_named_and_mismatched_targets_are_refused() {
    let Some(ctx) = headless_for_tests("the_adapter_is_named_and_mismatched_targets_are_refused")
    else {
        return;
    };
    eprintln!("adapter: {}", ctx.summary);
    assert!(!ctx.summary.name.is_empty());
    let mut renderer = Renderer::new(&ctx, wgpu::TextureFormat::Rgba8UnormSrgb);
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("target"),
        size: wgpu::Extent3d {
            width: 64,
            height: 32,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let view = texture.create_view(&Default::default());
    let scene = FrameScene::new(Camera::default(), &[]);
    // Depth of another size, depth without MSAA for an MSAA renderer: typed errors, no panic.
    let wrong_size = renderer.depth_target(&ctx, 32, 32);
    assert!(matches!(
        renderer.render(&ctx, &view, &wrong_size, &scene),
        Err(GpuError::InvalidInput(_))
    ));
    let wrong_samples = DepthTarget::new(&ctx, 64, 32, 1);
    assert!(matches!(
        renderer.render(&ctx, &view, &wrong_samples, &scene),
        Err(GpuError::InvalidInput(_))
    ));
    // The right one renders (an empty scene: ground only).
    let depth = renderer.depth_target(&ctx, 64, 32);
    renderer.render(&ctx, &view, &depth, &scene).unwrap();
    ctx.wait_idle().unwrap();
    assert!(renderer.render_to_image(&ctx, 0, 10, &scene).is_err());
}
