//! Synthesises IP discovery binaries (`include/discovery.h`) from a
//! declarative description of a part.
//!
//! No discovery binary from a real gfx11 or gfx12 card is available to
//! this project, so the model writes one the way the IFWI would: binary
//! header, IP discovery table with its dies and IP entries, GC table and
//! harvest table, each with the byte-sum checksum Linux verifies in
//! `amdgpu_discovery_init()`. The byte layout here is written from the
//! header independently of the runtime's parser (plain offsets, no shared
//! structs), so a parser bug cannot cancel out against a builder bug.
//!
//! What is and is not documented about the two parts described:
//! - GC, MP0, MP1, SDMA and VCN versions are public: each is the version
//!   the matching firmware file in `firmware-amd-graphics` is named after
//!   (`gc_11_0_0_*.bin`, `psp_13_0_0_sos.bin`, `smu_13_0_0.bin`,
//!   `sdma_6_0_0.bin`, `vcn_4_0_0.bin`; `gc_12_0_1_*.bin`,
//!   `psp_14_0_3_sos.bin`, `sdma_7_0_1.bin`). NBIO/MMHUB/HDP/OSSSYS
//!   versions are the generation's Linux 6.12 IP files (`nbio_v4_3.c`,
//!   `mmhub_v3_0.c`, `hdp_v6_0.c`, `ih_v6_0.c`; `nbif_v6_3_1.c`,
//!   `mmhub_v4_1_0.c`, `hdp_v7_0.c`, `ih_v7_0.c`); which exact revision a
//!   given board reports is unconfirmed.
//! - The display: Navi31 (RX 7900) has DCN 3.2.0 (`gmc_v11_0.c`
//!   includes `dcn_3_2_0_offset.h` to read it); the Navi48 table lists no
//!   DMU: Linux 6.12 reads no display register on gfx12
//!   (`gmc_v12_0_get_vbios_fb_size()` returns 0) and the model has no
//!   gfx12 display (see [`crate::dcn`]).
//! - Which table version and base width real boards use is unconfirmed;
//!   the two parts use version 4 with 32- and 64-bit bases, and tests
//!   rebuild them as versions 1 and 3.
//! - Segment bases are **not** public for these parts (Linux 6.12 ships
//!   no `navi31_ip_offset.h`). The bases used are those of the previous
//!   generation from `sienna_cichlid_ip_offset.h` (Navi21), which keeps
//!   the values realistic in shape; they are unconfirmed for Navi31/48.

use alloc::vec;
use alloc::vec::Vec;

pub const BINARY_SIGNATURE: u32 = 0x2821_1407;
pub const IPDS: u32 = 0x5344_5049;
pub const GC_TABLE_ID: u32 = 0x4347;
pub const HARVEST_SIGNATURE: u32 = 0x5652_4148;
/// `DISCOVERY_TMR_SIZE`.
pub const TABLE_BYTES: usize = 10 << 10;
/// Dies an `ip_discovery_header` lists (`die_info[16]`, `discovery.h`).
pub const MAX_DIES: usize = 16;

/// One IP entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpDesc {
    pub hw_id: u16,
    pub instance: u8,
    pub version: (u8, u8, u8),
    /// Written in byte 7: `variant << 4 | sub_revision` for table
    /// version ≥ 3, the harvest nibble below that.
    pub variant: u8,
    pub sub_revision: u8,
    pub harvest: u8,
    pub bases: &'static [u64],
}

impl IpDesc {
    pub const fn new(
        hw_id: u16,
        instance: u8,
        version: (u8, u8, u8),
        bases: &'static [u64],
    ) -> Self {
        IpDesc {
            hw_id,
            instance,
            version,
            variant: 0,
            sub_revision: 0,
            harvest: 0,
            bases,
        }
    }
}

/// The GC table contents (`gc_info_v1_0`), the fields barebell reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcDesc {
    pub num_se: u32,
    pub wgp0_per_sa: u32,
    pub wgp1_per_sa: u32,
    pub rb_per_se: u32,
    pub sa_per_se: u32,
    pub wave_size: u32,
    pub lds_size: u32,
}

/// A part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartDesc {
    pub name: &'static str,
    /// `ip_discovery_header.version`, 1..=4.
    pub table_version: u16,
    /// Version 4 only: write bases as 64-bit.
    pub base_64: bool,
    pub dies: &'static [&'static [IpDesc]],
    pub gc: Option<GcDesc>,
    /// A `gc_info_v2_1` GC table (GC 9.4.3) instead of [`PartDesc::gc`]'s
    /// v1.0.
    pub gc_v2: Option<GcV2Desc>,
    pub harvested: &'static [(u16, u8)],
}

/// The GC table as `gc_info_v2_1` (`discovery.h`): per-XCC values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcV2Desc {
    pub num_se: u32,
    pub cu_per_sh: u32,
    pub sh_per_se: u32,
    pub rb_per_se: u32,
    pub wave_size: u32,
    pub lds_size: u32,
    pub num_tcp_per_sh: u32,
    pub tcc_size: u32,
}

/// `gc_info_v1_0.gc_max_waves_per_simd` the model writes (**model value**).
pub const GC_MAX_WAVES_PER_SIMD: u32 = 16;
/// `gc_info_v2_1.gc_max_waves_per_simd` (**model value**).
pub const GC_V2_MAX_WAVES_PER_SIMD: u32 = 8;
/// `gc_info_v1_0`/`v2_1` `gc_max_scratch_slots_per_cu` (**model value**).
pub const GC_MAX_SCRATCH_SLOTS_PER_CU: u32 = 32;

// Hardware ids, `soc15_hw_ip.h`.
pub const MP1_HWID: u16 = 1;
pub const GC_HWID: u16 = 11;
pub const MMHUB_HWID: u16 = 34;
pub const OSSSYS_HWID: u16 = 40;
pub const HDP_HWID: u16 = 41;
pub const SDMA0_HWID: u16 = 42;
pub const VCN_HWID: u16 = 12;
pub const NBIF_HWID: u16 = 108;
pub const MP0_HWID: u16 = 255;
/// `SMUIO_HWID`.
pub const SMUIO_HWID: u16 = 4;
/// `DMU_HWID`: the display (Linux's `DCE_HWIP`).
pub const DMU_HWID: u16 = 271;

