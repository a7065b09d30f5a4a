//! The IP discovery table (`include/discovery.h`): which IP blocks a part
//! has, at which versions, and where their register segments start.
//!
//! Since Navi1x, an amdgpu part describes itself: the firmware leaves a
//! 10 KiB table ([`TABLE_BYTES`]) 64 KiB below the top of VRAM
//! ([`TMR_OFFSET`]). Nothing else tells the driver the register bases of
//! a SOC21 (gfx11) or gfx12 part — Linux 6.12 has no `*_ip_offset.h` for
//! them — so every register access in bring-up depends on this parse.
//!
//! The table is untrusted input read from device memory, so it is handled
//! the smoltcp way: a view over `&[u8]`, every offset and count checked
//! against the slice before it is followed, typed errors naming the field.
//! [`Discovery::parse`] performs the checks `amdgpu_discovery_init()` does
//! (binary signature, byte-sum checksums of the binary and of each table)
//! and then walks every die and IP entry once, as
//! `amdgpu_discovery_reg_base_init()` does, so that the accessors that
//! follow cannot fail.

use crate::regs::IpBases;
use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, LittleEndian, U16, U32, U64};

type Le16 = U16<LittleEndian>;
type Le32 = U32<LittleEndian>;
type Le64 = U64<LittleEndian>;

/// `BINARY_SIGNATURE`: the first dword of the binary.
pub const BINARY_SIGNATURE: u32 = 0x2821_1407;
/// `DISCOVERY_TABLE_SIGNATURE` ("IPDS" little-endian).
pub const DISCOVERY_TABLE_SIGNATURE: u32 = 0x5344_5049;
/// `GC_TABLE_ID` ("GC").
pub const GC_TABLE_ID: u32 = 0x4347;
/// `HARVEST_TABLE_SIGNATURE` ("HARV").
pub const HARVEST_TABLE_SIGNATURE: u32 = 0x5652_4148;
/// `VCN_INFO_TABLE_ID` ("VCN").
pub const VCN_INFO_TABLE_ID: u32 = 0x004E_4356;
/// `DISCOVERY_TMR_SIZE` (`amdgpu_discovery.h`): bytes read from VRAM.
pub const TABLE_BYTES: usize = 10 << 10;
/// `DISCOVERY_TMR_OFFSET`: the table sits this far below the top of VRAM.
pub const TMR_OFFSET: u64 = 64 << 10;
/// `HWIP_MAX_INSTANCE` (`amdgpu.h`): entries with a larger instance number
/// are skipped, as `amdgpu_discovery_validate_ip()` skips them.
pub const MAX_INSTANCE: u8 = 44;
/// `HW_ID_MAX` (`amdgpu.h`): entries with a larger hardware id are skipped.
pub const HW_ID_MAX: u16 = 300;
/// Bases kept per IP instance. Linux keeps a pointer to the whole list;
/// no register header in 6.12 uses a `BASE_IDX` above 8, and [`IpBases`]
/// holds [`crate::regs::MAX_SEGMENTS`], so further bases are counted
/// (`IpInfo::num_bases`) but not stored.
pub const MAX_BASES: usize = crate::regs::MAX_SEGMENTS;

/// Index of each table in `binary_header.table_list` (`enum table`).
pub mod aldebaran;

pub mod table {
    pub const IP_DISCOVERY: usize = 0;
    pub const GC: usize = 1;
    pub const HARVEST_INFO: usize = 2;
    pub const VCN_INFO: usize = 3;
    pub const MALL_INFO: usize = 4;
    pub const NPS_INFO: usize = 5;
    pub const TOTAL_TABLES: usize = 6;
}

pub use crate::ip::hw_id;

/// `struct table_info`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct TableInfo {
    pub offset: Le16,
    pub checksum: Le16,
    pub size: Le16,
    pub padding: Le16,
}
const _: () = assert!(core::mem::size_of::<TableInfo>() == 8);

/// `struct binary_header`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct BinaryHeader {
    pub binary_signature: Le32,
    pub version_major: Le16,
    pub version_minor: Le16,
    pub binary_checksum: Le16,
    pub binary_size: Le16,
    pub table_list: [TableInfo; table::TOTAL_TABLES],
}
const _: () = assert!(core::mem::size_of::<BinaryHeader>() == 60);

/// The binary checksum covers everything after its own field.
pub const BINARY_CHECKSUM_START: usize = core::mem::offset_of!(BinaryHeader, binary_size);

/// `struct die_info`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct DieInfo {
    pub die_id: Le16,
    pub die_offset: Le16,
}

/// `struct ip_discovery_header`. The last two bytes are `padding` up to
/// table version 3; version 4 puts `base_addr_64_bit` in bit 0 of
/// [`IpDiscoveryHeader::flags`].
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct IpDiscoveryHeader {
    pub signature: Le32,
    pub version: Le16,
    pub size: Le16,
    pub id: Le32,
    pub num_dies: Le16,
    pub die_info: [DieInfo; 16],
    pub flags: u8,
    pub reserved2: u8,
}
const _: () = assert!(core::mem::size_of::<IpDiscoveryHeader>() == 80);

/// `struct die_header`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct DieHeader {
    pub die_id: Le16,
    pub num_ips: Le16,
}

/// The fixed 8 bytes of `struct ip` / `ip_v3` / `ip_v4`; the base list
/// follows. Byte 7 is `harvest` in its low nibble for table versions
/// below 3, and `sub_revision` (low) / `variant` (high) from version 3.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct IpHeader {
    pub hw_id: Le16,
    pub instance_number: u8,
    pub num_base_address: u8,
    pub major: u8,
    pub minor: u8,
    pub revision: u8,
    pub nibbles: u8,
}
const _: () = assert!(core::mem::size_of::<IpHeader>() == 8);

/// `struct gpu_info_header`, which starts the GC table.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GpuInfoHeader {
    pub table_id: Le32,
    pub version_major: Le16,
    pub version_minor: Le16,
    pub size: Le32,
}

