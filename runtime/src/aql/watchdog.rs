//! Hang detection for one queue, and the in-flight packet ledger that
//! recovery accounts from (issue 20, item 4).
//!
//! [`Watchdog`] looks at a queue's read and write indices: a queue with
//! work pending (write index ahead of read index) whose read index has
//! not moved for the bound is hung. That is the check Linux's DRM
//! scheduler makes per job (`drm_sched_job_timedout()` fires when a job
//! has not signalled within `timeout`; amdgpu's compute timeout is 10 s
//! by default, `amdgpu_device_get_job_timeout_settings()`), made here on
//! the read index the packet processor reports in `amd_queue_t` because
//! that is what an AQL queue exposes without interrupts. tinygrad has no
//! watchdog: its waits time out (`wait_cond`) and it raises.
//!
//! [`Ledger`] remembers, without a heap, each packet submitted and the
//! completion signal that says it finished; at recovery every packet not
//! known complete is given a [`Fate`]: completed (its signal reached its
//! done value), or lost, fetched or not (the read index passed it or
//! not). None is dropped silently: a packet the ledger had no room for is
//! refused at [`Ledger::track`], before it is submitted.

use crate::aql::signal::SignalMemory;

/// What one look found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// Nothing pending.
    Idle,
    /// Work pending and the read index moved within the bound.
    Progressing,
    /// Work pending and the read index stood still for the bound.
    Hung(Stall),
}

/// A queue that stopped: where, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    pub read_index: u64,
    pub write_index: u64,
    /// How long the read index has not moved, in ns (at least the bound).
    pub stalled_ns: u64,
}

impl core::fmt::Display for Stall {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "read index stuck at {} with the write index at {} ({} packets pending) for {} ms",
            self.read_index,
            self.write_index,
            self.write_index.wrapping_sub(self.read_index),
            self.stalled_ns / 1_000_000
        )
    }
}

/// The per-queue watchdog: bounded, no heap, no device access of its own
/// (the caller reads the indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watchdog {
    bound_ns: u64,
    last_read: u64,
    since_ns: u64,
}

impl Watchdog {
    /// A watchdog that calls a queue hung after `bound_ns` without its
    /// read index moving, starting from `read_index` at `now_ns`.
    pub const fn new(bound_ns: u64, read_index: u64, now_ns: u64) -> Self {
        Watchdog {
            bound_ns,
            last_read: read_index,
            since_ns: now_ns,
        }
    }

    pub const fn bound_ns(&self) -> u64 {
        self.bound_ns
    }

    /// One look at the queue's indices at `now_ns`.
    pub fn observe(&mut self, read_index: u64, write_index: u64, now_ns: u64) -> Watch {
        if read_index != self.last_read {
            self.last_read = read_index;
            self.since_ns = now_ns;
        }
        // Indices only grow; a read index at or past the write index has
        // nothing pending.
        if write_index.wrapping_sub(read_index) == 0
            || write_index.wrapping_sub(read_index) > u64::MAX / 2
        {
            self.since_ns = now_ns;
            return Watch::Idle;
        }
        let stalled_ns = now_ns.saturating_sub(self.since_ns);
        if stalled_ns >= self.bound_ns {
            Watch::Hung(Stall {
                read_index,
                write_index,
                stalled_ns,
            })
        } else {
            Watch::Progressing
        }
    }
}

/// What became of one packet submitted before a recovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Its completion signal reached its done value.
    Completed,
    /// Not completed. `fetched`: the read index had passed it (the packet
    /// processor launched it; its work did not finish).
    Lost { fetched: bool },
}

/// One packet's fate, by packet index (the id `submit` returned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketFate {
    pub id: u64,
    pub fate: Fate,
}

impl core::fmt::Display for PacketFate {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.fate {
            Fate::Completed => write!(f, "packet {}: completed", self.id),
            Fate::Lost { fetched: true } => {
                write!(f, "packet {}: lost (fetched, never completed)", self.id)
            }
            Fate::Lost { fetched: false } => write!(f, "packet {}: lost (never fetched)", self.id),
        }
    }
}

/// The ledger is full: the packet was not submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerFull {
    pub capacity: usize,
}

impl core::fmt::Display for LedgerFull {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} packets are already in flight and unaccounted; wait for some to complete before submitting more",
            self.capacity
        )
    }
}

#[derive(Clone, Copy)]
struct Entry<'s> {
    id: u64,
    signal: &'s SignalMemory,
    done: i64,
}

/// Packets in flight and the signal value that says each finished. A
/// fixed array: tracking a packet allocates nothing.
pub struct Ledger<'s, const N: usize> {
    entries: [Option<Entry<'s>>; N],
}

impl<const N: usize> core::fmt::Debug for Ledger<'_, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ledger")
            .field("in_flight", &self.len())
            .field("capacity", &N)
            .finish()
    }
}

