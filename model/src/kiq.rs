//! A model of the KIQ: a PM4 ring the CP front end parses packet by
//! packet, up to the write pointer stored to its doorbell (in dwords).
//!
//! Packets are decoded with the model's own code ([`crate::decode::pm4`],
//! written from `nvd.h` and `kfd_pm4_headers_ai.h`); MQDs with
//! [`crate::decode::mqd`]. Nothing here reads the runtime's or
//! firmware-if's types.
//!
//! Where the KIQ runs ([`KiqHome`]):
//! - on MES pipe 1 (ME 3), the gfx11 topology of Linux 6.12:
//!   `amdgpu_discovery_set_mes_ip_blocks()` sets `enable_mes_kiq` for
//!   every GC 11.x and 12.x part, `mes_v11_0_kiq_setting()` points
//!   `RLC_CP_SCHEDULERS.scheduler0` at ME 3 pipe 1 queue 0, and
//!   `mes_v11_0_queue_init_register()` loads the KIQ ring there
//!   ([`KiqModel::from_mes_pipe`]);
//! - on a MEC slot `RLC_CP_SCHEDULERS` names (`gfx_v11_0_kiq_setting()`,
//!   `gfx_v11_0_kiq_init_register()`, the `!enable_mes_kiq` path), found
//!   through [`Mec::kiq_hqd`] ([`KiqModel::from_mec`]). No shipping
//!   driver runs this beside MES on GC 11/12: `enable_mes_kiq` has been
//!   set together with `enable_mes` since GC 11.0.0 was added to
//!   `amdgpu_discovery_set_mes_ip_blocks()`, and `mes_v11_0_enable()` /
//!   `mes_v12_0_enable()` activate MES pipe 1 only with `enable_mes_kiq`.
//!   So a MEC KIQ while MES pipe 1 runs is refused (halted with
//!   [`KiqHalt::Topology`]): a model rule derived from the drivers'
//!   topology, not a documented hardware interlock. A MEC KIQ with no
//!   MES KIQ pipe (the GC 10 topology, the test rigs) runs.
//!
//! The KIQ's own ring must be a privileged kernel queue in VMID 0 with its
//! doorbell enabled (`gfx_v11_0_compute_mqd_init()` and
//! `mes_v11_0_mqd_init()` both set `PRIV_STATE`, `KMD_QUEUE`,
//! `DOORBELL_EN` and `CP_HQD_VMID` 0); a ring that is not is refused.
//!
//! Packets it executes:
//! - SET_RESOURCES (`gfx11_kiq_set_resources()`): `queue_type` 0 (KIQ);
//!   records the queue mask;
//! - MAP_QUEUES (`gfx11_kiq_map_queues()`): one queue (`num_queues` 1) on
//!   specified slots (`queue_sel` 0), either
//!   - a compute queue (`engine_sel` 0) on ME 1: GC 11 and GC 12 have one
//!     MEC (`gfx_v11_0_sw_init()` / `gfx_v12_0_sw_init()`:
//!     `mec.num_mec = 1`), so ME 2 is refused. As `amdgpu_gfx_enable_kcq()`
//!     sends SET_RESOURCES before any MAP_QUEUES and builds its queue mask
//!     from exactly the slots it maps
//!     (`amdgpu_queue_mask_bit_to_set_resource_bit()`: `mec * 32 + pipe *
//!     8 + queue`), a compute MAP_QUEUES before SET_RESOURCES, or onto a
//!     slot outside its mask, is refused (a model rule from that order);
//!   - or the MES scheduler ring (`engine_sel` 5, ME 2, pipe 0, which
//!     must be running), recorded with [`Mec::set_mes_ring`];
//!
//!   The MQD's doorbell must be the packet's, and the packet's
//!   `wptr_addr` the MQD's `CP_HQD_PQ_WPTR_POLL_ADDR` (both drivers fill
//!   the two from one value: `ring->wptr_gpu_addr`, KFD's
//!   `q->properties.write_ptr`); the EOP buffer the MQD sizes
//!   (`2^(EOP_SIZE+1)` dwords) must lie in device memory;
//! - UNMAP_QUEUES (`gfx11_kiq_unmap_queues()`): queues named by doorbell
//!   (`queue_sel` 0, up to four), compute engine; `PREEMPT_QUEUES` and
//!   `RESET_QUEUES` unmap, with the action's semantics: a preemption
//!   drains the queue and saves its PM4 read/write pointers into its MQD
//!   (so a re-map resumes there), and blocks the KIQ on a queue whose
//!   waves never drain ([`KiqHalt::PreemptHung`]); a reset kills the
//!   waves and discards the state (`Mec::preempt_doorbell` has the
//!   sources); `PREEMPT_QUEUES_NO_UNMAP` leaves the queue
//!   mapped and writes the trailing fence (dwords 3..5),
//!   `DISABLE_PROCESS_QUEUES` (by PASID) is not modelled and halts;
//! - QUERY_STATUS (`gfx11_kiq_query_status()`): fence-only commands
//!   (1 and 2) on the compute engine write the 64-bit data to the address;
//! - WRITE_DATA to memory (`dst_sel` 5): the fence; and to a register
//!   (`dst_sel` 0), which the device applies through its register bus
//!   (`gfx_v11_0_ring_test_ring()` tests a KIQ ring so, on `SCRATCH_REG0`).
//!
//! Addresses: on a device the KIQ is a kernel queue in VMID 0 and every
//! address it is given (its ring, read-pointer report, MQDs, EOP buffers,
//! fences) is decoded as VMID 0 decodes it ([`KernelView`]): Linux hands
//! it VRAM at its MC address (`amdgpu_bo_create_kernel()` in VRAM, the
//! system aperture) and GTT at its GART address (context 0's walk). On a
//! rig with no view, addresses are host addresses.
//!
//! Anything else, or a MAP the MEC refuses, halts the ring with the reason
//! in [`KiqModel::log`]: the KIQ has no status channel, so a driver sees a
//! fence that never arrives. Fault switches: `silent`, and
//! [`KiqModel::hold`] (packets wait until released: a late completion).