/// `struct gc_info_v1_0` (SOC21 and gfx12 parts report v1.x).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GcInfoV1_0 {
    pub header: GpuInfoHeader,
    pub gc_num_se: Le32,
    pub gc_num_wgp0_per_sa: Le32,
    pub gc_num_wgp1_per_sa: Le32,
    pub gc_num_rb_per_se: Le32,
    pub gc_num_gl2c: Le32,
    pub gc_num_gprs: Le32,
    pub gc_num_max_gs_thds: Le32,
    pub gc_gs_table_depth: Le32,
    pub gc_gsprim_buff_depth: Le32,
    pub gc_parameter_cache_depth: Le32,
    pub gc_double_offchip_lds_buffer: Le32,
    pub gc_wave_size: Le32,
    pub gc_max_waves_per_simd: Le32,
    pub gc_max_scratch_slots_per_cu: Le32,
    pub gc_lds_size: Le32,
    pub gc_num_sc_per_se: Le32,
    pub gc_num_sa_per_se: Le32,
    pub gc_num_packer_per_sc: Le32,
    pub gc_num_gl2a: Le32,
}
const _: () = assert!(core::mem::size_of::<GcInfoV1_0>() == 88);

/// `struct gc_info_v2_0` (gfx9.4.x parts).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GcInfoV2_0 {
    pub header: GpuInfoHeader,
    pub gc_num_se: Le32,
    pub gc_num_cu_per_sh: Le32,
    pub gc_num_sh_per_se: Le32,
    pub gc_num_rb_per_se: Le32,
    pub gc_num_tccs: Le32,
    pub gc_num_gprs: Le32,
    pub gc_num_max_gs_thds: Le32,
    pub gc_gs_table_depth: Le32,
    pub gc_gsprim_buff_depth: Le32,
    pub gc_parameter_cache_depth: Le32,
    pub gc_double_offchip_lds_buffer: Le32,
    pub gc_wave_size: Le32,
    pub gc_max_waves_per_simd: Le32,
    pub gc_max_scratch_slots_per_cu: Le32,
    pub gc_lds_size: Le32,
    pub gc_num_sc_per_se: Le32,
    pub gc_num_packer_per_sc: Le32,
}
const _: () = assert!(core::mem::size_of::<GcInfoV2_0>() == 80);

/// `struct gc_info_v2_1` (GC 9.4.3): v2.0 and seven fields more, the
/// per-XCD cache sizes Linux reads when `version_minor == 1`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GcInfoV2_1 {
    pub v2_0: GcInfoV2_0,
    pub gc_num_tcp_per_sh: Le32,
    pub gc_tcp_size_per_cu: Le32,
    pub gc_num_sdp_interface: Le32,
    pub gc_num_cu_per_sqc: Le32,
    pub gc_instruction_cache_size_per_sqc: Le32,
    pub gc_scalar_data_cache_size_per_sqc: Le32,
    pub gc_tcc_size: Le32,
}
const _: () = assert!(core::mem::size_of::<GcInfoV2_1>() == 108);

/// `struct harvest_info_header`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct HarvestInfoHeader {
    pub signature: Le32,
    pub version: Le32,
}

/// `struct harvest_info`: one disabled IP instance.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct HarvestInfo {
    pub hw_id: Le16,
    pub number_instance: u8,
    pub reserved: u8,
}

/// `struct harvest_table`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct HarvestTable {
    pub header: HarvestInfoHeader,
    pub list: [HarvestInfo; 32],
}
const _: () = assert!(core::mem::size_of::<HarvestTable>() == 136);

/// `struct vcn_info_header`: only its id and size are checked here.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct VcnInfoHeader {
    pub table_id: Le32,
    pub version_major: Le16,
    pub version_minor: Le16,
    pub size_bytes: Le32,
}

/// Why a discovery binary was rejected. Each variant names the structure
/// or field and carries the values that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// A structure (or a range a field points at) does not fit.
    OutOfBounds {
        what: &'static str,
        offset: usize,
        len: usize,
        have: usize,
    },
    /// A signature or table id is wrong.
    BadSignature {
        what: &'static str,
        found: u32,
        expected: u32,
    },
    /// A byte-sum checksum disagrees.
    BadChecksum {
        what: &'static str,
        computed: u16,
        stored: u16,
    },
    /// A count exceeds what its array holds.
    BadCount {
        what: &'static str,
        value: usize,
        limit: usize,
    },
    /// A die header's id is not its index (`amdgpu_discovery_reg_base_init()`).
    DieIdMismatch { index: u16, found: u16 },
    /// The file has no IP discovery table at all.
    NoIpTable,
    /// A GC table header version this parser does not decode.
    UnknownGcInfo { major: u16, minor: u16 },
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Error::OutOfBounds {
                what,
                offset,
                len,
                have,
            } => write!(
                f,
                "{what}: range {offset:#x}+{len:#x} lies outside the {have}-byte binary"
            ),
            Error::BadSignature {
                what,
                found,
                expected,
            } => write!(f, "{what} is {found:#010x}, expected {expected:#010x}"),
            Error::BadChecksum {
                what,
                computed,
                stored,
            } => write!(
                f,
                "{what} checksum: bytes sum to {computed:#06x}, table says {stored:#06x}"
            ),
            Error::BadCount { what, value, limit } => {
                write!(f, "{what} = {value} exceeds {limit}")
            }
            Error::DieIdMismatch { index, found } => {
                write!(f, "die header {index} carries die id {found}")
            }
            Error::NoIpTable => write!(f, "binary has no IP discovery table"),
            Error::UnknownGcInfo { major, minor } => {
                write!(f, "GC info table v{major}.{minor} is not decoded")
            }
        }
    }
}

/// The 16-bit byte sum `amdgpu_discovery_calculate_checksum()` computes.
pub fn byte_sum(bytes: &[u8]) -> u16 {
    bytes
        .iter()
        .fold(0u16, |acc, b| acc.wrapping_add(u16::from(*b)))
}

fn range<'a>(
    bytes: &'a [u8],
    what: &'static str,
    offset: usize,
    len: usize,
) -> Result<&'a [u8], Error> {
    let err = Error::OutOfBounds {
        what,
        offset,
        len,
        have: bytes.len(),
    };
    let end = offset.checked_add(len).ok_or(err)?;
    bytes.get(offset..end).ok_or(err)
}

