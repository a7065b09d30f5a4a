//! The KIQ on GC 9.x (GC 9.4.3: one KIQ per XCC).
//!
//! `gfx_v9_0_kiq_map_queues()` / `gfx_v9_4_3`'s KIQ functions and KFD's
//! `kfd_pm4_headers_ai.h` use the `soc15d.h` encodings of MAP_QUEUES and
//! UNMAP_QUEUES. barebell's KIQ writes them with
//! [`barebell_firmware_if::pm4`], written from gfx11's `nvd.h`; these facts
//! check each field position it uses against `soc15d.h` as well. The
//! field positions agree; the ME field's numbering does not: gfx9 writes
//! 0 for MEC 1 (`PACKET3_MAP_QUEUES_ME((ring->me == 1 ? 0 : 1))`), while
//! `pm4::map_queues(QueueEngine::Compute, ..)` writes gfx11's 1, so a
//! GC 9.4.3 caller sets the ME field itself
//! (`barebell_bringup::gfx_v9_4_3::map_kiq_built`). What differs too on
//! GC 9.4.3 is where the KIQ lives: its HQD is loaded by register writes
//! per XCC (`gfx_v9_4_3_xcc_kiq_init_register()`, [`crate::gfx::queue_v9`]),
//! not through MES.

use barebell_facts::Fact;
use barebell_firmware_if::pm4::{self, MapQueuesCntl};

const H: &str = "soc15d.h";

const fn c(expr: &'static str, v: u32) -> Fact {
    Fact::constant(H, expr, v as u64)
}

/// MAP_QUEUES / UNMAP_QUEUES opcodes and the field positions barebell's
/// packets use, against `soc15d.h`.
pub const FACTS: &[Fact] = &[
    c("PACKET3_MAP_QUEUES", pm4::opcode::MAP_QUEUES as u32),
    c("PACKET3_UNMAP_QUEUES", pm4::opcode::UNMAP_QUEUES as u32),
    c(
        "PACKET3_MAP_QUEUES_QUEUE_SEL(1)",
        MapQueuesCntl::new().with_queue_sel(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_VMID(1)",
        MapQueuesCntl::new().with_vmid(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_QUEUE(1)",
        MapQueuesCntl::new().with_queue(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_PIPE(1)",
        MapQueuesCntl::new().with_pipe(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_ME(1)",
        MapQueuesCntl::new().with_me(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_QUEUE_TYPE(1)",
        MapQueuesCntl::new().with_queue_type(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_ALLOC_FORMAT(1)",
        MapQueuesCntl::new().with_alloc_format(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_ENGINE_SEL(1)",
        MapQueuesCntl::new().with_engine_sel(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_NUM_QUEUES(1)",
        MapQueuesCntl::new().with_num_queues(1).into_bits(),
    ),
    c(
        "PACKET3_MAP_QUEUES_DOORBELL_OFFSET(1)",
        pm4::DoorbellCntl::new().with_doorbell_offset(1).into_bits(),
    ),
];
