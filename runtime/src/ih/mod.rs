//! The interrupt handler (IH) ring, polled (issue 20 item 5): OSSSYS
//! 6.0.0 (Navi31, [`ih_v6_0`]) and 7.0.0 (Navi48, [`ih_v7_0`]).
//!
//! Set up as `ih_v6_0_irq_init()` / `ih_v7_0_irq_init()` do for ring 0:
//! both rings off first (`ih_v6_0_irq_disable()`), then
//! `ih_v6_0_enable_ring()`: the ring's MC address (`IH_RB_BASE(_HI)`,
//! bits 39:8 and 47:40), `IH_RB_CNTL` as `ih_v6_0_rb_cntl()` builds it
//! (`MC_SPACE` 4: an MC address, the ring in GTT as Linux places it when
//! the PSP loads firmware, `ih_v6_0_sw_init()`; `RB_SIZE` =
//! log2(dwords); write-pointer writeback and overflow on; snooped), the
//! writeback address right after the ring (`amdgpu_ih_ring_init()`),
//! both pointers 0 and no doorbell; the storm and flood controls; then
//! `ih_v6_0_toggle_interrupts(true)`: `RB_ENABLE`, with the
//! `WPTR_OVERFLOW_CLEAR` pulse. One difference: `ENABLE_INTR` (the MSI to
//! the host) stays clear and nothing else of the host's interrupt path is
//! set up (`nbio_v4_3_ih_control()`): barebell polls, and a host that
//! does not handle the GPU's interrupt should not receive one.
//!
//! Reading ([`IhRing::poll`]) follows `amdgpu_ih_process()`: the write
//! pointer from the writeback copy, or on `RB_OVERFLOW` from the register
//! with the restart at `wptr + 32` and the overflow cleared
//! (`ih_v6_0_get_wptr()`); every 32-byte entry from `rptr` to it decoded
//! (`amdgpu_ih_decode_iv_helper()`, the layout in [`iv`], checked against
//! `soc15_int.h`); then `IH_RB_RPTR` written (`ih_v6_0_set_rptr()` without
//! a doorbell). Decoding turns an entry into an [`Interrupt`]:
//! - a VM fault of the GFXHUB (client `GFX`, `UTCL2_FAULT`) or MMHUB
//!   (client `VMC`, `VM_FAULT`), as `gmc_v11_0_process_interrupt()`
//!   decodes it: page address from `src_data[0]` and `src_data[1] & 0xf`,
//!   write (`0x20`) and retry (`0x80`) bits, and KFD's protection bits in
//!   `ring_id` (`event_interrupt_wq_v11()`);
//! - an SQ interrupt (`SQ_INTERRUPT_MSG`): the encoding, and for an error
//!   its type (illegal instruction, memory violation) and wave, as
//!   `print_sq_intr_info_error()` in `kfd_int_process_v11.c` reads the
//!   interrupt word; with the ME/pipe/queue `gfx_v11_0_handle_priv_fault()`
//!   splits a CP interrupt's `ring_id` into;
//! - anything else kept raw.
//!
//! The `src_data` bits of a fault, KFD's `ring_id` bits and the SQ
//! interrupt word are defined in `.c` files, not headers: they are cited,
//! not conformance-checked. The IV layout, the client and source ids and
//! every register and field are.

pub mod ih_v4_4_2;
pub mod ih_v6_0;
pub mod ih_v7_0;

use crate::bus::ALL_ONES;
use crate::bus::RegisterBus;
use crate::bus::block::{Block, BlockError};
use crate::regs::{IpBases, Reg};
use crate::time::Clock;
use barebell_facts::Fact;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// The registers one IH version has, by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IhRegs {
    pub name: &'static str,
    pub rb_cntl: Reg,
    pub rb_base: Reg,
    pub rb_base_hi: Reg,
    pub rb_rptr: Reg,
    pub rb_wptr: Reg,
    pub wptr_addr_lo: Reg,
    pub wptr_addr_hi: Reg,
    pub doorbell_rptr: Reg,
    pub rb_cntl_ring1: Reg,
    pub rb_rptr_ring1: Reg,
    pub rb_wptr_ring1: Reg,
    /// What the version's `irq_init` writes besides the ring.
    pub init: IhInit,
}

/// The version-specific part of `*_irq_init()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IhInit {
    /// `ih_v6_0_irq_init()` / `ih_v7_0_irq_init()`: the storm and flood
    /// controls; entries decoded with soc21's clients.
    Soc21 {
        storm_client_list: Reg,
        int_flood: Reg,
        msi_storm: Reg,
    },
    /// `vega20_ih_irq_init()` (OSSSYS 4.4.x): `IH_CHICKEN` read and
    /// written back, `RB_GPU_TS_ENABLE` on every toggle; entries decoded
    /// with soc15's clients ([`ih_v4_4_2::decode`]).
    Vega20 { chicken: Reg },
}

