//! `libhsakmt.so.1` for ROCm 5.2.3's ROCR (Debian's `libhsa-runtime64-1`)
//! over barebell: the 42 `hsaKmt*` functions ROCR imports (version node
//! `HSAKMT_1`, `hsakmt.map`), backed by barebell's bring-up of the MI210
//! model instead of KFD, or of a card `BAREBELL_HSAKMT_DEVICE` names
//! ([`backend`]; never run on one).
//!
//! What each function does, in the user's terms:
//! - topology ([`topology`]): node 0 the host, node 1 the MI210 (gfx90a);
//! - memory ([`device`]): system memory from the region the bring-up maps
//!   into the process page tables, at GPU VA = host address; scratch as an
//!   address reservation whose pieces ROCR maps are backed with VRAM;
//! - events ([`events`]): host events, every wait bounded;
//! - queues ([`queues`]): AQL compute and SDMA queues added to the runlist of the
//!   HWS the bring-up left running, with ROCR's ring and read/write
//!   pointers and a doorbell in the device's doorbell aperture; a thread
//!   ([`service`]) gives the device its own time between calls;
//! - the trap handler recorded; clock counters from `CLOCK_MONOTONIC_RAW`.
//!
//! - VRAM (the GPU node's `NonPaged` allocations) from the user VRAM the
//!   bring-up maps at its host address; the caller's own memory
//!   registered and mapped through a bus window and the process tables;
//!   the tile configuration amdgpu reports for gfx9.
//!
//! Not done yet, each refused with `HSAKMT_STATUS_NOT_SUPPORTED` (never a
//! success ROCR would trust): PM4 queues, SVM, IPC, graphics interop, GWS, CU masks,
//! memory policy, XNACK on, the debugger runtime (`hsaKmtRuntimeEnable`,
//! answered as the 5.2.3 thunk answers without KFD debug support).
//!
//! The device is brought up by `hsaKmtOpenKFD` and torn down by
//! `hsaKmtCloseKFD` or, if the process ends with it open, by this
//! library's destructor (`.fini_array`): the dynamic linker runs it after
//! every `atexit` handler and after the destructors of the libraries that
//! depend on this one (ROCR, HIP), which may still free memory and
//! destroy queues on their way out, as they do on KFD, whose file the
//! kernel closes only once the process is gone.

pub mod abi;
pub mod backend;
pub mod device;
pub mod events;
pub mod queues;
pub mod service;
pub mod topology;

use abi::*;
use core::ffi::c_void;
use device::{Allocation, Kfd, Kind, PAGE};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The open device and how many opens hold it.
struct Open {
    kfd: Kfd,
    count: u32,
    /// The device's own time ([`service`]), while open.
    service: Option<service::Service>,
}

/// SAFETY: the device and its model are reached only through [`STATE`]'s
/// mutex; the model's own state is behind its own locks, and the raw
/// pointers the bring-up holds point into memory the model owns for the
/// process's life.
unsafe impl Send for Open {}