use crate::decode::mqd::{Hqd, MQD_BYTES};
use crate::decode::pm4::{
    self, map_queues as mq, opcode, query_status as qs, set_resources as sr, unmap_queues as uq,
    write_data as wd,
};
use crate::gmc::Access;
pub use crate::kernel_view::KernelView;
use crate::log::Keep;
use crate::mec::{Mec, MecError, MesRingHqd, Preempt, SlotKey};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;
use spin::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KiqHalt {
    NotType3 {
        header: u32,
    },
    Unsupported {
        opcode: u8,
    },
    BadMap {
        what: &'static str,
    },
    DoorbellMismatch {
        packet: u32,
        mqd: u32,
    },
    MqdUnreadable {
        address: u64,
    },
    Mec(MecError),
    UnknownQueue {
        doorbell: u32,
    },
    FenceUnmapped {
        address: u64,
    },
    /// A KIQ where no driver puts one (see the module docs).
    Topology {
        what: &'static str,
    },
    /// The KIQ's own ring is not what its firmware runs.
    BadRing {
        what: &'static str,
    },
    /// A compute MAP_QUEUES before any SET_RESOURCES.
    NoResources,
    /// A compute MAP_QUEUES onto a slot outside SET_RESOURCES' queue mask.
    NotInQueueMask {
        me: u8,
        pipe: u8,
        queue: u8,
    },
    /// MAP_QUEUES' `wptr_addr` is not the MQD's write-pointer address.
    WptrMismatch {
        packet: u64,
        mqd: u64,
    },
    /// The MQD's EOP buffer is not in device memory.
    EopUnmapped {
        address: u64,
        bytes: u64,
    },
    /// A ring or EOP size field no memory can back.
    Size(crate::decode::mqd::SizeBeyondAddressSpace),
    /// The MES ring's MQD is not a privileged kernel queue in VMID 0.
    BadMesRing {
        what: &'static str,
    },
    BadUnmap {
        what: &'static str,
    },
    /// PREEMPT_QUEUES of a queue whose waves never drain: the
    /// preemption never completes (only RESET_QUEUES kills waves).
    PreemptHung {
        doorbell: u32,
    },
    BadQuery {
        what: &'static str,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KiqEvent {
    Done { opcode: u8 },
    Halted { opcode: u8, why: KiqHalt },
}

/// Where the KIQ firmware runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KiqHome {
    /// A ring handed to the model directly ([`KiqModel::new`]).
    Given,
    /// A MEC slot `RLC_CP_SCHEDULERS` names.
    Mec(SlotKey),
    /// MES pipe 1 (ME 3).
    MesPipe1,
}

