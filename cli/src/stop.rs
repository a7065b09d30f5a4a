//! SIGINT, SIGTERM and SIGPIPE handled instead of fatal, for every command
//! that brings a device up: the signal only sets [`STOP_SIGNAL`]; the
//! bring-up reads it before each step ([`Cancellable`]), the commands'
//! waits read it ([`requested`]), and the device is then torn down as on
//! an error (issue 20 item 2) before the process exits with the status a
//! shell reports for a death by that signal ([`status`]).

use barebell_bringup::{Sink, Step};
use std::fmt;
use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked the command to stop, 0 while none has.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // An atomic store is async-signal-safe.
    STOP_SIGNAL.store(sig, Ordering::SeqCst);
}

/// SIGINT, SIGTERM and SIGPIPE set [`STOP_SIGNAL`] instead of killing
/// the process, so that a Ctrl-C, a `kill` or a closed pipe (`| head`)
/// runs the teardown instead of leaving the device running.
pub fn handle() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGPIPE] {
        // SAFETY: `on_signal` only stores to an atomic, which is
        // async-signal-safe; `signal` replaces the disposition of a
        // catchable signal and touches no Rust state.
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// The stop signal's name once one arrived.
pub fn requested() -> Option<&'static str> {
    match STOP_SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        libc::SIGINT => Some("SIGINT"),
        libc::SIGTERM => Some("SIGTERM"),
        libc::SIGPIPE => Some("SIGPIPE"),
        _ => Some("a signal"),
    }
}

/// The exit status after the stop signal, as a shell reports a death by it.
pub fn status() -> u8 {
    u8::try_from(128 + STOP_SIGNAL.load(Ordering::SeqCst)).unwrap_or(u8::MAX)
}

/// A sink that reports nothing and cancels the bring-up once a stop
/// signal arrived.
pub struct Cancellable;

impl Sink for Cancellable {
    fn step(&self, _: Step, _: fmt::Arguments<'_>) {}
    fn cancelled(&self) -> bool {
        requested().is_some()
    }
}
