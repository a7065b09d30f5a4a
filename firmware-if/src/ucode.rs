//! Firmware container headers (`amdgpu_ucode.h`).
//!
//! Every amdgpu blob starts with a 32-byte `common_firmware_header`; the
//! kind-specific header follows it, and the payload starts at
//! `ucode_array_offset_bytes`. The `crc32` field matches no standard CRC
//! and Linux never checks it, so it is exposed but not verified.

use barebell_facts::{Fact, layout_facts};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, LittleEndian, U16, U32};

pub mod display;
pub mod gfx;
pub mod gpu_info;
pub mod imu;
pub mod mc;
pub mod mes;
pub mod multimedia;
pub mod psp;
pub mod rlc;
pub mod sdma;
pub mod smc;

/// A little-endian `uint32_t` as it sits in a blob.
pub type Le32 = U32<LittleEndian>;

/// `struct common_firmware_header`, little-endian on disk.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct CommonFirmwareHeader {
    pub size_bytes: U32<LittleEndian>,
    pub header_size_bytes: U32<LittleEndian>,
    pub header_version_major: U16<LittleEndian>,
    pub header_version_minor: U16<LittleEndian>,
    pub ip_version_major: U16<LittleEndian>,
    pub ip_version_minor: U16<LittleEndian>,
    pub ucode_version: U32<LittleEndian>,
    pub ucode_size_bytes: U32<LittleEndian>,
    pub ucode_array_offset_bytes: U32<LittleEndian>,
    pub crc32: U32<LittleEndian>,
}

const _: () = assert!(core::mem::size_of::<CommonFirmwareHeader>() == 32);

/// Why a container was rejected. Each variant names the field and carries
/// the values that failed, so a bad blob can be diagnosed from the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The blob is shorter than a header needs.
    Truncated {
        what: &'static str,
        need: usize,
        have: usize,
    },
    /// A header field points outside the blob (or overflows while doing so).
    OutOfBounds {
        field: &'static str,
        offset: u64,
        len: u64,
        blob_len: usize,
    },
    /// A size field disagrees with the blob or with another field.
    BadSize {
        field: &'static str,
        value: u64,
        limit: u64,
    },
    /// More sections than [`MAX_SECTIONS`]; only a corrupt descriptor
    /// count can get here, since Linux caps PSP packaging well below it.
    TooManySections { limit: usize },
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Error::Truncated { what, need, have } => {
                write!(f, "{what}: need {need} bytes, blob has {have}")
            }
            Error::OutOfBounds {
                field,
                offset,
                len,
                blob_len,
            } => write!(
                f,
                "{field}: range {offset:#x}+{len:#x} lies outside the {blob_len}-byte blob"
            ),
            Error::BadSize {
                field,
                value,
                limit,
            } => {
                write!(f, "{field} = {value:#x} exceeds {limit:#x}")
            }
            Error::TooManySections { limit } => {
                write!(f, "more than {limit} sections")
            }
        }
    }
}

/// A validated view of a firmware blob's common header.
#[derive(Debug, Clone, Copy)]
pub struct Container<'a> {
    blob: &'a [u8],
    header: &'a CommonFirmwareHeader,
}

impl<'a> Container<'a> {
    /// Checks the common header against the blob: header and payload must
    /// lie inside it, and `size_bytes` may not claim more than it holds.
    pub fn parse(blob: &'a [u8]) -> Result<Self, Error> {
        let (header, _) =
            CommonFirmwareHeader::ref_from_prefix(blob).map_err(|_| Error::Truncated {
                what: "common_firmware_header",
                need: core::mem::size_of::<CommonFirmwareHeader>(),
                have: blob.len(),
            })?;
        let blob_len = blob.len() as u64;
        let size = u64::from(header.size_bytes.get());
        if size > blob_len {
            return Err(Error::BadSize {
                field: "size_bytes",
                value: size,
                limit: blob_len,
            });
        }
        let hdr = u64::from(header.header_size_bytes.get());
        if hdr < core::mem::size_of::<CommonFirmwareHeader>() as u64 || hdr > blob_len {
            return Err(Error::BadSize {
                field: "header_size_bytes",
                value: hdr,
                limit: blob_len,
            });
        }
        let c = Container { blob, header };
        c.payload()?;
        Ok(c)
    }

