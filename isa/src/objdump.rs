//! Disassembly of AMDGPU code objects (host only, `std` feature): kernels
//! are found through the ELF symbol table (`object` crate), the wave size of
//! each through its kernel descriptor (`NAME.kd`), the target through the
//! ELF header's EF_AMDGPU_MACH.

use crate::decode::decode;
use crate::inst::{Syntax, Target};
use crate::kd::{KD_SIZE, KernelDescriptor};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

/// EF_AMDGPU_MACH values (LLVM `ELF.h`): gfx1100 = 0x041, gfx1201 = 0x04e,
/// gfx90a = 0x03f, gfx942 = 0x04c (the kernel crate's `Mach` facts check the
/// same values).
pub const EF_AMDGPU_MACH_MASK: u32 = 0xff;
pub const EF_AMDGPU_MACH_AMDGCN_GFX1100: u32 = 0x041;
pub const EF_AMDGPU_MACH_AMDGCN_GFX1201: u32 = 0x04e;
pub const EF_AMDGPU_MACH_AMDGCN_GFX90A: u32 = 0x03f;
pub const EF_AMDGPU_MACH_AMDGCN_GFX942: u32 = 0x04c;

/// One disassembled instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub addr: u64,
    pub words: Vec<u32>,
    /// LLVM-syntax text, or `<unknown>` for an invalid word.
    pub text: String,
}

/// A function symbol's instructions.
#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub wave64: bool,
    pub lines: Vec<Line>,
}

/// Disassembles every function symbol in `.text` (or only `kernel`).
pub fn disassemble(elf: &[u8], kernel: Option<&str>) -> Result<(Target, Vec<Function>), String> {
    let file = object::File::parse(elf).map_err(|e| e.to_string())?;
    let flags = match file.flags() {
        object::FileFlags::Elf { e_flags, .. } => e_flags,
        _ => 0,
    };
    let target = match flags & EF_AMDGPU_MACH_MASK {
        EF_AMDGPU_MACH_AMDGCN_GFX1100 => Target::Gfx1100,
        EF_AMDGPU_MACH_AMDGCN_GFX1201 => Target::Gfx1201,
        EF_AMDGPU_MACH_AMDGCN_GFX90A => Target::Gfx90a,
        EF_AMDGPU_MACH_AMDGCN_GFX942 => Target::Gfx942,
        m => {
            return Err(alloc::format!(
                "unsupported EF_AMDGPU_MACH {m:#x} (gfx1100, gfx1201, gfx90a and gfx942 are)"
            ));
        }
    };
    let text = file.section_by_name(".text").ok_or("no .text section")?;
    let data = text.data().map_err(|e| e.to_string())?;
    let base = text.address();
    let end = base
        .checked_add(data.len() as u64)
        .ok_or("malformed code object: .text runs past the end of the address space")?;
    let mut funcs: Vec<(u64, String)> = file
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Text && s.section_index() == Some(text.index()))
        .filter_map(|s| Some((s.address(), s.name().ok()?.to_string())))
        .collect();
    // A symbol that claims .text but lies outside it is a malformed file,
    // not an address to read at.
    if let Some((addr, name)) = funcs.iter().find(|(a, _)| !(base..end).contains(a)) {
        return Err(alloc::format!(
            "malformed code object: function {name} at {addr:#x} lies outside .text ({base:#x}..{end:#x})"
        ));
    }
    funcs.sort();
    let mut out = Vec::new();
    for (i, (start, name)) in funcs.iter().enumerate() {
        if kernel.is_some_and(|k| k != name) {
            continue;
        }
        let stop = funcs.get(i + 1).map(|f| f.0).unwrap_or(end).min(end);
        // wave size from the kernel descriptor, if this is a kernel
        let kd_name = alloc::format!("{name}.kd");
        let wave64 = file
            .symbols()
            .find(|s| s.name() == Ok(kd_name.as_str()))
            .and_then(|s| {
                let sec = file.section_by_index(s.section_index()?).ok()?;
                let d = sec.data().ok()?;
                let off = usize::try_from(s.address().checked_sub(sec.address())?).ok()?;
                let b: &[u8; KD_SIZE] = d.get(off..off.checked_add(KD_SIZE)?)?.try_into().ok()?;
                Some(!KernelDescriptor::parse(b).wave32())
            })
            .unwrap_or(false)
            || target.is_gfx9();
        let syntax = Syntax { target, wave64 };
        let mut lines = Vec::new();
        let mut pc = *start;
        while pc < stop {
            // base <= pc < stop <= end: checked above.
            let bytes = usize::try_from(pc - base)
                .ok()
                .and_then(|off| data.get(off..))
                .unwrap_or(&[]);
            match decode(syntax, bytes) {
                Ok(inst) => {
                    let n = usize::from(inst.len) / 4;
                    lines.push(Line {
                        addr: pc,
                        words: inst.words[..n].to_vec(),
                        text: inst.display(syntax).to_string(),
                    });
                    pc = pc.saturating_add(u64::from(inst.len));
                }
                Err(_) => {
                    let w = bytes
                        .get(..4)
                        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .unwrap_or(0);
                    lines.push(Line {
                        addr: pc,
                        words: alloc::vec![w],
                        text: "<unknown>".into(),
                    });
                    pc = pc.saturating_add(4);
                }
            }
        }
        out.push(Function {
            name: name.clone(),
            wave64,
            lines,
        });
    }
    if let Some(k) = kernel
        && out.is_empty()
    {
        return Err(alloc::format!("no function named {k} in .text"));
    }
    Ok((target, out))
}
