//! Bus mastering off from a signal handler: the last thing a process
//! does when told twice to stop (issue 32 item 4). The first SIGINT or
//! SIGTERM asks for the full teardown; a second one means the user will
//! not wait for it, and a GPU left with bus mastering on can keep writing
//! host memory the kernel is about to reuse (`pci_clear_master()` is
//! also the first thing Linux's `amdgpu_pci_shutdown()` path relies on).
//!
//! [`arm`] records the file descriptor and byte offset through which a
//! backend reaches the function's config space (a VFIO device's config
//! region, or sysfs' `config` file); [`clear_bus_master`] then clears
//! `PCI_COMMAND` bit 2 with one `pread` and one `pwrite` of two bytes,
//! both async-signal-safe, taking no lock and allocating nothing.
//! [`disarm`] runs before the descriptor is closed.

use core::sync::atomic::{AtomicI32, AtomicU64, Ordering};

static FD: AtomicI32 = AtomicI32::new(-1);
static BASE: AtomicU64 = AtomicU64::new(0);

/// `PCI_COMMAND` (offset 4) and its bus-master bit (`PCI_COMMAND_MASTER`).
const COMMAND: u64 = 0x04;
const MASTER: u16 = 1 << 2;

/// Config space of the function is at byte `base` of `fd`.
pub fn arm(fd: i32, base: u64) {
    BASE.store(base, Ordering::SeqCst);
    FD.store(fd, Ordering::SeqCst);
}

/// Forgets the descriptor (before it is closed).
pub fn disarm() {
    FD.store(-1, Ordering::SeqCst);
}

/// Whether a function is armed.
pub fn armed() -> bool {
    FD.load(Ordering::SeqCst) >= 0
}

/// Clears bus mastering of the armed function. Async-signal-safe. True
/// if the write went through (false with nothing armed, or when the
/// config space did not answer).
pub fn clear_bus_master() -> bool {
    let fd = FD.load(Ordering::SeqCst);
    if fd < 0 {
        return false;
    }
    let at = BASE.load(Ordering::SeqCst).saturating_add(COMMAND);
    let Ok(at) = libc::off_t::try_from(at) else {
        return false;
    };
    let mut b = [0u8; 2];
    // SAFETY: `b` is two writable bytes; `pread` is async-signal-safe and
    // touches only them; a closed or wrong descriptor gives an error.
    let n = unsafe { libc::pread(fd, b.as_mut_ptr().cast(), 2, at) };
    if n != 2 {
        return false;
    }
    let v = u16::from_le_bytes(b);
    if v == 0xffff {
        // The function does not answer (gone): nothing to clear.
        return false;
    }
    let w = (v & !MASTER).to_le_bytes();
    // SAFETY: as above, reading two bytes from `w`.
    let n = unsafe { libc::pwrite(fd, w.as_ptr().cast(), 2, at) };
    n == 2
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::format;
    use std::io::{Read, Seek, SeekFrom, Write};
    use std::os::fd::AsRawFd;
    use std::vec;
    use std::vec::Vec;

    /// A config space in a file at byte 64: COMMAND with memory decode and
    /// bus mastering on; afterwards only bus mastering is off.
    #[test]
    fn clears_only_the_master_bit_at_the_armed_offset() {
        let path = std::env::temp_dir().join(format!("emergency-{}", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let mut space = vec![0u8; 64 + 256];
        space[64 + 4] = 0x06;
        space[64 + 5] = 0x04;
        f.write_all(&space).unwrap();
        assert!(!clear_bus_master(), "nothing armed");
        arm(f.as_raw_fd(), 64);
        assert!(armed());
        assert!(clear_bus_master());
        disarm();
        let mut back = Vec::new();
        f.seek(SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut back).unwrap();
        assert_eq!(&back[64 + 4..64 + 6], &[0x02, 0x04]);
        assert!(!clear_bus_master(), "disarmed");
        let _ = std::fs::remove_file(path);
    }
}
