//! barebell as a unikernel: the `no_std` crates booted in a QEMU VM with
//! no operating system.
//!
//! What it does, in order, each step logging `UK ...` lines on COM1 that
//! `cargo xtask qemu` parses:
//! 1. console, IDT, heap, PAT; the memory functions checked against
//!    byte references; the model's DMA region mapped at
//!    `barebell::platform::DMA_HOST_VA`;
//! 2. firmware blobs passed as a PVH module (a newc cpio archive), the
//!    first read with barebell-firmware-if;
//! 3. TSC rate (CPUID leaf 0x15 if reported, else the PIT);
//! 4. ECAM from ACPI (RSDP from the PVH start info → XSDT/RSDT → MCFG),
//!    falling back loudly to q35's 0xb0000000 (also forced by `no-mcfg`
//!    on the command line, which is how CI tests the fallback);
//! 5. the PCI listing through bridges, with every BAR sized and mapped;
//! 6. device choice: an AMD (0x1002) function if one is passed through;
//!    otherwise the built-in model. Bring-up of a real device from the
//!    image is not built, so a 0x1002 device is only reported;
//! 7. MMIO store latency to QEMU's `edu` device;
//! 8. the AQL submit path against the CP model (not bring-up);
//! 9. bring-up on the device model (`barebell_model::VirtualGpu`):
//!    the one bring-up sequence the host CLI runs (`barebell_bringup::run`),
//!    for Navi31 (gfx11) and Navi48 (gfx12), each with the user queue
//!    mapped by MES, directly and by KIQ: discovery, NBIO, GMC, PSP
//!    firmware loading with the archive's real blobs, RLC autoload, MES
//!    start, KIQ and scheduler rings, the queue, a first packet through
//!    it, `queue ready`, unmap; the model's DMA region at the host's
//!    `DMA_HOST_VA` so the memory layout is the host's (see [`bringup`]
//!    and [`devmem`]);
//! 10. if the command line says `hold`, wait for one byte from the host
//!     on COM1 (so the host can query QEMU's monitor while the machine
//!     still exists), then exit through isa-debug-exit.
#![no_std]
#![no_main]

extern crate alloc;

mod acpi;
mod acpi_tables;
mod aql_model;
mod boot;
mod bringup;
mod console;
mod cpio;
mod defmt_log;
mod devmem;
mod exceptions;
mod firmware;
mod heap;
mod mmio_latency;
mod paging;
mod pci;
mod pit;
mod port;
mod rt;
mod serial;
mod start_info;

use barebell::latency::tsc::{self, TscScale};
use barebell_pcie::ecam::{McfgEntry, mcfg_entries};
use rt::Exit;

const MMIO_ITERATIONS: u32 = 10_000;
const AQL_ITERATIONS: u64 = 2_000;

#[unsafe(no_mangle)]
extern "C" fn kmain(start_info_addr: u32) -> ! {
    let boot_tsc = tsc::start();
    console::init();
    defmt_log::init();
    exceptions::init();
    println!("UK boot barebell unikernel (PVH, long mode)");
    let (heap_at, heap_len) = heap::init();
    println!("UK heap at={heap_at:#x} len={heap_len:#x} (linked_list_allocator, spin lock)");
    let (old_pat, new_pat) = paging::init_pat();
    println!("UK PAT old={old_pat:#018x} new={new_pat:#018x} (UC = PCD|PWT, WC = PWT)");
    let ok = match run(start_info_addr, boot_tsc) {
        Ok(()) => {
            defmt::info!("DONE ok");
            println!("UK DONE ok");
            true
        }
        Err(e) => {
            println!("UK DONE failed: {e}");
            false
        }
    };
    rt::exit(if ok { Exit::Success } else { Exit::Failure })
}

fn run(start_info_addr: u32, boot_tsc: u64) -> Result<(), &'static str> {
    check_memory()?;
    let si = read_start_info(start_info_addr)?;
    test_hooks(&si);

    let blobs = firmware::load(si.module)?;

    let (hz, scale) = tsc_rate()?;

    let (window, source) = ecam_window(&si);
    println!("UK ECAM source={source} base={:#x}", window.base);
    let ecam = pci::ecam(window)?;
    let devices = pci::list(&ecam, window.segment);
    defmt::info!(
        "PCI functions={=usize} ecam={=u64:#x}",
        devices.len(),
        window.base
    );

    report_choice(&devices);
    measure_mmio(&devices, scale)?;

    aql_model::run(scale, AQL_ITERATIONS, 1)?;

    bringup::run_all(&blobs, scale)?;

    report_usage(scale, boot_tsc);
    hold(&si, hz)
}

