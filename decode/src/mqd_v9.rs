//! The v9 compute MQD (`struct v9_mqd`, `v9_structs.h`) and one XCC's HQD
//! register state on GC 9.4.3, decoded with the model's own offsets and
//! bit positions (written from `v9_structs.h`, `gc_9_4_3_offset.h` and
//! `gc_9_4_3_sh_mask.h`, each a conformance fact below), never with the
//! runtime's structs.
//!
//! [`MqdV9::check`] applies what the hardware and KFD imply for one XCC's
//! MQD of an AQL queue spread over several XCCs; [`check_queue`] checks
//! the XCCs' MQDs against each other (`init_mqd_v9_4_3()`'s invariants).
//! [`HqdStateV9`] is one XCC's HQD window as register writes leave it, for
//! a MEC model to load from.
//!
//! Model conventions (not public facts), labelled where they are used:
//! - a doorbell all XCCs share is accepted when it lies in XCC 0's MEC
//!   doorbell range (which XCC's range gates it is not public);
//! - with several XCCs, `NO_UPDATE_RPTR` must be clear on XCC 0 and set on
//!   the others, as `init_mqd_v9_4_3()` writes it;
//! - the EOP size is refused above KFD's clamp 0xA (`update_mqd()` says the
//!   CP does not clamp it and larger values overflow the EOP done count).

use super::{Bits, le32};
use alloc::vec::Vec;
use barebell_facts::Fact;

/// The most XCCs a GC 9.4.3 part has (MI300X: 8).
pub const MAX_XCCS: usize = 8;

/// `sizeof(struct v9_mqd)`.
pub const MQD_BYTES: usize = 2048;
/// The header `init_mqd()` writes.
pub const MQD_HEADER: u32 = 0xC031_0800;
/// First MQD dword of the HQD window (`cp_mqd_base_addr_lo`).
pub const WINDOW_FIRST: usize = 128;
/// `CP_MQD_BASE_ADDR ..= CP_HQD_AQL_DISPATCH_ID_HI` on GC 9.4.3.
pub const WINDOW_DWORDS: usize =
    (reg::CP_HQD_AQL_DISPATCH_ID_HI - reg::CP_MQD_BASE_ADDR + 1) as usize;

/// `struct v9_mqd` dword indices.
pub mod dw {
    pub const HEADER: usize = 0;
    pub const PIPELINESTAT_ENABLE: usize = 11;
    pub const STATIC_THREAD_MGMT_SE0: usize = 23;
    pub const STATIC_THREAD_MGMT_SE3: usize = 27;
    /// Union with `compute_static_thread_mgmt_se4` .. `se7`.
    pub const CURRENT_LOGIC_XCC_ID: usize = 39;
    pub const RESTART_CG_TG_ID: usize = 40;
    pub const TG_CHUNK_SIZE: usize = 41;
    pub const RESTORE_TG_CHUNK_SIZE: usize = 42;
    pub const MQD_BASE_ADDR_LO: usize = 128;
    pub const MQD_BASE_ADDR_HI: usize = 129;
    pub const HQD_ACTIVE: usize = 130;
    pub const HQD_VMID: usize = 131;
    pub const PERSISTENT_STATE: usize = 132;
    pub const PQ_BASE_LO: usize = 136;
    pub const PQ_BASE_HI: usize = 137;
    pub const PQ_RPTR: usize = 138;
    pub const PQ_RPTR_REPORT_ADDR_LO: usize = 139;
    pub const PQ_RPTR_REPORT_ADDR_HI: usize = 140;
    pub const PQ_WPTR_POLL_ADDR_LO: usize = 141;
    pub const PQ_WPTR_POLL_ADDR_HI: usize = 142;
    pub const PQ_DOORBELL_CONTROL: usize = 143;
    pub const PQ_CONTROL: usize = 145;
    pub const IB_CONTROL: usize = 149;
    pub const MQD_CONTROL: usize = 162;
    pub const EOP_BASE_ADDR_LO: usize = 165;
    pub const EOP_BASE_ADDR_HI: usize = 166;
    pub const EOP_CONTROL: usize = 167;
    pub const EOP_RPTR: usize = 168;
    pub const CTX_SAVE_BASE_ADDR_LO: usize = 171;
    pub const CTX_SAVE_BASE_ADDR_HI: usize = 172;
    pub const CNTL_STACK_SIZE: usize = 175;
    pub const CTX_SAVE_SIZE: usize = 177;
    pub const AQL_CONTROL: usize = 181;
    pub const PQ_WPTR_LO: usize = 182;
    pub const PQ_WPTR_HI: usize = 183;
    pub const PM4_TARGET_XCC_IN_XCP: usize = 225;
    pub const MQD_STRIDE_SIZE: usize = 226;
    /// Where the HWS logs a queue whose preemption it abandoned
    /// (`kfd_check_hiq_mqd_doorbell_id()` reads it from the HIQ MQD).
    pub const QUEUE_DOORBELL_ID0: usize = 240;
}