fn view<'a, T: FromBytes + KnownLayout + Immutable>(
    bytes: &'a [u8],
    what: &'static str,
    offset: usize,
) -> Result<&'a T, Error> {
    let s = range(bytes, what, offset, core::mem::size_of::<T>())?;
    T::ref_from_bytes(s).map_err(|_| Error::OutOfBounds {
        what,
        offset,
        len: core::mem::size_of::<T>(),
        have: bytes.len(),
    })
}

fn check_sum(
    bytes: &[u8],
    what: &'static str,
    offset: usize,
    len: usize,
    stored: u16,
) -> Result<(), Error> {
    let computed = byte_sum(range(bytes, what, offset, len)?);
    if computed != stored {
        return Err(Error::BadChecksum {
            what,
            computed,
            stored,
        });
    }
    Ok(())
}

/// An IP version as `IP_VERSION_FULL()` packs it. `variant` and
/// `sub_revision` are zero for table versions below 3, as in Linux.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct IpVersion {
    pub major: u8,
    pub minor: u8,
    pub revision: u8,
    pub variant: u8,
    pub sub_revision: u8,
}

impl IpVersion {
    pub const fn new(major: u8, minor: u8, revision: u8) -> Self {
        IpVersion {
            major,
            minor,
            revision,
            variant: 0,
            sub_revision: 0,
        }
    }

    /// `(major, minor, revision)`, what register headers are named after.
    pub fn triple(&self) -> (u8, u8, u8) {
        (self.major, self.minor, self.revision)
    }
}

/// One IP instance of the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpInfo {
    pub die: u16,
    pub hw_id: u16,
    pub instance: u8,
    pub version: IpVersion,
    /// Table versions below 3 only: the per-entry harvest nibble.
    pub harvest: u8,
    /// Bases as reg offsets in dwords. From 64-bit tables, the low 32
    /// bits with bits 31:30 cleared, as Linux stores them.
    pub bases: IpBases,
    /// How many bases the entry declared (possibly more than stored).
    pub num_bases: u8,
}

/// GC configuration from the GC table (the fields bring-up uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcInfo {
    pub version: (u16, u16),
    pub num_se: u32,
    /// `max_cu_per_sh`, as `amdgpu_discovery_get_gfx_info()` derives it.
    pub max_cu_per_sh: u32,
    pub max_sh_per_se: u32,
    pub num_rb_per_se: u32,
    pub wave_size: u32,
    pub lds_size: u32,
    /// `gc_info_v2_1` only (`amdgpu_discovery_get_gfx_info()` reads it
    /// when `version_minor == 1`): `gc_num_tcp_per_sh`, `gc_tcc_size`
    /// (per XCD). `None` for other versions.
    pub v2_1: Option<GcInfoV2_1Fields>,
}

impl GcInfo {
    /// CUs one GC instance (XCC) can have: `max_shader_engines ×
    /// max_sh_per_se × max_cu_per_sh`, the bound `gfx_v9_4_3_get_cu_info()`
    /// walks. Which of them are active comes from each XCC's
    /// `CC_GC_SHADER_ARRAY_CONFIG` / `GC_USER_SHADER_ARRAY_CONFIG`, not
    /// from the table.
    pub fn max_cus_per_gc(&self) -> u32 {
        self.num_se
            .saturating_mul(self.max_sh_per_se)
            .saturating_mul(self.max_cu_per_sh)
    }
}

/// The `gc_info_v2_1` additions barebell keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcInfoV2_1Fields {
    pub num_tcp_per_sh: u32,
    pub tcp_size_per_cu: u32,
    pub num_sdp_interface: u32,
    pub num_cu_per_sqc: u32,
    pub tcc_size: u32,
}

/// `AMDGPU_MAX_GC_INSTANCES` (`amdgpu_gfx.h`): XCCs a device can have.
/// (That header does not compile as user-space C, so no conformance
/// probe reaches it; checked by reading.)
pub const MAX_XCC: usize = 8;
/// SDMA instances per AID (`aqua_vanjaram_init_soc_config()`:
/// `adev->sdma.num_inst_per_aid = 4`).
pub const SDMA_PER_AID: u32 = 4;

/// The multi-die layout Linux derives from the table
/// (`amdgpu_discovery_reg_base_init()`, `amdgpu_discovery_harvest_ip()`,
/// `aqua_vanjaram_init_soc_config()`, `aqua_vanjaram_ip_map_init()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    /// `adev->gfx.xcc_mask`: bit `n` for every GC entry with instance
    /// number `n`, less the GC instances the harvest table names.
    pub xcc_mask: u32,
    /// `adev->sdma.sdma_mask`, the same for SDMA0_HWID.
    pub sdma_mask: u32,
    /// `adev->aid_mask` as `aqua_vanjaram_init_soc_config()` derives it
    /// from `sdma_mask` on GC 9.4.3 (AID 0 always; AID `i` when its four
    /// SDMA bits read 0xf, 0x3 or 0xc). 0 on other parts, as Linux
    /// leaves it.
    pub aid_mask: u32,
    /// `adev->ip_map.dev_inst[GC_HWIP][logical]`: the physical GC
    /// instance of each logical XCC, in mask order
    /// (`aqua_vanjaram_populate_ip_map()`); `None` past the last.
    xcc_dev_inst: [Option<u8>; MAX_XCC],
}

impl Topology {
    /// `NUM_XCC(xcc_mask)`.
    pub fn num_xcc(&self) -> u32 {
        self.xcc_mask.count_ones()
    }

    /// The number of AIDs (`hweight32(aid_mask)`).
    pub fn num_aid(&self) -> u32 {
        self.aid_mask.count_ones()
    }

    /// `GET_INST(GC, logical)`: the physical GC instance of logical XCC
    /// `logical`.
    pub fn xcc_physical(&self, logical: usize) -> Option<u8> {
        self.xcc_dev_inst.get(logical).copied().flatten()
    }

