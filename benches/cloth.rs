//! Cloth engine throughput on the benchmark scene `drop` (see `drape::cloth::scenes`):
//! one iteration = one frame (all its substeps); throughput in particle-substeps.
//! The scene restarts every 120 frames so the measurement covers the fall, the impact and the
//! draped cloth in their natural proportions.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use drape::cloth::scenes::{build_scene, Scene, SceneOptions};

fn scene(n: u32, self_collision: bool) -> Scene {
    build_scene(
        "drop",
        &SceneOptions {
            n,
            self_collision,
            ..SceneOptions::default()
        },
    )
    .unwrap()
}

fn drop(c: &mut Criterion) {
    let mut group = c.benchmark_group("cloth_drop");
    group.sample_size(10);
    for n in [32u32, 60, 100, 256] {
        for self_collision in [false, true] {
            let mut sc = scene(n, self_collision);
            let work = sc.model.len() as u64 * sc.params.substeps as u64;
            group.throughput(Throughput::Elements(work));
            let id = BenchmarkId::new(
                if self_collision {
                    "self_on"
                } else {
                    "self_off"
                },
                n,
            );
            group.bench_function(id, |b| {
                b.iter(|| {
                    if sc.state.frame >= 120 {
                        sc = scene(n, self_collision);
                    }
                    sc.step()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, drop);
criterion_main!(benches);