/// GC 9.4.3 register dword offsets (segment 0) the HQD state covers.
pub mod reg {
    pub const GRBM_GFX_CNTL: u32 = 0x0022;
    pub const CP_MEC_DOORBELL_RANGE_LOWER: u32 = 0x105c;
    pub const CP_MEC_DOORBELL_RANGE_UPPER: u32 = 0x105d;
    pub const CP_MQD_BASE_ADDR: u32 = 0x1245;
    pub const CP_HQD_ACTIVE: u32 = 0x1247;
    pub const CP_HQD_PQ_DOORBELL_CONTROL: u32 = 0x1254;
    pub const CP_HQD_EOP_RPTR: u32 = 0x126d;
    pub const CP_HQD_PQ_WPTR_LO: u32 = 0x127b;
    pub const CP_HQD_AQL_DISPATCH_ID_HI: u32 = 0x127f;
}

/// `CP_HQD_PQ_CONTROL` fields (GC 9.x layout).
pub const QUEUE_SIZE: Bits = Bits::new(0, 6);
pub const RPTR_BLOCK_SIZE: Bits = Bits::new(8, 6);
pub const QUEUE_FULL_EN: Bits = Bits::new(14, 1);
pub const WPP_CLAMP_EN: Bits = Bits::new(16, 1);
pub const SLOT_BASED_WPTR: Bits = Bits::new(25, 2);
pub const NO_UPDATE_RPTR: Bits = Bits::new(27, 1);
pub const UNORD_DISPATCH: Bits = Bits::new(28, 1);
pub const PQ_PRIV_STATE: Bits = Bits::new(30, 1);
pub const KMD_QUEUE: Bits = Bits::new(31, 1);
/// `CP_HQD_PQ_DOORBELL_CONTROL` fields.
pub const DOORBELL_BIF_DROP: Bits = Bits::new(1, 1);
pub const DOORBELL_OFFSET: Bits = Bits::new(2, 26);
pub const DOORBELL_EN: Bits = Bits::new(30, 1);
/// `CP_HQD_EOP_CONTROL.EOP_SIZE`: `2^(EOP_SIZE+1)` dwords.
pub const EOP_SIZE: Bits = Bits::new(0, 6);
/// `CP_HQD_EOP_RPTR.INIT_FETCHER`.
pub const INIT_FETCHER: Bits = Bits::new(31, 1);
/// `CP_HQD_VMID.VMID`.
pub const VMID: Bits = Bits::new(0, 4);
/// `CP_HQD_ACTIVE.ACTIVE`.
pub const ACTIVE: Bits = Bits::new(0, 1);
/// `CP_HQD_AQL_CONTROL.CONTROL0`.
pub const AQL_CONTROL0: Bits = Bits::new(0, 15);
/// `CP_HQD_PERSISTENT_STATE.QSWITCH_MODE` (CWSR on).
pub const QSWITCH_MODE: Bits = Bits::new(30, 1);
/// `COMPUTE_TG_CHUNK_SIZE.TG_CHUNK_SIZE`.
pub const TG_CHUNK: Bits = Bits::new(0, 16);
/// `CP_MEC_DOORBELL_RANGE_LOWER/UPPER`: a dword-aligned byte offset.
pub const DOORBELL_RANGE: Bits = Bits::new(2, 26);
/// `GRBM_GFX_CNTL` fields.
pub const GRBM_PIPEID: Bits = Bits::new(0, 2);
pub const GRBM_MEID: Bits = Bits::new(2, 2);
pub const GRBM_VMID: Bits = Bits::new(4, 4);
pub const GRBM_QUEUEID: Bits = Bits::new(8, 3);

/// The largest `EOP_SIZE` KFD writes (`update_mqd()`'s clamp).
pub const EOP_SIZE_MAX: u32 = 0xA;

fn join(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | u64::from(hi) << 32
}

/// What a v9 MQD or HQD state fails on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MqdV9Fault {
    /// Fewer than [`MQD_BYTES`] bytes.
    Short {
        len: usize,
    },
    /// A queue on no XCC or on more than GC 9.4.3 has.
    XccCount {
        xccs: usize,
    },
    Header {
        found: u32,
    },
    /// `cp_mqd_base_addr` is not where the MQD lies.
    MqdAddress {
        found: u64,
        expected: u64,
    },
    /// `compute_current_logic_xcc_id` outside `0..xccs`.
    LogicXccId {
        xcc: usize,
        found: u32,
        xccs: usize,
    },
    /// An AQL queue on several XCCs with `compute_tg_chunk_size` 0.
    TgChunkSize {
        xcc: usize,
        found: u32,
    },
    /// `cp_mqd_stride_size` below the MQD size or not the spacing found.
    Stride {
        xcc: usize,
        found: u32,
    },
    /// `NO_UPDATE_RPTR` wrong for the XCC (clear only on XCC 0).
    NoUpdateRptr {
        xcc: usize,
        found: bool,
    },
    /// `SLOT_BASED_WPTR` is not 2 (64-byte AQL slots).
    SlotBasedWptr {
        xcc: usize,
        found: u32,
    },
    /// `CP_HQD_AQL_CONTROL.CONTROL0` is not 1 for an AQL queue.
    NotAql {
        xcc: usize,
    },
    /// The ring cannot be below 256 bytes (`QUEUE_SIZE` under 5).
    QueueSize {
        xcc: usize,
        field: u32,
    },
    /// `EOP_SIZE` above KFD's clamp, or no EOP buffer.
    EopSize {
        xcc: usize,
        field: u32,
    },
    /// The doorbell lies outside the MEC doorbell range that gates it.
    DoorbellOutsideRange {
        xcc: usize,
        dword: u32,
        lower_bytes: u32,
        upper_bytes: u32,
    },
    /// XCC `xcc` names a different ring, pointer or EOP buffer than XCC 0.
    Diverges {
        xcc: usize,
        what: &'static str,
    },
    /// The logical XCC ids are not the rotation `(start + xcc) % xccs`.
    LogicXccOrder {
        xcc: usize,
        found: u32,
        expected: u32,
    },
}

