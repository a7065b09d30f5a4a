//! Every struct of `abi.rs` against Debian's `hsakmttypes.h`
//! (`libhsakmt-dev` 5.2.3, the header ROCR 5.2.3 was built with): the C
//! compiler prints each size and offset, and the Rust layout must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use hsakmt::abi::*;
use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};

const HEADER: &str = "/usr/include/hsakmttypes.h";

macro_rules! layout {
    ($( $t:ident : [$($f:ident),* $(,)?] ),* $(,)?) => {{
        let mut rust = BTreeMap::new();
        let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n#include <hsakmttypes.h>\nint main(void) {\n");
        $(
            rust.insert(format!("{} size", stringify!($t)), size_of::<$t>());
            c.push_str(&format!("printf(\"%s size %zu\\n\", \"{0}\", sizeof({0}));\n", stringify!($t)));
            $(
                rust.insert(format!("{}.{}", stringify!($t), stringify!($f)), offset_of!($t, $f));
                c.push_str(&format!(
                    "printf(\"%s %zu\\n\", \"{0}.{1}\", offsetof({0}, {1}));\n",
                    stringify!($t),
                    stringify!($f)
                ));
            )*
        )*
        c.push_str("return 0;\n}\n");
        (rust, c)
    }};
}

#[test]
fn every_struct_matches_the_c_header() {
    assert!(
        std::path::Path::new(HEADER).exists(),
        "{HEADER} missing: `cargo xtask deps` installs libhsakmt-dev"
    );
    let (rust, c) = layout!(
        HsaVersionInfo: [KernelInterfaceMajorVersion, KernelInterfaceMinorVersion],
        HsaSystemProperties: [NumNodes, PlatformOem, PlatformId, PlatformRev],
        HsaNodeProperties: [
            NumCPUCores, NumFComputeCores, NumMemoryBanks, NumCaches, NumIOLinks,
            CComputeIdLo, FComputeIdLo, Capability, MaxWavesPerSIMD, LDSSizeInKB,
            GDSSizeInKB, WaveFrontSize, NumShaderBanks, NumArrays, NumCUPerArray,
            NumSIMDPerCU, MaxSlotsScratchCU, EngineId, VendorId, DeviceId, LocationId,
            LocalMemSize, MaxEngineClockMhzFCompute, MaxEngineClockMhzCCompute,
            DrmRenderMinor, MarketingName, AMDName, uCodeEngineVersions,
            DebugProperties, HiveID, NumSdmaEngines, NumSdmaXgmiEngines,
            NumSdmaQueuesPerEngine, NumCpQueues, NumGws, Reserved2, Domain, UniqueID,
            VGPRSizePerCU, SGPRSizePerCU, Reserved,
        ],
        HsaMemoryProperties: [HeapType, SizeInBytes, Flags, Width, MemoryClockMax, VirtualBaseAddress],
        HsaCacheProperties: [
            ProcessorIdLow, CacheLevel, CacheSize, CacheLineSize, CacheLinesPerTag,
            CacheAssociativity, CacheLatency, CacheType, SiblingMap,
        ],
        HsaIoLinkProperties: [
            IoLinkType, VersionMajor, VersionMinor, NodeFrom, NodeTo, Weight,
            MinimumLatency, MaximumLatency, MinimumBandwidth, MaximumBandwidth,
            RecTransferSize, Flags,
        ],
        HsaClockCounters: [GPUClockCounter, CPUClockCounter, SystemClockCounter, SystemClockFrequencyHz],
        HsaEventDescriptor: [EventType, NodeId, SyncVar],
        HsaEvent: [EventId, EventData],
        HsaEventData: [EventType, EventData, HWData1, HWData2, HWData3],
        HsaPointerInfo: [
            Type, Node, MemFlags, CPUAddress, GPUAddress, SizeInBytes, NRegisteredNodes,
            NMappedNodes, RegisteredNodes, MappedNodes, UserData,
        ],
        HsaQueueResource: [QueueId, Queue_DoorBell, Queue_write_ptr, Queue_read_ptr, ErrorReason],
        HsaGpuTileConfig: [TileConfig, MacroTileConfig, NumTileConfigs, NumMacroTileConfigs, GbAddrConfig, NumBanks, NumRanks, Reserved],
    );
    let dir = std::env::temp_dir().join(format!("barebell-hsakmt-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, c).unwrap();
    let cc = std::process::Command::new("cc")
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("cc (gcc from `cargo xtask deps`)");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let out = std::process::Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut seen = 0;
    for line in text.lines() {
        let (key, value) = line.rsplit_once(' ').unwrap();
        let c: usize = value.parse().unwrap();
        assert_eq!(rust.get(key), Some(&c), "{key}: C says {c}");
        seen += 1;
    }
    assert_eq!(seen, rust.len());
    // The figures the research measured on this header, as a spot check.
    assert_eq!(size_of::<HsaNodeProperties>(), 356);
    assert_eq!(size_of::<HsaCacheProperties>(), 1056);
    assert_eq!(size_of::<HsaEvent>(), 48);
}
