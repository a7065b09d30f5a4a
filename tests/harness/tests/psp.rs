//! PSP firmware loading against the PSP model, with the real blobs from
//! `firmware-amd-graphics` (`/lib/firmware/amdgpu`).
//!
//! The register bases come from a discovery table the model synthesises
//! and the runtime parses, so the path is discovery → register offsets →
//! bootloader → ring → commands → RLC autoload. What the model expects
//! (component order, which section goes with which `GFX_FW_TYPE`, the
//! load order) is written out by hand in `barebell_model_host::psp_rig` from
//! `psp_hw_start()`, `AMDGPU_UCODE_ID` and `psp_get_fw_type()`,
//! independently of the runtime's tables, so an ordering or mapping slip
//! in either shows.
//!
//! The refusal tests break one thing each and check both sides: the
//! model logged the refusal it should, and the runtime returned the typed
//! error that names it.
//!
//! Every PSP memory access goes through the model's MC
//! (`barebell_model::mc`): the rig's buffers sit in GTT behind VMID0 page
//! tables the runtime built and a hub the runtime programmed, so the
//! mapping tests break the tables (a missing PTE, a PTE without SYSTEM)
//! and check what the PSP, the hub's fault registers and the runtime's
//! error then say. Fault register fields are decoded with the masks
//! parsed from `gc_11_0_0_sh_mask.h`, not with the model's constants.

use barebell::bus::WaitError;
use barebell::psp::{self, Component, DmaBuf, Image, Loaded, Psp, PspBuffers, PspError};
use barebell_model::SimClock;
use barebell_model::clock::HostClock;
use barebell_model::gmc::Access;
use barebell_model::mc::{McFaultKind, Target};
use barebell_model::psp::iface::bl;
use barebell_model::psp::{PspExpect, PspModel, status};
use barebell_model_host::psp_rig::{
    self as rig, FENCE_VA, FW_PRI_BYTES, FW_PRI_VA, Layout, Mapping, PartFirmware, Rig, navi31,
    navi48,
};
use std::path::Path;
use std::ptr::NonNull;

/// Zeroed, leaked memory at `align`.
fn region(len: usize, align: usize) -> (NonNull<u8>, u64) {
    let layout = std::alloc::Layout::from_size_align(len, align).unwrap();
    // SAFETY: non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    let p = NonNull::new(p).unwrap();
    (p, p.as_ptr() as u64)
}

const FIRMWARE: &str = "/lib/firmware/amdgpu";

/// `psp_hw_start()`'s component order, by barebell-firmware-if's
/// SOS-bundle section name: how these tests drive the runtime's
/// bootloader loads one by one.
const BOOT_ORDER: [(&str, Component); 9] = [
    ("kdb", Component::Kdb),
    ("spl", Component::Spl),
    ("sys_drv", Component::SysDrv),
    ("soc_drv", Component::SocDrv),
    ("intf_drv", Component::IntfDrv),
    ("dbg_drv", Component::DbgDrv),
    ("ras_drv", Component::RasDrv),
    ("ipkeymgr_drv", Component::IpKeyMgrDrv),
    ("sos", Component::Sos),
];

fn rig(part: &PartFirmware, tweak: impl FnOnce(&mut PspExpect)) -> Rig {
    rig::rig(Path::new(FIRMWARE), part, tweak)
        .unwrap_or_else(|e| panic!("{e} (firmware-amd-graphics)"))
}

fn rig_layout(part: &PartFirmware, layout: Layout) -> Rig {
    rig::rig_layout(Path::new(FIRMWARE), part, layout, |_| {})
        .unwrap_or_else(|e| panic!("{e} (firmware-amd-graphics)"))
}

type RigPsp = Psp<'static, PspModel, HostClock>;

fn psp_of(r: &mut Rig) -> RigPsp {
    Psp::new(
        r.model,
        r.host,
        r.regs,
        &r.mp0.bases,
        r.bufs.take().unwrap(),
    )
    .unwrap()
    .with_fault_hub(r.fault_hub())
}

/// `#define NAME VALUE` from a header under the extracted Linux tree.
fn header_value(header: &str, name: &str) -> u64 {
    let path = format!(
        "{}/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/include/asic_reg/{header}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some(name)).then(|| w.next())?
        })
        .map(|v| {
            let v = v.trim_end_matches(['L', 'U', 'l', 'u']);
            u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap()
        })
        .unwrap_or_else(|| panic!("{name} not in {header}"))
}

fn field(header: &str, reg_field: &str, value: u32) -> u64 {
    let mask = header_value(header, &format!("{reg_field}_MASK"));
    let shift = header_value(header, &format!("{reg_field}__SHIFT"));
    (u64::from(value) & mask) >> shift
}

/// Navi31's MMHUB 3.0.0 field masks.
const MMHUB_SH_MASK: &str = "mmhub/mmhub_3_0_0_sh_mask.h";

/// The MMHUB's raw fault status word, as the host reads it.
fn fault_status_word(r: &Rig) -> u32 {
    use barebell::bus::RegisterBus;
    assert_eq!(r.hub_regs.name, "MMHUB 3.0.0");
    r.hub
        .read32(r.hub_regs.fault_status.byte_offset(&r.mmhub.bases).unwrap())
}

/// The MMHUB's fault registers as the host reads them (Navi31), decoded
/// with the header's masks: `(address, vmid, cid, rw)`.
fn fault_registers(r: &Rig) -> (u64, u64, u64, u64) {
    use barebell::bus::RegisterBus;
    let at = |reg: barebell::regs::Reg| reg.byte_offset(&r.mmhub.bases).unwrap();
    let status = fault_status_word(r);
    let lo = r.hub.read32(at(r.hub_regs.fault_addr_lo));
    let hi = r.hub.read32(at(r.hub_regs.fault_addr_hi));
    let h = MMHUB_SH_MASK;
    let page = field(
        h,
        "MMVM_L2_PROTECTION_FAULT_ADDR_HI32__LOGICAL_PAGE_ADDR_HI4",
        hi,
    ) << 32
        | field(
            h,
            "MMVM_L2_PROTECTION_FAULT_ADDR_LO32__LOGICAL_PAGE_ADDR_LO32",
            lo,
        );
    let st = |f: &str| field(h, &format!("MMVM_L2_PROTECTION_FAULT_STATUS__{f}"), status);
    (page << 12, st("VMID"), st("CID"), st("RW"))
}

