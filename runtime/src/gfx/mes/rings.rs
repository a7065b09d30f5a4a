//! The MES pipes' own rings: the scheduler ring (pipe 0) and, on gfx12,
//! the KIQ pipe's ring (pipe 1), loaded by registers or mapped by the KIQ
//! or by a `map_legacy_kq` ADD_QUEUE.

use crate::bus::{Block, RegisterBus};
use crate::gfx::error::MapError;
use crate::gfx::mes::start::{MES_ME, SCHED_PIPE};
use crate::ip::Generation;
use crate::mem::Dev;
use crate::regs::IpBases;
use crate::time::Clock;

/// A MES ring with its MQD page, EOP buffer and 64-bit doorbell index.
#[derive(Debug, Clone, Copy)]
pub struct MesRingParts<'a, const N: usize> {
    pub ring: Dev<'a, crate::gfx::mes::MesMemory<N>>,
    pub mqd: Dev<'a, crate::gfx::mqd::MqdPage>,
    pub eop: Dev<'a, crate::gfx::mqd::EopBuffer>,
    pub doorbell: u32,
}

/// `MES_EOP_SIZE` (`mes_v11_0.c`, a `.c` define, so cited only).
pub const MES_EOP_BYTES: u64 = 2048;

/// The scheduler ring's MQD image (`mes_v11_0_mqd_init()`).
///
/// Linux's `RPTR_BLOCK_SIZE` argument there is already shifted by 8, so
/// `REG_SET_FIELD` masks it to 0; this keeps that value (0) rather than
/// the 9 `gfx_v11_0_compute_mqd_init()` writes for the KIQ.
pub fn scheduler_ring_hqd<const N: usize>(
    ring: &crate::gfx::mes::MesMemory<N>,
    mqd: &crate::gfx::mqd::MqdPage,
    eop: &crate::gfx::mqd::EopBuffer,
    doorbell: u32,
) -> Result<crate::gfx::mqd::HqdRegisters, crate::gfx::error::MqdError> {
    mes_pipe_ring_hqd(
        MesPipeRing {
            ring: ring.ring_address(),
            ring_dwords: N,
            rptr: ring.rptr_address(),
            wptr: ring.wptr_address(),
        },
        mqd,
        eop,
        doorbell,
    )
}

/// Where a ring a MES pipe runs lives: what `mes_v11_0_mqd_init()` takes
/// from the `amdgpu_ring` (the scheduler ring, or the KIQ ring on MES
/// pipe 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MesPipeRing {
    pub ring: u64,
    /// A power of two.
    pub ring_dwords: usize,
    pub rptr: u64,
    pub wptr: u64,
}

