//! GFXHUB v1.2 (GC 9.4.3): one VM hub per XCC, programmed as
//! `gfxhub_v1_2_xcc_gart_enable()` does for the XCCs of `xcc_mask`.
//!
//! `xccs` are the GC blocks of the XCCs, in the order of their logical
//! index (Linux: `adev->reg_offset[GC_HWIP][GET_INST(GC, i)]`); the caller
//! derives their bases from discovery.

use super::HubError;
use super::v9::{self, GFXHUB_1_2, HubV9Config};
use crate::bus::{ALL_ONES, Block, RegisterBus};
use crate::regs::gc_9_4_3_vm as r;

/// The GPU's place in an XGMI hive (`adev->gmc.xgmi`'s
/// `num_physical_nodes`, `physical_node_id`, `node_segment_size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XgmiInfo {
    pub node: u8,
    pub nodes: u8,
    /// Bytes.
    pub segment: u64,
}

impl XgmiInfo {
    /// `physical_node_id * node_segment_size`: what
    /// `gmc_v9_0_vram_gtt_location()` adds to the FB base and to
    /// `vram_base_offset`.
    pub const fn node_offset(&self) -> u64 {
        self.node as u64 * self.segment
    }
}

/// `max_num_physical_nodes` in `gfxhub_v1_2_get_xgmi_info()`.
pub const MAX_NODES: u8 = 8;

/// Why the XGMI registers were refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XgmiError {
    Hub(HubError),
    /// More nodes, or a higher node id, than `gfxhub_v1_2_get_xgmi_info()`
    /// accepts (it returns `-EINVAL`).
    OutOfRange {
        lfb_cntl: u32,
        /// The most nodes the hub's file accepts (8 here, 16 on Aldebaran).
        max_nodes: u8,
    },
}

impl core::fmt::Display for XgmiError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            XgmiError::Hub(e) => write!(f, "{e}"),
            XgmiError::OutOfRange {
                lfb_cntl,
                max_nodes,
            } => write!(
                f,
                "MC_VM_XGMI_LFB_CNTL = {lfb_cntl:#x} names more than {max_nodes} XGMI nodes or a node past the last"
            ),
        }
    }
}

impl From<HubError> for XgmiError {
    fn from(e: HubError) -> Self {
        XgmiError::Hub(e)
    }
}

/// `gfxhub_v1_2_get_xgmi_info()` on XCC 0's GC block: `None` when
/// `PF_MAX_REGION` is 0 ("xgmi is disabled"; barebell knows no
/// `connected_to_cpu` part), else the node, the node count
/// (`PF_MAX_REGION + 1`) and the segment (`PF_LFB_SIZE << 24`).
pub fn get_xgmi_info<B: RegisterBus + ?Sized>(
    xcc0: &Block<'_, B>,
) -> Result<Option<XgmiInfo>, XgmiError> {
    read_xgmi_info(
        xcc0,
        (r::MC_VM_XGMI_LFB_CNTL, r::MC_VM_XGMI_LFB_SIZE),
        MAX_NODES,
    )
}

/// The `*_get_xgmi_info()` read on a GC block whose `MC_VM_XGMI_LFB_CNTL`
/// and `_SIZE` are `regs` (the field layout is the same in every gfx9
/// header), accepting at most `max_nodes` nodes.
pub fn read_xgmi_info<B: RegisterBus + ?Sized>(
    xcc0: &Block<'_, B>,
    regs: (crate::regs::Reg, crate::regs::Reg),
    max_nodes: u8,
) -> Result<Option<XgmiInfo>, XgmiError> {
    let read = |reg: crate::regs::Reg| -> Result<u32, XgmiError> {
        let v = xcc0.read(reg).map_err(HubError::Register)?;
        if v == ALL_ONES {
            return Err(HubError::DeviceGone { name: reg.name }.into());
        }
        Ok(v)
    };
    let cntl = read(regs.0)?;
    let size = read(regs.1)?;
    let max_region = (cntl & r::PF_MAX_REGION_MASK) >> r::PF_MAX_REGION_SHIFT;
    if max_region == 0 {
        return Ok(None);
    }
    let nodes = max_region + 1;
    let node = cntl & r::PF_LFB_REGION_MASK;
    if nodes > u32::from(max_nodes) || node >= u32::from(max_nodes) {
        return Err(XgmiError::OutOfRange {
            lfb_cntl: cntl,
            max_nodes,
        });
    }
    Ok(Some(XgmiInfo {
        node: node as u8,
        nodes: nodes as u8,
        segment: u64::from(size & r::PF_LFB_SIZE_MASK) << 24,
    }))
}

