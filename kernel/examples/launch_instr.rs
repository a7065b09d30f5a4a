//! N launches of a real kernel (vadd from the checked-in fuzz corpus,
//! gfx1100 code object v5: 4 explicit and 14 hidden arguments), for
//! `cargo xtask kernel-instr` to count under callgrind with
//! `--toggle-collect` on one function per mode, as `bench-instr` counts
//! submit.
//!
//! `prepared` counts [`Prepared::launch`] (arguments as `&[Arg]`) of the
//! same kernel, geometry and arguments (prepared once, before counting);
//! `loaded` counts its typed form, [`Typed::launch`] with
//! `(Buffer, Buffer, Buffer, u32)`: the per-launch work of a loaded
//! kernel that `cargo xtask bench-instr` bounds at 2 × submit. Its arguments are built outside the counted function,
//! as submit's packet is. The signal is reset to 0 outside it too (no CP
//! runs here to complete the dispatch).
//!
//! usage: launch_instr launch|prepare|prepared|loaded|submit N [CODE_OBJECT]

use barebell::aql::packet::KernelDispatchPacket;
use barebell::aql::queue::AqlQueue;
use barebell::aql::signal::SignalMemory;
use barebell_bench::{MEM, NoClock, SLOTS, drain, queue};
use barebell_kernel::launch::{self, Buffer, LaunchContext, Prepared, Typed};
use barebell_kernel::{
    Arg, CodeObject, DeviceImage, Geometry, KernargBuffer, Kernel, Part, Scalar,
};
use std::hint::black_box;
use std::process::ExitCode;

/// One whole launch: check arguments and geometry, write the kernarg
/// segment, build the packet, arm the signal, submit.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "Rust" fn barebell_launch_one(
    q: &AqlQueue<'static, SLOTS>,
    ctx: &LaunchContext,
    k: &Kernel,
    kb: &mut KernargBuffer<'_>,
    signal: &SignalMemory,
) -> bool {
    let g = Geometry::hip([1024, 1, 1], [256, 1, 1], 0);
    let args = [
        Arg::Buffer(0x7f00_0010_0000),
        Arg::Buffer(0x7f00_0020_0000),
        Arg::Buffer(0x7f00_0030_0000),
        Arg::Scalar(Scalar::U32(1 << 18)),
    ];
    launch::launch(q, ctx, k, &g, &args, kb, signal, &NoClock, 1_000).is_ok()
}

/// The same without the submit: kernargs and packet only.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "Rust" fn barebell_prepare_one(
    ctx: &LaunchContext,
    k: &Kernel,
    kb: &mut KernargBuffer<'_>,
    signal: &SignalMemory,
) -> Option<KernelDispatchPacket> {
    let g = Geometry::hip([1024, 1, 1], [256, 1, 1], 0);
    let args = [
        Arg::Buffer(0x7f00_0010_0000),
        Arg::Buffer(0x7f00_0020_0000),
        Arg::Buffer(0x7f00_0030_0000),
        Arg::Scalar(Scalar::U32(1 << 18)),
    ];
    launch::prepare(ctx, k, &g, &args, kb, signal.handle()).ok()
}

/// A launch of a loaded kernel through its prepared launch: patch the
/// explicit arguments, arm the signal, submit.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "Rust" fn barebell_prepared_launch_one(
    q: &AqlQueue<'static, SLOTS>,
    p: &mut Prepared<'_, '_, '_>,
    args: &[Arg<'_>],
) -> bool {
    p.launch(q, args, &NoClock, 1_000).is_ok()
}

/// vadd's arguments as a typed launch takes them.
type VaddArgs = (Buffer, Buffer, Buffer, u32);

/// A launch of a loaded kernel through its typed prepared launch: store
/// the four argument values at their offsets, arm the signal, submit.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "Rust" fn barebell_loaded_launch_one(
    q: &AqlQueue<'static, SLOTS>,
    t: &mut Typed<'_, '_, '_, '_, VaddArgs>,
    args: VaddArgs,
) -> bool {
    t.launch(q, args, &NoClock, 1_000).is_ok()
}

