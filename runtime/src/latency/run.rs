//! The measured loop: one submission at a time, split into phases.
//!
//! Each iteration resets the completion signal, then takes TSC readings
//! around each phase:
//! 1. publish: reserve, write bytes 4..64, store-release the header word
//!    (for every packet of the batch);
//! 2. doorbell: the single 64-bit store;
//! 3. pickup: until the CP's read index passes the last packet;
//! 4. completion: until the completion signal reaches 0.
//!
//! The loop allocates nothing and makes no system call: samples go into a
//! caller-provided slice, timing uses the TSC, and every wait is bounded
//! by a TSC deadline with a typed error.
//!
//! The pickup and completion waits are part of what is measured, so they
//! poll with plain loads and nothing else: no PAUSE and no clock read
//! between looks (the deadline is checked once every [`POLLS_PER_CHECK`]
//! looks, against the TSC stamp that opened the phase). A look that also
//! read the fenced TSC and paused took about 48 ns on the machine this was
//! tuned on (25 ns PAUSE, 23 ns `lfence; rdtsc; lfence`), so a phase ended
//! at the first look after the CP's store, up to 48 ns late; which look
//! that was flipped between runs and made the pickup p50 jump between two
//! values 40-50 ns apart.

use super::tsc::{self, TscClock, TscScale};
use crate::aql::packet::Packet;
use crate::aql::queue::{AqlQueue, SubmitError};
use crate::aql::signal::{Condition, SignalMemory, SignalTimeout};

/// One iteration's phase durations, in TSC ticks, plus what the CP
/// reported about the same dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    pub publish: u64,
    pub doorbell: u64,
    pub pickup: u64,
    pub completion: u64,
    /// TSC right after the doorbell store, for correlating CP timestamps.
    pub doorbell_at: u64,
    /// The completion signal's `start_ts`/`end_ts` (0 when the queue has no
    /// profiling). Their clock is the device's: GPU ticks on hardware,
    /// the model's time source under the model.
    pub cp_start_ts: u64,
    pub cp_end_ts: u64,
}

impl Sample {
    pub fn total(&self) -> u64 {
        self.publish + self.doorbell + self.pickup + self.completion
    }
}

/// Phase names, in order, as reports and JSON use them.
pub const PHASES: [&str; 5] = ["publish", "doorbell", "pickup", "completion", "total"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Packets per doorbell.
    pub batch: usize,
    /// Minimum start-to-start interval in ns (0 = back to back).
    pub pace_ns: u64,
    /// Bound on each wait (pickup, completion, ring space).
    pub bound_ns: u64,
    /// Before each iteration, outside its phases, wait a pseudo-random
    /// 0..`jitter_ns` (0 = never). Back-to-back iterations otherwise lock
    /// onto the consumer's polling loop: each doorbell lands at the same
    /// point of it, just before or just after its doorbell look, and which
    /// one moves the pickup p50 by a whole loop period between runs. With
    /// the jitter the doorbell lands at a spread of points, as an
    /// application's submissions do, and the p50 is their median.
    pub jitter_ns: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyError {
    Submit {
        iteration: u64,
        error: SubmitError,
    },
    /// The read index did not pass the packet within the bound.
    Pickup {
        iteration: u64,
        packet_id: u64,
        read_index: u64,
        waited_ns: u64,
    },
    Completion {
        iteration: u64,
        timeout: SignalTimeout,
    },
    /// A batch must be 1..=ring size.
    BadBatch {
        batch: usize,
        slots: usize,
    },
}

impl core::fmt::Display for LatencyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LatencyError::Submit { iteration, error } => {
                write!(f, "iteration {iteration}: {error}")
            }
            LatencyError::Pickup {
                iteration,
                packet_id,
                read_index,
                waited_ns,
            } => write!(
                f,
                "iteration {iteration}: CP did not pick up packet {packet_id} within {waited_ns} ns (read index {read_index})"
            ),
            LatencyError::Completion { iteration, timeout } => {
                write!(f, "iteration {iteration}: {timeout}")
            }
            LatencyError::BadBatch { batch, slots } => {
                write!(
                    f,
                    "batch size {batch} must be between 1 and the ring size {slots}"
                )
            }
        }
    }
}

/// Looks between two deadline checks in the pickup and completion waits.
pub const POLLS_PER_CHECK: u32 = 64;

/// Looks at `done` until it holds or the TSC passes `deadline`; returns the
/// TSC at the deadline check that gave up, or `None` once `done` held.
#[inline(always)]
fn poll_until(done: impl FnMut() -> bool, deadline: u64) -> Option<u64> {
    poll_until_on(done, deadline, tsc::start)
}

