//! The fused substep (src/cloth/mass_spring/fused/) against the staged one: the same world stepped both
//! ways must end every frame with the very same bits in positions, previous positions,
//! velocities, contact records and counters, whatever the thread count.

use drape::cloth::scenes::{build_scene, Scene, SceneOptions};
use drape::cloth::*;
use drape::math::{Vec3, Vec3A};

fn bits(v: &[Vec3A]) -> Vec<[u32; 3]> {
    v.iter()
        .map(|p| [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()])
        .collect()
}

fn fbits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|p| p.to_bits()).collect()
}

/// Steps `frames` frames of `a` (fused where eligible) and of `b` (forced staged), calling
/// `each` before every frame on both, and asserts bit-identical results after every frame.
fn compare(
    a: &mut Scene,
    b: &mut Scene,
    frames: u32,
    threads: usize,
    each: &dyn Fn(&mut Scene, u32),
) -> u32 {
    b.workspace.force_staged = true;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut contacts = 0;
    for f in 0..frames {
        each(a, f);
        each(b, f);
        let sa = pool.install(|| {
            step_frame(
                &a.model,
                &mut a.state,
                &mut a.workspace,
                &a.colliders,
                &a.params,
            )
        });
        let sb = step_frame(
            &b.model,
            &mut b.state,
            &mut b.workspace,
            &b.colliders,
            &b.params,
        );
        assert!(
            bits(&a.state.x) == bits(&b.state.x),
            "positions differ at frame {f} ({threads} threads)"
        );
        assert!(
            bits(&a.state.x_prev) == bits(&b.state.x_prev),
            "x_prev, frame {f}"
        );
        assert!(
            bits(&a.state.v) == bits(&b.state.v),
            "velocities, frame {f}"
        );
        assert!(
            fbits(&a.workspace.contact_gap) == fbits(&b.workspace.contact_gap),
            "gaps, frame {f}"
        );
        assert!(
            bits(&a.workspace.contact_normal) == bits(&b.workspace.contact_normal),
            "normals, frame {f}"
        );
        assert_eq!(a.workspace.contact_collider, b.workspace.contact_collider);
        assert_eq!(sa, sb, "stats, frame {f}");
        contacts = sa.contacts;
    }
    contacts
}

fn scene(name: &str, n: u32) -> Scene {
    build_scene(
        name,
        &SceneOptions {
            n,
            ..SceneOptions::default()
        },
    )
    .unwrap()
}

/// The benchmark scene, on 1, 2 and 3 threads, through the fall, the landing on sphere and
/// floor (the crease where the second collision pass runs) and the settling.
#[test]
fn drop_is_bit_identical_to_the_staged_substep() {
    for (n, threads) in [(40, 1), (40, 2), (37, 3), (17, 2)] {
        let (mut a, mut b) = (scene("drop", n), scene("drop", n));
        assert!(fused::eligible(&a.model, &a.state, &a.colliders, &a.params));
        let contacts = compare(&mut a, &mut b, 70, threads, &|_, _| {});
        assert!(contacts > 0, "the cloth reached the colliders (N = {n})");
    }
}

/// Every build of the band kernel (AVX-512, AVX2, portable: the default picks the widest the
/// CPU has, so the narrower ones are pinned here) gives the staged substep's bits.
#[test]
fn every_kernel_build_is_bit_identical() {
    for isa in [
        fused::KernelIsa::Best,
        fused::KernelIsa::Avx2,
        fused::KernelIsa::Portable,
    ] {
        let (mut a, mut b) = (scene("drop", 33), scene("drop", 33));
        a.workspace.fused_isa = isa;
        let contacts = compare(&mut a, &mut b, 70, 2, &|_, _| {});
        assert!(contacts > 0, "{isa:?}: the cloth reached the colliders");
    }
}

