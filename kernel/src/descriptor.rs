//! The AMDHSA kernel descriptor: the 64 bytes a `.kd` symbol names and an
//! AQL dispatch's `kernel_object` points at.
//!
//! The layout is LLVM 19's `llvm::amdhsa::kernel_descriptor_t`
//! (`llvm/Support/AMDHSAKernelDescriptor.h`); every offset and every bit
//! field decoded here is a [`FACTS`] entry checked against that header.
//! Fields whose meaning differs between generations are named after the
//! header's `_GFX6_GFX11` / `_GFX12_PLUS` / `_GFX11` / `_GFX90A` variants.
//!
//! gfx942 (GC 9.4.3) code objects use the same 64 bytes with GFX9
//! semantics (AMDGPUUsage, "Kernel Descriptor", LLVM 19): the
//! `GFX10_PLUS_*` bits of `COMPUTE_PGM_RSRC1` are reserved (0),
//! `ENABLE_WAVEFRONT_SIZE32` is reserved (every wave is 64 lanes), and
//! `COMPUTE_PGM_RSRC3` holds the GFX90A+ fields `ACCUM_OFFSET` and
//! `TG_SPLIT` ([`rsrc3::GFX90A_ACCUM_OFFSET`], [`rsrc3::GFX90A_TG_SPLIT`])
//! instead of gfx11's shared-VGPR and prefetch fields. Nothing the loader
//! checks depends on the generation: it reads sizes, the entry offset, the
//! private-segment and wave-size bits, which mean the same on all three.

use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// The header the descriptor facts are checked against.
pub const KD_H: &str = "llvm/Support/AMDHSAKernelDescriptor.h";

/// `kernel_descriptor_t`, byte for byte.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub struct RawDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub reserved0: [u8; 4],
    /// Byte offset from the descriptor to the kernel's first instruction.
    pub kernel_code_entry_byte_offset: i64,
    pub reserved1: [u8; 20],
    pub compute_pgm_rsrc3: u32,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub kernel_code_properties: u16,
    pub kernarg_preload: u16,
    pub reserved3: [u8; 4],
}

/// Size of a kernel descriptor.
pub const DESCRIPTOR_SIZE: usize = 64;
/// AMDGPUUsage: "the kernel descriptor must be 64 byte aligned".
pub const DESCRIPTOR_ALIGN: u64 = 64;
/// AMDGPUUsage: kernel code entry is 256-byte aligned.
pub const ENTRY_ALIGN: u64 = 256;

const _: () = assert!(core::mem::size_of::<RawDescriptor>() == DESCRIPTOR_SIZE);

/// A bit field of a descriptor word: `(raw >> shift) & ((1 << width) - 1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bits {
    pub shift: u32,
    pub width: u32,
}

impl Bits {
    #[inline]
    pub const fn get(self, raw: u32) -> u32 {
        (raw >> self.shift) & (((1u64 << self.width) - 1) as u32)
    }
}

/// Declares bit-field constants and the facts tying each to the header's
/// `NAME_SHIFT` and `NAME_WIDTH` enumerators.
macro_rules! fields {
    ($table:ident; $($konst:ident = ($shift:literal, $width:literal), $c:literal;)*) => {
        $(
            #[doc = concat!("`llvm::amdhsa::", $c, "`.")]
            pub const $konst: Bits = Bits { shift: $shift, width: $width };
        )*
        /// Shift and width facts of this group of fields.
        pub const $table: &[Fact] = &[
            $(
                Fact::constant(KD_H, concat!("llvm::amdhsa::", $c, "_SHIFT"), $shift),
                Fact::constant(KD_H, concat!("llvm::amdhsa::", $c, "_WIDTH"), $width),
            )*
        ];
    };
}

