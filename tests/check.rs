//! Issue 19's instrument (`drape::check`, `drape check`): the inside-the-skin query against brute
//! force and simple shapes, the per-frame measure on the dressed ninja, and a short CLI run.

use drape::check::winding::{nearest_brute, winding_brute, SkinQuery};
use drape::check::{arm_triangles, clip_loops, garment_inside, Thresholds};
use drape::math::{Vec3, Vec3A};

/// A UV sphere of radius `r` about `c`, triangles wound counter-clockwise seen from outside.
fn sphere(c: Vec3, r: f32, rings: u32, segs: u32) -> Vec<[Vec3; 3]> {
    let p = |i: u32, j: u32| {
        let th = std::f32::consts::PI * i as f32 / rings as f32;
        let ph = std::f32::consts::TAU * j as f32 / segs as f32;
        c + r * Vec3::new(th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin())
    };
    let mut out = Vec::new();
    for i in 0..rings {
        for j in 0..segs {
            let (a, b, cc, d) = (p(i, j), p(i + 1, j), p(i + 1, j + 1), p(i, j + 1));
            if i > 0 {
                out.push([a, d, b]);
            }
            if i + 1 < rings {
                out.push([b, d, cc]);
            }
        }
    }
    out
}

/// An axis-aligned box, outward-oriented; `open_top` leaves out the +y face.
fn boxed(min: Vec3, max: Vec3, open_top: bool) -> Vec<[Vec3; 3]> {
    let corner = |i: u32| {
        Vec3::new(
            if i & 1 != 0 { max.x } else { min.x },
            if i & 2 != 0 { max.y } else { min.y },
            if i & 4 != 0 { max.z } else { min.z },
        )
    };
    // Faces as corner quads, counter-clockwise seen from outside.
    let faces: [([u32; 4], bool); 6] = [
        ([0, 4, 6, 2], false), // -x
        ([1, 3, 7, 5], false), // +x
        ([0, 1, 5, 4], false), // -y
        ([2, 6, 7, 3], true),  // +y
        ([0, 2, 3, 1], false), // -z
        ([4, 5, 7, 6], false), // +z
    ];
    let mut out = Vec::new();
    for (q, top) in faces {
        if top && open_top {
            continue;
        }
        let [a, b, c, d] = q.map(corner);
        out.push([a, b, c]);
        out.push([a, c, d]);
    }
    out
}

/// Deterministic points in a box (a small LCG, no dependency).
fn points(n: usize, lo: Vec3, hi: Vec3, seed: u64) -> Vec<Vec3> {
    let mut s = seed;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    (0..n)
        .map(|_| lo + (hi - lo) * Vec3::new(next(), next(), next()))
        .collect()
}

#[test]
fn sphere_inside_outside_and_depth() {
    let tris = sphere(Vec3::new(0.1, 1.0, -0.2), 0.3, 24, 48);
    let q = SkinQuery::new(&tris);
    let c = Vec3::new(0.1, 1.0, -0.2);
    for p in points(400, c - Vec3::splat(0.6), c + Vec3::splat(0.6), 7) {
        let r = p.distance(c);
        if (r - 0.3).abs() < 0.01 {
            continue; // within the facets' sag of the surface
        }
        let hit = q.query(p);
        assert_eq!(hit.is_inside(), r < 0.3, "{p} at r = {r}: {hit:?}");
        let (d, _) = nearest_brute(&tris, p).unwrap();
        if r < 0.3 {
            assert!((hit.depth - d).abs() < 1e-5, "{} vs {d}", hit.depth);
            // The faceted sphere lies within its facets' sag (about 2 r (1 − cos(π/48)) ≈ 1.3 mm)
            // of the round one.
            assert!(
                (hit.depth - (0.3 - r)).abs() < 2e-3,
                "{} vs {}",
                hit.depth,
                0.3 - r
            );
        } else {
            assert_eq!(hit.depth, 0.0);
        }
    }
}

