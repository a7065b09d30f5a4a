//! The runlist IB as `pm_create_runlist_ib()` (`kfd_packet_manager.c`)
//! lays it out, and the scheduling resources as `set_sched_resources()`
//! (`kfd_device_queue_manager.c`) computes them.
//!
//! Layout: for each process, MAP_PROCESS then one MAP_QUEUES per active
//! queue; the IB is sized exactly (`pm_calc_rlib_size()`: processes ×
//! MAP_PROCESS + queues × MAP_QUEUES). When the runlist is
//! over-subscribed (more processes than `max_proc_per_quantum`, more
//! compute queues than the HWS has slots, or more than one GWS queue) the
//! IB grows by one RUN_LIST, appended last, that chains back to the IB's
//! own start (`chain` and `chained_runlist_idle_disable` set): the HWS
//! then cycles through the list.

use super::HwsError;
use super::packets::{self, MapProcessForm, ProcessDesc, QueueDesc, map_queues, run_list};
use barebell_facts::Fact;

/// `AMDGPU_NUM_VMID` (`amdgpu_ids.h`).
pub const NUM_VMID: u32 = 16;

/// The first VMID KFD owns on GC 9.4.1–9.4.4: `gmc_v9_0_sw_init()` sets
/// `first_kfd_vmid` to 3 on these compute-only parts (8 elsewhere).
pub const FIRST_KFD_VMID_GC_9_4_3: u32 = 3;

/// `compute_vmid_bitmap` as `amdgpu_amdkfd_device_init()` computes it:
/// every VMID from `first_kfd_vmid` up to `AMDGPU_NUM_VMID - 1`.
pub const fn compute_vmid_bitmap(first_kfd_vmid: u32) -> u16 {
    (((1u32 << NUM_VMID) - 1) - ((1u32 << first_kfd_vmid) - 1)) as u16
}

/// The number of VMIDs in a mask: `vmid_num_kfd` in `kgd2kfd_device_init()`
/// (last − first + 1 of a contiguous mask), and `max_proc_per_quantum`
/// when `hws_max_conc_proc` is not set.
pub const fn vmid_count(mask: u16) -> u32 {
    if mask == 0 {
        return 0;
    }
    (16 - mask.leading_zeros()) - mask.trailing_zeros()
}

/// GC 9.4.3's MEC: `gfx_v9_4_3_sw_init()` sets 4 pipes of 8 queues.
pub const PIPES_PER_MEC_GC_9_4_3: u32 = 4;
pub const QUEUES_PER_PIPE_GC_9_4_3: u32 = 8;

/// The SET_RESOURCES queue mask: the first MEC's queue slots amdgpu does
/// not keep for itself (`amdgpu_amdkfd_device_init()` complements
/// `mec_bitmap[0].queue_bitmap` over the first MEC), each at bit
/// `mec * 32 + pipe * 8 + queue`
/// (`amdgpu_queue_mask_bit_to_set_resource_bit()`), as
/// `set_sched_resources()` builds it. `amdgpu_queues` numbers slots as
/// amdgpu does: `pipe * queues_per_pipe + queue`.
pub fn queue_mask(pipes_per_mec: u32, queues_per_pipe: u32, amdgpu_queues: u64) -> u64 {
    let slots = pipes_per_mec.saturating_mul(queues_per_pipe).min(64);
    let mut mask = 0u64;
    for i in 0..slots {
        if amdgpu_queues >> i & 1 != 0 {
            continue;
        }
        let queue = i % queues_per_pipe;
        let pipe = (i / queues_per_pipe) % pipes_per_mec;
        let bit = pipe * 8 + queue;
        if bit < 64 {
            mask |= 1 << bit;
        }
    }
    mask
}

/// How many compute queues HWS may run at once: `get_cp_queues_num()`,
/// the weight of KFD's queue bitmap.
pub fn cp_queues(pipes_per_mec: u32, queues_per_pipe: u32, amdgpu_queues: u64) -> u32 {
    queue_mask(pipes_per_mec, queues_per_pipe, amdgpu_queues).count_ones()
}

/// `KFD_MAX_NUM_OF_QUEUES_PER_DEVICE` (`kfd_priv.h`: 4096):
/// `pqm_create_queue()` refuses a queue beyond it.
pub const MAX_QUEUES_PER_DEVICE: usize = 4096;

/// The doorbells the MEC answers: `CP_MEC_DOORBELL_RANGE_LOWER` and
/// `_UPPER` (byte offsets into the doorbell BAR, inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoorbellRange {
    pub lower: u32,
    pub upper: u32,
}

