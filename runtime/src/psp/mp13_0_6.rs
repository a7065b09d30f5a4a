//! PSP (MP0) 13.0.6 firmware loading, as Linux 6.12 runs it for MI300
//! (GC 9.4.3, SDMA 4.4.2): the same mailbox protocol and GPCOM ring as
//! 13.0.0 ([`super::Psp`]), with this part's differences, each from
//! `amdgpu_psp.c` / `psp_v13_0.c`:
//!
//! - `psp_early_init()`: 13.0.6 keeps `boot_time_tmr` (the firmware set the
//!   TMR up at boot) and clears `autoload_supported`. So `psp_hw_start()`
//!   skips `psp_tmr_init()` (`!boot_time_tmr || autoload_supported` is
//!   false): no LOAD_TOC, and the bundle has no TOC anyway. It still runs
//!   `psp_tmr_load()` (`!boot_time_tmr || !autoload_supported` is true)
//!   with no TMR buffer: `psp_prep_tmr_cmd_buf()` sends SETUP_TMR with
//!   address 0, size 0, physical address 0 and `virt_phy_addr` set.
//!   13.0.6 is not in the `pmfw_centralized_cstate_management` list, and
//!   `smu_v13_0_6_init_microcode()` registers no `AMDGPU_UCODE_ID_SMC`
//!   (only a P2S table), so no SMU image goes through the PSP.
//! - No RLC autoload: `psp_load_non_psp_fw()` sends each registered ucode
//!   in `AMDGPU_UCODE_ID` order and never AUTOLOAD_RLC
//!   ([`gfx_images`]); the MEC jump table is loaded too
//!   (`fw_load_skip_check()` only skips `CP_MEC1_JT` with autoload).
//! - `psp_init_sos_microcode()`: the real `psp_13_0_6_sos.bin` is a v2.1
//!   bundle whose descriptors come in two sets, split at
//!   `psp_aux_fw_bin_index`. `psp_v13_0_is_aux_sos_load_required()` picks
//!   the auxiliary set when the PMFW version in `MP1_PUB_SCRATCH0` is
//!   below 85.115.0 ([`SosSet::for_pmfw_version`]). The bundle has no SPL
//!   and no TOC, so those stages do not run.
//! - The bootloader wait is retried `PSP_VMBX_POLLING_LIMIT` (3000) times
//!   instead of 10 (`psp_v13_0_wait_for_bootloader()`), and before the
//!   first command Linux waits for the VMBX (`C2PMSG_33`) and then the
//!   bootloader (`psp_v13_0_wait_for_bootloader_steady_state()`,
//!   [`wait_for_bootloader_steady_state`]).
//! - After the ucode list, `psp_load_fw()` tries ASD (the 13.0.6 TA blob
//!   carries none, and `psp_v13_0_init_microcode()` reads no ASD file for
//!   13.0.6, so `psp_asd_initialize()` returns at once) and then loads the
//!   register list `RL` from the SOS bundle as LOAD_IP_FW of
//!   `GFX_FW_TYPE_REG_LIST` (`psp_rl_load()`).
//! - Trusted applications ([`ta_plan`]): with the TA blob present
//!   `psp_load_fw()` runs `psp_ras_initialize()` (the RAS TA), and the
//!   HDCP/DTM/RAP/secure-display initializers, which return at once for
//!   want of their TA in this blob; the XGMI TA is only loaded when the
//!   GPU is part of an XGMI hive (`amdgpu_xgmi_add_device()`). barebell
//!   does not load any TA (LOAD_TA and the TA shared-memory protocol are
//!   not written): [`load_firmware`] stops after RL, and says so in its
//!   report.
//!
//! - The P2S table goes first among the ucode (`psp_load_non_psp_fw()` →
//!   `psp_load_p2s_table()`): the `smu_13_0_6.bin` pptable entry
//!   `smu_v13_0_6_init_microcode()` picks for a dGPU
//!   ([`P2S_TABLE_ID_X`]; a device id ending in 5 would take
//!   `P2S_TABLE_ID_3`, and the platform does not report the device id),
//!   loaded only when the sOS descriptor's version is at least
//!   [`P2S_MIN_SOS_VERSION`] ([`p2s_table`], [`sos_version`]).
//!
//! The PMFW version is read from `MP1_PUB_SCRATCH0`, an SMN
//! address past the MMIO BAR ([`read_pmfw_version`], through a bus that
//! reaches it, as Linux's `RREG32()` falls back to the PCIE index pair).
//!
//! No step here has run on hardware; it runs against the model's 13.0.6
//! PSP with the real blobs.

