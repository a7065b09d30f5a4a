#!/usr/bin/env python3
# Table generator for barebell-isa: asks llvm-mc-19 (the ground truth that
# `cargo xtask isa-diff` compares against) what each opcode of each encoding
# is called and how its operands print, and writes isa/data/<cpu>.txt.
#
#   gen_tables.py            regenerate isa/data/gfx1100.txt, gfx1201.txt,
#                            gfx90a.txt and gfx942.txt (--cpu=NAME: only
#                            that one)
#   gen_tables.py --check    regenerate into memory and fail (exit 1) if the
#                            committed files differ (`cargo xtask isa-tables
#                            --check`, a `cargo xtask ci` stage)
#
# Nothing here is edited by hand afterwards: the committed data files are
# exactly this script's output (the check above holds that).
#
# One line per (encoding, opcode):
#
#   ENC OPCODE NAME MASK VAL MODS SEXT FLAGS OPERAND...
#
# MASK/VAL: bits of the instruction (up to 96, the literal excluded) outside
# the prefix, the opcode and the printed operand fields that must hold VAL
# for LLVM to accept the word (found by flipping each bit of a valid word).
# MASK, VAL and MODS take a /<wave64 value> where wave64 differs (rows whose
# operand widths change with the wave size).
# MODS: modifier bits that change the printed text (VOP3/VOP3P/DPP); SEXT:
# those of them that print as sext(...) rather than as a negation. FLAGS:
# `m` (VOP3P whose neg_lo/neg_hi bits print as -x / |x|, v_fma_mix*), `k`
# (op_sel bits print as index_key:N, v_swmmac*), `p` (op_sel:[a,b] of
# v_permlane16), `v` (vcc_lo printed inside src1's |..|), `o` (an offset
# printed as a modifier after the operands), `3` (a VOP3 op_sel lists three
# sources with two printed: the tied src2 of v_fmac_f16_e64), `b` (op_sel
# bits print as byte_sel:N), or -.
# OPERAND is FIELD:TYPE (an encoding field printed with TYPE) or =TEXT
# (printed as is, e.g. vcc_lo). TYPE is
#   s<n> / v<n>           scalar / vector register tuple of n dwords
#   mask                  lane mask: one SGPR in wave32, a pair in wave64
#   src<n>.<imm>          9-bit source (register tuple of n dwords or constant)
#   s<n>.<imm>            8-bit scalar source
#   imm.<style>           16-bit immediate (hex, u16, udec, special)
#   k32                   the literal dword as a constant operand
# where <imm> names how constants print (LLVM's operand types): b32 b64 f64
# f16 i16 v2f16 v2i16 bf16 v2bf16, reg (register-only operand: constants
# print with an "Invalid immediate" note), msg (s_sendmsg_rtn).
# A type may end in /<n>: its register width in wave64 (WMMA).
#
# `word 0xWORD NAME`: a whole dword that is an instruction of its own
# (v_illegal).
#
# Memory, image and the other hand-printed encodings get `ENC OPCODE NAME`
# lines (operand shapes follow from the mnemonic in the decoder).
import sys
import os
import re

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mc import Runner  # noqa: E402

MC = Runner()
CPUS = ['gfx1100', 'gfx1201', 'gfx90a', 'gfx942']
# The GFX9-family targets (wave64 only, GFX9 encodings): gfx90a (CDNA2,
# MI210) and gfx942 (CDNA3). They are learned with the same encodings; what
# LLVM prints differently (cache-policy bits glc/slc/scc on gfx90a, sc0/sc1/nt
# on gfx940+, per AMDGPU's SIDefines.h CPol and the FLAT/MUBUF .td files) and
# which opcodes exist comes from llvm-mc-19 per CPU.
GFX9 = ('gfx90a', 'gfx942')
LITS = [0x3800, 0x3e22f983, 0x3f000000, 0xffff3800, 0x12345678, 0xfffffff0, 0x10,
        0x3fe00000, 0x3f00, 0x3118, 0x3fc45f30]
LIT = 0x11223344

# Literal-probe signatures (the LITS, then inline 248 and 240, with sign and
# absolute-value marks removed) of LLVM's immediate printing classes.
KNOWN = {
    ('0x3800', '0.15915494', '0.5', '0xffff3800', '0x12345678', '-16', '16', '0x3fe00000', '0x3f00', '0x3118', '0x3fc45f30', '0.15915494', '0.5'): 'b32',
    ('0x3800', '0x3e22f983', '0x3f000000', '0xffff3800', '0x12345678', '0xfffffff0', '16', '0x3fe00000', '0x3f00', '0x3118', '0x3fc45f30', '0.15915494309189532', '0.5'): 'b64',
    ('0.5', '0x3e22f983', '0x3f000000', '0xffff3800', '0x12345678', '-16', '16', '0x3fe00000', '0x3f00', '0.15915494', '0x3fc45f30', '0.15915494', '0.5'): 'v2f16',
    ('0.5', '0xf983', '0', '0.5', '0x5678', '-16', '16', '0', '0x3f00', '0.15915494', '0x5f30', '0.15915494', '0.5'): 'f16',
    ('0x3800', '0x3e22f983', '0x3f000000', '0xffff3800', '0x12345678', '0xfffffff0', '0x10', '0.5', '0x3f00', '0x3118', '0x3fc45f30', '0.15915494309189532', '0.5'): 'f64',
    ('0x3800', '0.15915494', '0.5', '0x3800', '0x5678', '-16', '16', '0x0', '0x3f00', '0x3118', '0x5f30', '0x3118', '0x3800'): 'i16',
    ('0x3800', '0x3e22f983', '0x3f000000', '0xffff3800', '0x12345678', '-16', '16', '0x3fe00000', '0.5', '0x3118', '0x3fc45f30', '0.15915494', '0.5'): 'v2bf16',
    ('0x3800', '0x3e22f983', '0', '0xffff3800', '0x12345678', '-16', '16', '0', '0.5', '0x3118', '0x3fc45f30', '0.15915494', '0.5'): 'bf16',
}


# ---------------------------------------------------------------- text

BARE_MODIFIERS = {'glc', 'slc', 'dlc', 'gds', 'offen', 'idxen', 'tfe', 'lds', 'd16', 'a16', 'unorm', 'lwe',
                  'r128', 'nv', 'done', 'row_en', 'vm', 'compr', 'clamp'}


def split_ops(text):
    """(mnemonic, [operand tokens], trailing modifier text). Operands are
    split at ', ' outside (), [] and /* */; the last one ends at the first
    space outside them."""
    if ' ' not in text:
        return text, [], ''
    mn, rest = text.split(' ', 1)
    first = rest.split(' ', 1)[0].rstrip(',')
    if re.match(r'^[a-z_0-9]+:', first) or first in BARE_MODIFIERS:
        return mn, [], rest
    out, cur, depth, i = [], '', 0, 0
    while i < len(rest):
        if rest.startswith('/*', i):
            j = rest.index('*/', i) + 2
            cur += rest[i:j]
            i = j
            continue
        c = rest[i]
        if c in '([':
            depth += 1
        elif c in ')]':
            depth -= 1
        if depth == 0 and rest.startswith(', ', i):
            out.append(cur)
            cur, i = '', i + 2
            continue
        if depth == 0 and c == ' ':
            out.append(cur)
            return mn, out, rest[i + 1:]
        cur += c
        i += 1
    out.append(cur)
    return mn, out, ''


def bare(tok):
    """An operand token without neg/abs marks and disassembler comments."""
    t = re.sub(r'/\*.*?\*/', '', tok)
    t = t.replace('|', '')
    if t.startswith('neg(') and t.endswith(')'):
        t = t[4:-1]
    if t.startswith('-') and re.match(r'-[a-z]', t):
        t = t[1:]
    return t


def reg_width(tok):
    m = re.match(r'^(?:[sv]|ttmp)\[(\d+):(\d+)\]', bare(tok))
    return int(m.group(2)) - int(m.group(1)) + 1 if m else 1


# ---------------------------------------------------------------- encodings

class Field:
    """An operand field: bits lo..lo+width, base and alternative values for
    probing, kind (sdst: 7-bit scalar register, ssrc: 8-bit scalar source,
    src: 9-bit source, vdst/vsrc: 8-bit VGPR, simm: 16-bit immediate, off:
    signed offset printed as an operand, imm: other immediate), and the
    register-number scale (SMEM sbase and buffer resources count in pairs
    or quads)."""

    def __init__(self, name, lo, width, base, alt, kind, scale=1):
        self.name, self.lo, self.width, self.base, self.alt, self.kind = name, lo, width, base, alt, kind
        self.scale = scale

    @property
    def mask(self):
        return ((1 << self.width) - 1) << self.lo


