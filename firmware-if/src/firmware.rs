//! One entry point for every container kind.
//!
//! [`parse`] validates the common header (which every amdgpu blob has),
//! then decodes the kind-specific header if this crate knows its layout.
//! A kind or header version it does not know is not an error: the result
//! carries [`Body::Unsupported`] together with the validated common
//! header, so a caller can still report versions and sizes.

use crate::kind::Kind;
use crate::ucode::{
    Container, Error, Section, Sections, display::Display, gfx::Gfx, gpu_info::GpuInfo,
    imu::ImuV1_0, mc::McV1_0, mes::Mes, multimedia::Multimedia, psp::Psp, rlc::Rlc, sdma::Sdma,
    smc::Smc,
};

/// The kind-specific part of a parsed blob.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    Gfx(Gfx<'a>),
    Rlc(Rlc<'a>),
    Mes(Mes<'a>),
    Imu(&'a ImuV1_0),
    Sdma(Sdma<'a>),
    Psp(Psp<'a>),
    Smc(Smc<'a>),
    Mc(&'a McV1_0),
    Display(Display<'a>),
    Multimedia(Multimedia<'a>),
    GpuInfo(GpuInfo<'a>),
    /// The kind, or this header version of it, is not decoded here.
    Unsupported(Unsupported),
}

/// Why a blob was not decoded past its common header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported {
    pub kind: Kind,
    pub header_version: (u16, u16),
}

impl core::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} header v{}.{} is not decoded (common header only)",
            self.kind.name(),
            self.header_version.0,
            self.header_version.1
        )
    }
}

/// A parsed firmware blob.
#[derive(Debug, Clone, Copy)]
pub struct Firmware<'a> {
    pub container: Container<'a>,
    pub kind: Kind,
    pub body: Body<'a>,
    sections: Sections,
}

impl<'a> Firmware<'a> {
    /// Pieces to load, at absolute file offsets, in header order.
    pub fn sections(&self) -> &[Section] {
        self.sections.as_slice()
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.get(name)
    }

    pub fn bytes(&self, s: &Section) -> &'a [u8] {
        self.container.bytes_of(s)
    }

    pub fn unsupported(&self) -> Option<Unsupported> {
        match self.body {
            Body::Unsupported(u) => Some(u),
            _ => None,
        }
    }
}

/// Parses `blob` as a `kind` container.
pub fn parse(kind: Kind, blob: &[u8]) -> Result<Firmware<'_>, Error> {
    let c = Container::parse(blob)?;
    let mut s = Sections::default();
    let out = &mut s;
    let body = match kind {
        Kind::Cp(_) => crate::ucode::gfx::parse(&c, out)?.map(Body::Gfx),
        Kind::Rlc => crate::ucode::rlc::parse(&c, out)?.map(Body::Rlc),
        Kind::Mes(_) => crate::ucode::mes::parse(&c, out)?.map(Body::Mes),
        Kind::Imu => crate::ucode::imu::parse(&c, out)?.map(Body::Imu),
        Kind::Sdma => crate::ucode::sdma::parse(&c, out)?.map(Body::Sdma),
        Kind::PspSos => crate::ucode::psp::parse_sos(&c, out)?.map(Body::Psp),
        Kind::PspToc => crate::ucode::psp::parse_payload(&c, "toc", out)?.map(Body::Psp),
        Kind::PspAsd => crate::ucode::psp::parse_payload(&c, "asd", out)?.map(Body::Psp),
        Kind::PspTa => crate::ucode::psp::parse_ta(&c, out)?.map(Body::Psp),
        Kind::Smc => crate::ucode::smc::parse(&c, out)?.map(Body::Smc),
        Kind::Mc => crate::ucode::mc::parse(&c, out)?.map(Body::Mc),
        Kind::Dmcu => crate::ucode::display::parse_dmcu(&c, out)?.map(Body::Display),
        Kind::Dmcub => crate::ucode::display::parse_dmcub(&c, out)?.map(Body::Display),
        Kind::Vcn | Kind::Uvd | Kind::Vce | Kind::Isp => {
            crate::ucode::multimedia::parse_payload(&c, out)?.map(Body::Multimedia)
        }
        Kind::Vpe => crate::ucode::multimedia::parse_vpe(&c, out)?.map(Body::Multimedia),
        Kind::UmschMm => crate::ucode::multimedia::parse_umsch(&c, out)?.map(Body::Multimedia),
        Kind::GpuInfo => crate::ucode::gpu_info::parse(&c, out)?.map(Body::GpuInfo),
        Kind::Unknown => None,
    };
    let body = match body {
        Some(b) => b,
        None => {
            // Whatever was collected belongs to no decoded layout.
            s = Sections::default();
            Body::Unsupported(Unsupported {
                kind,
                header_version: c.header_version(),
            })
        }
    };
    Ok(Firmware {
        container: c,
        kind,
        body,
        sections: s,
    })
}
