//! AFL++ target `gltf`: see `fuzz/targets.rs` for what it feeds and checks. Run with
//! `fuzz/run.sh gltf`; without AFL the binary reads one input from stdin (to replay a crash).

#[path = "../../targets.rs"]
mod targets;

fn main() {
    afl::fuzz!(|data: &[u8]| targets::gltf(data));
}
