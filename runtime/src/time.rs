//! Time sources for bounded waits.
//!
//! Every wait on the device is bounded, and a bound needs a clock. The
//! runtime does not pick one: bare metal uses the TSC, the host uses
//! `CLOCK_MONOTONIC`, and the model uses its own simulated time so that a
//! seeded run is reproducible. They all meet at [`Clock`].

/// A monotonic nanosecond clock.
pub trait Clock {
    fn now_ns(&self) -> u64;

    /// Lets `ns` pass without touching the device ([`delay`]): by default
    /// a spin on [`Clock::now_ns`] (bounded as every [`Deadline`]). A
    /// simulated clock moves its time forward instead, as a sleeping host
    /// would see it.
    fn sleep_ns(&self, ns: u64) {
        let mut d = Deadline::after(self, ns);
        while !d.expired(self) {
            core::hint::spin_loop();
        }
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }
    fn sleep_ns(&self, ns: u64) {
        (**self).sleep_ns(ns)
    }
}

/// How many polls in a row may see the same clock reading before a wait
/// gives up regardless of its time limit: the bound that holds when the
/// clock itself stalls (a TSC clock on a host that has none reads a
/// constant; a simulated clock nobody advances). 2^24 polls are several
/// milliseconds even for a loop of one load and a spin hint, longer than
/// the tick of any clock a wait is given (a coarse clock ticks every few
/// ms at worst), so a working clock always moves first.
pub const STALL_POLLS: u32 = 1 << 24;

/// A point in time after which a wait gives up.
///
/// Two bounds: the time limit on `clock`, and [`STALL_POLLS`] calls of
/// [`Deadline::expired`] in a row that saw the clock not move, so a
/// stalled clock cannot make a wait unbounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    start_ns: u64,
    limit_ns: u64,
    /// The reading the last [`Deadline::expired`] saw.
    last_ns: u64,
    /// Consecutive polls that saw `last_ns`.
    same: u32,
}

impl Deadline {
    pub fn after<C: Clock + ?Sized>(clock: &C, limit_ns: u64) -> Self {
        let now = clock.now_ns();
        Deadline {
            start_ns: now,
            limit_ns,
            last_ns: now,
            same: 0,
        }
    }

    /// Nanoseconds since the deadline was armed.
    pub fn elapsed_ns<C: Clock + ?Sized>(&self, clock: &C) -> u64 {
        clock.now_ns().saturating_sub(self.start_ns)
    }

    /// True once `limit_ns` have passed on `clock`, or once the clock has
    /// read the same value for [`STALL_POLLS`] calls in a row.
    pub fn expired<C: Clock + ?Sized>(&mut self, clock: &C) -> bool {
        let now = clock.now_ns();
        if now == self.last_ns {
            self.same = self.same.saturating_add(1);
            if self.same >= STALL_POLLS {
                return true;
            }
        } else {
            self.last_ns = now;
            self.same = 0;
        }
        now.saturating_sub(self.start_ns) >= self.limit_ns
    }

    /// Whether the clock stalled: the last [`STALL_POLLS`] polls saw it
    /// not move (so an expiry came from the poll bound, not from time).
    pub fn clock_stalled(&self) -> bool {
        self.same >= STALL_POLLS
    }

    pub fn limit_ns(&self) -> u64 {
        self.limit_ns
    }
}

/// Busy-waits `ns` nanoseconds on `clock` (Linux's `mdelay()`/`udelay()`
/// where a step needs time to pass rather than a condition to hold).
/// Bounded by the clock, and by [`STALL_POLLS`] if the clock stalls.
pub fn delay<C: Clock + ?Sized>(clock: &C, ns: u64) {
    clock.sleep_ns(ns);
}

/// `std::time::Instant` as a [`Clock`], for host tools.
#[cfg(feature = "std")]
#[derive(Debug, Clone, Copy)]
pub struct StdClock {
    origin: std::time::Instant,
}

#[cfg(feature = "std")]
impl Default for StdClock {
    fn default() -> Self {
        StdClock {
            origin: std::time::Instant::now(),
        }
    }
}

#[cfg(feature = "std")]
impl Clock for StdClock {
    fn now_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Called between looks at a fence. Production passes a spin hint; the
/// model passes a closure that lets the MES model run, which keeps a
/// single-threaded test deterministic.
pub trait Pause {
    fn pause(&mut self);
}

impl<F: FnMut()> Pause for F {
    fn pause(&mut self) {
        self()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    struct Manual(Cell<u64>);
    impl Clock for Manual {
        fn now_ns(&self) -> u64 {
            self.0.get()
        }
    }

    #[test]
    fn deadline_expires_exactly_at_limit() {
        let c = Manual(Cell::new(100));
        let mut d = Deadline::after(&c, 50);
        c.set_to(149);
        assert!(!d.expired(&c));
        c.set_to(150);
        assert!(d.expired(&c));
        assert_eq!(d.elapsed_ns(&c), 50);
    }

    /// Moves by 7 ns per read.
    struct Ticking(Cell<u64>);
    impl Clock for Ticking {
        fn now_ns(&self) -> u64 {
            self.0.set(self.0.get() + 7);
            self.0.get()
        }
    }

    #[test]
    fn delay_lasts_at_least_its_time_and_ends() {
        let c = Ticking(Cell::new(0));
        delay(&c, 1_000);
        assert!(c.0.get() >= 1_000);
        assert!(c.0.get() < 1_000 + 3 * 7);
    }

    #[test]
    fn clock_going_backwards_does_not_underflow() {
        let c = Manual(Cell::new(100));
        let d = Deadline::after(&c, 10);
        c.set_to(5);
        assert_eq!(d.elapsed_ns(&c), 0);
    }

    /// A clock that never moves still ends the wait, after exactly
    /// `STALL_POLLS` polls; a clock that moves resets the count.
    #[test]
    fn stalled_clock_is_bounded_by_polls() {
        let c = Manual(Cell::new(7));
        let mut d = Deadline::after(&c, u64::MAX);
        let mut polls = 0u64;
        while !d.expired(&c) {
            polls += 1;
            if polls == u64::from(STALL_POLLS) / 2 {
                c.set_to(8);
            }
        }
        // Half the bound before the clock moved once, then the full bound.
        assert_eq!(polls, u64::from(STALL_POLLS) / 2 + u64::from(STALL_POLLS));
        assert!(d.clock_stalled());
    }

    impl Manual {
        fn set_to(&self, v: u64) {
            self.0.set(v)
        }
    }
}
