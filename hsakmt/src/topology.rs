//! The topology this library reports: node 0 the host CPU, node 1 the
//! GPU, as KFD's topology would list an MI210 (`kfd_topology.c`,
//! `kfd_crat.c`) and the thunk would read it from sysfs (`topology.c`).
//!
//! GPU values come from three places, each said at its field:
//! - the brought-up device ([`GpuFacts`]: PCI id, VRAM size, CU count);
//! - Linux: what KFD derives from the GC version (`EngineId` 9.0.10 from
//!   `gfx_target_version` 90010, `kgd2kfd_probe()`), gfx9's 4 SIMDs per
//!   CU (`NUM_SIMD_PER_CU`, `gfx_v9_0_get_cu_info()`), the gfx9 LDS and
//!   scratch apertures (`MAKE_LDS_APP_BASE_V9`, `MAKE_SCRATCH_APP_BASE_V9`
//!   in `kfd_flat_memory.c`), the 64-bit doorbells of a SOC15 part
//!   (`HSA_CAP_DOORBELL_TYPE_2_0`, `kfd_topology_add_device()`), and the
//!   thunk's GPR sizes for Aldebaran (`VGPR_SIZE_PER_CU`, `SGPR_SIZE_PER_CU`
//!   in `libhsakmt.h`);
//! - the VBIOS `gfx_info` the model part carries (SE/SH/CU split, waves
//!   per SIMD, LDS, scratch slots: **model values**, the ones
//!   `vfio-peer`'s ROM gives Linux, `GfxInfo::MI210`), and a few figures
//!   no interface here reads (clock, cache sizes, SDMA engines, CP queues),
//!   labelled model values where they are set.

use crate::abi::{self, HsaCacheProperties, HsaIoLinkProperties, HsaMemoryProperties};
use crate::abi::{HsaNodeProperties, capability, engine_id};

/// What the device discovery and the part description say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuFacts {
    pub device_id: u16,
    pub vram_bytes: u64,
    pub compute_units: u32,
}

/// The VBIOS `gfx_info` figures KFD's CRAT copies
/// (`kfd_fill_gpu_cache_info...`, `kfd_create_vcrat_image_gpu()` through
/// `amdgpu_atomfirmware_get_gfx_info()`): **model values** for the MI210 part,
/// the same as `GfxInfo::MI210` in `vfio-peer/src/vbios.rs` (a test keeps
/// them equal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GfxInfo {
    pub shader_engines: u32,
    pub sh_per_se: u32,
    pub cu_per_sh: u32,
    pub max_waves_per_simd: u32,
    pub lds_kib: u32,
    pub wave_size: u32,
    pub scratch_slots_per_cu: u32,
}

/// MI210's, as the model part's VBIOS carries it.
pub const MI210_GFX_INFO: GfxInfo = GfxInfo {
    shader_engines: 8,
    sh_per_se: 1,
    cu_per_sh: 16,
    max_waves_per_simd: 8,
    lds_kib: 64,
    wave_size: 64,
    scratch_slots_per_cu: 32,
};

/// gfx9: `NUM_SIMD_PER_CU` (`gfx_v9_0.c`).
pub const SIMD_PER_CU: u32 = 4;
/// `MAKE_LDS_APP_BASE_V9()`: `0x1 << 48` (`kfd_flat_memory.c`).
pub const LDS_APERTURE_BASE: u64 = 1 << 48;
/// `MAKE_SCRATCH_APP_BASE_V9()`: `0x2 << 48`.
pub const SCRATCH_APERTURE_BASE: u64 = 2 << 48;
/// The scratch heap's size reported (4 GiB, what ROCR reserves at most;
/// a model value: the thunk reports its aperture's extent).
pub const SCRATCH_APERTURE_BYTES: u64 = 1 << 32;
/// `VGPR_SIZE_PER_CU(CHIP_ALDEBARAN)` and `SGPR_SIZE_PER_CU` (`libhsakmt.h`).
pub const VGPR_BYTES_PER_CU: u32 = 0x8_0000;
pub const SGPR_BYTES_PER_CU: u32 = 0x4000;
/// KFD's weight for a PCIe IO link (`kfd_parse_subtype_iolink()`: 20).
pub const PCIE_LINK_WEIGHT: u32 = 20;

