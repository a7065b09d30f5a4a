//! The L2 protection-fault registers: what the hub latched about the
//! first translation it could not complete.
//!
//! Linux reads `*_L2_PROTECTION_FAULT_STATUS` (`_LO32` on gfx12) in
//! `gmc_v11_0_process_interrupt()`/`gmc_v12_0_process_interrupt()`, then
//! clears it with `WREG32_P(hub->vm_l2_pro_fault_cntl, 1, ~1)`: bit 0 of
//! `*_L2_PROTECTION_FAULT_CNTL`, `CLEAR_PROTECTION_FAULT_STATUS_ADDR`.
//! The address comes from the interrupt vector there; here it is read
//! from `*_L2_PROTECTION_FAULT_ADDR_LO32/HI32` (the 4 KiB page number,
//! 36 bits). What each `PERMISSION_FAULTS` and `WALKER_ERROR` value means
//! is not in the public headers; they are reported raw.

use super::{HubError, read_live};
use crate::bus::{Block, RegisterBus};
use crate::ip::Generation;
use crate::regs::hub::HubRegs;
use crate::regs::{IpBases, gc_11_0_0 as gc, gc_12_0_0 as gc12};

/// A decoded protection fault, as the hub latched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmFault {
    /// Which hub latched it (`HubRegs::name`).
    pub hub: &'static str,
    /// Faulting VA, page aligned (`LOGICAL_PAGE_ADDR_HI4:LO32 << 12`).
    pub addr: u64,
    pub vmid: u8,
    /// UTCL2 client id (`CID`): which engine made the access.
    pub cid: u16,
    /// `RW`: set for a write.
    pub write: bool,
    pub atomic: bool,
    /// `PERMISSION_FAULTS`, raw (4 bits).
    pub permission_faults: u8,
    /// `WALKER_ERROR`, raw (3 bits).
    pub walker_error: u8,
    pub mapping_error: bool,
    /// `MORE_FAULTS`: further faults arrived after this one latched.
    pub more_faults: bool,
    pub prt: bool,
    /// The status word as read.
    pub status: u32,
}

impl core::fmt::Display for VmFault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} protection fault at {:#x}: VMID {}, CID {:#x}, RW {} ({}), ATOMIC {}, \
             PERMISSION_FAULTS {:#x}, WALKER_ERROR {:#x}, MAPPING_ERROR {}, MORE_FAULTS {}, \
             PRT {} (status {:#010x})",
            self.hub,
            self.addr,
            self.vmid,
            self.cid,
            u8::from(self.write),
            if self.write { "write" } else { "read" },
            u8::from(self.atomic),
            self.permission_faults,
            self.walker_error,
            u8::from(self.mapping_error),
            u8::from(self.more_faults),
            u8::from(self.prt),
            self.status
        )
    }
}

/// Reads the hub's latched fault; `None` when the status word is zero
/// (nothing latched since the last clear).
pub fn read_fault<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    hub: &HubRegs,
) -> Result<Option<VmFault>, HubError> {
    let r = Block::new(bus, *bases);
    let status = read_live(&r, hub.fault_status, 0, 0)?;
    if status == 0 {
        return Ok(None);
    }
    let lo = gc::GcvmL2ProtectionFaultAddrLo32::from_bits(read_live(&r, hub.fault_addr_lo, 0, 0)?);
    let hi = gc::GcvmL2ProtectionFaultAddrHi32::from_bits(read_live(&r, hub.fault_addr_hi, 0, 0)?);
    let page = u64::from(hi.logical_page_addr_hi4()) << 32 | u64::from(lo.logical_page_addr_lo32());
    let addr = page << 12;
    // The two generations' status words name the same fields at different
    // positions; each layout is checked against its own header.
    macro_rules! decode {
        ($s:expr) => {{
            let s = $s;
            VmFault {
                hub: hub.name,
                addr,
                vmid: s.vmid(),
                cid: s.cid(),
                write: s.rw(),
                atomic: s.atomic(),
                permission_faults: s.permission_faults(),
                walker_error: s.walker_error(),
                mapping_error: s.mapping_error(),
                more_faults: s.more_faults(),
                prt: s.prt(),
                status,
            }
        }};
    }
    let f = match hub.generation {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(crate::ip::Unsupported::new(
                "GFXHUB 1.2 fault status layout",
                hub.generation,
            )
            .into());
        }
        Generation::Gfx11 => decode!(gc::GcvmL2ProtectionFaultStatus::from_bits(status)),
        Generation::Gfx12 => decode!(gc12::GcvmL2ProtectionFaultStatusLo32::from_bits(status)),
    };
    Ok(Some(f))
}

/// Clears the latched fault as `gmc_v11_0_process_interrupt()` does: a
/// read-modify-write setting `CLEAR_PROTECTION_FAULT_STATUS_ADDR`.
pub fn clear_fault<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    hub: &HubRegs,
) -> Result<(), HubError> {
    let r = Block::new(bus, *bases);
    let v = gc::GcvmL2ProtectionFaultCntl::from_bits(read_live(&r, hub.fault_cntl, 0, 0)?)
        .with_clear_protection_fault_status_addr(true);
    Ok(r.write(hub.fault_cntl, v.into_bits())?)
}
