//! MP0 13.0.6 (MI300) firmware loading and GC 9.4.3 per-XCC RLC/MEC
//! start, against the model, with the real blobs from
//! `firmware-amd-graphics` (`/lib/firmware/amdgpu`).
//!
//! Expected values are written by hand: the SOS and TA layouts from a
//! hex dump of the real blobs (`xxd -l 0x130 psp_13_0_6_sos.bin`,
//! `xxd -l 0x60 psp_13_0_6_ta.bin`) read with the structs of
//! `amdgpu_ucode.h`; the command and register orders from
//! `amdgpu_psp.c` (`psp_hw_start()`, `psp_load_non_psp_fw()`,
//! `psp_rl_load()`) and `gfx_v9_4_3.c` (`gfx_v9_4_3_xcc_rlc_resume()`,
//! `gfx_v9_4_3_xcc_cp_resume()`).
//!
//! The PSP runs on memory from the Navi31 PSP rig (its GART, hub and
//! buffers; the rig's own 13.0.0 model is not used): a second PSP model,
//! primed for 13.0.6 by the model's own reader, sits over the same MC at
//! the 13.0.6 mailbox offsets (the same as 13.0.0's).

use barebell::bus::{Block, WaitError};
use barebell::gfx::start_v9_4_3::{self as start, CpResumeHooks, MecOnly, StartError};
use barebell::psp::mp13_0_6::{self as mp, GfxBlobs, SosSet};
use barebell::psp::{Component, Image, Psp, PspError, PspRegs};
use barebell::regs::IpBases;
use barebell::time::Clock;
use barebell_firmware_if::psp_gfx::{cmd_id, fw_type};
use barebell_firmware_if::{Firmware, Kind, parse};
use barebell_model::SimClock;
use barebell_model::clock::HostClock;
use barebell_model::psp::iface::fw as mfw;
use barebell_model::psp::mp13_0_6 as mexp;
use barebell_model::psp::{LoadedFirmware, PspModel, PspPlacement, status};
use barebell_model::rlc_mec_v9_4_3::{MecRefusal, RlcMecV943, Write};
use barebell_model_host::psp_rig::{self as rig, Rig, navi31};
use std::path::Path;
use std::sync::Arc;

const FIRMWARE: &str = "/lib/firmware/amdgpu";

fn blob(name: &str) -> &'static [u8] {
    let b = std::fs::read(Path::new(FIRMWARE).join(name))
        .unwrap_or_else(|e| panic!("{name}: {e} (firmware-amd-graphics)"));
    Box::leak(b.into_boxed_slice())
}

fn fw(name: &str) -> Firmware<'static> {
    parse(Kind::from_file_name(name), blob(name)).unwrap()
}

/// `(name, absolute offset, size)` of every section, in header order.
fn layout(f: &Firmware<'_>) -> Vec<(&'static str, usize, usize)> {
    f.sections()
        .iter()
        .map(|s| (s.name, s.offset, s.size))
        .collect()
}

/// The real SOS bundle: `psp_firmware_header_v2_1`, 16 descriptors, the
/// auxiliary set from index 8; offsets relative to
/// `ucode_array_offset_bytes` = 0x200 (bytes 0x18..0x1c), so absolute =
/// 0x200 + `offset_bytes`. Read off the hex dump, descriptor by
/// descriptor (16 bytes each from 0x28: type, version, offset, size).
#[test]
fn sos_bundle_layout_matches_the_hex_dump() {
    let sos = fw("psp_13_0_6_sos.bin");
    assert_eq!(sos.container.header_version(), (2, 1));
    assert_eq!(sos.container.header().size_bytes.get(), 0x000b_f260);
    assert_eq!(sos.container.header().ucode_size_bytes.get(), 0x000b_f060);
    assert_eq!(sos.container.header().ucode_array_offset_bytes.get(), 0x200);
    match sos.body {
        barebell_firmware_if::Body::Psp(barebell_firmware_if::ucode::psp::Psp::SosV2 {
            count,
            aux_index,
            ..
        }) => {
            assert_eq!(count, 16);
            assert_eq!(aux_index, Some(8));
        }
        other => panic!("not a v2 SOS bundle: {other:?}"),
    }
    let want = vec![
        ("sys_drv", 0x200, 0x11200),
        ("sos", 0x11400, 0x1ab80),
        ("kdb", 0x2bf80, 0x2600),
        ("soc_drv", 0x2e580, 0x19200),
        ("intf_drv", 0x47780, 0x8200),
        ("dbg_drv", 0x4f980, 0x8200),
        ("ras_drv", 0x57b80, 0x7200),
        ("rl", 0x5ed80, 0x24c0),
        ("sys_drv_aux", 0x61240, 0x10200),
        ("sos_aux", 0x71440, 0x1ab80),
        ("kdb_aux", 0x8bfc0, 0x2600),
        ("soc_drv_aux", 0x8e5c0, 0x18200),
        ("intf_drv_aux", 0xa67c0, 0x8200),
        ("dbg_drv_aux", 0xae9c0, 0x7200),
        ("ras_drv_aux", 0xb5bc0, 0x7200),
        ("rl_aux", 0xbcdc0, 0x24a0),
    ];
    assert_eq!(layout(&sos), want);
    // No SPL, no TOC: neither stage runs on this part.
    assert!(sos.section("spl").is_none() && sos.section("toc").is_none());
}