impl IhRegs {
    /// Decodes an entry with this IH's SoC's client ids.
    pub fn decode(&self, e: &IvEntry) -> Interrupt {
        match self.init {
            IhInit::Soc21 { .. } => Interrupt::from_entry(e),
            IhInit::Vega20 { .. } => ih_v4_4_2::decode(e),
        }
    }

    /// The IH of OSSSYS `version`, if barebell drives it.
    pub fn for_version(version: (u8, u8, u8)) -> Option<&'static IhRegs> {
        match version {
            // `vega20_ih.c` drives OSSSYS 4.4.0 (Aldebaran) and 4.4.2 alike,
            // through the same `*_ALDEBARAN` offsets for the two registers
            // that moved (`IH_CHICKEN`, `IH_RETRY_INT_CAM_CNTL`).
            (4, 4, 0) | (4, 4, 2) => Some(&ih_v4_4_2::REGS),
            (6, 0, 0) => Some(&ih_v6_0::REGS),
            (7, 0, 0) => Some(&ih_v7_0::REGS),
            _ => None,
        }
    }
}

/// The `IH_*` fields barebell writes or reads (the same masks in 6.0.0
/// and 7.0.0; each version's table checks them against its header).
pub mod fields {
    use barebell_facts::Fact;

    pub const RB_ENABLE: u32 = 0x0000_0001;
    pub const RB_SIZE: u32 = 0x0000_003E;
    pub const WPTR_WRITEBACK_ENABLE: u32 = 0x0000_0100;
    pub const WPTR_OVERFLOW_ENABLE: u32 = 0x0001_0000;
    pub const ENABLE_INTR: u32 = 0x0002_0000;
    pub const MC_SNOOP: u32 = 0x0010_0000;
    pub const RPTR_REARM: u32 = 0x0020_0000;
    pub const MC_RO: u32 = 0x0040_0000;
    pub const MC_VMID: u32 = 0x0F00_0000;
    pub const MC_SPACE: u32 = 0x7000_0000;
    pub const WPTR_OVERFLOW_CLEAR: u32 = 0x8000_0000;
    /// `IH_RB_WPTR` / `IH_RB_RPTR`.
    pub const RB_OVERFLOW: u32 = 0x0000_0001;
    pub const OFFSET: u32 = 0x0003_FFFC;
    pub const WPTR_ADDR_LO: u32 = 0xFFFF_FFFC;
    pub const WPTR_ADDR_HI: u32 = 0x0000_FFFF;
    pub const DOORBELL_ENABLE: u32 = 0x1000_0000;
    pub const CLIENT18_IS_STORM_CLIENT: u32 = 0x0004_0000;
    pub const FLOOD_CNTL_ENABLE: u32 = 0x0000_0008;
    pub const MSI_STORM_DELAY: u32 = 0x0000_0FFF;

    const ALL: [(&str, u32); 19] = [
        ("IH_RB_CNTL__RB_ENABLE_MASK", RB_ENABLE),
        ("IH_RB_CNTL__RB_SIZE_MASK", RB_SIZE),
        (
            "IH_RB_CNTL__WPTR_WRITEBACK_ENABLE_MASK",
            WPTR_WRITEBACK_ENABLE,
        ),
        (
            "IH_RB_CNTL__WPTR_OVERFLOW_ENABLE_MASK",
            WPTR_OVERFLOW_ENABLE,
        ),
        ("IH_RB_CNTL__ENABLE_INTR_MASK", ENABLE_INTR),
        ("IH_RB_CNTL__MC_SNOOP_MASK", MC_SNOOP),
        ("IH_RB_CNTL__RPTR_REARM_MASK", RPTR_REARM),
        ("IH_RB_CNTL__MC_RO_MASK", MC_RO),
        ("IH_RB_CNTL__MC_VMID_MASK", MC_VMID),
        ("IH_RB_CNTL__MC_SPACE_MASK", MC_SPACE),
        ("IH_RB_CNTL__WPTR_OVERFLOW_CLEAR_MASK", WPTR_OVERFLOW_CLEAR),
        ("IH_RB_WPTR__RB_OVERFLOW_MASK", RB_OVERFLOW),
        ("IH_RB_WPTR__OFFSET_MASK", OFFSET),
        ("IH_RB_WPTR_ADDR_LO__ADDR_MASK", WPTR_ADDR_LO),
        ("IH_RB_WPTR_ADDR_HI__ADDR_MASK", WPTR_ADDR_HI),
        ("IH_DOORBELL_RPTR__ENABLE_MASK", DOORBELL_ENABLE),
        (
            "IH_STORM_CLIENT_LIST_CNTL__CLIENT18_IS_STORM_CLIENT_MASK",
            CLIENT18_IS_STORM_CLIENT,
        ),
        (
            "IH_INT_FLOOD_CNTL__FLOOD_CNTL_ENABLE_MASK",
            FLOOD_CNTL_ENABLE,
        ),
        ("IH_MSI_STORM_CTRL__DELAY_MASK", MSI_STORM_DELAY),
    ];
    pub const COUNT: usize = ALL.len();

