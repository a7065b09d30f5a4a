//! The interrupt handler (IH) of OSSSYS 6.0.0 (Navi31) and 7.0.0
//! (Navi48), as `ih_v6_0.c` / `ih_v7_0.c` and tinygrad's `AM_IH` program
//! it: ring 0 and ring 1, each a ring buffer in memory the IH writes
//! entries into and a write pointer the driver reads
//! (`ih_v6_0_get_wptr()`, `AM_IH.interrupt_handler()`).
//!
//! The model keeps the registers (reset values: no OSSSYS default header
//! exists, so 0, a *model value*) and decodes a ring when `RB_ENABLE`
//! rises: base (`IH_RB_BASE(_HI)`, MC address >> 8), size (`RB_SIZE` =
//! log2 of the dwords, `ih_v6_0_enable_ring()`: `order_base_2(ring_size
//! / 4)`), address space (`MC_SPACE`). What it enforces:
//! - `MC_SPACE` is one of the two values Linux writes
//!   (`ih_v6_0_rb_cntl()`: 2 for a bus address, 4 otherwise); another is
//!   refused (*model rule*: their meaning is not public);
//! - the ring is at least one entry (32 bytes) and whole (`RB_SIZE` ≤
//!   17, the `IH_RB_WPTR.OFFSET` field's reach).
//!
//! Raising ([`IhModel::raise`]): the block models call it where the
//! hardware interrupts (the hubs on a VM fault, the SQ on a wave error,
//! see `crate::vgpu`). The entry is the 8-dword IV entry
//! `amdgpu_ih_decode_iv_helper()` and KFD's `SOC15_*_FROM_IH_ENTRY()`
//! read ([`IvEntry::encode`], the layout in [`IV_FACTS`], checked
//! against `soc15_int.h`). It goes to ring 0 only (ring 1 takes
//! delegated retry faults, `amdgpu_irq_delegate()`, which the model does
//! not raise), at `base + IH_RB_WPTR.OFFSET`, written as the OSSSYS
//! client of the MMHUB (UTCL2 client 15, `mmhub_client_ids_v3_0_0` /
//! `_v4_1_0`) through VMID0 and the system aperture (`MC_SPACE` 4); then
//! `IH_RB_WPTR` advances by 32 bytes, wrapping at the ring's size, and
//! with `WPTR_WRITEBACK_ENABLE` its value is stored at
//! `IH_RB_WPTR_ADDR_LO/HI`. A full ring (the next write pointer equals
//! `IH_RB_RPTR`) with `WPTR_OVERFLOW_ENABLE` sets `IH_RB_WPTR.RB_OVERFLOW`
//! and the entry overwrites the oldest one, which is what
//! `ih_v6_0_get_wptr()` recovers from (it restarts at `wptr + 32`, "the
//! last not overwritten vector"); without it the entry is dropped
//! (*model reading*, unconfirmed). A write of `IH_RB_CNTL` with
//! `WPTR_OVERFLOW_CLEAR` clears `RB_OVERFLOW`. Model conventions: the
//! timestamp is the simulated clock in ns (hardware counts a reference
//! clock); `pasid` and `node_id` are 0 (the IH's VMID→PASID table,
//! `IH_VMID_n_LUT`, is not modelled); `ENABLE_INTR` is not needed for
//! the ring to be written, but an entry written while ring 0's
//! `IH_RB_CNTL.ENABLE_INTR` is set (`ih_v6_0_toggle_interrupts()`,
//! `vega20_ih_toggle_ring_interrupts()` set it with `RB_ENABLE`) is an
//! interrupt for the platform to deliver ([`IhModel::take_interrupts`]:
//! the vfio-user peer signals MSI-X vector 0, the one vector
//! `amdgpu_irq_init()` asks for). A ring whose `MC_SPACE` is the
//! version's bus-address value (`use_bus_addr`: 2 on `ih_v6_0`, 1 on
//! `vega20_ih`, as MI300X's Linux 6.12 programs it) is written, with its
//! write-pointer write-back, at bus addresses through the IOMMU, past
//! the VM.

use crate::SimClock;
use crate::mc::{Mc, McFault};
use crate::soc::{RefusalLog, RegStore, field};
use crate::socregs::{self, Reg};
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::regs::IpBases;
use barebell::time::Clock;
use barebell_facts::Fact;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;

/// `IH_RB_CNTL` fields (`osssys_6_0_0_sh_mask.h`, equal in 7.0.0).
pub mod rb_cntl {
    pub const RB_ENABLE: u32 = 0x0000_0001;
    pub const RB_SIZE: u32 = 0x0000_003E;
    pub const WPTR_WRITEBACK_ENABLE: u32 = 0x0000_0100;
    pub const WPTR_OVERFLOW_ENABLE: u32 = 0x0001_0000;
    pub const ENABLE_INTR: u32 = 0x0002_0000;
    pub const MC_SPACE: u32 = 0x7000_0000;
    pub const WPTR_OVERFLOW_CLEAR: u32 = 0x8000_0000;
}

/// `IH_RB_WPTR.OFFSET`.
pub const WPTR_OFFSET: u32 = 0x0003_FFFC;
/// `IH_RB_WPTR.RB_OVERFLOW`.
pub const RB_OVERFLOW: u32 = 0x0000_0001;
/// `IH_RB_WPTR_ADDR_LO.ADDR` / `IH_RB_WPTR_ADDR_HI.ADDR`.
pub const WPTR_ADDR_LO: u32 = 0xFFFF_FFFC;
pub const WPTR_ADDR_HI: u32 = 0x0000_FFFF;
/// Bytes of one IV entry (`amdgpu_ih_decode_iv_helper()` reads 8 dwords
/// and advances `rptr` by 32).
pub const ENTRY_BYTES: u32 = 32;
/// The OSSSYS's UTCL2 client id on the MMHUB (`[15][1] = "OSSSYS"` in
/// `mmhub_client_ids_v3_0_0` and `_v4_1_0`): what a fault of the IH's own
/// write latches.
pub const CID_OSSSYS: u16 = 15;

