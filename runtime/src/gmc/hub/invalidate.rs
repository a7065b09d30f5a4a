//! TLB invalidation through a hub's invalidation engine, by registers.
//!
//! The VM L1 TLBs and the L2 cache keep translations and page-directory
//! entries after the tables change, so every change the hub must see
//! (VMID0's tables after `gart_enable`, a user context pointed at new
//! tables) is followed by an invalidation. This is the direct path of
//! `gmc_v11_0_flush_gpu_tlb()` and `gmc_v12_0_flush_vm_hub()`, which
//! Linux takes before KIQ/MES run; once they do, Linux hands the same
//! request/ACK pair to the KIQ (`amdgpu_gmc_fw_reg_write_reg_wait()`).
//! barebell always writes the registers itself.
//!
//! Steps, in Linux's order:
//! 1. on a hub that uses the semaphore (the MMHUB, bare metal), read the
//!    engine's `*_INVALIDATE_ENGn_SEM` until it reads 1: that read is the
//!    acquire. Linux does this so the ACK is not lost if the hub power
//!    gates mid-flush;
//! 2. write the request (`*_get_invalidate_req()`: the VMID bit, the flush
//!    type, and invalidate L2 PTEs, PDE0..2 and L1 PTEs);
//! 3. poll `*_INVALIDATE_ENGn_ACK` for the VMID's bit;
//! 4. release the semaphore by writing 0;
//! 5. on a hub with `vm_l2_bank_select_reserved_cid2` (both MMHUBs), set
//!    bit 25 of `*_L2_BANK_SELECT_RESERVED_CID2`
//!    (`RESERVED_CACHE_PRIVATE_INVALIDATION`) and read it back.
//!
//! Where Linux only logs (semaphore or ACK timeout) this returns a typed
//! error; a semaphore that never arrives means no request was written.
//! The semaphore is released even when the ACK times out, as in Linux.
//! Linux flushes HDP before all this; callers whose tables went through
//! the BAR call [`crate::nbio::flush_hdp`] first (the model paths write
//! the tables directly and have no HDP).

use super::HubRegs;
use crate::bus::{ALL_ONES, Block, BlockError, RegCondition, RegisterBus, WaitError, poll};
use crate::regs::gc_11_0_0::GcvmInvalidateReq;
use crate::regs::{IpBases, Reg};
use crate::time::Clock;

/// Linux's GART engine: `gmc_v11_0_flush_gpu_tlb()` and
/// `gmc_v12_0_flush_vm_hub()` "Use register 17 for GART".
pub const GART_ENGINE: u32 = 17;
/// Engines per hub (`*_INVALIDATE_ENG0..17`).
pub const ENGINES: u32 = 18;
/// `adev->usec_timeout`: Linux polls the semaphore and the ACK 100 000
/// times, 1 µs apart.
pub const INVALIDATE_TIMEOUT_NS: u64 = 100_000_000;
/// `*_INVALIDATE_ENG0_SEM__SEMAPHORE_MASK`: reads 1 once acquired.
pub const SEMAPHORE: u32 = 0x1;
/// `*_INVALIDATE_ENG0_ACK__PER_VMID_INVALIDATE_ACK_MASK`.
pub const PER_VMID_ACK: u32 = 0xFFFF;
/// `*_L2_BANK_SELECT_RESERVED_CID2__RESERVED_CACHE_PRIVATE_INVALIDATION_MASK`
/// (bit 25, as the comment in both flush functions says).
pub const PRIVATE_INVALIDATION: u32 = 1 << 25;

/// Why an invalidation did not complete. Registers are named by their
/// engine-0 name (what the header defines) and the engine number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidateError {
    /// Engines are 0..=17, VMIDs 0..=15, flush types 0..=7.
    BadArgument {
        engine: u32,
        vmid: u32,
        flush_type: u8,
    },
    /// A register of `engine` is not in the discovered bases of the hub's
    /// block.
    Register { error: BlockError, engine: u32 },
    /// The semaphore never read 1; no request was written.
    SemaphoreTimeout {
        register: &'static str,
        engine: u32,
        waited_ns: u64,
    },
    /// The VMID's ACK bit never rose (the semaphore, if taken, was
    /// released).
    AckTimeout {
        register: &'static str,
        engine: u32,
        vmid: u32,
        waited_ns: u64,
        last: u32,
    },
    /// A register read as all-ones.
    DeviceGone { register: &'static str, engine: u32 },
}

