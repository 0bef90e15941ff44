//! Skinning throughput on a synthetic 28k-vertex, 4-influence mesh (a capsule chain of 8 bones
//! with smooth weights) and on the built-in ninja (rigs/ninja.glb, 28,607 vertices) posed
//! mid-roundhouse_kick, in vertices per second for each method, plus the CoR precompute.
//!
//! `cargo bench --no-default-features --bench skinning`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use drape::anim::Pose;
use drape::math::{Mat4, Quat};
use drape::skin::cor;
use drape::skin::synthetic::{capsule_chain, ChainSpec};
use drape::skin::{SkinMethod, Skinner};
use drape::Rig;
use std::hint::black_box;

fn spec() -> ChainSpec {
    // 217 rings × 128 segments + 2 caps × 129 = 28,034 vertices.
    ChainSpec {
        bones: 8,
        rings_per_bone: 27,
        segments: 128,
        influences: 4,
        falloff: 0.8,
        ..ChainSpec::default()
    }
}

fn skinning(c: &mut Criterion) {
    let rig = capsule_chain(&spec());
    let mesh = &rig.meshes[0];
    let n = mesh.positions.len();
    let mut skinner = Skinner::new(&rig);
    let t = std::time::Instant::now();
    let centers = cor::compute_centers(mesh, cor::DEFAULT_SIGMA, &mut |_| {});
    eprintln!(
        "CoR precompute: {n} vertices, {} with a centre, {:.3} s",
        centers.valid_count(),
        t.elapsed().as_secs_f64()
    );
    skinner.set_cor_centers(&rig, 0, centers);
    // The capsule's rings share weights, which the precompute deduplicates; real meshes rarely
    // do. Jitter every vertex's weights (deterministically) to time the worst case.
    let mut jittered = mesh.clone();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for w in &mut jittered.weights {
        for x in w.iter_mut().filter(|x| **x > 0.0) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *x *= 1.0 + 0.05 * ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5);
        }
        let sum: f32 = w.iter().sum();
        w.iter_mut().for_each(|x| *x /= sum);
    }
    let t = std::time::Instant::now();
    let jc = cor::compute_centers(&jittered, cor::DEFAULT_SIGMA, &mut |_| {});
    eprintln!(
        "CoR precompute, every vertex's weights distinct: {} with a centre, {:.3} s wall",
        jc.valid_count(),
        t.elapsed().as_secs_f64()
    );
    let mut pose = Pose::rest(&rig.skeleton);
    for b in 1..=8 {
        pose.local[b].rotation = Quat::from_rotation_z(0.2) * Quat::from_rotation_y(0.3 * b as f32);
    }
    let mut world = Vec::new();
    pose.world_from_node(&rig.skeleton, &mut world);

    report_one_thread("synthetic 28k", &rig, &mut skinner, &world);
    bench_methods(c, "skin_28k_4inf", &rig, &mut skinner, &world);

    let (ninja, ninja_world) = ninja_mid_kick();
    let mut ninja_skinner = Skinner::new(&ninja);
    // Through the disk cache: computed once, then read (the precompute is benchmarked below).
    ninja_skinner.prepare_cor(&ninja, &mut |_, _| {});
    report_one_thread(
        "ninja roundhouse_kick",
        &ninja,
        &mut ninja_skinner,
        &ninja_world,
    );
    bench_methods(
        c,
        "skin_ninja_roundhouse",
        &ninja,
        &mut ninja_skinner,
        &ninja_world,
    );

    let mut group = c.benchmark_group("cor_precompute_28k");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("compute_centers", |b| {
        b.iter(|| black_box(cor::compute_centers(mesh, cor::DEFAULT_SIGMA, &mut |_| {})))
    });
    group.finish();
}

/// The built-in ninja halfway through its roundhouse kick (legs and torso far from the bind
/// pose), and the forward kinematics of that pose.
fn ninja_mid_kick() -> (Rig, Vec<Mat4>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/rigs/ninja.glb");
    let rig = drape::asset::load_rig(std::path::Path::new(path)).expect("rigs/ninja.glb loads");
    let clip = &rig.clips[rig
        .clip("roundhouse_kick")
        .expect("the ninja has a roundhouse_kick")];
    let mut pose = Pose::rest(&rig.skeleton);
    clip.sample(0.5 * clip.duration(), &mut pose);
    let mut world = Vec::new();
    pose.world_from_node(&rig.skeleton, &mut world);
    (rig, world)
}

/// Criterion wall-clock throughput of every method (all threads of the global rayon pool).
fn bench_methods(c: &mut Criterion, name: &str, rig: &Rig, skinner: &mut Skinner, world: &[Mat4]) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(rig.vertex_count() as u64));
    for method in SkinMethod::ALL {
        group.bench_with_input(BenchmarkId::from_parameter(method), &method, |b, &m| {
            b.iter(|| {
                skinner.update(rig, black_box(world), m);
                black_box(skinner.positions(0)[0]);
            })
        });
    }
    group.finish();
}

/// The build machine is shared (load average often ≫ its 2 cores), so criterion's wall-clock
/// figures understate what a core does. This reports single-thread throughput per CPU-second of
/// the worker thread (from /proc/thread-self/stat), which descheduling does not inflate.
fn report_one_thread(label: &str, rig: &Rig, skinner: &mut Skinner, world: &[Mat4]) {
    let n = rig.vertex_count();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for method in SkinMethod::ALL {
        let (iters, cpu) = pool.install(|| {
            let t0 = thread_cpu_seconds();
            let wall = std::time::Instant::now();
            let mut iters = 0u64;
            while thread_cpu_seconds() - t0 < 2.0 && wall.elapsed().as_secs_f64() < 20.0 {
                for _ in 0..20 {
                    skinner.update(rig, black_box(world), method);
                    black_box(skinner.positions(0)[0]);
                }
                iters += 20;
            }
            (iters, thread_cpu_seconds() - t0)
        });
        eprintln!(
            "{label}, {method}: one thread, {:.1} M vertices per CPU-second ({iters} frames in {cpu:.2} s CPU)",
            (iters as f64 * n as f64) / cpu / 1e6
        );
    }
}

/// CPU time of the calling thread (user + system), 10 ms resolution; 0 where /proc is missing.
fn thread_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/thread-self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |r| r.1);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        f.get(i - 3)
            .and_then(|x| x.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(14) + ticks(15)) / 100.0
}

criterion_group!(benches, skinning);
criterion_main!(benches);
