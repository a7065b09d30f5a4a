//! PM4 compute queues on the MEC model (issue 15 scope item 4): a direct
//! HQD load with `CP_HQD_AQL_CONTROL` clear, as tinygrad's
//! `AM_GFX.setup_ring(..., aql=False)` and Linux's kernel compute queues
//! (`gfx_v11_0_compute_mqd_init()`) make it, comes up active on a started
//! MEC pipe; the CP model executes NOP, the NOP filler, WRITE_DATA
//! to memory and the dispatch packets tinygrad's `AMDComputeQueue` emits
//! (SET_SH_REG, DISPATCH_DIRECT, ACQUIRE_MEM, EVENT_WRITE, RELEASE_MEM,
//! WAIT_REG_MEM on memory), and stops with a typed error naming any other
//! opcode or a field value it does not execute.
//!
//! Every register value and packet dword here is built by hand from the
//! headers (the `// offset:` column of `struct v11_compute_mqd` in
//! `v11_structs.h`, masks from `gc_11_0_0_sh_mask.h`, packet encodings from
//! `nvd.h`), not with the model's decoders.

use barebell::bus::RegisterBus;
use barebell::ip::Generation;
use barebell::regs::gc_11_0_0 as r;
use barebell_model::Seed;
use barebell_model::cp::{CpError, Pm4Error};
use barebell_model::mec::MecEvent;
use barebell_model_host::mec::{GC_BASES, ModelGpu};

/// `v11_compute_mqd` dword offsets (`// offset:` column) of the window
/// registers the test writes; the window starts at dword 128.
mod mqd {
    pub const CP_HQD_ACTIVE: usize = 130;
    pub const CP_HQD_VMID: usize = 131;
    pub const CP_HQD_PQ_BASE_LO: usize = 136;
    pub const CP_HQD_PQ_BASE_HI: usize = 137;
    pub const CP_HQD_PQ_RPTR: usize = 138;
    pub const CP_HQD_PQ_RPTR_REPORT_ADDR_LO: usize = 139;
    pub const CP_HQD_PQ_RPTR_REPORT_ADDR_HI: usize = 140;
    pub const CP_HQD_PQ_WPTR_POLL_ADDR_LO: usize = 141;
    pub const CP_HQD_PQ_WPTR_POLL_ADDR_HI: usize = 142;
    pub const CP_HQD_PQ_DOORBELL_CONTROL: usize = 143;
    pub const CP_HQD_PQ_CONTROL: usize = 145;
    pub const CP_HQD_EOP_BASE_ADDR_LO: usize = 165;
    pub const CP_HQD_EOP_BASE_ADDR_HI: usize = 166;
    pub const CP_HQD_EOP_CONTROL: usize = 167;
    pub const CP_HQD_EOP_RPTR: usize = 168;
    pub const CP_HQD_AQL_CONTROL: usize = 181;
    pub const CP_HQD_PQ_WPTR_LO: usize = 182;
    pub const FIRST: usize = 128;
}

/// `CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET__SHIFT` (2) and
/// `__DOORBELL_EN_MASK` (0x40000000).
const DOORBELL_OFFSET_SHIFT: u32 = 2;
const DOORBELL_EN: u32 = 0x4000_0000;
/// The ring: 1024 dwords, `QUEUE_SIZE` = log2(1024) - 1 = 9
/// (`gfx_v11_0_compute_mqd_init()`: `order_base_2(queue_size / 4) - 1`).
const RING_DWORDS: usize = 1024;
const QUEUE_SIZE: u32 = 9;
/// Doorbell index 3 (`AMDGPU_NAVI10_DOORBELL_MEC_RING0`, what AM uses):
/// dword offset 6.
const DOORBELL_INDEX: u32 = 3;

/// `PACKET3(op, n)` of `nvd.h`: type 3 at bit 30, count at 16, opcode at 8.
const fn packet3(op: u32, count: u32) -> u32 {
    3 << 30 | (count & 0x3FFF) << 16 | (op & 0xFF) << 8
}
/// `nvd.h` opcodes.
const PACKET3_NOP: u32 = 0x10;
const PACKET3_DISPATCH_DIRECT: u32 = 0x15;
const PACKET3_WRITE_DATA: u32 = 0x37;
const PACKET3_WAIT_REG_MEM: u32 = 0x3C;
const PACKET3_COPY_DATA: u32 = 0x40;
const PACKET3_EVENT_WRITE: u32 = 0x46;
const PACKET3_RELEASE_MEM: u32 = 0x49;
const PACKET3_ACQUIRE_MEM: u32 = 0x58;
const PACKET3_SET_SH_REG: u32 = 0x76;
/// `WRITE_DATA_DST_SEL(5)` (memory, async), `WR_CONFIRM` (1 << 20),
/// `WR_ONE_ADDR` (1 << 16).
const DST_SEL_MEMORY: u32 = 5 << 8;
const WR_CONFIRM: u32 = 1 << 20;
const WR_ONE_ADDR: u32 = 1 << 16;

