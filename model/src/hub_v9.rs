//! One gfx9 VM hub instance of a GC 9.4.3 part (a GFXHUB v1.2 of one XCC
//! or an MMHUB 1.8 of one AID) as a register block and a translation
//! gate in front of the gfx9 walk ([`crate::decode::pte_v9`]).
//!
//! The block keeps every register written to it (at its segment-0 base,
//! in dwords) and answers reads from them. Before it walks anything it
//! checks what the VM L2 needs, as [`crate::hub`] does for the gfx11
//! hubs: the L1 TLB enabled (`MC_VM_MX_L1_TLB_CNTL.ENABLE_L1_TLB`), the L2
//! cache enabled (`VM_L2_CNTL.ENABLE_L2_CACHE`), the context enabled
//! (`VM_CONTEXTn_CNTL.ENABLE_CONTEXT`) and a page-table base with its
//! VALID bit. Whether hardware faults or serves the default page for
//! these is not public; the model refuses (model convention).
//!
//! A walk that faults, or a VA outside the context's range, latches
//! `VM_L2_PROTECTION_FAULT_STATUS` and `_ADDR_LO32/HI32`: the first fault
//! sticks, later ones set `MORE_FAULTS`, writing `CLEAR_PROTECTION_FAULT_STATUS_ADDR`
//! (bit 0 of `VM_L2_PROTECTION_FAULT_CNTL`) clears them; the bit reads
//! back 0. Which `PERMISSION_FAULTS` / `MAPPING_ERROR` code hardware
//! reports per fault is not public: the model sets `MAPPING_ERROR` for an
//! invalid entry or bad table, `PERMISSION_FAULTS` bit (1 << access) for
//! a permission fault, and neither for a range fault (model convention).
//!
//! Invalidation engines: a write to `VM_INVALIDATE_ENGn_REQ` clears the
//! engine's ACK; the requested VMIDs' bits rise after [`ACK_READS`] reads
//! of `_ACK`. The engines' semaphores (`VM_INVALIDATE_ENGn_SEM`): a
//! read acquires a free one and reads 1 (held: reads 0), a write of 0
//! releases it, the behaviour `gmc_v9_0_flush_gpu_tlb()` relies on ("a
//! read return value of 1 means semaphore acquire") where it takes one.
//! Linux takes none on 9.4.3 (`gmc_v9_0_use_invalidate_semaphore()`),
//! tinygrad's AM takes the MMHUB's on every part (`AM_GMC.flush_tlb`),
//! MI300X included; a request is not refused without it.
//! [`HubV9Model::never_ack`] makes the ACK never rise, for timeout tests.
//!
//! Offsets and masks are hand-written here from `gc_9_4_3_offset.h`,
//! `mmhub_1_8_0_offset.h`, `gc_9_4_2_offset.h` and `mmhub_1_7_offset.h`
//! (GC 9.4.2's GFXHUB v1.0 and Aldebaran's MMHUB 1.7, laid out alike at
//! other offsets) and their `_sh_mask.h`, and checked as the model's own
//! conformance facts ([`FACTS`]).

use crate::decode::pte_v9::{self, AccessV9, ContextV9, TranslationV9, WalkFaultV9};
use crate::dma::Dma;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use spin::Mutex;

/// Register offsets (dwords, `BASE_IDX` 0) of one gfx9 hub header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V9Offsets {
    pub header: &'static str,
    pub l2_cntl: u32,
    pub fault_cntl: u32,
    pub fault_status: u32,
    pub fault_addr_lo: u32,
    pub fault_addr_hi: u32,
    pub ctx0_cntl: u32,
    pub inv_eng0_sem: u32,
    pub inv_eng0_req: u32,
    pub inv_eng0_ack: u32,
    pub ctx0_base_lo: u32,
    pub ctx0_start_lo: u32,
    pub ctx0_end_lo: u32,
    pub l1_tlb_cntl: u32,
    /// `MC_VM_FB_OFFSET`, `_FB_LOCATION_BASE/TOP` and the system
    /// aperture, what the MC decode of a client behind the hub needs.
    pub fb_offset: u32,
    pub fb_location_base: u32,
    pub fb_location_top: u32,
    pub sys_aperture_low: u32,
    pub sys_aperture_high: u32,
    /// `MC_VM_XGMI_LFB_CNTL` and `MC_VM_XGMI_LFB_SIZE`: the GPU's place
    /// in an XGMI hive as the IFWI leaves it ([`HubV9Model::xgmi`]).
    pub xgmi_lfb_cntl: u32,
    pub xgmi_lfb_size: u32,
    /// The hub's register block in segment 0, first and last dword: what
    /// a device routes to this model (GC: `regVM_*`/`regMC_VM_*`/`VML2_*`
    /// 0x800..=0x963 of `gc_9_4_3_offset.h`; MMHUB: every segment-0
    /// register of `mmhub_1_8_0_offset.h`, 0x0..=0xd0d, the hub's VM/MC
    /// registers and the DAGB/PCTL ones kept as storage).
    pub block: (u32, u32),
}

