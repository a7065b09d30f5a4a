"""Drives tinygrad's AM driver against a virtual GPU and writes the trace.

  python3 -m am_peer.run --part navi31 [--backend responder|LIB.so] [--state cold|amdgpu] [--strict]

Steps, as tinygrad runs them on a real board:
1. `AMDev(pci_dev)` (amdev.py): discovery, firmware, SOC/GMC/IH/PSP/SMU
   init_hw, then GFX/SDMA init_hw, clocks, clock gating, SCRATCH_REG6/7:
   its "boot done" point (printed by AM itself at DEBUG>=2).
2. The queues `AMDDevice.__init__` (ops_amd.py) creates through
   `PCIIface.create_queue`: one compute queue, PM4 (AMD_AQL defaults to 0 on
   single-XCC parts), 16 MiB ring, 0x1000 EOP, `AM_GFX.setup_ring(..., idx=0,
   aql=False)` = MEC pipe 0 queue 0 by direct HQD load; then SDMA queue 0.
   Buffers are allocated as `PCIIfaceBase.alloc` does for cpu_access VRAM:
   `mm.valloc(size, uncached=True, contiguous=True)`.
3. With the model's library as backend: one harness packet on the compute
   queue (`probe_compute_queue`: WRITE_DATA + NOP filler), checked in memory.
"""
import argparse, os, pathlib, sys, time

HERE = pathlib.Path(__file__).resolve().parent.parent
REPO = HERE.parent

# AM's progress lines ("am vgpu:navi31: boot done") need DEBUG>=2; read by
# tinygrad at import.
os.environ.setdefault("DEBUG", "2")

# The functions whose entry marks a step in the trace: AM's IP methods, not
# its register accessors.
STEP_SKIP = {"read", "write", "update", "rreg", "wreg", "reg", "wreg_pair", "read_bitfields", "encode", "decode", "fields_mask",
             "_grbm_select", "paddr2mc", "paddr2xgmi", "xgmi2paddr", "get_pte_flags", "set_entry", "entry", "valid", "address",
             "is_page", "supports_huge_page", "is_pte_huge_page", "__post_init__", "desc", "_smu_cmn_send_msg", "indirect_rreg",
             "indirect_wreg", "fmt_ver", "_alloc_ring", "_ih_srcs", "_config_helper", "_ip_module", "hwid_names", "_wait_for_bootloader",
             "_prep_msg1", "is_hive", "load_fw", "<lambda>", "<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>"}

def step_hook(tracer):
  am_dir = str(pathlib.Path(__import__("tinygrad.runtime.support.am", fromlist=["x"]).__file__).parent)
  def hook(frame, event, arg):
    if event != "call": return
    code = frame.f_code
    if code.co_filename.startswith(am_dir) and code.co_name not in STEP_SKIP and "." in code.co_qualname and \
       code.co_qualname not in ("AM_IP.__init__", "AMPageTableEntry.__init__"):
      tracer.step(code.co_qualname)
  return hook

def discovery_blob(part: str, path: str | None, seg5: str) -> bytes:
  """The model's table (barebell_sim::discovery::build), dumped by the
  `dump_discovery` example unless a file is given; with a sixth NBIO base
  unless `seg5` is "none" (see examples/dump_discovery.rs for why)."""
  if path: return pathlib.Path(path).read_bytes()
  out = REPO / "target" / "am-peer" / f"{part}{'' if seg5 == 'none' else '-seg5-' + seg5}.disc"
  if not out.exists():
    import subprocess
    out.parent.mkdir(parents=True, exist_ok=True)
    extra = [] if seg5 == "none" else ["--nbio-seg5", seg5]
    subprocess.run(["cargo", "run", "-q", "--release", "-p", "barebell-examples", "--example", "dump_discovery", "--", part, str(out), *extra],
                   cwd=REPO, check=True, stdout=subprocess.DEVNULL)
  return out.read_bytes()

# PM4 encodings for the harness's probe packet, from Linux nvd.h (the model
# decodes them with its own code, model/src/decode/pm4.rs).
PACKET3_WRITE_DATA, WRITE_DATA_DST_SEL_MEMORY, WR_CONFIRM = 0x37, 5 << 8, 1 << 20
PACKET3_NOP_FILLER = (3 << 30) | (0x3FFF << 16) | (0x10 << 8)  # PACKET3(PACKET3_NOP, 0x3FFF)
PROBE_VALUE = 0x600DF00D