/// Verlet with damping, pins moving every frame, a moving and growing sphere, a capsule (the
/// per-particle path), a slanted plane, a contact margin and a speed limit that bites.
#[test]
fn pins_verlet_moving_colliders_and_capsules_are_bit_identical() {
    let build = || {
        let mut s = scene("pinned2", 24);
        s.params.provot_limit = None;
        s.params.integrator = Integrator::Verlet;
        s.params.verlet_damping = 0.01;
        s.params.contact_margin = 0.01;
        s.params.max_speed = 2.0;
        s.colliders = vec![
            Collider::fixed(Shape::sphere(Vec3::new(0.1, 0.6, 0.3), 0.25)),
            Collider::fixed(Shape::capsule(
                Vec3::new(-0.6, 0.5, 0.5),
                0.08,
                Vec3::new(0.6, 0.45, 0.6),
                0.05,
            )),
            Collider::fixed(Shape::plane(
                Vec3::new(0.0, 0.2, 0.0),
                Vec3::new(0.2, 1.0, 0.1),
            )),
        ];
        s
    };
    let (mut a, mut b) = (build(), build());
    assert!(fused::eligible(&a.model, &a.state, &a.colliders, &a.params));
    let each = |s: &mut Scene, f: u32| {
        let ph = 0.1 * f as f32;
        s.colliders[0].move_to(Shape::sphere(
            Vec3::new(0.1 + 0.2 * ph.sin(), 0.6, 0.3),
            0.25 + 0.002 * f as f32,
        ));
        s.colliders[1].move_to(Shape::capsule(
            Vec3::new(-0.6, 0.5 - 0.004 * f as f32, 0.5),
            0.08,
            Vec3::new(0.6, 0.45, 0.6 - 0.003 * f as f32),
            0.05,
        ));
        let targets: Vec<Vec3> = s
            .model
            .pins
            .iter()
            .map(|&i| Vec3::from(s.model.rest[i as usize]) + Vec3::new(0.0, 0.1 * ph.sin(), 0.0))
            .collect();
        s.state.set_pin_targets(&targets);
    };
    let contacts = compare(&mut a, &mut b, 60, 2, &each);
    assert!(contacts > 0);
    assert!(a.state.x.iter().all(|x| x.is_finite()));
}

/// A jittered grid (per-spring rest lengths), symplectic Euler, two garments side by side.
#[test]
fn jittered_grids_and_two_garments_are_bit_identical() {
    let mut a = scene("selfcollide", 20);
    a.params.self_collision = false;
    a.params.provot_limit = None;
    let mut b = scene("selfcollide", 20);
    b.params = a.params.clone();
    compare(&mut a, &mut b, 40, 2, &|_, _| {});

    let build = || {
        let mut s = scene("two_garments", 16);
        s.params.self_collision = false;
        s.params.provot_limit = None;
        s
    };
    let (mut a, mut b) = (build(), build());
    assert!(fused::eligible(&a.model, &a.state, &a.colliders, &a.params));
    compare(&mut a, &mut b, 40, 3, &|_, _| {});
}

/// Worlds the fused pass does not take run staged (and so still step correctly).
#[test]
fn ineligible_worlds_fall_back() {
    let s = scene("drop", 16);
    let ok = |s: &Scene| fused::eligible(&s.model, &s.state, &s.colliders, &s.params);
    assert!(ok(&s));
    let mut t = scene("drop", 16);
    t.params.self_collision = true;
    assert!(!ok(&t));
    let mut t = scene("drop", 16);
    t.params.provot_limit = Some(0.1);
    assert!(!ok(&t));
    let mut t = scene("drop", 16);
    t.params.contact_rounds = 2;
    assert!(!ok(&t));
    let t = scene("wind", 16);
    assert!(!ok(&t));
    let mut t = scene("drop", 16);
    for k in 0..8 {
        t.colliders.push(Collider::fixed(Shape::sphere(
            Vec3::new(k as f32, -2.0, 0.0),
            0.1,
        )));
    }
    assert!(!ok(&t));
    let mut t = scene("drop", 16);
    wet::saturate(&t.model, &mut t.state, &Fabric::COTTON, Region::All);
    assert!(!ok(&t));
}
