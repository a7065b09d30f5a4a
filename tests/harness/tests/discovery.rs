//! The runtime's discovery parser against binaries the model synthesises
//! from a declarative part description (`barebell_model::discovery`).
//!
//! Expected values come from the descriptions (the builder's input), never
//! from the parser; the corruption tests check that each class of bad
//! input from issue 6 gives its own typed error.

use barebell::discovery::{Discovery, Error, IpVersion, hw_id};
use barebell::regs::{IpBases, Reg};
use barebell_model::discovery::{self as sim, IpDesc, NAVI31, NAVI48, PartDesc};

fn expect_map(d: &Discovery<'_>, desc: &PartDesc) {
    let all: Vec<&IpDesc> = desc.dies.iter().flat_map(|die| die.iter()).collect();
    assert_eq!(d.ip_count(), all.len());
    assert_eq!(usize::from(d.num_dies()), desc.dies.len());
    for ip in all {
        let got = d.ip(ip.hw_id, ip.instance).unwrap_or_else(|| {
            panic!(
                "{} missing hw_id {} inst {}",
                desc.name, ip.hw_id, ip.instance
            )
        });
        let (ma, mi, rev) = ip.version;
        assert_eq!(got.version.triple(), (ma, mi, rev));
        assert_eq!(usize::from(got.num_bases), ip.bases.len());
        for (k, b) in ip.bases.iter().enumerate() {
            assert_eq!(u64::from(got.bases.0[k]), *b & 0x3FFF_FFFF, "base {k}");
        }
    }
}

#[test]
fn navi31_description_round_trips() {
    let (bin, _) = sim::build(&NAVI31);
    let d = Discovery::parse(&bin).unwrap();
    assert_eq!(d.ip_table_version(), 4);
    assert!(!d.base_addr_64_bit());
    expect_map(&d, &NAVI31);
    let gc = d.ip(hw_id::GC, 0).unwrap();
    assert_eq!(gc.version, IpVersion::new(11, 0, 0));
    let mp0 = d.ip(hw_id::MP0, 0).unwrap();
    assert_eq!(mp0.version, IpVersion::new(13, 0, 0));
    let g = d.gc_info().unwrap().unwrap();
    let want = NAVI31.gc.unwrap();
    assert_eq!(g.num_se, want.num_se);
    assert_eq!(g.max_cu_per_sh, 2 * (want.wgp0_per_sa + want.wgp1_per_sa));
    assert_eq!(g.max_sh_per_se, want.sa_per_se);
    assert_eq!(g.wave_size, want.wave_size);
    assert_eq!(g.lds_size, want.lds_size);
    let mut harvested = vec![];
    d.for_each_harvested(|h, i| harvested.push((h, i)));
    assert_eq!(harvested, NAVI31.harvested);
}

#[test]
fn navi48_64_bit_bases_round_trip() {
    let (bin, _) = sim::build(&NAVI48);
    let d = Discovery::parse(&bin).unwrap();
    assert!(d.base_addr_64_bit());
    expect_map(&d, &NAVI48);
    assert_eq!(
        d.ip(hw_id::GC, 0).unwrap().version,
        IpVersion::new(12, 0, 1)
    );
    let mut n = 0;
    d.for_each_harvested(|_, _| n += 1);
    assert_eq!(n, 0);
}

/// 64-bit bases keep the low 32 bits with bits 31:30 cleared
/// (`amdgpu_discovery_reg_base_init()`).
#[test]
fn wide_bases_are_truncated_like_linux() {
    static BASES: [u64; 2] = [0x0000_0001_C000_1260, 0xFFFF_FFFF_4000_A000];
    static DIE: [IpDesc; 1] = [IpDesc::new(11, 0, (11, 0, 0), &BASES)];
    static DIES: [&[IpDesc]; 1] = [&DIE];
    let desc = PartDesc {
        dies: &DIES,
        base_64: true,
        ..NAVI48
    };
    let (bin, _) = sim::build(&desc);
    let d = Discovery::parse(&bin).unwrap();
    assert_eq!(
        d.ip(11, 0).unwrap().bases.0[..2],
        [0x0000_1260, 0x0000_A000]
    );
}

