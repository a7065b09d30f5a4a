//! The VM L2 walk of the GMC, over page tables in memory the model can
//! reach (a [`Dma`] view: host memory, or modelled VRAM by physical
//! address).
//!
//! The walk follows the context registers, not barebell's design: a
//! context is a root table, a VA range (`*_PAGE_TABLE_START/END_ADDR`), a
//! `PAGE_TABLE_DEPTH` (0 to 3 levels of page directories above the page
//! table block) and a `PAGE_TABLE_BLOCK_SIZE` ([`Context`]). What each
//! means is written from the sources, not from the runtime:
//! - The walk indexes `VA - START`, never the absolute VA: Linux writes
//!   GART PTE `n` for GART offset `n * 4 KiB` (`amdgpu_gart_map()` indexes
//!   by the offset into the aperture, and the aperture starts at
//!   `PAGE_TABLE_START_ADDR`, `gfxhub_v3_0_init_gart_aperture_regs()`);
//!   `amdgpu_gmc_init_pdb0()` fills PDB0 entry 0 for VRAM offset 0 with
//!   `START` = the FB start; tinygrad's AM walks `vaddr - va_base`
//!   (`PageTableTraverseContext`) with `START` = `va_base`. All three run
//!   on silicon.
//! - Depth 0 is a flat page table (Linux's VMID0 GART:
//!   `*_enable_system_domain()` sets `PAGE_TABLE_DEPTH` 0 and one
//!   contiguous table of `gart_size / 4 KiB` PTEs, `gmc_v11_0_gart_init()`);
//!   depth 1 is PDB0 over PTBs (`amdgpu_gmc_init_pdb0()` with
//!   `vmid0_page_table_depth` 1); depth 3 is PDB2 → PDB1 → PDB0 → PTB, the
//!   user contexts (`*_setup_vmid_config()`: `vm_manager.num_level`, 3 for
//!   48 bits) and tinygrad's VMID0 (`enable_vm_addressing()`).
//! - The block size: a PTB holds `2^(9 + PAGE_TABLE_BLOCK_SIZE)` entries
//!   (`*_setup_vmid_config()` writes `block_size - 9`;
//!   `AMDGPU_VM_PTE_COUNT()` is `1 << block_size`), so a PDB0 entry spans
//!   `2^(21 + PAGE_TABLE_BLOCK_SIZE)` bytes, as `amdgpu_gmc_init_pdb0()`
//!   states ("each PDE0 (used as PTE) covers
//!   (2^vmid0_page_table_block_size)*2M"); each directory above holds 512
//!   entries and spans 9 bits more (`amdgpu_vm_pt_level_shift()`). The
//!   root directory holds as many entries as the range needs
//!   (`amdgpu_vm_pt_num_entries()` for the root level), so its index is
//!   not masked; the range check bounds it.
//! - A directory entry with `AMDGPU_PDE_PTE` (gfx9–11, bit 54) or
//!   `AMDGPU_PDE_PTE_GFX12` (bit 63) is itself the PTE of a page as large
//!   as the span of that level (`amdgpu_vm_pte_update_flags()` sets it on
//!   every level but the PTB; `amdgpu_gmc_init_pdb0()` uses it in PDB0;
//!   tinygrad's `get_pte_flags()` sets it on any directory level). In a
//!   PTB that bit is not a "PDE is PTE" marker: gfx12 calls the same bit
//!   `AMDGPU_PTE_IS_PTE` there.
//! - Not modelled (a walk that needs them faults): tables in system
//!   memory (a PDE with `AMDGPU_PTE_SYSTEM`), translate-further
//!   (`AMDGPU_PTE_TF`, gfx9 only: `gmc.translate_further` is never set by
//!   gmc_v11_0/gmc_v12_0, so `AMDGPU_PDE_BFS` is ignored), PRT pages.
//!
//! Entries are decoded with this module's own constants, written from
//! `amdgpu_vm.h` ([`bits`]; `tests/harness/tests/gmc.rs` checks each
//! against the header's text, which cannot be compiled outside the
//! kernel), never with the runtime's bitfield types, so a layout slip in
//! the runtime shows as a wrong translation or a fault here.
//!
//! Faults are what the hardware would raise: an invalid entry at some
//! level, a permission the PTE does not grant, a VA outside the context's
//! range, or a fragment promise the table breaks (the TLB would translate
//! the whole block from one entry, so a block whose entries disagree
//! would send accesses to the wrong place; the model refuses it instead).
//! The fault is recorded the way `GCVM_L2_PROTECTION_FAULT_STATUS` /
//! `_ADDR` would hold it — the first fault sticks until cleared.
//! [`crate::mc`] puts the walk in front of every memory access the PSP
//! model makes and [`crate::hub`] latches what faults into the hub's
//! `*_L2_PROTECTION_FAULT_STATUS`/`_ADDR` registers.

