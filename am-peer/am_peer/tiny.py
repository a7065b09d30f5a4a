"""tinygrad itself on the model: `AMDDevice` through the AM interface.

  python3 -m am_peer.tiny --part navi31 --backend LIB.so [--n 4096]

tinygrad 0.14.0's `AMDDevice` picks an interface from `AMDDevice.ifaces`
(device.py `_select_iface`); on a board its `PCIIface` finds the PCI device
through `System.pci_probe_device` and boots `AMDev` on it. Here one
interface class, `ModelIface`, is put in that list: it is tinygrad's own
`PCIIface` with only its constructor replaced, so that the PCI device is
the harness's (`pcidev.VirtualPCIDevice` over the model's C ABI) instead
of a sysfs one. Everything else is tinygrad's code, unmodified: AM's boot,
`PCIIface.create_queue` (the PM4 compute queue and SDMA queue 0),
`PCIIfaceBase.alloc` (VRAM through AM's memory manager, host memory
through `alloc_sysmem`, i.e. the model's DMA region), the allocator's
SDMA copies, `AMDProgram` (ELF load, kernel descriptor to RSRC registers),
`AMDComputeQueue` (the PM4 stream), the signals and the timeline.

The kernels are tinygrad's own, rendered by `AMDLLVMRenderer` and compiled
by `AMDLLVMCompiler` with Debian's libLLVM-19 (docs/am-peer.md). The
results are read back through tinygrad (`Tensor.numpy()`, an SDMA copy to
host memory) and compared with NumPy computed here, on the host.
"""
import argparse, os, pathlib, sys, time

# tinygrad reads these at import.
os.environ.setdefault("DEBUG", "0")
# AMDLLVMRenderer/Compiler: no ROCm (comgr) needed, Debian's libLLVM-19.
os.environ.setdefault("DEV", "AMD:LLVM")
# A stopped queue shows as a signal that never arrives: 10 s, not 30.
os.environ.setdefault("HCQDEV_WAIT_TIMEOUT_MS", "10000")

from .trace import Tracer

class QuietTracer(Tracer):
  """Counts accesses; keeps no lines (a run moves megabytes)."""
  def _emit(self, line: str): pass

def install_iface(backend, part: str):
  """`AMDDevice.ifaces` = [ModelIface]: PCIIface on the harness's device."""
  from tinygrad.runtime import ops_amd
  from tinygrad.runtime.support.am.amdev import AMDev
  from . import pcidev, firmware
  tracer = QuietTracer()
  firmware.install(tracer)

  class ModelIface(ops_amd.PCIIface):
    # PCIIfaceBase.__init__ without System.pci_probe_device /
    # System.reserve_va (no sysfs device, and the GPU's VAs are never CPU
    # addresses here: every CPU access goes through a buffer's view).
    def __init__(self, dev, dev_id):  # pylint: disable=super-init-not-called
      if dev_id != 0: raise RuntimeError(f"AMD:{dev_id} does not exist (the model is one device)")
      self.pci_dev = pcidev.VirtualPCIDevice(backend, tracer, pcibus=f"vgpu:{part}")
      self.dev_impl = AMDev(self.pci_dev)
      self.dev, self.vram_bar, self.count = dev, 0, 1
      self._compute_props()
    # Not a host-local device: PCIIfaceBase.free would munmap a buffer's
    # GPU VA on the host, and map() would pin host pages by VA.
    def is_local(self) -> bool: return False
    # tinygrad's hang path (a signal that never came) runs AM's recovery,
    # which resets what the model would show: its state is printed first.
    def on_device_hang(self):
      print(f"tinygrad on {part}: a signal did not arrive; the model then showed:")
      for h in backend.hqds: print(f"  {h}")
      super().on_device_hang()

  ops_amd.AMDDevice.ifaces = [ModelIface]
  return tracer

def shrink_kernargs(mib: int):
  """The one harness deviation from tinygrad (`--kernargs-mib`): the size
  `AMDDevice.__init__` passes for its kernel-argument buffer
  (`HCQCompiled(..., kernargs_size=16 << 20)`). tinygrad allocates it
  contiguous in VRAM with 4 KiB alignment (`MemoryManager.valloc` ->
  `palloc(size)`), and AM maps a 16 MiB buffer with 2 MiB PDE-as-PTE
  entries whose address need not be 2 MiB aligned (here VRAM 0x2034000;
  `PageTableTraverseContext.next`: `supports_huge_page` ignores the
  address). The model's page walker takes a 2 MiB leaf's address with its
  low 21 bits cleared (model/src/gmc.rs `walk`), so the kernels read
  their arguments from the wrong VRAM; what silicon does with those bits
  is not public. Below 8 MiB tinygrad rounds to 4 KiB and AM maps 4 KiB
  pages, which the model and silicon read alike."""
  from tinygrad.runtime import ops_amd
  init = ops_amd.HCQCompiled.__init__
  def patched(self, *args, **kwargs):
    if "kernargs_size" in kwargs: kwargs["kernargs_size"] = mib << 20
    init(self, *args, **kwargs)
  ops_amd.HCQCompiled.__init__ = patched

