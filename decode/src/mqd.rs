//! The HQD register image the firmware stand-ins read from an MQD
//! (`struct v11_compute_mqd` in `v11_structs.h`, `struct
//! v12_compute_mqd` in `v12_structs.h`) or from a slot's registers.
//!
//! MQD dwords 128..=183 are the HQD window `CP_MQD_BASE_ADDR ..=
//! CP_HQD_PQ_WPTR_HI`, register for register, in both generations; the
//! model keeps the window as plain dwords and reads the fields it needs
//! by index and by the `sh_mask` bit positions below (identical in
//! `gc_11_0_0_sh_mask.h` and `gc_12_0_0_sh_mask.h` for these fields).

use super::Bits;
use barebell_facts::Fact;

/// MQD dword of `cp_mqd_base_addr_lo`, the first register of the window.
pub const WINDOW_FIRST: usize = 128;
/// Window length: `cp_mqd_base_addr_lo ..= cp_hqd_pq_wptr_hi`.
pub const WINDOW_DWORDS: usize = 56;
/// `sizeof(struct v11_compute_mqd)` (and v12's) in bytes.
pub const MQD_BYTES: usize = 2048;

/// MQD dword indices.
pub mod dw {
    pub const MQD_BASE_ADDR_LO: usize = 128;
    pub const MQD_BASE_ADDR_HI: usize = 129;
    pub const HQD_ACTIVE: usize = 130;
    pub const HQD_VMID: usize = 131;
    pub const PQ_BASE_LO: usize = 136;
    pub const PQ_BASE_HI: usize = 137;
    pub const PQ_RPTR: usize = 138;
    pub const PQ_RPTR_REPORT_ADDR_LO: usize = 139;
    pub const PQ_RPTR_REPORT_ADDR_HI: usize = 140;
    pub const PQ_WPTR_POLL_ADDR_LO: usize = 141;
    pub const PQ_WPTR_POLL_ADDR_HI: usize = 142;
    pub const PQ_DOORBELL_CONTROL: usize = 143;
    pub const PQ_CONTROL: usize = 145;
    pub const EOP_BASE_ADDR_LO: usize = 165;
    pub const EOP_BASE_ADDR_HI: usize = 166;
    pub const MQD_CONTROL: usize = 162;
    pub const EOP_CONTROL: usize = 167;
    pub const AQL_CONTROL: usize = 181;
    pub const PQ_WPTR_LO: usize = 182;
    pub const PQ_WPTR_HI: usize = 183;
}

/// `CP_HQD_PQ_CONTROL` fields.
pub const QUEUE_SIZE: Bits = Bits::new(0, 6);
pub const NO_UPDATE_RPTR: Bits = Bits::new(27, 1);
pub const PRIV_STATE: Bits = Bits::new(30, 1);
pub const KMD_QUEUE: Bits = Bits::new(31, 1);
/// `CP_HQD_PQ_DOORBELL_CONTROL` fields.
pub const DOORBELL_OFFSET: Bits = Bits::new(2, 26);
pub const DOORBELL_EN: Bits = Bits::new(30, 1);
/// `CP_HQD_EOP_CONTROL.EOP_SIZE`: the buffer is `2^(EOP_SIZE+1)` dwords.
pub const EOP_SIZE: Bits = Bits::new(0, 6);
/// `CP_HQD_EOP_CONTROL.HALT_FETCHER`, `HALT_FETCHER_EN`, `EXE_DISABLE`.
pub const EOP_HALT_FETCHER: Bits = Bits::new(21, 1);
pub const EOP_HALT_FETCHER_EN: Bits = Bits::new(22, 1);
pub const EOP_EXE_DISABLE: Bits = Bits::new(23, 1);
/// `CP_MQD_CONTROL.PRIV_STATE`.
pub const MQD_PRIV_STATE: Bits = Bits::new(8, 1);
/// `CP_HQD_VMID.VMID`.
pub const VMID: Bits = Bits::new(0, 4);
/// `CP_HQD_AQL_CONTROL.CONTROL0`.
pub const AQL_CONTROL0: Bits = Bits::new(0, 15);
/// `CP_HQD_ACTIVE.ACTIVE`.
pub const ACTIVE: Bits = Bits::new(0, 1);

