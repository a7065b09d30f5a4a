"""The trace recorder.

Register lines follow barebell's `bringup --trace` text (and its defmt form
`W MP0.MP0_SMN_C2PMSG_35 @0x5818c = 0x00080000`): direction, block.name,
BAR5 byte offset, value. Other line kinds:

  ## AM_PSP.init_hw            an AM function was entered (the step it belongs to)
  # psp: LOAD_TOC -> ...        what the backend made of an access (responder notes)
  M VRAM @0x... = 0x...         a host store to VRAM of <= 8 bytes (value shown)
  M VRAM @0x... +0x... sha256:  a larger host store to VRAM (length and digest)
  D BAR2 @0x... = 0x...         a doorbell store
  C CFG @0x.. = 0x.. (n)        a PCI config write of n bytes

Consecutive identical reads of one register (a poll) fold into one line
ending in `(xN)`.

An indirect access (`BIF_BX_PF0_RSMU_INDEX` written with a byte address,
then `BIF_BX_PF0_RSMU_DATA` read or written: AM's `indirect_rreg` /
`indirect_wreg`) is recorded as the access to the register it reaches,
as barebell's trace records its own indirect accesses; both BAR5 writes
still count in `writes`.
"""
import hashlib

class Tracer:
  def __init__(self, symbols=None):
    self.symbols, self.lines, self.writes, self.reads = symbols, [], 0, 0
    self._last_read: tuple[int, int] | None = None
    self._repeat = 0
    self._rsmu: int | None = None  # the byte address RSMU_INDEX holds

  def _flush_read(self):
    if self._repeat > 1: self.lines[-1] += f" (x{self._repeat})"
    self._last_read, self._repeat = None, 0

  def _emit(self, line: str):
    self._flush_read()
    self.lines.append(line)

  def regname(self, dw: int) -> str:
    n = self.symbols.name(dw) if self.symbols else None
    return f"{n[0]}.{n[1]} @{dw * 4:#x}" if n else f"[{dw * 4:#x}]"

  def reg(self, write: bool, dw: int, value: int):
    if write: self.writes += 1
    else: self.reads += 1
    n = self.symbols.name(dw) if self.symbols else None
    if n and n[1] == "BIF_BX_PF0_RSMU_INDEX" and write:
      # The index register holds 32 bits: AM writes `reg * 4` of a base
      # that may carry the AID tag in bits 33:32 (MI300's 64-bit bases),
      # and the register reached is the low 32 bits' (BAR5 stores are
      # 32-bit, pcidev.RegisterBar).
      self._rsmu = value & 0xFFFFFFFF
      return
    if n and n[1] == "BIF_BX_PF0_RSMU_DATA" and self._rsmu is not None:
      dw = self._rsmu // 4
    if not write and self._last_read == (dw, value):
      self._repeat += 1
      return
    self._emit(f"  {'W' if write else 'R'} {self.regname(dw)} = {value:#010x}")
    if not write: self._last_read, self._repeat = (dw, value), 1

  def mem(self, space: str, offset: int, data: bytes):
    if len(data) <= 8: self._emit(f"  M {space} @{offset:#x} = {int.from_bytes(data, 'little'):#x}")
    else: self._emit(f"  M {space} @{offset:#x} +{len(data):#x} sha256:{hashlib.sha256(data).hexdigest()[:16]}")

  def doorbell(self, offset: int, value: int): self._emit(f"  D BAR2 @{offset:#x} = {value:#x}")
  def config(self, offset: int, value: int, size: int): self._emit(f"  C CFG @{offset:#04x} = {value:#x} ({size})")
  def note(self, text: str): self._emit(f"  # {text}")
  def step(self, name: str): self._emit(f"## {name}")

  def text(self) -> str:
    self._flush_read()
    return "\n".join(self.lines) + "\n"
