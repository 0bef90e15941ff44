//! Robustness of the cloth engine: determinism, the spatial hash against brute force, and a
//! parameter sweep that must never explode.

use drape::cloth::hash::{brute_force_pairs, SpatialHash};
use drape::cloth::scenes::{build_scene, SceneOptions};
use drape::cloth::*;
use drape::math::{Vec3, Vec3A};

#[test]
fn spatial_hash_finds_exactly_the_brute_force_pairs() {
    let mut seed = 7u32;
    let mut rnd = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    let mut hash = SpatialHash::new();
    for &(count, extent, radius) in &[
        (500usize, 1.0f32, 0.05f32),
        (2000, 0.5, 0.02),
        (300, 10.0, 0.7),
        (50, 0.01, 0.3),
    ] {
        let pts: Vec<Vec3A> = (0..count)
            .map(|_| Vec3A::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5) * extent)
            .collect();
        hash.build(&pts, radius);
        assert_eq!(
            hash.pairs_within(radius),
            brute_force_pairs(&pts, radius),
            "{count} points, r = {radius}"
        );
        // The neighbour lists are built from the half-shell queries: each pair exactly once.
        assert_eq!(
            hash.pairs_within_half_shell(radius),
            brute_force_pairs(&pts, radius)
        );
        // Smaller query radii on the same table.
        assert_eq!(
            hash.pairs_within(0.5 * radius),
            brute_force_pairs(&pts, 0.5 * radius)
        );
    }
    // A crumpled cloth (many points on a surface, negative coordinates, exact cell boundaries).
    let opts = SceneOptions {
        n: 16,
        frames: Some(60),
        ..SceneOptions::default()
    };
    let mut sc = build_scene("selfcollide", &opts).unwrap();
    sc.run(|_| {});
    let r = 2.0 * sc.model.max_thickness;
    hash.build(&sc.state.x, r);
    let want = brute_force_pairs(&sc.state.x, r);
    assert!(!want.is_empty());
    assert_eq!(hash.pairs_within(r), want);
    assert_eq!(hash.pairs_within_half_shell(r), want);
    let grid: Vec<Vec3A> = (0..400)
        .map(|i| Vec3A::new((i % 20) as f32 * 0.1, 0.0, (i / 20) as f32 * 0.1 - 1.0))
        .collect();
    hash.build(&grid, 0.1001);
    assert_eq!(hash.pairs_within(0.1001), brute_force_pairs(&grid, 0.1001));
    assert_eq!(
        hash.pairs_within_half_shell(0.1001),
        brute_force_pairs(&grid, 0.1001)
    );
}

fn run_scene(name: &str, n: u32, frames: u32, chunk: Option<usize>, threads: usize) -> ClothState {
    let opts = SceneOptions {
        n,
        frames: Some(frames),
        self_collision: true,
        ..SceneOptions::default()
    };
    let mut sc = build_scene(name, &opts).unwrap();
    if let Some(cs) = chunk {
        // The same drop-scene sheet rebuilt with small chunks, so the parallel partition (chunks
        // in parallel, then the crossing springs) is exercised on a small cloth.
        let p = GarmentParams {
            thickness: 0.4 / (n - 1) as f32,
            ..Default::default()
        };
        let g = build::grid(
            "cloth",
            &GridSpec::square(n, 1.0, Vec3::new(0.0, 1.0, 0.0)),
            &p,
        )
        .unwrap();
        sc.model = ClothModel::with_chunk_size(vec![g], cs);
        sc.state = ClothState::new(&sc.model);
        sc.workspace = ClothWorkspace::new(&sc.model);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        sc.run(|_| {});
    });
    sc.state
}

