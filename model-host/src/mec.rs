//! Placing queues, MQDs and the MES ring where the MEC/MES models reach
//! them (leaked host memory mapped into the model's DMA windows, like
//! [`crate::queue`]), for the mapping tests, the bench and the CLI.
//!
//! A model GPU is: one [`Mec`] (banked HQD registers + the CP model),
//! started as the bring-up starts a real one (the MEC pipes pointed at a
//! program and unhalted, the VMIDs' `SH_MEM` apertures set: see
//! [`ModelGpu::new`]), one
//! 4 KiB doorbell page standing in for BAR2 (with no NBIO in front: every
//! doorbell store reaches the MEC, and no hub: queues read memory at
//! device address = host address; a rig convention), and optionally a
//! [`MesModel`] whose ring lives in a leaked [`MesMemory`], and/or a
//! [`KiqModel`] on a leaked [`KiqMemory`].
//!
//! Placement needs only `alloc`, so the unikernel builds the same model
//! GPU and steps it inline on its one CPU; `barebell_model::thread::MecThread`
//! runs the models on an OS thread.

use alloc::boxed::Box;
use alloc::sync::Arc;
use barebell::aql::doorbell::{Doorbell, DoorbellAperture};
use barebell::aql::queue::{AqlQueue, QueueConfig, QueueMemory};
use barebell::gfx::doorbells::doorbell_index;
use barebell::gfx::kiq::{KiqMemory, KiqRing};
use barebell::gfx::mapper::QueueResources;
use barebell::gfx::mes::{MesMemory, MesRing, ProcessContext};
use barebell::gfx::mqd::{EopBuffer, MqdPage};
use barebell::ip::Generation;
use barebell::mem::Dev;
use barebell::regs::IpBases;
use barebell_model::DoorbellPage;
use barebell_model::cp::CpModel;
use barebell_model::kiq::KiqModel;
use barebell_model::mec::Mec;
use barebell_model::mes::{MesApiVersion, MesModel};
use barebell_model::{Seed, SimClock};
use core::ptr::NonNull;

/// GC segment bases the model uses: Navi31's GC bases as an example
/// input (segment 0 at 0x1260, segment 1 at 0xA000 dwords).
pub const GC_BASES: IpBases = IpBases::new(&[0x1260, 0xA000, 0x1_C000, 0x2_402C, 0, 0, 0, 0]);

/// The MEC program counter the rig writes (a rig value: the rig's MEC
/// knows no firmware blob to check it against).
pub const RIG_MEC_PC: u64 = 0x800;

/// A model GPU with everything leaked ('static), so a model may run on
/// another thread for as long as the process lives.
#[derive(Debug)]
pub struct ModelGpu {
    pub clock: &'static SimClock,
    pub mec: &'static Mec,
    /// The same MEC, for firmware models that hold it.
    pub mec_arc: Arc<Mec>,
    pub doorbells: &'static DoorbellPage,
    pub generation: Generation,
}

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

