//! SDMA ring packets, decoded by the model's own code from
//! `sdma_v6_0_0_pkt_open.h` (the header both `sdma_v6_0.c` and
//! `sdma_v7_0.c` include) and, for SDMA 4.4.2 (`sdma_v4_4_2.c`),
//! `vega10_sdma_pkt_open.h`. Positions are written here as bit ranges of
//! dwords, independently of the runtime's encoders; each is a fact
//! checked against the header's `_offset`/`_mask`/`_shift` macros.

use super::Bits;
use barebell_facts::Fact;

const H: &str = "sdma_v6_0_0_pkt_open.h";

/// `SDMA_OP_*` the engine model knows.
pub const OP_NOP: u32 = 0;
pub const OP_COPY: u32 = 1;
pub const OP_WRITE: u32 = 2;
pub const OP_INDIRECT: u32 = 4;
pub const OP_SRBM_WRITE: u32 = 14;
/// `SDMA_OP_PTEPDE` with `SDMA_SUBOP_PTEPDE_GEN`: page-table entries
/// generated from a start value. No header struct describes the GEN
/// packet; its ten dwords are read as `sdma_v6_0_vm_set_pte_pde()` and
/// `sdma_v4_4_2_vm_set_pte_pde()` write them: destination, mask (the PTE
/// flags), start value, increment, 0, entries - 1.
pub const OP_PTEPDE: u32 = 12;
pub const SUB_PTEPDE_GEN: u32 = 0;
/// `SDMA_OP_GCR_REQ` (SDMA 6.0 and 7.0: `sdma_v6_0_ring_emit_mem_sync()`).
pub const OP_GCR_REQ: u32 = 17;
pub const OP_FENCE: u32 = 5;
/// `SDMA_OP_COND_EXE`: run the next `exec_count` dwords only if the
/// dword at the address equals the reference
/// (`sdma_v6_0_ring_init_cond_exec()`, `sdma_v4_4_2`'s likewise).
pub const OP_COND_EXE: u32 = 9;
pub const OP_TRAP: u32 = 6;
pub const OP_POLL_REGMEM: u32 = 8;
pub const OP_ATOMIC: u32 = 10;
pub const OP_CONST_FILL: u32 = 11;
pub const OP_TIMESTAMP: u32 = 13;
/// `SDMA_SUBOP_COPY_LINEAR`, `SDMA_SUBOP_TIMESTAMP_SET/GET/GET_GLOBAL`.
pub const SUB_COPY_LINEAR: u32 = 0;
/// `SDMA_SUBOP_WRITE_LINEAR`.
pub const SUB_WRITE_LINEAR: u32 = 0;
pub const SUB_TS_SET: u32 = 0;
pub const SUB_TS_GET: u32 = 1;
pub const SUB_TS_GET_GLOBAL: u32 = 2;

