//! SDMA packet encoders, from `sdma_v6_0_0_pkt_open.h` (Linux 6.12). The
//! SDMA 7.0 driver (`sdma_v7_0.c`) includes the same header, so one table
//! serves both engines; where 7.0 emits a packet differently (COPY_LINEAR's
//! `CPV` bit and its eighth dword, `sdma_v7_0_emit_copy_buffer()`), the
//! encoder takes the version.
//!
//! SDMA 4.4.2 (`sdma_v4_4_2.c`) includes `vega10_sdma_pkt_open.h`
//! instead. Every field used here sits at the same place in it, with two
//! differences ([`VEGA10_FIELD_FACTS`]): COPY_LINEAR's and CONSTANT_FILL's
//! COUNT are 22 bits wide, not 30, and FENCE has no `mtype` (Linux writes
//! the bare opcode, `sdma_v4_4_2_ring_emit_fence()`), nor COPY_LINEAR a
//! `cpv`.
//!
//! Every opcode, sub-opcode and field position used here is a conformance
//! fact: each [`Field`] is three (`_offset`, `_mask`, `_shift`).

use super::SdmaVersion;
use barebell_facts::Fact;

/// The header every fact here is checked against.
pub const HEADER: &str = "sdma_v6_0_0_pkt_open.h";

/// One packet field: the dword it lives in, its mask (before shifting)
/// and its shift, as the header's `_offset`, `_mask`, `_shift` give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub dw: usize,
    pub mask: u32,
    pub shift: u32,
}

impl Field {
    /// `v` placed in the field (bits beyond the mask dropped, as the
    /// header's macros do).
    pub const fn put(self, v: u32) -> u32 {
        (v & self.mask) << self.shift
    }
}

macro_rules! fields {
    ($facts:ident; $($name:ident = $c:literal: $dw:literal, $mask:literal, $shift:literal;)*) => {
        $(
            #[doc = concat!("`", $c, "`.")]
            pub const $name: Field = Field { dw: $dw, mask: $mask, shift: $shift };
        )*
        /// Each field's dword, mask and shift, against the header.
        pub const $facts: &[Fact] = &[
            $(
                Fact::constant(HEADER, concat!($c, "_offset"), $dw),
                Fact::constant(HEADER, concat!($c, "_mask"), $mask),
                Fact::constant(HEADER, concat!($c, "_shift"), $shift),
            )*
        ];
    };
}

/// Opcodes (`SDMA_OP_*`) and sub-opcodes (`SDMA_SUBOP_*`).
pub mod op {
    pub const NOP: u32 = 0;
    pub const COPY: u32 = 1;
    pub const FENCE: u32 = 5;
    pub const TRAP: u32 = 6;
    pub const POLL_REGMEM: u32 = 8;
    pub const ATOMIC: u32 = 10;
    pub const CONST_FILL: u32 = 11;
    pub const TIMESTAMP: u32 = 13;
    pub const SUB_COPY_LINEAR: u32 = 0;
    pub const SUB_TIMESTAMP_SET: u32 = 0;
    pub const SUB_TIMESTAMP_GET: u32 = 1;
    pub const SUB_TIMESTAMP_GET_GLOBAL: u32 = 2;
}

