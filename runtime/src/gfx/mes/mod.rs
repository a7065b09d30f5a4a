//! The MES scheduler as a queue mapper: API v11 (gfx11) and v12 (gfx12
//! uni-MES, scheduler pipe 0), chosen by the [`MesApi`] type parameter.
//!
//! The protocol follows `mes_v11_0_submit_pkt_and_poll_completion()` (v12's
//! is the same): every API frame is written to the scheduler ring with its
//! `api_status` fence pointing at a status slot (value 1), followed by a
//! QUERY_SCHEDULER_STATUS frame whose fence is the ring fence (value: the
//! next sequence number). The write pointer, counted in dwords, is stored
//! to the ring's wptr slot and to the ring's doorbell; then the ring fence
//! is polled with a bound ([`API_TIMEOUT_NS`], Linux's 2.1 s). A ring
//! fence that does not arrive is [`MesError::Timeout`] naming the frame.
//! Once it arrives the status slot decides: v11 documents no error
//! encoding, so a zero slot is the only failure signal (Linux's
//! `!*status_ptr`); v12 fails when the low 32 bits are zero and may carry
//! `MES_ERR_CODE` in the high half, which is decoded into
//! [`MesStatus::V12`].
//!
//! Starting MES and reading its versions is [`crate::gfx::mes::start`]. What is
//! not here yet: mapping the scheduler ring itself (KIQ MAP_QUEUES on v11; on v12 the KIQ is mapped
//! by MES with `map_legacy_kq`). [`Mes::new`] takes a ring that is already
//! mapped; on the model the MES model is simply told where it is.
//!
//! ADD_QUEUE follows `mes_v11_0_add_hw_queue()` / `mes_v12_0_add_hw_queue()`
//! with the inputs KFD's `add_queue_mes()` gives them for an AQL compute
//! queue: process id, page table base, process and gang context addresses,
//! the doorbell offset in dwords, MQD address, wptr address,
//! `is_aql_queue`, and the ring size in dwords in `gds_size` ("for KFD,
//! gds_size is re-used for queue size"). SET_HW_RSRC's oversubscription
//! timer is 50 on both (v12 Linux uses 0 for scheduler firmware older than
//! 0x8b, whose version barebell does not read yet).

pub mod legacy;
pub mod rings;
pub mod start;

use crate::gfx::doorbells::Doorbells;
use crate::gfx::error::{MapError, RingInUse};
use crate::gfx::error::{MesError, MesStatus};
use crate::gfx::mapper::{Mapping, QueueMapper, QueueResources};
use crate::gfx::mqd::{AqlMqdParams, build_aql};
use crate::ip::Generation;
use crate::mem::Dev;
use crate::time::Pause;
use crate::time::{Clock, Deadline};
use barebell_firmware_if::mes_api::{FRAME_DWORDS, Frame, Le32, Le64};
use barebell_firmware_if::mes_api::{v11, v12};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, Ordering};
use zerocopy::IntoBytes;

/// `AMDGPU_MES_PROC_CTX_SIZE` / `AMDGPU_MES_GANG_CTX_SIZE` (`amdgpu_mes.h`;
/// no conformance fact: that header includes `<linux/sched/mm.h>` and does
/// not compile as user-space C, so these rest on the citation only): one page each, which MES
/// owns while the process/gang has queues.
pub const PROC_CTX_BYTES: usize = 0x1000;
pub const GANG_CTX_BYTES: usize = 0x1000;

/// How long a frame may take: Linux's 2100 ms.
pub const API_TIMEOUT_NS: u64 = 2_100_000_000;

/// `adev->mes.vmid_mask_gfxhub`/`_mmhub` (`amdgpu_mes_init()`): MES owns
/// VMIDs 8..=15.
pub const MES_VMID_MASK: u32 = 0xFFFF_FF00;
/// `adev->mes.compute_hqd_mask[pipe]` for the first MEC's pipes: queues 2
/// and 3 of each pipe go to MES.
pub const MES_COMPUTE_HQD_MASK: u32 = 0xC;

/// `adev->mes.sdma_hqd_mask[engine]` for SDMA 6 and later
/// (`amdgpu_mes_init()`): queues 2..7 of each present engine go to MES, an
/// absent engine's mask is 0.
pub const MES_SDMA_HQD_MASK: u32 = 0xfc;

/// `adev->gds.gds_size` as SET_HW_RSRC passes it: `gfx_v11_0_set_gds_init()`
/// sets 0x1000 on every GC 11 part; `gfx_v12_0.c` sets none, so 0;
/// `gfx_v9_4_3_set_gds_init()` sets 0 for GC 9.4.3 ("removed all the GDS
/// internal memory").
pub const fn gds_bytes(generation: Generation) -> u32 {
    match generation {
        Generation::Gfx90a | Generation::Gfx94 => 0,
        Generation::Gfx11 => 0x1000,
        Generation::Gfx12 => 0,
    }
}

/// The first aggregated doorbell (dword index): `adev->mes.db_start_dw_offset`,
/// the page after the kernel doorbells. `amdgpu_doorbell_init()` counts
/// `max_assignment + 1` kernel doorbells (`soc21_init_doorbell_index()` /
/// `soc24`: `AMDGPU_NAVI10_DOORBELL_MAX_ASSIGNMENT << 1` = 0x320) plus one
/// page (0x400 dwords), 0x721 dwords; `amdgpu_doorbell_create_kernel_doorbells()`
/// rounds that to pages (0x2000 bytes) and starts MES's page there.
pub const AGGREGATED_DOORBELL_START: u32 = 0x800;

