//! Physical properties of the cloth engine (PHYSICS.md §6): each test measures something the
//! physics dictates and fails if the engine gets it wrong.

use drape::cloth::scenes::{build_scene, max_penetration, max_structural_stretch, SceneOptions};
use drape::cloth::*;
use drape::math::{Vec3, Vec3A};

fn sheet(n: u32, y: f32, params: &GarmentParams) -> ClothModel {
    let g = build::grid(
        "sheet",
        &GridSpec::square(n, 1.0, Vec3::new(0.0, y, 0.0)),
        params,
    )
    .unwrap();
    ClothModel::new(vec![g])
}

fn run(
    model: &ClothModel,
    state: &mut ClothState,
    colliders: &[Collider],
    params: &SimParams,
    frames: u32,
) {
    let mut ws = ClothWorkspace::new(model);
    for _ in 0..frames {
        step_frame(model, state, &mut ws, colliders, params);
    }
}

#[test]
fn free_fall_follows_half_g_t_squared() {
    for integrator in [Integrator::SymplecticEuler, Integrator::Verlet] {
        let model = sheet(12, 2.0, &GarmentParams::default());
        let mut state = ClothState::new(&model);
        let params = SimParams {
            integrator,
            verlet_damping: 0.0,
            substeps: 20,
            ..SimParams::default()
        };
        let y0 = state.centre_of_mass().y;
        let frames = 30; // 0.5 s
        run(&model, &mut state, &[], &params, frames);
        let t = frames as f32 * params.frame_dt;
        let fall = y0 - state.centre_of_mass().y;
        let exact = 0.5 * 9.8 * t * t;
        // Both schemes are exact for constant acceleration up to the O(Δt) offset ½ g t Δt of a
        // first-order start (x_1 = x_0 + g Δt²).
        let slack = 0.5 * 9.8 * t * params.dt() + 1e-4;
        assert!(
            (fall - exact).abs() <= slack,
            "{integrator:?}: fell {fall} m, ½gt² = {exact} m"
        );
        // Springs stay at rest length: the sheet falls as a rigid body.
        assert!((max_structural_stretch(&model, &state.x) - 1.0).abs() < 1e-3);
    }
}

#[test]
fn pinned_cloth_comes_to_rest_and_pins_stay_exact() {
    let opts = SceneOptions {
        n: 16,
        ..SceneOptions::default()
    };
    let mut scene = build_scene("pinned2", &opts).unwrap();
    let pins: Vec<Vec3A> = scene
        .model
        .pins
        .iter()
        .map(|&i| scene.model.rest[i as usize])
        .collect();
    let mut peak = 0.0f64;
    let mut last = 0.0;
    for _ in 0..360 {
        scene.step();
        last = scene.state.kinetic_energy();
        peak = peak.max(last);
        for (k, &i) in scene.model.pins.iter().enumerate() {
            assert_eq!(scene.state.x[i as usize], pins[k], "pin moved");
        }
    }
    assert!(
        peak > 1e-2,
        "the cloth should swing down (peak KE {peak} J)"
    );
    assert!(
        last < 1e-4 * peak,
        "still moving after 6 s: KE {last} J (peak {peak} J)"
    );
    // Provot's limit holds (10 %, one pass; a small overshoot from the pass order is allowed).
    let stretch = max_structural_stretch(&scene.model, &scene.state.x);
    assert!(stretch < 1.12, "stretch {stretch}");
}

#[test]
fn moving_pins_follow_their_targets_without_lag() {
    let mut spec = GridSpec::square(8, 0.5, Vec3::new(0.0, 1.0, 0.0));
    spec.pinned = vec![(0, 0), (7, 0)];
    let g = build::grid("g", &spec, &GarmentParams::default()).unwrap();
    let model = ClothModel::new(vec![g]);
    let mut state = ClothState::new(&model);
    let mut ws = ClothWorkspace::new(&model);
    let params = SimParams {
        substeps: 8,
        ..SimParams::default()
    };
    ws.prepare(&model, &params);
    let start: Vec<Vec3> = state.pin_target.iter().map(|&p| p.into()).collect();
    let shift = Vec3::new(0.3, 0.2, 0.0);
    state.set_pin_targets(&start.iter().map(|&p| p + shift).collect::<Vec<_>>());
    for s in 0..params.substeps {
        substep(&model, &mut state, &mut ws, &[], &params, s);
        let f = (s + 1) as f32 / params.substeps as f32;
        for (k, &i) in model.pins.iter().enumerate() {
            let want = start[k] + shift * f;
            assert!(
                Vec3::from(state.x[i as usize]).abs_diff_eq(want, 1e-6),
                "substep {s}"
            );
        }
    }
}