#[derive(Debug, Default)]
struct State {
    rptr: u64,
    halted: bool,
    silent: bool,
    /// Packets at or after this many consumed are held back (a KIQ that
    /// is slow to get to them); `None`: no hold.
    hold_after: Option<u64>,
    consumed: u64,
    /// SET_RESOURCES seen, and its queue mask.
    resources: Option<u64>,
    log: Vec<KiqEvent>,
}

/// Register stores the KIQ made (`WRITE_DATA` with `dst_sel` 0), as BAR
/// byte offsets and values, for the device to apply through its register
/// bus in order.
pub type RegisterStores = Arc<Mutex<Vec<(u32, u32)>>>;

/// What the device gives a KIQ it finds: its memory decode and where its
/// register stores go (both `None` on a rig: host addresses, no register
/// stores).
#[derive(Debug, Default)]
pub struct KiqDevice {
    pub view: Option<KernelView>,
    pub registers: Option<RegisterStores>,
}

/// The KIQ firmware.
#[derive(Debug)]
pub struct KiqModel {
    mec: Arc<Mec>,
    view: Option<KernelView>,
    registers: Option<RegisterStores>,
    home: KiqHome,
    rptr_report: Option<u64>,
    ring: u64,
    ring_dwords: u64,
    doorbell: u64,
    state: Mutex<State>,
}

/// `RLC_CP_SCHEDULERS.scheduler0` naming `slot`, with its enable bit 7
/// (`gfx_v11_0_kiq_setting()`, `mes_v11_0_kiq_setting()`:
/// `me << 5 | pipe << 3 | queue`, then `| 0x80`).
pub fn scheduler0(slot: SlotKey) -> u32 {
    0x80 | u32::from(slot.0) << 5 | u32::from(slot.1) << 3 | u32::from(slot.2)
}

/// The MES KIQ slot: ME 3, `AMDGPU_MES_KIQ_PIPE` (1), queue 0
/// (`mes_v11_0_kiq_ring_init()`).
pub const MES_KIQ_SLOT: SlotKey = (3, 1, 0);

impl KiqModel {
    /// A KIQ whose ring of `ring_dwords` is at `ring`, woken through the
    /// 64-bit doorbell slot at `doorbell`.
    pub fn new(mec: Arc<Mec>, ring: u64, ring_dwords: u64, doorbell: u64) -> Self {
        KiqModel {
            mec,
            view: None,
            registers: None,
            home: KiqHome::Given,
            rptr_report: None,
            ring,
            ring_dwords,
            doorbell,
            state: Mutex::new(State::default()),
        }
    }

    fn from_image(mec: Arc<Mec>, home: KiqHome, hqd: &Hqd, dev: KiqDevice) -> Option<Self> {
        // 0 when the size is refused: `check_ring` halts the KIQ then.
        let ring_dwords = hqd.ring_bytes().map_or(0, |b| b / 4);
        let doorbell = mec.doorbell_bar() + u64::from(hqd.doorbell_dword()) * 4;
        let mut m = KiqModel::new(mec, hqd.ring_address(), ring_dwords, doorbell);
        m.home = home;
        m.view = dev.view;
        m.registers = dev.registers;
        m.rptr_report = Some(hqd.rptr_report_address());
        if let Err(why) = m.check_ring(hqd) {
            m.halt(0, why);
        }
        Some(m)
    }

