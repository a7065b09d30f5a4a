//! Each XCC's shader arrays as the GRBM shows them to a driver.
//!
//! `GRBM_GFX_INDEX` selects one shader engine (SE) and one array (SH) for
//! the accesses that follow; `CC_GC_SHADER_ARRAY_CONFIG` then reads that
//! array's fused-off CUs and `GC_USER_SHADER_ARRAY_CONFIG` the ones the
//! driver turned off itself (both in `INACTIVE_CUS`, bits 31:16,
//! `gc_9_4_2_sh_mask.h`/`gc_9_4_3_sh_mask.h`). Linux counts a part's CUs
//! through exactly these: `gfx_v9_0_get_cu_info()` (GC 9.4.2) and
//! `gfx_v9_4_3_get_cu_info()` select each SE/SH
//! (`gfx_v9_0_select_se_sh()`), read both registers and count the bits of
//! `~(cc | user)` below `max_cu_per_sh`.
//!
//! *Model conventions* (no public source says them):
//! - which CUs are fused off: the part's active count per XCC
//!   ([`crate::parts::XccCount`]) spread evenly over its arrays, one more
//!   on the first arrays for a remainder, the highest CU slots off;
//! - `CC_GC_SHADER_ARRAY_CONFIG` ignores writes (a fuse);
//! - a read while the index broadcasts over SEs or SHs answers for SE 0 or
//!   SH 0; a write to `GC_USER_SHADER_ARRAY_CONFIG` then reaches every
//!   array the broadcast covers;
//! - an index naming no array reads every CU inactive.

use super::stored::byte_offset;
use crate::discovery::IpDesc;
use crate::parts::XccCount;
use crate::socregs::{Reg, array_fields, gc_9_4_2_arrays, gc_9_4_3_arrays};
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use spin::Mutex;

/// The fields, checked against the headers (`socregs::ARRAY_FIELD_FACTS`).
const INACTIVE_SHIFT: u32 = array_fields::INACTIVE_CUS_SHIFT;
const INACTIVE_MASK: u32 = array_fields::INACTIVE_CUS_MASK;
const SH_INDEX_SHIFT: u32 = array_fields::SH_INDEX_SHIFT;
const SE_INDEX_SHIFT: u32 = array_fields::SE_INDEX_SHIFT;
const SH_BROADCAST: u32 = array_fields::SH_BROADCAST_WRITES_MASK;
const SE_BROADCAST: u32 = array_fields::SE_BROADCAST_WRITES_MASK;

/// Which of the three registers an offset is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Which {
    Index,
    Fused,
    User,
}

/// One XCC's state.
struct Xcc {
    index: u32,
    /// Per array (`se * sh_per_se + sh`): user-disabled CUs, the field's
    /// bits as written.
    user: Vec<u32>,
}

/// The shader arrays of every XCC.
pub(super) struct ShaderArrays {
    layout: XccCount,
    /// Fused-off CUs per array (the `INACTIVE_CUS` bits), the same on
    /// every XCC.
    fused: Vec<u32>,
    at: BTreeMap<usize, (usize, Which)>,
    xccs: Mutex<Vec<Xcc>>,
}

/// The fused-off mask of each array of one XCC with `count`'s layout.
fn fused_masks(count: &XccCount) -> Vec<u32> {
    let l = count.arrays;
    let arrays = l.arrays().max(1);
    let slots = l.cu_per_sh.min(16);
    let active = count.cus_per_xcc.min(arrays * slots);
    (0..arrays)
        .map(|a| {
            let on = active / arrays + u32::from(a < active % arrays);
            let all = (1u32 << slots) - 1;
            let on_bits = (1u32 << on) - 1;
            (all & !on_bits) << INACTIVE_SHIFT
        })
        .collect()
}

impl ShaderArrays {
    /// The registers of every XCC in `xccs` (GC 9.4.3's table when
    /// `gc_9_4_3`, else GC 9.4.2's), for a part with `count`'s layout.
    pub(super) fn new(xccs: &[&IpDesc], count: XccCount, gc_9_4_3: bool) -> Self {
        let regs: [(Reg, Which); 3] = if gc_9_4_3 {
            [
                (gc_9_4_3_arrays::GRBM_GFX_INDEX, Which::Index),
                (gc_9_4_3_arrays::CC_GC_SHADER_ARRAY_CONFIG, Which::Fused),
                (gc_9_4_3_arrays::GC_USER_SHADER_ARRAY_CONFIG, Which::User),
            ]
        } else {
            [
                (gc_9_4_2_arrays::GRBM_GFX_INDEX, Which::Index),
                (gc_9_4_2_arrays::CC_GC_SHADER_ARRAY_CONFIG, Which::Fused),
                (gc_9_4_2_arrays::GC_USER_SHADER_ARRAY_CONFIG, Which::User),
            ]
        };
        let mut at = BTreeMap::new();
        for (x, ip) in xccs.iter().enumerate() {
            for (reg, which) in &regs {
                if let Some(off) = byte_offset(ip, reg) {
                    at.insert(off, (x, *which));
                }
            }
        }
        let arrays = count.arrays.arrays() as usize;
        ShaderArrays {
            layout: count,
            fused: fused_masks(&count),
            at,
            xccs: Mutex::new(
                xccs.iter()
                    .map(|_| Xcc {
                        index: 0,
                        user: alloc::vec![0; arrays],
                    })
                    .collect(),
            ),
        }
    }

    /// Every byte offset claimed, for the router.
    pub(super) fn offsets(&self) -> Vec<usize> {
        self.at.keys().copied().collect()
    }

