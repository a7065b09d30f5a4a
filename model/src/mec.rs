//! The MEC's hardware queue slots (HQDs) and the GC registers around them.
//!
//! The register file is banked the way `GRBM_GFX_CNTL` banks it: the HQD
//! window `CP_MQD_BASE_ADDR ..= CP_HQD_PQ_WPTR_HI` exists once per
//! ME/pipe/queue, and an access goes to the bank the last `GRBM_GFX_CNTL`
//! write selected (`soc21_grbm_select()`). Everything else is one flat
//! register file.
//!
//! A slot comes alive when `CP_HQD_ACTIVE.ACTIVE` is written to 1 (direct
//! HQD programming), or when MES or the KIQ model maps an MQD through
//! [`Mec::map_mqd`]. Either way the model checks what the CP needs to run
//! an AQL queue and then hands it to the [`CpModel`]:
//! - `CP_HQD_AQL_CONTROL` is non-zero (AQL packet processing);
//! - `QUEUE_SIZE` encodes a ring of at least four packets;
//! - the doorbell is enabled (direct loads) and inside
//!   `CP_MEC_DOORBELL_RANGE_LOWER..=UPPER`;
//! - an EOP buffer is given;
//! - the rptr report address is `amd_queue_t::read_dispatch_id`, whence the
//!   CP model finds the rest of the descriptor.
//!
//! `CP_HQD_DEQUEUE_REQUEST` on an active slot unmaps the queue from the CP
//! model (in-flight work drains) and clears ACTIVE, unless the
//! `dequeue_never_completes` fault is set.

use crate::SimClock;
use crate::cp::{CpError, CpModel, HqdBinding, Step};
use crate::psp::LoadedFirmware;
use crate::regfile::ACCESS_NS;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::aql::queue::AmdQueue;
use barebell::bus::{ALL_ONES, RegisterBus};
use barebell::gfx::grbm::GrbmGfxCntl;
use barebell::gfx::mapper::HqdRegs;
use barebell::gfx::mqd::{HQD_DWORDS, HqdRegisters};
use barebell::ip::Generation;
use barebell::regs::IpBases;
use core::mem::offset_of;
use spin::{Mutex, MutexGuard};

/// Fault switches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MecFaults {
    /// A dequeue request is accepted but the slot never goes inactive (a
    /// wave that never drains).
    pub dequeue_never_completes: bool,
}

/// Why the model refused to run a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MecError {
    NotAql,
    QueueSize {
        field: u8,
    },
    DoorbellDisabled,
    DoorbellOutOfRange {
        byte_offset: u64,
        lower: u32,
        upper: u32,
    },
    DoorbellInUse {
        dword: u32,
    },
    NoEop,
    /// `rptr_report` and `wptr_poll` are not `read_dispatch_id` and
    /// `write_dispatch_id` of one `amd_queue_t`.
    NotAnAqlDescriptor {
        rptr: u64,
        wptr: u64,
    },
    Bind(CpError),
    /// The slot already runs a queue.
    SlotBusy,
}

/// What happened to a slot, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MecEvent {
    Activated {
        me: u8,
        pipe: u8,
        queue: u8,
        cp_queue: usize,
    },
    Refused {
        me: u8,
        pipe: u8,
        queue: u8,
        why: MecError,
    },
    Dequeued {
        me: u8,
        pipe: u8,
        queue: u8,
    },
    /// A MES pipe was unhalted whose code the RLC autoload never put in
    /// place ([`crate::psp::LoadedFirmware::mes_pipe`]): it does not run.
    MesPipeWithoutCode {
        pipe: u8,
    },
    /// A MES pipe's ring was loaded by register programming (ME 3).
    MesRingLoaded {
        pipe: u8,
    },
    /// A PM4 queue on the slot `RLC_CP_SCHEDULERS` names as the KIQ came
    /// up; the KIQ model runs it (see [`Mec::kiq_hqd`]).
    KiqActivated {
        me: u8,
        pipe: u8,
        queue: u8,
    },
}

/// The MES scheduler ring as the MQD the KIQ mapped describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MesRingHqd {
    pub ring: u64,
    pub ring_dwords: u64,
    pub doorbell_dword: u32,
}

/// The KIQ's ring as its HQD registers describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KiqHqd {
    pub slot: (u8, u8, u8),
    pub ring: u64,
    pub ring_dwords: u64,
    pub doorbell_dword: u32,
    pub rptr_report: u64,
}

