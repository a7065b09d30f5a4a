//! NBIO 7.9 (MI300, GC 9.4.3): the runtime's `init_v7_9` against the
//! model's NBIO 7.9 block, one model per AID, at the NBIO bases of the
//! model's MI300X/MI308X discovery tables (parsed by the runtime).
//!
//! Expected values are worked out by hand from `nbio_7_9_0_offset.h`,
//! `nbio_7_9_0_sh_mask.h` and `nbio_v7_9.c`:
//! - `RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN` 0xC0, `BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL`
//!   0x12D, both `BASE_IDX` 2; the model's NBIO segment 2 is 0xD20, so
//!   bytes (0xD20 + 0xC0) * 4 = 0x3780 and (0xD20 + 0x12D) * 4 = 0xE4D * 4 = 0x3934;
//! - `BIF_BX0_PCIE_INDEX2`/`_DATA2` 0xE/0xF, `BASE_IDX` 0, segment 0 at 0:
//!   bytes 0x38/0x3C;
//! - `XCC_DOORBELL_FENCE` 0x740C, `BASE_IDX` 5 (segment 5 0x4040000 +
//!   AID * 0x4000000, model values): AID 0 at byte 0x1011_D030;
//! - `BIFC_DOORBELL_ACCESS_EN_PF` 0xCF6E and `BIFC_GFX_INT_MONITOR_MASK`
//!   0xE8AD, both `BASE_IDX` 8 (segment 8 0x20000 on AID 0, a model
//!   value): bytes (0x20000 + 0xCF6E) * 4 = 0xB3DB8 and
//!   (0x20000 + 0xE8AD) * 4 = 0xBA2B4; `nbio_v7_9_init_registers()`
//!   writes 0x7FF to the second, `nbio_v7_9_enable_doorbell_aperture()`
//!   0xFFFFF to the first;
//! - the hole: `#define MMIO_REG_HOLE_OFFSET 0x1A000`;
//! - `nbio_v7_9_init_registers()`: AID 0's fence `0xff & ~xcc_mask`, the
//!   others `SHUB_SLV_MODE` (bit 16), BACO_EN (bit 0) / BACO_DUMMY_EN
//!   (bit 2) cleared.

use barebell::bus::RegisterBus;
use barebell::bus::indirect::IndirectBus;
use barebell::discovery::{Discovery, hw_id};
use barebell::nbio::{self, MMIO_REG_HOLE_OFFSET, NBIO_4_3_0, NBIO_7_9_0, Nbio, NbioError};
use barebell::regs::IpBases;
use barebell_model::SimClock;
use barebell_model::bar::BarWindow;
use barebell_model::discovery::{self as sim, MI300X, MI308X, PartDesc};
use barebell_model::nbio::{DoorbellOutcome, NbioIp, NbioModel};
use barebell_model::regfile::RegisterFile;
use std::collections::HashMap;

const DOORBELL_BUS: u64 = 0x00FC_0000_0000;
const HOLE_V7_9: usize = 0x1A000;

/// NBIO instance 0's bases, every live AID's, and the XCC mask.
fn discovered(part: &PartDesc) -> (Nbio, Vec<IpBases>, u32) {
    let (bin, _) = sim::build(part);
    let d = Discovery::parse(&bin).unwrap();
    let t = d.topology();
    let ip = d.ip(hw_id::NBIF, 0).unwrap();
    assert_eq!(ip.version.triple(), (7, 9, 0), "{}", part.name);
    let aids = (0..4)
        .filter_map(|a| d.aid_ip(&t, hw_id::NBIF, a))
        .map(|i| i.bases)
        .collect();
    (
        Nbio::for_version(ip.version.triple(), ip.bases).unwrap(),
        aids,
        t.xcc_mask,
    )
}

/// The AIDs' NBIO models on one bus: a register one of them owns
/// (its fence, its BACO control) goes to it, the rest to AID 0's.
struct Aids {
    models: Vec<NbioModel>,
    owner: HashMap<usize, usize>,
}

