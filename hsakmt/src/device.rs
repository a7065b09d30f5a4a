//! The device under the library: barebell's bring-up of the MI210 model,
//! opened by `hsaKmtOpenKFD` and torn down by `hsaKmtCloseKFD` or at
//! process exit, and the memory it hands out.
//!
//! Memory: the bring-up's gmc step maps its user memory (part of the DMA
//! region) and user VRAM (at its host address through BAR0) into the
//! process page tables at GPU VA = host address, the tables every user
//! queue's VMID walks. This library takes both out of the tables at open,
//! hands them out first-fit ([`Heap`]) and maps each buffer back when ROCR
//! maps it ([`Kfd::map_allocation`]), as KFD maps a BO: a buffer is
//! reached by the device at the address ROCR puts in packets (ROCR assumes
//! GPU VA = CPU VA) only while it is mapped. A scratch allocation (`HsaMemFlags.Scratch`) is a reservation
//! of address space only, as the thunk's is: ROCR backs parts of it later
//! with `hsaKmtMapMemoryToGPU`, and this library puts user VRAM there
//! ([`Kfd::map_scratch`]).

use crate::backend::{Backend, Choice};
use crate::topology::{GpuFacts, HostFacts, MI210_GFX_INFO, Topology};
use barebell_bringup::{FirmwareDir, Gpu, Mapping, Options, Quiet, Step};
use barebell_model::VirtualGpu;
use barebell_model::vgpu::HostMemory;
use std::collections::BTreeMap;

/// Bytes of user memory the bring-up maps for ROCR's allocations.
pub const USER_MEMORY_BYTES: usize = 64 << 20;
/// VRAM backing of the model (the part's BAR0 window).
pub const MODEL_VRAM_BYTES: usize = 384 << 20;
/// Bytes of that VRAM the bring-up maps for ROCR's VRAM allocations.
pub const USER_VRAM_BYTES: usize = 256 << 20;
/// Allocation granularity (`PAGE_SIZE`).
pub const PAGE: u64 = 4096;
/// Process page tables kept for registered memory (each maps up to 2 MiB
/// of a new region; 1 MiB of VRAM).
pub const SPARE_TABLES: usize = 256;
/// The DMA region a card is opened with: the bring-up's own 4 MiB and
/// the user memory, as the model's (`build_model`).
pub const CARD_DMA_BYTES: usize = (4 << 20) + USER_MEMORY_BYTES;

/// A queue [`Kfd::create_queue`] made: its id, ROCR's doorbell pointer,
/// and for an SDMA queue the read and write pointer addresses.
pub type MadeQueue = (u64, *mut u64, Option<(u64, u64)>);

/// Why the device could not be opened.
#[derive(Debug)]
pub enum OpenError {
    Model(String),
    Bringup(String),
    NoUserMemory,
    /// `BAREBELL_HSAKMT_DEVICE` is not a device this library can name.
    Device(String),
    /// The card could not be opened (`barebell-host`'s refusal).
    Card(String),
    /// The device is not a GC 9.4.2 (MI210-class) part.
    NotGfx90a {
        gc: (u8, u8, u8),
    },
}

pub use crate::backend::DEVICE_VAR;

impl core::fmt::Display for OpenError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            OpenError::Model(e) => write!(f, "building the MI210 model: {e}"),
            OpenError::Bringup(e) => write!(f, "bringing the device up: {e}"),
            OpenError::NoUserMemory => write!(f, "the bring-up left no user memory"),
            OpenError::Device(e) => f.write_str(e),
            OpenError::Card(e) => write!(f, "opening the card: {e}"),
            OpenError::NotGfx90a { gc: (a, b, c) } => write!(
                f,
                "the device has GC {a}.{b}.{c}; this library drives GC 9.4.2 (gfx90a: MI210) only, the newest part ROCm 5.2.3's ROCR knows that barebell brings up"
            ),
        }
    }
}

/// First-fit over one address range, page granular.
#[derive(Debug)]
pub struct Heap {
    /// Free ranges, start → length.
    free: BTreeMap<u64, u64>,
    range: (u64, u64),
}