    /// `(logical, physical)` of every XCC.
    pub fn xccs(&self) -> impl Iterator<Item = (usize, u8)> + '_ {
        self.xcc_dev_inst
            .iter()
            .enumerate()
            .filter_map(|(l, p)| p.map(|p| (l, p)))
    }

    /// A layout a driver sets by hand instead of reading it from the
    /// table (Aldebaran, [`aldebaran::topology`]): no AIDs.
    pub fn fixed(xcc_mask: u32, sdma_mask: u32) -> Topology {
        Topology {
            xcc_mask,
            sdma_mask,
            aid_mask: 0,
            xcc_dev_inst: Topology::populate(xcc_mask),
        }
    }

    /// `aqua_vanjaram_populate_ip_map()`: logical `l` is the `l`-th set bit.
    fn populate(mask: u32) -> [Option<u8>; MAX_XCC] {
        let mut out = [None; MAX_XCC];
        let mut l = 0;
        for bit in 0..32u8 {
            if mask & (1 << bit) != 0 {
                if let Some(slot) = out.get_mut(l) {
                    *slot = Some(bit);
                }
                l += 1;
            }
        }
        out
    }
}

/// A validated discovery binary.
#[derive(Debug, Clone, Copy)]
pub struct Discovery<'a> {
    bytes: &'a [u8],
    header: &'a BinaryHeader,
    ip_offset: usize,
    ip_header: &'a IpDiscoveryHeader,
    ip_count: usize,
}

impl<'a> Discovery<'a> {
    /// Validates `bytes` (at least the `binary_size` the header declares)
    /// and walks every IP entry once.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        let header: &BinaryHeader = view(bytes, "binary_header", 0)?;
        // follows amdgpu_discovery_verify_binary_signature()
        let sig = header.binary_signature.get();
        if sig != BINARY_SIGNATURE {
            return Err(Error::BadSignature {
                what: "binary_signature",
                found: sig,
                expected: BINARY_SIGNATURE,
            });
        }
        // follows amdgpu_discovery_init(): the sum covers binary_size up
        // to the end of the binary.
        let size = usize::from(header.binary_size.get());
        let len = size
            .checked_sub(BINARY_CHECKSUM_START)
            .ok_or(Error::BadCount {
                what: "binary_size",
                value: size,
                limit: bytes.len(),
            })?;
        check_sum(
            bytes,
            "binary",
            BINARY_CHECKSUM_START,
            len,
            header.binary_checksum.get(),
        )?;

        let tables = &header.table_list;
        let info = |i: usize| {
            tables
                .get(i)
                .map(|t| (usize::from(t.offset.get()), t.checksum.get()))
        };

        let (ip_offset, ip_sum) = info(table::IP_DISCOVERY).unwrap_or((0, 0));
        if ip_offset == 0 {
            return Err(Error::NoIpTable);
        }
        let ip_header: &IpDiscoveryHeader = view(bytes, "ip_discovery_header", ip_offset)?;
        let s = ip_header.signature.get();
        if s != DISCOVERY_TABLE_SIGNATURE {
            return Err(Error::BadSignature {
                what: "ip_discovery_header.signature",
                found: s,
                expected: DISCOVERY_TABLE_SIGNATURE,
            });
        }
        check_sum(
            bytes,
            "ip discovery table",
            ip_offset,
            usize::from(ip_header.size.get()),
            ip_sum,
        )?;

        if let Some((off, sum)) = info(table::GC).filter(|t| t.0 != 0) {
            let g: &GpuInfoHeader = view(bytes, "gpu_info_header", off)?;
            if g.table_id.get() != GC_TABLE_ID {
                return Err(Error::BadSignature {
                    what: "gc table_id",
                    found: g.table_id.get(),
                    expected: GC_TABLE_ID,
                });
            }
            let len = usize::try_from(g.size.get()).unwrap_or(usize::MAX);
            check_sum(bytes, "gc table", off, len, sum)?;
        }
        if let Some((off, sum)) = info(table::HARVEST_INFO).filter(|t| t.0 != 0) {
            let h: &HarvestInfoHeader = view(bytes, "harvest_info_header", off)?;
            if h.signature.get() != HARVEST_TABLE_SIGNATURE {
                return Err(Error::BadSignature {
                    what: "harvest table signature",
                    found: h.signature.get(),
                    expected: HARVEST_TABLE_SIGNATURE,
                });
            }
            check_sum(
                bytes,
                "harvest table",
                off,
                core::mem::size_of::<HarvestTable>(),
                sum,
            )?;
        }
        if let Some((off, sum)) = info(table::VCN_INFO).filter(|t| t.0 != 0) {
            let v: &VcnInfoHeader = view(bytes, "vcn_info_header", off)?;
            if v.table_id.get() != VCN_INFO_TABLE_ID {
                return Err(Error::BadSignature {
                    what: "vcn table_id",
                    found: v.table_id.get(),
                    expected: VCN_INFO_TABLE_ID,
                });
            }
            let len = usize::try_from(v.size_bytes.get()).unwrap_or(usize::MAX);
            check_sum(bytes, "vcn table", off, len, sum)?;
        }
        // MALL is not checked: Linux 6.12 disables that check (`0 && offset`).