impl core::fmt::Display for InvalidateError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            InvalidateError::BadArgument {
                engine,
                vmid,
                flush_type,
            } => write!(
                f,
                "invalidate: engine {engine} (0..=17), vmid {vmid} (0..=15), flush type {flush_type} (0..=7)"
            ),
            InvalidateError::Register { error, engine } => write!(f, "{error} (engine {engine})"),
            InvalidateError::SemaphoreTimeout {
                register,
                engine,
                waited_ns,
            } => write!(
                f,
                "{register} (engine {engine}) not acquired after {waited_ns} ns"
            ),
            InvalidateError::AckTimeout {
                register,
                engine,
                vmid,
                waited_ns,
                last,
            } => write!(
                f,
                "{register} (engine {engine}) bit {vmid} not set after {waited_ns} ns (last {last:#x})"
            ),
            InvalidateError::DeviceGone { register, engine } => {
                write!(f, "{register} (engine {engine}) read as all-ones")
            }
        }
    }
}

/// The request `*_get_invalidate_req()` composes for `vmid` on `hub`.
/// All four headers lay the request out alike (checked per header by
/// `gc_11_0_0::VM_FIELD_FACTS` and `INVALIDATE_REQ_FIELD_FACTS`).
pub fn request(hub: &HubRegs, vmid: u32, flush_type: u8) -> u32 {
    let flush_type = if hub.legacy_flush_only { 0 } else { flush_type };
    GcvmInvalidateReq::new()
        .with_per_vmid_invalidate_req(1u16.checked_shl(vmid).unwrap_or(0))
        .with_flush_type(flush_type & 0x7)
        .with_invalidate_l2_ptes(true)
        .with_invalidate_l2_pde0(true)
        .with_invalidate_l2_pde1(true)
        .with_invalidate_l2_pde2(true)
        .with_invalidate_l1_ptes(true)
        .with_clear_protection_fault_status_addr(false)
        .into_bits()
}

/// Invalidates `vmid`'s translations on `hub` through engine `engine`
/// and waits, bounded, for the ACK (see the module docs for the steps).
/// `bases` are the discovered bases of the hub's block (`hub.hw_id`).
pub fn invalidate<B, C>(
    bus: &B,
    clock: &C,
    bases: &IpBases,
    hub: &HubRegs,
    engine: u32,
    vmid: u32,
    flush_type: u8,
) -> Result<(), InvalidateError>
where
    B: RegisterBus + ?Sized,
    C: Clock + ?Sized,
{
    if engine >= ENGINES || vmid > 15 || flush_type > 7 {
        return Err(InvalidateError::BadArgument {
            engine,
            vmid,
            flush_type,
        });
    }
    let b = Block::new(bus, *bases);
    let no = |error| InvalidateError::Register { error, engine };
    let at = |r: Reg| b.offset_nth(r, engine, hub.eng_distance()).map_err(no);
    let req_at = at(hub.inv_eng0_req)?;
    let ack_at = at(hub.inv_eng0_ack)?;
    let sem_at = at(hub.inv_eng0_sem)?;
    let gone = |r: Reg| InvalidateError::DeviceGone {
        register: r.name,
        engine,
    };

    if hub.use_semaphore {
        let cond = RegCondition {
            what: hub.inv_eng0_sem.name,
            byte_offset: sem_at,
            mask: SEMAPHORE,
            want: SEMAPHORE,
        };
        poll(bus, clock, cond, INVALIDATE_TIMEOUT_NS).map_err(|e| match e {
            WaitError::Timeout { waited_ns, .. } => InvalidateError::SemaphoreTimeout {
                register: hub.inv_eng0_sem.name,
                engine,
                waited_ns,
            },
            WaitError::DeviceGone { .. } => gone(hub.inv_eng0_sem),
        })?;
    }

    bus.write32(req_at, request(hub, vmid, flush_type));
    let cond = RegCondition {
        what: hub.inv_eng0_ack.name,
        byte_offset: ack_at,
        mask: 1 << vmid,
        want: 1 << vmid,
    };
    let acked = poll(bus, clock, cond, INVALIDATE_TIMEOUT_NS).map_err(|e| match e {
        WaitError::Timeout {
            waited_ns, last, ..
        } => InvalidateError::AckTimeout {
            register: hub.inv_eng0_ack.name,
            engine,
            vmid,
            waited_ns,
            last,
        },
        WaitError::DeviceGone { .. } => gone(hub.inv_eng0_ack),
    });

    if hub.use_semaphore {
        bus.write32(sem_at, 0);
    }
    acked?;

    if let Some(cid2) = hub.l2_bank_select_reserved_cid2 {
        let cid2_at = b.offset(cid2).map_err(no)?;
        let v = bus.read32(cid2_at);
        if v == ALL_ONES {
            return Err(gone(cid2));
        }
        bus.write32(cid2_at, v | PRIVATE_INVALIDATION);
        // Linux reads it back "to ensure invalidation is done".
        if bus.read32(cid2_at) == ALL_ONES {
            return Err(gone(cid2));
        }
    }
    Ok(())
}

