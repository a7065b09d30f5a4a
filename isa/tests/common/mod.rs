//! Test harness: builds the suite's OpenCL C kernels with clang-19, loads the
//! code object into a host memory, fills the kernarg segment (explicit and
//! hidden arguments from the metadata note) and runs dispatches through
//! `barebell_isa::launch`.
#![allow(dead_code)]
// Test-harness code: a failed step should abort the test with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use barebell_isa::Target;
use barebell_isa::launch::{Dispatch, LaunchConfig, LaunchError, Share, Stats, launch};
use barebell_isa::mem::{MemFault, Memory};
use object::{Object, ObjectSegment, ObjectSymbol};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// Sparse host memory: regions keyed by base address.
#[derive(Default)]
pub struct HostMem {
    pub regions: BTreeMap<u64, Vec<u8>>,
}

impl HostMem {
    pub fn map(&mut self, base: u64, data: Vec<u8>) {
        self.regions.insert(base, data);
    }
    fn find(&mut self, addr: u64, len: usize) -> Option<(&mut Vec<u8>, usize)> {
        let (&base, region) = self.regions.range_mut(..=addr).next_back()?;
        let off = (addr - base) as usize;
        if off + len <= region.len() {
            Some((region, off))
        } else {
            None
        }
    }
}

impl Memory for HostMem {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        let len = buf.len();
        let (r, off) = self.find(addr, len).ok_or(MemFault {
            addr,
            len: len as u32,
            write: false,
        })?;
        buf.copy_from_slice(&r[off..off + len]);
        Ok(())
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        let len = data.len();
        let (r, off) = self.find(addr, len).ok_or(MemFault {
            addr,
            len: len as u32,
            write: true,
        })?;
        r[off..off + len].copy_from_slice(data);
        Ok(())
    }
}

/// CDNA3 (wave64 only); the kernels whose tests run it use `each_all`.
pub const GFX942: (Target, bool) = (Target::Gfx942, true);

/// CDNA2 (MI210, wave64 only): run by the same kernels as gfx942.
pub const GFX90A: (Target, bool) = (Target::Gfx90a, true);

pub const TARGETS: [(Target, bool); 4] = [
    (Target::Gfx1100, false),
    (Target::Gfx1100, true),
    (Target::Gfx1201, false),
    (Target::Gfx1201, true),
];

fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("kernels")
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("isa-kernels");
    let _ = std::fs::create_dir_all(&d);
    d
}

/// Builds `suite.cl` for a target and wave size; returns the linked code
/// object path. Fails loudly (not a skip) when clang-19 is missing.
pub fn build(target: Target, wave64: bool) -> PathBuf {
    static BUILT: OnceLock<Mutex<BTreeMap<(String, bool), PathBuf>>> = OnceLock::new();
    let m = BUILT.get_or_init(|| Mutex::new(BTreeMap::new()));
    let mut g = m.lock().unwrap();
    let key = (target.mcpu().to_string(), wave64);
    if let Some(p) = g.get(&key) {
        return p.clone();
    }
    let dir = out_dir();
    let stem = format!("suite_{}_w{}", target.mcpu(), if wave64 { 64 } else { 32 });
    let obj = dir.join(format!("{stem}.o"));
    let so = dir.join(format!("{stem}.so"));
    let mut cc = Command::new("clang-19");
    cc.args([
        "-target",
        "amdgcn-amd-amdhsa",
        &format!("-mcpu={}", target.mcpu()),
        "-nogpulib",
        "-O2",
        "-cl-std=CL2.0",
        "-x",
        "cl",
        "-c",
    ]);
    if wave64 {
        cc.arg("-mwavefrontsize64");
    }
    cc.arg("-I").arg(kernels_dir());
    cc.arg(kernels_dir().join("suite.cl")).arg("-o").arg(&obj);
    let st = cc.status().expect(
        "clang-19 is required to build the ISA test kernels (apt: clang-19; `cargo xtask deps`)",
    );
    assert!(st.success(), "clang-19 failed on suite.cl");
    let st = Command::new("ld.lld-19")
        .args(["-shared"])
        .arg(&obj)
        .arg("-o")
        .arg(&so)
        .status()
        .expect(
            "ld.lld-19 is required to link the ISA test kernels (apt: lld-19; `cargo xtask deps`)",
        );
    assert!(st.success(), "ld.lld-19 failed");
    g.insert(key, so.clone());
    so
}

