//! `barebell disasm CODE_OBJECT [--kernel NAME]`: the kernels' instructions
//! in LLVM syntax, decoded by barebell-isa (CI compares this with
//! `llvm-objdump-19 -d`, see `cargo xtask isa-diff`).

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct DisasmArgs {
    /// An AMDGPU code object (ELF) for gfx1100, gfx1201, gfx90a or gfx942.
    pub code_object: PathBuf,
    /// Only this function symbol.
    #[arg(long)]
    pub kernel: Option<String>,
}

pub fn run(args: DisasmArgs) -> ExitCode {
    let elf = match std::fs::read(&args.code_object) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("barebell: reading {}: {e}", args.code_object.display());
            return ExitCode::FAILURE;
        }
    };
    match barebell_isa::objdump::disassemble(&elf, args.kernel.as_deref()) {
        Ok((target, funcs)) => {
            println!("; {} ({})", args.code_object.display(), target.mcpu());
            for f in funcs {
                println!(
                    "\n{:016x} <{}>:{}",
                    f.lines.first().map(|l| l.addr).unwrap_or(0),
                    f.name,
                    if f.wave64 { " ; wave64" } else { "" }
                );
                for l in f.lines {
                    let words: Vec<String> = l.words.iter().map(|w| format!("{w:08X}")).collect();
                    println!("\t{:<58} // {:012X}: {}", l.text, l.addr, words.join(" "));
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("barebell: {}: {e}", args.code_object.display());
            ExitCode::FAILURE
        }
    }
}
