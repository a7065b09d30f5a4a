//! The device model as a C library (issue 15): one [`VirtualGpu`] per
//! handle, driven from outside Rust. tinygrad's AM driver reaches it
//! through `am-peer/am_peer/backend.py` (ctypes), which follows
//! `am-peer/ABI.md`; this crate is that ABI.
//!
//! Every BAR5 access is one synchronous call into the block models
//! ([`barebell::platform::Platform::regs`]); BAR0 is the model's VRAM
//! backing itself (the host stores into it, the model reads it by MC
//! address); BAR2 stores go through the NBIO doorbell aperture
//! ([`VirtualGpu::doorbell_write`]); DMA memory is carved from the
//! model's DMA region, whose bus addresses are those of the model's
//! IOMMU view.
//!
//! **Model values** (a card's VBIOS or platform decides them; none is a
//! public fact): BAR0 covers all of VRAM (a large BAR), BAR5 is 1 MiB,
//! BAR2 the model's doorbell page, and the PCI config space below.

use barebell::platform::Platform;
use barebell_model::vgpu::gfx_v9_4_3::{Gc943, RefusalMark943};
use barebell_model::vgpu::gfx_v11_0::Gfx11;
use barebell_model::vgpu::{HostMemory, REGS_BYTES, RefusalMark};
use barebell_model::{Seed, VirtualGpu, parts};
use core::ffi::{c_char, c_void};
use core::ptr::NonNull;
use std::ffi::CStr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

/// `flags` bit: refuse what the sources say hardware refuses (ABI.md).
pub const VGPU_STRICT: u32 = 1;
/// `flags` bit (MP1 13.0.6 parts): the SMU reports PMFW 85.114.0, below
/// the 85.115.0 from which Linux loads the primary sOS set
/// (`psp_v13_0_is_aux_sos_load_required()`), so the PSP takes the
/// auxiliary set, the one tinygrad's AM loads (`AMFirmware.__init__`
/// keeps the last descriptor of each type, the auxiliary set's). A
/// model value chosen for that agreement.
pub const VGPU_PMFW_BEFORE_PRIMARY_SOS: u32 = 2;
/// The PMFW version [`VGPU_PMFW_BEFORE_PRIMARY_SOS`] gives (85.114.0).
const PMFW_BEFORE_PRIMARY_SOS: u32 = 0x0055_7200;

/// Status codes (ABI.md: 0 = done, non-zero = refused).
pub const OK: i32 = 0;
/// The model refused the access (reason in `vgpu_last_error`).
pub const REFUSED: i32 = 1;
/// The arguments were out of range (offset past a BAR, bad size).
pub const BAD_ARGUMENT: i32 = 2;
/// The model panicked (a model bug; the handle is unusable after it).
pub const PANICKED: i32 = 3;

/// PCI config space size.
const CONFIG_BYTES: usize = 4096;
/// `PCI_COMMAND` (`pci_regs.h`) and its bus-master bit.
const PCI_COMMAND: usize = 0x04;
const PCI_COMMAND_MASTER: u32 = 0x4;

/// The GC generation's block models a second driver reaches: the
/// model's one [`VirtualGpu`] builds either, by the part's GC version.
enum Blocks<'a> {
    /// GC 11 / GC 12 (Navi3x, Navi4x).
    Gfx11(&'a Gfx11),
    /// GC 9.4.3 (MI300X, MI308X).
    Gc943(&'a Gc943),
}

/// Where the refusal lists stood, per generation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    Gfx11(RefusalMark),
    Gc943(RefusalMark943),
}

impl Blocks<'_> {
    fn of(gpu: &VirtualGpu) -> Option<Blocks<'_>> {
        gpu.gfx11()
            .map(Blocks::Gfx11)
            .or_else(|| gpu.gc_9_4_3().map(Blocks::Gc943))
    }
    fn set_strict(&self, on: bool) {
        match self {
            Blocks::Gfx11(g) => g.set_strict(on),
            Blocks::Gc943(g) => g.set_strict(on),
        }
    }
    fn mark(&self) -> Mark {
        match self {
            Blocks::Gfx11(g) => Mark::Gfx11(g.refusal_mark()),
            Blocks::Gc943(g) => Mark::Gc943(g.refusal_mark()),
        }
    }
    fn since(&self, mark: Mark) -> Vec<String> {
        match (self, mark) {
            (Blocks::Gfx11(g), Mark::Gfx11(m)) => g.refusals_since(m),
            (Blocks::Gc943(g), Mark::Gc943(m)) => g.refusals_since(m),
            _ => Vec::new(),
        }
    }
    fn refusals(&self) -> Vec<String> {
        match self {
            Blocks::Gfx11(g) => g.refusals(),
            Blocks::Gc943(g) => g.refusals(),
        }
    }
    fn status(&self) -> String {
        match self {
            Blocks::Gfx11(g) => g.am_status(),
            Blocks::Gc943(g) => g.am_status(),
        }
    }
    fn doorbell_write(&self, byte_offset: u64, value: u64) -> Result<(), String> {
        match self {
            Blocks::Gfx11(g) => g.doorbell_write(byte_offset, value),
            Blocks::Gc943(g) => g.doorbell_write(byte_offset, value),
        }
    }
}

