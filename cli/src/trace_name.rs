//! `barebell trace name --part P RAW`: a raw reference trace (the Linux
//! peer's server writes `R <BAR5 byte> <value>` lines, see
//! `vfio-peer/src/trace.rs`) rewritten in the named form `barebell
//! bringup --trace` prints, with the names barebell's own trace uses.
//!
//! The names come from the same table on both sides: the part's
//! discovery table read from the built-in model by the bring-up's own
//! discovery step, then `barebell_bringup::nbio::register_symbols()` over
//! every IP instance it found. So `barebell trace diff` of the two traces
//! aligns register by register, per XCC on GC 9.4.3.
//!
//! An indirect access is named as the register it reaches, as barebell's
//! bus traces its own: Linux reaches registers past BAR5 by writing the
//! byte address to the NBIO's PCIE index register (with the high half in
//! `PCIE_INDEX2_HI` on NBIO 7.9) and then reading or writing the data
//! register (`amdgpu_device_indirect_rreg()`,
//! `amdgpu_device_indirect_rreg_ext()`). The index writes and their
//! read-backs are dropped; the data access becomes the register the
//! model reaches, which the low half alone selects (the model ignores
//! the high half; see `name_trace`).
//!
//! Consecutive identical reads of one register (a poll) fold into one
//! line ending in `(xN)`, as am-peer's traces do, so that how often the
//! guest polled (which depends on the host's speed) does not move the
//! diff. Doorbells become `D BAR2 @offset = value`, config writes
//! `C CFG @offset = value` (but for the guest's teardown mark,
//! [`TEARDOWN_MARK`], which becomes `## harness: teardown`), DMA maps and
//! refusals `#` notes.

use barebell::bus::trace::{Access, NamedSymbols};
use barebell::regs::{IpBases, Reg};

/// The Linux peer's guest writes this byte to the cache line size
/// register (config byte 0x0c) just before it powers off (`cargo xtask
/// linux-peer`'s `/init`): the accesses after it are the driver's
/// shutdown, which `trace diff` compares apart from the boot.
pub const TEARDOWN_MARK: u64 = 0x5a;

/// The index/data registers (BAR5 byte offsets) whose pairs fold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexPair {
    pub index: usize,
    pub data: usize,
    pub index_hi: Option<usize>,
}

/// Rewrites `raw` with `symbols`' names, folding `pairs`' indirect
/// accesses. Lines that are not the peer's raw form pass through as
/// `# ` notes.
pub fn name_trace(
    raw: &str,
    symbols: &[(&'static str, &'static [Reg], IpBases)],
    pairs: &[IndexPair],
) -> String {
    let sym = NamedSymbols { blocks: symbols };
    let mut out = Namer::default();
    // The byte address (low half) each pair's index holds.
    let mut held: Vec<u64> = vec![0; pairs.len()];
    for line in raw.lines() {
        let mut it = line.splitn(3, ' ');
        let (kind, a, b) = (it.next(), it.next(), it.next());
        let num = |s: Option<&str>| {
            s.and_then(|s| s.strip_prefix("0x"))
                .and_then(|s| u64::from_str_radix(s, 16).ok())
        };
        match (kind, num(a), num(b)) {
            (Some(k @ ("R" | "W")), Some(off), Some(value)) => {
                let write = k == "W";
                let (Ok(off), Ok(value)) = (usize::try_from(off), u32::try_from(value)) else {
                    out.note(&format!("unreadable: {line}"));
                    continue;
                };
                if let Some(i) = pairs.iter().position(|p| p.index == off) {
                    if write {
                        held[i] = u64::from(value);
                    }
                    continue;
                }
                if pairs.iter().any(|p| p.index_hi == Some(off)) {
                    continue;
                }
                // The model reaches the low half's register and ignores
                // the high half (`PCIE_INDEX2_HI`: on MI300 Linux sends
                // each AID's own low base with the AID tag in bits 33:32,
                // `aqua_vanjaram_encode_ext_smn_addressing()`; the model
                // gives each AID's blocks their own low bases, a model
                // convention, docs/fidelity.md), so the access is named
                // as the register the model reached.
                let reached = match pairs.iter().position(|p| p.data == off) {
                    Some(i) => usize::try_from(held[i]).unwrap_or(off),
                    None => off,
                };
                let found = sym.lookup(reached);
                out.access(Access {
                    write,
                    byte_offset: reached,
                    value,
                    name: found.map(|(_, r)| r.name),
                    block: found.map(|(b, _)| b),
                });
            }
            (Some("D"), Some(off), Some(v)) => out.line(format!("  D BAR2 @{off:#x} = {v:#x}")),
            (Some("C"), Some(0xc), Some(TEARDOWN_MARK)) => out.line(
                "## harness: teardown (the guest powers off; amdgpu_pci_shutdown() follows)".into(),
            ),
            (Some("C"), Some(off), Some(v)) => out.line(format!("  C CFG @{off:#04x} = {v:#x}")),
            (Some("M"), Some(iova), Some(size)) => {
                out.note(&format!("guest DMA map {iova:#x} + {size:#x}"))
            }
            (Some("!"), _, _) => out.note(&format!("refused: {}", &line[2..])),
            _ if line.is_empty() => {}
            _ => out.note(line),
        }
    }
    out.finish()
}