def probe_compute_queue(adev, ring, gart, db, wptr_off, tracer):
  """The harness (not tinygrad) submits one packet the way tinygrad's
  AMDComputeQueue._submit does (ring dwords, then the 64-bit write pointer
  at the wptr address, then the doorbell): WRITE_DATA of PROBE_VALUE to gart
  + 0xC0 and a one-dword NOP filler. Proves the PM4 HQD consumes packets."""
  dst = gart.va_addr + 0xC0
  pkt = [(3 << 30) | (3 << 16) | (PACKET3_WRITE_DATA << 8), WRITE_DATA_DST_SEL_MEMORY | WR_CONFIRM,
         dst & 0xFFFFFFFF, dst >> 32, PROBE_VALUE, PACKET3_NOP_FILLER]
  tracer.step("harness: PM4 probe on the compute queue (WRITE_DATA, NOP filler)")
  rv = adev.vram.view(ring.paddrs[0][0], len(pkt) * 4, 'I')
  for i, d in enumerate(pkt): rv[i] = d
  adev.vram.view(gart.paddrs[0][0] + wptr_off, 8, 'Q')[0] = len(pkt)
  adev.doorbell64.view(db * 8, 8, fmt='Q')[0] = len(pkt)
  got = adev.vram.view(gart.paddrs[0][0] + 0xC0, 4, 'I')[0]
  tracer.note(f"compute queue probe: {got:#x} at gart+0xc0 (want {PROBE_VALUE:#x})")
  if got != PROBE_VALUE: raise RuntimeError(f"the PM4 compute queue did not execute the probe WRITE_DATA: read {got:#x}")

def create_queues(adev, pci_dev, tracer, probe: bool):
  """PCIIface.create_queue's calls for the compute queue and SDMA queue 0."""
  def alloc(size, cpu_access=True): return adev.mm.valloc((size + 0xFFF) & ~0xFFF, uncached=True, contiguous=cpu_access)
  # amd_queue_t read_dispatch_id / write_dispatch_id offsets (ROCR
  # amd_hsa_queue.h: 128 and 56), which AMDDevice.create_queue passes as rptr/wptr.
  rptr_off, wptr_off = 128, 56
  # AMDDevice.__init__: `is_aql = getenv("AMD_AQL", int(self.xccs > 1))`, so
  # a multi-XCC part (MI300X, MI308X) gets an AQL queue on every XCC.
  aql = adev.gfx.xccs > 1
  tracer.step(f"harness: compute queue (PCIIface.create_queue, KFD_IOC_QUEUE_TYPE_COMPUTE{'_AQL' if aql else ''})")
  ring, gart, eop = alloc(16 << 20), alloc(0x100), alloc(0x1000, cpu_access=False)
  db = adev.gfx.setup_ring(ring.va_addr, ring.size, gart.va_addr + rptr_off, gart.va_addr + wptr_off, eop.va_addr, eop.size, aql, aql)
  tracer.note(f"compute queue: ring VA {ring.va_addr:#x} (VRAM {ring.paddrs[0][0]:#x}), doorbell index {db}, {'AQL' if aql else 'PM4'}")
  # The responder runs no queue; only the model's CP can answer the probe
  # (a PM4 packet: the AQL queue of a multi-XCC part takes none).
  if probe and not aql: probe_compute_queue(adev, ring, gart, db, wptr_off, tracer)
  tracer.step("harness: SDMA queue 0 (PCIIface.create_queue, KFD_IOC_QUEUE_TYPE_SDMA)")
  sring, sgart = alloc(16 << 20), alloc(0x100)
  sdb = adev.sdma.setup_ring(sring.va_addr, sring.size, sgart.va_addr + rptr_off, sgart.va_addr + wptr_off, 0)
  tracer.note(f"sdma queue 0: ring VA {sring.va_addr:#x}, doorbell index {sdb}")
  return db, sdb