pub const OP_FACTS: &[Fact] = &[
    Fact::constant(HEADER, "SDMA_OP_NOP", op::NOP as u64),
    Fact::constant(HEADER, "SDMA_OP_COPY", op::COPY as u64),
    Fact::constant(HEADER, "SDMA_OP_FENCE", op::FENCE as u64),
    Fact::constant(HEADER, "SDMA_OP_TRAP", op::TRAP as u64),
    Fact::constant(HEADER, "SDMA_OP_POLL_REGMEM", op::POLL_REGMEM as u64),
    Fact::constant(HEADER, "SDMA_OP_ATOMIC", op::ATOMIC as u64),
    Fact::constant(HEADER, "SDMA_OP_CONST_FILL", op::CONST_FILL as u64),
    Fact::constant(HEADER, "SDMA_OP_TIMESTAMP", op::TIMESTAMP as u64),
    Fact::constant(HEADER, "SDMA_SUBOP_COPY_LINEAR", op::SUB_COPY_LINEAR as u64),
    Fact::constant(
        HEADER,
        "SDMA_SUBOP_TIMESTAMP_SET",
        op::SUB_TIMESTAMP_SET as u64,
    ),
    Fact::constant(
        HEADER,
        "SDMA_SUBOP_TIMESTAMP_GET",
        op::SUB_TIMESTAMP_GET as u64,
    ),
    Fact::constant(
        HEADER,
        "SDMA_SUBOP_TIMESTAMP_GET_GLOBAL",
        op::SUB_TIMESTAMP_GET_GLOBAL as u64,
    ),
];