/// The two nodes' properties and what hangs off each.
#[derive(Debug, Clone)]
pub struct Topology {
    pub nodes: [Node; 2],
}

/// One node: its properties, memory banks, caches, IO links.
#[derive(Debug, Clone)]
pub struct Node {
    pub props: HsaNodeProperties,
    pub memory: Vec<HsaMemoryProperties>,
    pub caches: Vec<HsaCacheProperties>,
    pub links: Vec<HsaIoLinkProperties>,
}

/// What the host says about itself (node 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFacts {
    pub cpus: u32,
    pub memory_bytes: u64,
    pub model_name: String,
}

impl HostFacts {
    /// This host: the CPUs it runs on, its RAM (`sysconf`), its
    /// `/proc/cpuinfo` model name (as the thunk's `topology_parse_cpuinfo()`
    /// takes it).
    pub fn probe() -> HostFacts {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        // SAFETY: sysconf reads process-independent constants.
        let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
        // SAFETY: as above.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let memory_bytes = u64::try_from(pages)
            .unwrap_or(0)
            .saturating_mul(u64::try_from(page).unwrap_or(0));
        let model_name = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "host CPU".to_string());
        HostFacts {
            cpus,
            memory_bytes,
            model_name,
        }
    }
}

fn utf16_name(s: &str) -> [u16; abi::PUBLIC_NAME_SIZE] {
    let mut out = [0u16; abi::PUBLIC_NAME_SIZE];
    for (d, c) in out
        .iter_mut()
        .zip(s.encode_utf16())
        .take(abi::PUBLIC_NAME_SIZE - 1)
    {
        *d = c;
    }
    out
}

fn ascii_name(s: &str) -> [u8; abi::PUBLIC_NAME_SIZE] {
    let mut out = [0u8; abi::PUBLIC_NAME_SIZE];
    for (d, c) in out
        .iter_mut()
        .zip(s.bytes().filter(u8::is_ascii))
        .take(abi::PUBLIC_NAME_SIZE - 1)
    {
        *d = c;
    }
    out
}

fn cache(level: u32, kib: u32, line: u32, kind: u32, processor: u32) -> HsaCacheProperties {
    HsaCacheProperties {
        ProcessorIdLow: processor,
        CacheLevel: level,
        CacheSize: kib,
        CacheLineSize: line,
        CacheLinesPerTag: 1,
        CacheAssociativity: 16,
        CacheLatency: 1,
        CacheType: kind,
        SiblingMap: [0; abi::CPU_SIBLINGS],
    }
}

fn link(from: u32, to: u32) -> HsaIoLinkProperties {
    HsaIoLinkProperties {
        IoLinkType: abi::IOLINK_TYPE_PCIEXPRESS,
        NodeFrom: from,
        NodeTo: to,
        Weight: PCIE_LINK_WEIGHT,
        ..Default::default()
    }
}

/// The GPU node's first processor id (`FComputeIdLo`): a **model value**
/// that ROCR only passes back to `hsaKmtGetNodeCacheProperties`.
pub const GPU_PROCESSOR_ID_LO: u32 = 0x8000_1000;

