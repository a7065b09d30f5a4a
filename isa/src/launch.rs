//! Dispatch: from an AQL kernel dispatch packet's fields and the kernel
//! descriptor to running waves, as the CP/SPI does it.
//!
//! The steps follow AMDGPUUsage's "Initial Kernel Execution State" (LLVM 19):
//! enabled user SGPRs are packed from s0 in the order private segment buffer
//! (4), dispatch ptr (2), queue ptr (2), kernarg segment ptr (2), dispatch id
//! (2), flat scratch init (2), private segment size (1); the system SGPRs
//! (workgroup id x/y/z, workgroup info, private segment wave offset) follow
//! at s[USER_SGPR_COUNT]. On gfx12 (architected SGPRs) the workgroup ids are
//! delivered in TTMP9 (x) and TTMP7 (y in [15:0], z in [31:16]) instead.
//! Work-item ids are packed into v0 on gfx11+ and on gfx90a/gfx942 (LLVM's
//! packed-TID feature; x [9:0], y [19:10], z [29:20]). gfx90a and gfx942
//! (no architected SGPRs) get their workgroup ids in system SGPRs as gfx11
//! does.
//!
//! Model conventions (not hardware facts): scratch is a per-lane byte array
//! addressed from 0 (the swizzled layout and FLAT_SCRATCH base are not
//! modelled); the private segment buffer descriptor (except on gfx90a,
//! whose MUBUF scratch reads it: a swizzled descriptor with base 0, see
//! `private_segment_buffer`) and flat scratch init SGPRs hold zero.
//!
//! A workgroup's LDS is the packet's `group_segment_size`, which holds
//! the kernel's fixed group segment and any dynamic part (ROCR and
//! `barebell-kernel` fill it so; the descriptor's
//! `group_segment_fixed_size` excludes the dynamic part, AMDGPUUsage).
//! The CP sets `COMPUTE_PGM_RSRC2.LDS_SIZE` from the packet: LLVM writes
//! 0 there for AMDHSA "as it is populated by the CP"
//! (`AMDGPUAsmPrinter::getSIProgramInfo()`, r302277), in blocks of
//! [`LDS_GRANULE`] bytes; an LDS access past the last block is a typed
//! stop ([`ExecError::LdsOutOfRange`]), never a read of another
//! workgroup's LDS.
//!
//! A lane's scratch is the packet's `private_segment_size`, rounded up to
//! whole 1 KiB waves ([`SCRATCH_WAVE_GRANULE`]): the size the CP and
//! ROCR's scratch handler allocate from, never the descriptor's
//! `private_segment_fixed_size` (which the launcher must copy into the
//! packet, as ROCR's and CLR's do). **Model convention**: an access past
//! it is a typed stop ([`ExecError::ScratchOutOfRange`]); on hardware it
//! lands in whatever the queue's larger scratch holds, or faults past the
//! wave's `COMPUTE_TMPRING_SIZE.WAVESIZE`.

use crate::dump::{DumpReason, WaveDump, WaveId};
use crate::exec::{ExecError, Flow, Interp, Shared, Wave};
use crate::inst::{Syntax, Target};
use crate::kd::{KD_SIZE, KernelDescriptor};
use crate::mem::{MemFault, Memory};
use alloc::vec;
use alloc::vec::Vec;

/// The private segment buffer descriptor a wave gets in its first user
/// SGPRs. gfx90a (GFX9 before gfx940, no architected flat scratch)
/// reaches scratch through it with MUBUF, so it gets the fields ROCR's
/// gfx9 branch writes (the kernel crate's `ScratchPlan::resource_descriptor`:
/// WORD1 SWIZZLE_ENABLE, WORD3 0x00ea_4fac = X/Y/Z/W selects, UINT, 32,
/// ELEMENT_SIZE 1, INDEX_STRIDE 3, ADD_TID_ENABLE), over the model's
/// scratch addressed from 0: base 0, NUM_RECORDS all ones (the
/// interpreter bounds each lane's scratch itself). Every other target
/// gets zeros (module doc).
fn private_segment_buffer(target: Target) -> [u32; 4] {
    if target.is_gfx9() && !target.is_gfx940() {
        [0, 1 << 31, u32::MAX, 0x00ea_4fac]
    } else {
        [0; 4]
    }
}