fields! { FIELD_FACTS;
    HEADER_OP = "SDMA_PKT_COPY_LINEAR_HEADER_op": 0, 0xFF, 0;
    HEADER_SUB_OP = "SDMA_PKT_COPY_LINEAR_HEADER_sub_op": 0, 0xFF, 8;
    COPY_TMZ = "SDMA_PKT_COPY_LINEAR_HEADER_tmz": 0, 0x1, 18;
    COPY_CPV = "SDMA_PKT_COPY_LINEAR_HEADER_cpv": 0, 0x1, 19;
    COPY_COUNT = "SDMA_PKT_COPY_LINEAR_COUNT_count": 1, 0x3FFF_FFFF, 0;
    COPY_SRC_LO = "SDMA_PKT_COPY_LINEAR_SRC_ADDR_LO_src_addr_31_0": 3, 0xFFFF_FFFF, 0;
    COPY_SRC_HI = "SDMA_PKT_COPY_LINEAR_SRC_ADDR_HI_src_addr_63_32": 4, 0xFFFF_FFFF, 0;
    COPY_DST_LO = "SDMA_PKT_COPY_LINEAR_DST_ADDR_LO_dst_addr_31_0": 5, 0xFFFF_FFFF, 0;
    COPY_DST_HI = "SDMA_PKT_COPY_LINEAR_DST_ADDR_HI_dst_addr_63_32": 6, 0xFFFF_FFFF, 0;
    FILL_OP = "SDMA_PKT_CONSTANT_FILL_HEADER_op": 0, 0xFF, 0;
    FILL_SIZE = "SDMA_PKT_CONSTANT_FILL_HEADER_fillsize": 0, 0x3, 30;
    FILL_DST_LO = "SDMA_PKT_CONSTANT_FILL_DST_ADDR_LO_dst_addr_31_0": 1, 0xFFFF_FFFF, 0;
    FILL_DST_HI = "SDMA_PKT_CONSTANT_FILL_DST_ADDR_HI_dst_addr_63_32": 2, 0xFFFF_FFFF, 0;
    FILL_DATA = "SDMA_PKT_CONSTANT_FILL_DATA_src_data_31_0": 3, 0xFFFF_FFFF, 0;
    FILL_COUNT = "SDMA_PKT_CONSTANT_FILL_COUNT_count": 4, 0x3FFF_FFFF, 0;
    FENCE_OP = "SDMA_PKT_FENCE_HEADER_op": 0, 0xFF, 0;
    FENCE_MTYPE = "SDMA_PKT_FENCE_HEADER_mtype": 0, 0x7, 16;
    FENCE_ADDR_LO = "SDMA_PKT_FENCE_ADDR_LO_addr_31_0": 1, 0xFFFF_FFFF, 0;
    FENCE_ADDR_HI = "SDMA_PKT_FENCE_ADDR_HI_addr_63_32": 2, 0xFFFF_FFFF, 0;
    FENCE_DATA = "SDMA_PKT_FENCE_DATA_data": 3, 0xFFFF_FFFF, 0;
    TRAP_OP = "SDMA_PKT_TRAP_HEADER_op": 0, 0xFF, 0;
    TRAP_INT_CONTEXT = "SDMA_PKT_TRAP_INT_CONTEXT_int_context": 1, 0x0FFF_FFFF, 0;
    POLL_OP = "SDMA_PKT_POLL_REGMEM_HEADER_op": 0, 0xFF, 0;
    POLL_HDP_FLUSH = "SDMA_PKT_POLL_REGMEM_HEADER_hdp_flush": 0, 0x1, 26;
    POLL_FUNC = "SDMA_PKT_POLL_REGMEM_HEADER_func": 0, 0x7, 28;
    POLL_MEM = "SDMA_PKT_POLL_REGMEM_HEADER_mem_poll": 0, 0x1, 31;
    POLL_ADDR_LO = "SDMA_PKT_POLL_REGMEM_ADDR_LO_addr_31_0": 1, 0xFFFF_FFFF, 0;
    POLL_ADDR_HI = "SDMA_PKT_POLL_REGMEM_ADDR_HI_addr_63_32": 2, 0xFFFF_FFFF, 0;
    POLL_VALUE = "SDMA_PKT_POLL_REGMEM_VALUE_value": 3, 0xFFFF_FFFF, 0;
    POLL_MASK = "SDMA_PKT_POLL_REGMEM_MASK_mask": 4, 0xFFFF_FFFF, 0;
    POLL_INTERVAL = "SDMA_PKT_POLL_REGMEM_DW5_interval": 5, 0xFFFF, 0;
    POLL_RETRY = "SDMA_PKT_POLL_REGMEM_DW5_retry_count": 5, 0xFFF, 16;
    TS_OP = "SDMA_PKT_TIMESTAMP_GET_GLOBAL_HEADER_op": 0, 0xFF, 0;
    TS_SUB_OP = "SDMA_PKT_TIMESTAMP_GET_GLOBAL_HEADER_sub_op": 0, 0xFF, 8;
    TS_ADDR_LO = "SDMA_PKT_TIMESTAMP_GET_GLOBAL_WRITE_ADDR_LO_write_addr_31_3": 1, 0x1FFF_FFFF, 3;
    TS_ADDR_HI = "SDMA_PKT_TIMESTAMP_GET_GLOBAL_WRITE_ADDR_HI_write_addr_63_32": 2, 0xFFFF_FFFF, 0;
    ATOMIC_OP = "SDMA_PKT_ATOMIC_HEADER_op": 0, 0xFF, 0;
    ATOMIC_LOOP = "SDMA_PKT_ATOMIC_HEADER_loop": 0, 0x1, 16;
    ATOMIC_ATOMIC_OP = "SDMA_PKT_ATOMIC_HEADER_atomic_op": 0, 0x7F, 25;
    ATOMIC_ADDR_LO = "SDMA_PKT_ATOMIC_ADDR_LO_addr_31_0": 1, 0xFFFF_FFFF, 0;
    ATOMIC_ADDR_HI = "SDMA_PKT_ATOMIC_ADDR_HI_addr_63_32": 2, 0xFFFF_FFFF, 0;
    ATOMIC_SRC_LO = "SDMA_PKT_ATOMIC_SRC_DATA_LO_src_data_31_0": 3, 0xFFFF_FFFF, 0;
    ATOMIC_SRC_HI = "SDMA_PKT_ATOMIC_SRC_DATA_HI_src_data_63_32": 4, 0xFFFF_FFFF, 0;
    ATOMIC_CMP_LO = "SDMA_PKT_ATOMIC_CMP_DATA_LO_cmp_data_31_0": 5, 0xFFFF_FFFF, 0;
    ATOMIC_CMP_HI = "SDMA_PKT_ATOMIC_CMP_DATA_HI_cmp_data_63_32": 6, 0xFFFF_FFFF, 0;
    ATOMIC_LOOP_INTERVAL = "SDMA_PKT_ATOMIC_LOOP_INTERVAL_loop_interval": 7, 0x1FFF, 0;
    NOP_OP = "SDMA_PKT_NOP_HEADER_op": 0, 0xFF, 0;
    NOP_COUNT = "SDMA_PKT_NOP_HEADER_count": 0, 0x3FFF, 16;
}

