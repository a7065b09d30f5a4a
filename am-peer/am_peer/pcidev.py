"""The PCI device handed to `AMDev(pci_dev)`.

What AM calls on it, found by reading tinygrad 0.14.0:
- `pcibus` (amdev.py `AMDev.__init__`: `devfmt`; a name starting "usb:" would
  switch AM_PSP to system-memory msg1 buffers, so this one does not);
- `read_config(off, size)` / `write_config_flush(off, val, size)`
  (`AMDev._disable_aspm` walks the capability list to the PCIe capability and
  clears LNKCTL ASPM; `PCI_COMMAND` bus master is cleared before a mode-1
  reset and set before `init_hw`);
- `map_bar(0)` VRAM, `map_bar(2, fmt='Q')` doorbells, `map_bar(5, fmt='I')`
  registers. AM indexes BAR5 as `mmio[dword]` and uses `len(mmio)` to send
  registers past the BAR through the RSMU index/data pair (`AMDev.rreg/wreg`).
  VRAM is used as `vram.view(off, size, fmt)`, `vram[a:b] = bytes`, `[i]`,
  `.nbytes` (`_run_discovery`, `AMPageTableEntry`, `MemoryManager.palloc`,
  AM_PSP ring/fence/cmd buffers, `AM_GFX.setup_ring`'s MQD copy);
- `alloc_sysmem(size, vaddr, contiguous)` -> (view, 4 KiB bus addresses):
  only `PCIIfaceBase.alloc` for host memory and AM_PSP on USB use it; this is
  where DMA memory comes from (system.py `PCIDevice.alloc_sysmem`).
- `bar_info(bar)` -> (bus address, size): `PCIIfaceBase.is_bar_small`.

Every access goes to a backend (responder.Responder or backend.CBackend)
and is recorded by the tracer.
"""
import struct

# The model's DMA chunk (barebell::platform::DMA_CHUNK, ABI.md vgpu_dma_alloc).
CHUNK = 2 << 20

class RegisterBar:
  """BAR5 as `mmio[dw]`: every access is one synchronous 32-bit access."""
  def __init__(self, backend, tracer, nbytes: int):
    self.backend, self.tracer, self.nbytes = backend, tracer, nbytes
  def __len__(self): return self.nbytes // 4
  def __getitem__(self, dw: int) -> int:
    if not isinstance(dw, int): raise TypeError("BAR5 is accessed one dword at a time")
    v = self.backend.bar5_read32(dw)
    self.tracer.reg(False, dw, v)
    return v
  def __setitem__(self, dw: int, v: int):
    if not isinstance(dw, int): raise TypeError("BAR5 is accessed one dword at a time")
    self.tracer.reg(True, dw, v)
    self.backend.bar5_write32(dw, v & 0xFFFFFFFF)

class MemoryView:
  """A window on host-visible device memory (VRAM through BAR0), shaped like
  tinygrad's MMIOInterface. Stores are traced; loads give the backend a turn
  first (`service()`), since a host polling memory (PSP fence, rptr) makes no
  register access a model could act on."""
  def __init__(self, backend, tracer, mem: memoryview, offset: int, nbytes: int, fmt: str = "B", space: str = "VRAM"):
    self.backend, self.tracer, self.mem, self.offset, self.nbytes, self.fmt, self.space = backend, tracer, mem, offset, nbytes, fmt, space
    self.mv = mem[offset:offset + nbytes].cast(fmt)
    self.itemsize = struct.calcsize(fmt)
  def __len__(self): return self.nbytes // self.itemsize
  def __getitem__(self, k):
    self.backend.service()
    return (self.mv[k] if self.fmt == "B" else self.mv[k].tolist()) if isinstance(k, slice) else self.mv[k]
  def __setitem__(self, k, v):
    self.mv[k] = v
    start = (k.start or 0) if isinstance(k, slice) else k
    stop = (k.stop if k.stop is not None else len(self)) if isinstance(k, slice) else k + 1
    a, b = self.offset + start * self.itemsize, self.offset + stop * self.itemsize
    self.tracer.mem(self.space, a, bytes(self.mem[a:b]))
    self.backend.mem_written(self.space, a, b - a)
  def view(self, offset: int = 0, size: int | None = None, fmt: str | None = None) -> "MemoryView":
    return MemoryView(self.backend, self.tracer, self.mem, self.offset + offset, self.nbytes - offset if size is None else size,
                      fmt or self.fmt, self.space)