/// Header dword: opcode bits 7:0, sub-opcode 15:8 (every packet).
pub const OP: Bits = Bits::new(0, 8);
pub const SUB_OP: Bits = Bits::new(8, 8);
/// COPY_LINEAR header bit 19 (`cpv`, 7.0 sets it), dword 1 COUNT 29:0.
pub const COPY_CPV: Bits = Bits::new(19, 1);
pub const COPY_TMZ: Bits = Bits::new(18, 1);
pub const COUNT30: Bits = Bits::new(0, 30);
/// The same COUNTs on SDMA 4.4.2: 21:0 (`vega10_sdma_pkt_open.h`). The
/// bits above are not part of the field, so the engine model does not
/// read them.
pub const COUNT22: Bits = Bits::new(0, 22);
/// CONSTANT_FILL header `fillsize` 31:30.
pub const FILL_SIZE: Bits = Bits::new(30, 2);
/// TRAP dword 1 `int_context` 27:0.
pub const TRAP_CTX: Bits = Bits::new(0, 28);
/// POLL_REGMEM header `func` 30:28, `mem_poll` 31; dword 5 interval 15:0,
/// retry count 27:16.
pub const POLL_FUNC: Bits = Bits::new(28, 3);
pub const POLL_MEM: Bits = Bits::new(31, 1);
pub const POLL_INTERVAL: Bits = Bits::new(0, 16);
pub const POLL_RETRY: Bits = Bits::new(16, 12);
/// TIMESTAMP write address low dword: bits 31:3 of the address in 31:3.
pub const TS_ADDR_LO: Bits = Bits::new(3, 29);
/// ATOMIC header: `loop` 16, `atomic_op` 31:25; dword 7 loop interval 12:0.
pub const ATOMIC_LOOP: Bits = Bits::new(16, 1);
pub const ATOMIC_OP: Bits = Bits::new(25, 7);
/// NOP header COUNT 29:16.
pub const NOP_COUNT: Bits = Bits::new(16, 14);
/// POLL_REGMEM header `hdp_flush` 26: the engine writes the reference to
/// the second register (the flush request) before it polls the first.
pub const POLL_HDP_FLUSH: Bits = Bits::new(26, 1);
/// WRITE_UNTILED (WRITE_LINEAR) dword 3 COUNT 19:0: dwords less one
/// (`sdma_v4_4_2_vm_write_pte()` writes `ndw - 1`).
pub const WRITE_COUNT: Bits = Bits::new(0, 20);
/// COND_EXE dword 4 `exec_count` 13:0.
pub const COND_EXEC_COUNT: Bits = Bits::new(0, 14);
/// SRBM_WRITE header `byte_en` 31:28; dword 1 the register (dwords)
/// 17:0.
pub const SRBM_BYTE_EN: Bits = Bits::new(28, 4);
pub const SRBM_ADDR: Bits = Bits::new(0, 18);
/// INDIRECT header `vmid` 19:16; dword 3 `ib_size` 19:0 (dwords).
pub const INDIRECT_VMID: Bits = Bits::new(16, 4);
pub const INDIRECT_SIZE: Bits = Bits::new(0, 20);

const fn m(b: Bits) -> u64 {
    (1u64 << b.width) - 1
}

/// `name_offset`, `name_mask`, `name_shift` for a field in dword `dw`.
macro_rules! field3 {
    ($c:literal, $dw:expr, $b:expr) => {
        [
            Fact::constant(H, concat!($c, "_offset"), $dw),
            Fact::constant(H, concat!($c, "_mask"), m($b)),
            Fact::constant(H, concat!($c, "_shift"), $b.shift as u64),
        ]
    };
}

const FIELDS: [[Fact; 3]; 19] = [
    field3!("SDMA_PKT_COPY_LINEAR_HEADER_op", 0, OP),
    field3!("SDMA_PKT_COPY_LINEAR_HEADER_sub_op", 0, SUB_OP),
    field3!("SDMA_PKT_COPY_LINEAR_HEADER_cpv", 0, COPY_CPV),
    field3!("SDMA_PKT_COPY_LINEAR_COUNT_count", 1, COUNT30),
    field3!("SDMA_PKT_CONSTANT_FILL_HEADER_fillsize", 0, FILL_SIZE),
    field3!("SDMA_PKT_CONSTANT_FILL_COUNT_count", 4, COUNT30),
    field3!("SDMA_PKT_TRAP_INT_CONTEXT_int_context", 1, TRAP_CTX),
    field3!("SDMA_PKT_POLL_REGMEM_HEADER_func", 0, POLL_FUNC),
    field3!("SDMA_PKT_POLL_REGMEM_DW5_retry_count", 5, POLL_RETRY),
    field3!(
        "SDMA_PKT_TIMESTAMP_GET_GLOBAL_WRITE_ADDR_LO_write_addr_31_3",
        1,
        TS_ADDR_LO
    ),
    field3!("SDMA_PKT_ATOMIC_HEADER_atomic_op", 0, ATOMIC_OP),
    field3!("SDMA_PKT_NOP_HEADER_count", 0, NOP_COUNT),
    field3!("SDMA_PKT_POLL_REGMEM_HEADER_hdp_flush", 0, POLL_HDP_FLUSH),
    field3!("SDMA_PKT_WRITE_UNTILED_DW_3_count", 3, WRITE_COUNT),
    field3!("SDMA_PKT_INDIRECT_HEADER_vmid", 0, INDIRECT_VMID),
    field3!("SDMA_PKT_INDIRECT_IB_SIZE_ib_size", 3, INDIRECT_SIZE),
    field3!("SDMA_PKT_SRBM_WRITE_HEADER_byte_en", 0, SRBM_BYTE_EN),
    field3!("SDMA_PKT_SRBM_WRITE_ADDR_addr", 1, SRBM_ADDR),
    field3!(
        "SDMA_PKT_COND_EXE_EXEC_COUNT_exec_count",
        4,
        COND_EXEC_COUNT
    ),
];

