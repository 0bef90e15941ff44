//! The hakama against issue 19.3 ("the hakama is the garment it is named after": divided
//! trousers, a seat pinned round the waist, a crotch seam below the wearer's crotch and one
//! tube per leg, open at the hem, so each leg is inside its own tube), and tools to look at it:
//! pictures of a dressed character drawn with the CPU rasteriser (no GPU), where it
//! over-stretches, and how much room the body's proxies leave between the legs.
//!
//! All ignored: the target test fails on today's half-skirts, and the others print. Why the
//! tubes are not in yet: on every body we dress (the built-in ninja and the three corpus
//! bodies) the two legs' proxies touch or overlap on the mid-line from the crotch to the
//! ankles at the bind pose, where the garments are laid out (`rest_shape_report`: the ninja
//! −3 mm, long_hair −1 to −2 mm, the soldier −1 to −6 cm; the robot leaves +1.0 to +1.6 cm, less
//! than two cloth layers at their clearance). An inner wall between the legs then starts
//! inside the body, which issue 5's checks refuse; a seam only where there is room fell to two
//! rows above the hem on all four, a closed skirt, which over-stretches in kicks (ninja coarse
//! front kick 112.2-114.4 % against the 112 % limit).

use drape::garments::{GarmentKind, GarmentSpec};
use drape::math::{Vec2, Vec3};
use drape::rig::Rig;
use drape::scene::{Scene, SceneConfig};

fn corpus_rig(name: &str) -> Rig {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("rigs/corpus")
        .join(format!("{name}.glb"));
    drape::asset::load_rig(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A scene dressed in the hakama alone at `factor` × its default spacing, not stepped: the
/// garment at rest.
fn hakama_at_rest(rig: Rig, factor: f32) -> Scene {
    let cfg = SceneConfig {
        garments: vec![GarmentSpec::coarse(GarmentKind::Hakama, factor)],
        ..SceneConfig::default()
    };
    Scene::new(rig, cfg).expect("the hakama dresses")
}

/// The mesh's boundary as closed loops of vertex indices.
fn boundary_loops(triangles: &[[u32; 3]]) -> Vec<Vec<u32>> {
    use std::collections::HashMap;
    let mut count: HashMap<(u32, u32), i32> = HashMap::new();
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *count.entry((a.min(b), a.max(b))).or_default() += 1;
        }
    }
    let mut next: HashMap<u32, Vec<u32>> = HashMap::new();
    for (&(a, b), &c) in &count {
        assert!(c <= 2, "edge {a}-{b} is shared by {c} triangles");
        if c == 1 {
            next.entry(a).or_default().push(b);
            next.entry(b).or_default().push(a);
        }
    }
    let mut seen = std::collections::HashSet::new();
    let mut loops = Vec::new();
    let mut starts: Vec<u32> = next.keys().copied().collect();
    starts.sort_unstable();
    for s in starts {
        if !seen.insert(s) {
            continue;
        }
        let mut lp = vec![s];
        let mut cur = s;
        loop {
            let Some(&n) = next[&cur].iter().find(|&&n| !seen.contains(&n)) else {
                break;
            };
            seen.insert(n);
            lp.push(n);
            cur = n;
        }
        loops.push(lp);
    }
    loops
}

/// How many times the closed polygon `poly` (horizontal projection) winds around `p`.
fn winding_xz(poly: &[Vec3], p: Vec3) -> i32 {
    let mut angle = 0.0f32;
    for k in 0..poly.len() {
        let a = Vec2::new(poly[k].x - p.x, poly[k].z - p.z);
        let b = Vec2::new(
            poly[(k + 1) % poly.len()].x - p.x,
            poly[(k + 1) % poly.len()].z - p.z,
        );
        angle += a.perp_dot(b).atan2(a.dot(b));
    }
    (angle / std::f32::consts::TAU).round() as i32
}

fn joint(rig: &Rig, base: &str) -> Vec3 {
    let i = rig
        .skeleton
        .find(&format!("mixamorig:{base}"))
        .unwrap_or_else(|| panic!("no mixamorig:{base}"));
    rig.skeleton.rest_world()[i].transform_point3(Vec3::ZERO)
}

