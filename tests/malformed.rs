//! Damaged and hostile files: each must give an error that names the file and the problem, and
//! none may panic (every load runs inside `catch_unwind`). Then a mutation loop over a valid GLB.

#[path = "support/gltf_builder.rs"]
mod builder;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use drape::asset::{load_rig_from_slice, AssetError, LoadOptions};
use drape::Rig;
use serde_json::{json, Value};

fn try_load(
    bytes: &[u8],
    base: Option<&Path>,
    label: &str,
    opts: &LoadOptions,
) -> Result<Rig, AssetError> {
    match catch_unwind(AssertUnwindSafe(|| {
        load_rig_from_slice(bytes, base, label, opts)
    })) {
        Ok(r) => r,
        Err(_) => panic!("{label}: the loader panicked"),
    }
}

/// Loads `bytes` and asserts an error whose message names `label` and contains every `needles`.
#[track_caller]
fn expect_err(bytes: &[u8], label: &str, needles: &[&str]) -> AssetError {
    expect_err_with(bytes, None, label, &LoadOptions::default(), needles)
}

#[track_caller]
fn expect_err_with(
    bytes: &[u8],
    base: Option<&Path>,
    label: &str,
    opts: &LoadOptions,
    needles: &[&str],
) -> AssetError {
    let e = match try_load(bytes, base, label, opts) {
        Ok(_) => panic!("{label}: loaded, but an error was expected ({needles:?})"),
        Err(e) => e,
    };
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("{label}: ")),
        "message must name the file: {msg}"
    );
    for n in needles {
        assert!(msg.contains(n), "{label}: message {msg:?} lacks {n:?}");
    }
    e
}

fn quad() -> (builder::Builder, Value) {
    builder::skinned_quad("mixamorig:")
}

#[test]
fn the_valid_base_file_loads() {
    // The mutations below start from this file; it must load cleanly.
    let (b, rest) = quad();
    for bytes in [b.glb(&rest), b.gltf(&rest)] {
        let rig = try_load(&bytes, None, "base", &LoadOptions::default()).unwrap();
        assert_eq!(rig.meshes[0].vertex_count(), 4);
    }
}

#[test]
fn glb_container_errors() {
    let (b, rest) = quad();
    let good = b.glb(&rest);
    for n in (0..good.len()).step_by(1) {
        let e = expect_err(&good[..n], "cut.glb", &[]);
        let m = e.to_string();
        assert!(
            m.contains("truncated") || m.contains("neither a GLB") || m.contains("empty"),
            "length {n}: {m}"
        );
    }
    let mut bad = good.clone();
    bad[0] = b'X';
    expect_err(&bad, "magic.glb", &["neither a GLB file", "magic"]);
    let mut bad = good.clone();
    bad[3] = b'X';
    expect_err(&bad, "magic2.bin", &["neither a GLB file", "magic"]);
    let mut bad = good.clone();
    bad[4..8].copy_from_slice(&1u32.to_le_bytes());
    expect_err(&bad, "version.glb", &["GLB version 1"]);
    let mut bad = good.clone();
    bad[12..16].copy_from_slice(&(good.len() as u32).to_le_bytes());
    expect_err(&bad, "chunk.glb", &["chunk 0", "declares"]);
    let mut bad = good.clone();
    bad[16..20].copy_from_slice(b"BIN\0");
    expect_err(&bad, "first.glb", &["first GLB chunk must be JSON"]);
    // BIN chunk shorter than the buffer's byteLength.
    let doc: Value = json!({"asset": {"version": "2.0"}, "buffers": [{"byteLength": 1000}]});
    let g = builder::glb_bytes(&serde_json::to_vec(&doc).unwrap(), Some(&[0u8; 16]));
    expect_err(
        &g,
        "short.glb",
        &["buffer 0", "byteLength 1000", "16 bytes"],
    );
    let g = builder::glb_bytes(&serde_json::to_vec(&doc).unwrap(), None);
    expect_err(&g, "nobin.glb", &["buffer 0", "no uri"]);
}