/// The TA blob: `ta_firmware_header_v2_0` with 3 descriptors (array at
/// 0x100): XGMI (type 2), RAS (3) and a type 8 that Linux 6.12's
/// `parse_ta_bin_descriptor()` does not know.
#[test]
fn ta_blob_layout_and_linuxs_use_of_it() {
    let ta = fw("psp_13_0_6_ta.bin");
    assert_eq!(ta.container.header_version(), (2, 0));
    assert_eq!(
        layout(&ta),
        vec![
            ("xgmi", 0x100, 0x5240),
            ("ras", 0x5340, 0xb600),
            ("unknown", 0x10940, 0x5240),
        ]
    );
    let plan = mp::ta_plan(&ta).unwrap();
    assert_eq!(plan.ras.map(<[u8]>::len), Some(0xb600));
    assert_eq!(plan.xgmi.map(<[u8]>::len), Some(0x5240));
    assert_eq!((plan.others, plan.unknown), (0, 1));
}

/// `SosSet::for_pmfw_version()` at the 85.115.0 boundary of
/// `psp_v13_0_is_aux_sos_load_required()`.
#[test]
fn aux_set_below_pmfw_85_115_0() {
    assert_eq!(SosSet::for_pmfw_version(0x0055_72ff), SosSet::Aux);
    assert_eq!(SosSet::for_pmfw_version(0x0055_7300), SosSet::Primary);
}

/// The sOS versions `parse_sos_bin_descriptor()` reads from Debian's
/// `psp_13_0_6_sos.bin` (v2.1, 16 descriptors, the auxiliary set from
/// index 8; descriptor 1's and 9's `fw_type` 1, `PSP_FW_TYPE_PSP_SOS`,
/// carry fw_version 0x00360256 and 0x0036024E, read from the file with a
/// separate script): both at least 0x0036003C, so Linux sends the P2S
/// table whichever set it loads; and `smu_13_0_6.bin` carries a
/// `P2S_TABLE_ID_X` entry.
#[test]
fn debians_sos_takes_the_p2s_table_and_the_smu_blob_carries_it() {
    let b = blobs();
    assert_eq!(mp::sos_version(&b.sos, SosSet::Primary), Some(0x0036_0256));
    assert_eq!(mp::sos_version(&b.sos, SosSet::Aux), Some(0x0036_024E));
    // `supp_vers` of a dGPU in psp_load_p2s_table().
    assert_eq!(mp::P2S_MIN_SOS_VERSION, 0x0036_003C);
    let smu = fw("smu_13_0_6.bin");
    assert!(mp::p2s_table(&smu).is_some_and(|t| !t.is_empty()));
}

struct Run {
    rig: Rig,
    model: &'static PspModel,
}