#[test]
fn table_versions_1_and_3_decode_byte_7() {
    static BASES: [u64; 1] = [0x1260];
    static DIE: [IpDesc; 1] = [IpDesc {
        variant: 0x2,
        sub_revision: 0x5,
        harvest: 0x3,
        ..IpDesc::new(11, 0, (11, 0, 0), &BASES)
    }];
    static DIES: [&[IpDesc]; 1] = [&DIE];
    let v3 = PartDesc {
        table_version: 3,
        base_64: false,
        dies: &DIES,
        ..NAVI31
    };
    let (bin, _) = sim::build(&v3);
    let ip = Discovery::parse(&bin).unwrap().ip(11, 0).unwrap();
    assert_eq!(
        (ip.version.variant, ip.version.sub_revision, ip.harvest),
        (2, 5, 0)
    );
    let v1 = PartDesc {
        table_version: 1,
        ..v3
    };
    let (bin, _) = sim::build(&v1);
    let ip = Discovery::parse(&bin).unwrap().ip(11, 0).unwrap();
    assert_eq!(
        (ip.version.variant, ip.version.sub_revision, ip.harvest),
        (0, 0, 3)
    );
}

#[test]
fn multi_die_map() {
    static B: [u64; 1] = [0x100];
    static D0: [IpDesc; 1] = [IpDesc::new(11, 0, (9, 4, 3), &B)];
    static D1: [IpDesc; 2] = [
        IpDesc::new(11, 1, (9, 4, 3), &B),
        IpDesc::new(255, 0, (13, 0, 6), &B),
    ];
    static DIES: [&[IpDesc]; 2] = [&D0, &D1];
    let desc = PartDesc {
        dies: &DIES,
        gc: None,
        ..NAVI31
    };
    let (bin, _) = sim::build(&desc);
    let d = Discovery::parse(&bin).unwrap();
    expect_map(&d, &desc);
    assert_eq!(d.ip(11, 1).unwrap().die, 1);
    assert_eq!(d.gc_info(), Ok(None));
}

/// Linux skips (does not fail on) entries whose instance or hw id is
/// out of range, and keeps walking past them.
#[test]
fn out_of_range_entries_are_skipped() {
    static B: [u64; 2] = [1, 2];
    static DIE: [IpDesc; 3] = [
        IpDesc::new(11, 44, (1, 0, 0), &B),
        IpDesc::new(300, 0, (1, 0, 0), &B),
        IpDesc::new(255, 0, (13, 0, 0), &B),
    ];
    static DIES: [&[IpDesc]; 1] = [&DIE];
    let desc = PartDesc {
        dies: &DIES,
        ..NAVI31
    };
    let (bin, _) = sim::build(&desc);
    let d = Discovery::parse(&bin).unwrap();
    assert_eq!(d.ip_count(), 1);
    assert_eq!(d.ip(255, 0).unwrap().bases.0[..2], [1, 2]);
}

/// The IP map computes BAR5 byte offsets for register constants.
#[test]
fn ip_map_feeds_reg_byte_offset() {
    let (bin, _) = sim::build(&NAVI31);
    let d = Discovery::parse(&bin).unwrap();
    let mp0: IpBases = d.ip(hw_id::MP0, 0).unwrap().bases;
    let c2pmsg_35 = Reg {
        name: "MP0_SMN_C2PMSG_35",
        offset: 0x0063,
        base_idx: 0,
    };
    // MP0 segment 0 of the description is 0x16000 dwords.
    assert_eq!(c2pmsg_35.byte_offset(&mp0), Some((0x16000 + 0x63) * 4));
}

#[test]
fn bad_binary_signature() {
    let (mut bin, _) = sim::build(&NAVI31);
    bin[0] ^= 0xFF;
    assert!(matches!(
        Discovery::parse(&bin),
        Err(Error::BadSignature {
            what: "binary_signature",
            expected: 0x2821_1407,
            ..
        })
    ));
}

