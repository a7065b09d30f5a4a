//! A minimal ATOM VBIOS for the model's function, built here from the
//! public structures in Linux's `atombios.h`/`atomfirmware.h` (no vendor
//! ROM is used or committed), served as the PCI expansion ROM.
//!
//! What reads it, and why each piece is there:
//! - the PCI expansion ROM header and PCIR (`drivers/pci/rom.c`:
//!   `pci_get_rom_size()` needs a non-zero image length) and an 8-bit
//!   checksum of zero (the guest's SeaBIOS checks it before it copies
//!   a VGA ROM to the legacy 0xC0000 shadow, which Linux then reads:
//!   `pci_fixup_video()`); the entry at byte 3 is a far return, so the
//!   SeaBIOS call into the ROM returns at once;
//! - `amdgpu_bios.c:check_atom_bios()` and `atom.c:amdgpu_atom_parse()`:
//!   0xAA55, the " 761295520" string at 0x30, the ROM header's offset at
//!   0x48 and "ATOM" at that header + 4, its command and data master
//!   tables; a printable part number at 0x80 (`atom_get_vbios_pn()`
//!   dereferences nothing safely without one); byte 4 not
//!   `ATOM_IIO_START`;
//! - `firmwareinfo` v3.4 (`smu_v13_0_get_vbios_bootup_values()` and
//!   `amdgpu_atomfirmware_get_fw_reserved_fb_size()` need format
//!   revision 3): boot clocks, no firmware capabilities (no memory
//!   training, no RAS), and where the BIOS scratch registers are
//!   (`amdgpu_atomfirmware_scratch_regs_init()`);
//! - `gfx_info` v2.2: the RLC timer reference clock
//!   (`amdgpu_atomfirmware_get_clock_info()`); for a part whose driver
//!   reads its GC configuration from the VBIOS instead of discovery
//!   (Aldebaran: `gfx_v9_0_gpu_early_init()` →
//!   `amdgpu_atomfirmware_get_gfx_info()`, which takes content revisions
//!   4 and 7 only), `gfx_info` v2.4 ([`GfxInfo`]) with the same clock at
//!   the same offset;
//! - `smc_dpm_info`: the board table SMU 13.0.0 copies into its PPTable
//!   when SCPM is off (`smu_v13_0_0_append_powerplay_table()`), all zero.
//!
//! No command table is present: with the scratch register saying the
//! ASIC was posted ([`POSTED`]), `amdgpu_device_need_post()` is false and
//! the driver runs none. **Model values**: the boot clocks, the timer
//! clock, the date, the part-number text and the board table's contents.

/// The image's length: 4 KiB (8 units of 512 bytes).
pub const BYTES: usize = 4096;
/// `ATOM_S7_ASIC_INIT_COMPLETE_MASK` (`atombios.h`): set in
/// `BIOS_SCRATCH_7` by the VBIOS's power-on post, read by
/// `amdgpu_atombios_scratch_need_asic_init()`.
pub const POSTED: u32 = 0x0000_0200;

/// Where the pieces go (byte offsets in the image).
const PCIR: usize = 0x0B0;
const ROM_HEADER: usize = 0x100;
const CMD_MASTER: usize = 0x128;
const DATA_MASTER: usize = 0x1D0;
const FIRMWAREINFO: usize = 0x220;
const GFX_INFO: usize = 0x290;
const SMC_DPM_INFO: usize = 0x2C0;
/// `gfx_info` v2.4 where a part has one: past the board table.
const GFX_INFO_V24: usize = 0x4B0;
/// `sizeof(struct atom_gfx_info_v2_4)`.
const GFX_INFO_V24_BYTES: usize = 0x48;
/// `atom_master_list_of_data_tables_v2_1` entry indices.
const DATA_SMC_DPM_INFO: usize = 2;
const DATA_FIRMWAREINFO: usize = 4;
const DATA_GFX_INFO: usize = 14;
/// `sizeof(BoardTable_t)` in `smu13_driver_if_v13_0_0.h`.
const BOARD_TABLE_BYTES: usize = 488;

