//! The x86 time-stamp counter as a latency timer.
//!
//! Reads are fenced so that the measured work cannot drift across them:
//! a start read is `lfence; rdtsc; lfence` (nothing earlier is still in
//! flight, nothing later has started), an end read is `rdtscp; lfence`
//! (everything earlier has retired, nothing later starts before the read).
//! This is the sequence Intel's "How to Benchmark Code Execution Times"
//! white paper and the SDM's RDTSCP description recommend.
//!
//! Ticks become nanoseconds through a calibration: against
//! `CLOCK_MONOTONIC_RAW` on a host (the CLI does this), or from CPUID leaf
//! 0x15 where the processor reports its crystal ratio (bare metal). The
//! unikernel falls back to the 8254 PIT where leaf 0x15 is silent
//! (`unikernel/src/pit.rs`); HPET is not used.
//!
//! Timestamps from another clock (the CP's `start_ts`/`end_ts`, or the
//! model's stand-in for them) are put on the TSC axis by [`Correlation`]:
//! a line through two [`Anchor`]s taken before and after a run. A single
//! anchor plus a frequency from a 100 ms calibration drifts by the
//! frequency error times the run length (measured: the doorbell-to-CP-start
//! interval wandered by ±200 ns across runs); two anchors that bracket the
//! run bound the error by the anchors' own read widths.

/// A TSC reading.
#[inline(always)]
pub fn start() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: lfence and rdtsc are baseline x86-64 instructions with no
        // memory operands.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// A TSC reading that waits for earlier instructions to retire.
#[inline(always)]
pub fn end() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{__rdtscp, _mm_lfence};
        let mut aux = 0u32;
        // SAFETY: rdtscp writes only `aux`, which is a valid local;
        // lfence has no operands. RDTSCP is present on every x86-64 CPU
        // barebell targets (checked by `features()` callers).
        unsafe {
            let t = __rdtscp(&mut aux);
            _mm_lfence();
            t
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// What CPUID says about the TSC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TscFeatures {
    /// `CPUID.80000001H:EDX[27]`.
    pub rdtscp: bool,
    /// `CPUID.80000007H:EDX[8]`: the TSC runs at a constant rate in every
    /// P-, C- and T-state, so ticks are time.
    pub invariant: bool,
    /// Frequency from CPUID leaf 0x15 (and 0x16's base clock when 0x15
    /// leaves the crystal unreported), if the processor gives one.
    pub cpuid_hz: Option<u64>,
    /// `CPUID.1:ECX[31]`: running under a hypervisor, which may virtualise
    /// or trap the TSC.
    pub hypervisor: bool,
}

/// Reads the TSC feature bits.
pub fn features() -> TscFeatures {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__cpuid;
        // CPUID is unprivileged and always present on x86-64. Every leaf
        // read below is first checked against the maximum leaf reported.
        let max_basic = __cpuid(0).eax;
        let max_ext = __cpuid(0x8000_0000).eax;
        let hypervisor = __cpuid(1).ecx >> 31 & 1 == 1;
        let rdtscp = max_ext >= 0x8000_0001 && __cpuid(0x8000_0001).edx >> 27 & 1 == 1;
        let invariant = max_ext >= 0x8000_0007 && __cpuid(0x8000_0007).edx >> 8 & 1 == 1;
        let cpuid_hz = if max_basic >= 0x15 {
            let l = __cpuid(0x15);
            let (den, num, crystal) = (u64::from(l.eax), u64::from(l.ebx), u64::from(l.ecx));
            if den != 0 && num != 0 && crystal != 0 {
                Some(crystal * num / den)
            } else if den != 0 && num != 0 && max_basic >= 0x16 {
                // Leaf 0x16 EAX is the base frequency in MHz; with 0x15's
                // ratio missing a crystal, Intel documents using it as the
                // TSC frequency on those parts.
                let mhz = u64::from(__cpuid(0x16).eax & 0xffff);
                (mhz != 0).then_some(mhz * 1_000_000)
            } else {
                None
            }
        } else {
            None
        };
        TscFeatures {
            rdtscp,
            invariant,
            cpuid_hz,
            hypervisor,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        TscFeatures::default()
    }
}

/// Ticks-to-nanoseconds conversion in 32.32 fixed point, so the hot path
/// multiplies and shifts instead of dividing in floating point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TscScale {
    ns_per_tick_q32: u64,
    pub hz: u64,
}

impl TscScale {
    /// `None` for a zero or absurd frequency (below 1 MHz).
    pub fn from_hz(hz: u64) -> Option<Self> {
        if hz < 1_000_000 {
            return None;
        }
        let q = ((1_000_000_000u128 << 32) / u128::from(hz)) as u64;
        Some(TscScale {
            ns_per_tick_q32: q,
            hz,
        })
    }

    #[inline(always)]
    pub fn to_ns(&self, ticks: u64) -> u64 {
        ((u128::from(ticks) * u128::from(self.ns_per_tick_q32)) >> 32) as u64
    }
}

