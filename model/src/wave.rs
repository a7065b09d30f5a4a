//! The shader side of a kernel dispatch: what the CP hands the SPI once it
//! launches an AQL kernel-dispatch packet, and the waves that run.
//!
//! [`CpModel`](crate::cp::CpModel) calls [`Shader::dispatch`] when it
//! launches a kernel-dispatch packet, while the packet is still in its ring
//! slot (a kernel that asks for the dispatch pointer reads it there). The
//! steps:
//!
//! 1. The packet's fields are decoded here, at the offsets of HSA's
//!    `hsa_kernel_dispatch_packet_t` ([`FACTS`], checked against ROCR's
//!    `hsa.h`).
//! 2. The 64-byte kernel descriptor at `kernel_object` is read and decoded
//!    by `barebell_isa::kd` (facts against LLVM 19's
//!    `AMDHSAKernelDescriptor.h`); the kernel crate's loader types are not
//!    used: the model decodes what the runtime wrote with its own code.
//! 3. Scratch: a dispatch whose packet asks for a private segment
//!    (`private_segment_size`; the descriptor's own size is not what the
//!    CP sizes scratch by) needs the queue's scratch, which the CP finds in the queue's
//!    `amd_queue_t` (`scratch_backing_memory_byte_size`,
//!    `scratch_wave64_lane_byte_size`, as ROCR's
//!    `AqlQueue::InitScratchSRD()` fills them). No scratch, or too little
//!    per lane, is a [`KernelFault`]. **Model convention**: on hardware the
//!    CP raises a scratch-request interrupt that ROCR's dynamic scratch
//!    handler answers; the model refuses instead. The wave interpreter
//!    keeps each lane's private bytes itself (see `barebell_isa::launch`),
//!    so the queue's backing memory is checked but not written.
//! 4. `barebell_isa::launch::launch` sets up user and system SGPRs as the
//!    descriptor asks (private segment buffer, dispatch and queue pointers,
//!    kernarg pointer, dispatch id, flat scratch init, private segment
//!    size; workgroup ids, workgroup info), work-item ids, LDS (the
//!    packet's group segment size in whole allocation blocks) and scratch
//!    (the packet's private segment size in whole 1 KiB waves; an access
//!    past either is a typed stop, `barebell_isa::launch`) and runs every
//!    wave, reading and writing memory through a [`DeviceView`].
//!
//! A wave that stops (unimplemented or illegal instruction, memory fault)
//! makes the dispatch a [`KernelFault`] naming the instruction and its
//! address; the CP records it as the queue's error, halts the queue and
//! does not decrement the completion signal, as a queue error on hardware
//! leaves it.

use crate::dma::Dma;
use crate::gmc::{Access, AddressSpace, VmRefusal};
use barebell_facts::Fact;
use barebell_isa::Target;
use barebell_isa::exec::ExecError;
use barebell_isa::kd::{KD_SIZE, KernelDescriptor};
use barebell_isa::launch::{Dispatch, LaunchConfig, LaunchError, Share, Stats, launch_dump};
use barebell_isa::mem::{MemFault, Memory};

/// Offsets in `hsa_kernel_dispatch_packet_t` (HSA, ROCR `hsa.h`).
pub mod packet {
    pub const SETUP: usize = 2;
    pub const WORKGROUP_SIZE_X: usize = 4;
    pub const GRID_SIZE_X: usize = 12;
    pub const PRIVATE_SEGMENT_SIZE: usize = 24;
    pub const GROUP_SEGMENT_SIZE: usize = 28;
    pub const KERNEL_OBJECT: usize = 32;
    pub const KERNARG_ADDRESS: usize = 40;
    pub const COMPLETION_SIGNAL: usize = 56;
    /// `HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS` (bits 0..1).
    pub const SETUP_DIMENSIONS_WIDTH: u32 = 2;
}

/// Offsets of the scratch fields the CP reads from `amd_queue_t` (ROCR
/// `amd_hsa_queue.h`).
pub mod queue {
    pub const SCRATCH_BACKING_MEMORY_LOCATION: usize = 160;
    pub const SCRATCH_BACKING_MEMORY_BYTE_SIZE: usize = 168;
    pub const SCRATCH_WAVE64_LANE_BYTE_SIZE: usize = 176;
}

const HSA: &str = "hsa/hsa.h";
const AMD_QUEUE: &str = "hsa/amd_hsa_queue.h";
const PKT: &str = "hsa_kernel_dispatch_packet_t";

