#!/usr/bin/env bash
# Rebuilds the checked-in seed corpora of the fuzz targets that
# `cargo xtask ci` runs in its "fuzz smoke" stage, from real inputs:
#   pcie/fuzz/corpus/caps        this machine's PCI config spaces (sysfs)
#   firmware-if/fuzz/corpus/container
#                                the first 4 KiB (the headers) of real firmware-amd-graphics
#                                blobs, each behind the target's kind byte
#                                (the index into its KINDS list)
#   runtime/fuzz/corpus/discovery, psp
#                                the model's Navi31/Navi48 tables, and what the model's PSP
#                                answered (register reads, fences, responses) during the PSP
#                                step of a Navi31/Navi48 bring-up with the real blobs
#                                (BAREBELL_WRITE_CORPUS=1 cargo test -p barebell-tests --test harness -- fuzz_corpus::)
#   pcie/fuzz/corpus/pci_decode  the same config spaces, as `barebell pci decode` reads a dump
#   pcie/fuzz/corpus/sysfs       this machine's sysfs `resource` files and device names
#                                (and any `resourceN_resize`), behind the target's kind byte
#   pcie/fuzz/corpus/pagemap     64 real /proc/self/pagemap entries of a buffer python
#                                touched (as root: real frame numbers)
#   unikernel/fuzz/corpus/cpio   newc archives written by the writer `cargo xtask qemu`
#                                uses for its -initrd module (`cargo xtask newc`), of small
#                                real firmware-amd-graphics files and of blob headers
#   unikernel/fuzz/corpus/acpi   this machine's ACPI tables (/sys/firmware/acpi/tables:
#                                FACP, APIC, MCFG) at the addresses the kernel logged for
#                                them, behind an RSDP and XSDT rebuilt from the kernel's
#                                log lines (sysfs does not export those two), and the same
#                                tables behind an ACPI 1.0 RSDP and RSDT
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