/// `COMPUTE_PGM_RSRC1` fields.
pub mod rsrc1 {
    use super::*;
    fields! { FACTS;
        GRANULATED_WORKITEM_VGPR_COUNT = (0, 6), "COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT";
        GRANULATED_WAVEFRONT_SGPR_COUNT = (6, 4), "COMPUTE_PGM_RSRC1_GRANULATED_WAVEFRONT_SGPR_COUNT";
        PRIORITY = (10, 2), "COMPUTE_PGM_RSRC1_PRIORITY";
        FLOAT_ROUND_MODE_32 = (12, 2), "COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_32";
        FLOAT_ROUND_MODE_16_64 = (14, 2), "COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_16_64";
        FLOAT_DENORM_MODE_32 = (16, 2), "COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_32";
        FLOAT_DENORM_MODE_16_64 = (18, 2), "COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_16_64";
        PRIV = (20, 1), "COMPUTE_PGM_RSRC1_PRIV";
        GFX6_GFX11_ENABLE_DX10_CLAMP = (21, 1), "COMPUTE_PGM_RSRC1_GFX6_GFX11_ENABLE_DX10_CLAMP";
        GFX12_PLUS_ENABLE_WG_RR_EN = (21, 1), "COMPUTE_PGM_RSRC1_GFX12_PLUS_ENABLE_WG_RR_EN";
        DEBUG_MODE = (22, 1), "COMPUTE_PGM_RSRC1_DEBUG_MODE";
        GFX6_GFX11_ENABLE_IEEE_MODE = (23, 1), "COMPUTE_PGM_RSRC1_GFX6_GFX11_ENABLE_IEEE_MODE";
        GFX12_PLUS_DISABLE_PERF = (23, 1), "COMPUTE_PGM_RSRC1_GFX12_PLUS_DISABLE_PERF";
        BULKY = (24, 1), "COMPUTE_PGM_RSRC1_BULKY";
        CDBG_USER = (25, 1), "COMPUTE_PGM_RSRC1_CDBG_USER";
        GFX9_PLUS_FP16_OVFL = (26, 1), "COMPUTE_PGM_RSRC1_GFX9_PLUS_FP16_OVFL";
        GFX10_PLUS_WGP_MODE = (29, 1), "COMPUTE_PGM_RSRC1_GFX10_PLUS_WGP_MODE";
        GFX10_PLUS_MEM_ORDERED = (30, 1), "COMPUTE_PGM_RSRC1_GFX10_PLUS_MEM_ORDERED";
        GFX10_PLUS_FWD_PROGRESS = (31, 1), "COMPUTE_PGM_RSRC1_GFX10_PLUS_FWD_PROGRESS";
    }
}

/// `COMPUTE_PGM_RSRC2` fields.
pub mod rsrc2 {
    use super::*;
    fields! { FACTS;
        ENABLE_PRIVATE_SEGMENT = (0, 1), "COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT";
        USER_SGPR_COUNT = (1, 5), "COMPUTE_PGM_RSRC2_USER_SGPR_COUNT";
        GFX6_GFX11_ENABLE_TRAP_HANDLER = (6, 1), "COMPUTE_PGM_RSRC2_GFX6_GFX11_ENABLE_TRAP_HANDLER";
        ENABLE_SGPR_WORKGROUP_ID_X = (7, 1), "COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X";
        ENABLE_SGPR_WORKGROUP_ID_Y = (8, 1), "COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y";
        ENABLE_SGPR_WORKGROUP_ID_Z = (9, 1), "COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z";
        ENABLE_SGPR_WORKGROUP_INFO = (10, 1), "COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_INFO";
        ENABLE_VGPR_WORKITEM_ID = (11, 2), "COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID";
        ENABLE_EXCEPTION_ADDRESS_WATCH = (13, 1), "COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_ADDRESS_WATCH";
        ENABLE_EXCEPTION_MEMORY = (14, 1), "COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_MEMORY";
        GRANULATED_LDS_SIZE = (15, 9), "COMPUTE_PGM_RSRC2_GRANULATED_LDS_SIZE";
        ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION = (24, 1), "COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION";
        ENABLE_EXCEPTION_FP_DENORMAL_SOURCE = (25, 1), "COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_FP_DENORMAL_SOURCE";
        ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO = (26, 1), "COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO";
        ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW = (27, 1), "COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW";
        ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW = (28, 1), "COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW";
        ENABLE_EXCEPTION_IEEE_754_FP_INEXACT = (29, 1), "COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_IEEE_754_FP_INEXACT";
        ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO = (30, 1), "COMPUTE_PGM_RSRC2_ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO";
    }
}

