//! Rings and indirect buffers decoded into named fields, for `barebell
//! ring decode` and `barebell queue dump`: AQL packets (from [`crate::hsa`]),
//! PM4 type-3 packets (from [`super::pm4`]) and MES API frames (from
//! [`super::mes_api`]). Every position used is one the model's firmware
//! stand-ins already decode with and a conformance fact checks; nothing
//! here comes from the runtime's encoders.
//!
//! PM4 opcodes the runtime never sends (NOP, RELEASE_MEM, WAIT_REG_MEM,
//! INDIRECT_BUFFER, ACQUIRE_MEM, RUN_LIST, …) are named from `nvd.h`
//! ([`pm4::NAMED_ONLY`], each a fact) and their body is shown as raw dwords:
//! the model has no decoder for their fields. SDMA packets are not
//! decoded: neither the runtime nor the model uses an SDMA queue.

use super::mes_api::{self, FRAME_BYTES, Layout};
use super::pm4::{self, opcode};
use super::{le32, le64};
use crate::hsa;
use alloc::vec::Vec;

/// One decoded packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Byte offset in the decoded buffer.
    pub offset: usize,
    /// Length in bytes.
    pub bytes: usize,
    /// The packet's name (`MAP_QUEUES`, `KERNEL_DISPATCH`, `ADD_QUEUE`,
    /// or `UNKNOWN`).
    pub kind: &'static str,
    /// Named fields in packet order.
    pub fields: Vec<(&'static str, u64)>,
}

fn dw(b: &[u8], i: usize) -> u32 {
    le32(b, i * 4)
}

fn join(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | u64::from(hi) << 32
}

/// PM4 packets in `bytes` (whole dwords), in order. A type-2 header is a
/// one-dword filler; a header of another type ends the walk with an
/// `UNKNOWN` packet covering the rest.
pub fn pm4(bytes: &[u8]) -> Vec<Packet> {
    let n = bytes.len() / 4;
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let h = dw(bytes, i);
        let ty = pm4::HEADER_TYPE.get(h);
        if ty == 2 {
            out.push(Packet {
                offset: i * 4,
                bytes: 4,
                kind: "TYPE2_NOP",
                fields: Vec::new(),
            });
            i += 1;
            continue;
        }
        if ty != pm4::PACKET_TYPE3 {
            out.push(Packet {
                offset: i * 4,
                bytes: (n - i) * 4,
                kind: "UNKNOWN",
                fields: alloc::vec![("header", u64::from(h)), ("type", u64::from(ty))],
            });
            break;
        }
        // `PACKET3(PACKET3_NOP, 0x3FFF)` is the one-dword filler Linux pads
        // compute rings with (`amdgpu_ring_insert_nop()`), not a packet of
        // 0x4001 dwords: the CP takes it alone (`crate::cp::pm4`).
        if h == pm4::NOP_FILLER {
            out.push(Packet {
                offset: i * 4,
                bytes: 4,
                kind: "NOP (one-dword filler)",
                fields: alloc::vec![("header", u64::from(h))],
            });
            i += 1;
            continue;
        }
        let op = pm4::HEADER_OPCODE.get(h);
        let len = (pm4::HEADER_COUNT.get(h) as usize + 2).min(n - i);
        let p = &bytes[i * 4..(i + len) * 4];
        let (kind, mut fields) = type3(op, p, len);
        fields.insert(0, ("count", pm4::HEADER_COUNT.get(h).into()));
        out.push(Packet {
            offset: i * 4,
            bytes: len * 4,
            kind,
            fields,
        });
        i += len;
    }
    out
}

