#!/usr/bin/env python3
# Development-time table generator (not run by the build or CI).
#
# Asks llvm-mc-19 (the ground truth the CI differential compares against) what
# each opcode of each supported encoding is called and which operand types it
# prints, and writes isa/data/<cpu>.txt: one line per opcode
#
#   ENC OPCODE NAME FIXMASK FIXVAL OPERAND...
#
# OPERAND is FIELD:TYPE (a field of the encoding printed with TYPE) or =TEXT
# (fixed text such as vcc_lo). FIXMASK/FIXVAL are the non-operand bits of the
# low 64 encoding bits that must hold that value for LLVM to accept the word.
# The CI stage `cargo xtask isa-diff` re-checks everything these lines imply
# against llvm-mc-19 and llvm-objdump-19.
#
# Usage: gen_tables.py CPU OUT            (SOP*, VOP1/2/C -> data/CPU.txt)
#        gen_tables.py CPU OUT vop3       (VOP3, VOP3P -> data/CPU_vop3.txt)
#
# The committed CPU_vop3.txt files were post-processed by hand after this
# script (a known gap of the script, to be folded in): operand tokens split
# out of LLVM's "/*Invalid register, operand has 'X' register class*/"
# comments were dropped; sources whose literal signature did not match a
# KNOWN class took the class of the instruction's first classified source
# (f64 ops: f64; v_dot2_bf16_bf16: v2bf16; v_dot2_f16_f16: v2f16/f16); the
# carry-in/select operand of v_cndmask_*_e64 and v_*_co_ci_u32_e64 became
# `src2:mask`. mem.txt lists SMEM/DS/FLAT/MUBUF mnemonics from enumerating
# each opcode with a few base words.
import sys
import random
from llvmmc import first, words

CPU = sys.argv[1] if len(sys.argv) > 1 else 'gfx1100'
G12 = CPU.startswith('gfx12')

LITS = [0x3800, 0x3e22f983, 0x3f000000, 0xffff3800, 0x12345678, 0xfffffff0, 0x10,
        0x3fe00000, 0x3f00, 0x3118, 0x3fc45f30]


def strip_mods(tok):
    t = tok.replace('|', '')
    if t.startswith('neg(') and t.endswith(')'):
        t = t[4:-1]
    if t.startswith('-') and (t[1:2] in 'vst' or t[1:].startswith('ttmp') or t[1:].startswith('null') or t[1:].startswith('m0') or t[1:].startswith('exec') or t[1:].startswith('src')):
        t = t[1:]
    return t


def split_ops(text):
    """mnemonic, [operands] split at top-level ', '; trailing space-separated
    modifiers of the last operand are dropped."""
    if ' ' not in text:
        return text, []
    mn, rest = text.split(' ', 1)
    out, depth, cur = [], 0, ''
    i = 0
    while i < len(rest):
        c = rest[i]
        if c in '([':
            depth += 1
        elif c in ')]':
            depth -= 1
        if depth == 0 and rest.startswith(', ', i):
            out.append(cur)
            cur = ''
            i += 2
            continue
        cur += c
        i += 1
    if depth == 0 and ' ' in cur and not cur.startswith('hwreg(') and not cur.startswith('sendmsg('):
        cur = cur.split(' ', 1)[0]
    out.append(cur)
    return mn, out


class Enc:
    """An encoding: prefix bits, opcode field, operand fields (name, lo, width,
    base value, alternative value, kind), total size in dwords."""

    def __init__(self, name, prefix_lo, prefix_w, prefix, op_lo, op_w, fields, dwords):
        self.name, self.prefix_lo, self.prefix_w, self.prefix = name, prefix_lo, prefix_w, prefix
        self.op_lo, self.op_w, self.fields, self.dwords = op_lo, op_w, fields, dwords

    def word(self, op, vals, lit=0x11223344):
        w = self.prefix << self.prefix_lo | op << self.op_lo
        for (name, lo, width, base, alt, kind) in self.fields:
            v = vals.get(name, base)
            w |= (v & ((1 << width) - 1)) << lo
        ws = [w & 0xffffffff, w >> 32 & 0xffffffff, w >> 64 & 0xffffffff][:self.dwords]
        return words(ws + [lit, 0x55667788, 0])[:16]

    def raw(self, op, vals):
        w = self.prefix << self.prefix_lo | op << self.op_lo
        for (name, lo, width, base, alt, kind) in self.fields:
            v = vals.get(name, base)
            w |= (v & ((1 << width) - 1)) << lo
        return w