#[test]
fn bad_binary_checksum() {
    let (mut bin, l) = sim::build(&NAVI31);
    bin[l.binary_size - 1] ^= 1;
    assert!(matches!(
        Discovery::parse(&bin),
        Err(Error::BadChecksum { what: "binary", .. })
    ));
}

#[test]
fn bad_ip_table_signature_and_checksum() {
    let (mut bin, l) = sim::build(&NAVI31);
    bin[l.ip_table] = b'X';
    sim::refresh_checksums(&mut bin);
    assert!(matches!(
        Discovery::parse(&bin),
        Err(Error::BadSignature {
            what: "ip_discovery_header.signature",
            found,
            expected: 0x5344_5049,
        }) if found & 0xFF == u32::from(b'X')
    ));

    // A flipped byte inside the IP table with only the binary checksum
    // refreshed fails the table's own checksum.
    let (mut bin, l) = sim::build(&NAVI31);
    bin[l.first_die + 8] ^= 0x10;
    let size = u16::from_le_bytes([bin[10], bin[11]]) as usize;
    let s: u16 = bin[10..size]
        .iter()
        .fold(0u16, |a, b| a.wrapping_add(u16::from(*b)));
    bin[8..10].copy_from_slice(&s.to_le_bytes());
    assert!(matches!(
        Discovery::parse(&bin),
        Err(Error::BadChecksum {
            what: "ip discovery table",
            ..
        })
    ));
}

#[test]
fn bad_gc_and_harvest_tables() {
    let (mut bin, l) = sim::build(&NAVI31);
    bin[l.gc_table] = 0;
    sim::refresh_checksums(&mut bin);
    assert!(matches!(
        Discovery::parse(&bin),
        Err(Error::BadSignature {
            what: "gc table_id",
            ..
        })
    ));
    let (mut bin, l) = sim::build(&NAVI31);
    bin[l.harvest_table + 1] = 0;
    sim::refresh_checksums(&mut bin);
    assert!(matches!(
        Discovery::parse(&bin),
        Err(Error::BadSignature {
            what: "harvest table signature",
            ..
        })
    ));
}

#[test]
fn counts_past_the_end() {
    // num_ips far beyond the table: the walk runs off the binary.
    let (mut bin, l) = sim::build(&NAVI31);
    bin[l.first_die + 2..l.first_die + 4].copy_from_slice(&4000u16.to_le_bytes());
    sim::refresh_checksums(&mut bin);
    assert!(matches!(
        Discovery::parse(&bin),
        Err(Error::OutOfBounds { .. })
    ));

    // num_dies beyond die_info[16].
    let (mut bin, l) = sim::build(&NAVI31);
    bin[l.ip_table + 12..l.ip_table + 14].copy_from_slice(&17u16.to_le_bytes());
    sim::refresh_checksums(&mut bin);
    assert_eq!(
        Discovery::parse(&bin).unwrap_err(),
        Error::BadCount {
            what: "ip_discovery_header.num_dies",
            value: 17,
            limit: 16
        }
    );

    // A base count that runs past the end of a truncated binary.
    let (mut bin, l) = sim::build(&NAVI31);
    bin[l.first_die + 4 + 3] = 255;
    sim::refresh_checksums(&mut bin);
    let cut = &bin[..l.binary_size];
    assert!(matches!(
        Discovery::parse(cut),
        Err(Error::OutOfBounds { .. })
    ));

    // binary_size larger than the buffer handed in.
    let (bin, l) = sim::build(&NAVI31);
    assert!(matches!(
        Discovery::parse(&bin[..l.binary_size - 1]),
        Err(Error::OutOfBounds { what: "binary", .. })
    ));

    // A die offset pointing past the end.
    let (mut bin, l) = sim::build(&NAVI31);
    bin[l.ip_table + 16..l.ip_table + 18].copy_from_slice(&0xFFF0u16.to_le_bytes());
    sim::refresh_checksums(&mut bin);
    assert!(matches!(
        Discovery::parse(&bin),
        Err(Error::OutOfBounds {
            what: "die_header",
            ..
        })
    ));
}

