"""The ctypes binding to the model's cdylib, as specified in ../ABI.md.

The model crate exports this ABI from `model-ffi/` (crate
barebell-model-ffi, `target/release/libbarebell_model_ffi.so`). It implements the same backend interface as responder.Responder, which
is all pcidev.VirtualPCIDevice needs. Any non-zero status from the library is
a refusal: its text comes from vgpu_last_error and is raised, never ignored.
"""
import ctypes

VGPU_STRICT = 1  # ABI.md flags
VGPU_PMFW_BEFORE_PRIMARY_SOS = 2

class ModelRefused(Exception):
  """The model refused an access (its message is the model's)."""

class CBackend:
  def __init__(self, path: str, part: str, seed: int = 0, strict: bool = True, old_pmfw: bool = False):
    lib = self.lib = ctypes.CDLL(path)
    P, u8p = ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint8)
    sig = {
      "vgpu_new": (P, [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint32]),
      "vgpu_free": (None, [P]),
      "vgpu_last_error": (ctypes.c_size_t, [P, ctypes.c_char_p, ctypes.c_size_t]),
      "vgpu_bar_len": (ctypes.c_uint64, [P, ctypes.c_uint32]),
      "vgpu_bar5_read32": (ctypes.c_int32, [P, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint32)]),
      "vgpu_bar5_write32": (ctypes.c_int32, [P, ctypes.c_uint64, ctypes.c_uint32]),
      "vgpu_vram_ptr": (u8p, [P]),
      "vgpu_doorbell_write64": (ctypes.c_int32, [P, ctypes.c_uint64, ctypes.c_uint64]),
      "vgpu_dma_alloc": (ctypes.c_int32, [P, ctypes.c_uint64, ctypes.POINTER(u8p), ctypes.POINTER(ctypes.c_uint64)]),
      "vgpu_config_read": (ctypes.c_int32, [P, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]),
      "vgpu_config_write": (ctypes.c_int32, [P, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32]),
      "vgpu_service": (ctypes.c_int32, [P]),
      "vgpu_refusals": (ctypes.c_size_t, [P, ctypes.c_char_p, ctypes.c_size_t]),
      "vgpu_status": (ctypes.c_size_t, [P, ctypes.c_char_p, ctypes.c_size_t]),
    }
    for name, (res, args) in sig.items():
      fn = getattr(lib, name)
      fn.restype, fn.argtypes = res, args
    self.h = lib.vgpu_new(part.encode(), seed, (VGPU_STRICT if strict else 0) | (VGPU_PMFW_BEFORE_PRIMARY_SOS if old_pmfw else 0))
    if not self.h: raise ModelRefused(f"vgpu_new({part!r}) failed: unknown part or no memory")
    n = lib.vgpu_bar_len(self.h, 0)
    self._vram = (ctypes.c_uint8 * n).from_address(ctypes.addressof(lib.vgpu_vram_ptr(self.h).contents))
    self._dma_keep: list = []
    self._u32 = ctypes.c_uint32()

  def close(self):
    if self.h: self.lib.vgpu_free(self.h)
    self.h = None

  def _text(self, fn) -> str:
    n = fn(self.h, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    fn(self.h, buf, n + 1)
    return buf.value.decode(errors="replace")
  @property
  def refusals(self) -> list[str]:
    """Every refusal the model logged (strict or not)."""
    return [l for l in self._text(self.lib.vgpu_refusals).splitlines() if l]
  @property
  def hqds(self) -> list[str]:
    """What the model's blocks show after the run (HQDs, MEC, SMU, SDMA, IH, PSP)."""
    return [f"model: {l}" for l in self._text(self.lib.vgpu_status).splitlines() if l]

  def _check(self, status: int, what: str):
    if status == 0: return
    buf = ctypes.create_string_buffer(1024)
    self.lib.vgpu_last_error(self.h, buf, len(buf))
    raise ModelRefused(f"{what}: {buf.value.decode(errors='replace')} (status {status})")

  # ---- the backend interface ----
  def vram(self) -> memoryview: return memoryview(self._vram).cast("B")
  def bar_len(self, bar: int) -> int: return self.lib.vgpu_bar_len(self.h, bar)
  def bar_bus(self, bar: int) -> int: return 0  # no bus addresses for BARs in the ABI (nothing AM boots with needs them)
  def bar5_read32(self, dw: int) -> int:
    self._check(self.lib.vgpu_bar5_read32(self.h, dw, ctypes.byref(self._u32)), f"BAR5 read of dword {dw:#x}")
    return self._u32.value
  def bar5_write32(self, dw: int, value: int): self._check(self.lib.vgpu_bar5_write32(self.h, dw, value), f"BAR5 write of dword {dw:#x}")
  def doorbell_write64(self, offset: int, value: int): self._check(self.lib.vgpu_doorbell_write64(self.h, offset, value), f"doorbell {offset:#x}")
  def dma_alloc(self, size: int):
    host, bus = ctypes.POINTER(ctypes.c_uint8)(), ctypes.c_uint64()
    self._check(self.lib.vgpu_dma_alloc(self.h, size, ctypes.byref(host), ctypes.byref(bus)), f"DMA allocation of {size:#x} bytes")
    arr = (ctypes.c_uint8 * size).from_address(ctypes.addressof(host.contents))
    self._dma_keep.append(arr)
    return memoryview(arr).cast("B"), bus.value
  @staticmethod
  def host_addr(mem: memoryview) -> int:
    """The host address of a view `dma_alloc` returned."""
    return ctypes.addressof(ctypes.c_uint8.from_buffer(mem))
  def host_view(self, addr: int, size: int) -> memoryview:
    """Host memory the model's DMA region holds, as one view (the caller
    checked it lies inside allocations it made)."""
    arr = (ctypes.c_uint8 * size).from_address(addr)
    self._dma_keep.append(arr)
    return memoryview(arr).cast("B")
  def config_read(self, offset: int, size: int) -> int:
    self._check(self.lib.vgpu_config_read(self.h, offset, size, ctypes.byref(self._u32)), f"config read {offset:#x}")
    return self._u32.value
  def config_write(self, offset: int, value: int, size: int): self._check(self.lib.vgpu_config_write(self.h, offset, size, value), f"config write {offset:#x}")
  def service(self): self._check(self.lib.vgpu_service(self.h), "service")
  def mem_written(self, space: str, offset: int, length: int): pass  # the model sees VRAM directly; stores are not announced