/// The bootloader stages as Linux sends them, for driving the runtime
/// one stage at a time: every component of the bundle in
/// `psp_hw_start()` order, except that on MP0 13.0.0 the SPL stage
/// carries the KDB (`psp_v13_0_bootloader_load_spl()` passes
/// `&psp->kdb`), and that 13.0.0 has no IPKEYMGR stage.
fn stages(r: &Rig) -> Vec<(Component, &'static [u8])> {
    let v13 = r.mp0.version.triple() == (13, 0, 0);
    BOOT_ORDER
        .iter()
        .filter(|(_, c)| !(v13 && *c == Component::IpKeyMgrDrv))
        .filter_map(|(name, c)| {
            r.sos.section(name)?;
            let name = if v13 && *c == Component::Spl {
                "kdb"
            } else {
                name
            };
            Some((*c, r.sos.bytes(r.sos.section(name)?)))
        })
        .collect()
}

fn boot_and_ring(r: &Rig, p: &mut RigPsp) {
    for (c, bytes) in stages(r) {
        p.bootloader_load(c, bytes).unwrap();
    }
    p.ring_create().unwrap();
}

fn images(r: &Rig) -> Vec<Image<'static>> {
    let mut out = vec![
        Image {
            fw_type: 0,
            bytes: &[]
        };
        64
    ];
    let n = psp::gfx_images(&r.blobs, &mut out).unwrap();
    out.truncate(n);
    out
}

fn run_part(part: PartFirmware) {
    run_layout(part, Layout::default());
}

fn run_layout(part: PartFirmware, layout: Layout) {
    let mut r = rig_layout(&part, layout);
    let images = images(&r);
    // The runtime's order and mapping equal the hand-written Linux order.
    let want: Vec<u32> = part.gfx.iter().map(|g| g.0).collect();
    let got: Vec<u32> = images.iter().map(|i| i.fw_type).collect();
    assert_eq!(got, want);
    let mut p = psp_of(&mut r);
    let report = psp::load_firmware(
        &mut p,
        r.plan,
        &r.sos,
        Some(r.smu),
        &images,
        Some(&mut r.tmr),
    )
    .unwrap();
    p.wait_rlc_autoload(r.gc_regs, &r.gc.bases).unwrap();
    assert_eq!(r.model.refusals(), vec![]);
    // The RLC autoload put the whole Linux list in place: every MES and
    // MEC pipe has its code.
    let loaded = r.model.loaded();
    assert_eq!(
        loaded.images(),
        part.gfx
            .iter()
            .map(|g| g.0)
            .collect::<std::collections::BTreeSet<u32>>()
    );
    assert!(loaded.mes_pipe(0) && loaded.mes_pipe(1));
    assert!((0..4).all(|pipe| loaded.mec_pipe(pipe)));
    let n_components = BOOT_ORDER
        .iter()
        .filter(|(n, _)| r.sos.section(n).is_some())
        .count();
    assert_eq!(report.components, n_components);
    // LOAD_TOC's answer is the part's (0x1300000 on Navi31, as on a
    // real RX 7900 XTX).
    assert_eq!(report.tmr_size, part.tmr_size);
    assert_eq!(report.ip_fw_loads, part.gfx.len() + 1);
    // Every GPCOM command succeeded, in the plan's order.
    let cmds: Vec<u32> = r.model.commands().iter().map(|c| c.0).collect();
    let mut want_cmds = vec![0x20]; // LOAD_TOC
    if r.plan.setup_tmr {
        want_cmds.extend([0x06, 0x05]); // SMU, SETUP_TMR
    } else {
        want_cmds.push(0x06);
    }
    want_cmds.extend(std::iter::repeat_n(0x06, part.gfx.len()));
    want_cmds.push(0x21);
    assert_eq!(cmds, want_cmds);
    assert!(r.model.commands().iter().all(|c| c.1 == 0));
    // Every access translated: nothing latched, nothing refused.
    assert_eq!(p.vm_fault(), None);
    assert_eq!(r.model.mc().faults(), vec![]);
}

#[test]
fn navi31_loads_firmware_and_rlc_autoload_completes() {
    run_part(navi31());
}

#[test]
fn navi48_loads_firmware_and_rlc_autoload_completes() {
    run_part(navi48());
}

#[test]
fn model_refuses_sos_before_sys_drv() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    let sos = r.sos.bytes(r.sos.section("sos").unwrap());
    // SOS first: the model waits for KDB.
    let err = p.bootloader_load(Component::Sos, sos).unwrap_err();
    // The SOS path waits for the sign of life, which never comes.
    assert!(matches!(
        err,
        PspError::Wait(WaitError::Timeout {
            what: "MP0_SMN_C2PMSG_81",
            ..
        })
    ));
    let kdb = r.sos.bytes(r.sos.section("kdb").unwrap());
    p.bootloader_load(Component::Kdb, kdb).unwrap();
    let sys = r.sos.bytes(r.sos.section("sys_drv").unwrap());
    // SYS_DRV before SPL: refused with the model's ORDER status.
    assert_eq!(
        p.bootloader_load(Component::SysDrv, sys),
        Err(PspError::BootloaderStatus {
            component: Component::SysDrv,
            status: status::ORDER
        })
    );
    let why: Vec<&str> = r.model.refusals().iter().map(|x| x.why).collect();
    assert_eq!(why, ["component out of order", "component out of order"]);
}

#[test]
fn model_refuses_wrong_payload() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    // The SPL table offered as the key database.
    let spl = r.sos.bytes(r.sos.section("spl").unwrap());
    assert_eq!(
        p.bootloader_load(Component::Kdb, spl),
        Err(PspError::BootloaderStatus {
            component: Component::Kdb,
            status: status::PAYLOAD
        })
    );
    assert_eq!(
        r.model.refusals()[0].why,
        "component bytes differ from the bundle"
    );
}