/// The header the SDMA 4.4.2 facts are checked against.
pub const VEGA10_HEADER: &str = "vega10_sdma_pkt_open.h";

/// COUNT of COPY_LINEAR and CONSTANT_FILL on SDMA 4.4.2: bits 21:0 of its
/// dword (`vega10_sdma_pkt_open.h`).
pub const COUNT_MASK_V4_4_2: u32 = 0x003F_FFFF;

/// The 4.4.2 header's view of the fields the encoders use: the same
/// dwords and shifts as [`FIELD_FACTS`], the narrower COUNTs, and the
/// opcodes. (No `cpv` and no fence `mtype`: the encoders leave those bits
/// 0 on 4.4.2.)
pub const VEGA10_FIELD_FACTS: &[Fact] = &[
    Fact::constant(VEGA10_HEADER, "SDMA_OP_NOP", op::NOP as u64),
    Fact::constant(VEGA10_HEADER, "SDMA_OP_COPY", op::COPY as u64),
    Fact::constant(VEGA10_HEADER, "SDMA_OP_FENCE", op::FENCE as u64),
    Fact::constant(VEGA10_HEADER, "SDMA_OP_TRAP", op::TRAP as u64),
    Fact::constant(VEGA10_HEADER, "SDMA_OP_POLL_REGMEM", op::POLL_REGMEM as u64),
    Fact::constant(VEGA10_HEADER, "SDMA_OP_ATOMIC", op::ATOMIC as u64),
    Fact::constant(VEGA10_HEADER, "SDMA_OP_CONST_FILL", op::CONST_FILL as u64),
    Fact::constant(VEGA10_HEADER, "SDMA_OP_TIMESTAMP", op::TIMESTAMP as u64),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_SUBOP_TIMESTAMP_GET_GLOBAL",
        op::SUB_TIMESTAMP_GET_GLOBAL as u64,
    ),
    Fact::constant(VEGA10_HEADER, "SDMA_PKT_COPY_LINEAR_COUNT_count_offset", 1),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_COPY_LINEAR_COUNT_count_mask",
        COUNT_MASK_V4_4_2 as u64,
    ),
    Fact::constant(VEGA10_HEADER, "SDMA_PKT_COPY_LINEAR_COUNT_count_shift", 0),
    Fact::constant(VEGA10_HEADER, "SDMA_PKT_COPY_LINEAR_HEADER_tmz_shift", 18),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_COPY_LINEAR_SRC_ADDR_LO_src_addr_31_0_offset",
        3,
    ),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_COPY_LINEAR_DST_ADDR_LO_dst_addr_31_0_offset",
        5,
    ),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_CONSTANT_FILL_COUNT_count_offset",
        4,
    ),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_CONSTANT_FILL_COUNT_count_mask",
        COUNT_MASK_V4_4_2 as u64,
    ),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_CONSTANT_FILL_DATA_src_data_31_0_offset",
        3,
    ),
    Fact::constant(VEGA10_HEADER, "SDMA_PKT_FENCE_ADDR_LO_addr_31_0_offset", 1),
    Fact::constant(VEGA10_HEADER, "SDMA_PKT_FENCE_DATA_data_offset", 3),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_TRAP_INT_CONTEXT_int_context_mask",
        0x0FFF_FFFF,
    ),
    Fact::constant(VEGA10_HEADER, "SDMA_PKT_POLL_REGMEM_HEADER_func_shift", 28),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_POLL_REGMEM_HEADER_mem_poll_shift",
        31,
    ),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_POLL_REGMEM_DW5_retry_count_shift",
        16,
    ),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_TIMESTAMP_GET_GLOBAL_WRITE_ADDR_LO_write_addr_31_3_shift",
        3,
    ),
    Fact::constant(VEGA10_HEADER, "SDMA_PKT_ATOMIC_HEADER_atomic_op_shift", 25),
    Fact::constant(
        VEGA10_HEADER,
        "SDMA_PKT_ATOMIC_LOOP_INTERVAL_loop_interval_offset",
        7,
    ),
    Fact::constant(VEGA10_HEADER, "SDMA_PKT_NOP_HEADER_count_mask", 0x3FFF),
    Fact::constant(VEGA10_HEADER, "SDMA_PKT_NOP_HEADER_count_shift", 16),
];

