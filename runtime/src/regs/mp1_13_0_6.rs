//! MP1 13.0.6 (the SMU of MI300, GC 9.4.3): the mailbox registers,
//! declared in `mp_13_0_6_offset.h` beside MP0's. Linux reaches them
//! through `smu_v13_0_set_smu_mailbox_registers()` (called by
//! `smu_v13_0_6_set_ppt_funcs()`), which names `C2PMSG_82` (argument),
//! `C2PMSG_66` (message) and `C2PMSG_90` (response) on MP1's bases with
//! offsets `smu_v13_0.c` `#define`s (0x282/0x292/0x29a, segment 0); the
//! 13.0.6 header puts them at the same place, which is what is checked.
//! The debug mailbox (`C2PMSG_53/54/75`) is declared for traces: Linux
//! installs no debug mailbox for 13.0.6.

super::registers! {
    "mp_13_0_6_offset.h";
    MP1_SMN_C2PMSG_53 = 0x0275, 0;
    MP1_SMN_C2PMSG_54 = 0x0276, 0;
    MP1_SMN_C2PMSG_66 = 0x0282, 0;
    MP1_SMN_C2PMSG_75 = 0x028b, 0;
    MP1_SMN_C2PMSG_82 = 0x0292, 0;
    MP1_SMN_C2PMSG_90 = 0x029a, 0;
}
