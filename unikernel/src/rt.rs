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

// With no libc, the compiler's calls to these must be satisfied here.
// The copies and fills are x86 string instructions in inline assembly
// (`rep movsq`/`rep stosq` for whole 8-byte words, `rep movsb`/`rep
// stosb` for the rest), which the optimiser cannot turn back into a call
// to the function itself. Eight bytes per iteration matter under TCG,
// where the bring-up's firmware copies and the model memory's zeroing
// ran byte by byte (with a byte loop, zeroing the model's 36 MiB took
// 136 ms per bring-up). Rust's inline-assembly rules guarantee the
// direction flag is clear on entry to each `asm!` block, so the string
// instructions run forward unless the block sets it.

/// # Safety
/// Standard C `memcpy` contract: non-overlapping, valid for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the caller guarantees both ranges are valid for `n` bytes
    // and do not overlap. `rep movsq` copies `n / 8` words forward from
    // `src` to `dst`, advancing both, then `rep movsb` the `n % 8` bytes
    // left; string moves leave the flags alone.
    unsafe {
        core::arch::asm!(
            "rep movsq",
            "mov rcx, {tail}",
            "rep movsb",
            tail = in(reg) n & 7,
            inout("rcx") n >> 3 => _,
            inout("rdi") dst => _,
            inout("rsi") src => _,
            options(nostack, preserves_flags)
        )
    };
    dst
}

/// # Safety
/// Standard C `memmove` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dst as usize) <= (src as usize) || (dst as usize) >= (src as usize).wrapping_add(n) {
        // SAFETY: a forward copy is correct when the ranges do not
        // overlap, and when dst precedes src: each word is read before
        // any store reaches it (a store at dst + i ends before src + i +
        // 8, the word read last).
        return unsafe { memcpy(dst, src, n) };
    }
    if n == 0 {
        return dst;
    }
    // SAFETY: the caller guarantees both ranges are valid for `n` bytes;
    // here dst lies inside (src, src + n), so the copy runs backward: with
    // the direction flag set, `rep movsb` copies from the last byte of
    // each range down to the first. The flag is cleared again before the
    // block ends, as the inline-assembly rules require.
    unsafe {
        core::arch::asm!(
            "std",
            "rep movsb",
            "cld",
            inout("rcx") n => _,
            inout("rdi") dst.add(n - 1) => _,
            inout("rsi") src.add(n - 1) => _,
            options(nostack)
        )
    };
    dst
}

/// # Safety
/// Standard C `memset` contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memset(dst: *mut u8, c: i32, n: usize) -> *mut u8 {
    let word = u64::from(c as u8) * 0x0101_0101_0101_0101;
    // SAFETY: the caller guarantees `dst` is valid for `n` bytes. `rep
    // stosq` stores the byte repeated in all of rax to `n / 8` words, `rep
    // stosb` its low byte to the `n % 8` left; stores leave the flags
    // alone.
    unsafe {
        core::arch::asm!(
            "rep stosq",
            "mov rcx, {tail}",
            "rep stosb",
            tail = in(reg) n & 7,
            inout("rcx") n >> 3 => _,
            inout("rdi") dst => _,
            in("rax") word,
            options(nostack, preserves_flags)
        )
    };
    dst
}

/// Checks [`memcpy`], [`memmove`] (overlapping, both directions) and
/// [`memset`] against byte-by-byte references, for every length up to 40,
/// shifts 1 to 9 and start offsets 0 to 3 (so every word/tail split and
/// alignment); returns the cases run, or the first that failed. The
/// buffers and the references are written one byte at a time through
/// `black_box`, so none of them goes through the functions under test.
pub fn check_memory_functions() -> Result<usize, (&'static str, usize, usize)> {
    use core::hint::black_box;
    const LEN: usize = 96;
    let fill = |a: &mut [u8; LEN]| {
        for (i, b) in a.iter_mut().enumerate() {
            *b = black_box((i * 7 + 3) as u8);
        }
    };
    let (mut got, mut want, mut tmp) = ([0u8; LEN], [0u8; LEN], [0u8; LEN]);
    let mut cases = 0;
    for n in 0..=40usize {
        for shift in 1..=9usize {
            for base in 0..=3usize {
                // (name, source start, destination start)
                for (name, src, dst) in [
                    ("memmove up", base, base + shift),
                    ("memmove down", base + shift, base),
                    ("memcpy", base, base + 48),
                    ("memset", 0, base + shift),
                ] {
                    fill(&mut got);
                    fill(&mut want);
                    for i in 0..n {
                        tmp[i] = black_box(if name == "memset" {
                            0xa5
                        } else {
                            want[src + i]
                        });
                    }
                    for i in 0..n {
                        want[dst + i] = black_box(tmp[i]);
                    }
                    let p = black_box(got.as_mut_ptr());
                    let len = black_box(n);
                    // SAFETY: `src + n` and `dst + n` are at most 88 <=
                    // LEN, so both ranges lie in `got`; memmove allows
                    // overlap, and memcpy's ranges (48 apart, n <= 40) do
                    // not overlap.
                    unsafe {
                        match name {
                            "memset" => memset(p.add(dst), 0xa5, len),
                            "memcpy" => memcpy(p.add(dst), p.add(src), len),
                            _ => memmove(p.add(dst), p.add(src), len),
                        };
                    }
                    if (0..LEN).any(|i| black_box(got[i]) != black_box(want[i])) {
                        return Err((name, n, shift));
                    }
                    cases += 1;
                }
            }
        }
    }
    Ok(cases)
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
