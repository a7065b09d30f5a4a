"""AM's firmware fetch, pointed at Debian's blobs.

`AMFirmware.load_fw` (amdev.py) calls `fetch_fw("amdgpu", name, fw.hashes[name])`,
which downloads the blob pinned by sha256 from linux-firmware. Here the same
call reads /lib/firmware/amdgpu/<name> (package firmware-amd-graphics)
instead, and records every blob whose sha256 differs from AM's pin; AM's own
header parsing then runs on these bytes unchanged. Installed by replacing the
`fetch_fw` name amdev.py imported (tinygrad's files are not touched).
"""
import hashlib, pathlib

FIRMWARE_DIR = pathlib.Path("/lib/firmware/amdgpu")

class DebianFirmware:
  def __init__(self, tracer, directory: pathlib.Path = FIRMWARE_DIR):
    self.tracer, self.dir, self.loaded = tracer, directory, []  # (name, debian sha256, AM's pinned sha256)

  def __call__(self, path: str, name: str, sha256: str) -> bytes:
    if path != "amdgpu": raise FileNotFoundError(f"firmware path {path!r}: only amdgpu blobs are served")
    blob = (self.dir / name).read_bytes()
    got = hashlib.sha256(blob).hexdigest()
    self.loaded.append((name, got, sha256))
    same = "equals AM's pin" if got == sha256 else f"differs from AM's pin {sha256[:16]}"
    self.tracer.note(f"firmware {name}: {len(blob):#x} bytes, sha256 {got[:16]} {same}")
    return blob

  def differing(self) -> list[tuple[str, str, str]]: return [x for x in self.loaded if x[1] != x[2]]

def install(tracer) -> DebianFirmware:
  from tinygrad.runtime.support.am import amdev
  fw = DebianFirmware(tracer)
  amdev.fetch_fw = fw
  return fw