def src_type(enc, op, fname, vals):
    """Classify how a source field prints immediates: probe literals and
    1/(2*pi)."""
    bl = [enc.word(op, dict(vals, **{fname: 255}), l) for l in LITS]
    bl.append(enc.word(op, dict(vals, **{fname: 248})))
    r = first(bl, CPU)
    if not all(r):
        return None
    toks = []
    for x in r:
        mn, ops = split_ops(x)
        toks.append(ops)
    return toks


def main():
    pass


if __name__ == '__main__':
    main()


def discover(enc, op, bases):
    """Find a base that decodes; map printed operands to fields."""
    for b in bases:
        r = first([enc.word(op, b)], CPU)[0]
        if r:
            break
    else:
        return None
    mn, ops = split_ops(r)
    fieldvals = dict((f[0], b.get(f[0], f[3])) for f in enc.fields)
    # vary each field to its alternative value
    alts = []
    for f in enc.fields:
        alts.append(enc.word(op, dict(b, **{f[0]: f[4]})))
    ra = first(alts, CPU)
    roles = [None] * len(ops)
    for f, x in zip(enc.fields, ra):
        if not x:
            continue
        mn2, ops2 = split_ops(x)
        if len(ops2) != len(ops):
            continue
        for i, (a, c) in enumerate(zip(ops, ops2)):
            if strip_mods(a) != strip_mods(c) and roles[i] is None:
                roles[i] = f
    return r, mn, ops, roles, b


def reg_width(tok):
    import re
    m = re.match(r'^[sv]\[(\d+):(\d+)\]', tok)
    if m:
        return int(m.group(2)) - int(m.group(1)) + 1
    m = re.match(r'^ttmp\[(\d+):(\d+)\]', tok)
    if m:
        return int(m.group(2)) - int(m.group(1)) + 1
    return 1


SIGS = {}

# Literal-probe signatures (LITS, then inline 248 and 240) of the immediate
# printing classes seen so far, named after LLVM's operand types.
KNOWN = {
    ('0x3800', '0.15915494', '0.5', '0xffff3800', '0x12345678', '-16', '16', '0x3fe00000', '0x3f00', '0x3118', '0x3fc45f30', '0.15915494', '0.5'): 'b32',
    ('0x3800', '0x3e22f983', '0x3f000000', '0xffff3800', '0x12345678', '0xfffffff0', '16', '0x3fe00000', '0x3f00', '0x3118', '0x3fc45f30', '0.15915494309189532', '0.5'): 'b64',
    ('0.5', '0x3e22f983', '0x3f000000', '0xffff3800', '0x12345678', '-16', '16', '0x3fe00000', '0x3f00', '0.15915494', '0x3fc45f30', '0.15915494', '0.5'): 'v2f16',
    ('0.5', '0xf983', '0', '0.5', '0x5678', '-16', '16', '0', '0x3f00', '0.15915494', '0x5f30', '0.15915494', '0.5'): 'f16',
    ('0x3800', '0x3e22f983', '0x3f000000', '0xffff3800', '0x12345678', '0xfffffff0', '0x10', '0.5', '0x3f00', '0x3118', '0x3fc45f30', '0.15915494309189532', '0.5'): 'f64',
    ('0x3800', '0.15915494', '0.5', '0x3800', '0x5678', '-16', '16', '0x0', '0x3f00', '0x3118', '0x5f30', '0x3118', '0x3800'): 'i16',
}


def imm_sig(enc, op, fname, b, idx):
    bl = [enc.word(op, dict(b, **{fname: 255}), l) for l in LITS]
    bl.append(enc.word(op, dict(b, **{fname: 248})))
    bl.append(enc.word(op, dict(b, **{fname: 240})))
    r = first(bl, CPU)
    sig = []
    for x in r:
        if not x:
            sig.append('-')
            continue
        mn, ops = split_ops(x)
        sig.append(ops[idx] if idx < len(ops) else '?')
    return tuple(sig)


