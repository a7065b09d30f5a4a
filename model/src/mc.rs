//! The GPU's memory-controller (MC) address space as a hub client sees
//! it: what a PSP DMA to an MC address actually reaches.
//!
//! A real client never touches memory by host address. Its MC address is
//! decoded by the VM L2 of its hub with VMID0's context, as the runtime
//! programmed it ([`crate::hub::HubModel::vmid0`]):
//! - inside the system aperture (`*MC_VM_SYSTEM_APERTURE_LOW/HIGH_ADDR`,
//!   which `*_init_system_aperture_regs()` set to the FB range when the
//!   AGP aperture is empty, as barebell leaves it), the address is VRAM:
//!   offset = MC address − aperture base;
//! - inside VMID0's `PAGE_TABLE_START/END` range (the GART), the runtime's
//!   own VMID0 tables are walked ([`crate::hub::HubModel::translate_as`] →
//!   [`crate::gmc`]), read from modelled VRAM where the runtime placed
//!   them. A PTE with the SYSTEM bit names a bus address, which the IOMMU
//!   view of host memory resolves; without it, the address is a VRAM
//!   physical address (Linux's `amdgpu_gmc_vram_mc2pa()` form: VRAM
//!   offset + `*MC_VM_FB_OFFSET`, [`crate::hub::HubModel::fb_offset`]);
//!   table addresses in PDEs and the context base are physical the same
//!   way;
//! - anything else, and any walk that fails, is a VM fault: the hub model
//!   latches it in `*_L2_PROTECTION_FAULT_STATUS` and `_ADDR_LO32/HI32`
//!   with this client's id (the first fault sticks; later ones set
//!   MORE_FAULTS) and the access does not happen.
//!
//! The PSP is an MMHUB client (`mmhub_v3_0.c` and `mmhub_v4_1_0.c` name
//! client id 6 "MP0"); `gmc_v11_0_gart_enable()` programs the same VMID0
//! GART on both hubs, and the rig puts the PSP behind the MMHUB model.
//!
//! Model choices: VRAM the model does not back reads as zeros and drops
//! writes (real VRAM holds whatever was there); a bus address the IOMMU
//! does not map is refused without a VM fault (on a host that is an IOMMU
//! fault, outside the GPU). Only VMID0 is decoded (the PSP uses no other).

use crate::dma::{Dma, DmaFault};
use crate::gmc::Access;
use crate::hub::{HubModel, HubRefusal};
use crate::log::Keep;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};
use spin::Mutex;

/// `mmhub_client_ids_v3_0_0[6]` / `mmhub_client_ids_v4_1_0[6]`: MP0,
/// the PSP.
pub const CID_MP0: u16 = 6;

/// Where a translated access lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A VRAM physical address (offset into VRAM).
    Vram(u64),
    /// A bus address, resolved by the IOMMU.
    System(u64),
}

