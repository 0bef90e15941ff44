//! Outside tools some tests need (the Khronos glTF validator through node, a GPU adapter).
//! Without the tool such a test says it skipped — unless `DRAPE_REQUIRE_ALL=1` (set by CI), which
//! turns the skip into a failure so that CI never passes by silently not checking.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether CI asked for every check to run.
pub fn require_all() -> bool {
    std::env::var("DRAPE_REQUIRE_ALL").is_ok_and(|v| v == "1")
}

/// Skips (returns false) or fails, as [`require_all`] says, for a missing tool.
pub fn tool_missing(what: &str) -> bool {
    if require_all() {
        panic!("{what} is required (DRAPE_REQUIRE_ALL=1) but not available");
    }
    eprintln!("SKIPPED: {what} not available (set DRAPE_REQUIRE_ALL=1 to make this a failure)");
    false
}

/// A file of ../shared/rigs/cc0 (`DIR/FILE`, the freely licensed characters CI has beside the
/// checkout): its path, or `None` after [`tool_missing`] (a skip, or a failure under
/// `DRAPE_REQUIRE_ALL=1`) when the folder is not there.
pub fn cc0_file(rel: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = [
        root.join("../shared/rigs/cc0"),
        root.join("../../shared/rigs/cc0"),
    ]
    .into_iter()
    .map(|d| d.join(rel))
    .find(|p| p.exists());
    if found.is_none() {
        tool_missing(&format!("../shared/rigs/cc0/{rel}"));
    }
    found
}

/// The folder holding the `gltf-validator` npm package: `$DRAPE_GLTF_VALIDATOR_DIR`
/// (its node_modules folder), or /tmp/gv/node_modules.
pub fn validator_modules() -> Option<PathBuf> {
    let dirs = [
        std::env::var("DRAPE_GLTF_VALIDATOR_DIR")
            .ok()
            .map(PathBuf::from),
        Some(PathBuf::from("/tmp/gv/node_modules")),
    ];
    dirs.into_iter()
        .flatten()
        .find(|d| d.join("gltf-validator").is_dir())
}

/// Runs the Khronos validator (strict: warnings fail too) on `file`; `None` when it is not
/// available and the test may skip. Returns the report text on failure.
pub fn validate_gltf(file: &Path) -> Option<Result<String, String>> {
    let modules = validator_modules()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/validate-gltf.mjs");
    let out = Command::new("node")
        .arg(script)
        .arg("--strict")
        .arg(file)
        .env("NODE_PATH", &modules)
        .output()
        .ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    })
}

/// The node_modules folder holding three.js (npm `three`, the version `.ci/run` installs):
/// `$DRAPE_THREE_DIR`, or /tmp/drape-ci-tools/node_modules.
pub fn three_modules() -> Option<PathBuf> {
    let dirs = [
        std::env::var("DRAPE_THREE_DIR").ok().map(PathBuf::from),
        Some(PathBuf::from("/tmp/drape-ci-tools/node_modules")),
    ];
    dirs.into_iter()
        .flatten()
        .find(|d| d.join("three/examples/jsm/loaders/GLTFLoader.js").is_file())
}

/// Runs tests/support/three-check.mjs (three.js's GLTFLoader and AnimationMixer under node) on
/// `file` at `times`: `None` when three.js or node is not available and the test may skip;
/// `Err` with node's output when three.js cannot load the file; else its JSON report.
pub fn three_check(file: &Path, times: &[f32]) -> Option<Result<serde_json::Value, String>> {
    let modules = three_modules()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/three-check.mjs");
    let times: Vec<String> = times.iter().map(|t| t.to_string()).collect();
    let out = Command::new("node")
        .arg(script)
        .arg(file)
        .arg(times.join(","))
        .env("DRAPE_THREE_DIR", &modules)
        .output()
        .ok()?;
    if !out.status.success() {
        return Some(Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Some(serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "three-check printed no JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    }))
}
