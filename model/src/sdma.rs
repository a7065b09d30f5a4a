//! SDMA engine 0 as far as its drivers bring it up: SDMA 6.0 (Navi31,
//! `sdma_v6_0.c`) and 7.0 (Navi48, `sdma_v7_0.c`), and tinygrad's
//! `AM_SDMA` (`init_hw`, `setup_ring`).
//!
//! The registers live in the GC header on the GC bases
//! (`sdma_v6_0_get_reg_offset()`). The engine comes out of reset halted:
//! `regSDMA0_F32_CNTL_DEFAULT` = 0x08084001 (`HALT` set,
//! `gc_11_0_0_default.h`); SDMA 7's `SDMA0_MCU_CNTL` has no public default,
//! so the model starts it halted too (*model value*: `HALT` = 1). Other
//! registers read their `gc_11_0_0_default.h` value on Navi31 and 0 on
//! Navi48 (*model value*).
//!
//! The engine runs when `HALT` and its thread reset (`TH1_RESET` on 6.0,
//! `RESET` on 7.0) are clear (`sdma_v6_0_enable()`, tinygrad's
//! `F32_CNTL/MCU_CNTL.update(halt=0, ...reset=0)`) and the RLC autoload put
//! SDMA code in place ([`SdmaHooks::code_loaded`]); queue 0 runs when its
//! `RB_ENABLE` is set on a running engine. A queue enabled on a halted
//! engine is recorded ([`SdmaEvent::QueueOnHaltedEngine`]): both drivers
//! unhalt first (`sdma_v6_0_start()`), the engine would fetch nothing.
//! The model decodes the queue (ring, size, write-back and poll
//! addresses, doorbell) when `RB_ENABLE` rises.
//!
//! Execution (issue 19): once a [`SdmaPort`] is attached (the
//! `VirtualGpu` does), [`SdmaModel::service`] runs the queue. The engine
//! is woken only by its doorbell: a changed value in the doorbell slot
//! the queue's `DOORBELL_OFFSET` names, delivered only when the port says
//! the NBIO aperture and S2A entry 2 route that dword to SDMA
//! (`nbio_v4_3_sdma_doorbell_range()`); the value is the new write
//! pointer in bytes. The write-pointer poll address is not polled
//! (*model convention*). Packets are fetched from the ring through the
//! queue's VMID (the GFXHUB walk, client SDMA0) and decoded by
//! [`crate::decode::sdma`]: COPY_LINEAR and CONSTANT_FILL between any
//! memory the VMID maps (VRAM or system), FENCE, TRAP (recorded; no
//! interrupt is modelled), POLL_REGMEM on memory (the comparison
//! functions as the CP's `WAIT_REG_MEM` numbers them, 3 = equal as
//! `sdma_v6_0_ring_emit_reg_wait()` uses: *model convention* for the
//! others; retried until met), TIMESTAMP GET/GET_GLOBAL (the model clock
//! in ns: *model value*), ATOMIC ADD64 (op 47, ROCR's and tinygrad's
//! `SDMA_ATOMIC_ADD64`; no Linux header names it), NOP, WRITE_LINEAR
//! (the ring tests' one-dword store, `sdma_v6_0_ring_test_ring()`,
//! `sdma_v4_4_2_ring_test_ring()`), INDIRECT (an IB in the queue's own
//! VMID at a 32-byte-aligned base, "base must be 32 byte aligned" in
//! `sdma_v4_4_2_ring_emit_ib()`; its packets run as the ring's do, an IB
//! inside an IB is refused; a poll not met inside it keeps the IB's
//! position, *model convention*) and the HDP flush POLL_REGMEM
//! `sdma_v6_0_ring_emit_hdp_flush()` / `sdma_v4_4_2_ring_emit_hdp_flush()`
//! emit (`hdp_flush` set, registers the NBIO's flush DONE and REQ pair):
//! the model's HDP holds no writes, so the flush is done at once
//! (*model convention*, as for the CP's `WAIT_REG_MEM`). The read
//! pointer (bytes) is written back after each service.
//!
//! Refusals stop the queue ([`SdmaStop`], [`SdmaEvent::Stopped`]): an
//! access the hub refuses (the hub latches the fault: a copy into an
//! unmapped range never copies silently; stopping is a *model
//! convention*, real engines' no-retry behaviour is not public), a FENCE
//! address with its low two bits set (`sdma_v6_0_ring_emit_fence()`:
//! "zero in first two bits"), and anything the model does not decode or
//! execute (named as such, never ignored).

use crate::SimClock;
use crate::decode::sdma::{self as decode, SdmaGen, SdmaPacket};
use crate::gmc::Access;
use crate::log::Keep;
use crate::soc::{RefusalLog, RegStore, field};
use crate::socregs::{self, Reg};
use alloc::boxed::Box;
use alloc::collections::BTreeSet;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use barebell::ip::Generation;
use barebell::regs::IpBases;
use barebell_facts::Fact;
use spin::Mutex;

/// `SDMA0_F32_CNTL` (6.0) and `SDMA0_MCU_CNTL` (7.0) fields.
pub mod cntl {
    pub const HALT: u32 = 0x0000_0001;
    /// 6.0: `TH1_RESET`.
    pub const F32_TH1_RESET: u32 = 0x0000_2000;
    /// 7.0: `RESET`.
    pub const MCU_RESET: u32 = 0x0000_0002;
}

/// `SDMA0_QUEUE0_RB_CNTL`, `_DOORBELL`, `_DOORBELL_OFFSET` fields
/// (equal in 6.0 and 7.0).
pub mod queue {
    pub const RB_ENABLE: u32 = 0x0000_0001;
    pub const RB_SIZE: u32 = 0x0000_003E;
    pub const RB_VMID: u32 = 0x0F00_0000;
    pub const DOORBELL_ENABLE: u32 = 0x1000_0000;
    pub const DOORBELL_OFFSET: u32 = 0x0FFF_FFFC;
}

/// `regSDMA0_F32_CNTL_DEFAULT` (`gc_11_0_0_default.h`).
pub const F32_CNTL_DEFAULT: u32 = 0x0808_4001;

const G11: &str = "gc_11_0_0_sh_mask.h";
const G12: &str = "gc_12_0_0_sh_mask.h";

const FACTS_6_7: &[Fact] = &[
    Fact::constant(G11, "SDMA0_F32_CNTL__HALT_MASK", cntl::HALT as u64),
    Fact::constant(
        G11,
        "SDMA0_F32_CNTL__TH1_RESET_MASK",
        cntl::F32_TH1_RESET as u64,
    ),
    Fact::constant(G12, "SDMA0_MCU_CNTL__HALT_MASK", cntl::HALT as u64),
    Fact::constant(G12, "SDMA0_MCU_CNTL__RESET_MASK", cntl::MCU_RESET as u64),
    Fact::constant(
        "gc_11_0_0_default.h",
        "regSDMA0_F32_CNTL_DEFAULT",
        F32_CNTL_DEFAULT as u64,
    ),
    Fact::constant(
        G11,
        "SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK",
        queue::RB_ENABLE as u64,
    ),
    Fact::constant(
        G11,
        "SDMA0_QUEUE0_RB_CNTL__RB_SIZE_MASK",
        queue::RB_SIZE as u64,
    ),
    Fact::constant(
        G11,
        "SDMA0_QUEUE0_RB_CNTL__RB_VMID_MASK",
        queue::RB_VMID as u64,
    ),
    Fact::constant(
        G11,
        "SDMA0_QUEUE0_DOORBELL__ENABLE_MASK",
        queue::DOORBELL_ENABLE as u64,
    ),
    Fact::constant(
        G11,
        "SDMA0_QUEUE0_DOORBELL_OFFSET__OFFSET_MASK",
        queue::DOORBELL_OFFSET as u64,
    ),
    Fact::constant(
        G12,
        "SDMA0_QUEUE0_RB_CNTL__RB_ENABLE_MASK",
        queue::RB_ENABLE as u64,
    ),
    Fact::constant(
        G12,
        "SDMA0_QUEUE0_RB_CNTL__RB_SIZE_MASK",
        queue::RB_SIZE as u64,
    ),
    Fact::constant(
        G12,
        "SDMA0_QUEUE0_DOORBELL__ENABLE_MASK",
        queue::DOORBELL_ENABLE as u64,
    ),
    Fact::constant(
        G12,
        "SDMA0_QUEUE0_DOORBELL_OFFSET__OFFSET_MASK",
        queue::DOORBELL_OFFSET as u64,
    ),
];