impl ModelGpu {
    /// `None` only if [`GC_BASES`] lacked the HQD window's segment.
    pub fn new(generation: Generation, seed: Seed) -> Option<Self> {
        let clock = leak(SimClock::new());
        let doorbells = Box::leak(DoorbellPage::boxed());
        let bar = doorbells as *const DoorbellPage as u64;
        let mut cp = CpModel::new(seed);
        // SAFETY: the page is leaked and only accessed atomically.
        unsafe {
            cp.dma_mut()
                .map(bar, core::mem::size_of::<DoorbellPage>() as u64)
        };
        // PM4 SET_SH_REG offsets are absolute dwords: GC segment 0's base
        // (the rig has no NBIO, so no HDP flush pair).
        cp.set_pm4_registers(barebell_model::cp::Pm4Registers {
            gc_seg0: GC_BASES.0[0],
            hdp_flush: None,
        });
        // SAFETY: the page is leaked (lives for the process),
        // `DOORBELL_SLOTS` aligned u64s, and accessed only atomically.
        let mec = unsafe {
            Mec::new(
                clock,
                GC_BASES,
                generation,
                bar,
                barebell_model::bar::DOORBELL_SLOTS,
                cp,
            )
        }?;
        // The GFX init the bring-up does after the RLC autoload
        // (`gfx_v11_0_hw_init()`): SH_MEM for every VMID, the MEC pipes
        // given a program and started. The rig MEC checks no start
        // address (it has no firmware), so any program counter does.
        let g = generation;
        barebell::gfx::init::constants(&mec, &GC_BASES, g).ok()?;
        barebell::gfx::mec::config_rs64(&mec, &GC_BASES, g, RIG_MEC_PC).ok()?;
        barebell::gfx::mec::compute_enable(&mec, &clock, &GC_BASES, g, true).ok()?;
        let mec_arc = Arc::new(mec);
        let leaked: &'static Arc<Mec> = leak(mec_arc.clone());
        let mec: &'static Mec = leaked;
        Some(ModelGpu {
            clock,
            mec,
            mec_arc,
            doorbells,
            generation,
        })
    }

    /// Maps `len` bytes at `base` for the device.
    ///
    /// # Safety
    /// As [`crate::dma::Dma::map`]: live for the process, accessed per
    /// the device protocol.
    pub unsafe fn map(&self, base: u64, len: u64) {
        // SAFETY: forwarded.
        unsafe { self.mec.cp().dma_mut().map(base, len) }
    }

    /// The BAR2 page as a doorbell aperture.
    pub fn doorbell_aperture(&self) -> DoorbellAperture {
        let base = NonNull::from(self.doorbells).cast::<u8>();
        // SAFETY: the page is leaked (lives for the process), the size of
        // a `DoorbellPage`, and accessed only atomically (the MEC model's
        // loads, doorbell stores).
        unsafe { DoorbellAperture::new(base, core::mem::size_of::<DoorbellPage>()) }
    }

    /// The doorbell for 64-bit doorbell index `index` in the BAR2 page.
    pub fn doorbell(&self, index: u32) -> Option<Doorbell> {
        self.doorbell_aperture().doorbell(index).ok()
    }