#[repr(C, align(256))]
struct Ring([u32; RING_DWORDS]);
#[repr(C, align(4096))]
struct Page([u32; 1024]);

struct Pm4Queue {
    gpu: ModelGpu,
    ring: &'static mut Ring,
    /// Byte 0: rptr report; byte 8: wptr (u64); 0x100..: WRITE_DATA
    /// destinations.
    page: &'static Page,
    wptr: u64,
}

fn reg(x: barebell::regs::Reg) -> usize {
    x.byte_offset(&GC_BASES).unwrap()
}

impl Pm4Queue {
    fn page_addr(&self) -> u64 {
        self.page as *const Page as u64
    }

    fn page_u32(&self, i: usize) -> u32 {
        // SAFETY: `page` is leaked and read with volatile loads only.
        unsafe { core::ptr::read_volatile(&self.page.0[i]) }
    }

    /// Appends `dwords` to the ring, stores the write pointer (dwords) at
    /// the poll address and rings the doorbell with it, as
    /// `gfx_v11_0_ring_set_wptr_compute()` does; then runs the MEC.
    fn submit(&mut self, dwords: &[u32]) {
        for d in dwords {
            self.ring.0[(self.wptr as usize) % RING_DWORDS] = *d;
            self.wptr += 1;
        }
        self.announce(self.wptr);
    }

    fn announce(&self, wptr: u64) {
        let page = self.page as *const Page as *mut u32;
        // SAFETY: the leaked page; bytes 8..16 hold the wptr.
        unsafe { core::ptr::write_volatile(page.add(2).cast::<u64>(), wptr) };
        self.gpu.doorbell(DOORBELL_INDEX).unwrap().ring(wptr);
        self.gpu.mec.run_until_idle(10_000).unwrap();
    }
}

/// Loads a PM4 HQD on ME 1 pipe 0 queue 0, VMID 0, as tinygrad's
/// `setup_ring(..., aql=False)` does (window written in order, then
/// `CP_HQD_ACTIVE` = 1).
fn pm4_queue(aql_control: u32) -> Pm4Queue {
    pm4_queue_at(aql_control, 0)
}

/// As [`pm4_queue`], with `CP_HQD_PQ_RPTR` and `CP_HQD_PQ_WPTR_LO` both
/// loaded as `start` (dwords).
fn pm4_queue_at(aql_control: u32, start: u32) -> Pm4Queue {
    // EOP_SIZE 9: 2^(9+1) dwords = the 4 KiB EOP page.
    pm4_queue_eop(aql_control, start, 9)
}

/// As [`pm4_queue_at`], with `CP_HQD_EOP_CONTROL` = `eop_control`.
fn pm4_queue_eop(aql_control: u32, start: u32, eop_control: u32) -> Pm4Queue {
    pm4_queue_full(aql_control, start, eop_control, QUEUE_SIZE)
}

/// As [`pm4_queue_eop`], with `CP_HQD_PQ_CONTROL.QUEUE_SIZE` =
/// `queue_size` over the same 1024-dword ring memory.
fn pm4_queue_full(aql_control: u32, start: u32, eop_control: u32, queue_size: u32) -> Pm4Queue {
    pm4_queue_load(aql_control, start, eop_control, queue_size, 1, 0)
}

