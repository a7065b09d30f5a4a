//! A log-linear histogram in fixed memory.
//!
//! Values below 256 get a bucket each; above that, every power-of-two range
//! is split into 128 equal buckets, so a bucket is at most 1/128 (0.78 %)
//! of the values in it wide — the same scheme as HdrHistogram with two
//! significant digits and a bit. It is hand-written rather than taken from
//! the `hdrhistogram` crate because that one allocates its counts on the
//! heap, and the measured loop must not allocate (nor can the unikernel's
//! summary path rely on a heap).

/// Sub-buckets per power of two (and the exact range below it is 2×).
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets for 0..2·SUB exactly, then SUB per exponent up to 2^64.
pub const BUCKETS: usize = ((64 - SUB_BITS) as usize) * SUB as usize + SUB as usize;

/// Counts of u64 values (nanoseconds, in barebell's use).
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: [u64; BUCKETS],
    total: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Bucket index of `v`.
#[inline]
fn index(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    // `v` has its top bit at position `msb` >= SUB_BITS + 1; keep the top
    // SUB_BITS + 1 bits, which lie in [SUB, 2·SUB).
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BITS;
    (shift as usize) * SUB as usize + (v >> shift) as usize
}

/// Lowest value that lands in bucket `i`, and the bucket's width.
#[inline]
fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < 2 * SUB {
        return (i, 1);
    }
    let shift = i / SUB - 1;
    let mantissa = i % SUB + SUB;
    (mantissa << shift, 1 << shift)
}

impl Histogram {
    pub const fn new() -> Self {
        Histogram {
            counts: [0; BUCKETS],
            total: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        // `index` is below BUCKETS for every u64 (tested), so this never
        // falls back; `get_mut` keeps the library free of panicking paths.
        if let Some(c) = self.counts.get_mut(index(v)) {
            *c += 1;
        }
        self.total += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn min(&self) -> Option<u64> {
        (self.total > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.total > 0).then_some(self.max)
    }

    pub fn mean(&self) -> Option<f64> {
        (self.total > 0).then(|| self.sum as f64 / self.total as f64)
    }

    /// The value at quantile `q` (0..=1): the midpoint of the bucket that
    /// holds the ⌈q·n⌉-th smallest sample, clamped to the exact min/max.
    /// Its error is at most half a bucket, i.e. under 0.4 %.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let q = q.clamp(0.0, 1.0);
        // ⌈q·n⌉ without `f64::ceil`, which core lacks.
        let x = q * self.total as f64;
        let floor = x as u64;
        let rank = if (floor as f64) < x { floor + 1 } else { floor }.clamp(1, self.total);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, width) = bucket_range(i);
                let mid = lo.saturating_add((width - 1) / 2);
                return Some(mid.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// Non-empty buckets as `(low, width, count)`, for plotting.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, &c)| {
                let (lo, w) = bucket_range(i);
                (lo, w, c)
            })
    }

    pub fn summary(&self) -> Option<Summary> {
        Some(Summary {
            count: self.total,
            min: self.min()?,
            mean: self.mean()?,
            p50: self.quantile(0.50)?,
            p90: self.quantile(0.90)?,
            p99: self.quantile(0.99)?,
            p99_9: self.quantile(0.999)?,
            max: self.max()?,
        })
    }
}

/// The statistics barebell reports for one phase, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub max: u64,
}

/// The `N` largest samples with the iteration each came from.
#[derive(Debug, Clone, Copy)]
pub struct Outliers<const N: usize> {
    top: [(u64, u64); N],
    len: usize,
}

impl<const N: usize> Default for Outliers<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Outliers<N> {
    pub const fn new() -> Self {
        Outliers {
            top: [(0, 0); N],
            len: 0,
        }
    }

    /// Keeps `(value, iteration)` if it is among the N largest so far.
    #[inline]
    pub fn offer(&mut self, value: u64, iteration: u64) {
        if N == 0 {
            return;
        }
        if self.len < N {
            self.top[self.len] = (value, iteration);
            self.len += 1;
            return;
        }
        // Replace the smallest kept value if this one is larger.
        let mut min_at = 0;
        for i in 1..N {
            if self.top[i].0 < self.top[min_at].0 {
                min_at = i;
            }
        }
        if value > self.top[min_at].0 {
            self.top[min_at] = (value, iteration);
        }
    }

    /// `(value, iteration)`, largest first.
    pub fn sorted(&self) -> [(u64, u64); N] {
        let mut out = self.top;
        out[..self.len].sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        out
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::boxed::Box;
    use std::vec::Vec;

    #[test]
    fn every_u64_has_a_bucket_and_buckets_are_contiguous() {
        assert!(index(u64::MAX) < BUCKETS);
        let mut prev_end = 0u64;
        for i in 0..BUCKETS {
            let (lo, w) = bucket_range(i);
            assert_eq!(
                lo,
                prev_end,
                "bucket {i} starts where {} ended",
                i.saturating_sub(1)
            );
            assert_eq!(index(lo), i);
            assert_eq!(index(lo + (w - 1)), i);
            prev_end = lo.wrapping_add(w);
        }
        assert_eq!(prev_end, 0, "the last bucket ends at 2^64");
    }

    #[test]
    fn bucket_width_is_within_one_percent_of_its_values() {
        for i in 2 * SUB as usize..BUCKETS {
            let (lo, w) = bucket_range(i);
            assert!((w as f64) / (lo as f64) <= 1.0 / 128.0 + 1e-12);
        }
    }

    #[test]
    fn quantiles_against_sorting_within_one_percent() {
        // A deterministic, skewed sample set: squares mod a prime, spread
        // over six decades.
        let samples: Vec<u64> = (1..=20_000u64)
            .map(|i| (i * i * 7919) % 9_999_991 + 40)
            .collect();
        let mut h = Box::new(Histogram::new());
        for &s in &samples {
            h.record(s);
        }
        let mut sorted = samples.clone();
        sorted.sort_unstable();
        for q in [0.5, 0.9, 0.99, 0.999] {
            let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
            let exact = sorted[rank - 1] as f64;
            let got = h.quantile(q).unwrap() as f64;
            assert!(
                (got - exact).abs() / exact <= 0.01,
                "q{q}: {got} vs {exact}"
            );
        }
        assert_eq!(h.min(), Some(*sorted.first().unwrap()));
        assert_eq!(h.max(), Some(*sorted.last().unwrap()));
        let mean = samples.iter().sum::<u64>() as f64 / samples.len() as f64;
        assert!((h.mean().unwrap() - mean).abs() < 1e-6 * mean);
    }

    #[test]
    fn outliers_keep_the_largest_with_iterations() {
        let mut o = Outliers::<3>::new();
        for (i, v) in [5u64, 1, 9, 3, 7, 9, 2].into_iter().enumerate() {
            o.offer(v, i as u64);
        }
        assert_eq!(o.sorted(), [(9, 2), (9, 5), (7, 4)]);
    }

    #[test]
    fn empty_histogram_has_no_summary() {
        assert!(Histogram::new().summary().is_none());
    }
}
