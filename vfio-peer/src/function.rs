//! The model as a PCI function behind QEMU's `vfio-user-pci`: the
//! region table, the IRQ table, and a [`ServerBackend`] that turns each
//! message into model accesses.
//!
//! Regions (`VFIO_PCI_*_REGION_INDEX`):
//! - 0, BAR0: a window of VRAM, mmap'd by QEMU from the VRAM memfd, so a
//!   guest's loads and stores reach the model's VRAM without a message;
//! - 2, BAR2: the doorbells, trapped: each 64-bit store is one
//!   [`VirtualGpu::doorbell_write`], after which the device works until
//!   idle ([`VirtualGpu::run_until_idle`]) before the store completes;
//! - 4: the MSI-X table and PBA (QEMU emulates both; see [`crate::config`]);
//! - 5, BAR5: the registers, trapped: each access one call into the
//!   model's register router, in order;
//! - 6, the ROM: the VBIOS [`crate::vbios`] builds for the part;
//! - 7: configuration space ([`ConfigSpace`]).

use crate::config::{self, ConfigSpace, Effect};
use crate::memory::{GuestRam, Vram};
use crate::trace::{Access, Trace};
use crate::vbios;
use barebell::platform::Platform;
use barebell_model::vgpu::REGS_BYTES;
use barebell_model::{FilesDir, Seed, VirtualGpu, parts};
use std::fs::File;
use std::io::{Error, ErrorKind};
use vfio_bindings::bindings::vfio::{
    VFIO_IRQ_INFO_AUTOMASKED, VFIO_IRQ_INFO_EVENTFD, VFIO_IRQ_INFO_MASKABLE,
    VFIO_IRQ_INFO_NORESIZE, VFIO_IRQ_SET_ACTION_TRIGGER, VFIO_IRQ_SET_DATA_EVENTFD,
    VFIO_PCI_BAR0_REGION_INDEX, VFIO_PCI_BAR2_REGION_INDEX, VFIO_PCI_BAR4_REGION_INDEX,
    VFIO_PCI_BAR5_REGION_INDEX, VFIO_PCI_CONFIG_REGION_INDEX, VFIO_PCI_INTX_IRQ_INDEX,
    VFIO_PCI_MSIX_IRQ_INDEX, VFIO_PCI_NUM_IRQS, VFIO_PCI_NUM_REGIONS, VFIO_PCI_ROM_REGION_INDEX,
    VFIO_REGION_INFO_FLAG_MMAP, VFIO_REGION_INFO_FLAG_READ, VFIO_REGION_INFO_FLAG_WRITE,
    vfio_region_info, vfio_region_sparse_mmap_area,
};
use vfio_user::{DmaMapFlags, DmaUnmapFlags, IrqInfo, ServerBackend, ServerRegion, SparseArea};

/// Most device looks one doorbell store gets ([`VirtualGpu::run_until_idle`]).
const DOORBELL_LOOKS: u32 = 64;

/// BAR2's length (model value: a board without resizable BARs maps
/// 2 MiB of doorbells; the model's doorbell page is its first bytes).
pub const DOORBELL_BAR_BYTES: u64 = 2 << 20;
/// The model's own DMA region for a guest function (unused by a Linux
/// guest, whose system memory arrives as [`GuestRam`]; the model's
/// constructor wants one): 4 MiB.
const MODEL_DMA_BYTES: usize = 4 << 20;

/// What makes a function: the part, the visible VRAM window, the seed.
#[derive(Debug, Clone)]
pub struct Options {
    /// A model part name (`barebell_model::parts::by_name`).
    pub part: String,
    /// BAR0's length in MiB, a power of two: how much of VRAM the guest
    /// sees through the BAR (model value, as a board without resizable
    /// BAR: 256).
    pub bar0_mib: u32,
    /// The model's seed.
    pub seed: u64,
}

/// Why a function could not be built.
#[derive(Debug)]
pub enum SetupError {
    /// No model part of that name.
    UnknownPart(String),
    /// BAR0's size is not a power of two or exceeds VRAM.
    Bar0 { mib: u32, vram_mib: u32 },
    /// The VRAM memfd or a mapping failed.
    Memory(Error),
    /// The model refused to build the part.
    Model(String),
}

