//! Runs N submissions through either barebell's submit or the C floor, for
//! `cargo xtask bench-instr` to count under callgrind with
//! `--toggle-collect` on the one function per mode.
//!
//! usage: submit-instr barebell|floor|c-protocol|sdma N
//!
//! `sdma` counts one `SdmaQueue::submit_copy` of 4 MiB (the seeds'
//! hipMemcpy size, the most one COPY_LINEAR moves): the packet, a FENCE,
//! the write pointer and the doorbell, the CPU side of a copy.

use barebell::aql::doorbell::Doorbell;
use barebell::aql::packet::{KernelDispatchPacket, Packet};
use barebell::aql::queue::AqlQueue;
use barebell::mem::Dev;
use barebell::sdma::SdmaVersion;
use barebell::sdma::queue::{SdmaMemory, SdmaQueue};
use barebell_bench::{DOORBELL, MEM, NoClock, SLOTS, drain, packet, queue};
use core::ptr::NonNull;
use std::hint::black_box;
use std::process::ExitCode;

/// `struct barebell_c_queue` in floor.c.
#[repr(C)]
struct CQueue {
    ring: *mut u8,
    mask: u64,
    write_index: *mut u64,
    read_index: *mut u64,
    doorbell: *mut u64,
}

unsafe extern "C" {
    fn barebell_floor_submit(slot: *mut u8, packet: *const u8, doorbell: *mut u64, id: u64);
    fn barebell_floor_protocol_submit(q: *const CQueue, packet: *const u8) -> i32;
}

/// SDMA's measured unit: one copy submission (packets, fence, publish).
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "Rust" fn barebell_sdma_submit_one(
    q: &mut BenchSdma,
    src: u64,
    dst: u64,
    bytes: u64,
) -> bool {
    q.submit_copy(src, dst, bytes, 1_000).is_ok()
}

/// The SDMA queue: ring and pointers in leaked memory (device-visible on
/// a GPU), its doorbell the static [`DOORBELL`].
type BenchSdma = SdmaQueue<'static, NoClock, fn()>;

fn sdma_queue() -> Option<(BenchSdma, &'static SdmaMemory)> {
    let leaked: &'static SdmaMemory = Box::leak(Box::new(SdmaMemory::new()));
    // SAFETY: leaked, so it outlives every use; nothing but this process
    // reads it (no device).
    let mem = unsafe { Dev::assume(leaked) };
    // SAFETY: a static slot, accessed only atomically.
    let d = unsafe { Doorbell::from_ptr(NonNull::from(&DOORBELL).cast()) }.ok()?;
    static CLOCK: NoClock = NoClock;
    let pause: fn() = || {};
    Some((
        SdmaQueue::new(mem, d, SdmaVersion::V6_0, &CLOCK, pause),
        leaked,
    ))
}

/// The measured unit for barebell: one `AqlQueue::submit`.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "Rust" fn barebell_submit_one(
    q: &AqlQueue<'static, SLOTS>,
    p: &KernelDispatchPacket,
) -> bool {
    q.submit(p, &NoClock, 1_000).is_ok()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(mode), Some(n)) = (args.get(1), args.get(2).and_then(|s| s.parse::<u64>().ok()))
    else {
        eprintln!("usage: submit-instr barebell|floor|c-protocol N");
        return ExitCode::FAILURE;
    };
    let (Some(q), Some(p)) = (queue(), packet()) else {
        eprintln!("submit-instr: could not build the queue");
        return ExitCode::FAILURE;
    };
    match mode.as_str() {
        "barebell" => {
            for i in 0..n {
                if !barebell_submit_one(black_box(&q), black_box(&p)) {
                    eprintln!("submit-instr: submit failed at {i}");
                    return ExitCode::FAILURE;
                }
                if i % 512 == 511 {
                    drain(&q);
                }
            }
        }
        "floor" => {
            let ring = MEM.ring_address() as *mut u8;
            for i in 0..n {
                let slot = ring.wrapping_add(((i as usize) & (SLOTS - 1)) * 64);
                // SAFETY: `slot` is one of the ring's 64-byte slots in a
                // static; the packet is 64 bytes; the doorbell is a static
                // u64. Nothing else runs concurrently.
                unsafe {
                    barebell_floor_submit(
                        black_box(slot),
                        p.bytes().as_ptr(),
                        DOORBELL.as_ptr(),
                        i,
                    );
                }
            }
        }
        "c-protocol" => {
            let cq = CQueue {
                ring: MEM.ring_address() as *mut u8,
                mask: SLOTS as u64 - 1,
                write_index: MEM.write_index_address() as *mut u64,
                read_index: MEM.read_index_address() as *mut u64,
                doorbell: DOORBELL.as_ptr(),
            };
            for i in 0..n {
                // SAFETY: every pointer in `cq` points into statics that
                // outlive the loop; nothing else runs concurrently.
                if unsafe { barebell_floor_protocol_submit(black_box(&cq), p.bytes().as_ptr()) }
                    == 0
                {
                    eprintln!("submit-instr: C protocol submit found the ring full at {i}");
                    return ExitCode::FAILURE;
                }
                if i % 512 == 511 {
                    drain(&q);
                }
            }
        }
        "sdma" => {
            let Some((mut sq, mem)) = sdma_queue() else {
                eprintln!("submit-instr: could not build the SDMA queue");
                return ExitCode::FAILURE;
            };
            for i in 0..n {
                if !barebell_sdma_submit_one(
                    black_box(&mut sq),
                    0x7f00_0000_0000,
                    0x7f00_1000_0000,
                    4 << 20,
                ) {
                    eprintln!("submit-instr: SDMA submit failed at {i}");
                    return ExitCode::FAILURE;
                }
                // The engine's part: everything written was consumed.
                mem.rptr
                    .store(sq.wptr(), std::sync::atomic::Ordering::Release);
            }
        }
        _ => {
            eprintln!("submit-instr: unknown mode {mode}");
            return ExitCode::FAILURE;
        }
    }
    println!(
        "{mode}: {n} submits, doorbell {}",
        DOORBELL.load(std::sync::atomic::Ordering::Relaxed)
    );
    ExitCode::SUCCESS
}