const MASKS: [(&str, u32); 11] = [
    ("IH_RB_CNTL__RB_ENABLE_MASK", rb_cntl::RB_ENABLE),
    ("IH_RB_CNTL__ENABLE_INTR_MASK", rb_cntl::ENABLE_INTR),
    ("IH_RB_CNTL__RB_SIZE_MASK", rb_cntl::RB_SIZE),
    (
        "IH_RB_CNTL__WPTR_WRITEBACK_ENABLE_MASK",
        rb_cntl::WPTR_WRITEBACK_ENABLE,
    ),
    (
        "IH_RB_CNTL__WPTR_OVERFLOW_ENABLE_MASK",
        rb_cntl::WPTR_OVERFLOW_ENABLE,
    ),
    ("IH_RB_CNTL__MC_SPACE_MASK", rb_cntl::MC_SPACE),
    (
        "IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK",
        rb_cntl::WPTR_OVERFLOW_CLEAR,
    ),
    ("IH_RB_WPTR__OFFSET_MASK", WPTR_OFFSET),
    ("IH_RB_WPTR__RB_OVERFLOW_MASK", RB_OVERFLOW),
    ("IH_RB_WPTR_ADDR_LO__ADDR_MASK", WPTR_ADDR_LO),
    ("IH_RB_WPTR_ADDR_HI__ADDR_MASK", WPTR_ADDR_HI),
];

const fn mask_facts(header: &'static str) -> [Fact; 11] {
    let mut out = [Fact::constant("", "0", 0); 11];
    let mut i = 0;
    while i < MASKS.len() {
        out[i] = Fact::constant(header, MASKS[i].0, MASKS[i].1 as u64);
        i += 1;
    }
    out
}

const V6_MASKS: [Fact; 11] = mask_facts("osssys_6_0_0_sh_mask.h");
const V7_MASKS: [Fact; 11] = mask_facts("osssys_7_0_0_sh_mask.h");
const V442_MASKS: [Fact; 11] = mask_facts("osssys_4_4_2_sh_mask.h");

/// The `IH_RB_*` fields the model decodes, against the three headers.
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    V6_MASKS,
    V7_MASKS,
    V442_MASKS,
    [
        Fact::constant(IHC, "SOC15_IH_CLIENTID_UTCL2", client::SOC15_UTCL2 as u64),
        Fact::constant(IHC, "SOC15_IH_CLIENTID_VMC", client::VMC as u64),
    ]
);

/// The IV entry layout, written from `soc15_int.h`'s
/// `SOC15_*_FROM_IH_ENTRY()` (what KFD reads) and
/// `amdgpu_ih_decode_iv_helper()`: (dword, mask in the dword).
pub mod iv {
    pub const CLIENT_ID: (usize, u32) = (0, 0x0000_00FF);
    pub const SOURCE_ID: (usize, u32) = (0, 0x0000_FF00);
    pub const RING_ID: (usize, u32) = (0, 0x00FF_0000);
    pub const VMID: (usize, u32) = (0, 0x0F00_0000);
    pub const VMID_TYPE: (usize, u32) = (0, 0x8000_0000);
    pub const PASID: (usize, u32) = (3, 0x0000_FFFF);
    pub const NODE_ID: (usize, u32) = (3, 0x00FF_0000);
    /// `src_data[0..4]` (KFD's context ids 0..3) are dwords 4..7.
    pub const CONTEXT_ID0: usize = 4;
    /// The timestamp: dword 1, and bits 15:0 of dword 2 as bits 47:32
    /// (`amdgpu_ih_decode_iv_helper()`; no header macro).
    pub const TIMESTAMP_HI: u32 = 0x0000_FFFF;
}

/// `SOC21_IH_CLIENTID_*` (`soc15_ih_clientid.h`), and soc15's UTCL2
/// (the GFXHUB's fault client on gfx9, `gmc_v9_0_process_interrupt()`;
/// soc15's `VMC` is 0x12 too).
pub mod client {
    pub const GFX: u8 = 0x0a;
    /// `SOC21_IH_CLIENTID_GRBM_CP`: the CP's end-of-pipe interrupts
    /// (`gfx_v11_0_sw_init()` adds `CP_EOP_INTERRUPT` on it).
    pub const GRBM_CP: u8 = 0x14;
    /// `SOC15_IH_CLIENTID_SDMA0`, `_SDMA1`, `_SDMA2` (= `_ACP`), `_SDMA3`
    /// (= `_DCE`): SDMA 4.4.2's instance within its AID.
    pub const SDMA_V4_4_2: [u8; 4] = [0x08, 0x09, 0x01, 0x04];
    /// `SOC15_IH_CLIENTID_SDMA0..4` (`_SDMA4` = `_ISP`): Aldebaran's five
    /// SDMA 4.4.0 instances.
    pub const SDMA_V4_0: [u8; 5] = [0x08, 0x09, 0x01, 0x04, 0x05];
    pub const VMC: u8 = 0x12;
    pub const SOC15_UTCL2: u8 = 0x1b;
}

