//! The graphics memory controller: page-table formats and the table
//! arena ([`pagetable`]), the hubs that walk them ([`hub`]: GFXHUB and
//! MMHUB init, TLB invalidation, fault status), and the VRAM/GART layout
//! policy ([`layout`]) Linux's `gmc_v11_0.c`/`gmc_v12_0.c` and
//! `amdgpu_gmc.c` apply.

pub mod hub;
pub mod layout;
pub mod pagetable;
pub mod pte_v9;
pub mod walk;