    /// The arrays `index` selects: one for a read (SE 0/SH 0 for a
    /// broadcast), every covered one for a write. `None` entries name no
    /// array.
    fn selected(&self, index: u32, all: bool) -> Vec<Option<usize>> {
        let l = self.layout.arrays;
        let pick = |broadcast: bool, field: u32, n: u32| -> Vec<u32> {
            match (broadcast, all) {
                (true, true) => (0..n).collect(),
                (true, false) => alloc::vec![0],
                (false, _) => alloc::vec![field],
            }
        };
        let ses = pick(
            index & SE_BROADCAST != 0,
            (index >> SE_INDEX_SHIFT) & 0xFF,
            l.shader_engines,
        );
        let shs = pick(
            index & SH_BROADCAST != 0,
            (index >> SH_INDEX_SHIFT) & 0xFF,
            l.sh_per_se,
        );
        ses.iter()
            .flat_map(|&se| {
                shs.iter().map(move |&sh| {
                    (se < l.shader_engines && sh < l.sh_per_se)
                        .then_some((se * l.sh_per_se + sh) as usize)
                })
            })
            .collect()
    }
}

impl RegisterBus for ShaderArrays {
    fn read32(&self, at: usize) -> u32 {
        let Some(&(x, which)) = self.at.get(&at) else {
            return 0;
        };
        let xccs = self.xccs.lock();
        let Some(xcc) = xccs.get(x) else {
            return 0;
        };
        if which == Which::Index {
            return xcc.index;
        }
        let array = self.selected(xcc.index, false).first().copied().flatten();
        match (which, array) {
            (_, None) => INACTIVE_MASK,
            (Which::Fused, Some(a)) => self.fused.get(a).copied().unwrap_or(INACTIVE_MASK),
            (_, Some(a)) => xcc.user.get(a).copied().unwrap_or(0),
        }
    }

    fn write32(&self, at: usize, v: u32) {
        let Some(&(x, which)) = self.at.get(&at) else {
            return;
        };
        let mut xccs = self.xccs.lock();
        let Some(xcc) = xccs.get_mut(x) else {
            return;
        };
        match which {
            Which::Index => xcc.index = v,
            Which::Fused => {}
            Which::User => {
                for a in self.selected(xcc.index, true).into_iter().flatten() {
                    if let Some(u) = xcc.user.get_mut(a) {
                        *u = v & INACTIVE_MASK;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parts::ArrayLayout;

    fn count(cus: u32, se: u32, cu_per_sh: u32) -> XccCount {
        XccCount {
            xccs: 1,
            cus_per_xcc: cus,
            arrays: ArrayLayout {
                shader_engines: se,
                sh_per_se: 1,
                cu_per_sh,
            },
        }
    }

    /// Counts what `gfx_v9_0_get_cu_info()` would: per array, the bits of
    /// `~(cc | user) >> 16` below `cu_per_sh`.
    fn linux_count(s: &ShaderArrays, cc: usize, user: usize, index: usize, se: u32) -> u32 {
        (0..se)
            .map(|i| {
                s.write32(index, i << SE_INDEX_SHIFT | 1 << 30);
                let data = (s.read32(cc) | s.read32(user)) >> 16;
                (!data & 0xFFFF).count_ones()
            })
            .sum()
    }

    #[test]
    fn the_split_leaves_the_parts_active_count_on() {
        // MI210: 104 of 8 x 16, 13 on per array, slots 13..15 off.
        let m = fused_masks(&count(104, 8, 16));
        assert_eq!(m, alloc::vec![0xE000_0000; 8]);
        // MI300X: 38 of 4 x 10: 10, 10, 9, 9 on.
        let m = fused_masks(&count(38, 4, 10));
        assert_eq!(
            m,
            alloc::vec![0x0000_0000, 0x0000_0000, 0x0200_0000, 0x0200_0000]
        );
    }

    #[test]
    fn linuxs_walk_over_the_index_counts_the_active_cus() {
        let ip = crate::parts::mi210();
        let xccs: Vec<&IpDesc> = ip
            .firmware
            .desc
            .dies
            .iter()
            .flat_map(|d| d.iter())
            .filter(|i| i.hw_id == crate::discovery::GC_HWID)
            .collect();
        let s = ShaderArrays::new(&xccs, count(104, 8, 16), false);
        let off = |r: &Reg| byte_offset(xccs[0], r).unwrap_or(usize::MAX);
        let (cc, user, index) = (
            off(&gc_9_4_2_arrays::CC_GC_SHADER_ARRAY_CONFIG),
            off(&gc_9_4_2_arrays::GC_USER_SHADER_ARRAY_CONFIG),
            off(&gc_9_4_2_arrays::GRBM_GFX_INDEX),
        );
        assert_eq!(linux_count(&s, cc, user, index, 8), 104);
        // The driver turns CU 0 of SE 3 off (`amdgpu.disable_cu=3.0.0`):
        // one fewer; the fuse ignores writes.
        s.write32(index, 3 << SE_INDEX_SHIFT | 1 << 30);
        s.write32(user, 1 << 16);
        s.write32(cc, 0);
        assert_eq!(linux_count(&s, cc, user, index, 8), 103);
        // A broadcast write reaches every array.
        s.write32(index, SE_BROADCAST | SH_BROADCAST | 1 << 30);
        s.write32(user, 0);
        assert_eq!(linux_count(&s, cc, user, index, 8), 104);
        // SE 9 does not exist: all inactive.
        s.write32(index, 9 << SE_INDEX_SHIFT);
        assert_eq!(s.read32(cc), INACTIVE_MASK);
        assert_eq!(s.read32(index), 9 << SE_INDEX_SHIFT);
    }
}
