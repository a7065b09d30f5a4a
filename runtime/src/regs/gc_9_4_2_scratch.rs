//! GC 9.4.2's scratch registers, checked against `gc_9_4_2_offset.h`:
//! `SCRATCH_REG6`/`7` hold barebell's signature, as on GC 9.4.3, and
//! `SCRATCH_REG4`/`5` the TMR record (Aldebaran's TMR is the driver's,
//! unlike MI300's boot-time one; see the start step).

super::registers! {
    "gc_9_4_2_offset.h";
    SCRATCH_REG4 = 0x2044, 1;
    SCRATCH_REG5 = 0x2045, 1;
    SCRATCH_REG6 = 0x2046, 1;
    SCRATCH_REG7 = 0x2047, 1;
}