impl Topology {
    /// Node 0 from `host`, node 1 an MI210 from `gpu` and `gfx`.
    pub fn mi210(host: &HostFacts, gpu: GpuFacts, gfx: GfxInfo) -> Topology {
        let mut c = HsaNodeProperties::zeroed();
        c.NumCPUCores = host.cpus.max(1);
        c.NumMemoryBanks = 1;
        c.NumCaches = 1;
        c.NumIOLinks = 1;
        c.MarketingName = utf16_name(&host.model_name);
        let cpu = Node {
            props: c,
            memory: vec![HsaMemoryProperties {
                HeapType: abi::heap::SYSTEM,
                SizeInBytes: host.memory_bytes.max(1),
                ..Default::default()
            }],
            // Model value: one L1 data cache entry (ROCR requires at least
            // one; the thunk reads the real ones from sysfs).
            caches: vec![cache(
                1,
                32,
                64,
                abi::cache_type::DATA | abi::cache_type::CPU,
                0,
            )],
            links: vec![link(0, 1)],
        };

        let mut g = HsaNodeProperties::zeroed();
        g.NumFComputeCores = gpu.compute_units * SIMD_PER_CU;
        g.NumMemoryBanks = 3;
        g.NumCaches = 2;
        g.NumIOLinks = 1;
        g.FComputeIdLo = GPU_PROCESSOR_ID_LO;
        g.Capability = capability::WATCH_POINTS_SUPPORTED
            | 2 << capability::WATCH_POINTS_TOTAL_BITS_SHIFT
            | 2 << capability::DOORBELL_TYPE_SHIFT
            | capability::SRAM_EDC_SUPPORT;
        g.MaxWavesPerSIMD = gfx.max_waves_per_simd;
        g.LDSSizeInKB = gfx.lds_kib;
        g.WaveFrontSize = gfx.wave_size;
        g.NumShaderBanks = gfx.shader_engines;
        // kfd_crat.c: array_count = max_sh_per_se * num_se,
        // cu_per_simd_array = max_cu_per_sh.
        g.NumArrays = gfx.sh_per_se * gfx.shader_engines;
        g.NumCUPerArray = gfx.cu_per_sh;
        g.NumSIMDPerCU = SIMD_PER_CU;
        g.MaxSlotsScratchCU = gfx.scratch_slots_per_cu;
        g.EngineId = engine_id::new(0, 9, 0, 10);
        g.VendorId = 0x1002;
        g.DeviceId = gpu.device_id;
        g.LocalMemSize = gpu.vram_bytes;
        // Model values: MI210's public peak engine clock; no interface
        // here reads a clock.
        g.MaxEngineClockMhzFCompute = 1700;
        g.MarketingName = utf16_name("AMD Instinct MI210");
        g.AMDName = ascii_name("Aldebaran");
        // KFD's split of Aldebaran's five SDMA instances
        // (`kfd_topology_add_device()` from `kfd_get_num_sdma_engines()`
        // and `_xgmi_sdma_engines()`), the engines the library's SDMA
        // queues use ([`crate::queues`]); 24 CP queues is a model value.
        g.NumSdmaEngines = u32::from(crate::queues::SDMA_ENGINES);
        g.NumSdmaXgmiEngines = u32::from(crate::queues::XGMI_SDMA_ENGINES);
        g.NumSdmaQueuesPerEngine = crate::queues::SDMA_QUEUES_PER_ENGINE as u8;
        g.NumCpQueues = 24;
        // Model value: any nonzero id gives ROCR a UUID.
        g.UniqueID = 0x0000_740f_0000_0001;
        g.VGPRSizePerCU = VGPR_BYTES_PER_CU;
        g.SGPRSizePerCU = SGPR_BYTES_PER_CU;
        let gpu_node = Node {
            props: g,
            memory: vec![
                HsaMemoryProperties {
                    // All of the part's VRAM is CPU-visible (large BAR):
                    // KFD reports PUBLIC then.
                    HeapType: abi::heap::FRAME_BUFFER_PUBLIC,
                    SizeInBytes: gpu.vram_bytes,
                    ..Default::default()
                },
                HsaMemoryProperties {
                    HeapType: abi::heap::GPU_LDS,
                    SizeInBytes: u64::from(gfx.lds_kib) * 1024,
                    VirtualBaseAddress: LDS_APERTURE_BASE,
                    ..Default::default()
                },
                HsaMemoryProperties {
                    HeapType: abi::heap::GPU_SCRATCH,
                    SizeInBytes: SCRATCH_APERTURE_BYTES,
                    VirtualBaseAddress: SCRATCH_APERTURE_BASE,
                    ..Default::default()
                },
            ],
            // Model values: CDNA2's 16 KiB vector L1 per CU and 8 MiB L2.
            caches: vec![
                cache(
                    1,
                    16,
                    64,
                    abi::cache_type::DATA | abi::cache_type::HSACU,
                    GPU_PROCESSOR_ID_LO,
                ),
                cache(
                    2,
                    8192,
                    128,
                    abi::cache_type::DATA | abi::cache_type::HSACU,
                    GPU_PROCESSOR_ID_LO,
                ),
            ],
            links: vec![link(1, 0)],
        };
        Topology {
            nodes: [cpu, gpu_node],
        }
    }

    /// Node `id`.
    pub fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.get(id as usize)
    }
}
