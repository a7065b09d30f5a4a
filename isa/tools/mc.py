# Batched llvm-mc-19 queries for the table generator (development and the
# `cargo xtask isa-tables` check; not used by the build).
#
# Every query is a tuple of 32-bit words. Each is disassembled in its own
# atomic block `[..]` followed by a marker block, with -show-encoding, so the
# first instruction of every block is known exactly: its text and its length
# in bytes, or None when LLVM reports "invalid instruction encoding" at the
# block's first byte. Queries are deduplicated, cached, and run in chunks on
# as many llvm-mc processes as there are CPUs.
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

LLVM_MC = os.environ.get('LLVM_MC', 'llvm-mc-19')
DELIM = '[0x2a,0x00,0x80,0xbf][0x39,0x05,0x80,0xbf]'
CHUNK = 40000


def _block(words):
    b = []
    for w in words:
        b += (w & 0xffffffff).to_bytes(4, 'little')
    return '[' + ','.join('0x%02x' % x for x in b) + ']'


def _norm(s):
    return ' '.join(s.split())


def _run_chunk(cpu, w64, blocks):
    lines = []
    for ws in blocks:
        lines.append(_block(ws))
        lines.append(DELIM)
    attr = ['-mattr=+wavefrontsize64'] if w64 else []
    p = subprocess.run([LLVM_MC, '-arch=amdgcn', '-mcpu=' + cpu, '-disassemble',
                        '-show-encoding', *attr],
                       input='\n'.join(lines) + '\n', capture_output=True, text=True,
                       check=False)
    if p.returncode != 0 and 'Stack dump' in p.stderr:
        # llvm-mc-19 crashes on a few gfx942 words (e.g. some VOP1 opcodes
        # with a literal): split the chunk until the crashing query is
        # alone, and count that query as invalid.
        if len(blocks) == 1:
            return [None]
        h = len(blocks) // 2
        return _run_chunk(cpu, w64, blocks[:h]) + _run_chunk(cpu, w64, blocks[h:])
    out = [l for l in p.stdout.split('\n') if l.startswith('\t') and not l.startswith('\t.text')]
    bad = set()
    for m in re.finditer(r'<stdin>:(\d+):(\d+): (?:warning|error): ', p.stderr):
        if int(m.group(2)) == 2:
            bad.add((int(m.group(1)) - 1) // 2)
    res = []
    oi = 0
    for k in range(len(blocks)):
        cur = []
        while not (out[oi].startswith('\ts_nop 42') and out[oi + 1].startswith('\ts_nop 0x539')):
            cur.append(out[oi])
            oi += 1
        oi += 2
        if k in bad or not cur:
            res.append(None)
            continue
        text, _, enc = cur[0].partition('; encoding: ')
        res.append((_norm(text), enc.count(',') + 1))
    return res


class Runner:
    """llvm-mc-19 with a cache: run(cpu, w64, queries) -> [(text, nbytes) | None]."""

    def __init__(self):
        self.cache = {}
        self.jobs = max(1, os.cpu_count() or 1)

    def run(self, cpu, w64, queries):
        queries = [tuple(q) for q in queries]
        todo = [q for q in dict.fromkeys(queries) if (cpu, w64, q) not in self.cache]
        chunks = [todo[i:i + CHUNK] for i in range(0, len(todo), CHUNK)]
        with ThreadPoolExecutor(self.jobs) as ex:
            for chunk, res in zip(chunks, ex.map(lambda c: _run_chunk(cpu, w64, c), chunks)):
                for q, r in zip(chunk, res):
                    self.cache[(cpu, w64, q)] = r
        return [self.cache[(cpu, w64, q)] for q in queries]
