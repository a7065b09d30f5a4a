//! The bring-up steps before MES, inside the VM: IP discovery read from
//! the model's VRAM through `MM_INDEX`/`MM_DATA`, PSP firmware loading in
//! Linux order against the PSP model with the real firmware-amd-graphics
//! blobs (handed in through the `-initrd` archive), and the wait for RLC
//! autoload. The same steps as the host's `barebell bringup` (see
//! `cli/src/bringup.rs`), with the same `no_std` runtime code and model.
//!
//! The PSP/RLC model and the MEC/MES model of [`crate::bringup`] are
//! separate objects, as on the host: RLC autoload completing here does not
//! load firmware into the other.
//!
//! The PSP and RLC steps run through a [`TraceBus`] whose sink sends
//! each register access as a defmt frame on COM2 (`TRACE W MP0.<reg>
//! @<offset> = <value>`, between `TRACE <part> begin` and `end` frames),
//! names resolved from the MP0 and GC register modules: the symbolic
//! trace the CLI prints with `--trace`, with no text formatted in the
//! image. 104 accesses on Navi31 and 130 on Navi48 today (the same
//! names, directions and order as the host CLI's `--trace` of these
//! steps; only the DMA addresses differ); the sink stops after
//! [`TRACE_CAP`] so a polling loop that spins cannot flood the port, and
//! the `end` frame says how many were left out.

use crate::firmware;
use crate::println;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use barebell::discovery::{Discovery, TABLE_BYTES, hw_id, read_from_vram};
use barebell::ip::Generation;
use barebell::psp::{self, Image, Psp};
use barebell::bus::trace::{self, Access, NamedSymbols, TraceBus};
use barebell::regs::{Reg, gc_11_0_0, gc_12_0_0, mp_13_0_0, mp_14_0_2};
use barebell_model::discovery::VramWindow;
use barebell_model::psp::rig::{self, Blobs};
use core::cell::Cell;

/// Bound on each simulated-time wait.
const BOUND_NS: u64 = 2_000_000_000;

/// Accesses traced per part; the rest are counted.
const TRACE_CAP: u32 = 512;

/// The MP0 and GC register lists of a generation, for naming accesses.
fn symbols(generation: Generation) -> (&'static [Reg], &'static [Reg]) {
    match generation {
        Generation::Gfx11 => (mp_13_0_0::ALL, gc_11_0_0::ALL),
        Generation::Gfx12 => (mp_14_0_2::ALL, gc_12_0_0::ALL),
    }
}

/// Blobs looked up by name in the archive.
struct Archive<'a>(&'a firmware::Blobs);

impl Blobs for Archive<'_> {
    fn get(&mut self, name: &str) -> Result<&'static [u8], String> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| *b)
            .ok_or_else(|| format!("{name} is not in the -initrd archive"))
    }
}

/// Discovery, PSP and RLC autoload for the part of `generation` (Navi31
/// for gfx11, Navi48 for gfx12).
pub fn run(generation: Generation, blobs: &firmware::Blobs) -> Result<(), &'static str> {
    let (part, vram_mib) = match generation {
        // RX 7900 XTX and RX 9070 XT board sizes, as the host uses.
        Generation::Gfx11 => (rig::navi31(), 24 * 1024),
        Generation::Gfx12 => (rig::navi48(), 16 * 1024),
    };
    let name = part.desc.name;
    let mut r = rig::rig_from(&mut Archive(blobs), &part, |_| {}).map_err(|e| {
        println!("UK ERROR bring-up {name} rig: {e}");
        "building the PSP rig"
    })?;
    let window = VramWindow::new(r.clock, vram_mib, r.table.clone());
    let mut table = vec![0u8; TABLE_BYTES];
    let pos = read_from_vram(&window, r.clock, BOUND_NS, &mut table).map_err(|e| {
        println!("UK ERROR bring-up {name} discovery read: {e:?}");
        "discovery read"
    })?;
    let d = Discovery::parse(&table).map_err(|e| {
        println!("UK ERROR bring-up {name} discovery: {e}");
        "discovery parse"
    })?;
    let mp0 = d.ip(hw_id::MP0, 0).ok_or("no MP0 in discovery")?;
    let gc = d.ip(hw_id::GC, 0).ok_or("no GC in discovery")?;
    println!(
        "UK BRINGUP {name} step discovery: table read at VRAM {pos:#x} ({vram_mib} MiB board); {} IP instances; GC {:?}; MP0 {:?}",
        d.ip_count(),
        gc.version.triple(),
        mp0.version.triple()
    );
    let (mp0_names, gc_names) = symbols(generation);
    let blocks = [("MP0", mp0_names, mp0.bases), ("GC", gc_names, gc.bases)];
    let traced = Cell::new(0u32);
    defmt::info!("TRACE {=str} begin: psp and rlc steps", name);
    let bus = TraceBus::new(r.model, NamedSymbols { blocks: &blocks }, |a: Access| {
        let n = traced.get();
        traced.set(n.saturating_add(1));
        if n < TRACE_CAP {
            trace::defmt_sink(a);
        }
    });
    let bufs = r.bufs.take().ok_or("PSP buffers already taken")?;
    let mut p = Psp::new(&bus, r.host, r.regs, &mp0.bases, bufs)
        .map_err(|e| {
            println!("UK ERROR bring-up {name} psp: {e}");
            "PSP set-up"
        })?
        // The PSP's buffers sit behind the rig's MMHUB VMID0: a command
        // that times out carries the fault the MMHUB latched.
        .with_fault_hub(r.fault_hub());
    let mut images = vec![
        Image {
            fw_type: 0,
            bytes: &[]
        };
        64
    ];
    let n = psp::gfx_images(&r.blobs, &mut images).map_err(|e| {
        println!("UK ERROR bring-up {name} psp images: {e}");
        "PSP images"
    })?;
    let report = psp::load_firmware(
        &mut p,
        r.plan,
        &r.sos,
        Some(r.smu),
        images.get(..n).ok_or("image count")?,
        Some(&mut r.tmr),
    )
    .map_err(|e| {
        println!("UK ERROR bring-up {name} psp load: {e}");
        "PSP firmware load"
    })?;
    println!(
        "UK BRINGUP {name} step psp: {} bootloader components, TMR {:#x} bytes asked by the TOC, {} LOAD_IP_FW, AUTOLOAD_RLC sent",
        report.components, report.tmr_size, report.ip_fw_loads
    );
    p.wait_rlc_autoload(r.gc_regs, &gc.bases).map_err(|e| {
        println!("UK ERROR bring-up {name} rlc: {e}");
        "RLC autoload"
    })?;
    let total = traced.get();
    defmt::info!(
        "TRACE {=str} end: {=u32} accesses, {=u32} not traced",
        name,
        total,
        total.saturating_sub(TRACE_CAP)
    );
    println!("UK BRINGUP {name} trace: {total} register accesses sent as defmt frames");
    let refused = r.model.refusals();
    if !refused.is_empty() {
        println!("UK ERROR bring-up {name}: the PSP model refused {refused:?}");
        return Err("the PSP model refused requests");
    }
    println!(
        "UK BRINGUP {name} step rlc: RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE and CP_STAT idle"
    );
    Ok(())
}
