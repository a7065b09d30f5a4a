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

/// What a second stop signal prints before the process ends, with a GPU
/// whose bus mastering was cleared, and without (the model).
const SECOND_GPU: &[u8] =
    b"barebell: second stop signal: bus mastering cleared, exiting without the teardown\n";
const SECOND: &[u8] = b"barebell: second stop signal: exiting without the teardown\n";

extern "C" fn on_signal(sig: libc::c_int) {
    // A second SIGINT or SIGTERM while the teardown of the first runs
    // (or is still waited for): the user will not wait. Clear bus
    // mastering of an opened GPU, so that it stops writing host memory,
    // and exit at once. Only async-signal-safe calls: atomics, pread and
    // pwrite (`barebell_pcie::emergency`), write and _exit. SIGPIPE never
    // counts as a second request.
    let first = STOP_SIGNAL.swap(sig, Ordering::SeqCst);
    if first != 0 && sig != libc::SIGPIPE {
        let msg = if barebell_pcie::emergency::clear_bus_master() {
            SECOND_GPU
        } else {
            SECOND
        };
        // SAFETY: write(2) and _exit(2) are async-signal-safe; `msg` is a
        // static byte string.
        unsafe {
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::_exit(128 + sig);
        }
    }
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

/// When a kernel's wall-clock bound runs out: ns after [`kernel_clock`]'s
/// origin, 0 for none.
static KERNEL_DEADLINE_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn kernel_clock() -> u64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let origin = *ORIGIN.get_or_init(std::time::Instant::now);
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Kernels started from now on stop once `bound` has passed (the
/// interpreter asks [`kernel_should_stop`] between scheduling rounds).
pub fn set_kernel_bound(bound: std::time::Duration) {
    let ns = u64::try_from(bound.as_nanos()).unwrap_or(u64::MAX);
    KERNEL_DEADLINE_NS.store(kernel_clock().saturating_add(ns).max(1), Ordering::SeqCst);
}

/// Whether a running kernel should stop: a stop signal arrived, or its
/// wall-clock bound ran out. The model's [`barebell_isa::launch::StopHook`].
pub fn kernel_should_stop() -> bool {
    let deadline = KERNEL_DEADLINE_NS.load(Ordering::SeqCst);
    requested().is_some() || (deadline != 0 && kernel_clock() >= deadline)
}

/// Whether the kernel bound (rather than a signal) is what ran out.
pub fn kernel_bound_ran_out() -> bool {
    let deadline = KERNEL_DEADLINE_NS.load(Ordering::SeqCst);
    deadline != 0 && kernel_clock() >= deadline
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

/// Standard input as lines that end when a stop signal arrives, even
/// while nothing is typed: the reader waits on fd 0 with `poll(2)` in
/// [`POLL_MS`] slices and checks [`requested`] between them (a plain
/// blocking read would be restarted after the signal and wait for the
/// next line). Reads fd 0 itself, so no buffer of `std::io::stdin()` can
/// hold lines `poll` does not see.
#[derive(Debug, Default)]
pub struct StopAwareStdin {
    buf: Vec<u8>,
    eof: bool,
}

/// How long one `poll(2)` slice waits: a stop is seen within this.
pub const POLL_MS: i32 = 100;

impl StopAwareStdin {
    /// Takes one complete line out of the buffer (a last line without a
    /// newline counts at end of input).
    fn take_line(&mut self) -> Option<String> {
        let end = match self.buf.iter().position(|&b| b == b'\n') {
            Some(i) => i + 1,
            None if self.eof && !self.buf.is_empty() => self.buf.len(),
            None => return None,
        };
        let line: Vec<u8> = self.buf.drain(..end).collect();
        Some(
            String::from_utf8_lossy(&line)
                .trim_end_matches(['\n', '\r'])
                .to_string(),
        )
    }
}

impl Iterator for StopAwareStdin {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        loop {
            if requested().is_some() {
                return None;
            }
            if let Some(l) = self.take_line() {
                return Some(l);
            }
            if self.eof {
                return None;
            }
            let mut fds = libc::pollfd {
                fd: libc::STDIN_FILENO,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, for the duration of the call.
            let n = unsafe { libc::poll(&mut fds, 1, POLL_MS) };
            if n <= 0 {
                // A timeout or EINTR (the signal): check the flag again.
                continue;
            }
            let mut chunk = [0u8; 4096];
            // SAFETY: reads at most `chunk.len()` bytes into `chunk`,
            // which outlives the call.
            let got =
                unsafe { libc::read(libc::STDIN_FILENO, chunk.as_mut_ptr().cast(), chunk.len()) };
            match usize::try_from(got) {
                Ok(0) => self.eof = true,
                Ok(k) => self
                    .buf
                    .extend_from_slice(chunk.get(..k).unwrap_or_default()),
                // EINTR: the loop checks the flag; other errors end input.
                Err(_)
                    if std::io::Error::last_os_error().kind()
                        == std::io::ErrorKind::Interrupted => {}
                Err(_) => self.eof = true,
            }
        }
    }
}
