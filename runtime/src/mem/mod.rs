//! Memory the device reaches: a DMA arena in host memory and an allocator
//! over the VRAM aperture.
//!
//! Both are bump allocators. Bring-up allocates a fixed set of buffers
//! once (PSP firmware and ring buffers, the TMR, page tables, MQDs, EOP
//! buffers) and frees them all together at teardown, so a free list would
//! be code that never runs. Neither allocates on the heap: the caller owns
//! the backing memory and the allocator only hands out disjoint pieces.
//!
//! Alignment is always of the address the *device* sees. The PSP takes
//! buffer addresses shifted right by 20 (`psp_v13_0_bootloader_load_component()`
//! writes `mc_addr >> 20` to C2PMSG_36), so a buffer 1 MiB aligned in the
//! CPU's view but not on the bus is a wrong buffer; the CPU view of an
//! IOMMU-mapped page need not share the bus address's high alignment.

use crate::discovery;

pub mod claim;
pub mod device;
pub mod view;

pub use device::{Dev, DeviceArena};
pub use view::DmaView;

/// Why an allocation or a region could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemError {
    /// `align` is zero or not a power of two.
    BadAlignment { align: u64 },
    /// A zero-byte allocation (nothing the device could be given).
    Empty,
    /// Not enough room left: `available` bytes remain after aligning the
    /// cursor to `align`.
    OutOfSpace {
        requested: u64,
        align: u64,
        available: u64,
    },
    /// `base + size` does not fit in 64 bits (or in `usize` on the CPU
    /// side).
    Overflow { base: u64, size: u64 },
    /// The reserved top region is larger than the aperture.
    ReserveTooLarge { size: u64, reserve: u64 },
}

impl core::fmt::Display for MemError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            MemError::BadAlignment { align } => {
                write!(f, "alignment {align:#x} is not a non-zero power of two")
            }
            MemError::Empty => write!(f, "zero-byte allocation"),
            MemError::OutOfSpace {
                requested,
                align,
                available,
            } => write!(
                f,
                "{requested:#x} bytes at alignment {align:#x} requested, {available:#x} left"
            ),
            MemError::Overflow { base, size } => {
                write!(f, "{base:#x} + {size:#x} overflows")
            }
            MemError::ReserveTooLarge { size, reserve } => {
                write!(f, "reserve {reserve:#x} exceeds aperture size {size:#x}")
            }
        }
    }
}

fn check_align(align: u64) -> Result<(), MemError> {
    if align.is_power_of_two() {
        Ok(())
    } else {
        Err(MemError::BadAlignment { align })
    }
}

/// Rounds `addr` up to `align` (a power of two), or `None` on overflow.
fn align_up(addr: u64, align: u64) -> Option<u64> {
    addr.checked_add(align - 1).map(|a| a & !(align - 1))
}

/// 4 KiB: a GPU page, and the alignment of MQDs, page tables and rings.
pub const PAGE_ALIGN: u64 = 1 << 12;
/// 1 MiB: what the PSP's `>> 20` address registers need
/// (`PSP_1_MEG` in `amdgpu_psp.h`).
pub const PSP_ALIGN: u64 = 1 << 20;

/// One piece of the DMA arena: host bytes and the bus address the device
/// uses for the same bytes.
#[derive(Debug)]
pub struct DmaChunk<'a> {
    mem: &'a mut [u8],
    bus: u64,
}

impl<'a> DmaChunk<'a> {
    /// The bus (device-visible) address of the first byte.
    pub fn bus_addr(&self) -> u64 {
        self.bus
    }

    pub fn len(&self) -> usize {
        self.mem.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mem.is_empty()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.mem.as_mut_ptr()
    }

    pub fn bytes(&mut self) -> &mut [u8] {
        self.mem
    }

    /// The chunk's bytes for the rest of the arena's lifetime.
    pub fn into_bytes(self) -> &'a mut [u8] {
        self.mem
    }
}

