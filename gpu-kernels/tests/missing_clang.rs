//! The fresh-machine trap, pinned: a build with clang-19 absent fails with a
//! message that names clang-19 and `cargo xtask deps`, and the same target
//! directory builds once clang-19 is on `PATH`, with no `cargo clean`.
//!
//! "Absent" is made real for the nested cargo: its `PATH` is a directory of
//! links to every program on this `PATH` except `clang-19`, so the linker,
//! rustc and everything else the build needs are the machine's own.

// Test code: a failed step is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TOOL: &str = "clang-19";

fn real_path() -> Vec<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect()
}

/// A directory holding a link to every entry of every `PATH` directory
/// (the first of each name, as a shell would find it) except `clang-19`.
fn path_without_clang(bin: &Path) {
    let _ = std::fs::remove_dir_all(bin);
    std::fs::create_dir_all(bin).unwrap();
    let mut seen = HashSet::new();
    for dir in real_path() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            if name == TOOL || !seen.insert(name.clone()) {
                continue;
            }
            std::os::unix::fs::symlink(e.path(), bin.join(&name)).unwrap();
        }
    }
    assert!(!bin.join(TOOL).exists());
}

fn build(bin: &Path, target: &Path) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Command::new(env!("CARGO"))
        .current_dir(&root)
        .env("PATH", bin)
        .env_remove("CARGO_TARGET_DIR")
        .args([
            "build",
            "--offline",
            "--quiet",
            "-p",
            "barebell-gpu-kernels",
        ])
        .arg("--target-dir")
        .arg(target)
        .output()
        .unwrap()
}

#[test]
fn missing_clang_fails_the_build_by_name_and_installing_it_needs_no_clean() {
    let Some(clang) = real_path()
        .into_iter()
        .map(|d| d.join(TOOL))
        .find(|p| p.is_file())
    else {
        panic!("clang-19 is not installed on this machine: `cargo xtask deps` installs it");
    };
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("missing-clang");
    let bin = work.join("bin");
    let target = work.join("target");
    let _ = std::fs::remove_dir_all(&target);
    path_without_clang(&bin);

    let absent = build(&bin, &target);
    let err = String::from_utf8_lossy(&absent.stderr);
    assert!(!absent.status.success(), "built without clang-19:\n{err}");
    assert!(err.contains("clang-19 is not installed"), "{err}");
    assert!(err.contains("`cargo xtask deps`"), "{err}");

    // The same tree again, still without it: still refused (nothing cached).
    let again = build(&bin, &target);
    assert!(!again.status.success());

    std::os::unix::fs::symlink(&clang, bin.join(TOOL)).unwrap();
    let present = build(&bin, &target);
    assert!(
        present.status.success(),
        "the same target directory did not build once clang-19 appeared:\n{}",
        String::from_utf8_lossy(&present.stderr)
    );
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn every_built_kernel_is_an_amdgpu_code_object() {
    for (name, co) in [
        ("gfx1100", barebell_gpu_kernels::GFX1100),
        ("gfx1201", barebell_gpu_kernels::GFX1201),
        ("gfx942", barebell_gpu_kernels::GFX942),
    ] {
        assert_eq!(&co[..4], b"\x7fELF", "{name}");
        // e_machine EM_AMDGPU (224), ELF's own value.
        assert_eq!(u16::from_le_bytes([co[18], co[19]]), 224, "{name}");
    }
}
