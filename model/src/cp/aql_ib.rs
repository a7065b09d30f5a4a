//! PM4 indirect buffers behind AQL vendor packets: the format ROCR uses
//! for PM4 work on an AQL queue (`AqlQueue::ExecutePM4()` in
//! `amd_aql_queue.cpp`) and tinygrad's `AMDComputeAQLQueue._pm4_pkt`
//! sends for every wait, signal and barrier on an AQL queue.
//!
//! The 64-byte packet, as both build it: the vendor header (type 0,
//! `AMD_FORMAT_PM4_IB` = 1 in byte 2), then dwords 1..=4 a PM4
//! `INDIRECT_BUFFER` packet (type-3 header with a count of 2, the IB's
//! address low and high, its size in dwords with `INDIRECT_BUFFER_VALID`),
//! dword 5 the count of dwords left in the packet (10), the rest zero
//! but for the completion signal.
//!
//! What the model does:
//! - refuses a packet whose embedded command is not that
//!   `INDIRECT_BUFFER`, an IB address not dword aligned, a size of 0, a
//!   clear `VALID` bit, or a remaining count other than 10;
//! - runs the IB's packets in order with the same PM4 engine a PM4 queue
//!   has ([`super::pm4`], [`super::pm4_compute`]), in the queue's address
//!   space; a packet that runs past the IB's end stops the queue;
//! - `PRED_EXEC` (tinygrad's `pred_exec()`: the XCCs in bits 31:24, the
//!   dwords it covers in the low bits): the model's one CP stands for
//!   every XCC the AQL queue runs on and executes as XCC 0 (**model
//!   convention**: packets all XCCs would execute alike run once), so the
//!   covered packets run when bit 0 is set and are skipped otherwise;
//! - a `WAIT_REG_MEM` not met keeps the AQL packet at the head of the
//!   queue and the IB's position, so the packets before the wait run once
//!   (**model convention**: the CP's own IB fetch state is not public);
//! - when the IB is done, the AQL packet completes as a barrier does: its
//!   completion signal, if any, is decremented.

use super::pm4::Pm4Error;
use super::{CpError, CpModel};
use crate::decode::pm4::{self as d, compute::indirect_buffer as ib, opcode};

/// The dwords an AQL PM4-IB packet has after its `INDIRECT_BUFFER`
/// (ROCR's `dw_cnt_remain`, which `ExecutePM4()` sets to 0xA; tinygrad
/// sends 10).
pub(super) const DWORDS_REMAINING: u32 = 10;

/// Packets of one IB run per look at the queue.
const PACKETS_PER_LOOK: u32 = 64;

fn dword(body: &[u8; 64], i: usize) -> u32 {
    let b = body.get(i * 4..i * 4 + 4).unwrap_or(&[0; 4]);
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

impl CpModel {
    /// Runs (or goes on running) the PM4 IB of vendor packet `read` of
    /// queue `q`. `Ok(true)`: the IB is done; `Ok(false)`: a wait not met
    /// (or the look's packet budget) keeps the packet at the head.
    pub(super) fn aql_pm4_ib(
        &mut self,
        q: usize,
        read: u64,
        body: &[u8; 64],
    ) -> Result<bool, CpError> {
        let bad = |what, value| CpError::Pm4 {
            queue: q,
            rptr: 0,
            why: Pm4Error::IndirectBuffer { what, value },
        };
        let command = dword(body, 1);
        if d::HEADER_TYPE.get(command) != d::PACKET_TYPE3
            || d::HEADER_OPCODE.get(command) != opcode::INDIRECT_BUFFER
            || d::HEADER_COUNT.get(command) as usize != ib::DWORDS - 2
        {
            return Err(bad(
                "the embedded command is not INDIRECT_BUFFER",
                u64::from(command),
            ));
        }
        let address = u64::from(dword(body, 2)) | u64::from(dword(body, 3)) << 32;
        if address % 4 != 0 {
            return Err(bad("address not dword aligned", address));
        }
        let control = dword(body, 4);
        let size = u64::from(ib::SIZE.get(control));
        if ib::VALID.get(control) == 0 {
            return Err(bad("INDIRECT_BUFFER_VALID clear", u64::from(control)));
        }
        if size == 0 {
            return Err(bad("size of 0 dwords", 0));
        }
        let remaining = dword(body, 5);
        if remaining != DWORDS_REMAINING {
            return Err(bad("dw_cnt_remain not 10", u64::from(remaining)));
        }
        self.run_ib(q, read, address, size)
    }

    /// Runs (or goes on running) the `size`-dword IB at `address` of
    /// queue `q`, started by the packet `key` names (an AQL packet's
    /// index, a PM4 ring's read position): `Ok(true)` when done,
    /// `Ok(false)` at a wait not met or the look's packet budget (the
    /// IB's position is kept for `key`).
    pub(super) fn run_ib(
        &mut self,
        q: usize,
        key: u64,
        address: u64,
        size: u64,
    ) -> Result<bool, CpError> {
        let bad = |what, value| CpError::Pm4 {
            queue: q,
            rptr: 0,
            why: Pm4Error::IndirectBuffer { what, value },
        };
        let read = key;
        // A power-of-two "ring" at least as large as the IB: indices below
        // `size` never wrap.
        let n = size.next_power_of_two();
        let mut at = match self.queues.get(q).and_then(|x| x.ib_progress) {
            Some((id, at)) if id == read => at,
            _ => 0,
        };
        let mut done = 0;
        while at < size {
            if done == PACKETS_PER_LOOK {
                self.keep_ib_progress(q, read, at);
                return Ok(false);
            }
            let header = self.pm4_dword(q, address, n, at)?;
            let len = super::pm4::packet_dwords(header).map_err(|why| CpError::Pm4 {
                queue: q,
                rptr: at,
                why,
            })?;
            if at + len > size {
                return Err(CpError::Pm4 {
                    queue: q,
                    rptr: at,
                    why: Pm4Error::IndirectBuffer {
                        what: "a packet runs past the IB's end",
                        value: size,
                    },
                });
            }
            if header != d::NOP_FILLER && d::HEADER_OPCODE.get(header) == opcode::PRED_EXEC {
                if len != 2 {
                    return Err(bad("PRED_EXEC not 2 dwords", len));
                }
                let p = self.pm4_dword(q, address, n, at + 1)?;
                let covered = u64::from(d::compute::pred_exec::COUNT.get(p));
                if at + len + covered > size {
                    return Err(bad("PRED_EXEC covers dwords past the IB's end", covered));
                }
                // XCC 0 runs the covered packets; others skip them.
                let skip = d::compute::pred_exec::DEVICE_SELECT.get(p) & 1 == 0;
                at += len + if skip { covered } else { 0 };
                done += 1;
                continue;
            }
            if header != d::NOP_FILLER && !self.pm4_packet(q, address, n, at, header)? {
                self.keep_ib_progress(q, read, at);
                return Ok(false);
            }
            at += len;
            done += 1;
        }
        if let Some(x) = self.queues.get_mut(q) {
            x.ib_progress = None;
        }
        Ok(true)
    }

    fn keep_ib_progress(&mut self, q: usize, read: u64, at: u64) {
        if let Some(x) = self.queues.get_mut(q) {
            x.ib_progress = Some((read, at));
        }
    }
}