// Every export in version node `HSAKMT_1` as its default version
// (`name@@HSAKMT_1`), the node `hsakmt.map` defines: rustc's own version
// script for a cdylib lists the exports unversioned and comes first on
// the link line, so the versions are set in the object itself.
core::arch::global_asm!(
    ".symver hsaKmtAcquireSystemProperties, hsaKmtAcquireSystemProperties@@HSAKMT_1",
    ".symver hsaKmtAllocMemory, hsaKmtAllocMemory@@HSAKMT_1",
    ".symver hsaKmtAllocQueueGWS, hsaKmtAllocQueueGWS@@HSAKMT_1",
    ".symver hsaKmtCloseKFD, hsaKmtCloseKFD@@HSAKMT_1",
    ".symver hsaKmtCreateEvent, hsaKmtCreateEvent@@HSAKMT_1",
    ".symver hsaKmtCreateQueue, hsaKmtCreateQueue@@HSAKMT_1",
    ".symver hsaKmtDeregisterMemory, hsaKmtDeregisterMemory@@HSAKMT_1",
    ".symver hsaKmtDestroyEvent, hsaKmtDestroyEvent@@HSAKMT_1",
    ".symver hsaKmtDestroyQueue, hsaKmtDestroyQueue@@HSAKMT_1",
    ".symver hsaKmtFreeMemory, hsaKmtFreeMemory@@HSAKMT_1",
    ".symver hsaKmtGetClockCounters, hsaKmtGetClockCounters@@HSAKMT_1",
    ".symver hsaKmtGetNodeCacheProperties, hsaKmtGetNodeCacheProperties@@HSAKMT_1",
    ".symver hsaKmtGetNodeIoLinkProperties, hsaKmtGetNodeIoLinkProperties@@HSAKMT_1",
    ".symver hsaKmtGetNodeMemoryProperties, hsaKmtGetNodeMemoryProperties@@HSAKMT_1",
    ".symver hsaKmtGetNodeProperties, hsaKmtGetNodeProperties@@HSAKMT_1",
    ".symver hsaKmtGetTileConfig, hsaKmtGetTileConfig@@HSAKMT_1",
    ".symver hsaKmtGetVersion, hsaKmtGetVersion@@HSAKMT_1",
    ".symver hsaKmtGetXNACKMode, hsaKmtGetXNACKMode@@HSAKMT_1",
    ".symver hsaKmtMapMemoryToGPU, hsaKmtMapMemoryToGPU@@HSAKMT_1",
    ".symver hsaKmtMapMemoryToGPUNodes, hsaKmtMapMemoryToGPUNodes@@HSAKMT_1",
    ".symver hsaKmtOpenKFD, hsaKmtOpenKFD@@HSAKMT_1",
    ".symver hsaKmtQueryPointerInfo, hsaKmtQueryPointerInfo@@HSAKMT_1",
    ".symver hsaKmtRegisterGraphicsHandleToNodes, hsaKmtRegisterGraphicsHandleToNodes@@HSAKMT_1",
    ".symver hsaKmtRegisterMemoryWithFlags, hsaKmtRegisterMemoryWithFlags@@HSAKMT_1",
    ".symver hsaKmtRegisterSharedHandle, hsaKmtRegisterSharedHandle@@HSAKMT_1",
    ".symver hsaKmtRegisterSharedHandleToNodes, hsaKmtRegisterSharedHandleToNodes@@HSAKMT_1",
    ".symver hsaKmtReleaseSystemProperties, hsaKmtReleaseSystemProperties@@HSAKMT_1",
    ".symver hsaKmtRuntimeDisable, hsaKmtRuntimeDisable@@HSAKMT_1",
    ".symver hsaKmtRuntimeEnable, hsaKmtRuntimeEnable@@HSAKMT_1",
    ".symver hsaKmtSVMGetAttr, hsaKmtSVMGetAttr@@HSAKMT_1",
    ".symver hsaKmtSVMSetAttr, hsaKmtSVMSetAttr@@HSAKMT_1",
    ".symver hsaKmtSetEvent, hsaKmtSetEvent@@HSAKMT_1",
    ".symver hsaKmtSetMemoryPolicy, hsaKmtSetMemoryPolicy@@HSAKMT_1",
    ".symver hsaKmtSetMemoryUserData, hsaKmtSetMemoryUserData@@HSAKMT_1",
    ".symver hsaKmtSetQueueCUMask, hsaKmtSetQueueCUMask@@HSAKMT_1",
    ".symver hsaKmtSetTrapHandler, hsaKmtSetTrapHandler@@HSAKMT_1",
    ".symver hsaKmtSetXNACKMode, hsaKmtSetXNACKMode@@HSAKMT_1",
    ".symver hsaKmtShareMemory, hsaKmtShareMemory@@HSAKMT_1",
    ".symver hsaKmtUnmapMemoryToGPU, hsaKmtUnmapMemoryToGPU@@HSAKMT_1",
    ".symver hsaKmtUpdateQueue, hsaKmtUpdateQueue@@HSAKMT_1",
    ".symver hsaKmtWaitOnEvent, hsaKmtWaitOnEvent@@HSAKMT_1",
    ".symver hsaKmtWaitOnMultipleEvents, hsaKmtWaitOnMultipleEvents@@HSAKMT_1",
);

static STATE: Mutex<Option<Open>> = Mutex::new(None);
/// The teardown at process exit, as a destructor of this object
/// (`.fini_array`; see the module docs for why not `atexit`).
// SAFETY: `.fini_array` holds pointers to `extern "C" fn()` the dynamic
// linker calls once at unload; this entry is exactly that, and
// `close_at_exit` only takes the state's lock (never poisoned into a
// panic) and tears the device down.
#[used]
#[unsafe(link_section = ".fini_array")]
static AT_EXIT: extern "C" fn() = close_at_exit;

fn state() -> MutexGuard<'static, Option<Open>> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` on the open device, or answers "not opened".
fn with_kfd(f: impl FnOnce(&mut Kfd) -> u32) -> u32 {
    match state().as_mut() {
        Some(o) => f(&mut o.kfd),
        None => status::KERNEL_IO_CHANNEL_NOT_OPENED,
    }
}

extern "C" fn close_at_exit() {
    let mut s = state();
    if let Some(mut o) = s.take() {
        if let Some(mut t) = o.service.take() {
            t.stop();
        }
        if let Err(e) = o.kfd.close() {
            eprintln!("barebell libhsakmt: tearing the device down at exit: {e}");
        }
    }
}

/// One look by the device for the [`service`] thread: skipped while a
/// call holds the device.
fn service_look() -> service::Look {
    let mut s = match STATE.try_lock() {
        Ok(s) => s,
        Err(std::sync::TryLockError::WouldBlock) => return service::Look::Idle,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
    };
    match s.as_mut() {
        Some(o) => {
            if o.kfd.step() {
                service::Look::Idle
            } else {
                service::Look::Busy
            }
        }
        None => service::Look::Closed,
    }
}

