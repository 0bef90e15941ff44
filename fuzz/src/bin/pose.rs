//! AFL++ target `pose`: see `fuzz/targets.rs` for what it feeds and checks. Run with
//! `fuzz/run.sh pose`; without AFL the binary reads one input from stdin (to replay a crash).

#[path = "../../targets.rs"]
mod targets;

fn main() {
    afl::fuzz!(|data: &[u8]| targets::pose(data));
}