/// A type-3 packet's name and fields: `p` is the packet (`len` dwords,
/// header first).
fn type3(op: u32, p: &[u8], len: usize) -> (&'static str, Vec<(&'static str, u64)>) {
    let d = |k: usize| dw(p, k);
    match op {
        opcode::SET_RESOURCES => {
            use pm4::set_resources as s;
            (
                "SET_RESOURCES",
                alloc::vec![
                    ("vmid_mask", s::VMID_MASK.get(d(1)).into()),
                    ("unmap_latency", s::UNMAP_LATENCY.get(d(1)).into()),
                    ("queue_type", s::QUEUE_TYPE.get(d(1)).into()),
                    (
                        "queue_mask",
                        join(d(s::DW_QUEUE_MASK_LO), d(s::DW_QUEUE_MASK_HI)),
                    ),
                    ("gws_mask", join(d(4), d(5))),
                    ("oac_mask", d(6).into()),
                    ("gds_heap", d(7).into()),
                ],
            )
        }
        opcode::MAP_QUEUES => {
            use pm4::map_queues as m;
            let c = d(1);
            (
                "MAP_QUEUES",
                alloc::vec![
                    ("queue_sel", m::QUEUE_SEL.get(c).into()),
                    ("vmid", m::VMID.get(c).into()),
                    ("queue", m::QUEUE.get(c).into()),
                    ("pipe", m::PIPE.get(c).into()),
                    ("me", m::ME.get(c).into()),
                    ("queue_type", m::QUEUE_TYPE.get(c).into()),
                    ("alloc_format", m::ALLOC_FORMAT.get(c).into()),
                    ("engine_sel", m::ENGINE_SEL.get(c).into()),
                    ("num_queues", m::NUM_QUEUES.get(c).into()),
                    ("check_disable", m::CHECK_DISABLE.get(d(2)).into()),
                    ("doorbell_offset", m::DOORBELL_OFFSET.get(d(2)).into()),
                    ("mqd_addr", join(d(m::DW_MQD_LO), d(m::DW_MQD_LO + 1))),
                    ("wptr_addr", join(d(m::DW_WPTR_LO), d(m::DW_WPTR_LO + 1))),
                ],
            )
        }
        opcode::UNMAP_QUEUES => {
            use pm4::unmap_queues as u;
            let c = d(1);
            (
                "UNMAP_QUEUES",
                alloc::vec![
                    ("action", u::ACTION.get(c).into()),
                    ("queue_sel", u::QUEUE_SEL.get(c).into()),
                    ("engine_sel", u::ENGINE_SEL.get(c).into()),
                    ("num_queues", u::NUM_QUEUES.get(c).into()),
                    ("doorbell_offset0", u::DOORBELL_OFFSET0.get(d(2)).into()),
                    ("dw3", d(3).into()),
                    ("dw4", d(4).into()),
                    ("dw5", d(5).into()),
                ],
            )
        }
        opcode::QUERY_STATUS => {
            use pm4::query_status as q;
            let c = d(1);
            (
                "QUERY_STATUS",
                alloc::vec![
                    ("context_id", q::CONTEXT_ID.get(c).into()),
                    ("interrupt_sel", q::INTERRUPT_SEL.get(c).into()),
                    ("command", q::COMMAND.get(c).into()),
                    ("doorbell_offset", q::DOORBELL_OFFSET.get(d(2)).into()),
                    ("eng_sel", q::ENG_SEL.get(d(2)).into()),
                    ("addr", join(d(3), d(4))),
                    ("data", join(d(5), d(6))),
                ],
            )
        }
        opcode::WRITE_DATA => {
            use pm4::write_data as w;
            let mut f = alloc::vec![
                ("dst_sel", w::DST_SEL.get(d(1)).into()),
                ("wr_confirm", w::WR_CONFIRM.get(d(1)).into()),
                ("addr", join(d(2), d(3))),
            ];
            for k in 4..len {
                f.push(("data", d(k).into()));
            }
            ("WRITE_DATA", f)
        }
        _ => {
            let name = pm4::NAMED_ONLY
                .iter()
                .find(|(o, _)| *o == op)
                .map_or("UNKNOWN", |(_, n)| n);
            let mut f = alloc::vec![("opcode", u64::from(op))];
            for k in 1..len {
                f.push(("dw", d(k).into()));
            }
            (name, f)
        }
    }
}

/// The name of an AQL packet type.
fn aql_kind(t: u16) -> &'static str {
    use hsa::header as h;
    match t {
        h::VENDOR_SPECIFIC => "VENDOR_SPECIFIC",
        h::INVALID => "INVALID",
        h::KERNEL_DISPATCH => "KERNEL_DISPATCH",
        h::BARRIER_AND => "BARRIER_AND",
        h::AGENT_DISPATCH => "AGENT_DISPATCH",
        h::BARRIER_OR => "BARRIER_OR",
        _ => "UNKNOWN",
    }
}

