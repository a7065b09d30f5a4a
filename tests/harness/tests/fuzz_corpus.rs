//! The discovery fuzz target's seeds (`runtime/fuzz/corpus/discovery`)
//! are the model's NAVI31 and NAVI48 tables (built from the IP versions
//! and bases the model cites, not dumped from hardware: no board here),
//! prefixed with the target's mode byte (1: fix checksums after
//! mutation). This test keeps them in step with the model; run with
//! `BAREBELL_WRITE_CORPUS=1` to rewrite them.

use barebell::discovery::Discovery;
use barebell_model::discovery::{NAVI31, NAVI48, build};
use std::path::Path;

#[test]
fn discovery_seeds_are_the_model_tables() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../runtime/fuzz/corpus/discovery");
    for (name, part) in [("navi31", &NAVI31), ("navi48", &NAVI48)] {
        let (table, _) = build(part);
        // The seed parses: the fuzzer starts from a valid table.
        assert!(Discovery::parse(&table).is_ok(), "{name}");
        let mut seed = vec![1u8];
        seed.extend_from_slice(&table);
        let path = dir.join(name);
        if std::env::var_os("BAREBELL_WRITE_CORPUS").is_some() {
            std::fs::write(&path, &seed).unwrap();
        }
        assert_eq!(std::fs::read(&path).unwrap(), seed, "{name} seed is stale");
    }
}

/// The PSP fuzz target's seeds (`runtime/fuzz/corpus/psp`): what the
/// model's PSP answered during the PSP step of a Navi31 and a Navi48
/// bring-up (`psp::load_firmware` with the real firmware-amd-graphics
/// blobs, then the RLC autoload wait). A recording bus between the
/// runtime and the model logs every register value the runtime read and,
/// at each GPCOM doorbell, the fence dword and response the model wrote
/// back; the call sequence is read off the writes the runtime made. The
/// format is the target's (runtime/fuzz/fuzz_targets/psp.rs).
mod psp_seeds {
    use barebell::bus::RegisterBus;
    use barebell::psp::{self, Component, Image, Psp, RING_TYPE_KM};
    use barebell_firmware_if::psp_gfx::{
        CMD_RESP_BYTES, CmdResp, RESP_OFFSET, Resp, cmd_id, ctrl_cmd,
    };
    use barebell_model::psp::PspModel;
    use barebell_model::psp::firmware::{PartFirmware, navi31, navi48};
    use barebell_model_host::psp_rig;
    use std::cell::RefCell;
    use std::path::Path;
    use zerocopy::FromBytes;

    /// The target's op bytes (its `op` module).
    const BOOTLOADER: u8 = 0x10;
    const RING_CREATE: u8 = 0x20;
    const LOAD_TOC: u8 = 0x21;
    const SETUP_TMR: u8 = 0x22;
    const LOAD_IP_FW: u8 = 0x23;
    const AUTOLOAD_RLC: u8 = 0x24;
    const WAIT_RLC_AUTOLOAD: u8 = 0x25;
    const RING_STOP: u8 = 0x26;
    const END: u8 = 0xff;

    struct Rec {
        model: &'static PspModel,
        c35: usize,
        c64: usize,
        c67: usize,
        cmd: *const u8,
        fence: *const u8,
        ops: RefCell<Vec<u8>>,
        answers: RefCell<Vec<u8>>,
        fences: RefCell<Vec<u32>>,
    }

    impl RegisterBus for Rec {
        fn read32(&self, o: usize) -> u32 {
            let v = self.model.read32(o);
            self.answers.borrow_mut().extend(v.to_le_bytes());
            v
        }
        fn write32(&self, o: usize, v: u32) {
            self.model.write32(o, v);
            let mut ops = self.ops.borrow_mut();
            if o == self.c35 {
                let i = Component::ORDER.iter().position(|c| c.command() == v);
                ops.push(BOOTLOADER + i.expect("a bootloader command") as u8);
            } else if o == self.c64 && v == RING_TYPE_KM << 16 {
                ops.push(RING_CREATE);
            } else if o == self.c64 && v == ctrl_cmd::DESTROY_RINGS {
                ops.push(RING_STOP);
            } else if o == self.c67 {
                // SAFETY: the rig's command and fence buffers are host
                // memory of at least 1 KiB and 4 bytes that live as long
                // as the rig; the model wrote them before this returned.
                let (cmd, fence, resp) = unsafe {
                    (
                        std::slice::from_raw_parts(self.cmd, CMD_RESP_BYTES),
                        std::slice::from_raw_parts(self.fence, 4),
                        std::slice::from_raw_parts(self.cmd.add(RESP_OFFSET), size_of::<Resp>()),
                    )
                };
                let c = CmdResp::ref_from_prefix(cmd).unwrap().0;
                match c.cmd_id.get() {
                    cmd_id::LOAD_TOC => ops.push(LOAD_TOC),
                    cmd_id::SETUP_TMR => ops.push(SETUP_TMR),
                    cmd_id::AUTOLOAD_RLC => ops.push(AUTOLOAD_RLC),
                    cmd_id::LOAD_IP_FW => {
                        let t = u32::from_le_bytes(c.cmd[12..16].try_into().unwrap());
                        ops.extend([LOAD_IP_FW, u8::try_from(t).unwrap()]);
                    }
                    other => panic!("unexpected GPCOM command {other:#x}"),
                }
                let mut a = self.answers.borrow_mut();
                a.extend_from_slice(fence);
                a.extend_from_slice(resp);
                self.fences
                    .borrow_mut()
                    .push(u32::from_le_bytes(fence.try_into().unwrap()));
            }
        }
    }

