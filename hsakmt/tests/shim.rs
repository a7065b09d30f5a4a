//! The exported functions against the MI210 model, in the order ROCR's
//! `hsa_init` calls them (`/usr/lib/.../libhsa-runtime64.so.1`: `AMD::Load`,
//! `BuildTopology`, the GPU agent, the signal pool, the trap handler),
//! then what is refused and the teardown. One test: the device is
//! process-wide, as KFD's is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use core::ffi::c_void;
use hsakmt::abi::*;
use hsakmt::*;

#[test]
fn rocr_init_sequence_on_the_model() {
    // Nothing answers before the device is open.
    let mut sys = HsaSystemProperties::default();
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtAcquireSystemProperties(&mut sys) },
        status::KERNEL_IO_CHANNEL_NOT_OPENED
    );
    assert_eq!(hsaKmtOpenKFD(), status::SUCCESS);

    let mut v = HsaVersionInfo::default();
    // SAFETY: every pointer is to a live local of the declared type (or
    // null where the interface allows it), or one this library returned.
    assert_eq!(unsafe { hsaKmtGetVersion(&mut v) }, status::SUCCESS);
    assert_eq!({ v.KernelInterfaceMajorVersion }, 1);
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtAcquireSystemProperties(&mut sys) },
        status::SUCCESS
    );
    assert_eq!({ sys.NumNodes }, 2);

    let mut cpu = HsaNodeProperties::zeroed();
    let mut gpu = HsaNodeProperties::zeroed();
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtGetNodeProperties(0, &mut cpu) },
        status::SUCCESS
    );
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtGetNodeProperties(1, &mut gpu) },
        status::SUCCESS
    );
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtGetNodeProperties(2, &mut gpu) },
        status::INVALID_NODE_UNIT
    );
    assert!({ cpu.NumCPUCores } > 0);
    assert_eq!({ cpu.NumFComputeCores }, 0);
    // 104 CUs (the part) x 4 SIMDs (gfx9's NUM_SIMD_PER_CU).
    assert_eq!({ gpu.NumFComputeCores }, 416);
    assert_eq!({ gpu.NumCPUCores }, 0);
    // EngineId 9.0.10 (gfx_target_version 90010): uCode 0, Major 9 at
    // bit 10, Minor 0 at 16, Stepping 10 at 24.
    assert_eq!({ gpu.EngineId }, 9 << 10 | 10 << 24);
    // DoorbellType 2 (bits 12-13): ROCR's 64-bit AQL doorbell on gfx9.
    assert_eq!(({ gpu.Capability } >> 12) & 3, 2);
    assert_eq!({ gpu.DeviceId }, 0x740F);
    assert_eq!({ gpu.VendorId }, 0x1002);

    let mut banks = [HsaMemoryProperties::default(); 3];
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtGetNodeMemoryProperties(1, 3, banks.as_mut_ptr()) },
        status::SUCCESS
    );
    assert_eq!({ banks[0].HeapType }, heap::FRAME_BUFFER_PUBLIC);
    assert_eq!({ banks[0].SizeInBytes }, 64 << 30);
    // ROCR asserts the LDS aperture's high half is nonzero.
    assert_eq!({ banks[1].VirtualBaseAddress } >> 32, 0x1_0000);
    let mut caches = [HsaCacheProperties {
        ProcessorIdLow: 0,
        CacheLevel: 0,
        CacheSize: 0,
        CacheLineSize: 0,
        CacheLinesPerTag: 0,
        CacheAssociativity: 0,
        CacheLatency: 0,
        CacheType: 0,
        SiblingMap: [0; CPU_SIBLINGS],
    }; 2];
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtGetNodeCacheProperties(1, gpu.FComputeIdLo, 2, caches.as_mut_ptr()) },
        status::SUCCESS
    );
    assert_eq!({ caches[1].CacheLevel }, 2);
    let mut links = [HsaIoLinkProperties::default(); 1];
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtGetNodeIoLinkProperties(1, 1, links.as_mut_ptr()) },
        status::SUCCESS
    );
    assert_eq!(({ links[0].NodeFrom }, { links[0].NodeTo }), (1, 0));

    let mut clocks = HsaClockCounters::default();
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtGetClockCounters(1, &mut clocks) },
        status::SUCCESS
    );
    assert_eq!({ clocks.SystemClockFrequencyHz }, 1_000_000_000);
    let mut xnack = -1;
    // SAFETY: every pointer is to a live local of the declared type (or
    // null where the interface allows it), or one this library returned.
    assert_eq!(unsafe { hsaKmtGetXNACKMode(&mut xnack) }, status::SUCCESS);
    assert_eq!(xnack, 0);
    assert_eq!(
        hsaKmtRuntimeEnable(core::ptr::null_mut(), false),
        status::NOT_SUPPORTED
    );

    // The signal pool page: system memory, host-accessible, uncached.
    let mut p: *mut c_void = core::ptr::null_mut();
    let flags = mem_flags::HOST_ACCESS | 1 << 17;
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtAllocMemory(0, 0x1000, flags, &mut p) },
        status::SUCCESS
    );
    assert!(!p.is_null());
    // SAFETY: the page hsaKmtAllocMemory just returned.
    unsafe { p.cast::<u64>().write_volatile(0x1234) };
    let mut gpu_va = 0u64;
    let mut node = 1u32;
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtMapMemoryToGPUNodes(p, 0x1000, &mut gpu_va, 0, 1, &mut node) },
        status::SUCCESS
    );
    // GPU VA = host address: the region the gmc step mapped.
    assert_eq!(gpu_va, p as u64);
    let mut info = HsaPointerInfo {
        Type: 99,
        Node: 0,
        MemFlags: 0,
        CPUAddress: core::ptr::null_mut(),
        GPUAddress: 0,
        SizeInBytes: 0,
        NRegisteredNodes: 0,
        NMappedNodes: 0,
        RegisteredNodes: core::ptr::null(),
        MappedNodes: core::ptr::null(),
        UserData: core::ptr::null_mut(),
    };
    let inside = p.cast::<u8>().wrapping_add(8).cast::<c_void>();
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtQueryPointerInfo(inside, &mut info) },
        status::SUCCESS
    );
    assert_eq!({ info.Type }, pointer_type::ALLOCATED);
    assert_eq!({ info.GPUAddress }, p as u64);
    let far = 0x10usize as *const c_void;
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtQueryPointerInfo(far, &mut info) },
        status::ERROR
    );
    assert_eq!({ info.Type }, pointer_type::UNKNOWN);

    // The 4 GiB scratch reservation: address space only. ROCR backs a
    // piece of it for a queue (`AcquireQueueScratch()`:
    // `hsaKmtMapMemoryToGPU(piece, size)`); the library puts VRAM there,
    // as the thunk's `_fmm_map_to_gpu_scratch()` does. An overlapping
    // piece is refused; unmapping gives the VRAM back.
    let mut s: *mut c_void = core::ptr::null_mut();
    let sflags = mem_flags::SCRATCH | mem_flags::HOST_ACCESS;
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtAllocMemory(1, 1 << 32, sflags, &mut s) },
        status::SUCCESS
    );
    let piece = s.wrapping_byte_add(0x10000);
    let mut alt = 0u64;
    assert_eq!(
        hsaKmtMapMemoryToGPU(piece, 0x20000, &mut alt),
        status::SUCCESS
    );
    assert_eq!(alt, piece as u64);
    assert_eq!(
        hsaKmtMapMemoryToGPU(s.wrapping_byte_add(0x20000), 0x1000, core::ptr::null_mut()),
        status::NO_MEMORY,
        "a piece overlapping a mapped one"
    );
    assert_eq!(hsaKmtUnmapMemoryToGPU(piece), status::SUCCESS);
    assert_eq!(hsaKmtUnmapMemoryToGPU(piece), status::INVALID_PARAMETER);
    assert_eq!(
        hsaKmtMapMemoryToGPU(piece, 0x20000, core::ptr::null_mut()),
        status::SUCCESS
    );
    // VRAM (the GPU node, NonPaged, as ROCR's coarse-grained pool asks):
    // cleared, reachable by the CPU at the address the GPU uses, mapped,
    // owned by node 1; more than the user VRAM holds is refused.
    let mut vram: *mut c_void = core::ptr::null_mut();
    let vflags = mem_flags::NON_PAGED | mem_flags::HOST_ACCESS | mem_flags::COARSE_GRAIN;
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtAllocMemory(1, 2 << 20, vflags, &mut vram) },
        status::SUCCESS
    );
    assert_eq!(vram as u64 % 4096, 0);
    // SAFETY: the allocation is 2 MiB of host-visible VRAM.
    unsafe {
        assert_eq!(vram.cast::<u32>().add(1000).read_volatile(), 0);
        vram.cast::<u32>().add(1000).write_volatile(0xC0DE);
        assert_eq!(vram.cast::<u32>().add(1000).read_volatile(), 0xC0DE);
    }
    let mut nodes = [1u32];
    let mut alt = 0u64;
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtMapMemoryToGPUNodes(vram, 2 << 20, &mut alt, 0, 1, nodes.as_mut_ptr()) },
        status::SUCCESS
    );
    let mut info = core::mem::MaybeUninit::<HsaPointerInfo>::zeroed();
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtQueryPointerInfo(vram.cast::<u8>().add(4096).cast(), info.as_mut_ptr()) },
        status::SUCCESS
    );
    // SAFETY: written by the call above.
    let info = unsafe { info.assume_init() };
    assert_eq!({ info.Node }, 1);
    assert_eq!({ info.GPUAddress }, vram as u64);
    let mut too_big: *mut c_void = core::ptr::null_mut();
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtAllocMemory(1, 1 << 30, vflags, &mut too_big) },
        status::NO_MEMORY
    );
    assert_eq!(hsaKmtUnmapMemoryToGPU(vram), status::SUCCESS);
    // SAFETY: every pointer is to a live local of the declared type (or
    // null where the interface allows it), or one this library returned.
    assert_eq!(unsafe { hsaKmtFreeMemory(vram, 2 << 20) }, status::SUCCESS);

    assert_eq!(
        hsaKmtSetTrapHandler(1, p, 0x1000, p, 0x1000),
        status::SUCCESS
    );

    // Events: set then waited; unset, an infinite wait still returns
    // within the slice.
    let desc = HsaEventDescriptor {
        EventType: event_type::SIGNAL,
        ..Default::default()
    };
    let mut e: *mut HsaEvent = core::ptr::null_mut();
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtCreateEvent(&desc, false, false, &mut e) },
        status::SUCCESS
    );
    // SAFETY: every pointer is to a live local of the declared type (or
    // null where the interface allows it), or one this library returned.
    assert_eq!(unsafe { hsaKmtSetEvent(e) }, status::SUCCESS);
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtWaitOnEvent(e, 0xFFFF_FFFF) },
        status::SUCCESS
    );
    let t = std::time::Instant::now();
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtWaitOnEvent(e, 0xFFFF_FFFF) },
        status::WAIT_TIMEOUT
    );
    assert!(t.elapsed() < std::time::Duration::from_millis(500));
    let mut list = [e];
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtWaitOnMultipleEvents(list.as_mut_ptr(), 1, false, 1) },
        status::WAIT_TIMEOUT
    );
    assert_eq!(hsaKmtDestroyEvent(e), status::SUCCESS);
    assert_eq!(hsaKmtDestroyEvent(e), status::INVALID_HANDLE);
    assert_eq!(hsaKmtDestroyEvent(core::ptr::null_mut()), status::SUCCESS);

    // What is not done is refused, never a silent success: a PM4 compute
    // queue (`HSA_QUEUE_COMPUTE`).
    let mut res = HsaQueueResource {
        QueueId: 0,
        Queue_DoorBell: core::ptr::null_mut(),
        Queue_write_ptr: core::ptr::null_mut(),
        Queue_read_ptr: core::ptr::null_mut(),
        ErrorReason: core::ptr::null_mut(),
    };
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtCreateQueue(1, 1, 100, 3, p, 0x1000, core::ptr::null_mut(), &mut res) },
        status::NOT_SUPPORTED
    );
    // Registering the library's own allocation: refused (it is not the
    // caller's memory to pin).
    assert_eq!(hsaKmtRegisterMemoryWithFlags(p, 0x1000, 0), status::ERROR);
    // The tile configuration: gfx9's tables are zero (amdgpu sets none),
    // the counts clamp to amdgpu's 32 and 16 entries, GB_ADDR_CONFIG
    // carries `gfx_v9_0_gpu_early_init()`'s 9.4.2 bits.
    let mut tiles = [0xffff_ffffu32; 40];
    let mut macros = [0xffff_ffffu32; 20];
    let mut tc = HsaGpuTileConfig {
        TileConfig: tiles.as_mut_ptr(),
        MacroTileConfig: macros.as_mut_ptr(),
        NumTileConfigs: 40,
        NumMacroTileConfigs: 20,
        GbAddrConfig: 0,
        NumBanks: 7,
        NumRanks: 7,
        Reserved: [0; 7],
    };
    // SAFETY: every pointer is to a live local of the declared type (or
    // null where the interface allows it), or one this library returned.
    assert_eq!(unsafe { hsaKmtGetTileConfig(1, &mut tc) }, status::SUCCESS);
    assert_eq!(
        ({ tc.NumTileConfigs }, { tc.NumMacroTileConfigs }),
        (32, 16)
    );
    assert!(tiles[..32].iter().all(|&t| t == 0) && tiles[32..].iter().all(|&t| t == !0));
    assert!(macros[..16].iter().all(|&t| t == 0) && macros[16..].iter().all(|&t| t == !0));
    assert_eq!({ tc.GbAddrConfig } & 0xf3e7_77ff, 0x2201_4042);
    assert_eq!(({ tc.NumBanks }, { tc.NumRanks }), (0, 0));
    assert_eq!(
        // SAFETY: `tc` is a live local whose arrays hold its capacities.
        unsafe { hsaKmtGetTileConfig(0, &mut tc) },
        status::INVALID_NODE_UNIT
    );

    assert_eq!(hsaKmtUnmapMemoryToGPU(p), status::SUCCESS);
    // SAFETY: every pointer is to a live local of the declared type (or
    // null where the interface allows it), or one this library returned.
    assert_eq!(unsafe { hsaKmtFreeMemory(p, 0x1000) }, status::SUCCESS);
    assert_eq!(
        // SAFETY: every pointer is to a live local of the declared type (or
        // null where the interface allows it), or one this library returned.
        unsafe { hsaKmtFreeMemory(p, 0x1000) },
        status::INVALID_PARAMETER
    );
    // SAFETY: every pointer is to a live local of the declared type (or
    // null where the interface allows it), or one this library returned.
    assert_eq!(unsafe { hsaKmtFreeMemory(s, 1 << 32) }, status::SUCCESS);
    // The last close tears the device down to a quiescent model.
    assert_eq!(hsaKmtCloseKFD(), status::SUCCESS);
    assert_eq!(hsaKmtCloseKFD(), status::KERNEL_IO_CHANNEL_NOT_OPENED);
}