impl core::fmt::Display for SetupError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SetupError::UnknownPart(p) => write!(
                f,
                "no model part named {p:?} (navi31, navi48, mi300x, mi308x, mi210)"
            ),
            SetupError::Bar0 { mib, vram_mib } => write!(
                f,
                "BAR0 of {mib} MiB: it must be a power of two no larger than the part's \
                 {vram_mib} MiB of VRAM"
            ),
            SetupError::Memory(e) => write!(f, "could not back the model's VRAM: {e}"),
            SetupError::Model(e) => write!(f, "the model could not build the part: {e}"),
        }
    }
}

impl std::error::Error for SetupError {}

/// Counts of what the guest did, for the run's summary.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub reg_reads: u64,
    pub reg_writes: u64,
    pub doorbells: u64,
    pub config_writes: u64,
    /// Accesses the function refused (bad size, outside a region).
    pub refused: u64,
    /// MSI-X vector 0 signals (IH entries written with `ENABLE_INTR`).
    pub interrupts: u64,
    /// IH entries raised while no vector was set up to take them.
    pub interrupts_dropped: u64,
}

/// The model behind one vfio-user connection.
#[derive(Debug)]
pub struct ModelFunction {
    /// Drops before `vram`: the model holds addresses inside it.
    gpu: VirtualGpu,
    opts: Options,
    /// `BIF_BX0_BIOS_SCRATCH_0`'s MMIO dword.
    scratch: u32,
    /// Whether the guest reached BAR2 or BAR5 yet (after which the model
    /// is never rebuilt).
    touched: bool,
    /// Guest RAM bytes the model reaches as system memory.
    system_ram: u64,
    vram: Vram,
    bar0_bytes: u64,
    config: ConfigSpace,
    guest: GuestRam,
    /// MSI-X vector eventfds QEMU set (index = vector).
    msix: Vec<Option<File>>,
    /// The INTx eventfd QEMU set.
    intx: Option<File>,
    /// The expansion ROM's image.
    rom: Vec<u8>,
    trace: Trace,
    counts: Counts,
}

impl ModelFunction {
    /// Builds the part over a fresh VRAM memfd, reading its firmware from
    /// the system's firmware directory.
    pub fn new(opts: &Options, trace: Trace) -> Result<Self, SetupError> {
        let part =
            parts::by_name(&opts.part).ok_or_else(|| SetupError::UnknownPart(opts.part.clone()))?;
        let vram_mib = part.firmware.vram_mib;
        if !opts.bar0_mib.is_power_of_two() || opts.bar0_mib > vram_mib {
            return Err(SetupError::Bar0 {
                mib: opts.bar0_mib,
                vram_mib,
            });
        }
        let vram = Vram::new((vram_mib as usize) << 20).map_err(SetupError::Memory)?;
        let memory = vram
            .host_memory(MODEL_DMA_BYTES)
            .map_err(SetupError::Memory)?;
        let config = ConfigSpace::new(part.pci_device_id(), 0, vbios::BYTES as u32);
        let scratch = bios_scratch_dword(&part)
            .ok_or_else(|| SetupError::Model(format!("part {} lists no NBIO", opts.part)))?;
        let rom = vbios::image(&vbios::Board {
            device_id: part.pci_device_id(),
            scratch_dword: scratch,
            part_number: &format!("BAREBELL MODEL {}", part.name.to_uppercase()),
            // Aldebaran's driver takes its GC configuration from the VBIOS
            // (`gfx_v9_0_gpu_early_init()`), the discovery parts' from the
            // table.
            gfx: (part.generation == barebell::ip::Generation::Gfx90a)
                .then_some(vbios::GfxInfo::MI210),
        });
        let gpu = power_on(
            part,
            memory,
            opts.seed,
            barebell_model::vgpu::DMA_BUS,
            scratch,
        )?;
        Ok(ModelFunction {
            gpu,
            opts: opts.clone(),
            scratch,
            touched: false,
            system_ram: 0,
            vram,
            bar0_bytes: u64::from(opts.bar0_mib) << 20,
            config,
            guest: GuestRam::default(),
            msix: (0..config::MSIX_VECTORS).map(|_| None).collect(),
            intx: None,
            rom,
            trace,
            counts: Counts::default(),
        })
    }