/// What the ROM says about the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Board<'a> {
    /// PCI device id (the PCIR's).
    pub device_id: u16,
    /// The first BIOS scratch register as an absolute MMIO dword index
    /// (`firmwareinfo.bios_scratch_reg_startaddr`): the NBIO's
    /// `BIF_BX0_BIOS_SCRATCH_0` on this part.
    pub scratch_dword: u32,
    /// The part-number text (printable ASCII, at most 43 bytes).
    pub part_number: &'a str,
    /// The GC configuration `gfx_info` v2.4 carries, for a part whose
    /// driver reads it from the VBIOS; `None`: the v2.2 table (clock
    /// only).
    pub gfx: Option<GfxInfo>,
}

/// What `amdgpu_atomfirmware_get_gfx_info()` reads from `gfx_info` v2.4
/// (`struct atom_gfx_info_v2_4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GfxInfo {
    pub max_shader_engines: u8,
    pub max_cu_per_sh: u8,
    pub max_sh_per_se: u8,
    pub max_backends_per_se: u8,
    pub max_texture_channel_caches: u8,
    pub active_cu_per_sh: u8,
    pub active_rb_per_se: u8,
    pub num_gprs: u16,
    pub gsprim_buff_depth: u16,
    pub parameter_cache_depth: u16,
    pub wave_size: u16,
    pub max_waves_per_simd: u16,
    pub lds_size_kib: u16,
    pub max_gs_threads: u8,
    pub gs_table_depth: u8,
    pub double_offchip_lds_buffer: u8,
    pub max_scratch_slots_per_cu: u8,
}

impl GfxInfo {
    /// An MI210's (Aldebaran, one GCD of 104 active CUs). Public: wave64
    /// and 64 KiB of LDS per CU (CDNA2), 104 CUs (AMD's MI210
    /// specification). **Model values**: the 8 × 1 × 16 SE/SH/CU split
    /// (13 active per SH), the render-backend, texture-cache, GPR and
    /// geometry figures, 8 waves per SIMD and 32 scratch slots per CU
    /// (the discovery parts' model values).
    pub const MI210: GfxInfo = GfxInfo {
        max_shader_engines: 8,
        max_cu_per_sh: 16,
        max_sh_per_se: 1,
        max_backends_per_se: 2,
        max_texture_channel_caches: 16,
        active_cu_per_sh: 13,
        active_rb_per_se: 2,
        num_gprs: 256,
        gsprim_buff_depth: 1792,
        parameter_cache_depth: 1024,
        wave_size: 64,
        max_waves_per_simd: 8,
        lds_size_kib: 64,
        max_gs_threads: 32,
        gs_table_depth: 32,
        double_offchip_lds_buffer: 1,
        max_scratch_slots_per_cu: 32,
    };
}