impl<const N: usize> Default for Ledger<'_, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'s, const N: usize> Ledger<'s, N> {
    pub const fn new() -> Self {
        Ledger { entries: [None; N] }
    }

    /// Packets tracked and not yet known complete.
    pub fn len(&self) -> usize {
        self.entries.iter().filter(|e| e.is_some()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Packets tracked whose signal has not reached its done value.
    pub fn pending(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.is_some_and(|x| x.signal.value() != x.done))
            .count()
    }

    /// Forgets packets whose signal reached their done value.
    pub fn retire_completed(&mut self) -> usize {
        let mut n = 0;
        for e in &mut self.entries {
            if e.is_some_and(|x| x.signal.value() == x.done) {
                *e = None;
                n += 1;
            }
        }
        n
    }

    /// Tracks packet `id`, complete once `signal` reads `done`. Call it
    /// before the packet is submitted: a full ledger refuses, so no packet
    /// goes out untracked. Completed packets are retired first.
    pub fn track(
        &mut self,
        id: u64,
        signal: &'s SignalMemory,
        done: i64,
    ) -> Result<(), LedgerFull> {
        let free = match self.entries.iter().position(Option::is_none) {
            Some(i) => Some(i),
            None => {
                self.retire_completed();
                self.entries.iter().position(Option::is_none)
            }
        };
        match free.and_then(|i| self.entries.get_mut(i)) {
            Some(slot) => {
                *slot = Some(Entry { id, signal, done });
                Ok(())
            }
            None => Err(LedgerFull { capacity: N }),
        }
    }

    /// Every tracked packet's fate given the queue's read index, oldest
    /// first, handed to `out`; the ledger is emptied. Returns how many.
    pub fn account(&mut self, read_index: u64, mut out: impl FnMut(PacketFate)) -> usize {
        let mut n = 0;
        loop {
            let oldest = self
                .entries
                .iter()
                .enumerate()
                .filter_map(|(i, e)| e.map(|x| (i, x)))
                .min_by_key(|(_, x)| x.id);
            let Some((i, e)) = oldest else {
                return n;
            };
            if let Some(slot) = self.entries.get_mut(i) {
                *slot = None;
            }
            let fate = if e.signal.value() == e.done {
                Fate::Completed
            } else {
                Fate::Lost {
                    fetched: e.id < read_index,
                }
            };
            out(PacketFate { id: e.id, fate });
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moving_read_index_is_not_a_hang() {
        let mut w = Watchdog::new(100, 0, 0);
        assert_eq!(w.observe(0, 4, 50), Watch::Progressing);
        assert_eq!(w.observe(1, 4, 120), Watch::Progressing);
        assert_eq!(w.observe(2, 4, 219), Watch::Progressing);
        assert_eq!(w.observe(4, 4, 1000), Watch::Idle);
    }

    #[test]
    fn a_stuck_read_index_with_work_pending_is_a_hang_after_the_bound() {
        let mut w = Watchdog::new(100, 3, 0);
        assert_eq!(w.observe(3, 3, 500), Watch::Idle);
        assert_eq!(w.observe(3, 5, 550), Watch::Progressing);
        assert_eq!(
            w.observe(3, 5, 600),
            Watch::Hung(Stall {
                read_index: 3,
                write_index: 5,
                stalled_ns: 100
            })
        );
    }

    #[test]
    fn the_ledger_accounts_every_packet_and_refuses_past_capacity() {
        let a = SignalMemory::new(1);
        let b = SignalMemory::new(1);
        let c = SignalMemory::new(1);
        let mut l: Ledger<'_, 2> = Ledger::new();
        assert!(l.is_empty());
        l.track(7, &a, 0).unwrap();
        assert!(!l.is_empty(), "a tracked packet is in the ledger");
        l.track(8, &b, 0).unwrap();
        assert_eq!(l.track(9, &c, 0), Err(LedgerFull { capacity: 2 }));
        a.reset(0);
        l.track(9, &c, 0).unwrap();
        b.reset(0);
        let mut fates = [None; 2];
        let mut k = 0;
        // Read index 9: packet 9 not fetched.
        let n = l.account(9, |f| {
            fates[k] = Some(f);
            k += 1;
        });
        assert_eq!(n, 2);
        assert_eq!(
            fates,
            [
                Some(PacketFate {
                    id: 8,
                    fate: Fate::Completed
                }),
                Some(PacketFate {
                    id: 9,
                    fate: Fate::Lost { fetched: false }
                })
            ]
        );
        assert!(l.is_empty());
    }

    /// `pending` counts the tracked packets whose signal has not reached
    /// its done value: what `recover::watch` waits on. A completed packet
    /// stays tracked (and in `len`) but is no longer pending.
    #[test]
    fn pending_counts_only_the_packets_not_yet_done() {
        let a = SignalMemory::new(1);
        let b = SignalMemory::new(1);
        let mut l: Ledger<'_, 4> = Ledger::new();
        assert_eq!(l.pending(), 0);
        l.track(1, &a, 0).unwrap();
        l.track(2, &b, 0).unwrap();
        assert_eq!(l.pending(), 2);
        a.reset(0);
        assert_eq!((l.pending(), l.len()), (1, 2));
        b.reset(0);
        assert_eq!((l.pending(), l.len()), (0, 2));
    }
}