impl Heap {
    /// The whole of `[start, start + len)` free.
    pub fn new(start: u64, len: u64) -> Heap {
        let mut free = BTreeMap::new();
        if len > 0 {
            free.insert(start, len);
        }
        Heap {
            free,
            range: (start, start.saturating_add(len)),
        }
    }

    /// `size` bytes (rounded up to pages) aligned to `align` (a power of
    /// two, at least a page), or `None`.
    pub fn alloc(&mut self, size: u64, align: u64) -> Option<u64> {
        let size = size.max(1).checked_next_multiple_of(PAGE)?;
        let align = align.max(PAGE).checked_next_power_of_two()?;
        let (start, len, at) = self.free.iter().find_map(|(&s, &l)| {
            let at = s.checked_next_multiple_of(align)?;
            (at.checked_add(size)? <= s + l).then_some((s, l, at))
        })?;
        self.free.remove(&start);
        if at > start {
            self.free.insert(start, at - start);
        }
        let end = at + size;
        if end < start + len {
            self.free.insert(end, start + len - end);
        }
        Some(at)
    }

    /// Gives `[at, at + size)` back, merging with its neighbours.
    pub fn free(&mut self, at: u64, size: u64) {
        let Some(size) = size.max(1).checked_next_multiple_of(PAGE) else {
            return;
        };
        let (mut start, mut len) = (at, size);
        if let Some((&s, &l)) = self.free.range(..at).next_back()
            && s + l == at
        {
            self.free.remove(&s);
            start = s;
            len += l;
        }
        if let Some(&l) = self.free.get(&(at + size)) {
            self.free.remove(&(at + size));
            len += l;
        }
        self.free.insert(start, len);
    }

    /// Whether `[at, at + len)` lies inside the heap's range.
    pub fn contains(&self, at: u64, len: u64) -> bool {
        at >= self.range.0 && at.checked_add(len).is_some_and(|e| e <= self.range.1)
    }

    /// Free bytes.
    pub fn free_bytes(&self) -> u64 {
        self.free.values().sum()
    }
}

/// What an allocation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// From the user-memory heap (in the process tables while mapped).
    System,
    /// From the user VRAM (`NonPaged` on the GPU node): mapped in the
    /// process tables at its host address through BAR0 while mapped.
    Vram,
    /// An address-space reservation (`mmap(PROT_NONE)`), scratch.
    Reserved,
    /// The caller's own host memory (`hsaKmtRegisterMemoryWithFlags`),
    /// keyed by the address it gave; reached by the device through an
    /// IOMMU-style window once mapped ([`Kfd::map_registered`]).
    Registered,
}

/// One allocation ROCR holds.
#[derive(Debug, Clone, Copy)]
pub struct Allocation {
    pub size: u64,
    pub node: u32,
    pub flags: u32,
    pub kind: Kind,
    pub user_data: u64,
    /// Mapped for the GPU (`hsaKmtMapMemoryToGPU(Nodes)`, until
    /// `hsaKmtUnmapMemoryToGPU`).
    pub gpu_mapped: bool,
    /// Registered memory while mapped: the bus address of its pages.
    pub bus: u64,
}

/// The open device.
pub struct Kfd {
    /// The model or the card, for the process's life (the bring-up
    /// borrows it).
    backend: Backend,
    gpu: Option<Gpu<'static>>,
    pub topology: Topology,
    pub heap: Heap,
    /// The user VRAM, at GPU VA = its host address.
    pub vram: Heap,
    pub allocations: BTreeMap<u64, Allocation>,
    /// The trap handler and its memory (`hsaKmtSetTrapHandler`): TBA and
    /// TMA addresses and sizes, for the runlist's MAP_PROCESS.
    pub trap: Option<[u64; 4]>,
    /// The user queues ROCR made ([`crate::queues`]).
    pub queues: crate::queues::Queues,
    /// `adev->gfx.config.gb_addr_config` as `gfx_v9_0_gpu_early_init()`
    /// derives it on GC 9.4.2 from the device's `GB_ADDR_CONFIG`, for
    /// `hsaKmtGetTileConfig`.
    pub gb_addr_config: u32,
    /// CP errors and MEC refusals already reported, and whether the
    /// device moved since the last look at them ([`Kfd::step`]).
    reported: (usize, usize),
    moved: bool,
    /// The bus window for registered memory, first-fit.
    iova: Heap,
    /// SDMA queues' read and write pointers: the page the library gave
    /// each queue (by queue id).
    queue_pointers: BTreeMap<u64, u64>,
    /// Scratch backing: pieces of a scratch reservation ROCR mapped,
    /// each backed by user VRAM (VA → VRAM host address, length).
    scratch: BTreeMap<u64, (u64, u64)>,
}