use crate::dma::Dma;
use alloc::collections::BTreeMap;
use core::sync::atomic::{AtomicU64, Ordering};

/// Page-table entry bits as Linux 6.12 `amdgpu_vm.h` defines them (the
/// model's own copy; checked against the header text by
/// `tests/harness/tests/gmc.rs`, [`HEADER_BITS`], [`HEADER_FIELDS`]).
pub mod bits {
    /// `AMDGPU_PTE_VALID`.
    pub const VALID: u64 = 1 << 0;
    /// `AMDGPU_PTE_SYSTEM`: the address is a bus address (system memory).
    pub const SYSTEM: u64 = 1 << 1;
    /// `AMDGPU_PTE_SNOOPED`.
    pub const SNOOPED: u64 = 1 << 2;
    /// `AMDGPU_PTE_TMZ`.
    pub const TMZ: u64 = 1 << 3;
    /// `AMDGPU_PTE_EXECUTABLE`.
    pub const EXECUTABLE: u64 = 1 << 4;
    /// `AMDGPU_PTE_READABLE`.
    pub const READABLE: u64 = 1 << 5;
    /// `AMDGPU_PTE_WRITEABLE`.
    pub const WRITEABLE: u64 = 1 << 6;
    /// `AMDGPU_PTE_FRAG(x)`: `(x & 0x1f) << 7`.
    pub const FRAG_SHIFT: u32 = 7;
    pub const FRAG_MASK: u64 = 0x1f;
    /// `AMDGPU_PTE_PRT` (gfx9–11).
    pub const PRT: u64 = 1 << 51;
    /// `AMDGPU_PDE_PTE` (gfx9–11): this directory entry is a PTE.
    pub const PDE_PTE: u64 = 1 << 54;
    /// `AMDGPU_PTE_LOG`.
    pub const LOG: u64 = 1 << 55;
    /// `AMDGPU_PTE_TF` (translate further, gfx9 only).
    pub const TF: u64 = 1 << 56;
    /// `AMDGPU_PTE_NOALLOC`.
    pub const NOALLOC: u64 = 1 << 58;
    /// `AMDGPU_PDE_BFS(a)`: `a << 59`.
    pub const PDE_BFS_SHIFT: u32 = 59;
    /// `AMDGPU_PTE_MTYPE_NV10_SHIFT(mtype)`: `mtype << 48`, mask `7 << 48`.
    pub const MTYPE_NV10_SHIFT: u32 = 48;
    pub const MTYPE_NV10_MASK: u64 = 7;
    /// `AMDGPU_PTE_PRT_GFX12`.
    pub const PRT_GFX12: u64 = 1 << 56;
    /// `AMDGPU_PTE_MTYPE_GFX12_SHIFT(mtype)`: `mtype << 54`, mask `3 << 54`.
    pub const MTYPE_GFX12_SHIFT: u32 = 54;
    pub const MTYPE_GFX12_MASK: u64 = 3;
    /// `AMDGPU_PTE_DCC` (gfx12).
    pub const DCC: u64 = 1 << 58;
    /// `AMDGPU_PTE_IS_PTE` (gfx12, in a PTE).
    pub const IS_PTE: u64 = 1 << 63;
    /// `AMDGPU_PDE_PTE_GFX12` (the same bit, in a directory entry).
    pub const PDE_PTE_GFX12: u64 = 1 << 63;
    /// `AMDGPU_PDE_BFS_GFX12(a)`: `(a & 0x1f) << 58`.
    pub const PDE_BFS_GFX12_SHIFT: u32 = 58;
    /// Address bits 47:12 of an entry. `gmc_v11_0_get_vm_pde()` and
    /// `gmc_v12_0_get_vm_pde()` refuse (`BUG_ON`) any address bit in
    /// `0xFFFF00000000003F`, and entries hold 4 KiB-aligned addresses
    /// (tinygrad's `AMPageTableEntry` masks with the same value).
    pub const ADDRESS: u64 = 0x0000_FFFF_FFFF_F000;
}