/// `hsaKmtOpenKFD`: the first call builds the model and brings it up.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtOpenKFD() -> u32 {
    let mut s = state();
    if let Some(o) = s.as_mut() {
        o.count += 1;
        return status::SUCCESS;
    }
    match Kfd::open() {
        Ok(mut kfd) => {
            let service = match service::Service::spawn(service_look) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("barebell libhsakmt: starting the device thread: {e}");
                    if let Err(e) = kfd.close() {
                        eprintln!("barebell libhsakmt: teardown: {e}");
                    }
                    return status::ERROR;
                }
            };
            *s = Some(Open {
                kfd,
                count: 1,
                service: Some(service),
            });
            status::SUCCESS
        }
        Err(e) => {
            eprintln!("barebell libhsakmt: {e}");
            status::ERROR
        }
    }
}

/// `hsaKmtCloseKFD`: the last close tears the device down.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtCloseKFD() -> u32 {
    let mut s = state();
    let Some(o) = s.as_mut() else {
        return status::KERNEL_IO_CHANNEL_NOT_OPENED;
    };
    o.count -= 1;
    if o.count > 0 {
        return status::SUCCESS;
    }
    if let Some(mut t) = o.service.take() {
        t.stop();
    }
    let r = o.kfd.close();
    *s = None;
    match r {
        Ok(()) => status::SUCCESS,
        Err(e) => {
            eprintln!("barebell libhsakmt: teardown: {e}");
            status::ERROR
        }
    }
}

/// `hsaKmtGetVersion`: KFD's ioctl interface version in Linux 6.12
/// (`KFD_IOCTL_MAJOR_VERSION` 1, `KFD_IOCTL_MINOR_VERSION` 17).
///
/// # Safety
/// `v` is null or points to writable memory for the struct.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtGetVersion(v: *mut HsaVersionInfo) -> u32 {
    if v.is_null() {
        return status::INVALID_PARAMETER;
    }
    let info = HsaVersionInfo {
        KernelInterfaceMajorVersion: 1,
        KernelInterfaceMinorVersion: 17,
    };
    // SAFETY: non-null, writable per the contract; unaligned write as the
    // struct is packed.
    unsafe { v.write_unaligned(info) };
    status::SUCCESS
}

/// `hsaKmtAcquireSystemProperties`.
///
/// # Safety
/// `p` is null or points to writable memory for the struct.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtAcquireSystemProperties(p: *mut HsaSystemProperties) -> u32 {
    if p.is_null() {
        return status::INVALID_PARAMETER;
    }
    with_kfd(|k| {
        let props = HsaSystemProperties {
            NumNodes: k.topology.nodes.len() as u32,
            ..Default::default()
        };
        // SAFETY: as the contract says.
        unsafe { p.write_unaligned(props) };
        status::SUCCESS
    })
}

/// `hsaKmtReleaseSystemProperties`: the topology is static.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtReleaseSystemProperties() -> u32 {
    status::SUCCESS
}

/// `hsaKmtGetNodeProperties`.
///
/// # Safety
/// `p` is null or points to writable memory for the struct.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtGetNodeProperties(node: u32, p: *mut HsaNodeProperties) -> u32 {
    if p.is_null() {
        return status::INVALID_PARAMETER;
    }
    with_kfd(|k| match k.topology.node(node) {
        Some(n) => {
            // SAFETY: as the contract says.
            unsafe { p.write_unaligned(n.props) };
            status::SUCCESS
        }
        None => status::INVALID_NODE_UNIT,
    })
}

/// Copies up to `n` of `items` to `out`.
///
/// # Safety
/// `out` points to `n` writable elements.
unsafe fn copy_out<T: Copy>(items: &[T], n: u32, out: *mut T) -> u32 {
    if out.is_null() {
        return status::INVALID_PARAMETER;
    }
    for (i, it) in items.iter().take(n as usize).enumerate() {
        // SAFETY: i < n, inside the caller's array.
        unsafe { out.add(i).write_unaligned(*it) };
    }
    status::SUCCESS
}

/// `hsaKmtGetNodeMemoryProperties`.
///
/// # Safety
/// `out` points to `n` writable elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtGetNodeMemoryProperties(
    node: u32,
    n: u32,
    out: *mut HsaMemoryProperties,
) -> u32 {
    with_kfd(|k| match k.topology.node(node) {
        // SAFETY: the caller's contract.
        Some(nd) => unsafe { copy_out(&nd.memory, n, out) },
        None => status::INVALID_NODE_UNIT,
    })
}

/// `hsaKmtGetNodeCacheProperties` (the processor id is the node's own).
///
/// # Safety
/// `out` points to `n` writable elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtGetNodeCacheProperties(
    node: u32,
    _processor: u32,
    n: u32,
    out: *mut HsaCacheProperties,
) -> u32 {
    with_kfd(|k| match k.topology.node(node) {
        // SAFETY: the caller's contract.
        Some(nd) => unsafe { copy_out(&nd.caches, n, out) },
        None => status::INVALID_NODE_UNIT,
    })
}

