//! The C types of libhsakmt's interface as ROCR 5.2.3 sees them
//! (`hsakmttypes.h`, thunk interface 1.x), written from the header.
//!
//! The header packs everything to 4 bytes (`#pragma pack(push,
//! hsakmttypes_h, 4)`), hence `repr(C, packed(4))`. Bitfield unions
//! (`HSA_CAPABILITY`, `HSA_ENGINE_ID`, `HsaCacheType`, `HsaMemFlags`, ...)
//! are their 32-bit value here, with the bit positions as constants.
//! `tests/layout.rs` compiles the header with the system C compiler and
//! checks every size and offset below against it.

#![allow(non_snake_case)]

/// `HSAKMT_STATUS` values this library returns.
pub mod status {
    pub const SUCCESS: u32 = 0;
    pub const ERROR: u32 = 1;
    pub const INVALID_PARAMETER: u32 = 3;
    pub const INVALID_HANDLE: u32 = 4;
    pub const INVALID_NODE_UNIT: u32 = 5;
    pub const NO_MEMORY: u32 = 6;
    pub const BUFFER_TOO_SMALL: u32 = 7;
    pub const NOT_IMPLEMENTED: u32 = 10;
    pub const NOT_SUPPORTED: u32 = 11;
    pub const UNAVAILABLE: u32 = 12;
    pub const OUT_OF_RESOURCES: u32 = 13;
    pub const KERNEL_IO_CHANNEL_NOT_OPENED: u32 = 20;
    pub const KERNEL_COMMUNICATION_ERROR: u32 = 21;
    pub const KERNEL_ALREADY_OPENED: u32 = 22;
    pub const WAIT_FAILURE: u32 = 30;
    pub const WAIT_TIMEOUT: u32 = 31;
    pub const MEMORY_ALREADY_REGISTERED: u32 = 35;
    pub const MEMORY_NOT_REGISTERED: u32 = 36;
}

/// `HsaVersionInfo`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaVersionInfo {
    pub KernelInterfaceMajorVersion: u32,
    pub KernelInterfaceMinorVersion: u32,
}

/// `HsaSystemProperties`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaSystemProperties {
    pub NumNodes: u32,
    pub PlatformOem: u32,
    pub PlatformId: u32,
    pub PlatformRev: u32,
}

/// `HSA_PUBLIC_NAME_SIZE`.
pub const PUBLIC_NAME_SIZE: usize = 64;

/// `HsaNodeProperties`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy)]
pub struct HsaNodeProperties {
    pub NumCPUCores: u32,
    pub NumFComputeCores: u32,
    pub NumMemoryBanks: u32,
    pub NumCaches: u32,
    pub NumIOLinks: u32,
    pub CComputeIdLo: u32,
    pub FComputeIdLo: u32,
    /// `HSA_CAPABILITY` ([`capability`]).
    pub Capability: u32,
    pub MaxWavesPerSIMD: u32,
    pub LDSSizeInKB: u32,
    pub GDSSizeInKB: u32,
    pub WaveFrontSize: u32,
    pub NumShaderBanks: u32,
    pub NumArrays: u32,
    pub NumCUPerArray: u32,
    pub NumSIMDPerCU: u32,
    pub MaxSlotsScratchCU: u32,
    /// `HSA_ENGINE_ID` ([`engine_id`]).
    pub EngineId: u32,
    pub VendorId: u16,
    pub DeviceId: u16,
    pub LocationId: u32,
    pub LocalMemSize: u64,
    pub MaxEngineClockMhzFCompute: u32,
    pub MaxEngineClockMhzCCompute: u32,
    pub DrmRenderMinor: i32,
    /// UTF-16.
    pub MarketingName: [u16; PUBLIC_NAME_SIZE],
    /// ASCII.
    pub AMDName: [u8; PUBLIC_NAME_SIZE],
    /// `HSA_ENGINE_VERSION`.
    pub uCodeEngineVersions: u32,
    /// `HSA_DEBUG_PROPERTIES`.
    pub DebugProperties: u64,
    pub HiveID: u64,
    pub NumSdmaEngines: u32,
    pub NumSdmaXgmiEngines: u32,
    pub NumSdmaQueuesPerEngine: u8,
    pub NumCpQueues: u8,
    pub NumGws: u8,
    pub Reserved2: u8,
    pub Domain: u32,
    pub UniqueID: u64,
    pub VGPRSizePerCU: u32,
    pub SGPRSizePerCU: u32,
    pub Reserved: [u8; 12],
}