impl core::fmt::Display for MqdV9Fault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MqdV9Fault::Short { len } => write!(f, "v9 MQD of {len} bytes, expected 2048"),
            MqdV9Fault::XccCount { xccs } => {
                write!(
                    f,
                    "a queue on {xccs} XCCs: GC 9.4.3 has 1 to 8, GC 9.4.2 one GC"
                )
            }
            MqdV9Fault::Header { found } => {
                write!(f, "v9 MQD header {found:#010x}, expected 0xc0310800")
            }
            MqdV9Fault::MqdAddress { found, expected } => write!(
                f,
                "v9 MQD names itself at {found:#x} but lies at {expected:#x}"
            ),
            MqdV9Fault::LogicXccId { xcc, found, xccs } => write!(
                f,
                "XCC {xcc}: compute_current_logic_xcc_id {found} is not below the queue's {xccs} XCCs"
            ),
            MqdV9Fault::TgChunkSize { xcc, found } => write!(
                f,
                "XCC {xcc}: compute_tg_chunk_size {found}: an AQL queue on several XCCs needs a nonzero chunk"
            ),
            MqdV9Fault::Stride { xcc, found } => write!(
                f,
                "XCC {xcc}: cp_mqd_stride_size {found:#x} does not match the MQDs' spacing"
            ),
            MqdV9Fault::NoUpdateRptr { xcc, found } => write!(
                f,
                "XCC {xcc}: NO_UPDATE_RPTR is {found}; only XCC 0 may update the read pointer"
            ),
            MqdV9Fault::SlotBasedWptr { xcc, found } => write!(
                f,
                "XCC {xcc}: SLOT_BASED_WPTR {found}, an AQL queue needs 2"
            ),
            MqdV9Fault::NotAql { xcc } => {
                write!(f, "XCC {xcc}: CP_HQD_AQL_CONTROL.CONTROL0 is not set")
            }
            MqdV9Fault::QueueSize { xcc, field } => {
                write!(f, "XCC {xcc}: QUEUE_SIZE {field} is a ring under 256 bytes")
            }
            MqdV9Fault::EopSize { xcc, field } => {
                write!(f, "XCC {xcc}: EOP_SIZE {field} is outside 1..=0xA")
            }
            MqdV9Fault::DoorbellOutsideRange {
                xcc,
                dword,
                lower_bytes,
                upper_bytes,
            } => write!(
                f,
                "XCC {xcc}: doorbell dword {dword:#x} is outside the MEC doorbell range {lower_bytes:#x}..={upper_bytes:#x}"
            ),
            MqdV9Fault::Diverges { xcc, what } => {
                write!(f, "XCC {xcc} names a different {what} than XCC 0")
            }
            MqdV9Fault::LogicXccOrder {
                xcc,
                found,
                expected,
            } => write!(
                f,
                "XCC {xcc}: logical XCC id {found}, expected {expected} after XCC 0's"
            ),
        }
    }
}

/// The HQD window of one XCC, register order from `CP_MQD_BASE_ADDR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HqdV9(pub [u32; WINDOW_DWORDS]);

impl HqdV9 {
    /// The window as the scheduler firmware loads it for a queue of the
    /// process it mapped to `vmid`: KFD's MQD under the HWS leaves
    /// `cp_hqd_vmid` 0 and DOORBELL_EN clear (`init_mqd()` and
    /// `update_mqd()` in `kfd_mqd_manager_v9.c`; MAP_QUEUES carries no
    /// VMID, the queue runs in the VMID MAP_PROCESS gave its process,
    /// `pm_map_process_v9()`), and a driver's own HQD load sets
    /// DOORBELL_EN as it loads (`kgd_gfx_v9_hqd_load()`). That the
    /// firmware's load does both in the HQD registers is the model's
    /// reading: the queue could not run in its process or ring otherwise.
    pub fn loaded_for(mut self, vmid: u8) -> Self {
        if let Some(v) = self.0.get_mut(dw::HQD_VMID - WINDOW_FIRST) {
            *v = (*v & !VMID.mask()) | (u32::from(vmid) & VMID.mask());
        }
        if let Some(d) = self.0.get_mut(dw::PQ_DOORBELL_CONTROL - WINDOW_FIRST) {
            *d |= DOORBELL_EN.mask();
        }
        self
    }