        let mut d = Discovery {
            bytes,
            header,
            ip_offset,
            ip_header,
            ip_count: 0,
        };
        d.ip_count = d.walk(|_| {})?;
        Ok(d)
    }

    pub fn header(&self) -> &'a BinaryHeader {
        self.header
    }

    pub fn ip_header(&self) -> &'a IpDiscoveryHeader {
        self.ip_header
    }

    /// Byte offset of the IP discovery table.
    pub fn ip_table_offset(&self) -> usize {
        self.ip_offset
    }

    /// The IP table's version (1..=4).
    pub fn ip_table_version(&self) -> u16 {
        self.ip_header.version.get()
    }

    /// Whether IP entries carry 64-bit bases (version 4 flag).
    pub fn base_addr_64_bit(&self) -> bool {
        self.ip_header.flags & 1 != 0
    }

    /// Number of dies declared.
    pub fn num_dies(&self) -> u16 {
        self.ip_header.num_dies.get()
    }

    /// Number of valid IP entries (entries Linux skips are not counted).
    pub fn ip_count(&self) -> usize {
        self.ip_count
    }

    /// Walks every die and IP entry, checking bounds, and calls `f` on
    /// each valid entry. Returns the number of valid entries.
    fn walk(&self, mut f: impl FnMut(IpInfo)) -> Result<usize, Error> {
        let b = self.bytes;
        let num_dies = usize::from(self.ip_header.num_dies.get());
        if num_dies > self.ip_header.die_info.len() {
            return Err(Error::BadCount {
                what: "ip_discovery_header.num_dies",
                value: num_dies,
                limit: self.ip_header.die_info.len(),
            });
        }
        let version = self.ip_header.version.get();
        let wide = self.base_addr_64_bit();
        let base_bytes = if wide { 8 } else { 4 };
        let mut count = 0;
        for (i, di) in self.ip_header.die_info.iter().take(num_dies).enumerate() {
            let die_offset = usize::from(di.die_offset.get());
            let dh: &DieHeader = view(b, "die_header", die_offset)?;
            let index = i as u16;
            if dh.die_id.get() != index {
                return Err(Error::DieIdMismatch {
                    index,
                    found: dh.die_id.get(),
                });
            }
            let mut at = die_offset + core::mem::size_of::<DieHeader>();
            for _ in 0..dh.num_ips.get() {
                let ip: &IpHeader = view(b, "ip entry", at)?;
                let n = usize::from(ip.num_base_address);
                let list_at = at + core::mem::size_of::<IpHeader>();
                let list = range(b, "ip entry base_address list", list_at, n * base_bytes)?;
                at = list_at + n * base_bytes;
                // follows amdgpu_discovery_validate_ip(): skip, do not fail
                let hw = ip.hw_id.get();
                if ip.instance_number >= MAX_INSTANCE || hw >= HW_ID_MAX {
                    continue;
                }
                let mut bases = [0u32; MAX_BASES];
                for (k, slot) in bases.iter_mut().enumerate().take(n) {
                    *slot = if wide {
                        let w = list
                            .get(k * 8..k * 8 + 8)
                            .and_then(|s| Le64::read_from_bytes(s).ok())
                            .map_or(0, |v| v.get());
                        (w as u32) & 0x3FFF_FFFF
                    } else {
                        list.get(k * 4..k * 4 + 4)
                            .and_then(|s| Le32::read_from_bytes(s).ok())
                            .map_or(0, |v| v.get())
                    };
                }
                let (variant, sub_revision, harvest) = if version < 3 {
                    (0, 0, ip.nibbles & 0xF)
                } else {
                    (ip.nibbles >> 4, ip.nibbles & 0xF, 0)
                };
                f(IpInfo {
                    die: index,
                    hw_id: hw,
                    instance: ip.instance_number,
                    version: IpVersion {
                        major: ip.major,
                        minor: ip.minor,
                        revision: ip.revision,
                        variant,
                        sub_revision,
                    },
                    harvest,
                    bases: IpBases(bases),
                    num_bases: ip.num_base_address,
                });
                count += 1;
            }
        }
        Ok(count)
    }

    /// Calls `f` on every valid IP entry in table order.
    pub fn for_each_ip(&self, f: impl FnMut(IpInfo)) {
        // Cannot fail: `parse` ran the same walk over the same bytes.
        let _ = self.walk(f);
    }

    /// The IP map lookup: `(hw_id, instance)` → version and bases. When a
    /// multi-die table lists the pair more than once, the last entry wins,
    /// as in `amdgpu_discovery_reg_base_init()`.
    pub fn ip(&self, hw_id: u16, instance: u8) -> Option<IpInfo> {
        let mut found = None;
        self.for_each_ip(|i| {
            if i.hw_id == hw_id && i.instance == instance {
                found = Some(i);
            }
        });
        found
    }

    /// The GC table, if present (follows `amdgpu_discovery_get_gfx_info()`).
    pub fn gc_info(&self) -> Result<Option<GcInfo>, Error> {
        let off = self
            .header
            .table_list
            .get(table::GC)
            .map_or(0, |t| usize::from(t.offset.get()));
        if off == 0 {
            return Ok(None);
        }
        let h: &GpuInfoHeader = view(self.bytes, "gpu_info_header", off)?;
        let version = (h.version_major.get(), h.version_minor.get());
        match version.0 {
            1 => {
                let g: &GcInfoV1_0 = view(self.bytes, "gc_info_v1_0", off)?;
                Ok(Some(GcInfo {
                    version,
                    num_se: g.gc_num_se.get(),
                    max_cu_per_sh: g
                        .gc_num_wgp0_per_sa
                        .get()
                        .saturating_add(g.gc_num_wgp1_per_sa.get())
                        .saturating_mul(2),
                    max_sh_per_se: g.gc_num_sa_per_se.get(),
                    num_rb_per_se: g.gc_num_rb_per_se.get(),
                    wave_size: g.gc_wave_size.get(),
                    lds_size: g.gc_lds_size.get(),
                    v2_1: None,
                }))
            }
            2 => {
                let g: &GcInfoV2_0 = view(self.bytes, "gc_info_v2_0", off)?;
                Ok(Some(GcInfo {
                    version,
                    num_se: g.gc_num_se.get(),
                    max_cu_per_sh: g.gc_num_cu_per_sh.get(),
                    max_sh_per_se: g.gc_num_sh_per_se.get(),
                    num_rb_per_se: g.gc_num_rb_per_se.get(),
                    wave_size: g.gc_wave_size.get(),
                    lds_size: g.gc_lds_size.get(),
                    v2_1: if version.1 == 1 {
                        let e: &GcInfoV2_1 = view(self.bytes, "gc_info_v2_1", off)?;
                        Some(GcInfoV2_1Fields {
                            num_tcp_per_sh: e.gc_num_tcp_per_sh.get(),
                            tcp_size_per_cu: e.gc_tcp_size_per_cu.get(),
                            num_sdp_interface: e.gc_num_sdp_interface.get(),
                            num_cu_per_sqc: e.gc_num_cu_per_sqc.get(),
                            tcc_size: e.gc_tcc_size.get(),
                        })
                    } else {
                        None
                    },
                }))
            }
            major => Err(Error::UnknownGcInfo {
                major,
                minor: version.1,
            }),
        }
    }

    /// Harvested (disabled) IP instances from the harvest table, in
    /// table order until the first `hw_id == 0` (follows
    /// `amdgpu_discovery_read_from_harvest_table()`).
    pub fn for_each_harvested(&self, mut f: impl FnMut(u16, u8)) {
        let off = self
            .header
            .table_list
            .get(table::HARVEST_INFO)
            .map_or(0, |t| usize::from(t.offset.get()));
        if off == 0 {
            return;
        }
        let Ok(t) = view::<HarvestTable>(self.bytes, "harvest_table", off) else {
            return;
        };
        for e in t.list.iter().take_while(|e| e.hw_id.get() != 0) {
            f(e.hw_id.get(), e.number_instance);
        }
    }

    /// The device's XCC/SDMA/AID layout as Linux derives it: masks from
    /// the instance numbers (`amdgpu_discovery_reg_base_init()`), the
    /// harvest table's GC and SDMA entries cleared from them
    /// (`amdgpu_discovery_read_from_harvest_table()`, which GC 9.4.3 uses
    /// whatever the table version), then on GC 9.4.3 the AID mask and the
    /// logical → physical XCC map (`aqua_vanjaram_init_soc_config()`,
    /// `aqua_vanjaram_ip_map_init()`). Elsewhere logical = physical, as
    /// `GET_INST()` falls back to without an `ip_map`.
    pub fn topology(&self) -> Topology {
        let (mut xcc_mask, mut sdma_mask) = (0u32, 0u32);
        let mut gc_version = None;
        self.for_each_ip(|i| {
            let bit = 1u32.checked_shl(u32::from(i.instance)).unwrap_or(0);
            match i.hw_id {
                hw_id::GC => {
                    xcc_mask |= bit;
                    if i.instance == 0 || gc_version.is_none() {
                        gc_version = Some(i.version.triple());
                    }
                }
                hw_id::SDMA0 => sdma_mask |= bit,
                _ => {}
            }
        });
        self.for_each_harvested(|id, inst| {
            let bit = 1u32.checked_shl(u32::from(inst)).unwrap_or(0);
            match id {
                hw_id::GC => xcc_mask &= !bit,
                hw_id::SDMA0 => sdma_mask &= !bit,
                _ => {}
            }
        });
        let aid_mask = if gc_version == Some((9, 4, 3)) {
            let group = (1u32 << SDMA_PER_AID) - 1;
            let mut aid = 1u32;
            let mut rest = sdma_mask >> SDMA_PER_AID;
            let mut i = 1;
            while rest != 0 && i < 32 {
                let avail = rest & group;
                if avail == group || avail == 0x3 || avail == 0xc {
                    aid |= 1 << i;
                }
                rest >>= SDMA_PER_AID;
                i += 1;
            }
            aid
        } else {
            0
        };
        Topology {
            xcc_mask,
            sdma_mask,
            aid_mask,
            xcc_dev_inst: Topology::populate(xcc_mask),
        }
    }

    /// The GC instance of logical XCC `logical` (`GET_INST(GC, logical)`),
    /// with its version and bases: what one XCC's `bus::block::Block` is
    /// made from (`adev->reg_offset[GC_HWIP][GET_INST(GC, xcc)]`).
    pub fn xcc(&self, topology: &Topology, logical: usize) -> Option<IpInfo> {
        self.ip(hw_id::GC, topology.xcc_physical(logical)?)
    }

    /// Instance `aid` of a per-AID block (MMHUB, NBIO: Linux addresses
    /// them with the AID as the instance, `mmhub_v1_8_*()` over
    /// `aid_mask`), if the AID is live and the table lists it.
    pub fn aid_ip(&self, topology: &Topology, hw: u16, aid: u8) -> Option<IpInfo> {
        if topology.aid_mask & 1u32.checked_shl(u32::from(aid))? == 0 {
            return None;
        }
        self.ip(hw, aid)
    }
}