/// MP0 13.0.0's SPL stage carries the KDB (`psp_v13_0_bootloader_load_spl()`
/// passes `&psp->kdb`; tinygrad's `spl_key`); MP0 14.0.3's carries the
/// bundle's SPL (`psp_v14_0_bootloader_load_spl()`).
#[test]
fn spl_stage_carries_the_kdb_on_mp0_13_and_the_spl_on_14() {
    for part in [navi31(), navi48()] {
        let mut r = rig(&part, |_| {});
        let mut p = psp_of(&mut r);
        let kdb = r.sos.bytes(r.sos.section("kdb").unwrap());
        let spl = r.sos.bytes(r.sos.section("spl").unwrap());
        assert_ne!(kdb, spl);
        p.bootloader_load(Component::Kdb, kdb).unwrap();
        let v13 = r.mp0.version.triple() == (13, 0, 0);
        let (wrong, right) = if v13 { (spl, kdb) } else { (kdb, spl) };
        assert_eq!(
            p.bootloader_load(Component::Spl, wrong),
            Err(PspError::BootloaderStatus {
                component: Component::Spl,
                status: status::PAYLOAD
            })
        );
        p.bootloader_load(Component::Spl, right).unwrap();
        assert_eq!(r.model.refusals().len(), 1);
    }
}

#[test]
fn runtime_refuses_misaligned_bootloader_buffer_and_model_reads_wrong_place() {
    // The runtime will not hand the PSP a buffer it cannot address.
    let clock = SimClock::new();
    let r = rig(&navi31(), |_| {});
    let (p, mc) = region(2 << 20, 1 << 20);
    let bad = |base: NonNull<u8>, mc: u64| {
        // SAFETY: inside the leaked region above.
        unsafe { DmaBuf::new(base, 1 << 20, mc) }
    };
    // SAFETY: 4 KiB into the region, still inside it.
    let shifted = unsafe { NonNull::new_unchecked(p.as_ptr().add(4096)) };
    let bufs = PspBuffers {
        fw_pri: bad(shifted, mc + 4096),
        ring: bad(p, mc),
        cmd: bad(p, mc),
        fence: bad(p, mc),
    };
    assert_eq!(
        Psp::new(r.model, &clock, r.regs, &r.mp0.bases, bufs).unwrap_err(),
        PspError::Misaligned {
            what: "fw_pri buffer",
            mc_addr: mc + 4096,
            align: 1 << 20
        }
    );

    // Driving the mailbox by hand with such a buffer: C2PMSG_36 can only
    // carry addr >> 20, so the PSP reads 4 KiB before the component.
    let model = PspModel::new(
        &clock,
        r.model.placement(),
        PspExpect {
            stages: vec![(
                bl::LOAD_KEY_DATABASE,
                r.sos.bytes(r.sos.section("kdb").unwrap()).to_vec(),
            )],
            ..PspExpect::default()
        },
        r.mc_arc.clone(),
    );
    // The component 4 KiB into the rig's fw_pri buffer (GART FW_PRI_VA).
    let kdb = r.sos.bytes(r.sos.section("kdb").unwrap());
    let fw = r.gtt.fw_pri;
    // SAFETY: 4 KiB + kdb.len() is inside the leaked 2 MiB buffer, which
    // nothing else touches in this test.
    unsafe { std::ptr::copy_nonoverlapping(kdb.as_ptr(), fw.host.as_ptr().add(4096), kdb.len()) };
    use barebell::bus::RegisterBus;
    let c36 = r.regs.c2pmsg_36.byte_offset(&r.mp0.bases).unwrap();
    let c35 = r.regs.c2pmsg_35.byte_offset(&r.mp0.bases).unwrap();
    model.write32(c36, ((fw.va + 4096) >> 20) as u32);
    model.write32(c35, bl::LOAD_KEY_DATABASE);
    assert_eq!(model.refusals()[0].status, status::PAYLOAD);
    // It read, through the GART, what the runtime never wrote: no fault.
    assert_eq!(r.mc.faults(), vec![]);
}

#[test]
fn model_refuses_ip_fw_before_tmr_and_wrong_payloads() {
    let mut r = rig(&navi31(), |_| {});
    let images = images(&r);
    let mut p = psp_of(&mut r);
    for (c, bytes) in stages(&r) {
        assert_eq!(p.bootloader_load(c, bytes), Ok(Loaded::Loaded));
    }
    p.ring_create().unwrap();
    p.load_toc(r.sos.bytes(r.sos.section("toc").unwrap()))
        .unwrap();
    // A GFX image before SETUP_TMR.
    let first = images[0];
    assert_eq!(
        p.load_ip_fw(first.fw_type, first.bytes),
        Err(PspError::CommandFailed {
            cmd_id: 0x06,
            fw_type: first.fw_type,
            status: status::ORDER
        })
    );
    p.setup_tmr(r.tmr.mc_addr, rig::NAVI31_TMR, r.tmr.phys_addr)
        .unwrap();
    let second = images[1];
    // The right type with another section's bytes.
    assert!(matches!(
        p.load_ip_fw(first.fw_type, second.bytes),
        Err(PspError::CommandFailed {
            status: status::PAYLOAD,
            ..
        })
    ));
    // The right type, the right bytes but one short.
    assert!(matches!(
        p.load_ip_fw(first.fw_type, &first.bytes[..first.bytes.len() - 1]),
        Err(PspError::CommandFailed {
            status: status::PAYLOAD,
            ..
        })
    ));
    // A type no Navi31 blob provides (`GFX_FW_TYPE_CP_MEC`, 4: the
    // pre-RS64 MEC).
    assert!(matches!(
        p.load_ip_fw(4, first.bytes),
        Err(PspError::CommandFailed {
            status: status::PAYLOAD,
            ..
        })
    ));
    // AUTOLOAD_RLC before the RLC's own code is in.
    assert!(matches!(
        p.autoload_rlc(),
        Err(PspError::CommandFailed {
            cmd_id: 0x21,
            status: status::ORDER,
            ..
        })
    ));
    // The second image before the first is fine (see the AM test).
    p.load_ip_fw(second.fw_type, second.bytes).unwrap();
    p.load_ip_fw(first.fw_type, first.bytes).unwrap();
    let why: Vec<&str> = r.model.refusals().iter().map(|x| x.why).collect();
    assert_eq!(
        why,
        [
            "LOAD_IP_FW before SETUP_TMR",
            "GFX image differs from the blob section",
            "GFX image differs from the blob section",
            "GFX type this part's firmware does not provide",
            "AUTOLOAD_RLC without the RLC's code",
        ]
    );
}

