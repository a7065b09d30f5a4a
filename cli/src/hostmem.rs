//! What this machine can give: a request for host memory is checked
//! against `MemAvailable` in `/proc/meminfo` before anything is
//! allocated, so a large `--bytes` or `--elements` is a clear refusal
//! instead of an allocation abort or the OOM killer.

/// `MemAvailable` in bytes from `/proc/meminfo`'s text (the kernel's
/// estimate of memory available for a new workload, `proc(5)`), or
/// `None` if the line is missing or malformed.
pub fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut w = line.split_whitespace().skip(1);
    let kib: u64 = w.next()?.parse().ok()?;
    (w.next() == Some("kB")).then_some(())?;
    kib.checked_mul(1024)
}

/// Refuses `bytes` of host memory for `what` when the machine reports
/// less available. Where `/proc/meminfo` cannot be read the check is
/// skipped (the allocation then reports its own failure).
pub fn ensure_available(bytes: u64, what: &str) -> Result<(), String> {
    let Ok(text) = std::fs::read_to_string("/proc/meminfo") else {
        return Ok(());
    };
    check(bytes, mem_available(&text), what)
}

fn check(bytes: u64, available: Option<u64>, what: &str) -> Result<(), String> {
    match available {
        Some(avail) if bytes > avail => Err(format!(
            "{what} needs {} MiB of host memory; this machine has {} MiB available (MemAvailable in /proc/meminfo)",
            bytes.div_ceil(1 << 20),
            avail >> 20
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str = "MemTotal:       24000000 kB\nMemFree:        20000000 kB\nMemAvailable:    2097152 kB\nBuffers:          100 kB\n";

    #[test]
    fn mem_available_is_read_in_bytes() {
        assert_eq!(mem_available(MEMINFO), Some(2 << 30));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots\n"), None);
        assert_eq!(mem_available("MemAvailable: 5 MB\n"), None);
    }

    #[test]
    fn a_request_above_what_is_available_is_refused_with_both_sizes() {
        let avail = mem_available(MEMINFO);
        assert!(check(1 << 30, avail, "copy --bytes").is_ok());
        let e = check(3 << 30, avail, "copy --bytes").unwrap_err();
        assert!(e.contains("copy --bytes needs 3072 MiB"), "{e}");
        assert!(e.contains("2048 MiB available"), "{e}");
        // Unknown availability: no refusal.
        assert!(check(u64::MAX, None, "x").is_ok());
    }
}
