//! MP0 14.0.2 (the PSP of gfx12 parts) registers used by barebell.
//!
//! Checked against `asic_reg/mp/mp_14_0_2_offset.h` from Linux 6.12. The
//! 14.x headers name the PSP mailboxes `MPASP_SMN_C2PMSG_*` (the
//! `MP1_SMN_C2PMSG_*` of the same header are the SMU's, in segment 1).
//! The offsets used here equal 13.0.0's, which is what lets
//! [`crate::psp::PspRegs`] describe both with one struct. Unlike 13.0.0,
//! the header has no C2PMSG_58 (where 13.0.0 reports the SOS version).

super::registers! {
    "mp_14_0_2_offset.h";
    MPASP_SMN_C2PMSG_33 = 0x0061, 0;
    MPASP_SMN_C2PMSG_35 = 0x0063, 0;
    MPASP_SMN_C2PMSG_36 = 0x0064, 0;
    MPASP_SMN_C2PMSG_64 = 0x0080, 0;
    MPASP_SMN_C2PMSG_67 = 0x0083, 0;
    MPASP_SMN_C2PMSG_69 = 0x0085, 0;
    MPASP_SMN_C2PMSG_70 = 0x0086, 0;
    MPASP_SMN_C2PMSG_71 = 0x0087, 0;
    MPASP_SMN_C2PMSG_81 = 0x0091, 0;
    MP1_SMN_C2PMSG_53 = 0x0075, 1;
    MP1_SMN_C2PMSG_54 = 0x0076, 1;
    MP1_SMN_C2PMSG_66 = 0x0082, 1;
    MP1_SMN_C2PMSG_75 = 0x008b, 1;
    MP1_SMN_C2PMSG_82 = 0x0092, 1;
    MP1_SMN_C2PMSG_90 = 0x009a, 1;
}