/// Step 1's rest: the memory functions against byte references, and the
/// model's DMA region mapped.
fn check_memory() -> Result<(), &'static str> {
    let cases = rt::check_memory_functions().map_err(|(f, n, shift)| {
        println!("UK ERROR {f} of {n} bytes (shift {shift}) differs from the byte reference");
        "memory functions"
    })?;
    println!("UK MEM memcpy, memmove and memset equal byte references in {cases} cases");
    let frames = devmem::init()?;
    println!(
        "UK DEVMEM DMA region {:#x} bytes at VA {:#x} (frames at PA {frames:#x}, identity alias unmapped); VRAM backing {} MiB",
        barebell::platform::DMA_BYTES,
        barebell::platform::DMA_HOST_VA,
        devmem::VRAM_BYTES >> 20
    );
    Ok(())
}

/// The PVH start info at `start_info_addr`, printed.
fn read_start_info(start_info_addr: u32) -> Result<start_info::StartInfo, &'static str> {
    // SAFETY: this is the value the PVH loader left in %ebx, forwarded
    // unchanged by the boot code; it lies in the first MiB.
    let si = unsafe { start_info::read(start_info_addr) }.map_err(|e| {
        println!("UK ERROR start info: {e:?}");
        "start info"
    })?;
    println!(
        "UK start_info version={} rsdp={:#x} cmdline=\"{}\"",
        si.version,
        si.rsdp.unwrap_or(0),
        si.cmdline
    );
    Ok(si)
}

/// Test hooks for CI: the panic handler and the exception path must
/// print and exit with their own codes.
fn test_hooks(si: &start_info::StartInfo) {
    if si.cmdline.split_whitespace().any(|w| w == "test-panic") {
        panic!("requested by `test-panic` on the command line");
    }
    if si.cmdline.split_whitespace().any(|w| w == "test-exception") {
        // SAFETY: ud2 raises #UD, which the IDT handles by printing and
        // exiting; nothing after it runs.
        unsafe { core::arch::asm!("ud2", options(nomem, nostack)) };
    }
}

/// Step 3: the TSC's rate (CPUID leaf 0x15 if reported, else the PIT)
/// and the scale it gives.
fn tsc_rate() -> Result<(u64, TscScale), &'static str> {
    let feats = tsc::features();
    if !feats.rdtscp {
        // barebell's end-of-interval read is RDTSCP; QEMU's default
        // `qemu64` CPU model lacks it (boot with `-cpu max`).
        return Err("the CPU has no RDTSCP (use -cpu max)");
    }
    let pit_hz = pit::calibrate_tsc_hz();
    let hz = feats
        .cpuid_hz
        .or(pit_hz)
        .ok_or("no TSC frequency (CPUID 0x15 and PIT both failed)")?;
    let scale = TscScale::from_hz(hz).ok_or("absurd TSC frequency")?;
    println!(
        "UK TSC hz={hz} source={} cpuid_hz={:?} pit_hz={pit_hz:?} invariant={} hypervisor={}",
        if feats.cpuid_hz.is_some() {
            "cpuid"
        } else {
            "pit"
        },
        feats.cpuid_hz,
        feats.invariant,
        feats.hypervisor
    );
    Ok((hz, scale))
}

/// Step 4: the ECAM window from ACPI's MCFG, or q35's default when ACPI
/// gives none; and which it was.
fn ecam_window(si: &start_info::StartInfo) -> (McfgEntry, &'static str) {
    mcfg_window(si).unwrap_or_else(|| {
        println!(
            "UK WARNING FALLING BACK to the q35 default ECAM base {:#x}, buses 0..=255: ACPI did not provide one",
            pci::Q35_ECAM_FALLBACK
        );
        (
            McfgEntry {
                base: pci::Q35_ECAM_FALLBACK,
                segment: 0,
                first_bus: 0,
                last_bus: 255,
            },
            "fallback",
        )
    })
}