#[test]
fn the_gfx_info_is_the_model_parts_vbios() {
    use barebell_vfio_peer::vbios::GfxInfo;
    use hsakmt::topology::MI210_GFX_INFO as t;
    let v = GfxInfo::MI210;
    assert_eq!(t.shader_engines, u32::from(v.max_shader_engines));
    assert_eq!(t.sh_per_se, u32::from(v.max_sh_per_se));
    assert_eq!(t.cu_per_sh, u32::from(v.max_cu_per_sh));
    assert_eq!(t.max_waves_per_simd, u32::from(v.max_waves_per_simd));
    assert_eq!(t.lds_kib, u32::from(v.lds_size_kib));
    assert_eq!(t.wave_size, u32::from(v.wave_size));
    assert_eq!(
        t.scratch_slots_per_cu,
        u32::from(v.max_scratch_slots_per_cu)
    );
    // The model's shader arrays, whose harvest registers Linux and this
    // library count CUs through, have the VBIOS's split.
    let a = barebell_model::parts::MI210_ARRAYS;
    assert_eq!(
        (a.shader_engines, a.sh_per_se, a.cu_per_sh),
        (t.shader_engines, t.sh_per_se, t.cu_per_sh)
    );
}

#[test]
fn the_heap_reuses_what_is_freed() {
    use hsakmt::device::Heap;
    let mut h = Heap::new(0x10_0000, 0x4000);
    let a = h.alloc(0x1000, 0x1000).unwrap();
    let b = h.alloc(0x2000, 0x1000).unwrap();
    assert_eq!((a, b), (0x10_0000, 0x10_1000));
    assert_eq!(h.alloc(0x2000, 0x1000), None);
    h.free(a, 0x1000);
    h.free(b, 0x2000);
    assert_eq!(h.free_bytes(), 0x4000);
    assert_eq!(h.alloc(0x4000, 0x1000), Some(0x10_0000));
}