/// Source ids: `GFX_11_0_0__SRCID__UTCL2_FAULT` (the GFXHUB's fault,
/// `irqsrcs_gfx_11_0_0.h`), `VMC_1_0__SRCID__VM_FAULT` (the MMHUB's,
/// `irqsrcs_vmc_1_0.h`), `SOC15_INTSRC_SQ_INTERRUPT_MSG` (`soc15_int.h`).
pub mod src {
    pub const UTCL2_FAULT: u8 = 0;
    pub const VM_FAULT: u8 = 0;
    pub const SQ_INTERRUPT_MSG: u8 = 239;
    /// `GFX_11_0_0__SRCID__CP_EOP_INTERRUPT`.
    pub const CP_EOP: u8 = 181;
    /// `GFX_11_0_0__SRCID__SDMA_TRAP`.
    pub const SDMA_TRAP_GFX11: u8 = 49;
    /// `SDMA0_4_0__SRCID__SDMA_TRAP`.
    pub const SDMA_TRAP_V4: u8 = 224;
}

/// The C expression that rebuilds, bit by bit, which bits of dword `$dw`
/// the header's `$macro` reads (a statement expression; gnu11).
macro_rules! iv_probe {
    ($macro:literal, $dw:literal) => {
        concat!(
            "({ u32 m_ = 0; for (int i_ = 0; i_ < 32; i_++) { u32 e_[8] = {0}; e_[",
            $dw,
            "] = 1u << i_; if (",
            $macro,
            "(e_)) m_ |= 1u << i_; } m_; })"
        )
    };
}

const INT: &str = "soc15_int.h";
const IHC: &str = "soc15_ih_clientid.h";

/// The IV entry layout and the ids the model raises with, against the
/// headers.
pub const IV_FACTS: &[Fact] = &[
    Fact::constant(
        INT,
        iv_probe!("SOC15_CLIENT_ID_FROM_IH_ENTRY", "0"),
        iv::CLIENT_ID.1 as u64,
    ),
    Fact::constant(
        INT,
        iv_probe!("SOC15_SOURCE_ID_FROM_IH_ENTRY", "0"),
        iv::SOURCE_ID.1 as u64,
    ),
    Fact::constant(
        INT,
        iv_probe!("SOC15_RING_ID_FROM_IH_ENTRY", "0"),
        iv::RING_ID.1 as u64,
    ),
    Fact::constant(
        INT,
        iv_probe!("SOC15_VMID_FROM_IH_ENTRY", "0"),
        iv::VMID.1 as u64,
    ),
    Fact::constant(
        INT,
        iv_probe!("SOC15_VMID_TYPE_FROM_IH_ENTRY", "0"),
        iv::VMID_TYPE.1 as u64,
    ),
    Fact::constant(
        INT,
        iv_probe!("SOC15_PASID_FROM_IH_ENTRY", "3"),
        iv::PASID.1 as u64,
    ),
    Fact::constant(
        INT,
        iv_probe!("SOC15_NODEID_FROM_IH_ENTRY", "3"),
        iv::NODE_ID.1 as u64,
    ),
    Fact::constant(
        INT,
        iv_probe!("SOC15_CONTEXT_ID0_FROM_IH_ENTRY", "4"),
        0xFFFF_FFFF,
    ),
    Fact::constant(
        INT,
        iv_probe!("SOC15_CONTEXT_ID1_FROM_IH_ENTRY", "5"),
        0xFFFF_FFFF,
    ),
    Fact::constant(
        INT,
        "SOC15_INTSRC_SQ_INTERRUPT_MSG",
        src::SQ_INTERRUPT_MSG as u64,
    ),
    Fact::constant(INT, "SOC15_INTSRC_VMC_FAULT", src::VM_FAULT as u64),
    Fact::constant(IHC, "SOC21_IH_CLIENTID_GFX", client::GFX as u64),
    Fact::constant(IHC, "SOC21_IH_CLIENTID_GRBM_CP", client::GRBM_CP as u64),
    Fact::constant(
        "irqsrcs_gfx_11_0_0.h",
        "GFX_11_0_0__SRCID__CP_EOP_INTERRUPT",
        src::CP_EOP as u64,
    ),
    Fact::constant(
        "irqsrcs_gfx_9_0.h",
        "GFX_9_0__SRCID__CP_EOP_INTERRUPT",
        src::CP_EOP as u64,
    ),
    Fact::constant(
        "irqsrcs_gfx_11_0_0.h",
        "GFX_11_0_0__SRCID__SDMA_TRAP",
        src::SDMA_TRAP_GFX11 as u64,
    ),
    Fact::constant(IHC, "SOC15_IH_CLIENTID_GRBM_CP", client::GRBM_CP as u64),
    Fact::constant(
        IHC,
        "SOC15_IH_CLIENTID_SDMA0",
        client::SDMA_V4_4_2[0] as u64,
    ),
    Fact::constant(
        IHC,
        "SOC15_IH_CLIENTID_SDMA1",
        client::SDMA_V4_4_2[1] as u64,
    ),
    Fact::constant(
        IHC,
        "SOC15_IH_CLIENTID_SDMA2",
        client::SDMA_V4_4_2[2] as u64,
    ),
    Fact::constant(
        IHC,
        "SOC15_IH_CLIENTID_SDMA3",
        client::SDMA_V4_4_2[3] as u64,
    ),
    Fact::constant(IHC, "SOC15_IH_CLIENTID_SDMA4", client::SDMA_V4_0[4] as u64),
    Fact::constant(
        "irqsrcs_sdma0_4_0.h",
        "SDMA0_4_0__SRCID__SDMA_TRAP",
        src::SDMA_TRAP_V4 as u64,
    ),
    Fact::constant(IHC, "SOC21_IH_CLIENTID_VMC", client::VMC as u64),
    Fact::constant(
        "irqsrcs_gfx_11_0_0.h",
        "GFX_11_0_0__SRCID__UTCL2_FAULT",
        src::UTCL2_FAULT as u64,
    ),
    Fact::constant(
        "irqsrcs_vmc_1_0.h",
        "VMC_1_0__SRCID__VM_FAULT",
        src::VM_FAULT as u64,
    ),
    Fact::constant(
        "irqsrcs_vmc_1_0.h",
        "UTCL2_1_0__SRCID__FAULT",
        src::UTCL2_FAULT as u64,
    ),
];

