//! Progress of long work on stderr: a bar redrawn in place when stderr is a terminal, plain
//! lines (one per tenth of the work) when it is a log or a pipe, so that neither fills with
//! carriage returns nor stays silent. Used by `bake`, `render`, `experiment`, `check` and the
//! CoR precomputation.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use crate::skin::CorProgress;

/// One long task with a known amount of work.
pub struct Progress {
    label: String,
    unit: &'static str,
    total: u64,
    terminal: bool,
    start: Instant,
    /// Last shown percentage (terminal) or tenth (plain lines).
    shown: Option<u64>,
    drawn: bool,
}

impl Progress {
    const WIDTH: u64 = 30;

    /// `label`: what is done ("baking"); `unit`: what is counted ("frames").
    pub fn new(label: impl Into<String>, total: u64, unit: &'static str) -> Progress {
        Progress {
            label: label.into(),
            unit,
            total,
            terminal: std::io::stderr().is_terminal(),
            start: Instant::now(),
            shown: None,
            drawn: false,
        }
    }

    /// Seconds since the task started.
    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// `done` of the total are finished.
    pub fn set(&mut self, done: u64) {
        if self.total == 0 {
            return;
        }
        let done = done.min(self.total);
        let pct = done * 100 / self.total;
        let elapsed = self.elapsed();
        let left = elapsed * (self.total - done) as f64 / done.max(1) as f64;
        let (label, unit, total) = (&self.label, self.unit, self.total);
        let mut err = std::io::stderr().lock();
        if self.terminal {
            if self.shown == Some(pct) {
                return;
            }
            self.shown = Some(pct);
            let fill = (pct * Self::WIDTH / 100) as usize;
            let _ = write!(
                err,
                "\r{label} [{}{}] {pct:3}%  {done}/{total} {unit}  {elapsed:.0} s, ~{left:.0} s left  ",
                "#".repeat(fill),
                "-".repeat(Self::WIDTH as usize - fill),
            );
            let _ = err.flush();
            self.drawn = true;
        } else {
            let tenth = pct / 10;
            if self.shown == Some(tenth) {
                return;
            }
            self.shown = Some(tenth);
            let _ = writeln!(
                err,
                "{label}: {done}/{total} {unit} ({pct} %), {elapsed:.0} s, ~{left:.0} s left"
            );
        }
    }

    /// Ends the bar's line (on a terminal), so that what follows starts on its own line.
    pub fn finish(&mut self) {
        if self.terminal && self.drawn {
            eprintln!();
            self.drawn = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A progress callback for [`crate::skin::Skinner::prepare_cor`] (and
/// [`crate::scene::Scene::new_with_progress`]): one bar per mesh whose centres are computed,
/// nothing for those found in the disk cache.
pub fn cor_progress() -> impl FnMut(usize, CorProgress) {
    let mut bar: Option<(usize, Progress)> = None;
    move |mesh, p| match p {
        CorProgress::Cached => {}
        CorProgress::Computing { done, total } => {
            if bar.as_ref().is_none_or(|(m, _)| *m != mesh) {
                bar = Some((
                    mesh,
                    Progress::new(
                        format!("centres of rotation, mesh {mesh}"),
                        total as u64,
                        "weight vectors",
                    ),
                ));
            }
            if let Some((_, b)) = &mut bar {
                b.set(done as u64);
                if done >= total {
                    b.finish();
                }
            }
        }
    }
}

/// Frames simulated by work whose total is not known in advance (the experiments count theirs
/// here; [`Ticker`] shows the count).
static FRAMES_DONE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts `n` simulated frames for a running [`Ticker`].
pub fn frames_done(n: u64) {
    FRAMES_DONE.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
}

/// Progress of work with no known total: a thread shows the frames counted by
/// [`frames_done`] and the time, redrawn every half second on a terminal, a plain line every
/// ten seconds otherwise; it stops when dropped.
pub struct Ticker {
    stop: std::sync::Arc<AtomicBoolFlag>,
    thread: Option<std::thread::JoinHandle<()>>,
}

type AtomicBoolFlag = std::sync::atomic::AtomicBool;

impl Ticker {
    pub fn start(label: impl Into<String>) -> Ticker {
        use std::sync::atomic::Ordering;
        let label = label.into();
        let stop = std::sync::Arc::new(AtomicBoolFlag::new(false));
        let flag = stop.clone();
        let terminal = std::io::stderr().is_terminal();
        let start = Instant::now();
        let first = FRAMES_DONE.load(Ordering::Relaxed);
        let thread = std::thread::spawn(move || {
            let period = std::time::Duration::from_millis(if terminal { 500 } else { 10_000 });
            let tick = std::time::Duration::from_millis(100);
            let mut last = Instant::now();
            let mut drawn = false;
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(tick);
                if last.elapsed() < period {
                    continue;
                }
                last = Instant::now();
                let frames = FRAMES_DONE.load(Ordering::Relaxed) - first;
                let s = start.elapsed().as_secs_f64();
                let mut err = std::io::stderr().lock();
                if terminal {
                    let _ = write!(err, "\r{label}: {frames} frames simulated, {s:.0} s  ");
                    let _ = err.flush();
                    drawn = true;
                } else {
                    let _ = writeln!(err, "{label}: {frames} frames simulated, {s:.0} s");
                }
            }
            if drawn {
                eprintln!();
            }
        });
        Ticker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