#[test]
fn json_errors() {
    expect_err(b"", "empty.gltf", &["empty"]);
    expect_err(b"PK\x03\x04zip", "zip.gltf", &["neither a GLB file"]);
    expect_err(
        b"{\"asset\": {\"version\": \"2.0\"",
        "syntax.gltf",
        &["invalid glTF JSON", "line"],
    );
    expect_err(b"{\"nodes\": []}", "noasset.gltf", &["asset"]);
    expect_err(
        b"{\"asset\": {\"version\": \"1.0\"}}",
        "v1.gltf",
        &["version \"1.0\""],
    );
    expect_err(
        b"{\"asset\": {\"version\": \"2.0\"}, \"accessors\": [{\"count\": -1, \"componentType\": 5126, \"type\": \"SCALAR\"}]}",
        "neg.gltf",
        &["JSON"],
    );
}

/// Applies `f` to the quad's document (rest JSON + builder) and expects an error.
#[track_caller]
fn mutate(label: &str, needles: &[&str], f: impl FnOnce(&mut builder::Builder, &mut Value)) {
    let (mut b, mut rest) = quad();
    f(&mut b, &mut rest);
    expect_err(&b.gltf(&rest), label, needles);
}

#[test]
fn index_and_size_errors() {
    mutate(
        "acc.gltf",
        &[
            "POSITION of mesh 0 primitive 0",
            "accessor 99",
            "the file has 7",
        ],
        |_, r| {
            r["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(99);
        },
    );
    mutate(
        "short.gltf",
        &[
            "accessor 0 (POSITION of mesh 0 primitive 0)",
            "needs",
            "but buffer view 0 has 48",
        ],
        |b, _| {
            b.accessors[0]["count"] = json!(5);
        },
    );
    // 4 billion vertices claimed by a ~2 KB file: refused before any allocation.
    mutate("huge.gltf", &["accessor 0", "4000000000"], |b, _| {
        b.accessors[0]["count"] = json!(4_000_000_000u64);
    });
    // Without a buffer view the data would be zeros: the memory budget refuses it.
    mutate("zeros.gltf", &["POSITION", "max_total_bytes"], |b, r| {
        b.accessors[0] = json!({"componentType": 5126, "count": 4_000_000_000u64, "type": "VEC3"});
        r["meshes"][0]["primitives"][0] = json!({"attributes": {"POSITION": 0}});
    });
    mutate(
        "view.gltf",
        &["buffer view 0 spans bytes", "but buffer 0 has"],
        |b, _| {
            b.views[0]["byteLength"] = json!(1_000_000);
        },
    );
    mutate("viewidx.gltf", &["refers to buffer view 42"], |b, _| {
        b.accessors[0]["bufferView"] = json!(42);
    });
    mutate(
        "bufidx.gltf",
        &["buffer view 0 refers to buffer 3"],
        |b, _| {
            b.views[0]["buffer"] = json!(3);
        },
    );
    mutate("stride.gltf", &["byteStride 4", "12 bytes"], |b, _| {
        b.views[0]["byteStride"] = json!(4);
    });
    mutate(
        "index.gltf",
        &["index 2 of mesh 0 primitive 0", "is 7", "4 vertices"],
        |b, _| {
            let v = b.view(&[0u8, 0, 1, 0, 7, 0], None);
            let a = b.accessor(v, builder::UNSIGNED_SHORT, 3, "SCALAR", false);
            b.accessors[1] = b.accessors[a].clone();
        },
    );
    mutate("idxtype.gltf", &["indices", "FLOAT"], |b, _| {
        b.accessors[1]["componentType"] = json!(builder::FLOAT);
        b.accessors[1]["count"] = json!(3);
    });
    mutate(
        "count.gltf",
        &["JOINTS_0", "3 elements but POSITION has 4"],
        |b, _| {
            b.accessors[2]["count"] = json!(3);
        },
    );
    mutate("material.gltf", &["uses material 5"], |_, r| {
        r["meshes"][0]["primitives"][0]["material"] = json!(5);
    });
    mutate("mesh.gltf", &["node 3 uses mesh 9"], |_, r| {
        r["nodes"][3]["mesh"] = json!(9);
    });
    mutate("skin.gltf", &["node 3 uses skin 4"], |_, r| {
        r["nodes"][3]["skin"] = json!(4);
    });
    mutate("ctype.gltf", &["invalid componentType"], |b, _| {
        b.accessors[0]["componentType"] = json!(1234);
    });
    mutate(
        "sparse.gltf",
        &["sparse index", "beyond the accessor count"],
        |b, _| {
            let iv = b.view(&[9u8, 0], None);
            let vv = b.view(&[0u8; 12], None);
            b.accessors[0]["sparse"] = json!({"count": 1, "indices": {"bufferView": iv, "componentType": builder::UNSIGNED_SHORT}, "values": {"bufferView": vv}});
        },
    );
}

#[test]
fn uri_errors() {
    let with_uri = |uri: &str| {
        let (b, rest) = quad();
        let mut doc: Value = serde_json::from_slice(&b.gltf(&rest)).unwrap();
        doc["buffers"][0]["uri"] = json!(uri);
        serde_json::to_vec(&doc).unwrap()
    };
    let dir = std::env::temp_dir().join(format!("drape-malformed-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("inner")).unwrap();
    std::fs::write(dir.join("outside.bin"), [0u8; 64]).unwrap();
    let inner = dir.join("inner");
    let opts = LoadOptions::default();
    expect_err_with(
        &with_uri("missing.bin"),
        Some(&inner),
        "missing.gltf",
        &opts,
        &["cannot read buffer 0"],
    );
    expect_err_with(
        &with_uri("../outside.bin"),
        Some(&inner),
        "dotdot.gltf",
        &opts,
        &["refusing URI", "'..'"],
    );
    expect_err_with(
        &with_uri("%2E%2E/outside.bin"),
        Some(&inner),
        "pct.gltf",
        &opts,
        &["refusing URI"],
    );
    expect_err_with(
        &with_uri("..%5Coutside.bin"),
        Some(&inner),
        "bs.gltf",
        &opts,
        &["refusing URI"],
    );
    let abs = dir.join("outside.bin").display().to_string();
    expect_err_with(
        &with_uri(&abs),
        Some(&inner),
        "abs.gltf",
        &opts,
        &["refusing URI", "absolute"],
    );
    expect_err_with(
        &with_uri("file:///etc/passwd"),
        Some(&inner),
        "file.gltf",
        &opts,
        &["refusing URI"],
    );
    expect_err_with(
        &with_uri("https://example.com/a.bin"),
        Some(&inner),
        "http.gltf",
        &opts,
        &["refusing URI"],
    );
    expect_err_with(
        &with_uri("data:application/octet-stream;base64,@@@@"),
        None,
        "b64.gltf",
        &opts,
        &["base64"],
    );
    expect_err_with(
        &with_uri("data:application/octet-stream,abc"),
        None,
        "nob64.gltf",
        &opts,
        &["base64"],
    );
    // Allowed on request: the file is read (and is then too short for the accessors).
    let allow = LoadOptions {
        allow_outside_uris: true,
        ..Default::default()
    };
    expect_err_with(
        &with_uri("../outside.bin"),
        Some(&inner),
        "allowed.gltf",
        &allow,
        &["buffer 0", "byteLength"],
    );
    #[cfg(unix)]
    {
        // A symbolic link inside the folder that points out of it is refused too.
        let link = inner.join("link.bin");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(dir.join("outside.bin"), &link).unwrap();
        expect_err_with(
            &with_uri("link.bin"),
            Some(&inner),
            "link.gltf",
            &opts,
            &["refusing URI", "symbolic link"],
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn skin_node_and_extension_errors() {
    mutate(
        "nan.gltf",
        &["inverse bind matrix 1 of skin 0", "NaN"],
        |b, r| {
            let mut m = [0f32; 32];
            m[0] = 1.0;
            m[16 + 5] = f32::NAN;
            let ibm = b.f32s(&m, "MAT4");
            r["skins"][0]["inverseBindMatrices"] = json!(ibm);
        },
    );
    mutate(
        "ibmcount.gltf",
        &["has 1 matrices but skin 0 has 2 joints"],
        |b, r| {
            let ibm = b.f32s(&[0f32; 16], "MAT4");
            r["skins"][0]["inverseBindMatrices"] = json!(ibm);
        },
    );
    mutate(
        "joint.gltf",
        &[
            "JOINTS_0 of mesh 0 primitive 0 vertex 0",
            "joint 7",
            "2 joints",
        ],
        |b, _| {
            let j = b.u8s(
                &[7, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0],
                "VEC4",
                false,
            );
            b.accessors[2] = b.accessors[j].clone();
        },
    );
    mutate("jointnode.gltf", &["skin 0 has joint node 77"], |_, r| {
        r["skins"][0]["joints"] = json!([1, 77]);
    });
    mutate("draco.gltf", &["KHR_draco_mesh_compression"], |_, r| {
        r["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
        r["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
    });
    mutate("meshopt.gltf", &["EXT_meshopt_compression"], |_, r| {
        r["extensionsRequired"] = json!(["EXT_meshopt_compression"]);
    });
    mutate(
        "draco2.gltf",
        &["KHR_draco_mesh_compression", "no uncompressed fallback"],
        |b, r| {
            // Used but not required, with an accessor that has no data.
            b.accessors[0] = json!({"componentType": 5126, "count": 4, "type": "VEC3"});
            r["meshes"][0]["primitives"][0]["extensions"] = json!({"KHR_draco_mesh_compression": {"bufferView": 0, "attributes": {"POSITION": 0}}});
        },
    );
    mutate("cycle.gltf", &["cycle"], |_, r| {
        // 1 → 2 → 1, detached from the root.
        r["nodes"][0]["children"] = json!([3]);
        r["nodes"][2]["children"] = json!([1]);
    });
    mutate("self.gltf", &["node 2 is its own child"], |_, r| {
        r["nodes"][2]["children"] = json!([2]);
    });
    mutate("parents.gltf", &["node 2 has two parents"], |_, r| {
        r["nodes"][0]["children"] = json!([1, 2, 3]);
    });
    mutate("child.gltf", &["node 0 has child 40"], |_, r| {
        r["nodes"][0]["children"] = json!([40]);
    });
    mutate("nanmatrix.gltf", &["node 1", "matrix"], |_, r| {
        r["nodes"][1]["matrix"] = json!([1.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1e39, 0, 0, 1]);
    });
}

#[test]
fn animation_errors() {
    mutate(
        "counts.gltf",
        &["sampler 0 of animation 0", "3 keys", "accessor 6 has 2"],
        |b, _| {
            b.accessors[6]["count"] = json!(2);
        },
    );
    mutate("cubic.gltf", &["CUBICSPLINE: 3 per key"], |_, r| {
        r["animations"][0]["samplers"][0]["interpolation"] = json!("CUBICSPLINE");
    });
    mutate("times.gltf", &["decrease at key 2"], |b, r| {
        let t = b.f32s(&[0.0, 0.5, 0.25], "SCALAR");
        r["animations"][0]["samplers"][0]["input"] = json!(t);
    });
    mutate("inf.gltf", &["key time 1", "not finite"], |b, r| {
        let t = b.f32s(&[0.0, f32::INFINITY, 1.0], "SCALAR");
        r["animations"][0]["samplers"][0]["input"] = json!(t);
    });
    mutate("target.gltf", &["targets node 12"], |_, r| {
        r["animations"][0]["channels"][0]["target"]["node"] = json!(12);
    });
    mutate("sampler.gltf", &["uses sampler 3"], |_, r| {
        r["animations"][0]["channels"][0]["sampler"] = json!(3);
    });
    mutate("interp.gltf", &["JSON"], |_, r| {
        r["animations"][0]["samplers"][0]["interpolation"] = json!(17);
    });
}

/// A tiny deterministic generator (xorshift64*), so that failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn mutation_loop_never_panics() {
    let (b, rest) = quad();
    let glb = b.glb(&rest);
    let text = b.gltf(&rest);
    let opts = LoadOptions {
        max_total_bytes: 64 << 20,
        ..Default::default()
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut errors = 0;
    let mut variants = 0;
    // Errors found past the JSON parser (bad sizes, indices, hierarchy, keys …).
    let mut deep = 0;

    // 1. Byte-level damage to the GLB: flips, overwrites with extreme values, truncation.
    for _ in 0..2500 {
        let mut f = glb.clone();
        match rng.below(4) {
            0 => {
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(f.len());
                    f[i] ^= 1 << rng.below(8);
                }
            }
            1 => {
                let i = rng.below(f.len().saturating_sub(4));
                let v = [0u32, 1, 0x7FFF_FFFF, 0xFFFF_FFFF, 0x8000_0000, 3][rng.below(6)];
                f[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            2 => f.truncate(rng.below(f.len())),
            _ => {
                // Damage the binary chunk only: the JSON stays valid, the data does not.
                let bin_start = f.len() - b.bin.len().next_multiple_of(4);
                for _ in 0..1 + rng.below(8) {
                    let i = bin_start + rng.below(f.len() - bin_start);
                    f[i] = rng.next() as u8;
                }
            }
        }
        variants += 1;
        errors += try_load(&f, None, "mut.glb", &opts).is_err() as usize;
    }

    // 2. JSON-level damage: replace numbers with hostile ones, so that the damage reaches the
    //    accessor reader, the hierarchy and the animation code instead of the JSON parser.
    let s = String::from_utf8(text).unwrap();
    let numbers: Vec<(usize, usize)> = {
        let bytes = s.as_bytes();
        let mut v = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_digit() || b".eE-".contains(&bytes[i]))
                {
                    i += 1;
                }
                v.push((start, i));
            } else {
                i += 1;
            }
        }
        v
    };
    assert!(numbers.len() > 30);
    let hostile = [
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
        "16",
        "255",
        "65535",
        "4294967295",
        "4000000000",
        "18446744073709551615",
        "5120",
        "5121",
        "5123",
        "5125",
        "5126",
        "1e30",
        "-1",
        "0.5",
    ];
    for _ in 0..1500 {
        let mut m = s.clone();
        let mut picks: Vec<usize> = (0..1 + rng.below(3))
            .map(|_| rng.below(numbers.len()))
            .collect();
        picks.sort_unstable();
        picks.dedup();
        for &k in picks.iter().rev() {
            let (a, z) = numbers[k];
            m.replace_range(a..z, hostile[rng.below(hostile.len())]);
        }
        variants += 1;
        if let Err(e) = try_load(m.as_bytes(), None, "mut.gltf", &opts) {
            errors += 1;
            deep += !e.to_string().contains("JSON") as usize;
            if std::env::var_os("DRAPE_SHOW_MUTATIONS").is_some() {
                eprintln!("{e}");
            }
        }
    }
    assert_eq!(variants, 4000);
    // Most variants are broken; some survive (a changed weight, a flipped mantissa bit).
    assert!(
        errors > 1000 && errors < variants,
        "{errors} errors of {variants}"
    );
    assert!(deep > 500, "only {deep} mutations got past the JSON parser");
}

#[test]
fn truncated_real_glb_never_panics() {
    let p = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/rigs/khronos/RiggedSimple/RiggedSimple.glb"
    ));
    let f = std::fs::read(p).unwrap();
    let opts = LoadOptions::default();
    for k in 0..200 {
        let n = k * f.len() / 200;
        let e = try_load(&f[..n], None, "RiggedSimple.glb", &opts).unwrap_err();
        assert!(e.to_string().starts_with("RiggedSimple.glb: "));
    }
}

#[test]
fn memory_budget_is_enforced() {
    let p = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/rigs/khronos/Fox/Fox.glb"
    ));
    // The 1024² texture alone needs 4 MiB decoded.
    let opts = LoadOptions {
        max_total_bytes: 1 << 20,
        ..Default::default()
    };
    let e = match catch_unwind(|| drape::asset::load_rig_with(p, &opts)) {
        Ok(r) => r.unwrap_err(),
        Err(_) => panic!("panicked"),
    };
    assert!(matches!(e, AssetError::TooLarge { .. }), "{e}");
    let m = e.to_string();
    assert!(
        m.starts_with("Fox.glb: image 0 needs 4194304 bytes") && m.contains("max_total_bytes"),
        "{m}"
    );
    // Without textures the same budget suffices.
    let opts = LoadOptions {
        decode_textures: false,
        ..opts
    };
    let rig = drape::asset::load_rig_with(p, &opts).unwrap();
    assert!(rig.textures.is_empty() && rig.materials[0].base_color_texture.is_none());
    // A file larger than the whole budget is refused before it is read.
    let opts = LoadOptions {
        max_total_bytes: 1000,
        ..Default::default()
    };
    let e = drape::asset::load_rig_with(p, &opts).unwrap_err();
    assert!(matches!(e, AssetError::TooLarge { .. }), "{e}");
}
