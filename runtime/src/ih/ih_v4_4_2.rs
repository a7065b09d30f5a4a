//! OSSSYS 4.4.2 (MI300, `vega20_ih.c`): the IH registers barebell
//! programs, against `osssys_4_4_2_offset.h`, and the fields against
//! `osssys_4_4_2_sh_mask.h` ([`FIELD_FACTS`]).
//!
//! `vega20_ih_irq_init()` for ring 0, polled: the rings off
//! (`vega20_ih_toggle_interrupts(false)`: `RB_ENABLE` 0, `RB_GPU_TS_ENABLE`
//! 1, `ENABLE_INTR` 0 on ring 0, pointers 0); `IH_CHICKEN` read and
//! written back (4.4.x: the PSP does not program it for these parts; only
//! `MC_SPACE_GPA_ENABLE` changes, and only for a ring at a bus address,
//! which barebell's is not); `vega20_ih_enable_ring()`: base, `IH_RB_CNTL`
//! as `vega20_ih_rb_cntl()` builds it (the same fields
//! [`super::rb_cntl`] sets; `MC_SPACE` 4 for an MC address), the
//! write-pointer writeback address, both pointers 0, `IH_DOORBELL_RPTR`
//! with `ENABLE` 0 (no doorbell); then `vega20_ih_toggle_ring_interrupts
//! (true)` with the `WPTR_OVERFLOW_CLEAR` pulse and `RB_GPU_TS_ENABLE`.
//!
//! Left alone: `nbio_v7_9_ih_control()` (the host's interrupt path;
//! barebell polls, `ENABLE_INTR` stays clear as for 6.0/7.0),
//! `nbio_v7_9_ih_doorbell_range()` (no IH doorbell), and the retry CAM
//! (`IH_DOORBELL_RETRY_CAM`, `IH_RETRY_INT_CAM_CNTL.ENABLE`): it serves
//! retry faults Linux delegates to ring 1 (`amdgpu_irq_delegate()`),
//! which barebell does not run. The registers are declared so traces name
//! them.
//!
//! Entries: the soc15 IV layout ([`super::iv`]); the clients that raise a
//! VM fault differ from soc21 ([`decode`]).

use super::{IhInit, IhRegs, Interrupt, IvEntry};
use barebell_facts::Fact;

pub use crate::regs::osssys_4_4_2::*;

/// The registers by role.
pub const REGS: IhRegs = IhRegs {
    name: "OSSSYS 4.4.2 (vega20_ih)",
    rb_cntl: IH_RB_CNTL,
    rb_base: IH_RB_BASE,
    rb_base_hi: IH_RB_BASE_HI,
    rb_rptr: IH_RB_RPTR,
    rb_wptr: IH_RB_WPTR,
    wptr_addr_lo: IH_RB_WPTR_ADDR_LO,
    wptr_addr_hi: IH_RB_WPTR_ADDR_HI,
    doorbell_rptr: IH_DOORBELL_RPTR,
    rb_cntl_ring1: IH_RB_CNTL_RING1,
    rb_rptr_ring1: IH_RB_RPTR_RING1,
    rb_wptr_ring1: IH_RB_WPTR_RING1,
    init: IhInit::Vega20 {
        chicken: IH_CHICKEN,
    },
};

/// `IH_RB_CNTL.RB_GPU_TS_ENABLE`, which `vega20_ih_toggle_ring_interrupts()`
/// sets on every toggle.
pub const RB_GPU_TS_ENABLE: u32 = 0x0000_0080;

/// soc15 client ids (`soc15_ih_clientid.h`): the GFXHUB's UTCL2, the
/// MMHUB of the AID (`VMC`) and `VMC1` (= `PCIE0`, the second MMHUB
/// `gmc_v9_0_process_interrupt()` names `mmhub1`).
pub mod client {
    pub const UTCL2: u8 = 0x1b;
    pub const VMC: u8 = 0x12;
    pub const VMC1: u8 = 0x06;
}

const SH: &str = "osssys_4_4_2_sh_mask.h";

