//! Shared fixtures for the integration tests: the model's placement
//! helpers (`barebell_model_host::queue`) with test-friendly signatures.

use barebell::aql::queue::QueueConfig;
use barebell_model::cp::CpModel;
pub use barebell_model_host::queue::{ModelQueue as Rig, signals};

/// A queue of `N` slots bound to `model` (doorbell-driven).
pub fn rig<const N: usize>(model: &mut CpModel, config: QueueConfig) -> Rig<N> {
    rig_with(model, config, false)
}

/// As [`rig`], choosing whether the model also polls the write index
/// (see `HqdBinding::poll_write_index`).
pub fn rig_with<const N: usize>(
    model: &mut CpModel,
    config: QueueConfig,
    poll_write_index: bool,
) -> Rig<N> {
    barebell_model_host::queue::queue(model, config, poll_write_index)
        .expect("placing a queue in the model")
}

/// Installs a filter denying everything but exit: the classic BPF program
/// `ld nr; jeq exit_group -> allow; jeq exit -> allow; kill`. Returns
/// false if the kernel refused it.
pub fn install_exit_only_filter() -> bool {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W, sock_filter, sock_fprog};
    const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
    const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
    let stmt = |code: u32, k: u32| sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jeq = |k: u32, jt: u8| sock_filter {
        code: (BPF_JMP | BPF_JEQ | BPF_K) as u16,
        jt,
        jf: 0,
        k,
    };
    // offsetof(struct seccomp_data, nr) == 0
    let prog = [
        stmt(BPF_LD | BPF_W | BPF_ABS, 0),
        jeq(libc::SYS_exit_group as u32, 2),
        jeq(libc::SYS_exit as u32, 1),
        stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    ];
    let fprog = sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut sock_filter,
    };
    // SAFETY: plain prctl calls with valid arguments; `fprog` and `prog`
    // outlive them.
    unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
            && libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &fprog as *const sock_fprog,
            ) == 0
    }
}

/// A global allocator that counts, per thread, the allocations it serves.
/// Per thread because the test harness's own threads allocate while a
/// measured loop runs. Install it in a test binary with
/// `#[global_allocator] static A: CountingAlloc = CountingAlloc;`.
pub struct CountingAlloc;

thread_local! {
    // A const-initialised `Cell` needs no allocation to access.
    static ALLOCS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// Allocations made so far by the calling thread (0 unless a test binary
/// installed [`CountingAlloc`]).
pub fn allocations_on_this_thread() -> usize {
    ALLOCS.with(core::cell::Cell::get)
}

fn count_alloc() {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        count_alloc();
        // SAFETY: same contract as ours.
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        // SAFETY: same contract as ours.
        unsafe { std::alloc::System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, n: usize) -> *mut u8 {
        count_alloc();
        // SAFETY: same contract as ours.
        unsafe { std::alloc::System.realloc(p, l, n) }
    }
}

pub use barebell_bringup::FirmwareDir;

/// The text of a file under Linux 6.12's `drivers/gpu/drm/amd/` (`rel`
/// from there), as `cargo xtask headers` extracts it from Debian's
/// `linux-source-6.12`.
pub fn linux_amd_source(rel: &str) -> String {
    let path = format!(
        "{}/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/{rel}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask headers`)"))
}

/// The hexadecimal value of `#define name 0x…` (or `(0x…)`) in the C
/// source `text`.
pub fn c_define(text: &str, name: &str) -> u64 {
    let line = text
        .lines()
        .find(|l| l.starts_with("#define") && l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no #define {name}"));
    let v = line.split_whitespace().nth(2).unwrap_or_default();
    let v = v.trim_start_matches('(').trim_end_matches(')');
    u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap_or_else(|e| panic!("{line}: {e}"))
}

/// [`c_define`] in the Linux 6.12 file `rel` (under
/// `drivers/gpu/drm/amd/`, as [`linux_amd_source`]).
pub fn linux_define(rel: &str, name: &str) -> u64 {
    c_define(&linux_amd_source(rel), name)
}

/// Asserts that the model HWS's runlist on `gpu` (a GC 9.4.x part) is not
/// over-subscribed: one IB, with no RUN_LIST chaining back to itself.
/// KFD's `pm_create_runlist_ib()` chains only when the compute queues
/// outnumber `get_cp_queues_num()` (the KFD slots of the 4x8 MEC), the
/// processes `max_proc_per_quantum`, or the GWS queues one; SDMA queues do
/// not count.
pub fn assert_runlist_not_over_subscribed(gpu: &barebell_model::VirtualGpu) {
    let hws = gpu.gc_9_4_3().and_then(|g| g.mec().hws());
    let rl = hws.and_then(|h| h.runlist());
    assert!(
        rl.is_some_and(|r| !r.loops && r.ibs == 1),
        "an over-subscribed runlist, or none: {rl:?}"
    );
}

/// A model part over freshly allocated host memory (64 MiB of VRAM
/// backing), with the system's firmware.
pub fn virtual_gpu(part: barebell_model::Part, seed: u64) -> barebell_model::VirtualGpu {
    let fw = barebell_model::FilesDir::system();
    let mem = barebell_model::vgpu::HostMemory::allocate(64 << 20).expect("host memory");
    barebell_model::VirtualGpu::new(part, &fw, mem, barebell_model::Seed(seed))
        .expect("building the virtual GPU")
}

/// [`virtual_gpu`] with `vram` bytes of VRAM backing and a DMA region of
/// `dma` bytes (big user buffers: the SDMA copy tests).
pub fn virtual_gpu_sized(
    part: barebell_model::Part,
    seed: u64,
    vram: usize,
    dma: usize,
) -> barebell_model::VirtualGpu {
    let fw = barebell_model::FilesDir::system();
    let mem = barebell_model::vgpu::HostMemory::allocate_sized(vram, dma).expect("host memory");
    barebell_model::VirtualGpu::new(part, &fw, mem, barebell_model::Seed(seed))
        .expect("building the virtual GPU")
}

/// A 4 KiB page the rig device reaches at its host address, for tests
/// that lay out rings and memory by hand (Linux's packets, MES frames).
#[repr(C, align(4096))]
pub struct Page4k(pub [u32; 1024]);

impl Page4k {
    /// A zeroed page, leaked, mapped for `gpu`'s CP (and so its
    /// firmware stand-ins).
    pub fn leak(gpu: &barebell_model_host::mec::ModelGpu) -> &'static Page4k {
        let p: &'static Page4k = Box::leak(Box::new(Page4k([0; 1024])));
        // SAFETY: a leaked page, touched by the device with atomics and by
        // the test with volatile accesses only.
        unsafe { gpu.map(p as *const Page4k as u64, 4096) };
        p
    }

    /// Its address (the device's and the host's).
    pub fn addr(&self) -> u64 {
        self as *const Page4k as u64
    }

    /// Stores `v` at dword `i` (panics past the page: a test's mistake).
    pub fn poke(&self, i: usize, v: u32) {
        assert!(i < 1024, "dword {i} is past the page");
        // SAFETY: inside the leaked page; volatile, as the device may read.
        unsafe { core::ptr::write_volatile((self as *const Page4k as *mut u32).add(i), v) };
    }

    /// Dword `i` as the device left it.
    pub fn peek(&self, i: usize) -> u32 {
        // SAFETY: inside the page; volatile, as the device may write.
        unsafe { core::ptr::read_volatile(&self.0[i]) }
    }
}