/// tinygrad's AM loads a strict subset of Linux's images, in its own
/// order (`docs/am-boot.md` §1.4, from `AMFirmware` in tinygrad 0.14.0;
/// Navi31: SDMA TH1 before TH0, the MEC with its pipe-0 stack only, no
/// PFP/ME/MES), and sOS took it on a gfx1100. The model takes it too, the
/// autoload completes, and the record holds exactly those images: MEC
/// pipe 0 has code and stack, pipe 1 has no stack, no MES pipe has code.
#[test]
fn am_image_subset_in_am_order_is_accepted_and_recorded() {
    use barebell_model::psp::iface::fw;
    let mut r = rig(&navi31(), |_| {});
    let images = images(&r);
    let mut p = psp_of(&mut r);
    boot_and_ring(&r, &mut p);
    p.load_toc(r.sos.bytes(r.sos.section("toc").unwrap()))
        .unwrap();
    p.load_ip_fw(fw::SMU, r.smu).unwrap();
    p.setup_tmr(r.tmr.mc_addr, rig::NAVI31_TMR, r.tmr.phys_addr)
        .unwrap();
    let am = [
        fw::SDMA_UCODE_TH1,
        fw::SDMA_UCODE_TH0,
        fw::RS64_MEC,
        fw::RS64_MEC_P0_STACK,
        fw::IMU_I,
        fw::IMU_D,
        fw::RLC_IRAM,
        fw::RLC_DRAM_BOOT,
        fw::RLC_P,
        fw::RLC_V,
        fw::RLC_G,
    ];
    let loaded = r.model.loaded();
    for t in am {
        let img = images.iter().find(|i| i.fw_type == t).unwrap();
        p.load_ip_fw(t, img.bytes).unwrap();
    }
    p.autoload_rlc().unwrap();
    // Nothing is in place until the autoload has run.
    assert!(!loaded.complete());
    assert!(!loaded.has(fw::RLC_G));
    p.wait_rlc_autoload(r.gc_regs, &r.gc.bases).unwrap();
    assert_eq!(r.model.refusals(), vec![]);
    assert_eq!(
        loaded.images(),
        am.into_iter().collect::<std::collections::BTreeSet<u32>>()
    );
    assert!(loaded.mec_pipe(0));
    assert!(!loaded.mec_pipe(1));
    assert!(!loaded.mes_pipe(0) && !loaded.mes_pipe(1));
}

#[test]
fn ring_create_before_sos_times_out_naming_c2pmsg_64() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    assert!(matches!(
        p.ring_create(),
        Err(PspError::Wait(WaitError::Timeout {
            what: "MP0_SMN_C2PMSG_64",
            ..
        }))
    ));
    // And GPCOM commands need the ring.
    assert_eq!(
        p.load_toc(&[0; 16]),
        Err(PspError::OutOfOrder {
            step: "GPCOM submit",
            needs: "ring_create"
        })
    );
}

#[test]
fn bad_ring_frame_gets_no_fence() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    for (c, bytes) in stages(&r) {
        p.bootloader_load(c, bytes).unwrap();
    }
    p.ring_create().unwrap();
    // A write pointer that is not on a frame boundary.
    use barebell::bus::RegisterBus;
    let c67 = r.regs.c2pmsg_67.byte_offset(&r.mp0.bases).unwrap();
    r.model.write32(c67, 5);
    assert_eq!(
        r.model.refusals()[0].why,
        "write pointer not on a frame inside the ring"
    );
    // The runtime's next submission starts from the pointer the PSP
    // holds (0): the model consumed nothing, and the command still runs.
    assert!(
        p.load_toc(r.sos.bytes(r.sos.section("toc").unwrap()))
            .is_ok()
    );
}

#[test]
fn wrong_toc_is_refused_with_status() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    for (c, bytes) in stages(&r) {
        p.bootloader_load(c, bytes).unwrap();
    }
    p.ring_create().unwrap();
    let kdb = r.sos.bytes(r.sos.section("kdb").unwrap());
    assert_eq!(
        p.load_toc(kdb),
        Err(PspError::CommandFailed {
            cmd_id: 0x20,
            fw_type: 0,
            status: status::PAYLOAD
        })
    );
    // SETUP_TMR is refused until a good TOC.
    assert!(matches!(
        p.setup_tmr(r.tmr.mc_addr, rig::NAVI31_TMR, 0),
        Err(PspError::CommandFailed {
            cmd_id: 0x05,
            status: status::ORDER,
            ..
        })
    ));
    // The runtime refuses a misaligned TMR itself.
    assert_eq!(
        p.setup_tmr(r.tmr.mc_addr + 4096, rig::NAVI31_TMR, 0),
        Err(PspError::Misaligned {
            what: "TMR",
            mc_addr: r.tmr.mc_addr + 4096,
            align: 1 << 20
        })
    );
}

#[test]
fn device_gone_mid_bootloader_is_typed() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    let kdb = r.sos.bytes(r.sos.section("kdb").unwrap());
    p.bootloader_load(Component::Kdb, kdb).unwrap();
    r.model.unplug();
    let spl = r.sos.bytes(r.sos.section("spl").unwrap());
    assert_eq!(
        p.bootloader_load(Component::Spl, spl),
        Err(PspError::Wait(WaitError::DeviceGone {
            what: "MP0_SMN_C2PMSG_81",
            byte_offset: r.regs.c2pmsg_81.byte_offset(&r.mp0.bases).unwrap()
        }))
    );
}

#[test]
fn device_gone_during_fence_wait_is_typed() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    for (c, bytes) in stages(&r) {
        p.bootloader_load(c, bytes).unwrap();
    }
    p.ring_create().unwrap();
    r.model.unplug();
    assert_eq!(
        p.load_toc(&[1; 64]),
        Err(PspError::DeviceGone { cmd_id: 0x20 })
    );
}