const H: &str = "discovery.h";

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    [
        Fact::constant(H, "BINARY_SIGNATURE", BINARY_SIGNATURE as u64),
        Fact::constant(
            H,
            "DISCOVERY_TABLE_SIGNATURE",
            DISCOVERY_TABLE_SIGNATURE as u64
        ),
        Fact::constant(H, "GC_TABLE_ID", GC_TABLE_ID as u64),
        Fact::constant(H, "HARVEST_TABLE_SIGNATURE", HARVEST_TABLE_SIGNATURE as u64),
        Fact::constant(H, "VCN_INFO_TABLE_ID", VCN_INFO_TABLE_ID as u64),
        Fact::constant(H, "IP_DISCOVERY", table::IP_DISCOVERY as u64),
        Fact::constant(H, "GC", table::GC as u64),
        Fact::constant(H, "HARVEST_INFO", table::HARVEST_INFO as u64),
        Fact::constant(H, "VCN_INFO", table::VCN_INFO as u64),
        Fact::constant(H, "MALL_INFO", table::MALL_INFO as u64),
        Fact::constant(H, "NPS_INFO", table::NPS_INFO as u64),
        Fact::constant(H, "TOTAL_TABLES", table::TOTAL_TABLES as u64),
        Fact::constant(
            "amdgpu_discovery.h",
            "DISCOVERY_TMR_SIZE",
            TABLE_BYTES as u64
        ),
        Fact::constant("amdgpu_discovery.h", "DISCOVERY_TMR_OFFSET", TMR_OFFSET),
        Fact::constant("soc15_hw_ip.h", "MP1_HWID", hw_id::MP1 as u64),
        Fact::constant("soc15_hw_ip.h", "GC_HWID", hw_id::GC as u64),
        Fact::constant("soc15_hw_ip.h", "MMHUB_HWID", hw_id::MMHUB as u64),
        Fact::constant("soc15_hw_ip.h", "ATHUB_HWID", hw_id::ATHUB as u64),
        Fact::constant("soc15_hw_ip.h", "OSSSYS_HWID", hw_id::OSSSYS as u64),
        Fact::constant("soc15_hw_ip.h", "HDP_HWID", hw_id::HDP as u64),
        Fact::constant("soc15_hw_ip.h", "SDMA0_HWID", hw_id::SDMA0 as u64),
        Fact::constant("soc15_hw_ip.h", "NBIF_HWID", hw_id::NBIF as u64),
        Fact::constant("soc15_hw_ip.h", "UMC_HWID", hw_id::UMC as u64),
        Fact::constant("soc15_hw_ip.h", "MP0_HWID", hw_id::MP0 as u64),
        Fact::constant("soc15_hw_ip.h", "DMU_HWID", hw_id::DMU as u64),
    ],
    layout_facts!(H, TableInfo = "struct table_info" {
        offset = "offset",
        checksum = "checksum",
        size = "size",
        padding = "padding",
    }),
    layout_facts!(H, BinaryHeader = "struct binary_header" {
        binary_signature = "binary_signature",
        version_major = "version_major",
        version_minor = "version_minor",
        binary_checksum = "binary_checksum",
        binary_size = "binary_size",
        table_list = "table_list",
    }),
    layout_facts!(H, DieInfo = "struct die_info" { die_id = "die_id", die_offset = "die_offset" }),
    layout_facts!(H, IpDiscoveryHeader = "struct ip_discovery_header" {
        signature = "signature",
        version = "version",
        size = "size",
        id = "id",
        num_dies = "num_dies",
        die_info = "die_info",
        flags = "padding",
        reserved2 = "reserved2",
    }),
    layout_facts!(H, DieHeader = "struct die_header" { die_id = "die_id", num_ips = "num_ips" }),
    // `struct ip` and `ip_v3` both put the base list right after the
    // fixed 8 bytes. (`ip_v4`'s nibble byte exists only when the build
    // defines LITTLEENDIAN_CPU, which user-space compilation does not, so
    // its layout is not probed here.)
    layout_facts!(H, IpHeader = "struct ip" {
        hw_id = "hw_id",
        instance_number = "number_instance",
        num_base_address = "num_base_address",
        major = "major",
        minor = "minor",
        revision = "revision",
    }),
    [Fact::offset(
        H,
        "struct ip",
        "base_address",
        core::mem::size_of::<IpHeader>()
    )],
    layout_facts!(H, IpHeader = "struct ip_v3" {
        hw_id = "hw_id",
        instance_number = "instance_number",
        num_base_address = "num_base_address",
        major = "major",
        minor = "minor",
        revision = "revision",
    }),
    [
        Fact::offset(
            H,
            "struct ip_v3",
            "base_address",
            core::mem::size_of::<IpHeader>()
        ),
        // The nibble positions in byte 7.
        Fact::constant(
            H,
            "({ struct ip_v3 t_ = {0}; t_.sub_revision = 0xF; ((uint8_t *)&t_)[7]; })",
            0x0F
        ),
        Fact::constant(
            H,
            "({ struct ip_v3 t_ = {0}; t_.variant = 0xF; ((uint8_t *)&t_)[7]; })",
            0xF0
        ),
        Fact::constant(
            H,
            "({ struct ip t_ = {0}; t_.harvest = 0xF; ((uint8_t *)&t_)[7]; })",
            0x0F
        ),
        Fact::constant(
            H,
            "({ ip_discovery_header t_ = {0}; t_.base_addr_64_bit = 1; ((uint8_t *)&t_)[78]; })",
            1
        ),
    ],
    layout_facts!(H, GpuInfoHeader = "struct gpu_info_header" {
        table_id = "table_id",
        version_major = "version_major",
        version_minor = "version_minor",
        size = "size",
    }),
    layout_facts!(H, GcInfoV1_0 = "struct gc_info_v1_0" {
        header = "header",
        gc_num_se = "gc_num_se",
        gc_num_wgp0_per_sa = "gc_num_wgp0_per_sa",
        gc_num_wgp1_per_sa = "gc_num_wgp1_per_sa",
        gc_num_rb_per_se = "gc_num_rb_per_se",
        gc_wave_size = "gc_wave_size",
        gc_lds_size = "gc_lds_size",
        gc_num_sa_per_se = "gc_num_sa_per_se",
        gc_num_gl2a = "gc_num_gl2a",
    }),
    layout_facts!(H, GcInfoV2_0 = "struct gc_info_v2_0" {
        header = "header",
        gc_num_se = "gc_num_se",
        gc_num_cu_per_sh = "gc_num_cu_per_sh",
        gc_num_sh_per_se = "gc_num_sh_per_se",
        gc_num_rb_per_se = "gc_num_rb_per_se",
        gc_wave_size = "gc_wave_size",
        gc_lds_size = "gc_lds_size",
        gc_num_packer_per_sc = "gc_num_packer_per_sc",
    }),
    // v2.1 begins with v2.0's fields (the offsets above name the same
    // bytes: `gc_num_se` at 12 … `gc_num_packer_per_sc` at 76).
    [Fact::offset(
        H,
        "struct gc_info_v2_1",
        "gc_num_packer_per_sc",
        core::mem::offset_of!(GcInfoV2_1, v2_0)
            + core::mem::offset_of!(GcInfoV2_0, gc_num_packer_per_sc)
    )],
    layout_facts!(H, GcInfoV2_1 = "struct gc_info_v2_1" {
        gc_num_tcp_per_sh = "gc_num_tcp_per_sh",
        gc_tcp_size_per_cu = "gc_tcp_size_per_cu",
        gc_num_sdp_interface = "gc_num_sdp_interface",
        gc_num_cu_per_sqc = "gc_num_cu_per_sqc",
        gc_instruction_cache_size_per_sqc = "gc_instruction_cache_size_per_sqc",
        gc_scalar_data_cache_size_per_sqc = "gc_scalar_data_cache_size_per_sqc",
        gc_tcc_size = "gc_tcc_size",
    }),
    layout_facts!(H, HarvestInfoHeader = "struct harvest_info_header" {
        signature = "signature",
        version = "version",
    }),
    layout_facts!(H, HarvestInfo = "struct harvest_info" {
        hw_id = "hw_id",
        number_instance = "number_instance",
        reserved = "reserved",
    }),
    layout_facts!(H, HarvestTable = "struct harvest_table" { header = "header", list = "list" }),
    layout_facts!(H, VcnInfoHeader = "struct vcn_info_header" {
        table_id = "table_id",
        version_major = "version_major",
        version_minor = "version_minor",
        size_bytes = "size_bytes",
    }),
);

