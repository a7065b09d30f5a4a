//! The VFIO and iommufd user API: ioctl numbers, flags and argument
//! structs, each checked against Linux 6.12 `linux/vfio.h` and
//! `linux/iommufd.h`.
//!
//! VFIO's ioctls are all `_IO(';', base + n)`: no size or direction is
//! encoded, the struct's `argsz`/`size` field carries the size instead.

use barebell_facts::{Fact, layout_facts};

/// `_IO(type, nr)` from asm-generic/ioctl.h: type in bits [15:8], number
/// in [7:0], no direction and no size.
const fn io(ty: u8, nr: u8) -> u64 {
    (ty as u64) << 8 | nr as u64
}

crate::checked_consts! { "linux/vfio.h", FACTS;
    VFIO_TYPE: u8 = b';' => "VFIO_TYPE";
    VFIO_BASE: u8 = 100 => "VFIO_BASE";
    VFIO_API_VERSION: i32 = 0 => "VFIO_API_VERSION";
    VFIO_TYPE1V2_IOMMU: u64 = 3 => "VFIO_TYPE1v2_IOMMU";
    VFIO_GET_API_VERSION: u64 = io(VFIO_TYPE, VFIO_BASE) => "VFIO_GET_API_VERSION";
    VFIO_CHECK_EXTENSION: u64 = io(VFIO_TYPE, VFIO_BASE + 1) => "VFIO_CHECK_EXTENSION";
    VFIO_SET_IOMMU: u64 = io(VFIO_TYPE, VFIO_BASE + 2) => "VFIO_SET_IOMMU";
    VFIO_GROUP_GET_STATUS: u64 = io(VFIO_TYPE, VFIO_BASE + 3) => "VFIO_GROUP_GET_STATUS";
    VFIO_GROUP_SET_CONTAINER: u64 = io(VFIO_TYPE, VFIO_BASE + 4) => "VFIO_GROUP_SET_CONTAINER";
    VFIO_GROUP_GET_DEVICE_FD: u64 = io(VFIO_TYPE, VFIO_BASE + 6) => "VFIO_GROUP_GET_DEVICE_FD";
    VFIO_DEVICE_GET_INFO: u64 = io(VFIO_TYPE, VFIO_BASE + 7) => "VFIO_DEVICE_GET_INFO";
    VFIO_DEVICE_GET_REGION_INFO: u64 = io(VFIO_TYPE, VFIO_BASE + 8) => "VFIO_DEVICE_GET_REGION_INFO";
    VFIO_DEVICE_RESET: u64 = io(VFIO_TYPE, VFIO_BASE + 11) => "VFIO_DEVICE_RESET";
    VFIO_IOMMU_MAP_DMA: u64 = io(VFIO_TYPE, VFIO_BASE + 13) => "VFIO_IOMMU_MAP_DMA";
    VFIO_IOMMU_UNMAP_DMA: u64 = io(VFIO_TYPE, VFIO_BASE + 14) => "VFIO_IOMMU_UNMAP_DMA";
    VFIO_DEVICE_BIND_IOMMUFD: u64 = io(VFIO_TYPE, VFIO_BASE + 18) => "VFIO_DEVICE_BIND_IOMMUFD";
    VFIO_DEVICE_ATTACH_IOMMUFD_PT: u64 = io(VFIO_TYPE, VFIO_BASE + 19) => "VFIO_DEVICE_ATTACH_IOMMUFD_PT";

    VFIO_GROUP_FLAGS_VIABLE: u32 = 1 << 0 => "VFIO_GROUP_FLAGS_VIABLE";
    VFIO_GROUP_FLAGS_CONTAINER_SET: u32 = 1 << 1 => "VFIO_GROUP_FLAGS_CONTAINER_SET";
    VFIO_DEVICE_FLAGS_RESET: u32 = 1 << 0 => "VFIO_DEVICE_FLAGS_RESET";
    VFIO_DEVICE_FLAGS_PCI: u32 = 1 << 1 => "VFIO_DEVICE_FLAGS_PCI";
    VFIO_REGION_INFO_FLAG_READ: u32 = 1 << 0 => "VFIO_REGION_INFO_FLAG_READ";
    VFIO_REGION_INFO_FLAG_WRITE: u32 = 1 << 1 => "VFIO_REGION_INFO_FLAG_WRITE";
    VFIO_REGION_INFO_FLAG_MMAP: u32 = 1 << 2 => "VFIO_REGION_INFO_FLAG_MMAP";
    VFIO_DMA_MAP_FLAG_READ: u32 = 1 << 0 => "VFIO_DMA_MAP_FLAG_READ";
    VFIO_DMA_MAP_FLAG_WRITE: u32 = 1 << 1 => "VFIO_DMA_MAP_FLAG_WRITE";
    VFIO_PCI_BAR0_REGION_INDEX: u32 = 0 => "VFIO_PCI_BAR0_REGION_INDEX";
    VFIO_PCI_BAR5_REGION_INDEX: u32 = 5 => "VFIO_PCI_BAR5_REGION_INDEX";
    VFIO_PCI_ROM_REGION_INDEX: u32 = 6 => "VFIO_PCI_ROM_REGION_INDEX";
    VFIO_PCI_CONFIG_REGION_INDEX: u32 = 7 => "VFIO_PCI_CONFIG_REGION_INDEX";
}