/// The model's SDMA facts: 6.0 and 7.0's above, 4.4.2's and 4.4.0's
/// registers and fields ([`v4_4_2`], [`v4_4_0`]).
pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    FACTS_6_7,
    v4_4_2::REG_FACTS,
    v4_4_2::FIELD_FACTS,
    v4_4_0::REG_FACTS,
    v4_4_0::FIELD_FACTS
);

/// The registers of an SDMA 4.4 instance's table (`BASE_IDX` 0), for
/// [`v4_4_2`] and [`v4_4_0`]: each a `Reg`, `ALL`, and `REG_FACTS`
/// against the calling module's `OFF` header.
macro_rules! sdma4_regs {
    ($($name:ident = $off:literal;)*) => {
        $(
            pub const $name: Reg = Reg { name: stringify!($name), offset: $off, base_idx: 0 };
        )*
        /// Every register the model keeps for one instance.
        pub const ALL: &[Reg] = &[$($name),*];
        /// Offsets and `BASE_IDX` (0) against the header.
        pub const REG_FACTS: &[Fact] = &[
            $(
                Fact::constant(OFF, concat!("reg", stringify!($name)), $off),
                Fact::constant(OFF, concat!("reg", stringify!($name), "_BASE_IDX"), 0),
            )*
        ];
    };
}

/// SDMA 4.4.2 (GC 9.4.3): the GFX queue of one SDMA instance, on that
/// instance's own bases (`sdma_v4_4_2_get_reg_offset()`), written for the
/// model from `sdma_4_4_2_offset.h`; the fields from `_sh_mask.h`.
///
/// The engine starts with its firmware. On MI300 the PSP loads the SDMA
/// firmware (`AMDGPU_FW_LOAD_PSP`), and then Linux never writes
/// `SDMA_F32_CNTL.HALT`: `sdma_v4_4_2_inst_enable()` returns before the
/// write when `load_type == AMDGPU_FW_LOAD_PSP`, and
/// `sdma_v4_4_2_inst_start()` clears `HALT` only for firmware it loads
/// itself; tinygrad's `AM_SDMA.init_hw` writes `F32_CNTL` only for SDMA
/// 6.0 and later. Both drivers run SDMA queues on silicon that way, so
/// the engine must run with `HALT` as it finds it once the PSP put its
/// code in place. No `_default.h` exists for 4.4.2: the model starts
/// `SDMA_F32_CNTL` at 0 (*model value*) and runs the engine as soon as
/// its firmware is loaded and `HALT` and `RESET` are clear
/// ([`SdmaEvent::StartedWithItsFirmware`]); a driver that sets `HALT`
/// still halts it.
pub mod v4_4_2 {
    use super::Reg;
    use barebell_facts::Fact;

    const OFF: &str = "sdma_4_4_2_offset.h";
    const MASK: &str = "sdma_4_4_2_sh_mask.h";

    sdma4_regs! {
        SDMA_F32_CNTL = 0x0002;
        SDMA_GFX_RB_CNTL = 0x0080;
        SDMA_GFX_RB_BASE = 0x0081;
        SDMA_GFX_RB_BASE_HI = 0x0082;
        SDMA_GFX_RB_RPTR = 0x0083;
        SDMA_GFX_RB_RPTR_HI = 0x0084;
        SDMA_GFX_RB_WPTR = 0x0085;
        SDMA_GFX_RB_WPTR_HI = 0x0086;
        SDMA_GFX_RB_WPTR_POLL_CNTL = 0x0087;
        SDMA_GFX_RB_RPTR_ADDR_HI = 0x0088;
        SDMA_GFX_RB_RPTR_ADDR_LO = 0x0089;
        SDMA_GFX_IB_CNTL = 0x008a;
        SDMA_GFX_DOORBELL = 0x0092;
        SDMA_GFX_DOORBELL_OFFSET = 0x00ab;
        SDMA_GFX_RB_WPTR_POLL_ADDR_HI = 0x00b2;
        SDMA_GFX_RB_WPTR_POLL_ADDR_LO = 0x00b3;
        SDMA_GFX_MINOR_PTR_UPDATE = 0x00b5;
    }

    /// `SDMA_F32_CNTL.HALT` and `.RESET`.
    pub const HALT: u32 = 0x0000_0001;
    pub const RESET: u32 = 0x0000_0100;

    /// The queue fields the model decodes, against the 4.4.2 header (the
    /// same positions as [`super::queue`]'s).
    pub const FIELD_FACTS: &[Fact] = &[
        Fact::constant(MASK, "SDMA_F32_CNTL__HALT_MASK", HALT as u64),
        Fact::constant(MASK, "SDMA_F32_CNTL__RESET_MASK", RESET as u64),
        Fact::constant(
            MASK,
            "SDMA_GFX_RB_CNTL__RB_ENABLE_MASK",
            super::queue::RB_ENABLE as u64,
        ),
        Fact::constant(
            MASK,
            "SDMA_GFX_RB_CNTL__RB_SIZE_MASK",
            super::queue::RB_SIZE as u64,
        ),
        Fact::constant(
            MASK,
            "SDMA_GFX_RB_CNTL__RB_VMID_MASK",
            super::queue::RB_VMID as u64,
        ),
        Fact::constant(
            MASK,
            "SDMA_GFX_DOORBELL__ENABLE_MASK",
            super::queue::DOORBELL_ENABLE as u64,
        ),
        Fact::constant(
            MASK,
            "SDMA_GFX_DOORBELL_OFFSET__OFFSET_MASK",
            super::queue::DOORBELL_OFFSET as u64,
        ),
    ];

    /// The instance's registers with their reset values.
    pub fn registers() -> alloc::vec::Vec<(Reg, u32)> {
        ALL.iter().map(|r| (*r, 0)).collect()
    }
}

/// SDMA 4.4.0 (Aldebaran, GC 9.4.2): the GFX queue of one of the five
/// instances, written for the model from `sdma_4_4_0_offset.h` (the
/// `SDMA0_` names, `BASE_IDX` 0) and `_sh_mask.h`. The queue registers sit
/// at 4.4.2's offsets; `F32_CNTL` does not (0x2a, not 0x02). Instance `i`'s
/// registers are at `sdma_v4_0_get_reg_offset()`'s base: segment 0 of
/// `SDMA0_HWIP`/`SDMA1_HWIP` for instances 0 and 1, segment 1 of
/// `SDMA2_HWIP`.. for the rest (the VirtualGpu passes that base as the
/// instance's segment 0).
///
/// Unlike 4.4.2, Linux unhalts a 4.4.0 engine itself whoever loaded its
/// firmware: `sdma_v4_0_start()` calls `sdma_v4_0_enable(adev, true)`
/// (`F32_CNTL.HALT` = 0 on every instance) and clears `HALT` again per
/// instance after `sdma_v4_0_gfx_resume()`. No `_default.h` exists for
/// 4.4.0: `F32_CNTL` starts at SDMA 4.0's `mmSDMA0_F32_CNTL_DEFAULT`
/// (0x00000001, `HALT` set, `sdma0_4_0_default.h`; *model value* for
/// 4.4.0), the rest at 0, so an engine nobody unhalts fetches nothing.
/// The engine runs once its firmware is in place and `HALT` and `RESET`
/// are clear, as [`v4_4_2`]'s does.
pub mod v4_4_0 {
    use super::Reg;
    use barebell_facts::Fact;

    const OFF: &str = "sdma_4_4_0_offset.h";
    const MASK: &str = "sdma_4_4_0_sh_mask.h";

    sdma4_regs! {
        SDMA0_F32_CNTL = 0x002a;
        SDMA0_GFX_RB_CNTL = 0x0080;
        SDMA0_GFX_RB_BASE = 0x0081;
        SDMA0_GFX_RB_BASE_HI = 0x0082;
        SDMA0_GFX_RB_RPTR = 0x0083;
        SDMA0_GFX_RB_RPTR_HI = 0x0084;
        SDMA0_GFX_RB_WPTR = 0x0085;
        SDMA0_GFX_RB_WPTR_HI = 0x0086;
        SDMA0_GFX_RB_WPTR_POLL_CNTL = 0x0087;
        SDMA0_GFX_RB_RPTR_ADDR_HI = 0x0088;
        SDMA0_GFX_RB_RPTR_ADDR_LO = 0x0089;
        SDMA0_GFX_IB_CNTL = 0x008a;
        SDMA0_GFX_DOORBELL = 0x0092;
        SDMA0_GFX_DOORBELL_OFFSET = 0x00ab;
        SDMA0_GFX_RB_WPTR_POLL_ADDR_HI = 0x00b2;
        SDMA0_GFX_RB_WPTR_POLL_ADDR_LO = 0x00b3;
        SDMA0_GFX_MINOR_PTR_UPDATE = 0x00b5;
    }

