//! MP0 13.0.0 (the PSP of Navi31-class parts) registers used by barebell.
//!
//! Checked against `asic_reg/mp/mp_13_0_0_offset.h` from Linux 6.12.
//! The C2PMSG registers are mailboxes: the sh_mask header gives each a
//! single 32-bit `CONTENT` field, and their meaning (bootloader ready bit,
//! ring commands, the GPCOM write pointer) is the PSP protocol of
//! `psp_v13_0.c`, not a register field. That protocol's bits live in
//! `barebell_firmware_if::psp_gfx` and in [`crate::psp`].

super::registers! {
    "mp_13_0_0_offset.h";
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
    MP1_SMN_C2PMSG_53 = 0x0275, 0;
    MP1_SMN_C2PMSG_54 = 0x0276, 0;
    MP1_SMN_C2PMSG_66 = 0x0282, 0;
    MP1_SMN_C2PMSG_75 = 0x028b, 0;
    MP1_SMN_C2PMSG_82 = 0x0292, 0;
    MP1_SMN_C2PMSG_90 = 0x029a, 0;
}

/// Each mailbox is one 32-bit `CONTENT` field.
pub const FIELD_FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant(
        "mp_13_0_0_sh_mask.h",
        "MP0_SMN_C2PMSG_35__CONTENT_MASK",
        0xFFFF_FFFF,
    ),
    barebell_facts::Fact::constant(
        "mp_13_0_0_sh_mask.h",
        "MP0_SMN_C2PMSG_64__CONTENT_MASK",
        0xFFFF_FFFF,
    ),
];