/// As [`pm4_queue_full`], loaded on ME `me` (pipe 0, queue 0) after
/// writing `RLC_CP_SCHEDULERS` = `rlc_sched` (0: no KIQ named).
fn pm4_queue_load(
    aql_control: u32,
    start: u32,
    eop_control: u32,
    queue_size: u32,
    me: u32,
    rlc_sched: u32,
) -> Pm4Queue {
    let gpu = ModelGpu::new(Generation::Gfx11, Seed(21)).unwrap();
    let ring: &'static mut Ring = Box::leak(Box::new(Ring([0; RING_DWORDS])));
    let page: &'static Page = Box::leak(Box::new(Page([0; 1024])));
    let eop: &'static Page = Box::leak(Box::new(Page([0; 1024])));
    let (ring_a, page_a, eop_a) = (
        ring as *const Ring as u64,
        page as *const Page as u64,
        eop as *const Page as u64,
    );
    // SAFETY: leaked for the process; the device writes the report words
    // and WRITE_DATA destinations with atomics, the test reads volatile.
    unsafe {
        gpu.map(ring_a, core::mem::size_of::<Ring>() as u64);
        gpu.map(page_a, 4096);
        gpu.map(eop_a, 4096);
    }
    let bus = gpu.mec;
    // `CP_MEC_DOORBELL_RANGE_LOWER/UPPER` (byte offsets), AM's values.
    bus.write32(reg(r::CP_MEC_DOORBELL_RANGE_LOWER), 0);
    bus.write32(reg(r::CP_MEC_DOORBELL_RANGE_UPPER), 0xF8);
    if rlc_sched != 0 {
        bus.write32(reg(r::RLC_CP_SCHEDULERS), rlc_sched);
    }
    // GRBM_GFX_CNTL: MEID at bits 2-3, pipe 0, queue 0.
    bus.write32(reg(r::GRBM_GFX_CNTL), me << 2);
    let mut window = [0u32; 56];
    let mut set = |dw: usize, v: u32| window[dw - mqd::FIRST] = v;
    set(mqd::CP_HQD_VMID, 0);
    set(mqd::CP_HQD_PQ_BASE_LO, (ring_a >> 8) as u32);
    set(mqd::CP_HQD_PQ_BASE_HI, (ring_a >> 40) as u32);
    set(mqd::CP_HQD_PQ_RPTR_REPORT_ADDR_LO, page_a as u32);
    set(mqd::CP_HQD_PQ_RPTR_REPORT_ADDR_HI, (page_a >> 32) as u32);
    set(mqd::CP_HQD_PQ_WPTR_POLL_ADDR_LO, (page_a + 8) as u32);
    set(
        mqd::CP_HQD_PQ_WPTR_POLL_ADDR_HI,
        ((page_a + 8) >> 32) as u32,
    );
    set(
        mqd::CP_HQD_PQ_DOORBELL_CONTROL,
        (DOORBELL_INDEX * 2) << DOORBELL_OFFSET_SHIFT | DOORBELL_EN,
    );
    set(mqd::CP_HQD_PQ_CONTROL, queue_size);
    set(mqd::CP_HQD_EOP_BASE_ADDR_LO, (eop_a >> 8) as u32);
    set(mqd::CP_HQD_EOP_BASE_ADDR_HI, (eop_a >> 40) as u32);
    // EOP_SIZE: 2^(n+1) dwords; 0x1000 bytes = 1024 dwords -> 9.
    set(mqd::CP_HQD_EOP_CONTROL, eop_control);
    set(mqd::CP_HQD_AQL_CONTROL, aql_control);
    set(mqd::CP_HQD_PQ_RPTR, start);
    set(mqd::CP_HQD_PQ_WPTR_LO, start);
    let base = reg(r::CP_MQD_BASE_ADDR);
    for (i, v) in window.iter().enumerate() {
        if i + mqd::FIRST != mqd::CP_HQD_ACTIVE {
            bus.write32(base + 4 * i, *v);
        }
    }
    bus.write32(reg(r::CP_HQD_ACTIVE), 1);
    Pm4Queue {
        gpu,
        ring,
        page,
        wptr: u64::from(start),
    }
}

#[test]
fn pm4_hqd_is_active_on_a_started_mec_pipe() {
    let q = pm4_queue(0);
    let events: Vec<MecEvent> = q
        .gpu
        .mec
        .events()
        .into_iter()
        .filter(|e| !matches!(e, MecEvent::MecPipeRunning { .. }))
        .collect();
    assert!(
        matches!(
            events.as_slice(),
            [MecEvent::Activated {
                me: 1,
                pipe: 0,
                queue: 0,
                ..
            }]
        ),
        "{events:?}"
    );
    // CP_HQD_ACTIVE.ACTIVE (bit 0) reads back set in the selected bank.
    assert_eq!(q.gpu.mec.read32(reg(r::CP_HQD_ACTIVE)) & 1, 1);
    assert_eq!(q.gpu.mec.running_pipes() & 1, 1, "MEC pipe 0 runs");
    let hqds = q.gpu.mec.active_hqds();
    assert_eq!(hqds.len(), 1);
    assert_eq!(hqds[0].slot, (1, 0, 0));
    assert!(!hqds[0].aql);
    assert!(hqds[0].pipe_running);
    assert_eq!(hqds[0].doorbell_dword, DOORBELL_INDEX * 2);
}

#[test]
fn aql_control_set_still_makes_an_aql_queue() {
    // CONTROL0 = 1 (KFD's `update_mqd()` for AQL queues): the AQL checks
    // apply, and this window's rptr/wptr addresses (page + 0 and + 8) are
    // not `read_dispatch_id`/`write_dispatch_id` of one `amd_queue_t`.
    let q = pm4_queue(1);
    assert!(
        q.gpu.mec.events().iter().any(|e| matches!(
            e,
            MecEvent::Refused {
                why: barebell_model::mec::MecError::NotAnAqlDescriptor { .. },
                ..
            }
        )),
        "{:?}",
        q.gpu.mec.events()
    );
    assert_eq!(q.gpu.mec.read32(reg(r::CP_HQD_ACTIVE)) & 1, 0);
}