/// `COMPUTE_PGM_RSRC3` fields for GFX10 and later, and for GFX90A+
/// (gfx90a, gfx942), whose rsrc3 is a different register.
pub mod rsrc3 {
    use super::*;
    fields! { FACTS;
        GFX90A_ACCUM_OFFSET = (0, 6), "COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET";
        GFX90A_TG_SPLIT = (16, 1), "COMPUTE_PGM_RSRC3_GFX90A_TG_SPLIT";
        GFX10_GFX11_SHARED_VGPR_COUNT = (0, 4), "COMPUTE_PGM_RSRC3_GFX10_GFX11_SHARED_VGPR_COUNT";
        GFX11_INST_PREF_SIZE = (4, 6), "COMPUTE_PGM_RSRC3_GFX11_INST_PREF_SIZE";
        GFX11_TRAP_ON_START = (10, 1), "COMPUTE_PGM_RSRC3_GFX11_TRAP_ON_START";
        GFX11_TRAP_ON_END = (11, 1), "COMPUTE_PGM_RSRC3_GFX11_TRAP_ON_END";
        GFX12_PLUS_INST_PREF_SIZE = (4, 8), "COMPUTE_PGM_RSRC3_GFX12_PLUS_INST_PREF_SIZE";
        GFX12_PLUS_GLG_EN = (13, 1), "COMPUTE_PGM_RSRC3_GFX12_PLUS_GLG_EN";
        GFX11_PLUS_IMAGE_OP = (31, 1), "COMPUTE_PGM_RSRC3_GFX11_PLUS_IMAGE_OP";
    }
}

/// `KERNEL_CODE_PROPERTY` fields.
pub mod props {
    use super::*;
    fields! { FACTS;
        ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER = (0, 1), "KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER";
        ENABLE_SGPR_DISPATCH_PTR = (1, 1), "KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_PTR";
        ENABLE_SGPR_QUEUE_PTR = (2, 1), "KERNEL_CODE_PROPERTY_ENABLE_SGPR_QUEUE_PTR";
        ENABLE_SGPR_KERNARG_SEGMENT_PTR = (3, 1), "KERNEL_CODE_PROPERTY_ENABLE_SGPR_KERNARG_SEGMENT_PTR";
        ENABLE_SGPR_DISPATCH_ID = (4, 1), "KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_ID";
        ENABLE_SGPR_FLAT_SCRATCH_INIT = (5, 1), "KERNEL_CODE_PROPERTY_ENABLE_SGPR_FLAT_SCRATCH_INIT";
        ENABLE_SGPR_PRIVATE_SEGMENT_SIZE = (6, 1), "KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_SIZE";
        ENABLE_WAVEFRONT_SIZE32 = (10, 1), "KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32";
        USES_DYNAMIC_STACK = (11, 1), "KERNEL_CODE_PROPERTY_USES_DYNAMIC_STACK";
    }
}

/// `KERNARG_PRELOAD_SPEC` fields.
pub mod preload {
    use super::*;
    fields! { FACTS;
        LENGTH = (0, 7), "KERNARG_PRELOAD_SPEC_LENGTH";
        OFFSET = (7, 9), "KERNARG_PRELOAD_SPEC_OFFSET";
    }
}

/// A decoded kernel descriptor, with its raw bytes kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelDescriptor {
    pub raw: RawDescriptor,
}

impl KernelDescriptor {
    /// Reads a descriptor from exactly 64 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        RawDescriptor::read_from_bytes(bytes)
            .ok()
            .map(|raw| KernelDescriptor { raw })
    }

    pub fn group_segment_fixed_size(&self) -> u32 {
        self.raw.group_segment_fixed_size
    }
    pub fn private_segment_fixed_size(&self) -> u32 {
        self.raw.private_segment_fixed_size
    }
    pub fn kernarg_size(&self) -> u32 {
        self.raw.kernarg_size
    }
    pub fn entry_offset(&self) -> i64 {
        self.raw.kernel_code_entry_byte_offset
    }
    pub fn rsrc1(&self, f: Bits) -> u32 {
        f.get(self.raw.compute_pgm_rsrc1)
    }
    pub fn rsrc2(&self, f: Bits) -> u32 {
        f.get(self.raw.compute_pgm_rsrc2)
    }
    pub fn rsrc3(&self, f: Bits) -> u32 {
        f.get(self.raw.compute_pgm_rsrc3)
    }
    pub fn property(&self, f: Bits) -> u32 {
        f.get(u32::from(self.raw.kernel_code_properties))
    }
    /// Lanes per wave: 32 when `ENABLE_WAVEFRONT_SIZE32` is set, else 64.
    pub fn wavefront_size(&self) -> u32 {
        if self.property(props::ENABLE_WAVEFRONT_SIZE32) != 0 {
            32
        } else {
            64
        }
    }
    /// GFX90A+ (gfx942): the first AccVGPR's index in the unified VGPR
    /// file, `(ACCUM_OFFSET + 1) × 4` (AMDGPUUsage: granularity 4, the
    /// `.amdhsa_accum_offset` directive's value). Meaningless on gfx11+.
    pub fn accum_offset_gfx90a(&self) -> u32 {
        (self.rsrc3(rsrc3::GFX90A_ACCUM_OFFSET) + 1) * 4
    }
    /// GFX90A+ (gfx942): `TG_SPLIT`, the workgroup's waves may run on
    /// different CUs (`.amdhsa_tg_split`). Meaningless on gfx11+.
    pub fn tg_split_gfx90a(&self) -> bool {
        self.rsrc3(rsrc3::GFX90A_TG_SPLIT) != 0
    }
    /// Whether the kernel reads a private segment (scratch).
    pub fn enables_private_segment(&self) -> bool {
        self.rsrc2(rsrc2::ENABLE_PRIVATE_SEGMENT) != 0
    }
    pub fn uses_dynamic_stack(&self) -> bool {
        self.property(props::USES_DYNAMIC_STACK) != 0
    }
    /// Kernarg preload: (dwords, dword offset).
    pub fn kernarg_preload(&self) -> (u32, u32) {
        let raw = u32::from(self.raw.kernarg_preload);
        (preload::LENGTH.get(raw), preload::OFFSET.get(raw))
    }
}