/// The AQL kernel dispatch packet fields the launch uses (HSA
/// `hsa_kernel_dispatch_packet_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dispatch {
    pub setup_dims: u8,
    pub workgroup_size: [u16; 3],
    pub grid_size: [u32; 3],
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub packet_address: u64,
    pub queue_address: u64,
    pub dispatch_id: u64,
}

/// Launch options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub target: Target,
    /// Chooses the order in which waves and workgroups run.
    pub seed: u64,
    /// Bound on instructions over the whole dispatch.
    pub max_instructions: u64,
    /// Workgroups resident (interleaved) at once.
    pub resident_workgroups: u32,
    /// Which of the dispatch's workgroups this launch runs: all of them by
    /// default, or one XCC's share when several XCCs run one dispatch
    /// ([`Share`]).
    pub share: Share,
    /// Asked between workgroup scheduling rounds: `true` ends the
    /// dispatch with [`LaunchError::Stopped`] (a host's wall-clock bound
    /// or a stop signal; the instruction bound stays the model's own).
    pub stop: StopHook,
    /// A wave whose state [`launch_dump`] copies out when it ends.
    pub watch: Option<WaveId>,
    /// Where the waves' flat addresses reach LDS and scratch: the
    /// queue's VMID's `SH_MEM_BASES` on a device
    /// ([`crate::exec::Apertures::from_sh_mem_bases`]).
    pub apertures: crate::exec::Apertures,
}

/// The wave states [`launch_dump`] took.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dumps {
    /// The watched wave at its `s_endpgm` ([`LaunchConfig::watch`]).
    pub watched: Option<WaveDump>,
    /// The wave that stopped the dispatch (a fault), or that was running
    /// when the instruction bound or the host stopped it.
    pub stopped: Option<WaveDump>,
}

/// A function the interpreter asks whether to stop the dispatch. Not
/// part of a configuration's identity: any two compare equal.
#[derive(Clone, Copy)]
pub struct StopHook(pub Option<fn() -> bool>);

impl StopHook {
    pub const NONE: StopHook = StopHook(None);

    fn asks(self) -> bool {
        self.0.is_some_and(|f| f())
    }
}

impl core::fmt::Debug for StopHook {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(if self.0.is_some() {
            "StopHook(set)"
        } else {
            "StopHook(none)"
        })
    }
}

impl PartialEq for StopHook {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for StopHook {}

/// One XCC's share of a dispatch that several XCCs run (GC 9.4.3 in SPX
/// mode: every XCC's CP reads the same AQL packet). Workgroups are dealt
/// out round-robin in chunks of `chunk` by flat workgroup id: chunk `c`
/// goes to XCC `c % parts`. Round-robin across XCDs is what AMD states
/// for MI300 ("workgroups are typically scheduled round-robin across
/// XCDs", ROCm composable_kernel PR 3652, which remaps ids because of
/// it); the chunk is the MQD's `compute_tg_chunk_size`
/// (`init_mqd_v9_4_3()` in `kfd_mqd_manager_v9.c`). That the deal is by
/// flat id in x-fastest order is the model's reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// XCCs that run the dispatch (1: the whole dispatch here).
    pub parts: u32,
    /// This launch's XCC, `0..parts`.
    pub index: u32,
    /// Consecutive workgroups per turn (at least 1).
    pub chunk: u32,
}

impl Share {
    /// The whole dispatch.
    pub const ALL: Share = Share {
        parts: 1,
        index: 0,
        chunk: 1,
    };

    /// Whether the workgroup with flat id `g` is this share's.
    pub fn owns(&self, g: u64) -> bool {
        let parts = u64::from(self.parts.max(1));
        (g / u64::from(self.chunk.max(1))) % parts == u64::from(self.index)
    }
}

impl LaunchConfig {
    pub fn new(target: Target) -> LaunchConfig {
        LaunchConfig {
            target,
            seed: 0,
            max_instructions: 1 << 34,
            resident_workgroups: 4,
            share: Share::ALL,
            stop: StopHook::NONE,
            watch: None,
            apertures: crate::exec::Apertures::default(),
        }
    }
}

