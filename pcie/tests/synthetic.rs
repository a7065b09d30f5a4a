//! Edge cases on hand-built config spaces. Every expected value below is
//! written from the PCI/PCIe register layout, not produced by the code
//! under test.

use barebell_pcie::bar::{self, BarError, BarKind};
use barebell_pcie::caps::{self, Capability};
use barebell_pcie::config::{self, ConfigSpace, HeaderType};
use barebell_pcie::mem::{ConfigArray, ConfigBytes};

fn endpoint(size: usize) -> ConfigArray {
    let mut c = ConfigArray::new(size);
    c.write32(0x00, 0x744c_1002);
    c.write32(0x08, 0x0300_00c8);
    c
}

fn offsets(it: impl Iterator<Item = Capability>) -> Vec<(u16, u16)> {
    it.map(|c| (c.offset, c.id)).collect()
}

#[test]
fn no_cap_list_bit_means_no_standard_caps() {
    let mut c = endpoint(256);
    c.write8(0x34, 0x40);
    c.write32(0x40, 0x0000_0001); // PM, next 0
    assert_eq!(caps::standard(&c).count(), 0);
    c.write16(0x06, 0x0010);
    assert_eq!(offsets(caps::standard(&c)), vec![(0x40, 1)]);
}

#[test]
fn a_cycle_ends_the_walk_when_it_closes() {
    let mut c = endpoint(256);
    c.write16(0x06, 0x0010);
    c.write8(0x34, 0x40);
    c.write16(0x40, 0x5001); // PM -> 0x50
    c.write16(0x50, 0x6005); // MSI -> 0x60
    c.write16(0x60, 0x4011); // MSI-X -> back to 0x40
    assert_eq!(
        offsets(caps::standard(&c)),
        vec![(0x40, 0x01), (0x50, 0x05), (0x60, 0x11)]
    );
    // A capability pointing at itself.
    c.write16(0x40, 0x4009);
    assert_eq!(offsets(caps::standard(&c)), vec![(0x40, 0x09)]);
}

#[test]
fn null_caps_are_reported_and_followed() {
    let mut c = endpoint(256);
    c.write16(0x06, 0x0010);
    c.write8(0x34, 0x48);
    c.write16(0x48, 0x5800); // Null -> 0x58
    c.write16(0x58, 0x0010); // PCIe, end
    let found: Vec<_> = caps::standard(&c).map(|c| (c.offset, c.name())).collect();
    assert_eq!(found, vec![(0x48, "Null"), (0x58, "PCI Express")]);
}

#[test]
fn out_of_range_and_broken_pointers_stop_the_walk() {
    let mut c = endpoint(256);
    c.write16(0x06, 0x0010);
    // Into the header: not a capability (Linux stops below 0x40).
    c.write8(0x34, 0x10);
    assert_eq!(caps::standard(&c).count(), 0);
    // Low two bits are reserved and ignored: 0x43 means 0x40.
    c.write8(0x34, 0x43);
    c.write16(0x40, 0x0001);
    assert_eq!(offsets(caps::standard(&c)), vec![(0x40, 1)]);
    // id 0xff: nothing answered there.
    c.write16(0x40, 0x50ff);
    assert_eq!(caps::standard(&c).count(), 0);
}

#[test]
fn extended_caps_walk_and_stop() {
    let mut c = endpoint(4096);
    // AER v1 at 0x100 -> 0x150, Null v0 at 0x150 -> 0x200, ReBAR v1 end.
    c.write32(0x100, 0x1501_0001);
    c.write32(0x150, 0x2000_0000);
    c.write32(0x200, 0x0001_0015);
    let found: Vec<_> = caps::extended(&c)
        .map(|c| (c.offset, c.id, c.version))
        .collect();
    assert_eq!(found, vec![(0x100, 1, 1), (0x150, 0, 0), (0x200, 0x15, 1)]);
    // Cycle back to 0x100.
    c.write32(0x200, 0x1001_0015);
    assert_eq!(caps::extended(&c).count(), 3);
    // A next pointer below 0x100 ends it.
    c.write32(0x200, 0x0801_0015);
    assert_eq!(caps::extended(&c).count(), 3);
    // An all-zero header at 0x100 means no extended list at all.
    c.write32(0x100, 0);
    assert_eq!(caps::extended(&c).count(), 0);
    // A 256-byte space has no extended list even if bytes exist.
    let small = ConfigBytes::new(&[0u8; 300]);
    assert_eq!(caps::extended(&small).count(), 0);
}