fn put16(rom: &mut [u8], at: usize, v: u16) {
    rom[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn put32(rom: &mut [u8], at: usize, v: u32) {
    rom[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// `atom_common_table_header`: size, format and content revision.
fn table_header(rom: &mut [u8], at: usize, size: u16, frev: u8, crev: u8) {
    put16(rom, at, size);
    rom[at + 2] = frev;
    rom[at + 3] = crev;
}

/// `struct atom_gfx_info_v2_4` at [`GFX_INFO_V24`] (offsets from
/// `atomfirmware.h`; the timer clock where v2.2 has it).
fn gfx_info_v24(rom: &mut [u8], g: &GfxInfo) {
    let at = GFX_INFO_V24;
    table_header(rom, at, GFX_INFO_V24_BYTES as u16, 2, 4);
    rom[at + 4] = 9; // gfxip_min_ver
    rom[at + 5] = 4; // gfxip_max_ver
    rom[at + 6] = g.max_shader_engines;
    rom[at + 8] = g.max_cu_per_sh;
    rom[at + 9] = g.max_sh_per_se;
    rom[at + 10] = g.max_backends_per_se;
    rom[at + 11] = g.max_texture_channel_caches;
    put32(rom, at + 0x28, 10_000); // rlc_gpu_timer_refclk
    rom[at + 0x2C] = g.active_cu_per_sh;
    rom[at + 0x2D] = g.active_rb_per_se;
    put16(rom, at + 0x30, g.num_gprs);
    put16(rom, at + 0x32, g.gsprim_buff_depth);
    put16(rom, at + 0x34, g.parameter_cache_depth);
    put16(rom, at + 0x36, g.wave_size);
    put16(rom, at + 0x38, g.max_waves_per_simd);
    put16(rom, at + 0x3A, g.lds_size_kib);
    rom[at + 0x3C] = g.max_gs_threads;
    rom[at + 0x3D] = g.gs_table_depth;
    rom[at + 0x3E] = g.double_offchip_lds_buffer;
    rom[at + 0x3F] = g.max_scratch_slots_per_cu;
}

/// The ROM image for `board`.
pub fn image(board: &Board<'_>) -> Vec<u8> {
    let mut rom = vec![0u8; BYTES];
    rom[0] = 0x55;
    rom[1] = 0xAA;
    rom[2] = (BYTES / 512) as u8;
    rom[3] = 0xCB; // retf: the option-ROM entry returns at once
    put16(&mut rom, 0x18, PCIR as u16);
    rom[0x30..0x3A].copy_from_slice(b" 761295520");
    put16(&mut rom, 0x48, ROM_HEADER as u16);
    rom[0x50..0x5E].copy_from_slice(b"12/06/26 00:00");
    let pn: Vec<u8> = board
        .part_number
        .bytes()
        .filter(|b| (b' '..=b'z').contains(b))
        .take(43)
        .collect();
    rom[0x80..0x80 + pn.len()].copy_from_slice(&pn);
    // PCI Data Structure (PCI Firmware 3.0).
    rom[PCIR..PCIR + 4].copy_from_slice(b"PCIR");
    put16(&mut rom, PCIR + 0x04, 0x1002);
    put16(&mut rom, PCIR + 0x06, board.device_id);
    put16(&mut rom, PCIR + 0x0A, 0x18); // structure length
    rom[PCIR + 0x0C] = 3; // structure revision
    rom[PCIR + 0x0F] = 0x03; // class code: display (VGA, prog-if 0)
    put16(&mut rom, PCIR + 0x10, (BYTES / 512) as u16); // image length
    rom[PCIR + 0x14] = 0x00; // code type: x86 (so SeaBIOS shadows it)
    rom[PCIR + 0x15] = 0x80; // last image
    // atom_rom_header_v2_2.
    table_header(&mut rom, ROM_HEADER, 0x28, 2, 2);
    rom[ROM_HEADER + 4..ROM_HEADER + 8].copy_from_slice(b"ATOM");
    put16(&mut rom, ROM_HEADER + 0x18, 0x1002); // subsystem vendor
    put16(&mut rom, ROM_HEADER + 0x1A, board.device_id); // subsystem id
    put16(&mut rom, ROM_HEADER + 0x1E, CMD_MASTER as u16);
    put16(&mut rom, ROM_HEADER + 0x20, DATA_MASTER as u16);
    // atom_master_command_function_v2_1: 81 entries, none present.
    table_header(&mut rom, CMD_MASTER, 0xA6, 2, 1);
    // atom_master_data_table_v2_1: 35 entries, three present.
    table_header(&mut rom, DATA_MASTER, 0x4A, 2, 1);
    let gfx_at = if board.gfx.is_some() {
        GFX_INFO_V24
    } else {
        GFX_INFO
    };
    for (index, at) in [
        (DATA_SMC_DPM_INFO, SMC_DPM_INFO),
        (DATA_FIRMWAREINFO, FIRMWAREINFO),
        (DATA_GFX_INFO, gfx_at),
    ] {
        put16(&mut rom, DATA_MASTER + 4 + 2 * index, at as u16);
    }
    // atom_firmware_info_v3_4.
    table_header(&mut rom, FIRMWAREINFO, 0x6C, 3, 4);
    put32(&mut rom, FIRMWAREINFO + 0x04, 0x0001_0000); // firmware_revision
    put32(&mut rom, FIRMWAREINFO + 0x08, 50_000); // bootup_sclk_in10khz: 500 MHz
    put32(&mut rom, FIRMWAREINFO + 0x0C, 100_000); // bootup_mclk_in10khz: 1 GHz
    put32(&mut rom, FIRMWAREINFO + 0x10, 0); // firmware_capability
    put32(&mut rom, FIRMWAREINFO + 0x18, board.scratch_dword);
    // atom_gfx_info_v2_2: rlc_gpu_timer_refclk, 100 MHz in 10 kHz units.
    table_header(&mut rom, GFX_INFO, 0x2C, 2, 2);
    put32(&mut rom, GFX_INFO + 0x28, 10_000);
    if let Some(g) = &board.gfx {
        gfx_info_v24(&mut rom, g);
    }
    // smc_dpm_info: a header and an all-zero BoardTable_t.
    table_header(&mut rom, SMC_DPM_INFO, (4 + BOARD_TABLE_BYTES) as u16, 4, 0);
    // The checksum byte makes the image's bytes sum to zero.
    let sum = rom.iter().fold(0u8, |s, b| s.wrapping_add(*b));
    rom[BYTES - 1] = 0u8.wrapping_sub(sum);
    rom
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rd16(rom: &[u8], at: usize) -> usize {
        usize::from(u16::from_le_bytes([rom[at], rom[at + 1]]))
    }

    fn board() -> Board<'static> {
        Board {
            device_id: 0x744C,
            scratch_dword: 0x4C,
            part_number: "BAREBELL MODEL NAVI31",
            gfx: None,
        }
    }

    /// An Aldebaran board's `gfx_info` is v2.4 with the GC configuration
    /// where `amdgpu_atomfirmware_get_gfx_info()` reads it; the v2.2
    /// table stays out of the master table.
    #[test]
    fn an_aldebaran_rom_carries_gfx_info_v2_4() {
        let rom = image(&Board {
            gfx: Some(GfxInfo::MI210),
            ..board()
        });
        let hdr = rd16(&rom, 0x48);
        let data = rd16(&rom, hdr + 0x20);
        let gi = rd16(&rom, data + 4 + 2 * DATA_GFX_INFO);
        assert_eq!((rom[gi + 2], rom[gi + 3]), (2, 4));
        assert_eq!(rd16(&rom, gi), 0x48);
        assert_eq!(rom[gi + 6], 8, "max_shader_engines");
        assert_eq!(rd16(&rom, gi + 0x36), 64, "gc_wave_size");
        assert_eq!(rd16(&rom, gi + 0x3A), 64, "gc_lds_size");
        assert!(gi + 0x48 < BYTES - 1);
        assert_eq!(rom.iter().fold(0u8, |s, b| s.wrapping_add(*b)), 0);
    }

    /// The checks `check_atom_bios()`, `amdgpu_atom_parse()` and
    /// `pci_get_rom_size()` make, made here on the image as they walk it.
    #[test]
    fn the_image_passes_the_checks_linux_makes() {
        let rom = image(&board());
        assert_eq!(rom.len(), BYTES);
        assert_eq!(&rom[0..2], &[0x55, 0xAA]);
        assert_ne!(rom[4], 0x01, "ATOM_IIO_START would start the IIO parser");
        assert_eq!(&rom[0x30..0x3A], b" 761295520");
        let hdr = rd16(&rom, 0x48);
        assert_eq!(&rom[hdr + 4..hdr + 8], b"ATOM");
        let pcir = rd16(&rom, 0x18);
        assert_eq!(pcir % 4, 0);
        assert_eq!(&rom[pcir..pcir + 4], b"PCIR");
        assert!(rd16(&rom, pcir + 0x0A) >= 0x18);
        assert_eq!(rd16(&rom, pcir + 0x10) * 512, BYTES);
        assert_eq!(rom[pcir + 0x15] & 0x80, 0x80, "last image");
        assert!(rom[0x80] >= b' ' && rom[0x80] <= b'z', "a part number");
        assert_eq!(rom.iter().fold(0u8, |s, b| s.wrapping_add(*b)), 0);
        // The data master table's firmwareinfo entry (index 4), as
        // amdgpu_atom_parse_data_header() finds it.
        let data = rd16(&rom, hdr + 0x20);
        let fwi = rd16(&rom, data + 4 + 2 * 4);
        assert_eq!((rom[fwi + 2], rom[fwi + 3]), (3, 4), "firmwareinfo v3.4");
        let scratch = u32::from_le_bytes([
            rom[fwi + 0x18],
            rom[fwi + 0x19],
            rom[fwi + 0x1A],
            rom[fwi + 0x1B],
        ]);
        assert_eq!(scratch, 0x4C);
        // No command table: the master command table's entries are 0.
        let cmd = rd16(&rom, hdr + 0x1E);
        assert!(rom[cmd + 4..cmd + 0xA6].iter().all(|b| *b == 0));
        // smc_dpm_info carries a whole BoardTable_t after its header.
        let dpm = rd16(&rom, data + 4 + 2 * 2);
        assert_eq!(rd16(&rom, dpm), 4 + 488);
        assert!(dpm + 4 + 488 < BYTES - 1);
    }
}