/// A 13.0.6 PSP model over the Navi31 rig's memory.
fn run(aux: bool) -> Run {
    let rig = rig::rig(Path::new(FIRMWARE), &navi31(), |_| {}).unwrap();
    let expect = mexp::expect(
        &mut |name| {
            use barebell_model::FirmwareFiles;
            barebell_model::FilesDir(FIRMWARE.into()).read(name)
        },
        aux,
    )
    .unwrap();
    let place = PspPlacement {
        regs: PspRegs::MP0_13_0_6,
        mp0_bases: rig.mp0.bases,
        gc: None,
        gc_bases: rig.gc.bases,
    };
    let model: &'static PspModel = Box::leak(Box::new(PspModel::new(
        rig.clock,
        place,
        expect,
        rig.mc_arc.clone(),
    )));
    let _ = rig.bufs.as_ref().unwrap();
    Run { rig, model }
}

fn psp(r: &mut Run) -> Psp<'static, PspModel, HostClock> {
    Psp::new(
        r.model,
        r.rig.host,
        PspRegs::MP0_13_0_6,
        &r.rig.mp0.bases,
        r.rig.bufs.take().unwrap(),
    )
    .unwrap()
    .with_bootloader_timeout(mp::BOOTLOADER_TIMEOUT_NS)
}

struct Blobs {
    sos: Firmware<'static>,
    sdma: Firmware<'static>,
    mec: Firmware<'static>,
    rlc: Firmware<'static>,
    ta: Firmware<'static>,
}

fn blobs() -> Blobs {
    Blobs {
        sos: fw("psp_13_0_6_sos.bin"),
        sdma: fw("sdma_4_4_2.bin"),
        mec: fw("gc_9_4_3_mec.bin"),
        rlc: fw("gc_9_4_3_rlc.bin"),
        ta: fw("psp_13_0_6_ta.bin"),
    }
}

fn images(b: &Blobs) -> Vec<Image<'static>> {
    let mut out = [Image {
        fw_type: 0,
        bytes: &[],
    }; 16];
    let g = GfxBlobs {
        sdma: &b.sdma,
        mec: &b.mec,
        rlc: &b.rlc,
    };
    let n = mp::gfx_images(g, &mut out).unwrap();
    out[..n].to_vec()
}

/// The whole 13.0.6 sequence against the model, with the real blobs:
/// seven bootloader stages, the ring, an empty SETUP_TMR, ten ucode
/// loads in `AMDGPU_UCODE_ID` order, the RL; the model refuses nothing
/// and has the MEC and RLC code in place.
#[test]
fn psp_13_0_6_loads_mi300_firmware_on_the_model() {
    for (aux, set) in [(false, SosSet::Primary), (true, SosSet::Aux)] {
        let mut r = run(aux);
        let b = blobs();
        let imgs = images(&b);
        // psp_get_fw_type() of SDMA0..3, CP_MEC1, CP_MEC1_JT,
        // RLC_RESTORE_LIST_CNTL/GPM/SRM, RLC_G (psp_gfx_if.h numbers).
        let types: Vec<u32> = imgs.iter().map(|i| i.fw_type).collect();
        assert_eq!(types, vec![9, 10, 52, 53, 4, 5, 22, 20, 21, 8]);
        // CP_MEC1 is the payload less the jump table; the JT is
        // jt_size * 4 bytes (gc_9_4_3_mec.bin: ucode_size 0x418c0 at
        // 0x100, jt_offset 0x10510 dwords, jt_size 0x120 dwords).
        assert_eq!(imgs[4].bytes.len(), 0x418c0 - 0x120 * 4);
        assert_eq!(imgs[5].bytes.len(), 0x120 * 4);
        let ta = mp::ta_plan(&b.ta).unwrap();
        let mut p = psp(&mut r);
        let rep = mp::load_firmware(&mut p, &b.sos, set, None, &imgs, Some(&ta)).unwrap();
        assert_eq!(rep.components, 7);
        assert_eq!(rep.ip_fw_loads, 10);
        assert!(rep.rl_loaded);
        assert_eq!(rep.tas_not_loaded, 1);
        assert_eq!(r.model.refusals(), vec![]);
        // GPCOM commands as the model saw them: SETUP_TMR (5), then
        // LOAD_IP_FW (6) for the ten ucodes and the RL, all status 0.
        let mut want = vec![(cmd_id::SETUP_TMR, 0)];
        want.extend(std::iter::repeat_n((cmd_id::LOAD_IP_FW, 0), 11));
        assert_eq!(r.model.commands(), want);
        let loaded = r.model.loaded();
        for t in [mfw::CP_MEC, mfw::CP_MEC_ME1, mfw::RLC_G, mfw::SDMA3] {
            assert!(loaded.has(t), "type {t} not in place");
        }
    }
}