/// The hierarchical sum agrees with the exact one (within a few hundredths with the first-order
/// far field and β = 2, far below the 0.5 the decision needs) and the BVH's nearest triangle with trying them all, on a closed sphere, two
/// overlapping boxes and an open box.
#[test]
fn fast_winding_and_nearest_match_brute_force() {
    let shapes: Vec<(&str, Vec<[Vec3; 3]>)> = vec![
        ("sphere", sphere(Vec3::ZERO, 0.5, 16, 32)),
        ("two boxes", {
            let mut t = boxed(Vec3::splat(-0.5), Vec3::splat(0.2), false);
            t.extend(boxed(Vec3::splat(-0.1), Vec3::splat(0.5), false));
            t
        }),
        ("open box", boxed(Vec3::splat(-0.4), Vec3::splat(0.4), true)),
    ];
    for (name, tris) in &shapes {
        let q = SkinQuery::new(tris);
        assert_eq!(q.len(), tris.len());
        for p in points(500, Vec3::splat(-1.0), Vec3::splat(1.0), 11) {
            let fast = q.winding(p);
            let exact = winding_brute(tris, p);
            assert!(
                (fast - exact).abs() < 0.05,
                "{name} at {p}: {fast} vs {exact}"
            );
            let (d, t) = q.nearest(p, f32::INFINITY).unwrap();
            let (db, tb) = nearest_brute(tris, p).unwrap();
            assert!(
                (d - db).abs() < 1e-6,
                "{name} at {p}: {d} ({t}) vs {db} ({tb})"
            );
        }
    }
}

#[test]
fn overlapping_boxes_count_once_and_measure_to_the_nearest_face() {
    let mut tris = boxed(Vec3::splat(-0.5), Vec3::splat(0.2), false);
    tris.extend(boxed(Vec3::splat(-0.1), Vec3::splat(0.5), false));
    let q = SkinQuery::new(&tris);
    // In both boxes: winding 2, inside; depth to the nearest face of either (x = 0.2 or -0.1).
    let p = Vec3::new(0.0, 0.05, 0.05);
    let hit = q.query(p);
    assert!((hit.winding - 2.0).abs() < 1e-3, "{hit:?}");
    assert!(hit.is_inside());
    assert!((hit.depth - 0.1).abs() < 1e-6, "{hit:?}");
    // In one box only.
    let hit = q.query(Vec3::new(-0.4, -0.4, -0.3));
    assert!(
        (hit.winding - 1.0).abs() < 1e-3 && (hit.depth - 0.1).abs() < 1e-6,
        "{hit:?}"
    );
    let hit = q.query(Vec3::new(0.4, 0.45, 0.4));
    assert!(
        hit.is_inside() && (hit.depth - 0.05).abs() < 1e-6,
        "{hit:?}"
    );
    // Outside both, in the notch between them.
    let hit = q.query(Vec3::new(0.35, -0.3, 0.0));
    assert!(!hit.is_inside() && hit.winding.abs() < 1e-3, "{hit:?}");
}

#[test]
fn an_open_box_is_inside_below_its_rim_and_outside_above() {
    let tris = boxed(Vec3::splat(-0.4), Vec3::splat(0.4), true);
    let q = SkinQuery::new(&tris);
    // Deep in the box the missing lid subtends a small solid angle: w well above ½.
    let low = q.query(Vec3::new(0.0, -0.3, 0.0));
    assert!(low.is_inside() && low.winding > 0.8, "{low:?}");
    assert!((low.depth - 0.1).abs() < 1e-6, "{low:?}");
    // Above the opening: outside.
    let high = q.query(Vec3::new(0.0, 0.6, 0.0));
    assert!(!high.is_inside(), "{high:?}");
    // Beside the box: outside.
    assert!(!q.query(Vec3::new(0.7, 0.0, 0.0)).is_inside());
}

