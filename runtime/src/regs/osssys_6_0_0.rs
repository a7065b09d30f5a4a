//! OSSSYS 6.0.0: the IH registers barebell programs
//! ([`crate::ih::ih_v6_0`]), checked against `osssys_6_0_0_offset.h` from Linux
//! 6.12.

crate::regs::registers! {
    "osssys_6_0_0_offset.h";
    IH_RB_CNTL = 0x0080, 0;
    IH_RB_BASE = 0x0081, 0;
    IH_RB_BASE_HI = 0x0082, 0;
    IH_RB_RPTR = 0x0083, 0;
    IH_RB_WPTR = 0x0084, 0;
    IH_RB_WPTR_ADDR_HI = 0x0085, 0;
    IH_RB_WPTR_ADDR_LO = 0x0086, 0;
    IH_DOORBELL_RPTR = 0x0087, 0;
    IH_RB_CNTL_RING1 = 0x008c, 0;
    IH_RB_RPTR_RING1 = 0x008f, 0;
    IH_RB_WPTR_RING1 = 0x0090, 0;
    IH_INT_FLOOD_CNTL = 0x00d5, 0;
    IH_STORM_CLIENT_LIST_CNTL = 0x00da, 0;
    IH_MSI_STORM_CTRL = 0x00f1, 0;
}