use super::{Component, Image, Loaded, Psp, PspError, READY, REG_TIMEOUT_NS};
use crate::bus::{Block, RegisterBus};
use crate::regs::IpBases;
use crate::regs::mp_13_0_6 as regs;
use crate::time::Clock;
use barebell_firmware_if::psp_gfx::fw_type;
use barebell_firmware_if::{Firmware, Kind};

/// `PSP_VMBX_POLLING_LIMIT` (`psp_v13_0.c`): how many times 13.0.6 retries
/// a 100 ms bootloader wait.
pub const VMBX_POLLING_LIMIT: u64 = 3000;
/// The bootloader wait on 13.0.6: [`VMBX_POLLING_LIMIT`] × `psp_wait_for()`.
pub const BOOTLOADER_TIMEOUT_NS: u64 = VMBX_POLLING_LIMIT * REG_TIMEOUT_NS;
/// `psp_v13_0_is_aux_sos_load_required()`: the auxiliary SOS set is for a
/// PMFW older than 85.115.0 (`0x557300`).
pub const AUX_SOS_PMFW_BELOW: u32 = 0x0055_7300;
/// `regMP1_PUB_SCRATCH0` (`psp_v13_0.c`: `0x3b10090`, read as
/// `RREG32(regMP1_PUB_SCRATCH0 / 4)`): the byte offset, in the register
/// space, of the word the PMFW keeps its version in.
pub const MP1_PUB_SCRATCH0: usize = 0x03B1_0090;

/// The PMFW version `psp_v13_0_is_aux_sos_load_required()` reads, from
/// [`MP1_PUB_SCRATCH0`]. `bus` must reach offsets past the MMIO BAR (the
/// NBIO index pair). All-ones is a device that is gone.
pub fn read_pmfw_version<B: RegisterBus + ?Sized>(bus: &B) -> Result<u32, PspError> {
    let v = bus.read32(MP1_PUB_SCRATCH0);
    if v == crate::bus::ALL_ONES {
        return Err(PspError::Wait(crate::bus::WaitError::DeviceGone {
            what: "MP1_PUB_SCRATCH0",
            byte_offset: MP1_PUB_SCRATCH0,
        }));
    }
    Ok(v)
}

/// `P2S_TABLE_ID_X` (`smu_v13_0_6_ppt.c`): the P2S table of a dGPU.
pub const P2S_TABLE_ID_X: u32 = 0x5032_5358;
/// `psp_load_p2s_table()`: a dGPU's sOS must be at least this version
/// (`supp_vers`, 0x0036003C) for the table to be sent.
pub const P2S_MIN_SOS_VERSION: u32 = 0x0036_003C;
/// `PSP_FW_TYPE_PSP_SOS` (`enum psp_fw_type`, `amdgpu_ucode.h`).
pub const PSP_FW_TYPE_PSP_SOS: u32 = 1;

/// The dGPU P2S table of an SMU 13.0.6 blob (`smu_v13_0_6_init_microcode()`
/// walks the v2.1 header's `smc_soft_pptable_entry` list for
/// [`P2S_TABLE_ID_X`]), or `None` if it carries none.
pub fn p2s_table<'a>(smu: &Firmware<'a>) -> Option<&'a [u8]> {
    use barebell_firmware_if::firmware::Body;
    use barebell_firmware_if::ucode::smc::Smc;
    let Body::Smc(Smc::V2_1 { entries, .. }) = smu.body else {
        return None;
    };
    let i = entries.iter().position(|e| e.id.get() == P2S_TABLE_ID_X)?;
    let name = barebell_firmware_if::ucode::smc::pptable_section(i)?;
    smu.section(name).map(|s| smu.bytes(s))
}

