//! What every model's frame shares: the loop over a frame's substeps (run inside the thread
//! pool, then the clock, the frame count and the pins' hold), the counters a frame reports and
//! the per-stage timings.

use crate::cloth::params::SimParams;
use crate::cloth::state::ClothState;
use crate::cloth::workspace::ClothWorkspace;

/// Counters from the last substep of a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepStats {
    /// Particles in contact with (or within the contact margin of) a collider.
    pub contacts: u32,
    /// Particle pairs pushed apart by self/garment–garment collision (counted from both sides).
    pub self_pairs: u32,
    /// Particles whose substep displacement hit the speed limit (should be 0).
    pub speed_limited: u32,
}

/// Wall time spent in each stage, s, accumulated by each model's `substep_timed` (for profiling).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// Indexed like [`StageTimes::NAMES`].
    pub secs: [f64; 8],
}

impl StageTimes {
    pub const NAMES: [&'static str; 8] = [
        "forces",
        "adhere",
        "integrate",
        "pins",
        "constrain",
        "self_collide",
        "collide",
        "skin",
    ];
}

/// Runs `substep(state, ws, s)` for each substep `s` of one frame, inside the thread pool so each
/// parallel stage is a cheap fork–join rather than a hand-off from an outside thread; then
/// advances the clock and the frame count, holds the pins on their targets, and returns the
/// chunks' counters from the last substep.
pub fn run_frame(
    state: &mut ClothState,
    ws: &mut ClothWorkspace,
    params: &SimParams,
    mut substep: impl FnMut(&mut ClothState, &mut ClothWorkspace, u32) + Send,
) -> StepStats {
    let done = std::sync::atomic::AtomicBool::new(false);
    let stats = rayon::scope(|scope| {
        let (owner, done) = (rayon::current_thread_index(), &done);
        for _ in 1..rayon::current_num_threads() {
            scope.spawn(move |_| keep_busy(done, owner));
        }
        for s in 0..params.substeps.max(1) {
            substep(state, ws, s);
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        let mut st = StepStats::default();
        for c in &ws.chunks {
            st.contacts += c.contacts;
            st.self_pairs += c.self_pairs;
            st.speed_limited += c.limited;
        }
        st
    });
    state.time += params.frame_dt as f64;
    state.frame += 1;
    state.hold_pins();
    stats
}

/// The pool's other threads, for the length of a frame: each takes the stages' parallel work as
/// it appears ([`rayon::yield_now`]) and otherwise spins (yielding the core to any other ready
/// thread now and then), instead of going to sleep between two stages and being woken for the
/// next. A frame makes about 600 fork–joins (some 38 a substep),
/// each a few microseconds of work on a thread; a sleeping thread's wake-up (a futex call, then
/// the scheduler) cost about as much as the work, so the constraint and self-collision stages
/// ran no faster on two threads than on one. Never runs on the thread stepping the frame
/// (`owner`: that thread could otherwise pick this job up while it waits and never return to
/// end the frame).
fn keep_busy(done: &std::sync::atomic::AtomicBool, owner: Option<usize>) {
    if rayon::current_thread_index() == owner {
        return;
    }
    let mut idle = 0u32;
    while !done.load(std::sync::atomic::Ordering::Acquire) {
        match rayon::yield_now() {
            Some(rayon::Yield::Executed) => idle = 0,
            Some(rayon::Yield::Idle) => {
                idle = idle.wrapping_add(1);
                // Now and then the core goes to whatever else is ready to run (the viewer's
                // drawing while a check runs in the background), without sleeping.
                if idle % 64 == 0 {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
            None => return,
        }
    }
}

/// Adds the wall time since the previous lap to a stage of [`StageTimes`], when timing is asked
/// for (`None`: laps cost nothing).
pub struct StageClock<'a> {
    times: Option<&'a mut StageTimes>,
    last: Option<std::time::Instant>,
}

impl<'a> StageClock<'a> {
    pub fn new(times: Option<&'a mut StageTimes>) -> Self {
        let last = times.as_ref().map(|_| std::time::Instant::now());
        StageClock { times, last }
    }

    /// Stage `k` (an index of [`StageTimes::NAMES`]) ends now.
    pub fn lap(&mut self, k: usize) {
        if let (Some(t), Some(c)) = (self.times.as_deref_mut(), self.last.as_mut()) {
            let now = std::time::Instant::now();
            t.secs[k] += (now - *c).as_secs_f64();
            *c = now;
        }
    }
}
