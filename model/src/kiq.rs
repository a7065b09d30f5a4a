//! A model of the KIQ: a PM4 ring the CP front end parses packet by
//! packet, up to the write pointer stored to its doorbell (in dwords).
//!
//! Packets it executes (gfx11/gfx12 `nvd.h` encodings, decoded with
//! firmware-if's bitfields):
//! - SET_RESOURCES: accepted (queue mask recorded);
//! - MAP_QUEUES: one compute queue (`num_queues` 1, `engine_sel` 0, ME 1);
//!   reads the MQD's HQD window, checks the packet's doorbell against the
//!   MQD's, and maps it on the named pipe/queue through [`Mec::map_mqd`];
//!   or the MES scheduler ring (ME 2, `engine_sel` 5, pipe 0, which must
//!   be running), recorded with [`Mec::set_mes_ring`] for the MES model;
//! - UNMAP_QUEUES (one queue, by doorbell): unmaps it;
//! - WRITE_DATA to memory (`dst_sel` 5): the fence.
//!
//! Anything else, or a MAP the MEC refuses, halts the ring with the reason
//! in [`KiqModel::log`]: the KIQ has no status channel, so a driver sees a
//! fence that never arrives. Fault switch: `silent`.

use crate::mec::{Mec, MecError, MesRingHqd};
use alloc::sync::Arc;
use alloc::vec::Vec;
use barebell::gfx::mqd::{HQD_DWORDS, HQD_FIRST_DWORD, HqdRegisters};
use barebell_firmware_if::pm4::{
    DoorbellCntl, MapQueuesCntl, PACKET_TYPE3, Type3Header, UnmapQueuesCntl, WriteDataCntl, opcode,
    write_dst,
};
use core::sync::atomic::Ordering;
use spin::Mutex;
use zerocopy::FromBytes;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KiqHalt {
    NotType3 { header: u32 },
    Unsupported { opcode: u8 },
    BadMap { what: &'static str },
    DoorbellMismatch { packet: u32, mqd: u32 },
    MqdUnreadable { address: u64 },
    Mec(MecError),
    UnknownQueue { doorbell: u32 },
    FenceUnmapped { address: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KiqEvent {
    Done { opcode: u8 },
    Halted { opcode: u8, why: KiqHalt },
}

#[derive(Debug, Default)]
struct State {
    rptr: u64,
    halted: bool,
    silent: bool,
    queue_mask: u64,
    log: Vec<KiqEvent>,
}

#[derive(Debug)]
pub struct KiqModel {
    mec: Arc<Mec>,
    rptr_report: Option<u64>,
    ring: u64,
    ring_dwords: u64,
    doorbell: u64,
    state: Mutex<State>,
}

impl KiqModel {
    /// A KIQ whose ring of `ring_dwords` is at `ring`, woken through the
    /// 64-bit doorbell slot at `doorbell`.
    pub fn new(mec: Arc<Mec>, ring: u64, ring_dwords: u64, doorbell: u64) -> Self {
        KiqModel {
            mec,
            rptr_report: None,
            ring,
            ring_dwords,
            doorbell,
            state: Mutex::new(State::default()),
        }
    }

    /// The KIQ the MEC model saw come up by register programming
    /// ([`Mec::kiq_hqd`]): its ring, size and doorbell come from the HQD
    /// registers, and it reports its read pointer (dwords) where
    /// `CP_HQD_PQ_RPTR_REPORT_ADDR` says.
    pub fn from_mec(mec: Arc<Mec>) -> Option<Self> {
        let k = mec.kiq_hqd()?;
        if k.ring_dwords == 0 {
            return None;
        }
        let doorbell = mec.doorbell_bar() + u64::from(k.doorbell_dword) * 4;
        let mut m = KiqModel::new(mec, k.ring, k.ring_dwords, doorbell);
        m.rptr_report = Some(k.rptr_report);
        Some(m)
    }

    pub fn set_silent(&self, silent: bool) {
        self.state.lock().silent = silent;
    }

    pub fn log(&self) -> Vec<KiqEvent> {
        self.state.lock().log.clone()
    }

    pub fn is_halted(&self) -> bool {
        self.state.lock().halted
    }

    pub fn queue_mask(&self) -> u64 {
        self.state.lock().queue_mask
    }

    fn dword(&self, index: u64) -> Option<u32> {
        let at = self.ring + (index % self.ring_dwords) * 4;
        let v = self
            .mec
            .cp()
            .dma_mut()
            .u32(at, "KIQ ring")
            .ok()?
            .load(Ordering::Acquire);
        Some(v)
    }

    /// Executes every packet announced on the doorbell. Returns how many.
    pub fn service(&self) -> usize {
        {
            let s = self.state.lock();
            if s.silent || s.halted {
                return 0;
            }
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
            let rptr = self.state.lock().rptr;
            if wptr.wrapping_sub(rptr) == 0 || wptr.wrapping_sub(rptr) > u64::MAX / 2 {
                break;
            }
            let Some(word) = self.dword(rptr) else { break };
            let h = Type3Header::from_bits(word);
            if u32::from(h.packet_type()) != PACKET_TYPE3 {
                self.halt(0, KiqHalt::NotType3 { header: word });
                break;
            }
            let len = u64::from(h.count()) + 1;
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
            match self.packet(h.opcode(), &body) {
                Ok(()) => {
                    let next = rptr + 1 + len;
                    {
                        let mut s = self.state.lock();
                        s.log.push(KiqEvent::Done { opcode: h.opcode() });
                        s.rptr = next;
                    }
                    if let Some(a) = self.rptr_report
                        && let Ok(r) = self.mec.cp().dma_mut().u32(a, "KIQ rptr report")
                    {
                        r.store((next % self.ring_dwords) as u32, Ordering::Release);
                    }
                    n += 1;
                }
                Err(why) => {
                    self.halt(h.opcode(), why);
                    break;
                }
            }
        }
        n
    }

    fn halt(&self, opcode: u8, why: KiqHalt) {
        let mut s = self.state.lock();
        s.halted = true;
        s.log.push(KiqEvent::Halted { opcode, why });
    }

    fn packet(&self, op: u8, body: &[u32]) -> Result<(), KiqHalt> {
        let at = |i: usize| body.get(i).copied().unwrap_or(0);
        let addr = |i: usize| u64::from(at(i)) | u64::from(at(i + 1)) << 32;
        match op {
            opcode::SET_RESOURCES => {
                self.state.lock().queue_mask = addr(1);
                Ok(())
            }
            opcode::WRITE_DATA => {
                let c = WriteDataCntl::from_bits(at(0));
                if c.dst_sel() != write_dst::MEMORY {
                    return Err(KiqHalt::Unsupported { opcode: op });
                }
                let a = addr(1);
                self.mec
                    .cp()
                    .dma_mut()
                    .u32(a, "KIQ WRITE_DATA")
                    .map_err(|_| KiqHalt::FenceUnmapped { address: a })?
                    .store(at(3), Ordering::Release);
                Ok(())
            }
            opcode::MAP_QUEUES => self.map(body),
            opcode::UNMAP_QUEUES => {
                let c = UnmapQueuesCntl::from_bits(at(0));
                if c.num_queues() != 1 || c.queue_sel() != 0 {
                    return Err(KiqHalt::BadMap {
                        what: "UNMAP_QUEUES must name one queue by doorbell",
                    });
                }
                let dword = DoorbellCntl::from_bits(at(1)).doorbell_offset();
                if self.mec.unmap_doorbell(dword) {
                    Ok(())
                } else {
                    Err(KiqHalt::UnknownQueue { doorbell: dword })
                }
            }
            other => Err(KiqHalt::Unsupported { opcode: other }),
        }
    }

    fn map(&self, body: &[u32]) -> Result<(), KiqHalt> {
        let at = |i: usize| body.get(i).copied().unwrap_or(0);
        let c = MapQueuesCntl::from_bits(at(0));
        if c.num_queues() != 1 {
            return Err(KiqHalt::BadMap {
                what: "num_queues must be 1",
            });
        }
        let mes = c.me() == 2 && c.engine_sel() == 5;
        if !mes && (c.engine_sel() != 0 || c.me() != 1) {
            return Err(KiqHalt::BadMap {
                what: "only compute queues on ME 1 and the MES ring are modelled",
            });
        }
        if mes && (c.pipe() != 0 || !self.mec.mes_pipe_running(0)) {
            return Err(KiqHalt::BadMap {
                what: "the MES scheduler ring goes on MES pipe 0, which must be running",
            });
        }
        let dword = DoorbellCntl::from_bits(at(1)).doorbell_offset();
        let mqd = u64::from(at(2)) | u64::from(at(3)) << 32;
        let mut bytes = [0u8; HQD_DWORDS * 4];
        self.mec
            .cp()
            .dma_mut()
            .read(mqd + (HQD_FIRST_DWORD * 4) as u64, &mut bytes, "MQD")
            .map_err(|_| KiqHalt::MqdUnreadable { address: mqd })?;
        let hqd = HqdRegisters::read_from_bytes(&bytes)
            .map_err(|_| KiqHalt::MqdUnreadable { address: mqd })?;
        let mqd_db = hqd.doorbell_control().doorbell_offset();
        if mqd_db != dword {
            return Err(KiqHalt::DoorbellMismatch {
                packet: dword,
                mqd: mqd_db,
            });
        }
        if mes {
            self.mec.set_mes_ring(MesRingHqd {
                ring: hqd.ring_address(),
                ring_dwords: hqd.ring_bytes().unwrap_or(0) / 4,
                doorbell_dword: dword,
            });
            return Ok(());
        }
        // The KIQ enables the doorbell on the slot it maps; the MEC reads
        // the window with its own decoder (`crate::cpregs`).
        let mut image = crate::cpregs::Hqd::from_mqd_window(&bytes);
        let db = crate::cpregs::w::PQ_DOORBELL_CONTROL;
        image.set(db, image.get(db) | crate::cpregs::DOORBELL_EN_MASK);
        self.mec
            .map_mqd((c.me(), c.pipe(), c.queue()), &image)
            .map_err(KiqHalt::Mec)?;
        Ok(())
    }
}
