//! The VM L2 walk of the GMC, over page tables in memory the model can
//! reach (a [`Dma`] view: host memory, or modelled VRAM by offset).
//!
//! The model reads the runtime's own tables (whatever bytes it wrote),
//! entry by entry, with its own decoding of the gfx9–gfx11 format written
//! from `amdgpu_vm.h` (bit positions as plain constants, not the runtime's
//! bitfield type), so a layout slip in the runtime shows as a wrong
//! translation or a fault here.
//!
//! Faults are what the hardware would raise: an invalid entry at some
//! level, a permission the PTE does not grant, or a fragment promise the
//! table breaks (the TLB would translate the whole block from one entry,
//! so a block whose entries disagree would send accesses to the wrong
//! place; the model refuses it instead). The fault is recorded the way
//! `GCVM_L2_PROTECTION_FAULT_STATUS` / `_ADDR` would hold it — the first
//! fault sticks until cleared. [`crate::mc`] puts the walk in front of
//! every memory access the PSP model makes (VMID0, the runtime's own
//! tables) and latches what faults into the hub's
//! `*_L2_PROTECTION_FAULT_STATUS`/`_ADDR` registers.

use crate::dma::Dma;
use alloc::collections::BTreeMap;
use core::sync::atomic::{AtomicU64, Ordering};

const VALID: u64 = 1 << 0;
const SYSTEM: u64 = 1 << 1;
const EXECUTABLE: u64 = 1 << 4;
const READABLE: u64 = 1 << 5;
const WRITEABLE: u64 = 1 << 6;
const FRAG_SHIFT: u32 = 7;
const FRAG_MASK: u64 = 0x1f;
/// `AMDGPU_PDE_PTE` (gfx9-11) and `AMDGPU_PDE_PTE_GFX12`.
const PDE_PTE_GFX11: u64 = 1 << 54;
const PDE_PTE_GFX12: u64 = 1 << 63;
const ADDR_MASK: u64 = 0x0000_FFFF_FFFF_F000;
/// Flag bits that must agree across a fragment (everything but the
/// address and the fragment field itself).
const FLAG_BITS: u64 = !(ADDR_MASK | (FRAG_MASK << FRAG_SHIFT));

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Execute,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultReason {
    /// The entry at `level` (0 = PDB2 … 3 = PTB) is not valid.
    Invalid {
        level: u8,
    },
    /// The table address in a PDE is outside mapped memory.
    BadTable {
        level: u8,
    },
    Permission,
    /// A PTE claims a fragment its neighbours do not honour.
    FragmentMismatch {
        fragment: u8,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmFault {
    pub va: u64,
    pub access: Access,
    pub reason: FaultReason,
}

/// A successful translation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Translation {
    pub pa: u64,
    /// Size of the TLB entry that serves it: 2 MiB for a large page,
    /// `4 KiB << fragment` otherwise.
    pub tlb_bytes: u64,
    /// The PTE's SYSTEM bit: `pa` is a bus address (through the IOMMU),
    /// not a VRAM physical address.
    pub system: bool,
}

/// One VM context (a VMID) with its root table.
#[derive(Debug)]
pub struct Gmc<'d> {
    dma: &'d Dma,
    root: u64,
    pde_pte: u64,
    fault: Option<VmFault>,
    /// Cached translations by 4 KiB page, as the L1/L2 TLBs hold them:
    /// a table change is not seen until an invalidation.
    tlb: BTreeMap<u64, (u64, Translation)>,
    engine: Option<&'d InvalidationEngine>,
    seen_generation: u64,
    vmid: u8,
}

impl<'d> Gmc<'d> {
    /// `dma` must map every table the runtime built; `gfx12` selects
    /// the gfx12 large-page bit.
    pub fn new(dma: &'d Dma, root: u64, gfx12: bool) -> Self {
        Gmc {
            dma,
            root,
            pde_pte: if gfx12 { PDE_PTE_GFX12 } else { PDE_PTE_GFX11 },
            fault: None,
            tlb: BTreeMap::new(),
            engine: None,
            seen_generation: 0,
            vmid: 0,
        }
    }

