//! Runs each launch example and checks what it prints, so the examples
//! stay true. `cargo test` builds the package's examples before its
//! tests, next to this test's binary (`target/<profile>/examples/`).

use std::path::PathBuf;
use std::process::Command;

/// The built example `name`: `target/<profile>/examples/NAME`, beside
/// `target/<profile>/deps/`, which holds this test.
fn example(name: &str) -> PathBuf {
    let me = std::env::current_exe().unwrap_or_else(|e| panic!("this test's path: {e}"));
    let profile = me
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap_or_else(|| panic!("{} has no profile directory", me.display()));
    profile.join("examples").join(name)
}

/// Runs the example `name` and returns its stdout, failing the test with
/// its stderr when it fails.
fn run(name: &str) -> String {
    let path = example(name);
    let out = Command::new(&path)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", path.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "example {name} failed:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn run_kernel_adds_the_vectors() {
    assert_eq!(
        run("run_kernel"),
        "vadd of 1024 floats on navi31: 0 wrong; teardown complete: true\n"
    );
}

#[test]
fn vector_add_copies_in_launches_and_copies_out() {
    assert_eq!(
        run("vector_add"),
        "vectorAdd of 4096 floats in VRAM on navi31: 0 wrong; teardown complete: true\n"
    );
}

#[test]
fn copy_round_trips_through_vram() {
    assert_eq!(
        run("copy"),
        "copied 65536 bytes h2d, d2d, d2h on navi31: identical true; teardown complete: true\n"
    );
}