/// A VM fault's `src_data[1]` as `gmc_v11_0_process_interrupt()` reads
/// it: page address bits 47:44, write, retry (no header has these; read
/// from `gmc_v11_0.c`, not conformance-checked).
pub mod fault_data {
    pub const ADDR_HI: u32 = 0x0000_000F;
    pub const WRITE: u32 = 0x0000_0020;
    pub const RETRY: u32 = 0x0000_0080;
}

/// A VM fault's `ring_id` bits as KFD's `event_interrupt_wq_v11()` reads
/// them (`prot_valid`, `prot_read`, `prot_write`; from
/// `kfd_int_process_v11.c`, not conformance-checked).
pub mod prot {
    pub const VALID: u8 = 0x08;
    pub const READ: u8 = 0x10;
    pub const WRITE: u8 = 0x20;
}

/// A CP interrupt's `ring_id` as `gfx_v11_0_handle_priv_fault()` splits
/// it: ME, pipe, queue (from `gfx_v11_0.c`, not conformance-checked).
pub mod ring_id {
    pub const PIPE: u8 = 0x03;
    pub const ME: u8 = 0x0c;
    pub const QUEUE: u8 = 0x70;
}

/// The SQ interrupt word of an error (`SQ_INTERRUPT_WORD_ERROR_CTXID0/1`
/// and `SQ_INTERRUPT_WORD_ENCODING_ERROR`, defined in
/// `kfd_int_process_v11.c`, not in a header: not conformance-checked).
pub mod sq {
    pub const CTXID0_TYPE: u32 = 0x01E0_0000;
    pub const CTXID0_WAVE_ID: u32 = 0xF800_0000;
    pub const CTXID1_SIMD_ID: u32 = 0x0000_0003;
    pub const CTXID1_WGP_ID: u32 = 0x0000_003C;
    pub const CTXID1_ENCODING: u32 = 0x0000_00C0;
    pub const ENCODING_ERROR: u32 = 2;
}

fn place(v: u32, mask: u32) -> u32 {
    (v << mask.trailing_zeros()) & mask
}

impl IvEntry {
    /// The entry for a fault of the GFXHUB (`mmhub` false: client GFX,
    /// `UTCL2_FAULT`, `vmid_src` 0) or the MMHUB (client VMC, `VM_FAULT`,
    /// `vmid_src` 1), as `gmc_v11_0_process_interrupt()` decodes it. The
    /// `ring_id` protection bits are the model's reading of KFD's
    /// (`VALID` for an invalid PTE, `READ`/`WRITE` for a missing
    /// permission); no retry faults (`noretry`, Linux's default on these
    /// parts, is the only mode modelled).
    pub fn vm_fault(mmhub: bool, f: &crate::hub::HubFault) -> IvEntry {
        use crate::gmc::{Access, FaultReason};
        let page = f.va >> 12;
        let write = f.access == Access::Write;
        let ring_id = match f.reason {
            Some(FaultReason::Invalid { .. }) => prot::VALID,
            Some(FaultReason::Permission) if write => prot::WRITE,
            Some(FaultReason::Permission) => prot::READ,
            _ => 0,
        };
        IvEntry {
            client_id: if mmhub { client::VMC } else { client::GFX },
            src_id: if mmhub {
                src::VM_FAULT
            } else {
                src::UTCL2_FAULT
            },
            ring_id,
            vmid: f.vmid & 0xF,
            vmid_src: mmhub,
            src_data: [
                page as u32,
                ((page >> 32) as u32 & fault_data::ADDR_HI)
                    | if write { fault_data::WRITE } else { 0 },
                0,
                0,
            ],
            ..IvEntry::default()
        }
    }

    /// A gfx9 hub's VM fault as `gmc_v9_0_process_interrupt()` reads it
    /// (GC 9.4.3 with an OSSSYS 4.4.2 IH): client `UTCL2` (0x1b) with
    /// `UTCL2_1_0__SRCID__FAULT` for a GFXHUB, `VMC` with
    /// `VMC_1_0__SRCID__VM_FAULT` for an MMHUB; the page of `va` in
    /// `src_data[0]` and bits 47:44 in `src_data[1]` with the write bit;
    /// `node_id` as the fault's die/XCD (`node_id / 4` the AID,
    /// `node_id % 4` 1 or 2 the XCD, the `.c` file's message). No `ring_id`
    /// protection bits (KFD's v9 handler reads the hub's status register
    /// instead). Whether the model's gfx9 hubs raise it is the device's
    /// wiring.
    pub fn vm_fault_v9(mmhub: bool, vmid: u8, va: u64, write: bool, node_id: u8) -> IvEntry {
        let page = va >> 12;
        IvEntry {
            client_id: if mmhub {
                client::VMC
            } else {
                client::SOC15_UTCL2
            },
            src_id: if mmhub {
                src::VM_FAULT
            } else {
                src::UTCL2_FAULT
            },
            vmid: vmid & 0xF,
            vmid_src: mmhub,
            node_id,
            src_data: [
                page as u32,
                ((page >> 32) as u32 & fault_data::ADDR_HI)
                    | if write { fault_data::WRITE } else { 0 },
                0,
                0,
            ],
            ..IvEntry::default()
        }
    }

