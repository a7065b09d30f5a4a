//! The one bring-up on the MI210 model (Aldebaran, GC 9.4.2): the same
//! `VirtualGpu` builder as MI300's, with the block versions Aldebaran's IPs
//! select. Expected values are written by hand from Linux 6.12 (see each
//! test).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell_bringup::{FirmwareDir, Options, Quiet, Step};
use barebell_model::VirtualGpu;
use barebell_model::parts;
use barebell_model::vgpu::HostMemory;

fn device() -> VirtualGpu {
    let mem = HostMemory::allocate(64 << 20).unwrap();
    VirtualGpu::new(
        parts::mi210(),
        &barebell_model::FilesDir::system(),
        mem,
        barebell_model::Seed(7),
    )
    .unwrap()
}

fn until(step: Step) -> Options {
    Options {
        until: step,
        ..Options::default()
    }
}

/// Discovery to the PSP: the fixed IP list, the SMU 13.0.2 mode-1 reset,
/// NBIO 7.4.4, GFXHUB v1.0 and MMHUB 1.7, the IH on OSSSYS 4.4.0 and the
/// PSP 13.0.2 load with the auxiliary sOS pair and an 8 MiB TMR
/// (`PSP_TMR_SIZE()` on Aldebaran).
#[test]
fn mi210_reaches_the_psp() {
    let m = device();
    let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &until(Step::Psp), &Quiet)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(gpu.reached, Step::Psp);
    assert_eq!(gpu.ips.generation, barebell::ip::Generation::Gfx90a);
    let (_, size) = m.psp().tmr().expect("SETUP_TMR reached the PSP model");
    assert_eq!(size, 0x80_0000);
    let refusals = m.psp().refusals();
    assert!(refusals.is_empty(), "{refusals:?}");
}

/// To the rlc step (the default without a mapping): the MEC runs.
#[test]
fn mi210_reaches_a_running_mec() {
    let m = device();
    let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &Options::default(), &Quiet)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(gpu.reached, Step::Rlc);
    let g = m.gc_9_4_3().expect("the gfx9 block models");
    assert_eq!(g.gfxhubs().len(), 1);
    assert_eq!(g.mmhubs().len(), 1);
    let rlc = g.rlc_mec();
    rlc.mec_run(0).unwrap_or_else(|e| panic!("{e}"));
    // golden_settings_gc_9_4_2_alde: GB_ADDR_CONFIG 0x2a114042 under
    // mask 0xffff77ff over the model's reset value (0).
    assert_eq!(rlc.gb_addr_config(0), Some(0x2a11_4042));
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");
    m.quiescent().unwrap_or_else(|e| panic!("{e}"));
}

/// MES is refused before the device is touched: GC 9.4.2 has none (KFD
/// runs the HWS on the MEC), and the refusal says what to use instead.
#[test]
fn mes_is_refused_in_the_users_words() {
    let m = device();
    let opts = Options {
        mapping: Some(barebell_bringup::Mapping::Mes),
        ..Options::default()
    };
    let Err(e) = barebell_bringup::run(&m, &FirmwareDir::system(), &opts, &Quiet) else {
        panic!("MES on GC 9.4.2 must be refused");
    };
    let text = e.to_string();
    assert!(text.contains("GC 9.4.2"), "{text}");
    assert!(text.contains("--mapping hws"), "{text}");
    // Nothing past discovery ran.
    assert!(m.psp().tmr().is_none());
}

/// The steps' own lines, in order.
struct Lines(std::sync::Mutex<Vec<String>>);

impl barebell_bringup::Sink for Lines {
    fn step(&self, step: Step, detail: std::fmt::Arguments<'_>) {
        self.0.lock().unwrap().push(format!("{step}: {detail}"));
    }
}