/// `adev->mes.aggregated_doorbells[level]` (`amdgpu_mes_doorbell_init()`):
/// one 64-bit doorbell per priority level, low to realtime.
pub const fn aggregated_doorbells() -> [u32; 5] {
    let s = AGGREGATED_DOORBELL_START;
    [s, s + 2, s + 4, s + 6, s + 8]
}

/// `AMDGPU_PTE_VALID`: `amdgpu_gmc_pd_addr()` ORs it into a root
/// directory's address to make the PDE MES is given.
pub const PDE_VALID: u64 = crate::gmc::pagetable::Pte::new()
    .with_valid(true)
    .into_bits();

/// The scheduler ring and the words MES writes back, in one page-aligned
/// block. `RING_DWORDS` must be a power of two and a multiple of two
/// frames, so a frame pair never straddles the wrap.
#[repr(C, align(4096))]
#[derive(Debug)]
pub struct MesMemory<const RING_DWORDS: usize> {
    ring: UnsafeCell<[u32; RING_DWORDS]>,
    /// The ring's write pointer in dwords (MES reads it; Linux's
    /// `ring->wptr_gpu_addr`).
    wptr: AtomicU64,
    /// The ring fence the trailing QUERY_SCHEDULER_STATUS writes.
    ring_fence: AtomicU64,
    /// The API status slot each frame's `api_status` points at.
    status: AtomicU64,
    /// `query_status_fence_gpu_mc_ptr` of SET_HW_RSRC.
    query_status_fence: AtomicU64,
    /// Where MES reports its read pointer (`CP_HQD_PQ_RPTR_REPORT_ADDR`).
    rptr: AtomicU64,
    _pad: [u64; 3],
    /// `g_sch_ctx_gpu_mc_ptr`: the scheduler's context (MES-owned).
    sch_ctx: UnsafeCell<[u8; 4096]>,
}

// SAFETY: the ring is written by the CPU only by the one `Mes` that holds
// the ring's claim (taken in `Mes::new` from the host-memory claim table,
// `crate::mem::claim`, released on drop),
// and only between a completed fence and the next wptr store (MES reads
// only below the announced wptr); the other words are atomics; `sch_ctx`
// is only ever touched by the device.
unsafe impl<const N: usize> Sync for MesMemory<N> {}

impl<const RING_DWORDS: usize> MesMemory<RING_DWORDS> {
    const VALID: () = assert!(
        RING_DWORDS.is_power_of_two() && RING_DWORDS >= 2 * FRAME_DWORDS,
        "the MES ring holds a power of two of dwords, at least two frames"
    );

    pub const fn new() -> Self {
        let () = Self::VALID;
        MesMemory {
            ring: UnsafeCell::new([0; RING_DWORDS]),
            wptr: AtomicU64::new(0),
            ring_fence: AtomicU64::new(0),
            status: AtomicU64::new(0),
            query_status_fence: AtomicU64::new(0),
            rptr: AtomicU64::new(0),
            _pad: [0; 3],
            sch_ctx: UnsafeCell::new([0; 4096]),
        }
    }

    pub fn ring_address(&self) -> u64 {
        self.ring.get() as u64
    }
    pub fn ring_dwords(&self) -> usize {
        RING_DWORDS
    }
    pub fn wptr_address(&self) -> u64 {
        self.wptr.as_ptr() as u64
    }
    pub fn rptr_address(&self) -> u64 {
        self.rptr.as_ptr() as u64
    }
    pub fn ring_fence_address(&self) -> u64 {
        self.ring_fence.as_ptr() as u64
    }
    pub fn status_address(&self) -> u64 {
        self.status.as_ptr() as u64
    }
    pub fn query_status_fence_address(&self) -> u64 {
        self.query_status_fence.as_ptr() as u64
    }
    pub fn sch_ctx_address(&self) -> u64 {
        self.sch_ctx.get() as u64
    }
}

impl<const N: usize> Default for MesMemory<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// A process's and its gang's MES context pages (`proc_ctx_bo` and the
/// gang context KFD allocates per queue; barebell uses one gang per
/// process).
#[repr(C, align(4096))]
#[derive(Debug)]
pub struct ProcessContext {
    proc_ctx: UnsafeCell<[u8; PROC_CTX_BYTES]>,
    gang_ctx: UnsafeCell<[u8; GANG_CTX_BYTES]>,
}

// SAFETY: only the device touches the contents.
unsafe impl Sync for ProcessContext {}

impl ProcessContext {
    pub const fn new() -> Self {
        ProcessContext {
            proc_ctx: UnsafeCell::new([0; PROC_CTX_BYTES]),
            gang_ctx: UnsafeCell::new([0; GANG_CTX_BYTES]),
        }
    }
    pub fn process_context_address(&self) -> u64 {
        self.proc_ctx.get() as u64
    }
    pub fn gang_context_address(&self) -> u64 {
        self.gang_ctx.get() as u64
    }
}

impl Default for ProcessContext {
    fn default() -> Self {
        Self::new()
    }
}

/// One address space that queues can be added to.
#[derive(Debug, Clone, Copy)]
pub struct Process<'a> {
    /// `process_id` (KFD passes the PASID).
    pub pasid: u32,
    /// The address of the process's root page directory; ADD_QUEUE sends
    /// it with [`PDE_VALID`] (`amdgpu_gmc_pd_addr()`).
    pub page_table_base: u64,
    /// The GFXHUB's `GCVM_CONTEXT1_CNTL` as the hub step programmed it
    /// (Linux's `hub->vm_cntx_cntl`): MES programs it into the VMID it
    /// picks (`mes_v11_0_add_hw_queue()`).
    pub vm_context_cntl: u32,
    /// The process's VA range as first and last **page number** (4 KiB
    /// pages), what MES programs into the VMID's context START/END
    /// registers: KFD's `add_queue_mes()` sends `0` and
    /// `adev->vm_manager.max_pfn - 1` ([`crate::gmc::hub::MAX_PFN`]` - 1`).
    pub va_start: u64,
    pub va_end: u64,
    /// The process and gang context pages MES keeps its state in.
    pub context: Dev<'a, ProcessContext>,
}

