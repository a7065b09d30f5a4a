//! CPU exceptions: an IDT whose 32 vectors all report the vector, the
//! faulting address register and the error-code slot, then exit through
//! isa-debug-exit. Without it, a page fault on an unmapped BAR would be a
//! silent triple fault.

core::arch::global_asm!(
    r#"
    .section .text.exc, "ax", @progbits
    .p2align 4
    .global exc_stubs
exc_stubs:
    .set vec, 0
    .rept 32
    .p2align 4
    push $vec
    jmp exc_common
    .set vec, vec + 1
    .endr
exc_common:
    pop %rdi
    mov (%rsp), %rsi
    mov 8(%rsp), %rdx
    and $-16, %rsp
    call exception
.Lexc_hang:
    cli
    hlt
    jmp .Lexc_hang
    "#,
    options(att_syntax)
);

unsafe extern "C" {
    static exc_stubs: u8;
}

#[repr(C, align(16))]
struct Idt([u64; 64]);

static mut IDT: Idt = Idt([0; 64]);

/// Builds and loads the IDT.
pub fn init() {
    let stubs = (&raw const exc_stubs) as u64;
    let idt = (&raw mut IDT).cast::<u64>();
    for v in 0..32u64 {
        let h = stubs + 16 * v;
        // 64-bit interrupt gate: offset 15:0, selector 0x08, type 0x8E
        // (present, DPL 0, interrupt gate), offset 31:16, offset 63:32.
        let lo = (h & 0xffff) | 0x08 << 16 | 0x8e00u64 << 32 | (h >> 16 & 0xffff) << 48;
        let hi = h >> 32;
        // SAFETY: v < 32, so both words are inside the 64-word table,
        // which nothing else touches before it is loaded.
        unsafe {
            idt.add(2 * v as usize).write_volatile(lo);
            idt.add(2 * v as usize + 1).write_volatile(hi);
        }
    }
    #[repr(C, packed)]
    struct Ptr {
        limit: u16,
        base: u64,
    }
    let p = Ptr {
        limit: (32 * 16 - 1) as u16,
        base: idt as u64,
    };
    // SAFETY: the IDT is a static that lives forever, filled above with
    // gates to code that never returns.
    unsafe { core::arch::asm!("lidt [{0}]", in(reg) &p, options(readonly, nostack)) };
}

#[unsafe(no_mangle)]
extern "C" fn exception(vector: u64, slot0: u64, slot1: u64) -> ! {
    let cr2: u64;
    // SAFETY: reading CR2 has no side effects.
    unsafe { core::arch::asm!("mov {0}, cr2", out(reg) cr2, options(nomem, nostack)) };
    crate::console::panic_print(format_args!(
        "UK EXCEPTION vector={vector} cr2={cr2:#x} stack=[{slot0:#x}, {slot1:#x}] (error code, then rip, for vectors that push one)\n"
    ));
    crate::rt::exit(crate::rt::Exit::Exception)
}