/// Checks the penetration after every substep of `frames` frames, with `motion` moving the
/// colliders before each frame.
fn assert_no_penetration(
    scene_name: &str,
    n: u32,
    frames: u32,
    mut motion: impl FnMut(u32, &mut [Collider]),
) {
    let opts = SceneOptions {
        n,
        ..SceneOptions::default()
    };
    let mut sc = build_scene(scene_name, &opts).unwrap();
    sc.workspace.prepare(&sc.model, &sc.params);
    let tol = 1e-5;
    for f in 0..frames {
        motion(f, &mut sc.colliders);
        for s in 0..sc.params.substeps {
            substep(
                &sc.model,
                &mut sc.state,
                &mut sc.workspace,
                &sc.colliders,
                &sc.params,
                s,
            );
            // At the end of substep s the colliders sit at their interpolated pose.
            let t = (s + 1) as f32 / sc.params.substeps as f32;
            let now: Vec<Collider> = sc
                .colliders
                .iter()
                .map(|c| Collider::fixed(Shape::lerp(&c.prev, &c.cur, t)))
                .collect();
            let pen = max_penetration(&sc.model, &sc.state.x, &now);
            assert!(
                pen <= tol,
                "{scene_name}: frame {f} substep {s}: penetration {pen} m"
            );
        }
        sc.state.time += sc.params.frame_dt as f64;
    }
}

#[test]
fn no_particle_inside_a_collider_after_any_substep() {
    assert_no_penetration("drop", 20, 90, |_, _| {});
    assert_no_penetration("plane", 16, 60, |_, _| {});
}

#[test]
fn fast_moving_sphere_and_capsule_never_leave_particles_inside() {
    // A sphere rising through the falling sheet at 3 m/s, then a tapered capsule swinging.
    assert_no_penetration("drop", 16, 60, |f, c| {
        let y = 0.3 + 0.05 * f.min(20) as f32;
        c[0].move_to(Shape::sphere(Vec3::new(0.0, y, 0.0), 0.3));
    });
    assert_no_penetration("sphere", 16, 60, |f, c| {
        let a = f as f32 * 0.08;
        let tip = Vec3::new(0.6 * a.cos(), 0.6, 0.6 * a.sin());
        let cap = Shape::capsule(Vec3::new(0.0, 0.6, 0.0), 0.15, tip, 0.05);
        if f == 0 {
            c[0] = Collider::fixed(cap);
        } else {
            c[0].move_to(cap);
        }
    });
}

/// Smallest distance between two particles that are not neighbours at rest (rest distance
/// above `gap`), by brute force.
fn min_non_neighbour_distance(model: &ClothModel, x: &[Vec3A], gap: f32) -> f32 {
    let mut best = f32::INFINITY;
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let same = model.garment_of[i] == model.garment_of[j];
            if same && model.rest[i].distance(model.rest[j]) <= gap {
                continue;
            }
            best = best.min(x[i].distance(x[j]));
        }
    }
    best
}

#[test]
fn folded_cloth_keeps_its_layers_apart() {
    let opts = SceneOptions {
        n: 20,
        frames: Some(150),
        ..SceneOptions::default()
    };
    let mut sc = build_scene("selfcollide", &opts).unwrap();
    let records = sc.run(|_| {});
    let thickness = sc.model.thickness[0];
    let last = records.last().unwrap();
    assert!(
        last.step.self_pairs > 0,
        "the cloth should have folded onto itself"
    );
    let d = min_non_neighbour_distance(&sc.model, &sc.state.x, 2.0 * thickness);
    assert!(
        d >= thickness,
        "non-neighbours {d} m apart, thickness {thickness} m"
    );
    // And the same scene without self-collision does interpenetrate (the test can fail).
    let mut bad = build_scene("selfcollide", &opts).unwrap();
    bad.params.self_collision = false;
    bad.run(|_| {});
    let d_off = min_non_neighbour_distance(&bad.model, &bad.state.x, 2.0 * thickness);
    assert!(
        d_off < thickness,
        "without self-collision the layers should touch ({d_off} m)"
    );
}