/// Where the MES scheduler ring is and how to ring it.
#[derive(Debug, Clone, Copy)]
pub struct MesRing<'a, const RING_DWORDS: usize> {
    pub memory: Dev<'a, MesMemory<RING_DWORDS>>,
    pub doorbell: crate::aql::doorbell::Doorbell,
}

/// Register bases MES is told about in SET_HW_RSRC (`gc_base`,
/// `mmhub_base`, `osssys_base`: `adev->reg_offset[...][0][0..5]`), and
/// the SDMA engines present (for `sdma_hqd_mask`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HwBases {
    pub gc: [u32; 5],
    pub mmhub: [u32; 5],
    pub osssys: [u32; 5],
    pub sdma_engines: u8,
}

/// Maps queues through the MES scheduler; `A` picks the API version
/// ([`V11`] for gfx11, [`V12`] for gfx12 uni-MES).
///
/// # One writer per ring
///
/// Issue 21's finding: `MesMemory` is `Sync` on the assumption of one
/// writer, yet its ring handles are `Copy` and the constructor safe, so
/// two mappers over one ring could race on the plain ring stores. Two
/// mappers over one ring are excluded at run time: [`Mes::new`] claims the
/// ring in the host-memory claim table ([`crate::mem::claim`], not a flag
/// in the ring's DMA memory, which the device could overwrite) and a
/// second mapper meanwhile gets [`RingInUse`]
/// (`a_second_mapper_over_one_ring_is_refused` in
/// tests/harness/tests/mes.rs). What the compiler rules out on top: the
/// ring's dwords are reachable only through a mapper, and a mapper writes
/// only through `&mut self`, so one mapper shared between callers or
/// threads cannot be a second writer. Neither of these compiles:
///
/// ```compile_fail,E0596
/// use barebell::gfx::mes::{Mes, V11};
/// use barebell::time::{Clock, Pause};
/// // Two writers through one shared mapper: a frame needs `&mut Mes`.
/// fn second_writer<C: Clock, P: Pause>(shared: &Mes<'_, C, P, 256, V11>) {
///     let _ = shared.query_status();
/// }
/// ```
///
/// ```compile_fail,E0616
/// use barebell::gfx::mes::MesMemory;
/// // A writer that bypasses the mapper's claim: the ring is private.
/// fn bypass(memory: &MesMemory<256>) {
///     let _ = &memory.ring;
/// }
/// ```
pub struct Mes<'a, C, P, const RING_DWORDS: usize, A: MesApi = V11> {
    /// The ring's one-writer claim, in host memory.
    _claim: crate::mem::claim::Claim,
    api: core::marker::PhantomData<A>,
    ring: MesRing<'a, RING_DWORDS>,
    clock: C,
    pause: P,
    seq: u64,
    initialised: bool,
    doorbells: Doorbells,
    processes: [Option<Process<'a>>; 16],
    versions: Option<crate::gfx::mes::start::MesVersions>,
    /// A frame that timed out and that MES may still run.
    pending: Option<Pending>,
    pub timeout_ns: u64,
    presence: Option<crate::bus::Presence<'a>>,
}

/// A frame that timed out: MES may still run it (and write the status
/// slot), so the slot is not reused, and the doorbell of an ADD_QUEUE is
/// not released, until the ring fence shows MES is past it.
#[derive(Debug, Clone, Copy)]
struct Pending {
    frame: &'static str,
    seq: u64,
    /// The doorbell a timed-out ADD_QUEUE claimed.
    doorbell: Option<u32>,
}

impl<C, P, const N: usize, A: MesApi> core::fmt::Debug for Mes<'_, C, P, N, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Mes")
            .field("seq", &self.seq)
            .field("initialised", &self.initialised)
            .field("doorbells", &self.doorbells)
            .finish_non_exhaustive()
    }
}

impl<'a, C: Clock, P: Pause, const RING_DWORDS: usize, A: MesApi> Mes<'a, C, P, RING_DWORDS, A> {
    /// A mapper over an already-mapped scheduler ring. `doorbells` is the
    /// MEC range user queues may take (checked again by MES).
    ///
    /// The mapper is the ring's one writer until it is dropped; a second
    /// mapper over the same ring meanwhile is [`RingInUse`].
    pub fn new(
        ring: MesRing<'a, RING_DWORDS>,
        clock: C,
        pause: P,
        doorbells: Doorbells,
    ) -> Result<Self, RingInUse> {
        let m = ring.memory;
        let claim = crate::mem::claim::Claim::take(m.ring_address() as usize)
            .map_err(|e| RingInUse::from_claim(m.ring_address(), e))?;
        let seq = ring.memory.ring_fence.load(Ordering::Acquire);
        Ok(Mes {
            _claim: claim,
            api: core::marker::PhantomData,
            ring,
            clock,
            pause,
            seq,
            initialised: false,
            doorbells,
            processes: [None; 16],
            versions: None,
            pending: None,
            timeout_ns: API_TIMEOUT_NS,
            presence: None,
        })
    }

    pub fn doorbells(&self) -> &Doorbells {
        &self.doorbells
    }

    /// The firmware versions [`crate::gfx::mes::start::start`] read; features
    /// gated on them (the v12 oversubscription timer) follow Linux.
    pub fn set_versions(&mut self, v: crate::gfx::mes::start::MesVersions) {
        self.versions = Some(v);
    }