impl DmaChunk<'static> {
    /// The PSP's view of this chunk. `None` if the host pointer is not
    /// 4-byte aligned, which [`crate::psp::DmaBuf`] needs for its dword
    /// fence reads.
    pub fn into_psp_buf(self) -> Option<crate::psp::DmaBuf> {
        let bus = self.bus;
        let len = self.mem.len();
        let cpu = core::ptr::NonNull::new(self.mem.as_mut_ptr())?;
        if !(cpu.as_ptr() as usize).is_multiple_of(4) {
            return None;
        }
        // SAFETY: the bytes are a `'static` exclusive borrow given up
        // here, so they stay valid and nothing else on the host touches
        // them; the arena's creator promised (the safety contract of the
        // `unsafe fn DmaArena::new`) that the device sees them at `bus`;
        // the pointer is 4-byte aligned.
        Some(unsafe { crate::psp::DmaBuf::new(cpu, len, bus) })
    }
}

/// Host memory the device can reach, handed out as disjoint chunks.
///
/// The arena is the caller's buffer (a VFIO-mapped hugepage, or a static
/// in the unikernel) together with the bus address the IOMMU (or identity
/// mapping) gives its first byte.
///
/// Making one is `unsafe`: [`DmaChunk::into_psp_buf`] hands the PSP the
/// chunk's bus address and lets the device write there, so a wrong bus
/// address lets the device write host memory the arena does not own.
/// Safe code cannot make an arena:
///
/// ```compile_fail
/// let mut buf = [0u8; 64];
/// let _ = barebell::mem::DmaArena::new(&mut buf, 0x1000);
/// ```
#[derive(Debug)]
pub struct DmaArena<'a> {
    rest: &'a mut [u8],
    /// Bus address of `rest[0]`.
    bus: u64,
}

impl<'a> DmaArena<'a> {
    /// An arena over `mem`, which the device sees at bus address `bus`.
    ///
    /// # Safety
    /// The device must reach exactly `mem`'s bytes, contiguously, at
    /// `bus..bus + mem.len()` (an IOMMU mapping of this buffer, or the
    /// identity map), for as long as anything made from the arena is in
    /// the device's hands, which may outlast `'a` for a chunk turned into a
    /// [`crate::psp::DmaBuf`] (`'static` only). A wrong `bus` lets the
    /// device read and write host memory the arena does not own.
    pub unsafe fn new(mem: &'a mut [u8], bus: u64) -> Result<Self, MemError> {
        let size = mem.len() as u64;
        if bus.checked_add(size).is_none() {
            return Err(MemError::Overflow { base: bus, size });
        }
        Ok(DmaArena { rest: mem, bus })
    }

    /// Bytes not yet handed out (before any alignment padding).
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// The bus address the next unaligned allocation would get.
    pub fn cursor(&self) -> u64 {
        self.bus
    }

    /// A zeroed chunk of `size` bytes whose bus address is a multiple of
    /// `align`. Padding before it is skipped and not reused.
    pub fn alloc(&mut self, size: usize, align: u64) -> Result<DmaChunk<'a>, MemError> {
        check_align(align)?;
        if size == 0 {
            return Err(MemError::Empty);
        }
        let requested = size as u64;
        let available = self.rest.len() as u64;
        let start = align_up(self.bus, align).ok_or(MemError::Overflow {
            base: self.bus,
            size: requested,
        })?;
        let pad = start - self.bus;
        let out = MemError::OutOfSpace {
            requested,
            align,
            available: available.saturating_sub(pad),
        };
        let end = pad.checked_add(requested).ok_or(out)?;
        if end > available {
            return Err(out);
        }
        let (pad, size) = (pad as usize, size);
        let rest = core::mem::take(&mut self.rest);
        let (_, rest) = rest.split_at_mut(pad);
        let (chunk, rest) = rest.split_at_mut(size);
        self.rest = rest;
        self.bus = start + requested;
        chunk.fill(0);
        Ok(DmaChunk {
            mem: chunk,
            bus: start,
        })
    }
}

/// A range of VRAM: its offset from the start of VRAM and the MC address
/// the GPU uses for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VramRange {
    pub offset: u64,
    pub size: u64,
    pub mc: u64,
}

impl VramRange {
    pub fn end(&self) -> u64 {
        self.offset + self.size
    }
}

/// Bytes at the top of VRAM that the driver never hands out: the IP
/// discovery table sits `DISCOVERY_TMR_OFFSET` below the top and firmware
/// owns what is around it. `amdgpu_ttm_reserve_tmr()` reserves at least
/// this much (more when memory training needs a buffer there, which
/// barebell does not do).
pub const BOOT_RESERVE: u64 = discovery::TMR_OFFSET;

