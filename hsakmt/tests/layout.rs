//! Every struct of `abi.rs` against Debian's `hsakmttypes.h`
//! (`libhsakmt-dev` 5.2.3, the header ROCR 5.2.3 was built with): the C
//! compiler prints each size and offset, and the Rust layout must agree;
//! likewise every enum value and bitfield position the library uses.
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
    // The header's constants and bitfield positions the library uses,
    // printed by the same program (GCC statement expressions set one
    // bitfield and read the word back).
    let (mut rust, mut c) = (rust, c);
    let flag = |ty: &str, field: &str| {
        format!("({{ union {{ {ty} f; unsigned v; }} u = {{0}}; u.f.{field} = 1; u.v; }})")
    };
    let mem = |field: &str| flag("HsaMemFlags", &format!("ui32.{field}"));
    let fail = |field: &str| flag("HsaAccessAttributeFailure", field);
    let constants: [(&str, String, u32); 16] = [
        (
            "HSA_QUEUE_COMPUTE_AQL",
            "HSA_QUEUE_COMPUTE_AQL".into(),
            hsakmt::queues::QUEUE_COMPUTE_AQL,
        ),
        (
            "HSA_QUEUE_SDMA",
            "HSA_QUEUE_SDMA".into(),
            hsakmt::queues::QUEUE_SDMA,
        ),
        (
            "HSA_QUEUE_SDMA_XGMI",
            "HSA_QUEUE_SDMA_XGMI".into(),
            hsakmt::queues::QUEUE_SDMA_XGMI,
        ),
        (
            "HSA_EVENTTYPE_SIGNAL",
            "HSA_EVENTTYPE_SIGNAL".into(),
            event_type::SIGNAL,
        ),
        (
            "HSA_EVENTTYPE_MEMORY",
            "HSA_EVENTTYPE_MEMORY".into(),
            event_type::MEMORY,
        ),
        (
            "HSA_POINTER_UNKNOWN",
            "HSA_POINTER_UNKNOWN".into(),
            pointer_type::UNKNOWN,
        ),
        (
            "HSA_POINTER_ALLOCATED",
            "HSA_POINTER_ALLOCATED".into(),
            pointer_type::ALLOCATED,
        ),
        (
            "HSA_POINTER_REGISTERED_USER",
            "HSA_POINTER_REGISTERED_USER".into(),
            pointer_type::REGISTERED_USER,
        ),
        ("NonPaged", mem("NonPaged"), mem_flags::NON_PAGED),
        ("ReadOnly", mem("ReadOnly"), mem_flags::READ_ONLY),
        ("HostAccess", mem("HostAccess"), mem_flags::HOST_ACCESS),
        ("Scratch", mem("Scratch"), mem_flags::SCRATCH),
        (
            "ExecuteAccess",
            mem("ExecuteAccess"),
            mem_flags::EXECUTE_ACCESS,
        ),
        (
            "NotPresent",
            fail("NotPresent"),
            hsakmt::events::failure::NOT_PRESENT,
        ),
        (
            "Failure.ReadOnly",
            fail("ReadOnly"),
            hsakmt::events::failure::READ_ONLY,
        ),
        (
            "NoExecute",
            fail("NoExecute"),
            hsakmt::events::failure::NO_EXECUTE,
        ),
    ];
    let end = c.rfind("return 0;").unwrap();
    let mut prints = String::new();
    for (name, expr, value) in &constants {
        rust.insert(format!("const {name}"), *value as usize);
        prints.push_str(&format!(
            "printf(\"%s %u\\n\", \"const {name}\", (unsigned)({expr}));\n"
        ));
    }
    c.insert_str(end, &prints);
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
