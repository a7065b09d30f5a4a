//! VMID0 as the hardware walks it, after the bring-up's gmc step.
//!
//! The hub model walks `VA - PAGE_TABLE_START_ADDR` (`amdgpu_gart_map()`
//! indexes the GART by the offset into the aperture; tinygrad's AM walks
//! `vaddr - va_base`), so tables indexed by the absolute VA send the PSP's
//! GART accesses to the wrong entries. Expected targets come from the
//! model's own constants (its DMA region's bus address) and from barebell's
//! documented layout (the `fw_pri` buffer is the first GTT buffer, at GART
//! offset 0; the ring area is the DMA region past its first chunk, at VA =
//! host address), not from the runtime's tables.

use barebell::platform::{DMA_CHUNK, Platform};
use barebell_bringup::{Options, Quiet, Step};
use barebell_model::gmc::Access;
use barebell_model::mc::Target;
use barebell_model::parts;
use barebell_model::vgpu::DMA_BUS;
use barebell_tests::{FirmwareDir, virtual_gpu};

fn check(part: barebell_model::Part, gart_start: u64) {
    let name = part.name;
    let fb_offset = part.fb_offset;
    let vram_bytes = u64::from(part.firmware.vram_mib) << 20;
    let gpu = virtual_gpu(part, 1);
    let opts = Options {
        until: Step::Gmc,
        mapping: None,
        ..Default::default()
    };
    let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let layout = up.memory.expect("the gmc step's layout");
    // amdgpu_gmc_gart_location() for the model's FB (MC 0x80_0000_0000):
    // HIGH on gfx11, LOW (0) on gfx12.
    assert_eq!(layout.mc.gart_start, gart_start, "{name}");
    let ring_va = gpu.dma().host.as_ptr() as u64 + DMA_CHUNK as u64;
    let v = gpu
        .gfx11()
        .unwrap()
        .mmhub()
        .vmid0()
        .expect("MMHUB VMID0 enabled");
    // VMID0 covers the GART and the ring area; START is the lower one.
    assert_eq!(v.start, gart_start.min(ring_va), "{name}");
    let mc = gpu.psp().mc();
    // fw_pri: GART offset 0 → GTT, the DMA region's first chunk.
    let (t, _) = mc
        .translate(gart_start, Access::Read, "fw_pri")
        .unwrap_or_else(|e| panic!("{name}: GART offset 0 (VMID0 start {:#x}): {e}", v.start));
    assert_eq!(t, Target::System(DMA_BUS), "{name}: GART offset 0");
    // A page further in: the ring buffer at GART offset 1 MiB.
    let (t, _) = mc
        .translate(gart_start + (1 << 20) + 0x10, Access::Write, "ring")
        .unwrap_or_else(|e| panic!("{name}: GART offset 1 MiB: {e}"));
    assert_eq!(t, Target::System(DMA_BUS + (1 << 20) + 0x10), "{name}");
    // The ring area at VA = host address → the DMA region's second chunk.
    let (t, _) = mc
        .translate(ring_va + 0x2340, Access::Read, "ring area")
        .unwrap_or_else(|e| panic!("{name}: ring area at {ring_va:#x}: {e}"));
    assert_eq!(
        t,
        Target::System(DMA_BUS + DMA_CHUNK as u64 + 0x2340),
        "{name}"
    );
    assert!(mc.faults().is_empty(), "{name}: {:?}", mc.faults());
    // *_set_fault_enable_default(true) after gart_enable: the eleven
    // *_PROTECTION_FAULT_ENABLE_DEFAULT bits (masks 0x4..=0x1000 in the
    // sh_mask headers), no CRASH_ON_* bits.
    let h = gpu.gfx11().unwrap().mmhub();
    assert_eq!(h.device_reg(h.hub().fault_cntl), 0x1FFC, "{name}");
    // The default page is a VRAM physical address
    // (`amdgpu_gmc_vram_mc2pa()`): inside FB_OFFSET..FB_OFFSET + VRAM.
    assert!(
        (fb_offset..fb_offset + vram_bytes).contains(&v.default_page),
        "{name}: default page {:#x}, FB_OFFSET {fb_offset:#x}",
        v.default_page
    );
    // The process tables (a user context, start 0), rooted at the
    // physical address the layout reports, refuse the ring area's first
    // part, the driver's (KFD maps no MQD or kernel ring into a process
    // VM: issue 32 item 2), and map its user part at VA = host address.
    let r = gpu
        .gfx11()
        .unwrap()
        .translate(layout.process_root, ring_va + 0x40, Access::Read);
    assert!(
        r.is_err(),
        "{name}: driver part in the process tables: {r:?}"
    );
    let (urings, ulen) = layout.user_rings;
    assert!(
        urings > ring_va && ulen > 0,
        "{name}: {:?}",
        layout.user_rings
    );
    let host = gpu
        .gfx11()
        .unwrap()
        .translate(layout.process_root, urings + 0x40, Access::Read)
        .unwrap_or_else(|e| {
            panic!(
                "{name}: process tables at {:#x}: {e:?}",
                layout.process_root
            )
        });
    assert_eq!(host, urings + 0x40, "{name}");
    // The user memory: the DMA region's last `Options::user_memory` bytes
    // (the default, 1 MiB), after the ring area, in the process tables
    // only, readable, writeable and executable (KFD's flags for a user's
    // executable GTT allocation); the ring area is not executable, and
    // VMID0 does not map the user memory.
    let dma = gpu.dma();
    let user_va = dma.host.as_ptr() as u64 + dma.len as u64 - (1 << 20);
    assert_eq!(layout.user_memory, (user_va, 1 << 20), "{name}");
    assert_eq!(layout.ring_area, (ring_va, user_va - ring_va), "{name}");
    for (off, access) in [
        (0, Access::Execute),
        (0x1234, Access::Read),
        ((1 << 20) - 8, Access::Write),
    ] {
        let host = gpu
            .gfx11()
            .unwrap()
            .translate(layout.process_root, user_va + off, access)
            .unwrap_or_else(|e| panic!("{name}: user memory +{off:#x} {access:?}: {e:?}"));
        assert_eq!(host, user_va + off, "{name}");
    }
    let e = gpu
        .gfx11()
        .unwrap()
        .translate(layout.process_root, urings + 0x40, Access::Execute)
        .unwrap_err();
    assert_eq!(
        e.reason,
        barebell_model::gmc::FaultReason::Permission,
        "{name}"
    );
    assert!(
        gpu.gfx11()
            .unwrap()
            .translate(layout.process_root, user_va + (1 << 20), Access::Read)
            .is_err(),
        "{name}: past the user memory"
    );
    assert!(
        mc.translate(user_va, Access::Read, "user memory in VMID0")
            .is_err(),
        "{name}: VMID0 maps the user memory"
    );
}

