//! Which GPU a code object is for: the ELF header's `e_flags`, the AMDHSA
//! ABI version, and the compatibility rule between a code object and a
//! part.
//!
//! Every constant is a [`FACTS`] entry checked against LLVM 19's
//! `llvm/BinaryFormat/ELF.h`. The compatibility rule follows ROCR's
//! `Isa::IsCompatible()` (`core/runtime/isa.cpp`): the processor must match,
//! and an xnack or sramecc setting that is `on` or `off` in the code object
//! must equal the part's; `any` fits either. A code object that claims a
//! feature setting on a part that does not support the feature (or the
//! reverse) is refused too, where ROCR only asserts.

use barebell_facts::Fact;

/// The header the ELF facts are checked against.
pub const ELF_H: &str = "llvm/BinaryFormat/ELF.h";

/// `EM_AMDGPU`.
pub const EM_AMDGPU: u16 = 224;
/// `ELFOSABI_AMDGPU_HSA`.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `ELFABIVERSION_AMDGPU_HSA_V4`.
pub const ELFABIVERSION_AMDGPU_HSA_V4: u8 = 2;
/// `ELFABIVERSION_AMDGPU_HSA_V5`.
pub const ELFABIVERSION_AMDGPU_HSA_V5: u8 = 3;
/// `ELFABIVERSION_AMDGPU_HSA_V6`.
pub const ELFABIVERSION_AMDGPU_HSA_V6: u8 = 4;

/// `EF_AMDGPU_MACH`: the processor selection mask.
pub const EF_AMDGPU_MACH: u32 = 0x0ff;
/// `EF_AMDGPU_FEATURE_XNACK_V4`: the xnack selection mask.
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// `EF_AMDGPU_FEATURE_XNACK_UNSUPPORTED_V4`.
pub const EF_AMDGPU_FEATURE_XNACK_UNSUPPORTED_V4: u32 = 0x000;
/// `EF_AMDGPU_FEATURE_XNACK_ANY_V4`.
pub const EF_AMDGPU_FEATURE_XNACK_ANY_V4: u32 = 0x100;
/// `EF_AMDGPU_FEATURE_XNACK_OFF_V4`.
pub const EF_AMDGPU_FEATURE_XNACK_OFF_V4: u32 = 0x200;
/// `EF_AMDGPU_FEATURE_XNACK_ON_V4`.
pub const EF_AMDGPU_FEATURE_XNACK_ON_V4: u32 = 0x300;
/// `EF_AMDGPU_FEATURE_SRAMECC_V4`: the sramecc selection mask.
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// `EF_AMDGPU_FEATURE_SRAMECC_UNSUPPORTED_V4`.
pub const EF_AMDGPU_FEATURE_SRAMECC_UNSUPPORTED_V4: u32 = 0x000;
/// `EF_AMDGPU_FEATURE_SRAMECC_ANY_V4`.
pub const EF_AMDGPU_FEATURE_SRAMECC_ANY_V4: u32 = 0x400;
/// `EF_AMDGPU_FEATURE_SRAMECC_OFF_V4`.
pub const EF_AMDGPU_FEATURE_SRAMECC_OFF_V4: u32 = 0x800;
/// `EF_AMDGPU_FEATURE_SRAMECC_ON_V4`.
pub const EF_AMDGPU_FEATURE_SRAMECC_ON_V4: u32 = 0xc00;
/// `EF_AMDGPU_GENERIC_VERSION`: the generic-version mask (v6 and later).
pub const EF_AMDGPU_GENERIC_VERSION: u32 = 0xff00_0000;
/// `EF_AMDGPU_GENERIC_VERSION_OFFSET`.
pub const EF_AMDGPU_GENERIC_VERSION_OFFSET: u32 = 24;

/// `NT_AMDGPU_METADATA`: the note type of the msgpack metadata.
pub const NT_AMDGPU_METADATA: u32 = 32;

/// An `EF_AMDGPU_MACH_*` value (the low byte of `e_flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mach(pub u8);