/// `mes_v11_0_mqd_init()` (`mes_v12_0_mqd_init()` is the same) for
/// `ring`: a privileged kernel queue in VMID 0, doorbell `doorbell`
/// (64-bit index) enabled, EOP of `MES_EOP_SIZE`.
pub fn mes_pipe_ring_hqd(
    r: MesPipeRing,
    mqd: &crate::gfx::mqd::MqdPage,
    eop: &crate::gfx::mqd::EopBuffer,
    doorbell: u32,
) -> Result<crate::gfx::mqd::HqdRegisters, crate::gfx::error::MqdError> {
    use crate::gfx::error::MqdError;
    use crate::gfx::mqd::{DoorbellControl, PersistentState, PqControl};
    use crate::gfx::mqd::{
        EOP_CONTROL_DEFAULT, IB_CONTROL_DEFAULT, MQD_CONTROL_DEFAULT, PERSISTENT_STATE_DEFAULT,
        PQ_CONTROL_DEFAULT,
    };
    let ring_addr = r.ring;
    if !r.ring_dwords.is_power_of_two() || r.ring_dwords < 4 {
        return Err(MqdError::RingSize {
            bytes: (r.ring_dwords * 4) as u64,
        });
    }
    if !ring_addr.is_multiple_of(256) {
        return Err(MqdError::Misaligned {
            field: "MES ring",
            address: ring_addr,
            align: 256,
        });
    }
    if eop.address() == 0 {
        return Err(MqdError::Missing {
            field: "EOP address",
        });
    }
    let dword = doorbell.saturating_mul(2);
    if dword >= 1 << 26 {
        return Err(MqdError::DoorbellOffset { dword });
    }
    let lo = |x: u64| x as u32;
    let hi = |x: u64| (x >> 32) as u32;
    let pq = PqControl::from_bits(PQ_CONTROL_DEFAULT)
        .with_queue_size((r.ring_dwords.trailing_zeros() - 1) as u8)
        .with_rptr_block_size(0)
        .with_unord_dispatch(true)
        .with_tunnel_dispatch(false)
        .with_priv_state(true)
        .with_kmd_queue(true)
        .with_no_update_rptr(true);
    Ok(crate::gfx::mqd::HqdRegisters {
        cp_mqd_base_addr_lo: lo(mqd.address()) & !3,
        cp_mqd_base_addr_hi: hi(mqd.address()),
        cp_hqd_active: 1,
        cp_hqd_vmid: 0,
        cp_hqd_persistent_state: PersistentState::from_bits(PERSISTENT_STATE_DEFAULT)
            .with_preload_size(0x55)
            .into_bits(),
        cp_hqd_pq_base_lo: lo(ring_addr >> 8),
        cp_hqd_pq_base_hi: hi(ring_addr >> 8),
        cp_hqd_pq_rptr_report_addr_lo: lo(r.rptr) & !3,
        cp_hqd_pq_rptr_report_addr_hi: hi(r.rptr) & 0xFFFF,
        cp_hqd_pq_wptr_poll_addr_lo: lo(r.wptr) & !7,
        cp_hqd_pq_wptr_poll_addr_hi: hi(r.wptr) & 0xFFFF,
        cp_hqd_pq_doorbell_control: DoorbellControl::new()
            .with_doorbell_offset(dword)
            .with_doorbell_en(true)
            .into_bits(),
        cp_hqd_pq_control: pq.into_bits(),
        cp_hqd_ib_control: IB_CONTROL_DEFAULT,
        cp_mqd_control: MQD_CONTROL_DEFAULT,
        cp_hqd_eop_base_addr_lo: lo(eop.address() >> 8),
        cp_hqd_eop_base_addr_hi: hi(eop.address() >> 8),
        cp_hqd_eop_control: EOP_CONTROL_DEFAULT & !0x3F
            | ((MES_EOP_BYTES / 4).trailing_zeros() - 1),
        ..crate::gfx::mqd::HqdRegisters::default()
    })
}

/// `MES_QUEUE_TYPE_SCHQ` (`mes_v12_api_def.h`): the queue type of a MES
/// scheduler ring in a `map_legacy_kq` ADD_QUEUE.
pub const MES_QUEUE_TYPE_SCHQ: u32 = 3;

/// `CP_UNMAPPED_DOORBELL` fields (gfx12).
pub const UNMAPPED_DOORBELL_ENABLE: u32 = 1 << 0;
pub const UNMAPPED_DOORBELL_PROC_LSB_SHIFT: u32 = 8;
pub const UNMAPPED_DOORBELL_PROC_LSB_MASK: u32 = 0x1F << UNMAPPED_DOORBELL_PROC_LSB_SHIFT;
/// `CP_MES_DOORBELL_CONTROL1..5` fields (gfx12).
pub const MES_DOORBELL_OFFSET_SHIFT: u32 = 2;
pub const MES_DOORBELL_OFFSET_MASK: u32 = 0x0FFF_FFFC;
pub const MES_DOORBELL_EN: u32 = 1 << 30;
pub const MES_DOORBELL_HIT: u32 = 1 << 31;
/// `CP_HQD_GFX_CONTROL.DB_UPDATED_MSG_EN`.
pub const HQD_GFX_DB_UPDATED_MSG_EN: u32 = 1 << 15;

/// The SCHQ queue type, against the v12 API header; the gfx12 doorbell
/// register fields against `gc_12_0_0_sh_mask.h`.
pub const FACTS: &[barebell_facts::Fact] = &[
    barebell_facts::Fact::constant(
        "mes_v12_api_def.h",
        "MES_QUEUE_TYPE_SCHQ",
        MES_QUEUE_TYPE_SCHQ as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "CP_UNMAPPED_DOORBELL__ENABLE_MASK",
        UNMAPPED_DOORBELL_ENABLE as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "CP_UNMAPPED_DOORBELL__PROC_LSB_MASK",
        UNMAPPED_DOORBELL_PROC_LSB_MASK as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "CP_MES_DOORBELL_CONTROL1__DOORBELL_OFFSET_MASK",
        MES_DOORBELL_OFFSET_MASK as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "CP_MES_DOORBELL_CONTROL1__DOORBELL_OFFSET__SHIFT",
        MES_DOORBELL_OFFSET_SHIFT as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "CP_MES_DOORBELL_CONTROL1__DOORBELL_EN_MASK",
        MES_DOORBELL_EN as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "CP_MES_DOORBELL_CONTROL1__DOORBELL_HIT_MASK",
        MES_DOORBELL_HIT as u64,
    ),
    barebell_facts::Fact::constant(
        "gc_12_0_0_sh_mask.h",
        "CP_HQD_GFX_CONTROL__DB_UPDATED_MSG_EN_MASK",
        HQD_GFX_DB_UPDATED_MSG_EN as u64,
    ),
];