/// The largest ring or EOP buffer a queue can have: the GPU's 48-bit
/// virtual address space (Linux sizes every gfx9-gfx12 VM to 48 bits,
/// `amdgpu_vm_adjust_size(adev, 256 * 1024, 9, 3, 48)` in
/// `gmc_v9_0_sw_init()`, `gmc_v11_0_sw_init()`, `gmc_v12_0_sw_init()`). A
/// `QUEUE_SIZE` or `EOP_SIZE` describing more cannot be backed by memory
/// the CP reaches, so the size decodes to [`SizeBeyondAddressSpace`] and
/// the queue is refused (*model rule*: what the CP does with such a field
/// is not public; no memory can hold the ring).
pub const MAX_QUEUE_BYTES_LOG2: u32 = 48;

/// A size field that describes more memory than the GPU can address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeBeyondAddressSpace {
    /// The register field, e.g. `CP_HQD_PQ_CONTROL.QUEUE_SIZE`.
    pub register: &'static str,
    pub field: u32,
}

impl core::fmt::Display for SizeBeyondAddressSpace {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} = {} describes 2^{} bytes, more than the GPU's {MAX_QUEUE_BYTES_LOG2}-bit address space",
            self.register,
            self.field,
            u64::from(self.field) + 3
        )
    }
}

/// `2^(field+1)` dwords in bytes, refused above [`MAX_QUEUE_BYTES_LOG2`]
/// (a 6-bit field reaches 2^66 bytes, past any address).
pub fn dwords_pow2_bytes(
    register: &'static str,
    field: u32,
) -> Result<u64, SizeBeyondAddressSpace> {
    // 2^(field+1) dwords = 2^(field+3) bytes.
    match field.checked_add(3) {
        Some(log2) if log2 <= MAX_QUEUE_BYTES_LOG2 => Ok(1u64 << log2),
        _ => Err(SizeBeyondAddressSpace { register, field }),
    }
}

/// One HQD image: the window's dwords, `CP_MQD_BASE_ADDR ..=
/// CP_HQD_PQ_WPTR_HI`, as an MQD carries them (dwords 128..=183) and as
/// a slot's registers hold them. The model's one reading of the window:
/// the MEC's register slots, MES ADD_QUEUE and KIQ MAP_QUEUES all decode
/// through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hqd(pub [u32; WINDOW_DWORDS]);

impl Default for Hqd {
    fn default() -> Self {
        Hqd([0; WINDOW_DWORDS])
    }
}

fn join(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | u64::from(hi) << 32
}

impl Hqd {
    /// The window from the MQD's bytes (its whole 2 KiB, or at least
    /// through dword 183).
    pub fn from_mqd(bytes: &[u8]) -> Self {
        let mut w = [0u32; WINDOW_DWORDS];
        for (i, d) in w.iter_mut().enumerate() {
            *d = super::le32(bytes, (WINDOW_FIRST + i) * 4);
        }
        Hqd(w)
    }

    /// MQD dword `i` (128..=183); 0 outside the window.
    pub fn dword(&self, i: usize) -> u32 {
        i.checked_sub(WINDOW_FIRST)
            .and_then(|k| self.0.get(k))
            .copied()
            .unwrap_or(0)
    }

    /// Window register `i` (MQD dword `128 + i`, `crate::cpregs::w`); 0
    /// outside the window.
    pub fn get(&self, i: usize) -> u32 {
        self.0.get(i).copied().unwrap_or(0)
    }

    /// Sets window register `i`; an index outside the window is ignored.
    pub fn set(&mut self, i: usize, v: u32) {
        if let Some(r) = self.0.get_mut(i) {
            *r = v;
        }
    }

