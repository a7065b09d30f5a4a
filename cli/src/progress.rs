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
        }
    }

    fn reveal(&mut self) {
        if let Some(b) = &self.bar
            && !self.shown
            && self.start.elapsed() >= SHOW_AFTER
        {
            b.set_draw_target(ProgressDrawTarget::stderr());
            b.enable_steady_tick(Duration::from_millis(200));
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
