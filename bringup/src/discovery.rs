//! Step 1, discovery: the IP discovery table and every block's register
//! bases.
//!
//! Follows `amdgpu_discovery_init()` → `amdgpu_discovery_read_binary_from_mem()`:
//! wait for the IFWI (`MP0_SMN_C2PMSG_33` bit 31), read the VRAM size
//! (`RCC_CONFIG_MEMSIZE`), and copy the 10 KiB table at VRAM size − 64 KiB
//! through `MM_INDEX`/`MM_DATA` (`amdgpu_device_mm_access()`), then
//! `amdgpu_discovery_reg_base_init()`. When BAR0 reaches the table the
//! copy is made through BAR0 instead, as tinygrad's AM does on a large
//! BAR (`AMDev._run_discovery()`); Linux maps its VRAM aperture only
//! later, in `gmc_v11_0_mc_init()`.

use crate::error::{BringupError, ErrorKind, ResultAt};
use crate::sink::{Sink, Step};
use alloc::vec;
use alloc::vec::Vec;
use barebell::bus::{ALL_ONES, Block, BlockError, RegisterBus, WaitError};
use barebell::discovery::{
    Discovery, GcInfo, IpInfo, TABLE_BYTES, TMR_OFFSET, Topology, aldebaran, boot, read_from_vram,
};
use barebell::ip::{Generation, hw_id};
use barebell::platform::Platform;
use barebell::regs::IpBases;

/// `IFWI init` wait, as Linux's loop (1000 × ~1 ms).
pub const IFWI_TIMEOUT_NS: u64 = 1_000_000_000;

/// What discovery found: the blocks later steps program.
#[derive(Debug, Clone)]
pub struct Ips {
    /// VRAM size in bytes.
    pub vram_bytes: u64,
    /// Where the table was read (VRAM offset) and how.
    pub table_at: u64,
    pub read_through: &'static str,
    pub generation: Generation,
    pub gc: IpInfo,
    pub mp0: IpInfo,
    pub mp1: IpInfo,
    pub nbif: IpInfo,
    pub mmhub: IpInfo,
    pub osssys: IpInfo,
    pub sdma0: Option<IpInfo>,
    /// The display (DMU), unless absent or harvested: Linux's
    /// `amdgpu_device_has_display_hardware()` (a `DCE_HWIP` version and
    /// no `AMD_HARVEST_IP_DMU_MASK`, set from the harvest table or the
    /// entry's harvest bits, `amdgpu_discovery_harvest_ip()`).
    pub dmu: Option<IpInfo>,
    /// Every IP instance of the table (for naming registers in traces).
    pub all: Vec<IpInfo>,
    /// XCCs, SDMA instances and AIDs (multi-die parts; one XCC elsewhere).
    pub topology: Topology,
    /// The GC table, if the binary has one.
    pub gc_info: Option<GcInfo>,
}

impl Ips {
    /// Logical XCC `logical`'s GC instance (`GET_INST(GC, logical)`), with
    /// its bases: one `bus::block::Block` per XCC is made from it.
    pub fn xcc(&self, logical: usize) -> Option<IpInfo> {
        let phys = self.topology.xcc_physical(logical)?;
        self.all
            .iter()
            .rev()
            .find(|i| i.hw_id == hw_id::GC && i.instance == phys)
            .copied()
    }

    /// Every live XCC's GC instance, in logical order (`GET_INST(GC, i)`
    /// for `i` over `xcc_mask`'s population); the one GC of a gfx11/12 part.
    pub fn xccs(&self) -> Vec<IpInfo> {
        if self.generation != Generation::Gfx94 {
            return alloc::vec![self.gc];
        }
        (0..32).map_while(|l| self.xcc(l)).collect()
    }

    /// Every live AID's instance of `hw` (MMHUB, NBIO), in AID order; the
    /// one instance 0 of a gfx11/12 part.
    pub fn aids(&self, hw: u16) -> Vec<IpInfo> {
        if self.generation != Generation::Gfx94 {
            return self
                .all
                .iter()
                .rev()
                .find(|i| i.hw_id == hw && i.instance == 0)
                .copied()
                .into_iter()
                .collect();
        }
        (0..32u8).filter_map(|a| self.aid_ip(hw, a)).collect()
    }

    /// Instance `aid` of a per-AID block (MMHUB, NBIO), if the AID is live.
    pub fn aid_ip(&self, hw: u16, aid: u8) -> Option<IpInfo> {
        if self.topology.aid_mask & 1u32.checked_shl(u32::from(aid))? == 0 {
            return None;
        }
        self.all
            .iter()
            .rev()
            .find(|i| i.hw_id == hw && i.instance == aid)
            .copied()
    }
}