impl Aids {
    fn new(clock: &SimClock, aids: &[IpBases]) -> Self {
        let models: Vec<NbioModel> = aids
            .iter()
            .map(|b| NbioModel::new(clock, NbioIp::Nbio7_9_0, *b, NbioIp::Nbio7_9_0.hole()))
            .collect();
        let mut owner = HashMap::new();
        for (a, b) in aids.iter().enumerate() {
            // XCC_DOORBELL_FENCE (0x740C, seg 5), BIF_BX0_BACO_CNTL (0x10B, seg 2).
            owner.insert((b.0[5] as usize + 0x740C) * 4, a);
            owner.insert((b.0[2] as usize + 0x10B) * 4, a);
        }
        Aids { models, owner }
    }
    fn aid0(&self) -> &NbioModel {
        &self.models[0]
    }
}

impl RegisterBus for Aids {
    fn read32(&self, at: usize) -> u32 {
        self.models[*self.owner.get(&at).unwrap_or(&0)].read32(at)
    }
    fn write32(&self, at: usize, v: u32) {
        self.models[*self.owner.get(&at).unwrap_or(&0)].write32(at, v)
    }
}

#[test]
fn the_soc21_path_is_refused_and_the_7_9_path_opens_the_device() {
    for (part, fence) in [(&MI300X, 0x00), (&MI308X, 0xAA)] {
        let clock = SimClock::new();
        let (n, aids, xcc_mask) = discovered(part);
        assert_eq!(aids.len(), 4, "{}", part.name);
        assert_eq!(n.regs.ip, "NBIO 7.9.0");
        assert_eq!(n.hole() as usize, HOLE_V7_9);
        let m = Aids::new(&clock, &aids);
        m.models[1].set_baco_cntl(0x5);

        // The model refuses a doorbell store before the aperture opens.
        assert_eq!(m.aid0().doorbell_write(3, 7), DoorbellOutcome::Dropped);
        assert_eq!(m.aid0().doorbell_read(3), u64::MAX);
        // The soc21/soc24 sequence is refused with a typed error...
        assert_eq!(
            nbio::init(&m, &n, DOORBELL_BUS),
            Err(NbioError::NotOnThisNbio {
                what: "the soc21/soc24 NBIO init (use init_v7_9)",
                ip: "NBIO 7.9.0"
            })
        );
        // ...and a remap to the soc21 hole flushes nothing on NBIO 7.9.
        nbio::remap_hdp(&m, &n, MMIO_REG_HOLE_OFFSET).unwrap();
        nbio::flush_hdp(&m, &n, MMIO_REG_HOLE_OFFSET).unwrap();
        assert_eq!(m.aid0().hdp_flushes(), 0, "{}", part.name);
        assert!(!m.aid0().doorbell_aperture_open());

        let r = nbio::init_v7_9(&m, &n, &aids, xcc_mask, DOORBELL_BUS).unwrap();
        assert_eq!(r.fences, 0b1111);
        assert_eq!(r.baco_cleared, 0b0010);
        // Segment 8 is reached through the discovered bases.
        assert!(r.segment8_written);
        assert_eq!(m.aid0().read32(0xB_A2B4), 0x7FF, "{}", part.name);
        assert_eq!(m.aid0().read32(0xB_3DB8), 0xF_FFFF, "{}", part.name);
        assert!(m.aid0().doorbell_access_enabled());
        assert_eq!(m.aid0().xcc_doorbell_fence(), Some(fence), "{}", part.name);
        for a in 1..4 {
            assert_eq!(m.models[a].xcc_doorbell_fence(), Some(0x1_0000));
        }
        assert_eq!(m.models[1].baco_cntl(), Some(0));
        assert_eq!(m.aid0().remapped_mem_flush(), Some(HOLE_V7_9));
        assert_eq!(m.aid0().remapped_reg_flush(), Some(HOLE_V7_9 + 4));
        assert!(m.aid0().doorbell_aperture_open());
        assert_eq!(m.aid0().selfring_base(), Some(DOORBELL_BUS));
        nbio::flush_hdp(&m, &n, n.hole()).unwrap();
        assert_eq!(m.aid0().hdp_flushes(), 1);
        assert_eq!(m.aid0().doorbell_write(3, 7), DoorbellOutcome::Rang);
        assert_eq!(m.aid0().doorbell_read(3), 7);
        assert_eq!(m.aid0().hole_reads(), 0);
    }
}

