"""Writes interp seeds: [flags][kernel descriptor][code] of every kernel
in the given AMDGPU code objects (ELF64 parsed by hand: no elftools)."""
import os, struct, sys

out = sys.argv[1]
for path in sys.argv[2:]:
    b = open(path, "rb").read()
    mach = struct.unpack_from("<I", b, 48)[0] & 0xFF
    flags = {0x41: 0, 0x4E: 1, 0x4C: 2}.get(mach)
    if flags is None:
        continue
    shoff, = struct.unpack_from("<Q", b, 40)
    shentsize, shnum = struct.unpack_from("<HH", b, 58)
    secs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    sym = next(s for s in secs if s[1] == 2)  # SHT_SYMTAB
    strtab = secs[sym[6]]
    def name(o):
        s = strtab[4] + o
        return b[s:b.index(b"\0", s)].decode()
    syms = {}
    for i in range(sym[5] // 24):
        st_name, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", b, sym[4] + i * 24)
        if shndx and shndx < len(secs):
            syms[name(st_name)] = (secs[shndx], value, size)
    def at(sec, value, size):
        return b[sec[4] + value - sec[3]:][:size]
    for n, (sec, value, size) in syms.items():
        if not n.endswith(".kd") or n[:-3] not in syms:
            continue
        kd = at(sec, value, 64)
        fsec, fvalue, fsize = syms[n[:-3]]
        code = at(fsec, fvalue, min(fsize, 4096))
        wave64 = not (struct.unpack_from("<H", kd, 56)[0] & (1 << 10))
        fl = flags | ((2 if wave64 else 1) << 2)
        stem = os.path.basename(path).rsplit(".", 1)[0]
        open(os.path.join(out, f"{stem}-{n[:-3]}"), "wb").write(bytes([fl]) + kd + code)
