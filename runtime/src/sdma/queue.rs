//! One SDMA ring as the host drives it: packets written into the ring,
//! the write pointer published to the poll address and the doorbell,
//! completion seen through a FENCE the engine writes after every earlier
//! packet (`sdma_v6_0_ring_emit_fence()`'s role). Nothing here allocates:
//! packets are built on the stack ([`super::pkt::Packet`]) and written
//! straight into the ring.

use super::SdmaVersion;
use super::pkt::{COPY_MAX_BYTES, Packet};
use crate::aql::Doorbell;
use crate::bus::BlockError;
use crate::mem::Dev;
use crate::time::{Clock, Deadline, Pause};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Ring size: 64 KiB (16384 dwords), barebell's choice: a copy of any
/// size needs a few dozen dwords (one 7- or 8-dword COPY_LINEAR per
/// 4 MiB), so the ring holds many copies in flight.
pub const RING_BYTES: usize = 64 << 10;
pub const RING_DWORDS: usize = RING_BYTES / 4;

/// The ring and its pointers in device memory (GPU VA = host address).
#[repr(C, align(4096))]
pub struct SdmaMemory {
    pub ring: [AtomicU32; RING_DWORDS],
    /// The engine's read pointer write-back (bytes, 64-bit).
    pub rptr: AtomicU64,
    /// The write pointer the engine may poll (bytes, 64-bit).
    pub wptr: AtomicU64,
    /// Where FENCE packets write the completed sequence number.
    pub fence: AtomicU32,
    _pad: u32,
    /// Where TIMESTAMP packets write.
    pub timestamp: AtomicU64,
}

impl SdmaMemory {
    pub fn new() -> Self {
        SdmaMemory {
            ring: [const { AtomicU32::new(0) }; RING_DWORDS],
            rptr: AtomicU64::new(0),
            wptr: AtomicU64::new(0),
            fence: AtomicU32::new(0),
            _pad: 0,
            timestamp: AtomicU64::new(0),
        }
    }
}

impl core::fmt::Debug for SdmaMemory {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SdmaMemory")
            .field("rptr", &self.rptr)
            .field("wptr", &self.wptr)
            .field("fence", &self.fence)
            .finish_non_exhaustive()
    }
}

impl Default for SdmaMemory {
    fn default() -> Self {
        Self::new()
    }
}

/// The directions of `hipMemcpy` (`hipMemcpyHostToDevice`, ...). The
/// engine does not care: a COPY_LINEAR copies between two VAs of the
/// queue's VMID, whatever memory backs them; the direction names which
/// buffers a caller passes, and the CLI's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyDirection {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

impl CopyDirection {
    pub const ALL: [CopyDirection; 3] = [
        CopyDirection::HostToDevice,
        CopyDirection::DeviceToHost,
        CopyDirection::DeviceToDevice,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CopyDirection::HostToDevice => "h2d",
            CopyDirection::DeviceToHost => "d2h",
            CopyDirection::DeviceToDevice => "d2d",
        }
    }
}

/// Why an SDMA operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaError {
    /// A copy or fill of zero bytes.
    Empty,
    /// The ring had no room for `needed` dwords within the bound: the
    /// engine's read pointer stopped.
    RingFull {
        needed: usize,
        rptr: u64,
        wptr: u64,
        waited_ns: u64,
    },
    /// The fence did not reach `seq` within the bound.
    Timeout {
        seq: u32,
        fence: u32,
        rptr: u64,
        wptr: u64,
        waited_ns: u64,
    },
    /// A queue register could not be reached.
    Register(BlockError),
    /// The presence register read all ones during a fence wait: the
    /// device is gone ([`SdmaQueue::set_presence`]).
    DeviceGone {
        seq: u32,
        fence: u32,
        waited_ns: u64,
    },
}

impl core::fmt::Display for SdmaError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            SdmaError::Empty => write!(f, "an SDMA copy or fill of 0 bytes"),
            SdmaError::RingFull {
                needed,
                rptr,
                wptr,
                waited_ns,
            } => write!(
                f,
                "the SDMA ring had no room for {needed} dwords after {waited_ns} ns (read pointer {rptr:#x}, write pointer {wptr:#x} bytes): the engine stopped fetching"
            ),
            SdmaError::Timeout {
                seq,
                fence,
                rptr,
                wptr,
                waited_ns,
            } => write!(
                f,
                "SDMA fence {seq} not written after {waited_ns} ns (fence holds {fence}; read pointer {rptr:#x}, write pointer {wptr:#x} bytes)"
            ),
            SdmaError::Register(e) => write!(f, "SDMA queue register: {e}"),
            SdmaError::DeviceGone {
                seq,
                fence,
                waited_ns,
            } => write!(
                f,
                "device gone after {waited_ns} ns waiting for SDMA fence {seq} (a register reads all ones; the fence holds {fence})"
            ),
        }
    }
}

