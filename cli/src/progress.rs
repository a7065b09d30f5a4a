//! Progress on long runs: a line on stderr naming what is running, with
//! elapsed time and, where the total is known, a bar (`indicatif`).
//!
//! It appears only when stderr is a terminal, `--quiet` was not given,
//! and the run has lasted [`SHOW_AFTER`]: short runs and piped output
//! (tests, `| tee`, JSON consumers) see nothing. It is cleared before
//! the command prints its results.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Runs shorter than this show no progress.
pub const SHOW_AFTER: Duration = Duration::from_secs(2);

pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: bool,
    /// Whether a revealed bar redraws from indicatif's own thread; off
    /// where a thread waking up would disturb what is measured.
    steady: bool,
}

impl Progress {
    /// `total` steps (`None`: a spinner), labelled `what`.
    pub fn new(what: &str, total: Option<u64>, quiet: bool) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = match total {
                Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::hidden()),
                None => ProgressBar::hidden(),
            };
            let style = match total {
                Some(_) => {
                    ProgressStyle::with_template("{prefix} [{elapsed}] {bar:30} {pos}/{len} {msg}")
                }
                None => ProgressStyle::with_template("{prefix} [{elapsed}] {spinner} {msg}"),
            };
            if let Ok(s) = style {
                bar.set_style(s);
            }
            bar.set_prefix(what.to_string());
            bar
        });
        Progress {
            bar,
            start: Instant::now(),
            shown: false,
            steady: true,
        }
    }

    /// [`Progress::new`] that draws only when the caller reports progress
    /// (`inc_by`, `tick`), never from a thread of its own: for
    /// measurement loops, where a waking thread would take CPU from the
    /// device model's.
    pub fn passive(what: &str, total: Option<u64>, quiet: bool) -> Progress {
        let mut p = Progress::new(what, total, quiet);
        p.steady = false;
        p
    }

    fn reveal(&mut self) {
        if let Some(b) = &self.bar
            && !self.shown
            && self.start.elapsed() >= SHOW_AFTER
        {
            b.set_draw_target(ProgressDrawTarget::stderr());
            if self.steady {
                b.enable_steady_tick(Duration::from_millis(200));
            }
            self.shown = true;
        }
    }

    /// What is running now.
    pub fn message(&mut self, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_message(msg.to_string());
        }
        self.reveal();
    }

    /// One more step done.
    pub fn inc(&mut self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
        self.reveal();
    }

    /// `n` more steps done.
    pub fn inc_by(&mut self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
        self.reveal();
    }

    /// A chance to appear while waiting (call from wait loops).
    pub fn tick(&mut self) {
        self.reveal();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// A spinner for work that runs in one call the command cannot step
/// through (a kernel in the model's interpreter): a thread of its own
/// shows it once [`SHOW_AFTER`] has passed, and dropping it clears it.
pub struct Background {
    bar: Option<ProgressBar>,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Background {
    pub fn start(what: &str, quiet: bool) -> Background {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::hidden();
            if let Ok(s) = ProgressStyle::with_template("{prefix} [{elapsed}] {spinner} {msg}") {
                bar.set_style(s);
            }
            bar.set_prefix(what.to_string());
            bar
        });
        let thread = bar.clone().map(|b| {
            let done = done.clone();
            std::thread::spawn(move || {
                let start = Instant::now();
                while start.elapsed() < SHOW_AFTER {
                    if done.load(std::sync::atomic::Ordering::Acquire) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                if !done.load(std::sync::atomic::Ordering::Acquire) {
                    b.set_draw_target(ProgressDrawTarget::stderr());
                    b.enable_steady_tick(Duration::from_millis(200));
                }
            })
        });
        Background { bar, done, thread }
    }

    /// What is running now.
    pub fn message(&self, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_message(msg.to_string());
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