/// What each step reports names Aldebaran's blocks: the fixed IP list,
/// NBIO 7.4.4 with PCIE_INDEX2/DATA2, GFXHUB v1.0 and MMHUB 1.7, the
/// auxiliary sOS pair and 8 MiB TMR, the MP1 13.0.2 features message.
#[test]
fn the_steps_name_aldebarans_blocks() {
    let m = device();
    let lines = Lines(std::sync::Mutex::new(Vec::new()));
    let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &Options::default(), &lines)
        .unwrap_or_else(|e| panic!("{e}"));
    drop(gpu);
    let all = lines.0.lock().unwrap().join("\n");
    for want in [
        "PCI device 0x740f is an Aldebaran",
        "NBIO 7.4.4 init",
        "PCIE_INDEX2/DATA2",
        "GFXHUB v1.0 and MMHUB 1.7",
        "MP0 13.0.2: 3 bootloader components",
        "TMR 0x800000 bytes",
        "MP1 13.0.2: EnableAllSmuFeatures answered",
        "GC 9.4.2 (die 0)",
    ] {
        assert!(all.contains(want), "{want:?} missing from:\n{all}");
    }
}

/// Registers named in GC 9.4.2's KIQ packets are absolute: Linux flushes
/// the MMHUB 1.7 TLB through the KIQ with `WRITE_DATA`/`WAIT_REG_MEM` on
/// 0x1A000 + 0xbe3 + 17 (`gmc_v9_0_flush_gpu_tlb()`, engine 17), and
/// `gfx_v9_0.c` does not normalize offsets as `gfx_v9_4_3.c` does. (The
/// model once read 0x1abf4 as an XCC-local offset and sent it into the
/// GC: Linux's first KIQ flush on this part timed out.)
#[test]
fn kiq_packets_name_absolute_registers() {
    let m = device();
    let mec = m.gc_9_4_3().unwrap().mec();
    let req = 0x1_A000 + 0x0be3 + 17;
    assert_eq!(mec.xcc_register(0, req), req);
    assert_eq!(mec.xcc_register(0, 0x2000 + 0x008d), 0x2000 + 0x008d);
}

/// MI210 has 104 active CUs (AMD's product figure; the Linux amdgpu peer
/// booting this model reports the same). `gfx_v9_0_get_cu_info()` counts
/// them per SE/SH through `GRBM_GFX_INDEX`, over the arrays the VBIOS's
/// `gfx_info` gives (8 SEs × 1 SH × 16 CU slots), then sets the index
/// back to broadcast. Linux refuses more than 16 arrays; GC 9.4.3 and
/// gfx11 keep these registers elsewhere.
#[test]
fn mi210_counts_its_104_active_cus_as_linux_does() {
    use barebell::regs::gc_9_4_2 as r;
    use barebell_bringup::gfx::gfx_v9_0::{GRBM_GFX_INDEX_BROADCAST, active_cus};
    let m = device();
    let gpu = barebell_bringup::run(&m, &FirmwareDir::system(), &until(Step::Rlc), &Quiet)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(active_cus(&gpu, 8, 1, 16).unwrap(), 104);
    let gc = gpu.bus.block(gpu.ips.gc.bases);
    assert_eq!(
        gc.read(r::GRBM_GFX_INDEX).unwrap(),
        GRBM_GFX_INDEX_BROADCAST
    );
    // Fewer arrays asked, fewer counted. The model fuses the CUs off
    // evenly (a model convention, `shader_arrays.rs`): SE 0 holds 13.
    assert_eq!(active_cus(&gpu, 1, 1, 16).unwrap(), 13);
    // Linux's limits: 17 arrays, or 17 CU slots in one, are refused.
    assert!(active_cus(&gpu, 17, 1, 16).is_err());
    assert!(active_cus(&gpu, 9, 2, 16).is_err());
    assert!(active_cus(&gpu, 8, 1, 17).is_err());
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");

    // Not on other GCs.
    let n = barebell_tests::virtual_gpu(parts::navi31(), 3);
    let gpu =
        barebell_bringup::run(&n, &FirmwareDir::system(), &until(Step::Discovery), &Quiet).unwrap();
    assert!(active_cus(&gpu, 1, 1, 1).is_err());
    let report = gpu.shutdown();
    assert!(report.complete(), "{report}");
}