/// The fields this IH uses (the shared masks of [`super::fields`] that
/// the header has; 4.4.2 has no `IH_MSI_STORM_CTRL`), the ids, against
/// the headers.
pub const FIELD_FACTS: &[Fact] = &[
    Fact::constant(
        SH,
        "IH_RB_CNTL__RB_ENABLE_MASK",
        super::fields::RB_ENABLE as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_CNTL__RB_SIZE_MASK",
        super::fields::RB_SIZE as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_CNTL__RB_GPU_TS_ENABLE_MASK",
        RB_GPU_TS_ENABLE as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_CNTL__WPTR_WRITEBACK_ENABLE_MASK",
        super::fields::WPTR_WRITEBACK_ENABLE as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_CNTL__WPTR_OVERFLOW_ENABLE_MASK",
        super::fields::WPTR_OVERFLOW_ENABLE as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_CNTL__ENABLE_INTR_MASK",
        super::fields::ENABLE_INTR as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_CNTL__MC_SNOOP_MASK",
        super::fields::MC_SNOOP as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_CNTL__RPTR_REARM_MASK",
        super::fields::RPTR_REARM as u64,
    ),
    Fact::constant(SH, "IH_RB_CNTL__MC_RO_MASK", super::fields::MC_RO as u64),
    Fact::constant(
        SH,
        "IH_RB_CNTL__MC_VMID_MASK",
        super::fields::MC_VMID as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_CNTL__MC_SPACE_MASK",
        super::fields::MC_SPACE as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK",
        super::fields::WPTR_OVERFLOW_CLEAR as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_WPTR__RB_OVERFLOW_MASK",
        super::fields::RB_OVERFLOW as u64,
    ),
    Fact::constant(SH, "IH_RB_WPTR__OFFSET_MASK", super::fields::OFFSET as u64),
    Fact::constant(
        SH,
        "IH_RB_WPTR_ADDR_LO__ADDR_MASK",
        super::fields::WPTR_ADDR_LO as u64,
    ),
    Fact::constant(
        SH,
        "IH_RB_WPTR_ADDR_HI__ADDR_MASK",
        super::fields::WPTR_ADDR_HI as u64,
    ),
    Fact::constant(
        SH,
        "IH_DOORBELL_RPTR__ENABLE_MASK",
        super::fields::DOORBELL_ENABLE as u64,
    ),
    Fact::constant(
        "soc15_ih_clientid.h",
        "SOC15_IH_CLIENTID_UTCL2",
        client::UTCL2 as u64,
    ),
    Fact::constant(
        "soc15_ih_clientid.h",
        "SOC15_IH_CLIENTID_VMC",
        client::VMC as u64,
    ),
    Fact::constant(
        "soc15_ih_clientid.h",
        "SOC15_IH_CLIENTID_VMC1",
        client::VMC1 as u64,
    ),
];

/// Decodes a soc15 entry as `gmc_v9_0_process_interrupt()` reads a VM
/// fault: client `UTCL2` (source `UTCL2_1_0__SRCID__FAULT`) is the
/// GFXHUB of the XCC `node_id` names, `VMC`/`VMC1` (source
/// `VMC_1_0__SRCID__VM_FAULT`) an MMHUB; the address and the write/retry
/// bits of `src_data` are read as on gfx11 (the same bits in both `.c`
/// files). KFD's protection bits in `ring_id` are gfx11's reading
/// (`event_interrupt_wq_v9()` reads none: it takes the fault from the
/// hub's status register), so they are left false here. Anything else
/// stays [`Interrupt::Other`].
pub fn decode(e: &IvEntry) -> Interrupt {
    use super::{FaultHub, VmFaultIv, cited, id};
    let hub = match e.client_id {
        client::UTCL2 if e.src_id == id::SRC_UTCL2_FAULT => FaultHub::Gfx,
        client::VMC | client::VMC1 if e.src_id == id::SRC_VM_FAULT => FaultHub::Mm,
        _ => return Interrupt::Other(*e),
    };
    let d1 = e.src_data[1];
    Interrupt::VmFault(VmFaultIv {
        hub,
        addr: u64::from(e.src_data[0]) << 12 | u64::from(d1 & cited::ADDR_HI4) << 44,
        vmid: e.vmid,
        pasid: e.pasid,
        client_id: e.client_id,
        write: d1 & cited::WRITE != 0,
        retry: d1 & cited::RETRY != 0,
        not_present: false,
        no_read: false,
        no_write: false,
        timestamp: e.timestamp,
    })
}