    /// Builds the model again with the guest's RAM as its DMA region, at
    /// guest-physical addresses, so its system-memory accesses (GART and
    /// VM pages, the PSP's buffers, rings, fences) reach the guest's
    /// memory. Done while QEMU maps guest RAM, before the guest touches
    /// the function; the config space's bus-master bit carries over.
    fn rebuild_over_guest(&mut self) -> Result<(), Error> {
        let part = parts::by_name(&self.opts.part)
            .ok_or_else(|| Error::other(format!("no part {}", self.opts.part)))?;
        let (memory, ram) = self.vram.host_memory_over(&self.guest)?;
        let gpu = power_on(part, memory, self.opts.seed, 0, self.scratch)
            .map_err(|e| Error::other(e.to_string()))?;
        gpu.set_bus_master(self.config.read16(config::COMMAND) & config::COMMAND_MASTER != 0);
        self.gpu = gpu;
        self.system_ram = ram;
        Ok(())
    }

    /// Bytes of guest RAM the model reaches as system memory (0: the
    /// model's own DMA region).
    pub fn system_ram_bytes(&self) -> u64 {
        self.system_ram
    }

    /// The model device.
    pub fn gpu(&self) -> &VirtualGpu {
        &self.gpu
    }

    /// What the guest did so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Bytes of guest RAM QEMU has mapped for the function.
    pub fn guest_ram_bytes(&self) -> u64 {
        self.guest.mapped_bytes()
    }

    /// The trace, flushed.
    pub fn finish_trace(&mut self) -> std::io::Result<()> {
        self.trace.flush()
    }

    /// The region table QEMU reads (`VFIO_USER_DEVICE_GET_REGION_INFO`).
    pub fn regions(&self) -> Vec<ServerRegion> {
        let rw = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
        (0..VFIO_PCI_NUM_REGIONS)
            .map(|index| {
                let (size, flags, mmap_fd) = match index {
                    VFIO_PCI_BAR0_REGION_INDEX => (
                        self.bar0_bytes,
                        rw | VFIO_REGION_INFO_FLAG_MMAP,
                        Some(self.vram.raw_fd()),
                    ),
                    VFIO_PCI_BAR2_REGION_INDEX => (DOORBELL_BAR_BYTES, rw, None),
                    VFIO_PCI_BAR4_REGION_INDEX => (config::MSIX_BAR_BYTES, rw, None),
                    VFIO_PCI_BAR5_REGION_INDEX => (REGS_BYTES as u64, rw, None),
                    VFIO_PCI_CONFIG_REGION_INDEX => (config::BYTES as u64, rw, None),
                    VFIO_PCI_ROM_REGION_INDEX => {
                        (vbios::BYTES as u64, VFIO_REGION_INFO_FLAG_READ, None)
                    }
                    _ => (0, 0, None),
                };
                // The crate sends a region's fd only with a capability
                // list: one sparse-mmap area covering the whole region.
                let sparse_areas = match mmap_fd {
                    Some(_) => vec![SparseArea {
                        area: vfio_region_sparse_mmap_area { offset: 0, size },
                    }],
                    None => Vec::new(),
                };
                ServerRegion {
                    region_info: vfio_region_info {
                        argsz: core::mem::size_of::<vfio_region_info>() as u32,
                        flags,
                        index,
                        cap_offset: 0,
                        size,
                        offset: 0,
                    },
                    sparse_areas,
                    mmap_fd,
                }
            })
            .collect()
    }

    /// The IRQ table (`VFIO_USER_DEVICE_GET_IRQ_INFO`): INTx (pin A, as
    /// the config space declares) and MSI-X.
    pub fn irqs() -> Vec<IrqInfo> {
        (0..VFIO_PCI_NUM_IRQS)
            .map(|index| {
                let (flags, count) = match index {
                    VFIO_PCI_INTX_IRQ_INDEX => (
                        VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED,
                        1,
                    ),
                    VFIO_PCI_MSIX_IRQ_INDEX => (
                        VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE,
                        u32::from(config::MSIX_VECTORS),
                    ),
                    _ => (0, 0),
                };
                IrqInfo {
                    index,
                    flags,
                    count,
                }
            })
            .collect()
    }

    /// Records a refused access. A guest's MMIO store is posted and
    /// gets no answer, and a read the function cannot complete reads all
    /// ones (an Unsupported Request), so a refusal never goes back to
    /// the client as an error: it is counted and traced.
    fn refuse(&mut self, what: String) {
        self.counts.refused += 1;
        self.trace.record(Access::Refused(&what));
    }

