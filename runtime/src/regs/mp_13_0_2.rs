//! MP0 13.0.2 (the PSP of Aldebaran: MI210, MI250) registers used by
//! barebell, checked against `asic_reg/mp/mp_13_0_2_offset.h` from Linux
//! 6.12, the header `psp_v13_0.c` itself includes. The mailboxes sit
//! where MP0 13.0.0 and 13.0.6 have them; the protocol is
//! [`crate::psp::mp13_0_2`]'s.

super::registers! {
    "mp_13_0_2_offset.h";
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
