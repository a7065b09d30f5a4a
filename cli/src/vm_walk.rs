//! `barebell vm walk --vmid N VA`: a VM context's page-table walk as the
//! hub's registers and the tables in memory give it, entry by entry
//! (`barebell::gmc::walk`).
//!
//! The context registers are found by name in the hub block's register
//! table (`GCVM_CONTEXTn_*` on GC 11/12, `MMVM_CONTEXTn_*` on MMHUB 3/4,
//! `VM_CONTEXTn_*` on GC 9.4.3 and MMHUB 1.8), so the walk reads what the
//! device holds. Tables are read through the CPU's view of VRAM (BAR0),
//! and, for a directory entry marked SYSTEM, of the DMA region.

use barebell::bus::RegisterBus;
use barebell::discovery::IpInfo;
use barebell::gmc::pagetable::{Pte, PteFormat};
use barebell::gmc::walk::{self, Context, Entry, Page, Stop, Walk};
use barebell::ip::hw_id;
use barebell_bringup::Gpu;
use barebell_catalog::regdb::{self, Parsed, RegDef};
use clap::ValueEnum;
use serde_json::{Value, json};
use std::fmt::Write as _;

/// Which hub's contexts.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hub {
    /// The GFXHUB in GC, which the CP, the shaders and the MES use.
    Gfx,
    /// The MMHUB, which SDMA uses.
    Mm,
}

/// What the command was asked.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub hub: Hub,
    pub vmid: u8,
    pub va: u64,
    /// The XCC whose GFXHUB (GC 9.4.3), or the AID whose MMHUB.
    pub instance: u8,
}

/// The hub's block: its discovery entry and register table.
fn hub_block(gpu: &Gpu<'_>, r: &Request) -> Result<(IpInfo, &'static Parsed), String> {
    let ips = &gpu.ips;
    let ip = match r.hub {
        Hub::Gfx if ips.topology.num_xcc() > 1 => {
            ips.xcc(usize::from(r.instance)).ok_or_else(|| {
                format!(
                    "--instance {}: this part has {} XCCs (0 to {})",
                    r.instance,
                    ips.topology.num_xcc(),
                    ips.topology.num_xcc() - 1
                )
            })?
        }
        Hub::Mm => ips.aid_ip(hw_id::MMHUB, r.instance).ok_or_else(|| {
            format!(
                "--instance {}: no MMHUB instance {} on this part",
                r.instance, r.instance
            )
        })?,
        Hub::Gfx if r.instance != 0 => {
            return Err(format!(
                "--instance {}: this part has one GFXHUB (instance 0)",
                r.instance
            ));
        }
        Hub::Gfx => ips.gc,
    };
    let t = regdb::table_for(ip.hw_id, ip.version.triple()).ok_or_else(|| {
        let (a, b, c) = ip.version.triple();
        format!("no register table for this hub's IP version {a}.{b}.{c}")
    })?;
    let table = regdb::load(t).map_err(|e| e.to_string())?;
    Ok((ip, table))
}

/// Context `vmid`'s register `suffix` under whichever prefix the table
/// uses.
fn context_reg<'t>(table: &'t Parsed, vmid: u8, suffix: &str) -> Result<&'t RegDef, String> {
    ["GCVM", "MMVM", "VM"]
        .iter()
        .find_map(|p| table.get(&format!("{p}_CONTEXT{vmid}_{suffix}")))
        .ok_or_else(|| format!("the hub's register table has no CONTEXT{vmid}_{suffix}"))
}

fn read(gpu: &Gpu<'_>, ip: &IpInfo, r: &RegDef) -> Result<u32, String> {
    let at = barebell::regs::Reg {
        name: "",
        offset: r.offset,
        base_idx: r.base_idx,
    }
    .byte_offset(&ip.bases)
    .ok_or_else(|| format!("{} lies outside the discovered register bases", r.name))?;
    Ok(gpu.bus.read32(at))
}

