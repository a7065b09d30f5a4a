//! MI300's SMU (MP1 13.0.6) and the start step's GC 9.4.3 registers: the
//! runtime's mailbox and mode-1 reset against the model's SMU at the MP1
//! bases of the model's MI300X discovery table.
//!
//! By hand from the sources: the mailbox is `C2PMSG_66` (message, 0x282),
//! `C2PMSG_82` (argument, 0x292), `C2PMSG_90` (response, 0x29A), segment 0
//! (`smu_v13_0_set_smu_mailbox_registers()`, `mp_13_0_6_offset.h`); MP1's
//! segment 0 is 0x16000 in the model's table, so bytes 0x58A08, 0x58A48,
//! 0x58A68. `smu_v13_0_6_mode1_reset()` sends `PPSMC_MSG_GfxDriverReset`
//! (0x3) with `SMU_RESET_MODE_1` (1) and sleeps 500 ms; 13.0.0's
//! `PPSMC_MSG_Mode1Reset` (0x2F) is another message on 13.0.6. GC 9.4.3's
//! `SCRATCH_REG6`/`7` are 0x2046/0x2047, `BASE_IDX` 1 (`gc_9_4_3_offset.h`).

use barebell::discovery::{Discovery, hw_id};
use barebell::ip::Generation;
use barebell::regs::IpBases;
use barebell::smu::{self, Mp1, SmuError, smu_v13_0_0, smu_v13_0_6};
use barebell::time::Clock;
use barebell_model::SimClock;
use barebell_model::discovery::{self as sim, MI300X};
use barebell_model::smu::{DpmTables, Mp1 as ModelMp1, SmuEvent, SmuHooks, SmuModel};
use barebell_model::soc::RefusalLog;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const PMFW_VERSION: u32 = 0x0055_1E00;

fn mp1() -> IpBases {
    let (bin, _) = sim::build(&MI300X);
    let d = Discovery::parse(&bin).unwrap();
    let ip = d.ip(hw_id::MP1, 0).unwrap();
    assert_eq!(ip.version.triple(), (13, 0, 6));
    ip.bases
}

struct Rig {
    smu: SmuModel,
    log: Arc<RefusalLog>,
    resets: Arc<AtomicUsize>,
    bm: Arc<AtomicBool>,
}

fn rig(clock: &SimClock, bases: &IpBases) -> Rig {
    let log = Arc::new(RefusalLog::new());
    let resets = Arc::new(AtomicUsize::new(0));
    let bm = Arc::new(AtomicBool::new(false));
    let (r, b) = (resets.clone(), bm.clone());
    let hooks = SmuHooks {
        // PMFW on MI300 is started by the boot firmware (no SMU image in
        // psp_13_0_6's load list): running from power-on.
        firmware_loaded: Box::new(|| true),
        mode1_reset: Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
        }),
        bus_master: Box::new(move || b.load(Ordering::SeqCst)),
    };
    let mp = ModelMp1::from_version((13, 0, 6)).unwrap();
    assert_eq!(mp, ModelMp1::V13_0_6);
    let smu = SmuModel::new(
        clock,
        mp,
        bases,
        PMFW_VERSION,
        DpmTables::navi31(),
        hooks,
        log.clone(),
    )
    .unwrap();
    Rig {
        smu,
        log,
        resets,
        bm,
    }
}

#[test]
fn the_mailbox_sits_where_smu_v13_0_sets_it() {
    let b = mp1();
    let m = Mp1::for_version((13, 0, 6)).unwrap();
    assert_eq!(m.name, "MP1 13.0.6");
    assert_eq!(m.regs.msg.byte_offset(&b), Some(0x58A08));
    assert_eq!(m.regs.arg.byte_offset(&b), Some(0x58A48));
    assert_eq!(m.regs.resp.byte_offset(&b), Some(0x58A68));
}

#[test]
fn pmfw_answers_and_the_13_0_0_reset_message_is_refused() {
    let clock = SimClock::new();
    let host = clock.host_view(10_000);
    let b = mp1();
    let r = rig(&clock, &b);
    let m = Mp1::for_version((13, 0, 6)).unwrap();
    assert_eq!(smu::is_alive(&r.smu, &host, m, &b), Ok(Some(PMFW_VERSION)));
    // What the 13.0.0 row would send: 0x2F is not a reset on 13.0.6.
    let old = smu::mode1_reset(&r.smu, &host, &smu_v13_0_0::MP1, &b);
    assert_eq!(
        old,
        Err(SmuError::Response {
            msg: 0x2F,
            param: 0,
            resp: 0xFF
        })
    );
    assert_eq!(r.resets.load(Ordering::SeqCst), 0);
    assert_eq!(r.log.len(), 1, "{:?}", r.log.since(0));
    // Mode 2 through the same message is not modelled: refused too.
    let two = smu::send(&r.smu, &host, m, &b, 0x3, 2, smu::RESPONSE_TIMEOUT_NS);
    assert!(matches!(two, Err(SmuError::Response { resp: 0xFF, .. })));
    assert_eq!(r.resets.load(Ordering::SeqCst), 0);
    // The debug mailbox does not exist for 13.0.6 in Linux.
    smu::send_debug(&r.smu, m, &b, 2, 0).unwrap();
    assert_eq!(r.resets.load(Ordering::SeqCst), 0);
    assert_eq!(r.log.len(), 3);
}