#[test]
fn the_7_9_registers_sit_where_the_header_puts_them() {
    let (n, aids, _) = discovered(&MI300X);
    let f = RegisterFile::new(&SimClock::new());
    let b = n.block(&f);
    use barebell::regs::nbio_7_9_0 as r;
    assert_eq!(b.offset(r::RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN), Ok(0x3780));
    assert_eq!(b.offset(r::BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL), Ok(0x3934));
    assert_eq!(n.regs.rsmu_pair().0.byte_offset(&n.bases), Some(0x38));
    assert_eq!(n.regs.rsmu_pair().1.byte_offset(&n.bases), Some(0x3C));
    assert_eq!(
        n.regs.index_hi.and_then(|r| r.byte_offset(&n.bases)),
        Some(0x44)
    );
    assert_eq!(
        r::XCC_DOORBELL_FENCE.byte_offset(&aids[0]),
        Some(0x1011_D030)
    );
    // The model's own table agrees.
    let clock = SimClock::new();
    let m = NbioModel::new(&clock, NbioIp::Nbio7_9_0, n.bases, HOLE_V7_9);
    assert_eq!(m.index_pair(), Some((0x38, 0x3C)));
}

/// Registers past BAR5 go through `BIF_BX0_PCIE_INDEX2`/`_DATA2`; the
/// RSMU pair NBIO 4.3.0 uses reaches nothing on NBIO 7.9's window.
#[test]
fn registers_past_the_bar_go_through_pcie_index2() {
    let (n, _, _) = discovered(&MI300X);
    let clock = Box::leak(Box::new(SimClock::new()));
    let m = NbioModel::new(clock, NbioIp::Nbio7_9_0, n.bases, HOLE_V7_9);
    let (i, d) = m.index_pair().unwrap();
    let file: &'static RegisterFile = Box::leak(Box::new(RegisterFile::new(clock)));
    let bar = 0x4_0000;
    let far = 0x1011_D030; // AID 0's XCC_DOORBELL_FENCE, past the BAR
    let w: &'static BarWindow<&RegisterFile> = Box::leak(Box::new(BarWindow::new(file, bar, i, d)));
    // The 4.3.0 pair (segment 1, 0x14 * 4 = 0x50) on this window: lost.
    let old = IndirectBus::new(w, bar, NBIO_4_3_0.rsmu_pair(), &n.bases).unwrap();
    old.write32(far, 0x1234);
    assert_eq!(file.device_get(far), 0);
    let new = IndirectBus::new(w, bar, NBIO_7_9_0.rsmu_pair(), &n.bases).unwrap();
    new.write32(far, 0xAA);
    assert_eq!(file.device_get(far), 0xAA);
    assert_eq!(new.read32(far), 0xAA);
}

/// `nbio_v7_9_sdma_doorbell_range()` for engine 0 of AID 1, doorbell
/// dword 0x1C0, 20 dwords: `DOORBELL0_CTRL_ENTRY_1` + 4 * AID with
/// RANGE_OFFSET 0x1C0 (bits 9:0) | SIZE 20 (bits 14:10) = 0x51C0;
/// `S2A_DOORBELL_ENTRY_1_CTRL` ENABLE | AWID 0xE (bits 5:1) | RANGE_OFFSET
/// 0xE (bits 16:7) | RANGE_SIZE 20 (bits 24:17) | AWADDR_31_28 1 =
/// 0x1028_071D. Engine 3 uses entry 6 with AWID 0xA, AWADDR 9.
#[test]
fn sdma_doorbell_ranges_are_what_nbio_v7_9_writes() {
    use barebell::regs::nbio_7_9_0 as r;
    let (e, off, range, s2a, ctrl) = nbio::sdma_doorbell_range_v7_9(1, 0, 0x1C0, 20).unwrap();
    assert_eq!((e, off, range), (r::DOORBELL0_CTRL_ENTRY_1, 4, 0x51C0));
    assert_eq!((s2a, ctrl), (r::S2A_DOORBELL_ENTRY_1_CTRL, 0x1028_071D));
    let (e, _, _, s2a, ctrl) = nbio::sdma_doorbell_range_v7_9(0, 3, 0, 0).unwrap();
    assert_eq!(e, r::DOORBELL0_CTRL_ENTRY_4);
    assert_eq!(s2a, r::S2A_DOORBELL_ENTRY_6_CTRL);
    assert_eq!(ctrl, 1 | 0xA << 1 | 0xA << 7 | 9 << 28);
    assert!(nbio::sdma_doorbell_range_v7_9(0, 4, 0, 0).is_none());
    // NBIO 7.9 has no gc_doorbell_init.
    let (n, _, _) = discovered(&MI300X);
    let f = RegisterFile::new(&SimClock::new());
    assert!(matches!(
        nbio::gc_doorbell_init(&f, &n),
        Err(NbioError::NotOnThisNbio { .. })
    ));
}

