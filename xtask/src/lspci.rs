//! The `lspci parity` stage: on every PCI function of this machine,
//! `barebell pci list/show --json` must agree with `lspci -vvv -nn -D`
//! about the ids, the class, the BARs (index, address, width,
//! prefetchability, size) and the capability offsets (and ids, where
//! lspci's name for a capability pins the id down).
//!
//! lspci is the independent witness here: a separate implementation
//! (pciutils) reading the same sysfs files. Both read sizes from the
//! kernel's `resource` file, so sizes test the plumbing rather than BAR
//! sizing (which would disturb live devices; it is tested on modelled
//! devices in pcie/tests/synthetic.rs).
//!
//! Run as root: without it Linux shows only 64 bytes of config and lspci
//! prints `<access denied>` instead of capabilities, which fails the stage.

use crate::util::{cargo, output};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// One function as lspci describes it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LspciDevice {
    pub bdf: String,
    /// `base << 8 | sub`, the `[cccc]` lspci prints.
    pub class: u16,
    pub vendor: u16,
    pub device: u16,
    pub revision: Option<u8>,
    pub regions: Vec<Region>,
    /// (offset, extended, id if lspci's name determines it).
    pub caps: Vec<(u16, bool, Option<u16>)>,
    pub access_denied: bool,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Region {
    pub index: u8,
    pub io: bool,
    /// `None` for `<unassigned>`/`<ignored>`.
    pub address: Option<u64>,
    /// 32 or 64 for memory; `None` for I/O.
    pub bits: Option<u8>,
    pub prefetchable: bool,
    pub size: Option<u64>,
}

fn hex_u16(s: &str) -> Option<u16> {
    (s.len() == 4)
        .then(|| u16::from_str_radix(s, 16).ok())
        .flatten()
}