/// GFXHUB v1.2 (`gc_9_4_3_offset.h`).
pub const GFXHUB_1_2: V9Offsets = V9Offsets {
    header: "gc_9_4_3_offset.h",
    l2_cntl: 0x0820,
    fault_cntl: 0x0827,
    fault_status: 0x082b,
    fault_addr_lo: 0x082c,
    fault_addr_hi: 0x082d,
    ctx0_cntl: 0x0860,
    inv_eng0_sem: 0x0871,
    inv_eng0_req: 0x0883,
    inv_eng0_ack: 0x0895,
    ctx0_base_lo: 0x08cb,
    ctx0_start_lo: 0x08eb,
    ctx0_end_lo: 0x090b,
    l1_tlb_cntl: 0x0963,
    fb_offset: 0x0947,
    fb_location_base: 0x095c,
    fb_location_top: 0x095d,
    sys_aperture_low: 0x0961,
    sys_aperture_high: 0x0962,
    xgmi_lfb_cntl: 0x0957,
    xgmi_lfb_size: 0x0958,
    block: (0x0800, 0x0963),
};

/// MMHUB 1.8 (`mmhub_1_8_0_offset.h`).
pub const MMHUB_1_8: V9Offsets = V9Offsets {
    header: "mmhub_1_8_0_offset.h",
    l2_cntl: 0x0b60,
    fault_cntl: 0x0b67,
    fault_status: 0x0b6b,
    fault_addr_lo: 0x0b6c,
    fault_addr_hi: 0x0b6d,
    ctx0_cntl: 0x0ba0,
    inv_eng0_sem: 0x0bb1,
    inv_eng0_req: 0x0bc3,
    inv_eng0_ack: 0x0bd5,
    ctx0_base_lo: 0x0c0b,
    ctx0_start_lo: 0x0c2b,
    ctx0_end_lo: 0x0c4b,
    l1_tlb_cntl: 0x0ca3,
    fb_offset: 0x0c87,
    fb_location_base: 0x0c9c,
    fb_location_top: 0x0c9d,
    sys_aperture_low: 0x0ca1,
    sys_aperture_high: 0x0ca2,
    xgmi_lfb_cntl: 0x0c97,
    xgmi_lfb_size: 0x0c98,
    block: (0x0000, 0x0d0d),
};

/// GFXHUB v1.0 of GC 9.4.2 (`gc_9_4_2_offset.h`): GFXHUB v1.2's
/// registers 0x20 to 0x24 dwords on (`ATC_L2_CNTL` still at 0x800).
pub const GFXHUB_1_0: V9Offsets = V9Offsets {
    header: "gc_9_4_2_offset.h",
    l2_cntl: 0x0840,
    fault_cntl: 0x0847,
    fault_status: 0x084b,
    fault_addr_lo: 0x084c,
    fault_addr_hi: 0x084d,
    ctx0_cntl: 0x0880,
    inv_eng0_sem: 0x0891,
    inv_eng0_req: 0x08a3,
    inv_eng0_ack: 0x08b5,
    ctx0_base_lo: 0x08eb,
    ctx0_start_lo: 0x090b,
    ctx0_end_lo: 0x092b,
    l1_tlb_cntl: 0x0987,
    fb_offset: 0x096b,
    fb_location_base: 0x0980,
    fb_location_top: 0x0981,
    sys_aperture_low: 0x0985,
    sys_aperture_high: 0x0986,
    xgmi_lfb_cntl: 0x0978,
    xgmi_lfb_size: 0x0979,
    block: (0x0800, 0x0987),
};