/// `hsaKmtGetNodeIoLinkProperties`.
///
/// # Safety
/// `out` points to `n` writable elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtGetNodeIoLinkProperties(
    node: u32,
    n: u32,
    out: *mut HsaIoLinkProperties,
) -> u32 {
    with_kfd(|k| match k.topology.node(node) {
        // SAFETY: the caller's contract.
        Some(nd) => unsafe { copy_out(&nd.links, n, out) },
        None => status::INVALID_NODE_UNIT,
    })
}

fn monotonic_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut t) };
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}

/// `hsaKmtGetClockCounters`: every counter is `CLOCK_MONOTONIC_RAW` in
/// ns (the model's CP stamps with that clock), 1 GHz.
///
/// # Safety
/// `c` is null or points to writable memory for the struct.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtGetClockCounters(node: u32, c: *mut HsaClockCounters) -> u32 {
    if c.is_null() {
        return status::INVALID_PARAMETER;
    }
    with_kfd(|k| {
        if k.topology.node(node).is_none() {
            return status::INVALID_NODE_UNIT;
        }
        let now = monotonic_ns();
        let v = HsaClockCounters {
            GPUClockCounter: now,
            CPUClockCounter: now,
            SystemClockCounter: now,
            SystemClockFrequencyHz: 1_000_000_000,
        };
        // SAFETY: as the contract says.
        unsafe { c.write_unaligned(v) };
        status::SUCCESS
    })
}

/// `hsaKmtGetXNACKMode`: XNACK is off (ROCR then picks
/// `gfx90a:sramecc+:xnack-`).
///
/// # Safety
/// `enable` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtGetXNACKMode(enable: *mut i32) -> u32 {
    if enable.is_null() {
        return status::INVALID_PARAMETER;
    }
    // SAFETY: as the contract says.
    unsafe { enable.write_unaligned(0) };
    status::SUCCESS
}

/// `hsaKmtSetXNACKMode`: off is what the device runs; on is refused.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtSetXNACKMode(enable: i32) -> u32 {
    if enable == 0 {
        status::SUCCESS
    } else {
        status::NOT_SUPPORTED
    }
}

/// `hsaKmtRuntimeEnable`: no debugger runtime, as the 5.2.3 thunk answers
/// when KFD has no debug support (ROCR then keeps its legacy mode).
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtRuntimeEnable(_r_debug: *mut c_void, _setup_ttmp: bool) -> u32 {
    status::NOT_SUPPORTED
}

/// `hsaKmtRuntimeDisable`: never enabled.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtRuntimeDisable() -> u32 {
    status::NOT_SUPPORTED
}

/// `hsaKmtSetTrapHandler`: recorded for the process (what KFD keeps for
/// MAP_PROCESS's TBA/TMA).
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtSetTrapHandler(
    node: u32,
    tba: *mut c_void,
    tba_size: u64,
    tma: *mut c_void,
    tma_size: u64,
) -> u32 {
    with_kfd(|k| {
        if node != 1 {
            return status::INVALID_NODE_UNIT;
        }
        k.trap = Some([tba as u64, tba_size, tma as u64, tma_size]);
        status::SUCCESS
    })
}

