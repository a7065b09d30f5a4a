//! GC 9.4.3's `SCRATCH_REG6`/`SCRATCH_REG7`, where the start step reads
//! and writes barebell's signature ([`crate::regs::gc_11_0_0`] has them for
//! gfx11), checked against `gc_9_4_3_offset.h`. One per XCC: the start
//! step uses logical XCC 0's instance (`GET_INST(GC, 0)`). Kept out of
//! `gc_9_4_3.rs` (the CP/HQD table) so the two merge independently.

super::registers! {
    "gc_9_4_3_offset.h";
    SCRATCH_REG6 = 0x2046, 1;
    SCRATCH_REG7 = 0x2047, 1;
}