    /// `SDMA0_F32_CNTL.HALT` and `.RESET`.
    pub const HALT: u32 = 0x0000_0001;
    pub const RESET: u32 = 0x0000_0100;
    /// `F32_CNTL` out of reset: SDMA 4.0's default (see the module docs).
    pub const F32_CNTL_RESET_VALUE: u32 = HALT;

    /// The fields the model decodes, against the 4.4.0 header (the same
    /// positions as [`super::queue`]'s).
    pub const FIELD_FACTS: &[Fact] = &[
        Fact::constant(MASK, "SDMA0_F32_CNTL__HALT_MASK", HALT as u64),
        Fact::constant(MASK, "SDMA0_F32_CNTL__RESET_MASK", RESET as u64),
        Fact::constant(
            MASK,
            "SDMA0_GFX_RB_CNTL__RB_ENABLE_MASK",
            super::queue::RB_ENABLE as u64,
        ),
        Fact::constant(
            MASK,
            "SDMA0_GFX_RB_CNTL__RB_SIZE_MASK",
            super::queue::RB_SIZE as u64,
        ),
        Fact::constant(
            MASK,
            "SDMA0_GFX_RB_CNTL__RB_VMID_MASK",
            super::queue::RB_VMID as u64,
        ),
        Fact::constant(
            MASK,
            "SDMA0_GFX_DOORBELL__ENABLE_MASK",
            super::queue::DOORBELL_ENABLE as u64,
        ),
        Fact::constant(
            MASK,
            "SDMA0_GFX_DOORBELL_OFFSET__OFFSET_MASK",
            super::queue::DOORBELL_OFFSET as u64,
        ),
    ];

    /// The instance's registers with their reset values.
    pub fn registers() -> alloc::vec::Vec<(Reg, u32)> {
        ALL.iter()
            .map(|r| {
                let v = if r.offset == SDMA0_F32_CNTL.offset {
                    F32_CNTL_RESET_VALUE
                } else {
                    0
                };
                (*r, v)
            })
            .collect()
    }
}

/// GFXHUB client id of SDMA0 (index 13 of `gfxhub_client_ids` in
/// `gfxhub_v3_0.c` and `gfxhub_v12_0.c`): what an SDMA fault latches.
pub const CID_SDMA0: u16 = 13;
/// SDMA1's (index 14).
pub const CID_SDMA1: u16 = 14;

/// Where SDMA 6.0 instance 1's registers are, from instance 0's
/// (`sdma_v6_0_get_reg_offset()`): the `HYP_DEC` registers
/// (`SDMA0_HYP_DEC_REG_START` 0x5880 ..= `_END` 0x589a) 0x20 dwords on,
/// every other 0x600 (`SDMA1_REG_OFFSET`). `.c` values: they rest on
/// their citation.
pub mod v6_instance1 {
    pub const HYP_DEC: core::ops::RangeInclusive<u32> = 0x5880..=0x589a;
    pub const HYP_DEC_OFFSET: u32 = 0x20;
    pub const REG_OFFSET: u32 = 0x600;
}

/// The packet ROCR sends to a gfx9 SDMA engine as `SDMA_PKT_HDP_FLUSH`
/// ("HDP flush packet, no parameters", `hdp_flush_cmd` in ROCR 5.2's
/// `sdma_registers.h`; `BlitSdmaBase::BuildHdpFlushCommand` copies it
/// before every copy): a POLL_REGMEM header with no flags, dword 2 =
/// 0x80000000, the rest 0, which the SDMA firmware since version 0x1A5
/// (`kMinVersion_` there) takes as an HDP flush. As `(func, addr, value,
/// mask)` of the decoded POLL_REGMEM.
pub const ROCR_HDP_FLUSH: (u32, u64, u32, u32) = (0, 0x8000_0000 << 32, 0, 0);

/// `SDMA_ATOMIC_ADD64` (ROCR `amd_blit_sdma.cpp`, tinygrad's `amd_gpu`;
/// not in a Linux header, so not a conformance fact).
pub const ATOMIC_ADD64: u32 = 47;

/// Why an access of the engine was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaVmError {
    /// The hub refused the translation (and latched the fault).
    Refused { refusal: crate::hub::HubRefusal },
    /// A gfx9 hub (MMHUB 1.8 for SDMA 4.4.2) refused it; a walk fault is
    /// latched in that hub.
    RefusedV9 {
        refusal: crate::hub_v9::HubV9Refusal,
    },
    /// The walk gave an address no memory backs.
    Unbacked { pa: u64 },
    /// A system page whose PTE lacks SNOOPED (model convention,
    /// `crate::gmc::Translation::coherent`).
    NotSnooped { pa: u64 },
}

/// What the engine reaches the rest of the device through.
pub trait SdmaPort: Send + Sync {
    /// The host address of `va` in `vmid` for `access` and how many
    /// bytes from it are contiguous behind the same translation (at least
    /// to the end of its 4 KiB page; up to the end of the TLB entry that
    /// serves it, a fragment or a large page); a refused walk is latched
    /// in the hub.
    fn translate(
        &self,
        vmid: u8,
        va: u64,
        access: crate::gmc::Access,
    ) -> Result<(u64, u64), SdmaVmError>;
    /// The doorbell slot holding dword `dword`, as last stored.
    fn doorbell(&self, dword: u32) -> u64;
    /// Whether a store to doorbell `dword` reaches SDMA engine 0.
    fn routed(&self, dword: u32) -> bool;
    /// The global timestamp TIMESTAMP packets write.
    fn now_ns(&self) -> u64;
    /// The NBIO's HDP flush request and done registers (absolute dword
    /// offsets, `get_hdp_flush_req_offset()`/`_done_offset()`), if known.
    fn hdp_flush(&self) -> Option<(u32, u32)>;
    /// The absolute dword offset of register `reg` as an SRBM_WRITE or a
    /// register POLL_REGMEM of this engine names it (18 bits,
    /// `SDMA_PKT_SRBM_WRITE_ADDR_addr_mask`): on one die, `reg` itself.
    fn register(&self, reg: u32) -> u32 {
        reg
    }
    /// A TRAP packet ran with `context` (`int_context`): the device
    /// raises the engine's trap interrupt, if it wires one.
    fn trap(&self, _context: u32) {}
}

/// Why the engine stopped its queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaStop {
    /// An access at `va` was refused.
    Vm {
        va: u64,
        vmid: u8,
        write: bool,
        error: SdmaVmError,
        /// The packet's header and its byte offset in the ring stream.
        header: u32,
        rptr: u64,
    },
    /// A packet the sources say the engine refuses, or one the model does
    /// not execute.
    Refused {
        header: u32,
        rptr: u64,
        why: &'static str,
    },
}

impl core::fmt::Display for SdmaStop {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SdmaStop::Vm {
                va,
                vmid,
                write,
                error,
                header,
                rptr,
            } => write!(
                f,
                "SDMA {} at {va:#x} in VMID {vmid} refused ({error:?}) by the packet {header:#010x} at ring byte {rptr:#x}",
                if *write { "write" } else { "read" }
            ),
            SdmaStop::Refused { header, rptr, why } => {
                write!(
                    f,
                    "SDMA refused packet {header:#010x} at ring byte {rptr:#x}: {why}"
                )
            }
        }
    }
}

/// What the SDMA needs from the rest of the GPU.
pub struct SdmaHooks {
    /// Whether the RLC autoload put SDMA code in place.
    pub code_loaded: Box<dyn Fn() -> bool + Send + Sync>,
}

impl core::fmt::Debug for SdmaHooks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SdmaHooks").finish_non_exhaustive()
    }
}

/// Queue 0 as the engine took it when `RB_ENABLE` rose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdmaQueue {
    /// GPU virtual address of the ring (`RB_BASE(_HI)` << 8).
    pub ring: u64,
    pub bytes: u64,
    pub vmid: u32,
    pub rptr_report: u64,
    pub wptr_poll: u64,
    /// Doorbell dword offset, if enabled.
    pub doorbell: Option<u32>,
}