#[derive(Debug, Clone)]
pub struct ArgMeta {
    pub offset: usize,
    pub size: usize,
    pub kind: String,
}

#[derive(Debug, Clone)]
pub struct KernelMeta {
    pub name: String,
    pub args: Vec<ArgMeta>,
    pub kernarg_size: usize,
}

/// Parses the NT_AMDGPU_METADATA note (msgpack) of a code object.
pub fn metadata(elf: &[u8]) -> Vec<KernelMeta> {
    let file = object::File::parse(elf).unwrap();
    let mut out = Vec::new();
    for sec in file.sections() {
        use object::ObjectSection;
        if sec.name().unwrap_or("") != ".note" {
            continue;
        }
        let data = sec.data().unwrap();
        let mut p = 0;
        while p + 12 <= data.len() {
            let namesz = u32::from_le_bytes(data[p..p + 4].try_into().unwrap()) as usize;
            let descsz = u32::from_le_bytes(data[p + 4..p + 8].try_into().unwrap()) as usize;
            let ty = u32::from_le_bytes(data[p + 8..p + 12].try_into().unwrap());
            let name_at = p + 12;
            let desc_at = name_at + namesz.div_ceil(4) * 4;
            if ty == 32 {
                let mut desc = &data[desc_at..desc_at + descsz];
                let v = rmpv::decode::read_value(&mut desc).unwrap();
                let get = |m: &rmpv::Value, k: &str| -> Option<rmpv::Value> {
                    m.as_map()?
                        .iter()
                        .find(|(kk, _)| kk.as_str() == Some(k))
                        .map(|(_, v)| v.clone())
                };
                for k in get(&v, "amdhsa.kernels").unwrap().as_array().unwrap() {
                    let name = get(k, ".name").unwrap().as_str().unwrap().to_string();
                    let kernarg_size =
                        get(k, ".kernarg_segment_size").unwrap().as_u64().unwrap() as usize;
                    let mut args = Vec::new();
                    if let Some(a) = get(k, ".args") {
                        for arg in a.as_array().unwrap() {
                            args.push(ArgMeta {
                                offset: get(arg, ".offset").unwrap().as_u64().unwrap() as usize,
                                size: get(arg, ".size").unwrap().as_u64().unwrap() as usize,
                                kind: get(arg, ".value_kind")
                                    .unwrap()
                                    .as_str()
                                    .unwrap()
                                    .to_string(),
                            });
                        }
                    }
                    out.push(KernelMeta {
                        name,
                        args,
                        kernarg_size,
                    });
                }
            }
            p = desc_at + descsz.div_ceil(4) * 4;
        }
    }
    out
}

/// One kernel argument as the test gives it.
#[derive(Debug, Clone)]
pub enum Arg {
    /// A global buffer with its initial contents (read back after the run).
    Buf(Vec<u8>),
    /// A by-value argument's bytes.
    Val(Vec<u8>),
}

pub fn buf<T: Copy>(v: &[T]) -> Arg {
    let n = std::mem::size_of_val(v);
    // SAFETY: reading the bytes of a slice of plain Copy values.
    let b = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, n) };
    Arg::Buf(b.to_vec())
}
pub fn val<T: Copy>(v: T) -> Arg {
    let n = std::mem::size_of::<T>();
    // SAFETY: reading the bytes of a plain Copy value.
    let b = unsafe { std::slice::from_raw_parts(&v as *const T as *const u8, n) };
    Arg::Val(b.to_vec())
}
pub fn from_bytes<T: Copy + Default>(b: &[u8]) -> Vec<T> {
    let n = b.len() / std::mem::size_of::<T>();
    let mut v = vec![T::default(); n];
    // SAFETY: copying bytes into a Vec of plain Copy values of the same total size.
    unsafe {
        std::ptr::copy_nonoverlapping(
            b.as_ptr(),
            v.as_mut_ptr() as *mut u8,
            n * std::mem::size_of::<T>(),
        )
    };
    v
}

pub struct Run {
    pub bufs: Vec<Vec<u8>>,
    pub stats: Stats,
}

