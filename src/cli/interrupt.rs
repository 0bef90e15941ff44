//! Ctrl-C (SIGINT) for long commands. Two ways:
//!
//! - [`Mode::Cooperative`] (`bake`, `render`): the first Ctrl-C sets a flag that the command's
//!   loop checks between frames ([`requested`], [`stop_if_requested`]); it stops, drops its
//!   unfinished output (the previous file stays whole, [`crate::output`]) and says what was
//!   written.
//! - [`Mode::Exit`] (`experiment`, `check`, which write only when done): Ctrl-C prints a
//!   prepared line saying what was (not) written and exits at once.
//!
//! In both, a second Ctrl-C exits at once. Exit status 130 (128 + SIGINT), as shells report a
//! command stopped by Ctrl-C. Only on Unix; elsewhere Ctrl-C keeps its default (the outputs are
//! still written atomically).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use super::CliError;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static EXIT_AT_ONCE: AtomicBool = AtomicBool::new(false);
static MESSAGE: OnceLock<String> = OnceLock::new();

/// Exit status of a command stopped by Ctrl-C.
pub const EXIT_STATUS: i32 = 130;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Cooperative,
    Exit,
}

/// Installs the SIGINT handler. `message` is printed when Ctrl-C exits at once (both modes,
/// on a second Ctrl-C in the cooperative one).
pub fn install(mode: Mode, message: &str) {
    let _ = MESSAGE.set(format!("\ndrape: interrupted (Ctrl-C); {message}\n"));
    EXIT_AT_ONCE.store(mode == Mode::Exit, Ordering::SeqCst);
    #[cfg(unix)]
    // SAFETY: the handler only touches atomics, an initialised OnceLock's bytes, write(2) and
    // _exit(2), all async-signal-safe.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    let again = REQUESTED.swap(true, Ordering::SeqCst);
    if again || EXIT_AT_ONCE.load(Ordering::SeqCst) {
        if let Some(m) = MESSAGE.get() {
            // SAFETY: writes an initialised buffer to stderr.
            unsafe {
                libc::write(2, m.as_ptr().cast(), m.len());
            }
        }
        // SAFETY: ends the process without running anything else (async-signal-safe).
        unsafe { libc::_exit(EXIT_STATUS) };
    }
}

/// Whether Ctrl-C was pressed.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// When Ctrl-C was pressed: an error saying so and what `written()` says was written.
pub fn stop_if_requested(written: impl FnOnce() -> String) -> Result<(), CliError> {
    if requested() {
        Err(CliError::new(format!(
            "interrupted (Ctrl-C); {}",
            written()
        )))
    } else {
        Ok(())
    }
}
