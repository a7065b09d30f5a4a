//! Aldebaran (GC 9.4.2) is brought up from a fixed IP list, as Linux 6.12
//! does: the runtime's list ([`barebell::discovery::aldebaran`]) against
//! the `CHIP_ALDEBARAN` case of `amdgpu_discovery.c` and the ids of
//! `amdgpu_drv.c`, read as text (the bases are conformance facts against
//! `aldebaran_ip_offset.h`); and the bring-up's discovery step taking the
//! list from the PCI device id without reading the table.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use barebell::discovery::aldebaran;
use barebell::ip::hw_id;

use barebell_tests::linux_amd_source as source;

/// The `case CHIP_ALDEBARAN:` block that sets `ip_versions`, up to its
/// `break;`.
fn aldebaran_case(text: &str) -> &str {
    let start = text
        .match_indices("case CHIP_ALDEBARAN:")
        .map(|(i, _)| i)
        .find(|&i| {
            text[i..]
                .split("break;")
                .next()
                .unwrap()
                .contains("ip_versions")
        })
        .expect("a CHIP_ALDEBARAN case setting ip_versions");
    text[start..].split("break;").next().unwrap()
}

/// `(HWIP name, instance, (major, minor, rev))` of every
/// `adev->ip_versions[X_HWIP][i] = IP_VERSION(a, b, c);` line.
fn versions(case: &str) -> Vec<(String, u8, (u8, u8, u8))> {
    let mut out = Vec::new();
    for line in case.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("adev->ip_versions[") else {
            continue;
        };
        let (hwip, rest) = rest.split_once("][").unwrap();
        let (inst, rest) = rest.split_once(']').unwrap();
        let v = rest.split_once("IP_VERSION(").unwrap().1;
        let v: Vec<u8> = v
            .trim_end_matches(");")
            .split(',')
            .map(|n| n.trim().parse().unwrap())
            .collect();
        out.push((hwip.to_string(), inst.parse().unwrap(), (v[0], v[1], v[2])));
    }
    out
}

#[test]
fn versions_are_the_chip_aldebaran_case() {
    let text = source("amdgpu/amdgpu_discovery.c");
    let linux = versions(aldebaran_case(&text));
    assert!(linux.len() >= 18, "{linux:?}");
    let ours = aldebaran::ips();
    let hw = |name: &str| -> u16 {
        match name {
            "GC_HWIP" => hw_id::GC,
            "MMHUB_HWIP" => hw_id::MMHUB,
            "ATHUB_HWIP" => hw_id::ATHUB,
            "OSSSYS_HWIP" => hw_id::OSSSYS,
            "HDP_HWIP" => hw_id::HDP,
            "SDMA0_HWIP" => hw_id::SDMA0,
            "NBIO_HWIP" => hw_id::NBIF,
            "UMC_HWIP" => hw_id::UMC,
            "MP0_HWIP" => hw_id::MP0,
            "MP1_HWIP" => hw_id::MP1,
            "DF_HWIP" => aldebaran::more_hw_id::DF,
            "THM_HWIP" => aldebaran::more_hw_id::THM,
            "SMUIO_HWIP" => aldebaran::more_hw_id::SMUIO,
            "UVD_HWIP" => aldebaran::more_hw_id::VCN,
            "XGMI_HWIP" => u16::MAX,
            other => panic!("unexpected {other} in the CHIP_ALDEBARAN case"),
        }
    };
    for (name, inst, v) in &linux {
        let id = hw(name);
        if id == u16::MAX {
            // XGMI has no register base in aldebaran_reg_base_init().
            continue;
        }
        let mine = ours
            .iter()
            .find(|i| i.hw_id == id && i.instance == *inst)
            .unwrap_or_else(|| panic!("{name}[{inst}] missing from the runtime's list"));
        assert_eq!(mine.version.triple(), *v, "{name}[{inst}]");
    }
    // And nothing of ours claims a version Linux does not set, but the
    // UMC instances past 0 (`adev->gmc.num_umc = 4`, one version).
    for i in &ours {
        let named = linux
            .iter()
            .any(|(n, inst, _)| hw(n) == i.hw_id && *inst == i.instance);
        let umc_sibling = i.hw_id == hw_id::UMC;
        assert!(
            named || umc_sibling,
            "hw_id {} instance {}",
            i.hw_id,
            i.instance
        );
    }
    // The case's counts.
    let case = aldebaran_case(&text);
    assert!(case.contains("adev->sdma.sdma_mask = 0x1f;"));
    assert!(case.contains("adev->gfx.xcc_mask = 1;"));
    assert!(case.contains("adev->gmc.num_umc = 4;"));
    assert!(case.contains("aldebaran_reg_base_init(adev);"));
    let t = aldebaran::topology();
    assert_eq!((t.xcc_mask, t.sdma_mask, t.aid_mask), (1, 0x1f, 0));
}