/// `gfxhub_v1_2_xcc_gart_enable()` on bare metal: each step across every
/// XCC before the next step.
pub fn gart_enable<B: RegisterBus + ?Sized>(
    xccs: &[Block<'_, B>],
    cfg: &HubV9Config,
) -> Result<(), HubError> {
    cfg.check()?;
    let hub = &GFXHUB_1_2;
    v9::init_gart_aperture_regs(xccs, hub, cfg)?;
    v9::init_system_aperture_regs(xccs, hub, cfg)?;
    v9::init_tlb_regs(xccs, hub)?;
    v9::init_cache_regs(xccs, hub)?;
    v9::enable_system_domain(xccs, hub, cfg)?;
    v9::disable_identity_aperture(xccs, hub)?;
    v9::setup_vmid_config(xccs, hub)?;
    v9::program_invalidation(xccs, hub)
}

/// `gfxhub_v1_2_xcc_set_fault_enable_default()`.
pub fn set_fault_enable_default<B: RegisterBus + ?Sized>(
    xccs: &[Block<'_, B>],
    value: bool,
) -> Result<(), HubError> {
    v9::set_fault_enable_default(xccs, &GFXHUB_1_2, value)
}

/// `gfxhub_v1_2_xcc_setup_vm_pt_regs()`: `vmid`'s page-table base on
/// every XCC (what KFD's `set_vm_context_page_table_base` reaches).
pub fn setup_vm_pt_regs<B: RegisterBus + ?Sized>(
    xccs: &[Block<'_, B>],
    vmid: u32,
    page_table_base: u64,
) -> Result<(), HubError> {
    v9::setup_vm_pt_regs(xccs, &GFXHUB_1_2, vmid, page_table_base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regs::IpBases;

    /// Two registers at their `gc_9_4_3_offset.h` dwords (base 0).
    struct Lfb(u32, u32);

    impl RegisterBus for Lfb {
        fn read32(&self, at: usize) -> u32 {
            match at / 4 {
                0x957 => self.0,
                0x958 => self.1,
                _ => 0,
            }
        }
        fn write32(&self, _: usize, _: u32) {}
    }

    fn info(cntl: u32, size: u32) -> Result<Option<XgmiInfo>, XgmiError> {
        let bus = Lfb(cntl, size);
        get_xgmi_info(&Block::new(&bus, IpBases::default()))
    }

    /// `gfxhub_v1_2_get_xgmi_info()` by hand: PF_MAX_REGION 0 is "xgmi
    /// is disabled"; 0x73 is node 3 of 8; PF_LFB_SIZE 0x4000 is 256 GiB;
    /// more than 8 nodes or a node id past 7 is `-EINVAL`; all-ones is a
    /// device gone.
    #[test]
    fn the_hive_place_is_read_as_linux_reads_it() {
        assert_eq!(info(0, 0x4000), Ok(None));
        assert_eq!(info(0x3, 0x4000), Ok(None));
        let x = info(0x73, 0x4000).unwrap().unwrap();
        assert_eq!(
            x,
            XgmiInfo {
                node: 3,
                nodes: 8,
                segment: 0x40_0000_0000
            }
        );
        assert_eq!(x.node_offset(), 0xC0_0000_0000);
        // Bits above PF_LFB_SIZE are not the size.
        assert_eq!(info(0x10, 0xFFFE_0001).unwrap().unwrap().segment, 1 << 24);
        assert_eq!(
            info(0x80, 0x4000),
            Err(XgmiError::OutOfRange {
                lfb_cntl: 0x80,
                max_nodes: 8
            })
        );
        assert_eq!(
            info(0x78, 0x4000),
            Err(XgmiError::OutOfRange {
                lfb_cntl: 0x78,
                max_nodes: 8
            })
        );
        assert!(matches!(
            info(u32::MAX, 0),
            Err(XgmiError::Hub(HubError::DeviceGone { .. }))
        ));
    }
}
