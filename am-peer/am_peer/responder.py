"""A Python responder: the research stand-in for barebell's VirtualGpu.

It is a register file with a handful of handshakes, enough for AM's
`AMDev(...)` to run to "boot done" and for `AM_GFX.setup_ring` to load an
HQD, and it records which registers AM touched and which it answered with a
rule. It is NOT the model: it executes nothing (no PSP firmware, no CP), and
every value it invents is marked "model value" where it is set. Each rule
cites the Linux 6.12 function (or the tinygrad function) whose wait it
satisfies. Register semantics the responder has no rule for are plain storage;
`unruled()` lists them, which is the raw list behind docs/am-boot.md's "what
the model must learn" table. In strict mode a refused handshake raises.
"""
import mmap, pathlib, re, struct
from tinygrad.runtime.autogen.am import am
from tinygrad.runtime.support.amd import import_module
from . import discovery

MAP_NORESERVE = 0x4000  # <sys/mman.h>; VRAM is sparse: only touched pages cost memory

class Refused(Exception):
  """The responder refuses an access a real part would not accept (strict mode)."""

class Part:
  def __init__(self, name, vram_mib, device_id, tmr_size):
    self.name, self.vram_mib, self.device_id, self.tmr_size = name, vram_mib, device_id, tmr_size

# vram_mib: RX 7900 XTX 24 GiB, RX 9070 XT 16 GiB (barebell_sim::psp PartFirmware,
# the same sizes). device ids: 0x744c (Navi31) and 0x7550 (Navi48) are in
# ops_amd.py PCIIface's device list. tmr_size: what the PSP answers LOAD_TOC
# with; 0x1300000 is the size a real Navi31 asks (public dmesg "reserve
# 0x1300000 ... for PSP TMR", issue 14 item 3); for Navi48 no public figure
# was found, so the same number is a model value.
PARTS = {"navi31": Part("navi31", 24 * 1024, 0x744C, 0x1300000), "navi48": Part("navi48", 16 * 1024, 0x7550, 0x1300000)}

FB_BASE = 0x80_0000_0000  # model value: barebell_sim::psp FB_START / cli bringup_gmc FB_START
SOS_SIGN_OF_LIFE = 0x1  # model value: any non-zero C2PMSG_81 (psp_v13_0_is_sos_alive)
SMU_VERSION = 0x00504A00  # model value for GetSmuVersion
# model values for GetDpmFreqByIndex: MHz per level; bit 31 of the count
# marks fine-grained DPM (smu_v13_0_get_dpm_freq_by_index / _get_dpm_level_count).
DPM = {"GFXCLK": ([500, 2500], True), "SOCCLK": ([500, 1200], False), "UCLK": ([97, 456, 772, 1249], False), "FCLK": ([400, 800, 1200, 1900], False)}

# smu_cmn.c SMU_RESP_*
SMU_RESP_NONE, SMU_RESP_OK, SMU_RESP_CMD_UNKNOWN = 0, 1, 0xFE

# PSP bootloader commands in the order AM_PSP.init_hw sends them (and
# psp_hw_start(): KDB, SPL, SYS, SOC, INTF, DBG, RAS, SOS); any may be absent
# when the sos blob lacks the component.
BL_ORDER = [am.PSP_BL__LOAD_KEY_DATABASE, am.PSP_BL__LOAD_TOS_SPL_TABLE, am.PSP_BL__LOAD_SYSDRV, am.PSP_BL__LOAD_SOCDRV,
            am.PSP_BL__LOAD_INTFDRV, am.PSP_BL__LOAD_DBGDRV, am.PSP_BL__LOAD_RASDRV, am.PSP_BL__LOAD_SOSDRV]
BL_NAMES = {v: k for k, v in vars(am).items() if k.startswith("PSP_BL__") and k not in ("PSP_BL__LOAD_HADDRV",)}
FW_NAMES = {v: k.removeprefix("GFX_FW_TYPE_") for k, v in vars(am).items() if k.startswith("GFX_FW_TYPE_") and isinstance(v, int)}