#[test]
fn a_64_bit_bar_above_4_gib() {
    let mut c = endpoint(256);
    // BAR0: 64-bit prefetchable memory at 0x38_0000_0000 (as a
    // Navi-class VRAM BAR sits), BAR2: 64-bit non-prefetchable at
    // 0x4000_0000_0000, BAR4: I/O at 0xe000, BAR5: 32-bit at 0xfcd0_0000.
    c.write32(0x10, 0x0000_000c);
    c.write32(0x14, 0x0000_0038);
    c.write32(0x18, 0x0000_0004);
    c.write32(0x1c, 0x0000_4000);
    c.write32(0x20, 0x0000_e001);
    c.write32(0x24, 0xfcd0_0000);
    let bars: Vec<_> = bar::decode(&c).iter().copied().collect();
    assert_eq!(bars.len(), 4);
    assert_eq!(bars[0].index, 0);
    assert_eq!(bars[0].kind, BarKind::Mem64);
    assert!(bars[0].prefetchable);
    assert_eq!(bars[0].address, 0x38_0000_0000);
    assert_eq!(bars[0].bits(), 64);
    assert_eq!(
        (bars[1].index, bars[1].address, bars[1].prefetchable),
        (2, 0x4000_0000_0000, false)
    );
    assert_eq!(
        (bars[2].index, bars[2].kind, bars[2].address),
        (4, BarKind::Io, 0xe000)
    );
    assert_eq!(
        (bars[3].index, bars[3].kind, bars[3].address),
        (5, BarKind::Mem32, 0xfcd0_0000)
    );
}

#[test]
fn a_bridge_header() {
    let mut c = ConfigArray::new(256);
    c.write32(0x00, 0x1478_1002); // an AMD upstream switch port
    c.write32(0x08, 0x0604_0000);
    c.write8(0x0e, 0x01);
    c.write32(0x18, 0x0005_0302); // primary 2, secondary 3, subordinate 5
    c.write32(0x10, 0xfce0_0000); // BAR0 32-bit
    c.write32(0x24, 0xdead_0000); // would be BAR5 on a type 0 header
    c.write16(0x06, 0x0010);
    c.write8(0x34, 0x50);
    c.write16(0x50, 0x0010);
    assert_eq!(c.header_type(), HeaderType::Bridge);
    let b = config::bridge_buses(&c).unwrap();
    assert_eq!((b.primary, b.secondary, b.subordinate), (2, 3, 5));
    let bars: Vec<_> = bar::decode(&c).iter().map(|b| b.index).collect();
    assert_eq!(bars, vec![0], "a bridge has two BAR registers only");
    assert_eq!(caps::find(&c, caps::CAP_ID_EXP), Some(0x50));
}

/// A config space whose BARs behave like hardware: only the bits above
/// the BAR's size are writable, the flag bits are read-only. It records
/// COMMAND at every BAR write so the test can see decode was off.
struct Device {
    cfg: ConfigArray,
    /// (register, read-only flag bits, size) per BAR dword; a 64-bit
    /// BAR's upper dword has size 0 and uses `upper_of`.
    bars: Vec<(u16, u32, u64)>,
    command_at_bar_write: Vec<u16>,
}

impl Device {
    fn bar_of(&self, reg: u16) -> Option<(u32, u64, bool)> {
        for &(r, flags, size) in &self.bars {
            if r == reg {
                return Some((flags, size, false));
            }
            if flags & 0x6 == 0x4 && r + 4 == reg {
                return Some((0, size, true));
            }
        }
        None
    }
}

impl ConfigSpace for Device {
    fn size(&self) -> usize {
        self.cfg.size()
    }
    fn read32(&self, o: u16) -> u32 {
        self.cfg.read32(o)
    }
    fn write32(&mut self, o: u16, v: u32) {
        match self.bar_of(o) {
            Some((flags, size, upper)) => {
                self.command_at_bar_write.push(self.cfg.read16(0x04));
                let mask = !(size - 1);
                let stored = if upper {
                    v & (mask >> 32) as u32
                } else {
                    (v & mask as u32) | flags
                };
                self.cfg.write32(o, stored);
            }
            // Unimplemented BAR registers are hardwired to zero.
            None if (0x10..=0x24).contains(&o) => {}
            None => self.cfg.write32(o, v),
        }
    }
    fn write16(&mut self, o: u16, v: u16) {
        self.cfg.write16(o, v)
    }
    fn write8(&mut self, o: u16, v: u8) {
        self.cfg.write8(o, v)
    }
}