/// What happened, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaEvent {
    Unhalted,
    Halted,
    /// Unhalted with no SDMA code in place: nothing runs.
    UnhaltedWithoutCode,
    /// SDMA 4.4.2: running because its firmware is in place and `HALT`
    /// was never set, with no driver write (see [`v4_4_2`]).
    StartedWithItsFirmware,
    QueueEnabled(SdmaQueue),
    QueueOnHaltedEngine(SdmaQueue),
    QueueDisabled,
    /// A TRAP packet with this `int_context` (no interrupt is modelled).
    Trap {
        context: u32,
    },
    /// A doorbell store that did not reach the engine (S2A entry 2 or the
    /// aperture closed): dword and value.
    DoorbellDropped {
        dword: u32,
        value: u64,
    },
    /// The queue stopped.
    Stopped(SdmaStop),
}

/// Work counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SdmaStats {
    pub packets: u64,
    pub copied_bytes: u64,
    pub filled_bytes: u64,
    pub fences: u64,
    pub doorbells: u64,
}

#[derive(Debug, Default)]
struct State {
    running: bool,
    queue: Option<SdmaQueue>,
    events: Vec<SdmaEvent>,
    /// Bytes consumed and published (the ring's read and write pointers).
    rptr: u64,
    wptr: u64,
    /// The doorbell slot's value last seen.
    shadow: u64,
    stopped: Option<SdmaStop>,
    stats: SdmaStats,
    /// An INDIRECT packet's IB stopped at a poll not met: the ring
    /// position of the INDIRECT and the byte offset in the IB.
    ib_at: Option<(u64, u64)>,
    /// SRBM_WRITE stores for the device's register bus (byte offset,
    /// value), in order.
    register_stores: Vec<(u32, u32)>,
    /// A register POLL_REGMEM not met yet: the register (byte offset) and
    /// the value the device last read there.
    reg_wait: Option<(u32, Option<u32>)>,
}

/// Where packets are read from: the ring (wrapping at its size) or an IB
/// (whose `dwords`, a power of two at least its size, never wrap).
#[derive(Debug, Clone, Copy)]
struct Stream {
    base: u64,
    dwords: u64,
    vmid: u8,
}

impl Stream {
    fn ring(q: &SdmaQueue) -> Self {
        Stream {
            base: q.ring,
            dwords: (q.bytes / 4).max(1),
            vmid: q.vmid as u8,
        }
    }

    /// The VA of dword `i` past byte offset `at`.
    fn va(&self, at: u64, i: u64) -> u64 {
        self.base
            .wrapping_add(((at / 4).wrapping_add(i) % self.dwords) * 4)
    }

    fn dword(&self, port: &dyn SdmaPort, at: u64, i: u64) -> Result<u32, SdmaVmError> {
        let (h, _) = port.translate(self.vmid, self.va(at, i), Access::Read)?;
        // SAFETY: `h` is the host address of a dword the port translated,
        // valid for a 4-byte read (rings and IBs are dword aligned).
        Ok(unsafe { core::ptr::read_volatile(h as *const u32) })
    }
}

/// Most entries one PTEPDE GEN packet may generate in the model (2^19,
/// the reach of COPY_LINEAR's count on 4.4.2 in 8-byte entries).
pub const PTEPDE_MAX: u64 = 1 << 19;

/// How many packets one service runs at most (then the host's turn).
const PACKETS_PER_SERVICE: usize = 256;

struct At {
    cntl: usize,
    reset_mask: u32,
    /// SDMA 4.4.2: the engine runs once its firmware is in place, with no
    /// write to its control register (see [`v4_4_2`]).
    starts_with_firmware: bool,
    rb_cntl: usize,
    rb_base: usize,
    rb_base_hi: usize,
    rptr_lo: usize,
    rptr_hi: usize,
    wpoll_lo: usize,
    wpoll_hi: usize,
    doorbell: usize,
    doorbell_offset: usize,
}

/// SDMA engine 0.
pub struct SdmaModel {
    regs: RegStore,
    at: At,
    hooks: SdmaHooks,
    #[allow(dead_code)]
    log: Arc<RefusalLog>,
    state: Mutex<State>,
    port: Mutex<Option<Arc<dyn SdmaPort>>>,
    sdma: SdmaGen,
}

impl core::fmt::Debug for SdmaModel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SdmaModel")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// The registers of `generation` with their reset values.
fn registers(generation: Generation) -> Vec<(Reg, u32)> {
    match generation {
        // SDMA 4.4.2 (GC 9.4.3) is not modelled: no registers.
        Generation::Gfx90a | Generation::Gfx94 => Vec::new(),
        Generation::Gfx11 => {
            use socregs::gc_11_0_0 as r;
            alloc::vec![
                // gc_11_0_0_default.h values.
                (r::SDMA0_F32_CNTL, F32_CNTL_DEFAULT),
                (r::SDMA0_WATCHDOG_CNTL, 0),
                (r::SDMA0_UTCL1_CNTL, 0x2c00_0288),
                (r::SDMA0_UTCL1_PAGE, 0x010c_ec00),
                (r::SDMA0_CNTL, 0x0000_2440),
                (r::SDMA0_QUEUE0_RB_CNTL, 0x0004_0800),
                (r::SDMA0_QUEUE0_RB_BASE, 0),
                (r::SDMA0_QUEUE0_RB_BASE_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_HI, 0),
                (r::SDMA0_QUEUE0_RB_WPTR, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_ADDR_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_ADDR_LO, 0),
                (r::SDMA0_QUEUE0_IB_CNTL, 0x0000_0100),
                (r::SDMA0_QUEUE0_DOORBELL, 0),
                (r::SDMA0_QUEUE0_DOORBELL_OFFSET, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO, 0),
                (r::SDMA0_QUEUE0_MINOR_PTR_UPDATE, 0),
                (r::SDMA0_RLC_CGCG_CTRL, 0x0040_0000),
                (r::SDMA1_RLC_CGCG_CTRL, 0x0040_0000),
            ]
        }
        Generation::Gfx12 => {
            use socregs::gc_12_0_0 as r;
            // No GC 12 default header: HALT set (as SDMA 6), the rest 0.
            alloc::vec![
                (r::SDMA0_MCU_CNTL, cntl::HALT),
                (r::SDMA0_WATCHDOG_CNTL, 0),
                (r::SDMA0_UTCL1_CNTL, 0),
                (r::SDMA0_UTCL1_PAGE, 0),
                (r::SDMA0_CNTL, 0),
                (r::SDMA0_QUEUE0_RB_CNTL, 0),
                (r::SDMA0_QUEUE0_RB_BASE, 0),
                (r::SDMA0_QUEUE0_RB_BASE_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_HI, 0),
                (r::SDMA0_QUEUE0_RB_WPTR, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_ADDR_HI, 0),
                (r::SDMA0_QUEUE0_RB_RPTR_ADDR_LO, 0),
                (r::SDMA0_QUEUE0_IB_CNTL, 0),
                (r::SDMA0_QUEUE0_DOORBELL, 0),
                (r::SDMA0_QUEUE0_DOORBELL_OFFSET, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_HI, 0),
                (r::SDMA0_QUEUE0_RB_WPTR_POLL_ADDR_LO, 0),
                (r::SDMA0_QUEUE0_MINOR_PTR_UPDATE, 0),
                (r::SDMA0_RLC_CGCG_CTRL, 0),
                (r::SDMA1_RLC_CGCG_CTRL, 0),
            ]
        }
    }
}

impl SdmaModel {
    /// One SDMA 4.4.2 instance of a GC 9.4.3 part on that instance's own
    /// `bases` (from discovery: `adev->reg_offset[SDMA0_HWIP][inst]`):
    /// its GFX queue, run as [`SdmaGen::V4_4_2`] (22-bit counts,
    /// `vega10_sdma_pkt_open.h`). A queue loaded by registers
    /// (`sdma_v4_4_2_gfx_resume()`, tinygrad's `setup_ring`) starts when
    /// `RB_ENABLE` rises; one the HWS maps runs through
    /// [`SdmaModel::map_scheduled`].
    pub fn new_v4_4_2(
        clock: &SimClock,
        bases: &IpBases,
        hooks: SdmaHooks,
        log: Arc<RefusalLog>,
    ) -> Option<Self> {
        let (regs, missing) = RegStore::new(clock, bases, &v4_4_2::registers());
        let names = ["SDMA_F32_CNTL", "SDMA_GFX_"];
        Self::assemble(
            regs,
            &missing,
            names,
            v4_4_2::RESET,
            SdmaGen::V4_4_2,
            hooks,
            log,
        )
    }

