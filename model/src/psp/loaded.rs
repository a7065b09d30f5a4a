//! What the RLC autoload put in place: the record the engines consult
//! before they run code.
//!
//! The PSP keeps each LOAD_IP_FW image in the TMR; AUTOLOAD_RLC has the
//! RLC copy them to the engines (`psp_rlc_autoload_start()`, then
//! `gfx_v11_0_wait_for_rlc_autoload_complete()`). An engine whose image
//! was never loaded has nothing to run. The drivers disagree on what to
//! load: Linux loads every ucode it registered (`psp_load_non_psp_fw()`;
//! on gfx12 both MES pipes from the unified blob,
//! `mes_v12_0_early_init()`), tinygrad's AM a strict subset (no MES, one
//! stack per engine, SDMA threads in another order) that silicon
//! accepted on gfx1100 and gfx1201 (`docs/am-boot.md` §1.4). So the
//! model does not ask for a list: it records what came, and each engine
//! model refuses to start without its own code:
//! - a MES pipe: pipe 0 `CP_MES` + `MES_STACK`, pipe 1 `CP_MES_KIQ` +
//!   `MES_KIQ_STACK` (`amdgpu_mes_init_microcode()` registers these per
//!   pipe, `psp_get_fw_type()` maps them);
//! - a MEC pipe: `RS64_MEC` + its own `RS64_MEC_Pn_STACK`
//!   (`amdgpu_gfx_cp_init_microcode()` registers a stack per pipe).
//!
//! Images count once the autoload has completed: before that, nothing is
//! in place.

use super::iface::fw;
use crate::SimClock;
use alloc::collections::BTreeSet;
use barebell::time::Clock;
use spin::Mutex;

#[derive(Debug, Default)]
struct Inner {
    images: BTreeSet<u32>,
    complete_at: Option<u64>,
}

/// The firmware images the RLC autoload put in place, by
/// `psp_gfx_fw_type`, shared by the PSP model (which fills it) and the
/// engine models (which read it).
#[derive(Debug)]
pub struct LoadedFirmware {
    clock: SimClock,
    inner: Mutex<Inner>,
}

impl LoadedFirmware {
    /// Nothing loaded yet.
    pub fn new(clock: &SimClock) -> Self {
        LoadedFirmware {
            clock: clock.clone(),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// As if an autoload of `images` had already completed (for engine
    /// rigs built without a PSP).
    pub fn autoloaded(clock: &SimClock, images: impl IntoIterator<Item = u32>) -> Self {
        let f = LoadedFirmware::new(clock);
        f.autoload(images.into_iter().collect(), clock.now_ns());
        f
    }

    /// The PSP model: an autoload of `images` completes at `done_at_ns`.
    pub(crate) fn autoload(&self, images: BTreeSet<u32>, done_at_ns: u64) {
        let mut i = self.inner.lock();
        i.images = images;
        i.complete_at = Some(done_at_ns);
    }

    /// Nothing loaded any more (a mode-1 reset: the RLC, CP and SDMA
    /// code is gone until the next AUTOLOAD_RLC).
    pub(crate) fn clear(&self) {
        *self.inner.lock() = Inner::default();
    }

    /// Whether an autoload has completed.
    pub fn complete(&self) -> bool {
        let at = self.inner.lock().complete_at;
        at.is_some_and(|t| self.clock.now_ns() >= t)
    }

    /// The images in place (none before an autoload completed).
    pub fn images(&self) -> BTreeSet<u32> {
        if self.complete() {
            self.inner.lock().images.clone()
        } else {
            BTreeSet::new()
        }
    }

    /// Whether image `fw_type` is in place.
    pub fn has(&self, fw_type: u32) -> bool {
        self.complete() && self.inner.lock().images.contains(&fw_type)
    }

    /// Whether MES pipe `pipe` has its code and stack.
    pub fn mes_pipe(&self, pipe: u8) -> bool {
        let (code, stack) = match pipe {
            0 => (fw::CP_MES, fw::MES_STACK),
            1 => (fw::CP_MES_KIQ, fw::MES_KIQ_STACK),
            _ => return false,
        };
        self.has(code) && self.has(stack)
    }

    /// Whether MEC pipe `pipe` (0..=3) has the MEC code and its stack.
    pub fn mec_pipe(&self, pipe: u8) -> bool {
        let stack = match pipe {
            0 => fw::RS64_MEC_P0_STACK,
            1 => fw::RS64_MEC_P1_STACK,
            2 => fw::RS64_MEC_P2_STACK,
            3 => fw::RS64_MEC_P3_STACK,
            _ => return false,
        };
        self.has(fw::RS64_MEC) && self.has(stack)
    }
}