#[test]
fn two_garments_collide_with_each_other() {
    let opts = SceneOptions {
        n: 14,
        frames: Some(90),
        ..SceneOptions::default()
    };
    let mut sc = build_scene("two_garments", &opts).unwrap();
    sc.run(|_| {});
    let (a, b) = (
        sc.model.garments[0].particles.clone(),
        sc.model.garments[1].particles.clone(),
    );
    let mut best = f32::INFINITY;
    for i in a.clone() {
        for j in b.clone() {
            best = best.min(sc.state.x[i].distance(sc.state.x[j]));
        }
    }
    let contact = sc.model.thickness[a.start] + sc.model.thickness[b.start];
    assert!(
        best >= 0.5 * contact,
        "garments {best} m apart, contact distance {contact} m"
    );
    // The upper sheet rests on the lower one: its lowest point over the sphere top is higher.
    let top = |r: std::ops::Range<usize>| {
        r.map(|i| sc.state.x[i])
            .filter(|p| p.x.abs() < 0.05 && p.z.abs() < 0.05)
            .map(|p| p.y)
            .fold(0.0f32, f32::max)
    };
    assert!(top(b) > top(a), "upper garment should lie on the lower one");
}

/// Sag of the centre of a cloth pinned at its four corners, after settling, m.
fn hammock_sag(k: f32, density: f32, zeta: f32) -> f32 {
    let n = 12;
    let mut spec = GridSpec::square(n, 1.0, Vec3::new(0.0, 1.0, 0.0));
    spec.pinned = vec![(0, 0), (n - 1, 0), (0, n - 1), (n - 1, n - 1)];
    let p = GarmentParams {
        k_structural: k,
        k_shear: k,
        k_bend: 0.1 * k,
        area_density: density,
        damping_ratio: zeta,
        ..GarmentParams::default()
    };
    let model = ClothModel::new(vec![build::grid("h", &spec, &p).unwrap()]);
    let mut state = ClothState::new(&model);
    let params = SimParams {
        provot_limit: None,
        substeps: 30,
        verlet_damping: 0.01,
        ..SimParams::default()
    };
    run(&model, &mut state, &[], &params, 240);
    let centre = (n / 2 * n + n / 2) as usize;
    1.0 - state.x[centre].y
}

#[test]
fn stiffer_sags_less_and_denser_sags_more() {
    let base = hammock_sag(40.0, 0.2, 0.1);
    let stiff = hammock_sag(160.0, 0.2, 0.1);
    let dense = hammock_sag(40.0, 0.8, 0.1);
    assert!(base > 0.01, "base sag {base}");
    assert!(stiff < 0.8 * base, "stiffer: {stiff} vs {base}");
    assert!(dense > 1.25 * base, "denser: {dense} vs {base}");
}

#[test]
fn more_damping_moves_slower() {
    // Verlet's velocity damping: the pinned cloth swings down more slowly.
    let fall = |d: f32| {
        let opts = SceneOptions {
            n: 12,
            frames: Some(20),
            ..SceneOptions::default()
        };
        let mut sc = build_scene("pinned2", &opts).unwrap();
        sc.params.verlet_damping = d;
        sc.run(|_| {});
        1.0 - sc.state.centre_of_mass().y
    };
    let (low, high) = (fall(0.002), fall(0.02));
    assert!(
        high < 0.9 * low,
        "fall with d = 0.02: {high} m, with 0.002: {low} m"
    );
    // The spring dashpots: a sheet released stretched by 20 % (no gravity) oscillates; after
    // the same time the more damped one has less kinetic energy left.
    let energy = |zeta: f32| {
        let p = GarmentParams {
            damping_ratio: zeta,
            ..GarmentParams::default()
        };
        let spec = GridSpec::square(12, 1.0, Vec3::ZERO);
        let model = ClothModel::new(vec![build::grid("g", &spec, &p).unwrap()]);
        let mut state = ClothState::new(&model);
        for i in 0..model.len() {
            state.x[i] *= 1.2;
            state.x_prev[i] = state.x[i];
        }
        let params = SimParams {
            gravity: Vec3::ZERO,
            verlet_damping: 0.0,
            provot_limit: None,
            ..SimParams::default()
        };
        run(&model, &mut state, &[], &params, 30);
        state.kinetic_energy()
    };
    let (e_low, e_high) = (energy(0.02), energy(0.5));
    assert!(
        e_high < 0.5 * e_low,
        "KE with ζ = 0.5: {e_high} J, with 0.02: {e_low} J"
    );
}

