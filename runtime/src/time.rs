//! Time sources for bounded waits.
//!
//! Every wait on the device is bounded, and a bound needs a clock. The
//! runtime does not pick one: bare metal uses the TSC, the host uses
//! `CLOCK_MONOTONIC`, and the model uses its own simulated time so that a
//! seeded run is reproducible. They all meet at [`Clock`].

/// A monotonic nanosecond clock.
pub trait Clock {
    fn now_ns(&self) -> u64;
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }
}

/// A point in time after which a wait gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    start_ns: u64,
    limit_ns: u64,
}

impl Deadline {
    pub fn after<C: Clock + ?Sized>(clock: &C, limit_ns: u64) -> Self {
        Deadline {
            start_ns: clock.now_ns(),
            limit_ns,
        }
    }

    /// Nanoseconds since the deadline was armed.
    pub fn elapsed_ns<C: Clock + ?Sized>(&self, clock: &C) -> u64 {
        clock.now_ns().saturating_sub(self.start_ns)
    }

    pub fn expired<C: Clock + ?Sized>(&self, clock: &C) -> bool {
        self.elapsed_ns(clock) >= self.limit_ns
    }

    pub fn limit_ns(&self) -> u64 {
        self.limit_ns
    }
}

/// Busy-waits `ns` nanoseconds on `clock` (Linux's `mdelay()`/`udelay()`
/// where a step needs time to pass rather than a condition to hold).
/// Bounded by the clock: it ends once `ns` have passed.
pub fn delay<C: Clock + ?Sized>(clock: &C, ns: u64) {
    let d = Deadline::after(clock, ns);
    while !d.expired(clock) {
        core::hint::spin_loop();
    }
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
        let d = Deadline::after(&c, 50);
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

    impl Manual {
        fn set_to(&self, v: u64) {
            self.0.set(v)
        }
    }
}
