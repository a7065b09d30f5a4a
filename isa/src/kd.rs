//! The 64-byte AMDHSA kernel descriptor, decoded by this crate's own code.
//!
//! Field offsets and bit positions are facts ([`FACTS`]) checked by `cargo
//! xtask conformance` against LLVM 19's `llvm/Support/AMDHSAKernelDescriptor.h`
//! (Debian `llvm-19-dev`).

use barebell_facts::Fact;

const H: &str = "llvm/Support/AMDHSAKernelDescriptor.h";

pub const KD_SIZE: usize = 64;
pub const GROUP_SEGMENT_FIXED_SIZE: usize = 0;
pub const PRIVATE_SEGMENT_FIXED_SIZE: usize = 4;
pub const KERNARG_SIZE: usize = 8;
pub const KERNEL_CODE_ENTRY_BYTE_OFFSET: usize = 16;
pub const COMPUTE_PGM_RSRC3: usize = 44;
pub const COMPUTE_PGM_RSRC1: usize = 48;
pub const COMPUTE_PGM_RSRC2: usize = 52;
pub const KERNEL_CODE_PROPERTIES: usize = 56;
pub const KERNARG_PRELOAD: usize = 58;

/// (shift, width) of the bit fields used.
pub const RSRC1_VGPR_COUNT: (u32, u32) = (0, 6);
pub const RSRC1_FLOAT_DENORM_MODE_32: (u32, u32) = (16, 2);
pub const RSRC1_FLOAT_DENORM_MODE_16_64: (u32, u32) = (18, 2);
pub const RSRC2_ENABLE_PRIVATE_SEGMENT: (u32, u32) = (0, 1);
pub const RSRC2_USER_SGPR_COUNT: (u32, u32) = (1, 5);
pub const RSRC2_WORKGROUP_ID_X: (u32, u32) = (7, 1);
pub const RSRC2_WORKGROUP_ID_Y: (u32, u32) = (8, 1);
pub const RSRC2_WORKGROUP_ID_Z: (u32, u32) = (9, 1);
pub const RSRC2_WORKGROUP_INFO: (u32, u32) = (10, 1);
pub const RSRC2_VGPR_WORKITEM_ID: (u32, u32) = (11, 2);
pub const RSRC2_LDS_SIZE: (u32, u32) = (15, 9);
/// gfx90a/gfx942 compute_pgm_rsrc3: AccVGPRs start at (ACCUM_OFFSET + 1) * 4.
pub const RSRC3_GFX90A_ACCUM_OFFSET: (u32, u32) = (0, 6);
pub const RSRC3_GFX90A_TG_SPLIT: (u32, u32) = (16, 1);
pub const KCP_PRIVATE_SEGMENT_BUFFER: (u32, u32) = (0, 1);
pub const KCP_DISPATCH_PTR: (u32, u32) = (1, 1);
pub const KCP_QUEUE_PTR: (u32, u32) = (2, 1);
pub const KCP_KERNARG_SEGMENT_PTR: (u32, u32) = (3, 1);
pub const KCP_DISPATCH_ID: (u32, u32) = (4, 1);
pub const KCP_FLAT_SCRATCH_INIT: (u32, u32) = (5, 1);
pub const KCP_PRIVATE_SEGMENT_SIZE: (u32, u32) = (6, 1);
pub const KCP_WAVEFRONT_SIZE32: (u32, u32) = (10, 1);
pub const KCP_USES_DYNAMIC_STACK: (u32, u32) = (11, 1);

macro_rules! bits_facts {
    ($($name:literal = $v:expr),* $(,)?) => {
        [$(
            Fact::constant(H, concat!("llvm::amdhsa::", $name, "_SHIFT"), $v.0 as u64),
            Fact::constant(H, concat!("llvm::amdhsa::", $name, "_WIDTH"), $v.1 as u64),
        )*]
    };
}

