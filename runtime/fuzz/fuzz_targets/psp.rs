//! The PSP response path: `barebell::psp::Psp` driven through a call
//! sequence against a device whose every answer is the fuzzer's — each
//! register read (C2PMSG_35/64/67/71/81 handshakes and statuses, the RLC
//! autoload status) and, on each GPCOM doorbell (the C2PMSG_67 write
//! pointer), the fence dword and the `psp_gfx_resp` the PSP writes back.
//! Nothing may panic, trap on overflow or touch memory outside the
//! buffers; every failure is a typed `PspError` that formats.
//!
//! Input: a part byte (even: Navi31, MP0 13.0.0 / GC 11.0.0; odd: Navi48,
//! MP0 14.0.3 / GC 12.0.1, from the model's discovery tables), the call
//! sequence (op bytes, see `Op`, ended by 0xff), then the device's
//! answers in the order the runtime consumes them: 4 bytes per register
//! read; 4 bytes of fence plus `size_of::<Resp>()` bytes of response per
//! doorbell. When the answers run out, reads return 0 (a PSP that never
//! answers: every wait must end on its bound). The seeds are what the
//! model's PSP answered during a firmware load
//! (`tests/harness/tests/fuzz_corpus.rs` records them).
#![no_main]

use barebell::bus::RegisterBus;
use barebell::discovery::{Discovery, hw_id};
use barebell::psp::{Component, DmaBuf, GcRegs, Psp, PspBuffers, PspRegs, RING_BYTES};
use barebell::regs::IpBases;
use barebell::time::Clock;
use barebell_firmware_if::psp_gfx::{RESP_OFFSET, Resp};
use libfuzzer_sys::fuzz_target;
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::OnceLock;

/// Op bytes of the call sequence (the recorder writes the same).
mod op {
    pub const SOS_ALIVE: u8 = 0x00;
    /// `0x10 + i`: `bootloader_load(Component::ORDER[i])`.
    pub const BOOTLOADER: u8 = 0x10;
    pub const RING_CREATE: u8 = 0x20;
    pub const LOAD_TOC: u8 = 0x21;
    pub const SETUP_TMR: u8 = 0x22;
    /// Followed by the `GFX_FW_TYPE` byte.
    pub const LOAD_IP_FW: u8 = 0x23;
    pub const AUTOLOAD_RLC: u8 = 0x24;
    pub const WAIT_RLC_AUTOLOAD: u8 = 0x25;
    pub const RING_STOP: u8 = 0x26;
    pub const END: u8 = 0xff;
}

struct Part {
    regs: PspRegs,
    mp0: IpBases,
    gc_regs: GcRegs,
    gc: IpBases,
}

fn parts() -> &'static [Part; 2] {
    static P: OnceLock<[Part; 2]> = OnceLock::new();
    P.get_or_init(|| {
        let part = |desc| {
            let (table, _) = barebell_model::discovery::build(desc);
            let d = Discovery::parse(&table).expect("the model's table parses");
            let mp0 = d.ip(hw_id::MP0, 0).expect("MP0");
            let gc = d.ip(hw_id::GC, 0).expect("GC");
            Part {
                regs: PspRegs::for_version(mp0.version.triple()).expect("PSP regs"),
                mp0: mp0.bases,
                gc_regs: GcRegs::for_version(gc.version.triple()).expect("GC regs"),
                gc: gc.bases,
            }
        };
        [
            part(&barebell_model::discovery::NAVI31),
            part(&barebell_model::discovery::NAVI48),
        ]
    })
}

/// The clock: 100 µs per reading while the device still has answers (a
/// recorded poll that saw many "not yet" values replays within its time
/// bound, and the 20 ms handshake delays take 200 readings), 100 ms per
/// reading once they have run out (a wait on a silent device ends on its
/// bound after at most a few dozen polls: the fence bound, 2 s, is the
/// longest).
struct Tick<'a> {
    now: Cell<u64>,
    dev: &'a Dev<'a>,
}

impl Clock for Tick<'_> {
    fn now_ns(&self) -> u64 {
        let step = if self.dev.at.get() < self.dev.answers.len() {
            100_000
        } else {
            100_000_000
        };
        let t = self.now.get() + step;
        self.now.set(t);
        t
    }
}

/// The device: answers from the fuzzer's bytes.
struct Dev<'a> {
    answers: &'a [u8],
    at: Cell<usize>,
    c67: usize,
    fence: *mut u8,
    resp: *mut u8,
}