    fn reg_read(&mut self, offset: u64, data: &mut [u8]) -> Result<(), Error> {
        let at = match reg_dword(offset, data.len()) {
            Some(at) => at,
            None => {
                let n = data.len();
                self.refuse(format!("BAR5 read of {n} bytes at {offset:#x}"));
                data.fill(0xFF);
                return Ok(());
            }
        };
        self.touched = true;
        // One look by the device between two host looks, as the
        // bring-up's waits give it.
        self.gpu.pause();
        self.deliver_interrupts();
        let mut out = Vec::with_capacity(data.len());
        for i in 0..data.len().div_ceil(4) {
            let value = self.gpu.regs().read32(at + 4 * i);
            self.counts.reg_reads += 1;
            self.trace.record(Access::RegRead {
                offset: (at + 4 * i) as u64,
                value,
            });
            out.extend_from_slice(&value.to_le_bytes());
        }
        let sub = (offset as usize) & 3;
        data.copy_from_slice(&out[sub..sub + data.len()]);
        Ok(())
    }

    fn reg_write(&mut self, offset: u64, data: &[u8]) -> Result<(), Error> {
        if !data.len().is_multiple_of(4) || reg_dword(offset, data.len()).is_none() {
            let n = data.len();
            self.refuse(format!(
                "BAR5 write of {n} bytes at {offset:#x} (the model takes whole dwords)"
            ));
            return Ok(());
        }
        self.touched = true;
        for (i, w) in data.chunks_exact(4).enumerate() {
            let value = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            let at = offset as usize + 4 * i;
            self.gpu.regs().write32(at, value);
            self.counts.reg_writes += 1;
            self.trace.record(Access::RegWrite {
                offset: at as u64,
                value,
            });
        }
        Ok(())
    }

    fn doorbell(&mut self, offset: u64, data: &[u8]) -> Result<(), Error> {
        let (result, value) = match data.len() {
            8 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(data);
                let v = u64::from_le_bytes(b);
                (self.gpu.doorbell_write(offset, v), v)
            }
            // WDOORBELL32() (the IH's read pointer, `ih_v6_0_set_rptr()`).
            4 if offset.is_multiple_of(4) => {
                let mut b = [0u8; 4];
                b.copy_from_slice(data);
                let v = u32::from_le_bytes(b);
                (self.gpu.doorbell_write32(offset, v), u64::from(v))
            }
            n => {
                self.refuse(format!(
                    "doorbell store of {n} bytes at BAR2 {offset:#x} (the model takes aligned \
                     32- and 64-bit stores)"
                ));
                return Ok(());
            }
        };
        self.touched = true;
        self.counts.doorbells += 1;
        self.trace.record(Access::Doorbell { offset, value });
        if let Err(why) = result {
            self.refuse(why);
            return Ok(());
        }
        // The device works on what the doorbell announced before the
        // store completes for the guest, which may next poll memory
        // (a MES or KIQ fence) without touching a register.
        self.gpu.run_until_idle(DOORBELL_LOOKS);
        self.deliver_interrupts();
        Ok(())
    }

    /// Signals MSI-X vector 0 if the IH wrote entries with `ENABLE_INTR`
    /// since the last look (amdgpu asks for one vector,
    /// `amdgpu_irq_init()`; QEMU applies the guest's MSI-X masking).
    fn deliver_interrupts(&mut self) {
        if self.gpu.ih().take_interrupts() == 0 {
            return;
        }
        if self.signal(0) {
            self.counts.interrupts += 1;
        } else {
            self.counts.interrupts_dropped += 1;
        }
    }

    fn config_write(&mut self, offset: u64, data: &[u8]) -> Result<(), Error> {
        self.counts.config_writes += 1;
        let mut v = [0u8; 4];
        let n = data.len().min(4);
        v[..n].copy_from_slice(&data[..n]);
        self.trace.record(Access::ConfigWrite {
            offset,
            value: u32::from_le_bytes(v),
        });
        match self.config.write(offset, data) {
            None => {
                let n = data.len();
                self.refuse(format!("config write of {n} bytes at {offset:#x}"));
                Ok(())
            }
            Some(Effect::BusMaster(on)) => {
                self.gpu.set_bus_master(on);
                Ok(())
            }
            Some(Effect::Aspm(0)) => {
                Platform::disable_aspm(&self.gpu);
                Ok(())
            }
            Some(_) => Ok(()),
        }
    }

    /// Signals MSI-X vector `vector`; whether an eventfd was there.
    pub fn signal(&self, vector: usize) -> bool {
        use std::io::Write;
        match self.msix.get(vector).and_then(|f| f.as_ref()) {
            Some(mut f) => f.write_all(&1u64.to_ne_bytes()).is_ok(),
            None => false,
        }
    }
}