/// One 64-byte AQL packet.
pub fn aql_packet(offset: usize, p: &[u8]) -> Packet {
    use hsa::{header as h, packet as k};
    let header = (le32(p, 0) & 0xFFFF) as u16;
    let t = h::packet_type(header);
    let mut f: Vec<(&'static str, u64)> = alloc::vec![
        ("type", t.into()),
        ("barrier", u64::from(h::barrier(header))),
        ("acquire_fence_scope", h::acquire(header).into()),
        ("release_fence_scope", h::release(header).into()),
    ];
    let u16_at = |at: usize| u64::from(le32(p, at) & 0xFFFF);
    let mut kind = aql_kind(t);
    match t {
        h::KERNEL_DISPATCH => {
            let setup = u16_at(k::SETUP);
            f.push((
                "dimensions",
                setup >> k::SETUP_DIMENSIONS_SHIFT & ((1 << k::SETUP_DIMENSIONS_WIDTH) - 1),
            ));
            f.push(("workgroup_size_x", u16_at(k::WORKGROUP_SIZE_X)));
            f.push(("workgroup_size_y", u16_at(k::WORKGROUP_SIZE_X + 2)));
            f.push(("workgroup_size_z", u16_at(k::WORKGROUP_SIZE_X + 4)));
            f.push(("grid_size_x", le32(p, k::GRID_SIZE_X).into()));
            f.push(("grid_size_y", le32(p, k::GRID_SIZE_X + 4).into()));
            f.push(("grid_size_z", le32(p, k::GRID_SIZE_X + 8).into()));
            f.push((
                "private_segment_size",
                le32(p, k::PRIVATE_SEGMENT_SIZE).into(),
            ));
            f.push(("group_segment_size", le32(p, k::GROUP_SEGMENT_SIZE).into()));
            f.push(("kernel_object", le64(p, k::KERNEL_OBJECT)));
            f.push(("kernarg_address", le64(p, k::KERNARG_ADDRESS)));
        }
        h::BARRIER_AND | h::BARRIER_OR => {
            for i in 0..k::DEP_SIGNALS {
                f.push(("dep_signal", le64(p, k::DEP_SIGNAL + 8 * i)));
            }
        }
        h::VENDOR_SPECIFIC => {
            let format = p.get(k::AMD_FORMAT).copied().unwrap_or(0);
            f.push(("amd_format", format.into()));
            if format == k::AMD_BARRIER_VALUE {
                kind = "AMD_BARRIER_VALUE";
                f.push(("signal", le64(p, k::BV_SIGNAL)));
                f.push(("value", le64(p, k::BV_VALUE)));
                f.push(("mask", le64(p, k::BV_MASK)));
                f.push(("cond", le32(p, k::BV_COND).into()));
            }
        }
        _ => {}
    }
    f.push(("completion_signal", le64(p, k::COMPLETION_SIGNAL)));
    Packet {
        offset,
        bytes: 64,
        kind,
        fields: f,
    }
}