/// Kernel-descriptor facts, checked against LLVM 19's header.
pub const FACTS: &[&[Fact]] = &[
    &[
        Fact::constant(
            H,
            "sizeof(llvm::amdhsa::kernel_descriptor_t)",
            KD_SIZE as u64,
        ),
        Fact::constant(
            H,
            "llvm::amdhsa::GROUP_SEGMENT_FIXED_SIZE_OFFSET",
            GROUP_SEGMENT_FIXED_SIZE as u64,
        ),
        Fact::constant(
            H,
            "llvm::amdhsa::PRIVATE_SEGMENT_FIXED_SIZE_OFFSET",
            PRIVATE_SEGMENT_FIXED_SIZE as u64,
        ),
        Fact::constant(H, "llvm::amdhsa::KERNARG_SIZE_OFFSET", KERNARG_SIZE as u64),
        Fact::constant(
            H,
            "llvm::amdhsa::KERNEL_CODE_ENTRY_BYTE_OFFSET_OFFSET",
            KERNEL_CODE_ENTRY_BYTE_OFFSET as u64,
        ),
        Fact::constant(
            H,
            "llvm::amdhsa::COMPUTE_PGM_RSRC3_OFFSET",
            COMPUTE_PGM_RSRC3 as u64,
        ),
        Fact::constant(
            H,
            "llvm::amdhsa::COMPUTE_PGM_RSRC1_OFFSET",
            COMPUTE_PGM_RSRC1 as u64,
        ),
        Fact::constant(
            H,
            "llvm::amdhsa::COMPUTE_PGM_RSRC2_OFFSET",
            COMPUTE_PGM_RSRC2 as u64,
        ),
        Fact::constant(
            H,
            "llvm::amdhsa::KERNEL_CODE_PROPERTIES_OFFSET",
            KERNEL_CODE_PROPERTIES as u64,
        ),
        Fact::constant(
            H,
            "llvm::amdhsa::KERNARG_PRELOAD_OFFSET",
            KERNARG_PRELOAD as u64,
        ),
    ],
    &bits_facts!(
        "COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT" = RSRC1_VGPR_COUNT,
        "COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_32" = RSRC1_FLOAT_DENORM_MODE_32,
        "COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_16_64" = RSRC1_FLOAT_DENORM_MODE_16_64,
        "COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT" = RSRC2_ENABLE_PRIVATE_SEGMENT,
        "COMPUTE_PGM_RSRC2_USER_SGPR_COUNT" = RSRC2_USER_SGPR_COUNT,
        "COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X" = RSRC2_WORKGROUP_ID_X,
        "COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y" = RSRC2_WORKGROUP_ID_Y,
        "COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z" = RSRC2_WORKGROUP_ID_Z,
        "COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_INFO" = RSRC2_WORKGROUP_INFO,
        "COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID" = RSRC2_VGPR_WORKITEM_ID,
        "COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE" = RSRC2_LDS_SIZE,
        "COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET" = RSRC3_GFX90A_ACCUM_OFFSET,
        "COMPUTE_PGM_RSRC3_GFX90A_TG_SPLIT" = RSRC3_GFX90A_TG_SPLIT,
        "KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER" = KCP_PRIVATE_SEGMENT_BUFFER,
        "KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_PTR" = KCP_DISPATCH_PTR,
        "KERNEL_CODE_PROPERTY_ENABLE_SGPR_QUEUE_PTR" = KCP_QUEUE_PTR,
        "KERNEL_CODE_PROPERTY_ENABLE_SGPR_KERNARG_SEGMENT_PTR" = KCP_KERNARG_SEGMENT_PTR,
        "KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_ID" = KCP_DISPATCH_ID,
        "KERNEL_CODE_PROPERTY_ENABLE_SGPR_FLAT_SCRATCH_INIT" = KCP_FLAT_SCRATCH_INIT,
        "KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_SIZE" = KCP_PRIVATE_SEGMENT_SIZE,
        "KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32" = KCP_WAVEFRONT_SIZE32,
        "KERNEL_CODE_PROPERTY_USES_DYNAMIC_STACK" = KCP_USES_DYNAMIC_STACK,
    ),
];

fn bits(v: u32, (shift, width): (u32, u32)) -> u32 {
    (v >> shift) & ((1u32 << width) - 1)
}

/// The fields of a kernel descriptor the launch uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub kernel_code_entry_byte_offset: i64,
    pub rsrc1: u32,
    pub rsrc2: u32,
    pub rsrc3: u32,
    pub kernel_code_properties: u16,
    pub kernarg_preload: u16,
}