/// ME, pipe, queue.
pub type SlotKey = (u8, u8, u8);

#[derive(Debug, Default)]
struct State {
    flat: BTreeMap<usize, u32>,
    grbm: u32,
    banks: BTreeMap<SlotKey, [u32; HQD_DWORDS]>,
    /// Active slot → CP model queue.
    active: BTreeMap<SlotKey, usize>,
    /// Doorbell dword offset → CP model queue, for every mapped queue.
    doorbells: BTreeMap<u32, usize>,
    events: Vec<MecEvent>,
    faults: MecFaults,
    /// MES pipes: program counter start (in dwords, as written), running,
    /// and the version each reports in `CP_MES_GP3_LO` once running.
    mes_pc: [u64; 2],
    mes_running: [bool; 2],
    mes_versions: [u32; 2],
    kiq: Option<KiqHqd>,
    /// Per MES pipe: its ring, once loaded or mapped.
    mes_rings: [Option<MesRingHqd>; 2],
    /// What the PSP's RLC autoload put in place; `None` for a MEC built
    /// without a PSP model, which takes every code as loaded.
    firmware: Option<Arc<LoadedFirmware>>,
    unplugged: bool,
    reads: u64,
    writes: u64,
}

/// The MEC model: banked HQD registers plus the CP it feeds.
#[derive(Debug)]
pub struct Mec {
    clock: SimClock,
    bases: IpBases,
    regs: HqdRegs,
    window: usize,
    mes_regs: MesRegs,
    doorbell_bar: u64,
    state: Mutex<State>,
    cp: Mutex<CpModel>,
}

/// Byte offsets of the MES control registers.
#[derive(Debug, Clone, Copy)]
struct MesRegs {
    rlc_sched: Option<usize>,
    cntl: Option<usize>,
    pc: Option<usize>,
    pc_hi: Option<usize>,
    gp3: Option<usize>,
}

impl MesRegs {
    fn new(g: Generation, b: &IpBases) -> Self {
        let (cntl, pc, pc_hi, gp3, sched) = match g {
            Generation::Gfx11 => {
                use barebell::regs::gc_11_0_0 as r;
                (
                    r::CP_MES_CNTL,
                    r::CP_MES_PRGRM_CNTR_START,
                    r::CP_MES_PRGRM_CNTR_START_HI,
                    r::CP_MES_GP3_LO,
                    r::RLC_CP_SCHEDULERS,
                )
            }
            Generation::Gfx12 => {
                use barebell::regs::gc_12_0_0 as r;
                (
                    r::CP_MES_CNTL,
                    r::CP_MES_PRGRM_CNTR_START,
                    r::CP_MES_PRGRM_CNTR_START_HI,
                    r::CP_MES_GP3_LO,
                    r::RLC_CP_SCHEDULERS,
                )
            }
        };
        MesRegs {
            rlc_sched: sched.byte_offset(b),
            cntl: cntl.byte_offset(b),
            pc: pc.byte_offset(b),
            pc_hi: pc_hi.byte_offset(b),
            gp3: gp3.byte_offset(b),
        }
    }
}

/// The version word the model's MES reports per pipe unless told
/// otherwise: firmware revision 0x4A, API 2 (model values, not any real
/// firmware's).
pub const MODEL_MES_VERSION: u32 = 2 << 12 | 0x4A;

fn key(grbm: u32) -> SlotKey {
    let g = GrbmGfxCntl::from_bits(grbm);
    (g.meid(), g.pipeid(), g.queueid())
}

impl Mec {
    /// A MEC for `generation` with register segment bases `bases`, whose
    /// doorbell BAR (as the device sees it) starts at `doorbell_bar`.
    pub fn new(
        clock: &SimClock,
        bases: IpBases,
        generation: Generation,
        doorbell_bar: u64,
        cp: CpModel,
    ) -> Option<Self> {
        let regs = HqdRegs::for_generation(generation);
        let window = regs.mqd_base_addr.byte_offset(&bases)?;
        let state = State {
            mes_versions: [MODEL_MES_VERSION; 2],
            ..State::default()
        };
        Some(Mec {
            clock: clock.clone(),
            bases,
            regs,
            window,
            mes_regs: MesRegs::new(generation, &bases),
            doorbell_bar,
            state: Mutex::new(state),
            cp: Mutex::new(cp),
        })
    }