/// `AqlQueue::submit` of a ready packet, as `bench-instr` measures it.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "Rust" fn barebell_kernel_submit_one(
    q: &AqlQueue<'static, SLOTS>,
    p: &KernelDispatchPacket,
) -> bool {
    q.submit(p, &NoClock, 1_000).is_ok()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let default = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fuzz/corpus/code_object/kernels-gfx1100-v5-O2.co"
    );
    let (Some(mode), Some(n)) = (args.get(1), args.get(2).and_then(|s| s.parse::<u64>().ok()))
    else {
        eprintln!("usage: launch_instr launch|prepare|prepared|loaded|submit N [CODE_OBJECT]");
        return ExitCode::FAILURE;
    };
    let path = args.get(3).map_or(default, String::as_str);
    let Ok(bytes) = std::fs::read(path) else {
        eprintln!("launch_instr: cannot read {path}");
        return ExitCode::FAILURE;
    };
    let co = match CodeObject::parse(&bytes) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("launch_instr: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut image = vec![0u8; co.image_size as usize];
    let code = match co.load(
        &Part::NAVI31,
        DeviceImage {
            host: &mut image,
            device_address: 0x7f10_0000_0000,
        },
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("launch_instr: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Ok(k) = code.kernel("vadd") else {
        eprintln!("launch_instr: no vadd kernel");
        return ExitCode::FAILURE;
    };
    let Some(q) = queue() else {
        eprintln!("launch_instr: could not build the queue");
        return ExitCode::FAILURE;
    };
    let ctx = LaunchContext::new(Part::NAVI31, MEM.descriptor_address());
    let signal = SignalMemory::new(0);
    let mut host = vec![0u8; 4096];
    let mut kb = KernargBuffer {
        host: &mut host,
        device_address: 0x7f20_0000_0000,
    };
    let Some(packet) = barebell_prepare_one(&ctx, k, &mut kb, &signal) else {
        eprintln!("launch_instr: the launch is refused");
        return ExitCode::FAILURE;
    };
    let args = [
        Arg::Buffer(0x7f00_0010_0000),
        Arg::Buffer(0x7f00_0020_0000),
        Arg::Buffer(0x7f00_0030_0000),
        Arg::Scalar(Scalar::U32(1 << 18)),
    ];
    let g = Geometry::hip([1024, 1, 1], [256, 1, 1], 0);
    let mut host2 = vec![0u8; 4096];
    let psignal = SignalMemory::new(0);
    let kb2 = KernargBuffer {
        host: &mut host2,
        device_address: 0x7f30_0000_0000,
    };
    let mut prepared = match Prepared::new(&ctx, k, &g, &args, kb2, &psignal) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("launch_instr: prepared launch refused: {e}");
            return ExitCode::FAILURE;
        }
    };
    if mode == "loaded" {
        let mut t = match prepared.typed::<VaddArgs>() {
            Ok(t) => t,
            Err(e) => {
                eprintln!("launch_instr: typed launch refused: {e}");
                return ExitCode::FAILURE;
            }
        };
        let typed_args: VaddArgs = (
            Buffer(0x7f00_0010_0000),
            Buffer(0x7f00_0020_0000),
            Buffer(0x7f00_0030_0000),
            1 << 18,
        );
        for i in 0..n {
            psignal.reset(0);
            if !barebell_loaded_launch_one(black_box(&q), &mut t, black_box(typed_args)) {
                eprintln!("launch_instr: loaded failed at {i}");
                return ExitCode::FAILURE;
            }
            if i % 512 == 511 {
                drain(&q);
            }
        }
        println!("{mode}: {n} done");
        return ExitCode::SUCCESS;
    }
    for i in 0..n {
        let ok = match mode.as_str() {
            "prepared" => {
                psignal.reset(0);
                barebell_prepared_launch_one(black_box(&q), &mut prepared, black_box(&args))
            }
            "launch" => barebell_launch_one(black_box(&q), &ctx, k, &mut kb, &signal),
            "prepare" => barebell_prepare_one(black_box(&ctx), k, &mut kb, &signal).is_some(),
            "submit" => barebell_kernel_submit_one(black_box(&q), black_box(&packet)),
            _ => {
                eprintln!("launch_instr: unknown mode {mode}");
                return ExitCode::FAILURE;
            }
        };
        if !ok {
            eprintln!("launch_instr: {mode} failed at {i}");
            return ExitCode::FAILURE;
        }
        if i % 512 == 511 {
            drain(&q);
        }
    }
    println!("{mode}: {n} done");
    ExitCode::SUCCESS
}