def operand_desc(enc, op, r, ops, roles, b):
    desc = []
    for i, (tok, f) in enumerate(zip(ops, roles)):
        if f is None:
            if tok == '0x11223344':
                desc.append('kimm:k32')
            else:
                desc.append('=' + tok)
            continue
        name, lo, width, base, alt, kind = f
        w = reg_width(tok)
        rk = 'v' if tok.startswith('v') else 's'
        if kind == 'simm':
            vs = [0x21, 0x1234, 0xffff, 0x8000, 0x40, 0x41, 0]
            r2 = first([enc.word(op, dict(b, **{name: v})) for v in vs], CPU)
            sig = tuple((split_ops(x)[1] + ['']*4)[i] if x else '-' for x in r2)
            st = {('0x21', '0x1234', '0xffff', '0x8000', '0x40', '0x41', '0x0'): 'hex',
                  ('33', '0x1234', '0xffff', '0x8000', '64', '0x41', '0'): 'u16',
                  ('33', '4660', '65535', '32768', '64', '65', '0'): 'udec'}.get(sig, 'special')
            desc.append('%s:imm.%s' % (name, st))
            continue
        if kind in ('src', 'ssrc'):
            sig = imm_sig(enc, op, name, b, i)
            if all('/*Invalid immediate*/' in x for x in sig):
                cls = 'reg'
            elif all(x.startswith('sendmsg(') for x in sig):
                cls = 'msg'
            else:
                cls = KNOWN.get(sig) or SIGS.setdefault(sig, 'T%d' % len(SIGS))
            desc.append('%s:%s%d.%s' % (name, rk if kind == 'ssrc' else 'src', w, cls))
        else:
            desc.append('%s:%s%d' % (name, rk, w))
    return desc


def fixed_bits(enc, op, b, text):
    """Bits outside prefix/opcode whose flip makes LLVM reject the base word."""
    total = enc.dwords * 32
    base = enc.raw(op, b)
    opmask = ((1 << enc.prefix_w) - 1) << enc.prefix_lo | ((1 << enc.op_w) - 1) << enc.op_lo
    bits = [i for i in range(total) if not (opmask >> i) & 1]
    bl = []
    for i in bits:
        w = base ^ (1 << i)
        ws = [w & 0xffffffff, w >> 32 & 0xffffffff, w >> 64 & 0xffffffff][:enc.dwords]
        bl.append(words(ws + [0x11223344, 0x55667788, 0])[:16])
    r = first(bl, CPU)
    mask = 0
    for i, x in zip(bits, r):
        if x is None:
            mask |= 1 << i
    return mask, base & mask


def gen(enc, ops_range, bases, out):
    for op in ops_range:
        d = discover(enc, op, bases)
        if not d:
            continue
        r, mn, ops, roles, b = d
        desc = operand_desc(enc, op, r, ops, roles, b)
        mask, val = fixed_bits(enc, op, b, r)
        out.append('%s 0x%x %s 0x%x 0x%x %s' % (enc.name, op, mn, mask, val, ' '.join(desc)))
        print(out[-1], file=sys.stderr)


SOP2 = Enc('sop2', 30, 2, 0b10, 23, 7, [('sdst', 16, 7, 5, 9, 'sdst'), ('ssrc1', 8, 8, 2, 6, 'ssrc'), ('ssrc0', 0, 8, 3, 7, 'ssrc')], 1)
SOPK = Enc('sopk', 28, 4, 0b1011, 23, 5, [('sdst', 16, 7, 5, 9, 'sdst'), ('simm16', 0, 16, 0x1234, 0x21, 'simm')], 1)
SOP1 = Enc('sop1', 23, 9, 0x17d, 8, 8, [('sdst', 16, 7, 5, 9, 'sdst'), ('ssrc0', 0, 8, 3, 7, 'ssrc')], 1)
SOPC = Enc('sopc', 23, 9, 0x17e, 16, 7, [('ssrc1', 8, 8, 2, 6, 'ssrc'), ('ssrc0', 0, 8, 3, 7, 'ssrc')], 1)
SOPP = Enc('sopp', 23, 9, 0x17f, 16, 7, [('simm16', 0, 16, 0x1234, 0x21, 'simm')], 1)
VOP2 = Enc('vop2', 31, 1, 0, 25, 6, [('vdst', 17, 8, 3, 7, 'vdst'), ('vsrc1', 9, 8, 2, 6, 'vsrc'), ('src0', 0, 9, 257, 261, 'src')], 1)
VOP1 = Enc('vop1', 25, 7, 0x3f, 9, 8, [('vdst', 17, 8, 3, 7, 'vdst'), ('src0', 0, 9, 257, 261, 'src')], 1)
VOPC = Enc('vopc', 25, 7, 0x3e, 17, 8, [('vsrc1', 9, 8, 2, 6, 'vsrc'), ('src0', 0, 9, 257, 261, 'src')], 1)