impl core::fmt::Debug for Kfd {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kfd")
            .field("allocations", &self.allocations.len())
            .field("free", &self.heap.free_bytes())
            .finish_non_exhaustive()
    }
}

impl Kfd {
    /// Builds the MI210 model and brings it up to its queue step with the
    /// HWS mapping (KFD's CPSCH: the HIQ mapped through the KIQ, a runlist
    /// with the bring-up's own queue, whose first barrier completed), with
    /// user memory for ROCR. ROCR's queues join that runlist
    /// ([`crate::queues`]).
    pub fn open() -> Result<Kfd, OpenError> {
        let var = std::env::var_os(DEVICE_VAR);
        let var = var.as_ref().map(|v| v.to_string_lossy());
        // Refused before anything is built or opened.
        let physical =
            std::env::var_os(crate::backend::UNSAFE_PHYSICAL_DMA_VAR).is_some_and(|v| v == "1");
        let chosen = crate::backend::choice(var.as_deref(), physical).map_err(OpenError::Device)?;
        let backend = match chosen {
            Choice::Model => Backend::Model(build_model()?),
            Choice::Card(target) => {
                let card = barebell_host::HwPlatform::open_with_dma(target, CARD_DMA_BYTES)
                    .map_err(|e| OpenError::Card(e.to_string()))?;
                // Kept for the process's life, as the model is: the device
                // may reach its DMA memory until the teardown, and the
                // process exit closes the VFIO descriptors.
                Backend::Card(Box::leak(Box::new(card)))
            }
        };
        Kfd::open_on(backend)
    }

    /// Brings `backend` up to its queue step with the HWS and takes its
    /// user memory (the model's or a card's: the same steps).
    pub fn open_on(backend: Backend) -> Result<Kfd, OpenError> {
        let opts = Options {
            until: Step::Queue,
            mapping: Some(Mapping::Hws),
            user_memory: USER_MEMORY_BYTES,
            user_vram: USER_VRAM_BYTES,
            user_vram_va: barebell_bringup::gmc::UserVramVa::Host,
            spare_tables: SPARE_TABLES,
        };
        let mut gpu =
            barebell_bringup::run(backend.platform(), &FirmwareDir::system(), &opts, &Quiet)
                .map_err(|e| OpenError::Bringup(e.to_string()))?;
        // From here every refusal tears the device down first.
        match Opened::take(&mut gpu, backend) {
            Ok(o) => {
                let (bus, bus_len) = backend.registration_window();
                Ok(Kfd {
                    backend,
                    gpu: Some(gpu),
                    topology: o.topology,
                    heap: Heap::new(o.user.0, o.user.1),
                    vram: Heap::new(o.vram.0, o.vram.1),
                    allocations: BTreeMap::new(),
                    trap: None,
                    queues: crate::queues::Queues::default(),
                    reported: (0, 0),
                    moved: false,
                    iova: Heap::new(bus, bus_len),
                    queue_pointers: BTreeMap::new(),
                    scratch: BTreeMap::new(),
                    gb_addr_config: o.gb_addr_config,
                })
            }
            Err(e) => {
                let report = gpu.shutdown();
                if !report.complete() {
                    eprintln!("barebell libhsakmt: teardown: {report}");
                }
                Err(e)
            }
        }
    }