#[test]
fn friction_holds_cloth_on_a_slope_and_its_absence_lets_it_slide() {
    let slide = |mu: f32| {
        let opts = SceneOptions {
            n: 12,
            frames: Some(90),
            ..SceneOptions::default()
        };
        let mut sc = build_scene("plane", &opts).unwrap();
        sc.model.friction.iter_mut().for_each(|m| *m = mu);
        let x0 = sc.state.centre_of_mass().x;
        sc.run(|_| {});
        sc.state.centre_of_mass().x - x0 // the slope y = −x tan 15° goes down toward +X
    };
    let (held, free) = (slide(0.5), slide(0.0));
    assert!(
        free > 0.1,
        "frictionless cloth should slide down the 15° slope ({free} m)"
    );
    assert!(
        held < 0.2 * free,
        "μ = 0.5 should hold it: slid {held} m vs {free} m"
    );
}

#[test]
fn wet_cloth_is_heavier_keeps_velocity_and_sags_more() {
    let mut spec = GridSpec::square(10, 1.0, Vec3::new(0.0, 1.0, 0.0));
    spec.pinned = vec![(0, 0), (9, 0), (0, 9), (9, 9)];
    let model = ClothModel::new(vec![
        build::grid("g", &spec, &GarmentParams::default()).unwrap()
    ]);
    let mut dry = ClothState::new(&model);
    let mut wet = dry.clone();
    wet.v[5] = Vec3A::new(0.1, 0.0, 0.0);
    for i in 0..model.len() {
        wet.set_wetness(&model, i, 0.84); // cotton at saturation
    }
    assert_eq!(wet.v[5], Vec3A::new(0.1, 0.0, 0.0));
    assert!((wet.mass[5] - 1.84 * model.mass_dry[5]).abs() < 1e-9);
    assert_eq!(wet.inv_mass[0], 0.0, "pins stay pinned when wet");
    wet.v[5] = Vec3A::ZERO;
    let params = SimParams {
        verlet_damping: 0.01,
        provot_limit: None,
        ..SimParams::default()
    };
    run(&model, &mut dry, &[], &params, 120);
    run(&model, &mut wet, &[], &params, 120);
    let c = 5 * 10 + 5;
    assert!(
        wet.x[c].y < dry.x[c].y - 0.005,
        "wet {} vs dry {}",
        wet.x[c].y,
        dry.x[c].y
    );
}

#[test]
fn mesh_garment_hangs_like_the_grid_it_was_made_from() {
    let p = GarmentParams::default();
    let mut spec = GridSpec::square(10, 1.0, Vec3::new(0.0, 1.0, 0.0));
    spec.pinned = vec![(0, 0), (9, 0)];
    let g = build::grid("g", &spec, &p).unwrap();
    let m = build::mesh("m", &g.rest, &g.triangles, &g.pinned, &p).unwrap();
    let params = SimParams::default();
    let mut out = Vec::new();
    for garment in [g, m] {
        let model = ClothModel::new(vec![garment]);
        let mut state = ClothState::new(&model);
        run(&model, &mut state, &[], &params, 120);
        assert!(state.is_finite());
        out.push(state.centre_of_mass());
    }
    // Same mass and pins; different spring sets, so similar (not equal) hanging shapes.
    assert!((out[0].y - out[1].y).abs() < 0.1, "{:?}", out);
    assert!(
        out[1].y < 0.7,
        "the mesh cloth should hang down ({:?})",
        out[1]
    );
}

