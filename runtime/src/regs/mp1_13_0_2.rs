//! MP1 13.0.2 (Aldebaran's SMU): the mailbox registers of
//! `mp_13_0_2_offset.h`, where `smu_v13_0_set_smu_mailbox_registers()`
//! (called by `aldebaran_set_ppt_funcs()`) puts them: `C2PMSG_66`
//! (message), `C2PMSG_82` (argument), `C2PMSG_90` (response), segment 0.
//! The debug mailbox (`C2PMSG_53/54/75`) is declared for traces only.

super::registers! {
    "mp_13_0_2_offset.h";
    MP1_SMN_C2PMSG_53 = 0x0275, 0;
    MP1_SMN_C2PMSG_54 = 0x0276, 0;
    MP1_SMN_C2PMSG_66 = 0x0282, 0;
    MP1_SMN_C2PMSG_75 = 0x028b, 0;
    MP1_SMN_C2PMSG_82 = 0x0292, 0;
    MP1_SMN_C2PMSG_90 = 0x029a, 0;
}
