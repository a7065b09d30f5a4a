//! MI300X / MI308X (GC 9.4.3): the model's multi-die discovery tables,
//! parsed by the runtime, against values written by hand from the part
//! declarations' documentation (model/src/discovery.rs, parts.rs) and
//! Linux 6.12 (amdgpu_discovery.c, aqua_vanjaram.c).

use barebell::discovery::{Discovery, hw_id};
use barebell::ip::Generation;
use barebell_model::discovery::{self, MI300X, MI308X, PartDesc};

fn parse(desc: &PartDesc) -> Vec<u8> {
    discovery::build(desc).0
}

#[test]
fn gc_9_4_3_is_its_own_generation() {
    assert_eq!(Generation::of_gc((9, 4, 3)), Some(Generation::Gfx94));
    assert_eq!(Generation::of_gc((9, 4, 4)), None);
    assert_eq!(Generation::of_gc((11, 0, 0)), Some(Generation::Gfx11));
}

#[test]
fn mi300x_table_parses_to_eight_xccs_on_four_aids() {
    let b = parse(&MI300X);
    let d = Discovery::parse(&b).unwrap();
    assert_eq!(d.ip_table_version(), 4);
    assert!(d.base_addr_64_bit());
    assert_eq!(d.num_dies(), 4);
    let t = d.topology();
    assert_eq!(t.xcc_mask, 0xff);
    assert_eq!(t.num_xcc(), 8);
    assert_eq!(t.sdma_mask, 0xffff);
    assert_eq!(t.aid_mask, 0xf);
    assert_eq!(t.num_aid(), 4);
    // Nothing harvested: logical = physical.
    for l in 0..8 {
        assert_eq!(t.xcc_physical(l), Some(l as u8));
    }
    assert_eq!(t.xcc_physical(8), None);
    // Per-XCC GC: 9.4.3, die n / 2, segment k = XCC 0's + n * 0x80_0000
    // (the documented model stride), the AID tag in bits 33:32 dropped as
    // amdgpu_discovery_reg_base_init() drops everything above bit 29.
    let xcc0 = [0x1260u32, 0xA000, 0x1C000, 0x2402C00];
    for n in 0..8u32 {
        let x = d.xcc(&t, n as usize).unwrap();
        assert_eq!(x.version.triple(), (9, 4, 3));
        assert_eq!(x.die, (n / 2) as u16);
        for (k, base) in xcc0.iter().enumerate() {
            assert_eq!(x.bases.0[k], base + n * 0x80_0000, "XCC {n} segment {k}");
        }
    }
    // Per-AID MMHUB 1.8.0 and NBIO 7.9.0, instance = AID.
    for aid in 0..4u8 {
        assert_eq!(
            d.aid_ip(&t, hw_id::MMHUB, aid).unwrap().version.triple(),
            (1, 8, 0)
        );
        assert_eq!(
            d.aid_ip(&t, hw_id::NBIF, aid).unwrap().version.triple(),
            (7, 9, 0)
        );
    }
    for (id, v) in [
        (hw_id::MP0, (13, 0, 6)),
        (hw_id::MP1, (13, 0, 6)),
        (hw_id::OSSSYS, (4, 4, 2)),
        (hw_id::HDP, (4, 4, 2)),
        (hw_id::SDMA0, (4, 4, 2)),
    ] {
        assert_eq!(d.ip(id, 0).unwrap().version.triple(), v);
    }
    // gc_info v2.1: 4 SE x 1 SH x 10 CU per XCC, wave64, 64 KiB LDS.
    let g = d.gc_info().unwrap().unwrap();
    assert_eq!(g.version, (2, 1));
    assert_eq!((g.num_se, g.max_sh_per_se, g.max_cu_per_sh), (4, 1, 10));
    assert_eq!(g.max_cus_per_gc(), 40);
    assert_eq!((g.wave_size, g.lds_size), (64, 64));
    assert_eq!(g.v2_1.unwrap().tcc_size, 4096);
}

#[test]
fn mi308x_harvest_table_leaves_one_xcc_per_aid() {
    let b = parse(&MI308X);
    let d = Discovery::parse(&b).unwrap();
    let t = d.topology();
    // GC 1, 3, 5, 7 harvested: bits 0, 2, 4, 6 left.
    assert_eq!(t.xcc_mask, 0b0101_0101);
    assert_eq!(t.num_xcc(), 4);
    assert_eq!(t.aid_mask, 0xf);
    // aqua_vanjaram_populate_ip_map(): logical l -> l-th set bit.
    let map: Vec<_> = t.xccs().collect();
    assert_eq!(map, vec![(0, 0), (1, 2), (2, 4), (3, 6)]);
    let x1 = d.xcc(&t, 1).unwrap();
    assert_eq!(x1.instance, 2);
    assert_eq!(x1.die, 1);
    assert_eq!(x1.bases.0[0], 0x1260 + 2 * 0x80_0000);
    // 4 XCCs x 20 CUs, the part's declaration.
    let p = barebell_model::parts::mi308x();
    let x = p.xcc.unwrap();
    assert_eq!((x.xccs, x.cus_per_xcc, x.cus()), (4, 20, 80));
    assert_eq!(barebell_model::parts::mi300x().xcc.unwrap().cus(), 304);
}

#[test]
fn harvested_sdma_drops_an_aid_as_linux_derives_it() {
    // AID 3 keeps only SDMA 12 (0b0001): not 0xf, 0x3 or 0xc, so
    // aqua_vanjaram_init_soc_config() leaves bit 3 out of aid_mask.
    let desc = PartDesc {
        harvested: &[
            (discovery::SDMA0_HWID, 13),
            (discovery::SDMA0_HWID, 14),
            (discovery::SDMA0_HWID, 15),
        ],
        ..MI300X
    };
    let b = parse(&desc);
    let t = Discovery::parse(&b).unwrap().topology();
    assert_eq!(t.sdma_mask, 0x1fff);
    assert_eq!(t.aid_mask, 0b0111);
    assert_eq!(t.num_aid(), 3);
}

#[test]
fn single_die_parts_keep_logical_equal_physical_and_no_aid_mask() {
    let b = parse(&discovery::NAVI31);
    let t = Discovery::parse(&b).unwrap().topology();
    assert_eq!(t.xcc_mask, 1);
    assert_eq!(t.aid_mask, 0);
    assert_eq!(t.xcc_physical(0), Some(0));
}

/// Linux 6.12 refuses a GC 9.4.3 table without a VCN: with none,
/// `amdgpu_discovery_set_mm_ip_blocks()` fails ("Failed to add vcn/jpeg
/// ip block(UVD_HWIP:0x0)"), as the Linux guest showed on the model
/// (`cargo xtask linux-peer --part mi300x`). Each AID carries a VCN 4.0.3
/// (`vcn_v4_0_3.c`; `VCN_HWID` is 12 in `discovery.h`).
#[test]
fn every_aid_lists_a_vcn_4_0_3_as_linux_requires() {
    const VCN_HWID: u16 = 12;
    for desc in [&MI300X, &MI308X] {
        let b = parse(desc);
        let d = Discovery::parse(&b).unwrap();
        let t = d.topology();
        for aid in 0..4u8 {
            let vcn = d.aid_ip(&t, VCN_HWID, aid).expect("a VCN on every AID");
            assert_eq!(vcn.version.triple(), (4, 0, 3), "AID {aid}");
        }
    }
}