#[test]
fn pm4_queue_executes_write_data_and_the_nop_filler() {
    let mut q = pm4_queue(0);
    let dst = q.page_addr() + 0x100;
    // WRITE_DATA, 2 data dwords: count = 5 body dwords - 1 = 4.
    q.submit(&[
        packet3(PACKET3_WRITE_DATA, 4),
        DST_SEL_MEMORY | WR_CONFIRM,
        dst as u32,
        (dst >> 32) as u32,
        0x1111_1111,
        0x2222_2222,
    ]);
    assert_eq!(q.page_u32(0x40), 0x1111_1111);
    assert_eq!(q.page_u32(0x41), 0x2222_2222);
    // rptr report: 6 dwords consumed.
    assert_eq!(q.page_u32(0), 6);
    // Two NOP fillers (PACKET3(PACKET3_NOP, 0x3FFF), one dword each), a
    // NOP with a 2-dword body, then WRITE_DATA with WR_ONE_ADDR: both
    // data dwords go to one address, the last stays.
    let filler = packet3(PACKET3_NOP, 0x3FFF);
    assert_eq!(filler, 0xFFFF_1000);
    let one = dst + 8;
    q.submit(&[
        filler,
        filler,
        packet3(PACKET3_NOP, 1),
        0xDEAD_BEEF,
        0xDEAD_BEEF,
        packet3(PACKET3_WRITE_DATA, 4),
        DST_SEL_MEMORY | WR_ONE_ADDR,
        one as u32,
        (one >> 32) as u32,
        0x3333_3333,
        0x4444_4444,
    ]);
    assert_eq!(q.page_u32(0x42), 0x4444_4444);
    assert_eq!(q.page_u32(0x43), 0, "WR_ONE_ADDR writes one address");
    assert_eq!(q.page_u32(0), 17);
    assert!(q.gpu.mec.cp().errors().is_empty());
}

#[test]
fn pm4_queue_waits_for_the_whole_packet() {
    let mut q = pm4_queue(0);
    let dst = q.page_addr() + 0x200;
    let pkt = [
        packet3(PACKET3_WRITE_DATA, 3),
        DST_SEL_MEMORY,
        dst as u32,
        (dst >> 32) as u32,
        0x5555_5555,
    ];
    for (i, d) in pkt.iter().enumerate() {
        q.ring.0[i] = *d;
    }
    // Only 3 of its 5 dwords announced: nothing runs.
    q.announce(3);
    assert_eq!(q.page_u32(0x80), 0);
    assert_eq!(q.page_u32(0), 0);
    q.wptr = 5;
    q.announce(5);
    assert_eq!(q.page_u32(0x80), 0x5555_5555);
    assert_eq!(q.page_u32(0), 5);
}

#[test]
fn pm4_queue_wraps_at_the_ring_end() {
    let mut q = pm4_queue(0);
    // Fill to 2 dwords before the end with fillers, then a 5-dword
    // WRITE_DATA that wraps.
    let filler = packet3(PACKET3_NOP, 0x3FFF);
    q.submit(&vec![filler; RING_DWORDS - 2]);
    let dst = q.page_addr() + 0x300;
    q.submit(&[
        packet3(PACKET3_WRITE_DATA, 3),
        DST_SEL_MEMORY,
        dst as u32,
        (dst >> 32) as u32,
        0x6666_6666,
    ]);
    assert_eq!(q.page_u32(0xC0), 0x6666_6666);
    // rptr report wraps: (1022 + 5) mod 1024.
    assert_eq!(q.page_u32(0), 3);
}

#[test]
fn pm4_queue_starts_at_the_loaded_read_pointer() {
    // RPTR = WPTR = 1020: the packet at dwords 1020..1025 wraps.
    let mut q = pm4_queue_at(0, 1020);
    let dst = q.page_addr() + 0x380;
    q.submit(&[
        packet3(PACKET3_WRITE_DATA, 3),
        DST_SEL_MEMORY,
        dst as u32,
        (dst >> 32) as u32,
        0x8888_8888,
    ]);
    assert_eq!(q.page_u32(0xE0), 0x8888_8888);
    assert_eq!(q.page_u32(0), 1, "(1020 + 5) mod 1024");
}

#[test]
fn pm4_queue_stops_loudly_on_a_packet_it_does_not_execute() {
    let mut q = pm4_queue(0);
    let dst = q.page_addr() + 0x100;
    // COPY_DATA (control, src lo/hi, dst lo/hi: count 4), then a
    // WRITE_DATA that must not run after it.
    q.submit(&[
        packet3(PACKET3_COPY_DATA, 4),
        0,
        0,
        0,
        0,
        0,
        packet3(PACKET3_WRITE_DATA, 3),
        DST_SEL_MEMORY,
        dst as u32,
        (dst >> 32) as u32,
        0x7777_7777,
    ]);
    let errors = q.gpu.mec.cp().errors().to_vec();
    assert_eq!(
        errors,
        vec![CpError::Pm4 {
            queue: q.gpu.mec.active_hqds()[0].cp_queue,
            rptr: 0,
            why: Pm4Error::Unsupported {
                opcode: 0x40,
                name: "COPY_DATA"
            }
        }]
    );
    assert!(errors[0].to_string().contains("COPY_DATA"));
    assert_eq!(q.page_u32(0x40), 0, "nothing after the refused packet ran");
    assert_eq!(q.page_u32(0), 0);
}

/// `CP_HQD_EOP_CONTROL__HALT_FETCHER_MASK`, `__HALT_FETCHER_EN_MASK` and
/// `__EXE_DISABLE_MASK` (`gc_11_0_0_sh_mask.h`).
const EOP_HALT_FETCHER: u32 = 0x0020_0000;
const EOP_HALT_FETCHER_EN: u32 = 0x0040_0000;
const EOP_EXE_DISABLE: u32 = 0x0080_0000;