# Registers banked by GRBM_GFX_CNTL (me/pipe/queue/vmid select):
# soc21_grbm_select() selects "the HQD/VMID register bank" before the HQD
# window (gfx_v11_0_compute_mqd_init...), SH_MEM_* per VMID
# (gfx_v11_0_init_compute_vmid), and the RS64 program counters per pipe
# (gfx_v11_0_config_mec_cache_rs64).
BANKED = ("CP_HQD_", "CP_MQD_", "SH_MEM_", "CP_MEC_RS64_PRGRM_CNTR_START", "CP_PFP_PRGRM_CNTR_START", "CP_ME_PRGRM_CNTR_START")

def header_defaults(linux: pathlib.Path, gc: tuple[int, int, int]) -> dict[str, int]:
  """Reset values from Linux's `asic_reg/gc/gc_X_Y_Z_default.h` (extracted by
  `cargo xtask headers`). AM read-modify-writes many registers
  (`AMRegister.update`), so what it writes depends on them. Linux 6.12 ships
  one for GC 11.0.0 and none for GC 12, MMHUB, OSSSYS, NBIO or MP: those
  registers read 0 until written (a model convention, not a hardware fact)."""
  f = linux / f"drivers/gpu/drm/amd/include/asic_reg/gc/gc_{gc[0]}_{gc[1]}_{gc[2]}_default.h"
  if not f.exists(): return {}
  return {m.group(1): int(m.group(2), 16) for m in re.finditer(r"#define reg(\w+)_DEFAULT\s+(0x[0-9a-fA-F]+)", f.read_text())}