/// The packet and queue layout facts this file relies on.
pub const FACTS: &[Fact] = &[
    Fact::offset(HSA, PKT, "setup", packet::SETUP),
    Fact::offset(HSA, PKT, "workgroup_size_x", packet::WORKGROUP_SIZE_X),
    Fact::offset(HSA, PKT, "workgroup_size_y", packet::WORKGROUP_SIZE_X + 2),
    Fact::offset(HSA, PKT, "workgroup_size_z", packet::WORKGROUP_SIZE_X + 4),
    Fact::offset(HSA, PKT, "grid_size_x", packet::GRID_SIZE_X),
    Fact::offset(HSA, PKT, "grid_size_y", packet::GRID_SIZE_X + 4),
    Fact::offset(HSA, PKT, "grid_size_z", packet::GRID_SIZE_X + 8),
    Fact::offset(
        HSA,
        PKT,
        "private_segment_size",
        packet::PRIVATE_SEGMENT_SIZE,
    ),
    Fact::offset(HSA, PKT, "group_segment_size", packet::GROUP_SEGMENT_SIZE),
    Fact::offset(HSA, PKT, "kernel_object", packet::KERNEL_OBJECT),
    Fact::offset(HSA, PKT, "kernarg_address", packet::KERNARG_ADDRESS),
    Fact::offset(HSA, PKT, "completion_signal", packet::COMPLETION_SIGNAL),
    Fact::constant(
        HSA,
        "HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS",
        packet::SETUP_DIMENSIONS_WIDTH as u64,
    ),
    Fact::offset(
        AMD_QUEUE,
        "amd_queue_t",
        "scratch_backing_memory_location",
        queue::SCRATCH_BACKING_MEMORY_LOCATION,
    ),
    Fact::offset(
        AMD_QUEUE,
        "amd_queue_t",
        "scratch_backing_memory_byte_size",
        queue::SCRATCH_BACKING_MEMORY_BYTE_SIZE,
    ),
    Fact::offset(
        AMD_QUEUE,
        "amd_queue_t",
        "scratch_wave64_lane_byte_size",
        queue::SCRATCH_WAVE64_LANE_BYTE_SIZE,
    ),
];

/// Why a device address did not reach host memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Miss {
    /// Outside every window (a view without page tables).
    Unmapped,
    /// The queue's VMID did not translate it (the hub's refusal).
    Vm { space: AddressSpace, why: VmRefusal },
}

/// A wave's access that the queue's page tables refused: the GPU's VM
/// fault (on hardware the UTCL2 latches it in
/// `GCVM_L2_PROTECTION_FAULT_STATUS` and raises an interrupt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmMiss {
    /// The faulting page's first byte.
    pub va: u64,
    pub access: Access,
    pub space: AddressSpace,
    pub why: VmRefusal,
}

impl core::fmt::Display for VmMiss {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let what = match self.access {
            Access::Read => "read",
            Access::Write => "write",
            Access::Execute => "instruction fetch",
        };
        write!(
            f,
            "VM fault: {what} of page {:#x} does not translate in {:?}: {:?}",
            self.va, self.space, self.why
        )
    }
}

/// How the shader engines reach memory: device address to host address,
/// for an access of a kind. The CP gives a MEC-mapped queue's dispatch a
/// view through the queue's VMID (`crate::cp`); a rig queue's, its DMA
/// windows.
///
/// # Safety
/// An `Ok(host)` answer promises that `len` bytes at `host` are valid for
/// reads and writes for as long as the view is borrowed, and that nothing
/// else accesses them non-atomically meanwhile (the AQL protocol gives
/// the device a kernel's buffers until its completion signal).
pub unsafe trait DeviceView {
    /// The host address of `len` bytes at device address `addr`, if they
    /// are all mapped for `access` and contiguous.
    fn host_of(&self, addr: u64, len: u64, access: Access) -> Result<u64, Miss>;
}

// SAFETY: `Dma::map`/`map_at`'s callers promised exactly this for every
// window; `host_of` answers only inside one window.
unsafe impl DeviceView for Dma {
    fn host_of(&self, addr: u64, len: u64, _access: Access) -> Result<u64, Miss> {
        Dma::host_of(self, addr, len).ok_or(Miss::Unmapped)
    }
}

/// Accesses split at this granule when a range is not contiguous in one
/// piece (a page of the GPU's page tables).
const PAGE: u64 = 4096;

/// The interpreter's [`Memory`] over a [`DeviceView`]; keeps the last VM
/// refusal, to name it in the fault.
struct ViewMemory<'a, V: DeviceView + ?Sized> {
    view: &'a V,
    miss: Option<VmMiss>,
}

impl<'a, V: DeviceView + ?Sized> ViewMemory<'a, V> {
    fn new(view: &'a V) -> Self {
        ViewMemory { view, miss: None }
    }