#[test]
fn rlc_autoload_wait_is_bounded_and_names_the_register() {
    let mut r = rig(&navi31(), |_| {});
    let p = psp_of(&mut r);
    // No AUTOLOAD_RLC was sent: BOOTLOAD_COMPLETE never rises.
    assert!(matches!(
        p.wait_rlc_autoload(r.gc_regs, &r.gc.bases),
        Err(PspError::Wait(WaitError::Timeout {
            what: "RLC_RLCS_BOOTLOAD_STATUS",
            last: 0,
            ..
        }))
    ));
}

/// A fence whose PTE is missing: the PSP's fence write faults in the hub,
/// so the fence never comes; the runtime's bounded wait ends with a typed
/// timeout naming the command and carrying the fault the hub latched,
/// whose registers hold the fence's address.
#[test]
fn missing_fence_pte_faults_and_the_timeout_carries_the_vm_fault() {
    let mut r = rig_layout(
        &navi31(),
        Layout {
            fence: Mapping::Missing,
            ..Layout::default()
        },
    );
    let mut p = psp_of(&mut r);
    boot_and_ring(&r, &mut p);
    let toc = r.sos.bytes(r.sos.section("toc").unwrap());
    let err = p.load_toc(toc).unwrap_err();
    let PspError::FenceTimeout {
        cmd_id,
        want,
        last,
        waited_ns,
        vm_fault: Some(fault),
    } = err
    else {
        panic!("expected a fence timeout with a VM fault, got {err:?}");
    };
    assert_eq!((cmd_id, want, last), (0x20, 1, 0));
    assert!(waited_ns >= psp::FENCE_TIMEOUT_NS);
    // The runtime's decoding: the fence's GART address, VMID0, MP0's
    // client id (`mmhub_client_ids_v3_0_0[6]`), a write.
    assert_eq!(fault.addr, FENCE_VA);
    assert_eq!(fault.addr, r.gtt.fence.va);
    assert_eq!((fault.vmid, fault.cid, fault.write), (0, 6, true));
    let text = err.to_string();
    assert!(
        text.contains(&format!("protection fault at {FENCE_VA:#x}")),
        "{text}"
    );
    // The registers themselves, decoded with the header's field masks.
    assert_eq!(fault_registers(&r), (FENCE_VA, 0, 6, 1));
    // The model's side: it refused the frame because of the fence.
    assert_eq!(
        r.model.refusals().last().unwrap().why,
        "fence not mapped or misaligned"
    );
    let f = r.model.mc().faults();
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].addr, f[0].access), (FENCE_VA, Access::Write));
    assert!(matches!(f[0].kind, McFaultKind::Vm(_)));
}

/// A command buffer with no PTE: the PSP cannot read the command, runs
/// nothing and writes no fence; the timeout names the command buffer's
/// address as a read fault.
#[test]
fn missing_command_buffer_pte_is_a_read_fault() {
    let mut r = rig_layout(
        &navi31(),
        Layout {
            cmd: Mapping::Missing,
            ..Layout::default()
        },
    );
    let mut p = psp_of(&mut r);
    boot_and_ring(&r, &mut p);
    let toc = r.sos.bytes(r.sos.section("toc").unwrap());
    match p.load_toc(toc) {
        Err(PspError::FenceTimeout {
            cmd_id: 0x20,
            vm_fault: Some(f),
            ..
        }) => {
            assert_eq!((f.addr, f.write), (r.gtt.cmd.va, false));
        }
        other => panic!("expected a fence timeout with a VM fault, got {other:?}"),
    }
    assert_eq!(fault_registers(&r), (r.gtt.cmd.va, 0, 6, 0));
    assert!(r.model.commands().is_empty());
}

/// A PTE that leaves out SYSTEM sends the PSP to VRAM at the bus
/// address: no fault, but the bytes are not the image, and the PSP's
/// check of the payload refuses it.
#[test]
fn fw_pri_pte_without_system_bit_reads_vram_and_the_payload_is_refused() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    boot_and_ring(&r, &mut p);
    p.load_toc(r.sos.bytes(r.sos.section("toc").unwrap()))
        .unwrap();
    // Remap fw_pri with the same bus addresses but without SYSTEM.
    let fw = r.gtt.fw_pri;
    r.gart
        .map(fw.va, fw.bus, fw.len, rig::gtt_flags(false), false)
        .unwrap();
    assert_eq!(
        r.mc.translate(fw.va + 0x10, Access::Read, "test")
            .unwrap()
            .0,
        Target::Vram(fw.bus + 0x10)
    );
    assert_eq!(
        p.load_ip_fw(barebell_firmware_if::psp_gfx::fw_type::SMU, r.smu),
        Err(PspError::CommandFailed {
            cmd_id: 0x06,
            fw_type: barebell_firmware_if::psp_gfx::fw_type::SMU,
            status: status::PAYLOAD
        })
    );
    assert_eq!(
        r.model.refusals().last().unwrap().why,
        "SMU image differs from the blob"
    );
    // A wrong place, not a fault.
    assert_eq!(p.vm_fault(), None);
    assert_eq!(r.model.mc().faults(), vec![]);
}

/// fw_pri mapped with 2 MiB pages (PDB0 entries as PTEs): the walk
/// serves the whole buffer from one entry, every address lands at the
/// right bus address, and the full load runs.
#[test]
fn fw_pri_as_a_2mib_page_translates_and_the_load_completes() {
    let r = rig_layout(
        &navi31(),
        Layout {
            fw_pri: Mapping::LargePage,
            ..Layout::default()
        },
    );
    let fw = r.gtt.fw_pri;
    assert_eq!(fw.len, FW_PRI_BYTES);
    assert_eq!(fw.va, FW_PRI_VA);
    for off in [0, 0x1234, 0x10_0000, FW_PRI_BYTES - 4] {
        let (t, run) = r.mc.translate(fw.va + off, Access::Read, "test").unwrap();
        assert_eq!(t, Target::System(fw.bus + off));
        assert_eq!(run, FW_PRI_BYTES - off, "one 2 MiB TLB entry");
    }
    drop(r);
    run_layout(
        navi31(),
        Layout {
            fw_pri: Mapping::LargePage,
            ..Layout::default()
        },
    );
}

