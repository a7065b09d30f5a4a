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
use crate::error::{BringupError, ErrorKind, ResultAt};
use crate::sink::Step;
use barebell::gmc::pagetable::Flags;

/// How a mapped buffer may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub writeable: bool,
    pub executable: bool,
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
        let flags = Flags {
            readable: true,
            writeable: access.writeable,
            executable: access.executable,
            system: true,
            snooped: true,
        };
        let t = self.tables()?;
        t.map(va, bus, len, flags, false)
            .map_err(|why| ErrorKind::PageTable {
                table: "process",
                va,
                why,
            })
            .at(Step::Queue)?;
        self.blocks.gfx.flush_process_tlbs(self)
    }

    /// Takes `len` bytes at process VA `va` out of the process tables,
    /// then flushes the process VMIDs' TLBs: the device no longer
    /// reaches them.
    pub fn unmap_process(&mut self, va: u64, len: u64) -> Result<(), BringupError> {
        let t = self.tables()?;
        t.unmap(va, len)
            .map_err(|why| ErrorKind::PageTable {
                table: "process",
                va,
                why,
            })
            .at(Step::Queue)?;
        self.blocks.gfx.flush_process_tlbs(self)
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
