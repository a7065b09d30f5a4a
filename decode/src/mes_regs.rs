//! GC registers the MES firmware depends on beyond its rings, with the
//! fields the model checks, written from `gc_12_0_0_offset.h` /
//! `gc_12_0_0_sh_mask.h` (and `gc_11_0_0_sh_mask.h` for the hub's context
//! control), each a conformance fact of the model's own.

use super::Bits;
use barebell_facts::Fact;

/// `(offset, BASE_IDX)` of a GC register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcReg {
    pub offset: u32,
    pub segment: usize,
}

impl GcReg {
    /// Byte offset in the register BAR for the discovered GC `bases`.
    pub fn byte_offset(self, bases: &[u32]) -> Option<usize> {
        let base = *bases.get(self.segment)?;
        (base as usize)
            .checked_add(self.offset as usize)?
            .checked_mul(4)
    }
}

/// gfx12 `regCP_UNMAPPED_DOORBELL` (GC 11.0.0 has no such register).
pub const CP_UNMAPPED_DOORBELL: GcReg = GcReg {
    offset: 0x0880,
    segment: 1,
};
pub const UNMAPPED_ENABLE: Bits = Bits::new(0, 1);
pub const UNMAPPED_PROC_LSB: Bits = Bits::new(8, 5);

/// `regCP_MES_DOORBELL_CONTROL1..5` (one per priority level, low to
/// realtime; `mes_v12_0_init_aggregated_doorbell()`).
pub const CP_MES_DOORBELL_CONTROL: [GcReg; 5] = [
    GcReg {
        offset: 0x283c,
        segment: 1,
    },
    GcReg {
        offset: 0x283d,
        segment: 1,
    },
    GcReg {
        offset: 0x283e,
        segment: 1,
    },
    GcReg {
        offset: 0x283f,
        segment: 1,
    },
    GcReg {
        offset: 0x2840,
        segment: 1,
    },
];
/// `DOORBELL_OFFSET`: the dword index, in bits 27:2.
pub const MES_DB_OFFSET: Bits = Bits::new(2, 26);
pub const MES_DB_EN: Bits = Bits::new(30, 1);

/// `GCVM_CONTEXT1_CNTL.ENABLE_CONTEXT` (same bit on GC 11 and 12).
pub const CONTEXT_CNTL_ENABLE: Bits = Bits::new(0, 1);

/// The seven `GCVM_CONTEXT1_CNTL.*_PROTECTION_FAULT_ENABLE_INTERRUPT`
/// bits (range, dummy page, PDE0, valid, read, write, execute):
/// `hub->vm_cntx_cntl_vm_fault` (`gfxhub_v3_0_init()`,
/// `gfxhub_v12_0_init()`), which `amdgpu_gmc_set_vm_fault_masks()` sets
/// and clears in every context's register after `hub->vm_cntx_cntl` was
/// recorded. GC 11: bits 9, 11, …, 21; GC 12 has `RETRY_OTHER_FAULT` at
/// bit 9, which moves them to 10, 12, …, 22.
pub const CONTEXT_CNTL_FAULT_INTERRUPTS_GC11: [Bits; 7] = [
    Bits::new(9, 1),
    Bits::new(11, 1),
    Bits::new(13, 1),
    Bits::new(15, 1),
    Bits::new(17, 1),
    Bits::new(19, 1),
    Bits::new(21, 1),
];
/// GC 12's (see [`CONTEXT_CNTL_FAULT_INTERRUPTS_GC11`]).
pub const CONTEXT_CNTL_FAULT_INTERRUPTS_GC12: [Bits; 7] = [
    Bits::new(10, 1),
    Bits::new(12, 1),
    Bits::new(14, 1),
    Bits::new(16, 1),
    Bits::new(18, 1),
    Bits::new(20, 1),
    Bits::new(22, 1),
];

/// The mask of the fault-interrupt enables on GC 12 (`gfx12`) or GC 11.
pub fn context_cntl_fault_interrupt_mask(gfx12: bool) -> u32 {
    let bits = if gfx12 {
        &CONTEXT_CNTL_FAULT_INTERRUPTS_GC12
    } else {
        &CONTEXT_CNTL_FAULT_INTERRUPTS_GC11
    };
    bits.iter().fold(0, |m, b| m | b.mask())
}

/// `GCVM_CONTEXT1_PAGE_TABLE_START/END_ADDR_HI32__LOGICAL_PAGE_NUMBER_HI4`
/// (GC 11 and 12): a context's VA range is a 36-bit page number, what
/// MES programs from ADD_QUEUE's `process_va_start/end` (KFD's
/// `add_queue_mes()` sends `0` and `max_pfn - 1`, page numbers).
pub const PAGE_NUMBER_HI4: u32 = 0xF;
/// The last page number a context's END register holds.
pub const MAX_PAGE_NUMBER: u64 = (1 << 36) - 1;

/// `AMDGPU_PTE_VALID` (`amdgpu_vm.h`: bit 0). That header does not
/// compile outside the kernel, so this one rests on its citation (the
/// runtime's copy is checked against the header text by
/// `tests/harness/tests/gmc.rs`).
pub const PTE_VALID: u64 = 1;
/// Bits 47:12 of a page-directory entry: the address
/// (`AMDGPU_GMC_HOLE_MASK`-free PDE address field).
pub const PDE_ADDRESS: u64 = 0x0000_FFFF_FFFF_F000;

