//! The GC 9.4.3 registers the model knows by name but whose effect it
//! does not model (the `*_stored` tables of [`crate::socregs`]): each
//! XCC's, each SDMA instance's and each AID's NBIO copy, kept as
//! written, reading 0 until written (*model value*; no GC 9.4.3,
//! SDMA 4.4.2 or NBIO 7.9 default header is public), except the NBIO
//! strap that holds the ASIC revision ([`STRAP_REV_ID`]). Claimed so that
//! strict mode refuses only registers the model does not know at all.

use crate::discovery::IpDesc;
use crate::socregs::{self, Reg};
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use barebell::bus::RegisterBus;
use spin::Mutex;

/// An IP's segment bases as dwords (bits 29:0, as Linux keeps them,
/// `amdgpu_discovery_reg_base_init()`), every segment the table lists.
pub(super) fn byte_offset(ip: &IpDesc, reg: &Reg) -> Option<usize> {
    let base = *ip.bases.get(usize::from(reg.base_idx))? & 0x3FFF_FFFF;
    usize::try_from(base + u64::from(reg.offset))
        .ok()?
        .checked_mul(4)
}

/// The revision `RCC_STRAP0_RCC_DEV0_EPF0_STRAP0.STRAP_ATI_REV_ID_DEV0_F0`
/// (bits 27:24, `nbio_7_9_0_sh_mask.h`) reports: 1 (*model value*).
/// Linux applies one golden setting to revision 0 and another to the
/// rest (`gfx_v9_4_3_init_golden_registers()`); tinygrad's AM, which has
/// run on production MI300X, always applies the second
/// (`TCP_UTCL1_CNTL2.SPARE` = 1), so those parts are not revision 0.
pub const STRAP_REV_ID: u32 = 1;

/// The stored registers, by byte offset.
pub(super) struct Stored {
    offsets: Vec<usize>,
    values: Mutex<BTreeMap<usize, u32>>,
}

impl Stored {
    /// The stored registers of every XCC, SDMA instance and NBIO.
    /// `gc_9_4_3`: the MI300 tables; otherwise GC 9.4.2's (Aldebaran:
    /// no SDMA 4.4.2 or NBIO 7.9 registers to keep).
    pub(super) fn new(
        xccs: &[&IpDesc],
        sdma: &[&IpDesc],
        nbifs: &[&IpDesc],
        gc_9_4_3: bool,
    ) -> Self {
        let mut offsets = Vec::new();
        let tables: [(&[&IpDesc], &[Reg]); 3] = if gc_9_4_3 {
            [
                (xccs, socregs::gc_9_4_3_stored::ALL),
                (sdma, socregs::sdma_4_4_2_stored::ALL),
                (nbifs, socregs::nbio_7_9_0_stored::ALL),
            ]
        } else {
            [
                (xccs, socregs::gc_9_4_2_stored::ALL),
                (&[], &[]),
                (&[], &[]),
            ]
        };
        for (ips, regs) in tables {
            for ip in ips {
                offsets.extend(regs.iter().filter_map(|r| byte_offset(ip, r)));
            }
        }
        offsets.sort_unstable();
        offsets.dedup();
        let strap = &socregs::nbio_7_9_0_stored::RCC_STRAP0_RCC_DEV0_EPF0_STRAP0;
        let values = nbifs
            .iter()
            .filter(|_| gc_9_4_3)
            .filter_map(|ip| byte_offset(ip, strap))
            .map(|at| (at, STRAP_REV_ID << 24))
            .collect();
        Stored {
            offsets,
            values: Mutex::new(values),
        }
    }

    /// Every byte offset claimed, for the router.
    pub(super) fn offsets(&self) -> Vec<usize> {
        self.offsets.clone()
    }
}

impl RegisterBus for Stored {
    fn read32(&self, at: usize) -> u32 {
        self.values.lock().get(&at).copied().unwrap_or(0)
    }
    fn write32(&self, at: usize, v: u32) {
        // Only claimed offsets reach here (the router's claim), so the
        // map holds at most `offsets.len()` entries.
        self.values.lock().insert(at, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_xccs_scratch_register_is_its_segment_1_base_plus_the_offset() {
        let part = crate::parts::mi300x();
        let xccs: Vec<&IpDesc> = part
            .firmware
            .desc
            .dies
            .iter()
            .flat_map(|d| d.iter())
            .filter(|ip| ip.hw_id == crate::discovery::GC_HWID)
            .collect();
        let s = Stored::new(&xccs, &[], &[], true);
        // XCC 0's segment 1 is the model's 0xA000; SCRATCH_REG7 is 0x2047
        // there (`gc_9_4_3_offset.h`), by hand.
        assert!(s.offsets().contains(&((0xA000 + 0x2047) * 4)));
        s.write32((0xA000 + 0x2047) * 4, 0xA000_0008);
        assert_eq!(s.read32((0xA000 + 0x2047) * 4), 0xA000_0008);
        assert_eq!(s.read32((0xA000 + 0x2046) * 4), 0);
    }
}
