//! HDP 4.4.2 (MI300): the registers `hdp_v4_0_init_registers()` writes,
//! checked against `hdp_4_4_2_offset.h` from Linux 6.12.
//!
//! `hdp_v4_0.c` itself includes `hdp_4_0_offset.h`/`_sh_mask.h` (the
//! `mm` names, the same offsets: checked in [`HDP_4_0_FACTS`]) and sets
//! `HDP_MISC_CNTL.FLUSH_INVALIDATE_CACHE` (bit 0 there) on every HDP 4.x;
//! the 4.4.2 mask header lists no field at bit 0. barebell writes what
//! Linux writes.

crate::regs::registers! {
    "hdp_4_4_2_offset.h";
    HDP_NONSURFACE_BASE = 0x0040, 0;
    HDP_NONSURFACE_BASE_HI = 0x0042, 0;
    HDP_MISC_CNTL = 0x00d3, 0;
}

/// `HDP_MISC_CNTL__FLUSH_INVALIDATE_CACHE_MASK` of `hdp_4_0_sh_mask.h`.
pub const FLUSH_INVALIDATE_CACHE: u32 = 0x1;

/// The 4.0 header's names and the field Linux sets.
pub const HDP_4_0_FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant("hdp_4_0_offset.h", "mmHDP_NONSURFACE_BASE", 0x40),
    barebell_facts::Fact::constant("hdp_4_0_offset.h", "mmHDP_NONSURFACE_BASE_HI", 0x42),
    barebell_facts::Fact::constant("hdp_4_0_offset.h", "mmHDP_MISC_CNTL", 0xd3),
    barebell_facts::Fact::constant(
        "hdp_4_0_sh_mask.h",
        "HDP_MISC_CNTL__FLUSH_INVALIDATE_CACHE_MASK",
        FLUSH_INVALIDATE_CACHE as u64,
    ),
];