#[test]
fn two_runs_are_bit_identical_whatever_the_thread_count() {
    let a = run_scene("drop", 16, 40, Some(64), 2);
    let b = run_scene("drop", 16, 40, Some(64), 2);
    let c = run_scene("drop", 16, 40, Some(64), 1);
    let d = run_scene("drop", 16, 40, Some(64), 3);
    assert!(
        a.x.iter().any(|p| p.y < 0.9),
        "the cloth should have fallen"
    );
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(a, d);
    let e = run_scene("two_garments", 12, 30, None, 2);
    let f = run_scene("two_garments", 12, 30, None, 1);
    assert_eq!(e, f);
}

#[test]
fn chunked_and_serial_partitions_agree_closely() {
    // Different chunk sizes change only the order of floating-point sums: before the cloth
    // hits the sphere (contact and folding amplify rounding chaotically) they agree to rounding.
    let a = run_scene("drop", 16, 14, Some(64), 2);
    let b = run_scene("drop", 16, 14, Some(100_000), 2);
    let worst =
        a.x.iter()
            .zip(&b.x)
            .map(|(p, q)| p.distance(*q))
            .fold(0.0f32, f32::max);
    assert!(worst < 1e-5, "{worst}");
}

#[test]
fn parameter_sweep_never_explodes() {
    let mut clamped = 0;
    for &k in &[10.0f32, 1e3, 1e6] {
        for &density_scale in &[0.1f32, 1.0, 100.0] {
            for &dt in &[1.0f32 / 12000.0, 1.0 / 2000.0, 1.0 / 300.0] {
                for integrator in [Integrator::Verlet, Integrator::SymplecticEuler] {
                    let n = 8;
                    let p = GarmentParams {
                        k_structural: k,
                        k_shear: k,
                        k_bend: 0.1 * k,
                        area_density: 0.2 * density_scale,
                        thickness: 0.4 / (n - 1) as f32,
                        ..GarmentParams::default()
                    };
                    let g =
                        build::grid("s", &GridSpec::square(n, 1.0, Vec3::new(0.0, 1.0, 0.0)), &p)
                            .unwrap();
                    let model = ClothModel::new(vec![g]);
                    let mut state = ClothState::new(&model);
                    let mut ws = ClothWorkspace::new(&model);
                    let substeps = ((1.0 / 60.0) / dt).round() as u32;
                    let params = SimParams {
                        substeps,
                        integrator,
                        self_collision: true,
                        ..SimParams::default()
                    };
                    let colliders = [
                        Collider::fixed(Shape::sphere(Vec3::new(0.0, 0.3, 0.0), 0.3)),
                        Collider::fixed(Shape::plane(Vec3::ZERO, Vec3::Y)),
                    ];
                    for _ in 0..15 {
                        step_frame(&model, &mut state, &mut ws, &colliders, &params);
                    }
                    let label = format!("k={k} density×{density_scale} dt={dt} {integrator:?}");
                    assert!(state.is_finite(), "NaN: {label}");
                    let far = state.x.iter().map(|x| x.length()).fold(0.0f32, f32::max);
                    assert!(far < 10.0, "particle {far} m away: {label}");
                    // Whatever was clamped is reported, and what was not clamped was stable.
                    if ws.stability.clamped() {
                        clamped += 1;
                    }
                    let ke_per_kg = state.kinetic_energy() / model.total_mass() as f64;
                    assert!(ke_per_kg < 50.0, "runaway energy {ke_per_kg} J/kg: {label}");
                }
            }
        }
    }
    assert!(
        clamped > 0,
        "k = 1e6 at dt = 1/300 s cannot be stable explicitly: it must be reported"
    );
}

#[test]
fn stability_report_is_clean_for_the_benchmark_scene() {
    for n in [32, 60, 100] {
        let mut sc = build_scene(
            "drop",
            &SceneOptions {
                n,
                ..SceneOptions::default()
            },
        )
        .unwrap();
        sc.workspace.prepare(&sc.model, &sc.params);
        assert!(
            !sc.workspace.stability.clamped(),
            "N = {n}: {:?}",
            sc.workspace.stability
        );
        let expected = [(32, 16), (60, 32), (100, 64)]
            .iter()
            .find(|e| e.0 == n)
            .unwrap()
            .1;
        assert_eq!(sc.params.substeps, expected);
        let m = sc.model.mass_dry[0];
        assert!((m - 0.2 / (n * n) as f32).abs() < 1e-9);
    }
}

