//! Which device a command drives: the device model (the default) or a GPU
//! through VFIO or sysfs. Either way the command gets a [`Platform`] and
//! runs the same code on it.

use barebell::platform::Platform;
use barebell_bringup::{FirmwareDir, Mapping};
use barebell_host::HwPlatform;
use barebell_model::vgpu::HostMemory;
use barebell_model::{FilesDir, Seed, VirtualGpu};
use barebell_pcie::Bdf;
use clap::{Args, ValueEnum};

/// Bytes of modelled VRAM backed by host memory (BAR0 of the model): the
/// bring-up's VRAM allocations (VBIOS hole, page tables, TMR) fit below.
pub const MODEL_BAR0_BYTES: usize = 64 << 20;

/// A model part.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartArg {
    /// Navi31-class, gfx11: GC 11.0.0, MP0 13.0.0, NBIO 4.3.0 (MES API v11).
    Navi31,
    /// Navi48-class, gfx12: GC 12.0.1, MP0 14.0.3, NBIF 6.3.1 (uni-MES,
    /// API v12).
    Navi48,
    /// MI300X, GC 9.4.3 (gfx942): 8 XCCs on 4 AIDs, MP0 13.0.6, NBIO 7.9
    /// (no MES: mappings hws, direct, kiq).
    Mi300x,
    /// MI308X, GC 9.4.3: modelled as 4 XCCs x 20 CUs (a model choice), as
    /// mi300x otherwise.
    Mi308x,
    /// MI210 (Aldebaran), GC 9.4.2 (gfx90a): one XCC, MP0 13.0.2, NBIO
    /// 7.4.4; queues mapped `hws`, `kiq` or `direct` (no SDMA yet).
    Mi210,
}

impl PartArg {
    pub fn name(self) -> &'static str {
        match self {
            PartArg::Navi31 => "navi31",
            PartArg::Navi48 => "navi48",
            PartArg::Mi300x => "mi300x",
            PartArg::Mi308x => "mi308x",
            PartArg::Mi210 => "mi210",
        }
    }

    pub fn part(self) -> barebell_model::Part {
        match self {
            PartArg::Navi31 => barebell_model::parts::navi31(),
            PartArg::Navi48 => barebell_model::parts::navi48(),
            PartArg::Mi300x => barebell_model::parts::mi300x(),
            PartArg::Mi308x => barebell_model::parts::mi308x(),
            PartArg::Mi210 => barebell_model::parts::mi210(),
        }
    }

    /// The mapping KFD uses on the part: MES on gfx11/gfx12, the HWS
    /// runlist (CPSCH) on GC 9.4.3 and GC 9.4.2, which have no MES.
    pub fn default_mapping(self) -> Mapping {
        if self.gfx9() {
            Mapping::Hws
        } else {
            Mapping::Mes
        }
    }

    /// GC 9.4.3 or GC 9.4.2: no MES, the HWS on the MEC.
    fn gfx9(self) -> bool {
        matches!(
            self.part().generation,
            barebell::ip::Generation::Gfx94 | barebell::ip::Generation::Gfx90a
        )
    }

    /// `mapping`, refused before the device is touched when the part has
    /// no such path: no MES on GC 9.4.3 or 9.4.2, no HWS runlist on
    /// gfx11/gfx12.
    pub fn check_mapping(self, mapping: Mapping) -> Result<Mapping, String> {
        let gc = match self.part().generation {
            barebell::ip::Generation::Gfx90a => "GC 9.4.2",
            _ => "GC 9.4.3",
        };
        match (self.gfx9(), mapping) {
            (true, Mapping::Mes) => Err(format!(
                "--mapping mes: {} ({gc}) has no MES; use --mapping hws (the default there, KFD's CPSCH), kiq or direct",
                self.name()
            )),
            (false, Mapping::Hws) => Err(format!(
                "--mapping hws: {} schedules user queues with MES; use --mapping mes (the default there), kiq or direct",
                self.name()
            )),
            _ => Ok(mapping),
        }
    }
}

