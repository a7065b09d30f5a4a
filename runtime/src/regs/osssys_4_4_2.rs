//! OSSSYS 4.4.2 (MI300's IH, driven by `vega20_ih.c`): the IH registers
//! barebell programs ([`crate::ih::ih_v4_4_2`]), checked against
//! `osssys_4_4_2_offset.h` from Linux 6.12.
//!
//! `vega20_ih.c` itself includes `osssys_4_2_0_offset.h` and defines
//! `mmIH_CHICKEN_ALDEBARAN` (0x18d) and `mmIH_RETRY_INT_CAM_CNTL_ALDEBARAN`
//! (0xea) for 4.4.x in the `.c` file; the 4.4.2 header names the same
//! offsets `regIH_CHICKEN` and `regIH_RETRY_INT_CAM_CNTL`, which is what
//! is checked here.

crate::regs::registers! {
    "osssys_4_4_2_offset.h";
    IH_RB_CNTL = 0x0080, 0;
    IH_RB_BASE = 0x0081, 0;
    IH_RB_BASE_HI = 0x0082, 0;
    IH_RB_RPTR = 0x0083, 0;
    IH_RB_WPTR = 0x0084, 0;
    IH_RB_WPTR_ADDR_HI = 0x0085, 0;
    IH_RB_WPTR_ADDR_LO = 0x0086, 0;
    IH_DOORBELL_RPTR = 0x0087, 0;
    IH_DOORBELL_RETRY_CAM = 0x0088, 0;
    IH_RB_CNTL_RING1 = 0x008c, 0;
    IH_RB_RPTR_RING1 = 0x008f, 0;
    IH_RB_WPTR_RING1 = 0x0090, 0;
    IH_RETRY_INT_CAM_CNTL = 0x00ea, 0;
    IH_CHICKEN = 0x018d, 0;
}