/// Bytes one COPY_LINEAR or CONSTANT_FILL moves at most, as the drivers
/// split them: `copy_max_bytes` and `fill_max_bytes` = 0x400000 in
/// `sdma_v6_0_buffer_funcs`, `sdma_v7_0_buffer_funcs` and
/// `sdma_v4_4_2_buffer_funcs` (the `.c` files, not a header, so not a
/// conformance fact; the COUNT field itself is 30 bits wide on 6.0/7.0,
/// [`COPY_COUNT`], and 22 on 4.4.2, [`COUNT_MASK_V4_4_2`], which holds
/// exactly `0x400000 - 1`).
pub const COPY_MAX_BYTES: u32 = 0x40_0000;

/// Longest packet any encoder here writes, in dwords (ATOMIC).
pub const MAX_PACKET_DWORDS: usize = 8;

/// One encoded packet: up to [`MAX_PACKET_DWORDS`] dwords, on the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    dw: [u32; MAX_PACKET_DWORDS],
    len: usize,
}

impl Packet {
    fn new(len: usize) -> Self {
        Packet {
            dw: [0; MAX_PACKET_DWORDS],
            len,
        }
    }

    fn set(mut self, f: Field, v: u32) -> Self {
        if let Some(d) = self.dw.get_mut(f.dw) {
            *d |= f.put(v);
        }
        self
    }

    /// The dwords, in ring order.
    pub fn dwords(&self) -> &[u32] {
        &self.dw[..self.len]
    }

    /// COPY_LINEAR of `bytes` (1..=[`COPY_MAX_BYTES`], not checked here:
    /// [`super::queue`] splits) from `src` to `dst`, as
    /// `sdma_v6_0_emit_copy_buffer()` (7 dwords) and
    /// `sdma_v7_0_emit_copy_buffer()` (8: `CPV` set and a last dword of 0
    /// for an uncompressed copy) write it. COUNT holds `bytes - 1`.
    ///
    /// On 4.4.2 (`sdma_v4_4_2_emit_copy_buffer()`, 7 dwords) COUNT is 22
    /// bits: a count that does not fit is cut to its low bits, as the
    /// header's macro would cut it, so callers split at
    /// [`COPY_MAX_BYTES`] first.
    pub fn copy_linear(v: SdmaVersion, src: u64, dst: u64, bytes: u32) -> Self {
        let (len, cpv, count_mask) = match v {
            SdmaVersion::V6_0 => (7, 0, u32::MAX),
            SdmaVersion::V7_0 => (8, 1, u32::MAX),
            SdmaVersion::V4_4_2 | SdmaVersion::V4_4_0 => (7, 0, COUNT_MASK_V4_4_2),
        };
        Packet::new(len)
            .set(HEADER_OP, op::COPY)
            .set(HEADER_SUB_OP, op::SUB_COPY_LINEAR)
            .set(COPY_CPV, cpv)
            .set(COPY_COUNT, bytes.saturating_sub(1) & count_mask)
            .set(COPY_SRC_LO, src as u32)
            .set(COPY_SRC_HI, (src >> 32) as u32)
            .set(COPY_DST_LO, dst as u32)
            .set(COPY_DST_HI, (dst >> 32) as u32)
    }