class Enc:
    """An encoding: prefix (lo, width, value), opcode field (lo, width),
    operand fields, size in dwords, extra fixed fields (lo, width, value),
    modifier bit positions, base operand values to try."""

    def __init__(self, name, dwords, prefix, op, fields, fixed=(), modpos=(), bases=({},),
                 ops=None, types_from=None, part=None, preds=()):
        self.name, self.dwords, self.prefix, self.op, self.part = name, dwords, prefix, op, part
        # Variant predicates (field, value, other value): LLVM has separate
        # instructions for each combination (e.g. SMEM with/without an SGPR
        # offset); rows are learned per combination, numbered by the bits
        # of the predicates that hold.
        self.preds = list(preds)
        self.fields, self.fixed, self.modpos, self.bases = fields, list(fixed), list(modpos), bases
        self.ops = ops if ops is not None else range(1 << op[1])
        self.types_from = types_from

    def raw(self, op, vals):
        lo, w, v = self.prefix
        x = v << lo | op << self.op[0]
        for (flo, fw, fv) in self.fixed:
            x |= fv << flo
        for f in self.fields:
            x |= (vals.get(f.name, f.base) & ((1 << f.width) - 1)) << f.lo
        return x | vals.get('_or', 0)

    def words(self, x, lit=LIT):
        return tuple((x >> (32 * i)) & 0xffffffff for i in range(self.dwords)) + (lit, 0x55667788, 0)[:4 - self.dwords]

    def word(self, op, vals, lit=LIT):
        return self.words(self.raw(op, vals), lit)

    def fixed_mask(self):
        lo, w, _ = self.prefix
        m = ((1 << w) - 1) << lo | ((1 << self.op[1]) - 1) << self.op[0]
        for (flo, fw, _) in self.fixed:
            m |= ((1 << fw) - 1) << flo
        return m


def F(*a):
    return Field(*a)


SDST = F('sdst', 16, 7, 5, 9, 'sdst')
SOP2 = Enc('sop2', 1, (30, 2, 0b10), (23, 7), [SDST, F('ssrc1', 8, 8, 2, 6, 'ssrc'), F('ssrc0', 0, 8, 3, 7, 'ssrc')],
           bases=({}, {'sdst': 4, 'ssrc0': 4, 'ssrc1': 4}), ops=[o for o in range(128) if o >> 5 != 0b11])
SOPK = Enc('sopk', 1, (28, 4, 0b1011), (23, 5), [SDST, F('simm16', 0, 16, 0x1234, 0x21, 'simm')],
           bases=({}, {'sdst': 4}))
SOP1 = Enc('sop1', 1, (23, 9, 0x17d), (8, 8), [SDST, F('ssrc0', 0, 8, 3, 7, 'ssrc')],
           bases=({}, {'sdst': 4, 'ssrc0': 4}, {'ssrc0': 0}, {'sdst': 0}, {'sdst': 0, 'ssrc0': 0},
                  {'ssrc0': 0x80, 'sdst': 0x7c}))
SOPC = Enc('sopc', 1, (23, 9, 0x17e), (16, 7), [F('ssrc1', 8, 8, 2, 6, 'ssrc'), F('ssrc0', 0, 8, 3, 7, 'ssrc')],
           bases=({}, {'ssrc0': 4, 'ssrc1': 4}))
SOPP = Enc('sopp', 1, (23, 9, 0x17f), (16, 7), [F('simm16', 0, 16, 0x1234, 0x21, 'simm')],
           bases=({}, {'simm16': 0}))

VDST32 = F('vdst', 17, 8, 3, 7, 'vdst')
VSRC1 = F('vsrc1', 9, 8, 2, 6, 'vsrc')
SRC0 = F('src0', 0, 9, 257, 261, 'src')
VOP2 = Enc('vop2', 1, (31, 1, 0), (25, 6), [VDST32, VSRC1, SRC0], ops=range(0x3e))
VOP1 = Enc('vop1', 1, (25, 7, 0x3f), (9, 8), [VDST32, SRC0], bases=({}, {'vdst': 0, 'src0': 0}))
VOPC = Enc('vopc', 1, (25, 7, 0x3e), (17, 8), [VSRC1, SRC0])

VOP3_FIELDS = [F('vdst', 0, 8, 3, 7, 'vdst'), F('sdst3', 8, 7, 5, 9, 'sdst'),
               F('src0', 32, 9, 257, 261, 'src'), F('src1', 41, 9, 258, 262, 'src'),
               F('src2', 50, 9, 260, 264, 'src')]
VOP3P_FIELDS = [f for f in VOP3_FIELDS if f.name != 'sdst3']
VOP3_BASES = ({}, {'src2': 0}, {'src1': 0, 'src2': 0}, {'src0': 0, 'src1': 0, 'src2': 0},
              {'vdst': 0, 'src0': 0, 'src1': 0, 'src2': 0}, {'sdst3': 0}, {'sdst3': 0, 'src2': 0},
              {'sdst3': 0, 'src1': 0, 'src2': 0}, {'src0': 256, 'src1': 264, 'src2': 272, 'vdst': 8},
              {'src0': 256, 'src1': 260, 'src2': 264, 'vdst': 8})
# Packed (VOP3P) bases also with op_sel_hi set, which some opcodes require.
OPSEL_HI = 1 << 14 | 3 << 59
VOP3P_BASES = VOP3_BASES + tuple(dict(b, _or=OPSEL_HI) for b in VOP3_BASES) + (
    {'src0': 264, 'src1': 268, 'src2': 256, 'vdst': 0, '_or': OPSEL_HI},
    {'src0': 264, 'src1': 272, 'src2': 276, 'vdst': 0, '_or': OPSEL_HI},
    {'src0': 264, 'src1': 265, 'src2': 256, 'vdst': 0, '_or': OPSEL_HI})
MODPOS = [8, 9, 10, 11, 12, 13, 14, 15, 59, 60, 61, 62, 63]
VOP3 = Enc('vop3', 2, (26, 6, 0b110101), (16, 10), VOP3_FIELDS, modpos=MODPOS, bases=VOP3_BASES)
VOP3P = Enc('vop3p', 2, (24, 8, 0xcc), (16, 7), VOP3P_FIELDS, modpos=MODPOS, bases=VOP3P_BASES)

# DPP forms. DPP16: src0 = 250 and a control dword (src0 VGPR in 7:0,
# dpp_ctrl 16:8 = quad_perm:[0,1,2,3], row/bank masks 0xf); DPP8: src0 = 233
# and a dword of lane selects.
DSRC0 = F('dsrc0', 32, 8, 3, 5, 'vsrc')
DPP16_CTRL = [(40, 9, 0xe4), (56, 8, 0xff)]
DPP8_SEL = (40, 24, 0xfac688)
DPP16_MODS = [52, 53, 54, 55]
DPP16_MODS3 = MODPOS + [84, 85, 86, 87]
VOP2_DPP16 = Enc('vop2_dpp16', 2, (31, 1, 0), (25, 6), [VDST32, VSRC1, DSRC0], fixed=[(0, 9, 250)] + DPP16_CTRL,
                 modpos=DPP16_MODS, ops=range(0x3e), types_from='vop2')
VOP2_DPP8 = Enc('vop2_dpp8', 2, (31, 1, 0), (25, 6), [VDST32, VSRC1, DSRC0], fixed=[(0, 9, 233), DPP8_SEL],
                ops=range(0x3e), types_from='vop2')
VOP1_DPP16 = Enc('vop1_dpp16', 2, (25, 7, 0x3f), (9, 8), [VDST32, DSRC0], fixed=[(0, 9, 250)] + DPP16_CTRL,
                 modpos=DPP16_MODS, types_from='vop1', bases=({}, {'vdst': 0}))
VOP1_DPP8 = Enc('vop1_dpp8', 2, (25, 7, 0x3f), (9, 8), [VDST32, DSRC0], fixed=[(0, 9, 233), DPP8_SEL],
                types_from='vop1', bases=({}, {'vdst': 0}))
VOPC_DPP16 = Enc('vopc_dpp16', 2, (25, 7, 0x3e), (17, 8), [VSRC1, DSRC0], fixed=[(0, 9, 250)] + DPP16_CTRL,
                 modpos=DPP16_MODS, types_from='vopc')
VOPC_DPP8 = Enc('vopc_dpp8', 2, (25, 7, 0x3e), (17, 8), [VSRC1, DSRC0], fixed=[(0, 9, 233), DPP8_SEL],
                types_from='vopc')

D3SRC0 = F('dsrc0', 64, 8, 1, 5, 'vsrc')
VOP3_DPP_FIELDS = [f for f in VOP3_FIELDS if f.name != 'src0'] + [D3SRC0]
VOP3P_DPP_FIELDS = [f for f in VOP3P_FIELDS if f.name != 'src0'] + [D3SRC0]
VOP3_DPP16 = Enc('vop3_dpp16', 3, (26, 6, 0b110101), (16, 10), VOP3_DPP_FIELDS,
                 fixed=[(32, 9, 250), (72, 9, 0xe4), (88, 8, 0xff)], modpos=DPP16_MODS3, bases=VOP3_BASES,
                 types_from='vop3')