    /// The MEC KIQ the MEC model saw come up by register programming
    /// ([`Mec::kiq_hqd`]): its ring, size and doorbell come from the HQD
    /// registers, and it reports its read pointer (dwords) where
    /// `CP_HQD_PQ_RPTR_REPORT_ADDR` says.
    pub fn from_mec(mec: Arc<Mec>, dev: KiqDevice) -> Option<Self> {
        let k = mec.kiq_hqd()?;
        let bank = mec.bank(k.slot)?;
        Self::from_image(mec, KiqHome::Mec(k.slot), &Hqd(bank), dev)
    }

    /// The gfx11 MES KIQ: MES pipe 1's ring, once loaded by registers on
    /// ME 3 pipe 1 with `RLC_CP_SCHEDULERS` naming that slot
    /// (`mes_v11_0_kiq_setting()` runs before
    /// `mes_v11_0_queue_init_register()`); `None` until then.
    pub fn from_mes_pipe(mec: Arc<Mec>, dev: KiqDevice) -> Option<Self> {
        if mec.rlc_cp_schedulers() & 0xFF != scheduler0(MES_KIQ_SLOT) {
            return None;
        }
        let bank = mec.bank(MES_KIQ_SLOT)?;
        let hqd = Hqd(bank);
        if !hqd.active() || !mec.mes_pipes()[1].1 {
            return None;
        }
        Self::from_image(mec, KiqHome::MesPipe1, &hqd, dev)
    }

    /// The host address of `len` bytes at `addr` (one contiguous run), as
    /// the KIQ's [`KernelView`] decodes them; without one (a rig), `addr`
    /// itself, as the CP's host-address window takes it.
    fn host(&self, addr: u64, len: u64, access: Access) -> Option<u64> {
        crate::kernel_view::host(self.view.as_ref(), addr, len, access)
    }

    /// Whether `len` bytes at `addr` are backed for `access`.
    fn covers(&self, addr: u64, len: u64, access: Access) -> bool {
        let view = self.view.as_ref();
        crate::kernel_view::covers(view, self.mec.cp().dma_mut(), addr, len, access)
    }

    /// Sends the KIQ's register stores (`WRITE_DATA` with `dst_sel` 0) to
    /// `r`, for a device to apply through its register bus.
    pub fn with_register_stores(mut self, r: RegisterStores) -> Self {
        self.registers = Some(r);
        self
    }

    pub fn home(&self) -> KiqHome {
        self.home
    }

    /// What the KIQ firmware needs of its own ring.
    fn check_ring(&self, hqd: &Hqd) -> Result<(), KiqHalt> {
        let bad = |what| Err(KiqHalt::BadRing { what });
        if !hqd.privileged() || !hqd.kmd_queue() {
            return bad("the KIQ ring is not a privileged kernel queue (PRIV_STATE, KMD_QUEUE)");
        }
        if hqd.vmid() != 0 {
            return bad("the KIQ ring is not in VMID 0");
        }
        if !hqd.doorbell_enabled() {
            return bad("the KIQ ring's doorbell is not enabled");
        }
        if hqd.aql() {
            return bad("the KIQ ring is an AQL queue; the KIQ parses PM4");
        }
        if hqd.mqd_address() == 0 {
            return bad("CP_MQD_BASE_ADDR of the KIQ ring is 0");
        }
        let ring_bytes = hqd.ring_bytes().map_err(KiqHalt::Size)?;
        if !self.covers(hqd.ring_address(), ring_bytes, Access::Read) {
            return bad("the KIQ ring is not in device memory");
        }
        if !self.covers(hqd.rptr_report_address(), 4, Access::Write) {
            return bad("the KIQ's rptr report address is not in device memory");
        }
        Ok(())
    }

    pub fn set_silent(&self, silent: bool) {
        self.state.lock().silent = silent;
    }

    /// Holds every packet after the next `n` (a KIQ slow to get to them);
    /// [`KiqModel::release`] lets them through.
    pub fn hold(&self, n: u64) {
        let mut s = self.state.lock();
        s.hold_after = Some(s.consumed + n);
    }

    pub fn release(&self) {
        self.state.lock().hold_after = None;
    }

    pub fn log(&self) -> Vec<KiqEvent> {
        self.state.lock().log.clone()
    }

    pub fn is_halted(&self) -> bool {
        self.state.lock().halted
    }