const fn flatten() -> [Fact; 57] {
    let mut out = [Fact::constant("", "0", 0); 57];
    let mut i = 0;
    while i < 19 {
        let mut j = 0;
        while j < 3 {
            out[i * 3 + j] = FIELDS[i][j];
            j += 1;
        }
        i += 1;
    }
    out
}

const FIELD_FACTS: [Fact; 57] = flatten();

const OP_FACTS: [Fact; 22] = [
    Fact::constant(H, "SDMA_OP_NOP", OP_NOP as u64),
    Fact::constant(H, "SDMA_OP_COPY", OP_COPY as u64),
    Fact::constant(H, "SDMA_OP_WRITE", OP_WRITE as u64),
    Fact::constant(H, "SDMA_OP_INDIRECT", OP_INDIRECT as u64),
    Fact::constant(H, "SDMA_OP_SRBM_WRITE", OP_SRBM_WRITE as u64),
    Fact::constant(H, "SDMA_OP_GCR_REQ", OP_GCR_REQ as u64),
    Fact::constant(H, "SDMA_OP_COND_EXE", OP_COND_EXE as u64),
    Fact::constant(H, "SDMA_OP_PTEPDE", OP_PTEPDE as u64),
    Fact::constant(H, "SDMA_SUBOP_PTEPDE_GEN", SUB_PTEPDE_GEN as u64),
    Fact::constant(H, "SDMA_PKT_COND_EXE_REFERENCE_reference_offset", 3),
    // The GCR_REQ packet's last dword (so five in all).
    Fact::constant(H, "SDMA_PKT_GCR_REQ_PAYLOAD4_vmid_offset", 4),
    Fact::constant(H, "SDMA_SUBOP_WRITE_LINEAR", SUB_WRITE_LINEAR as u64),
    Fact::constant(H, "SDMA_OP_FENCE", OP_FENCE as u64),
    Fact::constant(H, "SDMA_OP_TRAP", OP_TRAP as u64),
    Fact::constant(H, "SDMA_OP_POLL_REGMEM", OP_POLL_REGMEM as u64),
    Fact::constant(H, "SDMA_OP_ATOMIC", OP_ATOMIC as u64),
    Fact::constant(H, "SDMA_OP_CONST_FILL", OP_CONST_FILL as u64),
    Fact::constant(H, "SDMA_OP_TIMESTAMP", OP_TIMESTAMP as u64),
    Fact::constant(H, "SDMA_SUBOP_COPY_LINEAR", SUB_COPY_LINEAR as u64),
    Fact::constant(H, "SDMA_SUBOP_TIMESTAMP_SET", SUB_TS_SET as u64),
    Fact::constant(H, "SDMA_SUBOP_TIMESTAMP_GET", SUB_TS_GET as u64),
    Fact::constant(
        H,
        "SDMA_SUBOP_TIMESTAMP_GET_GLOBAL",
        SUB_TS_GET_GLOBAL as u64,
    ),
];

