//! The device's own time between ROCR's calls: a thread that lets the
//! model's CP, schedulers and queues take their steps while the device is
//! open, as the hardware runs on its own after a doorbell store. ROCR
//! waits on signals in memory (spinning, then `hsaKmtWaitOnEvent`), never
//! in this library, so without it nothing would consume a packet.
//!
//! The thread looks only when no `hsaKmt*` call holds the device: a call
//! that waits on the device (a runlist fence) lets it step itself, through
//! the bring-up's pause. When the device is idle the thread backs off to
//! short sleeps ([`IDLE_SLEEP`]) so it leaves the CPU to ROCR.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Idle looks before the thread starts sleeping between looks.
pub const SPIN_LOOKS: u32 = 256;
/// The sleep between looks once idle.
pub const IDLE_SLEEP: Duration = Duration::from_micros(20);

/// What one look reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Work moved.
    Busy,
    /// Nothing to do (or a call holds the device).
    Idle,
    /// The device is closed: the thread ends.
    Closed,
}

/// The running thread.
#[derive(Debug)]
pub struct Service {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Service {
    /// Starts a thread calling `look` until [`Service::stop`] or until it
    /// reports [`Look::Closed`].
    pub fn spawn(look: fn() -> Look) -> std::io::Result<Service> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("barebell-device".into())
            .spawn(move || {
                let mut idle = 0u32;
                while !flag.load(Ordering::Acquire) {
                    match look() {
                        Look::Closed => break,
                        Look::Busy => idle = 0,
                        Look::Idle => {
                            idle = idle.saturating_add(1);
                            if idle > SPIN_LOOKS {
                                std::thread::sleep(IDLE_SLEEP);
                            } else {
                                std::thread::yield_now();
                            }
                        }
                    }
                }
            })?;
        Ok(Service {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops the thread and waits for it (its look never blocks).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            // A look that panicked ended the thread already; nothing to
            // hand back either way.
            let _ = h.join();
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
    }
}