/// The context's registers, as [`Context`].
fn context(
    gpu: &Gpu<'_>,
    ip: &IpInfo,
    table: &Parsed,
    vmid: u8,
) -> Result<(Context, bool), String> {
    let reg =
        |suffix: &str| -> Result<u32, String> { read(gpu, ip, context_reg(table, vmid, suffix)?) };
    let pair = |lo: &str, hi: &str| -> Result<(u32, u32), String> { Ok((reg(lo)?, reg(hi)?)) };
    let cntl_def = context_reg(table, vmid, "CNTL")?;
    let cntl = read(gpu, ip, cntl_def)?;
    let field = |name: &str| -> Result<u8, String> {
        let f = cntl_def
            .field(name)
            .ok_or_else(|| format!("{} has no field {name}", cntl_def.name))?;
        Ok(f.get(cntl) as u8)
    };
    let ctx = Context::from_registers(
        pair("PAGE_TABLE_BASE_ADDR_LO32", "PAGE_TABLE_BASE_ADDR_HI32")?,
        pair("PAGE_TABLE_START_ADDR_LO32", "PAGE_TABLE_START_ADDR_HI32")?,
        pair("PAGE_TABLE_END_ADDR_LO32", "PAGE_TABLE_END_ADDR_HI32")?,
        field("PAGE_TABLE_DEPTH")?,
        field("PAGE_TABLE_BLOCK_SIZE")?,
    );
    Ok((ctx, field("ENABLE_CONTEXT")? == 1))
}

/// Where a physical address lands for the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// VRAM byte offset.
    Vram(u64),
    /// DMA region byte offset and host address.
    Dma(u64, u64),
    /// Not in VRAM the CPU sees, nor in barebell's DMA region.
    Elsewhere,
}

fn place(gpu: &Gpu<'_>, pa: u64, system: bool) -> Place {
    if system {
        let dma = gpu.platform.dma();
        for (i, &bus) in dma.chunk_bus.iter().enumerate() {
            let chunk = barebell::platform::DMA_CHUNK as u64;
            if pa >= bus && pa - bus < chunk {
                let off = i as u64 * chunk + (pa - bus);
                if off < dma.len as u64 {
                    return Place::Dma(off, dma.host.as_ptr() as u64 + off);
                }
            }
        }
        return Place::Elsewhere;
    }
    let base = gpu.memory.map_or(0, |m| m.vram_base_offset);
    match pa.checked_sub(base) {
        Some(off) if gpu.platform.vram().at(off, 8).is_some() => Place::Vram(off),
        _ => Place::Elsewhere,
    }
}

/// The 8-byte entry at `pa`, through the CPU's view.
fn read_entry(gpu: &Gpu<'_>, pa: u64, system: bool) -> Option<u64> {
    match place(gpu, pa, system) {
        Place::Vram(off) => {
            let v = gpu.platform.vram();
            Some(u64::from(v.read32(off)) | u64::from(v.read32(off + 4)) << 32)
        }
        Place::Dma(off, _) => {
            let dma = gpu.platform.dma();
            let mut b = [0u8; 8];
            for (i, x) in b.iter_mut().enumerate() {
                // SAFETY: `off + 8 <= dma.len` (`place` found `off` inside a
                // chunk of the region, and entries are 8-byte aligned in
                // 4 KiB tables, so they never straddle the region's end);
                // the platform keeps the region mapped and readable while
                // it lives (its `unsafe impl Platform`), and `gpu` borrows
                // it. Volatile, byte by byte: the device may write it.
                *x = unsafe { core::ptr::read_volatile(dma.host.as_ptr().add(off as usize + i)) };
            }
            Some(u64::from_le_bytes(b))
        }
        Place::Elsewhere => None,
    }
}

fn flags(format: PteFormat, raw: u64) -> String {
    let e = Pte::from_bits(raw);
    let mut f = Vec::new();
    for (on, name) in [
        (e.valid(), "V"),
        (e.system(), "SYS"),
        (e.snooped(), "SNOOP"),
        (e.readable(), "R"),
        (e.writeable(), "W"),
        (e.executable(), "X"),
    ] {
        if on {
            f.push(name.to_string());
        }
    }
    if raw & walk::pde_pte_bit(format) != 0 {
        f.push("PDE_PTE".into());
    }
    if format == PteFormat::Gfx9TranslateFurther && e.tf() {
        f.push("TF".into());
    }
    if e.fragment() != 0 {
        f.push(format!("frag {}", e.fragment()));
    }
    f.join(" ")
}

