//! The messages a user reads when the runtime refuses something or a
//! wait fails: each must name the value that was wrong and the rule it
//! broke, in the user's words. The expected phrases are the facts each
//! error carries, written out by hand.

extern crate std;

use crate::aql::doorbell::DoorbellError;
use crate::aql::packet::PacketError;
use crate::aql::queue::{BindError, SubmitError};
use crate::aql::signal::{Condition, MemoryWaitError, SignalTimeout};
use crate::aql::watchdog::LedgerFull;
use crate::gfx::error::{DoorbellAllocError, MesStatus, MqdError, RingInUse};
use crate::gfx::hqd_v9::HqdV9Error;
use crate::gfx::mes::start::MesStartError;
use crate::gfx::mqd_v9::MecDoorbellRange;
use crate::gfx::queue_v9::KiqV9Error;
use crate::gfx::start_v9_4_3::StartError;
use crate::gmc::hub::gfxhub_v1_2::XgmiError;
use crate::gmc::pagetable::MapError;
use std::string::ToString;

#[track_caller]
fn says(e: impl core::fmt::Display, parts: &[&str]) {
    let s = e.to_string();
    for p in parts {
        assert!(s.contains(p), "{s:?} does not say {p:?}");
    }
}

#[test]
fn aql_errors_name_the_value_and_the_rule() {
    says(
        DoorbellError::OutOfAperture {
            index: 0x41,
            aperture_bytes: 512,
        },
        &["slot 0x41", "512-byte doorbell aperture"],
    );
    says(
        DoorbellError::Misaligned { address: 0x1004 },
        &["0x1004", "8-byte aligned"],
    );
    says(
        PacketError::ZeroSize {
            what: "grid",
            dim: 2,
        },
        &["grid size along axis 2 is zero"],
    );
    says(
        PacketError::WorkgroupTooLarge {
            dim: 0,
            size: 70000,
        },
        &["70000", "axis 0", "16 bits"],
    );
    says(
        PacketError::WorkgroupExceedsGrid {
            dim: 1,
            workgroup: 64,
            grid: 8,
        },
        &["64", "grid size 8", "axis 1"],
    );
    says(
        PacketError::TooManyDependencies { count: 6 },
        &["6 dependency", "at most 5"],
    );
    says(
        SubmitError::QueueFull {
            first_id: 10,
            count: 4,
            read_index: 3,
            waited_ns: 500,
        },
        &["500 ns", "read index 3", "10..14", "re-created"],
    );
    says(
        SubmitError::ReadIndexAhead {
            packet_id: 7,
            read_index: 9,
        },
        &["read index 9", "packet 7"],
    );
    says(
        SubmitError::BatchTooLarge { len: 80, slots: 64 },
        &["80 packets", "64-slot"],
    );
    says(SubmitError::EmptyBatch, &["empty batch"]);
    says(
        BindError::MemoryInUse { descriptor: 0x2000 },
        &["0x2000", "live AQL queue"],
    );
    says(
        BindError::ClaimTableFull { descriptor: 0x3000 },
        &["0x3000", "claimed"],
    );
    let timeout = SignalTimeout {
        condition: Condition::Eq,
        compare: 0,
        last: 1,
        waited_ns: 250,
    };
    says(timeout, &["value Eq 0", "250 ns", "value is 1"]);
    says(MemoryWaitError::Timeout(timeout), &["250 ns", "value is 1"]);
    says(
        MemoryWaitError::DeviceGone {
            waited_ns: 40,
            last: 1,
        },
        &["device gone after 40 ns", "signal is 1"],
    );
    says(LedgerFull { capacity: 32 }, &["32 packets", "in flight"]);
}

