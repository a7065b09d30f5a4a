//! PMFW's status as Linux reads it before SMU hw_init goes on:
//! `smu_v13_0_check_fw_status()` / `smu_v14_0_check_fw_status()` read
//! `MP1_FIRMWARE_FLAGS` at SMN `MP1_Public | smnMP1_FIRMWARE_FLAGS`
//! through the NBIO's RSMU index/data pair and require
//! `INTERRUPTS_ENABLED`. The Linux guest (`cargo xtask linux-peer`)
//! stopped with "SMC is not ready" while the model had no such register.

use barebell::discovery::{Discovery, hw_id};
use barebell::nbio::{NBIF_6_3_1, NBIO_4_3_0, NBIO_7_9_0, NbioRegs};
use barebell::platform::Platform;
use barebell_bringup::{Mapping, Options, Quiet, Step};
use barebell_model::smu::{FIRMWARE_FLAGS, FIRMWARE_FLAGS_13_0_6, INTERRUPTS_ENABLED};
use barebell_model::{VirtualGpu, parts};
use barebell_tests::{FirmwareDir, virtual_gpu};

/// `RREG32_PCIE(addr)`: the address into RSMU_INDEX, the value from
/// RSMU_DATA (`amdgpu_device_indirect_rreg()`).
fn rreg_pcie(gpu: &VirtualGpu, nbio: &NbioRegs, addr: usize) -> u32 {
    let table = gpu.part().firmware.desc;
    let (bytes, _) = barebell_model::discovery::build(&table);
    let bases = Discovery::parse(&bytes)
        .unwrap()
        .ip(hw_id::NBIF, 0)
        .unwrap()
        .bases;
    let index = nbio.rsmu_index.byte_offset(&bases).unwrap();
    let data = nbio.rsmu_data.byte_offset(&bases).unwrap();
    gpu.regs().write32(index, addr as u32);
    gpu.regs().read32(data)
}

/// PMFW's answer to message `msg` (argument 0) through the part's MP1
/// mailbox, as `smu_cmn_send_smc_msg_with_param()` sends it.
fn pmfw_message(gpu: &VirtualGpu, msg: u32) -> u32 {
    use barebell::smu::{self, Mp1};
    let table = gpu.part().firmware.desc;
    let (bytes, _) = barebell_model::discovery::build(&table);
    let d = Discovery::parse(&bytes).unwrap();
    let ip = d.ip(hw_id::MP1, 0).unwrap();
    let mp1 = Mp1::for_version(ip.version.triple()).unwrap();
    smu::send(
        gpu.regs(),
        gpu.clock(),
        mp1,
        &ip.bases,
        msg,
        0,
        1_000_000_000,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", gpu.part().name))
}

/// The bring-up to a MES queue (the PSP loads PMFW on the way).
fn bring_up(gpu: &VirtualGpu) -> barebell_bringup::Gpu<'_> {
    let fw = FirmwareDir::system();
    let opts = Options {
        until: Step::Queue,
        mapping: Some(Mapping::Mes),
        ..Default::default()
    };
    barebell_bringup::run(gpu, &fw, &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{}: {e}", gpu.part().name))
}

#[test]
fn pmfw_reports_its_interrupts_enabled_once_the_psp_loaded_it() {
    for (part, nbio) in [
        (parts::navi31(), &NBIO_4_3_0),
        (parts::navi48(), &NBIF_6_3_1),
    ] {
        let name = part.name;
        let gpu = virtual_gpu(part, 3);
        assert_eq!(
            rreg_pcie(&gpu, nbio, FIRMWARE_FLAGS) & INTERRUPTS_ENABLED,
            0,
            "{name}: no PMFW before the PSP loads it"
        );
        let up = bring_up(&gpu);
        assert_eq!(
            rreg_pcie(&gpu, nbio, FIRMWARE_FLAGS) & INTERRUPTS_ENABLED,
            INTERRUPTS_ENABLED,
            "{name}: PMFW runs after the bring-up's PSP step"
        );
        drop(up.shutdown());
    }
}

/// MI300X: `smu_v13_0_6_check_fw_status()` reads the flag at SMN
/// 0x3B10028 (`smu_v13_0_6_ppt.c` redefines `smnMP1_FIRMWARE_FLAGS`),
/// through NBIO 7.9's `BIF_BX0_PCIE_INDEX2`/`DATA2`. PMFW runs from power-on
/// there (the boot firmware starts it), so the flag is up before any
/// bring-up. The Linux guest stopped at "SMC is not ready" while the model
/// kept the flag at the other MP1s' 0x3B10024, which reads 0 here.
#[test]
fn mi300x_pmfw_reports_its_interrupts_enabled_at_its_own_address() {
    let gpu = virtual_gpu(parts::mi300x(), 5);
    assert_eq!(
        rreg_pcie(&gpu, &NBIO_7_9_0, FIRMWARE_FLAGS_13_0_6) & INTERRUPTS_ENABLED,
        INTERRUPTS_ENABLED
    );
    assert_eq!(rreg_pcie(&gpu, &NBIO_7_9_0, FIRMWARE_FLAGS), 0);
}

/// MI300X's PMFW answers `PPSMC_MSG_GetDriverIfVersion` (0x4 in
/// `smu_v13_0_6_ppsmc.h`) with `SMU13_0_6_DRIVER_IF_VERSION`; the Linux
/// guest's SMU hw_init stopped on the model's refusal of it.
#[test]
fn mi300x_pmfw_answers_its_driver_interface_version() {
    let gpu = virtual_gpu(parts::mi300x(), 6);
    let got = pmfw_message(&gpu, 0x4);
    assert_eq!(got, 0x0804_2024);
}

/// `smu_cmn_get_smc_version()` asks PMFW for its driver-interface
/// version first (`GetDriverIfVersion`, 0x3); the Linux guest stopped
/// at "SMC engine is not correctly up!" while the model answered it
/// `Failed`. PMFW answers the version its interface header carries.
#[test]
fn pmfw_answers_its_driver_interface_version() {
    for (part, want) in [(parts::navi31(), 0x3D), (parts::navi48(), 0x2E)] {
        let name = part.name;
        let gpu = virtual_gpu(part, 4);
        let up = bring_up(&gpu);
        let got = pmfw_message(&gpu, 0x3);
        assert_eq!(got, want, "{name}");
        drop(up.shutdown());
    }
}