    /// Calls `f(host, offset, n)` for each contiguous piece of
    /// `addr..addr + len`.
    fn pieces(
        &mut self,
        addr: u64,
        len: usize,
        access: Access,
        mut f: impl FnMut(u64, usize, usize),
    ) -> Result<(), MemFault> {
        let fault = MemFault {
            addr,
            len: len as u32,
            write: access == Access::Write,
        };
        if let Ok(h) = self.view.host_of(addr, len as u64, access) {
            f(h, 0, len);
            return Ok(());
        }
        let mut done = 0usize;
        while done < len {
            let a = addr.checked_add(done as u64).ok_or(fault)?;
            let n = ((PAGE - a % PAGE) as usize).min(len - done);
            let h = match self.view.host_of(a, n as u64, access) {
                Ok(h) => h,
                Err(m) => {
                    if let Miss::Vm { space, why } = m {
                        self.miss = Some(VmMiss {
                            va: a & !(PAGE - 1),
                            access,
                            space,
                            why,
                        });
                    }
                    return Err(fault);
                }
            };
            f(h, done, n);
            done += n;
        }
        Ok(())
    }

    /// The VM refusal behind `fault`, if the last one lies in its range.
    fn vm_behind(&self, fault: &MemFault) -> Option<VmMiss> {
        self.miss.filter(|m| {
            let end = fault.addr.saturating_add(u64::from(fault.len.max(1)));
            m.va < end && fault.addr < m.va + PAGE
        })
    }
}

impl<V: DeviceView + ?Sized> Memory for ViewMemory<'_, V> {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        let dst = buf.as_mut_ptr();
        self.pieces(addr, buf.len(), Access::Read, |host, off, n| {
            // SAFETY: `host..host + n` is valid per `DeviceView`'s
            // contract; `off + n <= buf.len()` by construction of the
            // pieces.
            unsafe { core::ptr::copy_nonoverlapping(host as *const u8, dst.add(off), n) }
        })
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        let src = data.as_ptr();
        self.pieces(addr, data.len(), Access::Write, |host, off, n| {
            // SAFETY: as in `read`, for writes.
            unsafe { core::ptr::copy_nonoverlapping(src.add(off), host as *mut u8, n) }
        })
    }

    fn fetch(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        let dst = buf.as_mut_ptr();
        self.pieces(addr, buf.len(), Access::Execute, |host, off, n| {
            // SAFETY: as in `read`.
            unsafe { core::ptr::copy_nonoverlapping(host as *const u8, dst.add(off), n) }
        })
    }
}

/// Text of an instruction or fault, kept in a fixed 64-byte buffer so that
/// errors stay `Copy` and small (the CP's error log holds plain values);
/// longer texts are cut at a character boundary.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Text {
    bytes: [u8; 64],
    len: u8,
}

impl Text {
    pub fn new(s: &str) -> Text {
        let mut t = Text {
            bytes: [0; 64],
            len: 0,
        };
        let _ = core::fmt::Write::write_str(&mut t, s);
        t
    }

    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl core::fmt::Write for Text {
    /// Appends what fits, cutting at a character boundary.
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for c in s.chars() {
            let mut b = [0u8; 4];
            let e = c.encode_utf8(&mut b).as_bytes();
            let at = usize::from(self.len);
            if at + e.len() > self.bytes.len() {
                break;
            }
            self.bytes[at..at + e.len()].copy_from_slice(e);
            self.len += e.len() as u8;
        }
        Ok(())
    }
}

impl core::fmt::Debug for Text {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl core::fmt::Display for Text {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a wave stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaveFault {
    /// An instruction the interpreter does not implement (LLVM syntax).
    Unimplemented { text: Text },
    /// Bytes that are no instruction of the target.
    Illegal { word: u32 },
    /// A global/flat access to unmapped memory.
    Memory(MemFault),
    /// An access (or instruction fetch) the queue's page tables refused.
    Vm { fault: MemFault, vm: VmMiss },
    /// LDS, scratch or register index out of range (the interpreter's text).
    OutOfRange(Text),
}

/// The SQ's error interrupt for a wave that stopped (issue 20): the
/// error types of `SQ_INTERRUPT_WORD_ERROR_CTXID0.TYPE` KFD's
/// `event_interrupt_wq_v11()` handles (`enum SQ_INTERRUPT_ERROR_TYPE` in
/// `kfd_int_process_v11.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqError {
    /// `SQ_INTERRUPT_ERROR_TYPE_ILLEGAL_INST` (1).
    IllegalInstruction,
    /// `SQ_INTERRUPT_ERROR_TYPE_MEMVIOL` (2).
    MemoryViolation,
}

impl SqError {
    /// The `TYPE` value.
    pub fn code(self) -> u32 {
        match self {
            SqError::IllegalInstruction => 1,
            SqError::MemoryViolation => 2,
        }
    }
}

/// A wave the SQ stopped with an error interrupt: which CP queue
/// dispatched it, in which VMID, and which wave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqEvent {
    /// The CP model's queue index.
    pub queue: usize,
    pub vmid: u8,
    pub wave: u32,
    pub pc: u64,
    pub error: SqError,
}

