//! The hakama against issue 19.3 ("the hakama is the garment it is named after": divided
//! trousers, a seat pinned round the waist, a crotch seam below the wearer's crotch and one
//! tube per leg, open at the hem, so each leg is inside its own tube), and tools to look at it:
//! pictures of a dressed character drawn with the CPU rasteriser (no GPU), where it
//! over-stretches, and how much room the body's proxies leave between the legs.
//!
//! The hakama is cut as divided trousers with `style = "divided"` (`HakamaStyle::Divided`):
//! laid out, and settled, in a layout pose with the thighs turned outward
//! (`drape::garments::layout`: the least whole degree up to 20° that leaves the two tubes'
//! inner walls room on the mid-line; at the bind pose every body we dress leaves none, see
//! `rest_shape_report`: the ninja −3 mm, long_hair −1 to −2 mm, the soldier −1 to −6 cm, the
//! robot +1.0 to +1.6 cm). The default stays the two half-skirts: the divided cut does not yet
//! pass issue 5's per-frame checks on the corpus (`cut_coarse_report`). The structure
//! test runs at the coarse tests' spacing; the others are ignored and print.

#[path = "support/dressed.rs"]
mod dressed;
#[path = "support/tools.rs"]
mod tools;

use drape::garments::{GarmentKind, GarmentSpec, HakamaStyle};
use drape::math::{Vec2, Vec3};
use drape::rig::Rig;
use drape::scene::{Scene, SceneConfig};