/// `enum AMDGPU_DOORBELL_ASSIGNMENT_LAYOUT1` (`amdgpu_doorbell.h`), the
/// doorbell plan `aqua_vanjaram_doorbell_index_init()` uses on GC 9.4.3;
/// 64-bit doorbell indices.
pub mod layout1 {
    pub const KIQ_START: u32 = 0x000;
    pub const HIQ: u32 = 0x001;
    pub const USERQUEUE_START: u32 = 0x010;
    pub const USERQUEUE_END: u32 = 0x01F;
    pub const XCC_RANGE: u32 = 0x020;
    /// SDMA engines' doorbells: `0x100 ~ 0x19F`.
    pub const SDMA_ENGINE_START: u32 = 0x100;
    pub const SDMA_ENGINE_END: u32 = 0x19F;
}

/// `adev->doorbell_index.sdma_doorbell_range` as
/// `aqua_vanjaram_doorbell_index_init()` sets it: doorbell dwords per SDMA
/// engine (engine `i` starts at 64-bit index `SDMA_ENGINE_START + i *
/// range / 2`). A `.c` value: no header fact.
pub const SDMA_DOORBELL_RANGE_GC_9_4_3: u32 = 20;
/// `KFD_QUEUE_DOORBELL_MIRROR_OFFSET` (`kfd_priv.h`): odd SDMA queues'
/// doorbells sit 512 indices above the even ones.
pub const KFD_QUEUE_DOORBELL_MIRROR_OFFSET: u32 = 512;
/// `KFD_SDMA_SHADER_DOORBELL_GRANULARITY` (`kfd_priv.h` of the Debian
/// `linux-source-6.12` on this machine): its `allocate_doorbell()` aligns
/// an engine's first index up to it on GC 9.4.3/9.4.4/9.5.0. Upstream
/// `allocate_doorbell()` (e.g. gregkh/linux's) has no such alignment, so
/// [`SdmaDoorbells::contains`] accepts either assignment.
pub const KFD_SDMA_SHADER_DOORBELL_GRANULARITY: u32 = 4;
/// `num_sdma_queues_per_engine` for SDMA 4.4.2 (`kfd_device_info_set_sdma_info()`).
pub const SDMA_QUEUES_PER_ENGINE_4_4_2: u32 = 8;
/// 64-bit doorbells in a KFD process slice (`kfd_doorbell_process_slice()`:
/// `doorbell_size * KFD_MAX_NUM_OF_QUEUES_PER_PROCESS` = 8 × 1024 bytes).
pub const PROCESS_SLICE_DOORBELLS: u32 = 1024;

/// The SDMA engines KFD may put queues on, with GC 9.4.3's doorbell plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdmaDoorbells {
    /// `get_num_all_sdma_engines()`: on a one-partition part, every SDMA
    /// instance discovery lists (`adev->sdma.num_instances`).
    pub engines: u8,
    /// Whether `allocate_doorbell()` aligns an engine's first index up to
    /// [`KFD_SDMA_SHADER_DOORBELL_GRANULARITY`] (GC 9.4.3 in the Debian
    /// source; not on GC 9.4.2).
    pub aligned: bool,
}

impl SdmaDoorbells {
    /// GC 9.4.3's plan (`aqua_vanjaram_doorbell_index_init()`, aligned).
    pub const fn gc_9_4_3(engines: u8) -> Self {
        SdmaDoorbells {
            engines,
            aligned: true,
        }
    }

    /// GC 9.4.2's (`vega20_doorbell_index_init()`:
    /// `AMDGPU_VEGA20_DOORBELL_sDMA_ENGINE0` = 0x100, engines 0xA apart,
    /// the same numbers as [`layout1`]'s and
    /// [`SDMA_DOORBELL_RANGE_GC_9_4_3`]; no alignment).
    pub const fn vega20(engines: u8) -> Self {
        SdmaDoorbells {
            engines,
            aligned: false,
        }
    }

    /// `adev->doorbell_index.sdma_engine[engine]`: the engine's first
    /// 64-bit doorbell index (amdgpu's own ring on that instance uses it,
    /// `sdma_v4_4_2_sw_init()`).
    pub const fn engine_index(&self, engine: u8) -> Option<u32> {
        if engine >= self.engines {
            return None;
        }
        Some(layout1::SDMA_ENGINE_START + engine as u32 * (SDMA_DOORBELL_RANGE_GC_9_4_3 / 2))
    }