/// `hsaKmtAllocMemory`: system memory on node 0 or 1 from the mapped
/// region, VRAM (`NonPaged` on node 1) from the user VRAM, or a scratch
/// reservation.
///
/// # Safety
/// `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtAllocMemory(
    node: u32,
    size: u64,
    flags: u32,
    out: *mut *mut c_void,
) -> u32 {
    if out.is_null() || size == 0 {
        return status::INVALID_PARAMETER;
    }
    with_kfd(|k| {
        if k.topology.node(node).is_none() {
            return status::INVALID_NODE_UNIT;
        }
        let (at, kind) = if flags & mem_flags::SCRATCH != 0 {
            let Some(len) = size.checked_next_multiple_of(PAGE) else {
                return status::INVALID_PARAMETER;
            };
            // SAFETY: a fresh anonymous reservation, no access.
            let p = unsafe {
                libc::mmap(
                    core::ptr::null_mut(),
                    len as usize,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return status::NO_MEMORY;
            }
            (p as u64, Kind::Reserved)
        } else if node == 1 && flags & mem_flags::NON_PAGED != 0 {
            // VRAM (the thunk's rule: a GPU node and NonPaged): from the
            // user VRAM, at GPU VA = its host address through BAR0.
            let Some(at) = k.vram.alloc(size, PAGE) else {
                return status::NO_MEMORY;
            };
            // SAFETY: the VRAM heap hands out ranges of the user VRAM's
            // host view (BAR0), which the bring-up gave this library;
            // nothing else holds this range. Cleared, as KFD asks of the
            // VRAM BOs it makes (`AMDGPU_GEM_CREATE_VRAM_CLEARED` in
            // `amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu()`).
            unsafe { core::ptr::write_bytes(at as *mut u8, 0, size as usize) };
            (at, Kind::Vram)
        } else {
            let Some(at) = k.heap.alloc(size, PAGE) else {
                return status::NO_MEMORY;
            };
            // SAFETY: the heap hands out ranges of the mapped user region,
            // which this process owns; nothing else holds this range.
            unsafe { core::ptr::write_bytes(at as *mut u8, 0, size as usize) };
            (at, Kind::System)
        };
        k.allocations.insert(
            at,
            Allocation {
                size,
                node,
                flags,
                kind,
                user_data: 0,
                gpu_mapped: false,
                bus: 0,
            },
        );
        // SAFETY: `out` is writable per the contract.
        unsafe { out.write_unaligned(at as *mut c_void) };
        status::SUCCESS
    })
}

/// `hsaKmtFreeMemory`.
///
/// # Safety
/// `at` is an address this library allocated (a reservation is unmapped).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtFreeMemory(at: *mut c_void, size: u64) -> u32 {
    with_kfd(|k| {
        if k.queue_uses(at as u64) {
            eprintln!("barebell libhsakmt: hsaKmtFreeMemory({at:p}): a live queue uses it");
            return status::ERROR;
        }
        let mapped = k
            .allocations
            .get(&(at as u64))
            .is_some_and(|a| a.gpu_mapped && a.kind != Kind::Registered);
        if mapped && let Err(e) = k.unmap_allocation(at as u64) {
            eprintln!("barebell libhsakmt: hsaKmtFreeMemory({at:p}): unmapping: {e}");
            return status::ERROR;
        }
        let Some(a) = k.allocations.remove(&(at as u64)) else {
            eprintln!(
                "barebell libhsakmt: hsaKmtFreeMemory({at:p}, {size:#x}): not an allocation of this library"
            );
            return status::INVALID_PARAMETER;
        };
        match a.kind {
            Kind::System => k.heap.free(at as u64, a.size),
            Kind::Vram => k.vram.free(at as u64, a.size),
            Kind::Registered => {
                // Registered memory is the caller's: deregister it.
                k.allocations.insert(at as u64, a);
                eprintln!(
                    "barebell libhsakmt: hsaKmtFreeMemory({at:p}): registered memory is deregistered, not freed"
                );
                return status::INVALID_PARAMETER;
            }
            Kind::Reserved => {
                let len = a.size.next_multiple_of(PAGE) as usize;
                if let Err(e) = k.unmap_scratch_in(at as u64, len as u64) {
                    eprintln!("barebell libhsakmt: hsaKmtFreeMemory({at:p}): its scratch: {e}");
                }
                // SAFETY: the reservation this library mapped, released
                // once (it just left the table).
                unsafe { libc::munmap(at, len) };
            }
        }
        status::SUCCESS
    })
}

/// Maps an allocation for the GPU ([`device::Kfd::map_allocation`]), or
/// backs part of a scratch reservation with VRAM
/// ([`device::Kfd::map_scratch`]); its GPU address is its host address.
fn map(at: *mut c_void, size: u64, alt: *mut u64) -> u32 {
    with_kfd(|k| {
        let key = at as u64;
        // Part of a scratch reservation: backed with VRAM there.
        if k.scratch_reservation(key, size.max(1)).is_some() {
            let r = k.map_scratch(key, size);
            return match r {
                Ok(()) => {
                    if !alt.is_null() {
                        // SAFETY: non-null; ROCR passes its own u64.
                        unsafe { alt.write_unaligned(key) };
                    }
                    status::SUCCESS
                }
                Err(e) => {
                    eprintln!("barebell libhsakmt: mapping scratch at {at:p}: {e}");
                    status::NO_MEMORY
                }
            };
        }
        let Some(a) = k.allocations.get(&key).copied() else {
            eprintln!("barebell libhsakmt: mapping {at:p}: not an allocation of this library");
            return status::INVALID_PARAMETER;
        };
        if size > a.size.max(1).next_multiple_of(PAGE) {
            return status::INVALID_PARAMETER;
        }
        match k.map_allocation(key) {
            Ok(()) => {
                if !alt.is_null() {
                    // SAFETY: non-null; ROCR passes its own u64.
                    unsafe { alt.write_unaligned(key) };
                }
                status::SUCCESS
            }
            Err(e) => {
                eprintln!("barebell libhsakmt: mapping {at:p}: {e}");
                status::ERROR
            }
        }
    })
}

/// `hsaKmtMapMemoryToGPU`.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtMapMemoryToGPU(at: *mut c_void, size: u64, alt: *mut u64) -> u32 {
    map(at, size, alt)
}

/// `hsaKmtMapMemoryToGPUNodes`: node 1 is the only GPU.
///
/// # Safety
/// `nodes` holds `n` node ids.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtMapMemoryToGPUNodes(
    at: *mut c_void,
    size: u64,
    alt: *mut u64,
    _flags: u32,
    n: u64,
    nodes: *mut u32,
) -> u32 {
    if n > 0 && nodes.is_null() {
        return status::INVALID_PARAMETER;
    }
    for i in 0..n as usize {
        // SAFETY: `nodes` holds `n` entries (the interface's contract).
        if unsafe { nodes.add(i).read_unaligned() } != 1 {
            return status::INVALID_NODE_UNIT;
        }
    }
    map(at, size, alt)
}

