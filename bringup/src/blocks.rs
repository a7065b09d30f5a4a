//! The IP blocks a part's discovered versions select, chosen once right
//! after discovery, as Linux's `amdgpu_discovery_set_ip_blocks()` adds
//! one `amd_ip_funcs` per IP from the versions in the table: the GFX and
//! GMC blocks by GC's version, the PSP block by MP0's, the SDMA block by
//! SDMA0's. The bring-up's steps and the teardown call them and never
//! match on a version. A version barebell has no block for is refused
//! here, before anything but the discovery table was read.

use crate::error::ErrorKind;
use crate::{discovery, gfx, gmc, psp, sdma};

/// One block per IP the bring-up programs.
#[derive(Debug, Clone, Copy)]
pub struct Blocks {
    pub gfx: &'static dyn gfx::GfxBlock,
    pub gmc: &'static dyn gmc::GmcBlock,
    pub psp: &'static dyn psp::PspBlock,
    /// `None` on a part with no SDMA0 barebell drives (no copies then).
    pub sdma: Option<&'static dyn sdma::SdmaBlock>,
}

/// The blocks for the versions in `ips`.
pub fn choose(ips: &discovery::Ips) -> Result<Blocks, ErrorKind> {
    let gc = ips.gc.version.triple();
    let mp0 = ips.mp0.version.triple();
    let no_gc = || ErrorKind::Unsupported {
        what: "GC",
        version: gc,
    };
    Ok(Blocks {
        gfx: gfx::block_for(gc).ok_or_else(no_gc)?,
        gmc: gmc::block_for(gc).ok_or_else(no_gc)?,
        psp: psp::block_for(mp0).ok_or(ErrorKind::Unsupported {
            what: "PSP registers of MP0",
            version: mp0,
        })?,
        sdma: ips.sdma0.and_then(|i| sdma::block_for(i.version.triple())),
    })
}
