//! NBIO 7.4 (Aldebaran's NBIO 7.4.4, `nbio_v7_4.c`) registers, checked
//! against `asic_reg/nbio/nbio_7_4_offset.h` from Linux 6.12, which names
//! them with the older `mm` prefix. The HDP remap, doorbell-aperture and
//! self-ring registers sit where NBIO 4.3.0 and 7.9.0 have them (segment
//! 2, the same dword offsets); registers past the BAR go through
//! `PCIE_INDEX2`/`PCIE_DATA2` (`nbio_v7_4_get_pcie_index_offset()`).
//! `nbio_v7_4.c` defines Aldebaran-only twins of a few registers
//! (`*_ALDE`) in the `.c` file; none of them is among these.

super::registers! {
    "nbio_7_4_offset.h", "mm";
    PCIE_INDEX2 = 0x000e, 0;
    PCIE_DATA2 = 0x000f, 0;
    RCC_DOORBELL_APER_EN = 0x00c0, 2;
    RCC_CONFIG_MEMSIZE = 0x00c3, 2;
    INTERRUPT_CNTL = 0x00f1, 2;
    INTERRUPT_CNTL2 = 0x00f2, 2;
    DOORBELL_SELFRING_GPA_APER_BASE_HIGH = 0x00f3, 2;
    DOORBELL_SELFRING_GPA_APER_BASE_LOW = 0x00f4, 2;
    DOORBELL_SELFRING_GPA_APER_CNTL = 0x00f5, 2;
    HDP_MEM_COHERENCY_FLUSH_CNTL = 0x00f7, 2;
    BIF_FB_EN = 0x00ff, 2;
    GPU_HDP_FLUSH_REQ = 0x0106, 2;
    GPU_HDP_FLUSH_DONE = 0x0107, 2;
    BACO_CNTL = 0x010b, 2;
    REMAP_HDP_MEM_FLUSH_CNTL = 0x012d, 2;
    REMAP_HDP_REG_FLUSH_CNTL = 0x012e, 2;
    BIF_SDMA0_DOORBELL_RANGE = 0x01d0, 2;
    BIF_SDMA1_DOORBELL_RANGE = 0x01d1, 2;
    BIF_IH_DOORBELL_RANGE = 0x01d2, 2;
}