/// The auxiliary sOS set to a PSP expecting the primary one: the
/// bootloader refuses the first component that differs (SYS_DRV: 0x10200
/// vs 0x11200 bytes; the two KDBs are the same bytes) and the runtime
/// names the stage.
#[test]
fn wrong_sos_set_is_refused() {
    let mut r = run(false);
    let b = blobs();
    let imgs = images(&b);
    let mut p = psp(&mut r);
    let e = mp::load_firmware(&mut p, &b.sos, SosSet::Aux, None, &imgs, None).unwrap_err();
    assert_eq!(
        e,
        PspError::BootloaderStatus {
            component: Component::SysDrv,
            status: status::PAYLOAD,
        }
    );
}

/// A ucode before SETUP_TMR: refused with the model's ORDER status,
/// which reaches the caller as `CommandFailed` naming the type.
#[test]
fn ucode_before_setup_tmr_is_refused() {
    let mut r = run(false);
    let b = blobs();
    let imgs = images(&b);
    let mut p = psp(&mut r);
    for c in mp::STAGES {
        if let Some(s) = b.sos.section(SosSet::Primary.section(c)) {
            p.bootloader_load(c, b.sos.bytes(s)).unwrap();
        }
    }
    p.ring_create().unwrap();
    let e = p.load_ip_fw(imgs[0].fw_type, imgs[0].bytes).unwrap_err();
    assert_eq!(
        e,
        PspError::CommandFailed {
            cmd_id: cmd_id::LOAD_IP_FW,
            fw_type: fw_type::SDMA0,
            status: status::ORDER,
        }
    );
    // A TMR of the driver's own where 13.0.6 keeps its boot-time one.
    let e = p.setup_tmr(0x10_0000, 0x40_0000, 0).unwrap_err();
    assert!(matches!(e, PspError::CommandFailed { status: s, .. } if s == status::TMR));
    // The empty SETUP_TMR Linux sends is taken; AUTOLOAD_RLC is not.
    p.setup_tmr(0, 0, 0).unwrap();
    let e = p.autoload_rlc().unwrap_err();
    assert!(matches!(e, PspError::CommandFailed { status: s, .. } if s == status::ORDER));
}

/// Wrong or missing blobs: the RLC blob where the MEC's belongs is
/// refused by the runtime before anything is sent; a MEC image sent as
/// SDMA0 is refused by the model as a payload mismatch.
#[test]
fn wrong_or_missing_blob_is_refused() {
    let b = blobs();
    let mut out = [Image {
        fw_type: 0,
        bytes: &[],
    }; 16];
    let g = GfxBlobs {
        sdma: &b.sdma,
        mec: &b.rlc,
        rlc: &b.rlc,
    };
    assert_eq!(
        mp::gfx_images(g, &mut out),
        Err(PspError::Missing {
            what: "a blob of the right kind",
            blob: "the GC 9.4.x MEC blob",
        })
    );
    // A TA blob where the SOS bundle belongs.
    let mut r = run(false);
    let mut p = psp(&mut r);
    let e = mp::load_firmware(&mut p, &b.ta, SosSet::Primary, None, &[], None).unwrap_err();
    assert!(matches!(
        e,
        PspError::Missing {
            blob: "the SOS bundle",
            ..
        }
    ));
    // Swapped images.
    let mut imgs = images(&b);
    imgs[0].bytes = imgs[4].bytes;
    let e = mp::load_firmware(&mut p, &b.sos, SosSet::Primary, None, &imgs, None).unwrap_err();
    assert_eq!(
        e,
        PspError::CommandFailed {
            cmd_id: cmd_id::LOAD_IP_FW,
            fw_type: fw_type::SDMA0,
            status: status::PAYLOAD,
        }
    );
}

// --- RLC and MEC per XCC -------------------------------------------------

/// GC segment bases of each XCC: model values (no public MI300 discovery
/// table); segment 1 holds the RLC registers.
fn xcc_bases(n: usize) -> Vec<[u32; 8]> {
    (0..n as u32)
        .map(|i| {
            let b = 0x10_0000 + i * 0x1_0000;
            [b, b + 0x2000, 0, 0, 0, 0, 0, 0]
        })
        .collect()
}