    /// CONSTANT_FILL of `bytes` at `dst` with the dword `data`, as
    /// `sdma_v6_0_emit_fill_buffer()` writes it (fill size 0: COUNT holds
    /// `bytes - 1`; 7.0 sets no compression here; 4.4.2's
    /// `sdma_v4_4_2_emit_fill_buffer()` writes the same five dwords with a
    /// 22-bit COUNT).
    pub fn constant_fill(v: SdmaVersion, dst: u64, data: u32, bytes: u32) -> Self {
        let count_mask = match v {
            SdmaVersion::V6_0 | SdmaVersion::V7_0 => u32::MAX,
            SdmaVersion::V4_4_2 | SdmaVersion::V4_4_0 => COUNT_MASK_V4_4_2,
        };
        Packet::new(5)
            .set(FILL_OP, op::CONST_FILL)
            .set(FILL_DST_LO, dst as u32)
            .set(FILL_DST_HI, (dst >> 32) as u32)
            .set(FILL_DATA, data)
            .set(FILL_COUNT, bytes.saturating_sub(1) & count_mask)
    }

    /// FENCE: write the dword `data` at `addr` (4-byte aligned) once every
    /// earlier packet is done (`sdma_v6_0_ring_emit_fence()`; MTYPE 3 as
    /// `sdma_v6_0_ring_emit_fence()` sets it: uncached). 4.4.2's header has
    /// no `mtype`, and `sdma_v4_4_2_ring_emit_fence()` writes the bare
    /// opcode.
    pub fn fence(v: SdmaVersion, addr: u64, data: u32) -> Self {
        let mtype = match v {
            SdmaVersion::V6_0 | SdmaVersion::V7_0 => 3,
            SdmaVersion::V4_4_2 | SdmaVersion::V4_4_0 => 0,
        };
        Packet::new(4)
            .set(FENCE_OP, op::FENCE)
            .set(FENCE_MTYPE, mtype)
            .set(FENCE_ADDR_LO, addr as u32)
            .set(FENCE_ADDR_HI, (addr >> 32) as u32)
            .set(FENCE_DATA, data)
    }

    /// TRAP with `int_context` (the interrupt the engine raises,
    /// `sdma_v6_0_ring_emit_fence()` with `AMDGPU_FENCE_FLAG_INT`).
    pub fn trap(int_context: u32) -> Self {
        Packet::new(2)
            .set(TRAP_OP, op::TRAP)
            .set(TRAP_INT_CONTEXT, int_context)
    }

    /// POLL_REGMEM on memory: wait until `(*addr & mask) func value`
    /// (func 3 is "equal", what `sdma_v6_0_ring_emit_reg_wait()` uses),
    /// re-reading every `interval` clocks up to `retry` times (0xfff:
    /// forever, `sdma_v6_0_ring_emit_pipeline_sync()`).
    pub fn poll_mem(
        addr: u64,
        value: u32,
        mask: u32,
        func: u32,
        interval: u32,
        retry: u32,
    ) -> Self {
        Packet::new(6)
            .set(POLL_OP, op::POLL_REGMEM)
            .set(POLL_FUNC, func)
            .set(POLL_MEM, 1)
            .set(POLL_ADDR_LO, addr as u32)
            .set(POLL_ADDR_HI, (addr >> 32) as u32)
            .set(POLL_VALUE, value)
            .set(POLL_MASK, mask)
            .set(POLL_INTERVAL, interval)
            .set(POLL_RETRY, retry)
    }

    /// TIMESTAMP GET_GLOBAL: the 64-bit global timestamp written at `addr`
    /// (8-byte aligned; the low field holds bits 31:3).
    pub fn timestamp_global(addr: u64) -> Self {
        Packet::new(3)
            .set(TS_OP, op::TIMESTAMP)
            .set(TS_SUB_OP, op::SUB_TIMESTAMP_GET_GLOBAL)
            .set(TS_ADDR_LO, (addr >> 3) as u32)
            .set(TS_ADDR_HI, (addr >> 32) as u32)
    }