/// The first segment-0 window of ACPI's MCFG, every entry printed.
fn mcfg_window(si: &start_info::StartInfo) -> Option<(McfgEntry, &'static str)> {
    // `no-mcfg` on the command line skips ACPI, so CI can exercise the
    // fallback path on a machine whose firmware always provides MCFG.
    let skip_acpi = si.cmdline.split_whitespace().any(|w| w == "no-mcfg");
    let acpi = if skip_acpi {
        None
    } else {
        Some(acpi::find_mcfg(si.rsdp))
    };
    match acpi.unwrap_or(Err(acpi_tables::AcpiError::Skipped)) {
        Ok(f) => {
            println!(
                "UK ACPI {} at {:#x}, MCFG at {:#x} ({} bytes)",
                f.root,
                f.root_address,
                f.mcfg_address,
                f.mcfg.len()
            );
            let mut first = None;
            for e in mcfg_entries(f.mcfg) {
                println!(
                    "UK ACPI MCFG base={:#x} segment={} buses={:#x}..={:#x}",
                    e.base, e.segment, e.first_bus, e.last_bus
                );
                if first.is_none() && e.segment == 0 {
                    first = Some(e);
                }
            }
            first.map(|e| (e, "mcfg"))
        }
        Err(e) => {
            println!("UK WARNING no ECAM window from ACPI: {e}");
            None
        }
    }
}

/// Step 6: the device choice, reported.
fn report_choice(devices: &[pci::Device]) {
    match devices.iter().find(|d| d.found.vendor == 0x1002) {
        Some(d) => println!(
            "UK CHOICE AMD function {:?} found; bring-up of a real device is not built, so only the built-in model runs",
            d.found.bdf
        ),
        None => println!("UK CHOICE no 0x1002 function; using the built-in model"),
    }
}

/// Step 7: MMIO store latency to QEMU's `edu` device.
fn measure_mmio(devices: &[pci::Device], scale: TscScale) -> Result<(), &'static str> {
    let edu = devices.iter().find(|d| {
        d.found.vendor == mmio_latency::EDU_VENDOR && d.found.device == mmio_latency::EDU_DEVICE
    });
    match edu.and_then(|d| {
        d.bars
            .iter()
            .find(|b| b.bar.index == 0 && b.cache.is_some())
    }) {
        Some(b) => {
            println!(
                "UK MMIO target edu BAR0 at {:#x} size={:#x} pte={:#x}",
                b.bar.address,
                b.size,
                paging::leaf_entry(b.bar.address).unwrap_or(0)
            );
            // SAFETY: pci::list identity-mapped this BAR uncached (a
            // non-prefetchable memory BAR), and it is edu's BAR0.
            unsafe { mmio_latency::run(b.bar.address as usize as *mut u8, scale, MMIO_ITERATIONS) }
                .map_err(|e| {
                    println!("UK ERROR MMIO: {e}");
                    "MMIO latency"
                })?;
            Ok(())
        }
        None => {
            println!("UK ERROR no edu device with a mapped BAR0 (add -device edu)");
            Err("no MMIO target")
        }
    }
}

/// The heap and page-table use, and the time from boot.
fn report_usage(scale: TscScale, boot_tsc: u64) {
    let (used, free, peak) = heap::usage();
    let (tables, pool) = paging::tables_used();
    println!("UK heap used={used} free={free} peak={peak}; page tables {tables}/{pool}");
    let elapsed = scale.to_ns(tsc::end().wrapping_sub(boot_tsc));
    println!("UK time kmain-to-exit={}us", elapsed / 1000);
}

/// Step 10: with `hold` on the command line, waits (60 s at most) for a
/// byte from the host on COM1.
fn hold(si: &start_info::StartInfo, hz: u64) -> Result<(), &'static str> {
    if si.cmdline.split_whitespace().any(|w| w == "hold") {
        println!("UK HOLD waiting for the host");
        match console::read_byte_within(hz.saturating_mul(60)) {
            Some(_) => println!("UK HOLD released"),
            None => return Err("the host never released the hold (60 s)"),
        }
    }
    Ok(())
}