impl From<BlockError> for SdmaError {
    fn from(e: BlockError) -> Self {
        SdmaError::Register(e)
    }
}

/// An SDMA ring the host writes: `C` the clock the bounds run on, `P`
/// what runs between looks at the device.
pub struct SdmaQueue<'a, C: ?Sized, P> {
    mem: &'a SdmaMemory,
    doorbell: Doorbell,
    version: SdmaVersion,
    /// Bytes written so far (the next packet's place, modulo the ring).
    wptr: u64,
    /// Last fence sequence number handed out.
    seq: u32,
    clock: &'a C,
    pause: P,
    /// Checked during fence waits, if set.
    presence: Option<crate::bus::Presence<'a>>,
}

impl<C: ?Sized, P> core::fmt::Debug for SdmaQueue<'_, C, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SdmaQueue")
            .field("version", &self.version)
            .field("wptr", &self.wptr)
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
}

impl<'a, C: Clock + ?Sized, P: Pause> SdmaQueue<'a, C, P> {
    /// A queue over `mem` (pointers start at 0), rung through `doorbell`.
    pub fn new(
        mem: Dev<'a, SdmaMemory>,
        doorbell: Doorbell,
        version: SdmaVersion,
        clock: &'a C,
        pause: P,
    ) -> Self {
        let m = mem.get();
        m.rptr.store(0, Ordering::Relaxed);
        m.wptr.store(0, Ordering::Relaxed);
        m.fence.store(0, Ordering::Relaxed);
        SdmaQueue {
            mem: m,
            doorbell,
            version,
            wptr: 0,
            seq: 0,
            clock,
            pause,
            presence: None,
        }
    }

    /// Makes fence waits read `p` every `p.every_ns` and end with
    /// [`SdmaError::DeviceGone`] when it reads all ones.
    pub fn set_presence(&mut self, p: crate::bus::Presence<'a>) {
        self.presence = Some(p);
    }

    pub fn version(&self) -> SdmaVersion {
        self.version
    }

    /// The ring's GPU VA, the read-pointer write-back and write-pointer
    /// poll addresses (all at their host addresses).
    pub fn addresses(&self) -> (u64, u64, u64) {
        (
            self.mem.ring.as_ptr() as u64,
            core::ptr::from_ref(&self.mem.rptr) as u64,
            core::ptr::from_ref(&self.mem.wptr) as u64,
        )
    }

    /// The fence word's GPU VA.
    pub fn fence_address(&self) -> u64 {
        core::ptr::from_ref(&self.mem.fence) as u64
    }

    /// The timestamp word's GPU VA.
    pub fn timestamp_address(&self) -> u64 {
        core::ptr::from_ref(&self.mem.timestamp) as u64
    }

    /// Bytes written so far.
    pub fn wptr(&self) -> u64 {
        self.wptr
    }

    /// The engine's read pointer as last written back.
    pub fn rptr(&self) -> u64 {
        self.mem.rptr.load(Ordering::Acquire)
    }

    /// The fence word as the engine last wrote it.
    pub fn fence(&self) -> u32 {
        self.mem.fence.load(Ordering::Acquire)
    }

    /// Writes `p` into the ring, waiting up to `bound_ns` for room. Not
    /// visible to the engine until [`SdmaQueue::commit`].
    pub fn push(&mut self, p: &Packet, bound_ns: u64) -> Result<(), SdmaError> {
        let dw = p.dwords();
        let need = dw.len() as u64 * 4;
        let mut d = Deadline::after(self.clock, bound_ns);
        loop {
            let used = self.wptr.saturating_sub(self.rptr());
            if used + need <= RING_BYTES as u64 {
                break;
            }
            if d.expired(self.clock) {
                return Err(SdmaError::RingFull {
                    needed: dw.len(),
                    rptr: self.rptr(),
                    wptr: self.wptr,
                    waited_ns: d.elapsed_ns(self.clock),
                });
            }
            self.pause.pause();
        }
        for (i, &x) in dw.iter().enumerate() {
            let at = (self.wptr / 4 + i as u64) as usize % RING_DWORDS;
            if let Some(slot) = self.mem.ring.get(at) {
                slot.store(x, Ordering::Relaxed);
            }
        }
        self.wptr += need;
        Ok(())
    }