    /// ATOMIC `atomic_op` on the 64-bit word at `addr` with `src`/`cmp`,
    /// no loop.
    pub fn atomic(atomic_op: u32, addr: u64, src: u64, cmp: u64) -> Self {
        Packet::new(8)
            .set(ATOMIC_OP, op::ATOMIC)
            .set(ATOMIC_ATOMIC_OP, atomic_op)
            .set(ATOMIC_ADDR_LO, addr as u32)
            .set(ATOMIC_ADDR_HI, (addr >> 32) as u32)
            .set(ATOMIC_SRC_LO, src as u32)
            .set(ATOMIC_SRC_HI, (src >> 32) as u32)
            .set(ATOMIC_CMP_LO, cmp as u32)
            .set(ATOMIC_CMP_HI, (cmp >> 32) as u32)
    }

    /// NOP covering `dwords` (1..=0x4000) dwords: the header plus
    /// `dwords - 1` dwords of padding, COUNT = `dwords - 1`
    /// (`sdma_v6_0_ring_insert_nop()` pads with single-dword NOPs; a
    /// counted NOP skips its payload).
    pub fn nop(dwords: usize) -> Self {
        let n = dwords.clamp(1, MAX_PACKET_DWORDS);
        Packet::new(n)
            .set(NOP_OP, op::NOP)
            .set(NOP_COUNT, (n - 1) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Values written out from the header's macros by hand (not by the
    // encoders): SDMA_PKT_COPY_LINEAR_HEADER_OP(1) | SUB_OP(0) = 0x1,
    // COUNT = 0xfff for 4096 bytes.
    #[test]
    fn copy_linear_matches_the_driver_layout() {
        let p = Packet::copy_linear(SdmaVersion::V6_0, 0x1_2345_6000, 0x2_0000_1000, 4096);
        assert_eq!(
            p.dwords(),
            &[0x1, 0xfff, 0, 0x2345_6000, 0x1, 0x0000_1000, 0x2]
        );
        let p = Packet::copy_linear(SdmaVersion::V7_0, 0, 0, 1);
        assert_eq!(p.dwords(), &[0x1 | 1 << 19, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn fence_timestamp_and_nop() {
        assert_eq!(
            Packet::fence(SdmaVersion::V6_0, 0x10_0000_0008, 7).dwords(),
            &[5 | 3 << 16, 8, 0x10, 7]
        );
        assert_eq!(
            Packet::timestamp_global(0x1_0000_0010).dwords(),
            &[13 | 2 << 8, 0x10, 1]
        );
        assert_eq!(Packet::nop(3).dwords(), &[2 << 16, 0, 0]);
    }

    // From `sdma_v4_4_2_emit_copy_buffer()` / `_emit_fill_buffer()` /
    // `_ring_emit_fence()` by hand: the header is the bare opcode (and
    // sub-opcode), dword 1 `byte_count - 1`, a fence with no MTYPE; the
    // 22-bit COUNT holds 0x3fffff for the 4 MiB maximum.
    #[test]
    fn sdma_4_4_2_packets_follow_the_vega10_layout() {
        let p = Packet::copy_linear(SdmaVersion::V4_4_2, 0x1_2345_6000, 0x2_0000_1000, 0x40_0000);
        assert_eq!(
            p.dwords(),
            &[0x1, 0x3f_ffff, 0, 0x2345_6000, 0x1, 0x0000_1000, 0x2]
        );
        assert_eq!(
            Packet::fence(SdmaVersion::V4_4_2, 0x10_0000_0008, 7).dwords(),
            &[5, 8, 0x10, 7]
        );
        assert_eq!(
            Packet::constant_fill(SdmaVersion::V4_4_2, 0x3_0000_0040, 0xdead_beef, 64).dwords(),
            &[11, 0x40, 0x3, 0xdead_beef, 63]
        );
    }
}