    /// `hsaKmtCreateQueue` ([`crate::queues`]): the queue id, ROCR's
    /// doorbell pointer, and for an SDMA queue the read and write pointer
    /// addresses the library gave it.
    ///
    /// An SDMA queue's pointers live in a page the library allocates,
    /// zeroes and maps for the GPU, as the thunk's `hsaKmtCreateQueue`
    /// puts them in its own `struct queue` (GPU-mapped system memory) and
    /// hands KFD `&q->rptr` and `&q->wptr`; the page goes with the queue.
    pub fn create_queue(
        &mut self,
        r: &crate::queues::QueueRequest,
    ) -> Result<MadeQueue, crate::queues::QueueError> {
        use crate::queues::QueueError;
        let mut r = *r;
        let page = if crate::queues::is_sdma(r.ty) {
            let page = self.pointer_page().map_err(|e| {
                eprintln!("barebell libhsakmt: an SDMA queue's pointers: {e}");
                QueueError::NoMemory
            })?;
            r.read_pointer = page;
            r.write_pointer = page + 8;
            Some(page)
        } else {
            None
        };
        let allocations = &self.allocations;
        let made = self.queues.create(self.gpu.as_mut(), &r, |at, len| {
            queue_buffer_ok(allocations, at, len)
        });
        match (made, page) {
            (Ok((id, doorbell)), Some(page)) => {
                self.queue_pointers.insert(id, page);
                Ok((id, doorbell, Some((page, page + 8))))
            }
            (Ok((id, doorbell)), None) => Ok((id, doorbell, None)),
            (Err(e), page) => {
                if let Some(page) = page {
                    self.free_pointer_page(page);
                }
                Err(e)
            }
        }
    }

    /// The scratch reservation (`HsaMemFlags.Scratch`) that holds
    /// `[at, at + len)`, by its first address.
    pub fn scratch_reservation(&self, at: u64, len: u64) -> Option<u64> {
        self.allocations
            .range(..=at)
            .next_back()
            .filter(|(k, a)| {
                a.kind == Kind::Reserved
                    && at.checked_add(len).is_some_and(|end| end <= **k + a.size)
            })
            .map(|(k, _)| *k)
    }

    /// Backs `[at, at + len)` of a scratch reservation with VRAM, as the
    /// thunk's `_fmm_map_to_gpu_scratch()` creates a VRAM BO at exactly
    /// that address and KFD maps it (`ALLOC_MEMORY_OF_GPU` with VRAM and
    /// WRITABLE, then `MAP_MEMORY_TO_GPU`): a piece of the user VRAM,
    /// mapped at `at` in the process tables. ROCR maps a piece for a
    /// queue's scratch when its dynamic-scratch handler runs. The model's
    /// wave interpreter keeps each lane's private segment itself (*model
    /// convention*), so this memory is what the device's tables show, not
    /// what its waves read.
    pub fn map_scratch(&mut self, at: u64, len: u64) -> Result<(), String> {
        if !at.is_multiple_of(PAGE) {
            return Err(format!("{at:#x} is not page aligned"));
        }
        let len = len.max(1).next_multiple_of(PAGE);
        if self.scratch.get(&at).is_some_and(|(_, n)| *n == len) {
            return Ok(());
        }
        let clash = self
            .scratch
            .iter()
            .any(|(&v, &(_, n))| v < at + len && at < v + n);
        if clash {
            return Err("the range overlaps scratch already mapped".into());
        }
        let vram = self.vram.alloc(len, PAGE).ok_or("the user VRAM is full")?;
        let gpu = self.gpu.as_mut().ok_or("the device is closed")?;
        let access = barebell_bringup::process_vm::Access {
            writeable: true,
            executable: false,
        };
        if let Err(e) = gpu.map_vram(at, vram, len, access) {
            self.vram.free(vram, len);
            return Err(e.to_string());
        }
        self.scratch.insert(at, (vram, len));
        Ok(())
    }

    /// Undoes [`Kfd::map_scratch`] for the piece at `at`: out of the
    /// process tables (TLBs flushed), its VRAM back. `Ok(false)` if no
    /// piece starts there.
    pub fn unmap_scratch(&mut self, at: u64) -> Result<bool, String> {
        let Some(&(vram, len)) = self.scratch.get(&at) else {
            return Ok(false);
        };
        let gpu = self.gpu.as_mut().ok_or("the device is closed")?;
        gpu.unmap_process(at, len).map_err(|e| e.to_string())?;
        self.scratch.remove(&at);
        self.vram.free(vram, len);
        Ok(true)
    }