struct Xccs {
    clock: SimClock,
    host: HostClock,
    model: RlcMecV943,
    bases: Vec<IpBases>,
}

fn xccs(n: usize, loaded: Vec<u32>) -> Xccs {
    let clock = SimClock::new();
    let host = clock.host_view(100);
    let loaded = Arc::new(LoadedFirmware::autoloaded(&clock, loaded));
    let raw = xcc_bases(n);
    let bases = raw.iter().map(|b| IpBases::new(b)).collect();
    Xccs {
        model: RlcMecV943::new(&clock, raw, loaded),
        clock,
        host,
        bases,
    }
}

impl Xccs {
    fn blocks(&self) -> Vec<Block<'_, RlcMecV943>> {
        self.bases
            .iter()
            .map(|b| Block::new(&self.model, *b))
            .collect()
    }
}

const ALL_FW: [u32; 3] = [mfw::RLC_G, mfw::CP_MEC, mfw::CP_MEC_ME1];

fn w(xcc: usize, reg: &'static str, value: u32) -> Write {
    Write { xcc, reg, value }
}

/// `gfx_v9_4_3_hw_init()` with PSP loading, on 4 XCCs: the writes, in
/// Linux's order, written out from `gfx_v9_4_3.c`:
/// rlc_resume per XCC: RLC_SAFE_MODE = CMD | MESSAGE(1) = 0x3,
/// RLC_CGCG_CGLS_CTRL = 0, RLC_SRM_CNTL |= SRM_ENABLE (1),
/// RLC_SAFE_MODE = CMD = 0x1; then cp_resume per XCC:
/// CP_INT_CNTL_RING0 &= ~0x1C0000, CP_MEC_CNTL = 0x503F0010 (halt,
/// resets, icache invalidate), CP_MEC_CNTL = 0, CP_INT_CNTL_RING0 |=
/// 0x1C0000. Every MEC then runs.
#[test]
fn rlc_and_mec_start_per_xcc_in_linuxs_order() {
    let x = xccs(4, ALL_FW.to_vec());
    let blocks = x.blocks();
    for i in 0..4 {
        assert!(matches!(
            x.model.mec_run(i),
            Err(MecRefusal::Halted {
                cp_mec_cntl: 0x5000_0000,
                ..
            })
        ));
    }
    let r = start::start(&blocks, &x.host, true, &mut MecOnly).unwrap();
    assert_eq!((r.safe_mode, r.xccs), (4, 4));
    let mut want = Vec::new();
    for i in 0..4 {
        want.extend([
            w(i, "RLC_SAFE_MODE", 0x3),
            w(i, "RLC_CGCG_CGLS_CTRL", 0),
            w(i, "RLC_SRM_CNTL", 0x1),
            w(i, "RLC_SAFE_MODE", 0x1),
        ]);
    }
    for i in 0..4 {
        want.extend([
            w(i, "CP_INT_CNTL_RING0", 0),
            w(i, "CP_MEC_CNTL", 0x503F_0010),
            w(i, "CP_MEC_CNTL", 0),
            w(i, "CP_INT_CNTL_RING0", 0x001C_0000),
        ]);
    }
    assert_eq!(x.model.writes(), want);
    assert_eq!(x.model.refusals(), vec![]);
    for i in 0..4 {
        assert_eq!(x.model.mec_run(i), Ok(()));
        assert!(x.model.srm_enabled(i) && !x.model.in_safe_mode(i));
    }
    // Each CP_MEC_CNTL write is followed by udelay(50).
    assert!(x.clock.now_ns() >= 8 * start::MEC_CNTL_DELAY_NS);
}

/// A MEC that was never enabled runs nothing: RLC resume alone leaves
/// every `CP_MEC_CNTL` at its halted reset value.
#[test]
fn mec_never_enabled_runs_nothing() {
    let x = xccs(2, ALL_FW.to_vec());
    start::rlc_resume(&x.blocks(), &x.host, true).unwrap();
    assert_eq!(
        x.model.mec_run(1),
        Err(MecRefusal::Halted {
            xcc: 1,
            me: 1,
            pipe: 0,
            cp_mec_cntl: 0x5000_0000
        })
    );
}