fn stop_text(s: Stop) -> String {
    match s {
        Stop::OutOfRange => "the VA lies outside the context's range".into(),
        Stop::Invalid => "not mapped: the last entry is not valid".into(),
        Stop::Unreadable { table } => format!(
            "the table at {table:#x} is not where the CPU can read it (VRAM past BAR0, or system memory outside barebell's DMA region)"
        ),
        Stop::BadShape => {
            "the context's depth or block size is outside what the hardware defines".into()
        }
    }
}

fn place_text(p: Place) -> String {
    match p {
        Place::Vram(off) => format!("VRAM offset {off:#x}"),
        Place::Dma(off, host) => format!("system memory: DMA region byte {off:#x}, host {host:#x}"),
        Place::Elsewhere => "outside the VRAM the CPU sees and barebell's DMA region".into(),
    }
}

fn entry_json(format: PteFormat, e: &Entry) -> Value {
    json!({"level": e.level, "table": e.table, "index": e.index, "raw": e.raw, "flags": flags(format, e.raw)})
}

/// Runs the walk and renders it.
pub fn run(gpu: &Gpu<'_>, r: &Request, json_out: bool) -> Result<String, String> {
    if r.vmid > 15 {
        return Err(format!("--vmid {}: the hubs have VMIDs 0 to 15", r.vmid));
    }
    let (ip, table) = hub_block(gpu, r)?;
    let (ctx, enabled) = context(gpu, &ip, table, r.vmid)?;
    let format = PteFormat::from(gpu.ips.generation);
    // Directory entries marked SYSTEM point into system memory; the root
    // is in VRAM (the base register has no such bit).
    let mut system_next = false;
    let w: Walk = walk::walk(format, &ctx, r.va, &mut |pa| {
        let v = read_entry(gpu, pa, system_next);
        if let Some(raw) = v {
            system_next = raw & 2 != 0;
        }
        v
    });
    let (a, b, c) = ip.version.triple();
    let hub = match r.hub {
        Hub::Gfx => "GFXHUB",
        Hub::Mm => "MMHUB",
    };
    let page = w.outcome.map(|p: Page| (p, place(gpu, p.pa, p.system)));
    if json_out {
        let entries: Vec<Value> = w.entries().iter().map(|e| entry_json(format, e)).collect();
        let outcome = match page {
            Ok((p, pl)) => {
                json!({"pa": p.pa, "page_bytes": p.bytes, "system": p.system, "where": place_text(pl)})
            }
            Err(s) => json!({"stopped": stop_text(s)}),
        };
        return Ok(format!(
            "{}\n",
            json!({
                "hub": hub, "ip_version": [a, b, c], "instance": r.instance, "vmid": r.vmid,
                "va": r.va, "enabled": enabled, "root": ctx.root, "start": ctx.start, "end": ctx.end,
                "depth": ctx.depth, "block_size": ctx.block_size, "entries": entries, "outcome": outcome,
            })
        ));
    }
    let mut s = format!(
        "{hub} ({} {a}.{b}.{c} instance {}) VMID {}: {}root {:#x}, VA {:#x}..={:#x}, depth {}, block size {}\n",
        barebell_bringup::nbio::ip_name(ip.hw_id),
        r.instance,
        r.vmid,
        if enabled { "" } else { "context DISABLED, " },
        ctx.root,
        ctx.start,
        ctx.end,
        ctx.depth,
        ctx.block_size
    );
    for e in w.entries() {
        let line = format!(
            "  level {} table {:#x} [{:>3}] = {:#018x}  {}",
            e.level,
            e.table,
            e.index,
            e.raw,
            flags(format, e.raw)
        );
        let _ = writeln!(s, "{}", line.trim_end());
    }
    match page {
        Ok((p, pl)) => {
            let _ = writeln!(
                s,
                "VA {:#x} -> PA {:#x} ({} KiB page; {})",
                r.va,
                p.pa,
                p.bytes >> 10,
                place_text(pl)
            );
        }
        Err(e) => {
            let _ = writeln!(s, "VA {:#x}: {}", r.va, stop_text(e));
        }
    }
    Ok(s)
}
