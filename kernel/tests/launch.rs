//! Kernel arguments, dispatch packets and the launch call, on code objects
//! built at test time. Offsets of every argument come from
//! `llvm-readelf --notes`; values come from the launch's own inputs.

// A test crate: helpers outside #[test] functions fail by panicking too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use barebell::aql::doorbell::Doorbell;
use barebell::aql::packet::{FenceScope, PacketHeader, PacketType, SignalHandle};
use barebell::aql::queue::{AqlQueue, QueueConfig, QueueMemory};
use barebell::aql::signal::SignalMemory;
use barebell::time::Clock;
use barebell_kernel::kernarg::{self, ArgWhat};
use barebell_kernel::launch::{self, LaunchContext, LaunchError};
use barebell_kernel::scratch::{ScratchPart, ScratchPlan};
use barebell_kernel::{
    Arg, ArgError, CodeObject, DeviceImage, Geometry, KernargBuffer, LoadedCode, Part, Scalar,
};
use common::*;
use core::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

const BASE: u64 = 0x7f00_0000_0000;
const KERNARGS: u64 = 0x7f00_1000_0000;

fn loaded(b: &Built) -> LoadedCode {
    let co = CodeObject::parse(&b.bytes).unwrap();
    let part = if b.mcpu.starts_with("gfx11") {
        Part::NAVI31
    } else {
        Part::NAVI48
    };
    let mut mem = vec![0u8; co.image_size as usize];
    co.load(
        &part,
        DeviceImage {
            host: &mut mem,
            device_address: BASE,
        },
    )
    .unwrap()
}

fn get(buf: &[u8], offset: u32, size: u32) -> u64 {
    let mut b = [0u8; 8];
    let n = size as usize;
    b[..n].copy_from_slice(&buf[offset as usize..offset as usize + n]);
    u64::from_le_bytes(b)
}

