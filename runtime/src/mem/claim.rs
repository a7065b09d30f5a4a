//! One owner per device structure, recorded in host memory.
//!
//! A ring (KIQ, MES, HIQ) or an AQL queue's descriptor is written by
//! plain stores from exactly one client at a time; that is what makes
//! their `unsafe impl Sync` sound. The flag saying "someone owns this"
//! used to live in the structure itself, in DMA memory that a device or
//! (for a user queue) a user kernel can store to: one stray byte could
//! clear it, or make it a value that is not a valid `bool`. The claims
//! live here instead, in a static table of addresses behind a spin lock:
//! no heap, nothing the device reaches.
//!
//! [`Claim::take`] records an address (a structure's first byte) and
//! refuses one already recorded; dropping the [`Claim`] releases it.

use spin::Mutex;

/// Structures claimed at once, process-wide: every ring and queue of
/// every device a process drives (a bring-up holds about ten per XCC).
pub const CLAIMS: usize = 1024;

static TABLE: Mutex<[usize; CLAIMS]> = Mutex::new([0; CLAIMS]);

/// Why an address could not be claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimError {
    /// Another live owner holds it.
    Taken,
    /// [`CLAIMS`] structures are claimed already.
    Full,
}

/// Ownership of the structure at `address` until dropped.
#[derive(Debug, PartialEq, Eq)]
pub struct Claim {
    address: usize,
}

impl Claim {
    /// Claims `address` (non-zero: a structure's first byte).
    pub fn take(address: usize) -> Result<Claim, ClaimError> {
        let mut t = TABLE.lock();
        if t.contains(&address) {
            return Err(ClaimError::Taken);
        }
        let free = t.iter_mut().find(|a| **a == 0).ok_or(ClaimError::Full)?;
        *free = address;
        Ok(Claim { address })
    }

    /// The claimed address.
    pub fn address(&self) -> usize {
        self.address
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut t = TABLE.lock();
        if let Some(a) = t.iter_mut().find(|a| **a == self.address) {
            *a = 0;
        }
    }
}

/// Whether a live [`Claim`] holds `address`.
pub fn is_claimed(address: usize) -> bool {
    address != 0 && TABLE.lock().contains(&address)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn one_owner_until_dropped() {
        // Addresses no other test uses (the table is process-wide).
        let a = Claim::take(0xdead_0000).unwrap();
        assert!(is_claimed(0xdead_0000));
        assert_eq!(Claim::take(0xdead_0000), Err(ClaimError::Taken));
        let b = Claim::take(0xdead_1000).unwrap();
        drop(a);
        assert!(!is_claimed(0xdead_0000));
        let a = Claim::take(0xdead_0000).unwrap();
        assert_eq!(a.address(), 0xdead_0000);
        drop(b);
    }
}