/// For one hub header: the engine stride over all 18 semaphores,
/// requests and ACKs, and the masks of the fields the flush reads or
/// sets.
macro_rules! invalidate_facts {
    ($h:literal, $sh:literal, $vm:literal, $t:expr) => {
        [
            barebell_facts::Fact::constant(
                $h,
                concat!(
                    "reg",
                    $vm,
                    "_INVALIDATE_ENG17_SEM - reg",
                    $vm,
                    "_INVALIDATE_ENG0_SEM"
                ),
                (17 * $t.eng_distance()) as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                concat!(
                    "reg",
                    $vm,
                    "_INVALIDATE_ENG17_REQ - reg",
                    $vm,
                    "_INVALIDATE_ENG0_REQ"
                ),
                (17 * $t.eng_distance()) as u64,
            ),
            barebell_facts::Fact::constant(
                $h,
                concat!(
                    "reg",
                    $vm,
                    "_INVALIDATE_ENG17_ACK - reg",
                    $vm,
                    "_INVALIDATE_ENG0_ACK"
                ),
                (17 * $t.eng_distance()) as u64,
            ),
            barebell_facts::Fact::constant(
                $sh,
                concat!($vm, "_INVALIDATE_ENG0_SEM__SEMAPHORE_MASK"),
                SEMAPHORE as u64,
            ),
            barebell_facts::Fact::constant(
                $sh,
                concat!($vm, "_INVALIDATE_ENG0_ACK__PER_VMID_INVALIDATE_ACK_MASK"),
                PER_VMID_ACK as u64,
            ),
            barebell_facts::Fact::constant(
                $sh,
                concat!(
                    $vm,
                    "_L2_BANK_SELECT_RESERVED_CID2__RESERVED_CACHE_PRIVATE_INVALIDATION_MASK"
                ),
                PRIVATE_INVALIDATION as u64,
            ),
        ]
    };
}

/// Invalidation-engine strides and field masks of all four hubs.
pub const FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    invalidate_facts!(
        "gc_11_0_0_offset.h",
        "gc_11_0_0_sh_mask.h",
        "GCVM",
        super::GFXHUB_3_0
    ),
    invalidate_facts!(
        "mmhub_3_0_0_offset.h",
        "mmhub_3_0_0_sh_mask.h",
        "MMVM",
        super::MMHUB_3_0_0
    ),
    invalidate_facts!(
        "gc_12_0_0_offset.h",
        "gc_12_0_0_sh_mask.h",
        "GCVM",
        super::GFXHUB_12_0
    ),
    invalidate_facts!(
        "mmhub_4_1_0_offset.h",
        "mmhub_4_1_0_sh_mask.h",
        "MMVM",
        super::MMHUB_4_1_0
    ),
);