    fn at(&self, mqd_dword: usize) -> u32 {
        self.0
            .get(mqd_dword.wrapping_sub(WINDOW_FIRST))
            .copied()
            .unwrap_or(0)
    }
    pub fn mqd_address(&self) -> u64 {
        join(self.at(dw::MQD_BASE_ADDR_LO), self.at(dw::MQD_BASE_ADDR_HI))
    }
    pub fn active(&self) -> bool {
        ACTIVE.is_set(self.at(dw::HQD_ACTIVE))
    }
    pub fn vmid(&self) -> u32 {
        VMID.get(self.at(dw::HQD_VMID))
    }
    /// Ring base in bytes (`CP_HQD_PQ_BASE` holds bits 39:8 onward).
    pub fn ring_address(&self) -> u64 {
        join(self.at(dw::PQ_BASE_LO), self.at(dw::PQ_BASE_HI)) << 8
    }
    pub fn pq_control(&self) -> u32 {
        self.at(dw::PQ_CONTROL)
    }
    /// Ring bytes: `2^(QUEUE_SIZE+1)` dwords.
    pub fn ring_bytes(&self) -> Result<u64, super::mqd::SizeBeyondAddressSpace> {
        super::mqd::dwords_pow2_bytes(
            "CP_HQD_PQ_CONTROL.QUEUE_SIZE",
            QUEUE_SIZE.get(self.pq_control()),
        )
    }
    pub fn rptr_report_address(&self) -> u64 {
        join(
            self.at(dw::PQ_RPTR_REPORT_ADDR_LO),
            self.at(dw::PQ_RPTR_REPORT_ADDR_HI),
        )
    }
    pub fn wptr_poll_address(&self) -> u64 {
        join(
            self.at(dw::PQ_WPTR_POLL_ADDR_LO),
            self.at(dw::PQ_WPTR_POLL_ADDR_HI),
        )
    }
    pub fn doorbell_dword(&self) -> u32 {
        DOORBELL_OFFSET.get(self.at(dw::PQ_DOORBELL_CONTROL))
    }
    pub fn doorbell_enabled(&self) -> bool {
        DOORBELL_EN.is_set(self.at(dw::PQ_DOORBELL_CONTROL))
    }
    pub fn eop_address(&self) -> u64 {
        join(self.at(dw::EOP_BASE_ADDR_LO), self.at(dw::EOP_BASE_ADDR_HI)) << 8
    }
    pub fn eop_size_field(&self) -> u32 {
        EOP_SIZE.get(self.at(dw::EOP_CONTROL))
    }
    /// EOP bytes: `2^(EOP_SIZE+1)` dwords.
    pub fn eop_bytes(&self) -> Result<u64, super::mqd::SizeBeyondAddressSpace> {
        super::mqd::dwords_pow2_bytes("CP_HQD_EOP_CONTROL.EOP_SIZE", self.eop_size_field())
    }
    pub fn ctx_save_address(&self) -> u64 {
        join(
            self.at(dw::CTX_SAVE_BASE_ADDR_LO),
            self.at(dw::CTX_SAVE_BASE_ADDR_HI),
        )
    }
    pub fn ctx_save_size(&self) -> u32 {
        self.at(dw::CTX_SAVE_SIZE)
    }
    pub fn cwsr(&self) -> bool {
        QSWITCH_MODE.is_set(self.at(dw::PERSISTENT_STATE))
    }
    pub fn aql(&self) -> bool {
        AQL_CONTROL0.get(self.at(dw::AQL_CONTROL)) == 1
    }
    pub fn wptr(&self) -> u64 {
        join(self.at(dw::PQ_WPTR_LO), self.at(dw::PQ_WPTR_HI))
    }
}

/// One decoded `struct v9_mqd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MqdV9 {
    pub header: u32,
    pub pipelinestat_enable: u32,
    /// `compute_static_thread_mgmt_se0..3`.
    pub se_masks: [u32; 4],
    pub current_logic_xcc_id: u32,
    pub restart_cg_tg_id: u32,
    pub tg_chunk_size: u32,
    pub restore_tg_chunk_size: u32,
    pub pm4_target_xcc_in_xcp: u32,
    pub mqd_stride_size: u32,
    pub hqd: HqdV9,
}

