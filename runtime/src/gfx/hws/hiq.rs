//! Where the HIQ runs and the KIQ packet that maps it.
//!
//! KFD's kernel queue for the HWS sits on `KFD_CIK_HIQ_PIPE` (4) queue
//! `KFD_CIK_HIQ_QUEUE` (0) (`kernel_queue_initialize()`,
//! `kfd_priv.h`); with 4 pipes per MEC that is MEC 2 (ME 2) pipe 0 queue 0
//! (`kgd_gfx_v9_hiq_mqd_load()`: `mec = pipe_id / num_pipe_per_mec + 1`).
//! `kgd_gfx_v9_hiq_mqd_load()` (GC 9.4.3 uses it through
//! `gc_9_4_3_kfd2kgd`, once per XCC) has the KIQ map it with a gfx9
//! MAP_QUEUES (`soc15d.h` encoding) whose `engine_sel` is 1, "hiq", on
//! the slot it names (`queue_sel` 0), taking VMID, MQD base and wptr-poll
//! address from the HIQ's v9 MQD. The KIQ ring itself and the v9 MQD are
//! other modules' work; this builds the packet.

use super::packets::{Field, header};
use barebell_facts::Fact;

/// `KFD_CIK_HIQ_PIPE` / `KFD_CIK_HIQ_QUEUE` (`kfd_priv.h`, which does
/// not compile outside the kernel: cited, not conformance-checked).
pub const KFD_HIQ_PIPE_ID: u32 = 4;
pub const KFD_HIQ_QUEUE: u32 = 0;

/// `soc15d.h` MAP_QUEUES positions (`PACKET3_MAP_QUEUES_*(x)` shifts);
/// widths run to the next field.
pub mod soc15 {
    use super::Field;
    pub const OPCODE: u32 = 0xA2;
    pub const QUEUE_SEL: Field = Field::new(4, 2);
    pub const VMID: Field = Field::new(8, 4);
    pub const QUEUE: Field = Field::new(13, 3);
    pub const PIPE: Field = Field::new(16, 2);
    pub const ME: Field = Field::new(18, 3);
    pub const QUEUE_TYPE: Field = Field::new(21, 3);
    pub const ALLOC_FORMAT: Field = Field::new(24, 2);
    pub const ENGINE_SEL: Field = Field::new(26, 3);
    pub const NUM_QUEUES: Field = Field::new(29, 3);
    pub const DOORBELL_OFFSET: Field = Field::new(2, 26);
    /// `engine_sel: hiq` in `kgd_gfx_v9_hiq_mqd_load()`.
    pub const ENGINE_HIQ: u32 = 1;
}

/// The KIQ MAP_QUEUES `kgd_gfx_v9_hiq_mqd_load()` writes for the HIQ:
/// `pipe_id` in KFD's numbering (MEC-major), `vmid` the MQD's
/// `cp_hqd_vmid`, `doorbell_offset` the HIQ doorbell's dword offset,
/// `mqd` its `cp_mqd_base_addr`, `wptr_poll` its
/// `cp_hqd_pq_wptr_poll_addr`. `pipes_per_mec` is 4 on GC 9.4.3.
pub fn kiq_map_hiq(
    pipe_id: u32,
    pipes_per_mec: u32,
    queue: u32,
    vmid: u32,
    doorbell_offset: u32,
    mqd: u64,
    wptr_poll: u64,
) -> [u32; 7] {
    use soc15 as s;
    let per = pipes_per_mec.max(1);
    let mec = pipe_id / per + 1;
    let pipe = pipe_id % per;
    [
        header(s::OPCODE, 7),
        s::QUEUE_SEL.put(0)
            | s::VMID.put(vmid)
            | s::QUEUE.put(queue)
            | s::PIPE.put(pipe)
            | s::ME.put(mec - 1)
            | s::QUEUE_TYPE.put(0)
            | s::ALLOC_FORMAT.put(0)
            | s::ENGINE_SEL.put(s::ENGINE_HIQ)
            | s::NUM_QUEUES.put(1),
        s::DOORBELL_OFFSET.put(doorbell_offset),
        mqd as u32,
        (mqd >> 32) as u32,
        wptr_poll as u32,
        (wptr_poll >> 32) as u32,
    ]
}

const S: &str = "soc15d.h";

const fn at(expr: &'static str, f: Field) -> Fact {
    Fact::constant(S, expr, 1u64 << f.shift)
}

pub const FACTS: &[Fact] = &[
    Fact::constant(S, "PACKET3_MAP_QUEUES", soc15::OPCODE as u64),
    at("PACKET3_MAP_QUEUES_QUEUE_SEL(1)", soc15::QUEUE_SEL),
    at("PACKET3_MAP_QUEUES_VMID(1)", soc15::VMID),
    at("PACKET3_MAP_QUEUES_QUEUE(1)", soc15::QUEUE),
    at("PACKET3_MAP_QUEUES_PIPE(1)", soc15::PIPE),
    at("PACKET3_MAP_QUEUES_ME(1)", soc15::ME),
    at("PACKET3_MAP_QUEUES_QUEUE_TYPE(1)", soc15::QUEUE_TYPE),
    at("PACKET3_MAP_QUEUES_ALLOC_FORMAT(1)", soc15::ALLOC_FORMAT),
    at("PACKET3_MAP_QUEUES_ENGINE_SEL(1)", soc15::ENGINE_SEL),
    at("PACKET3_MAP_QUEUES_NUM_QUEUES(1)", soc15::NUM_QUEUES),
    at(
        "PACKET3_MAP_QUEUES_DOORBELL_OFFSET(1)",
        soc15::DOORBELL_OFFSET,
    ),
    Fact::constant(S, "(unsigned)PACKET3(PACKET3_MAP_QUEUES, 5)", 0xC005_A200),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// KFD's HIQ: pipe id 4 of 4-pipe MECs is MEC 2 pipe 0, so ME field
    /// 1; engine_sel 1 at bit 26; one queue at bit 29; doorbell index 1
    /// (`AMDGPU_DOORBELL_LAYOUT1_HIQ`) is dword 2, at bit 2.
    #[test]
    fn kfd_hiq_map_packet() {
        let p = kiq_map_hiq(
            KFD_HIQ_PIPE_ID,
            4,
            KFD_HIQ_QUEUE,
            0,
            2,
            0x12_3456_7000,
            0x9000,
        );
        assert_eq!(p[0], 0xC005_A200);
        assert_eq!(p[1], 1 << 18 | 1 << 26 | 1 << 29);
        assert_eq!(p[2], 2 << 2);
        assert_eq!(p[3..7], [0x3456_7000, 0x12, 0x9000, 0]);
    }
}