const CODE_BASE: u64 = 0x7000_0000_0000;
const KERNARG_BASE: u64 = 0x7100_0000_0000;
const PACKET_BASE: u64 = 0x7200_0000_0000;
const BUF_BASE: u64 = 0x7300_0000_0000;

/// Runs `kernel` over `grid` work-items in workgroups of `wg`.
pub fn run(
    target: Target,
    wave64: bool,
    kernel: &str,
    args: &[Arg],
    grid: [u32; 3],
    wg: [u16; 3],
    seed: u64,
) -> Result<Run, LaunchError> {
    run_shares(target, wave64, kernel, args, grid, wg, seed, &[Share::ALL]).map(|(r, _)| r)
}

/// [`run`] with the dispatch launched once per share over the same memory
/// (several XCCs running one dispatch); returns each launch's counts.
#[allow(clippy::too_many_arguments)]
pub fn run_shares(
    target: Target,
    wave64: bool,
    kernel: &str,
    args: &[Arg],
    grid: [u32; 3],
    wg: [u16; 3],
    seed: u64,
    shares: &[Share],
) -> Result<(Run, Vec<Stats>), LaunchError> {
    let ap = barebell_isa::exec::Apertures::default();
    run_apertures(target, wave64, kernel, args, grid, wg, seed, shares, ap)
}