/// The device flags: one of `--model`, `--vfio`, `--sysfs` (none means
/// the model), and `--part` with the model.
#[derive(Args, Debug, Clone)]
#[group(skip)]
pub struct TargetArgs {
    /// Run against the built-in device model (the default).
    #[arg(long, conflicts_with_all = ["vfio", "sysfs"])]
    pub model: bool,
    /// UNVERIFIED ON HARDWARE. Drive the GPU at BDF (e.g. 0000:03:00.0)
    /// through VFIO: the function must be bound to vfio-pci and sit in an
    /// IOMMU group. Never run on a GPU.
    #[arg(long, value_name = "BDF", value_parser = parse_bdf, conflicts_with = "sysfs")]
    pub vfio: Option<Bdf>,
    /// UNVERIFIED ON HARDWARE. Drive the GPU at BDF through sysfs
    /// `resourceN` mmaps: needs root, no driver bound (amdgpu unbound),
    /// and the IOMMU off or in passthrough (DMA uses physical addresses).
    /// Never run on a GPU.
    #[arg(long, value_name = "BDF", value_parser = parse_bdf)]
    pub sysfs: Option<Bdf>,
    /// Required with --sysfs: without an IOMMU the GPU writes host memory
    /// by physical address, and barebell cannot guarantee a safe
    /// teardown. It tears down on every exit it sees (success, errors,
    /// SIGINT, SIGTERM, SIGPIPE), but after SIGKILL, an abort or a crash
    /// the GPU keeps the addresses of pages the kernel then gives to
    /// others. The pages are locked shared hugepages, MADV_DONTFORK;
    /// `bringup` re-reads their physical addresses before and after the
    /// run. Prefer --vfio.
    #[arg(long, requires = "sysfs")]
    pub unsafe_physical_dma: bool,
    /// Which model part (the model only: a GPU is what it is).
    #[arg(long, value_enum, default_value = "navi31", conflicts_with_all = ["vfio", "sysfs"])]
    pub part: PartArg,
    /// The model only, MI300 parts (mi300x, mi308x): make the part node N
    /// (0 to 7) of an XGMI hive of 8 GPUs, with 256 GiB per node's segment
    /// (a model value). Its hubs report the place in
    /// MC_VM_XGMI_LFB_CNTL/SIZE, its VRAM sits at node N's segment of the
    /// hive's physical address space, and a mode-1 reset of it alone is
    /// refused (a hive is reset as a whole).
    #[arg(long, value_name = "N", conflicts_with_all = ["vfio", "sysfs"])]
    pub node: Option<u8>,
}

fn parse_bdf(s: &str) -> Result<Bdf, String> {
    Bdf::parse(s).map_err(|e| e.to_string())
}

/// A hardware target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hardware {
    Vfio(Bdf),
    Sysfs(Bdf),
}

impl core::fmt::Display for Hardware {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Hardware::Vfio(b) => write!(f, "vfio {b}"),
            Hardware::Sysfs(b) => write!(f, "sysfs {b}"),
        }
    }
}

impl TargetArgs {
    /// The hardware target, or `None` for the model.
    pub fn hardware(&self) -> Option<Hardware> {
        match (self.vfio, self.sysfs) {
            (Some(b), _) => Some(Hardware::Vfio(b)),
            (None, Some(b)) => Some(Hardware::Sysfs(b)),
            (None, None) => None,
        }
    }
}

/// An opened device.
#[derive(Debug)]
pub enum Device {
    /// A model part, whichever generation (one `barebell_model::VirtualGpu`).
    Model(Box<VirtualGpu>),
    Hw(Box<HwPlatform>),
}

/// The model of `part` over `memory`.
pub fn model_device(
    part: PartArg,
    fw: &FirmwareDir,
    memory: HostMemory,
    seed: u64,
) -> Result<Box<VirtualGpu>, String> {
    VirtualGpu::new(part.part(), &FilesDir(fw.0.clone()), memory, Seed(seed))
        .map(Box::new)
        .map_err(|e| format!("building the model {}: {e}", part.name()))
}