/// MMHUB 1.7 (`mmhub_1_7_offset.h`), Aldebaran's: every segment-0
/// register, 0x0..=0xd71, is the block.
pub const MMHUB_1_7: V9Offsets = V9Offsets {
    header: "mmhub_1_7_offset.h",
    l2_cntl: 0x0b80,
    fault_cntl: 0x0b87,
    fault_status: 0x0b8b,
    fault_addr_lo: 0x0b8c,
    fault_addr_hi: 0x0b8d,
    ctx0_cntl: 0x0bc0,
    inv_eng0_sem: 0x0bd1,
    inv_eng0_req: 0x0be3,
    inv_eng0_ack: 0x0bf5,
    ctx0_base_lo: 0x0c2b,
    ctx0_start_lo: 0x0c4b,
    ctx0_end_lo: 0x0c6b,
    l1_tlb_cntl: 0x0cc7,
    fb_offset: 0x0cab,
    fb_location_base: 0x0cc0,
    fb_location_top: 0x0cc1,
    sys_aperture_low: 0x0cc5,
    sys_aperture_high: 0x0cc6,
    xgmi_lfb_cntl: 0x0cb8,
    xgmi_lfb_size: 0x0cb9,
    block: (0x0000, 0x0d71),
};

/// Contexts are one register apart (`regVM_CONTEXT1_CNTL -
/// regVM_CONTEXT0_CNTL`), base/start/end pairs two apart, engines one
/// apart: the same in both headers (facts below).
pub const CTX_DISTANCE: u32 = 1;
pub const CTX_ADDR_DISTANCE: u32 = 2;
pub const ENG_DISTANCE: u32 = 1;
pub const ENGINES: u32 = 18;

/// Field masks (`_sh_mask.h`, the same in both headers).
pub const ENABLE_L1_TLB: u32 = 0x1;
pub const ENABLE_L2_CACHE: u32 = 0x1;
pub const ENABLE_CONTEXT: u32 = 0x1;
pub const DEPTH_MASK: u32 = 0x6;
pub const DEPTH_SHIFT: u32 = 1;
pub const BLOCK_SIZE_MASK: u32 = 0x78;
pub const BLOCK_SIZE_SHIFT: u32 = 3;
pub const CLEAR_FAULT: u32 = 0x1;
pub const MORE_FAULTS: u32 = 0x1;
pub const PERMISSION_FAULTS_SHIFT: u32 = 4;
pub const MAPPING_ERROR: u32 = 0x100;
pub const RW: u32 = 0x4_0000;
pub const VMID_SHIFT: u32 = 20;
pub const PER_VMID: u32 = 0xFFFF;
/// `VM_L2_PROTECTION_FAULT_ADDR_HI32__LOGICAL_PAGE_ADDR_HI4_MASK`.
pub const ADDR_HI4: u32 = 0xF;
/// ACK reads after a request before the ACK bits rise (model value).
pub const ACK_READS: u32 = 3;
/// `MC_VM_XGMI_LFB_CNTL__PF_LFB_REGION_MASK`: this GPU's node.
pub const PF_LFB_REGION: u32 = 0xF;
/// `MC_VM_XGMI_LFB_CNTL__PF_MAX_REGION_MASK` / `__SHIFT`: the hive's
/// last node (0: XGMI off).
pub const PF_MAX_REGION_MASK: u32 = 0xF0;
pub const PF_MAX_REGION_SHIFT: u32 = 4;
/// `MC_VM_XGMI_LFB_SIZE__PF_LFB_SIZE_MASK`: a node's segment, 16 MiB units.
pub const PF_LFB_SIZE: u32 = 0x1_FFFF;

/// A hive member's place as its hub's `MC_VM_XGMI_LFB_CNTL/SIZE` give it
/// (`gfxhub_v1_2_get_xgmi_info()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XgmiWindow {
    /// `PF_LFB_REGION`.
    pub node: u8,
    /// `PF_MAX_REGION + 1`.
    pub nodes: u8,
    /// `PF_LFB_SIZE << 24`, bytes.
    pub segment: u64,
}