/// The default layout's fw_pri: 4 KiB PTEs whose fragment field promises
/// the 2 MiB block (VA and bus address are both 2 MiB aligned).
#[test]
fn fw_pri_ptes_carry_a_2mib_fragment() {
    let r = rig(&navi31(), |_| {});
    let fw = r.gtt.fw_pri;
    let (t, run) =
        r.mc.translate(fw.va + 0x5000, Access::Read, "test")
            .unwrap();
    assert_eq!(t, Target::System(fw.bus + 0x5000));
    assert_eq!(run, FW_PRI_BYTES - 0x5000);
}

/// An address in no aperture and outside VMID0's range faults as a
/// mapping error.
#[test]
fn address_outside_every_aperture_faults() {
    let r = rig(&navi31(), |_| {});
    let va = rig::GART_START + rig::GART_BYTES + 0x1000;
    let f = r.mc.translate(va, Access::Read, "test").unwrap_err();
    assert_eq!(f.kind, McFaultKind::Unmapped);
    let (addr, vmid, cid, rw) = fault_registers(&r);
    assert_eq!((addr, vmid, cid, rw), (va, 0, 6, 0));
    let status = fault_status_word(&r);
    assert_eq!(
        field(
            MMHUB_SH_MASK,
            "MMVM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR",
            status
        ),
        1
    );
}

/// fw_pri with no PTE: the bootloader cannot read the component and
/// answers the model's DMA status; the MMHUB holds fw_pri's address, and
/// the runtime can read the fault it latched.
#[test]
fn missing_fw_pri_pte_fails_the_bootloader_load_with_a_latched_fault() {
    let mut r = rig_layout(
        &navi31(),
        Layout {
            fw_pri: Mapping::Missing,
            ..Layout::default()
        },
    );
    let mut p = psp_of(&mut r);
    let kdb = r.sos.bytes(r.sos.section("kdb").unwrap());
    assert_eq!(
        p.bootloader_load(Component::Kdb, kdb),
        Err(PspError::BootloaderStatus {
            component: Component::Kdb,
            status: status::DMA
        })
    );
    assert_eq!(fault_registers(&r), (FW_PRI_VA, 0, 6, 0));
    let f = p.vm_fault().unwrap();
    assert_eq!((f.addr, f.cid, f.write), (FW_PRI_VA, 6, false));
}

/// A ring with no PTE: ring create answers the DMA status and the fault
/// names the ring's address.
#[test]
fn missing_ring_pte_fails_ring_create() {
    let mut r = rig_layout(
        &navi31(),
        Layout {
            ring: Mapping::Missing,
            ..Layout::default()
        },
    );
    let mut p = psp_of(&mut r);
    for (c, bytes) in stages(&r) {
        p.bootloader_load(c, bytes).unwrap();
    }
    assert_eq!(
        p.ring_create(),
        Err(PspError::RingStatus {
            status: status::DMA
        })
    );
    assert_eq!(fault_registers(&r), (rig::RING_VA, 0, 6, 0));
}

/// SETUP_TMR with a GART address (system memory) or with a physical
/// address that is not the TMR's: refused.
#[test]
fn tmr_must_be_vram_at_its_physical_address() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    boot_and_ring(&r, &mut p);
    p.load_toc(r.sos.bytes(r.sos.section("toc").unwrap()))
        .unwrap();
    // fw_pri's GART address is 1 MiB aligned but is not VRAM.
    assert!(matches!(
        p.setup_tmr(FW_PRI_VA, rig::NAVI31_TMR, r.tmr.phys_addr),
        Err(PspError::CommandFailed {
            cmd_id: 0x05,
            status: status::TMR,
            ..
        })
    ));
    assert!(matches!(
        p.setup_tmr(r.tmr.mc_addr, rig::NAVI31_TMR, r.tmr.phys_addr + (1 << 20)),
        Err(PspError::CommandFailed {
            cmd_id: 0x05,
            status: status::TMR,
            ..
        })
    ));
    let why: Vec<&str> = r.model.refusals().iter().map(|x| x.why).collect();
    assert_eq!(
        why,
        [
            "TMR not VRAM at its physical address",
            "TMR not VRAM at its physical address"
        ]
    );
    p.setup_tmr(r.tmr.mc_addr, rig::NAVI31_TMR, r.tmr.phys_addr)
        .unwrap();
    // The VRAM address is the runtime allocator's: FB base + offset.
    assert_eq!(r.tmr.mc_addr, rig::FB_START + r.tmr.phys_addr);
    assert_eq!(r.tmr.phys_addr % psp::TMR_ALIGN, 0);
}

/// Issue 21 finding 4: LOAD_TOC's TMR size is a device-reported number;
/// an answer of 0 is refused with a typed error where it enters, before
/// a zero-byte TMR is allocated or sent in SETUP_TMR.
#[test]
fn a_zero_tmr_size_from_load_toc_is_refused() {
    let mut r = rig(&navi31(), |e| e.tmr_size = 0);
    let mut p = psp_of(&mut r);
    boot_and_ring(&r, &mut p);
    let got = p.load_toc(r.sos.bytes(r.sos.section("toc").unwrap()));
    assert_eq!(got, Err(PspError::BadTmrSize { size: 0 }));
}

/// SETUP_TMR carries the size LOAD_TOC asked for, as both drivers send
/// it (`psp_tmr_init()` allocates `resp.tmr_size` bytes and
/// `psp_prep_tmr_cmd_buf()` sends the buffer's size; tinygrad sends
/// `tmr_size`): not the size of a larger reservation.
#[test]
fn setup_tmr_carries_the_size_load_toc_asked_for() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    boot_and_ring(&r, &mut p);
    let asked = p
        .load_toc(r.sos.bytes(r.sos.section("toc").unwrap()))
        .unwrap();
    assert_eq!(asked, 0x130_0000);
    assert!(r.tmr.capacity > asked);
    assert!(matches!(
        p.setup_tmr(r.tmr.mc_addr, r.tmr.capacity, r.tmr.phys_addr),
        Err(PspError::CommandFailed {
            cmd_id: 0x05,
            status: status::TMR,
            ..
        })
    ));
    assert_eq!(
        r.model.refusals().last().unwrap().why,
        "SETUP_TMR size is not LOAD_TOC's answer"
    );
    p.setup_tmr(r.tmr.mc_addr, asked, r.tmr.phys_addr).unwrap();
}

