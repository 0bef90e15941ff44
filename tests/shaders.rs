//! Every `shaders/*.wgsl` parses and validates with naga, on the CPU (no GPU needed). Files that
//! start with `// #import common.wgsl` are validated as common.wgsl + the file, as the renderer
//! compiles them; errors are reported against the file's own line numbers.

use std::path::Path;

const IMPORT_COMMON: &str = "// #import common.wgsl";

fn validate(name: &str, source: &str, prefix: &str) -> Result<naga::valid::ModuleInfo, String> {
    let full = format!("{prefix}{source}");
    let prefix_lines = prefix.lines().count();
    let module = naga::front::wgsl::parse_str(&full).map_err(|e| {
        let at = e
            .location(&full)
            .map(|l| l.line_number as usize)
            .map(|l| {
                if l > prefix_lines {
                    format!("{name}:{}", l - prefix_lines)
                } else {
                    format!("common.wgsl:{l}")
                }
            })
            .unwrap_or_else(|| name.to_string());
        format!("{at}: parse error: {}", e.emit_to_string(&full))
    })?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map_err(|e| {
        let at = e
            .spans()
            .next()
            .map(|(span, _)| span.location(&full).line_number as usize)
            .map(|l| {
                if l > prefix_lines {
                    format!("{name}:{}", l - prefix_lines)
                } else {
                    format!("common.wgsl:{l}")
                }
            })
            .unwrap_or_else(|| name.to_string());
        format!("{at}: validation error: {}", e.emit_to_string(&full))
    })
}

#[test]
fn every_shader_parses_and_validates() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let common = std::fs::read_to_string(dir.join("common.wgsl")).expect("shaders/common.wgsl");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("shaders/")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "wgsl"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 11,
        "expected the whole suite in shaders/, found {names:?}"
    );
    let mut failures = Vec::new();
    for path in &names {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let source = std::fs::read_to_string(path).unwrap();
        let imports = source.lines().next().map(str::trim) == Some(IMPORT_COMMON);
        let prefix = if imports {
            format!("{common}\n")
        } else {
            String::new()
        };
        if let Err(e) = validate(&name, &source, &prefix) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn shaders_have_the_entry_points_the_renderer_uses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let common = std::fs::read_to_string(dir.join("common.wgsl")).unwrap();
    let expect: &[(&str, &[(&str, naga::ShaderStage)])] = &[
        (
            "wireframe.wgsl",
            &[
                ("vs_main", naga::ShaderStage::Vertex),
                ("fs_main", naga::ShaderStage::Fragment),
            ],
        ),
        (
            "normals.wgsl",
            &[
                ("vs_main", naga::ShaderStage::Vertex),
                ("fs_main", naga::ShaderStage::Fragment),
            ],
        ),
        (
            "phong.wgsl",
            &[
                ("vs_main", naga::ShaderStage::Vertex),
                ("fs_main", naga::ShaderStage::Fragment),
            ],
        ),
        (
            "texture.wgsl",
            &[
                ("vs_main", naga::ShaderStage::Vertex),
                ("fs_main", naga::ShaderStage::Fragment),
            ],
        ),
        (
            "bump.wgsl",
            &[
                ("vs_main", naga::ShaderStage::Vertex),
                ("fs_main", naga::ShaderStage::Fragment),
            ],
        ),
        (
            "displace.wgsl",
            &[
                ("vs_main", naga::ShaderStage::Vertex),
                ("fs_main", naga::ShaderStage::Fragment),
            ],
        ),
        (
            "mirror.wgsl",
            &[
                ("vs_main", naga::ShaderStage::Vertex),
                ("fs_main", naga::ShaderStage::Fragment),
            ],
        ),
        (
            "toon.wgsl",
            &[
                ("vs_main", naga::ShaderStage::Vertex),
                ("fs_main", naga::ShaderStage::Fragment),
            ],
        ),
        ("shadow.wgsl", &[("vs_main", naga::ShaderStage::Vertex)]),
        (
            "debug.wgsl",
            &[
                ("vs_line", naga::ShaderStage::Vertex),
                ("fs_line", naga::ShaderStage::Fragment),
                ("vs_solid", naga::ShaderStage::Vertex),
                ("fs_solid", naga::ShaderStage::Fragment),
            ],
        ),
        ("skin.wgsl", &[("skin_main", naga::ShaderStage::Compute)]),
        (
            "sky.wgsl",
            &[
                ("vs_sky", naga::ShaderStage::Vertex),
                ("fs_sky", naga::ShaderStage::Fragment),
            ],
        ),
    ];
    for (file, entries) in expect {
        let source = std::fs::read_to_string(dir.join(file)).unwrap();
        let full = if source.starts_with(IMPORT_COMMON) {
            format!("{common}\n{source}")
        } else {
            source
        };
        let module = naga::front::wgsl::parse_str(&full).unwrap_or_else(|e| panic!("{file}: {e}"));
        for (name, stage) in *entries {
            assert!(
                module
                    .entry_points
                    .iter()
                    .any(|ep| ep.name == *name && ep.stage == *stage),
                "{file} lacks entry point {name} ({stage:?})"
            );
        }
    }
}

/// The validator must be able to fail: a shader with a type error is rejected and the error
/// points at the right line of the right file.
#[test]
fn a_broken_shader_is_reported_at_its_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let common = std::fs::read_to_string(dir.join("common.wgsl")).unwrap();
    let broken = "// #import common.wgsl\n@fragment\nfn fs_main() -> @location(0) vec4<f32> {\n    return vec3<f32>(1.0);\n}\n";
    let err = validate("broken.wgsl", broken, &format!("{common}\n")).unwrap_err();
    assert!(err.starts_with("broken.wgsl:4"), "{err}");
}