    /// Caches translations as VMID `vmid`, dropping them when `engine`
    /// completes an invalidation of that VMID.
    pub fn with_tlb(mut self, engine: &'d InvalidationEngine, vmid: u8) -> Self {
        self.engine = Some(engine);
        self.vmid = vmid;
        self.seen_generation = engine.generation(vmid);
        self
    }

    /// The latched fault, as the fault status registers would hold it.
    pub fn fault(&self) -> Option<VmFault> {
        self.fault
    }

    pub fn clear_fault(&mut self) {
        self.fault = None;
    }

    fn read(&self, table: u64, index: u64, level: u8) -> Result<u64, FaultReason> {
        self.dma
            .u64(table + index * 8, "page table entry")
            .map(|e| e.load(Ordering::Acquire))
            .map_err(|_| FaultReason::BadTable { level })
    }

    fn ptb_entry(&self, va: u64) -> Result<u64, FaultReason> {
        let mut table = self.root;
        for (level, shift) in [39u32, 30, 21].into_iter().enumerate() {
            let e = self.read(table, (va >> shift) & 511, level as u8)?;
            if e & VALID == 0 {
                return Err(FaultReason::Invalid { level: level as u8 });
            }
            if level == 2 && e & self.pde_pte != 0 {
                return Ok(e);
            }
            table = e & ADDR_MASK;
        }
        let e = self.read(table, (va >> 12) & 511, 3)?;
        if e & VALID == 0 {
            return Err(FaultReason::Invalid { level: 3 });
        }
        Ok(e)
    }

    fn walk(&self, va: u64, access: Access) -> Result<Translation, FaultReason> {
        let e = self.ptb_entry(va)?;
        let allowed = match access {
            Access::Read => e & READABLE != 0,
            Access::Write => e & WRITEABLE != 0,
            Access::Execute => e & EXECUTABLE != 0,
        };
        if !allowed {
            return Err(FaultReason::Permission);
        }
        if e & self.pde_pte != 0 {
            let size = 1u64 << 21;
            return Ok(Translation {
                pa: (e & ADDR_MASK & !(size - 1)) | (va & (size - 1)),
                tlb_bytes: size,
                system: e & SYSTEM != 0,
            });
        }
        let frag = ((e >> FRAG_SHIFT) & FRAG_MASK) as u8;
        let block = 4096u64 << frag;
        if frag > 0 {
            // Every page of the block must be the same mapping, shifted.
            let start = va & !(block - 1);
            let base = (e & ADDR_MASK).wrapping_sub(va & (block - 1) & !0xFFF);
            for page in (0..block).step_by(4096) {
                let other = self
                    .ptb_entry(start + page)
                    .map_err(|_| FaultReason::FragmentMismatch { fragment: frag })?;
                if other & ADDR_MASK != base.wrapping_add(page)
                    || other & FLAG_BITS != e & FLAG_BITS
                {
                    return Err(FaultReason::FragmentMismatch { fragment: frag });
                }
            }
        }
        Ok(Translation {
            pa: (e & ADDR_MASK) | (va & 0xFFF),
            tlb_bytes: block,
            system: e & SYSTEM != 0,
        })
    }

    /// Translates `va`, latching the first fault.
    pub fn translate(&mut self, va: u64, access: Access) -> Result<Translation, VmFault> {
        if let Some(e) = self.engine {
            let g = e.generation(self.vmid);
            if g != self.seen_generation {
                self.tlb.clear();
                self.seen_generation = g;
            }
            if let Some((entry, t)) = self.tlb.get(&(va >> 12)) {
                let allowed = match access {
                    Access::Read => entry & READABLE != 0,
                    Access::Write => entry & WRITEABLE != 0,
                    Access::Execute => entry & EXECUTABLE != 0,
                };
                if allowed {
                    return Ok(Translation {
                        pa: (t.pa & !0xFFF) | (va & 0xFFF),
                        tlb_bytes: t.tlb_bytes,
                        system: t.system,
                    });
                }
            }
        }
        let r = self.walk(va, access);
        if let (Ok(t), Some(_), Ok(e)) = (r, self.engine, self.ptb_entry(va)) {
            self.tlb.insert(va >> 12, (e, t));
        }
        r.map_err(|reason| {
            let f = VmFault { va, access, reason };
            if self.fault.is_none() {
                self.fault = Some(f);
            }
            f
        })
    }
}