/// Every single-bit constant of [`bits`] with the `amdgpu_vm.h` name it
/// copies, for the header-text check.
pub const HEADER_BITS: [(&str, u64); 16] = [
    ("AMDGPU_PTE_VALID", bits::VALID),
    ("AMDGPU_PTE_SYSTEM", bits::SYSTEM),
    ("AMDGPU_PTE_SNOOPED", bits::SNOOPED),
    ("AMDGPU_PTE_TMZ", bits::TMZ),
    ("AMDGPU_PTE_EXECUTABLE", bits::EXECUTABLE),
    ("AMDGPU_PTE_READABLE", bits::READABLE),
    ("AMDGPU_PTE_WRITEABLE", bits::WRITEABLE),
    ("AMDGPU_PTE_PRT", bits::PRT),
    ("AMDGPU_PDE_PTE", bits::PDE_PTE),
    ("AMDGPU_PTE_LOG", bits::LOG),
    ("AMDGPU_PTE_TF", bits::TF),
    ("AMDGPU_PTE_NOALLOC", bits::NOALLOC),
    ("AMDGPU_PTE_PRT_GFX12", bits::PRT_GFX12),
    ("AMDGPU_PTE_DCC", bits::DCC),
    ("AMDGPU_PTE_IS_PTE", bits::IS_PTE),
    ("AMDGPU_PDE_PTE_GFX12", bits::PDE_PTE_GFX12),
];

/// The multi-bit fields: `(macro as the header writes it, shift, mask)`;
/// the check reads the macro's body.
pub const HEADER_FIELDS: [(&str, u32, u64); 5] = [
    ("AMDGPU_PTE_FRAG(x)", bits::FRAG_SHIFT, bits::FRAG_MASK),
    (
        "AMDGPU_PDE_BFS(a)",
        bits::PDE_BFS_SHIFT,
        u64::MAX >> bits::PDE_BFS_SHIFT,
    ),
    (
        "AMDGPU_PTE_MTYPE_NV10_SHIFT(mtype)",
        bits::MTYPE_NV10_SHIFT,
        bits::MTYPE_NV10_MASK,
    ),
    (
        "AMDGPU_PTE_MTYPE_GFX12_SHIFT(mtype)",
        bits::MTYPE_GFX12_SHIFT,
        bits::MTYPE_GFX12_MASK,
    ),
    ("AMDGPU_PDE_BFS_GFX12(a)", bits::PDE_BFS_GFX12_SHIFT, 0x1f),
];

/// `enum amdgpu_vm_level` (`amdgpu_vm.h`): the level numbers faults name.
pub const PDB2: u8 = 0;
pub const PDB1: u8 = 1;
pub const PDB0: u8 = 2;
pub const PTB: u8 = 3;

