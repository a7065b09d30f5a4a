"""Writes vgpu_regs seeds from `barebell bringup --trace --part P` output:
one seed per bring-up step, `[part byte]` then each register access of
the step (first 2048) as the target's 9-byte op (0 read, 1 write)."""
import os, re, struct, sys

out, part, byte, trace = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
step, ops = "start", {}
for line in open(trace):
    m = re.match(r"step (\S+?):", line)
    if m:
        step = m.group(1)
        continue
    m = re.match(r"\s+([RW]) \S+ @0x([0-9a-f]+) = 0x([0-9a-f]+)", line)
    if m:
        k = 0 if m.group(1) == "R" else 1
        ops.setdefault(step, []).append(struct.pack("<BII", k, int(m.group(2), 16), int(m.group(3), 16)))
for step, o in ops.items():
    open(os.path.join(out, f"{part}-{step}"), "wb").write(bytes([byte]) + b"".join(o[:2048]))
