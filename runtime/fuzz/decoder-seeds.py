#!/usr/bin/env python3
"""Seeds for the per-decoder fuzz targets (pm4_hws, mqd, sdma_packet,
pte_v9, mes_frame, fw_rings), from the checked-in ring_decode seeds (packets the
runtime's and firmware-if's encoders build, written by
tests/harness/tests/fuzz_corpus.rs) and from the MQD values tinygrad
0.14.0's AM_GFX.setup_ring() writes (am/ip.py), and a one-level GC 9.4.3
page table mapping one 4 KiB page. Run from runtime/fuzz."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
RD = os.path.join(HERE, "corpus", "ring_decode")


def seed(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def rd(name):
    with open(os.path.join(RD, name), "rb") as f:
        return f.read()[1:]  # drop ring_decode's format byte


# pm4_hws: type-3 packets as the KIQ/HWS clients encode them.
seed("pm4_hws", "pm4-kiq", rd("pm4-kiq"))

# sdma_packet: [generation 0 = 6.0, 1 = 7.0, 2 = 4.4.2][packets].
for g, name in ((0, "sdma-v6"), (1, "sdma-v7"), (2, "sdma-v4_4_2")):
    seed("sdma_packet", name, bytes([g]) + rd(name))

# mes_frame: [offset u32][frame]; offset 0 is the header.
seed("mes_frame", "mes-v11", struct.pack("<I", 0) + rd("mes-v11"))
seed("mes_frame", "mes-v12", struct.pack("<I", 0) + rd("mes-v12"))

# mqd: [xccs][doorbell range lo, hi][MQD], dwords as AM_GFX.setup_ring()
# fills struct v11_compute_mqd for a 64 KiB AQL ring with a 2 KiB EOP
# buffer (doorbell MEC_RING0 * 2 = 0x10; mc addresses are examples).
mqd = [0] * 512
mqd[0] = 0xC0310800                      # header
ring, rptr, wptr, eop, mqd_mc = 0x8000_0000, 0x8001_0000, 0x8001_0080, 0x8002_0000, 0x8003_0000
mqd[128], mqd[129] = mqd_mc & 0xFFFF_FFFF, mqd_mc >> 32   # cp_mqd_base_addr
mqd[136], mqd[137] = (ring >> 8) & 0xFFFF_FFFF, ring >> 40  # cp_hqd_pq_base
mqd[139], mqd[140] = rptr & 0xFFFF_FFFF, rptr >> 32
mqd[141], mqd[142] = wptr & 0xFFFF_FFFF, wptr >> 32
mqd[143] = (0x10 << 2) | (1 << 30)       # doorbell offset, DOORBELL_EN
qs = (0x10000 // 4).bit_length() - 2     # QUEUE_SIZE as tinygrad computes it
mqd[145] = qs | (5 << 8) | (1 << 27) | (2 << 28)  # rptr_block_size, queue_full_en, slot_based_wptr
mqd[165], mqd[166] = (eop >> 8) & 0xFFFF_FFFF, eop >> 40
mqd[167] = (0x800 // 4).bit_length() - 2  # EOP_SIZE
mqd[181] = 1                             # cp_hqd_aql_control
body = struct.pack("<512I", *mqd)
seed("mqd", "tinygrad-v11-aql", bytes([1]) + struct.pack("<II", 0, 0x7FC) + body)
seed("mqd", "tinygrad-v11-aql-8xcc", bytes([8]) + struct.pack("<II", 0, 0x7FC) + body)

# pte_v9: [depth][block_size][access][root][start][end][va][vram_base]
# [table]: depth 0, block 0 (one 512-entry table of 4 KiB pages), the
# table at vram offset 0, entry 1 maps VA 0x1000 to PA 0x5000 RW.
pte = 0x5000 | 1 | (1 << 5) | (1 << 6)
table = struct.pack("<Q", 0) + struct.pack("<Q", pte)
hdr = bytes([0, 0, 1]) + struct.pack("<QQQQQ", 0x1000_0000, 0, 0x1F_FFFF, 0x1000, 0x1000_0000)
seed("pte_v9", "one-page", hdr + table)

# fw_rings: [which: 0 KIQ gfx11, 1 MES v11, 2 MES v12][ring dwords].
seed("fw_rings", "kiq-pm4", bytes([0]) + rd("pm4-kiq"))
seed("fw_rings", "mes-v11", bytes([1]) + rd("mes-v11"))
seed("fw_rings", "mes-v12", bytes([2]) + rd("mes-v12"))