/// `MMIO_REG_HOLE_OFFSET` of `nbio_v7_9.c` (a `.c` `#define`, read as text
/// from the tree `cargo xtask headers` extracts) is the table's hole, and
/// `nbio_v7_9_set_reg_remap()` uses it.
#[test]
fn nbio_v7_9_hole_is_the_linux_define() {
    let path = format!(
        "{}/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/amdgpu/nbio_v7_9.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask headers`)"));
    let line = text
        .lines()
        .find(|l| {
            l.starts_with("#define") && l.split_whitespace().nth(1) == Some("MMIO_REG_HOLE_OFFSET")
        })
        .unwrap();
    let v = line.split_whitespace().nth(2).unwrap();
    let v = u32::from_str_radix(v.trim_start_matches("0x"), 16).unwrap();
    assert_eq!(v, nbio::MMIO_REG_HOLE_OFFSET_V7_9);
    assert_eq!(v as usize, NbioIp::Nbio7_9_0.hole());
    assert!(text.contains("adev->rmmio_remap.reg_offset = MMIO_REG_HOLE_OFFSET;"));
}

/// A device split into compute partitions is refused before NBIO 7.9 is
/// written: `aqua_vanjaram_query_partition_mode()` reads
/// `BIF_BX_PF0_PARTITION_COMPUTE_STATUS.PARTITION_MODE` (bits 7:4,
/// `nbio_7_9_0_sh_mask.h`) through `nbio_v7_9_get_compute_partition_mode()`,
/// and barebell drives SPX (0) only.
#[test]
fn a_partitioned_device_is_refused_untouched() {
    let clock = SimClock::new();
    let (n, aids, xcc_mask) = discovered(&MI300X);
    // CPX (`AMDGPU_CPX_PARTITION_MODE` = 4 in amdgpu_gfx.h), then DPX (1).
    for mode in [4u32, 1] {
        let m = Aids::new(&clock, &aids);
        m.aid0().set_compute_partition(mode);
        // PARTITION_COMPUTE_STATUS is dword 0x163 of segment 2.
        assert_eq!(m.read32((aids[0].0[2] as usize + 0x163) * 4), mode << 4);
        assert_eq!(
            nbio::init_v7_9(&m, &n, &aids, xcc_mask, DOORBELL_BUS),
            Err(NbioError::ComputePartition { mode })
        );
        assert_eq!(m.aid0().xcc_doorbell_fence(), Some(0), "nothing written");
        assert!(!m.aid0().doorbell_aperture_open());
        let text = NbioError::ComputePartition { mode }.to_string();
        assert!(text.contains("barebell drives SPX only"), "{text}");
    }
    // SPX goes ahead.
    let m = Aids::new(&clock, &aids);
    m.aid0().set_compute_partition(0);
    assert!(nbio::init_v7_9(&m, &n, &aids, xcc_mask, DOORBELL_BUS).is_ok());
}

/// NBIO 7.9 passes doorbells only once `BIFC_DOORBELL_ACCESS_EN_PF`
/// (segment 8) is set, as `nbio_v7_9_enable_doorbell_aperture()` sets it
/// for pre-silicon parts (the model's convention, `NbioModel::
/// doorbell_access_enabled`): the doorbell aperture alone is not enough.
#[test]
fn doorbells_pass_only_once_segment_8_enables_them() {
    let clock = SimClock::new();
    let (_, aids, _) = discovered(&MI300X);
    let m = Aids::new(&clock, &aids);
    // RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN (0xC0, seg 2 at 0xD20) opened by
    // hand, the access enable left at its power-on 0.
    m.write32((0xD20 + 0xC0) * 4, 1);
    assert!(!m.aid0().doorbell_access_enabled());
    assert!(!m.aid0().doorbell_aperture_open());
    assert_eq!(m.aid0().doorbell_write(3, 7), DoorbellOutcome::Dropped);
    assert_eq!(m.aid0().doorbell_read(3), u64::MAX);
    m.write32(0xB_3DB8, 0xF_FFFF);
    assert!(m.aid0().doorbell_aperture_open());
    assert_eq!(m.aid0().doorbell_write(3, 7), DoorbellOutcome::Rang);
    assert_eq!(m.aid0().doorbell_read(3), 7);
}
