//! defmt frames on COM2 (0x2f8), decoded on the host by `cargo xtask
//! qemu` with `defmt-decoder` against this ELF's `.defmt` table.
//!
//! defmt sends an index into the ELF's interned strings plus the binary
//! arguments, framed with rzCOBS (defmt's default encoding), instead of
//! formatted text: the image formats nothing for these messages. The
//! latency summaries go out this way (as the issue asks) and, for a
//! cross-check, also as text on COM1.

use crate::serial::Uart;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;

const COM2: u16 = 0x2f8;

static PORT: Mutex<Option<Uart>> = Mutex::new(None);
static TAKEN: AtomicBool = AtomicBool::new(false);
static mut ENCODER: defmt::Encoder = defmt::Encoder::new();

pub fn init() {
    *PORT.lock() = Some(Uart::init(COM2));
}

fn emit(bytes: &[u8]) {
    if let Some(u) = PORT.lock().as_mut() {
        for &b in bytes {
            u.write_byte(b);
        }
    }
}

#[defmt::global_logger]
struct Logger;

// SAFETY: `acquire` takes the TAKEN flag, so between `acquire` and
// `release` this logger is the only user of ENCODER. A nested acquire
// (a log from inside a log) cannot happen here: one CPU, and neither the
// exception handler nor the panic handler logs through defmt. If it did,
// its bytes would land inside the outer frame, which the host decoder
// rejects as malformed; it would not be memory-unsafe.
unsafe impl defmt::Logger for Logger {
    fn acquire() {
        if TAKEN.swap(true, Ordering::Acquire) {
            return;
        }
        let enc = &raw mut ENCODER;
        // SAFETY: TAKEN was false and is now ours: exclusive access.
        unsafe { (*enc).start_frame(emit) }
    }

    unsafe fn flush() {}

    unsafe fn release() {
        let enc = &raw mut ENCODER;
        // SAFETY: defmt calls release only after acquire, which took TAKEN.
        unsafe { (*enc).end_frame(emit) };
        TAKEN.store(false, Ordering::Release);
    }

    unsafe fn write(bytes: &[u8]) {
        let enc = &raw mut ENCODER;
        // SAFETY: defmt calls write only between acquire and release.
        unsafe { (*enc).write(bytes, emit) }
    }
}