#[test]
fn pci_ids_are_amdgpu_drv_chip_aldebaran() {
    let text = source("amdgpu/amdgpu_drv.c");
    let mut ids: Vec<u16> = text
        .lines()
        .filter(|l| l.contains("CHIP_ALDEBARAN}"))
        .map(|l| {
            let id = l.split(',').nth(1).unwrap().trim().trim_start_matches("0x");
            u16::from_str_radix(id, 16).unwrap()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, aldebaran::PCI_DEVICE_IDS.to_vec());
}

/// A model card that answers config reads with an Aldebaran's device id:
/// everything else is the navi31 model's.
struct AsAldebaran(barebell_model::VirtualGpu);

// SAFETY: every method forwards to the VirtualGpu, which upholds the
// trait's promises; only the device id differs.
unsafe impl barebell::platform::Platform for AsAldebaran {
    fn regs(&self) -> &dyn barebell::bus::RegisterBus {
        self.0.regs()
    }
    fn regs_len(&self) -> usize {
        self.0.regs_len()
    }
    fn vram(&self) -> barebell::platform::Aperture {
        self.0.vram()
    }
    fn doorbells(&self) -> barebell::platform::Aperture {
        barebell::platform::Platform::doorbells(&self.0)
    }
    fn doorbell_bus(&self) -> u64 {
        self.0.doorbell_bus()
    }
    fn dma(&self) -> barebell::platform::DmaRegion<'_> {
        self.0.dma()
    }
    fn clock(&self) -> &dyn barebell::time::Clock {
        barebell::platform::Platform::clock(&self.0)
    }
    fn pause(&self) {
        self.0.pause()
    }
    fn name(&self) -> &str {
        "an MI210 id over the navi31 model"
    }
    fn claim(&self) -> bool {
        self.0.claim()
    }
    fn pci_device_id(&self) -> Option<u16> {
        Some(0x740F)
    }
}

/// The device id decides, as Linux's `pciidlist` does: the step reads
/// the IFWI flag and the VRAM size, then takes the fixed list instead of
/// the table the card holds (here navi31's, which says GC 11), and the
/// blocks are chosen by the fixed list's versions.
#[test]
fn an_aldebaran_id_takes_the_fixed_list_not_the_table() {
    let gpu = AsAldebaran(barebell_tests::virtual_gpu(
        barebell_model::parts::navi31(),
        1,
    ));
    let ips = barebell_bringup::discovery::run(&gpu, &barebell_bringup::Quiet).unwrap();
    assert_eq!(ips.generation, barebell::ip::Generation::Gfx90a);
    assert_eq!(ips.gc.version.triple(), (9, 4, 2));
    assert_eq!(ips.gc.bases.0[..3], [0x2000, 0xA000, 0x0240_2C00]);
    assert_eq!(ips.read_through, "no table (Aldebaran's fixed IP list)");
    // RCC_CONFIG_MEMSIZE: the part's VRAM, not BAR0's window.
    let mib = u64::from(barebell_model::parts::navi31().firmware.vram_mib);
    assert_eq!(ips.vram_bytes, mib << 20);
    assert_eq!(ips.topology.num_xcc(), 1);
    let b = barebell_bringup::blocks::choose(&ips).unwrap();
    assert_eq!(b.gfx.name(), "GC 9.4.2");
    assert_eq!(b.gmc.name(), "gmc_v9_0");
    assert_eq!(b.psp.name(), "psp_v13_0_2");
    // SDMA 4.4.0: `amdgpu_discovery_set_sdma_ip_blocks()` picks sdma_v4_0.
    assert_eq!(b.sdma.map(|s| s.name()), Some("sdma_v4_0"));
    // The same model with its own id reads its table.
    let own = barebell_tests::virtual_gpu(barebell_model::parts::navi31(), 1);
    let ips = barebell_bringup::discovery::run(&own, &barebell_bringup::Quiet).unwrap();
    assert_eq!(ips.gc.version.triple().0, 11);
}