    /// SET_RESOURCES' queue mask (0 before one arrived).
    pub fn queue_mask(&self) -> u64 {
        self.state.lock().resources.unwrap_or(0)
    }

    fn dword(&self, index: u64) -> Option<u32> {
        let at = self.ring + (index % self.ring_dwords.max(1)) * 4;
        let at = self.host(at, 4, Access::Read)?;
        let v = self
            .mec
            .cp()
            .dma_mut()
            .u32(at, "KIQ ring")
            .ok()?
            .load(Ordering::Acquire);
        Some(v)
    }

    fn topology(&self) -> Option<KiqHalt> {
        match self.home {
            KiqHome::Mec(_) if self.mec.mes_pipes()[1].1 => Some(KiqHalt::Topology {
                what: "a MEC KIQ beside a running MES KIQ pipe: with MES, Linux runs the KIQ on MES pipe 1 (enable_mes_kiq)",
            }),
            _ => None,
        }
    }

    /// Executes every packet announced on the doorbell. Returns how many.
    pub fn service(&self) -> usize {
        {
            let s = self.state.lock();
            if s.silent || s.halted {
                return 0;
            }
        }
        if let Some(why) = self.topology() {
            self.halt(0, why);
            return 0;
        }
        let Ok(wptr) = self
            .mec
            .cp()
            .dma_mut()
            .u64(self.doorbell, "KIQ doorbell")
            .map(|a| a.load(Ordering::Acquire))
        else {
            return 0;
        };
        let mut n = 0;
        loop {
            let (rptr, held) = {
                let s = self.state.lock();
                (s.rptr, s.hold_after.is_some_and(|h| s.consumed >= h))
            };
            if held || wptr.wrapping_sub(rptr) == 0 || wptr.wrapping_sub(rptr) > u64::MAX / 2 {
                break;
            }
            let Some(word) = self.dword(rptr) else { break };
            if word == pm4::NOP_FILLER {
                // The one-dword pad `amdgpu_ring_insert_nop()` writes
                // (`gfx_v11_0_ring_funcs_kiq.nop`, `align_mask` 0xff: a
                // KIQ submission is padded to 256 dwords with it).
                self.consumed(rptr + 1, false);
                continue;
            }
            if pm4::HEADER_TYPE.get(word) != pm4::PACKET_TYPE3 {
                self.halt(0, KiqHalt::NotType3 { header: word });
                break;
            }
            let op = pm4::HEADER_OPCODE.get(word) as u8;
            let len = u64::from(pm4::HEADER_COUNT.get(word)) + 1;
            if wptr.wrapping_sub(rptr) < len + 1 {
                break;
            }
            let mut body = Vec::new();
            for i in 0..len {
                match self.dword(rptr + 1 + i) {
                    Some(d) => body.push(d),
                    None => return n,
                }
            }
            match self.packet(u32::from(op), &body) {
                Ok(()) => {
                    self.state.lock().log.keep(KiqEvent::Done { opcode: op });
                    self.consumed(rptr + 1 + len, true);
                    n += 1;
                }
                Err(why) => {
                    self.halt(op, why);
                    break;
                }
            }
        }
        n
    }

    /// The read pointer moves to `next` (dwords) past a packet (counted
    /// for [`KiqModel::hold`]) or a pad dword: kept, and reported
    /// (wrapped to the ring) at the rptr report address.
    fn consumed(&self, next: u64, packet: bool) {
        {
            let mut s = self.state.lock();
            s.rptr = next;
            s.consumed += u64::from(packet);
        }
        if let Some(a) = self.rptr_report
            && let Some(a) = self.host(a, 4, Access::Write)
            && let Ok(r) = self.mec.cp().dma_mut().u32(a, "KIQ rptr report")
        {
            r.store((next % self.ring_dwords.max(1)) as u32, Ordering::Release);
        }
    }

    fn halt(&self, opcode: u8, why: KiqHalt) {
        let mut s = self.state.lock();
        s.halted = true;
        s.log.keep(KiqEvent::Halted { opcode, why });
    }