/// Reads and parses the table.
pub fn run<'p>(p: &'p dyn Platform, sink: &'p dyn Sink) -> Result<Ips, BringupError> {
    let s = Step::Discovery;
    let bus = crate::bus::Bus::direct(p, sink);
    if let Some(id) = p.pci_device_id().filter(|&d| aldebaran::is_aldebaran(d)) {
        return fixed_aldebaran(p, &bus, sink, id);
    }
    let mut table = vec![0u8; TABLE_BYTES];
    let (pos, how) = read_table(p, &bus, &mut table)?;
    let d = Discovery::parse(&table).at(s)?;
    let ip = |id: u16, name: &'static str| d.ip(id, 0).ok_or(ErrorKind::MissingIp { ip: name });
    let gc = ip(hw_id::GC, "GC").at(s)?;
    let generation = Generation::of_gc(gc.version.triple())
        .ok_or(ErrorKind::Unsupported {
            what: "GC",
            version: gc.version.triple(),
        })
        .at(s)?;
    let mut all = Vec::new();
    d.for_each_ip(|i| all.push(i));
    let topology = d.topology();
    let gc_info = d.gc_info().at(s)?;
    let mut dmu_harvested = false;
    d.for_each_harvested(|id, _| dmu_harvested |= id == hw_id::DMU);
    let dmu = d
        .ip(hw_id::DMU, 0)
        .filter(|i| !dmu_harvested && i.harvest == 0);
    let ips = Ips {
        vram_bytes: pos + TMR_OFFSET,
        table_at: pos,
        read_through: how,
        generation,
        gc,
        mp0: ip(hw_id::MP0, "MP0").at(s)?,
        mp1: ip(hw_id::MP1, "MP1").at(s)?,
        nbif: ip(hw_id::NBIF, "NBIF").at(s)?,
        mmhub: ip(hw_id::MMHUB, "MMHUB").at(s)?,
        osssys: ip(hw_id::OSSSYS, "OSSSYS").at(s)?,
        sdma0: d.ip(hw_id::SDMA0, 0),
        dmu,
        all,
        topology,
        gc_info,
    };
    sink.step(
        s,
        format_args!(
            "table read at VRAM {pos:#x} through {how} ({} MiB of VRAM); {} IP instances; GC {:?}, MP0 {:?}, MP1 {:?}, NBIF {:?}, MMHUB {:?}",
            ips.vram_bytes >> 20,
            d.ip_count(),
            gc.version.triple(),
            ips.mp0.version.triple(),
            ips.mp1.version.triple(),
            ips.nbif.version.triple(),
            ips.mmhub.version.triple(),
        ),
    );
    if ips.topology.aid_mask != 0 {
        report_topology(&ips, sink);
    }
    Ok(ips)
}

/// An Aldebaran (GC 9.4.2) as Linux brings it up: the IFWI wait and the
/// VRAM size as for any part, then the IP list of
/// `aldebaran_reg_base_init()` and the `CHIP_ALDEBARAN` versions
/// ([`aldebaran::ips`]) instead of the table, which Linux reads "only for
/// sysfs" and barebell does not read at all.
fn fixed_aldebaran(
    p: &dyn Platform,
    bus: &dyn RegisterBus,
    sink: &dyn Sink,
    device: u16,
) -> Result<Ips, BringupError> {
    let s = Step::Discovery;
    let vram_bytes = ifwi_and_vram(p, bus)?;
    let all: Vec<IpInfo> = aldebaran::ips().to_vec();
    let find = |hw: u16, name: &'static str| {
        all.iter()
            .find(|i| i.hw_id == hw && i.instance == 0)
            .copied()
            .ok_or(ErrorKind::MissingIp { ip: name })
            .at(s)
    };
    let gc = find(hw_id::GC, "GC")?;
    let ips = Ips {
        vram_bytes,
        table_at: vram_bytes.saturating_sub(TMR_OFFSET),
        read_through: "no table (Aldebaran's fixed IP list)",
        generation: Generation::Gfx90a,
        gc,
        mp0: find(hw_id::MP0, "MP0")?,
        mp1: find(hw_id::MP1, "MP1")?,
        nbif: find(hw_id::NBIF, "NBIF")?,
        mmhub: find(hw_id::MMHUB, "MMHUB")?,
        osssys: find(hw_id::OSSSYS, "OSSSYS")?,
        sdma0: find(hw_id::SDMA0, "SDMA0").ok(),
        dmu: None,
        topology: aldebaran::topology(),
        gc_info: None,
        all,
    };
    sink.step(
        s,
        format_args!(
            "PCI device {device:#06x} is an Aldebaran: IP list and bases as aldebaran_reg_base_init() sets them ({} IP instances, {} MiB of VRAM); GC {:?}, MP0 {:?}, MP1 {:?}, NBIO {:?}, MMHUB {:?}",
            ips.all.len(),
            vram_bytes >> 20,
            gc.version.triple(),
            ips.mp0.version.triple(),
            ips.mp1.version.triple(),
            ips.nbif.version.triple(),
            ips.mmhub.version.triple(),
        ),
    );
    Ok(ips)
}