    pub fn versions(&self) -> Option<crate::gfx::mes::start::MesVersions> {
        self.versions
    }

    /// Registers the address space queues with process key `key` (the
    /// `vmid` field of [`QueueResources`]) belong to. MES picks hardware
    /// VMIDs itself (from [`MES_VMID_MASK`]); the key only names the
    /// process.
    pub fn register_process(&mut self, key: u8, p: Process<'a>) -> Result<(), MesError> {
        let slot = self
            .processes
            .get_mut(usize::from(key))
            .ok_or(MesError::TooManyProcesses)?;
        *slot = Some(p);
        Ok(())
    }

    /// Reads `presence` while waiting for fences, so that a device that
    /// vanished ends a wait as [`MesError::DeviceGone`] within one
    /// interval instead of at the 2.1 s bound.
    pub fn set_presence(&mut self, presence: crate::bus::Presence<'a>) {
        self.presence = Some(presence);
    }

    /// Waits until the ring fence reaches `seq`.
    fn wait_fence(&mut self, name: &'static str, seq: u64) -> Result<(), MesError> {
        let mem = self.ring.memory;
        let mut deadline = Deadline::after(&self.clock, self.timeout_ns);
        let start = self.clock.now_ns();
        let mut watch = crate::bus::PresenceWatch::new(start);
        loop {
            let fence = mem.ring_fence.load(Ordering::Acquire);
            if fence.wrapping_sub(seq) < u64::MAX / 2 {
                return Ok(());
            }
            let expired = deadline.expired(&self.clock);
            let now = self.clock.now_ns();
            if watch.gone(self.presence.as_ref(), now, expired) {
                return Err(MesError::DeviceGone {
                    frame: name,
                    waited_ns: now.saturating_sub(start),
                });
            }
            if expired {
                return Err(MesError::Timeout {
                    frame: name,
                    seq,
                    fence,
                    waited_ns: deadline.elapsed_ns(&self.clock),
                });
            }
            self.pause.pause();
        }
    }

    /// Settles a frame that timed out earlier: waits (bounded) until MES
    /// is past it, then reads what it wrote to the status slot, which
    /// nothing has reused since. A timed-out ADD_QUEUE that MES refused
    /// gives its doorbell back; one that MES ran keeps it, since the queue
    /// is mapped. Still not run: the old frame's timeout again, and the
    /// slot and doorbell stay reserved.
    fn settle(&mut self) -> Result<(), MesError> {
        let Some(p) = self.pending else {
            return Ok(());
        };
        self.wait_fence(p.frame, p.seq)?;
        self.pending = None;
        let status = self.ring.memory.status.load(Ordering::Acquire);
        if let (Err(_), Some(d)) = (A::status(status), p.doorbell) {
            self.doorbells.release(d);
        }
        Ok(())
    }

    /// Whether a timed-out frame is still unaccounted for (MES may run it).
    pub fn has_pending_frame(&self) -> bool {
        self.pending.is_some()
    }

    /// Writes `frame` and a trailing QUERY_SCHEDULER_STATUS, rings, and
    /// waits (`mes_v11_0_submit_pkt_and_poll_completion()`).
    ///
    /// After a timeout MES may still run the frame and write the status
    /// slot; the next call first waits for MES to be past it (see
    /// [`Mes::has_pending_frame`]) so a late status is never read as
    /// this frame's.
    pub fn submit<F: Frame>(&mut self, name: &'static str, mut frame: F) -> Result<(), MesError> {
        self.settle()?;
        let mem = self.ring.memory;
        mem.status.store(0, Ordering::Relaxed);
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        frame.set_fence(mem.status_address(), 1);
        let mut trailer = A::query();
        trailer.set_fence(mem.ring_fence_address(), seq);
        let wptr = mem.wptr.load(Ordering::Relaxed);
        self.write_frame(wptr, frame.as_bytes());
        self.write_frame(wptr.wrapping_add(FRAME_DWORDS as u64), trailer.as_bytes());
        let next = wptr.wrapping_add(2 * FRAME_DWORDS as u64);
        // `mes_v11_0_ring_set_wptr()`: the wptr slot, then the doorbell.
        mem.wptr.store(next, Ordering::Release);
        self.ring.doorbell.ring(next);
        if let Err(e) = self.wait_fence(name, seq) {
            self.pending = Some(Pending {
                frame: name,
                seq,
                doorbell: None,
            });
            return Err(e);
        }
        let status = mem.status.load(Ordering::Acquire);
        A::status(status).map_err(|status| MesError::Failed {
            frame: name,
            status,
        })
    }

    fn write_frame(&self, wptr: u64, bytes: &[u8]) {
        let start = (wptr as usize) & (RING_DWORDS - 1);
        let ring = self.ring.memory.ring.get().cast::<u32>();
        for (i, w) in bytes.chunks_exact(4).enumerate() {
            let v = u32::from_le_bytes([
                w.first().copied().unwrap_or(0),
                w.get(1).copied().unwrap_or(0),
                w.get(2).copied().unwrap_or(0),
                w.get(3).copied().unwrap_or(0),
            ]);
            let at = (start + i) & (RING_DWORDS - 1);
            // SAFETY: `at < RING_DWORDS`; MES reads only below the wptr it
            // was given, and the previous frames at these positions were
            // consumed (their fence completed before this call).
            unsafe { ring.add(at).write_volatile(v) };
        }
    }