impl KernelFault {
    /// The SQ error interrupt this fault raises on hardware, if any: an
    /// illegal instruction, or a memory violation (an access that did not
    /// translate; on hardware also the UTCL2's own fault interrupt, which
    /// the hub model raises). Faults of the model's own limits
    /// (unimplemented instructions, scratch refusals, the instruction
    /// bound) raise none.
    pub fn sq_error(&self) -> Option<(u32, u64, SqError)> {
        match *self {
            KernelFault::Wave {
                wave, pc, fault, ..
            } => match fault {
                WaveFault::Illegal { .. } => Some((wave, pc, SqError::IllegalInstruction)),
                WaveFault::Memory(_) | WaveFault::Vm { .. } => {
                    Some((wave, pc, SqError::MemoryViolation))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// Why a dispatch did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelFault {
    /// The kernel descriptor at `kernel_object` is not readable.
    Descriptor { kernel_object: u64, fault: MemFault },
    /// The kernel descriptor's page does not translate in the queue's VMID.
    DescriptorVm { kernel_object: u64, vm: VmMiss },
    /// The kernel needs private memory and the queue has no scratch.
    NoScratch { kernel_bytes: u32 },
    /// The queue's scratch gives fewer bytes per lane than the kernel needs.
    ScratchTooSmall { kernel_bytes: u32, queue_bytes: u64 },
    /// The packet or descriptor asks for something the model does not do.
    Unsupported(&'static str),
    /// A packet field out of range.
    BadPacket(&'static str),
    /// A wave stopped at `pc`.
    Wave {
        workgroup: [u32; 3],
        wave: u32,
        pc: u64,
        fault: WaveFault,
    },
    /// The dispatch ran past the model's instruction bound (a hung kernel).
    Timeout { instructions: u64 },
    /// The host's stop hook ended the dispatch (its wall-clock bound or
    /// a stop signal).
    Stopped { instructions: u64 },
}

impl core::fmt::Display for KernelFault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            KernelFault::Descriptor {
                kernel_object,
                fault,
            } => write!(
                f,
                "kernel descriptor at kernel_object {kernel_object:#x}: {fault}"
            ),
            KernelFault::DescriptorVm { kernel_object, vm } => write!(
                f,
                "kernel descriptor at kernel_object {kernel_object:#x}: {vm}"
            ),
            KernelFault::NoScratch { kernel_bytes } => write!(
                f,
                "the kernel needs {kernel_bytes} private bytes per work-item and the queue has no scratch"
            ),
            KernelFault::ScratchTooSmall {
                kernel_bytes,
                queue_bytes,
            } => write!(
                f,
                "the kernel needs {kernel_bytes} private bytes per work-item; the queue's scratch gives {queue_bytes}"
            ),
            KernelFault::Unsupported(w) => write!(f, "not modelled: {w}"),
            KernelFault::BadPacket(w) => write!(f, "bad dispatch packet: {w}"),
            KernelFault::Wave {
                workgroup,
                wave,
                pc,
                fault,
            } => {
                let [x, y, z] = workgroup;
                write!(f, "wave {wave} of workgroup ({x}, {y}, {z}): ")?;
                match fault {
                    WaveFault::Unimplemented { text } => {
                        write!(f, "unimplemented instruction `{text}` at {pc:#x}")
                    }
                    WaveFault::Illegal { word } => {
                        write!(f, "illegal instruction {word:#010x} at {pc:#x}")
                    }
                    WaveFault::Memory(m) => write!(f, "memory fault at {pc:#x}: {m}"),
                    WaveFault::Vm { fault, vm } => {
                        write!(f, "memory fault at {pc:#x}: {fault}; {vm}")
                    }
                    WaveFault::OutOfRange(t) => write!(f, "{t}"),
                }
            }
            KernelFault::Timeout { instructions } => write!(
                f,
                "the kernel did not finish within {instructions} instructions"
            ),
            KernelFault::Stopped { instructions } => write!(
                f,
                "the kernel was stopped by the host after {instructions} instructions"
            ),
        }
    }
}

fn wave_fault(e: &ExecError) -> (u64, WaveFault) {
    match e {
        ExecError::Unimplemented { pc, text } => (
            *pc,
            WaveFault::Unimplemented {
                text: Text::new(text),
            },
        ),
        ExecError::Illegal { pc, word } => (*pc, WaveFault::Illegal { word: *word }),
        ExecError::Fault { pc, fault } => (*pc, WaveFault::Memory(*fault)),
        ExecError::LdsOutOfRange { pc, .. }
        | ExecError::ScratchOutOfRange { pc, .. }
        | ExecError::RegisterOutOfRange { pc, .. } => {
            let mut t = Text::new("");
            let _ = core::fmt::Write::write_fmt(&mut t, format_args!("{e}"));
            (*pc, WaveFault::OutOfRange(t))
        }
    }
}

impl From<LaunchError> for KernelFault {
    fn from(e: LaunchError) -> Self {
        match e {
            // The descriptor is read before anything else; its address is
            // the fault's.
            LaunchError::Descriptor(fault) => KernelFault::Descriptor {
                kernel_object: fault.addr,
                fault,
            },
            LaunchError::Unsupported(w) => KernelFault::Unsupported(w),
            LaunchError::BadPacket(w) => KernelFault::BadPacket(w),
            LaunchError::Wave {
                workgroup,
                wave,
                error,
            } => {
                let (pc, fault) = wave_fault(&error);
                KernelFault::Wave {
                    workgroup,
                    wave,
                    pc,
                    fault,
                }
            }
            LaunchError::Timeout { instructions } => KernelFault::Timeout { instructions },
            LaunchError::Stopped { instructions } => KernelFault::Stopped { instructions },
        }
    }
}

/// Decodes a kernel-dispatch packet (the 64 bytes of its slot).
pub fn decode_packet(
    body: &[u8; 64],
    packet_address: u64,
    queue_address: u64,
    dispatch_id: u64,
) -> Dispatch {
    let u16_at = |o: usize| u16::from_le_bytes([body[o], body[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes([body[o], body[o + 1], body[o + 2], body[o + 3]]);
    let u64_at = |o: usize| u64::from(u32_at(o)) | u64::from(u32_at(o + 4)) << 32;
    let w = packet::WORKGROUP_SIZE_X;
    let g = packet::GRID_SIZE_X;
    Dispatch {
        setup_dims: (u16_at(packet::SETUP) & ((1 << packet::SETUP_DIMENSIONS_WIDTH) - 1)) as u8,
        workgroup_size: [u16_at(w), u16_at(w + 2), u16_at(w + 4)],
        grid_size: [u32_at(g), u32_at(g + 4), u32_at(g + 8)],
        private_segment_size: u32_at(packet::PRIVATE_SEGMENT_SIZE),
        group_segment_size: u32_at(packet::GROUP_SEGMENT_SIZE),
        kernel_object: u64_at(packet::KERNEL_OBJECT),
        kernarg_address: u64_at(packet::KERNARG_ADDRESS),
        packet_address,
        queue_address,
        dispatch_id,
    }
}

/// The shader engines' settings and counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shader {
    /// The ISA the waves run (the part's GC generation).
    pub target: Target,
    /// Chooses the order waves and workgroups run in.
    pub seed: u64,
    /// Bound on instructions per dispatch and XCC (a hung kernel is a
    /// fault).
    pub max_instructions: u64,
    /// The host's stop hook, asked between scheduling rounds
    /// ([`barebell_isa::launch::StopHook`]): a wall-clock bound or a stop
    /// signal ends the dispatch with [`KernelFault::Stopped`].
    pub stop: barebell_isa::launch::StopHook,
    /// A wave whose state the next dispatches copy out when it ends
    /// (into [`Shader::dumps`]).
    pub watch: Option<barebell_isa::dump::WaveId>,
    /// The last dispatch's wave states: the watched wave's, and the state
    /// of the wave that faulted or was running when the dispatch was
    /// stopped (the interpreter's registers; a GPU's come from the SQ).
    pub dumps: barebell_isa::launch::Dumps,
    /// Dispatches run and their counts, summed.
    pub dispatches: u64,
    pub totals: Stats,
    /// The last dispatch's counts.
    pub last: Stats,
    /// XCCs that run each dispatch (1 but on a GC 9.4.3 part in SPX mode,
    /// where every XCC's CP reads the same AQL queue): each runs its
    /// round-robin share of the workgroups ([`Share`]), and the CP
    /// completes the packet once, after every share is done. How the
    /// XCCs agree that the dispatch is done is not public; one completion
    /// after all shares is the model's convention, matching what ROCm
    /// relies on (one signal decrement per packet, HSA spec).
    pub xccs: u32,
    /// Consecutive workgroups per XCC turn: the MQD's
    /// `compute_tg_chunk_size` (`init_mqd_v9_4_3()`).
    pub tg_chunk: u32,
    /// Workgroups each XCC has run, summed over dispatches.
    pub xcc_workgroups: [u64; MAX_XCCS],
}

/// XCCs one model part can have: MI300X's eight XCDs.
pub const MAX_XCCS: usize = 8;

impl Shader {
    /// gfx1100 until the owner of the CP says otherwise.
    pub fn new(seed: u64) -> Shader {
        Shader {
            target: Target::Gfx1100,
            seed,
            max_instructions: LaunchConfig::new(Target::Gfx1100).max_instructions,
            stop: barebell_isa::launch::StopHook::NONE,
            watch: None,
            dumps: barebell_isa::launch::Dumps::default(),
            dispatches: 0,
            totals: Stats::default(),
            last: Stats::default(),
            xccs: 1,
            tg_chunk: 1,
            xcc_workgroups: [0; MAX_XCCS],
        }
    }

    /// Whether dispatch `d` needs more scratch than its queue's
    /// `amd_queue_t` gives ([`check_scratch`]): `Some(wave32)`, the
    /// kernel's wave size, if so; `None` if it fits or needs none.
    pub fn scratch_short<V: DeviceView + ?Sized>(
        &self,
        view: &V,
        d: &Dispatch,
    ) -> Result<Option<bool>, KernelFault> {
        if d.private_segment_size == 0 {
            return Ok(None);
        }
        let mut mem = ViewMemory::new(view);
        let kd = read_descriptor(&mut mem, d.kernel_object)?;
        match check_scratch(
            &mut mem,
            d.queue_address,
            d.private_segment_size,
            kd.wave32(),
        ) {
            Ok(()) => Ok(None),
            Err(KernelFault::NoScratch { .. } | KernelFault::ScratchTooSmall { .. }) => {
                Ok(Some(kd.wave32()))
            }
            Err(e) => Err(with_vm(e, &mem)),
        }
    }

    /// Runs the dispatch `d` of the queue whose `amd_queue_t` is at
    /// `d.queue_address`, reading and writing memory through `view`.
    pub fn dispatch<V: DeviceView + ?Sized>(
        &mut self,
        view: &V,
        d: &Dispatch,
        apertures: barebell_isa::exec::Apertures,
    ) -> Result<Stats, KernelFault> {
        let mut mem = ViewMemory::new(view);
        let kd = read_descriptor(&mut mem, d.kernel_object)?;
        // The scratch a dispatch gets is sized from the packet's
        // `private_segment_size` alone: ROCR's scratch handler
        // (`AqlQueue::HandleInsufficientScratch()`) computes its per-lane
        // size from `pkt.dispatch.private_segment_size`, and the runtime
        // copies the descriptor's fixed size into the packet. A kernel
        // whose descriptor asks more than its packet gets the packet's
        // bound, and its accesses past it fault (`barebell_isa::launch`).
        let private = d.private_segment_size;
        if private > 0 {
            check_scratch(&mut mem, d.queue_address, private, kd.wave32())
                .map_err(|e| with_vm(e, &mem))?;
        }
        let parts = self.xccs.clamp(1, MAX_XCCS as u32);
        let mut s = Stats::default();
        self.dumps = barebell_isa::launch::Dumps::default();
        for index in 0..parts {
            let cfg = LaunchConfig {
                target: self.target,
                seed: self.seed ^ self.dispatches ^ u64::from(index) << 48,
                max_instructions: self.max_instructions,
                stop: self.stop,
                watch: self.watch,
                apertures,
                share: Share {
                    parts,
                    index,
                    chunk: self.tg_chunk.max(1),
                },
                ..LaunchConfig::new(self.target)
            };
            let x = launch_dump(&mut mem, &cfg, d, &mut self.dumps)
                .map_err(|e| with_vm(KernelFault::from(e), &mem))?;
            if let Some(n) = self.xcc_workgroups.get_mut(index as usize) {
                *n += x.workgroups;
            }
            s.workgroups += x.workgroups;
            s.waves += x.waves;
            s.instructions += x.instructions;
            s.lane_instructions += x.lane_instructions;
        }
        self.dispatches += 1;
        self.last = s;
        self.totals.workgroups += s.workgroups;
        self.totals.waves += s.waves;
        self.totals.instructions += s.instructions;
        self.totals.lane_instructions += s.lane_instructions;
        Ok(s)
    }
}

impl Shader {
    /// Runs a dispatch a PM4 queue's registers describe
    /// ([`barebell_isa::launch::RegisterDispatch`]: `DISPATCH_DIRECT`
    /// after the `COMPUTE_*` registers), reading and writing memory
    /// through `view`. One XCC (the PM4 path runs on single-XCC parts).
    /// No scratch check against an `amd_queue_t`: a PM4 queue has none;
    /// the scratch size comes from `COMPUTE_TMPRING_SIZE` (the caller's).
    pub fn dispatch_registers<V: DeviceView + ?Sized>(
        &mut self,
        view: &V,
        r: &barebell_isa::launch::RegisterDispatch,
        apertures: barebell_isa::exec::Apertures,
    ) -> Result<Stats, KernelFault> {
        let mut mem = ViewMemory::new(view);
        self.dumps = barebell_isa::launch::Dumps::default();
        let cfg = LaunchConfig {
            target: self.target,
            seed: self.seed ^ self.dispatches,
            max_instructions: self.max_instructions,
            stop: self.stop,
            watch: self.watch,
            apertures,
            ..LaunchConfig::new(self.target)
        };
        let s = barebell_isa::launch::launch_registers_dump(&mut mem, &cfg, r, &mut self.dumps)
            .map_err(|e| with_vm(KernelFault::from(e), &mem))?;
        if let Some(n) = self.xcc_workgroups.get_mut(0) {
            *n += s.workgroups;
        }
        self.dispatches += 1;
        self.last = s;
        self.totals.workgroups += s.workgroups;
        self.totals.waves += s.waves;
        self.totals.instructions += s.instructions;
        self.totals.lane_instructions += s.lane_instructions;
        Ok(s)
    }
}

/// `f` with a memory fault replaced by the VM refusal behind it, if the
/// view saw one there.
fn with_vm<V: DeviceView + ?Sized>(f: KernelFault, mem: &ViewMemory<'_, V>) -> KernelFault {
    match f {
        KernelFault::Wave {
            workgroup,
            wave,
            pc,
            fault: WaveFault::Memory(m),
        } => match mem.vm_behind(&m) {
            Some(vm) => KernelFault::Wave {
                workgroup,
                wave,
                pc,
                fault: WaveFault::Vm { fault: m, vm },
            },
            None => f,
        },
        KernelFault::Descriptor {
            kernel_object,
            fault,
        } => match mem.vm_behind(&fault) {
            Some(vm) => KernelFault::DescriptorVm { kernel_object, vm },
            None => f,
        },
        other => other,
    }
}

/// The kernel descriptor at `kernel_object`.
fn read_descriptor<V: DeviceView + ?Sized>(
    mem: &mut ViewMemory<'_, V>,
    kernel_object: u64,
) -> Result<KernelDescriptor, KernelFault> {
    let mut kb = [0u8; KD_SIZE];
    mem.read(kernel_object, &mut kb)
        .map_err(|fault| match mem.vm_behind(&fault) {
            Some(vm) => KernelFault::DescriptorVm { kernel_object, vm },
            None => KernelFault::Descriptor {
                kernel_object,
                fault,
            },
        })?;
    Ok(KernelDescriptor::parse(&kb))
}

/// The queue's scratch, as the CP reads it from `amd_queue_t`.
fn check_scratch<M: Memory>(
    mem: &mut M,
    queue: u64,
    kernel_bytes: u32,
    wave32: bool,
) -> Result<(), KernelFault> {
    let mut b = [0u8; 8];
    let mut read = |off: usize, n: usize| -> Result<u64, KernelFault> {
        b = [0; 8];
        mem.read(queue.wrapping_add(off as u64), &mut b[..n])
            .map_err(|m| KernelFault::Wave {
                workgroup: [0; 3],
                wave: 0,
                pc: 0,
                fault: WaveFault::Memory(m),
            })?;
        Ok(u64::from_le_bytes(b))
    };
    let bytes = read(queue::SCRATCH_BACKING_MEMORY_BYTE_SIZE, 8)?;
    let location = read(queue::SCRATCH_BACKING_MEMORY_LOCATION, 8)?;
    let lane64 = read(queue::SCRATCH_WAVE64_LANE_BYTE_SIZE, 4)?;
    if bytes == 0 || location == 0 || lane64 == 0 {
        return Err(KernelFault::NoScratch { kernel_bytes });
    }
    // A wave of n lanes gets `wave64_lane_byte_size * 64 / n` per lane.
    let per_lane = if wave32 { lane64 * 2 } else { lane64 };
    if u64::from(kernel_bytes) > per_lane {
        return Err(KernelFault::ScratchTooSmall {
            kernel_bytes,
            queue_bytes: per_lane,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_keeps_what_fits_at_char_boundaries() {
        let t = Text::new("v_cubeid_f32 v0, v1, v2, v3");
        assert_eq!(t.as_str(), "v_cubeid_f32 v0, v1, v2, v3");
        let long: alloc::string::String = core::iter::repeat_n('é', 60).collect();
        let t = Text::new(&long);
        assert_eq!(t.as_str().chars().count(), 32);
    }

    #[test]
    fn view_memory_splits_at_pages_and_faults_outside() {
        // Two windows: device pages 0x1000 and 0x2000 backed by two
        // separate host buffers, so a read across 0x2000 needs both.
        let mut a = [0u8; 4096];
        let mut b = [0u8; 4096];
        a[4094] = 1;
        a[4095] = 2;
        b[0] = 3;
        b[1] = 4;
        let mut d = Dma::default();
        // SAFETY: `a` and `b` outlive `d`.
        unsafe {
            d.map_at(0x1000, a.as_mut_ptr(), 4096);
            d.map_at(0x2000, b.as_mut_ptr(), 4096);
        }
        let mut m = ViewMemory::new(&d);
        let mut out = [0u8; 4];
        m.read(0x1ffe, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4]);
        m.write(0x1fff, &[9, 8]).unwrap();
        assert_eq!((a[4095], b[0]), (9, 8));
        assert_eq!(
            m.read(0x2ffe, &mut out),
            Err(MemFault {
                addr: 0x2ffe,
                len: 4,
                write: false
            })
        );
    }

    /// Pages that are readable and writeable but not executable, as the
    /// ring area's PTEs are: data accesses pass, an instruction fetch is
    /// refused and the refusal names the access.
    struct NoExec(Dma);

    // SAFETY: answers only what the wrapped `Dma` answers.
    unsafe impl DeviceView for NoExec {
        fn host_of(&self, addr: u64, len: u64, access: Access) -> Result<u64, Miss> {
            if access == Access::Execute {
                return Err(Miss::Vm {
                    space: AddressSpace::Vmid(8),
                    why: VmRefusal::Walk(crate::gmc::FaultReason::Permission),
                });
            }
            DeviceView::host_of(&self.0, addr, len, access)
        }
    }

    #[test]
    fn a_fetch_from_a_page_without_execute_is_a_vm_fault_naming_it() {
        let mut a = [0u8; 4096];
        let mut d = Dma::default();
        // SAFETY: `a` outlives the view.
        unsafe { d.map_at(0x5000, a.as_mut_ptr(), 4096) };
        let v = NoExec(d);
        let mut m = ViewMemory::new(&v);
        let mut w = [0u8; 4];
        m.read(0x5010, &mut w).unwrap();
        let f = m.fetch(0x5010, &mut w).unwrap_err();
        assert_eq!(f.addr, 0x5010);
        let vm = m.vm_behind(&f).unwrap();
        assert_eq!(vm.va, 0x5000);
        assert_eq!(vm.access, Access::Execute);
        assert_eq!(vm.why, VmRefusal::Walk(crate::gmc::FaultReason::Permission));
        let k = with_vm(
            KernelFault::Wave {
                workgroup: [0; 3],
                wave: 0,
                pc: 0x5010,
                fault: WaveFault::Memory(f),
            },
            &m,
        );
        assert!(
            alloc::format!("{k}").contains("VM fault: instruction fetch of page 0x5000"),
            "{k}"
        );
    }

    #[test]
    fn packet_fields_come_from_the_hsa_offsets() {
        let mut p = [0u8; 64];
        p[2] = 3; // setup: 3 dimensions
        p[4..6].copy_from_slice(&64u16.to_le_bytes());
        p[6..8].copy_from_slice(&2u16.to_le_bytes());
        p[8..10].copy_from_slice(&1u16.to_le_bytes());
        p[12..16].copy_from_slice(&1024u32.to_le_bytes());
        p[16..20].copy_from_slice(&4u32.to_le_bytes());
        p[20..24].copy_from_slice(&1u32.to_le_bytes());
        p[24..28].copy_from_slice(&16u32.to_le_bytes());
        p[28..32].copy_from_slice(&512u32.to_le_bytes());
        p[32..40].copy_from_slice(&0x1234_5678_9000u64.to_le_bytes());
        p[40..48].copy_from_slice(&0x7f00_0000_1000u64.to_le_bytes());
        let d = decode_packet(&p, 0xa000, 0xb000, 7);
        assert_eq!(d.setup_dims, 3);
        assert_eq!(d.workgroup_size, [64, 2, 1]);
        assert_eq!(d.grid_size, [1024, 4, 1]);
        assert_eq!(d.private_segment_size, 16);
        assert_eq!(d.group_segment_size, 512);
        assert_eq!(d.kernel_object, 0x1234_5678_9000);
        assert_eq!(d.kernarg_address, 0x7f00_0000_1000);
        assert_eq!(
            (d.packet_address, d.queue_address, d.dispatch_id),
            (0xa000, 0xb000, 7)
        );
    }
}
