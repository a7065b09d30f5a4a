//! PSP firmware loading against the PSP model, with the real blobs from
//! `firmware-amd-graphics` (`/lib/firmware/amdgpu`).
//!
//! The register bases come from a discovery table the model synthesises
//! and the runtime parses, so the path is discovery → register offsets →
//! bootloader → ring → commands → RLC autoload. What the model expects
//! (component order, which section goes with which `GFX_FW_TYPE`, the
//! load order) is written out by hand in `barebell_sim::psp::rig` from
//! `psp_hw_start()`, `AMDGPU_UCODE_ID` and `psp_get_fw_type()`,
//! independently of the runtime's tables, so an ordering or mapping slip
//! in either shows.
//!
//! The refusal tests break one thing each and check both sides: the
//! model logged the refusal it should, and the runtime returned the typed
//! error that names it.

use barebell::bus::WaitError;
use barebell::psp::{self, Component, DmaBuf, Image, Loaded, Psp, PspBuffers, PspError};
use barebell_sim::SimClock;
use barebell_sim::psp::rig::{BOOT_ORDER, MODEL_TMR, PartFirmware, Rig, navi31, navi48};
use barebell_sim::psp::{PspExpect, PspModel, PspPlacement, status};
use std::path::Path;
use std::ptr::NonNull;

/// Zeroed, leaked memory at `align`; in the model the host address is the
/// MC address.
fn region(len: usize, align: usize) -> (NonNull<u8>, u64) {
    let layout = std::alloc::Layout::from_size_align(len, align).unwrap();
    // SAFETY: non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    let p = NonNull::new(p).unwrap();
    (p, p.as_ptr() as u64)
}

fn rig(part: &PartFirmware, tweak: impl FnOnce(&mut PspExpect)) -> Rig {
    barebell_sim::psp::rig::rig(Path::new("/lib/firmware/amdgpu"), part, tweak)
        .unwrap_or_else(|e| panic!("{e} (firmware-amd-graphics)"))
}

fn psp_of(r: &mut Rig) -> Psp<'static, PspModel<'static>, SimClock> {
    Psp::new(
        r.model,
        r.clock,
        r.regs,
        &r.mp0.bases,
        r.bufs.take().unwrap(),
    )
    .unwrap()
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
    let mut r = rig(&part, |_| {});
    let images = images(&r);
    // The runtime's order and mapping equal the hand-written Linux order.
    let want: Vec<u32> = part.gfx.iter().map(|g| g.0).collect();
    let got: Vec<u32> = images.iter().map(|i| i.fw_type).collect();
    assert_eq!(got, want);
    let mut p = psp_of(&mut r);
    let report =
        psp::load_firmware(&mut p, r.plan, &r.sos, Some(r.smu), &images, Some(r.tmr)).unwrap();
    p.wait_rlc_autoload(r.gc_regs, &r.gc.bases).unwrap();
    assert_eq!(r.model.refusals(), vec![]);
    let n_components = BOOT_ORDER
        .iter()
        .filter(|(n, _)| r.sos.section(n).is_some())
        .count();
    assert_eq!(report.components, n_components);
    assert_eq!(report.tmr_size, MODEL_TMR);
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
    let mut model = PspModel::new(
        &clock,
        PspPlacement {
            regs: r.regs,
            mp0_bases: r.mp0.bases,
            gc: r.gc_regs,
            gc_bases: r.gc.bases,
        },
        PspExpect {
            components: vec![(
                Component::Kdb,
                r.sos.bytes(r.sos.section("kdb").unwrap()).to_vec(),
            )],
            ..PspExpect::default()
        },
    );
    // SAFETY: leaked region.
    unsafe { model.map(mc, 2 << 20) };
    let kdb = r.sos.bytes(r.sos.section("kdb").unwrap());
    // SAFETY: 4 KiB + kdb.len() is inside the 2 MiB region.
    unsafe { std::ptr::copy_nonoverlapping(kdb.as_ptr(), p.as_ptr().add(4096), kdb.len()) };
    use barebell::bus::RegisterBus;
    let c36 = r.regs.c2pmsg_36.byte_offset(&r.mp0.bases).unwrap();
    let c35 = r.regs.c2pmsg_35.byte_offset(&r.mp0.bases).unwrap();
    model.write32(c36, ((mc + 4096) >> 20) as u32);
    model.write32(c35, Component::Kdb.command());
    assert_eq!(model.refusals()[0].status, status::PAYLOAD);
}