/// Counts from a finished dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub workgroups: u64,
    pub waves: u64,
    pub instructions: u64,
    pub lane_instructions: u64,
}

/// Why a dispatch did not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchError {
    /// The kernel descriptor could not be read.
    Descriptor(MemFault),
    /// The packet or descriptor asks for something the model does not do.
    Unsupported(&'static str),
    /// A packet field is out of range (zero sizes, too many lanes).
    BadPacket(&'static str),
    /// A wave stopped (illegal/unimplemented instruction, fault): the CP
    /// would report this as the queue's error.
    Wave {
        workgroup: [u32; 3],
        wave: u32,
        error: ExecError,
    },
    /// The instruction bound ran out (a hung kernel).
    Timeout { instructions: u64 },
    /// The host's [`StopHook`] ended the dispatch after `instructions`.
    Stopped { instructions: u64 },
}

impl core::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LaunchError::Descriptor(e) => write!(f, "reading the kernel descriptor: {e}"),
            LaunchError::Unsupported(w) => write!(f, "unsupported dispatch: {w}"),
            LaunchError::BadPacket(w) => write!(f, "bad dispatch packet: {w}"),
            LaunchError::Wave {
                workgroup,
                wave,
                error,
            } => write!(
                f,
                "wave {wave} of workgroup ({}, {}, {}): {error}",
                workgroup[0], workgroup[1], workgroup[2]
            ),
            LaunchError::Timeout { instructions } => {
                write!(
                    f,
                    "dispatch did not finish within {instructions} instructions"
                )
            }
            LaunchError::Stopped { instructions } => {
                write!(
                    f,
                    "dispatch stopped by the host after {instructions} instructions"
                )
            }
        }
    }
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

struct Group {
    id: [u32; 3],
    lds: Vec<u8>,
    waves: Vec<Wave>,
    at_barrier: Vec<bool>,
}

/// The most scratch one wave has: `COMPUTE_TMPRING_SIZE.WAVESIZE` is 15
/// bits of 256-byte units on gfx11/gfx12 (and 13 bits of 1 KiB units on
/// gfx9, the same 8 MiB bound). A larger private segment is refused
/// rather than allocated.
pub const MAX_WAVE_SCRATCH: u64 = 0x7fff * 256;

/// LDS per workgroup on gfx11, gfx12, gfx90a and gfx942 (64 KiB); the descriptor's
/// group segment plus the packet's dynamic part must fit.
pub const MAX_LDS: u64 = 64 * 1024;

/// The block LDS is allocated in: AMDGPUUsage, "COMPUTE_PGM_RSRC2 ...
/// GRANULATED_LDS_SIZE ... Granularity is device specific", the unit
/// the CP writes `COMPUTE_PGM_RSRC2.LDS_SIZE` in from the packet's group
/// segment size: `roundup(lds-size / (128 * 4))` from GFX7 on (later
/// versions of the table single out only GFX950 and GFX125* with larger
/// blocks). 512 bytes for gfx11, gfx90a and gfx942; for gfx12 a *model value*
/// where a version of the table does not name it. Hardware may allocate
/// coarser blocks than it encodes (an LLVM proposal gives 1 KiB on
/// GFX10.3-GFX12.0), so the smallest documented block keeps the model's
/// bound no looser than the hardware's.
pub const LDS_GRANULE: u64 = 512;

/// Scratch is allocated in whole waves of 1 KiB: ROCR's dynamic scratch
/// handler takes the packet's `private_segment_size` and rounds it to
/// `1024 / lanes_per_wave` bytes per lane ("Align whole waves to 1KB",
/// `AqlQueue::DynamicQueueEventsHandler()`, formerly
/// `DynamicScratchHandler()`, in `amd_aql_queue.cpp`).
pub const SCRATCH_WAVE_GRANULE: u32 = 1024;

/// Runs a dispatch to completion.
pub fn launch<M: Memory>(
    mem: &mut M,
    cfg: &LaunchConfig,
    d: &Dispatch,
) -> Result<Stats, LaunchError> {
    launch_dump(mem, cfg, d, &mut Dumps::default())
}