    /// Every scratch piece inside `[at, at + len)` unmapped (the
    /// reservation is being freed).
    pub fn unmap_scratch_in(&mut self, at: u64, len: u64) -> Result<(), String> {
        let inside: Vec<u64> = self
            .scratch
            .range(at..at.saturating_add(len))
            .map(|(v, _)| *v)
            .collect();
        for v in inside {
            self.unmap_scratch(v)?;
        }
        Ok(())
    }

    /// A zeroed page of user memory, mapped for the GPU and kept as an
    /// allocation (so a queue's buffer checks find it).
    fn pointer_page(&mut self) -> Result<u64, String> {
        let page = self.heap.alloc(PAGE, PAGE).ok_or("user memory is full")?;
        // SAFETY: the heap hands out pages of this library's user memory
        // (host memory at its own address, alive until the process ends)
        // that nothing else holds.
        unsafe { core::ptr::write_bytes(page as *mut u8, 0, PAGE as usize) };
        self.allocations.insert(
            page,
            Allocation {
                size: PAGE,
                node: 0,
                flags: 0,
                kind: Kind::System,
                user_data: 0,
                gpu_mapped: false,
                bus: 0,
            },
        );
        if let Err(e) = self.map_allocation(page) {
            self.allocations.remove(&page);
            self.heap.free(page, PAGE);
            return Err(e);
        }
        Ok(page)
    }

    /// Undoes [`Kfd::pointer_page`].
    fn free_pointer_page(&mut self, page: u64) {
        if let Err(e) = self.unmap_allocation(page) {
            eprintln!("barebell libhsakmt: unmapping an SDMA queue's pointers: {e}");
            return;
        }
        self.allocations.remove(&page);
        self.heap.free(page, PAGE);
    }

    /// `hsaKmtUpdateQueue` ([`crate::queues::Queues::update`]).
    pub fn update_queue(
        &mut self,
        id: u64,
        percentage: u32,
        priority: i32,
        (ring, ring_bytes): (u64, u64),
    ) -> Result<(), crate::queues::QueueError> {
        let allocations = &self.allocations;
        self.queues.update(
            self.gpu.as_mut(),
            id,
            percentage,
            priority,
            ring,
            ring_bytes,
            |at, len| queue_buffer_ok(allocations, at, len),
        )
    }

    /// `hsaKmtDestroyQueue` (an SDMA queue's pointer page goes with it).
    pub fn destroy_queue(&mut self, id: u64) -> Result<(), crate::queues::QueueError> {
        self.queues.destroy(self.gpu.as_mut(), id)?;
        if let Some(page) = self.queue_pointers.remove(&id) {
            self.free_pointer_page(page);
        }
        Ok(())
    }

    /// Maps the allocation at `key` (system memory or VRAM) for the GPU,
    /// as KFD maps a BO (`kfd_ioctl_map_memory_to_gpu()`): its pages
    /// back in the process tables, writable unless allocated `ReadOnly`,
    /// executable only if allocated `ExecuteAccess`
    /// (`AMDGPU_VM_PAGE_EXECUTABLE`), then the TLBs flushed. Registered
    /// memory goes through [`Kfd::map_registered`].
    pub fn map_allocation(&mut self, key: u64) -> Result<(), String> {
        let a = *self
            .allocations
            .get(&key)
            .ok_or("not an allocation of this library")?;
        match a.kind {
            Kind::Registered => return self.map_registered(key),
            Kind::Reserved => return self.map_scratch(key, a.size),
            Kind::System | Kind::Vram => {}
        }
        if a.gpu_mapped {
            return Ok(());
        }
        let access = barebell_bringup::process_vm::Access {
            writeable: a.flags & crate::abi::mem_flags::READ_ONLY == 0,
            executable: a.flags & crate::abi::mem_flags::EXECUTE_ACCESS != 0,
        };
        let len = a.size.max(1).next_multiple_of(PAGE);
        let gpu = self.gpu.as_mut().ok_or("the device is closed")?;
        gpu.map_user_range(key, len, access)
            .map_err(|e| e.to_string())?;
        if let Some(a) = self.allocations.get_mut(&key) {
            a.gpu_mapped = true;
        }
        Ok(())
    }