    /// One SDMA 4.4.0 instance of an Aldebaran (GC 9.4.2) on `bases`, the
    /// instance's register base in segment 0 (see [`v4_4_0`]): its GFX
    /// queue, run with SDMA 4's packets ([`SdmaGen::V4_4_2`]: 4.4.0 and
    /// 4.4.2 both build them from `vega10_sdma_pkt_open.h`, 22-bit counts,
    /// `copy_max_bytes` 0x400000 in `sdma_v4_0_buffer_funcs`). It comes up
    /// halted; the HWS maps user queues onto it
    /// ([`SdmaModel::map_scheduled`]) once a driver unhalted it.
    pub fn new_v4_4_0(
        clock: &SimClock,
        bases: &IpBases,
        hooks: SdmaHooks,
        log: Arc<RefusalLog>,
    ) -> Option<Self> {
        let (regs, missing) = RegStore::new(clock, bases, &v4_4_0::registers());
        let names = ["SDMA0_F32_CNTL", "SDMA0_GFX_"];
        Self::assemble(
            regs,
            &missing,
            names,
            v4_4_0::RESET,
            SdmaGen::V4_4_2,
            hooks,
            log,
        )
    }

    /// SDMA 1 of a GC 11 part (SDMA 6.0 has two engines on Navi31), its
    /// registers placed from SDMA 0's as [`v6_instance1`] says; `None` on
    /// other generations (SDMA 7.0's second engine is not modelled).
    pub fn new_instance1(
        clock: &SimClock,
        generation: Generation,
        bases: &IpBases,
        hooks: SdmaHooks,
        log: Arc<RefusalLog>,
    ) -> Option<Self> {
        use v6_instance1 as i1;
        if generation != Generation::Gfx11 {
            return None;
        }
        let regs: Vec<(Reg, u32)> = registers(generation)
            .into_iter()
            .filter(|(r, _)| !r.name.ends_with("_RLC_CGCG_CTRL"))
            .map(|(r, v)| {
                let shift = if i1::HYP_DEC.contains(&r.offset) {
                    i1::HYP_DEC_OFFSET
                } else {
                    i1::REG_OFFSET
                };
                (
                    Reg {
                        offset: r.offset + shift,
                        ..r
                    },
                    v,
                )
            })
            .collect();
        let (regs, missing) = RegStore::new(clock, bases, &regs);
        let names = ["SDMA0_F32_CNTL", "SDMA0_QUEUE0_"];
        Self::assemble(
            regs,
            &missing,
            names,
            cntl::F32_TH1_RESET,
            SdmaGen::V6,
            hooks,
            log,
        )
    }

    /// SDMA 0 of a `generation` part on the GC `bases` (GC 11, 12; for GC
    /// 9.4.3 see [`SdmaModel::new_v4_4_2`]).
    pub fn new(
        clock: &SimClock,
        generation: Generation,
        bases: &IpBases,
        hooks: SdmaHooks,
        log: Arc<RefusalLog>,
    ) -> Option<Self> {
        let (regs, missing) = RegStore::new(clock, bases, &registers(generation));
        let (cntl_name, reset_mask, sdma) = match generation {
            Generation::Gfx90a | Generation::Gfx94 => return None,
            Generation::Gfx11 => ("SDMA0_F32_CNTL", cntl::F32_TH1_RESET, SdmaGen::V6),
            Generation::Gfx12 => ("SDMA0_MCU_CNTL", cntl::MCU_RESET, SdmaGen::V7),
        };
        let names = [cntl_name, "SDMA0_QUEUE0_"];
        Self::assemble(regs, &missing, names, reset_mask, sdma, hooks, log)
    }

    /// The engine over `regs`: `names` = the control register and the
    /// queue registers' prefix (`SDMA0_QUEUE0_` on 6.0/7.0, `SDMA_GFX_`
    /// on 4.4.2); `None` if a register is missing.
    fn assemble(
        regs: RegStore,
        missing: &[&'static str],
        names: [&str; 2],
        reset_mask: u32,
        sdma: SdmaGen,
        hooks: SdmaHooks,
        log: Arc<RefusalLog>,
    ) -> Option<Self> {
        if !missing.is_empty() {
            return None;
        }
        let [cntl_name, prefix] = names;
        let q = |field: &str| regs.at(&alloc::format!("{prefix}{field}"));
        let at = At {
            cntl: regs.at(cntl_name)?,
            reset_mask,
            starts_with_firmware: matches!(sdma, SdmaGen::V4_4_2),
            rb_cntl: q("RB_CNTL")?,
            rb_base: q("RB_BASE")?,
            rb_base_hi: q("RB_BASE_HI")?,
            rptr_lo: q("RB_RPTR_ADDR_LO")?,
            rptr_hi: q("RB_RPTR_ADDR_HI")?,
            wpoll_lo: q("RB_WPTR_POLL_ADDR_LO")?,
            wpoll_hi: q("RB_WPTR_POLL_ADDR_HI")?,
            doorbell: q("DOORBELL")?,
            doorbell_offset: q("DOORBELL_OFFSET")?,
        };
        Some(SdmaModel {
            regs,
            at,
            hooks,
            log,
            state: Mutex::new(State::default()),
            port: Mutex::new(None),
            sdma,
        })
    }

    pub fn offsets(&self) -> BTreeSet<usize> {
        self.regs.offsets()
    }

    pub fn running(&self) -> bool {
        let mut s = self.state.lock();
        self.start_with_firmware(&mut s);
        s.running
    }

    /// SDMA 4.4.2: the engine starts once its firmware is in place, if
    /// `HALT` and `RESET` are clear (see [`v4_4_2`]).
    fn start_with_firmware(&self, s: &mut State) {
        if !self.at.starts_with_firmware || s.running {
            return;
        }
        let cntl = self.regs.get(self.at.cntl);
        if cntl & (cntl::HALT | self.at.reset_mask) == 0 && (self.hooks.code_loaded)() {
            s.running = true;
            s.events.keep(SdmaEvent::StartedWithItsFirmware);
        }
    }

    /// Queue 0, while enabled.
    pub fn queue(&self) -> Option<SdmaQueue> {
        self.state.lock().queue
    }

    pub fn events(&self) -> Vec<SdmaEvent> {
        self.state.lock().events.clone()
    }

    /// Runs `q` as the engine's queue on behalf of the scheduler (MES
    /// ADD_QUEUE with `MES_QUEUE_TYPE_SDMA`). The model runs one queue at
    /// a time (*model convention*: MES would put it on one of queues 2..7,
    /// `SDMA_MES_QUEUES`); the engine must be running.
    pub fn map_scheduled(&self, q: SdmaQueue) -> Result<(), &'static str> {
        let shadow = match (self.port.lock().as_ref(), q.doorbell) {
            (Some(p), Some(db)) => p.doorbell(db),
            _ => 0,
        };
        let mut s = self.state.lock();
        self.start_with_firmware(&mut s);
        if !s.running {
            return Err("the SDMA engine is halted");
        }
        if s.queue.is_some() {
            return Err("the model's SDMA engine already runs a queue");
        }
        s.queue = Some(q);
        s.rptr = 0;
        s.wptr = 0;
        s.shadow = shadow;
        s.stopped = None;
        s.events.keep(SdmaEvent::QueueEnabled(q));
        Ok(())
    }

    /// Takes the scheduler's queue off the engine (MES REMOVE_QUEUE).
    pub fn unmap_scheduled(&self) {
        let mut s = self.state.lock();
        if s.queue.take().is_some() {
            s.events.keep(SdmaEvent::QueueDisabled);
        }
    }

    /// What went wrong on the engine, in a driver author's words: a queue
    /// enabled while the engine is halted, an unhalt with no code in place,
    /// doorbells that never reached it, and why its queue stopped.
    pub fn troubles(&self) -> Vec<alloc::string::String> {
        use alloc::format;
        let s = self.state.lock();
        let mut out = Vec::new();
        for e in &s.events {
            match e {
                SdmaEvent::UnhaltedWithoutCode => {
                    out.push("unhalted with no SDMA firmware in place".into());
                }
                SdmaEvent::QueueOnHaltedEngine(q) => out.push(format!(
                    "queue at {:#x} enabled while the engine is halted (firmware in place: {})",
                    q.ring,
                    (self.hooks.code_loaded)()
                )),
                SdmaEvent::DoorbellDropped { dword, value } => out.push(format!(
                    "doorbell dword {dword:#x} = {value:#x} did not reach the engine"
                )),
                SdmaEvent::Stopped(stop) => out.push(format!("{stop}")),
                _ => {}
            }
        }
        if s.queue.is_some() && s.stopped.is_none() && s.rptr < s.wptr {
            out.push(format!(
                "queue waits at ring byte {:#x} of {:#x} announced{}",
                s.rptr,
                s.wptr,
                match s.reg_wait {
                    Some((r, v)) => format!(" (polling register byte {r:#x}, last read {v:?})"),
                    None => alloc::string::String::from(" (a poll not met, or the engine halted)"),
                }
            ));
        }
        if let Some(q) = s.queue
            && s.running
            && s.stopped.is_none()
            && s.rptr == s.wptr
            && s.stats.doorbells == 0
        {
            out.push(format!(
                "queue at {:#x} runs but no doorbell reached it (doorbell {:?})",
                q.ring, q.doorbell
            ));
        }
        out
    }

