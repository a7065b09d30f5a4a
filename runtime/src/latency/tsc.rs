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
//! PIT/HPET fallback for processors without leaf 0x15 is not implemented.

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

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn readings_move_forward() {
        let a = start();
        let b = end();
        assert!(b >= a);
    }
}
