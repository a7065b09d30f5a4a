//! Extracts the Linux 6.12 headers the conformance check compiles against.
//!
//! Only the needed subtrees are pulled out of Debian's `linux-source-6.12`
//! tarball, once, into `target/artifacts/linux-6.12`; a stamp records which
//! tarball they came from so a package upgrade re-extracts.

use crate::util::run;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";

/// Subtrees extracted (relative to the kernel source root).
const WANTED: &[&str] = &[
    "drivers/gpu/drm/amd/include",
    "drivers/gpu/drm/amd/amdgpu/*.h",
    "drivers/gpu/drm/amd/amdkfd/*.h",
    // The L2 control defaults these hub files define for themselves
    // (read as text by tests/harness/tests/hub.rs; no _default.h has them).
    "drivers/gpu/drm/amd/amdgpu/gfxhub_v12_0.c",
    "drivers/gpu/drm/amd/amdgpu/mmhub_v3_0.c",
    "drivers/gpu/drm/amd/amdgpu/mmhub_v4_1_0.c",
    // MMIO_REG_HOLE_OFFSET, the HDP remap page (read as text by
    // tests/harness/tests/nbio.rs).
    "drivers/gpu/drm/amd/amdgpu/nbio_v4_3.c",
    "drivers/gpu/drm/amd/amdgpu/nbif_v6_3_1.c",
    "drivers/gpu/drm/amd/amdgpu/nbio_v7_9.c",
    // MI300 values the runtime and model take from `.c` files (read as
    // text by tests/harness/tests/mi300_c_values.rs): GOLDEN_GB_ADDR_CONFIG
    // and DEFAULT_SH_MEM_BASES, the GMC apertures, regMP1_PUB_SCRATCH0
    // and the aux-sOS PMFW bound, the P2S sOS bound, P2S_TABLE_ID_X.
    "drivers/gpu/drm/amd/amdgpu/gfx_v9_4_3.c",
    "drivers/gpu/drm/amd/amdgpu/gmc_v9_0.c",
    "drivers/gpu/drm/amd/amdgpu/psp_v13_0.c",
    "drivers/gpu/drm/amd/amdgpu/amdgpu_psp.c",
    // Aldebaran's fixed IP versions and its PCI ids (read as text by
    // tests/harness/tests/aldebaran_ips.rs).
    "drivers/gpu/drm/amd/amdgpu/amdgpu_discovery.c",
    "drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c",
    "drivers/gpu/drm/amd/pm/swsmu/smu13/smu_v13_0_6_ppt.c",
    "drivers/gpu/drm/amd/amdkfd/kfd_flat_memory.c",
    "include/uapi/linux/vfio.h",
    "include/uapi/linux/pci_regs.h",
    "include/uapi/linux/iommufd.h",
    // kfd_ioctl.h (the HDP remap offsets) and the drm headers it includes.
    "include/uapi/linux/kfd_ioctl.h",
    "include/uapi/drm/drm.h",
    "include/uapi/drm/drm_mode.h",
    // The SMU message ids and DPM table sizes (model/src/smu.rs facts).
    "drivers/gpu/drm/amd/pm/swsmu/inc/pmfw_if/*.h",
];

/// Where the extracted Linux tree lives.
#[derive(Debug, Clone)]
pub struct LinuxHeaders {
    pub root: PathBuf,
}

impl LinuxHeaders {
    pub fn amd(&self) -> PathBuf {
        self.root.join("drivers/gpu/drm/amd")
    }
    pub fn uapi(&self) -> PathBuf {
        self.root.join("include/uapi")
    }
}

pub fn cache_dir(root: &Path) -> PathBuf {
    root.join("target/artifacts/linux-6.12")
}

pub fn ensure(root: &Path) -> Result<LinuxHeaders> {
    let dir = cache_dir(root);
    let tar = Path::new(TARBALL);
    let meta = std::fs::metadata(tar).with_context(|| {
        format!("{TARBALL} not found: install linux-source-6.12 (`cargo xtask deps`)")
    })?;
    // The list is part of the stamp: a cache extracted with an older
    // list is extracted again.
    let stamp_text = format!("{TARBALL} {} {}\n", meta.len(), WANTED.join(","));
    let stamp = dir.join(".stamp");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(stamp_text.as_str()) {
        return Ok(LinuxHeaders { root: dir });
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir)?;
    // The tarball's top directory is `linux-source-6.12/`.
    let mut cmd = Command::new("tar");
    cmd.arg("-xJf")
        .arg(tar)
        .arg("-C")
        .arg(&dir)
        .args(["--strip-components=1", "--wildcards"]);
    for w in WANTED {
        cmd.arg(format!("linux-source-6.12/{w}"));
    }
    run(&mut cmd)?;
    let probe = dir.join("drivers/gpu/drm/amd/amdgpu/amdgpu_ucode.h");
    if !probe.exists() {
        bail!("extraction finished but {} is missing", probe.display());
    }
    std::fs::write(&stamp, stamp_text)?;
    Ok(LinuxHeaders { root: dir })
}