/// Enabled registers without the MEC firmware loaded through the PSP:
/// still nothing runs. And with the RLC's code missing the RLC does not
/// run, so (as Linux) no safe mode is requested.
#[test]
fn mec_without_psp_firmware_runs_nothing() {
    let x = xccs(2, vec![]);
    start::start(&x.blocks(), &x.host, true, &mut MecOnly).unwrap();
    assert_eq!(x.model.mec_run(0), Err(MecRefusal::NoFirmware { xcc: 0 }));
    assert!(x.model.writes().iter().all(|w| w.reg != "RLC_SAFE_MODE"));
}

/// The KIQ hook runs while the MEC is halted, the queue hook once it
/// runs; a failing hook stops the start with the XCC named.
#[test]
fn cp_resume_hooks_run_between_halt_and_enable() {
    struct Hooks<'a>(&'a RlcMecV943, Vec<(usize, &'static str, bool)>);
    impl CpResumeHooks for Hooks<'_> {
        fn kiq(&mut self, xcc: usize) -> Result<(), StartError> {
            let runs = self.0.mec_run(xcc).is_ok();
            self.1.push((xcc, "kiq", runs));
            Ok(())
        }
        fn queues(&mut self, xcc: usize) -> Result<(), StartError> {
            let runs = self.0.mec_run(xcc).is_ok();
            self.1.push((xcc, "queues", runs));
            if xcc == 1 {
                return Err(StartError::Step {
                    xcc,
                    step: "KCQ map",
                });
            }
            Ok(())
        }
    }
    let x = xccs(3, ALL_FW.to_vec());
    let mut h = Hooks(&x.model, Vec::new());
    let e = start::cp_resume(&x.blocks(), &x.host, &mut h).unwrap_err();
    assert_eq!(
        e,
        StartError::Step {
            xcc: 1,
            step: "KCQ map"
        }
    );
    assert_eq!(
        h.1,
        vec![
            (0, "kiq", false),
            (0, "queues", true),
            (1, "kiq", false),
            (1, "queues", true),
        ]
    );
}

/// An RLC that runs on XCC 0 (which `gfx_v9_4_3_is_rlc_enabled()` asks)
/// but was stopped on XCC 1 never acknowledges safe mode there: a
/// bounded wait and a typed error naming the XCC.
#[test]
fn safe_mode_without_ack_is_a_typed_timeout() {
    let x = xccs(2, ALL_FW.to_vec());
    let blocks = x.blocks();
    blocks[1]
        .write(barebell::regs::gc_9_4_3_rlc::RLC_CNTL, 0)
        .unwrap();
    let e = start::rlc_resume(&blocks, &x.host, true).unwrap_err();
    match e {
        StartError::SafeMode {
            xcc: 1,
            error: WaitError::Timeout { waited_ns, .. },
        } => assert!(waited_ns >= start::SAFE_MODE_TIMEOUT_NS),
        other => panic!("{other:?}"),
    }
}

/// tinygrad's AM sends the KDB a second time as `PSP_BL__LOAD_TOS_SPL_TABLE`
/// on MP0 13.0.6, whose bundle has no SPL (`AM_PSP.init_hw`: `spl_key` =
/// the KDB below MP0 14); the model takes it as a no-op, so the stages
/// after it go on (before: refused as out of order). Any other bytes as
/// the SPL stage are still refused.
#[test]
fn the_kdb_again_as_spl_is_taken_where_the_bundle_has_no_spl() {
    let mut r = run(false);
    let b = blobs();
    let mut p = psp(&mut r);
    let kdb = b.sos.bytes(
        b.sos
            .section(SosSet::Primary.section(Component::Kdb))
            .unwrap(),
    );
    p.bootloader_load(Component::Kdb, kdb).unwrap();
    p.bootloader_load(Component::Spl, kdb).unwrap();
    let sys = b.sos.bytes(
        b.sos
            .section(SosSet::Primary.section(Component::SysDrv))
            .unwrap(),
    );
    let e = p.bootloader_load(Component::Spl, sys).unwrap_err();
    assert_eq!(
        e,
        PspError::BootloaderStatus {
            component: Component::Spl,
            status: status::ORDER,
        }
    );
    p.bootloader_load(Component::SysDrv, sys).unwrap();
    assert_eq!(r.model.refusals().len(), 1);
}
