//! Where `bringup --shell` reads its lines: piped input through
//! [`StopAwareStdin`], or a terminal through a line editor (rustyline:
//! a `barebell> ` prompt, editing, history for the session, Ctrl-C
//! cancelling the line being typed).
//!
//! The editor blocks in `read(2)` with the terminal in raw mode, where
//! Ctrl-C is a key, not SIGINT. It runs on its own thread and hands each
//! line over a channel; the shell waits for a line in slices of
//! [`POLL_MS`], reading the stop flag between them, so SIGTERM (or a
//! SIGINT from elsewhere) still ends the shell within one slice while the
//! editor is waiting. The terminal's settings are saved before the editor
//! starts and put back when the input is dropped, whatever the editor
//! thread is doing then.

use crate::stop::{POLL_MS, StopAwareStdin, requested};
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

/// What the editor thread read.
enum Read {
    Line(String),
    /// Ctrl-C: the line being typed was dropped.
    Cancelled,
    /// Ctrl-D, or the terminal went away.
    End,
}

/// The terminal side: asks the editor thread for one line at a time, so
/// the prompt appears only after the previous command's answer.
pub struct Editor {
    ask: Sender<()>,
    lines: Receiver<Read>,
    saved: Option<libc::termios>,
}

impl Editor {
    fn start() -> Option<Editor> {
        // SAFETY: `termios` is plain data; tcgetattr fills it for fd 0
        // and returns -1 (checked) when stdin is no terminal.
        let saved = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            (libc::tcgetattr(0, &mut t) == 0).then_some(t)
        };
        let mut rl = DefaultEditor::new().ok()?;
        let (ask, asked) = channel::<()>();
        let (tell, lines) = channel::<Read>();
        std::thread::Builder::new()
            .name("shell-editor".into())
            .spawn(move || {
                while asked.recv().is_ok() {
                    let read = match rl.readline("barebell> ") {
                        Ok(l) => {
                            if !l.trim().is_empty() {
                                let _ = rl.add_history_entry(l.as_str());
                            }
                            Read::Line(l)
                        }
                        Err(ReadlineError::Interrupted) => Read::Cancelled,
                        Err(_) => Read::End,
                    };
                    let end = matches!(read, Read::End);
                    if tell.send(read).is_err() || end {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Editor { ask, lines, saved })
    }
}

impl Iterator for Editor {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        loop {
            if requested().is_some() || self.ask.send(()).is_err() {
                return None;
            }
            let read = loop {
                if requested().is_some() {
                    return None;
                }
                match self
                    .lines
                    .recv_timeout(Duration::from_millis(POLL_MS as u64))
                {
                    Ok(r) => break r,
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return None,
                }
            };
            match read {
                Read::Line(l) => return Some(l),
                Read::Cancelled => continue,
                Read::End => return None,
            }
        }
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        if let Some(t) = self.saved {
            // SAFETY: `t` is the settings tcgetattr read for fd 0 before
            // the editor changed them; putting them back touches no Rust
            // state.
            unsafe {
                libc::tcsetattr(0, libc::TCSANOW, &t);
            }
        }
    }
}

/// The shell's input: the editor on a terminal, else the piped reader.
pub enum ShellInput {
    Terminal(Editor),
    Piped(StopAwareStdin),
}

impl ShellInput {
    /// The editor when stdin and stdout are terminals, else piped lines.
    pub fn open() -> ShellInput {
        // SAFETY: isatty only inspects the descriptors.
        let tty = unsafe { libc::isatty(0) == 1 && libc::isatty(1) == 1 };
        match tty.then(Editor::start).flatten() {
            Some(e) => ShellInput::Terminal(e),
            None => ShellInput::Piped(StopAwareStdin::default()),
        }
    }

    /// Whether the shell should echo each command (piped input only).
    pub fn echo(&self) -> bool {
        matches!(self, ShellInput::Piped(_))
    }
}

impl Iterator for ShellInput {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        match self {
            ShellInput::Terminal(e) => e.next(),
            ShellInput::Piped(p) => p.next(),
        }
    }
}