/// A direct load whose `CP_HQD_EOP_CONTROL` stops its own fetcher
/// (`HALT_FETCHER` with `HALT_FETCHER_EN`) or execution (`EXE_DISABLE`)
/// never runs: the model refuses it. The runtime writes `EOP_SIZE` alone
/// (as Linux and tinygrad do), so this is a deliberately wrong driver
/// load, not a runtime bug. `HALT_FETCHER` without its enable is inert.
#[test]
fn a_direct_load_whose_eop_control_stops_the_fetcher_does_not_run() {
    use barebell_model::mec::MecError;
    for (bits, name) in [
        (EOP_HALT_FETCHER | EOP_HALT_FETCHER_EN, "HALT_FETCHER"),
        (EOP_EXE_DISABLE, "EXE_DISABLE"),
    ] {
        let q = pm4_queue_eop(0, 0, 9 | bits);
        let events = q.gpu.mec.events();
        assert!(
            events.iter().any(|e| matches!(
                e,
                MecEvent::Refused {
                    why: MecError::FetcherStopped { why },
                    ..
                } if why.contains(name)
            )),
            "{name}: {events:?}"
        );
        assert_eq!(q.gpu.mec.read32(reg(r::CP_HQD_ACTIVE)) & 1, 0, "{name}");
        assert!(q.gpu.mec.active_hqds().is_empty(), "{name}");
    }
    let q = pm4_queue_eop(0, 0, 9 | EOP_HALT_FETCHER);
    assert_eq!(q.gpu.mec.read32(reg(r::CP_HQD_ACTIVE)) & 1, 1);
}

/// `CP_HQD_EOP_RPTR.INIT_FETCHER` is not needed to run: tinygrad's
/// `AM_GFX.setup_ring()` writes the whole window with `cp_hqd_eop_rptr`
/// 0, Linux's `gfx_v11_0_kiq_init_register()` leaves the register at its
/// default (INIT_FETCHER clear), and both queues run on silicon; only
/// KFD's `hqd_load_v11()` sets it. This load writes it as tinygrad does
/// and the queue executes a packet.
#[test]
fn a_direct_load_without_init_fetcher_runs_as_tinygrads_does() {
    let mut q = pm4_queue(0);
    // The window went out with CP_HQD_EOP_RPTR (dword 168) = 0.
    let eop_rptr = reg(r::CP_MQD_BASE_ADDR) + 4 * (mqd::CP_HQD_EOP_RPTR - mqd::FIRST);
    assert_eq!(q.gpu.mec.read32(eop_rptr), 0);
    let dst = q.page_addr() + 0x100;
    // WRITE_DATA of one dword: count = 4 body dwords - 1 = 3.
    q.submit(&[
        packet3(PACKET3_WRITE_DATA, 3),
        DST_SEL_MEMORY | WR_ONE_ADDR | WR_CONFIRM,
        dst as u32,
        (dst >> 32) as u32,
        0x1234_5678,
    ]);
    assert_eq!(q.page_u32(0x40), 0x1234_5678);
}

/// A ring declared twice the memory behind it (`QUEUE_SIZE` 10: 2048
/// dwords over a 1024-dword buffer): the CP fetches where the declared
/// size says, past the buffer, not where the driver wrapped. Here nothing
/// is mapped after the buffer, so the fetch faults naming an address
/// past it (on hardware: a VM fault, or whatever memory lies there).
/// The runtime sizes `QUEUE_SIZE` from the ring it allocates
/// (`order_base_2(size / 4) - 1`, as `gfx_v11_0_compute_mqd_init()`);
/// this is a deliberately mis-declared load.
#[test]
fn a_ring_declared_larger_than_its_memory_is_fetched_past_the_buffer() {
    let mut q = pm4_queue_full(0, 0, 9, QUEUE_SIZE + 1);
    let ring = q.ring.0.as_ptr() as u64;
    let filler = packet3(PACKET3_NOP, 0x3FFF);
    q.submit(&vec![filler; RING_DWORDS]);
    assert!(q.gpu.mec.cp().errors().is_empty());
    // The driver wraps to its dword 0; the CP reads dword 1024.
    let dst = q.page_addr() + 0x200;
    q.submit(&[
        packet3(PACKET3_WRITE_DATA, 3),
        DST_SEL_MEMORY,
        dst as u32,
        (dst >> 32) as u32,
        0x7777_7777,
    ]);
    assert_eq!(q.page_u32(0x80), 0, "the packet the driver wrapped to ran");
    let errors = q.gpu.mec.cp().errors().to_vec();
    let past = ring + 4 * RING_DWORDS as u64;
    assert!(
        errors
            .iter()
            .any(|e| format!("{e:?}").contains(&format!("{past}"))
                || format!("{e:?}").contains(&format!("{past:#x}"))),
        "no fault at {past:#x}: {errors:?}"
    );
}