/// `psp->sos.fw_version` for `set` of a v2.1 SOS bundle: the version of
/// its `PSP_FW_TYPE_PSP_SOS` descriptor (`parse_sos_bin_descriptor()`).
pub fn sos_version(sos: &Firmware<'_>, set: SosSet) -> Option<u32> {
    use barebell_firmware_if::firmware::Body;
    use barebell_firmware_if::ucode::psp::Psp as Blob;
    let Body::Psp(Blob::SosV2 {
        aux_index, descs, ..
    }) = sos.body
    else {
        return None;
    };
    let split = aux_index.map_or(descs.len(), |a| a as usize);
    let range = match set {
        SosSet::Primary => descs.get(..split)?,
        SosSet::Aux => descs.get(split..)?,
    };
    range
        .iter()
        .find(|d| d.fw_type.get() == PSP_FW_TYPE_PSP_SOS)
        .map(|d| d.fw_version.get())
}

/// `adev->sdma.num_inst_per_aid` on GC 9.4.3 (`aqua_vanjaram.c`): the
/// SDMA ucodes `amdgpu_sdma_init_microcode()` registers for PSP, one per
/// instance of one AID ("PSP uses the same instance for all groups of
/// SDMAs").
pub const SDMA_PSP_INSTANCES: usize = 4;

/// Which descriptor set of a v2.1 SOS bundle is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SosSet {
    /// Descriptors `0 .. count - aux_index`.
    Primary,
    /// Descriptors `aux_index .. count`.
    Aux,
}

impl SosSet {
    /// `psp_v13_0_is_aux_sos_load_required()` for the PMFW version read
    /// from `MP1_PUB_SCRATCH0`.
    pub fn for_pmfw_version(pmfw: u32) -> SosSet {
        if pmfw < AUX_SOS_PMFW_BELOW {
            SosSet::Aux
        } else {
            SosSet::Primary
        }
    }

    /// The name barebell-firmware-if gives a component of this set.
    pub fn section(self, c: Component) -> &'static str {
        match self {
            SosSet::Primary => c.section(),
            SosSet::Aux => match c {
                Component::Kdb => "kdb_aux",
                Component::Spl => "spl_aux",
                Component::SysDrv => "sys_drv_aux",
                Component::SocDrv => "soc_drv_aux",
                Component::IntfDrv => "intf_drv_aux",
                Component::DbgDrv => "dbg_drv_aux",
                Component::RasDrv => "ras_drv_aux",
                Component::IpKeyMgrDrv => "ipkeymgr_drv_aux",
                Component::Sos => "sos_aux",
            },
        }
    }

    /// The register list of this set.
    pub fn rl(self) -> &'static str {
        match self {
            SosSet::Primary => "rl",
            SosSet::Aux => "rl_aux",
        }
    }
}

/// `psp_hw_start()`'s stages as `psp_v13_0_funcs` has them (no
/// IPKEYMGR stage in 13.0's table).
pub const STAGES: [Component; 8] = [
    Component::Kdb,
    Component::Spl,
    Component::SysDrv,
    Component::SocDrv,
    Component::IntfDrv,
    Component::DbgDrv,
    Component::RasDrv,
    Component::Sos,
];

/// `psp_v13_0_wait_for_bootloader_steady_state()` on 13.0.6, before the
/// first bootloader command (`amdgpu_psp_wait_for_bootloader()`): the
/// VMBX ready (`C2PMSG_33 == 0x80000000`), then the bootloader
/// (`C2PMSG_35 == 0x80000000`), each up to [`BOOTLOADER_TIMEOUT_NS`].
/// Linux compares the whole register ("all other bits are expected to be
/// cleared"), as this does.
pub fn wait_for_bootloader_steady_state<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    bus: &B,
    clock: &C,
    mp0_bases: &IpBases,
    timeout_ns: u64,
) -> Result<(), PspError> {
    let b = Block::new(bus, *mp0_bases);
    for r in [regs::MP0_SMN_C2PMSG_33, regs::MP0_SMN_C2PMSG_35] {
        b.offset(r)?;
    }
    for r in [regs::MP0_SMN_C2PMSG_33, regs::MP0_SMN_C2PMSG_35] {
        b.poll(clock, r, 0xFFFF_FFFF, READY, r.name, timeout_ns)?;
    }
    Ok(())
}