/// The processors barebell names, with their LLVM processor names. A mach
/// outside this list still parses; it prints as its number.
macro_rules! machs {
    ($($konst:ident = $val:literal, $llvm:literal, $name:literal;)*) => {
        impl Mach {
            $(
                #[doc = concat!("`", $llvm, "`.")]
                pub const $konst: Mach = Mach($val);
            )*
            /// LLVM's processor name (`gfx1100`, `gfx11-generic`), if known.
            pub const fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($val => Some($name),)*
                    _ => None,
                }
            }
        }
        const MACH_FACTS: &[Fact] = &[
            $(Fact::constant(ELF_H, concat!("llvm::ELF::", $llvm), $val),)*
        ];
    };
}

machs! {
    GFX1100 = 0x41, "EF_AMDGPU_MACH_AMDGCN_GFX1100", "gfx1100";
    GFX1101 = 0x46, "EF_AMDGPU_MACH_AMDGCN_GFX1101", "gfx1101";
    GFX1102 = 0x47, "EF_AMDGPU_MACH_AMDGCN_GFX1102", "gfx1102";
    GFX1103 = 0x44, "EF_AMDGPU_MACH_AMDGCN_GFX1103", "gfx1103";
    GFX1150 = 0x43, "EF_AMDGPU_MACH_AMDGCN_GFX1150", "gfx1150";
    GFX1151 = 0x4a, "EF_AMDGPU_MACH_AMDGCN_GFX1151", "gfx1151";
    GFX1152 = 0x55, "EF_AMDGPU_MACH_AMDGCN_GFX1152", "gfx1152";
    GFX1200 = 0x48, "EF_AMDGPU_MACH_AMDGCN_GFX1200", "gfx1200";
    GFX1201 = 0x4e, "EF_AMDGPU_MACH_AMDGCN_GFX1201", "gfx1201";
    GFX11_GENERIC = 0x54, "EF_AMDGPU_MACH_AMDGCN_GFX11_GENERIC", "gfx11-generic";
    GFX12_GENERIC = 0x59, "EF_AMDGPU_MACH_AMDGCN_GFX12_GENERIC", "gfx12-generic";
    GFX90A = 0x3f, "EF_AMDGPU_MACH_AMDGCN_GFX90A", "gfx90a";
    GFX942 = 0x4c, "EF_AMDGPU_MACH_AMDGCN_GFX942", "gfx942";
}

impl core::fmt::Display for Mach {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "mach {:#04x}", self.0),
        }
    }
}

/// The AMDHSA code object versions barebell loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CodeObjectVersion {
    V4,
    V5,
    V6,
}

impl CodeObjectVersion {
    /// From `EI_ABIVERSION` (with `EI_OSABI` = HSA).
    pub const fn from_abi_version(v: u8) -> Option<Self> {
        match v {
            ELFABIVERSION_AMDGPU_HSA_V4 => Some(Self::V4),
            ELFABIVERSION_AMDGPU_HSA_V5 => Some(Self::V5),
            ELFABIVERSION_AMDGPU_HSA_V6 => Some(Self::V6),
            _ => None,
        }
    }

    pub const fn number(self) -> u8 {
        match self {
            Self::V4 => 4,
            Self::V5 => 5,
            Self::V6 => 6,
        }
    }
}

/// A v4+ feature setting (xnack or sramecc) as encoded in `e_flags`, or as
/// a part runs with (a part is never `Any`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// The processor has no such feature.
    Unsupported,
    /// Code that works with the feature on or off.
    Any,
    Off,
    On,
}

impl Feature {
    fn xnack(flags: u32) -> Self {
        match flags & EF_AMDGPU_FEATURE_XNACK_V4 {
            EF_AMDGPU_FEATURE_XNACK_ANY_V4 => Self::Any,
            EF_AMDGPU_FEATURE_XNACK_OFF_V4 => Self::Off,
            EF_AMDGPU_FEATURE_XNACK_ON_V4 => Self::On,
            _ => Self::Unsupported,
        }
    }

