//! The memory the interpreter reads code, kernel descriptors, kernargs and
//! global data through. The device model implements it over its page-table
//! walk; tests implement it over host memory.

/// A failed access: nothing is mapped at `addr` (or the access crosses out of
/// a mapping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemFault {
    pub addr: u64,
    pub len: u32,
    pub write: bool,
}

impl core::fmt::Display for MemFault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} of {} bytes at {:#x} hits unmapped memory",
            if self.write { "write" } else { "read" },
            self.len,
            self.addr
        )
    }
}

/// Read-modify-write operations of the global/flat and LDS atomics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    Swap,
    /// Compare-and-swap: store `src` if the old value equals `cmp`.
    CmpSwap,
    Add,
    Sub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    /// `old >= src ? 0 : old + 1`.
    Inc,
    /// `old == 0 || old > src ? src : old - 1`.
    Dec,
    FAdd,
    FMin,
    FMax,
}

impl AtomicOp {
    /// The new memory value for `old`, operand `src` and comparand `cmp`, on
    /// `size`-byte (4 or 8) values.
    pub fn apply(self, old: u64, src: u64, cmp: u64, size: u8) -> u64 {
        let mask = if size == 8 { u64::MAX } else { 0xffff_ffff };
        let (o, s) = (old & mask, src & mask);
        let sext = |v: u64| -> i64 {
            if size == 8 {
                v as i64
            } else {
                i64::from(v as u32 as i32)
            }
        };
        let r = match self {
            AtomicOp::Swap => s,
            AtomicOp::CmpSwap => {
                if o == cmp & mask {
                    s
                } else {
                    o
                }
            }
            AtomicOp::Add => o.wrapping_add(s),
            AtomicOp::Sub => o.wrapping_sub(s),
            AtomicOp::SMin => {
                if sext(s) < sext(o) {
                    s
                } else {
                    o
                }
            }
            AtomicOp::SMax => {
                if sext(s) > sext(o) {
                    s
                } else {
                    o
                }
            }
            AtomicOp::UMin => o.min(s),
            AtomicOp::UMax => o.max(s),
            AtomicOp::And => o & s,
            AtomicOp::Or => o | s,
            AtomicOp::Xor => o ^ s,
            AtomicOp::Inc => {
                if o >= s {
                    0
                } else {
                    o + 1
                }
            }
            AtomicOp::Dec => {
                if o == 0 || o > s {
                    s
                } else {
                    o - 1
                }
            }
            AtomicOp::FAdd | AtomicOp::FMin | AtomicOp::FMax => {
                if size == 8 {
                    let (a, b) = (f64::from_bits(o), f64::from_bits(s));
                    let r = match self {
                        AtomicOp::FAdd => a + b,
                        AtomicOp::FMin => a.min(b),
                        _ => a.max(b),
                    };
                    r.to_bits()
                } else {
                    let (a, b) = (f32::from_bits(o as u32), f32::from_bits(s as u32));
                    let r = match self {
                        AtomicOp::FAdd => a + b,
                        AtomicOp::FMin => a.min(b),
                        _ => a.max(b),
                    };
                    u64::from(r.to_bits())
                }
            }
        };
        r & mask
    }
}

/// Byte-addressed memory with a typed fault on unmapped addresses.
pub trait Memory {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault>;
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemFault>;
    /// An instruction fetch: a read that a GPU's page tables must allow
    /// for execution (`AMDGPU_PTE_EXECUTABLE`). By default, a read.
    fn fetch(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), MemFault> {
        self.read(addr, buf)
    }
    /// Atomically applies `op` to the `size`-byte (4 or 8) value at `addr`
    /// and returns the old value. The default reads then writes, which is
    /// atomic for a single-threaded model.
    fn atomic(
        &mut self,
        addr: u64,
        op: AtomicOp,
        size: u8,
        src: u64,
        cmp: u64,
    ) -> Result<u64, MemFault> {
        let n = usize::from(size.min(8));
        let mut b = [0u8; 8];
        self.read(addr, &mut b[..n])?;
        let old = u64::from_le_bytes(b);
        let new = op.apply(old, src, cmp, size);
        self.write(addr, &new.to_le_bytes()[..n])?;
        Ok(old)
    }
}