fn corpus_rig(name: &str) -> Rig {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("rigs/corpus")
        .join(format!("{name}.glb"));
    drape::asset::load_rig(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The ninja and the three corpus bodies, by name.
fn four_bodies() -> Vec<(&'static str, Rig)> {
    vec![
        ("ninja", drape::ninja::build().unwrap().rig),
        ("robot", corpus_rig("robot")),
        ("soldier", corpus_rig("soldier")),
        ("long_hair", corpus_rig("long_hair")),
    ]
}

/// A scene dressed in the hakama alone at `factor` × its default spacing, not stepped: the
/// garment at rest.
fn hakama_at_rest(rig: Rig, factor: f32) -> Scene {
    let cfg = SceneConfig {
        garments: vec![divided(GarmentSpec::coarse(GarmentKind::Hakama, factor))],
        ..SceneConfig::default()
    };
    Scene::new(rig, cfg).expect("the hakama dresses")
}

/// `spec` cut as divided trousers if it is a hakama.
fn divided(spec: GarmentSpec) -> GarmentSpec {
    GarmentSpec {
        style: HakamaStyle::Divided,
        ..spec
    }
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
        while let Some(&n) = next[&cur].iter().find(|&&n| !seen.contains(&n)) {
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

/// World position of the Mixamo bone `base` in the scene's current pose (before the first
/// step: the layout pose the garments were laid out in).
fn joint_now(scene: &Scene, base: &str) -> Vec3 {
    let i = scene
        .rig
        .skeleton
        .find(&format!("mixamorig:{base}"))
        .unwrap_or_else(|| panic!("no mixamorig:{base}"));
    scene.world_from_node()[i].transform_point3(Vec3::ZERO)
}

/// On every corpus body and the ninja, the divided cut at the coarse tests' spacing (and the
/// default one with `DRAPE_DEFAULT_SPACING`), laid out in the layout pose: the hakama's
/// boundary is three loops, the waist (all pinned) and two hems; each hem goes round its own
/// leg (the knee's vertical) once and not round the other; the crotch seam (the lowest
/// unpinned vertices on the mid-plane that both tubes share) is below the body; and the
/// legs' proxies leave room on the mid-line from the seam to the hem.
#[test]
fn hakama_is_divided_trousers() {
    for (name, rig) in four_bodies() {
        let hips = joint(&rig, "Hips");
        // The default spacing too with `DRAPE_DEFAULT_SPACING=1` (slower).
        let factors: &[f32] = if std::env::var_os("DRAPE_DEFAULT_SPACING").is_some() {
            &[3.0, 1.0]
        } else {
            &[3.0]
        };
        for &factor in factors {
            let scene = hakama_at_rest(rig.clone(), factor);
            // Laid out with the legs spread (`drape::garments::layout`).
            let knees = [joint_now(&scene, "LeftLeg"), joint_now(&scene, "RightLeg")];
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
            // How far the layout pose turned the thighs out, and the room it leaves between
            // the legs on the mid-line from the seam to the hem.
            let down = |k: &str, l: &str| (joint_now(&scene, l) - joint_now(&scene, k)).normalize();
            let bind = |k: &str, l: &str| (joint(&scene.rig, l) - joint(&scene.rig, k)).normalize();
            let spread = [("LeftUpLeg", "LeftLeg"), ("RightUpLeg", "RightLeg")]
                .map(|(k, l)| down(k, l).angle_between(bind(k, l)).to_degrees());
            let hem_y = hems[0].iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
            let room = (0..=20)
                .map(|k| seam_y + (hem_y - seam_y) * k as f32 / 20.0)
                .map(|y| {
                    drape::body::union_sdf(
                        Vec3::new(hips.x, y, hips.z),
                        &scene.proxy_frame,
                        &scene.proxies.capsules,
                    )
                })
                .fold(f32::INFINITY, f32::min);
            assert!(
                room > 0.0,
                "{name} ×{factor}: the legs' proxies cross the mid-line below the seam ({room})"
            );
            println!(
                "{name} ×{factor}: {} particles, seam {:.3} m ({:.3} below the hips, knees at \
                 {:.3}), hems at {hem_y:.3} m; thighs {:.1}° / {:.1}° out from the bind \
                 pose, room on the mid-line below the seam {:.1} mm",
                f.positions.len(),
                seam_y,
                hips.y - seam_y,
                knees[0].y,
                spread[0],
                spread[1],
                room * 1e3
            );
        }
    }
}

/// The sewn cut (`style = "sewn"`), on every corpus body and the ninja at the coarse tests'
/// spacing: the two half-skirts are one piece of cloth, sewn together at the front and at the
/// back below the waist and open between the legs. Its boundary is two loops: the waist (all pinned) and one
/// opening that runs down each half's front and back edges from where the seams end to the hem
/// and round both hems. The seams end below the waist, and the opening reaches above the knees
/// at the front and at the back, so each leg goes down its own side.
/// (Open all the way up, as the default cut is, a kicking leg leaves its half-skirt through the
/// front: docs/CHECK.md, "The half-skirts sewn at the front and back".)
#[test]
fn the_sewn_cut_joins_the_half_skirts_at_the_front_and_back_and_is_open_between_the_legs() {
    for (name, rig) in four_bodies() {
        let hips = joint(&rig, "Hips");
        let knee_y = 0.5 * (joint(&rig, "LeftLeg").y + joint(&rig, "RightLeg").y);
        // The body's forward, as the garments take it: its left (hip joint to hip joint) × up.
        let left = (joint(&rig, "LeftUpLeg") - joint(&rig, "RightUpLeg"))
            .reject_from(Vec3::Y)
            .normalize();
        let forward = left.cross(Vec3::Y);
        let cfg = SceneConfig {
            garments: vec![GarmentSpec {
                style: HakamaStyle::Sewn,
                ..GarmentSpec::coarse(GarmentKind::Hakama, 3.0)
            }],
            ..SceneConfig::default()
        };
        let scene = Scene::new(rig, cfg).expect("the hakama dresses");
        // The scene runs the strain limit harder for it.
        assert!(
            scene.config.sim.provot_max_iterations >= 32 && scene.config.sim.contact_rounds >= 8,
            "{name}: the sewn hakama's scene runs {} passes and {} rounds",
            scene.config.sim.provot_max_iterations,
            scene.config.sim.contact_rounds
        );
        let f = scene.garment_frame(0);
        let pinned = |i: u32| scene.model.is_pinned(i as usize);
        // One piece: every vertex reached from vertex 0 through the triangles.
        let n = f.positions.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        for t in &f.triangles {
            for k in 1..3 {
                let (a, b) = (
                    root(&mut parent, t[0] as usize),
                    root(&mut parent, t[k] as usize),
                );
                parent[a] = b;
            }
        }
        let r0 = root(&mut parent, 0);
        assert!(
            (0..n).all(|i| root(&mut parent, i) == r0),
            "{name}: the two half-skirts are not one piece"
        );
        let loops = boundary_loops(&f.triangles);
        assert_eq!(
            loops.len(),
            2,
            "{name}: {} boundary loops, not the waist and the opening",
            loops.len()
        );
        let waist = loops
            .iter()
            .find(|l| l.iter().all(|&i| pinned(i)))
            .unwrap_or_else(|| panic!("{name}: no all-pinned waist loop"));
        let waist_low = waist
            .iter()
            .map(|&i| f.positions[i as usize].y)
            .fold(f32::INFINITY, f32::min);
        let opening: Vec<Vec3> = loops
            .iter()
            .find(|l| l.iter().all(|&i| !pinned(i)))
            .unwrap_or_else(|| panic!("{name}: no opening"))
            .iter()
            .map(|&i| f.positions[i as usize])
            .collect();
        // The opening's top at the front and at the back, near the mid-plane.
        for (side, sign) in [("front", 1.0f32), ("back", -1.0)] {
            let top = opening
                .iter()
                .filter(|p| (**p - hips).dot(forward) * sign > 0.0)
                .filter(|p| (**p - hips).dot(left).abs() < 0.05)
                .map(|p| p.y)
                .fold(f32::NEG_INFINITY, f32::max);
            assert!(top.is_finite(), "{name}: no opening at the {side}");
            assert!(
                top < waist_low - 0.02,
                "{name}: not sewn at the {side}: the opening reaches {top:.3} m, the waist {waist_low:.3} m"
            );
            assert!(
                top > knee_y,
                "{name}: the {side} opening ends at {top:.3} m, below the knees ({knee_y:.3} m)"
            );
        }
    }
}

/// Issue 19 point 2 with the fitted cut (`style = "fitted"`): the hands of arms hanging by the
/// hips rest outside the cloth, so a jump's arm swing (back in the crouch, forward and up at the
/// take-off) leaves the skirts down. The robot and the long-haired body play the corpus jump
/// dressed in every garment at twice the default spacing, as `drape check --spacing 2 --hakama
/// fitted` does: the hakama rises little above its first frame, nothing of it hangs from the
/// arms at the end, and it ends within issue 19's limits of its drape one loop earlier. With the
/// default cut, whose hanging hands sit inside the flare, the swing throws the robot's skirts
/// over its shoulders (LBS / DQS: lifted 64.3 / 63.1 cm, 13 / 54 vertices left hanging from the
/// arms, 20.1 / 44.3 and 31.3 / 64.8 cm from the drape) and leaves 28–29 of the long-haired
/// body's hanging from its hands (18.1 / 32.4 and 13.7 / 35.3 cm); the fitted cut lifts them
/// 0.1 to 9.2 cm, leaves none hanging, and ends at most 2.7 / 10.0 cm from the drape (LBS and
/// DQS, and the same at 1.8 and 2.2 times the spacing).
#[test]
fn the_fitted_cut_keeps_the_skirts_down_through_a_jumps_arm_swing() {
    use drape::check::Thresholds;
    for body in ["robot", "long_hair"] {
        let rig = corpus_rig(body);
        let clip = rig.clip("jump").expect("the corpus jump");
        let config = SceneConfig {
            garments: GarmentKind::ALL
                .iter()
                .map(|&k| GarmentSpec {
                    style: HakamaStyle::Fitted,
                    ..GarmentSpec::coarse(k, 2.0)
                })
                .collect(),
            ..SceneConfig::default()
        };
        let th = Thresholds::default();
        let r = drape::check::check_clip(&rig, clip, &config, &th, &mut |_, _| {})
            .unwrap_or_else(|e| panic!("{body}: {e}"));
        let h = r
            .garments
            .iter()
            .find(|g| g.kind == "hakama")
            .unwrap_or_else(|| panic!("{body}: no hakama in {r:?}"));
        println!(
            "{body}: lift {:.1} cm, hanging {}, return {:.1} / {:.1} cm",
            h.lift * 100.0,
            h.hanging,
            h.return_rms * 100.0,
            h.return_max * 100.0
        );
        assert!(h.lift < 0.15, "{body}: the skirts were thrown up: {h:?}");
        assert_eq!(h.hanging, 0, "{body}: cloth hangs from the arms: {h:?}");
        assert!(
            h.return_rms <= th.return_rms && h.return_max <= th.return_max,
            "{body}: the hakama did not return to its drape: {h:?}"
        );
    }
}

/// The dressed scene the hand-run diagnostics below look at, from `DRAPE_RIG` (`ninja` or a
/// .glb), `DRAPE_CLIP`, `DRAPE_SPACING` (× default), `DRAPE_GARMENTS` (`all` or a comma list),
/// `DRAPE_HAKAMA` (the hakama's style; divided unless set), `DRAPE_SETTLE`, `DRAPE_BLEND` (s),
/// `DRAPE_METHOD` and `DRAPE_HIDE` (meshes taken off, comma-separated, as `--hide`): the rig,
/// the clip's name and the scene.
fn diagnostic_scene() -> (drape::Rig, String, Scene) {
    let env = |k: &str| std::env::var(k).ok().filter(|s| !s.is_empty());
    let mut rig = match env("DRAPE_RIG").as_deref() {
        None | Some("ninja") => drape::ninja::build().unwrap().rig,
        Some(p) => drape::asset::load_rig(std::path::Path::new(p)).unwrap(),
    };
    if let Some(h) = env("DRAPE_HIDE") {
        let names: Vec<String> = h.split(',').map(String::from).collect();
        rig.hide_meshes(&names).unwrap();
    }
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
            .map(|&k| {
                let s = GarmentSpec::coarse(k, factor);
                // `DRAPE_HAKAMA=half_skirts` for the default cut; divided otherwise.
                match env("DRAPE_HAKAMA") {
                    Some(st) => GarmentSpec {
                        style: st.parse().unwrap(),
                        ..s
                    },
                    None => divided(s),
                }
            })
            .collect(),
        method: env("DRAPE_METHOD").map_or(drape::skin::SkinMethod::Lbs, |m| m.parse().unwrap()),
        // The coarse tests' start-up is `DRAPE_SETTLE=0.2 DRAPE_BLEND=0.3`.
        settle: env("DRAPE_SETTLE").map_or(0.5, |s| s.parse().unwrap()),
        blend: env("DRAPE_BLEND").map_or(0.5, |s| s.parse().unwrap()),
        ..SceneConfig::default()
    };
    let scene = Scene::new(rig.clone(), cfg).unwrap();
    (rig, clip, scene)
}

/// Pictures of a dressed character (no GPU): `DRAPE_RIG` (`ninja` or a .glb), `DRAPE_CLIP`,
/// `DRAPE_FRAMES` (comma-separated frame indices counted from the clip's first simulated
/// frame; default 0 and every quarter), `DRAPE_SPACING` (× default, default 1),
/// `DRAPE_GARMENTS` (`all` or a comma list), `DRAPE_METHOD`, `DRAPE_OUT` (PNG path,
/// default /tmp/drape_hakama.png), `DRAPE_VIEWS` (default `-z,-x`: from the front and from the
/// side; `+z` from behind). Garments in colour over the grey body. Run by hand:
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
    // `DRAPE_VIEWS`: the directions looked along, comma-separated among `-z` (default, the
    // character's front), `-x` (default, its side), `+z` (its back) and `+x`.
    let looks: Vec<Vec3> = env("DRAPE_VIEWS")
        .unwrap_or_else(|| "-z,-x".into())
        .split(',')
        .map(|v| match v.trim() {
            "-z" => Vec3::NEG_Z,
            "+z" => Vec3::Z,
            "-x" => Vec3::NEG_X,
            "+x" => Vec3::X,
            other => panic!("DRAPE_VIEWS: unknown view '{other}' (-z, +z, -x, +x)"),
        })
        .collect();
    let nv = looks.len();
    // `DRAPE_TILE`: each view's size × this factor (default 1: 300 × 390 pixels).
    let tile: u32 = env("DRAPE_TILE").map_or(1, |s| s.parse().unwrap());
    let (tw, th) = (300 * tile, 390 * tile);
    let mut sheet = Canvas::new(tw * nv as u32 * frames.len() as u32, th + 24, [40, 40, 44]);
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
        for (v, &look) in looks.iter().enumerate() {
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
            let x = (col * nv + v) as u32 * tw;
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
        // The deepest unpinned particle inside the proxies, if more than 1 mm (issue 5).
        let deepest = (0..m.len())
            .filter(|&i| !m.is_pinned(i))
            .map(|i| {
                let p: Vec3 = scene.state.x[i].into();
                (
                    drape::body::union_sdf(p, &scene.proxy_frame, &scene.proxies.capsules),
                    i,
                )
            })
            .min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((d, i)) = deepest.filter(|d| d.0 < -1e-3) {
            println!(
                "frame {f} ({:?}): particle {i} ({}) {:.1} mm inside, rest {:+.3?}",
                scene.phase,
                m.garments[m.garment_of[i] as usize].name,
                -d * 1e3,
                Vec3::from(m.rest[i]) - rest_hips
            );
        }
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
    let scene = match std::env::var("DRAPE_HAKAMA").ok().as_deref() {
        Some(st) => {
            let mut spec = GarmentSpec::coarse(GarmentKind::Hakama, factor);
            spec.style = st.parse().unwrap();
            let cfg = SceneConfig {
                garments: vec![spec],
                ..SceneConfig::default()
            };
            Scene::new(rig, cfg).unwrap()
        }
        None => hakama_at_rest(rig, factor),
    };
    let f = scene.garment_frame(0);
    {
        // How far the cloth reaches out at the sides near the hips' height.
        let hips = joint(&scene.rig, "Hips");
        let side = f
            .positions
            .iter()
            .filter(|p| (p.y - hips.y).abs() < 0.03 * scene.body_scale)
            .map(|p| (p.x - hips.x).abs())
            .fold(0.0f32, f32::max);
        println!("reach at the sides within 3 cm of the hips' height: {side:.3} m");
    }
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
    for (d, a, b) in e.iter().rev().take(6) {
        println!(
            "shortest {d:.4} m: {a} {:.3?} - {b} {:.3?}",
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

/// A scene file picks the hakama's cut with `style`; the half-skirts stay the default, and a
/// style on another garment or an unknown one is refused, naming the key.
#[test]
fn scene_file_style_picks_the_cut() {
    use drape::scene::SceneFile;
    let config = |t: &str| SceneFile::parse(t).and_then(|f| f.config());
    let c = config("[[garment]]\nkind = \"hakama\"\nstyle = \"divided\"\n").unwrap();
    assert_eq!(c.garments[0].style, HakamaStyle::Divided);
    let c = config("[[garment]]\nkind = \"hakama\"\nstyle = \"fitted\"\n").unwrap();
    assert_eq!(c.garments[0].style, HakamaStyle::Fitted);
    let c = config("[[garment]]\nkind = \"hakama\"\n").unwrap();
    assert_eq!(c.garments[0].style, HakamaStyle::HalfSkirts);
    let e = config("[[garment]]\nkind = \"cape\"\nstyle = \"divided\"\n").unwrap_err();
    assert!(e.contains("garment[0].style"), "{e}");
    let e = config("[[garment]]\nkind = \"hakama\"\nstyle = \"kilt\"\n").unwrap_err();
    assert!(e.contains("style") && e.contains("kilt"), "{e}");
}

/// The coarse corpus tests' run (`tests/corpus.rs`: every garment at 3 × the spacing, settle
/// 0.2 s, blend 0.3 s, issue 5's checks at the end of every frame) with the hakama cut as
/// `DRAPE_HAKAMA` (default `divided`): on `DRAPE_RIG` (`ninja`, `CesiumMan` from
/// ../shared/rigs, or a .glb; default the three corpus bodies), every clip (or `DRAPE_CLIP`),
/// LBS and DQS (or `DRAPE_METHOD`), the mass-spring model (or `DRAPE_MODEL`). Where the tests
/// stop at a case's first violation, this runs each case to its end and prints the first
/// violation and, over the whole clip: how many frames break a check, the deepest unpinned
/// particle inside a proxy and the most stretched limited spring. Fails if any case breaks a
/// check. Run by hand with `--ignored --nocapture`, e.g. `DRAPE_HAKAMA=fitted
/// DRAPE_RIG=CesiumMan cargo test --release --no-default-features --test hakama
/// cut_coarse_report -- --ignored --nocapture`.
#[test]
#[ignore = "report: a hakama cut against the coarse per-frame checks over whole clips"]
fn cut_coarse_report() {
    use drape::anim::player::LoopMode;
    let env = |k: &str| std::env::var(k).ok().filter(|s| !s.is_empty());
    let style: HakamaStyle =
        env("DRAPE_HAKAMA").map_or(HakamaStyle::Divided, |s| s.parse().unwrap());
    let rigs: Vec<(String, Rig)> = match env("DRAPE_RIG").as_deref() {
        Some("ninja") => vec![("ninja".into(), drape::ninja::build().unwrap().rig)],
        Some("CesiumMan") => match dressed::khronos_rig("CesiumMan") {
            Some(r) => vec![("CesiumMan".into(), r)],
            None => return,
        },
        Some(p) => vec![(
            p.into(),
            drape::asset::load_rig(std::path::Path::new(p)).unwrap(),
        )],
        None => ["robot", "soldier", "long_hair"]
            .iter()
            .map(|n| (n.to_string(), corpus_rig(n)))
            .collect(),
    };
    let methods: Vec<drape::skin::SkinMethod> = match env("DRAPE_METHOD") {
        Some(m) => vec![m.parse().unwrap()],
        None => vec![drape::skin::SkinMethod::Lbs, drape::skin::SkinMethod::Dqs],
    };
    let mut failures = 0;
    for (name, rig) in &rigs {
        let clips: Vec<String> = match env("DRAPE_CLIP") {
            Some(c) => vec![c],
            None => rig.clips.iter().map(|c| c.name.clone()).collect(),
        };
        for clip in &clips {
            for &method in &methods {
                let mut cfg = dressed::coarse_config(Some(clip.clone()), &GarmentKind::ALL);
                for g in &mut cfg.garments {
                    if g.kind == GarmentKind::Hakama {
                        g.style = style;
                    }
                }
                cfg.method = method;
                if let Some(m) = env("DRAPE_MODEL") {
                    cfg.sim.model = m.parse().unwrap();
                }
                let mut scene = Scene::new(rig.clone(), cfg).unwrap();
                scene.player.set_loop_mode(LoopMode::Once);
                let c = &rig.clips[rig.clip(clip).unwrap()];
                let frames = ((scene.startup_seconds() + c.duration()) * 60.0).ceil() as usize + 1;
                let (mut first, mut bad, mut deepest, mut stretch) = (None, 0, 0.0f32, 0.0f32);
                for f in 0..frames {
                    scene.step(1.0 / 60.0);
                    if let Err(e) = dressed::check_frame(&scene) {
                        first.get_or_insert_with(|| format!("frame {f} ({:?}): {e}", scene.phase));
                        bad += 1;
                    }
                    let m = &scene.model;
                    for i in (0..m.len()).filter(|&i| !m.is_pinned(i)) {
                        let d = drape::body::union_sdf(
                            scene.state.x[i].into(),
                            &scene.proxy_frame,
                            &scene.proxies.capsules,
                        );
                        deepest = deepest.max(-d);
                    }
                    if let Some((_, r)) = m.worst_limit_spring(&scene.state.x) {
                        stretch = stretch.max(r);
                    }
                }
                failures += usize::from(bad > 0);
                println!(
                    "{name} {clip} ({method}, {}): {bad} of {frames} frames break a check; deepest \
                     in a proxy {:.2} mm, worst spring {:.1} %; first: {}",
                    style.name(),
                    1e3 * deepest,
                    1e2 * stretch,
                    first.as_deref().unwrap_or("none")
                );
            }
        }
    }
    assert_eq!(failures, 0, "{failures} cases fail");
}