impl XgmiWindow {
    /// This node's segment's offset from node 0's.
    pub fn node_offset(&self) -> u64 {
        u64::from(self.node) * self.segment
    }

    /// The node whose segment holds `hive_offset` (bytes from node 0's
    /// VRAM offset 0), if any.
    pub fn node_at(&self, hive_offset: u64) -> Option<u8> {
        let n = hive_offset.checked_div(self.segment)?;
        u8::try_from(n).ok().filter(|n| *n < self.nodes)
    }
}

/// Why the hub did not translate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubV9Refusal {
    L1TlbDisabled,
    L2CacheDisabled,
    ContextDisabled {
        vmid: u8,
    },
    InvalidBase {
        raw: u64,
    },
    /// The walk faulted (latched).
    Fault(WalkFaultV9),
    /// The context's root table lies outside this GPU's own VRAM, in the
    /// hive segment of node `node` (or of no node), which only a peer's
    /// memory could answer over XGMI. The model has no peers: it refuses
    /// (model convention; hardware would read whatever that address holds
    /// on the other GPU).
    PeerMemory {
        pa: u64,
        node: Option<u8>,
    },
}

#[derive(Debug, Default)]
struct State {
    regs: BTreeMap<u32, u32>,
    /// Per engine: VMIDs pending, reads left, ACK bits.
    engines: [(u16, u32, u16); ENGINES as usize],
    /// Each engine's semaphore, held or free.
    sem_held: [bool; ENGINES as usize],
    never_ack: bool,
    requests: u32,
    latched: bool,
}

/// One hub instance on the register bus at dword base `base`.
#[derive(Debug)]
pub struct HubV9Model {
    pub offsets: V9Offsets,
    pub base: u32,
    state: Mutex<State>,
}

impl HubV9Model {
    pub fn new(offsets: V9Offsets, base: u32) -> Self {
        HubV9Model {
            offsets,
            base,
            state: Mutex::new(State::default()),
        }
    }

    /// The ACK bits never rise (a hung hub).
    pub fn never_ack(&self) {
        self.state.lock().never_ack = true;
    }

    /// Invalidation requests taken.
    pub fn requests(&self) -> u32 {
        self.state.lock().requests
    }

    /// Whether a fault is latched.
    pub fn fault_latched(&self) -> bool {
        self.state.lock().latched
    }

    /// Sets a register as the device (the VBIOS, the IFWI) leaves it,
    /// `offset` in dwords from the hub's base.
    pub fn set_device_reg(&self, offset: u32, value: u32) {
        self.state.lock().regs.insert(offset, value);
    }

    /// The byte offsets of the hub's register block ([`V9Offsets::block`]).
    pub fn byte_range(&self) -> core::ops::RangeInclusive<usize> {
        let at = |d: u32| (self.base as usize + d as usize) * 4;
        at(self.offsets.block.0)..=at(self.offsets.block.1)
    }

    /// Whether any VM context is enabled (`VM_CONTEXTn_CNTL.ENABLE_CONTEXT`).
    pub fn enabled_contexts(&self) -> Vec<u8> {
        (0..16u8)
            .filter(|&v| {
                self.reg(self.offsets.ctx0_cntl + u32::from(v) * CTX_DISTANCE) & ENABLE_CONTEXT != 0
            })
            .collect()
    }

    /// Every register as last written, `(dword offset from base, value)`.
    pub fn written(&self) -> Vec<(u32, u32)> {
        self.state
            .lock()
            .regs
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect()
    }

    /// A register as last written (0 if never).
    pub fn reg(&self, offset: u32) -> u32 {
        self.state.lock().regs.get(&offset).copied().unwrap_or(0)
    }

    /// The GPU's place in an XGMI hive (`MC_VM_XGMI_LFB_CNTL/SIZE`), or
    /// `None` when `PF_MAX_REGION` is 0, "xgmi is disabled"
    /// (`gfxhub_v1_2_get_xgmi_info()`).
    pub fn xgmi(&self) -> Option<XgmiWindow> {
        let cntl = self.reg(self.offsets.xgmi_lfb_cntl);
        let max = (cntl & PF_MAX_REGION_MASK) >> PF_MAX_REGION_SHIFT;
        if max == 0 {
            return None;
        }
        Some(XgmiWindow {
            node: (cntl & PF_LFB_REGION) as u8,
            nodes: max as u8 + 1,
            segment: u64::from(self.reg(self.offsets.xgmi_lfb_size) & PF_LFB_SIZE) << 24,
        })
    }