/// Where one XCC's MQD was found and the range its doorbell must fall in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XccView {
    /// The queue-relative XCC index (`inst` in `load_mqd_v9_4_3()`).
    pub xcc: usize,
    /// XCCs the queue spans.
    pub xccs: usize,
    /// The address the MQD was read from.
    pub mqd_address: u64,
    /// `CP_MEC_DOORBELL_RANGE_LOWER/UPPER` (bytes) gating this MQD's
    /// doorbell (XCC 0's for a shared doorbell: model convention).
    pub doorbell_range: (u32, u32),
    /// Whether the MQD's unions hold GC 9.4.3's XCC fields
    /// (`compute_current_logic_xcc_id`, `compute_tg_chunk_size`,
    /// `cp_mqd_stride_size`, ...). On GC 9.4.2 the same dwords are
    /// `compute_static_thread_mgmt_se4..7` and reserved ones (the other
    /// arm of each union in `v9_structs.h`), which `init_mqd()` fills
    /// with CU masks (`0xFFFFFFFF`), so none of the XCC checks apply.
    pub xcc_fields: bool,
}

impl MqdV9 {
    /// Decodes the first [`MQD_BYTES`] of `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<Self, MqdV9Fault> {
        if bytes.len() < MQD_BYTES {
            return Err(MqdV9Fault::Short { len: bytes.len() });
        }
        let d = |i: usize| le32(bytes, i * 4);
        let mut w = [0u32; WINDOW_DWORDS];
        for (i, x) in w.iter_mut().enumerate() {
            *x = d(WINDOW_FIRST + i);
        }
        Ok(MqdV9 {
            header: d(dw::HEADER),
            pipelinestat_enable: d(dw::PIPELINESTAT_ENABLE),
            se_masks: [
                d(dw::STATIC_THREAD_MGMT_SE0),
                d(dw::STATIC_THREAD_MGMT_SE0 + 1),
                d(dw::STATIC_THREAD_MGMT_SE0 + 3),
                d(dw::STATIC_THREAD_MGMT_SE3),
            ],
            current_logic_xcc_id: d(dw::CURRENT_LOGIC_XCC_ID),
            restart_cg_tg_id: d(dw::RESTART_CG_TG_ID),
            tg_chunk_size: d(dw::TG_CHUNK_SIZE),
            restore_tg_chunk_size: d(dw::RESTORE_TG_CHUNK_SIZE),
            pm4_target_xcc_in_xcp: d(dw::PM4_TARGET_XCC_IN_XCP),
            mqd_stride_size: d(dw::MQD_STRIDE_SIZE),
            hqd: HqdV9(w),
        })
    }

    /// What one XCC's MQD of an AQL queue must satisfy.
    pub fn check(&self, v: &XccView) -> Result<(), MqdV9Fault> {
        let xcc = v.xcc;
        if self.header != MQD_HEADER {
            return Err(MqdV9Fault::Header { found: self.header });
        }
        if self.hqd.mqd_address() != v.mqd_address {
            return Err(MqdV9Fault::MqdAddress {
                found: self.hqd.mqd_address(),
                expected: v.mqd_address,
            });
        }
        if !self.hqd.aql() {
            return Err(MqdV9Fault::NotAql { xcc });
        }
        let pq = self.hqd.pq_control();
        let slots = SLOT_BASED_WPTR.get(pq);
        if slots != 2 {
            return Err(MqdV9Fault::SlotBasedWptr { xcc, found: slots });
        }
        let qs = QUEUE_SIZE.get(pq);
        // Below 5 (256 bytes) is too small for an AQL ring; above the
        // address space no memory backs it (`mqd::MAX_QUEUE_BYTES_LOG2`).
        if qs < 5 || self.hqd.ring_bytes().is_err() {
            return Err(MqdV9Fault::QueueSize { xcc, field: qs });
        }
        let eop = self.hqd.eop_size_field();
        // Model convention: KFD's clamp is the ceiling.
        if eop == 0 || eop > EOP_SIZE_MAX {
            return Err(MqdV9Fault::EopSize { xcc, field: eop });
        }
        let dword = self.hqd.doorbell_dword();
        let (lower_bytes, upper_bytes) = v.doorbell_range;
        let byte = u64::from(dword) * 4;
        if byte < u64::from(lower_bytes) || byte > u64::from(upper_bytes) {
            return Err(MqdV9Fault::DoorbellOutsideRange {
                xcc,
                dword,
                lower_bytes,
                upper_bytes,
            });
        }
        // init_mqd_v9_4_3(): only the master XCC updates the read pointer.
        // Enforcing it is the model's convention (a second writer would
        // race the first); with one XCC either value is accepted, as
        // tinygrad keeps NO_UPDATE_RPTR set there while KFD clears it.
        let no_update = NO_UPDATE_RPTR.is_set(pq);
        if v.xccs > 1 && no_update != (xcc != 0) {
            return Err(MqdV9Fault::NoUpdateRptr {
                xcc,
                found: no_update,
            });
        }
        if !v.xcc_fields {
            return Ok(());
        }
        if self.current_logic_xcc_id as usize >= v.xccs {
            return Err(MqdV9Fault::LogicXccId {
                xcc,
                found: self.current_logic_xcc_id,
                xccs: v.xccs,
            });
        }
        if TG_CHUNK.get(self.tg_chunk_size) == 0 && v.xccs > 1 {
            return Err(MqdV9Fault::TgChunkSize {
                xcc,
                found: self.tg_chunk_size,
            });
        }
        if (self.mqd_stride_size as usize) < MQD_BYTES && v.xccs > 1 {
            return Err(MqdV9Fault::Stride {
                xcc,
                found: self.mqd_stride_size,
            });
        }
        Ok(())
    }
}