    pub fn header(&self) -> &'a CommonFirmwareHeader {
        self.header
    }

    pub fn blob(&self) -> &'a [u8] {
        self.blob
    }

    /// `(major, minor)` of the kind-specific header that follows.
    pub fn header_version(&self) -> (u16, u16) {
        (
            self.header.header_version_major.get(),
            self.header.header_version_minor.get(),
        )
    }

    /// The ucode payload: `ucode_size_bytes` at `ucode_array_offset_bytes`.
    pub fn payload(&self) -> Result<&'a [u8], Error> {
        self.range(
            "ucode_array_offset_bytes+ucode_size_bytes",
            self.header.ucode_array_offset_bytes.get(),
            self.header.ucode_size_bytes.get(),
        )
    }

    /// Bounds-checked sub-slice of the blob; every offset/size pair a
    /// kind-specific header carries goes through here.
    pub fn range(&self, field: &'static str, offset: u32, len: u32) -> Result<&'a [u8], Error> {
        let err = Error::OutOfBounds {
            field,
            offset: offset.into(),
            len: len.into(),
            blob_len: self.blob.len(),
        };
        let start = usize::try_from(offset).map_err(|_| err)?;
        let end = start
            .checked_add(usize::try_from(len).map_err(|_| err)?)
            .ok_or(err)?;
        self.blob.get(start..end).ok_or(err)
    }

    /// The kind-specific header `T`, which begins at byte 0 and embeds the
    /// common header; the blob must hold all of `T`.
    ///
    /// `header_size_bytes` is deliberately not compared with `T`: Linux
    /// never reads it, and real blobs understate it (`raven2_rlc.bin` and
    /// `vega20_rlc.bin` are RLC v2.1 with populated v2.1 fields but declare
    /// the 104-byte v2.0 size).
    pub fn view<T: FromBytes + KnownLayout + Immutable>(
        &self,
        what: &'static str,
    ) -> Result<&'a T, Error> {
        let (v, _) = T::ref_from_prefix(self.blob).map_err(|_| Error::Truncated {
            what,
            need: core::mem::size_of::<T>(),
            have: self.blob.len(),
        })?;
        Ok(v)
    }

    /// A section at absolute `offset` of `size` bytes, checked to lie in
    /// the blob. The arithmetic that produced `offset` is the caller's;
    /// callers pass `u64` sums of `u32` fields, so it cannot overflow.
    pub fn section(
        &self,
        name: &'static str,
        field: &'static str,
        offset: u64,
        size: u64,
    ) -> Result<Section, Error> {
        let err = Error::OutOfBounds {
            field,
            offset,
            len: size,
            blob_len: self.blob.len(),
        };
        let end = offset.checked_add(size).ok_or(err)?;
        if end > self.blob.len() as u64 {
            return Err(err);
        }
        Ok(Section {
            name,
            offset: usize::try_from(offset).map_err(|_| err)?,
            size: usize::try_from(size).map_err(|_| err)?,
        })
    }

    /// The bytes of a section this container produced.
    pub fn bytes_of(&self, s: &Section) -> &'a [u8] {
        self.blob
            .get(s.offset..)
            .and_then(|b| b.get(..s.size))
            .unwrap_or(&[])
    }

    /// `ucode_array_offset_bytes`, where Linux's relative offsets start.
    pub fn array_offset(&self) -> u64 {
        self.header.ucode_array_offset_bytes.get().into()
    }

    /// The whole common-header payload as one section.
    pub fn payload_section(&self, name: &'static str) -> Result<Section, Error> {
        self.section(
            name,
            "ucode_array_offset_bytes+ucode_size_bytes",
            self.array_offset(),
            self.header.ucode_size_bytes.get().into(),
        )
    }
}

/// Most sections one blob can carry. The largest real layout is a PSP
/// v2.x descriptor list, which Linux caps at `UCODE_MAX_PSP_PACKAGING`
/// (26) entries.
pub const MAX_SECTIONS: usize = 32;