#[test]
fn mode1_reset_is_gfx_driver_reset_mode_1_then_500_ms() {
    let clock = SimClock::new();
    let host = clock.host_view(10_000);
    let b = mp1();
    let r = rig(&clock, &b);
    let m = Mp1::for_version((13, 0, 6)).unwrap();
    let before = host.now_ns();
    smu::mode1_reset(&r.smu, &host, m, &b).unwrap();
    assert!(host.now_ns() - before >= 500_000_000);
    assert_eq!(r.resets.load(Ordering::SeqCst), 1);
    assert!(r.log.is_empty(), "{:?}", r.log.since(0));
    assert!(r.smu.events().contains(&SmuEvent::Answered {
        msg: 0x3,
        arg: 1,
        resp: 1,
        out: None,
        debug: false
    }));
    assert!(r.smu.events().contains(&SmuEvent::Mode1Reset));
    // With bus mastering on, the model logs the rule and still resets.
    r.bm.store(true, Ordering::SeqCst);
    smu::mode1_reset(&r.smu, &host, m, &b).unwrap();
    assert_eq!(r.resets.load(Ordering::SeqCst), 2);
    assert_eq!(r.log.len(), 1);
    assert_eq!(smu_v13_0_6::MP1.mode1_wait_ns, 500_000_000);
}

/// The start step reads its signature on GC 9.4.3 (XCC 0's instance).
#[test]
fn the_start_step_has_gc_9_4_3_scratch_registers() {
    let (r6, r7) = barebell_bringup::start::scratch_regs(Generation::Gfx94).unwrap();
    assert_eq!(
        (r6.name, r6.offset, r6.base_idx),
        ("SCRATCH_REG6", 0x2046, 1)
    );
    assert_eq!(
        (r7.name, r7.offset, r7.base_idx),
        ("SCRATCH_REG7", 0x2047, 1)
    );
    // The model's XCC 0 GC segment 1 is 0xA000: byte (0xA000 + 0x2047) * 4.
    let (bin, _) = sim::build(&MI300X);
    let d = Discovery::parse(&bin).unwrap();
    let gc0 = d.ip(hw_id::GC, 0).unwrap().bases;
    assert_eq!(r7.byte_offset(&gc0), Some(0x3011C));
}

/// One main-mailbox message sent by hand (`__smu_cmn_send_msg()`: clear
/// C2PMSG_90, argument to C2PMSG_82, message to C2PMSG_66), then the
/// response and C2PMSG_82 read back.
fn send(r: &Rig, msg: u32, arg: u32) -> (u32, u32) {
    use barebell::bus::RegisterBus;
    r.smu.write32(0x58A68, 0);
    r.smu.write32(0x58A48, arg);
    r.smu.write32(0x58A08, msg);
    (r.smu.read32(0x58A68), r.smu.read32(0x58A48))
}

/// MP1 13.0.6's driver-table and DPM messages, with its own ids
/// (`smu_v13_0_6_ppsmc.h`: SetDriverDramAddrHigh 0xD, Low 0xE,
/// EnableAllSmuFeatures 0x5, SetSoftMinByFreq 0x13, GetDpmFreqByIndex
/// 0x17) and clock ids (`smu_v13_0_6_pmfw.h`: PPCLK_UCLK 3), as
/// `smu_v13_0_set_driver_table_location()`,
/// `smu_v13_0_6_get_dpm_level_count()` and tinygrad's `AM_SMU` send them:
/// level 0xFF answers the highest index (Linux adds one), DPM before
/// EnableAllSmuFeatures is rejected (0xFD, `PPSMC_Result_CmdRejectedPrereq`).
#[test]
fn the_13_0_6_dpm_messages_answer_with_13_0_6_ids() {
    let clock = SimClock::new();
    let b = mp1();
    let log = Arc::new(RefusalLog::new());
    let hooks = SmuHooks {
        firmware_loaded: Box::new(|| true),
        mode1_reset: Box::new(|| {}),
        bus_master: Box::new(|| false),
    };
    let smu = SmuModel::new(
        &clock,
        ModelMp1::V13_0_6,
        &b,
        PMFW_VERSION,
        DpmTables::mi300(),
        hooks,
        log.clone(),
    )
    .unwrap();
    let r = Rig {
        smu,
        log,
        resets: Arc::new(AtomicUsize::new(0)),
        bm: Arc::new(AtomicBool::new(false)),
    };
    assert_eq!(send(&r, 0xD, 0x80).0, 1);
    assert_eq!(send(&r, 0xE, 0x1000).0, 1);
    assert_eq!(send(&r, 0x17, 3 << 16 | 0xFF).0, 0xFD);
    assert_eq!(send(&r, 0x5, 0).0, 1);
    // DpmTables::mi300: four UCLK levels, the top 1300 MHz.
    assert_eq!(send(&r, 0x17, 3 << 16 | 0xFF), (1, 3));
    assert_eq!(send(&r, 0x17, 3 << 16 | 3), (1, 1300));
    assert_eq!(send(&r, 0x13, 3 << 16 | 1300).0, 1);
    // No such clock (PPCLK_COUNT is 6; 7 has no table).
    assert_eq!(send(&r, 0x13, 7 << 16).0, 0xFF);
    assert!(r.log.is_empty(), "{:?}", r.log.all());
}
