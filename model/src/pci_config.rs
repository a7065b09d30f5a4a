//! The part of the GPU's PCI configuration space a reset loses: the
//! command register's memory-decode and bus-master bits and the BARs.
//!
//! A mode-1 reset resets the whole ASIC, its PCIe function included:
//! `amdgpu_device_mode1_reset()` therefore caches the config space first
//! (`amdgpu_device_cache_pci_state()` → `pci_save_state()`) and loads it
//! back after the reset (`amdgpu_device_load_pci_state()` →
//! `pci_restore_state()`, which writes the BARs and then COMMAND,
//! `pci_restore_config_space()`) before it reads any register. Until
//! then the function decodes no memory: a BAR5 read is an Unsupported
//! Request the root port completes with all ones, and a write is lost.
//! The model keeps the two facts ([`PciConfig::decodes`]) and BAR5
//! ([`crate::bar::BarWindow`]) answers accordingly; what state the BARs
//! held is not modelled, only whether it was put back. *Model rule*: the
//! host saves and restores the whole state as one, so a restore brings
//! back exactly what the save saw.
//!
//! The PCI Express capability's Link Control ASPM field (`PCI_EXP_LNKCTL`
//! bits 1:0, `PCI_EXP_LNKCTL_ASPMC`) is kept too ([`PciConfig::aspm`]):
//! tinygrad's `AMDev._disable_aspm()` says "power on defaults it enabled"
//! of L1 and clears it on the GPU endpoint; the model starts with L1 on
//! (0x2, *model value*: the board's exact default is not public) and a
//! mode-1 reset turns it back on. What L1 does to the link ("L1 across
//! retimers makes reads oscillate to 0xffffffff", same comment) is not
//! modelled: the model's link has no retimer.
//!
//! The PMFW answers the reset message before the ASIC goes down (Linux
//! reads the answer, `smu_cmn_send_smc_msg_with_param()`, then sleeps
//! `SMU13_MODE1_RESET_WAIT_TIME_IN_MS`); *model value*: the function loses
//! its state [`RESET_AFTER_NS`] of model time after the answer.

use crate::clock::SimClock;
use alloc::sync::Arc;
use barebell::time::Clock;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Mutex;

/// Model time from the PMFW's answer to the reset to the function losing
/// its PCI state (*model value*, well inside Linux's 500 ms sleep).
pub const RESET_AFTER_NS: u64 = 1_000_000;

/// `PCI_COMMAND_MEMORY` (`pci_regs.h`).
pub const COMMAND_MEMORY: u16 = 1 << 1;
/// `PCI_COMMAND_MASTER` (`pci_regs.h`).
pub const COMMAND_MASTER: u16 = 1 << 2;
/// `PCI_EXP_LNKCTL_ASPM_L1` (`pci_regs.h`): the model's power-on ASPM
/// Control (*model value*).
pub const LNKCTL_ASPM_L1: u16 = 0x0002;

#[derive(Debug)]
pub struct PciConfig {
    /// `PCI_COMMAND` memory decode (bus master lives in `master`).
    memory: AtomicBool,
    /// Bus master, shared with the blocks that check it (the SMU refuses
    /// a mode-1 reset with it on).
    master: Arc<AtomicBool>,
    /// The BARs hold the addresses the host assigned.
    bars: AtomicBool,
    saved: Mutex<Option<(bool, bool, bool)>>,
    /// BAR5 accesses refused because the function decoded no memory.
    undecoded: AtomicU64,
    clock: SimClock,
    /// When a pending reset takes the state away (model ns; 0: none).
    reset_at: AtomicU64,
    /// Link Control's ASPM Control field.
    aspm: core::sync::atomic::AtomicU16,
}

impl PciConfig {
    /// As firmware enumerated the function: BARs assigned, memory decode
    /// on, bus mastering as `master` holds it (off until a driver sets it).
    pub fn new(master: Arc<AtomicBool>, clock: &SimClock) -> Self {
        PciConfig {
            memory: AtomicBool::new(true),
            master,
            bars: AtomicBool::new(true),
            saved: Mutex::new(None),
            undecoded: AtomicU64::new(0),
            clock: clock.clone(),
            reset_at: AtomicU64::new(0),
            aspm: core::sync::atomic::AtomicU16::new(LNKCTL_ASPM_L1),
        }
    }

    /// Link Control's ASPM Control field (bits 1:0) as the function holds
    /// it.
    pub fn aspm(&self) -> u16 {
        self.settle();
        self.aspm.load(Ordering::Acquire)
    }

    /// A host's Link Control write clearing ASPM Control.
    pub fn disable_aspm(&self) {
        self.settle();
        self.aspm.store(0, Ordering::Release);
    }

    /// A reset whose time has come takes the state away.
    fn settle(&self) {
        let at = self.reset_at.load(Ordering::Acquire);
        if at != 0 && self.clock.now_ns() >= at {
            self.reset_at.store(0, Ordering::Release);
            self.memory.store(false, Ordering::Release);
            self.master.store(false, Ordering::Release);
            self.bars.store(false, Ordering::Release);
            self.aspm.store(LNKCTL_ASPM_L1, Ordering::Release);
        }
    }

    /// Whether the function answers memory accesses to its BARs.
    pub fn decodes(&self) -> bool {
        self.settle();
        self.memory.load(Ordering::Acquire) && self.bars.load(Ordering::Acquire)
    }

    /// `PCI_COMMAND` as the function holds it.
    pub fn command(&self) -> u16 {
        self.settle();
        let mut c = 0;
        if self.memory.load(Ordering::Acquire) {
            c |= COMMAND_MEMORY;
        }
        if self.master.load(Ordering::Acquire) {
            c |= COMMAND_MASTER;
        }
        c
    }

    /// What a mode-1 reset does to the function, [`RESET_AFTER_NS`] after
    /// the PMFW answered it: COMMAND cleared, the BARs back to their
    /// reset value.
    pub fn reset(&self) {
        let at = self.clock.now_ns().saturating_add(RESET_AFTER_NS).max(1);
        self.reset_at.store(at, Ordering::Release);
    }

    /// `pci_save_state()`.
    pub fn save(&self) {
        self.settle();
        *self.saved.lock() = Some((
            self.memory.load(Ordering::Acquire),
            self.master.load(Ordering::Acquire),
            self.bars.load(Ordering::Acquire),
        ));
    }

    /// `pci_restore_state()`: the saved state back (BARs, then COMMAND);
    /// `false` when nothing was saved.
    pub fn restore(&self) -> bool {
        self.settle();
        let Some((memory, master, bars)) = *self.saved.lock() else {
            return false;
        };
        self.bars.store(bars, Ordering::Release);
        self.memory.store(memory, Ordering::Release);
        self.master.store(master, Ordering::Release);
        true
    }

    /// Counts a BAR5 access the function did not decode.
    pub fn refused(&self) {
        self.undecoded.fetch_add(1, Ordering::Relaxed);
    }

    /// BAR5 accesses lost while the function decoded no memory.
    pub fn undecoded(&self) -> u64 {
        self.undecoded.load(Ordering::Relaxed)
    }
}