/// Writes the kernargs of `kernel` and returns the segment.
fn kernargs(
    code: &LoadedCode,
    kernel: &str,
    g: &Geometry,
    args: &[Arg<'_>],
    hidden: &barebell_kernel::HiddenValues,
) -> Vec<u8> {
    let k = code.kernel(kernel).unwrap();
    let mut host = vec![0xeeu8; k.meta.kernarg_segment_size as usize];
    let mut buf = KernargBuffer {
        host: &mut host,
        device_address: KERNARGS,
    };
    kernarg::write_kernargs(k, g, args, hidden, &mut buf).unwrap();
    host
}

#[test]
fn implicit_block_counts_and_group_sizes_go_where_the_metadata_says() {
    let mut checked = 0;
    for &(mcpu, cov) in TARGETS.iter().filter(|t| t.1 >= 5) {
        let b = build_cl(KERNELS_CL, mcpu, cov, &[]);
        let code = loaded(&b);
        let offsets = arg_offsets(&b, "dims");
        for (g, dims) in [
            (Geometry::hip([3, 2, 1], [64, 2, 1], 0), 3u64),
            (
                Geometry {
                    grid: [5, 7, 1],
                    block: [32, 4, 1],
                    dims: 2,
                    dynamic_lds: 0,
                },
                2,
            ),
            (
                Geometry {
                    grid: [9, 1, 1],
                    block: [128, 1, 1],
                    dims: 1,
                    dynamic_lds: 0,
                },
                1,
            ),
        ] {
            let seg = kernargs(
                &code,
                "dims",
                &g,
                &[Arg::Buffer(0x1234_5678_9000)],
                &Default::default(),
            );
            for (kind, off, size) in &offsets {
                let v = get(&seg, *off, *size);
                let axis = |c: char| match c {
                    'x' => 0,
                    'y' => 1,
                    _ => 2,
                };
                let want = match kind.as_str() {
                    "global_buffer" => 0x1234_5678_9000,
                    k if k.starts_with("hidden_block_count_") => {
                        u64::from(g.grid[axis(k.chars().last().unwrap())])
                    }
                    k if k.starts_with("hidden_group_size_") => {
                        u64::from(g.block[axis(k.chars().last().unwrap())])
                    }
                    k if k.starts_with("hidden_remainder_") => 0,
                    k if k.starts_with("hidden_global_offset_") => 0,
                    "hidden_grid_dims" => dims,
                    other => panic!("dims kernel has unexpected argument {other}"),
                };
                assert_eq!(v, want, "{mcpu} v{cov} {kind} at {off}");
                checked += 1;
            }
            // Everything between the arguments is zero.
            let covered: std::collections::BTreeSet<usize> = offsets
                .iter()
                .flat_map(|(_, o, s)| *o as usize..(*o + *s) as usize)
                .collect();
            for (i, byte) in seg.iter().enumerate() {
                if !covered.contains(&i) {
                    assert_eq!(*byte, 0, "{mcpu} v{cov} byte {i}");
                }
            }
        }
        // The block counts and group sizes are the ones the kernel reads:
        // LLVM places hidden_block_count_x..z first in the implicit area.
        let names: Vec<&str> = offsets.iter().map(|o| o.0.as_str()).collect();
        assert!(names.contains(&"hidden_block_count_x") && names.contains(&"hidden_group_size_z"));
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn every_hidden_argument_clang_emits_is_filled() {
    // At -O0 the attributor does not prune: LLVM keeps every implicit
    // argument of code object v5/v6 that gfx11/gfx12 can have.
    let hidden = barebell_kernel::HiddenValues {
        queue_ptr: 0x7f55_0000_1000,
        private_base_hi: 0x1111,
        shared_base_hi: 0x2222,
        heap: 0x7f66_0000_0000,
        hostcall_buffer: 0x7f77_0000_0000,
        printf_buffer: 0x7f88_0000_0000,
    };
    let mut kinds = std::collections::BTreeSet::new();
    for &(mcpu, cov) in TARGETS {
        for (src, kernel, args) in [
            (
                KERNELS_CL,
                "withlds",
                vec![Arg::Buffer(0xabc0), Arg::Local(512)],
            ),
            (KERNELS_CL, "empty", vec![]),
            (PRINTF_CL, "p", vec![Arg::Buffer(0xabc0)]),
        ] {
            let b = build_cl(src, mcpu, cov, &["-O0"]);
            let code = loaded(&b);
            let g = Geometry::hip([2, 3, 4], [8, 4, 2], 96);
            let seg = kernargs(&code, kernel, &g, &args, &hidden);
            for (kind, off, size) in arg_offsets(&b, kernel) {
                let v = get(&seg, off, size);
                let want = match kind.as_str() {
                    "global_buffer" => 0xabc0,
                    // The LDS offset: after the kernel's static LDS (0 here).
                    "dynamic_shared_pointer" => 0,
                    "hidden_block_count_x" => 2,
                    "hidden_block_count_y" => 3,
                    "hidden_block_count_z" => 4,
                    "hidden_group_size_x" => 8,
                    "hidden_group_size_y" => 4,
                    "hidden_group_size_z" => 2,
                    "hidden_grid_dims" => 3,
                    "hidden_dynamic_lds_size" => 96,
                    "hidden_queue_ptr" => hidden.queue_ptr,
                    "hidden_heap_v1" => hidden.heap,
                    "hidden_hostcall_buffer" => hidden.hostcall_buffer,
                    "hidden_printf_buffer" => hidden.printf_buffer,
                    "hidden_private_base" => u64::from(hidden.private_base_hi),
                    "hidden_shared_base" => u64::from(hidden.shared_base_hi),
                    k if k.starts_with("hidden_remainder_")
                        || k.starts_with("hidden_global_offset_")
                        || k == "hidden_multigrid_sync_arg"
                        || k == "hidden_default_queue"
                        || k == "hidden_completion_action"
                        || k == "hidden_none" =>
                    {
                        0
                    }
                    other => panic!("{mcpu} v{cov} {kernel}: unexpected argument {other}"),
                };
                assert_eq!(v, want, "{mcpu} v{cov} {kernel} {kind} at {off}");
                kinds.insert(kind);
            }
        }
    }
    for k in [
        "hidden_block_count_x",
        "hidden_group_size_x",
        "hidden_remainder_x",
        "hidden_grid_dims",
        "hidden_global_offset_x",
        "hidden_dynamic_lds_size",
        "hidden_queue_ptr",
        "hidden_heap_v1",
        "hidden_hostcall_buffer",
        "hidden_printf_buffer",
        "hidden_multigrid_sync_arg",
        "hidden_default_queue",
        "hidden_completion_action",
        "dynamic_shared_pointer",
    ] {
        assert!(kinds.contains(k), "no test kernel carried {k}: {kinds:?}");
    }
}

#[test]
fn scalars_land_at_their_offsets() {
    let b = build_cl(KERNELS_CL, "gfx1201", 5, &[]);
    let code = loaded(&b);
    let g = Geometry::hip([1, 1, 1], [1, 1, 1], 0);
    let args = [
        Arg::Scalar(Scalar::I8(-3)),
        Arg::Scalar(Scalar::I16(-300)),
        Arg::Scalar(Scalar::I64(-5_000_000_000)),
        Arg::Scalar(Scalar::F64(2.5)),
        Arg::Buffer(0x5000),
        Arg::Scalar(Scalar::F32(0.25)),
        Arg::Bytes(&[7, 9]),
    ];
    let seg = kernargs(&code, "scalars", &g, &args, &Default::default());
    let offs = arg_offsets(&b, "scalars");
    let want: [u64; 7] = [
        (-3i8) as u8 as u64,
        (-300i16) as u16 as u64,
        (-5_000_000_000i64) as u64,
        2.5f64.to_bits(),
        0x5000,
        u64::from(0.25f32.to_bits()),
        u64::from(u16::from_le_bytes([7, 9])),
    ];
    assert_eq!(offs.len(), 7);
    for ((kind, off, size), w) in offs.iter().zip(want) {
        assert_eq!(get(&seg, *off, *size), w, "{kind} at {off}");
    }
}

#[test]
fn mismatched_arguments_are_refused_before_anything_is_written() {
    let b = build_cl(KERNELS_CL, "gfx1100", 5, &[]);
    let code = loaded(&b);
    let k = code.kernel("vadd").unwrap();
    let g = Geometry::hip([4, 1, 1], [64, 1, 1], 0);
    let good = [
        Arg::Buffer(0x1000),
        Arg::Buffer(0x2000),
        Arg::Buffer(0x3000),
        Arg::Scalar(Scalar::U32(256)),
    ];
    let cases: Vec<(Vec<Arg<'_>>, ArgError, &str)> = vec![
        (
            good[..3].to_vec(),
            ArgError::Count {
                expected: 4,
                given: 3,
            },
            "the kernel takes 4 arguments; 3 were given",
        ),
        (
            vec![good[0], Arg::Scalar(Scalar::U64(5)), good[2], good[3]],
            ArgError::Kind {
                index: 1,
                name: None,
                expected: barebell_kernel::metadata::ValueKind::GlobalBuffer,
                given: ArgWhat::Scalar("u64", 8),
            },
            "argument 1: the kernel expects global_buffer; got a u64 scalar (8 bytes)",
        ),
        (
            vec![good[0], good[1], good[2], Arg::Scalar(Scalar::U64(256))],
            ArgError::Size {
                index: 3,
                name: None,
                expected: 4,
                given: ArgWhat::Scalar("u64", 8),
            },
            "argument 3: the kernel expects 4 bytes by value; got a u64 scalar (8 bytes)",
        ),
        (
            vec![good[0], good[1], good[2], Arg::Buffer(9)],
            ArgError::Kind {
                index: 3,
                name: None,
                expected: barebell_kernel::metadata::ValueKind::ByValue,
                given: ArgWhat::Buffer,
            },
            "argument 3: the kernel expects by_value; got a buffer",
        ),
    ];
    for (args, want, text) in cases {
        let mut host = vec![0xeeu8; 512];
        let mut buf = KernargBuffer {
            host: &mut host,
            device_address: KERNARGS,
        };
        let e = kernarg::write_kernargs(k, &g, &args, &Default::default(), &mut buf).unwrap_err();
        assert_eq!(e, want);
        assert_eq!(e.to_string(), text);
        assert!(
            host.iter().all(|&x| x == 0xee),
            "bytes written before refusing"
        );
    }
    let mut small = vec![0u8; k.meta.kernarg_segment_size as usize - 1];
    let e = kernarg::write_kernargs(
        k,
        &g,
        &good,
        &Default::default(),
        &mut KernargBuffer {
            host: &mut small,
            device_address: KERNARGS,
        },
    )
    .unwrap_err();
    assert!(matches!(e, ArgError::BufferTooSmall { .. }));
    let mut host = vec![0u8; 512];
    let e = kernarg::write_kernargs(
        k,
        &g,
        &good,
        &Default::default(),
        &mut KernargBuffer {
            host: &mut host,
            device_address: KERNARGS + 8,
        },
    )
    .unwrap_err();
    assert_eq!(
        e,
        ArgError::BufferMisaligned {
            address: KERNARGS + 8,
            align: 16
        }
    );
}

static DOORBELL: AtomicU64 = AtomicU64::new(0);

#[derive(Debug)]
struct ZeroClock;
impl Clock for ZeroClock {
    fn now_ns(&self) -> u64 {
        0
    }
}

fn slot_words(mem: &QueueMemory<16>, id: u64) -> [u8; 64] {
    let at = mem.ring_address() + (id % 16) * 64;
    // SAFETY: `at` is one of the ring's 64-byte slots inside `mem`, which
    // outlives this read; the test is the only producer and nothing else
    // writes the ring concurrently.
    unsafe { core::ptr::read_volatile(at as *const [u8; 64]) }
}

#[test]
fn launch_builds_the_packet_hip_style_and_submits_it() {
    let b = build_cl(KERNELS_CL, "gfx1100", 5, &[]);
    let code = loaded(&b);
    let (_, yaml) = notes(&b);
    let mem: &'static QueueMemory<16> = Box::leak(Box::new(QueueMemory::new()));
    // SAFETY: a static u64, only accessed atomically.
    let db = unsafe { Doorbell::from_ptr(NonNull::from(&DOORBELL).cast()) }.unwrap();
    let q = AqlQueue::new(mem, db, QueueConfig::default()).unwrap();
    let signal = SignalMemory::new(0);
    let ctx = LaunchContext::new(Part::NAVI31, mem.descriptor_address());

    let k = code.kernel("withlds").unwrap();
    let mut host = vec![0u8; 4096];
    let mut kb = KernargBuffer {
        host: &mut host,
        device_address: KERNARGS,
    };
    let g = Geometry::hip([4, 2, 1], [64, 1, 1], 1000);
    let done = launch::launch(
        &q,
        &ctx,
        k,
        &g,
        &[Arg::Buffer(0x9000), Arg::Local(256)],
        &mut kb,
        &signal,
        &ZeroClock,
        1_000,
    )
    .unwrap();
    assert_eq!(signal.value(), 1, "the launch arms the signal");
    assert!(!done.is_done());
    assert_eq!(DOORBELL.load(Ordering::Relaxed), done.packet_id);
    let p = slot_words(mem, done.packet_id);
    let u16_at = |o: usize| u16::from_le_bytes([p[o], p[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes(p[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(p[o..o + 8].try_into().unwrap());
    // Offsets from hsa_kernel_dispatch_packet_t (runtime facts).
    let h = PacketHeader::from_bits(u16_at(0));
    assert_eq!(h.packet_type(), PacketType::KernelDispatch);
    assert!(h.barrier());
    assert_eq!(h.acquire(), FenceScope::System);
    assert_eq!(h.release(), FenceScope::System);
    assert_eq!(u16_at(2), 3, "HIP launches are 3-dimensional");
    assert_eq!([u16_at(4), u16_at(6), u16_at(8)], [64, 1, 1]);
    assert_eq!([u32_at(12), u32_at(16), u32_at(20)], [256, 2, 1]);
    let static_lds: u32 = yaml
        .iter()
        .find(|y| y.keys[".name"] == "withlds")
        .unwrap()
        .keys[".group_segment_fixed_size"]
        .parse()
        .unwrap();
    assert_eq!(u32_at(24), 0, "private segment");
    assert_eq!(u32_at(28), static_lds + 256 + 1000, "group segment");
    assert_eq!(u64_at(32), k.descriptor_address);
    assert_eq!(u64_at(40), KERNARGS);
    assert_eq!(SignalHandle(u64_at(56)), signal.handle());
}

#[test]
fn scratch_is_required_for_private_segments() {
    let b = build_cl(KERNELS_CL, "gfx1201", 5, &[]);
    let code = loaded(&b);
    let k = code.kernel("priv").unwrap();
    let (_, yaml) = notes(&b);
    let private: u32 = yaml
        .iter()
        .find(|y| y.keys[".name"] == "priv")
        .unwrap()
        .keys[".private_segment_fixed_size"]
        .parse()
        .unwrap();
    assert!(private > 0);
    let mut ctx = LaunchContext::new(Part::NAVI48, 0x7f00_0000_4000);
    let g = Geometry::hip([2, 1, 1], [64, 1, 1], 0);
    let args = [Arg::Buffer(0x1000), Arg::Scalar(Scalar::I32(3))];
    let mut host = vec![0u8; 1024];
    let mut kb = KernargBuffer {
        host: &mut host,
        device_address: KERNARGS,
    };
    let e = launch::prepare(&ctx, k, &g, &args, &mut kb, SignalHandle::NONE).unwrap_err();
    assert_eq!(
        e,
        LaunchError::NoScratch {
            kernel_bytes: private
        }
    );
    let part = ScratchPart {
        gfx_major: 12,
        xccs: 1,
        compute_units: 64,
        shader_engines: 4,
        max_slots_per_cu: 32,
    };
    let small = ScratchPlan::new(&part, 64).unwrap();
    ctx.scratch = Some(small.grant());
    let e = launch::prepare(&ctx, k, &g, &args, &mut kb, SignalHandle::NONE).unwrap_err();
    // wave32 (metadata .wavefront_size 32) gets 64 * 64 / 32 bytes per lane.
    assert_eq!(
        e,
        LaunchError::ScratchTooSmall {
            kernel_bytes: private,
            queue_bytes: 128
        }
    );
    let fits = ScratchPlan::new(&part, private).unwrap();
    ctx.scratch = Some(fits.grant());
    let p = launch::prepare(&ctx, k, &g, &args, &mut kb, SignalHandle::NONE).unwrap();
    assert_eq!(p.private_segment_size, private);
}

#[test]
fn bad_geometry_is_refused() {
    let b = build_cl(KERNELS_CL, "gfx1100", 6, &[]);
    let code = loaded(&b);
    let k = code.kernel("empty").unwrap();
    let ctx = LaunchContext::new(Part::NAVI31, 0);
    let mut host = vec![0u8; 64];
    let mut kb = KernargBuffer {
        host: &mut host,
        device_address: KERNARGS,
    };
    let (_, yaml) = notes(&b);
    let max: u32 = yaml
        .iter()
        .find(|y| y.keys[".name"] == "empty")
        .unwrap()
        .keys[".max_flat_workgroup_size"]
        .parse()
        .unwrap();
    let cases = [
        (
            Geometry::hip([0, 1, 1], [1, 1, 1], 0),
            LaunchError::Zero {
                what: "grid",
                axis: 0,
            },
        ),
        (
            Geometry::hip([1, 1, 1], [1, 0, 1], 0),
            LaunchError::Zero {
                what: "block",
                axis: 1,
            },
        ),
        (
            Geometry {
                grid: [1, 2, 1],
                block: [1, 1, 1],
                dims: 1,
                dynamic_lds: 0,
            },
            LaunchError::Dims { dims: 1, axis: 1 },
        ),
        (
            Geometry::hip([1 << 30, 1, 1], [8, 1, 1], 0),
            LaunchError::GridOverflow { axis: 0 },
        ),
        (
            Geometry::hip([1, 1, 1], [max + 1, 1, 1], 0),
            LaunchError::WorkgroupTooLarge {
                size: u64::from(max) + 1,
                limit: max,
            },
        ),
        (
            Geometry::hip([1, 1, 1], [1, 1, 1], 64 * 1024 + 1),
            LaunchError::Args(ArgError::Lds {
                needed: 64 * 1024 + 1,
                limit: 64 * 1024,
            }),
        ),
    ];
    for (g, want) in cases {
        assert_eq!(
            launch::prepare(&ctx, k, &g, &[], &mut kb, SignalHandle::NONE).unwrap_err(),
            want
        );
    }
}

/// `prepare()` of `args` into a fresh buffer: the segment and the packet.
fn prepared_by_prepare(
    ctx: &LaunchContext,
    k: &barebell_kernel::Kernel,
    g: &Geometry,
    args: &[Arg<'_>],
    signal: &SignalMemory,
) -> (Vec<u8>, barebell::aql::packet::KernelDispatchPacket) {
    let size = k.meta.kernarg_segment_size as usize;
    let mut host = vec![0xeeu8; size];
    let packet = launch::prepare(
        ctx,
        k,
        g,
        args,
        &mut KernargBuffer {
            host: &mut host,
            device_address: KERNARGS,
        },
        signal.handle(),
    )
    .unwrap();
    (host, packet)
}

fn packet_bytes(p: &barebell::aql::packet::KernelDispatchPacket) -> Vec<u8> {
    use zerocopy::IntoBytes;
    p.as_bytes().to_vec()
}

#[test]
fn prepared_launch_patches_to_what_prepare_writes() {
    let signal = SignalMemory::new(0);
    for (mcpu, cov) in [("gfx1100", 5), ("gfx1201", 6), ("gfx1100", 4)] {
        let b = build_cl(KERNELS_CL, mcpu, cov, &[]);
        let code = loaded(&b);
        let part = if mcpu == "gfx1100" {
            Part::NAVI31
        } else {
            Part::NAVI48
        };
        let ctx = LaunchContext::new(part, 0x7f00_2000_0000);
        let f16 = [0x3cu8, 0x00];
        type Case<'a> = (&'a str, Geometry, Vec<Arg<'a>>, Vec<Arg<'a>>);
        let cases: Vec<Case<'_>> = vec![
            (
                "vadd",
                Geometry::hip([4, 1, 1], [256, 1, 1], 0),
                vec![
                    Arg::Buffer(0x1000),
                    Arg::Buffer(0x2000),
                    Arg::Buffer(0x3000),
                    Arg::Scalar(Scalar::U32(7)),
                ],
                vec![
                    Arg::Buffer(0xa000),
                    Arg::Buffer(0xb000),
                    Arg::Buffer(0xc000),
                    Arg::Scalar(Scalar::U32(1024)),
                ],
            ),
            (
                "dims",
                Geometry {
                    grid: [3, 2, 1],
                    block: [8, 4, 1],
                    dims: 2,
                    dynamic_lds: 0,
                },
                vec![Arg::Buffer(0x1000)],
                vec![Arg::Buffer(0xdead_0000)],
            ),
            (
                "withlds",
                Geometry::hip([4, 2, 1], [64, 1, 1], 1000),
                vec![Arg::Buffer(0x9000), Arg::Local(256)],
                vec![Arg::Buffer(0x9100), Arg::Local(256)],
            ),
            (
                "scalars",
                Geometry::hip([1, 1, 1], [1, 1, 1], 0),
                vec![
                    Arg::Scalar(Scalar::I8(1)),
                    Arg::Scalar(Scalar::I16(2)),
                    Arg::Scalar(Scalar::I64(3)),
                    Arg::Scalar(Scalar::F64(4.0)),
                    Arg::Buffer(0x5000),
                    Arg::Scalar(Scalar::F32(5.0)),
                    Arg::Bytes(&f16),
                ],
                vec![
                    Arg::Scalar(Scalar::I8(-3)),
                    Arg::Scalar(Scalar::I16(-300)),
                    Arg::Scalar(Scalar::I64(-5_000_000_000)),
                    Arg::Scalar(Scalar::F64(2.5)),
                    Arg::Buffer(0x6000),
                    Arg::Scalar(Scalar::F32(0.25)),
                    Arg::Bytes(&[7, 9]),
                ],
            ),
            (
                "empty",
                Geometry::hip([1, 1, 1], [64, 1, 1], 0),
                vec![],
                vec![],
            ),
        ];
        for (name, g, first, second) in &cases {
            let k = code.kernel(name).unwrap();
            let mut host = vec![0x55u8; k.meta.kernarg_segment_size as usize];
            let mut p = launch::Prepared::new(
                &ctx,
                k,
                g,
                first,
                KernargBuffer {
                    host: &mut host,
                    device_address: KERNARGS,
                },
                &signal,
            )
            .unwrap();
            let (want, want_packet) = prepared_by_prepare(&ctx, k, g, first, &signal);
            assert_eq!(
                p.kernargs(),
                &want[..],
                "{mcpu} v{cov} {name}: image as prepared"
            );
            assert_eq!(
                packet_bytes(p.packet()),
                packet_bytes(&want_packet),
                "{name}: packet"
            );
            let got = packet_bytes(p.patch(second).unwrap());
            let (want, want_packet) = prepared_by_prepare(&ctx, k, g, second, &signal);
            assert_eq!(
                p.kernargs(),
                &want[..],
                "{mcpu} v{cov} {name}: image after patching"
            );
            assert_eq!(
                got,
                packet_bytes(&want_packet),
                "{mcpu} v{cov} {name}: packet"
            );
        }

        // Typed: vadd and dims, compared with prepare() and with the
        // offsets llvm-readelf prints.
        let k = code.kernel("vadd").unwrap();
        let g = Geometry::hip([4, 1, 1], [256, 1, 1], 0);
        let mut host = vec![0u8; k.meta.kernarg_segment_size as usize];
        let mut p = launch::Prepared::new(
            &ctx,
            k,
            &g,
            &cases[0].2,
            KernargBuffer {
                host: &mut host,
                device_address: KERNARGS,
            },
            &signal,
        )
        .unwrap();
        let got = packet_bytes(
            p.typed::<(launch::Buffer, launch::Buffer, launch::Buffer, u32)>()
                .unwrap()
                .patch((
                    launch::Buffer(0xa000),
                    launch::Buffer(0xb000),
                    launch::Buffer(0xc000),
                    1024,
                )),
        );
        let (want, want_packet) = prepared_by_prepare(&ctx, k, &g, &cases[0].3, &signal);
        assert_eq!(p.kernargs(), &want[..], "{mcpu} v{cov} vadd typed");
        assert_eq!(got, packet_bytes(&want_packet));
        let offs = arg_offsets(&b, "vadd");
        let explicit: Vec<_> = offs
            .iter()
            .filter(|(k, _, _)| !k.starts_with("hidden"))
            .collect();
        assert_eq!(explicit.len(), 4);
        for ((_, off, size), w) in explicit.iter().zip([0xa000u64, 0xb000, 0xc000, 1024]) {
            assert_eq!(
                get(p.kernargs(), *off, *size),
                w,
                "{mcpu} v{cov} vadd at {off}"
            );
        }
        // Hidden block count x / group size x where the notes put them.
        for (kind, off, size) in &offs {
            match kind.as_str() {
                "hidden_block_count_x" => assert_eq!(get(p.kernargs(), *off, *size), 4),
                "hidden_group_size_x" => assert_eq!(get(p.kernargs(), *off, *size), 256),
                _ => {}
            }
        }
    }
}

#[test]
fn prepared_launch_refuses_mismatched_arguments() {
    let b = build_cl(KERNELS_CL, "gfx1100", 5, &[]);
    let code = loaded(&b);
    let ctx = LaunchContext::new(Part::NAVI31, 0x7f00_2000_0000);
    let signal = SignalMemory::new(0);
    let k = code.kernel("vadd").unwrap();
    let g = Geometry::hip([4, 1, 1], [256, 1, 1], 0);
    let good = [
        Arg::Buffer(1 << 12),
        Arg::Buffer(2 << 12),
        Arg::Buffer(3 << 12),
        Arg::Scalar(Scalar::U32(7)),
    ];
    let mut host = vec![0u8; 512];
    let mut p = launch::Prepared::new(
        &ctx,
        k,
        &g,
        &good,
        KernargBuffer {
            host: &mut host,
            device_address: KERNARGS,
        },
        &signal,
    )
    .unwrap();
    let e = p
        .patch(&[
            Arg::Buffer(1),
            Arg::Scalar(Scalar::U32(1)),
            Arg::Buffer(3),
            Arg::Scalar(Scalar::U32(7)),
        ])
        .unwrap_err();
    assert!(
        matches!(
            &e,
            LaunchError::Args(ArgError::Kind {
                index: 1,
                given: ArgWhat::Scalar("u32", 4),
                ..
            })
        ),
        "{e:?}"
    );
    let e = p
        .patch(&[
            Arg::Buffer(1),
            Arg::Buffer(2),
            Arg::Buffer(3),
            Arg::Scalar(Scalar::U64(7)),
        ])
        .unwrap_err();
    assert!(
        matches!(
            &e,
            LaunchError::Args(ArgError::Size {
                index: 3,
                expected: 4,
                ..
            })
        ),
        "{e:?}"
    );
    let e = p.patch(&good[..3]).unwrap_err();
    assert_eq!(
        e,
        LaunchError::Args(ArgError::Count {
            expected: 4,
            given: 3
        })
    );
    let e = p
        .typed::<(launch::Buffer, launch::Buffer, launch::Buffer, u64)>()
        .unwrap_err();
    assert!(
        matches!(
            &e,
            LaunchError::TypedMismatch {
                index: 3,
                size: 4,
                ..
            }
        ),
        "{e:?}"
    );
    let e = p
        .typed::<(launch::Buffer, u64, launch::Buffer, u32)>()
        .unwrap_err();
    assert!(
        matches!(
            &e,
            LaunchError::TypedMismatch {
                index: 1,
                size: 8,
                ..
            }
        ),
        "{e:?}"
    );
    let e = p.typed::<(launch::Buffer, launch::Buffer)>().unwrap_err();
    assert_eq!(
        e,
        LaunchError::Args(ArgError::Count {
            expected: 4,
            given: 2
        })
    );

    // In flight: the signal still at 1 refuses a launch.
    let mem: &'static QueueMemory<16> = Box::leak(Box::new(QueueMemory::new()));
    static DB2: AtomicU64 = AtomicU64::new(0);
    // SAFETY: a static u64, only accessed atomically.
    let db = unsafe { Doorbell::from_ptr(NonNull::from(&DB2).cast()) }.unwrap();
    let q = AqlQueue::new(mem, db, QueueConfig::default()).unwrap();
    let done = p.launch(&q, &good, &ZeroClock, 1_000).unwrap();
    assert_eq!(
        slot_words(mem, done.packet_id)[40..48],
        KERNARGS.to_le_bytes()
    );
    let e = p.launch(&q, &good, &ZeroClock, 1_000).unwrap_err();
    assert_eq!(e, LaunchError::InFlight { value: 1 });
    signal.reset(0);
    p.launch(&q, &good, &ZeroClock, 1_000).unwrap();

    // withlds: other LDS bytes than prepared are refused.
    let k = code.kernel("withlds").unwrap();
    let g = Geometry::hip([1, 1, 1], [64, 1, 1], 0);
    let s2 = SignalMemory::new(0);
    let mut host = vec![0u8; 512];
    let mut p = launch::Prepared::new(
        &ctx,
        k,
        &g,
        &[Arg::Buffer(0x9000), Arg::Local(256)],
        KernargBuffer {
            host: &mut host,
            device_address: KERNARGS,
        },
        &s2,
    )
    .unwrap();
    assert!(p.patch(&[Arg::Buffer(0x9100), Arg::Local(256)]).is_ok());
    let e = p
        .patch(&[Arg::Buffer(0x9100), Arg::Local(512)])
        .unwrap_err();
    assert_eq!(e, LaunchError::LocalChanged { index: 1 });
    assert!(matches!(
        p.typed::<(launch::Buffer, u32)>(),
        Err(LaunchError::TypedMismatch { index: 1, .. })
    ));
}