/// Which PTE format a hub speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gfx9–gfx11 (`AMDGPU_PDE_PTE` at bit 54).
    Gfx11,
    /// gfx12 (`AMDGPU_PDE_PTE_GFX12` at bit 63).
    Gfx12,
}

impl Format {
    /// The "directory entry is a PTE" bit (`AMDGPU_PDE_PTE_FLAG()`).
    pub fn pde_pte(self) -> u64 {
        match self {
            Format::Gfx11 => bits::PDE_PTE,
            Format::Gfx12 => bits::PDE_PTE_GFX12,
        }
    }
}

/// One VM context as the hub's registers describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// Root table's physical address (`*_PAGE_TABLE_BASE_ADDR`, VALID
    /// stripped).
    pub root: u64,
    /// First and last byte of the VA range (`*_PAGE_TABLE_START_ADDR`,
    /// `*_PAGE_TABLE_END_ADDR` | 0xFFF).
    pub start: u64,
    pub end: u64,
    /// `PAGE_TABLE_DEPTH`: directory levels above the PTB, 0..=3.
    pub depth: u8,
    /// `PAGE_TABLE_BLOCK_SIZE`: a PTB holds `2^(9 + block_size)` entries.
    pub block_size: u8,
    pub format: Format,
}

impl Context {
    /// A user context as Linux programs VMIDs 1–15 on gfx11/gfx12: start
    /// 0, four levels, 512-entry PTBs, 48 bits (`*_setup_vmid_config()`
    /// with `amdgpu_vm_adjust_size(adev, 256 * 1024, 9, 3, 48)`).
    pub fn four_level(root: u64, format: Format) -> Self {
        Context {
            root,
            start: 0,
            end: (1 << 48) - 1,
            depth: 3,
            block_size: 0,
            format,
        }
    }

    /// The level the root table is at (`PTB` for a flat table).
    pub fn root_level(&self) -> u8 {
        PTB - self.depth.min(3)
    }

    /// log2 of the bytes one entry of `level` spans.
    pub fn level_shift(&self, level: u8) -> u32 {
        let ptb_bits = 9 + u32::from(self.block_size);
        match level {
            PTB => 12,
            l => 12 + ptb_bits + 9 * u32::from(PDB0 - l.min(PDB0)),
        }
    }

    /// Entries in a (non-root) table of `level`.
    fn entries(&self, level: u8) -> u64 {
        if level == PTB {
            1 << (9 + u32::from(self.block_size))
        } else {
            512
        }
    }
}

const ADDR_MASK: u64 = bits::ADDRESS;
const FRAG_SHIFT: u32 = bits::FRAG_SHIFT;
const FRAG_MASK: u64 = bits::FRAG_MASK;
/// Flag bits that must agree across a fragment (everything but the
/// address and the fragment field itself).
const FLAG_BITS: u64 = !(ADDR_MASK | (FRAG_MASK << FRAG_SHIFT));
/// Pages of a fragment the model compares at most (evenly spread, first
/// and last included): a model limit, so a 5-bit fragment cannot make one
/// walk read 2^31 entries.
const FRAGMENT_SAMPLES: u64 = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Execute,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultReason {
    /// The entry at `level` (`enum amdgpu_vm_level`: 0 = PDB2 … 3 = PTB)
    /// is not valid.
    Invalid {
        level: u8,
    },
    /// The table address in a PDE is outside mapped memory (or in system
    /// memory, which the model does not walk).
    BadTable {
        level: u8,
    },
    Permission,
    /// A PTE claims a fragment its neighbours do not honour.
    FragmentMismatch {
        fragment: u8,
    },
    /// The VA is outside the context's start..=end range.
    OutOfRange,
    /// A system page whose PTE lacks `AMDGPU_PTE_SNOOPED`, reached by a
    /// client whose accesses must be coherent with the CPU's caches
    /// ([`Translation::coherent`]). **Model convention**, not a walk
    /// fault: the hardware translates the page and reads or writes DRAM
    /// without probing the CPU's caches (stale data); the model refuses
    /// the access instead, after the walk, and latches nothing in the
    /// hub's fault registers.
    NotSnooped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmFault {
    pub va: u64,
    pub access: Access,
    pub reason: FaultReason,
}

/// The address space a queue's memory is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressSpace {
    /// Addresses are host addresses (a rig without a GMC).
    Identity,
    /// The GFXHUB context of this VMID (`GCVM_CONTEXTn_*`), as the HQD's
    /// `CP_HQD_VMID` names it (for MES queues, the VMID MES assigned).
    Vmid(u8),
}

