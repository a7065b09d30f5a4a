//! MP0 13.0.6 (the PSP of MI300-class parts, GC 9.4.3) registers used by
//! barebell.
//!
//! Checked against `asic_reg/mp/mp_13_0_6_offset.h` from Linux 6.12.
//! `psp_v13_0.c` itself includes `mp_13_0_2_offset.h` for every 13.0.x it
//! drives; the C2PMSG offsets below are the same in both headers. As on
//! 13.0.0, each C2PMSG is a mailbox with one 32-bit `CONTENT` field; the
//! protocol is `psp_v13_0.c`'s ([`crate::psp`], [`crate::psp::mp13_0_6`]).
//!
//! 13.0.6 reads three mailboxes 13.0.0's path does not:
//! - `C2PMSG_33`: `psp_v13_0_wait_for_vmbx_ready()` (bit 31: the
//!   bootloader's VMBX is ready, before the C2PMSG_35 wait);
//! - `C2PMSG_58`: `psp_v13_0_init_sos_version()` (the running sOS
//!   version, which `psp_load_p2s_table()` compares);
//! - `C2PMSG_127`: `psp_v13_0_get_ras_capability()` (RAS caps, bits
//!   23:0, poison support bit 24), not used by barebell.

super::registers! {
    "mp_13_0_6_offset.h";
    MP0_SMN_C2PMSG_33 = 0x0061, 0;
    MP0_SMN_C2PMSG_35 = 0x0063, 0;
    MP0_SMN_C2PMSG_36 = 0x0064, 0;
    MP0_SMN_C2PMSG_58 = 0x007a, 0;
    MP0_SMN_C2PMSG_64 = 0x0080, 0;
    MP0_SMN_C2PMSG_67 = 0x0083, 0;
    MP0_SMN_C2PMSG_69 = 0x0085, 0;
    MP0_SMN_C2PMSG_70 = 0x0086, 0;
    MP0_SMN_C2PMSG_71 = 0x0087, 0;
    MP0_SMN_C2PMSG_81 = 0x0091, 0;
}

/// Each mailbox is one 32-bit `CONTENT` field.
pub const FIELD_FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant(
        "mp_13_0_6_sh_mask.h",
        "MP0_SMN_C2PMSG_33__CONTENT_MASK",
        0xFFFF_FFFF,
    ),
    barebell_facts::Fact::constant(
        "mp_13_0_6_sh_mask.h",
        "MP0_SMN_C2PMSG_35__CONTENT_MASK",
        0xFFFF_FFFF,
    ),
    barebell_facts::Fact::constant(
        "mp_13_0_6_sh_mask.h",
        "MP0_SMN_C2PMSG_64__CONTENT_MASK",
        0xFFFF_FFFF,
    ),
    // The header psp_v13_0.c compiles with places the mailboxes the same.
    barebell_facts::Fact::constant("mp_13_0_2_offset.h", "regMP0_SMN_C2PMSG_35", 0x0063),
    barebell_facts::Fact::constant("mp_13_0_2_offset.h", "regMP0_SMN_C2PMSG_64", 0x0080),
    barebell_facts::Fact::constant("mp_13_0_2_offset.h", "regMP0_SMN_C2PMSG_81", 0x0091),
];