/// One loadable piece of a blob, at an absolute byte offset in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
}

/// A fixed-capacity list of sections (no heap in this crate).
#[derive(Debug, Clone, Copy)]
pub struct Sections {
    items: [Section; MAX_SECTIONS],
    len: usize,
}

impl Default for Sections {
    fn default() -> Self {
        Sections {
            items: [Section {
                name: "",
                offset: 0,
                size: 0,
            }; MAX_SECTIONS],
            len: 0,
        }
    }
}

impl Sections {
    pub fn push(&mut self, s: Section) -> Result<(), Error> {
        let slot = self.items.get_mut(self.len).ok_or(Error::TooManySections {
            limit: MAX_SECTIONS,
        })?;
        *slot = s;
        self.len += 1;
        Ok(())
    }

    /// Pushes `s` unless it is empty: Linux skips zero-sized pieces.
    pub fn push_nonempty(&mut self, s: Section) -> Result<(), Error> {
        if s.size == 0 { Ok(()) } else { self.push(s) }
    }

    pub fn as_slice(&self) -> &[Section] {
        self.items.get(..self.len).unwrap_or(&[])
    }

    pub fn get(&self, name: &str) -> Option<&Section> {
        self.as_slice().iter().find(|s| s.name == name)
    }
}

/// Little-endian `hi:lo` pair as Linux assembles it.
pub(crate) fn join64(lo: Le32, hi: Le32) -> u64 {
    u64::from(lo.get()) | (u64::from(hi.get()) << 32)
}

const UCODE: &str = "amdgpu_ucode.h";

/// Layout facts, checked against Linux 6.12 `amdgpu_ucode.h`.
pub const FACTS: &[Fact] = &layout_facts!(UCODE, CommonFirmwareHeader = "struct common_firmware_header" {
    size_bytes = "size_bytes",
    header_size_bytes = "header_size_bytes",
    header_version_major = "header_version_major",
    header_version_minor = "header_version_minor",
    ip_version_major = "ip_version_major",
    ip_version_minor = "ip_version_minor",
    ucode_version = "ucode_version",
    ucode_size_bytes = "ucode_size_bytes",
    ucode_array_offset_bytes = "ucode_array_offset_bytes",
    crc32 = "crc32",
});

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic header; real blobs are exercised by the harness tests.
    fn blob(size: u32, hdr: u32, off: u32, len: u32, total: usize) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&size.to_le_bytes());
        b[4..8].copy_from_slice(&hdr.to_le_bytes());
        b[8..10].copy_from_slice(&2u16.to_le_bytes());
        b[20..24].copy_from_slice(&len.to_le_bytes());
        b[24..28].copy_from_slice(&off.to_le_bytes());
        assert!(total <= 64);
        b
    }

    #[test]
    fn parses_and_slices_payload() {
        let b = blob(64, 32, 48, 16, 64);
        let c = Container::parse(&b).unwrap();
        assert_eq!(c.header_version(), (2, 0));
        assert_eq!(c.payload().unwrap().len(), 16);
    }

    #[test]
    fn rejects_short_blob() {
        let b = blob(64, 32, 48, 16, 64);
        assert_eq!(
            Container::parse(&b[..31]).unwrap_err(),
            Error::Truncated {
                what: "common_firmware_header",
                need: 32,
                have: 31
            }
        );
    }

    #[test]
    fn rejects_payload_past_end_and_overflow() {
        let b = blob(64, 32, 60, 16, 64);
        assert!(matches!(
            Container::parse(&b).unwrap_err(),
            Error::OutOfBounds {
                offset: 60,
                len: 16,
                ..
            }
        ));
        let b = blob(64, 32, u32::MAX, u32::MAX, 64);
        assert!(matches!(
            Container::parse(&b).unwrap_err(),
            Error::OutOfBounds { .. }
        ));
    }

    #[test]
    fn rejects_size_larger_than_blob() {
        let b = blob(65, 32, 32, 0, 64);
        assert_eq!(
            Container::parse(&b).unwrap_err(),
            Error::BadSize {
                field: "size_bytes",
                value: 65,
                limit: 64
            }
        );
    }
}