    pub fn bases(&self) -> IpBases {
        self.bases
    }

    pub fn doorbell_bar(&self) -> u64 {
        self.doorbell_bar
    }

    /// Engines run only code the RLC autoload put in place: `firmware`
    /// is the PSP model's record of it.
    pub fn set_loaded_firmware(&self, firmware: Arc<LoadedFirmware>) {
        self.state.lock().firmware = Some(firmware);
    }

    /// Whether MES pipe `pipe` runs (started through `CP_MES_CNTL`).
    pub fn mes_pipe_running(&self, pipe: u8) -> bool {
        self.state
            .lock()
            .mes_running
            .get(usize::from(pipe))
            .copied()
            .unwrap_or(false)
    }

    /// Records the MES scheduler ring a KIQ MAP_QUEUES (ME 2) mapped.
    pub fn set_mes_ring(&self, r: MesRingHqd) {
        self.state.lock().mes_rings[0] = Some(r);
    }

    /// The MES scheduler ring, once mapped.
    pub fn mes_ring(&self) -> Option<MesRingHqd> {
        self.state.lock().mes_rings[0]
    }

    /// MES pipe `pipe`'s ring: pipe 0 once mapped (KIQ MAP_QUEUES or
    /// `map_legacy_kq`), pipe 1 once loaded by register programming.
    pub fn mes_pipe_ring(&self, pipe: u8) -> Option<MesRingHqd> {
        self.state
            .lock()
            .mes_rings
            .get(usize::from(pipe))
            .copied()
            .flatten()
    }

    /// The KIQ's ring, once a PM4 queue came up on the slot
    /// `RLC_CP_SCHEDULERS` names.
    pub fn kiq_hqd(&self) -> Option<KiqHqd> {
        self.state.lock().kiq
    }

    /// A slot's HQD registers as last written or loaded (`None` if the
    /// slot was never touched), in window order: for the firmware models,
    /// which decode them with their own code.
    pub fn bank(&self, slot: SlotKey) -> Option<[u32; HQD_DWORDS]> {
        self.state.lock().banks.get(&slot).copied()
    }

    /// `RLC_CP_SCHEDULERS` as programmed (0 if never written).
    pub fn rlc_cp_schedulers(&self) -> u32 {
        let s = self.state.lock();
        self.mes_regs
            .rlc_sched
            .and_then(|o| s.flat.get(&o).copied())
            .unwrap_or(0)
    }

    /// As [`Mec::map_mqd`], for an image the caller decoded as raw window
    /// dwords (MQD dwords 128..=183).
    pub fn map_window(&self, slot: SlotKey, window: &[u32; HQD_DWORDS]) -> Result<usize, MecError> {
        self.map_mqd(slot, &HqdRegisters::from_dwords(window))
    }

    /// What each MES pipe reports in `CP_MES_GP3_LO` once running.
    pub fn set_mes_versions(&self, v: [u32; 2]) {
        self.state.lock().mes_versions = v;
    }

    /// Each MES pipe's `CP_MES_PRGRM_CNTR_START(_HI)` as programmed (the
    /// ucode start address >> 2) and whether it runs.
    pub fn mes_pipes(&self) -> [(u64, bool); 2] {
        let s = self.state.lock();
        [
            (s.mes_pc[0], s.mes_running[0]),
            (s.mes_pc[1], s.mes_running[1]),
        ]
    }

    pub fn set_faults(&self, f: MecFaults) {
        self.state.lock().faults = f;
    }