    fn sramecc(flags: u32) -> Self {
        match flags & EF_AMDGPU_FEATURE_SRAMECC_V4 {
            EF_AMDGPU_FEATURE_SRAMECC_ANY_V4 => Self::Any,
            EF_AMDGPU_FEATURE_SRAMECC_OFF_V4 => Self::Off,
            EF_AMDGPU_FEATURE_SRAMECC_ON_V4 => Self::On,
            _ => Self::Unsupported,
        }
    }

    /// ROCR's rule, made strict about support: an unsupported feature must
    /// be unsupported on both sides; otherwise `any` fits and `on`/`off`
    /// must match.
    pub const fn fits(code: Feature, part: Feature) -> bool {
        match (code, part) {
            (Feature::Unsupported, Feature::Unsupported) => true,
            (Feature::Unsupported, _) | (_, Feature::Unsupported) => false,
            (Feature::Any, _) => true,
            (Feature::On, Feature::On) | (Feature::Off, Feature::Off) => true,
            _ => false,
        }
    }

    /// The suffix LLVM target IDs use (`:xnack+`), empty when unsupported.
    pub const fn suffix(self) -> &'static str {
        match self {
            Feature::Unsupported | Feature::Any => "",
            Feature::On => "+",
            Feature::Off => "-",
        }
    }
}

impl core::fmt::Display for Feature {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Feature::Unsupported => "unsupported",
            Feature::Any => "any",
            Feature::Off => "off",
            Feature::On => "on",
        })
    }
}

/// What the ELF header says the code object is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeTarget {
    pub version: CodeObjectVersion,
    pub mach: Mach,
    pub xnack: Feature,
    pub sramecc: Feature,
    /// `EF_AMDGPU_GENERIC_VERSION` (v6 and later; 0 when absent).
    pub generic_version: u8,
    /// The whole `e_flags`, for messages.
    pub e_flags: u32,
}

impl CodeTarget {
    /// Decodes `e_flags` for a v4+ code object.
    pub fn from_flags(version: CodeObjectVersion, e_flags: u32) -> Self {
        let generic_version = if version >= CodeObjectVersion::V6 {
            ((e_flags & EF_AMDGPU_GENERIC_VERSION) >> EF_AMDGPU_GENERIC_VERSION_OFFSET) as u8
        } else {
            0
        };
        CodeTarget {
            version,
            mach: Mach((e_flags & EF_AMDGPU_MACH) as u8),
            xnack: Feature::xnack(e_flags),
            sramecc: Feature::sramecc(e_flags),
            generic_version,
            e_flags,
        }
    }
}

impl core::fmt::Display for CodeTarget {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}", self.mach)?;
        if self.sramecc != Feature::Unsupported {
            write!(f, ":sramecc={}", self.sramecc)?;
        }
        if self.xnack != Feature::Unsupported {
            write!(f, ":xnack={}", self.xnack)?;
        }
        if self.generic_version != 0 {
            write!(f, " (generic version {})", self.generic_version)?;
        }
        write!(
            f,
            ", code object v{} (e_flags {:#x})",
            self.version.number(),
            self.e_flags
        )
    }
}

/// The part a code object is loaded for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub name: &'static str,
    pub mach: Mach,
    /// The generic processor that covers this part, and the highest
    /// `EF_AMDGPU_GENERIC_VERSION` of it this loader accepts.
    pub generic: Option<(Mach, u8)>,
    pub xnack: Feature,
    pub sramecc: Feature,
    /// LDS bytes one workgroup may allocate.
    pub lds_bytes_per_workgroup: u32,
}