VOP3_DPP8 = Enc('vop3_dpp8', 3, (26, 6, 0b110101), (16, 10), VOP3_DPP_FIELDS,
                fixed=[(32, 9, 233), (72, 24, 0xfac688)], modpos=MODPOS, bases=VOP3_BASES, types_from='vop3')
VOP3P_DPP16 = Enc('vop3p_dpp16', 3, (24, 8, 0xcc), (16, 7), VOP3P_DPP_FIELDS,
                  fixed=[(32, 9, 250), (72, 9, 0xe4), (88, 8, 0xff)], modpos=DPP16_MODS3, bases=VOP3P_BASES,
                  types_from='vop3p')
VOP3P_DPP8 = Enc('vop3p_dpp8', 3, (24, 8, 0xcc), (16, 7), VOP3P_DPP_FIELDS,
                 fixed=[(32, 9, 233), (72, 24, 0xfac688)], modpos=MODPOS, bases=VOP3P_BASES, types_from='vop3p')

# VOPD: one row per component opcode, learned with the other component a
# v_dual_mov_b32. X: op 25:22, src0 8:0, vsrc1 16:9, vdst 63:56. Y: op
# 21:17, src0 40:32, vsrc1 48:41, vdst 55:49 (its bit 0 is the inverse of
# vdstX's).
VOPDX = Enc('vopdx', 2, (26, 6, 0b110010), (22, 4),
            [F('srcx0', 0, 9, 257, 261, 'src'), F('vsrcx1', 9, 8, 2, 6, 'vsrc'), F('vdstx', 56, 8, 4, 6, 'vdst')],
            fixed=[(17, 5, 8), (32, 9, 266), (41, 8, 0), (49, 7, 3)], part=0,
            bases=({}, {'vsrcx1': 0}, {'srcx0': 0}))
VOPDY = Enc('vopdy', 2, (26, 6, 0b110010), (17, 5),
            [F('srcy0', 32, 9, 257, 261, 'src'), F('vsrcy1', 41, 8, 2, 6, 'vsrc'), F('vdsty', 49, 7, 3, 5, 'vdst')],
            fixed=[(22, 4, 8), (0, 9, 266), (9, 8, 0), (56, 8, 4)], part=1,
            bases=({}, {'vsrcy1': 0}, {'srcy0': 0}))

# SMEM. gfx11: sbase 5:0 (pairs), sdata 12:6, dlc 13, glc 14, op 25:18;
# offset 52:32 (signed 21), soffset 63:57. gfx12: op 18:13, scope 22:21,
# th 24:23; offset 55:32 (signed 24). Variants: soffset null, offset 0.
SMEM_FIELDS = [F('sdata', 6, 7, 5, 9, 'sdst'), F('sbase', 0, 6, 1, 3, 'sdst', 2),
               F('soffset', 57, 7, 7, 9, 'sdst')]
SMEM11 = Enc('smem', 2, (26, 6, 0b111101), (18, 8), SMEM_FIELDS + [F('offset', 32, 21, 0x10, 0x20, 'off')],
             preds=[('soffset', 124, 7), ('offset', 0, 0x10)], bases=({}, {'sbase': 2}, {'sdata': 4}),
             modpos=[13, 14])
SMEM12 = Enc('smem', 2, (26, 6, 0b111101), (13, 6), SMEM_FIELDS + [F('offset24', 32, 24, 0x10, 0x20, 'off')],
             preds=[('soffset', 124, 7)], bases=({}, {'sbase': 2}, {'sdata': 4}), modpos=[21, 22, 23, 24])

# DS: offset0 7:0, offset1 15:8, gds 17 (gfx11), op 25:18; addr 39:32,
# data0 47:40, data1 55:48, vdst 63:56. Offsets print as modifiers.
DS = Enc('ds', 2, (26, 6, 0b110110), (18, 8),
         [F('vdst', 56, 8, 3, 7, 'vdst'), F('addr', 32, 8, 1, 5, 'vsrc'), F('data0', 40, 8, 4, 8, 'vsrc'),
          F('data1', 48, 8, 12, 16, 'vsrc')],
         bases=({'_or': 0x0201}, {'_or': 0x0201, 'vdst': 0}, {'_or': 0x0201, 'data1': 0},
                {'_or': 0x0201, 'vdst': 0, 'data1': 0}, {'_or': 0x0201, 'data0': 0, 'data1': 0},
                {'_or': 0x0201, 'vdst': 0, 'data0': 0, 'data1': 0}, {}, {'vdst': 0, 'data0': 0, 'data1': 0},
                # ds_append, ds_gws_*, *_addtid_*: unused register fields must be 0
                {'_or': 0x0201, 'addr': 0, 'data1': 0}, {'_or': 0x0201, 'addr': 0, 'data0': 0, 'data1': 0},
                {'_or': 0x0201, 'addr': 0, 'vdst': 0, 'data1': 0},
                {'_or': 0x0201, 'addr': 0, 'vdst': 0, 'data0': 0, 'data1': 0},
                # gfx11 ds_gws_*, ds_ordered_count, ds_*_gs_reg_rtn: gds set too
                {'_or': 0x20201, 'addr': 0, 'data1': 0}, {'_or': 0x20201, 'addr': 0, 'data0': 0, 'data1': 0},
                {'_or': 0x20201, 'data1': 0}, {'_or': 0x20201}, {'_or': 0x20201, 'addr': 0, 'vdst': 0, 'data1': 0},
                {'_or': 0x20201, 'addr': 0, 'vdst': 0, 'data0': 0, 'data1': 0}),
         modpos=[17])

# gfx11 FLAT/GLOBAL/SCRATCH: offset 12:0, dlc 13, glc 14, slc 15, segment
# 17:16, op 24:18; addr 39:32, data 47:40, saddr 54:48, sve 55, vdst 63:56.
# Variants: saddr null, glc (atomics return), sve (scratch VGPR address).
FLAT_FIELDS = [F('vdst', 56, 8, 3, 7, 'vdst'), F('addr', 32, 8, 1, 5, 'vsrc'), F('data0', 40, 8, 4, 8, 'vsrc'),
               F('saddr', 48, 7, 2, 6, 'sdst'), F('glc', 14, 1, 1, 0, 'imm'), F('sve', 55, 1, 1, 0, 'imm')]
FLAT_PREDS = [('saddr', 124, 2), ('glc', 1, 0), ('sve', 1, 0)]
FLAT_BASES = ({'_or': 0x10}, {'_or': 0x10, 'vdst': 0}, {'_or': 0x10, 'data0': 0}, {'_or': 0x10, 'vdst': 0, 'data0': 0},
              {}, {'vdst': 0}, {'data0': 0}, {'vdst': 0, 'data0': 0})
FLAT11 = [Enc('flat%d' % seg, 2, (26, 6, 0b110111), (18, 7), FLAT_FIELDS, fixed=[(16, 2, seg)], preds=FLAT_PREDS,
              bases=FLAT_BASES, modpos=[13, 15]) for seg in range(3)]

# gfx12 VFLAT/VGLOBAL/VSCRATCH: saddr 6:0, op 21:14, segment 25:24; vdst
# 39:32, sve 49, scope 51:50, th 54:52, data 62:55; vaddr 71:64, offset
# 95:72. Variants: saddr null, th bit 0 (atomics return), sve.
VFLAT_FIELDS = [F('vdst12', 32, 8, 3, 7, 'vdst'), F('vaddr', 64, 8, 1, 5, 'vsrc'), F('vdata', 55, 8, 4, 8, 'vsrc'),
                F('saddr12', 0, 7, 2, 6, 'sdst'), F('th0', 52, 1, 1, 0, 'imm'), F('sve12', 49, 1, 1, 0, 'imm')]
VFLAT_PREDS = [('saddr12', 124, 2), ('th0', 1, 0), ('sve12', 1, 0)]
VFLAT_BASES = tuple(dict({k.replace('vdst', 'vdst12').replace('data0', 'vdata'): v for k, v in b.items()},
                         **({'_or': 0x10 << 72} if '_or' in b else {})) for b in FLAT_BASES)
VFLAT = [Enc('vflat%d' % seg, 3, (26, 6, 0b111011), (14, 8), VFLAT_FIELDS, fixed=[(24, 2, seg)], preds=VFLAT_PREDS,
             bases=VFLAT_BASES, modpos=[50, 51, 53, 54]) for seg in range(3)]

