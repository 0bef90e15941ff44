//! Loading a Mixamo-sized character: a GLB of about 3.5 MB with 28,000 skinned vertices
//! (positions, normals, UVs, u8 joints, f32 weights), 50,000 triangles, 67 joints and 7 clips of
//! 67 × 3 LINEAR channels at 30 fps (2 s each). Target: well under 30 ms per load.
//!
//!     cargo bench --no-default-features --bench load

#[path = "../tests/support/gltf_builder.rs"]
mod builder;

use criterion::{criterion_group, criterion_main, Criterion};
use drape::asset::{load_rig_from_slice, LoadOptions};
use serde_json::json;

fn mixamo_sized_glb() -> Vec<u8> {
    const JOINTS: usize = 67;
    const SIDE: usize = 168; // 168 × 168 = 28,224 vertices
    const CLIPS: usize = 7;
    const KEYS: usize = 60;
    let mut b = builder::Builder::new();
    let n = SIDE * SIDE;
    let (mut pos, mut nrm, mut uv, mut jnt, mut wgt) = (vec![], vec![], vec![], vec![], vec![]);
    for i in 0..n {
        let (x, y) = (
            (i % SIDE) as f32 / SIDE as f32,
            (i / SIDE) as f32 / SIDE as f32,
        );
        pos.extend_from_slice(&[x, y * 1.8, (x * 6.0).sin() * 0.1]);
        nrm.extend_from_slice(&[0.0, 0.0, 1.0]);
        uv.extend_from_slice(&[x, y]);
        let j = (i / 421) % JOINTS;
        jnt.extend_from_slice(&[j as u8, ((j + 1) % JOINTS) as u8, 0, 0]);
        wgt.extend_from_slice(&[0.7, 0.3, 0.0, 0.0]);
    }
    let mut idx = Vec::new();
    for r in 0..SIDE - 1 {
        for c in 0..SIDE - 1 {
            let v = (r * SIDE + c) as u32;
            let s = SIDE as u32;
            idx.extend_from_slice(&[v, v + 1, v + s, v + 1, v + s + 1, v + s]);
        }
    }
    let a_pos = b.f32s(&pos, "VEC3");
    let a_nrm = b.f32s(&nrm, "VEC3");
    let a_uv = b.f32s(&uv, "VEC2");
    let a_jnt = b.u8s(&jnt, "VEC4", false);
    let a_wgt = b.f32s(&wgt, "VEC4");
    let a_idx = b.u32s(&idx, "SCALAR");
    let ibm: Vec<f32> = (0..JOINTS)
        .flat_map(|j| {
            let mut m = [0f32; 16];
            m[0] = 1.0;
            m[5] = 1.0;
            m[10] = 1.0;
            m[15] = 1.0;
            m[13] = -(j as f32) * 0.02;
            m
        })
        .collect();
    let a_ibm = b.f32s(&ibm, "MAT4");
    let mut nodes =
        vec![json!({"name": "Armature", "scale": [0.01, 0.01, 0.01], "children": [1, JOINTS + 1]})];
    for j in 0..JOINTS {
        let mut node =
            json!({"name": format!("mixamorig:Joint{j}"), "translation": [0.0, 2.0, 0.0]});
        if j + 1 < JOINTS {
            node["children"] = json!([j + 2]);
        }
        nodes.push(node);
    }
    nodes.push(json!({"name": "Body", "mesh": 0, "skin": 0}));
    let times: Vec<f32> = (0..KEYS).map(|k| (k + 1) as f32 / 30.0).collect();
    let mut animations = Vec::new();
    for c in 0..CLIPS {
        let (mut channels, mut samplers) = (vec![], vec![]);
        let a_t = b.f32s(&times, "SCALAR");
        for j in 0..JOINTS {
            let t: Vec<f32> = (0..KEYS * 3).map(|k| (k + c) as f32 * 0.01).collect();
            let r: Vec<f32> = (0..KEYS)
                .flat_map(|k| {
                    let a = (k + j) as f32 * 0.05;
                    [0.0, a.sin(), 0.0, a.cos()]
                })
                .collect();
            let s: Vec<f32> = vec![1.0; KEYS * 3];
            for (path, out) in [
                ("translation", b.f32s(&t, "VEC3")),
                ("rotation", b.f32s(&r, "VEC4")),
                ("scale", b.f32s(&s, "VEC3")),
            ] {
                channels.push(
                    json!({"sampler": samplers.len(), "target": {"node": j + 1, "path": path}}),
                );
                samplers.push(json!({"input": a_t, "output": out}));
            }
        }
        animations
            .push(json!({"name": format!("clip {c}"), "channels": channels, "samplers": samplers}));
    }
    let rest = json!({
        "nodes": nodes,
        "meshes": [{"name": "body", "primitives": [{
            "attributes": {"POSITION": a_pos, "NORMAL": a_nrm, "TEXCOORD_0": a_uv, "JOINTS_0": a_jnt, "WEIGHTS_0": a_wgt},
            "indices": a_idx
        }]}],
        "skins": [{"joints": (1..=JOINTS).collect::<Vec<_>>(), "inverseBindMatrices": a_ibm}],
        "animations": animations
    });
    b.glb(&rest)
}

fn bench(c: &mut Criterion) {
    let glb = mixamo_sized_glb();
    let opts = LoadOptions::default();
    let rig = load_rig_from_slice(&glb, None, "bench.glb", &opts).unwrap();
    assert_eq!(rig.vertex_count(), 28_224);
    assert_eq!(rig.clips.len(), 7);
    eprintln!(
        "bench file: {:.2} MB, {} vertices, {} clips",
        glb.len() as f64 / 1e6,
        rig.vertex_count(),
        rig.clips.len()
    );
    c.bench_function("load_glb_28k_vertices_7_clips", |bch| {
        bch.iter(|| {
            load_rig_from_slice(std::hint::black_box(&glb), None, "bench.glb", &opts).unwrap()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