    /// The 64-bit doorbell index, within the process's doorbell slice,
    /// KFD gives queue `queue` of `engine` (`allocate_doorbell()` on GC
    /// 9.4.3: the engine's index aligned up to
    /// [`KFD_SDMA_SHADER_DOORBELL_GRANULARITY`], + 512 for odd queues, +
    /// `queue >> 1`).
    pub const fn queue_index(&self, engine: u8, queue: u32) -> Option<u32> {
        let Some(base) = self.engine_index(engine) else {
            return None;
        };
        if queue >= SDMA_QUEUES_PER_ENGINE_4_4_2 {
            return None;
        }
        let g = if self.aligned {
            KFD_SDMA_SHADER_DOORBELL_GRANULARITY
        } else {
            1
        };
        let aligned = base.div_ceil(g) * g;
        Some(aligned + (queue & 1) * KFD_QUEUE_DOORBELL_MIRROR_OFFSET + (queue >> 1))
    }

    /// Whether doorbell dword `doorbell_offset` (MAP_QUEUES' unit, from
    /// the start of the doorbell BAR) is one of `engine`'s: an even dword
    /// whose 64-bit index within its process slice, less the 512 mirror,
    /// lies in the engine's `sdma_doorbell_range` (`engine_index ..
    /// engine_index + 10`), where every assignment of
    /// `allocate_doorbell()` (aligned or not) falls.
    pub fn contains(&self, engine: u8, doorbell_offset: u32) -> bool {
        let Some(first) = self.engine_index(engine) else {
            return false;
        };
        if !doorbell_offset.is_multiple_of(2) {
            return false;
        }
        let index =
            (doorbell_offset / 2) % PROCESS_SLICE_DOORBELLS % KFD_QUEUE_DOORBELL_MIRROR_OFFSET;
        (first..first + SDMA_DOORBELL_RANGE_GC_9_4_3 / 2).contains(&index)
    }
}

impl DoorbellRange {
    /// What `gfx_v9_4_3_xcc_kiq_init_register()` programs for XCC `xcc`:
    /// from the KIQ's doorbell to the last user-queue doorbell of that
    /// XCC's block, `(index * 2) << 2` (8-byte doorbells, byte offsets).
    pub const fn gc_9_4_3_xcc(xcc: u32) -> Self {
        DoorbellRange {
            lower: ((layout1::KIQ_START + xcc * layout1::XCC_RANGE) * 2) << 2,
            upper: ((layout1::USERQUEUE_END + xcc * layout1::XCC_RANGE) * 2) << 2,
        }
    }

    /// Whether the doorbell at dword offset `doorbell_offset` (MAP_QUEUES'
    /// unit, `q->properties.doorbell_off`) is in the range.
    pub const fn contains(&self, doorbell_offset: u32) -> bool {
        let bytes = doorbell_offset as u64 * 4;
        bytes >= self.lower as u64 && bytes <= self.upper as u64
    }
}

/// What the packet manager knows about the device when it builds a
/// runlist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunlistConfig {
    pub form: MapProcessForm,
    /// `node->max_proc_per_quantum`: `min(hws_max_conc_proc,
    /// vmid_num_kfd)`, [`vmid_count`] of the VMID mask by default.
    pub max_proc_per_quantum: u32,
    /// [`cp_queues`].
    pub cp_queues: u32,
    /// `pm_use_ext_eng()`: SDMA IP ≥ 5.2 (false on GC 9.4.3's SDMA 4.4.2).
    pub sdma_ext_eng: bool,
    /// `adev->enforce_isolation`: one process at a time.
    pub enforce_isolation: bool,
    /// The doorbells compute queues may use.
    pub doorbells: DoorbellRange,
    /// The SDMA engines SDMA queues may use (none until the part's are
    /// given: [`RunlistConfig::with_sdma_engines`]).
    pub sdma: SdmaDoorbells,
}

impl RunlistConfig {
    /// GC 9.4.3 in SPX mode with KFD's defaults for XCC `xcc`: VMIDs
    /// 3..15 (13 processes per quantum), the aldebaran MAP_PROCESS, the
    /// KFD queue slots left by `amdgpu_queues`.
    pub fn gc_9_4_3(xcc: u32, amdgpu_queues: u64) -> Self {
        RunlistConfig {
            form: MapProcessForm::Aldebaran,
            max_proc_per_quantum: vmid_count(compute_vmid_bitmap(FIRST_KFD_VMID_GC_9_4_3)),
            cp_queues: cp_queues(
                PIPES_PER_MEC_GC_9_4_3,
                QUEUES_PER_PIPE_GC_9_4_3,
                amdgpu_queues,
            ),
            sdma_ext_eng: false,
            enforce_isolation: false,
            doorbells: DoorbellRange::gc_9_4_3_xcc(xcc),
            sdma: SdmaDoorbells::gc_9_4_3(0),
        }
    }

