#!/usr/bin/env bash
# Rebuilds the checked-in seed corpora of the fuzz targets that
# `cargo xtask ci` runs in its "fuzz smoke" stage, from real inputs:
#   pcie/fuzz/corpus/caps        this machine's PCI config spaces (sysfs)
#   firmware-if/fuzz/corpus/container
#                                the first 4 KiB (the headers) of real firmware-amd-graphics
#                                blobs, each behind the target's kind byte
#                                (the index into its KINDS list)
#   runtime/fuzz/corpus/discovery
#                                the model's Navi31/Navi48 tables
#                                (BAREBELL_WRITE_CORPUS=1 cargo test -p barebell-tests --test fuzz_corpus)
#   runtime/fuzz/corpus/mes_status, hub_fault
#                                status words from the MES v11/v12 and hub
#                                status layouts (little-endian)
set -euo pipefail
cd "$(dirname "$0")/.."
fw=${FIRMWARE_DIR:-/lib/firmware/amdgpu}

caps=pcie/fuzz/corpus/caps
mkdir -p "$caps"
for d in /sys/bus/pci/devices/*; do
    [ -r "$d/config" ] && cat "$d/config" > "$caps/$(basename "$d" | tr ':' '_')"
done

cont=firmware-if/fuzz/corpus/container
mkdir -p "$cont"
# kind index (container.rs KINDS) and a blob of that kind
while read -r k f; do
    [ -f "$fw/$f" ] || { echo "missing $fw/$f" >&2; exit 1; }
    { printf "\\x$(printf %02x "$k")"; head -c 4096 "$fw/$f"; } > "$cont/$k-${f%.bin}"
done <<'LIST'
0 gc_11_0_0_pfp.bin
1 gc_11_0_0_me.bin
2 navi10_ce.bin
3 gc_11_0_0_mec.bin
5 gc_11_0_0_rlc.bin
6 gc_11_0_0_mes_2.bin
7 gc_11_0_0_mes1.bin
8 gc_12_0_1_uni_mes.bin
9 gc_11_0_0_imu.bin
10 sdma_6_0_0.bin
11 psp_13_0_0_sos.bin
12 gc_12_0_1_toc.bin
14 psp_13_0_0_ta.bin
15 smu_13_0_0.bin
17 navi10_gpu_info.bin
18 raven_dmcu.bin
19 dcn_3_2_0_dmcub.bin
20 vcn_4_0_0.bin
LIST

words() { # name, then 64-bit values
    local out=$1; shift
    : > "$out"
    for v in "$@"; do
        python3 -c "import sys; sys.stdout.buffer.write(($v).to_bytes(8, 'little'))" >> "$out"
    done
}
mkdir -p runtime/fuzz/corpus/mes_status runtime/fuzz/corpus/hub_fault
# 0 (not completed), 1 (done), a v12 MES_ERR_CODE-style failure in the
# high word, all ones.
words runtime/fuzz/corpus/mes_status/words 0 1 0x0000000400000000 0xffffffffffffffff
# hub reads: a zero status (no fault), a permission fault status with an
# address pair, all ones (device gone).
words runtime/fuzz/corpus/hub_fault/words 0 0x0000100100000041 0x12345678000000ff 0xffffffffffffffff
mkdir -p runtime/fuzz/corpus/discovery
BAREBELL_WRITE_CORPUS=1 cargo test -q -p barebell-tests --test fuzz_corpus >/dev/null
echo "seeds: $(ls $caps | wc -l) caps, $(ls $cont | wc -l) container, discovery, mes_status, hub_fault"
