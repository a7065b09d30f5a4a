//! Which engine a blob is for.
//!
//! The container format does not say: a `1.0` header could be CP, RLC,
//! MES, SDMA, SMC, PSP or IMU microcode. Linux knows because each IP
//! block requests its files by name (`amdgpu/<prefix>_<role>.bin`), so
//! identification here works from the same names. The MES pipe in
//! particular is only in the name: `amdgpu_mes_init_microcode()` asks for
//! `_mes_2` (gfx11) or `_mes` for the scheduler pipe, `_mes1` for the KIQ
//! pipe, and `_uni_mes` when one MES serves both (gfx12).

/// CP micro-engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpEngine {
    Pfp,
    Me,
    Ce,
    Mec,
    Mec2,
}

/// MES pipes (`AMDGPU_MES_SCHED_PIPE`, `AMDGPU_MES_KIQ_PIPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MesPipe {
    /// Pipe 0: the scheduler that owns user queues.
    Scheduler,
    /// Pipe 1: the kernel interface queue.
    Kiq,
    /// gfx12 unified MES: one image for both pipes.
    Unified,
}

/// What a firmware file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Cp(CpEngine),
    Rlc,
    Mes(MesPipe),
    Imu,
    Sdma,
    /// PSP secure OS bundle (`*_sos.bin`).
    PspSos,
    /// PSP table of contents (`*_toc.bin`).
    PspToc,
    /// PSP AMD secure driver (`*_asd.bin`).
    PspAsd,
    /// PSP trusted applications (`*_ta.bin`).
    PspTa,
    /// SMC/SMU (`*_smc.bin`, `smu_*.bin`).
    Smc,
    /// Memory controller (`*_mc.bin`).
    Mc,
    GpuInfo,
    Dmcu,
    Dmcub,
    Vcn,
    Uvd,
    Vce,
    Vpe,
    UmschMm,
    Isp,
    Unknown,
}

impl Kind {
    /// Classifies a file by name (with or without directory and `.bin`).
    /// Tokens are read from the end, skipping qualifiers such as `2`,
    /// `wks`, `sk` or `am4`, so the role word nearest the end decides.
    pub fn from_file_name(name: &str) -> Kind {
        let base = name.rsplit('/').next().unwrap_or(name);
        let stem = base.strip_suffix(".bin").unwrap_or(base);
        if stem.ends_with("_uni_mes") {
            return Kind::Mes(MesPipe::Unified);
        }
        for tok in stem.rsplit('_') {
            let k = match tok {
                "pfp" => Kind::Cp(CpEngine::Pfp),
                "me" => Kind::Cp(CpEngine::Me),
                "ce" => Kind::Cp(CpEngine::Ce),
                "mec" => Kind::Cp(CpEngine::Mec),
                "mec2" => Kind::Cp(CpEngine::Mec2),
                "mes" => Kind::Mes(MesPipe::Scheduler),
                "mes1" => Kind::Mes(MesPipe::Kiq),
                "rlc" => Kind::Rlc,
                "imu" => Kind::Imu,
                "sdma" | "sdma1" => Kind::Sdma,
                "sos" => Kind::PspSos,
                "toc" => Kind::PspToc,
                "asd" => Kind::PspAsd,
                "ta" => Kind::PspTa,
                "smc" | "smu" => Kind::Smc,
                "mc" => Kind::Mc,
                "info" => Kind::GpuInfo,
                "dmcu" => Kind::Dmcu,
                "dmcub" => Kind::Dmcub,
                "vcn" => Kind::Vcn,
                "uvd" => Kind::Uvd,
                "vce" => Kind::Vce,
                "vpe" => Kind::Vpe,
                "umsch" => Kind::UmschMm,
                "isp" => Kind::Isp,
                _ => continue,
            };
            return k;
        }
        Kind::Unknown
    }

    /// A stable lower-case name, used by the CLI and its JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cp(CpEngine::Pfp) => "cp-pfp",
            Kind::Cp(CpEngine::Me) => "cp-me",
            Kind::Cp(CpEngine::Ce) => "cp-ce",
            Kind::Cp(CpEngine::Mec) => "cp-mec",
            Kind::Cp(CpEngine::Mec2) => "cp-mec2",
            Kind::Rlc => "rlc",
            Kind::Mes(MesPipe::Scheduler) => "mes-sched",
            Kind::Mes(MesPipe::Kiq) => "mes-kiq",
            Kind::Mes(MesPipe::Unified) => "mes-unified",
            Kind::Imu => "imu",
            Kind::Sdma => "sdma",
            Kind::PspSos => "psp-sos",
            Kind::PspToc => "psp-toc",
            Kind::PspAsd => "psp-asd",
            Kind::PspTa => "psp-ta",
            Kind::Smc => "smc",
            Kind::Mc => "mc",
            Kind::GpuInfo => "gpu-info",
            Kind::Dmcu => "dmcu",
            Kind::Dmcub => "dmcub",
            Kind::Vcn => "vcn",
            Kind::Uvd => "uvd",
            Kind::Vce => "vce",
            Kind::Vpe => "vpe",
            Kind::UmschMm => "umsch-mm",
            Kind::Isp => "isp",
            Kind::Unknown => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names as `amdgpu_mes_init_microcode()`, `gfx_v11_0_init_microcode()`
    /// and friends build them.
    #[test]
    fn linux_file_names() {
        let cases = [
            ("amdgpu/gc_11_0_0_mes_2.bin", Kind::Mes(MesPipe::Scheduler)),
            ("gc_11_0_0_mes.bin", Kind::Mes(MesPipe::Scheduler)),
            ("gc_11_0_3_mes1.bin", Kind::Mes(MesPipe::Kiq)),
            ("gc_12_0_0_uni_mes.bin", Kind::Mes(MesPipe::Unified)),
            ("gc_11_0_0_pfp.bin", Kind::Cp(CpEngine::Pfp)),
            ("navi14_mec2_wks.bin", Kind::Cp(CpEngine::Mec2)),
            ("aldebaran_sjt_mec.bin", Kind::Cp(CpEngine::Mec)),
            ("polaris10_mec_2.bin", Kind::Cp(CpEngine::Mec)),
            ("picasso_rlc_am4.bin", Kind::Rlc),
            ("gc_11_0_0_rlc_1.bin", Kind::Rlc),
            ("sdma_4_4_2.bin", Kind::Sdma),
            ("hawaii_sdma1.bin", Kind::Sdma),
            ("psp_13_0_6_sos.bin", Kind::PspSos),
            ("smu_13_0_0.bin", Kind::Smc),
            ("polaris10_smc_sk.bin", Kind::Smc),
            ("polaris12_32_mc.bin", Kind::Mc),
            ("dcn_3_1_4_dmcub.bin", Kind::Dmcub),
            ("umsch_mm_4_0_0.bin", Kind::UmschMm),
            ("vega10_gpu_info.bin", Kind::GpuInfo),
            ("frobnicator.bin", Kind::Unknown),
        ];
        for (name, kind) in cases {
            assert_eq!(Kind::from_file_name(name), kind, "{name}");
        }
    }
}