/// Why an access did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McFaultKind {
    /// The hub refused or the walk faulted (latched by the hub when the
    /// walk faulted).
    Vm(HubRefusal),
    /// A gfx9 hub (GC 9.4.3) refused or its walk faulted (latched by the
    /// hub when the walk faulted).
    VmV9(crate::hub_v9::HubV9Refusal),
    /// Outside the system aperture and outside VMID0's range (latched as
    /// a mapping error).
    Unmapped,
    /// The PTE named a bus address the IOMMU does not map.
    Iommu(DmaFault),
    /// A VRAM PTE's physical address lies below `*MC_VM_FB_OFFSET`, the
    /// physical address of VRAM offset 0.
    BelowFbOffset { pa: u64, fb_offset: u64 },
    /// On an XGMI hive member: the physical address lies outside this
    /// GPU's own segment, in node `node`'s (or in no node's). Hardware
    /// would reach that GPU's memory over XGMI; the model has no peers and
    /// refuses (model convention).
    PeerMemory { pa: u64, node: Option<u8> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McFault {
    pub addr: u64,
    pub access: Access,
    pub what: &'static str,
    pub kind: McFaultKind,
}

impl core::fmt::Display for McFaultKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            McFaultKind::Vm(r) => write!(f, "the hub refused ({r:?})"),
            McFaultKind::VmV9(r) => write!(f, "the gfx9 hub refused ({r:?})"),
            McFaultKind::Unmapped => {
                write!(f, "outside the system aperture and VMID0's range")
            }
            McFaultKind::Iommu(e) => write!(f, "IOMMU: {e}"),
            McFaultKind::BelowFbOffset { pa, fb_offset } => write!(
                f,
                "VRAM physical address {pa:#x} is below MC_VM_FB_OFFSET {fb_offset:#x}"
            ),
            McFaultKind::PeerMemory { pa, node: Some(n) } => write!(
                f,
                "physical address {pa:#x} is in XGMI node {n}'s memory, not this GPU's (no peer is modelled)"
            ),
            McFaultKind::PeerMemory { pa, node: None } => {
                write!(f, "physical address {pa:#x} is in no XGMI node's memory")
            }
        }
    }
}

impl core::fmt::Display for McFault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} ({:?} at MC {:#x}): {}",
            self.what, self.access, self.addr, self.kind
        )
    }
}

/// What a VMID0 walk gave: where `addr` lands and how many bytes the
/// TLB entry that served it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McWalk {
    pub pa: u64,
    pub system: bool,
    pub tlb_bytes: u64,
}

/// Why a hub did not translate for an MC client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McRefusal {
    /// Outside VMID0's `PAGE_TABLE_START/END` range.
    OutOfRange,
    /// A gfx11/gfx12 hub refused or its walk faulted.
    Hub(HubRefusal),
    /// A gfx9 hub (GC 9.4.3's GFXHUB v1.2 / MMHUB 1.8) refused or its
    /// walk faulted.
    HubV9(crate::hub_v9::HubV9Refusal),
}

/// The hub an MC client sits behind, as the MC decode needs it: the
/// system aperture, VMID0's walk, and `*MC_VM_FB_OFFSET`. Implemented by
/// the gfx11/gfx12 hub model ([`HubModel`]) and the gfx9 one
/// ([`crate::hub_v9::HubV9Model`]).
pub trait McHub: Send + Sync + core::fmt::Debug {
    /// The system aperture as programmed, `(first, last)` byte, once the
    /// hub's context 0 is up.
    fn system_aperture(&self) -> Option<(u64, u64)>;
    /// VMID0's translation of `addr` over `vram` (VRAM backing at
    /// offsets), latching a fault the walk raises as client `cid`.
    fn walk0(&self, vram: &Dma, addr: u64, access: Access, cid: u16) -> Result<McWalk, McRefusal>;
    /// `*MC_VM_FB_OFFSET` in bytes: the physical address of VRAM offset 0.
    fn fb_offset(&self) -> u64;
    /// The GPU's place in an XGMI hive, as its hub's registers give it;
    /// `None` for a GPU on its own.
    fn xgmi(&self) -> Option<crate::hub_v9::XgmiWindow> {
        None
    }
    /// The physical address of this GPU's own VRAM offset 0:
    /// [`McHub::fb_offset`] plus its node's segment in a hive.
    fn vram_pa_base(&self) -> u64 {
        self.fb_offset() + self.xgmi().map_or(0, |x| x.node_offset())
    }
}