# gfx11 MUBUF: offset 11:0, slc 12, dlc 13, glc 14, op 25:18; vaddr 39:32,
# vdata 47:40, srsrc 52:48 (quads), tfe 53, offen 54, idxen 55, soffset
# 63:56. MTBUF: op 18:15, format 25:19. Variants: offen, idxen, tfe, glc.
BUF_FIELDS = [F('vdata11', 40, 8, 1, 5, 'vsrc'), F('vaddr11', 32, 8, 2, 6, 'vsrc'), F('srsrc', 48, 5, 1, 2, 'sdst', 4),
              F('soffset8', 56, 8, 3, 7, 'ssrc'), F('offen', 54, 1, 1, 0, 'imm'), F('idxen', 55, 1, 1, 0, 'imm'),
              F('tfe', 53, 1, 1, 0, 'imm'), F('glc', 14, 1, 1, 0, 'imm')]
BUF_PREDS = [('offen', 1, 0), ('idxen', 1, 0), ('tfe', 1, 0), ('glc', 1, 0)]
BUF_BASES = ({'_or': 0x10}, {'_or': 0x10, 'vdata11': 0}, {}, {'vdata11': 0})
MUBUF11 = Enc('mubuf', 2, (26, 6, 0b111000), (18, 8), BUF_FIELDS, preds=BUF_PREDS, bases=BUF_BASES, modpos=[12, 13])
MTBUF11 = Enc('mtbuf', 2, (26, 6, 0b111010), (15, 4), BUF_FIELDS, preds=BUF_PREDS, modpos=[12, 13],
              bases=tuple(dict(b, _or=b.get('_or', 0) | 1 << 19) for b in BUF_BASES))

# gfx12 VBUFFER: soffset 6:0, op 21:14, tfe 22; vdata 39:32, rsrc 47:41,
# scope 51:50, th 54:52, format 61:55, offen 62, idxen 63; vaddr 71:64,
# offset 95:72. Variants: offen, idxen, tfe, th bit 0.
VBUF_FIELDS = [F('vdata12', 32, 8, 1, 5, 'vsrc'), F('vaddr', 64, 8, 2, 6, 'vsrc'), F('rsrc', 41, 7, 4, 8, 'sdst'),
               F('soffset7', 0, 7, 3, 7, 'sdst'), F('offen12', 62, 1, 1, 0, 'imm'), F('idxen12', 63, 1, 1, 0, 'imm'),
               F('tfe12', 22, 1, 1, 0, 'imm'), F('th0', 52, 1, 1, 0, 'imm')]
VBUF_PREDS = [('offen12', 1, 0), ('idxen12', 1, 0), ('tfe12', 1, 0), ('th0', 1, 0)]
VBUFFER = Enc('vbuffer', 3, (26, 6, 0b110001), (14, 8), VBUF_FIELDS, preds=VBUF_PREDS, modpos=[50, 51, 53, 54],
              bases=({'_or': 0x10 << 72 | 1 << 55}, {'_or': 0x10 << 72 | 1 << 55, 'vdata12': 0}, {'_or': 1 << 55},
                     {'_or': 1 << 55, 'vdata12': 0}))

# VINTERP: vdst 7:0, wait_exp 10:8, op_sel 14:11, clamp 15, op 22:16; src0
# 40:32, src1 49:41, src2 58:50, neg 63:61.
VINTERP = Enc('vinterp', 2, (24, 8, 0xcd), (16, 7), VOP3P_FIELDS, modpos=MODPOS, bases=VOP3_BASES)
# LDSDIR (gfx12 VDSDIR): vdst 7:0, attr channel 9:8, attr 15:10, wait_vdst
# (gfx12 wait_va_vdst) 19:16, op 21:20, gfx12 wait_vm_vsrc 23.
LDSDIR = Enc('ldsdir', 1, (24, 8, 0xce), (20, 2), [F('vdst', 0, 8, 3, 7, 'vdst')], modpos=[16, 17, 18, 19, 23])

# Images. gfx11 MIMG: nsa 0, dim 4:2, unorm 7, dmask 11:8, slc 12, dlc 13,
# glc 14, r128 15, a16 16, d16 17, op 25:18; vaddr 39:32, vdata 47:40,
# srsrc 52:48 (quads), tfe 53, lwe 54, ssamp 62:58 (quads); with nsa, one
# more dword holds vaddr1..4. gfx12 VIMAGE: dim 2:0, r128 4, d16 5, a16 6,
# op 21:14, dmask 25:22; vdata 39:32, rsrc 49:41 (9-bit), scope 51:50, th
# 54:52, tfe 55, vaddr4 63:56; vaddr0..3 in the third dword. VSAMPLE: tfe 3,
# unorm 13, lwe 40, samp 63:55 (9-bit), no vaddr4.
MIMG11 = Enc('mimg', 2, (26, 6, 0b111100), (18, 8),
             [F('vdata11', 40, 8, 1, 5, 'vsrc'), F('vaddr11', 32, 8, 2, 6, 'vsrc'), F('srsrc', 48, 5, 1, 2, 'sdst', 4),
              F('ssamp', 58, 5, 3, 2, 'sdst', 4), F('nsa', 0, 1, 1, 0, 'imm')],
             preds=[('nsa', 1, 0)], bases=({'_or': 1 << 2 | 0xf << 8}, {'_or': 1 << 2 | 0xf << 8, 'ssamp': 0}),
             modpos=[7, 12, 13, 14, 15, 16, 17, 53, 54])
IMG12_VADDR = [F('vaddr', 64, 8, 2, 6, 'vsrc'), F('vaddr1', 72, 8, 10, 14, 'vsrc'), F('vaddr2', 80, 8, 11, 15, 'vsrc'),
               F('vaddr3', 88, 8, 12, 16, 'vsrc')]
VIMAGE = Enc('vimage', 3, (26, 6, 0b110100), (14, 8),
             [F('vdata12', 32, 8, 1, 5, 'vsrc'), F('rsrc9', 41, 9, 4, 8, 'src')] + IMG12_VADDR
             + [F('vaddr4', 56, 8, 13, 17, 'vsrc')],
             bases=({'_or': 1 | 0xf << 22}, {'_or': 1 | 0xf << 22, 'vaddr4': 0},
                    {'_or': 1 | 0xf << 22, 'vaddr4': 0, 'vaddr3': 0},
                    {'_or': 1 | 0xf << 22, 'vaddr4': 0, 'vaddr3': 0, 'vaddr2': 0},
                    {'_or': 1 | 0xf << 22, 'vaddr4': 0, 'vaddr3': 0, 'vaddr2': 0, 'vaddr1': 0}),
             modpos=[4, 5, 6, 50, 51, 52, 53, 54, 55])
VSAMPLE = Enc('vsample', 3, (26, 6, 0b111001), (14, 8),
              [F('vdata12', 32, 8, 1, 5, 'vsrc'), F('rsrc9', 41, 9, 4, 8, 'src'), F('samp9', 55, 9, 12, 16, 'src')]
              + IMG12_VADDR,
              bases=tuple(dict(b, **s) for s in ({}, {'samp9': 0}) for b in (
                  {'_or': 1 | 0xf << 22}, {'_or': 1 | 0xf << 22, 'vaddr3': 0},
                  {'_or': 1 | 0xf << 22, 'vaddr3': 0, 'vaddr2': 0},
                  {'_or': 1 | 0xf << 22, 'vaddr3': 0, 'vaddr2': 0, 'vaddr1': 0})),
              modpos=[3, 4, 5, 6, 13, 40, 50, 51, 52, 53, 54])
IMAGE_ENCS = ('mimg', 'vimage', 'vsample')

# gfx90a and gfx942 (CDNA2/CDNA3, GFX9 family; wave64 only). The SOP*, VOP1/VOP2/VOPC
# words are laid out as on gfx11. VOP3 (VOP3A/VOP3B): prefix 31:26 =
# 110100, op 25:16; the opcodes from 0x380 up are VOP3P's prefix (31:23 =
# 110100111, op 22:16). Field positions and modifier bits as gfx11's.
VOP3_9 = Enc('vop3', 2, (26, 6, 0b110100), (16, 10), VOP3_FIELDS, modpos=MODPOS, bases=VOP3_BASES,
             ops=range(0x380))
VOP3P_9 = Enc('vop3p', 2, (23, 9, 0x1a7), (16, 7), VOP3P_FIELDS, modpos=MODPOS, bases=VOP3P_BASES)
# GFX9 SMEM: sbase 5:0 (pairs), sdata 12:6, soe 14, nv 15, glc 16, imm 17,
# op 25:18; offset 52:32 (21 bits), soffset 63:57 (with soe). With imm=1
# the offset is an immediate (variants: soe, offset 0); with imm=0 and
# soe=0 the offset field's low bits name an SGPR (the plain row).
SMEM9 = Enc('smem', 2, (26, 6, 0b110000), (18, 8),
            SMEM_FIELDS + [F('offset', 32, 21, 0x10, 0x20, 'off'), F('soe', 14, 1, 1, 0, 'imm')],
            fixed=[(17, 1, 1)], preds=[('soe', 1, 0), ('offset', 0, 0x10)],
            bases=({}, {'sbase': 2}, {'sdata': 4}), modpos=[15, 16])