    /// The SRBM_WRITE stores since the last call (BAR byte offset, value).
    pub fn take_register_stores(&self) -> Vec<(u32, u32)> {
        core::mem::take(&mut self.state.lock().register_stores)
    }

    /// The register a POLL_REGMEM waits on (byte offset), if any.
    pub fn register_waits(&self) -> Vec<u32> {
        self.state
            .lock()
            .reg_wait
            .map(|(r, _)| r)
            .into_iter()
            .collect()
    }

    /// The values the device read at [`SdmaModel::register_waits`]'
    /// registers.
    pub fn register_values(&self, values: &[(u32, u32)]) {
        let mut s = self.state.lock();
        if let Some((reg, seen)) = s.reg_wait.as_mut()
            && let Some((_, v)) = values.iter().find(|(r, _)| r == reg)
        {
            *seen = Some(*v);
        }
    }

    /// Attaches the memory, doorbells and clock the engine runs on.
    pub fn set_port(&self, port: Arc<dyn SdmaPort>) {
        *self.port.lock() = Some(port);
    }

    /// Why the queue stopped, if it did.
    pub fn stopped(&self) -> Option<SdmaStop> {
        self.state.lock().stopped
    }

    pub fn stats(&self) -> SdmaStats {
        self.state.lock().stats
    }

    /// The queue's read and write pointers (bytes).
    pub fn pointers(&self) -> (u64, u64) {
        let s = self.state.lock();
        (s.rptr, s.wptr)
    }

    /// Looks at the doorbell and runs what it published; returns the
    /// packets executed.
    pub fn service(&self) -> usize {
        let Some(port) = self.port.lock().clone() else {
            return 0;
        };
        let mut s = self.state.lock();
        let Some(q) = s.queue else {
            return 0;
        };
        self.start_with_firmware(&mut s);
        if !s.running || s.stopped.is_some() {
            return 0;
        }
        if let Some(db) = q.doorbell {
            let v = port.doorbell(db);
            if v != s.shadow {
                s.shadow = v;
                if port.routed(db) {
                    s.wptr = v;
                    s.stats.doorbells += 1;
                } else {
                    s.events.keep(SdmaEvent::DoorbellDropped {
                        dword: db,
                        value: v,
                    });
                }
            }
        }
        let sdma = self.sdma;
        let mut done = 0;
        let start = s.rptr;
        while s.rptr < s.wptr && done < PACKETS_PER_SERVICE {
            match self.step(&*port, &q, sdma, &mut s) {
                Ok(Some(bytes)) => {
                    s.rptr += bytes;
                    s.stats.packets += 1;
                    done += 1;
                }
                Ok(None) => break,
                Err(stop) => {
                    s.stopped = Some(stop);
                    s.events.keep(SdmaEvent::Stopped(stop));
                    break;
                }
            }
        }
        if s.rptr != start {
            let rptr = s.rptr;
            if let Ok((h, _)) = port.translate(q.vmid as u8, q.rptr_report, Access::Write) {
                // SAFETY: `h` is the host address the port translated the
                // write-back address to, valid to the end of its page;
                // the runtime aligns the write-back to 8 bytes.
                unsafe { core::ptr::write_volatile(h as *mut u64, rptr) };
            }
        }
        done
    }

    /// Runs the packet at the read pointer: `Ok(Some(bytes))` consumed,
    /// `Ok(None)` not yet runnable (incomplete, or a poll not met).
    fn step(
        &self,
        port: &dyn SdmaPort,
        q: &SdmaQueue,
        sdma: SdmaGen,
        s: &mut State,
    ) -> Result<Option<u64>, SdmaStop> {
        let ring = Stream::ring(q);
        let at = Cursor {
            stream: ring,
            at: s.rptr,
            avail: s.wptr,
            rptr: s.rptr,
        };
        let Some((p, header, len)) = self.fetch(port, at, sdma)? else {
            return Ok(None);
        };
        let run = Running {
            port,
            vmid: ring.vmid,
            rptr: s.rptr,
            header,
            stream: ring,
            at: s.rptr,
        };
        let done = match p {
            SdmaPacket::Indirect { vmid, base, size } => {
                self.indirect(&run, sdma, s, (vmid, base, size))?
            }
            SdmaPacket::CondExe {
                addr,
                reference,
                count,
            } => {
                let skip = if run.cond_met(addr, reference)? {
                    0
                } else {
                    u64::from(count) * 4
                };
                // The discarded dwords must be there too.
                if s.rptr.saturating_add(len as u64 * 4 + skip) > s.wptr {
                    return Ok(None);
                }
                return Ok(Some(len as u64 * 4 + skip));
            }
            p => run.execute(p, s)?,
        };
        Ok(done.then_some(len as u64 * 4))
    }

    /// INDIRECT: runs the IB's packets from where a poll last stopped
    /// them; `Ok(false)` at a poll not met (the position is kept).
    fn indirect(
        &self,
        run: &Running<'_>,
        sdma: SdmaGen,
        s: &mut State,
        (vmid, base, size): (u32, u64, u32),
    ) -> Result<bool, SdmaStop> {
        if vmid != u32::from(run.vmid) {
            return Err(run.refuse("INDIRECT in a VMID other than the queue's is not modelled"));
        }
        if !base.is_multiple_of(32) {
            return Err(run.refuse("INDIRECT base not 32-byte aligned"));
        }
        let bytes = u64::from(size) * 4;
        let ib = Stream {
            base,
            dwords: u64::from(size).next_power_of_two().max(1),
            vmid: run.vmid,
        };
        let mut at = match s.ib_at {
            Some((r, at)) if r == run.rptr => at,
            _ => 0,
        };
        while at < bytes {
            let cursor = Cursor {
                stream: ib,
                at,
                avail: bytes,
                rptr: run.rptr,
            };
            let Some((p, header, len)) = self.fetch(run.port, cursor, sdma)? else {
                return Err(run.refuse("a packet runs past the IB's end"));
            };
            let inner = Running {
                header,
                stream: ib,
                at,
                ..*run
            };
            if matches!(p, SdmaPacket::Indirect { .. }) {
                return Err(inner.refuse("INDIRECT inside an IB is not modelled"));
            }
            if let SdmaPacket::CondExe {
                addr,
                reference,
                count,
            } = p
            {
                let skip = if inner.cond_met(addr, reference)? {
                    0
                } else {
                    u64::from(count) * 4
                };
                at += len as u64 * 4 + skip;
                continue;
            }
            if !inner.execute(p, s)? {
                s.ib_at = Some((run.rptr, at));
                return Ok(false);
            }
            at += len as u64 * 4;
        }
        s.ib_at = None;
        Ok(true)
    }

