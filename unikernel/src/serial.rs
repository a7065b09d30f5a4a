//! A 16550 UART driven by polling (COM1 at 0x3f8 is QEMU's `-serial`).
//!
//! Register layout and the init sequence (divisor latch, 8N1, FIFO on) are
//! the 16550's as every PC BIOS and Linux's `8250_early.c` program it.

use crate::port::{inb, outb};

#[derive(Debug)]
pub struct Uart {
    base: u16,
}

const THR: u16 = 0; // transmit holding (write) / receive buffer (read)
const IER: u16 = 1;
const FCR: u16 = 2;
const LCR: u16 = 3;
const MCR: u16 = 4;
const LSR: u16 = 5;
const LSR_DATA_READY: u8 = 0x01;
const LSR_THR_EMPTY: u8 = 0x20;

impl Uart {
    pub const COM1: u16 = 0x3f8;

    /// 115200 baud, 8N1, FIFOs on, interrupts off.
    pub fn init(base: u16) -> Self {
        outb(base + IER, 0);
        outb(base + LCR, 0x80); // divisor latch access
        outb(base, 1); // divisor 1 = 115200
        outb(base + 1, 0);
        outb(base + LCR, 0x03); // 8N1, latch off
        outb(base + FCR, 0x07); // enable and clear FIFOs
        outb(base + MCR, 0x03); // DTR, RTS
        Uart { base }
    }

    pub fn write_byte(&mut self, b: u8) {
        // Bounded: a UART that never drains must not hang the panic path.
        for _ in 0..100_000 {
            if inb(self.base + LSR) & LSR_THR_EMPTY != 0 {
                break;
            }
            core::hint::spin_loop();
        }
        outb(self.base + THR, b);
    }

    /// A received byte, if one is waiting.
    pub fn try_read(&mut self) -> Option<u8> {
        (inb(self.base + LSR) & LSR_DATA_READY != 0).then(|| inb(self.base + THR))
    }
}

impl core::fmt::Write for Uart {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for b in s.bytes() {
            if b == b'\n' {
                self.write_byte(b'\r');
            }
            self.write_byte(b);
        }
        Ok(())
    }
}
