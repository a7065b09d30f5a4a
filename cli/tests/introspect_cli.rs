//! `barebell regs`, `queue dump`, `ring decode` and `bringup --shell` on
//! the model, as a user runs them.
//!
//! Expected values come from outside the code under test: register
//! offsets, field positions and masks as read by hand off Linux 6.12's
//! `gc_11_0_0_offset.h` / `_sh_mask.h`, the VMID Linux gives KFD queues
//! (`first_kfd_vmid` = 8, `gmc_v11_0_sw_init()`), the slot tinygrad's AM
//! loads its queue into (MEC pipe 0 queue 0), and, for decodes, the values
//! handed to the runtime's encoders.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use barebell::aql::{BarrierKind, BarrierPacket, Dispatch, Fences, SignalHandle};
use barebell_firmware_if::mes_api::{Frame, v11, v12};
use barebell_firmware_if::pm4;
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};
use zerocopy::IntoBytes;

fn barebell(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_barebell"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = barebell(args, "");
    assert_eq!(code, 0, "barebell {args:?}: {err}");
    out
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).unwrap()
}

/// The output of each shell command, split at its `> command` echo.
fn shell(args: &[&str], lines: &[&str]) -> Vec<String> {
    let mut a = vec!["bringup"];
    a.extend(args);
    a.push("--shell");
    let (code, out, err) = barebell(&a, &(lines.join("\n") + "\n"));
    assert_eq!(code, 0, "{err}");
    let mut parts: Vec<String> = out.split("\n> ").map(String::from).collect();
    parts.remove(0);
    assert_eq!(parts.len(), lines.len(), "{out}");
    for (p, l) in parts.iter().zip(lines) {
        assert!(p.starts_with(l), "{p} vs {l}");
    }
    parts
}

#[test]
fn read_by_linux_name_with_fields_from_sh_mask() {
    let out = ok(&["regs", "read", "GC.CP_HQD_ACTIVE", "--mapping", "direct"]);
    // regCP_HQD_ACTIVE 0x1fab, BASE_IDX 0; ACTIVE bit 0, BUSY_GATE bit 1.
    assert!(out.contains("seg 0 + 0x1fab"), "{out}");
    assert!(out.contains("ACTIVE    [0]"), "{out}");
    assert!(out.contains("BUSY_GATE [1]"), "{out}");
    // The model's bases are Navi21's: GC segment 0 at 0x1260 dwords.
    let v = json(&["regs", "read", "GC.CP_HQD_ACTIVE", "--json"]);
    assert_eq!(v["byte_offset"], (0x1260 + 0x1fab) * 4);
    // MP0 as Linux spells it: the IFWI-ready bit discovery waited for
    // (regMP0_SMN_C2PMSG_33 0x0061, BASE_IDX 0; bit 31).
    let v = json(&["regs", "read", "MP0.MP0_SMN_C2PMSG_33", "--json"]);
    assert_eq!(v["offset"], 0x61);
    assert_eq!(v["value"].as_u64().unwrap() >> 31, 1);
}