/// Decodes and checks a queue's MQDs, XCC 0's at `address`, the rest at
/// XCC 0's `cp_mqd_stride_size` apart (as `destroy_mqd_v9_4_3()` walks
/// them), with `ranges[n]` the MEC doorbell range gating XCC `n`'s
/// doorbell. `xcc_fields`: GC 9.4.3's MQD ([`XccView::xcc_fields`]); a
/// GC 9.4.2 queue has one MQD. Returns the decoded MQDs in XCC order.
pub fn check_queue(
    bytes: &[u8],
    address: u64,
    xccs: usize,
    ranges: &[(u32, u32)],
    xcc_fields: bool,
) -> Result<Vec<MqdV9>, MqdV9Fault> {
    if !(1..=MAX_XCCS).contains(&xccs) || (!xcc_fields && xccs != 1) {
        return Err(MqdV9Fault::XccCount { xccs });
    }
    if !xcc_fields {
        let m = MqdV9::decode(bytes)?;
        m.check(&XccView {
            xcc: 0,
            xccs: 1,
            mqd_address: address,
            doorbell_range: ranges.first().copied().unwrap_or((1, 0)),
            xcc_fields,
        })?;
        return Ok(alloc::vec![m]);
    }
    let first = MqdV9::decode(bytes)?;
    let stride = first.mqd_stride_size as usize;
    let mut out = Vec::with_capacity(xccs);
    for xcc in 0..xccs {
        let at = stride.saturating_mul(xcc);
        let m = MqdV9::decode(bytes.get(at..).unwrap_or(&[]))?;
        if m.mqd_stride_size != first.mqd_stride_size {
            return Err(MqdV9Fault::Stride {
                xcc,
                found: m.mqd_stride_size,
            });
        }
        let view = XccView {
            xcc,
            xccs,
            mqd_address: address + at as u64,
            doorbell_range: ranges.get(xcc).copied().unwrap_or((1, 0)),
            xcc_fields,
        };
        m.check(&view)?;
        let same = [
            ("ring", m.hqd.ring_address() == first.hqd.ring_address()),
            ("ring size", m.hqd.ring_bytes() == first.hqd.ring_bytes()),
            (
                "read pointer address",
                m.hqd.rptr_report_address() == first.hqd.rptr_report_address(),
            ),
            (
                "write pointer address",
                m.hqd.wptr_poll_address() == first.hqd.wptr_poll_address(),
            ),
            ("EOP buffer", m.hqd.eop_address() == first.hqd.eop_address()),
        ];
        if let Some((what, _)) = same.iter().find(|(_, ok)| !ok) {
            return Err(MqdV9Fault::Diverges { xcc, what });
        }
        let expected = ((first.current_logic_xcc_id as usize + xcc) % xccs) as u32;
        if m.current_logic_xcc_id != expected {
            return Err(MqdV9Fault::LogicXccOrder {
                xcc,
                found: m.current_logic_xcc_id,
                expected,
            });
        }
        out.push(m);
    }
    Ok(out)
}

/// One XCC's HQD state as register writes leave it: the window registers
/// per selected slot would live in a MEC model; this keeps one slot's, the
/// one `GRBM_GFX_CNTL` selects, for a model to hand over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HqdStateV9 {
    /// `GRBM_GFX_CNTL` as last written.
    pub grbm_gfx_cntl: u32,
    pub window: HqdV9,
    pub doorbell_range: (u32, u32),
}

/// The slot `GRBM_GFX_CNTL` selects: (ME, pipe, queue, VMID).
pub fn grbm_select(v: u32) -> (u32, u32, u32, u32) {
    (
        GRBM_MEID.get(v),
        GRBM_PIPEID.get(v),
        GRBM_QUEUEID.get(v),
        GRBM_VMID.get(v),
    )
}

impl Default for HqdStateV9 {
    fn default() -> Self {
        HqdStateV9 {
            grbm_gfx_cntl: 0,
            window: HqdV9([0; WINDOW_DWORDS]),
            doorbell_range: (0, 0),
        }
    }
}

impl HqdStateV9 {
    /// Takes a write of `value` to GC register dword `offset` (segment
    /// 0); returns whether it was one of this state's registers.
    pub fn write(&mut self, offset: u32, value: u32) -> bool {
        match offset {
            reg::GRBM_GFX_CNTL => self.grbm_gfx_cntl = value,
            reg::CP_MEC_DOORBELL_RANGE_LOWER => {
                self.doorbell_range.0 = value & DOORBELL_RANGE.mask()
            }
            reg::CP_MEC_DOORBELL_RANGE_UPPER => {
                self.doorbell_range.1 = value & DOORBELL_RANGE.mask()
            }
            o if (reg::CP_MQD_BASE_ADDR..=reg::CP_HQD_AQL_DISPATCH_ID_HI).contains(&o) => {
                if let Some(slot) = self.window.0.get_mut((o - reg::CP_MQD_BASE_ADDR) as usize) {
                    *slot = value;
                }
            }
            _ => return false,
        }
        true
    }

