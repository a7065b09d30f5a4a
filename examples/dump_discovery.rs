//! Writes the model's IP discovery binary for a part to a file.
//!
//! tinygrad's AM driver (the peer in `am-peer/`) finds its IP blocks by
//! reading this table from VRAM at VRAM size − 64 KiB, as a real card's
//! IFWI leaves it there. The Python harness has no table of its own: it
//! loads the one the model synthesises (`barebell_model::discovery::build`).
//!
//! `--nbio-seg5 BASE` appends a sixth NBIO segment base. The model's parts
//! give NBIO five (Navi21's `sienna_cichlid_ip_offset.h`), but the NBIO
//! 4.3.0 and NBIF 6.3.1 headers place `RCC_DEV0_EPF2_STRAP*` at BASE_IDX 5,
//! and AM resolves every register of the module when it builds its
//! register table, so it stops without one. No Navi31/48 value is public;
//! am-peer passes 0x04040000, the NBIO segment 5 base Linux's
//! `dcn315_resource.c` declares for its SoC (a model value here).
//!
//! `cargo run -p barebell-examples --example dump_discovery -- navi31 out.bin [--nbio-seg5 0x04040000]`

use barebell_model::discovery::{IpDesc, NAVI31, NAVI48, NBIF_HWID, PartDesc, build};
use std::process::ExitCode;

fn with_nbio_seg5(desc: PartDesc, seg5: u64) -> PartDesc {
    let dies: Vec<&'static [IpDesc]> = desc
        .dies
        .iter()
        .map(|die| {
            let ips: Vec<IpDesc> = die
                .iter()
                .map(|ip| {
                    let mut ip = *ip;
                    if ip.hw_id == NBIF_HWID {
                        let mut bases = ip.bases.to_vec();
                        bases.truncate(5);
                        bases.resize(5, 0);
                        bases.push(seg5);
                        ip.bases = Box::leak(bases.into_boxed_slice());
                    }
                    ip
                })
                .collect();
            &*Box::leak(ips.into_boxed_slice())
        })
        .collect();
    PartDesc {
        dies: Box::leak(dies.into_boxed_slice()),
        ..desc
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (part, out, seg5) = match args.as_slice() {
        [p, o] => (p.as_str(), o.as_str(), None),
        [p, o, flag, v] if flag == "--nbio-seg5" => {
            let hex = v.trim_start_matches("0x");
            match u64::from_str_radix(hex, 16) {
                Ok(b) => (p.as_str(), o.as_str(), Some(b)),
                Err(e) => {
                    eprintln!("--nbio-seg5 {v}: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        _ => {
            eprintln!("usage: dump_discovery navi31|navi48 OUT [--nbio-seg5 HEX]");
            return ExitCode::from(2);
        }
    };
    let mut desc = match part {
        "navi31" => NAVI31,
        "navi48" => NAVI48,
        other => {
            eprintln!("unknown part {other:?}: navi31 or navi48");
            return ExitCode::from(2);
        }
    };
    if let Some(b) = seg5 {
        desc = with_nbio_seg5(desc, b);
    }
    let (bytes, layout) = build(&desc);
    if let Err(e) = std::fs::write(out, &bytes) {
        eprintln!("writing {out}: {e}");
        return ExitCode::FAILURE;
    }
    println!(
        "{}: {} bytes ({} used) written to {out}{}",
        desc.name,
        bytes.len(),
        layout.binary_size,
        seg5.map_or(String::new(), |b| format!(
            " (NBIO segment 5 base {b:#x} added)"
        ))
    );
    ExitCode::SUCCESS
}