def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--part", choices=["navi31", "navi48", "mi300x", "mi308x"], required=True)
  ap.add_argument("--backend", default="responder", help="'responder' or the path of the model's cdylib (ABI.md)")
  ap.add_argument("--discovery", help="discovery binary (default: dumped from the model by cargo)")
  ap.add_argument("--nbio-seg5", default="0x04040000", help="sixth NBIO base added to the model's table, or 'none'")
  ap.add_argument("--state", choices=["cold", "amdgpu"], default="cold", help="what ran before AM (responder only)")
  ap.add_argument("--linux", help="extracted Linux 6.12 tree (default target/artifacts/linux-6.12, from `cargo xtask headers`)")
  ap.add_argument("--strict", action="store_true", help="a refused handshake stops the run")
  ap.add_argument("--no-queues", action="store_true", help="stop at AM's boot done")
  ap.add_argument("--teardown", action="store_true", help="then run AM's teardown, AMDev.fini")
  ap.add_argument("--out", help="trace file (default: stdout summary only)")
  a = ap.parse_args(argv)

  from . import discovery, symbols, trace, pcidev, firmware
  cbackend = None
  if a.backend != "responder":
    # The model: its own discovery table, where its IFWI leaves it (VRAM
    # size - 64 KiB, amdgpu_discovery.c), names the trace's registers.
    from .backend import CBackend
    # MI300: tinygrad's AM loads the sOS bundle's auxiliary set, which
    # Linux loads only below PMFW 85.115.0; the model's SMU then reports
    # such a PMFW so its PSP expects that set (ABI.md).
    cbackend = CBackend(a.backend, a.part, seed=0, strict=a.strict, old_pmfw=a.part.startswith("mi3"))
    vram = cbackend.vram()
    disc = a.discovery and pathlib.Path(a.discovery).read_bytes() or bytes(vram[len(vram) - (64 << 10):])
  else:
    disc = discovery_blob(a.part, a.discovery, a.nbio_seg5)
  syms = symbols.Symbols(discovery.parse(disc))
  tracer = trace.Tracer(syms)
  fw = firmware.install(tracer)
  if cbackend is not None:
    backend = cbackend
  elif a.backend == "responder":
    from .responder import Responder, PARTS
    linux = pathlib.Path(a.linux) if a.linux else REPO / "target" / "artifacts" / "linux-6.12"
    if not linux.exists(): raise SystemExit(f"{linux} missing: run `cargo xtask headers` (register reset values come from there)")
    backend = Responder(PARTS[a.part], disc, syms, tracer, strict=a.strict, state=a.state, linux=linux)
  dev = pcidev.VirtualPCIDevice(backend, tracer, pcibus=f"vgpu:{a.part}")

  from tinygrad.runtime.support.am.amdev import AMDev
  t0, ok, err, before = time.perf_counter(), False, None, []
  sys.setprofile(step_hook(tracer))
  try:
    adev = AMDev(dev)
    tracer.step("boot done (AMDev.__init__ returned)")
    boot_writes = tracer.writes
    if not a.no_queues: create_queues(adev, dev, tracer, probe=cbackend is not None)
    before = [f"before teardown, {h}" for h in getattr(backend, "hqds", [])] if a.teardown else []
    if a.teardown:
      # AM's own teardown (what `AMDDevice.finalize` calls): SDMA and GFX
      # fini_hw (the HQDs dequeued), clocks to level 0, the IH drained,
      # SCRATCH_REG6 finalized. The diff compares it on its own.
      tracer.step("harness: teardown (AMDev.fini)")
      adev.fini()
    ok = True
  except Exception as e:  # the run's outcome is reported, not hidden
    import traceback
    err = f"{type(e).__name__}: {e}\n" + "".join(traceback.format_exception(e)[-6:])
    tracer.step(f"STOPPED: {err}")
    boot_writes = tracer.writes
  finally:
    sys.setprofile(None)
  dt = time.perf_counter() - t0

  if a.out:
    pathlib.Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(a.out).write_text(tracer.text())
    if hasattr(backend, "summary"): pathlib.Path(a.out).with_suffix(".regs").write_text(backend.summary())
  refusals = getattr(backend, "refusals", [])
  print(f"am peer: {a.part} {'boot done' if ok else 'FAILED'} ({boot_writes} register writes to boot done, "
        f"{tracer.writes} in all, {tracer.reads} reads, {len(refusals)} refusals, {dt:.1f} s)")
  if err: print(f"  stopped: {err}")
  for r in refusals: print(f"  refused: {r}")
  for name, got, pin in fw.differing(): print(f"  firmware {name}: Debian sha256 {got[:16]} != AM pin {pin[:16]}")
  for h in before + getattr(backend, "hqds", []): print(f"  {h}")
  if hasattr(backend, "unruled"):
    print(f"  registers AM touched: {len(backend.touched)}; answered by a rule: {len(backend.touched) - len(backend.unruled())}; "
          f"plain storage: {len(backend.unruled())}")
  return 0 if ok and not refusals else 1

if __name__ == "__main__":
  sys.exit(main())
