//! PCI addresses: domain (segment), bus, device, function.

use core::fmt;

/// A function's address, printed and parsed as `dddd:bb:dd.f` (the form
/// sysfs and `lspci -D` use).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bdf {
    pub domain: u16,
    pub bus: u8,
    /// 0..=31.
    pub device: u8,
    /// 0..=7.
    pub function: u8,
}

/// Why a string is not a BDF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BdfError {
    /// Not of the form `[dddd:]bb:dd.f` with hex numbers.
    Syntax,
    /// Device above 31 or function above 7.
    OutOfRange { device: u8, function: u8 },
}

impl fmt::Display for BdfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BdfError::Syntax => f.write_str("expected a PCI address like 0000:03:00.0"),
            BdfError::OutOfRange { device, function } => write!(
                f,
                "device {device:#x} / function {function} out of range (device <= 0x1f, function <= 7)"
            ),
        }
    }
}

impl Bdf {
    pub const fn new(domain: u16, bus: u8, device: u8, function: u8) -> Self {
        Bdf {
            domain,
            bus,
            device: device & 0x1f,
            function: function & 7,
        }
    }

    /// Parses `dddd:bb:dd.f` or `bb:dd.f` (domain 0).
    pub fn parse(s: &str) -> Result<Self, BdfError> {
        let (rest, function) = s.rsplit_once('.').ok_or(BdfError::Syntax)?;
        let mut parts = rest.rsplitn(3, ':');
        let device = parts.next().ok_or(BdfError::Syntax)?;
        let bus = parts.next().ok_or(BdfError::Syntax)?;
        let domain = parts.next().unwrap_or("0");
        let hex = |t: &str| {
            if t.is_empty() || t.len() > 4 {
                return Err(BdfError::Syntax);
            }
            u16::from_str_radix(t, 16).map_err(|_| BdfError::Syntax)
        };
        let domain = hex(domain)?;
        let bus = u8::try_from(hex(bus)?).map_err(|_| BdfError::Syntax)?;
        let device = u8::try_from(hex(device)?).map_err(|_| BdfError::Syntax)?;
        let function = u8::try_from(hex(function)?).map_err(|_| BdfError::Syntax)?;
        if device > 31 || function > 7 {
            return Err(BdfError::OutOfRange { device, function });
        }
        Ok(Bdf {
            domain,
            bus,
            device,
            function,
        })
    }
}

impl fmt::Display for Bdf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

impl core::str::FromStr for Bdf {
    type Err = BdfError;
    fn from_str(s: &str) -> Result<Self, BdfError> {
        Bdf::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sysfs_names_and_short_forms() {
        assert_eq!(Bdf::parse("0000:03:00.1"), Ok(Bdf::new(0, 3, 0, 1)));
        assert_eq!(Bdf::parse("0a:1f.7"), Ok(Bdf::new(0, 0x0a, 0x1f, 7)));
        assert_eq!(
            Bdf::parse("00:20.0"),
            Err(BdfError::OutOfRange {
                device: 0x20,
                function: 0
            })
        );
        assert_eq!(Bdf::parse("00:01"), Err(BdfError::Syntax));
        assert_eq!(Bdf::parse("zz:01.0"), Err(BdfError::Syntax));
    }
}
