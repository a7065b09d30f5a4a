//! Plain OpenCL C (get_global_id, local memory, barrier) built with the
//! recipe docs/kernel.md gives: clang-19 -nogpulib plus
//! gpu-kernels/include/barebell_opencl.h, which defines the work-item and
//! barrier functions from clang's builtins. Without the header the same
//! source does not link (the user's report); with it the kernels run on
//! every model part and compute what the OpenCL C spec says they do,
//! checked against values this test derives itself.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = r#"
// Each workgroup's slice reversed through local memory: every work-item
// reads what another wrote, so the barrier is needed.
kernel void reverse(global float *out, global const float *in) {
  local float tile[256];
  size_t l = get_local_id(0), size = get_local_size(0);
  tile[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tile[size - 1 - l];
}

// Uniform byte and short loads through constant pointers: gfx12 builds
// them as the scalar s_load_u8/i8/u16/i16, which extend to 32 bits.
kernel void subdword(constant uchar *b, constant short *h, global int *out) {
  out[get_global_id(0)] = (int)h[1] * 3 + (int)(ushort)h[2] - (int)h[3] + (int)b[1];
}

kernel void dims(global uint *out) {
  if (get_global_id(0) == 0 && get_global_id(1) == 0) {
    out[0] = get_work_dim();
    out[1] = get_global_size(0);
    out[2] = get_global_size(1);
    out[3] = get_num_groups(0);
    out[4] = get_num_groups(1);
    out[5] = get_local_size(1);
  }
}
"#;

fn dir() -> PathBuf {
    let d =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("opencl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn include() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpu-kernels/include")
}

/// clang-19 as kernel.md's recipe runs it; `header` adds the include.
fn compile(mcpu: &str, header: bool) -> (bool, String, PathBuf) {
    let d = dir();
    let src = d.join("plain.cl");
    std::fs::write(&src, SOURCE).unwrap();
    let out = d.join(format!("plain-{mcpu}-{header}.co"));
    let mut c = Command::new("clang-19");
    c.args(["-target", "amdgcn-amd-amdhsa", "-nogpulib", "-O2"])
        .arg(format!("-mcpu={mcpu}"));
    if header {
        c.arg("-I")
            .arg(include())
            .args(["-include", "barebell_opencl.h"]);
    }
    let o = c
        .args(["-cl-kernel-arg-info", "-x", "cl"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("clang-19 (`cargo xtask deps` installs it)");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        out,
    )
}

fn run(co: &Path, part: &str, mut job: Value) -> Value {
    job["code_object"] = Value::from(co.to_str().unwrap());
    let path = dir().join(format!("{part}-{}.json", job["kernel"].as_str().unwrap()));
    std::fs::write(&path, job.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .arg("run")
        .arg(&path)
        .args(["--part", part, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{part}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&String::from_utf8(out.stdout).unwrap()).unwrap()
}

fn values(v: &Value, name: &str) -> Vec<u64> {
    v["buffers"][name]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as u64)
        .collect()
}

#[test]
fn plain_opencl_needs_the_header_to_link() {
    let (ok, err, _) = compile("gfx1100", false);
    assert!(!ok, "linked without the header");
    assert!(
        err.contains("undefined") && err.contains("get_global_id"),
        "{err}"
    );
}

#[test]
fn plain_opencl_runs_on_every_part_with_the_header() {
    for (mcpu, part) in [
        ("gfx1100", "navi31"),
        ("gfx1201", "navi48"),
        ("gfx942", "mi300x"),
    ] {
        let (ok, err, co) = compile(mcpu, true);
        assert!(ok, "{mcpu}: {err}");
        // 5 workgroups of 64.
        let input: Vec<u32> = (0..320).map(|i| i * 3 + 1).collect();
        let v = run(
            &co,
            part,
            json!({
                "code_object": "", "kernel": "reverse", "grid": [5], "block": [64],
                "buffers": {
                    "out": {"type": "f32", "count": 320, "fill": 0},
                    "in": {"type": "f32", "values": input},
                },
                "args": [{"buffer": "out"}, {"buffer": "in"}]
            }),
        );
        let want: Vec<u64> = (0..320u64)
            .map(|g| u64::from(input[((g / 64) * 64 + 63 - g % 64) as usize]))
            .collect();
        assert_eq!(values(&v, "out"), want, "{part}");
        // A 2-D launch: 3 x 2 workgroups of 8 x 4.
        let v = run(
            &co,
            part,
            json!({
                "code_object": "", "kernel": "dims", "grid": [3, 2], "block": [8, 4],
                "buffers": {"out": {"type": "u32", "count": 6, "fill": 0}},
                "args": [{"buffer": "out"}]
            }),
        );
        assert_eq!(values(&v, "out"), [2, 24, 8, 3, 2, 4], "{part}");
        // gfx942 builds `subdword` with an SDWA byte select the
        // interpreter does not decode (docs/isa.md's gaps).
        if part == "mi300x" {
            continue;
        }
        let (bytes, halves) = ([0x11u8, 0xf3, 0x85, 0x7f], [0x1234i16, -3, -2, 0x7ffe]);
        let v = run(
            &co,
            part,
            json!({
                "code_object": "", "kernel": "subdword", "grid": [1], "block": [32],
                "buffers": {
                    "b": {"type": "u8", "values": bytes},
                    "h": {"type": "i16", "values": halves},
                    "out": {"type": "i32", "count": 32, "fill": 0},
                },
                "args": [{"buffer": "b"}, {"buffer": "h"}, {"buffer": "out"}]
            }),
        );
        let want = -3 * 3 + i64::from(-2i16 as u16) - 0x7ffe + 0xf3;
        let got: Vec<i64> = v["buffers"]["out"]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
        assert!(got.iter().all(|&g| g == want), "{part}: {got:?} vs {want}");
    }
}