/// One virtual GPU behind the C ABI.
pub struct Vgpu {
    gpu: VirtualGpu,
    strict: bool,
    /// Refusals reported so far.
    seen: Mutex<Mark>,
    last_error: Mutex<String>,
    config: Mutex<[u8; CONFIG_BYTES]>,
    /// Next free byte of the DMA region handed out by `vgpu_dma_alloc`.
    dma_next: Mutex<usize>,
}

impl core::fmt::Debug for Vgpu {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Vgpu")
            .field("gpu", &self.gpu)
            .field("strict", &self.strict)
            .finish_non_exhaustive()
    }
}

/// The config space a board shows (**model values**, as the Python
/// responder's: no Navi config dump is used): AMD's vendor id, the
/// part's device id, memory space on, a capability list PM (0x50) →
/// PCIe (0x64) with ASPM L1 enabled in LNKCTL, which tinygrad's
/// `AMDev._disable_aspm` clears.
fn config_space(device_id: u16) -> [u8; CONFIG_BYTES] {
    let mut c = [0u8; CONFIG_BYTES];
    let put16 = |c: &mut [u8; CONFIG_BYTES], at: usize, v: u16| {
        c[at..at + 2].copy_from_slice(&v.to_le_bytes());
    };
    put16(&mut c, 0x00, 0x1002); // PCI_VENDOR_ID: AMD/ATI
    put16(&mut c, 0x02, device_id);
    put16(&mut c, 0x04, 0x0002); // PCI_COMMAND_MEMORY
    put16(&mut c, 0x06, 0x0010); // PCI_STATUS_CAP_LIST
    c[0x0B] = 0x03; // PCI_CLASS_DISPLAY
    c[0x34] = 0x50; // PCI_CAPABILITY_LIST
    c[0x50] = 0x01; // PCI_CAP_ID_PM
    c[0x51] = 0x64;
    c[0x64] = 0x10; // PCI_CAP_ID_EXP
    put16(&mut c, 0x64 + 0x10, 0x0002); // PCI_EXP_LNKCTL: ASPM L1
    c
}

/// Host memory the device reaches by DMA through the C ABI: 512 MiB
/// (**model value**), lazily backed like VRAM. tinygrad's `AMDDevice`
/// puts what the CPU and GPU both touch there (`PCIIfaceBase.alloc`:
/// `uncached and cpu_access` on a large BAR, `host=True`): its 16 MiB
/// compute and SDMA rings, signal pages and 32 x 2 MiB copy buffers
/// (`HCQAllocatorBase`), far past the runtime's own 4 MiB
/// (`barebell::platform::DMA_BYTES`).
pub const DMA_BYTES: usize = 512 << 20;

/// VRAM backing: an anonymous private mapping with no swap reservation,
/// so a 24 GiB part costs only the pages a driver touches; the DMA
/// region ([`DMA_BYTES`]): 2 MiB aligned (HostMemory's contract).
fn host_memory(vram_len: usize) -> Option<HostMemory> {
    const ALIGN: usize = 2 << 20;
    let map = |len: usize| {
        // SAFETY: a fresh anonymous mapping; nothing else refers to it.
        let p = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(p as usize)
    };
    let vram = map(vram_len)?;
    let Some(dma_raw) = map(DMA_BYTES + ALIGN) else {
        // SAFETY: the mapping made just above.
        unsafe { libc::munmap(vram as *mut c_void, vram_len) };
        return None;
    };
    let dma = (dma_raw + ALIGN - 1) & !(ALIGN - 1);
    let release = Box::new(move || {
        // SAFETY: the two mappings made above, released once.
        unsafe {
            libc::munmap(vram as *mut c_void, vram_len);
            libc::munmap(dma_raw as *mut c_void, DMA_BYTES + ALIGN);
        }
    });
    let (v, d) = (
        NonNull::new(vram as *mut u8)?,
        NonNull::new(dma as *mut u8)?,
    );
    // SAFETY: both are fresh zeroed anonymous mappings owned by the
    // returned value until `release`; disjoint; `dma` is 2 MiB aligned
    // inside its mapping with DMA_BYTES (whole chunks) after it.
    Some(unsafe { HostMemory::new(v, vram_len, d, DMA_BYTES, Some(release)) })
}