#[test]
fn bar_sizing_disables_decode_and_restores_everything() {
    let mut cfg = endpoint(256);
    cfg.write16(0x04, 0x0007); // IO | MEM | MASTER
    cfg.write32(0x10, 0x0000_000c); // 64-bit prefetchable
    cfg.write32(0x14, 0x0000_0038); // at 0x38_0000_0000
    cfg.write32(0x18, 0xfe00_0000); // 32-bit, 256 KiB at 0xfe00_0000
    cfg.write32(0x20, 0x0000_e001); // I/O, 256 bytes
    let mut d = Device {
        cfg,
        bars: vec![
            (0x10, 0xc, 16 << 30), // 16 GiB VRAM BAR
            (0x18, 0x0, 256 << 10),
            (0x20, 0x1, 256),
        ],
        command_at_bar_write: vec![],
    };
    let before: Vec<u32> = (0..64).map(|i| d.read32(i * 4)).collect();

    let (b, size) = bar::size(&mut d, 0).unwrap().unwrap();
    assert_eq!(size, 16 << 30);
    assert_eq!(
        (b.kind, b.address, b.prefetchable),
        (BarKind::Mem64, 0x38_0000_0000, true)
    );
    let (b, size) = bar::size(&mut d, 2).unwrap().unwrap();
    assert_eq!((b.kind, size), (BarKind::Mem32, 256 << 10));
    let (b, size) = bar::size(&mut d, 4).unwrap().unwrap();
    assert_eq!((b.kind, b.address, size), (BarKind::Io, 0xe000, 256));
    // BAR3 and BAR5 are unimplemented: they read back zero.
    assert_eq!(bar::size(&mut d, 3), Ok(None));
    assert_eq!(bar::size(&mut d, 1), Err(BarError::UpperHalf { index: 1 }));
    assert_eq!(
        bar::size(&mut d, 6),
        Err(BarError::IndexOutOfRange { index: 6, count: 6 })
    );

    assert!(!d.command_at_bar_write.is_empty());
    for cmd in &d.command_at_bar_write {
        assert_eq!(
            cmd & 0x3,
            0,
            "decode must be off while a BAR holds all-ones"
        );
        assert_eq!(cmd & 0x4, 0x4, "bus mastering is left alone");
    }
    let after: Vec<u32> = (0..64).map(|i| d.read32(i * 4)).collect();
    assert_eq!(before, after, "config space must be restored");
}

#[test]
fn resizable_bar_reads_sizes_and_resizes() {
    let mut c = endpoint(4096);
    c.write16(0x04, 0x0006);
    // ReBAR at 0x200, one entry: BAR0 supports 256 MiB..=16 GiB
    // (bits 8..=14 of the size field, i.e. register bits 12..=18), is at
    // 256 MiB (code 8), NBARs = 1.
    c.write32(0x100, 0x2000_0001); // AER -> 0x200
    c.write32(0x200, 0x0001_0015);
    c.write32(0x204, 0x0007_f000);
    c.write32(0x208, (1 << 5) | (8 << 8));
    let r = caps::rebar::ResizableBar::find(&c).unwrap();
    assert_eq!(r.offset, 0x200);
    let e = r.entry(&c, 0).unwrap();
    assert_eq!(e.bar_index, 0);
    assert_eq!(e.current_bytes(), 256 << 20);
    assert!(e.supports(14) && !e.supports(15) && !e.supports(7));
    assert_eq!(
        r.resize(&mut c, 0, 15),
        Err(caps::rebar::RebarError::Unsupported {
            bar: 0,
            code: 15,
            supported: 0x7f00
        })
    );
    assert_eq!(
        r.resize(&mut c, 2, 8),
        Err(caps::rebar::RebarError::NotResizable { bar: 2 })
    );
    r.resize(&mut c, 0, 14).unwrap();
    assert_eq!(c.read32(0x208), (1 << 5) | (14 << 8));
    assert_eq!(c.read16(0x04), 0x0006, "COMMAND restored");
}