    /// SET_HW_RSRC as `mes_v11_0_set_hw_resources()` /
    /// `mes_v12_0_set_hw_resources()` fill it for the scheduler pipe.
    pub fn set_hw_resources(&mut self, bases: &HwBases) -> Result<(), MesError> {
        let mem = self.ring.memory;
        let f = A::set_hw_resources(
            mem.sch_ctx_address(),
            mem.query_status_fence_address(),
            bases,
            A::oversubscription_timer(self.versions),
        );
        self.submit("SET_HW_RSRC", f)?;
        self.initialised = true;
        Ok(())
    }

    /// QUERY_SCHEDULER_STATUS on its own (a health check).
    pub fn query_status(&mut self) -> Result<(), MesError> {
        self.submit("QUERY_SCHEDULER_STATUS", A::query())
    }

    /// SUSPEND of every gang (`suspend_all_gangs`), fenced at `fence`
    /// with `value`.
    pub fn suspend_all(&mut self, fence: u64, value: u32) -> Result<(), MesError> {
        self.submit("SUSPEND", A::suspend_all(fence, value))
    }

    /// RESUME of every gang.
    pub fn resume_all(&mut self) -> Result<(), MesError> {
        self.submit("RESUME", A::resume_all())
    }

    fn add_queue(&mut self, q: &QueueResources<'_>) -> Result<Mapping, MapError> {
        if !self.initialised {
            return Err(MesError::NotInitialised { frame: "ADD_QUEUE" }.into());
        }
        let p = self
            .processes
            .get(usize::from(q.vmid))
            .copied()
            .flatten()
            .ok_or(MesError::UnknownProcess { key: q.vmid })?;
        self.doorbells.claim(q.doorbell)?;
        // With MES the MQD carries VMID 0: MES assigns the VMID when it
        // maps the gang (KFD's qpd->vmid stays 0 under MES).
        let mut params = q.mqd_params();
        params.vmid = 0;
        if let Err(e) = build_aql(A::GENERATION, &q.mqd, &params) {
            self.doorbells.release(q.doorbell);
            return Err(e.into());
        }
        let f = A::add_queue(&p, q, &params);
        if let Err(e) = self.submit("ADD_QUEUE", f) {
            match (&e, self.pending.as_mut()) {
                // MES may still map the queue: the doorbell stays claimed
                // until `settle` learns what MES did.
                (MesError::Timeout { seq, .. }, Some(p)) if p.seq == *seq => {
                    p.doorbell = Some(q.doorbell);
                }
                _ => self.doorbells.release(q.doorbell),
            }
            return Err(e.into());
        }
        Ok(Mapping {
            doorbell: q.doorbell,
            mqd_address: params.mqd_address,
            pipe: 0,
            queue: 0,
            vmid: q.vmid,
        })
    }

    /// ADD_QUEUE for an SDMA queue (`add_queue_mes()` with
    /// `KFD_QUEUE_TYPE_SDMA`): the MQD built by `update_mqd_sdma()` with
    /// VMID 0 (MES assigns it), the SDMA queue type. The doorbell is an
    /// SDMA one, outside the MEC range this client allocates from.
    fn add_sdma(&mut self, q: &crate::gfx::mapper::SdmaResources<'_>) -> Result<Mapping, MapError> {
        if !self.initialised {
            return Err(MesError::NotInitialised { frame: "ADD_QUEUE" }.into());
        }
        let p = self
            .processes
            .get(usize::from(q.process))
            .copied()
            .flatten()
            .ok_or(MesError::UnknownProcess { key: q.process })?;
        let mut setup = q.setup;
        setup.vmid = 0;
        // MES maps SDMA 6.0/7.0 queues; 4.4.2's go through HWS.
        let mqd = crate::sdma::build_mqd(q.version, &setup, 0, 0)
            .ok_or(MapError::SdmaUnsupported { mapper: "MES" })?;
        q.mqd.write(&mqd);
        let f = A::add_sdma_queue(
            &p,
            q.mqd.address(),
            setup.wptr_addr,
            setup.doorbell_dword(),
            setup.ring_bytes,
        );
        self.submit("ADD_QUEUE", f)?;
        Ok(Mapping {
            doorbell: setup.doorbell_index,
            mqd_address: q.mqd.address(),
            pipe: 0,
            queue: 0,
            vmid: q.process,
        })
    }

    /// The gang context of the process queue `m` belongs to: what
    /// `RESET` and `REMOVE_QUEUE` name it by (`remove_queue_mes()`).
    fn gang_context(&self, m: &Mapping) -> Result<u64, MapError> {
        let p = self
            .processes
            .get(usize::from(m.vmid))
            .copied()
            .flatten()
            .ok_or(MesError::UnknownProcess { key: m.vmid })?;
        Ok(p.context.gang_context_address())
    }

    /// Resets the queue `m` in place (MES `RESET`, `reset_queue_only`):
    /// its waves are killed; it stays mapped until [`QueueMapper::unmap`].
    pub fn reset_queue(&mut self, m: &Mapping) -> Result<(), MapError> {
        if !self.doorbells.is_used(m.doorbell) {
            return Err(MapError::NotMapped {
                doorbell: m.doorbell,
            });
        }
        let f = A::reset_queue(m.doorbell.saturating_mul(2), self.gang_context(m)?);
        self.submit("RESET", f)?;
        Ok(())
    }

    /// REMOVE_QUEUE for queue `m` (`remove_queue_mes()`: its doorbell and
    /// its process's gang context), for a compute queue
    /// ([`Mes::remove_queue`], which also frees the doorbell) and for an
    /// SDMA queue [`Mes::add_sdma`] mapped, whose doorbell is an SDMA one
    /// not from this client's allocator.
    fn send_remove(&mut self, m: &Mapping) -> Result<(), MapError> {
        let f = A::remove_queue(m.doorbell.saturating_mul(2), self.gang_context(m)?);
        self.submit("REMOVE_QUEUE", f)?;
        Ok(())
    }