    /// Every field above as a `_MASK` fact of `header`.
    pub const fn facts(header: &'static str) -> [Fact; COUNT] {
        let mut out = [Fact::constant("", "0", 0); COUNT];
        let mut i = 0;
        while i < COUNT {
            out[i] = Fact::constant(header, ALL[i].0, ALL[i].1 as u64);
            i += 1;
        }
        out
    }

    /// `value` with `field` set to `v`.
    pub const fn set(value: u32, field: u32, v: u32) -> u32 {
        (value & !field) | ((v << field.trailing_zeros()) & field)
    }

    /// `field` of `value`, shifted down.
    pub const fn get(value: u32, field: u32) -> u32 {
        (value & field) >> field.trailing_zeros()
    }
}

/// The IV entry layout (`soc15_int.h`): (dword, mask in the dword).
pub mod iv {
    pub const CLIENT_ID: (usize, u32) = (0, 0x0000_00FF);
    pub const SOURCE_ID: (usize, u32) = (0, 0x0000_FF00);
    pub const RING_ID: (usize, u32) = (0, 0x00FF_0000);
    pub const VMID: (usize, u32) = (0, 0x0F00_0000);
    pub const VMID_TYPE: (usize, u32) = (0, 0x8000_0000);
    pub const PASID: (usize, u32) = (3, 0x0000_FFFF);
    pub const NODE_ID: (usize, u32) = (3, 0x00FF_0000);
    /// `src_data[0]` (KFD's context id 0) is dword 4.
    pub const SRC_DATA: usize = 4;
    /// Timestamp bits 47:32 in dword 2 (`amdgpu_ih_decode_iv_helper()`).
    pub const TIMESTAMP_HI: u32 = 0x0000_FFFF;
    /// Bytes per entry.
    pub const BYTES: u32 = 32;
}

/// Client and source ids (`soc15_ih_clientid.h`, `soc15_int.h`, the
/// `ivsrcid` headers).
pub mod id {
    pub const CLIENT_GFX: u8 = 0x0a;
    pub const CLIENT_VMC: u8 = 0x12;
    pub const SRC_UTCL2_FAULT: u8 = 0;
    pub const SRC_VM_FAULT: u8 = 0;
    pub const SRC_SQ_INTERRUPT_MSG: u8 = 239;
}

/// The C expression rebuilding which bits of dword `$dw` the header's
/// `$macro` reads (a gnu11 statement expression).
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

/// The IV layout and ids, against the headers.
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
        iv_probe!("SOC15_CONTEXT_ID3_FROM_IH_ENTRY", "7"),
        0xFFFF_FFFF,
    ),
    Fact::constant(
        INT,
        "SOC15_INTSRC_SQ_INTERRUPT_MSG",
        id::SRC_SQ_INTERRUPT_MSG as u64,
    ),
    Fact::constant(
        "soc15_ih_clientid.h",
        "SOC21_IH_CLIENTID_GFX",
        id::CLIENT_GFX as u64,
    ),
    Fact::constant(
        "soc15_ih_clientid.h",
        "SOC21_IH_CLIENTID_VMC",
        id::CLIENT_VMC as u64,
    ),
    Fact::constant(
        "irqsrcs_vmc_1_0.h",
        "UTCL2_1_0__SRCID__FAULT",
        id::SRC_UTCL2_FAULT as u64,
    ),
    Fact::constant(
        "irqsrcs_vmc_1_0.h",
        "VMC_1_0__SRCID__VM_FAULT",
        id::SRC_VM_FAULT as u64,
    ),
];

/// Cited from `.c` files (module docs): not conformance-checked.
mod cited {
    /// `gmc_v11_0_process_interrupt()`: `src_data[1]`.
    pub const ADDR_HI4: u32 = 0x0000_000F;
    pub const WRITE: u32 = 0x0000_0020;
    pub const RETRY: u32 = 0x0000_0080;
    /// KFD `event_interrupt_wq_v11()`: a fault's `ring_id`.
    pub const PROT_VALID: u8 = 0x08;
    pub const PROT_READ: u8 = 0x10;
    pub const PROT_WRITE: u8 = 0x20;
    /// `gfx_v11_0_handle_priv_fault()`: a CP interrupt's `ring_id`.
    pub const PIPE: u8 = 0x03;
    pub const ME: u8 = 0x0c;
    pub const QUEUE: u8 = 0x70;
    /// `kfd_int_process_v11.c`: the SQ interrupt word.
    pub const ERR_DETAIL: u32 = 0x001F_FFFF;
    pub const ERR_TYPE: u32 = 0x01E0_0000;
    pub const SH_ID: u32 = 0x0200_0000;
    pub const PRIV: u32 = 0x0400_0000;
    pub const WAVE_ID: u32 = 0xF800_0000;
    pub const SIMD_ID: u32 = 0x0000_0003;
    pub const WGP_ID: u32 = 0x0000_003C;
    pub const ENCODING: u32 = 0x0000_00C0;
}