    /// The same defaults with the doorbell range `lower..=upper` (bytes)
    /// compute queues may use: GC 9.4.2's one MEC range
    /// (`gfx_v9_0_kiq_init_register()`; VMIDs, MAP_PROCESS form and queue
    /// counts are GC 9.4.3's: `first_kfd_vmid` 3 in `gmc_v9_0_sw_init()`,
    /// `pm_map_process_aldebaran()` and 2 MECs × 4 pipes × 8 queues in
    /// `gfx_v9_0_sw_init()` serve both).
    pub const fn with_doorbell_range(self, lower: u32, upper: u32) -> Self {
        RunlistConfig {
            doorbells: DoorbellRange { lower, upper },
            ..self
        }
    }

    /// The part's SDMA engines (the SDMA instances discovery lists, one
    /// partition).
    pub const fn with_sdma_engines(self, engines: u8) -> Self {
        self.with_sdma(SdmaDoorbells::gc_9_4_3(engines))
    }

    /// The SDMA engines and doorbell plan `sdma` (GC 9.4.2:
    /// [`SdmaDoorbells::vega20`]).
    pub const fn with_sdma(self, sdma: SdmaDoorbells) -> Self {
        RunlistConfig { sdma, ..self }
    }
}

/// One process of the runlist and its active queues.
#[derive(Debug, Clone, Copy)]
pub struct ProcessQueues<'q> {
    pub process: ProcessDesc,
    pub queues: &'q [QueueDesc],
}

/// A built runlist IB: what RUN_LIST on the HIQ names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runlist {
    /// GPU address of the IB's first dword.
    pub ib_address: u64,
    /// IB size in dwords (`ib_size`, the whole allocation).
    pub ib_dwords: u32,
    /// `process_cnt`: processes the HWS maps together.
    pub process_cnt: u8,
    pub over_subscribed: bool,
    pub processes: usize,
    pub queues: usize,
}

/// Address bits of a page-directory base (47:12; a PD BO is page
/// aligned, and `gmc_v9_0_get_vm_pde()` BUG_ONs on bits 63:48).
pub const PDE_ADDRESS: u64 = 0x0000_FFFF_FFFF_F000;
/// Flags `amdgpu_ttm_tt_pde_flags()` may put in a PD base:
/// `AMDGPU_PTE_VALID` (bit 0), `_SYSTEM` (1), `_SNOOPED` (2) (`amdgpu_vm.h`).
pub const PDE_VALID: u64 = 1 << 0;
pub const PDE_FLAGS: u64 = 0b111;

/// The page-table base check: a valid PDE with nothing outside the
/// address and the flags `amdgpu_gmc_pd_addr()` can produce.
pub const fn page_table_base_ok(base: u64) -> bool {
    base & PDE_VALID != 0 && base & !(PDE_ADDRESS | PDE_FLAGS) == 0
}