    fn record(part: &PartFirmware, part_byte: u8) -> Vec<u8> {
        let mut r = psp_rig::rig(Path::new("/lib/firmware/amdgpu"), part, |_| {})
            .unwrap_or_else(|e| panic!("{e} (firmware-amd-graphics)"));
        let at = |reg: barebell::regs::Reg| reg.byte_offset(&r.mp0.bases).unwrap();
        let rec = Rec {
            model: r.model,
            c35: at(r.regs.c2pmsg_35),
            c64: at(r.regs.c2pmsg_64),
            c67: at(r.regs.c2pmsg_67),
            cmd: r.gtt.cmd.host.as_ptr(),
            fence: r.gtt.fence.host.as_ptr(),
            ops: RefCell::default(),
            answers: RefCell::default(),
            fences: RefCell::default(),
        };
        let mut images = vec![
            Image {
                fw_type: 0,
                bytes: &[]
            };
            64
        ];
        let n = psp::gfx_images(&r.blobs, &mut images).unwrap();
        images.truncate(n);
        let bufs = r.bufs.take().unwrap();
        let mut p = Psp::new(&rec, r.host, r.regs, &r.mp0.bases, bufs).unwrap();
        psp::load_firmware(
            &mut p,
            r.plan,
            &r.sos,
            Some(r.smu),
            &images,
            Some(&mut r.tmr),
        )
        .unwrap();
        p.wait_rlc_autoload(r.gc_regs, &r.gc.bases).unwrap();
        rec.ops.borrow_mut().push(WAIT_RLC_AUTOLOAD);
        assert_eq!(r.model.refusals(), vec![]);
        // The fence and response were captured after the model wrote
        // them: the n-th command's fence is n.
        let fences = rec.fences.borrow();
        assert!(!fences.is_empty());
        assert!(fences.iter().zip(1..).all(|(&f, n)| f == n), "{fences:?}");
        let mut seed = vec![part_byte];
        seed.extend(rec.ops.borrow().iter());
        seed.push(END);
        seed.extend(rec.answers.borrow().iter());
        seed
    }

    #[test]
    fn psp_seeds_are_the_models_answers() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../runtime/fuzz/corpus/psp");
        for (name, part, byte) in [("navi31", navi31(), 0u8), ("navi48", navi48(), 1)] {
            let seed = record(&part, byte);
            let path = dir.join(name);
            if std::env::var_os("BAREBELL_WRITE_CORPUS").is_some() {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &seed).unwrap();
            }
            assert_eq!(std::fs::read(&path).unwrap(), seed, "{name} seed is stale");
        }
    }
}

/// Writes `seed` to `dir/name` with `BAREBELL_WRITE_CORPUS=1`, and checks
/// the checked-in file is the same bytes otherwise.
fn keep(dir: &str, name: &str, seed: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(dir)
        .join(name);
    if std::env::var_os("BAREBELL_WRITE_CORPUS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, seed).unwrap();
    }
    assert_eq!(std::fs::read(&path).unwrap(), seed, "{name} seed is stale");
}