/// One IV entry, as `amdgpu_ih_decode_iv_helper()` fills
/// `struct amdgpu_iv_entry` from the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IvEntry {
    pub client_id: u8,
    pub src_id: u8,
    pub ring_id: u8,
    pub vmid: u8,
    /// 0: GFXHUB VMID space, 1: MMHUB.
    pub vmid_src: u8,
    pub timestamp: u64,
    pub pasid: u16,
    pub node_id: u8,
    pub src_data: [u32; 4],
}

fn take(w: &[u32; 8], (dw, mask): (usize, u32)) -> u32 {
    w.get(dw).map_or(0, |d| fields::get(*d, mask))
}

impl IvEntry {
    /// Decodes the 8 dwords of one entry.
    pub fn decode(w: &[u32; 8]) -> IvEntry {
        let mut src_data = [0u32; 4];
        for (i, d) in src_data.iter_mut().enumerate() {
            *d = w.get(iv::SRC_DATA + i).copied().unwrap_or(0);
        }
        IvEntry {
            client_id: take(w, iv::CLIENT_ID) as u8,
            src_id: take(w, iv::SOURCE_ID) as u8,
            ring_id: take(w, iv::RING_ID) as u8,
            vmid: take(w, iv::VMID) as u8,
            vmid_src: take(w, iv::VMID_TYPE) as u8,
            timestamp: u64::from(w[1]) | u64::from(w[2] & iv::TIMESTAMP_HI) << 32,
            pasid: take(w, iv::PASID) as u16,
            node_id: take(w, iv::NODE_ID) as u8,
            src_data,
        }
    }
}

/// Which hub a VM fault came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultHub {
    Gfx,
    Mm,
}

/// A VM fault from the ring (`gmc_v11_0_process_interrupt()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmFaultIv {
    pub hub: FaultHub,
    /// The faulting page's address.
    pub addr: u64,
    pub vmid: u8,
    pub pasid: u16,
    /// The IH client id (`GFX` for the GFXHUB's UTCL2, `VMC`).
    pub client_id: u8,
    pub write: bool,
    /// A retry (recoverable) fault.
    pub retry: bool,
    /// KFD's reading of `ring_id`: PTE not valid, read or write
    /// permission missing.
    pub not_present: bool,
    pub no_read: bool,
    pub no_write: bool,
    pub timestamp: u64,
}

/// What the SQ reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqKind {
    /// Error, `SQ_INTERRUPT_ERROR_TYPE_ILLEGAL_INST`.
    IllegalInstruction,
    /// Error, `SQ_INTERRUPT_ERROR_TYPE_MEMVIOL`.
    MemoryViolation,
    /// Another error type (EDC).
    Error {
        error_type: u8,
    },
    /// `s_sendmsg` from a wave (encoding INST) or an automatic one (AUTO).
    Wave,
    Auto,
}

/// An SQ interrupt from the ring, with the queue it is attributed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqInterrupt {
    pub kind: SqKind,
    pub vmid: u8,
    pub pasid: u16,
    /// ME, pipe and queue as `ring_id` splits (see the module docs).
    pub me: u8,
    pub pipe: u8,
    pub queue: u8,
    pub wave_id: u8,
    pub simd_id: u8,
    pub wgp_id: u8,
    pub sh_id: u8,
    pub privileged: bool,
    /// The error detail or wave data bits.
    pub detail: u32,
    pub timestamp: u64,
}

/// One decoded interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    VmFault(VmFaultIv),
    Sq(SqInterrupt),
    /// An entry barebell does not decode further.
    Other(IvEntry),
}