/// On every corpus body and the ninja, at the coarse tests' spacing and the default one: the
/// hakama's boundary is three loops, the waist (all pinned) and two hems; each hem goes round
/// its own leg (the ankle's vertical) once and not round the other; and the crotch seam (the
/// lowest unpinned vertices on the mid-plane that both tubes share) is below the body.
#[test]
#[ignore = "issue 19.3's target: fails until the hakama is divided trousers"]
fn hakama_is_divided_trousers() {
    let rigs: Vec<(&str, Rig)> = vec![
        ("ninja", drape::ninja::build().unwrap().rig),
        ("robot", corpus_rig("robot")),
        ("soldier", corpus_rig("soldier")),
        ("long_hair", corpus_rig("long_hair")),
    ];
    for (name, rig) in rigs {
        let knees = [joint(&rig, "LeftLeg"), joint(&rig, "RightLeg")];
        let hips = joint(&rig, "Hips");
        for factor in [3.0, 1.0] {
            let scene = hakama_at_rest(rig.clone(), factor);
            let f = scene.garment_frame(0);
            let pinned = |i: u32| scene.model.is_pinned(i as usize);
            let loops = boundary_loops(&f.triangles);
            assert_eq!(
                loops.len(),
                3,
                "{name} ×{factor}: {} boundary loops, not waist + two hems",
                loops.len()
            );
            let waist: Vec<&Vec<u32>> = loops
                .iter()
                .filter(|l| l.iter().all(|&i| pinned(i)))
                .collect();
            assert_eq!(waist.len(), 1, "{name} ×{factor}: no all-pinned waist loop");
            let hems: Vec<Vec<Vec3>> = loops
                .iter()
                .filter(|l| l.iter().all(|&i| !pinned(i)))
                .map(|l| l.iter().map(|&i| f.positions[i as usize]).collect())
                .collect();
            assert_eq!(hems.len(), 2, "{name} ×{factor}: hems");
            for hem in &hems {
                let y = hem.iter().map(|p| p.y).sum::<f32>() / hem.len() as f32;
                let around: Vec<i32> = knees
                    .iter()
                    .map(|k| winding_xz(hem, Vec3::new(k.x, y, k.z)).abs())
                    .collect();
                assert!(
                    around == [1, 0] || around == [0, 1],
                    "{name} ×{factor}: a hem goes round the knees' verticals {around:?} times"
                );
                assert!(
                    y < knees[0].y.max(knees[1].y),
                    "{name}: hem above the knees"
                );
            }
            // The crotch seam: vertices of both tubes on the mid-plane (x of the hips), lowest.
            let seam_y = f
                .positions
                .iter()
                .filter(|p| (p.x - hips.x).abs() < 1e-4 && (p.z - hips.z).abs() < 0.05)
                .map(|p| p.y)
                .fold(f32::INFINITY, f32::min);
            assert!(
                seam_y.is_finite(),
                "{name}: no seam vertex on the mid-plane"
            );
            let crotch = drape::body::union_sdf(
                Vec3::new(hips.x, seam_y, hips.z),
                &scene.proxy_frame,
                &scene.proxies.capsules,
            );
            assert!(
                crotch > 0.0,
                "{name} ×{factor}: the crotch seam at {seam_y} m is inside the body ({crotch})"
            );
            println!(
                "{name} ×{factor}: {} particles, seam {:.3} m ({:.3} below the hips), hems at {:.3} m",
                f.positions.len(),
                seam_y,
                hips.y - seam_y,
                hems[0].iter().map(|p| p.y).fold(f32::INFINITY, f32::min)
            );
        }
    }
}

/// The dressed scene the hand-run diagnostics below look at, from `DRAPE_RIG` (`ninja` or a
/// .glb), `DRAPE_CLIP`, `DRAPE_SPACING` (× default), `DRAPE_GARMENTS` (`all` or a comma list) and
/// `DRAPE_METHOD`: the rig, the clip's name and the scene.
fn diagnostic_scene() -> (drape::Rig, String, Scene) {
    let env = |k: &str| std::env::var(k).ok().filter(|s| !s.is_empty());
    let rig = match env("DRAPE_RIG").as_deref() {
        None | Some("ninja") => drape::ninja::build().unwrap().rig,
        Some(p) => drape::asset::load_rig(std::path::Path::new(p)).unwrap(),
    };
    let clip = env("DRAPE_CLIP").unwrap_or_else(|| rig.clips[0].name.clone());
    let factor: f32 = env("DRAPE_SPACING").map_or(1.0, |s| s.parse().unwrap());
    let kinds: Vec<GarmentKind> = match env("DRAPE_GARMENTS").as_deref() {
        None | Some("all") => GarmentKind::ALL.to_vec(),
        Some(l) => l.split(',').map(|k| k.parse().unwrap()).collect(),
    };
    let cfg = SceneConfig {
        clip: Some(clip.clone()),
        garments: kinds
            .iter()
            .map(|&k| GarmentSpec::coarse(k, factor))
            .collect(),
        method: env("DRAPE_METHOD").map_or(drape::skin::SkinMethod::Lbs, |m| m.parse().unwrap()),
        ..SceneConfig::default()
    };
    let scene = Scene::new(rig.clone(), cfg).unwrap();
    (rig, clip, scene)
}

