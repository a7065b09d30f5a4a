//! The console: COM1 behind a spin lock, with `println!`.
//!
//! One CPU and no interrupts means the lock is never contended in normal
//! operation; it exists so that the console is a safe shared `static`.
//! The panic path does not wait on it (a panic while printing would
//! otherwise deadlock): it takes the lock if free, else writes through a
//! fresh handle to the same port.

use crate::serial::Uart;
use core::fmt::Write;
use spin::Mutex;

static CONSOLE: Mutex<Option<Uart>> = Mutex::new(None);

pub fn init() {
    *CONSOLE.lock() = Some(Uart::init(Uart::COM1));
}

pub fn print(args: core::fmt::Arguments<'_>) {
    if let Some(u) = CONSOLE.lock().as_mut() {
        let _ = u.write_fmt(args);
    }
}

pub fn panic_print(args: core::fmt::Arguments<'_>) {
    match CONSOLE.try_lock() {
        Some(mut g) => match g.as_mut() {
            Some(u) => {
                let _ = u.write_fmt(args);
            }
            None => {
                let _ = Uart::init(Uart::COM1).write_fmt(args);
            }
        },
        None => {
            let _ = Uart::init(Uart::COM1).write_fmt(args);
        }
    }
}

/// Waits up to `ticks` TSC ticks for a byte from the host on COM1.
pub fn read_byte_within(ticks: u64) -> Option<u8> {
    let t0 = barebell::latency::tsc::start();
    loop {
        if let Some(b) = CONSOLE.lock().as_mut().and_then(Uart::try_read) {
            return Some(b);
        }
        if barebell::latency::tsc::start().wrapping_sub(t0) > ticks {
            return None;
        }
        core::hint::spin_loop();
    }
}

#[macro_export]
macro_rules! println {
    () => { $crate::console::print(format_args!("\n")) };
    ($($arg:tt)*) => {{
        $crate::console::print(format_args!($($arg)*));
        $crate::console::print(format_args!("\n"));
    }};
}