impl Interrupt {
    /// Decodes an entry (module docs).
    pub fn from_entry(e: &IvEntry) -> Interrupt {
        let is_fault = e.client_id == id::CLIENT_VMC
            || (e.client_id == id::CLIENT_GFX && e.src_id == id::SRC_UTCL2_FAULT);
        if is_fault {
            let d1 = e.src_data[1];
            return Interrupt::VmFault(VmFaultIv {
                hub: if e.client_id == id::CLIENT_VMC {
                    FaultHub::Mm
                } else {
                    FaultHub::Gfx
                },
                addr: u64::from(e.src_data[0]) << 12 | u64::from(d1 & cited::ADDR_HI4) << 44,
                vmid: e.vmid,
                pasid: e.pasid,
                client_id: e.client_id,
                write: d1 & cited::WRITE != 0,
                retry: d1 & cited::RETRY != 0,
                not_present: e.ring_id & cited::PROT_VALID != 0,
                no_read: e.ring_id & cited::PROT_READ != 0,
                no_write: e.ring_id & cited::PROT_WRITE != 0,
                timestamp: e.timestamp,
            });
        }
        if e.client_id == id::CLIENT_GFX && e.src_id == id::SRC_SQ_INTERRUPT_MSG {
            let (c0, c1) = (e.src_data[0], e.src_data[1]);
            let kind = match fields::get(c1, cited::ENCODING) {
                0 => SqKind::Auto,
                1 => SqKind::Wave,
                _ => match fields::get(c0, cited::ERR_TYPE) {
                    1 => SqKind::IllegalInstruction,
                    2 => SqKind::MemoryViolation,
                    t => SqKind::Error {
                        error_type: t as u8,
                    },
                },
            };
            let r = e.ring_id;
            return Interrupt::Sq(SqInterrupt {
                kind,
                vmid: e.vmid,
                pasid: e.pasid,
                me: (r & cited::ME) >> 2,
                pipe: r & cited::PIPE,
                queue: (r & cited::QUEUE) >> 4,
                wave_id: fields::get(c0, cited::WAVE_ID) as u8,
                simd_id: fields::get(c1, cited::SIMD_ID) as u8,
                wgp_id: fields::get(c1, cited::WGP_ID) as u8,
                sh_id: fields::get(c0, cited::SH_ID) as u8,
                privileged: c0 & cited::PRIV != 0,
                detail: c0 & cited::ERR_DETAIL,
                timestamp: e.timestamp,
            });
        }
        Interrupt::Other(*e)
    }
}

impl core::fmt::Display for Interrupt {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Interrupt::VmFault(v) => {
                let hub = match v.hub {
                    FaultHub::Gfx => "GFXHUB",
                    FaultHub::Mm => "MMHUB",
                };
                write!(
                    f,
                    "[{hub}] page fault at {:#x} ({}, vmid {}, pasid {}, client {:#x}{}{}{}{})",
                    v.addr,
                    if v.write { "write" } else { "read" },
                    v.vmid,
                    v.pasid,
                    v.client_id,
                    if v.retry { ", retry" } else { "" },
                    if v.not_present { ", not present" } else { "" },
                    if v.no_read {
                        ", no read permission"
                    } else {
                        ""
                    },
                    if v.no_write {
                        ", no write permission"
                    } else {
                        ""
                    },
                )
            }
            Interrupt::Sq(s) => {
                let what = match s.kind {
                    SqKind::IllegalInstruction => "illegal instruction",
                    SqKind::MemoryViolation => "memory violation",
                    SqKind::Error { .. } => "error",
                    SqKind::Wave => "wave message",
                    SqKind::Auto => "automatic",
                };
                write!(
                    f,
                    "SQ {what} (vmid {}, ME {} pipe {} queue {}, wave {}, simd {}, wgp {})",
                    s.vmid, s.me, s.pipe, s.queue, s.wave_id, s.simd_id, s.wgp_id
                )?;
                if let SqKind::Error { error_type } = s.kind {
                    write!(f, ", type {error_type}")?;
                }
                Ok(())
            }
            Interrupt::Other(e) => write!(
                f,
                "interrupt client {:#x} source {} ring {:#x} vmid {} data {:#x?}",
                e.client_id, e.src_id, e.ring_id, e.vmid, e.src_data
            ),
        }
    }
}

/// Why the IH ring could not be set up or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IhError {
    /// A register outside the discovered bases.
    Register(BlockError),
    /// A register read all ones: the device is gone.
    DeviceGone { register: &'static str },
    /// The ring's memory is not a power-of-two ring of 32 bytes to
    /// 256 KiB plus a 4 KiB page for the write-pointer copy, or not
    /// 256-byte aligned on the device.
    BadMemory { bytes: usize, mc: u64 },
    /// No interrupt arrived within the bound.
    Timeout { bound_ns: u64 },
}

impl From<BlockError> for IhError {
    fn from(e: BlockError) -> Self {
        IhError::Register(e)
    }
}

impl core::fmt::Display for IhError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            IhError::Register(e) => write!(f, "IH: {e}"),
            IhError::DeviceGone { register } => write!(
                f,
                "IH: {register} reads all ones: the device is gone (bus error or removed)"
            ),
            IhError::BadMemory { bytes, mc } => write!(
                f,
                "IH: a ring buffer of {bytes:#x} bytes at MC {mc:#x} is not a power-of-two ring \
                 of 32 B to 256 KiB plus a 4 KiB write-pointer page, 256-byte aligned"
            ),
            IhError::Timeout { bound_ns } => {
                write!(f, "IH: no interrupt within {} ms", bound_ns / 1_000_000)
            }
        }
    }
}

/// The ring's memory: the ring, then a page whose first dword the IH
/// writes its write pointer to (`amdgpu_ih_ring_init()` puts the
/// write-pointer copy right after the ring).
#[derive(Debug)]
pub struct IhMemory<'a> {
    host: NonNull<u8>,
    ring_bytes: usize,
    mc: u64,
    _mem: PhantomData<&'a mut [u8]>,
}

