//! Scratch (private segment) for a queue, computed as ROCR's `AqlQueue`
//! sets it up for gfx9 (GC 9.4.3, gfx942), gfx11 and gfx12.
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
//! gfx9 differs (`AqlQueue::FillComputeTmpRingSize()`, the pre-gfx11
//! branch; `mem_alignment_size` is 1024 below gfx11, `AqlQueue::AqlQueue`):
//! WAVESIZE counts 1 KiB units, and WAVES is the waves one XCC's share of
//! the scratch holds (`main_size / NumXcc`), not per shader engine,
//! capped at the device's `CUs × MaxSlotsScratchCU`. The gfx9 buffer
//! descriptor words are `FillBufRsrcWord1` / `FillBufRsrcWord3` (see
//! [`ScratchPlan::resource_descriptor`]).
//!
//! The COMPUTE_TMPRING_SIZE field positions are [`FACTS`] checked against
//! Linux 6.12 `gc_9_4_3_sh_mask.h` / `gc_11_0_0_sh_mask.h` /
//! `gc_12_0_0_sh_mask.h`; the gfx9 descriptor fields too (gfx9's are in
//! `gc_9_4_3_sh_mask.h` and `vega10_enum.h`). The buffer
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
    /// GFX major version: 9 (GC 9.4.3), 11 or 12.
    pub gfx_major: u8,
    /// XCCs sharing the queue's scratch (`NumXcc`): 1 but on GC 9.4.3.
    pub xccs: u32,
    /// Active compute units (`NumFComputeCores / NumSIMDPerCU`).
    pub compute_units: u32,
    /// Shader engines (`NumShaderBanks`).
    pub shader_engines: u32,
    /// `MaxSlotsScratchCU`.
    pub max_slots_per_cu: u32,
}

/// ROCR's `mem_alignment_size` for gfx11 and later.
pub const MEM_ALIGNMENT: u64 = 256;
/// ROCR's `mem_alignment_size` below gfx11 (WAVESIZE in 1 KiB units).
pub const MEM_ALIGNMENT_GFX9: u64 = 1024;
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
/// gfx9 (GC 9.4.3): 13 bits.
pub const TMPRING_WAVESIZE_MASK_GFX9: u32 = 0x01ff_f000;

/// gfx9 `SQ_BUF_RSRC_WORD1` fields (`gc_9_4_3_sh_mask.h`).
pub mod srd9 {
    pub const WORD1_BASE_ADDRESS_HI_MASK: u32 = 0x0000_ffff;
    pub const WORD1_SWIZZLE_ENABLE_SHIFT: u32 = 31;
    pub const WORD3_DST_SEL_X_SHIFT: u32 = 0;
    pub const WORD3_DST_SEL_Y_SHIFT: u32 = 3;
    pub const WORD3_DST_SEL_Z_SHIFT: u32 = 6;
    pub const WORD3_DST_SEL_W_SHIFT: u32 = 9;
    pub const WORD3_NUM_FORMAT_SHIFT: u32 = 12;
    pub const WORD3_DATA_FORMAT_SHIFT: u32 = 15;
    /// ROCR's `SQ_BUF_RSRC_WORD3.ELEMENT_SIZE` (bits 20:19 in its
    /// CI/VI-era struct); `gc_9_4_3_sh_mask.h` names bit 19
    /// `USER_VM_ENABLE`. ROCR sets it to 1, so bit 19 is set here as ROCR
    /// sets it.
    pub const WORD3_ELEMENT_SIZE_SHIFT: u32 = 19;
    pub const WORD3_INDEX_STRIDE_SHIFT: u32 = 21;
    pub const WORD3_ADD_TID_ENABLE_SHIFT: u32 = 23;
    pub const WORD3_TYPE_SHIFT: u32 = 30;
    /// `SQ_SEL_X` (`vega10_enum.h`); Y, Z, W follow.
    pub const SQ_SEL_X: u32 = 4;
    /// `BUF_NUM_FORMAT_UINT`.
    pub const BUF_NUM_FORMAT_UINT: u32 = 4;
    /// `BUF_DATA_FORMAT_32`.
    pub const BUF_DATA_FORMAT_32: u32 = 4;
    /// `SQ_RSRC_BUF`.
    pub const SQ_RSRC_BUF: u32 = 0;
}

