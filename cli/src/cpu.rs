//! CPU affinity of the calling thread (`sched_getaffinity` /
//! `sched_setaffinity`), for the latency loop and the model's CP thread.

pub(crate) fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer and size for our own thread (pid 0).
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Vec::new();
    }
    // SAFETY: CPU_ISSET reads the set we own; indices are below CPU_SETSIZE.
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Lets the calling thread run on every CPU in `cpus` again.
pub(crate) fn unpin_current_thread(cpus: &[usize]) {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: index checked against CPU_SETSIZE; the set is ours.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: valid pointer and size; pid 0 is the calling thread. A
    // failure leaves the old mask, which only costs performance.
    let _ = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
}

pub(crate) fn pin_current_thread(cpu: usize) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is checked against CPU_SETSIZE before use.
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(format!("CPU {cpu} is beyond CPU_SETSIZE"));
    }
    // SAFETY: index checked above; the set is ours.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: valid pointer and size; pid 0 is the calling thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        return Err(format!(
            "sched_setaffinity(CPU {cpu}): {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}