/// The PSP moved behind a VMID0 built elsewhere (as the `gmc` bring-up
/// step does: its own MMHUB model and tables, initialised first): the
/// GTT buffers go into that GART, the load runs, and a missing fence PTE
/// latches in that hub.
#[test]
fn psp_behind_another_vmid0_loads_and_faults_there() {
    use barebell::gmc::hub::HubConfig;
    use barebell::gmc::pagetable::{Table, TableArena};
    use barebell::ip::Generation;
    use barebell::mem::VramAllocator;
    use barebell_model::hub::HubModel;
    for layout in [
        Layout::default(),
        Layout {
            fence: Mapping::Missing,
            ..Layout::default()
        },
    ] {
        let mut r = rig(&navi31(), |_| {});
        let hub = std::sync::Arc::new(HubModel::for_hub(r.clock, r.mmhub.bases, r.hub_regs));
        let tables: &'static mut [Table] = Box::leak(vec![Table::EMPTY; 8].into_boxed_slice());
        let host = NonNull::new(tables.as_mut_ptr().cast::<u8>()).unwrap();
        let mut gart = TableArena::new(tables, host.as_ptr() as u64, Generation::Gfx11);
        let size = 24u64 << 30;
        let mut vram = VramAllocator::with_boot_region(size, rig::FB_START).unwrap();
        let cfg = HubConfig {
            pt_base: gart.root(),
            start: 0,
            end: (1 << 30) - 1,
            fb_start: rig::FB_START,
            fb_end: rig::FB_START + size - 1,
            agp_start: u64::MAX >> 16,
            agp_end: 0,
            default_page: 0,
            dummy_page: 0,
        };
        barebell::gmc::hub::gart_enable(&*hub, &r.mmhub.bases, r.hub_regs, &cfg).unwrap();
        let mem = rig::TableMemory {
            device: gart.root(),
            host,
            len: 8 * 4096,
        };
        // SAFETY: the tables are leaked.
        unsafe { rig::behind(&mut r, hub.clone(), mem, &mut gart, &mut vram, layout) }.unwrap();
        assert!(std::ptr::eq(r.hub, &*hub));
        let images = images(&r);
        let mut p = psp_of(&mut r);
        let result = psp::load_firmware(
            &mut p,
            r.plan,
            &r.sos,
            Some(r.smu),
            &images,
            Some(&mut r.tmr),
        );
        if layout.fence == Mapping::Missing {
            assert!(matches!(
                result,
                Err(PspError::FenceTimeout {
                    cmd_id: 0x20,
                    vm_fault: Some(barebell::gmc::hub::VmFault {
                        addr: FENCE_VA,
                        cid: 6,
                        ..
                    }),
                    ..
                })
            ));
            assert_eq!(fault_registers(&r), (FENCE_VA, 0, 6, 1));
        } else {
            result.unwrap();
            p.wait_rlc_autoload(r.gc_regs, &r.gc.bases).unwrap();
            assert_eq!(r.model.refusals(), vec![]);
            assert_eq!(r.mc.faults(), vec![]);
            // The TMR came from the other allocator.
            assert!(vram.free() < size - (64 << 10));
        }
    }
}

/// A SYSTEM PTE whose bus address the IOMMU does not map: the GPU-side
/// walk succeeds, so the hub latches nothing; the access is refused on
/// the host side (an IOMMU fault), the fence never comes, and the
/// runtime's timeout carries no VM fault.
#[test]
fn fence_at_a_bus_address_the_iommu_does_not_map_times_out_without_a_vm_fault() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    boot_and_ring(&r, &mut p);
    let stray = 0x2_0000_0000;
    r.gart
        .map(FENCE_VA, stray, 4096, rig::gtt_flags(true), false)
        .unwrap();
    let toc = r.sos.bytes(r.sos.section("toc").unwrap());
    assert!(matches!(
        p.load_toc(toc),
        Err(PspError::FenceTimeout {
            cmd_id: 0x20,
            vm_fault: None,
            ..
        })
    ));
    assert_eq!(fault_status_word(&r), 0);
    let f = r.mc.faults();
    assert_eq!(f.len(), 1);
    assert!(matches!(f[0].kind, McFaultKind::Iommu(d) if d.address == stray));
}

