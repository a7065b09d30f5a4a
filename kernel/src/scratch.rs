//! Scratch (private segment) for a queue, computed as ROCR's `AqlQueue`
//! sets it up for gfx11 and gfx12.
//!
//! ROCR gives a queue created with a private segment size
//! (`GpuAgent::QueueCreate`, `core/runtime/amd_gpu_agent.cpp`) enough
//! scratch for every wave slot of the device: `size_per_thread ×
//! MaxSlotsScratchCU × 64 lanes × CUs`. `AqlQueue::InitScratchSRD()`
//! (`core/runtime/amd_aql_queue.cpp`) then fills the `amd_queue_t` fields
//! the CP reads:
//!
//! - `scratch_resource_descriptor[0..4]`: a buffer descriptor over the
//!   scratch (`FillBufRsrcWord0`, `FillBufRsrcWord1_Gfx11`,
//!   `FillBufRsrcWord2`, `FillBufRsrcWord3_Gfx11`/`_Gfx12`);
//! - `compute_tmpring_size`: WAVES and WAVESIZE
//!   (`FillComputeTmpRingSize_Gfx11`/`_Gfx12`): WAVESIZE is the per-wave
//!   size in 256-byte units (`mem_alignment_size` is 256 from gfx11 on),
//!   WAVES the number of waves per shader engine the scratch holds,
//!   capped at `CUs × MaxSlotsScratchCU`;
//! - `scratch_backing_memory_location`, `scratch_backing_memory_byte_size`
//!   and `scratch_wave64_lane_byte_size`.
//!
//! The COMPUTE_TMPRING_SIZE field positions are [`FACTS`] checked against
//! Linux 6.12 `gc_11_0_0_sh_mask.h` / `gc_12_0_0_sh_mask.h`. The buffer
//! descriptor word layouts are ROCR-private (`core/inc/registers.h`,
//! `SQ_BUF_RSRC_WORD1_GFX11`, `SQ_BUF_RSRC_WORD3_GFX11/GFX12`) and appear
//! in no installed header: they are **unconfirmed by conformance**. On
//! gfx11 and gfx12 kernels address scratch through flat scratch, which the
//! CP derives from the backing location and COMPUTE_TMPRING_SIZE; the
//! descriptor is kept because ROCR fills it.

use barebell::aql::queue::AmdQueue;
use barebell_facts::Fact;

/// What the part tells about its scratch slots (from IP discovery's
/// `gc_info` in Linux: `gc_max_scratch_slots_per_cu`, CU and SE counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchPart {
    /// GFX major version: 11 or 12.
    pub gfx_major: u8,
    /// Active compute units (`NumFComputeCores / NumSIMDPerCU`).
    pub compute_units: u32,
    /// Shader engines (`NumShaderBanks`).
    pub shader_engines: u32,
    /// `MaxSlotsScratchCU`.
    pub max_slots_per_cu: u32,
}

/// ROCR's `mem_alignment_size` for gfx11 and later.
pub const MEM_ALIGNMENT: u64 = 256;
/// ROCR's `QueueCreate` limit on the per-work-item private size.
pub const MAX_SIZE_PER_THREAD: u32 = 262_128;
/// ROCR sizes queue scratch for 64-lane waves (`main_lanes_per_wave = 64`).
pub const LANES_PER_WAVE: u32 = 64;

/// `COMPUTE_TMPRING_SIZE` fields.
pub const TMPRING_WAVES_SHIFT: u32 = 0;
pub const TMPRING_WAVES_MASK: u32 = 0x0000_0fff;
pub const TMPRING_WAVESIZE_SHIFT: u32 = 12;
/// gfx11: 15 bits.
pub const TMPRING_WAVESIZE_MASK_GFX11: u32 = 0x07ff_f000;
/// gfx12: 18 bits.
pub const TMPRING_WAVESIZE_MASK_GFX12: u32 = 0x3fff_f000;

/// Why scratch could not be planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScratchError {
    /// Only gfx11 and gfx12 are described.
    UnsupportedGfx(u8),
    /// More private bytes per work-item than ROCR allows.
    TooLarge { size_per_thread: u32 },
    /// The per-wave size does not fit COMPUTE_TMPRING_SIZE.WAVESIZE.
    WaveSizeOverflow { units: u64 },
    /// A zero CU, shader-engine or slot count.
    EmptyPart,
}

impl core::fmt::Display for ScratchError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            ScratchError::UnsupportedGfx(v) => {
                write!(
                    f,
                    "scratch set-up is described for gfx11 and gfx12, not gfx{v}"
                )
            }
            ScratchError::TooLarge { size_per_thread } => write!(
                f,
                "{size_per_thread} private bytes per work-item exceed ROCR's limit of {MAX_SIZE_PER_THREAD}"
            ),
            ScratchError::WaveSizeOverflow { units } => write!(
                f,
                "a wave needs {units} 256-byte scratch units, more than COMPUTE_TMPRING_SIZE.WAVESIZE holds"
            ),
            ScratchError::EmptyPart => {
                f.write_str("the part has no compute units, shader engines or scratch slots")
            }
        }
    }
}

