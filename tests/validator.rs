//! The Khronos glTF-Validator on what drape writes: the committed built-in rig must have no
//! errors and no warnings.

#[path = "support/tools.rs"]
mod tools;

use std::path::Path;

use tools::{tool_missing, validate_gltf};

#[test]
fn ninja_glb_passes_the_khronos_validator() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("rigs/ninja.glb");
    match validate_gltf(&file) {
        None => {
            tool_missing("the Khronos glTF validator (npm gltf-validator + node)");
        }
        Some(Ok(report)) => println!("{report}"),
        Some(Err(report)) => panic!("the validator rejects {}:\n{report}", file.display()),
    }
}