    fn remove_queue(&mut self, m: &Mapping) -> Result<(), MapError> {
        if !self.doorbells.is_used(m.doorbell) {
            return Err(MapError::NotMapped {
                doorbell: m.doorbell,
            });
        }
        self.send_remove(m)?;
        self.doorbells.release(m.doorbell);
        Ok(())
    }
}

/// What differs between MES API versions: the frame layouts (v11 is
/// `pack(4)`, v12 `pack(8)`), the MQD generation, and how a failure shows
/// in the status slot.
pub trait MesApi {
    const GENERATION: Generation;
    type SetHwResources: Frame;
    type AddQueue: Frame;
    type RemoveQueue: Frame;
    type Reset: Frame;
    type Suspend: Frame;
    type Resume: Frame;
    type Query: Frame;
    fn set_hw_resources(
        sch_ctx: u64,
        query_fence: u64,
        bases: &HwBases,
        oversubscription_timer: u32,
    ) -> Self::SetHwResources;
    /// SET_HW_RSRC's oversubscription timer for these firmware versions
    /// (unknown versions: Linux's current value, 50).
    fn oversubscription_timer(versions: Option<crate::gfx::mes::start::MesVersions>) -> u32;
    /// The ADD_QUEUE frame for `q` in process `p` with MQD `params`
    /// (`mes_v1x_0_add_hw_queue()` with KFD's `add_queue_mes()` inputs).
    /// Public so tests can send a deliberately wrong frame through
    /// [`Mes::submit`].
    fn add_queue(p: &Process<'_>, q: &QueueResources<'_>, params: &AqlMqdParams) -> Self::AddQueue;
    /// The ADD_QUEUE frame for an SDMA queue (`MES_QUEUE_TYPE_SDMA`, not
    /// AQL) with MQD `mqd_address`, write pointer `wptr`, doorbell dword
    /// `doorbell_dword` and a ring of `ring_bytes`.
    fn add_sdma_queue(
        p: &Process<'_>,
        mqd_address: u64,
        wptr: u64,
        doorbell_dword: u32,
        ring_bytes: usize,
    ) -> Self::AddQueue;
    fn remove_queue(doorbell_dword: u32, gang_context: u64) -> Self::RemoveQueue;
    /// RESET of one queue (`reset_queue_only`), as
    /// `mes_v11_0_reset_hw_queue()` / `mes_v12_0_reset_hw_queue()` send it
    /// for `amdgpu_mes_reset_hw_queue()`.
    fn reset_queue(doorbell_dword: u32, gang_context: u64) -> Self::Reset;
    fn suspend_all(fence: u64, value: u32) -> Self::Suspend;
    fn resume_all() -> Self::Resume;
    fn query() -> Self::Query;
    /// Decodes the status slot after the ring fence passed the frame.
    fn status(value: u64) -> Result<(), MesStatus>;
}

/// MES API v11 (gfx11, `mes_v11_api_def.h`).
#[derive(Debug, Clone, Copy)]
pub struct V11;
/// MES API v12 (gfx12 uni-MES, `mes_v12_api_def.h`).
#[derive(Debug, Clone, Copy)]
pub struct V12;