/// gfx12: lets MES handle doorbells of queues it has not mapped
/// (`mes_v12_0_enable_unmapped_doorbell_handling()`, called by
/// `mes_v12_0_hw_init()` before the scheduler pipe's ring and
/// SET_HW_RSRC): `PROC_LSB` 0xd (two doorbell pages per process), then
/// `ENABLE`.
pub fn enable_unmapped_doorbell_handling<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
) -> Result<(), MapError> {
    use crate::regs::gc_12_0_0 as gc;
    let b = Block::new(bus, *bases);
    let v = b.read(gc::CP_UNMAPPED_DOORBELL)? & !UNMAPPED_DOORBELL_PROC_LSB_MASK
        | 0xd << UNMAPPED_DOORBELL_PROC_LSB_SHIFT
        | UNMAPPED_DOORBELL_ENABLE;
    b.write(gc::CP_UNMAPPED_DOORBELL, v)?;
    Ok(())
}

/// gfx12: points `CP_MES_DOORBELL_CONTROL1..5` at the aggregated
/// doorbells SET_HW_RSRC named ([`crate::gfx::mes::aggregated_doorbells`],
/// low to realtime), each enabled, and sets `CP_HQD_GFX_CONTROL`'s
/// `DB_UPDATED_MSG_EN` (`mes_v12_0_init_aggregated_doorbell()`, after the
/// scheduler pipe's SET_HW_RSRC).
pub fn init_aggregated_doorbell<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
) -> Result<(), MapError> {
    use crate::regs::gc_12_0_0 as gc;
    let b = Block::new(bus, *bases);
    let regs = [
        gc::CP_MES_DOORBELL_CONTROL1,
        gc::CP_MES_DOORBELL_CONTROL2,
        gc::CP_MES_DOORBELL_CONTROL3,
        gc::CP_MES_DOORBELL_CONTROL4,
        gc::CP_MES_DOORBELL_CONTROL5,
    ];
    for (r, d) in regs
        .into_iter()
        .zip(crate::gfx::mes::aggregated_doorbells())
    {
        let v = b.read(r)? & !(MES_DOORBELL_OFFSET_MASK | MES_DOORBELL_EN | MES_DOORBELL_HIT)
            | (d << MES_DOORBELL_OFFSET_SHIFT) & MES_DOORBELL_OFFSET_MASK
            | MES_DOORBELL_EN;
        b.write(r, v)?;
    }
    b.write(gc::CP_HQD_GFX_CONTROL, HQD_GFX_DB_UPDATED_MSG_EN)?;
    Ok(())
}

/// Maps the MES scheduler ring through the KIQ (v11,
/// `mes_v11_0_kiq_enable_queue()`): MQD into `mqd`, then MAP_QUEUES with
/// ME 2 / engine 5 on MES pipe 0, queue 0, fenced.
/// The parts' MQD page must not be mapped already (see
/// [`crate::gfx::mqd::MqdPage`]).
pub fn map_scheduler_ring<C, P, const K: usize, const N: usize>(
    kiq: &mut crate::gfx::kiq::Kiq<'_, C, P, K>,
    parts: MesRingParts<'_, N>,
) -> Result<(), MapError>
where
    C: Clock,
    P: crate::time::Pause,
{
    let MesRingParts {
        ring,
        mqd,
        eop,
        doorbell,
    } = parts;
    let hqd = scheduler_ring_hqd(&ring, &mqd, &eop, doorbell)?;
    mqd.write(&crate::gfx::mqd::ComputeMqdV11::kernel_queue(hqd));
    let packet = barebell_firmware_if::pm4::map_queues(
        barebell_firmware_if::pm4::QueueEngine::Mes,
        SCHED_PIPE,
        0,
        doorbell.saturating_mul(2),
        mqd.address(),
        ring.wptr_address(),
    );
    kiq.submit("MAP_QUEUES (MES scheduler ring)", &packet)
        .map_err(MapError::Kiq)
}

