//! The submit hot loop makes no heap allocation and no system call.
//!
//! Allocations: a counting global allocator around 10 000 submits.
//! System calls: the loop runs in a forked child under a seccomp filter
//! that allows only `exit_group`/`exit`; any other system call (including
//! `write`, `futex`, `mmap`, `clock_gettime` that misses the vDSO) kills the
//! child with SIGSYS, which the parent sees.

use barebell::aql::doorbell::Doorbell;
use barebell::aql::packet::{Dispatch, KernelDispatchPacket};
use barebell::aql::queue::{AqlQueue, QueueConfig, QueueMemory};
use barebell::time::Clock;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

static MEM: QueueMemory<256> = QueueMemory::new();
static DOORBELL: AtomicU64 = AtomicU64::new(0);

/// The clock is never consulted on the fast path (the ring never fills
/// here); if it were, a clock that makes no system call keeps the test
/// about the submit path, not about time.
struct NoSyscallClock;
impl Clock for NoSyscallClock {
    fn now_ns(&self) -> u64 {
        0
    }
}

fn queue() -> AqlQueue<'static, 256> {
    // SAFETY: a static, accessed only atomically.
    let d = unsafe { Doorbell::from_ptr(NonNull::from(&DOORBELL).cast()) }.unwrap();
    AqlQueue::new(&MEM, d, QueueConfig::default()).unwrap()
}

/// Acts as the CP: marks everything consumed so the ring never fills.
fn drain(q: &AqlQueue<'static, 256>) {
    let rptr = MEM.read_index_address() as *mut u64;
    // SAFETY: the read index is an aligned u64 in a static, accessed only
    // atomically.
    unsafe { AtomicU64::from_ptr(rptr) }.store(q.write_index(), Ordering::Release);
}

fn hot_loop(q: &AqlQueue<'static, 256>, pkt: &KernelDispatchPacket, n: u64) {
    for i in 0..n {
        q.submit(pkt, &NoSyscallClock, 1).unwrap();
        if i % 128 == 127 {
            drain(q);
        }
    }
}

fn packet() -> KernelDispatchPacket {
    Dispatch::linear(1024, 64, 0x1000, 0x2000).packet().unwrap()
}

#[test]
fn no_allocation_and_no_syscall_in_the_submit_loop() {
    let q = queue();
    let pkt = packet();
    hot_loop(&q, &pkt, 256); // warm up
    let before = barebell_tests::allocations_on_this_thread();
    hot_loop(&q, &pkt, 10_000);
    let after = barebell_tests::allocations_on_this_thread();
    assert_eq!(after - before, 0, "allocations in the hot loop");
    assert_eq!(DOORBELL.load(Ordering::Relaxed), q.write_index() - 1);

    // SAFETY: fork in a test process; the child only runs code that does
    // not allocate (shown above) or take locks, then exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        child(&q, &pkt);
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(r, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child died (signal {}): the hot loop made a system call",
        if libc::WIFSIGNALED(status) {
            libc::WTERMSIG(status)
        } else {
            0
        }
    );
}

fn child(q: &AqlQueue<'static, 256>, pkt: &KernelDispatchPacket) -> ! {
    if !barebell_tests::install_exit_only_filter() {
        // SAFETY: plain exit of the forked child.
        unsafe { libc::_exit(3) };
    }
    // From here on any system call but exit kills us.
    for i in 0..10_000u64 {
        if q.submit(pkt, &NoSyscallClock, 1).is_err() {
            // SAFETY: exit is allowed.
            unsafe { libc::_exit(5) };
        }
        if i % 128 == 127 {
            drain(q);
        }
    }
    // SAFETY: exit_group is allowed; exit code 0 means the loop finished.
    unsafe { libc::_exit(0) }
}

#[test]
fn the_seccomp_filter_does_catch_a_syscall() {
    // The negative control: the same filter around one getpid() must kill
    // the child, or the test above would prove nothing.
    // SAFETY: fork in a test process; the child makes two prctl calls and
    // one getpid, then exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let ok = barebell_tests::install_exit_only_filter();
        // SAFETY: getpid and exit have no preconditions.
        unsafe {
            libc::getpid();
            libc::_exit(if ok { 0 } else { 3 });
        }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        libc::WIFSIGNALED(status),
        "getpid under the filter should have killed the child"
    );
    assert_eq!(libc::WTERMSIG(status), libc::SIGSYS);
}