/// Opens what `t` names; a model device's dispatches stop when a stop
/// signal arrives or a kernel's wall-clock bound runs out.
pub fn open(t: &TargetArgs, fw: &FirmwareDir, seed: u64) -> Result<Device, String> {
    let d = open_device(t, fw, seed)?;
    install_stop_hook(&d);
    Ok(d)
}

/// The model device's shader engines stop a dispatch when a stop signal
/// arrives or the kernel's wall-clock bound runs out.
pub fn install_stop_hook(device: &Device) {
    let hook = barebell_isa::launch::StopHook(Some(crate::stop::kernel_should_stop));
    match device {
        Device::Model(m) => m.cp().shader.stop = hook,
        Device::Hw(_) => {}
    }
}

/// The model of `part` as node `node` of an XGMI hive ([`Part::in_hive`]).
///
/// [`Part::in_hive`]: barebell_model::Part::in_hive
pub fn hive_model_device(
    part: PartArg,
    node: u8,
    fw: &FirmwareDir,
    memory: HostMemory,
    seed: u64,
) -> Result<Box<VirtualGpu>, String> {
    let p = part
        .part()
        .in_hive(node)
        .map_err(|e| format!("--node {node}: {e}"))?;
    VirtualGpu::new(p, &FilesDir(fw.0.clone()), memory, Seed(seed))
        .map(Box::new)
        .map_err(|e| format!("building the model {} (node {node}): {e}", part.name()))
}

fn open_device(t: &TargetArgs, fw: &FirmwareDir, seed: u64) -> Result<Device, String> {
    match t.hardware() {
        None => {
            let mem = HostMemory::allocate(MODEL_BAR0_BYTES)
                .map_err(|e| format!("building the model {}: {e}", t.part.name()))?;
            Ok(Device::Model(match t.node {
                Some(n) => hive_model_device(t.part, n, fw, mem, seed)?,
                None => model_device(t.part, fw, mem, seed)?,
            }))
        }
        Some(Hardware::Vfio(b)) => HwPlatform::open(barebell_host::Target::Vfio(b))
            .map(|p| Device::Hw(Box::new(p)))
            .map_err(|e| e.to_string()),
        Some(Hardware::Sysfs(b)) if !t.unsafe_physical_dma => Err(format!(
            "--sysfs {b}: refusing DMA by physical address without --unsafe-physical-dma: with no IOMMU a run that dies without its teardown (SIGKILL, a crash) leaves the GPU writing to pages the kernel reuses; use --vfio, or pass the flag to accept that"
        )),
        Some(Hardware::Sysfs(b)) => HwPlatform::open(barebell_host::Target::Sysfs(b))
            .map(|p| Device::Hw(Box::new(p)))
            .map_err(|e| e.to_string()),
    }
}

impl Device {
    pub fn platform(&self) -> &dyn Platform {
        match self {
            Device::Model(m) => &**m,
            Device::Hw(h) => &**h,
        }
    }

    pub fn name(&self) -> &str {
        self.platform().name()
    }

    /// One line saying what was opened.
    pub fn describe(&self) -> String {
        match self {
            Device::Model(m) => {
                let p = m.part();
                let xccs = p.xcc.map_or(String::new(), |x| {
                    format!(", {} XCCs x {} CUs declared", x.xccs, x.cus_per_xcc)
                });
                format!(
                    "{}: the device model{} ({} MiB of VRAM, BAR0 backed for the first {} MiB{xccs}; DMA region at host {:#x})",
                    m.name(),
                    if p.generation == barebell::ip::Generation::Gfx94 {
                        ", GC 9.4.3"
                    } else {
                        ""
                    },
                    p.firmware.vram_mib,
                    MODEL_BAR0_BYTES >> 20,
                    Platform::dma(&**m).host.as_ptr() as usize
                )
            }
            Device::Hw(h) => h.describe(),
        }
    }