#[test]
fn model_refuses_ip_fw_before_tmr_and_out_of_order() {
    let mut r = rig(&navi31(), |_| {});
    let images = images(&r);
    let mut p = psp_of(&mut r);
    for (name, c) in BOOT_ORDER {
        if let Some(s) = r.sos.section(name) {
            assert_eq!(p.bootloader_load(c, r.sos.bytes(s)), Ok(Loaded::Loaded));
        }
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
    p.setup_tmr(r.tmr.mc_addr, r.tmr.capacity, r.tmr.phys_addr)
        .unwrap();
    // The second image before the first.
    let second = images[1];
    assert!(matches!(
        p.load_ip_fw(second.fw_type, second.bytes),
        Err(PspError::CommandFailed {
            status: status::ORDER,
            ..
        })
    ));
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
    // AUTOLOAD_RLC before every image is in.
    assert!(matches!(
        p.autoload_rlc(),
        Err(PspError::CommandFailed {
            cmd_id: 0x21,
            status: status::ORDER,
            ..
        })
    ));
    p.load_ip_fw(first.fw_type, first.bytes).unwrap();
    let why: Vec<&str> = r.model.refusals().iter().map(|x| x.why).collect();
    assert_eq!(
        why,
        [
            "LOAD_IP_FW before SETUP_TMR",
            "GFX image out of order",
            "GFX image differs from the blob section",
            "GFX image differs from the blob section",
            "AUTOLOAD_RLC before every GFX image",
        ]
    );
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
    for (name, c) in BOOT_ORDER {
        if let Some(s) = r.sos.section(name) {
            p.bootloader_load(c, r.sos.bytes(s)).unwrap();
        }
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
    for (name, c) in BOOT_ORDER {
        if let Some(s) = r.sos.section(name) {
            p.bootloader_load(c, r.sos.bytes(s)).unwrap();
        }
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
        p.setup_tmr(r.tmr.mc_addr, r.tmr.capacity, 0),
        Err(PspError::CommandFailed {
            cmd_id: 0x05,
            status: status::ORDER,
            ..
        })
    ));
    // The runtime refuses a misaligned TMR itself.
    assert_eq!(
        p.setup_tmr(r.tmr.mc_addr + 4096, r.tmr.capacity, 0),
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
    for (name, c) in BOOT_ORDER {
        if let Some(s) = r.sos.section(name) {
            p.bootloader_load(c, r.sos.bytes(s)).unwrap();
        }
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

/// A frame whose fence the PSP cannot reach: the model refuses the frame
/// and writes no fence, and the runtime's bounded fence wait ends with a
/// typed timeout naming the command.
#[test]
fn unreachable_fence_times_out_with_the_command_named() {
    let mut r = rig(&navi31(), |_| {});
    let mut p = psp_of(&mut r);
    for (name, c) in BOOT_ORDER {
        if let Some(s) = r.sos.section(name) {
            p.bootloader_load(c, r.sos.bytes(s)).unwrap();
        }
    }
    let mut bufs = p.into_buffers();
    // A fence the model was never given access to.
    let (fp, fmc) = region(4096, 4096);
    // SAFETY: leaked region, 4 KiB aligned, used only through this DmaBuf.
    bufs.fence = unsafe { DmaBuf::new(fp, 4096, fmc) };
    let mut p = Psp::new(r.model, r.clock, r.regs, &r.mp0.bases, bufs).unwrap();
    p.ring_create().unwrap();
    let toc = r.sos.bytes(r.sos.section("toc").unwrap());
    match p.load_toc(toc) {
        Err(PspError::FenceTimeout {
            cmd_id,
            want,
            last,
            waited_ns,
        }) => {
            assert_eq!((cmd_id, want, last), (0x20, 1, 0));
            assert!(waited_ns >= psp::FENCE_TIMEOUT_NS);
        }
        other => panic!("expected a fence timeout, got {other:?}"),
    }
    assert_eq!(
        r.model.refusals().last().unwrap().why,
        "fence not mapped or misaligned"
    );
}
