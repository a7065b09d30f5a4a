//! How long the model's logs grow (model convention).
//!
//! Every log a block model keeps (refusals, events, dropped doorbells,
//! faults) records what a driver did to it, so a driver that keeps doing
//! something wrong would grow it without end, and a long run (a fuzzer's
//! ten million inputs against one model) would run the process out of
//! memory. A real device keeps no such log; the model keeps the first
//! [`LOG_CAP`] entries of each, which are the ones that explain a
//! failure, and counts nothing past them.

use alloc::vec::Vec;

/// Entries kept per log.
pub const LOG_CAP: usize = 1 << 16;

/// Appending to a log with the cap.
pub trait Keep<T> {
    /// Appends `e` unless the log holds [`LOG_CAP`] entries already.
    fn keep(&mut self, e: T);
}

impl<T> Keep<T> for Vec<T> {
    #[inline]
    fn keep(&mut self, e: T) {
        if self.len() < LOG_CAP {
            self.push(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Keep, LOG_CAP};
    use alloc::vec::Vec;

    #[test]
    fn keeps_the_first_entries_only() {
        let mut v = Vec::new();
        for i in 0..LOG_CAP + 10 {
            v.keep(i);
        }
        assert_eq!(v.len(), LOG_CAP);
        assert_eq!(v.last(), Some(&(LOG_CAP - 1)));
    }
}