    /// The CP model, locked.
    pub fn cp(&self) -> MutexGuard<'_, CpModel> {
        self.cp.lock()
    }

    pub fn step(&self) -> Step {
        self.cp.lock().step()
    }

    pub fn run_until_idle(&self, max_steps: u64) -> Option<u64> {
        self.cp.lock().run_until_idle(max_steps)
    }

    pub fn events(&self) -> Vec<MecEvent> {
        self.state.lock().events.clone()
    }

    /// Queues currently mapped, by doorbell dword offset.
    pub fn mapped_doorbells(&self) -> Vec<u32> {
        self.state.lock().doorbells.keys().copied().collect()
    }

    pub fn unplug(&self) {
        self.state.lock().unplugged = true;
    }

    pub fn access_counts(&self) -> (u64, u64) {
        let s = self.state.lock();
        (s.reads, s.writes)
    }

    /// The device's view of a flat register (no bus access counted).
    pub fn device_get(&self, byte_offset: usize) -> u32 {
        self.state
            .lock()
            .flat
            .get(&byte_offset)
            .copied()
            .unwrap_or(0)
    }

    /// `CP_MEC_DOORBELL_RANGE_LOWER/UPPER` as programmed (byte offsets).
    pub fn doorbell_range(&self) -> (u32, u32) {
        let s = self.state.lock();
        let get = |r: barebell::regs::Reg| {
            r.byte_offset(&self.bases)
                .and_then(|o| s.flat.get(&o).copied())
                .unwrap_or(0)
        };
        (
            get(self.regs.doorbell_range_lower),
            get(self.regs.doorbell_range_upper),
        )
    }

    fn window_index(&self, byte_offset: usize) -> Option<usize> {
        let i = byte_offset.checked_sub(self.window)? / 4;
        (byte_offset.is_multiple_of(4) && i < HQD_DWORDS).then_some(i)
    }

    /// Checks `hqd` and binds it to the CP model. `need_doorbell_en` is
    /// set for direct loads (the driver enables the doorbell itself);
    /// MES and the KIQ enable it on the slot they choose.
    pub fn check_and_bind(
        &self,
        hqd: &HqdRegisters,
        need_doorbell_en: bool,
    ) -> Result<usize, MecError> {
        if hqd.cp_hqd_aql_control == 0 {
            return Err(MecError::NotAql);
        }
        let pq = hqd.pq_control();
        let slots = hqd.ring_bytes().map(|b| b / 64).unwrap_or(0);
        if slots < 4 {
            return Err(MecError::QueueSize {
                field: pq.queue_size(),
            });
        }
        let db = hqd.doorbell_control();
        if need_doorbell_en && !db.doorbell_en() {
            return Err(MecError::DoorbellDisabled);
        }
        let dword = db.doorbell_offset();
        let byte = u64::from(dword) * 4;
        let (lower, upper) = self.doorbell_range();
        if byte < u64::from(lower) || byte > u64::from(upper) {
            return Err(MecError::DoorbellOutOfRange {
                byte_offset: byte,
                lower,
                upper,
            });
        }
        if self.state.lock().doorbells.contains_key(&dword) {
            return Err(MecError::DoorbellInUse { dword });
        }
        if hqd.eop_address() == 0 || hqd.cp_hqd_eop_control == 0 {
            return Err(MecError::NoEop);
        }
        let rptr = hqd.rptr_report_address();
        let wptr = hqd.wptr_poll_address();
        let desc = rptr.wrapping_sub(offset_of!(AmdQueue, read_dispatch_id) as u64);
        if desc.wrapping_add(offset_of!(AmdQueue, write_dispatch_id) as u64) != wptr {
            return Err(MecError::NotAnAqlDescriptor { rptr, wptr });
        }
        let q = self
            .cp
            .lock()
            .bind(HqdBinding {
                ring_base: hqd.ring_address(),
                slots,
                descriptor: desc,
                doorbell: self.doorbell_bar + byte,
                // The MQD names a wptr poll address, and the CP polls it.
                poll_write_index: true,
            })
            .map_err(MecError::Bind)?;
        self.state.lock().doorbells.insert(dword, q);
        Ok(q)
    }

    /// Maps an MQD image onto a slot on behalf of MES or the KIQ.
    pub fn map_mqd(&self, slot: SlotKey, hqd: &HqdRegisters) -> Result<usize, MecError> {
        let busy = self.state.lock().active.contains_key(&slot);
        let r = if busy {
            Err(MecError::SlotBusy)
        } else {
            self.check_and_bind(hqd, false)
        };
        let mut s = self.state.lock();
        match r {
            Ok(q) => {
                let mut bank = hqd.dwords();
                if let Some(a) = bank.get_mut(2) {
                    *a |= 1;
                }
                s.banks.insert(slot, bank);
                s.active.insert(slot, q);
                s.events.push(MecEvent::Activated {
                    me: slot.0,
                    pipe: slot.1,
                    queue: slot.2,
                    cp_queue: q,
                });
            }
            Err(why) => s.events.push(MecEvent::Refused {
                me: slot.0,
                pipe: slot.1,
                queue: slot.2,
                why,
            }),
        }
        r
    }

    /// Unmaps the queue on doorbell `dword` (MES REMOVE_QUEUE, KIQ
    /// UNMAP_QUEUES). Returns false if none is mapped there.
    pub fn unmap_doorbell(&self, dword: u32) -> bool {
        let mut s = self.state.lock();
        let Some(q) = s.doorbells.remove(&dword) else {
            return false;
        };
        let slot = s.active.iter().find(|(_, v)| **v == q).map(|(k, _)| *k);
        if let Some(k) = slot {
            s.active.remove(&k);
            if let Some(a) = s.banks.get_mut(&k).and_then(|b| b.get_mut(2)) {
                *a &= !1;
            }
            s.events.push(MecEvent::Dequeued {
                me: k.0,
                pipe: k.1,
                queue: k.2,
            });
        }
        drop(s);
        self.cp.lock().unbind(q);
        true
    }

    fn on_window_write(&self, slot: SlotKey, i: usize, value: u32) {
        let active_i = (self.regs.hqd_active.offset - self.regs.mqd_base_addr.offset) as usize;
        let dequeue_i =
            (self.regs.dequeue_request.offset - self.regs.mqd_base_addr.offset) as usize;
        let mut s = self.state.lock();
        let bank = s.banks.entry(slot).or_insert([0; HQD_DWORDS]);
        let was_active = bank.get(active_i).copied().unwrap_or(0) & 1 == 1;
        if let Some(r) = bank.get_mut(i) {
            *r = value;
        }
        if i == active_i {
            // ACTIVE is set by the activation below, not by the write.
            if let Some(r) = bank.get_mut(i) {
                *r = value & !1 | u32::from(was_active);
            }
            if value & 1 == 1 && !was_active {
                let image = HqdRegisters::from_dwords(bank);
                // `RLC_CP_SCHEDULERS.scheduler0` (enable bit 7) names the
                // KIQ slot (`gfx_v11_0_kiq_setting()`): a PM4 queue there
                // is the KIQ, which the KIQ model runs, not the AQL CP.
                let sched = self
                    .mes_regs
                    .rlc_sched
                    .and_then(|o| s.flat.get(&o).copied())
                    .unwrap_or(0);
                let named = u32::from(slot.0) << 5 | u32::from(slot.1) << 3 | u32::from(slot.2);
                // A queue loaded on ME 3 is a MES pipe's own ring
                // (`mes_v12_0_queue_init_register()`); MES runs it.
                if slot.0 == 3 {
                    if let Some(a) = s.banks.get_mut(&slot).and_then(|b| b.get_mut(active_i)) {
                        *a |= 1;
                    }
                    if let Some(r) = s.mes_rings.get_mut(usize::from(slot.1 & 1)) {
                        *r = Some(MesRingHqd {
                            ring: image.ring_address(),
                            ring_dwords: image.ring_bytes().unwrap_or(0) / 4,
                            doorbell_dword: image.doorbell_control().doorbell_offset(),
                        });
                    }
                    s.events.push(MecEvent::MesRingLoaded { pipe: slot.1 });
                    return;
                }
                if image.cp_hqd_aql_control == 0 && sched & 0x80 != 0 && sched & 0x7F == named {
                    if let Some(a) = s.banks.get_mut(&slot).and_then(|b| b.get_mut(active_i)) {
                        *a |= 1;
                    }
                    s.kiq = Some(KiqHqd {
                        slot,
                        ring: image.ring_address(),
                        ring_dwords: image.ring_bytes().unwrap_or(0) / 4,
                        doorbell_dword: image.doorbell_control().doorbell_offset(),
                        rptr_report: image.rptr_report_address(),
                    });
                    s.events.push(MecEvent::KiqActivated {
                        me: slot.0,
                        pipe: slot.1,
                        queue: slot.2,
                    });
                    return;
                }
                drop(s);
                let r = self.check_and_bind(&image, true);
                let mut s = self.state.lock();
                match r {
                    Ok(q) => {
                        if let Some(a) = s.banks.get_mut(&slot).and_then(|b| b.get_mut(active_i)) {
                            *a |= 1;
                        }
                        s.active.insert(slot, q);
                        s.events.push(MecEvent::Activated {
                            me: slot.0,
                            pipe: slot.1,
                            queue: slot.2,
                            cp_queue: q,
                        });
                    }
                    Err(why) => s.events.push(MecEvent::Refused {
                        me: slot.0,
                        pipe: slot.1,
                        queue: slot.2,
                        why,
                    }),
                }
            }
        } else if i == dequeue_i && value & barebell::gfx::hqd::DEQUEUE_REQ_MASK != 0 && was_active
        {
            if s.faults.dequeue_never_completes {
                return;
            }
            let q = s.active.remove(&slot);
            if let Some(a) = s.banks.get_mut(&slot).and_then(|b| b.get_mut(active_i)) {
                *a &= !1;
            }
            if let Some(q) = q {
                s.doorbells.retain(|_, v| *v != q);
                s.events.push(MecEvent::Dequeued {
                    me: slot.0,
                    pipe: slot.1,
                    queue: slot.2,
                });
                drop(s);
                self.cp.lock().unbind(q);
            }
        }
    }
}