/// The IFWI wait and `RCC_CONFIG_MEMSIZE` (VRAM bytes), with which
/// [`read_table`] begins. The boot registers sit at absolute offsets
/// (every base 0); Linux goes on after the IFWI wait runs out, so only a
/// vanished device (or a register that cannot be placed) stops here.
fn ifwi_and_vram(p: &dyn Platform, bus: &dyn RegisterBus) -> Result<u64, BringupError> {
    let s = Step::Discovery;
    let b = Block::new(bus, IpBases::default());
    let ready = boot::MP0_SMN_C2PMSG_33;
    let bit31 = 0x8000_0000;
    match b.poll(p.clock(), ready, bit31, bit31, ready.name, IFWI_TIMEOUT_NS) {
        Err(BlockError::Wait(e @ WaitError::DeviceGone { .. })) => return Err(e).at(s),
        Err(e @ BlockError::OutsideBases { .. }) => return Err(e).at(s),
        _ => {}
    }
    let mib = b.read(boot::RCC_CONFIG_MEMSIZE).at(s)?;
    if mib == ALL_ONES {
        return Err(ErrorKind::DeviceGone {
            register: boot::RCC_CONFIG_MEMSIZE.name,
        })
        .at(s);
    }
    Ok(u64::from(mib) << 20)
}

/// The multi-die layout, one line per AID and per XCC.
fn report_topology(ips: &Ips, sink: &dyn Sink) {
    let s = Step::Discovery;
    let t = &ips.topology;
    let max_cu = ips.gc_info.map(|g| g.max_cus_per_gc());
    sink.step(
        s,
        format_args!(
            "topology: {} AIDs (aid_mask {:#x}), {} XCCs (xcc_mask {:#x}), {} SDMA (sdma_mask {:#x}); gc_info v{}.{}: {} SE x {} SH x {} CU = {} CUs per XCC at most (active CUs are per-XCC registers)",
            t.num_aid(),
            t.aid_mask,
            t.num_xcc(),
            t.xcc_mask,
            t.sdma_mask.count_ones(),
            t.sdma_mask,
            ips.gc_info.map_or(0, |g| g.version.0),
            ips.gc_info.map_or(0, |g| g.version.1),
            ips.gc_info.map_or(0, |g| g.num_se),
            ips.gc_info.map_or(0, |g| g.max_sh_per_se),
            ips.gc_info.map_or(0, |g| g.max_cu_per_sh),
            max_cu.unwrap_or(0),
        ),
    );
    for aid in 0..32u8 {
        if t.aid_mask & (1 << aid) == 0 {
            continue;
        }
        let v = |hw: u16| {
            ips.aid_ip(hw, aid)
                .map(|i| i.version.triple())
                .unwrap_or((0, 0, 0))
        };
        let (mm, nb) = (v(hw_id::MMHUB), v(hw_id::NBIF));
        sink.step(
            s,
            format_args!(
                "AID {aid}: MMHUB {}.{}.{}, NBIO {}.{}.{}",
                mm.0, mm.1, mm.2, nb.0, nb.1, nb.2
            ),
        );
    }
    for (logical, phys) in t.xccs() {
        if let Some(x) = ips.xcc(logical) {
            let v = x.version.triple();
            sink.step(
                s,
                format_args!(
                    "XCC {logical}: GC instance {phys} on die {}, GC {}.{}.{}, segment 0 at dword {:#x}",
                    x.die, v.0, v.1, v.2, x.bases.0[0]
                ),
            );
        }
    }
}

/// The IFWI wait and VRAM size as `read_from_vram` does them, then the
/// table through BAR0 if BAR0 reaches it, else through `read_from_vram`.
fn read_table(
    p: &dyn Platform,
    bus: &dyn RegisterBus,
    out: &mut [u8],
) -> Result<(u64, &'static str), BringupError> {
    let s = Step::Discovery;
    let vram_bytes = ifwi_and_vram(p, bus)?;
    let vram = p.vram();
    let pos = vram_bytes.checked_sub(TMR_OFFSET);
    match pos {
        Some(pos) if vram.at(pos, TABLE_BYTES as u64).is_some() => {
            for (i, chunk) in out.chunks_exact_mut(4).take(TABLE_BYTES / 4).enumerate() {
                chunk.copy_from_slice(&vram.read32(pos + 4 * i as u64).to_le_bytes());
            }
            Ok((pos, "BAR0"))
        }
        _ => {
            let pos = read_from_vram(bus, p.clock(), IFWI_TIMEOUT_NS, out).at(s)?;
            Ok((pos, "MM_INDEX/MM_DATA"))
        }
    }
}