/// What a dispatch's descriptor and packet give the scheduler, checked.
struct Shape {
    kd: KernelDescriptor,
    wave_size: u32,
    nvgpr: u32,
    entry: u64,
    scratch: u32,
    lds_size: usize,
    ngroups: [u32; 3],
    total_groups: u64,
}

/// Reads the kernel descriptor and checks the dispatch against what the
/// model runs (the refusals [`launch`] documents).
fn shape<M: Memory>(mem: &mut M, cfg: &LaunchConfig, d: &Dispatch) -> Result<Shape, LaunchError> {
    let mut kb = [0u8; KD_SIZE];
    mem.read(d.kernel_object, &mut kb)
        .map_err(LaunchError::Descriptor)?;
    shape_of(KernelDescriptor::parse(&kb), cfg, d)
}

/// [`shape`] for a descriptor already in hand.
fn shape_of(kd: KernelDescriptor, cfg: &LaunchConfig, d: &Dispatch) -> Result<Shape, LaunchError> {
    if d.workgroup_size.contains(&0) || d.grid_size.contains(&0) {
        return Err(LaunchError::BadPacket("zero workgroup or grid size"));
    }
    let wg_lanes: u32 = d.workgroup_size.iter().map(|&x| u32::from(x)).product();
    if wg_lanes > 1024 {
        return Err(LaunchError::BadPacket(
            "more than 1024 work-items per workgroup",
        ));
    }
    let wave_size: u32 = if kd.wave32() { 32 } else { 64 };
    let nvgpr = if cfg.target.is_gfx9() {
        kd.vgpr_count_gfx90a()
    } else {
        kd.vgpr_count()
    }
    .max(1);
    if cfg.target.is_gfx9() && kd.wave32() {
        return Err(LaunchError::Unsupported(
            "gfx90a and gfx942 run wave64 only",
        ));
    }
    let entry = d
        .kernel_object
        .wrapping_add(kd.kernel_code_entry_byte_offset as u64);
    // The packet's private segment alone bounds a lane's scratch
    // (module doc); checked before rounding, so the rounding cannot wrap.
    if u64::from(d.private_segment_size) * u64::from(wave_size) > MAX_WAVE_SCRATCH {
        return Err(LaunchError::BadPacket(
            "private segment larger than a wave's scratch (COMPUTE_TMPRING_SIZE.WAVESIZE)",
        ));
    }
    let scratch = d
        .private_segment_size
        .next_multiple_of(SCRATCH_WAVE_GRANULE / wave_size);
    if u64::from(scratch) * u64::from(wave_size) > MAX_WAVE_SCRATCH {
        return Err(LaunchError::BadPacket(
            "private segment larger than a wave's scratch (COMPUTE_TMPRING_SIZE.WAVESIZE)",
        ));
    }
    // The packet's size alone (module doc): adding the descriptor's fixed
    // size counted it twice for every packet ROCR or barebell-kernel builds.
    let lds = u64::from(d.group_segment_size);
    if lds > MAX_LDS {
        return Err(LaunchError::BadPacket(
            "group segment larger than the 64 KiB of LDS a workgroup has",
        ));
    }
    // Whole LDS blocks (module doc); 64 KiB is a multiple of a block.
    let lds_size = lds.next_multiple_of(LDS_GRANULE) as usize;
    let ngroups: [u32; 3] =
        core::array::from_fn(|i| d.grid_size[i].div_ceil(u32::from(d.workgroup_size[i])));
    let total_groups = u64::from(ngroups[0]) * u64::from(ngroups[1]) * u64::from(ngroups[2]);
    Ok(Shape {
        kd,
        wave_size,
        nvgpr,
        entry,
        scratch,
        lds_size,
        ngroups,
        total_groups,
    })
}

/// [`launch`], copying wave states into `dumps`: the wave that stopped
/// the dispatch, and the watched one ([`LaunchConfig::watch`]) when it
/// ends.
pub fn launch_dump<M: Memory>(
    mem: &mut M,
    cfg: &LaunchConfig,
    d: &Dispatch,
    dumps: &mut Dumps,
) -> Result<Stats, LaunchError> {
    let shape = shape(mem, cfg, d)?;
    run(mem, cfg, d, shape, &[], dumps)
}