/// The ucode list `psp_load_non_psp_fw()` sends for GC 9.4.3 and SDMA
/// 4.4.2, in `AMDGPU_UCODE_ID` order, each with its `psp_get_fw_type()`:
/// - `SDMA0..SDMA3` ([`SDMA_PSP_INSTANCES`]): the SDMA v1 payload
///   (`amdgpu_sdma_init_microcode(adev, 0, true)`);
/// - `CP_MEC1` → `GFX_FW_TYPE_CP_MEC`: the MEC payload without its jump
///   table, `CP_MEC1_JT` → `GFX_FW_TYPE_CP_MEC_ME1`: the jump table
///   (`gfx_v9_4_3_init_cp_compute_microcode()`,
///   `amdgpu_ucode_init_single_fw()`);
/// - `RLC_RESTORE_LIST_CNTL/GPM_MEM/SRM_MEM` (RLC v2.1,
///   `amdgpu_gfx_rlc_init_microcode_v2_1()`) → `SRM_CNTL`, `GPM_MEM`,
///   `SRM_MEM`; then `RLC_G`.
pub const GFX_ORDER: [(u32, BlobRole, &str); 10] = [
    (fw_type::SDMA0, BlobRole::Sdma, "ucode"),
    (fw_type::SDMA1, BlobRole::Sdma, "ucode"),
    (fw_type::SDMA2, BlobRole::Sdma, "ucode"),
    (fw_type::SDMA3, BlobRole::Sdma, "ucode"),
    (fw_type::CP_MEC, BlobRole::Mec, "ucode"),
    (fw_type::CP_MEC_ME1, BlobRole::Mec, "jt"),
    (
        fw_type::RLC_RESTORE_LIST_SRM_CNTL,
        BlobRole::Rlc,
        "save_restore_list_cntl",
    ),
    (
        fw_type::RLC_RESTORE_LIST_GPM_MEM,
        BlobRole::Rlc,
        "save_restore_list_gpm",
    ),
    (
        fw_type::RLC_RESTORE_LIST_SRM_MEM,
        BlobRole::Rlc,
        "save_restore_list_srm",
    ),
    (fw_type::RLC_G, BlobRole::Rlc, "ucode"),
];

/// Which GC 9.4.3 blob a ucode comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobRole {
    /// `sdma_4_4_2.bin`.
    Sdma,
    /// `gc_9_4_3_mec.bin`.
    Mec,
    /// `gc_9_4_3_rlc.bin`.
    Rlc,
}

impl BlobRole {
    fn kind_ok(self, k: Kind) -> bool {
        match self {
            BlobRole::Sdma => k == Kind::Sdma,
            BlobRole::Mec => matches!(k, Kind::Cp(barebell_firmware_if::CpEngine::Mec)),
            BlobRole::Rlc => k == Kind::Rlc,
        }
    }

    fn name(self) -> &'static str {
        match self {
            BlobRole::Sdma => "the SDMA 4.4.x blob",
            BlobRole::Mec => "the GC 9.4.x MEC blob",
            BlobRole::Rlc => "the GC 9.4.x RLC blob",
        }
    }
}

/// The GC 9.4.3 blobs, parsed.
#[derive(Debug, Clone, Copy)]
pub struct GfxBlobs<'a, 'f> {
    pub sdma: &'f Firmware<'a>,
    pub mec: &'f Firmware<'a>,
    pub rlc: &'f Firmware<'a>,
}

/// Fills `out` with [`GFX_ORDER`]'s images from `blobs` and returns how
/// many were written. A blob of the wrong kind is refused; an empty or
/// absent section is left out, as `fw_load_skip_check()` skips a ucode
/// of size 0, except the MEC and RLC_G code, without which nothing runs.
pub fn gfx_images<'a>(blobs: GfxBlobs<'a, '_>, out: &mut [Image<'a>]) -> Result<usize, PspError> {
    gfx_images_in(&GFX_ORDER, blobs, out)
}