/// `hsaKmtUnmapMemoryToGPU`: the buffer's pages leave the process tables
/// ([`device::Kfd::unmap_allocation`]). A buffer a live queue holds is
/// refused, as Linux 6.12's `unmap_bo_from_gpuvm()` refuses a BO whose
/// `queue_refcount` is nonzero (-EBUSY).
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtUnmapMemoryToGPU(at: *mut c_void) -> u32 {
    with_kfd(|k| {
        if k.queue_uses(at as u64) {
            return status::ERROR;
        }
        match k.unmap_scratch(at as u64) {
            Ok(true) => return status::SUCCESS,
            Ok(false) => {}
            Err(e) => {
                eprintln!("barebell libhsakmt: unmapping scratch at {at:p}: {e}");
                return status::ERROR;
            }
        }
        if !k.allocations.contains_key(&(at as u64)) {
            return status::INVALID_PARAMETER;
        }
        match k.unmap_allocation(at as u64) {
            Ok(()) => status::SUCCESS,
            Err(e) => {
                eprintln!("barebell libhsakmt: unmapping {at:p}: {e}");
                status::ERROR
            }
        }
    })
}

/// `hsaKmtQueryPointerInfo`: this library's allocations; anything else is
/// `HSA_POINTER_UNKNOWN` with an error.
///
/// # Safety
/// `info` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtQueryPointerInfo(
    p: *const c_void,
    info: *mut HsaPointerInfo,
) -> u32 {
    if info.is_null() {
        return status::INVALID_PARAMETER;
    }
    with_kfd(|k| {
        let at = p as u64;
        let hit = k
            .allocations
            .range(..=at)
            .next_back()
            .filter(|(b, a)| at < *b + a.size.max(1));
        let mut out = HsaPointerInfo {
            Type: pointer_type::UNKNOWN,
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
        let r = match hit {
            Some((&base, a)) => {
                out.Type = if a.kind == Kind::Registered {
                    pointer_type::REGISTERED_USER
                } else {
                    pointer_type::ALLOCATED
                };
                out.Node = a.node;
                out.MemFlags = a.flags;
                out.CPUAddress = base as *mut c_void;
                out.GPUAddress = base;
                out.SizeInBytes = a.size;
                out.UserData = a.user_data as *mut c_void;
                status::SUCCESS
            }
            None => status::ERROR,
        };
        // SAFETY: as the contract says.
        unsafe { info.write_unaligned(out) };
        r
    })
}

/// `hsaKmtSetMemoryUserData`.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtSetMemoryUserData(p: *const c_void, data: *mut c_void) -> u32 {
    with_kfd(|k| match k.allocations.get_mut(&(p as u64)) {
        Some(a) => {
            a.user_data = data as u64;
            status::SUCCESS
        }
        None => status::INVALID_PARAMETER,
    })
}

/// `hsaKmtCreateEvent`.
///
/// # Safety
/// `desc` is null or readable; `out` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtCreateEvent(
    desc: *const HsaEventDescriptor,
    manual_reset: bool,
    signalled: bool,
    out: *mut *mut HsaEvent,
) -> u32 {
    if desc.is_null() || out.is_null() {
        return status::INVALID_PARAMETER;
    }
    // SAFETY: non-null, readable per the contract.
    let d = unsafe { desc.read_unaligned() };
    let e = events::create(&d, manual_reset, signalled);
    // SAFETY: as the contract says.
    unsafe { out.write_unaligned(e) };
    status::SUCCESS
}

/// `hsaKmtDestroyEvent`.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtDestroyEvent(e: *mut HsaEvent) -> u32 {
    events::destroy(e)
}

/// `hsaKmtSetEvent`.
///
/// # Safety
/// `e` is an event from `hsaKmtCreateEvent` not yet destroyed, or any pointer (refused unless live).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtSetEvent(e: *mut HsaEvent) -> u32 {
    // SAFETY: ROCR sets only events it has not destroyed.
    match unsafe { events::get(e) } {
        Some(ev) => {
            ev.set();
            status::SUCCESS
        }
        None => status::INVALID_HANDLE,
    }
}

/// `hsaKmtWaitOnEvent`, bounded by [`events::WAIT_SLICE_MS`].
///
/// # Safety
/// as `hsaKmtSetEvent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtWaitOnEvent(e: *mut HsaEvent, ms: u32) -> u32 {
    // SAFETY: ROCR waits only on events it has not destroyed.
    match unsafe { events::get(e) } {
        Some(ev) => events::wait_one(ev, ms),
        None => status::INVALID_HANDLE,
    }
}