/// Pictures of a dressed character (no GPU): `DRAPE_RIG` (`ninja` or a .glb), `DRAPE_CLIP`,
/// `DRAPE_FRAMES` (comma-separated frame indices counted from the clip's first simulated
/// frame; default 0 and every quarter), `DRAPE_SPACING` (× default, default 1),
/// `DRAPE_GARMENTS` (`all` or a comma list), `DRAPE_METHOD`, `DRAPE_OUT` (PNG path,
/// default /tmp/drape_hakama.png). Each frame from the front and from the side, garments in
/// colour over the grey body. Run by hand:
/// `DRAPE_RIG=rigs/corpus/robot.glb DRAPE_CLIP=walk cargo test --no-default-features --test
/// hakama picture -- --ignored --nocapture`.
#[test]
#[ignore = "draws pictures; run by hand"]
fn picture() {
    use drape::raster::{ortho, Canvas, Shading};
    let env = |k: &str| std::env::var(k).ok().filter(|s| !s.is_empty());
    let (rig, clip, mut scene) = diagnostic_scene();
    let dt = scene.config.sim.frame_dt;
    let n = (rig.clips[rig.clip(&clip).unwrap()].duration() / dt).round() as usize;
    let frames: Vec<usize> = env("DRAPE_FRAMES").map_or_else(
        || (0..=4).map(|k| k * n / 4).collect(),
        |s| s.split(',').map(|k| k.trim().parse().unwrap()).collect(),
    );
    let startup = (scene.startup_seconds() / dt).ceil() as usize;
    let (tw, th) = (300u32, 390u32);
    let mut sheet = Canvas::new(tw * 2 * frames.len() as u32, th + 24, [40, 40, 44]);
    sheet.text(
        6,
        4,
        &format!("{clip} ({})", scene.config.method),
        2,
        [235, 235, 225],
    );
    let colours = [
        Vec3::new(0.55, 0.08, 0.06),
        Vec3::new(0.05, 0.07, 0.25),
        Vec3::new(0.75, 0.6, 0.1),
        Vec3::new(0.85, 0.85, 0.85),
    ];
    let hips = rig.skeleton.find("mixamorig:Hips").unwrap_or(0);
    let mut done = 0;
    let mut sorted = frames.clone();
    sorted.sort_unstable();
    for (col, &fr) in frames.iter().enumerate() {
        while done < startup + fr + 1 {
            scene.step(dt);
            done += 1;
        }
        // Body extent for the framing.
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for m in 0..rig.meshes.len() {
            for p in scene.body_positions(m) {
                lo = lo.min(*p);
                hi = hi.max(*p);
            }
        }
        let half_h = 0.55 * (hi.y - lo.y);
        let centre = scene.world_from_node()[hips].transform_point3(Vec3::ZERO);
        let centre = Vec3::new(centre.x, 0.5 * (hi.y + lo.y), centre.z);
        for (v, look) in [Vec3::NEG_Z, Vec3::NEG_X].into_iter().enumerate() {
            let mut c = Canvas::new(tw, th, [214, 210, 200]);
            let view = ortho(
                centre,
                look,
                Vec3::Y,
                half_h * tw as f32 / th as f32,
                half_h,
                10.0 * half_h,
            );
            let shading = Shading {
                light_dir: Vec3::new(0.5, 0.9, 0.7),
                ..Default::default()
            };
            for m in 0..rig.meshes.len() {
                let mesh = &rig.meshes[m];
                c.draw_mesh(
                    &view,
                    scene.body_positions(m),
                    scene.body_normals(m),
                    &[],
                    &mesh.indices,
                    None,
                    &shading,
                );
            }
            for g in 0..scene.garments.len() {
                let f = scene.garment_frame(g);
                let idx: Vec<u32> = f.triangles.iter().flatten().copied().collect();
                let k = GarmentKind::ALL
                    .iter()
                    .position(|&k| k == scene.garments[g].kind)
                    .unwrap_or(0);
                c.draw_mesh(
                    &view,
                    &f.positions,
                    &f.normals,
                    &[],
                    &idx,
                    None,
                    &Shading {
                        base_color: colours[k],
                        ..shading
                    },
                );
            }
            let x = (col * 2 + v) as u32 * tw;
            sheet.blit(&c, x, 24);
            if v == 0 {
                let t = fr as f32 * dt;
                sheet.text(x as i32 + 4, 28, &format!("{t:.2}"), 2, [60, 60, 60]);
            }
        }
    }
    let out = env("DRAPE_OUT").unwrap_or_else(|| "/tmp/drape_hakama.png".into());
    std::fs::write(&out, sheet.to_png().unwrap()).unwrap();
    println!("wrote {out}");
}