/// A cape-like open sheet behind a closed box (a back): half a cylinder of radius 0.3 m about
/// the box, its normals outward. Near its concave side the sheet alone makes the winding number
/// pass ½, so cloth hanging between it and the back read as inside the body (the KayKit
/// Barbarian's hakama under its cape, 35 mm "deep"). Flagged as a sheet
/// (`drape::body::sheets`), it has no inside, and a point inside the box is as deep as the box's
/// nearest face, not the sheet.
#[test]
fn an_open_sheet_has_no_inside() {
    let mut positions: Vec<Vec3> = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    for t in boxed(Vec3::new(-0.1, -0.5, -0.1), Vec3::new(0.1, 0.5, 0.1), false) {
        let b = positions.len() as u32;
        positions.extend(t);
        indices.extend([b, b + 1, b + 2]);
    }
    let box_tris = indices.len() / 3;
    // The sheet: 24 × 10 quads over the half cylinder behind (−z) the box.
    let (segs, rows) = (24u32, 10u32);
    let b = positions.len() as u32;
    for i in 0..=segs {
        let a = std::f32::consts::PI * (1.0 + i as f32 / segs as f32);
        for j in 0..=rows {
            let y = -0.6 + 1.2 * j as f32 / rows as f32;
            positions.push(Vec3::new(0.3 * a.cos(), y, 0.3 * a.sin()));
        }
    }
    let at = |i: u32, j: u32| b + i * (rows + 1) + j;
    for i in 0..segs {
        for j in 0..rows {
            // Outward normals (away from the axis).
            indices.extend([at(i, j), at(i, j + 1), at(i + 1, j + 1)]);
            indices.extend([at(i, j), at(i + 1, j + 1), at(i + 1, j)]);
        }
    }
    let sheets = drape::body::sheets::mesh_sheets(&positions, &indices);
    assert!(sheets[..box_tris].iter().all(|&s| !s), "the box is closed");
    assert!(
        sheets[box_tris..].iter().all(|&s| s),
        "the half cylinder is a sheet"
    );
    let mut plain = SkinQuery::default();
    plain.rebuild_meshes([(&positions[..], &indices[..])]);
    let mut q = SkinQuery::default();
    q.rebuild_meshes_with_sheets([(&positions[..], &indices[..])], &sheets);
    // Between the back and the sheet, 5 mm in front of the sheet.
    let behind = Vec3::new(0.0, 0.0, -0.295);
    let before = plain.query(behind);
    assert!(before.is_inside(), "the sheet alone: {before:?}");
    let after = q.query(behind);
    assert!(
        !after.is_inside() && after.winding.abs() < 0.05,
        "{after:?}"
    );
    // Outside the sheet and beside the box: outside either way.
    assert!(!q.query(Vec3::new(0.0, 0.0, -0.4)).is_inside());
    assert!(!q.query(Vec3::new(0.2, 0.0, 0.0)).is_inside());
    // Inside the box, 2 cm from its back face: inside, 2 cm deep.
    let inside = q.query(Vec3::new(0.0, 0.0, -0.08));
    assert!(inside.is_inside(), "{inside:?}");
    assert!((inside.depth - 0.02).abs() < 1e-5, "{inside:?}");
    // The sheet is still a surface to the nearest-triangle query (naming the part nearest).
    let (d, t) = q.nearest(behind, f32::INFINITY).unwrap();
    assert!((t as usize) >= box_tris && d < 0.006, "{d} {t}");
}

/// On the dressed ninja: a free hakama vertex moved to the hips joint (inside the pelvis) is
/// found inside at its distance to the nearest skin triangle; one moved 1.5 m above the hips (above
/// the head) is not.
#[test]
fn a_cloth_vertex_placed_inside_the_body_is_found_at_its_depth() {
    use drape::garments::{GarmentKind, GarmentSpec};
    use drape::scene::{Scene, SceneConfig};
    let rig = drape::ninja::build().unwrap().rig;
    let config = SceneConfig {
        clip: Some("stance".into()),
        garments: [GarmentKind::Hakama, GarmentKind::Cape]
            .iter()
            .map(|&k| GarmentSpec::coarse(k, 3.0))
            .collect(),
        settle: 0.1,
        blend: 0.1,
        ..SceneConfig::default()
    };
    let mut scene = Scene::new(rig, config).unwrap();
    for _ in 0..6 {
        scene.step(1.0 / 60.0);
    }
    let hips = scene.player.hips().unwrap();
    let hip = scene.world_from_node()[hips].w_axis.truncate();
    let m = &scene.model;
    let free: Vec<usize> = m.garments[0]
        .particles
        .clone()
        .filter(|&i| !m.is_pinned(i))
        .collect();
    let (a, b) = (free[0], free[free.len() / 2]);
    let front = hip + Vec3::new(0.0, 1.5, 0.0);
    scene.state.x[a] = Vec3A::from(hip);
    scene.state.x[b] = Vec3A::from(front);
    let mut q = SkinQuery::default();
    let mut inside = Vec::new();
    garment_inside(&scene, &mut q, &mut inside);
    assert_eq!(inside.len(), scene.model.len());
    // The reference: every body triangle, brute force.
    let mut tris = Vec::new();
    for (mi, mesh) in scene.rig.meshes.iter().enumerate() {
        let p = scene.body_positions(mi);
        for t in mesh.indices.chunks_exact(3) {
            tris.push([p[t[0] as usize], p[t[1] as usize], p[t[2] as usize]]);
        }
    }
    assert_eq!(q.len(), tris.len());
    let (d, _) = nearest_brute(&tris, hip).unwrap();
    // The ninja's parts overlap at the hips (winding ≈ 3 there): the depth is the distance to the
    // nearest triangle of any part, not to the outer skin.
    assert!(inside[a].is_inside(), "{:?}", inside[a]);
    assert!(
        (inside[a].depth - d).abs() < 1e-5 && d > 0.0,
        "{:?} vs {d}",
        inside[a]
    );
    assert!((winding_brute(&tris, hip) - inside[a].winding).abs() < 0.05);
    assert!(
        !inside[b].is_inside() && inside[b].depth == 0.0,
        "{:?}",
        inside[b]
    );
    assert!(winding_brute(&tris, front).abs() < 0.5);
    // The ninja's arms and hands are recognised by their bone names.
    let arm = arm_triangles(&scene.rig);
    assert_eq!(arm.len(), tris.len());
    let share = arm.iter().filter(|&&a| a).count() as f32 / arm.len() as f32;
    // Hands (with fingers) are finely tessellated: about half the triangles.
    assert!(share > 0.05 && share < 0.8, "{share}");
}