/// A dispatch as a PM4 queue's registers describe it
/// (`DISPATCH_DIRECT` after `SET_SH_REG`s; tinygrad's
/// `AMDComputeQueue.exec`, Linux's `gfx_v11_0.c` CP register set): no
/// kernel descriptor and no AQL packet reach the CP, only what the
/// registers hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RegisterDispatch {
    /// `COMPUTE_PGM_LO/HI` << 8: the first instruction.
    pub entry: u64,
    /// `COMPUTE_PGM_RSRC1/2/3`: the same fields a kernel descriptor's
    /// copies hold (AMDGPUUsage: the descriptor's `compute_pgm_rsrc*`
    /// "are loaded into" these registers).
    pub rsrc1: u32,
    pub rsrc2: u32,
    pub rsrc3: u32,
    /// `COMPUTE_DISPATCH_INITIATOR.CS_W32_EN` (gfx10+: wave32).
    pub wave32: bool,
    /// `COMPUTE_USER_DATA_0..15`: the first `RSRC2.USER_SGPR` of them are
    /// the waves' s0.. (the CP loads user SGPRs from these registers).
    pub user_data: [u32; 16],
    /// `COMPUTE_NUM_THREAD_X/Y/Z`.
    pub workgroup_size: [u16; 3],
    /// The packet's thread-group counts x/y/z.
    pub groups: [u32; 3],
    /// Scratch bytes per lane (the caller's reading of
    /// `COMPUTE_TMPRING_SIZE`).
    pub private_segment_size: u32,
    /// LDS bytes per workgroup (`COMPUTE_PGM_RSRC2.LDS_SIZE`, scaled by
    /// the caller).
    pub group_segment_size: u32,
}

/// Runs a register-described dispatch ([`RegisterDispatch`]) to
/// completion: the same waves as [`launch_dump`], with the user SGPRs
/// taken from `COMPUTE_USER_DATA_*` instead of being built from a
/// descriptor's enables and an AQL packet (the system SGPRs and the
/// work-item VGPRs follow `RSRC2` as for an AQL dispatch).
pub fn launch_registers_dump<M: Memory>(
    mem: &mut M,
    cfg: &LaunchConfig,
    r: &RegisterDispatch,
    dumps: &mut Dumps,
) -> Result<Stats, LaunchError> {
    let mut grid = [0u32; 3];
    for (i, g) in grid.iter_mut().enumerate() {
        *g = r.groups[i]
            .checked_mul(u32::from(r.workgroup_size[i]))
            .ok_or(LaunchError::BadPacket(
                "thread-group count times group size past 2^32 work-items",
            ))?;
    }
    let d = Dispatch {
        setup_dims: 3,
        workgroup_size: r.workgroup_size,
        grid_size: grid,
        private_segment_size: r.private_segment_size,
        group_segment_size: r.group_segment_size,
        kernel_object: r.entry,
        ..Dispatch::default()
    };
    let kd = KernelDescriptor {
        group_segment_fixed_size: 0,
        private_segment_fixed_size: 0,
        kernarg_size: 0,
        kernel_code_entry_byte_offset: 0,
        rsrc1: r.rsrc1,
        rsrc2: r.rsrc2,
        rsrc3: r.rsrc3,
        // No HSA user-SGPR enables: the user SGPRs are the registers'.
        kernel_code_properties: if r.wave32 {
            1 << crate::kd::KCP_WAVEFRONT_SIZE32.0
        } else {
            0
        },
        kernarg_preload: 0,
    };
    let count = kd.user_sgpr_count() as usize;
    let user = r.user_data.get(..count).ok_or(LaunchError::BadPacket(
        "RSRC2.USER_SGPR above the 16 COMPUTE_USER_DATA registers",
    ))?;
    let shape = shape_of(kd, cfg, &d)?;
    run(mem, cfg, &d, shape, user, dumps)
}

