//! The memory the model GPU stands on: BAR0's backing (the modelled VRAM
//! from offset 0) and the DMA region, handed to
//! `barebell_model::VirtualGpu` as a `HostMemory`, one model at a time.
//!
//! The DMA region sits where the host CLI and the hardware targets put
//! theirs, at `barebell::platform::DMA_HOST_VA` (32 TiB), so that the
//! bring-up builds the same memory layout in the VM as on the host: it
//! maps the region's ring area at GPU VA = host address, and refuses a
//! ring area that overlaps the GART or the FB (gfx12 puts the GART at MC
//! 0..512 MiB, where an identity-mapped address of this image would
//! land). Its frames are a 2 MiB-aligned static, mapped at
//! `DMA_HOST_VA` by [`init`] (`crate::paging::map_to`), with their
//! identity alias taken out of the page tables, so the only way to them
//! is through that address.
//!
//! The VRAM backing is a static too: the bring-up's VRAM allocations the
//! CPU touches end near 17 MiB (the 16 MiB VBIOS hole, VMID0's and the
//! process's page tables; `barebell_bringup::gmc`), so [`VRAM_BYTES`]
//! backs 32 MiB. The TMR the psp step places above them (0x1300000 bytes
//! on Navi31, sized by LOAD_TOC) needs no backing: neither the CPU nor
//! the model ever touches its bytes. The host CLI backs 64 MiB; nothing the
//! device sees differs, since the discovery table at the top of VRAM is
//! read through `MM_INDEX`/`MM_DATA` either way (`cargo xtask qemu`
//! compares the two bring-ups' reports and traces).

use crate::paging::{self, Cache};
use alloc::boxed::Box;
use barebell::platform::{DMA_BYTES, DMA_HOST_VA};
use barebell_model::vgpu::HostMemory;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, Ordering};

/// Bytes of modelled VRAM backed by memory (BAR0 of the model).
pub const VRAM_BYTES: usize = 32 << 20;
/// The boot code's identity map: the image, .bss included, lies below.
const BOOT_MAPPED: u64 = 1 << 30;

#[repr(C, align(4096))]
struct Vram([u8; VRAM_BYTES]);

/// 2 MiB aligned so that its frames are whole 2 MiB pages (the DMA
/// region's chunks, `barebell::platform::DMA_CHUNK`).
#[repr(C, align(0x20_0000))]
struct DmaFrames([u8; DMA_BYTES]);

static mut VRAM: Vram = Vram([0; VRAM_BYTES]);
static mut DMA: DmaFrames = DmaFrames([0; DMA_BYTES]);
/// Set by [`init`] once the frames are at `DMA_HOST_VA`.
static READY: AtomicBool = AtomicBool::new(false);
/// Held by the `HostMemory` [`take`] hands out, until it drops.
static IN_USE: AtomicBool = AtomicBool::new(false);

/// Maps the DMA frames at `DMA_HOST_VA` and unmaps their identity alias;
/// returns the frames' physical address. Called once, at boot.
pub fn init() -> Result<u64, &'static str> {
    let phys = (&raw mut DMA) as u64;
    let len = DMA_BYTES as u64;
    if phys.checked_add(len).is_none_or(|e| e > BOOT_MAPPED) {
        return Err("the DMA frames lie outside the boot identity map");
    }
    if READY.load(Ordering::Acquire) {
        return Err("the DMA region is already mapped");
    }
    paging::map_to(DMA_HOST_VA as u64, phys, len, Cache::WriteBack).map_err(|e| {
        crate::println!("UK ERROR mapping the DMA region at {DMA_HOST_VA:#x}: {e}");
        "mapping the DMA region"
    })?;
    // Nothing has used the identity addresses of these frames (only the
    // boot code's .bss clear touched them); from here on they fault.
    paging::unmap(phys, len).map_err(|e| {
        crate::println!("UK ERROR unmapping the DMA frames' identity alias: {e}");
        "unmapping the DMA alias"
    })?;
    READY.store(true, Ordering::Release);
    Ok(phys)
}

/// The VRAM backing and the DMA region, zeroed, for one model; `None`
/// while another model holds them (or before [`init`]).
pub fn take() -> Option<HostMemory> {
    if !READY.load(Ordering::Acquire) || IN_USE.swap(true, Ordering::AcqRel) {
        return None;
    }
    let vram = NonNull::new((&raw mut VRAM).cast::<u8>())?;
    let dma = NonNull::new(DMA_HOST_VA as *mut u8)?;
    // SAFETY: IN_USE was false and is now ours, so no other HostMemory
    // uses either region (the one before released IN_USE only when it
    // was dropped, after its models). VRAM is a private static reached
    // only through this pointer; the DMA frames are mapped write-back at
    // DMA_HOST_VA (READY) for DMA_BYTES. Both are writable.
    unsafe {
        vram.as_ptr().write_bytes(0, VRAM_BYTES);
        dma.as_ptr().write_bytes(0, DMA_BYTES);
    }
    let release = Box::new(|| IN_USE.store(false, Ordering::Release));
    // SAFETY: both regions are zeroed (just above) and writable; they
    // are statics, so valid forever; nothing else uses them while
    // IN_USE is held, which `release` gives back when the HostMemory
    // drops; they do not overlap (two statics, and the DMA region's
    // identity alias is unmapped, so DMA_HOST_VA is its only address);
    // DMA_HOST_VA is 2 MiB aligned and DMA_BYTES a multiple of 2 MiB.
    Some(unsafe { HostMemory::new(vram, VRAM_BYTES, dma, DMA_BYTES, Some(release)) })
}
