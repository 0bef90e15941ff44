//! The viewer's real window under Xvfb: `drape view --screenshot` opens the window (winit, a
//! wgpu surface, egui), runs a number of frames, saves the presented frame and a JSON sidecar
//! (camera, panel width) and exits 0. Checked: the picture is not blank, the egui panel is
//! drawn beside the 3D view, and switching LBS → DQS through the same `--action` path the
//! panel uses changes the character's pixels around its most twisted joint and barely
//! anywhere else.
//!
//! Needs `xvfb-run` (package xvfb) and a GPU adapter (lavapipe is enough); without xvfb-run the
//! tests print SKIPPED unless DRAPE_REQUIRE_ALL=1 (CI), which makes that a failure.

#![cfg(feature = "app")]

#[path = "support/tools.rs"]
mod tools;

use std::path::PathBuf;
use std::process::Command;

use drape::app::viewer::{Action, Viewer};
use drape::app::ViewerSettings;
use drape::garments::GarmentKind;
use drape::math::{Mat4, Vec3, Vec4};
use drape::skin::SkinMethod;
use image::RgbaImage;

fn have_xvfb() -> bool {
    let found = Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .is_ok_and(|o| o.status.success());
    found || tools::tool_missing("xvfb-run (apt-get install xvfb xauth)")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("drape_viewer_test_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `drape view --screenshot` under Xvfb and returns the picture and its sidecar.
fn screenshot(
    name: &str,
    size: &str,
    frames: u32,
    actions: &[&str],
) -> (RgbaImage, serde_json::Value) {
    let dir = scratch(name);
    let out = dir.join(format!("{name}.png"));
    let runtime = dir.join("xdg");
    std::fs::create_dir_all(&runtime).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let mut cmd = Command::new("xvfb-run");
    cmd.args(["-a", "-s", "-screen 0 1280x800x24"])
        .arg(env!("CARGO_BIN_EXE_drape"))
        .args(["view", "--no-settings", "--size", size])
        .arg("--screenshot")
        .arg(&out)
        .args(["--after-frames", &frames.to_string()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("XDG_RUNTIME_DIR", &runtime)
        // Belt and braces: even a settings bug could not touch the user's file.
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("DRAPE_NO_SETTINGS", "1");
    for a in actions {
        cmd.args(["--action", a]);
    }
    let result = cmd.output().expect("run xvfb-run");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(result.status.success(), "drape view failed: {log}");
    assert!(
        !dir.join("config").exists(),
        "--no-settings wrote a settings file"
    );
    let image = image::open(&out)
        .unwrap_or_else(|e| panic!("{}: {e}\n{log}", out.display()))
        .to_rgba8();
    let mut side = out.clone().into_os_string();
    side.push(".json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(PathBuf::from(side)).unwrap()).unwrap();
    if std::env::var_os("DRAPE_KEEP_SCREENSHOTS").is_none() {
        std::fs::remove_dir_all(&dir).ok();
    } else {
        eprintln!("kept {}", out.display());
    }
    (image, json)
}

fn region_colors(img: &RgbaImage, x0: u32, x1: u32, y0: u32, y1: u32) -> Vec<[u8; 3]> {
    let mut out = Vec::new();
    for y in y0..y1.min(img.height()) {
        for x in x0..x1.min(img.width()) {
            let p = img.get_pixel(x, y).0;
            out.push([p[0], p[1], p[2]]);
        }
    }
    out
}

fn dominant(colors: &[[u8; 3]]) -> ([u8; 3], f64) {
    let mut counts = std::collections::HashMap::new();
    for c in colors {
        *counts.entry(*c).or_insert(0usize) += 1;
    }
    let (c, n) = counts.into_iter().max_by_key(|(_, n)| *n).unwrap();
    (c, n as f64 / colors.len() as f64)
}

#[test]
fn the_window_shows_the_dressed_ninja_and_the_panel() {
    if !have_xvfb() {
        return;
    }
    // 30 frames (half a second of settling) keep the test short on a software rasteriser;
    // MSAA off halves lavapipe's drawing time.
    let (img, json) = screenshot("dressed", "800x500", 30, &["msaa=off"]);
    assert_eq!(img.dimensions(), (800, 500));
    assert_eq!(json["garments"].as_array().unwrap().len(), 4, "{json}");
    assert_eq!(json["clip"], "roundhouse_kick");
    let panel = json["panel_width"].as_f64().unwrap() as u32;
    assert!((150..500).contains(&panel), "panel width {panel} px of 800");

    // The panel: egui's dark panel fill (a neutral grey) dominates the strip, with text on it.
    let strip = region_colors(&img, 4, panel - 4, 60, 460);
    let (fill, share) = dominant(&strip);
    assert!(
        share > 0.4 && fill[0] == fill[1] && fill[1] == fill[2] && fill[0] < 60,
        "panel strip dominated by {fill:?} ({share:.2})"
    );
    let text = strip
        .iter()
        .filter(|c| c[0] > 150 && c[1] > 150 && c[2] > 150)
        .count();
    assert!(text > 200, "only {text} light (text) pixels in the panel");

    // The 3D view: not uniform, not the panel's colour, and showing coloured things (the
    // textured ninja, the red sash, the indigo cape).
    let view = region_colors(&img, panel + 10, 800, 0, 460);
    let (bg, share) = dominant(&view);
    assert!(share < 0.9, "the 3D view is {share:.2} one colour {bg:?}");
    assert_ne!(bg, fill, "the 3D view has the panel's colour");
    let distinct: std::collections::HashSet<_> = view.iter().collect();
    assert!(
        distinct.len() > 500,
        "{} colours in the 3D view",
        distinct.len()
    );
    let reddish = view
        .iter()
        .filter(|c| c[0] as i32 > c[1] as i32 + 40 && c[0] as i32 > c[2] as i32 + 40)
        .count();
    assert!(reddish > 50, "no sash: {reddish} red pixels");
}

/// Where the scene's body differs most between LBS and DQS at the test pose, computed on the
/// CPU through the same actions the window receives.
fn most_twisted_point() -> Vec3 {
    let rig = drape::cli::load_character(None, &Default::default()).unwrap();
    let mut v = Viewer::new(rig, "built-in ninja", ViewerSettings::default()).unwrap();
    for kind in GarmentKind::ALL {
        v.apply(Action::SetGarment(kind, false));
    }
    v.flush();
    v.apply(Action::SetMethod(SkinMethod::Lbs));
    v.apply(Action::Seek(0.8));
    let lbs: Vec<Vec3> = v.scene.body_positions(0).to_vec();
    v.apply(Action::SetMethod(SkinMethod::Dqs));
    v.apply(Action::Seek(0.8));
    let dqs = v.scene.body_positions(0);
    let (i, d) = lbs
        .iter()
        .zip(dqs)
        .map(|(a, b)| (*a - *b).length())
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert!(d > 0.005, "LBS and DQS differ by only {d} m");
    (lbs[i] + dqs[i]) * 0.5
}

fn project(json: &serde_json::Value, p: Vec3) -> (f32, f32) {
    let m: Vec<f32> = json["camera"]["clip_from_world"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect();
    let m = Mat4::from_cols_slice(&m);
    let c: Vec4 = m * p.extend(1.0);
    let ndc = c.truncate() / c.w;
    let (w, h) = (
        json["width"].as_f64().unwrap() as f32,
        json["height"].as_f64().unwrap() as f32,
    );
    ((ndc.x + 1.0) * 0.5 * w, (1.0 - ndc.y) * 0.5 * h)
}

fn mean_diff(a: &RgbaImage, b: &RgbaImage, cx: f32, cy: f32, r: i32) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for y in (cy as i32 - r)..(cy as i32 + r) {
        for x in (cx as i32 - r)..(cx as i32 + r) {
            if x < 0 || y < 0 || x >= a.width() as i32 || y >= a.height() as i32 {
                continue;
            }
            let (p, q) = (
                a.get_pixel(x as u32, y as u32).0,
                b.get_pixel(x as u32, y as u32).0,
            );
            sum += (0..3)
                .map(|k| (p[k] as f64 - q[k] as f64).abs())
                .sum::<f64>()
                / 3.0;
            n += 1;
        }
    }
    sum / n.max(1) as f64
}

#[test]
fn switching_lbs_to_dqs_changes_the_pixels_at_the_twisted_joint() {
    if !have_xvfb() {
        return;
    }
    let at = most_twisted_point();
    // No garments (nothing hides the body, nothing simulated), the kick held at 0.8 s.
    let common = [
        "garment.cape=off@1",
        "garment.hakama=off@1",
        "garment.sash=off@1",
        "garment.headband=off@1",
        "seek=0.8@2",
        "pause@2",
        "msaa=off@1",
    ];
    let shoot = |method: &str| {
        let mut a: Vec<String> = common.iter().map(|s| s.to_string()).collect();
        a.push(format!("method={method}@2"));
        let refs: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        screenshot(method, "800x500", 4, &refs)
    };
    let (lbs, json_lbs) = shoot("lbs");
    let (dqs, json_dqs) = shoot("dqs");
    assert_eq!(json_lbs["method"], "lbs");
    assert_eq!(json_dqs["method"], "dqs");
    assert_eq!(
        json_lbs["camera"], json_dqs["camera"],
        "same camera in both runs"
    );
    let (x, y) = project(&json_lbs, at);
    let panel = json_lbs["panel_width"].as_f64().unwrap() as f32;
    assert!(
        x > panel && x < 800.0 && y > 0.0 && y < 460.0,
        "the twisted joint projects to ({x}, {y}), outside the 3D view"
    );
    let near = mean_diff(&lbs, &dqs, x, y, 24);
    // Far from it: the corners of the 3D view (ground and background).
    let far =
        mean_diff(&lbs, &dqs, 790.0, 20.0, 12).max(mean_diff(&lbs, &dqs, panel + 30.0, 450.0, 12));
    assert!(
        near > 2.0 && near > 4.0 * far,
        "mean difference {near:.2} at the twisted joint ({x:.0}, {y:.0}), {far:.2} far away"
    );
}

#[test]
fn without_a_display_it_says_so_and_points_to_drape_render() {
    let out = Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(["view", "--no-settings"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("DRAPE_NO_SETTINGS", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no display") && err.contains("drape render") && !err.contains("panicked"),
        "{err}"
    );
    // Plain `drape` is the viewer too.
    let out = Command::new(env!("CARGO_BIN_EXE_drape"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("DRAPE_NO_SETTINGS", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("drape render"));
}