    /// The physical address of this GPU's own VRAM offset 0: the hub's
    /// `MC_VM_FB_OFFSET`, plus on a hive member its node's segment (what
    /// `gmc_v9_0_vram_gtt_location()` adds to `vram_base_offset`).
    pub fn vram_pa_base(&self) -> u64 {
        let fb = u64::from(self.reg(self.offsets.fb_offset)) << 24;
        fb.saturating_add(self.xgmi().map_or(0, |x| x.node_offset()))
    }

    fn pair(&self, lo: u32) -> u64 {
        u64::from(self.reg(lo)) | (u64::from(self.reg(lo + 1)) << 32)
    }

    /// VMID `vmid`'s context as the registers describe it.
    pub fn context(&self, vmid: u8) -> Result<ContextV9, HubV9Refusal> {
        let o = &self.offsets;
        if self.reg(o.l1_tlb_cntl) & ENABLE_L1_TLB == 0 {
            return Err(HubV9Refusal::L1TlbDisabled);
        }
        if self.reg(o.l2_cntl) & ENABLE_L2_CACHE == 0 {
            return Err(HubV9Refusal::L2CacheDisabled);
        }
        let cntl = self.reg(o.ctx0_cntl + u32::from(vmid) * CTX_DISTANCE);
        if cntl & ENABLE_CONTEXT == 0 {
            return Err(HubV9Refusal::ContextDisabled { vmid });
        }
        let at = u32::from(vmid) * CTX_ADDR_DISTANCE;
        let base = self.pair(o.ctx0_base_lo + at);
        if base & 1 == 0 {
            return Err(HubV9Refusal::InvalidBase { raw: base });
        }
        let page = |lo: u32| (self.pair(lo) & 0xF_FFFF_FFFF) << 12;
        Ok(ContextV9 {
            root: base & pte_v9::bits::ADDRESS,
            start: page(o.ctx0_start_lo + at),
            end: page(o.ctx0_end_lo + at) | 0xFFF,
            depth: ((cntl & DEPTH_MASK) >> DEPTH_SHIFT) as u8,
            block_size: ((cntl & BLOCK_SIZE_MASK) >> BLOCK_SIZE_SHIFT) as u8,
        })
    }

    /// Translates `va` for `vmid` over `dma` (tables at physical
    /// `vram_base + a`), latching a fault the walk raises.
    pub fn translate(
        &self,
        dma: &Dma,
        vram_base: u64,
        vmid: u8,
        va: u64,
        access: AccessV9,
    ) -> Result<TranslationV9, HubV9Refusal> {
        let ctx = self.context(vmid)?;
        if let Some(x) = self.xgmi() {
            let own = ctx
                .root
                .checked_sub(vram_base)
                .is_some_and(|o| o < x.segment);
            if !own {
                let node = ctx
                    .root
                    .checked_sub(vram_base.saturating_sub(x.node_offset()))
                    .and_then(|o| x.node_at(o));
                return Err(HubV9Refusal::PeerMemory { pa: ctx.root, node });
            }
        }
        pte_v9::walk(dma, vram_base, &ctx, va, access).map_err(|f| {
            self.latch(vmid, va, access, f);
            HubV9Refusal::Fault(f)
        })
    }

    fn latch(&self, vmid: u8, va: u64, access: AccessV9, f: WalkFaultV9) {
        let o = self.offsets;
        let mut s = self.state.lock();
        if s.latched {
            let status = s.regs.get(&o.fault_status).copied().unwrap_or(0);
            s.regs.insert(o.fault_status, status | MORE_FAULTS);
            return;
        }
        s.latched = true;
        let code = match f {
            WalkFaultV9::Invalid { .. } | WalkFaultV9::BadTable { .. } => MAPPING_ERROR,
            WalkFaultV9::Permission => {
                let bit = match access {
                    AccessV9::Read => 1,
                    AccessV9::Write => 2,
                    AccessV9::Execute => 3,
                };
                1 << (PERMISSION_FAULTS_SHIFT + bit)
            }
            WalkFaultV9::OutOfRange => 0,
        };
        let rw = if access == AccessV9::Write { RW } else { 0 };
        let v = code | rw | (u32::from(vmid) << VMID_SHIFT);
        s.regs.insert(o.fault_status, v);
        s.regs.insert(o.fault_addr_lo, (va >> 12) as u32);
        s.regs
            .insert(o.fault_addr_hi, ((va >> 44) as u32) & ADDR_HI4);
    }

