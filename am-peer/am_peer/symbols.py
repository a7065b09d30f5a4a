"""Register names for a trace: dword offset -> (block, name), and back.

The names are tinygrad's own (`tinygrad.runtime.autogen.am.regs`, generated
from the Linux asic_reg headers), resolved against the discovery table's
bases exactly as AM's `AMDev._build_regs` resolves them, so a trace line
names the register AM meant. The `reg`/`mm` prefix is dropped to match
barebell's `bringup --trace` names.
"""
from tinygrad.runtime.support.amd import import_module
from . import discovery

# Fixed boot registers (dword offsets used before bases are known:
# `amdgpu_discovery.c`, AMDev._run_discovery/_read_vram).
BOOT = {0x0: "MM_INDEX", 0x1: "MM_DATA", 0x6: "MM_INDEX_HI", 0xde3: "RCC_CONFIG_MEMSIZE"}

def strip(name: str) -> str:
  return name[3:] if name.startswith("reg") else name[2:] if name.startswith("mm") else name

class Symbols:
  def __init__(self, ips: list[discovery.Ip]):
    gc = discovery.find(ips, "GC").version
    # The modules and bases of AMDev._build_regs: MP1 registers come from
    # mp_11_0_0 on MP1's bases, NBIO is "nbif" from gfx12 on.
    # mp_11_0_0 on MP1's bases is listed first so that "MP1_SMN_C2PMSG_66"
    # names the address AM writes; on MP 14.0.x Linux's own header
    # (mp_14_0_2_offset.h: 0x82 at BASE_IDX 1) names another one.
    mods = [("MP1", "mp", "MP1"), ("MP0", "mp", "MP0"), ("HDP", "hdp", "HDP"), ("GC", "gc", "GC"), ("MMHUB", "mmhub", "MMHUB"),
            ("OSSSYS", "osssys", "OSSSYS"), ("NBIO", "nbio" if gc < (12, 0, 0) else "nbif", "NBIF")]
    self.by_dw: dict[int, tuple[str, str]] = {}
    self.by_name: dict[str, int] = {}
    self.fields: dict[str, dict[str, tuple[int, int]]] = {}
    # SDMA 4.4.2 (MI300) has its own register module; on Navi the SDMA
    # registers are in the GC module.
    if gc < (10, 0, 0): mods.append(("SDMA", "sdma", "SDMA0"))
    for block, prefix, hw, ip in ((b, p, h, ip) for b, p, h in mods for ip in discovery.find_all(ips, h)):
      ver = (11, 0, 0) if block == "MP1" else ip.version
      for name, (offset, segment, fields) in import_module(prefix, ver, submod="regs").items():
        if segment >= len(ip.bases): continue
        # Every instance (MI300's XCCs, AIDs, SDMAs), its bases as Linux
        # keeps them (bits 29:0, `amdgpu_discovery_reg_base_init()`):
        # the address the register is reached at.
        dw, short = (ip.bases[segment] & 0x3FFFFFFF) + offset, strip(name)
        if block == "MP1" and not short.startswith("MP1_"): continue  # AM uses only the MP1 mailbox from this module
        blk = "SDMA" if block == "GC" and short.startswith("SDMA") else "MP1" if short.startswith("MP1_") else block
        self.by_dw.setdefault(dw, (blk, short))
        self.by_name.setdefault(short, dw)
        self.fields.setdefault(short, fields)
    for dw, name in BOOT.items():
      self.by_dw.setdefault(dw, ("BOOT", name))
      self.by_name.setdefault(name, dw)

  def name(self, dw: int) -> tuple[str, str] | None: return self.by_dw.get(dw)
  def dw(self, name: str) -> int: return self.by_name[name]
  def field(self, name: str, field: str, value: int) -> int:
    lo, hi = self.fields[name][field]
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)
  def mask(self, name: str, field: str) -> int:
    lo, hi = self.fields[name][field]
    return ((1 << (hi - lo + 1)) - 1) << lo