    /// Body dword `i` (dword `i + 1` of the packet; 0 past the end).
    fn at(body: &[u32], i: usize) -> u32 {
        body.get(i).copied().unwrap_or(0)
    }

    fn addr(body: &[u32], i: usize) -> u64 {
        u64::from(Self::at(body, i)) | u64::from(Self::at(body, i + 1)) << 32
    }

    fn store64(&self, addr: u64, value: u64) -> Result<(), KiqHalt> {
        let host = self
            .host(addr, 8, Access::Write)
            .ok_or(KiqHalt::FenceUnmapped { address: addr })?;
        self.mec
            .cp()
            .dma_mut()
            .u64(host, "KIQ fence")
            .map_err(|_| KiqHalt::FenceUnmapped { address: addr })?
            .store(value, Ordering::Release);
        Ok(())
    }

    /// Stores one dword at the kernel address `addr` (a WRITE_DATA
    /// destination, a trailing fence).
    fn store32(&self, addr: u64, value: u32, what: &'static str) -> Result<(), KiqHalt> {
        let unmapped = KiqHalt::FenceUnmapped { address: addr };
        let host = self.host(addr, 4, Access::Write).ok_or(unmapped)?;
        self.mec
            .cp()
            .dma_mut()
            .u32(host, what)
            .map_err(|_| unmapped)?
            .store(value, Ordering::Release);
        Ok(())
    }

    /// `op`'s body is `body` (packet dwords 1..).
    fn packet(&self, op: u32, body: &[u32]) -> Result<(), KiqHalt> {
        // Packet dword d is body[d - 1].
        let dw = |d: usize| Self::at(body, d - 1);
        match op {
            opcode::SET_RESOURCES => {
                if sr::QUEUE_TYPE.get(dw(1)) != 0 {
                    return Err(KiqHalt::BadMap {
                        what: "SET_RESOURCES to the KIQ has queue_type 0 (gfx11_kiq_set_resources())",
                    });
                }
                let mask =
                    u64::from(dw(sr::DW_QUEUE_MASK_LO)) | u64::from(dw(sr::DW_QUEUE_MASK_HI)) << 32;
                self.state.lock().resources = Some(mask);
                Ok(())
            }
            opcode::WRITE_DATA => self.write_data(body),
            // A NOP's body is skipped (`nvd.h` PACKET3_NOP).
            opcode::NOP => Ok(()),
            opcode::MAP_QUEUES => self.map(body),
            opcode::UNMAP_QUEUES => self.unmap(body),
            opcode::QUERY_STATUS => {
                let c = dw(1);
                let cmd = qs::COMMAND.get(c);
                if cmd != qs::FENCE_ONLY_IMMEDIATE && cmd != qs::FENCE_ONLY_AFTER_WRITE_ACK {
                    return Err(KiqHalt::BadQuery {
                        what: "only fence-only QUERY_STATUS commands (1, 2) are modelled",
                    });
                }
                if qs::INTERRUPT_SEL.get(c) != 0 || qs::ENG_SEL.get(dw(2)) != 0 {
                    return Err(KiqHalt::BadQuery {
                        what: "QUERY_STATUS of a compute queue's completion status only",
                    });
                }
                self.store64(Self::addr(body, 2), Self::addr(body, 4))
            }
            other => Err(KiqHalt::Unsupported {
                opcode: other as u8,
            }),
        }
    }

    /// WRITE_DATA (`nvd.h`): to memory (`dst_sel` 5), each data dword at
    /// the next address; or to a register (`dst_sel` 0), the address a
    /// dword offset into the register space, stored through the device's
    /// register bus ([`RegisterStores`]). `WR_ONE_ADDR` keeps the address.
    fn write_data(&self, body: &[u32]) -> Result<(), KiqHalt> {
        let control = Self::at(body, 0);
        let one = wd::WR_ONE_ADDR.get(control) != 0;
        let a = Self::addr(body, 1);
        let data = body.iter().skip(3);
        match wd::DST_SEL.get(control) {
            wd::DST_MEMORY => {
                for (i, d) in data.enumerate() {
                    let at = if one { a } else { a + 4 * i as u64 };
                    self.store32(at, *d, "KIQ WRITE_DATA")?;
                }
                Ok(())
            }
            wd::DST_REGISTER => {
                let (Some(stores), Ok(reg)) = (&self.registers, u32::try_from(a)) else {
                    return Err(KiqHalt::Unsupported {
                        opcode: opcode::WRITE_DATA as u8,
                    });
                };
                let mut s = stores.lock();
                for (i, d) in data.enumerate() {
                    let r = if one { reg } else { reg.wrapping_add(i as u32) };
                    s.push((r.wrapping_mul(4), *d));
                }
                Ok(())
            }
            _ => Err(KiqHalt::Unsupported {
                opcode: opcode::WRITE_DATA as u8,
            }),
        }
    }

