//! Bare-metal enumeration over a simulated ECAM window: plain memory laid
//! out as the PCIe spec lays ECAM out, filled by hand, then walked by the
//! same code the unikernel runs.

use barebell_pcie::Bdf;
use barebell_pcie::config::{ConfigSpace, HeaderType};
use barebell_pcie::ecam::{ConfigAccess, Ecam, EcamError, Function};
use barebell_pcie::enumerate;

const MIB: usize = 1 << 20;

/// A 1 MiB-aligned, all-ones (nothing answers) window of `buses` buses.
struct Window {
    _storage: Vec<u64>,
    base: *mut u8,
    buses: usize,
}

impl Window {
    fn new(buses: usize) -> Self {
        let mut storage = vec![u64::MAX; (buses + 1) * MIB / 8];
        let raw = storage.as_mut_ptr() as usize;
        let base = raw.next_multiple_of(MIB) as *mut u8;
        Window {
            _storage: storage,
            base,
            buses,
        }
    }

    /// Writes a dword at the spec's ECAM address for (bus, dev, fn, reg).
    fn poke(&mut self, bus: u8, dev: u8, func: u8, reg: usize, v: u32) {
        let off = (bus as usize) << 20 | (dev as usize) << 15 | (func as usize) << 12 | reg;
        assert!(off + 4 <= self.buses * MIB);
        // SAFETY: in bounds of the aligned window inside `_storage`.
        unsafe { self.base.add(off).cast::<u32>().write_unaligned(v) }
    }

    /// A function: ids, class, header type byte, and (for bridges) bus
    /// numbers.
    fn function(&mut self, b: u8, d: u8, f: u8, ids: u32, class: u32, htype: u8) {
        for reg in (0..4096).step_by(4) {
            self.poke(b, d, f, reg, 0);
        }
        self.poke(b, d, f, 0x00, ids);
        self.poke(b, d, f, 0x08, class);
        self.poke(b, d, f, 0x0c, u32::from(htype) << 16);
    }

    fn bridge(&mut self, b: u8, d: u8, f: u8, secondary: u8, subordinate: u8) {
        self.function(b, d, f, 0x1478_1002, 0x0604_0000, 0x01);
        self.poke(
            b,
            d,
            f,
            0x18,
            u32::from(subordinate) << 16 | u32::from(secondary) << 8 | u32::from(b),
        );
    }
}