impl Part {
    /// Navi31 (gfx1100). LLVM's AMDGPUUsage lists gfx1100 without xnack
    /// or sramecc, and under `gfx11-generic` (generic version 1 in LLVM 19).
    /// 64 KiB of LDS per workgroup is LLVM's `getAddressableLocalMemorySize`
    /// for gfx11 (a model value here: no device confirmed it).
    pub const NAVI31: Part = Part {
        name: "navi31",
        mach: Mach::GFX1100,
        generic: Some((Mach::GFX11_GENERIC, 1)),
        xnack: Feature::Unsupported,
        sramecc: Feature::Unsupported,
        lds_bytes_per_workgroup: 64 * 1024,
    };

    /// Navi48 (gfx1201), under `gfx12-generic` (generic version 1 in LLVM 19).
    pub const NAVI48: Part = Part {
        name: "navi48",
        mach: Mach::GFX1201,
        generic: Some((Mach::GFX12_GENERIC, 1)),
        xnack: Feature::Unsupported,
        sramecc: Feature::Unsupported,
        lds_bytes_per_workgroup: 64 * 1024,
    };

    /// MI300X (gfx942, GC 9.4.3). AMDGPUUsage's processor table (LLVM 19)
    /// lists `gfx942` with the target features `sramecc` and `xnack` and
    /// no generic processor covers it in LLVM 19 (`ELF.h` has no
    /// `EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC`; `gfx9-generic` excludes
    /// gfx90a and gfx94x), so `generic` is `None`. clang-19 `-mcpu=gfx942`
    /// emits both features as `any` (e_flags `0x54c`), which fit either
    /// setting. The setting the part runs with, `sramecc+` (ECC enabled)
    /// and `xnack-` (ROCm's default, no `HSA_XNACK=1`), is the usual MI300X
    /// configuration (KFD's target id `gfx942:sramecc+:xnack-`) and a
    /// **model value**: no device was read. 64 KiB of LDS per workgroup
    /// is LLVM 19's `getAddressableLocalMemorySize` for gfx9 targets below
    /// gfx950 (`AMDGPUBaseInfo.cpp`; clang-19 refuses a gfx942 kernel with
    /// more), a model value as for the gfx11 parts.
    pub const MI300X: Part = Part {
        name: "mi300x",
        mach: Mach::GFX942,
        generic: None,
        xnack: Feature::Off,
        sramecc: Feature::On,
        lds_bytes_per_workgroup: 64 * 1024,
    };

    /// MI308X: the same processor and settings as [`Part::MI300X`] (fewer
    /// XCCs and CUs, which the loader does not see).
    pub const MI308X: Part = Part {
        name: "mi308x",
        ..Part::MI300X
    };

    /// MI210 (Aldebaran, GC 9.4.2): gfx90a with SRAM ECC on and XNACK
    /// off, as KFD reports it (`kfd_topology.c` sets `SRAM_EDCSUPPORTED`
    /// for 9.4.2; ROCR picks `gfx90a:sramecc+:xnack-` for that node); 64
    /// KiB of LDS per workgroup, LLVM 19's `getAddressableLocalMemorySize`
    /// for gfx90a.
    pub const MI210: Part = Part {
        name: "mi210",
        mach: Mach::GFX90A,
        generic: None,
        xnack: Feature::Off,
        sramecc: Feature::On,
        lds_bytes_per_workgroup: 64 * 1024,
    };

    /// Whether `code` may run on this part; the refusal names both sides.
    pub fn accepts(&self, code: &CodeTarget) -> Result<(), TargetMismatch> {
        let mismatch = |what| TargetMismatch {
            what,
            code: *code,
            part: *self,
        };
        if code.mach == self.mach {
            if code.generic_version != 0 {
                return Err(mismatch(MismatchKind::GenericVersion));
            }
        } else {
            match self.generic {
                Some((g, max)) if g == code.mach => {
                    if code.version < CodeObjectVersion::V6 {
                        return Err(mismatch(MismatchKind::GenericBeforeV6));
                    }
                    if code.generic_version == 0 || code.generic_version > max {
                        return Err(mismatch(MismatchKind::GenericVersion));
                    }
                }
                _ => return Err(mismatch(MismatchKind::Processor)),
            }
        }
        if !Feature::fits(code.xnack, self.xnack) {
            return Err(mismatch(MismatchKind::Xnack));
        }
        if !Feature::fits(code.sramecc, self.sramecc) {
            return Err(mismatch(MismatchKind::Sramecc));
        }
        Ok(())
    }
}