    fn dword(&self, at: usize) -> Option<u32> {
        u32::try_from(at / 4).ok()?.checked_sub(self.base)
    }
}

impl RegisterBus for HubV9Model {
    fn read32(&self, at: usize) -> u32 {
        let Some(off) = self.dword(at) else {
            return 0;
        };
        let o = self.offsets;
        let mut s = self.state.lock();
        if off >= o.inv_eng0_sem && off < o.inv_eng0_sem + ENGINES * ENG_DISTANCE {
            let n = ((off - o.inv_eng0_sem) / ENG_DISTANCE) as usize;
            if let Some(held) = s.sem_held.get_mut(n) {
                let acquired = !*held;
                *held = true;
                return u32::from(acquired);
            }
        }
        if off >= o.inv_eng0_ack && off < o.inv_eng0_ack + ENGINES * ENG_DISTANCE {
            let n = ((off - o.inv_eng0_ack) / ENG_DISTANCE) as usize;
            let never = s.never_ack;
            if let Some((pending, left, ack)) = s.engines.get_mut(n) {
                if *pending != 0 && !never {
                    if *left == 0 {
                        *ack |= *pending;
                        *pending = 0;
                    } else {
                        *left -= 1;
                    }
                }
                return u32::from(*ack);
            }
        }
        s.regs.get(&off).copied().unwrap_or(0)
    }

    fn write32(&self, at: usize, v: u32) {
        let Some(off) = self.dword(at) else {
            return;
        };
        let o = self.offsets;
        let mut s = self.state.lock();
        if off >= o.inv_eng0_sem && off < o.inv_eng0_sem + ENGINES * ENG_DISTANCE {
            let n = ((off - o.inv_eng0_sem) / ENG_DISTANCE) as usize;
            if let Some(held) = s.sem_held.get_mut(n)
                && v & 1 == 0
            {
                *held = false;
            }
        }
        if off >= o.inv_eng0_req && off < o.inv_eng0_req + ENGINES * ENG_DISTANCE {
            let n = ((off - o.inv_eng0_req) / ENG_DISTANCE) as usize;
            s.requests += 1;
            if let Some(e) = s.engines.get_mut(n) {
                *e = ((v & PER_VMID) as u16, ACK_READS, 0);
            }
        }
        // The hive position is the IFWI's (`gfxhub_v1_2_get_xgmi_info()`
        // only reads it): a driver's write does not move the GPU in the
        // hive (model convention: dropped).
        if off == o.xgmi_lfb_cntl || off == o.xgmi_lfb_size {
            return;
        }
        if off == o.fault_cntl && v & CLEAR_FAULT != 0 {
            s.latched = false;
            s.regs.remove(&o.fault_status);
            s.regs.remove(&o.fault_addr_lo);
            s.regs.remove(&o.fault_addr_hi);
            s.regs.insert(off, v & !CLEAR_FAULT);
            return;
        }
        s.regs.insert(off, v);
    }
}

