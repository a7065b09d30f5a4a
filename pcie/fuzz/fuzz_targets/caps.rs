//! Arbitrary bytes as a config space: the capability walks must end,
//! stay in range, never revisit an offset, and nothing may panic: not
//! the typed views, not BAR decode, not BAR sizing or a ReBAR resize on a
//! writable copy. The bytes are also parsed as an ACPI MCFG table.
#![no_main]

use barebell_pcie::caps::{self, aer, dsn, express, msi, msix, pm, rebar, vendor};
use barebell_pcie::config::ConfigSpace;
use barebell_pcie::mem::{ConfigArray, ConfigBytes};
use barebell_pcie::{bar, config, ecam};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let cfg = ConfigBytes::new(data);
    let mut seen = std::collections::BTreeSet::new();
    let (mut std_n, mut ext_n) = (0usize, 0usize);
    for c in caps::all(&cfg) {
        assert_eq!(c.offset % 4, 0);
        if c.extended {
            assert!((0x100..=0xffc).contains(&c.offset));
            ext_n += 1;
        } else {
            assert!((0x40..=0xfc).contains(&c.offset));
            assert!(c.id <= 0xfe);
            std_n += 1;
        }
        assert!(seen.insert((c.extended, c.offset)), "offset visited twice");
        let _ = c.name();
        let _ = vendor::VendorSpecific::read(&cfg, &c);
    }
    assert!(std_n <= 48 && ext_n <= 960);

    let _ = bar::decode(&cfg);
    let _ = config::bridge_buses(&cfg);
    if let Some(p) = pm::PowerManagement::find(&cfg) {
        let _ = (p.state(&cfg), p.version(&cfg));
    }
    if let Some(m) = msi::Msi::find(&cfg) {
        let _ = (m.address(&cfg), m.data(&cfg));
    }
    if let Some(m) = msix::Msix::find(&cfg) {
        let _ = (m.table_size(&cfg), m.table(&cfg), m.pba(&cfg));
    }
    if let Some(e) = express::Express::find(&cfg) {
        let _ = (e.link_capabilities(&cfg), e.link_status(&cfg), e.device_capabilities(&cfg));
    }
    if let Some(a) = aer::Aer::find(&cfg) {
        let _ = a.status(&cfg);
    }
    let _ = dsn::serial_number(&cfg);
    // The same bytes as an ACPI MCFG table.
    for e in ecam::mcfg_entries(data) {
        let _ = e.len();
    }

    // Writable copy: the operations that write must not panic either.
    let mut w = ConfigArray::from_bytes(data);
    for i in 0..6 {
        let _ = bar::size(&mut w, i);
    }
    if let Some(r) = rebar::ResizableBar::find(&w) {
        let entries: Vec<_> = r.entries(&w).collect();
        for e in entries {
            let _ = r.resize(&mut w, e.bar_index, data.first().copied().unwrap_or(0) & 0x1f);
        }
    }
    if let Some(e) = express::Express::find(&w) {
        let _ = e.initiate_flr(&mut w);
    }
    let _ = w.vendor_id();
});