    pub fn mqd_address(&self) -> u64 {
        join(
            self.dword(dw::MQD_BASE_ADDR_LO),
            self.dword(dw::MQD_BASE_ADDR_HI),
        )
    }
    pub fn active(&self) -> bool {
        ACTIVE.is_set(self.dword(dw::HQD_ACTIVE))
    }
    pub fn vmid(&self) -> u8 {
        // A 4-bit field.
        VMID.get(self.dword(dw::HQD_VMID)) as u8
    }
    /// Ring base in bytes (`CP_HQD_PQ_BASE` counts 256-byte units).
    pub fn ring_address(&self) -> u64 {
        join(self.dword(dw::PQ_BASE_LO), self.dword(dw::PQ_BASE_HI)) << 8
    }
    pub fn pq_control(&self) -> u32 {
        self.dword(dw::PQ_CONTROL)
    }
    /// `QUEUE_SIZE`: the ring is `2^(QUEUE_SIZE+1)` dwords
    /// (`gfx_v11_0_compute_mqd_init()` stores `order_base_2(size / 4) - 1`).
    pub fn queue_size_field(&self) -> u32 {
        QUEUE_SIZE.get(self.pq_control())
    }
    /// Ring size in bytes, refused past the address space
    /// ([`dwords_pow2_bytes`]).
    pub fn ring_bytes(&self) -> Result<u64, SizeBeyondAddressSpace> {
        dwords_pow2_bytes("CP_HQD_PQ_CONTROL.QUEUE_SIZE", self.queue_size_field())
    }
    pub fn rptr_report_address(&self) -> u64 {
        join(
            self.dword(dw::PQ_RPTR_REPORT_ADDR_LO),
            self.dword(dw::PQ_RPTR_REPORT_ADDR_HI),
        )
    }
    pub fn wptr_poll_address(&self) -> u64 {
        join(
            self.dword(dw::PQ_WPTR_POLL_ADDR_LO),
            self.dword(dw::PQ_WPTR_POLL_ADDR_HI),
        )
    }
    /// `CP_HQD_PQ_RPTR`: the read pointer as loaded (dwords into the ring).
    pub fn pq_rptr(&self) -> u32 {
        self.dword(dw::PQ_RPTR)
    }
    /// `CP_HQD_PQ_WPTR_LO/HI`: the write pointer as loaded.
    pub fn pq_wptr(&self) -> u64 {
        join(self.dword(dw::PQ_WPTR_LO), self.dword(dw::PQ_WPTR_HI))
    }
    pub fn doorbell_control(&self) -> u32 {
        self.dword(dw::PQ_DOORBELL_CONTROL)
    }
    /// The doorbell's dword offset in the doorbell BAR.
    pub fn doorbell_dword(&self) -> u32 {
        DOORBELL_OFFSET.get(self.doorbell_control())
    }
    pub fn doorbell_enabled(&self) -> bool {
        DOORBELL_EN.is_set(self.doorbell_control())
    }
    /// EOP base in bytes (256-byte units in the register).
    pub fn eop_address(&self) -> u64 {
        join(
            self.dword(dw::EOP_BASE_ADDR_LO),
            self.dword(dw::EOP_BASE_ADDR_HI),
        ) << 8
    }
    pub fn eop_size_field(&self) -> u32 {
        EOP_SIZE.get(self.dword(dw::EOP_CONTROL))
    }
    /// EOP buffer bytes the CP uses (`2^(EOP_SIZE+1)` dwords), refused
    /// past the address space.
    pub fn eop_bytes(&self) -> Result<u64, SizeBeyondAddressSpace> {
        dwords_pow2_bytes("CP_HQD_EOP_CONTROL.EOP_SIZE", self.eop_size_field())
    }
    pub fn aql(&self) -> bool {
        AQL_CONTROL0.get(self.dword(dw::AQL_CONTROL)) != 0
    }
    pub fn privileged(&self) -> bool {
        PRIV_STATE.is_set(self.pq_control())
    }
    pub fn kmd_queue(&self) -> bool {
        KMD_QUEUE.is_set(self.pq_control())
    }
    /// Why a MES pipe's own ring, loaded by registers on ME 3 with this
    /// image, would never run (`None` if nothing does): ring and EOP
    /// sizes that do not fit the address space, or a halted fetcher
    /// (see [`Hqd::fetch_refusal`]). Unlike [`Hqd::mes_ring_refusal`] (an
    /// MQD handed to a KIQ or MES), neither an EOP buffer nor
    /// `CP_MQD_CONTROL.PRIV_STATE` is required: Linux's
    /// `mes_v11_0_queue_init_register()` and
    /// `mes_v12_0_queue_init_register()` write `CP_MQD_CONTROL` as 0 and
    /// never write `CP_HQD_EOP_BASE_ADDR` or `CP_HQD_EOP_CONTROL`, and
    /// every RDNA3/RDNA4 card runs its MES (and gfx11's MES KIQ) so.
    pub fn mes_ring_register_refusal(&self) -> Option<&'static str> {
        if self.ring_bytes().is_err() || self.eop_bytes().is_err() {
            return Some(
                "the MES ring's QUEUE_SIZE or EOP_SIZE describes more than the GPU's 48-bit address space",
            );
        }
        self.fetch_refusal()
    }

    /// Why a MES pipe's own scheduler ring, handed over as this MQD image
    /// (KIQ MAP_QUEUES, MES `map_legacy_kq`), would never run (`None` if
    /// nothing does). What the model checks, all the MES ring's MQD as
    /// `mes_v11_0_mqd_init()` / `mes_v12_0_mqd_init()` leave it:
    /// - ring and EOP sizes that fit the address space
    ///   ([`MAX_QUEUE_BYTES_LOG2`]);
    /// - an EOP buffer (base and `EOP_SIZE` non-zero): both drivers give
    ///   the ring `MES_EOP_SIZE` bytes;
    /// - `CP_HQD_EOP_CONTROL.HALT_FETCHER` (with `HALT_FETCHER_EN`) or
    ///   `EXE_DISABLE` set: the queue's fetcher is halted or its execution
    ///   disabled, so the MES never sees a frame. Both drivers start from
    ///   the header default (6) and change only `EOP_SIZE`. *Model
    ///   convention*: what the CP does is read from the field names; no
    ///   public document describes these bits further;
    /// - `CP_MQD_CONTROL.PRIV_STATE` clear: every MQD builder in Linux
    ///   sets it (`mes_v11_0_mqd_init()` and `gfx_v11_0_compute_mqd_init()`
    ///   keep the header default 0x100, KFD's `init_mqd()` sets it
    ///   explicitly); *model rule*: what the CP does with an unprivileged
    ///   MQD for a privileged kernel ring is not public, so it is refused.
    pub fn mes_ring_refusal(&self) -> Option<&'static str> {
        if self.ring_bytes().is_err() || self.eop_bytes().is_err() {
            return Some(
                "the MES ring's QUEUE_SIZE or EOP_SIZE describes more than the GPU's 48-bit address space",
            );
        }
        let eop = self.dword(dw::EOP_CONTROL);
        if self.eop_address() == 0 || EOP_SIZE.get(eop) == 0 {
            return Some("the MES ring's HQD has no EOP buffer");
        }
        if EOP_HALT_FETCHER.is_set(eop) && EOP_HALT_FETCHER_EN.is_set(eop) {
            return Some("the MES ring's CP_HQD_EOP_CONTROL halts its fetcher (HALT_FETCHER)");
        }
        if EOP_EXE_DISABLE.is_set(eop) {
            return Some("the MES ring's CP_HQD_EOP_CONTROL sets EXE_DISABLE");
        }
        if !MQD_PRIV_STATE.is_set(self.dword(dw::MQD_CONTROL)) {
            return Some("the MES ring's CP_MQD_CONTROL lacks PRIV_STATE");
        }
        None
    }

    /// Why the CP would fetch nothing from this queue once loaded (`None`
    /// if nothing stops it): `CP_HQD_EOP_CONTROL.HALT_FETCHER` with
    /// `HALT_FETCHER_EN`, or `EXE_DISABLE` (`gc_11_0_0_sh_mask.h`, same in
    /// GC 12). No driver sets them on a queue it means to run: Linux's
    /// `gfx_v11_0_compute_mqd_init()` / `mes_v11_0_mqd_init()` start from
    /// the register default and set only `EOP_SIZE`, KFD's `init_mqd()`
    /// likewise, tinygrad's `AM_GFX.setup_ring()` encodes `eop_size`
    /// alone. *Model convention*, as for the MES ring
    /// ([`Hqd::mes_ring_refusal`]): what the CP does is read from the
    /// field names. `CP_HQD_EOP_RPTR.INIT_FETCHER` is deliberately not
    /// required: KFD's `hqd_load_v11()` sets it, but Linux's
    /// `gfx_v11_0_kiq_init_register()` never writes `CP_HQD_EOP_RPTR`
    /// (default `0x40000000`, INIT_FETCHER clear) and tinygrad's
    /// `setup_ring()` writes it as 0 with the window, and both queues run
    /// on silicon.
    pub fn fetch_refusal(&self) -> Option<&'static str> {
        let eop = self.dword(dw::EOP_CONTROL);
        if EOP_HALT_FETCHER.is_set(eop) && EOP_HALT_FETCHER_EN.is_set(eop) {
            return Some("CP_HQD_EOP_CONTROL halts the queue's fetcher (HALT_FETCHER)");
        }
        if EOP_EXE_DISABLE.is_set(eop) {
            return Some("CP_HQD_EOP_CONTROL sets EXE_DISABLE");
        }
        None
    }

    /// The same image with `DOORBELL_EN` set (what MES and the KIQ do on
    /// the slot they load).
    pub fn with_doorbell_enabled(mut self) -> Self {
        if let Some(d) = self.0.get_mut(dw::PQ_DOORBELL_CONTROL - WINDOW_FIRST) {
            *d |= DOORBELL_EN.mask();
        }
        self
    }
}