/// Bytes after the ring for the write-pointer copy.
pub const WPTR_PAGE: usize = 4096;
/// The largest ring `IH_RB_WPTR.OFFSET` reaches (2^16 dwords).
pub const MAX_RING_BYTES: usize = 1 << 18;

impl<'a> IhMemory<'a> {
    /// `len` bytes at `host`, which the device reaches at MC address `mc`:
    /// a power-of-two ring and [`WPTR_PAGE`] after it.
    ///
    /// # Safety
    /// `host..host + len` is host memory valid for reads and writes for
    /// `'a`, used by nothing else, and the device reaches exactly it at
    /// `mc` (through VMID0) for as long as the ring is enabled.
    pub unsafe fn new(host: NonNull<u8>, len: usize, mc: u64) -> Result<Self, IhError> {
        let ring = len.wrapping_sub(WPTR_PAGE);
        let ok = len > WPTR_PAGE
            && ring.is_power_of_two()
            && (iv::BYTES as usize..=MAX_RING_BYTES).contains(&ring)
            && mc.is_multiple_of(256)
            && (host.as_ptr() as usize).is_multiple_of(4);
        if !ok {
            return Err(IhError::BadMemory { bytes: len, mc });
        }
        Ok(IhMemory {
            host,
            ring_bytes: ring,
            mc,
            _mem: PhantomData,
        })
    }

    /// The dword at byte `off` (inside the ring or its page), read as the
    /// device left it.
    fn read(&self, off: usize) -> u32 {
        let off = off & !3;
        if off >= self.ring_bytes + WPTR_PAGE {
            return 0;
        }
        // SAFETY: `off` is a 4-aligned offset inside the `len` bytes
        // `new`'s caller promised, and `host` is 4-aligned; the device
        // writes them concurrently, so the read is volatile.
        unsafe { core::ptr::read_volatile(self.host.as_ptr().add(off).cast::<u32>()) }
    }

    fn write(&self, off: usize, v: u32) {
        let off = off & !3;
        if off >= self.ring_bytes + WPTR_PAGE {
            return;
        }
        // SAFETY: as for `read`.
        unsafe { core::ptr::write_volatile(self.host.as_ptr().add(off).cast::<u32>(), v) }
    }
}

/// `IH_RB_CNTL` for ring 0 as `ih_v6_0_rb_cntl()` builds it from `cntl`,
/// for a ring of `ring_bytes` at an MC address, no MSI.
pub const fn rb_cntl(cntl: u32, ring_bytes: usize) -> u32 {
    use fields::*;
    let size = (ring_bytes / 4).trailing_zeros();
    let mut v = set(cntl, MC_SPACE, 4);
    v = set(v, WPTR_OVERFLOW_CLEAR, 1);
    v = set(v, WPTR_OVERFLOW_ENABLE, 1);
    v = set(v, RB_SIZE, size);
    v = set(v, WPTR_WRITEBACK_ENABLE, 1);
    v = set(v, MC_SNOOP, 1);
    v = set(v, MC_RO, 0);
    v = set(v, MC_VMID, 0);
    // `RPTR_REARM` follows `msi_enabled`: off.
    set(v, RPTR_REARM, 0)
}

fn live<B: RegisterBus + ?Sized>(b: &Block<'_, B>, r: Reg) -> Result<u32, IhError> {
    let v = b.read(r)?;
    if v == ALL_ONES {
        return Err(IhError::DeviceGone { register: r.name });
    }
    Ok(v)
}

/// `ih_v6_0_irq_disable()` → `ih_v6_0_toggle_interrupts(false)`: each
/// ring's `RB_ENABLE` and `ENABLE_INTR` cleared, its pointers 0. Returns
/// ring 0's `IH_RB_CNTL` as written.
pub fn irq_disable<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    regs: &IhRegs,
) -> Result<u32, IhError> {
    let b = Block::new(bus, *bases);
    let mut out = 0;
    for (cntl, rptr, wptr) in [
        (regs.rb_cntl, regs.rb_rptr, regs.rb_wptr),
        (regs.rb_cntl_ring1, regs.rb_rptr_ring1, regs.rb_wptr_ring1),
    ] {
        let v = live(&b, cntl)?;
        let mut v = fields::set(fields::set(v, fields::RB_ENABLE, 0), fields::ENABLE_INTR, 0);
        if let IhInit::Vega20 { .. } = regs.init {
            v = fields::set(v, ih_v4_4_2::RB_GPU_TS_ENABLE, 1);
        }
        b.write(cntl, v)?;
        b.write(rptr, 0)?;
        b.write(wptr, 0)?;
        if cntl == regs.rb_cntl {
            out = v;
        }
    }
    Ok(out)
}

/// Ring 0, enabled and polled.
#[derive(Debug)]
pub struct IhRing<'a> {
    mem: IhMemory<'a>,
    regs: &'static IhRegs,
    bases: IpBases,
    rptr: u32,
    overflows: u32,
}