/// [`gfx_images`] for another part's ucode order (Aldebaran's five SDMA,
/// [`super::mp13_0_2::GFX_ORDER`]).
pub fn gfx_images_in<'a>(
    order: &[(u32, BlobRole, &str)],
    blobs: GfxBlobs<'a, '_>,
    out: &mut [Image<'a>],
) -> Result<usize, PspError> {
    for (role, fw) in [
        (BlobRole::Sdma, blobs.sdma),
        (BlobRole::Mec, blobs.mec),
        (BlobRole::Rlc, blobs.rlc),
    ] {
        if !role.kind_ok(fw.kind) {
            return Err(PspError::Missing {
                what: "a blob of the right kind",
                blob: role.name(),
            });
        }
    }
    let mut n = 0;
    for &(t, role, section) in order {
        let fw = match role {
            BlobRole::Sdma => blobs.sdma,
            BlobRole::Mec => blobs.mec,
            BlobRole::Rlc => blobs.rlc,
        };
        let bytes = fw.section(section).map(|s| fw.bytes(s)).unwrap_or(&[]);
        if bytes.is_empty() {
            if section == "ucode" {
                return Err(PspError::Missing {
                    what: "its ucode",
                    blob: role.name(),
                });
            }
            continue;
        }
        let capacity = out.len();
        let slot = out.get_mut(n).ok_or(PspError::TooLarge {
            what: "gfx image list",
            len: n + 1,
            capacity,
        })?;
        *slot = Image { fw_type: t, bytes };
        n += 1;
    }
    Ok(n)
}

/// The trusted applications of a TA blob and what Linux 6.12 does with
/// each at init on 13.0.6 (`psp_load_fw()`, `parse_ta_bin_descriptor()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaPlan<'a> {
    /// Loaded at init by `psp_ras_initialize()` (bare metal).
    pub ras: Option<&'a [u8]>,
    /// Loaded only in an XGMI hive (`amdgpu_xgmi_add_device()`).
    pub xgmi: Option<&'a [u8]>,
    /// ASD/HDCP/DTM/RAP/secure display present (their initializers run
    /// only with their TA; the 13.0.6 blob has none).
    pub others: usize,
    /// Descriptors of a type Linux 6.12 does not know
    /// (`TA_FW_TYPE_MAX_INDEX` or above): it warns and skips them.
    pub unknown: usize,
}

/// Reads `ta` as [`TaPlan`] says Linux would use it.
pub fn ta_plan<'a>(ta: &Firmware<'a>) -> Result<TaPlan<'a>, PspError> {
    if ta.kind != Kind::PspTa || ta.unsupported().is_some() {
        return Err(PspError::Missing {
            what: "a TA header Linux reads (v1.0 or v2.0)",
            blob: "the TA blob",
        });
    }
    let mut plan = TaPlan::default();
    for s in ta.sections() {
        let bytes = ta.bytes(s);
        match s.name {
            "ras" => plan.ras = Some(bytes),
            "xgmi" => plan.xgmi = Some(bytes),
            "unknown" => plan.unknown += 1,
            _ => plan.others += 1,
        }
    }
    Ok(plan)
}

/// What [`load_firmware`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Report {
    /// Bootloader components loaded.
    pub components: usize,
    /// Whether sOS was already alive (nothing loaded through the
    /// bootloader).
    pub sos_was_alive: bool,
    /// GFX ucode images sent with LOAD_IP_FW.
    pub ip_fw_loads: usize,
    /// Whether the RL was loaded (`psp_rl_load()`).
    pub rl_loaded: bool,
    /// Whether the P2S table was loaded (`psp_load_p2s_table()`).
    pub p2s_loaded: bool,
    /// TAs Linux would load here that barebell did not (the RAS TA when
    /// a TA blob was given).
    pub tas_not_loaded: usize,
}