    /// The checks a MEC applies when `CP_HQD_ACTIVE` is set: an AQL window
    /// whose doorbell is enabled and inside this XCC's range (the view's
    /// MQD address is the window's own).
    pub fn check_activation(&self, xcc: usize, xccs: usize) -> Result<(), MqdV9Fault> {
        let view = XccView {
            xcc,
            xccs,
            mqd_address: self.window.mqd_address(),
            doorbell_range: self.doorbell_range,
            // The window holds no union dword.
            xcc_fields: false,
        };
        let m = MqdV9 {
            header: MQD_HEADER,
            pipelinestat_enable: 0,
            se_masks: [0; 4],
            // The window holds no XCC id or chunk: not checked here.
            current_logic_xcc_id: 0,
            restart_cg_tg_id: 0,
            tg_chunk_size: 1,
            restore_tg_chunk_size: 0,
            pm4_target_xcc_in_xcp: 0,
            mqd_stride_size: MQD_BYTES as u32,
            hqd: self.window,
        };
        m.check(&view)
    }
}

const H: &str = "v9_structs.h";
const T: &str = "struct v9_mqd";
const SH: &str = "gc_9_4_3_sh_mask.h";
const OFF: &str = "gc_9_4_3_offset.h";

const fn o(field: &'static str, dword: usize) -> Fact {
    Fact::offset(H, T, field, dword * 4)
}
const fn m(expr: &'static str, b: Bits) -> Fact {
    Fact::constant(SH, expr, b.mask() as u64)
}
const fn r(expr: &'static str, v: u32) -> Fact {
    Fact::constant(OFF, expr, v as u64)
}

