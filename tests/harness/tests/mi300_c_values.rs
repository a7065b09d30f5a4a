//! MI300 values barebell takes from Linux 6.12 `.c` files rather than
//! headers, read as text from the tree `cargo xtask headers` extracts, so
//! the conformance tie that headers get holds for them too: the runtime's
//! and the model's copies (each written by hand) against the source.

use barebell::gfx::init_v9_4_3 as init;
use barebell::psp::mp13_0_6 as mp;

use barebell_tests::c_define as define;
use barebell_tests::linux_amd_source as source;

#[test]
fn gfx_v9_4_3_constants() {
    let t = source("amdgpu/gfx_v9_4_3.c");
    assert_eq!(
        define(&t, "GOLDEN_GB_ADDR_CONFIG"),
        u64::from(init::GOLDEN_GB_ADDR_CONFIG)
    );
    assert_eq!(
        define(&t, "DEFAULT_SH_MEM_BASES"),
        u64::from(init::DEFAULT_SH_MEM_BASES)
    );
    // init_compute_vmid()'s documented layout, which the interpreter's
    // equal-bases rule (`Apertures::from_sh_mem_bases`) follows.
    assert!(t.contains("LDS:         0x60000000'00000000 - 0x60000001'00000000 (4GB)"));
    assert!(t.contains("Scratch:     0x60000001'00000000 - 0x60000002'00000000 (4GB)"));
}

#[test]
fn gmc_v9_0_apertures() {
    let t = source("amdgpu/gmc_v9_0.c");
    assert!(t.contains(&format!(
        "adev->gmc.shared_aperture_start = {:#018x}ULL;",
        init::SHARED_APERTURE_START
    )));
    assert!(t.contains(&format!(
        "adev->gmc.private_aperture_start = {:#018x}ULL;",
        init::PRIVATE_APERTURE_START
    )));
}

#[test]
fn kfd_apertures_v9() {
    let t = source("amdkfd/kfd_flat_memory.c");
    assert!(t.contains("#define MAKE_LDS_APP_BASE_V9() ((uint64_t)(0x1UL) << 48)"));
    assert!(t.contains("#define MAKE_SCRATCH_APP_BASE_V9() ((uint64_t)(0x2UL) << 48)"));
    assert_eq!(
        (init::KFD_LDS_BASE, init::KFD_SCRATCH_BASE),
        (1 << 48, 2 << 48)
    );
}

#[test]
fn psp_13_0_6_values() {
    let t = source("amdgpu/psp_v13_0.c");
    let scratch = define(&t, "regMP1_PUB_SCRATCH0");
    assert_eq!(scratch, mp::MP1_PUB_SCRATCH0 as u64);
    assert_eq!(
        scratch,
        barebell_model::vgpu::gfx_v9_4_3::MP1_PUB_SCRATCH0 as u64
    );
    assert!(t.contains(&format!(
        "return (pmfw_ver < {:#x});",
        mp::AUX_SOS_PMFW_BELOW
    )));
    assert_eq!(
        barebell_model::psp::mp13_0_6::PRIMARY_SOS_MIN_PMFW,
        mp::AUX_SOS_PMFW_BELOW
    );
    let p = source("amdgpu/amdgpu_psp.c");
    // psp_load_p2s_table(): `supp_vers = … ? 0x0036013D : 0x0036003C;`
    // (APU : dGPU).
    let dgpu = format!("{:#010X};", mp::P2S_MIN_SOS_VERSION).replacen("0X", "0x", 1);
    let at = p
        .find("supp_vers = adev->flags & AMD_IS_APU ? 0x0036013D :")
        .unwrap();
    assert!(
        p[at..]
            .trim_start_matches(|c| c != ':')
            .get(1..)
            .unwrap()
            .trim_start()
            .starts_with(&dgpu)
    );
    let s = source("pm/swsmu/smu13/smu_v13_0_6_ppt.c");
    assert_eq!(define(&s, "P2S_TABLE_ID_X"), u64::from(mp::P2S_TABLE_ID_X));
    assert_eq!(
        define(&s, "P2S_TABLE_ID_X"),
        u64::from(barebell_model::psp::mp13_0_6::P2S_TABLE_ID_X)
    );
}
