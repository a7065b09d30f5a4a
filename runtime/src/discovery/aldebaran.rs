//! Aldebaran (GC 9.4.2: MI210, MI250, MI250X): the IP list Linux uses
//! instead of the discovery table.
//!
//! Linux 6.12 picks `CHIP_ALDEBARAN` from the PCI device id
//! (`amdgpu_drv.c`'s `pciidlist`), and `amdgpu_discovery_reg_base_init()`'s
//! caller then reads the table only "for sysfs": the register bases come
//! from `aldebaran_reg_base_init()` (the `*_BASE` arrays of
//! `aldebaran_ip_offset.h`) and the IP versions are set by hand in the
//! `CHIP_ALDEBARAN` case (`amdgpu_discovery_set_ip_blocks()`'s caller,
//! `amdgpu_discovery_init_ip_versions` path in `amdgpu_discovery.c`).
//! [`ips`] is that list; [`FACTS`] checks every base against the header,
//! and `tests/harness/tests/aldebaran_ips.rs` checks the versions and the
//! device ids against the `.c` files.
//!
//! The five SDMA engines are Linux's `SDMA0_HWIP` … `SDMA4_HWIP`, each
//! with its own base array; here they are instances 0–4 of
//! [`hw_id::SDMA0`], which is how the rest of barebell counts engines.

use super::{IpInfo, IpVersion, Topology};
use crate::ip::hw_id;
use crate::regs::IpBases;
use barebell_facts::Fact;

/// The PCI device ids Linux 6.12 binds as `CHIP_ALDEBARAN`
/// (`amdgpu_drv.c`'s `pciidlist`).
pub const PCI_DEVICE_IDS: [u16; 4] = [0x7408, 0x740C, 0x740F, 0x7410];

/// Whether `device` is one of [`PCI_DEVICE_IDS`].
pub fn is_aldebaran(device: u16) -> bool {
    PCI_DEVICE_IDS.contains(&device)
}

/// `hw_id`s of the blocks `aldebaran_reg_base_init()` sets that
/// [`crate::ip::hw_id`] does not name (`soc15_hw_ip.h`).
pub mod more_hw_id {
    pub const THM: u16 = 3;
    pub const SMUIO: u16 = 4;
    pub const VCN: u16 = 12;
    pub const DF: u16 = 46;
}

const fn v(major: u8, minor: u8, revision: u8) -> IpVersion {
    IpVersion::new(major, minor, revision)
}

const fn ip(hw: u16, instance: u8, version: IpVersion, bases: &[u32]) -> IpInfo {
    IpInfo {
        die: 0,
        hw_id: hw,
        instance,
        version,
        harvest: 0,
        bases: IpBases::new(bases),
        num_bases: bases.len() as u8,
    }
}

// `aldebaran_ip_offset.h`: instance 0's segments of each `*_BASE`
// (and instance 1 of VCN, 1–3 of UMC), trailing zero segments left out.
const GC: [u32; 3] = [0x0000_2000, 0x0000_A000, 0x0240_2C00];
const HDP: [u32; 2] = [0x0000_0F20, 0x0240_A400];
const MMHUB: [u32; 2] = [0x0001_A000, 0x0240_8800];
const ATHUB: [u32; 2] = [0x0000_0C20, 0x0240_8C00];
const NBIO: [u32; 6] = [
    0x0000_0000,
    0x0000_0014,
    0x0000_0D20,
    0x0001_0400,
    0x0241_B000,
    0x0404_0000,
];
const MP: [u32; 5] = [
    0x0001_6000,
    0x00DC_0000,
    0x00E0_0000,
    0x00E4_0000,
    0x0243_FC00,
];
const DF: [u32; 3] = [0x0000_7000, 0x0240_B800, 0x07C0_0000];
const OSSSYS: [u32; 2] = [0x0000_10A0, 0x0240_A000];
const SDMA: [[u32; 3]; 5] = [
    [0x0000_1260, 0x0001_2540, 0x0040_A800],
    [0x0000_1860, 0x0001_2560, 0x0040_AC00],
    [0x0001_3760, 0x0001_E000, 0x0042_EC00],
    [0x0001_3780, 0x0001_E400, 0x0042_F000],
    [0x0001_37A0, 0x0001_E800, 0x0042_F400],
];
const SMUIO: [u32; 4] = [0x0001_6800, 0x0001_6A00, 0x0240_1000, 0x0344_0000];
const THM: [u32; 2] = [0x0001_6600, 0x0240_0C00];
const UMC: [[u32; 3]; 4] = [
    [0x0001_4000, 0x0005_4000, 0x0242_5800],
    [0x0009_4000, 0x000D_4000, 0x0242_5C00],
    [0x0011_4000, 0x0015_4000, 0x0242_6000],
    [0x0019_4000, 0x001D_4000, 0x0242_6400],
];
const VCN: [[u32; 3]; 2] = [
    [0x0000_7800, 0x0000_7E00, 0x0240_3000],
    [0x0000_7A00, 0x0000_9000, 0x0244_5000],
];

/// How many entries [`ips`] returns.
pub const IP_COUNT: usize = 22;