// Navi21 segment bases (`sienna_cichlid_ip_offset.h`); see module docs.
const GC_BASES: &[u64] = &[0x1260, 0xA000, 0x1C000, 0x2402C00];
const MP0_BASES: &[u64] = &[0x16000, 0xDC0000, 0xE00000, 0xE40000, 0x243FC00];
/// MP1: Navi21's segment 0, and a **model value** for segment 1:
/// seg0 + 0x200. Linux 6.12 reaches MP1 14.0.x's SMU mailbox at
/// seg1 + 0x82 (`mp_14_0_2_offset.h` `regMP1_SMN_C2PMSG_66`, BASE_IDX 1,
/// `smu_v14_0_2_set_smu_mailbox_registers()`), tinygrad's AM at seg0 +
/// 0x282 (`mp_11_0_offset.h`, imported for every part by
/// `AMDev._build_regs`); both have run on gfx1201 boards, so there the
/// two name one register and seg1 = seg0 + 0x200. MP1 13.0.0 uses
/// segment 0 only (`mp_13_0_0_offset.h`, BASE_IDX 0), so Navi31 does not
/// care. Navi21's own seg1 (0xDC0000) would split the two drivers.
const MP1_BASES: &[u64] = &[0x16000, 0x16200, 0xE00000, 0xE40000, 0x243FC00];
/// NBIO: Navi21's five segments plus segment 5 = 0x04040000, Navi24's
/// (`beige_goby_ip_offset.h` `NBIO_BASE__INST0_SEG5`, the same
/// generation with the same segments 0-4). NBIO 4.3.0 and NBIF 6.3.1 put
/// `RCC_DEV0_EPF2_STRAP*` in segment 5 (`regRCC_DEV0_EPF2_STRAP2_BASE_IDX`
/// 5), which tinygrad's AM writes (`AM_SOC.init_hw`) and resolves for
/// every register at discovery (`AMDev._build_regs`); the Navi31/48 value
/// is not public, so this is a **model value** of Navi24's shape.
const NBIO_BASES: &[u64] = &[0x0, 0x14, 0xD20, 0x10400, 0x241B000, 0x4040000];
const MMHUB_BASES: &[u64] = &[0x1A000, 0x2408800];
const HDP_BASES: &[u64] = &[0xF20, 0x240A400];
const OSSSYS_BASES: &[u64] = &[0x10A0, 0x240A000];
const SDMA_BASES: &[u64] = &[0x1260, 0xA000, 0x1C000, 0x2402C00];
const VCN_BASES: &[u64] = &[0x7800, 0x7E00, 0x2403000];
/// `DCN_BASE` of `sienna_cichlid_ip_offset.h`.
const DCN_BASES: &[u64] = &[0x12, 0xC0, 0x34C0, 0x9000, 0x2403C00];

/// A Navi31-class (gfx1100) part.
pub const NAVI31: PartDesc = PartDesc {
    name: "navi31-model",
    table_version: 4,
    base_64: false,
    dies: &[&[
        IpDesc::new(GC_HWID, 0, (11, 0, 0), GC_BASES),
        IpDesc::new(MP0_HWID, 0, (13, 0, 0), MP0_BASES),
        IpDesc::new(MP1_HWID, 0, (13, 0, 0), MP1_BASES),
        IpDesc::new(NBIF_HWID, 0, (4, 3, 0), NBIO_BASES),
        IpDesc::new(MMHUB_HWID, 0, (3, 0, 0), MMHUB_BASES),
        IpDesc::new(HDP_HWID, 0, (6, 0, 0), HDP_BASES),
        IpDesc::new(OSSSYS_HWID, 0, (6, 0, 0), OSSSYS_BASES),
        IpDesc::new(SDMA0_HWID, 0, (6, 0, 0), SDMA_BASES),
        IpDesc::new(SDMA0_HWID, 1, (6, 0, 0), SDMA_BASES),
        IpDesc::new(VCN_HWID, 0, (4, 0, 0), VCN_BASES),
        IpDesc::new(VCN_HWID, 1, (4, 0, 0), VCN_BASES),
        // DCN 3.2.0 (`dcn_3_2_0_offset.h`, what `gmc_v11_0.c` includes).
        IpDesc::new(DMU_HWID, 0, (3, 2, 0), DCN_BASES),
    ]],
    gc: Some(GcDesc {
        num_se: 6,
        wgp0_per_sa: 4,
        wgp1_per_sa: 4,
        rb_per_se: 4,
        sa_per_se: 2,
        wave_size: 32,
        lds_size: 64,
    }),
    gc_v2: None,
    harvested: &[(VCN_HWID, 1)],
};

/// A Navi48-class (gfx1201) part, written with 64-bit bases.
pub const NAVI48: PartDesc = PartDesc {
    name: "navi48-model",
    table_version: 4,
    base_64: true,
    dies: &[&[
        IpDesc::new(GC_HWID, 0, (12, 0, 1), GC_BASES),
        IpDesc::new(MP0_HWID, 0, (14, 0, 3), MP0_BASES),
        IpDesc::new(MP1_HWID, 0, (14, 0, 3), MP1_BASES),
        IpDesc::new(NBIF_HWID, 0, (6, 3, 1), NBIO_BASES),
        IpDesc::new(MMHUB_HWID, 0, (4, 1, 0), MMHUB_BASES),
        IpDesc::new(HDP_HWID, 0, (7, 0, 0), HDP_BASES),
        IpDesc::new(OSSSYS_HWID, 0, (7, 0, 0), OSSSYS_BASES),
        IpDesc::new(SDMA0_HWID, 0, (7, 0, 1), SDMA_BASES),
        IpDesc::new(SDMA0_HWID, 1, (7, 0, 1), SDMA_BASES),
    ]],
    gc: Some(GcDesc {
        num_se: 4,
        wgp0_per_sa: 4,
        wgp1_per_sa: 4,
        rb_per_se: 4,
        sa_per_se: 2,
        wave_size: 32,
        lds_size: 64,
    }),
    gc_v2: None,
    harvested: &[],
};

