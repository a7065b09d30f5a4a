//! Navi31's second SDMA 6.0 engine, where Linux programs it
//! (`sdma_v6_0_get_reg_offset()`): instance 1's registers are instance
//! 0's plus `SDMA1_REG_OFFSET` (0x600 dwords) in GC segment 0, and plus
//! `SDMA1_HYP_DEC_REG_OFFSET` (0x20) for the `HYP_DEC` ones
//! (0x5880..=0x589a, GC segment 1, `SDMA0_F32_CNTL` among them). The
//! Linux peer's "ring sdma1 test failed" came from a model with one
//! engine. Offsets written here from `gc_11_0_0_offset.h`
//! (`regSDMA0_QUEUE0_RB_BASE` 0x0081 segment 0, `regSDMA0_QUEUE0_RB_CNTL`
//! 0x0080, `regSDMA0_F32_CNTL` 0x589a segment 1).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell::discovery::{Discovery, hw_id};
use barebell::platform::Platform;
use barebell_model::parts;
use barebell_model::sdma::SdmaEvent;
use barebell_tests::virtual_gpu;

#[test]
fn navi31_sdma1_takes_its_registers_where_linux_puts_them() {
    let gpu = virtual_gpu(parts::navi31(), 9);
    let table = gpu.part().firmware.desc;
    let (bytes, _) = barebell_model::discovery::build(&table);
    let d = Discovery::parse(&bytes).unwrap();
    let gc = d.ip(hw_id::GC, 0).unwrap().bases.0;
    let bus = gpu.regs();
    let at = |seg: usize, dword: u32| ((gc[seg] + dword) * 4) as usize;
    assert_eq!(gpu.sdma().len(), 2, "two SDMA 6.0 engines");
    // F32_CNTL comes out of reset with HALT set (0x08084001,
    // gc_11_0_0_default.h), on instance 1 too.
    assert_eq!(bus.read32(at(1, 0x589a + 0x20)) & 1, 1);
    // Ring base then RB_ENABLE on instance 1 (the engine is still halted).
    bus.write32(at(0, 0x81 + 0x600), 0x12_3456);
    bus.write32(at(0, 0x80 + 0x600), 1 | 10 << 1);
    let one = &gpu.sdma()[1];
    assert!(one.events().iter().any(|e| matches!(
        e,
        SdmaEvent::QueueOnHaltedEngine(q) if q.ring == 0x12_3456 << 8
    )));
    // Instance 0 saw none of it.
    assert!(gpu.sdma()[0].queue().is_none());
    assert!(gpu.sdma()[0].events().is_empty());
}