    /// The SQ's error interrupt (`SQ_INTERRUPT_MSG`, encoding ERROR) for a
    /// wave stopped by `e`, from the queue on HQD `slot`. Model
    /// convention (unconfirmed): `ring_id` carries the slot as
    /// `gfx_v11_0_handle_priv_fault()` splits a CP interrupt's ring id
    /// (whether the SQ's message carries it is not public); the wave id
    /// is the interpreter's wave index, SIMD/WGP/SH 0.
    /// The CP's end-of-pipe interrupt for the queue on `slot` (ME, pipe,
    /// queue in `ring_id` as `gfx_v11_0_eop_irq()` reads them back), with
    /// the `RELEASE_MEM` context id in `src_data[0]` (the MES user-queue
    /// flag and id there, 0 for a kernel ring).
    pub fn cp_eop(slot: Option<(u8, u8, u8)>, context: u32) -> IvEntry {
        let ring_id = slot.map_or(0, |(me, pipe, queue)| {
            (pipe & ring_id::PIPE) | ((me << 2) & ring_id::ME) | ((queue << 4) & ring_id::QUEUE)
        });
        IvEntry {
            client_id: client::GRBM_CP,
            src_id: src::CP_EOP,
            ring_id,
            src_data: [context, 0, 0, 0],
            ..IvEntry::default()
        }
    }

    /// SDMA 6.0's trap (`sdma_v6_0_process_trap_irq()`): client
    /// `SOC21_IH_CLIENTID_GFX`, `GFX_11_0_0__SRCID__SDMA_TRAP`, the
    /// instance in `ring_id` bits 7:4 and the queue (0) in 3:0, the TRAP's
    /// `int_context` in `src_data[0]` (where Linux looks for a MES queue's
    /// id; 0 for a kernel ring).
    pub fn sdma_trap(instance: u8, context: u32) -> IvEntry {
        IvEntry {
            client_id: client::GFX,
            src_id: src::SDMA_TRAP_GFX11,
            ring_id: (instance & 0xF) << 4,
            src_data: [context, 0, 0, 0],
            ..IvEntry::default()
        }
    }

    /// GC 9.4.3's end-of-pipe interrupt: as [`IvEntry::cp_eop`] (client
    /// `SOC15_IH_CLIENTID_GRBM_CP`, `GFX_9_0__SRCID__CP_EOP_INTERRUPT`,
    /// the same numbers), with the XCC's node in `node_id`
    /// ([`XCD_NODE_IDS`]), which Linux maps back with
    /// `gfx_v9_4_3_ih_to_xcc_inst()` (`hweight8(xcc_mask & GENMASK(node
    /// / 2, 0)) - 1`).
    pub fn cp_eop_v9(xcc: usize, slot: (u8, u8, u8), context: u32) -> IvEntry {
        IvEntry {
            node_id: XCD_NODE_IDS.get(xcc).copied().unwrap_or(0),
            ..Self::cp_eop(Some(slot), context)
        }
    }

    /// SDMA 4.4.2's trap (`sdma_v4_4_2_process_trap_irq()`): the instance
    /// within its AID in the client (`sdma_v4_4_2_irq_id_to_seq()`:
    /// `SOC15_IH_CLIENTID_SDMA0..3`), the AID's node in `node_id`
    /// ([`AID_NODE_IDS`], matched through `node_id_to_phys_map`), ring 0
    /// (the GFX queue), `SDMA0_4_0__SRCID__SDMA_TRAP`, the
    /// TRAP's `int_context` in `src_data[0]`.
    pub fn sdma_trap_v4_4_2(instance: usize, context: u32) -> IvEntry {
        IvEntry {
            client_id: client::SDMA_V4_4_2[instance % 4],
            src_id: src::SDMA_TRAP_V4,
            node_id: AID_NODE_IDS.get(instance / 4).copied().unwrap_or(0),
            src_data: [context, 0, 0, 0],
            ..IvEntry::default()
        }
    }

    /// A TRAP on SDMA 4.4.0 instance `instance` of an Aldebaran: the
    /// instance's client (`sdma_v4_0_seq_to_irq_id()`:
    /// `SOC15_IH_CLIENTID_SDMA0..4`), ring 0 (the GFX queue),
    /// `SDMA0_4_0__SRCID__SDMA_TRAP`, the TRAP's `int_context` in
    /// `src_data[0]`; one die, node 0.
    pub fn sdma_trap_v4_0(instance: usize, context: u32) -> IvEntry {
        IvEntry {
            client_id: client::SDMA_V4_0.get(instance).copied().unwrap_or(0),
            src_id: src::SDMA_TRAP_V4,
            src_data: [context, 0, 0, 0],
            ..IvEntry::default()
        }
    }

    pub fn sq_error(slot: Option<(u8, u8, u8)>, e: &crate::wave::SqEvent) -> IvEntry {
        let ring_id = slot.map_or(0, |(me, pipe, queue)| {
            (pipe & ring_id::PIPE) | ((me << 2) & ring_id::ME) | ((queue << 4) & ring_id::QUEUE)
        });
        IvEntry {
            client_id: client::GFX,
            src_id: src::SQ_INTERRUPT_MSG,
            ring_id,
            vmid: e.vmid & 0xF,
            src_data: [
                place(e.error.code(), sq::CTXID0_TYPE) | place(e.wave, sq::CTXID0_WAVE_ID),
                place(sq::ENCODING_ERROR, sq::CTXID1_ENCODING),
                0,
                0,
            ],
            ..IvEntry::default()
        }
    }
}