crate::checked_consts! { "linux/iommufd.h", IOMMUFD_FACTS;
    IOMMUFD_TYPE: u8 = b';' => "IOMMUFD_TYPE";
    IOMMUFD_CMD_IOAS_ALLOC: u8 = 0x81 => "IOMMUFD_CMD_IOAS_ALLOC";
    IOMMUFD_CMD_IOAS_MAP: u8 = 0x85 => "IOMMUFD_CMD_IOAS_MAP";
    IOMMUFD_CMD_IOAS_UNMAP: u8 = 0x86 => "IOMMUFD_CMD_IOAS_UNMAP";
    IOMMU_IOAS_ALLOC: u64 = io(IOMMUFD_TYPE, IOMMUFD_CMD_IOAS_ALLOC) => "IOMMU_IOAS_ALLOC";
    IOMMU_IOAS_MAP: u64 = io(IOMMUFD_TYPE, IOMMUFD_CMD_IOAS_MAP) => "IOMMU_IOAS_MAP";
    IOMMU_IOAS_UNMAP: u64 = io(IOMMUFD_TYPE, IOMMUFD_CMD_IOAS_UNMAP) => "IOMMU_IOAS_UNMAP";
    IOMMU_IOAS_MAP_FIXED_IOVA: u32 = 1 << 0 => "IOMMU_IOAS_MAP_FIXED_IOVA";
    IOMMU_IOAS_MAP_WRITEABLE: u32 = 1 << 1 => "IOMMU_IOAS_MAP_WRITEABLE";
    IOMMU_IOAS_MAP_READABLE: u32 = 1 << 2 => "IOMMU_IOAS_MAP_READABLE";
}

/// `struct vfio_group_status`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupStatus {
    pub argsz: u32,
    pub flags: u32,
}

/// `struct vfio_device_info`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceInfo {
    pub argsz: u32,
    pub flags: u32,
    pub num_regions: u32,
    pub num_irqs: u32,
    pub cap_offset: u32,
    pub pad: u32,
}

/// `struct vfio_region_info`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegionInfo {
    pub argsz: u32,
    pub flags: u32,
    pub index: u32,
    pub cap_offset: u32,
    pub size: u64,
    /// Where the region starts in the device fd (for pread/pwrite/mmap).
    pub offset: u64,
}

/// `struct vfio_iommu_type1_dma_map`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DmaMap {
    pub argsz: u32,
    pub flags: u32,
    pub vaddr: u64,
    pub iova: u64,
    pub size: u64,
}

/// `struct vfio_iommu_type1_dma_unmap`, without the trailing flexible
/// `data[]` (only used with the dirty-bitmap flag, which barebell never
/// sets).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DmaUnmap {
    pub argsz: u32,
    pub flags: u32,
    pub iova: u64,
    pub size: u64,
}