/// `[hhhh]` and `[hhhh:hhhh]` bracket contents in a line, in order.
fn brackets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find('[') {
        let after = &rest[i + 1..];
        match after.find(']') {
            Some(j) => {
                out.push(&after[..j]);
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    out
}

/// lspci's `show_size()`: a number with K/M/G/T suffix, each 1024.
fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

fn parse_region(line: &str) -> Option<Region> {
    // "Region 0: Memory at 4000000000 (64-bit, non-prefetchable) [size=512K]"
    // "Region 4: I/O ports at e000 [size=256]"
    let rest = line.strip_prefix("Region ")?;
    let (idx, rest) = rest.split_once(": ")?;
    let mut r = Region {
        index: idx.parse().ok()?,
        ..Region::default()
    };
    let addr_text = if let Some(a) = rest.strip_prefix("Memory at ") {
        a
    } else if let Some(a) = rest.strip_prefix("I/O ports at ") {
        r.io = true;
        a
    } else {
        return None;
    };
    let token = addr_text.split_whitespace().next()?;
    r.address = u64::from_str_radix(token, 16).ok();
    if !r.io {
        r.bits = if rest.contains("(64-bit") {
            Some(64)
        } else if rest.contains("(32-bit") {
            Some(32)
        } else {
            None
        };
        r.prefetchable = rest.contains(", prefetchable)");
    }
    r.size = brackets(rest)
        .into_iter()
        .find_map(|b| b.strip_prefix("size="))
        .and_then(parse_size);
    Some(r)
}

/// Standard capability ids for lspci's names (pciutils ls-caps.c).
const STD_NAMES: &[(&str, u16)] = &[
    ("Null", 0x00),
    ("Power Management", 0x01),
    ("AGP", 0x02),
    ("Vital Product Data", 0x03),
    ("Slot ID", 0x04),
    ("MSI-X", 0x11),
    ("MSI:", 0x05),
    ("PCI-X", 0x07),
    ("HyperTransport", 0x08),
    ("Vendor Specific", 0x09),
    ("Debug port", 0x0a),
    ("Subsystem", 0x0d),
    ("Express", 0x10),
    ("SATA", 0x12),
    ("PCI Advanced Features", 0x13),
];

/// Extended capability ids for lspci's names (pciutils ls-ecaps.c).
const EXT_NAMES: &[(&str, u16)] = &[
    ("Null", 0x00),
    ("Advanced Error Reporting", 0x01),
    ("Virtual Channel", 0x02),
    ("Device Serial Number", 0x03),
    ("Power Budgeting", 0x04),
    ("Vendor Specific", 0x0b),
    ("Access Control Services", 0x0d),
    ("Alternative Routing-ID", 0x0e),
    ("Address Translation Service", 0x0f),
    ("Single Root I/O Virtualization", 0x10),
    ("Page Request Interface", 0x13),
    ("Physical Resizable BAR", 0x15),
    ("Latency Tolerance Reporting", 0x18),
    ("Secondary PCI Express", 0x19),
    ("Process Address Space ID", 0x1b),
    ("Downstream Port Containment", 0x1d),
    ("L1 PM Substates", 0x1e),
    ("Precision Time Measurement", 0x1f),
    ("Designated Vendor-Specific", 0x23),
    ("Data Link Feature", 0x25),
    ("Physical Layer 16.0 GT/s", 0x26),
    ("Lane Margining at the Receiver", 0x27),
    ("Physical Layer 32.0 GT/s", 0x2a),
];

/// `Capabilities: [40] ...` / `Capabilities: [100 v1] ...`; `None` for
/// lspci's `<chain looped>`/`<chain broken>` markers.
fn parse_cap(line: &str, dev: &mut LspciDevice) -> Option<(u16, bool, Option<u16>)> {
    // Without root lspci cannot read past the header and says so.
    if line.starts_with("Capabilities: <access denied>") {
        dev.access_denied = true;
        return None;
    }
    let rest = line.strip_prefix("Capabilities: [")?;
    let (inside, name) = rest.split_once("] ")?;
    if name.starts_with("<access denied>") {
        dev.access_denied = true;
        return None;
    }
    if name.starts_with('<') {
        return None;
    }
    let off_text = inside.split_whitespace().next()?;
    let offset = u16::from_str_radix(off_text, 16).ok()?;
    let extended = off_text.len() == 3 || inside.contains(" v");
    let table = if extended { EXT_NAMES } else { STD_NAMES };
    let id = table
        .iter()
        .find(|(n, _)| name.starts_with(n))
        .map(|&(_, id)| id);
    Some((offset, extended, id))
}

/// Parses `lspci -vvv -nn -D` output.
pub fn parse(text: &str) -> Vec<LspciDevice> {
    let mut out: Vec<LspciDevice> = Vec::new();
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        if !line.starts_with('\t') {
            // "0000:00:01.0 Unassigned class [ffff]: Red Hat, Inc. ... [1af4:1045] (rev 01)"
            let Some((bdf, rest)) = line.split_once(' ') else {
                continue;
            };
            let mut d = LspciDevice {
                bdf: bdf.to_string(),
                ..LspciDevice::default()
            };
            let b = brackets(rest);
            if let Some(c) = b.iter().find_map(|s| hex_u16(s)) {
                d.class = c;
            }
            if let Some((v, dv)) = b.iter().rev().find_map(|s| {
                s.split_once(':')
                    .and_then(|(v, d)| Some((hex_u16(v)?, hex_u16(d)?)))
            }) {
                d.vendor = v;
                d.device = dv;
            }
            d.revision = rest
                .split_once("(rev ")
                .and_then(|(_, r)| r.get(..2))
                .and_then(|r| u8::from_str_radix(r, 16).ok());
            out.push(d);
            continue;
        }
        let Some(d) = out.last_mut() else { continue };
        // Only first-level lines; details are indented by two tabs.
        let Some(body) = line.strip_prefix('\t').filter(|b| !b.starts_with('\t')) else {
            continue;
        };
        if let Some(r) = parse_region(body) {
            d.regions.push(r);
        } else if let Some(c) = parse_cap(body, d) {
            d.caps.push(c);
        }
    }
    out
}

fn barebell(root: &Path, args: &[&str]) -> Result<Value> {
    let text = output(
        cargo()
            .current_dir(root)
            .args([
                "run",
                "--quiet",
                "-p",
                "barebell-cli",
                "--bin",
                "barebell",
                "--",
            ])
            .args(args),
    )?;
    serde_json::from_str(&text).with_context(|| format!("barebell {args:?} printed bad JSON"))
}

fn num(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// Compares one device; appends one line per disagreement to `errs`.
/// Returns (bars, caps) compared.
fn compare(ours: &Value, theirs: &LspciDevice, errs: &mut String) -> (usize, usize) {
    let bdf = &theirs.bdf;
    let mut check = |what: &str, a: Option<u64>, b: Option<u64>| {
        if a != b {
            let _ = writeln!(errs, "{bdf}: {what}: barebell {a:x?}, lspci {b:x?}");
        }
    };
    check(
        "vendor",
        num(ours, "vendor"),
        Some(u64::from(theirs.vendor)),
    );
    check(
        "device",
        num(ours, "device"),
        Some(u64::from(theirs.device)),
    );
    check(
        "class",
        num(ours, "class").map(|c| c >> 8),
        Some(u64::from(theirs.class)),
    );
    if let Some(r) = theirs.revision {
        check("revision", num(ours, "revision"), Some(u64::from(r)));
    }

    let empty = Vec::new();
    let bars = ours["bars"].as_array().unwrap_or(&empty);
    let by_index: BTreeMap<u64, &Value> = bars
        .iter()
        .filter_map(|b| Some((num(b, "index")?, b)))
        .collect();
    for r in &theirs.regions {
        let Some(b) = by_index.get(&u64::from(r.index)) else {
            let _ = writeln!(
                errs,
                "{bdf}: BAR{} is in lspci but not in barebell",
                r.index
            );
            continue;
        };
        let kind = b.get("kind").and_then(Value::as_str);
        let mut c = |what: &str, a: Option<u64>, l: Option<u64>| {
            if a != l {
                let _ = writeln!(
                    errs,
                    "{bdf}: BAR{} {what}: barebell {a:x?}, lspci {l:x?}",
                    r.index
                );
            }
        };
        c(
            "is I/O",
            Some(u64::from(kind == Some("io"))),
            Some(u64::from(r.io)),
        );
        if let Some(a) = r.address {
            c("address", num(b, "address"), Some(a));
        }
        if let Some(bits) = r.bits {
            c("bits", num(b, "bits"), Some(u64::from(bits)));
        }
        c(
            "prefetchable",
            b.get("prefetchable")
                .and_then(Value::as_bool)
                .map(u64::from),
            Some(u64::from(r.prefetchable)),
        );
        c("size", num(b, "size"), r.size);
    }
    // A BAR lspci leaves out has neither address nor size: barebell must
    // not invent one with a size.
    for (i, b) in &by_index {
        if !theirs.regions.iter().any(|r| u64::from(r.index) == *i) && num(b, "size").is_some() {
            let _ = writeln!(errs, "{bdf}: BAR{i} is in barebell but not in lspci");
        }
    }

    let caps = ours["capabilities"].as_array().unwrap_or(&empty);
    let ours_caps: Vec<(u64, bool, u64)> = caps
        .iter()
        .filter_map(|c| {
            Some((
                num(c, "offset")?,
                c.get("extended")?.as_bool()?,
                num(c, "id")?,
            ))
        })
        .collect();
    let ours_pos: Vec<(u64, bool)> = ours_caps.iter().map(|c| (c.0, c.1)).collect();
    let theirs_pos: Vec<(u64, bool)> = theirs.caps.iter().map(|c| (u64::from(c.0), c.1)).collect();
    if ours_pos != theirs_pos {
        let _ = writeln!(
            errs,
            "{bdf}: capability offsets: barebell {ours_pos:x?}, lspci {theirs_pos:x?}"
        );
    } else {
        for (o, t) in ours_caps.iter().zip(&theirs.caps) {
            if let Some(id) = t.2.filter(|&id| o.2 != u64::from(id)) {
                let _ = writeln!(
                    errs,
                    "{bdf}: capability at {:#x}: barebell id {:#x}, lspci's name means {id:#x}",
                    o.0, o.2
                );
            }
        }
    }
    (theirs.regions.len(), theirs.caps.len())
}

/// The stage.
pub fn run(root: &Path) -> Result<String> {
    let text = output(Command::new("lspci").args(["-vvv", "-nn", "-D"]))
        .context("running lspci (install pciutils)")?;
    let theirs = parse(&text);
    if let Some(d) = theirs.iter().find(|d| d.access_denied) {
        bail!(
            "lspci could not read {}'s capabilities (<access denied>): run as root",
            d.bdf
        );
    }
    let list = barebell(root, &["pci", "list", "--json"])?;
    let ours_bdfs: Vec<String> = list
        .as_array()
        .context("pci list --json is not an array")?
        .iter()
        .filter_map(|e| e.get("bdf")?.as_str().map(str::to_string))
        .collect();
    let theirs_bdfs: Vec<String> = theirs.iter().map(|d| d.bdf.clone()).collect();
    let mut errs = String::new();
    if ours_bdfs != theirs_bdfs {
        let _ = writeln!(
            errs,
            "function lists differ: barebell {ours_bdfs:?}, lspci {theirs_bdfs:?}"
        );
    }
    let (mut nbars, mut ncaps) = (0, 0);
    for d in &theirs {
        if let Some(entry) = list
            .as_array()
            .and_then(|a| a.iter().find(|e| e["bdf"] == d.bdf.as_str()))
        {
            // The list's ids must agree too.
            let _ = compare_ids(entry, d, &mut errs);
        }
        let show = barebell(root, &["pci", "show", &d.bdf, "--json"])?;
        let (b, c) = compare(&show, d, &mut errs);
        nbars += b;
        ncaps += c;
    }
    if !errs.is_empty() {
        bail!("barebell disagrees with lspci -vvv -nn:\n{errs}");
    }
    Ok(format!(
        "{} functions: ids, class, {nbars} BARs and {ncaps} capability offsets equal lspci -vvv -nn",
        theirs.len()
    ))
}

fn compare_ids(entry: &Value, d: &LspciDevice, errs: &mut String) -> Option<()> {
    let v = num(entry, "vendor")?;
    let dv = num(entry, "device")?;
    let c = num(entry, "class")? >> 8;
    if (v, dv, c) != (u64::from(d.vendor), u64::from(d.device), u64::from(d.class)) {
        let _ = writeln!(
            errs,
            "{}: pci list says {v:04x}:{dv:04x} class {c:04x}, lspci {:04x}:{:04x} class {:04x}",
            d.bdf, d.vendor, d.device, d.class
        );
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shaped like lspci 3.9's output for an AMD GPU (hand-written, with
    /// the layout pciutils' lspci.c/ls-caps.c print).
    const SAMPLE: &str = "\
0000:03:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 XT/7900 XTX/7900M] [1002:744c] (rev c8) (prog-if 00 [VGA controller])
\tSubsystem: Advanced Micro Devices, Inc. [AMD/ATI] Device [1002:0e3b]
\tRegion 0: Memory at 7800000000 (64-bit, prefetchable) [size=16G]
\tRegion 2: Memory at 7c00000000 (64-bit, prefetchable) [size=256M]
\tRegion 4: I/O ports at e000 [size=256]
\tRegion 5: Memory at fcd00000 (32-bit, non-prefetchable) [size=1M]
\tExpansion ROM at fce00000 [disabled] [size=128K]
\tCapabilities: [48] Vendor Specific Information: Len=08 <?>
\tCapabilities: [50] Power Management version 3
\t\tFlags: PMEClk- DSI- D1+ D2+ AuxCurrent=0mA PME(D0-,D1+,D2+,D3hot+,D3cold+)
\tCapabilities: [64] Express (v2) Legacy Endpoint, MSI 00
\tCapabilities: [a0] MSI: Enable+ Count=1/1 Maskable- 64bit+
\tCapabilities: [100 v1] Vendor Specific Information: ID=0001 Rev=1 Len=010 <?>
\tCapabilities: [150 v2] Advanced Error Reporting
\tCapabilities: [200 v1] Physical Resizable BAR
\tCapabilities: [270 v1] Secondary PCI Express
\tKernel driver in use: amdgpu

0000:00:01.0 Unassigned class [ffff]: Red Hat, Inc. Virtio 1.0 memory balloon [1af4:1045] (rev 01)
\tRegion 0: Memory at 4000000000 (64-bit, non-prefetchable) [size=512K]
\tCapabilities: [98] MSI-X: Enable+ Count=5 Masked-
\tCapabilities: [a0] <chain looped>
";

    #[test]
    fn parses_ids_regions_and_caps() {
        let d = parse(SAMPLE);
        assert_eq!(d.len(), 2);
        let g = &d[0];
        assert_eq!(g.bdf, "0000:03:00.0");
        assert_eq!(
            (g.class, g.vendor, g.device, g.revision),
            (0x0300, 0x1002, 0x744c, Some(0xc8))
        );
        assert_eq!(g.regions.len(), 4);
        assert_eq!(
            g.regions[0],
            Region {
                index: 0,
                io: false,
                address: Some(0x78_0000_0000),
                bits: Some(64),
                prefetchable: true,
                size: Some(16 << 30)
            }
        );
        assert_eq!(
            (g.regions[2].io, g.regions[2].address, g.regions[2].size),
            (true, Some(0xe000), Some(256))
        );
        assert!(!g.regions[3].prefetchable);
        assert_eq!(g.regions[3].size, Some(1 << 20));
        assert_eq!(
            g.caps,
            vec![
                (0x48, false, Some(0x09)),
                (0x50, false, Some(0x01)),
                (0x64, false, Some(0x10)),
                (0xa0, false, Some(0x05)),
                (0x100, true, Some(0x0b)),
                (0x150, true, Some(0x01)),
                (0x200, true, Some(0x15)),
                (0x270, true, Some(0x19)),
            ]
        );
        let v = &d[1];
        assert_eq!((v.class, v.vendor, v.device), (0xffff, 0x1af4, 0x1045));
        assert_eq!(
            v.caps,
            vec![(0x98, false, Some(0x11))],
            "markers are not capabilities"
        );
        assert!(!v.access_denied);
    }

    #[test]
    fn notices_when_lspci_was_not_root() {
        // What lspci 3.9 prints for an unprivileged user.
        let d = parse(
            "0000:00:01.0 Unassigned class [ffff]: Red Hat, Inc. Device [1af4:1045] (rev 01)\n\tCapabilities: <access denied>\n",
        );
        assert!(d[0].access_denied);
        assert!(d[0].caps.is_empty());
    }

    #[test]
    fn sizes_use_lspci_suffixes() {
        assert_eq!(parse_size("512K"), Some(512 << 10));
        assert_eq!(parse_size("32"), Some(32));
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn compare_reports_each_disagreement() {
        let d = &parse(SAMPLE)[1];
        let ours = serde_json::json!({
            "vendor": 0x1af4, "device": 0x1045, "class": 0xffff00, "revision": 1,
            "bars": [{"index": 0, "address": 0x40_0000_0000u64, "bits": 64,
                      "prefetchable": false, "kind": "memory", "size": 512 << 10}],
            "capabilities": [{"offset": 0x98, "id": 0x11, "extended": false, "name": "MSI-X"}],
        });
        let mut errs = String::new();
        assert_eq!(compare(&ours, d, &mut errs), (1, 1));
        assert_eq!(errs, "");
        let mut wrong = ours.clone();
        wrong["bars"][0]["size"] = serde_json::json!(4096);
        wrong["capabilities"][0]["id"] = serde_json::json!(5);
        compare(&wrong, d, &mut errs);
        assert!(errs.contains("BAR0 size"), "{errs}");
        assert!(errs.contains("capability at 0x98"), "{errs}");
    }
}