impl AddressSpace {
    pub fn vmid(self) -> Option<u8> {
        match self {
            AddressSpace::Identity => None,
            AddressSpace::Vmid(v) => Some(v),
        }
    }
}

/// Why a translation through a queue's VMID failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VmRefusal {
    /// `GCVM_CONTEXTn_CNTL.ENABLE_CONTEXT` is clear.
    ContextDisabled,
    /// The page-table base lacks its VALID bit.
    InvalidBase { raw: u64 },
    /// A depth or block size the model's walker does not implement.
    UnsupportedLayout { depth: u32, block_size: u32 },
    /// Outside the context's `PAGE_TABLE_START/END_ADDR`.
    OutOfRange { start: u64, end: u64 },
    /// The walk faulted.
    Walk(FaultReason),
    /// The translation reached memory the model does not back.
    Unbacked { pa: u64 },
    /// An access that crosses a page boundary (the CP never makes one).
    CrossesPage,
}

/// A successful translation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Translation {
    pub pa: u64,
    /// Size of the TLB entry that serves it: the leaf's span (4 KiB in a
    /// PTB, more for a directory entry used as a PTE), or `4 KiB <<
    /// fragment` when that is larger.
    pub tlb_bytes: u64,
    /// The PTE's SYSTEM bit: `pa` is a bus address (through the IOMMU),
    /// not a VRAM physical address.
    pub system: bool,
    /// The PTE's SNOOPED bit: an access to a system page probes the CPU's
    /// caches ([`Translation::coherent`]).
    pub snooped: bool,
}

impl Translation {
    /// Whether an access through this translation sees what the CPU
    /// wrote: VRAM, or a system page whose PTE has `AMDGPU_PTE_SNOOPED`.
    ///
    /// Linux sets SNOOPED on every PTE of cached system memory
    /// (`amdgpu_ttm_tt_pde_flags()` in `amdgpu_ttm.c`, which
    /// `amdgpu_ttm_tt_pte_flags()` calls: `AMDGPU_PTE_SYSTEM` for a TT
    /// page, plus `AMDGPU_PTE_SNOOPED` when `ttm->caching ==
    /// ttm_cached`), and gfx9 on every system page
    /// (`gmc_v9_0_get_coherence_flags()`: `snoop = true` for GC 9.4.3,
    /// and for `!is_vram` on the others);
    /// tinygrad's AM maps every system buffer `snooped=True`
    /// (`PCIIface.alloc()`/`map()` in `runtime/support/system.py`,
    /// encoded by `AM_GMC.get_pte_flags()` in `am/ip.py`). Without it the
    /// GPU reads DRAM past the CPU's caches, and a line the CPU wrote and
    /// still holds dirty is stale to the GPU.
    ///
    /// **Model convention**, where the CPU maps the system memory
    /// write-back cached ([`CpuCaching::WriteBack`]: the DMA region of
    /// barebell's targets and of the built-in model): a non-snooped access
    /// to it is never coherent; the model refuses it with
    /// [`FaultReason::NotSnooped`] rather than return data that depends on
    /// the CPU's cache state. Deterministic, where hardware's stale data
    /// is not. Where a guest OS owns the memory and picks each page's CPU
    /// caching ([`CpuCaching::OwnerChooses`], the Linux peer), a
    /// non-snooped page is one it maps uncached or write-combined
    /// (`amdgpu_ttm_tt_pde_flags()` leaves SNOOPED off exactly for pages
    /// whose `ttm->caching` is not `ttm_cached`, e.g. the `USWC` GTT buffers
    /// KFD's MQDs live in), which is coherent: the model accepts it.
    pub fn coherent(&self, cpu: CpuCaching) -> Result<(), FaultReason> {
        coherent(self.system, self.snooped, cpu)
    }
}