#[test]
fn queue_errors_name_the_value_and_the_rule() {
    says(
        MqdError::RingSize { bytes: 100 },
        &["100 bytes", "power of two", "256"],
    );
    says(
        MqdError::Misaligned {
            field: "ring",
            address: 0x1010,
            align: 256,
        },
        &["ring 0x1010", "256-byte aligned"],
    );
    says(
        MqdError::Missing {
            field: "EOP buffer",
        },
        &["EOP buffer is zero"],
    );
    says(
        MqdError::DoorbellOffset { dword: 0x400_0000 },
        &["0x4000000", "26 bits"],
    );
    says(
        MqdError::EopSize { bytes: 12 },
        &["12 bytes", "from 16 bytes"],
    );
    says(MqdError::Vmid { vmid: 16 }, &["VMID 16 exceeds 15"]);
    says(
        MesStatus::NotCompleted { value: 0x5 },
        &["never written", "0x5"],
    );
    says(
        MesStatus::V12(barebell_firmware_if::mes_api::v12::Status::Failed {
            api_error: 1,
            opcode: 2,
            misc_opcode: 3,
            category: 4,
        }),
        &[
            "api_error 0x1",
            "opcode 0x2",
            "misc opcode 0x3",
            "category 0x4",
        ],
    );
    says(
        MesStatus::V12(barebell_firmware_if::mes_api::v12::Status::Done(9)),
        &["fence 0x9"],
    );
    says(
        DoorbellAllocError::OutOfRange {
            index: 0x300,
            lower: 0x10,
            upper: 0x8a,
        },
        &["0x300", "0x10..=0x8a"],
    );
    says(
        DoorbellAllocError::InUse { index: 0x11 },
        &["0x11", "already used"],
    );
    says(
        DoorbellAllocError::Exhausted {
            lower: 0x10,
            upper: 0x8a,
        },
        &["no free doorbell", "0x10..=0x8a"],
    );
    says(
        RingInUse {
            ring: 0x9000,
            table_full: false,
        },
        &["0x9000", "live mapper"],
    );
    says(
        RingInUse {
            ring: 0x9000,
            table_full: true,
        },
        &["0x9000", "cannot be claimed"],
    );
    says(
        HqdV9Error::Slot {
            pipe_id: 9,
            queue_id: 1,
        },
        &["pipe 9 queue 1", "GC 9.4.3"],
    );
    says(HqdV9Error::MissingMqd { xcc: 5 }, &["XCC 5's MQD"]);
    says(HqdV9Error::MissingXcc { xcc: 6 }, &["XCC 6"]);
    says(KiqV9Error::RingSize { bytes: 128 }, &["128 bytes", "256"]);
    says(
        KiqV9Error::DoorbellOutsideRange {
            xcc: 2,
            dword: 0x800,
            range: MecDoorbellRange {
                lower_bytes: 0x10,
                upper_bytes: 0x400,
            },
        },
        &["XCC 2", "0x800", "0x10..=0x400"],
    );
    says(KiqV9Error::Xcc { xcc: 9 }, &["no XCC 9"]);
    says(StartError::NoXcc, &["no XCC"]);
    says(
        StartError::Step {
            xcc: 3,
            step: "KIQ",
        },
        &["XCC 3: KIQ failed"],
    );
    says(
        MesStartError::Misaligned {
            pipe: 1,
            address: 0x1002,
        },
        &["pipe 1", "0x1002", "4-byte aligned"],
    );
    says(
        MesStartError::NotRunning { pipe: 0 },
        &["pipe 0", "did not start"],
    );
    says(
        MesStartError::DeviceGone { pipe: 1 },
        &["device gone", "pipe 1"],
    );
}

#[test]
fn memory_errors_name_the_value_and_the_rule() {
    says(
        MapError::BadRange {
            va: 0x1001,
            pa: 0x2000,
            size: 0x1000,
        },
        &["0x1000 bytes", "VA 0x1001", "PA 0x2000", "4 KiB aligned"],
    );
    says(
        MapError::OutOfTables { capacity: 8 },
        &["all 8 page tables"],
    );
    says(
        MapError::Conflict { va: 0x20_0000 },
        &["0x200000", "overlaps"],
    );
    says(
        XgmiError::OutOfRange {
            lfb_cntl: 0x93,
            max_nodes: 8,
        },
        &["MC_VM_XGMI_LFB_CNTL = 0x93", "8 XGMI nodes"],
    );
}