    /// Reads and decodes the packet at the cursor: the packet, its header
    /// and its length in dwords; `Ok(None)` while the stream does not hold
    /// all of it.
    fn fetch(
        &self,
        port: &dyn SdmaPort,
        c: Cursor,
        sdma: SdmaGen,
    ) -> Result<Option<(SdmaPacket, u32, usize)>, SdmaStop> {
        let (rptr, vmid, va) = (c.rptr, c.stream.vmid, c.stream.va(c.at, 0));
        let vm = |header: u32| {
            move |error: SdmaVmError| SdmaStop::Vm {
                va,
                vmid,
                write: false,
                error,
                header,
                rptr,
            }
        };
        let h = c.stream.dword(port, c.at, 0).map_err(vm(0))?;
        let refuse = |why: &'static str| SdmaStop::Refused {
            header: h,
            rptr,
            why,
        };
        let Some(len) = SdmaPacket::len(sdma, h) else {
            return Err(refuse(
                "opcode/sub-opcode not executed by the model (not decoded)",
            ));
        };
        if c.at.saturating_add(len as u64 * 4) > c.avail {
            return Ok(None);
        }
        // The longest fixed part a packet the model decodes has (PTEPDE
        // GEN's ten dwords); WRITE_LINEAR's data is read as it runs.
        let mut d = [0u32; 10];
        let n = if decode::OP.get(h) == decode::OP_NOP {
            1
        } else {
            len.min(d.len())
        };
        for (i, slot) in d.iter_mut().enumerate().take(n) {
            *slot = c.stream.dword(port, c.at, i as u64).map_err(vm(h))?;
        }
        let (p, whole) = SdmaPacket::decode(sdma, &d[..n])
            .map_err(|_| refuse("packet shorter than its opcode needs"))?;
        // WRITE_LINEAR's data follows its count.
        let len = if decode::OP.get(h) == decode::OP_NOP {
            len
        } else {
            whole
        };
        if c.at.saturating_add(len as u64 * 4) > c.avail {
            return Ok(None);
        }
        Ok(Some((p, h, len)))
    }

    /// Back to the power-on state (mode-1 reset).
    pub fn reset(&self) {
        self.regs.reset();
        *self.state.lock() = State::default();
    }

    fn pair(&self, lo: usize, hi: usize) -> u64 {
        u64::from(self.regs.get(hi)) << 32 | u64::from(self.regs.get(lo))
    }

    fn decode_queue(&self, rb_cntl: u32) -> SdmaQueue {
        let db = self.regs.get(self.at.doorbell);
        SdmaQueue {
            ring: self.pair(self.at.rb_base, self.at.rb_base_hi) << 8,
            bytes: 4u64 << field(rb_cntl, queue::RB_SIZE),
            vmid: field(rb_cntl, queue::RB_VMID),
            rptr_report: self.pair(self.at.rptr_lo, self.at.rptr_hi),
            wptr_poll: self.pair(self.at.wpoll_lo, self.at.wpoll_hi),
            doorbell: (db & queue::DOORBELL_ENABLE != 0).then(|| {
                field(
                    self.regs.get(self.at.doorbell_offset),
                    queue::DOORBELL_OFFSET,
                )
            }),
        }
    }

    fn on_cntl(&self, value: u32) {
        let run = value & (cntl::HALT | self.at.reset_mask) == 0;
        let mut s = self.state.lock();
        if run == s.running {
            return;
        }
        if run && !(self.hooks.code_loaded)() {
            s.events.keep(SdmaEvent::UnhaltedWithoutCode);
            return;
        }
        s.running = run;
        s.events.keep(if run {
            SdmaEvent::Unhalted
        } else {
            SdmaEvent::Halted
        });
    }

    fn on_rb_cntl(&self, value: u32) {
        let on = value & queue::RB_ENABLE != 0;
        let q = self.decode_queue(value);
        let shadow = match (self.port.lock().as_ref(), q.doorbell) {
            (Some(p), Some(db)) => p.doorbell(db),
            _ => 0,
        };
        let mut s = self.state.lock();
        self.start_with_firmware(&mut s);
        match (on, s.queue.is_some()) {
            (true, false) => {
                s.queue = Some(q);
                // `sdma_v6_0_gfx_resume()` zeroes RPTR/WPTR before the
                // enable; the doorbell's current value announces nothing.
                s.rptr = 0;
                s.wptr = 0;
                s.shadow = shadow;
                s.stopped = None;
                let e = if s.running {
                    SdmaEvent::QueueEnabled(q)
                } else {
                    SdmaEvent::QueueOnHaltedEngine(q)
                };
                s.events.keep(e);
            }
            (false, true) => {
                s.queue = None;
                s.events.keep(SdmaEvent::QueueDisabled);
            }
            _ => {}
        }
    }
}

/// Where the next packet is read: the stream, the byte offset in it, the
/// bytes it holds, and the ring position a stop names.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    stream: Stream,
    at: u64,
    avail: u64,
    rptr: u64,
}

/// The packet the engine is running: where its memory accesses go and
/// what a stop names.
#[derive(Clone, Copy)]
struct Running<'a> {
    port: &'a dyn SdmaPort,
    vmid: u8,
    /// The read pointer, at the packet's header (for a packet in an IB,
    /// at the INDIRECT).
    rptr: u64,
    header: u32,
    /// The packet's stream and its byte offset there (WRITE_LINEAR's
    /// data is read from it).
    stream: Stream,
    at: u64,
}