/// `XCD0_NODEID`..`XCD7_NODEID` and `AID0_NODEID`..`AID3_NODEID`
/// (`amdgpu_irq.h`): the `node_id` an MI300 block's IV entry carries
/// (`.h` enum values in a kernel-internal header: they rest on their
/// citation).
pub const XCD_NODE_IDS: [u8; 8] = [1, 2, 5, 6, 9, 10, 13, 14];
pub const AID_NODE_IDS: [u8; 4] = [0, 4, 8, 12];

/// One interrupt vector as the IH writes it (the fields of Linux's
/// `struct amdgpu_iv_entry` that come from the ring).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IvEntry {
    pub client_id: u8,
    pub src_id: u8,
    pub ring_id: u8,
    pub vmid: u8,
    /// 0: the GFXHUB's VMID space, 1: the MMHUB's (`vmid_src`).
    pub vmid_src: bool,
    /// 48 bits.
    pub timestamp: u64,
    pub pasid: u16,
    pub node_id: u8,
    pub src_data: [u32; 4],
}

fn put(w: &mut [u32; 8], (dw, mask): (usize, u32), v: u32) {
    if let Some(d) = w.get_mut(dw) {
        *d |= (v << mask.trailing_zeros()) & mask;
    }
}

impl IvEntry {
    /// The 8 dwords, in ring order.
    pub fn encode(&self) -> [u32; 8] {
        let mut w = [0u32; 8];
        put(&mut w, iv::CLIENT_ID, u32::from(self.client_id));
        put(&mut w, iv::SOURCE_ID, u32::from(self.src_id));
        put(&mut w, iv::RING_ID, u32::from(self.ring_id));
        put(&mut w, iv::VMID, u32::from(self.vmid));
        put(&mut w, iv::VMID_TYPE, u32::from(self.vmid_src));
        w[1] = self.timestamp as u32;
        w[2] = (self.timestamp >> 32) as u32 & iv::TIMESTAMP_HI;
        put(&mut w, iv::PASID, u32::from(self.pasid));
        put(&mut w, iv::NODE_ID, u32::from(self.node_id));
        for (i, d) in self.src_data.iter().enumerate() {
            w[iv::CONTEXT_ID0 + i] = *d;
        }
        w
    }
}

/// What became of a raised entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Raised {
    /// Written at this byte offset of ring 0.
    Written { offset: u32 },
    /// Written over the oldest entry: the ring was full
    /// (`RB_OVERFLOW` set).
    Overflowed { offset: u32 },
    /// Ring 0 is not enabled: nothing is written.
    Disabled,
    /// The ring was full and `WPTR_OVERFLOW_ENABLE` clear: dropped.
    Dropped,
    /// The ring or writeback address did not translate (or `MC_SPACE`
    /// is 2, which the model does not write).
    Refused,
    /// Raised while the IH was writing another entry (its own write
    /// faulted): dropped, so a fault cannot recurse.
    Nested,
}

/// Entries [`IhModel::raised`] keeps (the first ones; a model that runs
/// for hours must not grow without bound).
pub const RAISED_LOG: usize = 4096;

/// A ring as the IH took it when `RB_ENABLE` rose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IhRing {
    pub ring: u8,
    /// MC (or bus) address of the ring.
    pub base: u64,
    pub bytes: u64,
    pub mc_space: u32,
}

/// Per ring: `IH_RB_CNTL`, `IH_RB_BASE`, `IH_RB_BASE_HI`.
struct RingRegs {
    cntl: usize,
    base: usize,
    base_hi: usize,
}

/// Ring 0's pointer registers.
#[derive(Debug, Clone, Copy)]
struct Ring0 {
    rptr: usize,
    wptr: usize,
    wptr_lo: usize,
    wptr_hi: usize,
}

#[derive(Debug, Default)]
struct State {
    enabled: [Option<IhRing>; 2],
    /// Entries raised, and what became of them.
    raised: Vec<(IvEntry, Raised)>,
    /// Why the last refused entry was refused.
    refused_why: Option<alloc::string::String>,
}

/// The IH model.
pub struct IhModel {
    regs: RegStore,
    rings: [(usize, usize, usize); 2],
    ring0: Ring0,
    log: Arc<RefusalLog>,
    state: Mutex<State>,
    clock: SimClock,
    /// The IH's path to memory: the MMHUB as client OSSSYS.
    mc: Mutex<Option<Arc<Mc>>>,
    busy: AtomicBool,
    /// Entries written with `ENABLE_INTR` set since the platform last
    /// took them ([`IhModel::take_interrupts`]).
    interrupts: core::sync::atomic::AtomicU64,
    /// The `MC_SPACE` value the version's `*_rb_cntl()` writes for a ring
    /// at a bus address: 2 in `ih_v6_0_rb_cntl()` / `ih_v7_0_rb_cntl()`,
    /// 1 in `vega20_ih_rb_cntl()` (OSSSYS 4.4.2); 4 otherwise in all three.
    bus_space: u32,
}

impl core::fmt::Debug for IhModel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("IhModel")
            .field("state", &*self.state.lock())
            .finish_non_exhaustive()
    }
}

fn table(v: (u8, u8, u8)) -> Option<&'static [Reg]> {
    match v {
        // OSSSYS 4.4.0 (Aldebaran): `vega20_ih.c` reaches it at 4.4.2's
        // offsets (`mmIH_CHICKEN_ALDEBARAN` 0x18d,
        // `mmIH_RETRY_INT_CAM_CNTL_ALDEBARAN` 0xea, the ring registers
        // as `osssys_4_2_0_offset.h` has them).
        (4, 4, 0) | (4, 4, 2) => Some(socregs::osssys_4_4_2::ALL),
        (6, 0, 0) => Some(socregs::osssys_6_0_0::ALL),
        (7, 0, 0) => Some(socregs::osssys_7_0_0::ALL),
        _ => None,
    }
}