/// The PTE's MTYPE field is left 0 for the user memory: `MTYPE_NC`, what
/// `gmc_v11_0_map_mtype()` gives `AMDGPU_VM_MTYPE_DEFAULT` (KFD's
/// `get_pte_flags()`); the value from `amdgpu_vm.h`.
#[test]
fn user_memory_mtype_is_nc_as_amdgpu_vm_h_defines_it() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/artifacts/linux-6.12/drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h"
    );
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e} (run `cargo xtask headers`)"));
    let nc = text
        .lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("#define") && w.next() == Some("AMDGPU_MTYPE_NC"))
                .then(|| w.next().map(str::to_string))
                .flatten()
        })
        .expect("AMDGPU_MTYPE_NC in amdgpu_vm.h");
    assert_eq!(nc, "0");
}

#[test]
fn navi31_gart_high_is_walked_from_its_start() {
    check(parts::navi31(), 0x7FFF_0000_0000);
}

#[test]
fn navi48_gart_low_is_walked_from_its_start() {
    check(parts::navi48(), 0);
}

/// `*MC_VM_FB_OFFSET` is the physical address of VRAM offset 0; Linux
/// reads it (`mmhub_v3_0_get_mc_fb_offset()`,
/// `mmhub_v4_1_0_get_mc_fb_offset()`) into `vm_manager.vram_base_offset`
/// and adds it to every VRAM address it puts in a PDE, the context base
/// and the default page (`amdgpu_gmc_vram_mc2pa()`). A dGPU's VBIOS leaves
/// 0 (the model parts' value); an offset the model chooses here shows the
/// runtime reads the register instead of assuming 0.
#[test]
fn a_non_zero_fb_offset_is_added_to_every_vram_physical_address() {
    for (part, gart_start) in [(parts::navi31(), 0x7FFF_0000_0000), (parts::navi48(), 0)] {
        let part = barebell_model::Part {
            fb_offset: 1 << 36,
            ..part
        };
        check(part, gart_start);
    }
}

/// With VRAM at 64 GiB in the physical address space (FB offset 1 << 36),
/// the process tables' root sits above 4 GiB, so both halves of the user
/// VMID's PAGE_TABLE_BASE matter: the GFXHUB context the direct mapping
/// points holds the whole root, and the bring-up's queue runs through it.
#[test]
fn a_process_root_above_4_gib_reaches_both_halves_of_the_user_context() {
    let part = barebell_model::Part {
        fb_offset: 1 << 36,
        ..parts::navi31()
    };
    let gpu = virtual_gpu(part, 1);
    let opts = Options {
        until: Step::Queue,
        mapping: Some(barebell_bringup::Mapping::Direct),
        ..Default::default()
    };
    let up = barebell_bringup::run(&gpu, &FirmwareDir::system(), &opts, &Quiet)
        .unwrap_or_else(|e| panic!("{e}"));
    let root = up.process_root.expect("the queue step's process root");
    assert!(root >> 32 != 0, "root {root:#x} below 4 GiB");
    let user = barebell_bringup::queue::USER_VMID;
    let ctx = gpu.gfx11().unwrap().gfxhub().context(user);
    assert_eq!(ctx.root, root, "VMID {user}'s PAGE_TABLE_BASE");
    let report = up.shutdown();
    assert!(report.complete(), "{report}");
}