/// A bump allocator over VRAM, from the bottom up to the reserved boot
/// region at the top.
#[derive(Debug, Clone)]
pub struct VramAllocator {
    size: u64,
    reserve: u64,
    /// MC address of VRAM offset 0 (`adev->gmc.vram_start`, from
    /// `MC_VM_FB_LOCATION_BASE`).
    mc_base: u64,
    next: u64,
    /// A range in use by someone else (`offset..end`) that no allocation
    /// may overlap: the TMR a still-running sOS keeps.
    keep_clear: Option<(u64, u64)>,
}

impl VramAllocator {
    /// VRAM of `size` bytes at MC address `mc_base`, keeping the top
    /// `reserve` bytes back.
    pub fn new(size: u64, mc_base: u64, reserve: u64) -> Result<Self, MemError> {
        if reserve > size {
            return Err(MemError::ReserveTooLarge { size, reserve });
        }
        if mc_base.checked_add(size).is_none() {
            return Err(MemError::Overflow {
                base: mc_base,
                size,
            });
        }
        Ok(VramAllocator {
            size,
            reserve,
            mc_base,
            next: 0,
            keep_clear: None,
        })
    }

    /// No later allocation overlaps `size` bytes at `offset`: one that
    /// would is placed past them instead.
    pub fn keep_clear_of(&mut self, offset: u64, size: u64) {
        self.keep_clear = offset.checked_add(size).map(|end| (offset, end));
    }