def run(part: str, lib: str, n: int, kernargs_mib: int) -> int:
  from .backend import CBackend
  backend = CBackend(lib, part, seed=0, strict=True, old_pmfw=part.startswith("mi3"))
  install_iface(backend, part)
  if kernargs_mib != 16: shrink_kernargs(kernargs_mib)
  try:
    note = f" (kernel-argument buffer {kernargs_mib} MiB, the harness's one change)" if kernargs_mib != 16 else ""
    rc = compute(part, n, note)
    # What ran them: the model's own counters (vgpu_status).
    for h in backend.hqds:
      if "shader engines" in h or "CP:" in h: print(f"  {h}")
    return rc
  except Exception as e:
    # The first thing the model did not do, in its own words.
    import traceback
    where = [f"{f.name} ({pathlib.Path(f.filename).name}:{f.lineno})" for f in traceback.extract_tb(e.__traceback__)
             if "tinygrad" in f.filename][-4:]
    print(f"tinygrad on {part}: stopped: {type(e).__name__}: {e}")
    print(f"  in tinygrad: {' <- '.join(reversed(where))}")
    for r in backend.refusals: print(f"  refused: {r}")
    for h in backend.hqds: print(f"  {h}")
    return 1

def compute(part: str, n: int, note: str) -> int:
  import numpy as np
  from tinygrad import Tensor, Device
  t0 = time.perf_counter()
  dev = Device["AMD"]
  print(f"tinygrad on {part}: AMDDevice {dev.arch}, {dev.iface.props['simd_count']} SIMDs ({time.perf_counter() - t0:.1f} s)", flush=True)
  rng = np.random.default_rng(0)
  a_np, b_np = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
  t1 = time.perf_counter()
  a, b = Tensor(a_np, device="AMD"), Tensor(b_np, device="AMD")
  got = (a + b).numpy()
  want = a_np + b_np
  ok_add = got.shape == want.shape and bool(np.array_equal(got, want))
  print(f"  a + b: {n} float32, {'equal to numpy' if ok_add else 'DIFFERENT from numpy'} element by element "
        f"({time.perf_counter() - t1:.1f} s)", flush=True)
  if not ok_add:
    bad = np.flatnonzero(got != want)
    print(f"  first difference at {bad[0]}: {got[bad[0]]} != {want[bad[0]]} ({len(bad)} differ)")
    return 1
  t2 = time.perf_counter()
  s = float(a.sum().numpy())
  want_s = float(a_np.astype(np.float64).sum())
  # The reduction's order is tinygrad's (partial sums per work-item and
  # workgroup), not NumPy's pairwise order: float32 sums agree to a
  # relative error bounded by n * eps32 (Higham, "Accuracy and Stability of
  # Numerical Algorithms", 4.2), the check's bound.
  tol = n * np.finfo(np.float32).eps * float(np.abs(a_np).sum())
  ok_sum = abs(s - want_s) <= tol
  print(f"  a.sum(): {s!r}, numpy (float64) {want_s!r}, |difference| {abs(s - want_s):.3g} "
        f"{'within' if ok_sum else 'OUTSIDE'} the bound {tol:.3g} ({time.perf_counter() - t2:.1f} s)", flush=True)
  if ok_sum: print(f"tinygrad on {part}: a + b and a.sum() of {n} float32{note} matches numpy")
  return 0 if ok_sum else 1

def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--part", choices=["navi31", "navi48", "mi300x"], required=True)
  ap.add_argument("--backend", required=True, help="the model's cdylib (ABI.md)")
  ap.add_argument("--n", type=int, default=4096, help="elements")
  ap.add_argument("--kernargs-mib", type=int, default=16, help="kernel-argument buffer (tinygrad's is 16 MiB; see shrink_kernargs)")
  a = ap.parse_args(argv)
  return run(a.part, a.backend, a.n, a.kernargs_mib)

if __name__ == "__main__":
  sys.exit(main())