macro_rules! mqd_facts {
    ($h:literal, $t:literal) => {
        [
            Fact::size($h, $t, MQD_BYTES),
            Fact::offset($h, $t, "cp_mqd_base_addr_lo", dw::MQD_BASE_ADDR_LO * 4),
            Fact::offset($h, $t, "cp_mqd_base_addr_hi", dw::MQD_BASE_ADDR_HI * 4),
            Fact::offset($h, $t, "cp_hqd_active", dw::HQD_ACTIVE * 4),
            Fact::offset($h, $t, "cp_hqd_vmid", dw::HQD_VMID * 4),
            Fact::offset($h, $t, "cp_hqd_pq_base_lo", dw::PQ_BASE_LO * 4),
            Fact::offset($h, $t, "cp_hqd_pq_base_hi", dw::PQ_BASE_HI * 4),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_rptr_report_addr_lo",
                dw::PQ_RPTR_REPORT_ADDR_LO * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_rptr_report_addr_hi",
                dw::PQ_RPTR_REPORT_ADDR_HI * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_wptr_poll_addr_lo",
                dw::PQ_WPTR_POLL_ADDR_LO * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_wptr_poll_addr_hi",
                dw::PQ_WPTR_POLL_ADDR_HI * 4,
            ),
            Fact::offset(
                $h,
                $t,
                "cp_hqd_pq_doorbell_control",
                dw::PQ_DOORBELL_CONTROL * 4,
            ),
            Fact::offset($h, $t, "cp_hqd_pq_control", dw::PQ_CONTROL * 4),
            Fact::offset($h, $t, "cp_hqd_eop_base_addr_lo", dw::EOP_BASE_ADDR_LO * 4),
            Fact::offset($h, $t, "cp_hqd_eop_base_addr_hi", dw::EOP_BASE_ADDR_HI * 4),
            Fact::offset($h, $t, "cp_hqd_eop_control", dw::EOP_CONTROL * 4),
            Fact::offset($h, $t, "cp_mqd_control", dw::MQD_CONTROL * 4),
            Fact::offset($h, $t, "cp_hqd_aql_control", dw::AQL_CONTROL * 4),
            Fact::offset($h, $t, "cp_hqd_pq_wptr_hi", dw::PQ_WPTR_HI * 4),
        ]
    };
}