class DoorbellBar:
  """BAR2 as `doorbell64[i]` (fmt 'Q') or its `.view(off, 8, 'Q')`."""
  def __init__(self, backend, tracer, nbytes: int, offset: int = 0):
    self.backend, self.tracer, self.nbytes, self.offset = backend, tracer, nbytes, offset
  def __len__(self): return self.nbytes // 8
  def __getitem__(self, i: int) -> int: return 0  # doorbells read as 0 (write-only aperture in this model)
  def __setitem__(self, i: int, v: int):
    self.tracer.doorbell(self.offset + 8 * i, v)
    self.backend.doorbell_write64(self.offset + 8 * i, v)
  def view(self, offset: int = 0, size: int | None = None, fmt: str | None = None) -> "DoorbellBar":
    if fmt not in (None, "Q"): raise ValueError("doorbells are 64-bit stores")
    return DoorbellBar(self.backend, self.tracer, self.nbytes - offset if size is None else size, self.offset + offset)

class VirtualPCIDevice:
  """What AMDev expects of `PCIDevice`, over a backend."""
  def __init__(self, backend, tracer, pcibus: str):
    self.backend, self.tracer, self.pcibus = backend, tracer, pcibus
    self.irq_poller = None

  def read_config(self, offset: int, size: int) -> int: return self.backend.config_read(offset, size)
  def write_config(self, offset: int, value: int, size: int):
    self.tracer.config(offset, value, size)
    self.backend.config_write(offset, value, size)
  def write_config_flush(self, offset: int, value: int, size: int):
    self.write_config(offset, value, size)
    self.read_config(offset, size)

  def bar_info(self, bar: int) -> tuple[int, int]: return (self.backend.bar_bus(bar), self.backend.bar_len(bar))
  def map_bar(self, bar: int, off: int = 0, addr: int = 0, size: int | None = None, fmt: str = "B"):
    n = (size or self.backend.bar_len(bar) - off)
    if bar == 0: return MemoryView(self.backend, self.tracer, self.backend.vram(), off, n, fmt)
    if bar == 2: return DoorbellBar(self.backend, self.tracer, n, off)
    if bar == 5:
      if fmt != "I" or off: raise ValueError("BAR5 is mapped whole, as dwords")
      return RegisterBar(self.backend, self.tracer, n)
    raise ValueError(f"BAR{bar} is not a memory BAR of this device")

  def alloc_sysmem(self, size: int, vaddr: int = 0, contiguous: bool = False):
    """Host memory the device reaches by DMA: a view and one bus address per
    4 KiB page (the model's IOMMU view decides what those addresses reach)."""
    if size <= CHUNK:
      mem, bus = self.backend.dma_alloc(size)
      return MemoryView(self.backend, self.tracer, mem, 0, size, "B", space=f"DMA@{bus:#x}"), [bus + i for i in range(0, size, 0x1000)]
    # Larger than one chunk (tinygrad's 16 MiB rings): whole chunks, one
    # `vgpu_dma_alloc` each (ABI.md: an allocation stays in one chunk), and
    # one bus address per page from each. The host side is one view when
    # the chunks lie back to back in the model's region, as its allocator
    # places consecutive whole chunks; anything else is refused.
    pieces = [self.backend.dma_alloc(min(CHUNK, size - o)) for o in range(0, size, CHUNK)]
    first = pieces[0][0]
    base = self.backend.host_addr(first)
    for k, (m, _) in enumerate(pieces):
      if self.backend.host_addr(m) != base + k * CHUNK: raise RuntimeError("the model's DMA chunks are not back to back on the host")
    mem = self.backend.host_view(base, size)
    return (MemoryView(self.backend, self.tracer, mem, 0, size, "B", space=f"DMA@{pieces[0][1]:#x}"),
            [bus + i for _, bus in pieces for i in range(0, CHUNK, 0x1000)][:size // 0x1000])

  def reset(self): raise NotImplementedError("function-level reset is not modelled")
  def resize_bar(self, bar_idx: int): pass