#[test]
fn walks_bridges_secondary_buses_and_functions() {
    let mut w = Window::new(4);
    w.function(0, 0, 0, 0x0d57_8086, 0x0600_0000, 0x00); // host bridge
    w.bridge(0, 1, 0, 1, 2); // root port to bus 1
    w.function(0, 2, 0, 0x1045_1af4, 0xff00_0000, 0x80); // multi-function
    w.function(0, 2, 1, 0x1042_1af4, 0x0180_0000, 0x00);
    w.function(0, 2, 3, 0x1041_1af4, 0x0200_0000, 0x00); // fn 2 absent
    w.function(0, 3, 0, 0x1044_1af4, 0xff00_0000, 0x00); // single-function
    w.function(0, 3, 1, 0xdead_beef, 0xff00_0000, 0x00); // must be ignored
    w.bridge(0, 4, 0, 0, 0); // misprogrammed: secondary bus 0
    w.bridge(1, 0, 0, 2, 2); // switch upstream port to bus 2
    w.function(2, 0, 0, 0x744c_1002, 0x0300_00c8, 0x80); // GPU
    w.function(2, 0, 1, 0xab30_1002, 0x0403_0000, 0x00); // its audio
    w.function(3, 0, 0, 0x1234_5678, 0x0200_0000, 0x00); // behind no bridge

    // SAFETY: the window is 4 MiB of live, aligned memory owned by `w`.
    let ecam = unsafe { Ecam::new(w.base, 0, 0, 3) }.unwrap();
    let mut seen = Vec::new();
    let stats = enumerate::scan(&ecam, 0, &mut |f| {
        seen.push((f.bdf.to_string(), f.vendor, f.device, f.header, f.secondary))
    });
    let expect: Vec<(String, u16, u16, HeaderType, Option<u8>)> = vec![
        (
            "0000:00:00.0".into(),
            0x8086,
            0x0d57,
            HeaderType::Normal,
            None,
        ),
        (
            "0000:00:01.0".into(),
            0x1002,
            0x1478,
            HeaderType::Bridge,
            Some(1),
        ),
        (
            "0000:01:00.0".into(),
            0x1002,
            0x1478,
            HeaderType::Bridge,
            Some(2),
        ),
        (
            "0000:02:00.0".into(),
            0x1002,
            0x744c,
            HeaderType::Normal,
            None,
        ),
        (
            "0000:02:00.1".into(),
            0x1002,
            0xab30,
            HeaderType::Normal,
            None,
        ),
        (
            "0000:00:02.0".into(),
            0x1af4,
            0x1045,
            HeaderType::Normal,
            None,
        ),
        (
            "0000:00:02.1".into(),
            0x1af4,
            0x1042,
            HeaderType::Normal,
            None,
        ),
        (
            "0000:00:02.3".into(),
            0x1af4,
            0x1041,
            HeaderType::Normal,
            None,
        ),
        (
            "0000:00:03.0".into(),
            0x1af4,
            0x1044,
            HeaderType::Normal,
            None,
        ),
        (
            "0000:00:04.0".into(),
            0x1002,
            0x1478,
            HeaderType::Bridge,
            None,
        ),
    ];
    assert_eq!(seen, expect);
    assert_eq!(stats.functions, 10);
    assert_eq!(stats.buses, 3);
    assert_eq!(stats.skipped_bridges, 1);

    // The GPU's config space through ECAM, 8/16/32-bit, and a write.
    let mut gpu = Function::new(&ecam, Bdf::new(0, 2, 0, 0));
    assert_eq!(gpu.size(), 4096);
    assert_eq!(gpu.class(), (0x03, 0x00, 0x00));
    assert_eq!(gpu.read8(0x08), 0xc8);
    gpu.write16(0x04, 0x0006);
    assert_eq!(gpu.read32(0x04), 0x0000_0006);
    // Outside the window and out-of-range functions read all-ones.
    assert_eq!(ecam.read32(Bdf::new(0, 4, 0, 0), 0), u32::MAX);
    assert_eq!(ecam.read32(Bdf::new(1, 2, 0, 0), 0), u32::MAX);
    assert_eq!(ecam.read32(Bdf::new(0, 2, 0, 0), 4096), u32::MAX);
    assert_eq!(
        ecam.offset_of(Bdf::new(0, 2, 0x1f, 7), 0xffc),
        Some(0x2f_fffc)
    );
}

#[test]
fn a_bridge_loop_terminates() {
    let mut w = Window::new(2);
    w.bridge(0, 0, 0, 1, 1);
    w.bridge(1, 0, 0, 1, 1); // secondary == its own bus
    w.bridge(1, 1, 0, 0, 0); // points back to bus 0
    // SAFETY: as above.
    let ecam = unsafe { Ecam::new(w.base, 0, 0, 1) }.unwrap();
    let mut n = 0;
    let stats = enumerate::scan(&ecam, 0, &mut |_| n += 1);
    assert_eq!((n, stats.buses, stats.skipped_bridges), (3, 2, 2));
}

#[test]
fn rejects_bad_windows() {
    let mut w = Window::new(1);
    // SAFETY: never dereferenced; new() fails first.
    let e = unsafe { Ecam::new(w.base.wrapping_add(4096), 0, 0, 0) }.unwrap_err();
    assert_eq!(
        e,
        EcamError::Misaligned {
            base: w.base as usize + 4096
        }
    );
    // SAFETY: as above.
    let e = unsafe { Ecam::new(w.base, 0, 3, 2) }.unwrap_err();
    assert_eq!(
        e,
        EcamError::BusRange {
            first_bus: 3,
            last_bus: 2
        }
    );
    w.poke(0, 0, 0, 0, 0);
}