/// `hsaKmtWaitOnMultipleEvents`, bounded by [`events::WAIT_SLICE_MS`].
///
/// # Safety
/// `list` holds `n` event pointers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtWaitOnMultipleEvents(
    list: *mut *mut HsaEvent,
    n: u32,
    all: bool,
    ms: u32,
) -> u32 {
    if list.is_null() || n == 0 {
        return status::INVALID_PARAMETER;
    }
    let mut evs = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        // SAFETY: `list` holds `n` pointers (the contract); each event is
        // one ROCR has not destroyed.
        match unsafe { events::get(list.add(i).read_unaligned()) } {
            Some(e) => evs.push(e),
            None => return status::INVALID_HANDLE,
        }
    }
    events::wait(&evs, all, ms)
}

/// `hsaKmtCreateQueue`: an AQL compute or SDMA queue on the HWS
/// ([`queues`]); `res` gets the queue id and the doorbell pointer. For an
/// AQL queue ROCR passes the read and write pointer addresses in `res`
/// (`Queue_read_ptr_aql`/`Queue_write_ptr_aql`); for an SDMA queue the
/// library gives them and returns them there, as the thunk does. Refusals come before the
/// device is touched, each with the reason on stderr.
///
/// # Safety
/// `res` is null or points to a readable and writable `HsaQueueResource`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtCreateQueue(
    node: u32,
    ty: u32,
    percent: u32,
    priority: i32,
    ring: *mut c_void,
    size: u64,
    _event: *mut HsaEvent,
    res: *mut HsaQueueResource,
) -> u32 {
    if res.is_null() {
        return status::INVALID_PARAMETER;
    }
    // SAFETY: non-null, readable per the contract.
    let mut r = unsafe { res.read_unaligned() };
    let req = queues::QueueRequest {
        node,
        ty,
        percentage: percent,
        priority,
        ring: ring as u64,
        ring_bytes: size,
        read_pointer: r.Queue_read_ptr as u64,
        write_pointer: r.Queue_write_ptr as u64,
    };
    with_kfd(|k| match k.create_queue(&req) {
        Ok((id, doorbell, pointers)) => {
            r.QueueId = id;
            r.Queue_DoorBell = doorbell;
            // An SDMA queue's pointers are the library's, as the thunk
            // fills `QueueRptrValue`/`QueueWptrValue` for them.
            if let Some((rptr, wptr)) = pointers {
                r.Queue_read_ptr = rptr as *mut u64;
                r.Queue_write_ptr = wptr as *mut u64;
            }
            // SAFETY: writable per the contract.
            unsafe { res.write_unaligned(r) };
            status::SUCCESS
        }
        Err(e) => {
            eprintln!("barebell libhsakmt: hsaKmtCreateQueue: {e}");
            queue_status(&e)
        }
    })
}

/// The thunk's status for a refused queue call.
fn queue_status(e: &queues::QueueError) -> u32 {
    use queues::QueueError as Q;
    match e {
        Q::Type(_) => status::NOT_SUPPORTED,
        Q::BadNode(_) => status::INVALID_NODE_UNIT,
        Q::Range(_) | Q::RingSize(_) | Q::Unknown(_) => status::INVALID_PARAMETER,
        Q::NoDoorbell | Q::NoMemory | Q::NoSdmaSlot { .. } => status::OUT_OF_RESOURCES,
        Q::NoMapping { .. } | Q::NotReady | Q::Device(_) => status::ERROR,
    }
}

/// `hsaKmtDestroyQueue`: the queue off the HWS's runlist.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtDestroyQueue(id: u64) -> u32 {
    with_kfd(|k| match k.destroy_queue(id) {
        Ok(()) => status::SUCCESS,
        Err(e) => {
            eprintln!("barebell libhsakmt: hsaKmtDestroyQueue: {e}");
            queue_status(&e)
        }
    })
}

/// `hsaKmtUpdateQueue`: a queue's share, priority and ring changed; at
/// 0 % it leaves the scheduler's runlist until an update gives it a share
/// again ([`queues::Queues::update`]).
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtUpdateQueue(
    id: u64,
    percent: u32,
    priority: i32,
    ring: *mut c_void,
    size: u64,
    _event: *mut HsaEvent,
) -> u32 {
    with_kfd(
        |k| match k.update_queue(id, percent, priority, (ring as u64, size)) {
            Ok(()) => status::SUCCESS,
            Err(e) => {
                eprintln!("barebell libhsakmt: hsaKmtUpdateQueue: {e}");
                queue_status(&e)
            }
        },
    )
}

/// `hsaKmtSetQueueCUMask`: CU masks are not supported.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtSetQueueCUMask(_id: u64, _count: u32, _mask: *mut u32) -> u32 {
    status::NOT_SUPPORTED
}

/// `hsaKmtAllocQueueGWS`: no GWS (the node reports none).
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtAllocQueueGWS(_id: u64, _n: u32, _first: *mut u32) -> u32 {
    status::NOT_SUPPORTED
}

