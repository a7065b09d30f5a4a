//! What a program with no libc and no OS must provide itself: the memory
//! functions the compiler calls, the panic handler, and the way out.

use core::panic::PanicInfo;

/// isa-debug-exit (`-device isa-debug-exit,iobase=0xf4,iosize=0x04`):
/// QEMU exits with status `(value << 1) | 1` when `value` is written to
/// the port, so no value can produce status 0 and be mistaken for a clean
/// shutdown.
const DEBUG_EXIT_PORT: u16 = 0xf4;

/// Exit codes the xtask expects (the QEMU process status is
/// `code << 1 | 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Every step ran and its checks held: QEMU exits 33.
    Success = 0x10,
    /// A step failed with an error it reported: QEMU exits 35.
    Failure = 0x11,
    /// A panic: QEMU exits 37.
    Panic = 0x12,
    /// A CPU exception: QEMU exits 39.
    Exception = 0x13,
}

pub fn exit(code: Exit) -> ! {
    crate::port::outl(DEBUG_EXIT_PORT, code as u32);
    // Without the device the write is ignored; stop the CPU instead.
    loop {
        // SAFETY: cli; hlt only stops this (the only) CPU.
        unsafe { core::arch::asm!("cli", "hlt", options(nomem, nostack)) };
    }
}

/// The prebuilt `liballoc` (compiled with `panic=unwind`) has landing pads
/// that name this symbol, e.g. in `alloc::fmt::format`. This image aborts
/// on panic, so no unwind ever starts and nothing can resume one; if it
/// were called anyway, it fails the run loudly.
#[unsafe(no_mangle)]
pub extern "C" fn _Unwind_Resume() -> ! {
    crate::console::panic_print(format_args!("UK PANIC: _Unwind_Resume called\n"));
    exit(Exit::Panic)
}

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    crate::console::panic_print(format_args!("UK PANIC: {info}\n"));
    exit(Exit::Panic)
}

// With no libc, the compiler's calls to these must be satisfied here. The
// byte loops read through `black_box` so the optimiser cannot recognise
// them as a memcpy idiom and call the function from itself.

/// # Safety
/// Standard C `memcpy` contract: non-overlapping, valid for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    let mut i = 0;
    while i < n {
        // SAFETY: the caller guarantees both ranges are valid for `n` bytes.
        unsafe { *dst.add(i) = core::hint::black_box(*src.add(i)) };
        i += 1;
    }
    dst
}

/// # Safety
/// Standard C `memmove` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dst as usize) <= (src as usize) {
        // SAFETY: a forward copy is correct when dst precedes src.
        return unsafe { memcpy(dst, src, n) };
    }
    let mut i = n;
    while i > 0 {
        i -= 1;
        // SAFETY: the caller guarantees both ranges are valid for `n` bytes.
        unsafe { *dst.add(i) = core::hint::black_box(*src.add(i)) };
    }
    dst
}

/// # Safety
/// Standard C `memset` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memset(dst: *mut u8, c: i32, n: usize) -> *mut u8 {
    let mut i = 0;
    while i < n {
        // SAFETY: the caller guarantees `dst` is valid for `n` bytes.
        unsafe { *dst.add(i) = core::hint::black_box(c as u8) };
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
        // SAFETY: the caller guarantees both are valid for `n` bytes.
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

/// The prebuilt `core` names this in its unwind tables. With
/// `panic = "abort"` nothing unwinds, so it is never called.
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}
