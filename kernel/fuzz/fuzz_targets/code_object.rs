//! Any byte string through the whole loader: parse, target check, load
//! into memory at a fixed address, then kernargs and a packet for every
//! kernel with arguments made up to fit its (hostile) metadata. Every
//! step must return a value or a typed error; nothing may panic.
#![no_main]

use barebell_kernel::kernarg::{Arg, Geometry, KernargBuffer, Scalar};
use barebell_kernel::launch::{self, LaunchContext};
use barebell_kernel::metadata::ValueKind;
use barebell_kernel::{CodeObject, DeviceImage, Part};
use libfuzzer_sys::fuzz_target;

const BASE: u64 = 0x7f00_0000_0000;

fuzz_target!(|data: &[u8]| {
    let Ok(co) = CodeObject::parse(data) else {
        return;
    };
    for part in [Part::NAVI31, Part::NAVI48] {
        let _ = co.check(&part);
    }
    // Keep memory bounded: hostile headers may claim huge images.
    if co.image_size > 4 << 20 {
        return;
    }
    let mut mem = vec![0u8; co.image_size as usize];
    let part = if co.target.mach.name().is_some_and(|n| n.starts_with("gfx12")) {
        Part::NAVI48
    } else {
        Part::NAVI31
    };
    let Ok(code) = co.load(
        &part,
        DeviceImage {
            host: &mut mem,
            device_address: BASE,
        },
    ) else {
        return;
    };
    let ctx = LaunchContext::new(part, 0x7f00_1000_0000);
    for k in &code.kernels {
        let _ = code.kernel(&k.meta.name);
        let args: Vec<Arg<'_>> = k
            .meta
            .explicit_args()
            .map(|(_, m)| match (&m.value_kind, m.size) {
                (ValueKind::GlobalBuffer, _) => Arg::Buffer(0x1000),
                (ValueKind::DynamicSharedPointer, _) => Arg::Local(64),
                (_, 1) => Arg::Scalar(Scalar::U8(1)),
                (_, 2) => Arg::Scalar(Scalar::U16(2)),
                (_, 4) => Arg::Scalar(Scalar::F32(4.0)),
                (_, 8) => Arg::Scalar(Scalar::I64(-8)),
                _ => Arg::Bytes(&[0u8; 16][..(m.size as usize).min(16)]),
            })
            .collect();
        let size = (k.meta.kernarg_segment_size as usize).min(1 << 16);
        let mut host = vec![0u8; size];
        let mut kb = KernargBuffer {
            host: &mut host,
            device_address: 0x7f00_2000_0000,
        };
        for g in [
            Geometry::hip([2, 3, 1], [32, 2, 1], 128),
            Geometry {
                grid: [u32::MAX, 1, 1],
                block: [2, 1, 1],
                dims: 1,
                dynamic_lds: 0,
            },
        ] {
            let _ = launch::prepare(&ctx, k, &g, &args, &mut kb, Default::default());
        }
    }
});