/// How the CPU maps the system memory a device reaches
/// ([`Translation::coherent`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuCaching {
    /// Write-back cached, all of it (barebell's own targets).
    #[default]
    WriteBack,
    /// An OS that owns the memory chooses per page (a guest kernel): a
    /// page its PTEs do not mark SNOOPED is one it does not cache.
    OwnerChooses,
}

/// [`Translation::coherent`] over the two PTE bits (the gfx9 walker's
/// translations carry the same pair).
pub fn coherent(system: bool, snooped: bool, cpu: CpuCaching) -> Result<(), FaultReason> {
    if system && !snooped && cpu == CpuCaching::WriteBack {
        Err(FaultReason::NotSnooped)
    } else {
        Ok(())
    }
}

/// The leaf a walk ends at.
#[derive(Debug, Clone, Copy)]
struct Leaf {
    entry: u64,
    level: u8,
}

/// One VM context (a VMID) walked over its root table.
#[derive(Debug)]
pub struct Gmc<'d> {
    dma: &'d Dma,
    /// The physical address `dma`'s address 0 stands for.
    vram_base: u64,
    ctx: Context,
    fault: Option<VmFault>,
    /// Cached translations by 4 KiB page, as the L1/L2 TLBs hold them:
    /// a table change is not seen until an invalidation.
    tlb: BTreeMap<u64, (u64, Translation)>,
    engine: Option<&'d InvalidationEngine>,
    seen_generation: u64,
    vmid: u8,
}

impl<'d> Gmc<'d> {
    /// A four-level context from VA 0 ([`Context::four_level`], what
    /// Linux gives VMIDs 1–15); `dma` must map every table; `gfx12`
    /// selects the gfx12 format.
    pub fn new(dma: &'d Dma, root: u64, gfx12: bool) -> Self {
        let format = if gfx12 { Format::Gfx12 } else { Format::Gfx11 };
        Self::with_context(dma, Context::four_level(root, format))
    }

    /// The context `ctx` as its registers describe it.
    pub fn with_context(dma: &'d Dma, ctx: Context) -> Self {
        Gmc {
            dma,
            vram_base: 0,
            ctx,
            fault: None,
            tlb: BTreeMap::new(),
            engine: None,
            seen_generation: 0,
            vmid: 0,
        }
    }

    /// Tables live at physical address `base + a` for `dma` address `a`:
    /// `dma` is VRAM by offset and `base` the hub's `*MC_VM_FB_OFFSET`,
    /// the physical address of VRAM offset 0 (Linux's
    /// `vm_manager.vram_base_offset`, which `amdgpu_gmc_vram_mc2pa()` adds
    /// to every PDE and to the context base).
    pub fn with_vram_base(mut self, base: u64) -> Self {
        self.vram_base = base;
        self
    }

    /// The context walked.
    pub fn context(&self) -> Context {
        self.ctx
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
        let at = index
            .checked_mul(8)
            .and_then(|o| table.checked_add(o))
            .and_then(|a| a.checked_sub(self.vram_base))
            .ok_or(FaultReason::BadTable { level })?;
        self.dma
            .u64(at, "page table entry")
            .map(|e| e.load(Ordering::Acquire))
            .map_err(|_| FaultReason::BadTable { level })
    }