#[test]
fn die_id_must_match_index() {
    let (mut bin, l) = sim::build(&NAVI31);
    bin[l.first_die] = 3;
    sim::refresh_checksums(&mut bin);
    assert_eq!(
        Discovery::parse(&bin).unwrap_err(),
        Error::DieIdMismatch { index: 0, found: 3 }
    );
}

#[test]
fn empty_and_short_inputs() {
    assert!(matches!(
        Discovery::parse(&[]),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        Discovery::parse(&[0x07, 0x14, 0x21, 0x28]),
        Err(Error::OutOfBounds { .. })
    ));
}

/// The table read back through the model's MM_INDEX/MM_DATA window is
/// the table the model placed 64 KiB below the top of VRAM.
#[test]
fn read_through_mm_window_from_top_of_vram() {
    use barebell::discovery::{TABLE_BYTES, read_from_vram};
    use barebell_model::SimClock;
    use barebell_model::discovery::VramWindow;
    let clock = SimClock::new();
    let (bin, _) = sim::build(&NAVI31);
    // 24 GiB, as a Navi31 board has; the table then sits above 4 GiB, so
    // MM_INDEX_HI must be programmed.
    let w = VramWindow::new(&clock, 24 * 1024, bin.clone());
    let mut out = vec![0u8; TABLE_BYTES];
    let pos = read_from_vram(&w, &clock, 1_000_000, &mut out).unwrap();
    assert_eq!(pos, (24u64 << 30) - (64 << 10));
    assert_eq!(out, bin);
    assert_eq!(w.refusals(), 0);
    let d = Discovery::parse(&out).unwrap();
    expect_map(&d, &NAVI31);
}

#[test]
fn vram_read_errors_are_typed() {
    use barebell::discovery::{ReadError, TABLE_BYTES, read_from_vram};
    use barebell_model::SimClock;
    use barebell_model::discovery::VramWindow;
    let clock = SimClock::new();
    let mut out = vec![0u8; TABLE_BYTES];
    let w = VramWindow::new(&clock, 0, vec![]);
    assert_eq!(
        read_from_vram(&w, &clock, 1_000, &mut out),
        Err(ReadError::NoVramSize)
    );
    let w = VramWindow::new(&clock, 8, vec![]);
    w.unplug();
    assert_eq!(
        read_from_vram(&w, &clock, 1_000, &mut out),
        Err(ReadError::DeviceGone {
            what: "MP0_SMN_C2PMSG_33"
        })
    );
    let mut short = [0u8; 16];
    assert_eq!(
        read_from_vram(&w, &clock, 1_000, &mut short),
        Err(ReadError::BufferTooSmall { len: 16 })
    );
}

/// The absolute boot offsets Linux hard-codes equal NBIO 4.3.0's header
/// offsets placed at the NBIO segment bases of the model's part
/// (Navi21's, from `sienna_cichlid_ip_offset.h`): MM_INDEX/DATA/INDEX_HI
/// in segment 0 (base 0) and RCC_CONFIG_MEMSIZE = 0xD20 + 0xC3 = 0xDE3.
#[test]
fn boot_offsets_agree_with_nbio_header_at_navi21_bases() {
    use barebell::discovery::boot;
    use barebell::regs::nbio_4_3_0 as nbio;
    let (bin, _) = sim::build(&NAVI31);
    let d = Discovery::parse(&bin).unwrap();
    let b = d.ip(hw_id::NBIF, 0).unwrap().bases;
    for (abs, r) in [
        (boot::MM_INDEX, nbio::BIF_BX_PF0_MM_INDEX),
        (boot::MM_DATA, nbio::BIF_BX_PF0_MM_DATA),
        (boot::MM_INDEX_HI, nbio::BIF_BX_PF0_MM_INDEX_HI),
        (
            boot::RCC_CONFIG_MEMSIZE,
            nbio::RCC_DEV0_EPF0_RCC_CONFIG_MEMSIZE,
        ),
    ] {
        assert_eq!(
            r.byte_offset(&b),
            Some(abs.offset as usize * 4),
            "{}",
            r.name
        );
    }
}