/// The slowest PSP Linux 6.12's waits still accept (each answer 1 ms
/// inside Linux's budget: the sign of life within 120 ms of LOAD_SOSDRV,
/// `mdelay(20)` and `psp_wait_for()` in `psp_v13_0_bootloader_load_sos()`;
/// sOS ready for the ring within `psp_wait_for()`'s 100 ms; the
/// ring-create answer within 120 ms of the command, `mdelay(20)` and
/// `psp_wait_for()` in `psp_v13_0_ring_create()`): the load must still
/// complete, so the runtime must wait as long as Linux does.
#[test]
fn the_slowest_psp_linux_accepts_still_loads() {
    use barebell::time::Clock;
    use barebell_model::psp::PspTiming;
    for part in [navi31(), navi48()] {
        let mut r = rig(&part, |_| {});
        let slow = PspTiming::SLOWEST_LINUX_ACCEPTS;
        r.model.set_timing(PspTiming {
            sos_boot_ns: slow.sos_boot_ns,
            sos_ring_ready_ns: slow.sos_ring_ready_ns,
            ring_cmd_ns: slow.ring_cmd_ns,
            ..PspTiming::MODEL
        });
        let images = images(&r);
        let mut p = psp_of(&mut r);
        let started = r.clock.now_ns();
        psp::load_firmware(
            &mut p,
            r.plan,
            &r.sos,
            Some(r.smu),
            &images,
            Some(&mut r.tmr),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", part.sos));
        p.wait_rlc_autoload(r.gc_regs, &r.gc.bases).unwrap();
        assert_eq!(r.model.refusals(), vec![]);
        // It took the slow PSP's time: sOS, its ring readiness, the ring.
        let took = r.clock.now_ns() - started;
        assert!(took >= 119_000_000 + 99_000_000 + 119_000_000, "{took}");
    }
}

/// A second driver on a PSP whose sOS runs and whose ring is live (the
/// first left it up): the bootloader stages are skipped (the sign of
/// life says sOS runs, `psp_v13_0_is_sos_alive()`), the live ring is
/// destroyed (tinygrad's `_ring_create` sends DESTROY_RINGS when
/// C2PMSG_71 is non-zero; Linux `psp_v13_0_ring_stop()`) before a new
/// one is created, and commands then run on the new ring.
#[test]
fn a_second_driver_destroys_the_live_ring_before_creating_its_own() {
    use barebell::bus::RegisterBus;
    let mut r = rig(&navi31(), |_| {});
    let images = images(&r);
    let mut p = psp_of(&mut r);
    psp::load_firmware(
        &mut p,
        r.plan,
        &r.sos,
        Some(r.smu),
        &images,
        Some(&mut r.tmr),
    )
    .unwrap();
    let c71 = r.regs.c2pmsg_71.byte_offset(&r.mp0.bases).unwrap();
    assert_ne!(r.model.read32(c71), 0, "the first driver's ring is live");
    let mut second = Psp::new(r.model, r.host, r.regs, &r.mp0.bases, p.into_buffers())
        .unwrap()
        .with_fault_hub(r.fault_hub());
    for (c, bytes) in stages(&r) {
        assert_eq!(
            second.bootloader_load(c, bytes),
            Ok(Loaded::SosAlreadyAlive)
        );
    }
    second.ring_create().unwrap();
    let asked = second
        .load_toc(r.sos.bytes(r.sos.section("toc").unwrap()))
        .unwrap();
    assert_eq!(asked, rig::NAVI31_TMR);
    assert_eq!(r.model.refusals(), vec![]);
}

/// A live sOS refuses a second bootloader load (model rule: the
/// bootloader is gone once sOS runs); the runtime never sends one: it
/// reads the sign of life first and reports `SosAlreadyAlive`.
#[test]
fn a_live_sos_refuses_a_bootloader_command_and_the_runtime_sends_none() {
    use barebell::bus::RegisterBus;
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    boot_and_ring(&r, &mut p);
    let kdb = r.sos.bytes(r.sos.section("kdb").unwrap());
    assert_eq!(
        p.bootloader_load(Component::Kdb, kdb),
        Ok(Loaded::SosAlreadyAlive)
    );
    assert_eq!(r.model.refusals(), vec![]);
    let c35 = r.regs.c2pmsg_35.byte_offset(&r.mp0.bases).unwrap();
    r.model.write32(c35, bl::LOAD_KEY_DATABASE);
    assert_eq!(
        r.model.refusals().last().unwrap().why,
        "bootloader command while sOS runs"
    );
}

/// sOS signs life in C2PMSG_81 before it is ready for ring commands
/// (C2PMSG_64 bit 31, which both drivers wait for before the create:
/// `psp_v13_0_ring_create()`, tinygrad `_ring_create`). A create written
/// between the two is never answered.
#[test]
fn a_ring_command_before_sos_is_ready_is_never_answered() {
    use barebell::bus::RegisterBus;
    use barebell_model::psp::iface::ctrl;
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    for (c, bytes) in stages(&r) {
        p.bootloader_load(c, bytes).unwrap();
    }
    let at = |reg: barebell::regs::Reg| reg.byte_offset(&r.mp0.bases).unwrap();
    assert_ne!(r.model.read32(at(r.regs.c2pmsg_81)), 0, "sOS signed life");
    assert_eq!(r.model.read32(at(r.regs.c2pmsg_64)) & ctrl::RESPONSE, 0);
    r.model.write32(at(r.regs.c2pmsg_71), 0x1000);
    r.model.write32(at(r.regs.c2pmsg_64), ctrl::INIT_GPCOM_RING);
    assert_eq!(
        r.model.refusals().last().unwrap().why,
        "ring command before sOS is ready"
    );
    // Long after sOS became ready, still no answer.
    r.clock.advance(200_000_000);
    assert_eq!(r.model.read32(at(r.regs.c2pmsg_64)), ctrl::INIT_GPCOM_RING);
}

/// tinygrad's AM loads no IPKEYMGR stage on MP0 14.0.3 although the
/// bundle has one (its stage list has none), and sOS came up on a
/// gfx1201 (`docs/am-boot.md` §1.4): the model takes AM's stages.
#[test]
fn am_bootloader_stages_without_ipkeymgr_bring_sos_up_on_navi48() {
    let mut r = rig(&navi48(), |_| {});
    let mut p = psp_of(&mut r);
    let am: Vec<_> = stages(&r)
        .into_iter()
        .filter(|(c, _)| *c != Component::IpKeyMgrDrv)
        .collect();
    assert_eq!(am.len() + 1, stages(&r).len());
    for (c, bytes) in am {
        assert_eq!(p.bootloader_load(c, bytes), Ok(Loaded::Loaded));
    }
    assert!(r.model.sos_running());
    assert_eq!(r.model.refusals(), vec![]);
}

/// A bootloader that takes as long as Linux waits for it
/// (`psp_v13_0_wait_for_bootloader()`: 10 × `psp_wait_for()`, 1 s, less
/// 1 ms): the runtime's wait (`BOOTLOADER_TIMEOUT_NS`) still sees it.
#[test]
fn a_bootloader_as_slow_as_linux_waits_for_still_loads() {
    use barebell_model::psp::PspTiming;
    let mut r = rig(&navi31(), |_| {});
    r.model.set_timing(PspTiming {
        bootloader_ns: PspTiming::SLOWEST_LINUX_ACCEPTS.bootloader_ns,
        ..PspTiming::MODEL
    });
    let mut p = psp_of(&mut r);
    let kdb = r.sos.bytes(r.sos.section("kdb").unwrap());
    assert_eq!(p.bootloader_load(Component::Kdb, kdb), Ok(Loaded::Loaded));
    assert_eq!(r.model.refusals(), vec![]);
}
