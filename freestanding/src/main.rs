//! The smallest program that links barebell's `no_std` crates with no OS.
//!
//! It exists to prove a property, not to do work: if any library starts to
//! depend on `std` (directly or through a dependency), this stops linking.
//! The unikernel grows from here.
#![no_std]
#![no_main]

use core::hint::black_box;
use core::panic::PanicInfo;

/// Entry point; `-nostartfiles` means nothing runs before this.
#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    // Touch real code paths from each crate so they are linked, not just
    // named: a firmware header parse, a register offset computation and a
    // config-space constant.
    let blob = black_box([0u8; 64]);
    let parsed = barebell_firmware_if::ucode::Container::parse(&blob).is_ok();
    let bases = barebell::regs::IpBases::new(&black_box([0x1260, 0xa000]));
    let off = barebell::regs::gc_11_0_0::CP_MES_CNTL.byte_offset(&bases);
    let vendor = black_box(barebell_pcie::config::VENDOR_AMD_ATI);
    black_box((parsed, off, vendor));
    halt()
}

fn halt() -> ! {
    loop {
        core::hint::spin_loop();
    }
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    halt()
}

// With no libc, the compiler's calls to these must be satisfied here.
// They are written as byte loops the optimiser cannot turn back into calls
// to themselves (volatile-free but with no memcpy idiom to recognise).

/// # Safety
/// Standard C `memcpy` contract: non-overlapping, valid for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    let mut i = 0;
    while i < n {
        // SAFETY: caller guarantees both ranges are valid for `n` bytes.
        unsafe { *dst.add(i) = black_box(*src.add(i)) };
        i += 1;
    }
    dst
}

/// # Safety
/// Standard C `memmove` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dst as usize) < (src as usize) {
        // SAFETY: forwards copy is correct when dst precedes src.
        return unsafe { memcpy(dst, src, n) };
    }
    let mut i = n;
    while i > 0 {
        i -= 1;
        // SAFETY: caller guarantees both ranges are valid for `n` bytes.
        unsafe { *dst.add(i) = black_box(*src.add(i)) };
    }
    dst
}

/// # Safety
/// Standard C `memset` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memset(dst: *mut u8, c: i32, n: usize) -> *mut u8 {
    let mut i = 0;
    while i < n {
        // SAFETY: caller guarantees `dst` is valid for `n` bytes.
        unsafe { *dst.add(i) = black_box(c as u8) };
        i += 1;
    }
    dst
}

/// # Safety
/// Standard C `memcmp` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i < n {
        // SAFETY: caller guarantees both are valid for `n` bytes.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

/// # Safety
/// Standard C `bcmp` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: same contract as memcmp.
    unsafe { memcmp(a, b, n) }
}

/// The prebuilt `core` is compiled with unwinding tables that name this
/// symbol. With `panic = "abort"` nothing ever unwinds, so it is never
/// called; it only has to exist for the link.
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}