impl Mec {
    /// `mes_v11_0_enable()`'s view of the MES pipes: program counters are
    /// banked per pipe (GRBM ME 3); a pipe runs once `MES_PIPEn_ACTIVE` is
    /// set with its program counter programmed and its code in place
    /// (the PSP's RLC autoload loaded it), and stops on `MES_HALT`.
    fn mes_write(&self, s: &mut State, byte_offset: usize, value: u32) {
        let (me, pipe, _) = key(s.grbm);
        let p = usize::from(pipe & 1);
        if Some(byte_offset) == self.mes_regs.pc && me == 3 {
            s.mes_pc[p] = s.mes_pc[p] & !0xFFFF_FFFF | u64::from(value);
        } else if Some(byte_offset) == self.mes_regs.pc_hi && me == 3 {
            s.mes_pc[p] = s.mes_pc[p] & 0xFFFF_FFFF | u64::from(value) << 32;
        } else if Some(byte_offset) == self.mes_regs.cntl {
            let c = barebell::gfx::mes::start::MesCntl::from_bits(value);
            if c.mes_halt() {
                s.mes_running = [false; 2];
            }
            for (i, active) in [c.mes_pipe0_active(), c.mes_pipe1_active()]
                .into_iter()
                .enumerate()
            {
                if !active || s.mes_running[i] {
                    continue;
                }
                let code = s.firmware.as_ref().is_none_or(|f| f.mes_pipe(i as u8));
                if !code {
                    s.events
                        .push(MecEvent::MesPipeWithoutCode { pipe: i as u8 });
                } else if s.mes_pc[i] != 0 {
                    s.mes_running[i] = true;
                }
            }
        }
    }
}