/// AQL packets in `bytes` (whole 64-byte slots).
/// An SDMA ring or IB, with [`crate::sdma`] (the engine model's
/// own decoder of `sdma_v6_0_0_pkt_open.h`); 6.0 (gfx11) and 7.0 (gfx12)
/// differ in COPY_LINEAR's length. A packet the decoder does not know
/// ends the walk (its length is unknown), as does a truncated one.
pub fn sdma(bytes: &[u8], engine: crate::sdma::SdmaGen) -> Vec<Packet> {
    use crate::sdma::SdmaPacket as P;
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let (kind, fields, len): (&'static str, Vec<(&'static str, u64)>, usize) =
            match P::decode(engine, &words[i..]) {
                Ok((p, len)) => {
                    let (k, f) = match p {
                        P::Nop { count } => ("NOP", alloc::vec![("count", count.into())]),
                        P::CopyLinear {
                            bytes,
                            src,
                            dst,
                            tmz,
                        } => (
                            "COPY_LINEAR",
                            alloc::vec![
                                ("bytes", bytes),
                                ("src", src),
                                ("dst", dst),
                                ("tmz", tmz.into())
                            ],
                        ),
                        P::ConstantFill {
                            dst,
                            data,
                            bytes,
                            fill_size,
                        } => (
                            "CONSTANT_FILL",
                            alloc::vec![
                                ("dst", dst),
                                ("data", data.into()),
                                ("bytes", bytes),
                                ("fill_size", fill_size.into())
                            ],
                        ),
                        P::Fence { addr, data } => {
                            ("FENCE", alloc::vec![("addr", addr), ("data", data.into())])
                        }
                        P::Trap { context } => {
                            ("TRAP", alloc::vec![("int_context", context.into())])
                        }
                        P::WriteLinear { dst, dwords } => (
                            "WRITE_LINEAR",
                            alloc::vec![("dst", dst), ("dwords", dwords.into())],
                        ),
                        P::GcrReq => ("GCR_REQ", alloc::vec![]),
                        P::PtePdeGen {
                            pe,
                            flags,
                            value,
                            incr,
                            count,
                        } => (
                            "PTEPDE_GEN",
                            alloc::vec![
                                ("pe", pe),
                                ("flags", flags),
                                ("value", value),
                                ("incr", incr.into()),
                                ("count", count)
                            ],
                        ),
                        P::CondExe {
                            addr,
                            reference,
                            count,
                        } => (
                            "COND_EXE",
                            alloc::vec![
                                ("addr", addr),
                                ("reference", reference.into()),
                                ("exec_count", count.into())
                            ],
                        ),
                        P::SrbmWrite { reg, data, byte_en } => (
                            "SRBM_WRITE",
                            alloc::vec![
                                ("reg", reg.into()),
                                ("data", data.into()),
                                ("byte_en", byte_en.into())
                            ],
                        ),
                        P::Indirect { vmid, base, size } => (
                            "INDIRECT",
                            alloc::vec![
                                ("vmid", vmid.into()),
                                ("ib_base", base),
                                ("ib_size", size.into())
                            ],
                        ),
                        P::PollRegmem {
                            mem,
                            hdp_flush,
                            func,
                            addr,
                            value,
                            mask,
                            interval,
                            retry,
                        } => (
                            "POLL_REGMEM",
                            alloc::vec![
                                ("mem_poll", mem.into()),
                                ("hdp_flush", hdp_flush.into()),
                                ("func", func.into()),
                                ("addr", addr),
                                ("value", value.into()),
                                ("mask", mask.into()),
                                ("interval", interval.into()),
                                ("retry_count", retry.into())
                            ],
                        ),
                        P::Timestamp { sub_op, addr } => (
                            "TIMESTAMP",
                            alloc::vec![("sub_op", sub_op.into()), ("addr", addr)],
                        ),
                        P::Atomic {
                            op,
                            looped,
                            addr,
                            src,
                            cmp,
                        } => (
                            "ATOMIC",
                            alloc::vec![
                                ("atomic_op", op.into()),
                                ("loop", looped.into()),
                                ("addr", addr),
                                ("src_data", src),
                                ("cmp_data", cmp)
                            ],
                        ),
                        P::Unknown { op, sub_op } => {
                            out.push(Packet {
                                offset: i * 4,
                                bytes: 4,
                                kind: "UNKNOWN",
                                fields: alloc::vec![("op", op.into()), ("sub_op", sub_op.into())],
                            });
                            break;
                        }
                    };
                    (k, f, len)
                }
                Err(crate::sdma::DecodeError::Short { need }) => {
                    out.push(Packet {
                        offset: i * 4,
                        bytes: (words.len() - i) * 4,
                        kind: "TRUNCATED",
                        fields: alloc::vec![("need_dwords", need as u64)],
                    });
                    break;
                }
            };
        out.push(Packet {
            offset: i * 4,
            bytes: len * 4,
            kind,
            fields,
        });
        i += len.max(1);
    }
    out
}

pub fn aql(bytes: &[u8]) -> Vec<Packet> {
    bytes
        .chunks_exact(64)
        .enumerate()
        .map(|(i, p)| aql_packet(i * 64, p))
        .collect()
}