/// Builds the part over `memory` with its DMA region at `dma_bus`, and
/// does what the board's power-on does: the VBIOS posts the ASIC and
/// says so in `BIOS_SCRATCH_7` (`amdgpu_atombios_scratch_need_asic_init()`
/// reads it; the ROM carries no command table to post with).
fn power_on(
    part: barebell_model::parts::Part,
    memory: barebell_model::vgpu::HostMemory,
    seed: u64,
    dma_bus: u64,
    scratch: u32,
) -> Result<VirtualGpu, SetupError> {
    let fw = FilesDir::system();
    let gpu = VirtualGpu::new_at(part, &fw, memory, Seed(seed), dma_bus)
        .map_err(|e| SetupError::Model(e.to_string()))?;
    gpu.regs()
        .write32((scratch as usize + 7) * 4, vbios::POSTED);
    Ok(gpu)
}

/// `BIF_BX0_BIOS_SCRATCH_0` as an absolute MMIO dword: offset 0x38 in the
/// NBIO's segment 1 (`nbio_4_3_0_offset.h` and `nbio_7_9_0_offset.h`
/// agree), the segment's base from the part's own description (die 0's
/// NBIO, the bits above 29 dropped as `amdgpu_discovery_reg_base_init()`
/// drops them).
fn bios_scratch_dword(part: &barebell_model::parts::Part) -> Option<u32> {
    let nbio = part
        .firmware
        .desc
        .dies
        .first()?
        .iter()
        .find(|ip| ip.hw_id == barebell_model::discovery::NBIF_HWID && ip.instance == 0)?;
    let seg1 = nbio.bases.get(1)? & 0x3FFF_FFFF;
    u32::try_from(seg1 + 0x38).ok()
}

/// BAR5's byte offset of an access of `len` bytes at `offset` (whole
/// dwords or a part of one), inside the BAR.
fn reg_dword(offset: u64, len: usize) -> Option<usize> {
    let at = usize::try_from(offset).ok()? & !3;
    let end = usize::try_from(offset).ok()?.checked_add(len)?;
    (len > 0 && end <= REGS_BYTES && (len >= 4 || end <= at + 4)).then_some(at)
}

