# Development-time helper (not used by the build or CI): runs llvm-mc-19 over byte
# blocks, each in its own atomic block `[..]`, separated by a two-instruction marker,
# and returns per block the instructions LLVM printed (up to its first failure) and
# the byte columns where it reported a failure.
import re
import subprocess

DELIM = '[0x2a,0x00,0x80,0xbf][0x39,0x05,0x80,0xbf]'


def disasm_stream(blocks, mcpu='gfx1100', wave64=False):
    lines = []
    for b in blocks:
        lines.append('[' + ','.join('0x%02x' % x for x in b) + ']')
        lines.append(DELIM)
    attr = ['-mattr=+wavefrontsize64'] if wave64 else []
    p = subprocess.run(['llvm-mc-19', '-arch=amdgcn', '-mcpu=' + mcpu, '-disassemble', *attr],
                       input='\n'.join(lines) + '\n', capture_output=True, text=True)
    out = [l.strip() for l in p.stdout.split('\n') if l.startswith('\t') and not l.startswith('\t.text')]
    warn = {}
    for m in re.finditer(r'<stdin>:(\d+):(\d+): (warning|error): (.*)', p.stderr):
        warn.setdefault((int(m.group(1)) - 1) // 2, []).append((int(m.group(2)), m.group(4)))
    res = []
    oi = 0
    for k, _ in enumerate(blocks):
        cur = []
        while not (out[oi] == 's_nop 42' and out[oi + 1] == 's_nop 0x539'):
            cur.append(out[oi])
            oi += 1
        oi += 2
        res.append((cur, warn.get(k, [])))
    return res


def first(blocks, mcpu='gfx1100', wave64=False):
    r = []
    for cur, w in disasm_stream(blocks, mcpu, wave64):
        if any(c == 2 for c, _ in w):
            r.append(None)
        else:
            r.append(cur[0])
    return r


def words(ws):
    b = []
    for w in ws:
        b += list((w & 0xffffffff).to_bytes(4, 'little'))
    return b