/// A ring declared half the memory behind it (`QUEUE_SIZE` 8: 512
/// dwords over 1024): the CP wraps at 512 and runs the stale packet at
/// dword 0 again, where the driver put a new one at dword 512.
#[test]
fn a_ring_declared_smaller_than_its_memory_wraps_early() {
    let mut q = pm4_queue_full(0, 0, 9, QUEUE_SIZE - 1);
    let (old, new) = (q.page_addr() + 0x200, q.page_addr() + 0x240);
    let write = |dst: u64, v: u32| {
        [
            packet3(PACKET3_WRITE_DATA, 3),
            DST_SEL_MEMORY,
            dst as u32,
            (dst >> 32) as u32,
            v,
        ]
    };
    q.submit(&write(old, 0xA));
    assert_eq!(q.page_u32(0x80), 0xA);
    let filler = packet3(PACKET3_NOP, 0x3FFF);
    q.submit(&vec![filler; 512 - 5]);
    // The driver clears the old destination and writes a new packet at
    // its dword 512.
    let page = q.page as *const Page as *mut u32;
    // SAFETY: the leaked page, dword 0x80 (byte 0x200).
    unsafe { core::ptr::write_volatile(page.add(0x80), 0) };
    q.submit(&write(new, 0xB));
    assert_eq!(q.page_u32(0x90), 0, "the CP read past its declared end");
    assert_eq!(
        q.page_u32(0x80),
        0xA,
        "the stale packet at dword 0 ran again"
    );
}

/// GC 11 has one MEC (`mec.num_mec = 1`, `gfx_v11_0_sw_init()`), so
/// `amdgpu_gfx_kiq_acquire()` puts the KIQ on ME 1 and
/// `gfx_v11_0_kiq_setting()` names an ME 1 slot in `RLC_CP_SCHEDULERS`.
/// A PM4 HQD loaded by registers on ME 2 is no queue, whether
/// `RLC_CP_SCHEDULERS` names it as the KIQ or not: the model refuses it
/// (`NotAMecSlot`) and no KIQ comes up there. The runtime loads its KIQ on
/// ME 1 (`gfx::kiq::hqd`), so this is a deliberately wrong load.
#[test]
fn a_kiq_loaded_by_registers_on_me_2_of_a_one_mec_part_is_refused() {
    use barebell_model::mec::MecError;
    // `me << 5 | pipe << 3 | queue`, enable bit 7 (`gfx_v11_0_kiq_setting()`).
    for sched in [0x80 | 2 << 5, 0] {
        let q = pm4_queue_load(0, 0, 9, QUEUE_SIZE, 2, sched);
        let events = q.gpu.mec.events();
        assert!(
            events.iter().any(|e| matches!(
                e,
                MecEvent::Refused {
                    me: 2,
                    why: MecError::NotAMecSlot,
                    ..
                }
            )),
            "sched {sched:#x}: {events:?}"
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, MecEvent::KiqActivated { .. })),
            "sched {sched:#x}: {events:?}"
        );
        assert!(q.gpu.mec.kiq_hqd().is_none());
    }
    // The same load on ME 1, named, is the KIQ.
    let q = pm4_queue_load(0, 0, 9, QUEUE_SIZE, 1, 0x80 | 1 << 5);
    assert!(q.gpu.mec.kiq_hqd().is_some());
}

/// An EOP buffer declared past the memory behind it (`EOP_SIZE` 20:
/// 2^21 dwords, 8 MiB, over a 4 KiB page) is refused at load
/// (`EopUnbacked`), as the KIQ refuses it in MAP_QUEUES: the CP writes
/// the buffer by its declared size, and its end is not memory. The
/// runtime derives `EOP_SIZE` from the buffer it allocates (as
/// `gfx_v11_0_compute_mqd_init()` does), so this is a deliberately
/// mis-declared load; the buffer's own size (`EOP_SIZE` 9) loads.
#[test]
fn an_eop_buffer_declared_past_its_memory_is_refused() {
    use barebell_model::mec::MecError;
    let q = pm4_queue_eop(0, 0, 20);
    let events = q.gpu.mec.events();
    assert!(
        events.iter().any(|e| matches!(
            e,
            MecEvent::Refused {
                why: MecError::EopUnbacked {
                    bytes: 0x80_0000,
                    ..
                },
                ..
            }
        )),
        "{events:?}"
    );
    assert!(q.gpu.mec.active_hqds().is_empty());
    let q = pm4_queue_eop(0, 0, 9);
    assert_eq!(q.gpu.mec.active_hqds().len(), 1);
}

