//! The PVH start info the loader leaves in `%ebx` (Xen's
//! `include/public/arch-x86/hvm/start_info.h`, copied into Linux 6.12 as
//! `include/xen/interface/hvm/start_info.h`, `struct hvm_start_info`):
//! magic at 0, version at 4, `cmdline_paddr` at 24, `rsdp_paddr` at 32.

const MAGIC: u32 = 0x336e_c578;
const OFF_VERSION: usize = 4;
const OFF_CMDLINE: usize = 24;
const OFF_RSDP: usize = 32;
const OFF_NR_MODULES: usize = 12;
const OFF_MODLIST: usize = 16;
// A module is a 32-byte `struct hvm_modlist_entry`: paddr at 0, size at 8,
// cmdline_paddr at 16, reserved.

#[derive(Debug, Clone, Copy)]
pub struct StartInfo {
    pub version: u32,
    pub cmdline: &'static str,
    /// Physical address of the ACPI RSDP (version >= 1), if non-zero.
    pub rsdp: Option<u64>,
    /// The first module (QEMU passes `-initrd` as one): address, size.
    pub module: Option<(u64, u64)>,
}

#[derive(Debug, Clone, Copy)]
pub enum StartInfoError {
    BadMagic {
        #[allow(dead_code)] // printed through Debug
        found: u32,
    },
}

/// # Safety
/// `addr` must be the value the PVH loader passed in `%ebx`, inside the
/// identity-mapped first GiB.
pub unsafe fn read(addr: u32) -> Result<StartInfo, StartInfoError> {
    let base = addr as usize as *const u8;
    // SAFETY: the PVH ABI places a `hvm_start_info` (at least 48 bytes)
    // at `addr`; fields are naturally aligned.
    let (magic, version, cmdline_pa, rsdp, nr_modules, modlist) = unsafe {
        (
            base.cast::<u32>().read_volatile(),
            base.add(OFF_VERSION).cast::<u32>().read_volatile(),
            base.add(OFF_CMDLINE).cast::<u64>().read_volatile(),
            base.add(OFF_RSDP).cast::<u64>().read_volatile(),
            base.add(OFF_NR_MODULES).cast::<u32>().read_volatile(),
            base.add(OFF_MODLIST).cast::<u64>().read_volatile(),
        )
    };
    if magic != MAGIC {
        return Err(StartInfoError::BadMagic { found: magic });
    }
    let cmdline = if cmdline_pa == 0 || cmdline_pa >= 1 << 30 {
        ""
    } else {
        let p = cmdline_pa as usize as *const u8;
        let mut n = 0;
        // SAFETY: the loader wrote a NUL-terminated string there; the
        // scan is bounded at 4 KiB.
        while n < 4096 && unsafe { p.add(n).read() } != 0 {
            n += 1;
        }
        // SAFETY: `n` bytes were just read from identity-mapped memory
        // that nothing writes afterwards.
        let bytes = unsafe { core::slice::from_raw_parts(p, n) };
        core::str::from_utf8(bytes).unwrap_or("")
    };
    let module = if nr_modules >= 1 && modlist != 0 && modlist < 1 << 30 {
        let e = modlist as usize as *const u8;
        // SAFETY: with nr_modules >= 1 the loader placed at least one
        // 32-byte `hvm_modlist_entry` at `modlist` (in the mapped first
        // GiB, checked above); paddr and size are its first two u64s.
        let (pa, len) = unsafe {
            (
                e.cast::<u64>().read_volatile(),
                e.add(8).cast::<u64>().read_volatile(),
            )
        };
        Some((pa, len))
    } else {
        None
    };
    Ok(StartInfo {
        version,
        cmdline,
        rsdp: (version >= 1 && rsdp != 0).then_some(rsdp),
        module,
    })
}