#[test]
fn a_banked_register_reads_per_instance() {
    // Direct mapping: the queue sits in MEC pipe 0 queue 0 (tinygrad's
    // slot) with VMID 8; every other slot's HQD is idle.
    let q0 = json(&[
        "regs",
        "read",
        "GC.CP_HQD_VMID",
        "--me",
        "1",
        "--pipe",
        "0",
        "--queue",
        "0",
        "--mapping",
        "direct",
        "--json",
    ]);
    assert_eq!(q0["fields"]["VMID"], 8);
    let active = |queue: &str| {
        json(&[
            "regs",
            "read",
            "GC.CP_HQD_ACTIVE.ACTIVE",
            "--me",
            "1",
            "--pipe",
            "0",
            "--queue",
            queue,
            "--mapping",
            "direct",
            "--json",
        ])["value"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(active("0"), 1);
    assert_eq!(active("1"), 0);
    // Discovery instances: SDMA0 has two on navi31, GC one.
    let (code, _, err) = barebell(&["regs", "read", "SDMA0.X", "--instance", "2"], "");
    assert_ne!(code, 0);
    assert!(err.contains("SDMA0 has 2 instance(s)"), "{err}");
    let (_, _, err) = barebell(&["regs", "read", "GC.CP_STAT", "--instance", "1"], "");
    assert!(err.contains("GC has 1 instance(s)"), "{err}");
    let (_, _, err) = barebell(&["regs", "read", "GC.CP_STAT", "--xcc", "1"], "");
    assert!(err.contains("XCC 1"), "{err}");
}

#[test]
fn glob_lists_like_umr() {
    let out = ok(&["regs", "read", "GC.CP_HQD_PQ_WPTR_*"]);
    // gc_11_0_0_offset.h: CP_HQD_PQ_WPTR_POLL_ADDR(_HI), _LO, _HI.
    assert!(out.starts_with("4 registers of GC 11.0.0"), "{out}");
    for r in [
        "CP_HQD_PQ_WPTR_POLL_ADDR ",
        "CP_HQD_PQ_WPTR_POLL_ADDR_HI",
        "CP_HQD_PQ_WPTR_LO",
        "CP_HQD_PQ_WPTR_HI",
    ] {
        assert!(out.contains(&format!("GC.{r}")), "{r}: {out}");
    }
    let (code, _, err) = barebell(&["regs", "read", "GC.NO_SUCH_*"], "");
    assert_ne!(code, 0);
    assert!(err.contains("no register matches"), "{err}");
}

#[test]
fn a_field_write_changes_only_that_field() {
    let sel = "--me 1 --pipe 0 --queue 0 --json";
    let p = shell(
        &["--mapping", "direct"],
        &[
            &format!("regs read GC.CP_HQD_PQ_CONTROL {sel}"),
            &format!("regs write GC.CP_HQD_PQ_CONTROL.QUEUE_SIZE 5 {sel}"),
            &format!("regs read GC.CP_HQD_PQ_CONTROL {sel}"),
        ],
    );
    let body = jline;
    let before = body(&p[0])["value"].as_u64().unwrap();
    let after = body(&p[2])["value"].as_u64().unwrap();
    // CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK 0x0000003F.
    assert_eq!(after, before & !0x3f | 5);
    assert_ne!(before & 0x3f, 5);
    assert_eq!(body(&p[1])["after"].as_u64().unwrap(), after);
    // A field value wider than the field is refused.
    let p = shell(
        &["--mapping", "direct"],
        &["regs write GC.CP_HQD_ACTIVE.ACTIVE 2 --me 1"],
    );
    assert!(p[0].contains("error: 0x2 does not fit"), "{}", p[0]);
}

#[test]
fn writes_to_a_gpu_need_force_and_nothing_is_opened_without_it() {
    let (code, _, err) = barebell(
        &[
            "regs",
            "write",
            "GC.CP_HQD_ACTIVE",
            "0",
            "--vfio",
            "0000:00:00.0",
        ],
        "",
    );
    assert_ne!(code, 0);
    assert!(err.contains("needs --force"), "{err}");
    let (_, _, err) = barebell(&["queue", "dump", "--sysfs", "0000:00:00.0"], "");
    assert!(err.contains("UNVERIFIED ON HARDWARE"), "{err}");
}

#[test]
fn queue_dump_agrees_then_disagrees_when_the_hqd_is_poked() {
    for mapping in ["direct", "kiq", "mes"] {
        let v = json(&["queue", "dump", "--mapping", mapping, "--json"]);
        let q = &v.as_array().unwrap()[0];
        assert_eq!(q["agree"], true, "{mapping}: {q}");
        assert_eq!(q["aql"], true);
        // A 256-slot AQL ring: 16 KiB.
        assert_eq!(q["ring_bytes"], 256 * 64);
        // The first barrier was consumed: read index = write index = 1.
        assert_eq!(q["rptr_report"]["value"], 1);
        assert_eq!(q["wptr_poll"]["value"], 1);
    }
    let p = shell(
        &["--mapping", "direct"],
        &[
            "queue dump",
            "regs write GC.CP_HQD_PQ_BASE 0x1234 --me 1 --pipe 0 --queue 0",
            "queue dump",
            "queue dump --json",
        ],
    );
    assert!(p[0].contains("MQD and HQD agree on every configuration register"));
    assert!(
        p[2].contains("MQD and HQD DISAGREE on CP_HQD_PQ_BASE"),
        "{}",
        p[2]
    );
    assert!(p[2].contains("0x00001234  !"), "{}", p[2]);
    let v: Value = jline(&p[3]);
    assert_eq!(v[0]["disagree"], serde_json::json!(["CP_HQD_PQ_BASE"]));
}

/// The one-line JSON a shell command printed after its echo.
fn jline(part: &str) -> Value {
    serde_json::from_str(part.lines().nth(1).unwrap()).unwrap()
}

fn kinds(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap().to_string())
        .collect()
}

fn field(p: &Value, name: &str) -> u64 {
    p["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f[0] == name)
        .unwrap_or_else(|| panic!("{name} in {p}"))[1]
        .as_u64()
        .unwrap()
}

#[test]
fn the_kiq_ring_holds_what_the_runtime_sent() {
    let p = shell(
        &["--mapping", "kiq"],
        &[
            "queue dump --json",
            "queue unmap",
            "ring decode --queue 3.1.0 --json",
        ],
    );
    let dump: Value = jline(&p[0]);
    let ring: Value = jline(&p[2]);
    assert_eq!(
        kinds(&ring),
        [
            "MAP_QUEUES",
            "WRITE_DATA",
            "SET_RESOURCES",
            "WRITE_DATA",
            "MAP_QUEUES",
            "WRITE_DATA",
            "UNMAP_QUEUES",
            "WRITE_DATA"
        ]
    );
    let map = &ring[4];
    // gfx11_kiq_map_queues() leaves the packet's VMID 0: the MQD carries
    // the queue's VMID (8, KFD's first).
    assert_eq!(field(map, "vmid"), 0);
    assert_eq!(dump[0]["vmid"], 8);
    assert_eq!(field(map, "me"), 1);
    assert_eq!(
        field(map, "mqd_addr"),
        dump[0]["mqd_address"].as_u64().unwrap()
    );
    // The packet holds the doorbell's dword offset; the dump names the
    // 64-bit slot (two dwords each).
    assert_eq!(
        field(map, "doorbell_offset"),
        dump[0]["doorbell_slot"].as_u64().unwrap() * 2
    );
    assert_eq!(
        field(&ring[6], "doorbell_offset0"),
        field(map, "doorbell_offset")
    );
    // The fences count up.
    let seq: Vec<u64> = [1, 3, 5, 7]
        .iter()
        .map(|&i| field(&ring[i], "data"))
        .collect();
    assert_eq!(seq, [1, 2, 3, 4]);
}

#[test]
fn the_mes_ring_holds_what_the_runtime_sent() {
    for (part, extra) in [("navi31", None), ("navi48", Some("SET_HW_RSRC_1"))] {
        let p = shell(
            &["--mapping", "kiq", "--part", part],
            &["queue dump --json", "ring decode --queue 3.1.0 --json"],
        );
        let dump: Value = jline(&p[0]);
        let mqd = dump[0]["mqd_address"].as_u64().unwrap();
        let ring: Value = jline(&p[1]);
        let k = kinds(&ring);
        if part == "navi31" {
            // gfx11: the KIQ speaks PM4; MES's own ring is the one the
            // first MAP_QUEUES (engine_sel 5) mapped.
            assert_eq!(field(&ring[0], "engine_sel"), 5);
            let mes_mqd = field(&ring[0], "mqd_addr");
            let p = shell(
                &["--mapping", "mes", "--part", part],
                &[
                    "queue dump --json",
                    "queue unmap",
                    &format!("ring decode --queue mqd@{mes_mqd:#x} --json"),
                ],
            );
            let dump: Value = jline(&p[0]);
            let ring: Value = jline(&p[2]);
            let k = kinds(&ring);
            for want in [
                "SET_HW_RSRC",
                "QUERY_SCHEDULER_STATUS",
                "ADD_QUEUE",
                "REMOVE_QUEUE",
            ] {
                assert!(k.iter().any(|x| x == want), "{want}: {k:?}");
            }
            let add = ring
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["kind"] == "ADD_QUEUE")
                .unwrap();
            assert_eq!(
                field(add, "mqd_addr"),
                dump[0]["mqd_address"].as_u64().unwrap()
            );
            assert_eq!(field(add, "flags.is_aql_queue"), 1);
            // PASID 0x8001, the process id the bring-up registers.
            assert_eq!(field(add, "process_id"), 0x8001);
        } else {
            // gfx12 uni-MES: the KIQ pipe speaks the MES API; the user
            // queue is a legacy KQ added there.
            assert!(k.iter().any(|x| Some(x.as_str()) == extra), "{k:?}");
            let add = ring
                .as_array()
                .unwrap()
                .iter()
                .rfind(|p| p["kind"] == "ADD_QUEUE")
                .unwrap();
            assert_eq!(field(add, "mqd_addr"), mqd);
            assert_eq!(field(add, "flags.map_legacy_kq"), 1);
        }
    }
}

fn decode_file(bytes: &[u8], args: &[&str]) -> Value {
    let path = std::env::temp_dir().join(format!(
        "barebell-ring-{}-{}.bin",
        std::process::id(),
        args.join("_")
    ));
    std::fs::write(&path, bytes).unwrap();
    let mut a = vec!["ring", "decode", path.to_str().unwrap(), "--json"];
    a.extend(args);
    let v = json(&a);
    std::fs::remove_file(&path).unwrap();
    v
}

/// Every AQL packet the runtime builds, encoded by the runtime, decoded by
/// the model's decoder, fields compared with the encoder's inputs.
#[test]
fn aql_packets_the_runtime_builds_decode_by_name() {
    let d = Dispatch {
        grid: [1024, 4, 1],
        workgroup: [64, 2, 1],
        kernel_object: 0x7000_1000,
        kernarg_address: 0x7000_2000,
        private_segment_size: 16,
        group_segment_size: 512,
        completion_signal: SignalHandle(0x7000_3000),
        fences: Fences::SYSTEM,
    }
    .packet()
    .unwrap();
    let b = BarrierPacket::new(
        BarrierKind::And,
        &[SignalHandle(0x11), SignalHandle(0x22)],
        SignalHandle(0x33),
        Fences::SYSTEM,
    )
    .unwrap();
    let o = BarrierPacket::new(
        BarrierKind::Or,
        &[SignalHandle(0x44)],
        SignalHandle(0x55),
        Fences::SYSTEM,
    )
    .unwrap();
    let mut bytes = d.as_bytes().to_vec();
    bytes.extend(b.as_bytes());
    bytes.extend(o.as_bytes());
    let v = decode_file(&bytes, &["--format", "aql"]);
    assert_eq!(kinds(&v), ["KERNEL_DISPATCH", "BARRIER_AND", "BARRIER_OR"]);
    let k = &v[0];
    assert_eq!(field(k, "dimensions"), 2);
    assert_eq!(field(k, "grid_size_x"), 1024);
    assert_eq!(field(k, "grid_size_y"), 4);
    assert_eq!(field(k, "workgroup_size_x"), 64);
    assert_eq!(field(k, "workgroup_size_y"), 2);
    assert_eq!(field(k, "private_segment_size"), 16);
    assert_eq!(field(k, "group_segment_size"), 512);
    assert_eq!(field(k, "kernel_object"), 0x7000_1000);
    assert_eq!(field(k, "kernarg_address"), 0x7000_2000);
    assert_eq!(field(k, "completion_signal"), 0x7000_3000);
    // hsa_fence_scope_t SYSTEM = 2 on both sides.
    assert_eq!(field(k, "acquire_fence_scope"), 2);
    assert_eq!(field(k, "release_fence_scope"), 2);
    assert_eq!(field(&v[1], "dep_signal"), 0x11);
    assert_eq!(field(&v[1], "completion_signal"), 0x33);
    assert_eq!(field(&v[2], "completion_signal"), 0x55);
}

/// The PM4 packets the runtime's KIQ client sends.
#[test]
fn pm4_packets_the_runtime_builds_decode_by_name() {
    let mut w: Vec<u32> = Vec::new();
    w.extend(pm4::set_resources(0x0303_0303));
    w.extend(pm4::map_queues(
        pm4::QueueEngine::Compute,
        2,
        5,
        0x1a,
        0x1234_5000,
        0x1234_6000,
    ));
    w.extend(pm4::unmap_queues(
        pm4::unmap_action::RESET_QUEUES,
        false,
        0x1a,
        (0, 0),
    ));
    w.extend(pm4::write_data(0, pm4::write_dst::MEMORY, true, 0x9000, 7));
    let v = decode_file(w.as_bytes(), &["--format", "pm4"]);
    assert_eq!(
        kinds(&v),
        ["SET_RESOURCES", "MAP_QUEUES", "UNMAP_QUEUES", "WRITE_DATA"]
    );
    assert_eq!(field(&v[0], "queue_mask"), 0x0303_0303);
    assert_eq!(field(&v[1], "pipe"), 2);
    assert_eq!(field(&v[1], "queue"), 5);
    assert_eq!(field(&v[1], "doorbell_offset"), 0x1a);
    assert_eq!(field(&v[1], "mqd_addr"), 0x1234_5000);
    assert_eq!(field(&v[1], "wptr_addr"), 0x1234_6000);
    assert_eq!(field(&v[2], "action"), 1);
    assert_eq!(field(&v[2], "doorbell_offset0"), 0x1a);
    assert_eq!(field(&v[3], "addr"), 0x9000);
    assert_eq!(field(&v[3], "data"), 7);
    assert_eq!(field(&v[3], "dst_sel"), 5);
}

/// SUSPEND and RESUME, which the runtime's scheduler client can send but
/// the bring-up does not: frames built on the runtime's interface types.
#[test]
fn mes_suspend_and_resume_decode_by_name() {
    fn frames<S: Frame, R: Frame>(
        s: S,
        r: R,
        flags: impl Fn(&mut S),
        rflags: impl Fn(&mut R),
    ) -> Vec<u8> {
        let (mut s, mut r) = (s, r);
        flags(&mut s);
        rflags(&mut r);
        let mut b = s.as_bytes().to_vec();
        b.extend(r.as_bytes());
        b
    }
    let b11 = frames(
        v11::Suspend::new(),
        v11::Resume::new(),
        |s| {
            s.flags = v11::SuspendFlags::new()
                .with_suspend_all_gangs(true)
                .into_bits()
                .into();
            s.suspend_fence_addr = 0x5000u64.into();
            s.suspend_fence_value = 9u32.into();
        },
        |r| {
            r.flags = v11::ResumeFlags::new()
                .with_resume_all_gangs(true)
                .into_bits()
                .into();
        },
    );
    let b12 = frames(
        v12::Suspend::new(),
        v12::Resume::new(),
        |s| {
            s.flags = v12::SuspendFlags::new()
                .with_suspend_all_gangs(true)
                .into_bits()
                .into();
            s.suspend_fence_addr = 0x5000u64.into();
            s.suspend_fence_value = 9u32.into();
        },
        |r| {
            r.flags = v12::ResumeFlags::new()
                .with_resume_all_gangs(true)
                .into_bits()
                .into();
        },
    );
    for (b, g) in [(b11, "gfx11"), (b12, "gfx12")] {
        let v = decode_file(&b, &["--format", "mes", "--gen", g]);
        assert_eq!(kinds(&v), ["SUSPEND", "RESUME"], "{g}");
        assert_eq!(field(&v[0], "suspend_all_gangs"), 1);
        assert_eq!(field(&v[0], "suspend_fence_addr"), 0x5000);
        assert_eq!(field(&v[0], "suspend_fence_value"), 9);
        assert_eq!(field(&v[1], "resume_all_gangs"), 1);
    }
}

#[test]
fn the_shell_reports_bad_lines_and_goes_on() {
    let p = shell(
        &["--mapping", "direct"],
        &["bogus", "regs read GC.NOPE", "regs read GC.CP_STAT.NOPE"],
    );
    assert!(p[0].contains("error: unrecognized subcommand"), "{}", p[0]);
    assert!(p[1].contains("error: GC has no register NOPE"), "{}", p[1]);
    assert!(
        p[2].contains("error: CP_STAT has no field NOPE"),
        "{}",
        p[2]
    );
}

/// Every SDMA packet the runtime's encoders build (`runtime/src/sdma/pkt.rs`),
/// decoded by the engine model's own decoder through `ring decode
/// --format sdma`, on both engines: COPY_LINEAR is 7 dwords on 6.0 (gfx11)
/// and 8 on 7.0 (gfx12). Expected values are the encoder inputs.
#[test]
fn sdma_packets_the_runtime_builds_decode_by_name() {
    use barebell::sdma::SdmaVersion;
    use barebell::sdma::pkt::Packet as P;
    for (v, gen_arg, copy_bytes) in [
        (SdmaVersion::V6_0, "gfx11", 28),
        (SdmaVersion::V7_0, "gfx12", 32),
    ] {
        let packets = [
            P::copy_linear(v, 0x1_0000_1000, 0x6000_0000_2000, 4096),
            P::constant_fill(v, 0x6000_0000_3000, 0xdead_beef, 64),
            P::fence(v, 0x2000_0020_4000, 5),
            P::trap(3),
            P::poll_mem(0x2000_0020_5000, 1, 0xffff_ffff, 3, 10, 0xfff),
            P::timestamp_global(0x2000_0020_6000),
            P::atomic(47, 0x2000_0020_7000, 1, 0),
            P::nop(2),
        ];
        let mut w: Vec<u32> = Vec::new();
        for p in &packets {
            w.extend(p.dwords());
        }
        let v = decode_file(w.as_bytes(), &["--format", "sdma", "--gen", gen_arg]);
        assert_eq!(
            kinds(&v),
            [
                "COPY_LINEAR",
                "CONSTANT_FILL",
                "FENCE",
                "TRAP",
                "POLL_REGMEM",
                "TIMESTAMP",
                "ATOMIC",
                "NOP"
            ],
            "{gen_arg}"
        );
        assert_eq!(v[0]["bytes"], copy_bytes, "{gen_arg}");
        assert_eq!(field(&v[0], "bytes"), 4096);
        assert_eq!(field(&v[0], "src"), 0x1_0000_1000);
        assert_eq!(field(&v[0], "dst"), 0x6000_0000_2000);
        assert_eq!(field(&v[1], "dst"), 0x6000_0000_3000);
        assert_eq!(field(&v[1], "data"), 0xdead_beef);
        assert_eq!(field(&v[1], "bytes"), 64);
        assert_eq!(field(&v[2], "addr"), 0x2000_0020_4000);
        assert_eq!(field(&v[2], "data"), 5);
        assert_eq!(field(&v[3], "int_context"), 3);
        assert_eq!(field(&v[4], "addr"), 0x2000_0020_5000);
        assert_eq!(field(&v[4], "func"), 3);
        assert_eq!(field(&v[4], "mem_poll"), 1);
        assert_eq!(field(&v[4], "interval"), 10);
        assert_eq!(field(&v[4], "retry_count"), 0xfff);
        assert_eq!(field(&v[5], "addr"), 0x2000_0020_6000);
        assert_eq!(field(&v[6], "atomic_op"), 47);
        assert_eq!(field(&v[6], "addr"), 0x2000_0020_7000);
        assert_eq!(field(&v[6], "src_data"), 1);
        assert_eq!(field(&v[7], "count"), 1);
    }
}

/// Every introspection command that brings a device up tears it down on
/// the way out (on a GPU that clears bus mastering): the teardown and
/// the model's check are on stderr, stdout stays the answer.
#[test]
fn every_introspection_command_tears_down() {
    for args in [
        &[
            "regs",
            "read",
            "GC.CP_HQD_ACTIVE",
            "--me",
            "1",
            "--pipe",
            "0",
            "--queue",
            "0",
        ][..],
        &["regs", "write", "GC.SCRATCH_REG0", "0x1234"][..],
        &["queue", "dump"][..],
        &["ring", "decode", "--queue", "user"][..],
        &["queue", "dump", "--mapping", "direct"][..],
    ] {
        let (code, out, err) = barebell(args, "");
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(!out.contains("teardown"), "{args:?}: stdout: {out}");
        assert!(err.contains("teardown complete"), "{args:?}: {err}");
        assert!(err.contains("model check: quiescent"), "{args:?}: {err}");
    }
}