/// `struct vfio_device_bind_iommufd`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BindIommufd {
    pub argsz: u32,
    pub flags: u32,
    pub iommufd: i32,
    pub out_devid: u32,
}

/// `struct vfio_device_attach_iommufd_pt`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AttachIommufdPt {
    pub argsz: u32,
    pub flags: u32,
    pub pt_id: u32,
}

/// `struct iommu_ioas_alloc`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoasAlloc {
    pub size: u32,
    pub flags: u32,
    pub out_ioas_id: u32,
}

/// `struct iommu_ioas_map`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoasMap {
    pub size: u32,
    pub flags: u32,
    pub ioas_id: u32,
    pub reserved: u32,
    pub user_va: u64,
    pub length: u64,
    pub iova: u64,
}

/// `struct iommu_ioas_unmap`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoasUnmap {
    pub size: u32,
    pub ioas_id: u32,
    pub iova: u64,
    pub length: u64,
}

const _: () = {
    assert!(core::mem::size_of::<GroupStatus>() == 8);
    assert!(core::mem::size_of::<DeviceInfo>() == 24);
    assert!(core::mem::size_of::<RegionInfo>() == 32);
    assert!(core::mem::size_of::<DmaMap>() == 32);
    assert!(core::mem::size_of::<DmaUnmap>() == 24);
    assert!(core::mem::size_of::<BindIommufd>() == 16);
    assert!(core::mem::size_of::<AttachIommufdPt>() == 12);
    assert!(core::mem::size_of::<IoasAlloc>() == 12);
    assert!(core::mem::size_of::<IoasMap>() == 40);
    assert!(core::mem::size_of::<IoasUnmap>() == 24);
    assert!(core::mem::offset_of!(RegionInfo, offset) == 24);
    assert!(core::mem::offset_of!(IoasMap, iova) == 32);
};

const V: &str = "linux/vfio.h";
const I: &str = "linux/iommufd.h";

/// Sizes and every field offset of the structs above.
pub const LAYOUT_FACTS: &[Fact] = barebell_facts::fact_table!(
    layout_facts!(V, GroupStatus = "struct vfio_group_status" { argsz = "argsz", flags = "flags" }),
    layout_facts!(V, DeviceInfo = "struct vfio_device_info" {
        argsz = "argsz", flags = "flags", num_regions = "num_regions",
        num_irqs = "num_irqs", cap_offset = "cap_offset", pad = "pad",
    }),
    layout_facts!(V, RegionInfo = "struct vfio_region_info" {
        argsz = "argsz", flags = "flags", index = "index", cap_offset = "cap_offset",
        size = "size", offset = "offset",
    }),
    layout_facts!(V, DmaMap = "struct vfio_iommu_type1_dma_map" {
        argsz = "argsz", flags = "flags", vaddr = "vaddr", iova = "iova", size = "size",
    }),
    layout_facts!(V, DmaUnmap = "struct vfio_iommu_type1_dma_unmap" {
        argsz = "argsz", flags = "flags", iova = "iova", size = "size",
    }),
    layout_facts!(V, BindIommufd = "struct vfio_device_bind_iommufd" {
        argsz = "argsz", flags = "flags", iommufd = "iommufd", out_devid = "out_devid",
    }),
    layout_facts!(V, AttachIommufdPt = "struct vfio_device_attach_iommufd_pt" {
        argsz = "argsz", flags = "flags", pt_id = "pt_id",
    }),
    layout_facts!(I, IoasAlloc = "struct iommu_ioas_alloc" {
        size = "size", flags = "flags", out_ioas_id = "out_ioas_id",
    }),
    layout_facts!(I, IoasMap = "struct iommu_ioas_map" {
        size = "size", flags = "flags", ioas_id = "ioas_id", reserved = "__reserved",
        user_va = "user_va", length = "length", iova = "iova",
    }),
    layout_facts!(I, IoasUnmap = "struct iommu_ioas_unmap" {
        size = "size", ioas_id = "ioas_id", iova = "iova", length = "length",
    }),
);