impl Running<'_> {
    /// The packet refused for `why`.
    fn refuse(&self, why: &'static str) -> SdmaStop {
        SdmaStop::Refused {
            header: self.header,
            rptr: self.rptr,
            why,
        }
    }

    /// `va` translated for `access`: its host address and how many bytes
    /// from it are contiguous; a fault stops the queue.
    fn tr(&self, va: u64, access: Access) -> Result<(u64, u64), SdmaStop> {
        let write = access == Access::Write;
        self.port
            .translate(self.vmid, va, access)
            .map_err(|error| SdmaStop::Vm {
                va,
                vmid: self.vmid,
                write,
                error,
                header: self.header,
                rptr: self.rptr,
            })
    }

    /// Runs decoded packet `p`; `Ok(false)` when it is a poll not yet
    /// met.
    fn execute(&self, p: SdmaPacket, s: &mut State) -> Result<bool, SdmaStop> {
        match p {
            SdmaPacket::Nop { .. } => {}
            SdmaPacket::CopyLinear {
                bytes,
                src,
                dst,
                tmz,
            } => {
                if tmz {
                    return Err(self.refuse("TMZ copy: secure memory is not modelled"));
                }
                self.copy_linear(src, dst, bytes)?;
                s.stats.copied_bytes += bytes;
            }
            SdmaPacket::ConstantFill {
                dst, data, bytes, ..
            } => {
                self.constant_fill(dst, data, bytes)?;
                s.stats.filled_bytes += bytes;
            }
            SdmaPacket::Fence { addr, data } => {
                if addr & 3 != 0 {
                    return Err(self.refuse("FENCE address not dword aligned"));
                }
                let (hp, _) = self.tr(addr, Access::Write)?;
                // SAFETY: a dword-aligned translated address.
                unsafe { core::ptr::write_volatile(hp as *mut u32, data) };
                s.stats.fences += 1;
            }
            SdmaPacket::Trap { context } => {
                s.events.keep(SdmaEvent::Trap { context });
                self.port.trap(context);
            }
            SdmaPacket::PollRegmem {
                mem,
                hdp_flush,
                func,
                addr,
                value,
                mask,
                ..
            } => {
                if !mem && !hdp_flush && (func, addr, value, mask) == ROCR_HDP_FLUSH {
                    // An HDP flush, done at once: the model's HDP holds no
                    // writes (*model convention*, as for the `hdp_flush`
                    // form below).
                    return Ok(true);
                }
                if !mem && !hdp_flush {
                    return self.register_poll(s, func, addr, value, mask);
                }
                return self.poll_met((mem, hdp_flush), func, addr, value, mask);
            }
            SdmaPacket::Timestamp { addr, .. } => {
                let (hp, _) = self.tr(addr, Access::Write)?;
                // SAFETY: the encoding makes the address 8-byte aligned.
                unsafe { core::ptr::write_volatile(hp as *mut u64, self.port.now_ns()) };
            }
            SdmaPacket::Atomic {
                op,
                looped,
                addr,
                src,
                ..
            } => {
                if op != ATOMIC_ADD64 || looped || addr & 7 != 0 {
                    return Err(
                        self.refuse("ATOMIC other than an aligned, unlooped ADD64 is not modelled")
                    );
                }
                let (hp, _) = self.tr(addr, Access::Write)?;
                // SAFETY: an 8-byte-aligned translated address that the
                // host reads atomically (signals).
                let a = unsafe { core::sync::atomic::AtomicU64::from_ptr(hp as *mut u64) };
                a.fetch_add(src, core::sync::atomic::Ordering::AcqRel);
            }
            SdmaPacket::WriteLinear { dst, dwords } => self.write_linear(dst, dwords)?,
            // `sdma_v6_0_ring_emit_mem_sync()`'s cache rinse: the model's
            // engine reads and writes memory directly, with no caches, so
            // there is nothing to invalidate or write back (*model
            // convention*, as for the CP's ACQUIRE_MEM).
            SdmaPacket::GcrReq => {}
            SdmaPacket::PtePdeGen {
                pe,
                flags,
                value,
                incr,
                count,
            } => self.pte_pde_gen(pe, flags, value, u64::from(incr), count)?,
            SdmaPacket::SrbmWrite { reg, data, byte_en } => {
                // `sdma_v4_4_2_ring_emit_wreg()` / `sdma_v6_0_ring_emit_wreg()`
                // write whole registers (`BYTE_EN(0xf)`).
                if byte_en != 0xf {
                    return Err(self.refuse("SRBM_WRITE of part of a register is not modelled"));
                }
                let at = self.port.register(reg).wrapping_mul(4);
                s.register_stores.keep((at, data));
            }
            SdmaPacket::Indirect { .. } | SdmaPacket::CondExe { .. } => {
                return Err(
                    self.refuse("INDIRECT and COND_EXE are run by the engine, not as packets")
                );
            }
            SdmaPacket::Unknown { .. } => {
                return Err(self.refuse("opcode not executed by the model"));
            }
        }
        Ok(true)
    }

    /// COPY_LINEAR: `bytes` from `src` to `dst`, run by translated run.
    fn copy_linear(&self, src: u64, dst: u64, bytes: u64) -> Result<(), SdmaStop> {
        let mut off = 0u64;
        while off < bytes {
            let (sv, dv) = (src + off, dst + off);
            let (sp, srun) = self.tr(sv, Access::Read)?;
            let (dp, drun) = self.tr(dv, Access::Write)?;
            let n = (bytes - off).min(srun).min(drun);
            // SAFETY: both host ranges were translated for this
            // access and are contiguous for their runs (`n` stops
            // at both ends); `copy` allows overlap.
            unsafe { core::ptr::copy(sp as *const u8, dp as *mut u8, n as usize) };
            off += n;
        }
        Ok(())
    }

    /// PTEPDE GEN: entry `i` at `pe + 8 i` is `(value + i * incr) |
    /// flags`, what the CPU backend writes for the same update
    /// (`amdgpu_vm_cpu_update()` → `amdgpu_gmc_set_pte_pde()` on a
    /// page-aligned address). The entries must be 8-byte aligned and at
    /// most [`PTEPDE_MAX`] (*model rule*: the count's width is not in a
    /// header).
    fn pte_pde_gen(
        &self,
        pe: u64,
        flags: u64,
        value: u64,
        incr: u64,
        count: u64,
    ) -> Result<(), SdmaStop> {
        if !pe.is_multiple_of(8) {
            return Err(self.refuse("PTEPDE destination not 8-byte aligned"));
        }
        if count > PTEPDE_MAX {
            return Err(self.refuse("PTEPDE count past what the model generates"));
        }
        for i in 0..count {
            let (hp, _) = self.tr(pe.wrapping_add(8 * i), Access::Write)?;
            let entry = value.wrapping_add(i.wrapping_mul(incr)) | flags;
            // SAFETY: an 8-byte-aligned address the port translated for a
            // write, valid to the end of its page.
            unsafe { core::ptr::write_volatile(hp as *mut u64, entry) };
        }
        Ok(())
    }

    /// COND_EXE's condition: the dword at `addr` equals `reference`.
    fn cond_met(&self, addr: u64, reference: u32) -> Result<bool, SdmaStop> {
        if !addr.is_multiple_of(4) {
            return Err(self.refuse("COND_EXE address not dword aligned"));
        }
        let (hp, _) = self.tr(addr, Access::Read)?;
        // SAFETY: a dword-aligned address the port translated for a read.
        let v = unsafe { core::ptr::read_volatile(hp as *const u32) };
        Ok(v == reference)
    }

    /// WRITE_LINEAR: the packet's `dwords` data dwords (from its dword 4)
    /// to `dst`, which must be dword aligned (*model rule*: every Linux
    /// and tinygrad destination is).
    fn write_linear(&self, dst: u64, dwords: u32) -> Result<(), SdmaStop> {
        if !dst.is_multiple_of(4) {
            return Err(self.refuse("WRITE_LINEAR destination not dword aligned"));
        }
        for i in 0..u64::from(dwords) {
            let v = self
                .stream
                .dword(self.port, self.at, 4 + i)
                .map_err(|error| SdmaStop::Vm {
                    va: self.stream.va(self.at, 4 + i),
                    vmid: self.vmid,
                    write: false,
                    error,
                    header: self.header,
                    rptr: self.rptr,
                })?;
            let (hp, _) = self.tr(dst.wrapping_add(4 * i), Access::Write)?;
            // SAFETY: a dword-aligned address the port translated for a
            // write, valid to the end of its page.
            unsafe { core::ptr::write_volatile(hp as *mut u32, v) };
        }
        Ok(())
    }

    /// CONSTANT_FILL: `bytes` at `dst` with the dword `data`'s bytes.
    fn constant_fill(&self, dst: u64, data: u32, bytes: u64) -> Result<(), SdmaStop> {
        let pat = data.to_le_bytes();
        let mut off = 0u64;
        while off < bytes {
            let dv = dst + off;
            let (dp, run) = self.tr(dv, Access::Write)?;
            let n = (bytes - off).min(run);
            for i in 0..n {
                // SAFETY: within the translated run (`n` stops at
                // its end).
                unsafe {
                    core::ptr::write_volatile((dp + i) as *mut u8, pat[((off + i) % 4) as usize])
                };
            }
            off += n;
        }
        Ok(())
    }

    /// POLL_REGMEM on a register (`sdma_v4_4_2_ring_emit_reg_wait()`: the
    /// register in dword 1 as a byte offset, dword 2 unused): the device
    /// reads the register after each look and hands the value back
    /// ([`SdmaModel::register_values`]); met when `func` holds between
    /// the masked value and `value` (*model convention*: the engine sees
    /// the register one look late).
    fn register_poll(
        &self,
        s: &mut State,
        func: u32,
        addr: u64,
        value: u32,
        mask: u32,
    ) -> Result<bool, SdmaStop> {
        let reg = (addr as u32) >> 2;
        if func > 6 {
            return Err(self.refuse("POLL_REGMEM function 7 is reserved"));
        }
        let at = self
            .port
            .register(reg & decode::SRBM_ADDR.mask())
            .wrapping_mul(4);
        let seen = match s.reg_wait {
            Some((r, seen)) if r == at => seen,
            _ => None,
        };
        let met = seen.is_some_and(|v| {
            let v = v & mask;
            match func {
                0 => true,
                1 => v < value,
                2 => v <= value,
                3 => v == value,
                4 => v != value,
                5 => v >= value,
                _ => v > value,
            }
        });
        s.reg_wait = (!met).then_some((at, seen));
        Ok(met)
    }

    /// POLL_REGMEM: on memory, whether `func` holds between the masked
    /// dword at `addr` and `value`; on the HDP flush registers, done.
    fn poll_met(
        &self,
        (mem, hdp_flush): (bool, bool),
        func: u32,
        addr: u64,
        value: u32,
        mask: u32,
    ) -> Result<bool, SdmaStop> {
        if !mem {
            // Registers: dword 1 the polled register, dword 2 the one
            // `hdp_flush` writes first, both byte offsets (`addr0 << 2`,
            // `addr1 << 2` in `sdma_v4_4_2_wait_reg_mem()`).
            let (polled, written) = (addr as u32, (addr >> 32) as u32);
            let flush = self.port.hdp_flush().is_some_and(|(req, done)| {
                hdp_flush && written == req.wrapping_mul(4) && polled == done.wrapping_mul(4)
            });
            if flush {
                return Ok(true);
            }
            return Err(self.refuse(
                "POLL_REGMEM on a register other than the HDP flush pair is not modelled",
            ));
        }
        if addr & 3 != 0 {
            return Err(self.refuse("POLL_REGMEM address not dword aligned"));
        }
        let (hp, _) = self.tr(addr, Access::Read)?;
        // SAFETY: a dword-aligned translated address.
        let v = unsafe { core::ptr::read_volatile(hp as *const u32) } & mask;
        match func {
            0 => Ok(true),
            1 => Ok(v < value),
            2 => Ok(v <= value),
            3 => Ok(v == value),
            4 => Ok(v != value),
            5 => Ok(v >= value),
            6 => Ok(v > value),
            _ => Err(self.refuse("POLL_REGMEM function 7 is reserved")),
        }
    }
}

impl RegisterBus for SdmaModel {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.regs.host_read(byte_offset)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.regs.host_write(byte_offset, value);
        if byte_offset == self.at.cntl {
            self.on_cntl(value);
        } else if byte_offset == self.at.rb_cntl {
            self.on_rb_cntl(value);
        }
    }
}