    /// The VA relative to the context's start, or a range fault.
    fn relative(&self, va: u64) -> Result<u64, FaultReason> {
        if va < self.ctx.start || va > self.ctx.end {
            return Err(FaultReason::OutOfRange);
        }
        Ok(va - self.ctx.start)
    }

    /// Walks from the root to the leaf serving `rel` (`VA - START`).
    fn leaf(&self, rel: u64) -> Result<Leaf, FaultReason> {
        let ctx = &self.ctx;
        let root = ctx.root_level();
        let mut table = ctx.root;
        let mut level = root;
        loop {
            let mut index = rel >> ctx.level_shift(level);
            if level != root {
                index &= ctx.entries(level) - 1;
            }
            let e = self.read(table, index, level)?;
            if e & bits::VALID == 0 {
                return Err(FaultReason::Invalid { level });
            }
            if level == PTB || e & ctx.format.pde_pte() != 0 {
                return Ok(Leaf { entry: e, level });
            }
            if e & bits::SYSTEM != 0 {
                // A table in system memory: not modelled.
                return Err(FaultReason::BadTable { level: level + 1 });
            }
            table = e & ADDR_MASK;
            level += 1;
        }
    }

    fn walk(&self, va: u64, access: Access) -> Result<(Leaf, Translation), FaultReason> {
        let rel = self.relative(va)?;
        let leaf = self.leaf(rel)?;
        let e = leaf.entry;
        let allowed = match access {
            Access::Read => e & bits::READABLE != 0,
            Access::Write => e & bits::WRITEABLE != 0,
            Access::Execute => e & bits::EXECUTABLE != 0,
        };
        if !allowed {
            return Err(FaultReason::Permission);
        }
        let page = 1u64 << self.ctx.level_shift(leaf.level);
        let frag = ((e >> FRAG_SHIFT) & FRAG_MASK) as u8;
        let block = 4096u64 << frag;
        if block > page {
            // Every leaf of the block must be the same mapping, shifted.
            let first = rel & !(block - 1);
            let base = (e & ADDR_MASK & !(page - 1)).wrapping_sub(rel & (block - 1) & !(page - 1));
            let leaves = block / page;
            let step = leaves.div_ceil(FRAGMENT_SAMPLES).max(1);
            let mut k = 0u64;
            while k < leaves {
                let off = k * page;
                let other = self
                    .leaf(first + off)
                    .map_err(|_| FaultReason::FragmentMismatch { fragment: frag })?;
                if other.level != leaf.level
                    || other.entry & ADDR_MASK & !(page - 1) != base.wrapping_add(off)
                    || other.entry & FLAG_BITS != e & FLAG_BITS
                {
                    return Err(FaultReason::FragmentMismatch { fragment: frag });
                }
                k = if k + 1 == leaves {
                    leaves
                } else {
                    (k + step).min(leaves - 1)
                };
            }
        }
        let t = Translation {
            pa: (e & ADDR_MASK & !(page - 1)) | (rel & (page - 1)),
            tlb_bytes: block.max(page),
            system: e & bits::SYSTEM != 0,
            snooped: e & bits::SNOOPED != 0,
        };
        Ok((leaf, t))
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
                    Access::Read => entry & bits::READABLE != 0,
                    Access::Write => entry & bits::WRITEABLE != 0,
                    Access::Execute => entry & bits::EXECUTABLE != 0,
                };
                if allowed {
                    return Ok(Translation {
                        pa: (t.pa & !0xFFF) | (va & 0xFFF),
                        tlb_bytes: t.tlb_bytes,
                        system: t.system,
                        snooped: t.snooped,
                    });
                }
            }
        }
        let r = self.walk(va, access);
        if let (Ok((leaf, t)), Some(_)) = (r, self.engine) {
            self.tlb.insert(va >> 12, (leaf.entry, t));
        }
        r.map(|(_, t)| t).map_err(|reason| {
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
