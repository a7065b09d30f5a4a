//! x86 port I/O, for the UART, the PIT and isa-debug-exit.

use core::arch::asm;

pub fn outb(port: u16, v: u8) {
    // SAFETY: port writes touch no memory; the ports used here (UART, PIT,
    // keyboard-controller port B, isa-debug-exit) have no effect on the
    // memory the program owns.
    unsafe {
        asm!("out dx, al", in("dx") port, in("al") v, options(nomem, nostack, preserves_flags))
    };
}

pub fn inb(port: u16) -> u8 {
    let v: u8;
    // SAFETY: as for `outb`; reads of these ports have no memory effects.
    unsafe {
        asm!("in al, dx", in("dx") port, out("al") v, options(nomem, nostack, preserves_flags))
    };
    v
}

pub fn outl(port: u16, v: u32) {
    // SAFETY: as for `outb`.
    unsafe {
        asm!("out dx, eax", in("dx") port, in("eax") v, options(nomem, nostack, preserves_flags))
    };
}