macro_rules! field_facts {
    ($h:literal) => {
        [
            Fact::constant(
                $h,
                "CP_HQD_PQ_CONTROL__QUEUE_SIZE_MASK",
                QUEUE_SIZE.mask() as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_PQ_CONTROL__NO_UPDATE_RPTR_MASK",
                NO_UPDATE_RPTR.mask() as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_PQ_CONTROL__PRIV_STATE_MASK",
                PRIV_STATE.mask() as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_PQ_CONTROL__KMD_QUEUE_MASK",
                KMD_QUEUE.mask() as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_OFFSET_MASK",
                DOORBELL_OFFSET.mask() as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_PQ_DOORBELL_CONTROL__DOORBELL_EN_MASK",
                DOORBELL_EN.mask() as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_EOP_CONTROL__EOP_SIZE_MASK",
                EOP_SIZE.mask() as u64,
            ),
            Fact::constant($h, "CP_HQD_VMID__VMID_MASK", VMID.mask() as u64),
            Fact::constant(
                $h,
                "CP_HQD_EOP_CONTROL__HALT_FETCHER_MASK",
                EOP_HALT_FETCHER.mask() as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_EOP_CONTROL__HALT_FETCHER_EN_MASK",
                EOP_HALT_FETCHER_EN.mask() as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_EOP_CONTROL__EXE_DISABLE_MASK",
                EOP_EXE_DISABLE.mask() as u64,
            ),
            Fact::constant(
                $h,
                "CP_MQD_CONTROL__PRIV_STATE_MASK",
                MQD_PRIV_STATE.mask() as u64,
            ),
            Fact::constant(
                $h,
                "CP_HQD_AQL_CONTROL__CONTROL0_MASK",
                AQL_CONTROL0.mask() as u64,
            ),
            Fact::constant($h, "CP_HQD_ACTIVE__ACTIVE_MASK", ACTIVE.mask() as u64),
        ]
    };
}