/// IB size in dwords for `procs` (`pm_calc_rlib_size()`), and whether it
/// is over-subscribed.
pub fn ib_dwords(cfg: &RunlistConfig, procs: &[ProcessQueues<'_>]) -> (usize, bool) {
    let queues: usize = procs.iter().map(|p| p.queues.len()).sum();
    let compute = procs
        .iter()
        .flat_map(|p| p.queues.iter())
        .filter(|q| q.engine == packets::Engine::Compute)
        .count();
    let gws = procs
        .iter()
        .flat_map(|p| p.queues.iter())
        .filter(|q| q.gws)
        .count();
    let max_proc = cfg.max_proc_per_quantum.max(1) as usize;
    let over = procs.len() > max_proc || compute > cfg.cp_queues as usize || gws > 1;
    let mut n = procs.len() * cfg.form.dwords() + queues * map_queues::DWORDS;
    if over {
        n += run_list::DWORDS;
    }
    (n, over)
}

/// Checks one queue as KFD would before it enters a runlist.
fn check_queue(cfg: &RunlistConfig, pasid: u16, q: &QueueDesc) -> Result<(), HwsError> {
    if q.engine == packets::Engine::Compute && !cfg.doorbells.contains(q.doorbell_offset) {
        return Err(HwsError::DoorbellOutOfRange {
            pasid,
            doorbell_offset: q.doorbell_offset,
            range: cfg.doorbells,
        });
    }
    if !map_queues::DOORBELL_OFFSET.fits(q.doorbell_offset.into()) {
        return Err(HwsError::DoorbellOutOfRange {
            pasid,
            doorbell_offset: q.doorbell_offset,
            range: cfg.doorbells,
        });
    }
    if let packets::Engine::Sdma { id } = q.engine {
        if id >= cfg.sdma.engines {
            return Err(HwsError::SdmaEngine {
                pasid,
                engine: id,
                engines: cfg.sdma.engines,
            });
        }
        if !cfg.sdma.contains(id, q.doorbell_offset) {
            return Err(HwsError::SdmaDoorbellOutOfRange {
                pasid,
                engine: id,
                doorbell_offset: q.doorbell_offset,
            });
        }
    }
    if q.mqd_address == 0 || q.wptr_address == 0 {
        return Err(HwsError::NullQueueAddress {
            pasid,
            doorbell_offset: q.doorbell_offset,
        });
    }
    Ok(())
}

/// Builds the runlist IB for `procs` into `ib` (device memory at
/// `ib_address`), as `pm_create_runlist_ib()` does. Refuses, before
/// anything is sent, what KFD refuses or cannot encode.
pub fn build(
    cfg: &RunlistConfig,
    procs: &[ProcessQueues<'_>],
    ib: &mut [u32],
    ib_address: u64,
) -> Result<Runlist, HwsError> {
    if procs.is_empty() {
        // `map_queues_cpsch()` sends no runlist without processes.
        return Err(HwsError::EmptyRunlist);
    }
    if !ib_address.is_multiple_of(4) {
        return Err(HwsError::IbMisaligned {
            address: ib_address,
        });
    }
    let queues: usize = procs.iter().map(|p| p.queues.len()).sum();
    if queues > MAX_QUEUES_PER_DEVICE {
        return Err(HwsError::TooManyQueues {
            pasid: None,
            count: queues,
            max: MAX_QUEUES_PER_DEVICE,
        });
    }
    for (i, p) in procs.iter().enumerate() {
        let pasid = p.process.pasid;
        if pasid == 0 || procs[..i].iter().any(|o| o.process.pasid == pasid) {
            return Err(HwsError::BadPasid { pasid });
        }
        if !page_table_base_ok(p.process.page_table_base) {
            return Err(HwsError::PageTableBase {
                pasid,
                value: p.process.page_table_base,
            });
        }
        if !packets::map_process::NUM_QUEUES.fits(p.queues.len() as u64) {
            return Err(HwsError::TooManyQueues {
                pasid: Some(pasid),
                count: p.queues.len(),
                max: (packets::map_process::NUM_QUEUES.mask()
                    >> packets::map_process::NUM_QUEUES.shift) as usize,
            });
        }
        for q in p.queues {
            check_queue(cfg, pasid, q)?;
        }
    }
    for (i, q) in procs.iter().flat_map(|p| p.queues.iter()).enumerate() {
        let dup = procs
            .iter()
            .flat_map(|p| p.queues.iter())
            .take(i)
            .any(|o| o.doorbell_offset == q.doorbell_offset);
        if dup {
            return Err(HwsError::DuplicateDoorbell {
                doorbell_offset: q.doorbell_offset,
            });
        }
    }
    let (dwords, over) = ib_dwords(cfg, procs);
    if !run_list::IB_SIZE.fits(dwords as u64) {
        return Err(HwsError::IbTooLarge { dwords });
    }
    let Some(ib) = ib.get_mut(..dwords) else {
        return Err(HwsError::IbTooSmall {
            needed: dwords,
            have: ib.len(),
        });
    };
    // `pm_runlist_v9()`: one process when isolation is enforced, else
    // min(processes, max_proc_per_quantum); the field holds 4 bits.
    let process_cnt = if cfg.enforce_isolation {
        1
    } else {
        procs.len().min(cfg.max_proc_per_quantum.max(1) as usize)
    };
    if !run_list::PROCESS_CNT.fits(process_cnt as u64) {
        return Err(HwsError::TooManyProcesses {
            process_cnt,
            max: 15,
        });
    }
    let mut at = 0usize;
    for p in procs {
        let Some(out) = ib.get_mut(at..) else {
            return Err(HwsError::IbTooSmall {
                needed: dwords,
                have: at,
            });
        };
        let process = ProcessDesc {
            enforce_isolation: p.process.enforce_isolation || cfg.enforce_isolation,
            ..p.process
        };
        let n = packets::map_process(cfg.form, &process, p.queues.len() as u16, out).ok_or(
            HwsError::IbTooSmall {
                needed: dwords,
                have: at,
            },
        )?;
        at += n;
        for q in p.queues {
            let pkt = packets::map_queues(q, false, cfg.sdma_ext_eng);
            let Some(out) = ib.get_mut(at..at + pkt.len()) else {
                return Err(HwsError::IbTooSmall {
                    needed: dwords,
                    have: at,
                });
            };
            out.copy_from_slice(&pkt);
            at += pkt.len();
        }
    }
    if over {
        let pkt = packets::run_list(ib_address, dwords as u32, true, process_cnt as u8);
        let Some(out) = ib.get_mut(at..at + pkt.len()) else {
            return Err(HwsError::IbTooSmall {
                needed: dwords,
                have: at,
            });
        };
        out.copy_from_slice(&pkt);
    }
    Ok(Runlist {
        ib_address,
        ib_dwords: dwords as u32,
        process_cnt: process_cnt as u8,
        over_subscribed: over,
        processes: procs.len(),
        queues,
    })
}

const DB: &str = "amdgpu_doorbell.h";

/// The doorbell plan facts (`amdgpu_doorbell.h`).
pub const FACTS: &[Fact] = &[
    Fact::constant(
        DB,
        "AMDGPU_DOORBELL_LAYOUT1_KIQ_START",
        layout1::KIQ_START as u64,
    ),
    Fact::constant(DB, "AMDGPU_DOORBELL_LAYOUT1_HIQ", layout1::HIQ as u64),
    Fact::constant(
        DB,
        "AMDGPU_DOORBELL_LAYOUT1_USERQUEUE_START",
        layout1::USERQUEUE_START as u64,
    ),
    Fact::constant(
        DB,
        "AMDGPU_DOORBELL_LAYOUT1_USERQUEUE_END",
        layout1::USERQUEUE_END as u64,
    ),
    Fact::constant(
        DB,
        "AMDGPU_DOORBELL_LAYOUT1_XCC_RANGE",
        layout1::XCC_RANGE as u64,
    ),
    Fact::constant(
        DB,
        "AMDGPU_DOORBELL_LAYOUT1_sDMA_ENGINE_START",
        layout1::SDMA_ENGINE_START as u64,
    ),
    Fact::constant(
        DB,
        "AMDGPU_DOORBELL_LAYOUT1_sDMA_ENGINE_END",
        layout1::SDMA_ENGINE_END as u64,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gfx::hws::packets::{Engine, header, opcode};

    const PT: u64 = 0x0000_0040_0000_1001;

    /// 0xFFFF - 0x7: VMIDs 3..15, 13 of them.
    #[test]
    fn gc_9_4_3_vmids() {
        assert_eq!(compute_vmid_bitmap(3), 0xFFF8);
        assert_eq!(vmid_count(0xFFF8), 13);
        assert_eq!(compute_vmid_bitmap(8), 0xFF00);
        assert_eq!(vmid_count(0), 0);
    }

    /// amdgpu keeps pipe 0 queue 0 and pipe 1 queue 0 (bits 0 and 8 in
    /// its numbering, 8 queues a pipe); KFD gets the other 30 slots of
    /// MEC 0's 4 pipes.
    #[test]
    fn queue_mask_complements_amdgpu_queues() {
        let m = queue_mask(4, 8, 1 | 1 << 8);
        assert_eq!(m, 0xFFFF_FEFE);
        assert_eq!(cp_queues(4, 8, 1 | 1 << 8), 30);
        // 2 pipes of 4: amdgpu slot 5 is pipe 1 queue 1 -> bit 9.
        assert_eq!(queue_mask(2, 4, 1 << 5), 0x0D0F);
    }

    #[test]
    fn doorbell_range_gc_9_4_3() {
        let r = DoorbellRange::gc_9_4_3_xcc(0);
        assert_eq!((r.lower, r.upper), (0, 0x1F * 2 * 4));
        let r1 = DoorbellRange::gc_9_4_3_xcc(1);
        assert_eq!((r1.lower, r1.upper), (0x20 * 8, 0x3F * 8));
        // Doorbell index 0x10 (8-byte) is dword 0x20.
        assert!(r.contains(0x20));
        assert!(r.contains(0x3E));
        assert!(!r.contains(0x40));
    }

    #[test]
    fn page_table_base_format() {
        assert!(page_table_base_ok(PT));
        assert!(page_table_base_ok(0x1000 | 0b111));
        assert!(!page_table_base_ok(0x1000));
        assert!(!page_table_base_ok(0x1000 | 1 << 3 | 1));
        assert!(!page_table_base_ok(1 << 48 | 1));
    }

    fn cfg() -> RunlistConfig {
        RunlistConfig::gc_9_4_3(0, 1)
    }

    #[test]
    fn one_process_two_queues() {
        let qs = [
            QueueDesc::compute(0x20, 0x10_0000, 0x20_0000),
            QueueDesc::compute(0x22, 0x10_1000, 0x20_0008),
        ];
        let procs = [ProcessQueues {
            process: ProcessDesc::new(7, PT),
            queues: &qs,
        }];
        let mut ib = [0u32; 64];
        let rl = build(&cfg(), &procs, &mut ib, 0x4000).unwrap();
        assert_eq!(rl.ib_dwords, 21 + 2 * 7);
        assert!(!rl.over_subscribed);
        assert_eq!(rl.process_cnt, 1);
        assert_eq!(ib[0], 0xC013_A100);
        assert_eq!(ib[13] >> 22, 2);
        assert_eq!(ib[21], 0xC005_A200);
        assert_eq!(ib[23], 0x20 << 2);
        assert_eq!(ib[28], 0xC005_A200);
        assert_eq!(ib[30], 0x22 << 2);
        assert_eq!(ib[35], 0);
    }

    /// A device that enforces isolation has every process's MAP_PROCESS
    /// run the cleaner shader (`exec_cleaner_shader`, bit 17 of its second
    /// dword in `pm4_mes_map_process_aldebaran`), whatever the process
    /// asked, and runs one process at a time.
    #[test]
    fn enforced_isolation_marks_every_process() {
        let qs = [QueueDesc::compute(0x20, 0x10_0000, 0x20_0000)];
        let procs = [ProcessQueues {
            process: ProcessDesc::new(7, PT),
            queues: &qs,
        }];
        let mut ib = [0u32; 64];
        build(&cfg(), &procs, &mut ib, 0x4000).unwrap();
        assert_eq!(ib[1] >> 17 & 1, 0);
        let isolated = RunlistConfig {
            enforce_isolation: true,
            ..cfg()
        };
        let rl = build(&isolated, &procs, &mut ib, 0x4000).unwrap();
        assert_eq!(ib[1] >> 17 & 1, 1);
        assert_eq!(rl.process_cnt, 1);
    }

    /// Three processes with two processes per quantum: the IB ends in a
    /// RUN_LIST chaining to itself.
    #[test]
    fn over_subscription_chains_back() {
        let q = [QueueDesc::compute(0x20, 0x10_0000, 0x20_0000)];
        let p = |pasid| ProcessQueues {
            process: ProcessDesc::new(pasid, PT),
            queues: &[],
        };
        let procs = [
            ProcessQueues {
                process: ProcessDesc::new(1, PT),
                queues: &q,
            },
            p(2),
            p(3),
        ];
        let c = RunlistConfig {
            max_proc_per_quantum: 2,
            ..cfg()
        };
        let mut ib = [0u32; 128];
        let rl = build(&c, &procs, &mut ib, 0x8000).unwrap();
        assert!(rl.over_subscribed);
        assert_eq!(rl.ib_dwords, 3 * 21 + 7 + 4);
        assert_eq!(rl.process_cnt, 2);
        let tail = &ib[3 * 21 + 7..3 * 21 + 7 + 4];
        assert_eq!(tail[0], header(opcode::RUN_LIST, 4));
        assert_eq!(tail[1..3], [0x8000, 0]);
        assert_eq!(
            tail[3],
            (3 * 21 + 7 + 4) | 1 << 20 | 1 << 22 | 1 << 23 | 2 << 24
        );
    }

    /// `allocate_doorbell()` on GC 9.4.3 by hand: engine `e` starts at
    /// 0x100 + 10e (`aqua_vanjaram_doorbell_index_init()`), aligned up to
    /// 4, odd queues +512, then + queue / 2.
    #[test]
    fn sdma_doorbells_as_kfd_assigns_them() {
        let d = SdmaDoorbells::gc_9_4_3(16);
        assert_eq!(d.engine_index(0), Some(0x100));
        assert_eq!(d.engine_index(1), Some(0x10A));
        assert_eq!(d.engine_index(15), Some(0x196));
        assert_eq!(d.engine_index(16), None);
        assert_eq!(d.queue_index(0, 0), Some(0x100));
        assert_eq!(d.queue_index(0, 1), Some(0x300));
        assert_eq!(d.queue_index(0, 7), Some(0x303));
        // 0x10A aligned up to 0x10C.
        assert_eq!(d.queue_index(1, 0), Some(0x10C));
        assert_eq!(d.queue_index(1, 2), Some(0x10D));
        assert_eq!(d.queue_index(1, 8), None);
        // Dword = 2 × index, in any process slice (1024 doorbells).
        assert!(d.contains(1, 0x10C * 2));
        assert!(d.contains(1, 0x10C * 2 + 2048));
        // Upstream's unaligned 0x10A is engine 1's too; 0x114 is engine 2's.
        assert!(d.contains(1, 0x10A * 2));
        assert!(d.contains(1, 0x30D * 2));
        assert!(!d.contains(1, 0x114 * 2));
        assert!(!d.contains(0, 0x10C * 2));
        assert!(!d.contains(0, 0x201));
        assert!(!d.contains(16, 0x200));
    }

    /// `allocate_doorbell()` on GC 9.4.2 by hand: `sdma_engine[]` of
    /// `vega20_doorbell_index_init()` (0x100, 0x10A, 0x114, 0x11E, 0x128),
    /// not aligned, odd queues +512, then + queue / 2.
    #[test]
    fn vega20_sdma_doorbells_are_not_aligned() {
        let d = SdmaDoorbells::vega20(5);
        assert_eq!(d.queue_index(1, 0), Some(0x10A));
        assert_eq!(d.queue_index(1, 3), Some(0x10A + 512 + 1));
        assert_eq!(d.queue_index(4, 0), Some(0x128));
        assert_eq!(d.queue_index(5, 0), None);
        assert!(d.contains(1, 0x10A * 2));
        assert!(!d.contains(0, 0x10A * 2));
    }

    #[test]
    fn refusals_before_sending() {
        let good = [QueueDesc::compute(0x20, 0x10_0000, 0x20_0000)];
        let mut ib = [0u32; 64];
        let one = |process, queues| [ProcessQueues { process, queues }];
        assert_eq!(
            build(
                &cfg(),
                &one(ProcessDesc::new(1, 0x1000), &good),
                &mut ib,
                0x4000
            ),
            Err(HwsError::PageTableBase {
                pasid: 1,
                value: 0x1000
            })
        );
        let far = [QueueDesc::compute(0x100, 0x10_0000, 0x20_0000)];
        assert!(matches!(
            build(&cfg(), &one(ProcessDesc::new(1, PT), &far), &mut ib, 0x4000),
            Err(HwsError::DoorbellOutOfRange {
                doorbell_offset: 0x100,
                ..
            })
        ));
        // An SDMA queue is not held to the MEC range but to its engine's
        // doorbells: engine 0 queue 0 is 64-bit index 0x100
        // (AMDGPU_DOORBELL_LAYOUT1_sDMA_ENGINE_START), dword 0x200.
        let sdma = [QueueDesc {
            engine: Engine::Sdma { id: 0 },
            ..QueueDesc::compute(0x200, 0x10_0000, 0x20_0000)
        }];
        let with_sdma = cfg().with_sdma_engines(16);
        assert_eq!(
            build(
                &cfg(),
                &one(ProcessDesc::new(1, PT), &sdma),
                &mut ib,
                0x4000
            ),
            Err(HwsError::SdmaEngine {
                pasid: 1,
                engine: 0,
                engines: 0
            })
        );
        assert!(
            build(
                &with_sdma,
                &one(ProcessDesc::new(1, PT), &sdma),
                &mut ib,
                0x4000
            )
            .is_ok()
        );
        let stray = [QueueDesc {
            engine: Engine::Sdma { id: 0 },
            ..far[0]
        }];
        assert_eq!(
            build(
                &with_sdma,
                &one(ProcessDesc::new(1, PT), &stray),
                &mut ib,
                0x4000
            ),
            Err(HwsError::SdmaDoorbellOutOfRange {
                pasid: 1,
                engine: 0,
                doorbell_offset: 0x100
            })
        );
        assert_eq!(
            build(
                &cfg(),
                &one(ProcessDesc::new(1, PT), &good),
                &mut ib[..27],
                0x4000
            ),
            Err(HwsError::IbTooSmall {
                needed: 28,
                have: 27
            })
        );
        assert_eq!(
            build(
                &cfg(),
                &one(ProcessDesc::new(1, PT), &good),
                &mut ib,
                0x4002
            ),
            Err(HwsError::IbMisaligned { address: 0x4002 })
        );
        assert_eq!(
            build(&cfg(), &[], &mut ib, 0x4000),
            Err(HwsError::EmptyRunlist)
        );
        let dup = [good[0], good[0]];
        assert_eq!(
            build(&cfg(), &one(ProcessDesc::new(1, PT), &dup), &mut ib, 0x4000),
            Err(HwsError::DuplicateDoorbell {
                doorbell_offset: 0x20
            })
        );
        let two = [
            ProcessQueues {
                process: ProcessDesc::new(4, PT),
                queues: &[],
            },
            ProcessQueues {
                process: ProcessDesc::new(4, PT),
                queues: &[],
            },
        ];
        assert_eq!(
            build(&cfg(), &two, &mut ib, 0x4000),
            Err(HwsError::BadPasid { pasid: 4 })
        );
    }
}