/// The `ring_decode` target's seeds (`runtime/fuzz/corpus/ring_decode`):
/// packets built by the runtime's and firmware-if's encoders (what the
/// KIQ, SDMA, AQL and MES clients write to their rings), behind the
/// target's format byte (0 PM4, 1 AQL, 2/3/4 SDMA 6/7/4.4.2, 5/6 MES
/// v11/v12). Each seed decodes to named packets only.
#[test]
fn ring_decode_seeds_are_runtime_packets() {
    use barebell::aql::{BarrierKind, BarrierPacket, Dispatch, Fences, SignalHandle};
    use barebell::sdma::SdmaVersion;
    use barebell::sdma::pkt::Packet as Sdma;
    use barebell_decode::{mes_api, ring, sdma::SdmaGen};
    use barebell_firmware_if::mes_api::{Frame, v11, v12};
    use barebell_firmware_if::pm4;
    use zerocopy::IntoBytes;

    let dir = "runtime/fuzz/corpus/ring_decode";
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
    let pm4_bytes = w.as_bytes().to_vec();
    assert!(ring::pm4(&pm4_bytes).iter().all(|p| p.kind != "UNKNOWN"));

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
    let mut aql = d.as_bytes().to_vec();
    aql.extend(b.as_bytes());
    assert!(ring::aql(&aql).iter().all(|p| p.kind != "UNKNOWN"));

    let sdma = |v: SdmaVersion, g: SdmaGen| {
        let mut w: Vec<u32> = Vec::new();
        for p in [
            Sdma::copy_linear(v, 0x1000, 0x2000, 4096),
            Sdma::constant_fill(v, 0x3000, 0xdead_beef, 256),
            Sdma::fence(v, 0x4000, 5),
            Sdma::timestamp_global(0x5000),
            Sdma::trap(0),
            Sdma::nop(2),
        ] {
            w.extend_from_slice(p.dwords());
        }
        let b = w.as_bytes().to_vec();
        assert!(
            ring::sdma(&b, g).iter().all(|p| p.kind != "UNKNOWN"),
            "{v:?}"
        );
        b
    };

    let mut f11 = v11::Suspend::new();
    f11.suspend_fence_addr = 0x5000u64.into();
    let mut mes11 = f11.as_bytes().to_vec();
    mes11.extend(v11::Resume::new().as_bytes());
    assert!(
        ring::mes(&mes11, &mes_api::V11)
            .iter()
            .all(|p| p.kind != "UNKNOWN")
    );
    let mut f12 = v12::Suspend::new();
    f12.suspend_fence_addr = 0x5000u64.into();
    let mut mes12 = f12.as_bytes().to_vec();
    mes12.extend(v12::Resume::new().as_bytes());
    assert!(
        ring::mes(&mes12, &mes_api::V12)
            .iter()
            .all(|p| p.kind != "UNKNOWN")
    );

    for (name, format, bytes) in [
        ("pm4-kiq", 0u8, pm4_bytes),
        ("aql-dispatch-barrier", 1, aql),
        ("sdma-v6", 2, sdma(SdmaVersion::V6_0, SdmaGen::V6)),
        ("sdma-v7", 3, sdma(SdmaVersion::V7_0, SdmaGen::V7)),
        ("sdma-v4_4_2", 4, sdma(SdmaVersion::V4_4_2, SdmaGen::V4_4_2)),
        ("mes-v11", 5, mes11),
        ("mes-v12", 6, mes12),
    ] {
        let mut seed = vec![format];
        seed.extend(bytes);
        keep(dir, name, &seed);
    }
}

/// The `ih` target's seeds (`runtime/fuzz/corpus/ih`): IV entries the
/// model's IH writes for a GFXHUB and an MMHUB fault (soc21 and GC 9.4.3
/// layouts) and an SQ illegal-instruction interrupt, for each IH version,
/// behind register reads of a live IH (0) and write pointers that cover
/// the entries. Format: the target's (runtime/fuzz/fuzz_targets/ih.rs).
#[test]
fn ih_seeds_are_model_iv_entries() {
    use barebell_model::gmc::Access;
    use barebell_model::hub::HubFault;
    use barebell_model::ih::IvEntry;
    use barebell_model::wave::{SqError, SqEvent};

    let fault = HubFault {
        va: 0x7fff_1234_5000,
        vmid: 3,
        access: Access::Write,
        cid: 0x1c,
        reason: None,
        status: 0x0010_0c31,
    };
    let sq = SqEvent {
        queue: 0,
        vmid: 8,
        wave: 2,
        pc: 0x1_0000_0100,
        error: SqError::IllegalInstruction,
    };
    let entries = [
        IvEntry::vm_fault(false, &fault),
        IvEntry::vm_fault(true, &fault),
        IvEntry::sq_error(Some((1, 0, 2)), &sq),
        IvEntry::vm_fault_v9(true, 5, 0x1234_5000, false, 1),
    ];
    let mut ring: Vec<u8> = Vec::new();
    for e in &entries {
        for d in e.encode() {
            ring.extend(d.to_le_bytes());
        }
    }
    for (version, name) in [(0u8, "ih-4_4_2"), (1, "ih-6_0"), (2, "ih-7_0")] {
        let mut seed = vec![version];
        seed.extend([0u8; 32]);
        for wptr in [64u32, 128, 128] {
            seed.extend(wptr.to_le_bytes());
        }
        seed.extend(&ring);
        keep("runtime/fuzz/corpus/ih", name, &seed);
    }
}