/// [`poll_until`] on the clock `now`. A second bound does not depend on
/// the clock: if `now` reads the same value at every deadline check for
/// [`crate::time::STALL_POLLS`] looks in a row (a host without a TSC,
/// where [`tsc::start`] reads 0), the wait gives up as if the deadline
/// had passed.
#[inline(always)]
fn poll_until_on(
    mut done: impl FnMut() -> bool,
    deadline: u64,
    now: impl Fn() -> u64,
) -> Option<u64> {
    const STALL_CHECKS: u32 = crate::time::STALL_POLLS / POLLS_PER_CHECK;
    let mut last = now();
    let mut same = 0u32;
    loop {
        for _ in 0..POLLS_PER_CHECK {
            if done() {
                return None;
            }
        }
        let t = now();
        if t == last {
            same += 1;
        } else {
            (last, same) = (t, 0);
        }
        if t >= deadline || same >= STALL_CHECKS {
            return if done() { None } else { Some(t) };
        }
    }
}

/// Runs `out.len()` iterations (after none of warm-up: callers warm up by
/// calling this first with a scratch slice). `packet` (a dispatch, or a
/// barrier where no kernel can be loaded) must name `signal` as its
/// completion signal.
pub fn measure<const SLOTS: usize, P: Packet>(
    queue: &AqlQueue<'_, SLOTS>,
    packet: &P,
    signal: &SignalMemory,
    scale: TscScale,
    params: Params,
    first_iteration: u64,
    out: &mut [Sample],
) -> Result<(), LatencyError> {
    if params.batch == 0 || params.batch > SLOTS {
        return Err(LatencyError::BadBatch {
            batch: params.batch,
            slots: SLOTS,
        });
    }
    let clock = TscClock(scale);
    let batch = params.batch as i64;
    let ticks = |ns: u64| {
        u64::try_from(u128::from(ns) * u128::from(scale.hz) / 1_000_000_000).unwrap_or(u64::MAX)
    };
    let pace_ticks = ticks(params.pace_ns);
    let bound = ticks(params.bound_ns);
    let jitter = ticks(params.jitter_ns);
    // xorshift64 (Marsaglia), seeded per call: any spread will do, and a
    // fixed seed keeps runs alike.
    let mut rng = 0x9E37_79B9_7F4A_7C15 ^ first_iteration;
    let mut next_start = tsc::start();
    for (k, sample) in out.iter_mut().enumerate() {
        let iteration = first_iteration + k as u64;
        // Both waits below end at their TSC tick, or by the stall bound
        // of `poll_until` on a TSC that does not move.
        if pace_ticks > 0 {
            let _ = poll_until(|| false, next_start);
        }
        if jitter > 0 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let until = tsc::start().saturating_add(rng % jitter);
            let _ = poll_until(|| false, until);
        }
        signal.reset(batch);
        let t0 = tsc::start();
        next_start = t0.wrapping_add(pace_ticks);
        let mut last = 0;
        for _ in 0..params.batch {
            last = queue
                .publish_packet(packet, &clock, params.bound_ns)
                .map_err(|error| LatencyError::Submit { iteration, error })?;
        }
        let t1 = tsc::end();
        queue.ring_doorbell(last);
        let t2 = tsc::end();
        // The read index has passed `last` (wrapping u64 order).
        let passed = |read: u64| read.wrapping_sub(last) != 0 && read.wrapping_sub(last) < 1 << 63;
        if let Some(gave_up) = poll_until(|| passed(queue.read_index()), t2.saturating_add(bound)) {
            return Err(LatencyError::Pickup {
                iteration,
                packet_id: last,
                read_index: queue.read_index(),
                waited_ns: scale.to_ns(gave_up.wrapping_sub(t2)),
            });
        }
        let t3 = tsc::end();
        if let Some(gave_up) = poll_until(|| signal.value() == 0, t3.saturating_add(bound)) {
            return Err(LatencyError::Completion {
                iteration,
                timeout: SignalTimeout {
                    condition: Condition::Eq,
                    compare: 0,
                    last: signal.value(),
                    waited_ns: scale.to_ns(gave_up.wrapping_sub(t3)),
                },
            });
        }
        let t4 = tsc::end();
        let (cp_start_ts, cp_end_ts) = signal.timestamps().unwrap_or((0, 0));
        *sample = Sample {
            publish: t1.wrapping_sub(t0),
            doorbell: t2.wrapping_sub(t1),
            pickup: t3.wrapping_sub(t2),
            completion: t4.wrapping_sub(t3),
            doorbell_at: t2,
            cp_start_ts,
            cp_end_ts,
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 21 finding 5: with a TSC that never moves (0 on a host
    /// without one) a wait whose condition never holds still ends, after
    /// `STALL_POLLS` looks; before, `poll_until` spun forever there.
    #[test]
    fn a_stalled_tsc_still_ends_the_wait() {
        let mut looks = 0u64;
        let gave_up = poll_until_on(
            || {
                looks += 1;
                false
            },
            1_000,
            || 0,
        );
        assert_eq!(gave_up, Some(0));
        assert_eq!(looks, u64::from(crate::time::STALL_POLLS) + 1);
        // A moving clock ends the wait at its deadline as before.
        let t = core::cell::Cell::new(0u64);
        let gave_up = poll_until_on(
            || false,
            1_000,
            || {
                t.set(t.get() + 10);
                t.get()
            },
        );
        assert_eq!(gave_up, Some(1_000));
    }
}
