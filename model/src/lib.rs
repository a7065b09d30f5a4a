//! barebell-model: a model of the parts of an AMD GPU that barebell drives.
//!
//! This is a simulator, not a mirror of barebell: each block keeps its own
//! state and enforces what the public sources say the hardware enforces, so
//! a wrong sequence in the runtime fails here the way it would on a card.
//!
//! Determinism comes first. Time is simulated ([`SimClock`]) and advances
//! only when the runtime touches the device, and every random choice comes
//! from one seeded generator ([`Seed`]), so any failure reproduces from its
//! seed (the approach of TigerBeetle's VOPR).
//!
//! The core is `no_std + alloc` so the unikernel can run it too.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod clock;
pub mod regfile;

pub use clock::{SimClock, TickingClock};
pub use regfile::RegisterFile;

/// The one source of randomness in a simulation run.
///
/// xoshiro256** from `rand_xoshiro`: small, fast, and with a documented,
/// stable output sequence, so a seed printed by a failing test reproduces
/// the same run on any machine.
pub type Rng = rand_xoshiro::Xoshiro256StarStar;

/// Builds the run's generator from a printed seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seed(pub u64);

impl Seed {
    pub fn rng(self) -> Rng {
        use rand::SeedableRng;
        Rng::seed_from_u64(self.0)
    }
}

pub mod bar;
pub mod conformance;
pub mod cp;
pub mod cpregs;
pub mod dcn;
/// The decoders, shared with the introspection tools (barebell-decode).
pub use barebell_decode as decode;
pub mod discovery;
pub mod dma;
pub mod error;
pub mod files;
pub mod gfx_pipes;
pub mod gmc;
pub use barebell_decode::hsa;
pub mod hub;
pub mod hub_v9;
pub mod hws;
pub mod ih;
pub mod kernel_view;
pub mod kiq;
pub mod log;
pub mod mc;
pub mod mec;
pub mod mec_v9_4_3;
pub mod mes;
pub mod nbio;
pub mod parts;
pub mod pci_config;
pub mod power;
pub mod psp;
pub mod rlc_mec_v9_4_3;
pub mod s2a;
pub mod sdma;
pub mod smu;
pub mod soc;
pub mod socblocks;
pub mod socregs;
#[cfg(feature = "std")]
pub mod thread;
pub mod ucode;
pub mod unknown;
pub mod vgpu;
pub mod wave;

/// Every hardware fact the model's own decoders rely on, for `cargo
/// xtask conformance`.
pub const FACTS: &[&[barebell_facts::Fact]] = &[
    psp::FACTS,
    psp::iface::FACTS,
    rlc_mec_v9_4_3::FACTS,
    mec_v9_4_3::FACTS,
    ucode::FACTS,
    decode::mes_api::FACTS,
    decode::mes_regs::FACTS,
    decode::pm4::FACTS,
    decode::pm4::NAMED_ONLY_FACTS,
    decode::pm4::COMPUTE_FACTS,
    decode::mqd::FACTS,
    decode::mqd_v9::FACTS,
    decode::sdma_mqd_v9::FACTS,
    decode::gfx_mqd_v11::FACTS,
    decode::sdma::FACTS,
    cpregs::FACTS,
    hsa::FACTS,
    // Issue 15: the SOC blocks tinygrad's AM drives.
    smu::FACTS,
    ih::FACTS,
    // Issue 20: the IV entry the IH writes and the ids it raises with.
    ih::IV_FACTS,
    sdma::FACTS,
    power::FACTS,
    s2a::FACTS,
    nbio::FACTS,
    vgpu::AM_FACTS,
    // Issue 16/17: the dispatch packet and queue scratch fields the CP reads.
    wave::FACTS,
    // Issue 18: the HWS packets and the VMID->PASID mapping it writes.
    decode::pm4_hws::FACTS,
    hws::FACTS,
    // Issue 18 (session 8): the MI300 SOC blocks' own tables.
    socregs::osssys_4_4_2::FACTS,
    socregs::nbio_7_9_0::FACTS,
    // Issue 34: Aldebaran's NBIO.
    socregs::nbio_7_4::FACTS,
    socregs::mp1_13_0_2::FACTS,
    socregs::gc_9_4_2_stored::FACTS,
    socregs::mp1_13_0_6::FACTS,
    // tinygrad's AM on MI300: the registers kept as written.
    socregs::gc_9_4_3_stored::FACTS,
    socregs::sdma_4_4_2_stored::FACTS,
    socregs::nbio_7_9_0_stored::FACTS,
    // The harvest registers the CU count is read through.
    socregs::gc_9_4_2_arrays::FACTS,
    socregs::gc_9_4_3_arrays::FACTS,
    socregs::ARRAY_FIELD_FACTS,
];

pub use bar::DoorbellPage;
pub use error::ModelError;
#[cfg(feature = "std")]
pub use files::FilesDir;
pub use files::{FileError, FirmwareFiles};
pub use parts::Part;
pub use vgpu::{NotQuiescent, QUIESCENT, VirtualGpu};