/// The output, with consecutive identical reads folded.
#[derive(Default)]
struct Namer {
    text: String,
    /// The last line if it was a read, and how many times it repeated.
    pending: Option<(Access, usize)>,
}

impl Namer {
    fn flush(&mut self) {
        if let Some((a, n)) = self.pending.take() {
            self.text.push_str(&format!("  {a}"));
            if n > 1 {
                self.text.push_str(&format!(" (x{n})"));
            }
            self.text.push('\n');
        }
    }

    fn access(&mut self, a: Access) {
        if let Some((p, n)) = &mut self.pending
            && !a.write
            && *p == a
        {
            *n += 1;
            return;
        }
        self.flush();
        if a.write {
            self.text.push_str(&format!("  {a}\n"));
        } else {
            self.pending = Some((a, 1));
        }
    }

    fn line(&mut self, l: String) {
        self.flush();
        self.text.push_str(&l);
        self.text.push('\n');
    }

    fn note(&mut self, t: &str) {
        self.line(format!("  # {t}"));
    }

    fn finish(mut self) -> String {
        self.flush();
        self.text
    }
}

/// The command: names `raw` with the model part's table (and, for the
/// registers barebell's tables do not list, with Linux's offset headers
/// under `headers`, when given); the named trace goes to stdout.
pub fn run(
    part: crate::target::PartArg,
    firmware_dir: &std::path::Path,
    headers: Option<&std::path::Path>,
    raw: &std::path::Path,
) -> std::process::ExitCode {
    match symbols_of(part, firmware_dir, headers).and_then(|(symbols, pairs)| {
        let text = std::fs::read_to_string(raw)
            .map_err(|e| format!("cannot read the trace {}: {e}", raw.display()))?;
        Ok(name_trace(&text, &symbols, &pairs))
    }) {
        Ok(named) => {
            print!("{named}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("barebell trace name: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

type Symbols = Vec<(&'static str, &'static [Reg], IpBases)>;

/// The part's register names and NBIO index pairs, from its discovery
/// table as the bring-up's discovery step reads it off the model.
fn symbols_of(
    part: crate::target::PartArg,
    firmware_dir: &std::path::Path,
    headers: Option<&std::path::Path>,
) -> Result<(Symbols, Vec<IndexPair>), String> {
    let fw = barebell_bringup::FirmwareDir(firmware_dir.to_path_buf());
    let target = crate::target::TargetArgs {
        model: true,
        vfio: None,
        sysfs: None,
        unsafe_physical_dma: false,
        part,
        node: None,
    };
    let device = crate::target::open(&target, &fw, 1)?;
    let ips = barebell_bringup::discovery::run(device.platform(), &barebell_bringup::Quiet)
        .map_err(|e| format!("reading {}'s discovery table: {e}", part.name()))?;
    device.finish(true);
    let mut symbols = barebell_bringup::nbio::register_symbols(&ips);
    if let Some(dir) = headers {
        // After barebell's own: a register both list keeps barebell's name.
        for ip in &ips.all {
            if let Some(regs) = linux_header_registers(dir, ip.hw_id, ip.version.triple())? {
                symbols.push((linux_ip_name(ip.hw_id), regs, ip.bases));
            }
        }
    }
    let mut pairs = Vec::new();
    for nbif in ips.aids(barebell::ip::hw_id::NBIF) {
        let nbio = barebell::nbio::Nbio::for_version(nbif.version.triple(), nbif.bases)
            .map_err(|e| format!("{}'s NBIO: {e}", part.name()))?;
        let at = |r: Reg| r.byte_offset(&nbif.bases);
        let (index, data) = nbio.regs.rsmu_pair();
        if let (Some(index), Some(data)) = (at(index), at(data)) {
            pairs.push(IndexPair {
                index,
                data,
                index_hi: nbio.regs.index_hi.and_then(at),
            });
        }
    }
    Ok((symbols, pairs))
}

/// The name a trace gives a block named from Linux's headers only: the
/// bring-up's name where it has one, else the `soc15_hw_ip.h` name.
fn linux_ip_name(hw_id: u16) -> &'static str {
    match (barebell_bringup::nbio::ip_name(hw_id), hw_id) {
        ("IP", 3) => "THM",
        ("IP", 6) => "CLKA",
        ("IP", 12) => "VCN",
        ("IP", 43) => "SDMA1",
        ("IP", 46) => "DF",
        ("IP", 271) => "DMU",
        ("IP", 200) => "XGMI",
        (n, _) => n,
    }
}

/// The file-name prefix of an IP's offset header in Linux's
/// `drivers/gpu/drm/amd/include/asic_reg/` (`soc15_hw_ip.h` ids).
fn header_prefix(hw_id: u16) -> Option<&'static str> {
    Some(match hw_id {
        1 | 255 => "mp",
        3 => "thm",
        4 => "smuio",
        6 => "clk",
        11 => "gc",
        12 => "vcn",
        34 => "mmhub",
        35 => "athub",
        40 => "osssys",
        41 => "hdp",
        42 | 43 => "sdma",
        46 => "df",
        108 => "nbio",
        150 => "umc",
        271 => "dcn",
        _ => return None,
    })
}

/// The registers of `<prefix>_<maj>_<min>_<rev>_offset.h` (or
/// `<prefix>_<maj>_<min>_offset.h`) under `dir`, parsed from its
/// `#define regNAME 0x…` and `#define regNAME_BASE_IDX n` lines; `None`
/// when Linux has no such header. Leaked: the command runs once.
fn linux_header_registers(
    dir: &std::path::Path,
    hw_id: u16,
    (a, b, c): (u8, u8, u8),
) -> Result<Option<&'static [Reg]>, String> {
    let Some(prefix) = header_prefix(hw_id) else {
        return Ok(None);
    };
    let names = [
        format!("{prefix}_{a}_{b}_{c}_offset.h"),
        format!("{prefix}_{a}_{b}_offset.h"),
    ];
    let subdirs =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut found = None;
    for sub in subdirs.flatten() {
        for n in &names {
            let p = sub.path().join(n);
            if found.is_none() && p.is_file() {
                found = Some(p);
            }
        }
    }
    let Some(path) = found else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(Some(Vec::leak(parse_offset_header(&text))))
}

/// `#define regX 0x…` with its `#define regX_BASE_IDX n` (a register with
/// no BASE_IDX line is left out: its segment is unknown).
fn parse_offset_header(text: &str) -> Vec<Reg> {
    let mut offsets = std::collections::BTreeMap::new();
    let mut idx = std::collections::BTreeMap::new();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        if it.next() != Some("#define") {
            continue;
        }
        let (Some(name), Some(v)) = (it.next(), it.next()) else {
            continue;
        };
        let Some(name) = name.strip_prefix("reg") else {
            continue;
        };
        let v = match v.strip_prefix("0x") {
            Some(h) => u32::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        };
        let Some(v) = v else { continue };
        match name.strip_suffix("_BASE_IDX") {
            Some(n) => {
                idx.insert(n.to_string(), v);
            }
            None => {
                offsets.insert(name.to_string(), v);
            }
        }
    }
    offsets
        .into_iter()
        .filter_map(|(name, offset)| {
            let base_idx = u8::try_from(*idx.get(&name)?).ok()?;
            Some(Reg {
                name: String::leak(name),
                offset,
                base_idx,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const REGS: &[Reg] = &[
        Reg {
            name: "CP_STAT",
            offset: 0x10,
            base_idx: 0,
        },
        Reg {
            name: "PCIE_INDEX2",
            offset: 0x20,
            base_idx: 0,
        },
        Reg {
            name: "PCIE_DATA2",
            offset: 0x21,
            base_idx: 0,
        },
        Reg {
            name: "FAR_AWAY",
            offset: 0x40000,
            base_idx: 1,
        },
    ];

    #[test]
    fn raw_lines_take_the_tables_names_and_polls_fold() {
        let symbols = [("GC", REGS, IpBases::new(&[0x100, 0x10000]))];
        // CP_STAT: dword 0x100 + 0x10 = byte 0x440.
        let raw = "R 0x440 0x1\nR 0x440 0x1\nR 0x440 0x0\nW 0x440 0x5\nD 0x18 0x100\nW 0x4 0x0\n";
        let named = name_trace(raw, &symbols, &[]);
        assert_eq!(
            named,
            "  R GC.CP_STAT @0x440 = 0x00000001 (x2)\n  R GC.CP_STAT @0x440 = 0x00000000\n  W GC.CP_STAT @0x440 = 0x00000005\n  D BAR2 @0x18 = 0x100\n  W [0x4] = 0x00000000\n"
        );
    }

    #[test]
    fn an_index_data_pair_is_named_as_the_register_it_reaches() {
        let symbols = [("GC", REGS, IpBases::new(&[0x100, 0x10000]))];
        // PCIE_INDEX2 at byte (0x100 + 0x20) * 4 = 0x480, DATA2 at 0x484;
        // FAR_AWAY at byte (0x10000 + 0x40000) * 4 = 0x140000.
        let pair = IndexPair {
            index: 0x480,
            data: 0x484,
            index_hi: None,
        };
        let raw = "W 0x480 0x140000\nR 0x480 0x140000\nW 0x484 0x7\nR 0x484 0x7\n";
        let named = name_trace(raw, &symbols, &[pair]);
        assert_eq!(
            named,
            "  W GC.FAR_AWAY @0x140000 = 0x00000007\n  R GC.FAR_AWAY @0x140000 = 0x00000007\n"
        );
    }

    #[test]
    fn an_offset_header_gives_each_register_its_offset_and_segment() {
        let text = "#define regCP_STAT 0x0f40\n#define regCP_STAT_BASE_IDX 0\n#define regNO_IDX 0x10\n#define regSDMA0_X 0x0020\n#define regSDMA0_X_BASE_IDX 1\n";
        let regs = parse_offset_header(text);
        assert_eq!(regs.len(), 2);
        assert_eq!(
            (regs[0].name, regs[0].offset, regs[0].base_idx),
            ("CP_STAT", 0xf40, 0)
        );
        assert_eq!(
            (regs[1].name, regs[1].offset, regs[1].base_idx),
            ("SDMA0_X", 0x20, 1)
        );
    }

    #[test]
    fn the_high_index_half_is_dropped_as_the_model_ignores_it() {
        let symbols = [("GC", REGS, IpBases::new(&[0x100, 0x10000]))];
        let pair = IndexPair {
            index: 0x480,
            data: 0x484,
            index_hi: Some(0x488),
        };
        // AID tag 5 in the high half: the model reaches the low half's register.
        let raw = "W 0x488 0x5\nW 0x480 0x140000\nW 0x484 0x9\nW 0x488 0x0\n";
        let named = name_trace(raw, &symbols, &[pair]);
        assert_eq!(named, "  W GC.FAR_AWAY @0x140000 = 0x00000009\n");
    }
}
