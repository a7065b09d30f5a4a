//! Buffers mapped into the process page tables after the bring-up: what
//! KFD's `kfd_ioctl_map_memory_to_gpu()` and
//! `kfd_ioctl_unmap_memory_from_gpu()` do for a process's buffer
//! (`amdgpu_vm_bo_map()` / `amdgpu_vm_bo_unmap()` then `kfd_flush_tlb()`),
//! for system memory the device reaches at a bus address (pinned user
//! pages behind an IOMMU mapping: KFD's userptr BOs).
//!
//! The tables are the ones every user queue's VMID walks (the gmc step's
//! process tables, kept by the queue step); [`crate::Options::spare_tables`]
//! reserves tables for these mappings. After each change the TLBs of
//! KFD's VMIDs are flushed through the GC block
//! ([`crate::gfx::GfxBlock::flush_process_tlbs`]).

use crate::Gpu;
use crate::error::{At, BringupError, ErrorKind, ResultAt};
use crate::sink::Step;
use barebell::gmc::pagetable::Flags;

/// How a mapped buffer may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub writeable: bool,
    pub executable: bool,
}

impl Access {
    /// The PTE flags of a readable page with this access: system memory
    /// SYSTEM and SNOOPED (coherent with the CPU, as KFD maps system BOs),
    /// VRAM neither.
    fn flags(self, system: bool) -> Flags {
        Flags {
            readable: true,
            writeable: self.writeable,
            executable: self.executable,
            system,
            snooped: system,
        }
    }
}

impl<'p> Gpu<'p> {
    /// Maps `len` bytes at process VA `va` to system memory at bus
    /// address `bus` (readable, snooped: coherent with the CPU, as KFD
    /// maps a userptr BO), then flushes the process VMIDs' TLBs. All
    /// three 4 KiB aligned. Refused before any change if the queue step
    /// did not keep the tables.
    pub fn map_process(
        &mut self,
        va: u64,
        bus: u64,
        len: u64,
        access: Access,
    ) -> Result<(), BringupError> {
        let flags = access.flags(true);
        let t = self.tables()?;
        t.map(va, bus, len, flags, false).map_err(refused(va))?;
        self.blocks.gfx.flush_process_tlbs(self)
    }

    /// Takes `len` bytes at process VA `va` out of the process tables,
    /// then flushes the process VMIDs' TLBs: the device no longer
    /// reaches them.
    pub fn unmap_process(&mut self, va: u64, len: u64) -> Result<(), BringupError> {
        let t = self.tables()?;
        t.unmap(va, len).map_err(refused(va))?;
        self.blocks.gfx.flush_process_tlbs(self)
    }

    /// Maps `len` bytes at `va` of the user memory or of the user VRAM
    /// (when it sits at its host address, [`crate::gmc::UserVramVa::Host`])
    /// into the process tables again, at the place the gmc step gave them,
    /// with `access`: what a driver that maps each buffer when its owner
    /// asks does (`kfd_ioctl_map_memory_to_gpu()`), after
    /// [`Gpu::unmap_process`] took the range out. System pages are
    /// SYSTEM|SNOOPED at their bus address, VRAM pages at their physical
    /// address; the TLBs are flushed. Refused if the range lies in
    /// neither.
    pub fn map_user_range(
        &mut self,
        va: u64,
        len: u64,
        access: Access,
    ) -> Result<(), BringupError> {
        let layout = self.user_layout()?;
        let inside = |(start, n): (u64, u64)| va >= start && va.saturating_add(len) <= start + n;
        let outside = || {
            ErrorKind::PageTable {
                table: "process",
                va,
                why: barebell::gmc::pagetable::MapError::BadRange {
                    va,
                    pa: 0,
                    size: len,
                },
            }
            .at(Step::Queue)
        };
        let (user, vram, vram_base) = (
            layout.user_memory,
            layout.user_vram,
            layout.vram_base_offset,
        );
        let p = self.platform;
        if inside(user) {
            let dma = p.dma();
            let off = va
                .checked_sub(dma.host.as_ptr() as u64)
                .and_then(|o| usize::try_from(o).ok())
                .ok_or_else(outside)?;
            let flags = access.flags(true);
            let chunk_bus = dma.chunk_bus;
            let t = self.tables()?;
            crate::gmc::map_dma_range(t, "process", chunk_bus, va, off, len as usize, flags)?;
        } else if inside(vram) && vram.0 >= p.vram().host.as_ptr() as u64 {
            let off = va - p.vram().host.as_ptr() as u64;
            let flags = access.flags(false);
            let t = self.tables()?;
            t.map(va, off + vram_base, len, flags, false)
                .map_err(refused(va))?;
        } else {
            return Err(outside());
        }
        self.blocks.gfx.flush_process_tlbs(self)
    }

    /// Maps `len` bytes at process VA `va` to the user VRAM whose host
    /// address (through BAR0) is `vram_host`: a VRAM BO placed at a VA of
    /// its owner's choosing, as the thunk maps scratch backing into the
    /// scratch aperture (`fmm_map_to_gpu_scratch()`), then flushes the
    /// TLBs. Refused if `[vram_host, vram_host + len)` is not user VRAM.
    pub fn map_vram(
        &mut self,
        va: u64,
        vram_host: u64,
        len: u64,
        access: Access,
    ) -> Result<(), BringupError> {
        let layout = self.user_layout()?;
        let (start, n) = layout.user_vram;
        let base = self.platform.vram().host.as_ptr() as u64;
        let inside = vram_host >= start && vram_host.saturating_add(len) <= start + n;
        if !inside || start < base {
            return Err(ErrorKind::PageTable {
                table: "process",
                va,
                why: barebell::gmc::pagetable::MapError::BadRange {
                    va,
                    pa: vram_host,
                    size: len,
                },
            })
            .at(Step::Queue);
        }
        let pa = vram_host - base + layout.vram_base_offset;
        let flags = access.flags(false);
        let t = self.tables()?;
        t.map(va, pa, len, flags, false).map_err(refused(va))?;
        self.blocks.gfx.flush_process_tlbs(self)
    }

    /// The gmc step's layout: where the user memory and user VRAM are.
    fn user_layout(&self) -> Result<&crate::gmc::LayoutReport, BringupError> {
        self.memory
            .as_ref()
            .ok_or(ErrorKind::NotImplemented(barebell::ip::Unsupported::new(
                "mapping user memory before the gmc step",
                self.ips.generation,
            )))
            .at(Step::Queue)
    }

    fn tables(&mut self) -> Result<&mut barebell::gmc::pagetable::TableArena<'p>, BringupError> {
        self.process_tables
            .as_mut()
            .ok_or(ErrorKind::NotImplemented(barebell::ip::Unsupported::new(
                "mapping buffers before the queue step kept the process tables",
                self.ips.generation,
            )))
            .at(Step::Queue)
    }
}

/// The error of a process-table change refused at `va`.
fn refused(va: u64) -> impl Fn(barebell::gmc::pagetable::MapError) -> BringupError {
    move |why| {
        ErrorKind::PageTable {
            table: "process",
            va,
            why,
        }
        .at(Step::Queue)
    }
}