/// One header's offsets and masks as the model's facts.
macro_rules! v9_facts {
    ($o:expr, $h:literal, $sh:literal) => {
        [
            barebell_facts::Fact::constant($h, "regVM_L2_CNTL", $o.l2_cntl as u64),
            barebell_facts::Fact::constant($h, "regVM_L2_PROTECTION_FAULT_CNTL", $o.fault_cntl as u64),
            barebell_facts::Fact::constant($h, "regVM_L2_PROTECTION_FAULT_STATUS", $o.fault_status as u64),
            barebell_facts::Fact::constant($h, "regVM_L2_PROTECTION_FAULT_ADDR_LO32", $o.fault_addr_lo as u64),
            barebell_facts::Fact::constant($h, "regVM_L2_PROTECTION_FAULT_ADDR_HI32", $o.fault_addr_hi as u64),
            barebell_facts::Fact::constant($h, "regVM_CONTEXT0_CNTL", $o.ctx0_cntl as u64),
            barebell_facts::Fact::constant($h, "regVM_INVALIDATE_ENG0_SEM", $o.inv_eng0_sem as u64),
            barebell_facts::Fact::constant($h, "regVM_INVALIDATE_ENG0_REQ", $o.inv_eng0_req as u64),
            barebell_facts::Fact::constant($h, "regVM_INVALIDATE_ENG0_ACK", $o.inv_eng0_ack as u64),
            barebell_facts::Fact::constant($h, "regVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32", $o.ctx0_base_lo as u64),
            barebell_facts::Fact::constant($h, "regVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32", $o.ctx0_start_lo as u64),
            barebell_facts::Fact::constant($h, "regVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32", $o.ctx0_end_lo as u64),
            barebell_facts::Fact::constant($h, "regMC_VM_MX_L1_TLB_CNTL", $o.l1_tlb_cntl as u64),
            barebell_facts::Fact::constant($h, "regMC_VM_FB_OFFSET", $o.fb_offset as u64),
            barebell_facts::Fact::constant($h, "regMC_VM_FB_LOCATION_BASE", $o.fb_location_base as u64),
            barebell_facts::Fact::constant($h, "regMC_VM_FB_LOCATION_TOP", $o.fb_location_top as u64),
            barebell_facts::Fact::constant($h, "regMC_VM_SYSTEM_APERTURE_LOW_ADDR", $o.sys_aperture_low as u64),
            barebell_facts::Fact::constant($h, "regMC_VM_SYSTEM_APERTURE_HIGH_ADDR", $o.sys_aperture_high as u64),
            barebell_facts::Fact::constant($h, "regMC_VM_XGMI_LFB_CNTL", $o.xgmi_lfb_cntl as u64),
            barebell_facts::Fact::constant($h, "regMC_VM_XGMI_LFB_SIZE", $o.xgmi_lfb_size as u64),
            barebell_facts::Fact::constant($h, "regVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32 - regVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32", 1),
            barebell_facts::Fact::constant($h, "regVM_CONTEXT1_CNTL - regVM_CONTEXT0_CNTL", CTX_DISTANCE as u64),
            barebell_facts::Fact::constant($h, "regVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32 - regVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32", CTX_ADDR_DISTANCE as u64),
            barebell_facts::Fact::constant($h, "regVM_CONTEXT1_PAGE_TABLE_START_ADDR_LO32 - regVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32", CTX_ADDR_DISTANCE as u64),
            barebell_facts::Fact::constant($h, "regVM_INVALIDATE_ENG1_REQ - regVM_INVALIDATE_ENG0_REQ", ENG_DISTANCE as u64),
            barebell_facts::Fact::constant($h, "regVM_INVALIDATE_ENG1_ACK - regVM_INVALIDATE_ENG0_ACK", ENG_DISTANCE as u64),
            barebell_facts::Fact::constant($sh, "MC_VM_MX_L1_TLB_CNTL__ENABLE_L1_TLB_MASK", ENABLE_L1_TLB as u64),
            barebell_facts::Fact::constant($sh, "VM_L2_CNTL__ENABLE_L2_CACHE_MASK", ENABLE_L2_CACHE as u64),
            barebell_facts::Fact::constant($sh, "VM_CONTEXT0_CNTL__ENABLE_CONTEXT_MASK", ENABLE_CONTEXT as u64),
            barebell_facts::Fact::constant($sh, "VM_CONTEXT0_CNTL__PAGE_TABLE_DEPTH_MASK", DEPTH_MASK as u64),
            barebell_facts::Fact::constant($sh, "VM_CONTEXT0_CNTL__PAGE_TABLE_DEPTH__SHIFT", DEPTH_SHIFT as u64),
            barebell_facts::Fact::constant($sh, "VM_CONTEXT0_CNTL__PAGE_TABLE_BLOCK_SIZE_MASK", BLOCK_SIZE_MASK as u64),
            barebell_facts::Fact::constant($sh, "VM_CONTEXT0_CNTL__PAGE_TABLE_BLOCK_SIZE__SHIFT", BLOCK_SIZE_SHIFT as u64),
            barebell_facts::Fact::constant($sh, "VM_L2_PROTECTION_FAULT_CNTL__CLEAR_PROTECTION_FAULT_STATUS_ADDR_MASK", CLEAR_FAULT as u64),
            barebell_facts::Fact::constant($sh, "VM_L2_PROTECTION_FAULT_STATUS__MORE_FAULTS_MASK", MORE_FAULTS as u64),
            barebell_facts::Fact::constant($sh, "VM_L2_PROTECTION_FAULT_STATUS__PERMISSION_FAULTS__SHIFT", PERMISSION_FAULTS_SHIFT as u64),
            barebell_facts::Fact::constant($sh, "VM_L2_PROTECTION_FAULT_STATUS__MAPPING_ERROR_MASK", MAPPING_ERROR as u64),
            barebell_facts::Fact::constant($sh, "VM_L2_PROTECTION_FAULT_STATUS__RW_MASK", RW as u64),
            barebell_facts::Fact::constant($sh, "VM_L2_PROTECTION_FAULT_STATUS__VMID__SHIFT", VMID_SHIFT as u64),
            barebell_facts::Fact::constant($sh, "VM_L2_PROTECTION_FAULT_ADDR_HI32__LOGICAL_PAGE_ADDR_HI4_MASK", ADDR_HI4 as u64),
            barebell_facts::Fact::constant($sh, "VM_INVALIDATE_ENG0_REQ__PER_VMID_INVALIDATE_REQ_MASK", PER_VMID as u64),
            barebell_facts::Fact::constant($sh, "MC_VM_XGMI_LFB_CNTL__PF_LFB_REGION_MASK", PF_LFB_REGION as u64),
            barebell_facts::Fact::constant($sh, "MC_VM_XGMI_LFB_CNTL__PF_MAX_REGION_MASK", PF_MAX_REGION_MASK as u64),
            barebell_facts::Fact::constant($sh, "MC_VM_XGMI_LFB_CNTL__PF_MAX_REGION__SHIFT", PF_MAX_REGION_SHIFT as u64),
            barebell_facts::Fact::constant($sh, "MC_VM_XGMI_LFB_SIZE__PF_LFB_SIZE_MASK", PF_LFB_SIZE as u64),
        ]
    };
}

