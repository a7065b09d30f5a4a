//! The PCI listing: ECAM from MCFG (or the q35 default, loudly), a walk
//! through bridges with `barebell_pcie::enumerate`, every BAR sized with
//! `barebell_pcie::bar::size` and each memory BAR identity-mapped with the
//! caching it needs (prefetchable: WC, otherwise UC).
//!
//! Output lines start with `UK PCI` and are parsed by `cargo xtask qemu`,
//! which compares them with what QEMU's own monitor reports.

use crate::paging::{self, Cache};
use crate::println;
use alloc::vec::Vec;
use barebell_pcie::bar::{self, Bar, BarKind};
use barebell_pcie::ecam::{Ecam, Function, McfgEntry};
use barebell_pcie::enumerate::{self, Found};

/// Where QEMU's q35 puts ECAM (`MCH_HOST_BRIDGE_PCIEXBAR_DEFAULT` in
/// `include/hw/pci-host/q35.h`), used only when ACPI has no MCFG.
pub const Q35_ECAM_FALLBACK: u64 = 0xb000_0000;

#[derive(Debug, Clone, Copy)]
pub struct SizedBar {
    pub bar: Bar,
    pub size: u64,
    pub cache: Option<Cache>,
}

#[derive(Debug, Clone)]
pub struct Device {
    pub found: Found,
    pub bars: Vec<SizedBar>,
}

fn kind_name(k: BarKind) -> &'static str {
    match k {
        BarKind::Io => "io",
        BarKind::Mem32 => "mem32",
        BarKind::Mem64 => "mem64",
    }
}

/// Maps the ECAM window uncached and wraps it.
pub fn ecam(window: McfgEntry) -> Result<Ecam, &'static str> {
    match paging::map(window.base, window.len(), Cache::Uncached) {
        Ok(pages) => println!(
            "UK MAP ecam base={:#x} len={:#x} cache=UC pages={pages}",
            window.base,
            window.len()
        ),
        Err(e) => {
            println!("UK ERROR mapping ECAM: {e}");
            return Err("ECAM map");
        }
    }
    // SAFETY: the window was just identity-mapped uncached for its full
    // length and stays mapped for the life of the program; it is the ECAM
    // window MCFG (or q35's fixed default) names.
    unsafe {
        Ecam::new(
            window.base as usize as *mut u8,
            window.segment,
            window.first_bus,
            window.last_bus,
        )
    }
    .map_err(|e| {
        println!("UK ERROR ECAM window refused: {e}");
        "ECAM window"
    })
}

/// Enumerates, sizes and maps; prints the listing.
pub fn list(ecam: &Ecam, segment: u16) -> Vec<Device> {
    let mut found = Vec::new();
    let stats = enumerate::scan(ecam, segment, &mut |f| found.push(*f));
    let mut out = Vec::new();
    for f in found {
        let (c, s, p) = f.class;
        let secondary = f.secondary.map_or(-1, i32::from);
        println!(
            "UK PCI dev {:02x}:{:02x}.{} vendor={:04x} device={:04x} class={c:02x}{s:02x}{p:02x} header={:?} secondary={secondary}",
            f.bdf.bus, f.bdf.device, f.bdf.function, f.vendor, f.device, f.header
        );
        let mut func = Function::new(ecam, f.bdf);
        let mut bars = Vec::new();
        let count = bar::count(&func);
        let mut i = 0;
        while i < count {
            match bar::size(&mut func, i) {
                Ok(Some((b, size))) => {
                    let cache = match b.kind {
                        BarKind::Io => None,
                        _ if b.address == 0 => None,
                        _ if b.prefetchable => Some(Cache::WriteCombining),
                        _ => Some(Cache::Uncached),
                    };
                    if let Some(Err(e)) = cache.map(|c| paging::map(b.address, size, c)) {
                        println!("UK ERROR mapping BAR {i} of {:?}: {e}", f.bdf);
                    }
                    println!(
                        "UK PCI bar {:02x}:{:02x}.{} index={} kind={} prefetch={} address={:#x} size={:#x} map={} pat={}",
                        f.bdf.bus,
                        f.bdf.device,
                        f.bdf.function,
                        b.index,
                        kind_name(b.kind),
                        u8::from(b.prefetchable),
                        b.address,
                        size,
                        cache.map_or("-", Cache::name),
                        cache.map_or(0, Cache::pat_index)
                    );
                    i += if b.kind == BarKind::Mem64 { 2 } else { 1 };
                    bars.push(SizedBar {
                        bar: b,
                        size,
                        cache,
                    });
                }
                Ok(None) => i += 1,
                Err(e) => {
                    println!("UK ERROR sizing BAR {i} of {:?}: {e}", f.bdf);
                    i += 1;
                }
            }
        }
        out.push(Device { found: f, bars });
    }
    probe_high(&out);
    println!(
        "UK PCI done functions={} buses={} skipped_bridges={}",
        stats.functions, stats.buses, stats.skipped_bridges
    );
    out
}

/// Reads the first dword of every mapped prefetchable BAR above 4 GiB, to
/// show the page tables really reach it (a missing mapping would fault).
/// Only prefetchable BARs: by definition reading them has no side effects.
fn probe_high(devices: &[Device]) {
    for d in devices {
        for b in &d.bars {
            if b.bar.address >= 1 << 32 && b.bar.prefetchable && b.cache.is_some() {
                // SAFETY: `list` identity-mapped this BAR (WC) for its full
                // size; a prefetchable BAR tolerates reads.
                let v = unsafe { (b.bar.address as usize as *const u32).read_volatile() };
                println!(
                    "UK MAP above-4G {:?} BAR{} at {:#x} read {v:#x} pte={:#x}",
                    d.found.bdf,
                    b.bar.index,
                    b.bar.address,
                    paging::leaf_entry(b.bar.address).unwrap_or(0)
                );
            }
        }
    }
}
