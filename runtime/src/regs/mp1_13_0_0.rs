//! MP1 13.0.0 (the SMU of Navi31-class parts): the mailbox registers
//! barebell uses, which `mp_13_0_0_offset.h` declares beside MP0's. They
//! sit on MP1's discovered bases (`smu_v13_0_0_set_smu_mailbox_registers()`
//! resolves them with `SOC15_REG_OFFSET(MP1, ...)`); the protocol is in
//! [`crate::smu`].

super::registers! {
    "mp_13_0_0_offset.h";
    MP1_SMN_C2PMSG_53 = 0x0275, 0;
    MP1_SMN_C2PMSG_54 = 0x0276, 0;
    MP1_SMN_C2PMSG_66 = 0x0282, 0;
    MP1_SMN_C2PMSG_75 = 0x028b, 0;
    MP1_SMN_C2PMSG_82 = 0x0292, 0;
    MP1_SMN_C2PMSG_90 = 0x029a, 0;
}