/// The waves of a checked dispatch; `user` (if not empty) is loaded into
/// s0.. after the HSA user SGPRs the descriptor enables.
fn run<M: Memory>(
    mem: &mut M,
    cfg: &LaunchConfig,
    d: &Dispatch,
    shape: Shape,
    user: &[u32],
    dumps: &mut Dumps,
) -> Result<Stats, LaunchError> {
    let Shape {
        kd,
        wave_size,
        nvgpr,
        entry,
        scratch,
        lds_size,
        ngroups,
        total_groups,
    } = shape;
    let syntax = Syntax {
        target: cfg.target,
        wave64: wave_size == 64,
    };
    let mut interp = Interp::new(mem, syntax);
    let mut rng = Rng(cfg.seed ^ 0x005e_ed0f_ba5e);
    let mut stats = Stats::default();
    let mut next_group: u64 = 0;
    let mut resident: Vec<Group> = Vec::new();
    let slots = cfg.resident_workgroups.max(1) as usize;
    loop {
        while resident.len() < slots && next_group < total_groups {
            let g = next_group;
            next_group += 1;
            if !cfg.share.owns(g) {
                continue;
            }
            let id = [
                (g % u64::from(ngroups[0])) as u32,
                ((g / u64::from(ngroups[0])) % u64::from(ngroups[1])) as u32,
                (g / (u64::from(ngroups[0]) * u64::from(ngroups[1]))) as u32,
            ];
            let mut group = make_group(
                &kd, d, cfg.target, id, ngroups, wave_size, nvgpr, scratch, lds_size, entry, user,
            );
            for w in &mut group.waves {
                w.apertures = cfg.apertures;
            }
            resident.push(group);
            stats.workgroups += 1;
        }
        if resident.is_empty() {
            break;
        }
        // Pick a runnable wave among all resident groups.
        let gi = (rng.next() % resident.len() as u64) as usize;
        let group = &mut resident[gi];
        let runnable: Vec<usize> = (0..group.waves.len())
            .filter(|&i| !group.waves[i].done && !group.at_barrier[i])
            .collect();
        if runnable.is_empty() {
            // all waiting at the barrier (or done): release, or retire the group
            if group.waves.iter().all(|w| w.done) {
                stats.waves += group.waves.len() as u64;
                resident.swap_remove(gi);
            } else {
                for b in group.at_barrier.iter_mut() {
                    *b = false;
                }
            }
            continue;
        }
        let wi = runnable[(rng.next() % runnable.len() as u64) as usize];
        let quantum = 1 + rng.next() % 24;
        let Group {
            id,
            lds,
            waves,
            at_barrier,
            ..
        } = group;
        let mut sh = Shared {
            lds: lds.as_mut_slice(),
            target: cfg.target,
        };
        let w = &mut waves[wi];
        let here = WaveId {
            workgroup: *id,
            wave: wi as u32,
        };
        let dump = |w: &Wave, reason, pc| Some(WaveDump::take(cfg.target, w, here, reason, pc));
        for _ in 0..quantum {
            match interp.step(w, &mut sh) {
                Ok(Flow::Next) => {}
                Ok(Flow::Barrier) => {
                    at_barrier[wi] = true;
                    break;
                }
                Ok(Flow::End) => {
                    if cfg.watch == Some(here) {
                        dumps.watched = dump(w, DumpReason::Ended, w.pc);
                    }
                    break;
                }
                Err(error) => {
                    dumps.stopped = dump(w, DumpReason::Faulted, error.pc());
                    return Err(LaunchError::Wave {
                        workgroup: *id,
                        wave: wi as u32,
                        error,
                    });
                }
            }
        }
        if interp.instructions > cfg.max_instructions {
            dumps.stopped = dump(w, DumpReason::Timeout, w.pc);
            return Err(LaunchError::Timeout {
                instructions: interp.instructions,
            });
        }
        if cfg.stop.asks() {
            dumps.stopped = dump(w, DumpReason::Stopped, w.pc);
            return Err(LaunchError::Stopped {
                instructions: interp.instructions,
            });
        }
    }
    stats.instructions = interp.instructions;
    stats.lane_instructions = interp.lane_instructions;
    Ok(stats)
}