/// Loads a MES pipe's ring by register programming
/// (`mes_v12_0_queue_init_register()`): GRBM ME 3 / `pipe`, the HQD
/// window of the MES ring MQD, `CP_HQD_ACTIVE`.
/// The parts' MQD page must not be mapped already.
pub fn load_pipe_ring<B: RegisterBus + ?Sized, const N: usize>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
    pipe: u8,
    parts: MesRingParts<'_, N>,
) -> Result<(), MapError> {
    let MesRingParts {
        ring,
        mqd,
        eop,
        doorbell,
    } = parts;
    let hqd = scheduler_ring_hqd(&ring, &mqd, &eop, doorbell)?;
    load_on_mes_pipe(bus, bases, generation, pipe, hqd, mqd)
}

/// Writes `hqd` into `mqd` and loads it on MES pipe `pipe` by register
/// programming (`mes_v11_0_queue_init_register()` /
/// `mes_v12_0_queue_init_register()`): GRBM ME 3 / `pipe`, the HQD
/// window, then `CP_HQD_ACTIVE`.
pub fn load_on_mes_pipe<B: RegisterBus + ?Sized>(
    bus: &B,
    bases: &IpBases,
    generation: Generation,
    pipe: u8,
    hqd: crate::gfx::mqd::HqdRegisters,
    mqd: Dev<'_, crate::gfx::mqd::MqdPage>,
) -> Result<(), MapError> {
    match generation {
        Generation::Gfx90a | Generation::Gfx94 => {
            return Err(crate::ip::Unsupported::new("v9 kernel-queue MQD", generation).into());
        }
        Generation::Gfx11 => mqd.write(&crate::gfx::mqd::ComputeMqdV11::kernel_queue(hqd)),
        Generation::Gfx12 => mqd.write(&crate::gfx::mqd::ComputeMqdV12::kernel_queue(hqd)),
    }
    let regs = crate::gfx::mapper::HqdRegs::for_generation(generation)?;
    let gc = Block::new(bus, *bases);
    // ME 3 / `pipe` stays selected only while `sel` lives.
    let sel = regs.select(gc, MES_ME, pipe, 0)?;
    // The image's ACTIVE (1, as `mes_v12_0_mqd_init()` sets it) is written
    // last, after everything it activates, as the register sequence does.
    let mut image = hqd;
    image.cp_hqd_active = 0;
    regs.load_window(&sel, &image)?;
    gc.write(regs.hqd_active, 1)?;
    Ok(())
}

/// Maps MES pipe 0's scheduler ring through MES pipe 1 (v12 uni-MES,
/// `mes_v12_0_map_legacy_queue()`): an ADD_QUEUE with `map_legacy_kq`,
/// pipe 0, queue 0, the ring's doorbell, MQD and wptr, queue type SCHQ.
/// The parts' MQD page must not be mapped already.
pub fn map_legacy_scheduler_ring<C, P, const K: usize, const N: usize>(
    kiq_pipe: &mut crate::gfx::mes::Mes<'_, C, P, K, crate::gfx::mes::V12>,
    parts: MesRingParts<'_, N>,
) -> Result<(), MapError>
where
    C: Clock,
    P: crate::time::Pause,
{
    let MesRingParts {
        ring,
        mqd,
        eop,
        doorbell,
    } = parts;
    use barebell_firmware_if::mes_api::{Frame, Le32, Le64, v12};
    let hqd = scheduler_ring_hqd(&ring, &mqd, &eop, doorbell)?;
    mqd.write(&crate::gfx::mqd::ComputeMqdV12::kernel_queue(hqd));
    let mut f = v12::AddQueue::new();
    f.pipe_id = Le32::new(u32::from(SCHED_PIPE));
    f.queue_id = Le32::new(0);
    f.doorbell_offset = Le32::new(doorbell.saturating_mul(2));
    f.mqd_addr = Le64::new(mqd.address());
    f.wptr_addr = Le64::new(ring.wptr_address());
    f.queue_type = Le32::new(MES_QUEUE_TYPE_SCHQ);
    f.flags = Le32::new(
        v12::AddQueueFlags::new()
            .with_map_legacy_kq(true)
            .into_bits(),
    );
    kiq_pipe
        .submit("ADD_QUEUE (map_legacy_kq)", f)
        .map_err(MapError::Mes)
}