/// Layout facts of the descriptor.
pub const LAYOUT_FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(KD_H, RawDescriptor = "llvm::amdhsa::kernel_descriptor_t" {
        group_segment_fixed_size = "group_segment_fixed_size",
        private_segment_fixed_size = "private_segment_fixed_size",
        kernarg_size = "kernarg_size",
        reserved0 = "reserved0",
        kernel_code_entry_byte_offset = "kernel_code_entry_byte_offset",
        reserved1 = "reserved1",
        compute_pgm_rsrc3 = "compute_pgm_rsrc3",
        compute_pgm_rsrc1 = "compute_pgm_rsrc1",
        compute_pgm_rsrc2 = "compute_pgm_rsrc2",
        kernel_code_properties = "kernel_code_properties",
        kernarg_preload = "kernarg_preload",
        reserved3 = "reserved3",
    }),
    [
        Fact::constant(
            KD_H,
            "llvm::amdhsa::KERNEL_CODE_ENTRY_BYTE_OFFSET_OFFSET",
            core::mem::offset_of!(RawDescriptor, kernel_code_entry_byte_offset) as u64
        ),
        Fact::constant(
            KD_H,
            "llvm::amdhsa::COMPUTE_PGM_RSRC1_OFFSET",
            core::mem::offset_of!(RawDescriptor, compute_pgm_rsrc1) as u64
        ),
        Fact::constant(
            KD_H,
            "llvm::amdhsa::COMPUTE_PGM_RSRC2_OFFSET",
            core::mem::offset_of!(RawDescriptor, compute_pgm_rsrc2) as u64
        ),
        Fact::constant(
            KD_H,
            "llvm::amdhsa::COMPUTE_PGM_RSRC3_OFFSET",
            core::mem::offset_of!(RawDescriptor, compute_pgm_rsrc3) as u64
        ),
        Fact::constant(
            KD_H,
            "llvm::amdhsa::KERNEL_CODE_PROPERTIES_OFFSET",
            core::mem::offset_of!(RawDescriptor, kernel_code_properties) as u64
        ),
        Fact::constant(
            KD_H,
            "llvm::amdhsa::KERNARG_PRELOAD_OFFSET",
            core::mem::offset_of!(RawDescriptor, kernarg_preload) as u64
        ),
        Fact::constant(
            KD_H,
            "alignof(llvm::amdhsa::kernel_descriptor_t)",
            core::mem::align_of::<RawDescriptor>() as u64
        ),
    ],
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_extract_fields() {
        let f = Bits { shift: 4, width: 3 };
        assert_eq!(f.get(0b1010_0000), 0b010);
        let full = Bits {
            shift: 0,
            width: 32,
        };
        assert_eq!(full.get(u32::MAX), u32::MAX);
    }

    #[test]
    fn short_input_is_no_descriptor() {
        assert!(KernelDescriptor::from_bytes(&[0u8; 63]).is_none());
        assert!(KernelDescriptor::from_bytes(&[0u8; 64]).is_some());
    }
}