/// Diagnostic: where the hakama's worst spring is on each frame past the Provot limit + 2 %
/// (`DRAPE_RIG`, `DRAPE_CLIP`, `DRAPE_SPACING`, `DRAPE_METHOD`, `DRAPE_GARMENTS` as for
/// [`picture`]): its ends' rest and current positions in the hips' frame, pinned or not, and
/// their distance to the body proxies. Run by hand with `--ignored --nocapture`.
#[test]
#[ignore = "diagnostic print; run by hand"]
fn stretch_report() {
    let (rig, clip, mut scene) = diagnostic_scene();
    let dt = scene.config.sim.frame_dt;
    let n = (rig.clips[rig.clip(&clip).unwrap()].duration() / dt).round() as usize;
    let startup = (scene.startup_seconds() / dt).ceil() as usize;
    let hips = rig.skeleton.find("mixamorig:Hips").unwrap_or(0);
    let rest_hips = rig.skeleton.rest_world()[hips].transform_point3(Vec3::ZERO);
    for f in 0..startup + n {
        scene.step(dt);
        let m = &scene.model;
        let Some((e, r)) = m.worst_limit_spring(&scene.state.x) else {
            continue;
        };
        if r <= 1.12 {
            continue;
        }
        let to_hips = scene.world_from_node()[hips].inverse();
        let end = |i: u32| {
            let i = i as usize;
            let p: Vec3 = scene.state.x[i].into();
            let d = drape::body::union_sdf(p, &scene.proxy_frame, &scene.proxies.capsules);
            format!(
                "{}{} rest {:+.3?} now {:+.3?} sdf {:+.1} mm",
                m.garments[m.garment_of[i] as usize].name,
                if m.is_pinned(i) { " (pin)" } else { "" },
                Vec3::from(m.rest[i]) - rest_hips,
                to_hips.transform_point3(p),
                d * 1e3
            )
        };
        println!(
            "frame {f} ({}): {:.1} %\n  {}\n  {}",
            if f < startup { "start-up" } else { "clip" },
            100.0 * r,
            end(m.limits.a[e]),
            end(m.limits.b[e])
        );
    }
}

/// Diagnostic: the hakama's longest edges at rest at `DRAPE_SPACING` × default (`DRAPE_RIG`:
/// `ninja` or a .glb), and the room the proxies leave between the legs: the signed distance to
/// the proxy union on the hips' vertical and 4 cm in front of and behind it, every 5 cm (× the
/// body scale) down from the hips.
#[test]
#[ignore = "diagnostic print; run by hand"]
fn rest_shape_report() {
    let factor: f32 = std::env::var("DRAPE_SPACING")
        .ok()
        .map_or(3.0, |s| s.parse().unwrap());
    let rig = match std::env::var("DRAPE_RIG").ok().as_deref() {
        None | Some("ninja") => drape::ninja::build().unwrap().rig,
        Some(p) => drape::asset::load_rig(std::path::Path::new(p)).unwrap(),
    };
    let scene = hakama_at_rest(rig, factor);
    let f = scene.garment_frame(0);
    let mut e: Vec<(f32, u32, u32)> = f
        .triangles
        .iter()
        .flat_map(|t| (0..3).map(move |k| (t[k], t[(k + 1) % 3])))
        .map(|(a, b)| {
            (
                f.positions[a as usize].distance(f.positions[b as usize]),
                a,
                b,
            )
        })
        .collect();
    e.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (d, a, b) in e.iter().take(12) {
        println!(
            "{d:.3} m: {a} {:.3?} - {b} {:.3?}",
            f.positions[*a as usize], f.positions[*b as usize]
        );
    }
    println!("{} particles", f.positions.len());
    let hips = joint(&scene.rig, "Hips");
    for k in 0..20 {
        let y = hips.y - 0.05 * scene.body_scale * k as f32;
        for dz in [-0.04f32, 0.0, 0.04] {
            let d = drape::body::union_sdf(
                Vec3::new(hips.x, y, hips.z + dz),
                &scene.proxy_frame,
                &scene.proxies.capsules,
            );
            print!("  y {y:.2} dz {dz:+.2}: {d:+.3}");
        }
        println!();
    }
}