    /// Publishes everything pushed: the write pointer to the poll address,
    /// then the doorbell (`sdma_v6_0_ring_set_wptr()`'s doorbell path),
    /// both in bytes.
    pub fn commit(&self) {
        self.mem.wptr.store(self.wptr, Ordering::Release);
        self.doorbell.ring(self.wptr);
    }

    /// Pushes a FENCE writing the next sequence number; returns it.
    pub fn push_fence(&mut self, bound_ns: u64) -> Result<u32, SdmaError> {
        let seq = self.seq.wrapping_add(1);
        self.push(
            &Packet::fence(self.version, self.fence_address(), seq),
            bound_ns,
        )?;
        self.seq = seq;
        Ok(seq)
    }

    /// Pushes COPY_LINEAR packets moving `bytes` from `src` to `dst`, each
    /// at most [`COPY_MAX_BYTES`] (as `amdgpu_copy_buffer()` splits by
    /// `copy_max_bytes`); returns how many.
    pub fn push_copy(
        &mut self,
        src: u64,
        dst: u64,
        bytes: u64,
        bound_ns: u64,
    ) -> Result<u32, SdmaError> {
        if bytes == 0 {
            return Err(SdmaError::Empty);
        }
        let mut done = 0u64;
        let mut n = 0u32;
        while done < bytes {
            let chunk = (bytes - done).min(u64::from(COPY_MAX_BYTES)) as u32;
            let p = Packet::copy_linear(self.version, src + done, dst + done, chunk);
            self.push(&p, bound_ns)?;
            done += u64::from(chunk);
            n += 1;
        }
        Ok(n)
    }

    /// Pushes CONSTANT_FILL packets writing the dword `data` over `bytes`
    /// at `dst` (split by `fill_max_bytes`, equal to [`COPY_MAX_BYTES`]).
    pub fn push_fill(
        &mut self,
        dst: u64,
        data: u32,
        bytes: u64,
        bound_ns: u64,
    ) -> Result<u32, SdmaError> {
        if bytes == 0 {
            return Err(SdmaError::Empty);
        }
        let mut done = 0u64;
        let mut n = 0u32;
        while done < bytes {
            let chunk = (bytes - done).min(u64::from(COPY_MAX_BYTES)) as u32;
            self.push(
                &Packet::constant_fill(self.version, dst + done, data, chunk),
                bound_ns,
            )?;
            done += u64::from(chunk);
            n += 1;
        }
        Ok(n)
    }

    /// Copy `bytes` from `src` to `dst` and a fence after it, published;
    /// returns the fence's sequence number (wait with
    /// [`SdmaQueue::wait`]).
    pub fn submit_copy(
        &mut self,
        src: u64,
        dst: u64,
        bytes: u64,
        bound_ns: u64,
    ) -> Result<u32, SdmaError> {
        self.push_copy(src, dst, bytes, bound_ns)?;
        let seq = self.push_fence(bound_ns)?;
        self.commit();
        Ok(seq)
    }

    /// Waits up to `bound_ns` for the fence to reach `seq` (sequence
    /// numbers compared modulo 2^32).
    pub fn wait(&mut self, seq: u32, bound_ns: u64) -> Result<(), SdmaError> {
        let mut d = Deadline::after(self.clock, bound_ns);
        let mut checked = self.clock.now_ns();
        loop {
            let f = self.fence();
            if f.wrapping_sub(seq) as i32 >= 0 {
                return Ok(());
            }
            if let Some(p) = &self.presence {
                let now = self.clock.now_ns();
                let due = now.saturating_sub(checked) >= p.every_ns;
                if (due || d.expired(self.clock)) && !p.present() {
                    return Err(SdmaError::DeviceGone {
                        seq,
                        fence: f,
                        waited_ns: d.elapsed_ns(self.clock),
                    });
                }
                if due {
                    checked = now;
                }
            }
            if d.expired(self.clock) {
                return Err(SdmaError::Timeout {
                    seq,
                    fence: f,
                    rptr: self.rptr(),
                    wptr: self.wptr,
                    waited_ns: d.elapsed_ns(self.clock),
                });
            }
            self.pause.pause();
        }
    }

    /// [`SdmaQueue::submit_copy`] then [`SdmaQueue::wait`].
    pub fn copy(&mut self, src: u64, dst: u64, bytes: u64, bound_ns: u64) -> Result<(), SdmaError> {
        let seq = self.submit_copy(src, dst, bytes, bound_ns)?;
        self.wait(seq, bound_ns)
    }
}