/// The IP instances of an Aldebaran, with the versions of the
/// `CHIP_ALDEBARAN` case (MMHUB and ATHUB 9.4.2, OSSSYS and HDP 4.4.0,
/// five SDMA 4.4.0, DF 3.6.2, NBIO 7.4.4, UMC 6.7.0, MP0/MP1/THM/SMUIO
/// 13.0.2, GC 9.4.2, two VCN 2.6.0) and the bases of
/// `aldebaran_reg_base_init()`.
pub const fn ips() -> [IpInfo; IP_COUNT] {
    let sdma = v(4, 4, 0);
    [
        ip(hw_id::GC, 0, v(9, 4, 2), &GC),
        ip(hw_id::HDP, 0, v(4, 4, 0), &HDP),
        ip(hw_id::MMHUB, 0, v(9, 4, 2), &MMHUB),
        ip(hw_id::ATHUB, 0, v(9, 4, 2), &ATHUB),
        ip(hw_id::NBIF, 0, v(7, 4, 4), &NBIO),
        ip(hw_id::MP0, 0, v(13, 0, 2), &MP),
        ip(hw_id::MP1, 0, v(13, 0, 2), &MP),
        ip(more_hw_id::DF, 0, v(3, 6, 2), &DF),
        ip(hw_id::OSSSYS, 0, v(4, 4, 0), &OSSSYS),
        ip(hw_id::SDMA0, 0, sdma, &SDMA[0]),
        ip(hw_id::SDMA0, 1, sdma, &SDMA[1]),
        ip(hw_id::SDMA0, 2, sdma, &SDMA[2]),
        ip(hw_id::SDMA0, 3, sdma, &SDMA[3]),
        ip(hw_id::SDMA0, 4, sdma, &SDMA[4]),
        ip(more_hw_id::SMUIO, 0, v(13, 0, 2), &SMUIO),
        ip(more_hw_id::THM, 0, v(13, 0, 2), &THM),
        ip(hw_id::UMC, 0, v(6, 7, 0), &UMC[0]),
        ip(hw_id::UMC, 1, v(6, 7, 0), &UMC[1]),
        ip(hw_id::UMC, 2, v(6, 7, 0), &UMC[2]),
        ip(hw_id::UMC, 3, v(6, 7, 0), &UMC[3]),
        ip(more_hw_id::VCN, 0, v(2, 6, 0), &VCN[0]),
        ip(more_hw_id::VCN, 1, v(2, 6, 0), &VCN[1]),
    ]
}

/// The layout the `CHIP_ALDEBARAN` case sets: `xcc_mask` 1, `sdma_mask`
/// 0x1f, no AIDs.
pub fn topology() -> Topology {
    Topology::fixed(0x1, 0x1f)
}

/// Segment `i` of `bases`, 0 past the last (as the header's arrays are
/// zero-filled).
const fn segment(bases: &[u32], i: usize) -> u64 {
    if i < bases.len() { bases[i] as u64 } else { 0 }
}

macro_rules! base_facts {
    ($($name:literal [$inst:literal] = $arr:expr;)*) => {
        [$(
            base_fact!($name, $inst, $arr, 0),
            base_fact!($name, $inst, $arr, 1),
            base_fact!($name, $inst, $arr, 2),
        )*]
    };
}

macro_rules! base_fact {
    ($name:literal, $inst:literal, $arr:expr, $seg:literal) => {
        Fact::constant(
            "aldebaran_ip_offset.h",
            concat!($name, "_BASE.instance[", $inst, "].segment[", $seg, "]"),
            segment(&$arr, $seg),
        )
    };
}

/// The first three segments of every base above against
/// `aldebaran_ip_offset.h` (the fourth to sixth in [`MORE_FACTS`]).
pub const FACTS: [Fact; 66] = base_facts! {
    "GC"[0] = GC; "HDP"[0] = HDP; "MMHUB"[0] = MMHUB; "ATHUB"[0] = ATHUB;
    "NBIO"[0] = NBIO; "MP0"[0] = MP; "MP1"[0] = MP; "DF"[0] = DF;
    "OSSSYS"[0] = OSSSYS; "SDMA0"[0] = SDMA[0]; "SDMA1"[0] = SDMA[1];
    "SDMA2"[0] = SDMA[2]; "SDMA3"[0] = SDMA[3]; "SDMA4"[0] = SDMA[4];
    "SMUIO"[0] = SMUIO; "THM"[0] = THM; "UMC"[0] = UMC[0]; "UMC"[1] = UMC[1];
    "UMC"[2] = UMC[2]; "UMC"[3] = UMC[3]; "VCN"[0] = VCN[0]; "VCN"[1] = VCN[1];
};

/// Segments 3–5 of the blocks that have more than three, and the first
/// zero segment of those with fewer, so no base is left out.
pub const MORE_FACTS: [Fact; 9] = [
    base_fact!("NBIO", 0, NBIO, 3),
    base_fact!("NBIO", 0, NBIO, 4),
    base_fact!("NBIO", 0, NBIO, 5),
    base_fact!("MP0", 0, MP, 3),
    base_fact!("MP0", 0, MP, 4),
    base_fact!("MP1", 0, MP, 4),
    base_fact!("SMUIO", 0, SMUIO, 3),
    base_fact!("GC", 0, GC, 3),
    base_fact!("SDMA0", 0, SDMA[0], 3),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_and_block_once() {
        let all = ips();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert!(
                    (a.hw_id, a.instance) != (b.hw_id, b.instance),
                    "hw_id {} instance {} twice",
                    a.hw_id,
                    a.instance
                );
            }
        }
        let sdma = all.iter().filter(|i| i.hw_id == hw_id::SDMA0).count();
        assert_eq!(sdma, 5);
        assert_eq!(topology().num_xcc(), 1);
        assert_eq!(topology().sdma_mask.count_ones(), 5);
    }

    #[test]
    fn the_mi210_is_an_aldebaran() {
        // The MI210's id as pci.ids names it ("Aldebaran/MI200 [Instinct MI210]").
        assert!(is_aldebaran(0x740F));
        assert!(!is_aldebaran(0x74A1));
    }
}