// ---- GC 9.4.3 parts (MI300X, MI308X) ------------------------------------
//
// Versions are Linux 6.12's for GC 9.4.3 (amdgpu_discovery.c's ip-block
// setup and soc15.c/aqua_vanjaram.c): GC 9.4.3, MP0 13.0.6 (psp_v13_0.c,
// psp_13_0_6_*.bin), MP1 13.0.6 (smu_v13_0_6_ppt.c, smu_13_0_6.bin), SDMA
// 4.4.2 (sdma_v4_4_2.c), NBIO 7.9.0 (nbio_v7_9.c), MMHUB 1.8.0
// (mmhub_v1_8.c), OSSSYS 4.4.2 (vega20_ih), HDP 4.4.2 (hdp_v4_0.c), VCN
// 4.0.3 (vcn_v4_0_3.c, vcn_4_0_3.bin), SMUIO 13.0.3 (smuio_v13_0_3.c: the SMUIO Linux reads MI300A's APU package
// type from, so the GC 9.4.3 family's).
//
// **Model values** (no MI300 discovery binary is public): every base
// below; which die lists the single-instance blocks; the AID tag in base
// bits 33:32. Model convention: die `a` (AID `a`) lists GC instances 2a
// and 2a+1 (two XCCs per AID: 8 XCCs on 4 AIDs, the MI300X layout AMD
// documents), SDMA0 instances 4a..4a+3 (`num_inst_per_aid = 4`,
// aqua_vanjaram_init_soc_config()), MMHUB and NBIO instance a (mmhub_v1_8
// addresses MMHUB by AID) and VCN instance a; die 0 alone lists MP0, MP1, OSSSYS, HDP and
// SMUIO as instance 0. NBIO carries segment 5 (Navi24's 0x4040000,
// as the Navi parts' NBIO_BASES) because `nbio_v7_9_init_registers()`
// writes `XCC_DOORBELL_FENCE` and the SDMA doorbell routing writes
// `S2A_DOORBELL_ENTRY_n_CTRL`, both `BASE_IDX` 5 in `nbio_7_9_0_offset.h`.
// NBIO lists nine segments, as many as `nbio_7_9_0_offset.h` indexes:
// `nbio_v7_9_enable_doorbell_aperture()` writes
// `BIFC_DOORBELL_ACCESS_EN_PF` and `nbio_v7_9_init_registers()`
// `BIFC_GFX_INT_MONITOR_MASK`, both `BASE_IDX` 8 (as does tinygrad's
// `AM_SOC.init_hw`, whose register table needs a ninth base for every
// NBIO 7.9 register to have an address). No register of that header
// uses segments 6 or 7 (base 0 here); segment 8's base, 0x20000 (dword),
// is a model value inside BAR5 clear of every other block.
// The table is version 4 with 64-bit bases whose
// bits 33:32 carry the AID (Linux keeps only bits 29:0, "Bits > 32
// follows ASIC specific format").
/// Dword stride between consecutive XCCs' GC segments (model value).
pub const XCC_STRIDE: u64 = 0x0080_0000;
/// Dword stride between AIDs' per-AID blocks (model value).
pub const AID_STRIDE: u64 = 0x0400_0000;
/// Bits 33:32 of a 64-bit base: the AID (model value; the parser drops them).
pub const AID_TAG: u64 = 1 << 32;
/// NBIO 7.9's segment 8 on AID 0, in dwords (model value, inside BAR5
/// and clear of every other block's registers in the model's layout).
pub const NBIO_SEG8: u64 = 0x0002_0000;
/// GC segment bases of XCC 0 (Navi21's, as for the other parts; model value).
pub const GC_9_4_3_BASES: [u64; 4] = [0x1260, 0xA000, 0x1C000, 0x2402C00];

