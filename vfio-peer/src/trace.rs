//! The reference trace: every access the guest's driver makes to the
//! function, one line each, in order, as the server saw it.
//!
//! Lines (offsets and values in hex):
//! `R <BAR5 byte> <value>`, `W <BAR5 byte> <value>`, `D <BAR2 byte>
//! <value>` (doorbell), `C <config byte> <value>` (config write),
//! `M <iova> <size>` (DMA map), `! <text>` (a refused access).

use std::io::Write;

/// One access, as the trace records it.
#[derive(Debug, Clone, Copy)]
pub enum Access<'a> {
    RegRead { offset: u64, value: u32 },
    RegWrite { offset: u64, value: u32 },
    Doorbell { offset: u64, value: u64 },
    ConfigWrite { offset: u64, value: u32 },
    DmaMap { iova: u64, size: u64 },
    Refused(&'a str),
}

impl core::fmt::Display for Access<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Access::RegRead { offset, value } => write!(f, "R {offset:#x} {value:#x}"),
            Access::RegWrite { offset, value } => write!(f, "W {offset:#x} {value:#x}"),
            Access::Doorbell { offset, value } => write!(f, "D {offset:#x} {value:#x}"),
            Access::ConfigWrite { offset, value } => write!(f, "C {offset:#x} {value:#x}"),
            Access::DmaMap { iova, size } => write!(f, "M {iova:#x} {size:#x}"),
            Access::Refused(why) => write!(f, "! {why}"),
        }
    }
}

/// Where the lines go: a file, or nowhere (the counts still count).
#[derive(Debug)]
pub struct Trace {
    out: Option<std::io::BufWriter<std::fs::File>>,
    /// The first write error, after which nothing more is written.
    failed: Option<std::io::ErrorKind>,
}

impl Trace {
    /// A trace written to `path` (created or truncated).
    pub fn to_file(path: &std::path::Path) -> std::io::Result<Self> {
        Ok(Trace {
            out: Some(std::io::BufWriter::new(std::fs::File::create(path)?)),
            failed: None,
        })
    }

    /// No trace.
    pub fn none() -> Self {
        Trace {
            out: None,
            failed: None,
        }
    }

    /// Appends one access.
    pub fn record(&mut self, a: Access<'_>) {
        if self.failed.is_some() {
            return;
        }
        if let Some(out) = self.out.as_mut()
            && let Err(e) = writeln!(out, "{a}")
        {
            self.failed = Some(e.kind());
        }
    }

    /// Flushes; the first error the trace met, if any.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if let Some(kind) = self.failed {
            return Err(kind.into());
        }
        match self.out.as_mut() {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_the_access_kind_offset_and_value() {
        assert_eq!(
            Access::RegWrite {
                offset: 0x1234,
                value: 0xdead
            }
            .to_string(),
            "W 0x1234 0xdead"
        );
        assert_eq!(
            Access::Doorbell {
                offset: 0x10,
                value: 7
            }
            .to_string(),
            "D 0x10 0x7"
        );
        let dir = std::env::temp_dir().join(format!("bb-trace-{}", std::process::id()));
        let mut t = Trace::to_file(&dir).unwrap();
        t.record(Access::RegRead {
            offset: 0,
            value: 1,
        });
        t.record(Access::Refused("a 2-byte doorbell"));
        t.flush().unwrap();
        let text = std::fs::read_to_string(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(text, "R 0x0 0x1\n! a 2-byte doorbell\n");
    }
}