    /// The model's own check that nothing can still reach memory
    /// (`VirtualGpu::quiescent`); `None` on a GPU, which only the
    /// teardown report speaks for.
    pub fn quiescence(&self) -> Option<Result<(), String>> {
        match self {
            Device::Model(m) => Some(m.quiescent().map_err(|e| e.to_string())),
            Device::Hw(_) => None,
        }
    }

    /// What the device side knows about a failure (the model's firmware
    /// stand-ins' logs), to append to an error.
    pub fn diagnostics(&self) -> String {
        match self {
            Device::Model(m) => m.diagnostics().iter().map(|l| format!("\n{l}")).collect(),
            Device::Hw(_) => sigbus_note(
                barebell_pcie::sigbus::device_gone(),
                barebell_pcie::sigbus::faults(),
            ),
        }
    }

    /// `--sysfs`: whether the DMA region's pages are still at the physical
    /// addresses the device was given (always so for the model and VFIO).
    pub fn recheck_dma(&self) -> Result<(), String> {
        match self {
            Device::Model(_) => Ok(()),
            Device::Hw(h) => h.recheck_dma(),
        }
    }

    /// Ends the run: the model is dropped; a GPU's memory is released
    /// after a complete teardown (`torn_down`), else kept for the rest of
    /// the process (see [`HwPlatform::retire`]).
    pub fn finish(self, torn_down: bool) {
        match self {
            Device::Model(m) => drop(m),
            // After a complete teardown nothing on the device points at
            // the DMA region or has bus mastering: it can go back.
            Device::Hw(h) if torn_down => drop(h),
            Device::Hw(h) => h.retire(),
        }
    }
}

/// What the SIGBUS handler saw (`barebell_pcie::sigbus`): a BAR access
/// that faulted means the function stopped decoding memory (a reset, a
/// function-level reset, or a device that fell off the bus), which is
/// why registers then read all ones.
fn sigbus_note(gone: bool, faults: usize) -> String {
    if !gone {
        return String::new();
    }
    format!(
        "\nthe GPU stopped answering: {faults} BAR access(es) raised SIGBUS (its memory decode is off: a reset, or the device is gone); registers read all ones from then on"
    )
}

/// `--mapping`: how the user queue reaches an HQD.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum MappingArg {
    /// MES ADD_QUEUE (what KFD does on gfx11+).
    Mes,
    /// Direct HQD register load (what tinygrad's AM driver does).
    Direct,
    /// The kernel's compute-queue path. gfx11: PM4 MAP_QUEUES on the
    /// KIQ after SET_RESOURCES, what Linux 6.12 does only with MES
    /// firmware below 0x47 (newer firmware maps KCQs through MES
    /// `map_legacy_queue`): a hybrid of barebell's with the MES firmware
    /// it loads. gfx12: MES `map_legacy_queue` on pipe 1, as Linux. GC
    /// 9.4.3: MAP_QUEUES on each XCC's KIQ.
    Kiq,
    /// KFD's CPSCH on GC 9.4.3: the HIQ mapped through the KIQ, then a
    /// runlist on the HIQ for the hardware scheduler (HWS).
    Hws,
}

impl From<MappingArg> for Mapping {
    fn from(m: MappingArg) -> Mapping {
        match m {
            MappingArg::Mes => Mapping::Mes,
            MappingArg::Direct => Mapping::Direct,
            MappingArg::Kiq => Mapping::Kiq,
            MappingArg::Hws => Mapping::Hws,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sigbus_note;

    #[test]
    fn a_sigbus_is_reported_in_the_users_words() {
        assert_eq!(sigbus_note(false, 0), "");
        let n = sigbus_note(true, 3);
        assert!(
            n.contains("the GPU stopped answering: 3 BAR access(es) raised SIGBUS"),
            "{n}"
        );
    }
}