#[allow(clippy::too_many_arguments)]
fn make_group(
    kd: &KernelDescriptor,
    d: &Dispatch,
    target: Target,
    id: [u32; 3],
    ngroups: [u32; 3],
    wave_size: u32,
    nvgpr: u32,
    scratch: u32,
    lds_size: usize,
    entry: u64,
    user: &[u32],
) -> Group {
    let ws = [
        u32::from(d.workgroup_size[0]),
        u32::from(d.workgroup_size[1]),
        u32::from(d.workgroup_size[2]),
    ];
    // Partial workgroups at the grid's edge (HSA: the last workgroup may be
    // smaller).
    let size: [u32; 3] = core::array::from_fn(|i| {
        let start = id[i] * ws[i];
        ws[i].min(d.grid_size[i] - start)
    });
    let lanes = size[0] * size[1] * size[2];
    let nwaves = lanes.div_ceil(wave_size);
    let mut waves = Vec::with_capacity(nwaves as usize);
    for wv in 0..nwaves {
        let mut w = Wave::new(wave_size, nvgpr, scratch).for_target(target);
        w.pc = entry;
        // Flushing modes run integer work only (`Wave::denormals_preserved`).
        w.denormals_preserved = kd.denorm_mode_32() == 3 && kd.denorm_mode_16_64() == 3;
        // user SGPRs
        let mut s = 0usize;
        let put = |w: &mut Wave, s: &mut usize, v: u32| {
            if *s < 106 {
                w.s[*s] = v;
            }
            *s += 1;
        };
        if kd.private_segment_buffer() {
            for v in private_segment_buffer(target) {
                put(&mut w, &mut s, v);
            }
        }
        if kd.dispatch_ptr() {
            put(&mut w, &mut s, d.packet_address as u32);
            put(&mut w, &mut s, (d.packet_address >> 32) as u32);
        }
        if kd.queue_ptr() {
            put(&mut w, &mut s, d.queue_address as u32);
            put(&mut w, &mut s, (d.queue_address >> 32) as u32);
        }
        if kd.kernarg_segment_ptr() {
            put(&mut w, &mut s, d.kernarg_address as u32);
            put(&mut w, &mut s, (d.kernarg_address >> 32) as u32);
        }
        if kd.dispatch_id() {
            put(&mut w, &mut s, d.dispatch_id as u32);
            put(&mut w, &mut s, (d.dispatch_id >> 32) as u32);
        }
        if kd.flat_scratch_init() {
            put(&mut w, &mut s, 0);
            put(&mut w, &mut s, 0);
        }
        if kd.private_segment_size() {
            put(&mut w, &mut s, scratch);
        }
        // Register-described dispatches: COMPUTE_USER_DATA_* as given.
        for &v in user {
            put(&mut w, &mut s, v);
        }
        // system SGPRs
        let mut s = kd.user_sgpr_count() as usize;
        let en = kd.workgroup_id();
        if target.is_gfx12() {
            w.s[108 + 9] = id[0];
            w.s[108 + 7] = id[1] & 0xffff | (id[2] & 0xffff) << 16;
        } else {
            for i in 0..3 {
                if en[i] {
                    put(&mut w, &mut s, id[i]);
                }
            }
        }
        if kd.workgroup_info() {
            put(&mut w, &mut s, 0);
        }
        if kd.private_segment() {
            put(&mut w, &mut s, 0);
        }
        let _ = ngroups;
        // work-item ids, packed
        let mut exec = 0u64;
        for lane in 0..wave_size {
            let flat = wv * wave_size + lane;
            if flat >= lanes {
                continue;
            }
            exec |= 1 << lane;
            let x = flat % size[0];
            let y = (flat / size[0]) % size[1];
            let z = flat / (size[0] * size[1]);
            let v0 = match kd.vgpr_workitem_id() {
                0 => x,
                1 => x | y << 10,
                _ => x | y << 10 | z << 20,
            };
            if let Some(r) = w.v.get_mut(lane as usize) {
                *r = v0;
            }
        }
        w.s[126] = exec as u32;
        w.s[127] = if wave_size == 64 {
            (exec >> 32) as u32
        } else {
            0
        };
        waves.push(w);
    }
    let n = waves.len();
    Group {
        id,
        lds: vec![0; lds_size],
        waves,
        at_barrier: vec![false; n],
    }
}
