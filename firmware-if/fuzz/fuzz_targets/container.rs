//! The container parser on arbitrary bytes: the first byte picks the kind
//! (so every kind-specific decoder is reached), the rest is the blob. Any
//! panic, overflow trap or out-of-bounds section is a finding.
#![no_main]

use barebell_firmware_if::{CpEngine, Kind, MesPipe, parse};
use libfuzzer_sys::fuzz_target;

const KINDS: [Kind; 27] = [
    Kind::Cp(CpEngine::Pfp),
    Kind::Cp(CpEngine::Me),
    Kind::Cp(CpEngine::Ce),
    Kind::Cp(CpEngine::Mec),
    Kind::Cp(CpEngine::Mec2),
    Kind::Rlc,
    Kind::Mes(MesPipe::Scheduler),
    Kind::Mes(MesPipe::Kiq),
    Kind::Mes(MesPipe::Unified),
    Kind::Imu,
    Kind::Sdma,
    Kind::PspSos,
    Kind::PspToc,
    Kind::PspAsd,
    Kind::PspTa,
    Kind::Smc,
    Kind::Mc,
    Kind::GpuInfo,
    Kind::Dmcu,
    Kind::Dmcub,
    Kind::Vcn,
    Kind::Uvd,
    Kind::Vce,
    Kind::Vpe,
    Kind::UmschMm,
    Kind::Isp,
    Kind::Unknown,
];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, blob)) = data.split_first() else {
        return;
    };
    let kind = KINDS[usize::from(sel) % KINDS.len()];
    if let Ok(fw) = parse(kind, blob) {
        for s in fw.sections() {
            assert!(
                s.offset
                    .checked_add(s.size)
                    .is_some_and(|e| e <= blob.len())
            );
            assert_eq!(fw.bytes(s).len(), s.size);
        }
    }
});