class Responder:
  def __init__(self, part: Part, disc: bytes, symbols, tracer, strict: bool = False, state: str = "cold", linux: pathlib.Path | None = None):
    self.part, self.syms, self.tracer, self.strict = part, symbols, tracer, strict
    self.ips = discovery.parse(disc)
    ver = lambda n: discovery.find(self.ips, n).version
    self.gc, self.mp0, self.mp1 = ver("GC"), ver("MP0"), ver("MP1")
    self.smu_mod = import_module("smu", self.mp1)
    self.smu_names = {getattr(self.smu_mod, k): k.removeprefix("PPSMC_MSG_") for k in dir(self.smu_mod) if k.startswith("PPSMC_MSG_")}
    self.psp = "MP0_SMN_C2PMSG_" if self.mp0 < (14, 0, 0) else "MPASP_SMN_C2PMSG_"
    self.vram_bytes = part.vram_mib << 20
    self._vram = mmap.mmap(-1, self.vram_bytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE)
    self.vram_mv = memoryview(self._vram)
    # The IFWI leaves the discovery binary at VRAM size - 64 KiB
    # (amdgpu_discovery.c DISCOVERY_TMR_OFFSET; AMDev._run_discovery).
    at = self.vram_bytes - (64 << 10)
    self.vram_mv[at:at + len(disc)] = disc
    self._dma, self._dma_next = mmap.mmap(-1, 64 << 20), 0
    self.dma_bus = 0x1_0000_0000  # model value: IOVA of the DMA pool
    self.cfg = self._config_space()
    defaults = header_defaults(linux, self.gc) if linux else {}
    self.defaults = {symbols.dw(n): v for n, v in defaults.items() if n in symbols.by_name}
    self.regs: dict[int, int] = {}
    self.banks: dict[tuple[int, int], int] = {}
    self.last_bank: dict[str, int] = {}
    self.touched: dict[str, set[str]] = {}
    self.ruled: set[str] = set()
    self.refusals: list[str] = []
    self.fw_loaded: list[int] = []
    self.bl_done: list[int] = []
    self.hqds: list[str] = []
    self.flushes = {"hdp": 0, "hdp_unmapped": 0}
    self._reset(state)
    self._build_rules()

  # ---- backend interface (pcidev.VirtualPCIDevice calls these) ----
  def vram(self) -> memoryview: return self.vram_mv
  def bar_len(self, bar: int) -> int: return {0: self.vram_bytes, 2: 2 << 20, 5: 1 << 20}[bar]  # BAR5 1 MiB, BAR2 2 MiB: model values
  def bar_bus(self, bar: int) -> int: return {0: 0x38_0000_0000, 2: 0x3C_0000_0000, 5: 0xF000_0000}[bar]  # model values
  def service(self): pass  # every handshake completes inside the access that starts it
  def mem_written(self, space: str, offset: int, length: int): pass
  def doorbell_write64(self, offset: int, value: int): self.tracer.note(f"doorbell {offset:#x} <- {value:#x} (no queue model here)")
  def dma_alloc(self, size: int):
    at = (self._dma_next + 0xFFF) & ~0xFFF
    if at + size > len(self._dma): raise MemoryError("DMA pool exhausted")
    self._dma_next = at + size
    return memoryview(self._dma)[at:at + size], self.dma_bus + at

  def config_read(self, offset: int, size: int) -> int: return int.from_bytes(self.cfg[offset:offset + size], "little")
  def config_write(self, offset: int, value: int, size: int):
    self.cfg[offset:offset + size] = value.to_bytes(size, "little")
    if offset == 0x04: self.tracer.note(f"pci: bus master {'on' if value & 0x4 else 'off'}")

  def bar5_read32(self, dw: int) -> int:
    name = self._mark(dw, "R")
    rule = self.on_read.get(dw)
    return rule() if rule else self._get(dw, name)

  def bar5_write32(self, dw: int, value: int):
    name = self._mark(dw, "W")
    self._set(dw, name, value)
    if (rule := self.on_write.get(dw)): rule(value)

  # ---- state ----
  def _config_space(self) -> bytearray:
    # Model values (no real Navi config dump is used): vendor/device, memory
    # space on, capability list -> PM cap at 0x50 -> PCIe cap at 0x64 with
    # ASPM L1 enabled in LNKCTL, which AMDev._disable_aspm clears.
    c = bytearray(4096)
    struct.pack_into("<HHHH", c, 0, 0x1002, self.part.device_id, 0x0002, 0x0010)
    c[0x0B], c[0x34] = 0x03, 0x50
    c[0x50:0x52] = bytes([0x01, 0x64])
    c[0x64:0x66] = bytes([0x10, 0x00])
    struct.pack_into("<H", c, 0x64 + 0x10, 0x0002)
    return c

  def _reset(self, state: str):
    """Register state at hand-off. `cold`: nothing ran since power-on.
    `amdgpu`: amdgpu left sOS and SMU running (AMDev then takes the mode-1
    reset path). Everything not set here reads 0 until written."""
    self.regs.clear(); self.banks.clear()
    self.bl_done, self.fw_loaded, self.ring, self.rptr = [], [], None, 0
    self.sos_alive = self.smu_running = state == "amdgpu"
    self.autoload_done = False
    # psp_v13_0_wait_for_bootloader: the bootloader is ready when C2PMSG_35 bit 31 is set.
    self._poke(self.psp + "35", 0x80000000)
    self._poke(self.psp + "81", SOS_SIGN_OF_LIFE if self.sos_alive else 0)
    self._poke(self.psp + "64", 0x80000000 if self.sos_alive else 0)
    # mmhub_v3_0_get_fb_location(): FB base/top in 16 MiB units, set by the
    # VBIOS/IFWI before any driver runs (model value FB_BASE).
    for hub in ("MMMC", "GCMC"):
      self._poke(f"{hub}_VM_FB_LOCATION_BASE", FB_BASE >> 24)
      self._poke(f"{hub}_VM_FB_LOCATION_TOP", (FB_BASE + self.vram_bytes - 1) >> 24)
    self._poke("RCC_CONFIG_MEMSIZE", self.part.vram_mib)  # amdgpu_discovery.c: VRAM size in MiB at dword 0xde3
    # gc_11_0_0_default.h regCP_MEC_RS64_CNTL_DEFAULT 0x40000000: MEC halted.
    # Linux 6.12 ships no gc_12_0_0_default.h; gfx12 is assumed to start halted too.
    if self.syms.dw("CP_MEC_RS64_CNTL") not in self.defaults: self._poke("CP_MEC_RS64_CNTL", 0x40000000)

  def _poke(self, name: str, value: int): self.regs[self.syms.dw(name)] = value

  def _mark(self, dw: int, kind: str) -> str:
    n = self.syms.name(dw)
    name = n[1] if n else f"[{dw * 4:#x}]"
    self.touched.setdefault(name, set()).add(kind)
    return name

  def _bank(self, name: str) -> int | None:
    return self.regs.get(self.syms.dw("GRBM_GFX_CNTL"), 0) if name.startswith(BANKED) else None

  def _get(self, dw: int, name: str) -> int:
    b = self._bank(name)
    return self.banks.get((b, dw), self.defaults.get(dw, 0)) if b is not None else self.regs.get(dw, self.defaults.get(dw, 0))

  def _set(self, dw: int, name: str, value: int):
    b = self._bank(name)
    if b is not None: self.banks[(b, dw)], self.last_bank[name] = value, b
    else: self.regs[dw] = value

  def reg(self, name: str) -> int: return self._get(self.syms.dw(name), name)

  def refuse(self, why: str):
    self.refusals.append(why)
    self.tracer.note(f"REFUSED: {why}")
    if self.strict: raise Refused(why)

  def unruled(self) -> list[str]: return sorted(n for n in self.touched if n not in self.ruled)

  def summary(self) -> str:
    """One line per register AM touched: block, name, R/W, whether a rule
    answered it, and its final value (bank 0 for banked registers)."""
    out = ["# block name access answered final-value"]
    for name in sorted(self.touched, key=lambda n: (self.syms.name(self.syms.by_name[n])[0] if n in self.syms.by_name else "?", n)):
      dw = self.syms.by_name.get(name)
      blk = self.syms.name(dw)[0] if dw is not None else "?"
      bank = self.last_bank.get(name)
      val = (self.banks.get((bank, dw), 0) if bank is not None else self._get(dw, name)) if dw is not None else 0
      where = f" (GRBM_GFX_CNTL {bank:#x})" if bank is not None else ""
      out.append(f"{blk} {name} {''.join(sorted(self.touched[name], reverse=True))} {'rule' if name in self.ruled else 'plain'} {val:#010x}{where}")
    return "\n".join(out) + "\n"

  def _build_rules(self):
    self.on_read, self.on_write = {}, {}
    def rule(name, read=None, write=None):
      if name not in self.syms.by_name: return
      self.ruled.add(name)
      if read: self.on_read[self.syms.dw(name)] = read
      if write: self.on_write[self.syms.dw(name)] = write
    p = self.psp
    rule(p + "35", write=self._psp_bootloader)
    rule(p + "64", write=self._psp_ring_ctl)
    rule(p + "67", write=self._psp_wptr)
    for n in ("36", "69", "70", "71", "81"): rule(p + n)  # stored; read by the handlers above
    rule("MP1_SMN_C2PMSG_66", write=lambda v: self._smu(v, "82", "90"))
    rule("MP1_SMN_C2PMSG_75", write=lambda v: self._smu(v, "53", "54", debug=True))
    for n in ("82", "90", "53", "54"): rule(f"MP1_SMN_C2PMSG_{n}")
    rule("BIF_BX_PF0_RSMU_DATA", read=self._rsmu_read, write=self._rsmu_write)
    rule("BIF_BX_PF0_RSMU_INDEX")
    rule("BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL", write=lambda v: None)
    rule("MM_INDEX"); rule("MM_INDEX_HI")
    rule("MM_DATA", read=self._mm_read, write=self._mm_write)
    rule("RCC_CONFIG_MEMSIZE")
    for hub in ("MMMC", "GCMC"):
      rule(f"{hub}_VM_FB_LOCATION_BASE"); rule(f"{hub}_VM_FB_LOCATION_TOP")
    for hub in ("MM", "GC"):
      rule(f"{hub}VM_INVALIDATE_ENG17_REQ", write=lambda v, h=hub: self._tlb_req(h, v))
      rule(f"{hub}VM_INVALIDATE_ENG17_ACK")
    # gmc_v11_0_flush_gpu_tlb(): "a read return value of 1 means semaphore acquire"
    rule("MMVM_INVALIDATE_ENG17_SEM", read=lambda: 1, write=lambda v: None)
    # gfx_v11_0_wait_for_rlc_autoload_complete(): CP_STAT == 0 and
    # RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE == 1 once autoload finished.
    rule("CP_STAT", read=lambda: 0)
    rule("RLC_RLCS_BOOTLOAD_STATUS", read=lambda: 0x80000000 if self.autoload_done else 0)
    # gfx_v11_0_set_safe_mode()/unset: the RLC clears RLC_SAFE_MODE.CMD when it acknowledges.
    rule("RLC_SAFE_MODE", write=lambda v: self._poke("RLC_SAFE_MODE", v & ~1))
    rule("GRBM_GFX_CNTL")
    rule("CP_MEC_RS64_CNTL", write=self._mec_cntl)
    rule("CP_MEC_RS64_PRGRM_CNTR_START"); rule("CP_MEC_RS64_PRGRM_CNTR_START_HI")
    rule("CP_HQD_ACTIVE", write=self._hqd_active)
    # The HDP flush write lands wherever BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL points
    # (AM_GMC.flush_hdp); Linux's remap puts it at MMIO_REG_HOLE_OFFSET 0x7F000
    # (nbio_v4_3_remap_hdp_registers), counted here when it gets there.
    self.on_write[0x7F000 // 4] = lambda v: self.flushes.__setitem__("hdp", self.flushes["hdp"] + 1)

  # ---- PSP (MP0 / MPASP) ----
  def _mc_to_vram(self, mc: int, size: int, what: str) -> int | None:
    off = mc - FB_BASE
    if off < 0 or off + size > self.vram_bytes:
      self.refuse(f"{what}: MC {mc:#x} (+{size:#x}) is not in VRAM; the responder has no GART/system path for the PSP")
      return None
    return off

  def _psp_bootloader(self, cmd: int):
    """psp_v13_0_bootloader_load_component(): the driver waits for bit 31,
    stages the component at the fw_pri MC address >> 20 in C2PMSG_36, writes
    the command to C2PMSG_35 and waits for bit 31 again; for SOS it waits for
    C2PMSG_81 to change instead (psp_v13_0_bootloader_load_sos)."""
    name = BL_NAMES.get(cmd, f"{cmd:#x}")
    if self.sos_alive: return self.refuse(f"bootloader command {name} while sOS runs")
    if cmd not in BL_ORDER: return self.refuse(f"unknown bootloader command {cmd:#x}")
    done = [BL_ORDER.index(c) for c in self.bl_done]
    if done and BL_ORDER.index(cmd) <= max(done): return self.refuse(f"bootloader command {name} out of psp_hw_start() order")
    src = self.reg(self.psp + "36") << 20
    off = self._mc_to_vram(src, 1 << 20, f"bootloader {name} payload")
    if off is None: return
    if not any(self.vram_mv[off:off + 256]): return self.refuse(f"bootloader {name}: the fw_pri buffer at MC {src:#x} is empty")
    self.bl_done.append(cmd)
    self.tracer.note(f"psp bootloader: {name} from MC {src:#x}")
    if cmd == am.PSP_BL__LOAD_SOSDRV:
      self.sos_alive = True
      self._poke(self.psp + "81", SOS_SIGN_OF_LIFE)
      # psp_v11_0_ring_create() "Wait for sOS ready for ring creation": C2PMSG_64 bit 31.
      self._poke(self.psp + "64", 0x80000000)
      self._poke(self.psp + "35", 0)
    else: self._poke(self.psp + "35", 0x80000000)

  def _psp_ring_ctl(self, v: int):
    """psp_v13_0_ring_create(): ring MC address in C2PMSG_69/70, size in 71,
    `ring_type << 16` in 64, then the response flag (bit 31, status in 15:0)
    in 64. GFX_CTRL_CMD_ID_DESTROY_RINGS in 64 tears the ring down
    (psp_v13_0_ring_stop)."""
    if not self.sos_alive: return self.refuse(f"{self.psp}64 = {v:#x} before sOS is alive")
    if v == am.GFX_CTRL_CMD_ID_DESTROY_RINGS:
      self.ring, self.rptr = None, 0
      self.tracer.note("psp: rings destroyed")
    elif v >> 16 == am.PSP_RING_TYPE__KM and v & 0xFFFF == 0:
      mc = self.reg(self.psp + "69") | self.reg(self.psp + "70") << 32
      size = self.reg(self.psp + "71")
      off = self._mc_to_vram(mc, size, "PSP ring")
      if off is None: return
      self.ring, self.rptr = (off, size), 0
      self.tracer.note(f"psp: KM ring at MC {mc:#x}, {size:#x} bytes")
    else: return self.refuse(f"{self.psp}64 = {v:#x}: not a ring command")
    self._poke(self.psp + "64", 0x80000000)

  def _psp_wptr(self, wptr: int):
    """The write pointer (dwords) in C2PMSG_67: sOS consumes the 64-byte
    psp_gfx_rb_frame entries, runs each psp_gfx_cmd_resp and writes the
    frame's fence value to its fence address (psp_ring_cmd_submit())."""
    if self.ring is None: return self.refuse("PSP write pointer moved with no ring")
    off, size = self.ring
    if wptr < self.rptr or (wptr - self.rptr) % 16: return self.refuse(f"PSP write pointer {wptr:#x} is not whole frames past {self.rptr:#x}")
    while self.rptr != wptr:
      f = off + (self.rptr * 4) % size
      lo, hi, _, flo, fhi, fval = struct.unpack_from("<6I", self.vram_mv, f)
      self.rptr += 16  # psp_gfx_rb_frame: 64 bytes
      cmd = self._mc_to_vram(lo | hi << 32, 1024, "PSP command buffer")
      fence = self._mc_to_vram(flo | fhi << 32, 4, "PSP fence")
      if cmd is None or fence is None: return
      status = self._psp_cmd(cmd)
      struct.pack_into("<I", self.vram_mv, cmd + 864, status)  # psp_gfx_cmd_resp.resp.status (+864)
      struct.pack_into("<I", self.vram_mv, fence, fval)

  def _psp_cmd(self, at: int) -> int:
    cmd_id, = struct.unpack_from("<I", self.vram_mv, at + 8)  # psp_gfx_cmd_resp.cmd_id
    body = at + 28  # psp_gfx_cmd_resp.cmd
    if cmd_id == am.GFX_CMD_ID_LOAD_TOC:
      lo, hi, size = struct.unpack_from("<3I", self.vram_mv, body)
      struct.pack_into("<I", self.vram_mv, at + 864 + 16, self.part.tmr_size)  # resp.tmr_size (+16)
      self.tracer.note(f"psp: LOAD_TOC ({size:#x} bytes at MC {lo | hi << 32:#x}) -> tmr_size {self.part.tmr_size:#x} (model value for this part)")
    elif cmd_id == am.GFX_CMD_ID_SETUP_TMR:
      lo, hi, size, flags, slo, shi = struct.unpack_from("<6I", self.vram_mv, body)
      mc = lo | hi << 32
      if mc % am.PSP_TMR_ALIGNMENT: self.refuse(f"SETUP_TMR at MC {mc:#x} is not PSP_TMR_ALIGNMENT aligned")
      if size != self.part.tmr_size: self.refuse(f"SETUP_TMR size {size:#x} != the {self.part.tmr_size:#x} LOAD_TOC asked (psp_tmr_init)")
      self.tracer.note(f"psp: SETUP_TMR MC {mc:#x} size {size:#x} flags {flags:#x} system {slo | shi << 32:#x}")
    elif cmd_id == am.GFX_CMD_ID_LOAD_IP_FW:
      lo, hi, size, fw_type = struct.unpack_from("<4I", self.vram_mv, body)
      if size == 0: self.refuse(f"LOAD_IP_FW {FW_NAMES.get(fw_type, fw_type)} with size 0")
      self.fw_loaded.append(fw_type)
      if fw_type == am.GFX_FW_TYPE_SMU: self.smu_running = True
      self.tracer.note(f"psp: LOAD_IP_FW {FW_NAMES.get(fw_type, fw_type)} ({fw_type}) {size:#x} bytes from MC {lo | hi << 32:#x}")
    elif cmd_id == am.GFX_CMD_ID_AUTOLOAD_RLC:
      # gfx_v11_0 RLC backdoor autoload needs the RLC, IMU and CP images in
      # the TMR first (gfx_v11_0_rlc_backdoor_autoload_enable()).
      need = [am.GFX_FW_TYPE_RLC_G, am.GFX_FW_TYPE_IMU_I, am.GFX_FW_TYPE_IMU_D, am.GFX_FW_TYPE_RS64_MEC]
      missing = [FW_NAMES[t] for t in need if t not in self.fw_loaded]
      if missing: self.refuse(f"AUTOLOAD_RLC before {missing} were loaded")
      else: self.autoload_done = True
      self.tracer.note(f"psp: AUTOLOAD_RLC -> RLC_RLCS_BOOTLOAD_STATUS.BOOTLOAD_COMPLETE {int(self.autoload_done)}")
    else:
      self.refuse(f"PSP command {cmd_id:#x} is not modelled")
      return 0x100  # PSP_ERR_UNKNOWN_COMMAND (psp_gfx_if.h)
    return 0

  # ---- SMU (MP1) ----
  def _smu(self, msg: int, arg_reg: str, resp_reg: str, debug: bool = False):
    """__smu_cmn_send_msg(): the driver clears the response register (C2PMSG_90),
    puts the argument in C2PMSG_82 and the message in C2PMSG_66, then polls 90
    for a non-zero SMU_RESP_*; a reply argument comes back in 82. The debug
    mailbox (75/53/54, smu_cmn_send_debug_smc_msg) carries DEBUGSMC messages."""
    arg = self.reg(f"MP1_SMN_C2PMSG_{arg_reg}")
    name = ("DEBUGSMC_" + {2: "Mode1Reset"}.get(msg, f"{msg:#x}")) if debug else self.smu_names.get(msg, f"{msg:#x}")
    if not self.smu_running:
      self.tracer.note(f"smu: {name}({arg:#x}) ignored: no SMU firmware running (not loaded through the PSP yet)")
      return
    resp, out = SMU_RESP_OK, None
    if debug and msg == 2:
      self.tracer.note("smu: mode-1 reset: PSP back to its bootloader, SMU stopped, registers at reset values")
      self._reset("cold")
      self._poke(f"MP1_SMN_C2PMSG_{resp_reg}", SMU_RESP_OK)  # smu_v13_0_0_mode1_reset() then waits; the reply is a model choice
      return
    if debug: resp = SMU_RESP_CMD_UNKNOWN
    elif msg == self.smu_mod.PPSMC_MSG_GetSmuVersion: out = SMU_VERSION
    elif msg == self.smu_mod.PPSMC_MSG_GetDpmFreqByIndex:
      clk, idx = arg >> 16, arg & 0xFFFF
      clk_name = next((k.removeprefix("PPCLK_") for k in dir(self.smu_mod) if k.startswith("PPCLK_") and getattr(self.smu_mod, k) == clk), None)
      levels, fine = DPM.get(clk_name, ([], False))
      out = (len(levels) | (fine << 31)) if idx == 0xFF else (levels[idx] if idx < len(levels) else 0)
    elif msg not in self.smu_names: resp = SMU_RESP_CMD_UNKNOWN
    if out is not None: self._poke(f"MP1_SMN_C2PMSG_{arg_reg}", out)
    self._poke(f"MP1_SMN_C2PMSG_{resp_reg}", resp)
    self.tracer.note(f"smu: {name}({arg:#x}) -> resp {resp:#x}" + (f", arg {out:#x}" if out is not None else ""))

  # ---- NBIO windows ----
  def _rsmu_read(self) -> int:
    """amdgpu_device_indirect_rreg(): the register's byte address in
    RSMU_INDEX, its value through RSMU_DATA (AMDev.indirect_rreg)."""
    dw = self.reg("BIF_BX_PF0_RSMU_INDEX") // 4
    v = self.bar5_read32(dw)
    self.tracer.note(f"indirect read {self.tracer.regname(dw)} = {v:#x}")
    return v

  def _rsmu_write(self, v: int):
    dw = self.reg("BIF_BX_PF0_RSMU_INDEX") // 4
    self.tracer.note(f"indirect write {self.tracer.regname(dw)} = {v:#x}")
    self.bar5_write32(dw, v)

  def _mm_addr(self) -> int | None:
    """amdgpu_device_mm_access(): MM_INDEX bit 31 selects VRAM, address bits
    30:0 there and 62:31 in MM_INDEX_HI; without bit 31 it is a register."""
    i = self.reg("MM_INDEX")
    return ((self.reg("MM_INDEX_HI") << 31) | (i & 0x7FFFFFFF)) if i & 0x80000000 else None

  def _mm_read(self) -> int:
    a = self._mm_addr()
    return struct.unpack_from("<I", self.vram_mv, a)[0] if a is not None and a + 4 <= self.vram_bytes else 0

  def _mm_write(self, v: int):
    a = self._mm_addr()
    if a is not None and a + 4 <= self.vram_bytes: struct.pack_into("<I", self.vram_mv, a, v)

  # ---- hubs ----
  def _tlb_req(self, hub: str, v: int):
    """gmc_v11_0_flush_gpu_tlb(): a request on engine 17 is answered by the
    VMID's bit in ..._INVALIDATE_ENG17_ACK."""
    vmids = v & 0xFFFF  # PER_VMID_INVALIDATE_REQ, bits 15:0
    self._poke(f"{hub}VM_INVALIDATE_ENG17_ACK", vmids)

  # ---- GC: MEC and HQD ----
  def _mec_cntl(self, v: int):
    halt, active, reset = (self.syms.field("CP_MEC_RS64_CNTL", f, v) for f in ("mec_halt", "mec_pipe0_active", "mec_pipe0_reset"))
    self.tracer.note(f"mec: CP_MEC_RS64_CNTL halt={halt} pipe0 active={active} reset={reset}")

  def _mec_pc(self, pipe: int) -> int:
    sel = self.syms  # CP_MEC_RS64_PRGRM_CNTR_START is banked by GRBM_GFX_CNTL (me 1, pipe)
    key = (1 << sel.fields["GRBM_GFX_CNTL"]["meid"][0]) | (pipe << sel.fields["GRBM_GFX_CNTL"]["pipeid"][0])
    lo = self.banks.get((key, sel.dw("CP_MEC_RS64_PRGRM_CNTR_START")), 0)
    hi = self.banks.get((key, sel.dw("CP_MEC_RS64_PRGRM_CNTR_START_HI")), 0)
    return lo | hi << 32

  def _hqd_active(self, v: int):
    """An HQD runs only on a started MEC: gfx_v11_0_config_gfx_rs64() sets the
    pipe's program counter, gfx_v11_0_cp_compute_enable() clears MEC_HALT and
    sets the pipe active (CP_MEC_RS64_CNTL default 0x40000000 = halted)."""
    sel = self.reg("GRBM_GFX_CNTL")
    me, pipe, queue, vmid = (self.syms.field("GRBM_GFX_CNTL", f, sel) for f in ("meid", "pipeid", "queueid", "vmid"))
    if not v & 1 or me != 1: return
    cntl, pc = self.reg("CP_MEC_RS64_CNTL"), self._mec_pc(pipe)
    f = lambda n: self.syms.field("CP_MEC_RS64_CNTL", n, cntl)
    if f("mec_halt") or not f(f"mec_pipe{pipe}_active") or f(f"mec_pipe{pipe}_reset") or pc == 0:
      return self.refuse(f"CP_HQD_ACTIVE=1 on me1 pipe{pipe} queue{queue} with MEC not started (CP_MEC_RS64_CNTL {cntl:#x}, PC {pc:#x})")
    r = lambda n: self.reg(n)
    dbc = r("CP_HQD_PQ_DOORBELL_CONTROL")
    db_off, db_en = self.syms.field("CP_HQD_PQ_DOORBELL_CONTROL", "doorbell_offset", dbc), self.syms.field("CP_HQD_PQ_DOORBELL_CONTROL", "doorbell_en", dbc)
    lo, hi = r("CP_MEC_DOORBELL_RANGE_LOWER"), r("CP_MEC_DOORBELL_RANGE_UPPER")
    desc = (f"HQD me1 pipe{pipe} queue{queue} active: MQD {r('CP_MQD_BASE_ADDR') | r('CP_MQD_BASE_ADDR_HI') << 32:#x}, "
            f"PQ {(r('CP_HQD_PQ_BASE') | r('CP_HQD_PQ_BASE_HI') << 32) << 8:#x} control {r('CP_HQD_PQ_CONTROL'):#x}, vmid {r('CP_HQD_VMID')}, "
            f"doorbell dword {db_off:#x} en {db_en} (MEC range {lo:#x}..{hi:#x}), EOP {(r('CP_HQD_EOP_BASE_ADDR') | r('CP_HQD_EOP_BASE_ADDR_HI') << 32) << 8:#x}, "
            f"MEC PC {pc:#x}")
    if db_en and not (lo <= db_off * 4 <= hi + 4): self.refuse(f"HQD doorbell byte offset {db_off * 4:#x} outside CP_MEC_DOORBELL_RANGE {lo:#x}..{hi:#x}")
    self.hqds.append(desc)
    self.tracer.note(desc)