SMEM9S = Enc('smem', 2, (26, 6, 0b110000), (18, 8),
             [F('sdata', 6, 7, 5, 9, 'sdst'), F('sbase', 0, 6, 1, 3, 'sdst', 2), F('soffsetlo', 32, 7, 7, 9, 'sdst')],
             fixed=[(17, 1, 0), (14, 1, 0)], bases=({}, {'sbase': 2}, {'sdata': 4}), modpos=[15, 16])
# GFX9 DS: offset0 7:0, offset1 15:8, gds 16, op 24:17, acc 25 (gfx90a+);
# addr 39:32, data0 47:40, data1 55:48, vdst 63:56.
DS9 = Enc('ds', 2, (26, 6, 0b110110), (17, 8), DS.fields,
          bases=tuple(dict(b, _or=(b['_or'] & 0xffff) | (0x10000 if b['_or'] >> 17 & 1 else 0)) if '_or' in b else b
                      for b in DS.bases),
          modpos=[16])
# GFX9 FLAT/GLOBAL/SCRATCH (gfx940 names): offset 12:0, sve 13 (scratch
# VGPR address), segment 15:14, sc0 16, nt 17, op 24:18, sc1 25; addr
# 39:32, data 47:40, saddr 54:48 (0x7f is off), acc 55, vdst 63:56.
# gfx90a names the same three cache-policy bits glc 16, slc 17, scc 25
# (LLVM's FLATInstructions.td `cpol` operand, printed by
# AMDGPUInstPrinter::printCPol per subtarget).
# Variants: saddr off, sc0 (atomics return), sve. FLAT takes only
# saddr 0 (the other variant's value there).
FLAT9_FIELDS = [F('vdst', 56, 8, 3, 7, 'vdst'), F('addr', 32, 8, 1, 5, 'vsrc'), F('data0', 40, 8, 4, 8, 'vsrc'),
                F('saddr', 48, 7, 2, 6, 'sdst'), F('glc', 16, 1, 1, 0, 'imm'), F('sve', 13, 1, 1, 0, 'imm')]
FLAT9 = [Enc('flat%d' % seg, 2, (26, 6, 0b110111), (18, 7), FLAT9_FIELDS, fixed=[(14, 2, seg)],
             preds=[('saddr', 0x7f, 0 if seg == 0 else 2), ('glc', 1, 0), ('sve', 1, 0)], bases=FLAT_BASES,
             modpos=[16, 17, 25])
         for seg in range(3)]
# GFX9 MUBUF: offset 11:0, offen 12, idxen 13, glc 14, scc 15 (gfx90a;
# sc0 14, sc1 15 on gfx940+), lds 16, slc 17 (nt on gfx940+), op 24:18;
# vaddr 39:32, vdata 47:40, srsrc 52:48 (quads), acc 55, soffset 63:56
# (LLVM's BUFInstructions.td MUBUF_Real_gfx90a / MUBUF_Real_gfx940).
# Variants: offen, idxen, glc (atomics return), lds (LLVM's separate
# *_LDS opcodes: no vdata, ` lds` printed last). gfx90a kernels reach
# scratch through it (buffer_load/store_dword ... offen).
BUF9_FIELDS = [F('vdata11', 40, 8, 1, 5, 'vsrc'), F('vaddr11', 32, 8, 2, 6, 'vsrc'),
               F('srsrc', 48, 5, 1, 2, 'sdst', 4), F('soffset8', 56, 8, 3, 7, 'ssrc'),
               F('offen', 12, 1, 1, 0, 'imm'), F('idxen', 13, 1, 1, 0, 'imm'), F('glc', 14, 1, 1, 0, 'imm'),
               F('lds', 16, 1, 1, 0, 'imm')]
MUBUF9 = Enc('mubuf', 2, (26, 6, 0b111000), (18, 7), BUF9_FIELDS,
             preds=[('offen', 1, 0), ('idxen', 1, 0), ('glc', 1, 0), ('lds', 1, 0)], bases=BUF_BASES,
             modpos=[15, 17])
ENCODINGS9 = [SOP2, SOPK, SOP1, SOPC, SOPP, VOP2, VOP1, VOPC, VOP3_9, VOP3P_9, SMEM9, SMEM9S, DS9] + FLAT9 + [MUBUF9]

ENCODINGS = [SOP2, SOPK, SOP1, SOPC, SOPP, VOP2, VOP1, VOPC, VOP3, VOP3P, VOPDX, VOPDY, DS, VINTERP, LDSDIR,
             VOP2_DPP16, VOP2_DPP8, VOP1_DPP16, VOP1_DPP8, VOPC_DPP16, VOPC_DPP8,
             VOP3_DPP16, VOP3_DPP8, VOP3P_DPP16, VOP3P_DPP8]


# ---------------------------------------------------------------- learning

class Row:
    def __init__(self, enc, op, base, text, nbytes):
        self.enc, self.op, self.base, self.text, self.nbytes = enc, op, base, text, nbytes
        self.mn, self.ops, _ = split_ops(text)
        self.roles = [None] * len(self.ops)
        self.types = [None] * len(self.ops)
        self.mask = self.val = self.mods = self.sext = 0
        # wave64 fixed and modifier bits where they differ (WMMA/SWMMAC)
        self.w64 = None
        self.flags = set()
        self.combo = None


def view(enc, text):
    """The part of an instruction's text a row describes (one component of
    a VOPD pair)."""
    if enc.part is None:
        return text
    parts = text.split(' :: ')
    return parts[enc.part] if len(parts) == 2 else ''


def combo_base(enc, combo, b):
    b = dict(b)
    for i, (name, val, other) in enumerate(enc.preds):
        b[name] = val if combo >> i & 1 else other
    return b


def discover(cpu, enc):
    """One Row per opcode (and variant) that some base decodes to a single
    instruction of the encoding's size (with or without a literal)."""
    qs = [(op, c, combo_base(enc, c, b)) for op in enc.ops for c in range(1 << len(enc.preds))
          for b in enc.bases]
    res = MC.run(cpu, False, [enc.word(op, b) for op, c, b in qs])
    rows = {}
    for (op, c, b), r in zip(qs, res):
        if (op, c) in rows or r is None:
            continue
        text, n = r
        if n not in (enc.dwords * 4, enc.dwords * 4 + 4):
            continue
        rows[(op, c)] = Row(enc, op, b, view(enc, text), n)
        rows[(op, c)].combo = c
        tail = split_ops(view(enc, text))[2]
        if 'offset:swizzle(' in tail:
            rows[(op, c)].flags.add('z')
        elif 'offset:' in tail:
            # an offset printed as a modifier after the operands
            rows[(op, c)].flags.add('o')
        if 'offset0:' in tail:
            rows[(op, c)].flags.add('2')
    return [rows[k] for k in sorted(rows)]


def pred_holds(row, name):
    """Whether a variant predicate on field `name` holds in this row (such
    a field keeps its value while roles are probed)."""
    for i, (pname, _, _) in enumerate(row.enc.preds):
        if pname == name:
            return row.combo >> i & 1 != 0
    return False


def find_roles(cpu, rows):
    qs = [(row, f) for row in rows for f in row.enc.fields if not pred_holds(row, f.name)]
    res = MC.run(cpu, False, [row.enc.word(row.op, dict(row.base, **{f.name: f.alt})) for row, f in qs])
    for (row, f), r in zip(qs, res):
        if r is None:
            continue
        mn, ops, _ = split_ops(view(row.enc, r[0]))
        if mn != row.mn or len(ops) != len(row.ops):
            continue
        for i, (a, c) in enumerate(zip(row.ops, ops)):
            if bare(a) != bare(c) and row.roles[i] is None:
                row.roles[i] = f


SIMM_STYLES = {
    ('0x21', '0x1234', '0xffff', '0x8000', '0x40', '0x41', '0x0'): 'hex',
    ('33', '0x1234', '0xffff', '0x8000', '64', '0x41', '0'): 'u16',
    ('33', '4660', '65535', '32768', '64', '65', '0'): 'udec',
}
SIMM_PROBES = [0x21, 0x1234, 0xffff, 0x8000, 0x40, 0x41, 0]


def is_num(tok):
    return re.match(r'^-?(0x[0-9a-f]+|[0-9]+)$', tok) is not None


def scalar_like(row, i, f):
    """Sources, and 8-bit destination fields that hold a scalar register
    (v_readfirstlane_b32, v_readlane_b32): LLVM decodes both as sources."""
    if is_num(row.ops[i]):
        return False
    return f.kind in ('src', 'ssrc') or (f.kind == 'vdst' and bare(row.ops[i]).startswith('s'))


