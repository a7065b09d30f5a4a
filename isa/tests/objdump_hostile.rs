//! `objdump::disassemble` on a malformed code object gives an error, never
//! a panic: a function symbol placed below `.text` (the hostile-input
//! run's `disasm` crash, `pc - base`).

// Test code: a failed step is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use barebell_isa::Target;
use barebell_isa::objdump::disassemble;
use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

/// ELF64 `Elf64_Sym` (ELF's own layout): 24 bytes, `st_value` at 8.
const SYM_SIZE: usize = 24;
const ST_VALUE: usize = 8;

/// The code object with its first function symbol's `st_value` set to
/// `value`.
fn with_function_at(elf: &[u8], value: u64) -> Vec<u8> {
    let file = object::File::parse(elf).unwrap();
    let symtab = file.section_by_name(".symtab").unwrap();
    let (symtab_off, _) = symtab.file_range().unwrap();
    let func = file
        .symbols()
        .find(|s| s.kind() == SymbolKind::Text && s.size() > 0)
        .unwrap();
    let at = usize::try_from(symtab_off).unwrap() + func.index().0 * SYM_SIZE + ST_VALUE;
    let mut out = elf.to_vec();
    out[at..at + 8].copy_from_slice(&value.to_le_bytes());
    out
}

#[test]
fn a_function_below_text_is_a_malformed_object_not_a_panic() {
    let elf = std::fs::read(common::build(Target::Gfx1100, false)).unwrap();
    // The untouched object disassembles.
    assert!(disassemble(&elf, None).is_ok());
    for value in [0u64, 1, u64::MAX] {
        let bad = with_function_at(&elf, value);
        let err = disassemble(&bad, None).expect_err("a symbol outside .text was accepted");
        assert!(err.contains("lies outside .text"), "{err}");
    }
}