/// `PACKET3_SET_SH_REG_START` (`nvd.h`) and the GC dword offsets of the
/// `COMPUTE_*` registers (`gc_11_0_0_offset.h`, segment 0): a SET_SH_REG
/// offset is `GC base + register - start`, as `gfx_v11_0.c` computes it
/// from `SOC15_REG_OFFSET` (and tinygrad's `AMDComputeQueue.wreg`).
const SH_START: u32 = 0x2C00;
fn sh(gc_reg: u32) -> u32 {
    GC_BASES.0[0] + gc_reg - SH_START
}
const COMPUTE_NUM_THREAD_X: u32 = 0x1ba7;
const COMPUTE_PGM_LO: u32 = 0x1bac;
const COMPUTE_PGM_RSRC1: u32 = 0x1bb2;
const COMPUTE_USER_DATA_0: u32 = 0x1be0;
/// `COMPUTE_PGM_RSRC1`: FLOAT_DENORM_MODE_32 and _16_64 = 3 (bits 16-19),
/// VGPRS 0 (8 VGPRs in wave32). `COMPUTE_PGM_RSRC2`: USER_SGPR = 2
/// (bits 1-5), TGID_X_EN (bit 7) (`gc_11_0_0_sh_mask.h`).
const RSRC1: u32 = 0xF << 16;
const RSRC2: u32 = 2 << 1 | 1 << 7;
/// `COMPUTE_DISPATCH_INITIATOR`: COMPUTE_SHADER_EN (bit 0),
/// FORCE_START_AT_000 (bit 2), CS_W32_EN (bit 15).
const INITIATOR: u32 = 1 | 1 << 2 | 1 << 15;
/// `RELEASE_MEM` dword 1: `EVENT_TYPE(CACHE_FLUSH_AND_INV_TS_EVENT = 0x14)
/// | EVENT_INDEX(5)` (`gfx_v11_0_ring_emit_fence()`); dword 2:
/// `DATA_SEL(x) << 29 | INT_SEL(y) << 24` (`nvd.h`).
const RELEASE_EOP: u32 = 0x14 | 5 << 8;
const fn release_sel(data: u32, int: u32) -> u32 {
    data << 29 | int << 24
}

/// gfx1100 machine code, assembled by LLVM 19's `llvm-mc -mcpu=gfx1100`
/// from:
/// ```text
/// s_lshl_b32 s3, s2, 5             ; workgroup id x * 32
/// v_add_nc_u32 v1, s3, v0          ; + local id: the global id
/// v_lshlrev_b32 v2, 2, v1          ; * 4
/// global_store_b32 v2, v1, s[0:1]  ; out[id] = id (s[0:1]: user data 0-1)
/// s_endpgm
/// ```
const KERNEL: [u32; 6] = [
    0x8403_8502,
    0x4a02_0003,
    0x3004_0282,
    0xdc6a_0000,
    0x0000_0102,
    0xbfb0_0000,
];

/// The packets `AMDComputeQueue.exec` emits for a 1-D dispatch of
/// `groups` workgroups of 32 work-items, code at `code`, user data 0/1 =
/// `out`.
fn dispatch(code: u64, out: u64, groups: u32) -> Vec<u32> {
    vec![
        packet3(PACKET3_ACQUIRE_MEM, 6),
        0,
        0xFFFF_FFFF,
        0xFFFF_FFFF,
        0,
        0,
        0,
        0,
        packet3(PACKET3_SET_SH_REG, 2),
        sh(COMPUTE_PGM_LO),
        (code >> 8) as u32,
        (code >> 40) as u32,
        packet3(PACKET3_SET_SH_REG, 2),
        sh(COMPUTE_PGM_RSRC1),
        RSRC1,
        RSRC2,
        packet3(PACKET3_SET_SH_REG, 2),
        sh(COMPUTE_USER_DATA_0),
        out as u32,
        (out >> 32) as u32,
        packet3(PACKET3_SET_SH_REG, 3),
        sh(COMPUTE_NUM_THREAD_X),
        32,
        1,
        1,
        packet3(PACKET3_DISPATCH_DIRECT, 3),
        groups,
        1,
        1,
        INITIATOR,
        // EVENT_WRITE(CS_PARTIAL_FLUSH = 7, EVENT_INDEX 4)
        packet3(PACKET3_EVENT_WRITE, 0),
        7 | 4 << 8,
    ]
}

/// A code page and an output page the rig maps for the device.
fn pages(q: &Pm4Queue) -> (u64, &'static Page) {
    let code: &'static mut Page = Box::leak(Box::new(Page([0; 1024])));
    code.0[..KERNEL.len()].copy_from_slice(&KERNEL);
    let out: &'static Page = Box::leak(Box::new(Page([0; 1024])));
    // SAFETY: both leaked for the process; the device reads the code and
    // writes the output with its own accesses, the test reads volatile.
    unsafe {
        q.gpu.map(code as *const Page as u64, 4096);
        q.gpu.map(out as *const Page as u64, 4096);
    }
    (code as *const Page as u64, out)
}

fn page_u32(p: &Page, i: usize) -> u32 {
    // SAFETY: a leaked page read with volatile loads only.
    unsafe { core::ptr::read_volatile(&p.0[i]) }
}