def gfx9_class(key):
    """gfx90a/gfx942 VOP3/VOP3P sources take no literal (LLVM rejects source 255
    there; the decoder holds that rule for the target): classify by the
    inline-constant probes alone. The few operands no class fits (MFMA
    sources, v_accvgpr_mov_b32, s_set_gpr_idx_on's mode) print as b32 here,
    which compute code does not meet."""
    if all(x == '-' for x in key[:len(LITS)]):
        for cls in ('b32', 'b64', 'i16'):
            k = next(k for k, v in KNOWN.items() if v == cls)
            if key[len(LITS):] == k[len(LITS):]:
                return cls
    return 'b32'


def find_types(cpu, rows, sigs):
    qs = []
    for row in rows:
        for i, f in enumerate(row.roles):
            if f is None or f.name == 'dsrc0':
                continue
            if f.kind == 'simm':
                for v in SIMM_PROBES:
                    qs.append((row, i, row.enc.word(row.op, dict(row.base, **{f.name: v}))))
            elif f.kind != 'off' and (f.kind == 'imm' or is_num(row.ops[i])):
                for v in (5, 64, 65, (1 << f.width) - 1):
                    qs.append((row, i, row.enc.word(row.op, dict(row.base, **{f.name: v}))))
            elif scalar_like(row, i, f):
                for lit in LITS:
                    qs.append((row, i, row.enc.word(row.op, dict(row.base, **{f.name: 255}), lit)))
                for v in (248, 240):
                    qs.append((row, i, row.enc.word(row.op, dict(row.base, **{f.name: v}))))
    # literal constant operands (no field): probe how the literal prints
    for row in rows:
        for i, f in enumerate(row.roles):
            if f is None and bare(row.ops[i]) == '0x%x' % LIT:
                for lit in LITS:
                    qs.append((row, i, row.enc.word(row.op, row.base, lit)))
    res = MC.run(cpu, False, [q[2] for q in qs])
    got = {}
    for (row, i, _), r in zip(qs, res):
        tok = '-'
        if r is not None:
            ops = split_ops(view(row.enc, r[0]))[1]
            tok = ops[i] if i < len(ops) else '?'
        got.setdefault((id(row), i), []).append(tok)
    for row in rows:
        for i, f in enumerate(row.roles):
            if f is None:
                if (id(row), i) in got:
                    sig = got[(id(row), i)]
                    hexes = all(x == '0x%x' % l for x, l in zip(sig, LITS))
                    row.types[i] = 'k32' if hexes else 'k32.' + KNOWN.get(tuple(sig) + ('0.15915494', '0.5'), 'b32')
                continue
            tok = row.ops[i]
            rk = 'v' if bare(tok).startswith('v') else 's'
            w = reg_width(tok)
            if f.name == 'dsrc0':
                row.types[i] = 'v%d' % w
                continue
            if f.kind == 'simm':
                sig = tuple(got[(id(row), i)])
                row.types[i] = 'imm.' + SIMM_STYLES.get(sig, 'special')
            elif f.kind == 'off':
                row.types[i] = 'off'
            elif f.kind == 'imm' or is_num(tok):
                vals = (5, 64, 65, (1 << f.width) - 1)
                pairs = [(v, x) for v, x in zip(vals, got[(id(row), i)]) if x != '-']
                if all(x == str(v) for v, x in pairs):
                    style = 'udec'
                elif all(x == (str(v) if v <= 64 else '0x%x' % v) for v, x in pairs):
                    style = 'u16'
                elif all(x == '0x%x' % v for v, x in pairs):
                    style = 'hex'
                else:
                    style = 'special'
                if style == 'special':
                    print('unknown immediate style', row.text, pairs, file=sys.stderr)
                row.types[i] = 'imm.' + style
            elif scalar_like(row, i, f):
                sig = got[(id(row), i)]
                if all('/*Invalid immediate*/' in x for x in sig):
                    cls = 'reg'
                elif all(x.startswith('sendmsg(') for x in sig):
                    cls = 'msg'
                else:
                    key = tuple(bare(x) for x in sig)
                    cls = KNOWN.get(key)
                    if cls is None and cpu in GFX9:
                        cls = gfx9_class(key)
                    if cls is None:
                        cls = sigs.setdefault(key, 'T%d' % len(sigs))
                row.types[i] = '%s%d.%s' % ('src' if f.kind == 'src' else rk, w, cls)
            else:
                row.types[i] = '%s%d' % (rk, w)


def find_wave64(cpu, rows):
    """Scalar operands that print as a pair in wave64 are lane masks; vector
    operands whose width changes with the wave size get a /<w64> suffix."""
    res = MC.run(cpu, True, [row.enc.word(row.op, row.base) for row in rows])
    for row, r in zip(rows, res):
        if r is None:
            continue
        mn, ops, _ = split_ops(view(row.enc, r[0]))
        if len(ops) != len(row.ops):
            continue
        for i, (a, b) in enumerate(zip(row.ops, ops)):
            if row.roles[i] is None or row.types[i] is None:
                continue
            wa, wb = reg_width(a), reg_width(b)
            if wa == wb:
                continue
            t = row.types[i]
            if t.startswith('s') and wa == 1 and wb == 2 and row.roles[i].kind in ('sdst', 'ssrc', 'src', 'vdst'):
                row.types[i] = 'mask'
            else:
                row.types[i] = t + '/%d' % wb


def find_fixed(cpu, rows):
    """Bits outside the prefix, opcode and printed fields whose flip makes
    LLVM reject the word; and modifier bits whose flip changes the text."""
    qs = []
    for row in rows:
        enc = row.enc
        used = enc.fixed_mask()
        for f, t in zip(row.roles, row.types):
            # immediate fields are probed too: some values are reserved
            if f is not None and not (t or '').startswith('imm.'):
                used |= f.mask
        for (name, _, _) in enc.preds:
            used |= next(f for f in enc.fields if f.name == name).mask
        base = enc.raw(row.op, row.base)
        for i in range(enc.dwords * 32):
            if not (used >> i) & 1:
                qs.append((row, i, enc.words(base ^ (1 << i))))
    res = MC.run(cpu, False, [q[2] for q in qs])
    for (row, i, _), r in zip(qs, res):
        base = row.enc.raw(row.op, row.base)
        if r is None:
            row.mask |= 1 << i
            row.val |= base & (1 << i)
        elif i in row.enc.modpos and view(row.enc, r[0]) != row.text:
            row.mods |= 1 << i
            if 'sext(' in r[0] and 'sext(' not in row.text:
                row.sext |= 1 << i
            nsrc = sum(1 for f in row.roles if f is not None and f.name in ('src0', 'src1', 'src2', 'dsrc0'))
            if re.search(r' op_sel:\[\d,\d\]', r[0]) and 'op_sel' not in row.text and nsrc != 1:
                # v_permlane16/x16: op_sel:[fi,bc] from the src0/src1 bits
                # (one source prints op_sel:[src0,dst] the ordinary way)
                row.flags.add('p')
            if ', vcc_lo|' in r[0]:
                # gfx12 v_cndmask_b32_dpp: the carry prints inside src1's |...|
                row.flags.add('v')
            if 'index_key' in r[0]:
                # v_swmmac_*: op_sel bits print as index_key:N
                row.flags.add('k')
            if 'byte_sel:' in r[0]:
                # gfx12 v_cvt_sr_fp8/bf8_f32, v_cvt_f32_fp8/bf8: op_sel bits print
                # as byte_sel:N
                row.flags.add('b')
            m = re.search(r' op_sel:\[([\d,]+)\]', r[0])
            if m and row.enc.name.startswith('vop3') and len(m.group(1).split(',')) == 4 and nsrc < 3:
                # v_fmac_f16_e64: op_sel lists the tied src2 as well
                row.flags.add('3')
            if row.enc.name.startswith('vop3p') and i in (8, 9, 10, 61, 62, 63) and 'neg_' not in r[0]:
                # v_fma_mix*: neg_lo/neg_hi print as neg and abs of the source
                row.flags.add('m')
    # Rows whose operand widths change with the wave size (WMMA/SWMMAC) can
    # accept different bits in wave64 (the 8-bit SWMMACs take a two-bit
    # index_key there): the same flips, asked in wave64.
    w64rows = [row for row in rows if any(t and '/' in t for t in row.types)]
    bases = MC.run(cpu, True, [row.enc.words(row.enc.raw(row.op, row.base)) for row in w64rows])
    qs = []
    for row, b in zip(w64rows, bases):
        if b is None:
            continue
        enc = row.enc
        used = enc.fixed_mask()
        for f, t in zip(row.roles, row.types):
            if f is not None and not (t or '').startswith('imm.'):
                used |= f.mask
        for (name, _, _) in enc.preds:
            used |= next(f for f in enc.fields if f.name == name).mask
        base = enc.raw(row.op, row.base)
        row.w64 = [0, 0, 0, view(enc, b[0])]
        for i in range(enc.dwords * 32):
            if not (used >> i) & 1:
                qs.append((row, i, enc.words(base ^ (1 << i))))
    res = MC.run(cpu, True, [q[2] for q in qs])
    for (row, i, _), r in zip(qs, res):
        base = row.enc.raw(row.op, row.base)
        if r is None:
            row.w64[0] |= 1 << i
            row.w64[1] |= base & (1 << i)
        elif i in row.enc.modpos and view(row.enc, r[0]) != row.w64[3]:
            row.w64[2] |= 1 << i
            if 'index_key' in r[0]:
                row.flags.add('k')
    for row in w64rows:
        if row.w64 is not None and row.w64[:3] == [row.mask, row.val, row.mods]:
            row.w64 = None