/// Registers used before the IP bases are known, at the absolute dword
/// offsets `amdgpu_discovery.c` hard-codes for that reason (they are not
/// in any header, so no conformance probe reaches them; on an NBIO 4.3.0
/// part they agree with `nbio_4_3_0_offset.h`, see [`crate::regs::nbio_4_3_0`]).
pub mod boot {
    use crate::regs::Reg;

    /// `mmMM_INDEX`: VRAM byte address, bit 31 set to select memory.
    pub const MM_INDEX: Reg = Reg {
        name: "MM_INDEX",
        offset: 0x0,
        base_idx: 0,
    };
    /// `mmMM_DATA`: the dword at the selected address.
    pub const MM_DATA: Reg = Reg {
        name: "MM_DATA",
        offset: 0x1,
        base_idx: 0,
    };
    /// `mmMM_INDEX_HI`: address bits above 30, as `pos >> 31`.
    pub const MM_INDEX_HI: Reg = Reg {
        name: "MM_INDEX_HI",
        offset: 0x6,
        base_idx: 0,
    };
    /// `mmRCC_CONFIG_MEMSIZE`: VRAM size in MiB.
    pub const RCC_CONFIG_MEMSIZE: Reg = Reg {
        name: "RCC_CONFIG_MEMSIZE",
        offset: 0xde3,
        base_idx: 0,
    };
    /// `mmMP0_SMN_C2PMSG_33`: bit 31 once the IFWI has set the card up.
    pub const MP0_SMN_C2PMSG_33: Reg = Reg {
        name: "MP0_SMN_C2PMSG_33",
        offset: 0x16061,
        base_idx: 0,
    };
    /// For symbolic traces (with all-zero bases).
    pub const ALL: &[Reg] = &[
        MM_INDEX,
        MM_DATA,
        MM_INDEX_HI,
        RCC_CONFIG_MEMSIZE,
        MP0_SMN_C2PMSG_33,
    ];
    /// Bit 31 of `MM_INDEX` selects VRAM.
    pub const MM_INDEX_VRAM: u32 = 0x8000_0000;
}

