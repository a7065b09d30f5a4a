"""Reads an IP discovery binary (Linux `include/discovery.h`) far enough to
name registers: each IP's hardware id, instance, version and segment bases.

Written from the header's layout with plain offsets, independently of
tinygrad's `_run_discovery` (which AM itself runs on the same bytes), so the
trace's names do not depend on the code under observation.
"""
import struct, dataclasses

BINARY_SIGNATURE, IPDS = 0x28211407, 0x53445049

# hw ids (`soc15_hw_ip.h`) of the blocks AM programs, with the prefix of the
# register module tinygrad's `_build_regs` imports for them.
HWID = {"GC": 11, "MP0": 255, "MP1": 1, "NBIF": 108, "MMHUB": 34, "OSSSYS": 40, "HDP": 41, "SDMA0": 42, "VCN": 12}

@dataclasses.dataclass(frozen=True)
class Ip:
  hw_id: int
  instance: int
  version: tuple[int, int, int]
  bases: tuple[int, ...]

def parse(blob: bytes) -> list[Ip]:
  u16 = lambda at: struct.unpack_from("<H", blob, at)[0]
  u32 = lambda at: struct.unpack_from("<I", blob, at)[0]
  if u32(0) != BINARY_SIGNATURE: raise ValueError(f"binary_header.binary_signature {u32(0):#x} != {BINARY_SIGNATURE:#x}")
  ip_table = u16(12)  # table_list[IP_DISCOVERY].offset
  if u32(ip_table) != IPDS: raise ValueError("ip_discovery_header.signature is not 'IPDS'")
  version, num_dies = u16(ip_table + 4), u16(ip_table + 12)
  wide = version >= 4 and blob[ip_table + 78] & 1  # base_addr_64_bit (v4 only)
  ips = []
  for die in range(num_dies):
    at = u16(ip_table + 16 + 4 * die)  # die_info[die].die_offset
    num_ips, at = u16(at + 2), at + 4
    for _ in range(num_ips):
      hw_id, inst, nbase = u16(at), blob[at + 2], blob[at + 3]
      ver, at = (blob[at + 4], blob[at + 5], blob[at + 6]), at + 8
      fmt, size = ("<Q", 8) if wide else ("<I", 4)
      bases = tuple(struct.unpack_from(fmt, blob, at + size * i)[0] for i in range(nbase))
      ips.append(Ip(hw_id, inst, ver, bases))
      at += size * nbase
  return ips

def find(ips: list[Ip], name: str, inst: int = 0) -> Ip:
  for ip in ips:
    if ip.hw_id == HWID[name] and ip.instance == inst: return ip
  raise KeyError(f"no {name} instance {inst} in the discovery table")

def find_all(ips: list[Ip], name: str) -> list[Ip]:
  """Every instance of `name`, in instance order."""
  return sorted((ip for ip in ips if ip.hw_id == HWID[name]), key=lambda ip: ip.instance)