/// The gfx9 hub model's offsets and masks in both headers.
pub const FACTS: &[barebell_facts::Fact] = barebell_facts::fact_table!(
    v9_facts!(GFXHUB_1_2, "gc_9_4_3_offset.h", "gc_9_4_3_sh_mask.h"),
    v9_facts!(MMHUB_1_8, "mmhub_1_8_0_offset.h", "mmhub_1_8_0_sh_mask.h"),
    v9_facts!(GFXHUB_1_0, "gc_9_4_2_offset.h", "gc_9_4_2_sh_mask.h"),
    v9_facts!(MMHUB_1_7, "mmhub_1_7_offset.h", "mmhub_1_7_sh_mask.h"),
);

#[cfg(test)]
mod sem_tests {
    use super::*;

    /// MMHUB 1.8's engine-17 semaphore at `regVM_INVALIDATE_ENG0_SEM`
    /// 0xbb1 + 17 (`mmhub_1_8_0_offset.h`, by hand): the first read
    /// acquires (1), a second reads 0 while held, writing 0 frees it; a
    /// request goes through without it (Linux takes none on 9.4.3).
    #[test]
    fn a_read_acquires_the_semaphore_and_writing_0_releases_it() {
        let h = HubV9Model::new(MMHUB_1_8, 0x1A000);
        let sem = (0x1A000 + 0xbb1 + 17) * 4;
        assert_eq!(h.read32(sem), 1);
        assert_eq!(h.read32(sem), 0);
        h.write32(sem, 0);
        assert_eq!(h.read32(sem), 1);
        h.write32(sem, 0);
        let req = (0x1A000 + 0xbc3 + 17) * 4;
        h.write32(req, 1);
        assert_eq!(h.requests(), 1);
    }
}