/// Scratch for one queue: what to allocate, and the `amd_queue_t` fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchPlan {
    pub size_per_thread: u32,
    /// Bytes of backing memory to allocate (`main_size`).
    pub bytes: u64,
    pub compute_tmpring_size: u32,
    pub wave64_lane_byte_size: u32,
    gfx_major: u8,
}

impl ScratchPlan {
    /// Scratch for kernels using up to `size_per_thread` private bytes per
    /// work-item, as `GpuAgent::QueueCreate` sizes it.
    pub fn new(part: &ScratchPart, size_per_thread: u32) -> Result<Self, ScratchError> {
        let mask = match part.gfx_major {
            11 => TMPRING_WAVESIZE_MASK_GFX11,
            12 => TMPRING_WAVESIZE_MASK_GFX12,
            v => return Err(ScratchError::UnsupportedGfx(v)),
        };
        if part.compute_units == 0 || part.shader_engines == 0 || part.max_slots_per_cu == 0 {
            return Err(ScratchError::EmptyPart);
        }
        if size_per_thread > MAX_SIZE_PER_THREAD {
            return Err(ScratchError::TooLarge { size_per_thread });
        }
        let lanes = u64::from(LANES_PER_WAVE);
        let per_thread = u64::from(size_per_thread);
        let bytes =
            per_thread * u64::from(part.max_slots_per_cu) * lanes * u64::from(part.compute_units);
        let mut tmpring = 0u32;
        if bytes != 0 {
            // FillComputeTmpRingSize_Gfx11/_Gfx12.
            let wave_units = (lanes * per_thread).div_ceil(MEM_ALIGNMENT);
            let field_max = u64::from(mask >> TMPRING_WAVESIZE_SHIFT);
            if wave_units > field_max {
                return Err(ScratchError::WaveSizeOverflow { units: wave_units });
            }
            let waves_total = bytes / (wave_units * MEM_ALIGNMENT);
            let per_engine = waves_total / u64::from(part.shader_engines);
            let max_waves = u64::from(part.compute_units) * u64::from(part.max_slots_per_cu);
            let waves = per_engine.min(max_waves).min(u64::from(TMPRING_WAVES_MASK));
            tmpring = ((wave_units as u32) << TMPRING_WAVESIZE_SHIFT) & mask
                | (waves as u32) << TMPRING_WAVES_SHIFT & TMPRING_WAVES_MASK;
        }
        Ok(ScratchPlan {
            size_per_thread,
            bytes,
            compute_tmpring_size: tmpring,
            // size_per_thread * lanes / 64
            wave64_lane_byte_size: size_per_thread,
            gfx_major: part.gfx_major,
        })
    }

    /// The scratch buffer descriptor over `backing` (device address), as
    /// `FillBufRsrcWord0..3` for gfx11/gfx12 build it. Unconfirmed layout
    /// (see the module documentation).
    pub fn resource_descriptor(&self, backing: u64) -> [u32; 4] {
        // WORD1: BASE_ADDRESS_HI [15:0], STRIDE [29:16] = 0,
        // SWIZZLE_ENABLE [31:30] = 1.
        let word1 = (backing >> 32) as u32 & 0xffff | 1 << 30;
        // WORD3: DST_SEL_X/Y/Z/W = SQ_SEL_X/Y/Z/W (4..7) in 3-bit fields,
        // FORMAT = BUF_FORMAT_32_UINT (0x14) at [17:12], INDEX_STRIDE 0
        // (the CP fills it), ADD_TID_ENABLE [23] = 1, OOB_SELECT [29:28]
        // = 2, TYPE [31:30] = SQ_RSRC_BUF (0). gfx12 has compression
        // controls at [27:24], left 0, so the word is the same.
        let word3 = 4 | 5 << 3 | 6 << 6 | 7 << 9 | 0x14 << 12 | 1 << 23 | 2 << 28;
        let _ = self.gfx_major;
        [backing as u32, word1, self.bytes as u32, word3]
    }

    /// Writes the scratch fields of a queue descriptor for scratch at
    /// `backing`. Call before the queue is handed to the CP.
    pub fn apply(&self, desc: &mut AmdQueue, backing: u64) -> QueueScratch {
        desc.scratch_resource_descriptor = self.resource_descriptor(backing);
        desc.compute_tmpring_size = self.compute_tmpring_size;
        desc.scratch_backing_memory_location = backing;
        desc.scratch_backing_memory_byte_size = self.bytes;
        desc.scratch_wave64_lane_byte_size = self.wave64_lane_byte_size;
        self.grant()
    }

    /// What the queue can serve, for launch-time checks.
    pub fn grant(&self) -> QueueScratch {
        QueueScratch {
            wave64_lane_byte_size: self.wave64_lane_byte_size,
        }
    }
}

/// The scratch a queue was given (`scratch_wave64_lane_byte_size`): a
/// wave of `n` lanes may use `wave64_lane_byte_size × 64 / n` bytes per lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueScratch {
    pub wave64_lane_byte_size: u32,
}

impl QueueScratch {
    /// Private bytes per work-item a wave of `lanes` lanes may use.
    pub fn per_lane(&self, lanes: u32) -> u64 {
        u64::from(self.wave64_lane_byte_size) * 64 / u64::from(lanes.max(1))
    }
}