/// VRAM physical address `pa` as an offset into this GPU's own VRAM, or
/// why it is not one: below `MC_VM_FB_OFFSET`, or (a hive member) in
/// another node's segment.
pub fn local_vram(hub: &dyn McHub, pa: u64) -> Result<u64, McFaultKind> {
    let base = hub.vram_pa_base();
    let fb_offset = hub.fb_offset();
    match (pa.checked_sub(base), hub.xgmi()) {
        (Some(off), None) => Ok(off),
        (Some(off), Some(x)) if off < x.segment => Ok(off),
        (_, Some(x)) => Err(McFaultKind::PeerMemory {
            pa,
            node: pa.checked_sub(fb_offset).and_then(|o| x.node_at(o)),
        }),
        (None, None) => Err(McFaultKind::BelowFbOffset { pa, fb_offset }),
    }
}

impl McHub for HubModel {
    fn system_aperture(&self) -> Option<(u64, u64)> {
        let v = self.vmid0()?;
        (v.fb_start != 0 && v.fb_start <= v.fb_end).then_some((v.fb_start, v.fb_end))
    }
    fn walk0(&self, vram: &Dma, addr: u64, access: Access, cid: u16) -> Result<McWalk, McRefusal> {
        match self.translate_as(vram, addr, access, cid) {
            Ok(t) => Ok(McWalk {
                pa: t.pa,
                system: t.system,
                tlb_bytes: t.tlb_bytes,
            }),
            Err(HubRefusal::OutOfRange { .. }) => Err(McRefusal::OutOfRange),
            Err(r) => Err(McRefusal::Hub(r)),
        }
    }
    fn fb_offset(&self) -> u64 {
        HubModel::fb_offset(self)
    }
}

impl McHub for crate::hub_v9::HubV9Model {
    /// `MC_VM_SYSTEM_APERTURE_LOW/HIGH_ADDR` in 256 KiB units
    /// (`gfxhub_v1_2_xcc_init_system_aperture_regs()`,
    /// `mmhub_v1_8_init_system_aperture_regs()` write `>> 18`).
    fn system_aperture(&self) -> Option<(u64, u64)> {
        let o = self.offsets;
        let low = u64::from(self.reg(o.sys_aperture_low)) << 18;
        let high = (u64::from(self.reg(o.sys_aperture_high)) << 18) | 0x3_FFFF;
        (low != 0 && low <= high).then_some((low, high))
    }

    fn walk0(
        &self,
        vram: &Dma,
        addr: u64,
        access: crate::gmc::Access,
        _cid: u16,
    ) -> Result<McWalk, McRefusal> {
        let a = match access {
            crate::gmc::Access::Read => crate::decode::pte_v9::AccessV9::Read,
            crate::gmc::Access::Write => crate::decode::pte_v9::AccessV9::Write,
            crate::gmc::Access::Execute => crate::decode::pte_v9::AccessV9::Execute,
        };
        match self.translate(vram, McHub::vram_pa_base(self), 0, addr, a) {
            Ok(t) => Ok(McWalk {
                pa: t.pa,
                system: t.system,
                tlb_bytes: t.page_bytes.max(4096),
            }),
            Err(crate::hub_v9::HubV9Refusal::Fault(
                crate::decode::pte_v9::WalkFaultV9::OutOfRange,
            )) => Err(McRefusal::OutOfRange),
            Err(r) => Err(McRefusal::HubV9(r)),
        }
    }

    /// `MC_VM_FB_OFFSET` in 16 MiB units (`mmhub_v1_8_get_mc_fb_offset()`
    /// shifts it by 24).
    fn fb_offset(&self) -> u64 {
        u64::from(self.reg(self.offsets.fb_offset)) << 24
    }

    fn xgmi(&self) -> Option<crate::hub_v9::XgmiWindow> {
        crate::hub_v9::HubV9Model::xgmi(self)
    }
}

/// One client's view of the MC address space.
#[derive(Debug)]
pub struct Mc {
    hub: Arc<dyn McHub>,
    vram: Dma,
    iommu: Dma,
    cid: u16,
    log: Mutex<Vec<McFault>>,
}