/// The GFXHUB invalidation engines (`GCVM_INVALIDATE_ENG*_REQ/ACK`), on
/// the register bus at the GC bases.
///
/// A request write clears the engine's ACK; the ACK bits of the requested
/// VMIDs rise a few reads later, and only then do cached translations of
/// those VMIDs drop (the generation counter a [`Gmc`] watches). Requests
/// with no VMID bit or with reserved bits 31:27 set are refused (logged,
/// never acknowledged). No semaphore: this stand-alone engine exists for
/// the caching [`Gmc`]; the engines of all four hubs, with the MMHUB
/// semaphore, are in [`crate::hub::HubModel`].
#[derive(Debug)]
pub struct InvalidationEngine {
    clock: crate::SimClock,
    req0: usize,
    ack0: usize,
    distance: usize,
    state: spin::Mutex<EngineState>,
    generations: [AtomicU64; 16],
}

#[derive(Debug, Default)]
struct EngineState {
    /// Per engine: (requested mask, reads until ack, ack value).
    engines: [(u16, u32, u16); 18],
    refused: u32,
    unplugged: bool,
}

const ACK_READS: u32 = 3;

impl InvalidationEngine {
    /// `req0`/`ack0`: byte offsets of engine 0's registers; `distance`:
    /// bytes between engines.
    pub fn new(clock: &crate::SimClock, req0: usize, ack0: usize, distance: usize) -> Self {
        InvalidationEngine {
            clock: clock.clone(),
            req0,
            ack0,
            distance,
            state: spin::Mutex::new(EngineState::default()),
            generations: Default::default(),
        }
    }

    pub fn generation(&self, vmid: u8) -> u64 {
        self.generations
            .get(usize::from(vmid))
            .map_or(0, |g| g.load(Ordering::Acquire))
    }

    pub fn refused(&self) -> u32 {
        self.state.lock().refused
    }

    pub fn unplug(&self) {
        self.state.lock().unplugged = true;
    }

    fn engine_of(&self, byte_offset: usize, base: usize) -> Option<usize> {
        let off = byte_offset.checked_sub(base)?;
        (off % self.distance == 0 && off / self.distance < 18).then_some(off / self.distance)
    }
}

impl barebell::bus::RegisterBus for InvalidationEngine {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.clock.advance(crate::regfile::ACCESS_NS);
        let mut s = self.state.lock();
        if s.unplugged {
            return barebell::bus::ALL_ONES;
        }
        let Some(e) = self.engine_of(byte_offset, self.ack0) else {
            return 0;
        };
        let (mask, left, ack) = s.engines[e];
        if mask != 0 {
            if left > 0 {
                s.engines[e].1 = left - 1;
                return u32::from(ack);
            }
            for v in 0..16 {
                if mask & (1 << v) != 0 {
                    self.generations[v].fetch_add(1, Ordering::AcqRel);
                }
            }
            s.engines[e] = (0, 0, ack | mask);
            return u32::from(ack | mask);
        }
        u32::from(ack)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.clock.advance(crate::regfile::ACCESS_NS);
        let mut s = self.state.lock();
        if s.unplugged {
            return;
        }
        let Some(e) = self.engine_of(byte_offset, self.req0) else {
            return;
        };
        let mask = (value & 0xFFFF) as u16;
        if mask == 0 || value >> 27 != 0 {
            s.refused += 1;
            return;
        }
        s.engines[e] = (mask, ACK_READS, 0);
    }
}
