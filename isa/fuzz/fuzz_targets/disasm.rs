//! `barebell disasm FILE` on arbitrary bytes: `objdump::disassemble`
//! never panics on a malformed code object, and every line it returns
//! has at least one instruction word and an address inside its function
//! order (ascending).
#![no_main]

use barebell_isa::objdump::disassemble;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((_, funcs)) = disassemble(data, None) {
        for f in &funcs {
            for l in &f.lines {
                assert!(!l.words.is_empty(), "{}: a line with no words", f.name);
            }
            assert!(f.lines.windows(2).all(|w| w[0].addr < w[1].addr));
        }
    }
});
