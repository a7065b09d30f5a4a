//! GC 9.4.3's packets name XCC-local registers; the model places them in
//! the XCC's own segment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell::discovery::{Discovery, hw_id};
use barebell_model::parts;
use barebell_tests::virtual_gpu;

/// GC 9.4.3's packets name XCC-local registers (`gfx_v9_4_3_ring_test_ring()`
/// writes `SOC15_REG_OFFSET(GC, 0, regSCRATCH_REG0)` on every XCC's ring):
/// on MI300X's XCC 3 the model places `SCRATCH_REG0` (GC segment 1 +
/// 0x2040) in XCC 3's own segment, its GC instance's base from the
/// discovery table; a register outside `XCC_REG_RANGE_0/1` stays where it
/// is. The Linux peer's XCC 1 KIQ ring test failed while the store went to
/// XCC 0's register.
#[test]
fn mi300x_packets_name_xcc_local_registers() {
    let gpu = virtual_gpu(parts::mi300x(), 7);
    let table = gpu.part().firmware.desc;
    let (bytes, _) = barebell_model::discovery::build(&table);
    let d = Discovery::parse(&bytes).unwrap();
    let gc = |x: u8| d.ip(hw_id::GC, x).unwrap().bases.0;
    let mec = gpu.gc_9_4_3().unwrap().mec();
    let local = gc(0)[1] + 0x2040;
    assert_eq!(mec.xcc_register(0, local), local);
    assert_eq!(mec.xcc_register(3, local), gc(3)[1] + 0x2040);
    assert_ne!(gc(3)[1], gc(0)[1]);
    // NBIO's BIF_BX0_PCIE_INDEX2 (dword 0xE) is no XCC register.
    assert_eq!(mec.xcc_register(3, 0xE), 0xE);
}