impl Vgpu {
    fn new(part: &str, seed: u64, flags: u32) -> Result<Self, String> {
        let mut p = parts::by_name(part).ok_or_else(|| format!("unknown part {part:?}"))?;
        if flags & VGPU_PMFW_BEFORE_PRIMARY_SOS != 0 {
            p.firmware.pmfw = Some(PMFW_BEFORE_PRIMARY_SOS);
        }
        let device_id = p.pci_device_id();
        let vram_len = (p.firmware.vram_mib as usize) << 20;
        let memory = host_memory(vram_len)
            .ok_or_else(|| format!("no host memory for {vram_len:#x} bytes of VRAM"))?;
        let fw = barebell_model::FilesDir::system();
        let gpu = VirtualGpu::new(p, &fw, memory, Seed(seed)).map_err(|e| e.to_string())?;
        // Every part the model builds: tinygrad's AM drives GC 11, GC 12
        // and GC 9.4.3 (`AM_GFX`, `AM_SOC` branch on `ip_ver`).
        let Some(am) = Blocks::of(&gpu) else {
            return Err(format!(
                "part {part:?} has no GC block models a driver can reach through the C ABI"
            ));
        };
        let strict = flags & VGPU_STRICT != 0;
        am.set_strict(strict);
        let gpu_mark = am.mark();
        Ok(Vgpu {
            gpu,
            strict,
            seen: Mutex::new(gpu_mark),
            last_error: Mutex::new(String::new()),
            config: Mutex::new(config_space(device_id)),
            dma_next: Mutex::new(0),
        })
    }

    fn set_error(&self, text: String) {
        if let Ok(mut e) = self.last_error.lock() {
            *e = text;
        }
    }

    /// After an access: new refusals become the last error; in strict
    /// mode they fail the access.
    fn check(&self, what: impl FnOnce() -> String) -> i32 {
        let Some(am) = Blocks::of(&self.gpu) else {
            return REFUSED;
        };
        let n = am.mark();
        let Ok(mut seen) = self.seen.lock() else {
            return PANICKED;
        };
        if n == *seen {
            return OK;
        }
        let new = am.since(*seen);
        *seen = n;
        self.set_error(format!("{}: {}", what(), new.join("; ")));
        if self.strict { REFUSED } else { OK }
    }
}

/// Runs `f` on the handle, turning a null handle or a panic into a status.
fn with(v: *mut Vgpu, f: impl FnOnce(&Vgpu) -> i32) -> i32 {
    // SAFETY: the caller passes a handle from `vgpu_new` not yet freed
    // (ABI.md), or null.
    let Some(v) = (unsafe { v.as_ref() }) else {
        return BAD_ARGUMENT;
    };
    catch_unwind(AssertUnwindSafe(|| f(v))).unwrap_or_else(|_| {
        v.set_error("the model panicked (a model bug)".into());
        PANICKED
    })
}

/// # Safety
/// `part` is a NUL-terminated string or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_new(part: *const c_char, seed: u64, flags: u32) -> *mut Vgpu {
    if part.is_null() {
        return core::ptr::null_mut();
    }
    // SAFETY: non-null, NUL-terminated (the caller's promise).
    let Ok(name) = unsafe { CStr::from_ptr(part) }.to_str() else {
        return core::ptr::null_mut();
    };
    match catch_unwind(|| Vgpu::new(name, seed, flags)) {
        Ok(Ok(v)) => Box::into_raw(Box::new(v)),
        Ok(Err(e)) => {
            eprintln!("vgpu_new({name}): {e}");
            core::ptr::null_mut()
        }
        Err(_) => core::ptr::null_mut(),
    }
}

/// # Safety
/// `v` comes from `vgpu_new` and is not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_free(v: *mut Vgpu) {
    if !v.is_null() {
        // SAFETY: from Box::into_raw in vgpu_new, freed once.
        drop(unsafe { Box::from_raw(v) });
    }
}