impl IhModel {
    /// The IH of OSSSYS `version` on its `bases`.
    pub fn new(
        clock: &SimClock,
        version: (u8, u8, u8),
        bases: &IpBases,
        log: Arc<RefusalLog>,
    ) -> Option<Self> {
        let all = table(version)?;
        let init: Vec<(Reg, u32)> = all.iter().map(|r| (*r, 0)).collect();
        let (regs, missing) = RegStore::new(clock, bases, &init);
        if !missing.is_empty() {
            return None;
        }
        let ring = |c: &str, b: &str, h: &str| -> Option<(usize, usize, usize)> {
            Some((regs.at(c)?, regs.at(b)?, regs.at(h)?))
        };
        let rings = [
            ring("IH_RB_CNTL", "IH_RB_BASE", "IH_RB_BASE_HI")?,
            ring(
                "IH_RB_CNTL_RING1",
                "IH_RB_BASE_RING1",
                "IH_RB_BASE_HI_RING1",
            )?,
        ];
        let ring0 = Ring0 {
            rptr: regs.at("IH_RB_RPTR")?,
            wptr: regs.at("IH_RB_WPTR")?,
            wptr_lo: regs.at("IH_RB_WPTR_ADDR_LO")?,
            wptr_hi: regs.at("IH_RB_WPTR_ADDR_HI")?,
        };
        Some(IhModel {
            regs,
            rings,
            ring0,
            log,
            state: Mutex::new(State::default()),
            clock: clock.clone(),
            mc: Mutex::new(None),
            busy: AtomicBool::new(false),
            interrupts: core::sync::atomic::AtomicU64::new(0),
            bus_space: if version.0 == 4 { 1 } else { 2 },
        })
    }

    /// Gives the IH its path to memory (the MMHUB, as client
    /// [`CID_OSSSYS`]).
    pub fn connect(&self, mc: Mc) {
        *self.mc.lock() = Some(Arc::new(mc));
    }

    pub fn offsets(&self) -> BTreeSet<usize> {
        self.regs.offsets()
    }

    /// The rings the IH runs.
    pub fn rings(&self) -> Vec<IhRing> {
        self.state
            .lock()
            .enabled
            .iter()
            .flatten()
            .copied()
            .collect()
    }

    /// The entries raised since power-on (the first [`RAISED_LOG`]) and
    /// what became of each.
    pub fn raised(&self) -> Vec<(IvEntry, Raised)> {
        self.state.lock().raised.clone()
    }

    /// What became of the entries raised so far, one line, when any was
    /// not written (for the diagnostics).
    pub fn summary(&self) -> Option<alloc::string::String> {
        let raised = self.raised();
        let lost = raised
            .iter()
            .filter(|(_, r)| !matches!(r, Raised::Written { .. } | Raised::Overflowed { .. }))
            .count();
        if lost == 0 {
            return None;
        }
        let first = raised
            .iter()
            .find(|(_, r)| !matches!(r, Raised::Written { .. } | Raised::Overflowed { .. }));
        Some(alloc::format!(
            "IH: {lost} of {} entries raised were not written (first: {:?}; last refusal: {:?})",
            raised.len(),
            first,
            self.state.lock().refused_why
        ))
    }

    /// The interrupts raised since the last call (entries written with
    /// `ENABLE_INTR` set): what the platform signals to the host.
    pub fn take_interrupts(&self) -> u64 {
        self.interrupts.swap(0, Ordering::AcqRel)
    }

    /// Back to the power-on state (mode-1 reset).
    pub fn reset(&self) {
        self.interrupts.store(0, Ordering::Release);
        self.regs.reset();
        *self.state.lock() = State::default();
    }

    fn ring_regs(&self, i: usize) -> RingRegs {
        let (cntl, base, base_hi) = self.rings[i];
        RingRegs {
            cntl,
            base,
            base_hi,
        }
    }

    /// Writes `e` into ring 0 as the hardware would (module docs), with
    /// the simulated clock as its timestamp.
    pub fn raise(&self, mut e: IvEntry) -> Raised {
        e.timestamp = self.clock.now_ns() & 0xFFFF_FFFF_FFFF;
        if self.busy.swap(true, Ordering::Acquire) {
            let mut st = self.state.lock();
            if st.raised.len() < RAISED_LOG {
                st.raised.push((e, Raised::Nested));
            }
            return Raised::Nested;
        }
        let r = self.write_entry(&e);
        self.busy.store(false, Ordering::Release);
        let cntl = self.regs.get(self.ring_regs(0).cntl);
        if matches!(r, Raised::Written { .. } | Raised::Overflowed { .. })
            && cntl & rb_cntl::ENABLE_INTR != 0
        {
            self.interrupts.fetch_add(1, Ordering::AcqRel);
        }
        let mut st = self.state.lock();
        if st.raised.len() < RAISED_LOG {
            st.raised.push((e, r));
        }
        r
    }

