//! MP1 14.0.2/14.0.3 (the SMU of gfx12 parts): the mailbox registers
//! barebell uses, from `mp_14_0_2_offset.h` (segment 1 of MP1's bases,
//! `smu_v14_0_2_set_smu_mailbox_registers()`); the protocol is in
//! [`crate::smu`].

super::registers! {
    "mp_14_0_2_offset.h";
    MP1_SMN_C2PMSG_53 = 0x0075, 1;
    MP1_SMN_C2PMSG_54 = 0x0076, 1;
    MP1_SMN_C2PMSG_66 = 0x0082, 1;
    MP1_SMN_C2PMSG_75 = 0x008b, 1;
    MP1_SMN_C2PMSG_82 = 0x0092, 1;
    MP1_SMN_C2PMSG_90 = 0x009a, 1;
}