/// The 4.4.2 header's COUNTs, and that its COPY_LINEAR keeps the 6.0
/// dword positions the decoder reads.
const H_VEGA10: &str = "vega10_sdma_pkt_open.h";
const VEGA10_FACTS: [Fact; 20] = [
    Fact::constant(
        H_VEGA10,
        "SDMA_PKT_COPY_LINEAR_COUNT_count_mask",
        m(COUNT22),
    ),
    Fact::constant(H_VEGA10, "SDMA_PKT_COPY_LINEAR_COUNT_count_offset", 1),
    Fact::constant(
        H_VEGA10,
        "SDMA_PKT_CONSTANT_FILL_COUNT_count_mask",
        m(COUNT22),
    ),
    Fact::constant(H_VEGA10, "SDMA_PKT_CONSTANT_FILL_COUNT_count_offset", 4),
    Fact::constant(
        H_VEGA10,
        "SDMA_PKT_COPY_LINEAR_SRC_ADDR_HI_src_addr_63_32_offset",
        4,
    ),
    Fact::constant(
        H_VEGA10,
        "SDMA_PKT_COPY_LINEAR_DST_ADDR_HI_dst_addr_63_32_offset",
        6,
    ),
    Fact::constant(H_VEGA10, "SDMA_PKT_FENCE_DATA_data_offset", 3),
    Fact::constant(H_VEGA10, "SDMA_OP_COPY", OP_COPY as u64),
    Fact::constant(H_VEGA10, "SDMA_OP_FENCE", OP_FENCE as u64),
    Fact::constant(H_VEGA10, "SDMA_OP_CONST_FILL", OP_CONST_FILL as u64),
    Fact::constant(H_VEGA10, "SDMA_OP_WRITE", OP_WRITE as u64),
    Fact::constant(H_VEGA10, "SDMA_OP_INDIRECT", OP_INDIRECT as u64),
    Fact::constant(H_VEGA10, "SDMA_OP_SRBM_WRITE", OP_SRBM_WRITE as u64),
    Fact::constant(H_VEGA10, "SDMA_OP_COND_EXE", OP_COND_EXE as u64),
    Fact::constant(
        H_VEGA10,
        "SDMA_PKT_COND_EXE_EXEC_COUNT_exec_count_mask",
        m(COND_EXEC_COUNT),
    ),
    Fact::constant(H_VEGA10, "SDMA_PKT_SRBM_WRITE_ADDR_addr_mask", m(SRBM_ADDR)),
    Fact::constant(
        H_VEGA10,
        "SDMA_PKT_WRITE_UNTILED_DW_3_count_mask",
        m(WRITE_COUNT),
    ),
    Fact::constant(
        H_VEGA10,
        "SDMA_PKT_INDIRECT_IB_SIZE_ib_size_mask",
        m(INDIRECT_SIZE),
    ),
    Fact::constant(
        H_VEGA10,
        "SDMA_PKT_INDIRECT_HEADER_vmid_shift",
        INDIRECT_VMID.shift as u64,
    ),
    Fact::constant(
        H_VEGA10,
        "SDMA_PKT_POLL_REGMEM_HEADER_hdp_flush_shift",
        POLL_HDP_FLUSH.shift as u64,
    ),
];

pub const FACTS: &[Fact] =
    barebell_facts::fact_table!(OP_FACTS, FIELD_FACTS, VEGA10_FACTS, mqd::FACTS);

/// The SDMA MQD (`struct v11_sdma_mqd`, `struct v12_sdma_mqd`): byte
/// offsets of what the MES model reads to map a queue onto the engine.
pub mod mqd {
    use barebell_facts::Fact;