/// [`run_shares`] with the waves' LDS and scratch apertures `ap` (what a
/// device takes from the queue's VMID's `SH_MEM_BASES`).
#[allow(clippy::too_many_arguments, dead_code)]
pub fn run_apertures(
    target: Target,
    wave64: bool,
    kernel: &str,
    args: &[Arg],
    grid: [u32; 3],
    wg: [u16; 3],
    seed: u64,
    shares: &[Share],
    ap: barebell_isa::exec::Apertures,
) -> Result<(Run, Vec<Stats>), LaunchError> {
    let so = build(target, wave64);
    let elf = std::fs::read(&so).unwrap();
    let meta = metadata(&elf);
    let km = meta
        .iter()
        .find(|k| k.name == kernel)
        .unwrap_or_else(|| panic!("kernel {kernel} not in the code object"));
    let file = object::File::parse(&*elf).unwrap();
    let mut mem = HostMem::default();
    // load segments
    let mut image = vec![0u8; 0];
    for seg in file.segments() {
        let (addr, size) = (seg.address() as usize, seg.size() as usize);
        if image.len() < addr + size {
            image.resize(addr + size, 0);
        }
        let d = seg.data().unwrap();
        image[addr..addr + d.len()].copy_from_slice(d);
    }
    image.resize(image.len() + 64, 0);
    let kd_sym = file
        .symbols()
        .find(|s| s.name() == Ok(&format!("{kernel}.kd")))
        .expect("kernel descriptor symbol");
    let kernel_object = CODE_BASE + kd_sym.address();
    // The packet's group segment is the whole LDS allocation, the
    // descriptor's fixed part included, as ROCR fills it
    // (`group_segment_fixed_size` is the descriptor's first dword).
    let at = kd_sym.address() as usize;
    let group_segment_size = u32::from_le_bytes(image[at..at + 4].try_into().unwrap());
    // The private segment from the descriptor too
    // (`private_segment_fixed_size`, its second dword), as ROCR and CLR
    // fill the packet: the launch bounds scratch by the packet alone.
    let private_segment_size = u32::from_le_bytes(image[at + 4..at + 8].try_into().unwrap());
    mem.map(CODE_BASE, image);
    // buffers and kernargs
    let mut ka = vec![0u8; km.kernarg_size.max(256)];
    let explicit: Vec<&ArgMeta> = km
        .args
        .iter()
        .filter(|a| !a.kind.starts_with("hidden_"))
        .collect();
    assert_eq!(explicit.len(), args.len(), "{kernel}: argument count");
    let mut buf_addrs = Vec::new();
    let mut next_buf = BUF_BASE;
    for (m, a) in explicit.iter().zip(args) {
        match a {
            Arg::Buf(b) => {
                let addr = next_buf;
                next_buf += (b.len() as u64 + 0xffff) & !0xfff;
                next_buf += 0x1000;
                mem.map(addr, b.clone());
                ka[m.offset..m.offset + 8].copy_from_slice(&addr.to_le_bytes());
                buf_addrs.push((addr, b.len()));
            }
            Arg::Val(v) => ka[m.offset..m.offset + v.len()].copy_from_slice(v),
        }
    }
    let ngroups: [u32; 3] = std::array::from_fn(|i| grid[i].div_ceil(u32::from(wg[i])));
    for m in km.args.iter().filter(|a| a.kind.starts_with("hidden_")) {
        let put = |ka: &mut Vec<u8>, v: u64| {
            ka[m.offset..m.offset + m.size].copy_from_slice(&v.to_le_bytes()[..m.size])
        };
        let dims = if grid[2] > 1 {
            3
        } else if grid[1] > 1 {
            2
        } else {
            1
        };
        match m.kind.as_str() {
            "hidden_block_count_x" => put(&mut ka, ngroups[0].into()),
            "hidden_block_count_y" => put(&mut ka, ngroups[1].into()),
            "hidden_block_count_z" => put(&mut ka, ngroups[2].into()),
            "hidden_group_size_x" => put(&mut ka, wg[0].into()),
            "hidden_group_size_y" => put(&mut ka, wg[1].into()),
            "hidden_group_size_z" => put(&mut ka, wg[2].into()),
            "hidden_remainder_x" => put(&mut ka, (grid[0] % u32::from(wg[0])).into()),
            "hidden_remainder_y" => put(&mut ka, (grid[1] % u32::from(wg[1])).into()),
            "hidden_remainder_z" => put(&mut ka, (grid[2] % u32::from(wg[2])).into()),
            "hidden_grid_dims" => put(&mut ka, dims),
            _ => {}
        }
    }
    mem.map(KERNARG_BASE, ka);
    // The dispatch packet, as the kernel reads it through the dispatch ptr
    // (hsa_kernel_dispatch_packet_t layout).
    let mut pkt = vec![0u8; 64];
    let dims = if grid[2] > 1 {
        3u16
    } else if grid[1] > 1 {
        2
    } else {
        1
    };
    pkt[2..4].copy_from_slice(&dims.to_le_bytes());
    for i in 0..3 {
        pkt[4 + 2 * i..6 + 2 * i].copy_from_slice(&wg[i].to_le_bytes());
        pkt[12 + 4 * i..16 + 4 * i].copy_from_slice(&grid[i].to_le_bytes());
    }
    pkt[32..40].copy_from_slice(&kernel_object.to_le_bytes());
    pkt[40..48].copy_from_slice(&KERNARG_BASE.to_le_bytes());
    mem.map(PACKET_BASE, pkt);
    let d = Dispatch {
        setup_dims: dims as u8,
        workgroup_size: wg,
        grid_size: grid,
        private_segment_size,
        group_segment_size,
        kernel_object,
        kernarg_address: KERNARG_BASE,
        packet_address: PACKET_BASE,
        queue_address: 0,
        dispatch_id: 1,
    };
    let mut per_share = Vec::new();
    let mut stats = Stats::default();
    for share in shares {
        let mut cfg = LaunchConfig::new(target);
        cfg.seed = seed;
        cfg.share = *share;
        cfg.apertures = ap;
        let s = launch(&mut mem, &cfg, &d)?;
        stats.workgroups += s.workgroups;
        stats.waves += s.waves;
        stats.instructions += s.instructions;
        stats.lane_instructions += s.lane_instructions;
        per_share.push(s);
    }
    let bufs = buf_addrs
        .iter()
        .map(|&(a, n)| {
            let mut b = vec![0u8; n];
            mem.read(a, &mut b).unwrap();
            b
        })
        .collect();
    Ok((Run { bufs, stats }, per_share))
}

/// splitmix64 for seeded test inputs.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
    /// Floats with NaN, infinities, zeros and subnormals mixed in.
    pub fn f32_special(&mut self) -> f32 {
        match self.next() % 16 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => -0.0,
            4 => f32::from_bits((self.u32() & 0x007f_ffff) | 1),
            5 => -f32::from_bits((self.u32() & 0x007f_ffff) | 1),
            _ => (self.u32() as i32 as f32) / 65536.0,
        }
    }
}