macro_rules! mes_api {
    ($t:ty, $m:ident, $gen:expr, |$flags:ident| $extra_flags:expr, $timer:expr) => {
        impl MesApi for $t {
            const GENERATION: Generation = $gen;
            type SetHwResources = $m::SetHwResources;
            type AddQueue = $m::AddQueue;
            type RemoveQueue = $m::RemoveQueue;
            type Reset = $m::Reset;
            type Suspend = $m::Suspend;
            type Resume = $m::Resume;
            type Query = $m::QueryMesStatus;

            fn set_hw_resources(
                sch_ctx: u64,
                query_fence: u64,
                bases: &HwBases,
                oversubscription_timer: u32,
            ) -> $m::SetHwResources {
                let mut f = $m::SetHwResources::new();
                f.vmid_mask_mmhub = Le32::new(MES_VMID_MASK);
                f.vmid_mask_gfxhub = Le32::new(MES_VMID_MASK);
                f.gds_size = Le32::new(gds_bytes($gen));
                f.paging_vmid = Le32::new(0);
                for (i, m) in f.sdma_hqd_mask.iter_mut().enumerate() {
                    if i < usize::from(bases.sdma_engines) {
                        *m = Le32::new(MES_SDMA_HQD_MASK);
                    }
                }
                for (d, v) in f
                    .aggregated_doorbells
                    .iter_mut()
                    .zip(aggregated_doorbells())
                {
                    *d = Le32::new(v);
                }
                f.g_sch_ctx_gpu_mc_ptr = Le64::new(sch_ctx);
                f.query_status_fence_gpu_mc_ptr = Le64::new(query_fence);
                for p in f.compute_hqd_mask.iter_mut().take(4) {
                    *p = Le32::new(MES_COMPUTE_HQD_MASK);
                }
                if let Some(g) = f.gfx_hqd_mask.first_mut() {
                    *g = Le32::new(0xFFFF_FFFE);
                }
                for (dst, src) in f.gc_base.iter_mut().zip(bases.gc) {
                    *dst = Le32::new(src);
                }
                for (dst, src) in f.mmhub_base.iter_mut().zip(bases.mmhub) {
                    *dst = Le32::new(src);
                }
                for (dst, src) in f.osssys_base.iter_mut().zip(bases.osssys) {
                    *dst = Le32::new(src);
                }
                let $flags = $m::SetHwResourcesFlags::new()
                    .with_disable_reset(true)
                    .with_disable_mes_log(true)
                    .with_use_different_vmid_compute(true)
                    .with_enable_reg_active_poll(true)
                    .with_enable_level_process_quantum_check(true);
                f.flags = Le32::new($extra_flags.into_bits());
                f.oversubscription_timer = Le32::new(oversubscription_timer);
                f
            }

            fn oversubscription_timer(
                versions: Option<crate::gfx::mes::start::MesVersions>,
            ) -> u32 {
                let gate: fn(&crate::gfx::mes::start::MesVersions) -> u32 = $timer;
                versions.as_ref().map_or(50, gate)
            }

            fn add_queue(
                p: &Process<'_>,
                q: &QueueResources<'_>,
                params: &AqlMqdParams,
            ) -> $m::AddQueue {
                let mut f = $m::AddQueue::new();
                f.process_id = Le32::new(p.pasid);
                f.page_table_base_addr = Le64::new(p.page_table_base | PDE_VALID);
                f.vm_context_cntl = Le32::new(p.vm_context_cntl);
                f.process_va_start = Le64::new(p.va_start);
                f.process_va_end = Le64::new(p.va_end);
                // `KFD_MES_PROCESS_QUANTUM` / `KFD_MES_GANG_QUANTUM`
                // (`kfd_device_queue_manager.h`): 10 ms and 1 ms in 100 ns units.
                f.process_quantum = Le64::new(100_000);
                f.process_context_addr = Le64::new(p.context.process_context_address());
                f.gang_quantum = Le64::new(10_000);
                f.gang_context_addr = Le64::new(p.context.gang_context_address());
                f.inprocess_gang_priority = Le32::new($m::priority::NORMAL);
                f.gang_global_priority_level = Le32::new($m::priority::NORMAL);
                f.doorbell_offset = Le32::new(params.doorbell_dword);
                f.mqd_addr = Le64::new(params.mqd_address);
                // v11 firmware of API version 2 and later takes the
                // write pointer's MC address here (`mes_v11_0_add_hw_queue()`
                // picks `wptr_mc_addr` then); barebell's device address of
                // the write index is the same either way.
                f.wptr_addr = Le64::new(params.write_index_address);
                f.queue_type = Le32::new($m::queue_type::COMPUTE);
                // `add_queue_mes()`: `queue_size = properties.queue_size >> 2`,
                // the ring size in dwords.
                f.gds_size = Le32::new((q.ring_bytes / 4) as u32);
                f.flags = Le32::new(
                    $m::AddQueueFlags::new()
                        .with_is_aql_queue(true)
                        .with_is_kfd_process(true)
                        .into_bits(),
                );
                f
            }

            fn add_sdma_queue(
                p: &Process<'_>,
                mqd_address: u64,
                wptr: u64,
                doorbell_dword: u32,
                ring_bytes: usize,
            ) -> $m::AddQueue {
                let mut f = $m::AddQueue::new();
                f.process_id = Le32::new(p.pasid);
                f.page_table_base_addr = Le64::new(p.page_table_base | PDE_VALID);
                f.vm_context_cntl = Le32::new(p.vm_context_cntl);
                f.process_va_start = Le64::new(p.va_start);
                f.process_va_end = Le64::new(p.va_end);
                f.process_quantum = Le64::new(100_000);
                f.process_context_addr = Le64::new(p.context.process_context_address());
                f.gang_quantum = Le64::new(10_000);
                f.gang_context_addr = Le64::new(p.context.gang_context_address());
                f.inprocess_gang_priority = Le32::new($m::priority::NORMAL);
                f.gang_global_priority_level = Le32::new($m::priority::NORMAL);
                f.doorbell_offset = Le32::new(doorbell_dword);
                f.mqd_addr = Le64::new(mqd_address);
                f.wptr_addr = Le64::new(wptr);
                // `convert_to_mes_queue_type(AMDGPU_RING_TYPE_SDMA)`.
                f.queue_type = Le32::new($m::queue_type::SDMA);
                // `add_queue_mes()`: `queue_size = queue_size >> 2` (dwords),
                // sent as `gds_size` by `mes_v11_0_add_hw_queue()`.
                f.gds_size = Le32::new((ring_bytes / 4) as u32);
                f.flags = Le32::new(
                    $m::AddQueueFlags::new()
                        .with_is_kfd_process(true)
                        .into_bits(),
                );
                f
            }

            fn remove_queue(doorbell_dword: u32, gang_context: u64) -> $m::RemoveQueue {
                let mut f = $m::RemoveQueue::new();
                f.doorbell_offset = Le32::new(doorbell_dword);
                f.gang_context_addr = Le64::new(gang_context);
                f
            }

            fn reset_queue(doorbell_dword: u32, gang_context: u64) -> $m::Reset {
                let mut f = $m::Reset::new();
                f.flags = Le32::new(
                    $m::ResetFlags::new()
                        .with_reset_queue_only(true)
                        .into_bits(),
                );
                f.doorbell_offset = Le32::new(doorbell_dword);
                f.gang_context_addr = Le64::new(gang_context);
                f
            }

            fn suspend_all(fence: u64, value: u32) -> $m::Suspend {
                let mut f = $m::Suspend::new();
                f.flags = Le32::new(
                    $m::SuspendFlags::new()
                        .with_suspend_all_gangs(true)
                        .into_bits(),
                );
                f.suspend_fence_addr = Le64::new(fence);
                f.suspend_fence_value = Le32::new(value);
                f
            }

            fn resume_all() -> $m::Resume {
                let mut f = $m::Resume::new();
                f.flags = Le32::new(
                    $m::ResumeFlags::new()
                        .with_resume_all_gangs(true)
                        .into_bits(),
                );
                f
            }

            fn query() -> $m::QueryMesStatus {
                $m::QueryMesStatus::new()
            }

            fn status(value: u64) -> Result<(), MesStatus> {
                status_of::<$t>(value)
            }
        }
    };
}