    /// Byte offsets of one layout.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Layout {
        pub rb_cntl: usize,
        pub rb_base: usize,
        pub rb_base_hi: usize,
        pub rptr_addr_lo: usize,
        pub rptr_addr_hi: usize,
        pub doorbell_offset: usize,
        pub wptr_poll_lo: usize,
        pub wptr_poll_hi: usize,
    }

    pub const V11: Layout = Layout {
        rb_cntl: 0,
        rb_base: 4,
        rb_base_hi: 8,
        rptr_addr_hi: 28,
        rptr_addr_lo: 32,
        doorbell_offset: 76,
        wptr_poll_hi: 104,
        wptr_poll_lo: 108,
    };
    pub const V12: Layout = Layout {
        rb_cntl: 0,
        rb_base: 4,
        rb_base_hi: 8,
        rptr_addr_lo: 28,
        rptr_addr_hi: 32,
        doorbell_offset: 68,
        wptr_poll_lo: 96,
        wptr_poll_hi: 100,
    };
    /// Both structs are 512 bytes. (`struct v9_sdma_mqd`, SDMA 4.4.2, is
    /// decoded by [`crate::sdma_mqd_v9`].)
    pub const BYTES: usize = 512;

    macro_rules! facts {
        ($h:literal, $t:literal, $l:expr) => {
            [
                Fact::size($h, $t, BYTES),
                Fact::offset($h, $t, "sdmax_rlcx_rb_cntl", $l.rb_cntl),
                Fact::offset($h, $t, "sdmax_rlcx_rb_base", $l.rb_base),
                Fact::offset($h, $t, "sdmax_rlcx_rb_base_hi", $l.rb_base_hi),
                Fact::offset($h, $t, "sdmax_rlcx_rb_rptr_addr_lo", $l.rptr_addr_lo),
                Fact::offset($h, $t, "sdmax_rlcx_rb_rptr_addr_hi", $l.rptr_addr_hi),
                Fact::offset($h, $t, "sdmax_rlcx_doorbell_offset", $l.doorbell_offset),
                Fact::offset($h, $t, "sdmax_rlcx_rb_wptr_poll_addr_lo", $l.wptr_poll_lo),
                Fact::offset($h, $t, "sdmax_rlcx_rb_wptr_poll_addr_hi", $l.wptr_poll_hi),
            ]
        };
    }
    const F11: [Fact; 9] = facts!("v11_structs.h", "struct v11_sdma_mqd", V11);
    const F12: [Fact; 9] = facts!("v12_structs.h", "struct v12_sdma_mqd", V12);
    pub const FACTS: [Fact; 18] = {
        let mut out = [Fact::constant("", "0", 0); 18];
        let mut i = 0;
        while i < 9 {
            out[i] = F11[i];
            out[9 + i] = F12[i];
            i += 1;
        }
        out
    };

    /// `SDMA0_QUEUE0_DOORBELL_OFFSET.OFFSET` (bits 27:2, GC 11 and 12).
    pub const DOORBELL_OFFSET: super::Bits = super::Bits::new(2, 26);

    fn dword(m: &[u8], at: usize) -> u32 {
        m.get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes)
    }

    /// The queue an MQD describes: ring VA (`RB_BASE` << 8), `RB_CNTL`,
    /// read-pointer write-back and write-pointer poll addresses, doorbell
    /// dword.
    pub fn decode(l: &Layout, m: &[u8]) -> (u64, u32, u64, u64, u32) {
        let q = |lo: usize, hi: usize| u64::from(dword(m, hi)) << 32 | u64::from(dword(m, lo));
        (
            q(l.rb_base, l.rb_base_hi) << 8,
            dword(m, l.rb_cntl),
            q(l.rptr_addr_lo, l.rptr_addr_hi),
            q(l.wptr_poll_lo, l.wptr_poll_hi),
            DOORBELL_OFFSET.get(dword(m, l.doorbell_offset)),
        )
    }
}

/// Engine generation, for the packets whose length differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaGen {
    /// 6.0: COPY_LINEAR is 7 dwords (`copy_num_dw = 7`).
    V6,
    /// 7.0: COPY_LINEAR is 8 dwords when its header sets `cpv`
    /// (`sdma_v7_0_emit_copy_buffer()` sets `CPV(1)` and writes the DCC
    /// dword, `copy_num_dw = 8`) and 7 without it: tinygrad's
    /// `AMDCopyQueue.copy` sends the 6.0 packet (no `cpv`, 7 dwords) to
    /// SDMA 7.0 (`import_module('sdma', min(version, (6, 0, 0)))`) and
    /// copies on gfx1201 silicon with it.
    V7,
    /// 4.4.2, and 4.4.0 (both build their packets from
    /// `vega10_sdma_pkt_open.h`): COPY_LINEAR is 7 dwords
    /// (`sdma_v4_4_2_buffer_funcs`, `sdma_v4_0_buffer_funcs`,
    /// `copy_num_dw = 7`); COPY_LINEAR and CONSTANT_FILL counts are 22
    /// bits ([`COUNT22`]).
    V4_4_2,
}

impl SdmaGen {
    /// The COUNT field of COPY_LINEAR and CONSTANT_FILL.
    pub fn count(self) -> Bits {
        match self {
            SdmaGen::V6 | SdmaGen::V7 => COUNT30,
            SdmaGen::V4_4_2 => COUNT22,
        }
    }
}