impl Mc {
    /// A client with UTCL2 client id `cid` behind `hub`, with no VRAM
    /// backed and nothing in the IOMMU yet.
    pub fn new<H: McHub + 'static>(hub: Arc<H>, cid: u16) -> Self {
        Mc {
            hub,
            vram: Dma::default(),
            iommu: Dma::default(),
            cid,
            log: Mutex::new(Vec::new()),
        }
    }

    /// Backs `len` bytes of VRAM at physical `offset` with host memory.
    ///
    /// # Safety
    /// As [`Dma::map`], for the host range.
    pub unsafe fn back_vram(&mut self, offset: u64, host: *mut u8, len: u64) {
        // SAFETY: forwarded contract.
        unsafe { self.vram.map_at(offset, host, len) }
    }

    /// Maps `len` host bytes at bus address `bus` in the IOMMU.
    ///
    /// # Safety
    /// As [`Dma::map`], for the host range.
    pub unsafe fn map_bus(&mut self, bus: u64, host: *mut u8, len: u64) {
        // SAFETY: forwarded contract.
        unsafe { self.iommu.map_at(bus, host, len) }
    }

    /// Every refused access, in order.
    pub fn faults(&self) -> Vec<McFault> {
        self.log.lock().clone()
    }

    /// The system aperture as programmed, `(first, last)` byte, once the
    /// hub's context 0 is up.
    fn aperture(&self) -> Option<(u64, u64)> {
        self.hub.system_aperture()
    }

    /// Decodes `addr` for `access`: where it lands and how many bytes
    /// from it are contiguous there. Faults are latched and logged.
    pub fn translate(
        &self,
        addr: u64,
        access: Access,
        what: &'static str,
    ) -> Result<(Target, u64), McFault> {
        let fault = |kind| McFault {
            addr,
            access,
            what,
            kind,
        };
        if let Some((low, high)) = self.aperture()
            && (low..=high).contains(&addr)
        {
            // The aperture maps the FB (on a hive member, every node's
            // segment, `FB_LOCATION_BASE/TOP`) onto physical addresses
            // from `MC_VM_FB_OFFSET`; this GPU's VRAM is its own segment.
            let pa = (addr - low).saturating_add(self.hub.fb_offset());
            return match local_vram(&*self.hub, pa) {
                Ok(off) => Ok((Target::Vram(off), high - addr + 1)),
                Err(k) => Err(self.logged(fault(k))),
            };
        }
        match self.hub.walk0(&self.vram, addr, access, self.cid) {
            Ok(t) => {
                let run = t.tlb_bytes - (addr & (t.tlb_bytes - 1));
                let target = if t.system {
                    Target::System(t.pa)
                } else {
                    // Physical → VRAM offset (`amdgpu_gmc_vram_mc2pa()`
                    // added FB_OFFSET, and on a hive member its node's
                    // segment, going the other way).
                    match local_vram(&*self.hub, t.pa) {
                        Ok(off) => Target::Vram(off),
                        Err(k) => return Err(self.logged(fault(k))),
                    }
                };
                Ok((target, run))
            }
            Err(McRefusal::OutOfRange) => Err(self.logged(fault(McFaultKind::Unmapped))),
            Err(McRefusal::Hub(r)) => Err(self.logged(fault(McFaultKind::Vm(r)))),
            Err(McRefusal::HubV9(r)) => Err(self.logged(fault(McFaultKind::VmV9(r)))),
        }
    }

    /// The physical address of this GPU's own VRAM offset 0
    /// ([`McHub::vram_pa_base`]).
    pub fn vram_pa_base(&self) -> u64 {
        self.hub.vram_pa_base()
    }

    /// The VRAM backing's dword at byte `offset`, for a block that keeps
    /// state in VRAM (the PSP's TMR).
    pub fn vram_u32(&self, offset: u64) -> Option<&AtomicU32> {
        self.vram.u32(offset, "VRAM").ok()
    }

    /// Logs a refused access (the hub has latched what it latches).
    fn logged(&self, f: McFault) -> McFault {
        self.log.lock().keep(f);
        f
    }

    /// Reads `out.len()` bytes at `addr`.
    pub fn read(&self, addr: u64, out: &mut [u8], what: &'static str) -> Result<(), McFault> {
        let mut done = 0usize;
        while done < out.len() {
            let a = addr.wrapping_add(done as u64);
            let (target, run) = self.translate(a, Access::Read, what)?;
            let n = usize::try_from(run).map_or(out.len() - done, |r| r.min(out.len() - done));
            let Some(chunk) = out.get_mut(done..done + n) else {
                break;
            };
            match target {
                Target::Vram(off) => {
                    if self.vram.read(off, chunk, what).is_err() {
                        // Partly backed: page by page, unbacked pages as
                        // zeros.
                        let mut at = 0usize;
                        while at < chunk.len() {
                            let o = off + at as u64;
                            let n = (4096 - (o & 0xFFF) as usize).min(chunk.len() - at);
                            if let Some(piece) = chunk.get_mut(at..at + n)
                                && self.vram.read(o, piece, what).is_err()
                            {
                                piece.fill(0);
                            }
                            at += n;
                        }
                    }
                }
                Target::System(bus) => {
                    if let Err(e) = self.iommu.read(bus, chunk, what) {
                        return Err(self.logged(McFault {
                            addr: a,
                            access: Access::Read,
                            what,
                            kind: McFaultKind::Iommu(e),
                        }));
                    }
                }
            }
            done += n;
        }
        Ok(())
    }

    /// Whether `len` bytes at `addr` would translate for `access`,
    /// without touching them (faults are latched as for an access).
    pub fn probe(
        &self,
        addr: u64,
        len: u64,
        access: Access,
        what: &'static str,
    ) -> Result<(), McFault> {
        let mut done = 0u64;
        while done < len {
            let a = addr.wrapping_add(done);
            let (target, run) = self.translate(a, access, what)?;
            let n = run.min(len - done);
            if let Target::System(bus) = target
                && !self.iommu.covers(bus, n)
            {
                let e = DmaFault {
                    address: bus,
                    len: n,
                    what,
                };
                return Err(self.logged(McFault {
                    addr: a,
                    access,
                    what,
                    kind: McFaultKind::Iommu(e),
                }));
            }
            done += n;
        }
        Ok(())
    }

    /// Stores one dword at `addr` with `order` (fences use Release).
    /// Writes `value` at bus address `bus`, past the VM (a client that
    /// names system memory by bus address: an IH ring with `MC_SPACE` for
    /// a bus address, `vega20_ih`'s and `ih_v6_0`'s `use_bus_addr`).
    pub fn write_bus_u32(
        &self,
        bus: u64,
        value: u32,
        order: Ordering,
        what: &'static str,
    ) -> Result<(), McFault> {
        match self.iommu.u32(bus, what) {
            Ok(cell) => {
                cell.store(value, order);
                Ok(())
            }
            Err(e) => Err(self.logged(McFault {
                addr: bus,
                access: Access::Write,
                what,
                kind: McFaultKind::Iommu(e),
            })),
        }
    }

    pub fn write_u32(
        &self,
        addr: u64,
        value: u32,
        order: Ordering,
        what: &'static str,
    ) -> Result<(), McFault> {
        let (target, _) = self.translate(addr, Access::Write, what)?;
        match target {
            Target::Vram(off) => {
                if let Ok(cell) = self.vram.u32(off, what) {
                    cell.store(value, order);
                }
                Ok(())
            }
            Target::System(bus) => match self.iommu.u32(bus, what) {
                Ok(cell) => {
                    cell.store(value, order);
                    Ok(())
                }
                Err(e) => Err(self.logged(McFault {
                    addr,
                    access: Access::Write,
                    what,
                    kind: McFaultKind::Iommu(e),
                })),
            },
        }
    }
}