    fn read_mqd(&self, address: u64) -> Result<Hqd, KiqHalt> {
        let mut bytes = [0u8; MQD_BYTES];
        let view = self.view.as_ref();
        crate::kernel_view::read(view, self.mec.cp().dma_mut(), address, &mut bytes, "MQD")
            .ok_or(KiqHalt::MqdUnreadable { address })?;
        Ok(Hqd::from_mqd(&bytes))
    }

    fn map(&self, body: &[u32]) -> Result<(), KiqHalt> {
        let c = Self::at(body, 0);
        if mq::NUM_QUEUES.get(c) != 1 {
            return Err(KiqHalt::BadMap {
                what: "num_queues must be 1",
            });
        }
        if mq::QUEUE_SEL.get(c) != 0 {
            return Err(KiqHalt::BadMap {
                what: "only queue_sel 0 (the slot the packet names) is modelled",
            });
        }
        let (me, pipe, queue) = (
            mq::ME.get(c) as u8,
            mq::PIPE.get(c) as u8,
            mq::QUEUE.get(c) as u8,
        );
        let engine = mq::ENGINE_SEL.get(c);
        let mes = engine == mq::ENGINE_MES;
        if engine != mq::ENGINE_COMPUTE && !mes {
            return Err(KiqHalt::BadMap {
                what: "only compute queues and the MES ring are modelled",
            });
        }
        if mes && (me != 2 || pipe != 0 || !self.mec.mes_pipes()[0].1) {
            return Err(KiqHalt::BadMap {
                what: "the MES scheduler ring goes on ME 2 pipe 0 (gfx11_kiq_map_queues()), which must be running",
            });
        }
        if !mes && me != 1 {
            return Err(KiqHalt::BadMap {
                what: "compute queues load on ME 1: GC 11/12 have one MEC (mec.num_mec = 1)",
            });
        }
        if !mes {
            let Some(mask) = self.state.lock().resources else {
                return Err(KiqHalt::NoResources);
            };
            let bit = u32::from(me - 1) * 32 + u32::from(pipe) * 8 + u32::from(queue);
            if mask.checked_shr(bit).unwrap_or(0) & 1 == 0 {
                return Err(KiqHalt::NotInQueueMask { me, pipe, queue });
            }
        }
        let dword = mq::DOORBELL_OFFSET.get(Self::at(body, 1));
        let mqd_addr = Self::addr(body, mq::DW_MQD_LO - 1);
        let wptr = Self::addr(body, mq::DW_WPTR_LO - 1);
        let hqd = self.read_mqd(mqd_addr)?;
        if hqd.doorbell_dword() != dword {
            return Err(KiqHalt::DoorbellMismatch {
                packet: dword,
                mqd: hqd.doorbell_dword(),
            });
        }
        if hqd.wptr_poll_address() != wptr {
            return Err(KiqHalt::WptrMismatch {
                packet: wptr,
                mqd: hqd.wptr_poll_address(),
            });
        }
        let eop_bytes = hqd.eop_bytes().map_err(KiqHalt::Size)?;
        if hqd.eop_address() == 0 || !self.covers(hqd.eop_address(), eop_bytes, Access::Write) {
            return Err(KiqHalt::EopUnmapped {
                address: hqd.eop_address(),
                bytes: eop_bytes,
            });
        }
        if mes {
            // `mes_v11_0_mqd_init()`: a privileged kernel queue in VMID 0
            // with its doorbell enabled.
            let bad = |what| Err(KiqHalt::BadMesRing { what });
            if !hqd.privileged() || !hqd.kmd_queue() {
                return bad("the MES ring is not a privileged kernel queue");
            }
            if hqd.vmid() != 0 {
                return bad("the MES ring is not in VMID 0");
            }
            if !hqd.doorbell_enabled() {
                return bad("the MES ring's doorbell is not enabled");
            }
            if let Some(what) = hqd.mes_ring_refusal() {
                return bad(what);
            }
            self.mec.set_mes_ring(MesRingHqd {
                ring: hqd.ring_address(),
                ring_dwords: hqd.ring_bytes().map_err(KiqHalt::Size)? / 4,
                doorbell_dword: dword,
            });
            return Ok(());
        }
        // The KIQ enables the doorbell on the slot it maps; the MEC reads
        // the window with its own decoder (`crate::cpregs`).
        let image = crate::decode::mqd::Hqd(hqd.with_doorbell_enabled().0);
        self.mec
            .map_mqd((me, pipe, queue), &image)
            .map_err(KiqHalt::Mec)?;
        Ok(())
    }