impl core::fmt::Display for Part {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} ({}", self.name, self.mach)?;
        if self.sramecc != Feature::Unsupported {
            write!(f, ":sramecc{}", self.sramecc.suffix())?;
        }
        if self.xnack != Feature::Unsupported {
            write!(f, ":xnack{}", self.xnack.suffix())?;
        }
        f.write_str(")")
    }
}

/// Which part of the target check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MismatchKind {
    Processor,
    Xnack,
    Sramecc,
    /// A generic code object before v6, whose header cannot say so.
    GenericBeforeV6,
    /// A generic version of 0, above what this loader accepts, or set on a
    /// non-generic processor.
    GenericVersion,
}

/// A code object that does not fit the part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetMismatch {
    pub what: MismatchKind,
    pub code: CodeTarget,
    pub part: Part,
}

impl core::fmt::Display for TargetMismatch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let why = match self.what {
            MismatchKind::Processor => "the processor differs",
            MismatchKind::Xnack => "the xnack setting does not fit",
            MismatchKind::Sramecc => "the sramecc setting does not fit",
            MismatchKind::GenericBeforeV6 => "generic processors need code object v6",
            MismatchKind::GenericVersion => "the generic version is not one this loader accepts",
        };
        write!(
            f,
            "code object built for {} cannot run on {}: {why}",
            self.code, self.part
        )
    }
}

/// ELF facts, against LLVM 19's `ELF.h`.
pub const FACTS: &[Fact] = barebell_facts::fact_table!([
    Fact::constant(ELF_H, "llvm::ELF::EM_AMDGPU", EM_AMDGPU as u64),
    Fact::constant(
        ELF_H,
        "llvm::ELF::ELFOSABI_AMDGPU_HSA",
        ELFOSABI_AMDGPU_HSA as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V4",
        ELFABIVERSION_AMDGPU_HSA_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V5",
        ELFABIVERSION_AMDGPU_HSA_V5 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V6",
        ELFABIVERSION_AMDGPU_HSA_V6 as u64
    ),
    Fact::constant(ELF_H, "llvm::ELF::EF_AMDGPU_MACH", EF_AMDGPU_MACH as u64),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_FEATURE_XNACK_V4",
        EF_AMDGPU_FEATURE_XNACK_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_FEATURE_XNACK_UNSUPPORTED_V4",
        EF_AMDGPU_FEATURE_XNACK_UNSUPPORTED_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_FEATURE_XNACK_ANY_V4",
        EF_AMDGPU_FEATURE_XNACK_ANY_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_FEATURE_XNACK_OFF_V4",
        EF_AMDGPU_FEATURE_XNACK_OFF_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_FEATURE_XNACK_ON_V4",
        EF_AMDGPU_FEATURE_XNACK_ON_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_V4",
        EF_AMDGPU_FEATURE_SRAMECC_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_UNSUPPORTED_V4",
        EF_AMDGPU_FEATURE_SRAMECC_UNSUPPORTED_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_ANY_V4",
        EF_AMDGPU_FEATURE_SRAMECC_ANY_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_OFF_V4",
        EF_AMDGPU_FEATURE_SRAMECC_OFF_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_ON_V4",
        EF_AMDGPU_FEATURE_SRAMECC_ON_V4 as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_GENERIC_VERSION",
        EF_AMDGPU_GENERIC_VERSION as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::EF_AMDGPU_GENERIC_VERSION_OFFSET",
        EF_AMDGPU_GENERIC_VERSION_OFFSET as u64
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::NT_AMDGPU_METADATA",
        NT_AMDGPU_METADATA as u64
    ),
],);

/// The processor-number facts, separately (generated with the names).
pub const MACH_FACT_TABLE: &[Fact] = MACH_FACTS;