/// What one poll found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Polled {
    /// Entries decoded.
    pub entries: u32,
    /// Whether the ring had overflowed (entries were overwritten).
    pub overflowed: bool,
}

impl<'a> IhRing<'a> {
    /// `ih_v6_0_irq_init()` for ring 0 (module docs).
    pub fn init<B: RegisterBus + ?Sized>(
        bus: &B,
        bases: &IpBases,
        regs: &'static IhRegs,
        mem: IhMemory<'a>,
    ) -> Result<Self, IhError> {
        irq_disable(bus, bases, regs)?;
        let b = Block::new(bus, *bases);
        if let IhInit::Vega20 { chicken } = regs.init {
            // vega20_ih_irq_init(): IH_CHICKEN for 4.4.x, unchanged for a
            // ring at an MC address.
            let v = live(&b, chicken)?;
            b.write(chicken, v)?;
        }
        // ih_v6_0_enable_ring() / vega20_ih_enable_ring()
        b.write(regs.rb_base, (mem.mc >> 8) as u32)?;
        b.write(regs.rb_base_hi, ((mem.mc >> 40) & 0xff) as u32)?;
        let cntl = rb_cntl(live(&b, regs.rb_cntl)?, mem.ring_bytes);
        b.write(regs.rb_cntl, cntl)?;
        let wptr_addr = mem.mc + mem.ring_bytes as u64;
        mem.write(mem.ring_bytes, 0);
        b.write(regs.wptr_addr_lo, wptr_addr as u32)?;
        b.write(regs.wptr_addr_hi, (wptr_addr >> 32) as u32 & 0xFFFF)?;
        b.write(regs.rb_wptr, 0)?;
        b.write(regs.rb_rptr, 0)?;
        // `*_doorbell_rptr()` without a doorbell: ENABLE 0.
        b.write(regs.doorbell_rptr, 0)?;
        if let IhInit::Soc21 {
            storm_client_list,
            int_flood,
            msi_storm,
        } = regs.init
        {
            // ih_v6_0_irq_init(): the storm and flood controls.
            b.update(
                storm_client_list,
                fields::CLIENT18_IS_STORM_CLIENT,
                fields::CLIENT18_IS_STORM_CLIENT,
            )?;
            b.update(
                int_flood,
                fields::FLOOD_CNTL_ENABLE,
                fields::FLOOD_CNTL_ENABLE,
            )?;
            b.update(
                msi_storm,
                fields::MSI_STORM_DELAY,
                fields::set(0, fields::MSI_STORM_DELAY, 3),
            )?;
        }
        // *_toggle_ring_interrupts(true), ENABLE_INTR left clear.
        let mut v = fields::set(live(&b, regs.rb_cntl)?, fields::RB_ENABLE, 1);
        if let IhInit::Vega20 { .. } = regs.init {
            v = fields::set(v, ih_v4_4_2::RB_GPU_TS_ENABLE, 1);
        }
        v = fields::set(v, fields::WPTR_OVERFLOW_CLEAR, 0);
        b.write(regs.rb_cntl, v)?;
        b.write(regs.rb_cntl, fields::set(v, fields::WPTR_OVERFLOW_CLEAR, 1))?;
        b.write(regs.rb_cntl, v)?;
        Ok(IhRing {
            mem,
            regs,
            bases: *bases,
            rptr: 0,
            overflows: 0,
        })
    }

    /// The ring's MC address and size in bytes.
    pub fn ring(&self) -> (u64, usize) {
        (self.mem.mc, self.mem.ring_bytes)
    }

    /// Overflows seen so far.
    pub fn overflows(&self) -> u32 {
        self.overflows
    }

    fn mask(&self) -> u32 {
        (self.mem.ring_bytes as u32 - 1) & fields::OFFSET
    }

    /// `ih_v6_0_get_wptr()`.
    fn get_wptr<B: RegisterBus + ?Sized>(
        &mut self,
        b: &Block<'_, B>,
    ) -> Result<(u32, bool), IhError> {
        let regs = self.regs;
        let mut wptr = self.mem.read(self.mem.ring_bytes);
        if wptr & fields::RB_OVERFLOW == 0 {
            return Ok((wptr & self.mask(), false));
        }
        wptr = live(b, regs.rb_wptr)?;
        if wptr & fields::RB_OVERFLOW == 0 {
            return Ok((wptr & self.mask(), false));
        }
        wptr &= !fields::RB_OVERFLOW;
        // Restart at the oldest entry not overwritten.
        self.rptr = wptr.wrapping_add(iv::BYTES) & self.mask();
        self.overflows += 1;
        let c = live(b, regs.rb_cntl)?;
        b.write(regs.rb_cntl, fields::set(c, fields::WPTR_OVERFLOW_CLEAR, 1))?;
        b.write(regs.rb_cntl, fields::set(c, fields::WPTR_OVERFLOW_CLEAR, 0))?;
        Ok((wptr & self.mask(), true))
    }