/// One decoded packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaPacket {
    Nop {
        /// Payload dwords skipped after the header.
        count: u32,
    },
    CopyLinear {
        bytes: u64,
        src: u64,
        dst: u64,
        tmz: bool,
    },
    ConstantFill {
        dst: u64,
        data: u32,
        bytes: u64,
        fill_size: u32,
    },
    Fence {
        addr: u64,
        data: u32,
    },
    Trap {
        context: u32,
    },
    /// WRITE_LINEAR: `dwords` dwords of packet data (from dword 4) to
    /// `dst`.
    WriteLinear {
        dst: u64,
        dwords: u32,
    },
    /// SRBM_WRITE: `data` to register `reg` (dwords), bytes `byte_en`.
    SrbmWrite {
        reg: u32,
        data: u32,
        byte_en: u32,
    },
    /// GCR_REQ: a cache rinse over a VA range (SDMA 6.0+).
    GcrReq,
    /// PTEPDE GEN: `count` 64-bit entries at `pe`, entry `i` being
    /// `(value + i * incr) | flags`.
    PtePdeGen {
        pe: u64,
        flags: u64,
        value: u64,
        incr: u32,
        count: u64,
    },
    /// COND_EXE: the next `count` dwords run only if the dword at `addr`
    /// equals `reference`.
    CondExe {
        addr: u64,
        reference: u32,
        count: u32,
    },
    /// INDIRECT: run `size` dwords of packets at `base` in `vmid`.
    Indirect {
        vmid: u32,
        base: u64,
        size: u32,
    },
    PollRegmem {
        mem: bool,
        /// `hdp_flush`: on a register poll, write the reference to the
        /// request register (dword 2) first.
        hdp_flush: bool,
        func: u32,
        addr: u64,
        value: u32,
        mask: u32,
        interval: u32,
        retry: u32,
    },
    Timestamp {
        sub_op: u32,
        addr: u64,
    },
    Atomic {
        op: u32,
        looped: bool,
        addr: u64,
        src: u64,
        cmp: u64,
    },
    /// An opcode/sub-opcode pair the model does not decode.
    Unknown {
        op: u32,
        sub_op: u32,
    },
}

/// Why a packet could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer dwords available than the packet needs.
    Short { need: usize },
}

fn q(lo: u32, hi: u32) -> u64 {
    u64::from(hi) << 32 | u64::from(lo)
}

impl SdmaPacket {
    /// Dwords a packet with header `h` occupies (`None` for unknown); for
    /// WRITE_LINEAR, whose data follows, the dwords up to its count (the
    /// whole length is [`SdmaPacket::decode`]'s).
    pub fn len(sdma: SdmaGen, h: u32) -> Option<usize> {
        Some(match (OP.get(h), SUB_OP.get(h)) {
            (OP_NOP, _) => 1 + NOP_COUNT.get(h) as usize,
            (OP_COPY, SUB_COPY_LINEAR) => match sdma {
                SdmaGen::V6 | SdmaGen::V4_4_2 => 7,
                SdmaGen::V7 if COPY_CPV.get(h) != 0 => 8,
                SdmaGen::V7 => 7,
            },
            (OP_CONST_FILL, _) => 5,
            // Header, address, count, then the data; the count is read
            // from dword 3, so the header alone does not give the length:
            // see [`SdmaPacket::len_with`].
            (OP_WRITE, SUB_WRITE_LINEAR) => 4,
            (OP_INDIRECT, _) => 6,
            (OP_SRBM_WRITE, _) => 3,
            (OP_COND_EXE, _) => 5,
            (OP_PTEPDE, SUB_PTEPDE_GEN) => 10,
            (OP_GCR_REQ, _) if sdma != SdmaGen::V4_4_2 => 5,
            (OP_FENCE, _) => 4,
            (OP_TRAP, _) => 2,
            (OP_POLL_REGMEM, _) => 6,
            (OP_TIMESTAMP, SUB_TS_GET | SUB_TS_GET_GLOBAL) => 3,
            (OP_ATOMIC, _) => 8,
            _ => return None,
        })
    }