impl HsaNodeProperties {
    /// All zero, as the thunk starts each node.
    pub const fn zeroed() -> Self {
        HsaNodeProperties {
            NumCPUCores: 0,
            NumFComputeCores: 0,
            NumMemoryBanks: 0,
            NumCaches: 0,
            NumIOLinks: 0,
            CComputeIdLo: 0,
            FComputeIdLo: 0,
            Capability: 0,
            MaxWavesPerSIMD: 0,
            LDSSizeInKB: 0,
            GDSSizeInKB: 0,
            WaveFrontSize: 0,
            NumShaderBanks: 0,
            NumArrays: 0,
            NumCUPerArray: 0,
            NumSIMDPerCU: 0,
            MaxSlotsScratchCU: 0,
            EngineId: 0,
            VendorId: 0,
            DeviceId: 0,
            LocationId: 0,
            LocalMemSize: 0,
            MaxEngineClockMhzFCompute: 0,
            MaxEngineClockMhzCCompute: 0,
            DrmRenderMinor: 0,
            MarketingName: [0; PUBLIC_NAME_SIZE],
            AMDName: [0; PUBLIC_NAME_SIZE],
            uCodeEngineVersions: 0,
            DebugProperties: 0,
            HiveID: 0,
            NumSdmaEngines: 0,
            NumSdmaXgmiEngines: 0,
            NumSdmaQueuesPerEngine: 0,
            NumCpQueues: 0,
            NumGws: 0,
            Reserved2: 0,
            Domain: 0,
            UniqueID: 0,
            VGPRSizePerCU: 0,
            SGPRSizePerCU: 0,
            Reserved: [0; 12],
        }
    }
}

/// `HSA_CAPABILITY` bit positions (`ui32` of the union).
pub mod capability {
    pub const WATCH_POINTS_SUPPORTED: u32 = 1 << 7;
    pub const WATCH_POINTS_TOTAL_BITS_SHIFT: u32 = 8;
    pub const DOORBELL_TYPE_SHIFT: u32 = 12;
    pub const SRAM_EDC_SUPPORT: u32 = 1 << 26;
}

/// `HSA_ENGINE_ID` fields (`ui32`: uCode 10 bits, Major 6, Minor 8,
/// Stepping 8).
pub mod engine_id {
    pub const fn new(ucode: u32, major: u32, minor: u32, stepping: u32) -> u32 {
        (ucode & 0x3FF) | (major & 0x3F) << 10 | (minor & 0xFF) << 16 | (stepping & 0xFF) << 24
    }
}

/// `HSA_HEAPTYPE`.
pub mod heap {
    pub const SYSTEM: u32 = 0;
    pub const FRAME_BUFFER_PUBLIC: u32 = 1;
    pub const FRAME_BUFFER_PRIVATE: u32 = 2;
    pub const GPU_LDS: u32 = 4;
    pub const GPU_SCRATCH: u32 = 5;
}

/// `HsaMemoryProperties`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaMemoryProperties {
    pub HeapType: u32,
    pub SizeInBytes: u64,
    /// `HSA_MEMORYPROPERTY`.
    pub Flags: u32,
    pub Width: u32,
    pub MemoryClockMax: u32,
    pub VirtualBaseAddress: u64,
}

/// `HSA_CPU_SIBLINGS`.
pub const CPU_SIBLINGS: usize = 256;

/// `HsaCacheType` bits.
pub mod cache_type {
    pub const DATA: u32 = 1 << 0;
    pub const INSTRUCTION: u32 = 1 << 1;
    pub const CPU: u32 = 1 << 2;
    pub const HSACU: u32 = 1 << 3;
}

/// `HsaCacheProperties`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy)]
pub struct HsaCacheProperties {
    pub ProcessorIdLow: u32,
    pub CacheLevel: u32,
    /// KiB.
    pub CacheSize: u32,
    pub CacheLineSize: u32,
    pub CacheLinesPerTag: u32,
    pub CacheAssociativity: u32,
    pub CacheLatency: u32,
    /// `HsaCacheType` ([`cache_type`]).
    pub CacheType: u32,
    pub SiblingMap: [u32; CPU_SIBLINGS],
}