/// The four dies of a GC 9.4.3 part as the model writes them (see above).
// Every base is written as its formula, the 0 and 1 multiples included.
#[allow(clippy::erasing_op, clippy::identity_op)]
pub const MI300_DIES: &[&[IpDesc]] = &[
    &[
        IpDesc::new(
            GC_HWID,
            0,
            (9, 4, 3),
            &[
                0x1260 + 0 * XCC_STRIDE + 0 * AID_TAG,
                0xa000 + 0 * XCC_STRIDE + 0 * AID_TAG,
                0x1c000 + 0 * XCC_STRIDE + 0 * AID_TAG,
                0x2402c00 + 0 * XCC_STRIDE + 0 * AID_TAG,
            ],
        ),
        IpDesc::new(
            GC_HWID,
            1,
            (9, 4, 3),
            &[
                0x1260 + 1 * XCC_STRIDE + 0 * AID_TAG,
                0xa000 + 1 * XCC_STRIDE + 0 * AID_TAG,
                0x1c000 + 1 * XCC_STRIDE + 0 * AID_TAG,
                0x2402c00 + 1 * XCC_STRIDE + 0 * AID_TAG,
            ],
        ),
        IpDesc::new(
            MP0_HWID,
            0,
            (13, 0, 6),
            &[0x16000, 0xdc0000, 0xe00000, 0xe40000, 0x243fc00],
        ),
        IpDesc::new(
            MP1_HWID,
            0,
            (13, 0, 6),
            &[0x16000, 0x16200, 0xe00000, 0xe40000, 0x243fc00],
        ),
        IpDesc::new(OSSSYS_HWID, 0, (4, 4, 2), &[0x10a0, 0x240a000]),
        IpDesc::new(HDP_HWID, 0, (4, 4, 2), &[0xf20, 0x240a400]),
        IpDesc::new(
            SMUIO_HWID,
            0,
            (13, 0, 3),
            &[0x16800, 0x16a00, 0x440000, 0x243fc00],
        ),
        IpDesc::new(
            NBIF_HWID,
            0,
            (7, 9, 0),
            &[
                0x0 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
                0x14 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
                0xd20 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
                0x10400 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
                0x241b000 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
                0x4040000 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
                0,
                0,
                NBIO_SEG8 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
            ],
        ),
        IpDesc::new(
            MMHUB_HWID,
            0,
            (1, 8, 0),
            &[
                0x1a000 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
                0x2408800 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            0,
            (4, 4, 2),
            &[
                0x4980 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
                0x2406000 + 0 * AID_STRIDE + 0x0 + 0 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            1,
            (4, 4, 2),
            &[
                0x4980 + 0 * AID_STRIDE + 0x400 + 0 * AID_TAG,
                0x2406000 + 0 * AID_STRIDE + 0x400 + 0 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            2,
            (4, 4, 2),
            &[
                0x4980 + 0 * AID_STRIDE + 0x800 + 0 * AID_TAG,
                0x2406000 + 0 * AID_STRIDE + 0x800 + 0 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            3,
            (4, 4, 2),
            &[
                0x4980 + 0 * AID_STRIDE + 0xc00 + 0 * AID_TAG,
                0x2406000 + 0 * AID_STRIDE + 0xc00 + 0 * AID_TAG,
            ],
        ),
        // VCN 4.0.3 on every AID (vcn_v4_0_3.c; 6.12's
        // amdgpu_discovery_set_mm_ip_blocks() refuses a GC 9.4.3 table
        // without one). Bases: model values, clear of every other block.
        IpDesc::new(
            VCN_HWID,
            0,
            (4, 0, 3),
            &[
                0x7800 + 0 * AID_STRIDE + 0 * AID_TAG,
                0x7e00 + 0 * AID_STRIDE + 0 * AID_TAG,
            ],
        ),
    ],
    &[
        IpDesc::new(
            GC_HWID,
            2,
            (9, 4, 3),
            &[
                0x1260 + 2 * XCC_STRIDE + 1 * AID_TAG,
                0xa000 + 2 * XCC_STRIDE + 1 * AID_TAG,
                0x1c000 + 2 * XCC_STRIDE + 1 * AID_TAG,
                0x2402c00 + 2 * XCC_STRIDE + 1 * AID_TAG,
            ],
        ),
        IpDesc::new(
            GC_HWID,
            3,
            (9, 4, 3),
            &[
                0x1260 + 3 * XCC_STRIDE + 1 * AID_TAG,
                0xa000 + 3 * XCC_STRIDE + 1 * AID_TAG,
                0x1c000 + 3 * XCC_STRIDE + 1 * AID_TAG,
                0x2402c00 + 3 * XCC_STRIDE + 1 * AID_TAG,
            ],
        ),
        IpDesc::new(
            NBIF_HWID,
            1,
            (7, 9, 0),
            &[
                0x0 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
                0x14 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
                0xd20 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
                0x10400 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
                0x241b000 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
                0x4040000 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
                0,
                0,
                NBIO_SEG8 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
            ],
        ),
        IpDesc::new(
            MMHUB_HWID,
            1,
            (1, 8, 0),
            &[
                0x1a000 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
                0x2408800 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            4,
            (4, 4, 2),
            &[
                0x4980 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
                0x2406000 + 1 * AID_STRIDE + 0x0 + 1 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            5,
            (4, 4, 2),
            &[
                0x4980 + 1 * AID_STRIDE + 0x400 + 1 * AID_TAG,
                0x2406000 + 1 * AID_STRIDE + 0x400 + 1 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            6,
            (4, 4, 2),
            &[
                0x4980 + 1 * AID_STRIDE + 0x800 + 1 * AID_TAG,
                0x2406000 + 1 * AID_STRIDE + 0x800 + 1 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            7,
            (4, 4, 2),
            &[
                0x4980 + 1 * AID_STRIDE + 0xc00 + 1 * AID_TAG,
                0x2406000 + 1 * AID_STRIDE + 0xc00 + 1 * AID_TAG,
            ],
        ),
        // VCN 4.0.3 on every AID (vcn_v4_0_3.c; 6.12's
        // amdgpu_discovery_set_mm_ip_blocks() refuses a GC 9.4.3 table
        // without one). Bases: model values, clear of every other block.
        IpDesc::new(
            VCN_HWID,
            1,
            (4, 0, 3),
            &[
                0x7800 + 1 * AID_STRIDE + 1 * AID_TAG,
                0x7e00 + 1 * AID_STRIDE + 1 * AID_TAG,
            ],
        ),
    ],
    &[
        IpDesc::new(
            GC_HWID,
            4,
            (9, 4, 3),
            &[
                0x1260 + 4 * XCC_STRIDE + 2 * AID_TAG,
                0xa000 + 4 * XCC_STRIDE + 2 * AID_TAG,
                0x1c000 + 4 * XCC_STRIDE + 2 * AID_TAG,
                0x2402c00 + 4 * XCC_STRIDE + 2 * AID_TAG,
            ],
        ),
        IpDesc::new(
            GC_HWID,
            5,
            (9, 4, 3),
            &[
                0x1260 + 5 * XCC_STRIDE + 2 * AID_TAG,
                0xa000 + 5 * XCC_STRIDE + 2 * AID_TAG,
                0x1c000 + 5 * XCC_STRIDE + 2 * AID_TAG,
                0x2402c00 + 5 * XCC_STRIDE + 2 * AID_TAG,
            ],
        ),
        IpDesc::new(
            NBIF_HWID,
            2,
            (7, 9, 0),
            &[
                0x0 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
                0x14 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
                0xd20 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
                0x10400 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
                0x241b000 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
                0x4040000 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
                0,
                0,
                NBIO_SEG8 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
            ],
        ),
        IpDesc::new(
            MMHUB_HWID,
            2,
            (1, 8, 0),
            &[
                0x1a000 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
                0x2408800 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            8,
            (4, 4, 2),
            &[
                0x4980 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
                0x2406000 + 2 * AID_STRIDE + 0x0 + 2 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            9,
            (4, 4, 2),
            &[
                0x4980 + 2 * AID_STRIDE + 0x400 + 2 * AID_TAG,
                0x2406000 + 2 * AID_STRIDE + 0x400 + 2 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            10,
            (4, 4, 2),
            &[
                0x4980 + 2 * AID_STRIDE + 0x800 + 2 * AID_TAG,
                0x2406000 + 2 * AID_STRIDE + 0x800 + 2 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            11,
            (4, 4, 2),
            &[
                0x4980 + 2 * AID_STRIDE + 0xc00 + 2 * AID_TAG,
                0x2406000 + 2 * AID_STRIDE + 0xc00 + 2 * AID_TAG,
            ],
        ),
        // VCN 4.0.3 on every AID (vcn_v4_0_3.c; 6.12's
        // amdgpu_discovery_set_mm_ip_blocks() refuses a GC 9.4.3 table
        // without one). Bases: model values, clear of every other block.
        IpDesc::new(
            VCN_HWID,
            2,
            (4, 0, 3),
            &[
                0x7800 + 2 * AID_STRIDE + 2 * AID_TAG,
                0x7e00 + 2 * AID_STRIDE + 2 * AID_TAG,
            ],
        ),
    ],
    &[
        IpDesc::new(
            GC_HWID,
            6,
            (9, 4, 3),
            &[
                0x1260 + 6 * XCC_STRIDE + 3 * AID_TAG,
                0xa000 + 6 * XCC_STRIDE + 3 * AID_TAG,
                0x1c000 + 6 * XCC_STRIDE + 3 * AID_TAG,
                0x2402c00 + 6 * XCC_STRIDE + 3 * AID_TAG,
            ],
        ),
        IpDesc::new(
            GC_HWID,
            7,
            (9, 4, 3),
            &[
                0x1260 + 7 * XCC_STRIDE + 3 * AID_TAG,
                0xa000 + 7 * XCC_STRIDE + 3 * AID_TAG,
                0x1c000 + 7 * XCC_STRIDE + 3 * AID_TAG,
                0x2402c00 + 7 * XCC_STRIDE + 3 * AID_TAG,
            ],
        ),
        IpDesc::new(
            NBIF_HWID,
            3,
            (7, 9, 0),
            &[
                0x0 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
                0x14 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
                0xd20 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
                0x10400 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
                0x241b000 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
                0x4040000 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
                0,
                0,
                NBIO_SEG8 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
            ],
        ),
        IpDesc::new(
            MMHUB_HWID,
            3,
            (1, 8, 0),
            &[
                0x1a000 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
                0x2408800 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            12,
            (4, 4, 2),
            &[
                0x4980 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
                0x2406000 + 3 * AID_STRIDE + 0x0 + 3 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            13,
            (4, 4, 2),
            &[
                0x4980 + 3 * AID_STRIDE + 0x400 + 3 * AID_TAG,
                0x2406000 + 3 * AID_STRIDE + 0x400 + 3 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            14,
            (4, 4, 2),
            &[
                0x4980 + 3 * AID_STRIDE + 0x800 + 3 * AID_TAG,
                0x2406000 + 3 * AID_STRIDE + 0x800 + 3 * AID_TAG,
            ],
        ),
        IpDesc::new(
            SDMA0_HWID,
            15,
            (4, 4, 2),
            &[
                0x4980 + 3 * AID_STRIDE + 0xc00 + 3 * AID_TAG,
                0x2406000 + 3 * AID_STRIDE + 0xc00 + 3 * AID_TAG,
            ],
        ),
        // VCN 4.0.3 on every AID (vcn_v4_0_3.c; 6.12's
        // amdgpu_discovery_set_mm_ip_blocks() refuses a GC 9.4.3 table
        // without one). Bases: model values, clear of every other block.
        IpDesc::new(
            VCN_HWID,
            3,
            (4, 0, 3),
            &[
                0x7800 + 3 * AID_STRIDE + 3 * AID_TAG,
                0x7e00 + 3 * AID_STRIDE + 3 * AID_TAG,
            ],
        ),
    ],
];

/// `gc_info_v2_1` of one MI300 XCC. Public: 64-wide waves and 64 KiB of
/// LDS (CDNA3, ROCm's gpu-arch-specs table: "Wavefront Size 64", "LDS
/// (KiB) 64"), 40 CUs per XCD of which 38 are enabled on MI300X (AMD's
/// CDNA3 white paper; ROCm's table: "304 (38 per XCD)"), given here as 4
/// SEs × 1 SH × 10 CUs. Model values: that SE/SH split, the RB count, the
/// TCP and TCC (4 MiB, the table's "L2 Cache 4 per XCD") fields.
pub const MI300_GC: GcV2Desc = GcV2Desc {
    num_se: 4,
    cu_per_sh: 10,
    sh_per_se: 1,
    rb_per_se: 4,
    wave_size: 64,
    lds_size: 64,
    num_tcp_per_sh: 10,
    tcc_size: 4096,
};

/// MI300X: 8 XCCs on 4 AIDs, nothing harvested (the harvest table is
/// present and empty).
pub const MI300X: PartDesc = PartDesc {
    name: "mi300x-model",
    table_version: 4,
    base_64: true,
    dies: MI300_DIES,
    gc: None,
    gc_v2: Some(MI300_GC),
    harvested: &[],
};

/// MI308X: the same dies with GC instances 1, 3, 5 and 7 in the harvest
/// table, leaving one XCC per AID (physical 0, 2, 4, 6): four XCCs, which
/// with 20 CUs each give the 80 CUs the seeds' MI308X reports. The XCC
/// count is public only indirectly (ROCm/rocMLIR PR 2197: "MI308 CPX mode
/// has 20 CU only", and CPX gives each XCC its own partition, so 80 / 20 =
/// 4 XCCs); which physical XCCs are fused off is a **model value**.
pub const MI308X: PartDesc = PartDesc {
    name: "mi308x-model",
    table_version: 4,
    base_64: true,
    dies: MI300_DIES,
    gc: None,
    gc_v2: Some(MI300_GC),
    harvested: &[(GC_HWID, 1), (GC_HWID, 3), (GC_HWID, 5), (GC_HWID, 7)],
};

/// An Aldebaran's IPs (MI210: GC 9.4.2) with the bases of
/// `aldebaran_ip_offset.h` (public, model facts [`ALDEBARAN_FACTS`]) and
/// the versions of the `CHIP_ALDEBARAN` case of `amdgpu_discovery.c`,
/// written here by hand for the model. Linux reads this part's table
/// only for sysfs and takes the same list from the chip instead
/// (`aldebaran_reg_base_init()`); the table the model writes from it is
/// therefore unchecked by any driver, and its header fields (version 1,
/// 32-bit bases, no GC table) are **model values**.
pub const ALDEBARAN_DIE: &[IpDesc] = &[
    IpDesc::new(GC_HWID, 0, (9, 4, 2), &[0x2000, 0xA000, 0x240_2C00]),
    IpDesc::new(HDP_HWID, 0, (4, 4, 0), &[0xF20, 0x240_A400]),
    IpDesc::new(MMHUB_HWID, 0, (9, 4, 2), &[0x1_A000, 0x240_8800]),
    IpDesc::new(
        NBIF_HWID,
        0,
        (7, 4, 4),
        &[0x0, 0x14, 0xD20, 0x1_0400, 0x241_B000, 0x404_0000],
    ),
    IpDesc::new(
        MP0_HWID,
        0,
        (13, 0, 2),
        &[0x1_6000, 0xDC_0000, 0xE0_0000, 0xE4_0000, 0x243_FC00],
    ),
    IpDesc::new(
        MP1_HWID,
        0,
        (13, 0, 2),
        &[0x1_6000, 0xDC_0000, 0xE0_0000, 0xE4_0000, 0x243_FC00],
    ),
    IpDesc::new(OSSSYS_HWID, 0, (4, 4, 0), &[0x10A0, 0x240_A000]),
    IpDesc::new(SDMA0_HWID, 0, (4, 4, 0), &[0x1260, 0x1_2540, 0x40_A800]),
    IpDesc::new(SDMA0_HWID, 1, (4, 4, 0), &[0x1860, 0x1_2560, 0x40_AC00]),
    IpDesc::new(SDMA0_HWID, 2, (4, 4, 0), &[0x1_3760, 0x1_E000, 0x42_EC00]),
    IpDesc::new(SDMA0_HWID, 3, (4, 4, 0), &[0x1_3780, 0x1_E400, 0x42_F000]),
    IpDesc::new(SDMA0_HWID, 4, (4, 4, 0), &[0x1_37A0, 0x1_E800, 0x42_F400]),
    IpDesc::new(
        SMUIO_HWID,
        0,
        (13, 0, 2),
        &[0x1_6800, 0x1_6A00, 0x240_1000, 0x344_0000],
    ),
    IpDesc::new(VCN_HWID, 0, (2, 6, 0), &[0x7800, 0x7E00, 0x240_3000]),
    IpDesc::new(VCN_HWID, 1, (2, 6, 0), &[0x7A00, 0x9000, 0x244_5000]),
];

/// MI210 (Aldebaran, one XCC).
pub const MI210: PartDesc = PartDesc {
    name: "mi210-model",
    table_version: 1,
    base_64: false,
    dies: &[ALDEBARAN_DIE],
    gc: None,
    gc_v2: None,
    harvested: &[],
};

/// Segments 0 and 1 of the blocks [`ALDEBARAN_DIE`] lists, against
/// `aldebaran_ip_offset.h` (the runtime checks every segment of its own
/// copy).
pub const ALDEBARAN_FACTS: &[barebell_facts::Fact] = &{
    const H: &str = "aldebaran_ip_offset.h";
    const PROBES: [[&str; 2]; 15] = [
        [
            "GC_BASE.instance[0].segment[0]",
            "GC_BASE.instance[0].segment[1]",
        ],
        [
            "HDP_BASE.instance[0].segment[0]",
            "HDP_BASE.instance[0].segment[1]",
        ],
        [
            "MMHUB_BASE.instance[0].segment[0]",
            "MMHUB_BASE.instance[0].segment[1]",
        ],
        [
            "NBIO_BASE.instance[0].segment[0]",
            "NBIO_BASE.instance[0].segment[1]",
        ],
        [
            "MP0_BASE.instance[0].segment[0]",
            "MP0_BASE.instance[0].segment[1]",
        ],
        [
            "MP1_BASE.instance[0].segment[0]",
            "MP1_BASE.instance[0].segment[1]",
        ],
        [
            "OSSSYS_BASE.instance[0].segment[0]",
            "OSSSYS_BASE.instance[0].segment[1]",
        ],
        [
            "SDMA0_BASE.instance[0].segment[0]",
            "SDMA0_BASE.instance[0].segment[1]",
        ],
        [
            "SDMA1_BASE.instance[0].segment[0]",
            "SDMA1_BASE.instance[0].segment[1]",
        ],
        [
            "SDMA2_BASE.instance[0].segment[0]",
            "SDMA2_BASE.instance[0].segment[1]",
        ],
        [
            "SDMA3_BASE.instance[0].segment[0]",
            "SDMA3_BASE.instance[0].segment[1]",
        ],
        [
            "SDMA4_BASE.instance[0].segment[0]",
            "SDMA4_BASE.instance[0].segment[1]",
        ],
        [
            "SMUIO_BASE.instance[0].segment[0]",
            "SMUIO_BASE.instance[0].segment[1]",
        ],
        [
            "VCN_BASE.instance[0].segment[0]",
            "VCN_BASE.instance[0].segment[1]",
        ],
        [
            "VCN_BASE.instance[1].segment[0]",
            "VCN_BASE.instance[1].segment[1]",
        ],
    ];
    let mut out = [barebell_facts::Fact::constant(H, "0", 0); 30];
    let mut i = 0;
    while i < 15 {
        let bases = ALDEBARAN_DIE[i].bases;
        out[2 * i] = barebell_facts::Fact::constant(H, PROBES[i][0], bases[0]);
        out[2 * i + 1] = barebell_facts::Fact::constant(H, PROBES[i][1], bases[1]);
        i += 1;
    }
    out
};

// Writes past the table's end are dropped (never a panic): a
// description too big for [`TABLE_BYTES`] shows in `Layout::binary_size`,
// which `VirtualGpu::new` refuses.
fn put16(b: &mut [u8], at: usize, v: u16) {
    if let Some(d) = b.get_mut(at..at + 2) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}
fn put32(b: &mut [u8], at: usize, v: u32) {
    if let Some(d) = b.get_mut(at..at + 4) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}
fn put8(b: &mut [u8], at: usize, v: u8) {
    if let Some(d) = b.get_mut(at) {
        *d = v;
    }
}
fn get16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(&[lo, hi]) => u16::from_le_bytes([lo, hi]),
        _ => 0,
    }
}

fn sum(b: &[u8]) -> u16 {
    b.iter().fold(0u16, |a, x| a.wrapping_add(u16::from(*x)))
}

/// Byte offsets inside a built binary, for tests that corrupt it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub ip_table: usize,
    pub ip_table_size: usize,
    pub first_die: usize,
    pub gc_table: usize,
    pub harvest_table: usize,
    pub binary_size: usize,
}

// Offsets in `binary_header`: signature 0, checksum 8, size 10,
// table_list at 12 (8 bytes each: offset, checksum, size, padding).
const BIN_CHECKSUM: usize = 8;
const BIN_SIZE: usize = 10;
const TABLE_LIST: usize = 12;
const IP_HEADER_BYTES: usize = 80;
const GC_V1_0_BYTES: usize = 88;
/// `sizeof(struct gc_info_v2_1)`: the header, 17 v2.0 fields, 7 more.
const GC_V2_1_BYTES: usize = 12 + 24 * 4;
const HARVEST_BYTES: usize = 136;

/// Writes the binary for `d`, padded to [`TABLE_BYTES`].
/// `ip_discovery_header.die_info` has room for [`MAX_DIES`] dies; later
/// ones are left out (and `VirtualGpu::new` refuses such a part).
pub fn build(d: &PartDesc) -> (Vec<u8>, Layout) {
    let mut b = vec![0u8; TABLE_BYTES];
    let ip_table = 64;
    let mut at = ip_table + IP_HEADER_BYTES;
    let wide = d.table_version >= 4 && d.base_64;
    let mut first_die = 0;
    for (i, die) in d.dies.iter().take(MAX_DIES).enumerate() {
        if i == 0 {
            first_die = at;
        }
        put16(&mut b, ip_table + 14 + 4 * i, i as u16); // die_info[i].die_id
        put16(&mut b, ip_table + 16 + 4 * i, at as u16); // .die_offset
        put16(&mut b, at, i as u16);
        put16(&mut b, at + 2, die.len() as u16);
        at += 4;
        for ip in die.iter() {
            put16(&mut b, at, ip.hw_id);
            put8(&mut b, at + 2, ip.instance);
            put8(&mut b, at + 3, ip.bases.len() as u8);
            put8(&mut b, at + 4, ip.version.0);
            put8(&mut b, at + 5, ip.version.1);
            put8(&mut b, at + 6, ip.version.2);
            put8(
                &mut b,
                at + 7,
                if d.table_version >= 3 {
                    (ip.variant << 4) | (ip.sub_revision & 0xF)
                } else {
                    ip.harvest & 0xF
                },
            );
            at += 8;
            for base in ip.bases {
                if wide {
                    if let Some(d) = b.get_mut(at..at + 8) {
                        d.copy_from_slice(&base.to_le_bytes());
                    }
                    at += 8;
                } else {
                    put32(&mut b, at, *base as u32);
                    at += 4;
                }
            }
        }
    }
    let ip_table_size = at - ip_table;
    put32(&mut b, ip_table, IPDS);
    put16(&mut b, ip_table + 4, d.table_version);
    put16(&mut b, ip_table + 6, ip_table_size as u16);
    put16(&mut b, ip_table + 12, d.dies.len() as u16);
    if wide {
        put8(&mut b, ip_table + 78, 1);
    }

    at = at.next_multiple_of(8);
    let mut gc_table = 0;
    if let Some(g) = d.gc {
        gc_table = at;
        put32(&mut b, at, GC_TABLE_ID);
        put16(&mut b, at + 4, 1);
        put16(&mut b, at + 6, 0);
        put32(&mut b, at + 8, GC_V1_0_BYTES as u32);
        let f = at + 12;
        put32(&mut b, f, g.num_se);
        put32(&mut b, f + 4, g.wgp0_per_sa);
        put32(&mut b, f + 8, g.wgp1_per_sa);
        put32(&mut b, f + 12, g.rb_per_se);
        put32(&mut b, f + 44, g.wave_size); // gc_wave_size: 12th field
        // gc_max_waves_per_simd (13th) and gc_max_scratch_slots_per_cu
        // (14th): **model values** (16 and 32, what KFD topology reports
        // for gfx11 boards, unverified against a Navi31 table). tinygrad's
        // AMDDevice sizes its scratch from the second
        // (`_ensure_has_local_memory`: 0 slots makes a 0-byte buffer it
        // refuses) and its wave count from the first.
        put32(&mut b, f + 48, GC_MAX_WAVES_PER_SIMD);
        put32(&mut b, f + 52, GC_MAX_SCRATCH_SLOTS_PER_CU);
        put32(&mut b, f + 56, g.lds_size); // gc_lds_size: 15th
        put32(&mut b, f + 64, g.sa_per_se); // gc_num_sa_per_se: 17th
        at += GC_V1_0_BYTES;
    }
    let mut gc_bytes = GC_V1_0_BYTES;
    if let Some(g) = d.gc_v2 {
        gc_table = at;
        gc_bytes = GC_V2_1_BYTES;
        put32(&mut b, at, GC_TABLE_ID);
        put16(&mut b, at + 4, 2);
        put16(&mut b, at + 6, 1);
        put32(&mut b, at + 8, GC_V2_1_BYTES as u32);
        // Field k (0-based) of gc_info_v2_1 at 12 + 4k.
        let f = |k: usize| at + 12 + 4 * k;
        put32(&mut b, f(0), g.num_se); // gc_num_se
        put32(&mut b, f(1), g.cu_per_sh); // gc_num_cu_per_sh
        put32(&mut b, f(2), g.sh_per_se); // gc_num_sh_per_se
        put32(&mut b, f(3), g.rb_per_se); // gc_num_rb_per_se
        put32(&mut b, f(11), g.wave_size); // gc_wave_size
        // gc_max_waves_per_simd, gc_max_scratch_slots_per_cu: **model
        // values** (8 waves per SIMD on CDNA3, 32 slots, unverified
        // against an MI300 table); tinygrad sizes its scratch from the
        // slots (0 makes a 0-byte buffer it refuses).
        put32(&mut b, f(12), GC_V2_MAX_WAVES_PER_SIMD);
        put32(&mut b, f(13), GC_MAX_SCRATCH_SLOTS_PER_CU);
        put32(&mut b, f(14), g.lds_size); // gc_lds_size
        put32(&mut b, f(17), g.num_tcp_per_sh); // gc_num_tcp_per_sh
        put32(&mut b, f(23), g.tcc_size); // gc_tcc_size
        at += GC_V2_1_BYTES;
    }
    let harvest_table = at;
    put32(&mut b, at, HARVEST_SIGNATURE);
    put32(&mut b, at + 4, 1);
    for (i, (hw, inst)) in d.harvested.iter().enumerate() {
        put16(&mut b, at + 8 + 4 * i, *hw);
        put8(&mut b, at + 10 + 4 * i, *inst);
    }
    at += HARVEST_BYTES;
    let binary_size = at;

    put32(&mut b, 0, BINARY_SIGNATURE);
    put16(&mut b, 4, 1);
    put16(&mut b, BIN_SIZE, binary_size as u16);
    put16(&mut b, TABLE_LIST, ip_table as u16);
    put16(&mut b, TABLE_LIST + 4, ip_table_size as u16);
    if gc_table != 0 {
        put16(&mut b, TABLE_LIST + 8, gc_table as u16);
        put16(&mut b, TABLE_LIST + 12, gc_bytes as u16);
    }
    put16(&mut b, TABLE_LIST + 16, harvest_table as u16);
    put16(&mut b, TABLE_LIST + 20, HARVEST_BYTES as u16);
    let layout = Layout {
        ip_table,
        ip_table_size,
        first_die,
        gc_table,
        harvest_table,
        binary_size,
    };
    refresh_checksums(&mut b);
    (b, layout)
}

/// Recomputes every table checksum and then the binary checksum from the
/// sizes recorded in the binary, so a test can corrupt a count or offset
/// and still get past the checksum checks to the check it targets.
/// Inputs too short for a `binary_header` (60 bytes) are left alone.
pub fn refresh_checksums(b: &mut [u8]) {
    if b.len() < TABLE_LIST + 8 * 6 {
        return;
    }
    for t in 0..3 {
        let e = TABLE_LIST + 8 * t;
        let off = usize::from(get16(b, e));
        let size = usize::from(get16(b, e + 4));
        if off != 0 && off + size <= b.len() {
            let s = sum(&b[off..off + size]);
            put16(b, e + 2, s);
        }
    }
    let size = usize::from(get16(b, BIN_SIZE)).min(b.len());
    if size > BIN_SIZE {
        let s = sum(&b[BIN_SIZE..size]);
        put16(b, BIN_CHECKSUM, s);
    }
}

/// The card as the driver first sees it: the IFWI-done bit in
/// C2PMSG_33, the VRAM size in `RCC_CONFIG_MEMSIZE`, and VRAM reachable
/// through the `MM_INDEX`/`MM_INDEX_HI`/`MM_DATA` window, with the
/// discovery binary 64 KiB below the top (`amdgpu_discovery.c`). Only the
/// table's bytes are stored; the rest of VRAM reads as zero.
///
/// The window refuses what real hardware would not do: an `MM_INDEX`
/// write without bit 31 selects register space, not memory, and is
/// logged as a refusal; data reads then return 0.
#[derive(Debug)]
pub struct VramWindow {
    clock: crate::SimClock,
    table: Vec<u8>,
    table_at: u64,
    vram_mib: u32,
    state: spin::Mutex<WindowState>,
}

#[derive(Debug, Default)]
struct WindowState {
    index: u32,
    index_hi: u32,
    unplugged: bool,
    refusals: u32,
}

/// Absolute byte offsets of the boot registers (dword offsets 0x0, 0x1,
/// 0x6, 0xde3 and 0x16061 in `amdgpu_discovery.c`, times 4).
pub const MM_INDEX: usize = 0;
pub const MM_DATA: usize = 4;
pub const MM_INDEX_HI: usize = 0x6 * 4;
pub const RCC_CONFIG_MEMSIZE: usize = 0xde3 * 4;
pub const MP0_SMN_C2PMSG_33: usize = 0x16061 * 4;
/// All of them, for routing.
pub const BOOT_REGS: [usize; 5] = [
    MM_INDEX,
    MM_DATA,
    MM_INDEX_HI,
    RCC_CONFIG_MEMSIZE,
    MP0_SMN_C2PMSG_33,
];

impl VramWindow {
    /// `table` goes at `vram_mib` MiB − 64 KiB.
    pub fn new(clock: &crate::SimClock, vram_mib: u32, table: Vec<u8>) -> Self {
        let table_at = (u64::from(vram_mib) << 20).saturating_sub(64 << 10);
        VramWindow {
            clock: clock.clone(),
            table,
            table_at,
            vram_mib,
            state: spin::Mutex::new(WindowState::default()),
        }
    }

    pub fn unplug(&self) {
        self.state.lock().unplugged = true;
    }

    /// `MM_INDEX` writes without the memory-select bit.
    pub fn refusals(&self) -> u32 {
        self.state.lock().refusals
    }

    fn vram_dword(&self, addr: u64) -> u32 {
        let Some(off) = addr.checked_sub(self.table_at) else {
            return 0;
        };
        let off = off as usize;
        match self.table.get(off..off + 4) {
            Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            None => 0,
        }
    }
}

impl barebell::bus::RegisterBus for VramWindow {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.clock.advance(crate::regfile::ACCESS_NS);
        let s = self.state.lock();
        if s.unplugged {
            return barebell::bus::ALL_ONES;
        }
        match byte_offset {
            MP0_SMN_C2PMSG_33 => 0x8000_0000,
            RCC_CONFIG_MEMSIZE => self.vram_mib,
            MM_INDEX => s.index,
            MM_INDEX_HI => s.index_hi,
            MM_DATA => {
                if s.index & 0x8000_0000 == 0 {
                    return 0;
                }
                let addr = u64::from(s.index_hi) << 31 | u64::from(s.index & 0x7FFF_FFFF);
                self.vram_dword(addr)
            }
            _ => 0,
        }
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.clock.advance(crate::regfile::ACCESS_NS);
        let mut s = self.state.lock();
        if s.unplugged {
            return;
        }
        match byte_offset {
            MM_INDEX => {
                if value & 0x8000_0000 == 0 {
                    s.refusals += 1;
                }
                s.index = value;
            }
            MM_INDEX_HI => s.index_hi = value,
            _ => {}
        }
    }
}

/// An IP version as a discovery table entry gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartIpVersion {
    pub major: u8,
    pub minor: u8,
    pub revision: u8,
    pub variant: u8,
    pub sub_revision: u8,
}

impl PartIpVersion {
    /// `(major, minor, revision)`.
    pub fn triple(&self) -> (u8, u8, u8) {
        (self.major, self.minor, self.revision)
    }
}

/// One IP entry of a part, as a driver would read it from the table the
/// model writes: the model's own type (it shares no decoding with the
/// runtime), with the runtime's [`barebell::regs::IpBases`] so it can name
/// registers from the runtime's offset tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartIp {
    pub die: u16,
    pub hw_id: u16,
    pub instance: u8,
    pub version: PartIpVersion,
    /// The harvest nibble (table versions below 3).
    pub harvest: u8,
    pub bases: barebell::regs::IpBases,
    pub num_bases: u8,
}

/// The IP instances a part description declares, as a driver reads them
/// from the table [`build`] writes: the model knows its own part, so it
/// never parses its table back (with the runtime's parser or any other).
/// Bases as Linux keeps them (`amdgpu_discovery_reg_base_init()`): a
/// 64-bit table's low 30 bits, a 32-bit table's word; table versions
/// below 3 carry the harvest nibble where later ones carry the variant
/// and sub-revision.
#[derive(Debug, Clone, Copy)]
pub struct PartIps<'a> {
    desc: &'a PartDesc,
}

impl<'a> PartIps<'a> {
    pub fn new(desc: &'a PartDesc) -> Self {
        PartIps { desc }
    }

    /// Calls `f` on every IP entry, in table order (die by die).
    pub fn for_each_ip(&self, mut f: impl FnMut(PartIp)) {
        for (die, ips) in self.desc.dies.iter().enumerate() {
            for ip in ips.iter() {
                f(self.info(die as u16, ip));
            }
        }
    }

    /// `(hw_id, instance)`; the last entry wins where a multi-die part
    /// lists the pair twice, as in `amdgpu_discovery_reg_base_init()`.
    pub fn ip(&self, hw_id: u16, instance: u8) -> Option<PartIp> {
        let mut found = None;
        self.for_each_ip(|i| {
            if i.hw_id == hw_id && i.instance == instance {
                found = Some(i);
            }
        });
        found
    }

    fn info(&self, die: u16, ip: &IpDesc) -> PartIp {
        let wide = self.desc.table_version >= 4 && self.desc.base_64;
        let mut bases = [0u32; barebell::regs::MAX_SEGMENTS];
        for (o, v) in bases.iter_mut().zip(ip.bases) {
            *o = if wide {
                (*v as u32) & 0x3FFF_FFFF
            } else {
                *v as u32
            };
        }
        let v3 = self.desc.table_version >= 3;
        PartIp {
            die,
            hw_id: ip.hw_id,
            instance: ip.instance,
            version: PartIpVersion {
                major: ip.version.0,
                minor: ip.version.1,
                revision: ip.version.2,
                variant: if v3 { ip.variant & 0xF } else { 0 },
                sub_revision: if v3 { ip.sub_revision & 0xF } else { 0 },
            },
            harvest: if v3 { 0 } else { ip.harvest & 0xF },
            bases: barebell::regs::IpBases(bases),
            num_bases: ip.bases.len() as u8,
        }
    }
}

#[cfg(test)]
mod part_ips_tests {
    use super::{PartIps, build};
    use alloc::vec::Vec;

    /// Two independent readings of one part: the description the model
    /// holds, and the table it writes read back by the runtime's parser
    /// (as a driver would). They must agree on every entry.
    #[test]
    fn the_description_and_the_written_table_agree_on_every_part() {
        for part in [
            crate::parts::navi31(),
            crate::parts::navi48(),
            crate::parts::mi300x(),
            crate::parts::mi308x(),
        ] {
            let desc = &part.firmware.desc;
            let (table, _) = build(desc);
            let d = barebell::discovery::Discovery::parse(&table).unwrap();
            let mut parsed = Vec::new();
            d.for_each_ip(|i| {
                let v = i.version;
                parsed.push((
                    (i.die, i.hw_id, i.instance, i.harvest, i.num_bases),
                    (v.major, v.minor, v.revision, v.variant, v.sub_revision),
                    i.bases,
                ))
            });
            let mut ours = Vec::new();
            PartIps::new(desc).for_each_ip(|i| {
                let v = i.version;
                ours.push((
                    (i.die, i.hw_id, i.instance, i.harvest, i.num_bases),
                    (v.major, v.minor, v.revision, v.variant, v.sub_revision),
                    i.bases,
                ))
            });
            assert!(!ours.is_empty(), "{}", part.name);
            assert_eq!(ours, parsed, "{}", part.name);
        }
    }
}