#[test]
fn typed_views_read_the_documented_fields() {
    let mut c = endpoint(4096);
    c.write16(0x06, 0x0010);
    c.write8(0x34, 0x48);
    // PM v3 at 0x48, in D3hot.
    c.write32(0x48, 0x0003_5001);
    c.write32(0x4c, 0x0000_0003);
    // MSI 64-bit at 0x50, enabled, 4 vectors capable.
    c.write32(0x50, 0x0085_6405);
    c.write32(0x54, 0xfee0_0000);
    c.write32(0x58, 0x0000_0001);
    c.write32(0x5c, 0x0000_4021);
    // PCIe v2 endpoint at 0x64: DevCap FLR + MPS 512; LnkCap 16 GT/s x16;
    // LnkSta 8 GT/s x8.
    c.write32(0x64, 0x0002_a010);
    c.write32(0x68, 0x1000_0002);
    c.write32(0x70, 0x0000_0104);
    c.write32(0x74, 0x0083_0000);
    // MSI-X at 0xa0: 8 entries, table BAR5 + 0x2000, PBA BAR5 + 0x3000.
    c.write32(0xa0, 0x8007_0011);
    c.write32(0xa4, 0x0000_2005);
    c.write32(0xa8, 0x0000_3005);
    // Vendor cap at 0xb0, 0x18 bytes long.
    c.write32(0xb0, 0x0018_0009);
    c.write8(0x79, 0xb0);
    c.write8(0x65, 0xa0);
    c.write8(0xa1, 0xb0);
    // DSN at 0x100 -> 0x110; VSEC at 0x110 (id 0x23, rev 1, len 0x18).
    c.write32(0x100, 0x1101_0003);
    c.write32(0x104, 0x89ab_cdef);
    c.write32(0x108, 0x0123_4567);
    c.write32(0x110, 0x0001_000b);
    c.write32(0x114, 0x0181_0023);

    let pm = caps::pm::PowerManagement::find(&c).unwrap();
    assert_eq!(pm.version(&c), 3);
    assert_eq!(pm.state(&c), caps::pm::PowerState::D3Hot);
    pm.set_state(&mut c, caps::pm::PowerState::D0);
    assert_eq!(c.read16(0x4c), 0);

    let msi = caps::msi::Msi::find(&c).unwrap();
    let ctl = msi.control(&c);
    assert!(ctl.enable() && ctl.address_64());
    assert_eq!(ctl.multiple_capable(), 2);
    assert_eq!(msi.address(&c), 0x1_fee0_0000);
    assert_eq!(msi.data(&c), 0x4021);

    let e = caps::express::Express::find(&c).unwrap();
    assert_eq!(e.flags(&c).version(), 2);
    assert!(e.device_capabilities(&c).flr());
    assert_eq!(e.device_capabilities(&c).max_payload(), 2);
    assert_eq!(e.link_capabilities(&c).max_speed(), 4);
    assert_eq!(e.link_capabilities(&c).max_width(), 16);
    assert_eq!(e.link_status(&c).speed(), 3);
    assert_eq!(e.link_status(&c).width(), 8);
    assert!(e.initiate_flr(&mut c));
    assert_eq!(c.read16(0x6c), 0x8000);

    let x = caps::msix::Msix::find(&c).unwrap();
    assert_eq!(x.table_size(&c), 8);
    assert!(x.control(&c).enable());
    assert_eq!(
        (x.table(&c).bar, x.table(&c).offset, x.pba(&c).offset),
        (5, 0x2000, 0x3000)
    );

    let all: Vec<_> = caps::all(&c).collect();
    let v = all
        .iter()
        .filter_map(|cap| caps::vendor::VendorSpecific::read(&c, cap))
        .map(|v| (v.offset, v.extended, v.vsec_id, v.length))
        .collect::<Vec<_>>();
    assert_eq!(v, vec![(0xb0, false, 0, 0x18), (0x110, true, 0x23, 0x18)]);
    assert_eq!(caps::dsn::serial_number(&c), Some(0x0123_4567_89ab_cdef));
    assert!(caps::aer::Aer::find(&c).is_none());
}

#[test]
fn aer_clear_writes_back_the_logged_bits() {
    let mut c = endpoint(4096);
    c.write32(0x100, 0x0001_0001);
    c.write32(0x104, 0x0000_4000); // completion timeout
    c.write32(0x110, 0x0000_0001); // receiver error
    let a = caps::aer::Aer::find(&c).unwrap();
    let s = a.clear(&mut c);
    assert_eq!((s.uncorrectable, s.correctable), (0x4000, 0x1));
}

#[test]
fn a_missing_device_reads_all_ones_and_yields_nothing() {
    let gone = ConfigBytes::new(&[0xff; 4096]);
    assert!(!gone.is_present());
    assert_eq!(caps::all(&gone).count(), 0);
    assert_eq!(bar::decode(&gone).iter().count(), 0);
}