/// The model's own v9 MQD offsets, field masks and register offsets.
pub const FACTS: &[Fact] = &[
    Fact::size(H, T, MQD_BYTES),
    o("header", dw::HEADER),
    o("compute_pipelinestat_enable", dw::PIPELINESTAT_ENABLE),
    o("compute_static_thread_mgmt_se0", dw::STATIC_THREAD_MGMT_SE0),
    o(
        "compute_static_thread_mgmt_se1",
        dw::STATIC_THREAD_MGMT_SE0 + 1,
    ),
    o(
        "compute_static_thread_mgmt_se2",
        dw::STATIC_THREAD_MGMT_SE0 + 3,
    ),
    o("compute_static_thread_mgmt_se3", dw::STATIC_THREAD_MGMT_SE3),
    o("compute_current_logic_xcc_id", dw::CURRENT_LOGIC_XCC_ID),
    o("compute_restart_cg_tg_id", dw::RESTART_CG_TG_ID),
    o("compute_tg_chunk_size", dw::TG_CHUNK_SIZE),
    o("compute_restore_tg_chunk_size", dw::RESTORE_TG_CHUNK_SIZE),
    o("cp_mqd_base_addr_lo", dw::MQD_BASE_ADDR_LO),
    o("cp_mqd_base_addr_hi", dw::MQD_BASE_ADDR_HI),
    o("cp_hqd_active", dw::HQD_ACTIVE),
    o("cp_hqd_vmid", dw::HQD_VMID),
    o("cp_hqd_persistent_state", dw::PERSISTENT_STATE),
    o("cp_hqd_pq_base_lo", dw::PQ_BASE_LO),
    o("cp_hqd_pq_base_hi", dw::PQ_BASE_HI),
    o("cp_hqd_pq_rptr", dw::PQ_RPTR),
    o("cp_hqd_pq_rptr_report_addr_lo", dw::PQ_RPTR_REPORT_ADDR_LO),
    o("cp_hqd_pq_rptr_report_addr_hi", dw::PQ_RPTR_REPORT_ADDR_HI),
    o("cp_hqd_pq_wptr_poll_addr_lo", dw::PQ_WPTR_POLL_ADDR_LO),
    o("cp_hqd_pq_wptr_poll_addr_hi", dw::PQ_WPTR_POLL_ADDR_HI),
    o("cp_hqd_pq_doorbell_control", dw::PQ_DOORBELL_CONTROL),
    o("cp_hqd_pq_control", dw::PQ_CONTROL),
    o("cp_hqd_ib_control", dw::IB_CONTROL),
    o("cp_mqd_control", dw::MQD_CONTROL),
    o("cp_hqd_eop_base_addr_lo", dw::EOP_BASE_ADDR_LO),
    o("cp_hqd_eop_base_addr_hi", dw::EOP_BASE_ADDR_HI),
    o("cp_hqd_eop_control", dw::EOP_CONTROL),
    o("cp_hqd_eop_rptr", dw::EOP_RPTR),
    o("cp_hqd_ctx_save_base_addr_lo", dw::CTX_SAVE_BASE_ADDR_LO),
    o("cp_hqd_ctx_save_base_addr_hi", dw::CTX_SAVE_BASE_ADDR_HI),
    o("cp_hqd_cntl_stack_size", dw::CNTL_STACK_SIZE),
    o("cp_hqd_ctx_save_size", dw::CTX_SAVE_SIZE),
    o("cp_hqd_aql_control", dw::AQL_CONTROL),
    o("cp_hqd_pq_wptr_lo", dw::PQ_WPTR_LO),
    o("cp_hqd_pq_wptr_hi", dw::PQ_WPTR_HI),
    o("queue_doorbell_id0", dw::QUEUE_DOORBELL_ID0),
    o("pm4_target_xcc_in_xcp", dw::PM4_TARGET_XCC_IN_XCP),
    o("cp_mqd_stride_size", dw::MQD_STRIDE_SIZE),
    // The window's last register is MQD dword 186.
    o("reserved_186", WINDOW_FIRST + WINDOW_DWORDS - 1),
    m("CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK", QUEUE_SIZE),
    m("CP_HQD_PQ_CONTROL__RPTR_BLOCK_SIZE_MASK", RPTR_BLOCK_SIZE),
    m("CP_HQD_PQ_CONTROL__QUEUE_FULL_EN_MASK", QUEUE_FULL_EN),
    m("CP_HQD_PQ_CONTROL__WPP_CLAMP_EN_MASK", WPP_CLAMP_EN),
    m("CP_HQD_PQ_CONTROL__SLOT_BASED_WPTR_MASK", SLOT_BASED_WPTR),
    m("CP_HQD_PQ_CONTROL__NO_UPDATE_RPTR_MASK", NO_UPDATE_RPTR),
    m("CP_HQD_PQ_CONTROL__UNORD_DISPATCH_MASK", UNORD_DISPATCH),
    m("CP_HQD_PQ_CONTROL__PRIV_STATE_MASK", PQ_PRIV_STATE),
    m("CP_HQD_PQ_CONTROL__KMD_QUEUE_MASK", KMD_QUEUE),
    m(
        "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_BIF_DROP_MASK",
        DOORBELL_BIF_DROP,
    ),
    m(
        "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK",
        DOORBELL_OFFSET,
    ),
    m("CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK", DOORBELL_EN),
    m("CP_HQD_EOP_CONTROL__EOP_SIZE_MASK", EOP_SIZE),
    m("CP_HQD_EOP_RPTR__INIT_FETCHER_MASK", INIT_FETCHER),
    m("CP_HQD_VMID__VMID_MASK", VMID),
    m("CP_HQD_ACTIVE__ACTIVE_MASK", ACTIVE),
    m("CP_HQD_AQL_CONTROL__CONTROL0_MASK", AQL_CONTROL0),
    m("CP_HQD_PERSISTENT_STATE__QSWITCH_MODE_MASK", QSWITCH_MODE),
    m("COMPUTE_TG_CHUNK_SIZE__TG_CHUNK_SIZE_MASK", TG_CHUNK),
    m(
        "CP_MEC_DOORBELL_RANGE_LOWER__DOORBELL_RANGE_LOWER_MASK",
        DOORBELL_RANGE,
    ),
    m(
        "CP_MEC_DOORBELL_RANGE_UPPER__DOORBELL_RANGE_UPPER_MASK",
        DOORBELL_RANGE,
    ),
    m("GRBM_GFX_CNTL__PIPEID_MASK", GRBM_PIPEID),
    m("GRBM_GFX_CNTL__MEID_MASK", GRBM_MEID),
    m("GRBM_GFX_CNTL__VMID_MASK", GRBM_VMID),
    m("GRBM_GFX_CNTL__QUEUEID_MASK", GRBM_QUEUEID),
    r("regGRBM_GFX_CNTL", reg::GRBM_GFX_CNTL),
    r(
        "regCP_MEC_DOORBELL_RANGE_LOWER",
        reg::CP_MEC_DOORBELL_RANGE_LOWER,
    ),
    r(
        "regCP_MEC_DOORBELL_RANGE_UPPER",
        reg::CP_MEC_DOORBELL_RANGE_UPPER,
    ),
    r("regCP_MQD_BASE_ADDR", reg::CP_MQD_BASE_ADDR),
    r("regCP_HQD_ACTIVE", reg::CP_HQD_ACTIVE),
    r(
        "regCP_HQD_PQ_DOORBELL_CONTROL",
        reg::CP_HQD_PQ_DOORBELL_CONTROL,
    ),
    r("regCP_HQD_EOP_RPTR", reg::CP_HQD_EOP_RPTR),
    r("regCP_HQD_PQ_WPTR_LO", reg::CP_HQD_PQ_WPTR_LO),
    r(
        "regCP_HQD_AQL_DISPATCH_ID_HI",
        reg::CP_HQD_AQL_DISPATCH_ID_HI,
    ),
];