#[test]
fn the_ninja_clips_end_where_they_start() {
    let rig = drape::ninja::build().unwrap().rig;
    let tol = Thresholds::default().loop_tolerance;
    for (c, clip) in rig.clips.iter().enumerate() {
        assert!(
            clip_loops(&rig, c, drape::anim::RootMotion::InPlace, tol),
            "{}",
            clip.name
        );
    }
}

/// `drape check` on a short clip with coarse garments: the table, the JSON and the exit status
/// agree; with `--summary` the tables and the verdict go to stderr and stdout holds the
/// Markdown table, one row per clip.
/// Runs `drape check ARGS --json FILE` (in a directory of its own named by `tag`): whether it
/// succeeded, its stdout and stderr, and the JSON it wrote.
fn check_cli(args: &[&std::ffi::OsStr], tag: &str) -> (bool, String, String, serde_json::Value) {
    let dir = std::env::temp_dir().join(format!("drape-check-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("check.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drape"))
        .arg("check")
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = std::fs::read(&json)
        .map(|b| serde_json::from_slice(&b).unwrap())
        .unwrap_or_else(|e| panic!("no JSON ({e}):\n{stdout}\n{stderr}"));
    let _ = std::fs::remove_dir_all(&dir);
    (out.status.success(), stdout, stderr, v)
}

#[test]
fn the_check_command_prints_a_verdict_and_writes_json() {
    let args = "--clip jab_cross --spacing 3 --quiet --summary --summary-header";
    let args: Vec<&std::ffi::OsStr> = args.split(' ').map(std::ffi::OsStr::new).collect();
    let (success, stdout, stderr, v) = check_cli(&args, "verdict");
    assert!(stderr.contains("clip jab_cross"), "{stdout}\n{stderr}");
    assert!(stderr.contains("verdict: "), "{stdout}\n{stderr}");
    let passed = v["passed"].as_bool().unwrap();
    assert_eq!(passed, success, "{stdout}\n{stderr}");
    assert_eq!(passed, stderr.contains("verdict: PASS"));
    // The summary: the header, its rule and one row, which says the same verdict.
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].starts_with("| body | clip | method |"), "{stdout}");
    assert!(lines[2].contains("| jab_cross | lbs |"), "{stdout}");
    assert_eq!(lines[0].matches('|').count(), lines[2].matches('|').count());
    assert!(
        lines[2].ends_with(if passed { "| pass |" } else { "| FAIL |" }),
        "{stdout}"
    );
    assert_eq!(v["model"], "mass_spring");
    let clip = &v["clips"][0];
    assert_eq!(clip["clip"], "jab_cross");
    assert_eq!(clip["loops"], true);
    assert_eq!(clip["frames"], 96);
    let garments = clip["garments"].as_array().unwrap();
    assert_eq!(garments.len(), 4);
    assert_eq!(clip["refused"].as_array().unwrap().len(), 0);
    for g in garments {
        assert!(g["worst_stretch"].as_f64().unwrap() > 0.9, "{g}");
        assert!(g["return_rms"].as_f64().unwrap().is_finite(), "{g}");
        assert!(g["held_rms"].as_f64().unwrap().is_finite(), "{g}");
    }
    // A bad option is refused with a message, before any simulation.
    check_refuses(&["--clip", "nope"], "no clip named 'nope'");
}

/// `drape check ARGS` fails, saying `message` on stderr.
fn check_refuses(args: &[&str], message: &str) {
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_drape"))
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains(message), "{stderr}");
}

/// `--model xpbd` checks the real-time model: its rows and verdict say so, as the JSON does, and
/// a model it does not know is refused before any simulation.
#[test]
fn the_check_runs_either_cloth_model() {
    let args = "--clip stance --spacing 3 --quiet --summary --model xpbd";
    let args: Vec<&std::ffi::OsStr> = args.split(' ').map(std::ffi::OsStr::new).collect();
    let (success, stdout, stderr, v) = check_cli(&args, "xpbd");
    assert_eq!(v["model"], "xpbd");
    assert!(stdout.contains("| stance | lbs, xpbd |"), "{stdout}");
    assert_eq!(success, v["passed"].as_bool().unwrap());
    assert!(stderr.contains("lbs skinning, xpbd model"), "{stderr}");
    check_refuses(
        &["--clip", "stance", "--model", "verlet"],
        "unknown cloth model 'verlet'",
    );
}