/// `psp_load_fw()` for MP0 13.0.6 up to the TAs: the bootloader stages
/// from `set` of `sos`, the ring, SETUP_TMR for the boot-time TMR, the
/// P2S table `p2s` first when the set's sOS takes it ([`p2s_table`]),
/// the GFX ucode in `gfx` (from [`gfx_images`]), then RL. `ta`, if
/// given, is only counted in the report.
pub fn load_firmware<B: RegisterBus + ?Sized, C: Clock + ?Sized>(
    psp: &mut Psp<'_, B, C>,
    sos: &Firmware<'_>,
    set: SosSet,
    p2s: Option<&[u8]>,
    gfx: &[Image<'_>],
    ta: Option<&TaPlan<'_>>,
) -> Result<Report, PspError> {
    if sos.kind != Kind::PspSos || sos.section(set.section(Component::Sos)).is_none() {
        return Err(PspError::Missing {
            what: "an sOS component in the chosen set",
            blob: "the SOS bundle",
        });
    }
    let mut report = Report::default();
    for c in STAGES {
        // psp_hw_start(): a stage runs when the bundle has its component.
        let Some(s) = sos.section(set.section(c)) else {
            continue;
        };
        // psp_v13_0_bootloader_load_spl() sends the KDB.
        let bytes = if c == Component::Spl {
            let kdb = sos
                .section(set.section(Component::Kdb))
                .ok_or(PspError::Missing {
                    what: "the KDB the SPL stage carries",
                    blob: "the SOS bundle",
                })?;
            sos.bytes(kdb)
        } else {
            sos.bytes(s)
        };
        match psp.bootloader_load(c, bytes)? {
            Loaded::Loaded => report.components += 1,
            Loaded::SosAlreadyAlive => report.sos_was_alive = true,
        }
    }
    psp.ring_create()?;
    // psp_tmr_load() with no TMR buffer (boot-time TMR, no autoload).
    psp.setup_tmr(0, 0, 0)?;
    // psp_load_non_psp_fw() → psp_load_p2s_table(): first, on a dGPU whose
    // sOS is at least 0x0036003C.
    if let Some(table) = p2s
        && sos_version(sos, set).is_some_and(|v| v >= P2S_MIN_SOS_VERSION)
    {
        psp.load_ip_fw(fw_type::P2S_TABLE, table)?;
        report.p2s_loaded = true;
    }
    for img in gfx {
        psp.load_ip_fw(img.fw_type, img.bytes)?;
        report.ip_fw_loads += 1;
    }
    if let Some(s) = sos.section(set.rl()) {
        psp.load_ip_fw(fw_type::REG_LIST, sos.bytes(s))?;
        report.rl_loaded = true;
    }
    report.tas_not_loaded = ta.map_or(0, |t| usize::from(t.ras.is_some()));
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::{Cell, RefCell};

    /// Registers by byte offset; each read moves a fake clock by 1 µs.
    struct Bus {
        regs: RefCell<[u32; 0x100]>,
        now: Cell<u64>,
    }
    impl RegisterBus for Bus {
        fn read32(&self, at: usize) -> u32 {
            self.now.set(self.now.get() + 1_000);
            self.regs.borrow()[at / 4]
        }
        fn write32(&self, at: usize, v: u32) {
            self.regs.borrow_mut()[at / 4] = v;
        }
    }
    impl Clock for Bus {
        fn now_ns(&self) -> u64 {
            self.now.get()
        }
    }

    fn bus() -> Bus {
        Bus {
            regs: RefCell::new([0; 0x100]),
            now: Cell::new(0),
        }
    }

    /// C2PMSG_33 is dword 0x61, C2PMSG_35 dword 0x63 of MP0 segment 0
    /// (`mp_13_0_6_offset.h`); with base 0 they sit at bytes 0x184/0x18c.
    #[test]
    fn steady_state_waits_for_vmbx_then_bootloader() {
        let b = bus();
        let bases = IpBases::new(&[0; 8]);
        b.regs.borrow_mut()[0x61] = 0x8000_0000;
        let e = wait_for_bootloader_steady_state(&b, &b, &bases, 1_000_000).unwrap_err();
        assert!(matches!(
            e,
            PspError::Wait(crate::bus::WaitError::Timeout {
                what: "MP0_SMN_C2PMSG_35",
                ..
            })
        ));
        // Bit 31 with a status bit is not ready: Linux compares the
        // whole register.
        b.regs.borrow_mut()[0x63] = 0x8000_0001;
        assert!(wait_for_bootloader_steady_state(&b, &b, &bases, 1_000_000).is_err());
        b.regs.borrow_mut()[0x63] = 0x8000_0000;
        wait_for_bootloader_steady_state(&b, &b, &bases, 1_000_000).unwrap();
    }

    /// 3000 × 100 ms.
    #[test]
    fn bootloader_budget_is_vmbx_polling_limit() {
        assert_eq!(BOOTLOADER_TIMEOUT_NS, 300_000_000_000);
    }
}