use barebell_tests::linux_amd_source as linux_text;

/// A trace names each discovered IP by its `*_HWID` in Linux's
/// `soc15_hw_ip.h` (NBIF as NBIO, UVD as its alias VCN); an id it does not
/// know is a plain "IP".
#[test]
fn trace_names_follow_the_linux_hw_ids() {
    use barebell_bringup::nbio::ip_name;
    let h = linux_text("include/soc15_hw_ip.h");
    let id = |name: &str| -> u16 {
        let def = format!("{name}_HWID");
        h.lines()
            .find_map(|l| {
                let mut w = l.split_whitespace();
                (w.next() == Some("#define") && w.next() == Some(def.as_str()))
                    .then(|| w.next()?.parse().ok())
                    .flatten()
            })
            .unwrap_or_else(|| panic!("no {def} in soc15_hw_ip.h"))
    };
    for (hwid, label) in [
        ("GC", "GC"),
        ("MP0", "MP0"),
        ("MP1", "MP1"),
        ("MMHUB", "MMHUB"),
        ("NBIF", "NBIO"),
        ("OSSSYS", "OSSSYS"),
        ("HDP", "HDP"),
        ("SDMA0", "SDMA0"),
        ("ATHUB", "ATHUB"),
        ("UMC", "UMC"),
        ("SMUIO", "SMUIO"),
        ("THM", "THM"),
        ("UVD", "VCN"),
        ("DF", "DF"),
    ] {
        assert_eq!(ip_name(id(hwid)), label, "{hwid}_HWID");
    }
    assert_eq!(ip_name(id("DCI")), "IP");
}

/// Compute partition modes by `enum amdgpu_gfx_partition` (`amdgpu_gfx.h`).
#[test]
fn partition_modes_are_named_as_linux_numbers_them() {
    let h = linux_text("amdgpu/amdgpu_gfx.h");
    for (mode, short) in [
        ("SPX", "SPX"),
        ("DPX", "DPX"),
        ("TPX", "TPX"),
        ("QPX", "QPX"),
        ("CPX", "CPX"),
    ] {
        let key = format!("AMDGPU_{mode}_PARTITION_MODE =");
        let n: u32 = h
            .lines()
            .find_map(|l| l.trim().strip_prefix(key.as_str()))
            .and_then(|v| v.trim().trim_end_matches(',').parse().ok())
            .unwrap_or_else(|| panic!("no {key} in amdgpu_gfx.h"));
        let name = barebell::nbio::partition_name(n);
        assert!(name.starts_with(short), "mode {n}: {name}");
    }
    assert_eq!(barebell::nbio::partition_name(5), "an unknown mode");
}

/// `amdgpu_discovery_read_binary_from_mem()` polls the IFWI flag
/// (`mmMP0_SMN_C2PMSG_33`) before it reads `mmRCC_CONFIG_MEMSIZE`. On a
/// device that has fallen off the bus the first of them already reads
/// all-ones, so that is the register the error names.
#[test]
fn a_device_gone_at_discovery_is_named_at_the_ifwi_flag() {
    use barebell_bringup::Quiet;
    use barebell_model::parts;
    let src = linux_text("amdgpu/amdgpu_discovery.c");
    let ifwi = src.find("RREG32(mmMP0_SMN_C2PMSG_33)").unwrap();
    let memsize = src.find("RREG32(mmRCC_CONFIG_MEMSIZE)").unwrap();
    assert!(ifwi < memsize, "Linux reads the IFWI flag first");
    for part in [parts::navi31(), parts::mi300x()] {
        let gpu = barebell_tests::virtual_gpu(part, 1);
        gpu.fall_off_bus();
        let text = barebell_bringup::discovery::run(&gpu, &Quiet)
            .unwrap_err()
            .to_string();
        assert!(text.contains("MP0_SMN_C2PMSG_33"), "{text}");
        assert!(!text.contains("MEMSIZE"), "{text}");
    }
}