NOTE = re.compile(r"/\*Invalid register, operand has '([A-Za-z0-9_]+)' register class\*/")


def find_notes(cpu, rows):
    """How each register operand takes a high VGPR (v200) and, for 9-bit
    sources, an SGPR (s5): accepted, rejected (@x / %x), or printed with
    LLVM's "Invalid register" note naming the class (@CLASS / %CLASS); ^CLASS
    when every VGPR gets the note."""
    qs = []
    for row in rows:
        for i, f in enumerate(row.roles):
            if f is None or f.kind not in ('vdst', 'vsrc', 'src'):
                continue
            if not bare(row.ops[i]).startswith('v'):
                if f.kind == 'src' and not is_num(row.ops[i]) and row.types[i] != 'mask':
                    # a scalar operand in a 9-bit field: how a VGPR prints
                    qs.append((row, i, '^', row.enc.word(row.op, dict(row.base, **{f.name: 256 + 8}))))
                continue
            hi = 256 + 200 if f.kind == 'src' else 200
            qs.append((row, i, '@', row.enc.word(row.op, dict(row.base, **{f.name: hi}))))
            if f.kind == 'src':
                qs.append((row, i, '%', row.enc.word(row.op, dict(row.base, **{f.name: 5}))))
    res = MC.run(cpu, False, [q[3] for q in qs])
    for (row, i, mark, _), r in zip(qs, res):
        if mark == '@' and NOTE.search(row.ops[i]):
            # Even the base's low VGPR has the note: every VGPR has it.
            row.types[i] += '^' + NOTE.search(row.ops[i]).group(1)
            continue
        if r is None:
            if mark != '^':
                row.types[i] += mark + 'x'
            continue
        ops = split_ops(view(row.enc, r[0]))[1]
        m = NOTE.search(ops[i]) if i < len(ops) else None
        if m:
            row.types[i] += mark + m.group(1)


SPECIAL = [106, 107, 124, 125, 126, 127, 235, 236, 237, 238, 239, 251, 252, 253, 254]


