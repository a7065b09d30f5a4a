//! How the CP's kernel-side firmware (the KIQ, the MES) reaches an
//! address a driver gives it.
//!
//! On a device these are VMID 0 accesses, decoded as VMID 0 decodes them:
//! the system aperture, then context 0's walk (the part's translator,
//! e.g. `vmid0_host` in `vgpu/gfx_v11_0.rs`). Linux hands the firmware
//! VRAM at its MC address and GTT at its GART address
//! (`amdgpu_bo_gpu_offset()`), so a model that read them as host
//! addresses would never see Linux's rings. On a rig with no view,
//! addresses are host addresses, as the CP side's window takes them.

use crate::dma::Dma;
use crate::gmc::Access;
use alloc::boxed::Box;

/// The host address of the byte `addr` names for `access`, or `None`
/// where nothing backs it.
pub struct KernelView(pub Box<dyn Fn(u64, Access) -> Option<u64> + Send + Sync>);

impl core::fmt::Debug for KernelView {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("KernelView")
    }
}

/// The host address of `len` bytes at `addr` as one contiguous run
/// through `view` (every page after the first must follow on in host
/// memory); without a view, `addr` itself.
pub fn host(view: Option<&KernelView>, addr: u64, len: u64, access: Access) -> Option<u64> {
    let Some(v) = view else {
        return Some(addr);
    };
    let first = (v.0)(addr, access)?;
    let last = addr.checked_add(len.max(1) - 1)?;
    let mut page = (addr & !0xFFF) + 0x1000;
    while page <= last {
        if (v.0)(page, access)? != first.checked_add(page - addr)? {
            return None;
        }
        page += 0x1000;
    }
    Some(first)
}

/// Calls `f(host, offset, n)` for each piece of `len` bytes at `addr`
/// that one page (or, without a view, the whole range) holds; stops
/// with `None` at the first byte `view` does not decode.
fn pieces(
    view: Option<&KernelView>,
    addr: u64,
    len: u64,
    access: Access,
    mut f: impl FnMut(u64, usize, usize) -> Option<()>,
) -> Option<()> {
    if view.is_none() {
        return f(addr, 0, usize::try_from(len).ok()?);
    }
    let mut done = 0u64;
    while done < len {
        let a = addr.checked_add(done)?;
        let n = (0x1000 - (a & 0xFFF)).min(len - done);
        let h = host(view, a, n, access)?;
        f(h, usize::try_from(done).ok()?, usize::try_from(n).ok()?)?;
        done += n;
    }
    Some(())
}

/// Reads `out.len()` bytes at `addr` page by page (a GART range need not
/// be contiguous in host memory) from `dma`, the CP side's host window.
pub fn read(
    view: Option<&KernelView>,
    dma: &Dma,
    addr: u64,
    out: &mut [u8],
    what: &'static str,
) -> Option<()> {
    let len = out.len() as u64;
    pieces(view, addr, len, Access::Read, |h, at, n| {
        dma.read(h, out.get_mut(at..at + n)?, what).ok()
    })
}

/// Whether every byte of `len` at `addr` is decoded and backed in `dma`.
pub fn covers(view: Option<&KernelView>, dma: &Dma, addr: u64, len: u64, access: Access) -> bool {
    pieces(view, addr, len, access, |h, _, n| {
        dma.covers(h, n as u64).then_some(())
    })
    .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view mapping page `n` of VA 0x1000_0000.. to host page `map[n]`.
    fn view(map: &'static [u64]) -> KernelView {
        KernelView(Box::new(move |va, _| {
            let n = usize::try_from(va.checked_sub(0x1000_0000)? >> 12).ok()?;
            map.get(n).map(|p| p + (va & 0xFFF))
        }))
    }

    #[test]
    fn runs_across_pages_only_where_host_pages_follow_on() {
        let v = view(&[0x5000, 0x6000, 0x9000]);
        assert_eq!(host(Some(&v), 0x1000_0ff8, 16, Access::Read), Some(0x5ff8));
        assert_eq!(host(Some(&v), 0x1000_1ff8, 16, Access::Read), None);
        assert_eq!(host(Some(&v), 0x1000_3000, 4, Access::Read), None);
        assert_eq!(host(None, 0x1234, 8, Access::Write), Some(0x1234));
    }
}