    /// Undoes [`Kfd::map_allocation`] (or [`Kfd::unmap_registered`]):
    /// the pages out of the process tables, TLBs flushed.
    pub fn unmap_allocation(&mut self, key: u64) -> Result<(), String> {
        let a = *self
            .allocations
            .get(&key)
            .ok_or("not an allocation of this library")?;
        if a.kind == Kind::Registered {
            return self.unmap_registered(key);
        }
        if !a.gpu_mapped {
            return Ok(());
        }
        let len = a.size.max(1).next_multiple_of(PAGE);
        let gpu = self.gpu.as_mut().ok_or("the device is closed")?;
        gpu.unmap_process(key, len).map_err(|e| e.to_string())?;
        if let Some(a) = self.allocations.get_mut(&key) {
            a.gpu_mapped = false;
        }
        Ok(())
    }

    /// `hsaKmtRegisterMemoryWithFlags`: `[at, at + size)` of the caller's
    /// memory recorded as registered (the thunk's userptr BO); the device
    /// reaches it once mapped. A second registration of the same address
    /// is refused (the thunk counts it), and so is one that shares a page
    /// with another buffer: each registered buffer gets its own window.
    pub fn register(&mut self, at: u64, size: u64, flags: u32) -> Result<(), &'static str> {
        let (lo, hi) = pages_of(at, size).ok_or("the range wraps")?;
        let clash = self.allocations.iter().any(|(&k, a)| {
            let (alo, ahi) = pages_of(k, a.size).unwrap_or((k, k));
            alo < hi && lo < ahi
        });
        if clash {
            return Err("the range shares a page with a buffer this library already knows");
        }
        self.allocations.insert(
            at,
            Allocation {
                size,
                node: 0,
                flags,
                kind: Kind::Registered,
                user_data: 0,
                gpu_mapped: false,
                bus: 0,
            },
        );
        Ok(())
    }

    /// Maps registered memory for the GPU: its pages get a window on the
    /// model's bus (what `VFIO_IOMMU_MAP_DMA` does for pinned pages) and
    /// the process tables map their host addresses there, as KFD maps a
    /// userptr BO (`amdgpu_vm_bo_map()`, SYSTEM and SNOOPED), then the
    /// process VMIDs' TLBs are flushed (`kfd_flush_tlb()`).
    pub fn map_registered(&mut self, key: u64) -> Result<(), String> {
        let a = *self.allocations.get(&key).ok_or("not registered")?;
        if a.gpu_mapped {
            return Ok(());
        }
        let (lo, hi) = pages_of(key, a.size).ok_or("the range wraps")?;
        let len = hi - lo;
        let bus = self
            .iova
            .alloc(len, PAGE)
            .ok_or("the bus window for registered memory is full")?;
        // SAFETY: the caller registered these pages and keeps them valid
        // until it deregisters them (`hsa_memory_register` /
        // `hsa_amd_memory_lock`'s contract); the window leaves first
        // (`unmap_registered`).
        if let Err(e) = unsafe { self.backend.map_dma(bus, lo as *mut u8, len) } {
            self.iova.free(bus, len);
            return Err(e);
        }
        let gpu = self.gpu.as_mut().ok_or("the device is closed")?;
        let access = barebell_bringup::process_vm::Access {
            writeable: true,
            executable: false,
        };
        if let Err(e) = gpu.map_process(lo, bus, len, access) {
            if let Err(u) = self.backend.unmap_dma(bus, len) {
                eprintln!("barebell libhsakmt: {u}");
            }
            self.iova.free(bus, len);
            return Err(e.to_string());
        }
        if let Some(a) = self.allocations.get_mut(&key) {
            a.gpu_mapped = true;
            a.bus = bus;
        }
        Ok(())
    }

    /// Undoes [`Kfd::map_registered`]: the pages out of the process
    /// tables (TLBs flushed), then the bus window closed.
    pub fn unmap_registered(&mut self, key: u64) -> Result<(), String> {
        let a = *self.allocations.get(&key).ok_or("not registered")?;
        if !a.gpu_mapped {
            return Ok(());
        }
        let (lo, hi) = pages_of(key, a.size).ok_or("the range wraps")?;
        let gpu = self.gpu.as_mut().ok_or("the device is closed")?;
        gpu.unmap_process(lo, hi - lo).map_err(|e| e.to_string())?;
        self.backend.unmap_dma(a.bus, hi - lo)?;
        self.iova.free(a.bus, hi - lo);
        if let Some(a) = self.allocations.get_mut(&key) {
            a.gpu_mapped = false;
            a.bus = 0;
        }
        Ok(())
    }

    /// Whether a live queue holds the allocation at `base`.
    pub fn queue_uses(&self, base: u64) -> bool {
        self.queues.uses(base)
    }

    /// One look by the device (the model's CP, schedulers and queues take
    /// their steps); whether it was idle. What the hardware does on its
    /// own between ROCR's calls ([`crate::service`] calls it).
    pub fn step(&mut self) -> bool {
        if self.gpu.is_none() {
            return true;
        }
        let idle = self.backend.step();
        if !idle {
            self.moved = true;
        } else if self.moved {
            self.moved = false;
            self.report_device_errors();
        }
        idle
    }

    /// What the device refused or faulted on since the last report, on
    /// stderr, one line each (as amdgpu logs a GPU fault to the kernel
    /// log): ROCR itself only sees a signal that never moves. With
    /// `BAREBELL_HSAKMT_DEBUG` set, the device's whole state report too.
    fn report_device_errors(&mut self) {
        let crate::backend::DeviceErrors { cp, faults, mec } = self.backend.device_errors();
        for line in cp.iter().skip(self.reported.0) {
            eprintln!("barebell libhsakmt: the device: {line}");
        }
        for line in mec.iter().skip(self.reported.1) {
            eprintln!("barebell libhsakmt: the device: {line}");
        }
        // A page fault is also the process's: ROCR's VM-fault event
        // (`kfd_signal_vm_fault_event()`), once per fault.
        for (va, failure) in faults.iter().skip(self.reported.0).flatten() {
            crate::events::report_memory_fault(1, *va, *failure);
        }
        self.reported = (
            cp.len().max(self.reported.0),
            mec.len().max(self.reported.1),
        );
        if std::env::var_os("BAREBELL_HSAKMT_DEBUG").is_some() {
            for line in self.backend.diagnostics() {
                eprintln!("barebell libhsakmt: device state: {line}");
            }
        }
    }

    /// Tears the device down: ROCR's queues off the runlist, then the
    /// bring-up's teardown; the report's lines on failure.
    pub fn close(&mut self) -> Result<(), String> {
        if self.gpu.is_none() {
            return Ok(());
        }
        let mut failed = self.queues.destroy_all(self.gpu.as_mut());
        let registered: Vec<u64> = self
            .allocations
            .iter()
            .filter(|(_, a)| a.kind == Kind::Registered && a.gpu_mapped)
            .map(|(&k, _)| k)
            .collect();
        for k in registered {
            if let Err(e) = self.unmap_registered(k) {
                failed.push(e);
            }
        }
        let Some(gpu) = self.gpu.take() else {
            return Ok(());
        };
        let report = gpu.shutdown();
        if !report.complete() {
            failed.push(report.to_string());
        }
        if let Err(e) = self.backend.quiescent() {
            failed.push(e);
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(failed.join("; "))
        }
    }
}