/// Why the table could not be read from VRAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadError {
    /// `RCC_CONFIG_MEMSIZE` reads 0: Linux then reads the table from
    /// system memory via ACPI, which barebell does not do.
    NoVramSize,
    /// VRAM is smaller than the 64 KiB the table sits below.
    VramTooSmall { mib: u32 },
    /// The output buffer is smaller than [`TABLE_BYTES`].
    BufferTooSmall { len: usize },
    /// A register read all-ones.
    DeviceGone { what: &'static str },
    /// A boot register cannot be placed (never, at base 0; kept typed).
    Register(crate::bus::BlockError),
}

impl From<crate::bus::BlockError> for ReadError {
    fn from(e: crate::bus::BlockError) -> Self {
        ReadError::Register(e)
    }
}

impl core::fmt::Display for ReadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            ReadError::NoVramSize => write!(
                f,
                "RCC_CONFIG_MEMSIZE reads 0 (a table in system memory via ACPI is not supported)"
            ),
            ReadError::VramTooSmall { mib } => {
                write!(
                    f,
                    "{mib} MiB of VRAM cannot hold the table 64 KiB below its top"
                )
            }
            ReadError::BufferTooSmall { len } => {
                write!(
                    f,
                    "a {len}-byte buffer cannot hold the {TABLE_BYTES}-byte table"
                )
            }
            ReadError::DeviceGone { what } => {
                write!(f, "{what} reads all-ones: the device is gone")
            }
            ReadError::Register(e) => write!(f, "{e}"),
        }
    }
}

/// Reads the discovery binary from VRAM through `MM_INDEX`/`MM_DATA`
/// (follows `amdgpu_discovery_read_binary_from_mem()` and
/// `amdgpu_device_mm_access()`), into `out[..TABLE_BYTES]`.
///
/// The IFWI wait is bounded by `ifwi_timeout_ns` and, as in Linux, not an
/// error when it runs out: the read is attempted anyway.
pub fn read_from_vram<B, C>(
    bus: &B,
    clock: &C,
    ifwi_timeout_ns: u64,
    out: &mut [u8],
) -> Result<u64, ReadError>
where
    B: crate::bus::RegisterBus + ?Sized,
    C: crate::time::Clock + ?Sized,
{
    use crate::bus::{ALL_ONES, Block, BlockError, WaitError};
    // Absolute offsets: the boot registers with every base 0.
    let b = Block::new(bus, crate::regs::IpBases::default());
    let len = out.len();
    let dst = out
        .get_mut(..TABLE_BYTES)
        .ok_or(ReadError::BufferTooSmall { len })?;
    let ready = boot::MP0_SMN_C2PMSG_33;
    let bit31 = 0x8000_0000;
    match b.poll(clock, ready, bit31, bit31, ready.name, ifwi_timeout_ns) {
        Err(BlockError::Wait(WaitError::DeviceGone { what, .. })) => {
            return Err(ReadError::DeviceGone { what });
        }
        Err(e @ BlockError::OutsideBases { .. }) => return Err(ReadError::Register(e)),
        _ => {}
    }
    let mib = b.read(boot::RCC_CONFIG_MEMSIZE)?;
    if mib == ALL_ONES {
        return Err(ReadError::DeviceGone {
            what: boot::RCC_CONFIG_MEMSIZE.name,
        });
    }
    if mib == 0 {
        return Err(ReadError::NoVramSize);
    }
    let pos = (u64::from(mib) << 20)
        .checked_sub(TMR_OFFSET)
        .ok_or(ReadError::VramTooSmall { mib })?;
    let mut hi = u32::MAX;
    for (i, chunk) in dst.chunks_exact_mut(4).enumerate() {
        let p = pos + 4 * i as u64;
        b.write(boot::MM_INDEX, (p as u32) | boot::MM_INDEX_VRAM)?;
        let h = (p >> 31) as u32;
        if h != hi {
            b.write(boot::MM_INDEX_HI, h)?;
            hi = h;
        }
        chunk.copy_from_slice(&b.read(boot::MM_DATA)?.to_le_bytes());
    }
    Ok(pos)
}
