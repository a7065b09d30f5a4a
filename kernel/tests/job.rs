//! The job format against real kernel metadata (built with
//! `-cl-kernel-arg-info`, so LLVM records argument names), without a
//! device: what `barebell run JOB.json` checks before it launches.

// A test crate: helpers outside #[test] functions fail by panicking too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use barebell_kernel::job::{Job, JobError};
use barebell_kernel::kernarg;
use barebell_kernel::{CodeObject, DeviceImage, KernargBuffer, Part};
use common::*;
use std::collections::BTreeMap;

fn job(args: &str) -> String {
    format!(
        r#"{{
          "code_object": "k.co", "kernel": "vadd",
          "grid": [4], "block": [64],
          "buffers": {{
            "a": {{"type": "f32", "values": [1.0, 2.0, 3.0]}},
            "b": {{"type": "f32", "count": 256, "fill": 0.5}},
            "c": {{"type": "f32", "count": 256}}
          }},
          "args": {args}
        }}"#
    )
}

#[test]
fn a_job_is_checked_against_the_kernels_metadata_by_name() {
    for &(mcpu, cov) in TARGETS {
        let b = build_cl(KERNELS_CL, mcpu, cov, &["-cl-kernel-arg-info"]);
        let co = CodeObject::parse(&b.bytes).unwrap();
        let k = co.kernel("vadd").unwrap();
        // Argument names as LLVM recorded them.
        let (_, yaml) = notes(&b);
        let names: Vec<String> = yaml
            .iter()
            .find(|y| y.keys[".name"] == "vadd")
            .unwrap()
            .args
            .iter()
            .filter_map(|a| a.get(".name").cloned())
            .collect();
        assert_eq!(names, ["a", "b", "c", "n"], "{mcpu} v{cov}");

        let good = Job::parse(&job(
            r#"[{"buffer": "a"}, {"buffer": "b"}, {"buffer": "c"}, {"u32": 256}]"#,
        ))
        .unwrap();
        good.check(&k.meta).unwrap();
        assert_eq!(good.geometry.dims, 1);

        let cases = [
            (
                r#"[{"buffer": "a"}, {"buffer": "b"}, {"buffer": "c"}, {"f64": 256}]"#,
                format!(
                    "argument 3 ({}): the kernel expects 4 bytes by value; the job gives a f64 (8 bytes)",
                    names[3]
                ),
            ),
            (
                r#"[{"buffer": "a"}, {"f32": 1.0}, {"buffer": "c"}, {"u32": 256}]"#,
                format!(
                    "argument 1 ({}): the kernel expects a buffer; the job gives a f32 scalar",
                    names[1]
                ),
            ),
            (
                r#"[{"buffer": "a"}, {"buffer": "b"}, {"buffer": "c"}, {"buffer": "a"}]"#,
                format!(
                    "argument 3 ({}): the kernel expects a 4-byte value; the job gives buffer a",
                    names[3]
                ),
            ),
            (
                r#"[{"buffer": "a"}, {"buffer": "b"}, {"buffer": "c"}]"#,
                "kernel vadd takes 4 arguments; the job gives 3".to_string(),
            ),
        ];
        for (args, want) in cases {
            let e = Job::parse(&job(args)).unwrap().check(&k.meta).unwrap_err();
            assert_eq!(e.to_string(), want, "{mcpu} v{cov}");
        }
    }
}

#[test]
fn a_job_becomes_kernargs_at_the_metadata_offsets() {
    let b = build_cl(KERNELS_CL, "gfx1201", 6, &["-cl-kernel-arg-info"]);
    let co = CodeObject::parse(&b.bytes).unwrap();
    let mut mem = vec![0u8; co.image_size as usize];
    let code = co
        .load(
            &Part::NAVI48,
            DeviceImage {
                host: &mut mem,
                device_address: 0x7f00_0000_0000,
            },
        )
        .unwrap();
    let k = code.kernel("vadd").unwrap();
    let j = Job::parse(&job(
        r#"[{"buffer": "a"}, {"buffer": "b"}, {"buffer": "c"}, {"u32": 3}]"#,
    ))
    .unwrap();
    j.check(&k.meta).unwrap();
    let mut addresses = BTreeMap::new();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        addresses.insert(name.to_string(), 0x7f00_1000_0000 + (i as u64) * 0x1_0000);
    }
    let args = j.launch_args(&addresses).unwrap();
    let mut host = vec![0u8; k.meta.kernarg_segment_size as usize];
    kernarg::write_kernargs(
        k,
        &j.geometry,
        &args,
        &Default::default(),
        &mut KernargBuffer {
            host: &mut host,
            device_address: 0x7f00_2000_0000,
        },
    )
    .unwrap();
    let u64_at = |o: u32| u64::from_le_bytes(host[o as usize..o as usize + 8].try_into().unwrap());
    for (kind, off, size) in arg_offsets(&b, "vadd") {
        match kind.as_str() {
            "global_buffer" => assert!(addresses.values().any(|&a| a == u64_at(off))),
            "by_value" => assert_eq!(
                &host[off as usize..(off + size) as usize],
                &3u32.to_le_bytes()
            ),
            "hidden_block_count_x" => assert_eq!(host[off as usize], 4),
            "hidden_group_size_x" => assert_eq!(host[off as usize], 64),
            "hidden_grid_dims" => assert_eq!(host[off as usize], 1, "a 1-entry grid is 1-D"),
            _ => {}
        }
    }
    // The buffers' initial contents and their decoding back to JSON.
    let a = j.buffer_bytes("a").unwrap();
    assert_eq!(a.len(), 12);
    let back = j.decode_buffer("a", &a).unwrap();
    assert_eq!(
        back.iter().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>(),
        [1.0, 2.0, 3.0]
    );
    assert_eq!(j.buffer_bytes("c").unwrap(), vec![0u8; 1024]);
    assert!(matches!(
        Job::parse(&job(r#"[{"buffer": "zz"}]"#)),
        Err(JobError::UnknownBuffer { .. })
    ));
}
