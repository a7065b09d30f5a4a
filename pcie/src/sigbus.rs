//! SIGBUS on a BAR access becomes "device gone" (issue 20, item 4).
//!
//! Under VFIO, a load from a mmapped BAR while the function's memory
//! decode is off (a reset in progress, a function-level reset, a device
//! that fell off the bus) is not completed with all ones as a PCIe read
//! would be: `vfio-pci` zaps the mapping and its fault handler answers
//! `VM_FAULT_SIGBUS` (`vfio_pci_mmap_huge_fault()` / `vfio_pci_mmap_fault()`
//! when `__vfio_pci_memory_enabled()` is false). Unhandled, that kills
//! the process mid-access, with the GPU in whatever state it was.
//!
//! [`install`] sets a SIGBUS handler that, for a fault inside a mapping
//! registered here ([`register`]; every [`crate::sysfs::BarMapping`] is):
//! 1. maps one anonymous page over the faulting page (`MAP_FIXED`), fills
//!    it with all ones,
//! 2. records that the device is gone ([`device_gone`]),
//! 3. returns, so the faulting access runs again and reads all ones,
//!    which every register poll already turns into a typed
//!    `WaitError::DeviceGone` (`barebell::bus`).
//!
//! A SIGBUS elsewhere (not a registered BAR) goes to the handler that was
//! installed before, or to the default action (the process dies, as it
//! would have).
//!
//! The registry is a fixed array of atomics, so the handler takes no lock
//! and allocates nothing.

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::io;
use std::sync::OnceLock;

/// Mappings the handler knows (BARs are few: registers, VRAM, doorbells).
const SLOTS: usize = 16;

struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
}

static REGISTRY: [Slot; SLOTS] = [const {
    Slot {
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
    }
}; SLOTS];
static GONE: AtomicBool = AtomicBool::new(false);
static FAULTS: AtomicUsize = AtomicUsize::new(0);
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

/// Registers `len` bytes at `start` as a BAR mapping. False if the
/// registry is full (the mapping then keeps the default SIGBUS action).
pub fn register(start: *mut u8, len: usize) -> bool {
    let start = start as usize;
    for s in &REGISTRY {
        if s.start
            .compare_exchange(0, start, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            s.len.store(len, Ordering::Release);
            return true;
        }
    }
    false
}

/// Forgets the mapping registered at `start` (call before unmapping it).
pub fn unregister(start: *mut u8) {
    let start = start as usize;
    for s in &REGISTRY {
        if s.start.load(Ordering::Acquire) == start {
            s.len.store(0, Ordering::Release);
            s.start.store(0, Ordering::Release);
        }
    }
}

/// Whether a SIGBUS on a registered BAR was taken since start.
pub fn device_gone() -> bool {
    GONE.load(Ordering::Acquire)
}

/// How many SIGBUS faults on registered BARs were absorbed.
pub fn faults() -> usize {
    FAULTS.load(Ordering::Acquire)
}

fn registered(addr: usize) -> bool {
    REGISTRY.iter().any(|s| {
        let start = s.start.load(Ordering::Acquire);
        let len = s.len.load(Ordering::Acquire);
        start != 0 && addr >= start && addr - start < len
    })
}

fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p).unwrap_or(4096)
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler;
    // `si_addr` is the faulting address for SIGBUS.
    let addr = unsafe { (*info).si_addr() } as usize;
    if registered(addr) {
        let page = page_size();
        let base = addr & !(page - 1);
        // SAFETY: `base` is inside a mapping this process made (a
        // registered BAR), so replacing that one page with an anonymous
        // private page cannot clobber memory any Rust object owns; mmap is
        // a raw system call on Linux (no libc lock), safe to make from a
        // signal handler in practice although POSIX does not list it.
        let p = unsafe {
            libc::mmap(
                base as *mut libc::c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            // SAFETY: the page was just mapped read-write at `base`, `page`
            // bytes long.
            unsafe { core::ptr::write_bytes(base as *mut u8, 0xFF, page) };
            GONE.store(true, Ordering::Release);
            FAULTS.fetch_add(1, Ordering::AcqRel);
            return;
        }
    }
    // Not ours (or the page could not be replaced): what was there before.
    match PREVIOUS.get() {
        Some(old) if old.sa_flags & libc::SA_SIGINFO != 0 && old.sa_sigaction > 1 => {
            // SAFETY: the previous handler was installed for SIGBUS with
            // SA_SIGINFO, so it has this signature.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { core::mem::transmute(old.sa_sigaction) };
            f(sig, info, ctx);
        }
        Some(old) if old.sa_flags & libc::SA_SIGINFO == 0 && old.sa_sigaction > 1 => {
            // SAFETY: a plain handler installed for SIGBUS.
            let f: extern "C" fn(libc::c_int) = unsafe { core::mem::transmute(old.sa_sigaction) };
            f(sig);
        }
        _ => {
            // SAFETY: resetting SIGBUS to its default action; returning
            // re-runs the access, which faults again and ends the process
            // as it would have without this handler.
            unsafe {
                let mut dfl: libc::sigaction = core::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(libc::SIGBUS, &dfl, core::ptr::null_mut());
            }
        }
    }
}

/// Installs the handler (once per process; later calls do nothing).
pub fn install() -> io::Result<()> {
    static DONE: AtomicBool = AtomicBool::new(false);
    if DONE.swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    // SAFETY: a zeroed sigaction is a valid starting value; the handler
    // has the SA_SIGINFO signature; `old` receives the previous action.
    unsafe {
        let mut act: libc::sigaction = core::mem::zeroed();
        act.sa_sigaction = on_sigbus as *const () as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
        libc::sigemptyset(&mut act.sa_mask);
        let mut old: libc::sigaction = core::mem::zeroed();
        if libc::sigaction(libc::SIGBUS, &act, &mut old) != 0 {
            DONE.store(false, Ordering::Release);
            return Err(io::Error::last_os_error());
        }
        let _ = PREVIOUS.set(old);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;
    use std::io::Write;

    /// A real SIGBUS: a shared file mapping whose file is truncated under
    /// it faults with SIGBUS on the next access past the new end (the
    /// same `VM_FAULT_SIGBUS` path vfio-pci takes for a BAR with decode
    /// off). The handler turns it into an all-ones read and records the
    /// device gone; the mapping's own bounds checks still hold.
    #[test]
    fn a_sigbus_on_a_registered_mapping_reads_all_ones() {
        install().unwrap();
        let path =
            std::env::temp_dir().join(std::format!("barebell-sigbus-{}", std::process::id()));
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let page = page_size();
        f.write_all(&std::vec![0x5Au8; 2 * page]).unwrap();
        let m = crate::sysfs::BarMapping::new(&f, 0, 2 * page).unwrap();
        assert_eq!(m.read32(page), 0x5A5A_5A5A);
        assert!(!device_gone());
        f.set_len(0).unwrap();
        let before = faults();
        assert_eq!(m.read32(page), u32::MAX, "the faulting read");
        assert!(device_gone());
        assert!(faults() > before);
        // The replaced page stays all ones; writes to it are harmless.
        m.write32(page + 4, 0);
        assert_eq!(m.read32(page + 8), u32::MAX);
        drop(m);
        std::fs::remove_file(path).unwrap();
    }
}