const GC11: &str = "gc_11_0_0_sh_mask.h";
const GC12: &str = "gc_12_0_0_sh_mask.h";

/// COMPUTE_TMPRING_SIZE field facts against Linux 6.12.
pub const FACTS: &[Fact] = &[
    Fact::constant(
        GC11,
        "COMPUTE_TMPRING_SIZE__WAVES__SHIFT",
        TMPRING_WAVES_SHIFT as u64,
    ),
    Fact::constant(
        GC11,
        "COMPUTE_TMPRING_SIZE__WAVES_MASK",
        TMPRING_WAVES_MASK as u64,
    ),
    Fact::constant(
        GC11,
        "COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT",
        TMPRING_WAVESIZE_SHIFT as u64,
    ),
    Fact::constant(
        GC11,
        "COMPUTE_TMPRING_SIZE__WAVESIZE_MASK",
        TMPRING_WAVESIZE_MASK_GFX11 as u64,
    ),
    Fact::constant(
        GC12,
        "COMPUTE_TMPRING_SIZE__WAVES__SHIFT",
        TMPRING_WAVES_SHIFT as u64,
    ),
    Fact::constant(
        GC12,
        "COMPUTE_TMPRING_SIZE__WAVES_MASK",
        TMPRING_WAVES_MASK as u64,
    ),
    Fact::constant(
        GC12,
        "COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT",
        TMPRING_WAVESIZE_SHIFT as u64,
    ),
    Fact::constant(
        GC12,
        "COMPUTE_TMPRING_SIZE__WAVESIZE_MASK",
        TMPRING_WAVESIZE_MASK_GFX12 as u64,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    const NAVI31_LIKE: ScratchPart = ScratchPart {
        gfx_major: 11,
        compute_units: 96,
        shader_engines: 6,
        max_slots_per_cu: 32,
    };

    #[test]
    fn rocr_arithmetic_worked_by_hand() {
        // QueueCreate: 260 B/lane × 32 slots × 64 lanes × 96 CUs
        //   = 51_118_080 bytes.
        // FillComputeTmpRingSize_Gfx11: WAVESIZE = ceil(64 × 260 / 256)
        //   = 65; waves = 51_118_080 / (65 × 256) = 3072, per engine
        //   3072 / 6 = 512 (below the 96 × 32 cap); register value
        //   65 << 12 | 512 = 0x41200 (field positions: gc_11_0_0_sh_mask.h).
        let p = ScratchPlan::new(&NAVI31_LIKE, 260).unwrap();
        assert_eq!(p.bytes, 51_118_080);
        assert_eq!(p.compute_tmpring_size, 0x41200);
        assert_eq!(p.wave64_lane_byte_size, 260);
        assert_eq!(p.grant().per_lane(64), 260);
        assert_eq!(p.grant().per_lane(32), 520);
        let none = ScratchPlan::new(&NAVI31_LIKE, 0).unwrap();
        assert_eq!((none.bytes, none.compute_tmpring_size), (0, 0));
    }

    #[test]
    fn limits_are_typed_errors() {
        // 200_000 B/lane: WAVESIZE 50_000 exceeds gfx11's 15 bits but fits
        // gfx12's 18.
        assert_eq!(
            ScratchPlan::new(&NAVI31_LIKE, 200_000),
            Err(ScratchError::WaveSizeOverflow { units: 50_000 })
        );
        let gfx12 = ScratchPart {
            gfx_major: 12,
            ..NAVI31_LIKE
        };
        assert!(ScratchPlan::new(&gfx12, 200_000).is_ok());
        assert_eq!(
            ScratchPlan::new(&gfx12, MAX_SIZE_PER_THREAD + 1),
            Err(ScratchError::TooLarge {
                size_per_thread: MAX_SIZE_PER_THREAD + 1
            })
        );
        let gfx10 = ScratchPart {
            gfx_major: 10,
            ..NAVI31_LIKE
        };
        assert_eq!(
            ScratchPlan::new(&gfx10, 16),
            Err(ScratchError::UnsupportedGfx(10))
        );
    }

    #[test]
    fn apply_writes_the_queue_fields() {
        // SAFETY: AmdQueue is plain integers; all-zero is valid.
        let mut q: AmdQueue = unsafe { core::mem::zeroed() };
        let p = ScratchPlan::new(&NAVI31_LIKE, 64).unwrap();
        let g = p.apply(&mut q, 0x7f00_0040_0000);
        assert_eq!(q.scratch_backing_memory_location, 0x7f00_0040_0000);
        assert_eq!(q.scratch_backing_memory_byte_size, p.bytes);
        assert_eq!(q.scratch_wave64_lane_byte_size, 64);
        assert_eq!(q.compute_tmpring_size, p.compute_tmpring_size);
        assert_eq!(q.scratch_resource_descriptor[0], 0x0040_0000);
        assert_eq!(q.scratch_resource_descriptor[1] & 0xffff, 0x7f00);
        assert_eq!(g.wave64_lane_byte_size, 64);
    }
}