mes_api!(V11, v11, Generation::Gfx11, |flags| flags, |_| 50);
// `mes_v12_0_set_hw_resources()` also sets `unmapped_doorbell_handling = 1`
// and gates the oversubscription timer on the firmware revision.
mes_api!(
    V12,
    v12,
    Generation::Gfx12,
    |flags| flags.with_unmapped_doorbell_handling(1),
    crate::gfx::mes::start::MesVersions::v12_oversubscription_timer
);

trait StatusKind {
    const V12: bool;
}
impl StatusKind for V11 {
    const V12: bool = false;
}
impl StatusKind for V12 {
    const V12: bool = true;
}

/// v11: success is any non-zero value (Linux's `!*status_ptr` check).
/// v12: success needs the low 32 bits non-zero; otherwise the high half
/// may carry `MES_ERR_CODE` (`mes_v12_0_submit_pkt_and_poll_completion()`).
fn status_of<T: StatusKind>(value: u64) -> Result<(), MesStatus> {
    if !T::V12 {
        return if value != 0 {
            Ok(())
        } else {
            Err(MesStatus::NotCompleted { value })
        };
    }
    if value as u32 != 0 {
        return Ok(());
    }
    match v12::decode_status(value) {
        s @ v12::Status::Failed { .. } => Err(MesStatus::V12(s)),
        v12::Status::Done(_) => Err(MesStatus::NotCompleted { value }),
    }
}

impl<C: Clock, P: Pause, const N: usize> Mes<'_, C, P, N, V12> {
    /// SET_HW_RSRC on uni-MES's KIQ pipe (pipe 1):
    /// `mes_v12_0_set_hw_resources()` fills the scheduler resources (VMID,
    /// HQD and SDMA masks, GDS, aggregated doorbells) only for
    /// `AMDGPU_MES_SCHED_PIPE`, so they stay 0 here; the pipe's own
    /// context, query fence, register bases and flags are as on pipe 0.
    pub fn set_kiq_pipe_hw_resources(&mut self, bases: &HwBases) -> Result<(), MesError> {
        let mem = self.ring.memory;
        let mut f = V12::set_hw_resources(
            mem.sch_ctx_address(),
            mem.query_status_fence_address(),
            bases,
            V12::oversubscription_timer(self.versions),
        );
        f.vmid_mask_mmhub = Le32::new(0);
        f.vmid_mask_gfxhub = Le32::new(0);
        f.gds_size = Le32::new(0);
        f.compute_hqd_mask = [Le32::new(0); 8];
        f.gfx_hqd_mask = [Le32::new(0); 2];
        f.sdma_hqd_mask = [Le32::new(0); 2];
        f.aggregated_doorbells = [Le32::new(0); 5];
        self.submit("SET_HW_RSRC", f)?;
        self.initialised = true;
        Ok(())
    }

    /// SET_HW_RSRC_1 as uni-MES sends it after SET_HW_RSRC
    /// (`mes_v12_0_set_hw_resources_1()`: only `mes_kiq_unmap_timeout`
    /// = 0xa). v11 sends this frame only under SR-IOV, which barebell
    /// does not do.
    pub fn set_hw_resources_1(&mut self) -> Result<(), MesError> {
        let mut f = v12::SetHwResources1::new();
        f.mes_kiq_unmap_timeout = Le32::new(0xa);
        self.submit("SET_HW_RSRC_1", f)
    }
}

impl<C: Clock, P: Pause, const N: usize, A: MesApi> QueueMapper for Mes<'_, C, P, N, A> {
    fn probe(&mut self) -> Result<(), MapError> {
        self.query_status().map_err(MapError::from)
    }

    fn reset_queue(&mut self, m: &Mapping) -> Result<bool, MapError> {
        Mes::reset_queue(self, m).map(|()| true)
    }

    fn map(&mut self, q: &QueueResources<'_>) -> Result<Mapping, MapError> {
        self.add_queue(q)
    }

    fn unmap(&mut self, m: &Mapping) -> Result<(), MapError> {
        self.remove_queue(m)
    }

    fn map_sdma(&mut self, q: &crate::gfx::mapper::SdmaResources<'_>) -> Result<Mapping, MapError> {
        self.add_sdma(q)
    }

    fn unmap_sdma(&mut self, m: &Mapping) -> Result<(), MapError> {
        self.send_remove(m)
    }
}

#[cfg(test)]
mod tests {
    /// The ring's size is the one the memory was made with, in dwords:
    /// what SET_HW_RSRC's ring and the write pointer's wrap are counted in.
    #[test]
    fn the_ring_is_as_long_as_its_type_says() {
        extern crate alloc;
        let m = alloc::boxed::Box::new(super::MesMemory::<512>::new());
        assert_eq!(m.ring_dwords(), 512);
        let n = alloc::boxed::Box::new(super::MesMemory::<256>::new());
        assert_eq!(n.ring_dwords(), 256);
    }

    /// `amdgpu_mes_doorbell_init()`: level `i` gets
    /// `db_start_dw_offset + i * 2` (64-bit doorbells), from the page at
    /// dword 0x800.
    #[test]
    fn aggregated_doorbells_are_consecutive_64_bit_doorbells() {
        assert_eq!(
            super::aggregated_doorbells(),
            [0x800, 0x802, 0x804, 0x806, 0x808]
        );
    }
}
