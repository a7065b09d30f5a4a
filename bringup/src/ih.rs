//! Step 4, ih: interrupt ring 0, polled, in Linux's IP order right after
//! the GMC (`amdgpu_device_ip_init()`: common, gmc, ih, psp, ...), as
//! `ih_v6_0_hw_init()` / `ih_v7_0_hw_init()` → `*_irq_init()` set it up
//! ([`barebell::ih`]). The ring is the 256 KiB GTT buffer the gmc step
//! placed (with its write-pointer page); [`crate::Gpu::poll_interrupts`]
//! reads it and the teardown disables it before memory goes back
//! (`ih_v6_0_hw_fini()` → `ih_v6_0_irq_disable()`).

use crate::Gpu;
use crate::error::{BringupError, ErrorKind, ResultAt};
use crate::gmc::Memory;
use crate::sink::{Sink, Step};
use barebell::ih::{IhMemory, IhRegs, IhRing};

/// Sets ring 0 up in the buffer `mem` holds for it.
pub fn run<'p>(
    gpu: &Gpu<'p>,
    mem: &mut Memory<'p>,
    sink: &dyn Sink,
) -> Result<IhRing<'p>, BringupError> {
    let s = Step::Ih;
    let v = gpu.ips.osssys.version.triple();
    let regs = IhRegs::for_version(v)
        .ok_or(ErrorKind::Unsupported {
            what: "OSSSYS (IH)",
            version: v,
        })
        .at(s)?;
    let buf = mem
        .ih
        .take()
        .ok_or(ErrorKind::Unsupported {
            what: "an IH ring buffer from the gmc step",
            version: v,
        })
        .at(s)?;
    let (host, len, mc) = buf.into_parts();
    // SAFETY: the gmc step's GTT buffer: `len` bytes of the claimed DMA
    // region, handed out once (the DmaBuf is consumed here), valid for
    // 'p, mapped at `mc` in VMID0's GART, which the IH reaches as an
    // MMHUB client; the teardown disables the ring before the region
    // goes back.
    let memory = unsafe { IhMemory::new(host, len, mc) }.at(s)?;
    let ring = IhRing::init(&gpu.bus, &gpu.ips.osssys.bases, regs, memory).at(s)?;
    let (at, bytes) = ring.ring();
    sink.step(
        s,
        format_args!(
            "{}: ring 0 at MC {at:#x} ({bytes:#x} bytes, GTT), write-pointer copy at {:#x}, enabled and polled (no MSI)",
            regs.name,
            at + bytes as u64
        ),
    );
    Ok(ring)
}