impl RegisterBus for Mec {
    fn read32(&self, byte_offset: usize) -> u32 {
        self.clock.advance(ACCESS_NS);
        let mut s = self.state.lock();
        s.reads += 1;
        if s.unplugged || !byte_offset.is_multiple_of(4) {
            return ALL_ONES;
        }
        if let Some(i) = self.window_index(byte_offset) {
            let k = key(s.grbm);
            return s.banks.get(&k).and_then(|b| b.get(i)).copied().unwrap_or(0);
        }
        if Some(byte_offset) == self.regs.grbm_gfx_cntl.byte_offset(&self.bases) {
            return s.grbm;
        }
        if Some(byte_offset) == self.mes_regs.gp3 {
            let (me, pipe, _) = key(s.grbm);
            let p = usize::from(pipe & 1);
            return if me == 3 && s.mes_running[p] {
                s.mes_versions[p]
            } else {
                0
            };
        }
        s.flat.get(&byte_offset).copied().unwrap_or(0)
    }

    fn write32(&self, byte_offset: usize, value: u32) {
        self.clock.advance(ACCESS_NS);
        let slot = {
            let mut s = self.state.lock();
            s.writes += 1;
            if s.unplugged || !byte_offset.is_multiple_of(4) {
                return;
            }
            if Some(byte_offset) == self.regs.grbm_gfx_cntl.byte_offset(&self.bases) {
                s.grbm = value;
                return;
            }
            if self.window_index(byte_offset).is_none() {
                self.mes_write(&mut s, byte_offset, value);
                s.flat.insert(byte_offset, value);
                return;
            }
            key(s.grbm)
        };
        if let Some(i) = self.window_index(byte_offset) {
            self.on_window_write(slot, i, value);
        }
    }
}