/// `hsaKmtRegisterMemoryWithFlags`: the caller's memory recorded for the
/// device ([`device::Kfd::register`]); `hsaKmtMapMemoryToGPU(Nodes)`
/// then lets the device reach it.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtRegisterMemoryWithFlags(at: *mut c_void, size: u64, flags: u32) -> u32 {
    if at.is_null() || size == 0 {
        return status::INVALID_PARAMETER;
    }
    with_kfd(|k| match k.register(at as u64, size, flags) {
        Ok(()) => status::SUCCESS,
        Err(e) => {
            eprintln!("barebell libhsakmt: registering {size:#x} bytes at {at:p}: {e}");
            status::ERROR
        }
    })
}

/// `hsaKmtDeregisterMemory`: registered memory forgotten, unmapped first
/// if still mapped.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtDeregisterMemory(at: *mut c_void) -> u32 {
    with_kfd(|k| {
        let registered = k
            .allocations
            .get(&(at as u64))
            .is_some_and(|a| a.kind == Kind::Registered);
        if !registered {
            return status::INVALID_PARAMETER;
        }
        if k.queue_uses(at as u64) {
            return status::ERROR;
        }
        if let Err(e) = k.unmap_registered(at as u64) {
            eprintln!("barebell libhsakmt: deregistering {at:p}: {e}");
            return status::ERROR;
        }
        k.allocations.remove(&(at as u64));
        status::SUCCESS
    })
}

/// `hsaKmtGetTileConfig`, as KFD's `kfd_ioctl_get_tile_config()` answers
/// from `amdgpu_amdkfd_get_tile_config()`: `GB_ADDR_CONFIG` as amdgpu
/// derives it, and gfx9's tile and macro-tile mode tables, which amdgpu
/// leaves zero (32 and 16 entries; "not set from GFX9 onwards", like the
/// bank and rank counts), copied up to the caller's capacities, which
/// come back as the counts copied.
///
/// # Safety
/// `config` is null or a readable and writable `HsaGpuTileConfig` whose
/// arrays hold the capacities it names (or are null with capacity 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsaKmtGetTileConfig(node: u32, config: *mut HsaGpuTileConfig) -> u32 {
    if config.is_null() {
        return status::INVALID_PARAMETER;
    }
    with_kfd(|k| {
        if node != 1 {
            return status::INVALID_NODE_UNIT;
        }
        // SAFETY: non-null, readable per the contract.
        let mut c = unsafe { config.read_unaligned() };
        c.NumTileConfigs = c.NumTileConfigs.min(32);
        c.NumMacroTileConfigs = c.NumMacroTileConfigs.min(16);
        for (p, n) in [
            (c.TileConfig, c.NumTileConfigs),
            (c.MacroTileConfig, c.NumMacroTileConfigs),
        ] {
            if n > 0 && p.is_null() {
                return status::INVALID_PARAMETER;
            }
            if n > 0 {
                // SAFETY: the caller's array holds `n` entries (contract).
                unsafe { core::ptr::write_bytes(p, 0, n as usize) };
            }
        }
        c.GbAddrConfig = k.gb_addr_config;
        c.NumBanks = 0;
        c.NumRanks = 0;
        // SAFETY: writable per the contract.
        unsafe { config.write_unaligned(c) };
        status::SUCCESS
    })
}

/// `hsaKmtSetMemoryPolicy`: only Kaveri uses it.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtSetMemoryPolicy(
    _node: u32,
    _default: u32,
    _alternate: u32,
    _at: *mut c_void,
    _size: u64,
) -> u32 {
    status::NOT_SUPPORTED
}

/// `hsaKmtSVMSetAttr`: no SVM.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtSVMSetAttr(_at: *mut c_void, _size: u64, _n: u32, _a: *mut c_void) -> u32 {
    status::NOT_SUPPORTED
}

/// `hsaKmtSVMGetAttr`: no SVM.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtSVMGetAttr(_at: *mut c_void, _size: u64, _n: u32, _a: *mut c_void) -> u32 {
    status::NOT_SUPPORTED
}

/// `hsaKmtShareMemory`: no IPC.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtShareMemory(_at: *mut c_void, _size: u64, _h: *mut c_void) -> u32 {
    status::NOT_SUPPORTED
}

/// `hsaKmtRegisterSharedHandle`: no IPC.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtRegisterSharedHandle(
    _h: *const c_void,
    _at: *mut *mut c_void,
    _size: *mut u64,
) -> u32 {
    status::NOT_SUPPORTED
}

/// `hsaKmtRegisterSharedHandleToNodes`: no IPC.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtRegisterSharedHandleToNodes(
    _h: *const c_void,
    _at: *mut *mut c_void,
    _size: *mut u64,
    _n: u64,
    _nodes: *mut u32,
) -> u32 {
    status::NOT_SUPPORTED
}

/// `hsaKmtRegisterGraphicsHandleToNodes`: no graphics interop.
#[unsafe(no_mangle)]
pub extern "C" fn hsaKmtRegisterGraphicsHandleToNodes(
    _handle: u64,
    _info: *mut c_void,
    _n: u64,
    _nodes: *mut u32,
) -> u32 {
    status::NOT_SUPPORTED
}