/// Copies `text` NUL-terminated into `buf` (truncated), returns its length.
fn copy_out(text: &str, buf: *mut c_char, len: usize) -> usize {
    if !buf.is_null() && len > 0 {
        let n = text.len().min(len - 1);
        // SAFETY: the caller gives `len` writable bytes at `buf`.
        unsafe {
            core::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    text.len()
}

/// # Safety
/// `v` from `vgpu_new`; `buf` has `len` writable bytes (or is null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_last_error(v: *mut Vgpu, buf: *mut c_char, len: usize) -> usize {
    // SAFETY: the caller's promise.
    let Some(v) = (unsafe { v.as_ref() }) else {
        return 0;
    };
    let text = v.last_error.lock().map(|e| e.clone()).unwrap_or_default();
    copy_out(&text, buf, len)
}

/// Every refusal so far, one a line (not in ABI.md's first draft: the
/// harness prints them after a non-strict run).
///
/// # Safety
/// As `vgpu_last_error`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_refusals(v: *mut Vgpu, buf: *mut c_char, len: usize) -> usize {
    // SAFETY: the caller's promise.
    let Some(v) = (unsafe { v.as_ref() }) else {
        return 0;
    };
    let text = Blocks::of(&v.gpu).map(|am| am.refusals().join("\n"));
    copy_out(&text.unwrap_or_default(), buf, len)
}

/// What the model's blocks show, one fact a line (HQDs, MEC, SMU, SDMA).
///
/// # Safety
/// As `vgpu_last_error`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_status(v: *mut Vgpu, buf: *mut c_char, len: usize) -> usize {
    // SAFETY: the caller's promise.
    let Some(v) = (unsafe { v.as_ref() }) else {
        return 0;
    };
    let text = Blocks::of(&v.gpu).map(|am| am.status());
    copy_out(&text.unwrap_or_default(), buf, len)
}

/// # Safety
/// `v` from `vgpu_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_bar_len(v: *mut Vgpu, bar: u32) -> u64 {
    // SAFETY: the caller's promise.
    let Some(v) = (unsafe { v.as_ref() }) else {
        return 0;
    };
    match bar {
        0 => v.gpu.vram().len as u64,
        2 => v.gpu.doorbells().len as u64,
        5 => REGS_BYTES as u64,
        _ => 0,
    }
}

/// # Safety
/// `v` from `vgpu_new`; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_bar5_read32(v: *mut Vgpu, dword: u64, out: *mut u32) -> i32 {
    with(v, |v| {
        let at = dword as usize * 4;
        if at >= REGS_BYTES || out.is_null() {
            v.set_error(format!("BAR5 read of dword {dword:#x}: past the 1 MiB BAR"));
            return BAD_ARGUMENT;
        }
        let value = v.gpu.regs().read32(at);
        // SAFETY: non-null, writable (the caller's promise).
        unsafe { *out = value };
        v.check(|| format!("BAR5 read of byte {at:#x}"))
    })
}

/// # Safety
/// `v` from `vgpu_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_bar5_write32(v: *mut Vgpu, dword: u64, value: u32) -> i32 {
    with(v, |v| {
        let at = dword as usize * 4;
        if at >= REGS_BYTES {
            v.set_error(format!(
                "BAR5 write of dword {dword:#x}: past the 1 MiB BAR"
            ));
            return BAD_ARGUMENT;
        }
        v.gpu.regs().write32(at, value);
        v.check(|| format!("BAR5 write of {value:#x} to byte {at:#x}"))
    })
}

/// # Safety
/// `v` from `vgpu_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_vram_ptr(v: *mut Vgpu) -> *mut u8 {
    // SAFETY: the caller's promise.
    match unsafe { v.as_ref() } {
        Some(v) => v.gpu.vram().host.as_ptr(),
        None => core::ptr::null_mut(),
    }
}

/// # Safety
/// `v` from `vgpu_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_doorbell_write64(v: *mut Vgpu, byte_offset: u64, value: u64) -> i32 {
    with(v, |v| {
        match Blocks::of(&v.gpu).map(|am| am.doorbell_write(byte_offset, value)) {
            Some(Ok(())) => v.check(|| format!("doorbell store at BAR2 byte {byte_offset:#x}")),
            Some(Err(e)) => {
                v.set_error(e);
                REFUSED
            }
            None => REFUSED,
        }
    })
}