/// tinygrad's `AMDComputeQueue.exec` stream: the registers are set, then
/// DISPATCH_DIRECT runs the waves on the model's ISA interpreter with the
/// user SGPRs from `COMPUTE_USER_DATA_*` and the workgroup id after them
/// (RSRC2), and RELEASE_MEM at end of pipe writes the signal after the
/// kernel's stores (before: DISPATCH_DIRECT stopped the queue).
#[test]
fn pm4_queue_runs_a_dispatch_from_its_registers_then_signals() {
    let mut q = pm4_queue(0);
    let (code, out) = pages(&q);
    let out_a = out as *const Page as u64;
    let signal = q.page_addr() + 0x200;
    let mut stream = dispatch(code, out_a, 2);
    stream.extend([
        packet3(PACKET3_RELEASE_MEM, 6),
        RELEASE_EOP,
        release_sel(2, 0),
        signal as u32,
        (signal >> 32) as u32,
        0x0000_0005,
        0x0000_0001,
        0,
    ]);
    q.submit(&stream);
    assert!(
        q.gpu.mec.cp().errors().is_empty(),
        "{:?}",
        q.gpu.mec.cp().errors()
    );
    for i in 0..64 {
        assert_eq!(page_u32(out, i), i as u32, "out[{i}]");
    }
    assert_eq!(page_u32(out, 64), 0, "no work-item past 2 x 32");
    // The 64-bit RELEASE_MEM data, low dword first.
    assert_eq!(q.page_u32(0x80), 5);
    assert_eq!(q.page_u32(0x81), 1);
    assert_eq!(q.page_u32(0), stream.len() as u32);
    assert_eq!(q.gpu.mec.cp().shader.dispatches, 1);
}

/// WAIT_REG_MEM on memory (`MEM_SPACE(1)`, `FUNCTION(5)` >=, tinygrad's
/// `AMDComputeQueue.wait` on a signal): not met, the queue stays at the
/// packet and nothing after it runs; once the value is there, the next
/// turn of the CP takes it.
#[test]
fn pm4_queue_waits_on_memory_and_resumes_when_the_value_arrives() {
    let mut q = pm4_queue(0);
    let sig = q.page_addr() + 0x300;
    let dst = q.page_addr() + 0x100;
    q.submit(&[
        packet3(PACKET3_WAIT_REG_MEM, 5),
        5 | 1 << 4,
        sig as u32,
        (sig >> 32) as u32,
        7,
        0xFFFF_FFFF,
        4,
        packet3(PACKET3_WRITE_DATA, 3),
        DST_SEL_MEMORY,
        dst as u32,
        (dst >> 32) as u32,
        0x5555_5555,
    ]);
    assert_eq!(q.page_u32(0x40), 0, "the WRITE_DATA waits behind the wait");
    assert_eq!(q.page_u32(0), 0, "the wait is not consumed");
    assert!(q.gpu.mec.cp().errors().is_empty());
    let page = q.page as *const Page as *mut u32;
    // SAFETY: the leaked page; dword 0xC0 is the signal.
    unsafe { core::ptr::write_volatile(page.add(0xC0), 7) };
    q.gpu.mec.run_until_idle(10_000).unwrap();
    assert_eq!(q.page_u32(0x40), 0x5555_5555);
    assert_eq!(q.page_u32(0), 12);
}

/// What the model does not execute stops the queue with a typed error
/// naming the field: a SET_SH_REG outside the `COMPUTE_*` window
/// (`SPI_CONFIG_CNTL` is a uconfig register tinygrad never sends this
/// way; here SH offset 0, `SPI_SHADER_*` space), a RELEASE_MEM with an
/// `INT_SEL` other than none, interrupt or interrupt after the write (3;
/// `amdgpu_fence_emit()`'s fences use 2, which the model raises as the
/// end-of-pipe interrupt), a register WAIT_REG_MEM on a register that is
/// not the HDP flush pair.
#[test]
fn pm4_compute_packets_refuse_what_the_model_does_not_execute() {
    let cases: [(&[u32], &str); 4] = [
        (
            &[packet3(PACKET3_SET_SH_REG, 1), 0, 1],
            "outside COMPUTE_DISPATCH_INITIATOR",
        ),
        // An offset past the register space: refused, never an overflow.
        (
            &[packet3(PACKET3_SET_SH_REG, 1), u32::MAX, 1],
            "outside COMPUTE_DISPATCH_INITIATOR",
        ),
        (
            &[
                packet3(PACKET3_RELEASE_MEM, 6),
                RELEASE_EOP,
                release_sel(0, 3),
                0,
                0,
                0,
                0,
                0,
            ],
            "INT_SEL",
        ),
        (
            &[
                packet3(PACKET3_WAIT_REG_MEM, 5),
                3 | 1 << 6,
                0x100,
                0x101,
                1,
                1,
                4,
            ],
            "HDP flush",
        ),
    ];
    for (packets, what) in cases {
        let mut q = pm4_queue(0);
        q.submit(packets);
        let errors = q.gpu.mec.cp().errors().to_vec();
        assert_eq!(errors.len(), 1, "{what}: {errors:?}");
        assert!(
            matches!(
                errors[0],
                CpError::Pm4 {
                    rptr: 0,
                    why: Pm4Error::Field { .. },
                    ..
                }
            ),
            "{what}: {:?}",
            errors[0]
        );
        assert!(
            errors[0].to_string().contains(what),
            "{what}: {}",
            errors[0]
        );
        assert_eq!(q.page_u32(0), 0);
    }
}