#[test]
fn bad_scene_input_is_an_error_not_a_panic() {
    assert!(build_scene("nope", &SceneOptions::default()).is_err());
    assert!(build_scene(
        "drop",
        &SceneOptions {
            n: 1,
            ..SceneOptions::default()
        }
    )
    .is_err());
    assert!(build_scene(
        "drop",
        &SceneOptions {
            n: 100_000,
            ..SceneOptions::default()
        }
    )
    .is_err());
}

#[test]
fn neighbour_lists_never_miss_a_contact() {
    // The lists (and the fresh pairs of particles that outran them) only decide which pairs are
    // examined; the contacts (pairs within the contact distance) and their order are the same
    // whatever the skin. A list that missed a pair would
    // change the result, so a thin skin (rebuilt almost every substep) and a thick one (rarely
    // rebuilt) must agree bit for bit.
    let run = |skin: f32| {
        let opts = SceneOptions {
            n: 14,
            frames: Some(70),
            ..SceneOptions::default()
        };
        let mut sc = build_scene("selfcollide", &opts).unwrap();
        sc.params.self_skin = skin;
        let pairs: u32 = sc.run(|_| {}).iter().map(|r| r.step.self_pairs).sum();
        let ws = &sc.workspace;
        (
            sc.state,
            ws.list_rebuilds + ws.list_refreshes,
            ws.list_refreshes,
            pairs,
        )
    };
    let (thin, thin_rebuilds, thin_refreshes, pairs) = run(0.1);
    let (thick, thick_rebuilds, _, _) = run(4.0);
    assert!(pairs > 0, "the scene must produce self-contacts");
    assert!(
        thin_rebuilds > 2 * thick_rebuilds,
        "{thin_rebuilds} vs {thick_rebuilds}"
    );
    // Some substeps keep the lists and find only the fast particles' pairs afresh: they too
    // must give the rebuild's bits.
    assert!(thin_refreshes > 0, "no partial refresh ran");
    assert_eq!(thin, thick);
}