/// Host memory the device reaches by DMA, from the model's DMA region
/// (4 KiB aligned), and its bus address in the model's IOMMU view.
///
/// # Safety
/// `v` from `vgpu_new`; `host` and `bus` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_dma_alloc(
    v: *mut Vgpu,
    size: u64,
    host: *mut *mut u8,
    bus: *mut u64,
) -> i32 {
    with(v, |v| {
        if host.is_null() || bus.is_null() {
            return BAD_ARGUMENT;
        }
        let region = v.gpu.dma();
        let Ok(mut next) = v.dma_next.lock() else {
            return PANICKED;
        };
        let at = (*next + 0xFFF) & !0xFFF;
        let size = size as usize;
        let chunk = barebell::platform::DMA_CHUNK;
        // One allocation stays inside one chunk: chunks are contiguous on
        // the bus only by the model's choice, so a caller must not assume it.
        let at = if at / chunk != (at + size.max(1) - 1) / chunk {
            (at / chunk + 1) * chunk
        } else {
            at
        };
        let Some(b) = region.chunk_bus.get(at / chunk) else {
            v.set_error(format!(
                "DMA allocation of {size:#x} bytes: the model's {:#x}-byte DMA region is full",
                region.len
            ));
            return REFUSED;
        };
        if size > chunk || at + size > region.len {
            v.set_error(format!(
                "DMA allocation of {size:#x} bytes: larger than a {chunk:#x}-byte chunk or past the region"
            ));
            return REFUSED;
        }
        *next = at + size;
        // SAFETY: non-null and writable (the caller's promise); `at` lies
        // inside the region.
        unsafe {
            *host = region.host.as_ptr().add(at);
            *bus = b + (at % chunk) as u64;
        }
        OK
    })
}

/// # Safety
/// `v` from `vgpu_new`; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_config_read(
    v: *mut Vgpu,
    offset: u32,
    size: u32,
    out: *mut u32,
) -> i32 {
    with(v, |v| {
        let (o, n) = (offset as usize, size as usize);
        if !matches!(n, 1 | 2 | 4) || o + n > CONFIG_BYTES || out.is_null() {
            return BAD_ARGUMENT;
        }
        let Ok(c) = v.config.lock() else {
            return PANICKED;
        };
        let mut b = [0u8; 4];
        b[..n].copy_from_slice(&c[o..o + n]);
        // SAFETY: non-null, writable (the caller's promise).
        unsafe { *out = u32::from_le_bytes(b) };
        OK
    })
}

/// # Safety
/// `v` from `vgpu_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_config_write(
    v: *mut Vgpu,
    offset: u32,
    size: u32,
    value: u32,
) -> i32 {
    with(v, |v| {
        let (o, n) = (offset as usize, size as usize);
        if !matches!(n, 1 | 2 | 4) || o + n > CONFIG_BYTES {
            return BAD_ARGUMENT;
        }
        let Ok(mut c) = v.config.lock() else {
            return PANICKED;
        };
        c[o..o + n].copy_from_slice(&value.to_le_bytes()[..n]);
        if o <= PCI_COMMAND && PCI_COMMAND < o + n {
            let cmd = u32::from(c[PCI_COMMAND]);
            v.gpu.set_bus_master(cmd & PCI_COMMAND_MASTER != 0);
        }
        OK
    })
}

/// Gives the model a turn: the firmware stand-ins and the CP run
/// ([`Platform::pause`]).
///
/// # Safety
/// `v` from `vgpu_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vgpu_service(v: *mut Vgpu) -> i32 {
    with(v, |v| {
        v.gpu.pause();
        v.check(|| "service".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every part the model builds is served (the ABI refused MI300X
    /// before): the new device has the discovery table where the IFWI
    /// leaves it, VRAM size − 64 KiB (`amdgpu_discovery_read_binary_from_mem()`),
    /// starting with `BINARY_SIGNATURE` 0x28211407 (`discovery.h`).
    #[test]
    fn mi300x_is_served_with_its_discovery_table_in_vram() {
        for part in ["mi300x", "mi308x"] {
            let v = Vgpu::new(part, 0, VGPU_STRICT | VGPU_PMFW_BEFORE_PRIMARY_SOS)
                .unwrap_or_else(|e| panic!("{part}: {e}"));
            let vram = v.gpu.vram();
            let at = vram.len - (64 << 10);
            // SAFETY: `at + 4` lies inside the VRAM backing the device owns.
            let sig =
                unsafe { core::ptr::read_unaligned(vram.host.as_ptr().add(at) as *const u32) };
            assert_eq!(sig, 0x2821_1407, "{part}");
            assert!(Blocks::of(&v.gpu).is_some_and(|b| b.refusals().is_empty()));
        }
    }

    #[test]
    fn config_space_reaches_the_pcie_capability() {
        let c = config_space(0x744C);
        // The walk AMDev._disable_aspm makes: 0x34 → PM → PCIe (id 0x10).
        let mut at = usize::from(c[0x34]);
        let mut hops = 0;
        while c[at] != 0x10 {
            at = usize::from(c[at + 1]);
            hops += 1;
            assert!(at != 0 && hops < 8, "no PCIe capability");
        }
        assert_eq!(at, 0x64);
        assert_eq!(c[at + 0x10] & 0x3, 0x2, "ASPM L1 on, to be cleared");
    }
}
