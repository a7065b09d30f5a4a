//! Every fact this crate relies on, for `cargo xtask conformance`.

use barebell_facts::Fact;

/// ELF constants and relocation types (LLVM 19 `ELF.h`), the kernel
/// descriptor layout and bit fields (LLVM 19 `AMDHSAKernelDescriptor.h`),
/// and the scratch register fields (Linux 6.12 gc sh_mask headers).
pub const FACTS: &[&[Fact]] = &[
    crate::target::FACTS,
    crate::target::MACH_FACT_TABLE,
    crate::loader::FACTS,
    crate::descriptor::LAYOUT_FACTS,
    crate::descriptor::rsrc1::FACTS,
    crate::descriptor::rsrc2::FACTS,
    crate::descriptor::rsrc3::FACTS,
    crate::descriptor::props::FACTS,
    crate::descriptor::preload::FACTS,
    crate::scratch::FACTS,
];