dec=pcie/fuzz/corpus/pci_decode
mkdir -p "$dec"
cp "$caps"/* "$dec"/

sysfs=pcie/fuzz/corpus/sysfs
mkdir -p "$sysfs"
for d in /sys/bus/pci/devices/*; do
    n=$(basename "$d" | tr ':' '_')
    [ -r "$d/resource" ] && { printf '\x00'; cat "$d/resource"; } > "$sysfs/resource-$n"
    printf '\x02%s' "$(basename "$d")" > "$sysfs/name-$n"
    for r in "$d"/resource*_resize; do
        [ -r "$r" ] && { printf '\x01'; cat "$r"; } > "$sysfs/resize-$n-$(basename "$r")"
    done
done

mkdir -p pcie/fuzz/corpus/pagemap
python3 - pcie/fuzz/corpus/pagemap/heap <<'PY'
import ctypes, sys
page = 4096
buf = bytearray(65 * page)
for i in range(0, len(buf), page):  # touch: resident
    buf[i] = 1
addr = ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))
start = (addr + page - 1) // page * page
with open("/proc/self/pagemap", "rb") as f:
    f.seek(start // page * 8)
    entries = f.read(64 * 8)
open(sys.argv[1], "wb").write(bytes([0]) + start.to_bytes(8, "little") + entries)
PY

cpio=unikernel/fuzz/corpus/cpio
mkdir -p "$cpio"
cargo xtask newc "$cpio/small" "$fw/gc_12_0_1_toc.bin" "$fw/navi10_gpu_info.bin" "$fw/gc_12_0_0_toc.bin"
cargo xtask newc "$cpio/heads" --head 1024 "$fw/gc_11_0_0_mes_2.bin" "$fw/psp_13_0_0_sos.bin" \
    "$fw/smu_13_0_0.bin" "$fw/gc_11_0_0_pfp.bin" "$fw/sdma_6_0_0.bin"

mkdir -p unikernel/fuzz/corpus/acpi
python3 - unikernel/fuzz/corpus/acpi <(dmesg) <<'PY'
import re, struct, sys
out = sys.argv[1]
log = {m[0]: (int(m[1], 16), int(m[2], 16), m[3]) for m in re.findall(
    r"ACPI: (RSDP|XSDT|RSDT|FACP|APIC|MCFG) 0x([0-9A-F]+) ([0-9A-F]+) \((v\d\d[^)]*)\)", open(sys.argv[2]).read())}
if "RSDP" not in log or "MCFG" not in log:
    sys.exit("dmesg names no RSDP/MCFG (run as root)")
tables = {n: open(f"/sys/firmware/acpi/tables/{n}", "rb").read() for n in ("FACP", "APIC", "MCFG")}
oem = log["RSDP"][2].split()[1].encode().ljust(6)[:6]
def fix(b, at):  # make all bytes (of the first `len` bytes) sum to 0
    b[at] = 0
    b[at] = (-sum(b)) & 0xFF
def table_id(sig):  # the OEM table id the kernel logged, if any
    f = log.get(sig.decode(), (0, 0, ""))[2].split()
    return f[2].encode().ljust(8)[:8] if len(f) > 2 else sig + b"TBL "
def sdt(sig, entries, fmt):
    body = b"".join(struct.pack(fmt, e) for e in entries)
    b = bytearray(sig + struct.pack("<IB", 36 + len(body), 1) + b"\0" + oem
                  + table_id(sig) + struct.pack("<I", 0) + b"FCAT" + struct.pack("<I", 0x20240119) + body)
    fix(b, 9)
    return bytes(b)
def rsdp(rev, rsdt, xsdt):
    b = bytearray(b"RSD PTR " + b"\0" + oem + bytes([rev]) + struct.pack("<I", rsdt))
    fix(b, 8)
    if rev >= 2:
        b += struct.pack("<IQ", 36, xsdt) + b"\0\0\0\0"
        fix(b, 32)
    return bytes(b)
def region(addr, data):
    return struct.pack("<QI", addr, len(data)) + data
order = ["FACP", "APIC", "MCFG"]
addrs = [log[n][0] for n in order]
real = b"".join(region(log[n][0], tables[n]) for n in order)
xsdt_at = log.get("XSDT", (0xA0000, 0, ""))[0]
open(f"{out}/xsdt", "wb").write(region(log["RSDP"][0], rsdp(2, 0, xsdt_at))
                                 + region(xsdt_at, sdt(b"XSDT", addrs, "<Q")) + real)
rsdt_at = xsdt_at
open(f"{out}/rsdt", "wb").write(region(log["RSDP"][0], rsdp(0, rsdt_at, 0))
                                 + region(rsdt_at, sdt(b"RSDT", addrs, "<I")) + real)
PY

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
mkdir -p runtime/fuzz/corpus/discovery runtime/fuzz/corpus/psp
BAREBELL_WRITE_CORPUS=1 cargo test -q -p barebell-tests --test harness -- fuzz_corpus:: >/dev/null
echo "seeds: 2 cpio, 2 acpi, $(ls $caps | wc -l) caps, $(ls $dec | wc -l) pci_decode, $(ls $sysfs | wc -l) sysfs, pagemap, $(ls $cont | wc -l) container, discovery, psp, mes_status, hub_fault"

# isa/fuzz/corpus/disasm: the clang-19 code objects of the kernel loader's
# corpus; isa/fuzz/corpus/interp: each of their kernels' descriptor and code.
mkdir -p isa/fuzz/corpus/disasm isa/fuzz/corpus/interp
cp kernel/fuzz/corpus/code_object/*.co isa/fuzz/corpus/disasm/
python3 isa/fuzz/interp-seeds.py isa/fuzz/corpus/interp kernel/fuzz/corpus/code_object/*.co

# runtime/fuzz/corpus/ring_decode, ih: runtime-encoded packets and the
# model's IV entries (BAREBELL_WRITE_CORPUS=1 cargo test -p barebell-tests
# --test harness -- fuzz_corpus::).
BAREBELL_WRITE_CORPUS=1 cargo test -q -p barebell-tests --test harness -- fuzz_corpus::

# runtime/fuzz/corpus/vgpu_regs: the register accesses of a model
# bring-up, one seed per step, from `barebell bringup --trace`.
mkdir -p runtime/fuzz/corpus/vgpu_regs
for p in navi31:0 navi48:1; do
    cargo run -q -p barebell-cli --bin barebell -- bringup --trace --part "${p%:*}" > "target/trace-${p%:*}.txt"
    python3 runtime/fuzz/vgpu-seeds.py runtime/fuzz/corpus/vgpu_regs "${p%:*}" "${p#*:}" "target/trace-${p%:*}.txt"
done