/// What [`Kfd::open_on`] takes from a brought-up device before ROCR's
/// first call.
struct Opened {
    topology: Topology,
    /// The user memory and user VRAM: start and length.
    user: (u64, u64),
    vram: (u64, u64),
    gb_addr_config: u32,
}

impl Opened {
    /// Checks the part, takes the user regions out of the process tables
    /// and reads what the topology needs from the device.
    fn take(gpu: &mut Gpu<'static>, backend: Backend) -> Result<Opened, OpenError> {
        let v = gpu.ips.gc.version;
        if (v.major, v.minor, v.revision) != (9, 4, 2) {
            return Err(OpenError::NotGfx90a {
                gc: (v.major, v.minor, v.revision),
            });
        }
        let user = gpu.user.as_ref().ok_or(OpenError::NoUserMemory)?.range();
        let vram = gpu
            .user_vram
            .as_ref()
            .ok_or(OpenError::NoUserMemory)?
            .range();
        // Every buffer is mapped when ROCR maps it (`map_allocation`), as
        // KFD maps a BO on `kfd_ioctl_map_memory_to_gpu()`: the regions
        // the gmc step mapped whole leave the process tables first.
        for (at, n) in [user, vram] {
            if n > 0 {
                gpu.unmap_process(at, n)
                    .map_err(|e| OpenError::Bringup(format!("unmapping the user regions: {e}")))?;
            }
        }
        let g = MI210_GFX_INFO;
        let compute_units = barebell_bringup::gfx::gfx_v9_0::active_cus(
            gpu,
            g.shader_engines,
            g.sh_per_se,
            g.cu_per_sh,
        )
        .map_err(|e| OpenError::Bringup(format!("counting the CUs: {e}")))?;
        let facts = GpuFacts {
            device_id: backend.platform().pci_device_id().unwrap_or(0x740F),
            vram_bytes: gpu.ips.vram_bytes,
            compute_units,
        };
        let gb_addr_config = gpu
            .bus
            .block(gpu.ips.gc.bases)
            .read(barebell::regs::gc_9_4_2::GB_ADDR_CONFIG)
            .map(gb_addr_config_9_4_2)
            .map_err(|e| OpenError::Bringup(format!("reading GB_ADDR_CONFIG: {e}")))?;
        Ok(Opened {
            topology: Topology::mi210(&HostFacts::probe(), facts, MI210_GFX_INFO),
            user,
            vram,
            gb_addr_config,
        })
    }
}