VOP3 = Enc('vop3', 26, 6, 0b110101, 16, 10, [('vdst', 0, 8, 3, 7, 'vdst'), ('sdst3', 8, 7, 5, 9, 'sdst'),
            ('src0', 32, 9, 257, 261, 'src'), ('src1', 41, 9, 258, 262, 'src'), ('src2', 50, 9, 260, 264, 'src')], 2)
VOP3P = Enc('vop3p', 24, 8, 0xcc, 16, 7, [('vdst', 0, 8, 3, 7, 'vdst'),
            ('src0', 32, 9, 257, 261, 'src'), ('src1', 41, 9, 258, 262, 'src'), ('src2', 50, 9, 260, 264, 'src')], 2)


def gen_vop3(enc, ops_range, out):
    bases = [{}, {'src2': 0}, {'src1': 0, 'src2': 0}, {'src0': 0, 'src1': 0, 'src2': 0},
             {'vdst': 0, 'src0': 0, 'src1': 0, 'src2': 0}, {'sdst3': 0}, {'sdst3': 0, 'src2': 0},
             {'sdst3': 0, 'src1': 0, 'src2': 0}]
    for op in ops_range:
        d = discover(enc, op, bases)
        if not d:
            continue
        r, mn, ops, roles, b = d
        # modifiers printed after the operands are not operands
        nops = []
        nroles = []
        for t, f in zip(ops, roles):
            nops.append(t)
            nroles.append(f)
        desc = operand_desc(enc, op, r, ops, roles, b)
        mask, val = fixed_bits(enc, op, b, r)
        # which modifier bits print (flip changes the text)
        base = enc.raw(op, b)
        modpos = [8, 9, 10, 11, 12, 13, 14, 15, 59, 60, 61, 62, 63] if enc.name == 'vop3' else [8, 9, 10, 11, 12, 13, 14, 15, 59, 60, 61, 62, 63]
        bl = []
        for i in modpos:
            w = base ^ (1 << i)
            bl.append(words([w & 0xffffffff, w >> 32, 0x11223344, 0]))
        rr = first(bl, CPU)
        mods = 0
        for i, x in zip(modpos, rr):
            if x and x != r and not any(f and f[0] == 'sdst3' and 8 <= i <= 14 for f in roles):
                mods |= 1 << i
        out.append('%s 0x%x %s 0x%x 0x%x 0x%x %s' % (enc.name, op, mn, mask, val, mods, ' '.join(desc)))
        print(out[-1], r, file=sys.stderr)


def main():
    if len(sys.argv) > 3 and sys.argv[3] == 'vop3':
        out = []
        gen_vop3(VOP3, range(1024), out)
        gen_vop3(VOP3P, range(128), out)
        with open(sys.argv[2], 'w') as f:
            for sig, name in SIGS.items():
                f.write('# %s %s\n' % (name, ' | '.join(sig)))
            f.write('\n'.join(out) + '\n')
        return
    out = []
    gen(SOP2, [o for o in range(128) if (o >> 5) != 0b11], [{}, {'sdst': 4, 'ssrc0': 4, 'ssrc1': 4}], out)
    gen(SOPK, range(32), [{}, {'sdst': 4}], out)
    gen(SOP1, range(256), [{}, {'sdst': 4, 'ssrc0': 4}, {'ssrc0': 0}, {'sdst': 0}, {'sdst': 0, 'ssrc0': 0}, {'ssrc0': 0x80, 'sdst': 0x7c}], out)
    gen(SOPC, range(128), [{}, {'ssrc0': 4, 'ssrc1': 4}], out)
    gen(SOPP, range(128), [{}, {'simm16': 0}], out)
    gen(VOP2, range(0x3e), [{}], out)
    gen(VOP1, range(256), [{}, {'vdst': 0, 'src0': 0}], out)
    gen(VOPC, range(256), [{}], out)
    with open(sys.argv[2], 'w') as f:
        for sig, name in SIGS.items():
            f.write('# %s %s\n' % (name, ' | '.join(sig)))
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