    /// Decodes the packet at the start of `d`.
    pub fn decode(sdma: SdmaGen, d: &[u32]) -> Result<(SdmaPacket, usize), DecodeError> {
        let h = d.first().copied().ok_or(DecodeError::Short { need: 1 })?;
        let (op, sub_op) = (OP.get(h), SUB_OP.get(h));
        let Some(n) = Self::len(sdma, h) else {
            return Ok((SdmaPacket::Unknown { op, sub_op }, 1));
        };
        // A NOP's payload is skipped unread: only its header is needed.
        let need = if op == OP_NOP { 1 } else { n };
        if d.len() < need {
            return Err(DecodeError::Short { need });
        }
        let w = |i: usize| d.get(i).copied().unwrap_or(0);
        let p = match op {
            OP_NOP => SdmaPacket::Nop {
                count: NOP_COUNT.get(h),
            },
            OP_COPY => SdmaPacket::CopyLinear {
                bytes: u64::from(sdma.count().get(w(1))) + 1,
                src: q(w(3), w(4)),
                dst: q(w(5), w(6)),
                tmz: COPY_TMZ.get(h) != 0,
            },
            OP_CONST_FILL => SdmaPacket::ConstantFill {
                dst: q(w(1), w(2)),
                data: w(3),
                bytes: u64::from(sdma.count().get(w(4))) + 1,
                fill_size: FILL_SIZE.get(h),
            },
            OP_FENCE => SdmaPacket::Fence {
                addr: q(w(1), w(2)),
                data: w(3),
            },
            OP_TRAP => SdmaPacket::Trap {
                context: TRAP_CTX.get(w(1)),
            },
            OP_WRITE => SdmaPacket::WriteLinear {
                dst: q(w(1), w(2)),
                dwords: WRITE_COUNT.get(w(3)) + 1,
            },
            OP_GCR_REQ => SdmaPacket::GcrReq,
            OP_PTEPDE => SdmaPacket::PtePdeGen {
                pe: q(w(1), w(2)),
                flags: q(w(3), w(4)),
                value: q(w(5), w(6)),
                incr: w(7),
                count: u64::from(w(9)) + 1,
            },
            OP_COND_EXE => SdmaPacket::CondExe {
                addr: q(w(1), w(2)),
                reference: w(3),
                count: COND_EXEC_COUNT.get(w(4)),
            },
            OP_SRBM_WRITE => SdmaPacket::SrbmWrite {
                reg: SRBM_ADDR.get(w(1)),
                data: w(2),
                byte_en: SRBM_BYTE_EN.get(h),
            },
            OP_INDIRECT => SdmaPacket::Indirect {
                vmid: INDIRECT_VMID.get(h),
                base: q(w(1), w(2)),
                size: INDIRECT_SIZE.get(w(3)),
            },
            OP_POLL_REGMEM => SdmaPacket::PollRegmem {
                mem: POLL_MEM.get(h) != 0,
                hdp_flush: POLL_HDP_FLUSH.get(h) != 0,
                func: POLL_FUNC.get(h),
                addr: q(w(1), w(2)),
                value: w(3),
                mask: w(4),
                interval: POLL_INTERVAL.get(w(5)),
                retry: POLL_RETRY.get(w(5)),
            },
            OP_TIMESTAMP => SdmaPacket::Timestamp {
                sub_op,
                addr: u64::from(TS_ADDR_LO.get(w(1))) << 3 | u64::from(w(2)) << 32,
            },
            OP_ATOMIC => SdmaPacket::Atomic {
                op: ATOMIC_OP.get(h),
                looped: ATOMIC_LOOP.get(h) != 0,
                addr: q(w(1), w(2)),
                src: q(w(3), w(4)),
                cmp: q(w(5), w(6)),
            },
            _ => SdmaPacket::Unknown { op, sub_op },
        };
        let n = match p {
            SdmaPacket::WriteLinear { dwords, .. } => n + dwords as usize,
            _ => n,
        };
        Ok((p, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_linux_style_copy_and_fence() {
        // sdma_v6_0_emit_copy_buffer() for 8 KiB from 0x1_0000_0000 to
        // 0x2000, then sdma_v6_0_ring_emit_fence() (MTYPE 3) of 9 at 0x40.
        let ring = [0x1, 0x1fff, 0, 0, 1, 0x2000, 0, 5 | 3 << 16, 0x40, 0, 9];
        let (p, n) = SdmaPacket::decode(SdmaGen::V6, &ring).unwrap();
        assert_eq!(n, 7);
        assert_eq!(
            p,
            SdmaPacket::CopyLinear {
                bytes: 0x2000,
                src: 1 << 32,
                dst: 0x2000,
                tmz: false
            }
        );
        let (p, n) = SdmaPacket::decode(SdmaGen::V6, &ring[7..]).unwrap();
        assert_eq!(
            (p, n),
            (
                SdmaPacket::Fence {
                    addr: 0x40,
                    data: 9
                },
                4
            )
        );
        assert_eq!(SdmaPacket::len(SdmaGen::V7, 0x1 | 1 << 19), Some(8));
    }

    /// SDMA 7.0: the DCC dword follows a COPY_LINEAR only when its header
    /// sets `cpv` (Linux always does, `sdma_v7_0_emit_copy_buffer()`);
    /// tinygrad's `AMDCopyQueue.copy` (the 6.0 packet, no `cpv`) is 7
    /// dwords, and the FENCE after it is taken as a FENCE, not as the
    /// copy's eighth dword (before: the engine read the fence's address
    /// as the next header and stopped).
    #[test]
    fn a_7_0_copy_without_cpv_is_7_dwords() {
        let ring = [0x1, 0xfff, 0, 0x1000, 0, 0x2000, 0, 5, 0x40, 0, 9];
        let (_, n) = SdmaPacket::decode(SdmaGen::V7, &ring).unwrap();
        assert_eq!(n, 7);
        let (p, n) = SdmaPacket::decode(SdmaGen::V7, &ring[7..]).unwrap();
        assert_eq!(
            (p, n),
            (
                SdmaPacket::Fence {
                    addr: 0x40,
                    data: 9
                },
                4
            )
        );
        assert_eq!(SdmaPacket::len(SdmaGen::V7, 0x1), Some(7));
    }

    /// `sdma_v4_4_2_ring_test_ring()`: WRITE_LINEAR of one dword (COUNT 0)
    /// is five dwords; `sdma_v4_4_2_ring_emit_ib()`: INDIRECT is six, its
    /// VMID in header bits 19:16.
    #[test]
    fn write_linear_and_indirect_as_linux_emits_them() {
        let ring = [0x2, 0x1000, 0x1, 0, 0xdead_beef];
        let (p, n) = SdmaPacket::decode(SdmaGen::V4_4_2, &ring).unwrap();
        assert_eq!(
            (p, n),
            (
                SdmaPacket::WriteLinear {
                    dst: 0x1_0000_1000,
                    dwords: 1
                },
                5
            )
        );
        let three = [0x2, 0x40, 0, 2, 1, 2, 3];
        assert_eq!(SdmaPacket::decode(SdmaGen::V6, &three).unwrap().1, 7);
        let ib = [0x4 | 3 << 16, 0x2000, 0, 8, 0, 0];
        let (p, n) = SdmaPacket::decode(SdmaGen::V6, &ib).unwrap();
        assert_eq!(
            (p, n),
            (
                SdmaPacket::Indirect {
                    vmid: 3,
                    base: 0x2000,
                    size: 8
                },
                6
            )
        );
    }

    /// `sdma_v6_0_vm_set_pte_pde()` for 3 entries of 4 KiB from
    /// 0x8000_0000 with flags 0x71 at 0x1000: ten dwords.
    #[test]
    fn ptepde_gen_as_linux_emits_it() {
        let ring = [12, 0x1000, 0, 0x71, 0, 0x8000_0000, 0, 0x1000, 0, 2];
        let (p, n) = SdmaPacket::decode(SdmaGen::V6, &ring).unwrap();
        assert_eq!(n, 10);
        assert_eq!(
            p,
            SdmaPacket::PtePdeGen {
                pe: 0x1000,
                flags: 0x71,
                value: 0x8000_0000,
                incr: 0x1000,
                count: 3
            }
        );
    }

    #[test]
    fn a_4_4_2_count_is_22_bits() {
        // sdma_v4_4_2_emit_copy_buffer() of 4 MiB (COUNT 0x3fffff); a
        // count dword with bit 22 set as well names the same 4 MiB on
        // 4.4.2 (the bit is outside the field) and 8 MiB on 6.0.
        let ring = [0x1, 0x7f_ffff, 0, 0, 0, 0, 0];
        let (p, n) = SdmaPacket::decode(SdmaGen::V4_4_2, &ring).unwrap();
        assert_eq!(n, 7);
        assert!(matches!(
            p,
            SdmaPacket::CopyLinear {
                bytes: 0x40_0000,
                ..
            }
        ));
        let (p, _) = SdmaPacket::decode(SdmaGen::V6, &ring).unwrap();
        assert!(matches!(
            p,
            SdmaPacket::CopyLinear {
                bytes: 0x80_0000,
                ..
            }
        ));
        // sdma_v4_4_2_emit_fill_buffer(): five dwords, COUNT in dword 4.
        let fill = [11, 0x40, 0x3, 0xdead_beef, 63];
        let (p, n) = SdmaPacket::decode(SdmaGen::V4_4_2, &fill).unwrap();
        assert_eq!(n, 5);
        assert!(matches!(
            p,
            SdmaPacket::ConstantFill {
                bytes: 64,
                dst: 0x3_0000_0040,
                ..
            }
        ));
    }
}