/// MES API frames in `bytes` (whole 256-byte frames), read through
/// `layout` (`mes_api::V11` or `V12`).
pub fn mes(bytes: &[u8], layout: &Layout) -> Vec<Packet> {
    use mes_api::opcode as o;
    let mut out = Vec::new();
    for (i, frame) in bytes.chunks_exact(FRAME_BYTES).enumerate() {
        let u32_ = |at: usize| u64::from(le32(frame, at));
        let u64_ = |at: usize| le64(frame, at);
        let h = le32(frame, 0);
        let op = mes_api::HEADER_OPCODE.get(h);
        let mut f: Vec<(&'static str, u64)> = alloc::vec![
            ("type", mes_api::HEADER_TYPE.get(h).into()),
            ("opcode", op.into()),
            ("dwsize", mes_api::HEADER_DWSIZE.get(h).into()),
        ];
        let status = |f: &mut Vec<(&'static str, u64)>, at: usize| {
            f.push(("api_status.fence_addr", u64_(at)));
            f.push(("api_status.fence_value", u64_(at + 8)));
        };
        let kind = match op {
            o::SET_HW_RSRC => {
                let s = &layout.set_hw;
                f.push(("vmid_mask_mmhub", u32_(s.vmid_mask_mmhub)));
                f.push(("vmid_mask_gfxhub", u32_(s.vmid_mask_gfxhub)));
                f.push(("gds_size", u32_(s.gds_size)));
                f.push(("paging_vmid", u32_(s.paging_vmid)));
                for p in 0..mes_api::COMPUTE_PIPES {
                    f.push(("compute_hqd_mask", u32_(s.compute_hqd_mask + 4 * p)));
                }
                for p in 0..mes_api::GFX_PIPES {
                    f.push(("gfx_hqd_mask", u32_(s.gfx_hqd_mask + 4 * p)));
                }
                for p in 0..mes_api::SDMA_PIPES {
                    f.push(("sdma_hqd_mask", u32_(s.sdma_hqd_mask + 4 * p)));
                }
                for p in 0..mes_api::PRIORITY_LEVELS {
                    f.push(("aggregated_doorbells", u32_(s.aggregated_doorbells + 4 * p)));
                }
                f.push(("g_sch_ctx_gpu_mc_ptr", u64_(s.g_sch_ctx_gpu_mc_ptr)));
                f.push((
                    "query_status_fence_gpu_mc_ptr",
                    u64_(s.query_status_fence_gpu_mc_ptr),
                ));
                for p in 0..mes_api::HWIP_SEGMENTS {
                    f.push(("gc_base", u32_(s.gc_base + 4 * p)));
                }
                for p in 0..mes_api::HWIP_SEGMENTS {
                    f.push(("mmhub_base", u32_(s.mmhub_base + 4 * p)));
                }
                for p in 0..mes_api::HWIP_SEGMENTS {
                    f.push(("osssys_base", u32_(s.osssys_base + 4 * p)));
                }
                status(&mut f, s.api_status);
                f.push(("flags", u32_(s.flags)));
                f.push(("oversubscription_timer", u32_(s.oversubscription_timer)));
                "SET_HW_RSRC"
            }
            o::SET_HW_RSRC_1 => {
                status(&mut f, layout.set_hw_1_api_status);
                if let Some(at) = layout.set_hw_1_kiq_unmap_timeout {
                    f.push(("mes_kiq_unmap_timeout", u32_(at)));
                }
                "SET_HW_RSRC_1"
            }
            o::ADD_QUEUE => {
                let a = &layout.add;
                f.push(("process_id", u32_(a.process_id)));
                f.push(("page_table_base_addr", u64_(a.page_table_base_addr)));
                f.push(("process_va_start", u64_(a.process_va_start)));
                f.push(("process_va_end", u64_(a.process_va_end)));
                f.push(("process_quantum", u64_(a.process_quantum)));
                f.push(("process_context_addr", u64_(a.process_context_addr)));
                f.push(("gang_quantum", u64_(a.gang_quantum)));
                f.push(("gang_context_addr", u64_(a.gang_context_addr)));
                f.push(("inprocess_gang_priority", u32_(a.inprocess_gang_priority)));
                f.push((
                    "gang_global_priority_level",
                    u32_(a.gang_global_priority_level),
                ));
                f.push(("doorbell_offset", u32_(a.doorbell_offset)));
                f.push(("mqd_addr", u64_(a.mqd_addr)));
                f.push(("wptr_addr", u64_(a.wptr_addr)));
                f.push(("queue_type", u32_(a.queue_type)));
                f.push(("gds_size", u32_(a.gds_size)));
                f.push(("vm_context_cntl", u32_(a.vm_context_cntl)));
                let fl = le32(frame, a.flags);
                use mes_api::add_flags as af;
                f.push(("flags", fl.into()));
                f.push(("flags.is_kfd_process", af::IS_KFD_PROCESS.get(fl).into()));
                f.push(("flags.is_aql_queue", af::IS_AQL_QUEUE.get(fl).into()));
                f.push(("flags.map_legacy_kq", af::MAP_LEGACY_KQ.get(fl).into()));
                status(&mut f, a.api_status);
                f.push(("pipe_id", u32_(a.pipe_id)));
                f.push(("queue_id", u32_(a.queue_id)));
                "ADD_QUEUE"
            }
            o::REMOVE_QUEUE => {
                let r = &layout.remove;
                f.push(("doorbell_offset", u32_(r.doorbell_offset)));
                f.push(("gang_context_addr", u64_(r.gang_context_addr)));
                let fl = le32(frame, r.flags);
                use mes_api::remove_flags as rf;
                f.push(("flags", fl.into()));
                f.push((
                    "flags.unmap_legacy_queue",
                    rf::UNMAP_LEGACY_QUEUE.get(fl).into(),
                ));
                status(&mut f, r.api_status);
                f.push(("pipe_id", u32_(r.pipe_id)));
                f.push(("queue_id", u32_(r.queue_id)));
                f.push(("queue_type", u32_(r.queue_type)));
                "REMOVE_QUEUE"
            }
            o::SUSPEND => {
                let s = &layout.suspend;
                f.push((
                    "suspend_all_gangs",
                    mes_api::ALL_GANGS.get(le32(frame, s.flags)).into(),
                ));
                f.push(("gang_context_addr", u64_(s.gang_context_addr)));
                f.push(("suspend_fence_addr", u64_(s.suspend_fence_addr)));
                f.push(("suspend_fence_value", u32_(s.suspend_fence_value)));
                status(&mut f, s.api_status);
                "SUSPEND"
            }
            o::RESUME => {
                let r = &layout.resume;
                f.push((
                    "resume_all_gangs",
                    mes_api::ALL_GANGS.get(le32(frame, r.flags)).into(),
                ));
                f.push(("gang_context_addr", u64_(r.gang_context_addr)));
                status(&mut f, r.api_status);
                "RESUME"
            }
            o::QUERY_SCHEDULER_STATUS => {
                status(&mut f, layout.query_api_status);
                "QUERY_SCHEDULER_STATUS"
            }
            _ => "UNKNOWN",
        };
        out.push(Packet {
            offset: i * FRAME_BYTES,
            bytes: FRAME_BYTES,
            kind,
            fields: f,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A MAP_QUEUES assembled by hand from the `nvd.h` shifts.
    #[test]
    fn pm4_map_queues_by_hand() {
        let words: [u32; 7] = [
            0xC005_A200,
            2 << 13 | 1 << 16 | 1 << 18 | 1 << 29 | 8 << 8,
            0x40 << 2,
            0x1000,
            0x2,
            0x3000,
            0x4,
        ];
        let b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let p = pm4(&b);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].kind, "MAP_QUEUES");
        let get = |n| p[0].fields.iter().find(|f| f.0 == n).map(|f| f.1);
        assert_eq!(get("queue"), Some(2));
        assert_eq!(get("vmid"), Some(8));
        assert_eq!(get("doorbell_offset"), Some(0x40));
        assert_eq!(get("mqd_addr"), Some(0x2_0000_1000));
        assert_eq!(get("wptr_addr"), Some(0x4_0000_3000));
    }

    #[test]
    fn pm4_names_release_mem_and_stops_at_garbage() {
        // RELEASE_MEM with count 5 (7 dwords), a type-2 filler, then a
        // type-0 header.
        let mut words = alloc::vec![3u32 << 30 | 5 << 16 | 0x49 << 8];
        words.extend([0u32; 6]);
        words.push(0x8000_0000);
        words.push(0x1234);
        let b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let p = pm4(&b);
        let kinds: Vec<_> = p.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, ["RELEASE_MEM", "TYPE2_NOP", "UNKNOWN"]);
        assert_eq!(p[0].bytes, 28);
    }

    #[test]
    fn pm4_one_dword_nop_filler_is_one_dword() {
        // `PACKET3(PACKET3_NOP, 0x3FFF)` by hand from `nvd.h`: type 3 in
        // bits 31:30, count 0x3FFF in 29:16, NOP (0x10) in 15:8; then a
        // WRITE_DATA (0x37) with count 3 (5 dwords).
        let filler = 3u32 << 30 | 0x3FFF << 16 | 0x10 << 8;
        let words = [
            filler,
            filler,
            3u32 << 30 | 3 << 16 | 0x37 << 8,
            5 << 8,
            0x1000,
            0,
            7,
        ];
        let b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let p = pm4(&b);
        let kinds: Vec<_> = p.iter().map(|p| (p.kind, p.offset, p.bytes)).collect();
        assert_eq!(
            kinds,
            [
                ("NOP (one-dword filler)", 0, 4),
                ("NOP (one-dword filler)", 4, 4),
                ("WRITE_DATA", 8, 20)
            ]
        );
    }
}