/// A garment the body cannot wear is left off (unless asked to wear it anyway), and the check
/// says so in its table, its summary row, its verdict and the JSON, and judges the garments that
/// were built: the long-haired
/// corpus body's ponytail swings through the shoulders where a cape is tied.
#[test]
fn the_check_names_a_garment_left_off() {
    let rig = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rigs/corpus/long_hair.glb");
    let mut args: Vec<&std::ffi::OsStr> = vec!["--rig".as_ref(), rig.as_os_str()];
    let rest = ["--clip", "guard", "--spacing", "3", "--quiet", "--summary"];
    args.extend(rest.map(std::ffi::OsStr::new));
    let (_, stdout, stderr, v) = check_cli(&args, "left-off");
    assert!(
        stderr.contains("  cape      | left off: garment 'cape' does not fit"),
        "{stderr}"
    );
    assert!(stderr.contains("\nleft off: garment 'cape'"), "{stderr}");
    assert!(stdout.trim_end().ends_with("left off) |"), "{stdout}");
    let clip = &v["clips"][0];
    assert_eq!(clip["refused"][0]["garment"], "cape");
    assert!(clip["refused"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("Hair"));
    let garments: Vec<&str> = clip["garments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["kind"].as_str().unwrap())
        .collect();
    assert_eq!(garments, ["hakama", "sash", "headband"]);
    // Asked to wear it anyway, the check measures the cape too and says why it does not fit.
    args.push("--wear-unfit".as_ref());
    let (_, _, stderr, v) = check_cli(&args, "wear-unfit");
    assert!(
        stderr.contains("  cape      | worn though it does not fit: garment 'cape'"),
        "{stderr}"
    );
    let clip = &v["clips"][0];
    assert_eq!(clip["refused"].as_array().unwrap().len(), 0);
    assert_eq!(clip["worn_unfit"][0]["garment"], "cape");
    assert_eq!(clip["garments"][0]["kind"], "cape");
}

/// `check_clip` on clip `c` of `rig` with a coarse cape and a short start-up; the report and the
/// number of progress calls (frames simulated).
fn check_coarse_cape(
    rig: &drape::Rig,
    c: usize,
    th: &Thresholds,
) -> (drape::check::ClipReport, u32) {
    use drape::garments::{GarmentKind, GarmentSpec};
    let config = drape::scene::SceneConfig {
        garments: vec![GarmentSpec::coarse(GarmentKind::Cape, 3.0)],
        settle: 0.2,
        blend: 0.2,
        ..Default::default()
    };
    let mut calls = 0;
    let r = drape::check::check_clip(rig, c, &config, th, &mut |_, _| calls += 1).unwrap();
    (r, calls)
}

/// A clip cut off mid-punch does not end where it starts: it is not played twice but its last
/// pose is held for 1.5 s, and each garment is compared with its drape on that pose (the same
/// garments settled into the clip's last frame by a start-up of their own and held as long).
#[test]
fn a_clip_that_does_not_loop_is_held_and_compared_with_its_drape_there() {
    use drape::check::ReturnKind;
    let mut rig = drape::ninja::build().unwrap().rig;
    let c = rig.clip("jab_cross").unwrap();
    let th = Thresholds::default();
    assert!(clip_loops(
        &rig,
        c,
        drape::anim::RootMotion::InPlace,
        th.loop_tolerance
    ));
    rig.clips[c].end = rig.clips[c].start + 0.5;
    assert!(!clip_loops(
        &rig,
        c,
        drape::anim::RootMotion::InPlace,
        th.loop_tolerance
    ));
    let (r, calls) = check_coarse_cape(&rig, c, &th);
    assert!(!r.loops);
    assert_eq!(r.frames, 30);
    // Start-up (0.4 s), the clip (0.5 s) and the hold (1.5 s) at 60 frames per second, then the
    // drape on the last pose: its start-up and hold.
    assert_eq!(calls, 24 + 30 + 90 + 24 + 90);
    let g = &r.garments[0];
    assert_eq!(g.return_kind, ReturnKind::Hold);
    assert!(
        g.return_rms.is_finite() && g.return_max >= g.return_rms,
        "{g:?}"
    );
    // A cape held still on a pose for 1.5 s is back in its drape there (1.7 / 5.2 cm).
    assert!(g.return_rms < 0.03 && g.return_max < 0.1, "{g:?}");
    assert!(g.above_sash.is_none());
    // The hold is its return: no second figure.
    assert!(g.held_rms.is_none() && g.held_max.is_none());
    assert_eq!(r.passed(), r.failures.is_empty());
}

/// A looping clip is played twice, and then its last pose (its first) is held for 1.5 s and
/// each garment compared with its drape at the clip's start: reported beside the loop's figure.
#[test]
fn a_looping_clip_is_also_held_after_its_second_pass() {
    use drape::check::ReturnKind;
    let rig = drape::ninja::build().unwrap().rig;
    let c = rig.clip("tpose").unwrap();
    let th = Thresholds::default();
    let (r, calls) = check_coarse_cape(&rig, c, &th);
    assert!(r.loops);
    let n = r.frames as u32;
    // Start-up (0.4 s), two passes and the hold (1.5 s) at 60 frames per second.
    assert_eq!(calls, 24 + 2 * n + 90);
    let g = &r.garments[0];
    assert_eq!(g.return_kind, ReturnKind::Loop);
    let (rms, max) = (g.held_rms.unwrap(), g.held_max.unwrap());
    assert!(rms.is_finite() && max >= rms, "{g:?}");
    // A cape on a character standing in its T-pose is back in its drape.
    assert!(rms < 0.02 && max < 0.06, "{g:?}");
}

/// `drape check --trials`: the cloth of every trial but the first starts moved by at most a
/// micrometre, pins not at all; a clip's trials are its rows' worst and pass only together,
/// and a count of trials out of range is refused before any simulation.
#[test]
fn trials_nudge_the_cloth_and_a_clip_passes_only_if_every_trial_does() {
    let rig = drape::ninja::build().unwrap().rig;
    let cfg = drape::scene::SceneConfig {
        clip: Some("stance".into()),
        garments: vec![drape::garments::GarmentSpec::coarse(
            drape::garments::GarmentKind::Cape,
            3.0,
        )],
        ..Default::default()
    };
    let built = drape::scene::Scene::new(rig.clone(), cfg.clone()).unwrap();
    for seed in [0u32, 1, 2] {
        let mut s = drape::scene::Scene::new(rig.clone(), cfg.clone()).unwrap();
        s.perturb_cloth(seed, drape::check::TRIAL_NUDGE);
        let (mut moved, mut most) = (0, 0.0f32);
        for i in 0..s.state.x.len() {
            let d = s.state.x[i] - built.state.x[i];
            assert_eq!(s.state.x_prev[i] - built.state.x_prev[i], d, "no velocity");
            if s.state.inv_mass[i] <= 0.0 {
                assert_eq!(d.length(), 0.0, "pin {i} moved");
            } else if d.length() > 0.0 {
                moved += 1;
            }
            most = most.max(d.abs().max_element());
        }
        // f32 rounding of positions near 1 m adds up to 6e-8.
        assert!(most <= drape::check::TRIAL_NUDGE + 1e-7, "{most}");
        if seed == 0 {
            assert_eq!(moved, 0);
        } else {
            assert!(moved > s.state.x.len() / 2, "seed {seed}: {moved} moved");
        }
    }

    let args = "--clip stance --spacing 3 --quiet --summary --trials 2";
    let args: Vec<&std::ffi::OsStr> = args.split(' ').map(std::ffi::OsStr::new).collect();
    let (success, stdout, stderr, v) = check_cli(&args, "trials");
    assert_eq!(v["trials"], 2);
    let clips = v["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 2);
    assert_eq!(
        (clips[0]["trial"].as_u64(), clips[1]["trial"].as_u64()),
        (Some(0), Some(1))
    );
    assert!(clips.iter().all(|c| c["clip"] == "stance"));
    let all_pass = clips
        .iter()
        .all(|c| c["failures"].as_array().unwrap().is_empty());
    assert_eq!(success, all_pass, "{stderr}");
    assert_eq!(v["passed"].as_bool().unwrap(), all_pass);
    // One row for the clip, whose verdict is every trial's.
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stderr.contains("clip stance, trial 1 (start moved"),
        "{stderr}"
    );
    assert!(
        stderr.contains(if all_pass {
            "verdict: PASS (1 clips × 2 trials"
        } else {
            "verdict: FAIL (1 of 1 clips × 2 trials"
        }),
        "{stderr}"
    );
    check_refuses(&["--clip", "stance", "--trials", "0"], "--trials");
}

/// `drape check SCENE` checks the scene a file describes (its clip, skinning and garments as the
/// file sets them), and the flags beside it override the file: `--clips-from` adds a Mixamo-style
/// clip-only FBX, `--clip`, `--method` and `--spacing` replace the file's. Bad combinations and
/// bad files are refused, naming the problem, before any simulation.
#[test]
fn the_check_reads_a_scene_file_and_the_flags_override_it() {
    use drape::asset::fbx::{to_fbx, FbxWriteOptions};
    let dir = std::env::temp_dir().join(format!("drape-scene-for-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("dressed.toml");
    std::fs::write(
        &scene,
        "rig = \"ninja\"\nclip = \"tpose\"\nskinning = \"dqs\"\nsettle = 0.2\nblend = 0.2\n\n\
         [[garment]]\nkind = \"hakama\"\nstyle = \"fitted\"\nspacing = 0.045\n\n\
         [[garment]]\nkind = \"sash\"\nspacing = 0.045\nfriction = 0.3\n",
    )
    .unwrap();
    let (success, stdout, stderr, v) = check_cli(
        &[scene.as_os_str(), "--quiet".as_ref(), "--summary".as_ref()],
        "scene",
    );
    assert_eq!(
        success,
        v["passed"].as_bool().unwrap(),
        "{stdout}\n{stderr}"
    );
    assert_eq!(v["scene"], scene.display().to_string());
    assert_eq!(v["method"], "dqs");
    assert_eq!(v["spacing"], 1.0);
    let clips = v["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 1, "the scene's clip alone");
    assert_eq!(clips[0]["clip"], "tpose");
    let kinds: Vec<&str> = clips[0]["garments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["hakama", "sash"]);
    assert!(stdout.contains("| tpose | dqs |"), "{stdout}");
    assert!(
        stderr.contains(&format!(", scene {})", scene.display())),
        "{stderr}"
    );
    let coarse_vertices = clips[0]["garments"][0]["vertices"].as_u64().unwrap();

    // A clip-only FBX (a Mixamo "without skin" download) beside the scene, and flags over it.
    let mut held = drape::ninja::build().unwrap().rig;
    held.meshes.clear();
    held.skins.clear();
    held.materials.clear();
    held.textures.clear();
    held.clips.retain(|c| c.name == "tpose");
    let fbx = dir.join("held.fbx");
    std::fs::write(&fbx, to_fbx(&held, &FbxWriteOptions::default()).unwrap()).unwrap();
    let args: Vec<&std::ffi::OsStr> = vec![
        scene.as_os_str(),
        "--clips-from".as_ref(),
        fbx.as_os_str(),
        "--clip".as_ref(),
        "held".as_ref(),
        "--method".as_ref(),
        "lbs".as_ref(),
        "--spacing".as_ref(),
        "1.5".as_ref(),
        "--quiet".as_ref(),
    ];
    let (_, stdout, stderr, v) = check_cli(&args, "scene-flags");
    assert_eq!(v["method"], "lbs", "{stdout}\n{stderr}");
    assert_eq!(v["spacing"], 1.5);
    assert_eq!(v["clips"][0]["clip"], "held");
    let hakama = &v["clips"][0]["garments"][0];
    assert_eq!(hakama["kind"], "hakama");
    assert!(
        hakama["vertices"].as_u64().unwrap() < coarse_vertices * 3 / 4,
        "1.5 × the file's spacing: {} against {coarse_vertices} vertices",
        hakama["vertices"]
    );

    // Refused before any simulation, saying why.
    let s = scene.to_str().unwrap();
    check_refuses(&[s, "--rig", "ninja"], "cannot be used with");
    check_refuses(&[s, "--hakama", "kilt"], "kilt");
    check_refuses(&[s, "--clip", "nope"], "no clip named 'nope'");
    check_refuses(&[s, "--spacing", "3"], "--spacing × garment[0].spacing");
    check_refuses(
        &[s, "--clips-from", dir.join("missing.fbx").to_str().unwrap()],
        "missing.fbx",
    );
    // A character file in the scene's place is the character to check (--rig).
    let robot = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rigs/corpus/robot.glb");
    check_refuses(
        &[robot.to_str().unwrap(), "--clip", "nope"],
        "robot.glb has no clip named 'nope'",
    );
    let caped = dir.join("caped.toml");
    std::fs::write(&caped, "[[garment]]\nkind = \"cape\"\n").unwrap();
    check_refuses(
        &[caped.to_str().unwrap(), "--hakama", "fitted"],
        "dressed without a hakama",
    );
    // Meshes taken off: a name that matches none, or every mesh, is refused, from the flags
    // or from the file.
    check_refuses(
        &[s, "--hide", "Nope"],
        "'Nope' names no mesh of built-in ninja",
    );
    check_refuses(&[s, "--hide", "nin*"], "would take every mesh off");
    let hiding = dir.join("hiding.toml");
    std::fs::write(&hiding, "hide = [\"Cape\"]\n[[garment]]\nkind = \"sash\"\n").unwrap();
    check_refuses(&[hiding.to_str().unwrap()], "'Cape' names no mesh");
    // On the two-mesh corpus robot the joints mesh comes off: the JSON names it, and the body
    // measured is the surface alone.
    let args: Vec<&std::ffi::OsStr> = vec![
        robot.as_os_str(),
        "--hide".as_ref(),
        "bot_joints".as_ref(),
        "--clip".as_ref(),
        "walk".as_ref(),
        "--spacing".as_ref(),
        "3".as_ref(),
        "--quiet".as_ref(),
    ];
    let (_, stdout, stderr, v) = check_cli(&args, "hide");
    assert_eq!(
        v["hidden"],
        serde_json::json!(["Bot_Joints/Bot_Joints#0"]),
        "{stdout}\n{stderr}"
    );
    assert_eq!(v["body_triangles"], 11544);
    let typo = dir.join("typo.toml");
    std::fs::write(&typo, "substep = 8\n").unwrap();
    check_refuses(&[typo.to_str().unwrap()], "typo.toml");
    check_refuses(&[typo.to_str().unwrap()], "did you mean 'substeps'");
    let _ = std::fs::remove_dir_all(&dir);
}

/// On a rig without Mixamo names the check says once (on stderr; its tables go to stdout) which
/// node it took for which humanoid role and how it found it, as `drape bake` does (CesiumMan:
/// found by the skeleton's shape).
#[test]
fn the_check_says_which_bone_it_took_for_which() {
    let rig = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/rigs/khronos/CesiumMan/CesiumMan.glb");
    if !rig.exists() {
        if std::env::var("DRAPE_REQUIRE_ALL").is_ok_and(|v| v == "1") {
            panic!("{} is required (DRAPE_REQUIRE_ALL=1)", rig.display());
        }
        eprintln!("SKIPPED: {} not available", rig.display());
        return;
    }
    let args: Vec<&std::ffi::OsStr> = vec![rig.as_os_str(), "--spacing".as_ref(), "3".as_ref()];
    let (_, stdout, stderr, _) = check_cli(&args, "bones");
    assert_eq!(
        stderr
            .matches("bones the garments were laid out from")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("Hips           <- \"Skeleton_torso_joint_1\""),
        "{stderr}"
    );
    assert!(stdout.contains("verdict: "), "{stdout}");
}

/// `drape render` in either build: with the `gpu` feature it is there; without it, it says why
/// it cannot render and how to get a build that can, whatever arguments it is given (it was
/// "unrecognized subcommand 'render'", with clap's tip of `scene`).
#[test]
fn render_says_what_a_build_without_the_gpu_lacks() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drape"))
        .args([
            "render",
            "--garments",
            "all",
            "--clip",
            "roundhouse_kick",
            "--help",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if cfg!(feature = "gpu") {
        assert!(out.status.success(), "{err}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("--garments"));
    } else {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("without the `gpu` feature") && err.contains("cargo build --release"),
            "{err}"
        );
    }
}

/// A hakama may end above the sash only where its drape on the same pose does (the body rises
/// above the sash there), and then by no more than 1 cm more; a hakama whose drape hangs below
/// the sash must end below it.
#[test]
fn the_sash_limit_follows_the_drape_only_where_the_body_rises_above_the_sash() {
    let th = Thresholds::default();
    assert_eq!(th.above_sash_limit(None), 0.0);
    assert_eq!(th.above_sash_limit(Some(-0.056)), 0.0);
    assert_eq!(th.above_sash_limit(Some(-0.02)), 0.0);
    assert!((th.above_sash_limit(Some(0.049)) - 0.059).abs() < 1e-6);
}

/// A looping clip whose garment fails the return one loop later says what the hold after the
/// second pass found (whether the cloth was still swinging when the clip ended, or does not
/// settle back); a clip judged by its hold has no such second figure to give.
#[test]
fn a_failed_loop_return_says_what_the_hold_found() {
    let rig = drape::ninja::build().unwrap().rig;
    let c = rig.clip("tpose").unwrap();
    // Limits no cloth can meet: the return fails both ways.
    let th = Thresholds {
        return_rms: 0.0,
        return_max: 0.0,
        ..Thresholds::default()
    };
    let (r, _) = check_coarse_cape(&rig, c, &th);
    let g = &r.garments[0];
    let f = g
        .failures
        .iter()
        .find(|f| f.contains("one loop later"))
        .unwrap();
    assert!(
        f.contains("with the pose then held 1.5 s") && f.contains("does not settle back"),
        "{f}"
    );
}
