//! From the PVH entry to Rust: 32-bit protected mode in, 64-bit long mode
//! out.
//!
//! QEMU's `-kernel` loader finds the entry through a Xen ELF note
//! (`XEN_ELFNOTE_PHYS32_ENTRY`, type 18, name "Xen"; Xen's
//! `include/public/elfnote.h` and the PVH boot ABI in
//! `docs/misc/pvh.pandoc`). The PVH contract: 32-bit protected mode,
//! paging off, flat segments, interrupts off, `%ebx` holding the physical
//! address of `struct hvm_start_info`. Nothing else is set up, and the GDT
//! that was loaded is not ours to trust, so the entry:
//!
//! 1. zeroes `.bss` (the page tables and the stack live there);
//! 2. identity-maps the first GiB with 2 MiB pages (write-back); everything
//!    else, MMIO included, is mapped later by [`crate::paging`] with the
//!    caching it needs;
//! 3. sets CR4.PAE, CR4.OSFXSR and CR4.OSXMMEXCPT (so the SSE code the
//!    compiler emits does not fault), clears CR0.EM, sets CR0.MP;
//! 4. sets EFER.LME, turns paging on, loads a GDT with a 64-bit code
//!    segment and far-jumps into it;
//! 5. calls `kmain(start_info)` on a 16-byte aligned stack.

core::arch::global_asm!(
    r#"
    .section .note.pvh, "a", @note
    .p2align 2
    .long 4
    .long 4
    .long 18
    .asciz "Xen"
    .p2align 2
    .long pvh_entry

    .section .text.boot32, "ax", @progbits
    .code32
    .global pvh_entry
pvh_entry:
    cli
    cld
    mov %ebx, %esi

    mov $__bss_start, %edi
    mov $__bss_end, %ecx
    sub %edi, %ecx
    xor %eax, %eax
    rep stosb

    mov $BOOT_PDPT, %eax
    or $0x3, %eax
    mov %eax, BOOT_PML4
    mov $BOOT_PD0, %eax
    or $0x3, %eax
    mov %eax, BOOT_PDPT

    xor %ecx, %ecx
.Lfill_pd:
    mov %ecx, %eax
    shl $21, %eax
    or $0x83, %eax
    mov %eax, BOOT_PD0(,%ecx,8)
    movl $0, BOOT_PD0+4(,%ecx,8)
    inc %ecx
    cmp $512, %ecx
    jb .Lfill_pd

    mov %cr4, %eax
    or $0x620, %eax
    mov %eax, %cr4

    mov $BOOT_PML4, %eax
    mov %eax, %cr3

    mov $0xC0000080, %ecx
    rdmsr
    or $0x100, %eax
    wrmsr

    mov %cr0, %eax
    and $0xFFFFFFFB, %eax
    or $0x80000003, %eax
    mov %eax, %cr0

    lgdt boot_gdt_ptr
    ljmp $0x08, $long_entry

    .code64
long_entry:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    mov %ax, %fs
    mov %ax, %gs
    mov $__stack_top, %rsp
    xor %ebp, %ebp
    mov %esi, %edi
    call kmain
.Lhang:
    cli
    hlt
    jmp .Lhang

    .section .rodata.boot_gdt, "a", @progbits
    .p2align 3
boot_gdt:
    .quad 0
    .quad 0x00AF9A000000FFFF
    .quad 0x00CF92000000FFFF
boot_gdt_end:
boot_gdt_ptr:
    .word boot_gdt_end - boot_gdt - 1
    .long boot_gdt

    .section .bss.boot, "aw", @nobits
    .p2align 12
    .global BOOT_PML4
BOOT_PML4:
    .skip 4096
    .global BOOT_PDPT
BOOT_PDPT:
    .skip 4096
    .global BOOT_PD0
BOOT_PD0:
    .skip 4096
    .p2align 4
boot_stack:
    .skip 1048576
__stack_top:
    "#,
    options(att_syntax)
);