    /// Decodes every entry the IH wrote since the last poll, calling `f`
    /// with each, then hands the entries back (`IH_RB_RPTR`). At most one
    /// ring's worth per call.
    pub fn poll<B: RegisterBus + ?Sized>(
        &mut self,
        bus: &B,
        mut f: impl FnMut(Interrupt),
    ) -> Result<Polled, IhError> {
        let b = Block::new(bus, self.bases);
        let (wptr, overflowed) = self.get_wptr(&b)?;
        let mut out = Polled {
            entries: 0,
            overflowed,
        };
        let limit = self.mem.ring_bytes as u32 / iv::BYTES;
        while self.rptr != wptr && out.entries < limit {
            let mut w = [0u32; 8];
            for (i, d) in w.iter_mut().enumerate() {
                *d = self.mem.read(self.rptr as usize + 4 * i);
            }
            f(self.regs.decode(&IvEntry::decode(&w)));
            self.rptr = self.rptr.wrapping_add(iv::BYTES) & self.mask();
            out.entries += 1;
        }
        if out.entries > 0 || overflowed {
            // ih_v6_0_set_rptr() without a doorbell; the copy after the
            // write pointer, as `*ih->rptr_cpu` keeps it.
            self.mem.write(self.mem.ring_bytes + 4, self.rptr);
            b.write(self.regs.rb_rptr, self.rptr)?;
        }
        Ok(out)
    }

    /// Polls until at least one entry arrived, calling `pause` between
    /// looks, for at most `bound_ns` of `clock`.
    pub fn wait<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
        &mut self,
        bus: &B,
        clock: &C,
        bound_ns: u64,
        pause: &mut dyn FnMut(),
        mut f: impl FnMut(Interrupt),
    ) -> Result<Polled, IhError> {
        let start = clock.now_ns();
        loop {
            let p = self.poll(bus, &mut f)?;
            if p.entries > 0 {
                return Ok(p);
            }
            if clock.now_ns().saturating_sub(start) >= bound_ns {
                return Err(IhError::Timeout { bound_ns });
            }
            pause();
        }
    }

    /// `ih_v6_0_hw_fini()` → `ih_v6_0_irq_disable()`: the IH stops
    /// writing; the memory may go after this.
    pub fn disable<B: RegisterBus + ?Sized>(self, bus: &B) -> Result<u32, IhError> {
        irq_disable(bus, &self.bases, self.regs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rb_cntl_is_what_ih_v6_0_rb_cntl_builds_for_a_256k_ring() {
        // MC_SPACE 4 (bits 30:28), WPTR_OVERFLOW_CLEAR (31), OVERFLOW_ENABLE
        // (16), RB_SIZE 16 (bits 5:1), WRITEBACK (8), MC_SNOOP (20).
        let v = rb_cntl(0, 256 << 10);
        assert_eq!(
            v,
            0x4000_0000 | 0x8000_0000 | 0x1_0000 | (16 << 1) | 0x100 | 0x10_0000
        );
    }

    #[test]
    fn a_fault_entry_decodes_as_gmc_v11_0_reads_it() {
        // client GFX, src 0, ring_id 0x08, vmid 8; page 0x4_0000_0000 >> 12.
        let w = [
            0x0a | 0x08 << 16 | 8 << 24,
            0x1234,
            0x5,
            0x0007_0001,
            0x0000_0000,
            0x4 | 0x20,
            0,
            0,
        ];
        let e = IvEntry::decode(&w);
        assert_eq!(e.pasid, 1);
        assert_eq!(e.node_id, 7);
        assert_eq!(e.timestamp, 0x5_0000_1234);
        match Interrupt::from_entry(&e) {
            Interrupt::VmFault(v) => {
                assert_eq!(v.addr, 0x4000_0000_0000);
                assert_eq!(v.vmid, 8);
                assert!(v.write && v.not_present && !v.retry);
                assert_eq!(v.hub, FaultHub::Gfx);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_sq_error_names_its_kind_and_queue() {
        // ring_id: ME 1 (bits 3:2), pipe 2, queue 3 (bits 6:4).
        let ring_id = 1 << 2 | 2 | 3 << 4;
        let w = [
            0x0a | 239 << 8 | ring_id << 16 | 5 << 24,
            0,
            0,
            0,
            1 << 21 | 3 << 27,
            2 << 6,
            0,
            0,
        ];
        match Interrupt::from_entry(&IvEntry::decode(&w)) {
            Interrupt::Sq(s) => {
                assert_eq!(s.kind, SqKind::IllegalInstruction);
                assert_eq!((s.me, s.pipe, s.queue, s.vmid, s.wave_id), (1, 2, 3, 5, 3));
            }
            other => panic!("{other:?}"),
        }
    }
}