/// The fast spring kernel (grid stencils + edge list) against the reference edge-by-edge
/// kernel, on perturbed positions and random velocities: a grid (several bands, jittered rest
/// lengths), a mesh garment, and both in one world with a stability scale below 1.
#[test]
fn fast_spring_kernel_equals_the_reference_kernel() {
    let mut seed = 11u32;
    let mut rnd = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    };
    let p = GarmentParams {
        thickness: 0.01,
        ..GarmentParams::default()
    };
    let mut spec = GridSpec::square(23, 1.0, Vec3::new(0.0, 1.0, 0.0));
    spec.jitter = 0.003;
    let grid = build::grid("grid", &spec, &p).unwrap();
    let tube = {
        // A mesh that is not a grid: a 12 × 9 sheet rolled into an open tube.
        let (cols, rows) = (12u32, 9u32);
        let pos: Vec<Vec3> = (0..rows)
            .flat_map(|r| {
                (0..cols).map(move |c| {
                    let a = c as f32 / cols as f32 * std::f32::consts::TAU;
                    Vec3::new(0.2 * a.cos(), 0.5 - 0.05 * r as f32, 0.2 * a.sin())
                })
            })
            .collect();
        let mut tris = Vec::new();
        for r in 0..rows - 1 {
            for c in 0..cols {
                let (i, j) = (r * cols + c, r * cols + (c + 1) % cols);
                tris.push([i, i + cols, j]);
                tris.push([j, i + cols, j + cols]);
            }
        }
        build::mesh("tube", &pos, &tris, &[0, 5], &p).unwrap()
    };
    let worlds = [
        (
            ClothModel::with_chunk_size(vec![grid.clone()], 64),
            1.0f32,
            1,
            0,
        ),
        (ClothModel::new(vec![grid.clone()]), 1.0, 1, 0),
        (ClothModel::new(vec![tube.clone()]), 1.0, 0, 1),
        (
            ClothModel::with_chunk_size(vec![tube, grid], 100),
            0.37,
            1,
            1,
        ),
    ];
    for (w, (model, scale, stencils, general_garments)) in worlds.iter().enumerate() {
        assert_eq!(model.stencils.len(), *stencils, "world {w}");
        assert_eq!(
            !model.general.is_empty(),
            *general_garments > 0,
            "world {w}: general springs"
        );
        if *stencils > 0 && model.chunk_size == 64 {
            assert!(
                model.stencils[0].bands() > 1,
                "the grid must span several bands"
            );
        }
        let n = model.len();
        let x: Vec<Vec3A> = model
            .rest
            .iter()
            .map(|r| *r + Vec3A::new(rnd(), rnd(), rnd()) * 0.02)
            .collect();
        let v: Vec<Vec3A> = (0..n)
            .map(|_| Vec3A::new(rnd(), rnd(), rnd()) * 2.0)
            .collect();
        let scales = vec![*scale; model.garments.len()];
        let k: Vec<f32> = model.springs.k.iter().map(|k| k * scale).collect();
        let kd: Vec<f32> = model.springs.kd.iter().map(|k| k * scale).collect();
        let mut want = vec![Vec3A::splat(f32::NAN); n];
        forces::springs(model, &x, &v, &k, &kd, &mut want);
        let kg: Vec<f32> = model.general.k.iter().map(|k| k * scale).collect();
        let kdg: Vec<f32> = model.general.kd.iter().map(|k| k * scale).collect();
        let mut scratch = forces::SpringScratch::new(model);
        let mut got = vec![Vec3A::splat(f32::NAN); n];
        forces::springs_fast(model, &x, &v, &scales, &kg, &kdg, &mut scratch, &mut got);
        let biggest = want.iter().map(|f| f.length()).fold(0.0f32, f32::max);
        assert!(biggest > 0.0);
        for i in 0..n {
            let err = (got[i] - want[i]).length();
            assert!(
                err <= 1e-5 * biggest,
                "world {w}, particle {i}: fast {:?} reference {:?}",
                got[i],
                want[i]
            );
        }
        // Every particle's force is written (no stale values), and a second call with the same
        // input gives the same bits.
        let mut again = vec![Vec3A::splat(1e9); n];
        forces::springs_fast(model, &x, &v, &scales, &kg, &kdg, &mut scratch, &mut again);
        assert_eq!(got, again);
    }
}

/// A frame keeps the pool's other threads busy while it runs (`stages::frame`'s `keep_busy`):
/// frames stepped at once from several threads, and from inside a parallel loop (as a command
/// running several scenes does), all finish, each with the positions it has when stepped alone,
/// with both models and self-collision on.
#[test]
fn frames_stepped_at_once_from_many_threads_finish_as_they_do_alone() {
    use rayon::prelude::*;
    let run = |model: ClothModelKind| {
        let opts = SceneOptions {
            n: 24,
            self_collision: true,
            model,
            ..Default::default()
        };
        let mut s = build_scene("drop", &opts).unwrap();
        for _ in 0..40 {
            s.step();
        }
        s.state.x
    };
    let alone: Vec<_> = ClothModelKind::ALL.iter().map(|&m| run(m)).collect();
    let jobs: Vec<ClothModelKind> = (0..6).map(|k| ClothModelKind::ALL[k % 2]).collect();
    std::thread::scope(|t| {
        let handles: Vec<_> = (0..3)
            .map(|_| t.spawn(|| jobs.par_iter().map(|&m| (m, run(m))).collect::<Vec<_>>()))
            .collect();
        for h in handles {
            for (m, x) in h.join().unwrap() {
                let k = ClothModelKind::ALL.iter().position(|&a| a == m).unwrap();
                assert!(
                    x == alone[k],
                    "{m}: positions differ from the frame stepped alone"
                );
            }
        }
    });
}