    /// VRAM of `size` bytes with the boot region Linux reserves.
    pub fn with_boot_region(size: u64, mc_base: u64) -> Result<Self, MemError> {
        Self::new(size, mc_base, BOOT_RESERVE)
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The reserved region at the top of VRAM.
    pub fn boot_region(&self) -> VramRange {
        let offset = self.size - self.reserve;
        VramRange {
            offset,
            size: self.reserve,
            mc: self.mc_base + offset,
        }
    }

    /// Where the IP discovery table is read from (`size - 64 KiB`, 10 KiB
    /// long; `amdgpu_discovery_read_binary_from_mem()`), if VRAM is large
    /// enough to hold it there.
    pub fn discovery_table(&self) -> Option<VramRange> {
        let offset = self.size.checked_sub(discovery::TMR_OFFSET)?;
        Some(VramRange {
            offset,
            size: discovery::TABLE_BYTES as u64,
            mc: self.mc_base + offset,
        })
    }

    /// Bytes between the cursor and the boot region.
    pub fn free(&self) -> u64 {
        (self.size - self.reserve).saturating_sub(self.next)
    }

    /// `size` bytes at an offset (and so an MC address, if `mc_base` is
    /// aligned alike) that is a multiple of `align`.
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<VramRange, MemError> {
        check_align(align)?;
        if size == 0 {
            return Err(MemError::Empty);
        }
        let limit = self.size - self.reserve;
        let start = align_up(self.next, align).ok_or(MemError::Overflow {
            base: self.next,
            size,
        })?;
        let mut end = start
            .checked_add(size)
            .ok_or(MemError::Overflow { base: start, size })?;
        let mut start = start;
        if let Some((lo, hi)) = self.keep_clear
            && start < hi
            && end > lo
        {
            start = align_up(hi, align).ok_or(MemError::Overflow { base: hi, size })?;
            end = start
                .checked_add(size)
                .ok_or(MemError::Overflow { base: start, size })?;
        }
        if end > limit {
            return Err(MemError::OutOfSpace {
                requested: size,
                align,
                available: limit.saturating_sub(start),
            });
        }
        self.next = end;
        Ok(VramRange {
            offset: start,
            size,
            mc: self.mc_base + start,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocations before a kept-clear range stay put; one that would
    /// overlap it lands past it, aligned.
    #[test]
    fn allocations_step_over_a_range_kept_clear() {
        let mut v = VramAllocator::new(64 << 20, 0x0080_0000_0000, 0).unwrap();
        v.keep_clear_of(0x90_0000, 0x130_0000);
        let a = v.alloc(0x8_0000, 0x1000).unwrap();
        assert_eq!((a.offset, a.size), (0, 0x8_0000));
        // 0x80_0000..0xa0_0000 would overlap 0x90_0000..0x1c0_0000.
        let _ = v.alloc(0x78_0000, 0x1000).unwrap();
        let b = v.alloc(0x20_0000, 0x20_0000).unwrap();
        assert_eq!(b.offset, 0x1c0_0000, "past the kept range, 2 MiB aligned");
        assert_eq!(b.mc, 0x0080_0000_0000 + 0x1c0_0000);
        let c = v.alloc(0x1000, 0x1000).unwrap();
        assert_eq!(c.offset, 0x1e0_0000);
    }

    #[test]
    fn dma_alignment_is_of_the_bus_address() {
        let mut buf = [0xAAu8; 256];
        // Bus address 0x1010: the first 64-byte-aligned address is 0x1040.
        // SAFETY: no device is involved; only the arithmetic is tested.
        let mut a = unsafe { DmaArena::new(&mut buf, 0x1010) }.unwrap();
        let mut c = a.alloc(16, 64).unwrap();
        assert_eq!(c.bus_addr(), 0x1040);
        assert_eq!(c.len(), 16);
        assert!(c.bytes().iter().all(|&b| b == 0));
        assert_eq!(a.cursor(), 0x1050);
        assert_eq!(a.remaining(), 256 - 0x30 - 16);
    }

    #[test]
    fn dma_errors() {
        let mut buf = [0u8; 64];
        // SAFETY: no device is involved; only the arithmetic is tested.
        let mut a = unsafe { DmaArena::new(&mut buf, 0) }.unwrap();
        assert_eq!(
            a.alloc(8, 3).unwrap_err(),
            MemError::BadAlignment { align: 3 }
        );
        assert_eq!(
            a.alloc(8, 0).unwrap_err(),
            MemError::BadAlignment { align: 0 }
        );
        assert_eq!(a.alloc(0, 4).unwrap_err(), MemError::Empty);
        assert_eq!(
            a.alloc(65, 1).unwrap_err(),
            MemError::OutOfSpace {
                requested: 65,
                align: 1,
                available: 64
            }
        );
        // Exactly filling the arena works; the next byte does not.
        assert_eq!(a.alloc(64, 1).unwrap().len(), 64);
        assert!(matches!(a.alloc(1, 1), Err(MemError::OutOfSpace { .. })));
    }

    #[test]
    fn dma_bus_overflow() {
        let mut buf = [0u8; 16];
        assert_eq!(
            // SAFETY: no device is involved; only the arithmetic is tested.
            unsafe { DmaArena::new(&mut buf, u64::MAX - 4) }.unwrap_err(),
            MemError::Overflow {
                base: u64::MAX - 4,
                size: 16
            }
        );
        // SAFETY: no device is involved; only the arithmetic is tested.
        let mut a = unsafe { DmaArena::new(&mut buf, u64::MAX - 16) }.unwrap();
        assert!(matches!(
            a.alloc(1, 1 << 63),
            Err(MemError::Overflow { .. })
        ));
    }

    #[test]
    fn vram_stops_at_boot_region() {
        let mut v = VramAllocator::with_boot_region(1 << 20, 0x80_0000_0000).unwrap();
        assert_eq!(v.free(), (1 << 20) - (64 << 10));
        let r = v.alloc(4096, 4096).unwrap();
        assert_eq!((r.offset, r.mc), (0, 0x80_0000_0000));
        let err = v.alloc(1 << 20, 4096).unwrap_err();
        assert_eq!(
            err,
            MemError::OutOfSpace {
                requested: 1 << 20,
                align: 4096,
                available: (1 << 20) - (64 << 10) - 4096
            }
        );
        let rest = v.free();
        let last = v.alloc(rest, 1).unwrap();
        assert_eq!(last.end(), v.boot_region().offset);
        assert_eq!(v.free(), 0);
    }

    #[test]
    fn vram_bad_layouts() {
        assert_eq!(
            VramAllocator::new(4096, 0, 8192).unwrap_err(),
            MemError::ReserveTooLarge {
                size: 4096,
                reserve: 8192
            }
        );
        assert!(matches!(
            VramAllocator::new(1 << 20, u64::MAX, 0),
            Err(MemError::Overflow { .. })
        ));
        let small = VramAllocator::new(4096, 0, 0).unwrap();
        assert_eq!(small.discovery_table(), None);
    }
}
