//! `barebell latency` on a hardware target, as far as it can run on a
//! machine without an AMD GPU: the options it refuses before opening
//! anything.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::process::Command;

/// `--compare` brings up three targets; on a GPU that is refused before
/// the device is opened (the address named does not exist, so reaching
/// the open would have failed naming it instead).
#[test]
fn compare_is_refused_on_a_gpu_before_opening_it() {
    for flag in ["--vfio", "--sysfs"] {
        let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
            .args(["latency", flag, "ffff:1f:1f.7", "--compare"])
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert!(err.contains("on a GPU pick one --mapping"), "{flag}: {err}");
        assert!(!err.contains("ffff:1f:1f.7"), "{flag} opened: {err}");
        assert!(out.stdout.is_empty(), "{flag}: stdout not empty");
    }
}