const O12: &str = "gc_12_0_0_offset.h";
const M12: &str = "gc_12_0_0_sh_mask.h";

pub const FACTS: &[Fact] = &[
    Fact::constant(O12, "regCP_UNMAPPED_DOORBELL", 0x0880),
    Fact::constant(O12, "regCP_UNMAPPED_DOORBELL_BASE_IDX", 1),
    Fact::constant(
        M12,
        "CP_UNMAPPED_DOORBELL__ENABLE_MASK",
        UNMAPPED_ENABLE.mask() as u64,
    ),
    Fact::constant(
        M12,
        "CP_UNMAPPED_DOORBELL__PROC_LSB_MASK",
        UNMAPPED_PROC_LSB.mask() as u64,
    ),
    Fact::constant(O12, "regCP_MES_DOORBELL_CONTROL1", 0x283c),
    Fact::constant(O12, "regCP_MES_DOORBELL_CONTROL1_BASE_IDX", 1),
    Fact::constant(O12, "regCP_MES_DOORBELL_CONTROL2", 0x283d),
    Fact::constant(O12, "regCP_MES_DOORBELL_CONTROL3", 0x283e),
    Fact::constant(O12, "regCP_MES_DOORBELL_CONTROL4", 0x283f),
    Fact::constant(O12, "regCP_MES_DOORBELL_CONTROL5", 0x2840),
    Fact::constant(O12, "regCP_MES_DOORBELL_CONTROL5_BASE_IDX", 1),
    Fact::constant(
        M12,
        "CP_MES_DOORBELL_CONTROL1__DOORBELL_OFFSET_MASK",
        MES_DB_OFFSET.mask() as u64,
    ),
    Fact::constant(
        M12,
        "CP_MES_DOORBELL_CONTROL5__DOORBELL_OFFSET_MASK",
        MES_DB_OFFSET.mask() as u64,
    ),
    Fact::constant(
        M12,
        "CP_MES_DOORBELL_CONTROL1__DOORBELL_EN_MASK",
        MES_DB_EN.mask() as u64,
    ),
    Fact::constant(
        M12,
        "GCVM_CONTEXT1_CNTL__ENABLE_CONTEXT_MASK",
        CONTEXT_CNTL_ENABLE.mask() as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GCVM_CONTEXT1_CNTL__ENABLE_CONTEXT_MASK",
        CONTEXT_CNTL_ENABLE.mask() as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GCVM_CONTEXT1_CNTL__RANGE_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC11[0].mask() as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GCVM_CONTEXT1_CNTL__DUMMY_PAGE_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC11[1].mask() as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GCVM_CONTEXT1_CNTL__PDE0_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC11[2].mask() as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GCVM_CONTEXT1_CNTL__VALID_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC11[3].mask() as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GCVM_CONTEXT1_CNTL__READ_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC11[4].mask() as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GCVM_CONTEXT1_CNTL__WRITE_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC11[5].mask() as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GCVM_CONTEXT1_CNTL__EXECUTE_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC11[6].mask() as u64,
    ),
    Fact::constant(
        M12,
        "GCVM_CONTEXT1_CNTL__RANGE_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC12[0].mask() as u64,
    ),
    Fact::constant(
        M12,
        "GCVM_CONTEXT1_CNTL__DUMMY_PAGE_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC12[1].mask() as u64,
    ),
    Fact::constant(
        M12,
        "GCVM_CONTEXT1_CNTL__PDE0_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC12[2].mask() as u64,
    ),
    Fact::constant(
        M12,
        "GCVM_CONTEXT1_CNTL__VALID_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC12[3].mask() as u64,
    ),
    Fact::constant(
        M12,
        "GCVM_CONTEXT1_CNTL__READ_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC12[4].mask() as u64,
    ),
    Fact::constant(
        M12,
        "GCVM_CONTEXT1_CNTL__WRITE_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC12[5].mask() as u64,
    ),
    Fact::constant(
        M12,
        "GCVM_CONTEXT1_CNTL__EXECUTE_PROTECTION_FAULT_ENABLE_INTERRUPT_MASK",
        CONTEXT_CNTL_FAULT_INTERRUPTS_GC12[6].mask() as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32__LOGICAL_PAGE_NUMBER_HI4_MASK",
        PAGE_NUMBER_HI4 as u64,
    ),
    Fact::constant(
        "gc_11_0_0_sh_mask.h",
        "GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32__LOGICAL_PAGE_NUMBER_HI4_MASK",
        PAGE_NUMBER_HI4 as u64,
    ),
    Fact::constant(
        M12,
        "GCVM_CONTEXT1_PAGE_TABLE_START_ADDR_HI32__LOGICAL_PAGE_NUMBER_HI4_MASK",
        PAGE_NUMBER_HI4 as u64,
    ),
    Fact::constant(
        M12,
        "GCVM_CONTEXT1_PAGE_TABLE_END_ADDR_HI32__LOGICAL_PAGE_NUMBER_HI4_MASK",
        PAGE_NUMBER_HI4 as u64,
    ),
];
