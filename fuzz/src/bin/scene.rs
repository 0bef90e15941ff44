//! AFL++ target `scene`: see `fuzz/targets.rs` for what it feeds and checks. Run with
//! `fuzz/run.sh scene`; without AFL the binary reads one input from stdin (to replay a crash).

#[path = "../../targets.rs"]
mod targets;

fn main() {
    afl::fuzz!(|data: &[u8]| targets::scene(data));
}