fn le32(b: &[u8; KD_SIZE], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl KernelDescriptor {
    pub fn parse(b: &[u8; KD_SIZE]) -> KernelDescriptor {
        let mut e = [0u8; 8];
        e.copy_from_slice(&b[KERNEL_CODE_ENTRY_BYTE_OFFSET..KERNEL_CODE_ENTRY_BYTE_OFFSET + 8]);
        KernelDescriptor {
            group_segment_fixed_size: le32(b, GROUP_SEGMENT_FIXED_SIZE),
            private_segment_fixed_size: le32(b, PRIVATE_SEGMENT_FIXED_SIZE),
            kernarg_size: le32(b, KERNARG_SIZE),
            kernel_code_entry_byte_offset: i64::from_le_bytes(e),
            rsrc1: le32(b, COMPUTE_PGM_RSRC1),
            rsrc2: le32(b, COMPUTE_PGM_RSRC2),
            rsrc3: le32(b, COMPUTE_PGM_RSRC3),
            kernel_code_properties: u16::from_le_bytes([
                b[KERNEL_CODE_PROPERTIES],
                b[KERNEL_CODE_PROPERTIES + 1],
            ]),
            kernarg_preload: u16::from_le_bytes([b[KERNARG_PRELOAD], b[KERNARG_PRELOAD + 1]]),
        }
    }

    fn kcp(&self, f: (u32, u32)) -> bool {
        bits(u32::from(self.kernel_code_properties), f) != 0
    }

    pub fn wave32(&self) -> bool {
        self.kcp(KCP_WAVEFRONT_SIZE32)
    }
    pub fn user_sgpr_count(&self) -> u32 {
        bits(self.rsrc2, RSRC2_USER_SGPR_COUNT)
    }
    pub fn private_segment_buffer(&self) -> bool {
        self.kcp(KCP_PRIVATE_SEGMENT_BUFFER)
    }
    pub fn dispatch_ptr(&self) -> bool {
        self.kcp(KCP_DISPATCH_PTR)
    }
    pub fn queue_ptr(&self) -> bool {
        self.kcp(KCP_QUEUE_PTR)
    }
    pub fn kernarg_segment_ptr(&self) -> bool {
        self.kcp(KCP_KERNARG_SEGMENT_PTR)
    }
    pub fn dispatch_id(&self) -> bool {
        self.kcp(KCP_DISPATCH_ID)
    }
    pub fn flat_scratch_init(&self) -> bool {
        self.kcp(KCP_FLAT_SCRATCH_INIT)
    }
    pub fn private_segment_size(&self) -> bool {
        self.kcp(KCP_PRIVATE_SEGMENT_SIZE)
    }
    pub fn workgroup_id(&self) -> [bool; 3] {
        [
            bits(self.rsrc2, RSRC2_WORKGROUP_ID_X) != 0,
            bits(self.rsrc2, RSRC2_WORKGROUP_ID_Y) != 0,
            bits(self.rsrc2, RSRC2_WORKGROUP_ID_Z) != 0,
        ]
    }
    pub fn workgroup_info(&self) -> bool {
        bits(self.rsrc2, RSRC2_WORKGROUP_INFO) != 0
    }
    pub fn private_segment(&self) -> bool {
        bits(self.rsrc2, RSRC2_ENABLE_PRIVATE_SEGMENT) != 0
    }
    /// 0: only x, 1: x and y, 2: x, y and z work-item ids.
    pub fn vgpr_workitem_id(&self) -> u32 {
        bits(self.rsrc2, RSRC2_VGPR_WORKITEM_ID)
    }
    /// VGPRs the wave needs: granules of 8 (wave32) or 4 (wave64) on gfx10+
    /// (AMDGPUUsage, "compute_pgm_rsrc1" GRANULATED_WORKITEM_VGPR_COUNT).
    pub fn vgpr_count(&self) -> u32 {
        let g = bits(self.rsrc1, RSRC1_VGPR_COUNT) + 1;
        if self.wave32() { g * 8 } else { g * 4 }
    }
    /// gfx90a/gfx942: the unified register file's granule is 8 VGPRs in
    /// wave64 (AMDGPUUsage, "compute_pgm_rsrc1" for GFX90A, GFX942), and
    /// the count covers ArchVGPRs and AccVGPRs together.
    pub fn vgpr_count_gfx90a(&self) -> u32 {
        (bits(self.rsrc1, RSRC1_VGPR_COUNT) + 1) * 8
    }
    /// gfx90a/gfx942: the first AccVGPR in the unified file.
    pub fn accum_offset(&self) -> u32 {
        (bits(self.rsrc3, RSRC3_GFX90A_ACCUM_OFFSET) + 1) * 4
    }
    pub fn tg_split(&self) -> bool {
        bits(self.rsrc3, RSRC3_GFX90A_TG_SPLIT) != 0
    }
    pub fn denorm_mode_32(&self) -> u32 {
        bits(self.rsrc1, RSRC1_FLOAT_DENORM_MODE_32)
    }
    pub fn denorm_mode_16_64(&self) -> u32 {
        bits(self.rsrc1, RSRC1_FLOAT_DENORM_MODE_16_64)
    }
}