/// A reading of another clock placed on the TSC axis: the other clock was
/// read between two TSC reads, so it happened within `half_width` ticks of
/// `tsc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    /// Midpoint of the two TSC reads around the other clock's read.
    pub tsc: u64,
    /// The other clock's value.
    pub other: u64,
    /// Half the distance between the two TSC reads, in ticks.
    pub half_width: u64,
}

/// Reads `read` between two TSC reads `tries` times and keeps the reading
/// with the narrowest bracket, the way NTP-style clock filters keep the
/// sample with the shortest round trip: an interrupt or a slow read only
/// widens a bracket, it never moves a narrow one. `None` if `tries` is 0
/// or the TSC never advanced.
pub fn anchor(mut read: impl FnMut() -> u64, tries: u32) -> Option<Anchor> {
    let mut best: Option<Anchor> = None;
    for _ in 0..tries {
        let a = start();
        let other = read();
        let b = end();
        let Some(width) = b.checked_sub(a) else {
            continue;
        };
        let candidate = Anchor {
            tsc: a + width / 2,
            other,
            half_width: width.div_ceil(2),
        };
        if best.is_none_or(|x| candidate.half_width < x.half_width) {
            best = Some(candidate);
        }
    }
    best
}

/// Another clock mapped onto the TSC by the line through two anchors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Correlation {
    first: Anchor,
    last: Anchor,
}

impl Correlation {
    /// `None` unless both clocks moved forward from `first` to `last`.
    pub fn new(first: Anchor, last: Anchor) -> Option<Self> {
        (last.tsc > first.tsc && last.other > first.other).then_some(Correlation { first, last })
    }

    /// The TSC value at which the other clock read `other` (signed: the
    /// line may be extrapolated a little before the first anchor).
    pub fn tsc_at(&self, other: u64) -> i128 {
        let dt = i128::from(self.last.tsc) - i128::from(self.first.tsc);
        let dother = i128::from(self.last.other) - i128::from(self.first.other);
        let since = i128::from(other) - i128::from(self.first.other);
        i128::from(self.first.tsc) + since * dt / dother
    }

    /// How far a mapped value can be off, in ticks, between the anchors:
    /// each anchor is uncertain by its half width, and interpolation between
    /// them is never worse than the larger of the two.
    pub fn uncertainty(&self) -> u64 {
        self.first.half_width.max(self.last.half_width)
    }
}

/// The TSC as a [`crate::time::Clock`], for bounded waits in the measured
/// loop that make no system call.
#[derive(Debug, Clone, Copy)]
pub struct TscClock(pub TscScale);

impl crate::time::Clock for TscClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.0.to_ns(start())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_converts_exactly_for_round_frequencies() {
        let s = TscScale::from_hz(2_000_000_000).unwrap();
        assert_eq!(s.to_ns(2_000_000_000), 1_000_000_000);
        assert_eq!(s.to_ns(3), 1);
        let s = TscScale::from_hz(3_000_000_000).unwrap();
        assert_eq!(s.to_ns(3_000), 999); // 1 µs minus the fixed-point floor
        assert!(TscScale::from_hz(0).is_none());
    }

    #[test]
    fn correlation_needs_both_clocks_to_advance() {
        let a = Anchor {
            tsc: 100,
            other: 50,
            half_width: 3,
        };
        let later = Anchor {
            tsc: 300,
            other: 150,
            half_width: 5,
        };
        assert!(Correlation::new(a, a).is_none());
        assert!(Correlation::new(later, a).is_none());
        let c = Correlation::new(a, later).unwrap();
        // Two TSC ticks per tick of the other clock, through (50, 100).
        assert_eq!(c.tsc_at(100), 200);
        assert_eq!(c.tsc_at(40), 80);
        assert_eq!(c.uncertainty(), 5);
        assert!(anchor(|| 0, 0).is_none());
    }

    /// Another clock derived from the TSC (a third of its rate, offset),
    /// correlated through two anchors 20 ms apart: a fresh bracketed read
    /// of it must map back inside its bracket, widened by the anchors'
    /// uncertainty and the clock's own 3-tick granularity.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn correlated_reading_lands_inside_its_bracket() {
        extern crate std;
        let other = || start() / 3 + 12_345;
        let first = anchor(other, 1000).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let last = anchor(other, 1000).unwrap();
        let c = Correlation::new(first, last).unwrap();
        let slack = i128::from(c.uncertainty()) + 6;
        for _ in 0..100 {
            let a = start();
            let o = other();
            let b = end();
            let t = c.tsc_at(o);
            assert!(
                t >= i128::from(a) - slack && t <= i128::from(b) + slack,
                "{t} outside [{a}, {b}] +- {slack}"
            );
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn readings_move_forward() {
        let a = start();
        let b = end();
        assert!(b >= a);
    }
}