pub const FACTS: &[Fact] = barebell_facts::fact_table!(
    mqd_facts!("v11_structs.h", "struct v11_compute_mqd"),
    mqd_facts!("v12_structs.h", "struct v12_compute_mqd"),
    field_facts!("gc_11_0_0_sh_mask.h"),
    field_facts!("gc_12_0_0_sh_mask.h"),
);

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn sizes_from_their_fields() {
        let mut w = [0u32; WINDOW_DWORDS];
        w[dw::PQ_CONTROL - WINDOW_FIRST] = 7 | 1 << 30 | 1 << 31;
        w[dw::EOP_CONTROL - WINDOW_FIRST] = 8;
        w[dw::PQ_DOORBELL_CONTROL - WINDOW_FIRST] = 0x18 << 2;
        w[dw::PQ_BASE_LO - WINDOW_FIRST] = 0x12;
        let h = Hqd(w);
        // QUEUE_SIZE 7: 2^8 dwords = 1 KiB; EOP_SIZE 8: 2^9 dwords = 2 KiB.
        assert_eq!(h.ring_bytes(), Ok(1024));
        assert_eq!(h.eop_bytes(), Ok(2048));
        assert_eq!(h.doorbell_dword(), 0x18);
        assert!(!h.doorbell_enabled());
        assert!(h.with_doorbell_enabled().doorbell_enabled());
        assert!(h.privileged() && h.kmd_queue());
        assert_eq!(h.ring_address(), 0x1200);
    }

    /// The gfx11 MES KIQ ring exactly as Linux 6.12 loaded it onto ME 3
    /// pipe 1 of the model (`mes_v11_0_queue_init_register()`, read from
    /// the Linux peer's register trace): `CP_MQD_CONTROL` 0, no EOP
    /// registers written, `CP_HQD_PQ_CONTROL` 0xd8308011. As a register
    /// load it runs; as an MQD handed to a KIQ it would be refused (no EOP
    /// buffer), which is what kept Linux's KIQ from ever starting.
    #[test]
    fn a_register_loaded_mes_ring_needs_no_eop_buffer_or_priv_mqd() {
        let mut w = [0u32; WINDOW_DWORDS];
        w[dw::PQ_CONTROL - WINDOW_FIRST] = 0xd830_8011;
        w[dw::PQ_BASE_LO - WINDOW_FIRST] = 0xff00_8000;
        let h = Hqd(w);
        assert_eq!(h.mes_ring_register_refusal(), None);
        assert_eq!(
            h.mes_ring_refusal(),
            Some("the MES ring's HQD has no EOP buffer")
        );
        // A halted fetcher is refused either way.
        w[dw::EOP_CONTROL - WINDOW_FIRST] = EOP_HALT_FETCHER.mask() | EOP_HALT_FETCHER_EN.mask();
        assert!(Hqd(w).mes_ring_register_refusal().is_some());
    }

    /// Every 6-bit size field decodes without overflow: up to 2^48 bytes
    /// (QUEUE_SIZE 45: 2^46 dwords), `None` past it. `QUEUE_SIZE = 63`
    /// used to panic the MEC's decoder (`4u64 << 64`).
    #[test]
    fn every_size_field_value_decodes_without_overflow() {
        for field in 0..=QUEUE_SIZE.mask() {
            let mut h = Hqd::default();
            h.set(dw::PQ_CONTROL - WINDOW_FIRST, field);
            h.set(dw::EOP_CONTROL - WINDOW_FIRST, field);
            let want = (field <= 45).then(|| 8u64 << field);
            assert_eq!(h.ring_bytes().ok(), want, "QUEUE_SIZE {field}");
            assert_eq!(h.eop_bytes().ok(), want, "EOP_SIZE {field}");
            if let Err(e) = h.ring_bytes() {
                assert_eq!(e.field, field);
                assert!(e.to_string().contains("48-bit address space"), "{e}");
            }
        }
    }

    #[test]
    fn window_and_mqd_indices_name_the_same_dwords() {
        let mut h = Hqd::default();
        h.set(dw::PQ_WPTR_LO - WINDOW_FIRST, 0x40);
        h.set(dw::PQ_WPTR_HI - WINDOW_FIRST, 1);
        h.set(dw::PQ_RPTR - WINDOW_FIRST, 9);
        assert_eq!(h.pq_wptr(), 0x1_0000_0040);
        assert_eq!(h.pq_rptr(), 9);
        assert_eq!(h.get(dw::PQ_RPTR - WINDOW_FIRST), h.dword(dw::PQ_RPTR));
        assert_eq!(h.get(WINDOW_DWORDS), 0);
    }
}
