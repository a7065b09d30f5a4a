//! A device that is not a GC 9.4.2 is brought up (its GC version is known
//! only after discovery), then torn down and refused, naming its GC: here
//! the MI300X model (GC 9.4.3, gfx942, which ROCR 5.2.3 does not know).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell_model::vgpu::HostMemory;
use barebell_model::{FilesDir, Seed, VirtualGpu, parts};
use hsakmt::backend::Backend;
use hsakmt::device::{CARD_DMA_BYTES, Kfd, MODEL_VRAM_BYTES, OpenError};

#[test]
fn an_mi300x_is_torn_down_and_refused_naming_its_gc() {
    let mem = HostMemory::allocate_sized(MODEL_VRAM_BYTES, CARD_DMA_BYTES).unwrap();
    let model = VirtualGpu::new(parts::mi300x(), &FilesDir::system(), mem, Seed(1)).unwrap();
    let model: &'static VirtualGpu = Box::leak(Box::new(model));
    let e = Kfd::open_on(Backend::Model(model)).err().unwrap();
    assert!(matches!(e, OpenError::NotGfx90a { gc: (9, 4, 3) }), "{e}");
    assert!(e.to_string().contains("the device has GC 9.4.3"), "{e}");
    // Torn down: the HWS, its queues and the MECs stopped.
    model.quiescent().unwrap();
}