impl ServerBackend for ModelFunction {
    fn region_read(&mut self, region: u32, offset: u64, data: &mut [u8]) -> Result<(), Error> {
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => {
                if self.config.read(offset, data).is_none() {
                    let n = data.len();
                    self.refuse(format!("config read of {n} bytes at {offset:#x}"));
                    data.fill(0xFF);
                }
                Ok(())
            }
            VFIO_PCI_BAR5_REGION_INDEX => self.reg_read(offset, data),
            VFIO_PCI_BAR0_REGION_INDEX => {
                let vram = self.gpu.vram();
                let end = offset.saturating_add(data.len() as u64);
                if end > self.bar0_bytes {
                    self.refuse(format!("BAR0 read past the window at {offset:#x}"));
                    data.fill(0xFF);
                    return Ok(());
                }
                // SAFETY: `[offset, end)` lies inside BAR0's window, which
                // is inside the model's live VRAM mapping.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        vram.host.as_ptr().add(offset as usize),
                        data.as_mut_ptr(),
                        data.len(),
                    )
                };
                Ok(())
            }
            VFIO_PCI_ROM_REGION_INDEX => {
                let at = usize::try_from(offset).unwrap_or(usize::MAX);
                match at
                    .checked_add(data.len())
                    .and_then(|end| self.rom.get(at..end))
                {
                    Some(bytes) => data.copy_from_slice(bytes),
                    None => {
                        self.refuse(format!("ROM read past the image at {offset:#x}"));
                        data.fill(0xFF);
                    }
                }
                Ok(())
            }
            // Doorbells and the MSI-X BAR read as zero (QEMU answers the
            // table and PBA itself).
            _ => {
                data.fill(0);
                Ok(())
            }
        }
    }

    fn region_write(&mut self, region: u32, offset: u64, data: &[u8]) -> Result<(), Error> {
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => self.config_write(offset, data),
            VFIO_PCI_BAR5_REGION_INDEX => self.reg_write(offset, data),
            VFIO_PCI_BAR2_REGION_INDEX => self.doorbell(offset, data),
            VFIO_PCI_BAR0_REGION_INDEX => {
                let vram = self.gpu.vram();
                let end = offset.saturating_add(data.len() as u64);
                if end > self.bar0_bytes {
                    self.refuse(format!("BAR0 write past the window at {offset:#x}"));
                    return Ok(());
                }
                // SAFETY: as in `region_read`.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        data.as_ptr(),
                        vram.host.as_ptr().add(offset as usize),
                        data.len(),
                    )
                };
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn dma_map(
        &mut self,
        flags: DmaMapFlags,
        offset: u64,
        address: u64,
        size: u64,
        fd: Option<File>,
    ) -> Result<(), Error> {
        self.trace.record(Access::DmaMap {
            iova: address,
            size,
        });
        let write = flags.contains(DmaMapFlags::WRITE);
        self.guest.map(address, size, fd.as_ref(), offset, write)?;
        // QEMU maps low RAM in pieces (below the VGA hole first): until
        // the pieces make whole chunks there is nothing to rebuild over,
        // and the map itself still succeeds.
        if !self.touched
            && self.guest.has_low_ram()
            && let Err(e) = self.rebuild_over_guest()
        {
            let why = format!("guest RAM not (yet) the model's system memory: {e}");
            self.trace.record(Access::Refused(&why));
        }
        Ok(())
    }

    fn dma_unmap(&mut self, flags: DmaUnmapFlags, address: u64, size: u64) -> Result<(), Error> {
        if flags.contains(DmaUnmapFlags::UNMAP_ALL) {
            self.guest.unmap(0, u64::MAX);
        } else {
            self.guest.unmap(address, size);
        }
        Ok(())
    }

    fn reset(&mut self) -> Result<(), Error> {
        // A function-level reset of the model is not modelled: the model
        // has the mode-1 reset the SMU performs, not FLR. The table says
        // the function is not resettable, so QEMU should not ask.
        let why = "device reset (FLR) is not modelled";
        self.refuse(why.into());
        Err(Error::new(ErrorKind::Unsupported, why))
    }

    fn set_irqs(
        &mut self,
        index: u32,
        flags: u32,
        start: u32,
        count: u32,
        fds: Vec<File>,
    ) -> Result<(), Error> {
        let trigger = flags & VFIO_IRQ_SET_ACTION_TRIGGER != 0;
        let eventfd = flags & VFIO_IRQ_SET_DATA_EVENTFD != 0;
        if index == VFIO_PCI_INTX_IRQ_INDEX {
            // QEMU sets INTx up first and masks or unmasks it as the
            // guest's COMMAND.INTX_DISABLE moves; only the eventfd is kept.
            if trigger {
                self.intx = if eventfd {
                    fds.into_iter().next()
                } else {
                    None
                };
            }
            return Ok(());
        }
        if index != VFIO_PCI_MSIX_IRQ_INDEX {
            let why = format!("SET_IRQS on index {index} (INTx and MSI-X only)");
            self.refuse(why.clone());
            return Err(Error::new(ErrorKind::InvalidInput, why));
        }
        if !trigger {
            return Ok(());
        }
        if count == 0 {
            self.msix.iter_mut().for_each(|v| *v = None);
            return Ok(());
        }
        let range = start as usize..(start as usize).saturating_add(count as usize);
        // An eventfd list with no descriptors is QEMU releasing the
        // vectors (its fd -1 is not sent over the socket).
        if eventfd && fds.is_empty() && range.end <= self.msix.len() {
            self.msix[range].iter_mut().for_each(|v| *v = None);
            return Ok(());
        }
        if range.end > self.msix.len() || (eventfd && fds.len() != count as usize) {
            let why = format!(
                "SET_IRQS vectors {}..{} with {} fds",
                range.start,
                range.end,
                fds.len()
            );
            self.refuse(why.clone());
            return Err(Error::new(ErrorKind::InvalidInput, why));
        }
        if eventfd {
            for (slot, fd) in self.msix[range].iter_mut().zip(fds) {
                *slot = Some(fd);
            }
        }
        Ok(())
    }
}