def find_specials(cpu, rows):
    """What LLVM makes of each special scalar value (vcc_lo, vcc_hi, null,
    m0, exec_lo, exec_hi, src_*) in each scalar-capable operand, in wave32
    and wave64: '.' accepted, 'x' rejected, 'n' printed with the operand's
    "Invalid register" note. Written as ~W32[/W64][:CLASS] over SPECIAL
    ('-' where the field cannot hold the value)."""
    qs = []
    for row in rows:
        for i, f in enumerate(row.roles):
            if f is None or f.kind not in ('sdst', 'ssrc', 'src', 'vdst') or is_num(row.ops[i]):
                continue
            if f.kind == 'vdst' and not bare(row.ops[i]).startswith('s'):
                continue
            for v in SPECIAL:
                if v % f.scale == 0 and v // f.scale < (1 << f.width):
                    for w64 in (False, True):
                        qs.append((row, i, v, w64))
    res = {}
    for w64 in (False, True):
        sel = [q for q in qs if q[3] == w64]
        out = MC.run(cpu, w64, [row.enc.word(row.op, dict(row.base, **{row.roles[i].name: v // row.roles[i].scale}))
                                for row, i, v, _ in sel])
        for q, r in zip(sel, out):
            res[q] = r
    for row in rows:
        for i, f in enumerate(row.roles):
            if f is None or row.types[i] is None:
                continue
            if not any((row, i, v, False) in res for v in SPECIAL):
                continue
            verdicts = []
            classes = []
            for w64 in (False, True):
                cls = set()
                s = ''
                for v in SPECIAL:
                    r = res.get((row, i, v, w64), 'skip')
                    if r == 'skip':
                        s += '-'
                    elif r is None:
                        s += 'x'
                    else:
                        ops = split_ops(view(row.enc, r[0]))[1]
                        m = NOTE.search(ops[i]) if i < len(ops) else None
                        if m:
                            cls.add(m.group(1))
                            s += 'n'
                        else:
                            s += '.'
                verdicts.append(s)
                assert len(cls) <= 1, (row.text, cls)
                classes.append(cls.pop() if cls else '')
            t = '~' + verdicts[0]
            if verdicts[1] != verdicts[0]:
                t += '/' + verdicts[1]
            if classes[0] or classes[1]:
                t += ':' + classes[0]
                if classes[1] != classes[0]:
                    t += '/' + classes[1]
            row.types[i] += t


def encodings(cpu):
    if cpu in GFX9:
        return ENCODINGS9
    g12 = cpu.startswith('gfx12')
    if g12:
        return ENCODINGS + [SMEM12] + VFLAT + [VBUFFER, VIMAGE, VSAMPLE]
    return ENCODINGS + [SMEM11] + FLAT11 + [MUBUF11, MTBUF11, MIMG11]


def learn(cpu):
    sigs = {}
    byname = {}
    allrows = []
    for enc in encodings(cpu):
        rows = discover(cpu, enc)
        byname[enc.name] = rows
        allrows += rows
    find_roles(cpu, allrows)
    find_types(cpu, allrows, sigs)
    find_wave64(cpu, allrows)
    find_notes(cpu, allrows)
    find_specials(cpu, allrows)
    find_fixed(cpu, allrows)
    return allrows, sigs


def fmt_row(row):
    desc = []
    for tok, f, t in zip(row.ops, row.roles, row.types):
        if f is None:
            if t and t.startswith('k32'):
                desc.append(t)
            elif re.match(r'^attr\d+\.[xyzw]$', tok):
                desc.append('attr')
            else:
                desc.append('=' + tok)
        elif row.enc.name in IMAGE_ENCS and f.name.startswith('vdata'):
            desc.append('%s:mdata' % f.name)
        elif row.enc.name in IMAGE_ENCS and f.name.startswith('vaddr'):
            desc.append('%s:maddr' % f.name)
        else:
            # VGPR_16 operands print as v<n>.l / v<n>.h (bit 7 selects the half)
            t16 = '!t' if re.match(r'^-?\|?v\d+\.[lh]', tok) else ''
            desc.append('%s:%s%s' % (f.name, t, t16))
    name = row.enc.name if row.combo is None or not row.enc.preds else '%s:%d' % (row.enc.name, row.combo)
    bits = ['0x%x' % x for x in (row.mask, row.val, row.mods)]
    if row.w64 is not None:
        bits = ['%s/0x%x' % (b, x) for b, x in zip(bits, row.w64[:3])]
    return '%s 0x%x %s %s 0x%x %s %s' % (name, row.op, row.mn, ' '.join(bits), row.sext,
                                         ''.join(sorted(row.flags)) or '-', ' '.join(desc))


# ---------------------------------------------------------------- images

# dmask/d16/tfe settings probed per (dim, a16). LLVM's data size is the
# dmask channels (4 for gather4-style instructions), halved (rounding up)
# with d16, plus one with tfe; the table keeps, per size 1..5, the first
# valid probe of that size.
IMG_PROBES = [(1, 0, 0), (3, 0, 0), (7, 0, 0), (15, 0, 0), (15, 0, 1), (1, 0, 1), (15, 1, 0), (15, 1, 1),
              (1, 1, 0)]


def img_size(dmask, d16, tfe, gather):
    n = 4 if gather else max(bin(dmask).count('1'), 1)
    if d16:
        n = (n + 1) // 2
    return n + tfe
DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'


def img_layout(enc):
    """(dim (lo, width), a16 bit, tfe bit, dmask lo, vdata field, vaddr
    fields) of an image encoding."""
    if enc.name == 'mimg':
        return (2, 3), 16, 53, 8, 'vdata11', ['vaddr11']
    tfe = 55 if enc.name == 'vimage' else 3
    addrs = ['vaddr', 'vaddr1', 'vaddr2', 'vaddr3'] + (['vaddr4'] if enc.name == 'vimage' else [])
    return (0, 3), 6, tfe, 22, 'vdata12', addrs


def img_word(enc, row, dim, a16, dmask, d16, tfe, regs, vdata=1):
    """An image word with the given settings; regs are the address VGPRs
    (gfx11 NSA: the first in the instruction, the rest in the NSA dword)."""
    (dlo, dw), a16b, tfeb, dmlo, vd, addrs = img_layout(enc)
    d16b = 17 if enc.name == 'mimg' else 5
    vals = dict(row.base)
    vals[vd] = vdata
    for name, r in zip(addrs, regs):
        f = next(f for f in enc.fields if f.name == name)
        if not (row.mask >> f.lo) & 1:
            vals[name] = r
    x = enc.raw(row.op, vals)
    x &= ~(((1 << dw) - 1) << dlo | 1 << a16b | 1 << tfeb | 0xf << dmlo | 1 << d16b)
    x |= dim << dlo | a16 << a16b | tfe << tfeb | dmask << dmlo | d16 << d16b
    extra = regs[1] | regs[2] << 8 | regs[3] << 16 | regs[4] << 24 if enc.name == 'mimg' else LIT
    return enc.words(x, extra)


def img_parse(text):
    """(vdata width, [address register widths]) of a printed image
    instruction."""
    ops = split_ops(text)[1]
    vd = reg_width(ops[0])
    a = ops[1]
    if a.startswith('['):
        elems = [e.strip() for e in re.findall(r'v\[\d+:\d+\]|v\d+', a[1:-1])]
        return vd, [reg_width(e) for e in elems]
    return vd, [reg_width(a)]


def img_spec(p):
    vd, va = p
    return DIGITS[vd] + ''.join(DIGITS[w] for w in va)


def learn_images(cpu, rows):
    """Per image row: the printed data/address widths for every dim, a16
    and data size (`imgtab` tables), the largest register each operand's
    initial decode accepts, and what LLVM prints when widening overflows
    v255 (the instruction as first decoded)."""
    rows = [r for r in rows if r.enc.name in IMAGE_ENCS]
    regs = [2, 10, 11, 12, 13]
    qs = []
    for row in rows:
        for dim in range(8):
            for a16 in (0, 1):
                for dm, d16, tfe in IMG_PROBES:
                    qs.append((row, dim, a16, (dm, d16, tfe),
                               img_word(row.enc, row, dim, a16, dm, d16, tfe, regs)))
    res = MC.run(cpu, False, [q[4] for q in qs])
    got = {}
    for (row, dim, a16, p, _), r in zip(qs, res):
        got[(id(row), dim, a16, p)] = img_spec(img_parse(r[0])) if r else 'x'
    tabs = {}
    gathers = {}
    for row in rows:
        # gather4-style when no dim/a16 shows dmask changing the data size
        differs = any(got[(id(row), d, a, (1, 0, 0))] != got[(id(row), d, a, (15, 0, 0))]
                      for d in range(8) for a in (0, 1))
        g = not differs
        gathers[id(row)] = g
        tab = []
        for dim in range(8):
            for a16 in (0, 1):
                for size in range(1, 7):
                    e = 'x'
                    for p in IMG_PROBES:
                        if img_size(*p, g) == size and got[(id(row), dim, a16, p)] != 'x':
                            e = got[(id(row), dim, a16, p)]
                            break
                    tab.append(e)
        tabs[id(row)] = tab
    # validity limits: the largest register each operand accepts
    lim = []
    for row in rows:
        _, _, _, _, vd, addrs = img_layout(row.enc)
        for k in range(1, 17):
            lim.append((row, 'd', k, img_word(row.enc, row, 1, 0, 1, 0, 0, regs, vdata=256 - k)))
            for j in range(5 if row.enc.name == 'mimg' and row.combo else len(addrs)):
                rr = list(regs)
                rr[j] = 256 - k
                lim.append((row, j, k, img_word(row.enc, row, 1, 0, 1, 0, 0, rr)))
    res = MC.run(cpu, False, [q[3] for q in lim])
    best = {}
    for (row, which, k, _), r in zip(lim, res):
        key = (id(row), which)
        if r is not None and key not in best:
            best[key] = k
    out = []
    canon_q = []
    for row in rows:
        tab = tabs[id(row)]
        vdl = best.get((id(row), 'd'), 17)
        n = 5 if row.enc.name == 'mimg' and row.combo else len(img_layout(row.enc)[5])
        wl = [best.get((id(row), j), 17) for j in range(n)]
        row.img = {'vd': vdl, 'w': wl, 'tab': ' '.join(tab)}
        # a setting whose data or an address widens past the decoded
        # width: overflow it to see the instruction as first decoded
        g = gathers[id(row)]
        for i, e in enumerate(tab):
            if e == 'x':
                continue
            ev = DIGITS.index(e[0])
            ea = [DIGITS.index(c) for c in e[1:]]
            dim, rest = divmod(i, 12)
            a16, key = divmod(rest, 6)
            p = next(p for p in IMG_PROBES if img_size(*p, g) == key + 1
                     and got[(id(row), dim, a16, p)] != 'x')
            if ev > vdl:
                canon_q.append((row, img_word(row.enc, row, dim, a16, *p, regs, vdata=256 - vdl)))
                break
            grow = [j for j, w in enumerate(ea) if j < len(wl) and w > wl[j]]
            if grow:
                rr = list(regs)
                rr[grow[0]] = 256 - wl[grow[0]]
                canon_q.append((row, img_word(row.enc, row, dim, a16, *p, rr)))
                break
    res = MC.run(cpu, False, [q[1] for q in canon_q])
    for (row, _), r in zip(canon_q, res):
        row.img['canon'] = img_spec(img_parse(r[0])) if r else 'x'
    for row in rows:
        flags = (('g' if gathers[id(row)] else '') + ('D' if 'dmask:' in row.text else '')
                 + ('M' if 'dim:' in row.text else ''))
        row.img['flags'] = flags or '-'
        row.img['nsa'] = (row.nbytes - row.enc.dwords * 4) // 4 if row.enc.name == 'mimg' else 0
    return rows


def formats(cpu):
    """`fmt VALUE TEXT` lines: how each buffer format value prints after a
    tbuffer instruction's soffset (`-` where it prints nothing)."""
    if cpu in GFX9:
        return []
    if cpu.startswith('gfx12'):
        b = combo_base(VBUFFER, 0, {})
        words = [VBUFFER.words(VBUFFER.raw(0x80, b) | v << 55) for v in range(128)]
    else:
        b = combo_base(MTBUF11, 0, {})
        words = [MTBUF11.words(MTBUF11.raw(0, b) | v << 19) for v in range(128)]
    out = []
    for v, r in zip(range(128), MC.run(cpu, False, words)):
        m = re.search(r' (format:\S+)', r[0]) if r else None
        out.append('fmt %d %s' % (v, m.group(1) if m else '-'))
    return out


def exact_words(cpu):
    """Whole words LLVM decodes as an operandless instruction of their own
    (v_illegal is the all-zero dword): `word 0xWORD NAME`, kept when no
    single-bit flip of the word prints the same mnemonic."""
    out = []
    for w in (0x00000000,):
        res = MC.run(cpu, False, [(w,)] + [(w ^ (1 << i),) for i in range(32)])
        if res[0] is None or res[0][1] != 4:
            continue
        mn, ops, mods = split_ops(res[0][0])
        if ops or mods:
            continue
        if all(r is None or split_ops(r[0])[0] != mn for r in res[1:]):
            out.append('word 0x%x %s' % (w, mn))
    return out


def generate(cpu):
    rows, sigs = learn(cpu)
    learn_images(cpu, rows)
    lines = ['# Generated by isa/tools/gen_tables.py from llvm-mc-19; do not edit.']
    lines += formats(cpu)
    tabs = {}
    for row in rows:
        if getattr(row, 'img', None) and row.img['tab'] not in tabs:
            tabs[row.img['tab']] = len(tabs)
    lines += ['imgtab %d %s' % (i, t) for t, i in tabs.items()]
    for sig, name in sigs.items():
        lines.append('# unknown immediate class %s: %s' % (name, ' | '.join(sig)))
    lines += exact_words(cpu)
    for r in rows:
        lines.append(fmt_row(r))
        if getattr(r, 'img', None):
            name = r.enc.name if not r.enc.preds else '%s:%d' % (r.enc.name, r.combo)
            i = r.img
            lines.append('img %s 0x%x %d %s %s %d %d %s' % (name, r.op, i['vd'], ','.join(map(str, i['w'])),
                                                          i.get('canon', '-'), tabs[i['tab']], i['nsa'],
                                                          i['flags']))
    return '\n'.join(lines) + '\n'


def main():
    check = '--check' in sys.argv
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, '..', 'data')
    bad = []
    only = [a.split('=', 1)[1] for a in sys.argv if a.startswith('--cpu=')]
    for cpu in (only or CPUS):
        text = generate(cpu)
        path = os.path.join(data, cpu + '.txt')
        if check:
            old = open(path).read() if os.path.exists(path) else ''
            if old != text:
                bad.append(path)
        else:
            with open(path, 'w') as f:
                f.write(text)
    if bad:
        print('tables differ from what llvm-mc-19 gives (rerun isa/tools/gen_tables.py): '
              + ', '.join(bad), file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