    /// `v`, leaked and mapped for the device over its whole size.
    fn place<T>(&self, v: T) -> Dev<'static, T> {
        let r: &'static T = leak(v);
        let len = core::mem::size_of::<T>() as u64;
        // SAFETY: leaked, so it stays allocated (holding only `v`) for the
        // rest of the process, and it is mapped just here into the model's
        // DMA window at its host address, which is the only context the
        // model's firmware uses; the device side follows each type's
        // protocol (rings below the announced wptr, atomics for fences).
        unsafe {
            self.map(core::ptr::from_ref(r) as u64, len);
            Dev::assume(r)
        }
    }

    /// A queue of `N` slots with its MQD page and EOP buffer, all mapped
    /// for the device, its `amd_queue_t` initialised. Not yet mapped to
    /// any HQD.
    pub fn queue<const N: usize>(
        &self,
        doorbell: u32,
        config: QueueConfig,
    ) -> Option<PlacedQueue<N>> {
        let mem = self.place(QueueMemory::<N>::new());
        let mqd = self.place(MqdPage::new());
        let eop = self.place(EopBuffer::new());
        let db = self.doorbell(doorbell)?;
        let queue = AqlQueue::new(mem.get(), db, config).ok()?;
        Some(PlacedQueue {
            queue,
            mem,
            mqd,
            eop,
            doorbell,
        })
    }

    /// The MES ring memory and its model (API v11 on gfx11, v12 on gfx12),
    /// ring doorbell `MES_RING0`.
    pub fn mes<const RING: usize>(&self) -> Option<(MesRing<'static, RING>, MesModel)> {
        let memory = self.place(MesMemory::<RING>::new());
        let doorbell = self.doorbell(doorbell_index::MES_RING0)?;
        let slot =
            self.doorbells as *const DoorbellPage as u64 + u64::from(doorbell_index::MES_RING0) * 8;
        let api = match self.generation {
            // GC 9.4.2 and 9.4.3 have no MES.
            Generation::Gfx90a | Generation::Gfx94 => return None,
            Generation::Gfx11 => MesApiVersion::V11,
            Generation::Gfx12 => MesApiVersion::V12,
        };
        let model = MesModel::new(
            self.mec_arc.clone(),
            memory.ring_address(),
            RING as u64,
            slot,
        )
        .with_api(api);
        Some((MesRing { memory, doorbell }, model))
    }

    /// The KIQ ring memory and its model, ring doorbell `KIQ`.
    pub fn kiq<const RING: usize>(&self) -> Option<(KiqRing<'static, RING>, KiqModel)> {
        let memory = self.place(KiqMemory::<RING>::new());
        let doorbell = self.doorbell(doorbell_index::KIQ)?;
        let slot =
            self.doorbells as *const DoorbellPage as u64 + u64::from(doorbell_index::KIQ) * 8;
        let model = KiqModel::new(
            self.mec_arc.clone(),
            memory.ring_address(),
            RING as u64,
            slot,
        );
        Some((KiqRing { memory, doorbell }, model))
    }

    /// KIQ ring memory plus a leaked, device-mapped MQD page and EOP
    /// buffer for bringing the KIQ up by register programming
    /// (`barebell::gfx::kiq::hqd::bring_up_on_mes`); the KIQ model is then
    /// [`KiqModel::from_mes_pipe`].
    pub fn kiq_parts<const RING: usize>(
        &self,
    ) -> (
        Dev<'static, KiqMemory<RING>>,
        Dev<'static, MqdPage>,
        Dev<'static, EopBuffer>,
    ) {
        (
            self.place(KiqMemory::new()),
            self.place(MqdPage::new()),
            self.place(EopBuffer::new()),
        )
    }

    /// MES scheduler ring memory plus a leaked, device-mapped MQD page and
    /// EOP buffer, for mapping the ring through the KIQ
    /// ([`barebell::gfx::mes::start::map_scheduler_ring`]); the MES model is then
    /// [`MesModel::from_mec`].
    pub fn mes_parts<const RING: usize>(
        &self,
    ) -> (
        Dev<'static, MesMemory<RING>>,
        Dev<'static, MqdPage>,
        Dev<'static, EopBuffer>,
    ) {
        (
            self.place(MesMemory::new()),
            self.place(MqdPage::new()),
            self.place(EopBuffer::new()),
        )
    }

    /// A leaked, device-mapped MES process context.
    pub fn process_context(&self) -> Dev<'static, ProcessContext> {
        self.place(ProcessContext::new())
    }
}

/// A queue placed by [`ModelGpu::queue`].
#[derive(Debug)]
pub struct PlacedQueue<const N: usize> {
    pub queue: AqlQueue<'static, N>,
    pub mem: Dev<'static, QueueMemory<N>>,
    pub mqd: Dev<'static, MqdPage>,
    pub eop: Dev<'static, EopBuffer>,
    pub doorbell: u32,
}

impl<const N: usize> PlacedQueue<N> {
    /// What a mapper needs; `vmid` is the HQD's VMID for direct/KIQ
    /// mapping and the process key for MES.
    pub fn resources(&self, vmid: u8) -> QueueResources<'static> {
        QueueResources::aql(self.mem, self.mqd, self.eop, self.doorbell, vmid)
    }

    /// Every byte range a process page table must map for this queue:
    /// the queue memory and the EOP buffer.
    pub fn ranges(&self) -> [(u64, u64); 2] {
        [
            (
                self.mem.address(),
                core::mem::size_of::<QueueMemory<N>>() as u64,
            ),
            (self.eop.address(), barebell::gfx::mqd::EOP_BYTES),
        ]
    }
}