/// Whether `[at, at + len)` is exactly one GPU-mapped allocation
/// (`len` rounded up to pages), or, with `len` 0, lies in the first page
/// of a one-page GPU-mapped system allocation: what Linux 6.12's
/// `kfd_queue_buffer_get()` asks of a queue's ring (its size) and of its
/// read and write pointers (`PAGE_SIZE`): a mapping that starts at the
/// address's page and is exactly that long.
fn queue_buffer_ok(allocations: &BTreeMap<u64, Allocation>, at: u64, len: u64) -> bool {
    let page = at & !(PAGE - 1);
    let Some(a) = allocations.get(&page) else {
        return false;
    };
    let pages = a.size.div_ceil(PAGE);
    let want = if len == 0 { 1 } else { len.div_ceil(PAGE) };
    a.gpu_mapped && a.kind != Kind::Reserved && pages == want && (len == 0 || at == page)
}

/// `gfx_v9_0_gpu_early_init()` for GC 9.4.2: the register's value with
/// every bit but `0x0C188800` (the fields the hardware reports) replaced
/// by `0x22014042`.
pub fn gb_addr_config_9_4_2(register: u32) -> u32 {
    (register & !0xf3e7_77ff) | 0x2201_4042
}

/// The whole pages `[at, at + size)` touches.
fn pages_of(at: u64, size: u64) -> Option<(u64, u64)> {
    let lo = at & !(PAGE - 1);
    let hi = at
        .checked_add(size.max(1))?
        .checked_next_multiple_of(PAGE)?;
    Some((lo, hi))
}

/// The MI210 model, for the process's life: the bring-up's device borrows
/// it, and a closed device leaves it idle (quiescent).
fn build_model() -> Result<&'static VirtualGpu, OpenError> {
    let mem = HostMemory::allocate_sized(MODEL_VRAM_BYTES, CARD_DMA_BYTES)
        .map_err(|e| OpenError::Model(e.to_string()))?;
    let model = VirtualGpu::new(
        barebell_model::parts::mi210(),
        &barebell_model::FilesDir::system(),
        mem,
        barebell_model::Seed(1),
    )
    .map_err(|e| OpenError::Model(e.to_string()))?;
    Ok(Box::leak(Box::new(model)))
}