impl Dev<'_> {
    fn take(&self, out: &mut [u8]) {
        let i = self.at.get();
        for (k, b) in out.iter_mut().enumerate() {
            *b = self.answers.get(i + k).copied().unwrap_or(0);
        }
        self.at.set(i + out.len());
    }
}

impl RegisterBus for Dev<'_> {
    fn read32(&self, _byte_offset: usize) -> u32 {
        let mut b = [0u8; 4];
        self.take(&mut b);
        u32::from_le_bytes(b)
    }
    fn write32(&self, byte_offset: usize, _value: u32) {
        if byte_offset == self.c67 {
            let mut f = [0u8; 4];
            self.take(&mut f);
            let mut r = [0u8; size_of::<Resp>()];
            self.take(&mut r);
            // SAFETY: `fence` and `resp` point into buffers of `BUF`
            // bytes that outlive the run (`fence` at 0, `resp` at
            // RESP_OFFSET < BUF - size_of::<Resp>()); the runtime reads
            // them only after this write returns.
            unsafe {
                std::ptr::copy_nonoverlapping(f.as_ptr(), self.fence, 4);
                std::ptr::copy_nonoverlapping(r.as_ptr(), self.resp, r.len());
            }
        }
    }
}

const BUF: usize = 4096;
const FW_PRI_MC: u64 = 0x100_0000;
const TMR_MC: u64 = 0x200_0000;

fn buf(p: *mut u8, mc: u64) -> DmaBuf {
    let p = NonNull::new(p).expect("non-null");
    // SAFETY: 4-byte aligned, BUF bytes of the run's memory that outlive
    // the `Psp`; the device above writes only fence and response.
    unsafe { DmaBuf::new(p, BUF, mc) }
}

fuzz_target!(|data: &[u8]| {
    assert!(RING_BYTES <= BUF && RESP_OFFSET + size_of::<Resp>() <= BUF);
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let part = &parts()[usize::from(sel & 1)];
    let end = rest
        .iter()
        .position(|&b| b == op::END)
        .unwrap_or(rest.len());
    let (ops, answers) = rest.split_at(end);
    let answers = answers.get(1..).unwrap_or(&[]);
    // fw_pri, ring, command buffer, fence: BUF bytes each, 4-byte aligned.
    let mut mem = vec![0u32; BUF];
    let base = mem.as_mut_ptr().cast::<u8>();
    // SAFETY: `k * BUF + off` stays inside the 4 * BUF bytes of `mem`.
    let at = |k: usize, off: usize| unsafe { base.add(k * BUF + off) };
    let dev = Dev {
        answers,
        at: Cell::new(0),
        c67: part
            .regs
            .c2pmsg_67
            .byte_offset(&part.mp0)
            .expect("C2PMSG_67"),
        fence: at(3, 0),
        resp: at(2, RESP_OFFSET),
    };
    let bufs = PspBuffers {
        fw_pri: buf(at(0, 0), FW_PRI_MC),
        ring: buf(at(1, 0), 0x10_0000),
        cmd: buf(at(2, 0), 0x10_1000),
        fence: buf(at(3, 0), 0x10_2000),
    };
    let clock = Tick {
        now: Cell::new(0),
        dev: &dev,
    };
    let Ok(mut p) = Psp::new(&dev, &clock, part.regs, &part.mp0, bufs) else {
        panic!("the model's MP0 bases resolve");
    };
    let image = [0x5au8; 64];
    let mut tmr_size = 0x100_0000;
    let mut it = ops.iter().copied().take(64);
    while let Some(o) = it.next() {
        let r = match o {
            op::SOS_ALIVE => p.sos_alive().map(|_| ()),
            op::RING_CREATE => p.ring_create(),
            op::LOAD_TOC => p.load_toc(&image[..16]).map(|s| tmr_size = s),
            op::SETUP_TMR => p.setup_tmr(TMR_MC, tmr_size, 0x8000_0000),
            op::LOAD_IP_FW => p.load_ip_fw(u32::from(it.next().unwrap_or(0)), &image),
            op::AUTOLOAD_RLC => p.autoload_rlc(),
            op::WAIT_RLC_AUTOLOAD => p.wait_rlc_autoload(part.gc_regs, &part.gc),
            op::RING_STOP => p.ring_stop(),
            o if (op::BOOTLOADER..op::BOOTLOADER + 9).contains(&o) => {
                let c = Component::ORDER[usize::from(o - op::BOOTLOADER)];
                p.bootloader_load(c, &image).map(|_| ())
            }
            _ => Ok(()),
        };
        if let Err(e) = r {
            let _ = e.to_string();
        }
    }
    drop(p);
    drop(mem);
});