/// `HSA_IOLINKTYPE_PCIEXPRESS`.
pub const IOLINK_TYPE_PCIEXPRESS: u32 = 2;

/// `HsaIoLinkProperties`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaIoLinkProperties {
    pub IoLinkType: u32,
    pub VersionMajor: u32,
    pub VersionMinor: u32,
    pub NodeFrom: u32,
    pub NodeTo: u32,
    pub Weight: u32,
    pub MinimumLatency: u32,
    pub MaximumLatency: u32,
    pub MinimumBandwidth: u32,
    pub MaximumBandwidth: u32,
    pub RecTransferSize: u32,
    /// `HSA_LINKPROPERTY`.
    pub Flags: u32,
}

/// `HsaClockCounters`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaClockCounters {
    pub GPUClockCounter: u64,
    pub CPUClockCounter: u64,
    pub SystemClockCounter: u64,
    pub SystemClockFrequencyHz: u64,
}

/// `HsaMemFlags` bits (`ui32` of the union).
pub mod mem_flags {
    pub const NON_PAGED: u32 = 1 << 0;
    pub const READ_ONLY: u32 = 1 << 3;
    pub const HOST_ACCESS: u32 = 1 << 6;
    pub const SCRATCH: u32 = 1 << 9;
    pub const EXECUTE_ACCESS: u32 = 1 << 12;
    pub const COARSE_GRAIN: u32 = 1 << 13;
}

/// `HSA_EVENTTYPE` values.
pub mod event_type {
    pub const SIGNAL: u32 = 0;
    pub const MEMORY: u32 = 8;
}

/// `HsaEventDescriptor`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaEventDescriptor {
    pub EventType: u32,
    pub NodeId: u32,
    /// `HsaSyncVar`: the user pointer and its size.
    pub SyncVar: u64,
    pub SyncVarSize: u64,
}

/// `HsaEventData`: the type, the 20-byte union of per-type data, and the
/// thunk's three words (ROCR reads `HWData2` as the event mailbox address
/// and `HWData3` as the value to write there).
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaEventData {
    pub EventType: u32,
    pub EventData: [u32; 5],
    pub HWData1: u64,
    pub HWData2: u64,
    pub HWData3: u32,
}

/// `HsaEvent`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaEvent {
    pub EventId: u32,
    pub EventData: HsaEventData,
}

/// `HSA_POINTER_TYPE` values.
pub mod pointer_type {
    pub const UNKNOWN: u32 = 0;
    pub const ALLOCATED: u32 = 1;
    pub const REGISTERED_USER: u32 = 2;
}

/// `HsaPointerInfo`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy)]
pub struct HsaPointerInfo {
    pub Type: u32,
    pub Node: u32,
    pub MemFlags: u32,
    pub CPUAddress: *mut core::ffi::c_void,
    pub GPUAddress: u64,
    pub SizeInBytes: u64,
    pub NRegisteredNodes: u32,
    pub NMappedNodes: u32,
    pub RegisteredNodes: *const u32,
    pub MappedNodes: *const u32,
    pub UserData: *mut core::ffi::c_void,
}

/// `HsaQueueResource`.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy)]
pub struct HsaQueueResource {
    pub QueueId: u64,
    pub Queue_DoorBell: *mut u64,
    pub Queue_write_ptr: *mut u64,
    pub Queue_read_ptr: *mut u64,
    pub ErrorReason: *mut i64,
}

/// `HsaGpuTileConfig`: the caller's arrays and their capacities in, the
/// counts written and the address configuration out.
#[repr(C, packed(4))]
#[derive(Debug, Clone, Copy)]
pub struct HsaGpuTileConfig {
    pub TileConfig: *mut u32,
    pub MacroTileConfig: *mut u32,
    pub NumTileConfigs: u32,
    pub NumMacroTileConfigs: u32,
    pub GbAddrConfig: u32,
    pub NumBanks: u32,
    pub NumRanks: u32,
    pub Reserved: [u32; 7],
}