    fn write_entry(&self, e: &IvEntry) -> Raised {
        let Some(ring) = self.state.lock().enabled[0] else {
            return Raised::Disabled;
        };
        let cntl = self.regs.get(self.ring_regs(0).cntl);
        let refuse = |why: alloc::string::String| {
            self.state.lock().refused_why = Some(why);
            Raised::Refused
        };
        let Some(mc) = self.mc.lock().clone() else {
            return refuse("no path to memory".into());
        };
        // MC_SPACE 4: ring and write-back at MC addresses (through the
        // VM); the version's bus-address value (`use_bus_addr`, 1 on
        // `vega20_ih`, 2 on `ih_v6_0`): bus addresses, past the VM.
        let bus = ring.mc_space == self.bus_space;
        if ring.mc_space != 4 && !bus {
            return refuse(format!("ring 0's MC_SPACE is {}", ring.mc_space));
        }
        let write = |addr: u64, v: u32, order: Ordering, what: &'static str| {
            if bus {
                mc.write_bus_u32(addr, v, order, what)
            } else {
                mc.write_u32(addr, v, order, what)
            }
        };
        let r0 = self.ring0;
        let wreg = self.regs.get(r0.wptr);
        let mask = (ring.bytes as u32).wrapping_sub(1) & WPTR_OFFSET;
        let wptr = wreg & WPTR_OFFSET & mask;
        let rptr = self.regs.get(r0.rptr) & WPTR_OFFSET & mask;
        let next = wptr.wrapping_add(ENTRY_BYTES) & mask;
        let full = next == rptr;
        let mut overflow = wreg & RB_OVERFLOW;
        if full {
            if cntl & rb_cntl::WPTR_OVERFLOW_ENABLE == 0 {
                return Raised::Dropped;
            }
            overflow = RB_OVERFLOW;
        }
        let at = ring.base + u64::from(wptr);
        for (i, d) in e.encode().iter().enumerate() {
            let w = write(at + 4 * i as u64, *d, Ordering::Relaxed, "IH ring entry");
            if let Err(f) = w {
                return refuse(format!("{f:?}"));
            }
        }
        let new = next | overflow;
        self.regs.set(r0.wptr, new);
        if cntl & rb_cntl::WPTR_WRITEBACK_ENABLE != 0 {
            let addr = u64::from(self.regs.get(r0.wptr_hi) & WPTR_ADDR_HI) << 32
                | u64::from(self.regs.get(r0.wptr_lo) & WPTR_ADDR_LO);
            let w: Result<(), McFault> =
                write(addr, new, Ordering::Release, "IH write-pointer writeback");
            if let Err(f) = w {
                return refuse(format!("{f:?}"));
            }
        }
        if full {
            Raised::Overflowed { offset: wptr }
        } else {
            Raised::Written { offset: wptr }
        }
    }

    fn on_cntl(&self, i: usize, value: u32) {
        let r = self.ring_regs(i);
        if i == 0 && value & rb_cntl::WPTR_OVERFLOW_CLEAR != 0 {
            let w = self.ring0.wptr;
            self.regs.set(w, self.regs.get(w) & !RB_OVERFLOW);
        }
        let on = value & rb_cntl::RB_ENABLE != 0;
        let was = self.state.lock().enabled[i].is_some();
        if !on {
            self.state.lock().enabled[i] = None;
            return;
        }
        if was {
            return;
        }
        let size = field(value, rb_cntl::RB_SIZE);
        let space = field(value, rb_cntl::MC_SPACE);
        let name = self.regs.name(r.cntl);
        if space != 4 && space != self.bus_space {
            let bus = self.bus_space;
            self.log.push(
                "IH",
                format!(
                    "{name} = {value:#x}: MC_SPACE {space} is neither {bus} (bus address) nor 4, \
                     the two values this IH's *_rb_cntl() writes (ih_v6_0/ih_v7_0: 2 or 4, \
                     vega20_ih: 1 or 4)"
                ),
            );
        }
        if !(3..=17).contains(&size) {
            self.log.push(
                "IH",
                format!(
                    "{name} = {value:#x}: RB_SIZE {size} is not a ring of 8 to 2^17 dwords \
                     (ih_v6_0_enable_ring(): order_base_2(ring_size / 4))"
                ),
            );
        }
        let base =
            (u64::from(self.regs.get(r.base_hi)) << 32 | u64::from(self.regs.get(r.base))) << 8;
        self.state.lock().enabled[i] = Some(IhRing {
            ring: i as u8,
            base,
            bytes: 4u64 << size,
            mc_space: space,
        });
    }
}

impl RegisterBus for IhModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.regs.host_read(byte_offset)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.regs.host_write(byte_offset, value);
        if let Some(i) = self.rings.iter().position(|r| r.0 == byte_offset) {
            self.on_cntl(i, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_encodes_where_the_soc15_macros_read() {
        let e = IvEntry {
            client_id: client::GFX,
            src_id: src::SQ_INTERRUPT_MSG,
            ring_id: 0x25,
            vmid: 9,
            vmid_src: true,
            timestamp: 0x1234_5678_9abc,
            pasid: 0x4321,
            node_id: 3,
            src_data: [1, 2, 3, 4],
        };
        let w = e.encode();
        // As soc15_int.h's macros read them.
        assert_eq!(w[0] & 0xff, 0x0a);
        assert_eq!(w[0] >> 8 & 0xff, 239);
        assert_eq!(w[0] >> 16 & 0xff, 0x25);
        assert_eq!(w[0] >> 24 & 0xf, 9);
        assert_eq!(w[0] >> 31 & 1, 1);
        assert_eq!(w[3] & 0xffff, 0x4321);
        assert_eq!(w[3] >> 16 & 0xff, 3);
        assert_eq!(
            u64::from(w[1]) | u64::from(w[2] & 0xffff) << 32,
            0x1234_5678_9abc
        );
        assert_eq!(&w[4..], &[1, 2, 3, 4]);
    }
}