/// Why scratch could not be planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScratchError {
    /// Only gfx9, gfx11 and gfx12 are described.
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
                    "scratch set-up is described for gfx9, gfx11 and gfx12, not gfx{v}"
                )
            }
            ScratchError::TooLarge { size_per_thread } => write!(
                f,
                "{size_per_thread} private bytes per work-item exceed ROCR's limit of {MAX_SIZE_PER_THREAD}"
            ),
            ScratchError::WaveSizeOverflow { units } => write!(
                f,
                "a wave needs {units} scratch units (1 KiB on gfx9, 256 bytes on gfx11+), more than COMPUTE_TMPRING_SIZE.WAVESIZE holds"
            ),
            ScratchError::EmptyPart => {
                f.write_str("the part has no compute units, shader engines, XCCs or scratch slots")
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
        let (mask, unit) = match part.gfx_major {
            9 => (TMPRING_WAVESIZE_MASK_GFX9, MEM_ALIGNMENT_GFX9),
            11 => (TMPRING_WAVESIZE_MASK_GFX11, MEM_ALIGNMENT),
            12 => (TMPRING_WAVESIZE_MASK_GFX12, MEM_ALIGNMENT),
            v => return Err(ScratchError::UnsupportedGfx(v)),
        };
        if part.compute_units == 0
            || part.shader_engines == 0
            || part.max_slots_per_cu == 0
            || part.xccs == 0
        {
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
            let wave_units = (lanes * per_thread).div_ceil(unit);
            let field_max = u64::from(mask >> TMPRING_WAVESIZE_SHIFT);
            if wave_units > field_max {
                return Err(ScratchError::WaveSizeOverflow { units: wave_units });
            }
            let max_waves = u64::from(part.compute_units) * u64::from(part.max_slots_per_cu);
            let waves = if part.gfx_major == 9 {
                // FillComputeTmpRingSize: one XCC's share, in waves.
                (bytes / u64::from(part.xccs)) / (wave_units * unit)
            } else {
                // FillComputeTmpRingSize_Gfx11/_Gfx12: per shader engine.
                bytes / (wave_units * unit) / u64::from(part.shader_engines)
            };
            let waves = waves.min(max_waves).min(u64::from(TMPRING_WAVES_MASK));
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
    /// `FillBufRsrcWord0..3` build it. gfx11/gfx12: unconfirmed layout
    /// (see the module documentation). gfx9: the fields of
    /// `gc_9_4_3_sh_mask.h` ([`srd9`], conformance-checked), with the
    /// values ROCR's gfx9 branch writes: WORD1 SWIZZLE_ENABLE = 1, STRIDE
    /// and CACHE_SWIZZLE 0; WORD3 DST_SEL X/Y/Z/W, NUM_FORMAT_UINT,
    /// DATA_FORMAT_32, ELEMENT_SIZE 1, INDEX_STRIDE 3 (64), ADD_TID_ENABLE
    /// 1, TYPE SQ_RSRC_BUF. gfx942 kernels address scratch through
    /// architected flat scratch; the descriptor is kept because ROCR fills
    /// it.
    pub fn resource_descriptor(&self, backing: u64) -> [u32; 4] {
        if self.gfx_major == 9 {
            use srd9::*;
            let word1 = (backing >> 32) as u32 & WORD1_BASE_ADDRESS_HI_MASK
                | 1 << WORD1_SWIZZLE_ENABLE_SHIFT;
            let word3 = SQ_SEL_X << WORD3_DST_SEL_X_SHIFT
                | (SQ_SEL_X + 1) << WORD3_DST_SEL_Y_SHIFT
                | (SQ_SEL_X + 2) << WORD3_DST_SEL_Z_SHIFT
                | (SQ_SEL_X + 3) << WORD3_DST_SEL_W_SHIFT
                | BUF_NUM_FORMAT_UINT << WORD3_NUM_FORMAT_SHIFT
                | BUF_DATA_FORMAT_32 << WORD3_DATA_FORMAT_SHIFT
                | 1 << WORD3_ELEMENT_SIZE_SHIFT
                | 3 << WORD3_INDEX_STRIDE_SHIFT
                | 1 << WORD3_ADD_TID_ENABLE_SHIFT
                | SQ_RSRC_BUF << WORD3_TYPE_SHIFT;
            return [backing as u32, word1, self.bytes as u32, word3];
        }
        // WORD1: BASE_ADDRESS_HI [15:0], STRIDE [29:16] = 0,
        // SWIZZLE_ENABLE [31:30] = 1.
        let word1 = (backing >> 32) as u32 & 0xffff | 1 << 30;
        // WORD3: DST_SEL_X/Y/Z/W = SQ_SEL_X/Y/Z/W (4..7) in 3-bit fields,
        // FORMAT = BUF_FORMAT_32_UINT (0x14) at [17:12], INDEX_STRIDE 0
        // (the CP fills it), ADD_TID_ENABLE [23] = 1, OOB_SELECT [29:28]
        // = 2, TYPE [31:30] = SQ_RSRC_BUF (0). gfx12 has compression
        // controls at [27:24], left 0, so the word is the same.
        let word3 = 4 | 5 << 3 | 6 << 6 | 7 << 9 | 0x14 << 12 | 1 << 23 | 2 << 28;
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

const GC9: &str = "gc_9_4_3_sh_mask.h";
const VEGA10_ENUM: &str = "vega10_enum.h";
const GC11: &str = "gc_11_0_0_sh_mask.h";
const GC12: &str = "gc_12_0_0_sh_mask.h";

/// COMPUTE_TMPRING_SIZE field facts against Linux 6.12 (and the gfx9
/// scratch descriptor's fields).
pub const FACTS: &[Fact] = &[
    Fact::constant(
        GC9,
        "COMPUTE_TMPRING_SIZE__WAVES__SHIFT",
        TMPRING_WAVES_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "COMPUTE_TMPRING_SIZE__WAVES_MASK",
        TMPRING_WAVES_MASK as u64,
    ),
    Fact::constant(
        GC9,
        "COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT",
        TMPRING_WAVESIZE_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "COMPUTE_TMPRING_SIZE__WAVESIZE_MASK",
        TMPRING_WAVESIZE_MASK_GFX9 as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD1__BASE_ADDRESS_HI_MASK",
        srd9::WORD1_BASE_ADDRESS_HI_MASK as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD1__SWIZZLE_ENABLE__SHIFT",
        srd9::WORD1_SWIZZLE_ENABLE_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD3__DST_SEL_X__SHIFT",
        srd9::WORD3_DST_SEL_X_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD3__DST_SEL_Y__SHIFT",
        srd9::WORD3_DST_SEL_Y_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD3__DST_SEL_Z__SHIFT",
        srd9::WORD3_DST_SEL_Z_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD3__DST_SEL_W__SHIFT",
        srd9::WORD3_DST_SEL_W_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD3__NUM_FORMAT__SHIFT",
        srd9::WORD3_NUM_FORMAT_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD3__DATA_FORMAT__SHIFT",
        srd9::WORD3_DATA_FORMAT_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD3__USER_VM_ENABLE__SHIFT",
        srd9::WORD3_ELEMENT_SIZE_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD3__INDEX_STRIDE__SHIFT",
        srd9::WORD3_INDEX_STRIDE_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD3__ADD_TID_ENABLE__SHIFT",
        srd9::WORD3_ADD_TID_ENABLE_SHIFT as u64,
    ),
    Fact::constant(
        GC9,
        "SQ_BUF_RSRC_WORD3__TYPE__SHIFT",
        srd9::WORD3_TYPE_SHIFT as u64,
    ),
    Fact::constant(VEGA10_ENUM, "SQ_SEL_X", srd9::SQ_SEL_X as u64),
    Fact::constant(VEGA10_ENUM, "SQ_SEL_W", srd9::SQ_SEL_X as u64 + 3),
    Fact::constant(
        VEGA10_ENUM,
        "BUF_NUM_FORMAT_UINT",
        srd9::BUF_NUM_FORMAT_UINT as u64,
    ),
    Fact::constant(
        VEGA10_ENUM,
        "BUF_DATA_FORMAT_32",
        srd9::BUF_DATA_FORMAT_32 as u64,
    ),
    Fact::constant(VEGA10_ENUM, "SQ_RSRC_BUF", srd9::SQ_RSRC_BUF as u64),
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
        xccs: 1,
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
    fn rocr_gfx9_arithmetic_worked_by_hand() {
        // MI300X-like (model values): 8 XCCs x 38 CUs = 304 CUs, 32 SEs,
        // 32 slots per CU. QueueCreate: 200 B/lane x 32 x 64 x 304
        //   = 124_518_400 bytes.
        // FillComputeTmpRingSize (gfx9, 1 KiB units): WAVESIZE =
        //   ceil(64 x 200 / 1024) = 13; waves per XCC =
        //   (124_518_400 / 8) / (13 x 1024) = 15_564_800 / 13_312 = 1169
        //   (below the 304 x 32 cap, within WAVES' 12 bits);
        //   13 << 12 | 1169 = 0xd491.
        let mi300x = ScratchPart {
            gfx_major: 9,
            xccs: 8,
            compute_units: 304,
            shader_engines: 32,
            max_slots_per_cu: 32,
        };
        let p = ScratchPlan::new(&mi300x, 200).unwrap();
        assert_eq!(p.bytes, 124_518_400);
        assert_eq!(p.compute_tmpring_size, 0xd491);
        assert_eq!(p.wave64_lane_byte_size, 200);
        // WAVESIZE's 13 bits on gfx9: 8191 KiB per wave at most; 131_072
        // B/lane needs 8192 units.
        assert_eq!(
            ScratchPlan::new(&mi300x, 131_072),
            Err(ScratchError::WaveSizeOverflow { units: 8192 })
        );
        // ROCR's gfx9 descriptor: word1 = base[47:32] | SWIZZLE_ENABLE;
        // word3 = X,Y,Z,W selects (4,5,6,7), UINT (4) at 12, 32 (4) at
        // 15, ELEMENT_SIZE 1 at 19, INDEX_STRIDE 3 at 21, ADD_TID at 23:
        //   0xfac | 0x4000 | 0x20000 | 0x80000 | 0x600000 | 0x800000
        //   = 0xea_4fac.
        let srd = p.resource_descriptor(0x7f00_1234_5000);
        assert_eq!(srd, [0x1234_5000, 0x8000_7f00, 124_518_400, 0x00ea_4fac]);
        let zero_xcc = ScratchPart { xccs: 0, ..mi300x };
        assert_eq!(
            ScratchPlan::new(&zero_xcc, 16),
            Err(ScratchError::EmptyPart)
        );
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
