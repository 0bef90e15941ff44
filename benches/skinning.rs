//! Skinning throughput on a synthetic 28k-vertex, 4-influence mesh (a capsule chain of 8 bones
//! with smooth weights), in vertices per second for each method, plus the CoR precompute.
//!
//! `cargo bench --no-default-features --bench skinning`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use drape::anim::Pose;
use drape::math::Quat;
use drape::skin::cor;
use drape::skin::synthetic::{capsule_chain, ChainSpec};
use drape::skin::{SkinMethod, Skinner};
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
    let mut pose = Pose::rest(&rig.skeleton);
    for b in 1..=8 {
        pose.local[b].rotation = Quat::from_rotation_z(0.2) * Quat::from_rotation_y(0.3 * b as f32);
    }
    let mut world = Vec::new();
    pose.world_from_node(&rig.skeleton, &mut world);

    let mut group = c.benchmark_group("skin_28k_4inf");
    group.throughput(Throughput::Elements(n as u64));
    for method in SkinMethod::ALL {
        group.bench_with_input(BenchmarkId::from_parameter(method), &method, |b, &m| {
            b.iter(|| {
                skinner.update(&rig, black_box(&world), m);
                black_box(skinner.positions(0)[0]);
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("cor_precompute_28k");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("compute_centers", |b| {
        b.iter(|| black_box(cor::compute_centers(mesh, cor::DEFAULT_SIGMA, &mut |_| {})))
    });
    group.finish();
}

criterion_group!(benches, skinning);
criterion_main!(benches);