    fn unmap(&self, body: &[u32]) -> Result<(), KiqHalt> {
        let c = Self::at(body, 0);
        let action = uq::ACTION.get(c);
        if uq::QUEUE_SEL.get(c) != 0 {
            return Err(KiqHalt::BadUnmap {
                what: "only queue_sel 0 (queues named by doorbell) is modelled",
            });
        }
        if uq::ENGINE_SEL.get(c) != 0 {
            return Err(KiqHalt::BadUnmap {
                what: "only compute queues are modelled",
            });
        }
        let n = uq::NUM_QUEUES.get(c) as usize;
        match action {
            uq::PREEMPT_QUEUES | uq::RESET_QUEUES => {
                if !(1..=4).contains(&n) {
                    return Err(KiqHalt::BadUnmap {
                        what: "num_queues must be 1..=4",
                    });
                }
                let doorbells: Vec<u32> = (0..n)
                    .map(|i| uq::DOORBELL_OFFSET0.get(Self::at(body, 1 + i)))
                    .collect();
                if let Some(d) = doorbells
                    .iter()
                    .find(|d| !self.mec.mapped_doorbells().contains(d))
                {
                    return Err(KiqHalt::UnknownQueue { doorbell: *d });
                }
                for d in doorbells {
                    if action == uq::RESET_QUEUES {
                        // Reset: waves killed, state discarded (the MQD
                        // stays as the driver wrote it).
                        self.mec.reset_doorbell_queue(d);
                        self.mec.unmap_doorbell(d);
                        continue;
                    }
                    // Preempt: drained, state saved into the MQD
                    // (`Mec::preempt_doorbell`); a queue that does not
                    // drain blocks the KIQ, as a DRAIN_PIPE dequeue
                    // never completes (`hqd_destroy_v11()`).
                    match self.mec.preempt_doorbell(d) {
                        Preempt::Done => {}
                        Preempt::NotMapped => {
                            return Err(KiqHalt::UnknownQueue { doorbell: d });
                        }
                        Preempt::Hung => return Err(KiqHalt::PreemptHung { doorbell: d }),
                        Preempt::MqdUnwritable { address } => {
                            return Err(KiqHalt::MqdUnreadable { address });
                        }
                    }
                }
                Ok(())
            }
            uq::PREEMPT_QUEUES_NO_UNMAP => {
                let d = uq::DOORBELL_OFFSET0.get(Self::at(body, 1));
                if n != 1 || !self.mec.mapped_doorbells().contains(&d) {
                    return Err(KiqHalt::UnknownQueue { doorbell: d });
                }
                // The queue stays mapped; the trailing fence (`gpu_addr`,
                // one dword of `seq` in `gfx11_kiq_unmap_queues()`) is
                // written.
                self.store32(Self::addr(body, 2), Self::at(body, 4), "KIQ trailing fence")
            }
            _ => Err(KiqHalt::BadUnmap {
                what: "DISABLE_PROCESS_QUEUES (by PASID) is not modelled",
            }),
        }
    }
}