#[test]
fn wind_pushes_a_flag_downwind() {
    let opts = SceneOptions {
        n: 10,
        frames: Some(90),
        ..SceneOptions::default()
    };
    let mut sc = build_scene("wind", &opts).unwrap();
    let x0 = sc.state.centre_of_mass();
    sc.run(|_| {});
    let calm = {
        let mut c = build_scene("wind", &opts).unwrap();
        c.params.wind.velocity = Vec3::ZERO;
        c.run(|_| {});
        c.state.centre_of_mass()
    };
    let windy = sc.state.centre_of_mass();
    assert!(sc.state.is_finite());
    // Wind (6, 0, 1) m/s: the flag streams out along +X and +Z instead of hanging down.
    assert!(
        windy.y > calm.y + 0.05,
        "windy {windy:?}, calm {calm:?}, start {x0:?}"
    );
    assert!(windy.z > calm.z, "windy {windy:?}, calm {calm:?}");
}

/// A collider thinner than the cloth's triangles meets the cloth between its particles
/// (stage `collide`'s face pass): a 2 cm sphere rising at 0.6 m/s under the middle of a
/// coarse sheet's middle cell (10 cm wide, its four corners free, the sheet held at its border)
/// lifts the cell 4 cm and holds it there, instead of passing between the corners, none of
/// which comes within its reach. Both models.
#[test]
fn a_collider_thinner_than_the_triangles_cannot_pass_between_the_particles() {
    let n = 4;
    let mut spec = GridSpec::square(n, 0.3, Vec3::new(0.0, 1.0, 0.0));
    spec.pinned = (0..n)
        .flat_map(|i| [(i, 0), (i, n - 1), (0, i), (n - 1, i)])
        .collect();
    let params = GarmentParams::default();
    let model = ClothModel::new(vec![build::grid("sheet", &spec, &params).unwrap()]);
    // The middle cell's corners are (±0.05, ±0.05), 7.1 cm from its middle.
    let (px, pz) = (0.0, 0.0);
    let nearest = model
        .rest
        .iter()
        .map(|p| ((p.x - px).powi(2) + (p.z - pz).powi(2)).sqrt())
        .fold(f32::INFINITY, f32::min);
    let r = 0.02;
    assert!(
        nearest > r + 0.04,
        "the path must miss the particles: {nearest}"
    );
    for kind in [ClothModelKind::MassSpring, ClothModelKind::Xpbd] {
        let p = SimParams {
            model: kind,
            substeps: 16,
            ..SimParams::default()
        };
        let mut state = ClothState::new(&model);
        let mut ws = ClothWorkspace::new(&model);
        let sphere = |y: f32| Shape::sphere(Vec3::new(px, y, pz), r);
        let mut y = 0.9;
        let mut colliders = vec![Collider::fixed(sphere(y))];
        for f in 0..42 {
            if f < 12 {
                y += 0.01;
            }
            colliders[0].move_to(sphere(y));
            step_frame(&model, &mut state, &mut ws, &colliders, &p);
            // The sheet over the sphere, from its first touch on.
            let above = model
                .triangles
                .iter()
                .filter(|t| contains_xz(&state.x, t, px, pz))
                .map(|t| height_at(&state.x, t, px, pz))
                .fold(f32::NEG_INFINITY, f32::max);
            assert!(
                above >= y + r || y + r < 0.99,
                "{kind:?}, frame {f}: the sheet over the sphere is {above:.4} m high, the \
                 sphere's top {:.4} m",
                y + r
            );
        }
        assert!(y + r > 1.039);
    }
}

/// Whether triangle `t`'s projection on the ground plane contains (x, z).
fn contains_xz(p: &[Vec3A], t: &[u32; 3], x: f32, z: f32) -> bool {
    let w = bary_xz(p, t, x, z);
    w.iter().all(|&w| w >= 0.0)
}

/// The height of triangle `t` over (x, z).
fn height_at(p: &[Vec3A], t: &[u32; 3], x: f32, z: f32) -> f32 {
    let w = bary_xz(p, t, x, z);
    (0..3).map(|k| w[k] * p[t[k] as usize].y).sum()
}

fn bary_xz(p: &[Vec3A], t: &[u32; 3], x: f32, z: f32) -> [f32; 3] {
    let [a, b, c] = t.map(|i| p[i as usize]);
    let det = (b.z - c.z) * (a.x - c.x) + (c.x - b.x) * (a.z - c.z);
    let u = ((b.z - c.z) * (x - c.x) + (c.x - b.x) * (z - c.z)) / det;
    let v = ((c.z - a.z) * (x - c.x) + (a.x - c.x) * (z - c.z)) / det;
    [u, v, 1.0 - u - v]
}
